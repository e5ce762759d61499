// Elementwise and broadcasting kernels: hand-checked values, integer
// semantics, float16/bfloat16 rounding, IEEE specials.
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "interpreter/test_util.h"

namespace kiln::interp::testing {
namespace {

using V = std::vector<double>;

Value Ok(absl::StatusOr<Value> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Value();
}

TEST(Elemwise, AddBroadcasts) {
  Value v = Ok(EvalText("add(%a, %b)", {{"a", F32({2, 1}, {1, 2})}, {"b", F32({3}, {10, 20, 30})}}));
  EXPECT_EQ(ShapeOf(v), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Doubles(v), (V{11, 21, 31, 12, 22, 32}));
}

TEST(Elemwise, Int8WrapsAround) {
  auto a = MakeT(DataType::Int(8), {3}, {127, -128, 100});
  auto b = MakeT(DataType::Int(8), {3}, {1, -1, 3});
  EXPECT_EQ(Doubles(Ok(EvalText("add(%a, %b)", {{"a", a}, {"b", b}}))), (V{-128, 127, 103}));
  EXPECT_EQ(Doubles(Ok(EvalText("multiply(%a, %b)", {{"a", a}, {"b", b}}))), (V{127, -128, 44}));
  EXPECT_EQ(Doubles(Ok(EvalText("negative(%a)", {{"a", a}}))), (V{-127, -128, -100}));
  EXPECT_EQ(Doubles(Ok(EvalText("abs(%a)", {{"a", a}}))), (V{127, -128, 100}));
}

TEST(Elemwise, IntegerDivisionSemantics) {
  auto a = I32({4}, {7, -7, 7, -7});
  auto b = I32({4}, {2, 2, -2, -2});
  std::vector<std::pair<std::string, Ref<const HostTensor>>> in = {{"a", a}, {"b", b}};
  EXPECT_EQ(Doubles(Ok(EvalText("divide(%a, %b)", in))), (V{3, -3, -3, 3}));
  EXPECT_EQ(Doubles(Ok(EvalText("mod(%a, %b)", in))), (V{1, -1, 1, -1}));
  EXPECT_EQ(Doubles(Ok(EvalText("floor_divide(%a, %b)", in))), (V{3, -4, -4, 3}));
  EXPECT_EQ(Doubles(Ok(EvalText("floor_mod(%a, %b)", in))), (V{1, 1, -1, -1}));
  // INT32_MIN / -1 wraps instead of trapping.
  EXPECT_EQ(Doubles(Ok(EvalText("divide(%a, %b)", {{"a", I32({1}, {-2147483648.0})},
                                                    {"b", I32({1}, {-1})}}))),
            (V{-2147483648.0}));
}

TEST(Elemwise, IntegerDivisionByZeroIsAnError) {
  for (const char* op : {"divide", "mod", "floor_divide", "floor_mod"}) {
    auto r = EvalText(std::string(op) + "(%a, %b)", {{"a", I32({2}, {1, 2})}, {"b", I32({2}, {1, 0})}});
    ASSERT_FALSE(r.ok()) << op;
    EXPECT_NE(r.status().message().find("integer division by zero"), std::string::npos) << r.status();
    EXPECT_NE(r.status().message().find(op), std::string::npos) << r.status();
  }
}

TEST(Elemwise, FloatFollowsIeee) {
  V out = Doubles(Ok(EvalText("divide(%a, %b)", {{"a", F32({3}, {1, -1, 0})}, {"b", F32({3}, {0, 0, 0})}})));
  EXPECT_EQ(out[0], INFINITY);
  EXPECT_EQ(out[1], -INFINITY);
  EXPECT_TRUE(std::isnan(out[2]));
  V mx = Doubles(Ok(EvalText("maximum(%a, %b)", {{"a", F32({2}, {NAN, 1})}, {"b", F32({2}, {1, 2})}})));
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_EQ(mx[1], 2);
  EXPECT_EQ(Doubles(Ok(EvalText("floor_mod(%a, %b)", {{"a", F32({2}, {-7, 7})}, {"b", F32({2}, {2, -2})}}))),
            (V{1, -1}));
}

TEST(Elemwise, Float16Rounds) {
  auto a = MakeT(DataType::Float(16), {2}, {1, 1});
  auto b = MakeT(DataType::Float(16), {2}, {0.0004, 0.0006});
  EXPECT_EQ(Doubles(Ok(EvalText("add(%a, %b)", {{"a", a}, {"b", b}}))), (V{1.0, 1.0009765625}));
  // 65504 is the largest half; 65520 and above round to infinity.
  auto big = MakeT(DataType::Float(16), {1}, {65504});
  EXPECT_EQ(Doubles(Ok(EvalText("add(%a, %a)", {{"a", big}})))[0], INFINITY);
}

TEST(Elemwise, BFloat16CastRoundsToNearestEven) {
  auto x = F32({3}, {1.00390625, 1.01171875, -2.5});
  Value v = Ok(EvalText("cast(%x, dtype=bfloat16)", {{"x", x}}));
  EXPECT_EQ(v.tensor()->dtype(), DataType::BFloat16());
  EXPECT_EQ(Doubles(v), (V{1.0, 1.015625, -2.5}));
}

TEST(Elemwise, CastFloatToIntTruncatesAndSaturates) {
  auto x = F32({5}, {3.7, -3.7, 300, -300, NAN});
  EXPECT_EQ(Doubles(Ok(EvalText("cast(%x, dtype=int8)", {{"x", x}}))), (V{3, -3, 127, -128, 0}));
  EXPECT_EQ(Doubles(Ok(EvalText("cast(%x, dtype=uint8)", {{"x", x}}))), (V{3, 0, 255, 0, 0}));
  EXPECT_EQ(Doubles(Ok(EvalText("cast(%x, dtype=bool)", {{"x", F32({3}, {0, 0.5, -2})}}))), (V{0, 1, 1}));
  // int -> narrower int wraps.
  EXPECT_EQ(Doubles(Ok(EvalText("cast(%x, dtype=int8)", {{"x", I32({2}, {300, -129})}}))), (V{44, 127}));
}

TEST(Elemwise, ComparisonsGiveBool) {
  Value v = Ok(EvalText("less(%a, %b)", {{"a", F32({3}, {1, 2, 3})}, {"b", F32({1}, {2})}}));
  EXPECT_EQ(v.tensor()->dtype(), DataType::Bool());
  EXPECT_EQ(Doubles(v), (V{1, 0, 0}));
  Value l = Ok(EvalText("logical_xor(less(%a, %b), greater(%a, %b))",
                        {{"a", F32({3}, {1, 2, 3})}, {"b", F32({1}, {2})}}));
  EXPECT_EQ(Doubles(l), (V{1, 0, 1}));
  EXPECT_EQ(Doubles(Ok(EvalText("isnan(%a)", {{"a", F32({2}, {NAN, 1})}}))), (V{1, 0}));
}

TEST(Elemwise, UnaryMath) {
  auto x = F32({4}, {0.5, 1.5, 2.5, -0.5});
  V r = Doubles(Ok(EvalText("round(%x)", {{"x", x}})));
  EXPECT_EQ(r, (V{0, 2, 2, -0.0}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.relu(%x)", {{"x", F32({2}, {-1, 2})}}))), (V{0, 2}));
  EXPECT_EQ(Doubles(Ok(EvalText("sign(%x)", {{"x", I32({3}, {-5, 0, 9})}}))), (V{-1, 0, 1}));
  EXPECT_EQ(Doubles(Ok(EvalText("clip(%x, a_min=-1.0, a_max=1.0)", {{"x", F32({3}, {-3, 0.5, 2})}}))),
            (V{-1, 0.5, 1}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.leaky_relu(%x, alpha=0.5)", {{"x", F32({2}, {-4, 4})}}))), (V{-2, 4}));
  V g = Doubles(Ok(EvalText("nn.gelu(%x)", {{"x", MakeT(DataType::Float(64), {1}, {1})}})));
  EXPECT_DOUBLE_EQ(g[0], 0.8413447460685429);
  V gt = Doubles(Ok(EvalText("nn.gelu(%x, approximate=\"tanh\")", {{"x", MakeT(DataType::Float(64), {1}, {1})}})));
  EXPECT_DOUBLE_EQ(gt[0], 0.8411919906082768);
  EXPECT_NEAR(Doubles(Ok(EvalText("sigmoid(%x)", {{"x", F32({1}, {0})}})))[0], 0.5, 1e-7);
  EXPECT_EQ(Doubles(Ok(EvalText("ones_like(%x)", {{"x", I32({2}, {5, 6})}}))), (V{1, 1}));
}

TEST(Elemwise, TrigonometricAndHyperbolic) {
  // Values by hand: tan(pi/4) = 1, asin(1/2) = pi/6, acos(1/2) = pi/3,
  // atan(1) = pi/4, sinh(ln 2) = 3/4, cosh(ln 2) = 5/4, asinh(3/4) = ln 2,
  // acosh(5/4) = ln 2, atanh(1/3) = ln(2)/2.
  auto f64 = [](double v) { return MakeT(DataType::Float(64), {1}, {v}); };
  const double pi = 3.14159265358979323846, ln2 = 0.69314718055994530942;
  const std::pair<const char*, std::pair<double, double>> cases[] = {
      {"tan", {pi / 4, 1}},      {"asin", {0.5, pi / 6}},   {"acos", {0.5, pi / 3}},
      {"atan", {1, pi / 4}},     {"sinh", {ln2, 0.75}},     {"cosh", {ln2, 1.25}},
      {"asinh", {0.75, ln2}},    {"acosh", {1.25, ln2}},    {"atanh", {1.0 / 3, ln2 / 2}},
  };
  for (const auto& [op, io] : cases) {
    V r = Doubles(Ok(EvalText(std::string(op) + "(%x)", {{"x", f64(io.first)}})));
    ASSERT_EQ(r.size(), 1u) << op;
    EXPECT_NEAR(r[0], io.second, 1e-15) << op;
  }
  // Outside the domain: NaN; float32 keeps its dtype.
  EXPECT_TRUE(std::isnan(Doubles(Ok(EvalText("asin(%x)", {{"x", F32({1}, {2})}})))[0]));
  EXPECT_TRUE(std::isnan(Doubles(Ok(EvalText("acosh(%x)", {{"x", F32({1}, {0.5})}})))[0]));
  EXPECT_EQ(Doubles(Ok(EvalText("atanh(%x)", {{"x", F32({1}, {1})}})))[0], INFINITY);
}

TEST(Elemwise, BiasAddAndPrelu) {
  auto x = F32({1, 2, 2}, {1, 2, -3, -4});
  EXPECT_EQ(Doubles(Ok(EvalText("nn.bias_add(%x, %b)", {{"x", x}, {"b", F32({2}, {10, 20})}}))),
            (V{11, 12, 17, 16}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.prelu(%x, %a)", {{"x", x}, {"a", F32({2}, {0.5, 0.25})}}))),
            (V{1, 2, -0.75, -1}));
}

TEST(Elemwise, Dtypes) {
  for (const char* dt : {"float32", "float16", "float64", "bfloat16", "int8", "int16", "int32",
                         "int64", "uint8"}) {
    DataType t = DataType::Parse(dt).value();
    auto a = MakeT(t, {3}, {1, 2, 3});
    EXPECT_EQ(Doubles(Ok(EvalText("subtract(multiply(%a, %a), %a)", {{"a", a}}))), (V{0, 2, 6})) << dt;
    EXPECT_EQ(Doubles(Ok(EvalText("maximum(%a, ones_like(%a))", {{"a", a}}))), (V{1, 2, 3})) << dt;
  }
}

}  // namespace
}  // namespace kiln::interp::testing
