// File: frontends/onnx/convert_dynamic.cc
//
// The run-time forms of the ONNX operators whose shape-like inputs are
// usually constants: when such an input depends on a graph input (a Reshape
// whose shape is given at run time, a Shape of a tensor with symbolic dims
// feeding it), the converter in convert_tensor.cc calls one of these instead
// of failing, and the model compiles for the VM, which computes the output
// shape when it runs (lowering/vm/shape_func.h):
//
//   Shape            shape_of (then a static strided_slice for start/end)
//   Reshape          dyn.reshape(x, cast(shape, int64))
//   Expand           dyn.broadcast_to(x, where(xs == 1, s, xs)) — xs, s both
//                    padded with leading 1s to the longer length (ONNX's
//                    two-way broadcast)
//   ConstantOfShape  dyn.full(value, cast(shape, int64))
//   Unsqueeze        dyn.unsqueeze(x, cast(axes, int64))
//   Squeeze          dyn.squeeze(x, cast(axes, int64))
//   Split            per output, dyn.strided_slice from the sizes summed before it
//   CumSum (axis)    in convert_tensor_index.cc: every axis's scan, one selected
//   Range            dyn.arange(start, limit, delta)
//   Trilu (k)        in convert_tensor_index.cc: compare(constant j - i, k)
//   Slice            dyn.strided_slice(x, b, e, s) with per-axis vectors built
//                    by take(concatenate(cast(v), default), index map) for
//                    constant axes, or by comparing run-time axes with
//                    0..rank-1 (DynamicSliceAxes)
//   Tile             x reshaped to [1, d0, 1, d1, ...], dyn.broadcast_to
//                    [r0, d0, r1, d1, ...], dyn.reshape to [r0*d0, r1*d1, ...]
//   Pad              per padded axis, take(y, src, axis) with the source
//                    coordinates src = dyn.arange(-begin, d + end, 1) mapped
//                    by the mode (clamped for edge, mirrored for reflect,
//                    clamped then masked with where(...) for constant);
//                    negative pads crop the same way
//   TopK (k)         in convert_tensor_index.cc: the whole axis ranked, then
//                    dyn.strided_slice to k along the axis
//
// A shape-like input must have a static length (it fixes the output rank);
// otherwise the original "must be known at import time" error stands.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "frontends/onnx/importer.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"

