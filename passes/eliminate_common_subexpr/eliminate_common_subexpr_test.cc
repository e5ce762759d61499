#include "passes/eliminate_common_subexpr/eliminate_common_subexpr.h"

#include "gtest/gtest.h"
#include "passes/infra/testing.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

using testing::ExpectModule;
using testing::RunPasses;

TEST(EliminateCommonSubexprTest, MergesChainsAndProjections) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(4, 6), float32]) {
  %0 = split(%x, sections=2, axis=1);
  %1 = split(%x, sections=2, axis=1);
  %2 = exp(%0.0);
  %3 = exp(%1.0);
  add(%2, %3)
})", {EliminateCommonSubexpr()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(4, 6), float32]) {
  %0 = split(%x, sections=2, axis=1);
  %1 = exp(%0.0);
  add(%1, %1)
})");
}

TEST(EliminateCommonSubexprTest, DistinctBindingsAreNotMerged) {
  // exp(%y) in two closures uses two different parameters: nothing to merge.
  const char* text = R"(
def @main(%x: Tensor[(4,), float32]) {
  %f = fn (%y: Tensor[(4,), float32]) { exp(%y) };
  %g = fn (%y: Tensor[(4,), float32]) { exp(%y) };
  add(%f(%x), %g(%x))
})";
  Module m = RunPasses(text, {EliminateCommonSubexpr()});
  ExpectModule(m, text);
}

TEST(EliminateCommonSubexprTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(testing::TryRunPasses(*m, {EliminateCommonSubexpr()}).ok());
}

}  // namespace
}  // namespace kiln::passes
