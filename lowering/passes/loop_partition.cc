// File: lowering/passes/loop_partition.cc
#include "lowering/passes/loop_partition.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/tir_functor.h"
#include "lowering/arith/analyzer.h"
#include "lowering/passes/pass_util.h"

namespace kiln::tir::transform {
namespace {

using VarSet = std::unordered_set<const ExprNode*>;

struct InnerLoop {
  Var var;
  PrimExpr min, extent;
};

// An If whose guard holds for x in [lo, hi) (null bound: unbounded).
struct Candidate {
  const StmtNode* node = nullptr;
  PrimExpr cond;  // likely() stripped
  std::vector<InnerLoop> path;
  PrimExpr lo, hi;
};

bool IsLikely(const PrimExpr& e) {
  return e->kind == ExprKind::kCall && e->name == "likely" && e->args.size() == 1;
}

// Splits a condition into conjuncts, stripping likely(); reports whether any
// likely() was seen.
void Conjuncts(const PrimExpr& e, std::vector<PrimExpr>* out, bool* likely) {
  if (IsLikely(e)) {
    *likely = true;
    Conjuncts(e->args[0], out, likely);
    return;
  }
  if (e->kind == ExprKind::kAnd) {
    Conjuncts(e->args[0], out, likely);
    Conjuncts(e->args[1], out, likely);
    return;
  }
  out->push_back(e);
}

PrimExpr StripLikely(const PrimExpr& e) {
  if (IsLikely(e)) return StripLikely(e->args[0]);
  if (e->kind == ExprKind::kAnd) return And(StripLikely(e->args[0]), StripLikely(e->args[1]));
  return e;
}

// e = sum(coef[k] * vars[k]) + rest, with rest free of vars and forbidden.
struct Linear {
  std::vector<int64_t> coef;
  PrimExpr rest;
};

class LinearForm {
 public:
  LinearForm(std::vector<const ExprNode*> vars, const VarSet& forbidden, DataType t)
      : vars_(std::move(vars)), forbidden_(forbidden), t_(t) {}

  std::optional<Linear> Of(const PrimExpr& e) {
    if (e->dtype != t_) return std::nullopt;
    switch (e->kind) {
      case ExprKind::kIntImm:
        return Linear{Zero(), e};
      case ExprKind::kVar: {
        for (size_t k = 0; k < vars_.size(); ++k) {
          if (vars_[k] == e.get()) {
            Linear l{Zero(), IntImm(0, t_)};
            l.coef[k] = 1;
            return l;
          }
        }
        if (forbidden_.count(e.get())) return std::nullopt;
        return Linear{Zero(), e};
      }
      case ExprKind::kAdd:
      case ExprKind::kSub: {
        std::optional<Linear> a = Of(e->args[0]), b = Of(e->args[1]);
        if (!a || !b) return std::nullopt;
        int64_t sign = e->kind == ExprKind::kAdd ? 1 : -1;
        for (size_t k = 0; k < vars_.size(); ++k) a->coef[k] += sign * b->coef[k];
        a->rest = sign > 0 ? a->rest + b->rest : a->rest - b->rest;
        return a;
      }
      case ExprKind::kMul: {
        int64_t c = 0;
        const PrimExpr* other = nullptr;
        if (IsConstInt(e->args[0], &c)) {
          other = &e->args[1];
        } else if (IsConstInt(e->args[1], &c)) {
          other = &e->args[0];
        }
        if (other == nullptr) return Opaque(e);
        std::optional<Linear> a = Of(*other);
        if (!a) return std::nullopt;
        for (int64_t& k : a->coef) k *= c;
        a->rest = a->rest * IntImm(c, t_);
        return a;
      }
      default:
        return Opaque(e);
    }
  }

 private:
  std::vector<int64_t> Zero() const { return std::vector<int64_t>(vars_.size(), 0); }
  // A term that must not involve the vars.
  std::optional<Linear> Opaque(const PrimExpr& e) {
    bool bad = UsesVar(e, [&](const ExprNode* v) {
      if (forbidden_.count(v)) return true;
      for (const ExprNode* x : vars_) {
        if (x == v) return true;
      }
      return false;
    });
    if (bad) return std::nullopt;
    return Linear{Zero(), e};
  }

