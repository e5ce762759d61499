// ONNX convolutions and pooling -> graph IR. (Normalizations are in
// convert_nn_norm.cc; Gemm, MatMul, the softmax family and Dropout in
// convert_nn_dense.cc; the loss functions in convert_nn_loss.cc;
// RegisterNnConverters registers them all.)
//
// Conv -> nn.conv2d (+ nn.bias_add), MaxPool/AveragePool ->
// nn.max_pool2d/nn.avg_pool2d, GlobalAveragePool/GlobalMaxPool ->
// nn.global_*_pool2d (other ranks: mean/max over the spatial axes).
// 1-D windows run as 2-D ones over a unit H axis (expand_dims before, squeeze
// after). auto_pad SAME_UPPER/SAME_LOWER use ONNX's formula: out =
// ceil(in / stride), total = max(0, (out - 1) * stride + (k - 1) * d + 1 - in),
// the odd pixel at the end (UPPER) or the start (LOWER).
//
// Compositions (exact up to float rounding order):
//   ConvTranspose: the kernel's channels swapped per group and its window
//   flipped; strided (dilation 1): one stride-1 nn.conv2d per output phase
//   over the kernel's taps that phase reads (one for all phases where they
//   read the same window), interleaved back; otherwise nn.conv2d over the
//   input with (stride - 1) zeros inserted;
//   3-D Conv / MaxPool / AveragePool: 2-D ones per depth tap, combined (below).
// Left unconverted: 3-D ConvTranspose, MaxPool's Indices output (no argmax
// pooling).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend {
namespace cvt {
namespace {

// ---- convolution and pooling windows -------------------------------------------

// The window attributes shared by Conv and the pools, per spatial axis.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
};

// Reads strides/dilations/pads/auto_pad for `sp` spatial axes of input type
// `xt`; kernel must already be set. dilations_attr is false for ops that have
// none in this opset.
absl::Status ReadWindow(const ConvertContext& c, const TensorType& xt, size_t sp,
                        bool dilations_attr, Window* w) {
  KILN_ASSIGN_OR_RETURN(w->strides, c.AttrInts("strides", std::vector<int64_t>(sp, 1)));
  w->dilations.assign(sp, 1);
  if (dilations_attr) {
    KILN_ASSIGN_OR_RETURN(w->dilations, c.AttrInts("dilations", std::vector<int64_t>(sp, 1)));
  }
  KILN_ASSIGN_OR_RETURN(w->pads, c.AttrInts("pads", std::vector<int64_t>(2 * sp, 0)));
  if (w->kernel.size() != sp || w->strides.size() != sp || w->dilations.size() != sp ||
      w->pads.size() != 2 * sp)
    return c.Invalid(absl::StrCat("kernel_shape, strides and dilations need ", sp,
                                  " values and pads ", 2 * sp, " for a ", sp, "-D window"));
  constexpr int64_t kBig = int64_t{1} << 30;  // keeps the window arithmetic far from overflow
  for (size_t i = 0; i < sp; ++i) {
    if (w->kernel[i] < 1 || w->strides[i] < 1 || w->dilations[i] < 1)
      return c.Invalid("kernel_shape, strides and dilations must be >= 1");
    if (w->pads[i] < 0 || w->pads[i + sp] < 0) return c.Invalid("pads must be >= 0");
    if (w->kernel[i] > kBig || w->strides[i] > kBig || w->dilations[i] > kBig ||
        w->pads[i] > kBig || w->pads[i + sp] > kBig)
      return c.Invalid("kernel_shape, strides, dilations and pads must be below 2^30");
  }
  KILN_ASSIGN_OR_RETURN(std::string auto_pad, c.AttrString("auto_pad", "NOTSET"));
  if (auto_pad == "NOTSET") return absl::OkStatus();
  if (auto_pad == "VALID") {
    w->pads.assign(2 * sp, 0);
    return absl::OkStatus();
  }
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    return c.Invalid(absl::StrCat("auto_pad \"", auto_pad,
                                  "\" is not NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
  for (size_t i = 0; i < sp; ++i) {
    const Dim& d = xt->shape[i + 2];
    if (!d.is_static())
      return c.Unsupported(absl::StrCat("auto_pad ", auto_pad, " needs static spatial dims; the input is ",
                                        ShapeToString(xt->shape)));
    const int64_t in = d.value(), s = w->strides[i];
    const int64_t out = (in + s - 1) / s;
    const int64_t total =
        std::max<int64_t>(0, (out - 1) * s + (w->kernel[i] - 1) * w->dilations[i] + 1 - in);
    const int64_t small = total / 2, large = total - small;
    w->pads[i] = auto_pad == "SAME_UPPER" ? small : large;
    w->pads[i + sp] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return absl::OkStatus();
}

// 2-D attribute lists for a 1-D or 2-D window (a 1-D window gets a unit H axis).
std::vector<int64_t> Pair2D(const std::vector<int64_t>& v, int64_t unit) {
  return v.size() == 1 ? std::vector<int64_t>{unit, v[0]} : v;
}
std::vector<int64_t> Padding2D(const std::vector<int64_t>& pads) {
  return pads.size() == 2 ? std::vector<int64_t>{0, pads[0], 0, pads[1]} : pads;
}

absl::Status CheckWindowRank(const ConvertContext& c, const TensorType& xt, absl::string_view what,
                             bool allow_3d) {
  if (xt->ndim() == 3 || xt->ndim() == 4 || (allow_3d && xt->ndim() == 5)) return absl::OkStatus();
  if (xt->ndim() == 5)
    return c.Unsupported(absl::StrCat("3-D ", what, " (kiln has 1-D and 2-D ", what,
                                      "; a 3-D one needs a 3-D graph-IR operator)"));
  return c.Invalid(absl::StrCat("input must be [N, C, spatial...] with 1 to 3 spatial dims; got ",
                                ShapeToString(xt->shape)));
}

// ---- 3-D windows as 2-D ones ---------------------------------------------------
//
// A 3-D window [N, C, D, H, W] is a 2-D window over H, W for each depth tap
// kd: the depth-padded input, transposed to [N, D, C, H, W], sliced at
// kd * dilation with the depth stride and reshaped to [N * Do, C, H, W], goes
// through the 2-D operator; the taps combine (sum for convolution, maximum
// for max pooling, sum / valid-depth count for average pooling) and
// [N * Do, M, Ho, Wo] returns to [N, M, Do, Ho, Wo].

// The depth geometry of a 3-D window.
struct Depth {
  int64_t in = 0, kernel = 1, stride = 1, dilation = 1, pad_before = 0, pad_after = 0;
  int64_t out = 0;  // output depth
  int64_t extra = 0;  // padding after pad_after that ceil_mode windows reach
};

absl::StatusOr<Depth> DepthOf(const ConvertContext& c, int64_t in, const Window& w, bool ceil_mode) {
  Depth d;
  d.in = in;
  d.kernel = w.kernel[0];
  d.stride = w.strides[0];
  d.dilation = w.dilations[0];
  d.pad_before = w.pads[0];
  d.pad_after = w.pads[3];
  const int64_t span = in + d.pad_before + d.pad_after - d.dilation * (d.kernel - 1) - 1;
  if (span < 0) return c.Invalid("the depth window is larger than the padded input");
  d.out = (ceil_mode ? (span + d.stride - 1) / d.stride : span / d.stride) + 1;
  d.extra = std::max<int64_t>(0, (d.out - 1) * d.stride + d.dilation * (d.kernel - 1) + 1 -
                                     (in + d.pad_before + d.pad_after));
  return d;
}

// The 2-D inputs of the depth taps: [N * Do, C, H, W] each.
absl::StatusOr<std::vector<Expr>> DepthTaps(ConvertContext& c, Expr x,
                                            const std::vector<int64_t>& xd, const Depth& d,
                                            const Expr& pad_value) {
  if (d.pad_before > 0 || d.pad_after + d.extra > 0) {
    auto pa = NewAttrs<PadAttrs>();
    pa->pad_width = {{0, 0}, {0, 0}, {d.pad_before, d.pad_after + d.extra}, {0, 0}, {0, 0}};
    KILN_ASSIGN_OR_RETURN(x, c.Call("nn.pad", {x, pad_value}, pa));
  }
  KILN_ASSIGN_OR_RETURN(x, Transpose(c, x, {0, 2, 1, 3, 4}));
  std::vector<Expr> taps;
  for (int64_t kd = 0; kd < d.kernel; ++kd) {
    const int64_t begin = kd * d.dilation;
    KILN_ASSIGN_OR_RETURN(Expr s, SliceAxis(c, x, 1, begin, begin + (d.out - 1) * d.stride + 1, d.stride));
    KILN_ASSIGN_OR_RETURN(s, Reshape(c, s, {xd[0] * d.out, xd[1], xd[3], xd[4]}, /*allowzero=*/true));
    taps.push_back(s);
  }
  return taps;
}

// [N * Do, M, Ho, Wo] -> [N, M, Do, Ho, Wo].
absl::StatusOr<Expr> FromDepthTaps(ConvertContext& c, Expr y, int64_t n, int64_t depth_out) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(y));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> yd, StaticDims(c, t, "a 3-D window's 2-D result"));
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, {n, depth_out, yd[1], yd[2], yd[3]}, /*allowzero=*/true));
  return Transpose(c, y, {0, 2, 1, 3, 4});
}

