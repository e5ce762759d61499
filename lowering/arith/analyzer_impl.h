// File: lowering/arith/analyzer_impl.h (internal to //lowering/arith:analyzer)
//
// The state behind Analyzer: what is known about each variable (a constant
// interval, symbolic lower/upper bounds, a let value), conditions known to hold,
// and an undo log that makes constraint scopes cheap to leave. The analyses are
// split over files:
//
//   analyzer.cc            facts, scopes, proofs (CanProve and symbolic bounds)
//   const_int_bound.cc     Bound(): interval analysis
//   modular_set.cc         Modular(): coeff * k + base
//   linear_form.cc         sums of coeff * atom + constant (canonical form)
//   rewrite_simplify.cc    Simplify(): the rewrite rules
//   canonical_simplify.cc  Simplify() of integer arithmetic through linear forms:
//                          add/sub/mul, floordiv/floormod, comparisons
#ifndef KILN_LOWERING_ARITH_ANALYZER_IMPL_H_
#define KILN_LOWERING_ARITH_ANALYZER_IMPL_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ir/tir.h"
#include "lowering/arith/analyzer.h"

namespace kiln::arith {

using tir::ExprKind;
using tir::ExprNode;

// ---- Saturating arithmetic on bounds (kNegInf / kPosInf are infinities) ----------

int64_t BoundAdd(int64_t a, int64_t b);
int64_t BoundNeg(int64_t a);
int64_t BoundMul(int64_t a, int64_t b);
// floor(a / b) (floor = true) or trunc(a / b), b != 0; infinities handled.
int64_t BoundDiv(int64_t a, int64_t b, bool floor);
ConstIntBound Everything();
ConstIntBound Point(int64_t v);
ConstIntBound Intersect(ConstIntBound a, ConstIntBound b);
ConstIntBound Union(ConstIntBound a, ConstIntBound b);
// The values of an integer type ([-2^31, 2^31-1] for int32, everything for int64).
ConstIntBound TypeBound(DataType t);
// Signed integers of at least 32 bits: arithmetic on them is assumed not to
// overflow (as in C, where signed overflow is undefined), so the canonical
// form and bound-based decisions apply. Narrower and unsigned types wrap.
bool IsIndexLike(DataType t);

// A constant of type t with value v, wrapped to t's width.
PrimExpr MakeInt(int64_t v, DataType t);
int64_t FloorDivInt(int64_t a, int64_t b);
int64_t FloorModInt(int64_t a, int64_t b);
int64_t Gcd(int64_t a, int64_t b);

// ---- Linear forms ---------------------------------------------------------------------

// sum(coeff * atom) + constant over an index-like scalar type. Atoms are
// variables or non-linear subexpressions (floordiv, loads, min, x * y, ...),
// already simplified. Terms with equal atoms (ExprDeepEqual) are merged.
struct Term {
  PrimExpr atom;
  int64_t coeff = 0;
};
struct LinearForm {
  DataType dtype;
  std::vector<Term> terms;
  int64_t constant = 0;
  bool overflow = false;  // a coefficient overflowed int64: do not use

  bool is_const() const { return terms.empty(); }
  void AddTerm(const PrimExpr& atom, int64_t coeff);
  void AddForm(const LinearForm& o, int64_t scale);
  void AddConst(int64_t c);
};

// A total order on expressions used to sort terms and commutative operands:
// kind, type, then names / values / children. Vars with the same name compare
// equal (ties keep their order of appearance).
int CompareExpr(const PrimExpr& a, const PrimExpr& b);
// Linear form of an already simplified expression (no further simplification).
LinearForm ToLinearForm(const PrimExpr& e);
// Back to an expression: terms by decreasing |coeff| (then CompareExpr),
// positive terms first, the constant last: `i*16 + j - k + 3`.
PrimExpr FromLinearForm(const LinearForm& f);
// floordiv(X, c) * (k * c) + floormod(X, c) * k -> X * k.
void MergeDivModPairs(LinearForm* f);

// ---- The analyzer's state ---------------------------------------------------------------

struct VarFacts {
  ConstIntBound bound;
  std::vector<PrimExpr> lower;  // v >= e
  std::vector<PrimExpr> upper;  // v <= e
  PrimExpr value;               // v == value (let), simplified
};

class Analyzer::Impl {
 public:
  // ---- Facts (analyzer.cc) ----
  void BindRange(const Var& v, const Range& r);
  void BindValue(const Var& v, const PrimExpr& value);
  // Scoped facts; ExitScope(mark) undoes everything done after `mark`.
  size_t Mark() const { return undo_.size(); }
  void ExitScope(size_t mark);
  void AddConstraint(const PrimExpr& cond);  // cond is simplified here
  void AddFact(const PrimExpr& simplified);  // ... or already was
  // A let inside an expression: like BindValue, undone by ExitScope.
  void PushLet(const Var& v, const PrimExpr& value);
  const VarFacts* Facts(const ExprNode* v) const;
  // cond (simplified, normalized) is one of the known facts / the negation of one.
  bool IsKnown(const PrimExpr& cond) const;
  bool HasKnownFacts() const { return !known_.empty(); }

  // ---- Analyses ----
  ConstIntBound Bound(const PrimExpr& e);    // const_int_bound.cc
  ModularSet Modular(const PrimExpr& e);     // modular_set.cc
  PrimExpr Simplify(const PrimExpr& e);      // rewrite_simplify.cc
  bool CanProve(const PrimExpr& cond);       // analyzer.cc

  // Bounds of a linear form: interval arithmetic over the atoms, then (when
  // `symbolic`) substituting variables by their symbolic bounds and let values.
  ConstIntBound LinearBound(const LinearForm& f, bool symbolic);

  // ---- canonical_simplify.cc ----
  // Linear form of `e` whose atoms are simplified.
  LinearForm Linearize(const PrimExpr& e);
  PrimExpr SimplifyArith(const PrimExpr& e);  // add/sub/mul of index-like scalars
  // See canonical_simplify.cc.
  bool SplitAtCoefficient(const LinearForm& r, int64_t divisor, int64_t* d, LinearForm* y,
                          LinearForm* z, int64_t* k);
  PrimExpr SimplifyFloorDiv(const PrimExpr& a, const PrimExpr& b, DataType t);
  PrimExpr SimplifyFloorMod(const PrimExpr& a, const PrimExpr& b, DataType t);
  // a op b with op in EQ..GE, a and b simplified and index-like: decided, or
  // normalized (see canonical_simplify.cc for the normal form).
  PrimExpr SimplifyCompare(ExprKind op, const PrimExpr& a, const PrimExpr& b);
  ModularSet LinearModular(const LinearForm& f);

 private:
  int64_t SymbolicExtreme(const LinearForm& f, bool upper, int depth);
  void Save(const ExprNode* v);
  void AddComparisonFact(const PrimExpr& cmp);

  std::unordered_map<const ExprNode*, VarFacts> vars_;
  std::vector<PrimExpr> known_;
  struct Undo {
    const ExprNode* var = nullptr;  // null: a known_ entry to pop
    bool existed = false;
    VarFacts old;
  };
  std::vector<Undo> undo_;
  int symbolic_budget_ = 0;
  friend class Analyzer;
};

}  // namespace kiln::arith

#endif  // KILN_LOWERING_ARITH_ANALYZER_IMPL_H_
