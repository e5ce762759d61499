// File: ir/tir_test.cc
#include "ir/tir.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"

namespace kiln::tir {
namespace {

TEST(TirTest, ConstantFoldingOperators) {
  Var x = MakeVar("x");
  EXPECT_TRUE(IsConstValue(IntImm(2) * IntImm(3) + 1, 7));
  EXPECT_EQ((x + 0).get(), x.get());
  EXPECT_EQ((x * 1).get(), x.get());
  EXPECT_EQ((x + 1)->kind, ExprKind::kAdd);
}

// Issue 15: constants fold with checked arithmetic; a product that does not
// fit in int64 (the extent product of a huge shape, from IMul in
// lowering/compute/tensor) stays a multiplication instead of wrapping.
TEST(TirTest, ConstantFoldingNeverOverflows) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ((IntImm(max) * IntImm(5))->kind, ExprKind::kMul);
  EXPECT_EQ((IntImm((int64_t{1} << 62) + 1) * IntImm(4))->kind, ExprKind::kMul);
  EXPECT_EQ((IntImm(max) + IntImm(1))->kind, ExprKind::kAdd);
  EXPECT_EQ((IntImm(min) - IntImm(1))->kind, ExprKind::kSub);
  EXPECT_EQ((-IntImm(min))->kind, ExprKind::kSub);
  EXPECT_TRUE(IsConstValue(IntImm(int64_t{1} << 31) * IntImm(int64_t{1} << 31), int64_t{1} << 62));
  // Integer operands given as int64 stay exact (no detour through a double).
  EXPECT_TRUE(IsConstValue(IntImm(0) + max, max));
  EXPECT_EQ((IntImm(2) * max)->kind, ExprKind::kMul);
}

TEST(TirTest, TypesOfBuiltNodes) {
  Var i = MakeVar("i");
  Buffer a = MakeBuffer("A", DataType::Float(32), {IntImm(16)});
  PrimExpr v = Load(a, {Ramp(i, IntImm(1), 8)});
  EXPECT_EQ(v->dtype, DataType(DTypeCode::kFloat, 32, 8));
  EXPECT_EQ(LT(i, IntImm(3))->dtype, DataType::Bool());
  EXPECT_EQ(Cast(kIndexType, i).get(), i.get());
  EXPECT_EQ(ReduceIdentity(ReduceKind::kMax, DataType::Int(8))->int_value, -128);
  EXPECT_EQ(ReduceIdentity(ReduceKind::kMin, DataType::UInt(8))->int_value, 255);
}

TEST(TirTest, SeqFlattensAndDropsNoOps) {
  Buffer a = MakeBuffer("A", DataType::Float(32), {IntImm(4)});
  Stmt s1 = Store(a, FloatImm(1.0), {IntImm(0)});
  Stmt s2 = Store(a, FloatImm(2.0), {IntImm(1)});
  Stmt seq = Seq({NoOp(), Seq({s1, s2}), NoOp(), s1});
  ASSERT_EQ(seq->kind, StmtKind::kSeq);
  EXPECT_EQ(seq->body.size(), 3u);
  EXPECT_EQ(Seq({NoOp(), s1}).get(), s1.get());
  EXPECT_TRUE(IsNoOp(Seq({})));
}

TEST(TirTest, SubstituteAndDeepEqual) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  PrimExpr e = Add(Mul(i, IntImm(4)), j);
  PrimExpr r = Substitute(e, {{i.get(), IntImm(2)}});
  EXPECT_TRUE(ExprDeepEqual(r, Add(Mul(IntImm(2), IntImm(4)), j)));
  EXPECT_FALSE(ExprDeepEqual(r, e));
  // Untouched subtrees keep their identity.
  PrimExpr same = Substitute(e, {{MakeVar("k").get(), IntImm(0)}});
  EXPECT_EQ(same.get(), e.get());
  EXPECT_TRUE(UsesVar(e, [&](const ExprNode* v) { return v == j.get(); }));
  EXPECT_FALSE(UsesVar(r, [&](const ExprNode* v) { return v == i.get(); }));
}

TEST(TirTest, PrinterDisambiguatesNamesAndShowsLoops) {
  Var i1 = MakeVar("i");
  Var i2 = MakeVar("i");
  Buffer a = MakeBuffer("A", DataType::Float(32), {IntImm(4), IntImm(8)});
  Stmt body = Store(a, Add(Load(a, {i1, i2}), FloatImm(1.0)), {i1, i2});
  Stmt loop = For(i1, IntImm(0), IntImm(4), ForKind::kParallel,
                  For(i2, IntImm(0), IntImm(8), ForKind::kSerial, body));
  PrimFunc f = MakePrimFunc("inc", {a}, loop, {{"target", "llvm"}});
  std::string text = ToText(f);
  EXPECT_NE(text.find("primfunc inc(A: float32[4, 8])"), std::string::npos) << text;
  EXPECT_NE(text.find("parallel (i, 0, 4) {"), std::string::npos) << text;
  EXPECT_NE(text.find("for (i_1, 0, 8) {"), std::string::npos) << text;
  EXPECT_NE(text.find("A[i, i_1] = (A[i, i_1] + 1f)"), std::string::npos) << text;
  EXPECT_EQ(ToText(FloorMod(i1, IntImm(3))), "floormod(i, 3)");
}

}  // namespace
}  // namespace kiln::tir
