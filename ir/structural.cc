#include "ir/structural.h"

#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "ir/traversal.h"

namespace kiln {
namespace {

std::string Describe(const ExprNode* e) {
  switch (e->kind) {
    case ExprKind::kVar: return "%" + static_cast<const VarNode*>(e)->name_hint;
    case ExprKind::kGlobalVar: return "@" + static_cast<const GlobalVarNode*>(e)->name;
    case ExprKind::kOp: return static_cast<const OpNode*>(e)->name();
    case ExprKind::kConstructor: return static_cast<const ConstructorNode*>(e)->name;
    case ExprKind::kCall: {
      const auto* c = static_cast<const CallNode*>(e);
      return absl::StrCat("call of ", Describe(c->op.get()));
    }
    default: break;
  }
  std::string s = ExprKindName(e->kind);
  if (e->span.known()) absl::StrAppend(&s, " at ", e->span.line, ":", e->span.column);
  return s;
}

class EqualChecker {
 public:
  EqualChecker(bool map_free_vars, bool constants_by_type = false)
      : map_free_vars_(map_free_vars), constants_by_type_(constants_by_type) {}

  std::optional<std::string> Run(const ExprNode* a, const ExprNode* b) {
    Push(a, b);
    while (!stack_.empty()) {
      auto [x, y] = stack_.back();
      stack_.pop_back();
      if (!Compare(x, y)) return diff_;
    }
    return std::nullopt;
  }

  // Module-level: global vars compare by name.
  bool globals_by_name = true;

 private:
  void Push(const ExprNode* a, const ExprNode* b) { stack_.emplace_back(a, b); }

  bool Fail(const ExprNode* x, const ExprNode* y, absl::string_view what) {
    diff_ = absl::StrCat(what, ": ", Describe(x), " vs ", Describe(y));
    return false;
  }

  bool BindVar(const VarNode* x, const VarNode* y) {
    auto it = lr_.find(x);
    if (it != lr_.end()) {
      if (it->second != y) return Fail(x, y, "variable bound twice inconsistently");
      return true;
    }
    if (rl_.contains(y)) return Fail(x, y, "variable bound twice inconsistently");
    if (!TypeEqual(x->type_annotation, y->type_annotation)) {
      diff_ = absl::StrCat("type annotations of %", x->name_hint, " and %", y->name_hint,
                           " differ: ", TypeToString(x->type_annotation), " vs ",
                           TypeToString(y->type_annotation));
      return false;
    }
    lr_.emplace(x, y);
    rl_.emplace(y, x);
    return true;
  }

  // Tensor constants compared by type: the two sides' constants must pair
  // one to one, as bound variables do, so a kernel lowered from one side reads
  // the other side's constants in the same places.
  bool BindConstant(const ConstantNode* x, const ConstantNode* y) {
    const HostTensor& a = *x->data;
    const HostTensor& b = *y->data;
    if (a.ndim() == 0 || b.ndim() == 0) {
      return a.BitwiseEqual(b) ? true : Fail(x, y, "different constant values");
    }
    if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
      return Fail(x, y, "constants of different types");
    }
    auto it = const_lr_.find(x);
    if (it != const_lr_.end()) {
      return it->second == y ? true : Fail(x, y, "constants shared differently");
    }
    if (const_rl_.contains(y)) return Fail(x, y, "constants shared differently");
    const_lr_.emplace(x, y);
    const_rl_.emplace(y, x);
    return true;
  }

  bool PatternEq(const PatternNode* x, const PatternNode* y) {
    std::vector<std::pair<const PatternNode*, const PatternNode*>> work = {{x, y}};
    while (!work.empty()) {
      auto [p, q] = work.back();
      work.pop_back();
      if (p->kind != q->kind) {
        diff_ = "match patterns differ in kind";
        return false;
      }
      switch (p->kind) {
        case PatternKind::kWildcard: break;
        case PatternKind::kVar:
          if (!BindVar(static_cast<const PatternVarNode*>(p)->var.get(),
                       static_cast<const PatternVarNode*>(q)->var.get()))
            return false;
          break;
        case PatternKind::kConstructor: {
          const auto* pc = static_cast<const PatternConstructorNode*>(p);
          const auto* qc = static_cast<const PatternConstructorNode*>(q);
          if (pc->constructor->name != qc->constructor->name ||
              pc->patterns.size() != qc->patterns.size()) {
            diff_ = absl::StrCat("match patterns differ: ", pc->constructor->name, " vs ",
                                 qc->constructor->name);
            return false;
          }
          for (size_t i = 0; i < pc->patterns.size(); ++i)
            work.emplace_back(pc->patterns[i].get(), qc->patterns[i].get());
          break;
        }
        case PatternKind::kTuple: {
          const auto* pt = static_cast<const PatternTupleNode*>(p);
          const auto* qt = static_cast<const PatternTupleNode*>(q);
          if (pt->patterns.size() != qt->patterns.size()) {
            diff_ = "tuple patterns differ in size";
            return false;
          }
          for (size_t i = 0; i < pt->patterns.size(); ++i)
            work.emplace_back(pt->patterns[i].get(), qt->patterns[i].get());
          break;
        }
      }
    }
    return true;
  }

