/* Runs a model through a selective build of libkiln.so and checks that what
 * the build leaves out says so (docs/selective_builds.md).
 *
 *   variant_check text_llvm DIR         text IR -> 5 passes -> LLVM -> artifact
 *                                       in DIR -> the runtime; no ONNX, no
 *                                       FoldScaleAxis
 *   variant_check onnx_graph M.onnx R.onnx
 *                                       ONNX import + the O3 pipeline of M;
 *                                       R (ReduceMean) needs an absent family;
 *                                       no compile, no text parser
 * Exit 0 when every check holds; each failure is printed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kiln.h"

static int failures = 0;

#define CHECK(cond, ...)                          \
  do {                                            \
    if (!(cond)) {                                \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);               \
      fprintf(stderr, "\n");                      \
      ++failures;                                 \
    }                                             \
  } while (0)

/* st succeeded; prints and frees it otherwise. */
static int ok(KilnStatus* st, const char* what) {
  if (st == NULL) return 1;
  fprintf(stderr, "FAIL %s: %s\n", what, kiln_status_message(st));
  kiln_status_free(st);
  ++failures;
  return 0;
}

/* st is an error with `code` whose message contains `text`. */
static void expect_error(KilnStatus* st, KilnStatusCode code, const char* text, const char* what) {
  if (st == NULL) {
    fprintf(stderr, "FAIL %s: succeeded, expected an error containing '%s'\n", what, text);
    ++failures;
    return;
  }
  CHECK(kiln_status_code(st) == code, "%s: code %s, expected %s (%s)", what,
        kiln_status_code_name(kiln_status_code(st)), kiln_status_code_name(code),
        kiln_status_message(st));
  CHECK(strstr(kiln_status_message(st), text) != NULL, "%s: message '%s' lacks '%s'", what,
        kiln_status_message(st), text);
  printf("%s: %s\n", what, kiln_status_message(st));
  kiln_status_free(st);
}

static const char kModel[] =
    "#[version = \"0.1\"]\n"
    "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), "
    "float32] {\n"
    "  %0 = add(%x, %y);\n"
    "  %1 = multiply(%0, 2f);\n"
    "  nn.relu(%1)\n"
    "}\n";

