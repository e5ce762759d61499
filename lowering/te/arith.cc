// File: lowering/te/arith.cc — index simplifier and interval sets.
#include "lowering/te/arith.h"

#include <algorithm>
#include <utility>

#include "ir/tir_functor.h"

namespace kiln::te::arith {
namespace {

using tir::ExprKind;
using tir::ExprNode;

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

struct Term {
  PrimExpr atom;
  int64_t coeff = 0;
};

// sum(coeff * atom) + constant.
struct Linear {
  std::vector<Term> terms;
  int64_t constant = 0;

  bool IsConst() const {
    for (const Term& t : terms) {
      if (t.coeff != 0) return false;
    }
    return true;
  }
  void Add(const PrimExpr& atom, int64_t c) {
    if (c == 0) return;
    for (Term& t : terms) {
      if (tir::ExprDeepEqual(t.atom, atom)) {
        t.coeff += c;
        return;
      }
    }
    terms.push_back({atom, c});
  }
  void Merge(const Linear& o, int64_t scale) {
    for (const Term& t : o.terms) Add(t.atom, t.coeff * scale);
    constant += o.constant * scale;
  }
  void Scale(int64_t s) {
    for (Term& t : terms) t.coeff *= s;
    constant *= s;
  }
};

// The constant bounds of a linear form whose every atom is a floormod by a
// positive constant (floormod(x, m) lies in [0, m - 1] whatever x is); false
// when some atom is unbounded or the bounds would overflow.
bool ModAtomBounds(const Linear& l, int64_t* lo, int64_t* hi) {
  int64_t a = l.constant, b = l.constant;
  for (const Term& t : l.terms) {
    if (t.coeff == 0) continue;
    const PrimExpr& atom = t.atom;
    if (atom->kind != ExprKind::kFloorMod || atom->args[1]->kind != ExprKind::kIntImm ||
        atom->args[1]->int_value <= 0) {
      return false;
    }
    int64_t span = 0;
    if (__builtin_mul_overflow(t.coeff, atom->args[1]->int_value - 1, &span)) return false;
    int64_t& end = span > 0 ? b : a;
    if (__builtin_add_overflow(end, span, &end)) return false;
  }
  *lo = a;
  *hi = b;
  return true;
}

class Canonicalizer {
 public:
  explicit Canonicalizer(DataType t) : dtype_(t) {}

