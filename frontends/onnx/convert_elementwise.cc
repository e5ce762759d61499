// File: frontends/onnx/convert_elementwise.cc
//
// ONNX elementwise operators -> graph IR (converter.h): unary math and
// activations, broadcasting arithmetic, comparisons and logic, Where, Cast,
// CastLike, Clip, the variadic Max/Min/Sum/Mean, IsNaN/IsInf, BitShift.
//
// An operator maps onto one core operator where one has its semantics
// (Exp -> exp, Mod(fmod=1) -> mod, LeakyRelu -> nn.leaky_relu), and otherwise
// onto a composition of core operators that is exact in real arithmetic and
// does not overflow where the direct formula would:
//
//   Softplus(x)        = relu(x) + log(1 + exp(-|x|))
//   HardSigmoid(x)     = clip(alpha * x + beta, 0, 1)
//   PRelu(x, slope)    = where(x < 0, x * slope, x)       (slope broadcast to x)
//   BitShift RIGHT     = where(y >= bits, 0, x / 2^min(y, bits - 1))
//   IsInf              = |x| == inf (or x == +inf, x == -inf)
//
// Opset differences handled here:
//   - before opset 7, binary operators broadcast only with `broadcast=1`, the
//     right operand aligned at `axis` (or suffix-matched): the operand is given
//     trailing unit dims, which NumPy broadcasting then treats the same way;
//   - Clip: min/max attributes (opset 1: absent = unbounded; 6: +-FLT_MAX) and
//     optional inputs from opset 11 (any numeric dtype from 12);
//   - Pow from opset 12: the exponent may have another dtype (the result has
//     the base's);
//   - Cast opset 1 names `to` as a string ("FLOAT"); later opsets as an enum;
//   - Selu's defaults changed at opset 6; PRelu before opset 7 takes a slope
//     per channel (axis 1).
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "frontends/onnx/converter.h"
#include "frontends/onnx/emitter.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend {
namespace {

using Outputs = absl::StatusOr<std::vector<Expr>>;

// ---- Unary ------------------------------------------------------------------

Converter Unary(std::string op) {
  return [op](ConvertContext& c) -> Outputs {
    Emitter e(c);
    return e.Done(e.Op(op, {e.In(0)}));
  };
}

Outputs ConvertReciprocal(ConvertContext& c) {
  Emitter e(c);
  Expr x = e.In(0);
  return e.Done(e.Op("divide", {e.Scalar(x, 1), x}));
}

Outputs ConvertLeakyRelu(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(double alpha, c.AttrFloat("alpha", 0.01));
  Emitter e(c);
  return e.Done(e.Op("nn.leaky_relu", {e.In(0)},
                     MakeAttrs<LeakyReluAttrs>([&](LeakyReluAttrs& a) { a.alpha = alpha; })));
}

// x < 0 ? alpha * (exp(x) - 1) : x
Outputs ConvertElu(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(double alpha, c.AttrFloat("alpha", 1.0));
  Emitter e(c);
  Expr x = e.In(0);
  Expr neg =
      e.Op("multiply", {e.Scalar(x, alpha), e.Op("subtract", {e.Op("exp", {x}), e.Scalar(x, 1)})});
  return e.Done(e.Op("where", {e.Op("less", {x, e.Scalar(x, 0)}), neg, x}));
}

// x > 0 ? gamma * x : gamma * (alpha * exp(x) - alpha). The defaults are
// float32 values; opset 1 wrote them with five digits.
Converter Selu(double default_alpha, double default_gamma) {
  return [=](ConvertContext& c) -> Outputs {
    KILN_ASSIGN_OR_RETURN(double alpha, c.AttrFloat("alpha", default_alpha));
    KILN_ASSIGN_OR_RETURN(double gamma, c.AttrFloat("gamma", default_gamma));
    Emitter e(c);
    Expr x = e.In(0);
    Expr g = e.Scalar(x, gamma);
    Expr neg = e.Op("subtract",
                    {e.Op("multiply", {e.Scalar(x, alpha), e.Op("exp", {x})}), e.Scalar(x, alpha)});
    return e.Done(
        e.Op("multiply", {g, e.Op("where", {e.Op("greater", {x, e.Scalar(x, 0)}), x, neg})}));
  };
}

// max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
Outputs ConvertCelu(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(double alpha, c.AttrFloat("alpha", 1.0));
  if (alpha == 0) return c.Invalid("alpha must not be 0 (Celu divides by it)");
  Emitter e(c);
  Expr x = e.In(0);
  Expr zero = e.Scalar(x, 0);
  Expr ex = e.Op("exp", {e.Op("divide", {x, e.Scalar(x, alpha)})});
  Expr neg = e.Op("multiply", {e.Scalar(x, alpha), e.Op("subtract", {ex, e.Scalar(x, 1)})});
  return e.Done(e.Op("add", {e.Op("maximum", {x, zero}), e.Op("minimum", {neg, zero})}));
}

Attrs ClipAttrsOf(double lo, double hi) {
  return MakeAttrs<ClipAttrs>([&](ClipAttrs& a) {
    a.a_min = lo;
    a.a_max = hi;
  });
}

// clip(alpha * x + beta, 0, 1)
Expr HardSigmoid(Emitter& e, const Expr& x, double alpha, double beta) {
  Expr lin = e.Op("add", {e.Op("multiply", {x, e.Scalar(x, alpha)}), e.Scalar(x, beta)});
  return e.Op("clip", {lin}, ClipAttrsOf(0, 1));
}

Outputs ConvertHardSigmoid(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(double alpha, c.AttrFloat("alpha", 0.2));
  KILN_ASSIGN_OR_RETURN(double beta, c.AttrFloat("beta", 0.5));
  Emitter e(c);
  return e.Done(HardSigmoid(e, e.In(0), alpha, beta));
}

// x * hardsigmoid(x) with alpha = 1/6, beta = 1/2.
Outputs ConvertHardSwish(ConvertContext& c) {
  Emitter e(c);
  Expr x = e.In(0);
  return e.Done(e.Op("multiply", {x, HardSigmoid(e, x, 1.0 / 6.0, 0.5)}));
}

// log(1 + exp(x)) = relu(x) + log(1 + exp(-|x|)): no overflow for large x.
Expr Softplus(Emitter& e, const Expr& x) {
  Expr t = e.Op("exp", {e.Op("negative", {e.Op("abs", {x})})});
  return e.Op("add", {e.Op("nn.relu", {x}), e.Op("log", {e.Op("add", {e.Scalar(x, 1), t})})});
}

Outputs ConvertSoftplus(ConvertContext& c) {
  Emitter e(c);
  return e.Done(Softplus(e, e.In(0)));
}

// x * tanh(softplus(x))
Outputs ConvertMish(ConvertContext& c) {
  Emitter e(c);
  Expr x = e.In(0);
  return e.Done(e.Op("multiply", {x, e.Op("tanh", {Softplus(e, x)})}));
}

// x / (1 + |x|)
Outputs ConvertSoftsign(ConvertContext& c) {
  Emitter e(c);
  Expr x = e.In(0);
  return e.Done(e.Op("divide", {x, e.Op("add", {e.Scalar(x, 1), e.Op("abs", {x})})}));
}

// x > alpha ? x : 0
Outputs ConvertThresholdedRelu(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(double alpha, c.AttrFloat("alpha", 1.0));
  Emitter e(c);
  Expr x = e.In(0);
  return e.Done(e.Op("where", {e.Op("greater", {x, e.Scalar(x, alpha)}), x, e.Scalar(x, 0)}));
}

// x < -lambd ? x + bias : x > lambd ? x - bias : 0. For integer inputs the
// thresholds become the integers that give the same comparisons.
Outputs ConvertShrink(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(double bias, c.AttrFloat("bias", 0.0));
  KILN_ASSIGN_OR_RETURN(double lambd, c.AttrFloat("lambd", 0.5));
  Emitter e(c);
  Expr x = e.In(0);
  const bool integral = e.DType(x).is_integral();
  const double lo = integral ? std::ceil(-lambd) : -lambd;
  const double hi = integral ? std::floor(lambd) : lambd;
  Expr zero = e.Scalar(x, 0);
  Expr upper = e.Op("where", {e.Op("greater", {x, e.Scalar(x, hi)}),
                              e.Op("subtract", {x, e.Scalar(x, bias)}), zero});
  return e.Done(e.Op(
      "where", {e.Op("less", {x, e.Scalar(x, lo)}), e.Op("add", {x, e.Scalar(x, bias)}), upper}));
}

// where(x < 0, x * slope, x); before opset 7 a 1-D slope is per channel.
Outputs ConvertPRelu(ConvertContext& c) {
  Emitter e(c);
  Expr x = e.In(0);
  Expr slope = e.In(1);
  if (!e.ok()) return e.Done(nullptr);
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(TensorType st, c.InputType(1));
  if (c.opset() < 7 && st->ndim() == 1 && xt->ndim() >= 2 && st->shape[0].is_static() &&
      st->shape[0].value() != 1) {
    return e.Done(
        e.Op("nn.prelu", {x, slope}, MakeAttrs<PReluAttrs>([](PReluAttrs& a) { a.axis = 1; })));
  }
  return e.Done(
      e.Op("where", {e.Op("less", {x, e.Scalar(x, 0)}), e.Op("multiply", {x, slope}), x}));
}

// ---- Clip -------------------------------------------------------------------

// One bound of Clip: nothing, a number known at import time, or a tensor.
struct Bound {
  std::optional<double> value;
  Expr tensor;
};

absl::StatusOr<Bound> BoundInput(ConvertContext& c, int i) {
  Bound b;
  if (!c.HasInput(i)) return b;
  absl::StatusOr<Ref<const HostTensor>> v = c.ConstantInput(i);
  if (v.ok() && (*v)->num_elements() == 1 && (*v)->dtype().is_float()) {
    b.value = (*v)->GetAsDouble(0);
    return b;
  }
  KILN_ASSIGN_OR_RETURN(b.tensor, c.Input(i));
  return b;
}

Expr ApplyBound(Emitter& e, const Expr& x, const Bound& b, const char* op) {
  if (b.tensor != nullptr) return e.Op(op, {x, b.tensor});
  if (b.value) return e.Op(op, {x, e.Scalar(x, *b.value)});
  return x;
}

// clip(x, a_min, a_max) when both bounds are numbers with lo <= hi; otherwise
// minimum(maximum(x, lo), hi), which gives hi everywhere when lo > hi (ONNX's
// rule) and takes tensor bounds as they are.
Outputs ClipWith(ConvertContext& c, const Bound& lo, const Bound& hi) {
  Emitter e(c);
  Expr x = e.In(0);
  if (lo.value && hi.value && *lo.value <= *hi.value && e.DType(x).is_float()) {
    return e.Done(e.Op("clip", {x}, ClipAttrsOf(*lo.value, *hi.value)));
  }
  return e.Done(ApplyBound(e, ApplyBound(e, x, lo, "maximum"), hi, "minimum"));
}

// Opsets 1 and 6: attributes (absent: unbounded at 1, +-FLT_MAX at 6).
Converter ClipAttrsConverter(bool float_max_defaults) {
  return [float_max_defaults](ConvertContext& c) -> Outputs {
    const double big = std::numeric_limits<float>::max();
    Bound lo, hi;
    if (c.HasAttr("min") || float_max_defaults) {
      KILN_ASSIGN_OR_RETURN(double v, c.AttrFloat("min", -big));
      lo.value = v;
    }
    if (c.HasAttr("max") || float_max_defaults) {
      KILN_ASSIGN_OR_RETURN(double v, c.AttrFloat("max", big));
      hi.value = v;
    }
    return ClipWith(c, lo, hi);
  };
}

Outputs ConvertClip11(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Bound lo, BoundInput(c, 1));
  KILN_ASSIGN_OR_RETURN(Bound hi, BoundInput(c, 2));
  return ClipWith(c, lo, hi);
}

