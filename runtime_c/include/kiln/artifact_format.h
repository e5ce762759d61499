/* File: runtime_c/include/kiln/artifact_format.h
 *
 * The binary layout of the artifact blob (docs/artifact.md is the
 * specification; this header is its C form). Shared by the writer (the
 * compiler, through kiln/artifact_writer.h) and the loader (kiln/runtime.h).
 * All integers little-endian; offsets from the blob start.
 */
#ifndef KILN_ARTIFACT_FORMAT_H_
#define KILN_ARTIFACT_FORMAT_H_

#include <stdint.h>

#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "KILNART" + NUL. */
#define KILN_ARTIFACT_MAGIC "KILNART"
#define KILN_ARTIFACT_MAGIC_SIZE 8
/* The version of an artifact run by the graph executor (GRAPH section). */
#define KILN_ARTIFACT_FORMAT_VERSION 1u
/* The version of an artifact run by the VM (a VM section instead of GRAPH).
 * A runtime that knows only version 1 refuses a VM artifact as "made by a
 * newer kiln". */
#define KILN_ARTIFACT_FORMAT_VERSION_VM 2u
/* The version of an artifact whose kernels run on a GPU: the graph executor's
 * GRAPH plus a DEVICE_CODE section (kiln/device_code_format.h) holding the
 * kernels; the .so holds no kernels. */
#define KILN_ARTIFACT_FORMAT_VERSION_DEVICE 3u
/* The version of an artifact run by the VM whose fused kernels run on a GPU:
 * META, VM, PARAMS and DEVICE_CODE (no GRAPH). The VM's kernels named in
 * DEVICE_CODE are launched on the device, the others (shape functions,
 * kernels kiln could not compile for the GPU) are host functions of the .so
 * (docs/vm.md, "On a GPU"). Also the newest version this runtime reads. */
#define KILN_ARTIFACT_FORMAT_VERSION_DEVICE_VM 4u
/* The exported data symbol of the .so that holds the blob. */
#define KILN_ARTIFACT_SYMBOL "kiln_artifact"
/* Alignment of the blob, of every section and of every parameter's data. */
#define KILN_ARTIFACT_ALIGNMENT 64u
#define KILN_ARTIFACT_MAX_SECTIONS 64u
#define KILN_ARTIFACT_MAX_NDIM 32

enum {
  KILN_SECTION_META = 1,        /* JSON object: producer, target, names */
  KILN_SECTION_GRAPH = 2,       /* JSON: TVM graph-executor schema */
  KILN_SECTION_PARAMS = 3,      /* binary: KilnArtifactParam table + data */
  KILN_SECTION_DEVICE_CODE = 4, /* binary: GPU kernels (kiln/device_code_format.h) */
  KILN_SECTION_VM = 5           /* binary: the VM program (kiln/vm_format.h) */
};

typedef struct {
  char magic[KILN_ARTIFACT_MAGIC_SIZE]; /* KILN_ARTIFACT_MAGIC */
  uint32_t format_version;             /* KILN_ARTIFACT_FORMAT_VERSION */
  uint32_t header_size;                /* sizeof(KilnArtifactHeader) == 64 */
  uint64_t blob_size;                  /* header included */
  uint64_t file_size;                  /* whole .so; 0 for a bare blob */
  uint64_t checksum;                   /* kiln_checksum64, see docs/artifact.md */
  uint32_t num_sections;
  uint32_t flags;                      /* 0 */
  uint8_t reserved[16];                /* 0 */
} KilnArtifactHeader;

typedef struct {
  uint32_t kind;   /* KILN_SECTION_* */
  uint32_t flags;  /* 0 */
  uint64_t offset; /* multiple of KILN_ARTIFACT_ALIGNMENT */
  uint64_t size;
} KilnArtifactSection;

/* PARAMS: u64 count, then count of these, then names/shapes/data. Offsets are
 * from the PARAMS section start. */
typedef struct {
  uint64_t name_offset;
  uint32_t name_size;
  int32_t ndim;
  uint64_t shape_offset; /* ndim int64 values */
  uint64_t data_offset;  /* multiple of KILN_ARTIFACT_ALIGNMENT */
  uint64_t data_size;
  uint8_t dtype_code;    /* DLDataTypeCode; 6 = bool */
  uint8_t dtype_bits;
  uint16_t dtype_lanes;
  uint32_t reserved;
} KilnArtifactParam;

/* Offset of KilnArtifactHeader.checksum inside the header. */
#define KILN_ARTIFACT_CHECKSUM_OFFSET 32u

/* FNV-1a over 64-bit little-endian words (a final partial word zero-padded),
 * then one round with `size`. The 8 bytes at [skip_offset, skip_offset + 8)
 * are read as zero (pass UINT64_MAX to skip nothing). */
uint64_t kiln_checksum64(const void* data, uint64_t size, uint64_t skip_offset);

/* Locates an exported symbol in an ELF64 little-endian image held in memory
 * (the whole file's bytes): on success *offset is the file offset of the
 * symbol's bytes and *size its st_size. Every header, table and string is
 * bounds-checked; a malformed image gives KILN_DATA_LOSS, a missing symbol
 * KILN_NOT_FOUND. Used by the loader too. */
KilnStatus* kiln_elf_find_symbol(const uint8_t* image, uint64_t image_size, const char* name,
                                 uint64_t* offset, uint64_t* size);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_ARTIFACT_FORMAT_H_ */
