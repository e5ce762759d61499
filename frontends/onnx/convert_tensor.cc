// ONNX tensor operators -> graph IR: constants, shape changes, joining and
// cutting, padding, depth/space. (Gathers, scatters, masks and scans are in
// convert_tensor_index.cc, Resize in convert_tensor_resize.cc; all three are
// registered by RegisterTensorConverters.)
//
// Each converter honours every attribute of every opset form it registers
// (attributes that became inputs are read from wherever the model's opset puts
// them). Values that must be known at import time (a Reshape's shape, a
// Slice's starts, Pad's pads, ...) come from ctx.ConstantInts / ConstantInput;
// when they depend on a graph input, the kNeedsConstantPayload status is
// returned unchanged so that a caller can freeze that input and retry.
//
// Compositions (all exact):
//   Tile         reshape [.., 1, d, ..] -> broadcast_to [.., r, d, ..] -> reshape
//   DepthToSpace / SpaceToDepth   reshape -> transpose -> reshape
//   Pad          nn.pad for the positive pads, strided_slice for negative ones
//   Shape, Size, EyeLike, Range, ConstantOfShape   constants at import time
// Reshape, Expand, ConstantOfShape and Slice with shape-like inputs known only
// at run time, and Shape of symbolic dims, use the dyn.* forms of
// convert_dynamic.cc instead (the model then compiles for the VM).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// ---- constants ----------------------------------------------------------------

Outs ConvertConstant(ConvertContext& c) {
  if (c.HasAttr("value")) {
    KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> t, c.AttrTensor("value"));
    KILN_ASSIGN_OR_RETURN(Expr e, c.Const(t));
    return std::vector<Expr>{e};
  }
  if (c.HasAttr("sparse_value"))
    return c.Unsupported("sparse_value: kiln has no sparse tensors");
  if (c.HasAttr("value_string") || c.HasAttr("value_strings"))
    return c.Unsupported("string constants: kiln tensors hold numbers only");
  if (c.HasAttr("value_float")) {
    KILN_ASSIGN_OR_RETURN(double v, c.AttrFloat("value_float", 0));
    KILN_ASSIGN_OR_RETURN(Expr e, ConstOf(c, DataType::Float(32), {}, {v}));
    return std::vector<Expr>{e};
  }
  if (c.HasAttr("value_floats")) {
    KILN_ASSIGN_OR_RETURN(std::vector<double> v, c.AttrFloats("value_floats"));
    KILN_ASSIGN_OR_RETURN(Expr e,
                          ConstOf(c, DataType::Float(32), {static_cast<int64_t>(v.size())}, v));
    return std::vector<Expr>{e};
  }
  if (c.HasAttr("value_int")) {
    KILN_ASSIGN_OR_RETURN(int64_t v, c.AttrInt("value_int", 0));
    KILN_ASSIGN_OR_RETURN(Expr e, ConstI64(c, {}, {v}));
    return std::vector<Expr>{e};
  }
  if (c.HasAttr("value_ints")) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> v, c.AttrInts("value_ints"));
    KILN_ASSIGN_OR_RETURN(Expr e, ConstI64(c, {static_cast<int64_t>(v.size())}, v));
    return std::vector<Expr>{e};
  }
  return c.Invalid("Constant needs one of the attributes value, value_float(s), value_int(s)");
}

Outs ConvertIdentity(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  return std::vector<Expr>{x};
}

// Shape (start/end from opset 15) as an int64 constant.
Outs ConvertShape(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  const int64_t r = t->ndim();
  int64_t start = 0, end = r;
  if (c.opset() >= 15) {
    KILN_ASSIGN_OR_RETURN(start, c.AttrInt("start", 0));
    KILN_ASSIGN_OR_RETURN(end, c.AttrInt("end", r));
  }
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    const Dim& d = t->shape[static_cast<size_t>(i)];
    if (!d.is_static()) {
      // Read at run time (the model then runs on the VM).
      KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
      KILN_ASSIGN_OR_RETURN(Expr s, DynamicShapeOf(c, x, start, std::max(start, end)));
      return std::vector<Expr>{s};
    }
    dims.push_back(d.value());
  }
  KILN_ASSIGN_OR_RETURN(Expr e, ConstI64(c, {static_cast<int64_t>(dims.size())}, dims));
  return std::vector<Expr>{e};
}

Outs ConvertSize(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, t, "the input"));
  KILN_ASSIGN_OR_RETURN(Expr e, ConstI64(c, {}, {Product(dims)}));
  return std::vector<Expr>{e};
}

