// File: lowering/strategy/x86/winograd.cc — 3x3 stride-1 convolutions by
// Winograd's minimal filtering F(2x2, 3x3), in NCHW{c}c, on x86.
//
// Each 2x2 block of outputs comes from a 4x4 input tile:
//   Y = A^T [ (G g G^T) (.) (B^T d B) ] A
// which turns the 36 multiply-adds per output and channel pair of the direct
// convolution into 16 per 4 outputs (2.25x fewer), plus the transforms:
//   U[a, ocb, icb, ic, oc] = (G g G^T)[e][u]      the weight, at compile time
//   V[a, n, icb, th, tw, ic] = sum_{r,c} (B^T)[e][r] (B^T)[u][c] d[2th+r][2tw+c]
//   M[a, n, ocb, th, tw, oc] = sum_{icb, ic} V[a, ..., ic] * U[a, ..., ic, oc]
//   Y[n, ocb, oh, ow, oc]    = sum_a (A^T)[oh%2][e] (A^T)[ow%2][u] M[a, n, ocb, oh/2, ow/2, oc]
// with a = 4e + u. M is sixteen 1x1 convolutions over the tile grid, and gets
// the direct convolution's register-blocked micro-kernel (reg_n tiles x one
// output block); V is written with B^T's values (each point 3 additions or
// subtractions of its 4x4 window), all 16 points of a window together,
// vectorized over the channel block; Y likewise with A^T's values (9
// additions per output), at the epilogue's parallel loop.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/strategy/strategy.h"
#include "lowering/strategy/x86/conv_util.h"
#include "lowering/strategy/x86/x86.h"

namespace kiln::lowering::strategy::x86 {
namespace {

using tir::IntImm;
using tir::PrimExpr;

constexpr double kBt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kAt[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

// plus[0] + plus[1] + ... - minus[0] - minus[1] - ... (0 when both are empty).
PrimExpr SignedSum(const std::vector<PrimExpr>& plus, const std::vector<PrimExpr>& minus,
                   DataType t) {
  PrimExpr sum = plus.empty() ? tir::MakeConst(t, 0) : plus[0];
  for (size_t k = 1; k < plus.size(); ++k) sum = tir::Add(sum, plus[k]);
  for (const PrimExpr& d : minus) sum = tir::Sub(sum, d);
  return sum;
}

// w [OCB, ICB, 3, 3, ib, ob] -> U [16, OCB, ICB, ib, ob].
absl::StatusOr<Ref<const HostTensor>> TransformWeight(const HostTensor& w) {
  const std::vector<int64_t>& s = w.shape();
  const int64_t ocb = s[0], icb = s[1], ib = s[4], ob = s[5];
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> u,
                        HostTensor::Create(DataType::Float(32), {16, ocb, icb, ib, ob}));
  const float* src = w.data<float>();
  float* dst = u->mutable_data<float>();
  const int64_t plane = ocb * icb * ib * ob;  // one a
  for (int64_t o = 0; o < ocb; ++o)
    for (int64_t i = 0; i < icb; ++i)
      for (int64_t ci = 0; ci < ib; ++ci)
        for (int64_t co = 0; co < ob; ++co) {
          double g[3][3];
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw)
              g[kh][kw] = src[((((o * icb + i) * 3 + kh) * 3 + kw) * ib + ci) * ob + co];
          const int64_t at = ((o * icb + i) * ib + ci) * ob + co;
          for (int e = 0; e < 4; ++e)
            for (int v = 0; v < 4; ++v) {
              double acc = 0;
              for (int kh = 0; kh < 3; ++kh)
                for (int kw = 0; kw < 3; ++kw) acc += kG[e][kh] * g[kh][kw] * kG[v][kw];
              dst[(e * 4 + v) * plane + at] = static_cast<float>(acc);
            }
        }
  return Ref<const HostTensor>(u);
}


absl::StatusOr<std::optional<std::vector<te::Tensor>>> WinogradCompute(
    const StrategyComputeCtx& ctx) {
  const auto none = std::optional<std::vector<te::Tensor>>();
  const ComputeCtx& b = ctx.base;
  const std::optional<BlockedConv> p = ParseBlockedConv(b, ctx.constants);
  if (!p || !p->weight || p->attrs->groups != 1) return none;
  const Conv2DAttrs& a = *p->attrs;
  const DataType f32 = DataType::Float(32);
  const int64_t ib = p->ib, ob = p->ob;
  const std::vector<int64_t>&xs = p->xs, &ws = p->ws, &os = p->os, &pad = p->pad;
  const std::string& out_layout = p->out_layout;
  const te::Tensor x = b.inputs[0];
  if (a.kernel_layout != absl::StrCat("OIHW", ib, "i", ob, "o") || ws[2] != 3 || ws[3] != 3 ||
      ws[1] != xs[1] || ws[4] != ib || ws[5] != ob || p->st != std::vector<int64_t>{1, 1} ||
      p->dil != std::vector<int64_t>{1, 1})
    return none;
  const int64_t lanes = ctx.target.Lanes(f32);
  // Whole vectors per output block, and enough channels for the GEMM to
  // outweigh the transforms.
  if (ob % lanes != 0 || xs[1] * ib < 16 || os[1] * ob < 32 || os[2] < 4 || os[3] < 4)
    return none;
  const int64_t th = (os[2] + 1) / 2, tw = (os[3] + 1) / 2;
  // Few tiles: the transformed weight (16/9 the direct one's size) is read
  // for only th * tw tiles per call, and the kernel streams weights instead
  // of computing. ResNet-50's 7x7 layers (16 tiles) ran at 51% of the FMA
  // peak on AVX-512 and about half on AVX2 this way; the direct or GEMM
  // kernels run them at 78% or more.
  if (th * tw < 32) return none;
  const int64_t reg_n = ChooseRegN(ctx.target, tw, ob);
  const int64_t twp = (tw + reg_n - 1) / reg_n * reg_n;
  // Rows beyond the input are zero: 2 * th + 2 of them are read.
  std::vector<int64_t> pad_h = pad;
  pad_h[2] += std::max<int64_t>(0, 2 * th + 2 - (xs[2] + pad[0] + pad[2]));
  const te::Tensor xp = PadNCHWc(x, xs, pad_h, 2 * twp + 2);
  KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> u_data, TransformWeight(*p->weight));
  const te::Tensor u = ctx.add_constant(u_data, "winograd_weight");
  const int64_t n = xs[0], icb = xs[1], ocb = os[1];

