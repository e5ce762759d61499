/* File: tools/bench/fma_peak.c
 *
 * The machine's fp32 FMA peak, the yardstick of tools/bench/compare_ort.py:
 * every thread runs a loop of fused multiply-adds on kAcc independent vector
 * accumulators (enough to hide the FMA latency on every x86 core we know), so
 * the loop runs at the FMA units' throughput. The vector width is the widest
 * the compiler targets: AVX-512 (16 floats) when built with -march=native on
 * a CPU that has it, else AVX2 + FMA (8 floats), else scalar fmaf.
 *
 *   cc -O2 -march=native -pthread tools/bench/fma_peak.c -o fma_peak
 *   ./fma_peak 2        # threads (default 1); prints one JSON line:
 *   {"isa":"avx512f","lanes":16,"threads":2,"gflops":566.1,"seconds":0.41}
 *
 * Each thread counts 2 flops per lane per FMA. The figure is the best of five
 * timed rounds (after one warm-up round), so a short burst of other work on
 * the machine lowers it less than a mean would. Threads are pinned to CPUs
 * 0, 1, ... when the machine lets us (best effort).
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET */

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__)
#include <immintrin.h>
#define ISA "avx512f"
#define LANES 16
#define kAcc 16 /* of 32 vector registers */
typedef __m512 vec;
#define VSET1(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b) _mm512_add_ps(a, b)
static float vsum(vec v) { return _mm512_reduce_add_ps(v); }
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ISA "avx2+fma"
#define LANES 8
/* 16 ymm registers in all: the two FMA operands need two, and 16 accumulators
 * spilled to the stack, which halved the figure on Zen 3 (48.9 GFLOP/s with
 * 16, 86.9 with 12, 88.6 with 14, measured on one core). */
#define kAcc 12
typedef __m256 vec;
#define VSET1(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
static float vsum(vec v) {
  float f[8];
  _mm256_storeu_ps(f, v);
  return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
#else
#define ISA "scalar"
#define LANES 1
#define kAcc 12
typedef float vec;
#define VSET1(x) (x)
#define VFMA(a, b, c) fmaf(a, b, c)
#define VADD(a, b) ((a) + (b))
static float vsum(vec v) { return v; }
#endif

/* kAcc, the independent accumulators (above, per ISA): latency (4-5 cycles)
 * x FMA ports (2) = 10 at least, and all of them in registers with the two
 * operands beside them. */

/* Inner iterations per round and thread; ~0.1-0.5 s on current machines. */
static long g_iters = 20000000;
static int g_threads = 1;
static pthread_barrier_t g_start, g_stop;
static volatile float g_sink;
static float g_scale = 0.999999f; /* not a compile-time constant */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fma_loop(long iters) {
  vec acc[kAcc];
  for (int j = 0; j < kAcc; ++j) acc[j] = VSET1(1.0f + (float)j * 1e-3f);
  const vec b = VSET1(g_scale);
  const vec c = VSET1(1e-7f);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 32 /* all kAcc of them */
    for (int j = 0; j < kAcc; ++j) acc[j] = VFMA(acc[j], b, c);
  }
  vec s = acc[0];
  for (int j = 1; j < kAcc; ++j) s = VADD(s, acc[j]);
  g_sink = vsum(s);
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

enum { kRounds = 6 }; /* the first is a warm-up */

static void* worker(void* arg) {
  pin((int)(intptr_t)arg);
  for (int r = 0; r < kRounds; ++r) {
    pthread_barrier_wait(&g_start);
    fma_loop(g_iters);
    pthread_barrier_wait(&g_stop);
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) g_threads = atoi(argv[1]);
  if (argc > 2) g_iters = atol(argv[2]);
  if (g_threads < 1 || g_threads > 1024 || g_iters < 1) {
    fprintf(stderr, "usage: fma_peak [THREADS [ITERATIONS]]\n");
    return 2;
  }
  pthread_barrier_init(&g_start, NULL, (unsigned)g_threads + 1);
  pthread_barrier_init(&g_stop, NULL, (unsigned)g_threads + 1);
  pthread_t* tids = (pthread_t*)calloc((size_t)g_threads, sizeof(pthread_t));
  if (tids == NULL) return 1;
  for (int t = 0; t < g_threads; ++t) {
    if (pthread_create(&tids[t], NULL, worker, (void*)(intptr_t)t) != 0) {
      fprintf(stderr, "fma_peak: cannot start thread %d\n", t);
      return 1;
    }
  }
  double best = 0.0, best_s = 0.0;
  for (int r = 0; r < kRounds; ++r) {
    pthread_barrier_wait(&g_start);
    const double t0 = now_s();
    pthread_barrier_wait(&g_stop);
    const double dt = now_s() - t0;
    const double flops = 2.0 * LANES * kAcc * (double)g_iters * g_threads;
    if (r > 0 && flops / dt > best) {
      best = flops / dt;
      best_s = dt;
    }
  }
  for (int t = 0; t < g_threads; ++t) pthread_join(tids[t], NULL);
  free(tids);
  printf("{\"isa\":\"%s\",\"lanes\":%d,\"accumulators\":%d,\"threads\":%d,"
         "\"gflops\":%.2f,\"seconds\":%.4f}\n",
         ISA, LANES, kAcc, g_threads, best / 1e9, best_s);
  return 0;
}
