// CUDA smoke test: NVRTC compiles a trivial kernel to PTX. No GPU is needed.
// Skipped when the machine has no CUDA toolkit (@cuda then has no KILN_HAVE_CUDA).
#include <string>
#include <vector>

#include "gtest/gtest.h"

#ifdef KILN_HAVE_CUDA
#include <nvrtc.h>
#endif

namespace {

TEST(CudaSmoke, NvrtcCompilesKernelToPtx) {
#ifndef KILN_HAVE_CUDA
  GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda";
#else
  const char* src = R"(
    extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = a * x[i] + y[i];
    })";
  int major = 0, minor = 0;
  ASSERT_EQ(nvrtcVersion(&major, &minor), NVRTC_SUCCESS);
  EXPECT_GE(major, 11);
  nvrtcProgram prog;
  ASSERT_EQ(nvrtcCreateProgram(&prog, src, "axpy.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  const char* opts[] = {"--gpu-architecture=compute_90"};
  nvrtcResult rc = nvrtcCompileProgram(prog, 1, opts);
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  ASSERT_EQ(rc, NVRTC_SUCCESS) << log;
  size_t ptx_size = 0;
  ASSERT_EQ(nvrtcGetPTXSize(prog, &ptx_size), NVRTC_SUCCESS);
  std::string ptx(ptx_size, '\0');
  ASSERT_EQ(nvrtcGetPTX(prog, ptx.data()), NVRTC_SUCCESS);
  EXPECT_NE(ptx.find(".entry axpy"), std::string::npos) << ptx;
  nvrtcDestroyProgram(&prog);
#endif
}

}  // namespace
