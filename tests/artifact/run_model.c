/* File: tests/artifact/run_model.c
 *
 * A C program that links only libkiln_runtime.so: loads a compiled model made
 * by make_model, runs it and checks it against the interpreter's outputs.
 *
 *   run_model DIR check          inputs from DIR/input_<name>.npy, outputs vs
 *                                DIR/expected_<i>.npy (rtol 1e-3, atol 1e-4;
 *                                every output must also be finite); copied and
 *                                zero-copy inputs; serial and pooled sessions
 *   run_model DIR threads T R    T threads x R runs, each thread with its own
 *                                session on one shared artifact (and one shared
 *                                pool); every output bit-exact vs a
 *                                single-threaded run
 *   run_model DIR debug DUMPDIR  the debug executor on the real model: the
 *                                per-node table and Chrome trace (one event per
 *                                node, names matching the table), the dump
 *                                directory (graph, table, trace, one .npy per
 *                                node output; the final node's dump equals the
 *                                output), and a benchmark log line with every
 *                                v0.1 key
 *   run_model DIR corrupt STRIDE flips bytes of a copy of DIR/model.so (every
 *                                byte of the first 8 KiB and the last 4 KiB,
 *                                every STRIDE-th elsewhere) and truncates it at
 *                                many lengths: each load must fail with a
 *                                message, never crash; also a foreign ELF
 *                                file and a non-ELF file
 *
 * Exit status 0 when every check passes; failures are printed.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kiln/npy.h"
#include "kiln/runtime.h"

static int g_failures = 0;

#define FAIL(...)                                     \
  do {                                                \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                     \
    fprintf(stderr, "\n");                            \
    ++g_failures;                                     \
  } while (0)

/* Returns 1 (and prints, frees) if st is an error. */
static int Failed(KilnStatus* st, const char* what) {
  if (st == NULL) return 0;
  FAIL("%s: %s", what, kiln_status_message(st));
  kiln_status_free(st);
  return 1;
}

static uint64_t NumElements(const DLTensor* t) {
  uint64_t n = 1;
  int i;
  for (i = 0; i < t->ndim; ++i) n *= (uint64_t)t->shape[i];
  return n;
}

static uint64_t NumBytes(const DLTensor* t) {
  return NumElements(t) * (uint64_t)((t->dtype.bits * t->dtype.lanes + 7) / 8);
}

static double Get(const DLTensor* t, uint64_t i) {
  const char* p = (const char*)t->data + t->byte_offset;
  if (t->dtype.code == kDLFloat && t->dtype.bits == 32) return ((const float*)p)[i];
  if (t->dtype.code == kDLFloat && t->dtype.bits == 64) return ((const double*)p)[i];
  if (t->dtype.code == kDLInt && t->dtype.bits == 32) return ((const int32_t*)p)[i];
  if (t->dtype.code == kDLInt && t->dtype.bits == 64) return (double)((const int64_t*)p)[i];
  if (t->dtype.bits == 8) return ((const uint8_t*)p)[i];
  return NAN;
}

static int SameShape(const DLTensor* a, const DLTensor* b) {
  int i;
  if (a->ndim != b->ndim || a->dtype.code != b->dtype.code || a->dtype.bits != b->dtype.bits) return 0;
  for (i = 0; i < a->ndim; ++i) {
    if (a->shape[i] != b->shape[i]) return 0;
  }
  return 1;
}

typedef struct {
  KilnArtifact* artifact;
  int32_t num_inputs;
  KilnNpyTensor* inputs[16];
  const char* input_names[16];
  int32_t num_outputs;
  KilnNpyTensor* expected[16];
} Model;

static void FreeModel(Model* m) {
  int i;
  for (i = 0; i < m->num_inputs; ++i) kiln_npy_release(m->inputs[i]);
  for (i = 0; i < m->num_outputs; ++i) kiln_npy_release(m->expected[i]);
  kiln_artifact_release(m->artifact);
}

