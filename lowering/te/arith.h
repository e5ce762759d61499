// File: lowering/te/arith.h
//
// The small integer arithmetic InferBound and ScheduleOps need: a canonical
// simplifier for index expressions and interval sets (TVM's IntSet) evaluated
// over loop IR expressions.
//
//   Simplify((xo * 4 + 3) + 1 - (xo * 4 - 1))   ==  5
//   EvalSet(i * 2 + 1, {i: [0, 7]})             ==  [1, 15]
//   EvalSet(floordiv(f, 8), {f: [xo*8, xo*8+7]}) == [xo, xo]
//
// Simplify keeps symbolic terms symbolic: an index expression becomes a
// linear combination of "atoms" (vars and non-linear subterms such as
// floordiv(n + 3, 4)) plus a constant. It is exact (never changes the value)
// and only used on integer expressions; anything else is returned as is.
// Interval bounds are sound over-approximations; a bound that cannot be
// expressed is left open (unbounded), and callers fall back to the full range.
#ifndef KILN_LOWERING_TE_ARITH_H_
#define KILN_LOWERING_TE_ARITH_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/tir.h"

namespace kiln::te::arith {

using tir::PrimExpr;
using tir::Range;

// Canonical form of an integer expression (see the file comment).
PrimExpr Simplify(const PrimExpr& e);

// True (and *diff set) when a - b simplifies to a constant.
bool ConstDiff(const PrimExpr& a, const PrimExpr& b, int64_t* diff);
// Provable facts (false means "could not prove", not "false").
bool ProveLT(const PrimExpr& a, const PrimExpr& b);
bool ProveLE(const PrimExpr& a, const PrimExpr& b);
bool ProveEqual(const PrimExpr& a, const PrimExpr& b);
// ceil(a / b) for b > 0: floordiv(a, b) when b provably divides a.
PrimExpr CeilDiv(const PrimExpr& a, const PrimExpr& b);
// min / max of two expressions, folded when their difference is constant.
PrimExpr MinExpr(const PrimExpr& a, const PrimExpr& b);
PrimExpr MaxExpr(const PrimExpr& a, const PrimExpr& b);

// A closed integer interval [min_value, max_value]; a null bound is open
// (-inf / +inf). Both null = every integer.
struct IntSet {
  PrimExpr min_value;
  PrimExpr max_value;

  static IntSet Everything() { return IntSet{}; }
  static IntSet Point(PrimExpr e) { return IntSet{e, e}; }
  static IntSet Interval(PrimExpr lo, PrimExpr hi) { return IntSet{std::move(lo), std::move(hi)}; }
  // [r.min, r.min + r.extent - 1].
  static IntSet FromRange(const Range& r);

  bool HasLowerBound() const { return min_value.defined(); }
  bool HasUpperBound() const { return max_value.defined(); }
  bool IsEverything() const { return !HasLowerBound() && !HasUpperBound(); }
  bool IsPoint() const;
  // True when this set is exactly the range r.
  bool MatchRange(const Range& r) const;
  // The set as a range (extent = max - min + 1); `dom` when a bound is open.
  Range CoverRange(const Range& dom) const;
};

// Var (by node identity) -> the set of values it takes.
using VarSetMap = std::unordered_map<const tir::ExprNode*, IntSet>;

// The set of values `e` takes when each var in `dom` ranges over its set
// (vars not in `dom` are fixed symbols).
IntSet EvalSet(const PrimExpr& e, const VarSetMap& dom);
// EvalSet, then the bounds themselves relaxed again (up to `rounds` times)
// while they still mention vars of `dom`: for ranges that refer to outer loops.
IntSet EvalSetRelaxed(const PrimExpr& e, const VarSetMap& dom, int rounds = 4);
// The smallest interval holding every set (empty input = Everything()).
IntSet Union(const std::vector<IntSet>& sets);

}  // namespace kiln::te::arith

#endif  // KILN_LOWERING_TE_ARITH_H_
