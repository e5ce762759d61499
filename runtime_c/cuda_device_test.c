/* File: runtime_c/cuda_device_test.c
 *
 * The CUDA device without a GPU: a missing driver library is a clear
 * KILN_NOT_FOUND status (checked always, through $KILN_CUDA_DRIVER naming a
 * library that does not exist), argument errors are statuses, NULL handles
 * are fine to close. With libcuda.so.1 and a device (a lent GPU machine:
 * tests/cuda/device_check.sh) it also copies a buffer there and back and
 * launches kiln's generated fused_add (testdata/cuda_fused_add.ptx), checking
 * every output, and a kernel with 100 KiB of dynamic shared memory (refused
 * by the driver until kiln_cuda_function_set_max_dynamic_shared opts it in);
 * otherwise that part prints why it is skipped.
 *
 *   cuda_device_test [PTX]     (default: the testdata file beside the test)
 */
#include "runtime_c/cuda_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_c/c_test_util.h"

static int missing_driver(void) {
  /* The driver is loaded once per process: this check runs in a child. */
  int count = -1;
  KilnStatus* st = kiln_cuda_device_count(&count);
  CHECK(count == 0);
  CHECK_STATUS(st, KILN_NOT_FOUND, "no CUDA driver: libkiln_no_such_driver.so.1 not found");
  KilnCudaDevice* d = (KilnCudaDevice*)1;
  CHECK_STATUS(kiln_cuda_device_open(0, &d), KILN_NOT_FOUND, "no CUDA driver");
  CHECK(d == NULL);
  return failures != 0;
}

static char* read_text(const char* path) {
  size_t size = 0;
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char* buf = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) {
      size = (size_t)n;
      buf = (char*)malloc(size + 1);
      if (buf != NULL && fread(buf, 1, size, f) == size) {
        buf[size] = '\0';
      } else {
        free(buf);
        buf = NULL;
      }
    }
  }
  fclose(f);
  return buf;
}

/* Each thread copies its float through the block's dynamic shared memory,
 * `offset` bytes in (extern __shared__; checked by ptxas for sm_80 and
 * sm_90). */
static const char kDynamicSharedPtx[] =
    ".version 7.0\n.target sm_80\n.address_size 64\n"
    ".extern .shared .align 16 .b8 kiln_dynamic_smem[];\n"
    ".visible .entry kiln_dynamic_shared_copy(.param .u64 in, .param .u64 out, .param .u32 offset)\n"
    "{\n"
    "  .reg .b32 %r<6>;\n  .reg .b64 %rd<8>;\n  .reg .f32 %f<2>;\n"
    "  ld.param.u64 %rd1, [in];\n  ld.param.u64 %rd2, [out];\n  ld.param.u32 %r1, [offset];\n"
    "  cvta.to.global.u64 %rd3, %rd1;\n  cvta.to.global.u64 %rd4, %rd2;\n"
    "  mov.u32 %r2, %tid.x;\n  mul.wide.u32 %rd5, %r2, 4;\n  add.s64 %rd6, %rd3, %rd5;\n"
    "  ld.global.f32 %f1, [%rd6];\n  shl.b32 %r3, %r2, 2;\n  add.s32 %r4, %r3, %r1;\n"
    "  mov.u32 %r5, kiln_dynamic_smem;\n  add.s32 %r5, %r5, %r4;\n"
    "  st.shared.f32 [%r5], %f1;\n  bar.sync 0;\n  ld.shared.f32 %f1, [%r5];\n"
    "  add.s64 %rd7, %rd4, %rd5;\n  st.global.f32 [%rd7], %f1;\n  ret;\n"
    "}\n";

/* More than the 48 KiB of shared memory a function may use by default:
 * the launch fails until the function opts in, then runs; more than the
 * device's opt-in limit is refused by the driver. */