namespace kiln::onnx_frontend {
namespace cvt {

absl::StatusOr<Expr> ConcatAxis(ConvertContext& c, std::vector<Expr> fields, int64_t axis) {
  if (fields.size() == 1) return fields[0];
  std::vector<Type> types;
  for (const Expr& f : fields) {
    KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(f));
    types.push_back(t);
  }
  KILN_ASSIGN_OR_RETURN(Tuple tup, MakeTuple(std::move(fields)));
  tup->set_checked_type(MakeTupleType(types));
  auto a = NewAttrs<ConcatenateAttrs>();
  a->axis = axis;
  return c.Call("concatenate", {Expr(tup)}, a);
}

namespace {

absl::StatusOr<Expr> Concat(ConvertContext& c, std::vector<Expr> fields) {
  return ConcatAxis(c, std::move(fields), 0);
}

// Input i as a 1-D int64 tensor of static length (its length returned).
absl::StatusOr<std::pair<Expr, int64_t>> IntVector(ConvertContext& c, int i,
                                                   const absl::Status& why) {
  KILN_ASSIGN_OR_RETURN(Expr v, c.Input(i));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(i));
  if (t->ndim() != 1 || !t->shape[0].is_static()) {
    if (!why.ok()) return why;
    return c.Unsupported(absl::StrCat("input ", i, " has the type ", TypeToString(Type(t)),
                                      "; a shape-like input needs a static length"));
  }
  if (!t->dtype.is_int() && !t->dtype.is_uint()) {
    return c.Invalid(absl::StrCat("input ", i, " must be an integer tensor; it is ",
                                  TypeToString(Type(t))));
  }
  KILN_ASSIGN_OR_RETURN(Expr v64, Cast(c, v, DataType::Int(64)));
  return std::make_pair(v64, t->shape[0].value());
}

// Slice with the axes at run time too: entry j of a per-axis vector is
// sum_k where(axes_k == j, v_k, 0), plus the default where no entry names j
// (the mask compares the normalized axes with 0..rank-1). Repeated axes are
// undefined in ONNX (here their values add up); an axis out of range slices
// nothing.
absl::StatusOr<Expr> DynamicSliceAxes(ConvertContext& c, Expr x,
                                      const std::pair<Expr, int64_t>& starts,
                                      const std::pair<Expr, int64_t>& ends,
                                      const absl::Status& why) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  const int64_t r = t->ndim(), k = starts.second;
  KILN_ASSIGN_OR_RETURN(auto axes, IntVector(c, 3, why));
  if (axes.second != k) return c.Invalid(absl::StrCat("axes has ", axes.second, " entries, starts ", k));
  const DataType i64 = DataType::Int(64);
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(i64, 0));
  KILN_ASSIGN_OR_RETURN(Expr rank, c.ScalarConst(i64, static_cast<double>(r)));
  KILN_ASSIGN_OR_RETURN(Expr neg, c.Call("less", {axes.first, zero}));
  KILN_ASSIGN_OR_RETURN(Expr shifted, c.Call("add", {axes.first, rank}));
  KILN_ASSIGN_OR_RETURN(Expr norm, c.Call("where", {neg, shifted, axes.first}));
  std::vector<int64_t> iota(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) iota[static_cast<size_t>(i)] = i;
  KILN_ASSIGN_OR_RETURN(Expr rows, ConstI64(c, {r, 1}, iota));
  KILN_ASSIGN_OR_RETURN(Expr mask, c.Call("equal", {rows, norm}));  // [r, k]
  KILN_ASSIGN_OR_RETURN(Expr hits, Cast(c, mask, i64));
  KILN_ASSIGN_OR_RETURN(Expr count, Reduce(c, "sum", hits, {1}, false));  // [r]
  KILN_ASSIGN_OR_RETURN(Expr named, c.Call("greater", {count, zero}));
  auto full = [&](const Expr& v, int64_t fill) -> absl::StatusOr<Expr> {
    KILN_ASSIGN_OR_RETURN(Expr picked, c.Call("where", {mask, v, zero}));  // [r, k]
    KILN_ASSIGN_OR_RETURN(Expr sum, Reduce(c, "sum", picked, {1}, false));
    KILN_ASSIGN_OR_RETURN(Expr def, c.ScalarConst(i64, static_cast<double>(fill)));
    if (fill == std::numeric_limits<int64_t>::max()) {
      KILN_ASSIGN_OR_RETURN(def, ConstI64(c, {}, {fill}));  // exact (a double rounds it)
    }
    return c.Call("where", {named, sum, def});
  };
  KILN_ASSIGN_OR_RETURN(Expr b, full(starts.first, 0));
  KILN_ASSIGN_OR_RETURN(Expr e, full(ends.first, std::numeric_limits<int64_t>::max()));
  Expr s;
  if (c.HasInput(4)) {
    KILN_ASSIGN_OR_RETURN(auto steps, IntVector(c, 4, why));
    if (steps.second != k) return c.Invalid(absl::StrCat("steps has ", steps.second, " entries, starts ", k));
    KILN_ASSIGN_OR_RETURN(s, full(steps.first, 1));
  } else {
    KILN_ASSIGN_OR_RETURN(s, ConstI64(c, {r}, std::vector<int64_t>(static_cast<size_t>(r), 1)));
  }
  return c.Call("dyn.strided_slice", {std::move(x), b, e, s}, NewAttrs<DynStridedSliceAttrs>());
}

}  // namespace

bool NeedsValue(const absl::Status& s) {
  return s.GetPayload(kNeedsConstantPayload).has_value();
}

// The extents of x as a 1-D int64 tensor: a constant when static.
absl::StatusOr<Expr> ShapeVector(ConvertContext& c, const Expr& x) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  const int64_t r = t->ndim();
  if (ShapeIsStatic(t->shape)) {
    std::vector<int64_t> dims;
    for (const Dim& d : t->shape) dims.push_back(d.value());
    return ConstI64(c, {r}, dims);
  }
  return DynamicShapeOf(c, x, 0, r);
}

// Entry i of a 1-D int64 tensor, as a 0-D tensor.
absl::StatusOr<Expr> Entry(ConvertContext& c, const Expr& v, int64_t i) {
  KILN_ASSIGN_OR_RETURN(Expr idx, ConstI64(c, {}, {i}));
  return Take(c, v, idx, 0);
}

absl::StatusOr<Expr> DynamicShapeOf(ConvertContext& c, Expr x, int64_t start, int64_t end) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  auto a = NewAttrs<ShapeOfAttrs>();
  a->dtype = DataType::Int(64);
  KILN_ASSIGN_OR_RETURN(Expr s, c.Call("shape_of", {std::move(x)}, a));
  if (start == 0 && end == t->ndim()) return s;
  return SliceAxis(c, s, 0, start, end, 1);
}

