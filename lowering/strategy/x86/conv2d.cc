// File: lowering/strategy/x86/conv2d.cc — nn.conv2d on x86 in NCHW{c}c.
//
// AlterOpLayout blocks convolutions to data NCHW{ib}c, kernel
// OIHW{ib}i{ob}o, output NCHW{ob}c (ib, ob: channel blocks, ob a vector).
// Compute, with the input-channel reduction split into its blocks so every
// index is affine:
//   out[n, ocb, oh, ow, oc] = sum over (icb, kh, kw, ic) of
//       pad[n, icb, oh * sh + kh * dh, ow * sw + kw * dw, ic] * w[ocb, icb, kh, kw, ic, oc]
// The padded input is materialized once per call (parallel, vectorized): the
// micro-kernel then reads it without bounds checks.
//
// Schedule (the register-blocked micro-kernel of TVM's conv2d_NCHWc): an
// output row is cut into tiles of reg_n pixels; each tile's reg_n x ob
// accumulator (reg_n vector registers) is computed in a local stage with the
// reduction outside (icb, kh, kw, ic) and the reg_n pixels unrolled inside,
// so each step loads one weight vector and does reg_n broadcast FMAs. The
// epilogue (bias, batch-norm scale/shift, ReLU, residual add) is applied as
// the tile is written out; (n, ocb, oh) are fused into one parallel loop.
// reg_n comes from ChooseRegTile (conv_util.h): enough accumulators to hide
// the FMA latency, few padded columns, within the registers (24 accumulators
// on AVX-512, 12 on AVX2). Where no tile fits the row well, conv2d_gemm.x86
// (below) takes the convolution as a GEMM over the flattened pixels.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/strategy/strategy.h"
#include "lowering/strategy/x86/conv_util.h"
#include "lowering/strategy/x86/gemm.h"
#include "lowering/strategy/x86/x86.h"