static void dynamic_shared(KilnCudaDevice* dev, const KilnCudaDeviceInfo* info) {
  enum { kThreads = 96, kBytes = 100 * 1024 };
  printf("shared memory per block (opt-in): %d bytes\n", info->max_shared_per_block_optin);
  CHECK(info->max_shared_per_block_optin >= 48 * 1024);
  if (info->max_shared_per_block_optin < kBytes) {
    printf("SKIP (dynamic shared memory): the device allows less than %d bytes\n", kBytes);
    return;
  }
  const char* name = "kiln_dynamic_shared_copy";
  KilnCudaModule* mod = NULL;
  KilnCudaFunction* fn = NULL;
  if (!CHECK_OK(kiln_cuda_module_load(dev, kDynamicSharedPtx, sizeof kDynamicSharedPtx, &mod))) return;
  if (!CHECK_OK(kiln_cuda_module_function(mod, name, &fn))) {
    kiln_cuda_module_unload(mod);
    return;
  }
  float x[kThreads], out[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    x[i] = 0.25f * (float)i - 7.0f;
    out[i] = 0.0f;
  }
  uint64_t dx = 0, dout = 0;
  CHECK_OK(kiln_cuda_malloc(dev, sizeof x, &dx));
  CHECK_OK(kiln_cuda_malloc(dev, sizeof out, &dout));
  CHECK_OK(kiln_cuda_copy_to_device(dev, dx, x, sizeof x));
  unsigned offset = kBytes - kThreads * 4; /* the last bytes of the block's */
  void* args[] = {&dx, &dout, &offset};
  const unsigned grid[3] = {1, 1, 1}, block[3] = {kThreads, 1, 1};
  KilnStatus* st = kiln_cuda_launch_async(dev, fn, name, grid, block, kBytes, args);
  CHECK(st != NULL); /* not opted in: CUDA_ERROR_INVALID_VALUE */
  if (st != NULL) printf("without the opt-in: %s\n", kiln_status_message(st));
  kiln_status_free(st);
  CHECK_STATUS(kiln_cuda_function_set_max_dynamic_shared(
                   dev, fn, name, (unsigned)info->max_shared_per_block_optin + 1),
               KILN_INTERNAL, "cuFuncSetAttribute(kiln_dynamic_shared_copy, MAX_DYNAMIC_SHARED_SIZE_BYTES");
  CHECK_OK(kiln_cuda_function_set_max_dynamic_shared(dev, fn, name, kBytes));
  CHECK_OK(kiln_cuda_launch_async(dev, fn, name, grid, block, kBytes, args));
  CHECK_OK(kiln_cuda_synchronize(dev, name));
  CHECK_OK(kiln_cuda_copy_to_host(dev, out, dout, sizeof out));
  int wrong = 0;
  for (int i = 0; i < kThreads; ++i) wrong += out[i] != x[i];
  CHECK(wrong == 0);
  printf("%d bytes of dynamic shared memory on the device: %d of %d outputs wrong\n", kBytes, wrong,
         kThreads);
  CHECK_OK(kiln_cuda_free(dev, dx));
  CHECK_OK(kiln_cuda_free(dev, dout));
  kiln_cuda_module_unload(mod);
}

