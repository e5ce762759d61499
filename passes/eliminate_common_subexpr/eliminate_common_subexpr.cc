#include "passes/eliminate_common_subexpr/eliminate_common_subexpr.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "ir/status_macros.h"
#include "passes/infra/expr_util.h"

namespace kiln::passes {
namespace {

bool SameCall(const CallNode* a, const CallNode* b) {
  if (a->op.get() != b->op.get() || a->args.size() != b->args.size() ||
      a->type_args.size() != b->type_args.size())
    return false;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (a->args[i].get() != b->args[i].get()) return false;
  for (size_t i = 0; i < a->type_args.size(); ++i)
    if (!TypeEqual(a->type_args[i], b->type_args[i])) return false;
  return AttrsEqual(a->attrs, b->attrs);
}

class Merger : public TypedRewriter {
 protected:
  absl::StatusOr<Expr> Transform(const Expr&, Expr post) override {
    size_t h = 0;
    if (const auto* c = post.as<CallNode>()) {
      if (c->op->kind != ExprKind::kOp) return post;
      h = absl::HashOf(c->op.get(), AttrsHash(c->attrs));
      for (const Expr& a : c->args) h = absl::HashOf(h, a.get());
    } else if (const auto* t = post.as<TupleGetItemNode>()) {
      h = absl::HashOf(t->tuple.get(), t->index, 1);
    } else {
      return post;
    }
    std::vector<Expr>& bucket = seen_[h];
    for (const Expr& cand : bucket) {
      if (cand->kind != post->kind) continue;
      if (const auto* c = post.as<CallNode>()) {
        if (SameCall(c, cand.as<CallNode>())) return cand;
      } else {
        const auto* a = post.as<TupleGetItemNode>();
        const auto* b = cand.as<TupleGetItemNode>();
        if (a->tuple.get() == b->tuple.get() && a->index == b->index) return cand;
      }
    }
    bucket.push_back(post);
    return post;
  }

 private:
  absl::flat_hash_map<size_t, std::vector<Expr>> seen_;
};

absl::StatusOr<Function> Run(const Function& f) {
  Merger merger;
  KILN_ASSIGN_OR_RETURN(Expr body, merger.Rewrite(f->body));
  if (body.get() == f->body.get()) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

}  // namespace

PassPtr EliminateCommonSubexpr() {
  return MakeFunctionPass({"EliminateCommonSubexpr", 3, {}},
                          [](const Function& f, const Module&, const PassContext&) {
                            return Run(f);
                          });
}

}  // namespace kiln::passes
