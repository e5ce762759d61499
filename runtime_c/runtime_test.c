/* File: runtime_c/runtime_test.c
 *
 * The loader and the graph executor (kiln/runtime.h) on hand-written
 * fixtures (runtime_c/testdata/rt_*, kernels in rt_kernels.c): load, run and
 * outputs; artifact accessors and memory stats; input and output checks;
 * NULL arguments and cleared out-parameters; zero-copy inputs; heads that
 * are inputs or parameters; run before inputs are set; kernel errors; session
 * options and pools; damaged files; malformed META / GRAPH.
 *
 * Arguments: the fixture paths ($(rootpath :rt_...)).
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp-free temp files: TEST_TMPDIR */

#include "kiln/runtime.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kiln/status.h"
#include "kiln/threadpool.h"
#include "runtime_c/runtime_test_util.h"

/* The inputs of rt_basic and what the graph computes from them. */
static float kX[6] = {1.0f, -2.0f, 3.0f, -4.0f, 5.0f, -6.0f};
static float kY[6] = {0.5f, 0.5f, -5.0f, 1.0f, 1.0f, 10.0f};
static const float kP0[6] = {0.5f, -1.0f, 2.0f, 0.25f, -3.0f, 1.5f};

static void basic_expected(const float* x, const float* y, float* out0, float* out1, float* relu) {
  for (int i = 0; i < 6; ++i) {
    float add0 = x[i] + y[i];
    float r = add0 > 0.0f ? add0 : 0.0f;
    float add1 = r + kP0[i];
    out0[i] = add1 + 1.0f;
    out1[i] = add1 * 2.0f;
    relu[i] = r;
  }
}

static int same_floats(const void* got, const float* want, int n) {
  return memcmp(got, want, sizeof(float) * (size_t)n) == 0;
}

static void check_basic_outputs(KilnSession* s, const float* x, const float* y) {
  float e0[6], e1[6], er[6];
  basic_expected(x, y, e0, e1, er);
  const float* want[3] = {e0, e1, er};
  for (int32_t i = 0; i < 3; ++i) {
    const DLTensor* out = NULL;
    if (!EXPECT_OK(kiln_session_get_output(s, i, &out))) continue;
    CHECK(out != NULL && out->ndim == 2 && out->shape[0] == 2 && out->shape[1] == 3);
    CHECK(out != NULL && out->dtype.code == kDLFloat && out->dtype.bits == 32);
    CHECK(out != NULL && out->device.device_type == kDLCPU && out->strides == NULL);
    CHECK(out != NULL && ((uintptr_t)out->data % 64) == 0);
    CHECK(out != NULL && same_floats(out->data, want[i], 6));
  }
}

/* ------------------------------------------------------------------------ */

