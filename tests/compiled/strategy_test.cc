// File: tests/compiled/strategy_test.cc
//
// The x86 operator strategies (lowering/strategy/x86), compiled with LLVM and
// run, against the interpreter on the same inputs: packed GEMMs (constant
// weights packed at compile time, runtime packing, padded N, M tails, M = 1,
// batched, broadcast batch, fused epilogues) and NCHWc convolutions (blocked
// by AlterOpLayout at O3 from NCHW, the RGB stem's 3-channel block, 8-wide
// output blocks, strides, dilation, asymmetric padding, bias / batch-norm /
// residual epilogues). Each case also checks that the strategy was applied,
// so a silent fallback to the default schedule fails the test.
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "codegen_llvm/codegen_llvm.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "kiln/threadpool.h"
#include "tests/compiled/compare.h"
#include "tests/compiled/jit_runner.h"
#include "types/infer_type.h"

namespace kiln::testing {
namespace {

struct StrategyCase {
  std::string name;
  std::string params;
  std::string body;
  std::vector<std::string> constants;  // parameters turned into constants
  std::string strategy;                // must be applied to some kernel
  int opt_level = 0;
  std::string target = "llvm";
};

// Vector register width of a target string (0 when it does not parse).
int VectorBits(const std::string& target) {
  absl::StatusOr<codegen::Target> t = codegen::ParseTarget(target);
  if (!t.ok()) return 0;
  absl::StatusOr<int> bits = codegen::VectorRegisterBits(*t);
  return bits.ok() ? *bits : 0;
}

std::vector<StrategyCase> Cases() {
  std::vector<StrategyCase> c;
  for (const char* t : {"llvm", "llvm -mcpu=haswell"}) {  // AVX-512 host (or not), AVX2
    const std::string sfx = std::string(t) == "llvm" ? "" : "_avx2";
    auto add = [&](StrategyCase k) {
      k.name += sfx;
      k.target = t;
      c.push_back(k);
    };
    add({"dense_const_padded_n", "%x: Tensor[(64, 40), float32], %w: Tensor[(48, 40), float32]",
         "nn.dense(%x, %w)", {"w"}, "dense_pack.x86"});
    add({"dense_3d_runtime_pack_tails", "%x: Tensor[(2, 13, 37), float32], %w: Tensor[(70, 37), float32]",
         "nn.dense(%x, %w)", {}, "dense_pack.x86"});
    add({"dense_m1", "%x: Tensor[(1, 256), float32], %w: Tensor[(100, 256), float32]",
         "nn.dense(%x, %w)", {"w"}, "dense_pack.x86"});
    // GEMVs (at most 3 rows): column panels of up to 8 vectors, N padded.
    add({"dense_m1_wide_panels_padded_n", "%x: Tensor[(1, 96), float32], %w: Tensor[(1000, 96), float32]",
         "nn.dense(%x, %w)", {"w"}, "dense_pack.x86"});
    add({"dense_m2_bias", "%x: Tensor[(2, 64), float32], %w: Tensor[(256, 64), float32], %b: Tensor[(256,), float32]",
         "add(nn.dense(%x, %w), %b)", {"w", "b"}, "dense_pack.x86", 3});
    add({"matmul_m3_runtime_b", "%x: Tensor[(3, 40), float32], %w: Tensor[(40, 200), float32]",
         "nn.matmul(%x, %w)", {}, "matmul_pack.x86"});
    add({"batch_matmul_m1", "%x: Tensor[(2, 1, 32), float32], %y: Tensor[(2, 512, 32), float32]",
         "nn.batch_matmul(%x, %y)", {}, "batch_matmul_pack.x86"});
    add({"matmul_bias_relu", "%x: Tensor[(96, 64), float32], %w: Tensor[(64, 64), float32], %b: Tensor[(64,), float32]",
         "nn.relu(add(nn.matmul(%x, %w), %b))", {"w", "b"}, "matmul_pack.x86", 3});
    add({"matmul_gelu_3d", "%x: Tensor[(1, 24, 32), float32], %w: Tensor[(32, 96), float32]",
         "nn.gelu(nn.matmul(%x, %w))", {"w"}, "matmul_pack.x86", 3});
    add({"matmul_transposed", "%x: Tensor[(20, 33), float32], %w: Tensor[(40, 20), float32]",
         "nn.matmul(%x, %w, transpose_a=true, transpose_b=true)", {}, "matmul_pack.x86"});
    add({"matmul_transposed_const", "%x: Tensor[(18, 33), float32], %w: Tensor[(40, 33), float32]",
         "nn.matmul(%x, %w, transpose_b=true)", {"w"}, "matmul_pack.x86"});
    // Several leading output dimensions whose last tiles badly (7 rows,
    // ConvNeXt's 7x7 stage as [1, 7, 7, C]): flattened into M = 49 (padded
    // to a whole row tile), with a fused GELU; a dense on [2, 3, 5, K].
    add({"matmul_4d_7x7_rows_gelu_o3", "%x: Tensor[(1, 7, 7, 48), float32], %w: Tensor[(48, 40), float32]",
         "nn.gelu(nn.matmul(%x, %w))", {"w"}, "matmul_pack.x86", 3});
    add({"dense_4d_short_rows", "%x: Tensor[(2, 3, 5, 24), float32], %w: Tensor[(32, 24), float32]",
         "nn.dense(%x, %w)", {"w"}, "dense_pack.x86"});
    // 2-D with 197 rows (ViT's tokens; no tile divides them): padded to a
    // whole number of row tiles, with a bias + GELU epilogue.
    add({"dense_197_rows_bias_gelu_o3",
         "%x: Tensor[(197, 32), float32], %w: Tensor[(48, 32), float32], %b: Tensor[(48,), float32]",
         "nn.gelu(nn.bias_add(nn.dense(%x, %w), %b))", {"w", "b"}, "dense_pack.x86", 3});
    add({"dense_5d_unit_axes_between_rows_squared",
         "%x: Tensor[(1, 2, 1, 7, 24), float32], %w: Tensor[(32, 24), float32]",
         "multiply(nn.dense(%x, %w), nn.dense(%x, %w))", {"w"}, "dense_pack.x86", 3});
    add({"batch_matmul_tb", "%x: Tensor[(4, 33, 20), float32], %y: Tensor[(4, 48, 20), float32]",
         "nn.batch_matmul(%x, %y)", {}, "batch_matmul_pack.x86"});
    add({"batch_matmul_broadcast", "%x: Tensor[(1, 16, 24), float32], %y: Tensor[(3, 24, 40), float32]",
         "nn.batch_matmul(%x, %y, transpose_b=false)", {}, "batch_matmul_pack.x86"});
    add({"conv3x3_bias_relu_o3", "%x: Tensor[(1, 32, 14, 14), float32], %w: Tensor[(32, 32, 3, 3), float32], %b: Tensor[(32,), float32]",
         "nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b))", {"w", "b"},
         "conv2d_winograd_NCHWc.x86", 3});
    add({"conv3x3_weight_param_direct_o3",
         "%x: Tensor[(1, 32, 14, 14), float32], %w: Tensor[(32, 32, 3, 3), float32]",
         "nn.relu(nn.conv2d(%x, %w, padding=[1, 1]))", {}, "conv2d_NCHWc.x86", 3});
    // 9 tile rows: the one-loop-over-rows Winograd schedule (the cases
    // around it have fewer than 8 and take the three-pass one).
    add({"winograd_rows_18x18_o3",
         "%x: Tensor[(1, 16, 18, 18), float32], %w: Tensor[(32, 16, 3, 3), float32]",
         "nn.relu(nn.conv2d(%x, %w, padding=[1, 1]))", {"w"}, "conv2d_winograd_NCHWc.x86", 3});
    add({"winograd_odd_13x13_residual_o3",
         "%x: Tensor[(1, 32, 13, 13), float32], %w: Tensor[(48, 32, 3, 3), float32], %r: Tensor[(1, 48, 13, 13), float32]",
         "nn.relu(add(nn.conv2d(%x, %w, padding=[1, 1]), %r))", {"w"},
         "conv2d_winograd_NCHWc.x86", 3});
    add({"winograd_no_padding_odd_width_o3",
         "%x: Tensor[(1, 16, 13, 14), float32], %w: Tensor[(32, 16, 3, 3), float32]",
         "nn.conv2d(%x, %w)", {"w"}, "conv2d_winograd_NCHWc.x86", 3});
    add({"winograd_asym_padding_2_images_o3",
         "%x: Tensor[(2, 16, 12, 12), float32], %w: Tensor[(64, 16, 3, 3), float32]",
         "nn.conv2d(%x, %w, padding=[0, 1, 2, 1])", {"w"}, "conv2d_winograd_NCHWc.x86", 3});
    add({"winograd_nchwc_32_out", "%x: Tensor[(1, 2, 12, 12, 16), float32], %w: Tensor[(1, 2, 3, 3, 16, 32), float32]",
         "nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i32o\", "
         "out_layout=\"NCHW32c\")",
         {"w"}, "conv2d_winograd_NCHWc.x86"});
    add({"conv_stem_rgb_o3", "%x: Tensor[(1, 3, 23, 23), float32], %w: Tensor[(16, 3, 7, 7), float32]",
         "nn.relu(nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3]))", {"w"}, "conv2d_NCHWc.x86", 3});
    add({"conv1x1_oc24_stride2_residual_o3",
         "%x: Tensor[(1, 16, 10, 10), float32], %w: Tensor[(24, 16, 1, 1), float32], %v: Tensor[(24, 16, 1, 1), float32]",
         "add(nn.conv2d(%x, %w, strides=[2, 2]), nn.relu(nn.conv2d(%x, %v, strides=[2, 2])))",
         {"w", "v"}, "conv2d_NCHWc.x86", 3});
    add({"conv_bn_channel_vectors_o3",
         "%x: Tensor[(1, 16, 11, 11), float32], %w: Tensor[(32, 16, 3, 3), float32], %s: Tensor[(32, 1, 1), float32], %t: Tensor[(32, 1, 1), float32]",
         "nn.relu(add(multiply(nn.conv2d(%x, %w, padding=[1, 1]), %s), %t))", {"w", "s", "t"},
         "conv2d_winograd_NCHWc.x86", 3});
    add({"depthwise_bn_relu6_o3",
         "%x: Tensor[(1, 32, 15, 15), float32], %w: Tensor[(32, 1, 3, 3), float32], %t: Tensor[(32, 1, 1), float32]",
         "clip(add(nn.conv2d(%x, %w, padding=[1, 1], groups=32), %t), a_min=0f, a_max=6f)",
         {"w", "t"}, "depthwise_conv2d_NCHWc.x86", 3});
    add({"depthwise_stride2_o3", "%x: Tensor[(1, 48, 14, 14), float32], %w: Tensor[(48, 1, 3, 3), float32]",
         "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=48)", {"w"},
         "depthwise_conv2d_NCHWc.x86", 3});
    // Strided depthwise pads the input rows per output row (inside the
    // parallel loop): a 5x5, stride 2, asymmetric padding, odd sizes.
    add({"depthwise_5x5_stride2_asym_o3",
         "%x: Tensor[(1, 32, 15, 13), float32], %w: Tensor[(32, 1, 5, 5), float32]",
         "nn.conv2d(%x, %w, strides=[2, 2], padding=[2, 1, 1, 2], groups=32)", {"w"},
         "depthwise_conv2d_NCHWc.x86", 3});
    add({"depthwise_5x5_c24_o3", "%x: Tensor[(1, 24, 11, 11), float32], %w: Tensor[(24, 1, 5, 5), float32]",
         "nn.relu(nn.conv2d(%x, %w, padding=[2, 2], groups=24))", {"w"},
         "depthwise_conv2d_NCHWc.x86", 3});
    add({"pools_and_concat_stay_blocked_o3",
         "%x: Tensor[(1, 16, 16, 16), float32], %w: Tensor[(32, 16, 3, 3), float32], %v: Tensor[(16, 16, 1, 1), float32], %u: Tensor[(32, 48, 1, 1), float32]",
         "%0 = nn.relu(nn.conv2d(%x, %w, padding=[1, 1]));\n"
         "  %1 = nn.max_pool2d(%0, pool_size=[3, 3], strides=[2, 2], ceil_mode=true);\n"
         "  %2 = nn.relu(nn.conv2d(%x, %v, strides=[2, 2]));\n"
         "  %3 = nn.avg_pool2d(%2, pool_size=[3, 3], padding=[1, 1], count_include_pad=false);\n"
         "  %4 = concatenate((%1, %3), axis=1);\n"
         "  %5 = nn.conv2d(%4, %u);\n"
         "  nn.global_avg_pool2d(%5)",
         {"w", "v", "u"}, "conv2d_NCHWc.x86", 3});
    add({"conv_prime_width_padded_tiles_o3",
         "%x: Tensor[(1, 16, 7, 55), float32], %w: Tensor[(32, 16, 3, 3), float32], %b: Tensor[(32,), float32]",
         "nn.relu(nn.bias_add(nn.conv2d(%x, %w), %b))", {"w", "b"}, "conv2d_winograd_NCHWc.x86", 3});
    add({"depthwise_prime_width_o3", "%x: Tensor[(1, 32, 4, 61), float32], %w: Tensor[(32, 1, 3, 3), float32]",
         "nn.conv2d(%x, %w, padding=[1, 1], groups=32)", {"w"}, "depthwise_conv2d_NCHWc.x86", 3});
    add({"conv_8_wide_out_block_stride2_o3",
         "%x: Tensor[(1, 16, 9, 9), float32], %w: Tensor[(40, 16, 3, 3), float32], %b: Tensor[(40,), float32]",
         "nn.relu(nn.bias_add(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1]), %b))", {"w", "b"},
         "conv2d_NCHWc.x86", 3});
    // 1000 channels: AlterOpLayout pads them to 63 blocks of 16 (0.8% more
    // work), so the kernels run with full vectors on either ISA. A 5-wide
    // row: on AVX2 the direct tile is 5 pixels x 2 vectors (10 accumulators);
    // on AVX-512, 5 x 1 is too few to hide the FMA latency, so the GEMM.
    add({"conv1x1_1000_channels_o3",
         "%x: Tensor[(1, 64, 5, 5), float32], %w: Tensor[(1000, 64, 1, 1), float32]",
         "nn.relu(nn.conv2d(%x, %w))", {"w"},
         VectorBits(t) >= 512 ? "conv2d_gemm.x86" : "conv2d_NCHWc.x86", 3});
    // 264 channels (8 * 33; padding to 272 would be 3%): 8-wide blocks,
    // narrower than an AVX-512 vector, so the 1x1 runs as a GEMM there; on
    // AVX2 a block is one vector, and 5 pixels x 1 vector too few
    // accumulators: the GEMM too.
    add({"conv1x1_264_channels_o3",
         "%x: Tensor[(1, 64, 5, 5), float32], %w: Tensor[(264, 64, 1, 1), float32]",
         "nn.relu(nn.conv2d(%x, %w))", {"w"}, "conv2d_gemm.x86", 3});
    // Convolutions as implicit GEMMs (a row the direct tile fits badly):
    // 7-wide outputs on either ISA (M = 49 pixels: padded to 50 for a 5-row
    // tile on AVX2), with padding, strides, dilation, two images, epilogues.
    add({"conv_gemm_3x3_stride2_bias_relu_o3",
         "%x: Tensor[(1, 32, 14, 14), float32], %w: Tensor[(128, 32, 3, 3), float32], %b: Tensor[(128,), float32]",
         "nn.relu(nn.bias_add(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1]), %b))",
         {"w", "b"}, "conv2d_gemm.x86", 3});
    add({"conv_gemm_3x3_few_tiles_not_winograd_residual_o3",
         "%x: Tensor[(1, 32, 7, 7), float32], %w: Tensor[(128, 32, 3, 3), float32], %r: Tensor[(1, 128, 7, 7), float32]",
         "nn.relu(add(nn.conv2d(%x, %w, padding=[1, 1]), %r))", {"w"}, "conv2d_gemm.x86", 3});
    add({"conv_gemm_dilated_asym_pad_2_images_o3",
         "%x: Tensor[(2, 16, 9, 8), float32], %w: Tensor[(160, 16, 3, 3), float32]",
         "nn.conv2d(%x, %w, padding=[1, 0, 2, 1], dilation=[2, 1])", {"w"}, "conv2d_gemm.x86", 3});
    // 256 input channels, 1x1: on AVX2 the GEMM (one packed A stream instead
    // of 16 input-channel planes under a 4x2 tile); AVX-512's 8-pixel direct
    // tile stays.
    add({"conv1x1_deep_stride2_o3",
         "%x: Tensor[(1, 256, 16, 16), float32], %w: Tensor[(128, 256, 1, 1), float32], %b: Tensor[(128,), float32]",
         "nn.relu(nn.bias_add(nn.conv2d(%x, %w, strides=[2, 2]), %b))", {"w", "b"},
         VectorBits(t) >= 512 ? "conv2d_NCHWc.x86" : "conv2d_gemm.x86", 3});
    // 14 wide: AVX-512's direct tile is the whole row (14 accumulators);
    // AVX2's best direct tile, 5 pixels padded to 15, loses to the GEMM.
    add({"conv1x1_14_wide_o3",
         "%x: Tensor[(1, 64, 14, 14), float32], %w: Tensor[(128, 64, 1, 1), float32]",
         "nn.conv2d(%x, %w)", {"w"},
         VectorBits(t) >= 512 ? "conv2d_NCHWc.x86" : "conv2d_gemm.x86", 3});
    // Grouped convolutions (AlterOpLayout blocks each group; narrow groups
    // merged with a block-diagonal weight), on the direct micro-kernel:
    // RegNetX's 16 channels per group with bias + ReLU; 8 in / 16 out per
    // group (8-wide input blocks); ResNeXt's 4 per group, strided (merged
    // in pairs into 8-wide blocks); 8 in / 4 out per group with a residual
    // (merged into 16-wide input blocks); RegNetY's 8 per group, 7 wide.
    add({"grouped_16_per_group_bias_relu_o3",
         "%x: Tensor[(1, 64, 9, 9), float32], %w: Tensor[(64, 16, 3, 3), float32], %b: Tensor[(64,), float32]",
         "nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1], groups=4), %b))", {"w", "b"},
         "conv2d_NCHWc.x86", 3});
    add({"grouped_8_in_16_out_1x1_o3",
         "%x: Tensor[(1, 32, 6, 10), float32], %w: Tensor[(64, 8, 1, 1), float32]",
         "nn.conv2d(%x, %w, groups=4)", {"w"}, "conv2d_NCHWc.x86", 3});
    add({"grouped_merged_4_per_group_stride2_o3",
         "%x: Tensor[(1, 32, 11, 11), float32], %w: Tensor[(32, 4, 3, 3), float32]",
         "nn.relu(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=8))", {"w"},
         "conv2d_NCHWc.x86", 3});
    add({"grouped_merged_8_in_4_out_residual_o3",
         "%x: Tensor[(1, 64, 8, 8), float32], %w: Tensor[(32, 8, 3, 3), float32], %r: Tensor[(1, 32, 8, 8), float32]",
         "add(nn.conv2d(%x, %w, padding=[1, 1], groups=8), %r)", {"w"}, "conv2d_NCHWc.x86", 3});
    add({"grouped_8_per_group_7_wide_o3",
         "%x: Tensor[(1, 48, 7, 7), float32], %w: Tensor[(48, 8, 3, 3), float32]",
         "nn.conv2d(%x, %w, padding=[1, 1], groups=6)", {"w"}, "conv2d_NCHWc.x86", 3});
    // A grouped weight that is a parameter, not a constant: the merge is
    // computed at run time.
    add({"grouped_merged_weight_param_o3",
         "%x: Tensor[(1, 16, 6, 6), float32], %w: Tensor[(16, 4, 3, 3), float32]",
         "nn.conv2d(%x, %w, padding=[1, 1], groups=4)", {}, "conv2d_NCHWc.x86", 3});
    // ShuffleNet's 58 channels, padded to 64 (NCHW16c) instead of blocks
    // of 2: a 1x1 with bias + ReLU, then a depthwise 3x3 on its padded
    // output.
    add({"conv1x1_58_channels_padded_o3",
         "%x: Tensor[(1, 58, 6, 16), float32], %w: Tensor[(58, 58, 1, 1), float32], %b: Tensor[(58,), float32]",
         "nn.relu(nn.bias_add(nn.conv2d(%x, %w), %b))", {"w", "b"}, "conv2d_NCHWc.x86", 3});
    add({"depthwise_58_channels_padded_o3",
         "%x: Tensor[(1, 58, 9, 9), float32], %w: Tensor[(58, 58, 1, 1), float32], %d: Tensor[(58, 1, 3, 3), float32]",
         "nn.conv2d(nn.relu(nn.conv2d(%x, %w)), %d, strides=[2, 2], padding=[1, 1], groups=58)",
         {"w", "d"}, "depthwise_conv2d_NCHWc.x86", 3});
    // Explicit zero pads (ONNX exporters' Pad + AveragePool, TensorFlow's
    // Pad + Conv) folded into the ops' padding by SimplifyExpr: the conv's
    // asymmetric padding, and an average pool counting its padded zeros,
    // kept blocked after the conv.
    add({"conv_and_avg_pool_after_explicit_pads_o3",
         "%x: Tensor[(1, 16, 9, 9), float32], %w: Tensor[(32, 16, 3, 3), float32]",
         "nn.avg_pool2d(nn.pad(nn.relu(nn.conv2d(nn.pad(%x, 0f, pad_width=[[0, 0], [0, 0], [1, 2], "
         "[2, 0]]), %w)), 0f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]]), pool_size=[3, 3])",
         {"w"}, "conv2d_NCHWc.x86", 3});
    add({"conv_nchwc_dilated_asym",
         "%x: Tensor[(1, 2, 9, 10, 8), float32], %w: Tensor[(2, 2, 3, 3, 8, 16), float32]",
         "nn.conv2d(%x, %w, padding=[1, 0, 2, 1], dilation=[2, 1], data_layout=\"NCHW8c\", "
         "kernel_layout=\"OIHW8i16o\", out_layout=\"NCHW16c\")",
         {}, "conv2d_NCHWc.x86"});
    add({"conv_nchwc_32_out", "%x: Tensor[(1, 1, 7, 7, 16), float32], %w: Tensor[(1, 1, 3, 3, 16, 32), float32]",
         "nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i32o\", "
         "out_layout=\"NCHW32c\")",
         {}, "conv2d_NCHWc.x86"});
  }
  // AVX2's 8-channel blocks (72 = 9 blocks, 40 = 5): two output blocks per
  // register tile, the odd last pair reading a zero block of a padded
  // constant weight; a strided 3x3 with bias + ReLU, a strided 1x1 with a residual,
  // and the same 1x1 with its weight a parameter (not paired).
  c.push_back({"conv3x3_stride2_paired_8_blocks_o3_avx2",
               "%x: Tensor[(1, 40, 10, 13), float32], %w: Tensor[(72, 40, 3, 3), float32], %b: Tensor[(72, 1, 1), float32]",
               "nn.relu(add(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1]), %b))", {"w", "b"},
               "conv2d_NCHWc.x86", 3, "llvm -mcpu=haswell"});
  c.push_back({"conv1x1_paired_8_blocks_residual_o3_avx2",
               "%x: Tensor[(1, 24, 14, 14), float32], %w: Tensor[(40, 24, 1, 1), float32], %r: Tensor[(1, 40, 7, 7), float32]",
               "add(nn.conv2d(%x, %w, strides=[2, 2]), %r)", {"w"}, "conv2d_NCHWc.x86", 3,
               "llvm -mcpu=haswell"});
  c.push_back({"conv1x1_8_blocks_weight_param_o3_avx2",
               "%x: Tensor[(1, 24, 14, 14), float32], %w: Tensor[(40, 24, 1, 1), float32]",
               "nn.conv2d(%x, %w)", {}, "conv2d_NCHWc.x86", 3, "llvm -mcpu=haswell"});
  // A 1 x W map whose input row (256 channels x 203 columns, 208 KB)
  // outgrows 128 KB: the direct schedule runs the row in chunks, every
  // output channel block per chunk (strided, with a bias and a tail chunk).
  for (const char* t : {"llvm", "llvm -mcpu=haswell"}) {
    c.push_back({absl::StrCat("conv1d_row_chunks_o3", std::string(t) == "llvm" ? "" : "_avx2"),
                 "%x: Tensor[(1, 256, 1, 203), float32], %w: Tensor[(64, 256, 1, 3), float32], %b: Tensor[(64, 1, 1), float32]",
                 "add(nn.conv2d(%x, %w, strides=[1, 2]), %b)", {"w", "b"}, "conv2d_NCHWc.x86", 3, t});
  }
  // A 1 x W map (a Conv1d as a conv2d) through the conv-GEMM (a deep 1x1
  // conv on AVX2's 16 registers): each pixel tile's accumulator holds its own
  // pixels, not the whole row.
  c.push_back({"conv1x1_one_row_gemm_avx2",
               "%x: Tensor[(1, 256, 1, 45), float32], %w: Tensor[(64, 256, 1, 1), float32], %b: Tensor[(64, 1, 1), float32]",
               "nn.relu(add(nn.conv2d(%x, %w), %b))", {"w", "b"}, "conv2d_gemm.x86", 3,
               "llvm -mcpu=haswell"});
  return c;
}

void PrintTo(const StrategyCase& c, std::ostream* os) { *os << c.name << ": " << c.body; }

// `m` with the named parameters of main bound to random constants.
absl::StatusOr<Module> BindConstants(const Module& m, const std::vector<std::string>& names,
                                     uint64_t seed) {
  KILN_ASSIGN_OR_RETURN(Function main, m.Lookup("main"));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  absl::flat_hash_map<const VarNode*, Expr> subst;
  std::vector<Var> kept;
  for (const Var& p : main->params) {
    bool bind = false;
    for (const std::string& n : names) bind |= p->name_hint == n;
    if (!bind) {
      kept.push_back(p);
      continue;
    }
    const auto* tt = p->checked_type().as<TensorTypeNode>();
    if (tt == nullptr) return absl::InvalidArgumentError("not a tensor parameter");
    std::vector<int64_t> dims;
    for (const Dim& d : tt->shape) dims.push_back(d.value());
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> t, HostTensor::Create(tt->dtype, dims));
    float* f = t->mutable_data<float>();
    for (int64_t i = 0; i < t->num_elements(); ++i) f[i] = dist(rng);
    KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(Ref<const HostTensor>(t)));
    subst[p.get()] = c;
  }
  KILN_ASSIGN_OR_RETURN(Expr body, Substitute(main->body, subst));
  KILN_ASSIGN_OR_RETURN(Function f, MakeFunction(kept, body));
  Module out;
  KILN_RETURN_IF_ERROR(out.AddFunction("main", f).status());
  return types::InferType(out);
}

