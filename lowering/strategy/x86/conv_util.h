// File: lowering/strategy/x86/conv_util.h — what the x86 convolution
// implementations share: layout and attribute
// parsing, the register tile width, the padded input.
#ifndef KILN_LOWERING_STRATEGY_X86_CONV_UTIL_H_
#define KILN_LOWERING_STRATEGY_X86_CONV_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/op_attrs.h"
#include "ir/tensor.h"
#include "lowering/compute/op_compute.h"
#include "ir/tir.h"
#include "lowering/strategy/target.h"
#include "lowering/te/schedule.h"
#include "lowering/te/te.h"

namespace kiln::lowering::strategy::x86 {

// "NCHW16c" -> 16 (prefix "NCHW", suffix "c"); 0 when `s` is not of that form.
int64_t BlockOf(const std::string& s, const std::string& prefix, const std::string& suffix);

// The constant dims of `shape`; false when one is symbolic.
bool Static(const std::vector<tir::PrimExpr>& shape, std::vector<int64_t>* out);

// The register tile of an output row of `ow` pixels of `ob` channels: reg_n
// pixels (ow padded to a multiple of it), and its modeled share of the FMA
// rate, in (0, 1]: below 1 when it has too few accumulators to hide the FMA
// latency or computes padded columns.
struct RegTile {
  int64_t reg_n = 1;
  double score = 0;
};
RegTile ChooseRegTile(const CpuTarget& t, int64_t ow, int64_t ob);
int64_t ChooseRegN(const CpuTarget& t, int64_t ow, int64_t ob);  // ChooseRegTile's reg_n

// x [N, C/c, H, W, c] zero-padded ([top, left, bottom, right], and on the
// right up to min_width columns), materialized (stage "data_pad"); x itself
// when nothing is padded.
te::Tensor PadNCHWc(const te::Tensor& x, const std::vector<int64_t>& xs,
                    std::vector<int64_t> pad, int64_t min_width);

// Strides and dilation as 2 values, padding as 4 ([top, left, bottom,
// right]); false when the attrs are malformed (the generic compute reports it).
bool Windows(const Conv2DAttrs& a, std::vector<int64_t>* st, std::vector<int64_t>* dil,
             std::vector<int64_t>* pad);

// The facts every x86 convolution implementation starts from: a float32
// nn.conv2d with data NCHW{ib}c and output NCHW{ob}c, static 5-D data and
// output, a 6-D weight (static shape), well-formed windows.
struct BlockedConv {
  const Conv2DAttrs* attrs = nullptr;
  std::string out_layout;
  int64_t ib = 0, ob = 0;
  std::vector<int64_t> xs, ws, os;  // data, weight, output shapes
  std::vector<int64_t> st, dil, pad;
  Ref<const HostTensor> weight;     // the constant weight, or null
};
std::optional<BlockedConv> ParseBlockedConv(const ComputeCtx& b,
                                            const std::vector<Ref<const HostTensor>>& constants);

// Schedules the "data_pad" stage `reader` reads (if any, and untouched):
// (n, channel block, row) fused and parallel, the channel block vectorized;
// or, with `attach_stage`, computed at `attach_axis` of it (the part one
// iteration reads), the channel block vectorized.
absl::Status SchedulePaddedInput(te::Schedule& s, const te::Operation& reader,
                                 te::Stage* attach_stage = nullptr,
                                 const tir::IterVar& attach_axis = tir::IterVar());

// The register block of an accumulator stage computed at a tile loop, whose
// data-parallel axes are [outer..., pixel, channel] (the outer ones one
// point inside the tile): outer axes, then every reduction axis, then the
// pixels unrolled and the channels vectorized (split into unrolled vectors
// of `lanes` when wider).
// `paired_blocks`: the accumulator spans two output channel blocks (its
// axis 1), unrolled inside the reduction loops so that each input broadcast
// feeds both blocks' FMAs.
absl::Status ScheduleRegisterTile(te::Stage* local, int64_t lanes, bool paired_blocks = false);

// `c` cut back to `shape` (its padded output width), or `c` itself.
te::Tensor Unpad(const te::Tensor& c, const std::vector<tir::PrimExpr>& shape);

}  // namespace kiln::lowering::strategy::x86

#endif  // KILN_LOWERING_STRATEGY_X86_CONV_UTIL_H_
