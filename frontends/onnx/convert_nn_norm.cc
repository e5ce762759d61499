// ONNX normalizations -> graph IR (part of the nn family; registered by
// RegisterNnConverters).
//
// BatchNormalization -> nn.batch_norm; LayerNormalization -> nn.layer_norm
// (over the flattened normalized dims). Compositions (exact up to float
// rounding order):
//   InstanceNormalization, MeanVarianceNormalization, LayerNormalization's
//   Mean/InvStdDev outputs, BatchNormalization with spatial=0 (per-activation
//   statistics): mean / subtract / multiply / sqrt / divide;
//   BatchNormalization in training mode (training_mode=1, is_test=0 before
//   opset 7, or mean/var outputs in 7-13): batch moments, and the running
//   statistics as momentum blends;
//   LRN: x / (bias + alpha / size * window sum of x^2)^beta, the window sum
//   over channels by a zero pad and `size` shifted slices.
// Left unconverted: BatchNormalization's saved_mean / saved_var outputs
// (opsets 7-13 training internals).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::cvt {
namespace {

// x * s for a scalar s (skipped when s == 1).
absl::StatusOr<Expr> Scale(ConvertContext& c, Expr x, double s) {
  if (s == 1.0) return x;
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  KILN_ASSIGN_OR_RETURN(Expr k, c.ScalarConst(t->dtype, s));
  return Binary(c, "multiply", std::move(x), std::move(k));
}

// ---- normalization ------------------------------------------------------------------

// (x - mean) / sqrt(var + eps) * scale + bias with broadcasting parameters.
absl::StatusOr<Expr> Normalize(ConvertContext& c, Expr x, Expr mean, Expr var, double eps,
                               Expr scale, Expr bias) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  KILN_ASSIGN_OR_RETURN(Expr e, c.ScalarConst(t->dtype, eps));
  KILN_ASSIGN_OR_RETURN(Expr d, Binary(c, "subtract", x, mean));
  KILN_ASSIGN_OR_RETURN(Expr ve, Binary(c, "add", var, e));
  KILN_ASSIGN_OR_RETURN(Expr sd, c.Call("sqrt", {ve}));
  KILN_ASSIGN_OR_RETURN(Expr y, Binary(c, "divide", d, sd));
  if (scale) {
    KILN_ASSIGN_OR_RETURN(y, Binary(c, "multiply", y, scale));
  }
  if (bias) {
    KILN_ASSIGN_OR_RETURN(y, Binary(c, "add", y, bias));
  }
  return y;
}

// Mean and biased variance of x over `axes` (kept as unit dims).
absl::StatusOr<std::pair<Expr, Expr>> Moments(ConvertContext& c, const Expr& x,
                                              const std::vector<int64_t>& axes) {
  KILN_ASSIGN_OR_RETURN(Expr mean, Reduce(c, "mean", x, axes, true));
  KILN_ASSIGN_OR_RETURN(Expr d, Binary(c, "subtract", x, mean));
  KILN_ASSIGN_OR_RETURN(Expr sq, Binary(c, "multiply", d, d));
  KILN_ASSIGN_OR_RETURN(Expr var, Reduce(c, "mean", sq, axes, true));
  return std::make_pair(mean, var);
}

// BatchNormalization in training mode: normalizes with the batch statistics
// (mean and biased variance over every axis but 1) and returns the running
// statistics input * momentum + batch * (1 - momentum) (outputs 1 and 2 in
// every opset).
Outs BatchNormTraining(ConvertContext& c, const Expr& x, const TensorType& xt, double eps) {
  KILN_ASSIGN_OR_RETURN(double momentum, c.AttrFloat("momentum", 0.9));
  const int64_t r = xt->ndim();
  std::vector<int64_t> axes = IotaInts(2, r);
  axes.insert(axes.begin(), 0);
  KILN_ASSIGN_OR_RETURN(auto mv, Moments(c, x, axes));
  std::vector<Expr> p;
  std::vector<int64_t> col(static_cast<size_t>(r - 1), 1);
  col[0] = -1;
  for (int i = 1; i <= 4; ++i) {
    KILN_ASSIGN_OR_RETURN(Expr e, c.Input(i));
    KILN_ASSIGN_OR_RETURN(e, Cast(c, e, xt->dtype));
    p.push_back(e);
  }
  KILN_ASSIGN_OR_RETURN(Expr scale, Reshape(c, p[0], col));
  KILN_ASSIGN_OR_RETURN(Expr bias, Reshape(c, p[1], col));
  KILN_ASSIGN_OR_RETURN(Expr y, Normalize(c, x, mv.first, mv.second, eps, scale, bias));
  std::vector<Expr> outs = {y};
  for (int i = 1; i <= 2; ++i) {
    if (!WantsOutput(c, i)) break;
    KILN_ASSIGN_OR_RETURN(Expr batch, Reshape(c, i == 1 ? mv.first : mv.second, {-1}));
    KILN_ASSIGN_OR_RETURN(Expr old_part, Scale(c, p[static_cast<size_t>(i + 1)], momentum));
    KILN_ASSIGN_OR_RETURN(Expr new_part, Scale(c, batch, 1 - momentum));
    KILN_ASSIGN_OR_RETURN(Expr running, Binary(c, "add", old_part, new_part));
    outs.push_back(running);
  }
  return outs;
}

