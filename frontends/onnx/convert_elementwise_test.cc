// The elementwise converters (convert_elementwise.cc): one-node models
// imported and run by the interpreter, against values computed here with
// <cmath> or by hand, for representative attributes and opsets.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "frontends/onnx/convert_test_util.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::onnx_frontend::testing {
namespace {

using ::testing::HasSubstr;
using V = std::vector<double>;

constexpr DataType kF32 = DataType::Float(32);
constexpr DataType kF64 = DataType::Float(64);
constexpr DataType kI32 = DataType::Int(32);
constexpr DataType kI64 = DataType::Int(64);
constexpr DataType kBool = DataType::Bool();
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Runs the node; the first output's values and dtype.
struct Out {
  V values;
  DataType dtype;
  std::vector<int64_t> shape;
};

Out RunOne(int64_t opset, const onnx::NodeProto& node, const std::vector<NamedTensor>& inputs) {
  auto r = RunNode(opset, node, inputs);
  EXPECT_TRUE(r.ok()) << node.op_type() << ": " << r.status();
  if (!r.ok() || r->empty()) return {};
  return {Values(*r->at(0)), r->at(0)->dtype(), r->at(0)->shape()};
}

// |got - want| <= tol * max(1, |want|); NaN only matches NaN.
void ExpectClose(const V& got, const V& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " [" << i << "] = " << got[i];
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " [" << i << "]";
    } else {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i])))
          << what << " [" << i << "]";
    }
  }
}

V Map(const V& x, const std::function<double(double)>& f) {
  V out;
  for (double v : x) out.push_back(f(v));
  return out;
}

// float32 rounding of a double (the inputs are float32).
double F(double v) { return static_cast<float>(v); }

TEST(ConvertElementwise, UnaryMath) {
  const V x = {-2.5, -1.5, -0.5, 0.25, 0.5, 1.5, 2.5, 3.75};
  const V pos = {0.125, 0.5, 1, 2, 3.5, 10, 100, 0.01};
  const V unit = {-0.9, -0.5, -0.25, 0, 0.1, 0.5, 0.75, 0.99};
  const V ge1 = {1, 1.25, 1.5, 2, 3, 7.5, 10, 100};
  struct Case {
    const char* op;
    int opset;
    const V* in;
    std::function<double(double)> f;
  };
  const std::vector<Case> cases = {
      {"Abs", 13, &x, [](double v) { return std::fabs(v); }},
      {"Neg", 13, &x, [](double v) { return -v; }},
      {"Exp", 13, &x, [](double v) { return std::exp(v); }},
      {"Log", 13, &pos, [](double v) { return std::log(v); }},
      {"Sqrt", 13, &pos, [](double v) { return std::sqrt(v); }},
      {"Reciprocal", 13, &pos, [](double v) { return 1 / v; }},
      {"Floor", 13, &x, [](double v) { return std::floor(v); }},
      {"Ceil", 13, &x, [](double v) { return std::ceil(v); }},
      // Half to even: -2.5 -> -2, -1.5 -> -2, -0.5 -> -0, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
      {"Round", 11, &x, [](double v) { return std::nearbyint(v); }},
      {"Sign", 13, &x, [](double v) { return v > 0   ? 1.0
                                             : v < 0 ? -1.0
                                                     : 0.0; }},
      {"Sin", 7, &x, [](double v) { return std::sin(v); }},
      {"Cos", 7, &x, [](double v) { return std::cos(v); }},
      {"Tan", 7, &x, [](double v) { return std::tan(v); }},
      {"Asin", 7, &unit, [](double v) { return std::asin(v); }},
      {"Acos", 7, &unit, [](double v) { return std::acos(v); }},
      {"Atan", 7, &x, [](double v) { return std::atan(v); }},
      {"Sinh", 9, &x, [](double v) { return std::sinh(v); }},
      {"Cosh", 9, &x, [](double v) { return std::cosh(v); }},
      {"Asinh", 9, &x, [](double v) { return std::asinh(v); }},
      {"Acosh", 9, &ge1, [](double v) { return std::acosh(v); }},
      {"Atanh", 9, &unit, [](double v) { return std::atanh(v); }},
      {"Erf", 13, &x, [](double v) { return std::erf(v); }},
      {"Sigmoid", 13, &x, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"Tanh", 13, &x, [](double v) { return std::tanh(v); }},
      {"Relu", 14, &x, [](double v) { return v > 0 ? v : 0.0; }},
  };
  for (const Case& c : cases) {
    const V in = Map(*c.in, F);
    Out y = RunOne(c.opset, MakeNode(c.op, {"x"}, {"y"}), {F32In("x", {2, 4}, in)});
    EXPECT_EQ(y.dtype, kF32) << c.op;
    EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 4})) << c.op;
    ExpectClose(y.values, Map(in, c.f), 2e-6, c.op);
  }
  // Old opsets (consumed_inputs is ignored) and integer inputs.
  Out neg = RunOne(1, MakeNode("Neg", {"x"}, {"y"}, {AttrInts("consumed_inputs", {0})}),
                   {F32In("x", {2}, {1, -2})});
  EXPECT_EQ(neg.values, (V{-1, 2}));
  Out abs = RunOne(13, MakeNode("Abs", {"x"}, {"y"}), {In("x", kI32, {3}, {-7, 0, 5})});
  EXPECT_EQ(abs.dtype, kI32);
  EXPECT_EQ(abs.values, (V{7, 0, 5}));
  Out relu =
      RunOne(14, MakeNode("Relu", {"x"}, {"y"}), {In("x", DataType::Int(8), {3}, {-7, 0, 5})});
  EXPECT_EQ(relu.values, (V{0, 0, 5}));
  // Outside the domain: NaN.
  Out asin = RunOne(7, MakeNode("Asin", {"x"}, {"y"}), {F32In("x", {1}, {2})});
  ASSERT_EQ(asin.values.size(), 1u);
  EXPECT_TRUE(std::isnan(asin.values[0]));
}

