// File: tests/dev_guides/clamp_add_compute.cc — the compute definition of
// test.clamp_add (docs/dev/adding_an_operator.md, step 4), and the helper
// its strategy shares (clamp_add_internal.h).
//
// One tensor expression over the call's output shape (from its checked type:
// the shape rule lives once, in the relation), reading both operands with
// NumPy broadcasting. It agrees with the interpreter's kernel: float32 adds
// round like the kernel's double sum rounded to float32, and tir Min/Max keep
// a NaN as the kernel does.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "ir/tir.h"
#include "lowering/compute/op_compute.h"
#include "lowering/compute/tensor/tensor_util.h"
#include "lowering/te/te.h"
#include "tests/dev_guides/clamp_add.h"
#include "tests/dev_guides/clamp_add_internal.h"

namespace kiln::dev_guides {

absl::StatusOr<te::Tensor> ClampAddTensor(const lowering::ComputeCtx& ctx,
                                          std::map<std::string, std::string> attrs) {
  if (ctx.inputs.size() != 2 || ctx.out_shapes.size() != 1) {
    return ctx.Error(absl::StrCat("expects 2 inputs and 1 output; got ", ctx.inputs.size(), " and ",
                                  ctx.out_shapes.size()));
  }
  const ClampAddAttrs& a = ctx.Attrs<ClampAddAttrs>();
  if (!(a.a_min <= a.a_max)) {
    return ctx.Error(absl::StrCat("a_min (", a.a_min, ") must not exceed a_max (", a.a_max, ")"));
  }
  const DataType dt = ctx.out_dtypes[0];
  if (dt != DataType::Float(32) && dt != DataType::Float(64)) {
    return ctx.Unsupported(absl::StrCat("no compute for dtype ", dt.ToString()));
  }
  const te::Tensor& lhs = ctx.inputs[0];
  const te::Tensor& rhs = ctx.inputs[1];
  const std::vector<tir::PrimExpr>& shape = ctx.out_shapes[0];
  const double lo = a.a_min, hi = a.a_max;
  return te::Compute(
      shape,
      [&](const std::vector<tir::Var>& i) {
        tir::PrimExpr sum = tir::Add(lowering::tensor::BroadcastRead(lhs, shape, i),
                                     lowering::tensor::BroadcastRead(rhs, shape, i));
        return tir::Min(tir::Max(sum, lowering::tensor::FConst(dt, lo)),
                        lowering::tensor::FConst(dt, hi));
      },
      lowering::tensor::ComputeName(ctx), "broadcast", std::move(attrs));
}

namespace {

absl::StatusOr<std::vector<te::Tensor>> ClampAddCompute(const lowering::ComputeCtx& ctx) {
  absl::StatusOr<te::Tensor> out = ClampAddTensor(ctx, {});
  if (!out.ok()) return out.status();
  return std::vector<te::Tensor>{*out};
}

}  // namespace

absl::Status RegisterClampAddCompute() {
  return OpRegistry::Global().SetFacet<lowering::FTCompute>(kClampAddOp, lowering::kComputeFacet,
                                                            ClampAddCompute);
}

}  // namespace kiln::dev_guides