// The 2-D window (H, W) of a 3-D one.
Window HW(const Window& w) {
  Window h;
  h.kernel = {w.kernel[1], w.kernel[2]};
  h.strides = {w.strides[1], w.strides[2]};
  h.dilations = {w.dilations[1], w.dilations[2]};
  h.pads = {w.pads[1], w.pads[2], w.pads[4], w.pads[5]};
  return h;
}

absl::StatusOr<Expr> Conv3D(ConvertContext& c, Expr x, Expr w, const TensorType& xt,
                            const Window& win, int64_t group) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> xd, StaticDims(c, xt, "the input (3-D convolution)"));
  KILN_ASSIGN_OR_RETURN(Depth d, DepthOf(c, xd[2], win, false));
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(xt->dtype, 0));
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> taps, DepthTaps(c, x, xd, d, zero));
  const Window hw = HW(win);
  auto a = NewAttrs<Conv2DAttrs>();
  a->strides = hw.strides;
  a->dilation = hw.dilations;
  a->padding = hw.pads;
  a->groups = group;
  Expr sum;
  for (int64_t kd = 0; kd < d.kernel; ++kd) {
    KILN_ASSIGN_OR_RETURN(Expr kdc, ConstI64(c, {}, {kd}));
    KILN_ASSIGN_OR_RETURN(Expr wk, Take(c, w, kdc, 2));  // [M, C/g, KH, KW]
    KILN_ASSIGN_OR_RETURN(Expr y, c.Call("nn.conv2d", {taps[static_cast<size_t>(kd)], wk}, a));
    if (sum) {
      KILN_ASSIGN_OR_RETURN(sum, Binary(c, "add", sum, y));
    } else {
      sum = y;
    }
  }
  return FromDepthTaps(c, sum, xd[0], d.out);
}

absl::StatusOr<Expr> Pool3D(ConvertContext& c, Expr x, const TensorType& xt, const Window& win,
                            bool is_max, bool ceil_mode, bool count_include_pad) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> xd, StaticDims(c, xt, "the input (3-D pooling)"));
  KILN_ASSIGN_OR_RETURN(Depth d, DepthOf(c, xd[2], win, ceil_mode));
  // Max pooling pads with the lowest value (never chosen over data); average
  // pooling with zeros, divided below by the depth taps that count.
  double pad = 0;
  if (is_max) {
    if (xt->dtype.is_float()) pad = -std::numeric_limits<double>::infinity();
    else if (xt->dtype.is_uint() || xt->dtype.is_bool()) pad = 0;
    else pad = -std::ldexp(1.0, xt->dtype.bits() - 1);
  }
  KILN_ASSIGN_OR_RETURN(Expr pad_value, c.ScalarConst(xt->dtype, pad));
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> taps, DepthTaps(c, x, xd, d, pad_value));
  const Window hw = HW(win);
  auto a = NewAttrs<Pool2DAttrs>();
  a->pool_size = hw.kernel;
  a->strides = hw.strides;
  a->dilation = hw.dilations;
  a->padding = hw.pads;
  a->ceil_mode = ceil_mode;
  a->count_include_pad = count_include_pad;
  Expr acc;
  for (const Expr& tap : taps) {
    KILN_ASSIGN_OR_RETURN(Expr y, c.Call(is_max ? "nn.max_pool2d" : "nn.avg_pool2d", {tap}, a));
    if (acc) {
      KILN_ASSIGN_OR_RETURN(acc, Binary(c, is_max ? "maximum" : "add", acc, y));
    } else {
      acc = y;
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr y, FromDepthTaps(c, acc, xd[0], d.out));
  if (is_max) return y;
  // Depth taps that count for each output depth: inside the data, or with
  // count_include_pad inside the padded data (as the 2-D kernel counts).
  std::vector<double> count(static_cast<size_t>(d.out), 0.0);
  for (int64_t o = 0; o < d.out; ++o)
    for (int64_t kd = 0; kd < d.kernel; ++kd) {
      const int64_t pos = o * d.stride - d.pad_before + kd * d.dilation;
      const bool in = count_include_pad ? pos < d.in + d.pad_after : pos >= 0 && pos < d.in;
      count[static_cast<size_t>(o)] += in ? 1 : 0;
    }
  for (double& v : count) v = v == 0 ? 1 : v;  // an empty window averages to 0
  KILN_ASSIGN_OR_RETURN(Expr cc, ConstOf(c, xt->dtype, {d.out, 1, 1}, count));
  return Binary(c, "divide", y, cc);
}

