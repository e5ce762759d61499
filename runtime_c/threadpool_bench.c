/* File: runtime_c/threadpool_bench.c
 *
 * Launch overhead of kiln_parallel_launch: empty tasks, one task per pool
 * thread, on pools of 1 and 2 threads (and KILN_NUM_THREADS / the CPU count
 * when that is more). Prints microseconds per launch.
 *
 *   bazel run --config=opt //runtime_c:threadpool_bench -- [--launches=N]
 *
 * Plain C (no Google Benchmark: runtime_c uses nothing from C++).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kiln/kernel_abi.h"
#include "kiln/threadpool.h"

static int32_t empty_task(int32_t task_id, int32_t num_tasks, void* closure) {
  (void)task_id;
  (void)num_tasks;
  (void)closure;
  return 0;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Returns 0, or 1 after printing why it failed. */
static int bench(int32_t threads, int32_t num_tasks, long launches) {
  KilnThreadPool* pool = NULL;
  KilnKernelContext* ctx = NULL;
  if (kiln_thread_pool_create(threads, &pool) != 0 ||
      kiln_kernel_context_create(pool, &ctx) != 0) {
    fprintf(stderr, "could not create a pool of %d threads\n", (int)threads);
    kiln_thread_pool_destroy(pool);
    return 1;
  }
  /* Warm up: wake the workers once. */
  for (long i = 0; i < launches / 10 + 1; ++i) kiln_parallel_launch(ctx, empty_task, NULL, num_tasks);
  double start = now_us();
  int32_t rc = 0;
  for (long i = 0; i < launches && rc == 0; ++i) {
    rc = kiln_parallel_launch(ctx, empty_task, NULL, num_tasks);
  }
  double elapsed = now_us() - start;
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
  if (rc != 0) {
    fprintf(stderr, "launch failed: %d\n", (int)rc);
    return 1;
  }
  printf("threads=%-3d tasks=%-4d launches=%-8ld %8.3f us/launch\n", (int)threads,
         (int)(num_tasks <= 0 ? threads : num_tasks), launches, elapsed / (double)launches);
  return 0;
}

int main(int argc, char** argv) {
  long launches = 100000;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--launches=", 11) == 0) {
      char* end = NULL;
      launches = strtol(argv[i] + 11, &end, 10);
      if (end == argv[i] + 11 || *end != '\0' || launches < 1) {
        fprintf(stderr, "bad --launches value: %s\n", argv[i] + 11);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: %s [--launches=N]\n", argv[0]);
      return 2;
    }
  }
  int failed = 0;
  failed |= bench(1, 0, launches);
  failed |= bench(2, 0, launches);
  failed |= bench(2, 64, launches); /* more tasks than threads */
  int32_t all = kiln_thread_pool_default_num_threads();
  if (all > 2) failed |= bench(all, 0, launches);
  return failed;
}
