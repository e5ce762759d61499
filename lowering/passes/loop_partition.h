// File: lowering/passes/loop_partition.h
//
// LoopPartition: peels the boundary iterations of a loop whose body is
// guarded by `if (likely(c))` (the guards the scheduler emits for uneven
// splits), so that the bulk of the iterations runs without the guard. Runs
// after storage_flatten + simplify and before vectorize_loop (pipeline.h):
// the vectorized inner loop of a split with a tail is guard-free in the main
// part and can then be vectorized.
//
//   for (i, 0, 7) {                             for (i, 0, 6) {
//     vectorized (j, 0, 16) {                      vectorized (j, 0, 16) {
//       if (likely(i * 16 + j < 100)) {              B[i * 16 + j] = ...
//         B[i * 16 + j] = ...             ->       }
//       }                                        }
//     }                                          for (i_1, 6, 1) {
//   }                                              vectorized (j_1, 0, 16) {
//                                                    if (likely(i_1 * 16 + j_1 < 100)) { ... }
//
// For each loop (outermost first) the pass collects the Ifs in its body whose
// condition is `likely(c)` with c a conjunction of comparisons that are affine
// in the loop var x and in the vars of loops between x and the If, with
// constant coefficients (`i * 16 + j < n`, `k >= 1`, `x*2 - 1 <= m`). For each
// comparison it derives the range of x where it holds for every value of those
// inner vars (their loop ranges bound it), e.g. i < floordiv(n - 16, 16) + 1
// above; the range where all collected conditions hold is the main part, the
// iterations before and after it stay guarded:
//   [min, lo)  guards kept     [lo, hi)  guards replaced by their then-branch
//   [hi, end)  guards kept (an If provably false there by the analyzer becomes
//              its else-branch)
// The analyzer (lowering/arith/analyzer.h, with enclosing loop ranges bound
// and symbolic shape vars >= 0) simplifies the split points and decides: a
// condition true over the whole range just loses its guard; an empty or
// provably absent part is not emitted; when the main part is provably empty the
// loop is left alone. Split points are clamped to the loop range, so every
// part has extent >= 0 even when the analyzer cannot tell.
//
// Left alone: a loop under `attr "pragma_loop_partition" = 0` (Stage::pragma
// (iv, "loop_partition", 0)) with everything inside it, conditions without likely(), conditions that are not affine in
// the loop vars (floordiv, min, loads, let vars bound inside the loop), `==`
// and `!=`, vectorized or unrolled loops whose split points are not constants
// (the parts could not be vectorized/unrolled), thread-binding loops, and the
// peeled parts themselves (they are not partitioned again).
#ifndef KILN_LOWERING_PASSES_LOOP_PARTITION_H_
#define KILN_LOWERING_PASSES_LOOP_PARTITION_H_

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::tir::transform {

// The pragma that keeps a loop and its body out of the pass (value 0).
inline constexpr char kNoPartitionPragma[] = "pragma_loop_partition";

absl::StatusOr<PrimFunc> LoopPartition(const PrimFunc& f);

}  // namespace kiln::tir::transform

#endif  // KILN_LOWERING_PASSES_LOOP_PARTITION_H_
