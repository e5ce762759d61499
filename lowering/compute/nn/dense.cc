// File: lowering/compute/nn/dense.cc — nn.dense, nn.matmul, nn.batch_matmul.
//
// Each is one reduction over K (axis "k") in the accumulator type
// (ProductAccType), plus a cast stage to out_dtype when they differ:
//   T_dense[..., u]       = sum_k data[..., k] * weight[u, k]           tag "dense"
//   T_matmul[..., m, n]   = sum_k a[..., m, k] (a[..., k, m] with transpose_a)
//                                 * b[k, n] (b[n, k] with transpose_b)  tag "matmul"
//                         (a 1-D `a` without transpose_a: T_matmul[n])
//   T_batch_matmul[b, m, n] = sum_k x[bx, m, k] (x[bx, k, m]) * y[by, n, k] (y[by, k, n])
//                         where a batch extent of (static) 1 broadcasts  tag "batch_matmul"
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/compute/nn/nn_util.h"

namespace kiln::lowering::nn_internal {
namespace {

using tir::IntImm;

absl::Status CheckDtypes(const ComputeCtx& ctx, const te::Tensor& a, const te::Tensor& b) {
  if (a.dtype() == b.dtype() || (a.dtype().is_integral() && b.dtype().is_integral()))
    return absl::OkStatus();
  return ctx.Error(absl::StrCat("operands must have the same dtype; got ", a.dtype().ToString(),
                                " and ", b.dtype().ToString()));
}

absl::StatusOr<std::vector<te::Tensor>> Dense(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const DenseAttrs& a = ctx.Attrs<DenseAttrs>();
  const te::Tensor& x = ctx.inputs[0];
  const te::Tensor& w = ctx.inputs[1];
  if (x.ndim() < 1 || w.ndim() != 2)
    return ctx.Error(absl::StrCat("expects data [..., K] and weight [units, K]; got ", x.ndim(),
                                  "-D and ", w.ndim(), "-D"));
  KILN_RETURN_IF_ERROR(CheckDtypes(ctx, x, w));
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {x.ndim()}));
  int64_t units = 0;
  if (a.units && tir::IsConstInt(w.shape()[0], &units) && units != *a.units)
    return ctx.Error(absl::StrCat("units=", *a.units, " but weight has ", units, " rows"));
  const DataType out_dt = ctx.out_dtypes[0];
  const DataType acc = ProductAccType(x.dtype(), w.dtype(), out_dt);
  const tir::IterVar k = te::ReduceAxis({IntImm(0), w.shape()[1]}, "k");
  te::Tensor out = te::Compute(
      ctx.out_shapes[0],
      [&](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> xi(idx.begin(), idx.end() - 1);
        xi.push_back(k->var);
        return te::Sum(tir::Mul(tir::Cast(acc, x(xi)), tir::Cast(acc, w({idx.back(), k->var}))),
                       {k});
      },
      "T_dense", "dense", {{"out_dtype", out_dt.ToString()}});
  return std::vector<te::Tensor>{CastStage(out, out_dt, "T_dense_cast")};
}

