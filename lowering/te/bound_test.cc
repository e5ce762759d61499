// File: lowering/te/bound_test.cc — InferBound.
#include "lowering/te/bound.h"

#include "gtest/gtest.h"
#include "ir/tir_printer.h"
#include "lowering/te/arith.h"

namespace kiln::te {
namespace {

using tir::IntImm;

const DataType kF32 = DataType::Float(32);

std::vector<PrimExpr> E(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

Schedule Make(const std::vector<Tensor>& outs) {
  absl::StatusOr<Schedule> s = CreateSchedule(outs);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

BoundMap Bounds(const Schedule& s) {
  absl::StatusOr<BoundMap> b = InferBound(s);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : BoundMap{};
}

// "[min, +extent)" of iv, in loop-IR text.
std::string R(const BoundMap& b, const IterVar& iv) {
  auto it = b.find(iv);
  if (it == b.end()) return "<none>";
  return "[" + tir::ToText(it->second.min) + ", +" + tir::ToText(it->second.extent) + ")";
}

Tensor Elementwise(const Tensor& in, absl::string_view name) {
  return Compute(in.shape(), [&](const std::vector<Var>& i) { return in(E(i)) * 2.0f; }, name);
}

TEST(BoundTest, SplitEvenUnevenAndNparts) {
  Tensor a = Placeholder({IntImm(10), IntImm(16)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Schedule s = Make({b});
  Stage* sb = s[b];
  const IterVar i = sb->leaf_iter_vars[0], j = sb->leaf_iter_vars[1];
  absl::StatusOr<SplitAxes> si = sb->split(i, 4);  // 10 = 3 * 4 - 2: uneven
  absl::StatusOr<SplitAxes> sj = sb->split(j, 8);  // even
  ASSERT_TRUE(si.ok() && sj.ok());
  absl::StatusOr<SplitAxes> sn = sb->split_by_nparts(sj->outer, 3);  // 2 parts asked 3
  ASSERT_TRUE(sn.ok());
  BoundMap bm = Bounds(s);
  EXPECT_EQ(R(bm, i), "[0, +10)");
  EXPECT_EQ(R(bm, si->outer), "[0, +3)");
  EXPECT_EQ(R(bm, si->inner), "[0, +4)");
  EXPECT_EQ(R(bm, sj->outer), "[0, +2)");
  EXPECT_EQ(R(bm, sj->inner), "[0, +8)");
  // nparts larger than the extent: the outer extent is tightened to 2.
  EXPECT_EQ(R(bm, sn->outer), "[0, +2)");
  EXPECT_EQ(R(bm, sn->inner), "[0, +1)");
  // A factor larger than the extent is tightened too.
  Schedule s2 = Make({b});
  absl::StatusOr<SplitAxes> big = s2[b]->split(s2[b]->leaf_iter_vars[0], 32);
  ASSERT_TRUE(big.ok());
  BoundMap bm2 = Bounds(s2);
  EXPECT_EQ(R(bm2, big->outer), "[0, +1)");
  EXPECT_EQ(R(bm2, big->inner), "[0, +10)");
}

TEST(BoundTest, SymbolicExtentsStaySymbolic) {
  Var n = tir::MakeVar("n");
  Tensor a = Placeholder({n}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Schedule s = Make({b});
  absl::StatusOr<SplitAxes> sp = s[b]->split(s[b]->leaf_iter_vars[0], 8);
  ASSERT_TRUE(sp.ok());
  BoundMap bm = Bounds(s);
  EXPECT_EQ(R(bm, s[b]->op->axis[0]), "[0, +n)");
  EXPECT_EQ(R(bm, sp->outer), "[0, +floordiv((n + 7), 8))");
  EXPECT_EQ(R(bm, sp->inner), "[0, +8)");
}

TEST(BoundTest, FuseAndSplitThenFuse) {
  Tensor a = Placeholder({IntImm(6), IntImm(5), IntImm(8)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Schedule s = Make({b});
  Stage* sb = s[b];
  const std::vector<IterVar> ax = sb->op->axis;
  absl::StatusOr<IterVar> f = sb->fuse(ax[0], ax[1]);
  ASSERT_TRUE(f.ok());
  absl::StatusOr<SplitAxes> sp = sb->split(ax[2], 4);
  ASSERT_TRUE(sp.ok());
  absl::StatusOr<IterVar> g = sb->fuse(*f, sp->outer);
  ASSERT_TRUE(g.ok());
  BoundMap bm = Bounds(s);
  EXPECT_EQ(R(bm, *f), "[0, +30)");
  EXPECT_EQ(R(bm, *g), "[0, +60)");
  EXPECT_EQ(R(bm, sp->inner), "[0, +4)");
}

TEST(BoundTest, ReorderDoesNotChangeRanges) {
  Tensor a = Placeholder({IntImm(6), IntImm(7)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Schedule s = Make({b});
  Stage* sb = s[b];
  const IterVar i = sb->leaf_iter_vars[0], j = sb->leaf_iter_vars[1];
  ASSERT_TRUE(sb->reorder({j, i}).ok());
  BoundMap bm = Bounds(s);
  EXPECT_EQ(R(bm, i), "[0, +6)");
  EXPECT_EQ(R(bm, j), "[0, +7)");
}

// C[i] = B[i] + B[i + 1] + B[i + 2]: a 3-tap stencil.
struct Stencil {
  Tensor a, b, c;
  explicit Stencil(PrimExpr n) {
    a = Placeholder({n + 2}, kF32, "A");
    b = Elementwise(a, "B");
    c = Compute({n}, [&](const std::vector<Var>& i) {
      return b({i[0]}) + b({i[0] + 1}) + b({i[0] + 2});
    }, "C");
  }
};

TEST(BoundTest, ComputeAtGivesTheProducerItsWindow) {
  Stencil st(IntImm(16));
  Schedule s = Make({st.c});
  Stage* sc = s[st.c];
  absl::StatusOr<SplitAxes> sp = sc->split(sc->leaf_iter_vars[0], 4);
  ASSERT_TRUE(sp.ok());
  // At the root, B covers what C reads: [0, 18).
  BoundMap root = Bounds(s);
  EXPECT_EQ(R(root, s[st.b]->op->axis[0]), "[0, +18)");
  // At C's outer loop: a window of 4 + 2, starting at 4 * outer.
  ASSERT_TRUE(s[st.b]->compute_at(sc, sp->outer).ok());
  BoundMap bm = Bounds(s);
  EXPECT_EQ(R(bm, s[st.b]->op->axis[0]), "[(ax0.outer * 4), +6)");
  // At C's inner loop: 3 elements.
  ASSERT_TRUE(s[st.b]->compute_at(sc, sp->inner).ok());
  BoundMap bi = Bounds(s);
  EXPECT_EQ(R(bi, s[st.b]->op->axis[0]), "[((ax0.outer * 4) + ax0.inner), +3)");
}

TEST(BoundTest, ComputeAtThroughAnInlinedStage) {
  // D[i] = C'[i] with C' inlined: B is read through the inlined stage.
  Stencil st(IntImm(12));
  Tensor d = Elementwise(st.c, "D");
  Schedule s = Make({d});
  ASSERT_TRUE(s[st.c]->compute_inline().ok());
  Stage* sd = s[d];
  absl::StatusOr<SplitAxes> sp = sd->split(sd->leaf_iter_vars[0], 3);
  ASSERT_TRUE(sp.ok());
  ASSERT_TRUE(s[st.b]->compute_at(sd, sp->outer).ok());
  BoundMap bm = Bounds(s);
  EXPECT_EQ(R(bm, s[st.b]->op->axis[0]), "[(ax0.outer * 3), +5)");
}

TEST(BoundTest, ComputeAtOf2DTileAndFusedLoop) {
  Tensor a = Placeholder({IntImm(8), IntImm(8)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Tensor c = Compute({IntImm(8), IntImm(8)}, [&](const std::vector<Var>& i) {
    return b({i[1], i[0]});  // transposed read
  }, "C");
  Schedule s = Make({c});
  Stage* sc = s[c];
  absl::StatusOr<TileAxes> t = sc->tile(sc->op->axis[0], sc->op->axis[1], 2, 4);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(s[b]->compute_at(sc, t->y_outer).ok());
  BoundMap bm = Bounds(s);
  // C's tile (2 rows at 2*xo, 4 cols at 4*yo) reads B's rows 4*yo.., cols 2*xo..
  EXPECT_EQ(R(bm, s[b]->op->axis[0]), "[(ax1.outer * 4), +4)");
  EXPECT_EQ(R(bm, s[b]->op->axis[1]), "[(ax0.outer * 2), +2)");

  // A fused loop: one point of the fused index is one (row, col).
  Schedule s2 = Make({c});
  Stage* sc2 = s2[c];
  absl::StatusOr<IterVar> f = sc2->fuse(sc2->op->axis[0], sc2->op->axis[1]);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(s2[b]->compute_at(sc2, *f).ok());
  BoundMap bf = Bounds(s2);
  EXPECT_EQ(R(bf, s2[b]->op->axis[0]), "[floormod(ax0.ax1.fused, 8), +1)");
  EXPECT_EQ(R(bf, s2[b]->op->axis[1]), "[floordiv(ax0.ax1.fused, 8), +1)");
}

// A consumer [N, H, W] that reads B[n, h * W + w] (a GEMM over flattened
// pixels written back as an image), its (h, w) fused and split into tiles of
// 5 pixels: the tile reads 5 consecutive rows of B, not the image rows it
// touches (PassUpDomain alone relaxes w to [0, W) and h to the rows the tile
// spans: 14 or 21 entries).
// B's range on each axis when `c` (which reads B) has its (h, w) fused,
// split by 5, and B computed at the outer loop.
std::vector<std::string> WindowOfFusedPixelTile(const Tensor& b, const Tensor& c) {
  Schedule s = Make({c});
  Stage* sc = s[c];
  absl::StatusOr<IterVar> px = sc->fuse(sc->op->axis[1], sc->op->axis[2]);
  absl::StatusOr<SplitAxes> sp = px.ok() ? sc->split(*px, 5) : px.status();
  EXPECT_TRUE(sp.ok()) << sp.status();
  if (!sp.ok()) return {};
  EXPECT_TRUE(s[b]->compute_at(sc, sp->outer).ok());
  BoundMap bm = Bounds(s);
  return {R(bm, s[b]->op->axis[0]), R(bm, s[b]->op->axis[1])};
}

TEST(BoundTest, FusedPixelTileReadsItsFlattenedWindow) {
  const int64_t h = 7, w = 7;
  Tensor a = Placeholder({IntImm(2), IntImm(h * w + 1)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Tensor c = Compute({IntImm(2), IntImm(h), IntImm(w)}, [&](const std::vector<Var>& i) {
    return b({i[0], i[1] * IntImm(w) + i[2]});
  }, "C");
  std::vector<std::string> win = WindowOfFusedPixelTile(b, c);
  ASSERT_EQ(win.size(), 2u);
  EXPECT_EQ(win[0], "[ax0, +1)");
  EXPECT_EQ(win[1], "[(ax1.ax2.fused.outer * 5), +5)");

  // The same with the pixel index bound by a let: its value is rewritten in
  // the leaf loops too (a root var left in it would be unbound where B is).
  Var p = tir::MakeVar("p");
  Tensor c2 = Compute({IntImm(2), IntImm(h), IntImm(w)}, [&](const std::vector<Var>& i) {
    return tir::Let(p, i[1] * IntImm(w) + i[2], b({i[0], p}));
  }, "C2");
  win = WindowOfFusedPixelTile(b, c2);
  ASSERT_EQ(win.size(), 2u);
  EXPECT_EQ(win[1], "[(ax1.ax2.fused.outer * 5), +5)");
}

// A 1 x W map (a Conv1d's output as a conv2d), read by its column alone (the
// row, always 0, folded away): the pixel tile's loop is fused with the batch
// loop, so the tile's first pixel is floormod(tile, W / 5) * 5 and the column
// floormod(p, W), with no floordiv(p, W) * W to pair it with. Its window is
// still the tile's 5 pixels, not the row's W (a conv-GEMM's accumulator
// attached there ran W / 5 times the work: Jasper's 896 -> 1024 1x1 conv,
// 200 wide, took 0.76 s).
TEST(BoundTest, FusedPixelTileOfOneRowMapReadsItsWindow) {
  const int64_t w = 20;
  Tensor a = Placeholder({IntImm(2), IntImm(w)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Tensor c = Compute({IntImm(2), IntImm(1), IntImm(w)}, [&](const std::vector<Var>& i) {
    return b({i[0], i[2]});
  }, "C");
  Schedule s = Make({c});
  Stage* sc = s[c];
  absl::StatusOr<IterVar> px = sc->fuse(sc->op->axis[1], sc->op->axis[2]);
  ASSERT_TRUE(px.ok()) << px.status();
  absl::StatusOr<SplitAxes> sp = sc->split(*px, 5);
  ASSERT_TRUE(sp.ok()) << sp.status();
  absl::StatusOr<IterVar> tile = sc->fuse(sc->op->axis[0], sp->outer);
  ASSERT_TRUE(tile.ok()) << tile.status();
  ASSERT_TRUE(s[b]->compute_at(sc, *tile).ok());
  BoundMap bm = Bounds(s);
  EXPECT_EQ(R(bm, s[b]->op->axis[0]), "[floordiv(ax0.ax1.ax2.fused.outer.fused, 4), +1)");
  EXPECT_EQ(R(bm, s[b]->op->axis[1]), "[(floormod(ax0.ax1.ax2.fused.outer.fused, 4) * 5), +5)");
}

TEST(BoundTest, ReductionAxesKeepTheirRangeAndOutputsCoverTheirShape) {
  Tensor a = Placeholder({IntImm(6), IntImm(9)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(1), IntImm(8)}, "k");
  Tensor b = Compute({IntImm(6)}, [&](const std::vector<Var>& i) { return Sum(a({i[0], k->var}), {k}); }, "B");
  Tensor c = Compute({IntImm(3)}, [&](const std::vector<Var>& i) { return b({i[0] * 2}); }, "C");
  Schedule s = Make({c});
  BoundMap bm = Bounds(s);
  EXPECT_EQ(R(bm, k), "[1, +8)");
  // C reads B at even indices 0..4: B's region is [0, 5).
  EXPECT_EQ(R(bm, s[b]->op->axis[0]), "[0, +5)");
  EXPECT_EQ(R(bm, s[c]->op->axis[0]), "[0, +3)");
}

TEST(BoundTest, CacheReadAndCacheWriteStages) {
  Tensor a = Placeholder({IntImm(16), IntImm(16)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(16)}, "k");
  Tensor b = Compute({IntImm(16), IntImm(16)}, [&](const std::vector<Var>& i) {
    return Sum(a({i[0], k->var}) * a({k->var, i[1]}), {k});
  }, "B");
  Schedule s = Make({b});
  absl::StatusOr<Tensor> bl = s.cache_write(b, "local");
  ASSERT_TRUE(bl.ok());
  absl::StatusOr<Tensor> al = s.cache_read(a, "local", std::vector<Tensor>{*bl});
  ASSERT_TRUE(al.ok());
  Stage* sb = s[b];
  absl::StatusOr<TileAxes> t = sb->tile(sb->op->axis[0], sb->op->axis[1], 4, 4);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(s[*bl]->compute_at(sb, t->y_outer).ok());
  Stage* sbl = s[*bl];
  // The cache computes a 4x4 tile of B.
  BoundMap bm = Bounds(s);
  EXPECT_EQ(R(bm, sbl->op->axis[0]), "[(ax0.outer * 4), +4)");
  EXPECT_EQ(R(bm, sbl->op->axis[1]), "[(ax1.outer * 4), +4)");
  // A.local at the root serves every tile: all of A.
  EXPECT_EQ(R(bm, s[*al]->op->axis[0]), "[0, +16)");
  // A.local at the cache's innermost (reduction) loop: every loop of the cache is
  // fixed, B.local[i, j] reads A[i, k] and A[k, j]: rows {i, k}, columns {k, j}.
  ASSERT_TRUE(s[*al]->compute_at(sbl, sbl->op->reduce_axis[0]).ok());
  BoundMap bk = Bounds(s);
  EXPECT_EQ(R(bk, s[*al]->op->axis[0]), "[min(ax0.c, k), +((max(ax0.c, k) - min(ax0.c, k)) + 1))");
  EXPECT_EQ(R(bk, s[*al]->op->axis[1]), "[min(k, ax1.c), +((max(k, ax1.c) - min(k, ax1.c)) + 1))");
}

TEST(BoundTest, RfactorStages) {
  Tensor a = Placeholder({IntImm(8), IntImm(30)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(30)}, "k");
  Tensor b = Compute({IntImm(8)}, [&](const std::vector<Var>& i) { return Sum(a({i[0], k->var}), {k}); }, "B");
  Schedule s = Make({b});
  absl::StatusOr<SplitAxes> ks = s[b]->split(k, 4);
  ASSERT_TRUE(ks.ok());
  absl::StatusOr<std::vector<Tensor>> rf = s.rfactor(b, ks->inner);
  ASSERT_TRUE(rf.ok());
  Stage* srf = s[(*rf)[0]];
  BoundMap bm = Bounds(s);
  EXPECT_EQ(R(bm, srf->op->axis[0]), "[0, +4)");
  EXPECT_EQ(R(bm, srf->op->axis[1]), "[0, +8)");
  EXPECT_EQ(R(bm, srf->op->reduce_axis[0]), "[0, +8)");
  EXPECT_EQ(R(bm, s[b]->op->reduce_axis[0]), "[0, +4)");
  // rf computed at B's row loop: one row of partial sums.
  ASSERT_TRUE(s[(*rf)[0]]->compute_at(s[b], s[b]->op->axis[0]).ok());
  BoundMap at = Bounds(s);
  EXPECT_EQ(R(at, srf->op->axis[0]), "[0, +4)");
  EXPECT_EQ(R(at, srf->op->axis[1]), "[ax0, +1)");
}

TEST(BoundTest, ThreadLoopsRelaxByStorageScope) {
  Tensor a = Placeholder({IntImm(64)}, kF32, "A");
  Tensor b = Compute({IntImm(64)}, [&](const std::vector<Var>& i) { return a({i[0]}) + 1.0f; }, "B");
  for (const char* scope : {"shared", "local"}) {
    Schedule s = Make({b});
    Stage* sb = s[b];
    absl::StatusOr<SplitAxes> sp = sb->split(sb->op->axis[0], 16);
    ASSERT_TRUE(sp.ok());
    ASSERT_TRUE(sb->bind(sp->outer, "blockIdx.x").ok());
    ASSERT_TRUE(sb->bind(sp->inner, "threadIdx.x").ok());
    absl::StatusOr<Tensor> as = s.cache_read(a, scope, std::vector<Tensor>{b});
    ASSERT_TRUE(as.ok());
    ASSERT_TRUE(s[*as]->compute_at(sb, sp->inner).ok());
    BoundMap bm = Bounds(s);
    // Shared memory is filled for the whole block (threadIdx relaxed); local
    // memory holds one thread's element.
    EXPECT_EQ(R(bm, s[*as]->op->axis[0]),
              std::string(scope) == "shared" ? "[(ax0.outer * 16), +16)"
                                             : "[((ax0.outer * 16) + ax0.inner), +1)")
        << scope;
  }
}

TEST(BoundTest, InvalidAttachmentsAreErrors) {
  Stencil st(IntImm(16));
  Schedule s = Make({st.c});
  Stage* sc = s[st.c];
  const IterVar i = sc->leaf_iter_vars[0];
  ASSERT_TRUE(s[st.b]->compute_at(sc, i).ok());
  // The attach loop is split afterwards: no longer a loop of C.
  ASSERT_TRUE(sc->split(i, 4).ok());
  absl::StatusOr<BoundMap> b = InferBound(s);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("no longer one of its loops"), std::string::npos)
      << b.status();
  // The attach stage is inlined.
  Stencil st2(IntImm(16));
  Tensor d = Elementwise(st2.c, "D");
  Schedule s2 = Make({d});
  ASSERT_TRUE(s2[st2.b]->compute_at(s2[st2.c], s2[st2.c]->leaf_iter_vars[0]).ok());
  ASSERT_TRUE(s2[st2.c]->compute_inline().ok());
  b = InferBound(s2);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("which is inlined"), std::string::npos) << b.status();
  // A producer attached inside a consumer whose other consumer is outside that loop.
  Stencil st3(IntImm(16));
  Tensor e = Compute({IntImm(16)}, [&](const std::vector<Var>& i) { return st3.b(E(i)) + st3.c(E(i)); }, "E");
  Schedule s3 = Make({e});
  ASSERT_TRUE(s3[st3.b]->compute_at(s3[st3.c], s3[st3.c]->leaf_iter_vars[0]).ok());
  b = InferBound(s3);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("does not run inside that loop"), std::string::npos)
      << b.status();
}

TEST(ArithTest, SimplifyAndIntervals) {
  Var x = tir::MakeVar("x"), y = tir::MakeVar("y");
  using arith::Simplify;
  EXPECT_EQ(tir::ToText(Simplify(((x * 4) + 3 + 1) - ((x * 4) - 1))), "5");
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorDiv(x * 8 + 5, IntImm(4)))), "((x * 2) + 1)");
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorMod(x * 8 + y + 9, IntImm(4)))), "floormod((y + 1), 4)");
  EXPECT_EQ(tir::ToText(Simplify(tir::Min(x + 2, x + 5))), "(x + 2)");
  EXPECT_EQ(tir::ToText(Simplify(y - x * 3)), "(y - (x * 3))");
  // A floordiv/floormod pair by the same constant puts its numerator back
  // together (also scaled, and with other terms around it)...
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorDiv(x * 5 + y, IntImm(7)) * 7 +
                                 tir::FloorMod(x * 5 + y, IntImm(7)))),
            "((x * 5) + y)");
  EXPECT_EQ(tir::ToText(Simplify((tir::FloorDiv(x, IntImm(7)) * 14 + y) +
                                 tir::FloorMod(x, IntImm(7)) * 2)),
            "(y + (x * 2))");
  // ...but not when the coefficients or the operands differ.
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorDiv(x, IntImm(7)) * 6 + tir::FloorMod(x, IntImm(7)))),
            "((floordiv(x, 7) * 6) + floormod(x, 7))");
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorDiv(x, IntImm(7)) * 7 + tir::FloorMod(y, IntImm(7)))),
            "((floordiv(x, 7) * 7) + floormod(y, 7))");
  // A numerator whose terms are bounded floormods and which stays within
  // one multiple of the divisor: the quotient is a constant.
  const PrimExpr m = tir::FloorMod(x, IntImm(40)) * 5;
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorDiv(m + 4, IntImm(200)))), "0");
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorMod(m + 4, IntImm(200)))),
            "((floormod(x, 40) * 5) + 4)");
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorDiv(m + y * 200 + 403, IntImm(200)))), "(y + 2)");
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorMod(m + 403, IntImm(200)))),
            "((floormod(x, 40) * 5) + 3)");
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorDiv(IntImm(199) - m, IntImm(200)))), "0");
  // Spanning two multiples (5..200), or an unbounded term: kept.
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorDiv(m + 5, IntImm(200)))),
            "floordiv(((floormod(x, 40) * 5) + 5), 200)");
  EXPECT_EQ(tir::ToText(Simplify(tir::FloorMod(m + y, IntImm(200)))),
            "floormod(((floormod(x, 40) * 5) + y), 200)");
  arith::VarSetMap dom;
  dom[x.get()] = arith::IntSet::Interval(IntImm(0), IntImm(7));
  arith::IntSet s = arith::EvalSet(x * 2 + 1, dom);
  EXPECT_EQ(tir::ToText(s.min_value), "1");
  EXPECT_EQ(tir::ToText(s.max_value), "15");
  s = arith::EvalSet(IntImm(10) - x, dom);
  EXPECT_EQ(tir::ToText(s.min_value), "3");
  s = arith::EvalSet(tir::FloorMod(x, IntImm(3)), dom);
  EXPECT_EQ(tir::ToText(s.max_value), "2");
  dom[y.get()] = arith::IntSet::Interval(y * 8, y * 8 + 7);
  s = arith::EvalSet(tir::FloorDiv(y, IntImm(8)), dom);
  EXPECT_TRUE(s.IsPoint());
  EXPECT_EQ(tir::ToText(s.min_value), "y");
  s = arith::EvalSet(tir::Mul(x, y), dom);
  EXPECT_TRUE(s.IsEverything());
  EXPECT_EQ(tir::ToText(arith::CeilDiv(IntImm(10), IntImm(4))), "3");
}

}  // namespace
}  // namespace kiln::te
