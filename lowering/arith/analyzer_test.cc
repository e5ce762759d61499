// File: lowering/arith/analyzer_test.cc — bounds, modular sets, proofs and
// constraint scopes. Expected values are worked out by hand from the math.
#include "lowering/arith/analyzer.h"

#include <string>

#include "gtest/gtest.h"
#include "ir/tir_parser.h"
#include "ir/tir_printer.h"

namespace kiln::arith {
namespace {

using namespace kiln::tir;  // NOLINT: tests read like the IR

constexpr int64_t kNegInf = ConstIntBound::kNegInf;
constexpr int64_t kPosInf = ConstIntBound::kPosInf;

class AnalyzerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ana.Bind(i, Range{IntImm(0), IntImm(16)});
    ana.Bind(j, Range{IntImm(0), IntImm(8)});
  }

  PrimExpr P(const std::string& text) {
    absl::StatusOr<PrimExpr> e = ParsePrimExpr(text, {i, j, k, n, m, v, w, a32, u8, c});
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? *e : IntImm(0);
  }
  std::pair<int64_t, int64_t> B(const std::string& text) {
    ConstIntBound b = ana.GetConstIntBound(P(text));
    return {b.min_value, b.max_value};
  }
  std::pair<int64_t, int64_t> M(const std::string& text) {
    ModularSet s = ana.GetModularSet(P(text));
    return {s.coeff, s.base};
  }
  bool Prove(const std::string& text) { return ana.CanProve(P(text)); }

  Analyzer ana;
  Var i = MakeVar("i");  // [0, 16)
  Var j = MakeVar("j");  // [0, 8)
  Var k = MakeVar("k");  // unbound unless a test binds it
  Var n = MakeVar("n");
  Var m = MakeVar("m");
  Var v = MakeVar("v");
  Var w = MakeVar("w");
  Var a32 = MakeVar("a", DataType::Int(32));
  Var u8 = MakeVar("u", DataType::UInt(8));
  Var c = MakeVar("c", DataType::Bool());
};

using Pair = std::pair<int64_t, int64_t>;

TEST_F(AnalyzerTest, ConstIntBoundOfArithmetic) {
  EXPECT_EQ(B("i"), Pair(0, 15));
  EXPECT_EQ(B("i * 8 + j"), Pair(0, 127));
  EXPECT_EQ(B("i - j"), Pair(-7, 15));
  EXPECT_EQ(B("i * -3 + 2"), Pair(-43, 2));
  EXPECT_EQ(B("i * j"), Pair(0, 105));
  EXPECT_EQ(B("(i - 8) * (j - 4)"), Pair(-28, 32));  // corners: -8*-4, -8*3, 7*-4, 7*3
  EXPECT_EQ(B("42"), Pair(42, 42));
  // x - x is 0 whatever x is: the bound goes through the simplifier.
  EXPECT_EQ(B("n - n"), Pair(0, 0));
}

TEST_F(AnalyzerTest, ConstIntBoundOfDivisionAndModulo) {
  EXPECT_EQ(B("floordiv(i, 4)"), Pair(0, 3));
  EXPECT_EQ(B("floordiv(i - 8, 4)"), Pair(-2, 1));
  EXPECT_EQ(B("(i - 8) / 4"), Pair(-2, 1));   // trunc(-8/4) = -2, trunc(7/4) = 1
  EXPECT_EQ(B("(i - 9) / 4"), Pair(-2, 1));   // trunc(-9/4) = -2
  EXPECT_EQ(B("floordiv(i - 9, 4)"), Pair(-3, 1));  // floor(-9/4) = -3
  EXPECT_EQ(B("floormod(i, 5)"), Pair(0, 4));
  EXPECT_EQ(B("floormod(i, 32)"), Pair(0, 15));  // i < 32: i itself
  EXPECT_EQ(B("floormod(i - 20, 8)"), Pair(0, 7));
  EXPECT_EQ(B("i % 3"), Pair(0, 2));
  EXPECT_EQ(B("(i - 8) % 3"), Pair(-2, 2));
  EXPECT_EQ(B("floordiv(n, 4)"), Pair(kNegInf, kPosInf));
  EXPECT_EQ(B("floormod(n, 4)"), Pair(0, 3));
  EXPECT_EQ(B("floordiv(i, j)"), Pair(0, 15));  // j in [0, 8) divides: 0 excluded
  EXPECT_EQ(B("floordiv(i, j - 4)"), Pair(-15, 15));  // divisor of either sign
}

