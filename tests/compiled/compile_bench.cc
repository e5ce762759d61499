// File: tests/compiled/compile_bench.cc
//
// Benchmarks of generated code and of the compiler itself:
//   - BM_FmaPeak: the machine's fp32 FMA peak (hand-written AVX-512 or AVX2
//     loop of independent FMAs), 1 and 2 threads — the ceiling for the rest;
//   - BM_Dense1024: nn.dense 1024x1024x1024 with the default x86 schedule;
//   - BM_GemmConstWeight: SGEMM 1024^3 and BERT's projection shapes with a
//     constant (compile-time packed) weight;
//   - BM_ResNet50Conv: ResNet-50's convolution layers (constant weights, O3:
//     NCHW16c, the x86 conv2d strategy);
//   - BM_CompileResNet50: graph passes + lowering + LLVM for all fused
//     functions of ResNet-50 (counters split the phases).
// Counters: GFLOPS (rate), peak_pct (percent of the FMA peak measured by the
// same binary at the same thread count), and for compile: passes_ms, lower_ms,
// codegen_ms.
#include <immintrin.h>

#include <chrono>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "interpreter/value.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "kiln/threadpool.h"
#include "codegen_llvm/codegen_llvm.h"
#include "tests/compiled/compare.h"
#include "tests/compiled/dense_schedule.h"
#include "tests/compiled/jit_runner.h"
#include "types/infer_type.h"
#include "types/model_zoo.h"

namespace kiln::testing {
namespace {

__attribute__((target("avx512f"))) float FmaLoop512(int64_t iters) {
  // Distinct starting values: twelve identical chains are one chain to the
  // compiler (it folded them and the loop measured FMA latency, not
  // throughput: 3x the real peak on a Zen 4).
  __m512 a0 = _mm512_set1_ps(1.000f), a1 = _mm512_set1_ps(1.001f), a2 = _mm512_set1_ps(1.002f);
  __m512 a3 = _mm512_set1_ps(1.003f), a4 = _mm512_set1_ps(1.004f), a5 = _mm512_set1_ps(1.005f);
  __m512 a6 = _mm512_set1_ps(1.006f), a7 = _mm512_set1_ps(1.007f), a8 = _mm512_set1_ps(1.008f);
  __m512 a9 = _mm512_set1_ps(1.009f), a10 = _mm512_set1_ps(1.010f), a11 = _mm512_set1_ps(1.011f);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    a0 = _mm512_fmadd_ps(a0, x, y); a1 = _mm512_fmadd_ps(a1, x, y);
    a2 = _mm512_fmadd_ps(a2, x, y); a3 = _mm512_fmadd_ps(a3, x, y);
    a4 = _mm512_fmadd_ps(a4, x, y); a5 = _mm512_fmadd_ps(a5, x, y);
    a6 = _mm512_fmadd_ps(a6, x, y); a7 = _mm512_fmadd_ps(a7, x, y);
    a8 = _mm512_fmadd_ps(a8, x, y); a9 = _mm512_fmadd_ps(a9, x, y);
    a10 = _mm512_fmadd_ps(a10, x, y); a11 = _mm512_fmadd_ps(a11, x, y);
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                           _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  float out[16];
  _mm512_storeu_ps(out, s);  // (_mm512_reduce_add_ps trips gcc 12's -Wuninitialized)
  return out[0] + out[15];
}

__attribute__((target("avx2,fma"))) float FmaLoop256(int64_t iters) {
  __m256 a0 = _mm256_set1_ps(1.000f), a1 = _mm256_set1_ps(1.001f), a2 = _mm256_set1_ps(1.002f);
  __m256 a3 = _mm256_set1_ps(1.003f), a4 = _mm256_set1_ps(1.004f), a5 = _mm256_set1_ps(1.005f);
  __m256 a6 = _mm256_set1_ps(1.006f), a7 = _mm256_set1_ps(1.007f), a8 = _mm256_set1_ps(1.008f);
  __m256 a9 = _mm256_set1_ps(1.009f), a10 = _mm256_set1_ps(1.010f), a11 = _mm256_set1_ps(1.011f);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    a0 = _mm256_fmadd_ps(a0, x, y); a1 = _mm256_fmadd_ps(a1, x, y);
    a2 = _mm256_fmadd_ps(a2, x, y); a3 = _mm256_fmadd_ps(a3, x, y);
    a4 = _mm256_fmadd_ps(a4, x, y); a5 = _mm256_fmadd_ps(a5, x, y);
    a6 = _mm256_fmadd_ps(a6, x, y); a7 = _mm256_fmadd_ps(a7, x, y);
    a8 = _mm256_fmadd_ps(a8, x, y); a9 = _mm256_fmadd_ps(a9, x, y);
    a10 = _mm256_fmadd_ps(a10, x, y); a11 = _mm256_fmadd_ps(a11, x, y);
  }
  float out[8];
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  _mm256_storeu_ps(out, s);
  return out[0];
}

void BM_FmaPeak(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const int64_t iters = 2'000'000;
  const double flops_per_iter = 12.0 * (avx512 ? 16 : 8) * 2;
  for (auto _ : state) {
    std::vector<std::thread> pool;
    std::vector<float> sink(threads);
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] { sink[t] = avx512 ? FmaLoop512(iters) : FmaLoop256(iters); });
    }
    for (auto& th : pool) th.join();
    benchmark::DoNotOptimize(sink.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(flops_per_iter * iters * threads * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(avx512 ? "avx512" : "avx2");
}
BENCHMARK(BM_FmaPeak)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

void RunCompiledModule(benchmark::State& state, absl::StatusOr<Module> m, double flops);

// Compiles `text` and runs it on random inputs with a pool of `threads`.
void RunCompiled(benchmark::State& state, const std::string& text, double flops) {
  RunCompiledModule(state, ParseModule(text, "bench"), flops);
}

// Peak FLOP/s of this machine at `threads` (the FMA loop above, measured once).
double PeakGflops(int threads) {
  static double peak[3] = {0, 0, 0};
  if (threads < 1 || threads > 2) return 0;
  if (peak[threads] == 0) {
    const bool avx512 = __builtin_cpu_supports("avx512f");
    const int64_t iters = 20000000;
    std::vector<std::thread> pool;
    auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([=] {
        benchmark::DoNotOptimize(avx512 ? FmaLoop512(iters) : FmaLoop256(iters));
      });
    }
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    peak[threads] = 12.0 * (avx512 ? 16 : 8) * 2 * iters * threads / s * 1e-9;
  }
  return peak[threads];
}

