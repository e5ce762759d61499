// File: passes/infra/expr_util.h
//
// Small helpers shared by the graph passes: recognising operator calls,
// reading inferred tensor types, building calls, a rewriter that keeps the
// inferred types on the nodes it rebuilds, and an effect analysis.
//
//   if (const CallNode* c = AsOpCall(e, "reshape")) ...
//   TensorType t = TensorTypeOf(e);              // null unless inferred
//   KILN_ASSIGN_OR_RETURN(Expr y, CallOpNamed("add", {x, b}));
#ifndef KILN_PASSES_INFRA_EXPR_UTIL_H_
#define KILN_PASSES_INFRA_EXPR_UTIL_H_

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/expr.h"
#include "ir/traversal.h"

namespace kiln::passes {

// The call node when `e` calls the operator `op_name`, else null.
const CallNode* AsOpCall(const Expr& e, absl::string_view op_name);
// The inferred type of `e` when it is a tensor type, else null.
TensorType TensorTypeOf(const Expr& e);
// Builds `op_name(args)` with `attrs` (null: the defaults).
absl::StatusOr<Expr> CallOpNamed(absl::string_view op_name, std::vector<Expr> args,
                                 Attrs attrs = nullptr);
// Var, GlobalVar, Constant, Op, Constructor.
bool IsAtom(const ExprNode* e);

// An ExprRewriter whose rewritten nodes keep the inferred type of the node
// they replace (a rebuilt node is new and has none). Subclasses implement
// Transform instead of PostVisit.
class TypedRewriter : public ExprRewriter {
 protected:
  virtual absl::StatusOr<Expr> Transform(const Expr& /*pre*/, Expr post) { return post; }

 private:
  absl::StatusOr<Expr> PostVisit(const Expr& pre, Expr post) final;
};

// Nodes whose evaluation may have a side effect: RefCreate, RefWrite, calls of
// anything but an operator or a constructor (an unknown function may write a
// reference), and every node containing one, not looking inside Function
// bodies (building a closure has no effect). One linear bottom-up walk.
absl::flat_hash_set<const ExprNode*> EffectfulNodes(const Expr& root);

}  // namespace kiln::passes

#endif  // KILN_PASSES_INFRA_EXPR_UTIL_H_
