// File: tests/cuda/reduce_emulate_test.cc
//
// The one-warp-per-row schedule of lowering/te/schedule_cuda.cc for row
// reductions (sum, max, min, mean over the last axis) and the functions
// computed from them (softmax, log_softmax, layer_norm): each kernel must
// launch one block of 32 threads per row, combine the lanes' partials with
// warp shuffles (codegen_cuda/warp_reduce.h) and compute what the
// interpreter computes when its CUDA C runs on the host emulator
// (tests/cuda/emulate.h: the lanes of a warp meet at every shuffle). Rows
// that the warp does not divide, several row dims, float16 and a row shorter
// than a warp (the one-thread-per-output schedule, no shuffle) are covered.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen_cuda/compile.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "tests/compiled/compare.h"
#include "tests/cuda/cuda_case.h"
#include "tests/cuda/emulate.h"

namespace kiln::testing {
namespace {

// `rows` blocks of 32 threads with shuffles, or (rows == 0) no shuffle.
void Check(const std::string& params, const std::string& body, int64_t rows, double tol = 1e-4,
           int64_t threads = 32) {
  const std::string text =
      absl::StrCat("#[version = \"0.1\"]\ndef @main(", params, ") {\n  ", body, "\n}\n");
  absl::StatusOr<CudaCase> c = CompileCudaCase(text, "rows", {.opt_level = 0, .seed = 5, .lo = -2, .hi = 2});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->cuda.kernels.size(), 1u);
  const codegen_cuda::CudaKernel& k = c->cuda.kernels[0];
  if (std::getenv("KILN_ROWS_PRINT") != nullptr) std::printf("%s\n", k.source.c_str());
  if (!c->cuda.ptxas_log.empty()) std::printf("%s\n", c->cuda.ptxas_log.c_str());
  if (rows > 0) {
    EXPECT_EQ(k.block_threads, threads) << k.source;
    EXPECT_EQ(k.grid_blocks, rows) << k.source;
    EXPECT_NE(k.source.find("__shfl_xor_sync(0xffffffffu, "), std::string::npos) << k.source;
  } else {
    EXPECT_EQ(k.source.find("__shfl"), std::string::npos) << k.source;
  }
  absl::StatusOr<std::unique_ptr<CudaEmulator>> emu = CudaEmulator::Build(c->fused, std::move(c->cuda));
  if (emu.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << emu.status();
  ASSERT_TRUE(emu.ok()) << emu.status();
  absl::StatusOr<interp::Value> got = (*emu)->Run(c->inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ValuesClose(c->expected, *got, tol, tol)) << text;
}

const char kX[] = "%x: Tensor[(6, 100), float32]";

TEST(ReduceEmulateTest, SumOfRows) { Check(kX, "sum(%x, axis=[1])", 6); }
TEST(ReduceEmulateTest, MaxOfRows) { Check(kX, "max(%x, axis=[1])", 6); }
TEST(ReduceEmulateTest, MinOfRowsKeepDims) { Check(kX, "min(%x, axis=[1], keepdims=true)", 6); }
TEST(ReduceEmulateTest, MeanOfRows) { Check(kX, "mean(%x, axis=[1])", 6); }
TEST(ReduceEmulateTest, SeveralRowDims) {
  Check("%x: Tensor[(2, 3, 64), float32]", "sum(%x, axis=[2])", 6);
}
TEST(ReduceEmulateTest, Softmax) { Check(kX, "nn.softmax(%x)", 6); }
TEST(ReduceEmulateTest, LogSoftmax) { Check(kX, "nn.log_softmax(%x)", 6); }
TEST(ReduceEmulateTest, SoftmaxFloat16) {
  Check("%x: Tensor[(4, 77), float16]", "nn.softmax(%x)", 4, 2e-2);
}
TEST(ReduceEmulateTest, LayerNorm) {
  Check("%x: Tensor[(5, 96), float32], %g: Tensor[(96), float32], %b: Tensor[(96), float32]",
        "nn.layer_norm(%x, %g, %b)", 5);
}
// The shapes of the BERT-style example's layer_norm and softmax (smaller):
// 64 rows of 96 in a batch of 1 once went to the GEMM tiles (a [1, 64, 96]
// output fed by row sums over [1, 64]).
TEST(ReduceEmulateTest, LayerNormOfABatchOfRows) {
  Check("%x: Tensor[(1, 64, 96), float32], %g: Tensor[(96), float32], %b: Tensor[(96), float32]",
        "nn.layer_norm(%x, %g, %b, epsilon=1e-12)", 64);
}
TEST(ReduceEmulateTest, SoftmaxOnTheLastOfThreeAxes) {
  Check("%x: Tensor[(2, 64, 64), float32]", "nn.softmax(%x, axis=2)", 128);
}
// Rows of >= 1024: a block of 256 threads per row (8 warps: shuffles within
// each, lane 0 of each writes its warp's total to shared memory, a barrier,
// every thread combines the 8 totals).
TEST(ReduceEmulateTest, BlockSumOfLongRows) {
  Check("%x: Tensor[(3, 2000), float32]", "sum(%x, axis=[1])", 3, 1e-3, 256);
}
TEST(ReduceEmulateTest, BlockMaxOfLongRows) {
  Check("%x: Tensor[(2, 1024), float32]", "max(%x, axis=[1])", 2, 1e-4, 256);
}
TEST(ReduceEmulateTest, BlockSoftmax) {
  Check("%x: Tensor[(2, 1500), float32]", "nn.softmax(%x)", 2, 1e-4, 256);
}
TEST(ReduceEmulateTest, BlockLayerNorm) {
  Check("%x: Tensor[(2, 1024), float32], %g: Tensor[(1024), float32], %b: Tensor[(1024), float32]",
        "nn.layer_norm(%x, %g, %b)", 2, 1e-3, 256);
}
// Rows over several trailing dims (their reduce axes fused into one row):
// NCHW's global pools (ResNet's head) and reductions over H and W.
TEST(ReduceEmulateTest, GlobalAvgPoolOfNchw) {
  Check("%x: Tensor[(2, 8, 7, 7), float32]", "nn.global_avg_pool2d(%x)", 16);
}
TEST(ReduceEmulateTest, GlobalMaxPoolOfNchw) {
  Check("%x: Tensor[(2, 3, 6, 9), float32]", "nn.global_max_pool2d(%x)", 6);
}
TEST(ReduceEmulateTest, MeanOverTwoTrailingAxesKeepDims) {
  Check("%x: Tensor[(3, 4, 5, 11), float32]", "mean(%x, axis=[2, 3], keepdims=true)", 12);
}
TEST(ReduceEmulateTest, SumOverThreeTrailingAxes) {
  Check("%x: Tensor[(4, 2, 3, 16), float32]", "sum(%x, axis=[1, 2, 3])", 4);
}
// A large spatial extent (an SE block's squeeze over 56 x 56): a block of
// 256 threads per row.
TEST(ReduceEmulateTest, BlockGlobalAvgPoolOfLargeImage) {
  Check("%x: Tensor[(1, 3, 56, 56), float32]", "nn.global_avg_pool2d(%x)", 3, 1e-3, 256);
}
// Centered over the last two axes: a reduction and its consumers in one
// fused function (as a layer_norm over two axes would be; FuseOps itself
// keeps a reduction's consumers apart, so the function is written fused):
// the output's trailing dims (fused) are spread over the lanes.
TEST(ReduceEmulateTest, CenteredOverTwoTrailingAxes) {
  Check("%x: Tensor[(3, 5, 12), float32]",
        "%0 = fn (%p: Tensor[(3, 5, 12), float32], Primitive=1) {\n"
        "    %1 = mean(%p, axis=[1, 2]);\n"
        "    subtract(%p, expand_dims(%1, axis=1, num_newaxis=2))\n"
        "  };\n  %0(%x)",
        3);
}
// NHWC's H and W are not trailing: one thread per output (consecutive
// threads on consecutive channels), no shuffle.
TEST(ReduceEmulateTest, GlobalAvgPoolOfNhwcKeepsOneThreadPerOutput) {
  Check("%x: Tensor[(2, 7, 7, 64), float32]", "nn.global_avg_pool2d(%x, layout=\"NHWC\")", 0);
}
TEST(ReduceEmulateTest, RowShorterThanAWarp) { Check("%x: Tensor[(6, 20), float32]", "sum(%x, axis=[1])", 0); }

}  // namespace
}  // namespace kiln::testing
