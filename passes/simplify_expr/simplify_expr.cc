#include "passes/simplify_expr/simplify_expr.h"

#include <limits>
#include <numeric>
#include <string>
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

// Padding as {top, left, bottom, right} from a 1-, 2- or 4-element list.
std::optional<std::vector<int64_t>> Padding4(const std::vector<int64_t>& p) {
  if (p.size() == 1) return std::vector<int64_t>{p[0], p[0], p[0], p[0]};
  if (p.size() == 2) return std::vector<int64_t>{p[0], p[1], p[0], p[1]};
  if (p.size() == 4) return p;
  return std::nullopt;
}

// The spatial padding {top, left, bottom, right} of `pad` (an nn.pad call)
// when it is a constant-mode pad of a 4-D NCHW tensor by `value` on H and W
// only, every width non-negative; nullopt otherwise.
std::optional<std::vector<int64_t>> SpatialPad(const CallNode* pad, double value) {
  const auto* a = pad->attrs.as<PadAttrs>();
  TensorType t = TensorTypeOf(pad->args[0]);
  if (a == nullptr || a->pad_mode != "constant" || pad->args.size() != 2 || !t ||
      t->ndim() != 4 || a->pad_width.size() != 4 || !IsConstantAll(pad->args[1], value)) {
    return std::nullopt;
  }
  for (const auto& w : a->pad_width) {
    if (w.size() != 2 || w[0] < 0 || w[1] < 0) return std::nullopt;
  }
  if (a->pad_width[0] != std::vector<int64_t>{0, 0} ||
      a->pad_width[1] != std::vector<int64_t>{0, 0}) {
    return std::nullopt;
  }
  return std::vector<int64_t>{a->pad_width[2][0], a->pad_width[3][0], a->pad_width[2][1],
                              a->pad_width[3][1]};
}

// conv2d / avg_pool2d / max_pool2d (NCHW) of an explicitly padded input
// (ONNX exporters write avg_pool2d(padding=1, count_include_pad=True) as
// Pad + AveragePool, TensorFlow models a Pad before a Conv) with the padding
// taken into the op: zeros for a conv, zeros counted for an average pool
// (count_include_pad, ceil_mode off), -inf for a max pool. The pad is then
// no separate kernel, and the op keeps its layout choices (a padded pool
// stays in NCHW{c}c under AlterOpLayout).
absl::StatusOr<std::optional<Expr>> FoldPadIntoWindowOp(const Expr& pre, const CallNode* c,
                                                        const std::string& op) {
  const auto none = std::optional<Expr>();
  const CallNode* pad = c->args.empty() ? nullptr : AsOpCall(c->args[0], "nn.pad");
  if (pad == nullptr) return none;
  Ref<AttrsNode> attrs = Ref<AttrsNode>(c->attrs->Clone());
  std::vector<int64_t>* padding = nullptr;
  double value = 0;
  if (op == "nn.conv2d") {
    auto* a = static_cast<Conv2DAttrs*>(attrs.get());
    if (a->data_layout != "NCHW") return none;
    padding = &a->padding;
  } else {
    auto* a = static_cast<Pool2DAttrs*>(attrs.get());
    if (a->layout != "NCHW" || a->ceil_mode) return none;
    if (op == "nn.avg_pool2d") {
      std::optional<std::vector<int64_t>> own = Padding4(a->padding);
      const bool unpadded = own && *own == std::vector<int64_t>{0, 0, 0, 0};
      if (!a->count_include_pad && !unpadded) return none;
      a->count_include_pad = true;
    } else {
      value = -std::numeric_limits<double>::infinity();
    }
    padding = &a->padding;
  }
  std::optional<std::vector<int64_t>> extra = SpatialPad(pad, value);
  std::optional<std::vector<int64_t>> own = Padding4(*padding);
  if (!extra || !own) return none;
  for (size_t i = 0; i < 4; ++i) (*own)[i] += (*extra)[i];
  *padding = *own;
  std::vector<Expr> args = c->args;
  args[0] = pad->args[0];
  KILN_ASSIGN_OR_RETURN(Expr r, Typed(CallOpNamed(op, std::move(args), Attrs(attrs)), pre));
  return std::optional<Expr>(r);
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
    if (op == "nn.conv2d" || op == "nn.avg_pool2d" || op == "nn.max_pool2d") {
      KILN_ASSIGN_OR_RETURN(std::optional<Expr> folded, FoldPadIntoWindowOp(pre, c, op));
      return folded ? *folded : post;
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
