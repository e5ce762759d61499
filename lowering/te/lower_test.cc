// File: lowering/te/lower_test.cc — lowered schedules run by the loop-IR
// interpreter (te_test_util.h) and compared with direct C++ computations.
#include "lowering/te/lower.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "ir/tir_printer.h"
#include "lowering/te/te_test_util.h"

namespace kiln::te {
namespace {

using testing::MaxAbsDiff;
using testing::RandomData;
using testing::RunPrimFunc;
using tir::IntImm;

const DataType kF32 = DataType::Float(32);
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<PrimExpr> E(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

Schedule Make(const std::vector<Tensor>& outs) {
  absl::StatusOr<Schedule> s = CreateSchedule(outs);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

// Lowers and runs; returns the output buffers' values (args after `inputs`).
std::vector<std::vector<double>> LowerAndRun(Schedule& s, const std::vector<Tensor>& args,
                                             std::vector<std::vector<double>> inputs,
                                             const testing::ShapeVars& vars = {}) {
  absl::StatusOr<tir::PrimFunc> f = LowerSchedule(s, args, "f");
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return {};
  std::vector<std::vector<double>> bufs = std::move(inputs);
  for (size_t i = bufs.size(); i < args.size(); ++i) {
    absl::StatusOr<int64_t> n = testing::NumElements(args[i].shape(), vars);
    EXPECT_TRUE(n.ok()) << n.status();
    bufs.emplace_back(static_cast<size_t>(n.ok() ? *n : 0), kNaN);
  }
  std::vector<std::vector<double>*> ptrs;
  for (auto& b : bufs) ptrs.push_back(&b);
  absl::Status st = RunPrimFunc(*f, ptrs, vars);
  EXPECT_TRUE(st.ok()) << st << "\n" << tir::ToText(*f);
  return bufs;
}

float F(double x) { return static_cast<float>(x); }

struct Matmul {
  int64_t n, m, l;
  Tensor a, b, c;
  IterVar k;
  Matmul(int64_t n_, int64_t m_, int64_t l_) : n(n_), m(m_), l(l_) {
    a = Placeholder({IntImm(n), IntImm(l)}, kF32, "A");
    b = Placeholder({IntImm(l), IntImm(m)}, kF32, "B");
    k = ReduceAxis({IntImm(0), IntImm(l)}, "k");
    c = Compute({IntImm(n), IntImm(m)}, [&](const std::vector<Var>& i) {
      return Sum(a({i[0], k->var}) * b({k->var, i[1]}), {k});
    }, "C");
  }
  std::vector<double> Reference(const std::vector<double>& av, const std::vector<double>& bv) const {
    std::vector<double> out(static_cast<size_t>(n * m));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        float acc = 0;
        for (int64_t q = 0; q < l; ++q) acc += F(av[i * l + q]) * F(bv[q * m + j]);
        out[i * m + j] = acc;
      }
    }
    return out;
  }
};

TEST(LowerTest, MatmulTiledVectorizedParallelUnrolled) {
  for (int64_t size : {16, 13}) {  // even and uneven tiles
    Matmul mm(size, size + 3, size - 2);
    Schedule s = Make({mm.c});
    Stage* c = s[mm.c];
    absl::StatusOr<TileAxes> t = c->tile(c->op->axis[0], c->op->axis[1], 4, 8);
    ASSERT_TRUE(t.ok());
    absl::StatusOr<SplitAxes> ks = c->split(mm.k, 4);
    ASSERT_TRUE(ks.ok());
    ASSERT_TRUE(c->reorder({t->x_outer, t->y_outer, ks->outer, ks->inner, t->x_inner, t->y_inner}).ok());
    ASSERT_TRUE(c->vectorize(t->y_inner).ok());
    ASSERT_TRUE(c->unroll(t->x_inner).ok());
    ASSERT_TRUE(c->parallel(t->x_outer).ok());
    std::vector<double> av = RandomData(static_cast<size_t>(mm.n * mm.l), 1);
    std::vector<double> bv = RandomData(static_cast<size_t>(mm.l * mm.m), 2);
    auto out = LowerAndRun(s, {mm.a, mm.b, mm.c}, {av, bv});
    ASSERT_EQ(out.size(), 3u);
    EXPECT_LT(MaxAbsDiff(out[2], mm.Reference(av, bv)), 1e-5) << "size " << size;
  }
}

TEST(LowerTest, MatmulWithCacheReadCacheWriteAndFuse) {
  Matmul mm(12, 10, 7);
  Schedule s = Make({mm.c});
  absl::StatusOr<Tensor> cl = s.cache_write(mm.c, "local");
  ASSERT_TRUE(cl.ok());
  Stage* c = s[mm.c];
  absl::StatusOr<TileAxes> t = c->tile(c->op->axis[0], c->op->axis[1], 4, 4);  // 10 % 4 != 0
  ASSERT_TRUE(t.ok());
  absl::StatusOr<IterVar> f = c->fuse(t->x_outer, t->y_outer);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(c->parallel(*f).ok());
  ASSERT_TRUE(s[*cl]->compute_at(c, *f).ok());
  absl::StatusOr<Tensor> ar = s.cache_read(mm.a, "local", std::vector<Tensor>{*cl});
  ASSERT_TRUE(ar.ok());
  Stage* cs = s[*cl];
  ASSERT_TRUE(s[*ar]->compute_at(cs, cs->op->reduce_axis[0]).ok());
  std::vector<double> av = RandomData(12 * 7, 3), bv = RandomData(7 * 10, 4);
  auto out = LowerAndRun(s, {mm.a, mm.b, mm.c}, {av, bv});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_LT(MaxAbsDiff(out[2], mm.Reference(av, bv)), 1e-5);
}

TEST(LowerTest, RfactorSum) {
  Tensor a = Placeholder({IntImm(5), IntImm(30)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(30)}, "k");
  Tensor b = Compute({IntImm(5)}, [&](const std::vector<Var>& i) { return Sum(a({i[0], k->var}), {k}); }, "B");
  std::vector<double> av = RandomData(150, 5);
  std::vector<double> ref(5);
  for (int i = 0; i < 5; ++i) {
    double acc = 0;
    for (int q = 0; q < 30; ++q) acc += av[static_cast<size_t>(i * 30 + q)];
    ref[static_cast<size_t>(i)] = acc;
  }
  for (int factor_axis : {0, 1}) {
    Schedule s = Make({b});
    absl::StatusOr<SplitAxes> ks = s[b]->split(k, 4);  // uneven
    ASSERT_TRUE(ks.ok());
    absl::StatusOr<std::vector<Tensor>> rf = s.rfactor(b, ks->inner, factor_axis);
    ASSERT_TRUE(rf.ok()) << rf.status();
    Stage* srf = s[(*rf)[0]];
    // The factored axis is data-parallel now: it can be parallel and vectorized.
    ASSERT_TRUE(srf->parallel(srf->op->axis[static_cast<size_t>(factor_axis)]).ok());
    ASSERT_TRUE(s[b]->parallel(s[b]->op->axis[0]).ok());
    auto out = LowerAndRun(s, {a, b}, {av});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_LT(MaxAbsDiff(out[1], ref), 1e-4) << "factor_axis " << factor_axis;
  }
  // rf computed at B's row loop.
  Schedule s = Make({b});
  absl::StatusOr<SplitAxes> ks = s[b]->split(k, 8);
  ASSERT_TRUE(ks.ok());
  absl::StatusOr<std::vector<Tensor>> rf = s.rfactor(b, ks->outer);
  ASSERT_TRUE(rf.ok());
  ASSERT_TRUE(s[(*rf)[0]]->compute_at(s[b], s[b]->op->axis[0]).ok());
  auto out = LowerAndRun(s, {a, b}, {av});
  EXPECT_LT(MaxAbsDiff(out[1], ref), 1e-4);
}

// 3x3 box filter of 2 * A: B = 2 * A (producer), C[i, j] = sum of B over a 3x3 window.
TEST(LowerTest, StencilWithComputeAt) {
  const int64_t h = 9, w = 11;
  Tensor a = Placeholder({IntImm(h + 2), IntImm(w + 2)}, kF32, "A");
  Tensor b = Compute(a.shape(), [&](const std::vector<Var>& i) { return a(E(i)) * 2.0f; }, "B");
  IterVar ry = ReduceAxis({IntImm(0), IntImm(3)}, "ry");
  IterVar rx = ReduceAxis({IntImm(0), IntImm(3)}, "rx");
  Tensor c = Compute({IntImm(h), IntImm(w)}, [&](const std::vector<Var>& i) {
    return Sum(b({i[0] + ry->var, i[1] + rx->var}), {ry, rx});
  }, "C");
  Tensor d = Compute(c.shape(), [&](const std::vector<Var>& i) {
    return tir::Max(c(E(i)), tir::FloatImm(0.5));
  }, "D");
  std::vector<double> av = RandomData(static_cast<size_t>((h + 2) * (w + 2)), 6);
  std::vector<double> ref(static_cast<size_t>(h * w));
  for (int64_t i = 0; i < h; ++i) {
    for (int64_t j = 0; j < w; ++j) {
      float acc = 0;
      for (int y = 0; y < 3; ++y) {
        for (int x = 0; x < 3; ++x) acc += F(av[static_cast<size_t>((i + y) * (w + 2) + j + x)] * 2);
      }
      ref[static_cast<size_t>(i * w + j)] = std::max(acc, 0.5f);
    }
  }
  // B at C's row-tile loop, C at D's row loop (conv + relu shape).
  Schedule s = Make({d});
  Stage* sd = s[d];
  absl::StatusOr<SplitAxes> di = sd->split(sd->op->axis[0], 2);
  ASSERT_TRUE(di.ok());
  ASSERT_TRUE(sd->parallel(di->outer).ok());
  ASSERT_TRUE(s[c]->compute_at(sd, di->outer).ok());
  Stage* sc = s[c];
  absl::StatusOr<SplitAxes> cj = sc->split(sc->op->axis[1], 4);
  ASSERT_TRUE(cj.ok());
  ASSERT_TRUE(sc->reorder({sc->op->axis[0], cj->outer, ry, rx, cj->inner}).ok());
  ASSERT_TRUE(sc->vectorize(cj->inner).ok());
  ASSERT_TRUE(s[b]->compute_at(sc, sc->op->axis[0]).ok());
  auto out = LowerAndRun(s, {a, d}, {av});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_LT(MaxAbsDiff(out[1], ref), 1e-5);

  // The same after Normalize: root loops are rebased, attach points follow.
  ASSERT_TRUE(s.Normalize().ok());
  out = LowerAndRun(s, {a, d}, {av});
  EXPECT_LT(MaxAbsDiff(out[1], ref), 1e-5);

  // The 3x3 window fused into one reduction loop, split unevenly.
  Schedule s3 = Make({d});
  absl::StatusOr<IterVar> rf = s3[c]->fuse(ry, rx);
  ASSERT_TRUE(rf.ok());
  ASSERT_TRUE(s3[c]->split(*rf, 4).ok());
  ASSERT_TRUE(s3[c]->compute_at(s3[d], s3[d]->op->axis[0]).ok());
  out = LowerAndRun(s3, {a, d}, {av});
  EXPECT_LT(MaxAbsDiff(out[1], ref), 1e-5);

  // B inlined instead, C at D's inner loop.
  Schedule s2 = Make({d});
  ASSERT_TRUE(s2[b]->compute_inline().ok());
  ASSERT_TRUE(s2[c]->compute_at(s2[d], s2[d]->op->axis[1]).ok());
  out = LowerAndRun(s2, {a, d}, {av});
  EXPECT_LT(MaxAbsDiff(out[1], ref), 1e-5);
}

TEST(LowerTest, ArgMaxArgMinWithNaNAndTies) {
  // Rows: ties, a NaN after the max, a NaN first, all equal, -inf only.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xv = {1, 3, 3, 2, 0,     //
                            1, 5, kNaN, 5, kNaN,  //
                            kNaN, 2, 9, 1, 1,  //
                            4, 4, 4, 4, 4,     //
                            -inf, -inf, -inf, -inf, -inf};
  Tensor x = Placeholder({IntImm(5), IntImm(5)}, kF32, "X");
  struct Case {
    bool is_max, last;
    std::vector<double> expected;
  };
  const Case cases[] = {{true, false, {1, 2, 0, 0, 0}},
                        {true, true, {2, 2, 0, 4, 4}},
                        {false, false, {4, 2, 0, 0, 0}},
                        {false, true, {4, 2, 0, 4, 4}}};
  for (const Case& cs : cases) {
    for (bool rows_inside : {false, true}) {
      IterVar r = ReduceAxis({IntImm(0), IntImm(5)}, "r");
      Tensor am = Compute({IntImm(5)}, [&](const std::vector<Var>& i) {
        return cs.is_max ? ArgMax(x({i[0], r->var}), {r}, cs.last)
                         : ArgMin(x({i[0], r->var}), {r}, cs.last);
      }, "AM");
      Schedule s = Make({am});
      if (rows_inside) {
        ASSERT_TRUE(s[am]->reorder({r, s[am]->op->axis[0]}).ok());
      }
      auto out = LowerAndRun(s, {x, am}, {xv});
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[1], cs.expected) << "max " << cs.is_max << " last " << cs.last
                                     << " rows inside " << rows_inside;
    }
  }
}

