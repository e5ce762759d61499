// Type relations of normalization and softmax-like operators.
//
//   nn.batch_norm(data, gamma, beta, moving_mean, moving_var)
//       -> (data's type, Tensor[(C,), dtype], Tensor[(C,), dtype]), C = data[axis]
//   nn.layer_norm(data, gamma, beta) -> data's type; gamma, beta are (data[axis],)
//   nn.softmax, nn.log_softmax       -> data's type; axis must be in range
//   nn.dropout(data)                 -> (data's type, data's type)  (out, mask)
//
// Choices: the 1-D parameter vectors must be (C,) with data's dtype; while one
// is still unknown it is assigned that type (as Relay does), so only `data`
// must be known for the relation to solve. A rank-0 data has no axis and is an
// error for every operator here except dropout.
#include <string>

#include "absl/strings/str_cat.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

// Checks (or assigns) inputs [first, last] as vectors of length `len`.
absl::Status CheckVectors(const RelationCall& call, TypeReporter& r, int first, int last,
                          const Dim& len, DataType dtype, int64_t axis) {
  for (int i = first; i <= last; ++i) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* v, TensorArg(call, i));
    if (v == nullptr) {
      KILN_RETURN_IF_ERROR(r.Assign(call.input(i), MakeTensorType({len}, dtype)));
      continue;
    }
    if (v->ndim() != 1 || !DimsCompatible(v->shape[0], len) || v->dtype != dtype)
      return call.ArgError(i, absl::StrCat("a 1-D tensor of length ", len.ToString(),
                                           " (data's axis ", axis, ") and dtype ",
                                           dtype.ToString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> BatchNormRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const BatchNormAttrs& a = AttrsOr<BatchNormAttrs>(call);
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(call, a.axis, x->ndim()));
  if (!(a.epsilon >= 0)) return call.Error(absl::StrCat("epsilon must be >= 0; got ", a.epsilon));
  const Dim c = x->shape[static_cast<size_t>(axis)];
  KILN_RETURN_IF_ERROR(CheckVectors(call, r, 1, 4, c, x->dtype, axis));
  Type vec = MakeTensorType({c}, x->dtype);
  return Solve(r, call, MakeTupleType({call.input(0), vec, vec}));
}

absl::StatusOr<bool> LayerNormRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const LayerNormAttrs& a = AttrsOr<LayerNormAttrs>(call);
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(call, a.axis, x->ndim()));
  if (!(a.epsilon >= 0)) return call.Error(absl::StrCat("epsilon must be >= 0; got ", a.epsilon));
  KILN_RETURN_IF_ERROR(
      CheckVectors(call, r, 1, 2, x->shape[static_cast<size_t>(axis)], x->dtype, axis));
  return Solve(r, call, call.input(0));
}

absl::StatusOr<bool> SoftmaxRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const SoftmaxAttrs& a = AttrsOr<SoftmaxAttrs>(call);
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(call, a.axis, x->ndim()));
  (void)axis;
  return Solve(r, call, call.input(0));
}

absl::StatusOr<bool> DropoutRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const DropoutAttrs& a = AttrsOr<DropoutAttrs>(call);
  if (!(a.rate >= 0 && a.rate < 1))
    return call.Error(absl::StrCat("rate must be in [0, 1); got ", a.rate));
  return Solve(r, call, MakeTupleType({call.input(0), call.input(0)}));
}

}  // namespace

absl::Status RegisterNormRelations() {
  absl::Status st;
  st.Update(AddRelation("nn.batch_norm", BatchNormRel));
  st.Update(AddRelation("nn.layer_norm", LayerNormRel));
  st.Update(AddRelation("nn.softmax", SoftmaxRel));
  st.Update(AddRelation("nn.log_softmax", SoftmaxRel));
  st.Update(AddRelation("nn.dropout", DropoutRel));
  return st;
}

}  // namespace kiln::types::rel