static int LoadModel(const char* dir, Model* m) {
  char path[4096];
  int32_t i;
  memset(m, 0, sizeof(*m));
  snprintf(path, sizeof(path), "%s/model.so", dir);
  if (Failed(kiln_artifact_load(path, &m->artifact), path)) return 0;
  m->num_inputs = kiln_artifact_num_inputs(m->artifact);
  m->num_outputs = kiln_artifact_num_outputs(m->artifact);
  if (m->num_inputs > 16 || m->num_outputs > 16 || m->num_outputs < 1) {
    FAIL("%s: %d inputs, %d outputs", path, m->num_inputs, m->num_outputs);
    return 0;
  }
  for (i = 0; i < m->num_inputs; ++i) {
    DLTensor info;
    if (Failed(kiln_artifact_input_info(m->artifact, i, &m->input_names[i], &info), "input_info")) return 0;
    snprintf(path, sizeof(path), "%s/input_%s.npy", dir, m->input_names[i]);
    if (Failed(kiln_npy_read(path, &m->inputs[i]), path)) return 0;
  }
  for (i = 0; i < m->num_outputs; ++i) {
    snprintf(path, sizeof(path), "%s/expected_%d.npy", dir, (int)i);
    if (Failed(kiln_npy_read(path, &m->expected[i]), path)) return 0;
  }
  return 1;
}

static int SetInputs(const Model* m, KilnSession* s, int zero_copy) {
  int32_t i;
  for (i = 0; i < m->num_inputs; ++i) {
    KilnStatus* st = zero_copy ? kiln_session_set_input_zero_copy(s, m->input_names[i], &m->inputs[i]->tensor)
                               : kiln_session_set_input(s, m->input_names[i], &m->inputs[i]->tensor);
    if (Failed(st, m->input_names[i])) return 0;
  }
  return 1;
}

/* Compares every output of a finished run with the expected values. */
static void CheckOutputs(const Model* m, KilnSession* s, const char* what) {
  int32_t o;
  for (o = 0; o < m->num_outputs; ++o) {
    const DLTensor* got = NULL;
    const DLTensor* want = &m->expected[o]->tensor;
    uint64_t i, n, bad = 0;
    double max_err = 0;
    if (Failed(kiln_session_get_output(s, o, &got), "get_output")) return;
    if (!SameShape(got, want)) {
      FAIL("%s: output %d has another dtype or shape than expected", what, (int)o);
      continue;
    }
    n = NumElements(got);
    for (i = 0; i < n; ++i) {
      double g = Get(got, i), w = Get(want, i);
      double err = fabs(g - w);
      if (!isfinite(g) || !isfinite(w)) {
        if (bad++ < 5) FAIL("%s: output %d[%llu] is not finite (got %g, expected %g)", what, (int)o,
                            (unsigned long long)i, g, w);
        continue;
      }
      if (err > max_err) max_err = err;
      if (err > 1e-4 + 1e-3 * fabs(w)) {
        if (bad++ < 5) FAIL("%s: output %d[%llu] = %.8g, expected %.8g", what, (int)o,
                            (unsigned long long)i, g, w);
      }
    }
    printf("%s: output %d: %llu values, max abs error %.3g, %llu bad\n", what, (int)o,
           (unsigned long long)n, max_err, (unsigned long long)bad);
  }
}

static int Check(const char* dir) {
  Model m;
  int mode;
  uint64_t arena = 0, naive = 0;
  if (!LoadModel(dir, &m)) {
    FreeModel(&m);
    return 1;
  }
  kiln_artifact_memory_stats(m.artifact, &arena, &naive);
  printf("%s: target %s, %d nodes, arena %llu bytes (naive %llu)\n", dir, kiln_artifact_target(m.artifact),
         (int)kiln_artifact_num_nodes(m.artifact), (unsigned long long)arena, (unsigned long long)naive);
  if (arena > naive) FAIL("arena %llu > naive %llu", (unsigned long long)arena, (unsigned long long)naive);
  /* mode 0: serial, copied inputs; 1: serial, zero-copy; 2: 2-thread pool. */
  for (mode = 0; mode < 3; ++mode) {
    KilnSessionOptions opts;
    KilnSession* s = NULL;
    const char* names[3] = {"serial", "serial zero-copy", "2 threads"};
    memset(&opts, 0, sizeof(opts));
    opts.struct_size = sizeof(opts);
    opts.num_threads = mode == 2 ? 2 : 1;
    if (Failed(kiln_session_create(m.artifact, &opts, &s), "session_create")) break;
    if (SetInputs(&m, s, mode == 1) && !Failed(kiln_session_run(s), "run")) {
      CheckOutputs(&m, s, names[mode]);
      /* A second run gives the same answer (no state left over). */
      if (!Failed(kiln_session_run(s), "second run")) CheckOutputs(&m, s, names[mode]);
    }
    kiln_session_release(s);
  }
  FreeModel(&m);
  return g_failures == 0 ? 0 : 1;
}

/* ------------------------------------------------------------ concurrency */

typedef struct {
  const Model* model;
  KilnThreadPool* pool;
  int runs;
  void* const* reference; /* per output */
  int failures;
} ThreadArgs;

