// File: lowering/passes/remove_no_op.h
//
// RemoveNoOp: deletes statements that do nothing. Runs after storage_rewrite
// and again at the end of the loop pipeline (pipeline.h); safe anywhere.
//
//   for (i, 0, 16) { A[i] = A[i] }     ->  (nothing)
//   if (true) { s } else { t }         ->  s
//   attr "pragma_x" = 1 { no_op }      ->  (nothing)
//   (A[0] + 1f)                        ->  (nothing: a pure Evaluate)
//
// Removed: a For / LetStmt / AttrStmt / Allocate whose body is a no-op, a For
// with a constant extent <= 0, a Store of a Load of the same element
// (`A[i] = A[i]`), an Evaluate of an expression without side effects (no
// kOpaque call), an If with a constant condition (replaced by the taken
// branch), an If whose branches are both no-ops (its condition, if it has an
// effect, stays as an Evaluate), and no-op children of a Seq. An If whose
// then-branch alone is a no-op becomes `if (!c) else-branch`.
// Left alone: Asserts (their check is an effect), Evaluates of opaque calls,
// loops and lets whose min/extent/value has side effects (kept as Evaluate).
#ifndef KILN_LOWERING_PASSES_REMOVE_NO_OP_H_
#define KILN_LOWERING_PASSES_REMOVE_NO_OP_H_

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::tir::transform {

absl::StatusOr<PrimFunc> RemoveNoOp(const PrimFunc& f);

// The rewrite on one statement.
Stmt RemoveNoOpStmt(const Stmt& s);

}  // namespace kiln::tir::transform

#endif  // KILN_LOWERING_PASSES_REMOVE_NO_OP_H_
