// File: lowering/passes/pass_util.cc
#include "lowering/passes/pass_util.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/tir_functor.h"

namespace kiln::tir::transform {

absl::Status PassError(absl::string_view pass, const PrimFunc& f, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(pass, ": PrimFunc '", f ? f->name : "<null>", "': ", what));
}

absl::Status PassInternalError(absl::string_view pass, const PrimFunc& f, absl::string_view what) {
  return absl::InternalError(
      absl::StrCat(pass, ": PrimFunc '", f ? f->name : "<null>", "': internal error: ", what));
}

bool IsSideEffectFree(const PrimExpr& e) {
  bool pure = true;
  PostOrderVisit(e, [&](const ExprNode* n) {
    if (n->kind == ExprKind::kCall && n->effect == CallEffect::kOpaque) pure = false;
  });
  return pure;
}

namespace {

// Rewrites buffers (by data var) and vars. In "renew" mode every binding met
// gets a fresh var; buffers keep their own shape and take the new data var.
// In "replace" mode buffers are swapped for the given ones.
class BufferVarRewriter : public StmtExprMutator {
 public:
  explicit BufferVarRewriter(bool renew) : renew_(renew) {}

  VarMap vars;        // var -> replacement expression
  BufferMap buffers;  // data var -> replacement buffer (replace mode)

 protected:
  Buffer MapBuffer(const Buffer& b) {
    if (!b) return b;
    if (!renew_) {
      auto it = buffers.find(b->data.get());
      return it == buffers.end() ? b : it->second;
    }
    auto it = vars.find(b->data.get());
    if (it == vars.end()) return b;
    auto memo = memo_.find(b.get());
    if (memo != memo_.end() && memo->second->data == it->second) return memo->second;
    Ref<BufferNode> n(new BufferNode(*b));
    n->data = it->second;
    Buffer nb(n);
    memo_[b.get()] = nb;
    return nb;
  }

  Var Fresh(const Var& v) {
    Var nv = MakeVar(v->name, v->dtype);
    vars[v.get()] = nv;
    return nv;
  }

  PrimExpr VisitExpr_(const PrimExpr& e) override {
    switch (e->kind) {
      case ExprKind::kVar: {
        auto it = vars.find(e.get());
        if (it != vars.end()) return it->second;
        if (!renew_) {
          auto b = buffers.find(e.get());
          if (b != buffers.end()) return b->second->data;
        }
        return e;
      }
      case ExprKind::kLet: {
        if (!renew_) break;
        PrimExpr value = VisitExpr(e->args[1]);
        Var nv = Fresh(e->args[0]);
        PrimExpr body = VisitExpr(e->args[2]);
        vars.erase(e->args[0].get());
        return Let(nv, value, body);
      }
      case ExprKind::kLoad: {
        PrimExpr r = MutateChildren(e);
        Buffer nb = MapBuffer(r->buffer);
        if (nb == r->buffer) return r;
        Ref<ExprNode> n(new ExprNode(*r));
        n->buffer = nb;
        return PrimExpr(n);
      }
      default:
        break;
    }
    return MutateChildren(e);
  }

  Stmt VisitStmt_(const Stmt& s) override {
    if (renew_ && (s->kind == StmtKind::kFor || s->kind == StmtKind::kLetStmt)) {
      PrimExpr a = VisitExpr(s->a);
      PrimExpr b = VisitExpr(s->b);
      Var nv = Fresh(s->var);
      Stmt body = VisitStmt(s->body0());
      vars.erase(s->var.get());
      Ref<StmtNode> n(new StmtNode(*s));
      n->var = nv;
      n->a = a;
      n->b = b;
      n->body = {body};
      return Stmt(n);
    }
    if (renew_ && s->kind == StmtKind::kAllocate) {
      Var nv = Fresh(s->buffer->data);
      Buffer nb = MapBuffer(s->buffer);
      Stmt body = VisitStmt(s->body0());
      vars.erase(s->buffer->data.get());
      Ref<StmtNode> n(new StmtNode(*s));
      n->buffer = nb;
      n->var = nv;
      n->body = {body};
      return Stmt(n);
    }
    Stmt r = MutateChildren(s);
    Buffer nb = MapBuffer(r->buffer);
    Ref<const Object> node = r->node;
    if (node) {
      if (const auto* bn = dynamic_cast<const BufferNode*>(node.get())) {
        Buffer old(const_cast<BufferNode*>(bn));
        Buffer mapped = MapBuffer(old);
        if (!(mapped == old)) node = mapped;
      }
    }
    if (nb == r->buffer && node == r->node) return r;
    Ref<StmtNode> n(new StmtNode(*r));
    n->buffer = nb;
    n->node = node;
    if (n->kind == StmtKind::kAllocate) n->var = nb->data;
    return Stmt(n);
  }