Outs ConvertBatchNorm(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  if (xt->ndim() < 2) return c.Invalid(absl::StrCat("input must be [N, C, ...]; got ", ShapeToString(xt->shape)));
  KILN_ASSIGN_OR_RETURN(double eps, c.AttrFloat("epsilon", 1e-5));
  int64_t spatial = 1;
  if (c.opset() < 9) {
    KILN_ASSIGN_OR_RETURN(spatial, c.AttrInt("spatial", 1));
  }
  // Training mode: training_mode=1 (14+); is_test=0 (before 7); the running
  // statistics requested as outputs (7 to 13).
  bool training = false;
  if (c.opset() >= 14) {
    KILN_ASSIGN_OR_RETURN(int64_t mode, c.AttrInt("training_mode", 0));
    training = mode != 0;
  } else if (c.opset() < 7) {
    KILN_ASSIGN_OR_RETURN(int64_t is_test, c.AttrInt("is_test", 0));
    training = is_test == 0;
  } else {
    training = WantsOutput(c, 1) || WantsOutput(c, 2);
  }
  if (training) {
    if (WantsOutput(c, 3) || WantsOutput(c, 4))
      return c.Unsupported("the saved_mean / saved_var outputs (training internals)");
    if (spatial == 0) return c.Unsupported("training mode with spatial=0");
    return BatchNormTraining(c, x, xt, eps);
  }
  for (int i = 1; i < c.node().output_size(); ++i)
    if (WantsOutput(c, i))
      return c.Invalid(absl::StrCat("output ", i, " exists only in training mode"));
  std::vector<Expr> p;
  for (int i = 1; i <= 4; ++i) {
    KILN_ASSIGN_OR_RETURN(Expr e, c.Input(i));
    KILN_ASSIGN_OR_RETURN(e, Cast(c, e, xt->dtype));  // opset 15: T1/T2 may differ from T
    p.push_back(e);
  }
  Expr y;
  if (spatial == 0) {
    // Per-activation statistics: parameters of shape [C, D1, ...] broadcast over N.
    KILN_ASSIGN_OR_RETURN(y, Normalize(c, x, p[2], p[3], eps, p[0], p[1]));
  } else {
    auto a = NewAttrs<BatchNormAttrs>();
    a->axis = 1;
    a->epsilon = eps;
    KILN_ASSIGN_OR_RETURN(Expr bn, c.Call("nn.batch_norm", {x, p[0], p[1], p[2], p[3]}, a));
    KILN_ASSIGN_OR_RETURN(y, c.TupleGet(bn, 0));
  }
  return std::vector<Expr>{y};
}

Outs ConvertInstanceNorm(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(Expr scale, c.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr bias, c.Input(2));
  const int64_t r = xt->ndim();
  if (r < 3) return c.Invalid(absl::StrCat("input must be [N, C, spatial...]; got ", ShapeToString(xt->shape)));
  KILN_ASSIGN_OR_RETURN(double eps, c.AttrFloat("epsilon", 1e-5));
  KILN_ASSIGN_OR_RETURN(auto mv, Moments(c, x, IotaInts(2, r)));
  // [C] -> [C, 1, ..., 1] so that it lines up with axis 1.
  std::vector<int64_t> col(static_cast<size_t>(r - 1), 1);
  col[0] = -1;
  KILN_ASSIGN_OR_RETURN(scale, Reshape(c, scale, col));
  KILN_ASSIGN_OR_RETURN(bias, Reshape(c, bias, col));
  KILN_ASSIGN_OR_RETURN(Expr y, Normalize(c, x, mv.first, mv.second, eps, scale, bias));
  return std::vector<Expr>{y};
}

