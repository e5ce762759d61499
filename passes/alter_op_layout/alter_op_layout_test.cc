// AlterOpLayout tests. The nn.conv2d type relation accepts blocked layouts,
// so the pass rewrites with its default options; every rewritten function is
// type-checked, and the conv chain is also run through the interpreter before
// and after to compare values.
#include "passes/alter_op_layout/alter_op_layout.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "passes/fold_constant/fold_constant.h"
#include "passes/infra/testing.h"
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

// Type-checks `f` as @main.
void ExpectWellTyped(const Function& f) {
  Module m;
  ASSERT_TRUE(m.AddFunction("main", f).ok());
  auto t = types::InferType(m);
  EXPECT_TRUE(t.ok()) << t.status() << "\n" << PrintExpr(f);
}

// AlterOpLayout (the type relation's support not probed) rewrites the @main
// of `input` into the @main of `want` (structurally equal), well typed.
void ExpectRewrite(const std::string& input, const std::string& want_text) {
  Function f = Typed(input);
  AlterOpLayoutOptions opts;
  opts.require_type_support = false;
  auto g = AlterOpLayoutFunction(f, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  auto want = ParseModule(want_text);
  ASSERT_TRUE(want.ok()) << want.status();
  auto diff = StructuralDifference(*g, *want->Lookup("main"));
  EXPECT_FALSE(diff.has_value()) << *diff << "\n" << PrintExpr(*g);
  ExpectWellTyped(*g);
}

Ref<const HostTensor> Filled(std::vector<int64_t> shape, int seed) {
  auto t = HostTensor::Create(DataType::Float(32), std::move(shape));
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < (*t)->num_elements(); ++i)
    (*t)->mutable_data<float>()[i] = static_cast<float>((i * 7 + seed) % 11 - 5) * 0.125f;
  return Ref<const HostTensor>(*t);
}

std::vector<double> RunMain(const Function& f, const std::vector<Ref<const HostTensor>>& args) {
  Module m;
  EXPECT_TRUE(m.AddFunction("main", f).ok());
  return testing::RunMainOnInterpreter(m, args);
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
  ExpectWellTyped(*g);
}

