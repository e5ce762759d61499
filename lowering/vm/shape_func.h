// File: lowering/vm/shape_func.h
//
// Data-dependent shape functions: the output shape of an operator whose
// extents depend on the values of its arguments, not only on their shapes
// (the dyn.* operators, whose shape-like arguments are run-time tensors: an
// ONNX Reshape whose shape is a graph input, Expand, ConstantOfShape, Slice
// with run-time starts). The VM compiler calls one before the kernel, with
// the kernel's own argument tensors, and allocates the output with the shape
// it stores (TVM's data-dependent shape functions, `kiln.shape_func` kernels).
//
// Each builder returns loop-IR statements that read the argument buffers
// (their shapes are the kernel's symbolic dims, their values are loaded) and
// store the output's extents into `out` (int64, one entry per output dim).
// The rank is static (the type relation fixed it), so every per-dim rule is
// unrolled; what the values make impossible (two -1 codes in a reshape, a
// size that does not divide, a negative extent, a shape that does not
// broadcast) is an assert whose message the run's status carries.
#ifndef KILN_LOWERING_VM_SHAPE_FUNC_H_
#define KILN_LOWERING_VM_SHAPE_FUNC_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "ir/tir.h"

namespace kiln::lowering::vm {

// Whether `op` has a shape function that reads its arguments' values.
bool HasDataShapeFunction(const OpNode& op);

// The statements storing the output shape of `call` (an operator call whose
// output is one tensor) into `out`, reading `args` (a buffer per argument of
// the call, in order; readable[i] says whether the values of args[i] can be
// loaded, i.e. it is a parameter of the shape function, not a constant of the
// kernel, whose buffer only has its shape). InvalidArgument when the call's
// argument types do not fit the operator; Unimplemented for an operator
// without one, or when it would read an argument that is not readable.
// constants[i], when set, is args[i]'s value (a constant inside the kernel):
// its entries become literals.
absl::StatusOr<tir::Stmt> DataShapeFunction(
    const CallNode& call, const std::vector<tir::Buffer>& args,
    const std::vector<Ref<const HostTensor>>& constants, const std::vector<bool>& readable,
    const tir::Buffer& out);

// The shape function of a primitive (fused) function whose output shapes
// are not all static: a kernel named `name` whose parameters are the
// function's inputs and then one int64 vector per output, into which it
// stores that output's extents. Output extents that are expressions of the
// input dims are stored as such; a function that is one dyn.* call reads its
// arguments' values (DataShapeFunction); `?` extents that come from `?`
// inputs are composed over the body (broadcasting, expand_dims, take,
// concatenate). Unimplemented naming the kernel and the dim otherwise.
absl::StatusOr<tir::PrimFunc> ShapeFunctionFor(const Function& fn, const std::string& name);

// Tensor types of a value type, tuples flattened; false if something else.
bool FlattenTensorTypes(const Type& t, std::vector<const TensorTypeNode*>* out);
// Variables named by a dim (its expression's leaves).
void DimVars(const Dim& d, std::set<std::string>* out);

}  // namespace kiln::lowering::vm

#endif  // KILN_LOWERING_VM_SHAPE_FUNC_H_