// y = x . W (ONNX MatMul: nn.matmul with a constant [K, N] weight, packed at
// compile time), the shape of a BERT projection or a square SGEMM.
void BM_GemmConstWeight(benchmark::State& state) {
  const int64_t m = state.range(1), n = state.range(2), k = state.range(3);
  auto build = [&]() -> absl::StatusOr<Module> {
    Var x = MakeVar("x", MakeTensorType(ShapeFromInts({m, k}), DataType::Float(32)));
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> w, HostTensor::Create(DataType::Float(32), {k, n}));
    float* p = w->mutable_data<float>();
    uint32_t seed = 7;
    for (int64_t i = 0; i < k * n; ++i) {
      seed = seed * 1664525u + 1013904223u;
      p[i] = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
    }
    KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(Ref<const HostTensor>(w)));
    KILN_ASSIGN_OR_RETURN(Op op, GetOp("nn.matmul"));
    KILN_ASSIGN_OR_RETURN(Call call, MakeCall(op, {x, c}, Ref<AttrsNode>(new MatmulAttrs())));
    KILN_ASSIGN_OR_RETURN(Function f, MakeFunction({x}, call));
    Module mod;
    KILN_RETURN_IF_ERROR(mod.AddFunction("main", f).status());
    return mod;
  };
  RunCompiledModule(state, build(), 2.0 * m * n * k);
  state.SetLabel(absl::StrCat(m, "x", n, "x", k));
}
BENCHMARK(BM_GemmConstWeight)
    ->ArgsProduct({{1, 2}, {1024}, {1024}, {1024}})
    ->ArgsProduct({{1, 2}, {128}, {768}, {768}})
    ->ArgsProduct({{1, 2}, {128}, {3072}, {768}})
    ->ArgsProduct({{1, 2}, {128}, {768}, {3072}})
    ->UseRealTime()->Unit(benchmark::kMillisecond);

