/* File: runtime_c/artifact_blob.c
 *
 * Validating and reading artifact blobs and files (runtime_c/artifact_blob.h,
 * docs/artifact.md "What the loader checks", steps 1-4 and the PARAMS part of
 * step 5). Nothing is trusted: every field is read with explicit
 * little-endian loads (no alignment assumed) and every offset/size/count is
 * checked with overflow-safe arithmetic before anything is dereferenced.
 *
 * Messages: "<what>: corrupted artifact: <field> (offset N) ...", where
 * offsets are from the blob start unless they say "file offset".
 */
#include "runtime_c/artifact_blob.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/artifact_format.h"
#include "kiln/status.h"

#define KILN_HEADER_SIZE 64u
#define KILN_SECTION_ENTRY_SIZE 24u
#define KILN_PARAM_ENTRY_SIZE 48u
/* DLPack 0.8's kDLBool (the system DLPack may predate it). */
#define KILN_DTYPE_CODE_BOOL 6u

static inline uint16_t kiln_rd16(const uint8_t* p) {
  return (uint16_t)((uint16_t)p[0] | (uint16_t)((uint16_t)p[1] << 8));
}
static inline uint32_t kiln_rd32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t kiln_rd64(const uint8_t* p) {
  return (uint64_t)kiln_rd32(p) | ((uint64_t)kiln_rd32(p + 4) << 32);
}
static inline int kiln_in_bounds(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

typedef unsigned long long kiln_ull; /* for printf */

/* ------------------------------------------------------------------ dtypes */

typedef struct {
  const char* name;
  uint8_t code;
  uint8_t bits;
} KilnDtypeName;

static const KilnDtypeName kiln_dtype_names[] = {
    {"float16", kDLFloat, 16},  {"bfloat16", kDLBfloat, 16}, {"float32", kDLFloat, 32},
    {"float64", kDLFloat, 64},  {"int8", kDLInt, 8},         {"int16", kDLInt, 16},
    {"int32", kDLInt, 32},      {"int64", kDLInt, 64},       {"uint8", kDLUInt, 8},
    {"uint16", kDLUInt, 16},    {"uint32", kDLUInt, 32},     {"uint64", kDLUInt, 64},
    {"bool", KILN_DTYPE_CODE_BOOL, 8},
};
#define KILN_NUM_DTYPES (sizeof(kiln_dtype_names) / sizeof(kiln_dtype_names[0]))

static const KilnDtypeName* kiln_dtype_lookup(DLDataType dtype) {
  if (dtype.lanes != 1) return NULL;
  for (size_t i = 0; i < KILN_NUM_DTYPES; ++i) {
    if (kiln_dtype_names[i].code == dtype.code && kiln_dtype_names[i].bits == dtype.bits) {
      return &kiln_dtype_names[i];
    }
  }
  return NULL;
}

uint64_t kiln_dtype_bytes(DLDataType dtype) {
  const KilnDtypeName* d = kiln_dtype_lookup(dtype);
  return d == NULL ? 0u : (uint64_t)d->bits / 8u;
}

void kiln_dtype_to_string(DLDataType dtype, char* buf, uint64_t buf_size) {
  if (buf == NULL || buf_size == 0) return;
  size_t n = buf_size > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)buf_size;
  const KilnDtypeName* d = kiln_dtype_lookup(dtype);
  if (d != NULL) {
    (void)snprintf(buf, n, "%s", d->name);
  } else {
    (void)snprintf(buf, n, "dtype(code=%u,bits=%u,lanes=%u)", (unsigned)dtype.code,
                   (unsigned)dtype.bits, (unsigned)dtype.lanes);
  }
}

int kiln_dtype_from_string(const char* s, DLDataType* out) {
  if (s == NULL || out == NULL) return -1;
  for (size_t i = 0; i < KILN_NUM_DTYPES; ++i) {
    if (strcmp(s, kiln_dtype_names[i].name) == 0) {
      out->code = kiln_dtype_names[i].code;
      out->bits = kiln_dtype_names[i].bits;
      out->lanes = 1;
      return 0;
    }
  }
  return -1;
}

/* --------------------------------------------------------------- sections */

