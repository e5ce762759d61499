/* File: runtime_c/cuda_device.c — the CUDA driver API through dlopen. */
#include "runtime_c/cuda_device.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver API's types, as cuda.h declares them (ABI-stable since CUDA 4). */
typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUmodule;
typedef void* CUfunction;
typedef void* CUstream;
typedef unsigned long long CUdeviceptr;

enum {
  kAttrMaxThreadsPerBlock = 1,
  kAttrMultiprocessorCount = 16,
  kAttrComputeMajor = 75,
  kAttrComputeMinor = 76,
  kAttrMaxSharedPerBlockOptin = 97, /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
};

/* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
enum { kFuncAttrMaxDynamicShared = 8 };

typedef struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceTotalMem_v2)(size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)(void);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH_v2)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD_v2)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, CUstream, void**, void**);
  /* CUDA 12 and newer (NULL before: kernels with tensor maps cannot run). */
  CUresult (*cuTensorMapEncodeTiled)(void*, int, uint32_t, void*, const uint64_t*,
                                     const uint64_t*, const uint32_t*, const uint32_t*, int, int,
                                     int, int);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
} Driver;

static Driver g_driver;
static KilnStatusCode g_open_code = KILN_OK;
static char g_open_error[1024];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void set_open_error(KilnStatusCode code, const char* fmt, const char* a, const char* b) {
  g_open_code = code;
  (void)snprintf(g_open_error, sizeof g_open_error, fmt, a, b);
}

/* Error text of a driver result: "CUDA_ERROR_X: text". */
static void describe(CUresult r, char* out, size_t size) {
  const char* name = NULL;
  const char* text = NULL;
  if (g_driver.cuGetErrorName == NULL || g_driver.cuGetErrorName(r, &name) != 0) name = NULL;
  if (g_driver.cuGetErrorString == NULL || g_driver.cuGetErrorString(r, &text) != 0) text = NULL;
  (void)snprintf(out, size, "%s (%d): %s", name ? name : "CUDA error", r, text ? text : "no description");
}

static void open_driver(void) {
  const char* lib = getenv("KILN_CUDA_DRIVER");
  if (lib == NULL || *lib == '\0') lib = "libcuda.so.1";
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char* why = dlerror();
    set_open_error(KILN_NOT_FOUND, "no CUDA driver: %s not found (%s)", lib, why ? why : "dlopen failed");
    return;
  }
