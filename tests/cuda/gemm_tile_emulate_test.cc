// File: tests/cuda/gemm_tile_emulate_test.cc
//
// The prelude's pipelined tensor-core tiles (kiln_gemm_tc and Hopper's
// kiln_gemm_wg, codegen_cuda/tensor_core.h) called directly from hand-written kernels and
// run on the host emulator (a 16x16-thread block as fibers; ldmatrix and
// mma.sync as warp exchanges, wgmma through its descriptors): every operand layout (A k- or m-major, B k- or
// n-major), float16 and bfloat16, K of 1, 2, 3 and 5 steps of 32 (fewer
// steps than stages, and the pipeline wrapping around its three stages), the
// 16-byte cp.async path and the word-by-word fallback taken for an
// unaligned pointer or a stride that is not a multiple of 8. Inputs are
// small integers, so the float32 sums are exact and compared for equality
// with a plain loop here; the tile adds into the thread's block (which
// starts at 1). tests/cuda/gemm_emulate_test.cc runs the tile as the
// schedules produce it.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "codegen_cuda/codegen_cuda.h"
#include "gtest/gtest.h"
#include "tests/cuda/emulate.h"
#include "tests/cuda/fake_tensor_map.h"

namespace kiln::testing {
namespace {

const char kKernel[] = R"(
extern "C" __global__ void NAME(const unsigned short* A, const unsigned short* B, float* C,
                                long long ar, long long ak, long long bc, long long bk, int steps,
                                int rows, int cols, int kn) {
  float cl[64];
  for (int i = 0; i < 64; ++i) cl[i] = 1.0f;
  kiln_gemm_tc<BF, AK, BK>(cl, A, ar, ak, B, bc, bk, steps, rows, cols, kn);
  for (int ii = 0; ii < 8; ++ii) {
    for (int jj = 0; jj < 8; ++jj) C[(threadIdx.y * 8 + ii) * 128 + threadIdx.x * 8 + jj] = cl[ii * 8 + jj];
  }
}
)";

// Hopper's form (kiln_gemm_wg: both operands k-major; the emulator decodes
// its wgmma descriptors), with the same parameters.
const char kKernelWg[] = R"(
extern "C" __global__ void NAME(const unsigned short* A, const unsigned short* B, float* C,
                                long long ar, long long ak, long long bc, long long bk, int steps,
                                int rows, int cols, int kn) {
  float cl[64];
  for (int i = 0; i < 64; ++i) cl[i] = 1.0f;
  (void)ak;
  (void)bk;
  kiln_gemm_wg<BF>(cl, A, ar, B, bc, steps, rows, cols, kn);
  for (int ii = 0; ii < 8; ++ii) {
    for (int jj = 0; jj < 8; ++jj) C[(threadIdx.y * 8 + ii) * 128 + threadIdx.x * 8 + jj] = cl[ii * 8 + jj];
  }
}
)";

// Hopper's wide form (kiln_gemm_wgw: a 128 x 256 tile, 8 x 16 outputs per
// thread, steps of 64, four stages in what is dynamic shared memory on a
// GPU, one step's MMAs in flight), with the same parameters.
const char kKernelWgw[] = R"(
extern "C" __global__ void NAME(const unsigned short* A, const unsigned short* B, float* C,
                                long long ar, long long ak, long long bc, long long bk, int steps,
                                int rows, int cols, int kn) {
  float cl[128];
  for (int i = 0; i < 128; ++i) cl[i] = 1.0f;
  (void)ak;
  (void)bk;
  kiln_gemm_wgw<BF, SW>(cl, A, ar, B, bc, steps, rows, cols, kn);
  for (int ii = 0; ii < 8; ++ii) {
    for (int jj = 0; jj < 16; ++jj) C[(threadIdx.y * 8 + ii) * 256 + threadIdx.x * 16 + jj] = cl[ii * 16 + jj];
  }
}
)";

