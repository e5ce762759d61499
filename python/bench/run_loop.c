/* python/bench/run_loop.c: the C side of python/bench/run_overhead.py.
 *
 *   run_loop MODEL.so INPUT.npy RUNS THREADS
 *
 * Loads the artifact, makes one session with THREADS threads, reads INPUT.npy
 * (kiln_npy_read) and times RUNS iterations of what Session.run does through
 * the C API: kiln_session_set_input (input 0), kiln_session_run and
 * kiln_session_copy_output of every output into buffers allocated once.
 * Prints one line: "c_api median_us=... mean_us=... min_us=..." per iteration.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kiln/kiln_runtime.h>

static int failed(KilnStatus* st, const char* what) {
  if (st == NULL) return 0;
  fprintf(stderr, "run_loop: %s: %s: %s\n", what, kiln_status_code_name(kiln_status_code(st)),
          kiln_status_message(st));
  kiln_status_free(st);
  return 1;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s MODEL.so INPUT.npy RUNS THREADS\n", argv[0]);
    return 2;
  }
  int runs = atoi(argv[3]);
  if (runs < 1) runs = 1;
  KilnSessionOptions options = {.struct_size = sizeof options, .num_threads = atoi(argv[4])};
  KilnArtifact* artifact = NULL;
  KilnSession* session = NULL;
  KilnNpyTensor* input = NULL;
  if (failed(kiln_artifact_load(argv[1], &artifact), "kiln_artifact_load") ||
      failed(kiln_session_create(artifact, &options, &session), "kiln_session_create") ||
      failed(kiln_npy_read(argv[2], &input), "kiln_npy_read")) {
    return 1;
  }
  const char* input_name = NULL;
  DLTensor info;
  if (failed(kiln_artifact_input_info(artifact, 0, &input_name, &info), "input_info")) return 1;

  int32_t num_outputs = kiln_artifact_num_outputs(artifact);
  DLTensor* outs = calloc((size_t)num_outputs, sizeof *outs);
  for (int32_t i = 0; i < num_outputs; ++i) {
    const char* name = NULL;
    if (failed(kiln_artifact_output_info(artifact, i, &name, &outs[i]), "output_info")) return 1;
    size_t bytes = (outs[i].dtype.bits * (size_t)outs[i].dtype.lanes + 7) / 8;
    for (int32_t d = 0; d < outs[i].ndim; ++d) bytes *= (size_t)outs[i].shape[d];
    outs[i].data = malloc(bytes > 0 ? bytes : 1);
  }

  double* times = malloc((size_t)runs * sizeof *times);
  for (int r = -runs / 10 - 1; r < runs; ++r) {  /* the first tenth is a warm-up */
    double t0 = now_us();
    if (failed(kiln_session_set_input(session, input_name, &input->tensor), "set_input") ||
        failed(kiln_session_run(session), "run")) {
      return 1;
    }
    for (int32_t i = 0; i < num_outputs; ++i) {
      if (failed(kiln_session_copy_output(session, i, &outs[i]), "copy_output")) return 1;
    }
    double t1 = now_us();
    if (r >= 0) times[r] = t1 - t0;
  }
  double sum = 0;
  for (int r = 0; r < runs; ++r) sum += times[r];
  qsort(times, (size_t)runs, sizeof *times, by_value);
  printf("c_api median_us=%.3f mean_us=%.3f min_us=%.3f\n", times[runs / 2], sum / runs,
         times[0]);

  for (int32_t i = 0; i < num_outputs; ++i) free(outs[i].data);
  free(outs);
  free(times);
  kiln_npy_release(input);
  kiln_session_release(session);
  kiln_artifact_release(artifact);
  return 0;
}
