// File: lowering/passes/verify_test.cc
#include "lowering/passes/verify.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::tir::transform {
namespace {

using ::testing::HasSubstr;

const DataType kF32 = DataType::Float(32);

TEST(VerifyTest, AcceptsWellFormedLoop) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {n});
  Buffer b = MakeBuffer("B", kF32, {n});
  Var i = MakeVar("i");
  Var t = MakeVar("t", kF32);
  Buffer tmp = MakeBuffer("tmp", kF32, {IntImm(4)});
  Stmt body =
      For(i, IntImm(0), n, ForKind::kSerial,
          LetStmt(t, Load(a, {i}),
                  Allocate(tmp, Seq({Store(tmp, t, {IntImm(0)}),
                                     Store(b, Add(Load(tmp, {IntImm(0)}), FloatImm(1)), {i})}))));
  EXPECT_TRUE(VerifyPrimFunc(MakePrimFunc("ok", {a, b}, body)).ok());
}

TEST(VerifyTest, AcceptsVectors) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(16)});
  Var i = MakeVar("i");
  PrimExpr idx = Ramp(Mul(i, IntImm(4)), IntImm(1), 4);
  Stmt body = For(
      i, IntImm(0), IntImm(4), ForKind::kSerial,
      Store(a, Select(LT(idx, Broadcast(IntImm(8), 4)), Load(a, {idx}), Broadcast(FloatImm(0), 4)),
            {idx}));
  absl::Status st = VerifyPrimFunc(MakePrimFunc("vec", {a}, body));
  EXPECT_TRUE(st.ok()) << st;
}

TEST(VerifyTest, ThreadExtentBindsTheThreadIndex) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(32)});
  Var tx = MakeVar("threadIdx.x");
  IterVar iv = MakeIterVar({IntImm(0), IntImm(32)}, tx, IterKind::kThread, "threadIdx.x");
  Stmt body = AttrStmt(iv, "thread_extent", IntImm(32), Store(a, FloatImm(1), {tx}));
  absl::Status st = VerifyPrimFunc(MakePrimFunc("gpu", {a}, body));
  EXPECT_TRUE(st.ok()) << st;
  Stmt outside = Seq({body, Store(a, FloatImm(2), {tx})});
  EXPECT_THAT(VerifyPrimFunc(MakePrimFunc("gpu", {a}, outside)).message(),
              HasSubstr("unbound variable 'threadIdx.x'"));
}

TEST(VerifyTest, UnboundVariable) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4)});
  Var i = MakeVar("i");
  absl::Status st = VerifyPrimFunc(MakePrimFunc("f", {a}, Store(a, FloatImm(1), {i})));
  EXPECT_THAT(st.message(), HasSubstr("PrimFunc 'f': unbound variable 'i'"));
}

TEST(VerifyTest, LoopVarOutOfScope) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4)});
  Var i = MakeVar("i");
  Stmt s = Seq({For(i, IntImm(0), IntImm(4), ForKind::kSerial, Store(a, FloatImm(1), {i})),
                Store(a, FloatImm(2), {i})});
  EXPECT_THAT(VerifyPrimFunc(MakePrimFunc("f", {a}, s)).message(),
              HasSubstr("unbound variable 'i'"));
}

TEST(VerifyTest, BoundTwice) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4)});
  Var i = MakeVar("i");
  Stmt s = For(i, IntImm(0), IntImm(2), ForKind::kSerial,
               For(i, IntImm(0), IntImm(2), ForKind::kSerial, Store(a, FloatImm(1), {i})));
  EXPECT_THAT(VerifyPrimFunc(MakePrimFunc("f", {a}, s)).message(), HasSubstr("bound again"));
}

TEST(VerifyTest, OperandTypesDiffer) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4)});
  Stmt s = Store(a, Add(FloatImm(1), Cast(DataType::Float(16), FloatImm(2))), {IntImm(0)});
  absl::Status st = VerifyPrimFunc(MakePrimFunc("f", {a}, s));
  EXPECT_THAT(st.message(), HasSubstr("operand types differ (float32 vs float16)"));
  EXPECT_THAT(st.message(), HasSubstr("1f + float16(2f)"));
}

TEST(VerifyTest, LanesDiffer) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(8)});
  PrimExpr idx = Ramp(IntImm(0), IntImm(1), 4);
  Stmt s = Store(a, Add(Load(a, {idx}), FloatImm(1)), {idx});
  EXPECT_THAT(VerifyPrimFunc(MakePrimFunc("f", {a}, s)).message(),
              HasSubstr("operand types differ (float32x4 vs float32)"));
}

TEST(VerifyTest, ConditionNotBool) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(8)});
  Stmt s = IfThenElse(IntImm(1), Store(a, FloatImm(1), {IntImm(0)}));
  EXPECT_THAT(VerifyPrimFunc(MakePrimFunc("f", {a}, s)).message(),
              HasSubstr("if condition 1 is not a scalar bool"));
}

TEST(VerifyTest, StoreTypeMismatch) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(8)});
  Stmt s = Store(a, IntImm(1, DataType::Int(32)), {IntImm(0)});
  EXPECT_THAT(VerifyPrimFunc(MakePrimFunc("f", {a}, s)).message(),
              HasSubstr("stored value has type int32, buffer 'A' holds float32"));
}

TEST(VerifyTest, FloatIndex) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(8)});
  Stmt s = Store(a, FloatImm(1), {FloatImm(0)});
  EXPECT_THAT(VerifyPrimFunc(MakePrimFunc("f", {a}, s)).message(), HasSubstr("not an integer"));
}

TEST(VerifyTest, ReduceLeft) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(8)});
  Var k = MakeVar("k");
  IterVar kv = MakeIterVar({IntImm(0), IntImm(8)}, k, IterKind::kReduce);
  Stmt s = Store(a, Reduce(ReduceKind::kSum, Load(a, {k}), {kv}), {IntImm(0)});
  EXPECT_THAT(VerifyPrimFunc(MakePrimFunc("f", {a}, s)).message(), HasSubstr("a Reduce is left"));
}

TEST(VerifyTest, BufferOutsideAllocation) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(8)});
  Buffer t = MakeBuffer("T", kF32, {IntImm(8)});
  Stmt s = Seq({Allocate(t, Store(t, FloatImm(1), {IntImm(0)})),
                Store(a, Load(t, {IntImm(0)}), {IntImm(0)})});
  EXPECT_THAT(VerifyPrimFunc(MakePrimFunc("f", {a}, s)).message(),
              HasSubstr("buffer 'T' is used outside its allocation"));
}

}  // namespace
}  // namespace kiln::tir::transform