namespace kiln::lowering::strategy::x86 {
namespace {

using tir::IntImm;
using tir::PrimExpr;

absl::StatusOr<std::optional<std::vector<te::Tensor>>> Conv2dNCHWcCompute(
    const StrategyComputeCtx& ctx) {
  const auto none = std::optional<std::vector<te::Tensor>>();
  const ComputeCtx& b = ctx.base;
  const std::optional<BlockedConv> p = ParseBlockedConv(b, ctx.constants);
  if (!p || p->attrs->groups < 1) return none;
  const Conv2DAttrs& a = *p->attrs;
  const int64_t ib = p->ib, ob = p->ob;
  const std::vector<int64_t>&xs = p->xs, &ws = p->ws, &os = p->os;
  const std::vector<int64_t>&st = p->st, &dil = p->dil, &pad = p->pad;
  const std::string& out_layout = p->out_layout;
  const te::Tensor x = b.inputs[0];
  const te::Tensor w = b.inputs[1];
  // Grouped (AlterOpLayout's Grouped): every output block inside one group
  // of ocb_per_group blocks, whose ws[1] input blocks start at block
  // (ocb / ocb_per_group) * ws[1].
  const int64_t groups = a.groups;
  if (a.kernel_layout != absl::StrCat("OIHW", ib, "i", ob, "o") || ws[4] != ib || ws[5] != ob ||
      ws[1] * groups != xs[1] || os[1] % groups != 0)
    return none;
  const int64_t ocb_per_group = os[1] / groups;
  // Vector-friendly output blocks only.
  const int64_t lanes = ctx.target.Lanes(DataType::Float(32));
  if (ob % lanes != 0 && lanes % ob != 0) return none;
  const int64_t kh = ws[2], kw = ws[3];

  // One vector per output block on 16 registers (AVX2's 8-channel blocks
  // of 24, 40, 72 or 120 channels): a one-block register tile spends each
  // input broadcast on a single FMA. Two blocks per tile share it; an odd
  // block count reads a zero block past the weight's end (a padded copy of
  // a constant weight) for the last pair, whose second block is not stored.
  const bool paired = ctx.target.vector_registers < 32 && ob == lanes && groups == 1 &&
                      os[1] >= 2 && ws[1] * ib * kh * kw >= 16 &&
                      (os[1] % 2 == 0 || p->weight);
  te::Tensor wt = w;
  if (paired && os[1] % 2 != 0) {
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> padded,
                          HostTensor::Create(DataType::Float(32),
                                             {ws[0] + 1, ws[1], ws[2], ws[3], ws[4], ws[5]}));
    const int64_t n = ws[0] * ws[1] * ws[2] * ws[3] * ws[4] * ws[5];
    std::copy(p->weight->data<float>(), p->weight->data<float>() + n,
              padded->mutable_data<float>());  // the extra block stays zero
    wt = ctx.add_constant(Ref<const HostTensor>(padded), "conv2d_paired_weight");
  }
  const int64_t reg_n = ChooseRegN(ctx.target, os[3], paired ? 2 * ob : ob);
  // The output width padded to whole tiles (sliced back after the epilogue).
  const int64_t owp = (os[3] + reg_n - 1) / reg_n * reg_n;
  te::Tensor xp = PadNCHWc(x, xs, pad, (owp - 1) * st[1] + (kw - 1) * dil[1] + 1);
  std::vector<PrimExpr> cshape = b.out_shapes[0];
  cshape[3] = IntImm(owp);
  const tir::IterVar rco = te::ReduceAxis({IntImm(0), IntImm(ws[1])}, "icb");
  const tir::IterVar ry = te::ReduceAxis({IntImm(0), IntImm(kh)}, "kh");
  const tir::IterVar rx = te::ReduceAxis({IntImm(0), IntImm(kw)}, "kw");
  const tir::IterVar rci = te::ReduceAxis({IntImm(0), IntImm(ib)}, "ic");
  te::Tensor out = te::Compute(
      cshape,
      [&](const std::vector<tir::Var>& i) {
        const PrimExpr ih = i[2] * IntImm(st[0]) + ry->var * IntImm(dil[0]);
        const PrimExpr iw = i[3] * IntImm(st[1]) + rx->var * IntImm(dil[1]);
        PrimExpr icb = rco->var;
        if (groups > 1) icb = tir::FloorDiv(i[1], IntImm(ocb_per_group)) * IntImm(ws[1]) + icb;
        return te::Sum(tir::Mul(xp({i[0], icb, ih, iw, rci->var}),
                                wt({i[1], rco->var, ry->var, rx->var, rci->var, i[4]})),
                       {rco, ry, rx, rci});
      },
      "conv2d_NCHWc", "conv2d_nchwc",
      {{kStrategyAttr, "conv2d_NCHWc.x86"},
       {"kiln.reg_n", absl::StrCat(reg_n)},
       {"kiln.lanes", absl::StrCat(std::min(lanes, ob))},
       {"kiln.paired_blocks", paired ? "1" : "0"},
       {"data_layout", a.data_layout},
       {"kernel_layout", a.kernel_layout},
       {"out_layout", out_layout}});
  return std::optional<std::vector<te::Tensor>>(
      std::vector<te::Tensor>{Unpad(out, b.out_shapes[0])});
}

// Depthwise (groups = channels, one filter each) in NCHW{c}c with kernel
// OIHW1i{c}o: out[n, cb, oh, ow, c] = sum over (kh, kw) of
//   pad[n, cb, oh * sh + kh * dh, ow * sw + kw * dw, c] * w[cb, 0, kh, kw, 0, c]
// Same micro-kernel as above with a vector load of the input instead of a
// broadcast.
absl::StatusOr<std::optional<std::vector<te::Tensor>>> DepthwiseNCHWcCompute(
    const StrategyComputeCtx& ctx) {
  const auto none = std::optional<std::vector<te::Tensor>>();
  const ComputeCtx& b = ctx.base;
  const std::optional<BlockedConv> p = ParseBlockedConv(b, ctx.constants);
  if (!p) return none;
  const Conv2DAttrs& a = *p->attrs;
  const int64_t cb = p->ib;
  const std::vector<int64_t>&xs = p->xs, &ws = p->ws, &os = p->os;
  const std::vector<int64_t>&st = p->st, &dil = p->dil, &pad = p->pad;
  const std::string& out_layout = p->out_layout;
  const te::Tensor x = b.inputs[0];
  const te::Tensor w = b.inputs[1];
  if (out_layout != a.data_layout || a.kernel_layout != absl::StrCat("OIHW1i", cb, "o") ||
      a.groups != xs[1] * cb || ws[0] != xs[1] || ws[1] != 1 || ws[4] != 1 || ws[5] != cb ||
      os[1] != xs[1])
    return none;
  const int64_t lanes = ctx.target.Lanes(DataType::Float(32));
  if (cb % lanes != 0 && lanes % cb != 0) return none;
  const int64_t reg_n = ChooseRegN(ctx.target, os[3], cb);
  // The output width padded to whole tiles (sliced back after the epilogue).
  const int64_t owp = (os[3] + reg_n - 1) / reg_n * reg_n;
  te::Tensor xp = PadNCHWc(x, xs, pad, (owp - 1) * st[1] + (ws[3] - 1) * dil[1] + 1);
  std::vector<PrimExpr> cshape = b.out_shapes[0];
  cshape[3] = IntImm(owp);
  const tir::IterVar ry = te::ReduceAxis({IntImm(0), IntImm(ws[2])}, "kh");
  const tir::IterVar rx = te::ReduceAxis({IntImm(0), IntImm(ws[3])}, "kw");
  te::Tensor out = te::Compute(
      cshape,
      [&](const std::vector<tir::Var>& i) {
        const PrimExpr ih = i[2] * IntImm(st[0]) + ry->var * IntImm(dil[0]);
        const PrimExpr iw = i[3] * IntImm(st[1]) + rx->var * IntImm(dil[1]);
        return te::Sum(tir::Mul(xp({i[0], i[1], ih, iw, i[4]}),
                                w({i[1], IntImm(0), ry->var, rx->var, IntImm(0), i[4]})),
                       {ry, rx});
      },
      "depthwise_conv2d_NCHWc", "depthwise_conv2d_nchwc",
      {{kStrategyAttr, "depthwise_conv2d_NCHWc.x86"},
       {"kiln.reg_n", absl::StrCat(reg_n)},
       {"kiln.lanes", absl::StrCat(std::min(lanes, cb))},
       // The padded rows each output row reads, made inside its task (see
       // ScheduleNCHWc), not a padded copy of the whole input: a depthwise
       // conv does KH*KW multiply-adds per element, too few to hide a
       // tensor-sized extra write and read. Strided, an input row is padded
       // about once; at stride 1 KH times, from cache, which still costs
       // less (MobileNetV2's and EfficientNet-B0's stride-1 depthwise kernels,
       // 1 thread: 6% and 1% less time in all; 2 threads: 7.5%).
       {"kiln.pad_per_row", "1"},
       {"data_layout", a.data_layout},
       {"kernel_layout", a.kernel_layout},
       {"out_layout", out_layout}});
  return std::optional<std::vector<te::Tensor>>(
      std::vector<te::Tensor>{Unpad(out, b.out_shapes[0])});
}

// A convolution as a GEMM over the output pixels ("implicit GEMM"):
//   out[n, p, oc] = sum_k a[n, p, k] * w[oc, k],   p = oh * OW + ow,
//   k = ((icb * KH + kh) * KW + kw) * ib + ic,
//   a[n, p, k] = pad[n, icb, oh * sh + kh * dh, ow * sw + kw * dw, ic]
// (k runs in the order the OIHW{ib}i{ob}o weight stores it). The register tile
// then spans MR pixels of the flattened H * W, whatever the output width, and
// the packed weight gives the micro-kernel NR contiguous floats per step. The
// result is re-blocked to NCHW{ob}c as the epilogue writes it: where NR is
// the channel block (AVX2) the output's tiles are the GEMM's and each
// accumulator tile is written straight out (GemmScheduleBlockedOutput; 3%
// of ResNet-50's kernel time at 1 thread); otherwise through a [pixels, OC]
// buffer and a second pass. Taken where
// the direct micro-kernel is weak:
//   - an output block narrower than a vector (NCHW8c on AVX-512: SqueezeNet's
//     1000 classes), for 1x1 stride-1 unpadded convolutions: full-width
//     vectors instead of half vectors;
//   - a row the direct register tile fits badly (ChooseRegTile's score below
//     0.95: too few accumulators to hide the FMA latency, or padded columns)
//     and K = IC * KH * KW of at least 64: the 14- and 7-wide layers of
//     ResNet-50 on AVX2, whose direct tiles ran at about half the FMA rate;
//   - 1x1 convolutions of 256+ input channels on AVX2 (below).
// A 1x1 convolution of 256 or more input channels on a 16-register target
// (AVX2): the direct tile (at most 6 pixels x 2 vectors) does one broadcast
// load per 2 FMAs, from as many input-channel planes as IC / ib, while the
// GEMM reads one packed stream. Measured on ResNet-50 on AVX2 (1 thread), the
// GEMM was 16-25% faster for its 28-wide 1x1 layers with 256-512 input
// channels, and slower with 64-128 (where the direct tile stays). AVX-512's
// direct tiles (14-24 pixels) reach about 90% of the peak there: unchanged.
bool DeepPointwiseOn16Registers(const CpuTarget& t, int64_t kh, int64_t kw, int64_t ic) {
  return t.vector_registers < 32 && kh == 1 && kw == 1 && ic >= 256;
}

absl::StatusOr<std::optional<std::vector<te::Tensor>>> ConvGemmCompute(
    const StrategyComputeCtx& ctx) {
  const auto none = std::optional<std::vector<te::Tensor>>();
  const ComputeCtx& b = ctx.base;
  const std::optional<BlockedConv> p = ParseBlockedConv(b, ctx.constants);
  if (!p || !p->weight || p->attrs->groups != 1) return none;
  const Conv2DAttrs& a = *p->attrs;
  const int64_t ib = p->ib, ob = p->ob;
  const std::vector<int64_t>&xs = p->xs, &ws = p->ws, &os = p->os;
  const std::vector<int64_t>&st = p->st, &dil = p->dil;
  const te::Tensor x = b.inputs[0];
  const int64_t lanes = ctx.target.Lanes(DataType::Float(32));
  if (a.kernel_layout != absl::StrCat("OIHW", ib, "i", ob, "o") || ws[1] != xs[1] ||
      ws[4] != ib || ws[5] != ob || (lanes % ob != 0 && ob % lanes != 0))
    return none;
  const int64_t kh = ws[2], kw = ws[3];
  const bool pointwise = kh == 1 && kw == 1 && st == std::vector<int64_t>{1, 1} &&
                         p->pad == std::vector<int64_t>{0, 0, 0, 0};
  if (ob < lanes) {
    if (!pointwise) return none;
  } else if ((ChooseRegTile(ctx.target, os[3], ob).score >= 0.95 &&
              !DeepPointwiseOn16Registers(ctx.target, kh, kw, xs[1] * ib)) ||
             xs[1] * ib * kh * kw < 64) {
    // The direct micro-kernel is as good (within 5%), or K is so short that
    // the GEMM's per-tile costs (A packed, accumulators, the re-blocking
    // store) outweigh its K steps: SqueezeNet's RGB stem (K = 27) ran 1.7x
    // slower as a GEMM, its 32- and 48-deep 1x1 layers ~10% slower.
    return none;
  }
  // Only for wide layers, where the GEMM's column panels (two vectors) waste
  // little: 24 or 40 channels would be padded by a third or more.
  const int64_t oc = os[1] * ob, nr = 2 * lanes;
  if (oc < 4 * nr || (oc + nr - 1) / nr * nr * 10 > oc * 11) return none;
  const te::Tensor xp = PadNCHWc(x, xs, p->pad, 0);
  const int64_t icb = xs[1], ow = os[3], kk = kh * kw * ib;
  GemmOperands g;
  g.out_shape = {IntImm(xs[0]), IntImm(os[2] * ow), IntImm(oc)};
  g.n = oc;
  g.k = icb * kk;
  g.pad_m = true;
  g.k_split = {kh, kw, ib};
  g.a = [xp, ib, kw, kk, ow, st, dil](const std::vector<PrimExpr>& lead, const PrimExpr& k) {
    const PrimExpr& px = lead[1];
    const PrimExpr r = tir::FloorMod(k, IntImm(kk));
    const PrimExpr ih = tir::FloorDiv(px, IntImm(ow)) * IntImm(st[0]) +
                        tir::FloorDiv(r, IntImm(kw * ib)) * IntImm(dil[0]);
    const PrimExpr iw = tir::FloorMod(px, IntImm(ow)) * IntImm(st[1]) +
                        tir::FloorMod(tir::FloorDiv(r, IntImm(ib)), IntImm(kw)) * IntImm(dil[1]);
    return xp({lead[0], tir::FloorDiv(k, IntImm(kk)), ih, iw, tir::FloorMod(k, IntImm(ib))});
  };
  const te::Tensor wt = b.inputs[1];
  g.b = [wt, ib, ob, kw, kk](const PrimExpr&, const PrimExpr& n, const PrimExpr& k) {
    const PrimExpr r = tir::FloorMod(k, IntImm(kk));
    return wt({tir::FloorDiv(n, IntImm(ob)), tir::FloorDiv(k, IntImm(kk)),
               tir::FloorDiv(r, IntImm(kw * ib)),
               tir::FloorMod(tir::FloorDiv(r, IntImm(ib)), IntImm(kw)),
               tir::FloorMod(k, IntImm(ib)), tir::FloorMod(n, IntImm(ob))});
  };
  // The weight [OC/ob, IC/ib, KH, KW, ib, ob] holds (n, k) at
  // (n / ob) * (K * ob) + k * ob + n % ob.
  const Ref<const HostTensor> wd = p->weight;
  const int64_t kall = g.k;
  g.b_const_at = [wd, ob, kall](int64_t n, int64_t k) {
    return wd->data<float>()[(n / ob) * kall * ob + k * ob + n % ob];
  };
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<te::Tensor>> c,
                        BuildGemm(ctx, g, "conv2d_gemm", "conv2d_gemm", "conv2d_gemm.x86"));
  if (!c) return none;
  const te::Tensor gemm = (*c)[0];  // [N, OH * OW, OC]
  te::Tensor out = te::Compute(
      b.out_shapes[0],
      [&](const std::vector<tir::Var>& i) {
        return gemm({i[0], i[2] * IntImm(ow) + i[3], i[1] * IntImm(ob) + i[4]});
      },
      "conv2d_gemm_nchwc", "injective");
  return std::optional<std::vector<te::Tensor>>(std::vector<te::Tensor>{out});
}