  // V[a] for a = 4e + u is sum over (r, c) of B^T[e][r] B^T[u][c] d[r][c],
  // written out with the matrix's values: four of the sixteen are +-1, the
  // rest 0, so each point is 3 additions or subtractions of the window
  // (instead of 16 multiply-adds with coefficients loaded from a table). A
  // select over a picks the point's sum; the schedule unrolls a, and the
  // selects fold away.
  const te::Tensor v = te::Compute(
      {IntImm(16), IntImm(n), IntImm(icb), IntImm(th), IntImm(twp), IntImm(ib)},
      [&](const std::vector<tir::Var>& i) {
        PrimExpr result;
        for (int a = 15; a >= 0; --a) {
          const int e = a / 4, u = a % 4;
          // The positive terms first, then the negative ones subtracted.
          std::vector<PrimExpr> plus, minus;
          for (int r = 0; r < 4; ++r) {
            for (int c = 0; c < 4; ++c) {
              const double coef = kBt[e][r] * kBt[u][c];
              if (coef == 0) continue;
              (coef > 0 ? plus : minus)
                  .push_back(xp({i[1], i[2], i[3] * IntImm(2) + IntImm(r),
                                 i[4] * IntImm(2) + IntImm(c), i[5]}));
            }
          }
          const PrimExpr sum = SignedSum(plus, minus, f32);
          result = !result ? sum : tir::Select(tir::EQ(i[0], IntImm(a)), sum, result);
        }
        return result;
      },
      "winograd_input", "winograd_input", {{"no_inline", "1"}});
  const tir::IterVar rco = te::ReduceAxis({IntImm(0), IntImm(icb)}, "icb");
  const tir::IterVar rci = te::ReduceAxis({IntImm(0), IntImm(ib)}, "ic");
  const te::Tensor m = te::Compute(
      {IntImm(16), IntImm(n), IntImm(ocb), IntImm(th), IntImm(twp), IntImm(ob)},
      [&](const std::vector<tir::Var>& i) {
        return te::Sum(tir::Mul(v({i[0], i[1], rco->var, i[3], i[4], rci->var}),
                                u({i[0], i[2], rco->var, rci->var, i[5]})),
                       {rco, rci});
      },
      "winograd_gemm", "winograd_gemm",
      {{kStrategyAttr, "conv2d_winograd_NCHWc.x86"},
       {"kiln.reg_n", absl::StrCat(reg_n)},
       {"kiln.lanes", absl::StrCat(lanes)}});
  // Y written with A^T's values likewise: the output at (oh % 2, ow % 2) of
  // its 2x2 block is a sum of 9 of the 16 points (+-1 each), picked by a
  // select the schedule's unrolled row and column fold away.
  const te::Tensor y = te::Compute(
      b.out_shapes[0],
      [&](const std::vector<tir::Var>& i) {
        const PrimExpr bh = tir::FloorDiv(i[2], IntImm(2)), bw = tir::FloorDiv(i[3], IntImm(2));
        PrimExpr part[2][2];
        for (int oi = 0; oi < 2; ++oi) {
          for (int oj = 0; oj < 2; ++oj) {
            std::vector<PrimExpr> plus, minus;
            for (int e = 0; e < 4; ++e) {
              for (int u = 0; u < 4; ++u) {
                const double coef = kAt[oi][e] * kAt[oj][u];
                if (coef == 0) continue;
                (coef > 0 ? plus : minus).push_back(m({IntImm(4 * e + u), i[0], i[1], bh, bw, i[4]}));
              }
            }
            part[oi][oj] = SignedSum(plus, minus, f32);
          }
        }
        const PrimExpr col0 = tir::EQ(tir::FloorMod(i[3], IntImm(2)), IntImm(0));
        return tir::Select(tir::EQ(tir::FloorMod(i[2], IntImm(2)), IntImm(0)),
                           tir::Select(col0, part[0][0], part[0][1]),
                           tir::Select(col0, part[1][0], part[1][1]));
      },
      "winograd_output", "winograd_output",
      {{"no_inline", "1"},
       {"data_layout", a.data_layout},
       {"kernel_layout", a.kernel_layout},
       {"out_layout", out_layout}});
  // An injective stage over Y, so the kernel's output (this or the epilogue
  // that FuseOps put after the convolution, inlined into it) is always an
  // injective stage the whole pipeline can be computed at.
  const te::Tensor out = te::Compute(
      b.out_shapes[0],
      [&](const std::vector<tir::Var>& i) { return y(std::vector<PrimExpr>(i.begin(), i.end())); },
      "winograd_out", "injective");
  return std::optional<std::vector<te::Tensor>>(std::vector<te::Tensor>{out});
}