TEST(ConvertElementwise, Activations) {
  const V x = Map({-3, -1.5, -0.25, 0, 0.25, 1, 2.5, 4}, F);
  auto run = [&](int opset, const char* op, std::vector<onnx::AttributeProto> attrs) {
    return RunOne(opset, MakeNode(op, {"x"}, {"y"}, std::move(attrs)), {F32In("x", {8}, x)}).values;
  };
  ExpectClose(run(16, "LeakyRelu", {AttrFloat("alpha", 0.125f)}),
              Map(x, [](double v) { return v > 0 ? v : 0.125 * v; }), 1e-6, "LeakyRelu");
  ExpectClose(run(6, "LeakyRelu", {}), Map(x, [](double v) { return v > 0 ? v : 0.01 * v; }), 1e-6,
              "LeakyRelu default");
  ExpectClose(run(6, "Elu", {AttrFloat("alpha", 2)}),
              Map(x, [](double v) { return v < 0 ? 2 * (std::exp(v) - 1) : v; }), 1e-6, "Elu");
  const double sa = 1.67326319217681884765625, sg = 1.05070102214813232421875;
  ExpectClose(run(6, "Selu", {}),
              Map(x, [&](double v) { return v > 0 ? sg * v : sg * (sa * std::exp(v) - sa); }), 1e-6,
              "Selu defaults");
  ExpectClose(
      run(1, "Selu", {}),
      Map(x,
          [](double v) { return v > 0 ? 1.0507 * v : 1.0507 * (1.6732 * std::exp(v) - 1.6732); }),
      1e-6, "Selu opset 1 defaults");
  ExpectClose(run(6, "Selu", {AttrFloat("alpha", 2), AttrFloat("gamma", 3)}),
              Map(x, [](double v) { return v > 0 ? 3 * v : 3 * (2 * std::exp(v) - 2); }), 1e-6,
              "Selu");
  ExpectClose(
      run(12, "Celu", {AttrFloat("alpha", 2)}),
      Map(x, [](double v) { return std::max(0.0, v) + std::min(0.0, 2 * (std::exp(v / 2) - 1)); }),
      1e-6, "Celu");
  ExpectClose(run(6, "HardSigmoid", {AttrFloat("alpha", 0.25f), AttrFloat("beta", 0.375f)}),
              Map(x, [](double v) { return std::clamp(0.25 * v + 0.375, 0.0, 1.0); }), 1e-6,
              "HardSigmoid");
  ExpectClose(run(6, "HardSigmoid", {}),
              Map(x, [](double v) { return std::clamp(0.2 * v + 0.5, 0.0, 1.0); }), 1e-6,
              "HardSigmoid defaults");
  ExpectClose(run(14, "HardSwish", {}),
              Map(x, [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); }), 1e-6,
              "HardSwish");
  ExpectClose(run(1, "Softplus", {}), Map(x, [](double v) { return std::log1p(std::exp(v)); }),
              1e-6, "Softplus");
  ExpectClose(run(1, "Softsign", {}), Map(x, [](double v) { return v / (1 + std::fabs(v)); }), 1e-6,
              "Softsign");
  ExpectClose(run(10, "ThresholdedRelu", {AttrFloat("alpha", 0.5f)}),
              Map(x, [](double v) { return v > 0.5 ? v : 0.0; }), 1e-6, "ThresholdedRelu");
  ExpectClose(run(10, "ThresholdedRelu", {}), Map(x, [](double v) { return v > 1 ? v : 0.0; }),
              1e-6, "ThresholdedRelu default");
  ExpectClose(run(9, "Shrink", {AttrFloat("lambd", 1.5f), AttrFloat("bias", 0.5f)}),
              Map(x, [](double v) { return v < -1.5  ? v + 0.5
                                           : v > 1.5 ? v - 0.5
                                                     : 0.0; }), 1e-6,
              "Shrink");
  ExpectClose(run(18, "Mish", {}),
              Map(x, [](double v) { return v * std::tanh(std::log1p(std::exp(v))); }), 1e-6,
              "Mish");
}

