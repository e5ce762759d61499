#include "passes/simplify_expr/simplify_expr.h"

#include "gtest/gtest.h"
#include "passes/infra/testing.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

using testing::ExpectModule;
using testing::RunPasses;

TEST(SimplifyExprTest, ScalarBroadcastThatChangesShapeIsKept) {
  // %x: (1,) + 0 of shape (3,) broadcasts to (3,): the add stays.
  const char* text = R"(
def @main(%x: Tensor[(1,), float32], %z: Tensor[(3,), float32]) {
  %0 = zeros_like(%z);
  add(%x, %0)
})";
  Module m = RunPasses(text, {SimplifyExpr()});
  ExpectModule(m, text);
}

TEST(SimplifyExprTest, LossyCastsAreKeptLosslessMerged) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(4,), float32], %i: Tensor[(4,), int32]) {
  %0 = cast(%x, dtype=int8);
  %1 = cast(%0, dtype=float32);
  %2 = cast(%i, dtype=int64);
  %3 = cast(%2, dtype=int32);
  (%1, %3)
})", {SimplifyExpr()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(4,), float32], %i: Tensor[(4,), int32]) {
  %0 = cast(%x, dtype=int8);
  %1 = cast(%0, dtype=float32);
  (%1, %i)
})");
}

TEST(SimplifyExprTest, TransposeDefaultAxesTwiceIsIdentity) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(2, 3, 4), float32]) { %0 = transpose(%x); transpose(%0) }
)", {SimplifyExpr()});
  ExpectModule(m, R"(def @main(%x: Tensor[(2, 3, 4), float32]) { %x })");
}

TEST(SimplifyExprTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(testing::TryRunPasses(*m, {SimplifyExpr()}).ok());
}

}  // namespace
}  // namespace kiln::passes
