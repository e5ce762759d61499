/* File: runtime_c/artifact_writer.c
 *
 * kiln/artifact_writer.h: the artifact builder (a bare, checksummed blob) and
 * sealing of a linked .so (file_size + whole-file checksum, in place).
 *
 * Blob layout written by kiln_artifact_builder_finish (docs/artifact.md):
 *
 *   0                      KilnArtifactHeader (64 bytes)
 *   64                     section table: META, GRAPH, PARAMS, then the other
 *                          kinds in increasing kind order (24 bytes each)
 *   each section payload   at the next multiple of 64 after the previous one
 *   blob_size              the end of the last payload
 *
 * PARAMS: u64 count; count KilnArtifactParam entries (48 bytes); the names
 * (no terminators) in parameter order; the shapes (each at a multiple of 8);
 * the tensor data, each at a multiple of 64 from the section start (which is
 * itself a multiple of 64 from the blob start). Padding bytes are zero, so a
 * builder's output depends only on its inputs.
 */
#define _POSIX_C_SOURCE 200809L /* open, fstat, pread, pwrite */

#include "kiln/artifact_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kiln/artifact_format.h"
#include "kiln/status.h"
#include "runtime_c/artifact_blob.h"

#define KILN_HEADER_SIZE 64u
#define KILN_SECTION_ENTRY_SIZE 24u
#define KILN_PARAM_ENTRY_SIZE 48u
/* Sections other than PARAMS a builder holds (PARAMS is the 64th). */
#define KILN_BUILDER_MAX_SECTIONS (KILN_ARTIFACT_MAX_SECTIONS - 1u)

typedef unsigned long long kiln_ull;

typedef struct {
  uint32_t kind;
  uint8_t* data; /* NULL when size == 0 */
  uint64_t size;
} KilnBuilderSection;

typedef struct {
  char* name; /* NUL-terminated copy */
  uint32_t name_size;
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[KILN_ARTIFACT_MAX_NDIM];
  const uint8_t* data; /* NULL when data_size == 0 */
  uint64_t data_size;
  int owned; /* data is the builder's copy (add_param), not the caller's (add_param_ref) */
} KilnBuilderParam;

struct KilnArtifactBuilder {
  KilnBuilderSection sections[KILN_BUILDER_MAX_SECTIONS];
  uint32_t num_sections;
  KilnBuilderParam* params;
  uint64_t num_params;
  uint64_t params_capacity;
};

static inline void kiln_wr16(uint8_t* p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static inline void kiln_wr32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void kiln_wr64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

/* *acc += x; 0 on overflow. */
static inline int kiln_add(uint64_t* acc, uint64_t x) {
  if (*acc > UINT64_MAX - x) return 0;
  *acc += x;
  return 1;
}
/* Rounds *v up to a multiple of `align` (a power of two); 0 on overflow. */
static inline int kiln_align_up(uint64_t* v, uint64_t align) {
  uint64_t rem = *v & (align - 1u);
  return rem == 0 ? 1 : kiln_add(v, align - rem);
}

/* ----------------------------------------------------------------- builder */

KilnStatus* kiln_artifact_builder_create(KilnArtifactBuilder** out) {
  if (out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_artifact_builder_create: NULL out");
  }
  *out = NULL;
  KilnArtifactBuilder* b = (KilnArtifactBuilder*)calloc(1, sizeof(KilnArtifactBuilder));
  if (b == NULL) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "artifact builder: out of memory");
  }
  *out = b;
  return NULL;
}

void kiln_artifact_builder_release(KilnArtifactBuilder* b) {
  if (b == NULL) return;
  for (uint32_t i = 0; i < b->num_sections; ++i) free(b->sections[i].data);
  for (uint64_t i = 0; i < b->num_params; ++i) {
    free(b->params[i].name);
    if (b->params[i].owned) free((void*)b->params[i].data);
  }
  free(b->params);
  free(b);
}

