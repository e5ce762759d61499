#include "passes/fold_constant/fold_constant.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "interpreter/kernels.h"
#include "interpreter/value.h"
#include "ir/op.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"

namespace kiln::passes {
namespace {

bool IsPrimitive(const FunctionNode* f) {
  const AttrValue* p = f->GetAttr("Primitive");
  return p != nullptr && p->kind == AttrValue::Kind::kInt && p->i != 0;
}

// A constant, or a literal tuple of constants, as an interpreter value.
std::optional<interp::Value> ConstantValue(const Expr& e) {
  if (const auto* c = e.as<ConstantNode>()) return interp::Value::Tensor(c->data);
  if (const auto* t = e.as<TupleNode>()) {
    std::vector<interp::Value> fields;
    for (const Expr& f : t->fields) {
      std::optional<interp::Value> v = ConstantValue(f);
      if (!v) return std::nullopt;
      fields.push_back(*std::move(v));
    }
    return interp::Value::Tuple(std::move(fields));
  }
  return std::nullopt;
}

// The names (ConstantNode.name_hint: ONNX initializer names) of the named
// constants in `e`, a constant or a literal tuple of them.
void CollectNames(const Expr& e, absl::flat_hash_set<std::string>* names) {
  if (const auto* c = e.as<ConstantNode>()) {
    if (!c->name_hint.empty()) names->insert(c->name_hint);
  } else if (const auto* t = e.as<TupleNode>()) {
    for (const Expr& f : t->fields) CollectNames(f, names);
  }
}

// An interpreter value back as IR: a Constant, or a Tuple of them, each
// named `name` (empty: unnamed).
absl::StatusOr<Expr> ToExpr(const interp::Value& v, const std::string& name) {
  if (v.kind() == interp::ValueKind::kTensor) {
    KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(v.tensor(), name));
    return Expr(c);
  }
  if (v.kind() == interp::ValueKind::kTuple) {
    std::vector<Expr> fields;
    for (const interp::Value& f : v.fields()) {
      KILN_ASSIGN_OR_RETURN(Expr e, ToExpr(f, name));
      fields.push_back(std::move(e));
    }
    KILN_ASSIGN_OR_RETURN(Tuple t, MakeTuple(std::move(fields)));
    return Expr(t);
  }
  return absl::InternalError(absl::StrCat("cannot fold a ", interp::ValueKindName(v.kind())));
}

class Folder : public ExprRewriter {
 protected:
  absl::StatusOr<std::optional<Expr>> PreVisit(const Expr& pre) override {
    if (const auto* f = pre.as<FunctionNode>(); f && IsPrimitive(f)) return std::optional<Expr>(pre);
    return std::optional<Expr>();
  }

  absl::StatusOr<Expr> PostVisit(const Expr& pre, Expr post) override {
    if (const auto* call = post.as<CallNode>()) {
      const auto* op = call->op.as<OpNode>();
      if (op == nullptr) return post;
      std::vector<interp::Value> args;
      for (const Expr& a : call->args) {
        std::optional<interp::Value> v = ConstantValue(a);
        if (!v) return post;
        args.push_back(*std::move(v));
      }
      absl::StatusOr<interp::Value> out = interp::EvalOp(call->op.cast<OpNode>(), call->attrs, args);
      if (!out.ok()) {
        // A call that fails on constants fails at run time too: report it where it is.
        return absl::Status(out.status().code(),
                            absl::StrCat("evaluating ", op->name(), " on constants",
                                         pre->span.known() ? absl::StrCat(" at ", pre->span.line, ":",
                                                                          pre->span.column)
                                                           : "",
                                         ": ", out.status().message()));
      }
      // A constant computed from exactly one named constant (a weight
      // transposed, re-laid-out, scaled by unnamed factors) keeps its name,
      // so `kiln graph --opt` still shows which initializer it came from.
      absl::flat_hash_set<std::string> names;
      for (const Expr& a : call->args) CollectNames(a, &names);
      return ToExpr(*out, names.size() == 1 ? *names.begin() : std::string());
    }
    if (const auto* g = post.as<TupleGetItemNode>()) {
      if (const auto* t = g->tuple.as<TupleNode>()) {
        if (g->index < static_cast<int>(t->fields.size())) return t->fields[g->index];
      }
      return post;
    }
    if (const auto* l = post.as<LetNode>()) {
      if (l->value->kind == ExprKind::kConstant) {
        return Substitute(l->body, {{l->var.get(), l->value}});
      }
    }
    return post;
  }
};

}  // namespace

absl::StatusOr<Expr> FoldConstantExpr(const Expr& e) {
  Folder f;
  return f.Rewrite(e);
}

PassPtr FoldConstant() {
  return MakeFunctionPass(
      PassInfo{"FoldConstant", 2, {}},
      [](const Function& fn, const Module&, const PassContext&) -> absl::StatusOr<Function> {
        KILN_ASSIGN_OR_RETURN(Expr out, FoldConstantExpr(fn));
        Function f = out.cast<FunctionNode>();
        if (!f) return absl::InternalError("FoldConstant turned a function into a non-function");
        return f;
      });
}

}  // namespace kiln::passes
