// File: lowering/strategy/x86/conv_util.cc
#include "lowering/strategy/x86/conv_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "lowering/strategy/strategy.h"

namespace kiln::lowering::strategy::x86 {

using tir::IntImm;
using tir::PrimExpr;

// "NCHW16c" -> 16; 0 when `s` is not NCHW{x}c.
int64_t BlockOf(const std::string& s, const std::string& prefix, const std::string& suffix) {
  if (s.size() <= prefix.size() + suffix.size() || s.rfind(prefix, 0) != 0 ||
      s.compare(s.size() - suffix.size(), suffix.size(), suffix) != 0)
    return 0;
  const std::string num = s.substr(prefix.size(), s.size() - prefix.size() - suffix.size());
  int64_t v = 0;
  for (char c : num) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
    if (v > 1 << 20) return 0;
  }
  return v;
}

bool Static(const std::vector<PrimExpr>& shape, std::vector<int64_t>* out) {
  out->clear();
  for (const PrimExpr& e : shape) {
    int64_t v = 0;
    if (!tir::IsConstInt(e, &v)) return false;
    out->push_back(v);
  }
  return true;
}

// Pixels per register tile. The micro-kernel runs at the FMA units' rate only
// with enough independent accumulators to cover the FMA latency (kLatencyAcc:
// 4-cycle latency x 2 FMA ports on current x86 cores) and without padded
// columns (computed, then dropped). Each candidate up to the register budget
// scores min(1, accumulators / kLatencyAcc) x (useful / computed columns); the
// best wins, the larger tile on ties. (An earlier rule took any exact divisor
// of at least a third of the budget first: a 14-wide row on AVX2 got 2-pixel
// tiles, 4 accumulators, about half the FMA rate.)
int64_t ChooseRegN(const CpuTarget& t, int64_t ow, int64_t ob) {
  return ChooseRegTile(t, ow, ob).reg_n;
}

RegTile ChooseRegTile(const CpuTarget& t, int64_t ow, int64_t ob) {
  constexpr int64_t kLatencyAcc = 8;
  const int64_t vectors_per_pixel = std::max<int64_t>(1, ob / t.Lanes(DataType::Float(32)));
  const int64_t max_acc = t.vector_registers >= 32 ? 24 : 12;
  const int64_t cap = std::max<int64_t>(1, max_acc / vectors_per_pixel);
  RegTile best;
  best.reg_n = std::max<int64_t>(1, std::min(cap, ow));
  best.score = -1;
  for (int64_t r = std::min(cap, std::max<int64_t>(ow, 1)); r >= 1; --r) {
    const double cover = std::min(
        1.0, static_cast<double>(r * vectors_per_pixel) / static_cast<double>(kLatencyAcc));
    const double useful =
        static_cast<double>(ow) / static_cast<double>((ow + r - 1) / r * r);
    const double score = cover * useful;
    if (score > best.score + 1e-9) {
      best.reg_n = r;
      best.score = score;
    }
  }
  return best;
}

// x [N, C/c, H, W, c] zero-padded on H and W ([top, left, bottom, right], and
// on the right up to `min_width` columns), materialized (the micro-kernel reads
// it without bounds checks); x itself when there is no padding.
te::Tensor PadNCHWc(const te::Tensor& x, const std::vector<int64_t>& xs,
                    std::vector<int64_t> pad, int64_t min_width) {
  const DataType f32 = DataType::Float(32);
  // More zero columns on the right when the padded output width reads them.
  pad[3] += std::max<int64_t>(0, min_width - (xs[3] + pad[1] + pad[3]));
  if (!(pad[0] || pad[1] || pad[2] || pad[3])) return x;
  const int64_t h = xs[2], wd = xs[3];
  return te::Compute(
      {IntImm(xs[0]), IntImm(xs[1]), IntImm(h + pad[0] + pad[2]), IntImm(wd + pad[1] + pad[3]),
       IntImm(xs[4])},
      [&](const std::vector<tir::Var>& i) {
        const PrimExpr ih = i[2] - IntImm(pad[0]);
        const PrimExpr iw = i[3] - IntImm(pad[1]);
        PrimExpr in = tir::And(tir::And(tir::GE(ih, IntImm(0)), tir::LT(ih, IntImm(h))),
                               tir::And(tir::GE(iw, IntImm(0)), tir::LT(iw, IntImm(wd))));
        return tir::Call(f32, "if_then_else",
                         {in, x({i[0], i[1], ih, iw, i[4]}), tir::MakeConst(f32, 0)});
      },
      "data_pad", "injective", {{"no_inline", "1"}});
}

// Strides and dilation as 2 values, padding as 4 ([top, left, bottom,
// right]); false when the attrs are malformed (the generic compute reports it).
bool Windows(const Conv2DAttrs& a, std::vector<int64_t>* st, std::vector<int64_t>* dil,
             std::vector<int64_t>* pad) {
  *st = a.strides;
  *dil = a.dilation;
  *pad = a.padding;
  if (st->size() == 1) *st = {(*st)[0], (*st)[0]};
  if (dil->size() == 1) *dil = {(*dil)[0], (*dil)[0]};
  if (pad->size() == 1) *pad = {(*pad)[0], (*pad)[0], (*pad)[0], (*pad)[0]};
  if (pad->size() == 2) *pad = {(*pad)[0], (*pad)[1], (*pad)[0], (*pad)[1]};
  if (st->size() != 2 || dil->size() != 2 || pad->size() != 4) return false;
  for (int64_t v : *pad) {
    if (v < 0) return false;
  }
  return true;
}

