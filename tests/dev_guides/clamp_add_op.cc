// File: tests/dev_guides/clamp_add_op.cc — the ir facet of test.clamp_add
// and RegisterClampAdd (docs/dev/adding_an_operator.md, step 1).
#include <utility>

#include "absl/status/status.h"
#include "ir/op.h"
#include "tests/dev_guides/clamp_add.h"

namespace kiln::dev_guides {

absl::Status RegisterClampAddOp() {
  OpDef def;
  def.name = kClampAddOp;
  def.description = "clip(lhs + rhs, a_min, a_max) with NumPy broadcasting";
  def.num_inputs = 2;
  def.arguments = {{"lhs", "left operand"}, {"rhs", "right operand"}};
  // Elementwise with broadcasting: FuseOps fuses it with its neighbours, and
  // AlterOpLayout carries a blocked layout through it as through `add`.
  def.pattern = OpPattern::kBroadcast;
  def.make_attrs = [] { return Ref<AttrsNode>(new ClampAddAttrs()); };
  return OpRegistry::Global().Register(std::move(def)).status();
}

absl::Status RegisterClampAdd() {
  static const absl::Status* const status = new absl::Status([] {
    absl::Status s = RegisterClampAddOp();
    if (s.ok()) s = RegisterClampAddRelation();
    if (s.ok()) s = RegisterClampAddKernel();
    if (s.ok()) s = RegisterClampAddCompute();
    if (s.ok()) s = RegisterClampAddStrategy();
    return s;
  }());
  return *status;
}

}  // namespace kiln::dev_guides
