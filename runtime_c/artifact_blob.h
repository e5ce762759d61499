/* File: runtime_c/artifact_blob.h  (internal to runtime_c)
 *
 * Validating and reading an artifact blob without trusting it
 * (docs/artifact.md, "What the loader checks"). Shared by the loader
 * (loader.c), the writer's self-check and the tests. Nothing here touches the
 * JSON; nothing here dlopens.
 */
#ifndef KILN_RUNTIME_C_ARTIFACT_BLOB_H_
#define KILN_RUNTIME_C_ARTIFACT_BLOB_H_

#include <stdint.h>

#include <dlpack/dlpack.h>

#include "kiln/artifact_format.h"
#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A validated blob: pointers into the caller's bytes (which must outlive it). */
typedef struct {
  KilnArtifactHeader header;     /* a copy */
  const char* meta;              /* META bytes (not NUL-terminated) */
  uint64_t meta_size;
  const char* graph;             /* GRAPH bytes (not NUL-terminated); NULL for a VM artifact */
  uint64_t graph_size;
  const uint8_t* vm;             /* VM section (format version 2), else NULL */
  uint64_t vm_size;
  const uint8_t* params;         /* PARAMS section start */
  uint64_t params_size;
  uint64_t num_params;           /* validated: every entry is in bounds */
  const uint8_t* device_code;    /* NULL when absent */
  uint64_t device_code_size;
} KilnBlobView;

/* One parameter of a validated blob. */
typedef struct {
  const char* name;              /* into the blob, not NUL-terminated */
  uint32_t name_size;
  DLDataType dtype;
  int32_t ndim;
  int64_t shape[KILN_ARTIFACT_MAX_NDIM];
  const void* data;              /* into the blob: aligned as the blob is + 64 */
  uint64_t data_size;
} KilnBlobParam;

/* Checks a blob of `size` bytes: magic, version (newer -> KILN_UNIMPLEMENTED
 * "made by a newer kiln"), header_size, blob_size <= size, the section table
 * (count <= KILN_ARTIFACT_MAX_SECTIONS, alignment, bounds, no overlap, META,
 * GRAPH and PARAMS exactly once) and every PARAMS entry (name/shape/data in
 * the section, dims >= 0, data_size == prod(shape) * bytes, no overflow,
 * dtype known, names unique). When `verify_checksum` is nonzero and
 * header.file_size == 0, the blob checksum is verified too. `what` names the
 * source in messages (a file path, or "blob"). Errors: KILN_DATA_LOSS naming
 * the field and offset. */
KilnStatus* kiln_blob_parse(const uint8_t* blob, uint64_t size, int verify_checksum,
                            const char* what, KilnBlobView* out);

/* Parameter `index` (< view->num_params) of a validated view. */
void kiln_blob_param(const KilnBlobView* view, uint64_t index, KilnBlobParam* out);

/* Validates a whole artifact file held in memory (steps 1-4 of
 * docs/artifact.md): ELF symbol lookup (kiln_elf_find_symbol), header,
 * file_size == image_size (else "truncated"/"trailing bytes"), the whole-file
 * checksum, then kiln_blob_parse. *blob_offset receives the file offset of the
 * blob. `path` is used in messages. */
KilnStatus* kiln_artifact_validate_image(const uint8_t* image, uint64_t image_size,
                                         const char* path, uint64_t* blob_offset,
                                         KilnBlobView* out);

/* Bytes per element of a dtype (bits * lanes / 8), 0 if unsupported
 * (bits not a multiple of 8, lanes != 1, unknown code). */
uint64_t kiln_dtype_bytes(DLDataType dtype);

/* "float32", "int64", "bool", "bfloat16", ... into buf (>= 16 bytes). */
void kiln_dtype_to_string(DLDataType dtype, char* buf, uint64_t buf_size);
/* Parses the same strings; returns 0 on success, -1 for an unknown string. */
int kiln_dtype_from_string(const char* s, DLDataType* out);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_ARTIFACT_BLOB_H_ */
