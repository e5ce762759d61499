// File: lowering/compute/tensor/broadcast.cc
//
// Broadcasting operators (tag "broadcast"), as interpreter/kernels_elemwise.cc
// and kernels_transform.cc (where, broadcast_to):
//   add subtract multiply divide power maximum minimum mod floor_divide
//   floor_mod; equal not_equal less less_equal greater greater_equal (-> bool);
//   logical_and logical_or logical_xor (bool); where; nn.bias_add; nn.prelu;
//   broadcast_to.
// Floats: float16/bfloat16 in float32; IEEE division; mod is fmod;
// floor_divide = floor(a / b), floor_mod = a - floor(a / b) * b; maximum and
// minimum propagate NaN. Integers wrap; divide/mod truncate, floor_divide /
// floor_mod floor. Division by zero, which the interpreter reports as an
// error, gives 0 (the divisor is made safe first, so compiled code never
// traps; INT_MIN / -1 wraps to INT_MIN as in the interpreter). Integer power
// is exact with wraparound (square-and-multiply); a negative exponent gives
// 1 for a base of 1, +-1 for -1, 0 otherwise (0 for a base of 0, where the
// interpreter reports an error). Bool operands of arithmetic ops are computed
// as int32 and stored as "nonzero" (add = or, multiply = and, ...).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/compute/tensor/families.h"
#include "lowering/compute/tensor/tensor_util.h"

