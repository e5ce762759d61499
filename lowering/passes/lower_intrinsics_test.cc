// File: lowering/passes/lower_intrinsics_test.cc
//
// Accuracy of the lowered math functions: the lowered expressions are run by
// the reference interpreter (float32 rounding after every operation, no FMA,
// as compiled code without contraction) over dense sweeps of each function's
// range plus edge cases, and compared with libm in double precision.
#include "lowering/passes/lower_intrinsics.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"
#include "lowering/passes/tir_eval.h"
#include "lowering/passes/verify.h"

namespace kiln::tir::transform {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const DataType kF32 = DataType::Float(32);
constexpr int kLanes = 4096;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kFltMin = 1.17549435082228751e-38;

double Ref(const std::string& name, double x) {
  if (name == "exp") return std::exp(x);
  if (name == "exp2") return std::exp2(x);
  if (name == "expm1") return std::expm1(x);
  if (name == "log") return std::log(x);
  if (name == "log2") return std::log2(x);
  if (name == "log1p") return std::log1p(x);
  if (name == "tanh") return std::tanh(x);
  if (name == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (name == "erf") return std::erf(x);
  return kNaN;
}

float FromBits(uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

std::vector<double> Linspace(double lo, double hi, int n) {
  std::vector<double> v;
  for (int k = 0; k < n; ++k) v.push_back(static_cast<float>(lo + (hi - lo) * k / (n - 1)));
  return v;
}

// +-10^lo .. +-10^hi, log-spaced.
std::vector<double> LogSpaced(double lo, double hi, int n, bool both_signs) {
  std::vector<double> v;
  for (int k = 0; k < n; ++k) {
    double x = static_cast<float>(std::pow(10.0, lo + (hi - lo) * k / (n - 1)));
    v.push_back(x);
    if (both_signs) v.push_back(-x);
  }
  return v;
}

// Positive floats sampled uniformly by bit pattern (all binades, subnormals incl.).
std::vector<double> AllPositiveFloats(int n) {
  std::vector<double> v;
  for (int k = 0; k < n; ++k) {
    uint32_t bits = static_cast<uint32_t>(1 + (uint64_t{0x7f7fffff} - 1) * k / (n - 1));
    v.push_back(FromBits(bits));
  }
  return v;
}

std::vector<double> Edges() {
  return {0.0,
          -0.0,
          kInf,
          -kInf,
          kNaN,
          kFltMin,
          -kFltMin,
          1.4e-45,
          -1.4e-45,
          1.0,
          -1.0,
          3.4028234663852886e38,
          -3.4028234663852886e38,
          88.7228394,
          88.72284,
          -87.3365479,
          -103.972084,
          -104.0,
          89.0,
          127.999,
          128.0,
          -149.0,
          -150.0,
          0.34657359,
          -0.34657359,
          0.625,
          -0.625,
          9.0,
          10.0,
          4.0,
          -4.0,
          0.5,
          2.0,
          0.70710677,
          1.4142135};
}

struct Accuracy {
  double max_rel = 0;
  double worst_x = 0;
  double max_abs_subnormal = 0;
  int64_t points = 0;
  std::string special_errors;
};

// Runs the lowered `name` on `xs`.
Accuracy Measure(const std::string& name, const std::vector<double>& xs_in,
                 const LowerIntrinsicsOptions& options = {}) {
  Var x = MakeVar("x", DataType(DTypeCode::kFloat, 32, kLanes));
  PrimExpr call = Call(x->dtype, name, {x});
  PrimExpr lowered = LowerIntrinsicCall(call, options);
  EXPECT_NE(lowered.get(), call.get()) << name << " was not lowered";
  std::vector<double> xs = xs_in;
  std::vector<double> edges = Edges();
  xs.insert(xs.end(), edges.begin(), edges.end());
  while (xs.size() % kLanes != 0) xs.push_back(0.5);
  for (double& v : xs) v = static_cast<float>(v);  // the reference sees the float32 input
  Accuracy acc;
  for (size_t base = 0; base < xs.size(); base += kLanes) {
    std::vector<double> chunk(xs.begin() + base, xs.begin() + base + kLanes);
    absl::StatusOr<std::vector<double>> got = testing::EvalExpr(lowered, {{x.get(), chunk}});
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok()) return acc;
    for (int l = 0; l < kLanes; ++l) {
      double in = chunk[l], g = (*got)[l], r = Ref(name, in);
      ++acc.points;
      if (std::isnan(r) || std::isinf(r) || std::isnan(g) || std::isinf(g)) {
        bool ok = (std::isnan(r) && std::isnan(g)) || (g == r);
        // Results that overflow float32 must be inf.
        if (!ok && std::isfinite(r) && std::isinf(g) && std::fabs(r) > 3.4028234663852886e38)
          ok = true;
        if (!ok && acc.special_errors.size() < 400) {
          acc.special_errors += name + "(" + std::to_string(in) + ") = " + std::to_string(g) +
                                ", want " + std::to_string(r) + "; ";
        }
        continue;
      }
      if (std::fabs(r) > 3.4028234663852886e38) {
        if (!std::isinf(g) && acc.special_errors.size() < 400) {
          acc.special_errors += name + "(" + std::to_string(in) + ") should overflow; ";
        }
        continue;
      }
      if (std::fabs(r) < kFltMin) {
        acc.max_abs_subnormal = std::max(acc.max_abs_subnormal, std::fabs(g - r));
        continue;
      }
      double rel = std::fabs(g - r) / std::fabs(r);
      if (rel > acc.max_rel) {
        acc.max_rel = rel;
        acc.worst_x = in;
      }
    }
  }
  std::printf(
      "%-8s max rel error %.3g at x = %.9g; max abs error below FLT_MIN %.3g; %lld points\n",
      name.c_str(), acc.max_rel, acc.worst_x, acc.max_abs_subnormal,
      static_cast<long long>(acc.points));
  return acc;
}

void ExpectAccurate(const std::string& name, const std::vector<double>& xs,
                    const LowerIntrinsicsOptions& options = {}) {
  Accuracy a = Measure(name, xs, options);
  EXPECT_LE(a.max_rel, 2e-6) << name << " worst at x = " << a.worst_x;
  // Below FLT_MIN the spacing of float32 is 1.4e-45: allow a few units.
  EXPECT_LE(a.max_abs_subnormal, 1e-44) << name;
  EXPECT_EQ(a.special_errors, "") << name;
}

std::vector<double> Concat(std::vector<std::vector<double>> parts) {
  std::vector<double> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(LowerIntrinsicsAccuracyTest, Exp) {
  ExpectAccurate("exp", Concat({Linspace(-105, 89, 1 << 19), LogSpaced(-30, 0, 1 << 14, true)}));
}
TEST(LowerIntrinsicsAccuracyTest, Exp2) {
  ExpectAccurate("exp2", Concat({Linspace(-152, 129, 1 << 19), LogSpaced(-30, 0, 1 << 14, true)}));
}
TEST(LowerIntrinsicsAccuracyTest, Expm1) {
  ExpectAccurate("expm1", Concat({Linspace(-20, 89, 1 << 18), Linspace(-1, 1, 1 << 17),
                                  LogSpaced(-38, 0, 1 << 15, true)}));
}
TEST(LowerIntrinsicsAccuracyTest, Log) {
  ExpectAccurate("log", Concat({AllPositiveFloats(1 << 19), Linspace(0.5, 2, 1 << 17),
                                Linspace(-4, 0, 1 << 10)}));
}
TEST(LowerIntrinsicsAccuracyTest, Log2) {
  ExpectAccurate("log2", Concat({AllPositiveFloats(1 << 19), Linspace(0.5, 2, 1 << 17)}));
}
TEST(LowerIntrinsicsAccuracyTest, Log1p) {
  ExpectAccurate("log1p", Concat({AllPositiveFloats(1 << 18), Linspace(-0.9999999, 1, 1 << 18),
                                  LogSpaced(-38, 0, 1 << 15, true), Linspace(-3, -1, 1 << 8)}));
}
TEST(LowerIntrinsicsAccuracyTest, Tanh) {
  ExpectAccurate("tanh", Concat({Linspace(-12, 12, 1 << 19), LogSpaced(-38, 0, 1 << 15, true),
                                 Linspace(-100, 100, 1 << 10)}));
}
TEST(LowerIntrinsicsAccuracyTest, Sigmoid) {
  ExpectAccurate("sigmoid",
                 Concat({Linspace(-100, 100, 1 << 19), LogSpaced(-38, 0, 1 << 14, true)}));
}

// With native_ldexp (AVX-512) sigmoid and tanh scale by the "ldexp"
// intrinsic; without it (the cases above) by exponent-field arithmetic.
// Both must be as accurate; sigmoid's results below FLT_MIN (x < -87.3)
// test the final rounding of the 2^-64 scaling.
LowerIntrinsicsOptions NativeLdexp() {
  LowerIntrinsicsOptions o;
  o.native_ldexp = true;
  return o;
}
TEST(LowerIntrinsicsAccuracyTest, SigmoidNativeLdexp) {
  ExpectAccurate("sigmoid", Concat({Linspace(-104, 10, 1 << 16), LogSpaced(-38, 0, 1 << 12, true)}),
                 NativeLdexp());
}
TEST(LowerIntrinsicsAccuracyTest, TanhNativeLdexp) {
  ExpectAccurate("tanh", Concat({Linspace(-12, 12, 1 << 16), LogSpaced(-38, 0, 1 << 12, true)}),
                 NativeLdexp());
}

TEST(LowerIntrinsicsTest, ScalingFollowsTheTarget) {
  Var x = MakeVar("x", DataType(DTypeCode::kFloat, 32, 8));
  for (const char* name : {"sigmoid", "tanh", "exp"}) {
    const std::string plain = ToText(LowerIntrinsicCall(Call(x->dtype, name, {x})));
    const std::string native =
        ToText(LowerIntrinsicCall(Call(x->dtype, name, {x}), NativeLdexp()));
    EXPECT_THAT(native, HasSubstr("ldexp(")) << name;
    if (std::string(name) == "exp") {
      // exp's n spans [-150, 128]: no single exponent-field scaling covers it.
      EXPECT_THAT(plain, HasSubstr("ldexp(")) << name;
    } else {
      EXPECT_THAT(plain, Not(HasSubstr("ldexp("))) << name;
      EXPECT_THAT(plain, HasSubstr("reinterpret:")) << name;
    }
  }
}
TEST(LowerIntrinsicsAccuracyTest, Erf) {
  ExpectAccurate("erf", Concat({Linspace(-6, 6, 1 << 19), LogSpaced(-38, 0, 1 << 15, true)}));
}

// ---- The pass on functions ----------------------------------------------------

TEST(LowerIntrinsicsTest, LowersVectorCallsInAFunction) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(16)});
  Buffer b = MakeBuffer("B", kF32, {IntImm(16)});
  PrimExpr idx = Ramp(IntImm(0), IntImm(1), 16);
  DataType v16(DTypeCode::kFloat, 32, 16);
  Stmt body = Store(
      b, Add(Call(v16, "tanh", {Load(a, {idx})}), Call(v16, "sigmoid", {Load(a, {idx})})), {idx});
  PrimFunc f = MakePrimFunc("act", {a, b}, body);
  absl::StatusOr<PrimFunc> g = LowerIntrinsics(f);
  ASSERT_TRUE(g.ok());
  std::string text = ToText(*g);
  EXPECT_THAT(text, Not(HasSubstr("tanh(")));
  EXPECT_THAT(text, Not(HasSubstr("sigmoid(")));
  absl::Status v = VerifyPrimFunc(*g);
  EXPECT_TRUE(v.ok()) << v;
  EXPECT_TRUE(testing::ExpectSameResults(f, *g, 5, {}, 2e-6).ok());
  // The pass passes its options on: with native_ldexp, 2^n is the intrinsic.
  absl::StatusOr<PrimFunc> native = LowerIntrinsics(f, NativeLdexp());
  ASSERT_TRUE(native.ok());
  EXPECT_THAT(ToText(*native), HasSubstr("ldexp("));
  EXPECT_THAT(text, Not(HasSubstr("ldexp(")));
  EXPECT_TRUE(testing::ExpectSameResults(f, *native, 5, {}, 2e-6).ok());
}

