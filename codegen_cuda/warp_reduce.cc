// File: codegen_cuda/warp_reduce.cc — lane reductions as warp shuffles.
#include "codegen_cuda/warp_reduce.h"

#include <array>
#include <unordered_set>

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

constexpr int64_t kLanes = 32;

// The largest constant extent bound to each threadIdx tag (0: none, -1: symbolic).
std::array<int64_t, 3> ThreadExtents(const Stmt& body) {
  std::array<int64_t, 3> ext = {0, 0, 0};
  tir::PostOrderVisit(body, [](const ExprNode*) {}, [&](const StmtNode* s) {
    std::string tag;
    PrimExpr e;
    if (s->kind == StmtKind::kFor && s->for_kind == ForKind::kThreadBinding) {
      tag = s->tag;
      e = s->b;
    } else if (s->kind == StmtKind::kAttr && s->tag == "thread_extent") {
      if (const auto* iv = dynamic_cast<const tir::IterVarNode*>(s->node.get())) {
        tag = iv->thread_tag;
        e = s->a;
      }
    }
    const char* const kTags[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
    for (size_t i = 0; i < 3; ++i) {
      if (tag != kTags[i]) continue;
      int64_t v = 0;
      if (!tir::IsConstInt(e, &v)) {
        ext[i] = -1;
      } else if (ext[i] >= 0 && v > ext[i]) {
        ext[i] = v;
      }
    }
  });
  return ext;
}

PrimExpr Combine(ExprKind k, PrimExpr a, PrimExpr b) {
  switch (k) {
    case ExprKind::kAdd: return tir::Add(std::move(a), std::move(b));
    case ExprKind::kMul: return tir::Mul(std::move(a), std::move(b));
    case ExprKind::kMax: return tir::Max(std::move(a), std::move(b));
    default: return tir::Min(std::move(a), std::move(b));
  }
}

bool SameIndices(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!tir::ExprDeepEqual(a[i], b[i])) return false;
  }
  return true;
}

// The shuffle form of `loop` (see the header), or null when it does not fit.
Stmt Rewrite(const Stmt& loop, const std::unordered_set<const ExprNode*>& locals,
             const std::unordered_set<const ExprNode*>& shared, int64_t threads) {
  if (loop->kind != StmtKind::kFor ||
      (loop->for_kind != ForKind::kSerial && loop->for_kind != ForKind::kUnrolled) ||
      !tir::IsConstValue(loop->a, 0) || !tir::IsConstValue(loop->b, threads)) {
    return nullptr;
  }
  const Stmt& st = loop->body0();
  if (st->kind != StmtKind::kStore) return nullptr;
  const PrimExpr& v = st->a;
  if (v->kind != ExprKind::kAdd && v->kind != ExprKind::kMul && v->kind != ExprKind::kMax &&
      v->kind != ExprKind::kMin) {
    return nullptr;
  }
  if (!locals.count(st->buffer->data.get())) return nullptr;  // each lane's own accumulator
  const PrimExpr& acc = v->args[0];
  const PrimExpr& part = v->args[1];
  if (acc->kind != ExprKind::kLoad || acc->buffer->data.get() != st->buffer->data.get() ||
      !SameIndices(acc->args, st->indices)) {
    return nullptr;
  }
  const ExprNode* k = loop->var.get();
  auto is_k = [&](const ExprNode* n) { return n == k; };
  for (const PrimExpr& i : st->indices) {
    if (tir::UsesVar(i, is_k)) return nullptr;
  }
  bool private_read = false;
  tir::PostOrderVisit(part, [&](const ExprNode* n) {
    if (n->kind != ExprKind::kLoad) return;
    private_read = private_read || n->buffer->data.get() == st->buffer->data.get() ||
                   locals.count(n->buffer->data.get()) > 0;
  });
  if (private_read || part->dtype.lanes() != 1) return nullptr;
  const tir::Var lane = tir::MakeVar("lane", loop->var->dtype);
  tir::VarMap sub;
  sub[k] = lane;
  const DataType t = part->dtype;
  std::vector<tir::Var> vals = {tir::MakeVar("lane_part", t)};
  std::vector<PrimExpr> defs = {tir::Substitute(part, sub)};
  for (int64_t m = kLanes / 2; m >= 1; m /= 2) {
    const PrimExpr prev = vals.back();
    const PrimExpr other =
        tir::Call(t, kShflXor, {prev, tir::IntImm(m, DataType::Int(32))}, tir::CallEffect::kOpaque);
    defs.push_back(Combine(v->kind, prev, other));
    vals.push_back(tir::MakeVar("lane_part", t));
  }
  if (threads == kLanes) {
    Stmt body = tir::Store(st->buffer, Combine(v->kind, acc, vals.back()), st->indices);
    for (size_t i = vals.size(); i != 0; --i) body = tir::LetStmt(vals[i - 1], defs[i - 1], body);
    return tir::For(lane, tir::IntImm(0, lane->dtype), tir::IntImm(kLanes, lane->dtype),
                    ForKind::kThreadBinding, body, "threadIdx.x");
  }
  // Several warps: the part is a read of a shared array P (the threads'
  // partials); lane 0 of each warp writes its warp's total over its own
  // element, and every thread then combines the warps' totals (the barrier
  // between is thread_sync's).
  if (part->kind != ExprKind::kLoad || !shared.count(part->buffer->data.get())) return nullptr;
  const DataType it = lane->dtype;
  Stmt write = tir::IfThenElse(
      tir::EQ(tir::FloorMod(lane, tir::IntImm(kLanes, it)), tir::IntImm(0, it)),
      tir::Store(part->buffer, vals.back(), defs[0]->args));
  for (size_t i = vals.size(); i != 0; --i) write = tir::LetStmt(vals[i - 1], defs[i - 1], write);
  const Stmt per_warp = tir::For(lane, tir::IntImm(0, it), tir::IntImm(threads, it),
                                 ForKind::kThreadBinding, write, "threadIdx.x");
  const tir::Var w = tir::MakeVar("warp", it);
  tir::VarMap first;
  first[k] = tir::Mul(w, tir::IntImm(kLanes, it));
  const Stmt totals = tir::For(
      w, tir::IntImm(0, it), tir::IntImm(threads / kLanes, it), ForKind::kSerial,
      tir::Store(st->buffer, Combine(v->kind, acc, tir::Substitute(part, first)), st->indices));
  return tir::Seq({per_warp, totals});
}