namespace {

// An integer tensor of rank 0 or 1 whose entries are known as dims: static
// numbers or symbolic dims of some tensor's type.
struct DimValue {
  std::vector<Dim> v;
  bool scalar = false;
};

std::optional<DimValue> ConstantInts(const HostTensor& t) {
  if (t.ndim() > 1 || !(t.dtype().is_int() || t.dtype().is_uint())) return std::nullopt;
  DimValue out;
  out.scalar = t.ndim() == 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    int64_t v = 0;
    switch (t.dtype().bits()) {
      case 64: v = t.data<int64_t>()[i]; break;
      case 32: v = t.data<int32_t>()[i]; break;
      default: return std::nullopt;
    }
    out.v.push_back(Dim(v));
  }
  return out;
}

// What a shape computation evaluates to, as dims: shape_of a tensor gives its
// type's dims (symbolic ones too); take, strided_slice, concatenate, expand
// dims, reshape to 1-D, cast and scalar arithmetic follow. nullopt for
// anything that reads values (a graph input's data) or that this does not
// follow.
std::optional<DimValue> SymbolicInts(const Expr& e, int depth = 0) {
  if (depth > 64 || !e) return std::nullopt;
  if (const auto* k = e.as<ConstantNode>()) return ConstantInts(*k->data);
  const auto* call = e.as<CallNode>();
  const auto* op = call != nullptr ? call->op.as<OpNode>() : nullptr;
  if (op == nullptr) return std::nullopt;
  const std::string& name = op->name();
  auto arg = [&](size_t i) -> std::optional<DimValue> {
    if (i >= call->args.size()) return std::nullopt;
    return SymbolicInts(call->args[i], depth + 1);
  };
  if (name == "shape_of" && call->args.size() == 1) {
    absl::StatusOr<TensorType> t = TypeOf(call->args[0]);
    if (!t.ok()) return std::nullopt;
    const TensorTypeNode* tt = t->get();
    DimValue out;
    for (const Dim& d : tt->shape) {
      if (d.is_any()) return std::nullopt;
      out.v.push_back(d);
    }
    return out;
  }
  if (name == "cast" || name == "copy") return arg(0);
  if (name == "expand_dims" || name == "reshape" || name == "squeeze") {
    std::optional<DimValue> v = arg(0);
    absl::StatusOr<TensorType> t = TypeOf(e);
    if (!v || !t.ok() || (*t)->ndim() > 1) return std::nullopt;
    v->scalar = (*t)->ndim() == 0;
    return v;
  }
  if (name == "take" && call->args.size() == 2) {
    std::optional<DimValue> v = arg(0), idx = arg(1);
    const auto* a = call->attrs.as<TakeAttrs>();
    if (!v || !idx || v->scalar || a == nullptr || (a->axis && *a->axis != 0)) return std::nullopt;
    DimValue out;
    out.scalar = idx->scalar;
    const int64_t n = static_cast<int64_t>(v->v.size());
    for (const Dim& i : idx->v) {
      if (!i.is_static()) return std::nullopt;
      int64_t k = i.value() < 0 ? i.value() + n : i.value();
      if (k < 0 || k >= n) return std::nullopt;
      out.v.push_back(v->v[static_cast<size_t>(k)]);
    }
    return out;
  }
  if (name == "strided_slice" && call->args.size() == 1) {
    std::optional<DimValue> v = arg(0);
    const auto* a = call->attrs.as<StridedSliceAttrs>();
    if (!v || v->scalar || a == nullptr || a->begin.size() != 1 || a->end.size() != 1 ||
        a->slice_mode != "end" || (a->axes && (a->axes->size() != 1 || (*a->axes)[0] != 0)))
      return std::nullopt;
    const int64_t step = a->strides && !a->strides->empty() ? (*a->strides)[0] : 1;
    const int64_t n = static_cast<int64_t>(v->v.size());
    if (step != 1) return std::nullopt;
    int64_t b = a->begin[0] < 0 ? a->begin[0] + n : a->begin[0];
    int64_t en = a->end[0] < 0 ? a->end[0] + n : a->end[0];
    b = std::clamp<int64_t>(b, 0, n);
    en = std::clamp<int64_t>(en, 0, n);
    DimValue out;
    for (int64_t i = b; i < en; ++i) out.v.push_back(v->v[static_cast<size_t>(i)]);
    return out;
  }
  if (name == "concatenate" && call->args.size() == 1) {
    const auto* tup = call->args[0].as<TupleNode>();
    const auto* a = call->attrs.as<ConcatenateAttrs>();
    if (tup == nullptr || a == nullptr || a->axis != 0) return std::nullopt;
    DimValue out;
    for (const Expr& f : tup->fields) {
      std::optional<DimValue> v = SymbolicInts(f, depth + 1);
      if (!v || v->scalar) return std::nullopt;
      out.v.insert(out.v.end(), v->v.begin(), v->v.end());
    }
    return out;
  }
  if ((name == "multiply" || name == "add" || name == "subtract" || name == "floor_divide" ||
       name == "divide") &&
      call->args.size() == 2) {
    std::optional<DimValue> x = arg(0), y = arg(1);
    if (!x || !y) return std::nullopt;
    const size_t n = std::max(x->v.size(), y->v.size());
    if ((x->v.size() != n && x->v.size() != 1) || (y->v.size() != n && y->v.size() != 1))
      return std::nullopt;
    DimValue out;
    out.scalar = x->scalar && y->scalar;
    for (size_t i = 0; i < n; ++i) {
      const Dim& p = x->v[x->v.size() == 1 ? 0 : i];
      const Dim& q = y->v[y->v.size() == 1 ? 0 : i];
      // Integer division of sizes; a negative operand (a -1 code) is not a size.
      if ((p.is_static() && p.value() < 0) || (q.is_static() && q.value() < 0)) return std::nullopt;
      Dim r = name == "multiply" ? p * q
              : name == "add"    ? p + q
              : name == "subtract" ? p - q
                                   : Dim::FloorDiv(p, q);
      if (r.is_any()) return std::nullopt;
      out.v.push_back(r);
    }
    return out;
  }
  return std::nullopt;
}

