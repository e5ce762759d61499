// InferType on a ResNet-50-sized graph (~230 operator calls), a BERT layer and
// the 100,000-node chain. Run: bazel run --config=opt //types:infer_type_bench
#include "benchmark/benchmark.h"
#include "types/infer_type.h"
#include "types/model_zoo.h"

namespace kiln::types {
namespace {

void Run(benchmark::State& state, const absl::StatusOr<Module>& m) {
  if (!m.ok()) {
    state.SkipWithError(std::string(m.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    auto typed = InferType(*m);
    if (!typed.ok()) {
      state.SkipWithError(std::string(typed.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(typed);
  }
}

void BM_InferTypeResNet50(benchmark::State& state) { Run(state, ResNet50(Dim(1))); }
BENCHMARK(BM_InferTypeResNet50)->Unit(benchmark::kMillisecond);

void BM_InferTypeResNet50SymbolicBatch(benchmark::State& state) {
  Run(state, ResNet50(Dim::Var("n")));
}
BENCHMARK(BM_InferTypeResNet50SymbolicBatch)->Unit(benchmark::kMillisecond);

void BM_InferTypeBertLayer(benchmark::State& state) { Run(state, BertLayer(Dim(1), 128)); }
BENCHMARK(BM_InferTypeBertLayer)->Unit(benchmark::kMillisecond);

void BM_InferTypeChain100k(benchmark::State& state) { Run(state, AddChain(100000, false)); }
BENCHMARK(BM_InferTypeChain100k)->Unit(benchmark::kMillisecond);

void BM_InferTypeLetChain100k(benchmark::State& state) { Run(state, AddChain(100000, true)); }
BENCHMARK(BM_InferTypeLetChain100k)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kiln::types
