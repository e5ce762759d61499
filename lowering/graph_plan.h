// File: lowering/graph_plan.h
//
// The executor plan of a static graph: `main` of a fused module (graph passes
// through FuseOps done, types checked) together with its lowered kernels
// (lower.h) becomes TVM graph-executor JSON (docs/artifact.md, section GRAPH),
// the list of parameters (tensor constants, named p0, p1, ... in first-use
// order; a constant used twice is stored once), and the memory plan.
//
//   KILN_ASSIGN_OR_RETURN(LoweredModule lm, LowerModule(fused, opts));
//   KILN_ASSIGN_OR_RETURN(GraphPlan plan, PlanGraph(fused, lm, {}));
//   plan.graph_json   -> the GRAPH section
//   plan.params       -> the PARAMS section
//
// Graph nodes: one `null` node per tensor parameter of main (tuples flattened,
// names from the parameters: "x", or "x.0", "x.1" for a tuple parameter), one
// `null` node per parameter, one `tvm_op` node per call of a primitive
// function, in execution (post) order. Tuples and projections in main only
// route entries; they make no nodes. Each kernel's inputs are its call's
// arguments (flattened) then its LoweredFunc::constants, as the kernel expects.
//
// Errors (statuses naming the node): symbolic shapes (the graph executor needs
// static ones; the VM issue handles the rest), a call to something that is not
// a lowered primitive function, free variables, functions as values.
#ifndef KILN_LOWERING_GRAPH_PLAN_H_
#define KILN_LOWERING_GRAPH_PLAN_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/tensor.h"
#include "lowering/lower.h"
#include "lowering/memory_plan.h"

namespace kiln::lowering {

struct GraphPlanOptions {
  bool share_storage = true;  // false: the naive memory plan
};

struct GraphPlan {
  std::string graph_json;
  std::vector<std::pair<std::string, Ref<const HostTensor>>> params;
  std::vector<std::string> input_names;   // the non-parameter null nodes, in order
  std::vector<std::string> output_names;  // "output0", ... per head
  int num_nodes = 0;
  int num_op_nodes = 0;
  MemoryPlan memory;  // over every entry; memory.shared_bytes = the session arena
  // Set instead of graph_json for a program the VM runs (lowering/vm): the
  // artifact's VM section (runtime_c/include/kiln/vm_format.h); params are
  // then its constants, in order.
  std::string vm_program;
};

absl::StatusOr<GraphPlan> PlanGraph(const Module& fused, const LoweredModule& lowered,
                                    const GraphPlanOptions& options = {});

}  // namespace kiln::lowering

#endif  // KILN_LOWERING_GRAPH_PLAN_H_
