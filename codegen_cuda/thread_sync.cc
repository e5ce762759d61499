// File: codegen_cuda/thread_sync.cc — block barriers for shared memory.
#include "codegen_cuda/thread_sync.h"

#include <array>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"

namespace kiln::codegen_cuda {
namespace {

using tir::ExprKind;
using tir::ExprNode;
using tir::ForKind;
using tir::PrimExpr;
using tir::Stmt;
using tir::StmtKind;
using tir::StmtNode;

// One access's indices; empty: unknown (equal to none).
using Index = std::vector<PrimExpr>;
// Shared buffer (data var) -> the indices it was accessed at.
using AccessMap = std::map<const ExprNode*, std::vector<Index>>;

bool SameIndex(const Index& a, const Index& b) {
  if (a.empty() || a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!tir::ExprDeepEqual(a[i], b[i])) return false;
  }
  return true;
}

// What the threads did to shared memory since the last barrier.
struct Pending {
  AccessMap reads, writes;
  // Adds `i` to `v` once; an unknown index stands for every index (and more
  // than kMaxIndices distinct ones become unknown).
  static void AddIndex(std::vector<Index>* v, const Index& i) {
    static constexpr size_t kMaxIndices = 16;
    if (v->size() == 1 && v->front().empty()) return;
    if (i.empty() || v->size() >= kMaxIndices) {
      v->assign(1, Index());
      return;
    }
    for (const Index& j : *v) {
      if (SameIndex(i, j)) return;
    }
    v->push_back(i);
  }
  static void Add(AccessMap* m, const AccessMap& o) {
    for (const auto& [b, v] : o) {
      auto& dst = (*m)[b];
      for (const Index& i : v) AddIndex(&dst, i);
    }
  }
  void Merge(const Pending& o) {
    Add(&reads, o.reads);
    Add(&writes, o.writes);
  }
  // Forgets the indices that use a var for which `pred` holds (their values
  // differ in the next iteration of a loop).
  void Blur(const std::function<bool(const ExprNode*)>& pred) {
    for (AccessMap* m : {&reads, &writes}) {
      for (auto& [b, v] : *m) {
        std::vector<Index> out;
        for (const Index& i : v) {
          bool uses = false;
          for (const PrimExpr& e : i) uses = uses || tir::UsesVar(e, pred);
          AddIndex(&out, uses ? Index() : i);
        }
        v = std::move(out);
      }
    }
  }
};

// Whether accesses `x` and `y` of one buffer may touch an element another
// thread touches. The same index expression, evaluated with the same values,
// is the same thread's element: kiln's schedules never have two threads
// write one shared element (as TVM's ThreadSync assumes).
bool MayConflict(const std::vector<Index>& x, const std::vector<Index>& y) {
  for (const Index& a : x) {
    for (const Index& b : y) {
      if (!SameIndex(a, b)) return true;
    }
  }
  return false;
}

int TagIndex(const std::string& tag) {
  static const char* const kTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                      "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  for (int i = 0; i < 6; ++i) {
    if (tag == kTags[i]) return i;
  }
  return -1;
}

bool IsThreadBinding(const StmtNode* s) {
  return (s->kind == StmtKind::kFor && s->for_kind == ForKind::kThreadBinding) ||
         (s->kind == StmtKind::kAttr && s->tag == "thread_extent");
}