TEST(ConvertElementwise, SoftplusDoesNotOverflow) {
  Out y = RunOne(1, MakeNode("Softplus", {"x"}, {"y"}), {F32In("x", {3}, {100, -100, 88.5})});
  ASSERT_EQ(y.values.size(), 3u);
  EXPECT_NEAR(y.values[0], 100, 1e-5);
  EXPECT_NEAR(y.values[1], 0, 1e-30);
  EXPECT_NEAR(y.values[2], 88.5, 1e-5);
}

TEST(ConvertElementwise, ShrinkOnIntegers) {
  // lambd 1.5: |x| <= 1.5 -> 0; bias 1.
  Out y =
      RunOne(9, MakeNode("Shrink", {"x"}, {"y"}, {AttrFloat("lambd", 1.5f), AttrFloat("bias", 1)}),
             {In("x", DataType::Int(8), {5}, {-3, -1, 0, 1, 2})});
  EXPECT_EQ(y.dtype, DataType::Int(8));
  EXPECT_EQ(y.values, (V{-2, 0, 0, 0, 1}));
}

TEST(ConvertElementwise, PRelu) {
  const V x = {-1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12};
  // Slope [3, 1, 1] broadcast over [1, 3, 2, 2]: one slope per channel.
  Out y = RunOne(16, MakeNode("PRelu", {"x", "s"}, {"y"}),
                 {F32In("x", {1, 3, 2, 2}, x), F32In("s", {3, 1, 1}, {0.5, 0.25, 2})});
  V want;
  for (size_t i = 0; i < x.size(); ++i) {
    const double s = i < 4 ? 0.5 : i < 8 ? 0.25 : 2;
    want.push_back(x[i] < 0 ? s * x[i] : x[i]);
  }
  EXPECT_EQ(y.values, want);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 3, 2, 2}));
  // A slope along the last axis (NumPy broadcasting) and a scalar slope.
  Out last = RunOne(9, MakeNode("PRelu", {"x", "s"}, {"y"}),
                    {F32In("x", {2, 2}, {-1, -2, 3, -4}), Init("s", kF32, {2}, {0.5, 3})});
  EXPECT_EQ(last.values, (V{-0.5, -6, 3, -12}));
  Out scalar = RunOne(9, MakeNode("PRelu", {"x", "s"}, {"y"}),
                      {F32In("x", {3}, {-2, 0, 2}), Init("s", kF32, {1}, {0.5})});
  EXPECT_EQ(scalar.values, (V{-1, 0, 2}));
  // Opset 6: a 1-D slope is per channel (axis 1), not along the last axis.
  Out old = RunOne(6, MakeNode("PRelu", {"x", "s"}, {"y"}),
                   {F32In("x", {1, 3, 2, 2}, x), F32In("s", {3}, {0.5, 0.25, 2})});
  EXPECT_EQ(old.values, want);
}

