// File: lowering/te/schedule_ops.h
//
// ScheduleOps (TVM's te/schedule/schedule_ops.cc): the loop nest of a whole
// schedule as loop IR, given InferBound's ranges.
//
// For each stage, producers first:
//   - one loop per leaf IterVar, outermost first, with the ForKind of its
//     annotation (thread-bound loops are kThreadBinding loops with the tag);
//     a loop of extent 1 becomes `let v = min`; a range not starting at 0
//     becomes `for (v.idx, 0, extent) { let v = v.idx + min; ... }`;
//     pragmas become AttrStmt "pragma_<key>" (on the loop variable) around their loop;
//   - root indices rebuilt from the loop vars (split: outer * factor + inner,
//     fuse: floordiv / floormod) and substituted into the body;
//   - `if (likely(cond))` guards, innermost, only where needed: the parent of
//     a split that does not provably divide evenly, and roots whose inferred
//     range exceeds their domain;
//   - reductions: an init statement (the identity) placed inside the
//     data-parallel loops and before the outermost reduction loop (with its own
//     copies of data-parallel loops nested inside reduction loops), then the
//     update inside all loops. argmax/argmin keep a value accumulator beside
//     the index: the first NaN wins, ties keep the first index unless
//     select_last_index;
//   - inlined stages are substituted into their readers; a compute_at stage is
//     placed at the start of its attach loop's body;
//   - every tensor that is not an argument is an Allocate of a
//     multi-dimensional Buffer in the stage's scope, shaped by the inferred
//     region (reads and writes offset by the region's minimum), around the
//     code that produces and reads it; storage_align is recorded on the buffer.
// Reads become multi-dimensional tir Loads of the tensors' buffers. Nothing is
// flattened or simplified beyond what the bounds need.
#ifndef KILN_LOWERING_TE_SCHEDULE_OPS_H_
#define KILN_LOWERING_TE_SCHEDULE_OPS_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/tir.h"
#include "lowering/te/bound.h"
#include "lowering/te/schedule.h"

namespace kiln::te {

// The buffers of tensors that are kernel arguments (inputs and outputs).
using BufferBinds = std::vector<std::pair<Tensor, tir::Buffer>>;

// Errors name the stage or tensor: a tensor read that is neither bound nor
// computed by a stage, a missing range, an attach point not found.
absl::StatusOr<tir::Stmt> ScheduleOps(const Schedule& s, const BoundMap& bounds,
                                      const BufferBinds& binds);

}  // namespace kiln::te

#endif  // KILN_LOWERING_TE_SCHEDULE_OPS_H_
