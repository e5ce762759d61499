// AlterOpLayout tests. The nn.conv2d type relation may not accept blocked
// layouts yet: with the default options the pass then leaves functions alone;
// the rewrite itself is checked with require_type_support=false.
#include "passes/alter_op_layout/alter_op_layout.h"

#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "types/infer_type.h"

namespace kiln::passes {
namespace {

Function Typed(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return Function();
  auto t = types::InferType(*m);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t->Lookup("main") : Function();
}

const char* kChain = R"(
def @main(%x: Tensor[(1, 32, 8, 8), float32], %w1: Tensor[(32, 32, 3, 3), float32],
          %w2: Tensor[(24, 32, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = nn.relu(%0);
  %2 = add(%1, 1f);
  nn.conv2d(%2, %w2, padding=[1, 1])
}
)";

TEST(AlterOpLayoutTest, ConvChainStaysBlocked) {
  Function f = Typed(kChain);
  AlterOpLayoutOptions opts;
  opts.require_type_support = false;
  auto g = AlterOpLayoutFunction(f, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  auto want = ParseModule(R"(
def @main(%x: Tensor[(1, 32, 8, 8), float32], %w1: Tensor[(32, 32, 3, 3), float32],
          %w2: Tensor[(24, 32, 3, 3), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  %1 = layout_transform(%w1, src_layout="OIHW", dst_layout="OIHW16i16o");
  %2 = nn.conv2d(%0, %1, padding=[1, 1], data_layout="NCHW16c", kernel_layout="OIHW16i16o",
                 out_layout="NCHW16c");
  %3 = nn.relu(%2);
  %4 = add(%3, 1f);
  %5 = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW16i8o");
  %6 = nn.conv2d(%4, %5, padding=[1, 1], data_layout="NCHW16c", kernel_layout="OIHW16i8o",
                 out_layout="NCHW8c");
  layout_transform(%6, src_layout="NCHW8c", dst_layout="NCHW")
}
)");
  ASSERT_TRUE(want.ok()) << want.status();
  auto diff = StructuralDifference(*g, *want->Lookup("main"));
  EXPECT_FALSE(diff.has_value()) << *diff << "\n" << PrintExpr(*g);
  if (BlockedConvTypeSupported()) {
    Module m;
    ASSERT_TRUE(m.AddFunction("main", *g).ok());
    auto t = types::InferType(m);
    EXPECT_TRUE(t.ok()) << t.status();
  }
}

// Channels that no factor divides (3 input channels) leave the conv as it is;
// the residual add with a same-typed NCHW tensor transforms that operand.
TEST(AlterOpLayoutTest, UnblockableConvAndResidual) {
  Function f = Typed(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w1: Tensor[(16, 3, 3, 3), float32],
          %w2: Tensor[(16, 16, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = nn.conv2d(%0, %w2);
  add(%1, %0)
}
)");
  AlterOpLayoutOptions opts;
  opts.require_type_support = false;
  auto g = AlterOpLayoutFunction(f, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  auto want = ParseModule(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w1: Tensor[(16, 3, 3, 3), float32],
          %w2: Tensor[(16, 16, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = layout_transform(%0, src_layout="NCHW", dst_layout="NCHW16c");
  %2 = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW16i16o");
  %3 = nn.conv2d(%1, %2, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  %4 = add(%3, %1);
  layout_transform(%4, src_layout="NCHW16c", dst_layout="NCHW")
}
)");
  ASSERT_TRUE(want.ok()) << want.status();
  auto diff = StructuralDifference(*g, *want->Lookup("main"));
  EXPECT_FALSE(diff.has_value()) << *diff << "\n" << PrintExpr(*g);
}

// Without type-relation support for blocked conv2d layouts, the pass keeps
// the program well typed by leaving it alone.
TEST(AlterOpLayoutTest, RespectsTypeRelationSupport) {
  Function f = Typed(kChain);
  auto g = AlterOpLayoutFunction(f);
  ASSERT_TRUE(g.ok()) << g.status();
  if (!BlockedConvTypeSupported()) {
    EXPECT_EQ(g->get(), f.get());
  } else {
    EXPECT_NE(g->get(), f.get());
  }
  Module m;
  ASSERT_TRUE(m.AddFunction("main", *g).ok());
  EXPECT_TRUE(types::InferType(m).ok());
}

TEST(AlterOpLayoutTest, OtherTargetsAreLeftAlone) {
  Function f = Typed(kChain);
  AlterOpLayoutOptions opts;
  opts.target = "cuda";
  opts.require_type_support = false;
  auto g = AlterOpLayoutFunction(f, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->get(), f.get());
}

TEST(AlterOpLayoutTest, NHWCConvIsLeftAlone) {
  Function f = Typed(R"(
def @main(%x: Tensor[(1, 8, 8, 16), float32], %w: Tensor[(3, 3, 16, 16), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO")
}
)");
  AlterOpLayoutOptions opts;
  opts.require_type_support = false;
  auto g = AlterOpLayoutFunction(f, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->get(), f.get());
}

}  // namespace
}  // namespace kiln::passes
