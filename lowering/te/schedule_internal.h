// File: lowering/te/schedule_internal.h
//
// Internals shared by schedule.cc, schedule_dataflow.cc, bound.cc and
// schedule_ops.cc: the state behind a Schedule and the schedule's data flow
// with inlined stages substituted. Not part of the public API.
#ifndef KILN_LOWERING_TE_SCHEDULE_INTERNAL_H_
#define KILN_LOWERING_TE_SCHEDULE_INTERNAL_H_

#include <memory>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "lowering/te/schedule.h"

namespace kiln::te::internal {

struct ScheduleState {
  std::vector<Tensor> outputs;
  std::vector<std::unique_ptr<Stage>> stages;
  // Every operation a stage has had (origin, current, replaced ones).
  std::unordered_map<Operation, Stage*, RefHash> op2stage;

  Stage* Find(const Operation& op) const;
  // A new stage for `op` inserted at `pos` of `stages`.
  Stage* Insert(size_t pos, const Operation& op);
  void Register(Stage* s, const Operation& op) { op2stage[op] = s; }
  size_t IndexOf(const Stage* s) const;
  // Stages whose current op reads an output of `s` (inlined ones included).
  std::vector<Stage*> DirectReaders(const Stage* s) const;
};

// Initializes a stage's iteration state from its op (roots = leaves, no relations).
void ResetIterVars(Stage* s);

// A read resolved to the stage computing it.
struct ResolvedRead {
  Stage* stage = nullptr;
  int value_index = 0;
};
ResolvedRead Resolve(const ScheduleState& st, const tir::ExprNode* producer_load);

// The data flow with inlined stages substituted into their readers.
struct DataFlow {
  // Bodies of every compute stage (inlined ones too), reads of inlined
  // stages replaced by their (substituted) bodies.
  std::unordered_map<const Stage*, std::vector<PrimExpr>> bodies;
  // Producer -> the non-inlined compute stages reading it (after inlining), in stage order.
  std::unordered_map<const Stage*, std::vector<Stage*>> consumers;
};
absl::StatusOr<DataFlow> BuildDataFlow(const ScheduleState& st);

const ScheduleState& StateOf(const Schedule& s);

}  // namespace kiln::te::internal

#endif  // KILN_LOWERING_TE_SCHEDULE_INTERNAL_H_
