// File: lowering/passes/lower_intrinsics.h
//
// LowerIntrinsics: replaces float math calls by polynomial arithmetic in the
// loop IR, so that vector code stays vector code (the LLVM code generator
// would otherwise call libm once per lane for tanh/erf, and exp/log vectorize
// badly). Runs late in the loop pipeline (after vectorize_loop, so the
// expressions it builds are already vectors).
//
//   B[ramp(0, 1, 8)] = exp(A[ramp(0, 1, 8)]):x8
// becomes
//   B[ramp(0, 1, 8)] = (let x = A[ramp(0, 1, 8)] in (let n = floor(...) in ...))
//
// Lowered, for float32 (and float16 / bfloat16, computed in float32 and cast
// back), any lanes:
//   exp     n = floor(x*log2(e) + 1/2), r = x - n*C1 - n*C2 (Cody-Waite, two
//           constants), e^r by Cephes' degree-7 polynomial, times 2^n (the
//           "ldexp" intrinsic: vscalefps on AVX-512, else two half-range
//           factors reinterpret((k + 127) * 2^23), so results down to the
//           subnormal range and up to overflow come out right); inputs
//           clamped to [-104, 89]: overflow gives inf, underflow 0.
//   exp2    same with n = floor(x + 1/2), r = (x - n) * ln 2.
//   expm1   r + r^2 P(r) for |x| < ln(2)/2 (no cancellation), exp(x) - 1 outside.
//   log     exponent and mantissa from the bits (subnormals scaled by 2^23
//           first), mantissa m in [sqrt(1/2), sqrt(2)), log(m) = f - f^2/2 +
//           f^3 P(f) (Cephes, degree 8), plus e*ln(2) in two constants;
//           log(0) = -inf, log(x < 0) = NaN, log(inf) = inf.
//   log2    e + log(m) * log2(e) (same reduction).
//   log1p   Kahan: u = 1 + x; x if u == 1, else log(u) * x / (u - 1).
//   tanh    |x| < 0.625: x + x^3 P(x^2) (Cephes); else sign(x) * (1 -
//           2 / (exp(2|x|) + 1)) with |x| clamped to 10 (where tanh is 1).
//   sigmoid 1 / (1 + exp(-x)) for x >= 0, exp(x) / (1 + exp(x)) for x < 0.
//   erf     x * (P(x^2) / Q(x^2)) with x clamped to [-4, 4] (Eigen's rational
//           approximation, as in TVM's fast_erf).
// NaN inputs give NaN (every lowering selects x itself for x != x); +-inf
// give the limits. Measured accuracy (float32, vs libm in double, dense
// sweeps incl. the edge cases; lower_intrinsics_test): see README.md.
//
// Left alone: float64 calls (libm is exact enough and vectorizes as well),
// calls with side effects (kOpaque), other names, and calls with the wrong
// number of arguments.
#ifndef KILN_LOWERING_PASSES_LOWER_INTRINSICS_H_
#define KILN_LOWERING_PASSES_LOWER_INTRINSICS_H_

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::tir::transform {

struct LowerIntrinsicsOptions {
  // The target multiplies by 2^n in one instruction (x86 with AVX-512:
  // vscalefps), so exp's 2^n is always left to the "ldexp" intrinsic. Without
  // it, where the range of n is known (sigmoid: n <= 0; tanh: 0 <= n <= 29)
  // 2^n is built in the exponent field with integer arithmetic: five
  // operations or fewer instead of the general ldexp's eleven.
  bool native_ldexp = false;
};

absl::StatusOr<PrimFunc> LowerIntrinsics(const PrimFunc& f,
                                         const LowerIntrinsicsOptions& options = {});

// The lowering of one call; `call` itself when it is not lowered.
PrimExpr LowerIntrinsicCall(const PrimExpr& call, const LowerIntrinsicsOptions& options = {});

}  // namespace kiln::tir::transform

#endif  // KILN_LOWERING_PASSES_LOWER_INTRINSICS_H_
