#include "passes/simplify_inference/simplify_inference.h"

#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "passes/infra/expr_util.h"

namespace kiln::passes {
namespace {

// Expands a 1-D per-channel vector so that it broadcasts along `axis` of a
// rank-`ndim` tensor.
absl::StatusOr<Expr> ExpandToAxis(const Expr& v, int64_t axis, int64_t ndim) {
  if (axis >= ndim - 1) return v;
  auto ea = MakeRef<ExpandDimsAttrs>();
  const_cast<ExpandDimsAttrs*>(ea.get())->axis = 1;
  const_cast<ExpandDimsAttrs*>(ea.get())->num_newaxis = ndim - axis - 1;
  return CallOpNamed("expand_dims", {v}, Attrs(ea));
}

absl::StatusOr<Expr> BatchNormInference(const CallNode* bn, const Expr& fallback) {
  const auto* a = bn->attrs.as<BatchNormAttrs>();
  TensorType xt = TensorTypeOf(bn->args[0]);
  if (a == nullptr || !xt) return fallback;
  const int64_t ndim = xt->ndim();
  const int64_t axis = a->axis < 0 ? a->axis + ndim : a->axis;
  if (axis < 0 || axis >= ndim) return fallback;
  const Expr &x = bn->args[0], &gamma = bn->args[1], &beta = bn->args[2], &mean = bn->args[3],
             &var = bn->args[4];
  KILN_ASSIGN_OR_RETURN(Expr v_eps,
                        CallOpNamed("add", {var, MakeScalarConstant(xt->dtype, a->epsilon)}));
  KILN_ASSIGN_OR_RETURN(Expr std_dev, CallOpNamed("sqrt", {v_eps}));
  Expr scale;
  if (a->scale) {
    KILN_ASSIGN_OR_RETURN(scale, CallOpNamed("divide", {gamma, std_dev}));
  } else {
    KILN_ASSIGN_OR_RETURN(scale,
                          CallOpNamed("divide", {MakeScalarConstant(xt->dtype, 1.0), std_dev}));
  }
  KILN_ASSIGN_OR_RETURN(Expr neg_mean, CallOpNamed("negative", {mean}));
  KILN_ASSIGN_OR_RETURN(Expr shift, CallOpNamed("multiply", {neg_mean, scale}));
  if (a->center) {
    KILN_ASSIGN_OR_RETURN(shift, CallOpNamed("add", {shift, beta}));
  }
  KILN_ASSIGN_OR_RETURN(Expr scale_b, ExpandToAxis(scale, axis, ndim));
  KILN_ASSIGN_OR_RETURN(Expr scaled, CallOpNamed("multiply", {x, scale_b}));
  KILN_ASSIGN_OR_RETURN(Expr shift_b, ExpandToAxis(shift, axis, ndim));
  return CallOpNamed("add", {scaled, shift_b});
}

class InferenceSimplifier : public TypedRewriter {
 protected:
  absl::StatusOr<Expr> Transform(const Expr&, Expr post) override {
    const auto* t = post.as<TupleGetItemNode>();
    if (t == nullptr) return post;
    if (const CallNode* bn = AsOpCall(t->tuple, "nn.batch_norm")) {
      if (t->index == 0) return BatchNormInference(bn, post);
      if (t->index == 1) return bn->args[3];
      if (t->index == 2) return bn->args[4];
      return post;
    }
    if (const CallNode* d = AsOpCall(t->tuple, "nn.dropout")) {
      if (t->index == 0) return d->args[0];
    }
    return post;
  }
};

absl::StatusOr<Function> Run(const Function& f) {
  InferenceSimplifier r;
  KILN_ASSIGN_OR_RETURN(Expr body, r.Rewrite(f->body));
  if (body.get() == f->body.get()) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

}  // namespace

PassPtr SimplifyInference() {
  return MakeFunctionPass({"SimplifyInference", 0, {"InferType"}},
                          [](const Function& f, const Module&, const PassContext&) {
                            return Run(f);
                          });
}

}  // namespace kiln::passes
