// File: codegen_llvm/codegen_bench.cc
//
//   bazel run --config=opt //codegen_llvm:codegen_bench
//
// BM_JitCompile50: JitModule::Create of a module with 50 small elementwise
//   kernels (lowering + verification + O3 + machine code), per module.
// BM_EmitObject50: the same module to an ELF object.
// BM_BlockedMatmul/N: C = A * B (float32, N x N x N) written by hand in loop IR:
//   a parallel loop over 4-row blocks, a 4 x 16 register tile ("local"
//   accumulator, tile loops unrolled) of 8-lane vectors; reports GFLOP/s.
#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen_llvm/codegen_llvm.h"
#include "codegen_llvm/test_util.h"
#include "ir/tir.h"
#include "kiln/threadpool.h"

namespace kiln::codegen {
namespace {

using namespace kiln::tir;  // NOLINT

constexpr DataType kF32 = DataType::Float(32);

PrimExpr I(int64_t v) { return IntImm(v); }

std::vector<PrimFunc> FiftyElementwiseKernels() {
  std::vector<PrimFunc> funcs;
  for (int k = 0; k < 50; ++k) {
    Var n = MakeVar("n");
    Buffer a = MakeBuffer("A", kF32, {n});
    Buffer b = MakeBuffer("B", kF32, {n});
    Buffer c = MakeBuffer("C", kF32, {n});
    Var i = MakeVar("i");
    PrimExpr x = Load(a, {i});
    PrimExpr y = Load(b, {i});
    PrimExpr v;
    switch (k % 5) {
      case 0:
        v = Add(x, Mul(y, FloatImm(0.5 + k)));
        break;
      case 1:
        v = Max(Add(x, y), FloatImm(0.0));
        break;
      case 2:
        v = Call(kF32, "sigmoid", {Sub(x, y)});
        break;
      case 3:
        v = Select(GT(x, y), Mul(x, FloatImm(k)), Call(kF32, "exp", {y}));
        break;
      default:
        v = Cast(kF32, Cast(DataType::Int(32), Mul(x, y)));
        break;
    }
    funcs.push_back(MakePrimFunc("ew_" + std::to_string(k), {a, b, c},
                                 For(i, I(0), n, ForKind::kSerial, Store(c, v, {i}))));
  }
  return funcs;
}

void BM_JitCompile50(benchmark::State& state) {
  std::vector<PrimFunc> funcs = FiftyElementwiseKernels();
  absl::StatusOr<Target> t = ParseTarget("llvm");
  if (!t.ok()) {
    state.SkipWithError(std::string(t.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<JitModule>> jit = JitModule::Create(funcs, *t);
    if (!jit.ok()) {
      state.SkipWithError(std::string(jit.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(jit->get());
  }
  state.counters["kernels/s"] =
      benchmark::Counter(50, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_JitCompile50)->Unit(benchmark::kMillisecond);

// The same module to an object file (no JIT linking), for comparison.
void BM_EmitObject50(benchmark::State& state) {
  std::vector<PrimFunc> funcs = FiftyElementwiseKernels();
  absl::StatusOr<Target> t = ParseTarget("llvm");
  if (!t.ok()) {
    state.SkipWithError(std::string(t.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<std::string> obj = EmitObject(funcs, *t);
    if (!obj.ok()) {
      state.SkipWithError(std::string(obj.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(obj->data());
  }
}
BENCHMARK(BM_EmitObject50)->Unit(benchmark::kMillisecond);

constexpr int64_t kMr = 4;     // rows per tile
constexpr int64_t kLanes = 8;  // floats per vector (one AVX2 register)
constexpr int64_t kNv = 2;     // vectors per tile row
constexpr int64_t kNr = kLanes * kNv;

PrimFunc BlockedMatmul(int64_t n) {
  Buffer a = MakeBuffer("A", kF32, {I(n), I(n)});
  Buffer b = MakeBuffer("B", kF32, {I(n), I(n)});
  Buffer c = MakeBuffer("C", kF32, {I(n), I(n)});
  Buffer acc = MakeBuffer("acc", kF32, {I(kMr * kNr)}, "local");
  Var io = MakeVar("io"), jo = MakeVar("jo"), k = MakeVar("k");
  Var ii = MakeVar("ii"), jv = MakeVar("jv");
  Var ii2 = MakeVar("ii"), jv2 = MakeVar("jv"), ii3 = MakeVar("ii"), jv3 = MakeVar("jv");
  auto tile = [&](const Var& r, const Var& v) { return Ramp(r * kNr + v * kLanes, I(1), kLanes); };
  auto unrolled = [](const Var& v, int64_t extent, Stmt body) {
    return For(v, I(0), I(extent), ForKind::kUnrolled, std::move(body));
  };
  Stmt init = unrolled(
      ii, kMr, unrolled(jv, kNv, Store(acc, Broadcast(FloatImm(0.0), kLanes), {tile(ii, jv)})));
  PrimExpr row2 = io * kMr + ii2;
  PrimExpr col2 = jo * kNr + jv2 * kLanes;
  Stmt update = For(k, I(0), I(n), ForKind::kSerial,
                    unrolled(ii2, kMr,
                             unrolled(jv2, kNv,
                                      Store(acc,
                                            Add(Load(acc, {tile(ii2, jv2)}),
                                                Mul(Broadcast(Load(a, {row2 * n + k}), kLanes),
                                                    Load(b, {Ramp(k * n + col2, I(1), kLanes)}))),
                                            {tile(ii2, jv2)}))));
  PrimExpr row3 = io * kMr + ii3;
  PrimExpr col3 = jo * kNr + jv3 * kLanes;
  Stmt store = unrolled(
      ii3, kMr,
      unrolled(jv3, kNv,
               Store(c, Load(acc, {tile(ii3, jv3)}), {Ramp(row3 * n + col3, I(1), kLanes)})));
  Stmt body = For(io, I(0), I(n / kMr), ForKind::kParallel,
                  For(jo, I(0), I(n / kNr), ForKind::kSerial,
                      Allocate(acc, Seq({init, update, store}), "local")));
  return MakePrimFunc("matmul", {a, b, c}, body);
}

void BM_BlockedMatmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  absl::StatusOr<std::unique_ptr<JitModule>> jit = testing::JitHost({BlockedMatmul(n)});
  if (!jit.ok()) {
    state.SkipWithError(std::string(jit.status().message()).c_str());
    return;
  }
  KilnKernelFn fn = *(*jit)->Lookup("matmul");
  KilnThreadPool* pool = nullptr;
  KilnKernelContext* ctx = nullptr;
  if (kiln_thread_pool_create(0, &pool) != 0 || kiln_kernel_context_create(pool, &ctx) != 0) {
    state.SkipWithError("cannot create the thread pool");
    kiln_thread_pool_destroy(pool);
    return;
  }
  testing::HostTensor a(kF32, {n, n}), b(kF32, {n, n}), c(kF32, {n, n});
  for (int64_t i = 0; i < n * n; ++i) {
    a.data<float>()[i] = static_cast<float>(i % 7) * 0.25f;
    b.data<float>()[i] = static_cast<float>(i % 5) * 0.5f;
  }
  for (auto _ : state) {
    if (testing::CallKernel(fn, {a.dl(), b.dl(), c.dl()}, ctx) != 0) {
      state.SkipWithError(kiln_kernel_context_error(ctx));
      break;
    }
  }
  // Spot check one element against a scalar dot product.
  float ref = 0;
  for (int64_t k = 0; k < n; ++k) ref += a.data<float>()[3 * n + k] * b.data<float>()[k * n + 5];
  float got = c.data<float>()[3 * n + 5];
  if (got - ref > 1e-3f * (1 + ref) || ref - got > 1e-3f * (1 + ref)) {
    state.SkipWithError("matmul result is wrong");
  }
  state.counters["GFLOP/s"] = benchmark::Counter(static_cast<double>(2 * n * n * n),
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
}
BENCHMARK(BM_BlockedMatmul)->Arg(256)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace kiln::codegen