// A convolution's last steps: the bias (input 2), when there is one, added
// on the channel axis, and a 1-D window's unit H axis squeezed back out.
absl::StatusOr<Expr> BiasAndSqueeze(ConvertContext& c, Expr y, size_t sp) {
  if (c.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(Expr b, c.Input(2));
    auto ba = NewAttrs<BiasAddAttrs>();
    ba->axis = 1;
    KILN_ASSIGN_OR_RETURN(y, c.Call("nn.bias_add", {y, b}, ba));
  }
  if (sp == 1) {
    KILN_ASSIGN_OR_RETURN(y, Squeeze(c, y, {2}));
  }
  return y;
}

Outs ConvertConv(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr w, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(TensorType wt, c.InputType(1));
  KILN_RETURN_IF_ERROR(CheckWindowRank(c, xt, "convolution", /*allow_3d=*/true));
  const size_t sp = static_cast<size_t>(xt->ndim() - 2);
  if (wt->ndim() != xt->ndim())
    return c.Invalid(absl::StrCat("weight ", ShapeToString(wt->shape), " and input ",
                                  ShapeToString(xt->shape), " differ in rank"));
  Window win;
  if (c.HasAttr("kernel_shape")) {
    KILN_ASSIGN_OR_RETURN(win.kernel, c.AttrInts("kernel_shape"));
  } else {
    for (size_t i = 0; i < sp; ++i) {
      const Dim& d = wt->shape[i + 2];
      if (!d.is_static()) return c.Unsupported("the weight's spatial dims must be static");
      win.kernel.push_back(d.value());
    }
  }
  for (size_t i = 0; i < sp && i < win.kernel.size(); ++i) {
    const Dim& d = wt->shape[i + 2];
    if (d.is_static() && d.value() != win.kernel[i])
      return c.Invalid(absl::StrCat("kernel_shape [", absl::StrJoin(win.kernel, ", "),
                                    "] does not match the weight ", ShapeToString(wt->shape)));
  }
  KILN_RETURN_IF_ERROR(ReadWindow(c, xt, sp, /*dilations_attr=*/true, &win));
  KILN_ASSIGN_OR_RETURN(int64_t group, c.AttrInt("group", 1));
  if (group < 1) return c.Invalid(absl::StrCat("group ", group, " must be >= 1"));
  if (sp == 1) {
    KILN_ASSIGN_OR_RETURN(x, ExpandDims(c, x, 2));
    KILN_ASSIGN_OR_RETURN(w, ExpandDims(c, w, 2));
  }
  Expr y;
  if (sp == 3) {
    KILN_ASSIGN_OR_RETURN(y, Conv3D(c, x, w, xt, win, group));
  } else {
    auto a = NewAttrs<Conv2DAttrs>();
    a->strides = Pair2D(win.strides, 1);
    a->dilation = Pair2D(win.dilations, 1);
    a->padding = Padding2D(win.pads);
    a->groups = group;
    KILN_ASSIGN_OR_RETURN(y, c.Call("nn.conv2d", {x, w}, a));
  }
  KILN_ASSIGN_OR_RETURN(y, BiasAndSqueeze(c, std::move(y), sp));
  return std::vector<Expr>{y};
}

