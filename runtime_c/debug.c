/* File: runtime_c/debug.c
 *
 * The debug executor of kiln/runtime.h: kiln_session_profile (a run with a
 * CLOCK_MONOTONIC timer around every kernel call), the profile accessors, the
 * per-node table (TVM's debug-executor columns), the Chrome trace-event JSON
 * and kiln_session_debug_dump (graph.json, profile.txt, trace.json and one
 * .npy file per entry of every node).
 *
 * Storages are shared between intermediates, so a tensor is only what it
 * should be right after its node ran: the dump writes each node's outputs
 * from inside the run, right after the node's kernel returned.
 */
#define _POSIX_C_SOURCE 200809L /* mkdir, stat */

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "kiln/npy.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime_c/artifact_blob.h"
#include "runtime_c/handles.h"
#include "runtime_c/runtime_internal.h"
#include "runtime_c/vm.h"

typedef struct {
  const char* name; /* into the profile's string block */
  const char* op;
  const char* shape; /* of output 0, "(1, 3, 224, 224)" */
  double start_us;   /* from the start of the run */
  double time_us;
  int32_t num_inputs;
  int32_t num_outputs;
} KilnProfileNode;

struct KilnProfile {
  int32_t num_nodes;
  KilnProfileNode* nodes;
  double total_us;
  char* strings;
};

/* ------------------------------------------------------------------------ */
/* A growable text buffer                                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  char* data;
  size_t size;
  size_t capacity;
  int failed;
} TextBuf;

static void tb_append(TextBuf* b, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void tb_append(TextBuf* b, const char* format, ...) {
  if (b->failed) return;
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (n < 0) {
    b->failed = 1;
    va_end(copy);
    return;
  }
  size_t need = b->size + (size_t)n + 1;
  if (need > b->capacity) {
    size_t cap = b->capacity == 0 ? 1024 : b->capacity;
    while (cap < need) cap *= 2;
    char* grown = (char*)realloc(b->data, cap);
    if (grown == NULL) {
      b->failed = 1;
      va_end(copy);
      return;
    }
    b->data = grown;
    b->capacity = cap;
  }
  (void)vsnprintf(b->data + b->size, (size_t)n + 1, format, copy);
  va_end(copy);
  b->size += (size_t)n;
}

/* Appends `s` padded with spaces to `width` (then two spaces). */
static void tb_cell(TextBuf* b, const char* s, size_t width, int last) {
  if (last) {
    tb_append(b, "%s", s);
  } else {
    tb_append(b, "%-*s  ", (int)width, s);
  }
}

/* ------------------------------------------------------------------------ */
/* Instrumented run                                                          */
/* ------------------------------------------------------------------------ */

/* Called after each step when dumping. */
typedef KilnStatus* (*AfterStepFn)(KilnSession* s, int32_t step, void* closure);

/* Runs every step; times[k] / starts[k] (may be NULL) receive each step's
 * duration and start (from the run start) in microseconds. */
static KilnStatus* run_instrumented(KilnSession* s, double* starts, double* times,
                                    AfterStepFn after, void* closure) {
  KilnStatus* st = kiln_session_check_inputs(s);
  if (st != NULL) return st;
  const uint64_t t0 = kiln_now_ns();
  for (int32_t i = 0; i < s->num_steps; ++i) {
    const uint64_t a = kiln_now_ns();
    st = kiln_session_run_step(s, i); /* on a CUDA device: launched and waited for */
    const uint64_t b = kiln_now_ns();
    if (st != NULL) return st;
    if (starts != NULL) starts[i] = (double)(a - t0) / 1e3;
    if (times != NULL) times[i] = (double)(b - a) / 1e3;
    if (after != NULL) {
      st = after(s, i, closure);
      if (st != NULL) return st;
    }
  }
  return NULL;
}