#define LOAD(sym)                                                                            \
  do {                                                                                       \
    *(void**)(&g_driver.sym) = dlsym(h, #sym);                                               \
    if (g_driver.sym == NULL) {                                                              \
      set_open_error(KILN_UNIMPLEMENTED, "the CUDA driver %s lacks %s (too old?)", lib, #sym); \
      return;                                                                                \
    }                                                                                        \
  } while (0)
  LOAD(cuGetErrorName);
  LOAD(cuGetErrorString);
  LOAD(cuInit);
  LOAD(cuDriverGetVersion);
  LOAD(cuDeviceGetCount);
  LOAD(cuDeviceGet);
  LOAD(cuDeviceGetName);
  LOAD(cuDeviceGetAttribute);
  LOAD(cuDeviceTotalMem_v2);
  LOAD(cuDevicePrimaryCtxRetain);
  LOAD(cuDevicePrimaryCtxRelease_v2);
  LOAD(cuCtxSetCurrent);
  LOAD(cuCtxSynchronize);
  LOAD(cuMemAlloc_v2);
  LOAD(cuMemFree_v2);
  LOAD(cuMemcpyHtoD_v2);
  LOAD(cuMemcpyDtoH_v2);
  LOAD(cuMemcpyDtoD_v2);
  LOAD(cuModuleLoadData);
  LOAD(cuModuleUnload);
  LOAD(cuModuleGetFunction);
  LOAD(cuFuncSetAttribute); /* CUDA 9 and newer */
  LOAD(cuLaunchKernel);
#undef LOAD
  /* Optional: drivers before CUDA 12 lack it. */
  *(void**)(&g_driver.cuTensorMapEncodeTiled) = dlsym(h, "cuTensorMapEncodeTiled");
  CUresult r = g_driver.cuInit(0);
  if (r != 0) {
    char d[512];
    describe(r, d, sizeof d);
    /* No device (or a driver without a GPU to drive) is "not found". */
    set_open_error(r == 100 ? KILN_NOT_FOUND : KILN_INTERNAL, "cuInit of %s failed: %s", lib, d);
  }
}

static KilnStatus* driver(void) {
  (void)pthread_once(&g_once, open_driver);
  if (g_open_code != KILN_OK) return kiln_status_create(g_open_code, "%s", g_open_error);
  return NULL;
}

static int driver_opened_ok(void) {
  (void)pthread_once(&g_once, open_driver);
  return g_open_code == KILN_OK;
}

static KilnStatus* check(CUresult r, const char* call, const char* what) {
  if (r == 0) return NULL;
  char d[512];
  describe(r, d, sizeof d);
  KilnStatusCode code = KILN_INTERNAL;
  if (r == 2) code = KILN_RESOURCE_EXHAUSTED;               /* CUDA_ERROR_OUT_OF_MEMORY */
  if (r == 209 || r == 218 || r == 222) code = KILN_UNIMPLEMENTED; /* no binary / PTX too new */
  if (r == 500) code = KILN_NOT_FOUND;                      /* CUDA_ERROR_NOT_FOUND */
  return kiln_status_create(code, "%s%s%s%s: %s", call, what ? "(" : "", what ? what : "",
                            what ? ")" : "", d);
}

struct KilnCudaDevice {
  CUdevice dev;
  CUcontext ctx;
  int ordinal;
  atomic_int refs;
};

struct KilnCudaModule {
  CUmodule mod;
  KilnCudaDevice* device;
};

KilnStatus* kiln_cuda_device_count(int* out_count) {
  if (out_count == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "out_count is NULL");
  *out_count = 0;
  KilnStatus* st = driver();
  if (st != NULL) return st;
  return check(g_driver.cuDeviceGetCount(out_count), "cuDeviceGetCount", NULL);
}

static KilnStatus* make_current(const KilnCudaDevice* d) {
  if (d == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "device is NULL");
  return check(g_driver.cuCtxSetCurrent(d->ctx), "cuCtxSetCurrent", NULL);
}

KilnStatus* kiln_cuda_device_open(int ordinal, KilnCudaDevice** out_device) {
  if (out_device == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "out_device is NULL");
  *out_device = NULL;
  int count = 0;
  KilnStatus* st = kiln_cuda_device_count(&count);
  if (st != NULL) return st;
  if (ordinal < 0 || ordinal >= count) {
    return kiln_status_create(KILN_NOT_FOUND, "no CUDA device %d (the driver sees %d device%s)",
                              ordinal, count, count == 1 ? "" : "s");
  }
  KilnCudaDevice* d = (KilnCudaDevice*)calloc(1, sizeof *d);
  if (d == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "out of host memory");
  d->ordinal = ordinal;
  atomic_init(&d->refs, 1);
  st = check(g_driver.cuDeviceGet(&d->dev, ordinal), "cuDeviceGet", NULL);
  if (st == NULL) st = check(g_driver.cuDevicePrimaryCtxRetain(&d->ctx, d->dev), "cuDevicePrimaryCtxRetain", NULL);
  if (st != NULL) {
    free(d);
    return st;
  }
  *out_device = d;
  return NULL;
}

void kiln_cuda_device_retain(KilnCudaDevice* device) {
  if (device != NULL) atomic_fetch_add_explicit(&device->refs, 1, memory_order_relaxed);
}

int kiln_cuda_device_ordinal(const KilnCudaDevice* device) { return device ? device->ordinal : -1; }

void kiln_cuda_device_close(KilnCudaDevice* device) {
  if (device == NULL) return;
  if (atomic_fetch_sub_explicit(&device->refs, 1, memory_order_acq_rel) != 1) return;
  (void)g_driver.cuDevicePrimaryCtxRelease_v2(device->dev);
  free(device);
}

KilnStatus* kiln_cuda_device_info(const KilnCudaDevice* device, KilnCudaDeviceInfo* out_info) {
  if (out_info == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "out_info is NULL");
  memset(out_info, 0, sizeof *out_info);
  if (device == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "device is NULL");
  KilnStatus* st = check(g_driver.cuDeviceGetName(out_info->name, (int)sizeof out_info->name, device->dev),
                         "cuDeviceGetName", NULL);
  if (st == NULL) st = check(g_driver.cuDeviceGetAttribute(&out_info->compute_major, kAttrComputeMajor, device->dev), "cuDeviceGetAttribute", "compute major");
  if (st == NULL) st = check(g_driver.cuDeviceGetAttribute(&out_info->compute_minor, kAttrComputeMinor, device->dev), "cuDeviceGetAttribute", "compute minor");
  if (st == NULL) st = check(g_driver.cuDeviceGetAttribute(&out_info->multiprocessors, kAttrMultiprocessorCount, device->dev), "cuDeviceGetAttribute", "multiprocessors");
  if (st == NULL) st = check(g_driver.cuDeviceGetAttribute(&out_info->max_threads_per_block, kAttrMaxThreadsPerBlock, device->dev), "cuDeviceGetAttribute", "threads per block");
  if (st == NULL) st = check(g_driver.cuDeviceGetAttribute(&out_info->max_shared_per_block_optin, kAttrMaxSharedPerBlockOptin, device->dev), "cuDeviceGetAttribute", "shared memory per block (opt-in)");
  size_t mem = 0;
  if (st == NULL) st = check(g_driver.cuDeviceTotalMem_v2(&mem, device->dev), "cuDeviceTotalMem", NULL);
  out_info->total_memory = mem;
  if (st == NULL) st = check(g_driver.cuDriverGetVersion(&out_info->driver_version), "cuDriverGetVersion", NULL);
  return st;
}

KilnStatus* kiln_cuda_malloc(KilnCudaDevice* device, size_t bytes, uint64_t* out_ptr) {
  if (out_ptr == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "out_ptr is NULL");
  *out_ptr = 0;
  KilnStatus* st = make_current(device);
  if (st != NULL) return st;
  CUdeviceptr p = 0;
  char what[64];
  (void)snprintf(what, sizeof what, "%zu bytes", bytes);
  st = check(g_driver.cuMemAlloc_v2(&p, bytes ? bytes : 1), "cuMemAlloc", what);
  if (st == NULL) *out_ptr = p;
  return st;
}

KilnStatus* kiln_cuda_free(KilnCudaDevice* device, uint64_t ptr) {
  if (ptr == 0) return NULL;
  KilnStatus* st = make_current(device);
  if (st != NULL) return st;
  return check(g_driver.cuMemFree_v2(ptr), "cuMemFree", NULL);
}

KilnStatus* kiln_cuda_copy_to_device(KilnCudaDevice* device, uint64_t dst, const void* src,
                                     size_t bytes) {
  if (bytes == 0) return NULL;
  if (src == NULL || dst == 0) return kiln_status_create(KILN_INVALID_ARGUMENT, "copy to device: NULL pointer");
  KilnStatus* st = make_current(device);
  if (st != NULL) return st;
  return check(g_driver.cuMemcpyHtoD_v2(dst, src, bytes), "cuMemcpyHtoD", NULL);
}

KilnStatus* kiln_cuda_copy_to_host(KilnCudaDevice* device, void* dst, uint64_t src, size_t bytes) {
  if (bytes == 0) return NULL;
  if (dst == NULL || src == 0) return kiln_status_create(KILN_INVALID_ARGUMENT, "copy to host: NULL pointer");
  KilnStatus* st = make_current(device);
  if (st != NULL) return st;
  return check(g_driver.cuMemcpyDtoH_v2(dst, src, bytes), "cuMemcpyDtoH", NULL);
}

KilnStatus* kiln_cuda_module_load(KilnCudaDevice* device, const void* image, size_t size,
                                  KilnCudaModule** out_module) {
  if (out_module == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "out_module is NULL");
  *out_module = NULL;
  if (image == NULL || size == 0) return kiln_status_create(KILN_INVALID_ARGUMENT, "empty module image");
  const unsigned char* b = (const unsigned char*)image;
  const int is_elf = size >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
  if (!is_elf && memchr(image, '\0', size) == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "module image is neither a cubin (ELF) nor NUL-terminated PTX");
  }
  KilnStatus* st = make_current(device);
  if (st != NULL) return st;
  KilnCudaModule* m = (KilnCudaModule*)calloc(1, sizeof *m);
  if (m == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "out of host memory");
  st = check(g_driver.cuModuleLoadData(&m->mod, image), "cuModuleLoadData", is_elf ? "cubin" : "PTX");
  if (st != NULL) {
    free(m);
    return st;
  }
  m->device = device;
  *out_module = m;
  return NULL;
}

