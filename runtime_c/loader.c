/* File: runtime_c/loader.c
 *
 * kiln_artifact_load and the artifact accessors of kiln/runtime.h.
 *
 * The steps of docs/artifact.md ("What the loader checks"), in order:
 *  1-4  the file is opened and mapped read-only; kiln_artifact_validate_image
 *       (artifact_blob.c) checks the ELF symbol, the header, the whole-file
 *       checksum, the section table and every PARAMS entry.
 *  5    META and GRAPH are copied into NUL-terminated buffers, parsed with
 *       cJSON and checked field by field; the immutable plan (entries,
 *       storages, arena offsets, inputs, outputs) is built from them.
 *  6    only then the library is dlopen'ed (RTLD_NOW | RTLD_LOCAL); every
 *       func_name is resolved (and must be defined by the library itself);
 *       the mapped `kiln_artifact` blob must be 64-byte aligned and equal,
 *       byte for byte, to the blob validated in steps 1-5 (so the file did not
 *       change in between); parameters are then used in place in that mapping
 *       and the validation mapping is unmapped.
 *
 * Every failure is a KilnStatus naming the file and the problem; everything
 * allocated so far is freed (artifact_free handles a partial artifact).
 * Numbers read from the file are range-checked before use and every size is
 * computed with overflow checks.
 */
#define _GNU_SOURCE 1 /* dladdr, O_CLOEXEC; implies POSIX.1-2008 */

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kiln/artifact_format.h"
#include "kiln/kernel_abi.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime_c/artifact_blob.h"
#include "runtime_c/runtime_internal.h"

/* Limits on what a GRAPH may declare (far above any real model; they keep
 * every count in int32_t and every size computation far from overflow). */
#define KILN_MAX_NODES (1 << 24)
#define KILN_MAX_ENTRIES (1 << 26)
#define KILN_MAX_NODE_INPUTS (1 << 26)
/* Largest dim accepted (2^53: exactly representable as a JSON number). */
#define KILN_MAX_DIM 9007199254740992LL
/* Largest tensor accepted, in bytes (keeps rounding and sums in range). */
#define KILN_MAX_TENSOR_BYTES (UINT64_C(1) << 56)

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */
/* ------------------------------------------------------------------------ */

const char* kiln_runtime_version(void) { return "0.1.0"; }

void kiln_free(void* ptr) { free(ptr); }

uint64_t kiln_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

void kiln_format_tensor_type(DLDataType dtype, int32_t ndim, const int64_t* shape, char* buf,
                             size_t buf_size) {
  if (buf == NULL || buf_size == 0) return;
  char dt[64];
  kiln_dtype_to_string(dtype, dt, sizeof dt);
  size_t used = 0;
  int n = snprintf(buf, buf_size, "%s[", dt);
  if (n < 0 || (size_t)n >= buf_size) return;
  used = (size_t)n;
  for (int32_t i = 0; i < ndim; ++i) {
    n = snprintf(buf + used, buf_size - used, i == 0 ? "%lld" : ",%lld",
                 shape == NULL ? 0LL : (long long)shape[i]);
    if (n < 0 || (size_t)n >= buf_size - used) return;
    used += (size_t)n;
  }
  (void)snprintf(buf + used, buf_size - used, "]");
}

/* a * b into *out; returns 0 on overflow. */
static int mul_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > UINT64_MAX / a) return 0;
  *out = a * b;
  return 1;
}

/* a + b into *out; returns 0 on overflow. */
static int add_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (b > UINT64_MAX - a) return 0;
  *out = a + b;
  return 1;
}

/* x rounded up to KILN_RT_ALIGNMENT (x <= KILN_MAX_TENSOR_BYTES). */
static uint64_t round_up64(uint64_t x) {
  return (x + (KILN_RT_ALIGNMENT - 1)) & ~(uint64_t)(KILN_RT_ALIGNMENT - 1);
}

/* ------------------------------------------------------------------------ */
/* String storage: every string of an artifact lives in a list of blocks.     */
/* ------------------------------------------------------------------------ */

struct KilnStringBlock {
  struct KilnStringBlock* next;
  size_t used;
  size_t capacity;
  char data[];
};

#define KILN_STRING_BLOCK_SIZE 16384u

/* A NUL-terminated copy of s[0, n) owned by the artifact, or NULL. Small
 * strings are packed into shared blocks; a large one gets a block of its own,
 * linked behind the current block so that the current one keeps filling. */
static char* artifact_strndup(KilnArtifact* art, const char* s, size_t n) {
  if (n > SIZE_MAX / 2) return NULL;
  struct KilnStringBlock* b = art->strings;
  if (b == NULL || b->capacity - b->used < n + 1) {
    const int large = n + 1 > KILN_STRING_BLOCK_SIZE / 4;
    const size_t cap = large ? n + 1 : KILN_STRING_BLOCK_SIZE;
    struct KilnStringBlock* nb = (struct KilnStringBlock*)malloc(sizeof *nb + cap);
    if (nb == NULL) return NULL;
    nb->used = 0;
    nb->capacity = cap;
    if (large && b != NULL) {
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      art->strings = nb;
    }
    b = nb;
  }
  char* out = b->data + b->used;
  memcpy(out, s, n);
  out[n] = '\0';
  b->used += n + 1;
  return out;
}

static char* artifact_strdup(KilnArtifact* art, const char* s) {
  return artifact_strndup(art, s, strlen(s));
}

static void artifact_free(KilnArtifact* art) {
  if (art == NULL) return;
  if (art->dl_handle != NULL) dlclose(art->dl_handle);
  free(art->path);
  free(art->meta_text);
  free(art->graph_text);
  free(art->nodes);
  free(art->node_inputs);
  free(art->entries);
  free(art->shapes);
  free(art->storages);
  free(art->inputs);
  free(art->outputs);
  free(art->op_nodes);
  struct KilnStringBlock* b = art->strings;
  while (b != NULL) {
    struct KilnStringBlock* next = b->next;
    free(b);
    b = next;
  }
  free(art);
}

/* ------------------------------------------------------------------------ */
/* The loader's state and its error helper                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char* path;
  KilnArtifact* art;
  KilnBlobView view;
  const uint8_t* blob; /* the blob inside the validation image */
  cJSON* meta;
  cJSON* graph;
  cJSON* input_names; /* META arrays (borrowed from meta) */
  cJSON* output_names;
  int32_t* row_ptr;   /* num_nodes + 1 */
  int32_t* null_kind; /* per node: 0 op, 1 input, 2 param (index + 2 in params) */
  uint64_t* param_of; /* per node: param index (when a param) */
  int32_t* head_entries;
  int32_t num_heads;
} Loader;

