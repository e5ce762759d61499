// File: lowering/te/schedule_x86.h
//
// The default CPU schedule of a fused operator (TVM's generic x86 injective
// and reduce schedules, topi/x86/injective.py and reduction.py):
//
//   - every injective stage that is not an output is inlined: a compute
//     without reduction axes (tags "elemwise", "broadcast", "injective" or
//     none), unless it has the attr "no_inline";
//   - an injective output: its innermost axis is split by `vector_lanes` and
//     the inner part vectorized when the extent is a constant >= vector_lanes
//     (a tail guard covers an uneven split) and the op has no attr
//     "kiln.no_vectorize" (a wide concatenate: lanes would gather); the outer axes (with the outer
//     part of that split) are fused into one loop, marked parallel when its
//     extent can be more than 1;
//   - a reduction: its data-parallel axes outside, the reduction loops serial;
//     with two or more data-parallel axes and a constant innermost extent >=
//     vector_lanes, that axis is split and its inner part vectorized inside the
//     reduction loops; the outer data-parallel loops are fused and parallel;
//   - a reduction read only by an injective output of the same shape (conv +
//     bias + relu) is computed at the output's parallel loop, so its result is
//     consumed while in cache.
//
//   KILN_ASSIGN_OR_RETURN(Schedule s, CreateSchedule(outputs));
//   KILN_RETURN_IF_ERROR(ScheduleDefaultX86(s, outputs));
//
// Stages the caller already scheduled (relations, or not at the root) are
// left as they are.
#ifndef KILN_LOWERING_TE_SCHEDULE_X86_H_
#define KILN_LOWERING_TE_SCHEDULE_X86_H_

#include <vector>

#include "absl/status/status.h"
#include "lowering/te/schedule.h"
#include "lowering/te/te.h"

namespace kiln::te {

absl::Status ScheduleDefaultX86(Schedule& s, const std::vector<Tensor>& outputs,
                                int vector_lanes = 16);

}  // namespace kiln::te

#endif  // KILN_LOWERING_TE_SCHEDULE_X86_H_