TEST_F(AnalyzerTest, ConstIntBoundOfMinMaxSelectCastLet) {
  EXPECT_EQ(B("min(i, j)"), Pair(0, 7));
  EXPECT_EQ(B("max(i, 3)"), Pair(3, 15));
  EXPECT_EQ(B("max(min(i, 10), 2)"), Pair(2, 10));
  EXPECT_EQ(B("select(n < 4, j, 100)"), Pair(0, 100));
  EXPECT_EQ(B("int32(i) * 2_int32"), Pair(0, 30));
  EXPECT_EQ(B("int8(i * 100)"), Pair(-128, 127));  // may wrap: anything in int8
  EXPECT_EQ(B("int64(a)"), Pair(-2147483648LL, 2147483647LL));
  EXPECT_EQ(B("int64(u)"), Pair(0, 255));
  EXPECT_EQ(B("int64(c)"), Pair(0, 1));
  EXPECT_EQ(B("(let t = i * 2 in t + 1)"), Pair(1, 31));
  EXPECT_EQ(B("n"), Pair(kNegInf, kPosInf));
  EXPECT_EQ(B("int64(i < 3)"), Pair(0, 1));
  ConstIntBound r = ana.GetConstIntBound(Ramp(i, IntImm(2), 4));
  EXPECT_EQ(Pair(r.min_value, r.max_value), Pair(0, 21));
}

TEST_F(AnalyzerTest, BindWithSymbolicRange) {
  ana.Bind(n, Range{IntImm(1), IntImm(64)});  // n in [1, 64]
  ana.Bind(k, Range{IntImm(0), n});           // k in [0, n)
  EXPECT_EQ(B("k"), Pair(0, 63));
  EXPECT_TRUE(Prove("k < n"));
  EXPECT_TRUE(Prove("k + 1 <= n"));
  EXPECT_TRUE(Prove("n - k >= 1"));
  EXPECT_FALSE(Prove("k < n - 1"));
  EXPECT_FALSE(Prove("k < 63"));
  // Rebinding replaces the old fact.
  ana.Bind(k, Range{IntImm(4), IntImm(2)});
  EXPECT_EQ(B("k"), Pair(4, 5));
  // A range starting at a symbol.
  ana.Bind(v, Range{m, IntImm(8)});
  EXPECT_TRUE(Prove("v >= m"));
  EXPECT_TRUE(Prove("v < m + 8"));
  EXPECT_TRUE(Prove("v - m <= 7"));
  EXPECT_FALSE(Prove("v < m + 7"));
}

TEST_F(AnalyzerTest, BindToAValue) {
  ana.Bind(v, i * 4);
  EXPECT_EQ(B("v"), Pair(0, 60));
  EXPECT_TRUE(Prove("v < 64"));
  EXPECT_TRUE(Prove("v - i * 4 == 0"));
  EXPECT_EQ(ToText(ana.Simplify(P("v + 1"))), "(v + 1)");  // not copied: not a constant
  ana.Bind(w, IntImm(3));
  EXPECT_EQ(ToText(ana.Simplify(P("w * 2 + n"))), "(n + 6)");
  EXPECT_EQ(M("v + 1"), Pair(4, 1));
}