// ConvTranspose as a convolution: the input with (stride - 1) zeros inserted
// between its elements (expand_dims, zero pad, reshape, slice), the kernel's
// in/out channels swapped per group and its window flipped, and padding
// d * (k - 1) - pad (negative padding crops the result). Exact: the inserted
// zeros add 0 * w terms only.
// A 3-D transposed convolution as a 3-D convolution (Conv3D: depth taps of
// 2-D ones): zeros inserted between the input's elements (stride - 1 per
// gap), the weight [C, M/g, kd, kh, kw] regrouped to [M, C/g, ...] and
// flipped on its three spatial axes, padded by dilation * (k - 1) - pad
// (output_padding at the end); negative amounts crop the result. Bias added.
absl::StatusOr<Expr> ConvTranspose3D(ConvertContext& c, Expr x, Expr w, const TensorType& xt,
                                     const std::vector<int64_t>& xd, const std::vector<int64_t>& wd,
                                     int64_t group, const std::vector<int64_t>& strides,
                                     const std::vector<int64_t>& dil, const std::vector<int64_t>& pads,
                                     const std::vector<int64_t>& out_pad) {
  const int64_t C = xd[1];
  if (strides[0] > 1 || strides[1] > 1 || strides[2] > 1) {
    // [N, C, D, H, W] -> [N, C, D, 1, H, 1, W, 1] -> padded to the strides -> merged -> cut.
    KILN_ASSIGN_OR_RETURN(x, ExpandDims(c, x, 3));
    KILN_ASSIGN_OR_RETURN(x, ExpandDims(c, x, 5));
    KILN_ASSIGN_OR_RETURN(x, ExpandDims(c, x, 7));
    KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(xt->dtype, 0));
    auto pa = NewAttrs<PadAttrs>();
    pa->pad_width = {{0, 0}, {0, 0}, {0, 0}, {0, strides[0] - 1}, {0, 0}, {0, strides[1] - 1},
                     {0, 0}, {0, strides[2] - 1}};
    KILN_ASSIGN_OR_RETURN(x, c.Call("nn.pad", {x, zero}, pa));
    KILN_ASSIGN_OR_RETURN(x, Reshape(c, x, {xd[0], C, xd[2] * strides[0], xd[3] * strides[1], xd[4] * strides[2]}));
    auto sa = NewAttrs<StridedSliceAttrs>();
    sa->begin = {0, 0, 0};
    sa->end = {(xd[2] - 1) * strides[0] + 1, (xd[3] - 1) * strides[1] + 1, (xd[4] - 1) * strides[2] + 1};
    sa->strides = std::vector<int64_t>{1, 1, 1};
    sa->axes = std::vector<int64_t>{2, 3, 4};
    KILN_ASSIGN_OR_RETURN(x, c.Call("strided_slice", {x}, sa));
  }
  const int64_t mg = wd[1], cg = C / group;
  if (group == 1) {
    KILN_ASSIGN_OR_RETURN(w, Transpose(c, w, {1, 0, 2, 3, 4}));
  } else {
    KILN_ASSIGN_OR_RETURN(w, Reshape(c, w, {group, cg, mg, wd[2], wd[3], wd[4]}, /*allowzero=*/true));
    KILN_ASSIGN_OR_RETURN(w, Transpose(c, w, {0, 2, 1, 3, 4, 5}));
    KILN_ASSIGN_OR_RETURN(w, Reshape(c, w, {group * mg, cg, wd[2], wd[3], wd[4]}, /*allowzero=*/true));
  }
  {
    auto fa = NewAttrs<StridedSliceAttrs>();
    const int64_t lo = std::numeric_limits<int64_t>::min();
    fa->begin = {-1, -1, -1};
    fa->end = {lo, lo, lo};
    fa->strides = std::vector<int64_t>{-1, -1, -1};
    fa->axes = std::vector<int64_t>{2, 3, 4};
    KILN_ASSIGN_OR_RETURN(w, c.Call("strided_slice", {w}, fa));
  }
  Window win;
  win.kernel = {wd[2], wd[3], wd[4]};
  win.strides = {1, 1, 1};
  win.dilations = dil;
  win.pads.assign(6, 0);
  std::vector<int64_t> crop_begin(3, 0), crop_end(3, std::numeric_limits<int64_t>::max());
  bool crop = false;
  for (size_t i = 0; i < 3; ++i) {
    const int64_t full = dil[i] * (win.kernel[i] - 1);
    const int64_t before = full - pads[i], after = full - pads[i + 3] + out_pad[i];
    win.pads[i] = std::max<int64_t>(before, 0);
    win.pads[i + 3] = std::max<int64_t>(after, 0);
    if (before < 0) crop_begin[i] = -before;
    if (after < 0) crop_end[i] = after;
    crop = crop || before < 0 || after < 0;
  }
  KILN_ASSIGN_OR_RETURN(TensorType dilated, TypeOf(x));
  KILN_ASSIGN_OR_RETURN(Expr y, Conv3D(c, x, w, dilated, win, group));
  if (crop) {
    auto sa = NewAttrs<StridedSliceAttrs>();
    sa->begin = crop_begin;
    sa->end = crop_end;
    sa->strides = std::vector<int64_t>{1, 1, 1};
    sa->axes = std::vector<int64_t>{2, 3, 4};
    KILN_ASSIGN_OR_RETURN(y, c.Call("strided_slice", {y}, sa));
  }
  if (c.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(Expr b, c.Input(2));
    auto ba = NewAttrs<BiasAddAttrs>();
    ba->axis = 1;
    KILN_ASSIGN_OR_RETURN(y, c.Call("nn.bias_add", {y, b}, ba));
  }
  return y;
}

