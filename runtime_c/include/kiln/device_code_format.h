/* File: runtime_c/include/kiln/device_code_format.h
 *
 * The device code of an artifact compiled for a GPU: section
 * KILN_SECTION_DEVICE_CODE of the blob, present exactly in format version 3
 * (docs/artifact.md, "DEVICE_CODE" is the specification; this header is its
 * C form). Written by the compiler (codegen_cuda/device_code.h), validated
 * field by field by the runtime (runtime_c/device_code.c) before anything is
 * handed to the driver.
 *
 * All integers little-endian. Offsets are from the section start; every table
 * starts at a multiple of 8.
 *
 *   KilnDeviceCodeHeader                    80 bytes
 *   KilnDeviceImage[num_images]             at images_offset  (PTX, cubin, CUDA C)
 *   KilnDeviceKernel[num_kernels]           at kernels_offset (one per GRAPH func_name;
 *                                           KilnDeviceKernelV3 from version 3)
 *   KilnDeviceParam[num_params]             at params_offset  (every kernel's, in order)
 *   strings                                 at strings_offset (kernel names)
 *   int64 launch words (versions 2 .. 4)    at launch_offset  (symbolic launches,
 *                                           version 4's tensor-map specs)
 *   image bytes                             at each image's offset
 *
 * Every image holds every kernel (one module per artifact). A kernel's
 * parameters are its buffers in the GRAPH node's (or the VM call's)
 * argument order (inputs, then outputs), each a device pointer; the launch
 * is grid x block threads with no dynamic shared memory (before version 3).
 *
 * Version 2 adds kernels whose grid and trailing scalar parameters depend on
 * their arguments' shapes (a GPU VM artifact's kernels with symbolic shapes):
 * such a kernel's `launch` is 1 + the index of its launch program in the
 * launch words, all int64:
 *
 *   V                        shape variables (1 .. KILN_DEVICE_MAX_LAUNCH_VARS)
 *   V x (param, dim)         variable k is dim `dim` of buffer parameter `param`
 *   per buffer parameter:    ndim (0 .. 32), then ndim extents: >= 0 static,
 *                            -1 - k variable k, or KILN_DEVICE_DIM_EXPR, L
 *                            and L ops: an expression of the variables
 *   3 x (L, L ops)           the grid's x, y, z as postfix expressions of the
 *                            variables (L 1 .. KILN_DEVICE_MAX_LAUNCH_OPS)
 *
 * An op is operand * 16 + opcode (KILN_DEVICE_OP_*; an arithmetic shift by 4
 * gives the operand back). The kernel takes the V variables' values as
 * `long long` parameters after its buffers; its grid fields hold 1 and its
 * block is static. A grid of 0 blocks in some dimension is no launch.
 * A writer emits version 1 when no kernel's launch is symbolic.
 *
 * Version 3 adds dynamic shared memory (`extern __shared__`): its kernel
 * records are KilnDeviceKernelV3, 56 bytes, the 48 of versions 1 and 2
 * followed by the bytes every launch of the kernel requests
 * (cuLaunchKernel's sharedMemBytes) and a reserved 0. CUDA allows at most
 * 48 KiB of static shared memory per block; a kernel that needs more (a
 * Hopper GEMM tile's 96 .. 192 KiB) takes it as dynamic shared memory, which
 * above 48 KiB the runtime opts into per function
 * (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) after checking the
 * device's opt-in limit. Static + dynamic <= KILN_DEVICE_MAX_DYNAMIC_SHARED.
 * Symbolic launches are as in version 2. A writer emits the lowest version
 * that holds its kernels: 3 only when some kernel has dynamic shared memory.
 *
 * Version 4 adds TMA tensor maps (Hopper's cp.async.bulk.tensor): a
 * parameter of kind KILN_DEVICE_PARAM_TENSOR_MAP is a CUtensorMap (128
 * bytes, 64-byte aligned) passed by value, which the runtime encodes at
 * launch (cuTensorMapEncodeTiled) for the device address of one of the
 * kernel's buffer parameters. A kernel's tensor maps follow its buffers;
 * such a kernel has a static launch (launch 0). The parameter's dtype is
 * the element type (its buffer's), its flags 0, and its `spec` 1 + the
 * index of its spec in the launch words, all int64:
 *
 *   buffer                   the buffer parameter it views (an earlier
 *                            parameter of the kernel, of the same dtype)
 *   rank                     1 .. KILN_DEVICE_MAX_TENSOR_MAP_RANK
 *   rank x dim               elements, innermost first, 1 .. 2^32
 *   (rank - 1) x stride      bytes from one index of dims 1.. to the next,
 *                            multiples of 16, 16 .. 2^40 - 16
 *   rank x box               elements one copy moves, 1 .. 256; box[0]
 *                            times the element size a multiple of 16
 *   swizzle                  the shared layout's swizzle span in bytes: 0,
 *                            32, 64 or 128; when nonzero box[0] times the
 *                            element size is at most the span
 *
 * Kernel records are KilnDeviceKernelV3 as in version 3. A writer emits 4
 * only when some kernel has a tensor map.
 */
#ifndef KILN_DEVICE_CODE_FORMAT_H_
#define KILN_DEVICE_CODE_FORMAT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "KILNDEV" + NUL. */
#define KILN_DEVICE_CODE_MAGIC "KILNDEV"
#define KILN_DEVICE_CODE_MAGIC_SIZE 8
#define KILN_DEVICE_CODE_VERSION 4u
#define KILN_DEVICE_CODE_HEADER_SIZE 80u