KilnStatus* kiln_artifact_builder_set_section(KilnArtifactBuilder* b, uint32_t kind,
                                              const void* data, uint64_t size) {
  if (b == NULL || (data == NULL && size != 0)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "kiln_artifact_builder_set_section: NULL builder or data");
  }
  if (kind == KILN_SECTION_PARAMS) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "artifact builder: the PARAMS section is built by "
                              "kiln_artifact_builder_add_param, not set directly");
  }
  if (size > (uint64_t)SIZE_MAX) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                              "artifact builder: section kind %u of %llu bytes is too large",
                              (unsigned)kind, (kiln_ull)size);
  }
  KilnBuilderSection* slot = NULL;
  for (uint32_t i = 0; i < b->num_sections; ++i) {
    if (b->sections[i].kind == kind) slot = &b->sections[i];
  }
  if (slot == NULL && b->num_sections == KILN_BUILDER_MAX_SECTIONS) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "artifact builder: too many sections (at most %u with PARAMS)",
                              (unsigned)KILN_ARTIFACT_MAX_SECTIONS);
  }
  uint8_t* copy = NULL;
  if (size != 0) {
    copy = (uint8_t*)malloc((size_t)size);
    if (copy == NULL) {
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                                "artifact builder: out of memory copying section kind %u (%llu "
                                "bytes)",
                                (unsigned)kind, (kiln_ull)size);
    }
    memcpy(copy, data, (size_t)size);
  }
  if (slot == NULL) {
    slot = &b->sections[b->num_sections++];
    slot->kind = kind;
  } else {
    free(slot->data);
  }
  slot->data = copy;
  slot->size = size;
  return NULL;
}

static KilnStatus* kiln_add_param(KilnArtifactBuilder* b, const char* name,
                                  const DLTensor* tensor, int copy) {
  if (b == NULL || name == NULL || tensor == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "kiln_artifact_builder_add_param: NULL builder, name or tensor");
  }
  size_t name_size = strlen(name);
  if (name_size == 0) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "artifact builder: a parameter name must not be empty");
  }
  if (name_size > UINT32_MAX) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "artifact builder: parameter name of %llu bytes is too long",
                              (kiln_ull)name_size);
  }
  for (uint64_t i = 0; i < b->num_params; ++i) {
    if (b->params[i].name_size == name_size && memcmp(b->params[i].name, name, name_size) == 0) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "artifact builder: parameter '%s' is added twice", name);
    }
  }
  if (tensor->device.device_type != kDLCPU && tensor->device.device_type != kDLCUDAHost) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "artifact builder: parameter '%s' is not in CPU memory (device "
                              "type %d)",
                              name, (int)tensor->device.device_type);
  }
  if (tensor->ndim < 0 || tensor->ndim > KILN_ARTIFACT_MAX_NDIM) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "artifact builder: parameter '%s' has ndim %d, outside [0, %d]",
                              name, tensor->ndim, KILN_ARTIFACT_MAX_NDIM);
  }
  if (tensor->ndim > 0 && tensor->shape == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "artifact builder: parameter '%s' has ndim %d but no shape", name,
                              tensor->ndim);
  }
  uint64_t elem_bytes = kiln_dtype_bytes(tensor->dtype);
  if (elem_bytes == 0) {
    char dtype[64];
    kiln_dtype_to_string(tensor->dtype, dtype, sizeof(dtype));
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "artifact builder: parameter '%s' has unsupported dtype %s", name,
                              dtype);
  }
  uint64_t elements = 1;
  int empty = 0;
  for (int d = 0; d < tensor->ndim; ++d) {
    int64_t dim = tensor->shape[d];
    if (dim < 0) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "artifact builder: parameter '%s' has negative dimension %d "
                                "(%lld)",
                                name, d, (long long)dim);
    }
    if (dim == 0) {
      empty = 1;
    } else if (!empty) {
      if (elements > UINT64_MAX / (uint64_t)dim) {
        return kiln_status_create(KILN_INVALID_ARGUMENT,
                                  "artifact builder: parameter '%s': the element count overflows",
                                  name);
      }
      elements *= (uint64_t)dim;
    }
  }
  if (empty) elements = 0;
  if (elements > UINT64_MAX / elem_bytes || elements * elem_bytes > (uint64_t)SIZE_MAX) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "artifact builder: parameter '%s' is too large", name);
  }
  const uint64_t data_size = elements * elem_bytes;
  /* Strides: NULL or compact row-major (dimensions of extent 1 may have any
   * stride; an empty tensor has no layout). */
  if (tensor->strides != NULL && data_size != 0) {
    int64_t expected = 1;
    for (int d = tensor->ndim - 1; d >= 0; --d) {
      if (tensor->shape[d] != 1 && tensor->strides[d] != expected) {
        return kiln_status_create(KILN_INVALID_ARGUMENT,
                                  "artifact builder: parameter '%s' is not compact: stride %d "
                                  "is %lld, expected %lld",
                                  name, d, (long long)tensor->strides[d], (long long)expected);
      }
      expected *= tensor->shape[d]; /* <= elements, no overflow */
    }
  }
  if (data_size != 0 && tensor->data == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "artifact builder: parameter '%s' has NULL data", name);
  }

  if (b->num_params == b->params_capacity) {
    uint64_t capacity = b->params_capacity == 0 ? 16u : b->params_capacity * 2u;
    if (capacity > SIZE_MAX / sizeof(KilnBuilderParam)) {
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "artifact builder: too many parameters");
    }
    KilnBuilderParam* grown =
        (KilnBuilderParam*)realloc(b->params, (size_t)capacity * sizeof(KilnBuilderParam));
    if (grown == NULL) {
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                                "artifact builder: out of memory adding parameter '%s'", name);
    }
    b->params = grown;
    b->params_capacity = capacity;
  }
  char* name_copy = (char*)malloc(name_size + 1);
  uint8_t* data_copy = data_size == 0 || !copy ? NULL : (uint8_t*)malloc((size_t)data_size);
  if (name_copy == NULL || (data_size != 0 && copy && data_copy == NULL)) {
    free(name_copy);
    free(data_copy);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                              "artifact builder: out of memory copying parameter '%s' (%llu "
                              "bytes)",
                              name, (kiln_ull)data_size);
  }
  memcpy(name_copy, name, name_size + 1);
  const uint8_t* src = data_size == 0 ? NULL : (const uint8_t*)tensor->data + tensor->byte_offset;
  if (copy && data_size != 0) memcpy(data_copy, src, (size_t)data_size);
  KilnBuilderParam* p = &b->params[b->num_params++];
  memset(p, 0, sizeof(*p));
  p->name = name_copy;
  p->name_size = (uint32_t)name_size;
  p->dtype = tensor->dtype;
  p->ndim = tensor->ndim;
  for (int d = 0; d < tensor->ndim; ++d) p->shape[d] = tensor->shape[d];
  p->data = copy ? data_copy : src;
  p->data_size = data_size;
  p->owned = copy;
  return NULL;
}