  std::vector<const ExprNode*> vars_;
  const VarSet& forbidden_;
  DataType t_;
};

class Partitioner : public StmtExprMutator {
 public:
  explicit Partitioner(const PrimFunc& f) {
    PrimExpr facts;
    for (const Buffer& b : f->params) {
      for (const PrimExpr& d : b->shape) {
        if (d->kind != ExprKind::kVar) continue;
        PrimExpr ge = GE(d, IntImm(0, d->dtype));
        facts = facts ? And(facts, ge) : ge;
      }
    }
    if (facts) scope_.emplace(ana_.EnterConstraint(facts));
  }

 protected:
  Stmt VisitStmt_(const Stmt& s) override {
    if (s->kind == StmtKind::kFor) return VisitFor(s);
    if (s->kind == StmtKind::kLetStmt) ana_.Bind(s->var, s->a);
    // A loop the schedule keeps whole (its guards where they are): a code
    // generator matches its form (codegen_cuda's tensor-core GEMM).
    if (s->kind == StmtKind::kAttr && s->tag == kNoPartitionPragma && IsConstValue(s->a, 0)) {
      return s;
    }
    return MutateChildren(s);
  }

 private:
  // ---- Collection -------------------------------------------------------------

  void Collect(const Stmt& s, const Var& x, std::vector<InnerLoop>* path, VarSet* lets,
               std::vector<Candidate>* out) {
    if (!s) return;
    switch (s->kind) {
      case StmtKind::kFor:
        path->push_back({s->var, s->a, s->b});
        Collect(s->body0(), x, path, lets, out);
        path->pop_back();
        return;
      case StmtKind::kLetStmt:
        lets->insert(s->var.get());
        Collect(s->body0(), x, path, lets, out);
        return;
      case StmtKind::kAllocate:
        lets->insert(s->buffer->data.get());
        Collect(s->body0(), x, path, lets, out);
        return;
      case StmtKind::kIfThenElse: {
        std::optional<Candidate> c = Analyze(s, x, *path, *lets);
        if (c) out->push_back(*c);
        for (const Stmt& b : s->body) Collect(b, x, path, lets, out);
        return;
      }
      default:
        for (const Stmt& b : s->body) Collect(b, x, path, lets, out);
        return;
    }
  }

  std::optional<Candidate> Analyze(const Stmt& s, const Var& x, const std::vector<InnerLoop>& path,
                                   const VarSet& lets) {
    std::vector<PrimExpr> conj;
    bool likely = false;
    Conjuncts(s->a, &conj, &likely);
    if (!likely) return std::nullopt;
    std::vector<const ExprNode*> vars = {x.get()};
    for (const InnerLoop& l : path) vars.push_back(l.var.get());
    VarSet forbidden = lets;
    LinearForm lf(vars, forbidden, x->dtype);
    Candidate c;
    c.node = s.get();
    c.cond = StripLikely(s->a);
    c.path = path;
    for (const PrimExpr& e : conj) {
      PrimExpr lo, hi;
      if (!Interval(e, x, path, &lf, vars, forbidden, &lo, &hi)) return std::nullopt;
      if (lo) c.lo = c.lo ? Max(c.lo, lo) : lo;
      if (hi) c.hi = c.hi ? Min(c.hi, hi) : hi;
    }
    if (!c.lo && !c.hi) return std::nullopt;
    return c;
  }