// The GEMM's schedule, and the padded input (when there is one) computed
// first by a parallel loop: the anchor, or its A-packing stage, reads it.
absl::Status ScheduleConvGemm(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                              const te::Tensor& anchor, const CpuTarget& target) {
  KILN_ASSIGN_OR_RETURN(bool blocked, GemmScheduleBlockedOutput(s, outputs, anchor));
  if (!blocked) KILN_RETURN_IF_ERROR(GemmSchedule(s, outputs, anchor, target));
  KILN_RETURN_IF_ERROR(SchedulePaddedInput(s, anchor.op()));
  for (const te::Tensor& in : anchor.op()->InputTensors()) {
    te::Stage* ps = s[in];
    if (ps != nullptr && !ps->is_placeholder()) {
      KILN_RETURN_IF_ERROR(SchedulePaddedInput(s, in.op()));
    }
  }
  return absl::OkStatus();
}

// The reader's shape is the anchor's, or its prefix on the (padded) width axis.
bool CoveredBy(const te::Operation& reader, const te::Operation& anchor) {
  if (SameShape(reader, anchor)) return true;
  const auto& x = reader->output_shapes[0];
  const auto& y = anchor->output_shapes[0];
  if (x.size() != 5 || y.size() != 5) return false;
  for (size_t i = 0; i < 5; ++i) {
    int64_t a = 0, b = 0;
    if (!tir::IsConstInt(x[i], &a) || !tir::IsConstInt(y[i], &b)) return false;
    if (i == 3 ? a > b : a != b) return false;
  }
  return true;
}


