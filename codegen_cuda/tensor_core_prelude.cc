// File: codegen_cuda/tensor_core_prelude.cc — the device functions the
// tensor-core rewrite's calls name (codegen_cuda/tensor_core.h): mma.sync
// tiles, the pipelined 128x128 tile (16-bit and TF32), Hopper's wgmma tile.
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen_cuda/tensor_core.h"

namespace kiln::codegen_cuda {

namespace {

// The warpgroup MMA wrapper m64nNk16: N / 2 float32 accumulators as "+f"
// operands (the instruction names them all), the two descriptors, scale-d
// true.
std::string WgmmaAsm(const char* type, int n) {
  const int regs_n = n / 2;
  std::string regs, outs;
  for (int i = 0; i < regs_n; ++i) {
    absl::StrAppend(&regs, i ? ", " : "", "%", i);
    absl::StrAppend(&outs, i ? ", " : "", "\"+f\"(d[", i, "])");
  }
  return absl::StrCat(
      "    asm volatile(\"{ .reg .pred p; setp.ne.b32 p, 1, 0; "
      "wgmma.mma_async.sync.aligned.m64n", n, "k16.f32.", type, ".", type, " {", regs, "}, %",
      regs_n, ", %", regs_n + 1, ", p, 1, 1, 0, 0; }\"\n                 : ", outs,
      "\n                 : \"l\"(da), \"l\"(db));\n");
}

std::string WgmmaPrelude() {
  return absl::StrCat(R"KILN_WG(// Hopper's warpgroup MMA (kiln_gemm_wg, codegen_cuda/tensor_core.h; compute_90a
// only): wgmma.mma_async m64n128k16, A and B read by the tensor cores from
// shared memory through matrix descriptors, float32 accumulators in the
// registers of the warpgroup's 128 threads. Host builds run it on the
// emulator (tests/cuda/emulate_host.h), which reads the operands through the
// same descriptors.
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
// A descriptor of an operand tile in the unswizzled canonical k-major layout:
// core matrices of 8 rows x 8 16-bit k (16 bytes a row, 128 bytes each), the
// next 8 of k 128 bytes on (leading byte offset), the next 8 rows 512 bytes
// on (stride byte offset): a 128 x 32 tile of 8 KiB. `addr`: its shared-
// memory byte address.
__device__ __forceinline__ unsigned long long kiln_wg_desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFFu) >> 4) | ((unsigned long long)(128 >> 4) << 16) |
         ((unsigned long long)(512 >> 4) << 32);
}
__device__ __forceinline__ int kiln_wg_index(int r, int k) {
  return (r >> 3) * 256 + (k >> 3) * 64 + (r & 7) * 8 + (k & 7);
}
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned kiln_wg_addr(const unsigned short* base, const unsigned short* p) {
  (void)base;
  return kiln_smem_addr(p);
}
template <bool BF> __device__ __forceinline__ void kiln_wgmma_m64n128k16(
    float* d, unsigned long long da, unsigned long long db, const unsigned short* base) {
  (void)base;
  if (BF) {
)KILN_WG",
                      WgmmaAsm("bf16", 128), "  } else {\n", WgmmaAsm("f16", 128), R"KILN_WG(  }
}
template <bool BF> __device__ __forceinline__ void kiln_wgmma_m64n256k16(
    float* d, unsigned long long da, unsigned long long db, const unsigned short* base) {
  (void)base;
  if (BF) {
)KILN_WG",
                      WgmmaAsm("bf16", 256), "  } else {\n", WgmmaAsm("f16", 256), R"KILN_WG(  }
}
// Keeps the compiler from moving uses of an accumulator (N registers)
// across the asynchronous MMA's issue and wait.
template <int N> __device__ __forceinline__ void kiln_wg_pin(float* d) {
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}
__device__ __forceinline__ void kiln_wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void kiln_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
// Waits until at most N of this thread's committed MMA groups are pending.
template <int N> __device__ __forceinline__ void kiln_wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory");
}
// The cp.async writes (generic proxy) visible to the MMA's reads (async proxy).
__device__ __forceinline__ void kiln_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
#else
// The emulator queues each MMA and runs it at the wait_group that retires
// its group, reading the operands then: a stage refilled before that wait
// gives a wrong product (tests/cuda/emulate_host.h).
inline unsigned kiln_wg_addr(const unsigned short* base, const unsigned short* p) {
  return (unsigned)((p - base) * 2);
}
template <bool BF> inline void kiln_wgmma_m64n128k16(float* d, unsigned long long da,
                                                     unsigned long long db, const unsigned short* base) {
  kiln_emu_wgmma(d, da, db, base, BF, 128);
}
template <bool BF> inline void kiln_wgmma_m64n256k16(float* d, unsigned long long da,
                                                     unsigned long long db, const unsigned short* base) {
  kiln_emu_wgmma(d, da, db, base, BF, 256);
}
template <int N> inline void kiln_wg_pin(float*) {}
inline void kiln_wg_fence() {}
inline void kiln_wg_commit() { kiln_emu_wg_commit(); }
template <int N> inline void kiln_wg_wait() { kiln_emu_wg_wait(N); }
inline void kiln_fence_proxy_async() {}
#endif
// The block's copy of one operand's 128 x 32 slice at k0 (element (r, k) at
// g[r * rs + k]) into the layout above: 512 chunks of 16 bytes, two per
// thread, 8 consecutive threads the 8 rows of one core matrix (128
// consecutive bytes of shared memory). `vec`: cp.async; else word by word.
// Rows r >= rows and k >= kn are zeros (kiln_tc_load).
__device__ __forceinline__ void kiln_wg_load(unsigned short* s, const unsigned short* g, long long rs,
                                             int k0, bool vec, unsigned tid, int rows, int kn) {
  for (unsigned i = 0; i < 2; ++i) {
    const int q = (int)(tid + 256u * i);
    const int r = (q >> 5) * 8 + (q & 7), c = ((q >> 3) & 3) * 8;
    kiln_chunk_copy(s + kiln_wg_index(r, c), g + r * rs + k0 + c, g, 1,
                    r < rows ? kiln_chunk_len(kn, k0 + c, 8) : 0, vec);
  }
}
// The block's 128x128 tile C(row, col) = sum over k < min(32 * ksteps, kn)
// of A[row * ar + k] * B[col * bc + k] (0 for row >= rows or col >= cols),
// added into each thread's 8x8 block cl
// (rows threadIdx.y*8.., columns threadIdx.x*8..), as kiln_gemm_tc: three
// shared stages (A's and B's 128x32 slices, 8 KiB each), the copies of step
// kt + 2 in flight while step kt computes, one barrier per step. Warpgroup w
// (threads 128w..) computes rows 64w.. with two m64n128k16 per step, and
// waits for them before the next step's barrier (the stage they read is the
// one refilled two steps later). Accumulator layout (the PTX ISA's for
// m64nNk16): d[4j + i] of lane l of warp v of the warpgroup is row
// 16v + l/4 (+8 for i >= 2), column 8j + 2(l%4) + (i&1).
// The pipeline and epilogue of the wgmma tile: load(stage, step) fills a
// stage's A (128 rows x 32 k) and B (128 columns x 32 k) in the canonical
// layout above (cp.async or plain stores); the block's thread blocks cl have
// CR x CW of their 8 x 8 outputs (fewer where an output has fewer columns).
template <bool BF, int CR, int CW, typename Load>
__device__ __forceinline__ void kiln_wg_tile(float* cl, unsigned short* smem, int ksteps, Load load) {
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int lane = (int)(tid & 31u), wg = (int)(tid >> 7), warp = (int)((tid >> 5) & 3u);
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  for (int s = 0; s < 2; ++s) {
    if (s < ksteps) load(smem + s * 8192, s);
    kiln_cp_async_commit();
  }
  for (int kt = 0; kt < ksteps; ++kt) {
    kiln_cp_async_wait<1>();   // this thread's copies of step kt have landed
    kiln_fence_proxy_async();  // and are visible to the tensor cores
    __syncthreads();           // everyone's; step kt - 1's stage is free
    if (kt + 2 < ksteps) load(smem + ((kt + 2) % 3) * 8192, kt + 2);
    kiln_cp_async_commit();
    const unsigned short* s = smem + (kt % 3) * 8192;
    const unsigned a0 = kiln_wg_addr(smem, s) + (unsigned)wg * 4096u;
    const unsigned b0 = kiln_wg_addr(smem, s + 4096);
    kiln_wg_pin<64>(acc);
    kiln_wg_fence();
    for (unsigned h = 0; h < 2; ++h) {
      kiln_wgmma_m64n128k16<BF>(acc, kiln_wg_desc(a0 + h * 256u), kiln_wg_desc(b0 + h * 256u), smem);
    }
    kiln_wg_commit();
    kiln_wg_wait<0>();
    kiln_wg_pin<64>(acc);
  }
  kiln_cp_async_wait<0>();
  __syncthreads();
  float* tile = (float*)smem;  // 64 rows of 128 (+4 against bank conflicts)
  for (int p = 0; p < 2; ++p) {
    if (wg == p) {
      for (int j = 0; j < 16; ++j) {
        for (int i = 0; i < 4; ++i) {
          const int row = warp * 16 + (lane >> 2) + (i >= 2 ? 8 : 0);
          const int col = j * 8 + (lane & 3) * 2 + (i & 1);
          tile[row * 132 + col] = acc[j * 4 + i];
        }
      }
    }
    __syncthreads();
    if ((int)(threadIdx.y >> 3) == p) {
      for (int ii = 0; ii < CR; ++ii) {
        for (int jj = 0; jj < CW; ++jj) {
          cl[ii * CW + jj] += tile[((threadIdx.y & 7u) * 8 + ii) * 132 + threadIdx.x * 8 + jj];
        }
      }
    }
    __syncthreads();
  }
}
template <bool BF> __device__ __forceinline__ void kiln_gemm_wg(
    float* cl, const unsigned short* A, long long ar, const unsigned short* B, long long bc,
    int ksteps, int rows, int cols, int kn) {
  __shared__ __align__(128) unsigned short kiln_wg_smem[3 * 8192];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const bool vec = ((unsigned long long)A & 15u) == 0 && ((unsigned long long)B & 15u) == 0 &&
                   (ar & 7) == 0 && (bc & 7) == 0;
  kiln_wg_tile<BF, 8, 8>(cl, kiln_wg_smem, ksteps, [&](unsigned short* s, int step) {
    kiln_wg_load(s, A, ar, step * 32, vec, tid, rows, kn);
    kiln_wg_load(s + 4096, B, bc, step * 32, vec, tid, cols, kn);
  });
}
// The wide wgmma tile (kiln_gemm_wgw, codegen_cuda/tensor_core.h): a block's
// 128 x 256 outputs, each thread's 8 x 16 of them in cl (rows
// threadIdx.y*8.., columns threadIdx.x*16..). Four stages of A's 128 x 64 and
// B's 256 x 64 slices (48 KiB each: dynamic shared memory, 192 KiB in all),
// k-major in one of two canonical layouts (SW):
//   - unswizzled: core matrices of 8 rows x 16 bytes, element (r, k) at
//     word (r/8)*512 + (k/8)*64 + (r%8)*8 + k%8; LBO 128, SBO 1024 bytes;
//   - 128-byte swizzle: row r's 64 k in 128 contiguous bytes, its 16-byte
//     chunk c stored at chunk c ^ (r%8): word (r/8)*512 + (r%8)*64 +
//     ((k/8) ^ (r%8))*8 + k%8; SBO 1024, the 16 of k of MMA h at byte 32h
//     of the row (the swizzle is applied to the address bits, so each stage
//     starts on 1024 bytes).
// Warpgroup w issues four m64n256k16 per step on rows 64w.. and keeps one
// step's group in flight: at step kt it waits for step kt - 1's MMAs
// (wait_group 1), the copies of step kt + 2 go to the stage step kt - 2
// read, which every warpgroup had retired before the step's barrier.
template <bool SW> __device__ __forceinline__ unsigned long long kiln_wgw_desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFFu) >> 4) |
         ((unsigned long long)((SW ? 16 : 128) >> 4) << 16) | ((unsigned long long)(1024 >> 4) << 32) |
         (SW ? 1ull << 62 : 0ull);
}
template <bool SW> __device__ __forceinline__ int kiln_wgw_index(int r, int k) {
  return SW ? (r >> 3) * 512 + (r & 7) * 64 + (((k >> 3) ^ (r & 7)) << 3) + (k & 7)
            : (r >> 3) * 512 + (k >> 3) * 64 + (r & 7) * 8 + (k & 7);
}
// The block's copy of an operand's R x 64 slice at k0 (R/32 chunks of 16
// bytes per thread). Unswizzled: 8 consecutive threads the 8 rows of one
// core matrix (128 consecutive bytes of shared memory); swizzled: the 8
// chunks of one row (128 consecutive bytes of global memory, 8 different
// bank groups).
template <int R, bool SW> __device__ __forceinline__ void kiln_wgw_load(
    unsigned short* s, const unsigned short* g, long long rs, int k0, bool vec, unsigned tid,
    int rows, int kn) {
  for (unsigned i = 0; i < R / 32; ++i) {
    const int q = (int)(tid + 256u * i);
    const int r = SW ? q >> 3 : (q >> 6) * 8 + (q & 7);
    const int c = SW ? (q & 7) * 8 : ((q >> 3) & 7) * 8;
    kiln_chunk_copy(s + kiln_wgw_index<SW>(r, c), g + r * rs + k0 + c, g, 1,
                    r < rows ? kiln_chunk_len(kn, k0 + c, 8) : 0, vec);
  }
}
constexpr int kKilnWgwStage = 24576;  // 16-bit words: A 128 x 64, B 256 x 64
// Warpgroup wg's MMAs of the stage at s: four m64n256k16 on its 64 rows,
// committed as one group.
template <bool BF, bool SW>
__device__ __forceinline__ void kiln_wgw_step(float* acc, unsigned short* smem, const unsigned short* s,
                                              int wg) {
  const unsigned a0 = kiln_wg_addr(smem, s) + (unsigned)wg * 8192u;
  const unsigned b0 = kiln_wg_addr(smem, s + 8192);
  kiln_wg_pin<128>(acc);
  kiln_wg_fence();
  for (unsigned h = 0; h < 4; ++h) {
    const unsigned dk = h * (SW ? 32u : 256u);
    kiln_wgmma_m64n256k16<BF>(acc, kiln_wgw_desc<SW>(a0 + dk), kiln_wgw_desc<SW>(b0 + dk), smem);
  }
  kiln_wg_commit();
}
// The barrier of the block's 256 computing threads: __syncthreads(), or
// with CONSUMERS (a warp-specialized block, whose producer warpgroup has
// returned) named barrier 1 of 256 threads.
template <bool CONSUMERS> __device__ __forceinline__ void kiln_wg_sync() {
#ifdef __CUDA_ARCH__
  if (CONSUMERS) {
    asm volatile("bar.sync 1, 256;" ::: "memory");
  } else {
    __syncthreads();
  }
#else
  if (CONSUMERS) {
    kiln_emu_bar_sync(1, 256);
  } else {
    __syncthreads();
  }
#endif
}
// The accumulators (every MMA retired, the stages no longer read) through
// shared memory into each thread's 8 x 16 block of cl.
template <bool CONSUMERS = false>
__device__ __forceinline__ void kiln_wgw_epilogue(const float* acc, float* cl, unsigned short* smem) {
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int lane = (int)(tid & 31u), wg = (int)(tid >> 7), warp = (int)((tid >> 5) & 3u);
  kiln_wg_sync<CONSUMERS>();
  float* tile = (float*)smem;  // 128 rows of 256 (+4 against bank conflicts)
  for (int j = 0; j < 32; ++j) {
    for (int i = 0; i < 4; ++i) {
      const int row = wg * 64 + warp * 16 + (lane >> 2) + (i >= 2 ? 8 : 0);
      const int col = j * 8 + (lane & 3) * 2 + (i & 1);
      tile[row * 260 + col] = acc[j * 4 + i];
    }
  }
  kiln_wg_sync<CONSUMERS>();
  for (int ii = 0; ii < 8; ++ii) {
    for (int jj = 0; jj < 16; ++jj) {
      cl[ii * 16 + jj] += tile[(threadIdx.y * 8u + ii) * 260 + threadIdx.x * 16u + jj];
    }
  }
  kiln_wg_sync<CONSUMERS>();
}
template <bool BF, bool SW, typename Load>
__device__ __forceinline__ void kiln_wgw_tile(float* cl, unsigned short* smem, int ksteps, Load load) {
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int wg = (int)(tid >> 7);
  float acc[128];
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  for (int s = 0; s < 2; ++s) {
    if (s < ksteps) load(smem + s * kKilnWgwStage, s);
    kiln_cp_async_commit();
  }
  for (int kt = 0; kt < ksteps; ++kt) {
    kiln_cp_async_wait<1>();   // this thread's copies of step kt have landed
    kiln_fence_proxy_async();  // and are visible to the tensor cores
    __syncthreads();           // everyone's; step kt - 2's MMAs retired
    if (kt + 2 < ksteps) load(smem + ((kt + 2) & 3) * kKilnWgwStage, kt + 2);
    kiln_cp_async_commit();
    kiln_wgw_step<BF, SW>(acc, smem, smem + (kt & 3) * kKilnWgwStage, wg);
    kiln_wg_wait<1>();  // step kt - 1's MMAs retired
    kiln_wg_pin<128>(acc);
  }
  kiln_wg_wait<0>();
  kiln_wg_pin<128>(acc);
  kiln_cp_async_wait<0>();
  kiln_wgw_epilogue(acc, cl, smem);
}
// The four stages: the kernel's dynamic shared memory, from its first 1024-
// byte boundary with SW.
template <bool SW> __device__ __forceinline__ unsigned short* kiln_wgw_smem() {
#ifdef __CUDA_ARCH__
  extern __shared__ __align__(128) unsigned short kiln_dyn_smem[];
  unsigned short* smem = kiln_dyn_smem;
  if (SW) smem += ((1024u - (kiln_smem_addr(kiln_dyn_smem) & 1023u)) & 1023u) / 2u;
  return smem;
#else
  static __align__(1024) unsigned short smem[4 * kKilnWgwStage];
  return smem;
#endif
}
// C(row, col) = sum over k < kn of A[row * ar + k] * B[col * bc + k] for the
// block's 128 x 256 tile (rows < rows, cols < cols; zeros past them), added
// into cl. ksteps = ceil(kn / 64). Its shared memory is the kernel's dynamic
// shared memory (kGemmWgwDynamicSharedBytes; 1 KiB more with SW, to start
// the stages on 1024 bytes).
template <bool BF, bool SW> __device__ __forceinline__ void kiln_gemm_wgw(
    float* cl, const unsigned short* A, long long ar, const unsigned short* B, long long bc,
    int ksteps, int rows, int cols, int kn) {
  unsigned short* smem = kiln_wgw_smem<SW>();
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const bool vec = ((unsigned long long)A & 15u) == 0 && ((unsigned long long)B & 15u) == 0 &&
                   (ar & 7) == 0 && (bc & 7) == 0;
  kiln_wgw_tile<BF, SW>(cl, smem, ksteps, [&](unsigned short* s, int step) {
    kiln_wgw_load<128, SW>(s, A, ar, step * 64, vec, tid, rows, kn);
    kiln_wgw_load<256, SW>(s + 8192, B, bc, step * 64, vec, tid, cols, kn);
  });
}
// An NCHW convolution (as kiln_conv_nchw_tc, 16-bit) on warpgroup MMA: both
// operands k-major, the OIHW weights copied as kiln_gemm_wg's A, the image
// gathered element by element straight into the canonical k-major layout
// (patch pixel c as B's column c; each thread one pixel, half the step's k).
template <bool BF, int C, int H, int W, int OC, int KH, int KW, int SH, int SW, int PH, int PW,
          int DH, int DW, int OH, int OW, int OW8>
