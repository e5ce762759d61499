// The quantization converters (convert_quant.cc): one-node models imported and
// run by the interpreter, against values computed here by plain loops from
// ONNX's definitions (round half to even, saturation, zero points per tensor,
// per axis, per row / column / output channel).
#include <algorithm>
#include <cmath>
#include <cstdint>
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
using S = std::vector<int64_t>;

constexpr DataType kF32 = DataType::Float(32);
constexpr DataType kI32 = DataType::Int(32);
constexpr DataType kU8 = DataType::UInt(8);
constexpr DataType kI8 = DataType::Int(8);

using Out = NodeOutput;

void ExpectExact(const Out& got, DataType dtype, const S& shape, const V& want) {
  EXPECT_EQ(got.dtype, dtype);
  ASSERT_EQ(got.shape, shape);
  ASSERT_EQ(got.values.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got.values[i], want[i]) << "element " << i;
}

// A float32 output within 1e-6 (relative above 1) of `want`.
void ExpectF32Near(const Out& got, const S& shape, const V& want) {
  EXPECT_EQ(got.dtype, kF32);
  ExpectNear(got, shape, want, 1e-6);
}

// ---- references from ONNX's definitions ----------------------------------------

// Round half to even, written out (not std::nearbyint, which the kernels use).
double RoundHalfEven(double v) {
  const double f = std::floor(v), diff = v - f;
  if (diff < 0.5) return f;
  if (diff > 0.5) return f + 1;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

double Saturate(double v, bool is_uint8) {
  return is_uint8 ? std::clamp(v, 0.0, 255.0) : std::clamp(v, -128.0, 127.0);
}

double Quant(float x, float scale, double zp, bool is_uint8) {
  return Saturate(RoundHalfEven(static_cast<double>(x / scale)) + zp, is_uint8);
}

// ---- QuantizeLinear -----------------------------------------------------------

TEST(QuantizeLinear, PerTensorRoundsHalfToEvenAndSaturates) {
  const V x = {0.0, 1.0, 3.0, 5.0, -1.0, -3.0, 1000.0, -1000.0, 2.2, 7.0};
  for (int64_t opset : {10, 13}) {
    Out y = Exec(opset, MakeNode("QuantizeLinear", {"x", "s", "zp"}, {"y"}),
                 {In("x", kF32, {2, 5}, x), In("s", kF32, {}, {2.0}), In("zp", kU8, {}, {128})});
    V want;
    for (double v : x) want.push_back(Quant(static_cast<float>(v), 2.0f, 128, true));
    ExpectExact(y, kU8, {2, 5}, want);
    // 1.0 / 2 = 0.5 rounds to 0 and 3.0 / 2 = 1.5 to 2; 5.0 / 2 = 2.5 to 2.
    EXPECT_EQ(want[1], 128);
    EXPECT_EQ(want[2], 130);
    EXPECT_EQ(want[3], 130);
  }
}

TEST(QuantizeLinear, Int8AndMissingZeroPoint) {
  const V x = {-300.0, -2.5, -0.5, 0.5, 1.5, 300.0};
  Out y = Exec(13, MakeNode("QuantizeLinear", {"x", "s", "zp"}, {"y"}),
               {In("x", kF32, {6}, x), In("s", kF32, {}, {1.0}), In("zp", kI8, {}, {-1})});
  V want;
  for (double v : x) want.push_back(Quant(static_cast<float>(v), 1.0f, -1, false));
  ExpectExact(y, kI8, {6}, want);
  // No zero point: uint8 with zero point 0.
  Out u = Exec(13, MakeNode("QuantizeLinear", {"x", "s"}, {"y"}),
               {In("x", kF32, {6}, x), In("s", kF32, {}, {1.0})});
  V want_u;
  for (double v : x) want_u.push_back(Quant(static_cast<float>(v), 1.0f, 0, true));
  ExpectExact(u, kU8, {6}, want_u);
}

TEST(QuantizeLinear, Int32Input) {
  const V x = {-7, 3, 5, 1000};
  Out y = Exec(10, MakeNode("QuantizeLinear", {"x", "s", "zp"}, {"y"}),
               {In("x", kI32, {4}, x), In("s", kF32, {}, {2.0}), In("zp", kU8, {}, {10})});
  V want;
  for (double v : x) want.push_back(Quant(static_cast<float>(v), 2.0f, 10, true));
  ExpectExact(y, kU8, {4}, want);
}

TEST(QuantizeLinear, PerAxis) {
  // x [2, 3, 2]; per-axis parameters along axis 1 (the default) and axis -2.
  V x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 3.7 * static_cast<double>(i) - 20.0;
  const V scale = {0.5, 2.0, 4.0}, zp = {0, 10, 200};
  V want;
  for (int64_t i = 0; i < 12; ++i) {
    const size_t ch = static_cast<size_t>((i / 2) % 3);
    want.push_back(Quant(static_cast<float>(x[static_cast<size_t>(i)]), static_cast<float>(scale[ch]),
                         zp[ch], true));
  }
  for (int64_t axis : {1, -2}) {
    Out y = Exec(13, MakeNode("QuantizeLinear", {"x", "s", "zp"}, {"y"}, {AttrInt("axis", axis)}),
                 {In("x", kF32, {2, 3, 2}, x), In("s", kF32, {3}, scale), In("zp", kU8, {3}, zp)});
    ExpectExact(y, kU8, {2, 3, 2}, want);
  }
}

TEST(QuantizeLinear, PerAxisNeedsOpset13) {
  auto r = RunNode(10, MakeNode("QuantizeLinear", {"x", "s"}, {"y"}),
                   {In("x", kF32, {2, 3}, {1, 2, 3, 4, 5, 6}), In("s", kF32, {3}, {1, 2, 3})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("before opset 13"));
}

TEST(QuantizeLinear, UnsupportedZeroPointDtype) {
  auto r = RunNode(13, MakeNode("QuantizeLinear", {"x", "s", "zp"}, {"y"}),
                   {In("x", kF32, {2}, {1, 2}), In("s", kF32, {}, {1}),
                    In("zp", DataType::UInt(16), {}, {0})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
}

// ---- DequantizeLinear ---------------------------------------------------------

TEST(DequantizeLinear, PerTensorAndPerAxis) {
  const V x = {0, 3, 128, 255, 1, 90};
  Out y = Exec(10, MakeNode("DequantizeLinear", {"x", "s", "zp"}, {"y"}),
               {In("x", kU8, {6}, x), In("s", kF32, {}, {0.5}), In("zp", kU8, {}, {128})});
  V want;
  for (double v : x) want.push_back((v - 128) * 0.5);
  ExpectF32Near(y, {6}, want);

  const V xi = {-128, -1, 0, 5, 127, 60};
  const V scale = {0.25, 3.0};
  const V zp = {-3, 7};
  Out z = Exec(13, MakeNode("DequantizeLinear", {"x", "s", "zp"}, {"y"}, {AttrInt("axis", 0)}),
               {In("x", kI8, {2, 3}, xi), In("s", kF32, {2}, scale), In("zp", kI8, {2}, zp)});
  V want_z;
  for (size_t i = 0; i < xi.size(); ++i) want_z.push_back((xi[i] - zp[i / 3]) * scale[i / 3]);
  ExpectF32Near(z, {2, 3}, want_z);
}

TEST(DequantizeLinear, Int32WithoutZeroPoint) {
  const V x = {-100000, 7, 123456};
  Out y = Exec(13, MakeNode("DequantizeLinear", {"x", "s"}, {"y"}),
               {In("x", kI32, {3}, x), In("s", kF32, {}, {0.125})});
  ExpectF32Near(y, {3}, {-12500.0, 0.875, 15432.0});
}

// ---- DynamicQuantizeLinear ------------------------------------------------------

TEST(DynamicQuantizeLinear, MatchesTheDefinition) {
  const std::vector<V> cases = {{0.0, 2.0, -3.0, -2.5, 1.34, 0.5},   // both signs
                                {1.0, 2.5, 4.0, 7.5, 0.25, 3.0},     // min adjusted to 0
                                {-1.0, -2.5, -4.0, -7.5, -0.25, -3.0}};  // max adjusted to 0
  for (const V& x : cases) {
    float lo = 0, hi = 0;
    for (double v : x) {
      lo = std::min(lo, static_cast<float>(v));
      hi = std::max(hi, static_cast<float>(v));
    }
    const float scale = (hi - lo) / 255.0f;
    const double zp = RoundHalfEven(std::clamp(static_cast<double>(0.0f - lo / scale), 0.0, 255.0));
    std::vector<Out> outs = ExecAll(11, MakeNode("DynamicQuantizeLinear", {"x"}, {"y", "s", "zp"}),
                                    {In("x", kF32, {2, 3}, x)});
    ASSERT_EQ(outs.size(), 3u);
    V want;
    for (double v : x) want.push_back(Quant(static_cast<float>(v), scale, zp, true));
    ExpectExact(outs[0], kU8, {2, 3}, want);
    ASSERT_EQ(outs[1].shape, S{});
    EXPECT_FLOAT_EQ(static_cast<float>(outs[1].values[0]), scale);
    ExpectExact(outs[2], kU8, {}, {zp});
  }
}

// ---- integer and quantized products ---------------------------------------------

// [M, K] x [K, N] with per-row a zero points and per-column b zero points.
V RefMatMul(const V& a, const V& azp, const V& b, const V& bzp, int64_t M, int64_t K, int64_t N) {
  V y(static_cast<size_t>(M * N), 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += (a[static_cast<size_t>(m * K + k)] - azp[azp.size() == 1 ? 0 : static_cast<size_t>(m)]) *
               (b[static_cast<size_t>(k * N + n)] - bzp[bzp.size() == 1 ? 0 : static_cast<size_t>(n)]);
      y[static_cast<size_t>(m * N + n)] = acc;
    }
  return y;
}

TEST(MatMulInteger, ZeroPointsPerRowAndScalar) {
  const V a = {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0};  // [4, 3]
  const V b = {1, 4, 2, 5, 3, 6};                        // [3, 2]
  const V azp = {12, 0, 3, 5};
  Out y = Exec(10, MakeNode("MatMulInteger", {"a", "b", "azp", "bzp"}, {"y"}),
               {In("a", kU8, {4, 3}, a), In("b", kU8, {3, 2}, b), In("azp", kU8, {4}, azp),
                In("bzp", kU8, {}, {2})});
  ExpectExact(y, kI32, {4, 2}, RefMatMul(a, azp, b, {2}, 4, 3, 2));
  // int8 operands, no zero points.
  const V ai = {-128, 127, 5, -6};
  const V bi = {3, -4, 127, -128};
  Out z = Exec(10, MakeNode("MatMulInteger", {"a", "b"}, {"y"}),
               {In("a", kI8, {2, 2}, ai), In("b", kI8, {2, 2}, bi)});
  ExpectExact(z, kI32, {2, 2}, RefMatMul(ai, {0}, bi, {0}, 2, 2, 2));
}

TEST(QLinearMatMul, Requantizes) {
  const V a = {208, 236, 0, 238, 3, 214, 255, 29};  // [2, 4]
  const V b = {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247};  // [4, 3]
  const float sa = 0.0066f, sb = 0.00705f, sy = 0.0107f;
  const double azp = 113, bzp = 114, yzp = 118;
  Out y = Exec(10,
               MakeNode("QLinearMatMul", {"a", "sa", "azp", "b", "sb", "bzp", "sy", "yzp"}, {"y"}),
               {In("a", kU8, {2, 4}, a), In("sa", kF32, {}, {sa}), In("azp", kU8, {}, {azp}),
                In("b", kU8, {4, 3}, b), In("sb", kF32, {}, {sb}), In("bzp", kU8, {}, {bzp}),
                In("sy", kF32, {}, {sy}), In("yzp", kU8, {}, {yzp})});
  const V acc = RefMatMul(a, {azp}, b, {bzp}, 2, 4, 3);
  V want;
  const float mult = sa * sb / sy;
  for (double v : acc) want.push_back(Saturate(RoundHalfEven(static_cast<double>(static_cast<float>(v) * mult)) + yzp, true));
  ExpectExact(y, kU8, {2, 3}, want);
}

// NCHW x OIHW (N = 1, one group), centered operands, zero padding.
V RefConvInt(const V& x, const S& xs, double xzp, const V& w, const S& ws, const V& wzp,
             int64_t pad, S* os) {
  const int64_t C = xs[1], H = xs[2], W = xs[3], M = ws[0], KH = ws[2], KW = ws[3];
  const int64_t OH = H + 2 * pad - KH + 1, OW = W + 2 * pad - KW + 1;
  *os = {1, M, OH, OW};
  V y(static_cast<size_t>(M * OH * OW), 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = 0;
        for (int64_t ch = 0; ch < C; ++ch)
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              const int64_t ih = oh - pad + kh, iw = ow - pad + kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              acc += (x[static_cast<size_t>((ch * H + ih) * W + iw)] - xzp) *
                     (w[static_cast<size_t>(((m * C + ch) * KH + kh) * KW + kw)] -
                      wzp[wzp.size() == 1 ? 0 : static_cast<size_t>(m)]);
            }
        y[static_cast<size_t>((m * OH + oh) * OW + ow)] = acc;
      }
  return y;
}

TEST(ConvInteger, PaddingAndPerChannelWeightZeroPoint) {
  V x(2 * 3 * 3), w(2 * 2 * 2 * 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37) % 256);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>((i * 53 + 11) % 256);
  const V wzp = {100, 3};
  S os;
  const V want = RefConvInt(x, {1, 2, 3, 3}, 7, w, {2, 2, 2, 2}, wzp, 1, &os);
  Out y = Exec(10, MakeNode("ConvInteger", {"x", "w", "xzp", "wzp"}, {"y"}, {AttrInts("pads", {1, 1, 1, 1})}),
               {In("x", kU8, {1, 2, 3, 3}, x), In("w", kU8, {2, 2, 2, 2}, w),
                In("xzp", kU8, {}, {7}), In("wzp", kU8, {2}, wzp)});
  ExpectExact(y, kI32, os, want);
  // Without zero points and padding.
  const V want0 = RefConvInt(x, {1, 2, 3, 3}, 0, w, {2, 2, 2, 2}, {0}, 0, &os);
  Out z = Exec(10, MakeNode("ConvInteger", {"x", "w"}, {"y"}),
               {In("x", kU8, {1, 2, 3, 3}, x), In("w", kU8, {2, 2, 2, 2}, w)});
  ExpectExact(z, kI32, os, want0);
}

TEST(QLinearConv, BiasAndPerChannelScale) {
  V x(1 * 2 * 4 * 4), w(3 * 2 * 3 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 29 + 5) % 256) - 128;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>((i * 71 + 3) % 256) - 128;
  const V bias = {1000, -2000, 37};
  const V ws = {0.01, 0.02, 0.005};
  const float xs = 0.05f, ys = 0.7f;
  S os;
  const V acc = RefConvInt(x, {1, 2, 4, 4}, -3, w, {3, 2, 3, 3}, {0}, 1, &os);
  V want;
  const int64_t per = os[2] * os[3];
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t m = i / static_cast<size_t>(per);
    const float mult = xs * static_cast<float>(ws[m]) / ys;
    want.push_back(Saturate(RoundHalfEven(static_cast<double>(static_cast<float>(acc[i] + bias[m]) * mult)) + 5, false));
  }
  Out y = Exec(10,
               MakeNode("QLinearConv", {"x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "b"}, {"y"},
                        {AttrInts("pads", {1, 1, 1, 1})}),
               {In("x", kI8, {1, 2, 4, 4}, x), In("xs", kF32, {}, {xs}), In("xzp", kI8, {}, {-3}),
                In("w", kI8, {3, 2, 3, 3}, w), In("ws", kF32, {3}, ws), In("wzp", kI8, {}, {0}),
                In("ys", kF32, {}, {ys}), In("yzp", kI8, {}, {5}), In("b", kI32, {3}, bias)});
  ExpectExact(y, kI8, os, want);
}

TEST(ConvInteger, RejectsFloatOperands) {
  auto r = RunNode(10, MakeNode("ConvInteger", {"x", "w"}, {"y"}),
                   {In("x", kF32, {1, 1, 2, 2}, {1, 2, 3, 4}), In("w", kF32, {1, 1, 1, 1}, {1})});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("uint8 and int8"));
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