static const char* kiln_section_name(uint32_t kind) {
  switch (kind) {
    case KILN_SECTION_META:
      return "META";
    case KILN_SECTION_GRAPH:
      return "GRAPH";
    case KILN_SECTION_PARAMS:
      return "PARAMS";
    case KILN_SECTION_DEVICE_CODE:
      return "DEVICE_CODE";
    case KILN_SECTION_VM:
      return "VM";
    default:
      return "unknown kind";
  }
}

/* Decodes the 64-byte header (the caller checked that 64 bytes exist). */
static void kiln_read_header(const uint8_t* p, KilnArtifactHeader* h) {
  memcpy(h->magic, p, KILN_ARTIFACT_MAGIC_SIZE);
  h->format_version = kiln_rd32(p + 8);
  h->header_size = kiln_rd32(p + 12);
  h->blob_size = kiln_rd64(p + 16);
  h->file_size = kiln_rd64(p + 24);
  h->checksum = kiln_rd64(p + 32);
  h->num_sections = kiln_rd32(p + 40);
  h->flags = kiln_rd32(p + 44);
  memcpy(h->reserved, p + 48, sizeof(h->reserved));
}

/* Header checks shared by kiln_blob_parse and kiln_artifact_validate_image
 * (docs/artifact.md step 2, without file_size): magic, format_version,
 * header_size, 64 <= blob_size <= available. `available_what` says what
 * bounds the blob in messages ("the bytes available"). */
static KilnStatus* kiln_check_header(const uint8_t* blob, uint64_t available, const char* what,
                                     const char* available_what, KilnArtifactHeader* h) {
  if (available < KILN_HEADER_SIZE) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: only %llu bytes, shorter than the 64-byte "
                              "header",
                              what, (kiln_ull)available);
  }
  kiln_read_header(blob, h);
  if (memcmp(h->magic, KILN_ARTIFACT_MAGIC, KILN_ARTIFACT_MAGIC_SIZE) != 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: not a kiln artifact: no \"KILNART\" magic at offset 0", what);
  }
  if (h->format_version > KILN_ARTIFACT_FORMAT_VERSION_DEVICE_VM) {
    return kiln_status_create(KILN_UNIMPLEMENTED,
                              "%s: made by a newer kiln: format version %u, this runtime reads "
                              "up to %u",
                              what, (unsigned)h->format_version,
                              (unsigned)KILN_ARTIFACT_FORMAT_VERSION_DEVICE_VM);
  }
  if (h->format_version == 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: format_version (offset 8) is 0", what);
  }
  if (h->header_size != KILN_HEADER_SIZE) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: header_size (offset 12) is %u, expected %u",
                              what, (unsigned)h->header_size, (unsigned)KILN_HEADER_SIZE);
  }
  if (h->blob_size < KILN_HEADER_SIZE) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: blob_size (offset 16) is %llu, smaller "
                              "than the header",
                              what, (kiln_ull)h->blob_size);
  }
  if (h->blob_size > available) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: blob_size (offset 16) is %llu, more than "
                              "%s (%llu bytes)",
                              what, (kiln_ull)h->blob_size, available_what, (kiln_ull)available);
  }
  return NULL;
}

/* Checks the PARAMS section [base, base + size) at blob offset
 * `section_offset`; on success *num_params is its entry count. */
static KilnStatus* kiln_check_params(const uint8_t* base, uint64_t size, uint64_t section_offset,
                                     const char* what, uint64_t* num_params);

