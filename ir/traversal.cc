#include "ir/traversal.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace kiln {

std::vector<Expr> Children(const Expr& e) {
  std::vector<Expr> out;
  ForEachChild(e, [&](const Expr& c) { out.push_back(c); });
  return out;
}

namespace {

absl::StatusOr<Var> AsVar(const Expr& e, const char* what) {
  Var v = e.cast<VarNode>();
  if (!v) return absl::InvalidArgumentError(absl::StrCat(what, " must be a variable, got a ",
                                                         ExprKindName(e->kind)));
  return v;
}

template <typename T>
Ref<const T> Spanned(Ref<const T> n, const ExprNode* old) {
  const_cast<T*>(n.get())->span = old->span;
  return n;
}

}  // namespace

absl::StatusOr<Expr> WithNewChildren(const Expr& e, const std::vector<Expr>& kids) {
  const std::vector<Expr> old = Children(e);
  if (kids.size() != old.size())
    return absl::InternalError(absl::StrCat("WithNewChildren: ", ExprKindName(e->kind), " has ",
                                            old.size(), " children, got ", kids.size()));
  bool same = true;
  for (size_t i = 0; i < kids.size() && same; ++i) same = kids[i].get() == old[i].get();
  if (same) return e;
  const ExprNode* n = e.get();
  switch (n->kind) {
    case ExprKind::kTuple: {
      KILN_ASSIGN_OR_RETURN(Tuple t, MakeTuple(kids));
      return Expr(Spanned(t, n));
    }
    case ExprKind::kTupleGetItem: {
      KILN_ASSIGN_OR_RETURN(
          TupleGetItem t, MakeTupleGetItem(kids[0], static_cast<const TupleGetItemNode*>(n)->index));
      return Expr(Spanned(t, n));
    }
    case ExprKind::kCall: {
      const auto* c = static_cast<const CallNode*>(n);
      std::vector<Expr> args(kids.begin() + 1, kids.end());
      KILN_ASSIGN_OR_RETURN(Call call, MakeCall(kids[0], std::move(args), c->attrs, c->type_args));
      return Expr(Spanned(call, n));
    }
    case ExprKind::kFunction: {
      const auto* f = static_cast<const FunctionNode*>(n);
      std::vector<Var> params;
      for (size_t i = 0; i < f->params.size(); ++i) {
        KILN_ASSIGN_OR_RETURN(Var v, AsVar(kids[i], "a function parameter"));
        params.push_back(std::move(v));
      }
      KILN_ASSIGN_OR_RETURN(Function fn, MakeFunction(std::move(params), kids.back(), f->ret_type,
                                                      f->type_params, f->attrs));
      return Expr(Spanned(fn, n));
    }
    case ExprKind::kLet: {
      KILN_ASSIGN_OR_RETURN(Var v, AsVar(kids[0], "a let-bound name"));
      KILN_ASSIGN_OR_RETURN(Let l, MakeLet(std::move(v), kids[1], kids[2]));
      return Expr(Spanned(l, n));
    }
    case ExprKind::kIf: {
      KILN_ASSIGN_OR_RETURN(If i, MakeIf(kids[0], kids[1], kids[2]));
      return Expr(Spanned(i, n));
    }
    case ExprKind::kMatch: {
      const auto* m = static_cast<const MatchNode*>(n);
      std::vector<Clause> clauses;
      for (size_t i = 0; i < m->clauses.size(); ++i)
        clauses.push_back(Clause{m->clauses[i].lhs, kids[i + 1]});
      KILN_ASSIGN_OR_RETURN(Match mm, MakeMatch(kids[0], std::move(clauses), m->complete));
      return Expr(Spanned(mm, n));
    }
    case ExprKind::kRefCreate: return MakeRefCreate(kids[0]);
    case ExprKind::kRefRead: return MakeRefRead(kids[0]);
    case ExprKind::kRefWrite: return MakeRefWrite(kids[0], kids[1]);
    default: return e;  // leaves have no children
  }
}

