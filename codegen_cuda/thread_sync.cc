// File: codegen_cuda/thread_sync.cc — block barriers for shared memory.
#include "codegen_cuda/thread_sync.h"

#include <array>
#include <set>
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

using BufferSet = std::set<const ExprNode*>;  // shared buffers' data vars

// What the threads did to shared memory since the last barrier.
struct Pending {
  BufferSet reads, writes;
  void Merge(const Pending& o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
};

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

  // Shared accesses anywhere in `s`.
  Pending Summary(const Stmt& s) const {
    Pending p;
    tir::PostOrderVisit(s, [&](const ExprNode* e) {
      if (e->kind == ExprKind::kLoad && shared_.count(e->buffer->data.get())) {
        p.reads.insert(e->buffer->data.get());
      }
    }, [&](const StmtNode* n) {
      if (n->kind == StmtKind::kStore && shared_.count(n->buffer->data.get())) {
        p.writes.insert(n->buffer->data.get());
      }
    });
    return p;
  }

  // A shared buffer `next` accesses in conflict with `p`, or null.
  static const ExprNode* Conflict(const Pending& p, const Pending& next) {
    for (const ExprNode* b : next.reads) {
      if (p.writes.count(b)) return b;
    }
    for (const ExprNode* b : next.writes) {
      if (p.reads.count(b)) return b;
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
        KILN_ASSIGN_OR_RETURN(Stmt b, Visit(s->body0(), p, divergent));
        return Rebuild(s, b);
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