static void* Worker(void* p) {
  ThreadArgs* a = (ThreadArgs*)p;
  KilnSessionOptions opts;
  KilnSession* s = NULL;
  int r;
  int32_t o;
  memset(&opts, 0, sizeof(opts));
  opts.struct_size = sizeof(opts);
  opts.pool = a->pool;
  if (kiln_session_create(a->model->artifact, &opts, &s) != NULL) {
    a->failures++;
    return NULL;
  }
  if (!SetInputs(a->model, s, 0)) a->failures++;
  for (r = 0; r < a->runs && a->failures == 0; ++r) {
    KilnStatus* st = kiln_session_run(s);
    if (st != NULL) {
      kiln_status_free(st);
      a->failures++;
      break;
    }
    for (o = 0; o < a->model->num_outputs; ++o) {
      const DLTensor* got = NULL;
      KilnStatus* gst = kiln_session_get_output(s, o, &got);
      if (gst != NULL) {
        kiln_status_free(gst);
        a->failures++;
      } else if (memcmp((const char*)got->data + got->byte_offset, a->reference[o], NumBytes(got)) != 0) {
        a->failures++;
      }
    }
  }
  kiln_session_release(s);
  return NULL;
}

static int Threads(const char* dir, int num_threads, int runs) {
  Model m;
  KilnSession* s = NULL;
  KilnSessionOptions opts;
  void* reference[16] = {0};
  pthread_t threads[64];
  ThreadArgs args[64];
  KilnThreadPool* pool = NULL;
  int t, total = 0;
  int32_t o;
  if (num_threads < 1 || num_threads > 64 || !LoadModel(dir, &m)) return 1;
  memset(&opts, 0, sizeof(opts));
  opts.struct_size = sizeof(opts);
  opts.num_threads = 1;
  if (Failed(kiln_session_create(m.artifact, &opts, &s), "session") || !SetInputs(&m, s, 0) ||
      Failed(kiln_session_run(s), "reference run")) {
    FreeModel(&m);
    return 1;
  }
  for (o = 0; o < m.num_outputs; ++o) {
    const DLTensor* got = NULL;
    if (Failed(kiln_session_get_output(s, o, &got), "output")) return 1;
    reference[o] = malloc(NumBytes(got));
    memcpy(reference[o], (const char*)got->data + got->byte_offset, NumBytes(got));
  }
  CheckOutputs(&m, s, "reference");
  kiln_session_release(s);
  if (kiln_thread_pool_create(0, &pool) != 0) FAIL("thread pool");
  for (t = 0; t < num_threads; ++t) {
    args[t].model = &m;
    args[t].pool = pool;
    args[t].runs = runs;
    args[t].reference = reference;
    args[t].failures = 0;
    if (pthread_create(&threads[t], NULL, Worker, &args[t]) != 0) FAIL("pthread_create");
  }
  for (t = 0; t < num_threads; ++t) {
    pthread_join(threads[t], NULL);
    total += args[t].failures;
  }
  if (total != 0) FAIL("%d threads x %d runs: %d mismatches or errors", num_threads, runs, total);
  else printf("%d threads x %d runs: every output bit-exact\n", num_threads, runs);
  kiln_thread_pool_destroy(pool);
  for (o = 0; o < m.num_outputs; ++o) free(reference[o]);
  FreeModel(&m);
  return g_failures == 0 ? 0 : 1;
}

/* ------------------------------------------------------------- corruption */

static unsigned char* ReadAll(const char* path, long* size) {
  FILE* f = fopen(path, "rb");
  unsigned char* data;
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  *size = ftell(f);
  fseek(f, 0, SEEK_SET);
  data = (unsigned char*)malloc((size_t)*size + 1);
  if (data != NULL && fread(data, 1, (size_t)*size, f) != (size_t)*size) {
    free(data);
    data = NULL;
  }
  fclose(f);
  return data;
}

static int WriteAll(const char* path, const unsigned char* data, long size) {
  FILE* f = fopen(path, "wb");
  int ok;
  if (f == NULL) return 0;
  ok = fwrite(data, 1, (size_t)size, f) == (size_t)size;
  return fclose(f) == 0 && ok;
}

/* The load of `path` must fail with a message. Returns 1 if it did. */
static int LoadFails(const char* path, const char* what, long where) {
  KilnArtifact* a = NULL;
  KilnStatus* st = kiln_artifact_load(path, &a);
  if (st == NULL) {
    FAIL("%s at %ld: the load succeeded", what, where);
    kiln_artifact_release(a);
    return 0;
  }
  if (a != NULL) FAIL("%s at %ld: out-parameter set on failure", what, where);
  if (kiln_status_message(st)[0] == '\0') FAIL("%s at %ld: empty message", what, where);
  kiln_status_free(st);
  return 1;
}

