// File: tests/cuda/emulate_host.cc — the host shim (emulate_host.h).
#include "tests/cuda/emulate_host.h"

namespace kiln::testing {

const std::string& EmulatorHostShim() {
  static const std::string* const kShim = new std::string(R"KILN_SHIM(// host definitions for kiln's CUDA C (tests/cuda/emulate_host.cc)
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct kiln_dim3 { unsigned x, y, z; };
// CUDA's 16-byte vector types (vectorized global loads and stores).
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(16) uint4 { unsigned x, y, z, w; };
static kiln_dim3 threadIdx, blockIdx, blockDim, gridDim;
static const int warpSize = 32;
inline float __int_as_float(int i) { float f; __builtin_memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; __builtin_memcpy(&f, &i, 4); return f; }
inline double __longlong_as_double(long long i) { double d; __builtin_memcpy(&d, &i, 8); return d; }
inline void __trap() { abort(); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }   // CUDA math without a host libm twin
inline double rsqrt(double x) { return 1.0 / sqrt(x); }

// ---- The block's threads as fibers ----
namespace kiln_emu {
enum State { kReady, kBarrier, kWarp, kDone, kMbar, kNamed };
struct Fiber {
  ucontext_t ctx;
  kiln_dim3 tid;
  State state;
  unsigned mask;              // kWarp: the lanes it meets
  unsigned long long value;   // the value it publishes to its warp
  unsigned payload[6];        // an mma's A and B fragment registers
  // Its issued wgmma (kiln_emu_wgmma), in order: the first wg_group_end[0]
  // form the oldest committed group, and so on; those past the last
  // commit, the open group.
  struct WgOp {
    float* d;
    unsigned long long da, db;
    const unsigned short* smem;
    unsigned n;
    bool bf;
  } wg_ops[32];
  unsigned wg_nops;
  unsigned wg_group_end[8];
  unsigned wg_ngroups;
  // kMbar: the mbarrier and the parity of the phase it waits for; kNamed:
  // the named barrier and the threads it expects.
  const unsigned long long* mbar;
  unsigned mbar_parity;
  unsigned bar_id, bar_count;
};
constexpr size_t kStack = 256u << 10;  // bytes per fiber, below a guard page
constexpr size_t kGuard = 4096;
static ucontext_t sched;
static Fiber* fibers = nullptr;
static unsigned nthreads = 0, cur = 0, capacity = 0;
static char* stacks = nullptr;
static void (*body)(void**) = nullptr;
static void** body_args = nullptr;
static const char* error = nullptr;

static void Fail(const char* msg);

static void Entry() {
  body(body_args);
  if (fibers[cur].wg_nops != 0) {
    Fail("a thread ended with wgmma.mma_async operations no wgmma.wait_group retired");
  }
  fibers[cur].state = kDone;  // uc_link returns to the scheduler
}

// Suspends the running fiber in state `s` until the scheduler resumes it.
static void Wait(State s) {
  Fiber& f = fibers[cur];
  f.state = s;
  swapcontext(&f.ctx, &sched);
}

// Ends the launch with `msg`: the running fiber is never resumed.
static void Fail(const char* msg) {
  if (error == nullptr) error = msg;
  Wait(kDone);
}

static unsigned Lane() { return cur % 32u; }

// The lanes of `mask` publish their values, meet, read lane `src`'s, meet
// again (so no value is overwritten before every lane has read it).
static unsigned long long Exchange(unsigned mask, unsigned long long v, unsigned src) {
  const unsigned lane = Lane();
  if ((mask & (1u << lane)) == 0) Fail("a warp exchange whose mask does not name the calling lane");
  if ((mask & (1u << src)) == 0) Fail("a warp exchange reads a lane that its mask does not name");
  fibers[cur].value = v;
  fibers[cur].mask = mask;
  Wait(kWarp);
  const unsigned long long r = fibers[cur - lane + src].value;
  Wait(kWarp);
  return r;
}

// The stacks and fiber table live as long as the emulated module: released
// when it is unloaded (dlclose), so a process that builds many emulators
// (and LeakSanitizer) sees no leak.
__attribute__((destructor)) static void FreeStacks() {
  if (stacks != nullptr) munmap(stacks, capacity * (kStack + kGuard));
  free(fibers);
  stacks = nullptr;
  fibers = nullptr;
  capacity = 0;
}

static bool AllocStacks(unsigned n) {
  if (n <= capacity) return true;
  if (stacks != nullptr) munmap(stacks, capacity * (kStack + kGuard));
  free(fibers);
  stacks = (char*)mmap(nullptr, n * (kStack + kGuard), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  fibers = (Fiber*)calloc(n, sizeof(Fiber));
  if (stacks == MAP_FAILED || fibers == nullptr) {
    stacks = nullptr;
    capacity = 0;
    return false;
  }
  for (unsigned t = 0; t < n; ++t) mprotect(stacks + t * (kStack + kGuard), kGuard, PROT_NONE);
  capacity = n;
  return true;
}

// Whether the lanes waiting in warp `w` can all go on; an error names why not.
static bool WarpReleasable(unsigned w, const char** why) {
  unsigned mask = 0;
  bool any = false;
  for (unsigned l = 0; l < 32 && w * 32 + l < nthreads; ++l) {
    const Fiber& f = fibers[w * 32 + l];
    if (f.state != kWarp) continue;
    if (any && f.mask != mask) {
      *why = "lanes of one warp wait in warp exchanges with different masks";
      return false;
    }
    mask = f.mask;
    any = true;
  }
  if (!any) return false;
  for (unsigned l = 0; l < 32; ++l) {
    if ((mask & (1u << l)) == 0) continue;
    if (w * 32 + l >= nthreads) {
      *why = "a warp exchange's mask names a lane the block does not have";
      return false;
    }
    const State s = fibers[w * 32 + l].state;
    if (s == kDone) {
      *why = "a warp exchange's mask names a lane that has finished";
      return false;
    }
    if (s != kWarp) return false;
  }
  for (unsigned l = 0; l < 32; ++l) {
    if ((mask & (1u << l)) != 0) fibers[w * 32 + l].state = kReady;
  }
  return true;
}

static const char* RunBlock() {
  for (unsigned t = 0; t < nthreads; ++t) {
    Fiber& f = fibers[t];
    f.tid = {t % blockDim.x, t / blockDim.x % blockDim.y, t / (blockDim.x * blockDim.y)};
    f.state = kReady;
    f.wg_nops = 0;
    f.wg_ngroups = 0;
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stacks + t * (kStack + kGuard) + kGuard;
    f.ctx.uc_stack.ss_size = kStack;
    f.ctx.uc_link = &sched;
    makecontext(&f.ctx, Entry, 0);
  }
  for (;;) {
    for (unsigned t = 0; t < nthreads; ++t) {
      if (fibers[t].state != kReady) continue;
      cur = t;
      threadIdx = fibers[t].tid;
      swapcontext(&sched, &fibers[t].ctx);
      if (error != nullptr) return error;
    }
    unsigned done = 0, barrier = 0;
    bool released = false;  // a thread can go on (one that yielded is ready already)
    for (unsigned t = 0; t < nthreads; ++t) {
      done += fibers[t].state == kDone;
      barrier += fibers[t].state == kBarrier;
      released = released || fibers[t].state == kReady;
    }
    if (done == nthreads) return nullptr;
    for (unsigned w = 0; w * 32 < nthreads; ++w) {
      const char* why = nullptr;
      released = WarpReleasable(w, &why) || released;
      if (why != nullptr) return why;
    }
    // An mbarrier wait whose phase has completed; a named barrier that all
    // the threads it expects reached.
    for (unsigned t = 0; t < nthreads; ++t) {
      Fiber& f = fibers[t];
      if (f.state == kMbar && ((*f.mbar >> 32) & 1u) != f.mbar_parity) {
        f.state = kReady;
        released = true;
      }
    }
    for (unsigned t = 0; t < nthreads; ++t) {
      if (fibers[t].state != kNamed) continue;
      unsigned n = 0;
      for (unsigned u = 0; u < nthreads; ++u) {
        if (fibers[u].state != kNamed || fibers[u].bar_id != fibers[t].bar_id) continue;
        if (fibers[u].bar_count != fibers[t].bar_count) {
          return "threads wait at one named barrier with different thread counts";
        }
        ++n;
      }
      if (n > fibers[t].bar_count) return "more threads at a named barrier than it expects";
      if (n == fibers[t].bar_count) {
        const unsigned id = fibers[t].bar_id;
        for (unsigned u = 0; u < nthreads; ++u) {
          if (fibers[u].state == kNamed && fibers[u].bar_id == id) fibers[u].state = kReady;
        }
        released = true;
      }
    }
    if (released) continue;
    if (barrier + done == nthreads) {
      if (done != 0) {
        return "__syncthreads() reached by some threads of a block while others had finished "
               "(a barrier in divergent code)";
      }
      for (unsigned t = 0; t < nthreads; ++t) fibers[t].state = kReady;
      continue;
    }
    return "deadlock: the threads of a block wait at different barriers or warp exchanges";
  }
}

}  // namespace kiln_emu

inline void __syncthreads() { kiln_emu::Wait(kiln_emu::kBarrier); }
// bar.sync id, count: waits until `count` threads (a multiple of 32) wait at
// barrier `id` (the others of the block may have finished or wait elsewhere).
inline void kiln_emu_bar_sync(unsigned id, unsigned count) {
  kiln_emu::Fiber& f = kiln_emu::fibers[kiln_emu::cur];
  if (count == 0 || count % 32 != 0 || count > kiln_emu::nthreads) {
    kiln_emu::Fail("a named barrier whose thread count is not a multiple of 32 up to the block's");
  }
  f.bar_id = id;
  f.bar_count = count;
  kiln_emu::Wait(kiln_emu::kNamed);
}

// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}: d += A * B for the warp,
// each lane holding the fragments of the PTX ISA's layout (groupID = lane/4,
// t = lane%4): A's a0..a7 (two 16-bit elements per register, low first) at
// rows groupID (+8 for a2, a3, a6, a7), columns 2t + (i&1) (+8 for i >= 4);
// B's b0..b3 at rows 2t + (i&1) (+8 for i >= 2), column groupID; d's c0..c3
// at rows groupID (+8 for c2, c3), columns 2t + (i&1). The lanes publish
// their registers, meet, each computes its four outputs, and meet again.
inline float kiln_emu_half(unsigned h, bool bf) {
  if (bf) {
    unsigned u = h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  unsigned short s = (unsigned short)h;
  _Float16 x;
  memcpy(&x, &s, 2);
  return (float)x;
}
inline void kiln_emu_mma_m16n8k16(float* d, const unsigned* a, const unsigned* b, bool bf) {
  using namespace kiln_emu;
  const unsigned lane = Lane(), base = cur - lane;
  if (base + 32 > nthreads) Fail("an mma.sync needs a full warp");
  Fiber& me = fibers[cur];
  memcpy(me.payload, a, 16);
  memcpy(me.payload + 4, b, 8);
  me.mask = 0xffffffffu;
  Wait(kWarp);
  float A[16][16], B[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned* p = fibers[base + l].payload;
    const unsigned g = l >> 2, t = l & 3u;
    for (unsigned e = 0; e < 8; ++e) {
      const unsigned h = (p[e / 2] >> (16 * (e & 1))) & 0xffffu;
      A[g + ((e & 2) ? 8 : 0)][t * 2 + (e & 1) + ((e & 4) ? 8 : 0)] = kiln_emu_half(h, bf);
    }
    for (unsigned e = 0; e < 4; ++e) {
      const unsigned h = (p[4 + e / 2] >> (16 * (e & 1))) & 0xffffu;
      B[t * 2 + (e & 1) + ((e & 2) ? 8 : 0)][g] = kiln_emu_half(h, bf);
    }
  }
  const unsigned g = lane >> 2, t = lane & 3u;
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned row = g + (i >= 2 ? 8 : 0), col = t * 2 + (i & 1);
    float s = 0.0f;
    for (unsigned k = 0; k < 16; ++k) s += A[row][k] * B[k][col];
    d[i] += s;
  }
  Wait(kWarp);
}
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32: A's a0..a3 at (row
// groupID (+8 for a1, a3), column t (+4 for a2, a3)), B's b0, b1 at (row t
// (+4 for b1), column groupID), d as m16n8k16's. The hardware reads only a
// TF32 register's upper 19 bits (sign, exponent, 10 mantissa bits): the low
// 13 are dropped here too.
inline void kiln_emu_mma_m16n8k8_tf32(float* d, const unsigned* a, const unsigned* b) {
  using namespace kiln_emu;
  const unsigned lane = Lane(), base = cur - lane;
  if (base + 32 > nthreads) Fail("an mma.sync needs a full warp");
  Fiber& me = fibers[cur];
  memcpy(me.payload, a, 16);
  memcpy(me.payload + 4, b, 8);
  me.mask = 0xffffffffu;
  Wait(kWarp);
  auto tf32 = [](unsigned u) {
    u &= 0xffffe000u;
    float f;
    memcpy(&f, &u, 4);
    return f;
  };
  float A[16][8], B[8][8];
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned* p = fibers[base + l].payload;
    const unsigned g = l >> 2, t = l & 3u;
    for (unsigned e = 0; e < 4; ++e) A[g + ((e & 1) ? 8 : 0)][t + ((e & 2) ? 4 : 0)] = tf32(p[e]);
    for (unsigned e = 0; e < 2; ++e) B[t + (e ? 4 : 0)][g] = tf32(p[4 + e]);
  }
  const unsigned g = lane >> 2, t = lane & 3u;
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned row = g + (i >= 2 ? 8 : 0), col = t * 2 + (i & 1);
    float s = 0.0f;
    for (unsigned k = 0; k < 8; ++k) s += A[row][k] * B[k][col];
    d[i] += s;
  }
  Wait(kWarp);
}
// ldmatrix.sync.aligned.m8n8.x4{.trans}.shared.b16: lane l gives the
// address of row l%8 of matrix l/8 (8 consecutive 16-bit words); lane l
// receives in r[j] the words (l/4, 2(l%4)) and (l/4, 2(l%4)+1) of matrix j,
// low half first, or with .trans the words (2(l%4), l/4) and
// (2(l%4)+1, l/4). The lanes publish their row addresses, meet, each reads
// its eight words, and they meet again.
inline void kiln_emu_ldmatrix_x4(unsigned* r, const unsigned short* row, bool trans) {
  using namespace kiln_emu;
  const unsigned lane = Lane(), base = cur - lane;
  if (base + 32 > nthreads) Fail("an ldmatrix needs a full warp");
  Fiber& me = fibers[cur];
  memcpy(me.payload, &row, sizeof row);
  me.mask = 0xffffffffu;
  Wait(kWarp);
  for (unsigned j = 0; j < 4; ++j) {
    unsigned v = 0;
    for (unsigned h = 0; h < 2; ++h) {
      const unsigned src = trans ? (lane & 3u) * 2 + h : lane >> 2;
      const unsigned col = trans ? lane >> 2 : (lane & 3u) * 2 + h;
      const unsigned short* p;
      memcpy(&p, fibers[base + j * 8 + src].payload, sizeof p);
      v |= (unsigned)p[col] << (16 * h);
    }
    r[j] = v;
  }
  Wait(kWarp);
}
// wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16} (N 128 or 256), both
// operands in shared memory (`smem`: the array the descriptors' addresses
// count from), A row-major (k-major) and B column-major (k-major), not
// transposed, scale 1: d += A(64 x 16) * B(16 x N) for the warpgroup (128
// consecutive linear thread indices from a multiple of 128). The
// descriptors are decoded as the PTX ISA's "Matrix Descriptor Format": bits
// 0-13 start address, 16-29 leading byte offset (LBO), 32-45 stride byte
// offset (SBO), each in units of 16 bytes; bits 49-51 base offset (must be
// 0) and 62-63 the layout: 0, the unswizzled canonical layout, element
// (r, k) of a k-major operand at byte start + (r/8)*SBO + (k/8)*LBO +
// (r%8)*16 + (k%8)*2; or 1, the 128-byte swizzle, element (r, k) at
// a = start + (r/8)*SBO + (r%8)*128 + k*2 with the address's 16-byte chunk
// bits (4-6) XORed with its bits 7-9: a ^ ((a >> 7) & 7) << 4 (LBO unused;
// the 64- and 32-byte swizzles are not emulated). d[4j + i] of lane l of
// warp v of the warpgroup is row 16v + l/4 (+8 for i >= 2), column 8j +
// 2(l%4) + (i&1).
//
// Asynchronous as on the GPU: kiln_emu_wgmma only queues the operation in
// the calling thread's open group; kiln_emu_wg_commit closes the group;
// kiln_emu_wg_wait(n) runs the oldest committed groups until at most n are
// pending, each thread computing its own accumulators from the shared
// memory as it is then. So a kernel that refills a stage before the wait
// that retires the MMAs reading it, or reads an accumulator before that
// wait, computes a wrong value; a thread that ends with MMAs no wait
// retired fails the launch.
inline void kiln_emu_wgmma_run(const kiln_emu::Fiber::WgOp& op) {
  using namespace kiln_emu;
  const unsigned v = (cur & 127u) >> 5, lane = Lane();
  auto at = [&](unsigned long long desc, unsigned r, unsigned k) {
    const unsigned long long start = (desc & 0x3fffu) << 4, lbo = ((desc >> 16) & 0x3fffu) << 4,
                             sbo = ((desc >> 32) & 0x3fffu) << 4;
    unsigned long long byte;
    if ((desc >> 62) == 1) {
      byte = start + (r / 8) * sbo + (r % 8) * 128 + k * 2;
      byte ^= ((byte >> 7) & 7u) << 4;
    } else {
      byte = start + (r / 8) * sbo + (k / 8) * lbo + (r % 8) * 16 + (k % 8) * 2;
    }
    return kiln_emu_half(op.smem[byte / 2], op.bf);
  };
  for (unsigned j = 0; j < op.n / 8; ++j) {
    for (unsigned i = 0; i < 4; ++i) {
      const unsigned row = 16 * v + lane / 4 + (i >= 2 ? 8 : 0), col = 8 * j + 2 * (lane % 4) + (i & 1);
      float s = 0.0f;
      for (unsigned k = 0; k < 16; ++k) s += at(op.da, row, k) * at(op.db, col, k);
      op.d[4 * j + i] += s;
    }
  }
}
inline void kiln_emu_wgmma(float* d, unsigned long long da, unsigned long long db,
                           const unsigned short* smem, bool bf, unsigned n) {
  using namespace kiln_emu;
  const unsigned base = cur & ~127u;
  if (base + 128 > nthreads) Fail("a wgmma needs a full warpgroup (128 threads)");
  const unsigned long long descs[2] = {da, db};
  for (unsigned long long desc : descs) {
    if ((desc >> 62) > 1 || ((desc >> 49) & 7u) != 0) {
      Fail("a wgmma descriptor with a 64- or 32-byte swizzle or a base offset (only the "
           "unswizzled layout and the 128-byte swizzle are emulated)");
    }
  }
  Fiber& f = fibers[cur];
  if (f.wg_nops == sizeof f.wg_ops / sizeof f.wg_ops[0]) {
    Fail("more wgmma.mma_async operations in flight than the emulator holds (32)");
  }
  f.wg_ops[f.wg_nops++] = {d, da, db, smem, n, bf};
}
inline void kiln_emu_wg_commit() {
  using namespace kiln_emu;
  Fiber& f = fibers[cur];
  const unsigned open_from = f.wg_ngroups ? f.wg_group_end[f.wg_ngroups - 1] : 0;
  if (f.wg_nops == open_from) return;  // an empty group: nothing to wait for
  if (f.wg_ngroups == sizeof f.wg_group_end / sizeof f.wg_group_end[0]) {
    Fail("more wgmma groups in flight than the emulator holds (8)");
  }
  f.wg_group_end[f.wg_ngroups++] = f.wg_nops;
}
inline void kiln_emu_wg_wait(unsigned n) {
  using namespace kiln_emu;
  Fiber& f = fibers[cur];
  while (f.wg_ngroups > n) {
    const unsigned end = f.wg_group_end[0];
    for (unsigned i = 0; i < end; ++i) kiln_emu_wgmma_run(f.wg_ops[i]);
    for (unsigned i = end; i < f.wg_nops; ++i) f.wg_ops[i - end] = f.wg_ops[i];
    f.wg_nops -= end;
    for (unsigned g = 1; g < f.wg_ngroups; ++g) f.wg_group_end[g - 1] = f.wg_group_end[g] - end;
    --f.wg_ngroups;
  }
}
// mbarrier (shared::cta, the 64-bit object in shared memory), its state in
// the object's own bits: 0-15 the arrivals a phase expects, 16-31 those
// still pending, bit 32 the current (incomplete) phase's parity, bit 33 set
// once initialized, 34-63 the transaction bytes the phase still waits for.
// A phase completes when no arrival and no byte is pending; the next one
// expects the same arrivals. A wait (try_wait.parity in a loop on the GPU)
// for a phase that has not completed suspends the thread until another
// thread's arrival (or copy) completes it; the emulator's copies complete
// when they are issued, so a wait no thread can end is a deadlock, which
// fails the launch (on a GPU the kernel would hang).
inline unsigned long long kiln_emu_mbar_state(unsigned long long count, unsigned long long pending,
                                             unsigned long long parity, unsigned long long tx) {
  return count | pending << 16 | parity << 32 | 1ull << 33 | tx << 34;
}
inline void kiln_emu_mbar_init(unsigned long long* bar, unsigned count) {
  if (count < 1 || count > 0xffffu) kiln_emu::Fail("an mbarrier initialized with no or too many arrivals");
  *bar = kiln_emu_mbar_state(count, count, 0, 0);
}
// Adds `tx` expected bytes (or completes -`tx`), then `arrivals` arrivals.
inline void kiln_emu_mbar_update(unsigned long long* bar, long long tx, unsigned arrivals) {
  unsigned long long s = *bar;
  if (((s >> 33) & 1u) == 0) kiln_emu::Fail("an mbarrier used before mbarrier.init");
  const unsigned long long count = s & 0xffffu, parity = (s >> 32) & 1u;
  unsigned long long pending = (s >> 16) & 0xffffu;
  long long bytes = (long long)(s >> 34) + tx;
  if (bytes < 0) kiln_emu::Fail("a copy completed more bytes than its mbarrier's phase expects");
  if (bytes >= (1ll << 30)) kiln_emu::Fail("an mbarrier phase expecting 2^30 bytes or more");
  if (arrivals > pending) kiln_emu::Fail("more arrivals on an mbarrier than its phase expects");
  pending -= arrivals;
  if (pending == 0 && bytes == 0) {
    *bar = kiln_emu_mbar_state(count, count, parity ^ 1u, 0);
    // The waiters go on at once, and this thread yields: the threads after
    // it in the block's order (a producer warpgroup) run before the ones
    // before it, so work done after an arrival that should have preceded
    // it (a stage released before its MMAs retired) is seen as a wrong
    // value rather than hidden by the fixed order.
    for (unsigned t = 0; t < kiln_emu::nthreads; ++t) {
      kiln_emu::Fiber& f = kiln_emu::fibers[t];
      if (f.state == kiln_emu::kMbar && f.mbar == bar) f.state = kiln_emu::kReady;
    }
    kiln_emu::Wait(kiln_emu::kReady);
  } else {
    *bar = kiln_emu_mbar_state(count, pending, parity, (unsigned long long)bytes);
  }
}
inline void kiln_emu_mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  kiln_emu_mbar_update(bar, bytes, 1);
}
inline void kiln_emu_mbar_arrive(unsigned long long* bar) { kiln_emu_mbar_update(bar, 0, 1); }
// Suspends the thread until the phase of parity `parity` completes (the
// launch fails as a deadlock when no thread can complete it).
inline void kiln_emu_mbar_wait(unsigned long long* bar, unsigned parity) {
  if (((*bar >> 33) & 1u) == 0) kiln_emu::Fail("an mbarrier waited on before mbarrier.init");
  while (((*bar >> 32) & 1u) == (parity & 1u)) {
    kiln_emu::Fiber& f = kiln_emu::fibers[kiln_emu::cur];
    f.mbar = bar;
    f.mbar_parity = parity & 1u;
    kiln_emu::Wait(kiln_emu::kMbar);
  }
}
// cp.async.bulk.tensor.2d ... .tile.mbarrier::complete_tx::bytes: the box of
// the map (tests/cuda/fake_tensor_map.h's words) at (c0, c1), elements past
// the dims (or before 0) zeros, row by row into dst (box[0] elements a row);
// with a swizzle of S bytes the 16-byte chunk bits (4..) of each shared
// address are XORed with its bits 7.. (S/16 values: 128 bytes: bits 4-6 with
// 7-9), dst at least 128-byte aligned and a box row exactly S bytes. Done
// when issued; its box's bytes complete on bar.
inline void kiln_emu_tma_load_2d(void* dst, const unsigned long long* w, int c0, int c1,
                                 unsigned long long* bar) {
  if (w[0] != 0x50414d544e4c494bull) {
    kiln_emu::Fail("cp.async.bulk.tensor with a tensor map the fake driver did not encode");
  }
  if (w[3] != 2) kiln_emu::Fail("cp.async.bulk.tensor.2d with a tensor map whose rank is not 2");
  const unsigned long long elem = (w[15] >> 8) & 0xffu, swz = w[15] & 0xffu;
  const unsigned long long box0 = w[14] & 0xfffu, box1 = (w[14] >> 12) & 0xfffu;
  const unsigned long long span = swz == 0 ? 0 : 16ull << swz;
  if (span != 0 && (box0 * elem != span || ((unsigned long long)dst & 127u) != 0)) {
    kiln_emu::Fail("a swizzled TMA copy whose box row is not the swizzle span or whose "
                   "destination is not 128-byte aligned (not emulated)");
  }
  const char* g = (const char*)w[1];
  unsigned char* d = (unsigned char*)dst;
  for (unsigned long long i1 = 0; i1 < box1; ++i1) {
    const long long g1 = (long long)c1 + (long long)i1;
    for (unsigned long long i0 = 0; i0 < box0; ++i0) {
      const long long g0 = (long long)c0 + (long long)i0;
      unsigned long long a = (unsigned long long)(d + (i1 * box0 + i0) * elem);
      if (span != 0) a ^= ((a >> 7) & (span / 16 - 1)) << 4;
      const bool in = g0 >= 0 && g1 >= 0 && (unsigned long long)g0 < w[4] &&
                      (unsigned long long)g1 < w[5];
      if (in) {
        memcpy((void*)a, g + (unsigned long long)g1 * w[9] + (unsigned long long)g0 * elem, elem);
      } else {
        memset((void*)a, 0, elem);
      }
    }
  }
  kiln_emu_mbar_update(bar, -(long long)(box0 * box1 * elem), 0);
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  (void)kiln_emu::Exchange(mask, 0, kiln_emu::Lane());
}
template <typename T> inline unsigned long long kiln_emu_bits(T v) {
  static_assert(sizeof(T) <= 8, "warp exchange of a value wider than 64 bits");
  unsigned long long u = 0;
  memcpy(&u, &v, sizeof(T));
  return u;
}
template <typename T> inline T kiln_emu_from_bits(unsigned long long u) {
  T v;
  memcpy(&v, &u, sizeof(T));
  return v;
}
// `width` splits the warp into segments (a power of two, at most 32): a lane
// reading outside its own segment's range gets its own value.
template <typename T> inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const unsigned lane = kiln_emu::Lane(), base = lane & ~(unsigned)(width - 1);
  const unsigned s = base + ((unsigned)src & (unsigned)(width - 1));
  return kiln_emu_from_bits<T>(kiln_emu::Exchange(mask, kiln_emu_bits(v), s));
}
template <typename T> inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned lane = kiln_emu::Lane();
  const unsigned in_seg = (lane & (unsigned)(width - 1)) + delta;
  const unsigned s = in_seg < (unsigned)width ? lane + delta : lane;
  return kiln_emu_from_bits<T>(kiln_emu::Exchange(mask, kiln_emu_bits(v), s));
}
template <typename T> inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned lane = kiln_emu::Lane();
  const unsigned s = (lane & (unsigned)(width - 1)) >= delta ? lane - delta : lane;
  return kiln_emu_from_bits<T>(kiln_emu::Exchange(mask, kiln_emu_bits(v), s));
}
template <typename T> inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const unsigned lane = kiln_emu::Lane(), s0 = lane ^ (unsigned)lane_mask;
  const unsigned end = (lane & ~(unsigned)(width - 1)) + (unsigned)width;
  const unsigned s = s0 < end ? s0 : lane;
  return kiln_emu_from_bits<T>(kiln_emu::Exchange(mask, kiln_emu_bits(v), s));
}

// Runs `body(args)` on every thread of every block of the launch.
static const char* kiln_emu_launch(void (*body)(void**), void** args, const unsigned grid[3],
                                   const unsigned block[3]) {
  using namespace kiln_emu;
  const unsigned n = block[0] * block[1] * block[2];
  if (n == 0 || grid[0] * grid[1] * grid[2] == 0) return nullptr;
  if (!AllocStacks(n)) return "cannot allocate the fibers' stacks";
  kiln_emu::body = body;
  body_args = args;
  error = nullptr;
  nthreads = n;
  blockDim = {block[0], block[1], block[2]};
  gridDim = {grid[0], grid[1], grid[2]};
  for (unsigned gz = 0; gz < grid[2]; ++gz) {
    for (unsigned gy = 0; gy < grid[1]; ++gy) {
      for (unsigned gx = 0; gx < grid[0]; ++gx) {
        blockIdx = {gx, gy, gz};
        if (const char* e = RunBlock()) return e;
      }
    }
  }
  return nullptr;
}
)KILN_SHIM");
  return *kShim;
}

}  // namespace kiln::testing