/* "(1, 3, 224, 224)" into buf. */
static void format_shape(const KilnArtifact* art, int32_t entry, char* buf, size_t size) {
  const KilnPlanEntry* pe = &art->entries[entry];
  size_t used = 0;
  int n = snprintf(buf, size, "(");
  if (n < 0 || (size_t)n >= size) return;
  used = (size_t)n;
  for (int32_t d = 0; d < pe->ndim; ++d) {
    n = snprintf(buf + used, size - used, d == 0 ? "%lld" : ", %lld",
                 (long long)art->shapes[pe->shape_offset + (uint64_t)d]);
    if (n < 0 || (size_t)n >= size - used) return;
    used += (size_t)n;
  }
  (void)snprintf(buf + used, size - used, ")");
}

/* ------------------------------------------------------------------------ */
/* Profile                                                                   */
/* ------------------------------------------------------------------------ */

static void profile_free(KilnProfile* profile) {
  if (profile == NULL) return;
  free(profile->nodes);
  free(profile->strings);
  free(profile);
}

/* Only a live profile is freed; a second release is reported and ignored. */
void kiln_profile_release(KilnProfile* profile) {
  if (profile == NULL) return;
  if (!kiln_handle_remove(KILN_HANDLE_PROFILE, profile)) {
    kiln_handle_report_dead_release("kiln_profile_release", KILN_HANDLE_PROFILE, profile);
    return;
  }
  profile_free(profile);
}

