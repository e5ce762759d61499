// File: lowering/passes/remove_no_op_test.cc
#include "lowering/passes/remove_no_op.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir_printer.h"
#include "lowering/passes/tir_eval.h"

namespace kiln::tir::transform {
namespace {

using ::testing::HasSubstr;

const DataType kF32 = DataType::Float(32);

TEST(RemoveNoOpTest, RemovesSelfCopiesEmptyLoopsAndPureEvaluates) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(16)});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = Seq({
      For(i, IntImm(0), IntImm(16), ForKind::kSerial, Store(a, Load(a, {i}), {i})),
      For(j, IntImm(0), IntImm(4), ForKind::kParallel, Evaluate(Add(Load(a, {j}), FloatImm(1)))),
      AttrStmt(nullptr, "pragma_x", IntImm(1), NoOp()),
  });
  absl::StatusOr<PrimFunc> g = RemoveNoOp(MakePrimFunc("f", {a}, body));
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(IsNoOp((*g)->body)) << ToText(*g);
}

TEST(RemoveNoOpTest, ResolvesConstantConditions) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4)});
  Stmt s1 = Store(a, FloatImm(1), {IntImm(0)});
  Stmt s2 = Store(a, FloatImm(2), {IntImm(1)});
  EXPECT_EQ(RemoveNoOpStmt(IfThenElse(BoolImm(true), s1, s2)).get(), s1.get());
  EXPECT_EQ(RemoveNoOpStmt(IfThenElse(BoolImm(false), s1, s2)).get(), s2.get());
  EXPECT_TRUE(IsNoOp(RemoveNoOpStmt(IfThenElse(BoolImm(false), s1))));
  EXPECT_EQ(RemoveNoOpStmt(IfThenElse(Call(DataType::Bool(), "likely", {BoolImm(true)}), s1)).get(),
            s1.get());
  // Empty then-branch: the condition is negated.
  Var x = MakeVar("x");
  Stmt r = RemoveNoOpStmt(IfThenElse(LT(x, IntImm(2)), NoOp(), s2));
  EXPECT_EQ(ToText(r), "if (!(x < 2)) {\n  A[1] = 2f\n}\n");
}

TEST(RemoveNoOpTest, KeepsEffects) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4)});
  Var i = MakeVar("i");
  PrimExpr call = Call(DataType::Int(32), "print_it", {IntImm(1)}, CallEffect::kOpaque);
  Stmt s = Seq({Evaluate(call), AssertStmt(LT(IntImm(1), IntImm(2)), "msg", NoOp()),
                For(i, IntImm(0), IntImm(4), ForKind::kSerial, Store(a, Load(a, {i + 1}), {i}))});
  Stmt r = RemoveNoOpStmt(s);
  EXPECT_EQ(r.get(), s.get());
  // A loop with an effectful extent keeps the effect.
  Stmt loop = For(i, IntImm(0), Cast(kIndexType, call), ForKind::kSerial, NoOp());
  EXPECT_THAT(ToText(RemoveNoOpStmt(loop)), HasSubstr("print_it"));
}

TEST(RemoveNoOpTest, PreservesResults) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(8)});
  Var i = MakeVar("i");
  Stmt body = For(
      i, IntImm(0), IntImm(8), ForKind::kSerial,
      Seq({Store(a, Load(a, {i}), {i}),
           IfThenElse(LT(i, IntImm(4)), Store(a, Mul(Load(a, {i}), FloatImm(2)), {i}), NoOp()),
           For(MakeVar("k"), IntImm(0), IntImm(0), ForKind::kSerial, Store(a, FloatImm(0), {i}))}));
  PrimFunc f = MakePrimFunc("f", {a}, body);
  absl::StatusOr<PrimFunc> g = RemoveNoOp(f);
  ASSERT_TRUE(g.ok());
  EXPECT_THAT(ToText(*g), ::testing::Not(HasSubstr("A[i] = A[i]")));
  EXPECT_TRUE(testing::ExpectSameResults(f, *g).ok());
}

}  // namespace
}  // namespace kiln::tir::transform
