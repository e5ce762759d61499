// File: lowering/arith/analyzer.h
//
// The integer arithmetic analyzer of the loop IR (TVM's arith::Analyzer):
// constant bounds, modular sets and simplification of index expressions,
// under facts collected from the surrounding code (loop ranges, lets, and
// conditions known to hold).
//
//   Analyzer ana;
//   ana.Bind(i, {IntImm(0), IntImm(16)});         // 0 <= i < 16
//   ana.Simplify(FloorDiv(i * 16 + j, 16))        // -> i, once j is bound to [0, 16)
//   ana.CanProve(LT(i, IntImm(16)))               // true
//   {
//     auto c = ana.EnterConstraint(LT(k, n));     // facts valid inside an `if`
//     ...
//   }                                            // dropped here
//
// Everything works on index expressions: int64 (tir::kIndexType) and int32,
// whose arithmetic is assumed not to overflow (as in C). Narrower and unsigned
// integer types are analyzed conservatively (they wrap); floats are only
// constant-folded where IEEE arithmetic gives the same bits. The analyzer
// never fails: what it cannot prove it leaves alone. What it proves and its
// limits: lowering/arith/README.md.
#ifndef KILN_LOWERING_ARITH_ANALYZER_H_
#define KILN_LOWERING_ARITH_ANALYZER_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "ir/tir.h"

namespace kiln::arith {

using tir::PrimExpr;
using tir::Range;
using tir::Var;

// [min_value, max_value]; kNegInf / kPosInf mean unbounded.
struct ConstIntBound {
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  int64_t min_value = kNegInf;
  int64_t max_value = kPosInf;
};

// Values are coeff * k + base for some integer k (coeff 0: the constant base;
// coeff 1, base 0: nothing known).
struct ModularSet {
  int64_t coeff = 1;
  int64_t base = 0;
};

class Analyzer {
 public:
  Analyzer();
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // v ranges over [r.min, r.min + r.extent). Rebinding replaces the old fact.
  void Bind(const Var& v, const Range& r);
  // v equals value (a let): simplification may substitute it.
  void Bind(const Var& v, const PrimExpr& value);

  ConstIntBound GetConstIntBound(const PrimExpr& e);
  ModularSet GetModularSet(const PrimExpr& e);

  // Rewrites `e` to a simpler equal expression: constant folding, canonical
  // linear forms (sums of var * coeff collected and ordered), floordiv/floormod
  // (and truncating div/mod when operands are provably non-negative) of linear
  // forms using bounds and modular sets, min/max/select/comparisons decided by
  // bounds, boolean algebra, cast folding, Ramp/Broadcast arithmetic.
  PrimExpr Simplify(const PrimExpr& e);

  // True only when `cond` (a bool expression) holds for all values allowed by
  // the current facts.
  bool CanProve(const PrimExpr& cond);
  bool CanProveGE(const PrimExpr& e, int64_t v);
  bool CanProveLT(const PrimExpr& e, int64_t v);
  bool CanProveEqual(const PrimExpr& a, const PrimExpr& b);

  // Adds `cond` as a fact until the returned object is destroyed (LIFO;
  // destroying an outer scope first also drops the inner ones). Conjunctions
  // are split; integer comparisons also bound their variables (`i < n` gives
  // i <= n - 1 and n >= i + 1, and tightens i's constant bound from n's).
  class ConstraintScope {
   public:
    ConstraintScope(ConstraintScope&& o) noexcept;
    ~ConstraintScope();

   private:
    friend class Analyzer;
    ConstraintScope(Analyzer* a, size_t mark) : a_(a), mark_(mark) {}
    Analyzer* a_;
    size_t mark_;
  };
  ConstraintScope EnterConstraint(const PrimExpr& cond);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::arith

#endif  // KILN_LOWERING_ARITH_ANALYZER_H_
