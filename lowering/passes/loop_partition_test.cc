// File: lowering/passes/loop_partition_test.cc
#include "lowering/passes/loop_partition.h"

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

PrimExpr Likely(const PrimExpr& c) { return Call(DataType::Bool(), "likely", {c}); }

PrimFunc Partition(const PrimFunc& f,
                   const std::vector<std::map<std::string, int64_t>>& dims = {{}}) {
  absl::StatusOr<PrimFunc> r = LoopPartition(f);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return f;
  absl::Status v = VerifyPrimFunc(*r);
  EXPECT_TRUE(v.ok()) << v << "\n" << ToText(*r);
  for (const auto& d : dims) {
    absl::Status same = testing::ExpectSameResults(f, *r, 13, d);
    EXPECT_TRUE(same.ok()) << same << "\n" << ToText(*r);
  }
  return *r;
}

int CountIfs(const Stmt& s) {
  int n = 0;
  PostOrderVisit(s, nullptr, [&](const StmtNode* x) { n += x->kind == StmtKind::kIfThenElse; });
  return n;
}

// for (i, 0, ceil(n / 16)) vectorized (j, 0, 16) if (likely(i*16 + j < n)) B[..] = A[..] * 2
PrimFunc SplitWithTail(PrimExpr n) {
  Buffer a = MakeBuffer("A", kF32, {n});
  Buffer b = MakeBuffer("B", kF32, {n});
  Var i = MakeVar("i"), j = MakeVar("j");
  PrimExpr idx = i * 16 + j;
  PrimExpr outer = IsConstInt(n) ? IntImm((n->int_value + 15) / 16) : FloorDiv(n + 15, IntImm(16));
  Stmt body =
      For(i, IntImm(0), outer, ForKind::kSerial,
          For(j, IntImm(0), IntImm(16), ForKind::kVectorized,
              IfThenElse(Likely(LT(idx, n)), Store(b, Mul(Load(a, {idx}), FloatImm(2)), {idx}))));
  return MakePrimFunc("split", {a, b}, body);
}

TEST(LoopPartitionTest, ConstantTail) {
  PrimFunc g = Partition(SplitWithTail(IntImm(100)));
  std::string text = ToText(g);
  ASSERT_EQ(g->body->kind, StmtKind::kSeq) << text;
  ASSERT_EQ(g->body->body.size(), 2u);
  const Stmt& main = g->body->body[0];
  EXPECT_TRUE(IsConstValue(main->b, 6)) << text;
  EXPECT_EQ(CountIfs(main), 0) << text;
  EXPECT_TRUE(IsConstValue(g->body->body[1]->a, 6)) << text;
  EXPECT_EQ(CountIfs(g->body->body[1]), 1) << text;
}

TEST(LoopPartitionTest, EvenSplitLosesTheGuard) {
  PrimFunc g = Partition(SplitWithTail(IntImm(96)));
  EXPECT_EQ(g->body->kind, StmtKind::kFor) << ToText(g);
  EXPECT_EQ(CountIfs(g->body), 0) << ToText(g);
}

TEST(LoopPartitionTest, SymbolicTail) {
  Var n = MakeVar("n");
  PrimFunc g = Partition(SplitWithTail(n),
                         {{{"n", 1}}, {{"n", 15}}, {{"n", 16}}, {{"n", 17}}, {{"n", 100}}});
  std::string text = ToText(g);
  ASSERT_EQ(g->body->kind, StmtKind::kSeq) << text;
  EXPECT_EQ(CountIfs(g->body->body[0]), 0) << text;
  EXPECT_EQ(CountIfs(g->body), 1) << text;
}

TEST(LoopPartitionTest, InnerConditionPartitionsTheInnerLoop) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4), IntImm(16)});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = For(i, IntImm(0), IntImm(4), ForKind::kSerial,
                  For(j, IntImm(0), IntImm(16), ForKind::kVectorized,
                      IfThenElse(Likely(LT(j, IntImm(10))), Store(a, FloatImm(1), {i, j}))));
  PrimFunc g = Partition(MakePrimFunc("inner", {a}, body));
  std::string text = ToText(g);
  EXPECT_EQ(CountIfs(g->body), 0) << text;
  EXPECT_THAT(text, HasSubstr("vectorized (j, 0, 10)"));
  EXPECT_THAT(text, Not(HasSubstr("(j, 10, 6)")));  // every guard is false there: no loop
}