TEST(LowerTest, ArgMaxOverTwoAxesGivesTheRowMajorFlatIndex) {
  Tensor x = Placeholder({IntImm(2), IntImm(3), IntImm(4)}, DataType::Int(32), "X");
  IterVar j = ReduceAxis({IntImm(0), IntImm(3)}, "j");
  IterVar k = ReduceAxis({IntImm(0), IntImm(4)}, "k");
  Tensor am = Compute({IntImm(2)}, [&](const std::vector<Var>& i) {
    return ArgMax(x({i[0], j->var, k->var}), {j, k});
  }, "AM");
  std::vector<double> xv(24, 0);
  xv[6] = 7;       // row 0: (1, 2) -> 6
  xv[12 + 9] = 3;  // row 1: (2, 1) -> 9
  xv[12 + 3] = 3;  // tie before it: (0, 3) -> 3 wins
  Schedule s = Make({am});
  ASSERT_TRUE(s[am]->split(k, 3).ok());  // uneven split of a reduction axis
  auto out = LowerAndRun(s, {x, am}, {xv});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1], (std::vector<double>{6, 3}));
}

TEST(LowerTest, SymbolicShapes) {
  Var n = tir::MakeVar("n");
  Tensor a = Placeholder({n, IntImm(3)}, kF32, "A");
  Tensor b = Compute(a.shape(), [&](const std::vector<Var>& i) { return a(E(i)) + 1.0f; }, "B");
  IterVar k = ReduceAxis({IntImm(0), n}, "k");
  Tensor c = Compute({IntImm(3)}, [&](const std::vector<Var>& i) { return Sum(b({k->var, i[0]}), {k}); }, "C");
  Schedule s = Make({c});
  ASSERT_TRUE(s[b]->compute_inline().ok());
  ASSERT_TRUE(s[c]->split(k, 4).ok());
  for (int64_t nv : {1, 7, 8}) {
    std::vector<double> av = RandomData(static_cast<size_t>(nv * 3), 7);
    std::vector<double> ref(3, 0);
    for (int64_t i = 0; i < nv; ++i) {
      for (int64_t j = 0; j < 3; ++j) ref[static_cast<size_t>(j)] += F(av[static_cast<size_t>(i * 3 + j)] + 1);
    }
    auto out = LowerAndRun(s, {a, c}, {av}, {{"n", nv}});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_LT(MaxAbsDiff(out[1], ref), 1e-5) << "n = " << nv;
  }
}

