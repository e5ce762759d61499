// File: lowering/compute/nn/norm.cc — nn.batch_norm, nn.layer_norm,
// nn.softmax, nn.log_softmax.
//
// Arithmetic runs in MathType(dtype) (float32 for 16-bit floats, float64 for
// integers) and is converted once at the end, as the interpreter rounds once.
//
//   nn.batch_norm (inference, as the interpreter and Relay):
//     T_batch_norm[i] = (x[i] - mean[c]) * (gamma[c] / sqrt(var[c] + eps)) + beta[c]
//     (gamma omitted without `scale`, beta without `center`; c = i[axis]),
//     tag "broadcast"; the 2nd and 3rd outputs are copies of moving_mean and
//     moving_var (T_batch_norm_mean / T_batch_norm_var, tag "elemwise").
//   nn.layer_norm (two-pass, biased variance, like the interpreter):
//     T_layer_norm_sum = sum over axis of x                     (comm_reduce)
//     T_layer_norm_sqsum = sum over axis of (x - sum/n)^2       (comm_reduce)
//     T_layer_norm = (x - sum/n) / sqrt(sqsum/n + eps) * gamma + beta  (injective)
//   nn.softmax:
//     T_softmax_maxelem = max over axis (an infinite max counts as 0, as the
//                         interpreter's, so a row holding +inf is not all NaN)
//     T_softmax_exp = exp(x - max)                              (elemwise)
//     T_softmax_expsum = sum over axis of T_softmax_exp         (comm_reduce)
//     T_softmax_norm = T_softmax_exp / T_softmax_expsum         (softmax_output)
//   nn.log_softmax:
//     T_log_softmax_maxelem, T_log_softmax_expsum = sum of exp(x - max),
//     T_log_softmax_norm = (x - max) - log(expsum)              (log_softmax_output)
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

// A copy of t (an output must be a computed tensor, not an input).
te::Tensor Copy(const te::Tensor& t, absl::string_view name) {
  return te::Compute(
      t.shape(), [=](const std::vector<tir::Var>& idx) { return t(idx); }, name, "elemwise");
}

absl::Status CheckVector(const ComputeCtx& ctx, size_t i, const te::Tensor& x) {
  const te::Tensor& v = ctx.inputs[i];
  if (v.ndim() != 1 || v.dtype() != x.dtype())
    return ctx.Error(absl::StrCat("argument ", i, " (", ctx.op.arguments[i].name,
                                  ") must be a 1-D tensor of dtype ", x.dtype().ToString(), "; got ",
                                  v.ndim(), "-D ", v.dtype().ToString()));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<te::Tensor>> BatchNorm(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 5));
  const BatchNormAttrs& a = ctx.Attrs<BatchNormAttrs>();
  const te::Tensor& x = ctx.inputs[0];
  KILN_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, a.axis, x.ndim()));
  for (size_t i = 1; i <= 4; ++i) KILN_RETURN_IF_ERROR(CheckVector(ctx, i, x));
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {x.ndim(), 1, 1}));
  const te::Tensor &gamma = ctx.inputs[1], &beta = ctx.inputs[2], &mean = ctx.inputs[3],
                   &var = ctx.inputs[4];
  const DataType mt = MathType(x.dtype());
  const DataType out_dt = ctx.out_dtypes[0];
  const double eps = a.epsilon;
  const bool scale = a.scale, center = a.center;
  te::Tensor out = te::Compute(
      ctx.out_shapes[0],
      [&](const std::vector<tir::Var>& idx) {
        const PrimExpr c = idx[static_cast<size_t>(axis)];
        const PrimExpr num = scale ? tir::Cast(mt, gamma({c})) : tir::MakeConst(mt, 1);
        const PrimExpr den =
            tir::Call(mt, "sqrt", {tir::Add(tir::Cast(mt, var({c})), tir::FloatImm(eps, mt))});
        PrimExpr v = tir::Mul(tir::Sub(tir::Cast(mt, x(idx)), tir::Cast(mt, mean({c}))),
                              tir::Div(num, den));
        if (center) v = tir::Add(v, tir::Cast(mt, beta({c})));
        return tir::Cast(out_dt, v);
      },
      "T_batch_norm", "broadcast",
      {{"axis", absl::StrCat(axis)}, {"epsilon", absl::StrCat(eps)}});
  return std::vector<te::Tensor>{out, Copy(mean, "T_batch_norm_mean"),
                                 Copy(var, "T_batch_norm_var")};
}