  Linear Lin(const PrimExpr& e) {
    Linear out;
    switch (e->kind) {
      case ExprKind::kIntImm:
        out.constant = e->int_value;
        return out;
      case ExprKind::kAdd:
      case ExprKind::kSub: {
        Linear a = Lin(e->args[0]);
        Linear b = Lin(e->args[1]);
        a.Merge(b, e->kind == ExprKind::kAdd ? 1 : -1);
        return a;
      }
      case ExprKind::kMul: {
        Linear a = Lin(e->args[0]);
        Linear b = Lin(e->args[1]);
        if (a.IsConst()) {
          b.Scale(a.constant);
          return b;
        }
        if (b.IsConst()) {
          a.Scale(b.constant);
          return a;
        }
        out.Add(tir::Mul(Build(a), Build(b)), 1);
        return out;
      }
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: {
        Linear a = Lin(e->args[0]);
        Linear b = Lin(e->args[1]);
        if (!b.IsConst() || b.constant <= 0) {
          out.Add(tir::Binary(e->kind, Build(a), Build(b)), 1);
          return out;
        }
        const int64_t c = b.constant;
        // a = c * S + R, with S the terms whose coefficients c divides.
        Linear s, r;
        for (const Term& t : a.terms) {
          if (t.coeff == 0) continue;
          if (t.coeff % c == 0) {
            s.Add(t.atom, t.coeff / c);
          } else {
            r.Add(t.atom, t.coeff);
          }
        }
        // R + (k mod c) within one multiple of c, q * c <= R + k' < (q + 1) * c
        // (floormod(tile, 40) * 5 + 4 by 200: q = 0): the quotient is q and
        // the remainder R + k' - q * c. A 1 x W map's pixel, tiled by MR and
        // rebuilt as floordiv(p, W) * W + floormod(p, W), needs it to bound
        // its rows (InferBound).
        int64_t lo = 0, hi = 0;
        Linear rk = r;
        rk.constant = FloorModInt(a.constant, c);
        if (!r.IsConst() && ModAtomBounds(rk, &lo, &hi) &&
            FloorDivInt(lo, c) == FloorDivInt(hi, c)) {
          const int64_t q = FloorDivInt(lo, c);
          if (e->kind == ExprKind::kFloorDiv) {
            s.constant += FloorDivInt(a.constant, c) + q;
            return s;
          }
          rk.constant -= q * c;
          return rk;
        }
        if (e->kind == ExprKind::kFloorDiv) {
          // floor((c*S + R + k) / c) = S + floor((R + k) / c)
          if (r.IsConst()) {
            s.constant += FloorDivInt(a.constant, c);
            return s;
          }
          // floor((R + k) / c) = floor(k / c) + floor((R + k mod c) / c)
          s.constant += FloorDivInt(a.constant, c);
          r.constant = FloorModInt(a.constant, c);
          s.Add(tir::FloorDiv(Build(r), tir::IntImm(c, dtype_)), 1);
          return s;
        }
        // floormod(c*S + R + k, c) = floormod(R + (k mod c), c)
        if (r.IsConst()) {
          out.constant = FloorModInt(a.constant, c);
          return out;
        }
        r.constant = FloorModInt(a.constant, c);
        out.Add(tir::FloorMod(Build(r), tir::IntImm(c, dtype_)), 1);
        return out;
      }
      case ExprKind::kDiv:
      case ExprKind::kMod: {
        Linear a = Lin(e->args[0]);
        Linear b = Lin(e->args[1]);
        if (a.IsConst() && b.IsConst() && b.constant != 0) {
          out.constant = e->kind == ExprKind::kDiv ? a.constant / b.constant
                                                   : a.constant % b.constant;
          return out;
        }
        if (b.IsConst() && b.constant == 1) {
          if (e->kind == ExprKind::kDiv) return a;
          return out;  // x % 1 == 0
        }
        out.Add(tir::Binary(e->kind, Build(a), Build(b)), 1);
        return out;
      }
      case ExprKind::kMin:
      case ExprKind::kMax: {
        Linear a = Lin(e->args[0]);
        Linear b = Lin(e->args[1]);
        Linear d = a;
        d.Merge(b, -1);
        if (d.IsConst()) {
          const bool a_smaller = d.constant <= 0;
          if (e->kind == ExprKind::kMin) return a_smaller ? a : b;
          return a_smaller ? b : a;
        }
        out.Add(tir::Binary(e->kind, Build(a), Build(b)), 1);
        return out;
      }
      case ExprKind::kCast: {
        const PrimExpr& v = e->args[0];
        if (v->dtype.is_int() && e->dtype.is_int() && e->dtype.lanes() == 1) {
          Linear inner = Canonicalizer(v->dtype).Lin(v);
          if (inner.IsConst()) {
            out.constant = inner.constant;
            return out;
          }
          out.Add(tir::Cast(e->dtype, Canonicalizer(v->dtype).Build(inner)), 1);
          return out;
        }
        out.Add(e, 1);
        return out;
      }
      default:
        out.Add(e, 1);
        return out;
    }
  }

