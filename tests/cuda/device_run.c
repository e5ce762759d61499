/* File: tests/cuda/device_run.c
 *
 * The program tests/cuda/device_check.sh runs on a machine with a GPU (which
 * has no Bazel or LLVM of kiln's: it links only the runtime, statically, and
 * libcjson). It loads artifacts prepared on the build machine
 * (prepare_device_check.cc) and runs them through the public runtime API on
 * the device given:
 *
 *   device_run check DIR DEVICE [RTOL ATOL]   DIR/model.so with DIR/input_<i>.npy;
 *                                             every output vs DIR/expected_<i>.npy
 *   device_run bench DIR DEVICE REPEAT [FLOPS] inputs from DIR/input_<i>.npy when
 *                                             present, else zeros; mean/min ms
 *                                             (kiln_session_benchmark) and TFLOP/s
 *   device_run conformance ROOT DEVICE [TIMEOUT_S]   the ONNX conformance cases
 *                                             run_conformance --export_dir wrote
 *                                             (tests/cuda/conformance_replay.h)
 *
 * DEVICE is cpu or cuda:N. Prints one line per result; exit status 0 when
 * every check passes.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kiln/npy.h"
#include "kiln/runtime.h"
#include "tests/cuda/conformance_replay.h"

static int fail_status(const char* what, KilnStatus* st) {
  fprintf(stderr, "FAIL %s: %s: %s\n", what, kiln_status_code_name(kiln_status_code(st)),
          kiln_status_message(st));
  kiln_status_free(st);
  return 1;
}

static double element(const DLTensor* t, int64_t i) {
  const char* p = (const char*)t->data;
  switch (t->dtype.code) {
    case kDLFloat:
      if (t->dtype.bits == 32) return ((const float*)p)[i];
      if (t->dtype.bits == 64) return ((const double*)p)[i];
      if (t->dtype.bits == 16) {
        uint16_t h = ((const uint16_t*)p)[i];
        int e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
        return (h & 0x8000) ? -v : v;
      }
      break;
    case kDLInt:
      if (t->dtype.bits == 64) return (double)((const int64_t*)p)[i];
      if (t->dtype.bits == 32) return ((const int32_t*)p)[i];
      if (t->dtype.bits == 8) return ((const int8_t*)p)[i];
      break;
    default:
      if (t->dtype.bits == 8) return ((const uint8_t*)p)[i];
      break;
  }
  return NAN;
}

static int64_t count(const DLTensor* t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

static int parse_device(const char* s, KilnSessionOptions* o) {
  if (strcmp(s, "cpu") == 0) return 0;
  if (strncmp(s, "cuda:", 5) == 0 && s[5] != '\0') {
    o->device_type = kDLCUDA;
    o->device_id = atoi(s + 5);
    return 0;
  }
  fprintf(stderr, "device must be cpu or cuda:N, got '%s'\n", s);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: device_run check|bench DIR DEVICE ... | conformance ROOT DEVICE [TIMEOUT_S]\n");
    return 2;
  }
  const char* mode = argv[1];
  if (strcmp(mode, "conformance") == 0) {
    return kiln_conformance_replay(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 60);
  }
  const char* dir = argv[2];
  KilnSessionOptions o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  if (parse_device(argv[3], &o) != 0) return 2;
  char path[4096];
  snprintf(path, sizeof path, "%s/model.so", dir);
  KilnArtifact* a = NULL;
  KilnStatus* st = kiln_artifact_load(path, &a);
  if (st != NULL) return fail_status(path, st);
  KilnSession* s = NULL;
  st = kiln_session_create(a, &o, &s);
  if (st != NULL) return fail_status("session", st);
  int failed = 0;
  KilnNpyTensor** owned = calloc((size_t)kiln_artifact_num_inputs(a) + 1, sizeof *owned);
  for (int32_t i = 0; i < kiln_artifact_num_inputs(a); ++i) {
    snprintf(path, sizeof path, "%s/input_%d.npy", dir, (int)i);
    if (access(path, R_OK) == 0) {
      st = kiln_npy_read(path, &owned[i]);
      if (st != NULL) return fail_status(path, st);
      st = kiln_session_set_input_index(s, i, &owned[i]->tensor);
    } else {
      const char* name = NULL;
      DLTensor info;
      st = kiln_artifact_input_info(a, i, &name, &info);
      if (st != NULL) return fail_status("input info", st);
      size_t bytes = (size_t)count(&info) * ((info.dtype.bits + 7) / 8);
      info.data = calloc(bytes ? bytes : 1, 1);
      st = kiln_session_set_input_index(s, i, &info);
      free(info.data);
    }
    if (st != NULL) return fail_status("set input", st);
  }
  if (strcmp(mode, "check") == 0) {
    const double rtol = argc > 4 ? atof(argv[4]) : 1e-3, atol = argc > 5 ? atof(argv[5]) : 1e-4;
    st = kiln_session_run(s);
    if (st != NULL) return fail_status("run", st);
    for (int32_t i = 0; i < kiln_artifact_num_outputs(a); ++i) {
      snprintf(path, sizeof path, "%s/expected_%d.npy", dir, (int)i);
      KilnNpyTensor* want = NULL;
      st = kiln_npy_read(path, &want);
      if (st != NULL) return fail_status(path, st);
      DLTensor got = want->tensor;
      size_t bytes = (size_t)count(&got) * ((got.dtype.bits + 7) / 8);
      got.data = malloc(bytes ? bytes : 1);
      st = kiln_session_copy_output(s, i, &got);
      if (st != NULL) return fail_status("copy output", st);
      double worst = 0;
      int64_t bad = 0;
      for (int64_t k = 0; k < count(&got); ++k) {
        double g = element(&got, k), w = element(&want->tensor, k);
        double err = fabs(g - w);
        if (isnan(g) != isnan(w) || err > atol + rtol * fabs(w)) ++bad;
        if (err > worst) worst = err;
      }
      printf("%s output %d: %lld elements, max |err| %.3g, %lld outside rtol %g atol %g: %s\n", dir,
             (int)i, (long long)count(&got), worst, (long long)bad, rtol, atol, bad ? "FAIL" : "ok");
      failed |= bad != 0;
      free(got.data);
      kiln_npy_release(want);
    }
  } else if (strcmp(mode, "bench") == 0 && argc > 4) {
    KilnBenchmarkOptions b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    b.warmup = 2;
    b.repeat = atoi(argv[4]);
    KilnBenchmarkResult r;
    st = kiln_session_benchmark(s, &b, &r, NULL);
    if (st != NULL) return fail_status("benchmark", st);
    const double flops = argc > 5 ? atof(argv[5]) : 0;
    printf("%s on %s: mean %.3f ms, min %.3f ms over %d runs", dir, argv[3], r.mean_ms, r.min_ms,
           (int)r.repeat);
    if (flops > 0) printf(", %.2f TFLOP/s (at the min)", flops / (r.min_ms * 1e-3) / 1e12);
    printf("\n");
  } else {
    fprintf(stderr, "unknown mode '%s'\n", mode);
    failed = 1;
  }
  for (int32_t i = 0; i < kiln_artifact_num_inputs(a); ++i) kiln_npy_release(owned[i]);
  free(owned);
  kiln_session_release(s);
  kiln_artifact_release(a);
  return failed;
}