// Register tiles per chunk of a one-row output whose input row (every
// channel) outgrows 128 KB, so that a chunk's input (about 48 KB: 192 ran
// at 46 GFLOP/s, 96 at 60, 48 at 70, 24 at 67 on a 512-channel row of 3199)
// stays cached while every output channel block reads it; 0: no chunking
// (several rows, a row that fits, a large weight, or a row of one chunk).
int64_t RowChunkTiles(const te::Operation& anchor, int64_t reg_n) {
  const std::vector<PrimExpr>& os = anchor->output_shapes[0];  // n, ocb, oh, ow, ob
  int64_t oh = 0, ow = 0;
  if (os.size() != 5 || !tir::IsConstInt(os[2], &oh) || oh != 1 || !tir::IsConstInt(os[3], &ow)) {
    return 0;
  }
  // Each chunk reads the whole weight again: worth it while the weight is
  // small (wav2vec2's 3 MB layers: 46 -> 70 GFLOP/s), not for large ones
  // (a Jasper block's 768 -> 896 channels, 29 taps: 80 MB; its 8 MB
  // layers already ran 10% slower chunked).
  constexpr int64_t kMaxWeightBytes = 4 * 1024 * 1024;
  for (const te::Tensor& in : anchor->InputTensors()) {
    if (in.ndim() != 6) continue;
    int64_t elems = 1;
    for (const PrimExpr& d : in.shape()) {
      int64_t v = 0;
      if (!tir::IsConstInt(d, &v)) return 0;
      elems *= v;
    }
    if (elems * 4 > kMaxWeightBytes) return 0;
  }
  for (const te::Tensor& in : anchor->InputTensors()) {
    const std::vector<PrimExpr>& xs = in.shape();  // the data: n, icb, h, w, ib
    int64_t icb = 0, h = 0, w = 0, ib = 0;
    if (xs.size() != 5 || !tir::IsConstInt(xs[1], &icb) || !tir::IsConstInt(xs[2], &h) ||
        !tir::IsConstInt(xs[3], &w) || !tir::IsConstInt(xs[4], &ib)) {
      continue;
    }
    constexpr int64_t kRowBudget = 128 * 1024, kChunkBytes = 48 * 1024;
    const int64_t px_bytes = icb * h * ib * 4;  // one input column, every channel
    if (px_bytes * w <= kRowBudget || ow <= reg_n) return 0;
    // Input columns per output column: about w / ow (the stride).
    const double in_per_out = static_cast<double>(w) / static_cast<double>(ow);
    const int64_t out_px = static_cast<int64_t>(static_cast<double>(kChunkBytes / px_bytes) / in_per_out);
    const int64_t tiles = std::max<int64_t>(1, out_px / reg_n);
    return tiles * reg_n >= ow ? 0 : tiles;
  }
  return 0;
}

