// File: codegen_cuda/tensor_core.h
//
// LowerTensorCoreGemm: the inner product of the GPU schedule's shared-memory
// GEMM tiles (lowering/te/schedule_cuda.h) on tensor cores, for float16 and
// bfloat16 inputs with float32 accumulation (mma.sync m16n8k16, sm_80+).
//
// The schedule gives each block of 16x16 threads a 64x64 output tile, each
// thread (ty, tx) the 4x4 outputs (ty*4+ii, tx*4+jj) in a "local" array Cl,
// and at each step `ko` of the reduction the block's 64x16 slices of A and B
// in shared tiles AS and BS. The step's inner product
//
//   for (ki, 0, 16) for (ii, 0, 4) for (jj, 0, 4)
//     Cl[ii*4 + jj] = Cl[ii*4 + jj] + float(AS[a(ty, ii, ki)]) * float(BS[b(tx, jj, ki)])
//
// (a and b affine: A's row ty*4+ii, B's column tx*4+jj) becomes
//
//   allocate acc: float32[16] local          (the warp's mma accumulators)
//   evaluate(kiln.mma_zero(acc))
//   for ko { ... evaluate(kiln.mma_block_f16(acc, AS, a0, a_row, a_k, BS, b0, b_col, b_k)) }
//   evaluate(kiln.mma_finish(acc, Cl))
//
// kiln_mma_block (codegen_cuda.cc's prelude) has warp w of the block compute
// rows (w/2)*16.. and columns (w%2)*32.. of the 64x64 step product: A's
// fragment and four B fragments read from the shared tiles at the strides
// found, four m16n8k16 mma. kiln_mma_finish writes the accumulators into a
// shared 64x64 float tile and adds each thread's 4x4 outputs into Cl, so the
// epilogue reads Cl as before. Host builds (tests/cuda/emulate_host.h) run the
// mma as a warp exchange with the same fragment layouts (the PTX ISA's,
// section "Matrix Fragments for mma.m16n8k16 with floating point type").
//
// The 128x128 template (float16/bfloat16 GEMMs, lowering/te/schedule_cuda.h):
// each thread (ty, tx) of the 16x16 block owns the 8x8 outputs (ty*8+ii,
// tx*8+jj) in Cl, and the schedule leaves the whole reduction over k
// (extent K) as
//
//   for (k, 0, K) for (ii, 0, 8) for (jj, 0, 8)
//     [if (likely(row0 + ty*8 + ii < M))] [if (likely(col0 + tx*8 + jj < N))]
//       Cl[ii*8 + jj] = Cl[ii*8 + jj] + float(A[a(ty, ii, k)]) * float(B[b(tx, jj, k)])
//
// reading A and B in global memory (a and b affine in the thread, register
// and k vars over a base of the block's vars; one of an operand's two
// strides 1, the other a multiple of 8), the guards there when M or N is
// not a multiple of 128 (the schedule keeps loop_partition off this loop).
// That loop becomes one call,
//
//   evaluate(kiln.gemm_tc_f16(Cl, A, a_base, a_row, a_k, B, b_base, b_col, b_k,
//                             ceil(K / 32), M - row0, N - col0, K))
//
// (128 for a limit without its guard); the tile zero-fills its shared
// stages past the limits (cp.async with a source size of 0, or short of 16
// bytes) and the epilogue's own guards store only the outputs that exist.
// printed as kiln_gemm_tc<bf16, a_k == 1, b_k == 1>(...): the block's
// 128x128 tile in 8 warps of 64x32 (4x4 m16n8k16 per 16 of k, 64 float32
// accumulators per thread in registers), three shared stages of 128x32 A
// and B slices filled by 16-byte cp.async while the mma consume the stage
// two steps behind (one barrier per step), fragments loaded by ldmatrix.x4
// (.trans for an m- or n-major operand) from tiles whose 16-byte chunks are
// XOR-swizzled so that an ldmatrix's 8 rows hit 8 different bank groups; at
// the end the accumulators go through shared memory (the stages reused, 64
// rows at a time) into the threads' Cl blocks. Host builds run ldmatrix as
// a warp exchange and cp.async as a copy (tests/cuda/emulate_host.h).
//
// Compiled for sm_90a (LowerTensorCoreGemm's `wgmma`), a 128x128 GEMM with
// both k strides 1 becomes kiln.gemm_wg_* instead, printed as
// kiln_gemm_wg<bf16>(...): the same stages, copies and epilogue, but the
// block's two warpgroups each issue wgmma.mma_async m64n128k16 (two per 32
// of k) on their 64 rows, the tensor cores reading A and B from the stage
// through matrix descriptors (the unswizzled canonical k-major layout: core
// matrices of 8 rows x 16 bytes, LBO 128, SBO 512), fence.proxy.async
// before the step's barrier, wgmma.fence / commit_group / wait_group 0
// around the step's MMAs. Host builds decode the descriptors
// (tests/cuda/emulate_host.h).
//
// With TensorCoreOptions::tf32 (a target with -tf32), float32 GEMMs in the
// 128x128 template become kiln.gemm_tf32, printed as
// kiln_gemm_tf32<a_k == 1, b_k == 1>(...): the same warps, stages and
// epilogue on 128x16 float tiles, mma.sync m16n8k8 .tf32 with fragments
// rounded by cvt.rna.tf32.f32 from plain 32-bit shared loads.
//
// Only the 64x64 form's exact shape is rewritten: a 16x16x1 launch; the triple loop the
// only statement of its kind in a serial loop (ko) inside the thread nests
// and no `if`; extents 16, 4, 4; float32 accumulation into a "local" buffer
// indexed ii*4 + jj; 16-bit float shared tiles indexed as above. Everything
// else (shapes that do not divide the tile, which the loop passes guard and
// partition, float32 GEMMs) keeps the scalar inner product.
#ifndef KILN_CODEGEN_CUDA_TENSOR_CORE_H_
#define KILN_CODEGEN_CUDA_TENSOR_CORE_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::codegen_cuda {

