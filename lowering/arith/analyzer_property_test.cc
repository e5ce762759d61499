// File: lowering/arith/analyzer_property_test.cc — random integer expressions
// over three bound variables, checked at every point of their (small) domain
// with a tiny evaluator written here:
//   - Simplify(e) has the value of e everywhere, and Simplify is a fixpoint;
//   - GetConstIntBound(e) contains every value, GetModularSet(e) every residue;
//   - CanProve(c) only for conditions true everywhere.
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"
#include "lowering/arith/analyzer.h"

namespace kiln::arith {
namespace {

using namespace kiln::tir;  // NOLINT

// ---- The evaluator ------------------------------------------------------------

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

using Env = std::unordered_map<const ExprNode*, int64_t>;

// Integer and boolean expressions (bools as 0/1); `ok` turns false on division
// by zero (the generator avoids it; this is a guard).
int64_t Eval(const PrimExpr& e, Env* env, bool* ok) {
  const ExprNode& n = *e;
  auto arg = [&](size_t i) { return Eval(n.args[i], env, ok); };
  switch (n.kind) {
    case ExprKind::kIntImm: return n.int_value;
    case ExprKind::kVar: {
      auto it = env->find(&n);
      if (it == env->end()) {
        *ok = false;
        return 0;
      }
      return it->second;
    }
    case ExprKind::kAdd: return arg(0) + arg(1);
    case ExprKind::kSub: return arg(0) - arg(1);
    case ExprKind::kMul: return arg(0) * arg(1);
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: {
      int64_t a = arg(0), b = arg(1);
      if (b == 0) {
        *ok = false;
        return 0;
      }
      if (n.kind == ExprKind::kDiv) return a / b;
      if (n.kind == ExprKind::kMod) return a % b;
      if (n.kind == ExprKind::kFloorDiv) return FloorDiv(a, b);
      return FloorMod(a, b);
    }
    case ExprKind::kMin: return std::min(arg(0), arg(1));
    case ExprKind::kMax: return std::max(arg(0), arg(1));
    case ExprKind::kEQ: return arg(0) == arg(1);
    case ExprKind::kNE: return arg(0) != arg(1);
    case ExprKind::kLT: return arg(0) < arg(1);
    case ExprKind::kLE: return arg(0) <= arg(1);
    case ExprKind::kGT: return arg(0) > arg(1);
    case ExprKind::kGE: return arg(0) >= arg(1);
    case ExprKind::kAnd: return (arg(0) != 0) && (arg(1) != 0);
    case ExprKind::kOr: return (arg(0) != 0) || (arg(1) != 0);
    case ExprKind::kNot: return arg(0) == 0;
    case ExprKind::kSelect: return arg(0) != 0 ? arg(1) : arg(2);
    case ExprKind::kCast: return n.dtype.is_bool() ? arg(0) != 0 : arg(0);
    case ExprKind::kLet: {
      int64_t v = arg(1);
      const ExprNode* var = n.args[0].get();
      auto it = env->find(var);
      bool had = it != env->end();
      int64_t old = had ? it->second : 0;
      (*env)[var] = v;
      int64_t r = arg(2);
      if (had) {
        (*env)[var] = old;
      } else {
        env->erase(var);
      }
      return r;
    }
    default:
      *ok = false;
      return 0;
  }
}

// ---- The generator ---------------------------------------------------------------

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  int64_t Const(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(rng_() % (hi - lo + 1)); }