namespace kiln::lowering::tensor {
namespace {

enum class Bin {
  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kMod, kFloorDiv, kFloorMod,
  kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr, kXor,
};

bool IsLogical(Bin b) { return b >= Bin::kAnd; }

PrimExpr C(DataType t, double v) { return tir::MakeConst(t, v); }

PrimExpr Compare(Bin op, const PrimExpr& a, const PrimExpr& b) {
  switch (op) {
    case Bin::kEq: return tir::EQ(a, b);
    case Bin::kNe: return tir::NE(a, b);
    case Bin::kLt: return tir::LT(a, b);
    case Bin::kLe: return tir::LE(a, b);
    case Bin::kGt: return tir::GT(a, b);
    default: return tir::GE(a, b);
  }
}

PrimExpr FloatBin(Bin op, const PrimExpr& a, const PrimExpr& b) {
  switch (op) {
    case Bin::kAdd: return tir::Add(a, b);
    case Bin::kSub: return tir::Sub(a, b);
    case Bin::kMul: return tir::Mul(a, b);
    case Bin::kDiv: return tir::Div(a, b);
    case Bin::kPow: return Intrin("pow", {a, b});
    case Bin::kMax: return tir::Max(a, b);
    case Bin::kMin: return tir::Min(a, b);
    case Bin::kMod: return tir::Mod(a, b);  // fmod
    case Bin::kFloorDiv: return Intrin("floor", {tir::Div(a, b)});
    case Bin::kFloorMod: return tir::Sub(a, tir::Mul(Intrin("floor", {tir::Div(a, b)}), b));
    default: return Compare(op, a, b);
  }
}

// a ** b in a's integer dtype with wraparound: square-and-multiply over every
// bit of the exponent, as a chain of Lets (linear in the bit count).
PrimExpr IntPow(const PrimExpr& a, const PrimExpr& b) {
  const DataType t = a->dtype;
  const bool is_signed = t.is_int();
  const PrimExpr zero = C(t, 0), one = C(t, 1), two = C(t, 2);
  struct Binding {
    Var var;
    PrimExpr value;
  };
  std::vector<Binding> lets;
  // For a negative exponent the loop result is unused; run it on 0.
  PrimExpr e = is_signed ? PrimExpr(tir::Select(tir::LT(b, zero), zero, b)) : b;
  PrimExpr base = a, result = one;
  // Exponents below 2^(bits-1) (signed, non-negative) or 2^bits (unsigned).
  const int steps = is_signed ? t.bits() - 1 : t.bits();
  for (int s = 0; s < steps; ++s) {
    Var r = tir::MakeVar(absl::StrCat("pow_r", s), t);
    lets.push_back({r, tir::Select(tir::EQ(tir::Mod(e, two), one), tir::Mul(result, base), result)});
    result = r;
    if (s + 1 == steps) break;
    Var nb = tir::MakeVar(absl::StrCat("pow_b", s), t);
    lets.push_back({nb, tir::Mul(base, base)});
    base = nb;
    Var ne = tir::MakeVar(absl::StrCat("pow_e", s), t);
    lets.push_back({ne, tir::Div(e, two)});
    e = ne;
  }
  PrimExpr body = result;
  for (size_t i = lets.size(); i-- > 0;) body = tir::Let(lets[i].var, lets[i].value, body);
  if (!is_signed) return body;
  // Negative exponents: 1 ** b = 1, (-1) ** b = +-1 by parity, else 0.
  const PrimExpr neg = tir::Select(
      tir::EQ(a, one), one,
      tir::Select(tir::EQ(a, C(t, -1)), tir::Select(tir::EQ(tir::Mod(b, two), zero), one, a), zero));
  return tir::Select(tir::LT(b, zero), neg, body);
}

// Integer division family with a divisor that can never trap: b == 0 gives 0
// (the interpreter's error); b == -1 gives -a (wrapping) or 0 for remainders.
PrimExpr IntDivision(Bin op, const PrimExpr& a, const PrimExpr& b) {
  const DataType t = a->dtype;
  const PrimExpr zero = C(t, 0), one = C(t, 1);
  const bool is_signed = t.is_int();
  const PrimExpr is_zero = tir::EQ(b, zero);
  if (!is_signed) {
    const PrimExpr d = tir::Select(is_zero, one, b);
    const PrimExpr r = (op == Bin::kDiv || op == Bin::kFloorDiv) ? tir::Div(a, d) : tir::Mod(a, d);
    return tir::Select(is_zero, zero, r);
  }
  const PrimExpr is_m1 = tir::EQ(b, C(t, -1));
  const PrimExpr d = tir::Select(tir::Or(is_zero, is_m1), one, b);
  switch (op) {
    case Bin::kDiv:
      return tir::Select(is_zero, zero, tir::Select(is_m1, tir::Sub(zero, a), tir::Div(a, d)));
    case Bin::kFloorDiv:
      return tir::Select(is_zero, zero, tir::Select(is_m1, tir::Sub(zero, a), tir::FloorDiv(a, d)));
    case Bin::kMod: return tir::Select(tir::Or(is_zero, is_m1), zero, tir::Mod(a, d));
    default: return tir::Select(tir::Or(is_zero, is_m1), zero, tir::FloorMod(a, d));
  }
}

PrimExpr IntBin(Bin op, const PrimExpr& a, const PrimExpr& b) {
  switch (op) {
    case Bin::kAdd: return tir::Add(a, b);
    case Bin::kSub: return tir::Sub(a, b);
    case Bin::kMul: return tir::Mul(a, b);
    case Bin::kMax: return tir::Max(a, b);
    case Bin::kMin: return tir::Min(a, b);
    case Bin::kPow: return IntPow(a, b);
    case Bin::kDiv:
    case Bin::kMod:
    case Bin::kFloorDiv:
    case Bin::kFloorMod: return IntDivision(op, a, b);
    default: return Compare(op, a, b);
  }
}

// One element of `op` on two values of one dtype, stored as `out`.
PrimExpr ScalarBin(Bin op, const PrimExpr& a, const PrimExpr& b, DataType out) {
  if (IsLogical(op)) {
    const PrimExpr x = NonZero(a), y = NonZero(b);
    if (op == Bin::kAnd) return tir::And(x, y);
    if (op == Bin::kOr) return tir::Or(x, y);
    return tir::NE(x, y);
  }
  const DataType dt = a->dtype;
  if (dt.is_float()) return Convert(FloatBin(op, Promote(a), Promote(b)), out);
  if (dt.is_bool()) {
    const DataType i32 = DataType::Int(32);
    return Convert(IntBin(op, tir::Cast(i32, a), tir::Cast(i32, b)), out);
  }
  return Convert(IntBin(op, a, b), out);
}

FTCompute Binary(Bin op) {
  return [op](const ComputeCtx& ctx) -> absl::StatusOr<std::vector<te::Tensor>> {
    KILN_RETURN_IF_ERROR(CheckArity(ctx, 2));
    const te::Tensor& a = ctx.inputs[0];
    const te::Tensor& b = ctx.inputs[1];
    if (IsLogical(op)) {
      if (!a.dtype().is_bool() || !b.dtype().is_bool())
        return ctx.Error(absl::StrCat("operands must be bool tensors; got ", a.dtype().ToString(),
                                      " and ", b.dtype().ToString()));
    } else if (a.dtype() != b.dtype()) {
      return ctx.Error(absl::StrCat("operands must have the same dtype; got ", a.dtype().ToString(),
                                    " and ", b.dtype().ToString()));
    }
    const Shape& shape = ctx.out_shapes[0];
    const DataType out = ctx.out_dtypes[0];
    te::Tensor t = te::Compute(
        shape,
        [&](const std::vector<Var>& i) {
          return ScalarBin(op, BroadcastRead(a, shape, i), BroadcastRead(b, shape, i), out);
        },
        ComputeName(ctx), "broadcast");
    return std::vector<te::Tensor>{t};
  };
}

absl::StatusOr<std::vector<te::Tensor>> Where(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 3));
  const te::Tensor& c = ctx.inputs[0];
  const te::Tensor& x = ctx.inputs[1];
  const te::Tensor& y = ctx.inputs[2];
  if (!c.dtype().is_bool() || x.dtype() != y.dtype())
    return ctx.Error(absl::StrCat("expects a bool condition and x, y of one dtype; got ",
                                  c.dtype().ToString(), ", ", x.dtype().ToString(), ", ",
                                  y.dtype().ToString()));
  const Shape& shape = ctx.out_shapes[0];
  te::Tensor t = te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        return tir::Select(BroadcastRead(c, shape, i), BroadcastRead(x, shape, i),
                           BroadcastRead(y, shape, i));
      },
      ComputeName(ctx), "broadcast");
  return std::vector<te::Tensor>{t};
}