KilnStatus* kiln_artifact_builder_add_param(KilnArtifactBuilder* b, const char* name,
                                            const DLTensor* tensor) {
  return kiln_add_param(b, name, tensor, /*copy=*/1);
}

KilnStatus* kiln_artifact_builder_add_param_ref(KilnArtifactBuilder* b, const char* name,
                                                const DLTensor* tensor) {
  return kiln_add_param(b, name, tensor, /*copy=*/0);
}

/* Where finish puts each parameter inside PARAMS. */
typedef struct {
  uint64_t name_offset;
  uint64_t shape_offset;
  uint64_t data_offset;
} KilnParamPlacement;

/* Lays out PARAMS: fills placements (num_params entries) and *size. */
static KilnStatus* kiln_plan_params(const KilnArtifactBuilder* b, KilnParamPlacement* placements,
                                    uint64_t* size) {
  uint64_t p = 8u;
  int ok = b->num_params <= (UINT64_MAX - 8u) / KILN_PARAM_ENTRY_SIZE;
  if (ok) p += b->num_params * KILN_PARAM_ENTRY_SIZE;
  for (uint64_t i = 0; ok && i < b->num_params; ++i) {
    placements[i].name_offset = p;
    ok = kiln_add(&p, b->params[i].name_size);
  }
  ok = ok && kiln_align_up(&p, 8u);
  for (uint64_t i = 0; ok && i < b->num_params; ++i) {
    placements[i].shape_offset = p;
    ok = kiln_add(&p, 8u * (uint64_t)b->params[i].ndim);
  }
  for (uint64_t i = 0; ok && i < b->num_params; ++i) {
    ok = kiln_align_up(&p, KILN_ARTIFACT_ALIGNMENT);
    placements[i].data_offset = p;
    ok = ok && kiln_add(&p, b->params[i].data_size);
  }
  if (!ok) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                              "artifact builder: the PARAMS section size overflows");
  }
  *size = p;
  return NULL;
}

/* PARAMS up to the first tensor's data: the count, the entries, the names
 * and the shapes, into `base` (zeroed, placements[0].data_offset bytes, or
 * the whole section when there are no tensors). */
