// File: lowering/te/bound.h
//
// InferBound (TVM's te/schedule/bound.cc): the Range of every IterVar of every
// stage of a schedule, roots and leaves.
//
// Rules, applied to the stages consumers first:
//   - Outputs cover their full shape; reduction axes cover their declared range.
//   - Any other stage covers the union of the regions its consumers read. A
//     consumer's loops are evaluated relative to the stage's attach point: a
//     stage computed at loop `iv` of a consumer sees the consumer's loops
//     outside `iv`, and `iv` itself, as one point (their loop variables), and
//     the loops inside `iv` over their whole range. (GPU thread loops relax by
//     storage scope as in TVM.) Inlined stages are seen through: their readers
//     read what they read.
//   - A stage's root ranges go down its relations to the leaves: split gives
//     outer = [0, ceil(extent / factor)), inner = [0, factor) (the parent's
//     extent when that is provably smaller); fuse gives [0, outer * inner).
//     Consumer leaf sets go up the same relations to the consumer's roots.
//
//   C[i] = B[i] + B[i + 1] + B[i + 2];  s[C] split i by 4 -> (io, ii);  B computed at io
//   InferBound: C.io = [0, ceil(n / 4)), C.ii = [0, 4), B.ax0 = [io * 4, 6).
//
// Ranges may mention loop variables of enclosing loops (B.ax0 above) and
// symbolic shape variables; they are simplified with arith::Simplify.
#ifndef KILN_LOWERING_TE_BOUND_H_
#define KILN_LOWERING_TE_BOUND_H_

#include <unordered_map>

#include "absl/status/statusor.h"
#include "ir/object.h"
#include "ir/tir.h"
#include "lowering/te/schedule.h"

namespace kiln::te {

using BoundMap = std::unordered_map<IterVar, Range, RefHash>;

// Errors: a compute_at whose IterVar is no longer a leaf of the attach stage,
// an attach stage that is inlined, a cycle of compute_at, a producer computed
// at a loop its consumers are not inside.
absl::StatusOr<BoundMap> InferBound(const Schedule& s);

}  // namespace kiln::te

#endif  // KILN_LOWERING_TE_BOUND_H_
