/* File: runtime_c/cuda_device.h  (internal to runtime_c: hidden in libkiln_runtime.so;
 * sessions on cuda:N use it, runtime_c/cuda_session.c)
 *
 * The CUDA device of the C runtime: the CUDA driver API opened at run time
 * with dlopen("libcuda.so.1") (no link-time dependency, no CUDA header: the
 * few types and entry points used are declared here), so programs using it
 * still load and run on machines without an NVIDIA driver, where every call
 * returns a status saying so:
 *
 *   KilnCudaDevice* dev = NULL;
 *   KilnStatus* st = kiln_cuda_device_open(0, &dev);
 *   // no driver: KILN_NOT_FOUND "no CUDA driver: libcuda.so.1 not found (...)"
 *   // no device: KILN_NOT_FOUND "no CUDA device 0 (the driver sees 0 devices)"
 *   st = kiln_cuda_malloc(dev, bytes, &ptr);
 *   st = kiln_cuda_copy_to_device(dev, ptr, host, bytes);
 *   st = kiln_cuda_module_load(dev, ptx_or_cubin, &mod);        // PTX text or cubin ELF
 *   st = kiln_cuda_launch(dev, mod, "fused_add", grid, block, args, n);  // synchronizes
 *   kiln_cuda_device_close(dev);
 *
 * Errors name the call, the kernel where there is one, and the driver's own
 * error name and text ("cuLaunchKernel(fused_add): CUDA_ERROR_LAUNCH_FAILED:
 * unspecified launch failure"); nothing aborts. $KILN_CUDA_DRIVER names
 * another library to open instead of libcuda.so.1, read once per process
 * (tests use it: a missing library for the no-driver path, and
 * tests/cuda/fake_driver.c, which runs kernels on the host). Like
 * LD_PRELOAD, it loads code into the process: only the process's own
 * environment sets it; it is never read from an artifact.
 * A device handle is for one thread at a time (it makes its primary context
 * current on the calling thread at every call).
 */
#ifndef KILN_RUNTIME_C_CUDA_DEVICE_H_
#define KILN_RUNTIME_C_CUDA_DEVICE_H_

#include <stddef.h>
#include <stdint.h>

#include "kiln/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_CUDA_HIDDEN __attribute__((visibility("hidden")))
#else
#define KILN_CUDA_HIDDEN
#endif

typedef struct KilnCudaDevice KilnCudaDevice;
typedef struct KilnCudaFunction KilnCudaFunction;
typedef struct KilnCudaModule KilnCudaModule;

typedef struct KilnCudaDeviceInfo {
  char name[256];
  int compute_major, compute_minor; /* 9, 0 for an H200 */
  int multiprocessors;
  int max_threads_per_block;
  int max_shared_per_block_optin; /* bytes a block may opt into (232448 on an H100) */
  uint64_t total_memory; /* bytes */
  int driver_version;    /* 13000 for CUDA 13.0 */
} KilnCudaDeviceInfo;

/* Loads the driver once per process and calls cuInit. *out_count = devices. */
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_device_count(int* out_count);

/* Opens device `ordinal` (its primary context). */
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_device_open(int ordinal, KilnCudaDevice** out_device);
KILN_CUDA_HIDDEN void kiln_cuda_device_close(KilnCudaDevice* device); /* NULL is fine */
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_device_info(const KilnCudaDevice* device, KilnCudaDeviceInfo* out_info);

KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_malloc(KilnCudaDevice* device, size_t bytes, uint64_t* out_ptr);
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_free(KilnCudaDevice* device, uint64_t ptr);
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_copy_to_device(KilnCudaDevice* device, uint64_t dst, const void* src,
                                     size_t bytes);
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_copy_to_host(KilnCudaDevice* device, void* dst, uint64_t src, size_t bytes);

/* `image`: NUL-terminated PTX, or a cubin (ELF) of `size` bytes. */
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_module_load(KilnCudaDevice* device, const void* image, size_t size,
                                  KilnCudaModule** out_module);
