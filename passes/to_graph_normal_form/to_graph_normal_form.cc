#include "passes/to_graph_normal_form/to_graph_normal_form.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "passes/infra/expr_util.h"

namespace kiln::passes {
namespace {

bool IsRecursiveFunction(const LetNode* l) {
  if (l->value->kind != ExprKind::kFunction) return false;
  for (const Var& v : FreeVars(l->value))
    if (v.get() == l->var.get()) return true;
  return false;
}

}  // namespace

absl::StatusOr<Expr> ToGraphNormalFormExpr(const Expr& root) {
  if (!root) return absl::InvalidArgumentError("null expression");
  const absl::flat_hash_set<const ExprNode*> effectful = EffectfulNodes(root);
  // The lets to dissolve: var -> the original value node.
  absl::flat_hash_map<const VarNode*, const ExprNode*> inline_var;
  for (const Expr& e : PostOrder(root))
    if (const auto* l = e.as<LetNode>())
      if (!effectful.contains(l->value.get()) && !IsRecursiveFunction(l))
        inline_var.emplace(l->var.get(), l->value.get());

  // An iterative, memoized rewrite that visits a let's value before its body
  // and never its bound variable, so uses of the variable map to the already
  // rewritten value.
  absl::flat_hash_map<const ExprNode*, Expr> memo;
  struct Item {
    Expr node;
    bool expanded;
  };
  std::vector<Item> stack = {{root, false}};
  std::vector<Expr> kids;
  while (!stack.empty()) {
    Item& top = stack.back();
    if (memo.contains(top.node.get())) {
      stack.pop_back();
      continue;
    }
    if (const auto* v = top.node.as<VarNode>()) {
      auto it = inline_var.find(v);
      Expr out = top.node;
      if (it != inline_var.end()) {
        auto m = memo.find(it->second);
        if (m == memo.end())
          return absl::InternalError("ToGraphNormalForm: a variable is used outside its let");
        out = m->second;
      }
      memo.emplace(top.node.get(), out);
      stack.pop_back();
      continue;
    }
    const auto* let = top.node.as<LetNode>();
    if (!top.expanded) {
      top.expanded = true;
      Expr node = top.node;
      if (let != nullptr) {  // value first (popped first), then body
        stack.push_back({let->body, false});
        stack.push_back({let->value, false});
        continue;
      }
      kids = Children(node);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it)
        if (!memo.contains(it->get())) stack.push_back({*it, false});
      continue;
    }
    Expr node = std::move(top.node);
    stack.pop_back();
    Expr out;
    if (let != nullptr && inline_var.contains(let->var.get())) {
      out = memo.at(let->body.get());
    } else if (let != nullptr) {
      KILN_ASSIGN_OR_RETURN(out, WithNewChildren(node, {let->var, memo.at(let->value.get()),
                                                        memo.at(let->body.get())}));
    } else {
      kids.clear();
      ForEachChild(node, [&](const Expr& c) {
        auto m = memo.find(c.get());
        kids.push_back(m == memo.end() ? c : m->second);
      });
      KILN_ASSIGN_OR_RETURN(out, WithNewChildren(node, kids));
    }
    if (out.get() != node.get() && !out->checked_type() && node->checked_type())
      out->set_checked_type(node->checked_type());
    memo.emplace(node.get(), std::move(out));
  }
  return memo.at(root.get());
}

PassPtr ToGraphNormalForm() {
  return MakeFunctionPass(
      {"ToGraphNormalForm", 0, {}},
      [](const Function& f, const Module&, const PassContext&) -> absl::StatusOr<Function> {
        KILN_ASSIGN_OR_RETURN(Expr body, ToGraphNormalFormExpr(f->body));
        if (body.get() == f->body.get()) return f;
        return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
      });
}

}  // namespace kiln::passes
