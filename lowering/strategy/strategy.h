// File: lowering/strategy/strategy.h
//
// Operator strategies (TVM's op strategy): for an operator on a target, one or
// more implementations, each a (compute, schedule) pair, tried in priority
// order. An implementation's compute may decline (the shapes, dtypes or target
// do not suit it); the operator's generic compute (lowering/compute) and the
// default schedule (lowering/te/schedule_x86.h) are the fallback.
//
// The compute marks the tensor its schedule is about (the anchor: the
// reduction of a conv2d or a GEMM) with the attr "kiln.strategy" = the
// implementation's name, plus whatever parameters it chose ("kiln.mr", ...).
// After lowering has built every stage of a fused function,
// ScheduleWithStrategies runs each anchor's schedule; the default schedule then
// takes the stages nobody scheduled (epilogues already inlined stay inlined).
//
// A compute may also re-lay-out a constant input once, at compile time (a
// weight packed for the micro-kernel): StrategyInput::constant holds the
// constant, and AddConstant makes the new array a kernel parameter.
//
// Where things are: lowering/strategy/x86/ holds the x86 implementations
// (gemm.cc: dense, matmul, batch_matmul; conv2d.cc: NCHWc convolutions); each
// file registers itself through RegisterX86Strategies().
#ifndef KILN_LOWERING_STRATEGY_STRATEGY_H_
#define KILN_LOWERING_STRATEGY_STRATEGY_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/tensor.h"
#include "lowering/compute/op_compute.h"
#include "lowering/strategy/target.h"
#include "lowering/te/schedule.h"
#include "lowering/te/te.h"

namespace kiln::lowering::strategy {

inline constexpr char kStrategyAttr[] = "kiln.strategy";

struct StrategyComputeCtx {
  const ComputeCtx& base;  // op, attrs, inputs, output shapes and dtypes
  // Per input (flattened like base.inputs): the constant behind it, or null.
  // A strategy may decide by a constant's presence, dtype and shape, and may
  // compute new constants from its values (a packed or transformed weight),
  // but its choice and its loops must never depend on the values: fused
  // functions that differ only in their weights share one kernel
  // (lowering/lower.h LowerModule).
  const std::vector<Ref<const HostTensor>>& constants;
  const CpuTarget& target;
  // Makes `t` a kernel parameter (a constant computed at compile time) and
  // returns the placeholder that reads it.
  std::function<te::Tensor(Ref<const HostTensor> t, const std::string& name)> add_constant;
};

// The outputs of the compute, or nullopt when the implementation declines.
using StrategyCompute =
    std::function<absl::StatusOr<std::optional<std::vector<te::Tensor>>>(const StrategyComputeCtx&)>;
// Schedules the anchor (and the stages around it that it wants: its epilogue,
// packing stages). `outputs` are the kernel's outputs.
using StrategySchedule = std::function<absl::Status(
    te::Schedule& s, const std::vector<te::Tensor>& outputs, const te::Tensor& anchor,
    const CpuTarget& target)>;

struct OpImplementation {
  std::string name;      // "dense_pack.x86": unique; the anchor's kStrategyAttr
  std::string op;        // the operator, "nn.dense"
  int plevel = 10;       // higher is tried first
  bool x86_only = true;  // only for x86 targets
  StrategyCompute compute;
  StrategySchedule schedule;
};

// Registers an implementation (idempotent by name).
void RegisterImplementation(OpImplementation impl);
// The implementations of `op`, highest plevel first.
std::vector<const OpImplementation*> ImplementationsOf(const std::string& op);
const OpImplementation* FindImplementation(const std::string& name);

// Registers every built-in implementation (x86 today). Called by the lowerer.
void RegisterBuiltinStrategies();

// The first implementation of `ctx.base.op` that accepts the call, with its
// outputs; nullopt when none does (the caller uses the generic compute).
struct StrategyChoice {
  const OpImplementation* impl = nullptr;
  std::vector<te::Tensor> outputs;
};
absl::StatusOr<std::optional<StrategyChoice>> ComputeWithStrategy(const StrategyComputeCtx& ctx);

// Runs the schedule of every anchor reachable from `outputs`. Returns the
// names of the implementations applied (for reports and tests).
absl::StatusOr<std::vector<std::string>> ScheduleWithStrategies(
    te::Schedule& s, const std::vector<te::Tensor>& outputs, const CpuTarget& target);

// Helpers for implementations.
// Inlines every injective stage that is not an output, not a placeholder, not
// already scheduled and not marked "no_inline" (the epilogue of an anchor).
absl::Status InlineInjective(te::Schedule& s, const std::vector<te::Tensor>& outputs);
// Reads an integer attr of a compute op ("kiln.mr"); `def` when absent.
int64_t IntAttr(const te::Operation& op, const std::string& key, int64_t def);
// A stage no primitive has touched yet (no relations, at the root).
bool IsUntouched(const te::Stage& s);
// Output 0 of `a` and of `b` have provably equal shapes.
bool SameShape(const te::Operation& a, const te::Operation& b);

// The two stages of a register-blocked anchor: `local` accumulates a tile
// (scope "local", computed at a loop of `out`), `out` writes the tile out.
// When the anchor's only reader is an untouched injective output that
// `covers` accepts (its epilogue, already inlined into it), that reader is
// `out` and the anchor itself becomes `local`; otherwise cache_write splits
// the anchor into a local accumulator and a copy stage (`out`).
struct AccumulatorStages {
  te::Stage* out = nullptr;
  te::Stage* local = nullptr;
};
absl::StatusOr<AccumulatorStages> SplitAccumulator(
    te::Schedule& s, const te::Tensor& anchor,
    const std::function<bool(const te::Operation& reader, const te::Operation& anchor)>& covers);

}  // namespace kiln::lowering::strategy

#endif  // KILN_LOWERING_STRATEGY_STRATEGY_H_