Outs ConvertConstantOfShape(ConvertContext& c) {
  absl::StatusOr<std::optional<std::vector<int64_t>>> shape_or = c.ConstantInts(0);
  if (!shape_or.ok() && NeedsValue(shape_or.status())) {
    Ref<const HostTensor> v;
    if (c.HasAttr("value")) {
      KILN_ASSIGN_OR_RETURN(v, c.AttrTensor("value"));
      if (v->num_elements() != 1)
        return c.Invalid(absl::StrCat("value must hold one element; it holds ", v->num_elements()));
    }
    KILN_ASSIGN_OR_RETURN(Expr y, DynamicConstantOfShape(c, v, shape_or.status()));
    return std::vector<Expr>{y};
  }
  if (!shape_or.ok()) return shape_or.status();
  std::optional<std::vector<int64_t>> shape = *std::move(shape_or);
  if (!shape) return c.Invalid("input 0 (shape) is required");
  for (int64_t d : *shape)
    if (d < 0) return c.Invalid(absl::StrCat("shape [", absl::StrJoin(*shape, ", "), "] has a negative dim"));
  KILN_RETURN_IF_ERROR(CheckConstantSize(c, *shape, "ConstantOfShape's output"));
  Ref<const HostTensor> value;
  if (c.HasAttr("value")) {
    KILN_ASSIGN_OR_RETURN(value, c.AttrTensor("value"));
    if (value->num_elements() != 1)
      return c.Invalid(absl::StrCat("value must hold one element; it holds ", value->num_elements()));
  }
  const DataType dtype = value ? value->dtype() : DataType::Float(32);
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> t, HostTensor::Create(dtype, *shape));
  if (value) {
    const size_t es = value->nbytes();
    char* p = static_cast<char*>(t->mutable_raw_data());
    for (int64_t i = 0; i < t->num_elements(); ++i)
      std::memcpy(p + static_cast<size_t>(i) * es, value->raw_data(), es);
  }
  KILN_ASSIGN_OR_RETURN(Expr e, c.Const(t));
  return std::vector<Expr>{e};
}

// Range(start, limit, delta) of constant scalars, computed at import.
// HannWindow, HammingWindow, BlackmanWindow (opset 17): w[n] = a0 - a1 cos(2 pi n / N)
// + a2 cos(4 pi n / N) for n in [0, size), N = size (periodic) or size - 1,
// computed in float32 from dyn.arange (size is usually a run-time input).
Outs ConvertWindow(ConvertContext& c, double a0, double a1, double a2) {
  KILN_ASSIGN_OR_RETURN(TensorType st, c.InputType(0));
  if (st->ndim() != 0 || (!st->dtype.is_int() && !st->dtype.is_uint()))
    return c.Invalid(absl::StrCat("size must be a 0-D integer tensor; it is ", TypeToString(Type(st))));
  KILN_ASSIGN_OR_RETURN(int64_t out_type, c.AttrInt("output_datatype", 1));
  KILN_ASSIGN_OR_RETURN(DataType out_dt, FromOnnxDataType(static_cast<int32_t>(out_type)));
  if (!out_dt.is_float() && !out_dt.is_int() && !out_dt.is_uint())
    return c.Invalid(absl::StrCat("output_datatype ", out_type, " is not a number type"));
  KILN_ASSIGN_OR_RETURN(int64_t periodic, c.AttrInt("periodic", 1));
  const DataType f32 = DataType::Float(32);
  KILN_ASSIGN_OR_RETURN(Expr size, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr n, Cast(c, size, f32));
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(f32, 0));
  KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(f32, 1));
  KILN_ASSIGN_OR_RETURN(Expr idx, c.Call("dyn.arange", {zero, n, one}));
  Expr denom = n;
  if (periodic == 0) {
    KILN_ASSIGN_OR_RETURN(denom, c.Call("subtract", {n, one}));
  }
  KILN_ASSIGN_OR_RETURN(Expr two_pi, c.ScalarConst(f32, 2 * M_PI));
  KILN_ASSIGN_OR_RETURN(Expr step, c.Call("divide", {two_pi, denom}));
  KILN_ASSIGN_OR_RETURN(Expr x, c.Call("multiply", {idx, step}));
  KILN_ASSIGN_OR_RETURN(Expr ca0, c.ScalarConst(f32, a0));
  KILN_ASSIGN_OR_RETURN(Expr ca1, c.ScalarConst(f32, a1));
  KILN_ASSIGN_OR_RETURN(Expr cos1, c.Call("cos", {x}));
  KILN_ASSIGN_OR_RETURN(Expr t1, c.Call("multiply", {ca1, cos1}));
  KILN_ASSIGN_OR_RETURN(Expr w, c.Call("subtract", {ca0, t1}));
  if (a2 != 0) {
    KILN_ASSIGN_OR_RETURN(Expr two, c.ScalarConst(f32, 2));
    KILN_ASSIGN_OR_RETURN(Expr x2, c.Call("multiply", {x, two}));
    KILN_ASSIGN_OR_RETURN(Expr cos2, c.Call("cos", {x2}));
    KILN_ASSIGN_OR_RETURN(Expr ca2, c.ScalarConst(f32, a2));
    KILN_ASSIGN_OR_RETURN(Expr t2, c.Call("multiply", {ca2, cos2}));
    KILN_ASSIGN_OR_RETURN(w, c.Call("add", {w, t2}));
  }
  KILN_ASSIGN_OR_RETURN(Expr y, Cast(c, w, out_dt));
  return std::vector<Expr>{y};
}

