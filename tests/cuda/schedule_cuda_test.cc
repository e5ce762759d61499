// File: tests/cuda/schedule_cuda_test.cc — lowering/te/schedule_cuda's
// decisions, read off the schedule: which stages are staged through shared
// memory or reduced one warp per row, and how their loops are bound. What the
// kernels compute is checked by running them (tests/cuda/*_emulate_test).
#include "lowering/te/schedule_cuda.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/tir_printer.h"
#include "lowering/te/lower.h"

namespace kiln::te {
namespace {

using tir::IntImm;

const DataType kF32 = DataType::Float(32);

std::vector<PrimExpr> E(std::initializer_list<PrimExpr> v) { return v; }

// "name:scope[tags]" of every computed stage, producers first.
std::string Describe(const Schedule& s) {
  std::vector<std::string> out;
  for (const Stage* st : s.stages()) {
    if (st->is_placeholder() || st->is_inlined()) continue;
    std::vector<std::string> tags;
    for (const IterVar& iv : st->leaf_iter_vars) {
      const IterVarAttr* a = st->attr(iv);
      if (a != nullptr && !a->thread_tag.empty()) tags.push_back(a->thread_tag);
    }
    out.push_back(absl::StrCat(st->name(), ":", st->scope, "[", absl::StrJoin(tags, ","), "]"));
  }
  return absl::StrJoin(out, " ");
}

// C[i, j] = sum_k A[i, a_k(k)] * B[j, k].
std::string Gemm(int64_t m, int64_t n, int64_t k, bool plain_a, std::string* text) {
  Tensor a = Placeholder({IntImm(m), IntImm(plain_a ? k : 2 * k)}, kF32, "A");
  Tensor b = Placeholder({IntImm(n), IntImm(k)}, kF32, "B");
  IterVar r = ReduceAxis({IntImm(0), IntImm(k)}, "k");
  Tensor c = Compute(
      {IntImm(m), IntImm(n)},
      [&](const std::vector<Var>& i) {
        PrimExpr ak = plain_a ? PrimExpr(r->var) : PrimExpr(r->var * 2);
        return Sum(a(E({i[0], ak})) * b(E({i[1], r->var})), {r});
      },
      "C");
  absl::StatusOr<Schedule> s = CreateSchedule({c});
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return "";
  absl::Status st = ScheduleDefaultCuda(*s, {c}, 256);
  EXPECT_TRUE(st.ok()) << st;
  absl::StatusOr<tir::PrimFunc> f = LowerSchedule(*s, {a, b, c}, "gemm");
  EXPECT_TRUE(f.ok()) << f.status();
  if (f.ok()) *text = tir::ToText(*f);
  return Describe(*s);
}

TEST(ScheduleCudaTest, GemmStagesBothInputsThroughShared) {
  std::string text;
  EXPECT_EQ(Gemm(128, 192, 64, true, &text),
            "A.shared:shared[threadIdx.y,threadIdx.x] B.shared:shared[threadIdx.y,threadIdx.x] "
            "C.local:local[] C:global[blockIdx.y,blockIdx.x,threadIdx.y,threadIdx.x]");
  EXPECT_TRUE(absl::StrContains(text, "allocate A.shared: float32[")) << text;
}

TEST(ScheduleCudaTest, GemmInputAtAComputedIndexStaysInGlobal) {
  std::string text;
  EXPECT_EQ(Gemm(128, 128, 64, false, &text),
            "B.shared:shared[threadIdx.y,threadIdx.x] C.local:local[] "
            "C:global[blockIdx.y,blockIdx.x,threadIdx.y,threadIdx.x]");
}

// out[i] = sum_k X[i, k] (or, with `softmax`, X / rowsum, a row function).
std::string Rows(int64_t rows, int64_t len, bool softmax) {
  Tensor x = Placeholder({IntImm(rows), IntImm(len)}, kF32, "X");
  IterVar r = ReduceAxis({IntImm(0), IntImm(len)}, "k");
  Tensor sum = Compute(
      {IntImm(rows)}, [&](const std::vector<Var>& i) { return Sum(x(E({i[0], r->var})), {r}); },
      "S", "comm_reduce");
  Tensor out = sum;
  if (softmax) {
    out = Compute(
        {IntImm(rows), IntImm(len)},
        [&](const std::vector<Var>& i) { return tir::Div(x(E({i[0], i[1]})), sum(E({i[0]}))); }, "O");
  }
  absl::StatusOr<Schedule> s = CreateSchedule({out});
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return "";
  absl::Status st = ScheduleDefaultCuda(*s, {out}, 256);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_TRUE(LowerSchedule(*s, {x, out}, "rows").ok());
  return Describe(*s);
}

TEST(ScheduleCudaTest, RowReductionIsOneWarpPerRow) {
  EXPECT_EQ(Rows(6, 100, false), "S.local.rf:shared[threadIdx.x] S.local:local[] S:global[blockIdx.x]");
  EXPECT_EQ(Rows(6, 100, true),
            "S.rf:shared[threadIdx.x] S:local[] O:global[blockIdx.x,threadIdx.x]");
}

// out[n, c] = sum over (h, w) of X[n, c, h, w] (NCHW's global pool), or
// with `reversed` of X[n, c, w, h] (the reduce axes not in memory order).
std::string SpatialRows(bool reversed) {
  Tensor x = Placeholder({IntImm(2), IntImm(3), IntImm(8), IntImm(8)}, kF32, "X");
  IterVar rh = ReduceAxis({IntImm(0), IntImm(8)}, "rh");
  IterVar rw = ReduceAxis({IntImm(0), IntImm(8)}, "rw");
  Tensor out = Compute(
      {IntImm(2), IntImm(3)},
      [&](const std::vector<Var>& i) {
        return Sum(x(reversed ? E({i[0], i[1], rw->var, rh->var}) : E({i[0], i[1], rh->var, rw->var})),
                   {rh, rw});
      },
      "S", "comm_reduce");
  absl::StatusOr<Schedule> s = CreateSchedule({out});
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return "";
  absl::Status st = ScheduleDefaultCuda(*s, {out}, 256);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_TRUE(LowerSchedule(*s, {x, out}, "rows").ok());
  return Describe(*s);
}

TEST(ScheduleCudaTest, TrailingAxesReductionIsOneWarpPerRow) {
  EXPECT_EQ(SpatialRows(false), "S.local.rf:shared[threadIdx.x] S.local:local[] S:global[blockIdx.x]");
  // Lanes on consecutive (h, w) would not read consecutive elements.
  EXPECT_EQ(SpatialRows(true), "S:global[blockIdx.x,threadIdx.x]");
}

TEST(ScheduleCudaTest, ShortRowsKeepOneThreadPerOutput) {
  EXPECT_EQ(Rows(6, 20, false), "S:global[blockIdx.x,threadIdx.x]");
}

}  // namespace
}  // namespace kiln::te