  PrimExpr Int(int depth, const std::vector<Var>& vars) {
    if (depth == 0 || Pick(5) == 0) {
      if (Pick(3) != 0) return vars[static_cast<size_t>(Pick(static_cast<int>(vars.size())))];
      return IntImm(Const(-6, 12));
    }
    static const int64_t kDivisors[] = {1, 2, 3, 4, 8, 16, -3, -4};
    PrimExpr a = Int(depth - 1, vars);
    switch (Pick(13)) {
      case 0:
      case 1: return Add(a, Int(depth - 1, vars));
      case 2: return Sub(a, Int(depth - 1, vars));
      case 3: return Mul(a, IntImm(Const(-4, 16)));
      case 4: return Pick(3) == 0 ? Mul(a, Int(depth - 1, vars)) : Mul(IntImm(Const(1, 16)), a);
      case 5: return tir::FloorDiv(a, IntImm(kDivisors[Pick(8)]));
      case 6: return tir::FloorMod(a, IntImm(kDivisors[Pick(8)]));
      case 7: return Pick(2) ? Div(a, IntImm(kDivisors[Pick(8)])) : Mod(a, IntImm(kDivisors[Pick(8)]));
      case 8: {  // a divisor that is never zero: c + 1 with c in [0, 4)
        PrimExpr d = Add(vars[2], IntImm(1));
        return Pick(2) ? tir::FloorDiv(a, d) : tir::FloorMod(a, d);
      }
      case 9: return Min(a, Int(depth - 1, vars));
      case 10: return Max(a, Int(depth - 1, vars));
      case 11: return Select(Bool(depth - 1, vars), a, Int(depth - 1, vars));
      default: {
        Var v = MakeVar("t" + std::to_string(next_++));
        std::vector<Var> inner = vars;
        inner.push_back(v);
        return Let(v, a, Int(depth - 1, inner));
      }
    }
  }

  PrimExpr Bool(int depth, const std::vector<Var>& vars) {
    if (depth == 0 || Pick(4) == 0) {
      if (Pick(8) == 0) return BoolImm(Pick(2) == 0);
      return Compare(depth, vars);
    }
    switch (Pick(4)) {
      case 0: return And(Bool(depth - 1, vars), Bool(depth - 1, vars));
      case 1: return Or(Bool(depth - 1, vars), Bool(depth - 1, vars));
      case 2: return Not(Bool(depth - 1, vars));
      default: return Compare(depth, vars);
    }
  }

  PrimExpr Compare(int depth, const std::vector<Var>& vars) {
    PrimExpr a = Int(depth > 0 ? depth - 1 : 0, vars);
    PrimExpr b = Pick(2) ? IntImm(Const(-4, 20)) : Int(depth > 0 ? depth - 1 : 0, vars);
    static const ExprKind kOps[] = {ExprKind::kEQ, ExprKind::kNE, ExprKind::kLT,
                                    ExprKind::kLE, ExprKind::kGT, ExprKind::kGE};
    return Binary(kOps[Pick(6)], a, b);
  }

 private:
  std::mt19937_64 rng_;
  int next_ = 0;
};

// ---- The properties ---------------------------------------------------------------------

class PropertyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ana.Bind(a, Range{IntImm(0), IntImm(8)});    // a in [0, 8)
    ana.Bind(b, Range{IntImm(-3), IntImm(8)});   // b in [-3, 5)
    ana.Bind(c, Range{IntImm(0), IntImm(4)});    // c in [0, 4)
  }

  // Calls f(env) at every point of the domain.
  template <typename F>
  void ForAll(F f) {
    Env env;
    for (int64_t x = 0; x < 8; ++x) {
      for (int64_t y = -3; y < 5; ++y) {
        for (int64_t z = 0; z < 4; ++z) {
          env[a.get()] = x;
          env[b.get()] = y;
          env[c.get()] = z;
          f(&env);
        }
      }
    }
  }

  Analyzer ana;
  Var a = MakeVar("a");
  Var b = MakeVar("b");
  Var c = MakeVar("c");
  std::vector<Var> vars = {a, b, c};
};