static KilnStatus* lerr(const Loader* L, KilnStatusCode code, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static KilnStatus* lerr(const Loader* L, KilnStatusCode code, const char* format, ...) {
  char msg[2048];
  va_list args;
  va_start(args, format);
  (void)vsnprintf(msg, sizeof msg, format, args);
  va_end(args);
  return kiln_status_create(code, "%s: %s", L->path, msg);
}

static KilnStatus* oom(const Loader* L) {
  return lerr(L, KILN_RESOURCE_EXHAUSTED, "out of memory while loading");
}

/* "node 3 ('fused_add')" into buf. */
static const char* node_label(const Loader* L, int32_t node, char* buf, size_t size) {
  const char* name =
      (L->art->nodes != NULL && L->art->nodes[node].name != NULL) ? L->art->nodes[node].name : "?";
  (void)snprintf(buf, size, "node %d ('%.200s')", (int)node, name);
  return buf;
}

/* ------------------------------------------------------------------------ */
/* JSON helpers                                                              */
/* ------------------------------------------------------------------------ */

/* cJSON_Parse* write a process-wide error position; serialize them so that
 * concurrent loads are free of data races. */
static pthread_mutex_t g_cjson_parse_mu = PTHREAD_MUTEX_INITIALIZER;

/* An integral JSON number in [min, max] (|min|, |max| <= 2^53). */
static int json_int(const cJSON* item, int64_t min, int64_t max, int64_t* out) {
  if (!cJSON_IsNumber(item)) return 0;
  double v = item->valuedouble;
  if (!(v >= (double)min && v <= (double)max)) return 0; /* NaN fails too */
  int64_t i = (int64_t)v;
  if ((double)i != v) return 0;
  *out = i;
  return 1;
}

/* An integer given as a JSON number or as a decimal string (TVM writes the
 * node attrs as strings: "num_inputs": "2"). */
static int json_int_or_string(const cJSON* item, int64_t min, int64_t max, int64_t* out) {
  if (cJSON_IsString(item)) {
    const char* s = item->valuestring;
    if (s == NULL || s[0] == '\0') return 0;
    int64_t v = 0;
    for (size_t i = 0; s[i] != '\0'; ++i) {
      if (s[i] < '0' || s[i] > '9' || i >= 15) return 0;
      v = v * 10 + (s[i] - '0');
    }
    if (v < min || v > max) return 0;
    *out = v;
    return 1;
  }
  return json_int(item, min, max, out);
}

static int json_array_size(const cJSON* a) {
  int n = 0;
  const cJSON* it = NULL;
  cJSON_ArrayForEach(it, a)++ n;
  return n;
}

/* Copies `size` bytes of section `what` into a NUL-terminated buffer and
 * parses it. */
static KilnStatus* parse_section(const Loader* L, const char* what, const char* bytes,
                                 uint64_t size, char** text_out, cJSON** json_out) {
  *text_out = NULL;
  *json_out = NULL;
  if (size >= SIZE_MAX) return oom(L);
  if (size == 0) return lerr(L, KILN_DATA_LOSS, "%s section is empty (expected JSON)", what);
  if (memchr(bytes, '\0', (size_t)size) != NULL) {
    return lerr(L, KILN_DATA_LOSS, "%s section contains a NUL byte (at offset %zu)", what,
                (size_t)((const char*)memchr(bytes, '\0', (size_t)size) - bytes));
  }
  char* text = (char*)malloc((size_t)size + 1);
  if (text == NULL) return oom(L);
  memcpy(text, bytes, (size_t)size);
  text[size] = '\0';
  const char* end = NULL;
  pthread_mutex_lock(&g_cjson_parse_mu);
  cJSON* json = cJSON_ParseWithLengthOpts(text, (size_t)size, &end, 0);
  pthread_mutex_unlock(&g_cjson_parse_mu);
  if (json == NULL) {
    size_t at = (end != NULL && end >= text && end <= text + size) ? (size_t)(end - text) : 0;
    free(text);
    return lerr(L, KILN_DATA_LOSS, "%s section is not valid JSON (error near byte %zu)", what, at);
  }
  /* Nothing but white space may follow the value. */
  if (end != NULL && end >= text && end <= text + size) {
    for (const char* p = end; p < text + size; ++p) {
      if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
        size_t at = (size_t)(p - text);
        cJSON_Delete(json);
        free(text);
        return lerr(L, KILN_DATA_LOSS,
                    "%s section has trailing bytes after the JSON value (at byte %zu)", what, at);
      }
    }
  }
  *text_out = text;
  *json_out = json;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Sorted name index (node names unique; parameter lookup)                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char* s;
  size_t n;
  int64_t index;
} NameRef;

static int name_cmp(const char* a, size_t an, const char* b, size_t bn) {
  size_t m = an < bn ? an : bn;
  int c = memcmp(a, b, m);
  if (c != 0) return c;
  return an < bn ? -1 : (an > bn ? 1 : 0);
}

static int name_ref_cmp(const void* pa, const void* pb) {
  const NameRef* a = (const NameRef*)pa;
  const NameRef* b = (const NameRef*)pb;
  return name_cmp(a->s, a->n, b->s, b->n);
}

/* Index of `s` in the sorted refs, or -1. */
static int64_t name_find(const NameRef* refs, size_t count, const char* s, size_t n) {
  size_t lo = 0, hi = count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = name_cmp(refs[mid].s, refs[mid].n, s, n);
    if (c == 0) return refs[mid].index;
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return -1;
}

/* ------------------------------------------------------------------------ */
/* META                                                                      */
/* ------------------------------------------------------------------------ */

