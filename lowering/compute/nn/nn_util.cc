// File: lowering/compute/nn/nn_util.cc
#include "lowering/compute/nn/nn_util.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/layout.h"
#include "ir/op.h"

namespace kiln::lowering::nn_internal {

using tir::IntImm;

void AddCompute(const char* name, FTCompute fn) {
  // A second registration (or an op missing from a selective build) is not
  // an error worth failing startup for: the lookup reports a missing facet.
  (void)OpRegistry::Global().SetFacet<FTCompute>(name, kComputeFacet, std::move(fn));
}

absl::Status CheckNumInputs(const ComputeCtx& ctx, size_t n) {
  if (ctx.inputs.size() != n)
    return ctx.Error(absl::StrCat("expects ", n, " input tensors; got ", ctx.inputs.size()));
  for (size_t i = 0; i < n; ++i)
    if (!ctx.inputs[i].defined()) return ctx.Error(absl::StrCat("input ", i, " is undefined"));
  return absl::OkStatus();
}

absl::Status CheckOutputs(const ComputeCtx& ctx, const std::vector<int>& ndims) {
  if (ctx.out_shapes.size() != ndims.size() || ctx.out_dtypes.size() != ndims.size())
    return ctx.Error(absl::StrCat("the call's type has ", ctx.out_shapes.size(),
                                  " outputs; expected ", ndims.size()));
  for (size_t i = 0; i < ndims.size(); ++i)
    if (static_cast<int>(ctx.out_shapes[i].size()) != ndims[i])
      return ctx.Error(absl::StrCat("output ", i, " of the call's type has ",
                                    ctx.out_shapes[i].size(), " dims; expected ", ndims[i]));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> Pair(const ComputeCtx& ctx, absl::string_view name,
                                          const std::vector<int64_t>& v, int64_t min_value) {
  if (v.size() != 1 && v.size() != 2)
    return ctx.Error(absl::StrCat(name, " must have 1 or 2 values; got [", JoinInts(v), "]"));
  for (int64_t x : v)
    if (x < min_value)
      return ctx.Error(absl::StrCat(name, " values must be >= ", min_value, "; got [", JoinInts(v),
                                    "]"));
  return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
}

absl::StatusOr<std::vector<int64_t>> Padding4(const ComputeCtx& ctx,
                                              const std::vector<int64_t>& p) {
  for (int64_t x : p)
    if (x < 0) return ctx.Error(absl::StrCat("padding must not be negative; got [", JoinInts(p), "]"));
  switch (p.size()) {
    case 1: return std::vector<int64_t>{p[0], p[0], p[0], p[0]};
    case 2: return std::vector<int64_t>{p[0], p[1], p[0], p[1]};
    case 4: return p;
    default:
      return ctx.Error(absl::StrCat("padding must have 1, 2 or 4 values; got [", JoinInts(p), "]"));
  }
}

absl::StatusOr<int> NormAxis(const ComputeCtx& ctx, int64_t axis, int ndim, absl::string_view what) {
  if (axis < -ndim || axis >= ndim)
    return ctx.Error(absl::StrCat(what, " ", axis, " is out of range for a ", ndim, "-D tensor"));
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

std::string JoinInts(const std::vector<int64_t>& v) { return absl::StrJoin(v, ","); }

// ---- Layouts ---------------------------------------------------------------

bool NnLayout::blocked() const {
  for (const Axis& a : axes)
    if (a.inner >= 0) return true;
  return false;
}

PrimExpr NnLayout::Extent(size_t a, const std::vector<PrimExpr>& shape) const {
  const Axis& ax = axes[a];
  const PrimExpr& outer = shape[static_cast<size_t>(ax.pos)];
  if (ax.inner < 0) return outer;
  return outer * IntImm(ax.factor);
}

std::vector<PrimExpr> NnLayout::Logical(const std::vector<PrimExpr>& physical) const {
  std::vector<PrimExpr> out;
  out.reserve(axes.size());
  for (const Axis& ax : axes) {
    const PrimExpr& outer = physical[static_cast<size_t>(ax.pos)];
    if (ax.inner < 0) out.push_back(outer);
    else out.push_back(outer * IntImm(ax.factor) + physical[static_cast<size_t>(ax.inner)]);
  }
  return out;
}

std::vector<PrimExpr> NnLayout::Physical(const std::vector<PrimExpr>& logical) const {
  std::vector<PrimExpr> out(static_cast<size_t>(ndim));
  for (size_t a = 0; a < axes.size(); ++a) {
    const Axis& ax = axes[a];
    if (ax.inner < 0) {
      out[static_cast<size_t>(ax.pos)] = logical[a];
    } else {
      out[static_cast<size_t>(ax.pos)] = tir::FloorDiv(logical[a], IntImm(ax.factor));
      out[static_cast<size_t>(ax.inner)] = tir::FloorMod(logical[a], IntImm(ax.factor));
    }
  }
  return out;
}

absl::StatusOr<NnLayout> ParseNnLayout(const ComputeCtx& ctx, absl::string_view what,
                                       const std::string& text, absl::string_view primal,
                                       absl::string_view splittable) {
  auto bad = [&]() {
    std::string blocked;
    for (char c : splittable)
      absl::StrAppend(&blocked, blocked.empty() ? "" : " or ", "{n}",
                      std::string(1, Layout::SplitOf(c)));
    return ctx.Error(absl::StrCat(what, " \"", text, "\" is not supported: expected a permutation of ",
                                  primal, blocked.empty() ? "" : ", optionally blocked with ",
                                  blocked));
  };
  absl::StatusOr<Layout> parsed = ParseLayout(text);
  if (!parsed.ok() || !parsed->HasPrimalAxes(primal)) return bad();
  // Only the axes of `splittable` may be split (the kernels' restriction).
  for (const Layout::Axis& ax : parsed->axes)
    if (!ax.is_primal() && splittable.find(Layout::PrimalOf(ax.name)) == absl::string_view::npos)
      return bad();
  NnLayout l;
  l.text = text;
  for (char c : primal)
    l.axes.push_back({parsed->Find(c), parsed->Find(Layout::SplitOf(c)), parsed->FactorOf(c)});
  l.ndim = static_cast<int>(parsed->ndim());
  return l;
}

// ---- Numeric types ---------------------------------------------------------

DataType MathType(DataType t) {
  if (t.is_float()) return t.bits() < 32 ? DataType::Float(32) : DataType::Float(t.bits());
  return DataType::Float(64);
}

DataType ProductAccType(DataType a, DataType b, DataType out) {
  if (a.is_float() || b.is_float()) {
    int bits = 32;
    for (DataType t : {a, b, out})
      if (t.is_float() && t.bits() > bits) bits = t.bits();
    return DataType::Float(bits);
  }
  if (out.is_int() || out.is_uint()) return out;
  return DataType::Int(64);
}

PrimExpr LowestOf(DataType t) { return tir::MinValue(t); }

PrimExpr LowestFiniteOf(DataType t) {
  if (!t.is_float()) return tir::MinValue(t);
  double v = std::numeric_limits<double>::lowest();
  if (t.code() == DTypeCode::kBFloat) v = -3.3895313892515355e38;
  else if (t.bits() == 16) v = -65504.0;
  else if (t.bits() == 32) v = std::numeric_limits<float>::lowest();
  return tir::FloatImm(v, t);
}

PrimExpr IsInf(const PrimExpr& v) {
  return tir::EQ(tir::Call(v->dtype, "fabs", {v}),
                 tir::FloatImm(std::numeric_limits<double>::infinity(), v->dtype));
}

// ---- Stages ----------------------------------------------------------------

te::Tensor PadStage(const te::Tensor& t, const std::vector<int64_t>& before,
                    const std::vector<int64_t>& after, const PrimExpr& pad_value,
                    absl::string_view name) {
  bool any = false;
  for (size_t i = 0; i < before.size(); ++i) any = any || before[i] != 0 || after[i] != 0;
  if (!any) return t;
  const std::vector<PrimExpr>& in = t.shape();
  std::vector<PrimExpr> shape;
  for (size_t i = 0; i < in.size(); ++i) shape.push_back(in[i] + IntImm(before[i] + after[i]));
  return te::Compute(
      shape,
      [=](const std::vector<tir::Var>& idx) {
        PrimExpr cond;
        std::vector<PrimExpr> src;
        for (size_t i = 0; i < idx.size(); ++i) {
          src.push_back(idx[i] - IntImm(before[i]));
          std::vector<PrimExpr> cs;
          if (before[i] > 0) cs.push_back(tir::GE(idx[i], IntImm(before[i])));
          if (after[i] > 0) cs.push_back(tir::LT(idx[i], in[i] + IntImm(before[i])));
          for (PrimExpr& c : cs) cond = cond ? tir::And(cond, c) : c;
        }
        if (!cond) return t(src);
        return tir::Call(t.dtype(), "if_then_else", {cond, t(src), pad_value});
      },
      name, "injective");
}

te::Tensor CastStage(const te::Tensor& t, DataType dt, absl::string_view name) {
  if (t.dtype() == dt) return t;
  return te::Compute(
      t.shape(), [=](const std::vector<tir::Var>& idx) { return tir::Cast(dt, t(idx)); }, name,
      "elemwise");
}

std::vector<PrimExpr> DropAxis(const std::vector<PrimExpr>& v, int axis) {
  std::vector<PrimExpr> out;
  for (size_t i = 0; i < v.size(); ++i)
    if (static_cast<int>(i) != axis) out.push_back(v[i]);
  return out;
}

bool IsConst(const PrimExpr& e, int64_t c) {
  int64_t v = 0;
  return tir::IsConstInt(e, &v) && v == c;
}

}  // namespace kiln::lowering::nn_internal
