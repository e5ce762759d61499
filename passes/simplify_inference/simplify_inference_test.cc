#include "passes/simplify_inference/simplify_inference.h"

#include "gtest/gtest.h"
#include "ir/traversal.h"
#include "passes/infra/testing.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

TEST(SimplifyInferenceTest, ResNet50HasNoBatchNormLeftAndStillTypes) {
  absl::StatusOr<Module> m = types::ResNet50(Dim(1));
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Module> out = testing::TryRunPasses(*m, {SimplifyInference(), InferType()});
  ASSERT_TRUE(out.ok()) << out.status();
  for (const auto& [gv, fn] : out->functions()) {
    for (const Expr& e : PostOrder(fn)) {
      if (const auto* c = e.as<CallNode>()) {
        if (const auto* op = c->op.as<OpNode>()) {
          EXPECT_NE(op->name(), "nn.batch_norm");
        }
      }
    }
  }
}

TEST(SimplifyInferenceTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(testing::TryRunPasses(*m, {SimplifyInference()}).ok());
}

}  // namespace
}  // namespace kiln::passes