  template <typename T>
  bool TypeListEq(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!TypeEqual(a[i], b[i])) return false;
    return true;
  }

  bool Compare(const ExprNode* x, const ExprNode* y) {
    if (x->kind != y->kind) return Fail(x, y, "different kinds of expression");
    if (x->kind == ExprKind::kVar) {
      const auto* vx = static_cast<const VarNode*>(x);
      const auto* vy = static_cast<const VarNode*>(y);
      auto it = lr_.find(vx);
      if (it != lr_.end()) return it->second == vy ? true : Fail(x, y, "different variables");
      if (rl_.contains(vy)) return Fail(x, y, "different variables");
      if (vx == vy) return true;  // the same free variable
      if (map_free_vars_) return BindVar(vx, vy);
      return Fail(x, y, "different free variables");
    }
    if (constants_by_type_ && x->kind == ExprKind::kConstant) {
      return BindConstant(static_cast<const ConstantNode*>(x), static_cast<const ConstantNode*>(y));
    }
    if (x == y) return true;
    if (!visited_.insert({x, y}).second) return true;
    switch (x->kind) {
      case ExprKind::kGlobalVar:
        return static_cast<const GlobalVarNode*>(x)->name == static_cast<const GlobalVarNode*>(y)->name
                   ? true
                   : Fail(x, y, "different globals");
      case ExprKind::kConstant: {
        const auto* cx = static_cast<const ConstantNode*>(x);
        const auto* cy = static_cast<const ConstantNode*>(y);
        return cx->data->BitwiseEqual(*cy->data) ? true : Fail(x, y, "different constant values");
      }
      case ExprKind::kTuple: {
        const auto& fx = static_cast<const TupleNode*>(x)->fields;
        const auto& fy = static_cast<const TupleNode*>(y)->fields;
        if (fx.size() != fy.size()) return Fail(x, y, "tuples of different sizes");
        for (size_t i = fx.size(); i-- > 0;) Push(fx[i].get(), fy[i].get());
        return true;
      }
      case ExprKind::kTupleGetItem: {
        const auto* gx = static_cast<const TupleGetItemNode*>(x);
        const auto* gy = static_cast<const TupleGetItemNode*>(y);
        if (gx->index != gy->index) return Fail(x, y, "different tuple indices");
        Push(gx->tuple.get(), gy->tuple.get());
        return true;
      }
      case ExprKind::kCall: {
        const auto* cx = static_cast<const CallNode*>(x);
        const auto* cy = static_cast<const CallNode*>(y);
        if (cx->args.size() != cy->args.size()) return Fail(x, y, "different argument counts");
        if (!AttrsEqual(cx->attrs, cy->attrs)) return Fail(x, y, "different attributes");
        if (!TypeListEq(cx->type_args, cy->type_args)) return Fail(x, y, "different type arguments");
        for (size_t i = cx->args.size(); i-- > 0;) Push(cx->args[i].get(), cy->args[i].get());
        Push(cx->op.get(), cy->op.get());
        return true;
      }
      case ExprKind::kFunction: {
        const auto* fx = static_cast<const FunctionNode*>(x);
        const auto* fy = static_cast<const FunctionNode*>(y);
        if (fx->params.size() != fy->params.size()) return Fail(x, y, "different parameter counts");
        if (!TypeEqual(fx->ret_type, fy->ret_type)) return Fail(x, y, "different return types");
        if (fx->type_params.size() != fy->type_params.size() ||
            !TypeListEq(fx->type_params, fy->type_params))
          return Fail(x, y, "different type parameters");
        if (!AttrsEqual(Attrs(fx->attrs), Attrs(fy->attrs)))
          return Fail(x, y, "different function attributes");
        for (size_t i = 0; i < fx->params.size(); ++i)
          if (!BindVar(fx->params[i].get(), fy->params[i].get())) return false;
        Push(fx->body.get(), fy->body.get());
        return true;
      }
      case ExprKind::kLet: {
        const auto* lx = static_cast<const LetNode*>(x);
        const auto* ly = static_cast<const LetNode*>(y);
        if (!BindVar(lx->var.get(), ly->var.get())) return false;
        Push(lx->body.get(), ly->body.get());
        Push(lx->value.get(), ly->value.get());
        return true;
      }
      case ExprKind::kIf: {
        const auto* ix = static_cast<const IfNode*>(x);
        const auto* iy = static_cast<const IfNode*>(y);
        Push(ix->false_branch.get(), iy->false_branch.get());
        Push(ix->true_branch.get(), iy->true_branch.get());
        Push(ix->cond.get(), iy->cond.get());
        return true;
      }
      case ExprKind::kOp:
        return static_cast<const OpNode*>(x)->def == static_cast<const OpNode*>(y)->def
                   ? true
                   : Fail(x, y, "different operators");
      case ExprKind::kConstructor: {
        const auto* cx = static_cast<const ConstructorNode*>(x);
        const auto* cy = static_cast<const ConstructorNode*>(y);
        return (cx->name == cy->name && cx->tag == cy->tag &&
                cx->belong_to->name == cy->belong_to->name)
                   ? true
                   : Fail(x, y, "different constructors");
      }
      case ExprKind::kMatch: {
        const auto* mx = static_cast<const MatchNode*>(x);
        const auto* my = static_cast<const MatchNode*>(y);
        if (mx->complete != my->complete || mx->clauses.size() != my->clauses.size())
          return Fail(x, y, "different match clauses");
        for (size_t i = 0; i < mx->clauses.size(); ++i)
          if (!PatternEq(mx->clauses[i].lhs.get(), my->clauses[i].lhs.get())) return false;
        for (size_t i = mx->clauses.size(); i-- > 0;)
          Push(mx->clauses[i].rhs.get(), my->clauses[i].rhs.get());
        Push(mx->data.get(), my->data.get());
        return true;
      }
      case ExprKind::kRefCreate:
        Push(static_cast<const RefCreateNode*>(x)->value.get(),
             static_cast<const RefCreateNode*>(y)->value.get());
        return true;
      case ExprKind::kRefRead:
        Push(static_cast<const RefReadNode*>(x)->ref.get(),
             static_cast<const RefReadNode*>(y)->ref.get());
        return true;
      case ExprKind::kRefWrite: {
        const auto* wx = static_cast<const RefWriteNode*>(x);
        const auto* wy = static_cast<const RefWriteNode*>(y);
        Push(wx->value.get(), wy->value.get());
        Push(wx->ref.get(), wy->ref.get());
        return true;
      }
      case ExprKind::kVar: break;
    }
    return true;
  }