// A strided 2-D ConvTranspose (dilation 1) by output phase: output position
// o = q * s + r along an axis of stride s reads only the kernel taps
// m0(r), m0(r) + s, ... of the flipped kernel (the others meet the zeros
// the dilated form inserts), at input positions q + e(r) + j. So each of the
// s_h * s_w phases is a stride-1 convolution of the undilated input with
// that tap subset (ceil(k / s) taps per axis), and the phases are stacked
// and interleaved back (a pixel shuffle) and cropped to the output size.
// Where every phase reads the same input window (k = s, e.g. U-Net's 2x2
// stride-2 up-convolutions) and groups = 1, the phases are one convolution
// with s_h * s_w times the output channels. The dilated form multiplies
// s_h * s_w times as many terms, all but one in s_h * s_w of them zeros
// (DCGAN's 4x4 stride-2 layers). nullopt where a phase would read no tap or
// no input (a kernel smaller than the stride, a crop past the input): the
// dilated form handles those.
struct PhaseAxis {
  int64_t m0 = 0, e = 0, taps = 0;
};
absl::StatusOr<std::optional<Expr>> ConvTransposeByPhase(
    ConvertContext& c, const Expr& x, const Expr& wf, const std::vector<int64_t>& xd,
    const std::vector<int64_t>& k2, const std::vector<int64_t>& strides,
    const std::vector<int64_t>& pads, const std::vector<int64_t>& out_pad, int64_t group,
    int64_t m) {
  const int64_t in[2] = {xd[2], xd[3]};
  int64_t out[2], q[2];
  std::vector<PhaseAxis> ph[2];
  for (size_t i = 0; i < 2; ++i) {
    const int64_t s = strides[i], k = k2[i];
    const int64_t pb = (k - 1) - pads[i];
    out[i] = (in[i] - 1) * s + k - pads[i] - pads[i + 2] + out_pad[i];
    if (out[i] < 1) return std::optional<Expr>();
    q[i] = (out[i] + s - 1) / s;
    for (int64_t r = 0; r < s; ++r) {
      PhaseAxis a;
      a.m0 = ((pb - r) % s + s) % s;
      a.e = (r - pb + a.m0) / s;
      a.taps = a.m0 < k ? (k - a.m0 + s - 1) / s : 0;
      if (a.taps == 0 || a.e >= in[i]) return std::optional<Expr>();
      ph[i].push_back(a);
    }
  }
  bool same_window = group == 1;
  for (size_t i = 0; i < 2 && same_window; ++i) {
    for (const PhaseAxis& a : ph[i]) {
      same_window = same_window && a.e == ph[i][0].e && a.taps == ph[i][0].taps;
    }
  }
  // The stride-1 convolution of phase (a, b) over the input window it reads.
  auto phase_conv = [&](const PhaseAxis& a, const PhaseAxis& b, Expr w) -> absl::StatusOr<Expr> {
    const PhaseAxis pa[2] = {a, b};
    Expr xi = x;
    std::vector<int64_t> pad(4, 0), crop_end(2, std::numeric_limits<int64_t>::max());
    bool crop = false;
    for (size_t i = 0; i < 2; ++i) {
      const int64_t begin = std::max<int64_t>(0, pa[i].e);
      if (begin > 0) {
        KILN_ASSIGN_OR_RETURN(xi, SliceAxis(c, xi, static_cast<int64_t>(2 + i), begin, in[i]));
      }
      pad[i] = std::max<int64_t>(0, -pa[i].e);
      const int64_t len = in[i] - begin + pad[i];
      pad[i + 2] = std::max<int64_t>(0, q[i] + pa[i].taps - 1 - len);
      if (len + pad[i + 2] - pa[i].taps + 1 > q[i]) {
        crop_end[i] = q[i];
        crop = true;
      }
    }
    auto ca = NewAttrs<Conv2DAttrs>();
    ca->padding = pad;
    ca->groups = group;
    KILN_ASSIGN_OR_RETURN(Expr y, c.Call("nn.conv2d", {xi, std::move(w)}, ca));
    if (crop) {
      auto sa = NewAttrs<StridedSliceAttrs>();
      sa->begin = {0, 0};
      sa->end = crop_end;
      sa->strides = std::vector<int64_t>{1, 1};
      sa->axes = std::vector<int64_t>{2, 3};
      KILN_ASSIGN_OR_RETURN(y, c.Call("strided_slice", {y}, sa));
    }
    return y;
  };
  // The flipped kernel's taps of phase (a, b): [M, C/g, taps_h, taps_w].
  auto phase_weight = [&](const PhaseAxis& a, const PhaseAxis& b) -> absl::StatusOr<Expr> {
    auto sa = NewAttrs<StridedSliceAttrs>();
    sa->begin = {a.m0, b.m0};
    sa->end = {a.m0 + (a.taps - 1) * strides[0] + 1, b.m0 + (b.taps - 1) * strides[1] + 1};
    sa->strides = std::vector<int64_t>{strides[0], strides[1]};
    sa->axes = std::vector<int64_t>{2, 3};
    return c.Call("strided_slice", {wf}, sa);
  };
  const int64_t sh = strides[0], sw = strides[1], n = xd[0];
  Expr stacked;  // [N, sh * sw * M, Q_h, Q_w], phase-major
  if (same_window) {
    std::vector<Expr> ws;
    for (const PhaseAxis& a : ph[0]) {
      for (const PhaseAxis& b : ph[1]) {
        KILN_ASSIGN_OR_RETURN(Expr w, phase_weight(a, b));
        ws.push_back(std::move(w));
      }
    }
    KILN_ASSIGN_OR_RETURN(Expr w, ConcatAxis(c, std::move(ws), 0));
    KILN_ASSIGN_OR_RETURN(stacked, phase_conv(ph[0][0], ph[1][0], w));
  } else {
    std::vector<Expr> ys;
    for (const PhaseAxis& a : ph[0]) {
      for (const PhaseAxis& b : ph[1]) {
        KILN_ASSIGN_OR_RETURN(Expr w, phase_weight(a, b));
        KILN_ASSIGN_OR_RETURN(Expr y, phase_conv(a, b, w));
        ys.push_back(std::move(y));
      }
    }
    KILN_ASSIGN_OR_RETURN(stacked, ConcatAxis(c, std::move(ys), 1));
  }
  // [N, sh, sw, M, Q_h, Q_w] -> [N, M, Q_h, sh, Q_w, sw] -> [N, M, Q_h * sh, Q_w * sw].
  KILN_ASSIGN_OR_RETURN(Expr y, Reshape(c, stacked, {n, sh, sw, m, q[0], q[1]}));
  KILN_ASSIGN_OR_RETURN(y, Transpose(c, y, {0, 3, 4, 1, 5, 2}));
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, {n, m, q[0] * sh, q[1] * sw}));
  if (q[0] * sh != out[0] || q[1] * sw != out[1]) {
    auto sa = NewAttrs<StridedSliceAttrs>();
    sa->begin = {0, 0};
    sa->end = {out[0], out[1]};
    sa->strides = std::vector<int64_t>{1, 1};
    sa->axes = std::vector<int64_t>{2, 3};
    KILN_ASSIGN_OR_RETURN(y, c.Call("strided_slice", {y}, sa));
  }
  return std::optional<Expr>(y);
}

