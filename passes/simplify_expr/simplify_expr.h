// File: passes/simplify_expr/simplify_expr.h
//
// SimplifyExpr (opt level 3): local algebraic simplifications, bottom-up, so
// chains collapse in one run:
//   x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1  -> x   (constant all ones/zeros,
//       and only when the result type equals x's type: broadcasting against
//       a bigger constant, or a dtype change, keeps the call)
//   reshape(reshape(x, a), b)                -> reshape(x, b)  (b's codes are
//       resolved to the static output shape when they refer to the input)
//   reshape(x, s) with the type of x          -> x
//   transpose(transpose(x, p), q)            -> transpose(x, p∘q), or x when identity
//   cast(cast(x, a), b)                      -> cast(x, b) when x -> a loses nothing
//   cast(x, dtype of x)                      -> x
// Needs InferType first (a prerequisite: Sequential runs it).
//
//   fn (%x: Tensor[(2, 3), float32]) {
//     %0 = multiply(%x, 1f); %1 = transpose(%0); %2 = transpose(%1); reshape(%2, newshape=[2, 3]) }
//   // after:
//   fn (%x: Tensor[(2, 3), float32]) { %x }
#ifndef KILN_PASSES_SIMPLIFY_EXPR_SIMPLIFY_EXPR_H_
#define KILN_PASSES_SIMPLIFY_EXPR_SIMPLIFY_EXPR_H_

#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr SimplifyExpr();

}  // namespace kiln::passes

#endif  // KILN_PASSES_SIMPLIFY_EXPR_SIMPLIFY_EXPR_H_