__device__ __forceinline__ void kiln_conv_nchw_wg(float* cl, const unsigned short* X,
                                                  const unsigned short* Wt, long long n, int oc0,
                                                  int oh0, int ow0) {
  constexpr int K = C * KH * KW;
  __shared__ __align__(128) unsigned short kiln_wg_smem[3 * 8192];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const bool vec = ((unsigned long long)Wt & 15u) == 0 && K % 8 == 0;
  const unsigned short* x = X + n * ((long long)C * H * W);
  const unsigned short* w = Wt + (long long)oc0 * K;
  const int c = (int)(tid & 127u), oh = oh0 + (c >> 3), ow = ow0 + (c & 7);
  const bool pix = oh < OH && ow < OW;
  const int ih0 = oh * SH - PH, iw0 = ow * SW - PW;
  kiln_wg_tile<BF, 8, OW8>(cl, kiln_wg_smem, (K + 31) / 32, [&](unsigned short* s, int step) {
    kiln_wg_load(s, w, K, step * 32, vec, tid, OC - oc0, K);
    for (int i = 0; i < 16; ++i) {
      const int kl = (int)(tid >> 7) + 2 * i;
      s[4096 + kiln_wg_index(c, kl)] =
          kiln_conv_nchw_at<C, H, W, KH, KW, DH, DW>(x, step * 32 + kl, ih0, iw0, pix);
    }
  });
}
#endif
)KILN_WG",
                      WgmmaTmaPrelude());
}

}  // namespace