  bool map_free_vars_;
  bool constants_by_type_;
  std::vector<std::pair<const ExprNode*, const ExprNode*>> stack_;
  absl::flat_hash_set<std::pair<const ExprNode*, const ExprNode*>> visited_;
  absl::flat_hash_map<const VarNode*, const VarNode*> lr_, rl_;
  absl::flat_hash_map<const ConstantNode*, const ConstantNode*> const_lr_, const_rl_;
  std::string diff_;
};

size_t PatternHash(const PatternNode* root, absl::flat_hash_map<const VarNode*, size_t>& var_ids) {
  size_t h = 17;
  std::vector<const PatternNode*> work = {root};
  while (!work.empty()) {
    const PatternNode* p = work.back();
    work.pop_back();
    h = absl::HashOf(h, static_cast<int>(p->kind));
    switch (p->kind) {
      case PatternKind::kWildcard: break;
      case PatternKind::kVar: {
        const VarNode* v = static_cast<const PatternVarNode*>(p)->var.get();
        auto [it, inserted] = var_ids.emplace(v, var_ids.size());
        h = absl::HashOf(h, it->second, TypeHash(v->type_annotation));
        break;
      }
      case PatternKind::kConstructor: {
        const auto* pc = static_cast<const PatternConstructorNode*>(p);
        h = absl::HashOf(h, pc->constructor->name);
        for (auto it = pc->patterns.rbegin(); it != pc->patterns.rend(); ++it) work.push_back(it->get());
        break;
      }
      case PatternKind::kTuple: {
        const auto* pt = static_cast<const PatternTupleNode*>(p);
        h = absl::HashOf(h, pt->patterns.size());
        for (auto it = pt->patterns.rbegin(); it != pt->patterns.rend(); ++it) work.push_back(it->get());
        break;
      }
    }
  }
  return h;
}

}  // namespace

std::optional<std::string> StructuralDifference(const Expr& a, const Expr& b, bool map_free_vars) {
  if (!a || !b) {
    if (!a && !b) return std::nullopt;
    return std::string("one expression is null");
  }
  EqualChecker eq(map_free_vars);
  return eq.Run(a.get(), b.get());
}

bool StructuralEqual(const Expr& a, const Expr& b, bool map_free_vars) {
  return !StructuralDifference(a, b, map_free_vars).has_value();
}