// The wide form with TMA-filled stages (kiln_gemm_wgt): the same parameters,
// then the operands' bases (elements from A and B, whole rows for the TMA
// copies, else kiln_gemm_wgw's) and their tensor maps (the fake driver's
// layout, tests/cuda/fake_tensor_map.h).
const char kKernelWgt[] = R"(
extern "C" __global__ void NAME(const unsigned short* A, const unsigned short* B, float* C,
                                long long ar, long long ak, long long bc, long long bk, int steps,
                                int rows, int cols, int kn, long long a_base, long long b_base,
                                const __grid_constant__ kiln_tmap ta,
                                const __grid_constant__ kiln_tmap tb) {
  float cl[128];
  for (int i = 0; i < 128; ++i) cl[i] = 1.0f;
  (void)ak;
  (void)bk;
  kiln_gemm_wgt<BF>(cl, &ta, &tb, A, a_base, ar, B, b_base, bc, steps, rows, cols, kn);
  for (int ii = 0; ii < 8; ++ii) {
    for (int jj = 0; jj < 16; ++jj) C[(threadIdx.y * 8 + ii) * 256 + threadIdx.x * 16 + jj] = cl[ii * 16 + jj];
  }
}
)";

// The warp-specialized TMA form (kiln_gemm_wgs): 16 x 24 threads, the third
// warpgroup the producer (kiln_wgs_init / kiln_wgs_produce), the same
// parameters as kKernelWgt (bases of whole rows).
const char kKernelWgs[] = R"(
extern "C" __global__ void NAME(const unsigned short* A, const unsigned short* B, float* C,
                                long long ar, long long ak, long long bc, long long bk, int steps,
                                int rows, int cols, int kn, long long a_base, long long b_base,
                                const __grid_constant__ kiln_tmap ta,
                                const __grid_constant__ kiln_tmap tb) {
  kiln_wgs_init();
  if (threadIdx.y >= 16u) {
    kiln_wgs_produce(&ta, &tb);
    return;
  }
  float cl[128];
  for (int i = 0; i < 128; ++i) cl[i] = 1.0f;
  (void)A; (void)B; (void)ak; (void)bk; (void)rows; (void)cols; (void)kn;
  kiln_gemm_wgs<BF>(cl, (int)(a_base / ar), (int)(b_base / bc), steps);
  for (int ii = 0; ii < 8; ++ii) {
    for (int jj = 0; jj < 16; ++jj) C[(threadIdx.y * 8 + ii) * 256 + threadIdx.x * 16 + jj] = cl[ii * 16 + jj];
  }
}
)";

// The TF32 form (kiln_gemm_tf32: float32 operands, steps of 16).
const char kKernelTf32[] = R"(
extern "C" __global__ void NAME(const float* A, const float* B, float* C,
                                long long ar, long long ak, long long bc, long long bk, int steps,
                                int rows, int cols, int kn) {
  float cl[64];
  for (int i = 0; i < 64; ++i) cl[i] = 1.0f;
  kiln_gemm_tf32<AK, BK>(cl, A, ar, ak, B, bc, bk, steps, rows, cols, kn);
  for (int ii = 0; ii < 8; ++ii) {
    for (int jj = 0; jj < 8; ++jj) C[(threadIdx.y * 8 + ii) * 128 + threadIdx.x * 8 + jj] = cl[ii * 8 + jj];
  }
}
)";

struct Variant {
  const char* name;
  bool bf, ak, bk;
  bool wg = false;
  bool f32 = false;
  bool wide = false;  // kiln_gemm_wgw
  bool sw = false;    // its 128-byte swizzled layout
  bool tma = false;   // kiln_gemm_wgt
  bool ws = false;    // kiln_gemm_wgs (16 x 24 threads)
};
constexpr Variant kVariants[] = {
    {"tc_f16_kk", false, true, true},  {"tc_f16_kn", false, true, false},
    {"tc_f16_mk", false, false, true}, {"tc_f16_mn", false, false, false},
    {"tc_bf16_kk", true, true, true},  {"wg_f16", false, true, true, true},
    {"wg_bf16", true, true, true, true},
    {"tf32_kk", false, true, true, false, true},   {"tf32_kn", false, true, false, false, true},
    {"tf32_mk", false, false, true, false, true},  {"tf32_mn", false, false, false, false, true},
    {"wgw_f16", false, true, true, true, false, true},
    {"wgw_bf16", true, true, true, true, false, true},
    {"wgw_sw_f16", false, true, true, true, false, true, true},
    {"wgw_sw_bf16", true, true, true, true, false, true, true},
    {"wgt_f16", false, true, true, true, false, true, true, true},
    {"wgt_bf16", true, true, true, true, false, true, true, true},
    {"wgs_f16", false, true, true, true, false, true, true, true, true},
    {"wgs_bf16", true, true, true, true, false, true, true, true, true},
};
constexpr size_t kWgF16 = 5, kWgBF16 = 6, kTf32 = 7, kWgwF16 = 11, kWgwBF16 = 12, kWgwSwF16 = 13,
                 kWgwSwBF16 = 14, kWgtF16 = 15, kWgtBF16 = 16, kWgsF16 = 17, kWgsBF16 = 18;

