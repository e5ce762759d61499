// File: lowering/compute/tensor/transform.cc
//
// Data-movement operators (tag "injective"), as interpreter/kernels_transform.cc:
// reshape, transpose, concatenate, split, strided_slice, take, expand_dims,
// squeeze. Output shapes come from the call's type; reshape-like ops map an
// output element to the input element with the same row-major flat index.
//
// take: "clip" clamps an index into [0, n - 1]; "wrap" takes it modulo n
// (floor modulo: negative indices wrap from the end); "fast" counts a
// negative index from the end like the interpreter, and then clamps too, so
// that compiled code never reads out of bounds (the interpreter reports an
// index outside [-n, n) as an error).
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/strided_slice.h"
#include "ir/status_macros.h"
#include "lowering/compute/tensor/families.h"
#include "lowering/compute/tensor/tensor_util.h"

namespace kiln::lowering::tensor {
namespace {

using Result = absl::StatusOr<std::vector<te::Tensor>>;

te::Tensor Injective(const ComputeCtx& ctx, const Shape& shape, const te::FCompute& f,
                     const std::string& name = "") {
  return te::Compute(shape, f, name.empty() ? ComputeName(ctx) : name, "injective");
}

// Only when both element counts are static can a mismatch be seen here.
absl::Status CheckSameSize(const ComputeCtx& ctx, const Shape& in, const Shape& out) {
  int64_t a = 0, b = 0;
  if (IsConst(Product(in), &a) && IsConst(Product(out), &b) && a != b)
    return ctx.Error(absl::StrCat("the input has ", a, " elements but the output type ", b));
  return absl::OkStatus();
}

Result Reshape(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const Shape& shape = ctx.out_shapes[0];
  KILN_RETURN_IF_ERROR(CheckSameSize(ctx, x.shape(), shape));
  return std::vector<te::Tensor>{
      Injective(ctx, shape, [&](const std::vector<Var>& i) { return ReshapeRead(x, shape, i); })};
}

Result Transpose(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const auto& axes = ctx.Attrs<TransposeAttrs>().axes;
  const int64_t nd = x.ndim();
  std::vector<size_t> perm;
  if (!axes) {
    for (int64_t i = nd - 1; i >= 0; --i) perm.push_back(static_cast<size_t>(i));
  } else {
    if (static_cast<int64_t>(axes->size()) != nd)
      return ctx.Error(absl::StrCat("axes must list all ", nd, " axes; got ", axes->size()));
    std::vector<bool> seen(static_cast<size_t>(nd), false);
    for (int64_t ax : *axes) {
      KILN_ASSIGN_OR_RETURN(int64_t p, NormAxis(ctx, ax, nd, "axes entry"));
      if (seen[static_cast<size_t>(p)]) return ctx.Error("axes is not a permutation");
      seen[static_cast<size_t>(p)] = true;
      perm.push_back(static_cast<size_t>(p));
    }
  }
  const Shape& shape = ctx.out_shapes[0];
  if (shape.size() != perm.size())
    return ctx.Error(absl::StrCat("the output type has rank ", shape.size(), "; expected ", nd));
  return std::vector<te::Tensor>{Injective(ctx, shape, [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) idx[perm[d]] = i[d];
    return x(idx);
  })};
}

PrimExpr IfThenElse(const PrimExpr& c, const PrimExpr& t, const PrimExpr& f) {
  return tir::Call(t->dtype, "if_then_else", {c, t, f});
}

Result Concatenate(const ComputeCtx& ctx) {
  if (ctx.inputs.empty()) return ctx.Error("argument 0 must be a non-empty tuple of tensors");
  KILN_RETURN_IF_ERROR(CheckArity(ctx, ctx.inputs.size()));
  const te::Tensor& t0 = ctx.inputs[0];
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(ctx, ctx.Attrs<ConcatenateAttrs>().axis, t0.ndim()));
  const size_t ax = static_cast<size_t>(axis);
  // The fields that can be read (a static extent 0 never is) and their offsets.
  std::vector<const te::Tensor*> parts;
  std::vector<PrimExpr> offsets;
  PrimExpr off = Idx(0);
  for (const te::Tensor& t : ctx.inputs) {
    if (t.ndim() != t0.ndim() || t.dtype() != t0.dtype())
      return ctx.Error("every field must have the rank and dtype of field 0");
    int64_t e = 0;
    if (IsConst(t.shape()[ax], &e) && e == 0) continue;
    parts.push_back(&t);
    offsets.push_back(off);
    off = IAdd(off, t.shape()[ax]);
  }
  const Shape& shape = ctx.out_shapes[0];
  const DataType dt = ctx.out_dtypes[0];
  // Past this many fields, the concatenation is a stage of its own, which
  // keeps the generated code linear in the number of fields. Along the last
  // axis a vector of the output would gather from many tensors (every lane
  // walking the tree): a scalar loop per element (log2(fields) compares
  // each). Along another axis the tree's conditions are the same for every
  // lane of the last axis, so the lanes stay one vector copy per branch (64
  // LSTM steps' [1, 512] outputs concatenated: 1.1 ms as a scalar loop).
  constexpr size_t kWideConcat = 16;
  std::map<std::string, std::string> attrs;
  if (parts.size() > kWideConcat) {
    attrs.emplace("no_inline", "1");
    if (ax + 1 == static_cast<size_t>(t0.ndim())) attrs.emplace("kiln.no_vectorize", "1");
  }
  return std::vector<te::Tensor>{te::Compute(shape, [&](const std::vector<Var>& i) -> PrimExpr {
    if (parts.empty()) return tir::MakeConst(dt, 0);  // an empty output
    auto read = [&](size_t p) {
      std::vector<PrimExpr> idx(i.begin(), i.end());
      idx[ax] = ISub(i[ax], offsets[p]);
      return (*parts[p])(idx);
    };
    // A balanced tree of if_then_else on the axis index (only the taken
    // branch is evaluated: no read out of bounds): depth log2(parts), so a
    // concatenation of thousands of tensors does not make an expression
    // thousands deep for every pass that walks it.
    std::function<PrimExpr(size_t, size_t)> pick = [&](size_t lo, size_t hi) -> PrimExpr {
      if (hi - lo == 1) return read(lo);
      const size_t mid = lo + (hi - lo) / 2;
      return IfThenElse(tir::LT(i[ax], offsets[mid]), pick(lo, mid), pick(mid, hi));
    };
    return pick(0, parts.size());
  }, ComputeName(ctx), "injective", std::move(attrs))};
}

