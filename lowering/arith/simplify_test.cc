// File: lowering/arith/simplify_test.cc — Analyzer::Simplify on concrete
// cases. Inputs and expected results are loop-IR text (ir/tir_parser.h); the
// expected results are derived by hand from the math and the normal form
// documented in README.md (terms by decreasing |coefficient|, positive terms
// first, constant last; comparisons as `d < 0` moved to the side where the
// constant is positive).
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_parser.h"
#include "ir/tir_printer.h"
#include "lowering/arith/analyzer.h"

namespace kiln::arith {
namespace {

using namespace kiln::tir;  // NOLINT

class SimplifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ana.Bind(i, Range{IntImm(0), IntImm(16)});
    ana.Bind(j, Range{IntImm(0), IntImm(16)});
    ana.Bind(k, Range{IntImm(0), IntImm(4)});
  }

  PrimExpr P(const std::string& text) {
    absl::StatusOr<PrimExpr> e = ParsePrimExpr(text, {i, j, k, n, m, x, y, a, d}, {A, F});
    EXPECT_TRUE(e.ok()) << e.status() << " in " << text;
    return e.ok() ? *e : IntImm(0);
  }
  // Simplify(input) is structurally equal to `expected` (shown as text).
  void Check(const std::string& input, const std::string& expected) {
    PrimExpr got = ana.Simplify(P(input));
    PrimExpr want = P(expected);
    EXPECT_TRUE(ExprDeepEqual(got, want))
        << "Simplify(" << input << ")\n  got:      " << ToText(got) << "\n  expected: " << ToText(want);
  }

  // For results with a let (a new variable) or a NaN (not equal to itself).
  void CheckText(const std::string& input, const std::string& expected) {
    EXPECT_EQ(ToText(ana.Simplify(P(input))), ToText(P(expected))) << "Simplify(" << input << ")";
  }

  Analyzer ana;
  Var i = MakeVar("i");  // [0, 16)
  Var j = MakeVar("j");  // [0, 16)
  Var k = MakeVar("k");  // [0, 4)
  Var n = MakeVar("n");  // unbounded
  Var m = MakeVar("m");  // unbounded
  Var x = MakeVar("x", DataType::Float(32));
  Var y = MakeVar("y", DataType::Float(32));
  Var a = MakeVar("a", DataType::Int(32));
  Var d = MakeVar("d", DataType::Float(64));
  Buffer A = MakeBuffer("A", DataType::Float(32), {IntImm(256)});
  Buffer F = MakeBuffer("F", DataType::Float(32), {IntImm(16), IntImm(16)});
};

TEST_F(SimplifyTest, LinearCanonicalForm) {
  Check("(i + 1) * 4 - i * 4", "4");
  Check("i + j - i", "j");
  Check("n - n", "0");
  Check("j + i * 16", "i * 16 + j");
  Check("(i * 2 + 3) * 4 + 1", "i * 8 + 13");
  Check("n * 2 + n", "n * 3");
  Check("0 - n", "n * -1");
  Check("5 - n + 2", "7 - n");
  Check("n - m - 3", "n - m - 3");
  Check("m + n", "m + n");
  Check("n + m", "m + n");
  Check("n * m + m * n", "m * n * 2");
  Check("(n + 1) * (n + 1)", "(n + 1) * (n + 1)");
  Check("(n + 1) * 2 - (2 + n * 2)", "0");
  Check("a * 2_int32 + a", "a * 3_int32");  // int32 is index-like too
}

