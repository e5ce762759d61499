// File: lowering/compute/tensor/tensor_compute.h
//
// Compute definitions (lowering/te/te.h) of kiln's tensor operators: the
// elementwise unary ops, broadcasting binary ops, reductions, shape and data
// movement ops and the dyn.* operators. Each is attached to the operator
// registry under the "Compute" facet (lowering/compute/op_compute.h), and
// agrees with the interpreter's kernel of the same op (interpreter/kernels_*.cc)
// for every attribute value and dtype; README.md beside this file lists the
// operators and the few places compiled code must differ (integer division by
// zero gives 0 instead of an error, and so on).
//
//   RegisterTensorComputes();   // idempotent, thread-safe
//   const FTCompute* f = OpRegistry::Global().GetFacet<FTCompute>(add_def, kComputeFacet);
//
// RegisterCoreComputes() (lowering/compute:all) calls this together with the
// nn operators' registration.
#ifndef KILN_LOWERING_COMPUTE_TENSOR_TENSOR_COMPUTE_H_
#define KILN_LOWERING_COMPUTE_TENSOR_TENSOR_COMPUTE_H_

namespace kiln::lowering {

// Attaches the compute of every tensor operator (see README.md for the list).
void RegisterTensorComputes();

}  // namespace kiln::lowering

#endif  // KILN_LOWERING_COMPUTE_TENSOR_TENSOR_COMPUTE_H_
