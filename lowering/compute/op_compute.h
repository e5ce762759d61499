// File: lowering/compute/op_compute.h
//
// The lowering facet of an operator: its compute definition as tensor
// expressions (lowering/te/te.h), attached to the operator registry under the
// key "Compute" (ir/op.h), as the interpreter attaches "Interpret".
//
//   RegisterCoreComputes();   // idempotent, thread-safe
//   KILN_ASSIGN_OR_RETURN(std::vector<te::Tensor> outs,
//                         ComputeOp(*op, attrs, {data, weight}, out_type, &dims));
//
// A compute definition must agree with the interpreter kernel of the same op
// (interpreter/kernels_*.cc) bit for bit where the interpreter is exact and
// within float rounding elsewhere: same attributes and defaults, same integer
// semantics (truncating divide/mod, floor_divide/floor_mod floor), same
// saturating float->int casts, NaN rules of maximum/minimum and max/min
// reductions, round half to even, and so on (interpreter/kernels.h lists them).
// Float16/bfloat16 arithmetic is done in float32 and rounded on store.
//
// Output shapes come from the call's checked type (`out_type`), so every
// attribute-dependent shape rule lives once, in types/. Symbolic dims become
// tir Vars shared by name through `ShapeVars`.
#ifndef KILN_LOWERING_COMPUTE_OP_COMPUTE_H_
#define KILN_LOWERING_COMPUTE_OP_COMPUTE_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attrs.h"
#include "ir/dim.h"
#include "ir/op.h"
#include "ir/type.h"
#include "lowering/te/te.h"

namespace kiln::lowering {

// Symbolic size variables of one lowered function, by name (`n` in two types
// is the same tir Var). `?` dims each get a fresh var.
class ShapeVars {
 public:
  tir::PrimExpr Get(const Dim& d);
  std::vector<tir::PrimExpr> Shape(const std::vector<Dim>& shape);
  const std::map<std::string, tir::Var>& vars() const { return vars_; }

 private:
  std::map<std::string, tir::Var> vars_;
  int anonymous_ = 0;
};

struct ComputeCtx {
  const OpDef& op;
  const AttrsNode* attrs;                  // null = the op's defaults
  const std::vector<te::Tensor>& inputs;   // a tuple argument (concatenate) is flattened
  // The call's output(s) from its checked type; a tuple type is flattened.
  std::vector<std::vector<tir::PrimExpr>> out_shapes;
  std::vector<DataType> out_dtypes;
  ShapeVars* dims;

  // "op_name: msg" as an InvalidArgument / Unimplemented status.
  absl::Status Error(absl::string_view msg) const;
  absl::Status Unsupported(absl::string_view msg) const;
  template <typename A>
  const A& Attrs() const {
    if (attrs != nullptr && A::IsInstance(attrs)) return *static_cast<const A*>(attrs);
    static const A* const defaults = new A();
    return *defaults;
  }
};

// One or more output tensors (several for tuple-returning ops, in tuple order).
using FTCompute = std::function<absl::StatusOr<std::vector<te::Tensor>>(const ComputeCtx&)>;

inline constexpr absl::string_view kComputeFacet = "Compute";

// Attaches every core operator's compute (tensor ops and nn ops).
void RegisterCoreComputes();

// Looks up the op's "Compute" facet and runs it. An op without one is an
// Unimplemented status naming it.
absl::StatusOr<std::vector<te::Tensor>> ComputeOp(const OpDef& op, const AttrsNode* attrs,
                                                  const std::vector<te::Tensor>& inputs,
                                                  const Type& out_type, ShapeVars* dims);

// Flattens a tensor or tuple type into shapes and dtypes (error for other types).
absl::Status FlattenOutputType(const Type& t, ShapeVars* dims,
                               std::vector<std::vector<tir::PrimExpr>>* shapes,
                               std::vector<DataType>* dtypes);

}  // namespace kiln::lowering

#endif  // KILN_LOWERING_COMPUTE_OP_COMPUTE_H_
