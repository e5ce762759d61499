// ONNX quantization operators -> graph IR (part of the nn family; registered
// by RegisterNnConverters). Every one composes existing graph-IR operators:
//
//   QuantizeLinear (10, 13)    y = cast(clip(round(x / scale) + zp, qmin, qmax)), in float32;
//                              round is half to even; per-tensor, or per-axis (13: `axis`)
//                              with a 1-D scale and zero point reshaped to broadcast there.
//   DequantizeLinear (10, 13)  y = float32(int32(x) - int32(zp)) * scale; per-axis from 13.
//   DynamicQuantizeLinear (11) ONNX's function body: range [min(x, 0), max(x, 0)],
//                              scale = range / 255, zp = round(clip(-min / scale, 0, 255)),
//                              y = QuantizeLinear(x, scale, zp) (uint8).
//   MatMulInteger (10)         MatMul over int32(a) - a_zp (per-row [M]) and int32(b) - b_zp
//                              (per-column [N]): the MatMul converter on int32 operands.
//   ConvInteger (10)           Conv over int32(x) - x_zp and int32(w) - w_zp (per output
//                              channel [M]): the Conv converter on int32 operands (its zero
//                              padding is padding with x_zp, as ONNX Runtime does).
//   QLinearMatMul (10)         the integer product, float32, times a_scale * b_scale /
//                              y_scale, quantized with y_zp as QuantizeLinear does.
//   QLinearConv (10)           the integer convolution plus the int32 bias B, requantized
//                              with x_scale * w_scale (per output channel) / y_scale.
//
// The integer forms reuse the Conv and MatMul converters through a view of the
// node whose inputs are the int32 expressions (InputsOverride below), so every
// Conv attribute (auto_pad, pads, strides, dilations, group, kernel_shape, 1-D
// to 3-D windows) and MatMul broadcasting form carries over.
#include <cstdint>
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

constexpr DataType kF32 = DataType::Float(32);
constexpr DataType kI32 = DataType::Int(32);

// The node seen with its inputs replaced by `inputs` (an undefined Expr is an
// absent input); everything else (attributes, building, errors) is the node's.
class InputsOverride final : public ConvertContext {
 public:
  InputsOverride(ConvertContext& base, std::vector<Expr> inputs)
      : base_(base), inputs_(std::move(inputs)) {}

  const onnx::NodeProto& node() const override { return base_.node(); }
  int64_t opset() const override { return base_.opset(); }
  std::string where() const override { return base_.where(); }
  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  bool HasInput(int i) const override {
    return i >= 0 && i < num_inputs() && static_cast<bool>(inputs_[static_cast<size_t>(i)]);
  }
  absl::StatusOr<Expr> Input(int i) override {
    if (!HasInput(i)) return base_.Invalid(absl::StrCat("input ", i, " is absent"));
    return inputs_[static_cast<size_t>(i)];
  }
  absl::StatusOr<TensorType> InputType(int i) override {
    KILN_ASSIGN_OR_RETURN(Expr e, Input(i));
    return TypeOf(e);
  }
  absl::StatusOr<Ref<const HostTensor>> ConstantInput(int i) override {
    return base_.Unsupported(absl::StrCat("input ", i, " of the integer form needs a constant"));
  }
  absl::StatusOr<std::optional<std::vector<int64_t>>> ConstantInts(int i) override {
    if (!HasInput(i)) return std::optional<std::vector<int64_t>>();
    return base_.Unsupported(absl::StrCat("input ", i, " of the integer form needs a constant"));
  }
  bool HasAttr(absl::string_view name) const override { return base_.HasAttr(name); }
  absl::StatusOr<int64_t> AttrInt(absl::string_view name, int64_t def) const override {
    return base_.AttrInt(name, def);
  }
  absl::StatusOr<double> AttrFloat(absl::string_view name, double def) const override {
    return base_.AttrFloat(name, def);
  }
  absl::StatusOr<std::string> AttrString(absl::string_view name,
                                         absl::string_view def) const override {
    return base_.AttrString(name, def);
  }
  absl::StatusOr<std::vector<int64_t>> AttrInts(absl::string_view name,
                                                std::vector<int64_t> def) const override {
    return base_.AttrInts(name, std::move(def));
  }
  absl::StatusOr<std::vector<double>> AttrFloats(absl::string_view name,
                                                 std::vector<double> def) const override {
    return base_.AttrFloats(name, std::move(def));
  }
  absl::StatusOr<std::vector<std::string>> AttrStrings(
      absl::string_view name, std::vector<std::string> def) const override {
    return base_.AttrStrings(name, std::move(def));
  }
  absl::StatusOr<Ref<const HostTensor>> AttrTensor(absl::string_view name) const override {
    return base_.AttrTensor(name);
  }
  absl::StatusOr<const onnx::AttributeProto*> RequiredAttr(absl::string_view name) const override {
    return base_.RequiredAttr(name);
  }
  absl::StatusOr<Expr> Call(absl::string_view op_name, std::vector<Expr> args,
                            Attrs attrs) override {
    return base_.Call(op_name, std::move(args), std::move(attrs));
  }
  absl::StatusOr<Expr> Const(Ref<const HostTensor> value) override {
    return base_.Const(std::move(value));
  }
  absl::StatusOr<Expr> ScalarConst(DataType dtype, double value) override {
    return base_.ScalarConst(dtype, value);
  }
  absl::StatusOr<Expr> TupleGet(Expr tuple, int index) override {
    return base_.TupleGet(std::move(tuple), index);
  }
  absl::Status Invalid(absl::string_view message) const override { return base_.Invalid(message); }
  absl::Status Unsupported(absl::string_view message) const override {
    return base_.Unsupported(message);
  }

