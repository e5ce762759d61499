/* File: tests/cuda/fake_driver.c
 *
 * A stand-in for libcuda.so.1 for testing sessions on cuda:0 without a GPU:
 * the runtime opens it through $KILN_CUDA_DRIVER (runtime_c/cuda_device.h).
 * It exports the driver entry points the runtime uses, with "device" memory
 * in host memory, and runs a launch by calling the kernel's host build:
 * $KILN_FAKE_CUDA_KERNELS names a shared library (built by the test from the
 * artifact's CUDA C, tests/cuda/cuda_session_test.cc) exporting
 * kiln_fake_<kernel>(grid, block, args), which runs every block and thread
 * of that launch in turn. Knobs: $KILN_FAKE_CUDA_SM (the compute capability,
 * default 90), $KILN_FAKE_CUDA_DEVICES (default 1), $KILN_FAKE_CUDA_MEMORY
 * (bytes one allocation may have at most; more is CUDA_ERROR_OUT_OF_MEMORY),
 * $KILN_FAKE_CUDA_SMEM_OPTIN (the shared memory a block may opt into,
 * attribute 97; default 232448 as on an H100), $KILN_FAKE_CUDA_ALLOC_OFFSET
 * (bytes past a 256-byte boundary every allocation starts; default 0).
 * Dynamic shared memory as CUDA checks it: a function (one per module and
 * name, as the driver's) launches with at most 48 KiB of it unless
 * cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) raised its limit (up to
 * the opt-in limit); a launch asking for more is CUDA_ERROR_INVALID_VALUE.
 * cuTensorMapEncodeTiled writes the fake 128-byte layout of
 * tests/cuda/fake_tensor_map.h (the emulator's TMA copy reads it), refusing
 * what the driver refuses (CUDA_ERROR_INVALID_VALUE: an address not 16-byte
 * aligned, a stride not a multiple of 16, ...), and insists on the
 * arguments kiln always passes (element strides 1, no interleave, L2
 * promotion 256B, zero fill). Built with -DKILN_FAKE_CUDA_NO_TENSOR_MAP
 * (libkiln_fake_cuda_no_tensor_map.so) it lacks the symbol, as drivers
 * before CUDA 12 do: the runtime opens the driver once per process, so a
 * missing symbol is a second library rather than an environment knob.
 * kiln_fake_cuda_stats() tells the test what happened (the last image kind
 * loaded, launches, bytes live, the last launch's dynamic shared memory,
 * the attributes set, the tensor maps encoded). Test-only; never installed. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuda/fake_driver_stats.h"
#include "tests/cuda/fake_tensor_map.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void (*FakeKernel)(const unsigned* grid, const unsigned* block, void** args);

static KilnFakeCudaStats g_stats = {-1, 0, 0, 0, {0, 0, 0}, {0, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0};

/* CUDA's default limit of a function's shared memory per block; the longest
 * kernel name (kiln's KILN_DEVICE_MAX_NAME) and its NUL. */
enum { kDefaultSharedLimit = 48 * 1024 };
#define KILN_FAKE_MAX_NAME 1025

/* A module: the host kernels' library and the functions taken from it. */
typedef struct FakeFunction {
  FakeKernel kernel;
  int max_dynamic_shared; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
  char name[KILN_FAKE_MAX_NAME];
  struct FakeFunction* next;
} FakeFunction;

typedef struct {
  void* library;
  FakeFunction* functions;
} FakeModule;
static int g_context;

KilnFakeCudaStats* kiln_fake_cuda_stats(void) { return &g_stats; }

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? atoi(v) : fallback;
}