const char* Bool(bool b) { return b ? "true" : "false"; }

std::unique_ptr<HostKernels>& Kernels() {
  static std::unique_ptr<HostKernels>* k = [] {
    std::string src = codegen_cuda::CudaPrelude();
    std::vector<HostKernel> ks;
    for (const Variant& v : kVariants) {
      src += absl::StrReplaceAll(
          v.f32 ? kKernelTf32 : v.ws ? kKernelWgs : v.tma ? kKernelWgt : v.wide ? kKernelWgw : v.wg ? kKernelWg : kKernel, {{"NAME", v.name}, {"BF", Bool(v.bf)}, {"AK", Bool(v.ak)}, {"BK", Bool(v.bk)}, {"SW", Bool(v.sw)}});
      std::vector<std::string> params = {v.f32 ? "const float*" : "const unsigned short*",
                                         v.f32 ? "const float*" : "const unsigned short*",
                                         "float*", "long long", "long long", "long long",
                                         "long long", "int", "int", "int", "int"};
      if (v.tma) params.insert(params.end(), {"long long", "long long", "kiln_tmap", "kiln_tmap"});
      ks.push_back({v.name, std::move(params), {1, 1, 1}, {16, v.ws ? 24u : 16u, 1}});
    }
    absl::StatusOr<std::unique_ptr<HostKernels>> h = HostKernels::Build(src, std::move(ks));
    auto* out = new std::unique_ptr<HostKernels>();
    if (h.ok()) {
      *out = std::move(*h);
    } else if (h.status().code() != absl::StatusCode::kUnavailable) {
      ADD_FAILURE() << h.status();
    }
    return out;
  }();
  return *k;
}

unsigned short Bits(float f, bool bf) {
  if (bf) {
    unsigned u;
    std::memcpy(&u, &f, 4);
    return static_cast<unsigned short>(u >> 16);  // exact for small integers
  }
  _Float16 h = static_cast<_Float16>(f);
  unsigned short s;
  std::memcpy(&s, &h, 2);
  return s;
}

// A ragged tile's limits: the rows of A, columns of B and k that exist (the
// tile must read zeros past them; the memory there holds 1000s). -1: all.
struct Limits {
  int rows = 128, cols = 128, kn = -1;
};