 private:
  ConvertContext& base_;
  std::vector<Expr> inputs_;
};

// The single output of `fn` run on the node with its inputs replaced.
absl::StatusOr<Expr> RunWithInputs(ConvertContext& c, std::vector<Expr> inputs,
                                   Outs (*fn)(ConvertContext&)) {
  InputsOverride view(c, std::move(inputs));
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> outs, fn(view));
  if (outs.empty()) return absl::InternalError("the reused converter returned no output");
  return outs[0];
}

// A quantization parameter (scale or zero point) made to broadcast against a
// tensor of rank `rank`: a scalar or one-element tensor as a scalar; a 1-D
// tensor of n > 1 elements along `axis` (shape 1 elsewhere). `what` names it.
absl::StatusOr<Expr> Along(ConvertContext& c, Expr p, int64_t rank, int64_t axis,
                           absl::string_view what) {
  KILN_ASSIGN_OR_RETURN(TensorType pt, TypeOf(p));
  if (pt->ndim() == 0) return p;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pd, StaticDims(c, pt, what));
  if (pt->ndim() != 1)
    return c.Invalid(absl::StrCat(what, " must be a scalar or 1-D; got ", ShapeToString(pt->shape)));
  if (pd[0] == 1) return Reshape(c, p, {});
  if (axis < 0 || axis >= rank)
    return c.Invalid(absl::StrCat(what, " has ", pd[0], " elements but the axis ", axis,
                                  " is outside rank ", rank));
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(axis)] = pd[0];
  return Reshape(c, p, shape);
}

// The per-axis axis: the `axis` attribute from opset 13 (negative counts from
// the end), 1 before (when only per-tensor parameters are allowed, checked by
// RequireScalar).
absl::StatusOr<int64_t> QuantAxis(ConvertContext& c, int64_t rank) {
  if (c.opset() < 13) return int64_t{1};
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", 1));
  // Out of range only matters for per-axis parameters (Along rejects it then);
  // per-tensor ones ignore the axis.
  return axis < 0 && axis >= -rank ? axis + rank : axis;
}

// Before opset 13 the scale and zero point are per-tensor.
absl::Status RequireScalar(ConvertContext& c, int i, absl::string_view what) {
  if (!c.HasInput(i) || c.opset() >= 13) return absl::OkStatus();
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(i));
  for (const Dim& d : t->shape)
    if (!d.is_static() || d.value() != 1)
      return c.Invalid(absl::StrCat(what, " must be a scalar before opset 13 (per-axis "
                                          "quantization came with opset 13); got ",
                                    ShapeToString(t->shape)));
  return absl::OkStatus();
}

absl::Status CheckQuantType(ConvertContext& c, DataType t, absl::string_view what) {
  if (t == DataType::UInt(8) || t == DataType::Int(8)) return absl::OkStatus();
  return c.Unsupported(absl::StrCat(what, " has dtype ", t.ToString(),
                                    "; kiln quantizes to uint8 and int8"));
}

