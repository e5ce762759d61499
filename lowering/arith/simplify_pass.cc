// File: lowering/arith/simplify_pass.cc
#include "lowering/arith/simplify_pass.h"

#include <vector>

#include "absl/status/status.h"
#include "ir/tir_functor.h"
#include "lowering/arith/analyzer.h"

namespace kiln::arith {
namespace {

using tir::ExprKind;
using tir::PrimExpr;
using tir::Stmt;
using tir::StmtKind;

bool HasOpaqueCall(const PrimExpr& e) {
  bool found = false;
  tir::PostOrderVisit(e, [&](const tir::ExprNode* n) {
    if (n->kind == ExprKind::kCall && n->effect == tir::CallEffect::kOpaque) found = true;
  });
  return found;
}

class StmtSimplifier {
 public:
  explicit StmtSimplifier(Analyzer* ana) : ana_(ana) {}

  Stmt Visit(const Stmt& s) {
    if (!s) return s;
    const tir::StmtNode& n = *s;
    switch (n.kind) {
      case StmtKind::kFor: return VisitFor(s);
      case StmtKind::kLetStmt: {
        PrimExpr value = ana_->Simplify(n.a);
        ana_->Bind(n.var, value);
        Stmt body = Visit(n.body0());
        const tir::ExprNode* v = n.var.get();
        if (!tir::UsesVar(body, [&](const tir::ExprNode* x) { return x == v; }) && !HasOpaqueCall(value)) {
          return body;
        }
        return Rebuild(s, value, nullptr, {}, {body});
      }
      case StmtKind::kAttr: {
        PrimExpr value = ana_->Simplify(n.a);
        if (n.tag == "thread_extent") {
          if (const auto* iv = dynamic_cast<const tir::IterVarNode*>(n.node.get())) {
            ana_->Bind(iv->var, tir::Range{tir::IntImm(0, iv->var->dtype), value});
          }
        }
        return Rebuild(s, value, nullptr, {}, {Visit(n.body0())});
      }
      case StmtKind::kIfThenElse: return VisitIf(s);
      case StmtKind::kSeq: {
        std::vector<Stmt> body;
        body.reserve(n.body.size());
        bool changed = false;
        for (const Stmt& c : n.body) {
          body.push_back(Visit(c));
          changed |= !(body.back() == c);
        }
        return changed ? tir::Seq(std::move(body)) : s;
      }
      case StmtKind::kStore: {
        std::vector<PrimExpr> idx;
        for (const PrimExpr& i : n.indices) idx.push_back(ana_->Simplify(i));
        return Rebuild(s, ana_->Simplify(n.a), nullptr, std::move(idx), {});
      }
      case StmtKind::kAllocate: {
        Stmt body = Visit(n.body0());
        if (tir::IsNoOp(body)) return tir::NoOp();
        return Rebuild(s, nullptr, nullptr, {}, {body});
      }
      case StmtKind::kEvaluate:
        if (tir::IsNoOp(s)) return s;
        return Rebuild(s, ana_->Simplify(n.a), nullptr, {}, {});
      case StmtKind::kAssert: {
        PrimExpr cond = ana_->Simplify(n.a);
        if (ana_->CanProve(cond)) return Visit(n.body0());
        auto scope = ana_->EnterConstraint(cond);
        return Rebuild(s, cond, nullptr, {}, {Visit(n.body0())});
      }
    }
    return s;
  }

 private:
  // A copy of s with new children, or s itself when nothing changed.
  static Stmt Rebuild(const Stmt& s, PrimExpr a, PrimExpr b, std::vector<PrimExpr> indices,
                      std::vector<Stmt> body) {
    bool same = a == s->a && b == s->b && indices.size() == s->indices.size() &&
                body.size() == s->body.size();
    for (size_t i = 0; same && i < indices.size(); ++i) same = indices[i] == s->indices[i];
    for (size_t i = 0; same && i < body.size(); ++i) same = body[i] == s->body[i];
    if (same) return s;
    return tir::WithChildren(s, std::move(a), std::move(b), std::move(indices), std::move(body));
  }

  Stmt VisitFor(const Stmt& s) {
    const tir::StmtNode& n = *s;
    PrimExpr min = ana_->Simplify(n.a);
    PrimExpr extent = ana_->Simplify(n.b);
    const bool thread = n.for_kind == tir::ForKind::kThreadBinding;
    if (!thread && extent->dtype.is_integral()) {
      if (ana_->CanProve(tir::LE(extent, tir::IntImm(0, extent->dtype)))) return tir::NoOp();
      if (ana_->CanProve(tir::EQ(extent, tir::IntImm(1, extent->dtype)))) {
        return Visit(tir::Substitute(n.body0(), {{n.var.get(), min}}));
      }
    }
    ana_->Bind(n.var, tir::Range{min, extent});
    Stmt body = Visit(n.body0());
    if (!thread && tir::IsNoOp(body)) return tir::NoOp();
    return Rebuild(s, min, extent, {}, {body});
  }

  Stmt VisitIf(const Stmt& s) {
    const tir::StmtNode& n = *s;
    PrimExpr cond = ana_->Simplify(n.a);
    Stmt else_case = n.body.size() > 1 ? n.body[1] : Stmt();
    if (ana_->CanProve(cond)) return Visit(n.body[0]);
    if (ana_->CanProve(tir::Not(cond))) return else_case ? Visit(else_case) : tir::NoOp();
    Stmt then_s, else_s;
    {
      auto scope = ana_->EnterConstraint(cond);
      then_s = Visit(n.body[0]);
    }
    if (else_case) {
      auto scope = ana_->EnterConstraint(tir::Not(cond));
      else_s = Visit(else_case);
    }
    bool then_empty = tir::IsNoOp(then_s);
    bool else_empty = !else_s || tir::IsNoOp(else_s);
    if (then_empty && else_empty && !HasOpaqueCall(cond)) return tir::NoOp();
    if (then_empty && !else_empty) return tir::IfThenElse(ana_->Simplify(tir::Not(cond)), else_s);
    if (else_empty) return Rebuild(s, cond, nullptr, {}, {then_s});
    return Rebuild(s, cond, nullptr, {}, {then_s, else_s});
  }

  Analyzer* ana_;
};

}  // namespace

absl::StatusOr<tir::PrimFunc> SimplifyPass(const tir::PrimFunc& f) {
  if (!f) return absl::InvalidArgumentError("SimplifyPass: null PrimFunc");
  Analyzer ana;
  // Symbolic shape variables are sizes: never negative.
  std::vector<Analyzer::ConstraintScope> shape_facts;
  for (const tir::Buffer& b : f->params) {
    for (const PrimExpr& d : b->shape) {
      if (d && d->kind == ExprKind::kVar && d->dtype.is_integral()) {
        shape_facts.push_back(ana.EnterConstraint(tir::GE(d, tir::IntImm(0, d->dtype))));
      }
    }
  }
  StmtSimplifier s(&ana);
  Stmt body = s.Visit(f->body);
  shape_facts.clear();
  if (body == f->body) return f;
  return tir::WithBody(f, body);
}

}  // namespace kiln::arith