TEST(LowerTest, MultiOutputComputesAndConditions) {
  Tensor a = Placeholder({IntImm(4), IntImm(6)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(1), IntImm(5)}, "k");  // k in [1, 6)
  std::vector<Tensor> sm = ComputeMulti({IntImm(4)}, [&](const std::vector<Var>& i) {
    PrimExpr cond = tir::GT(a({i[0], k->var}), tir::FloatImm(-0.5));
    return std::vector<PrimExpr>{Sum(a({i[0], k->var}), {k}, cond), Max(a({i[0], k->var}), {k}, cond)};
  }, "SM");
  Tensor out = Compute({IntImm(4)}, [&](const std::vector<Var>& i) {
    return sm[0]({i[0]}) - sm[1]({i[0]});
  }, "Out");
  std::vector<double> av = RandomData(24, 8);
  std::vector<double> ref(4);
  for (int i = 0; i < 4; ++i) {
    float sum = 0, mx = -std::numeric_limits<float>::infinity();
    for (int q = 1; q < 6; ++q) {
      float v = F(av[static_cast<size_t>(i * 6 + q)]);
      if (v > -0.5f) {
        sum += v;
        mx = std::max(mx, v);
      }
    }
    ref[static_cast<size_t>(i)] = sum - mx;
  }
  Schedule s = Make({out});
  ASSERT_TRUE(s[sm[0]]->compute_at(s[out], s[out]->op->axis[0]).ok());
  auto res = LowerAndRun(s, {a, out}, {av});
  EXPECT_LT(MaxAbsDiff(res[1], ref), 1e-5);
  // The same after Normalize (k, starting at 1, becomes a rebased loop).
  Schedule s2 = Make({out});
  ASSERT_TRUE(s2.Normalize().ok());
  res = LowerAndRun(s2, {a, out}, {av});
  EXPECT_LT(MaxAbsDiff(res[1], ref), 1e-5);
}

}  // namespace
}  // namespace kiln::te