static int Corrupt(const char* dir, long stride) {
  char src[4096], dst[4096];
  long size = 0, i, tried = 0;
  unsigned char* data;
  const char* tmp = getenv("TEST_TMPDIR");
  snprintf(src, sizeof(src), "%s/model.so", dir);
  snprintf(dst, sizeof(dst), "%s/corrupt_%ld.so", tmp != NULL ? tmp : "/tmp", (long)getpid());
  data = ReadAll(src, &size);
  if (data == NULL || size < 16384 || stride < 1) {
    FAIL("cannot read %s (or it is too small)", src);
    free(data);
    return 1;
  }
  /* The untouched copy loads. */
  if (!WriteAll(dst, data, size)) FAIL("cannot write %s", dst);
  {
    KilnArtifact* a = NULL;
    if (!Failed(kiln_artifact_load(dst, &a), "intact copy")) kiln_artifact_release(a);
  }
  for (i = 0; i < size && g_failures < 20; ++i) {
    unsigned char saved = data[i];
    if (!(i < 8192 || i >= size - 4096 || i % stride == 0)) continue;
    data[i] = (unsigned char)(saved ^ (i % 2 == 0 ? 0xFF : 0x01));
    if (!WriteAll(dst, data, size)) FAIL("cannot write %s", dst);
    LoadFails(dst, "flipped byte", i);
    data[i] = saved;
    ++tried;
  }
  printf("flipped %ld of %ld bytes: every load failed cleanly\n", tried, size);
  tried = 0;
  for (i = 0; i < size && g_failures < 20; i += (i < 4096 ? 1 : stride)) {
    if (!WriteAll(dst, data, i)) FAIL("cannot write %s", dst);
    LoadFails(dst, "truncated", i);
    ++tried;
  }
  if (!WriteAll(dst, data, size - 1)) FAIL("cannot write %s", dst);
  LoadFails(dst, "truncated", size - 1);
  printf("truncated at %ld lengths: every load failed cleanly\n", tried + 1);
  /* Trailing bytes. */
  data[size] = 0;
  if (!WriteAll(dst, data, size + 1)) FAIL("cannot write %s", dst);
  LoadFails(dst, "one trailing byte", size);
  /* Not an ELF file; a missing file; an ELF file without the symbol. */
  if (!WriteAll(dst, (const unsigned char*)"hello, world\n", 13)) FAIL("cannot write %s", dst);
  LoadFails(dst, "a text file", 0);
  remove(dst);
  LoadFails(dst, "a missing file", 0);
  LoadFails("/proc/self/exe", "a foreign ELF file", 0);
  free(data);
  return g_failures == 0 ? 0 : 1;
}

/* ------------------------------------------------------------------ debug */

static long CountOccurrences(const char* text, const char* needle) {
  long n = 0;
  const char* p = text;
  size_t len = strlen(needle);
  while ((p = strstr(p, needle)) != NULL) {
    ++n;
    p += len;
  }
  return n;
}

static char* ReadText(const char* path) {
  long size = 0;
  unsigned char* data = ReadAll(path, &size);
  if (data == NULL) {
    FAIL("cannot read %s", path);
    return NULL;
  }
  data[size] = 0;
  if (size == 0) FAIL("%s is empty", path);
  return (char*)data;
}