std::vector<Expr> PostOrder(const Expr& root, bool enter_functions) {
  std::vector<Expr> out;
  if (!root) return out;
  absl::flat_hash_set<const ExprNode*> done;
  struct Item {
    const ExprNode* node;
    bool expanded;
  };
  std::vector<Item> stack = {{root.get(), false}};
  std::vector<const ExprNode*> kids;
  while (!stack.empty()) {
    Item& top = stack.back();
    const ExprNode* n = top.node;
    if (done.contains(n)) {
      stack.pop_back();
      continue;
    }
    if (top.expanded) {
      stack.pop_back();
      done.insert(n);
      out.push_back(Expr(const_cast<ExprNode*>(n)));
      continue;
    }
    top.expanded = true;
    if (!enter_functions && n->kind == ExprKind::kFunction && n != root.get()) continue;
    kids.clear();
    ForEachChild(n, [&](const Expr& c) { kids.push_back(c.get()); });
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      if (!done.contains(*it)) stack.push_back({*it, false});
  }
  return out;
}

void PostOrderVisit(const Expr& root, const std::function<void(const Expr&)>& f) {
  for (const Expr& e : PostOrder(root)) f(e);
}

Expr ExprRewriter::Memo(const Expr& e) const {
  auto it = memo_.find(e.get());
  return it == memo_.end() ? Expr() : it->second;
}

absl::StatusOr<Expr> ExprRewriter::Rewrite(const Expr& root) {
  if (!root) return absl::InvalidArgumentError("cannot rewrite a null expression");
  struct Item {
    Expr node;
    bool expanded;
  };
  std::vector<Item> stack;
  stack.push_back({root, false});
  std::vector<Expr> kids;
  while (!stack.empty()) {
    Item& top = stack.back();
    if (memo_.contains(top.node.get())) {
      stack.pop_back();
      continue;
    }
    if (!top.expanded) {
      KILN_ASSIGN_OR_RETURN(std::optional<Expr> pre, PreVisit(top.node));
      if (pre.has_value()) {
        if (!*pre) return absl::InternalError("PreVisit returned a null expression");
        memo_.emplace(top.node.get(), std::move(*pre));
        stack.pop_back();
        continue;
      }
      top.expanded = true;
      Expr node = top.node;  // `top` may dangle once we push
      kids = Children(node);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it)
        if (!memo_.contains(it->get())) stack.push_back({*it, false});
      continue;
    }
    Expr node = std::move(top.node);
    stack.pop_back();
    kids.clear();
    ForEachChild(node, [&](const Expr& c) { kids.push_back(memo_.at(c.get())); });
    KILN_ASSIGN_OR_RETURN(Expr post, WithNewChildren(node, kids));
    KILN_ASSIGN_OR_RETURN(Expr result, PostVisit(node, std::move(post)));
    if (!result) return absl::InternalError("PostVisit returned a null expression");
    memo_.emplace(node.get(), std::move(result));
  }
  return memo_.at(root.get());
}

namespace {

class Substituter : public ExprRewriter {
 public:
  explicit Substituter(const absl::flat_hash_map<const VarNode*, Expr>& subst) : subst_(subst) {}

 protected:
  absl::StatusOr<std::optional<Expr>> PreVisit(const Expr& pre) override {
    if (const auto* v = pre.as<VarNode>()) {
      auto it = subst_.find(v);
      if (it != subst_.end()) return std::optional<Expr>(it->second);
    }
    return std::optional<Expr>();
  }

 private:
  const absl::flat_hash_map<const VarNode*, Expr>& subst_;
};

}  // namespace

absl::StatusOr<Expr> Substitute(const Expr& e,
                                const absl::flat_hash_map<const VarNode*, Expr>& subst) {
  Substituter s(subst);
  return s.Rewrite(e);
}

std::vector<Var> FreeVars(const Expr& e) {
  std::vector<Expr> order = PostOrder(e);
  absl::flat_hash_set<const VarNode*> bound;
  for (const Expr& n : order) {
    if (const auto* f = n.as<FunctionNode>()) {
      for (const Var& p : f->params) bound.insert(p.get());
    } else if (const auto* l = n.as<LetNode>()) {
      bound.insert(l->var.get());
    } else if (const auto* m = n.as<MatchNode>()) {
      for (const Clause& c : m->clauses)
        for (const Var& v : PatternVars(c.lhs)) bound.insert(v.get());
    }
  }
  std::vector<Var> out;
  absl::flat_hash_set<const VarNode*> seen;
  for (const Expr& n : order) {
    if (const auto* v = n.as<VarNode>()) {
      if (!bound.contains(v) && seen.insert(v).second) out.push_back(n.cast<VarNode>());
    }
  }
  return out;
}

}  // namespace kiln
