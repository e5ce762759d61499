// File: lowering/compute/op_compute.cc
#include "lowering/compute/op_compute.h"

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace kiln::lowering {

tir::PrimExpr ShapeVars::Get(const Dim& d) {
  if (d.is_static()) return tir::IntImm(d.value());
  if (d.is_any()) {
    std::string name = absl::StrCat("any_dim", anonymous_++);
    tir::Var v = tir::MakeVar(name);
    vars_[name] = v;
    return v;
  }
  const DimExprNode* e = d.expr();
  if (e == nullptr) return tir::IntImm(0);
  if (e->op == DimExprNode::Op::kVar) {
    auto it = vars_.find(e->name);
    if (it != vars_.end()) return it->second;
    tir::Var v = tir::MakeVar(e->name);
    vars_[e->name] = v;
    return v;
  }
  // An arithmetic dim: rebuild it from its operands.
  std::vector<tir::PrimExpr> ops = {Get(e->a), Get(e->b)};
  switch (e->op) {
    case DimExprNode::Op::kAdd: return ops[0] + ops[1];
    case DimExprNode::Op::kSub: return ops[0] - ops[1];
    case DimExprNode::Op::kMul: return ops[0] * ops[1];
    case DimExprNode::Op::kFloorDiv: return tir::FloorDiv(ops[0], ops[1]);
    case DimExprNode::Op::kFloorMod: return tir::FloorMod(ops[0], ops[1]);
    default: return tir::IntImm(0);
  }
}

std::vector<tir::PrimExpr> ShapeVars::Shape(const std::vector<Dim>& shape) {
  std::vector<tir::PrimExpr> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) out.push_back(Get(d));
  return out;
}

absl::Status ComputeCtx::Error(absl::string_view msg) const {
  return absl::InvalidArgumentError(absl::StrCat(op.name, ": ", msg));
}

absl::Status ComputeCtx::Unsupported(absl::string_view msg) const {
  return absl::UnimplementedError(absl::StrCat(op.name, ": ", msg));
}

absl::Status FlattenOutputType(const Type& t, ShapeVars* dims,
                               std::vector<std::vector<tir::PrimExpr>>* shapes,
                               std::vector<DataType>* dtypes) {
  if (const auto* tt = t.as<TensorTypeNode>()) {
    shapes->push_back(dims->Shape(tt->shape));
    dtypes->push_back(tt->dtype);
    return absl::OkStatus();
  }
  if (const auto* tup = t.as<TupleTypeNode>()) {
    for (const Type& f : tup->fields) KILN_RETURN_IF_ERROR(FlattenOutputType(f, dims, shapes, dtypes));
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("lowering: an operator result must be a tensor or a tuple of tensors");
}

absl::StatusOr<std::vector<te::Tensor>> ComputeOp(const OpDef& op, const AttrsNode* attrs,
                                                  const std::vector<te::Tensor>& inputs,
                                                  const Type& out_type, ShapeVars* dims) {
  RegisterCoreComputes();
  const FTCompute* f = OpRegistry::Global().GetFacet<FTCompute>(&op, kComputeFacet);
  if (f == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat(op.name, ": no compute definition (lowering facet \"Compute\")"));
  }
  ComputeCtx ctx{op, attrs, inputs, {}, {}, dims};
  KILN_RETURN_IF_ERROR(FlattenOutputType(out_type, dims, &ctx.out_shapes, &ctx.out_dtypes));
  return (*f)(ctx);
}

}  // namespace kiln::lowering