absl::StatusOr<std::vector<te::Tensor>> LayerNorm(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const LayerNormAttrs& a = ctx.Attrs<LayerNormAttrs>();
  const te::Tensor& x = ctx.inputs[0];
  KILN_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, a.axis, x.ndim()));
  for (size_t i = 1; i <= 2; ++i) KILN_RETURN_IF_ERROR(CheckVector(ctx, i, x));
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {x.ndim()}));
  const te::Tensor &gamma = ctx.inputs[1], &beta = ctx.inputs[2];
  const DataType mt = MathType(x.dtype());
  const DataType out_dt = ctx.out_dtypes[0];
  const size_t ax = static_cast<size_t>(axis);
  const PrimExpr len = x.shape()[ax];
  const std::vector<PrimExpr> red_shape = DropAxis(x.shape(), axis);
  // x at the reduced index `ri` with `j` on the axis.
  auto at = [&](const std::vector<PrimExpr>& ri, const PrimExpr& j) {
    std::vector<PrimExpr> i(ri.begin(), ri.end());
    i.insert(i.begin() + axis, j);
    return tir::Cast(mt, x(i));
  };
  const tir::IterVar k1 = te::ReduceAxis({IntImm(0), len}, "k");
  te::Tensor sum = te::Compute(
      red_shape,
      [&](const std::vector<tir::Var>& ri) { return te::Sum(at(ri, k1->var), {k1}); },
      "T_layer_norm_sum", "comm_reduce");
  const PrimExpr n = tir::Cast(mt, len);
  const tir::IterVar k2 = te::ReduceAxis({IntImm(0), len}, "k");
  te::Tensor sqsum = te::Compute(
      red_shape,
      [&](const std::vector<tir::Var>& ri) {
        const PrimExpr d = tir::Sub(at(ri, k2->var), tir::Div(sum(ri), n));
        return te::Sum(tir::Mul(d, d), {k2});
      },
      "T_layer_norm_sqsum", "comm_reduce");
  const double eps = a.epsilon;
  const bool scale = a.scale, center = a.center;
  te::Tensor out = te::Compute(
      x.shape(),
      [&](const std::vector<tir::Var>& idx) {
        const std::vector<PrimExpr> ri = DropAxis(idx, axis);
        const PrimExpr mean = tir::Div(sum(ri), n);
        const PrimExpr var = tir::Div(sqsum(ri), n);
        const PrimExpr rstd = tir::Div(tir::MakeConst(mt, 1),
                                       tir::Call(mt, "sqrt", {tir::Add(var, tir::FloatImm(eps, mt))}));
        PrimExpr v = tir::Mul(tir::Sub(tir::Cast(mt, x(idx)), mean), rstd);
        if (scale) v = tir::Mul(v, tir::Cast(mt, gamma({idx[ax]})));
        if (center) v = tir::Add(v, tir::Cast(mt, beta({idx[ax]})));
        return tir::Cast(out_dt, v);
      },
      "T_layer_norm", "injective", {{"axis", absl::StrCat(axis)}, {"epsilon", absl::StrCat(eps)}});
  return std::vector<te::Tensor>{out};
}