static KilnStatus* check_meta(Loader* L) {
  KilnArtifact* art = L->art;
  const cJSON* meta = L->meta;
  if (!cJSON_IsObject(meta)) return lerr(L, KILN_DATA_LOSS, "META: not a JSON object");
  const cJSON* producer = cJSON_GetObjectItemCaseSensitive(meta, "producer");
  if (!cJSON_IsString(producer)) {
    return lerr(L, KILN_DATA_LOSS, "META: 'producer' is missing or not a string");
  }
  const cJSON* target = cJSON_GetObjectItemCaseSensitive(meta, "target");
  if (!cJSON_IsString(target)) {
    return lerr(L, KILN_DATA_LOSS, "META: 'target' is missing or not a string");
  }
  const cJSON* abi = cJSON_GetObjectItemCaseSensitive(meta, "kernel_abi_version");
  int64_t abi_version = 0;
  if (!json_int(abi, 0, INT32_MAX, &abi_version)) {
    return lerr(L, KILN_DATA_LOSS,
                "META: 'kernel_abi_version' is missing or not a non-negative integer");
  }
  if (abi_version != KILN_KERNEL_ABI_VERSION) {
    return lerr(L, KILN_UNIMPLEMENTED,
                "META: kernel_abi_version is %lld, this runtime implements kernel ABI version %d",
                (long long)abi_version, KILN_KERNEL_ABI_VERSION);
  }
  const cJSON* model = cJSON_GetObjectItemCaseSensitive(meta, "model");
  if (model != NULL && !cJSON_IsString(model)) {
    return lerr(L, KILN_DATA_LOSS, "META: 'model' is not a string");
  }
  cJSON* input_names = cJSON_GetObjectItemCaseSensitive(meta, "input_names");
  cJSON* output_names = cJSON_GetObjectItemCaseSensitive(meta, "output_names");
  const struct {
    const char* key;
    cJSON* a;
  } lists[2] = {{"input_names", input_names}, {"output_names", output_names}};
  for (int k = 0; k < 2; ++k) {
    if (!cJSON_IsArray(lists[k].a)) {
      return lerr(L, KILN_DATA_LOSS, "META: '%s' is missing or not an array", lists[k].key);
    }
    int i = 0;
    const cJSON* it = NULL;
    cJSON_ArrayForEach(it, lists[k].a) {
      if (!cJSON_IsString(it) || it->valuestring[0] == '\0') {
        return lerr(L, KILN_DATA_LOSS, "META: %s[%d] is not a non-empty string", lists[k].key, i);
      }
      ++i;
    }
  }
  L->input_names = input_names;
  L->output_names = output_names;

  art->producer = artifact_strdup(art, producer->valuestring);
  art->target = artifact_strdup(art, target->valuestring);
  if (model != NULL) {
    art->model = artifact_strdup(art, model->valuestring);
  } else {
    const char* base = strrchr(L->path, '/');
    art->model = artifact_strdup(art, base != NULL ? base + 1 : L->path);
  }
  if (art->producer == NULL || art->target == NULL || art->model == NULL) return oom(L);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* GRAPH                                                                     */
/* ------------------------------------------------------------------------ */

/* Reads an entry [node_id, index, version] (TVM also writes [node_id, index])
 * referring to a node < limit_node. Returns the flat entry index or -1 with
 * *why set. */
static int32_t read_entry(const Loader* L, const cJSON* e, int32_t limit_node, const char** why) {
  if (!cJSON_IsArray(e)) {
    *why = "is not an array [node_id, index, version]";
    return -1;
  }
  int n = json_array_size(e);
  if (n != 2 && n != 3) {
    *why = "does not have 3 elements [node_id, index, version]";
    return -1;
  }
  const cJSON* first = e->child;
  const cJSON* second = first->next;
  const cJSON* third = (n == 3) ? second->next : NULL;
  int64_t node = 0, index = 0, version = 0;
  if (!json_int(first, 0, INT32_MAX, &node)) {
    *why = "has a node id that is not a non-negative integer";
    return -1;
  }
  if (node >= L->art->num_nodes) {
    *why = "has a node id out of range";
    return -1;
  }
  if (node >= limit_node) {
    *why = "refers to a node that is not earlier in the graph (nodes must be in topological order)";
    return -1;
  }
  if (!json_int(second, 0, INT32_MAX, &index)) {
    *why = "has an output index that is not a non-negative integer";
    return -1;
  }
  if (third != NULL && !json_int(third, 0, INT32_MAX, &version)) {
    *why = "has a version that is not a non-negative integer";
    return -1;
  }
  int32_t outputs = L->row_ptr[node + 1] - L->row_ptr[node];
  if (index >= outputs) {
    *why = "has an output index out of range for its node";
    return -1;
  }
  return L->row_ptr[node] + (int32_t)index;
}

/* attrs[key] = [tag, [...]]: returns the inner array (with num_entries
 * elements) or NULL with an error. */
static KilnStatus* attrs_list(const Loader* L, const cJSON* attrs, const char* key, const char* tag,
                              int required, const cJSON** out) {
  *out = NULL;
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(attrs, key);
  if (v == NULL) {
    if (!required) return NULL;
    return lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.%s is missing", key);
  }
  if (!cJSON_IsArray(v) || json_array_size(v) != 2 || !cJSON_IsString(v->child) ||
      strcmp(v->child->valuestring, tag) != 0 || !cJSON_IsArray(v->child->next)) {
    return lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.%s is not [\"%s\", [...]]", key, tag);
  }
  const cJSON* list = v->child->next;
  int n = json_array_size(list);
  if (n != L->art->num_entries) {
    return lerr(L, KILN_DATA_LOSS,
                "GRAPH: attrs.%s has %d elements, but the graph has %d entries (node_row_ptr)", key,
                n, (int)L->art->num_entries);
  }
  *out = list;
  return NULL;
}

static KilnStatus* parse_row_ptr(Loader* L, const cJSON* graph, const cJSON* nodes) {
  KilnArtifact* art = L->art;
  const cJSON* rp = cJSON_GetObjectItemCaseSensitive(graph, "node_row_ptr");
  if (!cJSON_IsArray(rp))
    return lerr(L, KILN_DATA_LOSS, "GRAPH: 'node_row_ptr' is missing or not an array");
  int n = json_array_size(nodes);
  if (n > KILN_MAX_NODES) return lerr(L, KILN_DATA_LOSS, "GRAPH: too many nodes (%d)", n);
  art->num_nodes = n;
  if (json_array_size(rp) != n + 1) {
    return lerr(L, KILN_DATA_LOSS, "GRAPH: node_row_ptr has %d elements, expected %d (nodes + 1)",
                json_array_size(rp), n + 1);
  }
  L->row_ptr = (int32_t*)malloc(sizeof(int32_t) * ((size_t)n + 1));
  if (L->row_ptr == NULL) return oom(L);
  int i = 0;
  const cJSON* it = NULL;
  int64_t prev = 0;
  cJSON_ArrayForEach(it, rp) {
    int64_t v = 0;
    if (!json_int(it, 0, KILN_MAX_ENTRIES, &v)) {
      return lerr(L, KILN_DATA_LOSS, "GRAPH: node_row_ptr[%d] is not an integer in [0, %d]", i,
                  KILN_MAX_ENTRIES);
    }
    if (i == 0 && v != 0) return lerr(L, KILN_DATA_LOSS, "GRAPH: node_row_ptr[0] is not 0");
    if (v < prev) {
      return lerr(L, KILN_DATA_LOSS, "GRAPH: node_row_ptr is not monotone (at index %d)", i);
    }
    L->row_ptr[i++] = (int32_t)v;
    prev = v;
  }
  art->num_entries = L->row_ptr[n];
  return NULL;
}

static KilnStatus* parse_nodes(Loader* L, const cJSON* nodes) {
  KilnArtifact* art = L->art;
  int32_t n = art->num_nodes;
  art->nodes = (KilnPlanNode*)calloc(n > 0 ? (size_t)n : 1, sizeof(KilnPlanNode));
  if (art->nodes == NULL) return oom(L);
  size_t inputs_cap = 0;
  int32_t num_inputs_total = 0;
  char label[320];

  /* The label is formatted only for an error message. */
#define LABEL node_label(L, i, label, sizeof label)
  int32_t i = 0;
  const cJSON* node = NULL;
  cJSON_ArrayForEach(node, nodes) {
    KilnPlanNode* pn = &art->nodes[i];
    if (!cJSON_IsObject(node))
      return lerr(L, KILN_DATA_LOSS, "GRAPH: node %d is not an object", (int)i);
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(node, "name");
    if (!cJSON_IsString(name) || name->valuestring[0] == '\0') {
      return lerr(L, KILN_DATA_LOSS, "GRAPH: node %d: 'name' is missing or not a non-empty string",
                  (int)i);
    }
    pn->name = artifact_strdup(art, name->valuestring);
    if (pn->name == NULL) return oom(L);
    const cJSON* op = cJSON_GetObjectItemCaseSensitive(node, "op");
    if (!cJSON_IsString(op))
      return lerr(L, KILN_DATA_LOSS, "GRAPH: %s: 'op' is missing or not a string", LABEL);
    const cJSON* inputs = cJSON_GetObjectItemCaseSensitive(node, "inputs");
    if (!cJSON_IsArray(inputs)) {
      return lerr(L, KILN_DATA_LOSS, "GRAPH: %s: 'inputs' is missing or not an array", LABEL);
    }
    int num_in = json_array_size(inputs);
    int32_t outputs = L->row_ptr[i + 1] - L->row_ptr[i];
    pn->first_entry = L->row_ptr[i];
    pn->num_outputs = outputs;
    pn->num_inputs = num_in;
    pn->inputs_offset = num_inputs_total;

    if (strcmp(op->valuestring, "null") == 0) {
      pn->is_op = 0;
      if (num_in != 0) return lerr(L, KILN_DATA_LOSS, "GRAPH: %s: a null node has inputs", LABEL);
      if (outputs != 1) {
        return lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: node_row_ptr gives a null node %d outputs, expected 1", LABEL,
                    (int)outputs);
      }
    } else if (strcmp(op->valuestring, "tvm_op") == 0) {
      pn->is_op = 1;
      const cJSON* attrs = cJSON_GetObjectItemCaseSensitive(node, "attrs");
      if (!cJSON_IsObject(attrs)) {
        return lerr(L, KILN_DATA_LOSS, "GRAPH: %s: 'attrs' is missing or not an object", LABEL);
      }
      const cJSON* func = cJSON_GetObjectItemCaseSensitive(attrs, "func_name");
      if (!cJSON_IsString(func) || func->valuestring[0] == '\0') {
        return lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: attrs.func_name is missing or not a non-empty string", LABEL);
      }
      int64_t a_in = 0, a_out = 0;
      if (!json_int_or_string(cJSON_GetObjectItemCaseSensitive(attrs, "num_inputs"), 0,
                              KILN_MAX_NODE_INPUTS, &a_in)) {
        return lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: attrs.num_inputs is missing or not a non-negative integer", LABEL);
      }
      if (!json_int_or_string(cJSON_GetObjectItemCaseSensitive(attrs, "num_outputs"), 0,
                              KILN_MAX_ENTRIES, &a_out)) {
        return lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: attrs.num_outputs is missing or not a non-negative integer", LABEL);
      }
      if (a_in != num_in) {
        return lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: attrs.num_inputs is %lld but the node has %d inputs", LABEL,
                    (long long)a_in, num_in);
      }
      if (a_out < 1) return lerr(L, KILN_DATA_LOSS, "GRAPH: %s: attrs.num_outputs is 0", LABEL);
      if (a_out != outputs) {
        return lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: attrs.num_outputs is %lld but node_row_ptr gives %d", LABEL,
                    (long long)a_out, (int)outputs);
      }
      if ((int64_t)num_in + outputs > INT32_MAX) {
        return lerr(L, KILN_DATA_LOSS, "GRAPH: %s: too many arguments", LABEL);
      }
      pn->func_name = artifact_strdup(art, func->valuestring);
      if (pn->func_name == NULL) return oom(L);
      const cJSON* op_names = cJSON_GetObjectItemCaseSensitive(attrs, "op_names");
      if (op_names != NULL && !cJSON_IsString(op_names)) {
        return lerr(L, KILN_DATA_LOSS, "GRAPH: %s: attrs.op_names is not a string", LABEL);
      }
      if (op_names != NULL && op_names->valuestring[0] != '\0') {
        pn->op_names = artifact_strdup(art, op_names->valuestring);
        if (pn->op_names == NULL) return oom(L);
      } else {
        pn->op_names = pn->func_name;
      }
    } else {
      return lerr(L, KILN_DATA_LOSS,
                  "GRAPH: %s: unknown op '%.100s' (expected \"null\" or \"tvm_op\")", LABEL,
                  op->valuestring);
    }

    /* The inputs: earlier nodes only. */
    if ((int64_t)num_inputs_total + num_in > KILN_MAX_NODE_INPUTS) {
      return lerr(L, KILN_DATA_LOSS, "GRAPH: too many node inputs in all");
    }
    if ((size_t)num_inputs_total + (size_t)num_in > inputs_cap) {
      size_t cap = inputs_cap == 0 ? 256 : inputs_cap;
      while (cap < (size_t)num_inputs_total + (size_t)num_in) cap *= 2;
      int32_t* grown = (int32_t*)realloc(art->node_inputs, cap * sizeof(int32_t));
      if (grown == NULL) return oom(L);
      art->node_inputs = grown;
      inputs_cap = cap;
    }
    int k = 0;
    const cJSON* in = NULL;
    cJSON_ArrayForEach(in, inputs) {
      const char* why = NULL;
      int32_t e = read_entry(L, in, i, &why);
      if (e < 0) return lerr(L, KILN_DATA_LOSS, "GRAPH: %s: input %d %s", LABEL, k, why);
      art->node_inputs[num_inputs_total + k] = e;
      ++k;
    }
    num_inputs_total += num_in;
    ++i;
  }