/* Limits the loader enforces. */
#define KILN_DEVICE_MAX_KERNELS (1u << 20)
#define KILN_DEVICE_MAX_PARAMS_PER_KERNEL 1024u
#define KILN_DEVICE_MAX_IMAGES 16u
#define KILN_DEVICE_MAX_NAME 1024u
/* CUDA's limits for any architecture kiln compiles for (sm_80 and newer). */
#define KILN_DEVICE_MAX_BLOCK_THREADS 1024u
#define KILN_DEVICE_MAX_BLOCK_Z 64u
#define KILN_DEVICE_MAX_GRID_X 2147483647u
#define KILN_DEVICE_MAX_GRID_YZ 65535u
#define KILN_DEVICE_MAX_STATIC_SHARED (48u * 1024u)
/* Version 3: a block's shared memory, static + dynamic, at most Hopper's
 * per-block opt-in maximum (227 KiB); a device with a smaller opt-in limit
 * refuses the kernel when a session loads it. */
#define KILN_DEVICE_MAX_DYNAMIC_SHARED (227u * 1024u)
/* Version 2's symbolic launches. */
#define KILN_DEVICE_MAX_LAUNCH_VARS 64u
#define KILN_DEVICE_MAX_LAUNCH_OPS 256u
#define KILN_DEVICE_MAX_LAUNCH_WORDS (1u << 24)
#define KILN_DEVICE_DIM_EXPR INT64_MIN
/* Version 4's tensor maps (cuTensorMapEncodeTiled's limits). */
#define KILN_DEVICE_MAX_TENSOR_MAP_RANK 5u
#define KILN_DEVICE_MAX_TENSOR_MAP_BOX 256u

enum {
  KILN_DEVICE_OP_CONST = 1,    /* push the operand */
  KILN_DEVICE_OP_VAR = 2,      /* push variable `operand` */
  KILN_DEVICE_OP_ADD = 3,      /* pop b, a; push a + b (likewise below) */
  KILN_DEVICE_OP_SUB = 4,
  KILN_DEVICE_OP_MUL = 5,
  KILN_DEVICE_OP_FLOORDIV = 6, /* b > 0 */
  KILN_DEVICE_OP_FLOORMOD = 7, /* b > 0 */
  KILN_DEVICE_OP_MIN = 8,
  KILN_DEVICE_OP_MAX = 9
};

enum {
  KILN_DEVICE_IMAGE_PTX = 1,   /* PTX text for compute_<arch>, NUL-terminated */
  KILN_DEVICE_IMAGE_CUBIN = 2, /* an ELF cubin for sm_<arch> */
  KILN_DEVICE_IMAGE_SOURCE = 3 /* the CUDA C the PTX came from, NUL-terminated (never loaded) */
};

enum {
  KILN_DEVICE_PARAM_BUFFER = 1,    /* a device pointer to the tensor's first element */
  KILN_DEVICE_PARAM_TENSOR_MAP = 2 /* version 4: a CUtensorMap of a buffer parameter, by value */
};

/* KilnDeviceParam.flags */
#define KILN_DEVICE_PARAM_READ_ONLY 1u

typedef struct {
  char magic[KILN_DEVICE_CODE_MAGIC_SIZE]; /* KILN_DEVICE_CODE_MAGIC */
  uint32_t version;                        /* KILN_DEVICE_CODE_VERSION */
  uint32_t device_type;                    /* DLPack: kDLCUDA (2) */
  uint32_t num_images;
  uint32_t num_kernels;
  uint32_t num_params;  /* entries of the parameter table (all kernels) */
  uint32_t num_launch_words; /* versions 2 .. 4: int64 words at launch_offset; 0 in version 1 */
  uint64_t images_offset;
  uint64_t kernels_offset;
  uint64_t params_offset;
  uint64_t strings_offset;
  uint64_t strings_size;
  uint64_t launch_offset; /* versions 2 .. 4: the launch words (a multiple of 8); 0 in version 1 */
} KilnDeviceCodeHeader;

typedef struct {
  uint32_t kind;    /* KILN_DEVICE_IMAGE_* */
  uint32_t arch;    /* 90: compute_90 PTX, sm_90 cubin (0 for SOURCE) */
  uint64_t offset;  /* from the section start, a multiple of 8 */
  uint64_t size;    /* bytes (text images: the terminating NUL included) */
  uint64_t reserved;/* 0 */
} KilnDeviceImage;

typedef struct {
  uint32_t name_offset;  /* into strings: the entry's name in every image */
  uint32_t name_size;
  uint32_t grid[3];      /* blocks, each >= 1 */
  uint32_t block[3];     /* threads per block, each >= 1, product <= 1024 */
  uint32_t shared_bytes; /* static __shared__ bytes per block (informational) */
  uint32_t first_param;  /* into the parameter table */
  uint32_t num_params;
  uint32_t launch;       /* version 2: 0 static, else 1 + its program's first launch word; 0 in version 1 */
} KilnDeviceKernel;

/* A kernel record of versions 3 and 4 (56 bytes; the table's stride). */
typedef struct {
  KilnDeviceKernel base;         /* as in versions 1 and 2 */
  uint32_t dynamic_shared_bytes; /* extern __shared__ bytes every launch requests, per block */
  uint32_t reserved;             /* 0 */
} KilnDeviceKernelV3;

typedef struct {
  uint8_t kind;       /* KILN_DEVICE_PARAM_* */
  uint8_t dtype_code; /* DLPack type code of the buffer's elements; 6 = bool */
  uint8_t dtype_bits;
  uint8_t flags;      /* KILN_DEVICE_PARAM_READ_ONLY (a buffer's; 0 for a tensor map) */
  uint32_t spec;      /* a tensor map: 1 + its spec's first launch word; 0 for a buffer */
} KilnDeviceParam;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_DEVICE_CODE_FORMAT_H_ */