TEST_F(SimplifyTest, FloorDivAndFloorMod) {
  Check("floordiv(i * 16 + j, 16)", "i");
  Check("floormod(i * 16 + j, 16)", "j");
  Check("floordiv(i * 16 + n, 16)", "i + floordiv(n, 16)");
  Check("floormod(i * 16 + n, 16)", "floormod(n, 16)");
  Check("floordiv(i * 16 + j + 32, 16)", "i + 2");
  Check("floordiv(i * 16 - 1, 16)", "i - 1");
  Check("floormod(i * 16 - 1, 16)", "15");
  Check("floordiv(floordiv(n, 4), 8)", "floordiv(n, 32)");
  Check("floormod(floormod(n, 16), 4)", "floormod(n, 4)");
  Check("floordiv(n, 4) * 4 + floormod(n, 4)", "n");
  Check("floormod(n * 6 + 3, 3)", "0");
  Check("floormod(n * 17 + 1, 16)", "floormod(n + 1, 16)");
  Check("floormod(k, 8)", "k");
  Check("floordiv(k, 8)", "0");
  Check("floordiv(k + 4, 4)", "1");
  Check("floordiv(n, 1)", "n");
  Check("floormod(n, 1)", "0");
  Check("floordiv(7, 2)", "3");
  Check("floordiv(-7, 2)", "-4");
  Check("floormod(-7, 2)", "1");
  // floor((4i + 2) / 8) = floor((2i + 1) / 4) = floor(i / 2).
  Check("floordiv(i * 4 + 2, 8)", "floordiv(i, 2)");
  Check("floordiv(n, n)", "1");
  Check("floormod(n, n)", "0");
  Check("floordiv(n, 0)", "floordiv(n, 0)");  // undefined: left alone
  {
    auto s = ana.EnterConstraint(P("m > 4"));
    Check("floordiv(k, m)", "0");  // 0 <= k < 4 < m
    Check("floormod(k, m)", "k");
  }
  Check("floordiv(k, m)", "floordiv(k, m)");
}

// A flattened index split again at a multiple of one of its strides (a
// reshape / transpose / reshape channel shuffle): the terms below the
// stride stay inside one multiple of it.
TEST_F(SimplifyTest, FloorDivAndModSplitAtAStride) {
  // 64 * i + 4 * k + 1 with 4 * k + 1 <= 13 < 64: floordiv(i, 2).
  Check("floordiv(i * 64 + k * 4 + 1, 128)", "floordiv(i, 2)");
  Check("floormod(i * 64 + k * 4 + 1, 128)", "floormod(i, 2) * 64 + k * 4 + 1");
  // j * 4 + k reaches 63 < 64; with n the split is not provable: unchanged.
  Check("floordiv(i * 64 + j * 4 + k, 192)", "floordiv(i, 3)");
  Check("floordiv(i * 64 + n, 128)", "floordiv(i * 64 + n, 128)");
  // The part below the stride spans two multiples of it: only the common
  // factor 8 comes out.
  Check("floordiv(i * 64 + j * 8, 128)", "floordiv(i * 8 + j, 16)");
  // A constant that carries into the next multiple: floordiv(i + 1, 2).
  Check("floordiv(i * 64 + k + 64, 128)", "floordiv(i + 1, 2)");
  Check("floormod(i * 64 + k + 64, 128)", "floormod(i + 1, 2) * 64 + k");
}

TEST_F(SimplifyTest, TruncatingDivisionOfNonNegativeOperands) {
  Check("(i * 16 + j) / 16", "i");
  Check("(i * 16 + j) % 16", "j");
  Check("i / 4", "i / 4");                // nothing better: stays truncating
  Check("n / 4", "n / 4");                // n may be negative
  Check("(n * 4 + 1) / 4", "(n * 4 + 1) / 4");
  Check("n / 1", "n");
  Check("n % 1", "0");
  Check("7 / 2", "3");
  Check("-7 / 2", "-3");                  // C semantics
  Check("-7 % 2", "-1");
  Check("7 / 0", "7 / 0");
}

TEST_F(SimplifyTest, MinMaxDecidedByBounds) {
  Check("min(i, 16)", "i");
  Check("max(i, 16)", "16");
  Check("max(i, -1)", "i");
  Check("min(i, j)", "min(i, j)");
  Check("min(n + 1, n)", "n");
  Check("max(n + 1, n)", "n + 1");
  Check("min(n, n)", "n");
  Check("min(min(n, 8), 4)", "min(n, 4)");
  Check("max(max(n, 8), 4)", "max(n, 8)");
  Check("min(3, 5)", "3");
  Check("max(i * 2, i + 15)", "i + 15");  // i + 15 - 2i = 15 - i > 0
}

