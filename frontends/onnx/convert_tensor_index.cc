// ONNX gathers, scatters, masks and scans -> graph IR (part of the tensor
// family; registered by RegisterTensorConverters).
//
// Compositions (exact; sums differ from a sequential loop only in rounding order):
//   Gather          take (mode "fast": negative indices count from the end)
//   GatherElements / GatherND   a flat index (integer arithmetic on the
//                   indices plus a constant offset) -> take from the flat data
//   OneHot          equal(expand_dims(indices), arange) -> where(on, off)
//   Trilu           where(constant triangular mask, x, 0); with k at run time,
//                   where(compare(constant j - i, k), x, 0)
//   CumSum          log2(n) steps of y += shift(y, 2^k) (a Hillis-Steele scan;
//                   shift = pad with zeros + slice), flips for `reverse`
//   Scatter, ScatterElements, ScatterND   equal(row, target) matches of every
//                   data row with every update -> the last matching update
//                   (none), or a sum / product over the matches (add, mul)
//   ReverseSequence per-(batch, step) source steps from seq_lens -> a
//                   GatherElements along the time axis
//   TopK            ranks from an n x n comparison -> where(rank == p) sums
// The match-based ones cost rows x updates (TopK: n x n per row) and are
// refused beyond 2^24 elements: they need scatter / sort operators.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
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

namespace kiln::onnx_frontend::cvt {
namespace {

constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

Outs ConvertGather(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr data, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr idx, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", 0));
  KILN_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, t->ndim()));
  // mode "fast": indices in [-n, n), negatives counted from the end (ONNX's rule).
  KILN_ASSIGN_OR_RETURN(Expr y, Take(c, data, idx, axis));
  return std::vector<Expr>{y};
}

// The flat position in data (static dims `dd`) that each element of an
// indices tensor (static dims `id`, same rank) addresses along `axis`, as in
// GatherElements / ScatterElements: idx * stride[axis] + (the offset of the
// element's own position without axis). Indices are int64, normalized from
// negative.
absl::StatusOr<Expr> ElementFlatIndex(ConvertContext& c, Expr idx, const std::vector<int64_t>& dd,
                                      const std::vector<int64_t>& id, int64_t axis) {
  const size_t ax = static_cast<size_t>(axis);
  for (size_t d = 0; d < dd.size(); ++d)
    if (d != ax && id[d] > dd[d])
      return c.Invalid(absl::StrCat("indices [", absl::StrJoin(id, ", "), "] exceed data [",
                                    absl::StrJoin(dd, ", "), "] outside axis ", axis));
  KILN_RETURN_IF_ERROR(CheckConstantSize(c, id, "the index offsets"));
  const std::vector<int64_t> ds = Strides(dd), is = Strides(id);
  std::vector<int64_t> offset(static_cast<size_t>(Product(id)), 0);
  for (int64_t p = 0; p < Product(id); ++p) {
    int64_t off = 0;
    for (size_t d = 0; d < id.size(); ++d)
      if (d != ax) off += ((p / is[d]) % id[d]) * ds[d];
    offset[static_cast<size_t>(p)] = off;
  }
  KILN_ASSIGN_OR_RETURN(idx, Cast(c, idx, DataType::Int(64)));
  KILN_ASSIGN_OR_RETURN(Expr n, c.ScalarConst(DataType::Int(64), static_cast<double>(dd[ax])));
  KILN_ASSIGN_OR_RETURN(idx, NormalizeIndices(c, idx, n));
  KILN_ASSIGN_OR_RETURN(Expr stride, c.ScalarConst(DataType::Int(64), static_cast<double>(ds[ax])));
  KILN_ASSIGN_OR_RETURN(Expr flat, c.Call("multiply", {idx, stride}));
  KILN_ASSIGN_OR_RETURN(Expr off, ConstI64(c, id, offset));
  return c.Call("add", {flat, off});
}

// Static dims of data and indices of the same rank >= 1, and the axis.
struct ElementArgs {
  std::vector<int64_t> dd, id;
  int64_t axis = 0;
};
absl::StatusOr<ElementArgs> ReadElementArgs(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(TensorType dt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(TensorType it, c.InputType(1));
  ElementArgs a;
  KILN_ASSIGN_OR_RETURN(a.dd, StaticDims(c, dt, "data"));
  KILN_ASSIGN_OR_RETURN(a.id, StaticDims(c, it, "indices"));
  if (a.dd.size() != a.id.size() || a.dd.empty())
    return c.Invalid(absl::StrCat("data ", ShapeToString(dt->shape), " and indices ",
                                  ShapeToString(it->shape), " must have the same rank >= 1"));
  KILN_ASSIGN_OR_RETURN(a.axis, c.AttrInt("axis", 0));
  KILN_ASSIGN_OR_RETURN(a.axis, NormAxis(c, a.axis, static_cast<int64_t>(a.dd.size())));
  return a;
}

// GatherElements: out[p] = data[p with p[axis] := idx[p]], a take from the
// flattened data at ElementFlatIndex.
Outs ConvertGatherElements(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr data, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr idx, c.Input(1));
  KILN_ASSIGN_OR_RETURN(ElementArgs a, ReadElementArgs(c));
  KILN_ASSIGN_OR_RETURN(Expr flat, ElementFlatIndex(c, idx, a.dd, a.id, a.axis));
  KILN_ASSIGN_OR_RETURN(Expr y, Take(c, data, flat, std::nullopt));
  return std::vector<Expr>{y};
}