/* NULL for a live profile, else KILN_INVALID_ARGUMENT naming `fn`. */
static KilnStatus* profile_check_live(const KilnProfile* profile, const char* fn) {
  if (profile == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: profile is NULL", fn);
  if (!kiln_handle_live(KILN_HANDLE_PROFILE, profile)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: profile %p is not live (used after kiln_profile_release, or "
                              "not made by kiln_session_profile)",
                              fn, (const void*)profile);
  }
  return NULL;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a;
  const double y = *(const double*)b;
  return x < y ? -1 : (x > y ? 1 : 0);
}

/* Reads options (NULL: the defaults) into *opts; checks the ranges. */
static KilnStatus* read_profile_options(const char* fn, const KilnProfileOptions* options,
                                        KilnProfileOptions* opts) {
  memset(opts, 0, sizeof *opts);
  if (options != NULL) {
    if (options->struct_size < sizeof(size_t)) {
      return kiln_status_create(
          KILN_INVALID_ARGUMENT,
          "%s: options->struct_size is %zu; set it to sizeof(KilnProfileOptions)", fn,
          options->struct_size);
    }
    size_t n = options->struct_size < sizeof *opts ? options->struct_size : sizeof *opts;
    memcpy(opts, options, n);
  }
  if (opts->warmup < 0 || opts->repeat < 0 || opts->repeat > KILN_PROFILE_MAX_RUNS) {
    return kiln_status_create(
        KILN_INVALID_ARGUMENT,
        "%s: warmup (%d) must be >= 0 and repeat (%d) in [0, %d] (0 means one run)", fn,
        (int)opts->warmup, (int)opts->repeat, KILN_PROFILE_MAX_RUNS);
  }
  if (opts->repeat == 0) opts->repeat = 1;
  return NULL;
}

/* The profile of a VM artifact: one row per kernel call of a run (in call
 * order, named kernel#call), each time the median over the timed runs when
 * every run made the same calls (the same inputs: the same path), else the
 * last run's; then one row "vm" for the rest of the run (the instructions
 * between kernel calls: allocation, calls, control flow). */
static KilnStatus* vm_profile(KilnSession* session, const KilnProfileOptions* opts,
                              KilnProfile** out) {
  KilnStatus* st = kiln_session_check_inputs(session);
  if (st != NULL) return st;
  KilnVmTrace trace;
  memset(&trace, 0, sizeof trace);
  kiln_vm_set_trace(session->vm, &trace);
  for (int32_t r = 0; r < opts->warmup && st == NULL; ++r) st = kiln_session_run(session);
  double* runs = NULL;  /* runs[call * repeat + r] */
  double* other = NULL; /* per run: the time outside kernels */
  uint32_t calls = 0;
  int same = 1;
  for (int32_t r = 0; r < opts->repeat && st == NULL; ++r) {
    st = kiln_session_run(session);
    if (st != NULL) break;
    if (trace.failed) {
      st = kiln_status_create(KILN_RESOURCE_EXHAUSTED, "kiln_session_profile: out of memory");
      break;
    }
    if (r == 0) {
      calls = trace.num_calls;
      runs = (double*)calloc(((size_t)calls + 1) * (size_t)opts->repeat, sizeof(double));
      other = (double*)calloc((size_t)opts->repeat, sizeof(double));
      if (runs == NULL || other == NULL) {
        st = kiln_status_create(KILN_RESOURCE_EXHAUSTED, "kiln_session_profile: out of memory");
        break;
      }
    }
    if (trace.num_calls != calls) same = 0;
    uint64_t in_kernels = 0;
    for (uint32_t c = 0; c < trace.num_calls; ++c) in_kernels += trace.time_ns[c];
    other[r] = (double)(trace.total_ns - in_kernels) / 1e3;
    for (uint32_t c = 0; same && c < calls; ++c) {
      runs[(size_t)c * (size_t)opts->repeat + (size_t)r] = (double)trace.time_ns[c] / 1e3;
    }
  }
  kiln_vm_set_trace(session->vm, NULL);
  KilnProfile* p = NULL;
  if (st == NULL) {
    const KilnVmProgram* prog = kiln_vm_program(session->vm);
    const uint32_t rows = trace.num_calls + 1;
    p = (KilnProfile*)calloc(1, sizeof(KilnProfile));
    char shape[1024];
    size_t total = 64;
    for (uint32_t c = 0; c < trace.num_calls; ++c) {
      total += 2 * strlen(prog->kernel_names[trace.kernel[c]]) + 24 + sizeof shape;
    }
    if (p != NULL) {
      p->nodes = (KilnProfileNode*)calloc(rows, sizeof(KilnProfileNode));
      p->strings = (char*)malloc(total);
    }
    if (p == NULL || p->nodes == NULL || p->strings == NULL) {
      st = kiln_status_create(KILN_RESOURCE_EXHAUSTED, "kiln_session_profile: out of memory");
    } else {
      char* w = p->strings;
      const int32_t repeat = opts->repeat;
      for (uint32_t c = 0; c <= trace.num_calls; ++c) {
        KilnProfileNode* node = &p->nodes[c];
        double t;
        const double* mine = c < trace.num_calls ? runs + (size_t)c * (size_t)repeat : other;
        if (c < trace.num_calls && !same) {
          t = (double)trace.time_ns[c] / 1e3;
        } else {
          double* sorted = (double*)(uintptr_t)mine;
          qsort(sorted, (size_t)repeat, sizeof(double), compare_doubles);
          t = repeat % 2 == 1 ? sorted[repeat / 2]
                              : 0.5 * (sorted[repeat / 2 - 1] + sorted[repeat / 2]);
        }
        if (c < trace.num_calls) {
          const char* k = prog->kernel_names[trace.kernel[c]];
          const int64_t* sh = trace.shapes + (size_t)c * 33;
          size_t used = (size_t)snprintf(shape, sizeof shape, "(");
          for (int64_t d = 0; d < sh[0] && used < sizeof shape; ++d) {
            used += (size_t)snprintf(shape + used, sizeof shape - used, d ? ", %lld" : "%lld",
                                     (long long)sh[1 + d]);
          }
          if (used < sizeof shape) snprintf(shape + used, sizeof shape - used, ")");
          node->name = w;
          w += sprintf(w, "%s#%u", k, c) + 1;
          node->op = w;
          w += sprintf(w, "%s", k) + 1;
          node->shape = w;
          w += sprintf(w, "%s", shape) + 1;
          node->start_us = (double)trace.start_ns[c] / 1e3;
        } else {
          node->name = w;
          w += sprintf(w, "vm") + 1;
          node->op = w;
          w += sprintf(w, "vm instructions") + 1;
          node->shape = w;
          w += sprintf(w, "(%llu)", (unsigned long long)trace.instructions) + 1;
          node->start_us = 0;
        }
        node->time_us = t;
        p->total_us += t;
      }
      p->num_nodes = (int32_t)rows;
      if (kiln_handle_add(KILN_HANDLE_PROFILE, p) != 0) {
        st = kiln_status_create(KILN_RESOURCE_EXHAUSTED, "kiln_session_profile: out of memory");
      }
    }
  }
  free(runs);
  free(other);
  kiln_vm_trace_free(&trace);
  if (st != NULL) {
    profile_free(p);
    return st;
  }
  *out = p;
  return NULL;
}

static KilnStatus* profile_with(KilnSession* session, const KilnProfileOptions* opts,
                                KilnProfile** out) {
  const KilnArtifact* art = session->artifact;
  if (session->vm != NULL) return vm_profile(session, opts, out);
  const int32_t n = session->num_steps;
  const size_t count = n > 0 ? (size_t)n : 1;
  const int32_t repeat = opts->repeat;
  double* starts = (double*)calloc(count, sizeof(double));
  double* times = (double*)calloc(count, sizeof(double));
  /* runs[i * repeat + r]: node i's time in timed run r. */
  double* runs = (double*)calloc(count * (size_t)repeat, sizeof(double));
  KilnProfile* p = (KilnProfile*)calloc(1, sizeof(KilnProfile));
  KilnStatus* st = NULL;
  if (starts == NULL || times == NULL || runs == NULL || p == NULL) goto oom;
  p->nodes = (KilnProfileNode*)calloc(count, sizeof(KilnProfileNode));
  if (p->nodes == NULL) goto oom;

  for (int32_t r = 0; r < opts->warmup; ++r) {
    st = run_instrumented(session, NULL, NULL, NULL, NULL);
    if (st != NULL) goto fail;
  }
  for (int32_t r = 0; r < repeat; ++r) {
    st = run_instrumented(session, starts, times, NULL, NULL);
    if (st != NULL) goto fail;
    for (int32_t i = 0; i < n; ++i) runs[(size_t)i * (size_t)repeat + (size_t)r] = times[i];
  }
  /* Each node's time is its median over the timed runs (the mean of the
   * middle two for an even count); starts are those of the last run. */
  for (int32_t i = 0; i < n; ++i) {
    double* mine = runs + (size_t)i * (size_t)repeat;
    qsort(mine, (size_t)repeat, sizeof(double), compare_doubles);
    times[i] = repeat % 2 == 1 ? mine[repeat / 2]
                               : 0.5 * (mine[repeat / 2 - 1] + mine[repeat / 2]);
  }

  /* Strings: name, op and shape of every node, in one block. */
  {
    char shape[1024];
    size_t total = 0;
    for (int32_t i = 0; i < n; ++i) {
      const KilnPlanNode* pn = &art->nodes[session->steps[i].node_id];
      format_shape(art, pn->first_entry, shape, sizeof shape);
      total += strlen(pn->name) + strlen(pn->op_names) + strlen(shape) + 3;
    }
    p->strings = (char*)malloc(total > 0 ? total : 1);
    if (p->strings == NULL) goto oom;
    char* w = p->strings;
    for (int32_t i = 0; i < n; ++i) {
      const KilnPlanNode* pn = &art->nodes[session->steps[i].node_id];
      KilnProfileNode* pnode = &p->nodes[i];
      format_shape(art, pn->first_entry, shape, sizeof shape);
      const char* src[3] = {pn->name, pn->op_names, shape};
      const char** dst[3] = {&pnode->name, &pnode->op, &pnode->shape};
      for (int k = 0; k < 3; ++k) {
        size_t len = strlen(src[k]);
        memcpy(w, src[k], len + 1);
        *dst[k] = w;
        w += len + 1;
      }
      pnode->start_us = starts[i];
      pnode->time_us = times[i];
      pnode->num_inputs = pn->num_inputs;
      pnode->num_outputs = pn->num_outputs;
      p->total_us += times[i];
    }
  }
  p->num_nodes = n;
  if (kiln_handle_add(KILN_HANDLE_PROFILE, p) != 0) goto oom;
  free(starts);
  free(times);
  free(runs);
  *out = p;
  return NULL;

oom:
  st = kiln_status_create(KILN_RESOURCE_EXHAUSTED, "kiln_session_profile: out of memory");
fail:
  free(starts);
  free(times);
  free(runs);
  profile_free(p);
  return st;
}

KilnStatus* kiln_session_profile(KilnSession* session, KilnProfile** out) {
  return kiln_session_profile_with(session, NULL, out);
}

KilnStatus* kiln_session_profile_with(KilnSession* session, const KilnProfileOptions* options,
                                      KilnProfile** out) {
  static const char fn[] = "kiln_session_profile";
  if (out != NULL) *out = NULL;
  if (session == NULL || out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              session == NULL ? "session" : "out");
  }
  KilnStatus* st = kiln_session_check_live(session, fn);
  if (st != NULL) return st;
  KilnProfileOptions opts;
  st = read_profile_options(fn, options, &opts);
  if (st != NULL) return st;
  return profile_with(session, &opts, out);
}

