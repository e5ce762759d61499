// File: lowering/arith/linear_form.cc — the canonical form of index
// arithmetic: sum(coeff * atom) + constant (TVM's SumExpr, without splits).
#include <algorithm>
#include <cstdlib>

#include "ir/tir_functor.h"
#include "lowering/arith/analyzer_impl.h"

namespace kiln::arith {

void LinearForm::AddTerm(const PrimExpr& atom, int64_t coeff) {
  if (coeff == 0) return;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!tir::ExprDeepEqual(terms[i].atom, atom)) continue;
    int64_t c = 0;
    if (__builtin_add_overflow(terms[i].coeff, coeff, &c)) {
      overflow = true;
      return;
    }
    if (c == 0) {
      terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      terms[i].coeff = c;
    }
    return;
  }
  terms.push_back(Term{atom, coeff});
}

void LinearForm::AddConst(int64_t c) {
  if (__builtin_add_overflow(constant, c, &constant)) overflow = true;
}

void LinearForm::AddForm(const LinearForm& o, int64_t scale) {
  if (o.overflow) overflow = true;
  terms.reserve(terms.size() + o.terms.size());
  for (const Term& t : o.terms) {
    int64_t c = 0;
    if (__builtin_mul_overflow(t.coeff, scale, &c)) {
      overflow = true;
      return;
    }
    AddTerm(t.atom, c);
  }
  int64_t c = 0;
  if (__builtin_mul_overflow(o.constant, scale, &c)) {
    overflow = true;
    return;
  }
  AddConst(c);
}

