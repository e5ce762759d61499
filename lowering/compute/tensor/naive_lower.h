// File: lowering/compute/tensor/naive_lower.h (tests only)
//
// A deliberately simple lowering of tensor expressions to one PrimFunc, for
// checking compute definitions numerically without the schedule machinery:
// every compute op gets a loop nest over its axes in post order, writing its
// own buffer (a parameter for outputs, an Allocate for intermediates); a
// reduction initializes with the identity and updates inside its reduce loops;
// argmax/argmin keep the best value in a one-element buffer with the
// interpreter's rules (the first NaN wins; then the first extreme, or the
// last with select_last_index).
//
//   KILN_ASSIGN_OR_RETURN(tir::PrimFunc f, NaiveLower(b.inputs, b.outputs, "add"));
//   // params: inputs in order, then outputs
#ifndef KILN_LOWERING_COMPUTE_TENSOR_NAIVE_LOWER_H_
#define KILN_LOWERING_COMPUTE_TENSOR_NAIVE_LOWER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/tir.h"
#include "lowering/te/te.h"

namespace kiln::lowering::tensor::testing {

absl::StatusOr<tir::PrimFunc> NaiveLower(const std::vector<te::Tensor>& inputs,
                                         const std::vector<te::Tensor>& outputs,
                                         const std::string& name);

}  // namespace kiln::lowering::tensor::testing

#endif  // KILN_LOWERING_COMPUTE_TENSOR_NAIVE_LOWER_H_