// Index tuples (the last axis of int64-castable `idx`, of length
// inner.size()) into data dims `inner` -> their row-major linear positions
// (negative entries counted from the end of their dim).
absl::StatusOr<Expr> TupleRowIndex(ConvertContext& c, Expr idx, const std::vector<int64_t>& inner) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(idx));
  const int64_t m = static_cast<int64_t>(inner.size());
  KILN_ASSIGN_OR_RETURN(idx, Cast(c, idx, DataType::Int(64)));
  KILN_ASSIGN_OR_RETURN(Expr dims_c, ConstI64(c, {m}, inner));
  KILN_ASSIGN_OR_RETURN(idx, NormalizeIndices(c, idx, dims_c));
  KILN_ASSIGN_OR_RETURN(Expr stride_c, ConstI64(c, {m}, Strides(inner)));
  KILN_ASSIGN_OR_RETURN(Expr prod, c.Call("multiply", {idx, stride_c}));
  return Reduce(c, "sum", prod, {t->ndim() - 1}, false);
}

// GatherND: with m = indices.shape[-1] and b = batch_dims, data is viewed as
// [prod(data[:b+m]), data[b+m:]...] and each index tuple becomes one flat row
// index: batch position * prod(data[b:b+m]) + sum_k idx_k * stride_k.
Outs ConvertGatherND(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr data, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr idx, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType dt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(TensorType it, c.InputType(1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dd, StaticDims(c, dt, "data"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> id, StaticDims(c, it, "indices"));
  int64_t b = 0;
  if (c.opset() >= 12) {
    KILN_ASSIGN_OR_RETURN(b, c.AttrInt("batch_dims", 0));
  }
  const int64_t r = static_cast<int64_t>(dd.size()), q = static_cast<int64_t>(id.size());
  if (q < 1 || b < 0 || b >= std::min(r, q))
    return c.Invalid(absl::StrCat("batch_dims ", b, " does not fit data ", ShapeToString(dt->shape),
                                  " and indices ", ShapeToString(it->shape)));
  const int64_t m = id.back();
  if (m < 1 || b + m > r)
    return c.Invalid(absl::StrCat("indices.shape[-1] = ", m, " must be in [1, ", r - b, "]"));
  for (int64_t i = 0; i < b; ++i)
    if (dd[static_cast<size_t>(i)] != id[static_cast<size_t>(i)])
      return c.Invalid("the batch dims of data and indices differ");
  const size_t ub = static_cast<size_t>(b), um = static_cast<size_t>(m);
  // Stride of each indexed dim within data[b:b+m], and those dims.
  std::vector<int64_t> inner(dd.begin() + b, dd.begin() + b + m);
  const int64_t block = Product(inner);
  // Batch offset for each position of indices[:-1].
  std::vector<int64_t> pos_dims(id.begin(), id.end() - 1);
  KILN_RETURN_IF_ERROR(CheckConstantSize(c, pos_dims, "the batch offsets"));
  const std::vector<int64_t> ps = Strides(pos_dims);
  std::vector<int64_t> bstride = Strides(std::vector<int64_t>(dd.begin(), dd.begin() + b));
  std::vector<int64_t> boff(static_cast<size_t>(Product(pos_dims)), 0);
  for (int64_t p = 0; p < Product(pos_dims); ++p) {
    int64_t lin = 0;
    for (size_t d = 0; d < ub; ++d) lin += ((p / ps[d]) % pos_dims[d]) * bstride[d];
    boff[static_cast<size_t>(p)] = lin * block;
  }
  KILN_ASSIGN_OR_RETURN(Expr flat, TupleRowIndex(c, idx, inner));
  KILN_ASSIGN_OR_RETURN(Expr off, ConstI64(c, pos_dims, boff));
  KILN_ASSIGN_OR_RETURN(flat, c.Call("add", {flat, off}));
  std::vector<int64_t> view = {Product(dd, 0, ub + um)};
  view.insert(view.end(), dd.begin() + b + m, dd.end());
  KILN_ASSIGN_OR_RETURN(Expr d2, Reshape(c, data, view, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(Expr y, Take(c, d2, flat, 0));
  return std::vector<Expr>{y};
}

// ---- compositions with masks ------------------------------------------------------

Outs ConvertOneHot(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr indices, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType it, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(Expr values, c.Input(2));
  KILN_ASSIGN_OR_RETURN(TensorType vt, c.InputType(2));
  absl::StatusOr<Ref<const HostTensor>> depth_or = c.ConstantInput(1);
  if (!depth_or.ok() && NeedsValue(depth_or.status())) {
    // depth at run time: the same comparison with dyn.arange(0, depth, 1).
    KILN_ASSIGN_OR_RETURN(TensorType dt, c.InputType(1));
    if (!ShapeIsStatic(dt->shape) || dt->ndim() > 1 || (dt->ndim() == 1 && dt->shape[0].value() != 1))
      return c.Invalid(absl::StrCat("depth must hold exactly one element; it is ", TypeToString(Type(dt))));
    if (vt->ndim() != 1 || !vt->shape[0].is_static() || vt->shape[0].value() != 2)
      return c.Invalid(absl::StrCat("values must be a 2-element vector; got ", ShapeToString(vt->shape)));
    const int64_t out_rank = it->ndim() + 1;
    KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", -1));
    KILN_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, out_rank));
    KILN_ASSIGN_OR_RETURN(Expr depth, c.Input(1));
    KILN_ASSIGN_OR_RETURN(depth, Cast(c, depth, DataType::Int(64)));
    if (dt->ndim() == 1) {
      KILN_ASSIGN_OR_RETURN(depth, Reshape(c, depth, {}));
    }
    KILN_ASSIGN_OR_RETURN(Expr idx, Cast(c, indices, DataType::Int(64)));
    KILN_ASSIGN_OR_RETURN(idx, NormalizeIndices(c, idx, depth));
    KILN_ASSIGN_OR_RETURN(idx, ExpandDims(c, idx, axis));
    KILN_ASSIGN_OR_RETURN(Expr zero, ConstI64(c, {}, {0}));
    KILN_ASSIGN_OR_RETURN(Expr one, ConstI64(c, {}, {1}));
    KILN_ASSIGN_OR_RETURN(Expr arange, c.Call("dyn.arange", {zero, depth, one}));
    if (out_rank - axis - 1 > 0) {
      KILN_ASSIGN_OR_RETURN(arange, ExpandDims(c, arange, 1, out_rank - axis - 1));
    }
    KILN_ASSIGN_OR_RETURN(Expr mask, c.Call("equal", {idx, arange}));
    KILN_ASSIGN_OR_RETURN(Expr off, Take(c, values, zero, 0));
    KILN_ASSIGN_OR_RETURN(Expr on, Take(c, values, one, 0));
    KILN_ASSIGN_OR_RETURN(Expr y, c.Call("where", {mask, on, off}));
    return std::vector<Expr>{y};
  }
  KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> depth_t, std::move(depth_or));
  if (depth_t->num_elements() != 1) return c.Invalid("depth must hold exactly one element");
  const double depth_v = depth_t->GetAsDouble(0);
  if (!(depth_v >= 1 && depth_v <= static_cast<double>(kMaxConstantElements)))
    return c.Invalid(absl::StrCat("depth ", depth_v, " must be in [1, ", kMaxConstantElements, "]"));
  const int64_t depth = static_cast<int64_t>(depth_v);
  if (vt->ndim() != 1 || !vt->shape[0].is_static() || vt->shape[0].value() != 2)
    return c.Invalid(absl::StrCat("values must be a 2-element vector; got ", ShapeToString(vt->shape)));
  const int64_t out_rank = it->ndim() + 1;
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", -1));
  KILN_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, out_rank));
  KILN_ASSIGN_OR_RETURN(Expr idx, Cast(c, indices, DataType::Int(64)));
  KILN_ASSIGN_OR_RETURN(Expr n, c.ScalarConst(DataType::Int(64), static_cast<double>(depth)));
  KILN_ASSIGN_OR_RETURN(idx, NormalizeIndices(c, idx, n));
  KILN_ASSIGN_OR_RETURN(idx, ExpandDims(c, idx, axis));
  // arange(depth) shaped [depth, 1, ..., 1] to sit at `axis`.
  std::vector<int64_t> ar(static_cast<size_t>(depth));
  std::iota(ar.begin(), ar.end(), 0);
  std::vector<int64_t> ar_shape(static_cast<size_t>(out_rank - axis), 1);
  ar_shape[0] = depth;
  KILN_ASSIGN_OR_RETURN(Expr arange, ConstI64(c, ar_shape, ar));
  KILN_ASSIGN_OR_RETURN(Expr mask, c.Call("equal", {idx, arange}));
  KILN_ASSIGN_OR_RETURN(Expr i0, ConstI64(c, {}, {0}));
  KILN_ASSIGN_OR_RETURN(Expr i1, ConstI64(c, {}, {1}));
  KILN_ASSIGN_OR_RETURN(Expr off, Take(c, values, i0, 0));
  KILN_ASSIGN_OR_RETURN(Expr on, Take(c, values, i1, 0));
  KILN_ASSIGN_OR_RETURN(Expr y, c.Call("where", {mask, on, off}));
  return std::vector<Expr>{y};
}