int32_t kiln_profile_num_nodes(const KilnProfile* profile) {
  return kiln_handle_live(KILN_HANDLE_PROFILE, profile) ? profile->num_nodes : 0;
}

double kiln_profile_total_us(const KilnProfile* profile) {
  return kiln_handle_live(KILN_HANDLE_PROFILE, profile) ? profile->total_us : 0.0;
}

KilnStatus* kiln_profile_node(const KilnProfile* profile, int32_t index, const char** name,
                              const char** op, double* time_us) {
  if (name != NULL) *name = NULL;
  if (op != NULL) *op = NULL;
  if (time_us != NULL) *time_us = 0.0;
  KilnStatus* dead = profile_check_live(profile, "kiln_profile_node");
  if (dead != NULL) return dead;
  if (index < 0 || index >= profile->num_nodes) {
    return kiln_status_create(KILN_OUT_OF_RANGE,
                              "kiln_profile_node: index %d out of range (%d nodes)", (int)index,
                              (int)profile->num_nodes);
  }
  const KilnProfileNode* pn = &profile->nodes[index];
  if (name != NULL) *name = pn->name;
  if (op != NULL) *op = pn->op;
  if (time_us != NULL) *time_us = pn->time_us;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Table                                                                     */
/* ------------------------------------------------------------------------ */

enum { COL_NAME, COL_OPS, COL_TIME, COL_PCT, COL_SHAPE, COL_IN, COL_OUT, NUM_COLS };

static const char* const kHeaders[NUM_COLS] = {"Node Name", "Ops",    "Time(us)", "Time(%)",
                                               "Shape",     "Inputs", "Outputs"};

/* The cells of row `i` (i == num_nodes: the total row). */
static void table_row(const KilnProfile* p, int32_t i, char cells[NUM_COLS][64],
                      const char* text[NUM_COLS]) {
  if (i == p->num_nodes) {
    (void)snprintf(cells[COL_TIME], 64, "%.3f", p->total_us);
    text[COL_NAME] = "Total_time";
    text[COL_OPS] = "-";
    text[COL_TIME] = cells[COL_TIME];
    text[COL_PCT] = "-";
    text[COL_SHAPE] = "-";
    text[COL_IN] = "-";
    text[COL_OUT] = "-";
    return;
  }
  const KilnProfileNode* pn = &p->nodes[i];
  (void)snprintf(cells[COL_TIME], 64, "%.3f", pn->time_us);
  (void)snprintf(cells[COL_PCT], 64, "%.3f",
                 p->total_us > 0.0 ? 100.0 * pn->time_us / p->total_us : 0.0);
  (void)snprintf(cells[COL_IN], 64, "%d", (int)pn->num_inputs);
  (void)snprintf(cells[COL_OUT], 64, "%d", (int)pn->num_outputs);
  text[COL_NAME] = pn->name;
  text[COL_OPS] = pn->op;
  text[COL_TIME] = cells[COL_TIME];
  text[COL_PCT] = cells[COL_PCT];
  text[COL_SHAPE] = pn->shape;
  text[COL_IN] = cells[COL_IN];
  text[COL_OUT] = cells[COL_OUT];
}

KilnStatus* kiln_profile_table(const KilnProfile* profile, char** text) {
  if (text != NULL) *text = NULL;
  if (profile == NULL || text == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_profile_table: %s is NULL",
                              profile == NULL ? "profile" : "text");
  }
  KilnStatus* dead = profile_check_live(profile, "kiln_profile_table");
  if (dead != NULL) return dead;
  size_t width[NUM_COLS];
  for (int c = 0; c < NUM_COLS; ++c) width[c] = strlen(kHeaders[c]);
  char cells[NUM_COLS][64];
  const char* row[NUM_COLS];
  for (int32_t i = 0; i <= profile->num_nodes; ++i) {
    table_row(profile, i, cells, row);
    for (int c = 0; c < NUM_COLS; ++c) {
      size_t len = strlen(row[c]);
      if (len > width[c]) width[c] = len;
    }
  }
  TextBuf b = {NULL, 0, 0, 0};
  for (int c = 0; c < NUM_COLS; ++c) tb_cell(&b, kHeaders[c], width[c], c == NUM_COLS - 1);
  tb_append(&b, "\n");
  char dashes[64];
  for (int c = 0; c < NUM_COLS; ++c) {
    size_t len = strlen(kHeaders[c]);
    memset(dashes, '-', len);
    dashes[len] = '\0';
    tb_cell(&b, dashes, width[c], c == NUM_COLS - 1);
  }
  tb_append(&b, "\n");
  for (int32_t i = 0; i <= profile->num_nodes; ++i) {
    table_row(profile, i, cells, row);
    for (int c = 0; c < NUM_COLS; ++c) tb_cell(&b, row[c], width[c], c == NUM_COLS - 1);
    tb_append(&b, "\n");
  }
  if (b.failed || b.data == NULL) {
    free(b.data);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "kiln_profile_table: out of memory");
  }
  *text = b.data;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Chrome trace                                                              */
