// File: passes/eliminate_common_subexpr/eliminate_common_subexpr.h
//
// EliminateCommonSubexpr (opt level 3): within each function, merges operator
// calls that are structurally identical — same operator, equal attributes and
// type arguments, and the same argument nodes once their own duplicates are
// merged (so whole duplicated chains collapse, bottom-up) — and projections
// `t.i` of the same tuple node. Arguments are compared by identity after
// merging, and a variable is one object bound in one place, so two merged
// calls always see the same bindings: nothing is moved out of the scope that
// binds its variables. Calls of functions (possible effects) are never
// merged; no core operator has effects. Needs nothing before it.
//
//   fn (%x) { %0 = exp(%x); %1 = exp(%x); %2 = nn.relu(%0); %3 = nn.relu(%1); add(%2, %3) }
//   // after:
//   fn (%x) { %0 = exp(%x); %1 = nn.relu(%0); add(%1, %1) }
#ifndef KILN_PASSES_ELIMINATE_COMMON_SUBEXPR_ELIMINATE_COMMON_SUBEXPR_H_
#define KILN_PASSES_ELIMINATE_COMMON_SUBEXPR_ELIMINATE_COMMON_SUBEXPR_H_

#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr EliminateCommonSubexpr();

}  // namespace kiln::passes

#endif  // KILN_PASSES_ELIMINATE_COMMON_SUBEXPR_ELIMINATE_COMMON_SUBEXPR_H_
