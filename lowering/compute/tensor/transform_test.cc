// Data-movement computes vs the interpreter (numeric_util.h): reshape codes,
// transpose, concatenate, split, strided_slice (negative strides, axes, size
// mode, out-of-range bounds), take (every mode, batch_dims, flattened),
// expand_dims, squeeze, layout_transform.
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/op_attrs.h"
#include "lowering/compute/tensor/numeric_util.h"
#include "lowering/compute/tensor/test_util.h"

namespace kiln::lowering::tensor::testing {
namespace {

TEST(TransformComputeTest, Reshape) {
  const std::vector<std::vector<int64_t>> shapes = {
      {-1, 4}, {0, -1}, {-3, -2}, {-4, 1, 2, -2}, {4, 6}, {24}, {2, -4, -1, 3, 4}, {0, 0, -1},
      {-2}, {3, 2, 2, 2}, {-1}};
  for (const auto& ns : shapes) {
    Attrs a = MakeAttrs<ReshapeAttrs>([&](ReshapeAttrs& r) { r.newshape = ns; });
    for (DataType dt : {kF32, kI8, kBool}) EXPECT_TRUE(CheckOp("reshape", a, {T({2, 3, 4}, dt)}));
  }
  Attrs sym = MakeAttrs<ReshapeAttrs>([&](ReshapeAttrs& r) { r.newshape = {0, -1}; });
  EXPECT_TRUE(CheckOp("reshape", sym, {Sym({3, 4, 2}, {"n", "", ""})}));
  Attrs flat = MakeAttrs<ReshapeAttrs>([&](ReshapeAttrs& r) { r.newshape = {-1}; });
  EXPECT_TRUE(CheckOp("reshape", flat, {Sym({3, 4}, {"n", "m"})}));
}

TEST(TransformComputeTest, Transpose) {
  EXPECT_TRUE(CheckOp("transpose", nullptr, {T({2, 3, 4})}));
  for (const auto& axes : std::vector<std::vector<int64_t>>{{1, 0, 2}, {-1, 0, 1}, {0, 1, 2}, {2, 1, 0}}) {
    Attrs a = MakeAttrs<TransposeAttrs>([&](TransposeAttrs& t) { t.axes = axes; });
    EXPECT_TRUE(CheckOp("transpose", a, {T({2, 3, 4}, kI32)}));
  }
  EXPECT_TRUE(CheckOp("transpose", nullptr, {Sym({3, 5}, {"n", ""})}));
}

TEST(TransformComputeTest, Concatenate) {
  for (int64_t axis : {0, 1, -1, -2}) {
    Attrs a = MakeAttrs<ConcatenateAttrs>([&](ConcatenateAttrs& c) { c.axis = axis; });
    const bool ax1 = axis == 1 || axis == -1;
    EXPECT_TRUE(CheckOp("concatenate", a,
                        {Tuple({T(ax1 ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{3, 2}),
                                T(ax1 ? std::vector<int64_t>{2, 1} : std::vector<int64_t>{1, 2}),
                                T(ax1 ? std::vector<int64_t>{2, 0} : std::vector<int64_t>{0, 2}),
                                T(ax1 ? std::vector<int64_t>{2, 4} : std::vector<int64_t>{4, 2})})}));
  }
  Attrs a0 = MakeAttrs<ConcatenateAttrs>([&](ConcatenateAttrs& c) { c.axis = 0; });
  EXPECT_TRUE(CheckOp("concatenate", a0, {Tuple({T({3}, kI8)})}));
  EXPECT_TRUE(CheckOp("concatenate", a0, {Tuple({Sym({2, 3}, {"n", ""}), Sym({4, 3}, {"m", ""})})}));
  // Many fields (the balanced if_then_else tree; past 16 fields a stage of
  // its own, not vectorized), of uneven widths, along the last and the first axis.
  for (int64_t axis : {1, 0}) {
    Attrs a = MakeAttrs<ConcatenateAttrs>([&](ConcatenateAttrs& c) { c.axis = axis; });
    for (int n : {5, 17, 40}) {
      std::vector<Arg> fields;
      for (int k = 0; k < n; ++k) {
        const int64_t w = 1 + k % 3;
        fields.push_back(T(axis == 1 ? std::vector<int64_t>{2, w} : std::vector<int64_t>{w, 3}));
      }
      EXPECT_TRUE(CheckOp("concatenate", a, {Tuple(fields)})) << n << " fields, axis " << axis;
    }
  }
}

TEST(TransformComputeTest, Split) {
  struct Case {
    int64_t sections;
    std::vector<int64_t> indices;
    int64_t axis;
  };
  for (const Case& c : std::vector<Case>{{2, {}, 0}, {3, {}, 1}, {0, {1, 3}, 2}, {0, {}, 1},
                                         {0, {0, 2, 2}, -1}, {4, {}, -1}, {0, {3}, 1}}) {
    Attrs a = MakeAttrs<SplitAttrs>([&](SplitAttrs& s) {
      s.sections = c.sections;
      s.indices = c.indices;
      s.axis = c.axis;
    });
    EXPECT_TRUE(CheckOp("split", a, {T({2, 3, 4}, kI32)}));
  }
  Attrs sym = MakeAttrs<SplitAttrs>([&](SplitAttrs& s) { s.indices = {1}; });
  EXPECT_TRUE(CheckOp("split", sym, {Sym({5, 2}, {"n", ""})}));
}

Attrs Slice(std::vector<int64_t> b, std::vector<int64_t> e, std::optional<std::vector<int64_t>> s,
            std::optional<std::vector<int64_t>> axes = std::nullopt, std::string mode = "end") {
  return MakeAttrs<StridedSliceAttrs>([&](StridedSliceAttrs& a) {
    a.begin = b;
    a.end = e;
    a.strides = s;
    a.axes = axes;
    a.slice_mode = mode;
  });
}

TEST(TransformComputeTest, StridedSlice) {
  const std::vector<Attrs> cases = {
      Slice({1}, {3}, std::nullopt),
      Slice({0, 1, 1}, {2, 3, 4}, std::vector<int64_t>{1, 1, 2}),
      Slice({-1}, {-100}, std::vector<int64_t>{-1}),
      Slice({5, -1}, {-10, 0}, std::vector<int64_t>{-1, -2}),
      Slice({0, 0, 3}, {2, 3, 0}, std::vector<int64_t>{1, 1, -1}),
      Slice({1, 0}, {3, 2}, std::nullopt, std::vector<int64_t>{2, 0}),
      Slice({3, 1}, {0, 2}, std::vector<int64_t>{-2}, std::vector<int64_t>{-1, 0}),
      Slice({0, 1}, {-1, 2}, std::nullopt, std::nullopt, "size"),
      Slice({1, 1, 1}, {1, -1, 10}, std::vector<int64_t>{5, 5, 5}, std::nullopt, "size"),
      Slice({-100}, {100}, std::nullopt),
      Slice({2}, {1}, std::nullopt),  // empty
      Slice({}, {}, std::vector<int64_t>{1, -1}),
      Slice({10, -10}, {20, -20}, std::vector<int64_t>{1, -1}),
  };
  for (const Attrs& a : cases) {
    EXPECT_TRUE(CheckOp("strided_slice", a, {T({2, 3, 4})}));
  }
  EXPECT_TRUE(CheckOp("strided_slice", Slice({1, 0}, {3, 2}, std::nullopt), {Sym({4, 5}, {"", "m"})}));
  EXPECT_TRUE(CheckOp("strided_slice", Slice({1}, {-1}, std::nullopt), {Sym({4, 5}, {"n", ""})}));
}

Attrs Take(std::optional<int64_t> axis, std::string mode, int64_t batch_dims = 0) {
  return MakeAttrs<TakeAttrs>([&](TakeAttrs& t) {
    t.axis = axis;
    t.mode = mode;
    t.batch_dims = batch_dims;
  });
}

TEST(TransformComputeTest, Take) {
  const std::vector<double> wild = {-9, -4, -3, -1, 0, 2, 3, 4, 7, 100};
  const std::vector<double> fast = {-3, -1, 0, 2, 1, -2, 2, 0, -1, 1};
  for (const char* mode : {"clip", "wrap"}) {
    EXPECT_TRUE(CheckOp("take", Take(1, mode), {T({2, 3, 4}), T({2, 5}, kI32, wild)}));
    EXPECT_TRUE(CheckOp("take", Take(std::nullopt, mode), {T({2, 3}), T({10}, kI64, wild)}));
    EXPECT_TRUE(CheckOp("take", Take(-1, mode), {T({2, 3, 4}, kI8), T({10}, kI8, wild)}));
    EXPECT_TRUE(CheckOp("take", Take(0, mode), {T({3}), T({}, kI32, {-5})}));
  }
  EXPECT_TRUE(CheckOp("take", Take(1, "fast"), {T({2, 3, 4}), T({10}, kI32, fast)}));
  EXPECT_TRUE(CheckOp("take", Take(std::nullopt, "fast"), {T({3, 1}), T({2, 5}, kI32, fast)}));
  EXPECT_TRUE(CheckOp("take", Take(0, "clip"), {T({3, 2}), T({4}, kU8, {0, 2, 3, 255})}));
  // batch_dims: indices [2, 3] on data [2, 4, 5], axis 1 -> [2, 3, 5].
  for (const char* mode : {"clip", "wrap"}) {
    EXPECT_TRUE(CheckOp("take", Take(1, mode, 1), {T({2, 4, 5}), T({2, 3}, kI32, {0, 3, -1, 5, 2, 1})}));
    EXPECT_TRUE(CheckOp("take", Take(2, mode, -1), {T({2, 4, 5}), T({2, 3}, kI32, {0, 3, -1, 5, 2, 1})}));
  }
  EXPECT_TRUE(CheckOp("take", Take(0, "wrap"), {Sym({3, 2}, {"n", ""}), T({4}, kI32, {-1, 0, 5, 2})}));
  EXPECT_TRUE(CheckOp("take", Take(0, "clip"), {Sym({3, 2}, {"n", ""}), T({4}, kI32, {-1, 0, 5, 2})}));
}

TEST(TransformComputeTest, ExpandDimsAndSqueeze) {
  for (int64_t axis : {0, 1, 2, -1, -3}) {
    for (int64_t k : {0, 1, 2}) {
      Attrs a = MakeAttrs<ExpandDimsAttrs>([&](ExpandDimsAttrs& e) {
        e.axis = axis;
        e.num_newaxis = k;
      });
      EXPECT_TRUE(CheckOp("expand_dims", a, {T({2, 3})})) << axis << " " << k;
    }
  }
  EXPECT_TRUE(CheckOp("squeeze", nullptr, {T({1, 3, 1, 2})}));
  for (const auto& axes : std::vector<std::vector<int64_t>>{{0}, {-2}, {0, 2}, {}}) {
    Attrs a = MakeAttrs<SqueezeAttrs>([&](SqueezeAttrs& s) { s.axis = axes; });
    EXPECT_TRUE(CheckOp("squeeze", a, {T({1, 3, 1, 2}, kI32)}));
  }
}

TEST(TransformComputeTest, LayoutTransform) {
  struct Case {
    const char* src;
    const char* dst;
    std::vector<int64_t> shape;
  };
  for (const Case& c : std::vector<Case>{
           {"NCHW", "NCHW4c", {1, 8, 3, 2}},
           {"NCHW4c", "NCHW", {2, 2, 3, 2, 4}},
           {"NCHW4c", "NCHW2c", {1, 2, 2, 3, 4}},
           {"NCHW2c", "NCHW4c", {1, 4, 2, 3, 2}},
           {"NHWC", "NCHW2c", {1, 2, 3, 4}},
           {"NCHW", "NHWC", {2, 3, 4, 5}},
           {"OIHW", "OIHW2i4o", {8, 4, 1, 3}},
           {"OIHW2i4o", "OIHW", {2, 2, 1, 3, 2, 4}},
           {"NC4c", "CN", {2, 3, 4}},
       }) {
    Attrs a = MakeAttrs<LayoutTransformAttrs>([&](LayoutTransformAttrs& l) {
      l.src_layout = c.src;
      l.dst_layout = c.dst;
    });
    EXPECT_TRUE(CheckOp("layout_transform", a, {T(c.shape)})) << c.src << " -> " << c.dst;
  }
}

}  // namespace
}  // namespace kiln::lowering::tensor::testing
