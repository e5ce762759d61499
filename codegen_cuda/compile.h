// File: codegen_cuda/compile.h
//
// A fused module (the graph pipeline through FuseOps has run, types checked)
// to CUDA: every primitive function lowered for the GPU (lowering/lower.h with
// LowerOptions::gpu, the default GPU schedule), one `__global__` kernel each
// (codegen_cuda.h), the whole module one CUDA C translation unit, compiled by
// NVRTC to PTX and, when ptxas is found and `assemble` is set, to a cubin.
//
//   KILN_ASSIGN_OR_RETURN(CudaTarget t, ParseCudaTarget("cuda -arch=sm_90"));
//   KILN_ASSIGN_OR_RETURN(CudaModule m, CompileModuleCuda(fused, t, {}));
//   m.ptx, m.cubin, m.kernels[i].grid / .block (launch dims)
#ifndef KILN_CODEGEN_CUDA_COMPILE_H_
#define KILN_CODEGEN_CUDA_COMPILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen_cuda/codegen_cuda.h"
#include "codegen_cuda/nvrtc.h"
#include "ir/module.h"
#include "lowering/lower.h"

namespace kiln::codegen_cuda {

struct CudaCompileOptions {
  bool compile_ptx = true;  // run NVRTC (else stop at the source)
  bool assemble = true;     // run ptxas when it is found (else leave cubin empty)
};

struct CudaModule {
  lowering::LoweredModule lowered;
  std::vector<CudaKernel> kernels;  // lowered.kernels[i] -> kernels[i]
  std::string source;               // CUDA C of every kernel
  std::string ptx;                  // empty when compile_ptx is off
  std::string cubin;                // empty without ptxas
  std::string ptxas_log;
};

absl::StatusOr<CudaModule> CompileModuleCuda(const Module& fused, const CudaTarget& target,
                                             const CudaCompileOptions& options = {});

}  // namespace kiln::codegen_cuda

#endif  // KILN_CODEGEN_CUDA_COMPILE_H_