Outs ConvertTrilu(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  const int64_t r = t->ndim();
  if (r < 2) return c.Invalid(absl::StrCat("input must have rank >= 2; got ", ShapeToString(t->shape)));
  const Dim& dn = t->shape[static_cast<size_t>(r - 2)];
  const Dim& dm = t->shape[static_cast<size_t>(r - 1)];
  if (!dn.is_static() || !dm.is_static()) return c.Unsupported("Trilu needs static last two dims");
  int64_t k = 0;
  KILN_ASSIGN_OR_RETURN(int64_t upper, c.AttrInt("upper", 1));
  const int64_t n = dn.value(), m = dm.value();
  KILN_RETURN_IF_ERROR(CheckConstantSize(c, {n, m}, "Trilu's mask"));
  if (c.HasInput(1)) {
    absl::StatusOr<std::optional<std::vector<int64_t>>> kv = c.ConstantInts(1);
    if (!kv.ok() && NeedsValue(kv.status())) {
      // k at run time: the mask compares the constant j - i with it.
      KILN_ASSIGN_OR_RETURN(TensorType kt, c.InputType(1));
      if (!ShapeIsStatic(kt->shape) || kt->ndim() > 1 ||
          (kt->ndim() == 1 && kt->shape[0].value() != 1))
        return c.Invalid(absl::StrCat("k must hold one element; its type is ", TypeToString(Type(kt))));
      KILN_ASSIGN_OR_RETURN(Expr kx, c.Input(1));
      KILN_ASSIGN_OR_RETURN(kx, Cast(c, kx, DataType::Int(64)));
      if (kt->ndim() == 1) {
        KILN_ASSIGN_OR_RETURN(kx, Reshape(c, kx, {}));
      }
      std::vector<double> diff(static_cast<size_t>(n * m));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) diff[static_cast<size_t>(i * m + j)] = static_cast<double>(j - i);
      KILN_ASSIGN_OR_RETURN(Expr d, ConstOf(c, DataType::Int(64), {n, m}, diff));
      KILN_ASSIGN_OR_RETURN(Expr mask, c.Call(upper != 0 ? "greater_equal" : "less_equal", {d, kx}));
      KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(t->dtype, 0));
      KILN_ASSIGN_OR_RETURN(Expr y, c.Call("where", {mask, x, zero}));
      return std::vector<Expr>{y};
    }
    if (!kv.ok()) return kv.status();
    if (!*kv || (*kv)->size() != 1) return c.Invalid("k must hold one element");
    k = (**kv)[0];
  }
  std::vector<double> mask(static_cast<size_t>(n * m), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      const __int128 diff = static_cast<__int128>(j) - i;
      mask[static_cast<size_t>(i * m + j)] = (upper != 0 ? diff >= k : diff <= k) ? 1.0 : 0.0;
    }
  KILN_ASSIGN_OR_RETURN(Expr mask_c, ConstOf(c, DataType::Bool(), {n, m}, mask));
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(t->dtype, 0));
  KILN_ASSIGN_OR_RETURN(Expr y, c.Call("where", {mask_c, x, zero}));
  return std::vector<Expr>{y};
}