Outs ConvertLayerNorm(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(Expr scale, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType st, c.InputType(1));
  const int64_t r = xt->ndim();
  if (r < 1) return c.Invalid("input must have rank >= 1");
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", -1));
  KILN_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, r));
  KILN_ASSIGN_OR_RETURN(double eps, c.AttrFloat("epsilon", 1e-5));
  // The normalized dims x.shape[axis:] must be static (the parameters are flattened to them).
  std::vector<int64_t> norm_dims;
  for (int64_t i = axis; i < r; ++i) {
    const Dim& d = xt->shape[static_cast<size_t>(i)];
    if (!d.is_static()) return c.Unsupported("LayerNormalization needs static normalized dims");
    norm_dims.push_back(d.value());
  }
  const int64_t len = std::accumulate(norm_dims.begin(), norm_dims.end(), int64_t{1},
                                      [](int64_t a, int64_t b) { return a * b; });
  // Parameters: broadcast to the normalized shape, then flattened to [len].
  auto flat_param = [&](Expr p, const TensorType& pt) -> absl::StatusOr<Expr> {
    KILN_ASSIGN_OR_RETURN(p, Cast(c, p, xt->dtype));
    std::optional<std::vector<int64_t>> ps = StaticShape(pt->shape);
    if (!ps) return c.Unsupported("LayerNormalization needs static Scale and B shapes");
    if (*ps != norm_dims) {
      auto ba = NewAttrs<BroadcastToAttrs>();
      ba->shape = norm_dims;
      KILN_ASSIGN_OR_RETURN(p, c.Call("broadcast_to", {p}, ba));
    }
    if (norm_dims.size() != 1) {
      KILN_ASSIGN_OR_RETURN(p, Reshape(c, p, {len}, /*allowzero=*/true));
    }
    return p;
  };
  KILN_ASSIGN_OR_RETURN(Expr gamma, flat_param(scale, st));
  Expr beta;
  const bool has_bias = c.HasInput(2);
  if (has_bias) {
    KILN_ASSIGN_OR_RETURN(Expr b, c.Input(2));
    KILN_ASSIGN_OR_RETURN(TensorType bt, c.InputType(2));
    KILN_ASSIGN_OR_RETURN(beta, flat_param(b, bt));
  } else {
    beta = gamma;  // ignored: center = false
  }
  Expr xv = x;
  if (norm_dims.size() != 1) {
    std::vector<int64_t> ns(static_cast<size_t>(axis), 0);  // copy the leading dims
    ns.push_back(len);
    auto ra = NewAttrs<ReshapeAttrs>();
    ra->newshape = ns;
    KILN_ASSIGN_OR_RETURN(xv, c.Call("reshape", {x}, ra));
  }
  auto a = NewAttrs<LayerNormAttrs>();
  a->axis = -1;
  a->epsilon = eps;
  a->center = has_bias;
  KILN_ASSIGN_OR_RETURN(Expr y, c.Call("nn.layer_norm", {xv, gamma, beta}, a));
  if (norm_dims.size() != 1) {
    std::vector<int64_t> ns(static_cast<size_t>(axis), 0);
    ns.insert(ns.end(), norm_dims.begin(), norm_dims.end());
    auto ra = NewAttrs<ReshapeAttrs>();
    ra->newshape = ns;
    KILN_ASSIGN_OR_RETURN(y, c.Call("reshape", {y}, ra));
  }
  std::vector<Expr> outs = {y};
  if (WantsOutput(c, 1) || WantsOutput(c, 2)) {
    KILN_ASSIGN_OR_RETURN(auto mv, Moments(c, x, IotaInts(axis, r)));
    KILN_ASSIGN_OR_RETURN(Expr e, c.ScalarConst(xt->dtype, eps));
    KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(xt->dtype, 1));
    KILN_ASSIGN_OR_RETURN(Expr ve, Binary(c, "add", mv.second, e));
    KILN_ASSIGN_OR_RETURN(Expr sd, c.Call("sqrt", {ve}));
    KILN_ASSIGN_OR_RETURN(Expr inv, Binary(c, "divide", one, sd));
    outs.push_back(mv.first);
    outs.push_back(inv);
  }
  return outs;
}

