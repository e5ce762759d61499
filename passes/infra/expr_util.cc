#include "passes/infra/expr_util.h"

#include "ir/op.h"
#include "ir/status_macros.h"

namespace kiln::passes {

const CallNode* AsOpCall(const Expr& e, absl::string_view op_name) {
  const CallNode* c = e.as<CallNode>();
  if (c == nullptr) return nullptr;
  const OpNode* op = c->op.as<OpNode>();
  return (op != nullptr && op->name() == op_name) ? c : nullptr;
}

TensorType TensorTypeOf(const Expr& e) {
  if (!e) return nullptr;
  return e->checked_type().cast<TensorTypeNode>();
}

absl::StatusOr<Expr> CallOpNamed(absl::string_view op_name, std::vector<Expr> args, Attrs attrs) {
  KILN_ASSIGN_OR_RETURN(Op op, GetOp(op_name));
  KILN_ASSIGN_OR_RETURN(Call c, MakeCall(op, std::move(args), std::move(attrs)));
  return Expr(c);
}

bool IsAtom(const ExprNode* e) {
  switch (e->kind) {
    case ExprKind::kVar:
    case ExprKind::kGlobalVar:
    case ExprKind::kConstant:
    case ExprKind::kOp:
    case ExprKind::kConstructor: return true;
    default: return false;
  }
}

absl::StatusOr<Expr> TypedRewriter::PostVisit(const Expr& pre, Expr post) {
  KILN_ASSIGN_OR_RETURN(Expr out, Transform(pre, std::move(post)));
  if (out && out.get() != pre.get() && !out->checked_type() && pre->checked_type())
    out->set_checked_type(pre->checked_type());
  return out;
}

absl::flat_hash_set<const ExprNode*> EffectfulNodes(const Expr& root) {
  absl::flat_hash_set<const ExprNode*> out;
  for (const Expr& e : PostOrder(root)) {
    bool effect = false;
    switch (e->kind) {
      case ExprKind::kFunction: continue;  // building a closure is pure
      case ExprKind::kRefCreate:
      case ExprKind::kRefWrite: effect = true; break;
      case ExprKind::kCall: {
        const auto* c = static_cast<const CallNode*>(e.get());
        effect = c->op->kind != ExprKind::kOp && c->op->kind != ExprKind::kConstructor;
        break;
      }
      default: break;
    }
    if (!effect)
      ForEachChild(e, [&](const Expr& c) {
        if (c->kind != ExprKind::kFunction && out.contains(c.get())) effect = true;
      });
    if (effect) out.insert(e.get());
  }
  return out;
}

}  // namespace kiln::passes
