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
// A kernel whose grid depends on symbolic shapes (a GPU VM artifact's) gets
// a launch program (DEVICE_CODE version 2): its shape variables read from
// its arguments' extents, every argument's extents to check, the grid as
// expressions of the variables (an extent such as N * 12 too). One whose
// variables are not all some argument's extent, or whose extents or grid
// are other expressions, is refused, naming it (EncodeLaunch tells first).
// A kernel with dynamic shared memory (CudaKernel::dynamic_shared_bytes > 0:
// a block's shared memory above CUDA's 48 KiB static limit) makes the
// section version 3 (56-byte kernel records holding those bytes); the
// encoder otherwise emits version 2 when a launch is symbolic, else 1, so
// older runtimes still read what they can run. A kernel with TMA tensor
// maps (CudaKernel::tensor_maps, a static launch) makes it version 4: each
// map a parameter after the buffers whose spec (buffer, rank, dims,
// strides, box, swizzle) is in the launch words; the runtime encodes it for
// the buffer's device address at launch.
#ifndef KILN_CODEGEN_CUDA_DEVICE_CODE_H_
#define KILN_CODEGEN_CUDA_DEVICE_CODE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen_cuda/compile.h"
#include "codegen_cuda/nvrtc.h"

namespace kiln::codegen_cuda {

absl::StatusOr<std::string> EncodeDeviceCode(const CudaModule& module, const CudaTarget& target);

// The launch words of kernel `k` (lowered as `f`): empty for a static launch.
absl::StatusOr<std::vector<int64_t>> EncodeLaunch(const CudaKernel& k, const tir::PrimFunc& f);

}  // namespace kiln::codegen_cuda

#endif  // KILN_CODEGEN_CUDA_DEVICE_CODE_H_