// Runs variant `vi` on a 128 x N x (kstep * steps) product (N 256 for the
// wide form, else 128; kstep 16 for TF32, 64 for the wide form, else 32);
// `pad` is added to the operands' non-unit strides, `shift` elements to
// their base pointers. The TMA form instead gets the buffers' starts (their
// tensor maps' addresses) and bases of `shift` + `origin` rows: a shift
// that is not a whole row takes its cp.async fallback. Its outputs past the
// limits are not compared (the TMA copies read the rows there; the code
// generator's epilogue never stores them).
void RunTile(size_t vi, int steps, int pad, int shift, Limits lim = {}, int origin = 0) {
  std::unique_ptr<HostKernels>& h = Kernels();
  if (h == nullptr) GTEST_SKIP() << "g++ is not available to build the emulated kernels";
  const Variant& v = kVariants[vi];
  const int N = v.wide ? 256 : 128;
  if (lim.cols == 128) lim.cols = N;
  const int K = (v.f32 ? 16 : v.wide ? 64 : 32) * steps;
  const int kn = lim.kn < 0 ? K : lim.kn;
  // A(r, k) = A[r * ar + k * ak]; B(k, c) = B[c * bc + k * bk].
  const long long ar = v.ak ? K + pad : 1, ak = v.ak ? 1 : 128 + pad;
  const long long bc = v.bk ? K + pad : 1, bk = v.bk ? 1 : N + pad;
  if (!v.tma) origin = 0;
  const long long a0 = shift + origin * ar, b0 = shift + origin * bc;
  const size_t a_len = static_cast<size_t>(127 * ar + (K - 1) * ak + 1 + a0);
  const size_t b_len = static_cast<size_t>((N - 1) * bc + (K - 1) * bk + 1 + b0);
  std::vector<float> a(128 * K), b(N * K);
  for (int r = 0; r < N; ++r) {
    for (int k = 0; k < K; ++k) {
      if (r < 128) {
        a[r * K + k] = r < lim.rows && k < kn ? static_cast<float>((r * 7 + k * 3) % 7 - 3) : 1000.0f;
      }
      b[r * K + k] = r < lim.cols && k < kn ? static_cast<float>((r * 5 + k * 11) % 5 - 2) : 1000.0f;
    }
  }
  alignas(16) static unsigned short abuf[1 << 20], bbuf[1 << 20];
  alignas(16) static float afbuf[1 << 20], bfbuf[1 << 20];
  ASSERT_LE(a_len, sizeof abuf / 2);
  ASSERT_LE(b_len, sizeof bbuf / 2);
  std::fill(abuf, abuf + a_len, Bits(1000.0f, v.bf));  // padding: never read
  std::fill(bbuf, bbuf + b_len, Bits(1000.0f, v.bf));
  std::fill(afbuf, afbuf + a_len, 1000.0f);
  std::fill(bfbuf, bfbuf + b_len, 1000.0f);
  for (int r = 0; r < N; ++r) {
    for (int k = 0; k < K; ++k) {
      if (r < 128) {
        abuf[a0 + r * ar + k * ak] = Bits(a[r * K + k], v.bf);
        afbuf[a0 + r * ar + k * ak] = a[r * K + k];
      }
      bbuf[b0 + r * bc + k * bk] = Bits(b[r * K + k], v.bf);
      bfbuf[b0 + r * bc + k * bk] = b[r * K + k];
    }
  }
  std::vector<float> c(128 * N, -1.0f);
  void* ap = v.f32 ? static_cast<void*>(afbuf + shift) : static_cast<void*>(abuf + shift);
  void* bp = v.f32 ? static_cast<void*>(bfbuf + shift) : static_cast<void*>(bbuf + shift);
  long long s[4] = {ar, ak, bc, bk};
  int st = steps, rows = lim.rows, cols = lim.cols, kl = kn;
  std::vector<void*> args = {ap, bp, c.data(), &s[0], &s[1], &s[2], &s[3], &st, &rows, &cols, &kl};
  // The TMA form's bases and maps: rows of kn elements (zeros past them),
  // every whole row of the buffer, boxes of 64 x 128 (A) and 64 x 256 (B).
  long long bases[2] = {a0, b0};
  alignas(64) static unsigned long long maps[2][16];
  if (v.tma) {
    const unsigned dtype = v.bf ? 9 : 6;  // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, _FLOAT16
    const uint64_t adims[2] = {static_cast<uint64_t>(kn), (a_len - kn) / ar + 1};
    const uint64_t bdims[2] = {static_cast<uint64_t>(kn), (b_len - kn) / bc + 1};
    const uint64_t astride = 2 * ar, bstride = 2 * bc;
    const uint32_t abox[2] = {64, 128}, bbox[2] = {64, 256};
    ASSERT_EQ(kiln_fake_tensor_map_encode(maps[0], dtype, 2, abuf, adims, &astride, abox, nullptr,
                                          0, 3), 0);
    ASSERT_EQ(kiln_fake_tensor_map_encode(maps[1], dtype, 2, bbuf, bdims, &bstride, bbox, nullptr,
                                          0, 3), 0);
    args[0] = abuf;
    args[1] = bbuf;
    args.insert(args.end(), {&bases[0], &bases[1], maps[0], maps[1]});
  }
  absl::Status launched = h->Launch(vi, args.data());
  ASSERT_TRUE(launched.ok()) << launched;
  int wrong = 0;
  for (int r = 0; r < 128; ++r) {
    for (int col = 0; col < N; ++col) {
      if (v.tma && (r >= lim.rows || col >= lim.cols)) continue;
      float want = 1.0f;
      if (r < lim.rows && col < lim.cols) {
        for (int k = 0; k < kn; ++k) want += a[r * K + k] * b[col * K + k];
      }
      if (c[r * N + col] != want && ++wrong <= 5) {
        ADD_FAILURE() << v.name << " steps=" << steps << " pad=" << pad << " shift=" << shift
                      << " rows=" << lim.rows << " cols=" << lim.cols << " kn=" << kn
                      << ": C(" << r << ", " << col << ") = " << c[r * N + col] << ", want "
                      << want;
      }
    }
  }
  EXPECT_EQ(wrong, 0) << v.name;
}

