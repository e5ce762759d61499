// File: lowering/arith/analyzer.cc — facts, constraint scopes and proofs.
#include "lowering/arith/analyzer.h"

#include <algorithm>

#include "ir/tir_functor.h"
#include "lowering/arith/analyzer_impl.h"

namespace kiln::arith {

using tir::IsConstInt;

// ---- Facts --------------------------------------------------------------------------

const VarFacts* Analyzer::Impl::Facts(const ExprNode* v) const {
  auto it = vars_.find(v);
  return it == vars_.end() ? nullptr : &it->second;
}

void Analyzer::Impl::Save(const ExprNode* v) {
  Undo u;
  u.var = v;
  auto it = vars_.find(v);
  u.existed = it != vars_.end();
  if (u.existed) u.old = it->second;
  undo_.push_back(std::move(u));
}

void Analyzer::Impl::ExitScope(size_t mark) {
  while (undo_.size() > mark) {
    Undo u = std::move(undo_.back());
    undo_.pop_back();
    if (u.var == nullptr) {
      known_.pop_back();
    } else if (u.existed) {
      vars_[u.var] = std::move(u.old);
    } else {
      vars_.erase(u.var);
    }
  }
}

void Analyzer::Impl::BindRange(const Var& v, const Range& r) {
  if (!v || !r.min || !r.extent) return;
  PrimExpr min = Simplify(r.min);
  PrimExpr extent = Simplify(r.extent);
  ConstIntBound mb = Bound(min);
  ConstIntBound eb = Bound(extent);
  VarFacts f;
  f.bound = Intersect(ConstIntBound{mb.min_value, BoundAdd(BoundAdd(mb.max_value, eb.max_value), -1)},
                      TypeBound(v->dtype));
  bool const_range = IsConstInt(min) && IsConstInt(extent);
  if (!const_range && IsIndexLike(v->dtype)) {
    if (!IsConstInt(min)) f.lower.push_back(min);
    f.upper.push_back(Simplify(tir::Sub(tir::Add(min, extent), MakeInt(1, v->dtype))));
  }
  vars_[v.get()] = std::move(f);
}

void Analyzer::Impl::BindValue(const Var& v, const PrimExpr& value) {
  if (!v || !value) return;
  VarFacts f;
  f.value = Simplify(value);
  f.bound = Intersect(Bound(f.value), TypeBound(v->dtype));
  vars_[v.get()] = std::move(f);
}

void Analyzer::Impl::PushLet(const Var& v, const PrimExpr& value) {
  Save(v.get());
  VarFacts f;
  f.value = value;
  f.bound = Intersect(Bound(value), TypeBound(v->dtype));
  vars_[v.get()] = std::move(f);
}

bool Analyzer::Impl::IsKnown(const PrimExpr& cond) const {
  for (const PrimExpr& k : known_) {
    if (tir::ExprDeepEqual(k, cond)) return true;
  }
  return false;
}

void Analyzer::Impl::AddConstraint(const PrimExpr& cond) {
  if (!cond || cond->dtype.lanes() != 1) return;
  AddFact(Simplify(cond));
}

void Analyzer::Impl::AddFact(const PrimExpr& simplified) {
  if (!simplified || simplified->dtype.lanes() != 1) return;
  PrimExpr c = simplified;
  if (c->kind == ExprKind::kCall && c->name == "likely" && c->args.size() == 1) c = c->args[0];
  // Conjunctions: each part is a fact (iteratively, so long chains do not recurse).
  std::vector<PrimExpr> work = {c};
  while (!work.empty()) {
    PrimExpr p = std::move(work.back());
    work.pop_back();
    if (p->kind == ExprKind::kAnd) {
      work.push_back(p->args[1]);
      work.push_back(p->args[0]);
      continue;
    }
    if (p->kind == ExprKind::kIntImm) continue;  // true: nothing; false: unreachable code
    undo_.push_back(Undo{});
    known_.push_back(p);
    AddComparisonFact(p);
  }
}

namespace {

// The values of x allowed by k * x + rest <= 0 given rest's bounds:
// x <= floor(-rest / k) for k > 0, x >= ceil(rest / -k) for k < 0; rest is at
// least rest.min, which gives the weakest (always valid) bound.
ConstIntBound SolveFor(int64_t k, ConstIntBound rest) {
  ConstIntBound r = Everything();
  if (rest.min_value == ConstIntBound::kNegInf) return r;
  if (k > 0) {
    r.max_value = BoundDiv(BoundNeg(rest.min_value), k, true);
  } else {
    r.min_value = BoundNeg(BoundDiv(BoundNeg(rest.min_value), -k, true));
  }
  return r;
}

}  // namespace

// Facts from `d <= 0` (d linear) for each variable term of d.
void Analyzer::Impl::AddComparisonFact(const PrimExpr& cmp) {
  ExprKind k = cmp->kind;
  if (k < ExprKind::kEQ || k > ExprKind::kGE) return;
  const PrimExpr& a = cmp->args[0];
  const PrimExpr& b = cmp->args[1];
  if (!IsIndexLike(a->dtype) || a->dtype.lanes() != 1) return;
  LinearForm d = ToLinearForm(a);
  d.AddForm(ToLinearForm(b), -1);
  if (d.overflow) return;
  if (k == ExprKind::kNE) {
    // x != c at the edge of x's range narrows it.
    if (d.terms.size() != 1 || d.terms[0].atom->kind != ExprKind::kVar) return;
    int64_t coeff = d.terms[0].coeff;
    if (coeff != 1 && coeff != -1) return;
    if (d.constant == ConstIntBound::kNegInf) return;
    int64_t c = coeff == 1 ? -d.constant : d.constant;
    const ExprNode* x = d.terms[0].atom.get();
    ConstIntBound xb = Bound(d.terms[0].atom);
    if (xb.min_value != c && xb.max_value != c) return;
    Save(x);
    VarFacts& f = vars_[x];
    f.bound = xb;
    if (xb.min_value == c) f.bound.min_value = BoundAdd(c, 1);
    if (xb.max_value == c) f.bound.max_value = BoundAdd(c, -1);
    return;
  }
  std::vector<LinearForm> le;  // each means form <= 0
  auto add_le = [&](LinearForm f, int64_t shift) {
    f.AddConst(shift);
    if (!f.overflow) le.push_back(std::move(f));
  };
  LinearForm neg;
  neg.dtype = d.dtype;
  neg.AddForm(d, -1);
  switch (k) {
    case ExprKind::kLT: add_le(d, 1); break;
    case ExprKind::kLE: add_le(d, 0); break;
    case ExprKind::kGT: add_le(neg, 1); break;
    case ExprKind::kGE: add_le(neg, 0); break;
    default:  // EQ
      add_le(d, 0);
      add_le(neg, 0);
      break;
  }
  for (const LinearForm& f : le) {
    for (size_t i = 0; i < f.terms.size(); ++i) {
      const Term& t = f.terms[i];
      if (t.atom->kind != ExprKind::kVar) continue;
      LinearForm rest = f;
      rest.terms.erase(rest.terms.begin() + static_cast<std::ptrdiff_t>(i));
      ConstIntBound solved = SolveFor(t.coeff, LinearBound(rest, /*symbolic=*/false));
      const ExprNode* x = t.atom.get();
      Save(x);
      VarFacts& vf = vars_[x];
      vf.bound = Intersect(vf.bound, solved);
      if (t.coeff == 1) {  // x + rest <= 0  =>  x <= -rest
        LinearForm up;
        up.dtype = f.dtype;
        up.AddForm(rest, -1);
        if (!up.overflow) vf.upper.push_back(FromLinearForm(up));
      } else if (t.coeff == -1) {  // -x + rest <= 0  =>  x >= rest
        vf.lower.push_back(FromLinearForm(rest));
      }
    }
  }
}

// ---- Bounds of linear forms -------------------------------------------------------------

ConstIntBound Analyzer::Impl::LinearBound(const LinearForm& f, bool symbolic) {
  ConstIntBound r = Point(f.constant);
  for (const Term& t : f.terms) {
    ConstIntBound b = Bound(t.atom);
    int64_t x = BoundMul(b.min_value, t.coeff);
    int64_t y = BoundMul(b.max_value, t.coeff);
    r.min_value = BoundAdd(r.min_value, std::min(x, y));
    r.max_value = BoundAdd(r.max_value, std::max(x, y));
  }
  if (!symbolic || r.min_value == r.max_value) return r;
  bool any = false;
  for (const Term& t : f.terms) {
    const VarFacts* vf = t.atom->kind == ExprKind::kVar ? Facts(t.atom.get()) : nullptr;
    if (vf && (vf->value || !vf->lower.empty() || !vf->upper.empty())) any = true;
    if (t.atom->kind == ExprKind::kMin || t.atom->kind == ExprKind::kMax) any = true;
  }
  if (!any) return r;
  symbolic_budget_ = 64;
  r.max_value = std::min(r.max_value, SymbolicExtreme(f, /*upper=*/true, 3));
  symbolic_budget_ = 64;
  r.min_value = std::max(r.min_value, SymbolicExtreme(f, /*upper=*/false, 3));
  return r;
}

// The best constant upper (or lower) bound of f found by replacing variables
// by their symbolic bounds (x <= e for a positive coefficient when bounding
// above, ...) or let values, up to `depth` substitutions deep.
int64_t Analyzer::Impl::SymbolicExtreme(const LinearForm& f, bool upper, int depth) {
  ConstIntBound c = LinearBound(f, /*symbolic=*/false);
  int64_t best = upper ? c.max_value : c.min_value;
  if (depth == 0) return best;
  for (size_t i = 0; i < f.terms.size(); ++i) {
    const Term& t = f.terms[i];
    // Bounding this term above means bounding its atom above when the
    // coefficient is positive, below when it is negative.
    const bool atom_upper = (t.coeff > 0) == upper;
    std::vector<PrimExpr> cands;
    if (t.atom->kind == ExprKind::kMin || t.atom->kind == ExprKind::kMax) {
      // min(p, q) <= p, q and max(p, q) >= p, q.
      if ((t.atom->kind == ExprKind::kMin) == atom_upper) cands = t.atom->args;
    }
    const VarFacts* vf = t.atom->kind == ExprKind::kVar ? Facts(t.atom.get()) : nullptr;
    if (vf != nullptr && vf->value) {
      cands.push_back(vf->value);
    } else if (vf != nullptr) {
      const std::vector<PrimExpr>& src = atom_upper ? vf->upper : vf->lower;
      for (size_t k = src.size(); k > 0 && cands.size() < 4; --k) cands.push_back(src[k - 1]);
    }
    for (const PrimExpr& cand : cands) {
      if (symbolic_budget_-- <= 0) return best;
      if (!IsIndexLike(cand->dtype) || cand->dtype.lanes() != 1) continue;
      LinearForm g = f;
      g.terms.erase(g.terms.begin() + static_cast<std::ptrdiff_t>(i));
      g.AddForm(ToLinearForm(cand), t.coeff);
      if (g.overflow) continue;
      int64_t v = SymbolicExtreme(g, upper, depth - 1);
      best = upper ? std::min(best, v) : std::max(best, v);
    }
  }
  return best;
}

// ---- Proofs ------------------------------------------------------------------------------

bool Analyzer::Impl::CanProve(const PrimExpr& cond) {
  if (!cond) return false;
  PrimExpr c = Simplify(cond);
  std::vector<PrimExpr> work = {c};
  // All of `work` must hold.
  while (!work.empty()) {
    PrimExpr p = std::move(work.back());
    work.pop_back();
    if (p->kind == ExprKind::kCall && p->name == "likely" && p->args.size() == 1) {
      work.push_back(p->args[0]);
      continue;
    }
    int64_t v = 0;
    if (IsConstInt(p, &v)) {
      if (v == 0) return false;
      continue;
    }
    if (p->kind == ExprKind::kBroadcast) {
      work.push_back(p->args[0]);
      continue;
    }
    if (p->kind == ExprKind::kAnd) {
      work.push_back(p->args[0]);
      work.push_back(p->args[1]);
      continue;
    }
    if (IsKnown(p)) continue;
    if (p->kind == ExprKind::kOr && (CanProve(p->args[0]) || CanProve(p->args[1]))) continue;
    return false;
  }
  return true;
}

// ---- Analyzer ------------------------------------------------------------------------------

Analyzer::Analyzer() : impl_(std::make_unique<Impl>()) {}
Analyzer::~Analyzer() = default;

void Analyzer::Bind(const Var& v, const Range& r) { impl_->BindRange(v, r); }
void Analyzer::Bind(const Var& v, const PrimExpr& value) { impl_->BindValue(v, value); }

ConstIntBound Analyzer::GetConstIntBound(const PrimExpr& e) {
  if (e && IsIndexLike(e->dtype) && e->dtype.lanes() == 1) {
    // Through the simplifier: symbolic facts and cancellation (x - x) help.
    PrimExpr s = impl_->Simplify(e);
    LinearForm f = ToLinearForm(s);
    if (!f.overflow) return Intersect(impl_->LinearBound(f, true), impl_->Bound(s));
    return impl_->Bound(s);
  }
  return impl_->Bound(e);
}

ModularSet Analyzer::GetModularSet(const PrimExpr& e) { return impl_->Modular(e); }
PrimExpr Analyzer::Simplify(const PrimExpr& e) { return impl_->Simplify(e); }
bool Analyzer::CanProve(const PrimExpr& cond) { return impl_->CanProve(cond); }

bool Analyzer::CanProveGE(const PrimExpr& e, int64_t v) {
  return e && e->dtype.is_integral() && GetConstIntBound(e).min_value >= v;
}

bool Analyzer::CanProveLT(const PrimExpr& e, int64_t v) {
  return e && e->dtype.is_integral() && GetConstIntBound(e).max_value < v;
}

bool Analyzer::CanProveEqual(const PrimExpr& a, const PrimExpr& b) {
  if (!a || !b) return false;
  if (a->dtype.is_integral() && a->dtype == b->dtype) {
    if (IsIndexLike(a->dtype) && a->dtype.lanes() == 1) {
      PrimExpr d = impl_->Simplify(tir::Sub(a, b));
      return IsConstInt(d) && d->int_value == 0;
    }
    return tir::ExprDeepEqual(impl_->Simplify(a), impl_->Simplify(b));
  }
  return false;
}

Analyzer::ConstraintScope::ConstraintScope(ConstraintScope&& o) noexcept : a_(o.a_), mark_(o.mark_) {
  o.a_ = nullptr;
}

Analyzer::ConstraintScope::~ConstraintScope() {
  if (a_ != nullptr) a_->impl_->ExitScope(mark_);
}

Analyzer::ConstraintScope Analyzer::EnterConstraint(const PrimExpr& cond) {
  size_t mark = impl_->Mark();
  impl_->AddConstraint(cond);
  return ConstraintScope(this, mark);
}

}  // namespace kiln::arith
