// File: lowering/arith/rewrite_simplify.cc — Simplify(): bottom-up rewriting
// (TVM's RewriteSimplifier). Index-like integer arithmetic goes through the
// canonical form (canonical_simplify.cc); everything else is handled here:
// constant folding (floats only where IEEE gives the same bits), booleans,
// min/max/select decided by bounds, casts, Ramp/Broadcast arithmetic, lets.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/tir_functor.h"
#include "lowering/arith/analyzer_impl.h"

namespace kiln::arith {

using tir::IsConstFloat;
using tir::IsConstInt;
using tir::IsConstValue;

namespace {

bool IsScalar(const PrimExpr& e) { return e->dtype.lanes() == 1; }
bool IsIndexScalar(const PrimExpr& e) { return IsIndexLike(e->dtype) && IsScalar(e); }

// True when evaluating `e` reads a buffer or a tensor.
bool ReadsMemory(const PrimExpr& e) {
  bool reads = false;
  tir::PostOrderVisit(e, [&](const ExprNode* n) {
    reads |= n->kind == ExprKind::kLoad || n->kind == ExprKind::kProducerLoad;
  });
  return reads;
}

bool IsComparison(ExprKind k) { return k >= ExprKind::kEQ && k <= ExprKind::kGE; }

ExprKind NegatedComparison(ExprKind k) {
  switch (k) {
    case ExprKind::kEQ: return ExprKind::kNE;
    case ExprKind::kNE: return ExprKind::kEQ;
    case ExprKind::kLT: return ExprKind::kGE;
    case ExprKind::kLE: return ExprKind::kGT;
    case ExprKind::kGT: return ExprKind::kLE;
    default: return ExprKind::kLT;  // kGE
  }
}

// An integer comparison whose negation is again a comparison (floats: NaN).
bool IsIntComparison(const PrimExpr& e) {
  return IsComparison(e->kind) && e->args[0]->dtype.is_integral() && IsScalar(e);
}

// Folds a float operation to exactly what the target computes: float64 in
// double; float32 on the operands rounded to float, the double result rounded
// once more (the same bits as float arithmetic for + - * /: double has more
// than twice float's precision). Other float types are left alone.
bool FoldFloat(ExprKind k, double a, double b, DataType t, double* out) {
  if (t != DataType::Float(32) && t != DataType::Float(64)) return false;
  if (t == DataType::Float(32)) {
    // The target holds float32 constants rounded to float.
    a = static_cast<double>(static_cast<float>(a));
    b = static_cast<double>(static_cast<float>(b));
  }
  double r = 0;
  switch (k) {
    case ExprKind::kAdd: r = a + b; break;
    case ExprKind::kSub: r = a - b; break;
    case ExprKind::kMul: r = a * b; break;
    case ExprKind::kDiv: r = a / b; break;
    case ExprKind::kMin:
    case ExprKind::kMax:
      if (std::isnan(a) || std::isnan(b)) return false;
      if (a == b && std::signbit(a) != std::signbit(b)) return false;  // min(-0, +0): target-defined
      r = k == ExprKind::kMin ? std::min(a, b) : std::max(a, b);
      break;
    default: return false;
  }
  if (t == DataType::Float(32)) r = static_cast<double>(static_cast<float>(r));
  *out = r;
  return true;
}

// Integer constant folding in the type's width (wrapping, as the hardware does).
bool FoldInt(ExprKind k, int64_t a, int64_t b, DataType t, int64_t* out) {
  bool uns = t.is_uint() || t.is_bool();
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  int64_t r = 0;
  switch (k) {
    case ExprKind::kAdd: r = static_cast<int64_t>(ua + ub); break;
    case ExprKind::kSub: r = static_cast<int64_t>(ua - ub); break;
    case ExprKind::kMul: r = static_cast<int64_t>(ua * ub); break;
    case ExprKind::kDiv:
    case ExprKind::kMod:
      if (b == 0 || (!uns && a == std::numeric_limits<int64_t>::min() && b == -1)) return false;
      if (uns && t.bits() >= 64) {
        r = static_cast<int64_t>(k == ExprKind::kDiv ? ua / ub : ua % ub);
      } else {
        r = k == ExprKind::kDiv ? a / b : a % b;
      }
      break;
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
      if (b == 0 || (uns && t.bits() >= 64)) return false;
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return false;
      r = k == ExprKind::kFloorDiv ? FloorDivInt(a, b) : FloorModInt(a, b);
      break;
    case ExprKind::kMin:
    case ExprKind::kMax:
      if (uns && t.bits() >= 64) {
        r = static_cast<int64_t>(k == ExprKind::kMin ? std::min(ua, ub) : std::max(ua, ub));
      } else {
        r = k == ExprKind::kMin ? std::min(a, b) : std::max(a, b);
      }
      break;
    default: return false;
  }
  *out = r;
  return true;
}

bool CompareConsts(ExprKind k, const PrimExpr& a, const PrimExpr& b, bool* out) {
  int64_t x = 0, y = 0;
  double fx = 0, fy = 0;
  int c = 0;
  if (IsConstInt(a, &x) && IsConstInt(b, &y)) {
    if ((a->dtype.is_uint() && a->dtype.bits() >= 64)) {
      uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
      c = ux < uy ? -1 : (ux > uy ? 1 : 0);
    } else {
      c = x < y ? -1 : (x > y ? 1 : 0);
    }
  } else if (IsConstFloat(a, &fx) && IsConstFloat(b, &fy)) {
    switch (k) {  // IEEE: every comparison with NaN is false except !=
      case ExprKind::kEQ: *out = fx == fy; return true;
      case ExprKind::kNE: *out = fx != fy; return true;
      case ExprKind::kLT: *out = fx < fy; return true;
      case ExprKind::kLE: *out = fx <= fy; return true;
      case ExprKind::kGT: *out = fx > fy; return true;
      default: *out = fx >= fy; return true;
    }
  } else {
    return false;
  }
  switch (k) {
    case ExprKind::kEQ: *out = c == 0; break;
    case ExprKind::kNE: *out = c != 0; break;
    case ExprKind::kLT: *out = c < 0; break;
    case ExprKind::kLE: *out = c <= 0; break;
    case ExprKind::kGT: *out = c > 0; break;
    default: *out = c >= 0; break;
  }
  return true;
}

PrimExpr Rebuild(const PrimExpr& e, std::vector<PrimExpr> args) {
  bool same = args.size() == e->args.size();
  for (size_t i = 0; same && i < args.size(); ++i) same = args[i] == e->args[i];
  return same ? e : tir::WithArgs(e, std::move(args));
}

// Whether a and b mention a common variable (else a fact about one says
// nothing about the other).
bool ShareVariable(const PrimExpr& a, const PrimExpr& b) {
  std::vector<const ExprNode*> va;
  tir::PostOrderVisit(a, [&](const ExprNode* n) {
    if (n->kind == ExprKind::kVar) va.push_back(n);
  });
  bool shared = false;
  tir::PostOrderVisit(b, [&](const ExprNode* n) {
    if (!shared && n->kind == ExprKind::kVar) {
      for (const ExprNode* v : va) shared |= v == n;
    }
  });
  return shared;
}

bool IsBroadcast(const PrimExpr& e) { return e->kind == ExprKind::kBroadcast; }
bool IsRamp(const PrimExpr& e) { return e->kind == ExprKind::kRamp; }

// A vector of lanes `lanes` from base and stride; stride 0 is a broadcast.
PrimExpr MakeRamp(const PrimExpr& base, const PrimExpr& stride, int lanes) {
  if (IsConstValue(stride, 0)) return tir::Broadcast(base, lanes);
  return tir::Ramp(base, stride, lanes);
}

}  // namespace

PrimExpr Analyzer::Impl::Simplify(const PrimExpr& e) {
  if (!e) return e;
  const ExprNode& n = *e;
  const DataType t = n.dtype;
  const int lanes = t.lanes();
  switch (n.kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kStringImm:
      return e;
    case ExprKind::kVar: {
      const VarFacts* f = Facts(&n);
      if (f && f->value && (f->value->kind == ExprKind::kIntImm || f->value->kind == ExprKind::kVar ||
                            f->value->kind == ExprKind::kFloatImm)) {
        return f->value;
      }
      // A variable pinned to one value by its facts (x == 5, a range of extent 1).
      if (f && t.is_int() && lanes == 1 && f->bound.min_value == f->bound.max_value) {
        return MakeInt(f->bound.min_value, t);
      }
      return e;
    }
    case ExprKind::kReduce:
    case ExprKind::kProducerLoad:
      return e;  // tensor-expression nodes are left to their own passes
    default: break;
  }

  if ((n.kind == ExprKind::kAdd || n.kind == ExprKind::kSub || n.kind == ExprKind::kMul) &&
      IsIndexLike(t) && lanes == 1) {
    return SimplifyArith(e);
  }

  switch (n.kind) {
    case ExprKind::kSelect: {
      PrimExpr c = Simplify(n.args[0]);
      int64_t cv = 0;
      if (IsConstInt(c, &cv)) return Simplify(cv ? n.args[1] : n.args[2]);
      PrimExpr tv, fv;
      if (IsScalar(c)) {
        // A Select evaluates both sides, so a side that reads memory is
        // simplified without the condition: a clamp that keeps its index in
        // bounds when the condition is false (min(col, N - 1) under
        // col < N) must stay. Pure arithmetic may use it.
        size_t mark = Mark();
        if (!ReadsMemory(n.args[1])) AddFact(c);
        tv = Simplify(n.args[1]);
        ExitScope(mark);
        if (!ReadsMemory(n.args[2])) AddConstraint(tir::Not(c));
        fv = Simplify(n.args[2]);
        ExitScope(mark);
      } else {
        tv = Simplify(n.args[1]);
        fv = Simplify(n.args[2]);
      }
      if (tir::ExprDeepEqual(tv, fv)) return tv;
      if (t.is_bool() && lanes == 1) {
        if (IsConstValue(tv, 1) && IsConstValue(fv, 0)) return c;
        if (IsConstValue(tv, 0) && IsConstValue(fv, 1)) return Simplify(tir::Not(c));
      }
      return Rebuild(e, {c, tv, fv});
    }
    case ExprKind::kCall: {
      if (n.name == "if_then_else" && n.args.size() == 3) {
        PrimExpr c = Simplify(n.args[0]);
        int64_t cv = 0;
        if (IsConstInt(c, &cv)) return Simplify(cv ? n.args[1] : n.args[2]);
        PrimExpr tv, fv;
        size_t mark = Mark();
        if (IsScalar(c)) AddFact(c);
        tv = Simplify(n.args[1]);
        ExitScope(mark);
        if (IsScalar(c)) AddConstraint(tir::Not(c));
        fv = Simplify(n.args[2]);
        ExitScope(mark);
        return Rebuild(e, {c, tv, fv});
      }
      std::vector<PrimExpr> args;
      for (const PrimExpr& a : n.args) args.push_back(Simplify(a));
      return Rebuild(e, std::move(args));
    }
    case ExprKind::kLet: {
      const Var& v = n.args[0];
      PrimExpr value = Simplify(n.args[1]);
      size_t mark = Mark();
      PushLet(v, value);
      PrimExpr body = Simplify(n.args[2]);
      ExitScope(mark);
      if (!tir::UsesVar(body, [&](const ExprNode* x) { return x == v.get(); })) return body;
      return Rebuild(e, {v, value, body});
    }
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      const bool is_and = n.kind == ExprKind::kAnd;
      PrimExpr a = Simplify(n.args[0]);
      PrimExpr b = Simplify(n.args[1]);
      int64_t v = 0;
      // and: false wins, true drops out; or: the reverse.
      if (IsConstInt(a, &v)) return (v != 0) == is_and ? b : a;
      if (IsConstInt(b, &v)) return (v != 0) == is_and ? a : b;
      if (tir::ExprDeepEqual(a, b)) return a;
      if (lanes == 1) {
        auto complement = [&](const PrimExpr& x, const PrimExpr& y) {
          if (x->kind == ExprKind::kNot && tir::ExprDeepEqual(x->args[0], y)) return true;
          if (IsIntComparison(x) && IsIntComparison(y)) {
            PrimExpr nx = Simplify(tir::Not(x));
            return tir::ExprDeepEqual(nx, y);
          }
          return false;
        };
        if (complement(a, b) || complement(b, a)) return tir::BoolImm(!is_and);
        // One comparison decided by the other: a && b with b implied by a is a.
        if (IsIntComparison(a) && IsIntComparison(b) && ShareVariable(a, b)) {
          for (int side = 0; side < 2; ++side) {
            const PrimExpr& given = side == 0 ? a : b;
            const PrimExpr& other = side == 0 ? b : a;
            size_t mark = Mark();
            AddFact(is_and ? given : Simplify(tir::Not(given)));
            PrimExpr o = Simplify(other);
            ExitScope(mark);
            if (IsConstInt(o, &v)) {
              // and: other true under given -> given; other false -> false.
              // or: other under !given true -> true; false -> given.
              if (is_and) return v ? given : tir::BoolImm(false);
              return v ? tir::BoolImm(true) : given;
            }
          }
        }
      }
      return Rebuild(e, {a, b});
    }
    case ExprKind::kNot: {
      PrimExpr a = Simplify(n.args[0]);
      int64_t v = 0;
      if (IsConstInt(a, &v)) return tir::BoolImm(v == 0);
      if (a->kind == ExprKind::kNot) return a->args[0];
      if (IsIntComparison(a)) {
        return Simplify(tir::Binary(NegatedComparison(a->kind), a->args[0], a->args[1]));
      }
      if (IsBroadcast(a)) return tir::Broadcast(Simplify(tir::Not(a->args[0])), lanes);
      return Rebuild(e, {a});
    }
    case ExprKind::kCast: {
      PrimExpr v = Simplify(n.args[0]);
      DataType from = v->dtype;
      int64_t iv = 0;
      double fv = 0;
      if (lanes == 1 && IsConstInt(v, &iv)) {
        if (from.is_uint() && from.bits() >= 64 && iv < 0 && !t.is_integral()) return Rebuild(e, {v});
        if (t.is_bool()) return tir::BoolImm(iv != 0);
        if (t.is_int() || t.is_uint()) return MakeInt(iv, t);
        if (t == DataType::Float(64)) return tir::FloatImm(static_cast<double>(iv), t);
        if (t == DataType::Float(32)) {
          return tir::FloatImm(static_cast<double>(static_cast<float>(iv)), t);
        }
      }
      if (lanes == 1 && IsConstFloat(v, &fv)) {
        if (t == DataType::Float(64)) return tir::FloatImm(fv, t);
        if (t == DataType::Float(32) && (from == DataType::Float(64) || from == DataType::Float(32))) {
          return tir::FloatImm(static_cast<double>(static_cast<float>(fv)), t);
        }
        if ((t.is_int() || t.is_uint()) && std::isfinite(fv)) {
          double tr = std::trunc(fv);
          ConstIntBound tb = TypeBound(t);
          if (tr >= static_cast<double>(tb.min_value) && tr < 9.2e18 &&
              tr <= static_cast<double>(tb.max_value)) {
            return MakeInt(static_cast<int64_t>(tr), t);
          }
        }
      }
      // cast(t, cast(u, x)) with x of type t and u able to hold every t value.
      if (v->kind == ExprKind::kCast && v->args[0]->dtype == t && t.is_int() && from.is_int() &&
          from.bits() >= t.bits() && from.lanes() == t.lanes()) {
        return v->args[0];
      }
      if (IsBroadcast(v)) {
        return tir::Broadcast(Simplify(tir::Cast(DataType(t.code(), t.bits(), 1), v->args[0])), lanes);
      }
      return Rebuild(e, {v});
    }
    case ExprKind::kLoad: {
      std::vector<PrimExpr> idx;
      for (const PrimExpr& a : n.args) idx.push_back(Simplify(a));
      return Rebuild(e, std::move(idx));
    }
    case ExprKind::kRamp: {
      PrimExpr base = Simplify(n.args[0]);
      PrimExpr stride = Simplify(n.args[1]);
      if (IsConstValue(stride, 0)) return tir::Broadcast(base, lanes);
      return Rebuild(e, {base, stride});
    }
    case ExprKind::kBroadcast: return Rebuild(e, {Simplify(n.args[0])});
    default: break;
  }