#undef LABEL
  art->num_node_inputs = num_inputs_total;
  return NULL;
}

static KilnStatus* parse_arg_nodes_and_heads(Loader* L, const cJSON* graph) {
  KilnArtifact* art = L->art;
  const cJSON* arg_nodes = cJSON_GetObjectItemCaseSensitive(graph, "arg_nodes");
  if (!cJSON_IsArray(arg_nodes)) {
    return lerr(L, KILN_DATA_LOSS, "GRAPH: 'arg_nodes' is missing or not an array");
  }
  uint8_t* seen = (uint8_t*)calloc(art->num_nodes > 0 ? (size_t)art->num_nodes : 1, 1);
  if (seen == NULL) return oom(L);
  int i = 0;
  int32_t listed = 0;
  const cJSON* it = NULL;
  cJSON_ArrayForEach(it, arg_nodes) {
    int64_t v = 0;
    if (!json_int(it, 0, INT32_MAX, &v) || v >= art->num_nodes) {
      free(seen);
      return lerr(L, KILN_DATA_LOSS, "GRAPH: arg_nodes[%d] is not a node index in range", i);
    }
    if (art->nodes[v].is_op) {
      free(seen);
      return lerr(L, KILN_DATA_LOSS, "GRAPH: arg_nodes[%d] = %lld is not a null node", i,
                  (long long)v);
    }
    if (seen[v]) {
      free(seen);
      return lerr(L, KILN_DATA_LOSS, "GRAPH: arg_nodes lists node %lld twice", (long long)v);
    }
    seen[v] = 1;
    ++listed;
    ++i;
  }
  for (int32_t n = 0; n < art->num_nodes; ++n) {
    if (!art->nodes[n].is_op && !seen[n]) {
      char label[320];
      free(seen);
      return lerr(L, KILN_DATA_LOSS, "GRAPH: %s is a null node missing from arg_nodes",
                  node_label(L, n, label, sizeof label));
    }
  }
  free(seen);
  (void)listed;

  const cJSON* heads = cJSON_GetObjectItemCaseSensitive(graph, "heads");
  if (!cJSON_IsArray(heads))
    return lerr(L, KILN_DATA_LOSS, "GRAPH: 'heads' is missing or not an array");
  int nh = json_array_size(heads);
  L->head_entries = (int32_t*)malloc(sizeof(int32_t) * (nh > 0 ? (size_t)nh : 1));
  if (L->head_entries == NULL) return oom(L);
  i = 0;
  cJSON_ArrayForEach(it, heads) {
    const char* why = NULL;
    int32_t e = read_entry(L, it, art->num_nodes, &why);
    if (e < 0) return lerr(L, KILN_DATA_LOSS, "GRAPH: heads[%d] %s", i, why);
    L->head_entries[i++] = e;
  }
  L->num_heads = nh;
  return NULL;
}