// CumSum as a Hillis-Steele scan: y += shift(y, s) for s = 1, 2, 4, ... < n,
// where shift(y, s) pads s zeros in front along the axis and drops the last s.
absl::StatusOr<Expr> CumSumAlong(ConvertContext& c, const Expr& x, const TensorType& t,
                                 int64_t axis, int64_t exclusive, int64_t reverse);

// With the axis at run time: the scan along every axis, the one the value
// names selected (where(axis == a, ...)); a value out of range selects the
// last axis's scan (the model is invalid then; ONNX Runtime refuses it).
Outs ConvertCumSum(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(int64_t exclusive, c.AttrInt("exclusive", 0));
  KILN_ASSIGN_OR_RETURN(int64_t reverse, c.AttrInt("reverse", 0));
  absl::StatusOr<std::optional<std::vector<int64_t>>> av_or = c.ConstantInts(1);
  if (!av_or.ok() && NeedsValue(av_or.status())) {
    const int64_t r = t->ndim();
    if (r == 0) return c.Invalid("CumSum of a 0-D tensor");
    KILN_ASSIGN_OR_RETURN(TensorType at, c.InputType(1));
    if (!ShapeIsStatic(at->shape) || at->ndim() > 1 || (at->ndim() == 1 && at->shape[0].value() != 1))
      return c.Invalid(absl::StrCat("input 1 (axis) must be a scalar; it is ", TypeToString(Type(at))));
    KILN_ASSIGN_OR_RETURN(Expr a, c.Input(1));
    KILN_ASSIGN_OR_RETURN(a, Cast(c, a, DataType::Int(64)));
    if (at->ndim() == 1) {
      KILN_ASSIGN_OR_RETURN(a, Reshape(c, a, {}));
    }
    KILN_ASSIGN_OR_RETURN(Expr rank, c.ScalarConst(DataType::Int(64), static_cast<double>(r)));
    KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(DataType::Int(64), 0));
    KILN_ASSIGN_OR_RETURN(Expr neg, c.Call("less", {a, zero}));
    KILN_ASSIGN_OR_RETURN(Expr shifted, c.Call("add", {a, rank}));
    KILN_ASSIGN_OR_RETURN(Expr norm, c.Call("where", {neg, shifted, a}));
    KILN_ASSIGN_OR_RETURN(Expr y, CumSumAlong(c, x, t, r - 1, exclusive, reverse));
    for (int64_t ax = r - 2; ax >= 0; --ax) {
      KILN_ASSIGN_OR_RETURN(Expr s, CumSumAlong(c, x, t, ax, exclusive, reverse));
      KILN_ASSIGN_OR_RETURN(Expr k, c.ScalarConst(DataType::Int(64), static_cast<double>(ax)));
      KILN_ASSIGN_OR_RETURN(Expr is, c.Call("equal", {norm, k}));
      KILN_ASSIGN_OR_RETURN(y, c.Call("where", {is, s, y}));
    }
    return std::vector<Expr>{y};
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> av, std::move(av_or));
  if (!av || av->size() != 1) return c.Invalid("input 1 (axis) must be a scalar");
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, (*av)[0], t->ndim()));
  KILN_ASSIGN_OR_RETURN(Expr y, CumSumAlong(c, x, t, axis, exclusive, reverse));
  return std::vector<Expr>{y};
}