Result Split(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const SplitAttrs& a = ctx.Attrs<SplitAttrs>();
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(ctx, a.axis, x.ndim()));
  const size_t ax = static_cast<size_t>(axis);
  if (a.sections < 0) return ctx.Error(absl::StrCat("sections must be >= 0; got ", a.sections));
  const size_t n_parts = a.sections > 0 ? static_cast<size_t>(a.sections) : a.indices.size() + 1;
  if (ctx.out_shapes.size() != n_parts)
    return ctx.Error(absl::StrCat("the output type has ", ctx.out_shapes.size(),
                                  " fields; the attributes give ", n_parts));
  std::vector<te::Tensor> outs;
  PrimExpr offset = Idx(0);
  for (size_t p = 0; p < n_parts; ++p) {
    const Shape& shape = ctx.out_shapes[p];
    if (shape.size() != static_cast<size_t>(x.ndim()))
      return ctx.Error(absl::StrCat("output field ", p, " has the wrong rank"));
    // Part p starts where the parts before it end (their extents are in the type).
    outs.push_back(Injective(
        ctx, shape,
        [&](const std::vector<Var>& i) {
          std::vector<PrimExpr> idx(i.begin(), i.end());
          idx[ax] = IAdd(i[ax], offset);
          return x(idx);
        },
        absl::StrCat(ComputeName(ctx), "_", p)));
    offset = IAdd(offset, shape[ax]);
  }
  return outs;
}