// Reshape codes for x to `shape` when the shape's entries are known as dims
// (SymbolicInts); nullopt when not, or when the codes cannot say it.
absl::StatusOr<std::optional<std::vector<int64_t>>> SymbolicReshapeCodes(const Expr& x,
                                                                         const Expr& shape,
                                                                         bool allowzero) {
  std::optional<DimValue> v = SymbolicInts(shape);
  if (!v || v->scalar) return std::optional<std::vector<int64_t>>();
  KILN_ASSIGN_OR_RETURN(TensorType xt, TypeOf(x));
  // Each entry as reshape's code: a number stays; a symbolic dim equal to
  // x's dim at the same position is 0 (copy it); one other symbolic entry
  // becomes -1 (inferred), if the shape has no -1 already.
  std::vector<int64_t> codes;
  int unknown = -1;
  bool has_infer = false;
  for (size_t i = 0; i < v->v.size(); ++i) {
    const Dim& d = v->v[i];
    if (d.is_static()) {
      if (d.value() == 0 && allowzero) {
        // A literal 0: not a code ReshapeAttrs can say next to copies.
        return std::optional<std::vector<int64_t>>();
      }
      if (d.value() < -1) return std::optional<std::vector<int64_t>>();
      has_infer |= d.value() == -1;
      codes.push_back(d.value());
      continue;
    }
    if (i < xt->shape.size() && xt->shape[i] == d) {
      codes.push_back(0);
      continue;
    }
    if (unknown >= 0) return std::optional<std::vector<int64_t>>();
    unknown = static_cast<int>(i);
    codes.push_back(-1);
  }
  if (unknown >= 0 && has_infer) return std::optional<std::vector<int64_t>>();
  return std::optional<std::vector<int64_t>>(std::move(codes));
}

}  // namespace

absl::StatusOr<Expr> DynamicReshape(ConvertContext& c, Expr x, bool allowzero,
                                    const absl::Status& why) {
  // A shape computed from x's (or another tensor's) symbolic dims and
  // constants, as PyTorch exports view(B, T, 4, 8): a static reshape that
  // keeps the dims it knows.
  if (c.HasInput(1)) {
    KILN_ASSIGN_OR_RETURN(Expr raw, c.Input(1));
    KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> codes,
                          SymbolicReshapeCodes(x, raw, allowzero));
    if (codes) {
      auto ra = NewAttrs<ReshapeAttrs>();
      ra->newshape = *codes;
      absl::StatusOr<Expr> y = c.Call("reshape", {x}, ra);
      if (y.ok()) return y;
    }
  }
  KILN_ASSIGN_OR_RETURN(auto shape, IntVector(c, 1, why));
  auto a = NewAttrs<DynReshapeAttrs>();
  a->allowzero = allowzero;
  return c.Call("dyn.reshape", {std::move(x), shape.first}, a);
}