TEST_F(SimplifyTest, ComparisonsAreDecidedOrNormalized) {
  Check("i < 16", "true");
  Check("i >= 0", "true");
  Check("i < 8", "i < 8");
  Check("i * 16 + j < 256", "true");
  Check("i + j < 31", "true");
  Check("i + j < 30", "i + j < 30");
  Check("n + 1 < m + 1", "n < m");
  Check("m > n", "n < m");
  Check("n <= 5", "n < 6");
  Check("5 <= n", "n > 4");
  Check("n <= m", "n < m + 1");
  Check("n + 2 < m", "n + 2 < m");
  Check("n * 2 < 7", "n < 4");
  Check("n * 2 == 7", "false");
  Check("n * 2 != 7", "true");
  Check("n * 2 == 8", "n == 4");
  Check("n == m + 1", "m + 1 == n");
  Check("3 == 3", "true");
  Check("3 < 2", "false");
  Check("n == n", "true");
  Check("floormod(n, 4) < 4", "true");
  Check("floormod(n, 4) == 4", "false");
}

TEST_F(SimplifyTest, BooleanAlgebra) {
  Check("!(n < 5)", "n > 4");
  Check("!!(n < 5)", "n < 5");
  Check("!true", "false");
  Check("true && n < 5", "n < 5");
  Check("false && n < 5", "false");
  Check("n < 5 || true", "true");
  Check("n < 5 || false", "n < 5");
  Check("n < 5 && n < 5", "n < 5");
  Check("n < 5 && n < 3", "n < 3");
  Check("n < 5 || n < 3", "n < 5");
  Check("n < 5 && n >= 5", "false");
  Check("n < 5 || 5 <= n", "true");
  Check("n < 3 && 4 < n", "false");
  Check("n < 3 && i < 16", "n < 3");
  // Float comparisons are not negated (NaN): !(x < y) stays.
  Check("!(x < y)", "!(x < y)");
  Check("x < y && !(x < y)", "false");
}

TEST_F(SimplifyTest, SelectAndIfThenElse) {
  Check("select(i < 16, n, m)", "n");
  Check("select(i >= 16, n, m)", "m");
  Check("select(n < 4, m, m)", "m");
  // Each branch is simplified knowing the condition.
  Check("select(n < 4, min(n, 4), 4)", "select(n < 4, n, 4)");
  Check("select(n < 4, true, false)", "n < 4");
  Check("select(n < 4, false, true)", "n > 3");
  // ... except a side that reads memory: a Select evaluates both sides, so
  // the clamp that keeps the load in bounds when n >= 4 stays.
  Check("select(n < 4, A[min(n, 3)], 0f)", "select(n < 4, A[min(n, 3)], 0f)");
  Check("select(n < 4, 0f, A[max(n, 4)])", "select(n < 4, 0f, A[max(n, 4)])");
  Check("select(n < 4, A[min(min(n, 3), 5)], 0f)", "select(n < 4, A[min(n, 3)], 0f)");
  Check("if_then_else(i < 16, A[i], 0f)", "A[i]");
  Check("if_then_else(n < 4, A[min(n, 4)], 0f)", "if_then_else(n < 4, A[n], 0f)");
}

TEST_F(SimplifyTest, Casts) {
  Check("int32(5)", "5_int32");
  Check("float32(3)", "3f");
  Check("float64(3)", "3_float64");
  Check("int8(300)", "44_int8");
  Check("uint8(-1)", "255_uint8");
  Check("int32(2.7f)", "2_int32");
  Check("int32(-2.7f)", "-2_int32");
  Check("bool(2)", "true");
  Check("int32(int64(a))", "a");             // widening then back
  Check("int64(int32(n))", "int64(int32(n))");  // narrowing: may truncate
  PrimExpr f = ana.Simplify(P("float32(0.1_float64)"));
  ASSERT_TRUE(IsConstFloat(f));
  EXPECT_EQ(f->float_value, static_cast<double>(static_cast<float>(0.1)));
}

TEST_F(SimplifyTest, FloatsKeepIeeeSemantics) {
  Check("x * 1f", "x");
  Check("1f * x", "x");
  Check("x / 1f", "x");
  Check("x * 0f", "x * 0f");      // NaN * 0 is NaN, -1 * 0 is -0
  Check("x + 0f", "x + 0f");      // -0 + 0 is +0
  Check("x - x", "x - x");        // inf - inf is NaN
  Check("(x + 1f) + 2f", "(x + 1f) + 2f");  // no reassociation
  Check("1.5f + 2.25f", "3.75f");
  CheckText("min(1f, nanf)", "min(1f, nanf)");
  Check("1e38f * 10f", "inff");   // float32 overflows where double would not
  Check("1f / 0f", "inff");
  PrimExpr s = ana.Simplify(P("0.1f + 0.2f"));
  ASSERT_TRUE(IsConstFloat(s));
  EXPECT_EQ(s->float_value, static_cast<double>(0.1f + 0.2f));  // float arithmetic
  PrimExpr s64 = ana.Simplify(P("0.1_float64 + 0.2_float64"));
  ASSERT_TRUE(IsConstFloat(s64));
  EXPECT_EQ(s64->float_value, 0.1 + 0.2);
  Check("x < 2f && 1f < 2f", "x < 2f");
}

