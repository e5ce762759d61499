// File: passes/dead_code_elimination/dead_code_elimination.h
//
// DeadCodeElimination (opt level 1): removes `let` bindings whose variable is
// never used, as Relay's DCE. A binding is kept when its value may have an
// effect (RefCreate, RefWrite, or a call of anything but an operator or a
// constructor: an unknown function may write a reference). Liveness is one
// mark phase from the result, so a chain of dead lets (each used only by the
// next dead one) goes in one run. Unused dataflow nodes (graph bindings) are
// not part of the program anyway; unused global functions are kept (that is a
// module-level decision). Needs nothing before it.
//
//   fn (%x) { let %a = exp(%x); let %b = log(%a); let %r = ref(%x); %x }
//   // after:
//   fn (%x) { let %r = ref(%x); %x }
#ifndef KILN_PASSES_DEAD_CODE_ELIMINATION_DEAD_CODE_ELIMINATION_H_
#define KILN_PASSES_DEAD_CODE_ELIMINATION_DEAD_CODE_ELIMINATION_H_

#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr DeadCodeElimination();

}  // namespace kiln::passes

#endif  // KILN_PASSES_DEAD_CODE_ELIMINATION_DEAD_CODE_ELIMINATION_H_