absl::StatusOr<Expr> DynamicExpand(ConvertContext& c, Expr x, const absl::Status& why) {
  KILN_ASSIGN_OR_RETURN(auto shape, IntVector(c, 1, why));
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  const int64_t r = t->ndim(), n = shape.second;
  const int64_t len = std::max(r, n);
  // Both padded with leading 1s to `len`.
  Expr s = shape.first;
  if (n < len) {
    KILN_ASSIGN_OR_RETURN(Expr ones, ConstI64(c, {len - n}, std::vector<int64_t>(len - n, 1)));
    KILN_ASSIGN_OR_RETURN(s, Concat(c, {ones, s}));
  }
  Expr xs;
  if (ShapeIsStatic(t->shape)) {
    std::vector<int64_t> dims(static_cast<size_t>(len - r), 1);
    for (const Dim& d : t->shape) dims.push_back(d.value());
    KILN_ASSIGN_OR_RETURN(xs, ConstI64(c, {len}, dims));
  } else {
    KILN_ASSIGN_OR_RETURN(xs, DynamicShapeOf(c, x, 0, r));
    if (r < len) {
      KILN_ASSIGN_OR_RETURN(Expr ones, ConstI64(c, {len - r}, std::vector<int64_t>(len - r, 1)));
      KILN_ASSIGN_OR_RETURN(xs, Concat(c, {ones, xs}));
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(DataType::Int(64), 1));
  KILN_ASSIGN_OR_RETURN(Expr is_one, c.Call("equal", {xs, one}));
  KILN_ASSIGN_OR_RETURN(Expr target, c.Call("where", {is_one, s, xs}));
  return c.Call("dyn.broadcast_to", {std::move(x), target});
}

absl::StatusOr<Expr> DynamicConstantOfShape(ConvertContext& c, Ref<const HostTensor> value,
                                            const absl::Status& why) {
  KILN_ASSIGN_OR_RETURN(auto shape, IntVector(c, 0, why));
  if (!value) {
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> zero, HostTensor::Create(DataType::Float(32), {}));
    value = zero;
  }
  Ref<const HostTensor> scalar = value;
  if (value->ndim() != 0) {
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> s, HostTensor::FromBytes(value->dtype(), {},
                                                                   value->raw_data(),
                                                                   value->nbytes()));
    scalar = s;
  }
  KILN_ASSIGN_OR_RETURN(Expr v, c.Const(scalar));
  auto a = NewAttrs<InitOpAttrs>();
  a->dtype = value->dtype();
  return c.Call("dyn.full", {v, shape.first}, a);
}

absl::StatusOr<Expr> DynamicSqueeze(ConvertContext& c, Expr x, bool unsqueeze,
                                    const absl::Status& why) {
  KILN_ASSIGN_OR_RETURN(auto axes, IntVector(c, 1, why));
  return c.Call(unsqueeze ? "dyn.unsqueeze" : "dyn.squeeze", {std::move(x), axes.first});
}

absl::StatusOr<std::vector<Expr>> DynamicSplit(ConvertContext& c, Expr x, int64_t axis,
                                               int n_out, const absl::Status& why) {
  KILN_ASSIGN_OR_RETURN(auto split, IntVector(c, 1, why));
  if (split.second != n_out) {
    return c.Invalid(absl::StrCat("split has ", split.second, " entries for ", n_out, " outputs"));
  }
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  const int64_t r = t->ndim();
  const std::vector<int64_t> before(static_cast<size_t>(axis), 0);
  const std::vector<int64_t> after(static_cast<size_t>(r - axis - 1), 0);
  // begin/end vectors: 0 / INT64_MAX on the other axes, the part's bounds on `axis`.
  auto full = [&](Expr v, int64_t fill) -> absl::StatusOr<Expr> {
    std::vector<Expr> parts;
    if (axis > 0) {
      KILN_ASSIGN_OR_RETURN(Expr p, ConstI64(c, {axis}, std::vector<int64_t>(before.size(), fill)));
      parts.push_back(p);
    }
    KILN_ASSIGN_OR_RETURN(Expr one, Reshape(c, std::move(v), {1}));
    parts.push_back(one);
    if (!after.empty()) {
      KILN_ASSIGN_OR_RETURN(Expr p, ConstI64(c, {static_cast<int64_t>(after.size())},
                                             std::vector<int64_t>(after.size(), fill)));
      parts.push_back(p);
    }
    return Concat(c, std::move(parts));
  };
  KILN_ASSIGN_OR_RETURN(Expr strides, ConstI64(c, {r}, std::vector<int64_t>(static_cast<size_t>(r), 1)));
  std::vector<Expr> outs;
  for (int i = 0; i < n_out; ++i) {
    // begin = the sizes before part i, summed; end = begin + size i.
    std::vector<int64_t> mask(static_cast<size_t>(n_out), 0);
    for (int j = 0; j < i; ++j) mask[static_cast<size_t>(j)] = 1;
    KILN_ASSIGN_OR_RETURN(Expr m, ConstI64(c, {n_out}, mask));
    KILN_ASSIGN_OR_RETURN(Expr masked, c.Call("multiply", {split.first, m}));
    KILN_ASSIGN_OR_RETURN(Expr b, Reduce(c, "sum", masked, {0}, false));
    KILN_ASSIGN_OR_RETURN(Expr idx, ConstI64(c, {}, {i}));
    KILN_ASSIGN_OR_RETURN(Expr len, Take(c, split.first, idx, 0));
    KILN_ASSIGN_OR_RETURN(Expr e, c.Call("add", {b, len}));
    KILN_ASSIGN_OR_RETURN(Expr begin, full(b, 0));
    KILN_ASSIGN_OR_RETURN(Expr end, full(e, std::numeric_limits<int64_t>::max()));
    // (full's fill for `end` applies to the other axes; `e` is this axis's end.)
    KILN_ASSIGN_OR_RETURN(Expr y, c.Call("dyn.strided_slice", {x, begin, end, strides},
                                         NewAttrs<DynStridedSliceAttrs>()));
    outs.push_back(y);
  }
  return outs;
}

