// File: tests/cuda/cuda_case.h
//
// The prologue the CUDA emulation tests share: a text-IR program, its
// interpreter results on random inputs, the pass pipeline at an opt level,
// and the module compiled for `cuda -arch=sm_90` or options.target (PTX too when NVRTC is
// there). The tests then check the kernels and run them on the emulator.
//
//   KILN_ASSIGN_OR_RETURN(CudaCase c, CompileCudaCase(text, "gemm", {.opt_level = 3}));
//   KILN_ASSIGN_OR_RETURN(auto emu, CudaEmulator::Build(c.fused, c.cuda));
#ifndef KILN_TESTS_CUDA_CUDA_CASE_H_
#define KILN_TESTS_CUDA_CUDA_CASE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen_cuda/compile.h"
#include "interpreter/value.h"
#include "ir/module.h"

namespace kiln::testing {

struct CudaCaseOptions {
  int opt_level = 0;
  uint64_t seed = 5;  // RandomInputs(seed, lo, hi)
  double lo = -1;
  double hi = 1;
  const char* target = "cuda -arch=sm_90";
};

struct CudaCase {
  std::vector<interp::Value> inputs;
  interp::Value expected;  // the interpreter's results on `inputs`
  Module fused;            // after the pipeline (what CompileModuleCuda compiled)
  codegen_cuda::CudaModule cuda;
};

// `name` names the source in parse errors.
absl::StatusOr<CudaCase> CompileCudaCase(const std::string& text, const std::string& name,
                                         const CudaCaseOptions& options);

}  // namespace kiln::testing

#endif  // KILN_TESTS_CUDA_CUDA_CASE_H_
