#include "passes/dynamic_to_static/dynamic_to_static.h"

#include <optional>
#include <vector>

#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "passes/infra/expr_util.h"

namespace kiln::passes {
namespace {

// The values of a literal integer Constant of rank `ndim` (1 for shapes, 0
// for an axis), or nullopt.
std::optional<std::vector<int64_t>> IntConstant(const Expr& e, int ndim) {
  const auto* c = e.as<ConstantNode>();
  if (c == nullptr || !c->data) return std::nullopt;
  const HostTensor& t = *c->data;
  if ((!t.dtype().is_int() && !t.dtype().is_uint()) || t.ndim() != ndim) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[static_cast<size_t>(i)] = t.GetAsInt64(i);
  return v;
}

absl::StatusOr<Expr> BroadcastTo(Expr value, std::vector<int64_t> shape) {
  return CallOpNamed("broadcast_to", {std::move(value)},
                     MakeAttrs<BroadcastToAttrs>([&](BroadcastToAttrs& a) { a.shape = shape; }));
}

// The static form of one dyn.* call, or `post` itself when it stays dynamic.
absl::StatusOr<Expr> ToStatic(const CallNode* call, const Expr& pre, const Expr& post) {
  const auto* op = call->op.as<OpNode>();
  if (op == nullptr) return post;
  const std::string& name = op->name();
  const std::vector<Expr>& args = call->args;
  if (name == "dyn.reshape") {
    std::optional<std::vector<int64_t>> ns = IntConstant(args[1], 1);
    if (!ns) return post;
    const auto* da = call->attrs.as<DynReshapeAttrs>();
    const bool allowzero = da != nullptr && da->allowzero;
    return CallOpNamed("reshape", {args[0]}, MakeAttrs<ReshapeAttrs>([&](ReshapeAttrs& a) {
                         a.newshape = *ns;
                         a.allowzero = allowzero;
                       }));
  }
  if (name == "dyn.broadcast_to") {
    std::optional<std::vector<int64_t>> s = IntConstant(args[1], 1);
    if (!s) return post;
    return BroadcastTo(args[0], *s);
  }
  if (name == "dyn.zeros" || name == "dyn.ones" || name == "dyn.full") {
    const bool full = name == "dyn.full";
    std::optional<std::vector<int64_t>> s = IntConstant(args[full ? 1 : 0], 1);
    if (!s) return post;
    const auto* ia = call->attrs.as<InitOpAttrs>();
    const DataType dtype = ia != nullptr ? ia->dtype : InitOpAttrs().dtype;
    if (!full) return BroadcastTo(MakeScalarConstant(dtype, name == "dyn.zeros" ? 0.0 : 1.0), *s);
    Expr value = args[0];
    TensorType vt = TensorTypeOf(value);
    if (!vt) {
      // A rebuilt argument may carry no type yet: the original call's argument has it.
      const auto* pc = pre.as<CallNode>();
      if (pc != nullptr) vt = TensorTypeOf(pc->args[0]);
    }
    if (!vt || vt->ndim() != 0) return post;
    if (vt->dtype != dtype) {
      KILN_ASSIGN_OR_RETURN(value, CallOpNamed("cast", {value}, MakeAttrs<CastAttrs>([&](CastAttrs& a) {
                                                 a.dtype = dtype;
                                               })));
    }
    return BroadcastTo(value, *s);
  }
  if (name == "dyn.strided_slice") {
    std::optional<std::vector<int64_t>> b = IntConstant(args[1], 1);
    std::optional<std::vector<int64_t>> e = IntConstant(args[2], 1);
    std::optional<std::vector<int64_t>> s = IntConstant(args[3], 1);
    if (!b || !e || !s) return post;
    const auto* da = call->attrs.as<DynStridedSliceAttrs>();
    const std::string mode = da != nullptr ? da->slice_mode : "end";
    return CallOpNamed("strided_slice", {args[0]},
                       MakeAttrs<StridedSliceAttrs>([&](StridedSliceAttrs& a) {
                         a.begin = *b;
                         a.end = *e;
                         a.strides = *s;
                         a.slice_mode = mode;
                       }));
  }
  if (name == "dyn.expand_dims") {
    std::optional<std::vector<int64_t>> axis = IntConstant(args[1], 0);
    if (!axis) return post;
    const auto* da = call->attrs.as<DynExpandDimsAttrs>();
    const int64_t n = da != nullptr ? da->num_newaxis : 1;
    return CallOpNamed("expand_dims", {args[0]}, MakeAttrs<ExpandDimsAttrs>([&](ExpandDimsAttrs& a) {
                         a.axis = (*axis)[0];
                         a.num_newaxis = n;
                       }));
  }
  return post;
}

// Like TypedRewriter, rebuilt nodes keep the type of the node they replace,
// except the new static calls: their extents are more precise than the dyn.*
// call's `?`, so they are left for InferType to compute.
class DynamicToStaticRewriter : public ExprRewriter {
 protected:
  absl::StatusOr<Expr> PostVisit(const Expr& pre, Expr post) override {
    if (const auto* call = post.as<CallNode>()) {
      KILN_ASSIGN_OR_RETURN(Expr out, ToStatic(call, pre, post));
      if (out.get() != post.get()) return out;
    }
    if (post.get() != pre.get() && !post->checked_type() && pre->checked_type())
      post->set_checked_type(pre->checked_type());
    return post;
  }
};

absl::StatusOr<Function> Run(const Function& f) {
  DynamicToStaticRewriter r;
  KILN_ASSIGN_OR_RETURN(Expr body, r.Rewrite(f->body));
  if (body.get() == f->body.get()) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

}  // namespace

PassPtr DynamicToStatic() {
  return MakeFunctionPass({"DynamicToStatic", 3, {"InferType"}},
                          [](const Function& f, const Module&, const PassContext&) {
                            return Run(f);
                          });
}

}  // namespace kiln::passes
