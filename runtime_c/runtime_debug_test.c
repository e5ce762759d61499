/* File: runtime_c/runtime_debug_test.c
 *
 * The debug executor and the benchmark of kiln/runtime.h: kiln_session_profile
 * and its accessors, the table (parsed back row by row), the Chrome trace
 * (parsed back with cJSON), kiln_session_debug_dump (every file, every
 * tensor read back with kiln_npy_read, including an intermediate whose
 * storage a later node reuses), and kiln_session_benchmark with its TVM v0.1
 * log line (every key present with the right type).
 *
 * Arguments: the fixture paths ($(rootpath :rt_basic), $(rootpath :rt_fail)).
 */
#define _POSIX_C_SOURCE 200809L

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kiln/npy.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime_c/runtime_test_util.h"

static float kX[6] = {1.0f, -2.0f, 3.0f, -4.0f, 5.0f, -6.0f};
static float kY[6] = {0.5f, 0.5f, -5.0f, 1.0f, 1.0f, 10.0f};
static const float kP0[6] = {0.5f, -1.0f, 2.0f, 0.25f, -3.0f, 1.5f};

static const char* const kOpNodes[4] = {"add0", "relu0", "add1", "split/0"};
static const char* const kOps[4] = {"add", "nn.relu", "rt_add_f32", "add,multiply"};

static KilnSession* basic_session(KilnArtifact* a, int set_inputs) {
  KilnSession* s = NULL;
  if (!EXPECT_OK(kiln_session_create(a, NULL, &s))) exit(1);
  if (set_inputs) {
    int64_t shape[2] = {2, 3};
    DLTensor x = f32_tensor(kX, 2, shape);
    DLTensor y = f32_tensor(kY, 2, shape);
    EXPECT_OK(kiln_session_set_input(s, "x", &x));
    EXPECT_OK(kiln_session_set_input(s, "y", &y));
  }
  return s;
}

static char* read_text(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = (char*)malloc((size_t)n + 1);
  if (text != NULL) {
    if (fread(text, 1, (size_t)n, f) != (size_t)n) {
      free(text);
      text = NULL;
    } else {
      text[n] = '\0';
    }
  }
  fclose(f);
  return text;
}

/* Checks the table text of a rt_basic profile. */
static void check_table(const char* table, const KilnProfile* p) {
  char* copy = (char*)malloc(strlen(table) + 1);
  if (copy == NULL) return;
  strcpy(copy, table);
  int line_no = 0;
  double pct_sum = 0.0;
  char* save = NULL;
  for (char* line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
    if (line_no == 0) {
      const char* cols[7] = {"Node Name", "Ops",    "Time(us)", "Time(%)",
                             "Shape",     "Inputs", "Outputs"};
      const char* at = line;
      for (int c = 0; c < 7; ++c) {
        const char* found = strstr(at, cols[c]);
        CHECK(found != NULL);
        if (found != NULL) at = found + strlen(cols[c]);
      }
    } else if (line_no == 1) {
      CHECK(strncmp(line, "---------", 9) == 0);
    } else if (line_no >= 2 && line_no < 6) {
      int k = line_no - 2;
      char name[64], ops[64];
      double time_us = -1.0, pct = -1.0;
      CHECK(sscanf(line, "%63s %63s %lf %lf", name, ops, &time_us, &pct) == 4);
      CHECK(strcmp(name, kOpNodes[k]) == 0);
      CHECK(strcmp(ops, kOps[k]) == 0);
      CHECK(time_us >= 0.0 && pct >= 0.0 && pct <= 100.0);
      CHECK(strstr(line, "(2, 3)") != NULL);
      int inputs = -1, outputs = -1;
      const char* tail = strstr(line, "(2, 3)");
      if (tail != NULL) CHECK(sscanf(tail + 6, "%d %d", &inputs, &outputs) == 2);
      CHECK(inputs == (k == 0 || k == 2 ? 2 : 1));
      CHECK(outputs == (k == 3 ? 2 : 1));
      pct_sum += pct;
    } else if (line_no == 6) {
      double total = -1.0;
      CHECK(sscanf(line, "Total_time - %lf", &total) == 1);
      CHECK(total >= 0.0);
      CHECK(total - kiln_profile_total_us(p) < 0.01 && kiln_profile_total_us(p) - total < 0.01);
    }
    ++line_no;
  }
  CHECK(line_no == 7);
  if (kiln_profile_total_us(p) > 0.0) CHECK(pct_sum > 99.0 && pct_sum < 101.0);
  free(copy);
}

