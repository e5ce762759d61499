// reshape codes, transpose, concatenate, split, strided_slice, take,
// expand_dims, squeeze, broadcast_to, where, layout_transform.
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

V Iota(int n) {
  V v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

TEST(Transform, ReshapeCodes) {
  auto x = F32({2, 3, 4}, Iota(24));
  auto shape = [&](const std::string& ns) {
    return ShapeOf(Ok(EvalText("reshape(%x, newshape=" + ns + ")", {{"x", x}})));
  };
  EXPECT_EQ(shape("[0, -1]"), (S{2, 12}));
  EXPECT_EQ(shape("[-2]"), (S{2, 3, 4}));
  EXPECT_EQ(shape("[-3, 4]"), (S{6, 4}));
  EXPECT_EQ(shape("[-4, 1, 2, -2]"), (S{1, 2, 3, 4}));
  EXPECT_EQ(shape("[6, -1]"), (S{6, 4}));
  EXPECT_EQ(shape("[0, -4, -1, 1, 4]"), (S{2, 3, 1, 4}));
  EXPECT_EQ(Doubles(Ok(EvalText("reshape(%x, newshape=[-1])", {{"x", x}}))), Iota(24));
}

TEST(Transform, Transpose) {
  auto x = F32({2, 3}, Iota(6));
  Value t = Ok(EvalText("transpose(%x)", {{"x", x}}));
  EXPECT_EQ(ShapeOf(t), (S{3, 2}));
  EXPECT_EQ(Doubles(t), (V{0, 3, 1, 4, 2, 5}));
  Value t3 = Ok(EvalText("transpose(%x, axes=[1, -1, 0])", {{"x", F32({2, 1, 2}, Iota(4))}}));
  EXPECT_EQ(ShapeOf(t3), (S{1, 2, 2}));
  EXPECT_EQ(Doubles(t3), (V{0, 2, 1, 3}));
}

TEST(Transform, ConcatenateAndSplit) {
  Value c = Ok(EvalText("concatenate((%a, %b), axis=1)",
                        {{"a", F32({2, 1}, {1, 2})}, {"b", F32({2, 2}, {3, 4, 5, 6})}}));
  EXPECT_EQ(Doubles(c), (V{1, 3, 4, 2, 5, 6}));
  Value s = Ok(EvalText("split(%x, sections=2, axis=1)", {{"x", F32({1, 4}, Iota(4))}}));
  ASSERT_EQ(s.fields().size(), 2u);
  EXPECT_EQ(Doubles(s.fields()[1]), (V{2, 3}));
  Value si = Ok(EvalText("split(%x, indices=[1, 3])", {{"x", F32({5}, Iota(5))}}));
  ASSERT_EQ(si.fields().size(), 3u);
  EXPECT_EQ(Doubles(si.fields()[0]), (V{0}));
  EXPECT_EQ(Doubles(si.fields()[1]), (V{1, 2}));
  EXPECT_EQ(Doubles(si.fields()[2]), (V{3, 4}));
}

TEST(Transform, StridedSlice) {
  auto x = F32({6}, Iota(6));
  auto run = [&](const std::string& attrs) {
    return Doubles(Ok(EvalText("strided_slice(%x, " + attrs + ")", {{"x", x}})));
  };
  EXPECT_EQ(run("begin=[1], end=[4]"), (V{1, 2, 3}));
  EXPECT_EQ(run("begin=[4], end=[0], strides=[-2]"), (V{4, 2}));
  EXPECT_EQ(run("begin=[-1], end=[-100], strides=[-1]"), (V{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(run("begin=[-2], end=[100]"), (V{4, 5}));
  EXPECT_EQ(run("begin=[1], end=[2], slice_mode=\"size\""), (V{1, 2}));
  EXPECT_EQ(run("begin=[3], end=[1]"), (V{}));
  Value m = Ok(EvalText("strided_slice(%x, begin=[1], end=[3], axes=[1])", {{"x", F32({2, 3}, Iota(6))}}));
  EXPECT_EQ(ShapeOf(m), (S{2, 2}));
  EXPECT_EQ(Doubles(m), (V{1, 2, 4, 5}));
}

TEST(Transform, TakeModes) {
  auto d = F32({3}, {10, 20, 30});
  auto idx = I32({3}, {-1, 0, 5});
  EXPECT_EQ(Doubles(Ok(EvalText("take(%d, %i)", {{"d", d}, {"i", idx}}))), (V{10, 10, 30}));
  EXPECT_EQ(Doubles(Ok(EvalText("take(%d, %i, mode=\"wrap\")", {{"d", d}, {"i", idx}}))), (V{30, 10, 30}));
  auto r = EvalText("take(%d, %i, axis=0, mode=\"fast\")", {{"d", d}, {"i", idx}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("take: index 5 is out of range"), std::string::npos) << r.status();
  auto m = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  Value a1 = Ok(EvalText("take(%d, %i, axis=1)", {{"d", m}, {"i", I32({2}, {2, 0})}}));
  EXPECT_EQ(ShapeOf(a1), (S{2, 2}));
  EXPECT_EQ(Doubles(a1), (V{3, 1, 6, 4}));
  Value b = Ok(EvalText("take(%d, %i, axis=1, batch_dims=1)", {{"d", m}, {"i", I32({2, 1}, {2, 0})}}));
  EXPECT_EQ(ShapeOf(b), (S{2, 1}));
  EXPECT_EQ(Doubles(b), (V{3, 4}));
  EXPECT_EQ(Doubles(Ok(EvalText("take(%d, %i)", {{"d", m}, {"i", I32({2}, {4, 1})}}))), (V{5, 2}));
}

TEST(Transform, ShapeOnlyOps) {
  auto x = F32({2, 1}, {1, 2});
  EXPECT_EQ(ShapeOf(Ok(EvalText("expand_dims(%x, axis=1, num_newaxis=2)", {{"x", x}}))), (S{2, 1, 1, 1}));
  EXPECT_EQ(ShapeOf(Ok(EvalText("squeeze(%x)", {{"x", x}}))), (S{2}));
  Value b = Ok(EvalText("broadcast_to(%x, shape=[2, 3])", {{"x", x}}));
  EXPECT_EQ(Doubles(b), (V{1, 1, 1, 2, 2, 2}));
  Value w = Ok(EvalText("where(less(%x, 1.5f), %x, zeros_like(%x))", {{"x", x}}));
  EXPECT_EQ(Doubles(w), (V{1, 0}));
}

TEST(Transform, LayoutTransformBlocked) {
  auto x = F32({1, 4, 1, 2}, Iota(8));
  Value b = Ok(EvalText("layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW2c\")", {{"x", x}}));
  EXPECT_EQ(ShapeOf(b), (S{1, 2, 1, 2, 2}));
  EXPECT_EQ(Doubles(b), (V{0, 2, 1, 3, 4, 6, 5, 7}));
  Value back = Ok(EvalText(
      "%0 = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW2c\");"
      "layout_transform(%0, src_layout=\"NCHW2c\", dst_layout=\"NCHW\")",
      {{"x", x}}));
  EXPECT_EQ(Doubles(back), Iota(8));
  Value nhwc = Ok(EvalText("layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NHWC\")", {{"x", x}}));
  EXPECT_EQ(ShapeOf(nhwc), (S{1, 1, 2, 4}));
  EXPECT_EQ(Doubles(nhwc), (V{0, 2, 4, 6, 1, 3, 5, 7}));
}

}  // namespace
}  // namespace kiln::interp::testing
