// File: tests/dev_guides/form_clamp_add.cc — the FormClampAdd pass.
#include "tests/dev_guides/form_clamp_add.h"

#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "passes/infra/expr_util.h"
#include "tests/dev_guides/clamp_add.h"

namespace kiln::dev_guides {
namespace {

// A float32 / float64 tensor whose dims are all static.
bool IsStaticFloat(const TensorType& t) {
  if (!t || (t->dtype != DataType::Float(32) && t->dtype != DataType::Float(64))) return false;
  for (const Dim& d : t->shape) {
    if (!d.is_static()) return false;
  }
  return true;
}

// Bottom-up (post-order, no recursion on the C++ stack); TypedRewriter keeps
// the inferred type of each node it replaces on the new node.
class ClampAddFormer : public passes::TypedRewriter {
 protected:
  absl::StatusOr<Expr> Transform(const Expr& /*pre*/, Expr post) override {
    const CallNode* clip = passes::AsOpCall(post, "clip");
    if (clip == nullptr) return post;
    const CallNode* add = passes::AsOpCall(clip->args[0], "add");
    if (add == nullptr) return post;
    const TensorType lhs = passes::TensorTypeOf(add->args[0]);
    const TensorType rhs = passes::TensorTypeOf(add->args[1]);
    if (!IsStaticFloat(lhs) || !IsStaticFloat(rhs) || lhs->dtype != rhs->dtype) return post;
    static const ClipAttrs* const kClipDefaults = new ClipAttrs();
    const ClipAttrs* bounds = clip->attrs.as<ClipAttrs>();
    if (bounds == nullptr) bounds = kClipDefaults;
    if (!(bounds->a_min <= bounds->a_max)) return post;  // clip reports that error itself
    Ref<ClampAddAttrs> attrs(new ClampAddAttrs());
    attrs->a_min = bounds->a_min;
    attrs->a_max = bounds->a_max;
    return passes::CallOpNamed(kClampAddOp, {add->args[0], add->args[1]}, Attrs(attrs));
  }
};

absl::StatusOr<Function> RunOnFunction(const Function& f) {
  ClampAddFormer former;
  KILN_ASSIGN_OR_RETURN(Expr body, former.Rewrite(f->body));
  if (body.get() == f->body.get()) return f;  // unchanged: the same object
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

}  // namespace

passes::PassPtr FormClampAdd() {
  return passes::MakeFunctionPass({"FormClampAdd", /*opt_level=*/3, /*required=*/{"InferType"}},
                                  [](const Function& f, const Module&, const passes::PassContext&) {
                                    return RunOnFunction(f);
                                  });
}

absl::Status RegisterFormClampAdd() {
  static const absl::Status* const status = new absl::Status([]() -> absl::Status {
    KILN_RETURN_IF_ERROR(RegisterClampAdd());
    return passes::PassRegistry::Global().Register("FormClampAdd", FormClampAdd);
  }());
  return *status;
}

}  // namespace kiln::dev_guides