 private:
  bool renew_;
  std::unordered_map<const BufferNode*, Buffer> memo_;
};

}  // namespace

Stmt RenewDefs(const Stmt& s) {
  BufferVarRewriter r(/*renew=*/true);
  return r.VisitStmt(s);
}

Stmt ReplaceBuffers(const Stmt& s, const BufferMap& by_data_var) {
  if (by_data_var.empty()) return s;
  BufferVarRewriter r(/*renew=*/false);
  r.buffers = by_data_var;
  return r.VisitStmt(s);
}

int64_t LeafStmtCount(const Stmt& s) {
  if (!s) return 0;
  switch (s->kind) {
    case StmtKind::kStore:
    case StmtKind::kEvaluate:
      return IsNoOp(s) ? 0 : 1;
    case StmtKind::kFor: {
      int64_t ext = 0;
      int64_t inner = LeafStmtCount(s->body0());
      if (IsConstInt(s->b, &ext)) return inner * std::max<int64_t>(ext, 0);
      return inner * 64;  // unknown trip count: assume a large one
    }
    default: {
      int64_t n = 0;
      for (const Stmt& c : s->body) n += LeafStmtCount(c);
      return n;
    }
  }
}

PrimExpr BroadcastTo(const PrimExpr& e, int lanes) {
  if (lanes <= 1 || e->dtype.lanes() == lanes) return e;
  return Broadcast(e, lanes);
}

namespace {

bool IsRamp(const PrimExpr& e) { return e->kind == ExprKind::kRamp; }
bool IsBroadcast(const PrimExpr& e) { return e->kind == ExprKind::kBroadcast; }
// The scalar value of a scalar or a Broadcast, or null.
PrimExpr ScalarOf(const PrimExpr& e) {
  if (e->dtype.lanes() == 1) return e;
  if (IsBroadcast(e)) return e->args[0];
  return nullptr;
}

}  // namespace

PrimExpr VecAdd(const PrimExpr& a, const PrimExpr& b) {
  int lanes = std::max(a->dtype.lanes(), b->dtype.lanes());
  if (lanes == 1) return a + b;
  PrimExpr sa = ScalarOf(a), sb = ScalarOf(b);
  if (sa && sb) return Broadcast(sa + sb, lanes);
  if (IsRamp(a) && sb) return Ramp(a->args[0] + sb, a->args[1], lanes);
  if (IsRamp(b) && sa) return Ramp(sa + b->args[0], b->args[1], lanes);
  if (IsRamp(a) && IsRamp(b)) return Ramp(a->args[0] + b->args[0], a->args[1] + b->args[1], lanes);
  if (IsConstValue(sb, 0)) return a;
  if (IsConstValue(sa, 0)) return b;
  return Add(BroadcastTo(a, lanes), BroadcastTo(b, lanes));
}

PrimExpr VecSub(const PrimExpr& a, const PrimExpr& b) {
  int lanes = std::max(a->dtype.lanes(), b->dtype.lanes());
  if (lanes == 1) return a - b;
  PrimExpr sa = ScalarOf(a), sb = ScalarOf(b);
  if (sa && sb) return Broadcast(sa - sb, lanes);
  if (IsRamp(a) && sb) return Ramp(a->args[0] - sb, a->args[1], lanes);
  if (IsRamp(b) && sa) return Ramp(sa - b->args[0], -b->args[1], lanes);
  if (IsRamp(a) && IsRamp(b)) return Ramp(a->args[0] - b->args[0], a->args[1] - b->args[1], lanes);
  if (IsConstValue(sb, 0)) return a;
  return Sub(BroadcastTo(a, lanes), BroadcastTo(b, lanes));
}

PrimExpr VecMul(const PrimExpr& a, const PrimExpr& b) {
  int lanes = std::max(a->dtype.lanes(), b->dtype.lanes());
  if (lanes == 1) return a * b;
  PrimExpr sa = ScalarOf(a), sb = ScalarOf(b);
  if (sa && sb) return Broadcast(sa * sb, lanes);
  if (IsRamp(a) && sb) return Ramp(a->args[0] * sb, a->args[1] * sb, lanes);
  if (IsRamp(b) && sa) return Ramp(sa * b->args[0], sa * b->args[1], lanes);
  if (IsConstValue(sb, 1)) return a;
  if (IsConstValue(sa, 1)) return b;
  return Mul(BroadcastTo(a, lanes), BroadcastTo(b, lanes));
}

}  // namespace kiln::tir::transform