absl::StatusOr<std::vector<te::Tensor>> Softmax(const ComputeCtx& ctx, bool log) {
  KILN_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  KILN_ASSIGN_OR_RETURN(int axis, NormAxis(ctx, ctx.Attrs<SoftmaxAttrs>().axis, x.ndim()));
  KILN_RETURN_IF_ERROR(CheckOutputs(ctx, {x.ndim()}));
  const DataType mt = MathType(x.dtype());
  const DataType out_dt = ctx.out_dtypes[0];
  const size_t ax = static_cast<size_t>(axis);
  const PrimExpr len = x.shape()[ax];
  const std::vector<PrimExpr> red_shape = DropAxis(x.shape(), axis);
  const std::string prefix = log ? "T_log_softmax" : "T_softmax";
  auto at = [&](const std::vector<PrimExpr>& ri, const PrimExpr& j) {
    std::vector<PrimExpr> i(ri.begin(), ri.end());
    i.insert(i.begin() + axis, j);
    return tir::Cast(mt, x(i));
  };
  const tir::IterVar k1 = te::ReduceAxis({IntImm(0), len}, "k");
  te::Tensor maxelem = te::Compute(
      red_shape,
      [&](const std::vector<tir::Var>& ri) { return te::Max(at(ri, k1->var), {k1}); },
      prefix + "_maxelem", "comm_reduce");
  // The max to subtract: an infinite max (all -inf, or some +inf) counts as 0.
  auto shift = [&](const std::vector<PrimExpr>& ri) {
    const PrimExpr m = maxelem(ri);
    return tir::Select(IsInf(m), tir::MakeConst(mt, 0), m);
  };
  const tir::IterVar k2 = te::ReduceAxis({IntImm(0), len}, "k");
  const std::map<std::string, std::string> attrs = {{"axis", absl::StrCat(axis)}};
  if (log) {
    te::Tensor expsum = te::Compute(
        red_shape,
        [&](const std::vector<tir::Var>& ri) {
          return te::Sum(tir::Call(mt, "exp", {tir::Sub(at(ri, k2->var), shift(ri))}), {k2});
        },
        prefix + "_expsum", "comm_reduce");
    te::Tensor out = te::Compute(
        x.shape(),
        [&](const std::vector<tir::Var>& idx) {
          const std::vector<PrimExpr> ri = DropAxis(idx, axis);
          const PrimExpr z = tir::Sub(tir::Cast(mt, x(idx)), shift(ri));
          return tir::Cast(out_dt, tir::Sub(z, tir::Call(mt, "log", {expsum(ri)})));
        },
        prefix + "_norm", "log_softmax_output", attrs);
    return std::vector<te::Tensor>{out};
  }
  te::Tensor exp = te::Compute(
      x.shape(),
      [&](const std::vector<tir::Var>& idx) {
        return tir::Call(mt, "exp", {tir::Sub(tir::Cast(mt, x(idx)), shift(DropAxis(idx, axis)))});
      },
      prefix + "_exp", "elemwise");
  te::Tensor expsum = te::Compute(
      red_shape,
      [&](const std::vector<tir::Var>& ri) {
        std::vector<PrimExpr> i(ri.begin(), ri.end());
        i.insert(i.begin() + axis, k2->var);
        return te::Sum(exp(i), {k2});
      },
      prefix + "_expsum", "comm_reduce");
  te::Tensor out = te::Compute(
      x.shape(),
      [&](const std::vector<tir::Var>& idx) {
        return tir::Cast(out_dt, tir::Div(exp(idx), expsum(DropAxis(idx, axis))));
      },
      prefix + "_norm", "softmax_output", attrs);
  return std::vector<te::Tensor>{out};
}

}  // namespace

void RegisterNormComputes() {
  AddCompute("nn.batch_norm", BatchNorm);
  AddCompute("nn.layer_norm", LayerNorm);
  AddCompute("nn.softmax", [](const ComputeCtx& c) { return Softmax(c, false); });
  AddCompute("nn.log_softmax", [](const ComputeCtx& c) { return Softmax(c, true); });
}

}  // namespace kiln::lowering::nn_internal
