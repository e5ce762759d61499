// File: lowering/passes/storage_rewrite.cc
#include "lowering/passes/storage_rewrite.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/tir_functor.h"
#include "lowering/passes/pass_util.h"

namespace kiln::tir::transform {
namespace {

using VarSet = std::unordered_set<const ExprNode*>;

// Data vars that appear as plain values (not as the buffer of a Load/Store).
VarSet EscapingVars(const Stmt& s) {
  VarSet out;
  PostOrderVisit(s, [&](const ExprNode* n) {
    if (n->kind == ExprKind::kVar && n->dtype == kHandleType) out.insert(n);
  });
  return out;
}

// Data vars that are read (Load) in s.
VarSet ReadVars(const Stmt& s) {
  VarSet out;
  PostOrderVisit(s, [&](const ExprNode* n) {
    if (n->kind == ExprKind::kLoad && n->buffer) out.insert(n->buffer->data.get());
  });
  return out;
}

// Data vars accessed (Load, Store, or as a value) in s.
VarSet UsedVars(const Stmt& s) {
  VarSet out;
  PostOrderVisit(
      s,
      [&](const ExprNode* n) {
        if (n->kind == ExprKind::kLoad && n->buffer) out.insert(n->buffer->data.get());
        if (n->kind == ExprKind::kVar && n->dtype == kHandleType) out.insert(n);
      },
      [&](const StmtNode* n) {
        if (n->kind == StmtKind::kStore && n->buffer) out.insert(n->buffer->data.get());
      });
  return out;
}

// ---- 1. Dead allocations --------------------------------------------------------

class DeadAllocRemover : public StmtExprMutator {
 public:
  DeadAllocRemover(VarSet read, VarSet escaping)
      : read_(std::move(read)), escaping_(std::move(escaping)) {}

 protected:
  Stmt VisitStmt_(const Stmt& s) override {
    if (s->kind == StmtKind::kAllocate) {
      const ExprNode* v = s->buffer->data.get();
      if (!read_.count(v) && !escaping_.count(v)) {
        dead_.insert(v);
        Stmt body = VisitStmt(s->body0());
        dead_.erase(v);
        return body;
      }
    }
    if (s->kind == StmtKind::kStore && s->buffer && dead_.count(s->buffer->data.get())) {
      std::vector<Stmt> effects;
      if (!IsSideEffectFree(s->a)) effects.push_back(Evaluate(s->a));
      for (const PrimExpr& i : s->indices) {
        if (!IsSideEffectFree(i)) effects.push_back(Evaluate(i));
      }
      return Seq(std::move(effects));
    }
    return MutateChildren(s);
  }

 private:
  VarSet read_, escaping_, dead_;
};

// ---- 2. Reuse ---------------------------------------------------------------------

struct Candidate {
  Stmt alloc;        // the Allocate node
  int64_t size = 0;  // elements
  int first = 0, last = 0;
  int child = -1;  // index of the Seq child it heads, or -1 (wraps the Seq)
  int slot = -1;
};

class Reuser : public StmtExprMutator {
 public:
  explicit Reuser(VarSet escaping) : escaping_(std::move(escaping)) {}

 protected:
  Stmt VisitStmt_(const Stmt& s) override {
    if (s->kind == StmtKind::kAllocate) {
      std::vector<Stmt> chain;
      Stmt inner = s;
      while (inner->kind == StmtKind::kAllocate) {
        chain.push_back(inner);
        inner = inner->body0();
      }
      if (inner->kind == StmtKind::kSeq) {
        pending_ = chain;
        return VisitStmt(inner);  // the Seq handler re-wraps the chain
      }
      return Wrap(chain, VisitStmt(inner));
    }
    if (s->kind == StmtKind::kSeq) {
      std::vector<Stmt> wrapping = std::move(pending_);
      pending_.clear();
      return RewriteSeq(s, wrapping);
    }
    pending_.clear();
    return MutateChildren(s);
  }