  // Binary arithmetic and comparisons.
  if (n.args.size() != 2) return e;
  PrimExpr a = Simplify(n.args[0]);
  PrimExpr b = Simplify(n.args[1]);
  ExprKind k = n.kind;
  int64_t x = 0, y = 0, r = 0;
  double fx = 0, fy = 0, fr = 0;

  if (IsComparison(k)) {
    bool out = false;
    if (CompareConsts(k, a, b, &out)) return tir::BoolImm(out);
    if (IsIndexScalar(a) && a->dtype == b->dtype) return SimplifyCompare(k, a, b);
    if (a->dtype.is_integral() && IsScalar(a) && tir::ExprDeepEqual(a, b)) {
      return tir::BoolImm(k == ExprKind::kEQ || k == ExprKind::kLE || k == ExprKind::kGE);
    }
    if (IsBroadcast(a) && IsBroadcast(b) && a->dtype == b->dtype) {
      return tir::Broadcast(Simplify(tir::Binary(k, a->args[0], b->args[0])), lanes);
    }
    return Rebuild(e, {a, b});
  }

  // Constants.
  if (IsConstInt(a, &x) && IsConstInt(b, &y) && a->dtype == b->dtype && lanes == 1 &&
      FoldInt(k, x, y, t, &r)) {
    return MakeInt(r, t);
  }
  if (IsConstFloat(a, &fx) && IsConstFloat(b, &fy) && a->dtype == b->dtype &&
      FoldFloat(k, fx, fy, t, &fr)) {
    return tir::FloatImm(fr, t);
  }

