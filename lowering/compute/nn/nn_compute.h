// File: lowering/compute/nn/nn_compute.h
//
// Compute definitions (tensor expressions, lowering/te/te.h) of the nn.*
// operators, attached to the operator registry under the "Compute" facet
// (lowering/compute/op_compute.h):
//
//   conv.cc   nn.conv2d (NCHW, NHWC, any permutation, NCHW{x}c; kernels OIHW,
//             HWIO, OHWI, OIHW{i}i{o}o; groups, depthwise, dilation, out_dtype)
//   dense.cc  nn.dense, nn.matmul, nn.batch_matmul
//   pool.cc   nn.max_pool2d, nn.avg_pool2d, nn.global_max_pool2d,
//             nn.global_avg_pool2d
//   norm.cc   nn.batch_norm, nn.layer_norm, nn.softmax, nn.log_softmax
//   misc.cc   nn.dropout, nn.pad
//
// Every compute agrees with the interpreter kernel of the same op
// (interpreter/kernels_nn.cc, kernels_norm.cc); README.md in this directory
// lists the stages, tags and the few deliberate deviations.
//
//   RegisterNnComputes();   // idempotent, thread-safe
//
// Most callers want RegisterCoreComputes() (op_compute.h), which calls this.
#ifndef KILN_LOWERING_COMPUTE_NN_NN_COMPUTE_H_
#define KILN_LOWERING_COMPUTE_NN_NN_COMPUTE_H_

namespace kiln::lowering {

// Attaches the Compute facet of every nn.* operator listed above.
void RegisterNnComputes();

}  // namespace kiln::lowering

#endif  // KILN_LOWERING_COMPUTE_NN_NN_COMPUTE_H_