static void test_basic(void) {
  KilnArtifact* a = load_fixture("rt_basic");
  CHECK(kiln_artifact_num_inputs(a) == 2);
  CHECK(kiln_artifact_num_outputs(a) == 3);
  CHECK(kiln_artifact_num_nodes(a) == 7);
  CHECK(strcmp(kiln_artifact_producer(a), "kiln 0.1.0") == 0);
  CHECK(strncmp(kiln_artifact_target(a), "llvm", 4) == 0);
  CHECK(kiln_artifact_graph_json(a)[0] == '{');
  CHECK(strstr(kiln_artifact_graph_json(a), "rt_split2_f32") != NULL);
  CHECK(strcmp(kiln_runtime_version(), "0.1.0") == 0);

  const char* name = NULL;
  DLTensor info;
  if (EXPECT_OK(kiln_artifact_input_info(a, 1, &name, &info))) {
    CHECK(strcmp(name, "y") == 0);
    CHECK(info.data == NULL && info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == 3);
    CHECK(info.dtype.code == kDLFloat && info.dtype.bits == 32 && info.dtype.lanes == 1);
  }
  if (EXPECT_OK(kiln_artifact_output_info(a, 2, &name, &info))) {
    CHECK(strcmp(name, "relu_out") == 0);
    CHECK(info.ndim == 2 && info.shape[1] == 3);
  }
  EXPECT_ERROR(kiln_artifact_output_info(a, 3, &name, &info), KILN_OUT_OF_RANGE, "output index 3");
  CHECK(name == NULL);
  int32_t index = -7;
  EXPECT_OK(kiln_artifact_input_index(a, "y", &index));
  CHECK(index == 1);
  EXPECT_ERROR(kiln_artifact_input_index(a, "nope", &index), KILN_NOT_FOUND, "'nope'", "'x', 'y'");
  CHECK(index == -1);

  /* One shared storage of 64 bytes holds add0 and add1 (24 bytes each). */
  uint64_t arena = 1, naive = 1;
  kiln_artifact_memory_stats(a, &arena, &naive);
  CHECK(arena == 64);
  CHECK(naive == 128);

  KilnSession* s = NULL;
  if (!EXPECT_OK(kiln_session_create(a, NULL, &s))) {
    kiln_artifact_release(a);
    return;
  }
  EXPECT_ERROR(kiln_session_run(s), KILN_FAILED_PRECONDITION, "input 'x'", "never set");
  int64_t shape[2] = {2, 3};
  DLTensor x = f32_tensor(kX, 2, shape);
  DLTensor y = f32_tensor(kY, 2, shape);
  EXPECT_OK(kiln_session_set_input(s, "x", &x));
  EXPECT_ERROR(kiln_session_run(s), KILN_FAILED_PRECONDITION, "input 'y'");
  EXPECT_OK(kiln_session_set_input_index(s, 1, &y));
  if (EXPECT_OK(kiln_session_run(s))) check_basic_outputs(s, kX, kY);
  /* Again: same results (the shared storage is rewritten each run). */
  if (EXPECT_OK(kiln_session_run(s))) check_basic_outputs(s, kX, kY);

  /* Copying an output out. */
  float buf[6] = {0};
  DLTensor dst = f32_tensor(buf, 2, shape);
  if (EXPECT_OK(kiln_session_copy_output(s, 2, &dst))) {
    float e0[6], e1[6], er[6];
    basic_expected(kX, kY, e0, e1, er);
    CHECK(same_floats(buf, er, 6));
  }
  int64_t wrong_shape[2] = {3, 2};
  DLTensor wrong = f32_tensor(buf, 2, wrong_shape);
  EXPECT_ERROR(kiln_session_copy_output(s, 0, &wrong), KILN_INVALID_ARGUMENT, "output 'output0'",
               "expected float32[2,3], got float32[3,2]");
  EXPECT_ERROR(kiln_session_copy_output(s, 5, &dst), KILN_OUT_OF_RANGE, "output index 5");
  const DLTensor* view = (const DLTensor*)&dst;
  EXPECT_ERROR(kiln_session_get_output(s, -1, &view), KILN_OUT_OF_RANGE, "output index -1");
  CHECK(view == NULL);

  /* Inputs keep their values: a new y changes the outputs. */
  float y2[6] = {9.0f, 9.0f, 9.0f, -9.0f, -9.0f, -9.0f};
  DLTensor y2t = f32_tensor(y2, 2, shape);
  EXPECT_OK(kiln_session_set_input(s, "y", &y2t));
  if (EXPECT_OK(kiln_session_run(s))) check_basic_outputs(s, kX, y2);

  kiln_session_release(s);
  kiln_artifact_release(a);
}

