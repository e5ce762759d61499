// File: lowering/te/message_passing.h
//
// Passing ranges, index values and flags along a stage's Split/Fuse/Rebase
// relations (TVM's message_passing.cc), and the bound checks a stage needs
// when a split does not divide evenly or a stage computes only part of its
// tensor. Internal to the schedule library.
//
//   down (roots -> leaves):  split: outer = [0, ceil(extent / factor)), inner = [0, factor)
//                            fuse:  fused = [0, outer_extent * inner_extent)
//   up (leaves -> roots):    split: parent = outer * inner_extent + inner (+ parent min)
//                            fuse:  outer = fused / inner_extent, inner = fused % inner_extent
#ifndef KILN_LOWERING_TE_MESSAGE_PASSING_H_
#define KILN_LOWERING_TE_MESSAGE_PASSING_H_

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lowering/te/arith.h"
#include "lowering/te/schedule.h"

namespace kiln::te::internal {

using RangeMap = std::unordered_map<IterVar, Range, RefHash>;
using IndexMap = std::unordered_map<IterVar, PrimExpr, RefHash>;
using SetMap = std::unordered_map<IterVar, arith::IntSet, RefHash>;
using FlagMap = std::unordered_map<IterVar, int, RefHash>;
using IterVarSet = std::unordered_set<IterVar, RefHash>;

// Ranges of every IterVar a relation derives, from those of the roots.
absl::Status PassDownDomain(const Stage& s, RangeMap* dom, bool allow_missing);
// Values of the roots (and intermediate IterVars) from the leaves' values.
absl::Status PassUpIndex(const Stage& s, const RangeMap& dom, IndexMap* state, bool allow_missing);
// Sets of values of the roots from the leaves' sets.
absl::Status PassUpDomain(const Stage& s, const RangeMap& dom, SetMap* state);
// OR of flags, from leaves to roots (up) or roots to leaves (down).
void PassUpBitMaskOr(const Stage& s, FlagMap* state);
void PassDownBitMaskOr(const Stage& s, FlagMap* state);

// Conditions under which the stage's current point is inside its domain:
// `value < extent` for the parents of splits that do not provably divide
// evenly, and (unless skip_ivar_domain) `0 <= value < dom` for roots whose
// inferred range differs from their declared domain. Conditions that the
// ranges prove true are dropped. `var_sets` gives the ranges of loop vars.
std::vector<PrimExpr> MakeBoundCheck(const Stage& s, const RangeMap& dom, const IndexMap& values,
                                     bool skip_ivar_domain, const IterVarSet& skip,
                                     const arith::VarSetMap& var_sets);

}  // namespace kiln::te::internal

#endif  // KILN_LOWERING_TE_MESSAGE_PASSING_H_
