// Tests of concatenate, split, strided_slice and take.
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "types/rel_test_util.h"

namespace kiln::types::testing {
namespace {

using ::testing::HasSubstr;

Attrs Axis(int64_t axis) {
  return Make<ConcatenateAttrs>([=](ConcatenateAttrs& a) { a.axis = axis; });
}

TEST(Concatenate, Shapes) {
  EXPECT_EQ(Infer("concatenate", {MakeTupleType({T("n, 3"), T("n, 5")})}, Axis(1)),
            "Tensor[(n, 8), float32]");
  EXPECT_EQ(Infer("concatenate", {MakeTupleType({T("n, 3"), T("n, 5"), T("n, 1")})}, Axis(-1)),
            "Tensor[(n, 9), float32]");
  EXPECT_EQ(Infer("concatenate", {MakeTupleType({T("2, 3"), T("4, 3")})}),
            "Tensor[(6, 3), float32]");
  EXPECT_EQ(Infer("concatenate", {MakeTupleType({T("n, 3"), T("m, 3")})}),
            "Tensor[((n + m), 3), float32]");
  EXPECT_EQ(Infer("concatenate", {MakeTupleType({T("2, ?"), T("2, 3")})}),
            "Tensor[(4, 3), float32]");
  EXPECT_EQ(Infer("concatenate", {MakeTupleType({T("2")})}), "Tensor[(2,), float32]");
}

TEST(Concatenate, WaitsAndErrors) {
  EXPECT_EQ(Infer("concatenate", {MakeIncompleteType()}), "unsolved");
  EXPECT_EQ(Infer("concatenate", {MakeTupleType({T("2"), MakeIncompleteType()})}), "unsolved");
  EXPECT_EQ(Infer("concatenate", {MakeTupleType({T("2, 3"), T("2, 4")})}),
            "error: concatenate: field 1 has type Tensor[(2, 4), float32]; dimension 1 is 4 but "
            "field 0 has 3");
  EXPECT_THAT(Infer("concatenate", {MakeTupleType({T("2"), T("2", "int32")})}),
              HasSubstr("field 1 has type Tensor[(2,), int32]; expected a 1-D tensor of dtype "
                        "float32 like field 0"));
  EXPECT_THAT(Infer("concatenate", {MakeTupleType({T("2"), T("2, 2")})}),
              HasSubstr("expected a 1-D tensor"));
  EXPECT_THAT(Infer("concatenate", {T("2")}),
              HasSubstr("argument 0 (data) has type Tensor[(2,), float32]; expected a tuple of "
                        "tensors"));
  EXPECT_THAT(Infer("concatenate", {MakeTupleType({})}), HasSubstr("a non-empty tuple"));
  EXPECT_THAT(Infer("concatenate", {MakeTupleType({T("2"), T("2")})}, Axis(1)),
              HasSubstr("axis 1 is out of range for a 1-D tensor"));
}

Attrs Sections(int64_t n, int64_t axis = 0) {
  return Make<SplitAttrs>([=](SplitAttrs& a) {
    a.sections = n;
    a.axis = axis;
  });
}
Attrs Indices(std::vector<int64_t> idx, int64_t axis = 0) {
  return Make<SplitAttrs>([=](SplitAttrs& a) {
    a.indices = idx;
    a.axis = axis;
  });
}

TEST(Split, SectionsAndIndices) {
  EXPECT_EQ(Infer("split", {T("6, 4")}, Sections(3)),
            "(Tensor[(2, 4), float32], Tensor[(2, 4), float32], Tensor[(2, 4), float32])");
  EXPECT_EQ(Infer("split", {T("6, 4")}, Indices({2, 5})),
            "(Tensor[(2, 4), float32], Tensor[(3, 4), float32], Tensor[(1, 4), float32])");
  EXPECT_EQ(Infer("split", {T("2, 8")}, Indices({3}, -1)),
            "(Tensor[(2, 3), float32], Tensor[(2, 5), float32])");
  EXPECT_EQ(Infer("split", {T("n, 4")}, Indices({1})),
            "(Tensor[(1, 4), float32], Tensor[((n - 1), 4), float32])");
  EXPECT_EQ(Infer("split", {T("n, 4")}, Sections(2)),
            "(Tensor[((n / 2), 4), float32], Tensor[((n / 2), 4), float32])");
  EXPECT_EQ(Infer("split", {T("3")}, Indices({})), "(Tensor[(3,), float32],)");
}

TEST(Split, Errors) {
  EXPECT_EQ(Infer("split", {T("6, 4")}, Sections(4)),
            "error: split: cannot split axis 0 of extent 6 into 4 equal sections");
  EXPECT_THAT(Infer("split", {T("6, 4")}, Indices({3, 2})), HasSubstr("must ascend"));
  EXPECT_THAT(Infer("split", {T("6, 4")}, Indices({7})), HasSubstr("must ascend within [0, 6]"));
  EXPECT_THAT(Infer("split", {T("6, 4")}, Sections(-1)), HasSubstr("sections must be >= 0"));
  EXPECT_THAT(Infer("split", {T("6, 4")}, Sections(2, 2)), HasSubstr("axis 2 is out of range"));
}

struct Slice {
  Slice(std::vector<int64_t> b, std::vector<int64_t> e,
        std::optional<std::vector<int64_t>> s = std::nullopt,
        std::optional<std::vector<int64_t>> a = std::nullopt, std::string m = "end")
      : begin(std::move(b)), end(std::move(e)), strides(std::move(s)), axes(std::move(a)),
        mode(std::move(m)) {}
  std::vector<int64_t> begin, end;
  std::optional<std::vector<int64_t>> strides, axes;
  std::string mode;
};
Attrs SS(Slice s) {
  return Make<StridedSliceAttrs>([&](StridedSliceAttrs& a) {
    a.begin = s.begin;
    a.end = s.end;
    a.strides = s.strides;
    a.axes = s.axes;
    a.slice_mode = s.mode;
  });
}
std::string SliceOf(const char* shape, Slice s) {
  return Infer("strided_slice", {T(shape)}, SS(std::move(s)));
}

TEST(StridedSlice, NumpySemantics) {
  EXPECT_EQ(SliceOf("10", {{2}, {8}}), "Tensor[(6,), float32]");
  EXPECT_EQ(SliceOf("10", {{2}, {8}, std::vector<int64_t>{3}}), "Tensor[(2,), float32]");
  EXPECT_EQ(SliceOf("10", {{-3}, {}}), "Tensor[(3,), float32]");
  EXPECT_EQ(SliceOf("10", {{2}, {100}}), "Tensor[(8,), float32]");       // end clamped
  EXPECT_EQ(SliceOf("10", {{-100}, {3}}), "Tensor[(3,), float32]");      // begin clamped
  EXPECT_EQ(SliceOf("10", {{5}, {2}}), "Tensor[(0,), float32]");         // empty
  EXPECT_EQ(SliceOf("10", {{-4}, {-1}}), "Tensor[(3,), float32]");
  EXPECT_EQ(SliceOf("10", {{8}, {2}, std::vector<int64_t>{-2}}), "Tensor[(3,), float32]");
  EXPECT_EQ(SliceOf("10", {{}, {}, std::vector<int64_t>{-1}}), "Tensor[(10,), float32]");
  EXPECT_EQ(SliceOf("10", {{-1}, {-100}, std::vector<int64_t>{-1}}), "Tensor[(10,), float32]");
  EXPECT_EQ(SliceOf("10", {{-1}, {-100}, std::vector<int64_t>{-3}}), "Tensor[(4,), float32]");
}

TEST(StridedSlice, AxesAndModes) {
  EXPECT_EQ(SliceOf("4, 6, 8", {{1, 0}, {3, 6}, std::vector<int64_t>{1, 2}}),
            "Tensor[(2, 3, 8), float32]");
  EXPECT_EQ(SliceOf("4, 6, 8", {{2}, {6}, std::nullopt, std::vector<int64_t>{2}}),
            "Tensor[(4, 6, 4), float32]");
  EXPECT_EQ(SliceOf("4, 6, 8", {{2, 0}, {6, 2}, std::vector<int64_t>{2}, std::vector<int64_t>{-1, 0}}),
            "Tensor[(1, 6, 2), float32]");  // axis 2: 2..6 step 2; axis 0: 0..2 step 2
  EXPECT_EQ(SliceOf("4, 6, 8", {{1, 2}, {2, -1}, std::nullopt, std::nullopt, "size"}),
            "Tensor[(2, 4, 8), float32]");
  EXPECT_EQ(SliceOf("4, 6, 8", {{3}, {5}, std::nullopt, std::nullopt, "size"}),
            "Tensor[(1, 6, 8), float32]");  // size clamped at the end
}

TEST(StridedSlice, Symbolic) {
  EXPECT_EQ(SliceOf("n, 6", {{0, 1}, {2147483647, 5}}), "Tensor[(n, 4), float32]");
  EXPECT_EQ(SliceOf("n", {{1}, {2147483647}}), "Tensor[((n - 1),), float32]");
  EXPECT_EQ(SliceOf("n", {{-2}, {2147483647}}), "Tensor[(2,), float32]");
  EXPECT_EQ(SliceOf("n", {{0}, {-1}}), "Tensor[((n - 1),), float32]");
  EXPECT_EQ(SliceOf("n", {{2}, {10}, std::vector<int64_t>{4}}), "Tensor[(2,), float32]");
  EXPECT_EQ(SliceOf("n", {{}, {}, std::vector<int64_t>{2}}), "Tensor[(((n + 1) / 2),), float32]");
  EXPECT_EQ(SliceOf("?", {{1}, {}}), "Tensor[(?,), float32]");
  EXPECT_EQ(SliceOf("n", {{1}, {-1}, std::nullopt, std::nullopt, "size"}),
            "Tensor[((n - 1),), float32]");
}

TEST(StridedSlice, Errors) {
  EXPECT_EQ(SliceOf("10", {{0}, {5}, std::vector<int64_t>{0}}),
            "error: strided_slice: strides [0] contain 0");
  EXPECT_THAT(SliceOf("10", {{0}, {5}, std::nullopt, std::nullopt, "bad"}),
              HasSubstr("slice_mode must be \"end\" or \"size\""));
  EXPECT_THAT(SliceOf("4, 6", {{0, 0}, {1}, std::nullopt, std::vector<int64_t>{0, 1}}),
              HasSubstr("must have one entry per axis"));
  EXPECT_THAT(SliceOf("4, 6", {{0, 0, 0}, {1}}), HasSubstr("more entries than"));
  EXPECT_THAT(SliceOf("4, 6", {{0}, {1}, std::nullopt, std::vector<int64_t>{2}}),
              HasSubstr("axes entry 2 is out of range"));
  EXPECT_THAT(SliceOf("4, 6", {{0, 0}, {1, 1}, std::nullopt, std::vector<int64_t>{1, -1}}),
              HasSubstr("lists axis 1 twice"));
  EXPECT_THAT(SliceOf("4", {{0}, {-2}, std::nullopt, std::nullopt, "size"}),
              HasSubstr("end holds sizes"));
}

Attrs TakeAxis(std::optional<int64_t> axis, int64_t batch_dims = 0) {
  return Make<TakeAttrs>([=](TakeAttrs& a) {
    a.axis = axis;
    a.batch_dims = batch_dims;
  });
}

TEST(Take, Shapes) {
  EXPECT_EQ(Infer("take", {T("5, 3"), T("2", "int32")}, TakeAxis(0)), "Tensor[(2, 3), float32]");
  EXPECT_EQ(Infer("take", {T("5, 3"), T("4, 2", "int64")}), "Tensor[(4, 2), float32]");
  EXPECT_EQ(Infer("take", {T("5, 3"), T("n", "int32")}, TakeAxis(-1)), "Tensor[(5, n), float32]");
  EXPECT_EQ(Infer("take", {T("5, 3"), T("", "int32")}, TakeAxis(1)), "Tensor[(5,), float32]");
  EXPECT_EQ(Infer("take", {T("b, 10, 4"), T("b, 3", "int32")}, TakeAxis(1, 1)),
            "Tensor[(b, 3, 4), float32]");
  EXPECT_EQ(Infer("take", {T("b, 10, 4"), T("b, 3", "int32")}, TakeAxis(1, -1)),
            "Tensor[(b, 3, 4), float32]");
}

TEST(Take, Errors) {
  EXPECT_EQ(Infer("take", {T("5, 3"), T("2")}, TakeAxis(0)),
            "error: take: argument 1 (indices) has type Tensor[(2,), float32]; expected an integer "
            "tensor (int32, int64, ...)");
  EXPECT_THAT(Infer("take", {T("5, 3"), T("2", "int32")}, TakeAxis(2)),
              HasSubstr("axis 2 is out of range"));
  EXPECT_THAT(Infer("take", {T("5, 3"), T("5, 2", "int32")}, TakeAxis(0, 1)),
              HasSubstr("batch_dims 1 must be in [0, 0]"));
  EXPECT_THAT(Infer("take", {T("4, 10"), T("5, 2", "int32")}, TakeAxis(1, 1)),
              HasSubstr("batch dimension 0 differs: data has 4, indices have 5"));
  EXPECT_EQ(Infer("take", {T("5, 3"), MakeIncompleteType()}, TakeAxis(0)), "unsolved");
}

}  // namespace
}  // namespace kiln::types::testing