// cast(clip(round(v) + zp, qmin, qmax), qt) for float32 v and a zero point zp
// (already broadcastable; undefined means 0).
absl::StatusOr<Expr> Saturate(ConvertContext& c, Expr v, const Expr& zp, DataType qt) {
  KILN_ASSIGN_OR_RETURN(v, c.Call("round", {v}));
  if (zp) {
    KILN_ASSIGN_OR_RETURN(Expr zf, Cast(c, zp, kF32));
    KILN_ASSIGN_OR_RETURN(v, Binary(c, "add", v, zf));
  }
  auto ca = NewAttrs<ClipAttrs>();
  ca->a_min = qt == DataType::UInt(8) ? 0.0 : -128.0;
  ca->a_max = qt == DataType::UInt(8) ? 255.0 : 127.0;
  KILN_ASSIGN_OR_RETURN(v, c.Call("clip", {v}, ca));
  return Cast(c, v, qt);
}

// The node's input i (a zero point), cast to int32 and made to broadcast along
// `axis` of rank `rank`; undefined when absent.
absl::StatusOr<Expr> ZeroPointI32(ConvertContext& c, int i, int64_t rank, int64_t axis,
                                  absl::string_view what) {
  if (!c.HasInput(i)) return Expr();
  KILN_ASSIGN_OR_RETURN(Expr zp, c.Input(i));
  KILN_ASSIGN_OR_RETURN(zp, Cast(c, zp, kI32));
  return Along(c, zp, rank, axis, what);
}

// int32(x) - zp (zp undefined: int32(x)).
absl::StatusOr<Expr> Centered(ConvertContext& c, Expr x, const Expr& zp) {
  KILN_ASSIGN_OR_RETURN(x, Cast(c, x, kI32));
  if (!zp) return x;
  return Binary(c, "subtract", x, zp);
}

absl::StatusOr<Expr> ScaleF32(ConvertContext& c, int i, int64_t rank, int64_t axis,
                              absl::string_view what) {
  KILN_ASSIGN_OR_RETURN(Expr s, c.Input(i));
  KILN_ASSIGN_OR_RETURN(TensorType st, TypeOf(s));
  if (!st->dtype.is_float())
    return c.Invalid(absl::StrCat(what, " must be a float tensor; got ", st->dtype.ToString()));
  KILN_ASSIGN_OR_RETURN(s, Cast(c, s, kF32));
  return Along(c, s, rank, axis, what);
}

// ---- QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear --------------------------

absl::StatusOr<Expr> Quantize(ConvertContext& c, Expr x, Expr scale, Expr zp, DataType qt) {
  KILN_ASSIGN_OR_RETURN(x, Cast(c, x, kF32));
  KILN_ASSIGN_OR_RETURN(Expr q, Binary(c, "divide", x, scale));
  return Saturate(c, q, zp, qt);
}

Outs ConvertQuantizeLinear(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  if (!xt->dtype.is_float() && xt->dtype != kI32)
    return c.Invalid(absl::StrCat("x must be float or int32; got ", xt->dtype.ToString()));
  KILN_RETURN_IF_ERROR(RequireScalar(c, 1, "y_scale"));
  KILN_RETURN_IF_ERROR(RequireScalar(c, 2, "y_zero_point"));
  const int64_t rank = xt->ndim();
  KILN_ASSIGN_OR_RETURN(int64_t axis, QuantAxis(c, rank));
  KILN_ASSIGN_OR_RETURN(Expr scale, ScaleF32(c, 1, rank, axis, "y_scale"));
  DataType qt = DataType::UInt(8);
  Expr zp;
  if (c.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(TensorType zt, c.InputType(2));
    qt = zt->dtype;
    KILN_RETURN_IF_ERROR(CheckQuantType(c, qt, "y_zero_point"));
    KILN_ASSIGN_OR_RETURN(zp, c.Input(2));
    KILN_ASSIGN_OR_RETURN(zp, Along(c, zp, rank, axis, "y_zero_point"));
  }
  KILN_ASSIGN_OR_RETURN(Expr y, Quantize(c, x, scale, zp, qt));
  return std::vector<Expr>{y};
}

