#include "passes/canonicalize_ops/canonicalize_ops.h"

#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "passes/infra/expr_util.h"

namespace kiln::passes {
namespace {

class Canonicalizer : public TypedRewriter {
 protected:
  absl::StatusOr<Expr> Transform(const Expr&, Expr post) override {
    const CallNode* c = AsOpCall(post, "nn.bias_add");
    if (c == nullptr) return post;
    TensorType t = TensorTypeOf(c->args[0]);
    const auto* a = c->attrs.as<BiasAddAttrs>();
    if (!t || a == nullptr) return post;
    const int64_t ndim = t->ndim();
    const int64_t axis = a->axis < 0 ? a->axis + ndim : a->axis;
    if (axis < 0 || axis >= ndim) return post;
    Expr bias = c->args[1];
    if (axis < ndim - 1) {
      auto ea = MakeRef<ExpandDimsAttrs>();
      const_cast<ExpandDimsAttrs*>(ea.get())->axis = 1;
      const_cast<ExpandDimsAttrs*>(ea.get())->num_newaxis = ndim - axis - 1;
      KILN_ASSIGN_OR_RETURN(bias, CallOpNamed("expand_dims", {bias}, Attrs(ea)));
    }
    return CallOpNamed("add", {c->args[0], bias});
  }
};

absl::StatusOr<Function> Run(const Function& f) {
  Canonicalizer r;
  KILN_ASSIGN_OR_RETURN(Expr body, r.Rewrite(f->body));
  if (body.get() == f->body.get()) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

}  // namespace

PassPtr CanonicalizeOps() {
  return MakeFunctionPass({"CanonicalizeOps", 3, {"InferType"}},
                          [](const Function& f, const Module&, const PassContext&) {
                            return Run(f);
                          });
}

}  // namespace kiln::passes
