// File: lowering/arith/modular_set.cc — modular sets (TVM's
// ModularSetAnalyzer): every value of e is coeff * k + base for some integer k.
// Normal form: coeff >= 0; coeff == 0 is the constant `base`; otherwise
// 0 <= base < coeff. {1, 0} says nothing.
#include <cstdlib>

#include "lowering/arith/analyzer_impl.h"

namespace kiln::arith {
namespace {

ModularSet Nothing() { return ModularSet{1, 0}; }

ModularSet Make(int64_t coeff, int64_t base) {
  if (coeff == ConstIntBound::kNegInf || coeff == ConstIntBound::kPosInf) return Nothing();
  coeff = coeff < 0 ? -coeff : coeff;
  if (coeff == 0) return ModularSet{0, base};
  return ModularSet{coeff, FloorModInt(base, coeff)};
}

bool MulOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool AddOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

ModularSet AddSets(ModularSet a, ModularSet b, int64_t sign) {
  int64_t coeff = Gcd(a.coeff, b.coeff);
  int64_t base = 0;
  if (!AddOk(a.base, sign * b.base, &base)) return Nothing();
  return Make(coeff, base);
}

ModularSet MulSets(ModularSet a, ModularSet b) {
  // (c1 x + b1)(c2 y + b2) = c1 c2 xy + c1 b2 x + c2 b1 y + b1 b2
  int64_t c1c2 = 0, c1b2 = 0, c2b1 = 0, base = 0;
  if (!MulOk(a.coeff, b.coeff, &c1c2) || !MulOk(a.coeff, b.base, &c1b2) ||
      !MulOk(b.coeff, a.base, &c2b1) || !MulOk(a.base, b.base, &base)) {
    return Nothing();
  }
  return Make(Gcd(Gcd(c1c2, c1b2), c2b1), base);
}

ModularSet UnionSets(ModularSet a, ModularSet b) {
  int64_t diff = 0;
  if (!AddOk(a.base, -b.base, &diff)) return Nothing();
  return Make(Gcd(Gcd(a.coeff, b.coeff), diff), a.base);
}

ModularSet FloorDivSet(ModularSet a, int64_t k) {
  if (a.coeff == 0) return ModularSet{0, FloorDivInt(a.base, k)};
  // c * x + b with k | c and 0 <= b < c: floordiv = (c / k) x + floordiv(b, k).
  if (a.coeff % k == 0) return Make(a.coeff / k, FloorDivInt(a.base, k));
  return Nothing();
}

ModularSet FloorModSet(ModularSet a, int64_t k) {
  if (a.coeff == 0 || a.coeff % k == 0) return ModularSet{0, FloorModInt(a.base, k)};
  int64_t g = Gcd(a.coeff, k);
  return Make(g, a.base);
}

}  // namespace

ModularSet Analyzer::Impl::Modular(const PrimExpr& e) {
  if (!e) return Nothing();
  const ExprNode& n = *e;
  if (n.kind == ExprKind::kIntImm && n.dtype.is_integral()) return ModularSet{0, n.int_value};
  // Wrapping types: residues do not survive overflow.
  if (!IsIndexLike(n.dtype)) return Nothing();
  int64_t k = 0;
  switch (n.kind) {
    case ExprKind::kVar: {
      const VarFacts* f = Facts(&n);
      if (f == nullptr) return Nothing();
      if (f->value) return Modular(f->value);
      if (f->bound.min_value == f->bound.max_value) return ModularSet{0, f->bound.min_value};
      return Nothing();
    }
    case ExprKind::kAdd: return AddSets(Modular(n.args[0]), Modular(n.args[1]), 1);
    case ExprKind::kSub: return AddSets(Modular(n.args[0]), Modular(n.args[1]), -1);
    case ExprKind::kMul: return MulSets(Modular(n.args[0]), Modular(n.args[1]));
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
      if (!tir::IsConstInt(n.args[1], &k) || k <= 0) return Nothing();
      if (n.kind == ExprKind::kDiv && Bound(n.args[0]).min_value < 0) return Nothing();
      return FloorDivSet(Modular(n.args[0]), k);
    case ExprKind::kMod:
    case ExprKind::kFloorMod:
      if (!tir::IsConstInt(n.args[1], &k) || k <= 0) return Nothing();
      if (n.kind == ExprKind::kMod && Bound(n.args[0]).min_value < 0) return Nothing();
      return FloorModSet(Modular(n.args[0]), k);
    case ExprKind::kMin:
    case ExprKind::kMax: return UnionSets(Modular(n.args[0]), Modular(n.args[1]));
    case ExprKind::kSelect: return UnionSets(Modular(n.args[1]), Modular(n.args[2]));
    case ExprKind::kCast:
      // From a wider or equal signed integer type the value is unchanged when it fits.
      if (n.args[0]->dtype.is_int()) {
        ConstIntBound b = Bound(n.args[0]);
        ConstIntBound t = TypeBound(n.dtype);
        if (b.min_value >= t.min_value && b.max_value <= t.max_value) return Modular(n.args[0]);
      }
      return Nothing();
    case ExprKind::kLet: {
      size_t mark = Mark();
      PushLet(n.args[0], n.args[1]);
      ModularSet r = Modular(n.args[2]);
      ExitScope(mark);
      return r;
    }
    default: return Nothing();
  }
}

ModularSet Analyzer::Impl::LinearModular(const LinearForm& f) {
  ModularSet r{0, f.constant};
  for (const Term& t : f.terms) r = AddSets(r, MulSets(Modular(t.atom), ModularSet{0, t.coeff}), 1);
  return r;
}

}  // namespace kiln::arith