static void check_trace(const char* json) {
  cJSON* root = cJSON_Parse(json);
  CHECK(root != NULL);
  if (root == NULL) return;
  const cJSON* unit = cJSON_GetObjectItemCaseSensitive(root, "displayTimeUnit");
  CHECK(cJSON_IsString(unit) && strcmp(unit->valuestring, "ns") == 0);
  const cJSON* events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
  CHECK(cJSON_IsArray(events) && cJSON_GetArraySize(events) == 4);
  int k = 0;
  double last_ts = -1.0;
  const cJSON* ev = NULL;
  cJSON_ArrayForEach(ev, events) {
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(ev, "name");
    const cJSON* cat = cJSON_GetObjectItemCaseSensitive(ev, "cat");
    const cJSON* ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
    const cJSON* ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
    const cJSON* dur = cJSON_GetObjectItemCaseSensitive(ev, "dur");
    const cJSON* pid = cJSON_GetObjectItemCaseSensitive(ev, "pid");
    const cJSON* tid = cJSON_GetObjectItemCaseSensitive(ev, "tid");
    const cJSON* args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    CHECK(k < 4 && cJSON_IsString(name) && strcmp(name->valuestring, kOpNodes[k]) == 0);
    CHECK(cJSON_IsString(cat) && strcmp(cat->valuestring, "op") == 0);
    CHECK(cJSON_IsString(ph) && strcmp(ph->valuestring, "X") == 0);
    CHECK(cJSON_IsNumber(ts) && ts->valuedouble >= last_ts);
    CHECK(cJSON_IsNumber(dur) && dur->valuedouble >= 0.0);
    CHECK(cJSON_IsNumber(pid) && pid->valueint == 1);
    CHECK(cJSON_IsNumber(tid) && tid->valueint == 1);
    CHECK(cJSON_IsObject(args));
    const cJSON* op = cJSON_GetObjectItemCaseSensitive(args, "op");
    const cJSON* shape = cJSON_GetObjectItemCaseSensitive(args, "shape");
    CHECK(k < 4 && cJSON_IsString(op) && strcmp(op->valuestring, kOps[k]) == 0);
    CHECK(cJSON_IsString(shape) && strcmp(shape->valuestring, "(2, 3)") == 0);
    if (cJSON_IsNumber(ts)) last_ts = ts->valuedouble;
    ++k;
  }
  cJSON_Delete(root);
}

