// File: lowering/passes/unroll_loop.h
//
// UnrollLoop: replaces loops by copies of their body. Runs after
// vectorize_loop in the loop pipeline (pipeline.h).
//
//   unrolled (k, 0, 3) { C[k] = (C[k] + A[k]) }
// becomes
//   C[0] = (C[0] + A[0])
//   C[1] = (C[1] + A[1])
//   C[2] = (C[2] + A[2])
//
// Unrolled:
//   - every ForKind::kUnrolled loop with a constant extent <= max_extent;
//   - with auto_max_step > 0, also serial innermost loops (no loop inside)
//     with a constant extent whose size (leaf statements of the body x extent)
//     is <= auto_max_step. Inner loops are handled first, so a nest whose
//     total size fits unrolls completely (TVM's auto_unroll_max_step).
//   - `attr "pragma_auto_unroll_max_step" = N { ... }` sets auto_max_step to N
//     for its body (the attribute is consumed).
// The var is substituted by min + k in copy k; every var or buffer bound
// inside the body is renamed in each copy so bindings stay unique.
//
// Left alone, as loops: a kUnrolled loop whose extent is not constant or is
// larger than max_extent becomes a serial loop annotated
// `unroll.skipped=<reason>` (e.g. `unroll.skipped=extent_2048_exceeds_max_1024`).
#ifndef KILN_LOWERING_PASSES_UNROLL_LOOP_H_
#define KILN_LOWERING_PASSES_UNROLL_LOOP_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::tir::transform {

struct UnrollOptions {
  // Serial innermost loops of at most this many steps are unrolled (0: off).
  int64_t auto_max_step = 0;
  // kUnrolled loops with a larger constant extent stay loops.
  int64_t max_extent = 1024;
};

absl::StatusOr<PrimFunc> UnrollLoop(const PrimFunc& f, const UnrollOptions& options = {});

}  // namespace kiln::tir::transform

#endif  // KILN_LOWERING_PASSES_UNROLL_LOOP_H_