static void test_input_checks(void) {
  KilnArtifact* a = load_fixture("rt_basic");
  KilnSession* s = NULL;
  if (!EXPECT_OK(kiln_session_create(a, NULL, &s))) {
    kiln_artifact_release(a);
    return;
  }
  int64_t shape[2] = {2, 3};
  float data[8] = {0};
  DLTensor t = f32_tensor(data, 2, shape);

  DLTensor bad = t;
  bad.dtype.code = kDLInt;
  EXPECT_ERROR(kiln_session_set_input(s, "x", &bad), KILN_INVALID_ARGUMENT,
               "input 'x': expected float32[2,3], got int32[2,3]");
  int64_t shape24[2] = {2, 4};
  bad = f32_tensor(data, 2, shape24);
  EXPECT_ERROR(kiln_session_set_input(s, "x", &bad), KILN_INVALID_ARGUMENT,
               "input 'x': expected float32[2,3], got float32[2,4]");
  int64_t shape6[1] = {6};
  bad = f32_tensor(data, 1, shape6);
  EXPECT_ERROR(kiln_session_set_input(s, "y", &bad), KILN_INVALID_ARGUMENT,
               "input 'y': expected float32[2,3], got float32[6]");
  bad = t;
  bad.device.device_type = kDLCUDA;
  EXPECT_ERROR(kiln_session_set_input(s, "x", &bad), KILN_INVALID_ARGUMENT, "input 'x'", "CPU");
  bad = t;
  bad.data = NULL;
  EXPECT_ERROR(kiln_session_set_input(s, "x", &bad), KILN_INVALID_ARGUMENT, "input 'x'", "NULL");
  bad = t;
  bad.shape = NULL;
  EXPECT_ERROR(kiln_session_set_input(s, "x", &bad), KILN_INVALID_ARGUMENT, "input 'x'");
  int64_t strides_bad[2] = {1, 2}; /* column-major */
  bad = t;
  bad.strides = strides_bad;
  EXPECT_ERROR(kiln_session_set_input(s, "x", &bad), KILN_INVALID_ARGUMENT, "input 'x'", "strides");
  int64_t strides_ok[2] = {3, 1};
  bad = t;
  bad.strides = strides_ok;
  EXPECT_OK(kiln_session_set_input(s, "x", &bad));
  EXPECT_ERROR(kiln_session_set_input(s, "z", &t), KILN_NOT_FOUND, "'z'", "'x', 'y'");
  EXPECT_ERROR(kiln_session_set_input_index(s, 2, &t), KILN_OUT_OF_RANGE, "input index 2");
  EXPECT_ERROR(kiln_session_set_input_index(s, -1, &t), KILN_OUT_OF_RANGE, "input index -1");
  EXPECT_ERROR(kiln_session_set_input_zero_copy(s, "q", &t), KILN_NOT_FOUND, "'q'");

  /* byte_offset is honoured on copy. */
  float shifted[8] = {0, 0, 1, 2, 3, 4, 5, 6};
  DLTensor off = f32_tensor(shifted, 2, shape);
  off.byte_offset = 2 * sizeof(float);
  EXPECT_OK(kiln_session_set_input(s, "y", &off));
  EXPECT_OK(kiln_session_set_input(s, "x", &t));
  if (EXPECT_OK(kiln_session_run(s))) check_basic_outputs(s, data, shifted + 2);

  /* NULL arguments everywhere; out-parameters cleared. */
  EXPECT_ERROR(kiln_session_set_input(NULL, "x", &t), KILN_INVALID_ARGUMENT, "session");
  EXPECT_ERROR(kiln_session_set_input(s, NULL, &t), KILN_INVALID_ARGUMENT, "name");
  EXPECT_ERROR(kiln_session_set_input(s, "x", NULL), KILN_INVALID_ARGUMENT, "tensor");
  EXPECT_ERROR(kiln_session_set_input_zero_copy(NULL, "x", &t), KILN_INVALID_ARGUMENT, "session");
  EXPECT_ERROR(kiln_session_set_input_index(NULL, 0, &t), KILN_INVALID_ARGUMENT, "session");
  EXPECT_ERROR(kiln_session_set_input_index(s, 0, NULL), KILN_INVALID_ARGUMENT, "tensor");
  EXPECT_ERROR(kiln_session_run(NULL), KILN_INVALID_ARGUMENT, "session");
  const DLTensor* view = &t;
  EXPECT_ERROR(kiln_session_get_output(NULL, 0, &view), KILN_INVALID_ARGUMENT, "session");
  CHECK(view == NULL);
  EXPECT_ERROR(kiln_session_get_output(s, 0, NULL), KILN_INVALID_ARGUMENT, "out");
  EXPECT_ERROR(kiln_session_copy_output(NULL, 0, &t), KILN_INVALID_ARGUMENT, "session");
  EXPECT_ERROR(kiln_session_copy_output(s, 0, NULL), KILN_INVALID_ARGUMENT, "dst");

  KilnArtifact* a2 = (KilnArtifact*)&t;
  EXPECT_ERROR(kiln_artifact_load(NULL, &a2), KILN_INVALID_ARGUMENT, "path");
  CHECK(a2 == NULL);
  EXPECT_ERROR(kiln_artifact_load(fixture("rt_basic"), NULL), KILN_INVALID_ARGUMENT, "out");
  KilnSession* s2 = (KilnSession*)&t;
  EXPECT_ERROR(kiln_session_create(NULL, NULL, &s2), KILN_INVALID_ARGUMENT, "artifact");
  CHECK(s2 == NULL);
  EXPECT_ERROR(kiln_session_create(a, NULL, NULL), KILN_INVALID_ARGUMENT, "out");
  const char* name = "junk";
  DLTensor info;
  memset(&info, 0xab, sizeof info);
  EXPECT_ERROR(kiln_artifact_input_info(NULL, 0, &name, &info), KILN_INVALID_ARGUMENT, "artifact");
  CHECK(name == NULL && info.data == NULL && info.shape == NULL && info.ndim == 0);
  EXPECT_OK(kiln_artifact_input_info(a, 0, NULL, NULL));
  int32_t index = 5;
  EXPECT_ERROR(kiln_artifact_input_index(NULL, "x", &index), KILN_INVALID_ARGUMENT, "artifact");
  CHECK(index == -1);
  EXPECT_ERROR(kiln_artifact_input_index(a, NULL, &index), KILN_INVALID_ARGUMENT, "name");
  EXPECT_ERROR(kiln_artifact_input_index(a, "x", NULL), KILN_INVALID_ARGUMENT, "index");
  CHECK(kiln_artifact_num_inputs(NULL) == 0);
  CHECK(kiln_artifact_num_outputs(NULL) == 0);
  CHECK(kiln_artifact_num_nodes(NULL) == 0);
  CHECK(kiln_artifact_target(NULL) != NULL && kiln_artifact_producer(NULL) != NULL);
  CHECK(kiln_artifact_graph_json(NULL) != NULL);
  uint64_t arena = 9, naive = 9;
  kiln_artifact_memory_stats(NULL, &arena, &naive);
  CHECK(arena == 0 && naive == 0);
  kiln_artifact_memory_stats(a, NULL, NULL);
  kiln_artifact_release(NULL);
  kiln_session_release(NULL);
  kiln_free(NULL);

  kiln_session_release(s);
  kiln_artifact_release(a);
}

