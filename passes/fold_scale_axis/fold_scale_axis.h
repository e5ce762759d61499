// File: passes/fold_scale_axis/fold_scale_axis.h
//
// FoldScaleAxis: folds a per-channel constant scale into the weight of the
// conv2d (NCHW/OIHW, NHWC/HWIO and the other permuted layouts) or dense next
// to it, as TVM's FoldScaleAxis does.
//
//   backward: the scale follows the op (possibly through relu and per-channel
//   constant biases):
//     multiply(relu(bias_add(conv2d(%x, %w), %b)), %s)   // %s: [C, 1, 1], all > 0
//     -> relu(bias_add(conv2d(%x, %w * %s[C,1,1,1]), %b * %s))
//   forward: the scale precedes the op (possibly through relu):
//     conv2d(relu(multiply(%x, %s)), %w)                  // %s: [C, 1, 1], all > 0
//     -> conv2d(relu(%x), %w * %s on the kernel's I axis)
//   dense: dense(%x, %w) * %s[units] -> dense(%x, %w * %s[units, 1]);
//          dense(%x * %s[K], %w)    -> dense(%x, %w * %s[K]).
//
// The scale must be a float32 Constant that broadcasts along the channel axis
// only (shape [C], [C, 1, 1], [1, C, 1, 1], ... aligned to the channel axis of
// the layout; a scalar is a uniform scale). Scales pass through relu only when
// every value is positive. Every intermediate node must have no other use.
// When the weight (or a bias) is a float32 Constant the scaled weight is
// computed here; otherwise the rewrite multiplies the weight expression by the
// reshaped scale (`multiply(%w, <const [C,1,1,1]>)`), which FoldConstant
// folds later. Anything else (a non-constant scale, a scale along a spatial
// axis, grouped conv in the forward direction) is left alone.
//
// Requires: InferType (layouts and ranks come from checked types).
#ifndef KILN_PASSES_FOLD_SCALE_AXIS_FOLD_SCALE_AXIS_H_
#define KILN_PASSES_FOLD_SCALE_AXIS_FOLD_SCALE_AXIS_H_

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "passes/infra/pass.h"

namespace kiln::passes {

// Folds scales in `f` (a type-checked function). Returns `f` itself when
// nothing was folded.
absl::StatusOr<Function> FoldScaleAxisFunction(const Function& f);

// The pass: "FoldScaleAxis", opt_level 3, requires InferType.
PassPtr FoldScaleAxis();

}  // namespace kiln::passes

#endif  // KILN_PASSES_FOLD_SCALE_AXIS_FOLD_SCALE_AXIS_H_