// ---- Binary -----------------------------------------------------------------

// Before opset 7 (`broadcast`, `axis` attributes): B aligned at `axis` of A
// gets trailing unit dims so that NumPy broadcasting lines it up the same way.
absl::StatusOr<Expr> LegacyRhs(ConvertContext& c, Emitter& e, const Expr& a, Expr b) {
  if (c.opset() >= 7 || !e.ok()) return b;
  KILN_ASSIGN_OR_RETURN(int64_t broadcast, c.AttrInt("broadcast", 0));
  if (broadcast == 0 || !c.HasAttr("axis")) return b;
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", 0));
  const int rank_a = e.Rank(a), rank_b = e.Rank(b);
  if (axis < 0) axis += rank_a;
  if (axis < 0 || axis + rank_b > rank_a)
    return c.Invalid(absl::StrCat("broadcast axis ", axis, " does not fit B (rank ", rank_b,
                                  ") into A (rank ", rank_a, ")"));
  const int64_t trailing = rank_a - axis - rank_b;
  if (trailing == 0 || rank_b == 0) return b;
  return e.Op("expand_dims", {b}, MakeAttrs<ExpandDimsAttrs>([&](ExpandDimsAttrs& x) {
                x.axis = rank_b;
                x.num_newaxis = trailing;
              }));
}

