// Type relations of reductions: sum, mean, max, min, prod (dtype kept) and
// argmax, argmin (int32, as Relay).
//
//   axis=none        reduces every axis (exclude is then ignored, as in Relay)
//   axis=[a, ...]    reduces those axes; negative axes count from the end;
//                    a repeated axis is an error; [] reduces nothing
//   exclude=true     reduces every axis *not* listed
//   keepdims=true    reduced axes stay, with extent 1
// Reducing a 0-D tensor with axis=none gives a 0-D tensor.
#include <vector>

#include "absl/strings/str_cat.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

template <typename A>
absl::StatusOr<bool> ReduceRel(const RelationCall& call, TypeReporter& r, DataType out_dtype) {
  KILN_REL_TENSOR(x, call, 0);
  const A& a = AttrsOr<A>(call);
  const int64_t ndim = x->ndim();
  std::vector<bool> reduce(static_cast<size_t>(ndim), !a.axis.has_value());
  if (a.axis) {
    std::vector<bool> listed(static_cast<size_t>(ndim), false);
    for (int64_t ax : *a.axis) {
      KILN_ASSIGN_OR_RETURN(int64_t k, NormalizeAxis(call, ax, ndim));
      if (listed[static_cast<size_t>(k)])
        return call.Error(absl::StrCat("axis ", IntList(*a.axis), " lists axis ", k, " twice"));
      listed[static_cast<size_t>(k)] = true;
    }
    for (size_t i = 0; i < listed.size(); ++i) reduce[i] = listed[i] != a.exclude;
  }
  Shape out;
  for (size_t i = 0; i < reduce.size(); ++i) {
    if (!reduce[i])
      out.push_back(x->shape[i]);
    else if (a.keepdims)
      out.push_back(Dim(1));
  }
  return Solve(r, call, MakeTensorType(std::move(out), out_dtype.is_void() ? x->dtype : out_dtype));
}

}  // namespace

absl::Status RegisterReduceRelations() {
  absl::Status st;
  for (const char* name : {"sum", "mean", "max", "min", "prod"})
    st.Update(AddRelation(name, [](const RelationCall& call, TypeReporter& r) {
      return ReduceRel<ReduceAttrs>(call, r, DataType::Void());
    }));
  for (const char* name : {"argmax", "argmin"})
    st.Update(AddRelation(name, [](const RelationCall& call, TypeReporter& r) {
      return ReduceRel<ArgReduceAttrs>(call, r, DataType::Int(32));
    }));
  return st;
}

}  // namespace kiln::types::rel
