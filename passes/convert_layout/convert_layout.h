// File: passes/convert_layout/convert_layout.h
//
// ConvertLayout: converts conv2d to a desired data/kernel layout (NCHW <->
// NHWC and the other permutations of NCHW / OIHW), as TVM's ConvertLayout:
// a layout_transform is inserted on the conv's data (and its weight), the
// conv's attributes are rewritten, and the new layout is carried through
// layout-agnostic operators so that a chain of convs needs one transform at
// the entry and one at each exit:
//   - elementwise unary ops (relu, exp, cast, ...) keep their input's layout;
//   - broadcast binary ops (add, multiply, ...) take the layout of their
//     converted operand; the other operand is transformed too (a lower-rank
//     per-channel constant is first expand_dims'ed to rank 4; scalars stay);
//   - nn.bias_add, nn.batch_norm, nn.softmax / log_softmax and concatenate get
//     their axis remapped; pools (max/avg/global) get their `layout` rewritten;
//   - any other consumer (reshape, dense, the function result, ...) gets the
//     value transformed back to its original layout.
// layout_transform(layout_transform(x, A, B), B, A) is never built: inverse
// pairs cancel. Graphs already in the desired layout are left alone.
//
// Desired layouts: {"nn.conv2d": {"NHWC", "HWIO"}}; the kernel layout may be
// "default" (NHWC -> HWIO, NCHW -> OIHW) or omitted.
//
// Requires: InferType (ranks of operands).
//
//   before: %0 = nn.conv2d(%x, %w);  nn.relu(%0)              (NCHW, OIHW)
//   after:  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
//           %1 = layout_transform(%w, src_layout="OIHW", dst_layout="HWIO");
//           %2 = nn.conv2d(%0, %1, data_layout="NHWC", kernel_layout="HWIO");
//           %3 = nn.relu(%2);
//           layout_transform(%3, src_layout="NHWC", dst_layout="NCHW")
#ifndef KILN_PASSES_CONVERT_LAYOUT_CONVERT_LAYOUT_H_
#define KILN_PASSES_CONVERT_LAYOUT_CONVERT_LAYOUT_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "passes/infra/pass.h"

namespace kiln::passes {

using DesiredLayouts = std::map<std::string, std::vector<std::string>>;

// Converts the layouts in `f` (a type-checked function). Returns `f` itself
// when nothing changed; an error for an unsupported op or layout in `desired`.
absl::StatusOr<Function> ConvertLayoutFunction(const Function& f, const DesiredLayouts& desired);

// The pass: "ConvertLayout", opt_level 3, requires InferType.
PassPtr ConvertLayout(DesiredLayouts desired);

}  // namespace kiln::passes

#endif  // KILN_PASSES_CONVERT_LAYOUT_CONVERT_LAYOUT_H_