static void on_device(KilnCudaDevice* dev, const char* ptx_path) {
  KilnCudaDeviceInfo info;
  KilnStatus* st = kiln_cuda_device_info(dev, &info);
  CHECK(st == NULL);
  kiln_status_free(st);
  printf("device 0: %s, sm_%d%d, %d SMs, %.1f GiB, driver %d\n", info.name, info.compute_major,
         info.compute_minor, info.multiprocessors, (double)info.total_memory / (1 << 30),
         info.driver_version);
  enum { kN = 90 };
  float x[kN], y[kN], out[kN];
  for (int i = 0; i < kN; ++i) {
    x[i] = (float)i * 0.5f;
    y[i] = 3.0f - (float)i;
    out[i] = -1.0f;
  }
  uint64_t dx = 0, dy = 0, dout = 0;
  CHECK((st = kiln_cuda_malloc(dev, sizeof x, &dx)) == NULL);
  if (st) fprintf(stderr, "%s\n", kiln_status_message(st));
  kiln_status_free(st);
  CHECK(kiln_cuda_malloc(dev, sizeof y, &dy) == NULL);
  CHECK(kiln_cuda_malloc(dev, sizeof out, &dout) == NULL);
  CHECK(kiln_cuda_copy_to_device(dev, dx, x, sizeof x) == NULL);
  CHECK(kiln_cuda_copy_to_device(dev, dy, y, sizeof y) == NULL);
  /* Round trip first. */
  float back[kN];
  CHECK(kiln_cuda_copy_to_host(dev, back, dx, sizeof back) == NULL);
  CHECK(memcmp(back, x, sizeof x) == 0);
  /* Too much memory is a status. */
  uint64_t huge = 0;
  CHECK_STATUS(kiln_cuda_malloc(dev, (size_t)1 << 50, &huge), KILN_RESOURCE_EXHAUSTED, "cuMemAlloc");
  char* ptx = read_text(ptx_path);
  if (ptx == NULL) {
    fprintf(stderr, "cannot read %s\n", ptx_path);
    ++failures;
  } else {
    KilnCudaModule* mod = NULL;
    st = kiln_cuda_module_load(dev, ptx, strlen(ptx) + 1, &mod);
    CHECK(st == NULL);
    if (st) fprintf(stderr, "%s\n", kiln_status_message(st));
    kiln_status_free(st);
    if (mod != NULL) {
      void* args[] = {&dx, &dy, &dout};
      const unsigned grid[3] = {1, 1, 1}, block[3] = {96, 1, 1};
      st = kiln_cuda_launch(dev, mod, "fused_add", grid, block, 0, args);
      CHECK(st == NULL);
      if (st) fprintf(stderr, "%s\n", kiln_status_message(st));
      kiln_status_free(st);
      CHECK(kiln_cuda_copy_to_host(dev, out, dout, sizeof out) == NULL);
      int wrong = 0;
      for (int i = 0; i < kN; ++i) wrong += out[i] != x[i] + y[i];
      CHECK(wrong == 0);
      printf("fused_add on the device: %d of %d outputs wrong\n", wrong, kN);
      CHECK_STATUS(kiln_cuda_launch(dev, mod, "no_such_kernel", grid, block, 0, args),
                   KILN_NOT_FOUND, "cuModuleGetFunction(no_such_kernel)");
      kiln_cuda_module_unload(mod);
    }
    free(ptx);
  }
  KilnCudaModule* bad = NULL;
  CHECK_STATUS(kiln_cuda_module_load(dev, "not ptx", 7, &bad), KILN_INVALID_ARGUMENT,
               "neither a cubin");
  CHECK(kiln_cuda_free(dev, dx) == NULL);
  CHECK(kiln_cuda_free(dev, dy) == NULL);
  CHECK(kiln_cuda_free(dev, dout) == NULL);
  dynamic_shared(dev, &info);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--missing-driver") == 0) return missing_driver();
  /* 1. No driver: the status says so (in a child, with another library name). */
  {
    char cmd[4096];
    (void)snprintf(cmd, sizeof cmd, "KILN_CUDA_DRIVER=libkiln_no_such_driver.so.1 '%s' --missing-driver",
                   argv[0]);
    int rc = system(cmd);
    CHECK(rc == 0);
  }
  /* 2. Arguments. */
  CHECK_STATUS(kiln_cuda_device_count(NULL), KILN_INVALID_ARGUMENT, "out_count is NULL");
  CHECK_STATUS(kiln_cuda_device_open(0, NULL), KILN_INVALID_ARGUMENT, "out_device is NULL");
  kiln_cuda_device_close(NULL);
  kiln_cuda_module_unload(NULL);
  /* 3. This machine's driver and devices. */
  int count = 0;
  KilnStatus* st = kiln_cuda_device_count(&count);
  if (st != NULL) {
    printf("SKIP (device part): %s\n", kiln_status_message(st));
    CHECK(kiln_status_code(st) == KILN_NOT_FOUND || kiln_status_code(st) == KILN_INTERNAL);
    kiln_status_free(st);
    return failures != 0;
  }
  KilnCudaDevice* dev = NULL;
  st = kiln_cuda_device_open(0, &dev);
  if (count == 0) {
    CHECK_STATUS(st, KILN_NOT_FOUND, "no CUDA device 0 (the driver sees 0 devices)");
    printf("SKIP (device part): the CUDA driver sees no device\n");
    return failures != 0;
  }
  CHECK(st == NULL);
  kiln_status_free(st);
  CHECK_STATUS(kiln_cuda_device_open(count, &dev), KILN_NOT_FOUND, "no CUDA device");
  st = kiln_cuda_device_open(0, &dev);
  if (dev != NULL) {
    on_device(dev, argc > 1 ? argv[1] : "runtime_c/testdata/cuda_fused_add.ptx");
    kiln_cuda_device_close(dev);
  }
  kiln_status_free(st);
  printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures != 0;
}
