// File: codegen_cuda/nvrtc.h
//
// CUDA C -> PTX with NVRTC (linked from the CUDA toolkit when kiln was built
// with one: @cuda//:nvrtc, KILN_HAVE_CUDA), and PTX -> cubin with the
// toolkit's `ptxas` (a separate program, found at run time), which is also
// what validates the PTX for a real architecture.
//
//   KILN_ASSIGN_OR_RETURN(CudaTarget t, ParseCudaTarget("cuda -arch=sm_90"));
//   KILN_ASSIGN_OR_RETURN(std::string ptx, CompileToPtx(source, "model.cu", t));
//   KILN_ASSIGN_OR_RETURN(PtxasResult r, AssemblePtx(ptx, t));   // r.cubin, r.log
//
// Without the toolkit both return kUnavailable with a message saying what is
// missing; NvrtcAvailable() / FindPtxas() let tests skip first.
#ifndef KILN_CODEGEN_CUDA_NVRTC_H_
#define KILN_CODEGEN_CUDA_NVRTC_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lowering/strategy/target.h"

namespace kiln::codegen_cuda {

// `cuda [-arch=sm_XY] [-tf32]` (default sm_80). Architectures: sm_80, sm_86, sm_87,
// sm_89, sm_90 (the kernels' bfloat16 conversion, cvt.rn.bf16.f32, needs
// sm_80; CUDA 13 no longer compiles for Volta and older), and sm_90a:
// Hopper's architecture-specific features (warpgroup MMA, wgmma), whose PTX
// (compute_90a) and cubin run on sm_90 GPUs only, not on later ones.
struct CudaTarget {
  std::string arch = "sm_80";
  int sm = 80;
  bool arch_specific = false;  // the "a" of sm_90a
  // `-tf32`: float32 GEMM tiles on tensor cores with TF32 inputs (rounded to
  // 10-bit mantissas, float32 accumulation), as cuBLAS/cuDNN's TF32 mode.
  bool tf32 = false;
  // `-wgmma-n=128|256` (sm_90a only): the widest wgmma GEMM tile's columns,
  // 256 (the wide 128 x 256 tile where a GEMM has the columns) or 128 (the
  // 128 x 128 one always; for comparing the two).
  int wgmma_n = 256;
  // `-wgmma-swizzle=0|128` (sm_90a only): the wide tile's shared layout,
  // unswizzled (0, the default) or with the 128-byte swizzle.
  int wgmma_swizzle = 0;
  // `-wgmma-tma` (sm_90a only): the wide tile's stages filled by the Tensor
  // Memory Accelerator (cp.async.bulk.tensor through tensor maps the runtime
  // encodes at launch, mbarrier completion) in the 128-byte swizzled layout,
  // instead of every thread's cp.async.
  bool wgmma_tma = false;
  // `-wgmma-ws` (sm_90a only): that TMA form warp-specialized: a third
  // warpgroup (the block 16 x 24 threads) issues the copies while the two
  // that compute only wait on the stages (implies -wgmma-tma).
  bool wgmma_ws = false;

  // Whether GEMM tiles use Hopper's wgmma (codegen_cuda/tensor_core.h).
  bool wgmma() const { return arch_specific && sm == 90; }

  lowering::GpuTarget gpu() const;  // what the schedules need
  std::string ToString() const;     // "cuda -arch=sm_80"
};
absl::StatusOr<CudaTarget> ParseCudaTarget(absl::string_view target);

// Whether this build has NVRTC; the version ("13.0") or "" when not.
bool NvrtcAvailable();
std::string NvrtcVersion();

// PTX for `target` (virtual architecture compute_XY). The error carries
// NVRTC's log.
absl::StatusOr<std::string> CompileToPtx(const std::string& source, absl::string_view name,
                                         const CudaTarget& target);

// The ptxas to use: $KILN_PTXAS, else /usr/local/cuda/bin/ptxas, else `ptxas`
// on PATH; "" when none is executable.
std::string FindPtxas();

struct PtxasResult {
  std::string cubin;  // the ELF for the real architecture
  std::string log;    // ptxas -v: registers, spills, shared memory per kernel
};
// Runs ptxas -arch=sm_XY -v on `ptx`; an error carries ptxas's messages.
absl::StatusOr<PtxasResult> AssemblePtx(const std::string& ptx, const CudaTarget& target);

}  // namespace kiln::codegen_cuda

#endif  // KILN_CODEGEN_CUDA_NVRTC_H_
