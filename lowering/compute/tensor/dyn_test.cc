// dyn.* computes vs the interpreter (numeric_util.h). The output extents are
// `?` in the types; the evaluator binds them from the output buffer's shape
// (the interpreter's result), as the runtime does.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/op_attrs.h"
#include "lowering/compute/tensor/numeric_util.h"
#include "lowering/compute/tensor/test_util.h"

namespace kiln::lowering::tensor::testing {
namespace {

TEST(DynComputeTest, Reshape) {
  for (const auto& ns : std::vector<std::vector<double>>{{-1, 4}, {0, -1}, {4, 6}, {2, -1, 2}, {24}}) {
    EXPECT_TRUE(CheckOp("dyn.reshape", nullptr,
                        {T({2, 3, 4}), T({static_cast<int64_t>(ns.size())}, kI64, ns)}));
  }
  EXPECT_TRUE(CheckOp("dyn.reshape", nullptr, {T({2, 3, 4}, kI8), T({2}, kI32, {3, 8})}));
}

TEST(DynComputeTest, BroadcastTo) {
  EXPECT_TRUE(CheckOp("dyn.broadcast_to", nullptr, {T({3, 1}), T({3}, kI64, {2, 3, 4})}));
  EXPECT_TRUE(CheckOp("dyn.broadcast_to", nullptr, {T({1}, kI32), T({2}, kI64, {2, 1})}));
  EXPECT_TRUE(CheckOp("dyn.broadcast_to", nullptr, {T({2, 3}), T({2}, kI32, {2, 3})}));
}

TEST(DynComputeTest, Fills) {
  for (DataType dt : {kF32, kF16, kI32, kU8, kBool}) {
    Attrs a = MakeAttrs<InitOpAttrs>([&](InitOpAttrs& i) { i.dtype = dt; });
    EXPECT_TRUE(CheckOp("dyn.zeros", a, {T({2}, kI64, {2, 3})}));
    EXPECT_TRUE(CheckOp("dyn.ones", a, {T({3}, kI32, {1, 2, 2})}));
    for (DataType from : {kF32, kI32, kBool, kF16}) {
      const double v = from.is_bool() ? 1 : (from.is_float() ? -2.75 : -3);
      EXPECT_TRUE(CheckOp("dyn.full", a, {T({}, from, {dt.is_uint() ? 7.0 : v}), T({2}, kI64, {3, 2})}))
          << from.ToString() << " -> " << dt.ToString();
    }
  }
}

TEST(DynComputeTest, StridedSlice) {
  struct Case {
    std::vector<double> begin, end, strides;
    std::string mode;
  };
  for (const Case& c : std::vector<Case>{
           {{1}, {3}, {1}, "end"},
           {{0, 1, 1}, {2, 3, 4}, {1, 1, 2}, "end"},
           {{-1}, {-100}, {-1}, "end"},
           {{5, -1}, {-10, 0}, {-1, -2}, "end"},
           {{0, 0, 3}, {2, 3, 0}, {1, 1, -1}, "end"},
           {{0, 1}, {-1, 2}, {1}, "size"},
           {{1, 1, 1}, {1, -1, 10}, {5, 5, 5}, "size"},
           {{-100}, {100}, {1}, "end"},
           {{2}, {1}, {1}, "end"},
           {{10, -10}, {20, -20}, {1, -1}, "end"},
           {{1, 2}, {2, 0}, {1}, "end"},
       }) {
    Attrs a = MakeAttrs<DynStridedSliceAttrs>([&](DynStridedSliceAttrs& s) { s.slice_mode = c.mode; });
    auto len = [](const std::vector<double>& v) { return static_cast<int64_t>(v.size()); };
    EXPECT_TRUE(CheckOp("dyn.strided_slice", a,
                        {T({2, 3, 4}), T({len(c.begin)}, kI64, c.begin), T({len(c.end)}, kI64, c.end),
                         T({len(c.strides)}, kI32, c.strides)}));
  }
}

TEST(DynComputeTest, ExpandDims) {
  for (double axis : {0, 1, 2, -1, -3}) {
    for (int64_t k : {0, 1, 2}) {
      Attrs a = MakeAttrs<DynExpandDimsAttrs>([&](DynExpandDimsAttrs& e) { e.num_newaxis = k; });
      EXPECT_TRUE(CheckOp("dyn.expand_dims", a, {T({2, 3}), T({}, kI32, {axis})})) << axis << " " << k;
    }
  }
}

}  // namespace
}  // namespace kiln::lowering::tensor::testing