 private:
  static Stmt Wrap(const std::vector<Stmt>& chain, Stmt body) {
    for (size_t k = chain.size(); k > 0; --k) {
      const Stmt& a = chain[k - 1];
      if (a->body0() == body) {
        body = a;
      } else {
        Ref<StmtNode> n(new StmtNode(*a));
        n->body = {body};
        body = Stmt(n);
      }
    }
    return body;
  }

  bool Eligible(const Stmt& a, int64_t* size) const {
    const Buffer& b = a->buffer;
    if (b->shape.size() != 1 || !IsConstInt(b->shape[0], size) || *size <= 0) return false;
    if (!b->strides.empty() || b->elem_offset) return false;
    return !escaping_.count(b->data.get());
  }

  Stmt RewriteSeq(const Stmt& seq, const std::vector<Stmt>& wrapping) {
    std::vector<Stmt> children;
    for (const Stmt& c : seq->body) children.push_back(VisitStmt(c));
    std::vector<VarSet> uses;
    for (const Stmt& c : children) uses.push_back(UsedVars(c));

    std::vector<Candidate> cands;
    auto lifetime = [&](const ExprNode* v, Candidate* c) {
      c->first = -1;
      for (size_t k = 0; k < uses.size(); ++k) {
        if (!uses[k].count(v)) continue;
        if (c->first < 0) c->first = static_cast<int>(k);
        c->last = static_cast<int>(k);
      }
      return c->first >= 0;
    };
    for (const Stmt& a : wrapping) {
      Candidate c;
      c.alloc = a;
      if (Eligible(a, &c.size) && lifetime(a->buffer->data.get(), &c)) cands.push_back(c);
    }
    for (size_t k = 0; k < children.size(); ++k) {
      Stmt a = children[k];
      while (a->kind == StmtKind::kAllocate) {
        Candidate c;
        c.alloc = a;
        c.child = static_cast<int>(k);
        c.first = c.last = static_cast<int>(k);
        if (Eligible(a, &c.size)) cands.push_back(c);
        a = a->body0();
      }
    }
    // Greedy interval colouring, by first use.
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& x, const Candidate& y) {
      return x.first != y.first ? x.first < y.first : x.size > y.size;
    });
    struct Slot {
      DataType dtype;
      std::string scope;
      int last = 0;
      int64_t size = 0;
      std::vector<size_t> members;
    };
    std::vector<Slot> slots;
    for (size_t k = 0; k < cands.size(); ++k) {
      Candidate& c = cands[k];
      const Buffer& b = c.alloc->buffer;
      std::string scope = c.alloc->tag.empty() ? b->scope : c.alloc->tag;
      int best = -1;
      for (size_t s = 0; s < slots.size(); ++s) {
        const Slot& sl = slots[s];
        if (sl.dtype != b->dtype || sl.scope != scope || sl.last >= c.first) continue;
        // Prefer the slot whose size is closest to this buffer's.
        if (best < 0 || std::llabs(sl.size - c.size) < std::llabs(slots[best].size - c.size)) {
          best = static_cast<int>(s);
        }
      }
      if (best < 0) {
        slots.push_back(Slot{b->dtype, scope, c.last, c.size, {k}});
      } else {
        Slot& sl = slots[best];
        sl.last = c.last;
        sl.size = std::max(sl.size, c.size);
        sl.members.push_back(k);
      }
      c.slot = best < 0 ? static_cast<int>(slots.size() - 1) : best;
    }

