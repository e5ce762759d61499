#include "passes/inline/inline.h"

#include "gtest/gtest.h"
#include "passes/infra/testing.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

TEST(InlineTest, BoundVariablesAreRenamedPerCallSite) {
  Module m = testing::RunPasses(R"(
def @main(%x: Tensor[(4,), float32]) { add(@f(%x), @f(exp(%x))) }
def @f(%y: Tensor[(4,), float32], Inline=1) { let %t = exp(%y); multiply(%t, %t) }
)", {Inline()});
  testing::ExpectModule(m, R"(
def @main(%x: Tensor[(4,), float32]) {
  %0 = { let %t1 = exp(%x); multiply(%t1, %t1) };
  %1 = exp(%x);
  %2 = { let %t2 = exp(%1); multiply(%t2, %t2) };
  add(%0, %2)
})");
}

TEST(InlineTest, MutuallyRecursiveFunctionsStay) {
  const char* text = R"(
def @main(%n: int32) { @even(%n) }
def @even(%n: int32, Inline=1) { if (less(%n, 1)) { true } else { @odd(subtract(%n, 1)) } }
def @odd(%n: int32, Inline=1) { if (less(%n, 1)) { false } else { @even(subtract(%n, 1)) } }
)";
  Module m = testing::RunPasses(text, {Inline()});
  testing::ExpectModule(m, text);
}

TEST(InlineTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(testing::TryRunPasses(*m, {Inline()}).ok());
}

}  // namespace
}  // namespace kiln::passes