static void test_profile(void) {
  KilnArtifact* a = load_fixture("rt_basic");
  KilnSession* s = basic_session(a, 0);
  KilnProfile* p = (KilnProfile*)&failures;
  EXPECT_ERROR(kiln_session_profile(s, &p), KILN_FAILED_PRECONDITION, "input 'x'");
  CHECK(p == NULL);
  EXPECT_ERROR(kiln_session_profile(NULL, &p), KILN_INVALID_ARGUMENT, "session");
  EXPECT_ERROR(kiln_session_profile(s, NULL), KILN_INVALID_ARGUMENT, "out");
  kiln_session_release(s);

  s = basic_session(a, 1);
  if (EXPECT_OK(kiln_session_profile(s, &p))) {
    CHECK(kiln_profile_num_nodes(p) == 4);
    double sum = 0.0;
    for (int32_t i = 0; i < 4; ++i) {
      const char* name = NULL;
      const char* op = NULL;
      double t = -1.0;
      if (!EXPECT_OK(kiln_profile_node(p, i, &name, &op, &t))) continue;
      CHECK(strcmp(name, kOpNodes[i]) == 0);
      CHECK(strcmp(op, kOps[i]) == 0);
      CHECK(t >= 0.0);
      sum += t;
    }
    CHECK(sum - kiln_profile_total_us(p) < 1e-9 && kiln_profile_total_us(p) - sum < 1e-9);
    const char* name = "x";
    const char* op = "y";
    double t = 5.0;
    EXPECT_ERROR(kiln_profile_node(p, 4, &name, &op, &t), KILN_OUT_OF_RANGE, "index 4");
    CHECK(name == NULL && op == NULL && t == 0.0);
    EXPECT_ERROR(kiln_profile_node(NULL, 0, &name, &op, &t), KILN_INVALID_ARGUMENT, "profile");

    char* table = NULL;
    if (EXPECT_OK(kiln_profile_table(p, &table))) {
      check_table(table, p);
      if (getenv("RT_VERBOSE") != NULL) fputs(table, stderr);
    }
    kiln_free(table);
    char* trace = NULL;
    if (EXPECT_OK(kiln_profile_chrome_trace(p, &trace))) check_trace(trace);
    kiln_free(trace);
    EXPECT_ERROR(kiln_profile_table(NULL, &table), KILN_INVALID_ARGUMENT, "profile");
    CHECK(table == NULL);
    EXPECT_ERROR(kiln_profile_chrome_trace(p, NULL), KILN_INVALID_ARGUMENT, "json");
    kiln_profile_release(p);
  }
  CHECK(kiln_profile_num_nodes(NULL) == 0 && kiln_profile_total_us(NULL) == 0.0);
  kiln_profile_release(NULL);
  kiln_session_release(s);

  /* A failing kernel fails the profile run too. */
  KilnArtifact* f = load_fixture("rt_fail");
  KilnSession* fs = NULL;
  if (EXPECT_OK(kiln_session_create(f, NULL, &fs))) {
    int64_t shape[2] = {2, 3};
    DLTensor x = f32_tensor(kX, 2, shape);
    EXPECT_OK(kiln_session_set_input(fs, "x", &x));
    p = NULL;
    EXPECT_ERROR(kiln_session_profile(fs, &p), KILN_INTERNAL, "node 'boom'", "always fails");
    CHECK(p == NULL);
    kiln_session_release(fs);
  }
  kiln_artifact_release(f);
  kiln_artifact_release(a);
}

/* kiln_session_profile_with: options checked, warm-up and repeated runs,
 * the same nodes as one run; kiln_session_debug_dump_with without tensors. */
