#include "passes/inline/inline.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"

namespace kiln::passes {
namespace {

bool MarkedInline(const FunctionNode& f) {
  const AttrValue* a = f.GetAttr("Inline");
  return a != nullptr && ((a->kind == AttrValue::Kind::kInt && a->i != 0) ||
                          (a->kind == AttrValue::Kind::kBool && a->b));
}

// Names of the globals each function refers to.
absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> CallGraph(const Module& m) {
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> g;
  for (const auto& [gv, fn] : m.functions()) {
    auto& callees = g[gv->name];
    if (!fn) continue;
    for (const Expr& e : PostOrder(fn))
      if (const auto* v = e.as<GlobalVarNode>()) callees.insert(v->name);
  }
  return g;
}

bool ReachesItself(const std::string& f,
                   const absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>>& g) {
  std::vector<std::string> work = {f};
  absl::flat_hash_set<std::string> seen;
  while (!work.empty()) {
    std::string n = work.back();
    work.pop_back();
    auto it = g.find(n);
    if (it == g.end()) continue;
    for (const std::string& c : it->second) {
      if (c == f) return true;
      if (seen.insert(c).second) work.push_back(c);
    }
  }
  return false;
}

// The body of `f` applied to `args`, with every variable it binds renamed.
absl::StatusOr<Expr> Instantiate(const Function& f, const std::vector<Expr>& args) {
  absl::flat_hash_map<const VarNode*, Expr> subst;
  for (size_t i = 0; i < f->params.size(); ++i) subst.emplace(f->params[i].get(), args[i]);
  for (const Expr& e : PostOrder(f->body)) {
    auto rename = [&](const Var& v) {
      if (!subst.contains(v.get())) subst.emplace(v.get(), MakeVar(v->name_hint, v->type_annotation));
    };
    if (const auto* l = e.as<LetNode>()) rename(l->var);
    if (const auto* fn = e.as<FunctionNode>())
      for (const Var& p : fn->params) rename(p);
  }
  return Substitute(f->body, subst);
}

class CallInliner : public ExprRewriter {
 public:
  explicit CallInliner(const absl::flat_hash_map<std::string, Function>& targets)
      : targets_(targets) {}
  bool inlined = false;

 protected:
  absl::StatusOr<Expr> PostVisit(const Expr&, Expr post) override {
    const auto* c = post.as<CallNode>();
    if (c == nullptr) return post;
    const auto* gv = c->op.as<GlobalVarNode>();
    if (gv == nullptr) return post;
    auto it = targets_.find(gv->name);
    if (it == targets_.end() || it->second->params.size() != c->args.size()) return post;
    inlined = true;
    return Instantiate(it->second, c->args);
  }

 private:
  const absl::flat_hash_map<std::string, Function>& targets_;
};

absl::StatusOr<bool> Run(Module& m) {
  auto graph = CallGraph(m);
  absl::flat_hash_map<std::string, Function> targets;
  for (const auto& [gv, fn] : m.functions())
    if (fn && MarkedInline(*fn) && fn->type_params.empty() && !ReachesItself(gv->name, graph))
      targets.emplace(gv->name, fn);
  if (targets.empty()) return false;
  bool changed = false;
  // Inlined bodies may call other inline functions; the call graph is
  // acyclic among targets, so this settles within |targets| + 1 rounds.
  for (size_t round = 0; round <= targets.size(); ++round) {
    bool any = false;
    const auto fns = m.functions();
    for (const auto& [gv, fn] : fns) {
      if (!fn) continue;
      CallInliner inliner(targets);
      KILN_ASSIGN_OR_RETURN(Expr body, inliner.Rewrite(fn->body));
      if (!inliner.inlined) continue;
      KILN_ASSIGN_OR_RETURN(Function nf, MakeFunction(fn->params, body, fn->ret_type,
                                                       fn->type_params, fn->attrs));
      KILN_RETURN_IF_ERROR(m.Add(gv, nf, /*update=*/true));
      if (targets.contains(gv->name)) targets[gv->name] = nf;
      any = true;
    }
    changed |= any;
    if (!any) break;
  }
  // Drop inlined functions nothing refers to any more.
  graph = CallGraph(m);
  absl::flat_hash_set<std::string> kept;  // every function a kept one refers to
  std::vector<std::string> work;
  for (const auto& [name, callees] : graph)
    if (!targets.contains(name) || name == "main") work.push_back(name);
  while (!work.empty()) {
    std::string n = work.back();
    work.pop_back();
    if (!kept.insert(n).second) continue;
    for (const std::string& c : graph[n]) work.push_back(c);
  }
  for (const auto& [name, fn] : targets)
    if (!kept.contains(name)) {
      KILN_RETURN_IF_ERROR(m.Remove(name));
      changed = true;
    }
  return changed;
}

}  // namespace

PassPtr Inline() {
  return MakeModulePass({"Inline", 1, {}},
                        [](Module& m, const PassContext&) { return Run(m); });
}

}  // namespace kiln::passes
