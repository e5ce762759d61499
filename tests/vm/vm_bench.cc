// The VM's per-instruction cost (issue 14: aim under 50 ns): a program that
// runs only VM instructions (Match's GetTag / If / GetField, InvokeClosure,
// Move, Ret, no kernel call), a nested walk over a sequence input of N
// scalars (N^2 list cells visited; building the list from the input is
// O(N)), timed per run through the C API; the instructions of a run are read
// from the profile's "vm" row. Counters: instructions per run and the time
// per instruction (per_instruction, the run's time over its count: it
// includes setting up the run and the list).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/runtime.h"

namespace {

constexpr char kProgram[] = R"(#[version = "0.1"]
type Seq {
  SCons(Tensor[(), float32], Seq),
  SNil,
}

def @main(%s: Seq) -> Tensor[(), float32] {
  let %last: fn (Seq, Tensor[(), float32]) -> Tensor[(), float32] =
    fn (%q: Seq, %acc: Tensor[(), float32]) -> Tensor[(), float32] {
      match (%q) {
        SCons(%h, %t) => %last(%t, %h),
        SNil => %acc,
      }
    };
  let %outer: fn (Seq, Tensor[(), float32]) -> Tensor[(), float32] =
    fn (%q: Seq, %acc: Tensor[(), float32]) -> Tensor[(), float32] {
      match (%q) {
        SCons(%h, %t) => %outer(%t, %last(%s, %h)),
        SNil => %acc,
      }
    };
  %outer(%s, 0f)
}
)";

bool Ok(KilnStatus* st, benchmark::State& state) {
  if (st == nullptr) return true;
  state.SkipWithError(kiln_status_message(st));
  kiln_status_free(st);
  return false;
}

// The instruction count in the profile table's "vm" row: "vm  vm instructions ... (N) ...".
int64_t Instructions(KilnSession* s) {
  KilnProfile* p = nullptr;
  if (KilnStatus* st = kiln_session_profile(s, &p); st != nullptr) {
    kiln_status_free(st);
    return -1;
  }
  char* text = nullptr;
  int64_t n = -1;
  if (kiln_profile_table(p, &text) == nullptr) {
    const std::string t(text);
    const size_t row = t.find("vm instructions");
    const size_t open = row == std::string::npos ? row : t.find('(', row);
    if (open != std::string::npos) n = std::strtoll(t.c_str() + open + 1, nullptr, 10);
    kiln_free(text);
  }
  kiln_profile_release(p);
  return n;
}

void BM_VmInstructions(benchmark::State& state) {
  const int32_t n = static_cast<int32_t>(state.range(0));
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR") != nullptr ? std::getenv("TEST_TMPDIR") : "/tmp") +
      "/vm_bench.so";
  KilnModel* model = nullptr;
  if (!Ok(kiln_model_parse_text(kProgram, "vm_bench", &model), state)) return;
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
  std::vector<float> values(static_cast<size_t>(n));
  std::vector<DLTensor> elems(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    values[static_cast<size_t>(i)] = static_cast<float>(i);
    elems[static_cast<size_t>(i)] = DLTensor{
        &values[static_cast<size_t>(i)], {kDLCPU, 0}, 0, {kDLFloat, 32, 1}, nullptr, nullptr, 0};
  }
  if (Ok(kiln_session_set_input_sequence(s, "s", elems.data(), n), state) &&
      Ok(kiln_session_run(s), state)) {
    const int64_t instructions = Instructions(s);
    for (auto _ : state) {
      if (!Ok(kiln_session_run(s), state)) break;
    }
    state.counters["instructions"] = static_cast<double>(instructions);
    // Seconds per instruction (printed with an SI prefix: "18.9n" is 18.9 ns).
    state.counters["per_instruction"] = benchmark::Counter(
        static_cast<double>(instructions),
        benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  }
  kiln_session_release(s);
  kiln_artifact_release(art);
}
BENCHMARK(BM_VmInstructions)->Arg(64)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace
