/* tests/ffi/c/main.c: libkiln.so end to end through its C ABI.
 *
 *   main MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR
 *
 * Imports an ONNX model, compiles it to WORKDIR/model.so, loads that artifact,
 * runs one session on INPUT.npy and compares the output with EXPECTED.npy
 * (|a-b| <= 1e-4 + 1e-4*|b|); checks the DLPack copy of the output and one
 * error path (an input of the wrong shape). The same program exists in Rust,
 * Go and Python, written with those languages' kiln packages
 * (rust/kiln/examples/resnet_mini.rs, go/examples/resnet_mini,
 * python/examples/resnet_mini.py). Exits 0 only if every check passed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln.h"

static int g_failures = 0;

static void fail(const char* what) {
  fprintf(stderr, "FAIL: %s\n", what);
  ++g_failures;
}

/* Checks a status: NULL is success; otherwise prints it, frees it, counts a
 * failure and returns 0. */
static int ok(KilnStatus* st, const char* what) {
  if (st == NULL) return 1;
  fprintf(stderr, "FAIL: %s: %s: %s\n", what, kiln_status_code_name(kiln_status_code(st)),
          kiln_status_message(st));
  kiln_status_free(st);
  ++g_failures;
  return 0;
}

static void print_shape(const DLTensor* t) {
  printf("[");
  for (int32_t i = 0; i < t->ndim; ++i) printf("%s%lld", i ? ", " : "", (long long)t->shape[i]);
  printf("] dtype code=%u bits=%u lanes=%u", (unsigned)t->dtype.code, (unsigned)t->dtype.bits,
         (unsigned)t->dtype.lanes);
}