static void test_profile_with(void) {
  KilnArtifact* a = load_fixture("rt_basic");
  KilnSession* s = basic_session(a, 1);
  KilnProfile* p = (KilnProfile*)&failures;
  KilnProfileOptions o;
  memset(&o, 0, sizeof o);
  EXPECT_ERROR(kiln_session_profile_with(s, &o, &p), KILN_INVALID_ARGUMENT, "struct_size");
  CHECK(p == NULL);
  o.struct_size = sizeof o;
  o.repeat = -1;
  EXPECT_ERROR(kiln_session_profile_with(s, &o, &p), KILN_INVALID_ARGUMENT, "repeat (-1)");
  o.repeat = KILN_PROFILE_MAX_RUNS + 1;
  EXPECT_ERROR(kiln_session_profile_with(s, &o, &p), KILN_INVALID_ARGUMENT, "repeat");
  o.repeat = 3;
  o.warmup = -2;
  EXPECT_ERROR(kiln_session_profile_with(s, &o, &p), KILN_INVALID_ARGUMENT, "warmup (-2)");
  EXPECT_ERROR(kiln_session_profile_with(NULL, &o, &p), KILN_INVALID_ARGUMENT, "session");

  for (int32_t repeat = 0; repeat <= 4; ++repeat) {
    o.warmup = 2;
    o.repeat = repeat;
    if (!EXPECT_OK(kiln_session_profile_with(s, &o, &p))) continue;
    CHECK(kiln_profile_num_nodes(p) == 4);
    double sum = 0.0;
    for (int32_t i = 0; i < kiln_profile_num_nodes(p); ++i) {
      const char* name = NULL;
      const char* op = NULL;
      double t = -1.0;
      if (!EXPECT_OK(kiln_profile_node(p, i, &name, &op, &t))) continue;
      CHECK(strcmp(name, kOpNodes[i]) == 0 && strcmp(op, kOps[i]) == 0 && t >= 0.0);
      sum += t;
    }
    CHECK(sum - kiln_profile_total_us(p) < 1e-9 && kiln_profile_total_us(p) - sum < 1e-9);
    char* table = NULL;
    if (EXPECT_OK(kiln_profile_table(p, &table))) check_table(table, p);
    kiln_free(table);
    kiln_profile_release(p);
  }
  /* NULL options: one run, as kiln_session_profile. */
  if (EXPECT_OK(kiln_session_profile_with(s, NULL, &p))) {
    CHECK(kiln_profile_num_nodes(p) == 4);
    kiln_profile_release(p);
  }

  const char* tmp = getenv("TEST_TMPDIR");
  char dir[1024];
  (void)snprintf(dir, sizeof dir, "%s/dump_no_tensors", tmp != NULL ? tmp : "/tmp");
  o.warmup = 1;
  o.repeat = 3;
  o.skip_tensors = 1;
  if (EXPECT_OK(kiln_session_debug_dump_with(s, dir, &o))) {
    char path[1200];
    (void)snprintf(path, sizeof path, "%s/profile.txt", dir);
    char* table = read_text(path);
    CHECK(table != NULL && strstr(table, "Total_time") != NULL);
    free(table);
    struct stat st;
    (void)snprintf(path, sizeof path, "%s/tensors", dir);
    CHECK(stat(path, &st) != 0); /* no tensors/ at all */
  }
  o.struct_size = 1;
  EXPECT_ERROR(kiln_session_debug_dump_with(s, dir, &o), KILN_INVALID_ARGUMENT, "struct_size");
  kiln_session_release(s);
  kiln_artifact_release(a);
}

static void check_npy(const char* dir, const char* file, const float* want) {
  char path[1024];
  (void)snprintf(path, sizeof path, "%s/tensors/%s", dir, file);
  KilnNpyTensor* t = NULL;
  if (!EXPECT_OK(kiln_npy_read(path, &t))) {
    fprintf(stderr, "  (%s)\n", path);
    return;
  }
  CHECK(t->tensor.ndim == 2 && t->tensor.shape[0] == 2 && t->tensor.shape[1] == 3);
  CHECK(t->tensor.dtype.code == kDLFloat && t->tensor.dtype.bits == 32);
  if (memcmp(t->tensor.data, want, 6 * sizeof(float)) != 0) {
    fprintf(stderr, "wrong values in %s\n", path);
    ++failures;
  }
  kiln_npy_release(t);
}

