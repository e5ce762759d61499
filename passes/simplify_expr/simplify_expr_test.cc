#include "passes/simplify_expr/simplify_expr.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/printer.h"
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

// DeepLabV3's ASPP: a 3x3 conv with dilation 24 or 36 and as much padding
// over a 16x16 map reads the input through its centre tap only; the outer
// taps read padding at every output position. It becomes a 1x1 conv. With
// dilation 4 on the same map every tap is live and the conv stays.
TEST(SimplifyExprTest, DilatedConvDropsTapsThatReadOnlyPadding) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(1, 8, 16, 16), float32], %w: Tensor[(4, 8, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[24, 24, 24, 24], dilation=[24, 24], kernel_size=[3, 3]);
  %1 = nn.conv2d(%x, %w, padding=[4, 4, 4, 4], dilation=[4, 4]);
  (%0, %1)
})", {SimplifyExpr()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(1, 8, 16, 16), float32], %w: Tensor[(4, 8, 3, 3), float32]) {
  %0 = strided_slice(%w, begin=[1, 1], end=[2, 2], axes=[2, 3]);
  %1 = nn.conv2d(%x, %0, padding=[0, 0, 0, 0], kernel_size=[1, 1]);
  %2 = nn.conv2d(%x, %w, padding=[4, 4, 4, 4], dilation=[4, 4]);
  (%1, %2)
})");
}

// Taps dead for every output position along one axis only: that axis
// shrinks (here to one tap, a 1x1 kernel on H), and where the live taps'
// window starts or ends inside the input (uneven padding: 3 output rows
// read input rows 0-2) the input is sliced to it. NHWC/HWIO alike.
TEST(SimplifyExprTest, DeadTapsAreTrimmedPerAxisAndTheInputSliced) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(1, 10, 6, 8), float32], %w: Tensor[(3, 3, 8, 4), float32]) {
  nn.conv2d(%x, %w, padding=[10, 0, 3, 0], dilation=[10, 1], data_layout="NHWC", kernel_layout="HWIO")
})", {SimplifyExpr()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(1, 10, 6, 8), float32], %w: Tensor[(3, 3, 8, 4), float32]) {
  %0 = strided_slice(%x, begin=[0], end=[3], axes=[1]);
  %1 = strided_slice(%w, begin=[1], end=[2], axes=[0]);
  nn.conv2d(%0, %1, padding=[0, 0, 0, 0], data_layout="NHWC", kernel_layout="HWIO")
})");
}

Ref<const HostTensor> Filled(const std::vector<int64_t>& shape, int seed) {
  auto t = HostTensor::Create(DataType::Float(32), shape);
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < (*t)->num_elements(); ++i)
    (*t)->mutable_data<float>()[i] = static_cast<float>((i * 7 + seed) % 13 - 6) * 0.125f;
  return Ref<const HostTensor>(*t);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct LiveTapCase {
  std::string conv;  // the call, of %x and %w
  std::vector<int64_t> x, w;
  size_t convs;       // conv2d calls after SimplifyExpr (0: not checked)
  bool kept = false;  // the program is left as it is
};

// Convolutions whose taps read padding in bands of output rows and columns
// (dilated, strided, uneven padding, NHWC) are split into per-region convs
// over their live taps where at least half the work was padding (and at
// most 16 regions result), and every rewritten program computes what the
// original does (the interpreter runs both on the same inputs).
TEST(SimplifyExprTest, ConvSplitByLiveTapsComputesTheSameValues) {
  const std::vector<LiveTapCase> cases = {
      // ASPP dilation 12 on 16x16: bands of rows 0-3 (taps 1-2), 4-11 (tap 1),
      // 12-15 (taps 0-1), likewise columns: 9 regions, 1/4 of the work.
      {"nn.conv2d(%x, %w, padding=[12, 12, 12, 12], dilation=[12, 12])", {1, 4, 16, 16},
       {3, 4, 3, 3}, 9},
      // Dilation 24: only the centre tap reads the input, one 1x1 conv.
      {"nn.conv2d(%x, %w, padding=[24, 24, 24, 24], dilation=[24, 24])", {1, 4, 16, 16},
       {3, 4, 3, 3}, 1},
      // Strided, uneven padding, a non-square kernel and map.
      {"nn.conv2d(%x, %w, strides=[2, 3], padding=[5, 9, 7, 2], dilation=[5, 4])",
       {1, 3, 9, 11}, {2, 3, 4, 5}, 0},
      // A 9x9 kernel at dilation 2 over a 9x9 map (padding 8): 9 bands per
      // axis, 81 regions, more than 16: one conv.
      {"nn.conv2d(%x, %w, padding=[8, 8, 8, 8], dilation=[2, 2])", {1, 2, 9, 9}, {2, 2, 9, 9},
       1, /*kept=*/true},
      // NHWC / HWIO, grouped.
      {"nn.conv2d(%x, %w, padding=[6, 6, 6, 6], dilation=[6, 6], groups=2, "
       "data_layout=\"NHWC\", kernel_layout=\"HWIO\")",
       {1, 7, 7, 4}, {3, 3, 2, 6}, 0},
  };
  for (const LiveTapCase& c : cases) {
    auto shape = [](const std::vector<int64_t>& s) {
      std::string r;
      for (int64_t d : s) r += (r.empty() ? "" : ", ") + std::to_string(d);
      return r;
    };
    const std::string text = "def @main(%x: Tensor[(" + shape(c.x) +
                             "), float32], %w: Tensor[(" + shape(c.w) + "), float32]) { " +
                             c.conv + " }";
    SCOPED_TRACE(text);
    Module before = testing::ParseOrFail(text);
    Module after = RunPasses(text, {SimplifyExpr()});
    const std::string printed = PrintExpr(*after.Lookup("main"));
    if (c.convs != 0) {
      EXPECT_EQ(Count(printed, "nn.conv2d("), c.convs) << printed;
    }
    if (c.kept) {
      EXPECT_EQ(printed, PrintExpr(*before.Lookup("main")));
    } else {
      EXPECT_NE(printed, PrintExpr(*before.Lookup("main")));
    }
    const std::vector<Ref<const HostTensor>> args = {Filled(c.x, 1), Filled(c.w, 2)};
    const std::vector<double> want = testing::RunMainOnInterpreter(before, args);
    const std::vector<double> got = testing::RunMainOnInterpreter(after, args);
    ASSERT_FALSE(want.empty());
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
  }
}

TEST(SimplifyExprTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(testing::TryRunPasses(*m, {SimplifyExpr()}).ok());
}

}  // namespace
}  // namespace kiln::passes
