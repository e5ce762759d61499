#include "passes/lambda_lift/lambda_lift.h"

#include "gtest/gtest.h"
#include "passes/infra/testing.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

TEST(LambdaLiftTest, NestedClosuresLiftInnermostFirstAndStillType) {
  Module m = testing::RunPasses(R"(
def @main(%x: Tensor[(4,), float32]) {
  %f = fn (%y: Tensor[(4,), float32]) {
    %g = fn (%z: Tensor[(4,), float32]) { add(%x, %z) };
    %g(%y)
  };
  %f(%x)
})", {LambdaLift(), InferType()});
  testing::ExpectModule(m, R"(
def @main(%x: Tensor[(4,), float32]) { %0 = @main_lifted_1(%x); %0(%x) }
def @main_lifted_0(%x: Tensor[(4,), float32]) {
  fn (%z: Tensor[(4,), float32], Closure=1) { add(%x, %z) }
}
def @main_lifted_1(%x: Tensor[(4,), float32]) {
  fn (%y: Tensor[(4,), float32], Closure=1) { %g = @main_lifted_0(%x); %g(%y) }
}
)");
  // Lifting again changes nothing.
  absl::StatusOr<Module> again = testing::TryRunPasses(m, {LambdaLift()});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(ModuleEqual(*again, m));
}

TEST(LambdaLiftTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(testing::TryRunPasses(*m, {LambdaLift()}).ok());
}

}  // namespace
}  // namespace kiln::passes