static void test_dump(void) {
  KilnArtifact* a = load_fixture("rt_basic");
  KilnSession* s = basic_session(a, 0);
  const char* tmp = getenv("TEST_TMPDIR");
  char dir[1024];
  (void)snprintf(dir, sizeof dir, "%s/dump/a-b", tmp != NULL ? tmp : "/tmp");
  EXPECT_ERROR(kiln_session_debug_dump(s, dir), KILN_FAILED_PRECONDITION, "input 'x'");
  EXPECT_ERROR(kiln_session_debug_dump(NULL, dir), KILN_INVALID_ARGUMENT, "session");
  EXPECT_ERROR(kiln_session_debug_dump(s, NULL), KILN_INVALID_ARGUMENT, "dir");
  kiln_session_release(s);

  s = basic_session(a, 1);
  if (EXPECT_OK(kiln_session_debug_dump(s, dir)) && EXPECT_OK(kiln_session_debug_dump(s, dir))) {
    char path[1200];
    (void)snprintf(path, sizeof path, "%s/graph.json", dir);
    char* graph = read_text(path);
    CHECK(graph != NULL && strcmp(graph, kiln_artifact_graph_json(a)) == 0);
    free(graph);
    (void)snprintf(path, sizeof path, "%s/profile.txt", dir);
    char* table = read_text(path);
    CHECK(table != NULL && strstr(table, "Total_time") != NULL && strstr(table, "split/0") != NULL);
    free(table);
    (void)snprintf(path, sizeof path, "%s/trace.json", dir);
    char* trace = read_text(path);
    CHECK(trace != NULL);
    if (trace != NULL) check_trace(trace);
    free(trace);

    float add0[6], relu0[6], add1[6], out0[6], out1[6];
    for (int i = 0; i < 6; ++i) {
      add0[i] = kX[i] + kY[i];
      relu0[i] = add0[i] > 0.0f ? add0[i] : 0.0f;
      add1[i] = relu0[i] + kP0[i];
      out0[i] = add1[i] + 1.0f;
      out1[i] = add1[i] * 2.0f;
    }
    check_npy(dir, "x__0.npy", kX);
    check_npy(dir, "y__0.npy", kY);
    check_npy(dir, "rt_p0__0.npy", kP0);
    check_npy(dir, "add0__0.npy", add0); /* its storage is reused by add1 */
    check_npy(dir, "relu0__0.npy", relu0);
    check_npy(dir, "add1__0.npy", add1);
    check_npy(dir, "split_0__0.npy", out0);
    check_npy(dir, "split_0__1.npy", out1);
  }
  /* A path under a regular file cannot be created. */
  char bad[1200];
  (void)snprintf(bad, sizeof bad, "%s/graph.json/sub", dir);
  EXPECT_ERROR(kiln_session_debug_dump(s, bad), KILN_INTERNAL, "graph.json");
  kiln_session_release(s);
  kiln_artifact_release(a);
}

static const cJSON* expect_key(const cJSON* o, const char* key, int (*is)(const cJSON*)) {
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (v == NULL || !is(v)) {
    fprintf(stderr, "benchmark log: key '%s' missing or of the wrong type\n", key);
    ++failures;
    return NULL;
  }
  return v;
}

static int is_string(const cJSON* v) { return cJSON_IsString(v); }
static int is_number(const cJSON* v) { return cJSON_IsNumber(v); }
static int is_object(const cJSON* v) { return cJSON_IsObject(v); }
static int is_array(const cJSON* v) { return cJSON_IsArray(v); }

static void check_log_line(const char* line, const char* workload, const char* hardware, int warmup,
                           int repeat) {
  CHECK(strchr(line, '\n') == NULL);
  cJSON* root = cJSON_Parse(line);
  CHECK(cJSON_IsObject(root));
  if (root == NULL) return;
  const cJSON* v = expect_key(root, "workload", is_string);
  CHECK(v != NULL && strcmp(v->valuestring, workload) == 0);
  v = expect_key(root, "engine", is_string);
  CHECK(v != NULL && strcmp(v->valuestring, "kiln") == 0);
  v = expect_key(root, "hardware", is_string);
  CHECK(v != NULL && strcmp(v->valuestring, hardware) == 0);
  v = expect_key(root, "runtime_ms_mean", is_number);
  CHECK(v != NULL && v->valuedouble >= 0.0);
  v = expect_key(root, "runtime_ms_std", is_number);
  CHECK(v != NULL && v->valuedouble >= 0.0);
  v = expect_key(root, "timestamp", is_string);
  /* 2024-05-01T12:34:56.123456Z */
  CHECK(v != NULL && strlen(v->valuestring) == 27 && v->valuestring[4] == '-' &&
        v->valuestring[10] == 'T' && v->valuestring[19] == '.' && v->valuestring[26] == 'Z');
  v = expect_key(root, "schema_version", is_string);
  CHECK(v != NULL && strcmp(v->valuestring, "0.1") == 0);
  const cJSON* wc = expect_key(root, "workload_config", is_object);
  if (wc != NULL) {
    const cJSON* inputs = expect_key(wc, "inputs", is_array);
    CHECK(inputs != NULL && cJSON_GetArraySize(inputs) == 2);
    const cJSON* x = inputs != NULL ? cJSON_GetArrayItem(inputs, 0) : NULL;
    const cJSON* name = x != NULL ? expect_key(x, "name", is_string) : NULL;
    CHECK(name != NULL && strcmp(name->valuestring, "x") == 0);
    const cJSON* shape = x != NULL ? expect_key(x, "shape", is_array) : NULL;
    CHECK(shape != NULL && cJSON_GetArraySize(shape) == 2);
  }
  const cJSON* ec = expect_key(root, "engine_config", is_object);
  if (ec != NULL) {
    v = expect_key(ec, "version", is_string);
    CHECK(v != NULL && strcmp(v->valuestring, "0.1.0") == 0);
    v = expect_key(ec, "num_threads", is_number);
    CHECK(v != NULL && v->valueint >= 1);
  }
  const cJSON* hc = expect_key(root, "hardware_config", is_object);
  if (hc != NULL) {
    v = expect_key(hc, "cpu_count", is_number);
    CHECK(v != NULL && v->valueint >= 1);
  }
  const cJSON* xc = expect_key(root, "execution_config", is_object);
  if (xc != NULL) {
    v = expect_key(xc, "warmup", is_number);
    CHECK(v != NULL && v->valueint == warmup);
    v = expect_key(xc, "repeat", is_number);
    CHECK(v != NULL && v->valueint == repeat);
  }
  expect_key(root, "metadata", is_object);
  const cJSON* raw = expect_key(root, "runtime_raw", is_array);
  CHECK(raw != NULL && cJSON_GetArraySize(raw) == repeat);
  const cJSON* item = NULL;
  if (raw != NULL) {
    cJSON_ArrayForEach(item, raw) {
      v = expect_key(item, "runtime_ms", is_number);
      CHECK(v != NULL && v->valuedouble >= 0.0);
    }
  }
  cJSON_Delete(root);
}

