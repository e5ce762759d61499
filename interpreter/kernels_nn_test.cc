// conv2d (layouts, padding, groups, strides), dense, matmul, batch_matmul,
// pools (padding, ceil_mode, count_include_pad) and global pools.
#include "gtest/gtest.h"
#include "interpreter/test_util.h"

namespace kiln::interp::testing {
namespace {

using V = std::vector<double>;
using S = std::vector<int64_t>;

Value Ok(absl::StatusOr<Value> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Value();
}

const V kNine = {1, 2, 3, 4, 5, 6, 7, 8, 9};

TEST(Conv2D, NoPadding) {
  Value v = Ok(EvalText("nn.conv2d(%x, %w)", {{"x", F32({1, 1, 3, 3}, kNine)},
                                             {"w", F32({1, 1, 2, 2}, {1, 1, 1, 1})}}));
  EXPECT_EQ(ShapeOf(v), (S{1, 1, 2, 2}));
  EXPECT_EQ(Doubles(v), (V{12, 16, 24, 28}));
}

TEST(Conv2D, PaddingOneWithKnownKernel) {
  Value v = Ok(EvalText("nn.conv2d(%x, %w, padding=[1, 1])",
                        {{"x", F32({1, 1, 3, 3}, kNine)}, {"w", F32({1, 1, 3, 3}, V(9, 1.0))}}));
  EXPECT_EQ(Doubles(v), (V{12, 21, 16, 27, 45, 33, 24, 39, 28}));
  // A kernel that picks the top-left neighbour shifts the image.
  V shift(9, 0.0);
  shift[0] = 1;
  EXPECT_EQ(Doubles(Ok(EvalText("nn.conv2d(%x, %w, padding=[1, 1])",
                                {{"x", F32({1, 1, 3, 3}, kNine)}, {"w", F32({1, 1, 3, 3}, shift)}}))),
            (V{0, 0, 0, 0, 1, 2, 0, 4, 5}));
}

TEST(Conv2D, StridesAndAsymmetricPadding) {
  // padding (top, left, bottom, right) = (1, 0, 0, 0), stride 2, 2x2 ones.
  Value v = Ok(EvalText("nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 0, 0, 0])",
                        {{"x", F32({1, 1, 3, 3}, kNine)}, {"w", F32({1, 1, 2, 2}, {1, 1, 1, 1})}}));
  EXPECT_EQ(ShapeOf(v), (S{1, 1, 2, 1}));
  EXPECT_EQ(Doubles(v), (V{3, 24}));
}

TEST(Conv2D, NhwcHwioMatchesNchw) {
  Value v = Ok(EvalText("nn.conv2d(%x, %w, data_layout=\"NHWC\", kernel_layout=\"HWIO\")",
                        {{"x", F32({1, 3, 3, 1}, kNine)}, {"w", F32({2, 2, 1, 1}, {1, 1, 1, 1})}}));
  EXPECT_EQ(ShapeOf(v), (S{1, 2, 2, 1}));
  EXPECT_EQ(Doubles(v), (V{12, 16, 24, 28}));
}

TEST(Conv2D, DepthwiseGroupsAndOutDtype) {
  Value v = Ok(EvalText("nn.conv2d(%x, %w, groups=2)",
                        {{"x", F32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
                         {"w", F32({2, 1, 1, 1}, {2, 3})}}));
  EXPECT_EQ(Doubles(v), (V{2, 4, 6, 8, 15, 18, 21, 24}));
  // uint8 x int8 accumulating into int32.
  Value q = Ok(EvalText("nn.conv2d(%x, %w, out_dtype=int32)",
                        {{"x", MakeT(DataType::UInt(8), {1, 1, 1, 2}, {200, 100})},
                         {"w", MakeT(DataType::Int(8), {1, 1, 1, 2}, {-100, 100})}}));
  EXPECT_EQ(q.tensor()->dtype(), DataType::Int(32));
  EXPECT_EQ(Doubles(q), (V{-10000}));
}

V Iota(int64_t n, double scale) {
  V v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>((i * 7) % 13 - 6) * scale;
  return v;
}

// The blocked conv, fed layout_transform'ed inputs and transformed back,
// gives exactly the NCHW conv's values.
void ExpectBlockedMatchesNchw(const S& xs, const S& ws, const std::string& attrs, const char* dl,
                              const char* kl, const char* ol) {
  auto x = F32(xs, Iota(xs[0] * xs[1] * xs[2] * xs[3], 0.5));
  auto w = F32(ws, Iota(ws[0] * ws[1] * ws[2] * ws[3], 0.25));
  Value plain = Ok(EvalText("nn.conv2d(%x, %w" + attrs + ")", {{"x", x}, {"w", w}}));
  const std::string text = std::string("%0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"") +
                           dl + "\");\n%1 = layout_transform(%w, src_layout=\"OIHW\", dst_layout=\"" + kl +
                           "\");\n%2 = nn.conv2d(%0, %1" + attrs + ", data_layout=\"" + dl +
                           "\", kernel_layout=\"" + kl + "\", out_layout=\"" + ol +
                           "\");\nlayout_transform(%2, src_layout=\"" + ol + "\", dst_layout=\"NCHW\")";
  Value blocked = Ok(EvalText(text, {{"x", x}, {"w", w}}));
  EXPECT_EQ(ShapeOf(blocked), ShapeOf(plain)) << text;
  EXPECT_EQ(Doubles(blocked), Doubles(plain)) << text;
}

TEST(Conv2D, BlockedLayoutsMatchNchw) {
  ExpectBlockedMatchesNchw({1, 16, 4, 4}, {16, 16, 3, 3}, ", padding=[1, 1]", "NCHW16c",
                           "OIHW16i16o", "NCHW16c");
  ExpectBlockedMatchesNchw({2, 8, 5, 6}, {12, 8, 3, 3}, ", strides=[2, 1], padding=[1, 0]",
                           "NCHW4c", "OIHW2i4o", "NCHW3c");
  ExpectBlockedMatchesNchw({1, 8, 5, 5}, {4, 8, 3, 3}, ", dilation=[2, 2]", "NCHW2c", "OIHW8i",
                           "NCHW");
  // Grouped and depthwise.
  ExpectBlockedMatchesNchw({1, 8, 4, 4}, {8, 4, 3, 3}, ", padding=[1, 1], groups=2", "NCHW4c",
                           "OIHW2i4o", "NCHW8c");
  ExpectBlockedMatchesNchw({1, 8, 4, 4}, {8, 1, 3, 3}, ", padding=[1, 1], groups=8", "NCHW4c",
                           "OIHW1i4o", "NCHW4c");
}

TEST(Conv2D, BlockedLayoutErrors) {
  auto r = EvalText("nn.conv2d(%x, %w, data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\")",
                    {{"x", F32({1, 1, 4, 4, 16}, V(256, 1.0))}, {"w", F32({16, 16, 3, 3}, V(2304, 1.0))}});
  EXPECT_FALSE(r.ok());
}

TEST(DenseMatmul, Values) {
  EXPECT_EQ(Doubles(Ok(EvalText("nn.dense(%x, %w)", {{"x", F32({1, 2}, {1, 2})},
                                                     {"w", F32({3, 2}, {1, 0, 0, 1, 1, 1})}}))),
            (V{1, 2, 3}));
  auto a = F32({2, 2}, {1, 2, 3, 4});
  auto b = F32({2, 2}, {5, 6, 7, 8});
  EXPECT_EQ(Doubles(Ok(EvalText("nn.matmul(%a, %b)", {{"a", a}, {"b", b}}))), (V{19, 22, 43, 50}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.matmul(%a, %b, transpose_b=true)", {{"a", a}, {"b", b}}))),
            (V{17, 23, 39, 53}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.matmul(%a, %b, transpose_a=true)", {{"a", a}, {"b", b}}))),
            (V{26, 30, 38, 44}));
  auto x = F32({1, 2, 2}, {1, 2, 3, 4});
  auto y2 = F32({2, 2, 2}, {5, 6, 7, 8, 1, 0, 0, 1});
  Value bm = Ok(EvalText("nn.batch_matmul(%x, %y)", {{"x", x}, {"y", y2}}));
  EXPECT_EQ(ShapeOf(bm), (S{2, 2, 2}));
  EXPECT_EQ(Doubles(bm), (V{17, 23, 39, 53, 1, 2, 3, 4}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.batch_matmul(%x, %y, transpose_b=false)",
                                {{"x", x}, {"y", F32({1, 2, 2}, {5, 6, 7, 8})}}))),
            (V{19, 22, 43, 50}));
}

TEST(Pool, MaxPool) {
  V sixteen;
  for (int i = 1; i <= 16; ++i) sixteen.push_back(i);
  EXPECT_EQ(Doubles(Ok(EvalText("nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2])",
                                {{"x", F32({1, 1, 4, 4}, sixteen)}}))),
            (V{6, 8, 14, 16}));
  // Padding never wins a max, even over negative values.
  EXPECT_EQ(Doubles(Ok(EvalText("nn.max_pool2d(%x, pool_size=[2, 2], padding=[1, 1])",
                                {{"x", F32({1, 1, 1, 1}, {-5})}}))),
            (V{-5, -5, -5, -5}));
}

TEST(Pool, AvgPoolCeilModeAndPadding) {
  auto x = F32({1, 1, 3, 3}, kNine);
  Value c = Ok(EvalText("nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2], ceil_mode=true)", {{"x", x}}));
  EXPECT_EQ(ShapeOf(c), (S{1, 1, 2, 2}));
  EXPECT_EQ(Doubles(c), (V{3, 4.5, 7.5, 9}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2], padding=[1, 1])",
                                {{"x", x}}))),
            (V{1, 2.5, 5.5, 7}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2], padding=[1, 1], "
                                "count_include_pad=true)",
                                {{"x", x}}))),
            (V{0.25, 1.25, 2.75, 7}));
}

TEST(Pool, GlobalPools) {
  auto x = F32({1, 2, 2, 1}, {1, 2, 3, 6});
  EXPECT_EQ(Doubles(Ok(EvalText("nn.global_avg_pool2d(%x)", {{"x", x}}))), (V{1.5, 4.5}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.global_max_pool2d(%x)", {{"x", x}}))), (V{2, 6}));
  Value nhwc = Ok(EvalText("nn.global_avg_pool2d(%x, layout=\"NHWC\")", {{"x", x}}));
  EXPECT_EQ(ShapeOf(nhwc), (S{1, 1, 1, 1}));
  EXPECT_EQ(Doubles(nhwc), (V{3}));
}

}  // namespace
}  // namespace kiln::interp::testing