Converter Binary(std::string op) {
  return [op](ConvertContext& c) -> Outputs {
    Emitter e(c);
    Expr a = e.In(0);
    Expr b = e.In(1);
    KILN_ASSIGN_OR_RETURN(b, LegacyRhs(c, e, a, b));
    return e.Done(e.Op(op, {a, b}));
  };
}

// Pow: from opset 12 the exponent may have another dtype; the result has the
// base's. Float base: the exponent is cast to it. Integer base with a float
// exponent: computed in float64 and truncated back (NumPy's
// power(...).astype(base)). Two integer dtypes: the exponent is cast to the
// base's (wrapping products commute with the narrowing).
Outputs ConvertPow(ConvertContext& c) {
  Emitter e(c);
  Expr a = e.In(0);
  Expr b = e.In(1);
  KILN_ASSIGN_OR_RETURN(b, LegacyRhs(c, e, a, b));
  const DataType ta = e.DType(a), tb = e.DType(b);
  if (!e.ok()) return e.Done(nullptr);
  if (ta == tb) return e.Done(e.Op("power", {a, b}));
  if (ta.is_float() || !tb.is_float()) return e.Done(e.Op("power", {a, e.Cast(b, ta)}));
  const DataType f64 = DataType::Float(64);
  return e.Done(e.Cast(e.Op("power", {e.Cast(a, f64), e.Cast(b, f64)}), ta));
}

