// File: ir/tir_functor.cc
#include "ir/tir_functor.h"

namespace kiln::tir {

void StmtExprVisitor::VisitExpr_(const ExprNode* e) {
  for (const PrimExpr& a : e->args) VisitExpr(a);
  for (const IterVar& iv : e->axes) {
    VisitExpr(iv->dom.min);
    VisitExpr(iv->dom.extent);
  }
}

void StmtExprVisitor::VisitStmt_(const StmtNode* s) {
  VisitExpr(s->a);
  VisitExpr(s->b);
  for (const PrimExpr& i : s->indices) VisitExpr(i);
  for (const Stmt& c : s->body) VisitStmt(c);
}

PrimExpr WithArgs(const PrimExpr& e, std::vector<PrimExpr> args) {
  Ref<ExprNode> n(new ExprNode(*e));
  n->args = std::move(args);
  // Recompute lanes-dependent types where they derive from operands.
  switch (n->kind) {
    case ExprKind::kLoad: {
      int lanes = 1;
      for (const PrimExpr& i : n->args) lanes = std::max(lanes, i->dtype.lanes());
      n->dtype = DataType(n->dtype.code(), n->dtype.bits(), lanes);
      break;
    }
    default:
      break;
  }
  return n;
}

Stmt WithChildren(const Stmt& s, PrimExpr a, PrimExpr b, std::vector<PrimExpr> indices,
                  std::vector<Stmt> body) {
  if (s->kind == StmtKind::kSeq) return Seq(std::move(body));
  Ref<StmtNode> n(new StmtNode(*s));
  n->a = std::move(a);
  n->b = std::move(b);
  n->indices = std::move(indices);
  n->body = std::move(body);
  return n;
}

PrimExpr StmtExprMutator::VisitExpr_(const PrimExpr& e) { return MutateChildren(e); }
Stmt StmtExprMutator::VisitStmt_(const Stmt& s) { return MutateChildren(s); }

PrimExpr StmtExprMutator::MutateChildren(const PrimExpr& e) {
  if (e->args.empty()) return e;
  std::vector<PrimExpr> args;
  args.reserve(e->args.size());
  bool changed = false;
  for (const PrimExpr& a : e->args) {
    args.push_back(VisitExpr(a));
    changed |= !(args.back() == a);
  }
  if (!changed) return e;
  return WithArgs(e, std::move(args));
}

Stmt StmtExprMutator::MutateChildren(const Stmt& s) {
  bool changed = false;
  PrimExpr a = VisitExpr(s->a);
  changed |= !(a == s->a);
  PrimExpr b = VisitExpr(s->b);
  changed |= !(b == s->b);
  std::vector<PrimExpr> indices;
  indices.reserve(s->indices.size());
  for (const PrimExpr& i : s->indices) {
    indices.push_back(VisitExpr(i));
    changed |= !(indices.back() == i);
  }
  std::vector<Stmt> body;
  body.reserve(s->body.size());
  for (const Stmt& c : s->body) {
    body.push_back(VisitStmt(c));
    changed |= !(body.back() == c);
  }
  if (!changed) return s;
  return WithChildren(s, std::move(a), std::move(b), std::move(indices), std::move(body));
}

namespace {

class Substituter : public StmtExprMutator {
 public:
  explicit Substituter(const VarMap& vmap) : vmap_(vmap) {}

 protected:
  PrimExpr VisitExpr_(const PrimExpr& e) override {
    if (e->kind == ExprKind::kVar) {
      auto it = vmap_.find(e.get());
      return it == vmap_.end() ? e : it->second;
    }
    return MutateChildren(e);
  }
  Stmt VisitStmt_(const Stmt& s) override {
    Stmt r = MutateChildren(s);
    // A For/Let whose var is substituted by another var keeps the binding consistent.
    if (r->var && (r->kind == StmtKind::kFor || r->kind == StmtKind::kLetStmt)) {
      auto it = vmap_.find(r->var.get());
      if (it != vmap_.end() && it->second->kind == ExprKind::kVar) {
        Ref<StmtNode> n(new StmtNode(*r));
        n->var = it->second;
        return n;
      }
    }
    return r;
  }

 private:
  const VarMap& vmap_;
};

class PostOrder : public StmtExprVisitor {
 public:
  PostOrder(const std::function<void(const ExprNode*)>& fe,
            const std::function<void(const StmtNode*)>& fs)
      : fe_(fe), fs_(fs) {}

 protected:
  void VisitExpr_(const ExprNode* e) override {
    StmtExprVisitor::VisitExpr_(e);
    if (fe_) fe_(e);
  }
  void VisitStmt_(const StmtNode* s) override {
    StmtExprVisitor::VisitStmt_(s);
    if (fs_) fs_(s);
  }

 private:
  const std::function<void(const ExprNode*)>& fe_;
  const std::function<void(const StmtNode*)>& fs_;
};

}  // namespace

PrimExpr Substitute(const PrimExpr& e, const VarMap& vmap) {
  if (vmap.empty()) return e;
  Substituter s(vmap);
  return s.VisitExpr(e);
}

Stmt Substitute(const Stmt& s, const VarMap& vmap) {
  if (vmap.empty()) return s;
  Substituter sub(vmap);
  return sub.VisitStmt(s);
}

void PostOrderVisit(const Stmt& s, const std::function<void(const ExprNode*)>& fexpr,
                    const std::function<void(const StmtNode*)>& fstmt) {
  PostOrder v(fexpr, fstmt);
  v.VisitStmt(s);
}

void PostOrderVisit(const PrimExpr& e, const std::function<void(const ExprNode*)>& fexpr) {
  std::function<void(const StmtNode*)> none;
  PostOrder v(fexpr, none);
  v.VisitExpr(e);
}

bool UsesVar(const PrimExpr& e, const std::function<bool(const ExprNode*)>& pred) {
  bool found = false;
  PostOrderVisit(e, [&](const ExprNode* n) {
    if (!found && n->kind == ExprKind::kVar && pred(n)) found = true;
  });
  return found;
}

bool UsesVar(const Stmt& s, const std::function<bool(const ExprNode*)>& pred) {
  bool found = false;
  PostOrderVisit(s, [&](const ExprNode* n) {
    if (!found && n->kind == ExprKind::kVar && pred(n)) found = true;
  });
  return found;
}

bool ExprDeepEqual(const PrimExpr& a, const PrimExpr& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->kind != b->kind || a->dtype != b->dtype) return false;
  switch (a->kind) {
    case ExprKind::kVar: return false;  // identity only
    case ExprKind::kIntImm: return a->int_value == b->int_value;
    case ExprKind::kFloatImm: return a->float_value == b->float_value;
    case ExprKind::kStringImm: return a->name == b->name;
    default: break;
  }
  if (a->name != b->name || a->int_value != b->int_value || !(a->buffer == b->buffer) ||
      !(a->producer == b->producer) || a->reduce_kind != b->reduce_kind ||
      a->args.size() != b->args.size() || a->axes.size() != b->axes.size()) {
    return false;
  }
  for (size_t i = 0; i < a->axes.size(); ++i) {
    if (!(a->axes[i] == b->axes[i])) return false;
  }
  for (size_t i = 0; i < a->args.size(); ++i) {
    if (!ExprDeepEqual(a->args[i], b->args[i])) return false;
  }
  return true;
}

}  // namespace kiln::tir
