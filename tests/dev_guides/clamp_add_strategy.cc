// File: tests/dev_guides/clamp_add_strategy.cc — an operator strategy for
// test.clamp_add (docs/dev/adding_an_operator.md, step 5).
//
// An elementwise operator needs no strategy: the default schedule
// (lowering/te/schedule_x86.h) inlines it into its consumer or vectorizes and
// parallelizes it. This one exists to show the mechanism a conv2d or a GEMM
// uses (lowering/strategy/x86/gemm.cc, conv2d.cc): a compute that may decline
// and marks its anchor with the implementation's name and the parameters it
// chose from the target, and a schedule for that anchor.
//
//   clamp_add_vector.test   float32 only (declines otherwise). When the anchor
//                           is the kernel's output and its innermost extent is
//                           a constant multiple of the target's float32 lanes:
//                           innermost axis split by the lanes and vectorized,
//                           the rest fused into one parallel loop. Otherwise
//                           it leaves the stage to the default schedule.
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir.h"
#include "lowering/strategy/strategy.h"
#include "lowering/strategy/target.h"
#include "lowering/te/schedule.h"
#include "lowering/te/te.h"
#include "tests/dev_guides/clamp_add.h"
#include "tests/dev_guides/clamp_add_internal.h"

namespace kiln::dev_guides {
namespace {

using Outputs = std::optional<std::vector<te::Tensor>>;

absl::StatusOr<Outputs> VectorCompute(const lowering::strategy::StrategyComputeCtx& ctx) {
  if (ctx.base.out_dtypes.size() != 1 || ctx.base.out_dtypes[0] != DataType::Float(32)) {
    return Outputs();  // declined: the generic compute runs instead
  }
  const int lanes = ctx.target.Lanes(DataType::Float(32));
  KILN_ASSIGN_OR_RETURN(
      te::Tensor out,
      ClampAddTensor(ctx.base, {{lowering::strategy::kStrategyAttr, kClampAddStrategy},
                                {"kiln.lanes", absl::StrCat(lanes)}}));
  return Outputs(std::vector<te::Tensor>{out});
}

absl::Status VectorSchedule(te::Schedule& s, const std::vector<te::Tensor>& /*outputs*/,
                            const te::Tensor& anchor, const lowering::CpuTarget& /*target*/) {
  te::Stage* stage = s[anchor];
  // Fused into a consumer (clamp_add then relu): the default schedule inlines it.
  if (stage == nullptr || !stage->is_output) return absl::OkStatus();
  const int64_t lanes = lowering::strategy::IntAttr(anchor.op(), "kiln.lanes", 1);
  const std::vector<te::IterVar> axes = stage->op->axis;
  int64_t inner = 0;
  if (axes.empty() || lanes < 2 || !tir::IsConstInt(axes.back()->dom.extent, &inner) ||
      inner < lanes || inner % lanes != 0) {
    return absl::OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(te::SplitAxes split, stage->split(axes.back(), lanes));
  KILN_RETURN_IF_ERROR(stage->vectorize(split.inner));
  std::vector<te::IterVar> outer(axes.begin(), axes.end() - 1);
  bool more_than_one = inner > lanes;
  for (const te::IterVar& iv : outer) {
    int64_t extent = 0;
    more_than_one |= !tir::IsConstInt(iv->dom.extent, &extent) || extent > 1;
  }
  outer.push_back(split.outer);
  KILN_ASSIGN_OR_RETURN(te::IterVar fused, stage->fuse(outer));
  // A loop of one iteration stays serial.
  return more_than_one ? stage->parallel(fused) : absl::OkStatus();
}

}  // namespace

absl::Status RegisterClampAddStrategy() {
  lowering::strategy::RegisterImplementation({kClampAddStrategy, kClampAddOp, /*plevel=*/10,
                                              /*x86_only=*/false, VectorCompute, VectorSchedule});
  return absl::OkStatus();
}

}  // namespace kiln::dev_guides