Outs ConvertRange(ConvertContext& c) {
  Ref<const HostTensor> in[3];
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Ref<const HostTensor>> v = c.ConstantInput(i);
    if (!v.ok() && NeedsValue(v.status())) {
      KILN_ASSIGN_OR_RETURN(Expr y, DynamicRange(c));
      return std::vector<Expr>{y};
    }
    KILN_ASSIGN_OR_RETURN(in[i], std::move(v));
    if (in[i]->num_elements() != 1)
      return c.Invalid(absl::StrCat("input ", i, " must be a scalar; it has ",
                                    in[i]->num_elements(), " elements"));
  }
  const DataType dtype = in[0]->dtype();
  constexpr int64_t kMaxElements = int64_t{1} << 26;  // a constant of at most 512 MB
  std::vector<double> values;
  if (dtype.is_float()) {
    const double start = in[0]->GetAsDouble(0), limit = in[1]->GetAsDouble(0),
                 delta = in[2]->GetAsDouble(0);
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
      return c.Invalid("delta must be nonzero and start, limit, delta finite");
    const double n = std::max(std::ceil((limit - start) / delta), 0.0);
    if (n > static_cast<double>(kMaxElements))
      return c.Unsupported(absl::StrCat("a range of ", n, " elements (folded to a constant, at most ",
                                        kMaxElements, ")"));
    for (int64_t i = 0; i < static_cast<int64_t>(n); ++i)
      values.push_back(start + static_cast<double>(i) * delta);
    KILN_ASSIGN_OR_RETURN(Expr e, ConstOf(c, dtype, {static_cast<int64_t>(values.size())}, values));
    return std::vector<Expr>{e};
  }
  const int64_t start = in[0]->GetAsInt64(0), limit = in[1]->GetAsInt64(0),
                delta = in[2]->GetAsInt64(0);
  if (delta == 0) return c.Invalid("delta must be nonzero");
  const __int128 span = static_cast<__int128>(limit) - start;
  __int128 n = span / delta;
  if (n * delta != span && (span > 0) == (delta > 0)) ++n;  // ceil of a positive quotient
  if (n < 0) n = 0;
  if (n > kMaxElements)
    return c.Unsupported(absl::StrCat("a range of more than ", kMaxElements,
                                      " elements (folded to a constant)"));
  std::vector<int64_t> ints;
  for (int64_t i = 0; i < static_cast<int64_t>(n); ++i) ints.push_back(start + i * delta);
  if (dtype == DataType::Int(64)) {
    KILN_ASSIGN_OR_RETURN(Expr e, ConstI64(c, {static_cast<int64_t>(ints.size())}, ints));
    return std::vector<Expr>{e};
  }
  for (int64_t v : ints) values.push_back(static_cast<double>(v));  // exact below 64 bits
  KILN_ASSIGN_OR_RETURN(Expr e, ConstOf(c, dtype, {static_cast<int64_t>(values.size())}, values));
  return std::vector<Expr>{e};
}

Outs ConvertEyeLike(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  if (t->ndim() != 2) return c.Invalid(absl::StrCat("input must be 2-D; got ", ShapeToString(t->shape)));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, t, "the input"));
  DataType dtype = t->dtype;
  if (c.HasAttr("dtype")) {
    KILN_ASSIGN_OR_RETURN(int64_t onnx_dtype, c.AttrInt("dtype", 0));
    KILN_ASSIGN_OR_RETURN(dtype, FromOnnxDataType(static_cast<int32_t>(onnx_dtype)));
  }
  KILN_ASSIGN_OR_RETURN(int64_t k, c.AttrInt("k", 0));
  KILN_RETURN_IF_ERROR(CheckConstantSize(c, dims, "EyeLike's output"));
  std::vector<double> v(static_cast<size_t>(dims[0] * dims[1]), 0.0);
  for (int64_t i = 0; i < dims[0]; ++i) {
    const int64_t j = i + k;
    if (j >= 0 && j < dims[1]) v[static_cast<size_t>(i * dims[1] + j)] = 1.0;
  }
  KILN_ASSIGN_OR_RETURN(Expr e, ConstOf(c, dtype, dims, v));
  return std::vector<Expr>{e};
}

// ---- shape changes --------------------------------------------------------------

Outs ConvertReshape(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  std::vector<int64_t> shape;
  if (c.opset() < 5) {
    KILN_ASSIGN_OR_RETURN(shape, c.AttrInts("shape"));
  }
  int64_t allowzero = 0;
  if (c.opset() >= 14) {
    KILN_ASSIGN_OR_RETURN(allowzero, c.AttrInt("allowzero", 0));
  }
  if (c.opset() >= 5) {
    absl::StatusOr<std::optional<std::vector<int64_t>>> s = c.ConstantInts(1);
    if (!s.ok() && NeedsValue(s.status())) {
      KILN_ASSIGN_OR_RETURN(Expr y, DynamicReshape(c, x, allowzero != 0, s.status()));
      return std::vector<Expr>{y};
    }
    if (!s.ok()) return s.status();
    if (!*s) return c.Invalid("input 1 (shape) is required");
    shape = **s;
  }
  int minus_ones = 0;
  bool zeros = false;
  for (int64_t d : shape) {
    if (d < -1) return c.Invalid(absl::StrCat("shape entry ", d, " is invalid (must be >= -1)"));
    minus_ones += d == -1;
    zeros = zeros || d == 0;
  }
  if (minus_ones > 1) return c.Invalid("shape has more than one -1");
  if (allowzero != 0 && zeros && minus_ones > 0)
    return c.Invalid("with allowzero=1, shape may not hold both 0 and -1");
  KILN_ASSIGN_OR_RETURN(Expr y, Reshape(c, x, shape, allowzero != 0));
  return std::vector<Expr>{y};
}