// A weight's blocked copy (layout_transform, folded by FoldConstant) keeps
// the weight's name (ConstantNode.name_hint: its ONNX initializer's name).
TEST(AlterOpLayoutTest, TheBlockedWeightKeepsItsName) {
  Function f = Typed(R"(
def @main(%x: Tensor[(1, 32, 8, 8), float32], %w: Tensor[(32, 32, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1])
}
)");
  auto w = MakeConstant(Filled({32, 32, 3, 3}, 1), "conv1.weight");
  ASSERT_TRUE(w.ok());
  auto body = Substitute(f->body, {{f->params[1].get(), *w}});
  ASSERT_TRUE(body.ok()) << body.status();
  auto with_weight = MakeFunction({f->params[0]}, *body);
  ASSERT_TRUE(with_weight.ok());
  Module m;
  ASSERT_TRUE(m.AddFunction("main", *with_weight).ok());
  auto typed = types::InferType(m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  AlterOpLayoutOptions opts;
  opts.require_type_support = false;
  auto g = AlterOpLayoutFunction(*typed->Lookup("main"), opts);
  ASSERT_TRUE(g.ok()) << g.status();
  auto folded = FoldConstantExpr(*g);
  ASSERT_TRUE(folded.ok()) << folded.status();
  int convs = 0;
  for (const Expr& e : PostOrder(*folded)) {
    const auto* call = e.as<CallNode>();
    const auto* op = call != nullptr ? call->op.as<OpNode>() : nullptr;
    if (op == nullptr || op->name() != "nn.conv2d") continue;
    ++convs;
    const auto* k = call->args[1].as<ConstantNode>();
    ASSERT_NE(k, nullptr) << PrintExpr(*folded);
    EXPECT_EQ(k->data->ndim(), 6) << "not blocked: " << PrintExpr(*folded);
    EXPECT_EQ(k->name_hint, "conv1.weight");
  }
  EXPECT_EQ(convs, 1) << PrintExpr(*folded);
}

TEST(AlterOpLayoutTest, BlockedTypeRelationIsSupported) { EXPECT_TRUE(BlockedConvTypeSupported()); }

// The blocked program computes the same values as the original.
TEST(AlterOpLayoutTest, ConvChainMatchesInterpreter) {
  Function f = Typed(kChain);
  auto g = AlterOpLayoutFunction(f);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_NE(g->get(), f.get());
  std::vector<Ref<const HostTensor>> args = {Filled({1, 32, 8, 8}, 1), Filled({32, 32, 3, 3}, 2),
                                             Filled({24, 32, 3, 3}, 3)};
  std::vector<double> want = RunMain(f, args);
  std::vector<double> got = RunMain(*g, args);
  ASSERT_EQ(got.size(), want.size());
  ASSERT_EQ(want.size(), 24u * 8 * 8);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
}

// Grouped convolutions (not depthwise) run blocked, each output block inside
// one group: 16 output channels per group take blocks of 16 (RegNetX's
// group width); 8 input and 16 output channels per group, 8-wide input
// blocks and the weight's I blocked by 8.
TEST(AlterOpLayoutTest, GroupedConvIsBlockedPerGroup) {
  ExpectRewrite(R"(
def @main(%x: Tensor[(1, 32, 8, 8), float32], %w: Tensor[(64, 8, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[1, 1], groups=4)
}
)",
                R"(
def @main(%x: Tensor[(1, 32, 8, 8), float32], %w: Tensor[(64, 8, 3, 3), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW8c");
  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW8i16o");
  %2 = nn.conv2d(%0, %1, padding=[1, 1], groups=4, data_layout="NCHW8c",
                 kernel_layout="OIHW8i16o", out_layout="NCHW16c");
  layout_transform(%2, src_layout="NCHW16c", dst_layout="NCHW")
}
)");
}

// AlterOpLayout (type support not probed) rewrites the @main of `text` into
// a well-typed function whose printed form holds each of `wants` (for
// rewrites with constants, which have no text form without metadata).
void ExpectRewriteHolds(const std::string& text, const std::vector<std::string>& wants) {
  Function f = Typed(text);
  AlterOpLayoutOptions opts;
  opts.require_type_support = false;
  auto g = AlterOpLayoutFunction(f, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectWellTyped(*g);
  const std::string printed = PrintExpr(*g);
  for (const std::string& want : wants) {
    EXPECT_NE(printed.find(want), std::string::npos) << want << "\n" << printed;
  }
}

// The rewritten @main of `text` computes what the original does on `args`
// (`size` output values).
void ExpectSameValues(const std::string& text, const std::vector<Ref<const HostTensor>>& args,
                      size_t size) {
  Function f = Typed(text);
  auto g = AlterOpLayoutFunction(f);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_NE(g->get(), f.get());
  std::vector<double> want = RunMain(f, args);
  std::vector<double> got = RunMain(*g, args);
  ASSERT_EQ(want.size(), size);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-3) << i;
}

// 4 output channels per group (ResNeXt's first stage): pairs of groups
// merge into groups of 8 with a block-diagonal weight (the 8-wide block
// merges 2 groups, the 16-wide one would merge 4), and the merged program
// computes what the original does.
TEST(AlterOpLayoutTest, NarrowGroupsMergeIntoBlocks) {
  const char* text = R"(
def @main(%x: Tensor[(1, 32, 6, 6), float32], %w: Tensor[(32, 4, 3, 3), float32]) {
  nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], groups=8)
}
)";
  ExpectRewriteHolds(text, {"layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\")",
                            "reshape(%w, newshape=[4, 2, 4, 1, 4, 3, 3])", "newshape=[32, 8, 3, 3]",
                            "dst_layout=\"OIHW8i8o\"", "groups=4", "out_layout=\"NCHW8c\""});
  ExpectSameValues(text, {Filled({1, 32, 6, 6}, 1), Filled({32, 4, 3, 3}, 2)}, 32u * 3 * 3);
}

