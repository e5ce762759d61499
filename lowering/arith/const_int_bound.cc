// File: lowering/arith/const_int_bound.cc — interval analysis (TVM's
// ConstIntBoundAnalyzer): [min, max] of an integer expression from the bounds
// of its variables, with saturating arithmetic so unbounded stays unbounded.
#include <algorithm>
#include <cmath>

#include "lowering/arith/analyzer_impl.h"

namespace kiln::arith {

namespace {
constexpr int64_t kPosInf = ConstIntBound::kPosInf;
constexpr int64_t kNegInf = ConstIntBound::kNegInf;

bool IsInf(int64_t v) { return v == kPosInf || v == kNegInf; }
int Sign(int64_t v) { return v > 0 ? 1 : (v < 0 ? -1 : 0); }

int64_t Clamp(__int128 v) {
  if (v >= kPosInf) return kPosInf;
  if (v <= kNegInf) return kNegInf;
  return static_cast<int64_t>(v);
}
}  // namespace

int64_t BoundAdd(int64_t a, int64_t b) {
  if (IsInf(a)) return a;
  if (IsInf(b)) return b;
  return Clamp(static_cast<__int128>(a) + b);
}

int64_t BoundNeg(int64_t a) {
  if (a == kPosInf) return kNegInf;
  if (a == kNegInf) return kPosInf;
  return -a;
}

int64_t BoundMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (IsInf(a) || IsInf(b)) return Sign(a) * Sign(b) > 0 ? kPosInf : kNegInf;
  return Clamp(static_cast<__int128>(a) * b);
}