static void kiln_write_param_table(const KilnArtifactBuilder* b,
                                   const KilnParamPlacement* placements, uint8_t* base) {
  kiln_wr64(base, b->num_params);
  for (uint64_t i = 0; i < b->num_params; ++i) {
    const KilnBuilderParam* p = &b->params[i];
    const KilnParamPlacement* at = &placements[i];
    uint8_t* e = base + 8u + i * KILN_PARAM_ENTRY_SIZE;
    kiln_wr64(e, at->name_offset);
    kiln_wr32(e + 8, p->name_size);
    kiln_wr32(e + 12, (uint32_t)p->ndim);
    kiln_wr64(e + 16, at->shape_offset);
    kiln_wr64(e + 24, at->data_offset);
    kiln_wr64(e + 32, p->data_size);
    e[40] = p->dtype.code;
    e[41] = p->dtype.bits;
    kiln_wr16(e + 42, p->dtype.lanes);
    kiln_wr32(e + 44, 0);
    memcpy(base + at->name_offset, p->name, p->name_size);
    for (int32_t d = 0; d < p->ndim; ++d) {
      kiln_wr64(base + at->shape_offset + 8u * (uint64_t)d, (uint64_t)p->shape[d]);
    }
  }
}

static int kiln_section_order(const void* a, const void* b) {
  uint32_t x = (*(const KilnBuilderSection* const*)a)->kind;
  uint32_t y = (*(const KilnBuilderSection* const*)b)->kind;
  /* META, GRAPH first; then the rest by kind (PARAMS is placed by the caller). */
  uint64_t kx = x == KILN_SECTION_META ? 0u : x == KILN_SECTION_GRAPH ? 1u : 2u + (uint64_t)x;
  uint64_t ky = y == KILN_SECTION_META ? 0u : y == KILN_SECTION_GRAPH ? 1u : 2u + (uint64_t)y;
  return kx < ky ? -1 : (kx > ky ? 1 : 0);
}

/* Where every byte of the blob goes. */
typedef struct {
  uint64_t num_sections;
  uint64_t offsets[KILN_ARTIFACT_MAX_SECTIONS];
  uint64_t sizes[KILN_ARTIFACT_MAX_SECTIONS];
  uint32_t kinds[KILN_ARTIFACT_MAX_SECTIONS];
  const uint8_t* payloads[KILN_ARTIFACT_MAX_SECTIONS]; /* NULL for PARAMS */
  KilnParamPlacement* placements;                       /* num_params entries, malloc'ed */
  uint64_t blob_size;
} KilnBlobLayout;

static KilnStatus* kiln_layout(const KilnArtifactBuilder* b, KilnBlobLayout* l) {
  memset(l, 0, sizeof(*l));
  /* Section order: META, GRAPH, PARAMS, others by kind. PARAMS is not stored
   * as a KilnBuilderSection. */
  const KilnBuilderSection* sorted[KILN_BUILDER_MAX_SECTIONS];
  int have_meta = 0;
  int have_graph = 0;
  int have_vm = 0;
  for (uint32_t i = 0; i < b->num_sections; ++i) {
    sorted[i] = &b->sections[i];
    have_meta |= b->sections[i].kind == KILN_SECTION_META;
    have_graph |= b->sections[i].kind == KILN_SECTION_GRAPH;
    have_vm |= b->sections[i].kind == KILN_SECTION_VM;
  }
  /* A graph artifact has GRAPH, a VM artifact (format version 2) VM. */
  if (!have_meta || (!have_graph && !have_vm)) {
    return kiln_status_create(KILN_FAILED_PRECONDITION,
                              "artifact builder: the %s section was never set",
                              have_meta ? "GRAPH (or VM)" : "META");
  }
  if (have_graph && have_vm) {
    return kiln_status_create(KILN_FAILED_PRECONDITION,
                              "artifact builder: both GRAPH and VM are set; an artifact has one "
                              "executor plan");
  }
  qsort(sorted, b->num_sections, sizeof(sorted[0]), kiln_section_order);
  l->num_sections = (uint64_t)b->num_sections + 1u;

  if (b->num_params != 0) {
    if (b->num_params > SIZE_MAX / sizeof(KilnParamPlacement)) {
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "artifact builder: too many parameters");
    }
    l->placements =
        (KilnParamPlacement*)malloc((size_t)b->num_params * sizeof(KilnParamPlacement));
    if (l->placements == NULL) {
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "artifact builder: out of memory");
    }
  }
  uint64_t params_size = 0;
  KilnStatus* st = kiln_plan_params(b, l->placements, &params_size);
  if (st != NULL) {
    free(l->placements);
    l->placements = NULL;
    return st;
  }
  uint64_t pos = KILN_HEADER_SIZE + l->num_sections * KILN_SECTION_ENTRY_SIZE;
  uint64_t blob_size = pos;
  int ok = 1;
  for (uint64_t i = 0, src = 0; i < l->num_sections; ++i) {
    if (i == 2) { /* PARAMS, after META and GRAPH */
      l->kinds[i] = KILN_SECTION_PARAMS;
      l->sizes[i] = params_size;
      l->payloads[i] = NULL;
    } else {
      l->kinds[i] = sorted[src]->kind;
      l->sizes[i] = sorted[src]->size;
      l->payloads[i] = sorted[src]->data;
      ++src;
    }
    ok = ok && kiln_align_up(&pos, KILN_ARTIFACT_ALIGNMENT);
    l->offsets[i] = pos;
    ok = ok && kiln_add(&pos, l->sizes[i]);
    blob_size = pos;
  }
  if (!ok || blob_size > (uint64_t)SIZE_MAX) {
    free(l->placements);
    l->placements = NULL;
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "artifact builder: the blob is too large");
  }
  l->blob_size = blob_size;
  return NULL;
}

