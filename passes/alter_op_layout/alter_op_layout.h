// File: passes/alter_op_layout/alter_op_layout.h
//
// AlterOpLayout: target-chosen operator layouts, as TVM's AlterOpLayout with
// the x86 conv2d strategy. For an x86 (`llvm`) target every conv2d in
// NCHW/OIHW with groups=1 and static channel counts becomes a blocked
// convolution: data NCHW{ic}c, kernel OIHW{ic}i{oc}o, output NCHW{oc}c, where
// a blocking factor is the largest of 16, 8, 4, 2 that divides the channel
// count (a conv whose channels none divide is left alone). layout_transform
// ops are inserted on the data and the weight; the blocked layout is carried
// through elementwise unary ops and broadcast binary ops whose other operand
// is a scalar or a tensor of the same type, so a chain of convs keeps the
// blocked layout between them (no transform back and forth), and the value is
// transformed back to NCHW wherever another op (or the function result) uses
// it. Inverse transform pairs cancel.
//
// Type relation support: the rewrite produces conv2d calls in blocked
// layouts. When the registered nn.conv2d type relation does not accept them
// (it is probed once, see BlockedConvTypeSupported), the pass leaves every
// function alone unless `options.require_type_support` is false, so the
// pipeline stays well typed.
//
// Requires: InferType (channel counts come from checked types).
//
//   before: %0 = nn.conv2d(%x, %w1, padding=[1, 1]);   // (1, 32, 8, 8) -> 32 ch
//           nn.conv2d(nn.relu(%0), %w2, padding=[1, 1])
//   after:  %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
//           %1 = layout_transform(%w1, src_layout="OIHW", dst_layout="OIHW16i16o");
//           %2 = nn.conv2d(%0, %1, padding=[1, 1], data_layout="NCHW16c",
//                          kernel_layout="OIHW16i16o", out_layout="NCHW16c");
//           %3 = nn.relu(%2);
//           %4 = layout_transform(%w2, src_layout="OIHW", dst_layout="OIHW16i16o");
//           %5 = nn.conv2d(%3, %4, ..., data_layout="NCHW16c", ...);
//           layout_transform(%5, src_layout="NCHW16c", dst_layout="NCHW")
#ifndef KILN_PASSES_ALTER_OP_LAYOUT_ALTER_OP_LAYOUT_H_
#define KILN_PASSES_ALTER_OP_LAYOUT_ALTER_OP_LAYOUT_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "passes/infra/pass.h"

namespace kiln::passes {

struct AlterOpLayoutOptions {
  // "llvm" (x86/ARM CPUs: NCHWc blocking); other targets leave layouts alone.
  std::string target = "llvm";
  // Rewrite only when the nn.conv2d type relation accepts blocked layouts.
  bool require_type_support = true;
};

// Whether the registered nn.conv2d relation type-checks an NCHW16c /
// OIHW16i16o convolution (probed once per process).
bool BlockedConvTypeSupported();

absl::StatusOr<Function> AlterOpLayoutFunction(const Function& f,
                                               const AlterOpLayoutOptions& options = {});

// The pass: "AlterOpLayout", opt_level 3, requires InferType. The target is
// read from the PassContext config "relay.AlterOpLayout.target" (default "llvm").
PassPtr AlterOpLayout();

}  // namespace kiln::passes

#endif  // KILN_PASSES_ALTER_OP_LAYOUT_ALTER_OP_LAYOUT_H_
