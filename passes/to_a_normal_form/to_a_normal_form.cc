#include "passes/to_a_normal_form/to_a_normal_form.h"

#include "ir/scope_tree.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "passes/infra/expr_util.h"

namespace kiln::passes {
namespace {


class Anf {
 public:
  absl::StatusOr<Expr> Run(const Expr& root) {
    if (IsAtom(root.get())) return root;
    Analyze(root);
    // Scopes are built innermost first: a child scope has a larger id.
    for (int k = static_cast<int>(scopes_.size()) - 1; k >= 0; --k) KILN_RETURN_IF_ERROR(Build(k));
    return scopes_[0].built;
  }

 private:
  struct Node {
    Expr expr;
    int uses = 0;
    int scope = -1;
    int first_child_scope = -1;
    bool let_value = false;  // bound directly by the let that uses it
    bool spliced = false;    // a let that is its scope's result: continues the scope
    Var var;                 // the variable that names it
    Expr rebuilt;
  };
  struct Scope {
    const ExprNode* result;
    std::vector<int> members;  // every node placed here, in post-order
    Expr built;
  };

  int IdOf(const ExprNode* e) const {
    auto it = ids_.find(e);
    return it == ids_.end() ? -1 : it->second;
  }

  void Analyze(const Expr& root) {
    for (const Expr& e : PostOrder(root)) {
      if (IsAtom(e.get())) continue;
      ids_.emplace(e.get(), static_cast<int>(nodes_.size()));
      Node n;
      n.expr = e;
      nodes_.push_back(std::move(n));
    }
    for (Node& n : nodes_)
      ForEachChild(n.expr, [&](const Expr& c) {
        int id = IdOf(c.get());
        if (id >= 0) nodes_[id].uses++;
      });
    const int root_id = IdOf(root.get());
    nodes_[root_id].uses++;
    nodes_[root_id].scope = tree_.Add(-1);
    scopes_.push_back({root.get(), {}, nullptr});
    auto use = [&](const Expr& c, int scope) {
      int id = IdOf(c.get());
      if (id < 0) return;
      nodes_[id].scope = nodes_[id].scope < 0 ? scope : tree_.Lca(nodes_[id].scope, scope);
    };
    auto open = [&](int parent, const Expr& result) {
      int s = tree_.Add(parent);
      scopes_.push_back({result.get(), {}, nullptr});
      return s;
    };
    for (int i = static_cast<int>(nodes_.size()) - 1; i >= 0; --i) {
      const ExprNode* n = nodes_[i].expr.get();
      const int s = nodes_[i].scope;
      switch (n->kind) {
        case ExprKind::kFunction: {
          const auto* f = static_cast<const FunctionNode*>(n);
          nodes_[i].first_child_scope = open(s, f->body);
          use(f->body, nodes_[i].first_child_scope);
          break;
        }
        case ExprKind::kIf: {
          const auto* f = static_cast<const IfNode*>(n);
          use(f->cond, s);
          int t = open(s, f->true_branch);
          int e = open(s, f->false_branch);
          nodes_[i].first_child_scope = t;
          use(f->true_branch, t);
          use(f->false_branch, e);
          break;
        }
        case ExprKind::kMatch: {
          const auto* m = static_cast<const MatchNode*>(n);
          use(m->data, s);
          for (size_t k = 0; k < m->clauses.size(); ++k) {
            int c = open(s, m->clauses[k].rhs);
            if (k == 0) nodes_[i].first_child_scope = c;
            use(m->clauses[k].rhs, c);
          }
          break;
        }
        case ExprKind::kLet: {
          const auto* l = static_cast<const LetNode*>(n);
          use(l->value, s);
          int v = IdOf(l->value.get());
          if (v >= 0 && nodes_[v].uses == 1) nodes_[v].let_value = true;
          nodes_[i].first_child_scope = open(s, l->body);
          use(l->body, nodes_[i].first_child_scope);
          break;
        }
        default: ForEachChild(n, [&](const Expr& c) { use(c, s); });
      }
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      Node& n = nodes_[i];
      n.spliced = n.expr->kind == ExprKind::kLet && n.uses == 1 &&
                  scopes_[n.scope].result == n.expr.get();
      scopes_[n.scope].members.push_back(static_cast<int>(i));
    }
    // A let-value node is named by its let's variable.
    for (Node& n : nodes_) {
      if (const auto* l = n.expr.as<LetNode>()) {
        int v = IdOf(l->value.get());
        if (v >= 0 && nodes_[v].let_value) nodes_[v].var = l->var;
      }
      if (!n.let_value && !n.spliced) n.var = MakeVar("x");
    }
  }