  // Vectors: lane-wise operations of broadcasts and ramps.
  if (lanes > 1) {
    if (IsBroadcast(a) && IsBroadcast(b)) {
      return tir::Broadcast(Simplify(tir::Binary(k, a->args[0], b->args[0])), lanes);
    }
    if (t.is_integral()) {
      auto sum = [&](const PrimExpr& p, const PrimExpr& q) { return Simplify(tir::Add(p, q)); };
      auto diff = [&](const PrimExpr& p, const PrimExpr& q) { return Simplify(tir::Sub(p, q)); };
      auto prod = [&](const PrimExpr& p, const PrimExpr& q) { return Simplify(tir::Mul(p, q)); };
      if (k == ExprKind::kAdd) {
        if (IsRamp(a) && IsBroadcast(b)) return MakeRamp(sum(a->args[0], b->args[0]), a->args[1], lanes);
        if (IsBroadcast(a) && IsRamp(b)) return MakeRamp(sum(a->args[0], b->args[0]), b->args[1], lanes);
        if (IsRamp(a) && IsRamp(b)) {
          return MakeRamp(sum(a->args[0], b->args[0]), sum(a->args[1], b->args[1]), lanes);
        }
      }
      if (k == ExprKind::kSub) {
        if (IsRamp(a) && IsBroadcast(b)) return MakeRamp(diff(a->args[0], b->args[0]), a->args[1], lanes);
        if (IsBroadcast(a) && IsRamp(b)) {
          return MakeRamp(diff(a->args[0], b->args[0]),
                          diff(MakeInt(0, b->args[1]->dtype), b->args[1]), lanes);
        }
        if (IsRamp(a) && IsRamp(b)) {
          return MakeRamp(diff(a->args[0], b->args[0]), diff(a->args[1], b->args[1]), lanes);
        }
      }
      if (k == ExprKind::kMul) {
        if (IsRamp(a) && IsBroadcast(b)) {
          return MakeRamp(prod(a->args[0], b->args[0]), prod(a->args[1], b->args[0]), lanes);
        }
        if (IsBroadcast(a) && IsRamp(b)) {
          return MakeRamp(prod(a->args[0], b->args[0]), prod(a->args[0], b->args[1]), lanes);
        }
      }
      // floordiv / floormod of a ramp that stays within one block of c.
      int64_t c = 0, s = 0;
      if ((k == ExprKind::kFloorDiv || k == ExprKind::kFloorMod) && IsRamp(a) && IsBroadcast(b) &&
          IsConstInt(b->args[0], &c) && c > 0 && IsConstInt(a->args[1], &s) && s >= 0 &&
          IsIndexScalar(a->args[0])) {
        DataType st = a->args[0]->dtype;
        PrimExpr rem = SimplifyFloorMod(a->args[0], MakeInt(c, st), st);
        ConstIntBound rb = Bound(rem);
        int64_t hi = rb.max_value;
        // The base's residues: base = coeff * k + r with coeff dividing c
        // means base mod c = coeff * k' + r too, at most c - coeff + r (a
        // ramp of 16 lanes from a multiple of 16 never crosses a multiple
        // of 16384, whatever the bounds say).
        const ModularSet m = Modular(a->args[0]);
        if (m.coeff > 0 && c % m.coeff == 0) {
          const int64_t r = ((m.base % m.coeff) + m.coeff) % m.coeff;
          hi = std::min(hi, c - m.coeff + r);
        }
        int64_t span = 0;
        if (rb.min_value >= 0 && !__builtin_mul_overflow(s, lanes - 1, &span) &&
            BoundAdd(hi, span) < c) {
          if (k == ExprKind::kFloorMod) return MakeRamp(rem, a->args[1], lanes);
          return tir::Broadcast(SimplifyFloorDiv(a->args[0], MakeInt(c, st), st), lanes);
        }
      }
    }
    return Rebuild(e, {a, b});
  }