static int text_llvm(const char* dir) {
  KilnModel* model = NULL;
  if (!ok(kiln_model_parse_text(kModel, "variant.kir", &model), "parse")) return 1;

  /* The build's passes, and the ones it leaves out. */
  int32_t n = kiln_pass_count();
  CHECK(n == 5, "kiln_pass_count() = %d, expected the build's 5 passes", (int)n);
  KilnOptimizeOptions oo;
  kiln_optimize_options_init(&oo);
  const char* absent[] = {"InferType", "FoldScaleAxis"};
  oo.passes = absent;
  oo.num_passes = 2;
  KilnModel* opt = NULL;
  expect_error(kiln_model_optimize(model, &oo, &opt), KILN_UNIMPLEMENTED,
               "pass FoldScaleAxis is not in this build", "optimize with FoldScaleAxis");
  CHECK(opt == NULL, "out model set on error");
  kiln_optimize_options_init(&oo);
  if (ok(kiln_model_optimize(model, &oo, &opt), "default pipeline")) kiln_model_release(opt);
  /* Disabling a pass the build leaves out is fine; requiring one is not. */
  const char* off[] = {"FoldScaleAxis"};
  oo.disabled_passes = off;
  oo.num_disabled_passes = 1;
  if (ok(kiln_model_optimize(model, &oo, &opt), "disable an absent pass")) kiln_model_release(opt);
  kiln_optimize_options_init(&oo);
  oo.required_passes = off;
  oo.num_required_passes = 1;
  expect_error(kiln_model_optimize(model, &oo, &opt), KILN_UNIMPLEMENTED,
               "pass FoldScaleAxis is not in this build", "require an absent pass");

  /* No ONNX frontend. */
  KilnModel* onnx = NULL;
  static const char bytes[] = "\x08\x07";
  expect_error(kiln_model_load_onnx_bytes(bytes, 2, NULL, &onnx), KILN_UNIMPLEMENTED,
               "the ONNX frontend is not in this build", "load ONNX");
  CHECK(onnx == NULL, "out model set on error");

  /* Compile, load, run. */
  char path[4096];
  snprintf(path, sizeof path, "%s/variant_model.so", dir);
  KilnCompileOptions co;
  kiln_compile_options_init(&co);
  co.disabled_passes = off;
  co.num_disabled_passes = 1;
  if (!ok(kiln_model_compile(model, &co, path, NULL), "compile")) return 1;
  kiln_model_release(model);

  KilnArtifact* art = NULL;
  KilnSession* s = NULL;
  if (!ok(kiln_artifact_load(path, &art), "load artifact")) return 1;
  if (!ok(kiln_session_create(art, NULL, &s), "session")) return 1;
  float x[6], y[6], out[6];
  for (int i = 0; i < 6; ++i) {
    x[i] = (float)i - 3.0f;
    y[i] = 0.5f * (float)i;
  }
  int64_t shape[2] = {2, 3};
  DLTensor tx = {x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor ty = {y, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  DLTensor to = {out, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  ok(kiln_session_set_input(s, "x", &tx), "set x");
  ok(kiln_session_set_input(s, "y", &ty), "set y");
  if (ok(kiln_session_run(s), "run") && ok(kiln_session_copy_output(s, 0, &to), "output")) {
    for (int i = 0; i < 6; ++i) {
      float want = 2.0f * (x[i] + y[i]);
      if (want < 0) want = 0;
      CHECK(fabsf(out[i] - want) <= 1e-6f, "out[%d] = %g, expected %g", i, out[i], want);
    }
    printf("ran the compiled model: out[5] = %g\n", out[5]);
  }
  kiln_session_release(s);
  kiln_artifact_release(art);
  return 0;
}

static int onnx_graph(const char* model_path, const char* reduce_path) {
  KilnModel* model = NULL;
  if (!ok(kiln_model_load_onnx_file(model_path, NULL, &model), "load ONNX")) return 1;
  KilnOptimizeOptions oo;
  kiln_optimize_options_init(&oo);
  KilnModel* opt = NULL;
  if (ok(kiln_model_optimize(model, &oo, &opt), "O3 pipeline")) {
    char* text = NULL;
    if (ok(kiln_model_print(opt, 0, &text), "print")) {
      /* FuseOps ran: the graph is calls of primitive functions. */
      CHECK(strstr(text, "Primitive=1") != NULL, "no fused function in:\n%s", text);
      printf("optimized: %zu bytes of text IR\n", strlen(text));
      kiln_free(text);
    }
    kiln_model_release(opt);
  }

  /* No code generator. */
  KilnCompileReport report;
  memset(&report, 0, sizeof report);
  report.struct_size = sizeof report;
  expect_error(kiln_model_compile(model, NULL, "/nonexistent/x.so", &report), KILN_UNIMPLEMENTED,
               "no code generator is in this build", "compile");
  char* text = NULL;
  expect_error(kiln_model_emit(model, NULL, KILN_EMIT_LOOP_IR, &text, NULL), KILN_UNIMPLEMENTED,
               "no code generator is in this build", "emit");
  CHECK(text == NULL, "emit set its out text on error");
  kiln_model_release(model);

  /* No text parser; an operator of an absent converter family. */
  KilnModel* m = NULL;
  expect_error(kiln_model_parse_text(kModel, "x.kir", &m), KILN_UNIMPLEMENTED,
               "the text-IR frontend (.kir parser) is not in this build", "parse text");
  expect_error(kiln_model_load_onnx_file(reduce_path, NULL, &m), KILN_UNIMPLEMENTED,
               "ReduceMean (opset", "ReduceMean model");
  expect_error(kiln_model_load_onnx_file(reduce_path, NULL, &m), KILN_UNIMPLEMENTED,
               "its converter family 'reduce' is not in this build", "ReduceMean family");
  CHECK(m == NULL, "out model set on error");
  return 0;
}

int main(int argc, char** argv) {
  int rc = 2;
  if (argc == 3 && strcmp(argv[1], "text_llvm") == 0) rc = text_llvm(argv[2]);
  else if (argc == 4 && strcmp(argv[1], "onnx_graph") == 0) rc = onnx_graph(argv[2], argv[3]);
  else fprintf(stderr, "usage: variant_check text_llvm DIR | onnx_graph MODEL.onnx REDUCE.onnx\n");
  if (rc != 0 || failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("all checks passed\n");
  return 0;
}