// Bytes of shared memory kiln_mma_finish declares (its 64x64 float tile).
inline constexpr int64_t kMmaFinishSharedBytes = 64 * 64 * 4;

// Calls the rewrite leaves (evaluated for their effect, printed as
// kiln_<name after "kiln.">(args)).
inline constexpr char kMmaZero[] = "kiln.mma_zero";
inline constexpr char kMmaBlockF16[] = "kiln.mma_block_f16";
inline constexpr char kMmaBlockBF16[] = "kiln.mma_block_bf16";
inline constexpr char kMmaFinish[] = "kiln.mma_finish";

// The 128x128 template's call (above): (cl, A, a_base, a_row_stride,
// a_k_stride, B, b_base, b_col_stride, b_k_stride, ceil(k / 32), rows, cols,
// k), printed as kiln_gemm_tc<bf16, a_k_stride == 1, b_k_stride ==
// 1>(cl, A + a_base, ...). rows and cols: the tile's rows of A and columns
// of B that exist (128, or fewer in a ragged edge tile); the tile reads
// zeros for the others and for k past the end.
inline constexpr char kGemmTcF16[] = "kiln.gemm_tc_f16";
inline constexpr char kGemmTcBF16[] = "kiln.gemm_tc_bf16";
// Bytes of shared memory kiln_gemm_tc declares (three stages of two 128x32
// tiles of 16-bit words; its final float tile of 64 x 132 reuses them).
inline constexpr int64_t kGemmTcSharedBytes = 3 * 2 * 128 * 32 * 2;

// The wgmma form of the 128x128 template (sm_90a; both operands k-major):
// (cl, A, a_base, a_row_stride, B, b_base, b_col_stride, ceil(k / 32), rows,
// cols, k), printed as kiln_gemm_wg<bf16>(cl, A + a_base, a_row_stride, B +
// b_base, b_col_stride, ...). Its shared memory is kiln_gemm_tc's.
inline constexpr char kGemmWgF16[] = "kiln.gemm_wg_f16";
inline constexpr char kGemmWgBF16[] = "kiln.gemm_wg_bf16";

