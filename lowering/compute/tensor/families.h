// File: lowering/compute/tensor/families.h (internal to this package)
//
// One registration function per operator family file; RegisterTensorComputes
// (register.cc) calls them all once.
#ifndef KILN_LOWERING_COMPUTE_TENSOR_FAMILIES_H_
#define KILN_LOWERING_COMPUTE_TENSOR_FAMILIES_H_

namespace kiln::lowering::tensor {

void RegisterElemwiseComputes();   // elemwise.cc: unary math, clip, cast, relu, gelu, ...
void RegisterBroadcastComputes();  // broadcast.cc: binary ops, where, bias_add, prelu, broadcast_to
void RegisterReduceComputes();     // reduce.cc: sum, mean, max, min, prod, argmax, argmin
void RegisterTransformComputes();  // transform.cc: reshape, transpose, concatenate, split, ...
void RegisterLayoutComputes();     // layout.cc: layout_transform
void RegisterDynComputes();        // dyn.cc: dyn.*

}  // namespace kiln::lowering::tensor

#endif  // KILN_LOWERING_COMPUTE_TENSOR_FAMILIES_H_
