// File: lowering/strategy/x86/gemm.h — the packed GEMM of gemm.cc, for the
// other x86 implementations that are GEMMs in disguise (1x1 convolutions).
#ifndef KILN_LOWERING_STRATEGY_X86_GEMM_H_
#define KILN_LOWERING_STRATEGY_X86_GEMM_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lowering/strategy/strategy.h"

namespace kiln::lowering::strategy::x86 {

// What a GEMM-like operator reads, as functions of output coordinates.
struct GemmOperands {
  std::vector<tir::PrimExpr> out_shape;  // [..., N]
  int64_t n = 0;
  int64_t k = 0;
  // A[lead..., k]: `lead` are the output's indices but the last.
  std::function<tir::PrimExpr(const std::vector<tir::PrimExpr>& lead, const tir::PrimExpr& k)> a;
  // B(n, k) for the batch index `b` (ignored when B is not batched).
  std::function<tir::PrimExpr(const tir::PrimExpr& b, const tir::PrimExpr& n,
                              const tir::PrimExpr& k)>
      b;
  // Batched B: its batch extent, and the batch index an output reads.
  int64_t b_batch = 0;
  std::function<tir::PrimExpr(const std::vector<tir::PrimExpr>& lead)> b_batch_index;
  // A constant B, packed at compile time: its element (n, k).
  std::function<float(int64_t n, int64_t k)> b_const_at;
  // M (the second-to-last output dimension, static) may be computed padded to
  // a multiple of the row tile MR, A read at row min(m, M - 1) past the end and
  // the extra rows dropped: no partial row tile, and A packed whatever M is.
  bool pad_m = false;
  // A's K axis as nested loops, innermost last (a convolution's (KH, KW, ib):
  // k = ((icb * KH + kh) * KW + kw) * ib + ic): the A-packing stage loops
  // over them, so its reads of A index with affine expressions instead of a
  // floordiv/floormod chain per element. Their product divides K; empty: one
  // loop over K.
  std::vector<int64_t> k_split;
  // A GEMM of at most 3 rows may take a column panel of more than 2 vectors
  // (up to 8 for one row), its schedule GemmSchedule's: dense, matmul and
  // batch_matmul. Not a convolution, whose panel is its output channel block.
  bool wide_small_m = false;
};

// C = A B^T packed for the micro-kernel, the anchor of `impl` (whose schedule
// is GemmSchedule): C[..., n] = sum_k A[..., k] * Bp[n / NR, k, n % NR].
absl::StatusOr<std::optional<std::vector<te::Tensor>>> BuildGemm(const StrategyComputeCtx& ctx,
                                                                 const GemmOperands& g,
                                                                 const std::string& name,
                                                                 const std::string& tag,
                                                                 const std::string& impl);

// The register-blocked schedule of a BuildGemm anchor and its epilogue.
absl::Status GemmSchedule(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                          const te::Tensor& anchor, const CpuTarget& target);

// The schedule of a BuildGemm anchor [n, M, N] whose only reader is an
// injective output [n, N / NR, H, W, NR] (H * W = M, the anchor's padded M
// allowed) reading the anchor at (n, h * W + w, cb * NR + c): a convolution
// as a GEMM written back in NCHW{NR}c. The output is tiled as the GEMM (NR
// channels x MR pixels of the flattened h * w) and the accumulator computed
// at each tile, so the epilogue (bias, activation, residual) and the
// re-blocking happen as each tile is written instead of in a pass over a
// materialized [n, M, N] result. False (nothing scheduled but the inlining
// GemmSchedule also does) when the stages are not of that form.
absl::StatusOr<bool> GemmScheduleBlockedOutput(te::Schedule& s,
                                               const std::vector<te::Tensor>& outputs,
                                               const te::Tensor& anchor);

}  // namespace kiln::lowering::strategy::x86

#endif  // KILN_LOWERING_STRATEGY_X86_GEMM_H_
