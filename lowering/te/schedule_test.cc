// File: lowering/te/schedule_test.cc — schedule primitives: structure and misuse.
#include "lowering/te/schedule.h"

#include "gtest/gtest.h"
#include "ir/tir_printer.h"

namespace kiln::te {
namespace {

using tir::IntImm;

const DataType kF32 = DataType::Float(32);

std::vector<PrimExpr> E(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

std::vector<std::string> Names(const std::vector<IterVar>& ivs) {
  std::vector<std::string> out;
  for (const IterVar& iv : ivs) out.push_back(iv->var->name);
  return out;
}

// C[i, j] = sum_k A[i, k] * B[k, j]
struct Matmul {
  Tensor a, b, c;
  IterVar k;
  Matmul(int64_t n = 16, int64_t m = 16, int64_t l = 16) {
    a = Placeholder({IntImm(n), IntImm(l)}, kF32, "A");
    b = Placeholder({IntImm(l), IntImm(m)}, kF32, "B");
    k = ReduceAxis({IntImm(0), IntImm(l)}, "k");
    c = Compute({IntImm(n), IntImm(m)}, [&](const std::vector<Var>& i) {
      return Sum(a({i[0], k->var}) * b({k->var, i[1]}), {k});
    }, "C");
  }
};

Schedule Make(const std::vector<Tensor>& outs) {
  absl::StatusOr<Schedule> s = CreateSchedule(outs);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

void ExpectError(const absl::Status& st, absl::string_view fragment) {
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(fragment), absl::string_view::npos) << st;
}

TEST(ScheduleTest, CreateScheduleMakesOneStagePerOp) {
  Matmul mm;
  Schedule s = Make({mm.c});
  std::vector<Stage*> st = s.stages();
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0]->name(), "A");
  EXPECT_TRUE(st[0]->is_placeholder());
  EXPECT_EQ(st[2]->name(), "C");
  EXPECT_TRUE(st[2]->is_output);
  EXPECT_FALSE(st[1]->is_output);
  EXPECT_EQ(s[mm.c], st[2]);
  EXPECT_EQ(s[mm.c.op()], st[2]);
  EXPECT_EQ(Names(st[2]->leaf_iter_vars), (std::vector<std::string>{"ax0", "ax1", "k"}));
  EXPECT_EQ(st[2]->attach_type, AttachType::kGroupRoot);
  EXPECT_EQ(st[2]->scope, "global");
  EXPECT_FALSE(CreateSchedule({}).ok());
}

TEST(ScheduleTest, SplitFuseReorderTileUpdateLeavesAndRelations) {
  Matmul mm;
  Schedule s = Make({mm.c});
  Stage* c = s[mm.c];
  const IterVar i = c->leaf_iter_vars[0], j = c->leaf_iter_vars[1];
  absl::StatusOr<SplitAxes> si = c->split(i, 4);
  ASSERT_TRUE(si.ok()) << si.status();
  EXPECT_EQ(Names(c->leaf_iter_vars),
            (std::vector<std::string>{"ax0.outer", "ax0.inner", "ax1", "k"}));
  ASSERT_EQ(c->relations.size(), 1u);
  EXPECT_EQ(c->relations[0].kind, RelationKind::kSplit);
  EXPECT_EQ(c->relations[0].parent, i);
  EXPECT_TRUE(tir::IsConstValue(c->relations[0].factor, 4));
  EXPECT_FALSE(c->relations[0].nparts.defined());
  EXPECT_EQ(c->all_iter_vars.size(), 5u);

  absl::StatusOr<SplitAxes> sj = c->split_by_nparts(j, 2);
  ASSERT_TRUE(sj.ok());
  EXPECT_TRUE(tir::IsConstValue(c->relations[1].nparts, 2));
  ASSERT_TRUE(c->reorder({sj->outer, si->outer, mm.k}).ok());
  EXPECT_EQ(Names(c->leaf_iter_vars),
            (std::vector<std::string>{"ax1.outer", "ax0.inner", "ax0.outer", "ax1.inner", "k"}));
  ASSERT_TRUE(c->reorder({sj->outer, si->inner, mm.k, si->outer, sj->inner}).ok());
  absl::StatusOr<IterVar> f = c->fuse(sj->outer, si->inner);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->var->name, "ax1.outer.ax0.inner.fused");
  EXPECT_EQ(c->relations.back().kind, RelationKind::kFuse);
  EXPECT_EQ(Names(c->leaf_iter_vars),
            (std::vector<std::string>{"ax1.outer.ax0.inner.fused", "k", "ax0.outer", "ax1.inner"}));
  // Swapped arguments of adjacent loops are accepted (as in TVM).
  absl::StatusOr<IterVar> f2 = c->fuse(sj->inner, si->outer);
  ASSERT_TRUE(f2.ok()) << f2.status();
  EXPECT_EQ((*f2)->var->name, "ax0.outer.ax1.inner.fused");