void RunCompiledModule(benchmark::State& state, absl::StatusOr<Module> m, double flops) {
  const int threads = static_cast<int>(state.range(0));
  if (m.ok()) m = types::InferType(*m);
  if (!m.ok()) {
    state.SkipWithError(std::string(m.status().message()).c_str());
    return;
  }
  auto g = JitGraph::Compile(*m, {});
  auto inputs = RandomInputs(*m, 1, -1, 1, 0, 1);
  if (!g.ok() || !inputs.ok()) {
    state.SkipWithError(std::string(g.ok() ? inputs.status().message() : g.status().message()).c_str());
    return;
  }
  KilnThreadPool* pool = nullptr;
  KilnKernelContext* ctx = nullptr;
  if (kiln_thread_pool_create(threads, &pool) != 0 || kiln_kernel_context_create(pool, &ctx) != 0) {
    state.SkipWithError("thread pool");
    return;
  }
  for (auto _ : state) {
    auto out = (*g)->Run(*inputs, ctx);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  // Share of the machine's FMA peak at this thread count (same process).
  if (state.iterations() > 0 && PeakGflops(threads) > 0) {
    state.counters["peak_pct"] = benchmark::Counter(
        flops * 1e-9 / PeakGflops(threads) * 100.0, benchmark::Counter::kIsIterationInvariantRate);
  }
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
}

void BM_Dense1024(benchmark::State& state) {
  RunCompiled(state, R"(#[version = "0.1"]
def @main(%x: Tensor[(1024, 1024), float32], %w: Tensor[(1024, 1024), float32]) {
  nn.dense(%x, %w)
})",
              2.0 * 1024 * 1024 * 1024);
}
BENCHMARK(BM_Dense1024)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// The same dense with a hand-written packed, register-blocked schedule
// (tests/compiled/dense_schedule.h): what the schedule primitives can express.
void BM_DensePacked1024(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const int64_t n = 1024;
  auto target = codegen::ParseTarget("llvm");
  auto bits = target.ok() ? codegen::VectorRegisterBits(*target) : absl::StatusOr<int>(256);
  auto f = PackedDense(n, n, n, 4, bits.ok() ? *bits / 32 : 8);
  if (!f.ok() || !target.ok()) {
    state.SkipWithError(std::string(f.ok() ? target.status().message() : f.status().message()).c_str());
    return;
  }
  auto jit = codegen::JitModule::Create({*f}, *target);
  if (!jit.ok()) {
    state.SkipWithError(std::string(jit.status().message()).c_str());
    return;
  }
  KilnKernelFn fn = *(*jit)->Lookup("dense_packed");
  std::vector<float> a(n * n, 0.5f), w(n * n, 0.25f), c(n * n);
  int64_t shape[2] = {n, n};
  auto dl = [&](std::vector<float>& v) {
    DLTensor d{};
    d.data = v.data();
    d.device = {kDLCPU, 0};
    d.ndim = 2;
    d.dtype = {kDLFloat, 32, 1};
    d.shape = shape;
    return d;
  };
  DLTensor da = dl(a), dw = dl(w), dc = dl(c);
  DLTensor* args[] = {&da, &dw, &dc};
  KilnThreadPool* pool = nullptr;
  KilnKernelContext* ctx = nullptr;
  if (kiln_thread_pool_create(threads, &pool) != 0 || kiln_kernel_context_create(pool, &ctx) != 0) {
    state.SkipWithError("thread pool");
    return;
  }
  for (auto _ : state) {
    if (fn(args, 3, ctx) != 0) {
      state.SkipWithError("kernel failed");
      break;
    }
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
}
BENCHMARK(BM_DensePacked1024)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

// ResNet-50's convolution layers (batch 1, NCHW in, constant weights: the
// O3 pipeline blocks them to NCHW16c and packs the weights at compile time;
// the one layout_transform of the input is part of the figure):
// (in channels, out channels, input size, kernel, stride).
void BM_ResNet50Conv(benchmark::State& state) {
  const int64_t ci = state.range(1), co = state.range(2), hw = state.range(3);
  const int64_t k = state.range(4), st = state.range(5);
  const int64_t pad = k / 2;
  const int64_t out = (hw + 2 * pad - k) / st + 1;
  auto build = [&]() -> absl::StatusOr<Module> {
    Var x = MakeVar("x", MakeTensorType(ShapeFromInts({1, ci, hw, hw}), DataType::Float(32)));
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> w, HostTensor::Create(DataType::Float(32), {co, ci, k, k}));
    float* p = w->mutable_data<float>();
    uint32_t seed = 11;
    for (int64_t i = 0; i < w->num_elements(); ++i) {
      seed = seed * 1664525u + 1013904223u;
      p[i] = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
    }
    KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(Ref<const HostTensor>(w)));
    auto* attrs = new Conv2DAttrs();
    attrs->strides = {st, st};
    attrs->padding = {pad, pad};
    KILN_ASSIGN_OR_RETURN(Op op, GetOp("nn.conv2d"));
    KILN_ASSIGN_OR_RETURN(Call conv, MakeCall(op, {x, c}, Ref<AttrsNode>(attrs)));
    KILN_ASSIGN_OR_RETURN(Op relu, GetOp("nn.relu"));
    KILN_ASSIGN_OR_RETURN(Call body, MakeCall(relu, {conv}));
    KILN_ASSIGN_OR_RETURN(Function f, MakeFunction({x}, body));
    Module mod;
    KILN_RETURN_IF_ERROR(mod.AddFunction("main", f).status());
    return mod;
  };
  RunCompiledModule(state, build(), 2.0 * ci * co * k * k * out * out);
  state.SetLabel(absl::StrCat(ci, "->", co, " ", hw, "x", hw, " k", k, " s", st));
}
BENCHMARK(BM_ResNet50Conv)
    ->ArgsProduct({{1, 2}, {3}, {64}, {224}, {7}, {2}})     // stem
    ->ArgsProduct({{1, 2}, {64}, {64}, {56}, {3}, {1}})     // 3x3 per stage
    ->ArgsProduct({{1, 2}, {128}, {128}, {28}, {3}, {1}})
    ->ArgsProduct({{1, 2}, {256}, {256}, {14}, {3}, {1}})
    ->ArgsProduct({{1, 2}, {512}, {512}, {7}, {3}, {1}})
    ->ArgsProduct({{1, 2}, {256}, {64}, {56}, {1}, {1}})    // 1x1 reduce / expand
    ->ArgsProduct({{1, 2}, {64}, {256}, {56}, {1}, {1}})
    ->ArgsProduct({{1, 2}, {1024}, {256}, {14}, {1}, {1}})
    ->ArgsProduct({{1, 2}, {2048}, {512}, {7}, {1}, {1}})
    ->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CompileResNet50(benchmark::State& state) {
  absl::StatusOr<Module> m = types::ResNet50(Dim(1), /*constant_weights=*/false);
  if (!m.ok()) {
    state.SkipWithError(std::string(m.status().message()).c_str());
    return;
  }
  CompileStats last;
  for (auto _ : state) {
    auto g = JitGraph::Compile(*m, {});
    if (!g.ok()) {
      state.SkipWithError(std::string(g.status().message()).c_str());
      return;
    }
    last = (*g)->stats();
  }
  state.counters["passes_ms"] = last.passes_ms;
  state.counters["lower_ms"] = last.lower_ms;
  state.counters["codegen_ms"] = last.codegen_ms;
  state.counters["kernels"] = last.num_kernels;
}
BENCHMARK(BM_CompileResNet50)->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kiln::testing