class Rewriter {
 public:
  Rewriter(const Stmt& body, int64_t threads) : threads_(threads) {
    tir::PostOrderVisit(body, [](const ExprNode*) {}, [&](const StmtNode* s) {
      if (s->kind != StmtKind::kAllocate) return;
      const std::string& scope = s->tag.empty() ? s->buffer->scope : s->tag;
      if (scope == "local") locals_.insert(s->buffer->data.get());
      if (scope == "shared") shared_.insert(s->buffer->data.get());
    });
  }

  // The kernel's root: a statement without any thread binding runs on one
  // thread (codegen_cuda.h), so nothing in it is rewritten.
  Stmt Root(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::kSeq: {
        std::vector<Stmt> out;
        bool changed = false;
        for (const Stmt& c : s->body) {
          out.push_back(Root(c));
          changed = changed || out.back().get() != c.get();
        }
        return changed ? tir::Seq(std::move(out)) : s;
      }
      case StmtKind::kLetStmt:
      case StmtKind::kAllocate: {
        Stmt b = Root(s->body0());
        return b.get() == s->body0().get() ? s : tir::WithChildren(s, s->a, s->b, s->indices, {b});
      }
      case StmtKind::kAttr:
        if (s->tag != "thread_extent") {
          Stmt b = Root(s->body0());
          return b.get() == s->body0().get() ? s
                                             : tir::WithChildren(s, s->a, s->b, s->indices, {b});
        }
        break;
      default:
        break;
    }
    bool bound = false;
    tir::PostOrderVisit(s, [](const ExprNode*) {}, [&](const StmtNode* n) {
      bound = bound || (n->kind == StmtKind::kFor && n->for_kind == ForKind::kThreadBinding) ||
              (n->kind == StmtKind::kAttr && n->tag == "thread_extent");
    });
    return bound ? Visit(s, false) : s;
  }

 private:
  Stmt Visit(const Stmt& s, bool under_tx) {
    if (!s) return s;
    switch (s->kind) {
      case StmtKind::kSeq: {
        std::vector<Stmt> out;
        bool changed = false;
        for (const Stmt& c : s->body) {
          out.push_back(Visit(c, under_tx));
          changed = changed || out.back().get() != c.get();
        }
        return changed ? tir::Seq(std::move(out)) : s;
      }
      case StmtKind::kIfThenElse: {
        Stmt a = Visit(s->body[0], under_tx);
        Stmt b = s->body.size() > 1 ? Visit(s->body[1], under_tx) : Stmt();
        if (a.get() == s->body[0].get() && (s->body.size() < 2 || b.get() == s->body[1].get())) {
          return s;
        }
        return tir::IfThenElse(s->a, a, b);
      }
      case StmtKind::kFor:
        if (!under_tx) {
          if (Stmt r = Rewrite(s, locals_, shared_, threads_)) return r;
        }
        [[fallthrough]];
      case StmtKind::kAttr:
      case StmtKind::kLetStmt:
      case StmtKind::kAllocate:
      case StmtKind::kAssert: {
        bool tx = under_tx;
        if (s->kind == StmtKind::kFor && s->for_kind == ForKind::kThreadBinding &&
            s->tag == "threadIdx.x") {
          tx = true;
        }
        if (s->kind == StmtKind::kAttr && s->tag == "thread_extent") {
          const auto* iv = dynamic_cast<const tir::IterVarNode*>(s->node.get());
          tx = tx || (iv != nullptr && iv->thread_tag == "threadIdx.x");
        }
        Stmt b = Visit(s->body0(), tx);
        if (b.get() == s->body0().get()) return s;
        return tir::WithChildren(s, s->a, s->b, s->indices, {b});
      }
      default:
        return s;
    }
  }

  int64_t threads_;
  std::unordered_set<const ExprNode*> locals_, shared_;
};

}  // namespace

absl::StatusOr<tir::PrimFunc> LowerWarpReduce(const tir::PrimFunc& f) {
  const std::array<int64_t, 3> ext = ThreadExtents(f->body);
  if (ext[0] < kLanes || ext[0] > 1024 || ext[0] % kLanes != 0 || ext[1] > 1 || ext[2] > 1 ||
      ext[1] < 0 || ext[2] < 0) {
    return f;
  }
  Stmt body = Rewriter(f->body, ext[0]).Root(f->body);
  if (body.get() == f->body.get()) return f;
  return tir::WithBody(f, body);
}

}  // namespace kiln::codegen_cuda
