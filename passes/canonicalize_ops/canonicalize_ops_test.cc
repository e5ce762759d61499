#include "passes/canonicalize_ops/canonicalize_ops.h"

#include "gtest/gtest.h"
#include "passes/infra/testing.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

TEST(CanonicalizeOpsTest, BiasAddOnNhwcAndNegativeAxis) {
  Module m = testing::RunPasses(R"(
def @main(%x: Tensor[(1, 4, 4, 8), float32], %y: Tensor[(2, 8, 5), float32],
          %b: Tensor[(8,), float32]) {
  (nn.bias_add(%x, %b, axis=3), nn.bias_add(%y, %b, axis=-2))
})", {CanonicalizeOps()});
  testing::ExpectModule(m, R"(
def @main(%x: Tensor[(1, 4, 4, 8), float32], %y: Tensor[(2, 8, 5), float32],
          %b: Tensor[(8,), float32]) {
  (add(%x, %b), add(%y, expand_dims(%b, axis=1, num_newaxis=1)))
})");
}

TEST(CanonicalizeOpsTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(testing::TryRunPasses(*m, {CanonicalizeOps()}).ok());
}

}  // namespace
}  // namespace kiln::passes
