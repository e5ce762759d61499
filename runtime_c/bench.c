/* File: runtime_c/bench.c
 *
 * kiln_session_benchmark: `warmup` untimed runs, then `repeat` timed runs
 * (CLOCK_MONOTONIC around each kiln_session_run); mean, standard deviation
 * (population, like numpy.std), min and max in milliseconds; and optionally
 * one line of TVM's benchmark log format v0.1 (docs/arch/benchmark.rst in
 * TVM), written with cJSON, unformatted, no trailing newline:
 *
 *   {"workload":"resnet_block","engine":"kiln","hardware":"cpu",
 *    "runtime_ms_mean":1.25,"runtime_ms_std":0.01,
 *    "timestamp":"2024-05-01T12:34:56.123456Z",          ISO-8601, UTC
 *    "schema_version":"0.1",
 *    "workload_config":{"inputs":[{"name":"x","dtype":"float32","shape":[1,3]}],
 *                       "outputs":[{"name":"output0","dtype":"float32","shape":[1,3]}]},
 *    "workload_args":{"input_shape_dict":{"x":[1,3]},"input_type_dict":{"x":"float32"}},
 *    "engine_version":"0.1.0",
 *    "engine_config":{"version":"0.1.0","num_threads":2,"target":"llvm ...",
 *                     "producer":"kiln 0.1.0"},
 *    "hardware_config":{"cpu_count":2,"arch":"x86_64"},
 *    "execution_config":{"warmup":1,"repeat":10},
 *    "metadata":{},
 *    "runtime_raw":[{"runtime_ms":1.26},{"runtime_ms":1.24},...]}
 *
 * runtime_raw holds one object per timed run, {"runtime_ms": x}, as in the
 * TVM schema's example. workload_args repeats the inputs in the TVM sample's
 * shape so TVM tooling reads it too.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, gmtime_r, sysconf */

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime_c/artifact_blob.h"
#include "runtime_c/runtime_internal.h"

/* Most timed runs one call accepts (the raw times are kept). */
#define KILN_BENCH_MAX_RUNS (1 << 24)

static const char* arch_name(void) {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__i386__)
  return "x86";
#elif defined(__arm__)
  return "arm";
#elif defined(__riscv)
  return "riscv";
#else
  return "unknown";
#endif
}

/* {"name":..., "dtype":..., "shape":[...]} for an input/output. */
static cJSON* io_json(const KilnArtifact* art, const KilnPlanIO* io) {
  DLTensor info;
  kiln_artifact_io_desc(art, io, &info);
  char dt[64];
  kiln_dtype_to_string(info.dtype, dt, sizeof dt);
  cJSON* o = cJSON_CreateObject();
  cJSON* shape = cJSON_AddArrayToObject(o, "shape");
  if (o == NULL || shape == NULL || cJSON_AddStringToObject(o, "name", io->name) == NULL ||
      cJSON_AddStringToObject(o, "dtype", dt) == NULL) {
    cJSON_Delete(o);
    return NULL;
  }
  for (int32_t d = 0; d < info.ndim; ++d) {
    cJSON* v = cJSON_CreateNumber((double)info.shape[d]);
    if (v == NULL || !cJSON_AddItemToArray(shape, v)) {
      cJSON_Delete(v);
      cJSON_Delete(o);
      return NULL;
    }
  }
  return o;
}

static int add_item(cJSON* parent, const char* key, cJSON* item) {
  if (item == NULL) return 0;
  if (key == NULL ? !cJSON_AddItemToArray(parent, item)
                  : !cJSON_AddItemToObject(parent, key, item)) {
    cJSON_Delete(item);
    return 0;
  }
  return 1;
}

