// File: passes/fuse_ops/fuse_ops.h
//
// FuseOps: groups operator calls into primitive functions, as TVM's Relay
// FuseOps does. The dataflow graph of a function body is partitioned with the
// post-dominator tree and the operators' pattern kinds (ir/op.h OpPattern):
//   - elementwise / broadcast / injective chains fuse together;
//   - a kOutEWiseFusable op (conv2d, dense, pools) fuses with the
//     elementwise/broadcast tail it post-dominates;
//   - a reduction fuses with its elementwise/injective producers;
//   - kOpaque ops (softmax, batch_norm, ...) stand alone;
//   - a tuple consumed by concatenate fuses into it; a tuple at the function
//     output is not fused.
// Let values, if / match, references and nested functions are fusion
// barriers (fusion happens only within straight-line dataflow; a nested
// closure's body is fused on its own). Each group becomes a nested
// `fn (%p0, ..., Primitive=1) { ... }` called where the group's result was;
// its parameters are the group's inputs, typed with their inferred types.
// Constants used inside a group stay inside it (they are not made
// parameters). A group holds at most `max_depth` nodes
// (PassContext config "relay.FuseOps.max_depth", default 256). Functions
// already marked Primitive=1 are left alone; running the pass twice changes
// nothing the second time.
//
// Requires: InferType (parameter types come from checked_type()).
//
//   before:  %0 = nn.conv2d(%x, %w, padding=[1, 1]);
//            %1 = add(%0, %b);
//            nn.relu(%1)
//   after:   %0 = fn (%p0: Tensor[...], %p1: Tensor[...], %p2: Tensor[...],
//                     Primitive=1) -> Tensor[...] {
//              %1 = nn.conv2d(%p0, %p1, padding=[1, 1]);
//              %2 = add(%1, %p2);
//              nn.relu(%2)
//            };
//            %0(%x, %w, %b)
#ifndef KILN_PASSES_FUSE_OPS_FUSE_OPS_H_
#define KILN_PASSES_FUSE_OPS_FUSE_OPS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "ir/module.h"
#include "passes/infra/pass.h"

namespace kiln::passes {

struct FuseOptions {
  // Largest number of nodes (operator calls, tuples, projections) in a group.
  int64_t max_depth = 256;
};

// Fuses the body of `f` (and of the non-primitive closures inside it). `f`
// must be type-checked. Returns `f` itself when nothing was fused.
absl::StatusOr<Function> FuseFunction(const Function& f, const FuseOptions& opts = {});

// The pass: "FuseOps", opt_level 1, requires InferType.
PassPtr FuseOps();

}  // namespace kiln::passes

#endif  // KILN_PASSES_FUSE_OPS_FUSE_OPS_H_