TEST(ConvertElementwise, ClipAttributes) {
  const V x = {-5, -1, 0, 0.5, 1, 7};
  auto node = [](int opset, std::vector<onnx::AttributeProto> attrs) {
    return std::pair{opset, MakeNode("Clip", {"x"}, {"y"}, std::move(attrs))};
  };
  auto [o6, n6] = node(6, {AttrFloat("min", -1.5f), AttrFloat("max", 2)});
  EXPECT_EQ(RunOne(o6, n6, {F32In("x", {6}, x)}).values, (V{-1.5, -1, 0, 0.5, 1, 2}));
  // Opset 6 defaults: +-FLT_MAX.
  auto [d6, nd6] = node(6, {});
  EXPECT_EQ(RunOne(d6, nd6, {F32In("x", {6}, x)}).values, x);
  // Opset 1: an absent bound is no bound.
  auto [o1, n1] = node(1, {AttrFloat("max", 0.75f)});
  EXPECT_EQ(RunOne(o1, n1, {F32In("x", {6}, x)}).values, (V{-5, -1, 0, 0.5, 0.75, 0.75}));
  // The core clip operator is used.
  auto text = ImportedText(o6, n6, {F32In("x", {6}, x)});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("clip("));
}

TEST(ConvertElementwise, ClipInputs) {
  const V x = {-5, -1, 0, 0.5, 1, 7};
  auto clip = MakeNode("Clip", {"x", "lo", "hi"}, {"y"});
  // Constant bounds (initializers).
  EXPECT_EQ(
      RunOne(11, clip, {F32In("x", {6}, x), Init("lo", kF32, {}, {0}), Init("hi", kF32, {}, {6})})
          .values,
      (V{0, 0, 0, 0.5, 1, 6}));
  // Only min (max omitted with an empty name), only max.
  EXPECT_EQ(RunOne(11, MakeNode("Clip", {"x", "lo"}, {"y"}),
                   {F32In("x", {6}, x), Init("lo", kF32, {}, {-1})})
                .values,
            (V{-1, -1, 0, 0.5, 1, 7}));
  EXPECT_EQ(RunOne(11, MakeNode("Clip", {"x", "", "hi"}, {"y"}),
                   {F32In("x", {6}, x), Init("hi", kF32, {}, {0.5})})
                .values,
            (V{-5, -1, 0, 0.5, 0.5, 0.5}));
  // No bounds: unchanged.
  EXPECT_EQ(RunOne(11, MakeNode("Clip", {"x"}, {"y"}), {F32In("x", {6}, x)}).values, x);
  // Bounds given at run time (graph inputs).
  EXPECT_EQ(
      RunOne(11, clip, {F32In("x", {6}, x), F32In("lo", {}, {-1}), F32In("hi", {}, {0.25})}).values,
      (V{-1, -1, 0, 0.25, 0.25, 0.25}));
  // min > max: every element becomes max (ONNX's rule).
  EXPECT_EQ(
      RunOne(13, clip, {F32In("x", {6}, x), Init("lo", kF32, {}, {2}), Init("hi", kF32, {}, {1})})
          .values,
      (V{1, 1, 1, 1, 1, 1}));
  // Integers (opset 12).
  Out i = RunOne(12, clip,
                 {In("x", DataType::Int(8), {5}, {-128, -3, 0, 3, 127}),
                  Init("lo", DataType::Int(8), {}, {-2}), Init("hi", DataType::Int(8), {}, {100})});
  EXPECT_EQ(i.dtype, DataType::Int(8));
  EXPECT_EQ(i.values, (V{-2, -2, 0, 3, 100}));
}