absl::StatusOr<Expr> DynamicRange(ConvertContext& c) {
  std::vector<Expr> args;
  DataType dtype;
  for (int i = 0; i < 3; ++i) {
    KILN_ASSIGN_OR_RETURN(Expr v, c.Input(i));
    KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(i));
    if (i == 0) dtype = t->dtype;
    if (t->dtype != dtype) {
      return c.Invalid(absl::StrCat("start, limit and delta must have one dtype; input ", i,
                                    " is ", TypeToString(Type(t))));
    }
    if (t->ndim() == 1 && t->shape[0].is_static() && t->shape[0].value() == 1) {
      KILN_ASSIGN_OR_RETURN(v, Reshape(c, v, {}));
    } else if (t->ndim() != 0) {
      return c.Invalid(absl::StrCat("input ", i, " must be a scalar; it is ", TypeToString(Type(t))));
    }
    args.push_back(v);
  }
  return c.Call("dyn.arange", std::move(args));
}

absl::StatusOr<Expr> DynamicTile(ConvertContext& c, Expr x, const absl::Status& why) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  const int64_t r = t->ndim();
  KILN_ASSIGN_OR_RETURN(auto repeats, IntVector(c, 1, why));
  if (repeats.second != r) {
    return c.Invalid(absl::StrCat("repeats has ", repeats.second, " entries; the input has rank ", r));
  }
  if (r == 0) return x;
  KILN_ASSIGN_OR_RETURN(Expr dims, ShapeVector(c, x));
  // x as [1, d0, 1, d1, ...]: a unit axis before every axis.
  Expr y = x;
  for (int64_t i = r - 1; i >= 0; --i) {
    KILN_ASSIGN_OR_RETURN(y, ExpandDims(c, y, i));
  }
  // [r0, d0, r1, d1, ...]: the columns (repeats, dims) of an [r, 2] matrix, row-major.
  KILN_ASSIGN_OR_RETURN(Expr rep_col, Reshape(c, repeats.first, {r, 1}));
  KILN_ASSIGN_OR_RETURN(Expr dim_col, Reshape(c, dims, {r, 1}));
  KILN_ASSIGN_OR_RETURN(Expr pairs, ConcatAxis(c, {rep_col, dim_col}, 1));
  KILN_ASSIGN_OR_RETURN(Expr target, Reshape(c, pairs, {2 * r}));
  KILN_ASSIGN_OR_RETURN(y, c.Call("dyn.broadcast_to", {y, target}));
  KILN_ASSIGN_OR_RETURN(Expr merged, c.Call("multiply", {repeats.first, dims}));
  auto ra = NewAttrs<DynReshapeAttrs>();
  ra->allowzero = true;
  return c.Call("dyn.reshape", {y, merged}, ra);
}