absl::StatusOr<std::vector<te::Tensor>> Matmul(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const MatmulAttrs& a = ctx.Attrs<MatmulAttrs>();
  const te::Tensor& x = ctx.inputs[0];
  const te::Tensor& y = ctx.inputs[1];
  const bool ta = a.transpose_a, tb = a.transpose_b;
  const int r = x.ndim();
  if (r < (ta ? 2 : 1) || y.ndim() != 2)
    return ctx.Error(absl::StrCat("expects tensor_a [..., M, K] and tensor_b [K, N]; got ", r,
                                  "-D and ", y.ndim(), "-D"));
  KILN_RETURN_IF_ERROR(CheckDtypes(ctx, x, y));
  // Output rank: [..., M, N]; a 1-D tensor_a (no transpose) gives [N].
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {r == 1 ? 1 : r}));
  int64_t n_static = 0;
  if (a.units && tir::IsConstInt(y.shape()[tb ? 0 : 1], &n_static) && n_static != *a.units)
    return ctx.Error(absl::StrCat("units=", *a.units, " but tensor_b gives ", n_static, " columns"));
  const DataType out_dt = ctx.out_dtypes[0];
  const DataType acc = ProductAccType(x.dtype(), y.dtype(), out_dt);
  const PrimExpr K = ta ? x.shape()[static_cast<size_t>(r - 2)] : x.shape()[static_cast<size_t>(r - 1)];
  const tir::IterVar k = te::ReduceAxis({IntImm(0), K}, "k");
  te::Tensor out = te::Compute(
      ctx.out_shapes[0],
      [&](const std::vector<tir::Var>& idx) {
        const size_t R = idx.size();
        const PrimExpr& n = idx[R - 1];
        std::vector<PrimExpr> xi;
        if (r == 1) {
          xi = {k->var};
        } else {
          xi.assign(idx.begin(), idx.end() - 2);
          const PrimExpr& m = idx[R - 2];
          if (ta) xi.insert(xi.end(), {k->var, m});
          else xi.insert(xi.end(), {m, k->var});
        }
        const std::vector<PrimExpr> yi = tb ? std::vector<PrimExpr>{n, k->var}
                                            : std::vector<PrimExpr>{k->var, n};
        return te::Sum(tir::Mul(tir::Cast(acc, x(xi)), tir::Cast(acc, y(yi))), {k});
      },
      "T_matmul", "matmul",
      {{"transpose_a", ta ? "1" : "0"},
       {"transpose_b", tb ? "1" : "0"},
       {"out_dtype", out_dt.ToString()}});
  return std::vector<te::Tensor>{CastStage(out, out_dt, "T_matmul_cast")};
}

absl::StatusOr<std::vector<te::Tensor>> BatchMatmul(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const BatchMatmulAttrs& a = ctx.Attrs<BatchMatmulAttrs>();
  const te::Tensor& x = ctx.inputs[0];
  const te::Tensor& y = ctx.inputs[1];
  if (x.ndim() != 3 || y.ndim() != 3)
    return ctx.Error(absl::StrCat("expects 3-D x and y; got ", x.ndim(), "-D and ", y.ndim(), "-D"));
  KILN_RETURN_IF_ERROR(CheckDtypes(ctx, x, y));
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {3}));
  const bool ta = a.transpose_a, tb = a.transpose_b;
  const DataType out_dt = ctx.out_dtypes[0];
  const DataType acc = ProductAccType(x.dtype(), y.dtype(), out_dt);
  const PrimExpr K = ta ? x.shape()[1] : x.shape()[2];
  // A batch extent known to be 1 broadcasts against the other operand's.
  const bool bx1 = IsConst(x.shape()[0], 1), by1 = IsConst(y.shape()[0], 1);
  const tir::IterVar k = te::ReduceAxis({IntImm(0), K}, "k");
  te::Tensor out = te::Compute(
      ctx.out_shapes[0],
      [&](const std::vector<tir::Var>& idx) {
        const PrimExpr bx = bx1 ? IntImm(0) : idx[0];
        const PrimExpr by = by1 ? IntImm(0) : idx[0];
        const std::vector<PrimExpr> xi = ta ? std::vector<PrimExpr>{bx, k->var, idx[1]}
                                            : std::vector<PrimExpr>{bx, idx[1], k->var};
        const std::vector<PrimExpr> yi = tb ? std::vector<PrimExpr>{by, idx[2], k->var}
                                            : std::vector<PrimExpr>{by, k->var, idx[2]};
        return te::Sum(tir::Mul(tir::Cast(acc, x(xi)), tir::Cast(acc, y(yi))), {k});
      },
      "T_batch_matmul", "batch_matmul",
      {{"transpose_a", ta ? "1" : "0"},
       {"transpose_b", tb ? "1" : "0"},
       {"out_dtype", out_dt.ToString()}});
  return std::vector<te::Tensor>{CastStage(out, out_dt, "T_batch_matmul_cast")};
}

}  // namespace

void RegisterDenseComputes() {
  AddCompute("nn.dense", Dense);
  AddCompute("nn.matmul", Matmul);
  AddCompute("nn.batch_matmul", BatchMatmul);
}

}  // namespace kiln::lowering::nn_internal
