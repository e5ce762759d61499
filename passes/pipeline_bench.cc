// The default O3 pipeline on ResNet-50 with constant weights (SimplifyInference,
// FoldConstant and FoldScaleAxis fold the batch norms into the convolution
// weights) and on a BERT-base layer. Run:
//   bazel run --config=opt //passes:pipeline_bench
#include "benchmark/benchmark.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

void RunO3(benchmark::State& state, const absl::StatusOr<Module>& model) {
  RegisterAllPasses();
  if (!model.ok()) {
    state.SkipWithError(std::string(model.status().message()).c_str());
    return;
  }
  auto pipeline = DefaultPipeline(3);
  if (!pipeline.ok()) {
    state.SkipWithError(std::string(pipeline.status().message()).c_str());
    return;
  }
  PassContext ctx;
  ctx.opt_level = 3;
  for (auto _ : state) {
    Module m = *model;
    auto changed = (*pipeline)->Run(&m, ctx);
    if (!changed.ok()) {
      state.SkipWithError(std::string(changed.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(m);
  }
}

void BM_O3ResNet50ConstantWeights(benchmark::State& state) {
  static const auto* model = new absl::StatusOr<Module>(types::ResNet50(Dim(1), true));
  RunO3(state, *model);
}
BENCHMARK(BM_O3ResNet50ConstantWeights)->Unit(benchmark::kMillisecond);

void BM_O3ResNet50ParamWeights(benchmark::State& state) {
  static const auto* model = new absl::StatusOr<Module>(types::ResNet50(Dim(1), false));
  RunO3(state, *model);
}
BENCHMARK(BM_O3ResNet50ParamWeights)->Unit(benchmark::kMillisecond);

void BM_O3BertLayerConstantWeights(benchmark::State& state) {
  static const auto* model = new absl::StatusOr<Module>(types::BertLayer(Dim(1), 128, true));
  RunO3(state, *model);
}
BENCHMARK(BM_O3BertLayerConstantWeights)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kiln::passes
