/* File: runtime_c/loader_internal.h  (internal to runtime_c)
 *
 * What loader.c (file, steps 1-4 and 6: open, validate, dlopen) and
 * loader_graph.c (step 5: META and GRAPH parsed and checked, the immutable
 * plan built) share: the loader's state, its error helpers, the artifact's
 * string storage and overflow-checked arithmetic. Every function here is
 * hidden from libkiln_runtime.so.
 */
#ifndef KILN_RUNTIME_C_LOADER_INTERNAL_H_
#define KILN_RUNTIME_C_LOADER_INTERNAL_H_

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

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

/* a * b into *out; returns 0 on overflow. */
static inline int kiln_mul_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (a != 0 && b > UINT64_MAX / a) return 0;
  *out = a * b;
  return 1;
}

/* a + b into *out; returns 0 on overflow. */
static inline int kiln_add_u64(uint64_t a, uint64_t b, uint64_t* out) {
  if (b > UINT64_MAX - a) return 0;
  *out = a + b;
  return 1;
}

/* x rounded up to KILN_RT_ALIGNMENT (x <= KILN_MAX_TENSOR_BYTES). */
static inline uint64_t kiln_round_up64(uint64_t x) {
  return (x + (KILN_RT_ALIGNMENT - 1)) & ~(uint64_t)(KILN_RT_ALIGNMENT - 1);
}

struct KilnStringBlock {
  struct KilnStringBlock* next;
  size_t used;
  size_t capacity;
  char data[];
};

#define KILN_STRING_BLOCK_SIZE 16384u

/* The loader's state while one artifact loads. */
typedef struct {
  const char* path;
  int fd;          /* the artifact file, open from validation to dlopen */
  uint64_t st_dev; /* its device and inode (fstat) */
  uint64_t st_ino;
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

/* "<path>: <message>" with `code`. */
KilnStatus* kiln_lerr(const Loader* L, KilnStatusCode code, const char* format, ...) KILN_RT_HIDDEN
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
KilnStatus* kiln_loader_oom(const Loader* L) KILN_RT_HIDDEN;
/* "node 3 ('fused_add')" into buf. */
const char* kiln_node_label(const Loader* L, int32_t node, char* buf, size_t size) KILN_RT_HIDDEN;

/* NUL-terminated copies owned by the artifact (freed with it), or NULL. */
char* kiln_artifact_strndup(KilnArtifact* art, const char* s, size_t n) KILN_RT_HIDDEN;
char* kiln_artifact_strdup(KilnArtifact* art, const char* s) KILN_RT_HIDDEN;

/* Step 5 (loader_graph.c). A section's bytes copied NUL-terminated into *text
 * (owned by the artifact) and parsed into *json. */
KilnStatus* kiln_loader_parse_section(const Loader* L, const char* what, const char* bytes,
                                      uint64_t size, char** text, cJSON** json) KILN_RT_HIDDEN;
/* META's fields. */
KilnStatus* kiln_loader_check_meta(Loader* L) KILN_RT_HIDDEN;
/* GRAPH: nodes, entries, attrs, names and parameters, then the storage plan. */
KilnStatus* kiln_loader_check_graph(Loader* L) KILN_RT_HIDDEN;
/* A GPU artifact's DEVICE_CODE, held against its GRAPH (loader_device.c). */
KilnStatus* kiln_loader_check_device(Loader* L) KILN_RT_HIDDEN;
KilnStatus* kiln_loader_check_device_vm(Loader* L) KILN_RT_HIDDEN;
/* A VM artifact's VM section, names and constants (loader_vm.c). */
KilnStatus* kiln_loader_check_vm(Loader* L) KILN_RT_HIDDEN;
/* Step 6 for a VM artifact: kernels resolved in the library whose mapping
 * starts at `library_base`; constants pointed into `mapped` (the blob). */
KilnStatus* kiln_loader_resolve_vm(Loader* L, const uint8_t* mapped,
                                   const void* library_base) KILN_RT_HIDDEN;

#endif /* KILN_RUNTIME_C_LOADER_INTERNAL_H_ */