  Matmul mm2;
  Schedule s2 = Make({mm2.c});
  Stage* c2 = s2[mm2.c];
  absl::StatusOr<TileAxes> t = c2->tile(c2->leaf_iter_vars[0], c2->leaf_iter_vars[1], 8, 4);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Names(c2->leaf_iter_vars),
            (std::vector<std::string>{"ax0.outer", "ax1.outer", "ax0.inner", "ax1.inner", "k"}));
  absl::StatusOr<IterVar> all = c2->fuse({t->x_outer, t->y_outer, t->x_inner});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(c2->leaf_iter_vars.size(), 3u);
}

TEST(ScheduleTest, AnnotationsAreRecorded) {
  Matmul mm;
  Schedule s = Make({mm.c});
  Stage* c = s[mm.c];
  const IterVar i = c->leaf_iter_vars[0], j = c->leaf_iter_vars[1];
  ASSERT_TRUE(c->parallel(i).ok());
  ASSERT_TRUE(c->vectorize(j).ok());
  ASSERT_TRUE(c->unroll(mm.k).ok());
  ASSERT_TRUE(c->pragma(i, "auto_unroll_max_step", IntImm(16)).ok());
  EXPECT_EQ(c->attr(i)->for_kind, tir::ForKind::kParallel);
  EXPECT_EQ(c->attr(j)->for_kind, tir::ForKind::kVectorized);
  EXPECT_EQ(c->attr(mm.k)->for_kind, tir::ForKind::kUnrolled);
  ASSERT_EQ(c->attr(i)->pragmas.size(), 1u);
  EXPECT_EQ(c->attr(i)->pragmas[0].first, "auto_unroll_max_step");

  Matmul g;
  Schedule sg = Make({g.c});
  Stage* cg = sg[g.c];
  ASSERT_TRUE(cg->bind(cg->leaf_iter_vars[0], "blockIdx.x").ok());
  ASSERT_TRUE(cg->bind(cg->leaf_iter_vars[1], "threadIdx.x").ok());
  EXPECT_EQ(cg->attr(cg->leaf_iter_vars[1])->thread_tag, "threadIdx.x");
  EXPECT_EQ(cg->attr(cg->leaf_iter_vars[1])->for_kind, tir::ForKind::kThreadBinding);
  ExpectError(cg->bind(cg->leaf_iter_vars[1], "threadIdx.q"), "unknown thread tag");
  ExpectError(cg->bind(g.k, "threadIdx.y"), "cross-thread reductions are not supported");
  ExpectError(cg->vectorize(cg->leaf_iter_vars[0]), "is bound to blockIdx.x");
}

