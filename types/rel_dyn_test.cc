// Tests of the dynamic operators' relations (rel_dyn.cc).
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "types/rel_test_util.h"

namespace kiln::types::testing {
namespace {

using ::testing::HasSubstr;

TEST(DynReshape, RankFromNewshapeLength) {
  EXPECT_EQ(Infer("dyn.reshape", {T("2, 3, 4"), T("3", "int64")}), "Tensor[(?, ?, ?), float32]");
  EXPECT_EQ(Infer("dyn.reshape", {T("n, 4", "int8"), T("1", "int32")}), "Tensor[(?,), int8]");
  EXPECT_EQ(Infer("dyn.reshape", {T("4"), T("0", "int64")}), "Tensor[(), float32]");
}

TEST(DynReshape, Errors) {
  EXPECT_EQ(Infer("dyn.reshape", {T("2, 3"), T("?", "int64")}),
            "error: dyn.reshape: the length of newshape must be static; got Tensor[(?,), int64] "
            "(make the shape a constant or give it a static length)");
  EXPECT_THAT(Infer("dyn.reshape", {T("2, 3"), T("n", "int64")}),
              HasSubstr("the length of newshape must be static"));
  EXPECT_THAT(Infer("dyn.reshape", {T("2, 3"), T("2")}),
              HasSubstr("argument 1 (newshape) has type Tensor[(2,), float32]; expected a 1-D "
                        "integer tensor (newshape)"));
  EXPECT_THAT(Infer("dyn.reshape", {T("2, 3"), T("2, 1", "int64")}),
              HasSubstr("expected a 1-D integer tensor"));
  EXPECT_EQ(Infer("dyn.reshape", {T("2, 3"), MakeIncompleteType()}), "unsolved");
}

TEST(DynBroadcastTo, Rank) {
  EXPECT_EQ(Infer("dyn.broadcast_to", {T("3", "int32"), T("2", "int64")}),
            "Tensor[(?, ?), int32]");
  EXPECT_THAT(Infer("dyn.broadcast_to", {T("2, 3"), T("1", "int64")}),
              HasSubstr("dyn.broadcast_to: cannot broadcast Tensor[(2, 3), float32] to a 1-D"));
  EXPECT_THAT(Infer("dyn.broadcast_to", {T("3"), T("?", "int64")}),
              HasSubstr("dyn.broadcast_to: the length of shape must be static"));
}

TEST(DynInit, ZerosOnesFull) {
  Attrs i8 = Make<InitOpAttrs>([](InitOpAttrs& a) { a.dtype = DataType::Int(8); });
  EXPECT_EQ(Infer("dyn.zeros", {T("2", "int64")}), "Tensor[(?, ?), float32]");
  EXPECT_EQ(Infer("dyn.ones", {T("3", "int32")}, i8), "Tensor[(?, ?, ?), int8]");
  EXPECT_EQ(Infer("dyn.full", {T(""), T("1", "int64")}, i8), "Tensor[(?,), int8]");
  EXPECT_THAT(Infer("dyn.full", {T("1"), T("1", "int64")}),
              HasSubstr("argument 0 (fill_value) has type Tensor[(1,), float32]; expected a 0-D"));
  EXPECT_THAT(Infer("dyn.zeros", {T("?", "int64")}),
              HasSubstr("dyn.zeros: the length of shape must be static"));
}

TEST(DynStridedSlice, KeepsRank) {
  EXPECT_EQ(Infer("dyn.strided_slice",
                  {T("4, 5, 6"), T("2", "int64"), T("2", "int64"), T("2", "int64")}),
            "Tensor[(?, ?, ?), float32]");
  EXPECT_THAT(Infer("dyn.strided_slice", {T("4"), T("2", "int64"), T("2", "int64"),
                                          T("2", "int64")}),
              HasSubstr("must not be longer than the rank of Tensor[(4,), float32]"));
  EXPECT_THAT(Infer("dyn.strided_slice",
                    {T("4"), T("?", "int64"), T("1", "int64"), T("1", "int64")}),
              HasSubstr("the length of begin must be static"));
  Attrs bad = Make<DynStridedSliceAttrs>([](DynStridedSliceAttrs& a) { a.slice_mode = "x"; });
  EXPECT_THAT(Infer("dyn.strided_slice",
                    {T("4"), T("1", "int64"), T("1", "int64"), T("1", "int64")}, bad),
              HasSubstr("slice_mode must be \"end\" or \"size\""));
}

TEST(DynExpandDims, Rank) {
  Attrs two = Make<DynExpandDimsAttrs>([](DynExpandDimsAttrs& a) { a.num_newaxis = 2; });
  EXPECT_EQ(Infer("dyn.expand_dims", {T("3, 4"), T("", "int64")}), "Tensor[(?, ?, ?), float32]");
  EXPECT_EQ(Infer("dyn.expand_dims", {T("3"), T("", "int32")}, two), "Tensor[(?, ?, ?), float32]");
  EXPECT_THAT(Infer("dyn.expand_dims", {T("3"), T("1", "int64")}),
              HasSubstr("expected a 0-D integer tensor (axis)"));
}

}  // namespace
}  // namespace kiln::types::testing