/* The v0.1 log line, malloc'ed, or NULL when out of memory. */
static char* make_log_line(const KilnSession* s, const char* workload, const char* hardware,
                           int32_t warmup, int32_t repeat, const double* times_ms,
                           const KilnBenchmarkResult* r) {
  const KilnArtifact* art = s->artifact;
  char timestamp[64];
  {
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    time_t secs = ts.tv_sec;
    if (gmtime_r(&secs, &tm) == NULL ||
        strftime(timestamp, sizeof timestamp, "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
      (void)snprintf(timestamp, sizeof timestamp, "1970-01-01T00:00:00");
    }
    size_t len = strlen(timestamp);
    (void)snprintf(timestamp + len, sizeof timestamp - len, ".%06ldZ", (long)(ts.tv_nsec / 1000));
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);

  cJSON* root = cJSON_CreateObject();
  int ok = root != NULL;
  ok = ok && cJSON_AddStringToObject(root, "workload", workload) != NULL;
  ok = ok && cJSON_AddStringToObject(root, "engine", "kiln") != NULL;
  ok = ok && cJSON_AddStringToObject(root, "hardware", hardware) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "runtime_ms_mean", r->mean_ms) != NULL;
  ok = ok && cJSON_AddNumberToObject(root, "runtime_ms_std", r->std_ms) != NULL;
  ok = ok && cJSON_AddStringToObject(root, "timestamp", timestamp) != NULL;
  ok = ok && cJSON_AddStringToObject(root, "schema_version", "0.1") != NULL;

  /* workload_config and workload_args */
  cJSON* wc = ok ? cJSON_AddObjectToObject(root, "workload_config") : NULL;
  cJSON* wc_in = wc != NULL ? cJSON_AddArrayToObject(wc, "inputs") : NULL;
  cJSON* wc_out = wc != NULL ? cJSON_AddArrayToObject(wc, "outputs") : NULL;
  cJSON* wa = wc != NULL ? cJSON_AddObjectToObject(root, "workload_args") : NULL;
  cJSON* wa_shape = wa != NULL ? cJSON_AddObjectToObject(wa, "input_shape_dict") : NULL;
  cJSON* wa_type = wa != NULL ? cJSON_AddObjectToObject(wa, "input_type_dict") : NULL;
  ok = ok && wc_in != NULL && wc_out != NULL && wa_shape != NULL && wa_type != NULL;
  for (int32_t i = 0; ok && i < art->num_inputs; ++i) {
    cJSON* o = io_json(art, &art->inputs[i]);
    ok = o != NULL;
    if (ok) {
      ok = add_item(wa_shape, art->inputs[i].name,
                    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(o, "shape"), 1)) &&
           add_item(wa_type, art->inputs[i].name,
                    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(o, "dtype"), 1));
      ok = add_item(wc_in, NULL, o) && ok;
    }
  }
  for (int32_t i = 0; ok && i < art->num_outputs; ++i) {
    ok = add_item(wc_out, NULL, io_json(art, &art->outputs[i]));
  }

  ok = ok && cJSON_AddStringToObject(root, "engine_version", kiln_runtime_version()) != NULL;
  cJSON* ec = ok ? cJSON_AddObjectToObject(root, "engine_config") : NULL;
  ok = ok && ec != NULL && cJSON_AddStringToObject(ec, "version", kiln_runtime_version()) != NULL &&
       cJSON_AddNumberToObject(ec, "num_threads", s->num_threads) != NULL &&
       cJSON_AddStringToObject(ec, "target", art->target) != NULL &&
       cJSON_AddStringToObject(ec, "producer", art->producer) != NULL;
  cJSON* hc = ok ? cJSON_AddObjectToObject(root, "hardware_config") : NULL;
  ok = ok && hc != NULL &&
       cJSON_AddNumberToObject(hc, "cpu_count", cpus > 0 ? (double)cpus : 1.0) != NULL &&
       cJSON_AddStringToObject(hc, "arch", arch_name()) != NULL;
  cJSON* xc = ok ? cJSON_AddObjectToObject(root, "execution_config") : NULL;
  ok = ok && xc != NULL && cJSON_AddNumberToObject(xc, "warmup", warmup) != NULL &&
       cJSON_AddNumberToObject(xc, "repeat", repeat) != NULL;
  ok = ok && cJSON_AddObjectToObject(root, "metadata") != NULL;
  cJSON* raw = ok ? cJSON_AddArrayToObject(root, "runtime_raw") : NULL;
  ok = ok && raw != NULL;
  for (int32_t i = 0; ok && i < repeat; ++i) {
    cJSON* o = cJSON_CreateObject();
    ok = o != NULL && cJSON_AddNumberToObject(o, "runtime_ms", times_ms[i]) != NULL;
    ok = add_item(raw, NULL, o) && ok;
  }

  char* out = NULL;
  if (ok) {
    char* printed = cJSON_PrintUnformatted(root);
    if (printed != NULL) {
      size_t n = strlen(printed);
      out = (char*)malloc(n + 1);
      if (out != NULL) memcpy(out, printed, n + 1);
      cJSON_free(printed);
    }
  }
  cJSON_Delete(root);
  return out;
}

