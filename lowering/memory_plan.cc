// File: lowering/memory_plan.cc
#include "lowering/memory_plan.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln::lowering {
namespace {

// Rounds `bytes` up to a multiple of `alignment` (> 0); fails on overflow.
absl::StatusOr<int64_t> RoundUp(int64_t bytes, int64_t alignment, size_t index) {
  const int64_t rem = bytes % alignment;
  if (rem == 0) return bytes;
  const int64_t pad = alignment - rem;
  if (bytes > std::numeric_limits<int64_t>::max() - pad) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory plan: tensor ", index, " is too large (", bytes, " bytes)"));
  }
  return bytes + pad;
}

// One step of the walk: tensors are allocated at their def_step and freed
// after their last_use_step. At one step every allocation comes before every
// release, so a tensor never takes the storage of an input of its own step.
struct Event {
  int step = 0;
  int kind = 0;  // 0: allocate, 1: release
  int tensor = 0;
  friend bool operator<(const Event& a, const Event& b) {
    return std::tie(a.step, a.kind, a.tensor) < std::tie(b.step, b.kind, b.tensor);
  }
};

class Planner {
 public:
  explicit Planner(MemoryPlan* plan) : plan_(plan) {}

  // Gives tensor `t` (of `bytes`, already rounded) a storage.
  void Allocate(int t, int64_t bytes, bool exclusive, bool share) {
    if (!exclusive && share && !free_.empty()) {
      // Best fit: the smallest free storage at least as large ...
      auto it = free_.lower_bound(bytes);
      if (it == free_.end()) {
        // ... else the largest free one (the first freed among equals), grown.
        it = free_.lower_bound(std::prev(free_.end())->first);
      }
      const int s = it->second;
      free_.erase(it);
      plan_->storage_bytes[s] = std::max(plan_->storage_bytes[s], bytes);
      plan_->storage_of[t] = s;
      return;
    }
    plan_->storage_of[t] = static_cast<int>(plan_->storage_bytes.size());
    plan_->storage_bytes.push_back(bytes);
    plan_->storage_exclusive.push_back(exclusive);
  }

  // Tensor `t` is read for the last time: its storage is free again (unless it
  // is exclusive, or sharing is off).
  void Release(int t, bool share) {
    const int s = plan_->storage_of[t];
    if (!share || plan_->storage_exclusive[s]) return;
    // A free storage keeps its size; it grows only when taken again (after
    // it has left the free list), so the key stays right.
    free_.emplace(plan_->storage_bytes[s], s);
  }

 private:
  MemoryPlan* plan_;
  // Free (shareable) storages by size; among equal sizes, the first freed first.
  std::multimap<int64_t, int> free_;
};

}  // namespace

absl::StatusOr<MemoryPlan> PlanMemory(const std::vector<TensorLife>& tensors,
                                      const MemoryPlanOptions& options) {
  if (options.alignment <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory plan: alignment must be positive, got ", options.alignment));
  }
  std::vector<int64_t> rounded(tensors.size(), 0);
  std::vector<Event> events;
  events.reserve(2 * tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorLife& t = tensors[i];
    if (t.bytes < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("memory plan: tensor ", i, " has a negative size (", t.bytes, " bytes)"));
    }
    if (t.last_use_step < t.def_step) {
      return absl::InvalidArgumentError(
          absl::StrCat("memory plan: tensor ", i, " is last used at step ", t.last_use_step,
                       ", before the step that defines it (", t.def_step, ")"));
    }
    absl::StatusOr<int64_t> r = RoundUp(t.bytes, options.alignment, i);
    if (!r.ok()) return r.status();
    rounded[i] = *r;
    events.push_back(Event{t.def_step, 0, static_cast<int>(i)});
    events.push_back(Event{t.last_use_step, 1, static_cast<int>(i)});
  }
  std::sort(events.begin(), events.end());

  MemoryPlan plan;
  plan.storage_of.assign(tensors.size(), -1);
  Planner planner(&plan);
  for (const Event& e : events) {
    const TensorLife& t = tensors[e.tensor];
    if (e.kind == 0) {
      planner.Allocate(e.tensor, rounded[e.tensor], t.exclusive, options.share);
    } else {
      planner.Release(e.tensor, options.share);
    }
  }

  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].exclusive) plan.naive_bytes += rounded[i];
  }
  for (size_t s = 0; s < plan.storage_bytes.size(); ++s) {
    if (!plan.storage_exclusive[s]) plan.shared_bytes += plan.storage_bytes[s];
  }
  return plan;
}

}  // namespace kiln::lowering