absl::StatusOr<Expr> CumSumAlong(ConvertContext& c, const Expr& x, const TensorType& t,
                                 int64_t axis, int64_t exclusive, int64_t reverse) {
  const Dim& dn = t->shape[static_cast<size_t>(axis)];
  if (!dn.is_static()) return c.Unsupported("CumSum needs a static extent along its axis");
  const int64_t n = dn.value();
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(t->dtype, 0));
  auto shift = [&](const Expr& y, int64_t s) -> absl::StatusOr<Expr> {
    auto pa = NewAttrs<PadAttrs>();
    pa->pad_width.assign(static_cast<size_t>(t->ndim()), {0, 0});
    pa->pad_width[static_cast<size_t>(axis)] = {s, 0};
    KILN_ASSIGN_OR_RETURN(Expr p, c.Call("nn.pad", {y, zero}, pa));
    return SliceAxis(c, p, axis, 0, n);
  };
  auto flip = [&](const Expr& y) { return SliceAxis(c, y, axis, -1, kI64Min, -1); };
  Expr y = x;
  if (n == 0) return y;
  if (reverse != 0) {
    KILN_ASSIGN_OR_RETURN(y, flip(y));
  }
  if (exclusive != 0) {
    KILN_ASSIGN_OR_RETURN(y, shift(y, 1));
  }
  for (int64_t s = 1; s < n; s *= 2) {
    KILN_ASSIGN_OR_RETURN(Expr sh, shift(y, s));
    KILN_ASSIGN_OR_RETURN(y, c.Call("add", {y, sh}));
  }
  if (reverse != 0) {
    KILN_ASSIGN_OR_RETURN(y, flip(y));
  }
  return y;
}


