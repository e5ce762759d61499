// File: lowering/arith/analyzer_bench.cc — simplifying the index expressions
// of a conv2d loop nest (NCHW, 3x3, padding 1, output width split by 8), the
// kind of work SimplifyPass does after ScheduleOps:
//
//   bazel run --config=opt //lowering/arith:analyzer_bench
#include <vector>

#include "benchmark/benchmark.h"
#include "ir/tir.h"
#include "lowering/arith/analyzer.h"

namespace kiln::arith {
namespace {

using namespace kiln::tir;  // NOLINT

struct Conv2dIndices {
  Var n = MakeVar("n"), oc = MakeVar("oc"), oh = MakeVar("oh"), owo = MakeVar("ow.outer");
  Var owi = MakeVar("ow.inner"), ic = MakeVar("ic"), kh = MakeVar("kh"), kw = MakeVar("kw");
  std::vector<PrimExpr> exprs;

  Conv2dIndices() {
    const int64_t C = 64, H = 56, W = 56;
    for (int64_t shift = 0; shift < 250; ++shift) {  // 13 x 250 = 3250 expressions
      PrimExpr ow = owo * 8 + owi;
      PrimExpr ih = oh + kh - 1 + IntImm(0) * IntImm(shift);
      PrimExpr iw = ow + kw - 1;
      // Output and input offsets (flattened NCHW).
      exprs.push_back(((n * C + oc) * H + oh) * W + ow);
      exprs.push_back(((n * C + ic) * H + ih) * W + iw);
      // Padding guards.
      exprs.push_back(And(And(GE(ih, IntImm(0)), LT(ih, IntImm(H))),
                          And(GE(iw, IntImm(0)), LT(iw, IntImm(W)))));
      exprs.push_back(LT(owo * 8 + owi, IntImm(W)));
      // Fused (oh, ow) axis split back into rows and columns.
      PrimExpr fused = oh * W + ow;
      exprs.push_back(FloorDiv(fused, IntImm(W)) * W + FloorMod(fused, IntImm(W)));
      exprs.push_back(FloorDiv(fused, IntImm(W)));
      exprs.push_back(FloorMod(fused, IntImm(W)) + IntImm(shift));
      // Weight offset and a packed layout (oc split by 16).
      exprs.push_back(((oc * C + ic) * 3 + kh) * 3 + kw);
      exprs.push_back(FloorDiv(oc, IntImm(16)) * 16 + FloorMod(oc, IntImm(16)));
      exprs.push_back(Min(owo * 8 + owi + IntImm(shift), IntImm(W - 1)));
      exprs.push_back(Select(LT(ih, IntImm(0)), IntImm(0), Max(ih, IntImm(0))));
      exprs.push_back(FloorDiv(((oh * W + ow) * 4 + 3), IntImm(4)) - oh * W);
      exprs.push_back(Ramp(((n * C + oc) * H + oh) * W + owo * 8, IntImm(1), 8) +
                      Broadcast(IntImm(shift), 8));
    }
  }

  void BindAll(Analyzer* ana) const {
    ana->Bind(n, Range{IntImm(0), IntImm(1)});
    ana->Bind(oc, Range{IntImm(0), IntImm(64)});
    ana->Bind(oh, Range{IntImm(0), IntImm(56)});
    ana->Bind(owo, Range{IntImm(0), IntImm(7)});
    ana->Bind(owi, Range{IntImm(0), IntImm(8)});
    ana->Bind(ic, Range{IntImm(0), IntImm(64)});
    ana->Bind(kh, Range{IntImm(0), IntImm(3)});
    ana->Bind(kw, Range{IntImm(0), IntImm(3)});
  }
};

void BM_SimplifyConv2dIndices(benchmark::State& state) {
  Conv2dIndices c;
  Analyzer ana;
  c.BindAll(&ana);
  for (auto _ : state) {
    for (const PrimExpr& e : c.exprs) benchmark::DoNotOptimize(ana.Simplify(e));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(c.exprs.size()));
}
BENCHMARK(BM_SimplifyConv2dIndices)->Unit(benchmark::kMillisecond);

void BM_CanProvePaddingGuards(benchmark::State& state) {
  Conv2dIndices c;
  Analyzer ana;
  c.BindAll(&ana);
  std::vector<PrimExpr> conds;
  for (const PrimExpr& e : c.exprs) {
    if (e->dtype.is_bool()) conds.push_back(e);
  }
  for (auto _ : state) {
    for (const PrimExpr& e : conds) benchmark::DoNotOptimize(ana.CanProve(e));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(conds.size()));
}
BENCHMARK(BM_CanProvePaddingGuards)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kiln::arith
