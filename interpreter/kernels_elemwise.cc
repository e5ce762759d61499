// Kernels of elementwise and broadcasting operators: unary math (including
// tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh), clip, cast,
// nn.relu/leaky_relu/gelu, binary arithmetic with NumPy broadcasting,
// comparisons, logical ops, nn.bias_add and nn.prelu.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "interpreter/kernel_util.h"
#include "ir/op_attrs.h"

namespace kiln::interp::internal {
namespace {

bool IsU64(DataType dt) { return dt.is_uint() && dt.bits() == 64; }

// ---- Unary ------------------------------------------------------------------

// Float semantics through double; integer inputs convert the result back with
// the float -> int rule (kernels.h).
KernelFn FloatUnary(std::function<double(double)> f) {
  return [f](const KernelCtx& k) -> absl::StatusOr<Value> {
    KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), x->shape()));
    for (int64_t i = 0; i < x->num_elements(); ++i) StoreF(*out, i, f(LoadF(*x, i)));
    return TensorValue(std::move(out));
  };
}

// Separate float and integer semantics (integers in 64 bits, wrapped on store).
KernelFn MixedUnary(std::function<double(double)> ff, std::function<int64_t(int64_t, DataType)> fi) {
  return [ff, fi](const KernelCtx& k) -> absl::StatusOr<Value> {
    KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), x->shape()));
    const DataType dt = x->dtype();
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      if (dt.is_float()) StoreF(*out, i, ff(LoadF(*x, i)));
      else StoreI(*out, i, fi(LoadI(*x, i), dt));
    }
    return TensorValue(std::move(out));
  };
}

int64_t Neg(int64_t v) { return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(v)); }

double RoundHalfEven(double v) { return std::nearbyint(v); }  // default mode: to nearest even

double Sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

absl::StatusOr<Value> Clip(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const ClipAttrs& a = k.Attrs<ClipAttrs>();
  if (!(a.a_min <= a.a_max))
    return k.Error(absl::StrCat("a_min (", a.a_min, ") must not exceed a_max (", a.a_max, ")"));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), x->shape()));
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    if (x->dtype().is_float()) {
      const double v = LoadF(*x, i);
      StoreF(*out, i, std::isnan(v) ? v : std::min(std::max(v, a.a_min), a.a_max));
    } else {
      const int64_t v = LoadI(*x, i);
      const double d = IsU64(x->dtype()) ? static_cast<double>(static_cast<uint64_t>(v))
                                         : static_cast<double>(v);
      if (d < a.a_min) StoreF(*out, i, std::ceil(a.a_min));
      else if (d > a.a_max) StoreF(*out, i, std::floor(a.a_max));
      else StoreI(*out, i, v);
    }
  }
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> Cast(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const DataType to = k.Attrs<CastAttrs>().dtype;
  if (to.is_void() || to.lanes() != 1) return k.Error(absl::StrCat("cannot cast to ", to.ToString()));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, to, x->shape()));
  const DataType from = x->dtype();
  for (int64_t i = 0; i < x->num_elements(); ++i) {
    if (from.is_float()) {
      StoreF(*out, i, LoadF(*x, i));
    } else if (IsU64(from) && to.is_float()) {
      StoreF(*out, i, static_cast<double>(static_cast<uint64_t>(LoadI(*x, i))));
    } else {
      StoreI(*out, i, LoadI(*x, i));
    }
  }
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> Fill(const KernelCtx& k, double v) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), x->shape()));
  for (int64_t i = 0; i < x->num_elements(); ++i) StoreF(*out, i, v);
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> IsNan(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, DataType::Bool(), x->shape()));
  for (int64_t i = 0; i < x->num_elements(); ++i)
    StoreI(*out, i, x->dtype().is_float() && std::isnan(LoadF(*x, i)));
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> LogicalNot(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  if (!x->dtype().is_bool()) return k.Error(absl::StrCat("expects a bool tensor; got ", TypeStr(*x)));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, DataType::Bool(), x->shape()));
  for (int64_t i = 0; i < x->num_elements(); ++i) StoreI(*out, i, LoadI(*x, i) == 0);
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> Gelu(const KernelCtx& k) {
  const std::string& mode = k.Attrs<GeluAttrs>().approximate;
  if (mode != "none" && mode != "tanh")
    return k.Error(absl::StrCat("approximate must be \"none\" or \"tanh\"; got \"", mode, "\""));
  const bool tanh_form = mode == "tanh";
  return FloatUnary([tanh_form](double x) {
    if (tanh_form) {
      const double c = std::sqrt(2.0 / M_PI);
      return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
    }
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  })(k);
}

