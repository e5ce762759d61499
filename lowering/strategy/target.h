// File: lowering/strategy/target.h
//
// What the operator strategies know of the machine they schedule for: the
// vector width, the number of vector registers (register blocking is sized
// from it) and whether fused multiply-add exists. The compiler fills it from
// the LLVM target (c_api/compiler.cc); tests build one by hand. GpuTarget is
// the same for an NVIDIA GPU (codegen_cuda fills it from `cuda -arch=sm_80`):
// LowerOptions::gpu set means the default GPU schedule (schedule_cuda.h).
//
//   CpuTarget t = CpuTarget::Avx512();     // 512-bit vectors, 32 registers
//   int lanes = t.Lanes(DataType::Float(32));  // 16
//   GpuTarget g = GpuTarget::Sm80();       // 256 threads per block by default
#ifndef KILN_LOWERING_STRATEGY_TARGET_H_
#define KILN_LOWERING_STRATEGY_TARGET_H_

#include <string>

#include "ir/dtype.h"

namespace kiln::lowering {

struct CpuTarget {
  std::string arch = "x86_64";  // "x86_64", "aarch64", ... (the LLVM triple's arch)
  int vector_bits = 256;        // float SIMD register width
  int vector_registers = 16;    // architectural vector registers
  bool fma = true;              // fused multiply-add instructions
  int cores = 0;                // 0: unknown (schedules do not depend on it)

  int Lanes(DataType t) const {
    const int bits = t.bits() > 0 ? t.bits() : 32;
    const int l = vector_bits / bits;
    return l > 0 ? l : 1;
  }
  bool is_x86() const { return arch == "x86_64" || arch == "x86" || arch == "i686"; }

  // "x86_64, 512-bit vectors, 32 registers, fma"
  std::string ToString() const;

  static CpuTarget Avx512() { return {"x86_64", 512, 32, true, 0}; }
  static CpuTarget Avx2() { return {"x86_64", 256, 16, true, 0}; }
  static CpuTarget Neon() { return {"aarch64", 128, 32, true, 0}; }
  // From a vector width alone (what older callers pass as vector_lanes).
  static CpuTarget FromVectorLanes(int float_lanes);
};

struct GpuTarget {
  std::string arch = "sm_80";     // compute capability, "sm_80", "sm_90"
  int threads_per_block = 256;    // the default schedule's block size (multiple of 32)
  int max_threads_per_block = 1024;
  int warp_size = 32;
  int shared_memory_per_block = 48 * 1024;  // bytes, without opting in to more
  // float32 GEMMs on tensor cores with TF32 inputs (10-bit mantissas; float32
  // accumulation): opted in by `cuda ... -tf32`.
  bool tf32 = false;
  // Hopper's warpgroup MMA (sm_90a); with wide_wgmma (the default there,
  // `-wgmma-n=256`) k-major 16-bit GEMMs may take the wide 128 x 256 wgmma
  // tile (lowering/te/schedule_cuda.h).
  bool wgmma = false;
  bool wide_wgmma = false;

  // "sm_80, 256 threads per block"
  std::string ToString() const;

  static GpuTarget Sm80() { return {"sm_80", 256, 1024, 32, 48 * 1024}; }
  static GpuTarget Sm90() { return {"sm_90", 256, 1024, 32, 48 * 1024}; }
};

// The implicit-GEMM convolution on tensor cores that the GPU schedule asks
// the CUDA code generator for (lowering/te/schedule_cuda.h,
// codegen_cuda/tensor_core.h): the schedule puts
//   attr "pragma_kiln_conv_tc" = kiln.conv_tc_geom(nhwc, w_k_major, C, H, W,
//       OC, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW, n, oc0, oh0, ow0)
// around a conv's reduction loop (computed per thread into its 8x8 "local"
// block), and the code generator replaces that loop by one call of the
// pipelined tile, which gathers the image itself. The first 16 arguments
// are constants (the geometry; PH, PW the top and left padding), the last 4
// the block's batch index, first output channel, row and column.
inline constexpr char kConvTensorCoreKey[] = "kiln_conv_tc";  // Stage::pragma's key
inline constexpr char kConvTensorCorePragma[] = "pragma_kiln_conv_tc";
inline constexpr char kConvTensorCoreGeometry[] = "kiln.conv_tc_geom";
inline constexpr int kConvTensorCoreGeometryArgs = 20;

}  // namespace kiln::lowering

#endif  // KILN_LOWERING_STRATEGY_TARGET_H_
