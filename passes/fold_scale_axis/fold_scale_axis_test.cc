// FoldScaleAxis tests: Before/Expected modules in text; constants are written
// into the #[metadata] table by the test so expected folded weights are exact.
#include "passes/fold_scale_axis/fold_scale_axis.h"

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "types/infer_type.h"

namespace kiln::passes {
namespace {

struct C {
  std::vector<int64_t> shape;
  std::vector<float> v;
};

// A #[metadata] table holding `cs` as meta[Constant][0..].
std::string Meta(const std::vector<C>& cs) {
  std::string out = "#[metadata]\n";
  for (size_t i = 0; i < cs.size(); ++i) {
    std::string bytes(reinterpret_cast<const char*>(cs[i].v.data()), cs[i].v.size() * 4);
    absl::StrAppend(&out, "meta[Constant][", i, "] = Tensor[(", absl::StrJoin(cs[i].shape, ", "),
                    cs[i].shape.size() == 1 ? "," : "", "), float32] b64\"",
                    absl::Base64Escape(bytes), "\";\n");
  }
  return out;
}

// w scaled along `axis` by s (w row-major with `shape`).
C ScaleAlong(const C& w, int axis, const std::vector<float>& s) {
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(axis) + 1; i < w.shape.size(); ++i) inner *= w.shape[i];
  C out = w;
  for (size_t i = 0; i < w.v.size(); ++i) {
    out.v[i] = w.v[i] * s[(i / static_cast<size_t>(inner)) % s.size()];
  }
  return out;
}

void ExpectFolded(const std::string& before, const std::string& expected) {
  auto m = ParseModule(before);
  ASSERT_TRUE(m.ok()) << m.status();
  auto typed = types::InferType(*m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  auto f = FoldScaleAxisFunction(*typed->Lookup("main"));
  ASSERT_TRUE(f.ok()) << f.status();
  auto want = ParseModule(expected);
  ASSERT_TRUE(want.ok()) << want.status();
  Function w = *want->Lookup("main");
  auto diff = StructuralDifference(*f, w);
  EXPECT_FALSE(diff.has_value()) << *diff << "\ngot:\n" << PrintExpr(*f);
  Module out;
  ASSERT_TRUE(out.AddFunction("main", *f).ok());
  auto retyped = types::InferType(out);
  EXPECT_TRUE(retyped.ok()) << retyped.status();
}

void ExpectUnchanged(const std::string& before) {
  auto m = ParseModule(before);
  ASSERT_TRUE(m.ok()) << m.status();
  auto typed = types::InferType(*m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  Function f = *typed->Lookup("main");
  auto g = FoldScaleAxisFunction(f);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->get(), f.get()) << PrintExpr(*g);
}

const C kW{{2, 2, 1, 1}, {1, 2, 3, 4}};     // OIHW
const C kScale{{2, 1, 1}, {2, 3}};          // per output channel, NCHW
const C kBias{{2}, {0.5f, -1}};

TEST(FoldScaleAxisTest, BackwardConvNCHW) {
  ExpectFolded(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, meta[Constant][0]);
  multiply(%0, meta[Constant][1])
}
)" + Meta({kW, kScale}),
               R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  nn.conv2d(%x, meta[Constant][0])
}
)" + Meta({ScaleAlong(kW, 0, kScale.v)}));
}

TEST(FoldScaleAxisTest, BackwardThroughBiasAndRelu) {
  ExpectFolded(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, meta[Constant][0]);
  %1 = nn.bias_add(%0, meta[Constant][2]);
  %2 = nn.relu(%1);
  multiply(meta[Constant][1], %2)
}
)" + Meta({kW, kScale, kBias}),
               R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, meta[Constant][0]);
  %1 = nn.bias_add(%0, meta[Constant][1]);
  nn.relu(%1)
}
)" + Meta({ScaleAlong(kW, 0, kScale.v), C{{2}, {1, -3}}}));
}

TEST(FoldScaleAxisTest, NonConstantWeightGetsAMultiply) {
  ExpectFolded(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %w: Tensor[(2, 2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w);
  multiply(%0, meta[Constant][0])
}
)" + Meta({kScale}),
               R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %w: Tensor[(2, 2, 1, 1), float32]) {
  %0 = multiply(%w, meta[Constant][0]);
  nn.conv2d(%x, %0)
}
)" + Meta({C{{2, 1, 1, 1}, {2, 3}}}));
}

TEST(FoldScaleAxisTest, ForwardConvNHWC) {
  const C w{{1, 1, 2, 2}, {1, 2, 3, 4}};  // HWIO
  ExpectFolded(R"(
def @main(%x: Tensor[(1, 3, 3, 2), float32]) {
  %0 = multiply(%x, meta[Constant][1]);
  %1 = nn.relu(%0);
  nn.conv2d(%1, meta[Constant][0], data_layout="NHWC", kernel_layout="HWIO")
}
)" + Meta({w, C{{2}, {2, 3}}}),
               R"(
def @main(%x: Tensor[(1, 3, 3, 2), float32]) {
  %0 = nn.relu(%x);
  nn.conv2d(%0, meta[Constant][0], data_layout="NHWC", kernel_layout="HWIO")
}
)" + Meta({ScaleAlong(w, 2, {2, 3})}));
}