Outs ConvertDequantizeLinear(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  if (xt->dtype != DataType::UInt(8) && xt->dtype != DataType::Int(8) && xt->dtype != kI32)
    return c.Unsupported(absl::StrCat("x has dtype ", xt->dtype.ToString(),
                                      "; kiln dequantizes uint8, int8 and int32"));
  KILN_RETURN_IF_ERROR(RequireScalar(c, 1, "x_scale"));
  KILN_RETURN_IF_ERROR(RequireScalar(c, 2, "x_zero_point"));
  const int64_t rank = xt->ndim();
  KILN_ASSIGN_OR_RETURN(int64_t axis, QuantAxis(c, rank));
  KILN_ASSIGN_OR_RETURN(Expr scale, ScaleF32(c, 1, rank, axis, "x_scale"));
  if (c.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(TensorType zt, c.InputType(2));
    if (zt->dtype != xt->dtype)
      return c.Invalid(absl::StrCat("x_zero_point (", zt->dtype.ToString(), ") and x (",
                                    xt->dtype.ToString(), ") differ in dtype"));
  }
  KILN_ASSIGN_OR_RETURN(Expr zp, ZeroPointI32(c, 2, rank, axis, "x_zero_point"));
  KILN_ASSIGN_OR_RETURN(Expr xi, Centered(c, x, zp));
  KILN_ASSIGN_OR_RETURN(Expr xf, Cast(c, xi, kF32));
  KILN_ASSIGN_OR_RETURN(Expr y, Binary(c, "multiply", xf, scale));
  return std::vector<Expr>{y};
}

Outs ConvertDynamicQuantizeLinear(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  if (xt->dtype != kF32) return c.Invalid(absl::StrCat("x must be float32; got ", xt->dtype.ToString()));
  Expr lo = x, hi = x;
  if (xt->ndim() > 0) {
    const std::vector<int64_t> all = IotaInts(0, xt->ndim());
    KILN_ASSIGN_OR_RETURN(lo, Reduce(c, "min", x, all, false));
    KILN_ASSIGN_OR_RETURN(hi, Reduce(c, "max", x, all, false));
  }
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(kF32, 0));
  KILN_ASSIGN_OR_RETURN(Expr qmax, c.ScalarConst(kF32, 255));
  KILN_ASSIGN_OR_RETURN(lo, Binary(c, "minimum", lo, zero));
  KILN_ASSIGN_OR_RETURN(hi, Binary(c, "maximum", hi, zero));
  KILN_ASSIGN_OR_RETURN(Expr range, Binary(c, "subtract", hi, lo));
  KILN_ASSIGN_OR_RETURN(Expr scale, Binary(c, "divide", range, qmax));
  KILN_ASSIGN_OR_RETURN(Expr min_scaled, Binary(c, "divide", lo, scale));
  KILN_ASSIGN_OR_RETURN(Expr zp_f, Binary(c, "subtract", zero, min_scaled));
  auto ca = NewAttrs<ClipAttrs>();
  ca->a_min = 0;
  ca->a_max = 255;
  KILN_ASSIGN_OR_RETURN(zp_f, c.Call("clip", {zp_f}, ca));
  KILN_ASSIGN_OR_RETURN(zp_f, c.Call("round", {zp_f}));
  KILN_ASSIGN_OR_RETURN(Expr zp, Cast(c, zp_f, DataType::UInt(8)));
  KILN_ASSIGN_OR_RETURN(Expr y, Quantize(c, x, scale, zp, DataType::UInt(8)));
  return std::vector<Expr>{y, scale, zp};
}

// ---- integer and quantized products -------------------------------------------------

absl::Status CheckInt8(ConvertContext& c, int i, absl::string_view what) {
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(i));
  return CheckQuantType(c, t->dtype, what);
}