int64_t FloorDivInt(int64_t a, int64_t b) {
  if (b == -1) return a == kNegInf ? kPosInf : -a;  // avoid INT64_MIN / -1
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorModInt(int64_t a, int64_t b) {
  if (b == -1 || b == 1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t Gcd(int64_t a, int64_t b) {
  // Magnitudes as unsigned so INT64_MIN does not overflow; results fit unless
  // both are INT64_MIN (then kPosInf, harmless for our uses).
  uint64_t x = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  uint64_t y = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  while (y != 0) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x > static_cast<uint64_t>(kPosInf) ? kPosInf : static_cast<int64_t>(x);
}

int64_t BoundDiv(int64_t a, int64_t b, bool floor) {
  if (IsInf(b)) {
    if (IsInf(a)) return Sign(a) * Sign(b) > 0 ? kPosInf : kNegInf;  // conservative
    if (!floor || a == 0) return 0;
    return Sign(a) * Sign(b) < 0 ? -1 : 0;
  }
  if (IsInf(a)) return Sign(a) * Sign(b) > 0 ? kPosInf : kNegInf;
  if (b == -1) return BoundNeg(a);
  return floor ? FloorDivInt(a, b) : a / b;
}

ConstIntBound Everything() { return ConstIntBound{}; }
ConstIntBound Point(int64_t v) { return ConstIntBound{v, v}; }

ConstIntBound Intersect(ConstIntBound a, ConstIntBound b) {
  return ConstIntBound{std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}

ConstIntBound Union(ConstIntBound a, ConstIntBound b) {
  return ConstIntBound{std::min(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
}

ConstIntBound TypeBound(DataType t) {
  if (t.is_bool()) return ConstIntBound{0, 1};
  if (t.is_int()) {
    if (t.bits() >= 64) return Everything();
    return ConstIntBound{-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
  }
  if (t.is_uint()) {
    if (t.bits() >= 64) return ConstIntBound{0, kPosInf};
    return ConstIntBound{0, (int64_t{1} << t.bits()) - 1};
  }
  return Everything();
}

bool IsIndexLike(DataType t) { return t.is_int() && t.bits() >= 32; }

namespace {

bool Within(ConstIntBound b, ConstIntBound outer) {
  return b.min_value >= outer.min_value && b.max_value <= outer.max_value;
}

ConstIntBound Corners(int64_t (*f)(int64_t, int64_t), ConstIntBound a, ConstIntBound b) {
  int64_t v[4] = {f(a.min_value, b.min_value), f(a.min_value, b.max_value),
                  f(a.max_value, b.min_value), f(a.max_value, b.max_value)};
  return ConstIntBound{*std::min_element(v, v + 4), *std::max_element(v, v + 4)};
}

int64_t Magnitude(ConstIntBound a) { return std::max(BoundNeg(a.min_value), a.max_value); }

ConstIntBound DivBound(ConstIntBound a, ConstIntBound b, bool floor) {
  // Division by zero is undefined: a divisor range touching 0 is treated as
  // excluding it.
  if (b.min_value == 0) b.min_value = 1;
  if (b.max_value == 0) b.max_value = -1;
  if (b.min_value > b.max_value) return Everything();
  if (b.min_value < 0 && b.max_value > 0) {
    // |a / b| <= |a| when |b| >= 1 (floor adds at most one when |b| >= 2).
    int64_t m = Magnitude(a);
    return ConstIntBound{BoundNeg(m), m};
  }
  auto f = floor ? +[](int64_t x, int64_t y) { return BoundDiv(x, y, true); }
                 : +[](int64_t x, int64_t y) { return BoundDiv(x, y, false); };
  return Corners(f, a, b);
}

ConstIntBound TruncModBound(ConstIntBound a, ConstIntBound b) {
  int64_t m = BoundAdd(Magnitude(b), -1);  // |a % b| <= |b| - 1
  if (m < 0) m = 0;
  if (a.min_value >= 0) return ConstIntBound{0, std::min(a.max_value, m)};
  if (a.max_value <= 0) return ConstIntBound{std::max(a.min_value, BoundNeg(m)), 0};
  return ConstIntBound{std::max(a.min_value, BoundNeg(m)), std::min(a.max_value, m)};
}

ConstIntBound FloorModBound(ConstIntBound a, ConstIntBound b) {
  if (b.min_value > 0) {
    int64_t hi = BoundAdd(b.max_value, -1);
    if (a.min_value >= 0) {
      // a < b.min: the result is a itself.
      if (a.max_value < b.min_value) return a;
      return ConstIntBound{0, std::min(a.max_value, hi)};
    }
    return ConstIntBound{0, hi};
  }
  if (b.max_value < 0) return ConstIntBound{BoundAdd(b.min_value, 1), 0};
  int64_t m = BoundAdd(Magnitude(b), -1);
  return ConstIntBound{BoundNeg(m), m};
}

}  // namespace

ConstIntBound Analyzer::Impl::Bound(const PrimExpr& e) {
  if (!e) return Everything();
  const ExprNode& n = *e;
  DataType t = n.dtype;
  if (!t.is_integral()) return Everything();
  ConstIntBound type = TypeBound(t);
  ConstIntBound r = type;
  switch (n.kind) {
    case ExprKind::kIntImm:
      if (t.is_uint() && t.bits() >= 64 && n.int_value < 0) return ConstIntBound{0, kPosInf};
      return Point(n.int_value);
    case ExprKind::kVar: {
      const VarFacts* f = Facts(&n);
      return f ? Intersect(f->bound, type) : type;
    }
    case ExprKind::kAdd: {
      ConstIntBound a = Bound(n.args[0]), b = Bound(n.args[1]);
      r = ConstIntBound{BoundAdd(a.min_value, b.min_value), BoundAdd(a.max_value, b.max_value)};
      break;
    }
    case ExprKind::kSub: {
      ConstIntBound a = Bound(n.args[0]), b = Bound(n.args[1]);
      r = ConstIntBound{BoundAdd(a.min_value, BoundNeg(b.max_value)),
                        BoundAdd(a.max_value, BoundNeg(b.min_value))};
      break;
    }
    case ExprKind::kMul:
      r = Corners(BoundMul, Bound(n.args[0]), Bound(n.args[1]));
      break;
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
      r = DivBound(Bound(n.args[0]), Bound(n.args[1]), n.kind == ExprKind::kFloorDiv);
      break;
    case ExprKind::kMod: r = TruncModBound(Bound(n.args[0]), Bound(n.args[1])); break;
    case ExprKind::kFloorMod: r = FloorModBound(Bound(n.args[0]), Bound(n.args[1])); break;
    case ExprKind::kMin: {
      ConstIntBound a = Bound(n.args[0]), b = Bound(n.args[1]);
      r = ConstIntBound{std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
      break;
    }
    case ExprKind::kMax: {
      ConstIntBound a = Bound(n.args[0]), b = Bound(n.args[1]);
      r = ConstIntBound{std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
      break;
    }
    case ExprKind::kSelect: r = Union(Bound(n.args[1]), Bound(n.args[2])); break;
    case ExprKind::kCast: {
      const PrimExpr& v = n.args[0];
      double f = 0;
      if (v->dtype.is_integral()) {
        r = Bound(v);
      } else if (tir::IsConstFloat(v, &f) && std::isfinite(f) && std::fabs(f) < 9.0e18) {
        r = Point(static_cast<int64_t>(std::trunc(f)));
      }
      break;
    }
    case ExprKind::kCall:
      if (n.name == "if_then_else" && n.args.size() == 3) {
        r = Union(Bound(n.args[1]), Bound(n.args[2]));
      }
      break;
    case ExprKind::kRamp: {
      ConstIntBound base = Bound(n.args[0]);
      ConstIntBound stride = Bound(n.args[1]);
      ConstIntBound last = Corners(BoundMul, stride, Point(t.lanes() - 1));
      r = ConstIntBound{BoundAdd(base.min_value, std::min<int64_t>(0, last.min_value)),
                        BoundAdd(base.max_value, std::max<int64_t>(0, last.max_value))};
      break;
    }
    case ExprKind::kBroadcast: r = Bound(n.args[0]); break;
    case ExprKind::kLet: {
      size_t mark = Mark();
      PushLet(n.args[0], n.args[1]);
      r = Bound(n.args[2]);
      ExitScope(mark);
      break;
    }
    default: break;  // comparisons and logic: the type's [0, 1]; loads, ...: the type
  }
  // A result outside the type wraps (narrow or unsigned types): anything goes.
  return Within(r, type) ? r : type;
}

}  // namespace kiln::arith