KilnStatus* kiln_blob_parse(const uint8_t* blob, uint64_t size, int verify_checksum,
                            const char* what, KilnBlobView* out) {
  if (out != NULL) memset(out, 0, sizeof(*out));
  if (what == NULL) what = "blob";
  if ((blob == NULL && size != 0) || out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_blob_parse: NULL blob or output");
  }
  KilnArtifactHeader h;
  KilnStatus* st = kiln_check_header(blob, size, what, "the bytes available", &h);
  if (st != NULL) return st;
  const uint64_t blob_size = h.blob_size;

  if (verify_checksum && h.file_size == 0) {
    uint64_t computed = kiln_checksum64(blob, blob_size, KILN_ARTIFACT_CHECKSUM_OFFSET);
    if (computed != h.checksum) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "%s: corrupted: checksum mismatch (stored 0x%016llx, computed "
                                "0x%016llx over the %llu-byte blob)",
                                what, (kiln_ull)h.checksum, (kiln_ull)computed,
                                (kiln_ull)blob_size);
    }
  }
  if (h.flags != 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: header flags (offset 44) are 0x%x, "
                              "expected 0",
                              what, (unsigned)h.flags);
  }
  for (unsigned i = 0; i < sizeof(h.reserved); ++i) {
    if (h.reserved[i] != 0) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "%s: corrupted artifact: reserved header byte at offset %u is "
                                "0x%02x, expected 0",
                                what, 48u + i, (unsigned)h.reserved[i]);
    }
  }

  /* The section table. */
  if (h.num_sections > KILN_ARTIFACT_MAX_SECTIONS) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: num_sections (offset 40) is %u, at most "
                              "%u",
                              what, (unsigned)h.num_sections, (unsigned)KILN_ARTIFACT_MAX_SECTIONS);
  }
  const uint64_t n = h.num_sections;
  const uint64_t table_end = KILN_HEADER_SIZE + KILN_SECTION_ENTRY_SIZE * n; /* <= 1600 */
  if (table_end > blob_size) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: section table (%llu entries at offset 64) "
                              "ends at %llu, past blob size %llu",
                              what, (kiln_ull)n, (kiln_ull)table_end, (kiln_ull)blob_size);
  }
  /* Index of the section of each known kind, or n when absent. */
  uint64_t index_of[KILN_SECTION_VM + 1];
  for (unsigned k = 0; k <= KILN_SECTION_VM; ++k) index_of[k] = n;
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t* e = blob + KILN_HEADER_SIZE + i * KILN_SECTION_ENTRY_SIZE;
    const uint64_t entry_offset = KILN_HEADER_SIZE + i * KILN_SECTION_ENTRY_SIZE;
    uint32_t kind = kiln_rd32(e);
    uint32_t flags = kiln_rd32(e + 4);
    uint64_t offset = kiln_rd64(e + 8);
    uint64_t sec_size = kiln_rd64(e + 16);
    const char* kind_name = kiln_section_name(kind);
    if (flags != 0) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "%s: corrupted artifact: section %llu (%s) flags (offset %llu) "
                                "are 0x%x, expected 0",
                                what, (kiln_ull)i, kind_name, (kiln_ull)(entry_offset + 4),
                                (unsigned)flags);
    }
    if (offset % KILN_ARTIFACT_ALIGNMENT != 0) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "%s: corrupted artifact: section %llu (%s) offset %llu is not a "
                                "multiple of %u",
                                what, (kiln_ull)i, kind_name, (kiln_ull)offset,
                                (unsigned)KILN_ARTIFACT_ALIGNMENT);
    }
    if (offset < table_end) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "%s: corrupted artifact: section %llu (%s) offset %llu overlaps "
                                "the header and section table (which end at %llu)",
                                what, (kiln_ull)i, kind_name, (kiln_ull)offset,
                                (kiln_ull)table_end);
    }
    if (!kiln_in_bounds(offset, sec_size, blob_size)) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "%s: corrupted artifact: section %llu (%s) offset %llu + size "
                                "%llu exceeds blob size %llu",
                                what, (kiln_ull)i, kind_name, (kiln_ull)offset,
                                (kiln_ull)sec_size, (kiln_ull)blob_size);
    }
    for (uint64_t j = 0; j < i; ++j) {
      const uint8_t* f = blob + KILN_HEADER_SIZE + j * KILN_SECTION_ENTRY_SIZE;
      uint64_t other_offset = kiln_rd64(f + 8);
      uint64_t other_size = kiln_rd64(f + 16);
      if (sec_size == 0 || other_size == 0) continue;
      /* Both in bounds, so the ends do not overflow. */
      if (offset < other_offset + other_size && other_offset < offset + sec_size) {
        return kiln_status_create(KILN_DATA_LOSS,
                                  "%s: corrupted artifact: section %llu (%s) [%llu, %llu) "
                                  "overlaps section %llu (%s) [%llu, %llu)",
                                  what, (kiln_ull)i, kind_name, (kiln_ull)offset,
                                  (kiln_ull)(offset + sec_size), (kiln_ull)j,
                                  kiln_section_name(kiln_rd32(f)), (kiln_ull)other_offset,
                                  (kiln_ull)(other_offset + other_size));
      }
    }
    if (kind >= KILN_SECTION_META && kind <= KILN_SECTION_VM) {
      if (index_of[kind] != n) {
        return kiln_status_create(KILN_DATA_LOSS,
                                  "%s: corrupted artifact: section %llu is a second %s section "
                                  "(the first is section %llu)",
                                  what, (kiln_ull)i, kind_name, (kiln_ull)index_of[kind]);
      }
      index_of[kind] = i;
    }
    /* Other kinds are ignored (docs/artifact.md), once checked as above. */
  }
  /* Version 1: META, GRAPH, PARAMS. Version 2 (a VM artifact): META, VM,
   * PARAMS, and no GRAPH. */
  const int is_vm = h.format_version == KILN_ARTIFACT_FORMAT_VERSION_VM ||
                    h.format_version == KILN_ARTIFACT_FORMAT_VERSION_DEVICE_VM;
  const uint32_t required[3] = {KILN_SECTION_META, is_vm ? KILN_SECTION_VM : KILN_SECTION_GRAPH,
                                KILN_SECTION_PARAMS};
  for (int r = 0; r < 3; ++r) {
    if (index_of[required[r]] == n) {
      return kiln_status_create(KILN_DATA_LOSS, "%s: corrupted artifact: no %s section", what,
                                kiln_section_name(required[r]));
    }
  }
  if (is_vm && index_of[KILN_SECTION_GRAPH] != n) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: a VM artifact (format version %u) has a "
                              "GRAPH section (section %llu)",
                              what, (unsigned)h.format_version,
                              (kiln_ull)index_of[KILN_SECTION_GRAPH]);
  }
  if (!is_vm && index_of[KILN_SECTION_VM] != n) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: a graph artifact (format version %u) has a "
                              "VM section (section %llu)",
                              what, (unsigned)h.format_version,
                              (kiln_ull)index_of[KILN_SECTION_VM]);
  }

  /* Version 3 (a GPU artifact): version 1's sections and DEVICE_CODE;
   * version 4 (a GPU VM artifact): version 2's and DEVICE_CODE. */
  const int is_device = h.format_version == KILN_ARTIFACT_FORMAT_VERSION_DEVICE ||
                        h.format_version == KILN_ARTIFACT_FORMAT_VERSION_DEVICE_VM;
  if (is_device && index_of[KILN_SECTION_DEVICE_CODE] == n) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: no DEVICE_CODE section in a GPU artifact "
                              "(format version %u)",
                              what, (unsigned)h.format_version);
  }
  if (!is_device && index_of[KILN_SECTION_DEVICE_CODE] != n) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: a CPU artifact (format version %u) has a "
                              "DEVICE_CODE section (section %llu)",
                              what, (unsigned)h.format_version,
                              (kiln_ull)index_of[KILN_SECTION_DEVICE_CODE]);
  }
  KilnBlobView view;
  memset(&view, 0, sizeof(view));
  view.header = h;
  for (uint32_t kind = KILN_SECTION_META; kind <= KILN_SECTION_VM; ++kind) {
    if (index_of[kind] == n) continue;
    const uint8_t* e = blob + KILN_HEADER_SIZE + index_of[kind] * KILN_SECTION_ENTRY_SIZE;
    const uint8_t* data = blob + kiln_rd64(e + 8);
    uint64_t sec_size = kiln_rd64(e + 16);
    switch (kind) {
      case KILN_SECTION_META:
        view.meta = (const char*)data;
        view.meta_size = sec_size;
        break;
      case KILN_SECTION_GRAPH:
        view.graph = (const char*)data;
        view.graph_size = sec_size;
        break;
      case KILN_SECTION_PARAMS:
        view.params = data;
        view.params_size = sec_size;
        break;
      case KILN_SECTION_VM:
        view.vm = data;
        view.vm_size = sec_size;
        break;
      default:
        view.device_code = data;
        view.device_code_size = sec_size;
        break;
    }
  }
  st = kiln_check_params(view.params, view.params_size, (uint64_t)(view.params - blob), what,
                         &view.num_params);
  if (st != NULL) return st;
  *out = view;
  return NULL;
}