CUresult cuGetErrorName(CUresult r, const char** s) {
  *s = r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : r == 500 ? "CUDA_ERROR_NOT_FOUND"
     : r == 100 ? "CUDA_ERROR_NO_DEVICE" : r == 719 ? "CUDA_ERROR_LAUNCH_FAILED"
     : r == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = r == 2 ? "out of memory" : r == 500 ? "named symbol not found"
     : r == 1 ? "invalid argument" : "fake driver error";
  return 0;
}
CUresult cuInit(unsigned flags) { return flags == 0 ? 0 : 1; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int* n) { *n = env_int("KILN_FAKE_CUDA_DEVICES", 1); return 0; }
CUresult cuDeviceGet(int* d, int ordinal) { *d = ordinal; return 0; }
CUresult cuDeviceGetName(char* name, int len, int dev) {
  snprintf(name, (size_t)len, "kiln fake GPU %d (host)", dev);
  return 0;
}
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
  (void)dev;
  const int sm = env_int("KILN_FAKE_CUDA_SM", 90);
  switch (attr) {
    case 1: *v = 1024; return 0;      /* max threads per block */
    case 16: *v = 4; return 0;        /* multiprocessors */
    case 75: *v = sm / 10; return 0;  /* compute major */
    case 76: *v = sm % 10; return 0;  /* compute minor */
    case 97: *v = env_int("KILN_FAKE_CUDA_SMEM_OPTIN", 232448); return 0; /* shared per block, opt-in */
    default: *v = 0; return 0;
  }
}
CUresult cuDeviceTotalMem_v2(size_t* b, int dev) { (void)dev; *b = (size_t)1 << 30; return 0; }
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) { (void)dev; *ctx = &g_context; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuCtxSetCurrent(void* ctx) { return ctx == &g_context ? 0 : 201; }
CUresult cuCtxSynchronize(void) { return 0; }

/* An allocation starts $KILN_FAKE_CUDA_ALLOC_OFFSET bytes (0 .. 248,
 * default 0) past a 256-byte boundary, the block's own start kept in the 8
 * bytes before it: an offset of 8 gives addresses TMA refuses. */
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  const int limit = env_int("KILN_FAKE_CUDA_MEMORY", 0);
  if (limit > 0 && bytes > (size_t)limit) return 2;
  int offset = env_int("KILN_FAKE_CUDA_ALLOC_OFFSET", 0);
  if (offset < 0 || offset > 248) offset = 0;
  void* m = NULL;
  if (posix_memalign(&m, 256, bytes + 256 + (size_t)offset) != 0) return 2;
  unsigned char* at = (unsigned char*)m + 256 + offset;
  memcpy(at - sizeof m, &m, sizeof m);
  memset(at, 0xcd, bytes); /* not zero: a kernel reading memory nobody wrote shows */
  *p = (CUdeviceptr)(uintptr_t)at;
  g_stats.live_allocations += 1;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  void* m = NULL;
  memcpy(&m, (unsigned char*)(uintptr_t)p - sizeof m, sizeof m);
  free(m);
  g_stats.live_allocations -= 1;
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) { memcpy((void*)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t n) { memcpy(d, (const void*)(uintptr_t)s, n); return 0; }
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  memmove((void*)(uintptr_t)d, (const void*)(uintptr_t)s, n);
  return 0;
}