static void test_benchmark(void) {
  KilnArtifact* a = load_fixture("rt_basic");
  KilnSession* s = basic_session(a, 0);
  KilnBenchmarkResult r;
  char* line = (char*)"junk";
  EXPECT_ERROR(kiln_session_benchmark(s, NULL, &r, &line), KILN_FAILED_PRECONDITION, "input 'x'");
  CHECK(line == NULL && r.repeat == 0);
  EXPECT_ERROR(kiln_session_benchmark(NULL, NULL, &r, &line), KILN_INVALID_ARGUMENT, "session");
  kiln_session_release(s);

  s = basic_session(a, 1);
  if (EXPECT_OK(kiln_session_benchmark(s, NULL, &r, &line))) {
    CHECK(r.repeat == 10);
    CHECK(r.min_ms >= 0.0 && r.min_ms <= r.mean_ms && r.mean_ms <= r.max_ms && r.std_ms >= 0.0);
    CHECK(line != NULL);
    if (line != NULL) {
      if (getenv("RT_VERBOSE") != NULL) fprintf(stderr, "%s\n", line);
      check_log_line(line, "rt_basic", "cpu", 1, 10);
    }
    kiln_free(line);
  }
  KilnBenchmarkOptions opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.warmup = 2;
  opts.repeat = 3;
  opts.workload = "my-workload";
  opts.hardware = "test-box";
  if (EXPECT_OK(kiln_session_benchmark(s, &opts, NULL, &line))) {
    CHECK(line != NULL);
    if (line != NULL) check_log_line(line, "my-workload", "test-box", 2, 3);
    kiln_free(line);
  }
  EXPECT_OK(kiln_session_benchmark(s, &opts, &r, NULL));
  CHECK(r.repeat == 3);
  opts.repeat = -1;
  EXPECT_ERROR(kiln_session_benchmark(s, &opts, &r, NULL), KILN_INVALID_ARGUMENT, "repeat");
  opts.struct_size = 0;
  EXPECT_ERROR(kiln_session_benchmark(s, &opts, &r, NULL), KILN_INVALID_ARGUMENT, "struct_size");
  kiln_session_release(s);
  kiln_artifact_release(a);
}

int main(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
  test_profile();
  test_profile_with();
  test_dump();
  test_benchmark();
  return test_main_end("runtime_debug_test");
}