/* ------------------------------------------------------------------ PARAMS */

typedef struct {
  const uint8_t* name;
  uint32_t size;
  uint64_t index;
} KilnNameRef;

static int kiln_name_ref_compare(const void* a, const void* b) {
  const KilnNameRef* x = (const KilnNameRef*)a;
  const KilnNameRef* y = (const KilnNameRef*)b;
  uint32_t common = x->size < y->size ? x->size : y->size;
  int c = common == 0 ? 0 : memcmp(x->name, y->name, common);
  if (c != 0) return c;
  if (x->size != y->size) return x->size < y->size ? -1 : 1;
  return x->index < y->index ? -1 : (x->index > y->index ? 1 : 0);
}

/* Checks entry `i` of the PARAMS table. */
static KilnStatus* kiln_check_param_entry(const uint8_t* base, uint64_t size,
                                          uint64_t section_offset, uint64_t table_end,
                                          uint64_t i, const char* what) {
  const uint64_t at = 8u + i * KILN_PARAM_ENTRY_SIZE;
  const uint8_t* e = base + at;
  const kiln_ull where = (kiln_ull)(section_offset + at); /* blob offset of the entry */
  uint64_t name_offset = kiln_rd64(e);
  uint32_t name_size = kiln_rd32(e + 8);
  uint32_t ndim_raw = kiln_rd32(e + 12);
  uint64_t shape_offset = kiln_rd64(e + 16);
  uint64_t data_offset = kiln_rd64(e + 24);
  uint64_t data_size = kiln_rd64(e + 32);
  DLDataType dtype;
  dtype.code = e[40];
  dtype.bits = e[41];
  dtype.lanes = kiln_rd16(e + 42);
  uint32_t reserved = kiln_rd32(e + 44);

  if (name_size == 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS entry %llu (offset %llu) has an "
                              "empty name",
                              what, (kiln_ull)i, where);
  }
  if (name_offset < table_end || !kiln_in_bounds(name_offset, name_size, size)) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS entry %llu (offset %llu): "
                              "name_offset %llu + name_size %u is outside [%llu, %llu) of the "
                              "section",
                              what, (kiln_ull)i, where, (kiln_ull)name_offset, (unsigned)name_size,
                              (kiln_ull)table_end, (kiln_ull)size);
  }
  if (memchr(base + name_offset, 0, name_size) != NULL) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS entry %llu (offset %llu): the name "
                              "contains a NUL byte",
                              what, (kiln_ull)i, where);
  }
  if (ndim_raw > (uint32_t)KILN_ARTIFACT_MAX_NDIM) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS entry %llu (offset %llu): ndim %d "
                              "is outside [0, %d]",
                              what, (kiln_ull)i, where, (int)(int32_t)ndim_raw,
                              KILN_ARTIFACT_MAX_NDIM);
  }
  const uint64_t shape_bytes = 8u * (uint64_t)ndim_raw;
  if (ndim_raw > 0 &&
      (shape_offset < table_end || !kiln_in_bounds(shape_offset, shape_bytes, size))) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS entry %llu (offset %llu): "
                              "shape_offset %llu + %llu bytes is outside [%llu, %llu) of the "
                              "section",
                              what, (kiln_ull)i, where, (kiln_ull)shape_offset,
                              (kiln_ull)shape_bytes, (kiln_ull)table_end, (kiln_ull)size);
  }
  uint64_t elem_bytes = kiln_dtype_bytes(dtype);
  if (elem_bytes == 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS entry %llu (offset %llu): unknown "
                              "dtype code %u bits %u lanes %u",
                              what, (kiln_ull)i, where, (unsigned)dtype.code, (unsigned)dtype.bits,
                              (unsigned)dtype.lanes);
  }
  if (reserved != 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS entry %llu (offset %llu): reserved "
                              "field is 0x%x, expected 0",
                              what, (kiln_ull)i, where, (unsigned)reserved);
  }
  uint64_t elements = 1;
  int overflow = 0;
  int empty = 0;
  for (uint32_t d = 0; d < ndim_raw; ++d) {
    uint64_t dim = kiln_rd64(base + shape_offset + 8u * d);
    if (dim > (uint64_t)INT64_MAX) {
      int64_t negative;
      memcpy(&negative, &dim, sizeof(negative));
      return kiln_status_create(KILN_DATA_LOSS,
                                "%s: corrupted artifact: PARAMS entry %llu (offset %llu): "
                                "dimension %u is negative (%lld)",
                                what, (kiln_ull)i, where, (unsigned)d, (long long)negative);
    }
    if (dim == 0) {
      empty = 1;
    } else if (elements > UINT64_MAX / dim) {
      overflow = 1;
    } else {
      elements *= dim;
    }
  }
  uint64_t bytes = 0;
  if (!empty) {
    if (overflow || elements > UINT64_MAX / elem_bytes) {
      return kiln_status_create(KILN_DATA_LOSS,
                                "%s: corrupted artifact: PARAMS entry %llu (offset %llu): the "
                                "shape's byte size overflows",
                                what, (kiln_ull)i, where);
    }
    bytes = elements * elem_bytes;
  }
  if (bytes != data_size) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS entry %llu (offset %llu): "
                              "data_size %llu, but the shape and dtype make %llu bytes",
                              what, (kiln_ull)i, where, (kiln_ull)data_size, (kiln_ull)bytes);
  }
  if (data_offset % KILN_ARTIFACT_ALIGNMENT != 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS entry %llu (offset %llu): "
                              "data_offset %llu is not a multiple of %u",
                              what, (kiln_ull)i, where, (kiln_ull)data_offset,
                              (unsigned)KILN_ARTIFACT_ALIGNMENT);
  }
  if ((data_size != 0 && data_offset < table_end) ||
      !kiln_in_bounds(data_offset, data_size, size)) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS entry %llu (offset %llu): "
                              "data_offset %llu + data_size %llu is outside [%llu, %llu) of the "
                              "section",
                              what, (kiln_ull)i, where, (kiln_ull)data_offset,
                              (kiln_ull)data_size, (kiln_ull)table_end, (kiln_ull)size);
  }
  return NULL;
}