absl::StatusOr<Value> LeakyRelu(const KernelCtx& k) {
  const double alpha = k.Attrs<LeakyReluAttrs>().alpha;
  return FloatUnary([alpha](double x) { return x > 0 ? x : alpha * x; })(k);
}

// ---- Binary -----------------------------------------------------------------

enum class Bin {
  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kMod, kFloorDiv, kFloorMod,
  kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr, kXor,
};

bool IsCompare(Bin b) { return b >= Bin::kEq && b <= Bin::kGe; }
bool IsLogical(Bin b) { return b >= Bin::kAnd; }

double FloatBin(Bin op, double a, double b) {
  switch (op) {
    case Bin::kAdd: return a + b;
    case Bin::kSub: return a - b;
    case Bin::kMul: return a * b;
    case Bin::kDiv: return a / b;
    case Bin::kPow: return std::pow(a, b);
    case Bin::kMax: return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b);
    case Bin::kMin: return (std::isnan(a) || std::isnan(b)) ? NAN : std::min(a, b);
    case Bin::kMod: return std::fmod(a, b);
    case Bin::kFloorDiv: return std::floor(a / b);
    case Bin::kFloorMod: return a - std::floor(a / b) * b;
    case Bin::kEq: return a == b;
    case Bin::kNe: return a != b;
    case Bin::kLt: return a < b;
    case Bin::kLe: return a <= b;
    case Bin::kGt: return a > b;
    case Bin::kGe: return a >= b;
    default: return 0;
  }
}

// Integer semantics in T (int64_t or uint64_t); false when dividing by zero.
template <typename T>
bool IntBin(Bin op, T a, T b, T* r) {
  using U = uint64_t;
  switch (op) {
    case Bin::kAdd: *r = static_cast<T>(static_cast<U>(a) + static_cast<U>(b)); return true;
    case Bin::kSub: *r = static_cast<T>(static_cast<U>(a) - static_cast<U>(b)); return true;
    case Bin::kMul: *r = static_cast<T>(static_cast<U>(a) * static_cast<U>(b)); return true;
    case Bin::kMax: *r = std::max(a, b); return true;
    case Bin::kMin: *r = std::min(a, b); return true;
    case Bin::kEq: *r = a == b; return true;
    case Bin::kNe: *r = a != b; return true;
    case Bin::kLt: *r = a < b; return true;
    case Bin::kLe: *r = a <= b; return true;
    case Bin::kGt: *r = a > b; return true;
    case Bin::kGe: *r = a >= b; return true;
    case Bin::kPow: {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) {
          if (a == 0) return false;
          if (a == 1) *r = 1;
          else if (a == -1) *r = (static_cast<U>(b) & 1) ? a : T{1};
          else *r = 0;
          return true;
        }
      }
      U result = 1, base = static_cast<U>(a), e = static_cast<U>(b);
      while (e) {
        if (e & 1) result *= base;
        base *= base;
        e >>= 1;
      }
      *r = static_cast<T>(result);
      return true;
    }
    case Bin::kDiv:
    case Bin::kMod:
    case Bin::kFloorDiv:
    case Bin::kFloorMod: {
      if (b == T{0}) return false;
      T q, m;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) {  // avoids INT64_MIN / -1
          q = static_cast<T>(U{0} - static_cast<U>(a));
          m = 0;
        } else {
          q = a / b;
          m = a % b;
        }
        if (m != 0 && ((m < 0) != (b < 0))) {
          if (op == Bin::kFloorDiv) q = q - 1;
          if (op == Bin::kFloorMod) m = m + b;
        }
      } else {
        q = a / b;
        m = a % b;
      }
      *r = (op == Bin::kDiv || op == Bin::kFloorDiv) ? q : m;
      return true;
    }
    default: *r = 0; return true;
  }
}