absl::StatusOr<Expr> DynamicPad(ConvertContext& c, Expr x, const std::string& mode, Expr value,
                                const std::vector<int64_t>& axes, const absl::Status& why) {
  KILN_ASSIGN_OR_RETURN(auto pads, IntVector(c, 1, why));
  if (pads.second != 2 * static_cast<int64_t>(axes.size())) {
    return c.Invalid(absl::StrCat("pads has ", pads.second, " entries; expected ", 2 * axes.size()));
  }
  return DynamicPadWith(c, std::move(x), mode, std::move(value), axes, pads.first);
}

absl::StatusOr<Expr> DynamicPadWith(ConvertContext& c, Expr x, const std::string& mode, Expr value,
                                    const std::vector<int64_t>& axes, Expr pads_vec) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  const int64_t na = static_cast<int64_t>(axes.size());
  const std::pair<Expr, int64_t> pads(std::move(pads_vec), 2 * na);
  const DataType i64 = DataType::Int(64);
  KILN_ASSIGN_OR_RETURN(Expr dims, ShapeVector(c, x));
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(i64, 0));
  KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(i64, 1));
  Expr y = x;
  for (int64_t i = 0; i < na; ++i) {
    const int64_t ax = axes[static_cast<size_t>(i)];
    KILN_ASSIGN_OR_RETURN(Expr begin, Entry(c, pads.first, i));
    KILN_ASSIGN_OR_RETURN(Expr end, Entry(c, pads.first, i + na));
    KILN_ASSIGN_OR_RETURN(Expr d, Entry(c, dims, ax));
    // src: the input coordinate of each output position along `ax`.
    KILN_ASSIGN_OR_RETURN(Expr start, c.Call("negative", {begin}));
    KILN_ASSIGN_OR_RETURN(Expr limit, c.Call("add", {d, end}));
    KILN_ASSIGN_OR_RETURN(Expr src, c.Call("dyn.arange", {start, limit, one}));
    KILN_ASSIGN_OR_RETURN(Expr last, c.Call("subtract", {d, one}));
    Expr idx;
    if (mode == "reflect") {
      // Mirror about both ends: period 2(d - 1); a length-1 axis repeats its element.
      KILN_ASSIGN_OR_RETURN(Expr period, c.Call("add", {last, last}));
      KILN_ASSIGN_OR_RETURN(Expr safe, c.Call("maximum", {period, one}));
      KILN_ASSIGN_OR_RETURN(Expr a, c.Call("abs", {src}));
      KILN_ASSIGN_OR_RETURN(Expr m, c.Call("floor_mod", {a, safe}));
      KILN_ASSIGN_OR_RETURN(Expr back, c.Call("subtract", {period, m}));
      KILN_ASSIGN_OR_RETURN(Expr upper, c.Call("greater", {m, last}));
      KILN_ASSIGN_OR_RETURN(idx, c.Call("where", {upper, back, m}));
      KILN_ASSIGN_OR_RETURN(Expr unit, c.Call("less_equal", {d, one}));
      KILN_ASSIGN_OR_RETURN(idx, c.Call("where", {unit, zero, idx}));
    } else if (mode == "wrap") {
      KILN_ASSIGN_OR_RETURN(Expr safe, c.Call("maximum", {d, one}));
      KILN_ASSIGN_OR_RETURN(idx, c.Call("floor_mod", {src, safe}));
    } else {  // edge, constant: clamped (constant then masks what lies outside)
      KILN_ASSIGN_OR_RETURN(Expr lo, c.Call("maximum", {src, zero}));
      KILN_ASSIGN_OR_RETURN(idx, c.Call("minimum", {lo, last}));
      KILN_ASSIGN_OR_RETURN(idx, c.Call("maximum", {idx, zero}));
    }
    KILN_ASSIGN_OR_RETURN(Expr taken, Take(c, y, idx, ax));
    if (mode == "constant") {
      KILN_ASSIGN_OR_RETURN(Expr ge, c.Call("greater_equal", {src, zero}));
      KILN_ASSIGN_OR_RETURN(Expr lt, c.Call("less", {src, d}));
      KILN_ASSIGN_OR_RETURN(Expr inside, c.Call("logical_and", {ge, lt}));
      const int64_t trail = t->ndim() - ax - 1;
      if (trail > 0) {
        KILN_ASSIGN_OR_RETURN(inside, ExpandDims(c, inside, 1, trail));
      }
      KILN_ASSIGN_OR_RETURN(taken, c.Call("where", {inside, taken, value}));
    }
    y = taken;
  }
  return y;
}