static KilnStatus* kiln_check_params(const uint8_t* base, uint64_t size, uint64_t section_offset,
                                     const char* what, uint64_t* num_params) {
  *num_params = 0;
  if (size < 8u) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS section (offset %llu) is %llu "
                              "bytes, too small for its count",
                              what, (kiln_ull)section_offset, (kiln_ull)size);
  }
  uint64_t count = kiln_rd64(base);
  if (count > (size - 8u) / KILN_PARAM_ENTRY_SIZE) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: PARAMS count %llu (offset %llu) needs more "
                              "than the section's %llu bytes",
                              what, (kiln_ull)count, (kiln_ull)section_offset, (kiln_ull)size);
  }
  const uint64_t table_end = 8u + count * KILN_PARAM_ENTRY_SIZE;
  for (uint64_t i = 0; i < count; ++i) {
    KilnStatus* st = kiln_check_param_entry(base, size, section_offset, table_end, i, what);
    if (st != NULL) return st;
  }
  /* Unique names: sort (name, index) pairs and compare neighbours. */
  if (count > 1) {
    if (count > SIZE_MAX / sizeof(KilnNameRef)) {
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: too many parameters (%llu)", what,
                                (kiln_ull)count);
    }
    KilnNameRef* refs = (KilnNameRef*)malloc((size_t)count * sizeof(KilnNameRef));
    if (refs == NULL) {
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                                "%s: out of memory checking %llu parameter names", what,
                                (kiln_ull)count);
    }
    for (uint64_t i = 0; i < count; ++i) {
      const uint8_t* e = base + 8u + i * KILN_PARAM_ENTRY_SIZE;
      refs[i].name = base + kiln_rd64(e);
      refs[i].size = kiln_rd32(e + 8);
      refs[i].index = i;
    }
    qsort(refs, (size_t)count, sizeof(KilnNameRef), kiln_name_ref_compare);
    for (uint64_t i = 1; i < count; ++i) {
      if (refs[i].size == refs[i - 1].size &&
          memcmp(refs[i].name, refs[i - 1].name, refs[i].size) == 0) {
        int shown = refs[i].size > 200u ? 200 : (int)refs[i].size;
        KilnStatus* st = kiln_status_create(
            KILN_DATA_LOSS,
            "%s: corrupted artifact: PARAMS entries %llu and %llu have the same name '%.*s'",
            what, (kiln_ull)refs[i - 1].index, (kiln_ull)refs[i].index, shown,
            (const char*)refs[i].name);
        free(refs);
        return st;
      }
    }
    free(refs);
  }
  *num_params = count;
  return NULL;
}