// The wide wgmma tile (sm_90a; both operands k-major): the schedule's
// 128 x 256 block tile of 16x16 threads, 8 x 16 outputs each (Cl indexed
// ii*16 + jj, B's column tx*16 + jj), the same loop otherwise. Arguments as
// kGemmWg*'s with ceil(k / 64) steps and cols up to 256, then the shared
// layout's swizzle (0 or 128 bytes), printed as kiln_gemm_wgw<bf16,
// swizzle == 128>(...): four stages of A's 128 x 64 and B's 256 x 64
// slices (192 KiB of dynamic shared memory, kGemmWgwDynamicSharedBytes),
// each warpgroup four wgmma m64n256k16 per step with one step's group in
// flight (wait_group 1), the epilogue through shared memory into Cl.
inline constexpr char kGemmWgwF16[] = "kiln.gemm_wgw_f16";
inline constexpr char kGemmWgwBF16[] = "kiln.gemm_wgw_bf16";
inline constexpr int64_t kGemmWgwDynamicSharedBytes = 4 * (128 + 256) * 64 * 2;
// With the 128-byte swizzle, 1 KiB more: the stages start on 1024 bytes.
inline constexpr int64_t kGemmWgwSwizzleAlignBytes = 1024;

// The wide tile with TMA-filled stages (TensorCoreOptions::wgmma_tma): the
// kGemmWgw* arguments (swizzle 128), printed as kiln_gemm_wgt<bf16>(cl,
// &tm_a, &tm_b, A, a_base, a_row_stride, B, b_base, b_col_stride, steps,
// rows, cols, k) when A and B are kernel parameters with static shapes, row
// strides of whole 16-byte chunks and rows at least k long: the code
// generator then gives the kernel a tensor map of each (CudaKernel::
// tensor_maps: the buffer as rows of k elements, (k, rows) innermost
// first, boxes of 64 x 128 for A and 64 x 256 for B, the 128-byte swizzle).
// Thread 0 of the block issues each step's two cp.async.bulk.tensor copies
// into the stage three steps ahead, both completing on the stage's mbarrier
// (expect_tx 48 KiB); the warpgroups wait on it (try_wait.parity) instead
// of on cp.async groups. The boxes' coordinates are the tile origin's row
// (a_base / a_row_stride); a base that is not a whole row at run time runs
// kiln_gemm_wgw's copies instead. The tensor map's bounds zero-fill k past
// the end; rows and columns past the tile's limits read whatever rows
// follow (or zeros past the buffer), which only outputs the epilogue does
// not store depend on. Otherwise (A or B not such a parameter) the call is
// printed as kiln_gemm_wgw<bf16, true>. Dynamic shared memory as kGemmWgw*
// with the swizzle, plus kGemmWgtBarrierBytes of static shared memory.
inline constexpr char kGemmWgtF16[] = "kiln.gemm_wgt_f16";
inline constexpr char kGemmWgtBF16[] = "kiln.gemm_wgt_bf16";
inline constexpr int64_t kGemmWgtBarrierBytes = 4 * 8;

// The warp-specialized TMA form (TensorCoreOptions::wgmma_ws): the kGemmWgt*
// arguments. Where the call is the kernel's only one, at no loop's depth
// below the thread nest, both operands tensor maps and their bases
// provably whole rows, and the kernel has no other block-wide barrier, the
// code generator launches 16 x 24 threads: the kernel starts with
// kiln_wgs_init() (thread 0 initializes the mbarriers, then a barrier of
// all 384) and threads y >= 16 (the third warpgroup) call
// kiln_wgs_produce(&tm_a, &tm_b) and return; the computing 16 x 16 call
// kiln_gemm_wgs<bf16>(cl, a_base / a_row_stride, b_base / b_col_stride,
// steps). The consumers' thread 0 posts the job (the rows and steps) on an
// mbarrier; one producer thread issues every step's copies on the stage's
// "full" mbarrier once the stage's "empty" one says both warpgroups retired
// the MMAs that read it (each warp's lane 0 arrives after its wait_group);
// the consumers' barriers are named (bar.sync 1, 256). Elsewhere the call is
// printed as kGemmWgt*'s. Static shared memory: kGemmWgsStateBytes.
inline constexpr char kGemmWgsF16[] = "kiln.gemm_wgs_f16";
inline constexpr char kGemmWgsBF16[] = "kiln.gemm_wgs_bf16";
inline constexpr int64_t kGemmWgsStateBytes = 96;

