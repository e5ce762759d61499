// File: tests/dev_guides/clamp_add_relation.cc — the type relation of
// test.clamp_add (docs/dev/adding_an_operator.md, step 2).
//
//   test.clamp_add(Tensor[(2, 8), float32], Tensor[(8,), float32]) -> Tensor[(2, 8), float32]
//
// Both operands float32 or float64, of one dtype; the output shape is their
// NumPy broadcast (a static 1 stretches; two different static extents are an
// error; a static extent wins over `?` or a symbolic one, which is checked at
// run time; two different non-static extents give `?`); a_min <= a_max.
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/dim.h"
#include "ir/status_macros.h"
#include "ir/type.h"
#include "tests/dev_guides/clamp_add.h"
#include "types/relation.h"

namespace kiln::dev_guides {
namespace {

bool IsFloat32Or64(DataType t) { return t == DataType::Float(32) || t == DataType::Float(64); }

absl::StatusOr<Shape> BroadcastShape(const types::RelationCall& call, const Shape& a,
                                     const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const Dim da = i + a.size() >= n ? a[i + a.size() - n] : Dim(1);
    const Dim db = i + b.size() >= n ? b[i + b.size() - n] : Dim(1);
    if (da == db || (db.is_static() && db.value() == 1)) {
      out[i] = da;
    } else if (da.is_static() && da.value() == 1) {
      out[i] = db;
    } else if (da.is_static() && db.is_static()) {
      return call.Error(absl::StrCat("cannot broadcast ", TypeToString(call.input(0)), " with ",
                                     TypeToString(call.input(1)), " (dimension ", i, ": ",
                                     da.ToString(), " vs ", db.ToString(), ")"));
    } else {
      out[i] = da.is_static() ? da : db.is_static() ? db : Dim::Any();
    }
  }
  return out;
}

absl::StatusOr<bool> ClampAddRel(const types::RelationCall& call, types::TypeReporter& reporter) {
  for (int i = 0; i < 2; ++i) {
    const Type& t = call.input(i);
    // Not known yet: `false` asks the solver to call again later.
    if (!t || t->kind == TypeKind::kIncomplete || t->kind == TypeKind::kTypeVar) return false;
    if (call.InputTensor(i) == nullptr) return call.ArgError(i, "a tensor");
    if (!IsFloat32Or64(call.InputTensor(i)->dtype)) {
      return call.ArgError(i, "a float32 or float64 tensor");
    }
  }
  const TensorTypeNode* lhs = call.InputTensor(0);
  const TensorTypeNode* rhs = call.InputTensor(1);
  if (lhs->dtype != rhs->dtype) {
    return call.Error(absl::StrCat("operands must have the same dtype; got ",
                                   TypeToString(call.input(0)), " and ",
                                   TypeToString(call.input(1))));
  }
  static const ClampAddAttrs* const kDefaults = new ClampAddAttrs();
  const ClampAddAttrs* attrs = call.Attr<ClampAddAttrs>();
  if (attrs == nullptr) attrs = kDefaults;
  if (!(attrs->a_min <= attrs->a_max)) {
    return call.Error(
        absl::StrCat("a_min (", attrs->a_min, ") must not exceed a_max (", attrs->a_max, ")"));
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, BroadcastShape(call, lhs->shape, rhs->shape));
  KILN_RETURN_IF_ERROR(
      reporter.Assign(call.output(), MakeTensorType(std::move(shape), lhs->dtype)));
  return true;
}

}  // namespace

absl::Status RegisterClampAddRelation() {
  return types::RegisterTypeRelation(kClampAddOp, ClampAddRel);
}

}  // namespace kiln::dev_guides
