// Elementwise unary computes vs the interpreter (numeric_util.h), every op
// over float and integer dtypes, with the attribute values that matter.
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ir/op_attrs.h"
#include "lowering/compute/tensor/numeric_util.h"
#include "lowering/compute/tensor/test_util.h"

namespace kiln::lowering::tensor::testing {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(ElemwiseComputeTest, FloatMathOnFloats) {
  for (const char* op : {"exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "sin", "cos"}) {
    for (DataType dt : {kF32, kF64, kF16, kBF16}) {
      EXPECT_TRUE(CheckOp(op, nullptr, {T({2, 5}, dt)})) << dt.ToString();
    }
  }
}

TEST(ElemwiseComputeTest, TrigonometricAndHyperbolic) {
  // Each over its domain (asin, acos, atanh: (-1, 1); acosh: [1, inf)), and
  // once outside it (NaN or inf, as the interpreter).
  Ranges unit;
  unit.flo = -0.99;
  unit.fhi = 0.99;
  Ranges ge1;
  ge1.flo = 1;
  ge1.fhi = 4;
  for (DataType dt : {kF32, kF64, kF16, kBF16}) {
    for (const char* op : {"tan", "atan", "sinh", "cosh", "asinh"})
      EXPECT_TRUE(CheckOp(op, nullptr, {T({2, 5}, dt)})) << op << " " << dt.ToString();
    for (const char* op : {"asin", "acos", "atanh"})
      EXPECT_TRUE(CheckOp(op, nullptr, {T({2, 5}, dt)}, unit)) << op << " " << dt.ToString();
    EXPECT_TRUE(CheckOp("acosh", nullptr, {T({2, 5}, dt)}, ge1)) << dt.ToString();
  }
  const std::vector<double> outside = {-2, 2, 1, -1, kNaN, kInf};
  for (const char* op : {"asin", "acos", "atanh", "acosh"})
    EXPECT_TRUE(CheckOp(op, nullptr, {T({6}, kF32, outside)})) << op;
  Ranges small_ints;
  small_ints.ilo = 1;
  small_ints.ihi = 3;
  for (const char* op : {"atan", "sinh", "cosh", "asinh", "acosh"})
    EXPECT_TRUE(CheckOp(op, nullptr, {T({4}, kI32)}, small_ints)) << op;
}

TEST(ElemwiseComputeTest, FloatMathOnIntegersGoesThroughDouble) {
  // Values whose results fit the integer dtypes (the conversion back saturates;
  // see README: the loop-IR evaluator wraps instead, so no overflow here).
  Ranges r;
  r.ilo = 1;
  r.ihi = 5;
  for (const char* op : {"exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "sin", "cos"}) {
    for (DataType dt : {kI32, kI8, kU8, kI64}) {
      EXPECT_TRUE(CheckOp(op, nullptr, {T({7}, dt)}, r)) << dt.ToString();
    }
  }
  // log(-1) = NaN -> 0.
  EXPECT_TRUE(CheckOp("log", nullptr, {T({3}, kI32, {-1, 1, 3})}));
}

TEST(ElemwiseComputeTest, MixedOps) {
  for (const char* op : {"abs", "negative", "nn.relu", "floor", "ceil", "round", "sign", "copy"}) {
    for (DataType dt : {kF32, kF64, kF16, kBF16, kI32, kI8, kU8, kI64, kBool}) {
      EXPECT_TRUE(CheckOp(op, nullptr, {T({3, 4}, dt)})) << dt.ToString();
    }
  }
}

TEST(ElemwiseComputeTest, SpecialValues) {
  const std::vector<double> f = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.0, -0.0, kNaN, kInf, -kInf, 3.7};
  for (const char* op : {"round", "floor", "ceil", "sign", "abs", "negative", "nn.relu", "isnan"}) {
    for (DataType dt : {kF32, kF64, kF16}) EXPECT_TRUE(CheckOp(op, nullptr, {T({12}, dt, f)})) << dt.ToString();
  }
  // Integer wraparound: -(-128) and abs(-128) are -128 in int8.
  EXPECT_TRUE(CheckOp("negative", nullptr, {T({3}, kI8, {-128, 127, 0})}));
  EXPECT_TRUE(CheckOp("abs", nullptr, {T({3}, kI8, {-128, -127, 5})}));
  EXPECT_TRUE(CheckOp("negative", nullptr, {T({3}, kU8, {0, 1, 255})}));
}

TEST(ElemwiseComputeTest, FillsAndPredicates) {
  for (const char* op : {"zeros_like", "ones_like", "isnan"}) {
    for (DataType dt : {kF32, kF16, kI32, kU8, kBool}) EXPECT_TRUE(CheckOp(op, nullptr, {T({2, 3}, dt)}));
  }
  EXPECT_TRUE(CheckOp("logical_not", nullptr, {T({2, 3}, kBool)}));
}

TEST(ElemwiseComputeTest, Clip) {
  auto clip = [](double lo, double hi) {
    return MakeAttrs<ClipAttrs>([=](ClipAttrs& c) {
      c.a_min = lo;
      c.a_max = hi;
    });
  };
  const std::vector<double> f = {-5, -2.5, -0.1, 0, 0.1, 0.5, 2, 3.69, 3.71, kNaN};
  for (DataType dt : {kF32, kF64, kF16, kBF16}) {
    EXPECT_TRUE(CheckOp("clip", clip(-2.5, 3.7), {T({10}, dt, f)})) << dt.ToString();
    EXPECT_TRUE(CheckOp("clip", clip(0.1, 0.1), {T({10}, dt, f)})) << dt.ToString();
  }
  for (DataType dt : {kI32, kI8, kU8, kI64, kBool}) {
    EXPECT_TRUE(CheckOp("clip", clip(-2.5, 3.7), {T({16}, dt)})) << dt.ToString();
    EXPECT_TRUE(CheckOp("clip", clip(0.2, 0.7), {T({16}, dt)})) << dt.ToString();
    EXPECT_TRUE(CheckOp("clip", clip(-1e30, 1e30), {T({16}, dt)})) << dt.ToString();
    EXPECT_TRUE(CheckOp("clip", clip(1000, 2000), {T({16}, dt)})) << dt.ToString();
    EXPECT_TRUE(CheckOp("clip", clip(-2000, -1000), {T({16}, dt)})) << dt.ToString();
  }
}

TEST(ElemwiseComputeTest, Cast) {
  auto cast = [](DataType to) { return MakeAttrs<CastAttrs>([=](CastAttrs& c) { c.dtype = to; }); };
  const std::vector<DataType> all = {kF32, kF64, kF16, kBF16, kI32, kI8, kU8, kI64, kBool};
  // In-range values (the loop-IR evaluator's float -> int cast does not saturate).
  const std::vector<double> f = {-100.75, -3.5, -0.5, 0, 0.25, 1, 2.5, 99.9};
  for (DataType from : all) {
    for (DataType to : all) {
      std::vector<double> v = f;
      if (from.is_uint() || (to.is_uint() && from.is_float())) {
        for (double& x : v) x = std::fabs(x);
      }
      if (from.is_bool()) v = {0, 1, 1, 0, 1, 0, 0, 1};
      EXPECT_TRUE(CheckOp("cast", cast(to), {T({8}, from, v)})) << from.ToString() << " -> " << to.ToString();
    }
  }
  // Integer narrowing wraps; float -> bool is "nonzero", NaN included.
  EXPECT_TRUE(CheckOp("cast", cast(kI8), {T({4}, kI32, {300, -129, 128, -1})}));
  EXPECT_TRUE(CheckOp("cast", cast(kU8), {T({4}, kI32, {300, -1, 256, 7})}));
  EXPECT_TRUE(CheckOp("cast", cast(kBool), {T({4}, kF32, {0, -0.0, kNaN, 1e-30})}));
  EXPECT_TRUE(CheckOp("cast", cast(kI32), {T({3}, kF32, {kNaN, 1.5, -1.5})}));
}

TEST(ElemwiseComputeTest, LeakyReluAndGelu) {
  Attrs lr = MakeAttrs<LeakyReluAttrs>([](LeakyReluAttrs& a) { a.alpha = 0.2; });
  Attrs tanh = MakeAttrs<GeluAttrs>([](GeluAttrs& a) { a.approximate = "tanh"; });
  Ranges ir;
  ir.ilo = 1;
  ir.ihi = 6;
  for (DataType dt : {kF32, kF64, kF16, kBF16}) {
    EXPECT_TRUE(CheckOp("nn.leaky_relu", lr, {T({9}, dt)}));
    EXPECT_TRUE(CheckOp("nn.leaky_relu", nullptr, {T({9}, dt)}));
    EXPECT_TRUE(CheckOp("nn.gelu", nullptr, {T({9}, dt)}));
    EXPECT_TRUE(CheckOp("nn.gelu", tanh, {T({9}, dt)}));
  }
  for (DataType dt : {kI32, kI8}) {
    EXPECT_TRUE(CheckOp("nn.leaky_relu", lr, {T({9}, dt, {-8, -5, -1, 0, 1, 2, 3, 5, 7})}));
    EXPECT_TRUE(CheckOp("nn.gelu", nullptr, {T({9}, dt)}, ir));
    EXPECT_TRUE(CheckOp("nn.gelu", tanh, {T({9}, dt)}, ir));
  }
}

TEST(ElemwiseComputeTest, SymbolicShapes) {
  EXPECT_TRUE(CheckOp("exp", nullptr, {Sym({3, 4}, {"n", ""})}));
  EXPECT_TRUE(CheckOp("abs", nullptr, {Sym({3, 4}, {"n", "m"}, kI32)}));
}

}  // namespace
}  // namespace kiln::lowering::tensor::testing
