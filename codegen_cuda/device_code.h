// File: codegen_cuda/device_code.h
//
// The DEVICE_CODE section of a GPU artifact (runtime_c/include/kiln/
// device_code_format.h; docs/artifact.md "DEVICE_CODE"): a compiled CUDA
// module's images (PTX, cubin when ptxas ran, the CUDA C) and, per kernel,
// its launch dims and parameters, encoded for the runtime, which validates
// every field before using any.
//
//   KILN_ASSIGN_OR_RETURN(CudaModule m, CompileModuleCuda(fused, target));
//   KILN_ASSIGN_OR_RETURN(std::string section, EncodeDeviceCode(m, target));
//
// Only static launches: a kernel whose launch dims or parameters depend on
// symbolic shapes (the VM's) is refused, naming it.
#ifndef KILN_CODEGEN_CUDA_DEVICE_CODE_H_
#define KILN_CODEGEN_CUDA_DEVICE_CODE_H_

#include <string>

#include "absl/status/statusor.h"
#include "codegen_cuda/compile.h"
#include "codegen_cuda/nvrtc.h"

namespace kiln::codegen_cuda {

absl::StatusOr<std::string> EncodeDeviceCode(const CudaModule& module, const CudaTarget& target);

}  // namespace kiln::codegen_cuda

#endif  // KILN_CODEGEN_CUDA_DEVICE_CODE_H_