TEST_F(AnalyzerTest, ModularSets) {
  EXPECT_EQ(M("7"), Pair(0, 7));
  EXPECT_EQ(M("n"), Pair(1, 0));
  EXPECT_EQ(M("n * 4 + 2"), Pair(4, 2));
  EXPECT_EQ(M("n * 4 - 1"), Pair(4, 3));
  EXPECT_EQ(M("n * 4 + m * 6"), Pair(2, 0));
  EXPECT_EQ(M("(n * 4 + 2) * 3"), Pair(12, 6));
  EXPECT_EQ(M("(n * 2 + 1) * (m * 2 + 1)"), Pair(2, 1));  // odd * odd is odd
  EXPECT_EQ(M("floordiv(n * 8 + 4, 4)"), Pair(2, 1));
  EXPECT_EQ(M("floormod(n * 6 + 1, 4)"), Pair(2, 1));
  EXPECT_EQ(M("floormod(n * 8 + 5, 4)"), Pair(0, 1));
  EXPECT_EQ(M("min(n * 4, m * 4 + 8)"), Pair(4, 0));
  EXPECT_EQ(M("select(c, 6, 10)"), Pair(4, 2));
  EXPECT_EQ(M("(let t = n * 3 in t * 2)"), Pair(6, 0));
  EXPECT_EQ(M("i * 4 / 2"), Pair(2, 0));  // i >= 0: truncating = flooring
  EXPECT_EQ(M("int64(a) * 2"), Pair(2, 0));
}

TEST_F(AnalyzerTest, CanProve) {
  EXPECT_TRUE(Prove("i < 16"));
  EXPECT_FALSE(Prove("i < 15"));
  EXPECT_TRUE(Prove("i >= 0"));
  EXPECT_TRUE(Prove("i * 16 + j < 256"));
  EXPECT_TRUE(Prove("i * 8 + j < 128"));
  EXPECT_FALSE(Prove("i * 8 + j < 127"));
  EXPECT_TRUE(Prove("floormod(n, 4) < 4"));
  EXPECT_TRUE(Prove("i - j > -8"));
  EXPECT_TRUE(Prove("i + 1 <= 16"));
  EXPECT_TRUE(Prove("max(i, j) >= j"));
  EXPECT_TRUE(Prove("min(n, 4) <= 4"));
  EXPECT_TRUE(Prove("n == n"));
  EXPECT_TRUE(Prove("n + m == m + n"));
  EXPECT_TRUE(Prove("floordiv(n * 4 + 3, 4) == n"));
  EXPECT_TRUE(Prove("floordiv(n, 4) * 4 + floormod(n, 4) == n"));
  EXPECT_TRUE(Prove("n * 2 != 7"));  // 2n is even
  EXPECT_TRUE(Prove("i < 16 && j < 8"));
  EXPECT_FALSE(Prove("i < 16 && j < 7"));
  EXPECT_TRUE(Prove("n < 3 || n >= 3"));
  EXPECT_TRUE(Prove("n < 3 || 2 < n"));
  EXPECT_FALSE(Prove("n < 3 || 3 < n"));
  EXPECT_TRUE(Prove("likely(i < 16)"));
  EXPECT_FALSE(Prove("n < 5"));
  EXPECT_TRUE(Prove("!(i >= 16)"));
  EXPECT_TRUE(ana.CanProveGE(P("i * 2 - j"), -7));
  EXPECT_FALSE(ana.CanProveGE(P("i * 2 - j"), -6));
  EXPECT_TRUE(ana.CanProveLT(P("floormod(n, 8) + j"), 15));
  EXPECT_TRUE(ana.CanProveEqual(P("floordiv(i * 8 + j, 8)"), P("i")));
  EXPECT_TRUE(ana.CanProveEqual(P("floormod(i * 8 + j, 8)"), P("j")));
  EXPECT_TRUE(ana.CanProveEqual(P("(n + 1) * 3"), P("n * 3 + 3")));
  EXPECT_FALSE(ana.CanProveEqual(P("n"), P("m")));
  EXPECT_FALSE(ana.CanProveEqual(P("floordiv(n, 8) * 8"), P("n")));
}