  // The range of x where comparison e holds for all inner-loop values.
  bool Interval(const PrimExpr& e, const Var& x, const std::vector<InnerLoop>& path, LinearForm* lf,
                const std::vector<const ExprNode*>& vars, const VarSet& forbidden, PrimExpr* lo,
                PrimExpr* hi) {
    PrimExpr a, b;
    bool negate = false;
    PrimExpr cmp = e;
    if (cmp->kind == ExprKind::kNot) {
      negate = true;
      cmp = cmp->args[0];
    }
    ExprKind k = cmp->kind;
    if (k != ExprKind::kLT && k != ExprKind::kLE && k != ExprKind::kGT && k != ExprKind::kGE) {
      return false;
    }
    if (negate) {
      k = k == ExprKind::kLT   ? ExprKind::kGE
          : k == ExprKind::kLE ? ExprKind::kGT
          : k == ExprKind::kGT ? ExprKind::kLE
                               : ExprKind::kLT;
    }
    DataType t = x->dtype;
    const PrimExpr& l = cmp->args[0];
    const PrimExpr& r = cmp->args[1];
    // Normalize to E < 0.
    PrimExpr E;
    switch (k) {
      case ExprKind::kLT:
        E = Sub(l, r);
        break;
      case ExprKind::kLE:
        E = Sub(Sub(l, r), IntImm(1, t));
        break;
      case ExprKind::kGT:
        E = Sub(r, l);
        break;
      default:
        E = Sub(Sub(r, l), IntImm(1, t));
        break;
    }
    if (l->dtype != t || r->dtype != t) return false;
    std::optional<Linear> lin = lf->Of(E);
    if (!lin) return false;
    int64_t cx = lin->coef[0];
    if (cx == 0) return false;
    // M = rest + max over the inner loops of their terms.
    PrimExpr m = lin->rest;
    for (size_t p = 0; p < path.size(); ++p) {
      int64_t c = lin->coef[p + 1];
      if (c == 0) continue;
      const InnerLoop& il = path[p];
      auto uses_inner = [&](const PrimExpr& v) {
        return UsesVar(v, [&](const ExprNode* n) {
          if (forbidden.count(n)) return true;
          for (const ExprNode* x2 : vars) {
            if (x2 == n) return true;
          }
          return false;
        });
      };
      if (il.min->dtype != t || il.extent->dtype != t || uses_inner(il.min) ||
          uses_inner(il.extent)) {
        return false;
      }
      PrimExpr top = c > 0 ? il.min + il.extent - IntImm(1, t) : il.min;
      m = m + IntImm(c, t) * top;
    }
    if (cx > 0) {
      // cx * x + M < 0  <=>  x < floordiv(-M - 1, cx) + 1
      *hi = ana_.Simplify(FloorDiv(IntImm(0, t) - m - IntImm(1, t), IntImm(cx, t)) + IntImm(1, t));
    } else {
      // -a * x + M < 0  <=>  x >= floordiv(M, a) + 1
      *lo = ana_.Simplify(FloorDiv(m, IntImm(-cx, t)) + IntImm(1, t));
    }
    return true;
  }

  // ---- Rewriting ---------------------------------------------------------------

  // Replaces the candidate Ifs by their then-branch (keep == false) or, where
  // the analyzer proves the guard false in the current bindings, by their
  // else-branch (keep == true).
  class IfRewriter : public StmtExprMutator {
   public:
    IfRewriter(const std::unordered_map<const StmtNode*, const Candidate*>& ifs, bool keep,
               arith::Analyzer* ana)
        : ifs_(ifs), keep_(keep), ana_(ana) {}

   protected:
    Stmt VisitStmt_(const Stmt& s) override {
      if (s->kind == StmtKind::kIfThenElse) {
        auto it = ifs_.find(s.get());
        if (it != ifs_.end()) {
          if (!keep_) return VisitStmt(s->body[0]);
          for (const InnerLoop& l : it->second->path) ana_->Bind(l.var, Range{l.min, l.extent});
          if (ana_->CanProve(Not(it->second->cond))) {
            return s->body.size() > 1 ? VisitStmt(s->body[1]) : NoOp();
          }
        }
      }
      return MutateChildren(s);
    }

   private:
    const std::unordered_map<const StmtNode*, const Candidate*>& ifs_;
    bool keep_;
    arith::Analyzer* ana_;
  };

