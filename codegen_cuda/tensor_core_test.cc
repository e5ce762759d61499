// File: codegen_cuda/tensor_core_test.cc
//
// LowerTensorCoreGemm on hand-written loop IR of the GPU schedule's GEMM
// shape (16x16 threads, 4x4 float32 outputs per thread, float16 shared
// tiles): the step's triple loop becomes kiln_mma_block with the strides of
// the tiles' indices, wrapped by kiln_mma_zero / kiln_mma_finish around the
// step loop, and the barriers still go around the tile copies; what does not
// fit is left alone (another launch, float32 tiles, the loop under an `if`,
// an accumulator index other than ii*4 + jj). tests/cuda/gemm_emulate_test.cc
// runs the real schedules' kernels on the host emulator.
#include "codegen_cuda/tensor_core.h"

#include <string>

#include "absl/strings/str_replace.h"
#include "codegen_cuda/codegen_cuda.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir_parser.h"

namespace kiln::codegen_cuda {
namespace {

using ::testing::HasSubstr;

// One 64x64 tile of C = A * B^T, K = 32 (two steps of 16).
const char kTile[] = R"(
primfunc tile(A: float16[64, 32], B: float16[64, 32], C: float32[64, 64]) {
  thread_binding (ty, 0, 16) "threadIdx.y" {
    thread_binding (tx, 0, 16) "threadIdx.x" {
      allocate Cl: float32[16] local
      allocate AS: float16[1088] shared
      allocate BS: float16[1088] shared
      for (a, 0, 4) { for (b, 0, 4) { Cl[((a * 4) + b)] = 0f } }
      for (ko, 0, 2) {
        for (r, 0, 4) {
          AS[((((r * 16) + ty) * 17) + tx)] = A[(((((r * 16) + ty) * 32) + (ko * 16)) + tx)]
          BS[((((r * 16) + ty) * 17) + tx)] = B[(((((r * 16) + ty) * 32) + (ko * 16)) + tx)]
        }
        GUARD_OPEN
        for (ki, 0, 16) { for (ii, 0, 4) { for (jj, 0, 4) {
          Cl[CL_INDEX] = (Cl[CL_INDEX] + (float32(AS[((((ty * 4) + ii) * 17) + ki)]) * float32(BS[((((tx * 4) + jj) * 17) + ki)])))
        } } }
        GUARD_CLOSE
      }
      for (i, 0, 4) { for (j, 0, 4) {
        C[((((ty * 4) + i) * 64) + ((tx * 4) + j))] = Cl[((i * 4) + j)]
      } }
    }
  }
}
)";

std::string Text(absl::string_view guard_open = "", absl::string_view guard_close = "",
                 absl::string_view cl = "((ii * 4) + jj)") {
  return absl::StrReplaceAll(kTile, {{"GUARD_OPEN", guard_open},
                                     {"GUARD_CLOSE", guard_close},
                                     {"CL_INDEX", cl}});
}

std::string Source(const std::string& text) {
  absl::StatusOr<tir::PrimFunc> f = tir::ParsePrimFunc(text, "test.tir");
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return "";
  absl::StatusOr<CudaKernel> k = GenerateKernel(*f);
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? k->source : std::string();
}

TEST(TensorCoreTest, StepProductBecomesMma) {
  const std::string src = Source(Text());
  EXPECT_THAT(src, HasSubstr("kiln_mma_zero(mma_acc);")) << src;
  EXPECT_THAT(src, HasSubstr("kiln_mma_block<false>(mma_acc, AS, 0LL, 17LL, 1LL, BS, 0LL, 17LL, 1LL);"))
      << src;
  EXPECT_THAT(src, HasSubstr("kiln_mma_finish(mma_acc, Cl);")) << src;
  EXPECT_EQ(src.find("for (long long ki"), std::string::npos) << src;
  // The finish comes after the step loop; the barriers around the copies stay.
  EXPECT_LT(src.find("for (long long ko"), src.find("kiln_mma_finish")) << src;
  EXPECT_LT(src.find("__syncthreads();"), src.find("kiln_mma_block")) << src;
}

TEST(TensorCoreTest, WhatDoesNotFitIsLeftAlone) {
  const std::string cases[] = {
      absl::StrReplaceAll(Text(), {{"(ty, 0, 16)", "(ty, 0, 8)"}}),
      absl::StrReplaceAll(Text(), {{"AS: float16", "AS: float32"}, {"BS: float16", "BS: float32"}}),
      Text("if ((ko < 1)) {", "}"),
      Text("", "", "((jj * 4) + ii)"),
  };
  for (const std::string& text : cases) {
    const std::string src = Source(text);
    EXPECT_EQ(src.find("kiln_mma_block<"), std::string::npos) << src;
    EXPECT_NE(src.find("for (long long ki"), std::string::npos) << src;
  }
}

// The implicit-GEMM conv: a 3x3 NCHW conv's reduction into the thread's
// 8x8 block under the schedule's pragma (lowering/strategy/target.h), the
// data read under its padding test.
const char kConv[] = R"(
primfunc conv(X: XT[1, 16, 10, 10], Wt: WT[16, 16, 3, 3], Y: float32[1, 16, 10, 10]) {
  thread_binding (ty, 0, 16) "threadIdx.y" {
    thread_binding (tx, 0, 16) "threadIdx.x" {
      allocate Cl: float32[CL_SIZE] local
      for (a, 0, 64) { Cl[a] = 0f }
      attr ty "pragma_kiln_conv_tc" = kiln.conv_tc_geom:int32(0, 1, 16, 10, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 10, 10, 0, 0, 0, OW0) {
        for (rc, 0, 16) { for (ry, 0, 3) { for (rx, 0, 3) { for (ii, 0, 8) { for (jj, 0, 8) {
          Cl[((ii * 8) + jj)] = (Cl[((ii * 8) + jj)] + (float32(X_READ) * float32(Wt[((((((ty * 8) + ii) * 16) + rc) * 9) + ((ry * 3) + rx))])))
        } } } } }
      }
      for (i, 0, 8) { for (j, 0, 8) {
        Y[((((ty * 8) + i) * 100) + ((tx * 8) + j))] = Cl[((i * 8) + j)]
      } }
    }
  }
}
)";

