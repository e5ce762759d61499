// File: tests/cuda/emulate_test.cc
//
// The host emulator's thread model (tests/cuda/emulate_host.h) on
// hand-written CUDA C: a block-level tree reduction through __shared__ memory
// gives the right sums with its barriers and wrong ones without them; a 2-D
// block transposes a tile through shared memory; warp shuffles (down, up,
// xor, broadcast) give the lockstep results; a barrier in divergent code, a
// deadlock and a bad shuffle mask are errors naming the kernel; two runs give
// the same bits.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/cuda/emulate.h"

namespace kiln::testing {
namespace {

// One block of 128 threads per 128 inputs: out[b] = sum of its inputs.
const char kBlockSum[] = R"(
extern "C" __global__ void block_sum(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float s[128];
  const unsigned t = threadIdx.x;
  s[t] = x[blockIdx.x * 128 + t];
  __syncthreads();
  for (unsigned stride = 64; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
)";

std::unique_ptr<HostKernels> BuildOrDie(const std::string& src, std::vector<HostKernel> k) {
  absl::StatusOr<std::unique_ptr<HostKernels>> h = HostKernels::Build(src, std::move(k));
  EXPECT_TRUE(h.ok()) << h.status();
  return h.ok() ? std::move(*h) : nullptr;
}

std::vector<float> BlockSum(const std::string& src, std::vector<float>* x) {
  std::vector<float> out(4, -1.0f);
  auto h = BuildOrDie(src, {{"block_sum", {"const float*", "float*"}, {4, 1, 1}, {128, 1, 1}}});
  if (h == nullptr) return out;
  void* args[] = {x->data(), out.data()};
  absl::Status st = h->Launch(0, args);
  EXPECT_TRUE(st.ok()) << st;
  return out;
}

TEST(EmulateTest, BlockReductionNeedsItsBarriers) {
  std::vector<float> x(512);
  std::vector<float> want(4, 0.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>((i * 7) % 13) - 6.0f;  // small integers: exact sums
    want[i / 128] += x[i];
  }
  EXPECT_EQ(BlockSum(kBlockSum, &x), want);
  // Without the barriers each thread runs to its end before the next starts:
  // thread 0 adds partial sums the others have not written yet.
  const std::string racy = absl::StrReplaceAll(kBlockSum, {{"__syncthreads();", ""}});
  EXPECT_NE(BlockSum(racy, &x), want);
}

TEST(EmulateTest, SameBitsEveryRun) {
  std::vector<float> x(512);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f / static_cast<float>(i + 1);
  const std::vector<float> a = BlockSum(kBlockSum, &x), b = BlockSum(kBlockSum, &x);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

TEST(EmulateTest, TwoDimensionalBlockTransposesThroughSharedMemory) {
  const char src[] = R"(
extern "C" __global__ void transpose(const int* __restrict__ in, int* __restrict__ out) {
  __shared__ int tile[16][17];
  const unsigned bx = blockIdx.x * 16, by = blockIdx.y * 16;
  tile[threadIdx.y][threadIdx.x] = in[(by + threadIdx.y) * 32 + bx + threadIdx.x];
  __syncthreads();
  out[(bx + threadIdx.y) * 32 + by + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
)";
  auto h = BuildOrDie(src, {{"transpose", {"const int*", "int*"}, {2, 2, 1}, {16, 16, 1}}});
  ASSERT_NE(h, nullptr);
  std::vector<int> in(32 * 32), out(32 * 32, -1);
  for (int i = 0; i < 32 * 32; ++i) in[static_cast<size_t>(i)] = i;
  void* args[] = {in.data(), out.data()};
  ASSERT_TRUE(h->Launch(0, args).ok());
  for (int r = 0; r < 32; ++r) {
    for (int c = 0; c < 32; ++c) ASSERT_EQ(out[static_cast<size_t>(r * 32 + c)], c * 32 + r);
  }
}

TEST(EmulateTest, WarpShufflesAreLockstep) {
  // 64 threads (2 warps). Per lane: a tree sum by shfl_down (lane 0 holds
  // it), a butterfly sum by shfl_xor (every lane holds it), an inclusive
  // prefix sum by shfl_up, lane 5's value broadcast, and a shfl_down with
  // width 8 (the top lanes of each segment keep their value).
  const char src[] = R"(
extern "C" __global__ void shuffles(const float* __restrict__ x, float* __restrict__ out) {
  const unsigned t = threadIdx.x, lane = t % 32;
  const float v = x[t];
  float down = v, bfly = v, scan = v;
  for (int d = 16; d > 0; d /= 2) down += __shfl_down_sync(0xffffffffu, down, d);
  for (int m = 16; m > 0; m /= 2) bfly += __shfl_xor_sync(0xffffffffu, bfly, m);
  for (int d = 1; d < 32; d *= 2) {
    const float u = __shfl_up_sync(0xffffffffu, scan, d);
    if (lane >= (unsigned)d) scan += u;
  }
  out[t * 5 + 0] = down;
  out[t * 5 + 1] = bfly;
  out[t * 5 + 2] = scan;
  out[t * 5 + 3] = __shfl_sync(0xffffffffu, v, 5);
  out[t * 5 + 4] = __shfl_down_sync(0xffffffffu, v, 2, 8);
}
)";
  auto h = BuildOrDie(src, {{"shuffles", {"const float*", "float*"}, {1, 1, 1}, {64, 1, 1}}});
  ASSERT_NE(h, nullptr);
  std::vector<float> x(64), out(64 * 5, -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 11);
  void* args[] = {x.data(), out.data()};
  ASSERT_TRUE(h->Launch(0, args).ok());
  for (size_t w = 0; w < 2; ++w) {
    float total = 0.0f, prefix = 0.0f;
    for (size_t l = 0; l < 32; ++l) total += x[w * 32 + l];
    for (size_t l = 0; l < 32; ++l) {
      const size_t t = w * 32 + l;
      prefix += x[t];
      // shfl_down's tree: lane 0 holds the warp's total.
      if (l == 0) {
        EXPECT_EQ(out[t * 5 + 0], total) << t;
      }
      EXPECT_EQ(out[t * 5 + 1], total) << t;
      EXPECT_EQ(out[t * 5 + 2], prefix) << t;
      EXPECT_EQ(out[t * 5 + 3], x[w * 32 + 5]) << t;
      EXPECT_EQ(out[t * 5 + 4], (l % 8) + 2 < 8 ? x[t + 2] : x[t]) << t;
    }
  }
}

TEST(EmulateTest, ThreadErrorsAreStatuses) {
  const char src[] = R"(
extern "C" __global__ void divergent(float* __restrict__ out) {
  if (threadIdx.x < 16) __syncthreads();
  out[threadIdx.x] = 1.0f;
}
extern "C" __global__ void deadlock(float* __restrict__ out) {
  // Lanes 16..31 of warp 1 wait in a shuffle for lanes 0..15, which wait at
  // the barrier for them.
  if (threadIdx.x < 48) { __syncthreads(); } else { out[0] = __shfl_sync(0xffffffffu, 1.0f, 0); }
}
extern "C" __global__ void bad_mask(float* __restrict__ out) {
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1.0f, 1);
}
)";
  auto h = BuildOrDie(src, {{"divergent", {"float*"}, {1, 1, 1}, {32, 1, 1}},
                            {"deadlock", {"float*"}, {1, 1, 1}, {64, 1, 1}},
                            {"bad_mask", {"float*"}, {1, 1, 1}, {16, 1, 1}}});
  ASSERT_NE(h, nullptr);
  std::vector<float> out(64);
  void* args[] = {out.data()};
  absl::Status st = h->Launch(0, args);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("kernel divergent: __syncthreads() reached by some threads"),
            std::string::npos)
      << st;
  st = h->Launch(1, args);
  EXPECT_NE(st.message().find("kernel deadlock: deadlock"), std::string::npos) << st;
  st = h->Launch(2, args);
  EXPECT_NE(st.message().find("names a lane the block does not have"), std::string::npos) << st;
}

}  // namespace
}  // namespace kiln::testing
