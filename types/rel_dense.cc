// Type relations of nn.dense, nn.matmul and nn.batch_matmul.
//
//   nn.dense(data [..., K], weight [units, K])              -> [..., units]
//   nn.matmul(a [..., M, K] | transpose_a [..., K, M],
//             b [K, N] | transpose_b [N, K])                -> [..., M, N]
//             (a 1-D `a` without transpose_a is [K] -> [N])
//   nn.batch_matmul(x [B, M, K] | transpose_a [B, K, M],
//                   y [B, N, K] (transpose_b, default) | [B, K, N]) -> [B', M, N]
//             where B' broadcasts the two batch dims (1 with B -> B).
// Output dtype: out_dtype when set (not void), else the first input's dtype.
//
// Choices:
//   - Inputs must have the same dtype, except that two integer dtypes may
//     differ (quantized uint8 x int8).
//   - nn.dense with `units` set and an unknown weight assigns the weight
//     [units, K] (as Relay); otherwise it waits for the weight.
//   - The reduction dims K must unify (see rel_common.h); non-static ones are
//     checked at run time.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

absl::Status CheckDtypes(const RelationCall& call, const TensorTypeNode* a,
                         const TensorTypeNode* b) {
  if (a->dtype == b->dtype || (a->dtype.is_integral() && b->dtype.is_integral()))
    return absl::OkStatus();
  return call.Error(absl::StrCat("operands must have the same dtype; got ",
                                 TypeToString(call.input(0)), " and ",
                                 TypeToString(call.input(1))));
}

absl::Status CheckReduction(const RelationCall& call, const Dim& ka, const Dim& kb) {
  if (DimsCompatible(ka, kb)) return absl::OkStatus();
  return call.Error(absl::StrCat("reduction dims differ: ", ka.ToString(), " in ",
                                 TypeToString(call.input(0)), " vs ", kb.ToString(), " in ",
                                 TypeToString(call.input(1))));
}

DataType OutDtype(DataType out_dtype, const TensorTypeNode* a) {
  return out_dtype.is_void() ? a->dtype : out_dtype;
}

absl::StatusOr<bool> DenseRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const DenseAttrs& a = AttrsOr<DenseAttrs>(call);
  if (x->ndim() < 1) return call.ArgError(0, "a tensor of rank >= 1 ([..., K])");
  if (a.units && *a.units < 1) return call.Error(absl::StrCat("units must be >= 1; got ", *a.units));
  const Dim k = x->shape.back();
  auto warg = TensorArg(call, 1);
  if (!warg.ok()) return warg.status();
  const TensorTypeNode* w = *warg;
  Dim units;
  if (w == nullptr) {
    if (!a.units) return false;
    units = Dim(*a.units);
    KILN_RETURN_IF_ERROR(r.Assign(call.input(1), MakeTensorType({units, k}, x->dtype)));
  } else {
    if (w->ndim() != 2) return call.ArgError(1, "a 2-D tensor ([units, K])");
    KILN_RETURN_IF_ERROR(CheckDtypes(call, x, w));
    KILN_RETURN_IF_ERROR(CheckReduction(call, k, w->shape[1]));
    units = w->shape[0];
    if (a.units && !DimsCompatible(units, Dim(*a.units)))
      return call.Error(absl::StrCat("units=", *a.units, " but weight has ", units.ToString(),
                                     " rows"));
    if (a.units) units = Dim(*a.units);
  }
  Shape out(x->shape.begin(), x->shape.end() - 1);
  out.push_back(units);
  return Solve(r, call, MakeTensorType(std::move(out), OutDtype(a.out_dtype, x)));
}

absl::StatusOr<bool> MatmulRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  KILN_REL_TENSOR(y, call, 1);
  const MatmulAttrs& a = AttrsOr<MatmulAttrs>(call);
  if (a.units && *a.units < 1) return call.Error(absl::StrCat("units must be >= 1; got ", *a.units));
  if (x->ndim() < (a.transpose_a ? 2 : 1))
    return call.ArgError(0, a.transpose_a ? "a tensor of rank >= 2 ([..., K, M])"
                                          : "a tensor of rank >= 1 ([..., M, K])");
  if (y->ndim() != 2) return call.ArgError(1, a.transpose_b ? "a 2-D tensor ([N, K])"
                                                            : "a 2-D tensor ([K, N])");
  KILN_RETURN_IF_ERROR(CheckDtypes(call, x, y));
  const size_t xr = x->shape.size();
  const Dim ka = a.transpose_a ? x->shape[xr - 2] : x->shape[xr - 1];
  const Dim kb = a.transpose_b ? y->shape[1] : y->shape[0];
  Dim nn = a.transpose_b ? y->shape[0] : y->shape[1];
  KILN_RETURN_IF_ERROR(CheckReduction(call, ka, kb));
  if (a.units && !DimsCompatible(nn, Dim(*a.units)))
    return call.Error(absl::StrCat("units=", *a.units, " but tensor_b gives ", nn.ToString(),
                                   " output columns"));
  if (a.units) nn = Dim(*a.units);
  Shape out;
  if (a.transpose_a) {
    out.assign(x->shape.begin(), x->shape.end() - 2);
    out.push_back(x->shape[xr - 1]);
  } else {
    out.assign(x->shape.begin(), x->shape.end() - 1);
  }
  out.push_back(nn);
  return Solve(r, call, MakeTensorType(std::move(out), OutDtype(a.out_dtype, x)));
}

absl::StatusOr<bool> BatchMatmulRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  KILN_REL_TENSOR(y, call, 1);
  const BatchMatmulAttrs& a = AttrsOr<BatchMatmulAttrs>(call);
  if (x->ndim() != 3)
    return call.ArgError(0, a.transpose_a ? "a 3-D tensor ([B, K, M])" : "a 3-D tensor ([B, M, K])");
  if (y->ndim() != 3)
    return call.ArgError(1, a.transpose_b ? "a 3-D tensor ([B, N, K])" : "a 3-D tensor ([B, K, N])");
  KILN_RETURN_IF_ERROR(CheckDtypes(call, x, y));
  const Dim m = a.transpose_a ? x->shape[2] : x->shape[1];
  const Dim ka = a.transpose_a ? x->shape[1] : x->shape[2];
  const Dim kb = a.transpose_b ? y->shape[2] : y->shape[1];
  const Dim nn = a.transpose_b ? y->shape[1] : y->shape[2];
  KILN_RETURN_IF_ERROR(CheckReduction(call, ka, kb));
  std::optional<Dim> b = BroadcastDim(x->shape[0], y->shape[0]);
  if (!b)
    return call.Error(absl::StrCat("batch dims differ: ", x->shape[0].ToString(), " vs ",
                                   y->shape[0].ToString(), " (one may be 1 to broadcast)"));
  return Solve(r, call, MakeTensorType({*b, m, nn}, OutDtype(a.out_dtype, x)));
}

}  // namespace

absl::Status RegisterDenseRelations() {
  absl::Status st;
  st.Update(AddRelation("nn.dense", DenseRel));
  st.Update(AddRelation("nn.matmul", MatmulRel));
  st.Update(AddRelation("nn.batch_matmul", BatchMatmulRel));
  return st;
}

}  // namespace kiln::types::rel