// Groups that would need more than 4 merged per block (1 output channel per
// group, 2 input channels: 8 per 8-wide block) and groups no block fits
// (12 output channels) are left unblocked.
TEST(AlterOpLayoutTest, GroupsThatFitNoBlockAreLeftAlone) {
  const char* text = R"(
def @main(%x: Tensor[(1, 32, 6, 6), float32], %w: Tensor[(16, 2, 3, 3), float32],
          %v: Tensor[(48, 8, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], groups=16);
  %1 = nn.conv2d(%x, %v, groups=4);
  (%0, %1)
}
)";
  ExpectRewrite(text, text);
}

// Channel counts whose largest block is under 8 (ShuffleNet's 58: blocks of
// 2) are zero-padded to vector blocks: 58 -> 64 as NCHW16c (the 1x1's input
// and output, the depthwise conv's channels and groups), 20 -> 24 as NCHW8c
// (32 would add more than 1/8). The padded program computes the original's
// values.
TEST(AlterOpLayoutTest, NarrowChannelsArePaddedToVectorBlocks) {
  const char* text = R"(
def @main(%x: Tensor[(1, 58, 6, 6), float32], %w: Tensor[(58, 58, 1, 1), float32],
          %d: Tensor[(58, 1, 3, 3), float32], %v: Tensor[(20, 58, 1, 1), float32]) {
  %0 = nn.relu(nn.conv2d(%x, %w));
  %1 = nn.conv2d(%0, %d, padding=[1, 1], groups=58);
  nn.conv2d(%1, %v)
}
)";
  ExpectRewriteHolds(text, {"pad_width=[[0, 0], [0, 6], [0, 0], [0, 0]]",
                            "kernel_layout=\"OIHW16i16o\"",
                            "groups=64, data_layout=\"NCHW16c\", kernel_layout=\"OIHW1i16o\"",
                            "kernel_layout=\"OIHW16i8o\", out_layout=\"NCHW8c\"",
                            "strided_slice(%", "end=[20]"});
  Function f = Typed(text);
  auto g = AlterOpLayoutFunction(f);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(PrintExpr(*g).find("NCHW2c"), std::string::npos) << PrintExpr(*g);
  ExpectSameValues(text,
                   {Filled({1, 58, 6, 6}, 1), Filled({58, 58, 1, 1}, 2), Filled({58, 1, 3, 3}, 3),
                    Filled({20, 58, 1, 1}, 4)},
                   20u * 6 * 6);
}

// The zero channels and the group mask are float32 constants: a float16
// grouped convolution stays unblocked, and float16 narrow channels keep
// their small blocks (no pad), both well typed.
TEST(AlterOpLayoutTest, PaddingAndMergingAreForFloat32Only) {
  const char* grouped = R"(
def @main(%x: Tensor[(1, 32, 6, 6), float16], %w: Tensor[(32, 4, 3, 3), float16]) {
  nn.conv2d(%x, %w, padding=[1, 1], groups=8)
}
)";
  ExpectRewrite(grouped, grouped);
  ExpectRewriteHolds(R"(
def @main(%x: Tensor[(1, 58, 6, 6), float16], %w: Tensor[(58, 58, 1, 1), float16]) {
  nn.conv2d(%x, %w)
}
)",
                     {"dst_layout=\"NCHW2c\"", "kernel_layout=\"OIHW2i2o\""});
}

