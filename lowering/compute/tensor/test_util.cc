// File: lowering/compute/tensor/test_util.cc
//
// The tests of this package link the tensor computes only, not
// //lowering/compute:all: ComputeOp's registration hook registers just them.
#include "lowering/compute/op_compute.h"
#include "lowering/compute/tensor/tensor_compute.h"

namespace kiln::lowering {

void RegisterCoreComputes() { RegisterTensorComputes(); }

}  // namespace kiln::lowering