static void test_options(void) {
  KilnArtifact* a = load_fixture("rt_par");
  int64_t shape[2] = {4, 1000};
  static float x[4000];
  static float want[4000];
  for (int i = 0; i < 4000; ++i) {
    x[i] = (float)(i % 37) - 18.0f;
    float s1 = x[i] * 3.0f + 0.5f;
    float r = s1 > 0.0f ? s1 : 0.0f;
    want[i] = r * 3.0f + 0.5f;
  }
  DLTensor xt = f32_tensor(x, 2, shape);

  KilnSessionOptions opts;
  memset(&opts, 0, sizeof opts);
  KilnSession* s = (KilnSession*)&opts;
  EXPECT_ERROR(kiln_session_create(a, &opts, &s), KILN_INVALID_ARGUMENT, "struct_size");
  CHECK(s == NULL);
  opts.struct_size = sizeof opts;
  opts.num_threads = -1;
  EXPECT_ERROR(kiln_session_create(a, &opts, &s), KILN_INVALID_ARGUMENT, "num_threads");
  opts.num_threads = KILN_THREAD_POOL_MAX_THREADS + 1;
  EXPECT_ERROR(kiln_session_create(a, &opts, &s), KILN_INVALID_ARGUMENT, "num_threads");

  /* Serial, 2 threads, default, a shared pool, and an older (smaller) struct. */
  KilnThreadPool* pool = NULL;
  CHECK(kiln_thread_pool_create(3, &pool) == 0);
  const int32_t threads[5] = {1, 2, 0, -5, 1};
  for (int k = 0; k < 5; ++k) {
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.num_threads = threads[k];
    if (k == 3) opts.pool = pool; /* num_threads is ignored with a pool */
    if (k == 4) opts.struct_size = offsetof(KilnSessionOptions, num_threads) + sizeof(int32_t);
    s = NULL;
    if (!EXPECT_OK(kiln_session_create(a, &opts, &s))) continue;
    EXPECT_OK(kiln_session_set_input(s, "x", &xt));
    for (int run = 0; run < 3; ++run) {
      if (!EXPECT_OK(kiln_session_run(s))) break;
      const DLTensor* out = NULL;
      if (EXPECT_OK(kiln_session_get_output(s, 0, &out))) CHECK(same_floats(out->data, want, 4000));
    }
    kiln_session_release(s);
  }
  kiln_thread_pool_destroy(pool);
  kiln_artifact_release(a);
}

