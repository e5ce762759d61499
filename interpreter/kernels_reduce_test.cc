// Reduction kernels: axes, keepdims, exclude, integer mean, arg reductions.
#include <cmath>

#include "gtest/gtest.h"
#include "interpreter/test_util.h"

namespace kiln::interp::testing {
namespace {

using V = std::vector<double>;

Value Ok(absl::StatusOr<Value> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Value();
}

TEST(Reduce, SumMeanProdMaxMin) {
  auto x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(Doubles(Ok(EvalText("sum(%x, axis=[1])", {{"x", x}}))), (V{6, 15}));
  Value k = Ok(EvalText("sum(%x, axis=[1], keepdims=true)", {{"x", x}}));
  EXPECT_EQ(ShapeOf(k), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Doubles(Ok(EvalText("sum(%x, axis=[1], exclude=true)", {{"x", x}}))), (V{5, 7, 9}));
  EXPECT_EQ(Doubles(Ok(EvalText("mean(%x)", {{"x", x}}))), (V{3.5}));
  EXPECT_EQ(Doubles(Ok(EvalText("prod(%x, axis=[0])", {{"x", x}}))), (V{4, 10, 18}));
  EXPECT_EQ(Doubles(Ok(EvalText("max(%x, axis=[-1])", {{"x", x}}))), (V{3, 6}));
  EXPECT_EQ(Doubles(Ok(EvalText("min(%x, axis=[0, 1])", {{"x", x}}))), (V{1}));
  EXPECT_EQ(Doubles(Ok(EvalText("sum(%x, axis=[])", {{"x", x}}))), (V{1, 2, 3, 4, 5, 6}));
}

TEST(Reduce, IntegerMeanTruncatesAndSumWraps) {
  EXPECT_EQ(Doubles(Ok(EvalText("mean(%x)", {{"x", I32({2}, {1, 2})}}))), (V{1}));
  EXPECT_EQ(Doubles(Ok(EvalText("mean(%x)", {{"x", I32({2}, {-1, -2})}}))), (V{-1}));
  auto b = MakeT(DataType::Int(8), {2}, {100, 100});
  EXPECT_EQ(Doubles(Ok(EvalText("sum(%x)", {{"x", b}}))), (V{-56}));
}

TEST(Reduce, ArgMaxArgMin) {
  auto x = F32({2, 3}, {1, 3, 3, 2, 0, 1});
  Value v = Ok(EvalText("argmax(%x, axis=[1])", {{"x", x}}));
  EXPECT_EQ(v.tensor()->dtype(), DataType::Int(32));
  EXPECT_EQ(Doubles(v), (V{1, 0}));
  EXPECT_EQ(Doubles(Ok(EvalText("argmax(%x, axis=[1], select_last_index=true)", {{"x", x}}))), (V{2, 0}));
  EXPECT_EQ(Doubles(Ok(EvalText("argmin(%x, axis=[1])", {{"x", x}}))), (V{0, 1}));
  EXPECT_EQ(Doubles(Ok(EvalText("argmax(%x)", {{"x", x}}))), (V{1}));  // flat index
  EXPECT_EQ(Doubles(Ok(EvalText("argmin(%x, axis=[0])", {{"x", I32({2, 2}, {5, -1, 2, 7})}}))), (V{1, 0}));
  EXPECT_EQ(Doubles(Ok(EvalText("argmax(%x)", {{"x", F32({3}, {1, NAN, 2})}}))), (V{1}));
}

TEST(Reduce, EmptyAxis) {
  auto e = F32({2, 0}, {});
  EXPECT_EQ(Doubles(Ok(EvalText("sum(%x, axis=[1])", {{"x", e}}))), (V{0, 0}));
  auto r = EvalText("max(%x, axis=[1])", {{"x", e}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("max: cannot reduce an empty axis"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace kiln::interp::testing
