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

// Whether the reduction stage `r` (read by the GEMM-tiled output `out` only)
// is GEMM-like: two data-parallel axes (three with a batch) of out's extents
// and at least one reduction axis (a layer_norm's row sums over a batch of
// rows are not).
bool GemmReduction(const Stage& r, const Stage& out) {
  const size_t n = r.op->axis.size();
  if ((n != 2 && n != 3) || r.op->reduce_axis.empty() || out.op->axis.size() != n) return false;
  for (size_t d = 0; d < n; ++d) {
    int64_t a = 0, b = 0;
    if (!tir::IsConstInt(r.op->axis[d]->dom.extent, &a) ||
        !tir::IsConstInt(out.op->axis[d]->dom.extent, &b) || a != b) {
      return false;
    }
  }
  return true;
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

// ---- Row reductions: one warp per row ----
//
// A fused function whose only output O is a row reduction (sum/max/min/prod
// over its last input dim), or is computed from row reductions of its rows
// (softmax, layer_norm, mean), runs one warp per row: the rows fused and
// bound to blockIdx.x, 32 threads per block. Each reduction R (split by 32,
// rfactor'ed) first has every lane reduce its own strided part of the row
// into a "shared" slot (consecutive lanes read consecutive elements), then
// combines the 32 slots in a loop that every lane runs (outside any
// threadIdx.x nest), which the code generator turns into a butterfly of warp
// shuffles (codegen_cuda/warp_reduce.h), every lane ending with the row's
// value (it is a "local" value of each lane when O reads it). O's elements of
// the row are spread over the 32 lanes (consecutive lanes, consecutive
// elements); an O of one value per row is computed, the same, by every lane.
constexpr int64_t kRowThreads = kWarp;

// Whether `r` reduces (sum, prod, max or min) one constant axis of extent at
// least a warp, found only as the last index of the tensors it reads.
bool RowReduction(const Stage& r, int64_t* extent) {
  if (r.is_placeholder() || r.op->reduce_axis.size() != 1 || r.op->num_outputs() != 1) {
    return false;
  }
  const PrimExpr& body = r.op->body[0];
  if (body->kind != tir::ExprKind::kReduce) return false;
  const tir::ReduceKind k = body->reduce_kind;
  if (k != tir::ReduceKind::kSum && k != tir::ReduceKind::kProd && k != tir::ReduceKind::kMax &&
      k != tir::ReduceKind::kMin) {
    return false;
  }
  if (!tir::IsConstInt(r.op->reduce_axis[0]->dom.extent, extent) || *extent < kRowThreads) {
    return false;
  }
  const tir::ExprNode* kv = r.op->reduce_axis[0]->var.get();
  bool ok = true;
  tir::PostOrderVisit(body, [&](const tir::ExprNode* e) {
    if (e->kind != tir::ExprKind::kProducerLoad) return;
    for (size_t d = 0; d < e->args.size(); ++d) {
      const bool uses = tir::UsesVar(e->args[d], [&](const tir::ExprNode* v) { return v == kv; });
      if (uses && (d + 1 != e->args.size() || e->args[d].get() != kv)) ok = false;
    }
  });
  return ok;
}

bool SameConstExtents(const std::vector<IterVar>& a, const std::vector<IterVar>& b, size_t n) {
  if (a.size() < n || b.size() < n) return false;
  for (size_t d = 0; d < n; ++d) {
    int64_t x = 0, y = 0;
    if (!tir::IsConstInt(a[d]->dom.extent, &x) || !tir::IsConstInt(b[d]->dom.extent, &y) ||
        x != y) {
      return false;
    }
  }
  return true;
}

// Splits reduction `r` by a warp and rfactors the lanes' part into a
// "shared" stage (returned, for the caller to place) whose lane axis is bound
// to threadIdx.x. Resets r's loops.
absl::StatusOr<Stage*> WarpReduce(Schedule& s, Stage* r) {
  const Tensor t = r->op->output(0);
  KILN_ASSIGN_OR_RETURN(SplitAxes k, r->split(r->op->reduce_axis[0], kRowThreads));
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> rf, s.rfactor(t, k.inner, 0));
  Stage* f = s[rf[0]];
  if (f == nullptr) return absl::InternalError("ScheduleDefaultCuda: rfactor gave no stage");
  KILN_RETURN_IF_ERROR(f->set_scope("shared"));
  KILN_RETURN_IF_ERROR(f->bind(f->op->axis[0], "threadIdx.x"));
  return f;
}