TEST(ScheduleTest, MisuseIsAnErrorNotACrash) {
  Matmul mm;
  Schedule s = Make({mm.c});
  Stage* c = s[mm.c];
  Stage* a = s[mm.a];
  const IterVar i = c->leaf_iter_vars[0], j = c->leaf_iter_vars[1];
  absl::StatusOr<SplitAxes> si = c->split(i, 4);
  ASSERT_TRUE(si.ok());
  // i is no longer a leaf.
  ExpectError(c->split(i, 2).status(), "'ax0' is not a leaf of this stage");
  ExpectError(c->vectorize(i), "not a leaf");
  ExpectError(c->split(j, 0).status(), "must be positive");
  ExpectError(c->split_by_nparts(j, -3).status(), "must be positive");
  ExpectError(c->reorder({j, si->inner, j}), "'ax1' appears twice");
  ExpectError(c->fuse(si->outer, j).status(), "are not adjacent loops");
  ExpectError(c->fuse(j, mm.k).status(), "one is a reduction axis");
  ExpectError(c->fuse(std::vector<IterVar>{}).status(), "no IterVars");
  ExpectError(c->vectorize(mm.k), "is a reduction axis");
  ExpectError(c->parallel(mm.k), "is a reduction axis");
  ExpectError(c->compute_inline(), "an output stage cannot be inlined");
  ExpectError(a->split(i, 2).status(), "placeholder");
  ExpectError(c->compute_at(nullptr, j), "null");
  ExpectError(c->tile(j, j, 2, 2).status(), "same IterVar");
  ExpectError(c->pragma(j, ""), "empty key");
  ExpectError(c->storage_align(si->inner, 16, 0), "not a data-parallel root axis");
  ExpectError(c->storage_align(j, 0, 0), "must be positive");
  ExpectError(c->set_scope(""), "empty scope");
  // An IterVar of another stage.
  Matmul other;
  ExpectError(c->unroll(other.k), "not a leaf");
  // Nothing half-done: the failed calls left the leaves as they were.
  EXPECT_EQ(Names(c->leaf_iter_vars),
            (std::vector<std::string>{"ax0.outer", "ax0.inner", "ax1", "k"}));
}

TEST(ScheduleTest, ComputeAtAndInlineChecks) {
  Tensor a = Placeholder({IntImm(16)}, kF32, "A");
  Tensor b = Compute({IntImm(16)}, [&](const std::vector<Var>& i) { return a(E(i)) * 2.0f; }, "B");
  Tensor c = Compute({IntImm(16)}, [&](const std::vector<Var>& i) { return b(E(i)) + 1.0f; }, "C");
  Tensor d = Compute({IntImm(16)}, [&](const std::vector<Var>& i) { return c(E(i)) - 1.0f; }, "D");
  Tensor other = Compute({IntImm(16)}, [&](const std::vector<Var>& i) { return a(E(i)); }, "Other");
  IterVar k = ReduceAxis({IntImm(0), IntImm(16)}, "k");
  Tensor r = Compute({IntImm(1)}, [&](const std::vector<Var>&) { return Sum(d({k->var}), {k}); }, "R");
  Schedule s = Make({r, other});
  // B is read by C, which is read by D: compute_at a transitive consumer is fine.
  EXPECT_TRUE(s[b]->compute_at(s[d], s[d]->leaf_iter_vars[0]).ok());
  EXPECT_EQ(s[b]->attach_type, AttachType::kScope);
  EXPECT_EQ(s[b]->attach_stage, s[d]);
  ExpectError(s[b]->compute_at(s[other], s[other]->leaf_iter_vars[0]), "does not read 'B'");
  ExpectError(s[b]->compute_at(s[b], s[b]->leaf_iter_vars[0]), "inside itself");
  ExpectError(s[b]->compute_at(s[d], s[c]->leaf_iter_vars[0]), "is not a leaf of stage 'D'");
  ExpectError(s[r]->compute_at(s[other], s[other]->leaf_iter_vars[0]), "output stage");
  ExpectError(s[a]->compute_at(s[d], s[d]->leaf_iter_vars[0]), "placeholder");
  EXPECT_TRUE(s[c]->compute_inline().ok());
  EXPECT_EQ(s[c]->attach_type, AttachType::kInline);
  ExpectError(s[r]->compute_inline(), "output");
  ExpectError(s[a]->compute_inline(), "placeholder");
  EXPECT_TRUE(s[c]->compute_root().ok());
  EXPECT_EQ(s[c]->attach_type, AttachType::kGroupRoot);
  // ReadersOf looks through inlined stages.
  ASSERT_TRUE(s[c]->compute_inline().ok());
  absl::StatusOr<std::vector<Stage*>> readers = s.ReadersOf(s[b]);
  ASSERT_TRUE(readers.ok());
  ASSERT_EQ(readers->size(), 1u);
  EXPECT_EQ((*readers)[0], s[d]);
}