Result StridedSlice(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const int64_t nd = x.ndim();
  absl::StatusOr<StridedSlicePlan> plan =
      PlanStridedSlice(ctx.Attrs<StridedSliceAttrs>(), nd, x.dtype().ToString() + " input");
  if (!plan.ok()) return ctx.Error(std::string(plan.status().message()));
  const Shape& in = x.shape();
  std::vector<PrimExpr> begin(static_cast<size_t>(nd), Idx(0));
  std::vector<int64_t> step(static_cast<size_t>(nd), 1);
  for (const SlicedAxis& s : plan->axes) {
    const size_t ax = static_cast<size_t>(s.axis);
    const PrimExpr& n = in[ax];
    const int64_t st = s.stride;
    // The interpreter's normalization (ir/strided_slice.h) on a symbolic
    // extent: negative from the end, clamped to [0, n] (positive stride) or
    // [-1, n - 1] (negative stride).
    const PrimExpr lo = Idx(st > 0 ? 0 : -1), hi = st > 0 ? n : ISub(n, Idx(1));
    if (s.begin) {
      const int64_t v = std::clamp(*s.begin, -kSliceBig, kSliceBig);
      const PrimExpr w = v < 0 ? IAdd(Idx(v), n) : Idx(v);
      begin[ax] = IMax(IMin(w, hi), lo);
    } else {
      begin[ax] = st > 0 ? Idx(0) : ISub(n, Idx(1));
    }
    step[ax] = st;
  }
  const Shape& shape = ctx.out_shapes[0];
  if (static_cast<int64_t>(shape.size()) != nd)
    return ctx.Error(absl::StrCat("the output type has rank ", shape.size(), "; expected ", nd));
  return std::vector<te::Tensor>{Injective(ctx, shape, [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx(static_cast<size_t>(nd));
    for (size_t d = 0; d < idx.size(); ++d) idx[d] = IAdd(begin[d], IMul(i[d], Idx(step[d])));
    return x(idx);
  })};
}

Result Take(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 2));
  const te::Tensor& x = ctx.inputs[0];
  const te::Tensor& ind = ctx.inputs[1];
  const TakeAttrs& a = ctx.Attrs<TakeAttrs>();
  if (!ind.dtype().is_int() && !ind.dtype().is_uint())
    return ctx.Error(absl::StrCat("indices must be an integer tensor; got ", ind.dtype().ToString()));
  if (a.mode != "clip" && a.mode != "wrap" && a.mode != "fast")
    return ctx.Error(absl::StrCat("mode must be \"clip\", \"wrap\" or \"fast\"; got \"", a.mode, "\""));
  Shape xs = x.shape();
  const bool flat = !a.axis.has_value();
  int64_t axis = 0, bd = 0;
  if (flat) {
    if (a.batch_dims != 0) return ctx.Error("batch_dims needs an axis");
    xs = {Product(x.shape())};
  } else {
    KILN_ASSIGN_OR_RETURN(axis, NormAxis(ctx, *a.axis, x.ndim()));
    bd = a.batch_dims < 0 ? a.batch_dims + ind.ndim() : a.batch_dims;
    if (bd < 0 || bd > ind.ndim() || bd > axis)
      return ctx.Error(absl::StrCat("batch_dims ", a.batch_dims, " is out of range"));
  }
  const size_t ax = static_cast<size_t>(axis), nbd = static_cast<size_t>(bd);
  const size_t n_idx = static_cast<size_t>(ind.ndim()) - nbd;
  const Shape& shape = ctx.out_shapes[0];
  if (shape.size() != xs.size() - 1 + n_idx)
    return ctx.Error(absl::StrCat("the output type has rank ", shape.size(), "; expected ",
                                  xs.size() - 1 + n_idx));
  const PrimExpr n = xs[ax];
  int64_t n_static = -1;
  const bool known = IsConst(n, &n_static);
  const DataType dt = ctx.out_dtypes[0];
  const std::string mode = a.mode;
  const bool u64 = ind.dtype().is_uint() && ind.dtype().bits() == 64;
  return std::vector<te::Tensor>{Injective(ctx, shape, [&](const std::vector<Var>& i) -> PrimExpr {
    if (known && n_static == 0) return tir::MakeConst(dt, 0);  // nothing to read from
    std::vector<PrimExpr> ii;
    for (size_t d = 0; d < nbd; ++d) ii.push_back(i[d]);
    for (size_t d = 0; d < n_idx; ++d) ii.push_back(i[ax + d]);
    PrimExpr k = tir::Cast(tir::kIndexType, ind(ii));
    // A uint64 index above 2^63 is out of range (the interpreter: n).
    if (u64) k = tir::Select(tir::LT(k, Idx(0)), n, k);
    const PrimExpr last = ISub(n, Idx(1));
    if (mode == "wrap") {
      k = tir::FloorMod(k, known ? n : PrimExpr(tir::Max(n, Idx(1))));
    } else {
      if (mode == "fast") k = tir::Select(tir::LT(k, Idx(0)), tir::Add(k, n), k);
      k = tir::Min(tir::Max(k, Idx(0)), last);
    }
    std::vector<PrimExpr> src;
    for (size_t d = 0; d < ax; ++d) src.push_back(i[d]);
    src.push_back(k);
    for (size_t d = ax + 1; d < xs.size(); ++d) src.push_back(i[d - 1 + n_idx]);
    const PrimExpr v = flat ? x(Unravel(k, x.shape())) : x(src);
    if (known) return v;
    // An axis of run-time extent 0 has nothing to read.
    return IfThenElse(tir::GT(n, Idx(0)), v, tir::MakeConst(dt, 0));
  })};
}