TEST(LoopPartitionTest, PaddingGuardsOnBothSides) {
  // out[i] = in[i - 1] for 1 <= i < 9 (a padded copy), i in [0, 10).
  Buffer in = MakeBuffer("In", kF32, {IntImm(8)});
  Buffer out = MakeBuffer("Out", kF32, {IntImm(10)});
  Var i = MakeVar("i");
  Stmt body = For(i, IntImm(0), IntImm(10), ForKind::kSerial,
                  IfThenElse(Likely(And(GE(i, IntImm(1)), LT(i - 1, IntImm(8)))),
                             Store(out, Load(in, {i - 1}), {i}), Store(out, FloatImm(0), {i})));
  PrimFunc g = Partition(MakePrimFunc("pad", {in, out}, body));
  std::string text = ToText(g);
  ASSERT_EQ(g->body->kind, StmtKind::kSeq) << text;
  ASSERT_EQ(g->body->body.size(), 3u) << text;
  EXPECT_TRUE(IsConstValue(g->body->body[1]->a, 1)) << text;
  EXPECT_TRUE(IsConstValue(g->body->body[1]->b, 8)) << text;
  EXPECT_EQ(CountIfs(g->body->body[1]), 0) << text;
  // The peeled iterations are provably outside: only the else-branch is left.
  EXPECT_EQ(CountIfs(g->body), 0) << text;
}

TEST(LoopPartitionTest, LeavesOtherConditionsAlone) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {IntImm(64)});
  Var i = MakeVar("i"), j = MakeVar("j");
  // Not likely.
  Stmt plain = For(i, IntImm(0), IntImm(64), ForKind::kSerial,
                   IfThenElse(LT(i, IntImm(10)), Store(a, FloatImm(1), {i})));
  PrimFunc f1 = MakePrimFunc("plain", {a}, plain);
  EXPECT_EQ(Partition(f1).get(), f1.get());
  // Not affine.
  Stmt nonlin =
      For(i, IntImm(0), IntImm(64), ForKind::kSerial,
          IfThenElse(Likely(LT(FloorDiv(i, IntImm(3)), IntImm(10))), Store(a, FloatImm(1), {i})));
  PrimFunc f2 = MakePrimFunc("nonlin", {a}, nonlin);
  EXPECT_EQ(Partition(f2).get(), f2.get());
  // A vectorized loop with a symbolic split point.
  Buffer s = MakeBuffer("S", kF32, {n, IntImm(16)});
  Stmt vec = For(i, IntImm(0), n, ForKind::kSerial,
                 For(j, IntImm(0), IntImm(16), ForKind::kVectorized,
                     IfThenElse(Likely(LT(j, n)), Store(s, FloatImm(1), {i, j}))));
  PrimFunc f3 = MakePrimFunc("vec", {s}, vec);
  EXPECT_EQ(Partition(f3, {{{"n", 5}}}).get(), f3.get());
}

// attr "pragma_loop_partition" = 0 keeps the loop whole, guard and all; any
// other value (or another pragma) does not.
TEST(LoopPartitionTest, NoPartitionPragmaKeepsTheLoop) {
  PrimFunc f = SplitWithTail(IntImm(100));
  const Var i = f->body->var;
  PrimFunc kept = MakePrimFunc("kept", f->params, AttrStmt(i, kNoPartitionPragma, IntImm(0), f->body));
  PrimFunc g = Partition(kept);
  EXPECT_EQ(g.get(), kept.get()) << ToText(g);
  EXPECT_EQ(CountIfs(g->body), 1);
  PrimFunc other = MakePrimFunc("other", f->params, AttrStmt(i, kNoPartitionPragma, IntImm(1), f->body));
  PrimFunc h = Partition(other);
  ASSERT_EQ(h->body->kind, StmtKind::kAttr) << ToText(h);
  EXPECT_EQ(h->body->body0()->kind, StmtKind::kSeq) << ToText(h);
}

}  // namespace
}  // namespace kiln::tir::transform
