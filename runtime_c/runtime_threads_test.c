/* File: runtime_c/runtime_threads_test.c
 *
 * One artifact, many threads: 8 threads x 200 runs, each thread with its own
 * session on a shared, read-only KilnArtifact (rt_basic, and rt_par whose
 * kernels launch on a thread pool: some sessions own a pool, some share one).
 * Every output must be bit-exact with a single-threaded reference run. The
 * threads also load and release the same file concurrently first.
 *
 * Arguments: the fixture paths ($(rootpath :rt_basic), $(rootpath :rt_par)).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/runtime.h"
#include "kiln/status.h"
#include "kiln/threadpool.h"
#include "runtime_c/runtime_test_util.h"

#define NUM_THREADS 8
#define NUM_RUNS 200
#define PAR_N 4000

typedef struct {
  int id;
  const KilnArtifact* artifact;
  int is_par;
  KilnThreadPool* shared_pool; /* or NULL */
  int32_t num_threads;
  float x[PAR_N];
  float y[6];
  float want[3][PAR_N]; /* reference outputs */
  size_t want_bytes[3];
  int32_t num_outputs;
  int mismatches;
  int errors;
  char first_error[512];
} Job;

static void note_error(Job* job, KilnStatus* st) {
  if (job->errors++ == 0) {
    (void)snprintf(job->first_error, sizeof job->first_error, "%s", kiln_status_message(st));
  }
  kiln_status_free(st);
}

/* Sets the inputs of `job` on `s` (zero-copy on odd runs). */
static KilnStatus* set_inputs(Job* job, KilnSession* s, int run) {
  int64_t shape_basic[2] = {2, 3};
  int64_t shape_par[2] = {4, 1000};
  KilnStatus* st = NULL;
  if (job->is_par) {
    DLTensor x = f32_tensor(job->x, 2, shape_par);
    st = (run & 1) ? kiln_session_set_input_zero_copy(s, "x", &x)
                   : kiln_session_set_input(s, "x", &x);
  } else {
    DLTensor x = f32_tensor(job->x, 2, shape_basic);
    DLTensor y = f32_tensor(job->y, 2, shape_basic);
    st = (run & 1) ? kiln_session_set_input_zero_copy(s, "x", &x)
                   : kiln_session_set_input(s, "x", &x);
    if (st == NULL) st = kiln_session_set_input(s, "y", &y);
  }
  return st;
}

static void* worker(void* arg) {
  Job* job = (Job*)arg;
  /* Concurrent loads of the same file. */
  KilnArtifact* again = NULL;
  KilnStatus* st = kiln_artifact_load(fixture(job->is_par ? "rt_par" : "rt_basic"), &again);
  if (st != NULL) note_error(job, st);
  kiln_artifact_release(again);

  KilnSessionOptions opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.num_threads = job->num_threads;
  opts.pool = job->shared_pool;
  KilnSession* s = NULL;
  st = kiln_session_create(job->artifact, &opts, &s);
  if (st != NULL) {
    note_error(job, st);
    return NULL;
  }
  for (int run = 0; run < NUM_RUNS; ++run) {
    st = set_inputs(job, s, run);
    if (st == NULL) st = kiln_session_run(s);
    if (st != NULL) {
      note_error(job, st);
      continue;
    }
    for (int32_t o = 0; o < job->num_outputs; ++o) {
      const DLTensor* out = NULL;
      st = kiln_session_get_output(s, o, &out);
      if (st != NULL) {
        note_error(job, st);
        continue;
      }
      if (memcmp(out->data, job->want[o], job->want_bytes[o]) != 0) ++job->mismatches;
    }
  }
  kiln_session_release(s);
  return NULL;
}

int main(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
  KilnArtifact* basic = load_fixture("rt_basic");
  KilnArtifact* par = load_fixture("rt_par");
  KilnThreadPool* shared_pool = NULL;
  CHECK(kiln_thread_pool_create(2, &shared_pool) == 0);

  static Job jobs[NUM_THREADS];
  for (int t = 0; t < NUM_THREADS; ++t) {
    Job* job = &jobs[t];
    memset(job, 0, sizeof *job);
    job->id = t;
    job->is_par = t & 1;
    job->artifact = job->is_par ? par : basic;
    /* Serial, own pool of 2, and a pool shared by several sessions. */
    job->num_threads = (t % 4 == 1) ? 2 : 1;
    job->shared_pool = (t % 4 == 3) ? shared_pool : NULL;
    for (int i = 0; i < PAR_N; ++i) job->x[i] = (float)((i * (t + 3)) % 101) * 0.25f - 12.0f;
    for (int i = 0; i < 6; ++i) job->y[i] = (float)(t - i) * 0.5f;

    /* The single-threaded reference. */
    KilnSessionOptions opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.num_threads = 1;
    KilnSession* s = NULL;
    if (!EXPECT_OK(kiln_session_create(job->artifact, &opts, &s))) continue;
    if (EXPECT_OK(set_inputs(job, s, 0)) && EXPECT_OK(kiln_session_run(s))) {
      job->num_outputs = kiln_artifact_num_outputs(job->artifact);
      for (int32_t o = 0; o < job->num_outputs; ++o) {
        const DLTensor* out = NULL;
        if (!EXPECT_OK(kiln_session_get_output(s, o, &out))) continue;
        job->want_bytes[o] = sizeof(float) * (job->is_par ? PAR_N : 6);
        memcpy(job->want[o], out->data, job->want_bytes[o]);
      }
    }
    kiln_session_release(s);
  }

  pthread_t threads[NUM_THREADS];
  for (int t = 0; t < NUM_THREADS; ++t)
    CHECK(pthread_create(&threads[t], NULL, worker, &jobs[t]) == 0);
  for (int t = 0; t < NUM_THREADS; ++t) CHECK(pthread_join(threads[t], NULL) == 0);
  for (int t = 0; t < NUM_THREADS; ++t) {
    if (jobs[t].errors != 0) {
      fprintf(stderr, "thread %d: %d errors, first: %s\n", t, jobs[t].errors, jobs[t].first_error);
    }
    if (jobs[t].mismatches != 0)
      fprintf(stderr, "thread %d: %d mismatches\n", t, jobs[t].mismatches);
    CHECK(jobs[t].errors == 0);
    CHECK(jobs[t].mismatches == 0);
    CHECK(jobs[t].num_outputs > 0);
  }
  kiln_thread_pool_destroy(shared_pool);
  kiln_artifact_release(par);
  kiln_artifact_release(basic);
  return test_main_end("runtime_threads_test");
}
