// File: lowering/te/schedule_cuda_internal.h
//
// Internals shared by the default GPU schedule's files: schedule_cuda.cc
// (the strategy: GEMM and conv templates, injective ops) and
// schedule_cuda_rows.cc (row reductions, one warp or block per row). Not
// part of the public API.
#ifndef KILN_LOWERING_TE_SCHEDULE_CUDA_INTERNAL_H_
#define KILN_LOWERING_TE_SCHEDULE_CUDA_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/tir.h"
#include "lowering/te/schedule.h"

namespace kiln::te::cuda_internal {

inline constexpr int kWarp = 32;

// Whether `s` is still as created: no splits, fuses or attachments.
inline bool Untouched(const Stage& s) {
  return s.relations.empty() && s.attach_type == AttachType::kGroupRoot;
}

// Whether the first n axes of a and b have the same constant extents.
inline bool SameConstExtents(const std::vector<IterVar>& a, const std::vector<IterVar>& b, size_t n) {
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

// Schedules `out` (the fused function's only output) one warp (or block)
// per row when it and the stages it reads are row reductions and values
// computed from them (softmax, layer_norm, mean, global pooling); false,
// with nothing changed, when they are not (schedule_cuda_rows.cc).
absl::StatusOr<bool> ScheduleRows(Schedule& s, Stage* out, int max_threads);

}  // namespace kiln::te::cuda_internal

#endif  // KILN_LOWERING_TE_SCHEDULE_CUDA_INTERNAL_H_