// The int32 operands of MatMulInteger / QLinearMatMul: a - a_zp (a_zp per row:
// [M] along a's axis -2) and b - b_zp (per column: [N] along b's last axis).
absl::StatusOr<std::pair<Expr, Expr>> MatMulOperands(ConvertContext& c, int a_i, int azp_i,
                                                     int b_i, int bzp_i) {
  KILN_RETURN_IF_ERROR(CheckInt8(c, a_i, "A"));
  KILN_RETURN_IF_ERROR(CheckInt8(c, b_i, "B"));
  KILN_ASSIGN_OR_RETURN(Expr a, c.Input(a_i));
  KILN_ASSIGN_OR_RETURN(Expr b, c.Input(b_i));
  KILN_ASSIGN_OR_RETURN(TensorType at, c.InputType(a_i));
  KILN_ASSIGN_OR_RETURN(TensorType bt, c.InputType(b_i));
  const int64_t ra = at->ndim(), rb = bt->ndim();
  if (ra < 1 || rb < 1) return c.Invalid("A and B must have rank >= 1");
  // A 1-D A has one row; per-row parameters then have one element.
  KILN_ASSIGN_OR_RETURN(Expr azp, ZeroPointI32(c, azp_i, ra, ra >= 2 ? ra - 2 : -1, "a_zero_point"));
  KILN_ASSIGN_OR_RETURN(Expr bzp, ZeroPointI32(c, bzp_i, rb, rb - 1, "b_zero_point"));
  KILN_ASSIGN_OR_RETURN(Expr a32, Centered(c, a, azp));
  KILN_ASSIGN_OR_RETURN(Expr b32, Centered(c, b, bzp));
  return std::make_pair(a32, b32);
}

Outs ConvertMatMulInteger(ConvertContext& c) {
  std::optional<std::pair<Expr, Expr>> ab;
  KILN_ASSIGN_OR_RETURN(ab, MatMulOperands(c, 0, 2, 1, 3));
  KILN_ASSIGN_OR_RETURN(Expr y, RunWithInputs(c, {ab->first, ab->second}, ConvertMatMulNode));
  return std::vector<Expr>{y};
}

// The quantized output: float32(acc) * multiplier, quantized with input
// zp_i's zero point (its dtype the output's).
absl::StatusOr<Expr> Requantize(ConvertContext& c, const Expr& acc, const Expr& multiplier,
                                int zp_i) {
  KILN_ASSIGN_OR_RETURN(Expr f, Cast(c, acc, kF32));
  KILN_ASSIGN_OR_RETURN(f, Binary(c, "multiply", f, multiplier));
  DataType qt = DataType::UInt(8);
  Expr zp;
  if (c.HasInput(zp_i)) {
    KILN_ASSIGN_OR_RETURN(TensorType zt, c.InputType(zp_i));
    qt = zt->dtype;
    KILN_RETURN_IF_ERROR(CheckQuantType(c, qt, "y_zero_point"));
    KILN_ASSIGN_OR_RETURN(zp, c.Input(zp_i));
    KILN_ASSIGN_OR_RETURN(zp, Along(c, zp, 0, -1, "y_zero_point"));
  }
  return Saturate(c, f, zp, qt);
}

