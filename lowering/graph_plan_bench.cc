// File: lowering/graph_plan_bench.cc
//
// The graph plan of whole models (types/model_zoo.h), batch 1: the time of
// PlanGraph (JSON + memory plan; the graph passes and the lowering run once,
// outside the timing) and, as counters, the session arena with storage
// sharing against the naive plan (one storage per intermediate entry).
//
//   bazel run --config=opt //lowering:graph_plan_bench
//
// Counters: arena_bytes / naive_bytes (and MiB), nodes, kernel_calls,
// entries, storages, plan_ms (mean time of one PlanGraph call).
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "ir/dim.h"
#include "ir/module.h"
#include "lowering/graph_plan.h"
#include "lowering/lower.h"
#include "lowering/testing/fuse_for_test.h"
#include "types/model_zoo.h"

namespace kiln::lowering {
namespace {

struct Prepared {
  Module fused;
  LoweredModule lowered;
};

enum Model { kResNet50 = 0, kResNet50ConstWeights = 1, kBertLayer = 2 };

absl::StatusOr<Module> Build(int model) {
  switch (model) {
    case kResNet50:
      return types::ResNet50(Dim(1), /*constant_weights=*/false);
    case kResNet50ConstWeights:
      return types::ResNet50(Dim(1), /*constant_weights=*/true);
    case kBertLayer:
      return types::BertLayer(Dim(1), /*seq_len=*/128, /*constant_weights=*/false);
    default:
      return absl::InvalidArgumentError("unknown model");
  }
}

// Each model is fused and lowered once per process.
absl::StatusOr<const Prepared*> Prepare(int model) {
  static auto* cache = new std::map<int, std::unique_ptr<Prepared>>();
  auto it = cache->find(model);
  if (it != cache->end()) return it->second.get();
  absl::StatusOr<Module> m = Build(model);
  if (!m.ok()) return m.status();
  auto p = std::make_unique<Prepared>();
  absl::StatusOr<Module> fused = testing::FuseForTest(*m, /*opt_level=*/3);
  if (!fused.ok()) return fused.status();
  p->fused = *std::move(fused);
  absl::StatusOr<LoweredModule> lm = LowerModule(p->fused, {});
  if (!lm.ok()) return lm.status();
  p->lowered = *std::move(lm);
  const Prepared* out = p.get();
  (*cache)[model] = std::move(p);
  return out;
}

void BM_PlanGraph(benchmark::State& state) {
  absl::StatusOr<const Prepared*> p = Prepare(static_cast<int>(state.range(0)));
  if (!p.ok()) {
    state.SkipWithError(std::string(p.status().message()).c_str());
    return;
  }
  GraphPlanOptions shared_opts;
  GraphPlanOptions naive_opts;
  naive_opts.share_storage = false;
  absl::StatusOr<GraphPlan> plan = absl::InternalError("not run");
  absl::Duration total;
  for (auto _ : state) {
    const absl::Time t0 = absl::Now();
    plan = PlanGraph((*p)->fused, (*p)->lowered, shared_opts);
    total += absl::Now() - t0;
    if (!plan.ok()) {
      state.SkipWithError(std::string(plan.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(plan->graph_json.data());
  }
  absl::StatusOr<GraphPlan> naive = PlanGraph((*p)->fused, (*p)->lowered, naive_opts);
  if (!naive.ok()) {
    state.SkipWithError(std::string(naive.status().message()).c_str());
    return;
  }
  constexpr double kMiB = 1024.0 * 1024.0;
  const MemoryPlan& mem = plan->memory;
  state.counters["arena_bytes"] = static_cast<double>(mem.shared_bytes);
  state.counters["naive_bytes"] = static_cast<double>(naive->memory.shared_bytes);
  state.counters["arena_MiB"] = static_cast<double>(mem.shared_bytes) / kMiB;
  state.counters["naive_MiB"] = static_cast<double>(naive->memory.shared_bytes) / kMiB;
  state.counters["nodes"] = plan->num_nodes;
  state.counters["kernel_calls"] = plan->num_op_nodes;
  state.counters["entries"] = static_cast<double>(mem.storage_of.size());
  state.counters["storages"] = static_cast<double>(mem.storage_bytes.size());
  state.counters["plan_ms"] = absl::ToDoubleMilliseconds(total) /
                              static_cast<double>(std::max<int64_t>(1, state.iterations()));
  static const char* const kNames[] = {"resnet50_b1", "resnet50_b1_const_weights",
                                       "bert_layer_b1_s128"};
  state.SetLabel(kNames[state.range(0)]);
}
BENCHMARK(BM_PlanGraph)
    ->Arg(kResNet50)
    ->Arg(kResNet50ConstWeights)
    ->Arg(kBertLayer)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kiln::lowering
