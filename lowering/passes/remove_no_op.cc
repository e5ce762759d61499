// File: lowering/passes/remove_no_op.cc
#include "lowering/passes/remove_no_op.h"

#include <vector>

#include "ir/tir_functor.h"
#include "lowering/passes/pass_util.h"

namespace kiln::tir::transform {
namespace {

// What is left of evaluating `exprs` for their effects only.
Stmt EffectsOf(const std::vector<PrimExpr>& exprs) {
  std::vector<Stmt> out;
  for (const PrimExpr& e : exprs) {
    if (e && !IsSideEffectFree(e)) out.push_back(Evaluate(e));
  }
  return Seq(std::move(out));
}

class NoOpRemover : public StmtExprMutator {
 protected:
  Stmt VisitStmt_(const Stmt& s) override {
    Stmt r = MutateChildren(s);
    switch (r->kind) {
      case StmtKind::kFor: {
        int64_t ext = 0;
        if (IsNoOp(r->body0()) || (IsConstInt(r->b, &ext) && ext <= 0))
          return EffectsOf({r->a, r->b});
        return r;
      }
      case StmtKind::kLetStmt:
        if (IsNoOp(r->body0())) return EffectsOf({r->a});
        return r;
      case StmtKind::kAttr:
        if (IsNoOp(r->body0())) return EffectsOf({r->a});
        return r;
      case StmtKind::kAllocate:
        if (IsNoOp(r->body0())) return NoOp();
        return r;
      case StmtKind::kIfThenElse: {
        Stmt then_case = r->body[0];
        Stmt else_case = r->body.size() > 1 ? r->body[1] : NoOp();
        int64_t c = 0;
        PrimExpr cond = r->a;
        if (cond->kind == ExprKind::kCall && cond->name == "likely" && cond->args.size() == 1) {
          cond = cond->args[0];
        }
        if (IsConstInt(cond, &c)) return c != 0 ? then_case : else_case;
        if (IsNoOp(then_case) && IsNoOp(else_case)) return EffectsOf({r->a});
        if (IsNoOp(then_case)) return IfThenElse(Not(r->a), else_case);
        return r;
      }
      case StmtKind::kStore: {
        const PrimExpr& v = r->a;
        if (v->kind == ExprKind::kLoad && v->buffer && r->buffer &&
            v->buffer->data == r->buffer->data && v->args.size() == r->indices.size() &&
            v->dtype == r->a->dtype) {
          bool same = v->buffer->shape.size() == r->buffer->shape.size();
          for (size_t k = 0; same && k < v->args.size(); ++k) {
            same = ExprDeepEqual(v->args[k], r->indices[k]);
          }
          if (same) return NoOp();
        }
        return r;
      }
      case StmtKind::kEvaluate:
        if (IsSideEffectFree(r->a)) return NoOp();
        return r;
      default:
        return r;
    }
  }
};

}  // namespace

Stmt RemoveNoOpStmt(const Stmt& s) {
  NoOpRemover r;
  return r.VisitStmt(s);
}

absl::StatusOr<PrimFunc> RemoveNoOp(const PrimFunc& f) {
  if (!f || !f->body) return PassError("remove_no_op", f, "null function or body");
  Stmt body = RemoveNoOpStmt(f->body);
  if (body == f->body) return f;
  return WithBody(f, body);
}

}  // namespace kiln::tir::transform
