// Tests of reshape, transpose, expand_dims, squeeze, layout_transform, nn.pad.
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "types/rel_test_util.h"

namespace kiln::types::testing {
namespace {

using ::testing::HasSubstr;

Attrs NewShape(std::vector<int64_t> s, bool allowzero = false) {
  return Make<ReshapeAttrs>([&](ReshapeAttrs& a) {
    a.newshape = s;
    a.allowzero = allowzero;
  });
}

TEST(Reshape, Codes) {
  EXPECT_EQ(Infer("reshape", {T("2, 3, 4")}, NewShape({-1})), "Tensor[(24,), float32]");
  EXPECT_EQ(Infer("reshape", {T("2, 3, 4")}, NewShape({6, -1})), "Tensor[(6, 4), float32]");
  EXPECT_EQ(Infer("reshape", {T("2, 3, 4")}, NewShape({0, -1})), "Tensor[(2, 12), float32]");
  EXPECT_EQ(Infer("reshape", {T("2, 3, 4")}, NewShape({-2})), "Tensor[(2, 3, 4), float32]");
  // A literal consumes an input position: -2 then copies dims 1 and 2.
  EXPECT_EQ(Infer("reshape", {T("2, 3, 4")}, NewShape({2, -2})), "Tensor[(2, 3, 4), float32]");
  EXPECT_THAT(Infer("reshape", {T("2, 3, 4")}, NewShape({4, -2})),
              HasSubstr("24 elements vs 48"));
  EXPECT_EQ(Infer("reshape", {T("2, 3, 4")}, NewShape({-3, 4})), "Tensor[(6, 4), float32]");
  EXPECT_EQ(Infer("reshape", {T("2, 3, 4")}, NewShape({0, -3})), "Tensor[(2, 12), float32]");
  EXPECT_EQ(Infer("reshape", {T("2, 3, 4")}, NewShape({-4, 1, 2, -2})),
            "Tensor[(1, 2, 3, 4), float32]");
  EXPECT_EQ(Infer("reshape", {T("2, 3, 4")}, NewShape({-4, -1, 2, 0, 0})),
            "Tensor[(1, 2, 3, 4), float32]");
  EXPECT_EQ(Infer("reshape", {T("6, 4")}, NewShape({-4, 2, -1, -1})),
            "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(Infer("reshape", {T("0, 3")}, NewShape({0, 3}, true)), "Tensor[(0, 3), float32]");
  EXPECT_EQ(Infer("reshape", {T("2, 3")}, NewShape({0, 3})), "Tensor[(2, 3), float32]");
}

TEST(Reshape, Symbolic) {
  EXPECT_EQ(Infer("reshape", {T("n, 12, 64")}, NewShape({0, -1})), "Tensor[(n, 768), float32]");
  EXPECT_EQ(Infer("reshape", {T("n, 12, 64")}, NewShape({-1, 64})),
            "Tensor[((n * 12), 64), float32]");
  EXPECT_EQ(Infer("reshape", {T("n, 768")}, NewShape({0, 12, 64})),
            "Tensor[(n, 12, 64), float32]");
  EXPECT_EQ(Infer("reshape", {T("n, 768")}, NewShape({0, -1, 64})),
            "Tensor[(n, 12, 64), float32]");
  EXPECT_EQ(Infer("reshape", {T("n, 5")}, NewShape({-1, 2})),
            "Tensor[(((n * 5) / 2), 2), float32]");
  EXPECT_EQ(Infer("reshape", {T("n, s, 768")}, NewShape({0, 0, 12, -1})),
            "Tensor[(n, s, 12, 64), float32]");
  EXPECT_EQ(Infer("reshape", {T("n, s, 12, 64")}, NewShape({0, 0, -1})),
            "Tensor[(n, s, 768), float32]");
  EXPECT_EQ(Infer("reshape", {T("n, s, 12, 64")}, NewShape({-3, -1})),
            "Tensor[((n * s), 768), float32]");
  EXPECT_EQ(Infer("reshape", {T("?, 4")}, NewShape({-1})), "Tensor[(?,), float32]");
  EXPECT_EQ(Infer("reshape", {T("?, 4")}, NewShape({0, 2, 2})), "Tensor[(?, 2, 2), float32]");
}

TEST(Reshape, Errors) {
  EXPECT_EQ(Infer("reshape", {T("2, 3")}, NewShape({4})),
            "error: reshape: cannot reshape Tensor[(2, 3), float32] with newshape [4]: 6 "
            "elements vs 4");
  EXPECT_THAT(Infer("reshape", {T("2, 3")}, NewShape({5, -1})),
              HasSubstr("6 remaining elements do not divide by 5"));
  EXPECT_THAT(Infer("reshape", {T("2, 3")}, NewShape({-1, -1})), HasSubstr("more than one -1"));
  EXPECT_THAT(Infer("reshape", {T("2, 3")}, NewShape({0, 0, 0})),
              HasSubstr("newshape[2]=0 refers to input dim 2, which does not exist"));
  EXPECT_THAT(Infer("reshape", {T("2, 3")}, NewShape({-5})), HasSubstr("invalid code -5"));
  EXPECT_THAT(Infer("reshape", {T("2, 3")}, NewShape({0, -3})),
              HasSubstr("newshape[1]=-3 refers to input dim 2"));
  EXPECT_THAT(Infer("reshape", {T("6")}, NewShape({-4, 4, -1})),
              HasSubstr("input dim 0 (6) cannot be split into 4 x -1"));
  EXPECT_THAT(Infer("reshape", {T("6")}, NewShape({-4, -1, -1})),
              HasSubstr("one may be -1"));
  EXPECT_THAT(Infer("reshape", {T("6")}, NewShape({-4, 2})), HasSubstr("followed by two sizes"));
  EXPECT_THAT(Infer("reshape", {T("0, 3")}, NewShape({0, -1}, true)),
              HasSubstr("cannot infer -1 next to a 0-size dim"));
}

Attrs Axes(std::optional<std::vector<int64_t>> axes) {
  return Make<TransposeAttrs>([&](TransposeAttrs& a) { a.axes = axes; });
}

TEST(Transpose, Axes) {
  EXPECT_EQ(Infer("transpose", {T("n, 3, 4")}), "Tensor[(4, 3, n), float32]");
  EXPECT_EQ(Infer("transpose", {T("n, 3, 4")}, Axes(std::vector<int64_t>{0, 2, 1})),
            "Tensor[(n, 4, 3), float32]");
  EXPECT_EQ(Infer("transpose", {T("n, 3, 4")}, Axes(std::vector<int64_t>{-1, 0, 1})),
            "Tensor[(4, n, 3), float32]");
  EXPECT_THAT(Infer("transpose", {T("n, 3, 4")}, Axes(std::vector<int64_t>{0, 0, 1})),
              HasSubstr("not a permutation (axis 0 repeats)"));
  EXPECT_THAT(Infer("transpose", {T("n, 3, 4")}, Axes(std::vector<int64_t>{0, 1})),
              HasSubstr("must list all 3 axes"));
  EXPECT_THAT(Infer("transpose", {T("n, 3, 4")}, Axes(std::vector<int64_t>{0, 1, 3})),
              HasSubstr("axes entry 3 is out of range for a 3-D tensor"));
}

TEST(ExpandDims, Axis) {
  auto ed = [](int64_t axis, int64_t n) {
    return Make<ExpandDimsAttrs>([=](ExpandDimsAttrs& a) {
      a.axis = axis;
      a.num_newaxis = n;
    });
  };
  EXPECT_EQ(Infer("expand_dims", {T("2, 3")}, ed(1, 2)), "Tensor[(2, 1, 1, 3), float32]");
  EXPECT_EQ(Infer("expand_dims", {T("2, 3")}, ed(-1, 1)), "Tensor[(2, 3, 1), float32]");
  EXPECT_EQ(Infer("expand_dims", {T("2, 3")}, ed(-3, 1)), "Tensor[(1, 2, 3), float32]");
  EXPECT_EQ(Infer("expand_dims", {T("")}, ed(0, 1)), "Tensor[(1,), float32]");
  EXPECT_EQ(Infer("expand_dims", {T("2")}, ed(0, 0)), "Tensor[(2,), float32]");
  EXPECT_THAT(Infer("expand_dims", {T("2, 3")}, ed(3, 1)),
              HasSubstr("axis 3 is out of range for a 2-D tensor (expected -3..2)"));
  EXPECT_THAT(Infer("expand_dims", {T("2, 3")}, ed(0, -1)), HasSubstr("num_newaxis must be >= 0"));
}

TEST(Squeeze, Axis) {
  auto sq = [](std::optional<std::vector<int64_t>> axis) {
    return Make<SqueezeAttrs>([=](SqueezeAttrs& a) { a.axis = axis; });
  };
  EXPECT_EQ(Infer("squeeze", {T("1, 3, 1, n")}), "Tensor[(3, n), float32]");
  EXPECT_EQ(Infer("squeeze", {T("1, 3, 1, n")}, sq(std::vector<int64_t>{0})),
            "Tensor[(3, 1, n), float32]");
  EXPECT_EQ(Infer("squeeze", {T("1, 3, 1")}, sq(std::vector<int64_t>{-1, 0})),
            "Tensor[(3,), float32]");
  EXPECT_EQ(Infer("squeeze", {T("?, 1")}, sq(std::vector<int64_t>{0})), "Tensor[(1,), float32]");
  EXPECT_EQ(Infer("squeeze", {T("1, 1")}), "Tensor[(), float32]");
  EXPECT_THAT(Infer("squeeze", {T("1, 3")}, sq(std::vector<int64_t>{1})),
              HasSubstr("cannot squeeze axis 1 of Tensor[(1, 3), float32]: its extent is 3"));
  EXPECT_THAT(Infer("squeeze", {T("1, 3")}, sq(std::vector<int64_t>{2})),
              HasSubstr("out of range"));
}

Attrs LT(const char* src, const char* dst) {
  return Make<LayoutTransformAttrs>([=](LayoutTransformAttrs& a) {
    a.src_layout = src;
    a.dst_layout = dst;
  });
}

TEST(LayoutTransform, Blocked) {
  EXPECT_EQ(Infer("layout_transform", {T("1, 32, 56, 56")}, LT("NCHW", "NCHW16c")),
            "Tensor[(1, 2, 56, 56, 16), float32]");
  EXPECT_EQ(Infer("layout_transform", {T("1, 2, 56, 56, 16")}, LT("NCHW16c", "NCHW")),
            "Tensor[(1, 32, 56, 56), float32]");
  EXPECT_EQ(Infer("layout_transform", {T("1, 4, 56, 56, 8")}, LT("NCHW8c", "NHWC16c")),
            "Tensor[(1, 56, 56, 2, 16), float32]");
  EXPECT_EQ(Infer("layout_transform", {T("n, 32, h, w")}, LT("NCHW", "NHWC")),
            "Tensor[(n, h, w, 32), float32]");
  EXPECT_EQ(Infer("layout_transform", {T("1, c, 8, 8")}, LT("NCHW", "NCHW16c")),
            "Tensor[(1, (c / 16), 8, 8, 16), float32]");
  EXPECT_EQ(Infer("layout_transform", {T("64, 32, 3, 3")}, LT("OIHW", "OIHW4i8o")),
            "Tensor[(8, 8, 3, 3, 4, 8), float32]");
}

TEST(LayoutTransform, Errors) {
  EXPECT_THAT(Infer("layout_transform", {T("1, 30, 8, 8")}, LT("NCHW", "NCHW16c")),
              HasSubstr("axis C has extent 30, which does not divide by 16"));
  EXPECT_THAT(Infer("layout_transform", {T("1, 3, 8, 8")}, LT("NCHW", "NCDHW")),
              HasSubstr("src_layout \"NCHW\" has no axis 'D'"));
  EXPECT_THAT(Infer("layout_transform", {T("1, 3, 8")}, LT("NCHW", "NHWC")),
              HasSubstr("argument 0 (data) has type Tensor[(1, 3, 8), float32]; expected a 4-D "
                        "tensor (src_layout NCHW)"));
  EXPECT_THAT(Infer("layout_transform", {T("1, 2, 8, 8, 4")}, LT("NCHW16c", "NCHW")),
              HasSubstr("expected extent 16 at axis 4"));
  EXPECT_THAT(Infer("layout_transform", {T("1, 3, 8, 8")}, LT("NCHW", "NCHWc")),
              HasSubstr("split axis 'c' needs a positive factor"));
  EXPECT_THAT(Infer("layout_transform", {T("1, 3, 8, 8")}, LT("NCHW", "NCHH")),
              HasSubstr("axis 'H' appears twice"));
  EXPECT_THAT(Infer("layout_transform", {T("1, 3, 8, 8")}, LT("NCHW", "NHW4d")),
              HasSubstr("split axis 'd' has no primal axis 'D'"));
}

Attrs PadW(std::vector<std::vector<int64_t>> w, const char* mode = "constant") {
  return Make<PadAttrs>([=](PadAttrs& a) {
    a.pad_width = w;
    a.pad_mode = mode;
  });
}

TEST(Pad, Shapes) {
  EXPECT_EQ(Infer("nn.pad", {T("1, 3, 224, 224"), T("")}, PadW({{0, 0}, {0, 0}, {3, 3}, {3, 3}})),
            "Tensor[(1, 3, 230, 230), float32]");
  EXPECT_EQ(Infer("nn.pad", {T("n, 4"), MakeIncompleteType()}, PadW({{1, 1}, {0, 2}})),
            "Tensor[((n + 2), 6), float32]");
  EXPECT_EQ(Infer("nn.pad", {T("4"), T("")}, PadW({{3, 3}}, "reflect")), "Tensor[(10,), float32]");
}

TEST(Pad, Errors) {
  EXPECT_THAT(Infer("nn.pad", {T("2, 2"), T("")}, PadW({{1, 1}})),
              HasSubstr("pad_width has 1 pairs; expected one per axis"));
  EXPECT_THAT(Infer("nn.pad", {T("2"), T("")}, PadW({{1, -1}})),
              HasSubstr("pad_width[0] must be [before, after]"));
  EXPECT_THAT(Infer("nn.pad", {T("2"), T("")}, PadW({{1}})), HasSubstr("pad_width[0]"));
  EXPECT_THAT(Infer("nn.pad", {T("2"), T("1")}, PadW({{1, 1}})),
              HasSubstr("argument 1 (pad_value) has type Tensor[(1,), float32]; expected a 0-D"));
  EXPECT_THAT(Infer("nn.pad", {T("2"), T("")}, PadW({{1, 1}}, "wrap")), HasSubstr("pad_mode"));
  EXPECT_THAT(Infer("nn.pad", {T("2"), T("")}, PadW({{2, 0}}, "reflect")),
              HasSubstr("reflect padding [2, 0] of axis 0 must be smaller than its extent 2"));
}

}  // namespace
}  // namespace kiln::types::testing