/* Receives the blob's bytes in increasing offset order: (offset, bytes,
 * size); bytes NULL means `size` zero bytes. Nonzero aborts the emission. */
typedef KilnStatus* (*KilnBlobSink)(void* ctx, uint64_t offset, const uint8_t* bytes,
                                    uint64_t size);

/* Emits the whole blob of layout `l`, every byte of [0, blob_size) once,
 * with `file_size` in the header and a zero checksum. */
static KilnStatus* kiln_emit_blob(const KilnArtifactBuilder* b, const KilnBlobLayout* l,
                                  uint64_t file_size, KilnBlobSink sink, void* ctx) {
  uint8_t head[KILN_HEADER_SIZE + KILN_ARTIFACT_MAX_SECTIONS * KILN_SECTION_ENTRY_SIZE];
  const uint64_t head_size = KILN_HEADER_SIZE + l->num_sections * KILN_SECTION_ENTRY_SIZE;
  memset(head, 0, sizeof(head));
  memcpy(head, KILN_ARTIFACT_MAGIC, KILN_ARTIFACT_MAGIC_SIZE);
  /* A blob with a VM section is a VM artifact (format version 2), one with
   * DEVICE_CODE a GPU artifact (format version 3; 4 with both). */
  uint32_t version = KILN_ARTIFACT_FORMAT_VERSION;
  for (uint64_t i = 0; i < l->num_sections; ++i) {
    if (l->kinds[i] == KILN_SECTION_VM) version = KILN_ARTIFACT_FORMAT_VERSION_VM;
  }
  for (uint64_t i = 0; i < l->num_sections; ++i) {
    if (l->kinds[i] == KILN_SECTION_DEVICE_CODE) {
      version = version == KILN_ARTIFACT_FORMAT_VERSION_VM ? KILN_ARTIFACT_FORMAT_VERSION_DEVICE_VM
                                                           : KILN_ARTIFACT_FORMAT_VERSION_DEVICE;
    }
  }
  kiln_wr32(head + 8, version);
  kiln_wr32(head + 12, KILN_HEADER_SIZE);
  kiln_wr64(head + 16, l->blob_size);
  kiln_wr64(head + 24, file_size);
  kiln_wr32(head + 40, (uint32_t)l->num_sections);
  for (uint64_t i = 0; i < l->num_sections; ++i) {
    uint8_t* e = head + KILN_HEADER_SIZE + i * KILN_SECTION_ENTRY_SIZE;
    kiln_wr32(e, l->kinds[i]);
    kiln_wr32(e + 4, 0);
    kiln_wr64(e + 8, l->offsets[i]);
    kiln_wr64(e + 16, l->sizes[i]);
  }
  KilnStatus* st = sink(ctx, 0, head, head_size);
  uint64_t pos = head_size;
  for (uint64_t i = 0; st == NULL && i < l->num_sections; ++i) {
    const uint64_t at = l->offsets[i];
    if (at > pos) st = sink(ctx, pos, NULL, at - pos);
    pos = at;
    if (st != NULL) break;
    if (l->kinds[i] != KILN_SECTION_PARAMS) {
      if (l->sizes[i] != 0) st = sink(ctx, at, l->payloads[i], l->sizes[i]);
      pos = at + l->sizes[i];
      continue;
    }
    /* PARAMS: the table (count, entries, names, shapes), then each tensor's
     * data at its 64-byte aligned place. */
    const uint64_t table_size = b->num_params != 0 ? l->placements[0].data_offset : l->sizes[i];
    uint8_t* table = (uint8_t*)calloc(1, (size_t)(table_size == 0 ? 1u : table_size));
    if (table == NULL) {
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                                "artifact builder: out of memory for the parameter table");
    }
    kiln_write_param_table(b, l->placements, table);
    st = sink(ctx, at, table, table_size);
    free(table);
    pos = at + table_size;
    for (uint64_t k = 0; st == NULL && k < b->num_params; ++k) {
      const uint64_t data_at = at + l->placements[k].data_offset;
      if (data_at > pos) st = sink(ctx, pos, NULL, data_at - pos);
      if (st == NULL && b->params[k].data_size != 0) {
        st = sink(ctx, data_at, b->params[k].data, b->params[k].data_size);
      }
      pos = data_at + b->params[k].data_size;
    }
    if (st == NULL && at + l->sizes[i] > pos) st = sink(ctx, pos, NULL, at + l->sizes[i] - pos);
    pos = at + l->sizes[i];
  }
  if (st == NULL && l->blob_size > pos) st = sink(ctx, pos, NULL, l->blob_size - pos);
  return st;
}

