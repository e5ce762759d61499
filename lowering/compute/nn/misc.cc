// File: lowering/compute/nn/misc.cc — nn.dropout, nn.pad.
//
//   nn.dropout (inference, as the interpreter): T_dropout = a copy of the
//     data, T_dropout_mask = ones of the data's dtype (both tag "elemwise").
//   nn.pad: T_pad (tag "injective"); per axis with pad_width [before, after]:
//     constant  if_then_else(inside, data[i - before], pad_value converted to
//               the data's dtype)
//     edge      data[clamp(i - before, 0, n - 1)]
//     reflect   data[j] with j = -(i - before) before the data and
//               2 (n - 1) - (i - before) after it (pads < n)
//     pad_value is the 0-D second input, read once per padded element.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/compute/nn/nn_util.h"

namespace kiln::lowering::nn_internal {
namespace {

using tir::IntImm;

absl::StatusOr<std::vector<te::Tensor>> Dropout(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {x.ndim(), x.ndim()}));
  const DataType mask_dt = ctx.out_dtypes[1];
  te::Tensor out = te::Compute(
      x.shape(), [&](const std::vector<tir::Var>& idx) { return x(idx); }, "T_dropout", "elemwise");
  te::Tensor mask = te::Compute(
      ctx.out_shapes[1],
      [&](const std::vector<tir::Var>&) { return tir::MakeConst(mask_dt, 1); }, "T_dropout_mask",
      "elemwise");
  return std::vector<te::Tensor>{out, mask};
}

absl::StatusOr<std::vector<te::Tensor>> Pad(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const PadAttrs& a = ctx.Attrs<PadAttrs>();
  const te::Tensor& x = ctx.inputs[0];
  const te::Tensor& pv = ctx.inputs[1];
  const std::string& mode = a.pad_mode;
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return ctx.Error(absl::StrCat("pad_mode must be \"constant\", \"edge\" or \"reflect\"; got \"",
                                  mode, "\""));
  if (pv.ndim() != 0)
    return ctx.Error(absl::StrCat("pad_value must be a 0-D tensor; got ", pv.ndim(), "-D"));
  const int nd = x.ndim();
  if (static_cast<int>(a.pad_width.size()) != nd)
    return ctx.Error(absl::StrCat("pad_width has ", a.pad_width.size(), " pairs; expected ", nd));
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {nd}));
  std::vector<int64_t> before, after;
  for (int d = 0; d < nd; ++d) {
    const std::vector<int64_t>& p = a.pad_width[static_cast<size_t>(d)];
    if (p.size() != 2 || p[0] < 0 || p[1] < 0)
      return ctx.Error(absl::StrCat("pad_width[", d, "] must be [before, after] >= 0; got [",
                                    JoinInts(p), "]"));
    int64_t n = 0;
    if (mode != "constant" && (p[0] > 0 || p[1] > 0) &&
        tir::IsConstInt(x.shape()[static_cast<size_t>(d)], &n) &&
        (n == 0 || (mode == "reflect" && (p[0] >= n || p[1] >= n))))
      return ctx.Error(absl::StrCat(mode, " padding [", JoinInts(p), "] of axis ", d,
                                    " needs a larger extent than ", n));
    before.push_back(p[0]);
    after.push_back(p[1]);
  }
  const DataType dt = x.dtype();
  te::Tensor out = te::Compute(
      ctx.out_shapes[0],
      [&](const std::vector<tir::Var>& idx) {
        PrimExpr cond;
        std::vector<PrimExpr> src;
        for (size_t d = 0; d < idx.size(); ++d) {
          const PrimExpr j = idx[d] - IntImm(before[d]);
          const PrimExpr& n = x.shape()[d];
          if (before[d] == 0 && after[d] == 0) {
            src.push_back(j);
          } else if (mode == "constant") {
            src.push_back(j);
            std::vector<PrimExpr> cs;
            if (before[d] > 0) cs.push_back(tir::GE(j, IntImm(0)));
            if (after[d] > 0) cs.push_back(tir::LT(j, n));
            for (PrimExpr& c : cs) cond = cond ? tir::And(cond, c) : c;
          } else if (mode == "edge") {
            PrimExpr e = j;
            if (before[d] > 0) e = tir::Max(e, IntImm(0));
            if (after[d] > 0) e = tir::Min(e, n - IntImm(1));
            src.push_back(e);
          } else {  // reflect
            PrimExpr e = j;
            if (before[d] > 0) e = tir::Select(tir::LT(e, IntImm(0)), IntImm(0) - e, e);
            if (after[d] > 0)
              e = tir::Select(tir::GE(e, n), (n - IntImm(1)) * IntImm(2) - e, e);
            src.push_back(e);
          }
        }
        if (!cond) return x(src);
        return tir::Call(dt, "if_then_else", {cond, x(src), tir::Cast(dt, pv({}))});
      },
      "T_pad", "injective", {{"pad_mode", mode}});
  return std::vector<te::Tensor>{out};
}

}  // namespace

void RegisterMiscComputes() {
  AddCompute("nn.dropout", Dropout);
  AddCompute("nn.pad", Pad);
}

}  // namespace kiln::lowering::nn_internal