// Channels that no factor divides (3 input channels) leave the conv as it is;
// the residual add with a same-typed NCHW tensor transforms that operand.
// 17 input channels: no block divides them and they are too many for one block.
TEST(AlterOpLayoutTest, UnblockableConvAndResidual) {
  ExpectRewrite(R"(
def @main(%x: Tensor[(1, 17, 8, 8), float32], %w1: Tensor[(16, 17, 3, 3), float32],
          %w2: Tensor[(16, 16, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = nn.conv2d(%0, %w2);
  add(%1, %0)
}
)",
                R"(
def @main(%x: Tensor[(1, 17, 8, 8), float32], %w1: Tensor[(16, 17, 3, 3), float32],
          %w2: Tensor[(16, 16, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  %1 = layout_transform(%0, src_layout="NCHW", dst_layout="NCHW16c");
  %2 = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW16i16o");
  %3 = nn.conv2d(%1, %2, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  %4 = add(%3, %1);
  layout_transform(%4, src_layout="NCHW16c", dst_layout="NCHW")
}
)");
}

// An RGB stem (3 input channels) is blocked by all of its channels (NCHW3c),
// and a bias follows the blocked layout as a [1, C/16, 1, 1, 16] vector.
TEST(AlterOpLayoutTest, FewChannelStemAndBiasStayBlocked) {
  ExpectRewrite(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w1: Tensor[(16, 3, 3, 3), float32],
          %b: Tensor[(16,), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1]);
  nn.relu(nn.bias_add(%0, %b))
}
)",
                R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w1: Tensor[(16, 3, 3, 3), float32],
          %b: Tensor[(16,), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW3c");
  %1 = layout_transform(%w1, src_layout="OIHW", dst_layout="OIHW3i16o");
  %2 = nn.conv2d(%0, %1, padding=[1, 1], data_layout="NCHW3c", kernel_layout="OIHW3i16o", out_layout="NCHW16c");
  %3 = reshape(%b, newshape=[1, 16, 1, 1]);
  %4 = layout_transform(%3, src_layout="NCHW", dst_layout="NCHW16c");
  %5 = nn.relu(add(%2, %4));
  layout_transform(%5, src_layout="NCHW16c", dst_layout="NCHW")
}
)");
}

// A wide layer whose output channels no block of 16 divides (SqueezeNet's
// 1000 classes = 16 * 62.5) is padded to 1008 with zero filters
// (at most 2% more work) and runs NCHW16c; the bias is padded alike, the
// ReLU and the global pool stay blocked, and the slice back to 1000 channels
// comes only where the layout is restored.
constexpr char kPaddedHead[] = R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w: Tensor[(1000, 16, 1, 1), float32],
          %b: Tensor[(1000,), float32]) {
  %0 = nn.conv2d(%x, %w, channels=1000, kernel_size=[1, 1]);
  %1 = nn.relu(nn.bias_add(%0, %b));
  nn.global_avg_pool2d(%1)
}
)";