class Planner {
 public:
  explicit Planner(const Stmt& body) {
    tir::PostOrderVisit(body, [](const ExprNode*) {}, [&](const StmtNode* s) {
      if (s->kind == StmtKind::kAllocate) {
        const std::string scope = s->tag.empty() ? s->buffer->scope : s->tag;
        if (scope == "shared") {
          shared_.insert(s->buffer->data.get());
          names_[s->buffer->data.get()] = s->buffer->name;
        }
      }
      std::string tag;
      PrimExpr extent;
      if (s->kind == StmtKind::kFor && s->for_kind == ForKind::kThreadBinding) {
        tag = s->tag;
        extent = s->b;
      } else if (s->kind == StmtKind::kAttr && s->tag == "thread_extent") {
        if (const auto* iv = dynamic_cast<const tir::IterVarNode*>(s->node.get())) {
          tag = iv->thread_tag;
          extent = s->a;
        }
      }
      const int i = TagIndex(tag);
      if (i < 0) return;
      int64_t a = 0, b = 0;
      if (!launch_[static_cast<size_t>(i)] ||
          (tir::IsConstInt(launch_[static_cast<size_t>(i)], &a) && tir::IsConstInt(extent, &b) &&
           b > a)) {
        launch_[static_cast<size_t>(i)] = extent;
      }
    });
  }

  bool HasShared() const { return !shared_.empty(); }

  // The root: statements without a thread binding run on one thread.
  absl::StatusOr<Stmt> Root(const Stmt& s, Pending* p) {
    switch (s->kind) {
      case StmtKind::kSeq: {
        std::vector<Stmt> out;
        for (const Stmt& c : s->body) {
          KILN_ASSIGN_OR_RETURN(Stmt v, Root(c, p));
          out.push_back(v);
        }
        return tir::Seq(std::move(out));
      }
      case StmtKind::kLetStmt:
      case StmtKind::kAllocate: {
        KILN_ASSIGN_OR_RETURN(Stmt b, Root(s->body0(), p));
        return Rebuild(s, b);
      }
      case StmtKind::kAttr:
        if (s->tag != "thread_extent") {
          KILN_ASSIGN_OR_RETURN(Stmt b, Root(s->body0(), p));
          return Rebuild(s, b);
        }
        break;
      default:
        break;
    }
    bool bound = false;
    tir::PostOrderVisit(s, [](const ExprNode*) {}, [&](const StmtNode* n) {
      bound = bound || IsThreadBinding(n);
    });
    return Visit(s, p, /*divergent=*/!bound);
  }

 private:
  static Stmt Rebuild(const Stmt& s, const Stmt& body) {
    if (body.get() == s->body0().get()) return s;
    return tir::WithChildren(s, s->a, s->b, s->indices, {body});
  }

  // Shared accesses anywhere in `s` (or in expression `e`).
  void Collect(const ExprNode* e, Pending* p) const {
    if (e->kind == ExprKind::kLoad && shared_.count(e->buffer->data.get())) {
      Pending::AddIndex(&p->reads[e->buffer->data.get()], e->args);
    }
    // A shared buffer passed as a value (to a call: kiln.mma_block) may be
    // read and written anywhere.
    if (e->kind == ExprKind::kVar && shared_.count(e)) {
      Pending::AddIndex(&p->reads[e], Index());
      Pending::AddIndex(&p->writes[e], Index());
    }
  }
  Pending Summary(const Stmt& s) const {
    Pending p;
    tir::PostOrderVisit(s, [&](const ExprNode* e) { Collect(e, &p); }, [&](const StmtNode* n) {
      if (n->kind == StmtKind::kStore && shared_.count(n->buffer->data.get())) {
        Pending::AddIndex(&p.writes[n->buffer->data.get()], n->indices);
      }
    });
    return p;
  }
  Pending Summary(const PrimExpr& e) const {
    Pending p;
    tir::PostOrderVisit(e, [&](const ExprNode* n) { Collect(n, &p); });
    return p;
  }

  // A shared buffer `next` accesses in conflict with `p`, or null.
  static const ExprNode* Conflict(const Pending& p, const Pending& next) {
    for (const auto& [b, idx] : next.reads) {
      auto it = p.writes.find(b);
      if (it != p.writes.end() && MayConflict(it->second, idx)) return b;
    }
    for (const auto& [b, idx] : next.writes) {
      auto it = p.reads.find(b);
      if (it != p.reads.end() && MayConflict(it->second, idx)) return b;
    }
    return nullptr;
  }