// The direct schedule; `pad_per_row` computes the padded input inside the
// (n, channel block, row) loop, the rows each output row reads, instead of
// materializing the whole padded input first (depthwise: little arithmetic
// per input byte, and a padded copy of a 112x112 input doubled the memory
// traffic; 450 -> 230 us for MobileNetV2's 96-channel stride-2 layer).
absl::Status ScheduleNCHWc(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                           const te::Tensor& anchor, bool pad_per_row) {
  const te::Operation& op = anchor.op();
  const int64_t reg_n = IntAttr(op, "kiln.reg_n", 8);
  const int64_t lanes = IntAttr(op, "kiln.lanes", 16);
  KILN_RETURN_IF_ERROR(InlineInjective(s, outputs));
  if (!pad_per_row) KILN_RETURN_IF_ERROR(SchedulePaddedInput(s, op));
  KILN_ASSIGN_OR_RETURN(AccumulatorStages st, SplitAccumulator(s, anchor, CoveredBy));
  te::Stage* out = st.out;
  te::Stage* local = st.local;
  const std::vector<tir::IterVar> ax = out->op->axis;  // n, ocb, oh, ow, oc
  if (ax.size() != 5) return absl::InternalError("conv2d_NCHWc: expected a 5-D output");
  KILN_ASSIGN_OR_RETURN(te::SplitAxes ws, out->split(ax[3], reg_n));
  tir::IterVar tile = ws.outer;
  tir::IterVar fused;
  const int64_t per_chunk = pad_per_row ? 0 : RowChunkTiles(op, reg_n);
  const bool paired = per_chunk == 0 && IntAttr(op, "kiln.paired_blocks", 0) != 0;
  if (per_chunk > 0) {
    // A one-row map (a Conv1d) whose input row, all channels, outgrows L2:
    // the row in chunks, each chunk's input reused by every channel block
    // instead of streamed once per block (wav2vec2's 512-channel stride-2
    // conv over 3199 samples: 6.5 MB of input, 32 blocks).
    KILN_ASSIGN_OR_RETURN(te::SplitAxes cs, out->split(ws.outer, per_chunk));
    tile = cs.inner;
    KILN_RETURN_IF_ERROR(
        out->reorder({ax[0], ax[2], cs.outer, ax[1], cs.inner, ws.inner, ax[4]}));
    KILN_ASSIGN_OR_RETURN(fused, out->fuse({ax[0], ax[2], cs.outer, ax[1]}));
  } else if (paired) {
    // Two output blocks per register tile (Conv2dNCHWcCompute's pairing).
    KILN_ASSIGN_OR_RETURN(te::SplitAxes bs, out->split(ax[1], 2));
    KILN_RETURN_IF_ERROR(
        out->reorder({ax[0], bs.outer, ax[2], ws.outer, bs.inner, ws.inner, ax[4]}));
    KILN_ASSIGN_OR_RETURN(fused, out->fuse({ax[0], bs.outer, ax[2]}));
  } else {
    KILN_RETURN_IF_ERROR(out->reorder({ax[0], ax[1], ax[2], ws.outer, ws.inner, ax[4]}));
    KILN_ASSIGN_OR_RETURN(fused, out->fuse({ax[0], ax[1], ax[2]}));
  }
  KILN_RETURN_IF_ERROR(out->parallel(fused));
  if (pad_per_row) KILN_RETURN_IF_ERROR(SchedulePaddedInput(s, op, out, fused));
  tir::IterVar oc_inner = ax[4];
  int64_t ob = 0;
  if (tir::IsConstInt(ax[4]->dom.extent, &ob) && ob > lanes) {
    KILN_ASSIGN_OR_RETURN(te::SplitAxes v, out->split(ax[4], lanes));
    oc_inner = v.inner;
  }
  KILN_RETURN_IF_ERROR(out->vectorize(oc_inner));

  KILN_RETURN_IF_ERROR(local->compute_at(out, tile));
  return ScheduleRegisterTile(local, lanes, paired);
}

absl::Status ScheduleConv2dNCHWc(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                                 const te::Tensor& anchor, const CpuTarget&) {
  return ScheduleNCHWc(s, outputs, anchor, /*pad_per_row=*/false);
}

absl::Status ScheduleDepthwiseNCHWc(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                                    const te::Tensor& anchor, const CpuTarget&) {
  return ScheduleNCHWc(s, outputs, anchor, IntAttr(anchor.op(), "kiln.pad_per_row", 0) != 0);
}

}  // namespace

void RegisterConv2dStrategies() {
  RegisterImplementation({"conv2d_NCHWc.x86", "nn.conv2d", 20, true, Conv2dNCHWcCompute,
                          ScheduleConv2dNCHWc});
  RegisterImplementation({"conv2d_gemm.x86", "nn.conv2d", 22, true, ConvGemmCompute,
                          ScheduleConvGemm});
  RegisterImplementation({"depthwise_conv2d_NCHWc.x86", "nn.conv2d", 20, true,
                          DepthwiseNCHWcCompute, ScheduleDepthwiseNCHWc});
}

}  // namespace kiln::lowering::strategy::x86
