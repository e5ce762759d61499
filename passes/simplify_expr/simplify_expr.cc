#include "passes/simplify_expr/simplify_expr.h"

#include <numeric>
#include <optional>
#include <vector>

#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "passes/infra/expr_util.h"

namespace kiln::passes {
namespace {

// `e` is a constant whose every element equals `v`.
bool IsConstantAll(const Expr& e, double v) {
  const auto* c = e.as<ConstantNode>();
  if (c == nullptr || !c->data) return false;
  for (int64_t i = 0; i < c->data->num_elements(); ++i)
    if (c->data->GetAsDouble(i) != v) return false;
  return true;
}

bool SameType(const Expr& a, const Expr& b) {
  return a->checked_type() && b->checked_type() && TypeEqual(a->checked_type(), b->checked_type());
}

// Converting `from` to `to` keeps every value exactly.
bool Lossless(DataType from, DataType to) {
  if (from.lanes() != to.lanes()) return false;
  if (from == to || from.is_bool()) return true;
  auto mantissa = [](DataType t) {
    if (t.code() == DTypeCode::kBFloat) return 8;
    return t.bits() == 16 ? 11 : t.bits() == 32 ? 24 : t.bits() == 64 ? 53 : 0;
  };
  if (to.is_float()) {
    if (from.is_float()) {
      if (from.code() == DTypeCode::kBFloat) return to.bits() >= 32;
      if (to.code() == DTypeCode::kBFloat) return false;
      return to.bits() >= from.bits();
    }
    const int value_bits = from.is_int() ? from.bits() - 1 : from.bits();
    return from.is_integral() && value_bits <= mantissa(to);
  }
  if (to.is_int()) return (from.is_int() && to.bits() >= from.bits()) ||
                          (from.is_uint() && to.bits() > from.bits());
  if (to.is_uint()) return from.is_uint() && to.bits() >= from.bits();
  return false;
}

absl::StatusOr<Expr> Typed(absl::StatusOr<Expr> e, const Expr& like) {
  if (e.ok() && like->checked_type()) (*e)->set_checked_type(like->checked_type());
  return e;
}

// The permutation a transpose applies, normalised; nullopt if unknown.
std::optional<std::vector<int64_t>> Perm(const CallNode* c) {
  TensorType t = TensorTypeOf(c->args[0]);
  if (!t) return std::nullopt;
  const int64_t n = t->ndim();
  std::vector<int64_t> p(n);
  const auto* a = c->attrs.as<TransposeAttrs>();
  if (a == nullptr || !a->axes.has_value()) {
    for (int64_t i = 0; i < n; ++i) p[i] = n - 1 - i;
    return p;
  }
  if (static_cast<int64_t>(a->axes->size()) != n) return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = (*a->axes)[i];
    p[i] = v < 0 ? v + n : v;
    if (p[i] < 0 || p[i] >= n) return std::nullopt;
  }
  return p;
}

class Simplifier : public TypedRewriter {
 protected:
  absl::StatusOr<Expr> Transform(const Expr& pre, Expr post) override {
    const auto* c = post.as<CallNode>();
    if (c == nullptr || c->op->kind != ExprKind::kOp) return post;
    const std::string& op = c->op.as<OpNode>()->name();
    if (op == "multiply" || op == "add" || op == "subtract" || op == "divide") {
      const Expr& l = c->args[0];
      const Expr& r = c->args[1];
      const double unit = (op == "multiply" || op == "divide") ? 1.0 : 0.0;
      if (IsConstantAll(r, unit) && SameType(pre, l)) return l;
      if ((op == "multiply" || op == "add") && IsConstantAll(l, unit) && SameType(pre, r)) return r;
      return post;
    }
    if (op == "reshape") {
      const Expr& x = c->args[0];
      if (SameType(pre, x)) return x;
      if (const CallNode* inner = AsOpCall(x, "reshape")) {
        auto attrs = Ref<AttrsNode>(c->attrs->Clone());
        auto* ra = static_cast<ReshapeAttrs*>(attrs.get());
        bool relative = false;
        for (int64_t d : ra->newshape) relative = relative || d == 0 || d < -1;
        if (relative) {
          TensorType out = TensorTypeOf(pre);
          std::optional<std::vector<int64_t>> shape;
          if (out) shape = StaticShape(out->shape);
          if (!shape) return post;
          ra->newshape = *shape;
          ra->allowzero = false;
        }
        if (SameType(pre, inner->args[0])) return inner->args[0];
        return Typed(CallOpNamed("reshape", {inner->args[0]}, Attrs(attrs)), pre);
      }
      return post;
    }
    if (op == "transpose") {
      const CallNode* inner = AsOpCall(c->args[0], "transpose");
      if (inner == nullptr) return post;
      std::optional<std::vector<int64_t>> p = Perm(inner), q = Perm(c);
      if (!p || !q || p->size() != q->size()) return post;
      std::vector<int64_t> composed(q->size());
      bool identity = true;
      for (size_t i = 0; i < q->size(); ++i) {
        composed[i] = (*p)[(*q)[i]];
        identity = identity && composed[i] == static_cast<int64_t>(i);
      }
      if (identity) return inner->args[0];
      auto attrs = Ref<AttrsNode>(c->attrs->Clone());
      static_cast<TransposeAttrs*>(attrs.get())->axes = composed;
      return Typed(CallOpNamed("transpose", {inner->args[0]}, Attrs(attrs)), pre);
    }
    if (op == "cast") {
      const Expr& x = c->args[0];
      if (SameType(pre, x)) return x;
      const CallNode* inner = AsOpCall(x, "cast");
      if (inner == nullptr) return post;
      TensorType src = TensorTypeOf(inner->args[0]);
      TensorType mid = TensorTypeOf(x);
      if (!src || !mid || !Lossless(src->dtype, mid->dtype)) return post;
      if (SameType(pre, inner->args[0])) return inner->args[0];
      return Typed(CallOpNamed("cast", {inner->args[0]}, c->attrs), pre);
    }
    return post;
  }
};

absl::StatusOr<Function> Run(const Function& f) {
  Simplifier s;
  KILN_ASSIGN_OR_RETURN(Expr body, s.Rewrite(f->body));
  if (body.get() == f->body.get()) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

}  // namespace

PassPtr SimplifyExpr() {
  return MakeFunctionPass({"SimplifyExpr", 3, {"InferType"}},
                          [](const Function& f, const Module&, const PassContext&) {
                            return Run(f);
                          });
}

}  // namespace kiln::passes