KernelFn Binary(Bin op) {
  return [op](const KernelCtx& k) -> absl::StatusOr<Value> {
    KILN_ASSIGN_OR_RETURN(const HostTensor* a, k.Tensor(0));
    KILN_ASSIGN_OR_RETURN(const HostTensor* b, k.Tensor(1));
    const DataType dt = a->dtype();
    if (IsLogical(op)) {
      if (!dt.is_bool() || !b->dtype().is_bool())
        return k.Error(absl::StrCat("operands must be bool tensors; got ", TypeStr(*a), " and ",
                                    TypeStr(*b)));
    } else if (dt != b->dtype()) {
      return k.Error(absl::StrCat("operands must have the same dtype; got ", TypeStr(*a), " and ",
                                  TypeStr(*b)));
    }
    KILN_ASSIGN_OR_RETURN(Shape64 shape, BroadcastShape(k, a->shape(), b->shape()));
    const DataType out_dt = (IsCompare(op) || IsLogical(op)) ? DataType::Bool() : dt;
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, out_dt, shape));
    const std::vector<int64_t> ia = BroadcastIndex(a->shape(), shape);
    const std::vector<int64_t> ib = BroadcastIndex(b->shape(), shape);
    for (int64_t i = 0; i < out->num_elements(); ++i) {
      const int64_t pa = ia[static_cast<size_t>(i)], pb = ib[static_cast<size_t>(i)];
      if (IsLogical(op)) {
        const bool x = LoadI(*a, pa) != 0, y = LoadI(*b, pb) != 0;
        StoreI(*out, i, op == Bin::kAnd ? (x && y) : op == Bin::kOr ? (x || y) : (x != y));
      } else if (dt.is_float()) {
        StoreF(*out, i, FloatBin(op, LoadF(*a, pa), LoadF(*b, pb)));
      } else {
        bool ok;
        int64_t r = 0;
        if (IsU64(dt)) {
          uint64_t u = 0;
          ok = IntBin<uint64_t>(op, static_cast<uint64_t>(LoadI(*a, pa)),
                                static_cast<uint64_t>(LoadI(*b, pb)), &u);
          r = static_cast<int64_t>(u);
        } else {
          ok = IntBin<int64_t>(op, LoadI(*a, pa), LoadI(*b, pb), &r);
        }
        if (!ok)
          return k.Error(op == Bin::kPow
                             ? absl::StrCat("0 raised to a negative power in ", dt.ToString())
                             : absl::StrCat("integer division by zero (", dt.ToString(),
                                            ", output element ", i, ")"));
        StoreI(*out, i, r);
      }
    }
    return TensorValue(std::move(out));
  };
}

// nn.bias_add(data, bias) and nn.prelu(data, alpha): a vector along `axis`.
template <typename A>
KernelFn VectorAlongAxis(bool prelu) {
  return [prelu](const KernelCtx& k) -> absl::StatusOr<Value> {
    KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
    KILN_ASSIGN_OR_RETURN(const HostTensor* v, k.Tensor(1));
    KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(k, k.Attrs<A>().axis, x->ndim()));
    const int64_t len = x->shape()[static_cast<size_t>(axis)];
    if (v->ndim() != 1 || v->shape()[0] != len || v->dtype() != x->dtype())
      return k.Error(absl::StrCat("argument 1 must be a 1-D tensor of length ", len, " and dtype ",
                                  x->dtype().ToString(), "; got ", TypeStr(*v)));
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), x->shape()));
    const int64_t inner = Strides(x->shape())[static_cast<size_t>(axis)];
    const bool fl = x->dtype().is_float();
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      const int64_t c = (i / inner) % len;
      if (prelu) {
        const double xv = LoadF(*x, i);
        StoreF(*out, i, xv > 0 ? xv : xv * LoadF(*v, c));
      } else if (fl) {
        StoreF(*out, i, LoadF(*x, i) + LoadF(*v, c));
      } else {
        StoreI(*out, i, static_cast<int64_t>(static_cast<uint64_t>(LoadI(*x, i)) +
                                             static_cast<uint64_t>(LoadI(*v, c))));
      }
    }
    return TensorValue(std::move(out));
  };
}

}  // namespace