void kiln_cuda_module_unload(KilnCudaModule* module) {
  if (module == NULL) return;
  if (make_current(module->device) == NULL) (void)g_driver.cuModuleUnload(module->mod);
  free(module);
}

KilnStatus* kiln_cuda_launch(KilnCudaDevice* device, KilnCudaModule* module, const char* name,
                             const unsigned grid[3], const unsigned block[3],
                             unsigned shared_bytes, void** args) {
  if (module == NULL || name == NULL || grid == NULL || block == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "launch: NULL module, name or dims");
  }
  KilnStatus* st = make_current(device);
  if (st != NULL) return st;
  CUfunction f = NULL;
  st = check(g_driver.cuModuleGetFunction(&f, module->mod, name), "cuModuleGetFunction", name);
  if (st != NULL) return st;
  st = check(g_driver.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                     shared_bytes, NULL, args, NULL),
             "cuLaunchKernel", name);
  if (st != NULL) return st;
  return check(g_driver.cuCtxSynchronize(), "cuCtxSynchronize after", name);
}

KilnStatus* kiln_cuda_copy_on_device(KilnCudaDevice* device, uint64_t dst, uint64_t src,
                                     size_t bytes) {
  if (bytes == 0) return NULL;
  if (src == 0 || dst == 0) return kiln_status_create(KILN_INVALID_ARGUMENT, "copy on device: NULL pointer");
  KilnStatus* st = make_current(device);
  if (st != NULL) return st;
  return check(g_driver.cuMemcpyDtoD_v2(dst, src, bytes), "cuMemcpyDtoD", NULL);
}