static void test_zero_copy(void) {
  KilnArtifact* a = load_fixture("rt_basic");
  KilnSession* s = NULL;
  if (!EXPECT_OK(kiln_session_create(a, NULL, &s))) {
    kiln_artifact_release(a);
    return;
  }
  int64_t shape[2] = {2, 3};
  _Alignas(64) float x[6];
  _Alignas(64) float y[6];
  memcpy(x, kX, sizeof x);
  memcpy(y, kY, sizeof y);
  DLTensor xt = f32_tensor(x, 2, shape);
  DLTensor yt = f32_tensor(y, 2, shape);
  EXPECT_OK(kiln_session_set_input_zero_copy(s, "x", &xt));
  EXPECT_OK(kiln_session_set_input_zero_copy(s, "y", &yt));
  if (EXPECT_OK(kiln_session_run(s))) check_basic_outputs(s, x, y);
  /* The session reads the caller's memory: changing it changes the result. */
  x[0] = 100.0f;
  y[5] = -100.0f;
  if (EXPECT_OK(kiln_session_run(s))) check_basic_outputs(s, x, y);

  /* Misaligned data is refused. */
  _Alignas(64) unsigned char raw[64];
  DLTensor mis = f32_tensor((float*)(void*)(raw + 1), 2, shape);
  EXPECT_ERROR(kiln_session_set_input_zero_copy(s, "x", &mis), KILN_INVALID_ARGUMENT, "input 'x'",
               "aligned");
  mis = f32_tensor((float*)(void*)raw, 2, shape);
  mis.byte_offset = 2;
  EXPECT_ERROR(kiln_session_set_input_zero_copy(s, "x", &mis), KILN_INVALID_ARGUMENT, "aligned");

  /* Setting by copy again detaches from the caller's memory. */
  EXPECT_OK(kiln_session_set_input(s, "x", &xt));
  float saved[6];
  memcpy(saved, x, sizeof saved);
  x[1] = 55.0f;
  if (EXPECT_OK(kiln_session_run(s))) check_basic_outputs(s, saved, y);
  kiln_session_release(s);
  kiln_artifact_release(a);
}

static void test_heads_input_param(void) {
  KilnArtifact* a = load_fixture("rt_head_io");
  CHECK(kiln_artifact_num_inputs(a) == 1);
  CHECK(kiln_artifact_num_outputs(a) == 3);
  uint64_t arena = 1, naive = 1;
  kiln_artifact_memory_stats(a, &arena, &naive);
  CHECK(arena == 0 && naive == 0);
  KilnSession* s = NULL;
  if (!EXPECT_OK(kiln_session_create(a, NULL, &s))) {
    kiln_artifact_release(a);
    return;
  }
  int64_t shape[2] = {2, 3};
  _Alignas(64) float x[6];
  memcpy(x, kX, sizeof x);
  DLTensor xt = f32_tensor(x, 2, shape);
  for (int zero_copy = 0; zero_copy < 2; ++zero_copy) {
    EXPECT_OK(zero_copy ? kiln_session_set_input_zero_copy(s, "x", &xt)
                        : kiln_session_set_input(s, "x", &xt));
    if (!EXPECT_OK(kiln_session_run(s))) continue;
    const DLTensor* out = NULL;
    if (EXPECT_OK(kiln_session_get_output(s, 0, &out))) {
      CHECK(same_floats(out->data, x, 6));
      CHECK((out->data == (void*)x) == (zero_copy == 1));
    }
    if (EXPECT_OK(kiln_session_get_output(s, 1, &out))) CHECK(same_floats(out->data, kP0, 6));
    float r[6];
    for (int i = 0; i < 6; ++i) r[i] = x[i] > 0.0f ? x[i] : 0.0f;
    if (EXPECT_OK(kiln_session_get_output(s, 2, &out))) CHECK(same_floats(out->data, r, 6));
    float buf[6] = {0};
    DLTensor dst = f32_tensor(buf, 2, shape);
    if (EXPECT_OK(kiln_session_copy_output(s, 1, &dst))) CHECK(same_floats(buf, kP0, 6));
    /* Copying an output onto the very memory it views is fine. */
    EXPECT_OK(kiln_session_copy_output(s, 0, &xt));
    CHECK(same_floats(x, kX, 6));
  }
  kiln_session_release(s);
  kiln_artifact_release(a);
}

