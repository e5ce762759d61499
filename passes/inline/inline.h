// File: passes/inline/inline.h
//
// Inline (opt level 1): replaces each call `@f(a, b)` of a global function
// marked with the function attribute Inline=1 by f's body with the
// parameters replaced by the arguments, as TVM's Inline pass. Variables the
// body binds (lets, closure parameters) are renamed at each call site, so no
// variable is bound twice. Functions that can reach themselves through the
// call graph (recursive) are left alone, and so are polymorphic ones. An
// inlined function no other function calls any more is removed from the
// module. Needs nothing before it.
//
//   def @sq(%y: Tensor[(4,), float32], Inline=1) { multiply(%y, %y) }
//   def @main(%x: Tensor[(4,), float32]) { %0 = exp(%x); @sq(%0) }
//   // after:
//   def @main(%x: Tensor[(4,), float32]) { %0 = exp(%x); multiply(%0, %0) }
#ifndef KILN_PASSES_INLINE_INLINE_H_
#define KILN_PASSES_INLINE_INLINE_H_

#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr Inline();

}  // namespace kiln::passes

#endif  // KILN_PASSES_INLINE_INLINE_H_