static KilnStatus* parse_attrs(Loader* L, const cJSON* graph) {
  KilnArtifact* art = L->art;
  const cJSON* attrs = cJSON_GetObjectItemCaseSensitive(graph, "attrs");
  if (!cJSON_IsObject(attrs))
    return lerr(L, KILN_DATA_LOSS, "GRAPH: 'attrs' is missing or not an object");
  const cJSON *dltype = NULL, *storage_id = NULL, *shape = NULL, *device_index = NULL;
  KilnStatus* st = attrs_list(L, attrs, "dltype", "list_str", 1, &dltype);
  if (st == NULL) st = attrs_list(L, attrs, "storage_id", "list_int", 1, &storage_id);
  if (st == NULL) st = attrs_list(L, attrs, "shape", "list_shape", 1, &shape);
  if (st == NULL) st = attrs_list(L, attrs, "device_index", "list_int", 0, &device_index);
  if (st != NULL) return st;

  int32_t ne = art->num_entries;
  art->entries = (KilnPlanEntry*)calloc(ne > 0 ? (size_t)ne : 1, sizeof(KilnPlanEntry));
  if (art->entries == NULL) return oom(L);
  /* The producing node of each entry. */
  for (int32_t n = 0; n < art->num_nodes; ++n) {
    for (int32_t e = L->row_ptr[n]; e < L->row_ptr[n + 1]; ++e) {
      art->entries[e].node_id = n;
      art->entries[e].last_use = n;
    }
  }

  /* dltype */
  int32_t e = 0;
  const cJSON* it = NULL;
  cJSON_ArrayForEach(it, dltype) {
    if (!cJSON_IsString(it))
      return lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.dltype[%d] is not a string", (int)e);
    DLDataType dt;
    if (kiln_dtype_from_string(it->valuestring, &dt) != 0 || kiln_dtype_bytes(dt) == 0) {
      return lerr(L, KILN_DATA_LOSS,
                  "GRAPH: attrs.dltype[%d] is '%.64s', not a known dtype (float16, bfloat16, "
                  "float32, float64, int8..int64, uint8..uint64, bool)",
                  (int)e, it->valuestring);
    }
    art->entries[e].dtype = dt;
    ++e;
  }

  /* storage_id */
  e = 0;
  int32_t max_sid = -1;
  cJSON_ArrayForEach(it, storage_id) {
    int64_t v = 0;
    if (!json_int(it, 0, INT32_MAX, &v) || v >= (ne > 0 ? ne : 1)) {
      return lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.storage_id[%d] is not an integer in [0, %d)",
                  (int)e, (int)ne);
    }
    art->entries[e].storage_id = (int32_t)v;
    if ((int32_t)v > max_sid) max_sid = (int32_t)v;
    ++e;
  }
  art->num_storages = max_sid + 1;

  /* device_index (optional; kDLCPU everywhere in format 1) */
  if (device_index != NULL) {
    e = 0;
    cJSON_ArrayForEach(it, device_index) {
      int64_t v = 0;
      if (!json_int(it, 0, INT32_MAX, &v) || v != kDLCPU) {
        return lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.device_index[%d] is not 1 (kDLCPU)", (int)e);
      }
      ++e;
    }
  }

  /* shape: first the total number of dims. */
  uint64_t total_dims = 0;
  e = 0;
  cJSON_ArrayForEach(it, shape) {
    if (!cJSON_IsArray(it))
      return lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.shape[%d] is not an array", (int)e);
    int nd = json_array_size(it);
    if (nd > KILN_ARTIFACT_MAX_NDIM) {
      return lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.shape[%d] has %d dims (at most %d)", (int)e, nd,
                  KILN_ARTIFACT_MAX_NDIM);
    }
    art->entries[e].ndim = nd;
    total_dims += (uint64_t)nd;
    ++e;
  }
  art->shapes = (int64_t*)malloc(sizeof(int64_t) * (total_dims > 0 ? (size_t)total_dims : 1));
  if (art->shapes == NULL) return oom(L);
  art->num_shape_values = total_dims;
  uint64_t off = 0;
  e = 0;
  cJSON_ArrayForEach(it, shape) {
    KilnPlanEntry* pe = &art->entries[e];
    pe->shape_offset = off;
    uint64_t count = 1;
    int d = 0;
    const cJSON* dim = NULL;
    cJSON_ArrayForEach(dim, it) {
      int64_t v = 0;
      if (!json_int(dim, 0, KILN_MAX_DIM, &v)) {
        char label[320];
        return lerr(L, KILN_DATA_LOSS,
                    "GRAPH: attrs.shape[%d] (entry of %s): dim %d is not a non-negative integer",
                    (int)e, node_label(L, pe->node_id, label, sizeof label), d);
      }
      art->shapes[off + (uint64_t)d] = v;
      if (!mul_u64(count, (uint64_t)v, &count)) count = UINT64_MAX;
      ++d;
    }
    uint64_t nbytes = 0;
    if (count == UINT64_MAX || !mul_u64(count, kiln_dtype_bytes(pe->dtype), &nbytes) ||
        nbytes > KILN_MAX_TENSOR_BYTES) {
      char label[320];
      return lerr(L, KILN_DATA_LOSS,
                  "GRAPH: attrs.shape[%d] (entry of %s): the tensor is too large", (int)e,
                  node_label(L, pe->node_id, label, sizeof label));
    }
    pe->num_elements = count;
    pe->nbytes = nbytes;
    off += (uint64_t)pe->ndim;
    ++e;
  }
  return NULL;
}

/* Node names are unique; null nodes are parameters (by name in PARAMS, with
 * matching dtype and shape) or inputs (listed in META input_names). */