KilnStatus* kiln_session_benchmark(KilnSession* session, const KilnBenchmarkOptions* options,
                                   KilnBenchmarkResult* result, char** log_line) {
  static const char fn[] = "kiln_session_benchmark";
  if (result != NULL) memset(result, 0, sizeof *result);
  if (log_line != NULL) *log_line = NULL;
  {
    KilnStatus* dead = kiln_session_check_live(session, fn);
    if (dead != NULL) return dead;
  }
  KilnBenchmarkOptions opts;
  memset(&opts, 0, sizeof opts);
  if (options != NULL) {
    if (options->struct_size < sizeof(size_t)) {
      return kiln_status_create(
          KILN_INVALID_ARGUMENT,
          "%s: options->struct_size is %zu; set it to sizeof(KilnBenchmarkOptions)", fn,
          options->struct_size);
    }
    size_t n = options->struct_size < sizeof opts ? options->struct_size : sizeof opts;
    memcpy(&opts, options, n);
  }
  if (opts.warmup < 0 || opts.repeat < 0 || opts.repeat > KILN_BENCH_MAX_RUNS) {
    return kiln_status_create(
        KILN_INVALID_ARGUMENT,
        "%s: warmup (%d) must be >= 0 and repeat (%d) in [0, %d] (0 means the default)", fn,
        (int)opts.warmup, (int)opts.repeat, KILN_BENCH_MAX_RUNS);
  }
  const int32_t warmup = opts.warmup == 0 ? 1 : opts.warmup;
  const int32_t repeat = opts.repeat == 0 ? 10 : opts.repeat;
  const char* workload = opts.workload != NULL ? opts.workload : session->artifact->model;
  const char* hardware = opts.hardware != NULL ? opts.hardware : kiln_cuda_session_device_name(session);

  KilnStatus* st = kiln_session_check_inputs(session);
  if (st != NULL) return st;
  double* times = (double*)calloc((size_t)repeat, sizeof(double));
  if (times == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", fn);

  for (int32_t i = 0; i < warmup; ++i) {
    st = kiln_session_run(session);
    if (st != NULL) {
      free(times);
      return st;
    }
  }
  for (int32_t i = 0; i < repeat; ++i) {
    const uint64_t a = kiln_now_ns();
    st = kiln_session_run(session);
    const uint64_t b = kiln_now_ns();
    if (st != NULL) {
      free(times);
      return st;
    }
    times[i] = (double)(b - a) / 1e6;
  }

  KilnBenchmarkResult r;
  memset(&r, 0, sizeof r);
  r.repeat = repeat;
  r.min_ms = times[0];
  r.max_ms = times[0];
  double sum = 0.0;
  for (int32_t i = 0; i < repeat; ++i) {
    sum += times[i];
    if (times[i] < r.min_ms) r.min_ms = times[i];
    if (times[i] > r.max_ms) r.max_ms = times[i];
  }
  r.mean_ms = sum / (double)repeat;
  double var = 0.0;
  for (int32_t i = 0; i < repeat; ++i) var += (times[i] - r.mean_ms) * (times[i] - r.mean_ms);
  r.std_ms = sqrt(var / (double)repeat);

  if (log_line != NULL) {
    *log_line = make_log_line(session, workload, hardware, warmup, repeat, times, &r);
    if (*log_line == NULL) {
      free(times);
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
    }
  }
  free(times);
  if (result != NULL) *result = r;
  return NULL;
}
