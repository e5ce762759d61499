// File: lowering/passes/lower_intrinsics.cc
#include "lowering/passes/lower_intrinsics.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ir/tir_functor.h"
#include "lowering/passes/pass_util.h"

namespace kiln::tir::transform {
namespace {

constexpr double kLog2e = 1.44269504088896341;
constexpr double kLn2 = 0.693147180559945309;
// Cody-Waite split of ln(2): kLn2Hi has 9 significant bits, so n * kLn2Hi is
// exact for |n| < 2^15.
constexpr double kLn2Hi = 0.693359375;
constexpr double kLn2Lo = -2.12194440e-4;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kFltMin = 1.17549435082228751e-38;  // smallest normal float32

// Builds a float32 computation of `lanes` lanes as a chain of lets.
class Builder {
 public:
  Builder(int lanes, bool native_ldexp) : lanes_(lanes), native_ldexp_(native_ldexp) {}

  // The target scales by 2^n in one instruction (AVX-512's vscalefps): 2^n
  // stays an "ldexp" call instead of exponent-field arithmetic.
  bool native_ldexp() const { return native_ldexp_; }

  DataType F32() const { return DataType(DTypeCode::kFloat, 32, lanes_); }
  DataType I32() const { return DataType(DTypeCode::kInt, 32, lanes_); }
  DataType Bool() const { return DataType(DTypeCode::kBool, 8, lanes_); }
  PrimExpr F(double v) const { return MakeConst(F32(), v); }
  PrimExpr I(int64_t v) const { return MakeConst(I32(), static_cast<double>(v)); }

  // Binds `value` to a new var (named `name`) and returns the var.
  PrimExpr Def(absl::string_view name, const PrimExpr& value) {
    if (value->kind == ExprKind::kVar || value->kind == ExprKind::kFloatImm ||
        value->kind == ExprKind::kIntImm || value->kind == ExprKind::kBroadcast) {
      return value;
    }
    Var v = MakeVar(name, value->dtype);
    lets_.emplace_back(v, value);
    return v;
  }

  PrimExpr Finish(PrimExpr body) {
    for (size_t k = lets_.size(); k > 0; --k)
      body = Let(lets_[k - 1].first, lets_[k - 1].second, body);
    lets_.clear();
    return body;
  }

  PrimExpr Call1(absl::string_view name, const PrimExpr& x) const {
    return Call(x->dtype, name, {x});
  }
  PrimExpr Floor(const PrimExpr& x) const { return Call1("floor", x); }
  PrimExpr Fabs(const PrimExpr& x) const { return Call1("fabs", x); }
  PrimExpr AsFloat(const PrimExpr& bits) const { return Call(F32(), "reinterpret", {bits}); }
  PrimExpr AsInt(const PrimExpr& x) const { return Call(I32(), "reinterpret", {x}); }
  PrimExpr IsNaN(const PrimExpr& x) const { return NE(x, x); }

  // c[0] * x^(n-1) + ... + c[n-1] by Estrin's scheme: adjacent coefficients
  // paired (c[n-2] x + c[n-1], ...), the pairs combined with x^2, those with
  // x^4, and so on. For 8 coefficients two more multiplications than
  // Horner's rule, but a dependency chain of 4 multiply-adds instead of 7:
  // an elementwise loop full of exp or erf is bound by the latency of that
  // chain (the out-of-order window holds few of its long chains). Measured
  // on Zen 3 (AVX2), sigmoid over 64K floats: about 9% faster than Horner's.
  PrimExpr Estrin(const PrimExpr& x, const std::vector<double>& c) {
    std::vector<PrimExpr> terms;  // lowest degree first
    for (size_t k = c.size(); k > 0; --k) terms.push_back(F(c[k - 1]));
    PrimExpr power = x;
    int degree = 1;
    while (terms.size() > 1) {
      std::vector<PrimExpr> next;
      for (size_t k = 0; k < terms.size(); k += 2) {
        next.push_back(k + 1 < terms.size() ? Add(Mul(terms[k + 1], power), terms[k]) : terms[k]);
      }
      terms = std::move(next);
      degree *= 2;
      if (terms.size() > 1) power = Def("pow" + std::to_string(degree), Mul(power, power));
    }
    return terms[0];
  }

