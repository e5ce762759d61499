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

}  // namespace
}  // namespace kiln::codegen_cuda