// nn.bias_add / nn.prelu: a 1-D vector read at the output index of `axis`.
template <typename A>
FTCompute VectorAlongAxis(bool prelu) {
  return [prelu](const ComputeCtx& ctx) -> absl::StatusOr<std::vector<te::Tensor>> {
    KILN_RETURN_IF_ERROR(CheckArity(ctx, 2));
    const te::Tensor& x = ctx.inputs[0];
    const te::Tensor& v = ctx.inputs[1];
    KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(ctx, ctx.Attrs<A>().axis, x.ndim()));
    if (v.ndim() != 1 || v.dtype() != x.dtype())
      return ctx.Error(absl::StrCat("argument 1 must be a 1-D tensor of dtype ",
                                    x.dtype().ToString(), "; got a ", v.ndim(), "-D ",
                                    v.dtype().ToString(), " tensor"));
    const Shape& shape = ctx.out_shapes[0];
    const DataType out = ctx.out_dtypes[0];
    const size_t ax = static_cast<size_t>(axis);
    te::Tensor t = te::Compute(
        shape,
        [&](const std::vector<Var>& i) -> PrimExpr {
          const PrimExpr xv = x(i), vv = v({i[ax]});
          if (!prelu) return ScalarBin(Bin::kAdd, xv, vv, out);
          // x > 0 ? x : x * alpha, in floating point (integers through float64).
          return FloatMath({xv, vv}, out, [](const std::vector<PrimExpr>& p) {
            const PrimExpr& xf = p[0];
            return tir::Select(tir::GT(xf, tir::MakeConst(xf->dtype, 0)), xf, tir::Mul(xf, p[1]));
          });
        },
        ComputeName(ctx), "broadcast");
    return std::vector<te::Tensor>{t};
  };
}

absl::StatusOr<std::vector<te::Tensor>> BroadcastTo(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const Shape& shape = ctx.out_shapes[0];
  if (x.ndim() > static_cast<int>(shape.size()))
    return ctx.Error(absl::StrCat("cannot broadcast a ", x.ndim(), "-D tensor to ", shape.size(),
                                  " dims"));
  te::Tensor t = te::Compute(
      shape, [&](const std::vector<Var>& i) { return BroadcastRead(x, shape, i); },
      ComputeName(ctx), "broadcast");
  return std::vector<te::Tensor>{t};
}

}  // namespace

void RegisterBroadcastComputes() {
  const std::pair<const char*, Bin> binaries[] = {
      {"add", Bin::kAdd},          {"subtract", Bin::kSub},        {"multiply", Bin::kMul},
      {"divide", Bin::kDiv},       {"power", Bin::kPow},           {"maximum", Bin::kMax},
      {"minimum", Bin::kMin},      {"mod", Bin::kMod},             {"floor_divide", Bin::kFloorDiv},
      {"floor_mod", Bin::kFloorMod}, {"equal", Bin::kEq},          {"not_equal", Bin::kNe},
      {"less", Bin::kLt},          {"less_equal", Bin::kLe},       {"greater", Bin::kGt},
      {"greater_equal", Bin::kGe}, {"logical_and", Bin::kAnd},     {"logical_or", Bin::kOr},
      {"logical_xor", Bin::kXor},
  };
  for (const auto& [name, op] : binaries) Attach(name, Binary(op));
  Attach("where", Where);
  Attach("nn.bias_add", VectorAlongAxis<BiasAddAttrs>(false));
  Attach("nn.prelu", VectorAlongAxis<PReluAttrs>(true));
  Attach("broadcast_to", BroadcastTo);
}

}  // namespace kiln::lowering::tensor
