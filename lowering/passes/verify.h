// File: lowering/passes/verify.h
//
// VerifyPrimFunc: checks that a PrimFunc is well formed before it reaches a
// code generator; the last step of the loop pipeline (pipeline.h).
//
//   KILN_RETURN_IF_ERROR(VerifyPrimFunc(f));
//   // e.g. InvalidArgument "verify: PrimFunc 'add': unbound variable 'n' in (i < n)"
//
// Checked:
//   - every variable used is bound: param data vars and the vars of param
//     shapes/strides/elem_offset, loop vars inside their loop, let vars inside
//     their let, Allocate data vars inside the Allocate; no var is bound again
//     while already in scope;
//   - binary operands have the same type (code, bits and lanes); And/Or/Not
//     and conditions (If, Assert, Select, if_then_else, likely) are bool;
//     If/Assert conditions and loop bounds are scalars; loop bounds, indices
//     and Ramp bases/strides are integers;
//   - a Store's value has the buffer's element type and the lanes of its
//     index; a Load's indices agree in lanes;
//   - no kReduce / kProducerLoad is left (tensor-expression nodes).
// Errors name the function and show the offending node (tir::ToText).
#ifndef KILN_LOWERING_PASSES_VERIFY_H_
#define KILN_LOWERING_PASSES_VERIFY_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::tir::transform {

absl::Status VerifyPrimFunc(const PrimFunc& f);

// As a pass (returns f unchanged when it verifies).
absl::StatusOr<PrimFunc> Verify(const PrimFunc& f);

}  // namespace kiln::tir::transform

#endif  // KILN_LOWERING_PASSES_VERIFY_H_
