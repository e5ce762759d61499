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
  // 1. Inline injective intermediates.
  for (Stage* st : s.stages()) {
    if (st->is_placeholder() || st->is_output || is_out.count(st) || !Untouched(*st)) continue;
    if (!st->op->reduce_axis.empty() || st->op->attrs.count("no_inline")) continue;
    KILN_RETURN_IF_ERROR(st->compute_inline());
  }
  // 2. Outputs: one thread per element.
  std::unordered_map<Stage*, IterVar> thread_loop;  // output -> its threadIdx.x loop (or null)
  for (Stage* out : out_stages) {
    if (out->is_placeholder() || !Untouched(*out)) continue;
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