static void test_kernel_error(void) {
  KilnArtifact* a = load_fixture("rt_fail");
  KilnSession* s = NULL;
  if (!EXPECT_OK(kiln_session_create(a, NULL, &s))) {
    kiln_artifact_release(a);
    return;
  }
  int64_t shape[2] = {2, 3};
  DLTensor xt = f32_tensor(kX, 2, shape);
  EXPECT_OK(kiln_session_set_input(s, "x", &xt));
  for (int i = 0; i < 2; ++i) {
    EXPECT_ERROR(kiln_session_run(s), KILN_INTERNAL, "node 'boom'", "'rt_fail'",
                 "this kernel always fails", "code -1");
  }
  kiln_session_release(s);
  kiln_artifact_release(a);
}

/* ------------------------------------------------------------------------ */
/* Damaged and malformed files                                                */

static char* temp_path(const char* name) {
  const char* dir = getenv("TEST_TMPDIR");
  if (dir == NULL) dir = "/tmp";
  size_t n = strlen(dir) + strlen(name) + 2;
  char* p = (char*)malloc(n);
  if (p != NULL) (void)snprintf(p, n, "%s/%s", dir, name);
  return p;
}

static unsigned char* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* data = (unsigned char*)malloc(n > 0 ? (size_t)n : 1);
  if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

static void write_all(const char* path, const unsigned char* data, size_t size) {
  FILE* f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f == NULL) return;
  CHECK(fwrite(data, 1, size, f) == size);
  fclose(f);
}

static void test_damaged_files(void) {
  KilnArtifact* a = (KilnArtifact*)&failures;
  EXPECT_ERROR(kiln_artifact_load("/nonexistent/dir/model.so", &a), KILN_NOT_FOUND,
               "/nonexistent/dir/model.so");
  CHECK(a == NULL);
  EXPECT_ERROR(kiln_artifact_load("/dev/null", &a), KILN_DATA_LOSS, "/dev/null",
               "not a kiln artifact");
  /* Issue 15: a FIFO is refused at once (opening it used to wait for a
   * writer forever: the alarm then ends the test with SIGALRM), and so is a
   * device, named plainly. */
  {
    char* fifo = temp_path("fifo.so");
    if (fifo != NULL) {
      (void)unlink(fifo);
      CHECK(mkfifo(fifo, 0600) == 0);
      alarm(20);
      EXPECT_ERROR(kiln_artifact_load(fifo, &a), KILN_DATA_LOSS, fifo,
                   "not a regular file: a FIFO");
      alarm(0);
      CHECK(a == NULL);
      (void)unlink(fifo);
      free(fifo);
    }
    EXPECT_ERROR(kiln_artifact_load("/dev/zero", &a), KILN_DATA_LOSS, "/dev/zero",
                 "not a regular file: a character device");
  }

  size_t size = 0;
  unsigned char* good = read_all(fixture("rt_basic"), &size);
  CHECK(good != NULL && size > 4096);
  if (good == NULL) return;
  char* path = temp_path("damaged.so");
  if (path == NULL) {
    free(good);
    return;
  }
  /* Garbage. */
  unsigned char junk[512];
  for (size_t i = 0; i < sizeof junk; ++i) junk[i] = (unsigned char)(i * 7 + 3);
  write_all(path, junk, sizeof junk);
  EXPECT_ERROR(kiln_artifact_load(path, &a), KILN_DATA_LOSS, path);
  /* Truncated. */
  write_all(path, good, size - 100);
  EXPECT_ERROR(kiln_artifact_load(path, &a), KILN_DATA_LOSS, path);
  /* One byte changed near the end (in the section headers / tail). */
  good[size - 40] ^= 0x5a;
  write_all(path, good, size);
  EXPECT_ERROR(kiln_artifact_load(path, &a), KILN_DATA_LOSS, path);
  good[size - 40] ^= 0x5a;
  /* One byte changed in the middle: only the checksum can tell. */
  good[size / 2] ^= 0x01;
  write_all(path, good, size);
  EXPECT_ERROR(kiln_artifact_load(path, &a), KILN_DATA_LOSS, path, "checksum");
  good[size / 2] ^= 0x01;
  /* Trailing bytes. */
  {
    unsigned char* longer = (unsigned char*)malloc(size + 64);
    CHECK(longer != NULL);
    if (longer != NULL) {
      memcpy(longer, good, size);
      memset(longer + size, 0, 64);
      write_all(path, longer, size + 64);
      EXPECT_ERROR(kiln_artifact_load(path, &a), KILN_DATA_LOSS, path);
      free(longer);
    }
  }
  /* The intact copy loads, also from a path without '/' (dlopen must not
   * search the library path for it). */
  write_all(path, good, size);
  KilnArtifact* ok = NULL;
  if (EXPECT_OK(kiln_artifact_load(path, &ok))) kiln_artifact_release(ok);
  char cwd[4096];
  const char* dir = getenv("TEST_TMPDIR");
  if (getcwd(cwd, sizeof cwd) != NULL && chdir(dir != NULL ? dir : "/tmp") == 0) {
    ok = NULL;
    if (EXPECT_OK(kiln_artifact_load("damaged.so", &ok))) {
      CHECK(kiln_artifact_num_nodes(ok) == 7);
      kiln_artifact_release(ok);
    }
    CHECK(chdir(cwd) == 0);
  }
  CHECK(a == NULL);
  free(path);
  free(good);
}