Outs ConvertConvTranspose(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr w, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(TensorType wt, c.InputType(1));
  KILN_RETURN_IF_ERROR(CheckWindowRank(c, xt, "transposed convolution", /*allow_3d=*/true));
  const size_t sp = static_cast<size_t>(xt->ndim() - 2);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> xd, StaticDims(c, xt, "the input"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> wd, StaticDims(c, wt, "the weight"));
  if (wd.size() != xd.size())
    return c.Invalid(absl::StrCat("weight ", ShapeToString(wt->shape), " and input ",
                                  ShapeToString(xt->shape), " differ in rank"));
  KILN_ASSIGN_OR_RETURN(int64_t group, c.AttrInt("group", 1));
  if (group < 1 || wd[0] != xd[1] || xd[1] % group != 0)
    return c.Invalid(absl::StrCat("weight ", ShapeToString(wt->shape), " does not match input ",
                                  ShapeToString(xt->shape), " with group ", group));
  const std::vector<int64_t> kernel(wd.begin() + 2, wd.end());
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> ks, c.AttrInts("kernel_shape", kernel));
  if (ks != kernel) return c.Invalid("kernel_shape does not match the weight");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, c.AttrInts("strides", std::vector<int64_t>(sp, 1)));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dil, c.AttrInts("dilations", std::vector<int64_t>(sp, 1)));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, c.AttrInts("pads", std::vector<int64_t>(2 * sp, 0)));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> out_pad,
                        c.AttrInts("output_padding", std::vector<int64_t>(sp, 0)));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape, c.AttrInts("output_shape"));
  KILN_ASSIGN_OR_RETURN(std::string auto_pad, c.AttrString("auto_pad", "NOTSET"));
  if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp || out_pad.size() != sp)
    return c.Invalid("strides, dilations, output_padding and pads do not match the spatial rank");
  if (!out_shape.empty() && out_shape.size() == sp + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != sp)
    return c.Invalid("output_shape does not match the spatial rank");
  constexpr int64_t kBig = int64_t{1} << 30;  // keeps the window arithmetic far from overflow
  for (size_t i = 0; i < sp; ++i) {
    if (strides[i] < 1 || dil[i] < 1) return c.Invalid("strides and dilations must be >= 1");
    if (strides[i] > kBig || dil[i] > kBig || std::abs(pads[i]) > kBig || std::abs(pads[i + sp]) > kBig ||
        std::abs(out_pad[i]) > kBig || (!out_shape.empty() && std::abs(out_shape[i]) > kBig))
      return c.Invalid("strides, dilations, pads and output sizes must be below 2^30");
  }
  // Padding from output_shape or auto_pad (the ONNX ConvTranspose formulas).
  if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < sp; ++i) {
      const int64_t target = out_shape.empty() ? xd[i + 2] * strides[i] : out_shape[i];
      const int64_t total = strides[i] * (xd[i + 2] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1 - target;
      // A negative total (output_shape beyond the full result) pads at the end.
      const bool lower = auto_pad == "SAME_LOWER";
      pads[i] = lower ? total - total / 2 : total / 2;
      pads[i + sp] = lower ? total / 2 : total - total / 2;
    }
  } else if (auto_pad == "VALID") {
    pads.assign(2 * sp, 0);
  } else if (auto_pad != "NOTSET") {
    return c.Invalid(absl::StrCat("auto_pad \"", auto_pad, "\" is not NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
  }
  if (sp == 3) {
    KILN_ASSIGN_OR_RETURN(Expr y, ConvTranspose3D(c, x, w, xt, xd, wd, group, strides, dil, pads, out_pad));
    return std::vector<Expr>{y};
  }
  if (sp == 1) {  // as 2-D over a unit H axis
    KILN_ASSIGN_OR_RETURN(x, ExpandDims(c, x, 2));
    KILN_ASSIGN_OR_RETURN(w, ExpandDims(c, w, 2));
    xd.insert(xd.begin() + 2, 1);
    wd.insert(wd.begin() + 2, 1);
    strides.insert(strides.begin(), 1);
    dil.insert(dil.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
    out_pad.insert(out_pad.begin(), 0);
  }
  const int64_t C = xd[1], H = xd[2], W = xd[3];
  const Expr x_in = x;  // undilated, for ConvTransposeByPhase
  // Insert zeros: [N, C, H, W] -> [N, C, H, 1, W, 1] -> pad to [N, C, H, sh, W, sw]
  // -> [N, C, H*sh, W*sw] -> drop the trailing zeros.
  if (strides[0] > 1 || strides[1] > 1) {
    KILN_ASSIGN_OR_RETURN(x, ExpandDims(c, x, 3));
    KILN_ASSIGN_OR_RETURN(x, ExpandDims(c, x, 5));
    KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(xt->dtype, 0));
    auto pa = NewAttrs<PadAttrs>();
    pa->pad_width = {{0, 0}, {0, 0}, {0, 0}, {0, strides[0] - 1}, {0, 0}, {0, strides[1] - 1}};
    KILN_ASSIGN_OR_RETURN(x, c.Call("nn.pad", {x, zero}, pa));
    auto ra = NewAttrs<ReshapeAttrs>();
    ra->newshape = {0, C, H * strides[0], W * strides[1]};
    KILN_ASSIGN_OR_RETURN(x, c.Call("reshape", {x}, ra));
    auto sa = NewAttrs<StridedSliceAttrs>();
    sa->begin = {0, 0};
    sa->end = {(H - 1) * strides[0] + 1, (W - 1) * strides[1] + 1};
    sa->strides = std::vector<int64_t>{1, 1};
    sa->axes = std::vector<int64_t>{2, 3};
    KILN_ASSIGN_OR_RETURN(x, c.Call("strided_slice", {x}, sa));
  }
  // Weight [C, M/g, kh, kw] -> [M, C/g, kh, kw], flipped in kh and kw.
  const int64_t mg = wd[1], cg = C / group, kh = wd[2], kw = wd[3];
  if (group == 1) {
    auto ta = NewAttrs<TransposeAttrs>();
    ta->axes = std::vector<int64_t>{1, 0, 2, 3};
    KILN_ASSIGN_OR_RETURN(w, c.Call("transpose", {w}, ta));
  } else {
    KILN_ASSIGN_OR_RETURN(w, Reshape(c, w, {group, cg, mg, kh, kw}, /*allowzero=*/true));
    auto ta = NewAttrs<TransposeAttrs>();
    ta->axes = std::vector<int64_t>{0, 2, 1, 3, 4};
    KILN_ASSIGN_OR_RETURN(w, c.Call("transpose", {w}, ta));
    KILN_ASSIGN_OR_RETURN(w, Reshape(c, w, {group * mg, cg, kh, kw}, /*allowzero=*/true));
  }
  {
    auto fa = NewAttrs<StridedSliceAttrs>();
    fa->begin = {-1, -1};
    fa->end = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min()};
    fa->strides = std::vector<int64_t>{-1, -1};
    fa->axes = std::vector<int64_t>{2, 3};
    KILN_ASSIGN_OR_RETURN(w, c.Call("strided_slice", {w}, fa));
  }
  if ((strides[0] > 1 || strides[1] > 1) && dil[0] == 1 && dil[1] == 1) {
    KILN_ASSIGN_OR_RETURN(std::optional<Expr> y,
                          ConvTransposeByPhase(c, x_in, w, xd, {kh, kw}, strides, pads, out_pad,
                                               group, group * mg));
    if (y) {
      KILN_ASSIGN_OR_RETURN(Expr out, BiasAndSqueeze(c, *y, sp));
      return std::vector<Expr>{out};
    }
  }
  // Equivalent padding; negative parts crop afterwards.
  const int64_t k2[2] = {kh, kw};
  std::vector<int64_t> conv_pad(4, 0), crop_begin(2, 0), crop_end(2, std::numeric_limits<int64_t>::max());
  bool crop = false;
  for (size_t i = 0; i < 2; ++i) {
    const int64_t full = dil[i] * (k2[i] - 1);
    const int64_t before = full - pads[i], after = full - pads[i + 2] + out_pad[i];
    conv_pad[i] = std::max<int64_t>(before, 0);
    conv_pad[i + 2] = std::max<int64_t>(after, 0);
    if (before < 0) crop_begin[i] = -before;
    if (after < 0) crop_end[i] = after;
    crop = crop || before < 0 || after < 0;
  }
  auto a = NewAttrs<Conv2DAttrs>();
  a->padding = conv_pad;
  a->dilation = dil;
  a->groups = group;
  KILN_ASSIGN_OR_RETURN(Expr y, c.Call("nn.conv2d", {x, w}, a));
  if (crop) {
    auto sa = NewAttrs<StridedSliceAttrs>();
    sa->begin = crop_begin;
    sa->end = crop_end;
    sa->strides = std::vector<int64_t>{1, 1};
    sa->axes = std::vector<int64_t>{2, 3};
    KILN_ASSIGN_OR_RETURN(y, c.Call("strided_slice", {y}, sa));
  }
  KILN_ASSIGN_OR_RETURN(y, BiasAndSqueeze(c, std::move(y), sp));
  return std::vector<Expr>{y};
}