 private:
  int lanes_;
  bool native_ldexp_;
  std::vector<std::pair<Var, PrimExpr>> lets_;
};

// Cephes expf: e^r = 1 + r + r^2 * P(r) for |r| <= ln(2)/2.
const std::vector<double> kExpP = {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                                   4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1};
// Cephes logf: log(1 + f) = f - f^2/2 + f^3 * P(f) for f in [sqrt(1/2) - 1, sqrt(2) - 1].
const std::vector<double> kLogP = {7.0376836292E-2,  -1.1514610310E-1, 1.1676998740E-1,
                                   -1.2420140846E-1, 1.4249322787E-1,  -1.6668057665E-1,
                                   2.0000714765E-1,  -2.4999993993E-1, 3.3333331174E-1};
// Cephes tanhf: tanh(x) = x + x^3 * P(x^2) for |x| < 0.625.
const std::vector<double> kTanhP = {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2,
                                    1.33314422036E-1, -3.33332819422E-1};
// Eigen's erf: x * A(x^2) / B(x^2) on [-4, 4].
const std::vector<double> kErfA = {
    -2.72614225801306e-10, 2.77068142495902e-08,  -2.10102402082508e-06, -5.69250639462346e-05,
    -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02};
const std::vector<double> kErfB = {-1.45660718464996e-05, -2.13374055278905e-04,
                                   -1.68282697438203e-03, -7.37332916720468e-03,
                                   -1.42647390514189e-02};

// e^r via the polynomial, for |r| <= ln(2)/2: 1 + r + r^2 P(r) as one
// degree-7 polynomial, by Estrin's scheme.
PrimExpr ExpPoly(Builder& b, const PrimExpr& r) {
  std::vector<double> c = kExpP;
  c.push_back(1);
  c.push_back(1);
  return b.Estrin(r, c);
}

// 2^(n + offset) for an integral float n with n + offset in [-126, 127]: the
// biased exponent n + offset + 127 read from the low bits of n + 1.5 * 2^23
// (+ offset + 127), shifted into the exponent field.
PrimExpr Pow2(Builder& b, const PrimExpr& n, int offset) {
  PrimExpr biased = Sub(b.AsInt(Add(n, b.F(12582912.0 + offset + 127))), b.I(0x4B400000));
  return b.AsFloat(Mul(biased, b.I(1 << 23)));
}

// What ExpCore knows of its argument.
enum class ExpRange {
  kAny,          // any float (clamped to [-104, 89])
  kNonPositive,  // x <= 0 or NaN (clamped to [-104, 0])
  kSmall,        // x in [0, 20] (no clamp): 2^n at most 2^29
};

// exp(x) = 2^n e^r with n = round(x log2 e) and r = x - n ln 2 (Cody-Waite),
// for x clamped to [-104, 89] (or less, by `range`). In general the scaling
// is the "ldexp" intrinsic (n is in [-150, 128]): one vscalefps on AVX-512,
// two half-range factors elsewhere. Where the range of n allows, and the
// target has no vscalefps, 2^n is built in the exponent field instead (five
// operations or fewer instead of eleven). A NaN x gives an unspecified value;
// callers select NaN lanes away.
PrimExpr ExpCore(Builder& b, const PrimExpr& x, ExpRange range = ExpRange::kAny) {
  PrimExpr xc = x;
  if (range != ExpRange::kSmall) {
    PrimExpr lo = Max(x, b.F(-104));
    xc = b.Def("xc", range == ExpRange::kNonPositive ? lo : Min(lo, b.F(89)));
  }
  PrimExpr n = b.Def("n", b.Floor(Add(Mul(xc, b.F(kLog2e)), b.F(0.5))));
  PrimExpr r = b.Def("r", Sub(Sub(xc, Mul(n, b.F(kLn2Hi))), Mul(n, b.F(kLn2Lo))));
  PrimExpr p = b.Def("p", ExpPoly(b, r));
  if (!b.native_ldexp() && range == ExpRange::kSmall) {
    return Mul(p, Pow2(b, n, 0));  // n in [0, 29]: exact
  }
  if (!b.native_ldexp() && range == ExpRange::kNonPositive) {
    // n in [-150, 0]: p * 2^(n + 64) is a normal number (p in [0.7, 1.42]),
    // an exact scaling; the one rounding is the final * 2^-64, as ldexp's.
    return Mul(Mul(p, Pow2(b, n, 64)), b.F(0x1p-64));
  }
  return Call(b.F32(), "ldexp", {p, n});
}

PrimExpr Sanitize(Builder& b, const PrimExpr& x) {
  return b.Def("xs", Select(b.IsNaN(x), b.F(0), x));
}

PrimExpr LowerExp(Builder& b, const PrimExpr& x) {
  PrimExpr e = b.Def("e", ExpCore(b, x));
  return Select(b.IsNaN(x), x, e);
}

PrimExpr LowerExp2(Builder& b, const PrimExpr& x) {
  PrimExpr xc = b.Def("xc", Min(Max(Sanitize(b, x), b.F(-151)), b.F(129)));
  PrimExpr n = b.Def("n", b.Floor(Add(xc, b.F(0.5))));
  PrimExpr r = b.Def("r", Mul(Sub(xc, n), b.F(kLn2)));
  PrimExpr p = b.Def("p", ExpPoly(b, r));
  PrimExpr e = b.Def("e", Call(b.F32(), "ldexp", {p, n}));
  return Select(b.IsNaN(x), x, e);
}

PrimExpr LowerExpm1(Builder& b, const PrimExpr& x) {
  PrimExpr xs = Sanitize(b, x);
  PrimExpr small = b.Def("small", Add(Mul(b.Estrin(xs, kExpP), Mul(xs, xs)), xs));
  PrimExpr big = b.Def("big", Sub(ExpCore(b, xs), b.F(1)));
  PrimExpr r = Select(LT(b.Fabs(xs), b.F(0.5 * kLn2)), small, big);
  return Select(b.IsNaN(x), x, r);
}

// log(1 + f) - f*0 pieces: returns (e, y, f) with log(x) = f + y + e*ln2 split
// as in Cephes, for x > 0 finite (other inputs give garbage, fixed by the
// caller's selects).
struct LogParts {
  PrimExpr e;  // exponent (float)
  PrimExpr f;  // mantissa - 1, in [sqrt(1/2) - 1, sqrt(2) - 1)
  PrimExpr y;  // f^3 P(f) - f^2 / 2
};

LogParts LogReduce(Builder& b, const PrimExpr& x) {
  PrimExpr tiny = b.Def("tiny", LT(x, b.F(kFltMin)));
  PrimExpr xs = b.Def("xn", Select(tiny, Mul(x, b.F(8388608.0)), x));  // * 2^23
  PrimExpr bits = b.Def("bits", b.AsInt(xs));
  // Mantissa in [0.5, 1) and the matching exponent.
  PrimExpr m = b.Def("m", b.AsFloat(Add(FloorMod(bits, b.I(1 << 23)), b.I(126 << 23))));
  PrimExpr e0 =
      Sub(Cast(b.F32(), FloorDiv(bits, b.I(1 << 23))), Select(tiny, b.F(126 + 23), b.F(126)));
  PrimExpr low = b.Def("low", LT(m, b.F(0.707106781186547524)));
  PrimExpr e = b.Def("ex", Sub(e0, Select(low, b.F(1), b.F(0))));
  PrimExpr f = b.Def("f", Sub(Select(low, Add(m, m), m), b.F(1)));
  PrimExpr z = b.Def("z", Mul(f, f));
  PrimExpr y = b.Def("y", Sub(Mul(Mul(b.Estrin(f, kLogP), f), z), Mul(z, b.F(0.5))));
  return {e, f, y};
}

// The special values of log-like functions: x == 0 -> zero_value, x < 0 ->
// NaN, x == inf -> inf, NaN -> x.
PrimExpr LogSpecials(Builder& b, const PrimExpr& x, const PrimExpr& r, double zero_value) {
  PrimExpr nan = b.F(std::numeric_limits<double>::quiet_NaN());
  PrimExpr out = Select(EQ(x, b.F(kInf)), b.F(kInf), r);
  out = Select(EQ(x, b.F(0)), b.F(zero_value), out);
  out = Select(LT(x, b.F(0)), nan, out);
  return Select(b.IsNaN(x), x, out);
}

PrimExpr LogOf(Builder& b, const PrimExpr& x) {
  LogParts p = LogReduce(b, x);
  PrimExpr r = Add(Add(p.f, Add(p.y, Mul(p.e, b.F(kLn2Lo)))), Mul(p.e, b.F(kLn2Hi)));
  return LogSpecials(b, x, r, -kInf);
}

PrimExpr LowerLog(Builder& b, const PrimExpr& x) { return LogOf(b, x); }

PrimExpr LowerLog2(Builder& b, const PrimExpr& x) {
  LogParts p = LogReduce(b, x);
  PrimExpr r = Add(Mul(Add(p.f, p.y), b.F(kLog2e)), p.e);
  return LogSpecials(b, x, r, -kInf);
}

PrimExpr LowerLog1p(Builder& b, const PrimExpr& x) {
  PrimExpr u = b.Def("u", Add(x, b.F(1)));
  PrimExpr lu = b.Def("lu", LogOf(b, u));
  PrimExpr r = Select(EQ(u, b.F(1)), x, Mul(lu, Div(x, Sub(u, b.F(1)))));
  return Select(EQ(x, b.F(kInf)), x, r);
}

PrimExpr LowerTanh(Builder& b, const PrimExpr& x) {
  PrimExpr xs = Sanitize(b, x);
  PrimExpr ax = b.Def("ax", b.Fabs(xs));
  PrimExpr z = b.Def("z", Mul(xs, xs));
  PrimExpr small = b.Def("small", Add(Mul(Mul(b.Estrin(z, kTanhP), z), xs), xs));
  PrimExpr e = b.Def("e2", ExpCore(b, Mul(Min(ax, b.F(10)), b.F(2)), ExpRange::kSmall));
  PrimExpr big = b.Def("big", Sub(b.F(1), Div(b.F(2), Add(e, b.F(1)))));
  PrimExpr r = Select(LT(ax, b.F(0.625)), small, Select(LT(xs, b.F(0)), Sub(b.F(0), big), big));
  return Select(b.IsNaN(x), x, r);
}

// 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) for x < 0: exp never overflows
// and tiny results keep their subnormal value. -|x| is copysign(x, -1) (one
// OR of the sign bit); NaN lanes are selected away at the end.
PrimExpr LowerSigmoid(Builder& b, const PrimExpr& x) {
  PrimExpr a = b.Def("a", Call(b.F32(), "copysign", {x, b.F(-1)}));
  PrimExpr e = b.Def("e", ExpCore(b, a, ExpRange::kNonPositive));
  PrimExpr r = Div(Select(LT(x, b.F(0)), e, b.F(1)), Add(b.F(1), e));
  return Select(b.IsNaN(x), x, r);
}

PrimExpr LowerErf(Builder& b, const PrimExpr& x) {
  PrimExpr xc = b.Def("xc", Min(Max(Sanitize(b, x), b.F(-4)), b.F(4)));
  PrimExpr x2 = b.Def("x2", Mul(xc, xc));
  // x * (A / B) rather than (x * A) / B: keeps results just above FLT_MIN
  // from passing through the subnormal range.
  PrimExpr r = Mul(xc, Div(b.Estrin(x2, kErfA), b.Estrin(x2, kErfB)));
  return Select(b.IsNaN(x), x, r);
}

using Lowering = PrimExpr (*)(Builder&, const PrimExpr&);

Lowering Find(const std::string& name) {
  if (name == "exp") return LowerExp;
  if (name == "exp2") return LowerExp2;
  if (name == "expm1") return LowerExpm1;
  if (name == "log") return LowerLog;
  if (name == "log2") return LowerLog2;
  if (name == "log1p") return LowerLog1p;
  if (name == "tanh") return LowerTanh;
  if (name == "sigmoid") return LowerSigmoid;
  if (name == "erf") return LowerErf;
  return nullptr;
}

class IntrinsicLowerer : public StmtExprMutator {
 public:
  explicit IntrinsicLowerer(const LowerIntrinsicsOptions& options) : options_(options) {}

