/* File: runtime_c/cuda_device.h  (internal: not in libkiln_runtime.so yet)
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
 * another library to open (tests use it to check the missing-driver path).
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

typedef struct KilnCudaDevice KilnCudaDevice;
typedef struct KilnCudaModule KilnCudaModule;

typedef struct KilnCudaDeviceInfo {
  char name[256];
  int compute_major, compute_minor; /* 9, 0 for an H200 */
  int multiprocessors;
  int max_threads_per_block;
  uint64_t total_memory; /* bytes */
  int driver_version;    /* 13000 for CUDA 13.0 */
} KilnCudaDeviceInfo;

/* Loads the driver once per process and calls cuInit. *out_count = devices. */
KilnStatus* kiln_cuda_device_count(int* out_count);

/* Opens device `ordinal` (its primary context). */
KilnStatus* kiln_cuda_device_open(int ordinal, KilnCudaDevice** out_device);
void kiln_cuda_device_close(KilnCudaDevice* device); /* NULL is fine */
KilnStatus* kiln_cuda_device_info(const KilnCudaDevice* device, KilnCudaDeviceInfo* out_info);

KilnStatus* kiln_cuda_malloc(KilnCudaDevice* device, size_t bytes, uint64_t* out_ptr);
KilnStatus* kiln_cuda_free(KilnCudaDevice* device, uint64_t ptr);
KilnStatus* kiln_cuda_copy_to_device(KilnCudaDevice* device, uint64_t dst, const void* src,
                                     size_t bytes);
KilnStatus* kiln_cuda_copy_to_host(KilnCudaDevice* device, void* dst, uint64_t src, size_t bytes);

/* `image`: NUL-terminated PTX, or a cubin (ELF) of `size` bytes. */
KilnStatus* kiln_cuda_module_load(KilnCudaDevice* device, const void* image, size_t size,
                                  KilnCudaModule** out_module);
void kiln_cuda_module_unload(KilnCudaModule* module); /* NULL is fine */

/* Launches kernel `name` of `module` and waits for it. `args[i]` points to
 * the value of parameter i (a device pointer's uint64_t, a long long). */
KilnStatus* kiln_cuda_launch(KilnCudaDevice* device, KilnCudaModule* module, const char* name,
                             const unsigned grid[3], const unsigned block[3],
                             unsigned shared_bytes, void** args);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_C_CUDA_DEVICE_H_ */