// fmod=0: the remainder has the divisor's sign (floor_mod, NumPy's mod);
// fmod=1: the dividend's (C fmod / integer %).
Outputs ConvertMod(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(int64_t fmod, c.AttrInt("fmod", 0));
  if (fmod != 0 && fmod != 1) return c.Invalid(absl::StrCat("fmod must be 0 or 1; got ", fmod));
  Emitter e(c);
  return e.Done(e.Op(fmod == 1 ? "mod" : "floor_mod", {e.In(0), e.In(1)}));
}

// Max, Min, Sum, Mean: a left fold of the binary operator over all inputs.
Converter Variadic(std::string op, bool mean) {
  return [op, mean](ConvertContext& c) -> Outputs {
    if (c.num_inputs() < 1) return c.Invalid("expects at least one input");
    Emitter e(c);
    Expr acc = e.In(0);
    for (int i = 1; i < c.num_inputs(); ++i) acc = e.Op(op, {acc, e.In(i)});
    if (mean && c.num_inputs() > 1) acc = e.Op("divide", {acc, e.Scalar(acc, c.num_inputs())});
    return e.Done(acc);
  };
}

Outputs ConvertWhere(ConvertContext& c) {
  Emitter e(c);
  return e.Done(e.Op("where", {e.In(0), e.In(1), e.In(2)}));
}