  PrimExpr Build(const Linear& f) {
    PrimExpr acc;
    // Positive terms first (so "n - i" rather than "i * -1 + n"), stable.
    for (int pass = 0; pass < 2; ++pass) {
      for (const Term& t : f.terms) {
        if (t.coeff == 0 || (pass == 0) != (t.coeff > 0)) continue;
        const int64_t mag = t.coeff > 0 ? t.coeff : -t.coeff;
        PrimExpr term = mag == 1 ? t.atom : tir::Mul(t.atom, tir::IntImm(mag, dtype_));
        if (!acc) {
          acc = t.coeff > 0 ? term : tir::Mul(t.atom, tir::IntImm(t.coeff, dtype_));
        } else {
          acc = t.coeff > 0 ? tir::Add(acc, term) : tir::Sub(acc, term);
        }
      }
    }
    if (!acc) return tir::IntImm(f.constant, dtype_);
    if (f.constant > 0) return tir::Add(acc, tir::IntImm(f.constant, dtype_));
    if (f.constant < 0) return tir::Sub(acc, tir::IntImm(-f.constant, dtype_));
    return acc;
  }

 private:
  DataType dtype_;
};

PrimExpr Min2(const PrimExpr& a, const PrimExpr& b) { return MinExpr(a, b); }
PrimExpr Max2(const PrimExpr& a, const PrimExpr& b) { return MaxExpr(a, b); }

bool IsConst(const PrimExpr& e, int64_t* v) { return tir::IsConstInt(e, v); }

class SetEvaluator {
 public:
  explicit SetEvaluator(const VarSetMap& dom) : dom_(dom) {}