typedef struct {
  const char* fixture;
  KilnStatusCode code;
  const char* sub1;
  const char* sub2;
} BadCase;

static void test_malformed(void) {
  static const BadCase cases[] = {
      {"rt_bad_json", KILN_DATA_LOSS, "GRAPH section is not valid JSON", "byte"},
      {"rt_bad_node_index", KILN_DATA_LOSS, "node 4 ('relu0')", "out of range"},
      {"rt_bad_func_name", KILN_DATA_LOSS, "node 4 ('relu0')", "func_name"},
      {"rt_bad_symbol", KILN_NOT_FOUND, "node 4 ('relu0')", "'rt_no_such_kernel'"},
      {"rt_bad_storage", KILN_DATA_LOSS, "storage_id[4]", "[0, 8)"},
      {"rt_bad_dltype", KILN_DATA_LOSS, "dltype[3]", "'float13'"},
      {"rt_bad_param_shape", KILN_DATA_LOSS, "('rt_p0')",
       "float32[3,2] in the graph but float32[2,3]"},
      {"rt_bad_topo", KILN_DATA_LOSS, "node 4 ('relu0')", "topological"},
      {"rt_bad_shared_input", KILN_DATA_LOSS, "storage 0", "a graph input"},
      {"rt_bad_live", KILN_DATA_LOSS, "storage 4", "while both are live"},
      {"rt_bad_num_inputs", KILN_DATA_LOSS, "node 5 ('add1')", "num_inputs is 3"},
      {"rt_bad_meta", KILN_DATA_LOSS, "META", "'producer'"},
      {"rt_bad_input_names", KILN_DATA_LOSS, "input_names[1]", "'z'"},
      {"rt_bad_abi", KILN_UNIMPLEMENTED, "kernel_abi_version is 2", "version 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const char* path = fixture(cases[i].fixture);
    KilnArtifact* a = (KilnArtifact*)&failures;
    KilnStatus* st = kiln_artifact_load(path, &a);
    CHECK(a == NULL);
    if (st != NULL && getenv("RT_VERBOSE") != NULL) {
      fprintf(stderr, "%s: %s\n", cases[i].fixture, kiln_status_message(st));
    }
    EXPECT_ERROR(st, cases[i].code, path, cases[i].sub1, cases[i].sub2);
  }
}

int main(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
  test_basic();
  test_input_checks();
  test_options();
  test_zero_copy();
  test_heads_input_param();
  test_kernel_error();
  test_damaged_files();
  test_malformed();
  return test_main_end("runtime_test");
}
