// File: tests/dev_guides/clamp_add_kernel.cc — the interpreter's reference
// kernel of test.clamp_add (docs/dev/adding_an_operator.md, step 3).
//
// Plain loops, obviously correct, following interpreter/kernels.h's numeric
// rules: the sum is computed in double and rounded to the dtype, as `add`
// stores it; the clamp keeps a NaN, as `clip` does. The output shape comes
// from the actual inputs (the kernel also runs on calls nobody type-checked),
// and every check returns a status that names the operator.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interpreter/kernels.h"
#include "interpreter/value.h"
#include "ir/op.h"
#include "ir/status_macros.h"
#include "ir/tensor.h"
#include "tests/dev_guides/clamp_add.h"

namespace kiln::dev_guides {
namespace {

// Flat index into an operand of shape `in` (right-aligned with the output;
// its extent-1 dims broadcast) for the output coordinates `coord`.
int64_t OperandIndex(const std::vector<int64_t>& in, const std::vector<int64_t>& coord) {
  const size_t offset = coord.size() - in.size();
  int64_t index = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    index = index * in[d] + (in[d] == 1 ? 0 : coord[offset + d]);
  }
  return index;
}

absl::StatusOr<interp::Value> ClampAddKernel(const interp::KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* lhs, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(const HostTensor* rhs, k.Tensor(1));
  const DataType dt = lhs->dtype();
  if (dt != rhs->dtype() || (dt != DataType::Float(32) && dt != DataType::Float(64))) {
    return k.Error(absl::StrCat("expects two float32 or two float64 tensors; got ", dt.ToString(),
                                " and ", rhs->dtype().ToString()));
  }
  const ClampAddAttrs& a = k.Attrs<ClampAddAttrs>();
  if (!(a.a_min <= a.a_max)) {
    return k.Error(absl::StrCat("a_min (", a.a_min, ") must not exceed a_max (", a.a_max, ")"));
  }
  const std::vector<int64_t>& sa = lhs->shape();
  const std::vector<int64_t>& sb = rhs->shape();
  const size_t n = std::max(sa.size(), sb.size());
  std::vector<int64_t> shape(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i + sa.size() >= n ? sa[i + sa.size() - n] : 1;
    const int64_t db = i + sb.size() >= n ? sb[i + sb.size() - n] : 1;
    if (da != db && da != 1 && db != 1) {
      return k.Error(absl::StrCat("cannot broadcast shapes [", absl::StrJoin(sa, ", "), "] and [",
                                  absl::StrJoin(sb, ", "), "]"));
    }
    shape[i] = da == 1 ? db : da;
  }
  absl::StatusOr<Ref<HostTensor>> made = HostTensor::Create(dt, shape);
  if (!made.ok()) return k.Error(made.status().message());
  Ref<HostTensor> out = *std::move(made);
  std::vector<int64_t> coord(n, 0);
  for (int64_t i = 0; i < out->num_elements(); ++i) {
    // The sum as `add` stores it, then the clamp as `clip` computes it.
    double sum =
        lhs->GetAsDouble(OperandIndex(sa, coord)) + rhs->GetAsDouble(OperandIndex(sb, coord));
    if (dt == DataType::Float(32)) sum = static_cast<float>(sum);
    const double r = std::isnan(sum) ? sum : std::min(std::max(sum, a.a_min), a.a_max);
    if (dt == DataType::Float(32)) {
      out->mutable_data<float>()[i] = static_cast<float>(r);
    } else {
      out->mutable_data<double>()[i] = r;
    }
    // Next output coordinate, row-major.
    for (size_t d = n; d-- > 0;) {
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
  return interp::Value::Tensor(Ref<const HostTensor>(std::move(out)));
}

}  // namespace

absl::Status RegisterClampAddKernel() {
  return OpRegistry::Global().SetFacet<interp::KernelFn>(kClampAddOp, "Interpret", ClampAddKernel);
}

}  // namespace kiln::dev_guides
