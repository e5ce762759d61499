// File: lowering/compute/tensor/elemwise.cc
//
// Elementwise unary operators (tag "elemwise"), as interpreter/kernels_elemwise.cc:
//   float-only math  exp log sqrt rsqrt sigmoid tanh erf sin cos tan asin acos
//                    atan sinh cosh asinh acosh atanh (the intrinsics of the same
//                    names), nn.leaky_relu,
//                    nn.gelu: float16/bfloat16 in float32; integer and bool
//                    inputs through float64, stored back with a saturating cast
//   mixed            abs negative nn.relu floor ceil round sign copy: float math
//                    for floats, integer rules (wrapping) for integers
//   others           zeros_like ones_like isnan logical_not clip cast
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/compute/tensor/families.h"
#include "lowering/compute/tensor/tensor_util.h"

namespace kiln::lowering::tensor {
namespace {

using Body = std::function<absl::StatusOr<PrimExpr>(const ComputeCtx&, const PrimExpr& x)>;

FTCompute Unary(Body f) {
  return [f](const ComputeCtx& ctx) -> absl::StatusOr<std::vector<te::Tensor>> {
    KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
    const te::Tensor& x = ctx.inputs[0];
    // Validate once on a representative element (the body is built per call
    // of the lambda below, which cannot return a status).
    KILN_RETURN_IF_ERROR(f(ctx, x(std::vector<PrimExpr>(x.shape().size(), Idx(0)))).status());
    te::Tensor out = te::Compute(
        ctx.out_shapes[0],
        [&](const std::vector<Var>& i) { return *f(ctx, x(i)); }, ComputeName(ctx), "elemwise");
    return std::vector<te::Tensor>{out};
  };
}

// Float-only math (the interpreter's FloatUnary).
FTCompute FloatUnary(std::function<PrimExpr(const PrimExpr&)> f) {
  return Unary([f](const ComputeCtx& ctx, const PrimExpr& x) -> absl::StatusOr<PrimExpr> {
    return FloatMath({x}, ctx.out_dtypes[0], [&](const std::vector<PrimExpr>& a) { return f(a[0]); });
  });
}

FTCompute Intrinsic(const char* name) {
  return FloatUnary([name](const PrimExpr& v) { return Intrin(name, {v}); });
}

// Separate float and integer rules (the interpreter's MixedUnary). ff gets the
// value in its compute type; fi the integer value in its own dtype (never bool:
// bool inputs are passed to fb).
FTCompute MixedUnary(std::function<PrimExpr(const PrimExpr&)> ff,
                     std::function<PrimExpr(const PrimExpr&)> fi,
                     std::function<PrimExpr(const PrimExpr&)> fb = nullptr) {
  return Unary([ff, fi, fb](const ComputeCtx& ctx, const PrimExpr& x) -> absl::StatusOr<PrimExpr> {
    const DataType dt = x->dtype;
    if (dt.is_float()) return Convert(ff(Promote(x)), ctx.out_dtypes[0]);
    if (dt.is_bool()) return Convert(fb ? fb(x) : x, ctx.out_dtypes[0]);
    return Convert(fi(x), ctx.out_dtypes[0]);
  });
}

PrimExpr Zero(const PrimExpr& x) { return tir::MakeConst(x->dtype, 0); }
PrimExpr One(const PrimExpr& x) { return tir::MakeConst(x->dtype, 1); }
PrimExpr IsNan(const PrimExpr& x) { return tir::Call(DataType::Bool(), "isnan", {x}); }
PrimExpr Identity(const PrimExpr& x) { return x; }

PrimExpr IntAbs(const PrimExpr& x) {
  if (x->dtype.is_uint()) return x;
  return tir::Select(tir::LT(x, Zero(x)), tir::Sub(Zero(x), x), x);
}

PrimExpr IntSign(const PrimExpr& x) {
  if (x->dtype.is_uint()) return tir::Select(tir::NE(x, Zero(x)), One(x), Zero(x));
  return tir::Select(tir::GT(x, Zero(x)), One(x),
                     tir::Select(tir::LT(x, Zero(x)), tir::MakeConst(x->dtype, -1), Zero(x)));
}

PrimExpr FloatSign(const PrimExpr& x) {
  return tir::Select(tir::GT(x, Zero(x)), One(x),
                     tir::Select(tir::LT(x, Zero(x)), tir::MakeConst(x->dtype, -1),
                                 tir::Select(IsNan(x), x, Zero(x))));
}

PrimExpr IntRelu(const PrimExpr& x) {
  if (x->dtype.is_uint()) return x;
  return tir::Max(x, Zero(x));
}

FTCompute Fill(double v) {
  return Unary([v](const ComputeCtx& ctx, const PrimExpr&) -> absl::StatusOr<PrimExpr> {
    return tir::MakeConst(ctx.out_dtypes[0], v);
  });
}

absl::StatusOr<PrimExpr> IsNanBody(const ComputeCtx&, const PrimExpr& x) {
  if (!x->dtype.is_float()) return tir::BoolImm(false);
  return IsNan(Promote(x));
}

absl::StatusOr<PrimExpr> LogicalNot(const ComputeCtx& ctx, const PrimExpr& x) {
  if (!x->dtype.is_bool())
    return ctx.Error(absl::StrCat("expects a bool tensor; got ", x->dtype.ToString()));
  return tir::Not(x);
}

absl::StatusOr<PrimExpr> Clip(const ComputeCtx& ctx, const PrimExpr& x) {
  const ClipAttrs& a = ctx.Attrs<ClipAttrs>();
  if (!(a.a_min <= a.a_max))
    return ctx.Error(absl::StrCat("a_min (", a.a_min, ") must not exceed a_max (", a.a_max, ")"));
  const DataType dt = x->dtype;
  if (dt.is_float()) {
    // tir Min/Max propagate NaN, as the interpreter keeps a NaN element.
    const PrimExpr v = Promote(x);
    return Convert(tir::Min(tir::Max(v, FConst(v->dtype, a.a_min)), FConst(v->dtype, a.a_max)),
                   ctx.out_dtypes[0]);
  }
  // Integers: below a_min -> ceil(a_min), above a_max -> floor(a_max), both
  // converted with the saturating float -> int rule; otherwise unchanged. For
  // an integer v, v < a_min <=> v < ceil(a_min) and v > a_max <=> v > floor(a_max).
  const DataType it = dt.is_bool() ? DataType::Int(32) : dt;
  const PrimExpr v = tir::Cast(it, x);
  const double lo_d = std::ceil(a.a_min), hi_d = std::floor(a.a_max);
  const PrimExpr lo = tir::IntImm(FloatToIntSat(lo_d, it), it);
  const PrimExpr hi = tir::IntImm(FloatToIntSat(hi_d, it), it);
  // Saturated bounds stay right: a bound below the dtype's range never
  // applies, one above it gives the dtype's extreme, as FloatToInt does.
  return Convert(tir::Select(tir::LT(v, lo), lo, tir::Select(tir::GT(v, hi), hi, v)),
                 ctx.out_dtypes[0]);
}

absl::StatusOr<PrimExpr> CastBody(const ComputeCtx& ctx, const PrimExpr& x) {
  const DataType to = ctx.Attrs<CastAttrs>().dtype;
  if (to.is_void() || to.lanes() != 1)
    return ctx.Error(absl::StrCat("dtype: cannot cast to ", to.ToString()));
  return Convert(x, to);
}

absl::StatusOr<PrimExpr> LeakyRelu(const ComputeCtx& ctx, const PrimExpr& x) {
  const double alpha = ctx.Attrs<LeakyReluAttrs>().alpha;
  return FloatMath({x}, ctx.out_dtypes[0], [alpha](const std::vector<PrimExpr>& a) {
    const PrimExpr& v = a[0];
    return tir::Select(tir::GT(v, Zero(v)), v, tir::Mul(v, FConst(v->dtype, alpha)));
  });
}

absl::StatusOr<PrimExpr> Gelu(const ComputeCtx& ctx, const PrimExpr& x) {
  const std::string& mode = ctx.Attrs<GeluAttrs>().approximate;
  if (mode != "none" && mode != "tanh")
    return ctx.Error(absl::StrCat("approximate must be \"none\" or \"tanh\"; got \"", mode, "\""));
  const bool tanh_form = mode == "tanh";
  return FloatMath({x}, ctx.out_dtypes[0], [tanh_form](const std::vector<PrimExpr>& a) {
    const PrimExpr& v = a[0];
    const DataType t = v->dtype;
    PrimExpr inner;
    if (tanh_form) {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      const PrimExpr cube = tir::Mul(tir::Mul(v, v), v);
      const PrimExpr arg = tir::Mul(FConst(t, std::sqrt(2.0 / M_PI)),
                                    tir::Add(v, tir::Mul(FConst(t, 0.044715), cube)));
      inner = Intrin("tanh", {arg});
    } else {
      // 0.5 x (1 + erf(x / sqrt(2)))
      inner = Intrin("erf", {tir::Div(v, FConst(t, std::sqrt(2.0)))});
    }
    return tir::Mul(tir::Mul(FConst(t, 0.5), v), tir::Add(FConst(t, 1.0), inner));
  });
}

}  // namespace

void RegisterElemwiseComputes() {
  for (const char* name : {"exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "sin", "cos",
                           "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
                           "atanh"})
    Attach(name, Intrinsic(name));

  Attach("abs", MixedUnary([](const PrimExpr& x) { return Intrin("fabs", {x}); }, IntAbs));
  // -x for floats (x * -1 keeps -0.0 and NaN exact); integers wrap; a bool
  // stays itself (0 -> 0, 1 -> -1 which is stored as true).
  Attach("negative",
         MixedUnary([](const PrimExpr& x) { return tir::Mul(x, tir::MakeConst(x->dtype, -1)); },
                    [](const PrimExpr& x) { return tir::Sub(Zero(x), x); }));
  // Max(x, 0) propagates NaN as the interpreter's relu does.
  Attach("nn.relu", MixedUnary([](const PrimExpr& x) { return tir::Max(x, Zero(x)); }, IntRelu));
  Attach("floor", MixedUnary([](const PrimExpr& x) { return Intrin("floor", {x}); }, Identity));
  Attach("ceil", MixedUnary([](const PrimExpr& x) { return Intrin("ceil", {x}); }, Identity));
  Attach("round", MixedUnary([](const PrimExpr& x) { return Intrin("round", {x}); }, Identity));
  Attach("sign", MixedUnary(FloatSign, IntSign));
  Attach("copy", MixedUnary(Identity, Identity));
  Attach("zeros_like", Fill(0));
  Attach("ones_like", Fill(1));
  Attach("isnan", Unary(IsNanBody));
  Attach("logical_not", Unary(LogicalNot));
  Attach("clip", Unary(Clip));
  Attach("cast", Unary(CastBody));
  Attach("nn.leaky_relu", Unary(LeakyRelu));
  Attach("nn.gelu", Unary(Gelu));
}

}  // namespace kiln::lowering::tensor