/* ------------------------------------------------------------------------ */

/* A malloc'ed copy of cJSON's unformatted print (cJSON may use other hooks). */
static char* print_json(const cJSON* json) {
  char* printed = cJSON_PrintUnformatted(json);
  if (printed == NULL) return NULL;
  size_t n = strlen(printed);
  char* copy = (char*)malloc(n + 1);
  if (copy != NULL) memcpy(copy, printed, n + 1);
  cJSON_free(printed);
  return copy;
}

KilnStatus* kiln_profile_chrome_trace(const KilnProfile* profile, char** json) {
  if (json != NULL) *json = NULL;
  if (profile == NULL || json == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_profile_chrome_trace: %s is NULL",
                              profile == NULL ? "profile" : "json");
  }
  KilnStatus* dead = profile_check_live(profile, "kiln_profile_chrome_trace");
  if (dead != NULL) return dead;
  cJSON* root = cJSON_CreateObject();
  cJSON* events = cJSON_AddArrayToObject(root, "traceEvents");
  int ok = root != NULL && events != NULL;
  for (int32_t i = 0; ok && i < profile->num_nodes; ++i) {
    const KilnProfileNode* pn = &profile->nodes[i];
    cJSON* ev = cJSON_CreateObject();
    ok = ev != NULL && cJSON_AddItemToArray(events, ev);
    if (!ok) {
      cJSON_Delete(ev);
      break;
    }
    cJSON* args = NULL;
    ok = cJSON_AddStringToObject(ev, "name", pn->name) != NULL &&
         cJSON_AddStringToObject(ev, "cat", "op") != NULL &&
         cJSON_AddStringToObject(ev, "ph", "X") != NULL &&
         cJSON_AddNumberToObject(ev, "ts", pn->start_us) != NULL &&
         cJSON_AddNumberToObject(ev, "dur", pn->time_us) != NULL &&
         cJSON_AddNumberToObject(ev, "pid", 1) != NULL &&
         cJSON_AddNumberToObject(ev, "tid", 1) != NULL &&
         (args = cJSON_AddObjectToObject(ev, "args")) != NULL &&
         cJSON_AddStringToObject(args, "op", pn->op) != NULL &&
         cJSON_AddStringToObject(args, "shape", pn->shape) != NULL;
  }
  ok = ok && cJSON_AddStringToObject(root, "displayTimeUnit", "ns") != NULL;
  char* text = ok ? print_json(root) : NULL;
  cJSON_Delete(root);
  if (text == NULL) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "kiln_profile_chrome_trace: out of memory");
  }
  *json = text;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Dump                                                                      */
