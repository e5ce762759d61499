// File: lowering/compute/nn/conv.cc — nn.conv2d.
//
// Two stages, as TVM's topi:
//   pad     data padded on its H and W axes with 0 (tag "injective"; absent
//           when padding is all zero); the schedule inlines or materializes it
//   conv2d  out[n, oc, oh, ow] = sum over (rc, ry, rx) of
//             pad[n, g(oc) * I + rc, oh * sh + ry * dh, ow * sw + rx * dw]
//             * weight[oc, rc, ry, rx]
//           in the accumulator type (ProductAccType), where I = input channels
//           per group and g(oc) = oc / (O / groups). Tag "conv2d_nchw",
//           "conv2d_nhwc", "conv2d_nchwc" (data_layout NCHW{x}c) or "conv2d"
//           (another permutation); attrs record layouts, strides, padding,
//           dilation, groups and whether it is depthwise.
//   conv2d_cast  the conversion to out_dtype when the accumulator differs
//           (float16/bfloat16, int8 x int8 -> float32, float -> int out_dtype).
// Every layout is read through its logical coordinates (nn_util.h), so data,
// kernel and output layouts combine freely, blocked or not.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/compute/nn/nn_util.h"

namespace kiln::lowering::nn_internal {
namespace {

using tir::IntImm;

std::string ConvTag(const NnLayout& dl) {
  if (dl.text == "NCHW") return "conv2d_nchw";
  if (dl.text == "NHWC") return "conv2d_nhwc";
  // NCHW{x}c: N, C, H, W in order with the inner c last.
  const auto& ax = dl.axes;
  if (dl.ndim == 5 && ax[0].pos == 0 && ax[1].pos == 1 && ax[2].pos == 2 && ax[3].pos == 3 &&
      ax[1].inner == 4)
    return "conv2d_nchwc";
  return "conv2d";
}

absl::StatusOr<std::vector<te::Tensor>> Conv2D(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Conv2DAttrs& a = ctx.Attrs<Conv2DAttrs>();
  KILN_ASSIGN_OR_RETURN(NnLayout dl, ParseNnLayout(ctx, "data_layout", a.data_layout, "NCHW", "C"));
  KILN_ASSIGN_OR_RETURN(NnLayout kl,
                        ParseNnLayout(ctx, "kernel_layout", a.kernel_layout, "OIHW", "IO"));
  const std::string out_text = a.out_layout.empty() ? a.data_layout : a.out_layout;
  KILN_ASSIGN_OR_RETURN(NnLayout ol, ParseNnLayout(ctx, "out_layout", out_text, "NCHW", "C"));
  const te::Tensor& x = ctx.inputs[0];
  const te::Tensor& w = ctx.inputs[1];
  if (x.ndim() != dl.ndim || w.ndim() != kl.ndim)
    return ctx.Error(absl::StrCat("data and weight must be ", dl.ndim, "-D and ", kl.ndim,
                                  "-D (data_layout ", a.data_layout, ", kernel_layout ",
                                  a.kernel_layout, "); got ", x.ndim(), "-D and ", w.ndim(), "-D"));
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {ol.ndim}));
  if (x.dtype() != w.dtype() && !(x.dtype().is_integral() && w.dtype().is_integral()))
    return ctx.Error(absl::StrCat("data and weight must have the same dtype; got ",
                                  x.dtype().ToString(), " and ", w.dtype().ToString()));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> st, Pair(ctx, "strides", a.strides, 1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dil, Pair(ctx, "dilation", a.dilation, 1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pad, Padding4(ctx, a.padding));
  const int64_t g = a.groups;
  if (g < 1) return ctx.Error(absl::StrCat("groups must be >= 1; got ", g));

  // Logical extents.
  const PrimExpr C = dl.Extent(1, x.shape());
  const PrimExpr O = kl.Extent(0, w.shape());
  const PrimExpr I = kl.Extent(1, w.shape());
  const PrimExpr KH = kl.Extent(2, w.shape());
  const PrimExpr KW = kl.Extent(3, w.shape());
  int64_t c = 0, o = 0, i = 0, kh = 0, kw = 0;
  const bool cs = tir::IsConstInt(C, &c), os = tir::IsConstInt(O, &o), is = tir::IsConstInt(I, &i);
  if (cs && is && c != i * g)
    return ctx.Error(absl::StrCat("data has ", c, " channels but weight expects ", i * g,
                                  " (groups=", g, ")"));
  if (os && o % g != 0)
    return ctx.Error(absl::StrCat("weight has ", o, " output channels, which groups=", g,
                                  " does not divide"));
  if (a.channels && os && *a.channels != o)
    return ctx.Error(absl::StrCat("channels=", *a.channels, " but weight has ", o,
                                  " output channels"));
  if (a.kernel_size) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> ks, Pair(ctx, "kernel_size", *a.kernel_size, 1));
    if ((tir::IsConstInt(KH, &kh) && kh != ks[0]) || (tir::IsConstInt(KW, &kw) && kw != ks[1]))
      return ctx.Error(absl::StrCat("kernel_size=[", JoinInts(ks), "] does not match the weight"));
  }

  const DataType out_dt = ctx.out_dtypes[0];
  const DataType acc = ProductAccType(x.dtype(), w.dtype(), out_dt);

  // Pad H and W (physical axes of the data layout).
  std::vector<int64_t> before(static_cast<size_t>(dl.ndim), 0), after(before);
  before[static_cast<size_t>(dl.axes[2].pos)] = pad[0];
  before[static_cast<size_t>(dl.axes[3].pos)] = pad[1];
  after[static_cast<size_t>(dl.axes[2].pos)] = pad[2];
  after[static_cast<size_t>(dl.axes[3].pos)] = pad[3];
  const te::Tensor xp = PadStage(x, before, after, tir::MakeConst(x.dtype(), 0), "pad");

  const tir::IterVar rc = te::ReduceAxis({IntImm(0), I}, "rc");
  const tir::IterVar ry = te::ReduceAxis({IntImm(0), KH}, "ry");
  const tir::IterVar rx = te::ReduceAxis({IntImm(0), KW}, "rx");
  const PrimExpr out_per_group = os ? IntImm(o / g) : tir::FloorDiv(O, IntImm(g));

  std::map<std::string, std::string> attrs = {
      {"data_layout", a.data_layout},
      {"kernel_layout", a.kernel_layout},
      {"out_layout", out_text},
      {"strides", JoinInts(st)},
      {"padding", JoinInts(pad)},
      {"dilation", JoinInts(dil)},
      {"groups", absl::StrCat(g)},
      {"depthwise", (g > 1 && is && i == 1) ? "1" : "0"},
      {"out_dtype", out_dt.ToString()},
  };
  te::Tensor conv = te::Compute(
      ctx.out_shapes[0],
      [&](const std::vector<tir::Var>& idx) {
        const std::vector<PrimExpr> l = ol.Logical(idx);
        const PrimExpr& n = l[0];
        const PrimExpr& oc = l[1];
        PrimExpr ic = rc->var;
        if (g > 1) ic = tir::FloorDiv(oc, out_per_group) * I + rc->var;
        const PrimExpr ih = l[2] * IntImm(st[0]) + ry->var * IntImm(dil[0]);
        const PrimExpr iw = l[3] * IntImm(st[1]) + rx->var * IntImm(dil[1]);
        const PrimExpr xv = tir::Cast(acc, xp(dl.Physical({n, ic, ih, iw})));
        const PrimExpr wv = tir::Cast(acc, w(kl.Physical({oc, rc->var, ry->var, rx->var})));
        return te::Sum(tir::Mul(xv, wv), {rc, ry, rx});
      },
      "conv2d", ConvTag(dl), std::move(attrs));
  return std::vector<te::Tensor>{CastStage(conv, out_dt, "conv2d_cast")};
}

}  // namespace

void RegisterConvComputes() { AddCompute("nn.conv2d", Conv2D); }

}  // namespace kiln::lowering::nn_internal