static KilnStatus* check_names_and_params(Loader* L) {
  KilnArtifact* art = L->art;
  int32_t n = art->num_nodes;
  char label[320];
  KilnStatus* st = NULL;
  NameRef* nodes = (NameRef*)malloc(sizeof(NameRef) * (n > 0 ? (size_t)n : 1));
  uint64_t np = L->view.num_params;
  NameRef* params = NULL;
  uint8_t* used_input = NULL;
  if (nodes == NULL) return oom(L);
  for (int32_t i = 0; i < n; ++i) {
    nodes[i].s = art->nodes[i].name;
    nodes[i].n = strlen(art->nodes[i].name);
    nodes[i].index = i;
  }
  qsort(nodes, (size_t)n, sizeof(NameRef), name_ref_cmp);
  for (int32_t i = 1; i < n; ++i) {
    if (name_ref_cmp(&nodes[i - 1], &nodes[i]) == 0) {
      st = lerr(L, KILN_DATA_LOSS,
                "GRAPH: node name '%.200s' is used by nodes %lld and %lld (names must be unique)",
                nodes[i].s, (long long)nodes[i - 1].index, (long long)nodes[i].index);
      goto done;
    }
  }

  if (np > (uint64_t)SIZE_MAX / sizeof(NameRef)) {
    st = oom(L);
    goto done;
  }
  params = (NameRef*)malloc(sizeof(NameRef) * (np > 0 ? (size_t)np : 1));
  if (params == NULL) {
    st = oom(L);
    goto done;
  }
  for (uint64_t p = 0; p < np; ++p) {
    KilnBlobParam bp;
    kiln_blob_param(&L->view, p, &bp);
    params[p].s = bp.name;
    params[p].n = bp.name_size;
    params[p].index = (int64_t)p;
  }
  qsort(params, (size_t)np, sizeof(NameRef), name_ref_cmp);

  L->null_kind = (int32_t*)calloc(n > 0 ? (size_t)n : 1, sizeof(int32_t));
  L->param_of = (uint64_t*)calloc(n > 0 ? (size_t)n : 1, sizeof(uint64_t));
  if (L->null_kind == NULL || L->param_of == NULL) {
    st = oom(L);
    goto done;
  }
  int32_t num_graph_inputs = 0;
  for (int32_t i = 0; i < n; ++i) {
    const KilnPlanNode* pn = &art->nodes[i];
    if (pn->is_op) continue;
    int64_t p = name_find(params, (size_t)np, pn->name, strlen(pn->name));
    if (p < 0) {
      L->null_kind[i] = 1;
      ++num_graph_inputs;
      continue;
    }
    L->null_kind[i] = 2;
    L->param_of[i] = (uint64_t)p;
    KilnBlobParam bp;
    kiln_blob_param(&L->view, (uint64_t)p, &bp);
    const KilnPlanEntry* pe = &art->entries[pn->first_entry];
    int same = bp.dtype.code == pe->dtype.code && bp.dtype.bits == pe->dtype.bits &&
               bp.dtype.lanes == pe->dtype.lanes && bp.ndim == pe->ndim;
    for (int32_t d = 0; same && d < pe->ndim; ++d) {
      same = bp.shape[d] == art->shapes[pe->shape_offset + (uint64_t)d];
    }
    if (same && bp.data_size != pe->nbytes) same = 0;
    if (!same) {
      char want[512], got[512];
      kiln_format_tensor_type(pe->dtype, pe->ndim, art->shapes + pe->shape_offset, want,
                              sizeof want);
      kiln_format_tensor_type(bp.dtype, bp.ndim, bp.shape, got, sizeof got);
      st = lerr(L, KILN_DATA_LOSS, "GRAPH: parameter %s is %s in the graph but %s in PARAMS",
                node_label(L, i, label, sizeof label), want, got);
      goto done;
    }
  }

  /* META input_names: exactly the input nodes, each once. */
  {
    int count = json_array_size(L->input_names);
    if (count != num_graph_inputs) {
      st = lerr(L, KILN_DATA_LOSS,
                "META: input_names lists %d inputs, but the graph has %d (null nodes that are not "
                "parameters)",
                count, (int)num_graph_inputs);
      goto done;
    }
    art->num_inputs = count;
    art->inputs = (KilnPlanIO*)calloc(count > 0 ? (size_t)count : 1, sizeof(KilnPlanIO));
    used_input = (uint8_t*)calloc(n > 0 ? (size_t)n : 1, 1);
    if (art->inputs == NULL || used_input == NULL) {
      st = oom(L);
      goto done;
    }
    int k = 0;
    const cJSON* it = NULL;
    cJSON_ArrayForEach(it, L->input_names) {
      const char* s = it->valuestring;
      int64_t node = name_find(nodes, (size_t)n, s, strlen(s));
      if (node < 0) {
        st = lerr(L, KILN_DATA_LOSS, "META: input_names[%d] '%.200s' is not a graph node", k, s);
        goto done;
      }
      if (L->null_kind[node] != 1) {
        st = lerr(L, KILN_DATA_LOSS, "META: input_names[%d] '%.200s' is not a graph input (%s)", k,
                  s, L->null_kind[node] == 2 ? "it is a parameter" : "it is a tvm_op node");
        goto done;
      }
      if (used_input[node]) {
        st = lerr(L, KILN_DATA_LOSS, "META: input_names lists '%.200s' twice", s);
        goto done;
      }
      used_input[node] = 1;
      art->inputs[k].name = art->nodes[node].name;
      art->inputs[k].node_id = (int32_t)node;
      art->inputs[k].entry_id = art->nodes[node].first_entry;
      ++k;
    }
  }

  /* META output_names: one per head. */
  {
    int count = json_array_size(L->output_names);
    if (count != L->num_heads) {
      st =
          lerr(L, KILN_DATA_LOSS, "META: output_names lists %d outputs, but the graph has %d heads",
               count, (int)L->num_heads);
      goto done;
    }
    art->num_outputs = count;
    art->outputs = (KilnPlanIO*)calloc(count > 0 ? (size_t)count : 1, sizeof(KilnPlanIO));
    if (art->outputs == NULL) {
      st = oom(L);
      goto done;
    }
    int k = 0;
    const cJSON* it = NULL;
    cJSON_ArrayForEach(it, L->output_names) {
      art->outputs[k].name = artifact_strdup(art, it->valuestring);
      if (art->outputs[k].name == NULL) {
        st = oom(L);
        goto done;
      }
      art->outputs[k].entry_id = L->head_entries[k];
      art->outputs[k].node_id = art->entries[L->head_entries[k]].node_id;
      ++k;
    }
  }

done:
  free(nodes);
  free(params);
  free(used_input);
  return st;
}

/* Storage kinds, exclusivity, liveness, sizes and offsets. */
static KilnStatus* plan_storage(Loader* L) {
  KilnArtifact* art = L->art;
  int32_t ns = art->num_storages;
  int32_t ne = art->num_entries;
  char label[320], label2[320];
  KilnStatus* st = NULL;
  int32_t* first_entry_of = NULL;
  int32_t* max_use = NULL;
  uint8_t* is_head = NULL;

  art->storages = (KilnPlanStorage*)calloc(ns > 0 ? (size_t)ns : 1, sizeof(KilnPlanStorage));
  first_entry_of = (int32_t*)malloc(sizeof(int32_t) * (ns > 0 ? (size_t)ns : 1));
  max_use = (int32_t*)malloc(sizeof(int32_t) * (ns > 0 ? (size_t)ns : 1));
  is_head = (uint8_t*)calloc(ne > 0 ? (size_t)ne : 1, 1);
  if (art->storages == NULL || first_entry_of == NULL || max_use == NULL || is_head == NULL) {
    st = oom(L);
    goto done;
  }
  for (int32_t s = 0; s < ns; ++s) {
    first_entry_of[s] = -1;
    max_use[s] = -1;
  }

  /* Last use of every entry: the last node that reads it; heads live to the end. */
  for (int32_t n = 0; n < art->num_nodes; ++n) {
    const KilnPlanNode* pn = &art->nodes[n];
    for (int32_t k = 0; k < pn->num_inputs; ++k) {
      int32_t e = art->node_inputs[pn->inputs_offset + k];
      if (art->entries[e].last_use < n) art->entries[e].last_use = n;
    }
  }
  for (int32_t h = 0; h < L->num_heads; ++h) {
    is_head[L->head_entries[h]] = 1;
    art->entries[L->head_entries[h]].last_use = art->num_nodes;
  }

  for (int32_t e = 0; e < ne; ++e) {
    KilnPlanEntry* pe = &art->entries[e];
    int32_t sid = pe->storage_id;
    KilnPlanStorage* ps = &art->storages[sid];
    int32_t node = pe->node_id;
    KilnStorageKind kind = KILN_STORAGE_SHARED;
    if (!art->nodes[node].is_op) {
      kind = L->null_kind[node] == 2 ? KILN_STORAGE_PARAM : KILN_STORAGE_INPUT;
    } else if (is_head[e]) {
      kind = KILN_STORAGE_OUTPUT;
    }
    if (ps->num_entries > 0) {
      /* Shared: only intermediates may share, and never while both are live. */
      const KilnPlanEntry* first = &art->entries[first_entry_of[sid]];
      if (kind != KILN_STORAGE_SHARED || ps->kind != KILN_STORAGE_SHARED) {
        const KilnStorageKind excl = kind != KILN_STORAGE_SHARED ? kind : ps->kind;
        const char* what = excl == KILN_STORAGE_PARAM
                               ? "a parameter"
                               : (excl == KILN_STORAGE_INPUT ? "a graph input" : "a graph output");
        st = lerr(L, KILN_DATA_LOSS,
                  "GRAPH: storage %d is shared by an output of %s and an output of %s, but it "
                  "holds %s (which must have storage of its own)",
                  (int)sid, node_label(L, first->node_id, label, sizeof label),
                  node_label(L, node, label2, sizeof label2), what);
        goto done;
      }
      if (max_use[sid] >= node) {
        st = lerr(L, KILN_DATA_LOSS,
                  "GRAPH: storage %d is shared by an output of %s and an output of %s while both "
                  "are live",
                  (int)sid, node_label(L, first->node_id, label, sizeof label),
                  node_label(L, node, label2, sizeof label2));
        goto done;
      }
    } else {
      first_entry_of[sid] = e;
      ps->kind = kind;
    }
    ps->num_entries += 1;
    if (pe->last_use > max_use[sid]) max_use[sid] = pe->last_use;
    uint64_t size = round_up64(pe->nbytes);
    if (size > ps->size) ps->size = size;
    if (kind == KILN_STORAGE_PARAM) {
      KilnBlobParam bp;
      kiln_blob_param(&L->view, L->param_of[node], &bp);
      ps->param_offset = (uint64_t)((const uint8_t*)bp.data - L->blob);
      ps->param_data = bp.data; /* rebased into the dlopen'ed mapping later */
    }
  }

  /* Offsets in the session block: the shared arena, then outputs, then inputs. */
  {
    static const KilnStorageKind order[3] = {KILN_STORAGE_SHARED, KILN_STORAGE_OUTPUT,
                                             KILN_STORAGE_INPUT};
    uint64_t offset = 0;
    for (int k = 0; k < 3; ++k) {
      for (int32_t s = 0; s < ns; ++s) {
        KilnPlanStorage* ps = &art->storages[s];
        if (ps->kind != order[k]) continue;
        ps->offset = offset;
        if (!add_u64(offset, ps->size, &offset)) {
          st = lerr(L, KILN_DATA_LOSS, "GRAPH: the session memory size overflows");
          goto done;
        }
        if (order[k] == KILN_STORAGE_SHARED) art->arena_bytes += ps->size;
      }
    }
    art->session_bytes = offset;
    for (int32_t e = 0; e < ne; ++e) {
      if (art->storages[art->entries[e].storage_id].kind == KILN_STORAGE_SHARED) {
        art->naive_bytes += round_up64(art->entries[e].nbytes);
      }
    }
  }

  /* The tvm_op nodes in order. */
  art->op_nodes =
      (int32_t*)malloc(sizeof(int32_t) * (art->num_nodes > 0 ? (size_t)art->num_nodes : 1));
  if (art->op_nodes == NULL) {
    st = oom(L);
    goto done;
  }
  for (int32_t n = 0; n < art->num_nodes; ++n) {
    if (art->nodes[n].is_op) art->op_nodes[art->num_op_nodes++] = n;
  }

done:
  free(first_entry_of);
  free(max_use);
  free(is_head);
  return st;
}

