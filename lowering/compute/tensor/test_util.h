// File: lowering/compute/tensor/test_util.h (tests only)
//
// Builds one operator's compute the way lowering does: the call's output type
// comes from type inference (types/), the inputs are placeholders whose
// symbolic dims share one ShapeVars with the output type.
//
//   auto b = BuildOp("add", nullptr, {TT({2, 3}), TT({3})});
//   b->outputs[0].shape()   // {2, 3}
#ifndef KILN_LOWERING_COMPUTE_TENSOR_TEST_UTIL_H_
#define KILN_LOWERING_COMPUTE_TENSOR_TEST_UTIL_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/dim.h"
#include "ir/expr.h"
#include "ir/op.h"
#include "ir/status_macros.h"
#include "ir/type.h"
#include "lowering/compute/op_compute.h"
#include "lowering/te/te.h"
#include "types/infer_type.h"

namespace kiln::lowering::tensor::testing {

inline Type TT(std::vector<Dim> shape, DataType dt = DataType::Float(32)) {
  return MakeTensorType(std::move(shape), dt);
}

struct BuiltOp {
  Type out_type;
  std::vector<te::Tensor> inputs;  // placeholders; tuple fields flattened
  std::vector<te::Tensor> outputs;
  std::shared_ptr<ShapeVars> dims;
};

// Placeholders for `t` (a tensor, or a tuple of tensors flattened).
inline absl::Status AddPlaceholders(const Type& t, ShapeVars* dims, std::vector<te::Tensor>* out) {
  if (const auto* tt = t.as<TensorTypeNode>()) {
    out->push_back(te::Placeholder(dims->Shape(tt->shape), tt->dtype,
                                   absl::StrCat("in", out->size())));
    return absl::OkStatus();
  }
  if (const auto* tup = t.as<TupleTypeNode>()) {
    for (const Type& f : tup->fields) KILN_RETURN_IF_ERROR(AddPlaceholders(f, dims, out));
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("test: argument types must be tensors or tuples");
}

// Type-checks op(args...) with `attrs` and builds its compute.
inline absl::StatusOr<BuiltOp> BuildOp(const std::string& op_name, const Attrs& attrs,
                                       const std::vector<Type>& arg_types) {
  KILN_ASSIGN_OR_RETURN(Op op, GetOp(op_name));
  std::vector<Expr> args;
  for (size_t i = 0; i < arg_types.size(); ++i)
    args.push_back(MakeVar(absl::StrCat("x", i), arg_types[i]));
  KILN_ASSIGN_OR_RETURN(Call call, MakeCall(op, args, attrs));
  BuiltOp b;
  KILN_ASSIGN_OR_RETURN(b.out_type, types::InferExprType(call));
  b.dims = std::make_shared<ShapeVars>();
  for (const Type& t : arg_types) KILN_RETURN_IF_ERROR(AddPlaceholders(t, b.dims.get(), &b.inputs));
  KILN_ASSIGN_OR_RETURN(b.outputs, ComputeOp(*op->def, attrs.get(), b.inputs, b.out_type, b.dims.get()));
  return b;
}

}  // namespace kiln::lowering::tensor::testing

#endif  // KILN_LOWERING_COMPUTE_TENSOR_TEST_UTIL_H_