// Schedules `out` (the fused function's only output) one warp per row when
// it and the stages it reads fit (see above); false, with nothing changed,
// when they do not.
absl::StatusOr<bool> ScheduleRows(Schedule& s, Stage* out) {
  if (out->is_placeholder() || !Untouched(*out) || out->op->axis.empty()) return false;
  int64_t e = 0;
  const bool out_reduces = RowReduction(*out, &e);
  if (!out_reduces && !out->op->reduce_axis.empty()) return false;
  std::vector<Stage*> reductions;
  for (Stage* st : s.stages()) {
    if (st == out || st->is_placeholder() || st->is_inlined()) continue;
    int64_t re = 0;
    if (!Untouched(*st) || !RowReduction(*st, &re) || (e != 0 && re != e)) return false;
    e = re;
    reductions.push_back(st);
  }
  if (e == 0) return false;
  // The rows: the output's axes (a reduction, or one value per row) or all
  // but its last, which then is the reduced dim.
  const size_t rows = out_reduces ? out->op->axis.size() : reductions[0]->op->axis.size();
  if (rows == 0) return false;
  if (!out_reduces) {
    const size_t n = out->op->axis.size();
    int64_t last = 0;
    const bool per_row = n == rows;
    const bool per_elem =
        n == rows + 1 && tir::IsConstInt(out->op->axis[n - 1]->dom.extent, &last) && last == e;
    if (!per_row && !per_elem) return false;
  }
  for (Stage* r : reductions) {
    if (r->op->axis.size() != rows || !SameConstExtents(r->op->axis, out->op->axis, rows)) {
      return false;
    }
  }
  if (out_reduces) {
    // The lanes accumulate in registers ("local"); the output copies them
    // (every lane the same value).
    KILN_ASSIGN_OR_RETURN(Tensor cache, s.cache_write(out->op->output(0), "local"));
    reductions.push_back(s[cache]);
  }
  const std::vector<IterVar> axes = out->op->axis;
  KILN_ASSIGN_OR_RETURN(IterVar row,
                        out->fuse(std::vector<IterVar>(axes.begin(),
                                                       axes.begin() + static_cast<long>(rows))));
  KILN_RETURN_IF_ERROR(out->bind(row, "blockIdx.x"));
  if (axes.size() == rows + 1) {
    KILN_ASSIGN_OR_RETURN(SplitAxes j, out->split(axes.back(), kRowThreads));
    KILN_RETURN_IF_ERROR(out->reorder({j.inner, j.outer}));
    KILN_RETURN_IF_ERROR(out->bind(j.inner, "threadIdx.x"));
  }
  for (Stage* r : reductions) {
    KILN_ASSIGN_OR_RETURN(Stage* rf, WarpReduce(s, r));
    KILN_RETURN_IF_ERROR(rf->compute_at(r, r->leaf_iter_vars[rows - 1]));
    KILN_RETURN_IF_ERROR(r->set_scope("local"));
    KILN_RETURN_IF_ERROR(r->compute_at(out, row));
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
    if (st->is_placeholder() || !Untouched(*st) || !GemmShaped(*st) || !GemmReduction(*st, *st) ||
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
                                           Untouched(*r) && GemmReduction(*r, *out));
    }
    if (gemm) {
      KILN_ASSIGN_OR_RETURN(IterVar tx, TileGemm(out));
      thread_loop[out] = tx;
      gemm_tiled.insert(out);
      continue;
    }
    if (out_stages.size() == 1) {
      KILN_ASSIGN_OR_RETURN(bool rows, ScheduleRows(s, out));
      if (rows) continue;
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
          if (gemm_tiled.count(out) && GemmReduction(*st, *out)) {
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