TEST_F(AnalyzerTest, ConstraintScopes) {
  EXPECT_EQ(B("k"), Pair(kNegInf, kPosInf));
  {
    auto s1 = ana.EnterConstraint(P("k < 10"));
    EXPECT_EQ(B("k"), Pair(kNegInf, 9));
    {
      auto s2 = ana.EnterConstraint(P("2 <= k"));
      EXPECT_EQ(B("k"), Pair(2, 9));
      EXPECT_TRUE(Prove("k * 3 < 30"));
      EXPECT_TRUE(Prove("floordiv(k, 10) == 0"));
    }
    EXPECT_EQ(B("k"), Pair(kNegInf, 9));
    EXPECT_FALSE(Prove("k >= 2"));
  }
  EXPECT_EQ(B("k"), Pair(kNegInf, kPosInf));
  // Conjunctions, coefficients, equalities.
  {
    auto s = ana.EnterConstraint(P("k >= 0 && k * 2 < 7 && n == 5"));
    EXPECT_EQ(B("k"), Pair(0, 3));  // 2k < 7: k <= 3
    EXPECT_EQ(B("n"), Pair(5, 5));
    EXPECT_EQ(ToText(ana.Simplify(P("n * 2 + k - k"))), "10");
  }
  // A bound tightened by a symbolic one: i < m with m in [0, 4].
  ana.Bind(m, Range{IntImm(0), IntImm(5)});
  {
    auto s = ana.EnterConstraint(P("i < m"));
    EXPECT_EQ(B("i"), Pair(0, 3));
    EXPECT_TRUE(Prove("i < m"));
    EXPECT_TRUE(Prove("i + 1 <= m"));
    EXPECT_TRUE(Prove("i < 4"));
  }
  EXPECT_EQ(B("i"), Pair(0, 15));
  // The else branch of `if (k < 10)`.
  {
    auto s = ana.EnterConstraint(Not(P("k < 10")));
    EXPECT_TRUE(Prove("k > 9"));
    EXPECT_TRUE(Prove("k >= 10"));
    EXPECT_FALSE(Prove("k > 10"));
  }
  // != at the edge of a range narrows it.
  ana.Bind(v, Range{IntImm(0), IntImm(10)});
  {
    auto s = ana.EnterConstraint(P("v != 0"));
    EXPECT_EQ(B("v"), Pair(1, 9));
  }
  // Facts that are not bounds are remembered as such.
  {
    auto s = ana.EnterConstraint(P("floormod(n, 2) == 0"));
    EXPECT_TRUE(Prove("floormod(n, 2) == 0"));
    EXPECT_EQ(ToText(ana.Simplify(P("floormod(n, 2) != 0"))), "false");
    EXPECT_FALSE(Prove("floormod(n, 2) == 1 || n < 0"));
  }
  EXPECT_FALSE(Prove("floormod(n, 2) == 0"));
  // Scopes can be moved (e.g. into a vector) and still unwind once.
  {
    std::vector<Analyzer::ConstraintScope> scopes;
    scopes.push_back(ana.EnterConstraint(P("n > 100")));
    scopes.push_back(ana.EnterConstraint(P("n < 200")));
    EXPECT_EQ(B("n"), Pair(101, 199));
  }
  EXPECT_EQ(B("n"), Pair(kNegInf, kPosInf));
}

TEST_F(AnalyzerTest, TransitiveSymbolicBounds) {
  ana.Bind(n, Range{IntImm(0), IntImm(1000)});
  ana.Bind(k, Range{IntImm(0), n});        // k < n
  ana.Bind(v, Range{IntImm(0), k});        // v < k
  EXPECT_TRUE(Prove("v < n"));             // v < k < n
  EXPECT_TRUE(Prove("v + 2 <= n"));
  EXPECT_FALSE(Prove("v + 3 <= n"));
  auto s = ana.EnterConstraint(P("m <= v"));
  EXPECT_TRUE(Prove("m < n - 1"));
}

}  // namespace
}  // namespace kiln::arith