// The TF32 form of the 128x128 template (float32 A and B, a target with
// -tf32): (cl, A, a_base, a_row_stride, a_k_stride, B, b_base, b_col_stride,
// b_k_stride, ceil(k / 16), rows, cols, k), printed as
// kiln_gemm_tf32<a_k_stride == 1, b_k_stride == 1>(cl, A + a_base, ...). Its shared memory is
// kiln_gemm_tc's (three stages of two 128x16 float tiles).
inline constexpr char kGemmTf32[] = "kiln.gemm_tf32";

// The implicit-GEMM convolution (lowering/strategy/target.h): the loop nest
// under attr "pragma_kiln_conv_tc" = kiln.conv_tc_geom(...) (a conv's
// reduction into a thread's 8x8 "local" block, the schedule's
// lowering/te/schedule_cuda.cc) becomes (cl, X, W, nhwc, w_k_major, C, H, W,
// OC, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW, n, oc0, oh0, ow0), printed as
// kiln_conv_nchw_tc<T, bf16, C, ..., OW, min(OW, 8)>(cl, X, W, n, oc0, oh0,
// ow0) or kiln_conv_nhwc_tc<T, bf16, w_k_major, C, ...>(...) (T the data's
// C type: unsigned short for 16-bit words, float with TF32): the 128x128 tile's
// warps, stages, mma.sync and epilogue, with the image operand gathered
// from the data (im2col, zeros for the padding and past the edges): NCHW
// (rows: output channels from OIHW weights, k-major; columns: a 16 x 8
// patch of pixels, the im2col tile mn-major, element by element) or NHWC
// (rows: the pixel patch, k = (kh, kw, ic) gathered 8 channels a 16-byte
// cp.async when C is a multiple of 8; columns: output channels from HWIO
// (n-major) or OHWI (k-major) weights). Its shared memory is kiln_gemm_tc's.
inline constexpr char kConvTcF16[] = "kiln.conv_tc_f16";
inline constexpr char kConvTcBF16[] = "kiln.conv_tc_bf16";
// With TensorCoreOptions::tf32, float32 convs too (TF32 on the same tile, as
// kiln_gemm_tf32: 16 of k per step, m16n8k8).
inline constexpr char kConvTcTf32[] = "kiln.conv_tc_tf32";
// With TensorCoreOptions::wgmma (sm_90a), NCHW 16-bit convs on Hopper's
// warpgroup MMA instead, printed as kiln_conv_nchw_wg<bf16, C, ..., OW,
// min(OW, 8)>(...): the wgmma tile of kiln_gemm_wg, the image gathered into
// its canonical k-major layout.
inline constexpr char kConvWgF16[] = "kiln.conv_wg_f16";
inline constexpr char kConvWgBF16[] = "kiln.conv_wg_bf16";

struct TensorCoreOptions {
  // The 128x128 template's k-major 16-bit GEMMs become kGemmWg* calls
  // (compute_90a only), the others kGemmTc*.
  bool wgmma = false;
  // Float32 GEMMs in the template become kGemmTf32 calls (else they keep the
  // loop the schedule left, a slow scalar product).
  bool tf32 = false;
  // The kGemmWgw* calls' shared layout (their last argument): 0 unswizzled,
  // 128 the 128-byte swizzle.
  int wgmma_swizzle = 0;
  // The kGemmWgw* calls become kGemmWgt* (TMA-filled stages, the 128-byte
  // swizzle).
  bool wgmma_tma = false;
  // And those become kGemmWgs* (the warp-specialized form).
  bool wgmma_ws = false;
};
absl::StatusOr<tir::PrimFunc> LowerTensorCoreGemm(const tir::PrimFunc& f,
                                                  const TensorCoreOptions& options = {});

// The device functions the rewrite's calls name (part of CudaPrelude()).
const std::string& TensorCorePrelude();
// Its TMA part (kiln_gemm_wgt and the mbarrier and cp.async.bulk.tensor
// wrappers; tensor_core_tma.cc), which TensorCorePrelude() includes.
std::string WgmmaTmaPrelude();

}  // namespace kiln::codegen_cuda

#endif  // KILN_CODEGEN_CUDA_TENSOR_CORE_H_
