#include "passes/pipeline.h"

#include "gtest/gtest.h"
#include "ir/traversal.h"
#include "passes/registry/register_passes.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

TEST(PipelineTest, EveryListedPassIsRegistered) {
  RegisterAllPasses();
  RegisterAllPasses();  // idempotent
  for (int level = 0; level <= 3; ++level) EXPECT_TRUE(DefaultPipeline(level).ok());
  EXPECT_FALSE(DefaultPipeline(4).ok());
}

TEST(PipelineTest, O3OnResNet50AndBert) {
  RegisterAllPasses();
  for (auto make : {+[] { return types::ResNet50(Dim(1)); },
                    +[] { return types::BertLayer(Dim(1), 128); }}) {
    absl::StatusOr<Module> m = make();
    ASSERT_TRUE(m.ok()) << m.status();
    absl::StatusOr<PassPtr> p = DefaultPipeline(3);
    ASSERT_TRUE(p.ok());
    PassContext ctx;
    ctx.opt_level = 3;
    absl::StatusOr<bool> changed = (*p)->Run(&*m, ctx);
    ASSERT_TRUE(changed.ok()) << changed.status();
  }
}

TEST(PipelineTest, O3OnHundredThousandNodeChain) {
  RegisterAllPasses();
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/true);
  ASSERT_TRUE(m.ok());
  PassContext ctx;
  ctx.opt_level = 3;
  ASSERT_TRUE(DefaultPipeline(3).value()->Run(&*m, ctx).ok());
}

}  // namespace
}  // namespace kiln::passes