Result ExpandDims(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const ExpandDimsAttrs& a = ctx.Attrs<ExpandDimsAttrs>();
  const int64_t nd = x.ndim();
  if (a.num_newaxis < 0 || a.axis < -nd - 1 || a.axis > nd)
    return ctx.Error(absl::StrCat("axis ", a.axis, " / num_newaxis ", a.num_newaxis,
                                  " out of range for a ", nd, "-D tensor"));
  const size_t axis = static_cast<size_t>(a.axis < 0 ? a.axis + nd + 1 : a.axis);
  const size_t k = static_cast<size_t>(a.num_newaxis);
  const Shape& shape = ctx.out_shapes[0];
  if (shape.size() != static_cast<size_t>(nd) + k)
    return ctx.Error(absl::StrCat("the output type has rank ", shape.size(), "; expected ", nd + a.num_newaxis));
  return std::vector<te::Tensor>{Injective(ctx, shape, [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx;
    for (size_t d = 0; d < shape.size(); ++d)
      if (d < axis || d >= axis + k) idx.push_back(i[d]);
    return x(idx);
  })};
}

Result Squeeze(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const auto& axis = ctx.Attrs<SqueezeAttrs>().axis;
  const Shape& in = x.shape();
  std::vector<bool> drop(in.size(), false);
  if (!axis) {
    // As the type relation: every static 1 (a symbolic dim stays).
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t v = 0;
      drop[d] = IsConst(in[d], &v) && v == 1;
    }
  } else {
    for (int64_t ax : *axis) {
      KILN_ASSIGN_OR_RETURN(int64_t p, NormAxis(ctx, ax, x.ndim()));
      int64_t v = 0;
      if (IsConst(in[static_cast<size_t>(p)], &v) && v != 1)
        return ctx.Error(absl::StrCat("cannot squeeze axis ", p, " of extent ", v, ": not 1"));
      drop[static_cast<size_t>(p)] = true;
    }
  }
  const Shape& shape = ctx.out_shapes[0];
  const size_t kept = static_cast<size_t>(std::count(drop.begin(), drop.end(), false));
  if (shape.size() != kept)
    return ctx.Error(absl::StrCat("the output type has rank ", shape.size(), "; expected ", kept));
  return std::vector<te::Tensor>{Injective(ctx, shape, [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx;
    size_t j = 0;
    for (size_t d = 0; d < in.size(); ++d) idx.push_back(drop[d] ? Idx(0) : PrimExpr(i[j++]));
    return x(idx);
  })};
}

}  // namespace

void RegisterTransformComputes() {
  Attach("reshape", Reshape);
  Attach("transpose", Transpose);
  Attach("concatenate", Concatenate);
  Attach("split", Split);
  Attach("strided_slice", StridedSlice);
  Attach("take", Take);
  Attach("expand_dims", ExpandDims);
  Attach("squeeze", Squeeze);
}

}  // namespace kiln::lowering::tensor