  // Whether an expression differs between the threads of a block.
  bool ThreadDependent(const PrimExpr& e) const {
    if (!e) return false;
    bool dep = false;
    tir::PostOrderVisit(e, [&](const ExprNode* n) {
      dep = dep || (n->kind == ExprKind::kVar && thread_vars_.count(n)) ||
            n->kind == ExprKind::kLoad;
    });
    return dep;
  }

  absl::Status Divergent(const ExprNode* buffer) const {
    auto it = names_.find(buffer);
    return absl::UnimplementedError(absl::StrCat(
        "shared buffer '", it != names_.end() ? it->second : std::string("?"),
        "' needs a __syncthreads() inside code that not every thread of the block runs (a "
        "condition or loop bound that depends on the thread, or a thread-bound nest smaller "
        "than the block)"));
  }

  // Prepends a barrier to `s` when its accesses conflict with `p`.
  absl::StatusOr<Stmt> BarrierBefore(const Stmt& s, Pending* p, bool divergent, bool* placed) {
    *placed = false;
    const ExprNode* c = Conflict(*p, Summary(s));
    if (c == nullptr || divergent) return s;
    *p = Pending();
    *placed = true;
    return s;
  }

  absl::StatusOr<Stmt> Visit(const Stmt& s, Pending* p, bool divergent) {
    switch (s->kind) {
      case StmtKind::kSeq: {
        std::vector<Stmt> out;
        for (const Stmt& c : s->body) {
          KILN_ASSIGN_OR_RETURN(Stmt v, Visit(c, p, divergent));
          out.push_back(v);
        }
        return tir::Seq(std::move(out));
      }
      case StmtKind::kLetStmt: {
        if (ThreadDependent(s->a)) thread_vars_.insert(s->var.get());
        // The value's own reads, before the body.
        const Pending value = Summary(s->a);
        bool placed = false;
        if (const ExprNode* c = Conflict(*p, value)) {
          if (divergent) return Divergent(c);
          *p = Pending();
          placed = true;
        }
        p->Merge(value);
        KILN_ASSIGN_OR_RETURN(Stmt b, Visit(s->body0(), p, divergent));
        Stmt out = Rebuild(s, b);
        return placed ? tir::Seq({SyncThreads(), out}) : out;
      }
      case StmtKind::kAllocate:
      case StmtKind::kAssert: {
        KILN_ASSIGN_OR_RETURN(Stmt b, Visit(s->body0(), p, divergent));
        return Rebuild(s, b);
      }
      case StmtKind::kAttr: {
        if (s->tag == "thread_extent") {
          const auto* iv = dynamic_cast<const tir::IterVarNode*>(s->node.get());
          if (iv == nullptr) break;
          thread_vars_.insert(iv->var.get());
          return Bound(s, iv->thread_tag, s->a, p, divergent);
        }
        KILN_ASSIGN_OR_RETURN(Stmt b, Visit(s->body0(), p, divergent));
        return Rebuild(s, b);
      }
      case StmtKind::kFor: {
        if (s->for_kind == ForKind::kThreadBinding) {
          thread_vars_.insert(s->var.get());
          return Bound(s, s->tag, s->b, p, divergent);
        }
        return Loop(s, p, divergent);
      }
      case StmtKind::kIfThenElse: {
        bool placed = false;
        KILN_ASSIGN_OR_RETURN(Stmt head, BarrierBefore(s, p, divergent, &placed));
        (void)head;
        const bool div = divergent || ThreadDependent(s->a);
        Pending else_p = *p;
        KILN_ASSIGN_OR_RETURN(Stmt then_s, Visit(s->body[0], p, div));
        Stmt else_s;
        if (s->body.size() > 1 && s->body[1]) {
          KILN_ASSIGN_OR_RETURN(else_s, Visit(s->body[1], &else_p, div));
        }
        p->Merge(else_p);
        Stmt out = (then_s.get() == s->body[0].get() &&
                    (s->body.size() < 2 || else_s.get() == s->body[1].get()))
                       ? s
                       : tir::IfThenElse(s->a, then_s, else_s);
        return placed ? tir::Seq({SyncThreads(), out}) : out;
      }
      default:
        break;
    }
    // A leaf (store, evaluate).
    const Pending acc = Summary(s);
    Stmt out = s;
    if (const ExprNode* c = Conflict(*p, acc)) {
      if (divergent) return Divergent(c);
      *p = Pending();
      out = tir::Seq({SyncThreads(), s});
    }
    p->Merge(acc);
    return out;
  }