 protected:
  PrimExpr VisitExpr_(const PrimExpr& e) override {
    PrimExpr r = MutateChildren(e);
    if (r->kind != ExprKind::kCall) return r;
    return LowerIntrinsicCall(r, options_);
  }

 private:
  LowerIntrinsicsOptions options_;
};

}  // namespace

PrimExpr LowerIntrinsicCall(const PrimExpr& call, const LowerIntrinsicsOptions& options) {
  if (!call || call->kind != ExprKind::kCall || call->effect == CallEffect::kOpaque ||
      call->args.size() != 1) {
    return call;
  }
  Lowering lower = Find(call->name);
  if (lower == nullptr) return call;
  DataType t = call->dtype;
  const PrimExpr& arg = call->args[0];
  if (!t.is_float() || arg->dtype != t) return call;
  bool f32 = t.code() == DTypeCode::kFloat && t.bits() == 32;
  bool narrow = t.bits() == 16;  // float16, bfloat16: computed in float32
  if (!f32 && !narrow) return call;
  Builder b(t.lanes(), options.native_ldexp);
  PrimExpr x = b.Def("x", f32 ? arg : Cast(b.F32(), arg));
  PrimExpr r = b.Finish(lower(b, x));
  return f32 ? r : Cast(t, r);
}

absl::StatusOr<PrimFunc> LowerIntrinsics(const PrimFunc& f,
                                         const LowerIntrinsicsOptions& options) {
  if (!f || !f->body) return PassError("lower_intrinsics", f, "null function or body");
  IntrinsicLowerer l(options);
  Stmt body = l.VisitStmt(f->body);
  if (body == f->body) return f;
  return WithBody(f, body);
}

}  // namespace kiln::tir::transform