// Y = (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), as ONNX's function body.
Outs ConvertMeanVarianceNorm(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, c.AttrInts("axes", {0, 2, 3}));
  for (int64_t& ax : axes) {
    KILN_ASSIGN_OR_RETURN(ax, NormAxis(c, ax, xt->ndim()));
  }
  KILN_ASSIGN_OR_RETURN(Expr mean, Reduce(c, "mean", x, axes, true));
  KILN_ASSIGN_OR_RETURN(Expr sq, Binary(c, "multiply", x, x));
  KILN_ASSIGN_OR_RETURN(Expr mean_sq, Reduce(c, "mean", sq, axes, true));
  KILN_ASSIGN_OR_RETURN(Expr sq_mean, Binary(c, "multiply", mean, mean));
  KILN_ASSIGN_OR_RETURN(Expr var, Binary(c, "subtract", mean_sq, sq_mean));
  KILN_ASSIGN_OR_RETURN(Expr sd, c.Call("sqrt", {var}));
  KILN_ASSIGN_OR_RETURN(Expr eps, c.ScalarConst(xt->dtype, 1e-9));
  KILN_ASSIGN_OR_RETURN(sd, Binary(c, "add", sd, eps));
  KILN_ASSIGN_OR_RETURN(Expr d, Binary(c, "subtract", x, mean));
  KILN_ASSIGN_OR_RETURN(Expr y, Binary(c, "divide", d, sd));
  return std::vector<Expr>{y};
}

// LRN: square_sum[c] = sum of x^2 over channels [c - floor((size-1)/2),
// c + ceil((size-1)/2)]; y = x / (bias + alpha / size * square_sum)^beta.
Outs ConvertLRN(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  const int64_t r = xt->ndim();
  if (r < 3) return c.Invalid(absl::StrCat("input must be [N, C, D1, ...]; got ", ShapeToString(xt->shape)));
  KILN_ASSIGN_OR_RETURN(const onnx::AttributeProto* size_attr, c.RequiredAttr("size"));
  (void)size_attr;
  KILN_ASSIGN_OR_RETURN(int64_t size, c.AttrInt("size", 1));
  if (size < 1) return c.Invalid(absl::StrCat("size ", size, " must be >= 1"));
  if (size > 4096) return c.Unsupported(absl::StrCat("size ", size, " (composed of `size` slices; at most 4096)"));
  KILN_ASSIGN_OR_RETURN(double alpha, c.AttrFloat("alpha", 1e-4));
  KILN_ASSIGN_OR_RETURN(double beta, c.AttrFloat("beta", 0.75));
  KILN_ASSIGN_OR_RETURN(double bias, c.AttrFloat("bias", 1.0));
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  KILN_ASSIGN_OR_RETURN(Expr sq, Binary(c, "multiply", x, x));
  Expr padded = sq;
  if (size > 1) {
    KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(xt->dtype, 0));
    auto pa = NewAttrs<PadAttrs>();
    pa->pad_width.assign(static_cast<size_t>(r), {0, 0});
    pa->pad_width[1] = {lo, hi};
    KILN_ASSIGN_OR_RETURN(padded, c.Call("nn.pad", {sq, zero}, pa));
  }
  // Window sum: slice i of the padded channels is [i, i + C), i.e. end = -(size - 1 - i).
  Expr sum;
  for (int64_t i = 0; i < size; ++i) {
    Expr part = padded;
    if (size > 1) {
      auto sa = NewAttrs<StridedSliceAttrs>();
      sa->begin = {i};
      sa->end = {i == size - 1 ? std::numeric_limits<int64_t>::max() : -(size - 1 - i)};
      sa->strides = std::vector<int64_t>{1};
      sa->axes = std::vector<int64_t>{1};
      KILN_ASSIGN_OR_RETURN(part, c.Call("strided_slice", {padded}, sa));
    }
    if (sum) {
      KILN_ASSIGN_OR_RETURN(sum, Binary(c, "add", sum, part));
    }
    else sum = part;
  }
  KILN_ASSIGN_OR_RETURN(Expr scaled, Scale(c, sum, alpha / static_cast<double>(size)));
  KILN_ASSIGN_OR_RETURN(Expr b, c.ScalarConst(xt->dtype, bias));
  KILN_ASSIGN_OR_RETURN(Expr base, Binary(c, "add", scaled, b));
  KILN_ASSIGN_OR_RETURN(Expr p, c.ScalarConst(xt->dtype, beta));
  KILN_ASSIGN_OR_RETURN(Expr den, Binary(c, "power", base, p));
  KILN_ASSIGN_OR_RETURN(Expr y, Binary(c, "divide", x, den));
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterNormConverters(ConverterRegistry& r) {
  for (int v : {1, 6, 7, 9, 14, 15}) r.Add("BatchNormalization", v, ConvertBatchNorm);
  for (int v : {1, 6}) r.Add("InstanceNormalization", v, ConvertInstanceNorm);
  r.Add("LayerNormalization", 17, ConvertLayerNorm);
  for (int v : {9, 13}) r.Add("MeanVarianceNormalization", v, ConvertMeanVarianceNorm);
  for (int v : {1, 13}) r.Add("LRN", v, ConvertLRN);
}

}  // namespace kiln::onnx_frontend::cvt