// ---- Cast and predicates ----------------------------------------------------

absl::StatusOr<DataType> CastTarget(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(const onnx::AttributeProto* to, c.RequiredAttr("to"));
  int32_t code = 0;
  if (c.opset() < 6) {
    // Opset 1: the type's name, e.g. "FLOAT".
    const std::string name = absl::AsciiStrToUpper(to->s());
    onnx::TensorProto::DataType dt = onnx::TensorProto::UNDEFINED;
    if (!onnx::TensorProto::DataType_Parse(name, &dt))
      return c.Invalid(absl::StrCat("attribute 'to' names no ONNX data type: \"", to->s(), "\""));
    code = dt;
  } else {
    code = static_cast<int32_t>(to->i());
  }
  absl::StatusOr<DataType> dt = FromOnnxDataType(code);
  if (!dt.ok()) return c.Unsupported(absl::StrCat("Cast to ", dt.status().message()));
  return *dt;
}

Outputs ConvertCast(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(DataType to, CastTarget(c));
  Emitter e(c);
  return e.Done(e.Op("cast", {e.In(0)}, MakeAttrs<CastAttrs>([&](CastAttrs& a) { a.dtype = to; })));
}

Outputs ConvertCastLike(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(TensorType target, c.InputType(1));
  Emitter e(c);
  return e.Done(e.Op("cast", {e.In(0)},
                     MakeAttrs<CastAttrs>([&](CastAttrs& a) { a.dtype = target->dtype; })));
}

// |x| == inf, x == +inf or x == -inf by the detect_* flags.
Outputs ConvertIsInf(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(int64_t pos, c.AttrInt("detect_positive", 1));
  KILN_ASSIGN_OR_RETURN(int64_t neg, c.AttrInt("detect_negative", 1));
  const double inf = std::numeric_limits<double>::infinity();
  Emitter e(c);
  Expr x = e.In(0);
  if (!e.DType(x).is_float() && e.ok()) {
    // Integers are never infinite.
    return e.Done(e.Op("not_equal", {x, x}));
  }
  if (pos != 0 && neg != 0) return e.Done(e.Op("equal", {e.Op("abs", {x}), e.Scalar(x, inf)}));
  if (pos != 0) return e.Done(e.Op("equal", {x, e.Scalar(x, inf)}));
  if (neg != 0) return e.Done(e.Op("equal", {x, e.Scalar(x, -inf)}));
  // Neither sign: false everywhere (x == +inf and x == -inf).
  return e.Done(e.Op("logical_and", {e.Op("equal", {x, e.Scalar(x, inf)}),
                                     e.Op("equal", {x, e.Scalar(x, -inf)})}));
}

// Unsigned integers: LEFT is x * 2^y (wrapping, so a shift by >= bits gives
// 0); RIGHT is x / 2^min(y, bits - 1), and 0 where y >= bits.
Outputs ConvertBitShift(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(std::string direction, c.AttrString("direction", ""));
  if (direction != "LEFT" && direction != "RIGHT")
    return c.Invalid(
        absl::StrCat("direction must be \"LEFT\" or \"RIGHT\"; got \"", direction, "\""));
  Emitter e(c);
  Expr x = e.In(0);
  Expr y = e.In(1);
  const DataType t = e.DType(x);
  if (!e.ok()) return e.Done(nullptr);
  if (!t.is_uint())
    return c.Unsupported(
        absl::StrCat("BitShift of ", t.ToString(), " (ONNX allows unsigned types)"));
  if (direction == "LEFT") return e.Done(e.Op("multiply", {x, e.Op("power", {e.Scalar(t, 2), y})}));
  const int bits = t.bits();
  Expr shift = e.Op("minimum", {y, e.Scalar(t, bits - 1)});
  Expr q = e.Op("divide", {x, e.Op("power", {e.Scalar(t, 2), shift})});
  return e.Done(e.Op("where", {e.Op("greater_equal", {y, e.Scalar(t, bits)}), e.Scalar(t, 0), q}));
}

}  // namespace