  IntSet Eval(const PrimExpr& e) {
    if (!e) return IntSet::Everything();
    switch (e->kind) {
      case ExprKind::kIntImm:
        return IntSet::Point(e);
      case ExprKind::kVar: {
        auto it = dom_.find(e.get());
        if (it != dom_.end()) return it->second;
        auto lt = lets_.find(e.get());
        if (lt != lets_.end()) return lt->second;
        return IntSet::Point(e);
      }
      case ExprKind::kAdd:
      case ExprKind::kSub: {
        IntSet a = Eval(e->args[0]);
        IntSet b = Eval(e->args[1]);
        const bool add = e->kind == ExprKind::kAdd;
        if (a.IsPoint() && b.IsPoint()) {
          return IntSet::Point(Simplify(add ? tir::Add(a.min_value, b.min_value)
                                            : tir::Sub(a.min_value, b.min_value)));
        }
        IntSet r;
        if (add) {
          if (a.HasLowerBound() && b.HasLowerBound())
            r.min_value = Simplify(tir::Add(a.min_value, b.min_value));
          if (a.HasUpperBound() && b.HasUpperBound())
            r.max_value = Simplify(tir::Add(a.max_value, b.max_value));
        } else {
          if (a.HasLowerBound() && b.HasUpperBound())
            r.min_value = Simplify(tir::Sub(a.min_value, b.max_value));
          if (a.HasUpperBound() && b.HasLowerBound())
            r.max_value = Simplify(tir::Sub(a.max_value, b.min_value));
        }
        return r;
      }
      case ExprKind::kMul: {
        IntSet a = Eval(e->args[0]);
        IntSet b = Eval(e->args[1]);
        if (a.IsPoint() && b.IsPoint()) {
          return IntSet::Point(Simplify(tir::Mul(a.min_value, b.min_value)));
        }
        int64_t c = 0;
        if (b.IsPoint() && IsConst(Simplify(b.min_value), &c)) return Scale(a, c);
        if (a.IsPoint() && IsConst(Simplify(a.min_value), &c)) return Scale(b, c);
        int64_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
        if (a.HasLowerBound() && a.HasUpperBound() && b.HasLowerBound() && b.HasUpperBound() &&
            IsConst(a.min_value, &a0) && IsConst(a.max_value, &a1) &&
            IsConst(b.min_value, &b0) && IsConst(b.max_value, &b1)) {
          const int64_t p[4] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
          return IntSet::Interval(tir::IntImm(*std::min_element(p, p + 4), e->dtype),
                                  tir::IntImm(*std::max_element(p, p + 4), e->dtype));
        }
        return IntSet::Everything();
      }
      case ExprKind::kFloorDiv:
      case ExprKind::kDiv: {
        IntSet a = Eval(e->args[0]);
        IntSet b = Eval(e->args[1]);
        if (a.IsPoint() && b.IsPoint()) {
          return IntSet::Point(Simplify(tir::Binary(e->kind, a.min_value, b.min_value)));
        }
        int64_t c = 0;
        if (!b.IsPoint() || !IsConst(Simplify(b.min_value), &c) || c == 0) {
          return IntSet::Everything();
        }
        // Both floor and truncating division are monotonic in the numerator.
        PrimExpr cc = tir::IntImm(c, e->dtype);
        auto div = [&](const PrimExpr& x) {
          return x ? Simplify(tir::Binary(e->kind, x, cc)) : PrimExpr();
        };
        if (c > 0) return IntSet::Interval(div(a.min_value), div(a.max_value));
        return IntSet::Interval(div(a.max_value), div(a.min_value));
      }
      case ExprKind::kFloorMod:
      case ExprKind::kMod: {
        IntSet a = Eval(e->args[0]);
        IntSet b = Eval(e->args[1]);
        if (a.IsPoint() && b.IsPoint()) {
          return IntSet::Point(Simplify(tir::Binary(e->kind, a.min_value, b.min_value)));
        }
        int64_t c = 0;
        if (!b.IsPoint() || !IsConst(Simplify(b.min_value), &c) || c <= 0) {
          return IntSet::Everything();
        }
        PrimExpr cc = tir::IntImm(c, e->dtype);
        bool nonneg = e->kind == ExprKind::kFloorMod;
        int64_t lo = 0;
        if (!nonneg && a.HasLowerBound() && IsConst(a.min_value, &lo) && lo >= 0) nonneg = true;
        if (nonneg && a.HasLowerBound() && a.HasUpperBound()) {
          PrimExpr q0 = Simplify(tir::FloorDiv(a.min_value, cc));
          PrimExpr q1 = Simplify(tir::FloorDiv(a.max_value, cc));
          if (tir::ExprDeepEqual(q0, q1)) {
            return IntSet::Interval(Simplify(tir::FloorMod(a.min_value, cc)),
                                    Simplify(tir::FloorMod(a.max_value, cc)));
          }
        }
        if (nonneg) return IntSet::Interval(tir::IntImm(0, e->dtype), tir::IntImm(c - 1, e->dtype));
        return IntSet::Interval(tir::IntImm(-(c - 1), e->dtype), tir::IntImm(c - 1, e->dtype));
      }
      case ExprKind::kMin:
      case ExprKind::kMax: {
        IntSet a = Eval(e->args[0]);
        IntSet b = Eval(e->args[1]);
        IntSet r;
        if (e->kind == ExprKind::kMin) {
          if (a.HasLowerBound() && b.HasLowerBound()) r.min_value = Min2(a.min_value, b.min_value);
          if (a.HasUpperBound() || b.HasUpperBound()) {
            r.max_value = !a.HasUpperBound()   ? b.max_value
                          : !b.HasUpperBound() ? a.max_value
                                               : Min2(a.max_value, b.max_value);
          }
        } else {
          if (a.HasUpperBound() && b.HasUpperBound()) r.max_value = Max2(a.max_value, b.max_value);
          if (a.HasLowerBound() || b.HasLowerBound()) {
            r.min_value = !a.HasLowerBound()   ? b.min_value
                          : !b.HasLowerBound() ? a.min_value
                                               : Max2(a.min_value, b.min_value);
          }
        }
        return r;
      }
      case ExprKind::kSelect:
        return Union({Eval(e->args[1]), Eval(e->args[2])});
      case ExprKind::kCall:
        if (e->name == "if_then_else" && e->args.size() == 3) {
          return Union({Eval(e->args[1]), Eval(e->args[2])});
        }
        return Opaque(e);
      case ExprKind::kCast: {
        const PrimExpr& v = e->args[0];
        if (!(v->dtype.is_int() && e->dtype.is_int())) return Opaque(e);
        IntSet a = Eval(v);
        if (a.IsPoint()) return IntSet::Point(Simplify(tir::Cast(e->dtype, a.min_value)));
        if (e->dtype.bits() < v->dtype.bits()) return IntSet::Everything();  // may wrap
        IntSet r;
        if (a.HasLowerBound()) r.min_value = Simplify(tir::Cast(e->dtype, a.min_value));
        if (a.HasUpperBound()) r.max_value = Simplify(tir::Cast(e->dtype, a.max_value));
        return r;
      }
      case ExprKind::kLet: {
        IntSet v = Eval(e->args[1]);
        lets_[e->args[0].get()] = v;
        IntSet r = Eval(e->args[2]);
        lets_.erase(e->args[0].get());
        return r;
      }
      default:
        return Opaque(e);
    }
  }