/* ------------------------------------------------------------------------ */

/* Creates `path` and its missing parents; an existing directory is fine. */
static KilnStatus* make_dirs(const char* path) {
  size_t n = strlen(path);
  char* tmp = (char*)malloc(n + 1);
  if (tmp == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "out of memory");
  memcpy(tmp, path, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (tmp[i] != '/' && tmp[i] != '\0') continue;
    char saved = tmp[i];
    tmp[i] = '\0';
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST) {
      int err = errno;
      KilnStatus* st =
          kiln_status_create(KILN_INTERNAL, "cannot create directory '%s': %s", tmp, strerror(err));
      free(tmp);
      return st;
    }
    tmp[i] = saved;
  }
  free(tmp);
  struct stat sb;
  if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    return kiln_status_create(KILN_INTERNAL, "'%s' exists and is not a directory", path);
  }
  return NULL;
}

static KilnStatus* write_text_file(const char* path, const char* text) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) {
    int err = errno;
    return kiln_status_create(KILN_INTERNAL, "cannot write '%s': %s", path, strerror(err));
  }
  size_t n = strlen(text);
  int ok = fwrite(text, 1, n, f) == n;
  ok = (fclose(f) == 0) && ok;
  if (!ok) return kiln_status_create(KILN_INTERNAL, "cannot write '%s' (disk full?)", path);
  return NULL;
}