static KilnStatus* kiln_sink_memory(void* ctx, uint64_t offset, const uint8_t* bytes,
                                    uint64_t size) {
  uint8_t* out = (uint8_t*)ctx;
  if (bytes != NULL) {
    memcpy(out + offset, bytes, (size_t)size);
  } else {
    memset(out + offset, 0, (size_t)size);
  }
  return NULL;
}

KilnStatus* kiln_artifact_builder_blob_size(const KilnArtifactBuilder* b, uint64_t* size) {
  if (size != NULL) *size = 0;
  if (b == NULL || size == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "kiln_artifact_builder_blob_size: NULL builder or output");
  }
  KilnBlobLayout l;
  KilnStatus* st = kiln_layout(b, &l);
  if (st != NULL) return st;
  free(l.placements);
  *size = l.blob_size;
  return NULL;
}

KilnStatus* kiln_artifact_builder_finish(KilnArtifactBuilder* b, uint8_t** blob, uint64_t* size) {
  if (blob != NULL) *blob = NULL;
  if (size != NULL) *size = 0;
  if (b == NULL || blob == NULL || size == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "kiln_artifact_builder_finish: NULL builder or output");
  }
  KilnBlobLayout l;
  KilnStatus* st = kiln_layout(b, &l);
  if (st != NULL) return st;
  uint8_t* out = (uint8_t*)malloc((size_t)(l.blob_size == 0 ? 1u : l.blob_size));
  if (out == NULL) {
    free(l.placements);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                              "artifact builder: out of memory for a %llu-byte blob",
                              (kiln_ull)l.blob_size);
  }
  st = kiln_emit_blob(b, &l, /*file_size=*/0, kiln_sink_memory, out);
  free(l.placements);
  if (st != NULL) {
    free(out);
    return st;
  }
  const uint64_t blob_size = l.blob_size;
  kiln_wr64(out + KILN_ARTIFACT_CHECKSUM_OFFSET,
            kiln_checksum64(out, blob_size, KILN_ARTIFACT_CHECKSUM_OFFSET));

  /* Self-check: what the loader will check, on what was just written. */
  KilnBlobView view;
  st = kiln_blob_parse(out, blob_size, 1, "new blob", &view);
  if (st != NULL) {
    KilnStatus* internal = kiln_status_create(
        KILN_INTERNAL, "artifact builder wrote an invalid blob: %s", kiln_status_message(st));
    kiln_status_free(st);
    free(out);
    return internal;
  }
  *blob = out;
  *size = blob_size;
  return NULL;
}

/* ------------------------------------------------------------------ sealing */

static KilnStatus* kiln_errno_status(const char* path, const char* what, int err) {
  return kiln_status_create(err == ENOENT ? KILN_NOT_FOUND : KILN_INTERNAL, "%s: %s: %s", path,
                            what, strerror(err));
}