std::string ConvText(absl::string_view x_read = "if_then_else((((tx + ry) >= 1) && ((jj + rx) >= 1)), "
                                                "X[((((rc * 10) + ((tx + ry) - 1)) * 10) + ((jj + rx) - 1))], 0_float16)",
                     absl::string_view cl_size = "64", absl::string_view xt = "float16",
                     absl::string_view wt = "float16", absl::string_view ow0 = "0") {
  return absl::StrReplaceAll(kConv, {{"X_READ", x_read},
                                     {"CL_SIZE", cl_size},
                                     {"XT", xt},
                                     {"WT", wt},
                                     {"OW0", ow0}});
}

TEST(TensorCoreTest, ConvReductionBecomesTheImplicitGemmTile) {
  const std::string src = Source(ConvText());
  EXPECT_THAT(src, HasSubstr("kiln_conv_nchw_tc<unsigned short, false, 16, 10, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 10, "
                             "10, 8>(Cl, X, Wt, 0LL, 0LL, 0LL, 0LL);"))
      << src;
  EXPECT_EQ(src.find("for (long long rc"), std::string::npos) << src;
  // bfloat16, and an origin that is an expression of the block.
  const std::string bf = Source(ConvText(
      "X[((((rc * 10) + (tx + ry)) * 10) + (jj + rx))]", "64", "bfloat16", "bfloat16", "(tx * 8)"));
  EXPECT_THAT(bf, HasSubstr("kiln_conv_nchw_tc<unsigned short, true, ")) << bf;
  EXPECT_THAT(bf, HasSubstr(">(Cl, X, Wt, 0LL, 0LL, 0LL, (tx * 8LL));")) << bf;
}

TEST(TensorCoreTest, ConvThatDoesNotFitIsLeftAlone) {
  const std::string cases[] = {
      // A block of other than 8 x min(OW, 8) outputs.
      ConvText("X[((((rc * 10) + (tx + ry)) * 10) + (jj + rx))]", "48"),
      // The data read through an operation (a fused producer), not a load.
      ConvText("max(X[((((rc * 10) + (tx + ry)) * 10) + (jj + rx))], 0_float16)"),
      // A padding test whose other side is not zero.
      ConvText("if_then_else(((tx + ry) >= 1), X[((((rc * 10) + (tx + ry)) * 10) + (jj + rx))], 1_float16)"),
      // Data and weights of different types.
      ConvText("X[((((rc * 10) + (tx + ry)) * 10) + (jj + rx))]", "64", "float16", "bfloat16"),
      // float32 data.
      ConvText("X[((((rc * 10) + (tx + ry)) * 10) + (jj + rx))]", "64", "float32", "float32"),
  };
  for (const std::string& text : cases) {
    const std::string src = Source(text);
    EXPECT_EQ(src.find("kiln_conv_"), std::string::npos) << src;
    EXPECT_NE(src.find("for (long long rc"), std::string::npos) << src;
  }
}

}  // namespace
}  // namespace kiln::codegen_cuda
