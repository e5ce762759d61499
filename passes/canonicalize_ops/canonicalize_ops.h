// File: passes/canonicalize_ops/canonicalize_ops.h
//
// CanonicalizeOps (opt level 3): rewrites operators into simpler, more
// general ones that later passes (FoldScaleAxis, FuseOps) understand, as
// TVM's pass of that name. Today: nn.bias_add(x, b, axis) becomes
// add(x, expand_dims(b, axis=1, num_newaxis=ndim(x) - axis - 1)), so the bias
// broadcasts along `axis` (no expand_dims when axis is the last one).
// Needs InferType first (for the rank of x; a prerequisite).
//
//   fn (%x: Tensor[(1, 8, 4, 4), float32], %b: Tensor[(8,), float32]) { nn.bias_add(%x, %b) }
//   // after:
//   fn (...) { %0 = expand_dims(%b, axis=1, num_newaxis=2); add(%x, %0) }
#ifndef KILN_PASSES_CANONICALIZE_OPS_CANONICALIZE_OPS_H_
#define KILN_PASSES_CANONICALIZE_OPS_CANONICALIZE_OPS_H_

#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr CanonicalizeOps();

}  // namespace kiln::passes

#endif  // KILN_PASSES_CANONICALIZE_OPS_CANONICALIZE_OPS_H_
