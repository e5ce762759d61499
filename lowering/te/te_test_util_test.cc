// File: lowering/te/te_test_util_test.cc — the loop-IR test interpreter itself.
#include "lowering/te/te_test_util.h"

#include <cmath>

#include "gtest/gtest.h"

namespace kiln::te::testing {
namespace {

using namespace kiln::tir;  // NOLINT: the factories read better unqualified here.

TEST(TeTestUtilTest, LoopsLetsIfsAndStores) {
  // for i in [0, 6): let j = i * 2; if (i < 4) B[i] = A[i] + j else B[i] = -1
  Var i = MakeVar("i"), j = MakeVar("j");
  Buffer a = MakeBuffer("A", DataType::Float(32), {IntImm(6)});
  Buffer b = MakeBuffer("B", DataType::Float(32), {IntImm(6)});
  Stmt body = LetStmt(j, i * 2,
                      IfThenElse(LT(i, IntImm(4)),
                                 Store(b, Add(Load(a, {i}), Cast(DataType::Float(32), j)), {i}),
                                 Store(b, FloatImm(-1.0), {i})));
  PrimFunc f = MakePrimFunc("f", {a, b}, For(i, IntImm(0), IntImm(6), ForKind::kParallel, body));
  std::vector<double> av = {1, 2, 3, 4, 5, 6}, bv(6);
  ASSERT_TRUE(RunPrimFunc(f, {&av, &bv}).ok());
  EXPECT_EQ(bv, (std::vector<double>{1, 4, 7, 10, -1, -1}));
}

TEST(TeTestUtilTest, MultiDimAndFlatIndicesAllocateAndSymbolicShapes) {
  Var n = MakeVar("n"), i = MakeVar("i"), k = MakeVar("k");
  Buffer a = MakeBuffer("A", DataType::Float(32), {n, IntImm(3)});
  Buffer out = MakeBuffer("Out", DataType::Float(32), {n});
  Buffer tmp = MakeBuffer("T", DataType::Float(32), {IntImm(1)}, "local");
  // Out[i] = sum_k A[i, k] through a local accumulator; A also read flat.
  Stmt inner = Seq({Store(tmp, FloatImm(0.0), {IntImm(0)}),
                    For(k, IntImm(0), IntImm(3), ForKind::kSerial,
                        Store(tmp, Add(Load(tmp, {IntImm(0)}), Load(a, {i, k})), {IntImm(0)})),
                    Store(out, Add(Load(tmp, {IntImm(0)}), Load(a, {Mul(i, IntImm(3))})), {i})});
  PrimFunc f = MakePrimFunc("f", {a, out},
                            For(i, IntImm(0), n, ForKind::kSerial, Allocate(tmp, inner, "local")));
  std::vector<double> av = {1, 2, 3, 4, 5, 6}, ov(2);
  ASSERT_TRUE(RunPrimFunc(f, {&av, &ov}, {{"n", 2}}).ok());
  EXPECT_EQ(ov, (std::vector<double>{7, 19}));
  // Wrong argument size, missing shape var.
  std::vector<double> small(3);
  EXPECT_FALSE(RunPrimFunc(f, {&small, &ov}, {{"n", 2}}).ok());
  EXPECT_FALSE(RunPrimFunc(f, {&av, &ov}).ok());
}

TEST(TeTestUtilTest, OutOfBoundsAndUninitializedReadsAreErrors) {
  Var i = MakeVar("i");
  Buffer a = MakeBuffer("A", DataType::Float(32), {IntImm(4)});
  PrimFunc f = MakePrimFunc("f", {a}, For(i, IntImm(0), IntImm(5), ForKind::kSerial,
                                          Store(a, FloatImm(1.0), {i})));
  std::vector<double> av(4);
  absl::Status st = RunPrimFunc(f, {&av});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("out-of-bounds store to 'A'[4]"), std::string::npos) << st;
  // An allocation starts as NaN: using it as an index is caught.
  Buffer t = MakeBuffer("T", DataType::Int(64), {IntImm(1)});
  PrimFunc g = MakePrimFunc("g", {a}, Allocate(t, Store(a, FloatImm(0.0), {Load(t, {IntImm(0)})})));
  st = RunPrimFunc(g, {&av});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("uninitialized"), std::string::npos) << st;
}

TEST(TeTestUtilTest, ArithmeticSemantics) {
  Var x = MakeVar("x");
  auto eval = [&](const PrimExpr& e) {
    absl::StatusOr<double> v = EvalScalar(e, {{"x", -7}});
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? *v : std::nan("");
  };
  EXPECT_EQ(eval(Div(x, IntImm(2))), -3);       // truncating
  EXPECT_EQ(eval(Mod(x, IntImm(2))), -1);
  EXPECT_EQ(eval(FloorDiv(x, IntImm(2))), -4);  // floor
  EXPECT_EQ(eval(FloorMod(x, IntImm(2))), 1);
  EXPECT_EQ(eval(Cast(DataType::Int(8), IntImm(200))), -56);  // wraps
  EXPECT_EQ(eval(Cast(DataType::Int(32), FloatImm(-2.7))), -2);
  EXPECT_EQ(eval(Select(GT(x, IntImm(0)), IntImm(1), IntImm(2))), 2);
  EXPECT_EQ(eval(Call(DataType::Float(32), "fabs", {FloatImm(-1.5)})), 1.5);
  EXPECT_EQ(eval(Call(DataType::Bool(), "isnan", {FloatImm(std::nan(""))})), 1);
  EXPECT_TRUE(std::isnan(eval(Max(FloatImm(std::nan("")), FloatImm(1.0)))));
  EXPECT_EQ(eval(Let(x, IntImm(3), Mul(x, x))), 9);
  // float32 rounding: 1 + 2^-30 is 1 in float32.
  EXPECT_EQ(eval(Add(FloatImm(1.0), FloatImm(std::ldexp(1.0, -30)))), 1.0);
  EXPECT_FALSE(EvalScalar(Div(IntImm(1), IntImm(0))).ok());
  EXPECT_FALSE(EvalScalar(Call(DataType::Float(32), "mystery", {})).ok());
}

TEST(TeTestUtilTest, VectorLanes) {
  Var i = MakeVar("i");
  Buffer a = MakeBuffer("A", DataType::Float(32), {IntImm(8)});
  Buffer b = MakeBuffer("B", DataType::Float(32), {IntImm(8)});
  // B[ramp(i * 4, 1, 4)] = A[ramp(i * 4, 1, 4)] * broadcast(2, 4)
  PrimExpr idx = Ramp(Mul(i, IntImm(4)), IntImm(1), 4);
  PrimFunc f = MakePrimFunc(
      "f", {a, b},
      For(i, IntImm(0), IntImm(2), ForKind::kSerial,
          Store(b, Mul(Load(a, {idx}), Broadcast(FloatImm(2.0), 4)), {idx})));
  std::vector<double> av = {0, 1, 2, 3, 4, 5, 6, 7}, bv(8);
  ASSERT_TRUE(RunPrimFunc(f, {&av, &bv}).ok());
  EXPECT_EQ(bv, (std::vector<double>{0, 2, 4, 6, 8, 10, 12, 14}));
}

}  // namespace
}  // namespace kiln::te::testing
