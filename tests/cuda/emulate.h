// File: tests/cuda/emulate.h
//
// Runs the CUDA C that codegen_cuda generates on the host, without a GPU:
// the module's source is compiled by the host C++ compiler (g++) with a few
// definitions (threadIdx/blockIdx as globals, __global__ and friends as
// nothing, the bit-cast intrinsics), and each launch runs every (block,
// thread) of the grid in turn. That is exact for kiln's kernels, which have
// no barrier and no thread reading what another writes (codegen_cuda refuses
// such nests), so a wrong index, guard, binding or expression in the
// generated code shows up as a wrong value. What it cannot see: races,
// NVRTC/ptxas-only issues and device math accuracy.
//
//   KILN_ASSIGN_OR_RETURN(auto emu, CudaEmulator::Build(cuda_module));
//   KILN_ASSIGN_OR_RETURN(interp::Value out, emu->Run(inputs));
#ifndef KILN_TESTS_CUDA_EMULATE_H_
#define KILN_TESTS_CUDA_EMULATE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen_cuda/compile.h"
#include "interpreter/value.h"
#include "ir/module.h"

namespace kiln::testing {

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

}  // namespace kiln::testing

#endif  // KILN_TESTS_CUDA_EMULATE_H_