TEST(GemmTileEmulateTest, EveryLayoutAndStepCount) {
  for (size_t vi = 0; vi < 4; ++vi) {
    for (int steps : {1, 2, 3, 5}) RunTile(vi, steps, 0, 0);
  }
}

TEST(GemmTileEmulateTest, BFloat16) {
  for (int steps : {1, 4}) RunTile(4, steps, 0, 0);
}

// Aligned strides with padding (multiples of 8): still the cp.async path.
TEST(GemmTileEmulateTest, PaddedStrides) {
  for (size_t vi = 0; vi < 4; ++vi) RunTile(vi, 2, 8, 0);
}

// A stride of K + 4 or an operand one element off 16 bytes: word-by-word
// copies into the same swizzled tiles.
TEST(GemmTileEmulateTest, UnalignedFallsBackToWordCopies) {
  for (size_t vi = 0; vi < 4; ++vi) {
    RunTile(vi, 3, 4, 0);
    RunTile(vi, 2, 0, 1);
  }
}

// kiln_gemm_tf32: every layout over 1, 2, 3 and 5 steps of 16, padded strides
// and the word-by-word copies (small integers are exact in TF32).
TEST(GemmTileEmulateTest, Tf32Form) {
  for (size_t vi = kTf32; vi < kTf32 + 4; ++vi) {
    for (int steps : {1, 2, 3, 5}) RunTile(vi, steps, 0, 0);
    RunTile(vi, 2, 4, 0);
    RunTile(vi, 3, 2, 0);
    RunTile(vi, 2, 0, 1);
  }
}

// kiln_gemm_wg: the pipeline over 1, 2, 3 and 5 steps, bfloat16, padded and
// unaligned strides (the word-by-word copies into the descriptors' layout).
TEST(GemmTileEmulateTest, WarpgroupMmaForm) {
  for (int steps : {1, 2, 3, 5}) RunTile(kWgF16, steps, 0, 0);
  for (int steps : {1, 4}) RunTile(kWgBF16, steps, 0, 0);
  RunTile(kWgF16, 2, 8, 0);
  RunTile(kWgF16, 3, 4, 0);
  RunTile(kWgBF16, 2, 0, 1);
}

// kiln_gemm_wgw: the four-stage pipeline with one step's MMAs in flight over
// 1, 2, 3, 4, 5 and 9 steps (fewer steps than stages, and wrapping around
// them twice; the emulator runs each MMA only at the wait that retires it,
// so a stage refilled before then shows), bfloat16, padded and unaligned
// strides.
TEST(GemmTileEmulateTest, WideWarpgroupMmaForm) {
  for (int steps : {1, 2, 3, 4, 5, 9}) RunTile(kWgwF16, steps, 0, 0);
  for (int steps : {1, 3}) RunTile(kWgwBF16, steps, 0, 0);
  RunTile(kWgwF16, 2, 8, 0);
  RunTile(kWgwF16, 3, 4, 0);
  RunTile(kWgwBF16, 2, 0, 1);
}

// The same with the 128-byte swizzled layout (the emulator decodes the
// descriptors' swizzle mode).
TEST(GemmTileEmulateTest, WideWarpgroupMmaSwizzledForm) {
  for (int steps : {1, 2, 5, 9}) RunTile(kWgwSwF16, steps, 0, 0);
  RunTile(kWgwSwBF16, 3, 0, 0);
  RunTile(kWgwSwF16, 2, 8, 0);
  RunTile(kWgwSwF16, 3, 4, 0);
  RunTile(kWgwSwBF16, 2, 0, 1);
}