Outs ConvertFlatten(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  const int64_t r = t->ndim();
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", 1));
  if (axis < -r || axis > r) return c.Invalid(absl::StrCat("axis ", axis, " is out of range for rank ", r));
  if (axis < 0) axis += r;
  // [prod(dims[:axis]), prod(dims[axis:])], with -1 for whichever side is not static.
  auto side = [&](int64_t lo, int64_t hi) -> std::optional<int64_t> {
    int64_t p = 1;
    for (int64_t i = lo; i < hi; ++i) {
      const Dim& d = t->shape[static_cast<size_t>(i)];
      if (!d.is_static()) return std::nullopt;
      p *= d.value();
    }
    return p;
  };
  const std::optional<int64_t> outer = side(0, axis), inner = side(axis, r);
  std::vector<int64_t> ns;
  if (outer && inner) ns = {*outer, *inner};
  else if (inner && *inner != 0) ns = {-1, *inner};
  else if (outer && *outer != 0) ns = {*outer, -1};
  else if (axis == 1 && r == 2) ns = {0, 0};
  else
    return c.Unsupported(absl::StrCat("Flatten of ", ShapeToString(t->shape), " at axis ", axis,
                                      " needs static dims on one side of the axis"));
  KILN_ASSIGN_OR_RETURN(Expr y, Reshape(c, x, ns, /*allowzero=*/outer && inner));
  return std::vector<Expr>{y};
}

Outs ConvertTranspose(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  auto a = NewAttrs<TransposeAttrs>();
  if (c.HasAttr("perm")) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, c.AttrInts("perm"));
    a->axes = perm;
  }
  KILN_ASSIGN_OR_RETURN(Expr y, c.Call("transpose", {x}, a));
  return std::vector<Expr>{y};
}

Outs ConvertSqueeze(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  std::optional<std::vector<int64_t>> axes;
  if (c.opset() >= 13) {
    absl::StatusOr<std::optional<std::vector<int64_t>>> a = c.ConstantInts(1);
    if (!a.ok() && NeedsValue(a.status())) {
      KILN_ASSIGN_OR_RETURN(Expr y, DynamicSqueeze(c, x, /*unsqueeze=*/false, a.status()));
      return std::vector<Expr>{y};
    }
    KILN_ASSIGN_OR_RETURN(axes, std::move(a));
  } else if (c.HasAttr("axes")) {
    KILN_ASSIGN_OR_RETURN(axes, c.AttrInts("axes"));
  }
  auto a = NewAttrs<SqueezeAttrs>();
  if (axes) {
    std::vector<int64_t> norm;
    for (int64_t ax : *axes) {
      KILN_ASSIGN_OR_RETURN(int64_t n, NormAxis(c, ax, t->ndim(), "axes entry"));
      if (std::find(norm.begin(), norm.end(), n) != norm.end())
        return c.Invalid(absl::StrCat("axes lists axis ", n, " twice"));
      const Dim& d = t->shape[static_cast<size_t>(n)];
      if (d.is_static() && d.value() != 1)
        return c.Invalid(absl::StrCat("cannot squeeze axis ", n, " of ", ShapeToString(t->shape),
                                      ": its extent is not 1"));
      norm.push_back(n);
    }
    a->axis = norm;
  }
  KILN_ASSIGN_OR_RETURN(Expr y, c.Call("squeeze", {x}, a));
  return std::vector<Expr>{y};
}

Outs ConvertUnsqueeze(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  std::vector<int64_t> axes;
  if (c.opset() >= 13) {
    absl::StatusOr<std::optional<std::vector<int64_t>>> a_or = c.ConstantInts(1);
    if (!a_or.ok() && NeedsValue(a_or.status())) {
      KILN_ASSIGN_OR_RETURN(Expr y, DynamicSqueeze(c, x, /*unsqueeze=*/true, a_or.status()));
      return std::vector<Expr>{y};
    }
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> a, std::move(a_or));
    if (!a) return c.Invalid("input 1 (axes) is required");
    axes = *a;
  } else {
    KILN_ASSIGN_OR_RETURN(axes, c.AttrInts("axes"));
  }
  const int64_t out_rank = t->ndim() + static_cast<int64_t>(axes.size());
  std::vector<int64_t> norm;
  for (int64_t ax : axes) {
    KILN_ASSIGN_OR_RETURN(int64_t n, NormAxis(c, ax, out_rank, "axes entry"));
    if (std::find(norm.begin(), norm.end(), n) != norm.end())
      return c.Invalid(absl::StrCat("axes lists axis ", n, " twice"));
    norm.push_back(n);
  }
  std::sort(norm.begin(), norm.end());
  // Inserting in ascending order puts every new axis at its output position.
  Expr y = x;
  for (int64_t ax : norm) {
    KILN_ASSIGN_OR_RETURN(y, ExpandDims(c, y, ax));
  }
  return std::vector<Expr>{y};
}

