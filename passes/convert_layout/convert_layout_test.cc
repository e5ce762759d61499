// ConvertLayout tests: Before/Expected in text, transform counts on a
// ResNet-style block, and type checking afterwards.
#include "passes/convert_layout/convert_layout.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ir/op_attrs.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "types/infer_type.h"

namespace kiln::passes {
namespace {

const DesiredLayouts kNHWC = {{"nn.conv2d", {"NHWC", "default"}}};

Function Typed(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return Function();
  auto t = types::InferType(*m);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t->Lookup("main") : Function();
}

// Converts, checks the result type-checks, and returns it.
Function Convert(const Function& f, const DesiredLayouts& desired = kNHWC) {
  auto g = ConvertLayoutFunction(f, desired);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return f;
  Module m;
  EXPECT_TRUE(m.AddFunction("main", *g).ok());
  auto t = types::InferType(m);
  EXPECT_TRUE(t.ok()) << t.status() << "\n" << PrintExpr(*g);
  // The function's type is unchanged.
  if (t.ok() && f->checked_type()) {
    EXPECT_EQ(TypeToString((*t->Lookup("main"))->checked_type()), TypeToString(f->checked_type()));
  }
  return *g;
}

// layout_transform counts by "src->dst".
std::map<std::string, int> Transforms(const Function& f) {
  std::map<std::string, int> n;
  for (const Expr& e : PostOrder(f->body)) {
    if (const auto* c = e.as<CallNode>()) {
      if (const auto* a = c->attrs.as<LayoutTransformAttrs>()) {
        ++n[a->src_layout + "->" + a->dst_layout];
      }
    }
  }
  return n;
}

std::string ReadExample(const std::string& name) {
  std::string path = "examples/" + name;
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    std::string p = std::string(srcdir) + "/kiln/examples/" + name;
    if (std::ifstream(p).good()) path = p;
  }
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ConvertLayoutTest, ConvRelu) {
  Function f = Typed(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1]);
  nn.relu(%0)
}
)");
  Function g = Convert(f);
  auto want = ParseModule(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="HWIO");
  %2 = nn.conv2d(%0, %1, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO");
  %3 = nn.relu(%2);
  layout_transform(%3, src_layout="NHWC", dst_layout="NCHW")
}
)");
  ASSERT_TRUE(want.ok()) << want.status();
  auto diff = StructuralDifference(g, *want->Lookup("main"));
  EXPECT_FALSE(diff.has_value()) << *diff << "\n" << PrintExpr(g);
}

// Two convs with a bias, a per-channel scale, a residual add and pools in
// between: one transform in (the input, shared by conv and add), one out.
TEST(ConvertLayoutTest, ResNetStyleBlockOneTransformInOneOut) {
  Function f = Typed(R"(
def @main(%data: Tensor[(1, 8, 8, 8), float32], %w1: Tensor[(8, 8, 3, 3), float32],
          %b1: Tensor[(8,), float32], %w2: Tensor[(8, 8, 3, 3), float32],
          %fc: Tensor[(10, 8), float32]) {
  %0 = nn.conv2d(%data, %w1, padding=[1, 1]);
  %1 = nn.bias_add(%0, %b1);
  %2 = nn.relu(%1);
  %3 = nn.conv2d(%2, %w2, padding=[1, 1]);
  %4 = multiply(%3, 2f);
  %5 = add(%4, %data);
  %6 = nn.relu(%5);
  %7 = nn.max_pool2d(%6, pool_size=[2, 2], strides=[2, 2]);
  %8 = nn.global_avg_pool2d(%7);
  %9 = reshape(%8, newshape=[1, 8]);
  nn.dense(%9, %fc)
}
)");
  Function g = Convert(f);
  auto n = Transforms(g);
  EXPECT_EQ(n["NCHW->NHWC"], 1) << PrintExpr(g);
  EXPECT_EQ(n["NHWC->NCHW"], 1) << PrintExpr(g);
  EXPECT_EQ(n["OIHW->HWIO"], 2);
  std::string text = PrintExpr(g);
  EXPECT_NE(text.find("nn.bias_add(%"), std::string::npos);
  EXPECT_NE(text.find("axis=3"), std::string::npos) << text;
  EXPECT_NE(text.find("layout=\"NHWC\""), std::string::npos) << text;
}

TEST(ConvertLayoutTest, BundledResNetBlock) {
  auto m = ParseModule(ReadExample("resnet_block.kir"));
  ASSERT_TRUE(m.ok()) << m.status();
  auto t = types::InferType(*m);
  ASSERT_TRUE(t.ok()) << t.status();
  Function g = Convert(*t->Lookup("main"));
  auto n = Transforms(g);
  EXPECT_EQ(n["NCHW->NHWC"], 1) << PrintExpr(g);
  EXPECT_EQ(n["NHWC->NCHW"], 1) << PrintExpr(g);
}

// A per-channel constant operand is expanded to 4-D and transformed along.
TEST(ConvertLayoutTest, PerChannelOperandIsTransformed) {
  Function f = Typed(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 1, 1), float32],
          %s: Tensor[(4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w);
  multiply(%0, %s)
}
)");
  Function g = Convert(f);
  auto n = Transforms(g);
  EXPECT_EQ(n["NCHW->NHWC"], 2);  // %x and the expanded %s
  EXPECT_EQ(n["NHWC->NCHW"], 1);
}

TEST(ConvertLayoutTest, ConcatenateAxisIsRemapped) {
  Function f = Typed(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w);
  %1 = nn.conv2d(%x, %w);
  %2 = (%0, %1);
  concatenate(%2, axis=1)
}
)");
  Function g = Convert(f);
  EXPECT_NE(PrintExpr(g).find("concatenate(%"), std::string::npos);
  EXPECT_NE(PrintExpr(g).find("axis=3"), std::string::npos) << PrintExpr(g);
  EXPECT_EQ(Transforms(g)["NHWC->NCHW"], 1);
}

TEST(ConvertLayoutTest, LeavesNHWCGraphAlone) {
  Function f = Typed(R"(
def @main(%x: Tensor[(1, 8, 8, 3), float32], %w: Tensor[(3, 3, 3, 4), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO");
  nn.relu(%0)
}
)");
  auto g = ConvertLayoutFunction(f, kNHWC);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->get(), f.get());
}

TEST(ConvertLayoutTest, BackToNCHW) {
  Function f = Typed(R"(
def @main(%x: Tensor[(1, 8, 8, 3), float32], %w: Tensor[(3, 3, 3, 4), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO");
  nn.relu(%0)
}
)");
  Function g = Convert(f, {{"nn.conv2d", {"NCHW", "OIHW"}}});
  EXPECT_EQ(Transforms(g)["NHWC->NCHW"], 1);
  EXPECT_EQ(Transforms(g)["HWIO->OIHW"], 1);
}

TEST(ConvertLayoutTest, UnsupportedOpIsAnError) {
  Function f = Typed("def @main(%x: Tensor[(1, 2), float32]) { nn.relu(%x) }");
  auto g = ConvertLayoutFunction(f, {{"nn.dense", {"NC"}}});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("no layout conversion for operator 'nn.dense'"),
            std::string::npos)
      << g.status();
  auto h = ConvertLayoutFunction(f, {{"nn.conv2d", {"NCHW16c"}}});
  EXPECT_FALSE(h.ok());
}

}  // namespace
}  // namespace kiln::passes
