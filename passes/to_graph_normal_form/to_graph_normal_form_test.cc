#include "passes/to_graph_normal_form/to_graph_normal_form.h"

#include "gtest/gtest.h"
#include "passes/infra/testing.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

TEST(ToGraphNormalFormTest, LetsBecomeSharedNodes) {
  Module m = testing::RunPasses(R"(
def @main(%x: Tensor[(4,), float32]) {
  let %a = exp(%x);
  let %unused = log(%x);
  let %b = add(%a, %a);
  multiply(%b, %a)
})", {ToGraphNormalForm()});
  testing::ExpectModule(m, R"(
def @main(%x: Tensor[(4,), float32]) {
  %0 = exp(%x);
  %1 = add(%0, %0);
  multiply(%1, %0)
})");
}

TEST(ToGraphNormalFormTest, HundredThousandLetChain) {
  absl::StatusOr<Module> lets = types::AddChain(100000, /*as_lets=*/true);
  absl::StatusOr<Module> graph = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(lets.ok() && graph.ok());
  absl::StatusOr<Module> out = testing::TryRunPasses(*lets, {ToGraphNormalForm()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(ModuleEqual(*out, *graph));
}

}  // namespace
}  // namespace kiln::passes