absl::StatusOr<Expr> DynamicSliceAlong(ConvertContext& c, Expr x, int64_t axis, Expr count) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  const int64_t r = t->ndim();
  std::vector<Expr> parts;
  if (axis > 0) {
    KILN_ASSIGN_OR_RETURN(Expr p, ConstI64(c, {axis}, std::vector<int64_t>(static_cast<size_t>(axis),
                                                      std::numeric_limits<int64_t>::max())));
    parts.push_back(p);
  }
  KILN_ASSIGN_OR_RETURN(Expr k64, Cast(c, std::move(count), DataType::Int(64)));
  KILN_ASSIGN_OR_RETURN(Expr k1, Reshape(c, k64, {1}));
  parts.push_back(k1);
  if (axis + 1 < r) {
    KILN_ASSIGN_OR_RETURN(Expr p, ConstI64(c, {r - axis - 1},
                                           std::vector<int64_t>(static_cast<size_t>(r - axis - 1),
                                                                std::numeric_limits<int64_t>::max())));
    parts.push_back(p);
  }
  KILN_ASSIGN_OR_RETURN(Expr end, Concat(c, std::move(parts)));
  KILN_ASSIGN_OR_RETURN(Expr begin, ConstI64(c, {r}, std::vector<int64_t>(static_cast<size_t>(r), 0)));
  KILN_ASSIGN_OR_RETURN(Expr strides, ConstI64(c, {r}, std::vector<int64_t>(static_cast<size_t>(r), 1)));
  return c.Call("dyn.strided_slice", {std::move(x), begin, end, strides}, NewAttrs<DynStridedSliceAttrs>());
}

absl::StatusOr<Expr> DynamicSlice(ConvertContext& c, Expr x, const absl::Status& why) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  const int64_t r = t->ndim();
  KILN_ASSIGN_OR_RETURN(auto starts, IntVector(c, 1, why));
  KILN_ASSIGN_OR_RETURN(auto ends, IntVector(c, 2, why));
  const int64_t k = starts.second;
  if (ends.second != k) {
    return c.Invalid(absl::StrCat("starts has ", k, " entries, ends ", ends.second));
  }
  std::vector<int64_t> axes;
  if (c.HasInput(3)) {
    absl::StatusOr<std::optional<std::vector<int64_t>>> a = c.ConstantInts(3);
    if (!a.ok()) {
      if (NeedsValue(a.status())) return DynamicSliceAxes(c, x, starts, ends, why);
      return a.status();
    }
    if (*a) axes = **a;
  }
  if (axes.empty()) {
    for (int64_t i = 0; i < k; ++i) axes.push_back(i);
  }
  if (static_cast<int64_t>(axes.size()) != k) {
    return c.Invalid(absl::StrCat("axes has ", axes.size(), " entries, starts ", k));
  }
  // index[d]: the entry that slices axis d, or k (the default appended).
  std::vector<int64_t> index(static_cast<size_t>(r), k);
  for (int64_t j = 0; j < k; ++j) {
    KILN_ASSIGN_OR_RETURN(int64_t d, NormAxis(c, axes[static_cast<size_t>(j)], r, "axes entry"));
    if (index[static_cast<size_t>(d)] != k) {
      return c.Invalid(absl::StrCat("axes lists axis ", d, " twice"));
    }
    index[static_cast<size_t>(d)] = j;
  }
  KILN_ASSIGN_OR_RETURN(Expr idx, ConstI64(c, {r}, index));
  auto full = [&](Expr v, int64_t fill) -> absl::StatusOr<Expr> {
    KILN_ASSIGN_OR_RETURN(Expr pad, ConstI64(c, {1}, {fill}));
    KILN_ASSIGN_OR_RETURN(Expr joined, Concat(c, {std::move(v), pad}));
    return Take(c, joined, idx, 0);
  };
  KILN_ASSIGN_OR_RETURN(Expr b, full(starts.first, 0));
  KILN_ASSIGN_OR_RETURN(Expr e, full(ends.first, std::numeric_limits<int64_t>::max()));
  Expr s;
  if (c.HasInput(4)) {
    KILN_ASSIGN_OR_RETURN(auto steps, IntVector(c, 4, why));
    if (steps.second != k) {
      return c.Invalid(absl::StrCat("steps has ", steps.second, " entries, starts ", k));
    }
    KILN_ASSIGN_OR_RETURN(s, full(steps.first, 1));
  } else {
    KILN_ASSIGN_OR_RETURN(s, ConstI64(c, {r}, std::vector<int64_t>(static_cast<size_t>(r), 1)));
  }
  return c.Call("dyn.strided_slice", {std::move(x), b, e, s}, NewAttrs<DynStridedSliceAttrs>());
}

}  // namespace cvt
}  // namespace kiln::onnx_frontend