KilnStatus* kiln_cuda_module_function(KilnCudaModule* module, const char* name,
                                      KilnCudaFunction** out_function) {
  if (out_function == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "out_function is NULL");
  *out_function = NULL;
  if (module == NULL || name == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "module function: NULL module or name");
  }
  KilnStatus* st = make_current(module->device);
  if (st != NULL) return st;
  CUfunction f = NULL;
  st = check(g_driver.cuModuleGetFunction(&f, module->mod, name), "cuModuleGetFunction", name);
  if (st == NULL) *out_function = (KilnCudaFunction*)f;
  return st;
}

KilnStatus* kiln_cuda_launch_async(KilnCudaDevice* device, KilnCudaFunction* function,
                                   const char* name, const unsigned grid[3],
                                   const unsigned block[3], unsigned shared_bytes, void** args) {
  if (function == NULL || grid == NULL || block == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "launch: NULL function or dims");
  }
  KilnStatus* st = make_current(device);
  if (st != NULL) return st;
  return check(g_driver.cuLaunchKernel((CUfunction)function, grid[0], grid[1], grid[2], block[0],
                                       block[1], block[2], shared_bytes, NULL, args, NULL),
               "cuLaunchKernel", name);
}

KilnStatus* kiln_cuda_function_set_max_dynamic_shared(KilnCudaDevice* device,
                                                      KilnCudaFunction* function, const char* name,
                                                      unsigned bytes) {
  if (function == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "set attribute: NULL function");
  if (bytes > 0x7fffffffu) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%u bytes of dynamic shared memory", bytes);
  }
  KilnStatus* st = make_current(device);
  if (st != NULL) return st;
  char what[320];
  (void)snprintf(what, sizeof what, "%.200s, MAX_DYNAMIC_SHARED_SIZE_BYTES %u", name ? name : "?",
                 bytes);
  return check(g_driver.cuFuncSetAttribute((CUfunction)function, kFuncAttrMaxDynamicShared, (int)bytes),
               "cuFuncSetAttribute", what);
}

KilnStatus* kiln_cuda_synchronize(KilnCudaDevice* device, const char* what) {
  KilnStatus* st = make_current(device);
  if (st != NULL) return st;
  return check(g_driver.cuCtxSynchronize(), "cuCtxSynchronize after", what);
}

int kiln_cuda_has_tensor_map_encode(void) {
  return driver_opened_ok() && g_driver.cuTensorMapEncodeTiled != NULL;
}

KilnStatus* kiln_cuda_tensor_map_encode(void* out, const KilnCudaTensorMapSpec* spec,
                                        uint64_t address, const char* what) {
  if (out == NULL || spec == NULL || ((uintptr_t)out & 63u) != 0) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "tensor map: NULL or unaligned output");
  }
  KilnStatus* st = driver();
  if (st != NULL) return st;
  if (g_driver.cuTensorMapEncodeTiled == NULL) {
    return kiln_status_create(KILN_UNIMPLEMENTED,
                              "%s: the CUDA driver lacks cuTensorMapEncodeTiled (CUDA 12 and newer "
                              "have it)",
                              what ? what : "tensor map");
  }
  /* Element strides 1, no interleave, L2 promotion 256B, out-of-bounds
   * elements read as zeros. */
  const uint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = g_driver.cuTensorMapEncodeTiled(
      out, (int)spec->data_type, spec->rank, (void*)(uintptr_t)address, spec->dims, spec->strides,
      spec->box, element_strides, /*interleave=*/0, (int)spec->swizzle, /*l2Promotion=*/3,
      /*oobFill=*/0);
  if (r == 0) return NULL;
  char d[512];
  describe(r, d, sizeof d);
  /* CUDA_ERROR_INVALID_VALUE: the arguments (an unaligned address). */
  return kiln_status_create(r == 1 ? KILN_INVALID_ARGUMENT : KILN_INTERNAL,
                            "cuTensorMapEncodeTiled(%s, address 0x%llx): %s", what ? what : "?",
                            (unsigned long long)address, d);
}