  Expr Atom(const Expr& c) const {
    int id = IdOf(c.get());
    return id < 0 ? c : Expr(nodes_[id].var);
  }

  absl::StatusOr<Expr> Rebuild(const Node& n) const {
    std::vector<Expr> kids;
    const ExprNode* e = n.expr.get();
    switch (e->kind) {
      case ExprKind::kFunction:
        for (const Var& p : static_cast<const FunctionNode*>(e)->params) kids.push_back(p);
        kids.push_back(scopes_[n.first_child_scope].built);
        break;
      case ExprKind::kIf:
        kids = {Atom(static_cast<const IfNode*>(e)->cond), scopes_[n.first_child_scope].built,
                scopes_[n.first_child_scope + 1].built};
        break;
      case ExprKind::kMatch: {
        const auto* m = static_cast<const MatchNode*>(e);
        kids.push_back(Atom(m->data));
        for (size_t k = 0; k < m->clauses.size(); ++k)
          kids.push_back(scopes_[n.first_child_scope + k].built);
        break;
      }
      case ExprKind::kLet: {
        const auto* l = static_cast<const LetNode*>(e);
        int v = IdOf(l->value.get());
        Expr value = (v >= 0 && nodes_[v].let_value) ? nodes_[v].rebuilt : Atom(l->value);
        kids = {l->var, value, scopes_[n.first_child_scope].built};
        break;
      }
      default: ForEachChild(e, [&](const Expr& c) { kids.push_back(Atom(c)); });
    }
    for (const Expr& k : kids)
      if (!k) return absl::InternalError("ToANormalForm: a scope was used before it was built");
    return WithNewChildren(n.expr, kids);
  }

  absl::Status Build(int k) {
    Scope& sc = scopes_[k];
    for (int id : sc.members) {
      KILN_ASSIGN_OR_RETURN(nodes_[id].rebuilt, Rebuild(nodes_[id]));
      if (nodes_[id].rebuilt.get() != nodes_[id].expr.get() && nodes_[id].expr->checked_type())
        nodes_[id].rebuilt->set_checked_type(nodes_[id].expr->checked_type());
    }
    int r = IdOf(sc.result);
    Expr body;
    if (r < 0) {
      body = Expr(const_cast<ExprNode*>(sc.result));
    } else if (nodes_[r].spliced) {
      body = nodes_[r].rebuilt;
    } else {
      body = nodes_[r].var;
    }
    for (auto it = sc.members.rbegin(); it != sc.members.rend(); ++it) {
      const Node& n = nodes_[*it];
      if (n.let_value || n.spliced) continue;
      KILN_ASSIGN_OR_RETURN(Let l, MakeLet(n.var, n.rebuilt, body));
      body = l;
    }
    sc.built = body;
    return absl::OkStatus();
  }

  std::vector<Node> nodes_;
  absl::flat_hash_map<const ExprNode*, int> ids_;
  std::vector<Scope> scopes_;
  ScopeTree tree_;
};

}  // namespace

absl::StatusOr<Expr> ToANormalFormExpr(const Expr& e) {
  Anf anf;
  return anf.Run(e);
}

PassPtr ToANormalForm() {
  return MakeFunctionPass(
      {"ToANormalForm", 0, {}},
      [](const Function& f, const Module&, const PassContext&) -> absl::StatusOr<Function> {
        KILN_ASSIGN_OR_RETURN(Expr body, ToANormalFormExpr(f->body));
        if (body.get() == f->body.get()) return f;
        return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
      });
}

}  // namespace kiln::passes