TEST(LowerIntrinsicsTest, HalfPrecisionIsComputedInFloat32) {
  DataType f16 = DataType::Float(16);
  Buffer a = MakeBuffer("A", f16, {IntImm(8)});
  Var i = MakeVar("i");
  Stmt body = For(i, IntImm(0), IntImm(8), ForKind::kSerial,
                  Store(a, Call(f16, "exp", {Load(a, {i})}), {i}));
  PrimFunc f = MakePrimFunc("h", {a}, body);
  absl::StatusOr<PrimFunc> g = LowerIntrinsics(f);
  ASSERT_TRUE(g.ok());
  EXPECT_THAT(ToText(*g), HasSubstr("float16("));
  EXPECT_TRUE(VerifyPrimFunc(*g).ok()) << VerifyPrimFunc(*g);
  EXPECT_TRUE(testing::ExpectSameResults(f, *g, 5, {}, 1e-3).ok());
}

TEST(LowerIntrinsicsTest, Bfloat16IsComputedInFloat32) {
  DataType bf16 = DataType::BFloat16();
  Buffer a = MakeBuffer("A", bf16, {IntImm(8)});
  PrimExpr idx = Ramp(IntImm(0), IntImm(1), 8);
  DataType v8(DTypeCode::kBFloat, 16, 8);
  Stmt body = Store(a, Call(v8, "sigmoid", {Load(a, {idx})}), {idx});
  PrimFunc f = MakePrimFunc("b", {a}, body);
  absl::StatusOr<PrimFunc> g = LowerIntrinsics(f);
  ASSERT_TRUE(g.ok());
  EXPECT_THAT(ToText(*g), HasSubstr("bfloat16x8("));
  EXPECT_TRUE(VerifyPrimFunc(*g).ok()) << VerifyPrimFunc(*g);
  EXPECT_TRUE(testing::ExpectSameResults(f, *g, 6, {}, 1e-2).ok());
}

TEST(LowerIntrinsicsTest, LeavesFloat64AndOtherCallsAlone) {
  DataType f64 = DataType::Float(64);
  Buffer a = MakeBuffer("A", f64, {IntImm(8)});
  Buffer c = MakeBuffer("C", kF32, {IntImm(8)});
  Stmt body =
      Seq({Store(a, Call(f64, "exp", {Load(a, {IntImm(0)})}), {IntImm(0)}),
           Store(c, Call(kF32, "sqrt", {Load(c, {IntImm(0)})}), {IntImm(0)}),
           Store(c, Call(kF32, "exp", {Load(c, {IntImm(1)})}, CallEffect::kOpaque), {IntImm(1)})});
  PrimFunc f = MakePrimFunc("keep", {a, c}, body);
  absl::StatusOr<PrimFunc> g = LowerIntrinsics(f);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->get(), f.get());
}

}  // namespace
}  // namespace kiln::tir::transform
