// Shared builders of the converter families (convert_util.h).
#include "frontends/onnx/convert_util.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::cvt {

absl::StatusOr<TensorType> TypeOf(const Expr& e) {
  if (const auto* t = e->checked_type().as<TensorTypeNode>()) return Ref<const TensorTypeNode>(t);
  return absl::InternalError("a converter's intermediate value is not a typed tensor");
}

absl::StatusOr<std::vector<int64_t>> StaticDims(const ConvertContext& c, const TensorType& t,
                                                absl::string_view what) {
  std::optional<std::vector<int64_t>> s = StaticShape(t->shape);
  if (!s)
    return c.Unsupported(absl::StrCat(what, " has shape ", ShapeToString(t->shape),
                                      "; this conversion needs static dims (bind them with "
                                      "ImportOptions::input_shapes)"));
  return *s;
}

absl::StatusOr<int64_t> NormAxis(const ConvertContext& c, int64_t axis, int64_t rank,
                                 absl::string_view what) {
  if (axis < -rank || axis >= rank)
    return c.Invalid(absl::StrCat(what, " ", axis, " is out of range for rank ", rank));
  return axis < 0 ? axis + rank : axis;
}

int64_t Product(const std::vector<int64_t>& v, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < std::min(end, v.size()); ++i) p *= v[i];
  return p;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

std::vector<int64_t> IotaInts(int64_t lo, int64_t hi) {
  std::vector<int64_t> v;
  for (int64_t i = lo; i < hi; ++i) v.push_back(i);
  return v;
}

bool WantsOutput(const ConvertContext& c, int i) {
  return c.node().output_size() > i && !c.node().output(i).empty();
}

absl::Status CheckConstantSize(const ConvertContext& c, const std::vector<int64_t>& shape,
                               absl::string_view what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return c.Invalid(absl::StrCat(what, " has a negative dim"));
    if (d != 0 && n > kMaxConstantElements / d) n = kMaxConstantElements + 1;
    else n *= d;
  }
  if (n > kMaxConstantElements)
    return c.Unsupported(absl::StrCat(what, " would be a constant of more than ",
                                      kMaxConstantElements, " elements"));
  return absl::OkStatus();
}

void StoreDouble(HostTensor& t, int64_t i, double v) {
  char* p = static_cast<char*>(t.mutable_raw_data());
  const DataType d = t.dtype();
  const size_t u = static_cast<size_t>(i);
  switch (d.code()) {
    case DTypeCode::kFloat:
      if (d.bits() == 32) reinterpret_cast<float*>(p)[u] = static_cast<float>(v);
      else if (d.bits() == 64) reinterpret_cast<double*>(p)[u] = v;
      else reinterpret_cast<uint16_t*>(p)[u] = FloatToHalf(static_cast<float>(v));
      return;
    case DTypeCode::kBFloat:
      reinterpret_cast<uint16_t*>(p)[u] = FloatToBFloat16(static_cast<float>(v));
      return;
    case DTypeCode::kBool: reinterpret_cast<uint8_t*>(p)[u] = v != 0; return;
    case DTypeCode::kInt:
    case DTypeCode::kUInt: {
      const int64_t iv = static_cast<int64_t>(v);
      switch (d.bits()) {
        case 8: reinterpret_cast<uint8_t*>(p)[u] = static_cast<uint8_t>(iv); return;
        case 16: reinterpret_cast<uint16_t*>(p)[u] = static_cast<uint16_t>(iv); return;
        case 32: reinterpret_cast<uint32_t*>(p)[u] = static_cast<uint32_t>(iv); return;
        default: reinterpret_cast<uint64_t*>(p)[u] = static_cast<uint64_t>(iv); return;
      }
    }
    default: return;
  }
}

absl::StatusOr<Expr> ConstOf(ConvertContext& c, DataType dtype, std::vector<int64_t> shape,
                             const std::vector<double>& values) {
  KILN_RETURN_IF_ERROR(CheckConstantSize(c, shape, "a computed value"));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> t, HostTensor::Create(dtype, std::move(shape)));
  if (static_cast<int64_t>(values.size()) != t->num_elements())
    return absl::InternalError("constant values do not match the shape");
  for (size_t i = 0; i < values.size(); ++i) StoreDouble(*t, static_cast<int64_t>(i), values[i]);
  return c.Const(t);
}