TEST(ScheduleTest, ReductionCannotBeInlined) {
  Matmul mm;
  Tensor out = Compute({IntImm(16), IntImm(16)}, [&](const std::vector<Var>& i) {
    return mm.c(E(i)) + 1.0f;
  }, "Out");
  Schedule s = Make({out});
  ExpectError(s[mm.c]->compute_inline(), "a reduction cannot be inlined");
  EXPECT_TRUE(s[mm.c]->storage_align(s[mm.c]->op->axis[0], 16, 1).ok());
  ASSERT_EQ(s[mm.c]->storage_alignments.size(), 1u);
  EXPECT_EQ(s[mm.c]->storage_alignments[0].factor, 16);
  EXPECT_TRUE(s[mm.c]->set_scope("local").ok());
  EXPECT_EQ(s[mm.c]->scope, "local");
}

TEST(ScheduleTest, CacheReadInsertsACopyAndRewritesReaders) {
  Matmul mm;
  Schedule s = Make({mm.c});
  absl::StatusOr<Tensor> aa = s.cache_read(mm.a, "shared", std::vector<Operation>{mm.c.op()});
  ASSERT_TRUE(aa.ok()) << aa.status();
  EXPECT_EQ(aa->name(), "A.shared");
  std::vector<Stage*> st = s.stages();
  ASSERT_EQ(st.size(), 4u);
  EXPECT_EQ(st[1]->name(), "A.shared");  // right after A
  EXPECT_EQ(st[1]->scope, "shared");
  // C now reads A.shared, not A; the user's tensor still finds C's stage.
  Stage* c = s[mm.c];
  EXPECT_NE(c->op.get(), mm.c.op().get());
  EXPECT_EQ(c->origin_op.get(), mm.c.op().get());
  std::vector<std::string> reads;
  for (const Tensor& t : c->op->InputTensors()) reads.push_back(t.name());
  EXPECT_EQ(reads, (std::vector<std::string>{"A.shared", "B"}));
  EXPECT_EQ(s[*aa], st[1]);
  // Errors.
  ExpectError(s.cache_read(mm.b, "local", std::vector<Operation>{aa->op()}).status(),
              "'A.shared' does not read this tensor");
  ExpectError(s.cache_read(mm.b, "local", std::vector<Operation>{}).status(), "no readers");
  Tensor stranger = Placeholder({IntImm(2)}, kF32, "X");
  ExpectError(s.cache_read(stranger, "local", std::vector<Tensor>{mm.c}).status(),
              "not in this schedule");
}

TEST(ScheduleTest, CacheWriteMovesTheBodyIntoANewStage) {
  Matmul mm;
  Schedule s = Make({mm.c});
  Stage* c = s[mm.c];
  ASSERT_TRUE(c->split(c->leaf_iter_vars[0], 4).ok());
  absl::StatusOr<Tensor> cc = s.cache_write(mm.c, "local");
  ASSERT_TRUE(cc.ok()) << cc.status();
  EXPECT_EQ(cc->name(), "C.local");
  Stage* cs = s[*cc];
  ASSERT_NE(cs, nullptr);
  EXPECT_EQ(cs->scope, "local");
  // The cache does the reduction; C is a copy with fresh loops.
  EXPECT_EQ(cs->op->reduce_axis.size(), 1u);
  EXPECT_EQ(Names(cs->leaf_iter_vars), (std::vector<std::string>{"ax0.c", "ax1.c", "k"}));
  EXPECT_TRUE(c->op->reduce_axis.empty());
  EXPECT_TRUE(c->relations.empty());
  EXPECT_EQ(Names(c->leaf_iter_vars), (std::vector<std::string>{"ax0", "ax1"}));
  std::vector<Stage*> st = s.stages();
  EXPECT_EQ(st[st.size() - 2], cs);
  EXPECT_EQ(st.back(), c);
  EXPECT_TRUE(c->is_output);
  ExpectError(s.cache_write(mm.a, "local").status(), "placeholder");
}

