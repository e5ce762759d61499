// File: ir/traversal.h
//
// Generic, stack-safe traversals of the graph IR. None of them recurses on the
// C++ stack: a 100,000-node chain is visited with an explicit work list.
//
//   ForEachChild(e, [](const Expr& c) {...});   // direct children, in order
//   for (const Expr& n : PostOrder(root)) ...;  // each node once, children first
//
//   class MyPass : public ExprRewriter {        // memoized: a DAG stays a DAG
//     absl::StatusOr<Expr> PostVisit(const Expr& pre, Expr post) override {...}
//   };
//
// Children of each node, in order: Tuple fields; TupleGetItem tuple; Call op,
// args; Function params, body; Let var, value, body; If cond, then, else;
// Match data, clause bodies (pattern variables are binders, not children);
// RefCreate value; RefRead ref; RefWrite ref, value. Var, GlobalVar, Constant,
// Op and Constructor have none.
#ifndef KILN_IR_TRAVERSAL_H_
#define KILN_IR_TRAVERSAL_H_

#include <functional>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/expr.h"

namespace kiln {

template <typename F>
void ForEachChild(const ExprNode* e, F&& f) {
  switch (e->kind) {
    case ExprKind::kTuple:
      for (const Expr& c : static_cast<const TupleNode*>(e)->fields) f(c);
      break;
    case ExprKind::kTupleGetItem: f(static_cast<const TupleGetItemNode*>(e)->tuple); break;
    case ExprKind::kCall: {
      const auto* n = static_cast<const CallNode*>(e);
      f(n->op);
      for (const Expr& c : n->args) f(c);
      break;
    }
    case ExprKind::kFunction: {
      const auto* n = static_cast<const FunctionNode*>(e);
      for (const Var& p : n->params) f(Expr(p));
      f(n->body);
      break;
    }
    case ExprKind::kLet: {
      const auto* n = static_cast<const LetNode*>(e);
      f(Expr(n->var));
      f(n->value);
      f(n->body);
      break;
    }
    case ExprKind::kIf: {
      const auto* n = static_cast<const IfNode*>(e);
      f(n->cond);
      f(n->true_branch);
      f(n->false_branch);
      break;
    }
    case ExprKind::kMatch: {
      const auto* n = static_cast<const MatchNode*>(e);
      f(n->data);
      for (const Clause& c : n->clauses) f(c.rhs);
      break;
    }
    case ExprKind::kRefCreate: f(static_cast<const RefCreateNode*>(e)->value); break;
    case ExprKind::kRefRead: f(static_cast<const RefReadNode*>(e)->ref); break;
    case ExprKind::kRefWrite: {
      const auto* n = static_cast<const RefWriteNode*>(e);
      f(n->ref);
      f(n->value);
      break;
    }
    default: break;
  }
}

template <typename F>
void ForEachChild(const Expr& e, F&& f) {
  ForEachChild(e.get(), std::forward<F>(f));
}

std::vector<Expr> Children(const Expr& e);

// Rebuilds `e` with new children (in ForEachChild order), keeping its
// attributes, types annotations and span. Returns `e` itself when every child
// is unchanged. Fails if a child that must be a Var is not one.
absl::StatusOr<Expr> WithNewChildren(const Expr& e, const std::vector<Expr>& children);

// Every node reachable from `root`, each once, children before parents. With
// `enter_functions` false, the bodies of nested Functions are not entered
// (the Function node itself is still listed).
std::vector<Expr> PostOrder(const Expr& root, bool enter_functions = true);

// Calls `f` on every node reachable from root, children first.
void PostOrderVisit(const Expr& root, const std::function<void(const Expr&)>& f);

// A memoized, iterative rewriter. Rewrite(root) visits every node once,
// children first, and rebuilds a node only when a child changed.
class ExprRewriter {
 public:
  virtual ~ExprRewriter() = default;
  absl::StatusOr<Expr> Rewrite(const Expr& root);

 protected:
  // Called before a node's children are visited. Returning a value replaces
  // the node and skips its children.
  virtual absl::StatusOr<std::optional<Expr>> PreVisit(const Expr& /*pre*/) {
    return std::optional<Expr>();
  }
  // Called after the children are rewritten; `post` is the node rebuilt with
  // the new children (or `pre` itself if none changed).
  virtual absl::StatusOr<Expr> PostVisit(const Expr& /*pre*/, Expr post) { return post; }

  // The rewritten form of a node already visited, or null.
  Expr Memo(const Expr& e) const;

 private:
  absl::flat_hash_map<const ExprNode*, Expr> memo_;
};

// Replaces variables by expressions everywhere in `e` (a DAG-preserving rewrite).
absl::StatusOr<Expr> Substitute(const Expr& e,
                                const absl::flat_hash_map<const VarNode*, Expr>& subst);

// Variables used in `e` that no enclosing Function, Let or pattern binds, in
// order of first use.
std::vector<Var> FreeVars(const Expr& e);

}  // namespace kiln

#endif  // KILN_IR_TRAVERSAL_H_
