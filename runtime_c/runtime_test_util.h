/* File: runtime_c/runtime_test_util.h  (tests of :runtime only)
 *
 * Tiny helpers for the runtime's plain-C tests: CHECK / EXPECT_OK /
 * EXPECT_ERROR that count failures, and fixture lookup by name among the
 * test's arguments (each fixture is passed as `$(rootpath :rt_name)`).
 * Only kiln/runtime.h and kiln/status.h are used, so the test linked with
 * libkiln_runtime.so can use it too.
 */
#ifndef KILN_RUNTIME_C_RUNTIME_TEST_UTIL_H_
#define KILN_RUNTIME_C_RUNTIME_TEST_UTIL_H_

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime_c/c_test_util.h"

static int g_argc = 0;
static char** g_argv = NULL;


/* Consumes `st`: fails when it is not NULL. Evaluates to 1 when OK. */
#define EXPECT_OK(expr) expect_ok_at((expr), __FILE__, __LINE__, #expr)

static inline int expect_ok_at(KilnStatus* st, const char* file, int line, const char* what) {
  if (st == NULL) return 1;
  fprintf(stderr, "%s:%d: %s failed: %s: %s\n", file, line, what,
          kiln_status_code_name(kiln_status_code(st)), kiln_status_message(st));
  kiln_status_free(st);
  ++failures;
  return 0;
}

/* Consumes `st`: fails unless it has `code` and every NULL-terminated
 * substring in its message. */
#define EXPECT_ERROR(expr, code, ...) \
  expect_error_at((expr), (code), __FILE__, __LINE__, #expr, __VA_ARGS__, (const char*)NULL)

static inline void expect_error_at(KilnStatus* st, KilnStatusCode code, const char* file, int line,
                                   const char* what, ...) {
  if (st == NULL) {
    fprintf(stderr, "%s:%d: %s succeeded, expected %s\n", file, line, what,
            kiln_status_code_name(code));
    ++failures;
    return;
  }
  const char* msg = kiln_status_message(st);
  if (kiln_status_code(st) != code) {
    fprintf(stderr, "%s:%d: %s gave %s (%s), expected %s\n", file, line, what,
            kiln_status_code_name(kiln_status_code(st)), msg, kiln_status_code_name(code));
    ++failures;
  }
  va_list args;
  va_start(args, what);
  for (const char* sub = va_arg(args, const char*); sub != NULL; sub = va_arg(args, const char*)) {
    if (strstr(msg, sub) == NULL) {
      fprintf(stderr, "%s:%d: %s: message \"%s\" lacks \"%s\"\n", file, line, what, msg, sub);
      ++failures;
    }
  }
  va_end(args);
  kiln_status_free(st);
}

/* The argument naming fixture `name` (".../<name>.so"), or exits. */
static inline const char* fixture(const char* name) {
  char want[256];
  (void)snprintf(want, sizeof want, "/%s.so", name);
  size_t wn = strlen(want);
  for (int i = 1; i < g_argc; ++i) {
    size_t n = strlen(g_argv[i]);
    if (n >= wn && strcmp(g_argv[i] + n - wn, want) == 0) return g_argv[i];
    if (strcmp(g_argv[i], want + 1) == 0) return g_argv[i];
  }
  fprintf(stderr, "fixture %s.so not among the arguments\n", name);
  exit(2);
}

static inline KilnArtifact* load_fixture(const char* name) {
  KilnArtifact* a = NULL;
  KilnStatus* st = kiln_artifact_load(fixture(name), &a);
  if (st != NULL) {
    fprintf(stderr, "loading %s: %s\n", name, kiln_status_message(st));
    kiln_status_free(st);
    exit(1);
  }
  return a;
}

/* A CPU float32 tensor over `data`. */
static inline DLTensor f32_tensor(float* data, int32_t ndim, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

static inline int test_main_end(const char* name) {
  if (failures != 0) {
    fprintf(stderr, "%s: %d failure(s)\n", name, failures);
    return 1;
  }
  printf("%s: all passed\n", name);
  return 0;
}

#endif /* KILN_RUNTIME_C_RUNTIME_TEST_UTIL_H_ */