namespace {

size_t Hash(const Expr& root, bool constants_by_type) {
  if (!root) return 0;
  // Variables hash by the order in which a structural walk first meets them,
  // so renaming bound variables does not change the hash.
  absl::flat_hash_map<const VarNode*, size_t> var_ids;
  absl::flat_hash_map<const ExprNode*, size_t> memo;
  std::vector<Expr> order = PostOrder(root);
  for (const Expr& e : order) {
    const ExprNode* n = e.get();
    size_t h = absl::HashOf(static_cast<int>(n->kind));
    // Children's hashes, in order.
    ForEachChild(n, [&](const Expr& c) { h = absl::HashOf(h, memo.at(c.get())); });
    switch (n->kind) {
      case ExprKind::kVar: {
        const auto* v = static_cast<const VarNode*>(n);
        auto [it, inserted] = var_ids.emplace(v, var_ids.size());
        h = absl::HashOf(h, it->second, TypeHash(v->type_annotation));
        break;
      }
      case ExprKind::kGlobalVar: h = absl::HashOf(h, static_cast<const GlobalVarNode*>(n)->name); break;
      case ExprKind::kConstant: {
        const HostTensor& t = *static_cast<const ConstantNode*>(n)->data;
        if (constants_by_type && t.ndim() > 0) {
          h = absl::HashOf(h, t.dtype().ToString(), t.shape());
        } else {
          h = absl::HashOf(h, t.ContentHash());
        }
        break;
      }
      case ExprKind::kTupleGetItem: h = absl::HashOf(h, static_cast<const TupleGetItemNode*>(n)->index); break;
      case ExprKind::kCall: {
        const auto* c = static_cast<const CallNode*>(n);
        h = absl::HashOf(h, AttrsHash(c->attrs), c->args.size());
        for (const Type& t : c->type_args) h = absl::HashOf(h, TypeHash(t));
        break;
      }
      case ExprKind::kFunction: {
        const auto* f = static_cast<const FunctionNode*>(n);
        h = absl::HashOf(h, f->params.size(), TypeHash(f->ret_type), f->type_params.size(),
                         AttrsHash(Attrs(f->attrs)));
        break;
      }
      case ExprKind::kOp: h = absl::HashOf(h, static_cast<const OpNode*>(n)->name()); break;
      case ExprKind::kConstructor: h = absl::HashOf(h, static_cast<const ConstructorNode*>(n)->name); break;
      case ExprKind::kMatch: {
        const auto* m = static_cast<const MatchNode*>(n);
        h = absl::HashOf(h, m->complete);
        for (const Clause& c : m->clauses) h = absl::HashOf(h, PatternHash(c.lhs.get(), var_ids));
        break;
      }
      default: break;
    }
    memo.emplace(n, h);
  }
  return memo.at(root.get());
}

}  // namespace

size_t StructuralHash(const Expr& root) { return Hash(root, /*constants_by_type=*/false); }

size_t StructuralHashModuloConstants(const Expr& root) {
  return Hash(root, /*constants_by_type=*/true);
}

std::optional<std::string> StructuralDifferenceModuloConstants(const Expr& a, const Expr& b) {
  if (!a || !b) {
    if (!a && !b) return std::nullopt;
    return std::string("one expression is null");
  }
  EqualChecker eq(/*map_free_vars=*/false, /*constants_by_type=*/true);
  return eq.Run(a.get(), b.get());
}

bool StructuralEqualModuloConstants(const Expr& a, const Expr& b) {
  return !StructuralDifferenceModuloConstants(a, b).has_value();
}

std::optional<std::string> ModuleDifference(const Module& a, const Module& b) {
  if (a.type_defs().size() != b.type_defs().size())
    return absl::StrCat("modules define ", a.type_defs().size(), " vs ", b.type_defs().size(),
                        " types");
  for (const TypeData& ta : a.type_defs()) {
    auto tb = b.LookupTypeDef(ta->header->name);
    if (!tb.ok()) return absl::StrCat("type ", ta->header->name, " is missing in the second module");
    if (!TypeEqual(ta, *tb)) return absl::StrCat("type ", ta->header->name, " differs");
  }
  size_t na = 0, nb = 0;
  for (const auto& [gv, fn] : a.functions()) na += fn ? 1 : 0;
  for (const auto& [gv, fn] : b.functions()) nb += fn ? 1 : 0;
  if (na != nb) return absl::StrCat("modules define ", na, " vs ", nb, " functions");
  for (const auto& [gv, fn] : a.functions()) {
    if (!fn) continue;
    auto fb = b.Lookup(gv->name);
    if (!fb.ok()) return absl::StrCat("function @", gv->name, " is missing in the second module");
    if (auto d = StructuralDifference(fn, *fb))
      return absl::StrCat("function @", gv->name, ": ", *d);
  }
  return std::nullopt;
}

bool ModuleEqual(const Module& a, const Module& b) { return !ModuleDifference(a, b).has_value(); }

}  // namespace kiln
