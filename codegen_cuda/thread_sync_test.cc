// File: codegen_cuda/thread_sync_test.cc
//
// InsertThreadSync on hand-written loop IR, checked in the CUDA C it gives:
// a read after the block's writes gets a barrier before the `if` that holds
// it; a tile loop gets one at the top of its body (the next iteration's
// writes after this one's reads) and one between its loads and its reads;
// kernels without shared memory are left alone; a barrier needed in
// divergent code is an error naming the buffer. tests/cuda/emulate_test.cc
// runs the same kernels.
#include "codegen_cuda/thread_sync.h"

#include <string>

#include "codegen_cuda/codegen_cuda.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir_parser.h"

namespace kiln::codegen_cuda {
namespace {

using ::testing::HasSubstr;

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

const char kBlockSum[] = R"(
primfunc block_sum(A: float32[256], B: float32[4]) {
  thread_binding (bx, 0, 4) "blockIdx.x" {
    thread_binding (tx, 0, 64) "threadIdx.x" {
      allocate S: float32[64] shared
      S[tx] = A[((bx * 64) + tx)]
      if ((tx == 0)) {
        B[bx] = 0f
        for (k, 0, 64) { B[bx] = (B[bx] + S[k]) }
      }
    }
  }
}
)";

TEST(ThreadSyncTest, BarrierBeforeTheConditionThatReads) {
  absl::StatusOr<CudaKernel> k = GenerateKernel(Parse(kBlockSum));
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(Count(k->source, "__syncthreads();"), 1u) << k->source;
  const size_t store = k->source.find("S[tx] = ");
  const size_t sync = k->source.find("__syncthreads();");
  const size_t cond = k->source.find("if ((tx == 0");
  ASSERT_NE(cond, std::string::npos) << k->source;
  EXPECT_LT(store, sync);
  EXPECT_LT(sync, cond) << k->source;
  EXPECT_EQ(k->shared_bytes, 256);
}

const char kTiles[] = R"(
primfunc tiles(A: float32[256], B: float32[64]) {
  thread_binding (tx, 0, 64) "threadIdx.x" {
    allocate S: float32[64] shared
    B[tx] = 0f
    for (ko, 0, 4) {
      S[tx] = A[((ko * 64) + tx)]
      for (k, 0, 64) { B[tx] = (B[tx] + (S[k] * S[((tx + k) % 64)])) }
    }
  }
}
)";

TEST(ThreadSyncTest, TileLoopGetsACarriedAndAForwardBarrier) {
  absl::StatusOr<CudaKernel> k = GenerateKernel(Parse(kTiles));
  ASSERT_TRUE(k.ok()) << k.status();
  const std::string& src = k->source;
  EXPECT_EQ(Count(src, "__syncthreads();"), 2u) << src;
  const size_t loop = src.find("for (long long ko");
  const size_t first = src.find("__syncthreads();");
  const size_t store = src.find("S[tx] = ");
  const size_t second = src.find("__syncthreads();", first + 1);
  const size_t inner = src.find("for (long long k ");
  EXPECT_LT(loop, first) << src;
  EXPECT_LT(first, store) << src;
  EXPECT_LT(store, second) << src;
  EXPECT_LT(second, inner) << src;
}

// A thread updating its own element (the same index expression) needs no
// barrier, even in a loop whose bound depends on the thread; a let that reads
// another thread's element gets one before it.
TEST(ThreadSyncTest, OwnElementNeedsNoBarrierOthersDo) {
  absl::StatusOr<CudaKernel> k = GenerateKernel(Parse(R"(
primfunc own(A: float32[64], B: float32[64]) {
  thread_binding (tx, 0, 64) "threadIdx.x" {
    allocate S: float32[64] shared
    S[tx] = 0f
    for (i, 0, (tx + 1)) { S[tx] = (S[tx] + A[i]) }
    let v = S[(63 - tx)]
    B[tx] = v
  }
}
)"));
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(Count(k->source, "__syncthreads();"), 1u) << k->source;
  EXPECT_LT(k->source.find("__syncthreads();"), k->source.find("const float v = ")) << k->source;
  EXPECT_GT(k->source.find("__syncthreads();"), k->source.find("for (long long i")) << k->source;
}

TEST(ThreadSyncTest, NoSharedMemoryNoChange) {
  tir::PrimFunc f = Parse(R"(
primfunc add(A: float32[64], B: float32[64]) {
  thread_binding (tx, 0, 64) "threadIdx.x" { B[tx] = (A[tx] + 1f) }
}
)");
  absl::StatusOr<tir::PrimFunc> g = InsertThreadSync(f);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->get(), f.get());
}

TEST(ThreadSyncTest, BarrierInDivergentCodeIsAnError) {
  const char* const cases[] = {
      // inside a condition on the thread
      R"(primfunc d1(A: float32[64], B: float32[64]) {
        thread_binding (tx, 0, 64) "threadIdx.x" {
          allocate S: float32[64] shared
          if ((tx < 32)) { S[tx] = A[tx] B[tx] = S[(31 - tx)] }
        } })",
      // a nest bound to fewer threads than the launch (the other nest's 64)
      R"(primfunc d2(A: float32[64], B: float32[64]) {
        thread_binding (tx, 0, 64) "threadIdx.x" { B[tx] = 0f }
        thread_binding (bx, 0, 1) "blockIdx.x" {
          thread_binding (tx2, 0, 32) "threadIdx.x" {
            allocate S: float32[32] shared
            S[tx2] = A[tx2]
            A[tx2] = S[(31 - tx2)]
          } } })",
      // a loop whose bound depends on the thread
      R"(primfunc d3(A: float32[64], B: float32[64]) {
        thread_binding (tx, 0, 64) "threadIdx.x" {
          allocate S: float32[64] shared
          for (i, 0, tx) { S[tx] = A[i] B[tx] = S[(63 - tx)] }
        } })",
  };
  for (const char* text : cases) {
    tir::PrimFunc f = Parse(text);
    if (!f) continue;
    absl::StatusOr<CudaKernel> k = GenerateKernel(f);
    ASSERT_FALSE(k.ok()) << text << "\n" << k->source;
    EXPECT_THAT(std::string(k.status().message()),
                HasSubstr("shared buffer 'S' needs a __syncthreads() inside code that not every "
                          "thread of the block runs"))
        << text;
  }
}

}  // namespace
}  // namespace kiln::codegen_cuda