CUresult cuModuleLoadData(void** mod, const void* image) {
  const unsigned char* b = (const unsigned char*)image;
  const int cubin = b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
  if (!cubin && strstr((const char*)image, ".version") == NULL) return 218; /* invalid PTX */
  const char* path = getenv("KILN_FAKE_CUDA_KERNELS");
  if (path == NULL) return 500;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) return 500;
  FakeModule* m = (FakeModule*)calloc(1, sizeof *m);
  if (m == NULL) {
    dlclose(h);
    return 2;
  }
  m->library = h;
  g_stats.last_image_is_cubin = cubin;
  g_stats.modules_loaded += 1;
  *mod = m;
  return 0;
}
CUresult cuModuleUnload(void* mod) {
  FakeModule* m = (FakeModule*)mod;
  if (m == NULL) return 400; /* CUDA_ERROR_INVALID_HANDLE */
  for (FakeFunction* f = m->functions; f != NULL;) {
    FakeFunction* next = f->next;
    free(f);
    f = next;
  }
  dlclose(m->library);
  free(m);
  return 0;
}
/* The module's function `name` (the same handle for the same name). */
CUresult cuModuleGetFunction(void** out, void* mod, const char* name) {
  FakeModule* m = (FakeModule*)mod;
  *out = NULL;
  if (m == NULL || name == NULL || strlen(name) >= sizeof(((FakeFunction*)0)->name)) return 1;
  for (FakeFunction* f = m->functions; f != NULL; f = f->next) {
    if (strcmp(f->name, name) == 0) {
      *out = f;
      return 0;
    }
  }
  char sym[1200];
  snprintf(sym, sizeof sym, "kiln_fake_%s", name);
  void* k = dlsym(m->library, sym);
  if (k == NULL) return 500;
  FakeFunction* f = (FakeFunction*)calloc(1, sizeof *f);
  if (f == NULL) return 2;
  memcpy(&f->kernel, &k, sizeof f->kernel);
  f->max_dynamic_shared = kDefaultSharedLimit;
  snprintf(f->name, sizeof f->name, "%s", name);
  f->next = m->functions;
  m->functions = f;
  *out = f;
  return 0;
}
/* Only MAX_DYNAMIC_SHARED_SIZE_BYTES (8), up to the opt-in limit: the one
 * attribute the runtime sets. */
CUresult cuFuncSetAttribute(void* func, int attr, int value) {
  FakeFunction* f = (FakeFunction*)func;
  if (f == NULL) return 400; /* CUDA_ERROR_INVALID_HANDLE */
  if (attr != 8 || value < 0 || value > env_int("KILN_FAKE_CUDA_SMEM_OPTIN", 232448)) return 1;
  f->max_dynamic_shared = value;
  g_stats.max_dynamic_shared_set = value;
  g_stats.attributes_set += 1;
  return 0;
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void* stream, void** args, void** extra) {
  (void)stream;
  FakeFunction* fn = (FakeFunction*)f;
  if (extra != NULL || fn == NULL) return 1;
  if (shared > (unsigned)fn->max_dynamic_shared) {
    g_stats.launches_refused += 1;
    return 1; /* CUDA_ERROR_INVALID_VALUE, as CUDA without the attribute */
  }
  g_stats.last_shared_bytes = shared;
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  memcpy(g_stats.last_grid, grid, sizeof grid);
  memcpy(g_stats.last_block, block, sizeof block);
  fn->kernel(grid, block, args);
  g_stats.launches += 1;
  return 0;
}

#ifndef KILN_FAKE_CUDA_NO_TENSOR_MAP
/* The fake layout (tests/cuda/fake_tensor_map.h); 1 CUDA_ERROR_INVALID_VALUE
 * on arguments the driver refuses, or that kiln never passes. */
CUresult cuTensorMapEncodeTiled(void* map, int data_type, uint32_t rank, void* address,
                                const uint64_t* dims, const uint64_t* strides,
                                const uint32_t* box, const uint32_t* element_strides,
                                int interleave, int swizzle, int l2_promotion, int oob_fill) {
  if (data_type < 0 || interleave < 0 || swizzle < 0 || l2_promotion != 3 || oob_fill != 0 ||
      element_strides == NULL ||
      kiln_fake_tensor_map_encode(map, (unsigned)data_type, rank, address, dims, strides, box,
                                  element_strides, (unsigned)interleave, (unsigned)swizzle) != 0) {
    g_stats.tensor_maps_refused += 1;
    return 1;
  }
  g_stats.tensor_maps_encoded += 1;
  g_stats.last_tensor_map_address = (unsigned long long)(uintptr_t)address;
  g_stats.last_tensor_map_data_type = data_type;
  return 0;
}
#endif