 private:
  IntSet Opaque(const PrimExpr& e) {
    const bool free = !tir::UsesVar(e, [&](const ExprNode* v) {
      return dom_.count(v) != 0 || lets_.count(v) != 0;
    });
    return free ? IntSet::Point(e) : IntSet::Everything();
  }

  static IntSet Scale(const IntSet& a, int64_t c) {
    if (c == 0) return IntSet::Point(tir::IntImm(0));
    auto mul = [&](const PrimExpr& x) -> PrimExpr {
      return x ? Simplify(tir::Mul(x, tir::IntImm(c, x->dtype))) : PrimExpr();
    };
    if (c > 0) return IntSet::Interval(mul(a.min_value), mul(a.max_value));
    return IntSet::Interval(mul(a.max_value), mul(a.min_value));
  }

  const VarSetMap& dom_;
  VarSetMap lets_;
};

}  // namespace

// k * c * floordiv(r, c) + k * floormod(r, c) = k * r (r = c * floordiv(r, c)
// + floormod(r, c) for c > 0): the pixel index h * W + w of a loop fused
// from (h, w) and split again, once h = floordiv(p, W) and w = floormod(p, W)
// are substituted, is p. Repeats until no pair is left.
void MergeDivMod(Canonicalizer& c, Linear* f) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < f->terms.size() && !changed; ++i) {
      const Term& m = f->terms[i];
      if (m.coeff == 0 || m.atom->kind != ExprKind::kFloorMod) continue;
      int64_t cst = 0;
      if (!tir::IsConstInt(m.atom->args[1], &cst) || cst <= 0) continue;
      for (size_t j = 0; j < f->terms.size(); ++j) {
        const Term& d = f->terms[j];
        if (j == i || d.atom->kind != ExprKind::kFloorDiv || d.coeff != m.coeff * cst ||
            !tir::ExprDeepEqual(d.atom->args[0], m.atom->args[0]) ||
            !tir::ExprDeepEqual(d.atom->args[1], m.atom->args[1])) {
          continue;
        }
        const int64_t k = m.coeff;
        const Linear r = c.Lin(m.atom->args[0]);
        f->terms[i].coeff = 0;
        f->terms[j].coeff = 0;
        f->Merge(r, k);
        changed = true;
        break;
      }
    }
  }
}

PrimExpr Simplify(const PrimExpr& e) {
  if (!e || !e->dtype.is_int() || e->dtype.lanes() != 1) return e;
  Canonicalizer c(e->dtype);
  Linear f = c.Lin(e);
  MergeDivMod(c, &f);
  return c.Build(f);
}

bool ConstDiff(const PrimExpr& a, const PrimExpr& b, int64_t* diff) {
  if (!a || !b) return false;
  PrimExpr d = Simplify(tir::Sub(a, b));
  return tir::IsConstInt(d, diff);
}

