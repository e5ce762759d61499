// File: codegen_cuda/tensor_core_tma.cc — the wide wgmma tile with stages
// the Tensor Memory Accelerator fills (kiln_gemm_wgt, codegen_cuda/
// tensor_core.h): the mbarrier and cp.async.bulk.tensor wrappers and the
// tile, part of TensorCorePrelude().
#include <string>

#include "codegen_cuda/tensor_core.h"

namespace kiln::codegen_cuda {

std::string WgmmaTmaPrelude() {
  return R"KILN_WGT(// A CUtensorMap (the driver's 128 opaque bytes, 64-byte aligned): the
// runtime encodes one per tensor-map parameter at launch (DEVICE_CODE
// version 4), passed by value as `const __grid_constant__ kiln_tmap`.
struct __align__(64) kiln_tmap { unsigned long long w[16]; };
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#ifdef __CUDA_ARCH__
__device__ __forceinline__ void kiln_mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(kiln_smem_addr(bar)), "r"(count) : "memory");
}
// The barriers' initialization visible to the other threads and to the
// copies' complete_tx (the async proxy).
__device__ __forceinline__ void kiln_mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// This thread's arrival, which also makes the phase wait for `bytes` more
// of the copies' transactions.
__device__ __forceinline__ void kiln_mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
               :: "r"(kiln_smem_addr(bar)), "r"(bytes) : "memory");
}
// This thread's arrival (release: its earlier writes are seen by a thread
// whose wait the phase completes).
__device__ __forceinline__ void kiln_mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(kiln_smem_addr(bar)) : "memory");
}
// Waits until the barrier's phase of parity `parity` has completed.
__device__ __forceinline__ void kiln_mbar_wait(unsigned long long* bar, unsigned parity) {
  const unsigned a = kiln_smem_addr(bar);
  unsigned done = 0;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(a), "r"(parity) : "memory");
  } while (!done);
}
// The box of `map` at coordinates (c0, c1), innermost first, into shared
// memory at dst (its layout the map's swizzle), its bytes completing on bar.
__device__ __forceinline__ void kiln_tma_load_2d(void* dst, const kiln_tmap* map, int c0, int c1,
                                                 unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      :: "r"(kiln_smem_addr(dst)), "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(kiln_smem_addr(bar))
      : "memory");
}
#else
// The emulator (tests/cuda/emulate_host.h) completes a copy when it is
// issued, reading the fake driver's map (tests/cuda/fake_tensor_map.h); a
// wait on a phase that has not completed suspends the thread until another
// completes it (none could: the launch fails, where a GPU would hang).
inline void kiln_mbar_init(unsigned long long* bar, unsigned count) { kiln_emu_mbar_init(bar, count); }
inline void kiln_mbar_init_fence() {}
inline void kiln_mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  kiln_emu_mbar_arrive_expect_tx(bar, bytes);
}
inline void kiln_mbar_arrive(unsigned long long* bar) { kiln_emu_mbar_arrive(bar); }
inline void kiln_mbar_wait(unsigned long long* bar, unsigned parity) { kiln_emu_mbar_wait(bar, parity); }
inline void kiln_tma_load_2d(void* dst, const kiln_tmap* map, int c0, int c1, unsigned long long* bar) {
  kiln_emu_tma_load_2d(dst, map->w, c0, c1, bar);
}
#endif
// kiln_gemm_wgw's tile (128 x 256 per block, the 128-byte swizzled stages,
// four m64n256k16 per warpgroup and step, one step's group in flight) with
// its stages filled by TMA: thread 0 issues a step's two boxes (A's rows
// ra.. and B's rows rb.., 64 of k at step * 64) on the stage's mbarrier,
// which expects their 48 KiB; three steps are in flight. At step kt every
// thread waits for the stage's phase, issues its MMAs and retires step kt -
// 1's (wait_group 1); after the step's barrier no warpgroup reads step kt -
// 1's stage, which thread 0 then refills with step kt + 3. The maps' bounds
// give zeros for k >= kn (and rows past the buffer); the rows and columns
// past `rows` and `cols` only reach outputs the caller does not store. A
// base that is not a whole row (the maps' coordinates are rows) runs
// kiln_gemm_wgw instead.
template <bool BF> __device__ __forceinline__ void kiln_gemm_wgt(
    float* cl, const kiln_tmap* ta, const kiln_tmap* tb, const unsigned short* A, long long a_base,
    long long ar, const unsigned short* B, long long b_base, long long bc, int ksteps, int rows,
    int cols, int kn) {
  if (a_base % ar != 0 || b_base % bc != 0 || a_base / ar > 2147483647LL ||
      b_base / bc > 2147483647LL) {
    kiln_gemm_wgw<BF, true>(cl, A + a_base, ar, B + b_base, bc, ksteps, rows, cols, kn);
    return;
  }
  unsigned short* smem = kiln_wgw_smem<true>();
  __shared__ __align__(8) unsigned long long kiln_wgt_bar[4];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int wg = (int)(tid >> 7);
  const int ra = (int)(a_base / ar), rb = (int)(b_base / bc);
  if (tid == 0) {
    for (int s = 0; s < 4; ++s) kiln_mbar_init(&kiln_wgt_bar[s], 1);
    kiln_mbar_init_fence();
  }
  __syncthreads();
  auto issue = [&](int step) {
    unsigned short* s = smem + (step & 3) * kKilnWgwStage;
    unsigned long long* bar = &kiln_wgt_bar[step & 3];
    kiln_mbar_arrive_expect_tx(bar, 2u * kKilnWgwStage);
    kiln_tma_load_2d(s, ta, step * 64, ra, bar);
    kiln_tma_load_2d(s + 8192, tb, step * 64, rb, bar);
  };
  if (tid == 0) {
    for (int s = 0; s < 3 && s < ksteps; ++s) issue(s);
  }
  float acc[128];
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  for (int kt = 0; kt < ksteps; ++kt) {
    kiln_mbar_wait(&kiln_wgt_bar[kt & 3], (unsigned)(kt >> 2) & 1u);
    kiln_wgw_step<BF, true>(acc, smem, smem + (kt & 3) * kKilnWgwStage, wg);
    kiln_wg_wait<1>();  // step kt - 1's MMAs retired
    kiln_wg_pin<128>(acc);
    __syncthreads();    // everyone's: step kt - 1's stage is free
    if (tid == 0 && kt + 3 < ksteps) issue(kt + 3);
  }
  kiln_wg_wait<0>();
  kiln_wg_pin<128>(acc);
  kiln_wgw_epilogue(acc, cl, smem);
}
// The warp-specialized form (kiln_gemm_wgs, codegen_cuda/tensor_core.h): a
// block of 16 x 24 threads, the third warpgroup (y >= 16) the producer.
// Its shared state: each stage's "full" barrier (the producer's arrival
// and the copies' 48 KiB) and "empty" one (the 8 computing warps' arrivals
// once their MMAs that read it retired), and the job the computing threads
// post (the first rows of A and B, the steps) on `job`.
struct kiln_wgs_state {
  unsigned long long full[4], empty[4], job;
  int ra, rb, ksteps;
};
__device__ __forceinline__ kiln_wgs_state* kiln_wgs() {
  __shared__ __align__(8) kiln_wgs_state kiln_wgs_shared;
  return &kiln_wgs_shared;
}
// Every thread of the block, first: thread 0 initializes the barriers.
__device__ __forceinline__ void kiln_wgs_init() {
  kiln_wgs_state* st = kiln_wgs();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    for (int s = 0; s < 4; ++s) {
      kiln_mbar_init(&st->full[s], 1);
      kiln_mbar_init(&st->empty[s], 8);
    }
    kiln_mbar_init(&st->job, 1);
    kiln_mbar_init_fence();
  }
  __syncthreads();
}
// The producer warpgroup: one thread waits for the job, then issues every
// step's two boxes into stage step % 4 once the computing warps released
// that stage's previous step (steps 4 on). The others return at once.
__device__ __forceinline__ void kiln_wgs_produce(const kiln_tmap* ta, const kiln_tmap* tb) {
  if (threadIdx.y != 16u || threadIdx.x != 0u) return;
  kiln_wgs_state* st = kiln_wgs();
  unsigned short* smem = kiln_wgw_smem<true>();
  kiln_mbar_wait(&st->job, 0);
  const int ra = st->ra, rb = st->rb, ksteps = st->ksteps;
  for (int step = 0; step < ksteps; ++step) {
    const int s = step & 3;
    if (step >= 4) kiln_mbar_wait(&st->empty[s], (unsigned)((step >> 2) - 1) & 1u);
    unsigned short* stage = smem + s * kKilnWgwStage;
    kiln_mbar_arrive_expect_tx(&st->full[s], 2u * kKilnWgwStage);
    kiln_tma_load_2d(stage, ta, step * 64, ra, &st->full[s]);
    kiln_tma_load_2d(stage + 8192, tb, step * 64, rb, &st->full[s]);
  }
}
// The computing 16 x 16 threads: the block's 128 x 256 tile from A's rows
// ra.. and B's rows rb.. (the tensor maps' bounds give zeros past k's end),
// added into cl as kiln_gemm_wgt does; only the producer issues copies.
template <bool BF>
__device__ __forceinline__ void kiln_gemm_wgs(float* cl, int ra, int rb, int ksteps) {
  kiln_wgs_state* st = kiln_wgs();
  unsigned short* smem = kiln_wgw_smem<true>();
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int wg = (int)(tid >> 7);
  if (tid == 0) {
    st->ra = ra;
    st->rb = rb;
    st->ksteps = ksteps;
    kiln_mbar_arrive(&st->job);
  }
  float acc[128];
  for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
  for (int kt = 0; kt < ksteps; ++kt) {
    kiln_mbar_wait(&st->full[kt & 3], (unsigned)(kt >> 2) & 1u);
    kiln_wgw_step<BF, true>(acc, smem, smem + (kt & 3) * kKilnWgwStage, wg);
    kiln_wg_wait<1>();  // step kt - 1's MMAs retired (this thread's part)
    kiln_wg_pin<128>(acc);
    if (kt >= 1) {
      __syncwarp();     // the warp's part
      if ((tid & 31u) == 0) kiln_mbar_arrive(&st->empty[(kt - 1) & 3]);
    }
  }
  kiln_wg_wait<0>();
  kiln_wg_pin<128>(acc);
  kiln_wgw_epilogue<true>(acc, cl, smem);
}
#endif
)KILN_WGT";
}

}  // namespace kiln::codegen_cuda