  Stmt Part(const Stmt& loop, const PrimExpr& begin, const PrimExpr& end, const Stmt& body,
            bool fresh) {
    if (IsNoOp(body)) return NoOp();  // e.g. a peeled part where every guard is false
    PrimExpr extent = ana_.Simplify(Sub(end, begin));
    Var v = loop->var;
    Stmt b = body;
    if (fresh) {
      v = MakeVar(loop->var->name, loop->var->dtype);
      b = RenewDefs(Substitute(body, {{loop->var.get(), v}}));
    }
    return For(v, begin, extent, loop->for_kind, b, loop->tag, loop->annotations);
  }

  Stmt VisitFor(const Stmt& loop) {
    ana_.Bind(loop->var, Range{loop->a, loop->b});
    if (loop->for_kind == ForKind::kThreadBinding) return MutateChildren(loop);
    std::vector<InnerLoop> path;
    VarSet lets;
    std::vector<Candidate> cands;
    Collect(loop->body0(), loop->var, &path, &lets, &cands);
    if (cands.empty()) return MutateChildren(loop);

    PrimExpr begin = loop->a;
    PrimExpr end = ana_.Simplify(Add(loop->a, loop->b));
    PrimExpr lo, hi;
    for (const Candidate& c : cands) {
      if (c.lo) lo = lo ? Max(lo, c.lo) : c.lo;
      if (c.hi) hi = hi ? Min(hi, c.hi) : c.hi;
    }
    PrimExpr main_lo = lo ? ana_.Simplify(Max(begin, Min(lo, end))) : begin;
    PrimExpr main_hi = hi ? ana_.Simplify(Max(main_lo, Min(end, hi))) : end;
    std::unordered_map<const StmtNode*, const Candidate*> ifs;
    for (const Candidate& c : cands) ifs[c.node] = &c;

    bool has_pre = !ana_.CanProve(LE(main_lo, begin));
    bool has_post = !ana_.CanProve(GE(main_hi, end));
    if (!has_pre && !has_post) {
      IfRewriter drop(ifs, false, &ana_);
      Stmt body = drop.VisitStmt(loop->body0());
      Ref<StmtNode> n(new StmtNode(*loop));
      n->body = {VisitStmt(body)};
      return Stmt(n);
    }
    if (ana_.CanProve(LE(main_hi, main_lo))) return MutateChildren(loop);
    if (loop->for_kind == ForKind::kVectorized || loop->for_kind == ForKind::kUnrolled) {
      if ((has_pre && !IsConstInt(main_lo)) || (has_post && !IsConstInt(main_hi))) {
        return MutateChildren(loop);
      }
    }
    std::vector<Stmt> parts;
    if (has_pre) {
      ana_.Bind(loop->var, Range{begin, ana_.Simplify(Sub(main_lo, begin))});
      IfRewriter keep(ifs, true, &ana_);
      parts.push_back(Part(loop, begin, main_lo, keep.VisitStmt(loop->body0()), true));
    }
    Stmt post;
    if (has_post) {
      ana_.Bind(loop->var, Range{main_hi, ana_.Simplify(Sub(end, main_hi))});
      IfRewriter keep(ifs, true, &ana_);
      post = Part(loop, main_hi, end, keep.VisitStmt(loop->body0()), true);
    }
    ana_.Bind(loop->var, Range{main_lo, ana_.Simplify(Sub(main_hi, main_lo))});
    IfRewriter drop(ifs, false, &ana_);
    Stmt main_body = VisitStmt(drop.VisitStmt(loop->body0()));
    parts.push_back(Part(loop, main_lo, main_hi, main_body, false));
    if (post) parts.push_back(post);
    return Seq(std::move(parts));
  }

  arith::Analyzer ana_;
  std::optional<arith::Analyzer::ConstraintScope> scope_;
};

}  // namespace

absl::StatusOr<PrimFunc> LoopPartition(const PrimFunc& f) {
  if (!f || !f->body) return PassError("loop_partition", f, "null function or body");
  Partitioner p(f);
  Stmt body = p.VisitStmt(f->body);
  if (body == f->body) return f;
  return WithBody(f, body);
}

}  // namespace kiln::tir::transform