typedef struct {
  const char* dir; /* the tensors directory */
  char* path;      /* scratch for file names */
  size_t path_size;
} DumpState;

/* Writes tensor `entry` as <dir>/<safe node name>__<index>.npy. */
static KilnStatus* dump_entry(KilnSession* s, DumpState* d, int32_t node, int32_t index) {
  const KilnArtifact* art = s->artifact;
  const KilnPlanNode* pn = &art->nodes[node];
  size_t need = strlen(d->dir) + strlen(pn->name) + 40;
  if (need > d->path_size) {
    char* grown = (char*)realloc(d->path, need);
    if (grown == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "out of memory");
    d->path = grown;
    d->path_size = need;
  }
  int n = snprintf(d->path, d->path_size, "%s/", d->dir);
  if (n < 0) return kiln_status_create(KILN_INTERNAL, "cannot format a file name");
  char* w = d->path + n;
  for (const char* c = pn->name; *c != '\0'; ++c) {
    const char ch = *c;
    const int safe = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                     (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
    *w++ = safe ? ch : '_';
  }
  (void)snprintf(w, d->path_size - (size_t)(w - d->path), "__%d.npy", (int)index);
  const DLTensor* t = &s->tensors[pn->first_entry + index];
  if (s->cuda == NULL) return kiln_npy_write(d->path, t);
  /* A CUDA session: the tensor copied to the host first. */
  const KilnPlanEntry* pe = &art->entries[pn->first_entry + index];
  void* host = malloc(pe->nbytes > 0 ? (size_t)pe->nbytes : 1);
  if (host == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "out of memory");
  KilnStatus* st = kiln_cuda_session_copy(s, host, 0, t->data, 1, pe->nbytes);
  if (st == NULL) {
    DLTensor h = *t;
    h.data = host;
    h.device.device_type = kDLCPU;
    h.device.device_id = 0;
    st = kiln_npy_write(d->path, &h);
  }
  free(host);
  return st;
}

static KilnStatus* dump_after_step(KilnSession* s, int32_t step, void* closure) {
  DumpState* d = (DumpState*)closure;
  const int32_t node = s->steps[step].node_id;
  const KilnPlanNode* pn = &s->artifact->nodes[node];
  for (int32_t o = 0; o < pn->num_outputs; ++o) {
    KilnStatus* st = dump_entry(s, d, node, o);
    if (st != NULL) return st;
  }
  return NULL;
}

/* "<dir>/<file>", malloc'ed. */
static char* join_path(const char* dir, const char* file) {
  size_t a = strlen(dir), b = strlen(file);
  char* out = (char*)malloc(a + b + 2);
  if (out == NULL) return NULL;
  memcpy(out, dir, a);
  out[a] = '/';
  memcpy(out + a + 1, file, b + 1);
  return out;
}

KilnStatus* kiln_session_debug_dump(KilnSession* session, const char* dir) {
  return kiln_session_debug_dump_with(session, dir, NULL);
}

KilnStatus* kiln_session_debug_dump_with(KilnSession* session, const char* dir,
                                         const KilnProfileOptions* options) {
  if (session == NULL || dir == NULL || dir[0] == '\0') {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_session_debug_dump: %s",
                              session == NULL ? "session is NULL" : "dir is NULL or empty");
  }
  KilnStatus* st = kiln_session_check_live(session, "kiln_session_debug_dump");
  if (st != NULL) return st;
  const KilnArtifact* art = session->artifact;
  KilnProfileOptions opts;
  st = read_profile_options("kiln_session_debug_dump", options, &opts);
  if (st != NULL) return st;
  st = kiln_session_check_inputs(session);
  if (st != NULL) return st;

  KilnProfile* profile = NULL;
  char* table = NULL;
  char* trace = NULL;
  char* path = NULL;
  DumpState d = {NULL, NULL, 0};

  st = make_dirs(dir);
  if (st != NULL) goto done;

  /* graph.json (a VM artifact has no graph) */
  if (session->vm == NULL) {
    path = join_path(dir, "graph.json");
    if (path == NULL) goto oom;
    st = write_text_file(path, art->graph_text);
    if (st != NULL) goto done;
  }

  /* profile.txt and trace.json, from a clean timed run. */
  st = profile_with(session, &opts, &profile);
  if (st == NULL) st = kiln_profile_table(profile, &table);
  if (st == NULL) st = kiln_profile_chrome_trace(profile, &trace);
  if (st != NULL) goto done;
  free(path);
  path = join_path(dir, "profile.txt");
  if (path == NULL) goto oom;
  st = write_text_file(path, table);
  if (st != NULL) goto done;
  free(path);
  path = join_path(dir, "trace.json");
  if (path == NULL) goto oom;
  st = write_text_file(path, trace);
  if (st != NULL) goto done;

  /* A VM artifact: the profile and trace of its kernel calls; its
   * intermediate tensors live in the VM's registers, not dumped yet. */
  if (opts.skip_tensors || session->vm != NULL) goto done;

  /* tensors/: inputs and parameters first, then every node's outputs right
   * after the node ran. */
  free(path);
  path = join_path(dir, "tensors");
  if (path == NULL) goto oom;
  st = make_dirs(path);
  if (st != NULL) goto done;
  d.dir = path;
  for (int32_t n = 0; n < art->num_nodes; ++n) {
    if (art->nodes[n].is_op) continue;
    st = dump_entry(session, &d, n, 0);
    if (st != NULL) goto done;
  }
  st = run_instrumented(session, NULL, NULL, dump_after_step, &d);
  goto done;

oom:
  st = kiln_status_create(KILN_RESOURCE_EXHAUSTED, "kiln_session_debug_dump: out of memory");
done:
  free(d.path);
  free(path);
  free(table);
  free(trace);
  kiln_profile_release(profile);
  return st;
}