absl::StatusOr<Expr> ConstI64(ConvertContext& c, std::vector<int64_t> shape,
                              const std::vector<int64_t>& values) {
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> t,
                        HostTensor::FromVector(DataType::Int(64), std::move(shape), values));
  return c.Const(t);
}

absl::StatusOr<Expr> Reshape(ConvertContext& c, Expr x, std::vector<int64_t> newshape,
                             bool allowzero) {
  auto a = NewAttrs<ReshapeAttrs>();
  a->newshape = std::move(newshape);
  a->allowzero = allowzero;
  return c.Call("reshape", {std::move(x)}, a);
}

absl::StatusOr<Expr> Transpose(ConvertContext& c, Expr x, std::vector<int64_t> perm) {
  auto a = NewAttrs<TransposeAttrs>();
  a->axes = std::move(perm);
  return c.Call("transpose", {std::move(x)}, a);
}

absl::StatusOr<Expr> ExpandDims(ConvertContext& c, Expr x, int64_t axis, int64_t n) {
  auto a = NewAttrs<ExpandDimsAttrs>();
  a->axis = axis;
  a->num_newaxis = n;
  return c.Call("expand_dims", {std::move(x)}, a);
}

absl::StatusOr<Expr> Squeeze(ConvertContext& c, Expr x, std::vector<int64_t> axes) {
  auto a = NewAttrs<SqueezeAttrs>();
  a->axis = std::move(axes);
  return c.Call("squeeze", {std::move(x)}, a);
}

absl::StatusOr<Expr> BroadcastTo(ConvertContext& c, Expr x, std::vector<int64_t> shape) {
  auto a = NewAttrs<BroadcastToAttrs>();
  a->shape = std::move(shape);
  return c.Call("broadcast_to", {std::move(x)}, a);
}

absl::StatusOr<Expr> Cast(ConvertContext& c, Expr x, DataType dtype) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  if (t->dtype == dtype) return x;
  auto a = NewAttrs<CastAttrs>();
  a->dtype = dtype;
  return c.Call("cast", {std::move(x)}, a);
}

absl::StatusOr<Expr> SliceAxis(ConvertContext& c, Expr x, int64_t axis, int64_t begin,
                               int64_t end, int64_t step) {
  auto a = NewAttrs<StridedSliceAttrs>();
  a->begin = {begin};
  a->end = {end};
  a->strides = std::vector<int64_t>{step};
  a->axes = std::vector<int64_t>{axis};
  return c.Call("strided_slice", {std::move(x)}, a);
}

absl::StatusOr<Expr> Take(ConvertContext& c, Expr data, Expr indices, std::optional<int64_t> axis) {
  auto a = NewAttrs<TakeAttrs>();
  a->axis = axis;
  a->mode = "fast";
  return c.Call("take", {std::move(data), std::move(indices)}, a);
}

absl::StatusOr<Expr> NormalizeIndices(ConvertContext& c, Expr idx, Expr n) {
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(DataType::Int(64), 0));
  KILN_ASSIGN_OR_RETURN(Expr neg, c.Call("less", {idx, zero}));
  KILN_ASSIGN_OR_RETURN(Expr wrapped, c.Call("add", {idx, std::move(n)}));
  return c.Call("where", {std::move(neg), std::move(wrapped), idx});
}

absl::StatusOr<Expr> Reduce(ConvertContext& c, absl::string_view op, Expr x,
                            std::vector<int64_t> axes, bool keepdims) {
  auto a = NewAttrs<ReduceAttrs>();
  a->axis = std::move(axes);
  a->keepdims = keepdims;
  return c.Call(op, {std::move(x)}, a);
}

absl::StatusOr<Expr> Binary(ConvertContext& c, absl::string_view op, Expr a, Expr b) {
  return c.Call(op, {std::move(a), std::move(b)});
}

Expr Typed(Expr e, const Type& t) {
  e->set_checked_type(t);
  return e;
}

Var TypedVar(const std::string& name, const Type& t) {
  Var v = MakeVar(name, t);
  v->set_checked_type(t);
  return v;
}

}  // namespace kiln::onnx_frontend::cvt
