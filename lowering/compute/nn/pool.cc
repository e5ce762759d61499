// File: lowering/compute/nn/pool.cc — nn.max_pool2d, nn.avg_pool2d,
// nn.global_max_pool2d, nn.global_avg_pool2d.
//
// Layouts: any permutation of NCHW, optionally with C split (NCHW16c), for
// `layout` and `out_layout` independently.
//
// Window pools (as TVM's topi, with the interpreter's numbers):
//   pad       data padded on H and W (tag "injective"): max pads with the
//             lowest value (-inf for floats), avg with 0. ceil_mode windows
//             that hang past the padding read extra padding after it.
//   pool_max  Max over (rh, rw) of pad[n, c, oh*sh + rh*dh, ow*sw + rw*dw]
//             (tag "pool_max"). A float window made only of padding gives
//             the dtype's lowest finite value in the interpreter (as TVM pads
//             with it), so when such a window can exist a last stage
//             pool_max_out (tag "elemwise") selects that value for it; -inf
//             padding keeps windows holding -inf data exactly -inf.
//   pool_sum  Sum over the window in float32 (16-bit floats), the float type,
//             or int64 (integers) (tag "pool_sum"), then
//   pool_avg  sum / divisor (tag "pool_avg"), the divisor being the number of
//             window positions inside the data, or inside the padded data with
//             count_include_pad, exactly as the interpreter counts them; an
//             integer average truncates; an empty window gives 0.
// Global pools: one reduction over (rh, rw) ("global_pool_max" /
// "global_pool_sum"), then global_pool_avg = sum / (H * W).
#include <algorithm>
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

// Window geometry of one spatial axis.
struct Window {
  int64_t k = 1, s = 1, d = 1, pb = 0, pa = 0;  // size, stride, dilation, pad before/after
  PrimExpr in;                                  // input extent
  PrimExpr out;                                 // output extent

  PrimExpr Base(const PrimExpr& o) const { return o * IntImm(s) - IntImm(pb); }
  // Number of kk in [0, k) with Base(o) + kk*d < limit.
  PrimExpr CountBelow(const PrimExpr& o, const PrimExpr& limit) const {
    PrimExpr q = limit - IntImm(1) - Base(o);
    if (d != 1) q = tir::FloorDiv(q, IntImm(d));
    return tir::Min(tir::Max(q + IntImm(1), IntImm(0)), IntImm(k));
  }
  // Window positions inside the data / inside the padded data.
  PrimExpr Valid(const PrimExpr& o) const { return CountBelow(o, in) - CountBelow(o, IntImm(0)); }
  PrimExpr InPadded(const PrimExpr& o) const { return CountBelow(o, in + IntImm(pa)); }

  // Whether some output position's window lies entirely in the padding
  // (conservatively true when extents are not static).
  bool MayHaveEmptyWindow() const {
    int64_t h = 0, n = 0;
    if (!tir::IsConstInt(in, &h) || !tir::IsConstInt(out, &n)) return true;
    for (int64_t o = 0; o < n; ++o) {
      const int64_t base = o * s - pb;
      bool any = false;
      for (int64_t kk = 0; kk < k && !any; ++kk) any = base + kk * d >= 0 && base + kk * d < h;
      if (!any) return true;
    }
    return false;
  }
  // Padding after the data the windows read: pa, or more in ceil_mode.
  int64_t ReadPadAfter(bool ceil_mode) const {
    if (!ceil_mode) return pa;
    int64_t h = 0, n = 0;
    if (!tir::IsConstInt(in, &h) || !tir::IsConstInt(out, &n)) return pa + s - 1;
    const int64_t end = (n - 1) * s + (k - 1) * d + 1;  // padded extent the windows read
    return std::max(pa, end - pb - h);
  }
};

std::map<std::string, std::string> PoolAttrs(const Pool2DAttrs& a, const std::vector<int64_t>& ps,
                                             const std::vector<int64_t>& st,
                                             const std::vector<int64_t>& dil,
                                             const std::vector<int64_t>& pad,
                                             const std::string& out_layout) {
  return {{"layout", a.layout},
          {"out_layout", out_layout},
          {"pool_size", JoinInts(ps)},
          {"strides", JoinInts(st)},
          {"dilation", JoinInts(dil)},
          {"padding", JoinInts(pad)},
          {"ceil_mode", a.ceil_mode ? "1" : "0"},
          {"count_include_pad", a.count_include_pad ? "1" : "0"}};
}