// Fewer tile rows (pairs of output rows) than this: three passes (below)
// instead of one loop over the rows. ResNet-50's 14x14 layers (7 tile rows)
// had only 7 tasks, and each streamed all the transformed weights (4 MB for
// 256 channels) from memory: 1.99 -> 1.75 ms at 1 thread, 1.20 -> 0.93 ms at
// 2 (AVX2). Its 28x28 and 56x56 layers were slower so (0.91 -> 1.07-1.45 ms,
// 1.0 -> 4.2 ms at 2 threads: V and M, 2-4 MB each, go through memory and
// their GEMMs are short in K).
constexpr int64_t kThreePassRows = 8;

// One parallel loop over (image, pair of output rows): inside it the input
// transform of that tile row (V, all 16 points: ~115 KB for 64 channels on
// a 56-wide row), for each of the 16 points the GEMM over all output blocks
// (M, register-blocked), then the output transform and the epilogue for the
// two rows. Every intermediate stays in cache.
absl::Status ScheduleWinograd(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                              const te::Tensor& anchor, const CpuTarget&) {
  const te::Operation& op = anchor.op();
  const int64_t reg_n = IntAttr(op, "kiln.reg_n", 8);
  const int64_t lanes = IntAttr(op, "kiln.lanes", 16);
  KILN_RETURN_IF_ERROR(InlineInjective(s, outputs));
  te::Stage* sm = s[anchor];
  te::Stage* sv = nullptr;
  for (const te::Tensor& in : op->InputTensors()) {
    if (in.op()->name == "winograd_input") sv = s[in];
  }
  KILN_ASSIGN_OR_RETURN(std::vector<te::Stage*> m_readers, s.ReadersOf(sm));
  if (sv == nullptr || !IsUntouched(*sv) || m_readers.size() != 1) {
    return absl::InternalError("unexpected Winograd stages");
  }
  te::Stage* sy = m_readers[0];
  KILN_ASSIGN_OR_RETURN(std::vector<te::Stage*> y_readers, s.ReadersOf(sy));
  if (y_readers.size() != 1 || !y_readers[0]->is_output || !IsUntouched(*y_readers[0])) {
    return absl::InternalError("the Winograd output transform must feed one output");
  }
  te::Stage* so = y_readers[0];
  KILN_RETURN_IF_ERROR(SchedulePaddedInput(s, sv->op));
  auto vectorize_block = [&](te::Stage* st, const tir::IterVar& oc) -> absl::StatusOr<tir::IterVar> {
    int64_t ob = 0;
    if (tir::IsConstInt(oc->dom.extent, &ob) && ob > lanes) {
      KILN_ASSIGN_OR_RETURN(te::SplitAxes vs, st->split(oc, lanes));
      KILN_RETURN_IF_ERROR(st->unroll(vs.outer));
      KILN_RETURN_IF_ERROR(st->vectorize(vs.inner));
      return vs.outer;
    }
    KILN_RETURN_IF_ERROR(st->vectorize(oc));
    return oc;
  };
  // Y at the output's parallel loop (two rows): the row and the column
  // within a 2x2 block unrolled, so each output's select is decided.
  auto schedule_output_transform = [&]() -> absl::Status {
    const std::vector<tir::IterVar> yax = sy->op->axis;  // n, ocb, oh, ow, oc
    KILN_ASSIGN_OR_RETURN(te::SplitAxes cols, sy->split(yax[3], 2));
    KILN_RETURN_IF_ERROR(sy->reorder({yax[0], yax[1], yax[2], cols.outer, cols.inner, yax[4]}));
    KILN_RETURN_IF_ERROR(sy->unroll(yax[2]));
    KILN_RETURN_IF_ERROR(sy->unroll(cols.inner));
    return vectorize_block(sy, yax[4]).status();
  };
  int64_t tile_rows = 0;
  if (tir::IsConstInt(sv->op->axis[3]->dom.extent, &tile_rows) && tile_rows < kThreePassRows) {
    // Three passes. V for the whole image, parallel over (n, input block,
    // tile row); M parallel over (transform point, n, output block): each
    // task's weights U[a, ocb] (ib x ob floats per input block) stay in
    // cache for all its tiles, and a run of tasks shares V[a]; then Y and
    // the epilogue, parallel over (n, output block, pair of rows).
    const std::vector<tir::IterVar> vax = sv->op->axis;  // a, n, icb, th, tw, ic
    KILN_RETURN_IF_ERROR(sv->reorder({vax[1], vax[2], vax[3], vax[4], vax[0], vax[5]}));
    KILN_ASSIGN_OR_RETURN(tir::IterVar vpar, sv->fuse({vax[1], vax[2], vax[3]}));
    KILN_RETURN_IF_ERROR(sv->parallel(vpar));
    KILN_RETURN_IF_ERROR(sv->unroll(vax[0]));
    KILN_RETURN_IF_ERROR(sv->vectorize(vax[5]));

    KILN_ASSIGN_OR_RETURN(te::Tensor ml3, s.cache_write(anchor, "local"));
    te::Stage* local3 = s[ml3];
    te::Stage* sm3 = s[anchor];
    const std::vector<tir::IterVar> max3 = sm3->op->axis;  // a, n, ocb, th, tw, oc
    KILN_ASSIGN_OR_RETURN(te::SplitAxes ws3, sm3->split(max3[4], reg_n));
    KILN_RETURN_IF_ERROR(
        sm3->reorder({max3[0], max3[1], max3[2], max3[3], ws3.outer, ws3.inner, max3[5]}));
    KILN_ASSIGN_OR_RETURN(tir::IterVar mpar, sm3->fuse({max3[0], max3[1], max3[2]}));
    KILN_RETURN_IF_ERROR(sm3->parallel(mpar));
    KILN_RETURN_IF_ERROR(vectorize_block(sm3, max3[5]).status());
    KILN_RETURN_IF_ERROR(local3->compute_at(sm3, ws3.outer));
    KILN_RETURN_IF_ERROR(ScheduleRegisterTile(local3, lanes));

    const std::vector<tir::IterVar> oax3 = so->op->axis;  // n, ocb, oh, ow, oc
    KILN_ASSIGN_OR_RETURN(te::SplitAxes rows3, so->split(oax3[2], 2));
    KILN_RETURN_IF_ERROR(
        so->reorder({oax3[0], oax3[1], rows3.outer, rows3.inner, oax3[3], oax3[4]}));
    KILN_ASSIGN_OR_RETURN(tir::IterVar par3, so->fuse({oax3[0], oax3[1], rows3.outer}));
    KILN_RETURN_IF_ERROR(so->parallel(par3));
    KILN_RETURN_IF_ERROR(vectorize_block(so, oax3[4]).status());
    KILN_RETURN_IF_ERROR(sy->compute_at(so, par3));
    return schedule_output_transform();
  }
  // The output: (n, pair of rows) parallel.
  const std::vector<tir::IterVar> oax = so->op->axis;  // n, ocb, oh, ow, oc
  KILN_ASSIGN_OR_RETURN(te::SplitAxes rows, so->split(oax[2], 2));
  KILN_RETURN_IF_ERROR(so->reorder({oax[0], rows.outer, oax[1], rows.inner, oax[3], oax[4]}));
  KILN_ASSIGN_OR_RETURN(tir::IterVar par, so->fuse({oax[0], rows.outer}));
  KILN_RETURN_IF_ERROR(so->parallel(par));
  KILN_RETURN_IF_ERROR(vectorize_block(so, oax[4]).status());
  // Output transform, at the output's parallel loop.
  KILN_RETURN_IF_ERROR(sy->compute_at(so, par));
  KILN_RETURN_IF_ERROR(schedule_output_transform());
  // The GEMM: a copy stage (M) at the output's parallel loop, the register
  // block (M.local) at its tile loop.
  KILN_ASSIGN_OR_RETURN(te::Tensor ml, s.cache_write(anchor, "local"));
  te::Stage* local = s[ml];
  sm = s[anchor];
  KILN_RETURN_IF_ERROR(sm->compute_at(so, par));
  const std::vector<tir::IterVar> max = sm->op->axis;  // a, n, ocb, th, tw, oc
  KILN_ASSIGN_OR_RETURN(te::SplitAxes ws, sm->split(max[4], reg_n));
  KILN_RETURN_IF_ERROR(
      sm->reorder({max[0], max[1], max[3], max[2], ws.outer, ws.inner, max[5]}));
  KILN_RETURN_IF_ERROR(vectorize_block(sm, max[5]).status());
  KILN_RETURN_IF_ERROR(local->compute_at(sm, ws.outer));
  KILN_RETURN_IF_ERROR(ScheduleRegisterTile(local, lanes));
  // Input transform of the tile row, all 16 points of a window at once, at
  // the output's parallel loop.
  KILN_RETURN_IF_ERROR(sv->compute_at(so, par));
  {
    const std::vector<tir::IterVar> ax = sv->op->axis;  // a, n, icb, th, tw, ic
    KILN_RETURN_IF_ERROR(sv->reorder({ax[1], ax[2], ax[3], ax[4], ax[0], ax[5]}));
    KILN_RETURN_IF_ERROR(sv->unroll(ax[0]));
    KILN_RETURN_IF_ERROR(sv->vectorize(ax[5]));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterWinogradStrategies() {
  RegisterImplementation({"conv2d_winograd_NCHWc.x86", "nn.conv2d", 25, true, WinogradCompute,
                          ScheduleWinograd});
}

}  // namespace kiln::lowering::strategy::x86