KilnStatus* kiln_artifact_seal_file(const char* path) {
  if (path == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_artifact_seal_file: NULL path");
  }
  int fd = open(path, O_RDWR);
  if (fd < 0) return kiln_errno_status(path, "cannot open for sealing", errno);
  KilnStatus* st = NULL;
  uint8_t* image = NULL;
  struct stat info;
  if (fstat(fd, &info) != 0) {
    st = kiln_errno_status(path, "cannot stat", errno);
    goto done;
  }
  if (!S_ISREG(info.st_mode)) {
    st = kiln_status_create(KILN_INVALID_ARGUMENT, "%s: not a regular file", path);
    goto done;
  }
  if (info.st_size < 0 || (uint64_t)info.st_size > (uint64_t)SIZE_MAX) {
    st = kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: file too large to seal", path);
    goto done;
  }
  const uint64_t image_size = (uint64_t)info.st_size;
  image = (uint8_t*)malloc(image_size == 0 ? 1u : (size_t)image_size);
  if (image == NULL) {
    st = kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory reading %llu bytes", path,
                            (kiln_ull)image_size);
    goto done;
  }
  for (uint64_t got = 0; got < image_size;) {
    size_t want = (size_t)(image_size - got);
    ssize_t n = pread(fd, image + got, want, (off_t)got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      st = kiln_errno_status(path, "read failed", errno);
      goto done;
    }
    if (n == 0) {
      st = kiln_status_create(KILN_DATA_LOSS, "%s: the file shrank while being read", path);
      goto done;
    }
    got += (uint64_t)n;
  }

  uint64_t offset = 0;
  uint64_t sym_size = 0;
  st = kiln_elf_find_symbol(image, image_size, KILN_ARTIFACT_SYMBOL, &offset, &sym_size);
  if (st != NULL) {
    KilnStatus* wrapped = kiln_status_create(kiln_status_code(st), "%s: not a kiln artifact: %s",
                                             path, kiln_status_message(st));
    kiln_status_free(st);
    st = wrapped;
    goto done;
  }
  if (sym_size < KILN_HEADER_SIZE ||
      memcmp(image + offset, KILN_ARTIFACT_MAGIC, KILN_ARTIFACT_MAGIC_SIZE) != 0) {
    st = kiln_status_create(KILN_DATA_LOSS,
                            "%s: not a kiln artifact: symbol '%s' (file offset %llu, %llu bytes) "
                            "does not hold a blob header with the \"KILNART\" magic",
                            path, KILN_ARTIFACT_SYMBOL, (kiln_ull)offset, (kiln_ull)sym_size);
    goto done;
  }
  if (offset % KILN_ARTIFACT_ALIGNMENT != 0) {
    st = kiln_status_create(KILN_DATA_LOSS,
                            "%s: the blob (symbol '%s' at file offset %llu) is not %u-byte "
                            "aligned",
                            path, KILN_ARTIFACT_SYMBOL, (kiln_ull)offset,
                            (unsigned)KILN_ARTIFACT_ALIGNMENT);
    goto done;
  }
  /* The blob must be valid before it is sealed; a bare blob's own checksum
   * is verified too (an already sealed file is re-sealed after its
   * structure is checked). */
  KilnBlobView view;
  st = kiln_blob_parse(image + offset, sym_size, 1, path, &view);
  if (st != NULL) goto done;

  uint8_t fields[16];
  kiln_wr64(fields, image_size);
  memcpy(image + offset + 24, fields, 8); /* file_size, before the checksum */
  kiln_wr64(fields + 8,
            kiln_checksum64(image, image_size, offset + KILN_ARTIFACT_CHECKSUM_OFFSET));
  for (size_t put = 0; put < sizeof(fields);) {
    ssize_t n = pwrite(fd, fields + put, sizeof(fields) - put, (off_t)(offset + 24u + put));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      st = kiln_errno_status(path, "write failed", n < 0 ? errno : EIO);
      goto done;
    }
    put += (size_t)n;
  }

done:
  free(image);
  if (close(fd) != 0 && st == NULL) st = kiln_errno_status(path, "close failed", errno);
  return st;
}

/* ------------------------------------------------- writing into a linked .so */

typedef struct {
  int fd;
  uint64_t base; /* file offset of the blob */
  const char* path;
} KilnFileSink;