    BufferMap redirect;
    std::vector<Stmt> slot_allocs;
    VarSet merged;  // data vars whose own Allocate disappears
    for (const Slot& sl : slots) {
      if (sl.members.size() < 2) continue;
      // The largest member hosts the others.
      size_t host = sl.members[0];
      for (size_t m : sl.members) {
        if (cands[m].size > cands[host].size) host = m;
      }
      const Stmt& h = cands[host].alloc;
      slot_allocs.push_back(h);
      for (size_t m : sl.members) {
        merged.insert(cands[m].alloc->buffer->data.get());
        if (m != host) redirect[cands[m].alloc->buffer->data.get()] = h->buffer;
      }
    }
    if (redirect.empty()) {
      bool same = children.size() == seq->body.size();
      for (size_t k = 0; same && k < children.size(); ++k) same = children[k] == seq->body[k];
      return Wrap(wrapping, same ? seq : Seq(children));
    }
    // Strip merged Allocates from the children, then redirect accesses.
    for (Stmt& c : children) {
      std::vector<Stmt> keep;
      Stmt a = c;
      while (a->kind == StmtKind::kAllocate) {
        if (!merged.count(a->buffer->data.get())) keep.push_back(a);
        a = a->body0();
      }
      if (keep.size() != 0 || a != c) c = Wrap(keep, a);
      c = ReplaceBuffers(c, redirect);
    }
    std::vector<Stmt> outer;
    for (const Stmt& a : wrapping) {
      if (!merged.count(a->buffer->data.get())) outer.push_back(a);
    }
    for (const Stmt& a : slot_allocs) outer.push_back(a);
    return Wrap(outer, Seq(children));
  }

  VarSet escaping_;
  std::vector<Stmt> pending_;
};

// ---- 3. Hoisting --------------------------------------------------------------------

bool ConstantSize(const Buffer& b) {
  for (const PrimExpr& d : b->shape) {
    if (!IsConstInt(d)) return false;
  }
  return true;
}

// Removes hoistable Allocates from a serial loop body (not crossing parallel,
// vectorized, thread loops or thread_extent attributes) and collects them.
class AllocCollector : public StmtExprMutator {
 public:
  std::vector<Stmt> found;

 protected:
  Stmt VisitStmt_(const Stmt& s) override {
    if (s->kind == StmtKind::kFor && s->for_kind != ForKind::kSerial &&
        s->for_kind != ForKind::kUnrolled) {
      return s;
    }
    if (s->kind == StmtKind::kAttr && (s->tag == "thread_extent" || s->tag == "virtual_thread")) {
      return s;
    }
    if (s->kind == StmtKind::kAllocate && ConstantSize(s->buffer)) {
      Ref<StmtNode> n(new StmtNode(*s));
      Stmt body = VisitStmt(s->body0());
      n->body = {NoOp()};
      found.push_back(Stmt(n));
      return body;
    }
    return MutateChildren(s);
  }
};

class Hoister : public StmtExprMutator {
 protected:
  Stmt VisitStmt_(const Stmt& s) override {
    Stmt r = MutateChildren(s);
    if (r->kind != StmtKind::kFor ||
        (r->for_kind != ForKind::kSerial && r->for_kind != ForKind::kUnrolled)) {
      return r;
    }
    AllocCollector c;
    Stmt body = c.VisitStmt(r->body0());
    if (c.found.empty()) return r;
    Ref<StmtNode> loop(new StmtNode(*r));
    loop->body = {body};
    Stmt out(loop);
    for (size_t k = c.found.size(); k > 0; --k) {
      Ref<StmtNode> a(new StmtNode(*c.found[k - 1]));
      a->body = {out};
      out = Stmt(a);
    }
    return out;
  }
};

}  // namespace

absl::StatusOr<PrimFunc> StorageRewrite(const PrimFunc& f) {
  if (!f || !f->body) return PassError("storage_rewrite", f, "null function or body");
  VarSet escaping = EscapingVars(f->body);
  DeadAllocRemover dead(ReadVars(f->body), escaping);
  Stmt body = dead.VisitStmt(f->body);
  // Reuse inside loop bodies first (hoisting would move those allocations out
  // of the sequences they share), then hoist, then reuse again among the
  // hoisted allocations (e.g. the main and the peeled part of a partitioned loop).
  Reuser reuse(escaping);
  body = reuse.VisitStmt(body);
  Hoister hoist;
  body = hoist.VisitStmt(body);
  Reuser reuse_again(escaping);
  body = reuse_again.VisitStmt(body);
  if (body == f->body) return f;
  return WithBody(f, body);
}

}  // namespace kiln::tir::transform
