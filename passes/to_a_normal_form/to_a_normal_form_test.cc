#include "passes/to_a_normal_form/to_a_normal_form.h"

#include "gtest/gtest.h"
#include "ir/traversal.h"
#include "passes/infra/testing.h"
#include "passes/to_graph_normal_form/to_graph_normal_form.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

using testing::ExpectModule;
using testing::RunPasses;

TEST(ToANormalFormTest, SharedNodeBoundBeforeIfOtherInBranch) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(4,), float32], %c: bool) {
  %0 = exp(%x);
  if (%c) { add(%0, %0) } else { %1 = log(%x); multiply(%1, %0) }
})", {ToANormalForm()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(4,), float32], %c: bool) {
  let %a = exp(%x);
  let %r = if (%c) { let %b = add(%a, %a); %b }
           else { let %l = log(%x); let %m = multiply(%l, %a); %m };
  %r
})");
}

TEST(ToANormalFormTest, EveryCallIsLetBoundAndRoundTripsThroughGraphForm) {
  const char* text = R"(
def @main(%x: Tensor[(4,), float32]) {
  %f = fn (%y: Tensor[(4,), float32]) { nn.relu(exp(%y)) };
  %0 = exp(%x);
  (%0, nn.relu(%0), %f)
})";
  Module anf = RunPasses(text, {ToANormalForm()});
  for (const Expr& e : PostOrder(anf.Lookup("main").value()->body)) {
    ForEachChild(e, [&](const Expr& c) {
      if (e->kind != ExprKind::kLet && e->kind != ExprKind::kFunction &&
          e->kind != ExprKind::kIf) {
        EXPECT_TRUE(c->kind == ExprKind::kVar || c->kind == ExprKind::kOp ||
                    c->kind == ExprKind::kConstant)
            << ExprKindName(e->kind) << " has a " << ExprKindName(c->kind) << " child";
      }
    });
  }
  Module back = RunPasses(text, {ToANormalForm(), ToGraphNormalForm()});
  ExpectModule(back, text);
}

TEST(ToANormalFormTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  absl::StatusOr<Module> out = testing::TryRunPasses(*m, {ToANormalForm(), ToGraphNormalForm()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(ModuleEqual(*out, *m));
}

}  // namespace
}  // namespace kiln::passes
