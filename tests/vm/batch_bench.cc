// A convolutional block compiled twice from one text-IR program: with a
// symbolic batch N (a VM artifact; its kernels are the static N = 1
// schedules in a loop over the batch, lowering/vm/batch_split.h) and with N
// fixed (a graph-executor artifact), both run at the same batch through the
// C API on one thread. The ratio of the two times is what a symbolic batch
// costs (issue 14: the VM is not to be forced on static models, and a
// dynamic model should not pay much for being dynamic).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "kiln/kiln.h"
#include "kiln/runtime.h"

namespace {

// Weights from sin/cos of ramps (folded into constants at compile time).
constexpr char kBlock[] = R"(#[version = "0.1"]
def @main(%x: Tensor[(BATCH, 16, 32, 32), float32]) {
  %w1 = multiply(sin(reshape(dyn.arange(0f, 2304f, 1f), newshape=[16, 16, 3, 3])), 0.1f);
  %w2 = multiply(cos(reshape(dyn.arange(0f, 2304f, 1f), newshape=[16, 16, 3, 3])), 0.1f);
  %w3 = multiply(sin(reshape(dyn.arange(0f, 4608f, 1f), newshape=[32, 16, 3, 3])), 0.1f);
  %b = cos(dyn.arange(0f, 16f, 1f));
  %d = multiply(sin(reshape(dyn.arange(0f, 320f, 1f), newshape=[10, 32])), 0.25f);
  %0 = nn.relu(nn.bias_add(nn.conv2d(%x, %w1, padding=[1, 1], channels=16, kernel_size=[3, 3]), %b));
  %1 = nn.relu(add(nn.conv2d(%0, %w2, padding=[1, 1], channels=16, kernel_size=[3, 3]), %x));
  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);
  %3 = nn.relu(nn.conv2d(%2, %w3, padding=[1, 1], channels=32, kernel_size=[3, 3]));
  %4 = reshape(nn.global_avg_pool2d(%3), newshape=[-1, 32]);
  nn.softmax(nn.dense(%4, %d, units=10))
}
)";

bool Ok(KilnStatus* st, benchmark::State& state) {
  if (st == nullptr) return true;
  state.SkipWithError(kiln_status_message(st));
  kiln_status_free(st);
  return false;
}

// range(0): batch; range(1): 1 = symbolic batch (VM), 0 = fixed (graph).
void BM_ConvBlock(benchmark::State& state) {
  const int64_t batch = state.range(0);
  const bool symbolic = state.range(1) != 0;
  const std::string text =
      absl::StrReplaceAll(kBlock, {{"BATCH", symbolic ? std::string("N") : std::to_string(batch)}});
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/batch_bench_" +
                           (symbolic ? "n" : std::to_string(batch)) + ".so";
  KilnModel* model = nullptr;
  if (!Ok(kiln_model_parse_text(text.c_str(), "batch_bench", &model), state)) return;
  KilnStatus* st = kiln_model_compile(model, nullptr, path.c_str(), nullptr);
  kiln_model_release(model);
  if (!Ok(st, state)) return;
  KilnArtifact* art = nullptr;
  KilnSession* s = nullptr;
  if (!Ok(kiln_artifact_load(path.c_str(), &art), state)) return;
  KilnSessionOptions o{};
  o.struct_size = sizeof o;
  o.num_threads = 1;
  if (!Ok(kiln_session_create(art, &o, &s), state)) {
    kiln_artifact_release(art);
    return;
  }
  std::vector<float> x(static_cast<size_t>(batch * 16 * 32 * 32));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 97) / 97.0f - 0.5f;
  int64_t shape[4] = {batch, 16, 32, 32};
  DLTensor dx{x.data(), {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, shape, nullptr, 0};
  if (Ok(kiln_session_set_input(s, "x", &dx), state) && Ok(kiln_session_run(s), state)) {
    for (auto _ : state) {
      if (!Ok(kiln_session_run(s), state)) break;
    }
    state.SetLabel(symbolic ? "symbolic batch (VM)" : "fixed batch (graph executor)");
  }
  kiln_session_release(s);
  kiln_artifact_release(art);
}
BENCHMARK(BM_ConvBlock)
    ->ArgNames({"batch", "symbolic"})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({4, 0})
    ->Args({4, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
