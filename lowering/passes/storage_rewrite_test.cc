// File: lowering/passes/storage_rewrite_test.cc
#include "lowering/passes/storage_rewrite.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"
#include "lowering/passes/tir_eval.h"
#include "lowering/passes/verify.h"

namespace kiln::tir::transform {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const DataType kF32 = DataType::Float(32);

PrimFunc Rewrite(const PrimFunc& f, const std::map<std::string, int64_t>& dims = {}) {
  absl::StatusOr<PrimFunc> r = StorageRewrite(f);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return f;
  absl::Status v = VerifyPrimFunc(*r);
  EXPECT_TRUE(v.ok()) << v << "\n" << ToText(*r);
  absl::Status same = testing::ExpectSameResults(f, *r, 11, dims);
  EXPECT_TRUE(same.ok()) << same << "\n" << ToText(*r);
  return *r;
}

int CountAllocs(const Stmt& s) {
  int n = 0;
  PostOrderVisit(s, nullptr, [&](const StmtNode* x) { n += x->kind == StmtKind::kAllocate; });
  return n;
}

// out = (in * 2 staged through T1) + 1 staged through T2.
PrimFunc TwoStages(DataType t2_type, bool overlap) {
  Buffer in = MakeBuffer("In", kF32, {IntImm(64)});
  Buffer out = MakeBuffer("Out", kF32, {IntImm(64)});
  Buffer t1 = MakeBuffer("T1", kF32, {IntImm(64)});
  Buffer t2 = MakeBuffer("T2", t2_type, {IntImm(32)});
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k");
  std::vector<Stmt> stages = {
      For(i, IntImm(0), IntImm(64), ForKind::kSerial,
          Store(t1, Mul(Load(in, {i}), FloatImm(2)), {i})),
      For(j, IntImm(0), IntImm(64), ForKind::kSerial, Store(out, Load(t1, {j}), {j})),
      For(k, IntImm(0), IntImm(32), ForKind::kSerial,
          Store(t2, Cast(t2_type, Add(Load(out, {k}), FloatImm(1))), {k})),
      For(MakeVar("m"), IntImm(0), IntImm(32), ForKind::kSerial, NoOp()),
  };
  Var m = MakeVar("m");
  PrimExpr last = Cast(kF32, Load(t2, {m}));
  if (overlap) last = Add(last, Load(t1, {m}));
  stages[3] = For(m, IntImm(0), IntImm(32), ForKind::kSerial, Store(out, last, {m}));
  return MakePrimFunc("stages", {in, out}, Allocate(t1, Allocate(t2, Seq(stages))));
}

TEST(StorageRewriteTest, DisjointLifetimesShareOneAllocation) {
  PrimFunc g = Rewrite(TwoStages(kF32, false));
  EXPECT_EQ(CountAllocs(g->body), 1) << ToText(g);
  EXPECT_THAT(ToText(g), HasSubstr("allocate T1: float32[64]"));
  EXPECT_THAT(ToText(g), Not(HasSubstr("T2")));
}

TEST(StorageRewriteTest, OverlappingOrIncompatibleBuffersStayApart) {
  EXPECT_EQ(CountAllocs(Rewrite(TwoStages(kF32, true))->body), 2);
  EXPECT_EQ(CountAllocs(Rewrite(TwoStages(DataType::Int(32), false))->body), 2);
}

TEST(StorageRewriteTest, SequentialScopesShare) {
  Buffer out = MakeBuffer("Out", kF32, {IntImm(8)});
  Buffer a = MakeBuffer("A", kF32, {IntImm(8)});
  Buffer b = MakeBuffer("B", kF32, {IntImm(16)});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body =
      Seq({Allocate(a, For(i, IntImm(0), IntImm(8), ForKind::kSerial,
                           Seq({Store(a, Cast(kF32, i), {i}), Store(out, Load(a, {i}), {i})}))),
           Allocate(b, For(j, IntImm(0), IntImm(8), ForKind::kSerial,
                           Seq({Store(b, Load(out, {j}), {j + 8}),
                                Store(out, Mul(Load(b, {j + 8}), FloatImm(3)), {j})})))});
  PrimFunc g = Rewrite(MakePrimFunc("seq", {out}, body));
  EXPECT_EQ(CountAllocs(g->body), 1) << ToText(g);
  EXPECT_THAT(ToText(g), HasSubstr("allocate B: float32[16]"));
}

TEST(StorageRewriteTest, UnreadAllocationIsRemovedWithItsStores) {
  Buffer out = MakeBuffer("Out", kF32, {IntImm(8)});
  Buffer t = MakeBuffer("T", kF32, {IntImm(8)});
  Var i = MakeVar("i");
  Stmt body = Allocate(t, For(i, IntImm(0), IntImm(8), ForKind::kSerial,
                              Seq({Store(t, Load(out, {i}), {i}), Store(out, FloatImm(1), {i})})));
  PrimFunc g = Rewrite(MakePrimFunc("dead", {out}, body));
  EXPECT_EQ(CountAllocs(g->body), 0);
  EXPECT_THAT(ToText(g), Not(HasSubstr("T[")));
}

TEST(StorageRewriteTest, HoistsOutOfSerialNotParallelLoops) {
  Buffer out = MakeBuffer("Out", kF32, {IntImm(4), IntImm(4), IntImm(8)});
  Buffer t = MakeBuffer("T", kF32, {IntImm(8)});
  Var p = MakeVar("p"), i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k");
  Stmt inner = Allocate(t, Seq({For(j, IntImm(0), IntImm(8), ForKind::kSerial,
                                    Store(t, Cast(kF32, p * 100 + i * 10 + j), {j})),
                                For(k, IntImm(0), IntImm(8), ForKind::kSerial,
                                    Store(out, Load(t, {k}), {(p * 4 + i) * 8 + k}))}));
  Stmt body = For(p, IntImm(0), IntImm(4), ForKind::kParallel,
                  For(i, IntImm(0), IntImm(4), ForKind::kSerial, inner));
  PrimFunc g = Rewrite(MakePrimFunc("hoist", {out}, body));
  // parallel (p) { allocate T { for (i) { ... } } }
  const Stmt& par = g->body;
  ASSERT_EQ(par->kind, StmtKind::kFor);
  ASSERT_EQ(par->body0()->kind, StmtKind::kAllocate) << ToText(g);
  EXPECT_EQ(par->body0()->body0()->kind, StmtKind::kFor);
}

TEST(StorageRewriteTest, SymbolicSizeStaysInPlace) {
  Var n = MakeVar("n");
  Buffer out = MakeBuffer("Out", kF32, {n});
  Buffer t = MakeBuffer("T", kF32, {n});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = For(i, IntImm(0), IntImm(2), ForKind::kSerial,
                  Allocate(t, For(j, IntImm(0), n, ForKind::kSerial,
                                  Seq({Store(t, Load(out, {j}), {j}),
                                       Store(out, Add(Load(t, {j}), FloatImm(1)), {j})}))));
  PrimFunc f = MakePrimFunc("sym", {out}, body);
  PrimFunc g = Rewrite(f, {{"n", 5}});
  EXPECT_EQ(g.get(), f.get());
}

}  // namespace
}  // namespace kiln::tir::transform