TEST_F(PropertyTest, SimplifyPreservesValuesOfIntegerExpressions) {
  Gen gen(12345);
  int failures = 0, nonfix = 0, changed = 0;
  for (int iter = 0; iter < 3000 && failures < 5; ++iter) {
    PrimExpr e = gen.Int(1 + iter % 5, vars);
    PrimExpr s = ana.Simplify(e);
    if (!ExprDeepEqual(s, e)) ++changed;
    ConstIntBound bound = ana.GetConstIntBound(e);
    ModularSet mod = ana.GetModularSet(e);
    bool bad = false;
    std::string why;
    ForAll([&](Env* env) {
      if (bad) return;
      bool ok1 = true, ok2 = true;
      int64_t v = Eval(e, env, &ok1);
      int64_t w = Eval(s, env, &ok2);
      if (!ok1) return;  // division by zero in the input: nothing to compare
      if (!ok2 || v != w) {
        bad = true;
        why = "value " + std::to_string(v) + " became " + std::to_string(w);
      } else if (v < bound.min_value || v > bound.max_value) {
        bad = true;
        why = "value " + std::to_string(v) + " outside the bound [" + std::to_string(bound.min_value) +
              ", " + std::to_string(bound.max_value) + "]";
      } else if (mod.coeff == 0 ? v != mod.base : FloorMod(v - mod.base, mod.coeff) != 0) {
        bad = true;
        why = "value " + std::to_string(v) + " not in modular set " + std::to_string(mod.coeff) +
              "k + " + std::to_string(mod.base);
      }
      if (bad) {
        why += " at a=" + std::to_string(env->at(a.get())) + " b=" + std::to_string(env->at(b.get())) +
               " c=" + std::to_string(env->at(c.get()));
      }
    });
    if (bad) {
      ++failures;
      ADD_FAILURE() << why << "\n  input:      " << ToText(e) << "\n  simplified: " << ToText(s);
    }
    PrimExpr s2 = ana.Simplify(s);
    if (!ExprDeepEqual(s, s2)) {
      ++nonfix;
      if (nonfix <= 5) {
        ADD_FAILURE() << "not a fixpoint:\n  once:  " << ToText(s) << "\n  twice: " << ToText(s2);
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(nonfix, 0);
  EXPECT_GT(changed, 1000);  // the simplifier does something on most inputs
}

TEST_F(PropertyTest, SimplifyAndCanProveAreSoundOnConditions) {
  Gen gen(777);
  int failures = 0, proved = 0;
  for (int iter = 0; iter < 3000 && failures < 5; ++iter) {
    PrimExpr e = gen.Bool(1 + iter % 4, vars);
    PrimExpr s = ana.Simplify(e);
    bool provable = ana.CanProve(e);
    bool refutable = ana.CanProve(Not(e));
    bool bad = false;
    std::string why;
    bool all_true = true;
    ForAll([&](Env* env) {
      if (bad) return;
      bool ok1 = true, ok2 = true;
      int64_t v = Eval(e, env, &ok1);
      int64_t w = Eval(s, env, &ok2);
      if (!ok1) return;
      all_true &= v != 0;
      if (!ok2 || (v != 0) != (w != 0)) {
        bad = true;
        why = "value changed";
      } else if ((provable && v == 0) || (refutable && v != 0)) {
        bad = true;
        why = provable ? "proved but false" : "refuted but true";
      }
      if (bad) {
        why += " at a=" + std::to_string(env->at(a.get())) + " b=" + std::to_string(env->at(b.get())) +
               " c=" + std::to_string(env->at(c.get()));
      }
    });
    proved += provable ? 1 : 0;
    if (bad) {
      ++failures;
      ADD_FAILURE() << why << "\n  input:      " << ToText(e) << "\n  simplified: " << ToText(s);
    }
    (void)all_true;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(proved, 100);
}

TEST_F(PropertyTest, ConditionsInsideConstraintScopes) {
  // Under `cond`, simplification may use cond: values must agree wherever cond holds.
  Gen gen(4242);
  int failures = 0;
  for (int iter = 0; iter < 1500 && failures < 5; ++iter) {
    PrimExpr cond = gen.Compare(1 + iter % 3, vars);
    PrimExpr e = gen.Int(1 + iter % 4, vars);
    PrimExpr s;
    bool provable = false;
    PrimExpr probe = gen.Compare(1 + iter % 2, vars);
    {
      auto scope = ana.EnterConstraint(cond);
      s = ana.Simplify(e);
      provable = ana.CanProve(probe);
    }
    bool bad = false;
    ForAll([&](Env* env) {
      bool ok = true;
      if (bad || Eval(cond, env, &ok) == 0 || !ok) return;
      bool ok1 = true, ok2 = true, ok3 = true;
      int64_t v = Eval(e, env, &ok1);
      int64_t w = Eval(s, env, &ok2);
      if (ok1 && (!ok2 || v != w)) bad = true;
      if (provable && Eval(probe, env, &ok3) == 0 && ok3) bad = true;
    });
    if (bad) {
      ++failures;
      ADD_FAILURE() << "under " << ToText(cond) << "\n  input:      " << ToText(e)
                    << "\n  simplified: " << ToText(s) << "\n  probe " << ToText(probe)
                    << (provable ? " proved" : "");
    }
  }
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace kiln::arith