// NumPy broadcast of two static shapes.
absl::StatusOr<std::vector<int64_t>> BroadcastShapes(const ConvertContext& c,
                                                     const std::vector<int64_t>& a,
                                                     const std::vector<int64_t>& b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      return c.Invalid(absl::StrCat("shapes [", absl::StrJoin(a, ", "), "] and [",
                                    absl::StrJoin(b, ", "), "] do not broadcast"));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Outs ConvertExpand(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  absl::StatusOr<std::optional<std::vector<int64_t>>> shape_or = c.ConstantInts(1);
  if ((!shape_or.ok() && NeedsValue(shape_or.status())) ||
      (shape_or.ok() && !ShapeIsStatic(t->shape))) {
    KILN_ASSIGN_OR_RETURN(Expr y, DynamicExpand(c, x, shape_or.status()));
    return std::vector<Expr>{y};
  }
  if (!shape_or.ok()) return shape_or.status();
  std::optional<std::vector<int64_t>> shape = *std::move(shape_or);
  if (!shape) return c.Invalid("input 1 (shape) is required");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, t, "the input"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> out, BroadcastShapes(c, dims, *shape));
  if (out == dims) return std::vector<Expr>{x};
  KILN_ASSIGN_OR_RETURN(Expr y, BroadcastTo(c, x, out));
  return std::vector<Expr>{y};
}

// Tile: reshape to interleave a unit axis before each repeated axis,
// broadcast the unit axes to the repeats, merge the pairs.
Outs ConvertTile(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  const int64_t r = t->ndim();
  std::vector<int64_t> repeats;
  if (c.opset() < 6) {  // Tile-1: inputs (input, tiles, axis), both scalars
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> tiles, c.ConstantInts(1));
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axis, c.ConstantInts(2));
    if (!tiles || !axis || tiles->size() != 1 || axis->size() != 1)
      return c.Invalid("Tile-1 needs scalar inputs tiles and axis");
    KILN_ASSIGN_OR_RETURN(int64_t ax, NormAxis(c, (*axis)[0], r));
    repeats.assign(static_cast<size_t>(r), 1);
    repeats[static_cast<size_t>(ax)] = (*tiles)[0];
  } else {
    absl::StatusOr<std::optional<std::vector<int64_t>>> rep_or = c.ConstantInts(1);
    if (!rep_or.ok() && NeedsValue(rep_or.status())) {
      KILN_ASSIGN_OR_RETURN(Expr y, DynamicTile(c, x, rep_or.status()));
      return std::vector<Expr>{y};
    }
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> rep, std::move(rep_or));
    if (!rep) return c.Invalid("input 1 (repeats) is required");
    repeats = *rep;
  }
  if (static_cast<int64_t>(repeats.size()) != r)
    return c.Invalid(absl::StrCat("repeats has ", repeats.size(), " entries; the input has rank ", r));
  for (int64_t v : repeats)
    if (v < 0) return c.Invalid(absl::StrCat("repeats [", absl::StrJoin(repeats, ", "), "] has a negative entry"));
  if (std::all_of(repeats.begin(), repeats.end(), [](int64_t v) { return v == 1; }))
    return std::vector<Expr>{x};
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, t, "the input"));
  std::vector<int64_t> split, bcast, merged;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (repeats[i] != 1) {
      split.push_back(1);
      bcast.push_back(repeats[i]);
    }
    split.push_back(dims[i]);
    bcast.push_back(dims[i]);
    if (static_cast<__int128>(dims[i]) * repeats[i] > (int64_t{1} << 62))
      return c.Invalid(absl::StrCat("repeats [", absl::StrJoin(repeats, ", "), "] overflow the shape"));
    merged.push_back(dims[i] * repeats[i]);
  }
  KILN_ASSIGN_OR_RETURN(Expr y, Reshape(c, x, split, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(y, BroadcastTo(c, y, bcast));
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, merged, /*allowzero=*/true));
  return std::vector<Expr>{y};
}

// ---- joining and cutting ------------------------------------------------------------

Outs ConvertConcat(ConvertContext& c) {
  if (c.opset() >= 4) {  // Concat-1 defaults axis to 1; later opsets require it
    KILN_ASSIGN_OR_RETURN(const onnx::AttributeProto* attr, c.RequiredAttr("axis"));
    (void)attr;
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", 1));
  std::vector<Expr> fields;
  std::vector<Type> types;
  int64_t rank = -1;
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (!c.HasInput(i)) continue;
    KILN_ASSIGN_OR_RETURN(Expr e, c.Input(i));
    KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(i));
    rank = t->ndim();
    fields.push_back(e);
    types.push_back(t);
  }
  if (fields.empty()) return c.Invalid("Concat needs at least one input");
  KILN_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, rank));
  if (fields.size() == 1) return std::vector<Expr>{fields[0]};
  KILN_ASSIGN_OR_RETURN(Tuple tup, MakeTuple(fields));
  tup->set_checked_type(MakeTupleType(types));
  auto a = NewAttrs<ConcatenateAttrs>();
  a->axis = axis;
  KILN_ASSIGN_OR_RETURN(Expr y, c.Call("concatenate", {Expr(tup)}, a));
  return std::vector<Expr>{y};
}