void RegisterElemwiseKernels() {
  AddKernel("abs", MixedUnary([](double x) { return std::fabs(x); },
                              [](int64_t x, DataType dt) { return dt.is_int() && x < 0 ? Neg(x) : x; }));
  AddKernel("negative", MixedUnary([](double x) { return -x; },
                                   [](int64_t x, DataType) { return Neg(x); }));
  AddKernel("exp", FloatUnary([](double x) { return std::exp(x); }));
  AddKernel("log", FloatUnary([](double x) { return std::log(x); }));
  AddKernel("sqrt", FloatUnary([](double x) { return std::sqrt(x); }));
  AddKernel("rsqrt", FloatUnary([](double x) { return 1.0 / std::sqrt(x); }));
  AddKernel("sigmoid", FloatUnary(Sigmoid));
  AddKernel("tanh", FloatUnary([](double x) { return std::tanh(x); }));
  AddKernel("erf", FloatUnary([](double x) { return std::erf(x); }));
  AddKernel("sin", FloatUnary([](double x) { return std::sin(x); }));
  AddKernel("cos", FloatUnary([](double x) { return std::cos(x); }));
  AddKernel("tan", FloatUnary([](double x) { return std::tan(x); }));
  AddKernel("asin", FloatUnary([](double x) { return std::asin(x); }));
  AddKernel("acos", FloatUnary([](double x) { return std::acos(x); }));
  AddKernel("atan", FloatUnary([](double x) { return std::atan(x); }));
  AddKernel("sinh", FloatUnary([](double x) { return std::sinh(x); }));
  AddKernel("cosh", FloatUnary([](double x) { return std::cosh(x); }));
  AddKernel("asinh", FloatUnary([](double x) { return std::asinh(x); }));
  AddKernel("acosh", FloatUnary([](double x) { return std::acosh(x); }));
  AddKernel("atanh", FloatUnary([](double x) { return std::atanh(x); }));
  AddKernel("nn.relu", MixedUnary([](double x) { return x > 0 ? x : (std::isnan(x) ? x : 0.0); },
                                  [](int64_t x, DataType dt) {
                                    return dt.is_int() && x < 0 ? 0 : x;
                                  }));
  auto ident = [](int64_t x, DataType) { return x; };
  AddKernel("floor", MixedUnary([](double x) { return std::floor(x); }, ident));
  AddKernel("ceil", MixedUnary([](double x) { return std::ceil(x); }, ident));
  AddKernel("round", MixedUnary(RoundHalfEven, ident));
  AddKernel("sign", MixedUnary(
                        [](double x) { return std::isnan(x) ? x : (x > 0) - (x < 0) + 0.0; },
                        [](int64_t x, DataType dt) -> int64_t {
                          if (!dt.is_int()) return x != 0;
                          return (x > 0) - (x < 0);
                        }));
  AddKernel("copy", MixedUnary([](double x) { return x; }, ident));
  AddKernel("zeros_like", [](const KernelCtx& k) { return Fill(k, 0); });
  AddKernel("ones_like", [](const KernelCtx& k) { return Fill(k, 1); });
  AddKernel("isnan", IsNan);
  AddKernel("logical_not", LogicalNot);
  AddKernel("clip", Clip);
  AddKernel("cast", Cast);
  AddKernel("nn.leaky_relu", LeakyRelu);
  AddKernel("nn.gelu", Gelu);

  const std::pair<const char*, Bin> binaries[] = {
      {"add", Bin::kAdd},          {"subtract", Bin::kSub},      {"multiply", Bin::kMul},
      {"divide", Bin::kDiv},       {"power", Bin::kPow},         {"maximum", Bin::kMax},
      {"minimum", Bin::kMin},      {"mod", Bin::kMod},           {"floor_divide", Bin::kFloorDiv},
      {"floor_mod", Bin::kFloorMod}, {"equal", Bin::kEq},        {"not_equal", Bin::kNe},
      {"less", Bin::kLt},          {"less_equal", Bin::kLe},     {"greater", Bin::kGt},
      {"greater_equal", Bin::kGe}, {"logical_and", Bin::kAnd},   {"logical_or", Bin::kOr},
      {"logical_xor", Bin::kXor},
  };
  for (const auto& [name, op] : binaries) AddKernel(name, Binary(op));
  AddKernel("nn.bias_add", VectorAlongAxis<BiasAddAttrs>(false));
  AddKernel("nn.prelu", VectorAlongAxis<PReluAttrs>(true));
}

}  // namespace kiln::interp::internal