  if (IsIndexScalar(e)) {
    switch (k) {
      case ExprKind::kFloorDiv: return SimplifyFloorDiv(a, b, t);
      case ExprKind::kFloorMod: return SimplifyFloorMod(a, b, t);
      case ExprKind::kDiv:
      case ExprKind::kMod: {
        // Truncating = flooring when a >= 0 and b > 0; keep the truncating
        // node when the floor rules cannot do better.
        if (IsConstValue(b, 1)) return k == ExprKind::kDiv ? a : MakeInt(0, t);
        ConstIntBound ab = LinearBound(ToLinearForm(a), true);
        ConstIntBound bb = Bound(b);
        if (ab.min_value >= 0 && bb.min_value > 0) {
          PrimExpr fl = k == ExprKind::kDiv ? SimplifyFloorDiv(a, b, t) : SimplifyFloorMod(a, b, t);
          ExprKind fk = k == ExprKind::kDiv ? ExprKind::kFloorDiv : ExprKind::kFloorMod;
          if (fl->kind == fk && tir::ExprDeepEqual(fl->args[0], a) && tir::ExprDeepEqual(fl->args[1], b)) {
            return Rebuild(e, {a, b});
          }
          return fl;
        }
        return Rebuild(e, {a, b});
      }
      case ExprKind::kMin:
      case ExprKind::kMax: {
        LinearForm d = ToLinearForm(a);
        d.AddForm(ToLinearForm(b), -1);  // a - b
        if (!d.overflow) {
          ConstIntBound db = LinearBound(d, true);
          bool is_min = k == ExprKind::kMin;
          if (db.max_value <= 0) return is_min ? a : b;  // a <= b
          if (db.min_value >= 0) return is_min ? b : a;  // a >= b
        }
        // min(min(x, c1), c2) -> min(x, min(c1, c2)).
        int64_t c1 = 0;
        if (a->kind == k && IsConstInt(a->args[1], &c1) && IsConstInt(b, &y)) {
          return Rebuild(e, {a->args[0], MakeInt(k == ExprKind::kMin ? std::min(c1, y) : std::max(c1, y), t)});
        }
        return Rebuild(e, {a, b});
      }
      default: return Rebuild(e, {a, b});
    }
  }

