// File: lowering/arith/canonical_simplify.cc — integer arithmetic through
// linear forms (TVM's CanonicalSimplifier, at a smaller scale):
//
//   (i + 1) * 4 - i * 4        -> 4
//   floordiv(i * 16 + j, 16)   -> i                 (0 <= j < 16)
//   floormod(i * 16 + j, 16)   -> j
//   floordiv(x, 4) * 4 + floormod(x, 4) -> x
//   i + 1 < n + 1              -> i < n
//
// Comparisons are normalized: d < 0, d == 0 or d != 0 for d = lhs - rhs,
// divided by the gcd of its coefficients, printed with positive terms on the
// left and the constant on the side where it is positive:
//   x < 6, x > 4 (from 5 <= x), i < n, i + 1 < n, i < n + 1 (from i <= n),
//   x == 3, i == j + 1.
#include <cstdlib>

#include "ir/tir_functor.h"
#include "lowering/arith/analyzer_impl.h"

namespace kiln::arith {

using tir::IsConstInt;

LinearForm Analyzer::Impl::Linearize(const PrimExpr& e) {
  LinearForm f;
  f.dtype = e->dtype;
  switch (e->kind) {
    case ExprKind::kIntImm: f.constant = e->int_value; return f;
    case ExprKind::kAdd:
    case ExprKind::kSub:
      f = Linearize(e->args[0]);
      f.AddForm(Linearize(e->args[1]), e->kind == ExprKind::kAdd ? 1 : -1);
      return f;
    case ExprKind::kMul: {
      LinearForm a = Linearize(e->args[0]);
      LinearForm b = Linearize(e->args[1]);
      if (b.is_const()) {
        f.AddForm(a, b.constant);
      } else if (a.is_const()) {
        f.AddForm(b, a.constant);
      } else if (!a.overflow && !b.overflow) {
        PrimExpr x = FromLinearForm(a), y = FromLinearForm(b);
        if (CompareExpr(y, x) < 0) std::swap(x, y);  // commutative: a fixed order
        f.AddTerm(tir::Mul(x, y), 1);
      } else {
        f.overflow = true;
      }
      return f;
    }
    default: return ToLinearForm(Simplify(e));
  }
}

PrimExpr Analyzer::Impl::SimplifyArith(const PrimExpr& e) {
  LinearForm f = Linearize(e);
  if (!f.overflow) MergeDivModPairs(&f);
  if (f.overflow) {
    PrimExpr a = Simplify(e->args[0]), b = Simplify(e->args[1]);
    if (a == e->args[0] && b == e->args[1]) return e;
    return tir::Binary(e->kind, a, b);
  }
  return FromLinearForm(f);
}

// A split of r = d * y + z at the largest coefficient d (> 1, dividing
// `divisor`) for which floordiv(z, d) is one constant k over z's bounds; z
// holds the terms d does not divide and r's constant. A reshape's flattened
// index split again at a coarser stride: r = 196 * i + 14 * j + l with
// 14 * j + l < 196 splits at d = 196 into y = i, k = 0.
bool Analyzer::Impl::SplitAtCoefficient(const LinearForm& r, int64_t divisor, int64_t* d,
                                        LinearForm* y, LinearForm* z, int64_t* k) {
  *d = 0;
  for (const Term& cand : r.terms) {
    const int64_t c = cand.coeff;
    if (c <= 1 || divisor % c != 0 || c <= *d) continue;
    LinearForm cy, cz;
    cy.dtype = cz.dtype = r.dtype;
    for (const Term& term : r.terms) {
      if (term.coeff % c == 0) {
        cy.AddTerm(term.atom, term.coeff / c);
      } else {
        cz.AddTerm(term.atom, term.coeff);
      }
    }
    cz.constant = r.constant;
    const ConstIntBound zb = LinearBound(cz, true);
    if (zb.min_value == ConstIntBound::kNegInf || zb.max_value == ConstIntBound::kPosInf ||
        FloorDivInt(zb.min_value, c) != FloorDivInt(zb.max_value, c)) {
      continue;
    }
    *d = c;
    *k = FloorDivInt(zb.min_value, c);
    *y = std::move(cy);
    *z = std::move(cz);
  }
  return *d > 0;
}

PrimExpr Analyzer::Impl::SimplifyFloorDiv(const PrimExpr& a, const PrimExpr& b, DataType t) {
  int64_t av = 0, bv = 0;
  if (!IsConstInt(b, &bv)) {
    // x / x = 1; 0 <= x < y gives 0.
    LinearForm d = ToLinearForm(b);
    d.AddForm(ToLinearForm(a), -1);  // b - a
    if (!d.overflow && d.is_const() && d.constant == 0) return MakeInt(1, t);
    if (!d.overflow && LinearBound(d, true).min_value >= 1 &&
        LinearBound(ToLinearForm(a), true).min_value >= 0) {
      return MakeInt(0, t);
    }
    return tir::FloorDiv(a, b);
  }
  if (IsConstInt(a, &av) && bv != 0 && !(bv == -1 && av == ConstIntBound::kNegInf)) {
    return MakeInt(FloorDivInt(av, bv), t);  // (INT64_MIN / -1 overflows: left alone)
  }
  if (bv == 1) return a;
  if (bv <= 0) return tir::FloorDiv(a, b);
  // floordiv(floordiv(x, c1), c2) = floordiv(x, c1 * c2) for positive c1, c2.
  int64_t c1 = 0, prod = 0;
  if (a->kind == ExprKind::kFloorDiv && IsConstInt(a->args[1], &c1) && c1 > 0 &&
      !__builtin_mul_overflow(c1, bv, &prod)) {
    return SimplifyFloorDiv(a->args[0], MakeInt(prod, t), t);
  }
  LinearForm la = ToLinearForm(a);
  if (la.overflow) return tir::FloorDiv(a, b);
  // a = bv * q + r exactly: q takes the multiples of bv, r the rest (constant in [0, bv)).
  LinearForm q, r;
  q.dtype = r.dtype = t;
  for (const Term& term : la.terms) {
    if (term.coeff % bv == 0) {
      q.AddTerm(term.atom, term.coeff / bv);
    } else {
      r.AddTerm(term.atom, term.coeff);
    }
  }
  q.constant = FloorDivInt(la.constant, bv);
  r.constant = FloorModInt(la.constant, bv);
  ConstIntBound rb = LinearBound(r, true);
  if (rb.min_value != ConstIntBound::kNegInf && rb.max_value != ConstIntBound::kPosInf &&
      FloorDivInt(rb.min_value, bv) == FloorDivInt(rb.max_value, bv)) {
    q.AddConst(FloorDivInt(rb.min_value, bv));
    return q.overflow ? tir::FloorDiv(a, b) : FromLinearForm(q);
  }
  // floordiv(g * y + k, g * c) = floordiv(y + floordiv(k, g), c) when 0 <= k.
  int64_t g = bv;
  for (const Term& term : r.terms) g = Gcd(g, term.coeff);
  int64_t divisor = bv;
  if (g > 1) {
    LinearForm y;
    y.dtype = t;
    for (const Term& term : r.terms) y.AddTerm(term.atom, term.coeff / g);
    y.constant = FloorDivInt(r.constant, g);
    r = std::move(y);
    divisor = bv / g;
    ConstIntBound yb = LinearBound(r, true);
    if (yb.min_value != ConstIntBound::kNegInf && yb.max_value != ConstIntBound::kPosInf &&
        FloorDivInt(yb.min_value, divisor) == FloorDivInt(yb.max_value, divisor)) {
      q.AddConst(FloorDivInt(yb.min_value, divisor));
      return q.overflow ? tir::FloorDiv(a, b) : FromLinearForm(q);
    }
  }
  // floordiv(d * y + z, d * c) = floordiv(y + k, c) where floordiv(z, d) = k.
  {
    int64_t d = 0, k = 0;
    LinearForm y, z;
    if (SplitAtCoefficient(r, divisor, &d, &y, &z, &k)) {
      y.AddConst(k);
      if (!y.overflow) {
        const PrimExpr inner = SimplifyFloorDiv(FromLinearForm(y), MakeInt(divisor / d, t), t);
        q.AddForm(ToLinearForm(inner), 1);
        if (!q.overflow) return FromLinearForm(q);
      }
    }
  }
  if (q.terms.empty() && q.constant == 0 && g == 1 && r.constant == la.constant) {
    return tir::FloorDiv(a, b);
  }
  PrimExpr rest = tir::FloorDiv(FromLinearForm(r), MakeInt(divisor, t));
  if (divisor == 1) rest = FromLinearForm(r);
  q.AddTerm(rest, 1);
  if (q.overflow) return tir::FloorDiv(a, b);
  return FromLinearForm(q);
}

PrimExpr Analyzer::Impl::SimplifyFloorMod(const PrimExpr& a, const PrimExpr& b, DataType t) {
  int64_t av = 0, bv = 0;
  if (!IsConstInt(b, &bv)) {
    LinearForm d = ToLinearForm(b);
    d.AddForm(ToLinearForm(a), -1);  // b - a
    if (!d.overflow && d.is_const() && d.constant == 0) return MakeInt(0, t);
    if (!d.overflow && LinearBound(d, true).min_value >= 1 &&
        LinearBound(ToLinearForm(a), true).min_value >= 0) {
      return a;
    }
    return tir::FloorMod(a, b);
  }
  if (IsConstInt(a, &av) && bv != 0) return MakeInt(FloorModInt(av, bv), t);
  if (bv == 1 || bv == -1) return MakeInt(0, t);
  if (bv <= 0) return tir::FloorMod(a, b);
  // floormod(floormod(x, c1), c2) = floormod(x, c2) when c2 divides c1.
  int64_t c1 = 0;
  if (a->kind == ExprKind::kFloorMod && IsConstInt(a->args[1], &c1) && c1 > 0 && c1 % bv == 0) {
    return SimplifyFloorMod(a->args[0], b, t);
  }
  LinearForm la = ToLinearForm(a);
  if (la.overflow) return tir::FloorMod(a, b);
  // Multiples of bv vanish; large coefficients reduce to their residue.
  LinearForm r;
  r.dtype = t;
  bool changed = false;
  for (const Term& term : la.terms) {
    int64_t c = term.coeff;
    if (c % bv == 0) {
      changed = true;
      continue;
    }
    if (c >= bv || c <= -bv) {
      c = FloorModInt(c, bv);
      if (c > bv / 2) c -= bv;
      changed = true;
    }
    r.AddTerm(term.atom, c);
  }
  r.constant = FloorModInt(la.constant, bv);
  changed |= r.constant != la.constant;
  if (r.terms.empty()) return MakeInt(r.constant, t);
  ConstIntBound rb = LinearBound(r, true);
  if (rb.min_value != ConstIntBound::kNegInf && rb.max_value != ConstIntBound::kPosInf &&
      FloorDivInt(rb.min_value, bv) == FloorDivInt(rb.max_value, bv)) {
    int64_t shift = 0;
    if (!__builtin_mul_overflow(FloorDivInt(rb.min_value, bv), -bv, &shift)) {
      r.AddConst(shift);
      if (!r.overflow) return FromLinearForm(r);
    }
  }
  ModularSet m = LinearModular(r);
  if (m.coeff % bv == 0) return MakeInt(FloorModInt(m.base, bv), t);
  // floormod(d * y + z, d * c) = d * floormod(y + k, c) + (z - d * k) where
  // floordiv(z, d) = k.
  {
    int64_t d = 0, k = 0, dk = 0;
    LinearForm y, z;
    if (SplitAtCoefficient(r, bv, &d, &y, &z, &k) && !__builtin_mul_overflow(d, k, &dk)) {
      y.AddConst(k);
      if (!y.overflow) {
        const PrimExpr inner = SimplifyFloorMod(FromLinearForm(y), MakeInt(bv / d, t), t);
        LinearForm out = z;
        out.AddConst(-dk);
        out.AddForm(ToLinearForm(inner), d);
        if (!out.overflow) return FromLinearForm(out);
      }
    }
  }
  if (!changed) return tir::FloorMod(a, b);
  return tir::FloorMod(FromLinearForm(r), b);
}

namespace {

// d < 0 (kLT), d == 0 (kEQ) or d != 0 (kNE) as an expression.
PrimExpr BuildCompare(ExprKind kind, const LinearForm& d) {
  LinearForm p, n;
  p.dtype = n.dtype = d.dtype;
  for (const Term& t : d.terms) {
    if (t.coeff > 0) {
      p.AddTerm(t.atom, t.coeff);
    } else {
      n.AddTerm(t.atom, -t.coeff);
    }
  }
  int64_t c = d.constant;
  if (kind == ExprKind::kLT && p.terms.empty()) {  // -n + c < 0  <=>  n > c
    return tir::GT(FromLinearForm(n), MakeInt(c, d.dtype));
  }
  PrimExpr lhs, rhs;
  if (n.terms.empty()) {  // p + c op 0  <=>  p op -c
    lhs = FromLinearForm(p);
    rhs = MakeInt(-c, d.dtype);
  } else if (c >= 0) {
    p.constant = c;
    lhs = FromLinearForm(p);
    rhs = FromLinearForm(n);
  } else {
    n.constant = -c;
    lhs = FromLinearForm(p);
    rhs = FromLinearForm(n);
  }
  return tir::Binary(kind, lhs, rhs);
}

}  // namespace

PrimExpr Analyzer::Impl::SimplifyCompare(ExprKind op, const PrimExpr& a, const PrimExpr& b) {
  LinearForm d = ToLinearForm(a);
  d.AddForm(ToLinearForm(b), -1);
  PrimExpr t = tir::BoolImm(true), f = tir::BoolImm(false);
  // Normalize to d < 0, d == 0 or d != 0.
  ExprKind kind = op;
  switch (op) {
    case ExprKind::kLT: break;
    case ExprKind::kLE: d.AddConst(-1); kind = ExprKind::kLT; break;
    case ExprKind::kGT: {
      LinearForm n;
      n.dtype = d.dtype;
      n.AddForm(d, -1);
      d = std::move(n);
      kind = ExprKind::kLT;
      break;
    }
    case ExprKind::kGE: {
      LinearForm n;
      n.dtype = d.dtype;
      n.AddForm(d, -1);
      n.AddConst(-1);
      d = std::move(n);
      kind = ExprKind::kLT;
      break;
    }
    default: break;
  }
  // INT64_MIN has no negation: such forms are left as they are.
  bool extreme = d.constant == ConstIntBound::kNegInf;
  for (const Term& term : d.terms) extreme |= term.coeff == ConstIntBound::kNegInf;
  if (d.overflow || (extreme && !d.terms.empty())) return tir::Binary(op, a, b);
  if (d.terms.empty()) {
    switch (kind) {
      case ExprKind::kLT: return d.constant < 0 ? t : f;
      case ExprKind::kEQ: return d.constant == 0 ? t : f;
      default: return d.constant != 0 ? t : f;
    }
  }
  ConstIntBound db = LinearBound(d, true);
  if (kind == ExprKind::kLT) {
    if (db.max_value < 0) return t;
    if (db.min_value >= 0) return f;
  } else {
    bool never_zero = db.min_value > 0 || db.max_value < 0;
    ModularSet m = LinearModular(d);
    never_zero |= m.coeff != 0 && m.base != 0;
    if (db.min_value == 0 && db.max_value == 0) return kind == ExprKind::kEQ ? t : f;
    if (never_zero) return kind == ExprKind::kEQ ? f : t;
  }
  // Divide by the gcd of the coefficients.
  int64_t g = 0;
  for (const Term& term : d.terms) g = Gcd(g, term.coeff);
  if (g > 1) {
    if (kind != ExprKind::kLT && d.constant % g != 0) return kind == ExprKind::kEQ ? f : t;
    for (Term& term : d.terms) term.coeff /= g;
    d.constant = kind == ExprKind::kLT ? FloorDivInt(d.constant, g) : d.constant / g;
  }
  if (kind != ExprKind::kLT) {
    // The leading term (in output order) positive.
    const Term* lead = &d.terms[0];
    for (const Term& term : d.terms) {
      uint64_t x = term.coeff < 0 ? 0 - static_cast<uint64_t>(term.coeff) : static_cast<uint64_t>(term.coeff);
      uint64_t y = lead->coeff < 0 ? 0 - static_cast<uint64_t>(lead->coeff) : static_cast<uint64_t>(lead->coeff);
      if (x > y || (x == y && CompareExpr(term.atom, lead->atom) < 0)) lead = &term;
    }
    if (lead->coeff < 0) {
      for (Term& term : d.terms) term.coeff = -term.coeff;
      d.constant = -d.constant;
    }
  }
  PrimExpr e = BuildCompare(kind, d);
  if (!HasKnownFacts()) return e;
  if (IsKnown(e)) return t;
  // The negation: !(d < 0) is -d - 1 < 0; EQ and NE swap.
  LinearForm nd;
  nd.dtype = d.dtype;
  PrimExpr neg;
  if (kind == ExprKind::kLT) {
    nd.AddForm(d, -1);
    nd.AddConst(-1);
    if (!nd.overflow) neg = BuildCompare(ExprKind::kLT, nd);
  } else {
    neg = BuildCompare(kind == ExprKind::kEQ ? ExprKind::kNE : ExprKind::kEQ, d);
  }
  if (neg && IsKnown(neg)) return f;
  return e;
}

}  // namespace kiln::arith
