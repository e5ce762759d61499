// File: lowering/lower.h
//
// Lowers one fused primitive function (FuseOps output: `fn (..., Primitive=1)`)
// to one kernel: each operator call becomes its compute definition
// (lowering/compute), the result is scheduled for the target
// (lowering/te/schedule_x86.h), turned into loop IR (lowering/te/lower.h) and
// run through the loop passes (lowering/passes/pipeline.h).
//
//   KILN_ASSIGN_OR_RETURN(LoweredFunc k, LowerPrimitive(fused_fn, "fused_conv2d_add_relu", {}));
//   k.func  -> a tir::PrimFunc, parameters: the function's tensor params
//              (tuples flattened), then k.constants, then the outputs.
//
// A failure is a status that names the kernel and its operators.
#ifndef KILN_LOWERING_LOWER_H_
#define KILN_LOWERING_LOWER_H_

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "ir/module.h"
#include "ir/tensor.h"
#include "ir/tir.h"
#include "lowering/strategy/target.h"

namespace kiln::lowering {

struct LowerOptions {
  // Lanes of a float32 vector on the target (16 for AVX-512, 8 for AVX2, 4 for
  // NEON). 0 asks the caller (which knows the target) to choose; LowerPrimitive
  // itself treats 0 as 8.
  int vector_lanes = 0;
  // The machine the operator strategies (lowering/strategy) schedule for:
  // vector width, registers. Unset: derived from vector_lanes.
  std::optional<CpuTarget> target;
  // Use the tuned operator strategies (packed GEMM, NCHWc conv2d micro-kernels)
  // where they apply; false: the generic compute and default schedule only.
  bool use_strategies = true;
  // Set: lower for an NVIDIA GPU (codegen_cuda). The generic computes with the
  // default GPU schedule (lowering/te/schedule_cuda.h: threads bound to
  // blockIdx.x/threadIdx.x); no CPU strategy; math intrinsics left as calls
  // (CUDA's own expf, tanhf, ...) rather than lowered to polynomials. `target`
  // and `vector_lanes` are then ignored.
  std::optional<GpuTarget> gpu;
  // Skip the target schedule (every stage at root, serial loops): a reference.
  bool naive_schedule = false;
  // Loop passes not to run (names as in lowering/passes/pipeline.h).
  std::vector<std::string> disabled_loop_passes;
  // LowerModule's progress, or empty: (0, total) before the first function,
  // then (done, total) after each one, done = 1 .. total, where total is the
  // number of distinct primitive functions main calls (a function that shares
  // another's kernel counts too). Called on the calling thread.
  std::function<void(int done, int total)> progress;
};

struct LoweredFunc {
  tir::PrimFunc func;
  // Tensor constants found in the function body; they are kernel parameters
  // placed after the function's own (flattened) parameters.
  std::vector<Ref<const HostTensor>> constants;
  int num_inputs = 0;   // function params (flattened) + constants
  int num_outputs = 0;  // results (a tuple result is flattened)
  std::vector<std::string> op_names;  // the operators inside, in order
  std::vector<std::string> strategies;  // the strategy implementations applied
};

// `fn` must be type-checked (every call has a checked type).
absl::StatusOr<LoweredFunc> LowerPrimitive(const Function& fn, absl::string_view name,
                                           const LowerOptions& options = {});

// Every primitive function called from `main` of a fused module (the graph
// pipeline through FuseOps has run and types are checked), lowered once each;
// functions equal up to the values of their tensor constants (repeated
// blocks, each with its own weights: ir/structural.h
// StructuralEqualModuloConstants) share one kernel and pass their own
// constants to it.
struct LoweredModule {
  std::vector<LoweredFunc> kernels;
  // Primitive function node (the callee of a call in main) -> index in kernels.
  std::unordered_map<const ExprNode*, size_t> kernel_of;
  // A function sharing a kernel with different constants -> its constants,
  // in the kernel's order (the same dtypes and shapes as the kernel's own).
  std::unordered_map<const ExprNode*, std::vector<Ref<const HostTensor>>> constants_of;

  // The constants a call of `fn` passes after its arguments; `fn` must be in
  // kernel_of.
  const std::vector<Ref<const HostTensor>>& ConstantsOf(const ExprNode* fn) const;
};
absl::StatusOr<LoweredModule> LowerModule(const Module& fused, const LowerOptions& options = {});

// TVM-style kernel name for a fused function: "fused_" + its op names.
std::string KernelName(const Function& fn);

}  // namespace kiln::lowering

#endif  // KILN_LOWERING_LOWER_H_
