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
 * (bytes one allocation may have at most; more is CUDA_ERROR_OUT_OF_MEMORY).
 * kiln_fake_cuda_stats() tells the test what happened (the last image kind
 * loaded, launches, bytes live). Test-only; never installed. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef void (*FakeKernel)(const unsigned* grid, const unsigned* block, void** args);

typedef struct {
  int last_image_is_cubin; /* 1 cubin, 0 PTX, -1 none yet */
  int modules_loaded;
  long long launches;
  long long live_allocations;
  unsigned last_grid[3], last_block[3];
} KilnFakeCudaStats;

static KilnFakeCudaStats g_stats = {-1, 0, 0, 0, {0, 0, 0}, {0, 0, 0}};
static int g_context;

KilnFakeCudaStats* kiln_fake_cuda_stats(void) { return &g_stats; }

static int env_int(const char* name, int fallback) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' ? atoi(v) : fallback;
}

CUresult cuGetErrorName(CUresult r, const char** s) {
  *s = r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : r == 500 ? "CUDA_ERROR_NOT_FOUND"
     : r == 100 ? "CUDA_ERROR_NO_DEVICE" : r == 719 ? "CUDA_ERROR_LAUNCH_FAILED" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  *s = r == 2 ? "out of memory" : r == 500 ? "named symbol not found" : "fake driver error";
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
    default: *v = 0; return 0;
  }
}
CUresult cuDeviceTotalMem_v2(size_t* b, int dev) { (void)dev; *b = (size_t)1 << 30; return 0; }
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) { (void)dev; *ctx = &g_context; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuCtxSetCurrent(void* ctx) { return ctx == &g_context ? 0 : 201; }
CUresult cuCtxSynchronize(void) { return 0; }

CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  const int limit = env_int("KILN_FAKE_CUDA_MEMORY", 0);
  if (limit > 0 && bytes > (size_t)limit) return 2;
  void* m = NULL;
  if (posix_memalign(&m, 256, bytes) != 0) return 2;
  memset(m, 0xcd, bytes); /* not zero: a kernel reading memory nobody wrote shows */
  *p = (CUdeviceptr)(uintptr_t)m;
  g_stats.live_allocations += 1;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  free((void*)(uintptr_t)p);
  g_stats.live_allocations -= 1;
  return 0;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) { memcpy((void*)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t n) { memcpy(d, (const void*)(uintptr_t)s, n); return 0; }
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) {
  memmove((void*)(uintptr_t)d, (const void*)(uintptr_t)s, n);
  return 0;
}

/* A module: the host kernels' library. */
CUresult cuModuleLoadData(void** mod, const void* image) {
  const unsigned char* b = (const unsigned char*)image;
  const int cubin = b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
  if (!cubin && strstr((const char*)image, ".version") == NULL) return 218; /* invalid PTX */
  const char* path = getenv("KILN_FAKE_CUDA_KERNELS");
  if (path == NULL) return 500;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) return 500;
  g_stats.last_image_is_cubin = cubin;
  g_stats.modules_loaded += 1;
  *mod = h;
  return 0;
}
CUresult cuModuleUnload(void* mod) {
  dlclose(mod);
  return 0;
}
CUresult cuModuleGetFunction(void** f, void* mod, const char* name) {
  char sym[1200];
  snprintf(sym, sizeof sym, "kiln_fake_%s", name);
  *f = dlsym(mod, sym);
  return *f != NULL ? 0 : 500;
}
CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void* stream, void** args, void** extra) {
  (void)shared;
  (void)stream;
  if (extra != NULL || f == NULL) return 1;
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  memcpy(g_stats.last_grid, grid, sizeof grid);
  memcpy(g_stats.last_block, block, sizeof block);
  FakeKernel k;
  memcpy(&k, &f, sizeof k);
  k(grid, block, args);
  g_stats.launches += 1;
  return 0;
}