static int64_t num_elements(const DLTensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static int is_float32(const DLTensor* t) {
  return t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1;
}

static int same_shape(const DLTensor* a, const DLTensor* b) {
  if (a->ndim != b->ndim) return 0;
  for (int32_t i = 0; i < a->ndim; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/* strides NULL, or the compact row-major strides. */
static int is_compact(const DLTensor* t) {
  if (t->strides == NULL) return 1;
  int64_t expect = 1;
  for (int32_t i = t->ndim - 1; i >= 0; --i) {
    if (t->shape[i] != 1 && t->strides[i] != expect) return 0;
    expect *= t->shape[i];
  }
  return 1;
}

static const float* f32_data(const DLTensor* t) {
  return (const float*)((const char*)t->data + t->byte_offset);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s MODEL.onnx INPUT.npy EXPECTED.npy WORKDIR\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char* model_path = argv[1];
  const char* input_path = argv[2];
  const char* expected_path = argv[3];
  const char* workdir = argv[4];
  char so_path[4096];
  snprintf(so_path, sizeof so_path, "%s/model.so", workdir);

  /* 2. Versions. */
  printf("kiln_version: %s\n", kiln_version());
  printf("kiln_api_version: %u (built against KILN_API_VERSION %d)\n",
         (unsigned)kiln_api_version(), KILN_API_VERSION);
  if (kiln_api_version() < KILN_API_VERSION) fail("kiln_api_version() < KILN_API_VERSION");

  /* 3. Import and compile. */
  KilnModel* model = NULL;
  KilnArtifact* artifact = NULL;
  KilnSession* session = NULL;
  KilnNpyTensor* input = NULL;
  KilnNpyTensor* expected = NULL;

  if (!ok(kiln_model_load_onnx_file(model_path, NULL, &model), "kiln_model_load_onnx_file"))
    goto done;
  int32_t model_inputs = 0;
  if (ok(kiln_model_num_inputs(model, &model_inputs), "kiln_model_num_inputs")) {
    printf("model inputs: %d\n", model_inputs);
    if (model_inputs != 1) fail("the model should have 1 input");
    for (int32_t i = 0; i < model_inputs; ++i) {
      const char* name = NULL;
      DLTensor info;
      memset(&info, 0, sizeof info);
      if (!ok(kiln_model_input_info(model, i, &name, &info), "kiln_model_input_info")) continue;
      printf("  model input %d: %s ", i, name ? name : "(null)");
      print_shape(&info);
      printf("\n");
    }
  }

  KilnCompileOptions options;
  memset(&options, 0, sizeof options);
  options.struct_size = sizeof options;
  options.opt_level = 3;
  KilnCompileReport report;
  memset(&report, 0, sizeof report);
  report.struct_size = sizeof report;
  if (!ok(kiln_model_compile(model, &options, so_path, &report), "kiln_model_compile")) goto done;
  printf("compiled %s: num_kernels=%d file_bytes=%llu\n", so_path, report.num_kernels,
         (unsigned long long)report.file_bytes);
  if (report.num_kernels <= 0) fail("report.num_kernels should be > 0");
  if (report.file_bytes == 0) fail("report.file_bytes should be > 0");

  /* 4. Release the model; load the artifact. */
  kiln_model_release(model);
  model = NULL;
  if (!ok(kiln_artifact_load(so_path, &artifact), "kiln_artifact_load")) goto done;
  int32_t n_in = kiln_artifact_num_inputs(artifact);
  int32_t n_out = kiln_artifact_num_outputs(artifact);
  printf("artifact: %d input(s), %d output(s)\n", n_in, n_out);
  if (n_in != 1) fail("the artifact should have 1 input");
  if (n_out != 1) fail("the artifact should have 1 output");
  {
    const char* name = NULL;
    DLTensor info;
    memset(&info, 0, sizeof info);
    if (ok(kiln_artifact_input_info(artifact, 0, &name, &info), "kiln_artifact_input_info")) {
      printf("  artifact input 0: %s ", name ? name : "(null)");
      print_shape(&info);
      printf("\n");
      static const int64_t want[4] = {1, 3, 32, 32};
      if (name == NULL || strcmp(name, "input") != 0) fail("artifact input 0 should be \"input\"");
      if (!is_float32(&info)) fail("artifact input 0 should be float32");
      if (info.ndim != 4 || memcmp(info.shape, want, sizeof want) != 0)
        fail("artifact input 0 should have shape [1, 3, 32, 32]");
    }
  }
  if (!ok(kiln_session_create(artifact, NULL, &session), "kiln_session_create")) goto done;

  /* 5. Input, run, output. */
  if (!ok(kiln_npy_read(input_path, &input), "kiln_npy_read(input)")) goto done;
  if (!ok(kiln_npy_read(expected_path, &expected), "kiln_npy_read(expected)")) goto done;
  if (!is_float32(&expected->tensor)) {
    fail("EXPECTED.npy should be float32");
    goto done;
  }
  if (!ok(kiln_session_set_input(session, "input", &input->tensor), "kiln_session_set_input"))
    goto done;
  if (!ok(kiln_session_run(session), "kiln_session_run")) goto done;
  const DLTensor* out = NULL;
  if (!ok(kiln_session_get_output(session, 0, &out), "kiln_session_get_output")) goto done;
  if (out == NULL) {
    fail("kiln_session_get_output gave NULL");
    goto done;
  }
  printf("output 0: ");
  print_shape(out);
  printf("\n");
  int64_t n = num_elements(out);
  if (out->device.device_type != kDLCPU) fail("output 0 should be on the CPU");
  if (!is_float32(out)) {
    fail("output 0 should be float32");
  } else if (!same_shape(out, &expected->tensor)) {
    fail("output 0 shape differs from EXPECTED.npy");
  } else if (!is_compact(out)) {
    fail("output 0 should be compact");
  } else {
    const float* a = f32_data(out);
    const float* b = f32_data(&expected->tensor);
    double max_err = 0.0;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      double err = fabs((double)a[i] - (double)b[i]);
      if (!(err <= 1e-4 + 1e-4 * fabs((double)b[i]))) {
        if (bad < 5)
          fprintf(stderr, "mismatch at %lld: got %.8g, expected %.8g\n", (long long)i,
                  (double)a[i], (double)b[i]);
        ++bad;
      }
      if (err > max_err || err != err) max_err = err;
    }
    printf("compared %lld elements: max abs error %.3g\n", (long long)n, max_err);
    if (bad) fail("output 0 differs from EXPECTED.npy");
  }

  /* The DLPack copy must equal the view. */
  {
    DLManagedTensor* managed = NULL;
    if (ok(kiln_session_get_output_dlpack(session, 0, &managed),
           "kiln_session_get_output_dlpack")) {
      if (managed == NULL) {
        fail("kiln_session_get_output_dlpack gave NULL");
      } else {
        const DLTensor* m = &managed->dl_tensor;
        if (m->device.device_type != kDLCPU) fail("dlpack output should be on the CPU");
        if (!is_float32(m) || !same_shape(m, out) || !is_compact(m)) {
          fail("dlpack output dtype/shape differs from the view");
        } else if (memcmp(f32_data(m), f32_data(out), (size_t)n * sizeof(float)) != 0) {
          fail("dlpack output data differs from the view");
        } else {
          printf("dlpack output equals the view\n");
        }
        if (managed->deleter == NULL) {
          fail("dlpack output has no deleter");
        } else {
          managed->deleter(managed);
        }
      }
    }
  }

  /* 6. One error path: an input of the wrong shape. */
  {
    static float small[1 * 3 * 16 * 16];
    int64_t shape[4] = {1, 3, 16, 16};
    DLTensor t;
    memset(&t, 0, sizeof t);
    t.data = small;
    t.device.device_type = kDLCPU;
    t.device.device_id = 0;
    t.ndim = 4;
    t.dtype.code = kDLFloat;
    t.dtype.bits = 32;
    t.dtype.lanes = 1;
    t.shape = shape;
    t.strides = NULL;
    t.byte_offset = 0;
    KilnStatus* st = kiln_session_set_input(session, "input", &t);
    if (st == NULL) {
      fail("kiln_session_set_input with shape [1, 3, 16, 16] should fail");
    } else {
      const char* msg = kiln_status_message(st);
      printf("wrong shape: %s: %s\n", kiln_status_code_name(kiln_status_code(st)), msg);
      if (kiln_status_code(st) != KILN_INVALID_ARGUMENT)
        fail("wrong shape: the status code should be KILN_INVALID_ARGUMENT (3)");
      if (msg == NULL || strstr(msg, "input") == NULL)
        fail("wrong shape: the message should mention \"input\"");
      kiln_status_free(st);
    }
  }

done:
  /* 7. Release everything. */
  kiln_npy_release(expected);
  kiln_npy_release(input);
  kiln_session_release(session);
  kiln_artifact_release(artifact);
  kiln_model_release(model);
  if (g_failures) {
    fprintf(stderr, "c: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("c: all checks passed\n");
  return 0;
}