bool ProveLT(const PrimExpr& a, const PrimExpr& b) {
  int64_t d = 0;
  return ConstDiff(b, a, &d) && d > 0;
}

bool ProveLE(const PrimExpr& a, const PrimExpr& b) {
  int64_t d = 0;
  return ConstDiff(b, a, &d) && d >= 0;
}

bool ProveEqual(const PrimExpr& a, const PrimExpr& b) {
  int64_t d = 0;
  return ConstDiff(a, b, &d) && d == 0;
}

PrimExpr CeilDiv(const PrimExpr& a, const PrimExpr& b) {
  PrimExpr rem = Simplify(tir::FloorMod(a, b));
  if (tir::IsConstValue(rem, 0)) return Simplify(tir::FloorDiv(a, b));
  return Simplify(tir::FloorDiv(tir::Sub(tir::Add(a, b), tir::IntImm(1, a->dtype)), b));
}

PrimExpr MinExpr(const PrimExpr& a, const PrimExpr& b) {
  return Simplify(tir::Min(a, b));
}

PrimExpr MaxExpr(const PrimExpr& a, const PrimExpr& b) {
  return Simplify(tir::Max(a, b));
}

IntSet IntSet::FromRange(const Range& r) {
  return IntSet::Interval(r.min, Simplify(tir::Sub(tir::Add(r.min, r.extent),
                                                   tir::IntImm(1, r.min->dtype))));
}

bool IntSet::IsPoint() const {
  if (!HasLowerBound() || !HasUpperBound()) return false;
  return min_value == max_value || tir::ExprDeepEqual(min_value, max_value) ||
         ProveEqual(min_value, max_value);
}

bool IntSet::MatchRange(const Range& r) const {
  if (!HasLowerBound() || !HasUpperBound() || !r.defined()) return false;
  return ProveEqual(min_value, r.min) &&
         ProveEqual(max_value, tir::Sub(tir::Add(r.min, r.extent), tir::IntImm(1, r.min->dtype)));
}

Range IntSet::CoverRange(const Range& dom) const {
  if (!HasLowerBound() || !HasUpperBound()) return dom;
  PrimExpr extent = Simplify(tir::Sub(tir::Add(max_value, tir::IntImm(1, max_value->dtype)),
                                      min_value));
  return Range{Simplify(min_value), extent};
}

IntSet EvalSet(const PrimExpr& e, const VarSetMap& dom) {
  if (!tir::UsesVar(e, [&](const tir::ExprNode* v) { return dom.count(v) != 0; })) {
    return IntSet::Point(e);
  }
  SetEvaluator ev(dom);
  return ev.Eval(e);
}

IntSet EvalSetRelaxed(const PrimExpr& e, const VarSetMap& dom, int rounds) {
  IntSet s = EvalSet(e, dom);
  auto uses = [&](const PrimExpr& x) {
    return x && tir::UsesVar(x, [&](const tir::ExprNode* v) { return dom.count(v) != 0; });
  };
  for (int i = 0; i < rounds; ++i) {
    const bool lo = uses(s.min_value);
    const bool hi = uses(s.max_value);
    if (!lo && !hi) break;
    if (lo) s.min_value = EvalSet(s.min_value, dom).min_value;
    if (hi) s.max_value = EvalSet(s.max_value, dom).max_value;
  }
  return s;
}

IntSet Union(const std::vector<IntSet>& sets) {
  if (sets.empty()) return IntSet::Everything();
  IntSet r = sets[0];
  for (size_t i = 1; i < sets.size(); ++i) {
    const IntSet& s = sets[i];
    r.min_value = (r.HasLowerBound() && s.HasLowerBound()) ? MinExpr(r.min_value, s.min_value)
                                                           : PrimExpr();
    r.max_value = (r.HasUpperBound() && s.HasUpperBound()) ? MaxExpr(r.max_value, s.max_value)
                                                           : PrimExpr();
  }
  return r;
}

}  // namespace kiln::te::arith
