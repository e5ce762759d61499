/* minimal_check MODEL.so: runs a model compiled from
 *   def @main(%x: Tensor[(2, 3), float32]) { nn.relu(add(%x, 1f)) }
 * through libkiln_runtime_minimal.so (docs/selective_builds.md) and checks its
 * output, a benchmark, and that the debug executor says it is not in this
 * build. Exit 0 when every check holds. */
#include <stdio.h>
#include <string.h>

#include "kiln/runtime.h"

static int failures = 0;

static void expect_absent(KilnStatus* st, const char* what) {
  if (st == NULL) {
    fprintf(stderr, "FAIL %s: succeeded in a runtime without the debug executor\n", what);
    ++failures;
    return;
  }
  if (kiln_status_code(st) != KILN_UNIMPLEMENTED ||
      strstr(kiln_status_message(st), "the debug executor") == NULL ||
      strstr(kiln_status_message(st), "not in this build") == NULL) {
    fprintf(stderr, "FAIL %s: %s: %s\n", what, kiln_status_code_name(kiln_status_code(st)),
            kiln_status_message(st));
    ++failures;
  } else {
    printf("%s: %s\n", what, kiln_status_message(st));
  }
  kiln_status_free(st);
}

static int ok(KilnStatus* st, const char* what) {
  if (st == NULL) return 1;
  fprintf(stderr, "FAIL %s: %s\n", what, kiln_status_message(st));
  kiln_status_free(st);
  ++failures;
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: minimal_check MODEL.so\n");
    return 2;
  }
  KilnArtifact* art = NULL;
  KilnSession* s = NULL;
  if (!ok(kiln_artifact_load(argv[1], &art), "load") ||
      !ok(kiln_session_create(art, NULL, &s), "session"))
    return 1;
  float x[6] = {-3, -1.5f, -0.5f, 0, 1, 2.5f}, out[6] = {0};
  int64_t shape[2] = {2, 3};
  DLTensor tx = {x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor to = {out, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  if (ok(kiln_session_set_input(s, "x", &tx), "set x") && ok(kiln_session_run(s), "run") &&
      ok(kiln_session_copy_output(s, 0, &to), "output")) {
    for (int i = 0; i < 6; ++i) {
      float want = x[i] + 1.0f > 0 ? x[i] + 1.0f : 0.0f;
      if (out[i] != want) {
        fprintf(stderr, "FAIL out[%d] = %g, expected %g\n", i, out[i], want);
        ++failures;
      }
    }
    printf("ran the model: out = [%g %g %g %g %g %g]\n", out[0], out[1], out[2], out[3], out[4],
           out[5]);
  }
  KilnBenchmarkOptions bo;
  memset(&bo, 0, sizeof bo);
  bo.struct_size = sizeof bo;
  bo.repeat = 3;
  KilnBenchmarkResult result;
  memset(&result, 0, sizeof result);
  if (ok(kiln_session_benchmark(s, &bo, &result, NULL), "benchmark") && result.repeat != 3) {
    fprintf(stderr, "FAIL benchmark: %d runs, expected 3\n", (int)result.repeat);
    ++failures;
  }

  KilnProfile* p = (KilnProfile*)&p; /* must be cleared */
  expect_absent(kiln_session_profile(s, &p), "kiln_session_profile");
  if (p != NULL) {
    fprintf(stderr, "FAIL kiln_session_profile left its out-parameter set\n");
    ++failures;
  }
  expect_absent(kiln_session_profile_with(s, NULL, &p), "kiln_session_profile_with");
  expect_absent(kiln_session_debug_dump(s, "/nonexistent"), "kiln_session_debug_dump");
  kiln_profile_release(NULL);
  kiln_session_release(s);
  kiln_artifact_release(art);
  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all checks passed\n");
  return 0;
}
