// File: lowering/memory_plan.h
//
// Storage planning for the graph executor: tensors whose lifetimes do not
// overlap share one storage, so a session allocates an arena much smaller than
// the sum of its intermediates (TVM's GraphPlanMemory, in kiln's terms).
//
//   std::vector<TensorLife> t = ...;   // one per graph entry, in execution order
//   KILN_ASSIGN_OR_RETURN(MemoryPlan p, PlanMemory(t, {}));
//   p.storage_of[i]  -> storage id of tensor i
//   p.storage_bytes  -> size of each storage (64-byte multiples)
//
// The planner walks the steps in order. At its defining step a tensor takes a
// free storage (best fit: the smallest free storage at least as large, else the
// largest free one, grown) or a new one; after the last step that reads it,
// its storage is free again. Tensors marked `exclusive` (graph inputs,
// parameters, outputs) get storage of their own that nothing else shares.
// A tensor is never given a storage that one of the inputs of its own step is
// still using (the step reads them while it writes).
#ifndef KILN_LOWERING_MEMORY_PLAN_H_
#define KILN_LOWERING_MEMORY_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln::lowering {

struct TensorLife {
  int64_t bytes = 0;      // size in bytes (>= 0)
  int def_step = 0;       // step that writes it (-1: exists before step 0, e.g. an input)
  int last_use_step = 0;  // last step that reads it (>= def_step; = def_step if unread)
  bool exclusive = false; // never shared (inputs, parameters, outputs)
};

struct MemoryPlanOptions {
  bool share = true;       // false: one storage per tensor (the naive plan)
  int64_t alignment = 64;  // storage sizes are rounded up to this
};

struct MemoryPlan {
  std::vector<int> storage_of;           // per tensor
  std::vector<int64_t> storage_bytes;    // per storage
  std::vector<bool> storage_exclusive;   // per storage: holds one exclusive tensor
  int64_t shared_bytes = 0;  // sum of non-exclusive storages (the session arena)
  int64_t naive_bytes = 0;   // sum of the non-exclusive tensors, each rounded up
};

// InvalidArgument for negative sizes or steps out of order (last < def).
absl::StatusOr<MemoryPlan> PlanMemory(const std::vector<TensorLife>& tensors,
                                      const MemoryPlanOptions& options = {});

}  // namespace kiln::lowering

#endif  // KILN_LOWERING_MEMORY_PLAN_H_