static KilnStatus* check_graph(Loader* L) {
  const cJSON* graph = L->graph;
  if (!cJSON_IsObject(graph)) return lerr(L, KILN_DATA_LOSS, "GRAPH: not a JSON object");
  const cJSON* nodes = cJSON_GetObjectItemCaseSensitive(graph, "nodes");
  if (!cJSON_IsArray(nodes))
    return lerr(L, KILN_DATA_LOSS, "GRAPH: 'nodes' is missing or not an array");
  KilnStatus* st = parse_row_ptr(L, graph, nodes);
  if (st == NULL) st = parse_nodes(L, nodes);
  if (st == NULL) st = parse_arg_nodes_and_heads(L, graph);
  if (st == NULL) st = parse_attrs(L, graph);
  if (st == NULL) st = check_names_and_params(L);
  if (st == NULL) st = plan_storage(L);
  return st;
}

/* ------------------------------------------------------------------------ */
/* Step 6: dlopen                                                             */
/* ------------------------------------------------------------------------ */

static KilnStatus* open_library(Loader* L) {
  KilnArtifact* art = L->art;
  /* A path without '/' would make dlopen search the library path. */
  char* dl_path = NULL;
  if (strchr(L->path, '/') == NULL) {
    size_t n = strlen(L->path);
    dl_path = (char*)malloc(n + 3);
    if (dl_path == NULL) return oom(L);
    memcpy(dl_path, "./", 2);
    memcpy(dl_path + 2, L->path, n + 1);
  }
  (void)dlerror();
  art->dl_handle = dlopen(dl_path != NULL ? dl_path : L->path, RTLD_NOW | RTLD_LOCAL);
  free(dl_path);
  if (art->dl_handle == NULL) {
    const char* why = dlerror();
    return lerr(L, KILN_INTERNAL, "dlopen failed: %s", why != NULL ? why : "(no message)");
  }

  (void)dlerror();
  const uint8_t* mapped = (const uint8_t*)dlsym(art->dl_handle, KILN_ARTIFACT_SYMBOL);
  if (mapped == NULL) {
    return lerr(L, KILN_DATA_LOSS,
                "the loaded library has no symbol '%s' (the file changed while loading?)",
                KILN_ARTIFACT_SYMBOL);
  }
  if (((uintptr_t)mapped % KILN_ARTIFACT_ALIGNMENT) != 0) {
    return lerr(L, KILN_DATA_LOSS, "symbol '%s' is not %u-byte aligned in memory",
                KILN_ARTIFACT_SYMBOL, KILN_ARTIFACT_ALIGNMENT);
  }
  /* The blob the library maps must be the blob validated: same checksum
   * field first (cheap, and what a replaced file changes), then every byte
   * (the parameters are used in place from this mapping). */
  KilnArtifactHeader header;
  memcpy(&header, mapped, sizeof header);
  if (header.checksum != L->view.header.checksum || header.blob_size != L->view.header.blob_size ||
      memcmp(mapped, L->blob, (size_t)L->view.header.blob_size) != 0) {
    return lerr(L, KILN_DATA_LOSS,
                "the blob of the loaded library differs from the one validated (checksum %016llx, "
                "validated %016llx): the file changed while loading",
                (unsigned long long)header.checksum, (unsigned long long)L->view.header.checksum);
  }
  Dl_info blob_info;
  if (dladdr(mapped, &blob_info) == 0) {
    return lerr(L, KILN_INTERNAL, "dladdr failed for symbol '%s'", KILN_ARTIFACT_SYMBOL);
  }

  /* Kernels: every func_name resolves, to a function of this library. */
  char label[320];
  const char* last_name = NULL;
  KilnKernelFn last_fn = NULL;
  for (int32_t n = 0; n < art->num_nodes; ++n) {
    KilnPlanNode* pn = &art->nodes[n];
    if (!pn->is_op) continue;
    /* Consecutive nodes often call the same kernel (suffixes _1, _2 name the
     * nodes, not the functions): reuse the previous lookup. */
    if (last_name != NULL && strcmp(last_name, pn->func_name) == 0) {
      pn->fn = last_fn;
      continue;
    }
    (void)dlerror();
    void* sym = dlsym(art->dl_handle, pn->func_name);
    if (sym == NULL) {
      return lerr(L, KILN_NOT_FOUND,
                  "GRAPH: %s calls function '%.200s', which the library does not export",
                  node_label(L, n, label, sizeof label), pn->func_name);
    }
    Dl_info info;
    if (dladdr(sym, &info) == 0 || info.dli_fbase != blob_info.dli_fbase) {
      return lerr(L, KILN_NOT_FOUND,
                  "GRAPH: %s calls function '%.200s', which is not defined by the library itself",
                  node_label(L, n, label, sizeof label), pn->func_name);
    }
    /* POSIX allows converting a dlsym result to a function pointer. */
    KilnKernelFn fn;
    memcpy(&fn, &sym, sizeof fn);
    pn->fn = fn;
    last_name = pn->func_name;
    last_fn = fn;
  }

  /* Parameters in place. */
  for (int32_t s = 0; s < art->num_storages; ++s) {
    KilnPlanStorage* ps = &art->storages[s];
    if (ps->kind == KILN_STORAGE_PARAM) ps->param_data = mapped + ps->param_offset;
  }
  art->checksum = header.checksum;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* kiln_artifact_load                                                         */
/* ------------------------------------------------------------------------ */

KilnStatus* kiln_artifact_load(const char* path, KilnArtifact** out) {
  if (out != NULL) *out = NULL;
  if (path == NULL || out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_artifact_load: %s is NULL",
                              path == NULL ? "path" : "out");
  }
  Loader L;
  memset(&L, 0, sizeof L);
  L.path = path;
  KilnStatus* st = NULL;
  uint8_t* image = MAP_FAILED;
  uint64_t image_size = 0;

  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return kiln_status_create((err == ENOENT || err == ENOTDIR) ? KILN_NOT_FOUND : KILN_INTERNAL,
                              "%s: cannot open: %s", path, strerror(err));
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int err = errno;
    close(fd);
    return kiln_status_create(KILN_INTERNAL, "%s: cannot stat: %s", path, strerror(err));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return kiln_status_create(KILN_DATA_LOSS, "%s: not a kiln artifact (not a regular file)", path);
  }
  if (sb.st_size <= 0) {
    close(fd);
    return kiln_status_create(KILN_DATA_LOSS, "%s: not a kiln artifact (empty file)", path);
  }
  image_size = (uint64_t)sb.st_size;
  if (image_size > (uint64_t)SIZE_MAX) {
    close(fd);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: file too large to map", path);
  }
  image = (uint8_t*)mmap(NULL, (size_t)image_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (image == MAP_FAILED) {
    int err = errno;
    return kiln_status_create(KILN_INTERNAL, "%s: cannot map: %s", path, strerror(err));
  }

  L.art = (KilnArtifact*)calloc(1, sizeof(KilnArtifact));
  if (L.art == NULL) {
    st = oom(&L);
    goto fail;
  }
  L.art->path = (char*)malloc(strlen(path) + 1);
  if (L.art->path == NULL) {
    st = oom(&L);
    goto fail;
  }
  memcpy(L.art->path, path, strlen(path) + 1);

  /* Steps 1-4. */
  uint64_t blob_offset = 0;
  st = kiln_artifact_validate_image(image, image_size, path, &blob_offset, &L.view);
  if (st != NULL) goto fail;
  L.blob = image + blob_offset;

  /* Step 5. */
  st = parse_section(&L, "META", L.view.meta, L.view.meta_size, &L.art->meta_text, &L.meta);
  if (st == NULL)
    st = parse_section(&L, "GRAPH", L.view.graph, L.view.graph_size, &L.art->graph_text, &L.graph);
  if (st == NULL) st = check_meta(&L);
  if (st == NULL) st = check_graph(&L);
  if (st != NULL) goto fail;
  cJSON_Delete(L.meta);
  L.meta = NULL;
  cJSON_Delete(L.graph);
  L.graph = NULL;

  /* Step 6. */
  st = open_library(&L);
  if (st != NULL) goto fail;

  munmap(image, (size_t)image_size);
  free(L.row_ptr);
  free(L.null_kind);
  free(L.param_of);
  free(L.head_entries);
  *out = L.art;
  return NULL;

fail:
  cJSON_Delete(L.meta);
  cJSON_Delete(L.graph);
  free(L.row_ptr);
  free(L.null_kind);
  free(L.param_of);
  free(L.head_entries);
  artifact_free(L.art);
  if (image != MAP_FAILED) munmap(image, (size_t)image_size);
  return st;
}