absl::StatusOr<std::vector<te::Tensor>> Pool2D(const ComputeCtx& ctx, bool is_max) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const Pool2DAttrs& a = ctx.Attrs<Pool2DAttrs>();
  KILN_ASSIGN_OR_RETURN(NnLayout l, ParseNnLayout(ctx, "layout", a.layout, "NCHW", "C"));
  const std::string out_text = a.out_layout.empty() ? a.layout : a.out_layout;
  KILN_ASSIGN_OR_RETURN(NnLayout ol, ParseNnLayout(ctx, "out_layout", out_text, "NCHW", "C"));
  const te::Tensor& x = ctx.inputs[0];
  if (x.ndim() != l.ndim)
    return ctx.Error(absl::StrCat("expects a ", l.ndim, "-D tensor (layout ", a.layout, "); got ",
                                  x.ndim(), "-D"));
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {ol.ndim}));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> ps, Pair(ctx, "pool_size", a.pool_size, 1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> st, Pair(ctx, "strides", a.strides, 1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dil, Pair(ctx, "dilation", a.dilation, 1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pad, Padding4(ctx, a.padding));
  const std::vector<PrimExpr>& os = ctx.out_shapes[0];
  Window wh{ps[0], st[0], dil[0], pad[0], pad[2], x.shape()[static_cast<size_t>(l.axes[2].pos)],
            os[static_cast<size_t>(ol.axes[2].pos)]};
  Window ww{ps[1], st[1], dil[1], pad[1], pad[3], x.shape()[static_cast<size_t>(l.axes[3].pos)],
            os[static_cast<size_t>(ol.axes[3].pos)]};
  const DataType dt = x.dtype();
  const DataType out_dt = ctx.out_dtypes[0];

  std::vector<int64_t> before(static_cast<size_t>(l.ndim), 0), after(before);
  before[static_cast<size_t>(l.axes[2].pos)] = wh.pb;
  before[static_cast<size_t>(l.axes[3].pos)] = ww.pb;
  after[static_cast<size_t>(l.axes[2].pos)] = wh.ReadPadAfter(a.ceil_mode);
  after[static_cast<size_t>(l.axes[3].pos)] = ww.ReadPadAfter(a.ceil_mode);
  const PrimExpr pad_value = is_max ? LowestOf(dt) : tir::MakeConst(dt, 0);
  const te::Tensor xp = PadStage(x, before, after, pad_value, "pad");

  const tir::IterVar rh = te::ReduceAxis({IntImm(0), IntImm(wh.k)}, "rh");
  const tir::IterVar rw = te::ReduceAxis({IntImm(0), IntImm(ww.k)}, "rw");
  const DataType acc = is_max ? dt : (dt.is_float() ? MathType(dt) : DataType::Int(64));
  auto window_value = [&](const std::vector<PrimExpr>& lg) {
    const PrimExpr h = lg[2] * IntImm(wh.s) + rh->var * IntImm(wh.d);
    const PrimExpr w = lg[3] * IntImm(ww.s) + rw->var * IntImm(ww.d);
    return tir::Cast(acc, xp(l.Physical({lg[0], lg[1], h, w})));
  };
  te::Tensor red = te::Compute(
      os,
      [&](const std::vector<tir::Var>& idx) {
        const std::vector<PrimExpr> lg = ol.Logical(idx);
        return is_max ? te::Max(window_value(lg), {rh, rw}) : te::Sum(window_value(lg), {rh, rw});
      },
      is_max ? "pool_max" : "pool_sum", is_max ? "pool_max" : "pool_sum",
      PoolAttrs(a, ps, st, dil, pad, out_text));

  if (is_max) {
    const bool fix = dt.is_float() && (wh.MayHaveEmptyWindow() || ww.MayHaveEmptyWindow());
    if (!fix) return std::vector<te::Tensor>{CastStage(red, out_dt, "pool_max_cast")};
    const PrimExpr lowest = LowestFiniteOf(dt);
    te::Tensor out = te::Compute(
        os,
        [&](const std::vector<tir::Var>& idx) {
          const std::vector<PrimExpr> lg = ol.Logical(idx);
          const PrimExpr nonempty =
              tir::And(tir::GT(wh.Valid(lg[2]), IntImm(0)), tir::GT(ww.Valid(lg[3]), IntImm(0)));
          return tir::Cast(out_dt, tir::Select(nonempty, red(idx), lowest));
        },
        "pool_max_out", "elemwise");
    return std::vector<te::Tensor>{out};
  }

  // The divisor: positions inside the data (or the padded data), per axis.
  const bool no_pad = pad[0] == 0 && pad[1] == 0 && pad[2] == 0 && pad[3] == 0;
  const bool full_windows = !a.ceil_mode && (a.count_include_pad || no_pad);
  te::Tensor out = te::Compute(
      os,
      [&](const std::vector<tir::Var>& idx) {
        const std::vector<PrimExpr> lg = ol.Logical(idx);
        const PrimExpr s = red(idx);
        if (full_windows) {
          const int64_t d = wh.k * ww.k;
          const PrimExpr q = acc.is_float() ? tir::Div(s, tir::MakeConst(acc, static_cast<double>(d)))
                                            : tir::Div(s, IntImm(d, acc));
          return tir::Cast(out_dt, q);
        }
        const PrimExpr div = a.count_include_pad ? wh.InPadded(lg[2]) * ww.InPadded(lg[3])
                                                 : wh.Valid(lg[2]) * ww.Valid(lg[3]);
        const PrimExpr safe = tir::Max(div, IntImm(1));
        const PrimExpr q = tir::Div(s, tir::Cast(acc, safe));  // int64: truncating
        return tir::Select(tir::EQ(div, IntImm(0)), tir::MakeConst(out_dt, 0), tir::Cast(out_dt, q));
      },
      "pool_avg", "pool_avg", PoolAttrs(a, ps, st, dil, pad, out_text));
  return std::vector<te::Tensor>{out};
}

absl::StatusOr<std::vector<te::Tensor>> GlobalPool2D(const ComputeCtx& ctx, bool is_max) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const GlobalPool2DAttrs& a = ctx.Attrs<GlobalPool2DAttrs>();
  KILN_ASSIGN_OR_RETURN(NnLayout l, ParseNnLayout(ctx, "layout", a.layout, "NCHW", "C"));
  const std::string out_text = a.out_layout.empty() ? a.layout : a.out_layout;
  KILN_ASSIGN_OR_RETURN(NnLayout ol, ParseNnLayout(ctx, "out_layout", out_text, "NCHW", "C"));
  const te::Tensor& x = ctx.inputs[0];
  if (x.ndim() != l.ndim)
    return ctx.Error(absl::StrCat("expects a ", l.ndim, "-D tensor (layout ", a.layout, "); got ",
                                  x.ndim(), "-D"));
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {ol.ndim}));
  const PrimExpr H = x.shape()[static_cast<size_t>(l.axes[2].pos)];
  const PrimExpr W = x.shape()[static_cast<size_t>(l.axes[3].pos)];
  const DataType dt = x.dtype();
  const DataType out_dt = ctx.out_dtypes[0];
  const DataType acc = is_max ? dt : (dt.is_float() ? MathType(dt) : DataType::Int(64));
  const tir::IterVar rh = te::ReduceAxis({IntImm(0), H}, "rh");
  const tir::IterVar rw = te::ReduceAxis({IntImm(0), W}, "rw");
  const std::map<std::string, std::string> attrs = {{"layout", a.layout}, {"out_layout", out_text}};
  te::Tensor red = te::Compute(
      ctx.out_shapes[0],
      [&](const std::vector<tir::Var>& idx) {
        const std::vector<PrimExpr> lg = ol.Logical(idx);
        const PrimExpr v = tir::Cast(acc, x(l.Physical({lg[0], lg[1], rh->var, rw->var})));
        return is_max ? te::Max(v, {rh, rw}) : te::Sum(v, {rh, rw});
      },
      is_max ? "global_pool_max" : "global_pool_sum",
      is_max ? "global_pool_max" : "global_pool_sum", attrs);
  if (is_max) return std::vector<te::Tensor>{CastStage(red, out_dt, "global_pool_max_cast")};
  const PrimExpr hw = H * W;
  int64_t hw_static = 0;
  const bool nonzero = tir::IsConstInt(hw, &hw_static) && hw_static != 0;
  te::Tensor out = te::Compute(
      ctx.out_shapes[0],
      [&](const std::vector<tir::Var>& idx) {
        const PrimExpr s = red(idx);
        // Floats: 0 / 0 is NaN, as in the interpreter; integers: 0.
        if (acc.is_float()) return tir::Cast(out_dt, tir::Div(s, tir::Cast(acc, hw)));
        if (nonzero) return tir::Cast(out_dt, tir::Div(s, tir::Cast(acc, hw)));
        return tir::Select(tir::EQ(hw, IntImm(0)), tir::MakeConst(out_dt, 0),
                           tir::Cast(out_dt, tir::Div(s, tir::Cast(acc, tir::Max(hw, IntImm(1))))));
      },
      "global_pool_avg", "global_pool_avg", attrs);
  return std::vector<te::Tensor>{out};
}

}  // namespace

void RegisterPoolComputes() {
  AddCompute("nn.max_pool2d", [](const ComputeCtx& c) { return Pool2D(c, true); });
  AddCompute("nn.avg_pool2d", [](const ComputeCtx& c) { return Pool2D(c, false); });
  AddCompute("nn.global_max_pool2d", [](const ComputeCtx& c) { return GlobalPool2D(c, true); });
  AddCompute("nn.global_avg_pool2d", [](const ComputeCtx& c) { return GlobalPool2D(c, false); });
}

}  // namespace kiln::lowering::nn_internal