  // Other scalar types: identities that hold bit for bit.
  if (t.is_integral()) {
    if ((k == ExprKind::kAdd || k == ExprKind::kSub) && IsConstValue(b, 0)) return a;
    if (k == ExprKind::kAdd && IsConstValue(a, 0)) return b;
    if ((k == ExprKind::kMul || k == ExprKind::kDiv || k == ExprKind::kFloorDiv) && IsConstValue(b, 1)) {
      return a;
    }
    if (k == ExprKind::kMul && IsConstValue(a, 1)) return b;
    if (k == ExprKind::kMul && (IsConstValue(a, 0) || IsConstValue(b, 0))) return MakeInt(0, t);
    if ((k == ExprKind::kMin || k == ExprKind::kMax) && tir::ExprDeepEqual(a, b)) return a;
  } else if (t.is_float()) {
    // x * 1 and x / 1 are exact for every x (NaN, infinities, -0); x + 0 is not (-0 + 0 = +0).
    if ((k == ExprKind::kMul || k == ExprKind::kDiv) && IsConstFloat(b, &fy) && fy == 1.0) return a;
    if (k == ExprKind::kMul && IsConstFloat(a, &fx) && fx == 1.0) return b;
  }
  return Rebuild(e, {a, b});
}

}  // namespace kiln::arith