TEST(ConvertElementwise, ArithmeticBroadcasts) {
  const NamedTensor a = F32In("a", {2, 3}, {1, 2, 3, 4, 5, 6});
  const NamedTensor b = F32In("b", {3}, {10, 20, 40});
  EXPECT_EQ(RunOne(14, MakeNode("Add", {"a", "b"}, {"y"}), {a, b}).values,
            (V{11, 22, 43, 14, 25, 46}));
  EXPECT_EQ(RunOne(14, MakeNode("Sub", {"a", "b"}, {"y"}), {a, b}).values,
            (V{-9, -18, -37, -6, -15, -34}));
  EXPECT_EQ(RunOne(14, MakeNode("Mul", {"a", "b"}, {"y"}), {a, b}).values,
            (V{10, 40, 120, 40, 100, 240}));
  ExpectClose(RunOne(14, MakeNode("Div", {"a", "b"}, {"y"}), {a, b}).values,
              {0.1, 0.1, 0.075, 0.4, 0.25, 0.15}, 1e-6, "Div");
  // Integer division truncates toward zero (C, ONNX Runtime).
  Out q = RunOne(14, MakeNode("Div", {"a", "b"}, {"y"}),
                 {In("a", kI32, {4}, {7, -7, 7, -7}), In("b", kI32, {4}, {2, 2, -2, -2})});
  EXPECT_EQ(q.dtype, kI32);
  EXPECT_EQ(q.values, (V{3, -3, -3, 3}));
  // uint8 wraps.
  Out u =
      RunOne(14, MakeNode("Add", {"a", "b"}, {"y"}),
             {In("a", DataType::UInt(8), {2}, {250, 1}), In("b", DataType::UInt(8), {2}, {10, 2})});
  EXPECT_EQ(u.values, (V{4, 3}));
}

TEST(ConvertElementwise, LegacyBroadcastAttributes) {
  // Opset 6, broadcast=1, axis=1: B [3] lines up with A's dim 1 of [2, 3, 2].
  V av(12);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<double>(i);
  const NamedTensor a = F32In("a", {2, 3, 2}, av);
  const NamedTensor b = F32In("b", {3}, {100, 200, 300});
  Out y = RunOne(
      6, MakeNode("Add", {"a", "b"}, {"y"}, {AttrInt("broadcast", 1), AttrInt("axis", 1)}), {a, b});
  V want;
  for (size_t i = 0; i < av.size(); ++i) want.push_back(av[i] + 100.0 * (1 + (i / 2) % 3));
  EXPECT_EQ(y.values, want);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 3, 2}));
  // Without axis: suffix matching, as NumPy.
  Out s = RunOne(6, MakeNode("Mul", {"a", "c"}, {"y"}, {AttrInt("broadcast", 1)}),
                 {a, F32In("c", {2}, {1, -1})});
  V want_s;
  for (size_t i = 0; i < av.size(); ++i) want_s.push_back(i % 2 ? -av[i] : av[i]);
  EXPECT_EQ(s.values, want_s);
  // Comparisons took the same attributes.
  Out g = RunOne(
      6, MakeNode("Greater", {"a", "b"}, {"y"}, {AttrInt("broadcast", 1), AttrInt("axis", 1)}),
      {a, F32In("b", {3}, {0.5, 3.5, 100})});
  EXPECT_EQ(g.dtype, kBool);
  EXPECT_EQ(g.values, (V{0, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0}));
}