const std::string& TensorCorePrelude() {
  static const std::string* const kText = new std::string(
      R"KILN_TC(// Tensor cores (codegen_cuda/tensor_core.h): mma.sync m16n8k16 with float32
// accumulation; the fragment layouts of the PTX ISA ("Matrix Fragments for
// mma.m16n8k16 with floating point type"). Host builds run the warp's mma as
// an exchange between its lanes (tests/cuda/emulate_host.h).
#ifdef __CUDA_ARCH__
template <bool BF> __device__ __forceinline__ void kiln_mma_m16n8k16(float* d, const unsigned* a, const unsigned* b) {
  if (BF) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}
#else
template <bool BF> inline void kiln_mma_m16n8k16(float* d, const unsigned* a, const unsigned* b) {
  kiln_emu_mma_m16n8k16(d, a, b, BF);
}
#endif
__device__ __forceinline__ void kiln_mma_zero(float* acc) {
  for (int i = 0; i < 16; ++i) acc[i] = 0.0f;
}
// A 16x16-thread block's 64x64x16 tile product: warp w takes rows (w/2)*16
// and columns (w%2)*32 (four m16n8k16). A(row, k) = A[ao + row*ar + k*ak],
// B(k, col) = B[bo + col*bn + k*bk] (16-bit words in shared memory).
template <bool BF> __device__ __forceinline__ void kiln_mma_block(
    float* acc, const unsigned short* A, long long ao, long long ar, long long ak,
    const unsigned short* B, long long bo, long long bn, long long bk) {
  const unsigned tid = threadIdx.y * 16u + threadIdx.x, lane = tid & 31u, warp = tid >> 5;
  const long long g = lane >> 2, t = lane & 3u;
  const long long r0 = (long long)(warp >> 1) * 16, c0 = (long long)(warp & 1u) * 32;
  unsigned a[4];
  for (int i = 0; i < 4; ++i) {
    unsigned v = 0;
    for (int h = 0; h < 2; ++h) {
      const int e = 2 * i + h;
      const long long row = r0 + g + ((e & 2) ? 8 : 0), k = t * 2 + (e & 1) + ((e & 4) ? 8 : 0);
      v |= (unsigned)A[ao + row * ar + k * ak] << (16 * h);
    }
    a[i] = v;
  }
  for (int nt = 0; nt < 4; ++nt) {
    unsigned b[2];
    for (int i = 0; i < 2; ++i) {
      unsigned v = 0;
      for (int h = 0; h < 2; ++h) {
        const int e = 2 * i + h;
        const long long k = t * 2 + (e & 1) + ((e & 2) ? 8 : 0), col = c0 + nt * 8 + g;
        v |= (unsigned)B[bo + col * bn + k * bk] << (16 * h);
      }
      b[i] = v;
    }
    kiln_mma_m16n8k16<BF>(acc + nt * 4, a, b);
  }
}
// The warps' accumulators into the block's 64x64 tile, then each thread's
// 4x4 block (rows threadIdx.y*4.., columns threadIdx.x*4..) added into cl.
__device__ __forceinline__ void kiln_mma_finish(const float* acc, float* cl) {
  __shared__ float kiln_mma_tile[64 * 64];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x, lane = tid & 31u, warp = tid >> 5;
  const long long g = lane >> 2, t = lane & 3u;
  const long long r0 = (long long)(warp >> 1) * 16, c0 = (long long)(warp & 1u) * 32;
  __syncthreads();
  for (int nt = 0; nt < 4; ++nt) {
    for (int i = 0; i < 4; ++i) {
      const long long row = r0 + g + (i >= 2 ? 8 : 0), col = c0 + nt * 8 + t * 2 + (i & 1);
      kiln_mma_tile[row * 64 + col] = acc[nt * 4 + i];
    }
  }
  __syncthreads();
  for (int ii = 0; ii < 4; ++ii) {
    for (int jj = 0; jj < 4; ++jj) {
      cl[ii * 4 + jj] += kiln_mma_tile[(threadIdx.y * 4 + ii) * 64 + threadIdx.x * 4 + jj];
    }
  }
  __syncthreads();
}
// The 128x128 GEMM tile of a 16x16-thread block on tensor cores
// (kiln_gemm_tc, codegen_cuda/tensor_core.h): cp.async copies of global
// memory into shared (16 bytes each, skipping the registers), ldmatrix loads
// of the mma fragments from shared.
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned kiln_smem_addr(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
__device__ __forceinline__ void kiln_cp_async16(void* s, const void* g) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(kiln_smem_addr(s)), "l"(g) : "memory");
}
// 16 bytes into shared memory of which the first `bytes` (0 to 16) come from
// g and the rest are zeros (a ragged tile's edge).
__device__ __forceinline__ void kiln_cp_async16_zfill(void* s, const void* g, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
               :: "r"(kiln_smem_addr(s)), "l"(g), "r"(bytes) : "memory");
}
__device__ __forceinline__ void kiln_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void kiln_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}
template <bool T> __device__ __forceinline__ void kiln_ldmatrix_x4(unsigned* r, const unsigned short* p) {
  if (T) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(kiln_smem_addr(p)));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(kiln_smem_addr(p)));
  }
}
#else
inline void kiln_cp_async16(void* s, const void* g) { __builtin_memcpy(s, g, 16); }
inline void kiln_cp_async16_zfill(void* s, const void* g, int bytes) {
  __builtin_memcpy(s, g, (unsigned long)bytes);
  __builtin_memset((char*)s + bytes, 0, (unsigned long)(16 - bytes));
}
inline void kiln_cp_async_commit() {}
template <int N> inline void kiln_cp_async_wait() {}
template <bool T> inline void kiln_ldmatrix_x4(unsigned* r, const unsigned short* p) {
  kiln_emu_ldmatrix_x4(r, p, T);
}
#endif
// A stage's two shared tiles, 4096 16-bit words each, hold 128 rows (of A or
// of B's columns) x 32 k in one of two layouts, both in 16-byte chunks of 8
// consecutive words whose position in their row is XOR-swizzled so that the
// 8 row addresses of an ldmatrix fall in 8 different bank groups:
//   k-major  [128][32]: element (r, k) (the operand's k stride is 1);
//   mn-major [32][128]: element (k, r) (its row / column stride is 1).
__device__ __forceinline__ int kiln_tc_kmajor(int r, int k) {
  return r * 32 + ((((k >> 3) ^ (r >> 1)) & 3) << 3) + (k & 7);
}
__device__ __forceinline__ int kiln_tc_mnmajor(int k, int r) {
  return k * 128 + (((r >> 3) ^ (k & 7)) << 3) + (r & 7);
}
// The block's copy of one operand's slice at k0 (element (r, k) at
// g[r * rs + k * ks]) into a stage tile: 128 rows x 32 k of 16-bit words or
// 128 x 16 of floats (TF32), 512 chunks of 16 bytes either way, two per
// thread, consecutive threads consecutive chunks of a row. `vec`: 16-byte
// cp.async copies (aligned pointer and strides); else word by word. Elements
// of rows r >= rows or of k >= kn are zeros, not read (a ragged tile).
// The number of a chunk's leading elements that exist: n of E.
__device__ __forceinline__ int kiln_chunk_len(int limit, int start, int E) {
  const int n = limit - start;
  return n < 0 ? 0 : (n > E ? E : n);
}
// Copies a chunk of E elements (the first n real, step apart in g).
template <typename T> __device__ __forceinline__ void kiln_chunk_copy(
    T* d, const T* p, const T* any, long long step, int n, bool vec) {
  constexpr int E = 16 / (int)sizeof(T);
  if (vec) {
    if (n == E) {
      kiln_cp_async16(d, p);
    } else {
      kiln_cp_async16_zfill(d, n > 0 ? p : any, n * (int)sizeof(T));
    }
  } else {
    for (int e = 0; e < E; ++e) d[e] = e < n ? p[e * step] : (T)0;
  }
}
__device__ __forceinline__ int kiln_tile_kmajor(const unsigned short*, int r, int k) {
  return kiln_tc_kmajor(r, k);
}
__device__ __forceinline__ int kiln_tile_mnmajor(const unsigned short*, int k, int r) {
  return kiln_tc_mnmajor(k, r);
}
__device__ __forceinline__ int kiln_tile_kmajor(const float*, int r, int k);
__device__ __forceinline__ int kiln_tile_mnmajor(const float*, int k, int r);
template <bool K, typename T> __device__ __forceinline__ void kiln_tc_load(
    T* s, const T* g, long long rs, long long ks, int k0, bool vec, unsigned tid, int rows,
    int kn) {
  constexpr int E = 16 / (int)sizeof(T), R = 128 / E;  // elements per chunk, chunks per mn row
  for (unsigned i = 0; i < 2; ++i) {
    const int q = (int)(tid + 256u * i);
    if (K) {
      const int r = q >> 2, c = (q & 3) * E;
      kiln_chunk_copy(s + kiln_tile_kmajor(s, r, c), g + r * rs + (long long)(k0 + c) * ks, g,
                      ks, r < rows ? kiln_chunk_len(kn, k0 + c, E) : 0, vec);
    } else {
      const int k = q / R, c = (q % R) * E;
      kiln_chunk_copy(s + kiln_tile_mnmajor(s, k, c), g + (long long)c * rs + (long long)(k0 + k) * ks,
                      g, rs, k0 + k < kn ? kiln_chunk_len(rows, c, E) : 0, vec);
    }
  }
}
// One stage's 128x128x32 product: warp w takes rows (w/4)*64.. and columns
// (w%4)*32.. (4 x 4 m16n8k16 per 16 of k); its A fragments by ldmatrix.x4
// (.trans from an mn-major tile), its B fragments two n8 tiles per x4.
template <bool BF, bool AK, bool BK> __device__ __forceinline__ void kiln_tc_compute(
    float* acc, const unsigned short* As, const unsigned short* Bs, int lane, int wm, int wn) {
  for (int kk = 0; kk < 32; kk += 16) {
    unsigned a[4][4], b[4][2];
    for (int mt = 0; mt < 4; ++mt) {
      const int m0 = wm * 64 + mt * 16;
      if (AK) {
        kiln_ldmatrix_x4<false>(a[mt], As + kiln_tc_kmajor(m0 + (lane & 7) + ((lane >> 3) & 1) * 8,
                                                           kk + (lane >> 4) * 8));
      } else {
        kiln_ldmatrix_x4<true>(a[mt], As + kiln_tc_mnmajor(kk + (lane & 7) + (lane >> 4) * 8,
                                                           m0 + ((lane >> 3) & 1) * 8));
      }
    }
    for (int np = 0; np < 2; ++np) {
      const int n0 = wn * 32 + np * 16;
      unsigned r[4];
      if (BK) {
        kiln_ldmatrix_x4<false>(r, Bs + kiln_tc_kmajor(n0 + (lane & 7) + (lane >> 4) * 8,
                                                       kk + ((lane >> 3) & 1) * 8));
      } else {
        kiln_ldmatrix_x4<true>(r, Bs + kiln_tc_mnmajor(kk + (lane & 7) + ((lane >> 3) & 1) * 8,
                                                       n0 + (lane >> 4) * 8));
      }
      b[2 * np][0] = r[0];
      b[2 * np][1] = r[1];
      b[2 * np + 1][0] = r[2];
      b[2 * np + 1][1] = r[3];
    }
    for (int mt = 0; mt < 4; ++mt) {
      for (int nt = 0; nt < 4; ++nt) kiln_mma_m16n8k16<BF>(acc + (mt * 4 + nt) * 4, a[mt], b[nt]);
    }
  }
}
// The 8 warps' accumulators (warp (wm, wn): rows wm*64.., columns wn*32..,
// 4 x 4 m16n8 tiles) added into each thread's 8x8 block cl (rows
// threadIdx.y*8.., columns threadIdx.x*8..) through shared memory `tile`
// (64 rows of 128 floats + 4 against bank conflicts: the operand stages
// reused, after the block's last barrier), 64 rows at a time.
// A thread block cl of fewer than 8 x 8 (CR rows of CW: a conv whose output
// has fewer than 8 columns) takes only its part.
template <int CR = 8, int CW = 8>
__device__ __forceinline__ void kiln_tc_store(const float* acc, float* cl, float* tile, int lane,
                                              int wm, int wn) {
  for (int p = 0; p < 2; ++p) {
    if (wm == p) {
      for (int mt = 0; mt < 4; ++mt) {
        for (int nt = 0; nt < 4; ++nt) {
          for (int i = 0; i < 4; ++i) {
            const int row = mt * 16 + (lane >> 2) + (i >= 2 ? 8 : 0);
            const int col = wn * 32 + nt * 8 + (lane & 3) * 2 + (i & 1);
            tile[row * 132 + col] = acc[(mt * 4 + nt) * 4 + i];
          }
        }
      }
    }
    __syncthreads();
    if ((int)(threadIdx.y >> 3) == p) {
      for (int ii = 0; ii < CR; ++ii) {
        for (int jj = 0; jj < CW; ++jj) {
          cl[ii * CW + jj] += tile[((threadIdx.y & 7u) * 8 + ii) * 132 + threadIdx.x * 8 + jj];
        }
      }
    }
    __syncthreads();
  }
}
// The three shared stages the 128x128 tiles share: load(stage, step) fills
// a stage with step `step`'s slices of A and B (cp.async copies, or plain
// shared stores), compute(stage) multiplies one. The copies of step kt + 2
// are in flight while step kt computes; one barrier per step (everyone's
// copies of step kt have landed, and step kt - 1's stage, the one refilled,
// is no longer read). Returns after a last barrier, the stages free.
template <typename T, int STAGE, typename Load, typename Compute>
__device__ __forceinline__ void kiln_tc_stages(T* smem, int ksteps, Load load, Compute compute) {
  for (int s = 0; s < 2; ++s) {
    if (s < ksteps) load(smem + s * STAGE, s);
    kiln_cp_async_commit();
  }
  for (int kt = 0; kt < ksteps; ++kt) {
    kiln_cp_async_wait<1>();  // this thread's copies of step kt have landed
    __syncthreads();          // everyone's; and step kt - 1's stage is free
    if (kt + 2 < ksteps) load(smem + ((kt + 2) % 3) * STAGE, kt + 2);
    kiln_cp_async_commit();
    compute(smem + (kt % 3) * STAGE);
  }
  kiln_cp_async_wait<0>();
  __syncthreads();
}
// TF32 (float32 GEMMs of a target with -tf32): the same 128x128 tile with
// mma.sync m16n8k8 .tf32 (float32 accumulation) on 32-bit shared tiles of
// 128 x 16 (three stages of 8 KiB per operand, 48 KiB), each element rounded
// to TF32 (cvt.rna: to nearest, ties away from zero, 10 mantissa bits) as
// its fragment is loaded. Fragments by plain 32-bit shared loads (no
// ldmatrix); the A fragment of m16n8k8 is (row g, k t), (g + 8, t),
// (g, t + 4), (g + 8, t + 4) and B's (k t, column g), (t + 4, g), g = lane/4,
// t = lane%4 (PTX ISA, "Matrix Fragments for mma.m16n8k8", .tf32).
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned kiln_tf32(float f) {
  unsigned u;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(f));
  return u;
}
__device__ __forceinline__ void kiln_mma_m16n8k8_tf32(float* d, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#else
inline unsigned kiln_tf32(float f) {
  unsigned u;
  __builtin_memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;  // Inf and NaN as they are
  return u;
}
inline void kiln_mma_m16n8k8_tf32(float* d, const unsigned* a, const unsigned* b) {
  kiln_emu_mma_m16n8k8_tf32(d, a, b);
}
#endif
// 128 x 16 float tiles in 16-byte chunks of 4, XOR-swizzled so that the 32
// lanes of a fragment load hit 32 different banks:
//   k-major  [128][16]: element (r, k);
//   mn-major [16][128]: element (k, r).
__device__ __forceinline__ int kiln_tf32_kmajor(int r, int k) {
  return r * 16 + ((((k >> 2) ^ (r >> 1)) & 3) << 2) + (k & 3);
}
__device__ __forceinline__ int kiln_tf32_mnmajor(int k, int r) {
  return k * 128 + (((r >> 2) ^ ((k & 3) << 1)) << 2) + (r & 3);
}
__device__ __forceinline__ int kiln_tile_kmajor(const float*, int r, int k) {
  return kiln_tf32_kmajor(r, k);
}
__device__ __forceinline__ int kiln_tile_mnmajor(const float*, int k, int r) {
  return kiln_tf32_mnmajor(k, r);
}
template <bool AK, bool BK> __device__ __forceinline__ float kiln_tf32_a(const float* As, int m, int k) {
  return AK ? As[kiln_tf32_kmajor(m, k)] : As[kiln_tf32_mnmajor(k, m)];
}
template <bool AK, bool BK> __device__ __forceinline__ float kiln_tf32_b(const float* Bs, int n, int k) {
  return BK ? Bs[kiln_tf32_kmajor(n, k)] : Bs[kiln_tf32_mnmajor(k, n)];
}
// One stage's 128x128x16 product in TF32 (the warps as kiln_tc_compute's):
// fragments by 32-bit shared loads, rounded by cvt.rna.tf32.f32.
template <bool AK, bool BK> __device__ __forceinline__ void kiln_tf32_compute(
    float* acc, const float* As, const float* Bs, int lane, int wm, int wn) {
  const int g = lane >> 2, t = lane & 3;
  for (int kk = 0; kk < 16; kk += 8) {
    unsigned a[4][4], b[4][2];
    for (int mt = 0; mt < 4; ++mt) {
      const int m = wm * 64 + mt * 16 + g;
      a[mt][0] = kiln_tf32(kiln_tf32_a<AK, BK>(As, m, kk + t));
      a[mt][1] = kiln_tf32(kiln_tf32_a<AK, BK>(As, m + 8, kk + t));
      a[mt][2] = kiln_tf32(kiln_tf32_a<AK, BK>(As, m, kk + t + 4));
      a[mt][3] = kiln_tf32(kiln_tf32_a<AK, BK>(As, m + 8, kk + t + 4));
    }
    for (int nt = 0; nt < 4; ++nt) {
      const int n = wn * 32 + nt * 8 + g;
      b[nt][0] = kiln_tf32(kiln_tf32_b<AK, BK>(Bs, n, kk + t));
      b[nt][1] = kiln_tf32(kiln_tf32_b<AK, BK>(Bs, n, kk + t + 4));
    }
    for (int mt = 0; mt < 4; ++mt) {
      for (int nt = 0; nt < 4; ++nt) kiln_mma_m16n8k8_tf32(acc + (mt * 4 + nt) * 4, a[mt], b[nt]);
    }
  }
}
// Implicit-GEMM convolutions on the 128x128 tile (kiln_conv_*_tc,
// codegen_cuda/tensor_core.h): the image operand is gathered from the data
// (im2col, never materialized) into the stages, zeros for the padding, for
// pixels past the output's edge and for k past K; the weights are a plain
// operand. T: unsigned short (float16/bfloat16 words, BF for bfloat16;
// mma.sync m16n8k16, 32 k per step) or float (TF32: m16n8k8, 16 k per
// step). The block's 128 pixels are a patch of 16 output rows x 8 columns
// from (oh0, ow0): patch pixel c is (oh0 + c / 8, ow0 + c % 8). The
// geometry is compile-time: C input channels of H x W, OC output channels,
// KH x KW kernels, strides SH, SW, top/left padding PH, PW, dilation DH,
// DW, an OH x OW output; the thread's block cl has 8 x 8 outputs, or OW8 =
// OW of a row of fewer than 8.
// Element (k, pixel) of an NCHW image's im2col operand: k = (ic, kh, kw),
// the pixel's window at (ih0, iw0) (its row and column times the strides,
// less the padding); 0 in the padding, past K, or for a pixel (pix false)
// past the output's edge.
template <int C, int H, int W, int KH, int KW, int DH, int DW, typename T>
__device__ __forceinline__ T kiln_conv_nchw_at(const T* x, int k, int ih0, int iw0, bool pix) {
  if (!pix || k >= C * KH * KW) return (T)0;
  const int ic = k / (KH * KW), r = k % (KH * KW);
  const int ih = ih0 + (r / KW) * DH, iw = iw0 + (r % KW) * DW;
  if (ih < 0 || ih >= H || iw < 0 || iw >= W) return (T)0;
  return x[((long long)ic * H + ih) * W + iw];
}
template <bool BF, bool AK, bool BK> __device__ __forceinline__ void kiln_tile_mma(
    float* acc, const unsigned short* s, int lane, int wm, int wn) {
  kiln_tc_compute<BF, AK, BK>(acc, s, s + 4096, lane, wm, wn);
}
template <bool BF, bool AK, bool BK> __device__ __forceinline__ void kiln_tile_mma(
    float* acc, const float* s, int lane, int wm, int wn) {
  kiln_tf32_compute<AK, BK>(acc, s, s + 2048, lane, wm, wn);
}
// The block's 128x128 tile C(row, col) = sum over k < min(KS * ksteps, kn)
// of A(row, k) * B(k, col), A(row, k) = A[row * ar + k * ak] and B(k, col) =
// B[col * bc + k * bk] (AK: ak == 1, else ar == 1; BK: bk == 1, else bc == 1),
// 0 for row >= rows or col >= cols (nothing read there), added into each
// thread's 8x8 block cl (rows threadIdx.y*8.., columns threadIdx.x*8..).
// Three stages of shared tiles (kiln_tc_stages; 16-byte copies when the
// pointers and the strides that are not 1 allow). The float32 accumulators
// stay in registers to the end, then go through shared memory (reusing the
// stages), 64 rows at a time, into the threads' blocks. kiln_gemm_tc: 16-bit
// operands (BF: bfloat16); kiln_gemm_tf32: float32 ones in TF32.
template <typename T, bool BF, bool AK, bool BK> __device__ __forceinline__ void kiln_gemm_tile(
    float* cl, const T* A, long long ar, long long ak, const T* B, long long bc, long long bk,
    int ksteps, int rows, int cols, int kn) {
  constexpr int KS = sizeof(T) == 2 ? 32 : 16, E = 16 / (int)sizeof(T);
  __shared__ __align__(16) T kiln_tc_smem[3 * 256 * KS];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int lane = (int)(tid & 31u), wm = (int)(tid >> 7), wn = (int)((tid >> 5) & 3u);
  const bool vec = ((unsigned long long)A & 15u) == 0 && ((unsigned long long)B & 15u) == 0 &&
                   (AK ? ar : ak) % E == 0 && (BK ? bc : bk) % E == 0;
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  kiln_tc_stages<T, 256 * KS>(
      kiln_tc_smem, ksteps,
      [&](T* s, int step) {
        kiln_tc_load<AK>(s, A, ar, ak, step * KS, vec, tid, rows, kn);
        kiln_tc_load<BK>(s + 128 * KS, B, bc, bk, step * KS, vec, tid, cols, kn);
      },
      [&](const T* s) { kiln_tile_mma<BF, AK, BK>(acc, s, lane, wm, wn); });
  kiln_tc_store(acc, cl, (float*)kiln_tc_smem, lane, wm, wn);
}
template <bool BF, bool AK, bool BK> __device__ __forceinline__ void kiln_gemm_tc(
    float* cl, const unsigned short* A, long long ar, long long ak, const unsigned short* B,
    long long bc, long long bk, int ksteps, int rows, int cols, int kn) {
  kiln_gemm_tile<unsigned short, BF, AK, BK>(cl, A, ar, ak, B, bc, bk, ksteps, rows, cols, kn);
}
template <bool AK, bool BK> __device__ __forceinline__ void kiln_gemm_tf32(
    float* cl, const float* A, long long ar, long long ak, const float* B, long long bc,
    long long bk, int ksteps, int rows, int cols, int kn) {
  kiln_gemm_tile<float, false, AK, BK>(cl, A, ar, ak, B, bc, bk, ksteps, rows, cols, kn);
}
//
// NCHW (OIHW weights): rows are output channels oc0.., A = W[oc][k] with
// k = (ic, kh, kw) (k-major); columns are the patch, B(k, c) gathered from
// image n element by element into the mn-major tile: each thread keeps one
// pixel (c = tid % 128) and fills half the step's k.
template <typename T, bool BF, int C, int H, int W, int OC, int KH, int KW, int SH, int SW, int PH,
          int PW, int DH, int DW, int OH, int OW, int OW8>
__device__ __forceinline__ void kiln_conv_nchw_tc(float* cl, const T* X, const T* Wt, long long n,
                                                  int oc0, int oh0, int ow0) {
  constexpr int K = C * KH * KW, KS = sizeof(T) == 2 ? 32 : 16, E = 16 / (int)sizeof(T);
  __shared__ __align__(16) T kiln_tc_smem[3 * 256 * KS];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int lane = (int)(tid & 31u), wm = (int)(tid >> 7), wn = (int)((tid >> 5) & 3u);
  const bool vec = ((unsigned long long)Wt & 15u) == 0 && K % E == 0;
  const T* x = X + n * ((long long)C * H * W);
  const T* w = Wt + (long long)oc0 * K;
  const int c = (int)(tid & 127u), oh = oh0 + (c >> 3), ow = ow0 + (c & 7);
  const bool pix = oh < OH && ow < OW;
  const int ih0 = oh * SH - PH, iw0 = ow * SW - PW;
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  kiln_tc_stages<T, 256 * KS>(
      kiln_tc_smem, (K + KS - 1) / KS,
      [&](T* s, int step) {
        kiln_tc_load<true>(s, w, K, 1, step * KS, vec, tid, OC - oc0, K);
        T* bs = s + 128 * KS;
        for (int i = 0; i < KS / 2; ++i) {
          const int kl = (int)(tid >> 7) + 2 * i, k = step * KS + kl;
          bs[kiln_tile_mnmajor(bs, kl, c)] = kiln_conv_nchw_at<C, H, W, KH, KW, DH, DW>(x, k, ih0, iw0, pix);
        }
      },
      [&](const T* s) { kiln_tile_mma<BF, true, false>(acc, s, lane, wm, wn); });
  kiln_tc_store<8, OW8>(acc, cl, (float*)kiln_tc_smem, lane, wm, wn);
}
// NHWC: rows are the patch, A(c, k) with k = (kh, kw, ic) gathered from
// image n into the k-major tile, a 16-byte chunk of channels of one (kh,
// kw) at a time (cp.async, zero-filled for the padding) when C is a
// multiple of the chunk, else element by element; each thread keeps two
// pixels (tid / 4 and that + 64). Columns are output channels oc0..: HWIO
// weights W[k][oc] (n-major) or, WK, OHWI ones W[oc][k] (k-major).
template <typename T, bool BF, bool WK, int C, int H, int W, int OC, int KH, int KW, int SH, int SW,
          int PH, int PW, int DH, int DW, int OH, int OW, int OW8>
__device__ __forceinline__ void kiln_conv_nhwc_tc(float* cl, const T* X, const T* Wt, long long n,
                                                  int oc0, int oh0, int ow0) {
  constexpr int K = KH * KW * C, KS = sizeof(T) == 2 ? 32 : 16, E = 16 / (int)sizeof(T);
  __shared__ __align__(16) T kiln_tc_smem[3 * 256 * KS];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int lane = (int)(tid & 31u), wm = (int)(tid >> 7), wn = (int)((tid >> 5) & 3u);
  const T* x = X + n * ((long long)H * W * C);
  const bool xvec = C % E == 0 && ((unsigned long long)X & 15u) == 0;
  const bool wvec = ((unsigned long long)Wt & 15u) == 0 && (WK ? K : OC) % E == 0;
  const int kc = (int)(tid & 3u) * E;
  int ih0[2], iw0[2];
  bool pix[2];
  for (int i = 0; i < 2; ++i) {
    const int r = (int)(tid >> 2) + 64 * i, oh = oh0 + (r >> 3), ow = ow0 + (r & 7);
    pix[i] = oh < OH && ow < OW;
    ih0[i] = oh * SH - PH;
    iw0[i] = ow * SW - PW;
  }
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  kiln_tc_stages<T, 256 * KS>(
      kiln_tc_smem, (K + KS - 1) / KS,
      [&](T* s, int step) {
        for (int i = 0; i < 2; ++i) {
          T* d = s + kiln_tile_kmajor(s, (int)(tid >> 2) + 64 * i, kc);
          const int k = step * KS + kc;
          if (C % E == 0) {
            int len = 0;
            const T* p = x;
            if (pix[i] && k < K) {
              const int t = k / C, ih = ih0[i] + (t / KW) * DH, iw = iw0[i] + (t % KW) * DW;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
                len = E;
                p = x + ((long long)ih * W + iw) * C + k % C;
              }
            }
            kiln_chunk_copy(d, p, x, 1, len, xvec);
          } else {
            for (int e = 0; e < E; ++e) {
              T v = 0;
              if (pix[i] && k + e < K) {
                const int t = (k + e) / C, ih = ih0[i] + (t / KW) * DH, iw = iw0[i] + (t % KW) * DW;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
                  v = x[((long long)ih * W + iw) * C + (k + e) % C];
                }
              }
              d[e] = v;
            }
          }
        }
        if (WK) {
          kiln_tc_load<true>(s + 128 * KS, Wt + (long long)oc0 * K, K, 1, step * KS, wvec, tid,
                             OC - oc0, K);
        } else {
          kiln_tc_load<false>(s + 128 * KS, Wt + oc0, 1, OC, step * KS, wvec, tid, OC - oc0, K);
        }
      },
      [&](const T* s) { kiln_tile_mma<BF, true, WK>(acc, s, lane, wm, wn); });
  kiln_tc_store<OW8, 8>(acc, cl, (float*)kiln_tc_smem, lane, wm, wn);
}
)KILN_TC" + WgmmaPrelude());
  return *kText;
}

}  // namespace kiln::codegen_cuda
