// File: ir/tir_functor.h
//
// Visitors and mutators of the loop IR, and the small utilities every loop
// pass needs (substitution, post-order visits, deep equality).
//
// StmtExprVisitor visits every child; override VisitExpr_/VisitStmt_ and call
// the base to keep descending. StmtExprMutator rebuilds a node only when a
// child changed, so an untouched subtree keeps its identity.
//
//   class CountLoads : public StmtExprVisitor {
//     void VisitExpr_(const ExprNode* e) override {
//       if (e->kind == ExprKind::kLoad) ++n;
//       StmtExprVisitor::VisitExpr_(e);
//     }
//    public: int n = 0;
//   };
//
// Loop IR depth is bounded by the size of one fused operator (FuseOps caps
// group depth), so these recurse on the C++ stack.
#ifndef KILN_IR_TIR_FUNCTOR_H_
#define KILN_IR_TIR_FUNCTOR_H_

#include <functional>
#include <unordered_map>

#include "ir/tir.h"

namespace kiln::tir {

class StmtExprVisitor {
 public:
  virtual ~StmtExprVisitor() = default;
  void VisitExpr(const PrimExpr& e) {
    if (e) VisitExpr_(e.get());
  }
  void VisitStmt(const Stmt& s) {
    if (s) VisitStmt_(s.get());
  }

 protected:
  // Default: visit children (args, buffer shape not included, reduce axes' ranges).
  virtual void VisitExpr_(const ExprNode* e);
  virtual void VisitStmt_(const StmtNode* s);
};

class StmtExprMutator {
 public:
  virtual ~StmtExprMutator() = default;
  PrimExpr VisitExpr(const PrimExpr& e) { return e ? VisitExpr_(e) : e; }
  Stmt VisitStmt(const Stmt& s) { return s ? VisitStmt_(s) : s; }

 protected:
  // Default: mutate children; rebuild only if one changed.
  virtual PrimExpr VisitExpr_(const PrimExpr& e);
  virtual Stmt VisitStmt_(const Stmt& s);
  // Helpers for overrides.
  PrimExpr MutateChildren(const PrimExpr& e);
  Stmt MutateChildren(const Stmt& s);
};

// Copies with a replaced field; the copy starts with no references.
PrimExpr WithArgs(const PrimExpr& e, std::vector<PrimExpr> args);
Stmt WithChildren(const Stmt& s, PrimExpr a, PrimExpr b, std::vector<PrimExpr> indices,
                  std::vector<Stmt> body);

using VarMap = std::unordered_map<const ExprNode*, PrimExpr>;

// Replaces each Var (by identity) found in `vmap`. Loads of a buffer whose data
// var is mapped are not rewritten (buffers are not expressions).
PrimExpr Substitute(const PrimExpr& e, const VarMap& vmap);
Stmt Substitute(const Stmt& s, const VarMap& vmap);

// Calls fexpr on every expression node and fstmt on every statement, children first.
void PostOrderVisit(const Stmt& s, const std::function<void(const ExprNode*)>& fexpr,
                    const std::function<void(const StmtNode*)>& fstmt = nullptr);
void PostOrderVisit(const PrimExpr& e, const std::function<void(const ExprNode*)>& fexpr);

// True when `e` (or `s`) mentions any var for which `pred` is true.
bool UsesVar(const PrimExpr& e, const std::function<bool(const ExprNode*)>& pred);
bool UsesVar(const Stmt& s, const std::function<bool(const ExprNode*)>& pred);

// Structural equality of expressions (vars by identity, buffers by identity).
bool ExprDeepEqual(const PrimExpr& a, const PrimExpr& b);

}  // namespace kiln::tir

#endif  // KILN_IR_TIR_FUNCTOR_H_
