// File: tests/cuda/conv_emulate_test.cc
//
// The conv2d GPU schedule of lowering/te/schedule_cuda.cc: output tiles per
// block with the input window and the weights staged through "shared" tiles
// at each step of the input channels (barriers from
// codegen_cuda/thread_sync.h), 4 outputs per thread in "local" registers
// (groups == 1, NCHW and NHWC) or one per thread over 16 x 16 pixels of one
// channel (groups > 1, depthwise). Each case is compiled for sm_90 (PTX, and
// a cubin when ptxas is found) and the generated CUDA C is run on the host
// emulator (tests/cuda/emulate.h) against the interpreter: strides, padding
// (the pad stage computed in the copy), dilation, channel counts and pixels
// that do not divide the tile, depthwise and grouped convolutions, the fused
// bias/relu/residual-add epilogue, float16. Also checked: the launch's block
// shape, the shared tiles and barriers in the source, and that the same
// kernel with its barriers removed computes wrong values.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "codegen_cuda/compile.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "tests/compiled/compare.h"
#include "tests/cuda/cuda_case.h"
#include "tests/cuda/emulate.h"

namespace kiln::testing {
namespace {

struct Expect {
  int64_t block_x = 16, block_y = 4, block_z = 4;  // groups == 1; 16 x 16 x 1 otherwise
  double tol = 1e-4;
  // The implicit GEMM on tensor cores: the call expected in the kernel
  // ("kiln_conv_nchw_tc<unsigned short, false, "), its shared stages and
  // barriers in the prelude's tile rather than in the kernel's own loops.
  const char* tc = nullptr;
  const char* target = "cuda -arch=sm_90";
};

constexpr Expect kTiled = {16, 4, 4};
constexpr Expect kPerChannel = {16, 16, 1};
constexpr Expect TensorCore(const char* call, double tol = 2e-2,
                            const char* target = "cuda -arch=sm_90") {
  return {16, 16, 1, tol, call, target};
}

void Check(const std::string& params, const std::string& body, Expect want) {
  const std::string text =
      absl::StrCat("#[version = \"0.1\"]\ndef @main(", params, ") {\n  ", body, "\n}\n");
  // Opt level 0 (as op_test): the graph passes keep the layouts written.
  absl::StatusOr<CudaCase> c =
      CompileCudaCase(text, "conv", {.opt_level = 0, .seed = 5, .target = want.target});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->cuda.kernels.size(), 1u);
  const codegen_cuda::CudaKernel& k = c->cuda.kernels[0];
  int64_t b[3] = {0, 0, 0};
  for (int d = 0; d < 3; ++d) ASSERT_TRUE(tir::IsConstInt(k.block[d], &b[d]));
  EXPECT_EQ(b[0], want.block_x) << k.source;
  EXPECT_EQ(b[1], want.block_y);
  EXPECT_EQ(b[2], want.block_z);
  if (want.tc != nullptr) {
    // One call replaces the whole reduction; no loop of the kernel itself
    // reads the data (the epilogue reads the thread's registers).
    EXPECT_NE(k.source.find(want.tc), std::string::npos) << k.source;
    EXPECT_EQ(k.source.find("__shared__"), std::string::npos) << k.source;
    EXPECT_EQ(k.shared_bytes, 48 * 1024) << k.source;
    EXPECT_NE(c->cuda.source.find("__syncthreads();"), std::string::npos);
  } else {
    EXPECT_NE(k.source.find("__shared__"), std::string::npos) << k.source;
    EXPECT_NE(k.source.find("__syncthreads();"), std::string::npos) << k.source;
    EXPECT_LE(k.shared_bytes, 48 * 1024) << k.source;
  }
  if (std::getenv("KILN_CONV_PRINT") != nullptr) std::printf("%s\n", k.source.c_str());
  if (!c->cuda.ptxas_log.empty()) std::printf("%s\n", c->cuda.ptxas_log.c_str());
  codegen_cuda::CudaModule racy = c->cuda;
  racy.source = absl::StrReplaceAll(racy.source, {{"__syncthreads();", ""}});
  absl::StatusOr<std::unique_ptr<CudaEmulator>> emu = CudaEmulator::Build(c->fused, std::move(c->cuda));
  if (emu.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << emu.status();
  ASSERT_TRUE(emu.ok()) << emu.status();
  absl::StatusOr<interp::Value> got = (*emu)->Run(c->inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ValuesClose(c->expected, *got, want.tol, want.tol));
  // Without its barriers the same kernel reads tiles before they are written.
  absl::StatusOr<std::unique_ptr<CudaEmulator>> racy_emu = CudaEmulator::Build(c->fused, racy);
  ASSERT_TRUE(racy_emu.ok()) << racy_emu.status();
  absl::StatusOr<interp::Value> racy_got = (*racy_emu)->Run(c->inputs);
  ASSERT_TRUE(racy_got.ok()) << racy_got.status();
  EXPECT_FALSE(ValuesClose(c->expected, *racy_got, want.tol, want.tol));
}

std::string Nchw(int n, int c, int h, int w, const char* dt = "float32") {
  return absl::StrCat("Tensor[(", n, ", ", c, ", ", h, ", ", w, "), ", dt, "]");
}

// 24 output channels (16 + a ragged 8), 14 x 14 pixels (ragged rows and
// columns of the 4 x 16 pixel tile), padding 1, the bias and relu fused.
TEST(ConvEmulateTest, Nchw3x3BiasRelu) {
  Check(absl::StrCat("%x: ", Nchw(1, 16, 14, 14), ", %w: ", Nchw(24, 16, 3, 3),
                     ", %b: Tensor[(24), float32]"),
        "nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b))", kTiled);
}
// Stride 2, 20 input channels (a step of 16 and a tail of 4), batch 2.
TEST(ConvEmulateTest, NchwStride2) {
  Check(absl::StrCat("%x: ", Nchw(2, 20, 15, 17), ", %w: ", Nchw(18, 20, 3, 3)),
        "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1])", kTiled);
}
// Dilation, asymmetric padding, a 3 x 2 kernel, strides 2 x 1.
TEST(ConvEmulateTest, NchwDilatedAsymmetricPadding) {
  Check(absl::StrCat("%x: ", Nchw(1, 5, 13, 12), ", %w: ", Nchw(7, 5, 3, 2)),
        "nn.conv2d(%x, %w, strides=[2, 1], padding=[1, 0, 2, 1], dilation=[2, 1])", kTiled);
}
// No padding (no pad stage: the data itself is copied), 1x1, a residual add.
TEST(ConvEmulateTest, Nchw1x1ResidualAdd) {
  Check(absl::StrCat("%x: ", Nchw(2, 32, 7, 7), ", %w: ", Nchw(40, 32, 1, 1), ", %r: ",
                     Nchw(2, 40, 7, 7)),
        "nn.relu(add(nn.conv2d(%x, %w), %r))", kTiled);
}
// A 7x7 stride-2 stem: the step shrinks so that the tiles fit.
TEST(ConvEmulateTest, Nchw7x7Stride2) {
  Check(absl::StrCat("%x: ", Nchw(1, 3, 23, 23), ", %w: ", Nchw(16, 3, 7, 7)),
        "nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3])", kTiled);
}
// float32 data with float16 weights is not a tensor-core conv: the tiled
// scalar schedule, float32 accumulation.
TEST(ConvEmulateTest, NchwFloat16StaysScalarBelowTheTile) {
  Check(absl::StrCat("%x: ", Nchw(1, 16, 10, 10, "float16"), ", %w: ",
                     Nchw(8, 16, 3, 3, "float16")),
        "nn.conv2d(%x, %w, padding=[1, 1])", {16, 4, 4, 2e-2});
}

// ---- float16/bfloat16 convs as implicit GEMMs on tensor cores ----
// (lowering/te/schedule_cuda.cc ConvTensorCore; codegen_cuda/tensor_core.h
// kiln_conv_*_tc). The memory past every tensor is not read: the emulator
// runs the kernels on buffers of exactly the tensors' sizes under the
// sanitizers (docs/sanitizers.md).
constexpr char kNchwF16[] = "kiln_conv_nchw_tc<unsigned short, false, ";
constexpr char kNchwBF16[] = "kiln_conv_nchw_tc<unsigned short, true, ";

TEST(ConvEmulateTest, NchwFloat16TensorCore) {
  Check(absl::StrCat("%x: ", Nchw(1, 16, 10, 10, "float16"), ", %w: ",
                     Nchw(16, 16, 3, 3, "float16")),
        "nn.conv2d(%x, %w, padding=[1, 1])", TensorCore(kNchwF16));
}
// 24 output channels, 14 x 14 pixels (a ragged 16 x 8 patch), K = 144 (a
// step of 32 cut short), bias and relu fused.
TEST(ConvEmulateTest, Nchw3x3BiasReluFloat16TensorCore) {
  Check(absl::StrCat("%x: ", Nchw(1, 16, 14, 14, "float16"), ", %w: ",
                     Nchw(24, 16, 3, 3, "float16"), ", %b: Tensor[(24), float16]"),
        "nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b))", TensorCore(kNchwF16));
}
// 130 output channels (two tiles of 128), batch 2, strides 2 x 1, dilation
// 2 x 1, asymmetric padding, a 3 x 2 kernel, bfloat16.
TEST(ConvEmulateTest, NchwStridedDilatedBFloat16TensorCore) {
  Check(absl::StrCat("%x: ", Nchw(2, 20, 15, 17, "bfloat16"), ", %w: ",
                     Nchw(130, 20, 3, 2, "bfloat16")),
        "nn.conv2d(%x, %w, strides=[2, 1], padding=[1, 0, 2, 1], dilation=[2, 1])",
        TensorCore(kNchwBF16, 5e-2));
}
// 1x1 without padding (no pad stage: the data itself is gathered), batch 2,
// the residual add and relu fused.
TEST(ConvEmulateTest, Nchw1x1ResidualFloat16TensorCore) {
  Check(absl::StrCat("%x: ", Nchw(2, 32, 7, 7, "float16"), ", %w: ", Nchw(40, 32, 1, 1, "float16"),
                     ", %r: ", Nchw(2, 40, 7, 7, "float16")),
        "nn.relu(add(nn.conv2d(%x, %w), %r))", TensorCore(kNchwF16));
}
// A 7x7 stride-2 stem from 3 channels (K = 147: weight rows not a multiple
// of 8, so the weights are copied word by word); 19 x 19 outputs: patches
// of 16 x 8 cut at both edges.
TEST(ConvEmulateTest, Nchw7x7Stride2StemFloat16TensorCore) {
  Check(absl::StrCat("%x: ", Nchw(1, 3, 37, 37, "float16"), ", %w: ", Nchw(64, 3, 7, 7, "float16")),
        "nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3])", TensorCore(kNchwF16));
}
// NHWC with HWIO weights (n-major), 16 channels: the data gathered 8
// channels at a time (16-byte copies, zero-filled for the padding); bias.
TEST(ConvEmulateTest, NhwcHwioBiasFloat16TensorCore) {
  Check("%x: Tensor[(1, 10, 11, 16), float16], %w: Tensor[(3, 3, 16, 20), float16], "
        "%b: Tensor[(20), float16]",
        "nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", "
        "kernel_layout=\"HWIO\"), %b, axis=3)",
        TensorCore("kiln_conv_nhwc_tc<unsigned short, false, false, 16, "));
}
// NHWC with OHWI weights (k-major), 3 channels (gathered element by
// element), stride 2, batch 2, bfloat16.
TEST(ConvEmulateTest, NhwcOhwiStride2BFloat16TensorCore) {
  Check("%x: Tensor[(2, 9, 9, 3), bfloat16], %w: Tensor[(24, 3, 3, 3), bfloat16]",
        "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], data_layout=\"NHWC\", "
        "kernel_layout=\"OHWI\")",
        TensorCore("kiln_conv_nhwc_tc<unsigned short, true, true, 3, ", 5e-2));
}
// NHWC 1x1 with 136 output channels (two tiles of 128; HWIO rows of 136).
TEST(ConvEmulateTest, Nhwc1x1WideFloat16TensorCore) {
  Check("%x: Tensor[(1, 6, 20, 24), float16], %w: Tensor[(1, 1, 24, 136), float16]",
        "nn.conv2d(%x, %w, data_layout=\"NHWC\", kernel_layout=\"HWIO\")",
        TensorCore("kiln_conv_nhwc_tc<unsigned short, false, false, 24, "));
}
TEST(ConvEmulateTest, NhwcBias) {
  Check("%x: Tensor[(1, 10, 11, 12), float32], %w: Tensor[(3, 3, 12, 20), float32], "
        "%b: Tensor[(20), float32]",
        "nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", "
        "kernel_layout=\"HWIO\"), %b, axis=3)",
        kTiled);
}
TEST(ConvEmulateTest, DepthwiseStride2) {
  Check(absl::StrCat("%x: ", Nchw(1, 12, 18, 19), ", %w: ", Nchw(12, 1, 3, 3),
                     ", %b: Tensor[(12), float32]"),
        "nn.relu(nn.bias_add(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=12), %b))",
        kPerChannel);
}
TEST(ConvEmulateTest, Depthwise) {
  Check(absl::StrCat("%x: ", Nchw(2, 6, 20, 9), ", %w: ", Nchw(6, 1, 3, 3)),
        "nn.conv2d(%x, %w, padding=[1, 1], groups=6)", kPerChannel);
}
// Two groups of 4 input channels, 3 output channels each.
TEST(ConvEmulateTest, Groups) {
  Check(absl::StrCat("%x: ", Nchw(1, 8, 9, 9), ", %w: ", Nchw(6, 4, 3, 3)),
        "nn.conv2d(%x, %w, padding=[1, 1], groups=2)", kPerChannel);
}

// sm_90a: NCHW convs on Hopper's warpgroup MMA (kiln_conv_nchw_wg: the
// image gathered into the canonical k-major layout the wgmma descriptors
// read); NHWC ones keep mma.sync.
constexpr char kSm90a[] = "cuda -arch=sm_90a";
TEST(ConvEmulateTest, Nchw3x3BiasReluFloat16WarpgroupMma) {
  Check(absl::StrCat("%x: ", Nchw(1, 16, 14, 14, "float16"), ", %w: ",
                     Nchw(24, 16, 3, 3, "float16"), ", %b: Tensor[(24), float16]"),
        "nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b))",
        TensorCore("kiln_conv_nchw_wg<false, ", 2e-2, kSm90a));
}
TEST(ConvEmulateTest, NchwStridedDilatedBFloat16WarpgroupMma) {
  Check(absl::StrCat("%x: ", Nchw(2, 20, 15, 17, "bfloat16"), ", %w: ",
                     Nchw(130, 20, 3, 2, "bfloat16")),
        "nn.conv2d(%x, %w, strides=[2, 1], padding=[1, 0, 2, 1], dilation=[2, 1])",
        TensorCore("kiln_conv_nchw_wg<true, ", 5e-2, kSm90a));
}
// A block of 8 x 7 (the output has 7 columns); the weights' rows of 147
// halves (the stem) copied word by word.
TEST(ConvEmulateTest, Nchw1x1ResidualFloat16WarpgroupMma) {
  Check(absl::StrCat("%x: ", Nchw(2, 32, 7, 7, "float16"), ", %w: ", Nchw(40, 32, 1, 1, "float16"),
                     ", %r: ", Nchw(2, 40, 7, 7, "float16")),
        "nn.relu(add(nn.conv2d(%x, %w), %r))", TensorCore("kiln_conv_nchw_wg<false, ", 2e-2, kSm90a));
}
TEST(ConvEmulateTest, Nchw7x7Stride2StemFloat16WarpgroupMma) {
  Check(absl::StrCat("%x: ", Nchw(1, 3, 37, 37, "float16"), ", %w: ", Nchw(64, 3, 7, 7, "float16")),
        "nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3])",
        TensorCore("kiln_conv_nchw_wg<false, ", 2e-2, kSm90a));
}
TEST(ConvEmulateTest, NhwcKeepsMmaSyncOnSm90a) {
  Check("%x: Tensor[(1, 10, 11, 16), float16], %w: Tensor[(3, 3, 16, 20), float16]",
        "nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", kernel_layout=\"HWIO\")",
        TensorCore("kiln_conv_nhwc_tc<unsigned short, false, false, 16, ", 2e-2, kSm90a));
}

// float32 convs with TF32 opted in (cuda ... -tf32): the same tiles on
// m16n8k8 .tf32, 16 of k per step. Without -tf32 the same conv keeps the
// scalar float32 schedule (Nchw3x3BiasRelu above).
constexpr char kTf32[] = "cuda -arch=sm_90 -tf32";
TEST(ConvEmulateTest, Nchw3x3BiasReluTf32) {
  Check(absl::StrCat("%x: ", Nchw(1, 16, 14, 14), ", %w: ", Nchw(24, 16, 3, 3),
                     ", %b: Tensor[(24), float32]"),
        "nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b))",
        TensorCore("kiln_conv_nchw_tc<float, false, ", 1e-2, kTf32));
}
// The 7x7 stride-2 stem (K = 147: not a multiple of 4 floats, weights word
// by word); 19 x 19 outputs.
TEST(ConvEmulateTest, Nchw7x7Stride2StemTf32) {
  Check(absl::StrCat("%x: ", Nchw(1, 3, 37, 37), ", %w: ", Nchw(64, 3, 7, 7)),
        "nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3])",
        TensorCore("kiln_conv_nchw_tc<float, false, ", 1e-2, kTf32));
}
// NHWC: 12 channels (chunks of 4 floats), HWIO weights, a bias; and 5
// channels (element by element) with OHWI weights, stride 2.
TEST(ConvEmulateTest, NhwcHwioBiasTf32) {
  Check("%x: Tensor[(1, 10, 11, 12), float32], %w: Tensor[(3, 3, 12, 20), float32], "
        "%b: Tensor[(20), float32]",
        "nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1], data_layout=\"NHWC\", "
        "kernel_layout=\"HWIO\"), %b, axis=3)",
        TensorCore("kiln_conv_nhwc_tc<float, false, false, 12, ", 1e-2, kTf32));
}
TEST(ConvEmulateTest, NhwcOhwiStride2Tf32) {
  Check("%x: Tensor[(2, 9, 9, 5), float32], %w: Tensor[(24, 3, 3, 5), float32]",
        "nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], data_layout=\"NHWC\", "
        "kernel_layout=\"OHWI\")",
        TensorCore("kiln_conv_nhwc_tc<float, false, true, 5, ", 1e-2, kTf32));
}

}  // namespace
}  // namespace kiln::testing