TEST(AlterOpLayoutTest, WideOutputChannelsArePaddedToFullBlocks) {
  ExpectRewrite(kPaddedHead, R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w: Tensor[(1000, 16, 1, 1), float32],
          %b: Tensor[(1000,), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  %1 = nn.pad(%w, 0f, pad_width=[[0, 8], [0, 0], [0, 0], [0, 0]]);
  %2 = layout_transform(%1, src_layout="OIHW", dst_layout="OIHW16i16o");
  %3 = nn.conv2d(%0, %2, channels=1008, kernel_size=[1, 1], data_layout="NCHW16c",
                 kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  %4 = reshape(%b, newshape=[1, 1000, 1, 1]);
  %5 = nn.pad(%4, 0f, pad_width=[[0, 0], [0, 8], [0, 0], [0, 0]]);
  %6 = layout_transform(%5, src_layout="NCHW", dst_layout="NCHW16c");
  %7 = nn.relu(add(%3, %6));
  %8 = nn.global_avg_pool2d(%7, layout="NCHW16c", out_layout="NCHW16c");
  %9 = layout_transform(%8, src_layout="NCHW16c", dst_layout="NCHW");
  strided_slice(%9, begin=[0], end=[1000], axes=[1])
}
)");
}

TEST(AlterOpLayoutTest, PaddedChannelsMatchInterpreter) {
  Function f = Typed(kPaddedHead);
  AlterOpLayoutOptions opts;
  opts.require_type_support = false;
  auto g = AlterOpLayoutFunction(f, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_NE(PrintExpr(*g).find("strided_slice"), std::string::npos);
  std::vector<Ref<const HostTensor>> args = {Filled({1, 16, 4, 4}, 4), Filled({1000, 16, 1, 1}, 5),
                                             Filled({1000}, 6)};
  std::vector<double> want = RunMain(f, args);
  std::vector<double> got = RunMain(*g, args);
  ASSERT_EQ(want.size(), 1000u);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
}

// A dilated conv whose weight per output block exceeds the L2 budget (960
// input channels x 3x3 x 16 outputs: 540 KB) runs as 4 convs over 15 input
// blocks each, summed; the sum computes what the conv does. An undilated
// one, or one with a small output, stays one conv.
TEST(AlterOpLayoutTest, LargeDilatedConvIsSummedOverInputChunks) {
  const char* text = R"(
def @main(%x: Tensor[(1, 960, 16, 16), float32], %w: Tensor[(16, 960, 3, 3), float32]) {
  nn.conv2d(%x, %w, padding=[2, 2], dilation=[2, 2])
}
)";
  Function f = Typed(text);
  auto g = AlterOpLayoutFunction(f);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::string printed = PrintExpr(*g);
  size_t convs = 0;
  for (size_t at = printed.find("nn.conv2d("); at != std::string::npos;
       at = printed.find("nn.conv2d(", at + 1)) {
    ++convs;
  }
  EXPECT_EQ(convs, 4u) << printed;
  ExpectSameValues(text, {Filled({1, 960, 16, 16}, 1), Filled({16, 960, 3, 3}, 2)},
                   16u * 16 * 16);
  for (const char* other : {"padding=[1, 1]", "padding=[2, 2], dilation=[2, 2], strides=[2, 2]"}) {
    Function h = Typed(absl::StrCat(R"(
def @main(%x: Tensor[(1, 960, 16, 16), float32], %w: Tensor[(16, 960, 3, 3), float32]) {
  nn.conv2d(%x, %w, )", other, R"()
}
)"));
    auto k = AlterOpLayoutFunction(h);
    ASSERT_TRUE(k.ok()) << k.status();
    const std::string p = PrintExpr(*k);
    EXPECT_EQ(p.find("nn.conv2d("), p.rfind("nn.conv2d(")) << other << "\n" << p;
  }
}

// Narrow layers (24, 40 channels) and those whose padding would exceed 2%
// keep the largest dividing block.
TEST(AlterOpLayoutTest, NarrowOrWastefulChannelsAreNotPadded) {
  for (int oc : {40, 520}) {  // 520 = 16 * 32.5: padding to 528 is 1.5%, padded
    std::string text = absl::StrCat(R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w: Tensor[()", oc, R"(, 16, 1, 1), float32]) {
  nn.conv2d(%x, %w)
}
)");
    Function f = Typed(text);
    AlterOpLayoutOptions opts;
    opts.require_type_support = false;
    auto g = AlterOpLayoutFunction(f, opts);
    ASSERT_TRUE(g.ok()) << g.status();
    std::string printed = PrintExpr(*g);
    if (oc == 40) {
      EXPECT_NE(printed.find("NCHW8c"), std::string::npos) << printed;
      EXPECT_EQ(printed.find("nn.pad"), std::string::npos) << printed;
    } else {
      EXPECT_NE(printed.find("pad_width=[[0, 8]"), std::string::npos) << printed;
      EXPECT_NE(printed.find("end=[520]"), std::string::npos) << printed;
    }
  }
  // 264 = 8 * 33: padding to 272 would be 3% more work; stays NCHW8c.
  Function f = Typed(R"(
def @main(%x: Tensor[(1, 16, 4, 4), float32], %w: Tensor[(264, 16, 1, 1), float32]) {
  nn.conv2d(%x, %w)
}
)");
  AlterOpLayoutOptions opts;
  opts.require_type_support = false;
  auto g = AlterOpLayoutFunction(f, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  std::string printed = PrintExpr(*g);
  EXPECT_NE(printed.find("NCHW8c"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("nn.pad"), std::string::npos) << printed;
}

// Pools and channel concatenation keep the blocked layout: one transform in,
// one out.
TEST(AlterOpLayoutTest, PoolsAndConcatStayBlocked) {
  ExpectRewrite(R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 16, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w);
  %1 = nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2]);
  %2 = nn.avg_pool2d(%0, pool_size=[2, 2], strides=[2, 2]);
  %3 = concatenate((%1, %2), axis=1);
  nn.global_avg_pool2d(%3)
}
)",
                R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 16, 1, 1), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW16i16o");
  %2 = nn.conv2d(%0, %1, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  %3 = nn.max_pool2d(%2, pool_size=[2, 2], strides=[2, 2], layout="NCHW16c", out_layout="NCHW16c");
  %4 = nn.avg_pool2d(%2, pool_size=[2, 2], strides=[2, 2], layout="NCHW16c", out_layout="NCHW16c");
  %5 = concatenate((%3, %4), axis=1);
  %6 = nn.global_avg_pool2d(%5, layout="NCHW16c", out_layout="NCHW16c");
  layout_transform(%6, src_layout="NCHW16c", dst_layout="NCHW")
}
)");
}