TEST(FoldScaleAxisTest, DenseBackwardAndForward) {
  const C w{{2, 3}, {1, 2, 3, 4, 5, 6}};  // [units, K]
  const C sk{{3}, {1, 2, 4}};
  const C su{{2}, {3, 5}};
  ExpectFolded(R"(
def @main(%x: Tensor[(4, 3), float32]) {
  %0 = multiply(%x, meta[Constant][1]);
  %1 = nn.dense(%0, meta[Constant][0]);
  multiply(%1, meta[Constant][2])
}
)" + Meta({w, sk, su}),
               R"(
def @main(%x: Tensor[(4, 3), float32]) {
  nn.dense(%x, meta[Constant][0])
}
)" + Meta({ScaleAlong(ScaleAlong(w, 1, sk.v), 0, su.v)}));
}

TEST(FoldScaleAxisTest, LeavesNonConstantScaleAlone) {
  ExpectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32], %s: Tensor[(2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, meta[Constant][0]);
  multiply(%0, %s)
}
)" + Meta({kW}));
}

TEST(FoldScaleAxisTest, LeavesScaleOnWrongAxisAlone) {
  ExpectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, meta[Constant][0]);
  multiply(%0, meta[Constant][1])
}
)" + Meta({kW, C{{1, 1, 3}, {1, 2, 3}}}));
}

TEST(FoldScaleAxisTest, NegativeScaleDoesNotCrossRelu) {
  ExpectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, meta[Constant][0]);
  %1 = nn.relu(%0);
  multiply(%1, meta[Constant][1])
}
)" + Meta({kW, C{{2, 1, 1}, {2, -3}}}));
}

TEST(FoldScaleAxisTest, SharedConvOutputIsLeftAlone) {
  ExpectUnchanged(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, meta[Constant][0]);
  %1 = multiply(%0, meta[Constant][1]);
  add(%1, %0)
}
)" + Meta({kW, kScale}));
}

// The folded weight keeps the weight's name (ConstantNode.name_hint, an ONNX
// initializer's name; the text IR cannot write it, so the test sets it).
TEST(FoldScaleAxisTest, TheScaledWeightKeepsItsName) {
  auto m = ParseModule(R"(
def @main(%x: Tensor[(1, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, meta[Constant][0]);
  multiply(%0, meta[Constant][1])
}
)" + Meta({kW, kScale}));
  ASSERT_TRUE(m.ok()) << m.status();
  Function main = *m->Lookup("main");
  const auto* mul = main->body.as<CallNode>();
  ASSERT_NE(mul, nullptr);
  const auto* conv = mul->args[0].as<CallNode>();
  ASSERT_NE(conv, nullptr);
  auto w = MakeConstant(conv->args[1].as<ConstantNode>()->data, "conv1.weight");
  ASSERT_TRUE(w.ok());
  auto conv2 = MakeCall(conv->op, {conv->args[0], *w}, conv->attrs);
  ASSERT_TRUE(conv2.ok());
  auto mul2 = MakeCall(mul->op, {*conv2, mul->args[1]}, mul->attrs);
  ASSERT_TRUE(mul2.ok());
  auto f = MakeFunction(main->params, *mul2);
  ASSERT_TRUE(f.ok());
  Module before;
  ASSERT_TRUE(before.AddFunction("main", *f).ok());
  auto typed = types::InferType(before);
  ASSERT_TRUE(typed.ok()) << typed.status();
  auto folded = FoldScaleAxisFunction(*typed->Lookup("main"));
  ASSERT_TRUE(folded.ok()) << folded.status();
  const auto* out = (*folded)->body.as<CallNode>();
  ASSERT_NE(out, nullptr) << PrintExpr(*folded);
  ASSERT_EQ(out->args.size(), 2u) << PrintExpr(*folded);
  const auto* scaled = out->args[1].as<ConstantNode>();
  ASSERT_NE(scaled, nullptr) << PrintExpr(*folded);
  EXPECT_EQ(scaled->name_hint, "conv1.weight");
  EXPECT_EQ(scaled->data->data<float>()[0], kW.v[0] * kScale.v[0]);  // it was scaled
}

TEST(FoldScaleAxisTest, PassInfo) {
  PassPtr p = FoldScaleAxis();
  EXPECT_EQ(p->info().name, "FoldScaleAxis");
  EXPECT_EQ(p->info().opt_level, 3);
}

}  // namespace
}  // namespace kiln::passes
