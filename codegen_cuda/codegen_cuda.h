// File: codegen_cuda/codegen_cuda.h
//
// Loop IR (tir::PrimFunc, after the loop passes) -> CUDA C: one `__global__`
// function per kernel, `extern "C"` so its PTX entry has the kernel's name.
// No LLVM: the source goes through NVRTC (codegen_cuda/nvrtc.h) to PTX.
//
//   KILN_ASSIGN_OR_RETURN(CudaKernel k, GenerateKernel(func));
//   std::string src = ModuleSource({k});          // prelude + every kernel
//   // k.grid[0] / k.block[0]: blockIdx.x / threadIdx.x extents (launch dims)
//
// What the kernel looks like:
//   - parameters: the PrimFunc's buffers in order (`float* __restrict__`,
//     `const` when the kernel never stores to it), then its symbolic shape
//     variables (`long long`), in the order their buffers name them;
//   - a loop bound to a thread tag ("blockIdx.x", "threadIdx.x", ... from the
//     schedule's `bind`, lowering/te/schedule_cuda.h) is no loop: its
//     variable is the thread index, guarded when the launch is larger than
//     its extent. The launch dims are the largest extent of each tag;
//     `__launch_bounds__` is the block size when it is a constant;
//   - a root statement without any bound loop (a scalar output) runs on thread
//     0 of block 0 only;
//   - float16/bfloat16 values are computed in float and rounded to their type
//     after every operation (as codegen_llvm does), stored as 16-bit words;
//   - "local" temporaries are per-thread arrays, "shared" ones `__shared__`.
//
//   - barriers: `__syncthreads()` where threads exchange data through
//     "shared" memory (codegen_cuda/thread_sync.h), and between root nests
//     that read what an earlier one wrote when the launch is one block; warp
//     shuffles for lane reductions (codegen_cuda/warp_reduce.h).
//   - vector accesses: a loop of 4 under the schedule's "pragma_kiln_vector"
//     attribute whose body is one store `out[base + v] = ...` to a 32-bit
//     parameter (base a provable multiple of 4) becomes one float4/int4/uint4
//     store, and each load in it of a 32-bit parameter at `base' + v` one
//     16-byte load (other loads stay per lane), under a run-time test that
//     those pointers are 16-byte aligned; otherwise (or when the pattern
//     does not match) the scalar loop.
//
// Errors (statuses naming the kernel): vector lanes (the GPU schedule does not
// vectorize), parallel or vectorized loops (a CPU schedule), temporaries in
// "global" memory or of a symbolic size, more than 48 KiB of __shared__
// arrays, external calls, a barrier needed in divergent code, and root loop
// nests that read what another nest wrote in other threads of a launch of
// several blocks (that needs a grid-wide barrier; the default schedule avoids
// it by computing producers per thread).
#ifndef KILN_CODEGEN_CUDA_CODEGEN_CUDA_H_
#define KILN_CODEGEN_CUDA_CODEGEN_CUDA_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen_cuda/nvrtc.h"
#include "ir/tir.h"

namespace kiln::codegen_cuda {

// One TMA tensor map of a kernel (CudaKernel::tensor_maps): a tiled view
// of buffer parameter `buffer` (its first element the view's origin, its
// element type the view's) that cp.async.bulk.tensor copies boxes of into
// shared memory, zeros past `dims`.
struct CudaTensorMap {
  size_t param = 0;              // its position in param_names / param_types
  size_t buffer = 0;             // the buffer parameter (< num_buffers) it views
  std::vector<int64_t> dims;     // elements, innermost first; rank 1 .. 5
  std::vector<int64_t> strides;  // bytes from one index of dims[1..] to the next (rank - 1)
  std::vector<int64_t> box;      // elements a copy moves, innermost first (each 1 .. 256)
  int64_t swizzle = 0;           // the shared layout's swizzle span: 0, 32, 64 or 128 bytes
};

struct CudaKernel {
  std::string name;    // the __global__ function's (and PTX entry's) name
  std::string source;  // its definition (needs CudaPrelude() before it)
  // Parameter names and C types in order: the buffers, then the shape
  // variables ("const float*", ..., "long long").
  std::vector<std::string> param_names;
  std::vector<std::string> param_types;
  size_t num_buffers = 0;
  std::vector<tir::Var> shape_vars;  // the trailing `long long` parameters
  // Launch dims (x, y, z), in terms of shape_vars; IntImm(1) where unbound.
  std::array<tir::PrimExpr, 3> grid;
  std::array<tir::PrimExpr, 3> block;
  // grid[0] * ... and block threads when constant, else 0.
  int64_t block_threads = 0;
  int64_t grid_blocks = 0;
  // Bytes of __shared__ arrays, per block.
  int64_t shared_bytes = 0;
  // Bytes of dynamic shared memory (`extern __shared__`) the launch must
  // request, per block; above 48 KiB the function needs the opt-in
  // attribute (cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES) first.
  int64_t dynamic_shared_bytes = 0;
  // TMA tensor maps (sm_90: CUtensorMap, 128 bytes passed by value as
  // `const __grid_constant__ kiln_tmap`), each a parameter after the
  // buffers (param_types "kiln_tmap"); only in kernels with a static launch
  // (no shape_vars). The runtime encodes each at launch for its buffer's
  // device address (cuTensorMapEncodeTiled; DEVICE_CODE version 4).
  std::vector<CudaTensorMap> tensor_maps;
};

// Helper functions every kernel's source uses (float16 conversions, floor
// division, NaN-propagating min/max). Self-contained: no #include, so NVRTC
// needs no header search path. Outside device compilation (no __CUDA_ARCH__)
// the 16-bit float conversions are plain C++ (GCC's _Float16), so that a
// host compiler can run the kernels given a few definitions
// (tests/cuda/emulate.h).
const std::string& CudaPrelude();

struct KernelOptions {
  // GEMM tiles of 16-bit floats with both operands k-major on Hopper's
  // warpgroup MMA (kiln_gemm_wg, codegen_cuda/tensor_core.h): only for a
  // compute_90a compile (CudaTarget::wgmma()).
  bool wgmma = false;
  // Float32 GEMM tiles on tensor cores in TF32 (kiln_gemm_tf32): a target
  // with -tf32 (CudaTarget::tf32).
  bool tf32 = false;
  // The wide wgmma tile's shared layout: 0 unswizzled, 128 the 128-byte
  // swizzle (CudaTarget::wgmma_swizzle).
  int wgmma_swizzle = 0;
  // The wide wgmma tile's stages filled by TMA (kiln_gemm_wgt; the 128-byte
  // swizzle; CudaTarget::wgmma_tma): its operands become tensor-map
  // parameters (CudaKernel::tensor_maps).
  bool wgmma_tma = false;
  // That form warp-specialized (kiln_gemm_wgs; CudaTarget::wgmma_ws): a
  // third warpgroup issues the copies; the kernel's block becomes 16 x 24.
  bool wgmma_ws = false;
};

// The options a target implies (its wgmma, TF32 and tile forms).
KernelOptions KernelOptionsFor(const CudaTarget& target);

absl::StatusOr<CudaKernel> GenerateKernel(const tir::PrimFunc& f,
                                          const KernelOptions& options = {});

// The prelude and every kernel, one translation unit.
std::string ModuleSource(const std::vector<CudaKernel>& kernels);

}  // namespace kiln::codegen_cuda

#endif  // KILN_CODEGEN_CUDA_CODEGEN_CUDA_H_