// MaxPool's Indices: for every output position, the flat index (in x,
// N-C-spatial; storage_order 1 makes the spatial part column-major) of the
// first maximum of its window. A constant table gives each (output
// position, kernel offset) its input position (or a -inf pad column past
// the end); the window's values are gathered (take), the first offset that
// reaches the maximum picked, and its position read from the table.
absl::StatusOr<Expr> MaxPoolIndices(ConvertContext& c, const Expr& x, const TensorType& xt, const Window& win,
                                    const TensorType& yt, int64_t storage_order) {
  const size_t sp = static_cast<size_t>(xt->ndim() - 2);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> xd, StaticDims(c, xt, "the input"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> yd, StaticDims(c, yt, "the output"));
  const int64_t nc = xd[0] * xd[1];
  int64_t s_in = 1, s_out = 1, kk = 1;
  for (size_t i = 0; i < sp; ++i) {
    s_in *= xd[2 + i];
    s_out *= yd[2 + i];
    kk *= win.kernel[i];
  }
  if (s_out * kk > kMaxConstantElements || nc * s_out * kk > (int64_t{1} << 26)) {
    return c.Unsupported(absl::StrCat("MaxPool's Indices over ", nc * s_out, " windows of ", kk,
                                      " (a gather of every window, limited to 2^26 values)"));
  }
  // table[o * kk + k]: the input's spatial position, or s_in (the pad column).
  std::vector<int64_t> table(static_cast<size_t>(s_out * kk), s_in), where(static_cast<size_t>(s_in));
  for (int64_t f = 0; f < s_in; ++f) {  // the reported index of spatial position f
    int64_t rest = f, col = 0, mul = 1;
    std::vector<int64_t> coord(sp);
    for (size_t i = sp; i-- > 0;) {
      coord[i] = rest % xd[2 + i];
      rest /= xd[2 + i];
    }
    for (size_t i = 0; i < sp; ++i) {  // column-major: the first axis varies fastest
      col += coord[i] * mul;
      mul *= xd[2 + i];
    }
    where[static_cast<size_t>(f)] = storage_order == 0 ? f : col;
  }
  for (int64_t o = 0; o < s_out; ++o) {
    for (int64_t k = 0; k < kk; ++k) {
      int64_t ro = o, rk = k, pos = 0;
      bool inside = true;
      std::vector<int64_t> oc(sp), kc(sp);
      for (size_t i = sp; i-- > 0;) {
        oc[i] = ro % yd[2 + i];
        ro /= yd[2 + i];
        kc[i] = rk % win.kernel[i];
        rk /= win.kernel[i];
      }
      for (size_t i = 0; i < sp; ++i) {
        const int64_t at = oc[i] * win.strides[i] - win.pads[i] + kc[i] * win.dilations[i];
        inside = inside && at >= 0 && at < xd[2 + i];
        pos = pos * xd[2 + i] + at;
      }
      if (inside) table[static_cast<size_t>(o * kk + k)] = pos;
    }
  }
  const DataType i64 = DataType::Int(64);
  KILN_ASSIGN_OR_RETURN(Expr flat, Reshape(c, x, {nc, s_in}));
  // The pad column: the dtype's lowest value (it never wins over a real one
  // that reaches it: the first offset with the maximum wins, and pads come
  // from a window's real values too).
  double low = -std::numeric_limits<double>::infinity();
  if (xt->dtype.is_uint()) low = 0;
  else if (!xt->dtype.is_float()) low = -std::ldexp(1.0, xt->dtype.bits() - 1);
  KILN_ASSIGN_OR_RETURN(Expr pad, ConstOf(c, xt->dtype, {nc, 1}, std::vector<double>(static_cast<size_t>(nc), low)));
  KILN_ASSIGN_OR_RETURN(Expr ext, ConcatAxis(c, {flat, pad}, 1));  // [nc, s_in + 1]
  KILN_ASSIGN_OR_RETURN(Expr tab, ConstI64(c, {s_out, kk}, table));
  KILN_ASSIGN_OR_RETURN(Expr vals, Take(c, ext, tab, 1));                          // [nc, s_out, kk]
  KILN_ASSIGN_OR_RETURN(Expr best, Reduce(c, "max", vals, {2}, true));
  KILN_ASSIGN_OR_RETURN(Expr hit, c.Call("equal", {vals, best}));
  KILN_ASSIGN_OR_RETURN(Expr kio, ConstI64(c, {1, 1, kk}, IotaInts(0, kk)));
  KILN_ASSIGN_OR_RETURN(Expr none, c.ScalarConst(i64, static_cast<double>(kk)));
  KILN_ASSIGN_OR_RETURN(Expr cand, c.Call("where", {hit, kio, none}));
  KILN_ASSIGN_OR_RETURN(Expr first, Reduce(c, "min", cand, {2}, true));            // [nc, s_out, 1]
  KILN_ASSIGN_OR_RETURN(Expr pick, c.Call("equal", {kio, first}));
  // The reported index of each table entry (the pad column never wins).
  std::vector<int64_t> rep(table.size());
  for (size_t e = 0; e < table.size(); ++e) rep[e] = table[e] < s_in ? where[static_cast<size_t>(table[e])] : 0;
  KILN_ASSIGN_OR_RETURN(Expr reported, ConstI64(c, {1, s_out, kk}, rep));
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(i64, 0));
  KILN_ASSIGN_OR_RETURN(Expr chosen, c.Call("where", {pick, reported, zero}));
  KILN_ASSIGN_OR_RETURN(Expr spatial, Reduce(c, "sum", chosen, {2}, false));       // [nc, s_out]
  std::vector<int64_t> base(static_cast<size_t>(nc));
  for (int64_t i = 0; i < nc; ++i) base[static_cast<size_t>(i)] = i * s_in;
  KILN_ASSIGN_OR_RETURN(Expr off, ConstI64(c, {nc, 1}, base));
  KILN_ASSIGN_OR_RETURN(Expr idx, c.Call("add", {spatial, off}));
  return Reshape(c, idx, yd);
}