TEST(ConvertElementwise, Pow) {
  ExpectClose(RunOne(7, MakeNode("Pow", {"a", "b"}, {"y"}),
                     {F32In("a", {3}, {2, 9, 1.5}), F32In("b", {3}, {3, 0.5, -2})})
                  .values,
              {8, 3, 1 / 2.25}, 1e-6, "Pow");
  // Opset 12+: the exponent's dtype may differ; the result has the base's.
  Out fi = RunOne(15, MakeNode("Pow", {"a", "b"}, {"y"}),
                  {F32In("a", {3}, {2, -3, 0.5}), In("b", kI64, {3}, {10, 3, -1})});
  EXPECT_EQ(fi.dtype, kF32);
  EXPECT_EQ(fi.values, (V{1024, -27, 2}));
  Out if_ = RunOne(15, MakeNode("Pow", {"a", "b"}, {"y"}),
                   {In("a", kI32, {3}, {2, 9, 5}), F32In("b", {3}, {3, 0.5, 1.5})});
  EXPECT_EQ(if_.dtype, kI32);
  EXPECT_EQ(if_.values, (V{8, 3, 11}));  // 5^1.5 = 11.18 truncated
  Out ii = RunOne(15, MakeNode("Pow", {"a", "b"}, {"y"}),
                  {In("a", kI64, {3}, {2, -3, 7}), In("b", kI32, {3}, {40, 3, 0})});
  EXPECT_EQ(ii.dtype, kI64);
  EXPECT_EQ(ii.values, (V{1099511627776.0, -27, 1}));
}

TEST(ConvertElementwise, Mod) {
  const NamedTensor a = In("a", kI32, {4}, {7, -7, 7, -7});
  const NamedTensor b = In("b", kI32, {4}, {3, 3, -3, -3});
  // fmod=0: the remainder has the divisor's sign.
  EXPECT_EQ(RunOne(13, MakeNode("Mod", {"a", "b"}, {"y"}), {a, b}).values, (V{1, 2, -2, -1}));
  // fmod=1: the dividend's.
  EXPECT_EQ(RunOne(13, MakeNode("Mod", {"a", "b"}, {"y"}, {AttrInt("fmod", 1)}), {a, b}).values,
            (V{1, -1, 1, -1}));
  ExpectClose(RunOne(10, MakeNode("Mod", {"a", "b"}, {"y"}, {AttrInt("fmod", 1)}),
                     {F32In("a", {3}, {5.5, -5.5, 4}), F32In("b", {3}, {2, 2, -1.5})})
                  .values,
              {std::fmod(5.5, 2), std::fmod(-5.5, 2), std::fmod(4, -1.5)}, 1e-6, "fmod");
  auto bad = RunNode(13, MakeNode("Mod", {"a", "b"}, {"y"}, {AttrInt("fmod", 2)}), {a, b});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("fmod must be 0 or 1; got 2"));
}

