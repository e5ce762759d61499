#include "passes/lambda_lift/lambda_lift.h"

#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"

namespace kiln::passes {
namespace {

bool HasFlag(const FunctionNode& f, absl::string_view key) {
  const AttrValue* a = f.GetAttr(key);
  return a != nullptr && ((a->kind == AttrValue::Kind::kInt && a->i != 0) ||
                          (a->kind == AttrValue::Kind::kBool && a->b));
}

class Lifter : public ExprRewriter {
 public:
  Lifter(Module& m, std::string base, const Expr& root) : m_(m), base_(std::move(base)) {
    for (const Expr& e : PostOrder(root))
      if (const auto* l = e.as<LetNode>())
        if (l->value->kind == ExprKind::kFunction) let_var_.emplace(l->value.get(), l->var);
  }
  std::vector<std::pair<GlobalVar, Function>> lifted;

 protected:
  absl::StatusOr<Expr> PostVisit(const Expr& pre, Expr post) override {
    const auto* f = post.as<FunctionNode>();
    if (f == nullptr || HasFlag(*f, "Primitive") || HasFlag(*f, "Closure") ||
        f->GetAttr("Compiler") != nullptr)
      return post;
    Var self;
    if (auto it = let_var_.find(pre.get()); it != let_var_.end()) self = it->second;
    std::vector<Var> captured;
    for (const Var& v : FreeVars(post))
      if (v.get() != self.get()) captured.push_back(v);
    KILN_ASSIGN_OR_RETURN(GlobalVar gv, NewGlobal());

    absl::flat_hash_map<const VarNode*, Expr> subst;
    std::vector<Var> fresh;
    std::vector<Expr> fresh_args, outer_args;
    for (const Var& v : captured) {
      Type t = v->type_annotation ? v->type_annotation : v->checked_type();
      Var nv = MakeVar(v->name_hint, t);
      subst.emplace(v.get(), nv);
      fresh.push_back(nv);
      fresh_args.push_back(nv);
      outer_args.push_back(v);
    }
    Expr inner_ref = gv, outer_ref = gv;
    if (!captured.empty()) {
      KILN_ASSIGN_OR_RETURN(inner_ref, MakeCall(gv, fresh_args));
      KILN_ASSIGN_OR_RETURN(outer_ref, MakeCall(gv, outer_args));
    }
    if (self) subst.emplace(self.get(), inner_ref);
    KILN_ASSIGN_OR_RETURN(Expr body, Substitute(f->body, subst));
    Function global;
    if (captured.empty()) {
      KILN_ASSIGN_OR_RETURN(global,
                            MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs));
    } else {
      std::map<std::string, AttrValue> dict;
      if (f->attrs) dict = f->attrs->dict;
      dict["Closure"] = AttrValue::Int(1);
      KILN_ASSIGN_OR_RETURN(Function closure, MakeFunction(f->params, body, f->ret_type,
                                                           f->type_params, MakeDictAttrs(dict)));
      KILN_ASSIGN_OR_RETURN(global, MakeFunction(fresh, closure));
    }
    lifted.emplace_back(gv, global);
    return outer_ref;
  }

 private:
  absl::StatusOr<GlobalVar> NewGlobal() {
    std::string name;
    do {
      name = absl::StrCat(base_, "_lifted_", counter_++);
    } while (m_.ContainsFunction(name) || taken_.contains(name));
    taken_.insert(name);
    return MakeGlobalVar(name);
  }

  Module& m_;
  std::string base_;
  int counter_ = 0;
  absl::flat_hash_set<std::string> taken_;
  absl::flat_hash_map<const ExprNode*, Var> let_var_;
};

absl::StatusOr<bool> Run(Module& m) {
  bool changed = false;
  const auto fns = m.functions();
  for (const auto& [gv, fn] : fns) {
    if (!fn || HasFlag(*fn, "Primitive") || fn->GetAttr("Compiler") != nullptr) continue;
    Lifter lifter(m, gv->name, fn->body);
    KILN_ASSIGN_OR_RETURN(Expr body, lifter.Rewrite(fn->body));
    if (lifter.lifted.empty()) continue;
    changed = true;
    for (const auto& [lgv, lfn] : lifter.lifted) KILN_RETURN_IF_ERROR(m.Add(lgv, lfn));
    KILN_ASSIGN_OR_RETURN(Function nf,
                          MakeFunction(fn->params, body, fn->ret_type, fn->type_params, fn->attrs));
    KILN_RETURN_IF_ERROR(m.Add(gv, nf, /*update=*/true));
  }
  return changed;
}

}  // namespace

PassPtr LambdaLift() {
  return MakeModulePass({"LambdaLift", 0, {"InferType"}},
                        [](Module& m, const PassContext&) { return Run(m); });
}

}  // namespace kiln::passes