KILN_CUDA_HIDDEN void kiln_cuda_module_unload(KilnCudaModule* module); /* NULL is fine */

/* Launches kernel `name` of `module` and waits for it. `args[i]` points to
 * the value of parameter i (a device pointer's uint64_t, a long long). */
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_launch(KilnCudaDevice* device, KilnCudaModule* module, const char* name,
                             const unsigned grid[3], const unsigned block[3],
                             unsigned shared_bytes, void** args);

/* A reference more on `device` (closed when the last is released:
 * kiln_cuda_device_close drops one). Thread-safe. */
KILN_CUDA_HIDDEN void kiln_cuda_device_retain(KilnCudaDevice* device);
KILN_CUDA_HIDDEN int kiln_cuda_device_ordinal(const KilnCudaDevice* device);

/* Device to device, on the same device. */
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_copy_on_device(KilnCudaDevice* device, uint64_t dst,
                                                      uint64_t src, size_t bytes);

/* The entry `name` of `module` (KILN_NOT_FOUND naming it when the image
 * lacks it); valid while the module is loaded. */
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_module_function(KilnCudaModule* module, const char* name,
                                                       KilnCudaFunction** out_function);
/* Queues a launch of `function` (named `name` in messages) without waiting;
 * kiln_cuda_synchronize waits for every queued launch and reports the first
 * failure. */
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_launch_async(KilnCudaDevice* device,
                                                    KilnCudaFunction* function, const char* name,
                                                    const unsigned grid[3], const unsigned block[3],
                                                    unsigned shared_bytes, void** args);
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_synchronize(KilnCudaDevice* device, const char* what);

/* Lets `function` (named `name` in messages) be launched with up to `bytes`
 * of dynamic shared memory (cuFuncSetAttribute
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): needed before a launch
 * that requests more than 48 KiB; at most the device's
 * max_shared_per_block_optin less the function's static shared memory. */
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_function_set_max_dynamic_shared(KilnCudaDevice* device,
                                                                       KilnCudaFunction* function,
                                                                       const char* name,
                                                                       unsigned bytes);

/* A TMA tensor map's arguments besides the address (cuTensorMapEncodeTiled's;
 * the arrays hold `rank`, rank - 1 and `rank` entries). */
typedef struct KilnCudaTensorMapSpec {
  uint32_t data_type; /* CUtensorMapDataType */
  uint32_t rank;      /* 1 .. 5 */
  const uint64_t* dims;    /* elements, innermost first (cuuint64_t) */
  const uint64_t* strides; /* bytes, of dims 1 .. rank-1 */
  const uint32_t* box;     /* elements (cuuint32_t) */
  uint32_t swizzle;   /* CUtensorMapSwizzle: 0 none, 1 32B, 2 64B, 3 128B */
} KilnCudaTensorMapSpec;

/* Whether the driver (opened if need be) has cuTensorMapEncodeTiled (CUDA
 * 12 and newer); 0 when there is no driver. Thread-safe. */
KILN_CUDA_HIDDEN int kiln_cuda_has_tensor_map_encode(void);

/* Encodes the tensor map of `spec` over device address `address` into `out`
 * (128 bytes, 64-byte aligned): element strides 1, no interleave, L2
 * promotion 256B, out-of-bounds elements zeros. `what` names the parameter in
 * messages. KILN_UNIMPLEMENTED when the driver lacks the call;
 * KILN_INVALID_ARGUMENT naming the address and the CUresult when the driver
 * refuses the arguments (an address not 16-byte aligned). Host-only: no
 * context needed. Thread-safe. */
KILN_CUDA_HIDDEN KilnStatus* kiln_cuda_tensor_map_encode(void* out, const KilnCudaTensorMapSpec* spec,
                                                         uint64_t address, const char* what);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_C_CUDA_DEVICE_H_ */
