// File: codegen_cuda/warp_reduce_test.cc
//
// LowerWarpReduce on hand-written loop IR: the lanes' partials of a one-warp
// block combined by a loop every lane runs become a shuffle butterfly (the
// CUDA C has five __shfl_xor_sync and no loop over the lanes); what does not
// fit is left as it is: an accumulator in global memory (lanes would race),
// a loop inside a threadIdx.x nest, a loop over fewer lanes than the launch,
// a root statement run by one thread; with several warps, each warp's total
// goes through the shared partials to every thread. tests/cuda/reduce_emulate_test.cc runs the schedules
// that produce the pattern on the host emulator.
#include "codegen_cuda/warp_reduce.h"

#include <string>

#include "absl/strings/str_replace.h"
#include "codegen_cuda/codegen_cuda.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir_parser.h"

namespace kiln::codegen_cuda {
namespace {

tir::PrimFunc Parse(const std::string& text) {
  absl::StatusOr<tir::PrimFunc> f = tir::ParsePrimFunc(text, "test.tir");
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : tir::PrimFunc();
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// Row sums of A[4, 96], one warp per row.
const char kRowSum[] = R"(
primfunc row_sum(A: float32[4, 96], B: float32[4]) {
  thread_binding (r, 0, 4) "blockIdx.x" {
    allocate R: float32[1] LOCAL
    allocate P: float32[32] shared
    thread_binding (l, 0, 32) "threadIdx.x" {
      P[l] = 0f
      for (o, 0, 3) { P[l] = (P[l] + A[(((r * 96) + (o * 32)) + l)]) }
    }
    R[0] = 0f
    for (k, 0, 32) { R[0] = (R[0] + P[k]) }
    B[r] = R[0]
  }
}
)";

std::string Source(const std::string& text) {
  absl::StatusOr<CudaKernel> k = GenerateKernel(Parse(text));
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? k->source : std::string();
}

TEST(WarpReduceTest, LaneLoopBecomesAShuffleButterfly) {
  const std::string src = Source(absl::StrReplaceAll(kRowSum, {{"LOCAL", "local"}}));
  EXPECT_EQ(Count(src, "__shfl_xor_sync(0xffffffffu, "), 5u) << src;
  EXPECT_THAT(src, ::testing::HasSubstr("(int)(16)")) << src;
  EXPECT_EQ(src.find("for (long long k "), std::string::npos) << src;
  EXPECT_THAT(src, ::testing::HasSubstr("const float lane_part = P[lane];")) << src;
}

// A block of 4 warps over a row: each warp's butterfly, lane 0 of each
// writes its warp's total over its own partial, a barrier (thread_sync),
// every thread combines the 4 totals.
TEST(WarpReduceTest, SeveralWarpsCombineTheirTotalsThroughShared) {
  const std::string text = absl::StrReplaceAll(
      kRowSum, {{"LOCAL", "local"},
                {"(l, 0, 32)", "(l, 0, 128)"},
                {"P: float32[32]", "P: float32[128]"},
                {"A: float32[4, 96]", "A: float32[4, 384]"},
                {"(r * 96) + (o * 32)", "(r * 384) + (o * 128)"},
                {"for (k, 0, 32)", "for (k, 0, 128)"}});
  const std::string src = Source(text);
  EXPECT_EQ(Count(src, "__shfl_xor_sync(0xffffffffu, "), 5u) << src;
  EXPECT_THAT(src, ::testing::HasSubstr("== 0LL)) {")) << src;
  EXPECT_THAT(src, ::testing::HasSubstr("P[lane] = lane_part_5;")) << src;
  EXPECT_THAT(src, ::testing::HasSubstr("for (long long warp = 0LL; warp < 4LL; ++warp)")) << src;
  EXPECT_THAT(src, ::testing::HasSubstr("R[0LL] = (R[0LL] + P[(warp * 32LL)]);")) << src;
  EXPECT_EQ(Count(src, "__syncthreads();"), 2u) << src;
  // The partials read from global memory (no shared array to combine
  // through): left alone.
  const std::string global = absl::StrReplaceAll(text, {{"+ P[k])", "+ A[k])"}});
  EXPECT_EQ(Source(global).find("__shfl"), std::string::npos) << Source(global);
}

TEST(WarpReduceTest, WhatDoesNotFitIsLeftAlone) {
  const std::string local = absl::StrReplaceAll(kRowSum, {{"LOCAL", "local"}});
  const std::string cases[] = {
      // the accumulator is not the lane's own
      absl::StrReplaceAll(kRowSum, {{"LOCAL", "shared"}}),
      // 64 threads
      absl::StrReplaceAll(local, {{"(l, 0, 32)", "(l, 0, 64)"}, {"P: float32[32]", "P: float32[64]"}}),
      // inside a threadIdx.x nest
      absl::StrReplaceAll(local, {{"    R[0] = 0f\n    for (k, 0, 32) { R[0] = (R[0] + P[k]) }",
                                   "    thread_binding (l2, 0, 32) \"threadIdx.x\" {\n"
                                   "      R[0] = 0f\n      for (k, 0, 32) { R[0] = (R[0] + P[k]) } }"}}),
  };
  for (const std::string& text : cases) {
    const std::string src = Source(text);
    EXPECT_EQ(src.find("__shfl"), std::string::npos) << src;
    EXPECT_NE(src.find("for (long long k "), std::string::npos) << src;
  }
  // A root statement without a thread binding runs on one thread.
  tir::PrimFunc f = Parse(R"(
primfunc one(A: float32[32], B: float32[1]) {
  thread_binding (l, 0, 32) "threadIdx.x" { B[0] = A[l] }
  allocate R: float32[1] local
  R[0] = 0f
  for (k, 0, 32) { R[0] = (R[0] + A[k]) }
  B[0] = R[0]
}
)");
  absl::StatusOr<tir::PrimFunc> g = LowerWarpReduce(f);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->get(), f.get());
}

}  // namespace
}  // namespace kiln::codegen_cuda
