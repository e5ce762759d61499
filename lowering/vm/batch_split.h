// File: lowering/vm/batch_split.h
//
// Kernels for a symbolic batch that run as fast as static ones. The operator
// strategies (lowering/strategy: packed GEMM, NCHWc convolutions) schedule
// static shapes only, so a fused function over Tensor[(N, 3, 32, 32)] gets
// the generic schedule, several times slower. When the function's only
// symbolic dim is one batch variable N, always the whole axis 0 of the
// tensors that have it, and each of its operators computes row n of its
// output from row n of its batched inputs alone (convolutions and pools in
// an N-first layout, dense, elementwise and broadcasting ops, reductions and
// softmax not over axis 0, reshapes and transposes that keep axis 0, ...),
// LowerBatchSplit lowers a copy with N = 1 (strategies apply) and wraps its
// loop nest in a serial loop over the batch that offsets every batched
// buffer by one row per iteration. The kernel's signature is the symbolic
// one (buffers [N, ...]); the VM calls it like any other.
//
//   KILN_ASSIGN_OR_RETURN(std::optional<LoweredFunc> k, LowerBatchSplit(fn, name, options));
//   if (!k) { ... LowerPrimitive(fn, name, options) ... }
#ifndef KILN_LOWERING_VM_BATCH_SPLIT_H_
#define KILN_LOWERING_VM_BATCH_SPLIT_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/expr.h"
#include "lowering/lower.h"

namespace kiln::lowering::vm {

// Why `fn` (type-checked, primitive) cannot be split by batch, or "" when it
// can; the batch variable's name goes to *batch_var.
std::string BatchSplitRefusal(const Function& fn, std::string* batch_var);

// `fn` lowered for N = 1 inside a loop over the batch; nullopt when `fn` does
// not qualify (BatchSplitRefusal) or its N = 1 copy does not lower to a form
// the loop can wrap (the caller then lowers it as it is).
absl::StatusOr<std::optional<LoweredFunc>> LowerBatchSplit(const Function& fn,
                                                           absl::string_view name,
                                                           const LowerOptions& options);

}  // namespace kiln::lowering::vm

#endif  // KILN_LOWERING_VM_BATCH_SPLIT_H_
