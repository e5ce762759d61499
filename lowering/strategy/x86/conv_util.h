// File: lowering/strategy/x86/conv_util.h — what the x86 convolution
// implementations share: layout and attribute
// parsing, the register tile width, the padded input.
#ifndef KILN_LOWERING_STRATEGY_X86_CONV_UTIL_H_
#define KILN_LOWERING_STRATEGY_X86_CONV_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/op_attrs.h"
#include "ir/tir.h"
#include "lowering/strategy/target.h"
#include "lowering/te/te.h"

namespace kiln::lowering::strategy::x86 {

// "NCHW16c" -> 16 (prefix "NCHW", suffix "c"); 0 when `s` is not of that form.
int64_t BlockOf(const std::string& s, const std::string& prefix, const std::string& suffix);

// The constant dims of `shape`; false when one is symbolic.
bool Static(const std::vector<tir::PrimExpr>& shape, std::vector<int64_t>* out);

// Pixels per register tile for an output row of `ow` pixels of `ob`
// channels: an exact divisor of ow if a good one exists, else the tile that
// pads ow the least.
int64_t ChooseRegN(const CpuTarget& t, int64_t ow, int64_t ob);

// x [N, C/c, H, W, c] zero-padded ([top, left, bottom, right], and on the
// right up to min_width columns), materialized (stage "data_pad"); x itself
// when nothing is padded.
te::Tensor PadNCHWc(const te::Tensor& x, const std::vector<int64_t>& xs,
                    std::vector<int64_t> pad, int64_t min_width);

// Strides and dilation as 2 values, padding as 4 ([top, left, bottom,
// right]); false when the attrs are malformed (the generic compute reports it).
bool Windows(const Conv2DAttrs& a, std::vector<int64_t>* st, std::vector<int64_t>* dil,
             std::vector<int64_t>* pad);

// `c` cut back to `shape` (its padded output width), or `c` itself.
te::Tensor Unpad(const te::Tensor& c, const std::vector<tir::PrimExpr>& shape);

}  // namespace kiln::lowering::strategy::x86

#endif  // KILN_LOWERING_STRATEGY_X86_CONV_UTIL_H_