// ReverseSequence: along time_axis, the first seq_lens[b] steps of each batch
// item b reversed, the rest kept: src_t = t < len ? len - 1 - t : t, an index
// tensor (computed from seq_lens, which may be a graph input) broadcast to the
// input's shape, gathered as GatherElements along time_axis.
Outs ConvertReverseSequence(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr lens, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> xd, StaticDims(c, xt, "the input"));
  const int64_t r = static_cast<int64_t>(xd.size());
  if (r < 2) return c.Invalid("the input must have rank >= 2");
  KILN_ASSIGN_OR_RETURN(int64_t time_axis, c.AttrInt("time_axis", 0));
  KILN_ASSIGN_OR_RETURN(int64_t batch_axis, c.AttrInt("batch_axis", 1));
  if ((time_axis != 0 && time_axis != 1) || batch_axis != 1 - time_axis)
    return c.Invalid("time_axis and batch_axis must be 0 and 1 (in either order)");
  // Shapes [T, B] or [B, T], with unit dims for the rest.
  std::vector<int64_t> tb(static_cast<size_t>(r), 1);
  tb[static_cast<size_t>(time_axis)] = xd[static_cast<size_t>(time_axis)];
  std::vector<int64_t> b1(static_cast<size_t>(r), 1);
  b1[static_cast<size_t>(batch_axis)] = xd[static_cast<size_t>(batch_axis)];
  KILN_ASSIGN_OR_RETURN(Expr len, Cast(c, lens, DataType::Int(64)));
  KILN_ASSIGN_OR_RETURN(len, Reshape(c, len, b1, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(Expr steps, ConstI64(c, tb, IotaInts(0, tb[static_cast<size_t>(time_axis)])));
  KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(DataType::Int(64), 1));
  KILN_ASSIGN_OR_RETURN(Expr inside, Binary(c, "less", steps, len));
  KILN_ASSIGN_OR_RETURN(Expr last, Binary(c, "subtract", len, one));
  KILN_ASSIGN_OR_RETURN(Expr rev, Binary(c, "subtract", last, steps));
  KILN_ASSIGN_OR_RETURN(Expr src, c.Call("where", {inside, rev, steps}));
  KILN_ASSIGN_OR_RETURN(src, BroadcastTo(c, src, xd));
  KILN_ASSIGN_OR_RETURN(Expr flat, ElementFlatIndex(c, src, xd, xd, time_axis));
  KILN_ASSIGN_OR_RETURN(Expr y, Take(c, x, flat, std::nullopt));
  return std::vector<Expr>{y};
}

// ---- scatters ---------------------------------------------------------------------

// Scatters match every data row r with every update j (target_j == r), so they
// cost rows x updates (x row length for add/mul) elements; beyond this many
// the conversion is refused (kiln has no scatter operator).
constexpr int64_t kMaxMatch = int64_t{1} << 24;

