/* File: runtime_c/runtime_so_test.c
 *
 * Linked with nothing of kiln but libkiln_runtime.so (and the header-only
 * :runtime_headers): loads two fixtures, runs them, checks the outputs, and
 * profiles and benchmarks once. The fixtures' kernels call kiln_kernel_error
 * and kiln_parallel_launch, which must resolve against the shared library.
 * It proves the .so is self-sufficient and exports what a program needs.
 *
 * Arguments: $(rootpath :rt_basic) $(rootpath :rt_par).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime_c/runtime_test_util.h"

int main(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
  CHECK(strcmp(kiln_runtime_version(), "0.1.0") == 0);

  /* rt_basic: ((relu(x + y) + p0) + 1, ... * 2, relu(x + y)). */
  KilnArtifact* a = load_fixture("rt_basic");
  KilnSession* s = NULL;
  if (EXPECT_OK(kiln_session_create(a, NULL, &s))) {
    float x[6] = {1, -2, 3, -4, 5, -6};
    float y[6] = {0.5f, 0.5f, -5, 1, 1, 10};
    const float p0[6] = {0.5f, -1.0f, 2.0f, 0.25f, -3.0f, 1.5f};
    int64_t shape[2] = {2, 3};
    DLTensor xt = f32_tensor(x, 2, shape);
    DLTensor yt = f32_tensor(y, 2, shape);
    EXPECT_OK(kiln_session_set_input(s, "x", &xt));
    EXPECT_OK(kiln_session_set_input(s, "y", &yt));
    if (EXPECT_OK(kiln_session_run(s))) {
      const DLTensor* out = NULL;
      if (EXPECT_OK(kiln_session_get_output(s, 1, &out))) {
        const float* o = (const float*)out->data;
        for (int i = 0; i < 6; ++i) {
          float r = x[i] + y[i] > 0.0f ? x[i] + y[i] : 0.0f;
          CHECK(o[i] == (r + p0[i]) * 2.0f);
        }
      }
    }
    KilnProfile* p = NULL;
    if (EXPECT_OK(kiln_session_profile(s, &p))) CHECK(kiln_profile_num_nodes(p) == 4);
    kiln_profile_release(p);
    KilnBenchmarkResult r;
    EXPECT_OK(kiln_session_benchmark(s, NULL, &r, NULL));
    CHECK(r.repeat == 10);
    kiln_session_release(s);
  }
  kiln_artifact_release(a);

  /* rt_par: kernels that launch on the session's pool of 2 threads. */
  a = load_fixture("rt_par");
  KilnSessionOptions opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.num_threads = 2;
  s = NULL;
  if (EXPECT_OK(kiln_session_create(a, &opts, &s))) {
    static float x[4000];
    for (int i = 0; i < 4000; ++i) x[i] = (float)(i % 11) - 5.0f;
    int64_t shape[2] = {4, 1000};
    DLTensor xt = f32_tensor(x, 2, shape);
    EXPECT_OK(kiln_session_set_input(s, "x", &xt));
    if (EXPECT_OK(kiln_session_run(s))) {
      const DLTensor* out = NULL;
      if (EXPECT_OK(kiln_session_get_output(s, 0, &out))) {
        const float* o = (const float*)out->data;
        int bad = 0;
        for (int i = 0; i < 4000; ++i) {
          float s1 = x[i] * 3.0f + 0.5f;
          float r = s1 > 0.0f ? s1 : 0.0f;
          if (o[i] != r * 3.0f + 0.5f) ++bad;
        }
        CHECK(bad == 0);
      }
    }
    kiln_session_release(s);
  }
  kiln_artifact_release(a);
  return test_main_end("runtime_so_test");
}