// The TMA-filled form: every step count (fewer steps than the three in
// flight, the four stages wrapping around), bfloat16, padded rows, a tile
// origin some rows into the buffers (the copies' row coordinate), and a base
// that is not a whole row (kiln_gemm_wgw's copies instead).
TEST(GemmTileEmulateTest, WideWarpgroupMmaTmaForm) {
  for (int steps : {1, 2, 3, 4, 5, 9}) RunTile(kWgtF16, steps, 0, 0);
  for (int steps : {1, 6}) RunTile(kWgtBF16, steps, 0, 0);
  RunTile(kWgtF16, 2, 8, 0);
  RunTile(kWgtF16, 3, 0, 0, {}, 5);
  RunTile(kWgtBF16, 5, 8, 0, {}, 130);
  RunTile(kWgtF16, 2, 0, 1);
  RunTile(kWgtBF16, 3, 8, 3, {}, 2);
}

// The warp-specialized form: the same cases, bases of whole rows (it has no
// fallback; the code generator proves them).
TEST(GemmTileEmulateTest, WarpSpecializedTmaForm) {
  for (int steps : {1, 2, 3, 4, 5, 9}) RunTile(kWgsF16, steps, 0, 0);
  for (int steps : {1, 6}) RunTile(kWgsBF16, steps, 0, 0);
  RunTile(kWgsF16, 2, 8, 0);
  RunTile(kWgsF16, 3, 0, 0, {}, 5);
  RunTile(kWgsBF16, 5, 8, 0, {}, 130);
}

// A ragged edge tile: rows of A, columns of B or k past the limits are read
// as zeros (cp.async with a source size of 0, or short of 16 bytes, where a
// 16-byte chunk straddles a limit; zeros in the word-by-word copies), for
// every form and layout; the memory past the limits holds 1000s, so a
// chunk read instead of zero-filled shows. Partial chunks: a limit that is
// not a multiple of 8 along an operand's contiguous dim.
TEST(GemmTileEmulateTest, RaggedEdgeTiles) {
  for (size_t vi = 0; vi < std::size(kVariants); ++vi) {
    const bool f32 = kVariants[vi].f32;
    RunTile(vi, 3, 0, 0, {72, 128, -1});
    RunTile(vi, 3, 0, 0, {128, 40, -1});
    RunTile(vi, 3, 0, 0, {1, 100, f32 ? 40 : 72});          // k ends inside the last step
    RunTile(vi, 2, 0, 0, {97, 13, f32 ? 20 : 40});          // partial chunks of m- or n-major tiles
    // Word by word, k not of a chunk (the TMA form's rows must be whole
    // chunks: a pad of 8).
    RunTile(vi, 2, kVariants[vi].tma ? 8 : 4, 0, {97, 13, f32 ? 21 : 43});
    RunTile(vi, 5, 0, 0, {128, 128, f32 ? 8 : 16});         // steps past k's end: zeros
  }
  // The wide form's columns past 128 and k inside its second step of 64.
  RunTile(kWgwF16, 3, 0, 0, {100, 200, 136});
  RunTile(kWgwBF16, 2, 4, 0, {128, 131, 100});
  RunTile(kWgwSwF16, 3, 0, 0, {100, 200, 136});
  RunTile(kWgwSwBF16, 2, 4, 0, {128, 131, 100});
  // The TMA form: k ends inside a step (the maps' bounds), the last rows of
  // the buffers past the limits (the maps' zeros past the buffer's end).
  RunTile(kWgtF16, 3, 0, 0, {100, 200, 136});
  RunTile(kWgtBF16, 2, 8, 0, {128, 131, 100});
  RunTile(kWgtF16, 2, 0, 0, {1, 7, 24}, 3);
  RunTile(kWgsF16, 3, 0, 0, {100, 200, 136});
  RunTile(kWgsBF16, 2, 8, 0, {1, 7, 24}, 3);
}

}  // namespace
}  // namespace kiln::testing