TEST(ScheduleTest, RfactorMakesTheInnerReductionDataParallel) {
  Tensor a = Placeholder({IntImm(8), IntImm(30)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(30)}, "k");
  Tensor b = Compute({IntImm(8)}, [&](const std::vector<Var>& i) { return Sum(a({i[0], k->var}), {k}); }, "B");
  Schedule s = Make({b});
  Stage* sb = s[b];
  absl::StatusOr<SplitAxes> ks = sb->split(k, 4);
  ASSERT_TRUE(ks.ok());
  ExpectError(s.rfactor(b, sb->leaf_iter_vars[0]).status(), "not a reduction axis");
  ExpectError(s.rfactor(b, ks->inner, 5).status(), "out of range");
  absl::StatusOr<std::vector<Tensor>> rf = s.rfactor(b, ks->inner);
  ASSERT_TRUE(rf.ok()) << rf.status();
  ASSERT_EQ(rf->size(), 1u);
  const Tensor& brf = (*rf)[0];
  EXPECT_EQ(brf.name(), "B.rf");
  ASSERT_EQ(brf.ndim(), 2);
  EXPECT_TRUE(tir::IsConstValue(brf.shape()[0], 4));  // the factored axis first
  EXPECT_TRUE(tir::IsConstValue(brf.shape()[1], 8));
  Stage* srf = s[brf];
  EXPECT_EQ(Names(srf->leaf_iter_vars), (std::vector<std::string>{"k.inner", "ax0", "k.outer"}));
  ASSERT_EQ(srf->op->reduce_axis.size(), 1u);
  EXPECT_TRUE(tir::IsConstValue(srf->op->reduce_axis[0]->dom.extent, 8));  // ceil(30 / 4)
  // 30 is not a multiple of 4: the factored reduction carries the bound as its condition.
  EXPECT_NE(tir::ToText(srf->op->body[0]).find("likely"), std::string::npos)
      << tir::ToText(srf->op->body[0]);
  // B reduces over the factored axis.
  EXPECT_EQ(Names(sb->leaf_iter_vars), (std::vector<std::string>{"ax0", "k.inner.v"}));
  EXPECT_TRUE(sb->relations.empty());
  std::vector<Stage*> st = s.stages();
  EXPECT_EQ(st[st.size() - 2], srf);
  // factor_axis = -1 puts the factored axis last.
  Schedule s2 = Make({b});
  absl::StatusOr<SplitAxes> k2 = s2[b]->split(k, 5);
  ASSERT_TRUE(k2.ok());
  absl::StatusOr<std::vector<Tensor>> rf2 = s2.rfactor(b, k2->outer, -1);
  ASSERT_TRUE(rf2.ok()) << rf2.status();
  EXPECT_TRUE(tir::IsConstValue((*rf2)[0].shape()[1], 6));
}

TEST(ScheduleTest, RfactorOfArgMaxIsUnimplemented) {
  Tensor a = Placeholder({IntImm(8), IntImm(30)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(30)}, "k");
  Tensor b = Compute({IntImm(8)}, [&](const std::vector<Var>& i) { return ArgMax(a({i[0], k->var}), {k}); }, "B");
  Schedule s = Make({b});
  absl::StatusOr<std::vector<Tensor>> rf = s.rfactor(b, k);
  EXPECT_EQ(rf.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(ScheduleTest, NormalizeRebasesRootLeaves) {
  Tensor a = Placeholder({IntImm(8)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(2), IntImm(5)}, "k");
  Tensor b = Compute({IntImm(1)}, [&](const std::vector<Var>&) { return Sum(a({k->var}), {k}); }, "B");
  Schedule s = Make({b});
  ASSERT_TRUE(s.Normalize().ok());
  Stage* sb = s[b];
  ASSERT_EQ(sb->relations.size(), 2u);
  EXPECT_EQ(sb->relations[1].kind, RelationKind::kRebase);
  EXPECT_EQ(sb->relations[1].parent, k);
  EXPECT_NE(sb->leaf_iter_vars[1], k);
  EXPECT_EQ(sb->leaf_iter_vars[1]->var->name, "k");
  ASSERT_TRUE(s.Normalize().ok());  // idempotent
  EXPECT_EQ(sb->relations.size(), 2u);
}

}  // namespace
}  // namespace kiln::te