  // A thread-bound nest: no loop, each thread runs the body once; divergent
  // when it covers fewer threads than the launch.
  absl::StatusOr<Stmt> Bound(const Stmt& s, const std::string& tag, const PrimExpr& extent,
                             Pending* p, bool divergent) {
    const int i = TagIndex(tag);
    const bool guarded = i < 0 || !launch_[static_cast<size_t>(i)] ||
                         !tir::ExprDeepEqual(extent, launch_[static_cast<size_t>(i)]);
    bool placed = false;
    if (guarded) KILN_RETURN_IF_ERROR(BarrierBefore(s, p, divergent, &placed).status());
    KILN_ASSIGN_OR_RETURN(Stmt b, Visit(s->body0(), p, divergent || guarded));
    Stmt out = Rebuild(s, b);
    return placed ? tir::Seq({SyncThreads(), out}) : out;
  }

  absl::StatusOr<Stmt> Loop(const Stmt& s, Pending* p, bool divergent) {
    const bool div = divergent || ThreadDependent(s->a) || ThreadDependent(s->b);
    if (div) thread_vars_.insert(s->var.get());
    bool placed = false;
    KILN_RETURN_IF_ERROR(BarrierBefore(s, p, divergent, &placed).status());
    // Pass 1 finds what one iteration leaves pending; pass 2 starts from it
    // (a dependence carried to the next iteration).
    Pending first = *p;
    KILN_RETURN_IF_ERROR(Visit(s->body0(), &first, div).status());
    // In the next iteration the vars bound in the body have other values.
    std::unordered_set<const ExprNode*> inner = {s->var.get()};
    tir::PostOrderVisit(s->body0(), [](const ExprNode*) {}, [&](const StmtNode* n) {
      if (n->var) inner.insert(n->var.get());
    });
    first.Blur([&](const ExprNode* v) { return inner.count(v) > 0; });
    Pending second = *p;
    second.Merge(first);
    KILN_ASSIGN_OR_RETURN(Stmt b, Visit(s->body0(), &second, div));
    p->Merge(second);  // the loop may run no iteration
    Stmt out = Rebuild(s, b);
    return placed ? tir::Seq({SyncThreads(), out}) : out;
  }

  std::unordered_set<const ExprNode*> shared_;
  std::unordered_map<const ExprNode*, std::string> names_;
  std::unordered_set<const ExprNode*> thread_vars_;
  std::array<PrimExpr, 6> launch_;
};

}  // namespace

Stmt SyncThreads() {
  return tir::Evaluate(tir::Call(DataType::Int(32), kSyncThreads, {}, tir::CallEffect::kOpaque));
}

bool IsSyncThreads(const Stmt& s) {
  return s && s->kind == StmtKind::kEvaluate && s->a && s->a->kind == ExprKind::kCall &&
         s->a->name == kSyncThreads;
}

absl::StatusOr<tir::PrimFunc> InsertThreadSync(const tir::PrimFunc& f) {
  Planner planner(f->body);
  if (!planner.HasShared()) return f;
  Pending p;
  KILN_ASSIGN_OR_RETURN(Stmt body, planner.Root(f->body, &p));
  if (body.get() == f->body.get()) return f;
  return tir::WithBody(f, body);
}

}  // namespace kiln::codegen_cuda
