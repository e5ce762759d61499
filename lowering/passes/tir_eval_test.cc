// File: lowering/passes/tir_eval_test.cc
#include "lowering/passes/tir_eval.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::tir::testing {
namespace {

const DataType kF32 = DataType::Float(32);

TEST(TirEvalTest, MultiDimLoopsAndVectors) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(3), IntImm(4)});
  Buffer b = MakeBuffer("B", kF32, {IntImm(3), IntImm(4)});
  Var i = MakeVar("i");
  PrimExpr idx = Ramp(IntImm(0), IntImm(1), 4);
  Stmt body = For(i, IntImm(0), IntImm(3), ForKind::kSerial,
                  Store(b, Mul(Load(a, {Broadcast(i, 4), idx}), Broadcast(FloatImm(2), 4)),
                        {Broadcast(i, 4), idx}));
  std::vector<EvalArg> args(2);
  for (int k = 0; k < 12; ++k) args[0].data.push_back(k);
  args[1].data.assign(12, 0);
  ASSERT_TRUE(EvalPrimFunc(MakePrimFunc("f", {a, b}, body), &args).ok());
  for (int k = 0; k < 12; ++k) EXPECT_EQ(args[1].data[k], 2 * k);
}

TEST(TirEvalTest, SymbolicShapeAndFlatIndex) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {n, IntImm(2)});
  Var i = MakeVar("i");
  Stmt body = For(i, IntImm(0), Mul(n, IntImm(2)), ForKind::kSerial, Store(a, Cast(kF32, i), {i}));
  std::vector<EvalArg> args(1);
  args[0].data.assign(6, -1);
  args[0].shape = {3, 2};
  ASSERT_TRUE(EvalPrimFunc(MakePrimFunc("f", {a}, body), &args).ok());
  EXPECT_EQ(args[0].data[5], 5);
}

TEST(TirEvalTest, Float32RoundingAndReinterpret) {
  Var x = MakeVar("x", kF32);
  PrimExpr bits = Call(DataType::Int(32), "reinterpret", {x});
  auto r = EvalExpr(bits, {{x.get(), {1.0}}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0], 0x3f800000);
  auto back = EvalExpr(Call(kF32, "reinterpret", {IntImm(0x40000000, DataType::Int(32))}), {});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)[0], 2.0);
  auto sum = EvalExpr(Add(x, FloatImm(1e-8)), {{x.get(), {1.0}}});
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ((*sum)[0], 1.0);                                                // rounded to float32
  EXPECT_EQ(RoundToFloatType(1.0 + 1.0 / 2048, DataType::Float(16)), 1.0);  // tie to even
  EXPECT_EQ(RoundToFloatType(70000, DataType::Float(16)), INFINITY);
}

TEST(TirEvalTest, IntegerWrapAndFloorDiv) {
  PrimExpr big = Mul(IntImm(1 << 20, DataType::Int(32)), IntImm(1 << 12, DataType::Int(32)));
  EXPECT_EQ((*EvalExpr(big, {}))[0], 0);
  EXPECT_EQ((*EvalExpr(FloorDiv(IntImm(-7), IntImm(2)), {}))[0], -4);
  EXPECT_EQ((*EvalExpr(FloorMod(IntImm(-7), IntImm(2)), {}))[0], 1);
  EXPECT_EQ((*EvalExpr(Div(IntImm(-7), IntImm(2)), {}))[0], -3);
}

TEST(TirEvalTest, OutOfBoundsIsAnError) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4)});
  std::vector<EvalArg> args(1);
  args[0].data.assign(4, 0);
  absl::Status st = EvalPrimFunc(MakePrimFunc("f", {a}, Store(a, FloatImm(1), {IntImm(4)})), &args);
  EXPECT_THAT(st.message(), ::testing::HasSubstr("out-of-bounds store"));
}

TEST(TirEvalTest, AllocateStartsAsNaN) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(1)});
  Buffer t = MakeBuffer("T", kF32, {IntImm(2)});
  std::vector<EvalArg> args(1);
  args[0].data.assign(1, 0);
  Stmt body = Allocate(t, Store(a, Load(t, {IntImm(1)}), {IntImm(0)}));
  ASSERT_TRUE(EvalPrimFunc(MakePrimFunc("f", {a}, body), &args).ok());
  EXPECT_TRUE(std::isnan(args[0].data[0]));
}

}  // namespace
}  // namespace kiln::tir::testing
