#include "passes/infer_type/infer_type.h"

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/traversal.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

TEST(InferTypePassTest, FillsEveryType) {
  absl::StatusOr<Module> m = ParseModule(R"(
def @main(%x: Tensor[(2, 3), float32]) { %0 = exp(%x); add(%0, 1f) }
)");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<bool> changed = InferType()->Run(&*m, PassContext());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  for (const Expr& e : PostOrder(m->Lookup("main").value())) {
    if (e->kind != ExprKind::kOp) {
      EXPECT_TRUE(e->checked_type()) << ExprKindName(e->kind);
    }
  }
}

TEST(InferTypePassTest, TypeErrorNamesThePass) {
  absl::StatusOr<Module> m = ParseModule(R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(4,), float32]) { add(%x, %y) }
)");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<bool> r = InferType()->Run(&*m, PassContext());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().substr(0, 11), "InferType: ");
}

TEST(InferTypePassTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(InferType()->Run(&*m, PassContext()).ok());
}

}  // namespace
}  // namespace kiln::passes