Outs ConvertSplit(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", 0));
  KILN_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, t->ndim()));
  const int n_out = c.node().output_size();
  if (n_out < 1) return c.Invalid("Split needs at least one output");
  std::optional<std::vector<int64_t>> split;
  if (c.opset() >= 13 || (c.opset() < 2 && c.HasInput(1))) {
    absl::StatusOr<std::optional<std::vector<int64_t>>> s = c.ConstantInts(1);
    if (!s.ok() && NeedsValue(s.status())) return DynamicSplit(c, x, axis, n_out, s.status());
    KILN_ASSIGN_OR_RETURN(split, std::move(s));
  } else if (c.HasAttr("split")) {
    KILN_ASSIGN_OR_RETURN(split, c.AttrInts("split"));
  }
  const Dim& extent = t->shape[static_cast<size_t>(axis)];
  auto a = NewAttrs<SplitAttrs>();
  a->axis = axis;
  if (split) {
    if (static_cast<int>(split->size()) != n_out)
      return c.Invalid(absl::StrCat("split has ", split->size(), " entries for ", n_out, " outputs"));
    int64_t sum = 0;
    for (int64_t s : *split) {
      if (s < 0) return c.Invalid(absl::StrCat("split [", absl::StrJoin(*split, ", "), "] has a negative entry"));
      sum += s;
    }
    if (extent.is_static() && sum != extent.value())
      return c.Invalid(absl::StrCat("split [", absl::StrJoin(*split, ", "), "] sums to ", sum,
                                    "; axis ", axis, " has extent ", extent.value()));
    int64_t at = 0;
    for (size_t i = 0; i + 1 < split->size(); ++i) a->indices.push_back(at += (*split)[i]);
  } else {
    int64_t num = n_out;
    if (c.opset() >= 18 && c.HasAttr("num_outputs")) {
      KILN_ASSIGN_OR_RETURN(num, c.AttrInt("num_outputs", n_out));
      if (num != n_out) return c.Invalid(absl::StrCat("num_outputs is ", num, " but the node has ", n_out, " outputs"));
    }
    if (extent.is_static() && extent.value() % num != 0) {
      if (c.opset() < 18)
        return c.Invalid(absl::StrCat("axis ", axis, " of extent ", extent.value(),
                                      " does not split into ", num, " equal parts"));
      // Opset 18: parts of ceil(n / num), the last one smaller.
      const int64_t chunk = (extent.value() + num - 1) / num;
      for (int64_t i = 1; i < num; ++i) a->indices.push_back(std::min(i * chunk, extent.value()));
    } else {
      a->sections = num;
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr tup, c.Call("split", {x}, a));
  std::vector<Expr> outs;
  for (int i = 0; i < n_out; ++i) {
    KILN_ASSIGN_OR_RETURN(Expr e, c.TupleGet(tup, i));
    outs.push_back(e);
  }
  return outs;
}

Outs ConvertSlice(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  const int64_t r = t->ndim();
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    KILN_ASSIGN_OR_RETURN(starts, c.AttrInts("starts"));
    KILN_ASSIGN_OR_RETURN(ends, c.AttrInts("ends"));
    KILN_ASSIGN_OR_RETURN(axes, c.AttrInts("axes"));
  } else {
    // Starts, ends or steps given at run time: dyn.strided_slice.
    for (int i : {1, 2, 4}) {
      if (!c.HasInput(i)) continue;
      absl::StatusOr<std::optional<std::vector<int64_t>>> v = c.ConstantInts(i);
      if (!v.ok() && NeedsValue(v.status())) {
        KILN_ASSIGN_OR_RETURN(Expr y, DynamicSlice(c, x, v.status()));
        return std::vector<Expr>{y};
      }
    }
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> s, c.ConstantInts(1));
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> e, c.ConstantInts(2));
    if (!s || !e) return c.Invalid("inputs 1 (starts) and 2 (ends) are required");
    starts = *s;
    ends = *e;
    if (c.HasInput(3)) {
      KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> a, c.ConstantInts(3));
      axes = a.value_or(std::vector<int64_t>{});
    }
    if (c.HasInput(4)) {
      KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> st, c.ConstantInts(4));
      steps = st.value_or(std::vector<int64_t>{});
    }
  }
  if (starts.size() != ends.size())
    return c.Invalid(absl::StrCat("starts has ", starts.size(), " entries, ends ", ends.size()));
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return c.Invalid("starts, ends, axes and steps must have the same length");
  std::vector<int64_t> norm;
  for (size_t i = 0; i < axes.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t n, NormAxis(c, axes[i], r, "axes entry"));
    if (std::find(norm.begin(), norm.end(), n) != norm.end())
      return c.Invalid(absl::StrCat("axes lists axis ", n, " twice"));
    if (steps[i] == 0) return c.Invalid("steps must be nonzero");
    norm.push_back(n);
  }
  if (norm.empty()) return std::vector<Expr>{x};
  auto a = NewAttrs<StridedSliceAttrs>();
  a->begin = starts;
  a->end = ends;
  a->strides = steps;
  a->axes = norm;
  KILN_ASSIGN_OR_RETURN(Expr y, c.Call("strided_slice", {x}, a));
  return std::vector<Expr>{y};
}