// Batch-norm's per-channel scale and shift ([C, 1, 1]) follow the blocked layout.
TEST(AlterOpLayoutTest, ChannelVectorsFollowTheBlockedLayout) {
  ExpectRewrite(R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 16, 1, 1), float32],
          %s: Tensor[(16, 1, 1), float32], %t: Tensor[(1, 16, 1, 1), float32]) {
  add(multiply(nn.conv2d(%x, %w), %s), %t)
}
)",
                R"(
def @main(%x: Tensor[(1, 16, 8, 8), float32], %w: Tensor[(16, 16, 1, 1), float32],
          %s: Tensor[(16, 1, 1), float32], %t: Tensor[(1, 16, 1, 1), float32]) {
  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
  %1 = layout_transform(%w, src_layout="OIHW", dst_layout="OIHW16i16o");
  %2 = nn.conv2d(%0, %1, data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c");
  %3 = reshape(%s, newshape=[1, 16, 1, 1]);
  %4 = multiply(%2, layout_transform(%3, src_layout="NCHW", dst_layout="NCHW16c"));
  %5 = add(%4, layout_transform(%t, src_layout="NCHW", dst_layout="NCHW16c"));
  layout_transform(%5, src_layout="NCHW16c", dst_layout="NCHW")
}
)");
}

// With the type relation's support (probed), the default options rewrite,
// and the result stays well typed.
TEST(AlterOpLayoutTest, RespectsTypeRelationSupport) {
  Function f = Typed(kChain);
  auto g = AlterOpLayoutFunction(f);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_NE(g->get(), f.get());
  ExpectWellTyped(*g);
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

// For CUDA: a matmul by a constant becomes a dense by its transpose (both
// operands k-major, as wgmma reads them); one by a parameter, or with
// transpose_a, stays.
TEST(AlterOpLayoutTest, CudaMatmulByAConstantBecomesDense) {
  Function f = Typed(R"(
def @main(%x: Tensor[(4, 8), float16], %y: Tensor[(8, 6), float16]) {
  %0 = nn.matmul(%x, meta[Constant][0]);
  %1 = nn.matmul(%x, %y);
  (%0, %1)
}

#[metadata]
meta[Constant][0] = Tensor[(8, 6), float16] b64"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
)");
  AlterOpLayoutOptions opts;
  opts.target = "cuda";
  opts.require_type_support = false;
  auto g = AlterOpLayoutFunction(f, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::string text = PrintExpr((*g)->body);
  EXPECT_NE(text.find("= transpose(%0, axes=[1, 0]);"), std::string::npos) << text;
  EXPECT_NE(text.find("= nn.dense(%x, %1)"), std::string::npos) << text;
  EXPECT_NE(text.find("nn.matmul(%x, %y"), std::string::npos) << text;
  ExpectWellTyped(*g);
  // The same function for the CPU keeps its matmuls.
  auto cpu = AlterOpLayoutFunction(f);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(PrintExpr((*cpu)->body).find("nn.dense"), std::string::npos);
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
