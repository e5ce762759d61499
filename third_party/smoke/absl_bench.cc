// kiln_cc_benchmark example: `bazel run --config=opt //third_party/smoke:absl_bench`.
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"

namespace {

void BM_StrCat(benchmark::State& state) {
  for (auto _ : state) {
    std::string s = absl::StrCat("node_", state.iterations(), "_", 3.5);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_StrCat);

void BM_FlatHashMapInsert(benchmark::State& state) {
  for (auto _ : state) {
    absl::flat_hash_map<int, int> m;
    for (int i = 0; i < state.range(0); ++i) m[i] = i;
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_FlatHashMapInsert)->Arg(16)->Arg(1024);

}  // namespace