TEST_F(SimplifyTest, VectorsOfRampsAndBroadcasts) {
  Check("broadcast(n, 4) + broadcast(2, 4)", "broadcast(n + 2, 4)");
  Check("ramp(n, 1, 4) + broadcast(2, 4)", "ramp(n + 2, 1, 4)");
  Check("broadcast(2, 4) + ramp(n, 1, 4)", "ramp(n + 2, 1, 4)");
  Check("ramp(n, 1, 4) * broadcast(2, 4)", "ramp(n * 2, 2, 4)");
  Check("ramp(n, 2, 4) - ramp(n, 1, 4)", "ramp(0, 1, 4)");
  Check("ramp(n, 1, 4) - ramp(n, 1, 4)", "broadcast(0, 4)");
  Check("ramp(i * 16, 0, 4)", "broadcast(i * 16, 4)");
  Check("floordiv(ramp(i * 16, 1, 4), broadcast(16, 4))", "broadcast(i, 4)");
  Check("floormod(ramp(i * 16 + 4, 1, 4), broadcast(16, 4))", "ramp(4, 1, 4)");
  // Crosses a block of 16: left alone.
  Check("floordiv(ramp(i * 16 + 14, 1, 4), broadcast(16, 4))",
        "floordiv(ramp(i * 16 + 14, 1, 4), broadcast(16, 4))");
  // Unbounded bases: the residue of the base (a multiple of 16, plus 3)
  // keeps the ramp inside one block of a multiple of 16.
  Check("floordiv(ramp(n * 16, 1, 16), broadcast(16384, 16))", "broadcast(floordiv(n, 1024), 16)");
  Check("floormod(ramp(n * 16 + 3, 1, 8), broadcast(4096, 8))",
        "ramp(floormod(n, 256) * 16 + 3, 1, 8)");
  // 9 + 7 lanes reaches the next multiple of 16: left alone.
  Check("floordiv(ramp(n * 16 + 9, 1, 8), broadcast(4096, 8))",
        "floordiv(ramp(n * 16 + 9, 1, 8), broadcast(4096, 8))");
  Check("broadcast(x, 4) * broadcast(2f, 4)", "broadcast(x * 2f, 4)");
  Check("F[i, ramp(j - j, 1, 4)]", "F[i, ramp(0, 1, 4)]");
}

TEST_F(SimplifyTest, LikelyKeepsItsWrapper) {
  Check("likely(i < 16)", "likely(true)");
  Check("likely(n + 1 < m + 1)", "likely(n < m)");
  EXPECT_TRUE(ana.CanProve(P("likely(i < 16)")));
  EXPECT_FALSE(ana.CanProve(P("likely(n < 4)")));
}

TEST_F(SimplifyTest, LetsAndLoads) {
  Check("(let v = 3 in v + n)", "n + 3");
  Check("(let v = n in v + 1)", "n + 1");
  CheckText("(let v = n * 2 in v + v)", "(let v = n * 2 in v * 2)");
  Check("(let v = n * 2 in m)", "m");
  Check("(let v = i * 4 in floordiv(v, 64))", "0");
  Check("A[i * 16 + j - i * 16]", "A[j]");
  Check("F[floordiv(i * 16 + j, 16), floormod(i * 16 + j, 16)]", "F[i, j]");
}

TEST_F(SimplifyTest, SymbolicLoopBounds) {
  ana.Bind(n, Range{IntImm(1), IntImm(1024)});
  ana.Bind(m, Range{IntImm(0), n});  // m < n
  Check("min(m, n)", "m");
  Check("max(m + 1, n)", "n");
  Check("m < n", "true");
  Check("m + 1 < n", "m + 1 < n");
  Check("floordiv(m, n)", "0");
  Check("floormod(m, n)", "m");
  Check("select(m < n, A[m], 0f)", "A[m]");
}