TEST(ConvertElementwise, VariadicMaxMinSumMean) {
  const std::vector<NamedTensor> in = {F32In("a", {2, 1}, {1, 6}), F32In("b", {3}, {2, 5, 9}),
                                       F32In("c", {1}, {4})};
  auto node = [](const char* op) { return MakeNode(op, {"a", "b", "c"}, {"y"}); };
  Out mx = RunOne(13, node("Max"), in);
  EXPECT_EQ(mx.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(mx.values, (V{4, 5, 9, 6, 6, 9}));
  EXPECT_EQ(RunOne(13, node("Min"), in).values, (V{1, 1, 1, 2, 4, 4}));
  EXPECT_EQ(RunOne(13, node("Sum"), in).values, (V{7, 10, 14, 12, 15, 19}));
  ExpectClose(RunOne(13, node("Mean"), in).values, {7 / 3.0, 10 / 3.0, 14 / 3.0, 4, 5, 19 / 3.0},
              1e-6, "Mean");
  // One input: itself.
  EXPECT_EQ(RunOne(8, MakeNode("Max", {"a"}, {"y"}), {in[0]}).values, (V{1, 6}));
  EXPECT_EQ(RunOne(8, MakeNode("Mean", {"a"}, {"y"}), {in[0]}).values, (V{1, 6}));
  // Integers (opset 12+).
  EXPECT_EQ(RunOne(13, MakeNode("Min", {"a", "b"}, {"y"}),
                   {In("a", kI64, {2}, {-5, 5}), In("b", kI64, {2}, {3, 3})})
                .values,
            (V{-5, 3}));
}

TEST(ConvertElementwise, ComparisonsAndLogic) {
  const NamedTensor a = F32In("a", {4}, {1, 2, 3, kNaN});
  const NamedTensor b = F32In("b", {1}, {2});
  auto cmp = [&](int opset, const char* op) {
    Out y = RunOne(opset, MakeNode(op, {"a", "b"}, {"y"}), {a, b});
    EXPECT_EQ(y.dtype, kBool) << op;
    return y.values;
  };
  EXPECT_EQ(cmp(13, "Equal"), (V{0, 1, 0, 0}));
  EXPECT_EQ(cmp(13, "Less"), (V{1, 0, 0, 0}));
  EXPECT_EQ(cmp(16, "LessOrEqual"), (V{1, 1, 0, 0}));
  EXPECT_EQ(cmp(13, "Greater"), (V{0, 0, 1, 0}));
  EXPECT_EQ(cmp(16, "GreaterOrEqual"), (V{0, 1, 1, 0}));
  EXPECT_EQ(RunOne(11, MakeNode("Equal", {"a", "b"}, {"y"}),
                   {In("a", kI64, {3}, {1, 2, 3}), In("b", kI64, {3}, {1, 0, 3})})
                .values,
            (V{1, 0, 1}));
  const NamedTensor p = In("p", kBool, {2, 2}, {0, 0, 1, 1});
  const NamedTensor q = In("q", kBool, {2}, {0, 1});
  EXPECT_EQ(RunOne(7, MakeNode("And", {"p", "q"}, {"y"}), {p, q}).values, (V{0, 0, 0, 1}));
  EXPECT_EQ(RunOne(7, MakeNode("Or", {"p", "q"}, {"y"}), {p, q}).values, (V{0, 1, 1, 1}));
  EXPECT_EQ(RunOne(7, MakeNode("Xor", {"p", "q"}, {"y"}), {p, q}).values, (V{0, 1, 1, 0}));
  EXPECT_EQ(RunOne(1, MakeNode("Not", {"p"}, {"y"}), {p}).values, (V{1, 1, 0, 0}));
  Out w = RunOne(16, MakeNode("Where", {"c", "x", "z"}, {"y"}),
                 {In("c", kBool, {2, 1}, {1, 0}), F32In("x", {2}, {1, 2}), F32In("z", {1}, {-1})});
  EXPECT_EQ(w.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(w.values, (V{1, 2, -1, -1}));
}

TEST(ConvertElementwise, Cast) {
  const NamedTensor x = F32In("x", {5}, {-1.75, -0.5, 0, 2.9, 300});
  Out i =
      RunOne(13, MakeNode("Cast", {"x"}, {"y"}, {AttrInt("to", onnx::TensorProto::INT32)}), {x});
  EXPECT_EQ(i.dtype, kI32);
  EXPECT_EQ(i.values, (V{-1, 0, 0, 2, 300}));  // truncation toward zero
  Out b = RunOne(13, MakeNode("Cast", {"x"}, {"y"}, {AttrInt("to", onnx::TensorProto::BOOL)}), {x});
  EXPECT_EQ(b.dtype, kBool);
  EXPECT_EQ(b.values, (V{1, 1, 0, 1, 1}));
  Out d =
      RunOne(6, MakeNode("Cast", {"x"}, {"y"}, {AttrInt("to", onnx::TensorProto::DOUBLE)}), {x});
  EXPECT_EQ(d.dtype, kF64);
  EXPECT_EQ(d.values, (V{-1.75, -0.5, 0, F(2.9), 300}));
  // Opset 1 names the type.
  Out s = RunOne(1, MakeNode("Cast", {"x"}, {"y"}, {AttrString("to", "INT64")}), {x});
  EXPECT_EQ(s.dtype, kI64);
  EXPECT_EQ(s.values, (V{-1, 0, 0, 2, 300}));
  // CastLike takes the second input's dtype.
  Out like =
      RunOne(15, MakeNode("CastLike", {"x", "t"}, {"y"}),
             {F32In("x", {4}, {0.5, 2.9, 300, 65535}), In("t", DataType::UInt(16), {1}, {0})});
  EXPECT_EQ(like.dtype, DataType::UInt(16));
  EXPECT_EQ(like.values, (V{0, 2, 300, 65535}));
  // Strings are not supported, and the error says so.
  auto str =
      RunNode(13, MakeNode("Cast", {"x"}, {"y"}, {AttrInt("to", onnx::TensorProto::STRING)}), {x});
  ASSERT_FALSE(str.ok());
  EXPECT_THAT(str.status().message(), HasSubstr("STRING"));
}

TEST(ConvertElementwise, IsNaNAndIsInf) {
  const NamedTensor x = F32In("x", {5}, {1, kInf, -kInf, kNaN, 0});
  EXPECT_EQ(RunOne(13, MakeNode("IsNaN", {"x"}, {"y"}), {x}).values, (V{0, 0, 0, 1, 0}));
  auto isinf = [&](std::vector<onnx::AttributeProto> attrs) {
    Out y = RunOne(10, MakeNode("IsInf", {"x"}, {"y"}, std::move(attrs)), {x});
    EXPECT_EQ(y.dtype, kBool);
    return y.values;
  };
  EXPECT_EQ(isinf({}), (V{0, 1, 1, 0, 0}));
  EXPECT_EQ(isinf({AttrInt("detect_negative", 0)}), (V{0, 1, 0, 0, 0}));
  EXPECT_EQ(isinf({AttrInt("detect_positive", 0)}), (V{0, 0, 1, 0, 0}));
  EXPECT_EQ(isinf({AttrInt("detect_positive", 0), AttrInt("detect_negative", 0)}),
            (V{0, 0, 0, 0, 0}));
}

TEST(ConvertElementwise, BitShift) {
  const DataType u8 = DataType::UInt(8);
  const NamedTensor x = In("x", u8, {5}, {1, 3, 255, 128, 77});
  const NamedTensor s = In("s", u8, {5}, {1, 2, 4, 8, 9});
  Out l = RunOne(11, MakeNode("BitShift", {"x", "s"}, {"y"}, {AttrString("direction", "LEFT")}),
                 {x, s});
  EXPECT_EQ(l.dtype, u8);
  EXPECT_EQ(l.values, (V{2, 12, (255 << 4) & 255, 0, 0}));
  Out r = RunOne(11, MakeNode("BitShift", {"x", "s"}, {"y"}, {AttrString("direction", "RIGHT")}),
                 {x, s});
  EXPECT_EQ(r.values, (V{0, 0, 15, 0, 0}));
  const DataType u64 = DataType::UInt(64);
  Out big = RunOne(11, MakeNode("BitShift", {"x", "s"}, {"y"}, {AttrString("direction", "RIGHT")}),
                   {In("x", u64, {2}, {4096, 1099511627776.0}), In("s", u64, {1}, {10})});
  EXPECT_EQ(big.values, (V{4, 1073741824.0}));
  auto bad =
      RunNode(11, MakeNode("BitShift", {"x", "s"}, {"y"}, {AttrString("direction", "UP")}), {x, s});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("direction must be \"LEFT\" or \"RIGHT\""));
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
