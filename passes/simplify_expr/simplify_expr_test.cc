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

// An explicit spatial zero pad goes into the conv's and the average pool's
// padding (the pool then counts the padded zeros: count_include_pad), so no
// separate pad kernel runs and AlterOpLayout can keep the pool blocked.
TEST(SimplifyExprTest, SpatialPadFoldsIntoConvAndAveragePool) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w: Tensor[(4, 8, 3, 3), float32]) {
  %0 = nn.pad(%x, 0f, pad_width=[[0, 0], [0, 0], [1, 2], [0, 1]]);
  %1 = nn.conv2d(%0, %w, padding=[1, 1]);
  %2 = nn.pad(%x, 0f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]]);
  %3 = nn.avg_pool2d(%2, pool_size=[3, 3]);
  (%1, %3)
})", {SimplifyExpr()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w: Tensor[(4, 8, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[2, 1, 3, 2]);
  %1 = nn.avg_pool2d(%x, pool_size=[3, 3], padding=[1, 1, 1, 1], count_include_pad=true);
  (%0, %1)
})");
}

// Pads that are not the op's own padding stay: a channel pad, a nonzero
// value before a conv, a zero pad before a max pool (-inf is its padding),
// an average pool that excludes its own padded cells, ceil_mode.
TEST(SimplifyExprTest, PadsThatAreNotTheOpsPaddingStay) {
  const char* text = R"(
def @main(%x: Tensor[(1, 8, 6, 6), float32], %w: Tensor[(4, 8, 3, 3), float32],
          %v: Tensor[(4, 10, 3, 3), float32]) {
  %0 = nn.pad(%x, 0f, pad_width=[[0, 0], [1, 1], [1, 1], [1, 1]]);
  %1 = nn.conv2d(%0, %v);
  %2 = nn.pad(%x, 1f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]]);
  %3 = nn.conv2d(%2, %w);
  %4 = nn.pad(%x, 0f, pad_width=[[0, 0], [0, 0], [1, 1], [1, 1]]);
  %5 = nn.max_pool2d(%4, pool_size=[3, 3]);
  %6 = nn.avg_pool2d(%4, pool_size=[3, 3], padding=[1, 1, 1, 1]);
  %7 = nn.avg_pool2d(%4, pool_size=[3, 3], strides=[2, 2], ceil_mode=true);
  (%1, %3, %5, %6, %7)
})";
  Module m = RunPasses(text, {SimplifyExpr()});
  ExpectModule(m, text);
}

TEST(SimplifyExprTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(testing::TryRunPasses(*m, {SimplifyExpr()}).ok());
}

}  // namespace
}  // namespace kiln::passes
