// File: tests/cuda/emulate.h
//
// Runs the CUDA C that codegen_cuda generates on the host, without a GPU:
// the module's source is compiled by the host C++ compiler (g++) with the
// definitions of tests/cuda/emulate_host.h (threadIdx/blockIdx as globals,
// __global__ and friends as nothing, the bit-cast intrinsics), and each
// launch runs every block of the grid in turn, the threads of a block as
// cooperative fibers: `__syncthreads()` switches to the next thread of the
// block until all of them meet, warp shuffles meet the lanes of a warp in
// lockstep (emulate_host.h says how). So kernels that stage data through
// `__shared__` memory with barriers, or reduce across a warp, compute what
// a GPU computes, and a wrong index, guard, binding, barrier placement or
// expression in the generated code shows up as a wrong value (or as the
// launch's error: a barrier some threads skip, a deadlock). What it cannot
// see: races that its fixed thread order happens to resolve, NVRTC/ptxas-
// only issues and device math accuracy.
//
//   KILN_ASSIGN_OR_RETURN(auto emu, CudaEmulator::Build(fused, cuda_module));
//   KILN_ASSIGN_OR_RETURN(interp::Value out, emu->Run(inputs));
//
//   // Hand-written CUDA C (a kernel of pointer and scalar parameters):
//   KILN_ASSIGN_OR_RETURN(auto h, HostKernels::Build(src, {{"k", {"float*"}, {1, 1, 1}, {64, 1, 1}}}));
//   void* args[] = {data};
//   KILN_RETURN_IF_ERROR(h->Launch(0, args));
#ifndef KILN_TESTS_CUDA_EMULATE_H_
#define KILN_TESTS_CUDA_EMULATE_H_

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen_cuda/compile.h"
#include "interpreter/value.h"
#include "ir/module.h"

namespace kiln::testing {

struct HostKernel {
  std::string name;  // an extern "C" __global__ function of the source
  // Its parameters' C types; a type ending in '*' is passed as the pointer
  // args[i], any other as *(type*)args[i].
  std::vector<std::string> param_types;
  std::array<unsigned, 3> grid = {1, 1, 1};
  std::array<unsigned, 3> block = {1, 1, 1};
};

class HostKernels {
 public:
  // kUnavailable when g++ cannot be run; kInvalidArgument when it rejects the source.
  static absl::StatusOr<std::unique_ptr<HostKernels>> Build(const std::string& cuda_source,
                                                            std::vector<HostKernel> kernels);
  ~HostKernels();
  // Runs kernel i over its grid; kFailedPrecondition names what went wrong
  // between the threads (a divergent barrier, a deadlock, a bad shuffle mask).
  absl::Status Launch(size_t i, void** args) const;

 private:
  HostKernels() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class CudaEmulator {
 public:
  // `fused` is the module CompileModuleCuda compiled into `m`.
  static absl::StatusOr<std::unique_ptr<CudaEmulator>> Build(const Module& fused,
                                                             codegen_cuda::CudaModule m);
  ~CudaEmulator();
  // Runs main by walking its graph of kernel calls.
  absl::StatusOr<interp::Value> Run(const std::vector<interp::Value>& args) const;

 private:
  CudaEmulator() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The kernels of a GPU artifact (the CUDA C of its DEVICE_CODE section)
// built for the host as tests/cuda/fake_driver.c runs them: per kernel
// kiln_fake_<name>(grid, block, args), every block of the launch in turn, a
// block's threads as fibers. Writes the shared library `so_path` (its
// source at `so_path`.cc). kNotFound for an artifact without CUDA C;
// kUnavailable when g++ cannot be run; kInvalidArgument when it rejects
// the source. A session on cuda:0 then runs the artifact with
// KILN_CUDA_DRIVER naming libkiln_fake_cuda.so and KILN_FAKE_CUDA_KERNELS
// naming `so_path`.
absl::Status BuildFakeDriverKernels(const std::string& artifact_path, const std::string& so_path);

}  // namespace kiln::testing

#endif  // KILN_TESTS_CUDA_EMULATE_H_