Outs ConvertQLinearMatMul(ConvertContext& c) {
  // a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point
  std::optional<std::pair<Expr, Expr>> ab;
  KILN_ASSIGN_OR_RETURN(ab, MatMulOperands(c, 0, 2, 3, 5));
  KILN_ASSIGN_OR_RETURN(Expr acc, RunWithInputs(c, {ab->first, ab->second}, ConvertMatMulNode));
  KILN_ASSIGN_OR_RETURN(TensorType at, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(TensorType bt, c.InputType(3));
  KILN_ASSIGN_OR_RETURN(TensorType yt, TypeOf(acc));
  const int64_t ra = at->ndim(), rb = bt->ndim(), ry = yt->ndim();
  // Per-row a_scale [M] lands on the output's axis -2 (-1 when B is 1-D), per-column
  // b_scale [N] on its last axis.
  const int64_t row_axis = ra >= 2 ? ry - (rb == 1 ? 1 : 2) : -1;
  KILN_ASSIGN_OR_RETURN(Expr sa, ScaleF32(c, 1, ry, row_axis, "a_scale"));
  KILN_ASSIGN_OR_RETURN(Expr sb, ScaleF32(c, 4, ry, rb >= 2 ? ry - 1 : -1, "b_scale"));
  KILN_ASSIGN_OR_RETURN(Expr sy, ScaleF32(c, 6, 0, -1, "y_scale"));
  KILN_ASSIGN_OR_RETURN(Expr m, Binary(c, "multiply", sa, sb));
  KILN_ASSIGN_OR_RETURN(m, Binary(c, "divide", m, sy));
  KILN_ASSIGN_OR_RETURN(Expr y, Requantize(c, acc, m, 7));
  return std::vector<Expr>{y};
}

// The int32 operands of ConvInteger / QLinearConv: x - x_zp (per tensor) and
// w - w_zp (per output channel: [M] along w's axis 0).
absl::StatusOr<std::pair<Expr, Expr>> ConvOperands(ConvertContext& c, int x_i, int xzp_i, int w_i,
                                                   int wzp_i) {
  KILN_RETURN_IF_ERROR(CheckInt8(c, x_i, "x"));
  KILN_RETURN_IF_ERROR(CheckInt8(c, w_i, "w"));
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(x_i));
  KILN_ASSIGN_OR_RETURN(Expr w, c.Input(w_i));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(x_i));
  KILN_ASSIGN_OR_RETURN(TensorType wt, c.InputType(w_i));
  KILN_ASSIGN_OR_RETURN(Expr xzp, ZeroPointI32(c, xzp_i, xt->ndim(), -1, "x_zero_point"));
  KILN_ASSIGN_OR_RETURN(Expr wzp, ZeroPointI32(c, wzp_i, wt->ndim(), 0, "w_zero_point"));
  KILN_ASSIGN_OR_RETURN(Expr x32, Centered(c, x, xzp));
  KILN_ASSIGN_OR_RETURN(Expr w32, Centered(c, w, wzp));
  return std::make_pair(x32, w32);
}

Outs ConvertConvInteger(ConvertContext& c) {
  std::optional<std::pair<Expr, Expr>> xw;
  KILN_ASSIGN_OR_RETURN(xw, ConvOperands(c, 0, 2, 1, 3));
  KILN_ASSIGN_OR_RETURN(Expr y, RunWithInputs(c, {xw->first, xw->second}, ConvertConvNode));
  return std::vector<Expr>{y};
}

Outs ConvertQLinearConv(ConvertContext& c) {
  // x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  std::optional<std::pair<Expr, Expr>> xw;
  KILN_ASSIGN_OR_RETURN(xw, ConvOperands(c, 0, 2, 3, 5));
  Expr bias;
  if (c.HasInput(8)) {
    KILN_ASSIGN_OR_RETURN(TensorType bt, c.InputType(8));
    if (bt->dtype != kI32) return c.Invalid(absl::StrCat("B must be int32; got ", bt->dtype.ToString()));
    KILN_ASSIGN_OR_RETURN(bias, c.Input(8));
  }
  KILN_ASSIGN_OR_RETURN(Expr acc, RunWithInputs(c, {xw->first, xw->second, bias}, ConvertConvNode));
  KILN_ASSIGN_OR_RETURN(TensorType yt, TypeOf(acc));
  const int64_t ry = yt->ndim();
  KILN_ASSIGN_OR_RETURN(Expr sx, ScaleF32(c, 1, 0, -1, "x_scale"));
  KILN_ASSIGN_OR_RETURN(Expr sw, ScaleF32(c, 4, ry, 1, "w_scale"));
  KILN_ASSIGN_OR_RETURN(Expr sy, ScaleF32(c, 6, 0, -1, "y_scale"));
  KILN_ASSIGN_OR_RETURN(Expr m, Binary(c, "multiply", sx, sw));
  KILN_ASSIGN_OR_RETURN(m, Binary(c, "divide", m, sy));
  KILN_ASSIGN_OR_RETURN(Expr y, Requantize(c, acc, m, 7));
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterQuantConverters(ConverterRegistry& r) {
  for (int v : {10, 13}) {
    r.Add("QuantizeLinear", v, ConvertQuantizeLinear);
    r.Add("DequantizeLinear", v, ConvertDequantizeLinear);
  }
  r.Add("DynamicQuantizeLinear", 11, ConvertDynamicQuantizeLinear);
  r.Add("MatMulInteger", 10, ConvertMatMulInteger);
  r.Add("ConvInteger", 10, ConvertConvInteger);
  r.Add("QLinearMatMul", 10, ConvertQLinearMatMul);
  r.Add("QLinearConv", 10, ConvertQLinearConv);
}

}  // namespace kiln::onnx_frontend::cvt
