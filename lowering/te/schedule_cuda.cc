// File: lowering/te/schedule_cuda.cc — the default GPU schedule.
#include "lowering/te/schedule_cuda.h"

#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

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

// Register blocking of GEMM-like outputs (dense, matmul): an output with two
// data-parallel axes of constant extents, each at least kGemmMin, computed by
// a reduction (its own, or a producer's computed per thread). Each block of
// kGemmThreads x kGemmThreads threads computes a kGemmTile x kGemmTile tile,
// each thread a kGemmReg x kGemmReg block of it: the reduction runs at the
// thread's loop into a "local" array of that size with its reduction axes
// outermost, so every A and B value loaded serves kGemmReg outputs.
constexpr int64_t kGemmReg = 4;
constexpr int64_t kGemmThreads = 16;
constexpr int64_t kGemmTile = kGemmReg * kGemmThreads;
constexpr int64_t kGemmMin = kGemmTile;

bool GemmShaped(const Stage& s) {
  if (s.op->axis.size() != 2) return false;
  for (const IterVar& iv : s.op->axis) {
    int64_t e = 0;
    if (!tir::IsConstInt(iv->dom.extent, &e) || e < kGemmMin) return false;
  }
  return true;
}

// Tiles a GEMM-shaped output; returns its threadIdx.x loop.
absl::StatusOr<IterVar> TileGemm(Stage* s) {
  const std::vector<IterVar> axes = s->op->axis;
  KILN_ASSIGN_OR_RETURN(SplitAxes i1, s->split(axes[0], kGemmTile));
  KILN_ASSIGN_OR_RETURN(SplitAxes i2, s->split(i1.inner, kGemmReg));
  KILN_ASSIGN_OR_RETURN(SplitAxes j1, s->split(axes[1], kGemmTile));
  KILN_ASSIGN_OR_RETURN(SplitAxes j2, s->split(j1.inner, kGemmReg));
  KILN_RETURN_IF_ERROR(s->reorder({i1.outer, j1.outer, i2.outer, j2.outer, i2.inner, j2.inner}));
  KILN_RETURN_IF_ERROR(s->bind(i1.outer, "blockIdx.y"));
  KILN_RETURN_IF_ERROR(s->bind(j1.outer, "blockIdx.x"));
  KILN_RETURN_IF_ERROR(s->bind(i2.outer, "threadIdx.y"));
  KILN_RETURN_IF_ERROR(s->bind(j2.outer, "threadIdx.x"));
  return j2.outer;
}

// Whether the reduction stage `r` (read by the GEMM-tiled output only) is
// GEMM-like: two data-parallel axes and at least one reduction axis.
bool GemmReduction(const Stage& r) { return r.op->axis.size() == 2 && !r.op->reduce_axis.empty(); }

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
            // Reduction axes outermost: each loaded value serves a row or
            // column of the thread's block.
            std::vector<IterVar> order = st->op->reduce_axis;
            order.insert(order.end(), st->op->axis.begin(), st->op->axis.end());
            KILN_RETURN_IF_ERROR(st->reorder(order));
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