static int Debug(const char* dir, const char* dump) {
  Model m;
  KilnSession* s = NULL;
  KilnProfile* prof = NULL;
  char* table = NULL;
  char* trace = NULL;
  char* log_line = NULL;
  char path[4096];
  int32_t i, n = 0;
  KilnBenchmarkOptions bopts;
  KilnBenchmarkResult result;
  static const char* const kKeys[] = {"\"workload\"", "\"engine\"", "\"hardware\"",
                                      "\"runtime_ms_mean\"", "\"runtime_ms_std\"", "\"timestamp\"",
                                      "\"schema_version\":\"0.1\"", "\"workload_config\"",
                                      "\"engine_config\"", "\"hardware_config\"",
                                      "\"execution_config\"", "\"runtime_raw\""};
  if (!LoadModel(dir, &m)) return 1;
  if (Failed(kiln_session_create(m.artifact, NULL, &s), "session") || !SetInputs(&m, s, 0)) {
    FreeModel(&m);
    return 1;
  }
  /* The profile: one row and one trace event per kernel node. */
  if (!Failed(kiln_session_profile(s, &prof), "profile")) {
    double sum = 0;
    n = kiln_profile_num_nodes(prof);
    if (n < 1) FAIL("profile has %d nodes", (int)n);
    if (!Failed(kiln_profile_table(prof, &table), "table") &&
        !Failed(kiln_profile_chrome_trace(prof, &trace), "trace")) {
      printf("%s", table);
      if (CountOccurrences(trace, "\"ph\":\"X\"") != n) {
        FAIL("trace has %ld complete events, the profile %d nodes", CountOccurrences(trace, "\"ph\":\"X\""), (int)n);
      }
      if (strncmp(trace, "{\"traceEvents\":[", 16) != 0) FAIL("trace does not start with traceEvents");
      for (i = 0; i < n; ++i) {
        const char* name = NULL;
        const char* op = NULL;
        double us = -1;
        char quoted[512];
        if (Failed(kiln_profile_node(prof, i, &name, &op, &us), "profile_node")) break;
        if (us < 0) FAIL("node %s: negative time", name);
        sum += us;
        if (strstr(table, name) == NULL) FAIL("node %s missing from the table", name);
        snprintf(quoted, sizeof(quoted), "\"name\":\"%s\"", name);
        if (strstr(trace, quoted) == NULL) FAIL("node %s missing from the trace", name);
      }
      if (sum > kiln_profile_total_us(prof) * 1.001 + 1) FAIL("node times exceed the total");
    }
  }
  /* The dump directory. */
  if (!Failed(kiln_session_debug_dump(s, dump), "debug_dump")) {
    char* text;
    snprintf(path, sizeof(path), "%s/graph.json", dump);
    text = ReadText(path);
    if (text != NULL && strstr(text, "\"node_row_ptr\"") == NULL) FAIL("graph.json has no node_row_ptr");
    free(text);
    snprintf(path, sizeof(path), "%s/profile.txt", dump);
    free(ReadText(path));
    snprintf(path, sizeof(path), "%s/trace.json", dump);
    text = ReadText(path);
    if (text != NULL && CountOccurrences(text, "\"ph\":\"X\"") != n) FAIL("trace.json: wrong event count");
    free(text);
    /* Every input was dumped with its value. */
    for (i = 0; i < m.num_inputs; ++i) {
      KilnNpyTensor* t = NULL;
      snprintf(path, sizeof(path), "%s/tensors/%s__0.npy", dump, m.input_names[i]);
      if (Failed(kiln_npy_read(path, &t), path)) continue;
      if (!SameShape(&t->tensor, &m.inputs[i]->tensor) ||
          memcmp(t->tensor.data, m.inputs[i]->tensor.data, NumBytes(&t->tensor)) != 0) {
        FAIL("%s differs from the input", path);
      }
      kiln_npy_release(t);
    }
  }
  /* A benchmark log line in TVM's v0.1 format. */
  memset(&bopts, 0, sizeof(bopts));
  bopts.struct_size = sizeof(bopts);
  bopts.repeat = 3;
  if (!Failed(kiln_session_benchmark(s, &bopts, &result, &log_line), "benchmark")) {
    size_t k;
    printf("%s\n", log_line);
    for (k = 0; k < sizeof(kKeys) / sizeof(kKeys[0]); ++k) {
      if (strstr(log_line, kKeys[k]) == NULL) FAIL("benchmark log lacks %s", kKeys[k]);
    }
    if (result.repeat != 3 || !(result.mean_ms > 0) || result.min_ms > result.max_ms) {
      FAIL("benchmark result: repeat %d mean %g min %g max %g", (int)result.repeat, result.mean_ms,
           result.min_ms, result.max_ms);
    }
  }
  kiln_free(log_line);
  kiln_free(table);
  kiln_free(trace);
  kiln_profile_release(prof);
  kiln_session_release(s);
  FreeModel(&m);
  return g_failures == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[2], "check") == 0) return Check(argv[1]);
  if (argc >= 5 && strcmp(argv[2], "threads") == 0) return Threads(argv[1], atoi(argv[3]), atoi(argv[4]));
  if (argc >= 4 && strcmp(argv[2], "debug") == 0) return Debug(argv[1], argv[3]);
  if (argc >= 4 && strcmp(argv[2], "corrupt") == 0) return Corrupt(argv[1], atol(argv[3]));
  fprintf(stderr, "usage: run_model DIR check | threads T R | debug DUMPDIR | corrupt STRIDE\n");
  return 2;
}