class StrategyTest : public ::testing::TestWithParam<StrategyCase> {};

TEST_P(StrategyTest, CompiledMatchesInterpreterAndStrategyApplied) {
  const StrategyCase& tc = GetParam();
  const std::string text = absl::StrCat("#[version = \"0.1\"]\ndef @main(", tc.params, ") {\n  ",
                                        tc.body, "\n}\n");
  absl::StatusOr<Module> parsed = ParseModule(text, tc.name);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  absl::StatusOr<Module> typed = types::InferType(*parsed);
  ASSERT_TRUE(typed.ok()) << typed.status();
  absl::StatusOr<Module> bound = BindConstants(*typed, tc.constants, 99);
  ASSERT_TRUE(bound.ok()) << bound.status();
  absl::StatusOr<std::vector<interp::Value>> inputs = RandomInputs(*bound, 5, -1, 1, 0, 1);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::StatusOr<interp::Value> expected = interp::RunFunction(*bound, "main", *inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();

  JitOptions opts;
  opts.opt_level = tc.opt_level;
  opts.target = tc.target;
  absl::StatusOr<std::unique_ptr<JitGraph>> g = JitGraph::Compile(*bound, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<std::string> applied;
  for (const lowering::LoweredFunc& k : (*g)->kernels()) {
    applied.insert(applied.end(), k.strategies.begin(), k.strategies.end());
  }
  EXPECT_NE(std::find(applied.begin(), applied.end(), tc.strategy), applied.end())
      << "applied: [" << absl::StrJoin(applied, ", ") << "]";

  absl::StatusOr<interp::Value> serial = (*g)->Run(*inputs);
  ASSERT_TRUE(serial.ok()) << serial.status();
  EXPECT_TRUE(ValuesClose(*expected, *serial, 1e-4, 1e-4)) << "serial";

  KilnThreadPool* pool = nullptr;
  KilnKernelContext* ctx = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), 0);
  ASSERT_EQ(kiln_kernel_context_create(pool, &ctx), 0);
  absl::StatusOr<interp::Value> parallel = (*g)->Run(*inputs, ctx);
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  EXPECT_TRUE(ValuesClose(*expected, *parallel, 1e-4, 1e-4)) << "2 threads";
}

INSTANTIATE_TEST_SUITE_P(X86, StrategyTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<StrategyCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace kiln::testing