void kiln_blob_param(const KilnBlobView* view, uint64_t index, KilnBlobParam* out) {
  memset(out, 0, sizeof(*out));
  if (view == NULL || view->params == NULL || index >= view->num_params) return;
  const uint8_t* base = view->params;
  const uint8_t* e = base + 8u + index * KILN_PARAM_ENTRY_SIZE;
  out->name = (const char*)(base + kiln_rd64(e));
  out->name_size = kiln_rd32(e + 8);
  out->ndim = (int32_t)kiln_rd32(e + 12); /* validated: 0..32 */
  uint64_t shape_offset = kiln_rd64(e + 16);
  for (int32_t d = 0; d < out->ndim; ++d) {
    out->shape[d] = (int64_t)kiln_rd64(base + shape_offset + 8u * (uint64_t)d);
  }
  out->data = base + kiln_rd64(e + 24);
  out->data_size = kiln_rd64(e + 32);
  out->dtype.code = e[40];
  out->dtype.bits = e[41];
  out->dtype.lanes = kiln_rd16(e + 42);
}

/* ------------------------------------------------------------------ files */

KilnStatus* kiln_artifact_validate_image(const uint8_t* image, uint64_t image_size,
                                         const char* path, uint64_t* blob_offset,
                                         KilnBlobView* out) {
  if (blob_offset != NULL) *blob_offset = 0;
  if (out != NULL) memset(out, 0, sizeof(*out));
  if (path == NULL) path = "artifact";
  if ((image == NULL && image_size != 0) || blob_offset == NULL || out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "kiln_artifact_validate_image: NULL image or output");
  }
  /* 1. ELF and the symbol. */
  uint64_t offset = 0;
  uint64_t sym_size = 0;
  KilnStatus* st =
      kiln_elf_find_symbol(image, image_size, KILN_ARTIFACT_SYMBOL, &offset, &sym_size);
  if (st != NULL) {
    KilnStatus* wrapped = kiln_status_create(kiln_status_code(st), "%s: not a kiln artifact: %s",
                                             path, kiln_status_message(st));
    kiln_status_free(st);
    return wrapped;
  }
  const uint8_t* blob = image + offset;
  if (sym_size < KILN_HEADER_SIZE ||
      memcmp(blob, KILN_ARTIFACT_MAGIC, KILN_ARTIFACT_MAGIC_SIZE) != 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: not a kiln artifact: symbol '%s' (file offset %llu, %llu "
                              "bytes) does not hold a blob header with the \"KILNART\" magic",
                              path, KILN_ARTIFACT_SYMBOL, (kiln_ull)offset, (kiln_ull)sym_size);
  }
  if (offset % KILN_ARTIFACT_ALIGNMENT != 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: the blob (file offset %llu) is not "
                              "%u-byte aligned",
                              path, (kiln_ull)offset, (unsigned)KILN_ARTIFACT_ALIGNMENT);
  }
  /* 2. Header. */
  KilnArtifactHeader h;
  st = kiln_check_header(blob, sym_size, path, "the size of symbol '" KILN_ARTIFACT_SYMBOL "'", &h);
  if (st != NULL) return st;
  if (h.file_size == 0) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted artifact: file_size (offset 24) is 0: the artifact "
                              "was never sealed (kiln_artifact_seal_file)",
                              path);
  }
  if (h.file_size > image_size) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: truncated: the file is %llu bytes, its artifact header says "
                              "%llu",
                              path, (kiln_ull)image_size, (kiln_ull)h.file_size);
  }
  if (h.file_size < image_size) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: trailing bytes: the file is %llu bytes, its artifact header "
                              "says %llu",
                              path, (kiln_ull)image_size, (kiln_ull)h.file_size);
  }
  /* 3. The whole-file checksum. */
  uint64_t computed = kiln_checksum64(image, image_size, offset + KILN_ARTIFACT_CHECKSUM_OFFSET);
  if (computed != h.checksum) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: corrupted: checksum mismatch (stored 0x%016llx, computed "
                              "0x%016llx)",
                              path, (kiln_ull)h.checksum, (kiln_ull)computed);
  }
  /* 4. Sections and PARAMS. */
  st = kiln_blob_parse(blob, sym_size, 0, path, out);
  if (st != NULL) return st;
  *blob_offset = offset;
  return NULL;
}