// ---- padding ----------------------------------------------------------------

Outs ConvertPad(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  const int64_t r = t->ndim();
  KILN_ASSIGN_OR_RETURN(std::string mode, c.AttrString("mode", "constant"));
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return c.Unsupported(absl::StrCat("mode \"", mode, "\" (kiln pads constant, reflect, edge)"));
  std::vector<int64_t> pads;
  absl::StatusOr<std::optional<std::vector<int64_t>>> pads_or = std::nullopt;
  Expr value;
  if (c.opset() < 11) {
    KILN_ASSIGN_OR_RETURN(pads, c.AttrInts(c.opset() < 2 ? "paddings" : "pads"));
    KILN_ASSIGN_OR_RETURN(double v, c.AttrFloat("value", 0.0));
    KILN_ASSIGN_OR_RETURN(value, c.ScalarConst(t->dtype, v));
  } else {
    pads_or = c.ConstantInts(1);
    if (!pads_or.ok() && !NeedsValue(pads_or.status())) return pads_or.status();
    if (pads_or.ok()) {
      if (!*pads_or) return c.Invalid("input 1 (pads) is required");
      pads = **pads_or;
    }
    if (c.HasInput(2)) {
      KILN_ASSIGN_OR_RETURN(value, c.Input(2));
      KILN_ASSIGN_OR_RETURN(TensorType vt, c.InputType(2));
      if (vt->ndim() != 0) {
        KILN_ASSIGN_OR_RETURN(value, Reshape(c, value, {}));
      }
    } else {
      KILN_ASSIGN_OR_RETURN(value, c.ScalarConst(t->dtype, 0));
    }
  }
  std::vector<int64_t> axes;
  if (c.opset() >= 18 && c.HasInput(3)) {
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> a, c.ConstantInts(3));
    for (int64_t ax : a.value_or(std::vector<int64_t>{})) {
      KILN_ASSIGN_OR_RETURN(int64_t n, NormAxis(c, ax, r, "axes entry"));
      axes.push_back(n);
    }
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  const size_t na = axes.size();
  if (!pads_or.ok()) {  // the pads are known only at run time
    KILN_ASSIGN_OR_RETURN(Expr y, DynamicPad(c, x, mode, value, axes, pads_or.status()));
    return std::vector<Expr>{y};
  }
  if (pads.size() != 2 * na)
    return c.Invalid(absl::StrCat("pads has ", pads.size(), " entries; expected ", 2 * na));
  // Positive pads by nn.pad, negative ones (cropping) by a slice afterwards.
  auto pa = NewAttrs<PadAttrs>();
  pa->pad_width.assign(static_cast<size_t>(r), {0, 0});
  pa->pad_mode = mode;
  std::vector<int64_t> crop_axes, crop_begin, crop_end;
  bool any_pad = false;
  for (size_t i = 0; i < na; ++i) {
    const int64_t before = pads[i], after = pads[i + na];
    const size_t ax = static_cast<size_t>(axes[i]);
    pa->pad_width[ax] = {std::max<int64_t>(before, 0), std::max<int64_t>(after, 0)};
    any_pad = any_pad || before > 0 || after > 0;
    if (before < 0 || after < 0) {
      crop_axes.push_back(axes[i]);
      crop_begin.push_back(before < 0 ? -before : 0);
      crop_end.push_back(after < 0 ? after : kI64Max);
    }
  }
  Expr y = x;
  if (any_pad) {
    KILN_ASSIGN_OR_RETURN(y, c.Call("nn.pad", {y, value}, pa));
  }
  if (!crop_axes.empty()) {
    auto sa = NewAttrs<StridedSliceAttrs>();
    sa->begin = crop_begin;
    sa->end = crop_end;
    sa->strides = std::vector<int64_t>(crop_axes.size(), 1);
    sa->axes = crop_axes;
    KILN_ASSIGN_OR_RETURN(y, c.Call("strided_slice", {y}, sa));
  }
  return std::vector<Expr>{y};
}

// ---- depth / space -------------------------------------------------------------