// Rows of data2 [R, T] replaced by (none), or combined with (add, mul), the
// rows of upd2 [J, T] whose target row (rows [J], int64) they are. With
// duplicate targets "none" takes the last update, as ONNX's reference loop.
absl::StatusOr<Expr> ScatterRows(ConvertContext& c, Expr data2, Expr rows, Expr upd2, int64_t R,
                                 int64_t J, int64_t T, const std::string& reduction) {
  if (J == 0) return data2;
  KILN_ASSIGN_OR_RETURN(TensorType dt, TypeOf(data2));
  if (R * J * (reduction == "none" ? 1 : std::max<int64_t>(T, 1)) > kMaxMatch)
    return c.Unsupported(absl::StrCat("a scatter of ", J, " updates into ", R,
                                      " rows (composed as a match of every row with every update, "
                                      "which is limited to ", kMaxMatch, " elements)"));
  KILN_ASSIGN_OR_RETURN(Expr pos, ConstI64(c, {R, 1}, IotaInts(0, R)));
  KILN_ASSIGN_OR_RETURN(Expr targets, Reshape(c, rows, {1, J}));
  KILN_ASSIGN_OR_RETURN(Expr match, Binary(c, "equal", pos, targets));  // [R, J]
  if (reduction == "none") {
    KILN_ASSIGN_OR_RETURN(Expr jc, ConstI64(c, {1, J}, IotaInts(0, J)));
    KILN_ASSIGN_OR_RETURN(Expr none, c.ScalarConst(DataType::Int(64), -1));
    KILN_ASSIGN_OR_RETURN(Expr sel, c.Call("where", {match, jc, none}));
    KILN_ASSIGN_OR_RETURN(Expr last, Reduce(c, "max", sel, {1}, false));  // [R]
    KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(DataType::Int(64), 0));
    KILN_ASSIGN_OR_RETURN(Expr has, Binary(c, "greater_equal", last, zero));
    KILN_ASSIGN_OR_RETURN(Expr safe, Binary(c, "maximum", last, zero));
    KILN_ASSIGN_OR_RETURN(Expr picked, Take(c, upd2, safe, 0));  // [R, T]
    KILN_ASSIGN_OR_RETURN(has, Reshape(c, has, {R, 1}));
    return c.Call("where", {has, picked, data2});
  }
  const bool add = reduction == "add";
  KILN_ASSIGN_OR_RETURN(Expr m3, Reshape(c, match, {R, J, 1}));
  KILN_ASSIGN_OR_RETURN(Expr u3, Reshape(c, upd2, {1, J, T}, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(Expr neutral, c.ScalarConst(dt->dtype, add ? 0 : 1));
  KILN_ASSIGN_OR_RETURN(Expr w, c.Call("where", {m3, u3, neutral}));  // [R, J, T]
  KILN_ASSIGN_OR_RETURN(Expr red, Reduce(c, add ? "sum" : "prod", w, {1}, false));
  return Binary(c, add ? "add" : "multiply", data2, red);
}

absl::StatusOr<std::string> ScatterReduction(const ConvertContext& c) {
  if (c.opset() < 16 || c.node().op_type() == "Scatter") return std::string("none");
  KILN_ASSIGN_OR_RETURN(std::string reduction, c.AttrString("reduction", "none"));
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    return c.Unsupported(absl::StrCat("reduction \"", reduction, "\""));
  return reduction;
}

// Scatter (opset 9-10) and ScatterElements: the target of each update is
// ElementFlatIndex; data is [P, 1] rows of one element.
Outs ConvertScatterElements(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr data, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr idx, c.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr upd, c.Input(2));
  KILN_ASSIGN_OR_RETURN(ElementArgs a, ReadElementArgs(c));
  KILN_ASSIGN_OR_RETURN(std::string reduction, ScatterReduction(c));
  const int64_t P = Product(a.dd), J = Product(a.id);
  KILN_ASSIGN_OR_RETURN(Expr flat, ElementFlatIndex(c, idx, a.dd, a.id, a.axis));
  KILN_ASSIGN_OR_RETURN(flat, Reshape(c, flat, {J}, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(Expr d2, Reshape(c, data, {P, 1}, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(Expr u2, Reshape(c, upd, {J, 1}, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(Expr y, ScatterRows(c, d2, flat, u2, P, J, 1, reduction));
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, a.dd, /*allowzero=*/true));
  return std::vector<Expr>{y};
}

// ScatterND: indices [..., k] address rows of data viewed as
// [prod(data[:k]), prod(data[k:])]; updates are [..., data[k:]...].
Outs ConvertScatterND(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr data, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr idx, c.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr upd, c.Input(2));
  KILN_ASSIGN_OR_RETURN(TensorType dt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(TensorType it, c.InputType(1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dd, StaticDims(c, dt, "data"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> id, StaticDims(c, it, "indices"));
  KILN_ASSIGN_OR_RETURN(std::string reduction, ScatterReduction(c));
  if (id.empty() || id.back() < 1 || id.back() > static_cast<int64_t>(dd.size()))
    return c.Invalid(absl::StrCat("indices ", ShapeToString(it->shape), " do not index data ",
                                  ShapeToString(dt->shape)));
  const size_t k = static_cast<size_t>(id.back());
  const std::vector<int64_t> inner(dd.begin(), dd.begin() + static_cast<int64_t>(k));
  const int64_t R = Product(inner), T = Product(dd, k), J = Product(id, 0, id.size() - 1);
  KILN_ASSIGN_OR_RETURN(Expr rows, TupleRowIndex(c, idx, inner));
  KILN_ASSIGN_OR_RETURN(rows, Reshape(c, rows, {J}, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(Expr d2, Reshape(c, data, {R, T}, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(Expr u2, Reshape(c, upd, {J, T}, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(Expr y, ScatterRows(c, d2, rows, u2, R, J, T, reduction));
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, dd, /*allowzero=*/true));
  return std::vector<Expr>{y};
}

// ---- TopK ------------------------------------------------------------------------

// TopK by ranks: rank_i = #{j : x_j before x_i} with "before" = larger
// (smaller) or equal with a lower index (ONNX's order), from an [n, n]
// comparison along the axis; output p gathers the element of rank p (a sum of
// where(rank == p, x, 0): one nonzero term). Cost n x n per row, limited to
// kMaxMatch elements. NaN has no rank (ONNX leaves it unspecified too).
Outs ConvertTopK(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  const int64_t r = t->ndim();
  if (r < 1) return c.Invalid("input must have rank >= 1");
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", -1));
  KILN_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, r));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, t, "the input"));
  int64_t k = 0;
  // K known only at run time: the whole axis is ranked, then cut to K
  // (dyn.strided_slice; the VM computes the output extent from K's value).
  std::optional<Expr> run_time_k;
  if (c.opset() < 10) {
    KILN_ASSIGN_OR_RETURN(k, c.AttrInt("k", 0));
  } else {
    absl::StatusOr<std::optional<std::vector<int64_t>>> kv = c.ConstantInts(1);
    if (!kv.ok() && NeedsValue(kv.status())) {
      KILN_ASSIGN_OR_RETURN(TensorType kt, c.InputType(1));
      if (kt->ndim() > 1 || (kt->ndim() == 1 && !(kt->shape[0].is_static() && kt->shape[0].value() == 1)))
        return c.Invalid(absl::StrCat("K must hold one element; it is ", TypeToString(Type(kt))));
      KILN_ASSIGN_OR_RETURN(Expr kin, c.Input(1));
      run_time_k = kin;
      k = dims[static_cast<size_t>(axis)];
    } else {
      KILN_RETURN_IF_ERROR(kv.status());
      if (!*kv || (*kv)->size() != 1) return c.Invalid("K must hold one element");
      k = (**kv)[0];
    }
  }
  int64_t largest = 1;
  if (c.opset() >= 11) {
    KILN_ASSIGN_OR_RETURN(largest, c.AttrInt("largest", 1));
  }
  const int64_t n = dims[static_cast<size_t>(axis)];
  if (k < 0 || k > n) return c.Invalid(absl::StrCat("K ", k, " is not in [0, ", n, "]"));
  if (Product(dims) * n > kMaxMatch)
    return c.Unsupported(absl::StrCat("TopK over ", n, " elements of ", ShapeToString(t->shape),
                                      " (composed as an n x n comparison, limited to ", kMaxMatch,
                                      " elements; kiln has no sort operator)"));
  const size_t trail = static_cast<size_t>(r - axis - 1);
  auto shaped = [&](std::vector<int64_t> lead) {
    lead.insert(lead.end(), trail, 1);
    return lead;
  };
  // i along `axis`, j along axis + 1.
  KILN_ASSIGN_OR_RETURN(Expr xi, ExpandDims(c, x, axis + 1));
  KILN_ASSIGN_OR_RETURN(Expr xj, ExpandDims(c, x, axis));
  KILN_ASSIGN_OR_RETURN(Expr better, Binary(c, largest != 0 ? "greater" : "less", xj, xi));
  KILN_ASSIGN_OR_RETURN(Expr same, Binary(c, "equal", xj, xi));
  std::vector<double> lower(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j) lower[static_cast<size_t>(i * n + j)] = 1.0;
  KILN_ASSIGN_OR_RETURN(Expr lower_c, ConstOf(c, DataType::Bool(), shaped({n, n}), lower));
  KILN_ASSIGN_OR_RETURN(Expr tie, Binary(c, "logical_and", same, lower_c));
  KILN_ASSIGN_OR_RETURN(Expr before, Binary(c, "logical_or", better, tie));
  KILN_ASSIGN_OR_RETURN(before, Cast(c, before, DataType::Int(64)));
  KILN_ASSIGN_OR_RETURN(Expr rank, Reduce(c, "sum", before, {axis + 1}, false));  // x's shape
  KILN_ASSIGN_OR_RETURN(rank, ExpandDims(c, rank, axis + 1));                      // [.., n, 1, ..]
  KILN_ASSIGN_OR_RETURN(Expr pc, ConstI64(c, shaped({1, k}), IotaInts(0, k)));
  KILN_ASSIGN_OR_RETURN(Expr sel, Binary(c, "equal", rank, pc));                   // [.., n, k, ..]
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(t->dtype, 0));
  KILN_ASSIGN_OR_RETURN(Expr vals, c.Call("where", {sel, xi, zero}));
  KILN_ASSIGN_OR_RETURN(vals, Reduce(c, "sum", vals, {axis}, false));
  KILN_ASSIGN_OR_RETURN(Expr ic, ConstI64(c, shaped({n, 1}), IotaInts(0, n)));
  KILN_ASSIGN_OR_RETURN(Expr izero, c.ScalarConst(DataType::Int(64), 0));
  KILN_ASSIGN_OR_RETURN(Expr inds, c.Call("where", {sel, ic, izero}));
  KILN_ASSIGN_OR_RETURN(inds, Reduce(c, "sum", inds, {axis}, false));
  if (run_time_k) {
    KILN_ASSIGN_OR_RETURN(vals, DynamicSliceAlong(c, vals, axis, *run_time_k));
    KILN_ASSIGN_OR_RETURN(inds, DynamicSliceAlong(c, inds, axis, *run_time_k));
  }
  return std::vector<Expr>{vals, inds};
}

}  // namespace

void RegisterIndexConverters(ConverterRegistry& r) {
  for (int v : {1, 11, 13}) r.Add("Gather", v, ConvertGather);
  for (int v : {11, 13}) r.Add("GatherElements", v, ConvertGatherElements);
  for (int v : {11, 12, 13}) r.Add("GatherND", v, ConvertGatherND);
  for (int v : {9, 11}) r.Add("OneHot", v, ConvertOneHot);
  r.Add("Trilu", 14, ConvertTrilu);
  for (int v : {11, 14}) r.Add("CumSum", v, ConvertCumSum);
  r.Add("ReverseSequence", 10, ConvertReverseSequence);
  r.Add("Scatter", 9, ConvertScatterElements);
  for (int v : {11, 13, 16}) r.Add("ScatterElements", v, ConvertScatterElements);
  for (int v : {11, 13, 16}) r.Add("ScatterND", v, ConvertScatterND);
  for (int v : {1, 10, 11}) r.Add("TopK", v, ConvertTopK);
}

}  // namespace kiln::onnx_frontend::cvt
