/* File: runtime_c/device_code.h  (internal to runtime_c)
 *
 * Validating the DEVICE_CODE section of a GPU artifact
 * (kiln/device_code_format.h) without trusting it: every table, string and
 * image in bounds and aligned, counts within limits, launch dims within
 * CUDA's, kernel names C identifiers and unique, parameters of known kinds
 * and dtypes, tensor-map specs within cuTensorMapEncodeTiled's rules, exactly one PTX image (NUL-terminated text), at most one cubin
 * (an ELF) and one CUDA C source. The result holds offsets, not pointers:
 * the loader validates one mapping of the file and runs from another.
 *
 *   KilnDeviceCode* dc = NULL;
 *   KilnStatus* st = kiln_device_code_parse(section, size, "model.so", &dc);
 *   ... dc->kernels[i].name, .grid, .block, .params ...
 *   kiln_device_code_free(dc);
 */
#ifndef KILN_RUNTIME_C_DEVICE_CODE_H_
#define KILN_RUNTIME_C_DEVICE_CODE_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#include "kiln/device_code_format.h"
#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_DC_HIDDEN __attribute__((visibility("hidden")))
#else
#define KILN_DC_HIDDEN
#endif

typedef struct {
  DLDataType dtype;
  int read_only;
  int tensor_map; /* KILN_DEVICE_PARAM_TENSOR_MAP (version 4); else a buffer */
  uint32_t spec;  /* a tensor map's 1 + first spec word (in the table); 0 for a buffer */
} KilnDeviceParamDesc;

/* A tensor-map parameter (DEVICE_CODE version 4), validated: what
 * cuTensorMapEncodeTiled takes besides the buffer's address. */
typedef struct {
  uint32_t param;     /* its position among the kernel's parameters */
  uint32_t buffer;    /* the buffer parameter it views (< num_buffers) */
  uint32_t data_type; /* CUtensorMapDataType of the dtype */
  uint32_t rank;      /* 1 .. 5 */
  uint64_t dims[KILN_DEVICE_MAX_TENSOR_MAP_RANK];        /* elements, innermost first */
  uint64_t strides[KILN_DEVICE_MAX_TENSOR_MAP_RANK - 1]; /* bytes, of dims 1 .. rank-1 */
  uint32_t box[KILN_DEVICE_MAX_TENSOR_MAP_RANK];         /* elements */
  uint32_t swizzle;       /* CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B */
  uint32_t swizzle_bytes; /* 0, 32, 64, 128 */
  uint64_t span_bytes;    /* the bytes of the buffer the map covers (from its first) */
} KilnDeviceTensorMapDesc;

typedef struct KilnDeviceKernelDesc {
  const char* name; /* NUL-terminated, owned by the KilnDeviceCode */
  unsigned grid[3];
  unsigned block[3];
  uint32_t shared_bytes;         /* static __shared__ (informational) */
  uint32_t dynamic_shared_bytes; /* version 3: every launch requests this many (0 before) */
  uint32_t num_params;     /* buffers, then tensor maps */
  uint32_t num_buffers;    /* the first num_buffers parameters: device pointers */
  uint32_t num_tensor_maps; /* version 4: the rest (num_params - num_buffers) */
  const KilnDeviceParamDesc* params;
  KilnDeviceTensorMapDesc* tensor_maps; /* num_tensor_maps, owned (NULL when none) */
  /* A symbolic launch (DEVICE_CODE version 2; num_vars 0 for a static one):
   * the variables' (param, dim) pairs, each parameter's ndim and extents in
   * turn, the grid's three postfix programs; all into the KilnDeviceCode's
   * copy of the launch words, validated. kiln_device_launch_dims reads them. */
  uint32_t num_vars;
  const int64_t* vars;
  const int64_t* shapes;
  const int64_t* grid_ops[3];
  uint32_t grid_len[3];
} KilnDeviceKernelDesc;

typedef struct {
  uint32_t arch;   /* 0 when the image is absent */
  uint64_t offset; /* from the section start */
  uint64_t size;
} KilnDeviceImageRef;

typedef struct KilnDeviceCode {
  uint32_t device_type; /* kDLCUDA */
  uint32_t num_kernels;
  KilnDeviceKernelDesc* kernels;
  KilnDeviceParamDesc* params;
  KilnDeviceImageRef ptx;    /* always present */
  KilnDeviceImageRef cubin;  /* size 0 when absent */
  KilnDeviceImageRef source; /* size 0 when absent */
  char* names;               /* storage of the kernels' names */
  int64_t* launch_words;     /* a copy of version 2's launch words */
  char* json;                /* the description kiln_artifact_device_code_json returns */
} KilnDeviceCode;

/* Validates `size` bytes of a DEVICE_CODE section (versions 1 .. 4). `what` names the file in
 * messages. Errors: KILN_DATA_LOSS "<what>: corrupted artifact: DEVICE_CODE
 * ..." naming the field and its offset in the section;
 * KILN_UNIMPLEMENTED for a newer section version or another device type. */
KILN_DC_HIDDEN KilnStatus* kiln_device_code_parse(const uint8_t* section, uint64_t size,
                                                  const char* what, KilnDeviceCode** out);
/* NULL is fine. */
KILN_DC_HIDDEN void kiln_device_code_free(KilnDeviceCode* code);

/* A symbolic kernel's launch for arguments `args` (its buffers, n of them):
 * the variables' values (kd->num_vars into vars) read from the arguments'
 * shapes, every argument checked against its parameter's extents, and the
 * grid. KILN_INVALID_ARGUMENT naming the argument and dim on a mismatch or
 * a grid CUDA cannot launch. *empty is 1 when a grid dim is 0 (nothing to
 * launch). */
KILN_DC_HIDDEN KilnStatus* kiln_device_launch_dims(const KilnDeviceKernelDesc* kd,
                                                   const DLTensor* const* args, uint32_t n,
                                                   int64_t* vars, unsigned grid[3], int* empty);

/* The kernel named `name`, or NULL. */
KILN_DC_HIDDEN const KilnDeviceKernelDesc* kiln_device_code_find(const KilnDeviceCode* code,
                                                                 const char* name);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_DEVICE_CODE_H_ */
