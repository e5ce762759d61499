// File: tests/artifact/artifact_bench.cc
//
// The deployment runtime on kiln-compiled artifacts (issue 5's benchmark):
//   BM_LoadChain1000   kiln_artifact_load of a 1,000-node graph (a chain of
//                      `add` kernels, one operator per kernel: FuseOps max
//                      depth 1): validate, parse, plan, dlopen, resolve
//   BM_RunChain1000    one run of that graph; `per_node` is the time per node
//                      (the executor's overhead plus a 16-float add kernel
//                      with its argument checks). Aim: < 2 us per node.
//   BM_LoadResNet50    kiln_artifact_load of ResNet-50 with its 25.6M weights
//                      as constants (a ~100 MB .so), with the arena vs naive
//                      memory plan as counters
//
//   bazel run --config=opt //tests/artifact:artifact_bench
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "c_api/compiler.h"
#include "kiln/runtime.h"
#include "types/model_zoo.h"

namespace {

std::string TempDir() {
  static const std::string dir = [] {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string tmpl = absl::StrCat(base != nullptr ? base : "/tmp", "/kiln_artifact_bench_XXXXXX");
    if (mkdtemp(tmpl.data()) == nullptr) return std::string("/tmp");
    return tmpl;
  }();
  return dir;
}

struct Compiled {
  std::string path;
  std::string error;
  kiln::compiler::CompileReport report;
};

Compiled Compile(const absl::StatusOr<kiln::Module>& m, const kiln::compiler::CompileOptions& o,
                 const std::string& name) {
  Compiled c;
  c.path = absl::StrCat(TempDir(), "/", name, ".so");
  if (!m.ok()) {
    c.error = m.status().ToString();
    return c;
  }
  auto r = kiln::compiler::CompileToLibrary(*m, o, c.path);
  if (!r.ok()) {
    c.error = r.status().ToString();
  } else {
    c.report = *r;
  }
  return c;
}

const Compiled& Chain1000() {
  static const Compiled c = [] {
    kiln::compiler::CompileOptions o;
    o.opt_level = 0;
    o.max_fuse_depth = 1;
    return Compile(kiln::types::AddChain(1000, /*as_lets=*/false), o, "chain1000");
  }();
  return c;
}

const Compiled& ResNet50() {
  static const Compiled c = [] {
    return Compile(kiln::types::ResNet50(kiln::Dim(1), /*constant_weights=*/true), {}, "resnet50");
  }();
  return c;
}

bool Check(benchmark::State& state, KilnStatus* st) {
  if (st == nullptr) return true;
  state.SkipWithError(kiln_status_message(st));
  kiln_status_free(st);
  return false;
}

void LoadBench(benchmark::State& state, const Compiled& c) {
  if (!c.error.empty()) {
    state.SkipWithError(c.error.c_str());
    return;
  }
  for (auto _ : state) {
    KilnArtifact* a = nullptr;
    if (!Check(state, kiln_artifact_load(c.path.c_str(), &a))) break;
    kiln_artifact_release(a);
  }
  state.counters["file_MB"] = static_cast<double>(c.report.file_bytes) / 1e6;
  state.counters["nodes"] = c.report.num_fused_calls;
  state.counters["kernels"] = c.report.num_kernels;
  state.counters["arena_MB"] = static_cast<double>(c.report.arena_bytes) / 1e6;
  state.counters["naive_MB"] = static_cast<double>(c.report.naive_bytes) / 1e6;
}

void BM_LoadChain1000(benchmark::State& state) { LoadBench(state, Chain1000()); }
BENCHMARK(BM_LoadChain1000)->Unit(benchmark::kMillisecond);

void BM_RunChain1000(benchmark::State& state) {
  const Compiled& c = Chain1000();
  if (!c.error.empty()) {
    state.SkipWithError(c.error.c_str());
    return;
  }
  KilnArtifact* a = nullptr;
  if (!Check(state, kiln_artifact_load(c.path.c_str(), &a))) return;
  KilnSessionOptions opts{};
  opts.struct_size = sizeof(opts);
  opts.num_threads = 1;
  KilnSession* s = nullptr;
  if (Check(state, kiln_session_create(a, &opts, &s))) {
    float x[16] = {0};
    int64_t shape[2] = {1, 16};
    DLTensor t{};
    t.data = x;
    t.device = {kDLCPU, 0};
    t.ndim = 2;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape;
    if (Check(state, kiln_session_set_input(s, "x", &t))) {
      for (auto _ : state) {
        if (!Check(state, kiln_session_run(s))) break;
      }
      const DLTensor* out = nullptr;
      if (Check(state, kiln_session_get_output(s, 0, &out)) &&
          static_cast<const float*>(out->data)[0] != 1000.0f) {
        state.SkipWithError("wrong result: expected 1000 after 1000 additions of 1");
      }
    }
  }
  state.counters["nodes"] = c.report.num_fused_calls;
  state.counters["per_node"] = benchmark::Counter(
      c.report.num_fused_calls, benchmark::Counter::kIsIterationInvariantRate |
                                    benchmark::Counter::kInvert);
  kiln_session_release(s);
  kiln_artifact_release(a);
}
BENCHMARK(BM_RunChain1000)->Unit(benchmark::kMicrosecond);

void BM_LoadResNet50(benchmark::State& state) { LoadBench(state, ResNet50()); }
BENCHMARK(BM_LoadResNet50)->Unit(benchmark::kMillisecond);

}  // namespace
