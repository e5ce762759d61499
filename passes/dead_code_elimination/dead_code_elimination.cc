#include "passes/dead_code_elimination/dead_code_elimination.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "passes/infra/expr_util.h"

namespace kiln::passes {
namespace {

// Marks every node the result needs. A pure let value is needed only once its
// variable is; an effectful one always.
absl::flat_hash_set<const ExprNode*> LiveNodes(
    const Expr& root, const absl::flat_hash_set<const ExprNode*>& effectful) {
  absl::flat_hash_set<const ExprNode*> live;
  absl::flat_hash_map<const VarNode*, const ExprNode*> pending;  // let var -> its value
  std::vector<const ExprNode*> work = {root.get()};
  auto push = [&](const Expr& e) {
    if (!live.contains(e.get())) work.push_back(e.get());
  };
  while (!work.empty()) {
    const ExprNode* n = work.back();
    work.pop_back();
    if (!live.insert(n).second) continue;
    switch (n->kind) {
      case ExprKind::kVar: {
        auto it = pending.find(static_cast<const VarNode*>(n));
        if (it != pending.end() && !live.contains(it->second)) work.push_back(it->second);
        break;
      }
      case ExprKind::kLet: {
        const auto* l = static_cast<const LetNode*>(n);
        if (effectful.contains(l->value.get()) || live.contains(l->var.get()))
          push(l->value);
        else
          pending.emplace(l->var.get(), l->value.get());
        push(l->body);
        break;
      }
      case ExprKind::kFunction: push(static_cast<const FunctionNode*>(n)->body); break;
      default: ForEachChild(n, [&](const Expr& c) { push(c); });
    }
  }
  return live;
}

class DeadLetRemover : public ExprRewriter {
 public:
  DeadLetRemover(const absl::flat_hash_set<const ExprNode*>& live,
                 const absl::flat_hash_set<const ExprNode*>& effectful)
      : live_(live), effectful_(effectful) {}

 protected:
  absl::StatusOr<Expr> PostVisit(const Expr& pre, Expr post) override {
    const auto* l = pre.as<LetNode>();
    if (l == nullptr || live_.contains(l->var.get()) || effectful_.contains(l->value.get()))
      return post;
    return post.as<LetNode>()->body;
  }

 private:
  const absl::flat_hash_set<const ExprNode*>& live_;
  const absl::flat_hash_set<const ExprNode*>& effectful_;
};

absl::StatusOr<Function> Run(const Function& f) {
  absl::flat_hash_set<const ExprNode*> effectful = EffectfulNodes(f->body);
  absl::flat_hash_set<const ExprNode*> live = LiveNodes(f->body, effectful);
  DeadLetRemover remover(live, effectful);
  KILN_ASSIGN_OR_RETURN(Expr body, remover.Rewrite(f->body));
  if (body.get() == f->body.get()) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

}  // namespace

PassPtr DeadCodeElimination() {
  return MakeFunctionPass({"DeadCodeElimination", 1, {}},
                          [](const Function& f, const Module&, const PassContext&) {
                            return Run(f);
                          });
}

}  // namespace kiln::passes