void RegisterElementwiseConverters(ConverterRegistry& r) {
  // Unary operators with a core operator of the same meaning. Their later
  // opsets only widened the accepted dtypes.
  const std::pair<const char*, std::pair<int, const char*>> unary[] = {
      {"Abs", {1, "abs"}},         {"Neg", {1, "negative"}},    {"Exp", {1, "exp"}},
      {"Log", {1, "log"}},         {"Sqrt", {1, "sqrt"}},       {"Floor", {1, "floor"}},
      {"Ceil", {1, "ceil"}},       {"Round", {11, "round"}},    {"Sign", {9, "sign"}},
      {"Sin", {7, "sin"}},         {"Cos", {7, "cos"}},         {"Tan", {7, "tan"}},
      {"Asin", {7, "asin"}},       {"Acos", {7, "acos"}},       {"Atan", {7, "atan"}},
      {"Sinh", {9, "sinh"}},       {"Cosh", {9, "cosh"}},       {"Asinh", {9, "asinh"}},
      {"Acosh", {9, "acosh"}},     {"Atanh", {9, "atanh"}},     {"Erf", {9, "erf"}},
      {"Sigmoid", {1, "sigmoid"}}, {"Tanh", {1, "tanh"}},       {"Relu", {1, "nn.relu"}},
      {"IsNaN", {9, "isnan"}},     {"Not", {1, "logical_not"}},
  };
  for (const auto& [onnx_name, v] : unary) r.Add(onnx_name, v.first, Unary(v.second));

  r.Add("Reciprocal", 1, ConvertReciprocal);
  r.Add("LeakyRelu", 1, ConvertLeakyRelu);
  r.Add("Elu", 1, ConvertElu);
  r.Add("Selu", 1, Selu(1.6732, 1.0507));
  r.Add("Selu", 6, Selu(1.67326319217681884765625, 1.05070102214813232421875));
  r.Add("Celu", 12, ConvertCelu);
  r.Add("HardSigmoid", 1, ConvertHardSigmoid);
  r.Add("HardSwish", 14, ConvertHardSwish);
  r.Add("Softplus", 1, ConvertSoftplus);
  r.Add("Softsign", 1, ConvertSoftsign);
  r.Add("ThresholdedRelu", 10, ConvertThresholdedRelu);
  r.Add("Shrink", 9, ConvertShrink);
  r.Add("Mish", 18, ConvertMish);
  r.Add("PRelu", 1, ConvertPRelu);
  r.Add("Clip", 1, ClipAttrsConverter(false));
  r.Add("Clip", 6, ClipAttrsConverter(true));
  r.Add("Clip", 11, ConvertClip11);

  const std::pair<const char*, const char*> binary[] = {
      {"Add", "add"},       {"Sub", "subtract"},    {"Mul", "multiply"},    {"Div", "divide"},
      {"Equal", "equal"},   {"Less", "less"},       {"Greater", "greater"}, {"And", "logical_and"},
      {"Or", "logical_or"}, {"Xor", "logical_xor"},
  };
  for (const auto& [onnx_name, op] : binary) r.Add(onnx_name, 1, Binary(op));
  r.Add("LessOrEqual", 12, Binary("less_equal"));
  r.Add("GreaterOrEqual", 12, Binary("greater_equal"));
  r.Add("Pow", 1, ConvertPow);
  r.Add("Mod", 10, ConvertMod);
  r.Add("BitShift", 11, ConvertBitShift);

  r.Add("Max", 1, Variadic("maximum", false));
  r.Add("Min", 1, Variadic("minimum", false));
  r.Add("Sum", 1, Variadic("add", false));
  r.Add("Mean", 1, Variadic("add", true));

  r.Add("Where", 9, ConvertWhere);
  r.Add("Cast", 1, ConvertCast);
  r.Add("CastLike", 15, ConvertCastLike);
  r.Add("IsInf", 10, ConvertIsInf);
}

}  // namespace kiln::onnx_frontend