void kiln_artifact_release(KilnArtifact* artifact) { artifact_free(artifact); }

/* ------------------------------------------------------------------------ */
/* Accessors                                                                  */
/* ------------------------------------------------------------------------ */

const char* kiln_artifact_target(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->target : "";
}

const char* kiln_artifact_producer(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->producer : "";
}

const char* kiln_artifact_graph_json(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->graph_text : "";
}

int32_t kiln_artifact_num_inputs(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->num_inputs : 0;
}

int32_t kiln_artifact_num_outputs(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->num_outputs : 0;
}

int32_t kiln_artifact_num_nodes(const KilnArtifact* artifact) {
  return artifact != NULL ? artifact->num_nodes : 0;
}

static KilnStatus* io_info(const KilnArtifact* artifact, const KilnPlanIO* ios, int32_t count,
                           const char* what, int32_t index, const char** name, DLTensor* info) {
  if (name != NULL) *name = NULL;
  if (info != NULL) memset(info, 0, sizeof *info);
  if (artifact == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_artifact_%s_info: artifact is NULL",
                              what);
  }
  if (index < 0 || index >= count) {
    return kiln_status_create(KILN_OUT_OF_RANGE, "%s: %s index %d out of range (the model has %d)",
                              artifact->path, what, (int)index, (int)count);
  }
  const KilnPlanIO* io = &ios[index];
  const KilnPlanEntry* pe = &artifact->entries[io->entry_id];
  if (name != NULL) *name = io->name;
  if (info != NULL) {
    info->data = NULL;
    info->device.device_type = kDLCPU;
    info->device.device_id = 0;
    info->ndim = pe->ndim;
    info->dtype = pe->dtype;
    info->shape = artifact->shapes + pe->shape_offset;
    info->strides = NULL;
    info->byte_offset = 0;
  }
  return NULL;
}

KilnStatus* kiln_artifact_input_info(const KilnArtifact* artifact, int32_t index, const char** name,
                                     DLTensor* info) {
  return io_info(artifact, artifact != NULL ? artifact->inputs : NULL,
                 artifact != NULL ? artifact->num_inputs : 0, "input", index, name, info);
}

KilnStatus* kiln_artifact_output_info(const KilnArtifact* artifact, int32_t index,
                                      const char** name, DLTensor* info) {
  return io_info(artifact, artifact != NULL ? artifact->outputs : NULL,
                 artifact != NULL ? artifact->num_outputs : 0, "output", index, name, info);
}

KilnStatus* kiln_artifact_input_index(const KilnArtifact* artifact, const char* name,
                                      int32_t* index) {
  if (index != NULL) *index = -1;
  if (artifact == NULL || name == NULL || index == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_artifact_input_index: %s is NULL",
                              artifact == NULL ? "artifact" : (name == NULL ? "name" : "index"));
  }
  for (int32_t i = 0; i < artifact->num_inputs; ++i) {
    if (strcmp(artifact->inputs[i].name, name) == 0) {
      *index = i;
      return NULL;
    }
  }
  char list[1024];
  size_t used = 0;
  list[0] = '\0';
  for (int32_t i = 0; i < artifact->num_inputs && used + 1 < sizeof list; ++i) {
    int n = snprintf(list + used, sizeof list - used, "%s'%s'", i == 0 ? "" : ", ",
                     artifact->inputs[i].name);
    if (n < 0) break;
    used += (size_t)n;
    if (used >= sizeof list) used = sizeof list - 1;
  }
  if (artifact->num_inputs == 0) {
    return kiln_status_create(KILN_NOT_FOUND, "%s: no input named '%s' (the model has no inputs)",
                              artifact->path, name);
  }
  return kiln_status_create(KILN_NOT_FOUND, "%s: no input named '%s'; the inputs are: %s",
                            artifact->path, name, list);
}

void kiln_artifact_memory_stats(const KilnArtifact* artifact, uint64_t* arena_bytes,
                                uint64_t* naive_bytes) {
  if (arena_bytes != NULL) *arena_bytes = artifact != NULL ? artifact->arena_bytes : 0;
  if (naive_bytes != NULL) *naive_bytes = artifact != NULL ? artifact->naive_bytes : 0;
}
