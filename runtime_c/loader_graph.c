/* File: runtime_c/loader_graph.c
 *
 * Step 5 of kiln_artifact_load (docs/artifact.md, "What the loader checks"):
 * META and GRAPH are copied into NUL-terminated buffers, parsed with cJSON and
 * checked field by field, and the immutable executor plan (entries, storages,
 * arena offsets, inputs, outputs) is built from them. loader.c runs steps
 * 1-4 before and step 6 (dlopen) after. Every number read is range-checked;
 * every size is computed with overflow checks.
 */
#define _GNU_SOURCE 1

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/artifact_format.h"
#include "kiln/kernel_abi.h"
#include "runtime_c/cpu_features.h"
#include "runtime_c/loader_internal.h"

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
KilnStatus* kiln_loader_parse_section(const Loader* L, const char* what, const char* bytes,
                                 uint64_t size, char** text_out, cJSON** json_out) {
  *text_out = NULL;
  *json_out = NULL;
  if (size >= SIZE_MAX) return kiln_loader_oom(L);
  if (size == 0) return kiln_lerr(L, KILN_DATA_LOSS, "%s section is empty (expected JSON)", what);
  if (memchr(bytes, '\0', (size_t)size) != NULL) {
    return kiln_lerr(L, KILN_DATA_LOSS, "%s section contains a NUL byte (at offset %zu)", what,
                (size_t)((const char*)memchr(bytes, '\0', (size_t)size) - bytes));
  }
  char* text = (char*)malloc((size_t)size + 1);
  if (text == NULL) return kiln_loader_oom(L);
  memcpy(text, bytes, (size_t)size);
  text[size] = '\0';
  const char* end = NULL;
  pthread_mutex_lock(&g_cjson_parse_mu);
  cJSON* json = cJSON_ParseWithLengthOpts(text, (size_t)size, &end, 0);
  pthread_mutex_unlock(&g_cjson_parse_mu);
  if (json == NULL) {
    size_t at = (end != NULL && end >= text && end <= text + size) ? (size_t)(end - text) : 0;
    free(text);
    return kiln_lerr(L, KILN_DATA_LOSS, "%s section is not valid JSON (error near byte %zu)", what, at);
  }
  /* Nothing but white space may follow the value. */
  if (end != NULL && end >= text && end <= text + size) {
    for (const char* p = end; p < text + size; ++p) {
      if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
        size_t at = (size_t)(p - text);
        cJSON_Delete(json);
        free(text);
        return kiln_lerr(L, KILN_DATA_LOSS,
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

/* META's optional `target_triple`, `target_cpu` and `cpu_features` (written
 * by codegen_llvm/export.cc): every feature the code was compiled with, by
 * LLVM's names. On x86-64, for an x86-64 artifact, a feature this runtime can
 * probe (cpu_features.c) and the CPU lacks refuses the artifact before any of
 * its code is mapped: its first kernel would otherwise die of SIGILL. Names
 * the runtime cannot probe (tuning flags, features it does not know) are
 * recorded only. Other machines: recorded, not checked (no portable probe). */
static KilnStatus* check_cpu_features(const Loader* L, const cJSON* meta, const char* target) {
  const cJSON* triple = cJSON_GetObjectItemCaseSensitive(meta, "target_triple");
  const cJSON* cpu = cJSON_GetObjectItemCaseSensitive(meta, "target_cpu");
  const cJSON* features = cJSON_GetObjectItemCaseSensitive(meta, "cpu_features");
  if (triple != NULL && !cJSON_IsString(triple)) {
    return kiln_lerr(L, KILN_DATA_LOSS, "META: 'target_triple' is not a string");
  }
  if (cpu != NULL && !cJSON_IsString(cpu)) {
    return kiln_lerr(L, KILN_DATA_LOSS, "META: 'target_cpu' is not a string");
  }
  if (features == NULL) return NULL; /* an artifact from before the field: not checked */
  if (!cJSON_IsArray(features)) {
    return kiln_lerr(L, KILN_DATA_LOSS, "META: 'cpu_features' is not an array");
  }
  int i = 0;
  const cJSON* it = NULL;
  cJSON_ArrayForEach(it, features) {
    if (!cJSON_IsString(it) || it->valuestring[0] == '\0') {
      return kiln_lerr(L, KILN_DATA_LOSS, "META: cpu_features[%d] is not a non-empty string", i);
    }
    ++i;
  }
  if (triple == NULL || strncmp(triple->valuestring, "x86_64", 6) != 0 ||
      !kiln_cpu_features_checked()) {
    return NULL;
  }
  cJSON_ArrayForEach(it, features) {
    if (kiln_cpu_feature_supported(it->valuestring) != 0) continue;
    return kiln_lerr(L, KILN_FAILED_PRECONDITION,
                     "artifact needs %.64s, which this CPU lacks (it was compiled for %.64s, "
                     "target \"%.300s\"): compile the model for this machine (for example "
                     "with the target \"llvm -mcpu=native\") or run it on a CPU with %.64s",
                     it->valuestring, cpu != NULL ? cpu->valuestring : "another CPU", target,
                     it->valuestring);
  }
  return NULL;
}

KilnStatus* kiln_loader_check_meta(Loader* L) {
  KilnArtifact* art = L->art;
  const cJSON* meta = L->meta;
  if (!cJSON_IsObject(meta)) return kiln_lerr(L, KILN_DATA_LOSS, "META: not a JSON object");
  const cJSON* producer = cJSON_GetObjectItemCaseSensitive(meta, "producer");
  if (!cJSON_IsString(producer)) {
    return kiln_lerr(L, KILN_DATA_LOSS, "META: 'producer' is missing or not a string");
  }
  const cJSON* target = cJSON_GetObjectItemCaseSensitive(meta, "target");
  if (!cJSON_IsString(target)) {
    return kiln_lerr(L, KILN_DATA_LOSS, "META: 'target' is missing or not a string");
  }
  const cJSON* abi = cJSON_GetObjectItemCaseSensitive(meta, "kernel_abi_version");
  int64_t abi_version = 0;
  if (!json_int(abi, 0, INT32_MAX, &abi_version)) {
    return kiln_lerr(L, KILN_DATA_LOSS,
                "META: 'kernel_abi_version' is missing or not a non-negative integer");
  }
  if (abi_version != KILN_KERNEL_ABI_VERSION) {
    return kiln_lerr(L, KILN_UNIMPLEMENTED,
                "META: kernel_abi_version is %lld, this runtime implements kernel ABI version %d",
                (long long)abi_version, KILN_KERNEL_ABI_VERSION);
  }
  KilnStatus* st = check_cpu_features(L, meta, target->valuestring);
  if (st != NULL) return st;
  const cJSON* model = cJSON_GetObjectItemCaseSensitive(meta, "model");
  if (model != NULL && !cJSON_IsString(model)) {
    return kiln_lerr(L, KILN_DATA_LOSS, "META: 'model' is not a string");
  }
  cJSON* input_names = cJSON_GetObjectItemCaseSensitive(meta, "input_names");
  cJSON* output_names = cJSON_GetObjectItemCaseSensitive(meta, "output_names");
  const struct {
    const char* key;
    cJSON* a;
  } lists[2] = {{"input_names", input_names}, {"output_names", output_names}};
  for (int k = 0; k < 2; ++k) {
    if (!cJSON_IsArray(lists[k].a)) {
      return kiln_lerr(L, KILN_DATA_LOSS, "META: '%s' is missing or not an array", lists[k].key);
    }
    int i = 0;
    const cJSON* it = NULL;
    cJSON_ArrayForEach(it, lists[k].a) {
      if (!cJSON_IsString(it) || it->valuestring[0] == '\0') {
        return kiln_lerr(L, KILN_DATA_LOSS, "META: %s[%d] is not a non-empty string", lists[k].key, i);
      }
      ++i;
    }
  }
  L->input_names = input_names;
  L->output_names = output_names;

  art->producer = kiln_artifact_strdup(art, producer->valuestring);
  art->target = kiln_artifact_strdup(art, target->valuestring);
  if (model != NULL) {
    art->model = kiln_artifact_strdup(art, model->valuestring);
  } else {
    const char* base = strrchr(L->path, '/');
    art->model = kiln_artifact_strdup(art, base != NULL ? base + 1 : L->path);
  }
  if (art->producer == NULL || art->target == NULL || art->model == NULL) return kiln_loader_oom(L);
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
    return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.%s is missing", key);
  }
  if (!cJSON_IsArray(v) || json_array_size(v) != 2 || !cJSON_IsString(v->child) ||
      strcmp(v->child->valuestring, tag) != 0 || !cJSON_IsArray(v->child->next)) {
    return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.%s is not [\"%s\", [...]]", key, tag);
  }
  const cJSON* list = v->child->next;
  int n = json_array_size(list);
  if (n != L->art->num_entries) {
    return kiln_lerr(L, KILN_DATA_LOSS,
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
    return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: 'node_row_ptr' is missing or not an array");
  int n = json_array_size(nodes);
  if (n > KILN_MAX_NODES) return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: too many nodes (%d)", n);
  art->num_nodes = n;
  if (json_array_size(rp) != n + 1) {
    return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: node_row_ptr has %d elements, expected %d (nodes + 1)",
                json_array_size(rp), n + 1);
  }
  L->row_ptr = (int32_t*)malloc(sizeof(int32_t) * ((size_t)n + 1));
  if (L->row_ptr == NULL) return kiln_loader_oom(L);
  int i = 0;
  const cJSON* it = NULL;
  int64_t prev = 0;
  cJSON_ArrayForEach(it, rp) {
    int64_t v = 0;
    if (!json_int(it, 0, KILN_MAX_ENTRIES, &v)) {
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: node_row_ptr[%d] is not an integer in [0, %d]", i,
                  KILN_MAX_ENTRIES);
    }
    if (i == 0 && v != 0) return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: node_row_ptr[0] is not 0");
    if (v < prev) {
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: node_row_ptr is not monotone (at index %d)", i);
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
  if (art->nodes == NULL) return kiln_loader_oom(L);
  size_t inputs_cap = 0;
  int32_t num_inputs_total = 0;
  char label[320];

  /* The label is formatted only for an error message. */
#define LABEL kiln_node_label(L, i, label, sizeof label)
  int32_t i = 0;
  const cJSON* node = NULL;
  cJSON_ArrayForEach(node, nodes) {
    KilnPlanNode* pn = &art->nodes[i];
    if (!cJSON_IsObject(node))
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: node %d is not an object", (int)i);
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(node, "name");
    if (!cJSON_IsString(name) || name->valuestring[0] == '\0') {
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: node %d: 'name' is missing or not a non-empty string",
                  (int)i);
    }
    pn->name = kiln_artifact_strdup(art, name->valuestring);
    if (pn->name == NULL) return kiln_loader_oom(L);
    const cJSON* op = cJSON_GetObjectItemCaseSensitive(node, "op");
    if (!cJSON_IsString(op))
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: %s: 'op' is missing or not a string", LABEL);
    const cJSON* inputs = cJSON_GetObjectItemCaseSensitive(node, "inputs");
    if (!cJSON_IsArray(inputs)) {
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: %s: 'inputs' is missing or not an array", LABEL);
    }
    int num_in = json_array_size(inputs);
    int32_t outputs = L->row_ptr[i + 1] - L->row_ptr[i];
    pn->first_entry = L->row_ptr[i];
    pn->num_outputs = outputs;
    pn->num_inputs = num_in;
    pn->inputs_offset = num_inputs_total;

    if (strcmp(op->valuestring, "null") == 0) {
      pn->is_op = 0;
      if (num_in != 0) return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: %s: a null node has inputs", LABEL);
      if (outputs != 1) {
        return kiln_lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: node_row_ptr gives a null node %d outputs, expected 1", LABEL,
                    (int)outputs);
      }
    } else if (strcmp(op->valuestring, "tvm_op") == 0) {
      pn->is_op = 1;
      const cJSON* attrs = cJSON_GetObjectItemCaseSensitive(node, "attrs");
      if (!cJSON_IsObject(attrs)) {
        return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: %s: 'attrs' is missing or not an object", LABEL);
      }
      const cJSON* func = cJSON_GetObjectItemCaseSensitive(attrs, "func_name");
      if (!cJSON_IsString(func) || func->valuestring[0] == '\0') {
        return kiln_lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: attrs.func_name is missing or not a non-empty string", LABEL);
      }
      int64_t a_in = 0, a_out = 0;
      if (!json_int_or_string(cJSON_GetObjectItemCaseSensitive(attrs, "num_inputs"), 0,
                              KILN_MAX_NODE_INPUTS, &a_in)) {
        return kiln_lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: attrs.num_inputs is missing or not a non-negative integer", LABEL);
      }
      if (!json_int_or_string(cJSON_GetObjectItemCaseSensitive(attrs, "num_outputs"), 0,
                              KILN_MAX_ENTRIES, &a_out)) {
        return kiln_lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: attrs.num_outputs is missing or not a non-negative integer", LABEL);
      }
      if (a_in != num_in) {
        return kiln_lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: attrs.num_inputs is %lld but the node has %d inputs", LABEL,
                    (long long)a_in, num_in);
      }
      if (a_out < 1) return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: %s: attrs.num_outputs is 0", LABEL);
      if (a_out != outputs) {
        return kiln_lerr(L, KILN_DATA_LOSS,
                    "GRAPH: %s: attrs.num_outputs is %lld but node_row_ptr gives %d", LABEL,
                    (long long)a_out, (int)outputs);
      }
      if ((int64_t)num_in + outputs > INT32_MAX) {
        return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: %s: too many arguments", LABEL);
      }
      pn->func_name = kiln_artifact_strdup(art, func->valuestring);
      if (pn->func_name == NULL) return kiln_loader_oom(L);
      const cJSON* op_names = cJSON_GetObjectItemCaseSensitive(attrs, "op_names");
      if (op_names != NULL && !cJSON_IsString(op_names)) {
        return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: %s: attrs.op_names is not a string", LABEL);
      }
      if (op_names != NULL && op_names->valuestring[0] != '\0') {
        pn->op_names = kiln_artifact_strdup(art, op_names->valuestring);
        if (pn->op_names == NULL) return kiln_loader_oom(L);
      } else {
        pn->op_names = pn->func_name;
      }
    } else {
      return kiln_lerr(L, KILN_DATA_LOSS,
                  "GRAPH: %s: unknown op '%.100s' (expected \"null\" or \"tvm_op\")", LABEL,
                  op->valuestring);
    }

    /* The inputs: earlier nodes only. */
    if ((int64_t)num_inputs_total + num_in > KILN_MAX_NODE_INPUTS) {
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: too many node inputs in all");
    }
    if ((size_t)num_inputs_total + (size_t)num_in > inputs_cap) {
      size_t cap = inputs_cap == 0 ? 256 : inputs_cap;
      while (cap < (size_t)num_inputs_total + (size_t)num_in) cap *= 2;
      int32_t* grown = (int32_t*)realloc(art->node_inputs, cap * sizeof(int32_t));
      if (grown == NULL) return kiln_loader_oom(L);
      art->node_inputs = grown;
      inputs_cap = cap;
    }
    int k = 0;
    const cJSON* in = NULL;
    cJSON_ArrayForEach(in, inputs) {
      const char* why = NULL;
      int32_t e = read_entry(L, in, i, &why);
      if (e < 0) return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: %s: input %d %s", LABEL, k, why);
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
    return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: 'arg_nodes' is missing or not an array");
  }
  uint8_t* seen = (uint8_t*)calloc(art->num_nodes > 0 ? (size_t)art->num_nodes : 1, 1);
  if (seen == NULL) return kiln_loader_oom(L);
  int i = 0;
  int32_t listed = 0;
  const cJSON* it = NULL;
  cJSON_ArrayForEach(it, arg_nodes) {
    int64_t v = 0;
    if (!json_int(it, 0, INT32_MAX, &v) || v >= art->num_nodes) {
      free(seen);
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: arg_nodes[%d] is not a node index in range", i);
    }
    if (art->nodes[v].is_op) {
      free(seen);
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: arg_nodes[%d] = %lld is not a null node", i,
                  (long long)v);
    }
    if (seen[v]) {
      free(seen);
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: arg_nodes lists node %lld twice", (long long)v);
    }
    seen[v] = 1;
    ++listed;
    ++i;
  }
  for (int32_t n = 0; n < art->num_nodes; ++n) {
    if (!art->nodes[n].is_op && !seen[n]) {
      char label[320];
      free(seen);
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: %s is a null node missing from arg_nodes",
                  kiln_node_label(L, n, label, sizeof label));
    }
  }
  free(seen);
  (void)listed;

  const cJSON* heads = cJSON_GetObjectItemCaseSensitive(graph, "heads");
  if (!cJSON_IsArray(heads))
    return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: 'heads' is missing or not an array");
  int nh = json_array_size(heads);
  L->head_entries = (int32_t*)malloc(sizeof(int32_t) * (nh > 0 ? (size_t)nh : 1));
  if (L->head_entries == NULL) return kiln_loader_oom(L);
  i = 0;
  cJSON_ArrayForEach(it, heads) {
    const char* why = NULL;
    int32_t e = read_entry(L, it, art->num_nodes, &why);
    if (e < 0) return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: heads[%d] %s", i, why);
    L->head_entries[i++] = e;
  }
  L->num_heads = nh;
  return NULL;
}

static KilnStatus* parse_attrs(Loader* L, const cJSON* graph) {
  KilnArtifact* art = L->art;
  const cJSON* attrs = cJSON_GetObjectItemCaseSensitive(graph, "attrs");
  if (!cJSON_IsObject(attrs))
    return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: 'attrs' is missing or not an object");
  const cJSON *dltype = NULL, *storage_id = NULL, *shape = NULL, *device_index = NULL;
  KilnStatus* st = attrs_list(L, attrs, "dltype", "list_str", 1, &dltype);
  if (st == NULL) st = attrs_list(L, attrs, "storage_id", "list_int", 1, &storage_id);
  if (st == NULL) st = attrs_list(L, attrs, "shape", "list_shape", 1, &shape);
  if (st == NULL) st = attrs_list(L, attrs, "device_index", "list_int", 0, &device_index);
  if (st != NULL) return st;

  int32_t ne = art->num_entries;
  art->entries = (KilnPlanEntry*)calloc(ne > 0 ? (size_t)ne : 1, sizeof(KilnPlanEntry));
  if (art->entries == NULL) return kiln_loader_oom(L);
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
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.dltype[%d] is not a string", (int)e);
    DLDataType dt;
    if (kiln_dtype_from_string(it->valuestring, &dt) != 0 || kiln_dtype_bytes(dt) == 0) {
      return kiln_lerr(L, KILN_DATA_LOSS,
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
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.storage_id[%d] is not an integer in [0, %d)",
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
        return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.device_index[%d] is not 1 (kDLCPU)", (int)e);
      }
      ++e;
    }
  }

  /* shape: first the total number of dims. */
  uint64_t total_dims = 0;
  e = 0;
  cJSON_ArrayForEach(it, shape) {
    if (!cJSON_IsArray(it))
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.shape[%d] is not an array", (int)e);
    int nd = json_array_size(it);
    if (nd > KILN_ARTIFACT_MAX_NDIM) {
      return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: attrs.shape[%d] has %d dims (at most %d)", (int)e, nd,
                  KILN_ARTIFACT_MAX_NDIM);
    }
    art->entries[e].ndim = nd;
    total_dims += (uint64_t)nd;
    ++e;
  }
  art->shapes = (int64_t*)malloc(sizeof(int64_t) * (total_dims > 0 ? (size_t)total_dims : 1));
  if (art->shapes == NULL) return kiln_loader_oom(L);
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
        return kiln_lerr(L, KILN_DATA_LOSS,
                    "GRAPH: attrs.shape[%d] (entry of %s): dim %d is not a non-negative integer",
                    (int)e, kiln_node_label(L, pe->node_id, label, sizeof label), d);
      }
      art->shapes[off + (uint64_t)d] = v;
      if (!kiln_mul_u64(count, (uint64_t)v, &count)) count = UINT64_MAX;
      ++d;
    }
    uint64_t nbytes = 0;
    if (count == UINT64_MAX || !kiln_mul_u64(count, kiln_dtype_bytes(pe->dtype), &nbytes) ||
        nbytes > KILN_MAX_TENSOR_BYTES) {
      char label[320];
      return kiln_lerr(L, KILN_DATA_LOSS,
                  "GRAPH: attrs.shape[%d] (entry of %s): the tensor is too large", (int)e,
                  kiln_node_label(L, pe->node_id, label, sizeof label));
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
  if (nodes == NULL) return kiln_loader_oom(L);
  for (int32_t i = 0; i < n; ++i) {
    nodes[i].s = art->nodes[i].name;
    nodes[i].n = strlen(art->nodes[i].name);
    nodes[i].index = i;
  }
  qsort(nodes, (size_t)n, sizeof(NameRef), name_ref_cmp);
  for (int32_t i = 1; i < n; ++i) {
    if (name_ref_cmp(&nodes[i - 1], &nodes[i]) == 0) {
      st = kiln_lerr(L, KILN_DATA_LOSS,
                "GRAPH: node name '%.200s' is used by nodes %lld and %lld (names must be unique)",
                nodes[i].s, (long long)nodes[i - 1].index, (long long)nodes[i].index);
      goto done;
    }
  }

  if (np > (uint64_t)SIZE_MAX / sizeof(NameRef)) {
    st = kiln_loader_oom(L);
    goto done;
  }
  params = (NameRef*)malloc(sizeof(NameRef) * (np > 0 ? (size_t)np : 1));
  if (params == NULL) {
    st = kiln_loader_oom(L);
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
    st = kiln_loader_oom(L);
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
      st = kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: parameter %s is %s in the graph but %s in PARAMS",
                kiln_node_label(L, i, label, sizeof label), want, got);
      goto done;
    }
  }

  /* META input_names: exactly the input nodes, each once. */
  {
    int count = json_array_size(L->input_names);
    if (count != num_graph_inputs) {
      st = kiln_lerr(L, KILN_DATA_LOSS,
                "META: input_names lists %d inputs, but the graph has %d (null nodes that are not "
                "parameters)",
                count, (int)num_graph_inputs);
      goto done;
    }
    art->num_inputs = count;
    art->inputs = (KilnPlanIO*)calloc(count > 0 ? (size_t)count : 1, sizeof(KilnPlanIO));
    used_input = (uint8_t*)calloc(n > 0 ? (size_t)n : 1, 1);
    if (art->inputs == NULL || used_input == NULL) {
      st = kiln_loader_oom(L);
      goto done;
    }
    int k = 0;
    const cJSON* it = NULL;
    cJSON_ArrayForEach(it, L->input_names) {
      const char* s = it->valuestring;
      int64_t node = name_find(nodes, (size_t)n, s, strlen(s));
      if (node < 0) {
        st = kiln_lerr(L, KILN_DATA_LOSS, "META: input_names[%d] '%.200s' is not a graph node", k, s);
        goto done;
      }
      if (L->null_kind[node] != 1) {
        st = kiln_lerr(L, KILN_DATA_LOSS, "META: input_names[%d] '%.200s' is not a graph input (%s)", k,
                  s, L->null_kind[node] == 2 ? "it is a parameter" : "it is a tvm_op node");
        goto done;
      }
      if (used_input[node]) {
        st = kiln_lerr(L, KILN_DATA_LOSS, "META: input_names lists '%.200s' twice", s);
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
          kiln_lerr(L, KILN_DATA_LOSS, "META: output_names lists %d outputs, but the graph has %d heads",
               count, (int)L->num_heads);
      goto done;
    }
    art->num_outputs = count;
    art->outputs = (KilnPlanIO*)calloc(count > 0 ? (size_t)count : 1, sizeof(KilnPlanIO));
    if (art->outputs == NULL) {
      st = kiln_loader_oom(L);
      goto done;
    }
    int k = 0;
    const cJSON* it = NULL;
    cJSON_ArrayForEach(it, L->output_names) {
      art->outputs[k].name = kiln_artifact_strdup(art, it->valuestring);
      if (art->outputs[k].name == NULL) {
        st = kiln_loader_oom(L);
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
    st = kiln_loader_oom(L);
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
        st = kiln_lerr(L, KILN_DATA_LOSS,
                  "GRAPH: storage %d is shared by an output of %s and an output of %s, but it "
                  "holds %s (which must have storage of its own)",
                  (int)sid, kiln_node_label(L, first->node_id, label, sizeof label),
                  kiln_node_label(L, node, label2, sizeof label2), what);
        goto done;
      }
      if (max_use[sid] >= node) {
        st = kiln_lerr(L, KILN_DATA_LOSS,
                  "GRAPH: storage %d is shared by an output of %s and an output of %s while both "
                  "are live",
                  (int)sid, kiln_node_label(L, first->node_id, label, sizeof label),
                  kiln_node_label(L, node, label2, sizeof label2));
        goto done;
      }
    } else {
      first_entry_of[sid] = e;
      ps->kind = kind;
    }
    ps->num_entries += 1;
    if (pe->last_use > max_use[sid]) max_use[sid] = pe->last_use;
    uint64_t size = kiln_round_up64(pe->nbytes);
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
        if (!kiln_add_u64(offset, ps->size, &offset)) {
          st = kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: the session memory size overflows");
          goto done;
        }
        if (order[k] == KILN_STORAGE_SHARED) art->arena_bytes += ps->size;
      }
    }
    art->session_bytes = offset;
    for (int32_t e = 0; e < ne; ++e) {
      if (art->storages[art->entries[e].storage_id].kind == KILN_STORAGE_SHARED) {
        art->naive_bytes += kiln_round_up64(art->entries[e].nbytes);
      }
    }
  }

  /* The tvm_op nodes in order. */
  art->op_nodes =
      (int32_t*)malloc(sizeof(int32_t) * (art->num_nodes > 0 ? (size_t)art->num_nodes : 1));
  if (art->op_nodes == NULL) {
    st = kiln_loader_oom(L);
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

KilnStatus* kiln_loader_check_graph(Loader* L) {
  const cJSON* graph = L->graph;
  if (!cJSON_IsObject(graph)) return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: not a JSON object");
  const cJSON* nodes = cJSON_GetObjectItemCaseSensitive(graph, "nodes");
  if (!cJSON_IsArray(nodes))
    return kiln_lerr(L, KILN_DATA_LOSS, "GRAPH: 'nodes' is missing or not an array");
  KilnStatus* st = parse_row_ptr(L, graph, nodes);
  if (st == NULL) st = parse_nodes(L, nodes);
  if (st == NULL) st = parse_arg_nodes_and_heads(L, graph);
  if (st == NULL) st = parse_attrs(L, graph);
  if (st == NULL) st = check_names_and_params(L);
  if (st == NULL) st = plan_storage(L);
  return st;
}