TEST_F(SimplifyTest, SimplifyIsAFixpoint) {
  for (const char* s : {"floordiv(i * 16 + n, 16)", "n * m + m * n", "floordiv(i * 4 + 2, 8) + n",
                        "select(n < 4, min(n, 4), 4)", "n <= m", "floormod(n * 17 + 1, 16)",
                        "i * 16 + j - n * 3 + floordiv(m, 4)"}) {
    PrimExpr once = ana.Simplify(P(s));
    PrimExpr twice = ana.Simplify(once);
    EXPECT_TRUE(ExprDeepEqual(once, twice)) << s << ": " << ToText(once) << " vs " << ToText(twice);
  }
}

}  // namespace
}  // namespace kiln::arith

namespace kiln::arith {
namespace {

using namespace kiln::tir;  // NOLINT

// Values at the edges of int64 must not overflow inside the analyzer (run
// under --config=ubsan); results are left unsimplified where the math would.
TEST(SimplifyEdgeTest, ExtremeConstantsDoNotOverflow) {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  Analyzer ana;
  Var n = MakeVar("n");
  Var p = MakeVar("p");
  ana.Bind(p, Range{IntImm(kMax - 10), IntImm(1)});  // p == kMax - 10
  std::vector<PrimExpr> exprs = {
      Add(IntImm(kMax), IntImm(1)),
      Sub(IntImm(kMin), IntImm(1)),
      Mul(IntImm(kMax), IntImm(2)),
      Mul(n, IntImm(kMin)),
      Sub(IntImm(0), Mul(n, IntImm(kMin))),
      Mul(Mul(n, IntImm(kMax)), IntImm(kMax)),
      FloorDiv(IntImm(kMin), IntImm(-1)),
      Div(IntImm(kMin), IntImm(-1)),
      FloorMod(IntImm(kMin), IntImm(-1)),
      Mod(IntImm(kMin), IntImm(-1)),
      FloorDiv(Add(n, IntImm(kMin)), IntImm(16)),
      FloorMod(Add(Mul(n, IntImm(kMax)), IntImm(kMin)), IntImm(kMax)),
      LT(Add(n, IntImm(kMin)), IntImm(kMax)),
      EQ(Mul(n, IntImm(kMin)), IntImm(kMin)),
      NE(n, IntImm(kMin)),
      LE(Sub(IntImm(kMin), n), n),
      GE(Mul(n, IntImm(kMax)), IntImm(kMin)),
      Min(Add(n, IntImm(kMax)), Sub(n, IntImm(kMax))),
      Max(IntImm(kMin), n),
      Add(p, IntImm(10)),
      LT(p, IntImm(kMax)),
      Cast(DataType::Int(32), IntImm(kMax)),
      Cast(DataType::Float(32), IntImm(kMin)),
      Cast(DataType::Int(64), FloatImm(1e30)),
      Cast(DataType::UInt(64), IntImm(-1)),
      Add(IntImm(kMax, DataType::Int(32)), IntImm(1, DataType::Int(32))),
      Mul(IntImm(-1, DataType::UInt(64)), IntImm(3, DataType::UInt(64))),
      Div(IntImm(-1, DataType::UInt(64)), IntImm(3, DataType::UInt(64))),
  };
  for (const PrimExpr& e : exprs) {
    PrimExpr s = ana.Simplify(e);
    ASSERT_TRUE(s.defined());
    ConstIntBound b = ana.GetConstIntBound(e);
    (void)b;
    (void)ana.GetModularSet(e);
    if (e->dtype.is_bool()) (void)ana.CanProve(e);
  }
  for (const PrimExpr& e : exprs) {
    if (!e->dtype.is_bool()) continue;
    auto scope = ana.EnterConstraint(e);
    (void)ana.Simplify(Add(n, IntImm(1)));
  }
  // What can be decided still is.
  EXPECT_TRUE(ana.CanProve(LT(p, IntImm(kMax))));
  EXPECT_EQ(ana.Simplify(Div(IntImm(kMin), IntImm(-1)))->kind, ExprKind::kDiv);
  EXPECT_EQ(ana.Simplify(FloorDiv(IntImm(kMin), IntImm(-1)))->kind, ExprKind::kFloorDiv);
  EXPECT_EQ(ana.Simplify(Add(IntImm(kMax), IntImm(1)))->kind, ExprKind::kAdd);
}

}  // namespace
}  // namespace kiln::arith