namespace {

int Cmp(int64_t a, int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

int CompareArgs(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (a.size() != b.size()) return Cmp(static_cast<int64_t>(a.size()), static_cast<int64_t>(b.size()));
  for (size_t i = 0; i < a.size(); ++i) {
    if (int c = CompareExpr(a[i], b[i]); c != 0) return c;
  }
  return 0;
}

}  // namespace

// A constant of type t with value v, wrapped to t's width.
PrimExpr MakeInt(int64_t v, DataType t) {
  if (t.bits() < 64) {
    uint64_t mask = (uint64_t{1} << t.bits()) - 1;
    uint64_t u = static_cast<uint64_t>(v) & mask;
    if (t.is_int() && (u >> (t.bits() - 1)) != 0) u |= ~mask;  // sign-extend
    v = static_cast<int64_t>(u);
  }
  return tir::IntImm(v, t);
}

int CompareExpr(const PrimExpr& a, const PrimExpr& b) {
  if (a == b) return 0;
  if (!a || !b) return a ? 1 : -1;
  if (a->kind != b->kind) return Cmp(static_cast<int>(a->kind), static_cast<int>(b->kind));
  if (a->dtype != b->dtype) return Cmp(a->dtype.Pack(), b->dtype.Pack());
  switch (a->kind) {
    case ExprKind::kIntImm: return Cmp(a->int_value, b->int_value);
    case ExprKind::kFloatImm:
      return a->float_value < b->float_value ? -1 : (a->float_value > b->float_value ? 1 : 0);
    case ExprKind::kStringImm:
    case ExprKind::kVar: return a->name.compare(b->name) < 0 ? -1 : (a->name == b->name ? 0 : 1);
    case ExprKind::kLoad: {
      const std::string& x = a->buffer ? a->buffer->name : std::string();
      const std::string& y = b->buffer ? b->buffer->name : std::string();
      if (x != y) return x < y ? -1 : 1;
      break;
    }
    case ExprKind::kCall:
      if (a->name != b->name) return a->name < b->name ? -1 : 1;
      break;
    default: break;
  }
  return CompareArgs(a->args, b->args);
}

LinearForm ToLinearForm(const PrimExpr& e) {
  LinearForm f;
  f.dtype = e->dtype;
  int64_t c = 0;
  switch (e->kind) {
    case ExprKind::kIntImm: f.constant = e->int_value; return f;
    case ExprKind::kAdd:
    case ExprKind::kSub:
      f = ToLinearForm(e->args[0]);
      f.AddForm(ToLinearForm(e->args[1]), e->kind == ExprKind::kAdd ? 1 : -1);
      return f;
    case ExprKind::kMul:
      if (tir::IsConstInt(e->args[1], &c)) {
        f.AddForm(ToLinearForm(e->args[0]), c);
        return f;
      }
      if (tir::IsConstInt(e->args[0], &c)) {
        f.AddForm(ToLinearForm(e->args[1]), c);
        return f;
      }
      break;
    default: break;
  }
  f.AddTerm(e, 1);
  return f;
}

namespace {

bool TermBefore(const Term& x, const Term& y) {
  uint64_t ax = x.coeff < 0 ? 0 - static_cast<uint64_t>(x.coeff) : static_cast<uint64_t>(x.coeff);
  uint64_t ay = y.coeff < 0 ? 0 - static_cast<uint64_t>(y.coeff) : static_cast<uint64_t>(y.coeff);
  if (ax != ay) return ax > ay;
  return CompareExpr(x.atom, y.atom) < 0;
}

// Stable insertion sort: forms have a handful of terms.
std::vector<Term> Sorted(const std::vector<Term>& terms) {
  std::vector<Term> s = terms;
  for (size_t i = 1; i < s.size(); ++i) {
    for (size_t j = i; j > 0 && TermBefore(s[j], s[j - 1]); --j) std::swap(s[j], s[j - 1]);
  }
  return s;
}

PrimExpr Scaled(const PrimExpr& atom, int64_t c, DataType t) {
  return c == 1 ? atom : tir::Mul(atom, MakeInt(c, t));
}

}  // namespace

PrimExpr FromLinearForm(const LinearForm& f) {
  DataType t = f.dtype;
  std::vector<Term> terms = Sorted(f.terms);
  PrimExpr acc;
  for (const Term& x : terms) {
    if (x.coeff > 0) acc = acc ? tir::Add(acc, Scaled(x.atom, x.coeff, t)) : Scaled(x.atom, x.coeff, t);
  }
  bool const_used = false;
  if (!acc && f.constant > 0 && !terms.empty()) {
    acc = MakeInt(f.constant, t);
    const_used = true;
  }
  for (const Term& x : terms) {
    if (x.coeff >= 0) continue;
    if (!acc) {
      acc = tir::Mul(x.atom, MakeInt(x.coeff, t));
    } else if (x.coeff == ConstIntBound::kNegInf) {
      acc = tir::Add(acc, tir::Mul(x.atom, MakeInt(x.coeff, t)));
    } else {
      acc = tir::Sub(acc, Scaled(x.atom, -x.coeff, t));
    }
  }
  if (!const_used) {
    if (!acc) return MakeInt(f.constant, t);
    if (f.constant > 0 || f.constant == ConstIntBound::kNegInf) {
      acc = tir::Add(acc, MakeInt(f.constant, t));
    } else if (f.constant < 0) {
      acc = tir::Sub(acc, MakeInt(-f.constant, t));
    }
  }
  return acc;
}

void MergeDivModPairs(LinearForm* f) {
  bool changed = true;
  while (changed && !f->overflow) {
    changed = false;
    for (size_t i = 0; i < f->terms.size() && !changed; ++i) {
      const Term& m = f->terms[i];
      int64_t c = 0;
      if (m.atom->kind != ExprKind::kFloorMod || !tir::IsConstInt(m.atom->args[1], &c) || c <= 0) {
        continue;
      }
      int64_t want = 0;
      if (__builtin_mul_overflow(m.coeff, c, &want)) continue;
      for (size_t j = 0; j < f->terms.size(); ++j) {
        const Term& d = f->terms[j];
        if (d.coeff != want || d.atom->kind != ExprKind::kFloorDiv ||
            !tir::IsConstValue(d.atom->args[1], c) ||
            !tir::ExprDeepEqual(d.atom->args[0], m.atom->args[0])) {
          continue;
        }
        PrimExpr x = m.atom->args[0];
        int64_t k = m.coeff;
        size_t hi = std::max(i, j), lo = std::min(i, j);
        f->terms.erase(f->terms.begin() + static_cast<std::ptrdiff_t>(hi));
        f->terms.erase(f->terms.begin() + static_cast<std::ptrdiff_t>(lo));
        f->AddForm(ToLinearForm(x), k);
        changed = true;
        break;
      }
    }
  }
}

}  // namespace kiln::arith