// `c` cut back to `shape` (its padded output width), or `c` itself.
te::Tensor Unpad(const te::Tensor& c, const std::vector<PrimExpr>& shape) {
  int64_t want = 0, have = 0;
  if (tir::IsConstInt(shape[3], &want) && tir::IsConstInt(c.shape()[3], &have) && want == have)
    return c;
  return te::Compute(
      shape,
      [&](const std::vector<tir::Var>& i) { return c(std::vector<PrimExpr>(i.begin(), i.end())); },
      absl::StrCat(c.name(), "_unpad"), "injective");
}


absl::Status SchedulePaddedInput(te::Schedule& s, const te::Operation& reader,
                                 te::Stage* attach_stage, const tir::IterVar& attach_axis) {
  for (const te::Tensor& in : reader->InputTensors()) {
    te::Stage* ps = s[in];
    if (ps == nullptr || ps->is_placeholder() || !IsUntouched(*ps) || in.op()->name != "data_pad")
      continue;
    const std::vector<tir::IterVar> pax = ps->op->axis;  // n, cb, h, w, c
    if (attach_stage != nullptr) {
      // The rows one iteration of attach_axis reads, padded right there
      // (a few rows in cache) instead of a padded copy of the whole input.
      KILN_RETURN_IF_ERROR(ps->compute_at(attach_stage, attach_axis));
      int64_t cb = 0;
      if (tir::IsConstInt(pax[4]->dom.extent, &cb) && cb >= 4) {
        KILN_RETURN_IF_ERROR(ps->vectorize(pax[4]));
      }
      continue;
    }
    KILN_ASSIGN_OR_RETURN(tir::IterVar f, ps->fuse({pax[0], pax[1], pax[2]}));
    KILN_RETURN_IF_ERROR(ps->parallel(f));
    int64_t cb = 0;
    if (tir::IsConstInt(pax[4]->dom.extent, &cb) && cb >= 4) {
      KILN_RETURN_IF_ERROR(ps->vectorize(pax[4]));
    }
  }
  return absl::OkStatus();
}

absl::Status ScheduleRegisterTile(te::Stage* local, int64_t lanes, bool paired_blocks) {
  const std::vector<tir::IterVar> lax = local->op->axis;
  const std::vector<tir::IterVar> rax = local->op->reduce_axis;
  if (lax.size() < 2 || rax.empty() || (paired_blocks && lax.size() != 5)) {
    return absl::InternalError(
        absl::StrCat(local->name(), ": unexpected accumulator stage axes"));
  }
  const tir::IterVar& pixel = lax[lax.size() - 2];
  const tir::IterVar& channel = lax.back();
  std::vector<tir::IterVar> order;
  for (size_t i = 0; i + 2 < lax.size(); ++i) {
    if (!(paired_blocks && i == 1)) order.push_back(lax[i]);
  }
  order.insert(order.end(), rax.begin(), rax.end());
  if (paired_blocks) {
    order.push_back(lax[1]);
    KILN_RETURN_IF_ERROR(local->unroll(lax[1]));
  }
  order.push_back(pixel);
  tir::IterVar lv = channel;
  int64_t width = 0;
  if (tir::IsConstInt(channel->dom.extent, &width) && width > lanes) {
    KILN_ASSIGN_OR_RETURN(te::SplitAxes v, local->split(channel, lanes));
    order.push_back(v.outer);
    lv = v.inner;
    KILN_RETURN_IF_ERROR(local->unroll(v.outer));
  }
  order.push_back(lv);
  KILN_RETURN_IF_ERROR(local->reorder(order));
  KILN_RETURN_IF_ERROR(local->unroll(pixel));
  return local->vectorize(lv);
}

std::optional<BlockedConv> ParseBlockedConv(const ComputeCtx& b,
                                            const std::vector<Ref<const HostTensor>>& constants) {
  const DataType f32 = DataType::Float(32);
  if (b.inputs.size() != 2 || b.out_dtypes.size() != 1 || b.out_dtypes[0] != f32 ||
      b.inputs[0].dtype() != f32 || b.inputs[1].dtype() != f32)
    return std::nullopt;
  BlockedConv c;
  c.attrs = &b.Attrs<Conv2DAttrs>();
  const Conv2DAttrs& a = *c.attrs;
  c.out_layout = a.out_layout.empty() ? a.data_layout : a.out_layout;
  c.ib = BlockOf(a.data_layout, "NCHW", "c");
  c.ob = BlockOf(c.out_layout, "NCHW", "c");
  if (c.ib == 0 || c.ob == 0 || b.inputs[0].ndim() != 5 || b.inputs[1].ndim() != 6 ||
      !Static(b.inputs[0].shape(), &c.xs) || !Static(b.inputs[1].shape(), &c.ws) ||
      !Static(b.out_shapes[0], &c.os) || c.os.size() != 5 || c.xs[4] != c.ib ||
      c.os[4] != c.ob || !Windows(a, &c.st, &c.dil, &c.pad))
    return std::nullopt;
  if (constants.size() == 2 && constants[1] && constants[1]->dtype() == f32) c.weight = constants[1];
  return c;
}

}  // namespace kiln::lowering::strategy::x86