Outs ConvertDepthToSpace(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(const onnx::AttributeProto* bs_attr, c.RequiredAttr("blocksize"));
  (void)bs_attr;
  KILN_ASSIGN_OR_RETURN(int64_t b, c.AttrInt("blocksize", 1));
  std::string mode = "DCR";
  if (c.opset() >= 11) {
    KILN_ASSIGN_OR_RETURN(mode, c.AttrString("mode", "DCR"));
  }
  if (mode != "DCR" && mode != "CRD") return c.Invalid(absl::StrCat("mode \"", mode, "\" is not DCR or CRD"));
  if (t->ndim() != 4) return c.Invalid(absl::StrCat("input must be 4-D; got ", ShapeToString(t->shape)));
  if (b < 1) return c.Invalid(absl::StrCat("blocksize ", b, " must be >= 1"));
  std::vector<int64_t> d(4, 0);
  for (size_t i = 1; i < 4; ++i) {
    if (!t->shape[i].is_static()) return c.Unsupported("DepthToSpace needs static C, H and W");
    d[i] = t->shape[i].value();
  }
  if (d[1] % (b * b) != 0)
    return c.Invalid(absl::StrCat("channels ", d[1], " do not divide by blocksize^2 = ", b * b));
  const int64_t cc = d[1] / (b * b);
  // Newshape entry 0 copies the batch dim, which may be symbolic.
  std::vector<int64_t> split, perm;
  if (mode == "DCR") {
    split = {0, b, b, cc, d[2], d[3]};
    perm = {0, 3, 4, 1, 5, 2};
  } else {
    split = {0, cc, b, b, d[2], d[3]};
    perm = {0, 1, 4, 2, 5, 3};
  }
  KILN_ASSIGN_OR_RETURN(Expr y, Reshape(c, x, split));
  KILN_ASSIGN_OR_RETURN(y, Transpose(c, y, perm));
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, {0, cc, d[2] * b, d[3] * b}));
  return std::vector<Expr>{y};
}

Outs ConvertSpaceToDepth(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(const onnx::AttributeProto* bs_attr, c.RequiredAttr("blocksize"));
  (void)bs_attr;
  KILN_ASSIGN_OR_RETURN(int64_t b, c.AttrInt("blocksize", 1));
  if (t->ndim() != 4) return c.Invalid(absl::StrCat("input must be 4-D; got ", ShapeToString(t->shape)));
  if (b < 1) return c.Invalid(absl::StrCat("blocksize ", b, " must be >= 1"));
  std::vector<int64_t> d(4, 0);
  for (size_t i = 1; i < 4; ++i) {
    if (!t->shape[i].is_static()) return c.Unsupported("SpaceToDepth needs static C, H and W");
    d[i] = t->shape[i].value();
  }
  if (d[2] % b != 0 || d[3] % b != 0)
    return c.Invalid(absl::StrCat("H ", d[2], " and W ", d[3], " must divide by blocksize ", b));
  KILN_ASSIGN_OR_RETURN(Expr y, Reshape(c, x, {0, d[1], d[2] / b, b, d[3] / b, b}));
  KILN_ASSIGN_OR_RETURN(y, Transpose(c, y, {0, 3, 5, 1, 2, 4}));
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, {0, d[1] * b * b, d[2] / b, d[3] / b}));
  return std::vector<Expr>{y};
}

void RegisterShapeConverters(ConverterRegistry& r) {
  for (int v : {1, 9, 11, 12, 13}) r.Add("Constant", v, ConvertConstant);
  for (int v : {1, 13, 14, 16}) r.Add("Identity", v, ConvertIdentity);
  for (int v : {1, 13, 15}) r.Add("Shape", v, ConvertShape);
  for (int v : {1, 13}) r.Add("Size", v, ConvertSize);
  r.Add("ConstantOfShape", 9, ConvertConstantOfShape);
  r.Add("Range", 11, ConvertRange);
  r.Add("HannWindow", 17, [](ConvertContext& c) { return ConvertWindow(c, 0.5, 0.5, 0); });
  r.Add("HammingWindow", 17,
        [](ConvertContext& c) { return ConvertWindow(c, 25.0 / 46.0, 21.0 / 46.0, 0); });
  r.Add("BlackmanWindow", 17, [](ConvertContext& c) { return ConvertWindow(c, 0.42, 0.5, 0.08); });
  r.Add("EyeLike", 9, ConvertEyeLike);
  for (int v : {1, 5, 13, 14}) r.Add("Reshape", v, ConvertReshape);
  for (int v : {1, 9, 11, 13}) r.Add("Flatten", v, ConvertFlatten);
  for (int v : {1, 13}) r.Add("Transpose", v, ConvertTranspose);
  for (int v : {1, 11, 13}) r.Add("Squeeze", v, ConvertSqueeze);
  for (int v : {1, 11, 13}) r.Add("Unsqueeze", v, ConvertUnsqueeze);
  for (int v : {8, 13}) r.Add("Expand", v, ConvertExpand);
  for (int v : {1, 6, 13}) r.Add("Tile", v, ConvertTile);
  for (int v : {1, 4, 11, 13}) r.Add("Concat", v, ConvertConcat);
  for (int v : {1, 2, 11, 13, 18}) r.Add("Split", v, ConvertSplit);
  for (int v : {1, 10, 11, 13}) r.Add("Slice", v, ConvertSlice);
  for (int v : {1, 2, 11, 13, 18}) r.Add("Pad", v, ConvertPad);
  for (int v : {1, 11, 13}) r.Add("DepthToSpace", v, ConvertDepthToSpace);
  for (int v : {1, 13}) r.Add("SpaceToDepth", v, ConvertSpaceToDepth);
}

}  // namespace
}  // namespace cvt

void RegisterTensorConverters(ConverterRegistry& r) {
  cvt::RegisterShapeConverters(r);
  cvt::RegisterIndexConverters(r);
  cvt::RegisterResizeConverters(r);
  cvt::RegisterSelectConverters(r);
  cvt::RegisterSampleConverters(r);
}

}  // namespace kiln::onnx_frontend
