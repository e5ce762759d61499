// A selective pass registry (kiln_pass_registry with InferType and
// DeadCodeElimination): only those two are registered, every other pass of
// kiln's is known as absent, and asking for one says it is not in the build.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"

namespace kiln::passes {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SelectionTest, HoldsOnlyTheChosenPasses) {
  RegisterAllPasses();
  const PassRegistry& r = PassRegistry::Global();
  EXPECT_THAT(r.Names(), ElementsAre("DeadCodeElimination", "InferType"));
  EXPECT_TRUE(r.Create("InferType").ok());
  EXPECT_FALSE(r.IsAbsent("InferType"));
}

TEST(SelectionTest, AbsentPassSaysSo) {
  RegisterAllPasses();
  const PassRegistry& r = PassRegistry::Global();
  absl::StatusOr<PassPtr> p = r.Create("FoldScaleAxis");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(p.status().message(), HasSubstr("pass FoldScaleAxis is not in this build"));
  // A name kiln does not know at all is still "unknown", listing the built ones.
  absl::StatusOr<PassPtr> q = r.Create("NoSuchPass");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(q.status().message(), HasSubstr("known passes: DeadCodeElimination, InferType"));
  // ParsePassList reports the absent pass by name.
  absl::StatusOr<PassPtr> list = ParsePassList("InferType, FuseOps");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.status().message(), HasSubstr("pass FuseOps is not in this build"));
}

// register_passes.cc and passes.bzl's KILN_PASSES list the same passes: the
// registered ones plus the absent ones are all of KILN_PASSES.
TEST(SelectionTest, SourceAndBuildTableAgree) {
  RegisterAllPasses();
  const PassRegistry& r = PassRegistry::Global();
  std::vector<std::string> all = r.Names();
  for (const std::string& n : r.AbsentNames()) all.push_back(n);
  std::sort(all.begin(), all.end());
  std::vector<std::string> bzl = absl::StrSplit(KILN_PASSES_BZL, ',');
  std::sort(bzl.begin(), bzl.end());
  EXPECT_EQ(absl::StrJoin(all, ","), absl::StrJoin(bzl, ","))
      << "passes/registry/register_passes.cc and passes.bzl (KILN_PASSES) disagree";
}

// The default pipeline of a reduced build is the default order restricted to
// what the build holds.
TEST(SelectionTest, DefaultPipelineKeepsTheBuiltPasses) {
  RegisterAllPasses();
  absl::StatusOr<PassPtr> p = DefaultPipeline(3);
  ASSERT_TRUE(p.ok()) << p.status();
  Module module;
  PassContext ctx;
  ctx.opt_level = 3;
  auto timing = std::make_shared<TimingInstrument>();
  ctx.instruments.push_back(timing);
  ASSERT_TRUE((*p)->Run(&module, ctx).ok());
  std::vector<std::string> ran;
  for (const TimingInstrument::Entry& e : timing->entries()) ran.push_back(e.pass);
  EXPECT_THAT(ran, ElementsAre("InferType", "DeadCodeElimination", "InferType"));
}

}  // namespace
}  // namespace kiln::passes
