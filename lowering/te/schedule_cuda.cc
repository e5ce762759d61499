// File: lowering/te/schedule_cuda.cc — the default GPU schedule.
#include "lowering/te/schedule_cuda.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"

namespace kiln::te {
namespace {

bool Untouched(const Stage& s) {
  return s.relations.empty() && s.attach_type == AttachType::kGroupRoot;
}

constexpr int kWarp = 32;

// Fuses the stage's data-parallel axes, splits them by the block size and
// binds the parts to blockIdx.x / threadIdx.x. Returns the threadIdx.x loop
// (null for a stage without data-parallel axes, which stays unbound).
absl::StatusOr<IterVar> BindDataParallel(Stage* s, int max_threads) {
  const std::vector<IterVar> axes = s->op->axis;
  if (axes.empty()) return IterVar();
  PrimExpr extent = tir::IntImm(1);
  for (const IterVar& iv : axes) extent = extent * iv->dom.extent;
  int64_t threads = max_threads;
  int64_t e = 0;
  if (tir::IsConstInt(extent, &e) && e < threads) {
    threads = (e + kWarp - 1) / kWarp * kWarp;
    if (threads < kWarp) threads = kWarp;
  }
  KILN_ASSIGN_OR_RETURN(IterVar fused, s->fuse(axes));
  KILN_ASSIGN_OR_RETURN(SplitAxes sp, s->split(fused, threads));
  KILN_RETURN_IF_ERROR(s->bind(sp.outer, "blockIdx.x"));
  KILN_RETURN_IF_ERROR(s->bind(sp.inner, "threadIdx.x"));
  return sp.inner;
}

// Register blocking of GEMM-like outputs (dense, matmul, batch_matmul): an
// output whose last two data-parallel axes have constant extents of at least
// kGemmMin (and at most one more, a batch axis), computed by a reduction (its
// own, or a producer's computed per thread). Each block of kGemmThreads x
// kGemmThreads threads computes a kGemmTile x kGemmTile tile (of one batch),
// each thread a kGemmReg x kGemmReg block of it: the reduction runs at the
// thread's loop into a "local" array of that size with its reduction axes
// outermost, so every A and B value loaded serves kGemmReg outputs.
constexpr int64_t kGemmReg = 4;
constexpr int64_t kGemmThreads = 16;
constexpr int64_t kGemmTile = kGemmReg * kGemmThreads;
constexpr int64_t kGemmMin = kGemmTile;
// The reduction's slice per shared-memory tile.
constexpr int64_t kGemmK = 16;

bool GemmShaped(const Stage& s) {
  const size_t n = s.op->axis.size();
  if (n != 2 && n != 3) return false;
  for (size_t d = 0; d < n; ++d) {
    int64_t e = 0;
    if (!tir::IsConstInt(s.op->axis[d]->dom.extent, &e) || (d + 2 >= n && e < kGemmMin)) {
      return false;
    }
  }
  return true;
}

// Tiles a GEMM-shaped output; returns its threadIdx.x loop.
absl::StatusOr<IterVar> TileGemm(Stage* s) {
  const std::vector<IterVar> axes = s->op->axis;
  const size_t n = axes.size();
  KILN_ASSIGN_OR_RETURN(SplitAxes i1, s->split(axes[n - 2], kGemmTile));
  KILN_ASSIGN_OR_RETURN(SplitAxes i2, s->split(i1.inner, kGemmReg));
  KILN_ASSIGN_OR_RETURN(SplitAxes j1, s->split(axes[n - 1], kGemmTile));
  KILN_ASSIGN_OR_RETURN(SplitAxes j2, s->split(j1.inner, kGemmReg));
  std::vector<IterVar> order = {i1.outer, j1.outer, i2.outer, j2.outer, i2.inner, j2.inner};
  if (n == 3) order.insert(order.begin(), axes[0]);
  KILN_RETURN_IF_ERROR(s->reorder(order));
  if (n == 3) KILN_RETURN_IF_ERROR(s->bind(axes[0], "blockIdx.z"));
  KILN_RETURN_IF_ERROR(s->bind(i1.outer, "blockIdx.y"));
  KILN_RETURN_IF_ERROR(s->bind(j1.outer, "blockIdx.x"));
  KILN_RETURN_IF_ERROR(s->bind(i2.outer, "threadIdx.y"));
  KILN_RETURN_IF_ERROR(s->bind(j2.outer, "threadIdx.x"));
  return j2.outer;
}

// Whether the reduction stage `r` (read by the GEMM-tiled output only) is
// GEMM-like: two data-parallel axes (three with a batch) and at least one
// reduction axis.
bool GemmReduction(const Stage& r) {
  return (r.op->axis.size() == 2 || r.op->axis.size() == 3) && !r.op->reduce_axis.empty();
}

// The inputs of GEMM reduction `r` that a block can stage through shared
// memory: placeholders read only at indices that are each one of r's axes or
// its reduction axis (or a constant), so that a block's slice of one is at
// most a kGemmTile x kGemmK tile: A[i, k] and B[j, k] (dense), B[k, j]
// (matmul), A[b, i, k] (batch_matmul). Empty when r has more than one
// reduction axis or one of a symbolic extent.
struct SharedInput {
  Tensor tensor;
  int64_t row = 1;  // the slice's extent in the tensor's last dim
};

std::vector<SharedInput> SharedInputs(const Schedule& s, const Stage& r) {
  std::vector<SharedInput> out;
  if (r.op->reduce_axis.size() != 1 || !tir::IsConstInt(r.op->reduce_axis[0]->dom.extent)) {
    return out;
  }
  const size_t n = r.op->axis.size();
  for (const Tensor& t : r.op->InputTensors()) {
    Stage* ts = s[t];
    if (ts == nullptr || !ts->is_placeholder()) continue;
    bool ok = true;
    int64_t elems = 1, row = 1;
    for (const PrimExpr& b : r.op->body) {
      tir::PostOrderVisit(b, [&](const tir::ExprNode* e) {
        if (e->kind != tir::ExprKind::kProducerLoad || e->producer.get() != t.op().get()) return;
        int64_t here = 1, extent = 1;
        for (const PrimExpr& idx : e->args) {
          extent = 1;
          if (tir::IsConstInt(idx)) continue;
          if (idx->kind != tir::ExprKind::kVar) {
            ok = false;
            continue;
          }
          if (idx.get() == r.op->reduce_axis[0]->var.get()) {
            extent = kGemmK;
          } else {
            bool found = false;
            for (size_t d = 0; d < n; ++d) {
              if (idx.get() != r.op->axis[d]->var.get()) continue;
              found = true;
              if (d + 2 >= n) extent = kGemmTile;
            }
            ok = ok && found;
          }
          here *= extent;
        }
        elems = std::max(elems, here);
        row = std::max(row, extent);
      });
    }
    if (ok && elems <= kGemmTile * kGemmK) out.push_back({t, row});
  }
  return out;
}

// Stages the GEMM reduction `r`'s inputs through shared memory (TVM's
// topi/cuda dense and batch_matmul templates): its reduction axis split by
// kGemmK, the outer part outermost; at each step of it the block's threads
// copy the block's kGemmTile x kGemmK slice of A and of B into "shared"
// arrays (each thread a few elements, consecutive threads consecutive
// elements), and the register-blocked inner product reads them there. The
// code generator puts the barriers in (codegen_cuda/thread_sync.h): one
// after the copies, one before the next step's copies. A row of each shared
// tile is padded by one element so that the threads of a warp reading down a
// column hit different banks. Returns false (and changes nothing) when no
// input qualifies.
absl::StatusOr<bool> StageThroughShared(Schedule& s, Stage* r) {
  const std::vector<SharedInput> inputs = SharedInputs(s, *r);
  if (inputs.empty()) return false;
  KILN_ASSIGN_OR_RETURN(SplitAxes k, r->split(r->op->reduce_axis[0], kGemmK));
  std::vector<IterVar> order = {k.outer, k.inner};
  order.insert(order.end(), r->op->axis.begin(), r->op->axis.end());
  KILN_RETURN_IF_ERROR(r->reorder(order));
  for (const SharedInput& in : inputs) {
    KILN_ASSIGN_OR_RETURN(Tensor cache,
                          s.cache_read(in.tensor, "shared", std::vector<Operation>{r->op}));
    Stage* c = s[cache];
    KILN_RETURN_IF_ERROR(c->compute_at(r, k.outer));
    const std::vector<IterVar> axes = c->op->axis;
    if (axes.size() >= 2 && in.row > 1) {
      KILN_RETURN_IF_ERROR(c->storage_align(axes[axes.size() - 2], in.row, 1));
    }
    KILN_ASSIGN_OR_RETURN(IterVar fused, c->fuse(axes));
    KILN_ASSIGN_OR_RETURN(SplitAxes per_block, c->split(fused, kGemmThreads * kGemmThreads));
    KILN_ASSIGN_OR_RETURN(SplitAxes yx, c->split(per_block.inner, kGemmThreads));
    KILN_RETURN_IF_ERROR(c->bind(yx.outer, "threadIdx.y"));
    KILN_RETURN_IF_ERROR(c->bind(yx.inner, "threadIdx.x"));
  }
  return true;
}

}  // namespace

absl::Status ScheduleDefaultCuda(Schedule& s, const std::vector<Tensor>& outputs,
                                 int max_threads) {
  if (max_threads < kWarp || max_threads > 1024 || max_threads % kWarp != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ScheduleDefaultCuda: max_threads must be a multiple of 32 in [32, 1024], got ",
        max_threads));
  }
  std::vector<Stage*> out_stages;
  std::unordered_set<Stage*> is_out;
  for (const Tensor& t : outputs) {
    Stage* st = s[t];
    if (st == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("ScheduleDefaultCuda: output '", t.name(),
                                                     "' is not in the schedule"));
    }
    if (is_out.insert(st).second) out_stages.push_back(st);
  }
  // 0. A GEMM-shaped output that is itself the reduction computes it in a
  //    "local" cache stage (register blocking, below).
  for (const Tensor& t : outputs) {
    Stage* st = s[t];
    if (st->is_placeholder() || !Untouched(*st) || !GemmShaped(*st) || !GemmReduction(*st) ||
        outputs.size() != 1) {
      continue;
    }
    KILN_ASSIGN_OR_RETURN(Tensor cache, s.cache_write(t, "local"));
    (void)cache;
  }
  // 1. Inline injective intermediates.
  for (Stage* st : s.stages()) {
    if (st->is_placeholder() || st->is_output || is_out.count(st) || !Untouched(*st)) continue;
    if (!st->op->reduce_axis.empty() || st->op->attrs.count("no_inline")) continue;
    KILN_RETURN_IF_ERROR(st->compute_inline());
  }
  // 2. Outputs: one thread per element.
  std::unordered_map<Stage*, IterVar> thread_loop;  // output -> its threadIdx.x loop (or null)
  std::unordered_set<Stage*> gemm_tiled;
  for (Stage* out : out_stages) {
    if (out->is_placeholder() || !Untouched(*out)) continue;
    // GEMM-shaped and reading a GEMM-like reduction: register-blocked.
    bool gemm = false;
    if (GemmShaped(*out) && out_stages.size() == 1) {
      const std::vector<Stage*> all = s.stages();
      for (Stage* r : all) gemm = gemm || (r != out && !r->is_placeholder() && !r->is_inlined() &&
                                           Untouched(*r) && GemmReduction(*r));
    }
    if (gemm) {
      KILN_ASSIGN_OR_RETURN(IterVar tx, TileGemm(out));
      thread_loop[out] = tx;
      gemm_tiled.insert(out);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(IterVar tx, BindDataParallel(out, max_threads));
    thread_loop[out] = tx;
  }
  // 3. The other stages, consumers first: computed per thread inside the one
  //    output that reads them.
  std::unordered_map<Stage*, std::unordered_set<Stage*>> owners;  // stage -> outputs reading it
  const std::vector<Stage*> order = s.stages();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Stage* st = *it;
    if (st->is_placeholder() || st->is_inlined() || is_out.count(st)) continue;
    KILN_ASSIGN_OR_RETURN(std::vector<Stage*> readers, s.ReadersOf(st));
    std::unordered_set<Stage*>& own = owners[st];
    for (Stage* r : readers) {
      if (is_out.count(r)) {
        own.insert(r);
      } else {
        const auto& inner = owners[r];
        own.insert(inner.begin(), inner.end());
      }
    }
    if (!Untouched(*st)) continue;
    if (own.size() == 1) {
      Stage* out = *own.begin();
      auto tl = thread_loop.find(out);
      if (tl != thread_loop.end()) {
        KILN_RETURN_IF_ERROR(st->set_scope("local"));
        if (tl->second) {
          KILN_RETURN_IF_ERROR(st->compute_at(out, tl->second));
          if (gemm_tiled.count(out) && GemmReduction(*st)) {
            KILN_ASSIGN_OR_RETURN(bool staged, StageThroughShared(s, st));
            if (!staged) {
              // Reduction axes outermost: each loaded value serves a row or
              // column of the thread's block.
              std::vector<IterVar> order = st->op->reduce_axis;
              order.insert(order.end(), st->op->axis.begin(), st->op->axis.end());
              KILN_RETURN_IF_ERROR(st->reorder(order));
            }
          }
        }
        // A scalar output's stages stay at the root, unbound: the code
        // generator runs them with it on one thread.
        continue;
      }
    }
    // Read by several outputs (or none): a nest of its own.
    KILN_ASSIGN_OR_RETURN(IterVar unused, BindDataParallel(st, max_threads));
    (void)unused;
  }
  return absl::OkStatus();
}

}  // namespace kiln::te