Outs ConvertPool(ConvertContext& c, bool is_max) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_RETURN_IF_ERROR(CheckWindowRank(c, xt, "pooling", /*allow_3d=*/true));
  const bool indices = is_max && WantsOutput(c, 1);
  int64_t storage_order = 0;
  if (indices && c.opset() >= 8) {
    KILN_ASSIGN_OR_RETURN(storage_order, c.AttrInt("storage_order", 0));
    if (storage_order != 0 && storage_order != 1)
      return c.Invalid(absl::StrCat("storage_order ", storage_order, " is not 0 or 1"));
  }
  const size_t sp = static_cast<size_t>(xt->ndim() - 2);
  Window win;
  KILN_ASSIGN_OR_RETURN(const onnx::AttributeProto* ks, c.RequiredAttr("kernel_shape"));
  (void)ks;
  KILN_ASSIGN_OR_RETURN(win.kernel, c.AttrInts("kernel_shape"));
  // MaxPool has dilations from opset 10, AveragePool from 19.
  const bool dilations = is_max ? c.opset() >= 10 : c.opset() >= 19;
  KILN_RETURN_IF_ERROR(ReadWindow(c, xt, sp, dilations, &win));
  int64_t ceil_mode = 0, count_include_pad = 0;
  if (c.opset() >= 10) {
    KILN_ASSIGN_OR_RETURN(ceil_mode, c.AttrInt("ceil_mode", 0));
  }
  if (!is_max && c.opset() >= 7) {
    KILN_ASSIGN_OR_RETURN(count_include_pad, c.AttrInt("count_include_pad", 0));
  }
  auto with_indices = [&](const Expr& y) -> Outs {
    if (!indices) return std::vector<Expr>{y};
    KILN_ASSIGN_OR_RETURN(TensorType yt, TypeOf(y));
    KILN_ASSIGN_OR_RETURN(Expr i, MaxPoolIndices(c, x, xt, win, yt, storage_order));
    return std::vector<Expr>{y, i};
  };
  if (sp == 3) {
    KILN_ASSIGN_OR_RETURN(Expr y, Pool3D(c, x, xt, win, is_max, ceil_mode != 0, count_include_pad != 0));
    return with_indices(y);
  }
  const Expr x_in = x;
  if (sp == 1) {
    KILN_ASSIGN_OR_RETURN(x, ExpandDims(c, x, 2));
  }
  auto a = NewAttrs<Pool2DAttrs>();
  a->pool_size = Pair2D(win.kernel, 1);
  a->strides = Pair2D(win.strides, 1);
  a->dilation = Pair2D(win.dilations, 1);
  a->padding = Padding2D(win.pads);
  a->ceil_mode = ceil_mode != 0;
  a->count_include_pad = count_include_pad != 0;
  KILN_ASSIGN_OR_RETURN(Expr y, c.Call(is_max ? "nn.max_pool2d" : "nn.avg_pool2d", {x}, a));
  if (sp == 1) {
    KILN_ASSIGN_OR_RETURN(y, Squeeze(c, y, {2}));
  }
  x = x_in;
  return with_indices(y);
}

Outs ConvertGlobalPool(ConvertContext& c, bool is_max) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  const int64_t r = xt->ndim();
  if (r < 3) return c.Invalid(absl::StrCat("input must be [N, C, spatial...]; got ", ShapeToString(xt->shape)));
  Expr y;
  if (r == 4) {
    KILN_ASSIGN_OR_RETURN(y, c.Call(is_max ? "nn.global_max_pool2d" : "nn.global_avg_pool2d", {x},
                                    NewAttrs<GlobalPool2DAttrs>()));
  } else {
    KILN_ASSIGN_OR_RETURN(y, Reduce(c, is_max ? "max" : "mean", x, IotaInts(2, r), /*keepdims=*/true));
  }
  return std::vector<Expr>{y};
}

void RegisterWindows(ConverterRegistry& r) {
  for (int v : {1, 11}) r.Add("Conv", v, ConvertConv);
  for (int v : {1, 11}) r.Add("ConvTranspose", v, ConvertConvTranspose);
  for (int v : {1, 8, 10, 11, 12})
    r.Add("MaxPool", v, [](ConvertContext& c) { return ConvertPool(c, true); });
  for (int v : {1, 7, 10, 11})
    r.Add("AveragePool", v, [](ConvertContext& c) { return ConvertPool(c, false); });
  r.Add("GlobalAveragePool", 1, [](ConvertContext& c) { return ConvertGlobalPool(c, false); });
  r.Add("GlobalMaxPool", 1, [](ConvertContext& c) { return ConvertGlobalPool(c, true); });
}

}  // namespace

Outs ConvertConvNode(ConvertContext& c) { return ConvertConv(c); }

// DFT, STFT, MelWeightMatrix, TfIdfVectorizer (convert_signal.cc).
void RegisterSignalConverters(ConverterRegistry& r);

}  // namespace cvt

void RegisterNnConverters(ConverterRegistry& r) {
  cvt::RegisterWindows(r);
  cvt::RegisterQuantConverters(r);
  cvt::RegisterEinsumConverters(r);
  cvt::RegisterRnnConverters(r);
  cvt::RegisterNormConverters(r);
  cvt::RegisterDenseConverters(r);
  cvt::RegisterLossConverters(r);
  cvt::RegisterSignalConverters(r);
}

}  // namespace kiln::onnx_frontend
