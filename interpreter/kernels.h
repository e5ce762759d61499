// File: interpreter/kernels.h
//
// The interpreter's reference kernels, one per core operator, attached to the
// operator registry under the facet "Interpret" (ir/op.h). Kernels are plain
// loops over host tensors; they compute output shapes from their actual inputs
// (so they also run on calls that were never type-checked) and check what they
// rely on, returning a status that names the operator instead of crashing.
//
//   RegisterCoreKernels();   // idempotent; Evaluate() calls it
//   KILN_ASSIGN_OR_RETURN(Value out, EvalOp(add_op, nullptr, {Value::Tensor(a), Value::Tensor(b)}));
//
// Numeric rules (every kernel):
//   - float16/bfloat16/float32 are computed in double and rounded once on store;
//     integers in 64 bits and truncated on store (two's complement wraparound).
//   - Integer divide/mod truncate toward zero (C), floor_divide/floor_mod floor;
//     an integer division by zero is an error. Floats follow IEEE (1/0 = inf).
//   - A float stored into an integer tensor (cast, or a float-only math op on an
//     integer tensor) truncates toward zero and saturates to the dtype's range;
//     NaN becomes 0. Into bool: nonzero (NaN included) is true.
//   - round is round-half-to-even (as TVM's round and ONNX Round).
//   - maximum/minimum, max/min reductions propagate NaN; argmax/argmin pick a NaN
//     first, then the first extreme (the last with select_last_index).
#ifndef KILN_INTERPRETER_KERNELS_H_
#define KILN_INTERPRETER_KERNELS_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attrs.h"
#include "ir/expr.h"
#include "ir/op.h"
#include "interpreter/value.h"

namespace kiln::interp {

// What a kernel is given.
struct KernelCtx {
  const OpDef& op;
  const AttrsNode* attrs;  // the call's attributes; null means the op's defaults
  const std::vector<Value>& args;

  // "op_name: msg" as an InvalidArgument status.
  absl::Status Error(absl::string_view msg) const;
  // Argument i as a tensor (an error names the op and the argument).
  absl::StatusOr<const HostTensor*> Tensor(size_t i) const;
  // The attributes as `A` (the op's defaults when the call has none).
  template <typename A>
  const A& Attrs() const {
    if (attrs != nullptr && A::IsInstance(attrs)) return *static_cast<const A*>(attrs);
    static const A* const defaults = new A();
    return *defaults;
  }
};

using KernelFn = std::function<absl::StatusOr<Value>(const KernelCtx&)>;

// Attaches every core operator's kernel (facet "Interpret"). Idempotent and
// thread-safe.
void RegisterCoreKernels();

// The kernel of `op`, or null when none is registered.
const KernelFn* FindKernel(const OpDef* op);

// Runs `op`'s kernel on `args` (registering the core kernels first). Checks the
// argument count; null `attrs` means the op's defaults.
absl::StatusOr<Value> EvalOp(const Op& op, const Attrs& attrs, const std::vector<Value>& args);

}  // namespace kiln::interp

#endif  // KILN_INTERPRETER_KERNELS_H_