static KilnStatus* kiln_sink_file(void* ctx, uint64_t offset, const uint8_t* bytes,
                                  uint64_t size) {
  static const uint8_t zeros[4096];
  const KilnFileSink* f = (const KilnFileSink*)ctx;
  uint64_t at = f->base + offset;
  while (size > 0) {
    const uint64_t cap = bytes != NULL ? (uint64_t)1 << 30 : (uint64_t)sizeof(zeros);
    const size_t want = (size_t)(size < cap ? size : cap);
    ssize_t n = pwrite(f->fd, bytes != NULL ? bytes : zeros, want, (off_t)at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return kiln_errno_status(f->path, "write failed", n < 0 ? errno : EIO);
    at += (uint64_t)n;
    size -= (uint64_t)n;
    if (bytes != NULL) bytes += n;
  }
  return NULL;
}

KilnStatus* kiln_artifact_builder_write_into(const KilnArtifactBuilder* b, const char* path) {
  if (b == NULL || path == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "kiln_artifact_builder_write_into: NULL builder or path");
  }
  KilnBlobLayout l;
  KilnStatus* st = kiln_layout(b, &l);
  if (st != NULL) return st;
  uint8_t* image = NULL;
  uint64_t image_size = 0;
  int fd = open(path, O_RDWR);
  if (fd < 0) {
    st = kiln_errno_status(path, "cannot open for writing the artifact", errno);
    goto done;
  }
  struct stat info;
  if (fstat(fd, &info) != 0) {
    st = kiln_errno_status(path, "cannot stat", errno);
    goto done;
  }
  if (!S_ISREG(info.st_mode)) {
    st = kiln_status_create(KILN_INVALID_ARGUMENT, "%s: not a regular file", path);
    goto done;
  }
  if (info.st_size <= 0 || (uint64_t)info.st_size > (uint64_t)SIZE_MAX) {
    st = kiln_status_create(KILN_INVALID_ARGUMENT, "%s: empty or too large (%lld bytes)", path,
                            (long long)info.st_size);
    goto done;
  }
  image_size = (uint64_t)info.st_size;
  /* The file as the linker left it, shared with the page cache: the writes
   * below show through, so the checksum reads the final bytes without a copy. */
  void* map = mmap(NULL, (size_t)image_size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    st = kiln_errno_status(path, "cannot map", errno);
    goto done;
  }
  image = (uint8_t*)map;
  uint64_t offset = 0;
  uint64_t sym_size = 0;
  st = kiln_elf_find_symbol(image, image_size, KILN_ARTIFACT_SYMBOL, &offset, &sym_size);
  if (st != NULL) {
    KilnStatus* wrapped = kiln_status_create(kiln_status_code(st),
                                             "%s: no place for the artifact: %s", path,
                                             kiln_status_message(st));
    kiln_status_free(st);
    st = wrapped;
    goto done;
  }
  if (sym_size != l.blob_size || offset % KILN_ARTIFACT_ALIGNMENT != 0) {
    st = kiln_status_create(KILN_FAILED_PRECONDITION,
                            "%s: symbol '%s' (file offset %llu, %llu bytes) is not a %u-byte "
                            "aligned placeholder of the blob's %llu bytes",
                            path, KILN_ARTIFACT_SYMBOL, (kiln_ull)offset, (kiln_ull)sym_size,
                            (unsigned)KILN_ARTIFACT_ALIGNMENT, (kiln_ull)l.blob_size);
    goto done;
  }
  KilnFileSink sink = {fd, offset, path};
  st = kiln_emit_blob(b, &l, image_size, kiln_sink_file, &sink);
  if (st != NULL) goto done;
  /* Self-check of the structure as the loader reads it. */
  KilnBlobView view;
  st = kiln_blob_parse(image + offset, l.blob_size, 0, path, &view);
  if (st != NULL) {
    KilnStatus* internal = kiln_status_create(
        KILN_INTERNAL, "artifact builder wrote an invalid blob: %s", kiln_status_message(st));
    kiln_status_free(st);
    st = internal;
    goto done;
  }
  uint8_t sum[8];
  kiln_wr64(sum, kiln_checksum64(image, image_size, offset + KILN_ARTIFACT_CHECKSUM_OFFSET));
  KilnFileSink at_header = {fd, offset + KILN_ARTIFACT_CHECKSUM_OFFSET, path};
  st = kiln_sink_file(&at_header, 0, sum, sizeof(sum));

done:
  free(l.placements);
  if (image != NULL) munmap(image, (size_t)image_size);
  if (fd >= 0 && close(fd) != 0 && st == NULL) st = kiln_errno_status(path, "close failed", errno);
  return st;
}
