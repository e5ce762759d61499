// File: passes/simplify_inference/simplify_inference.h
//
// SimplifyInference (opt level 0; in every default pipeline): rewrites
// training-time operators into their inference form, as TVM's pass:
//   nn.batch_norm(x, g, b, m, v).0 -> x * s + (b - m * s), s = g / sqrt(v + eps)
//       broadcast along `axis` (expand_dims of the per-channel vectors); with
//       scale=false s = 1 / sqrt(v + eps), with center=false no b. The scale
//       and shift depend only on the parameters, so FoldConstant folds them.
//   nn.batch_norm(...).1 / .2 (the running mean / variance) -> m / v
//   nn.dropout(x).0 -> x
// nn.layer_norm is kept (it is fused later). A batch_norm whose tuple is
// used other than through projections (e.g. let-bound) is left alone.
// Needs InferType first (ranks and dtypes; a prerequisite).
//
//   fn (%x: Tensor[(1, 4, 8, 8), float32], %g, %b, %m, %v) { %0 = nn.batch_norm(%x, %g, %b, %m, %v); %0.0 }
//   // after:
//   fn (...) { %0 = add(%v, 1e-05f); %1 = sqrt(%0); %2 = divide(%g, %1);
//              %3 = negative(%m); %4 = multiply(%3, %2); %5 = add(%4, %b);
//              %6 = expand_dims(%2, axis=1, num_newaxis=2); %7 = multiply(%x, %6);
//              %8 = expand_dims(%5, axis=1, num_newaxis=2); add(%7, %8) }
#ifndef KILN_PASSES_SIMPLIFY_INFERENCE_SIMPLIFY_INFERENCE_H_
#define KILN_PASSES_SIMPLIFY_INFERENCE_SIMPLIFY_INFERENCE_H_

#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr SimplifyInference();

}  // namespace kiln::passes

#endif  // KILN_PASSES_SIMPLIFY_INFERENCE_SIMPLIFY_INFERENCE_H_
