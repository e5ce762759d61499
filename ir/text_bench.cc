// Benchmarks of the .kir printer and parser: a 50,000-node module (a
// conv/bn/relu-like network with fan-out, tuples and attributes) and a
// 100,000-node chain.
//
//   bazel run --config=opt //ir:text_bench
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace kiln {
namespace {

Expr Call(const char* op, std::vector<Expr> args, Attrs attrs = nullptr) {
  return *MakeCall(*GetOp(op), std::move(args), std::move(attrs));
}

// About `nodes` call/tuple nodes: repeated blocks of softmax(axis=1), add, a
// tuple and a projection, each block reusing the previous result twice (a DAG).
Module WideModule(int nodes) {
  Var x = MakeVar("x", MakeTensorType(ShapeFromInts({1, 64, 56, 56}), DataType::Float(32)));
  Ref<AttrsNode> sm = (*GetOp("nn.softmax"))->def->default_attrs->Clone();
  (void)SetAttrField(sm.get(), "axis", AttrValue::Int(1));
  Expr e = x;
  Constant half = MakeScalarConstant(DataType::Float(32), 0.5);
  for (int i = 0; i + 5 <= nodes; i += 5) {
    Expr a = Call("nn.softmax", {e}, sm);
    Expr b = Call("add", {a, half});
    Expr c = Call("multiply", {a, b});
    Expr t = *MakeTuple({c, b});
    e = *MakeTupleGetItem(t, 0);
  }
  Module m;
  (void)m.AddFunction("main", *MakeFunction({x}, e));
  return m;
}

Module Chain(int nodes) {
  Var x = MakeVar("x", MakeTensorType(ShapeFromInts({4}), DataType::Float(32)));
  Expr e = x;
  Constant one = MakeScalarConstant(DataType::Float(32), 1);
  for (int i = 0; i < nodes; ++i) e = Call("add", {e, one});
  Module m;
  (void)m.AddFunction("main", *MakeFunction({x}, e));
  return m;
}

void BM_Print50k(benchmark::State& state) {
  Module m = WideModule(50000);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string s = PrintModule(m);
    bytes = s.size();
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}
BENCHMARK(BM_Print50k)->Unit(benchmark::kMillisecond);

void BM_Parse50k(benchmark::State& state) {
  std::string text = PrintModule(WideModule(50000));
  for (auto _ : state) {
    auto m = ParseModule(text);
    if (!m.ok()) state.SkipWithError(std::string(m.status().message()).c_str());
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<int64_t>(text.size()) * state.iterations());
}
BENCHMARK(BM_Parse50k)->Unit(benchmark::kMillisecond);

void BM_PrintChain100k(benchmark::State& state) {
  Module m = Chain(100000);
  for (auto _ : state) {
    std::string s = PrintModule(m);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_PrintChain100k)->Unit(benchmark::kMillisecond);

void BM_ParseChain100k(benchmark::State& state) {
  std::string text = PrintModule(Chain(100000));
  for (auto _ : state) {
    auto m = ParseModule(text);
    if (!m.ok()) state.SkipWithError(std::string(m.status().message()).c_str());
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_ParseChain100k)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kiln
