// File: lowering/te/lower.h
//
// The lowering entry point: a schedule and its kernel arguments -> one loop-IR
// function (tir::PrimFunc) with multi-dimensional loads and stores. Runs
// InferBound (bound.h) and ScheduleOps (schedule_ops.h); flattening,
// simplification, vectorization etc. are later loop passes.
//
//   Tensor A = Placeholder({n, IntImm(64)}, DataType::Float(32), "A");
//   Tensor B = Compute(A.shape(), [&](auto& i) { return A({i[0], i[1]}) * 2.0f; }, "B");
//   KILN_ASSIGN_OR_RETURN(Schedule s, CreateSchedule({B}));
//   KILN_ASSIGN_OR_RETURN(tir::PrimFunc f, LowerSchedule(s, {A, B}, "scale"));
//   // primfunc scale(A: float32[n, 64], B: float32[n, 64]) { for (ax0, 0, n) { ... } }
#ifndef KILN_LOWERING_TE_LOWER_H_
#define KILN_LOWERING_TE_LOWER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/tir.h"
#include "lowering/te/schedule.h"

namespace kiln::te {

// `args` are the kernel parameters in order (inputs, then outputs): each gets a
// tir::Buffer named after the tensor, shaped like it (symbolic dims stay
// Vars). Every tensor the schedule reads must be computed by a stage or be an
// argument; the error names the one that is not. `attrs` become the
// PrimFunc's attrs. The schedule is validated (ValidateCompute) first.
absl::StatusOr<tir::PrimFunc> LowerSchedule(Schedule& s, const std::vector<Tensor>& args,
                                            absl::string_view name,
                                            const std::map<std::string, std::string>& attrs = {});

}  // namespace kiln::te

#endif  // KILN_LOWERING_TE_LOWER_H_
