#include "passes/dead_code_elimination/dead_code_elimination.h"

#include "gtest/gtest.h"
#include "passes/infra/testing.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

using testing::ExpectModule;
using testing::RunPasses;

TEST(DeadCodeEliminationTest, RemovesDeadChainsKeepsEffects) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(4,), float32]) {
  let %a = exp(%x);
  let %b = log(%a);
  let %w = ref(%x);
  let %u = ref_write(%w, %x);
  %x
})", {DeadCodeElimination()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(4,), float32]) {
  let %w = ref(%x);
  let %u = ref_write(%w, %x);
  %x
})");
}

TEST(DeadCodeEliminationTest, DeadLetsInsideClosuresAndBranches) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(4,), float32], %c: bool) {
  %f = fn (%y: Tensor[(4,), float32]) { let %d = exp(%y); %y };
  if (%c) { let %e = log(%x); %f(%x) } else { %x }
})", {DeadCodeElimination()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(4,), float32], %c: bool) {
  %f = fn (%y: Tensor[(4,), float32]) { %y };
  if (%c) { %f(%x) } else { %x }
})");
}

TEST(DeadCodeEliminationTest, HundredThousandLetChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/true);
  ASSERT_TRUE(m.ok());
  absl::StatusOr<Module> out = testing::TryRunPasses(*m, {DeadCodeElimination()});
  ASSERT_TRUE(out.ok()) << out.status();
}

}  // namespace
}  // namespace kiln::passes
