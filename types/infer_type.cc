#include "types/infer_type.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "ir/printer.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "types/core_relations.h"
#include "types/relation.h"

namespace kiln::types {
namespace {

// ---- Describing an expression in an error message ---------------------------

std::string Where(const ExprNode* e) {
  if (!e || !e->span.known()) return "";
  return absl::StrCat(" at ", e->span.line, ":", e->span.column);
}

std::string Atom(const Expr& e) {
  switch (e->kind) {
    case ExprKind::kVar: return "%" + e.as<VarNode>()->name_hint;
    case ExprKind::kGlobalVar: return "@" + e.as<GlobalVarNode>()->name;
    case ExprKind::kOp: return e.as<OpNode>()->name();
    case ExprKind::kConstructor: return e.as<ConstructorNode>()->name;
    case ExprKind::kCall: {
      const Expr& op = e.as<CallNode>()->op;
      if (op->kind == ExprKind::kOp || op->kind == ExprKind::kGlobalVar ||
          op->kind == ExprKind::kConstructor)
        return absl::StrCat("(", Atom(op), " ...)");
      return "(call ...)";
    }
    default: return absl::StrCat("(", ExprKindName(e->kind), " ...)");
  }
}

// The offending expression in text form: the whole expression when it is
// small, otherwise the node itself with its operands abbreviated.
std::string Show(const Expr& e) {
  if (!e) return "<unknown expression>";
  if (PostOrder(e, /*enter_functions=*/false).size() <= 12) {
    std::string text = PrintExpr(e);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return absl::StrCat("`", text, "`", Where(e.get()));
  }
  std::string s;
  if (const auto* c = e.as<CallNode>()) {
    s = absl::StrCat(Atom(c->op), "(");
    for (size_t i = 0; i < c->args.size(); ++i) absl::StrAppend(&s, i ? ", " : "", Atom(c->args[i]));
    s += ")";
  } else {
    s = Atom(e);
  }
  return absl::StrCat("`", s, "`", Where(e.get()));
}

absl::Status InExpr(const absl::Status& s, const Expr& e) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(s.message(), "\n  in ", Show(e)));
}

// ---- Tensors too large to address --------------------------------------------

// The most bytes a tensor's static dims may describe: 2^48 (256 TiB), beyond
// any machine's memory, and small enough that every size computed from a
// shape (element counts, byte sizes, strides, the arena offsets of thousands
// of tensors) stays inside int64. A shape beyond it is refused here, before
// a relation or a later pass multiplies its dims (issue 15: float32[2^62+1, 4]
// wrapped around in ReshapeRel and was accepted).
constexpr int64_t kMaxTensorBytes = int64_t{1} << 48;

// Whether tensor type `t`'s static dims fit in kMaxTensorBytes (symbolic and
// `?` dims are counted as 1; a static 0 makes the tensor empty).
bool TensorFits(const TensorTypeNode* t) {
  for (const Dim& d : t->shape) {
    if (d.is_static() && d.value() == 0) return true;
  }
  int64_t bytes = std::max<int64_t>(t->dtype.bytes(), 1);
  for (const Dim& d : t->shape) {
    if (!d.is_static() || d.value() < 0) continue;
    if (__builtin_mul_overflow(bytes, d.value(), &bytes) || bytes > kMaxTensorBytes) return false;
  }
  return true;
}

// The types directly inside `n` (tuple fields, function arguments and
// result, type-call arguments, a reference's value) onto `work`.
void PushChildTypes(const TypeNode* n, std::vector<const TypeNode*>* work) {
  switch (n->kind) {
    case TypeKind::kTuple:
      for (const Type& f : static_cast<const TupleTypeNode*>(n)->fields) work->push_back(f.get());
      break;
    case TypeKind::kFunc:
      for (const Type& f : static_cast<const FuncTypeNode*>(n)->arg_types) work->push_back(f.get());
      work->push_back(static_cast<const FuncTypeNode*>(n)->ret_type.get());
      break;
    case TypeKind::kTypeCall:
      for (const Type& f : static_cast<const TypeCallNode*>(n)->args) work->push_back(f.get());
      break;
    case TypeKind::kRef: work->push_back(static_cast<const RefTypeNode*>(n)->value.get()); break;
    default: break;
  }
}

// An error when `t` holds (anywhere inside a tuple, function or reference
// type) a tensor type that is too large; `what` says where `t` came from.
absl::Status CheckTensorSizes(const Type& t, absl::string_view what) {
  std::vector<const TypeNode*> work = {t.get()};
  while (!work.empty()) {
    const TypeNode* n = work.back();
    work.pop_back();
    if (n == nullptr) continue;
    switch (n->kind) {
      case TypeKind::kTensor: {
        const auto* tt = static_cast<const TensorTypeNode*>(n);
        if (!TensorFits(tt)) {
          return absl::InvalidArgumentError(absl::StrCat(
              what, " has type ", TypeToString(Type(tt)),
              ", which is too large: its static dims hold more than 2^48 bytes (256 TiB), the "
              "most kiln addresses in one tensor"));
        }
        break;
      }
      default:
        PushChildTypes(n, &work);
        break;
    }
  }
  return absl::OkStatus();
}

// ---- The solver --------------------------------------------------------------

class Solver : public TypeReporter {
 public:
  // Follows bindings of an incomplete type to its current representative.
  Type Find(Type t) {
    std::vector<int64_t> path;
    while (t && t->kind == TypeKind::kIncomplete) {
      auto it = binding_.find(static_cast<const IncompleteTypeNode*>(t.get())->id);
      if (it == binding_.end()) break;
      path.push_back(it->first);
      t = it->second;
    }
    for (int64_t p : path) binding_[p] = t;  // path compression
    return t;
  }

  // Substitutes every solved unknown inside `t`.
  Type Resolve(const Type& t0) {
    Type t = Find(t0);
    if (!t) return t;
    switch (t->kind) {
      case TypeKind::kTuple: {
        const auto* n = t.as<TupleTypeNode>();
        std::vector<Type> f;
        bool changed = false;
        for (const Type& x : n->fields) {
          f.push_back(Resolve(x));
          changed |= f.back().get() != x.get();
        }
        return changed ? Type(MakeTupleType(std::move(f))) : t;
      }
      case TypeKind::kFunc: {
        const auto* n = t.as<FuncTypeNode>();
        std::vector<Type> a;
        bool changed = false;
        for (const Type& x : n->arg_types) {
          a.push_back(Resolve(x));
          changed |= a.back().get() != x.get();
        }
        Type r = Resolve(n->ret_type);
        changed |= r.get() != n->ret_type.get();
        if (!changed) return t;
        return Type(*MakeFuncType(std::move(a), r, n->type_params, n->type_constraints));
      }
      case TypeKind::kTypeCall: {
        const auto* n = t.as<TypeCallNode>();
        std::vector<Type> a;
        bool changed = false;
        for (const Type& x : n->args) {
          a.push_back(Resolve(x));
          changed |= a.back().get() != x.get();
        }
        return changed ? Type(*MakeTypeCall(n->func, std::move(a))) : t;
      }
      case TypeKind::kRef: {
        Type v = Resolve(t.as<RefTypeNode>()->value);
        return v.get() == t.as<RefTypeNode>()->value.get() ? t : Type(*MakeRefType(v));
      }
      default: return t;
    }
  }

  absl::Status Unify(const Type& a, const Type& b) {
    std::vector<std::pair<Type, Type>> work = {{a, b}};
    while (!work.empty()) {
      auto [x0, y0] = std::move(work.back());
      work.pop_back();
      Type x = Find(x0), y = Find(y0);
      if (x.get() == y.get()) continue;
      if (x->kind == TypeKind::kIncomplete) {
        if (Occurs(x.get(), y)) return Mismatch(a, b, "a type cannot contain itself");
        binding_[static_cast<const IncompleteTypeNode*>(x.get())->id] = y;
        continue;
      }
      if (y->kind == TypeKind::kIncomplete) {
        if (Occurs(y.get(), x)) return Mismatch(a, b, "a type cannot contain itself");
        binding_[static_cast<const IncompleteTypeNode*>(y.get())->id] = x;
        continue;
      }
      // `Seq[]` and `Seq`: an ADT without type parameters, called or named.
      for (Type* t : {&x, &y}) {
        if ((*t)->kind != TypeKind::kTypeCall) continue;
        const auto* c = t->as<TypeCallNode>();
        if (c->args.empty() && c->func && c->func->kind == TypeKind::kGlobalTypeVar) *t = c->func;
      }
      if (x.get() == y.get()) continue;
      if (x->kind != y->kind) return Mismatch(a, b, "");
      switch (x->kind) {
        case TypeKind::kTensor: {
          const auto* tx = x.as<TensorTypeNode>();
          const auto* ty = y.as<TensorTypeNode>();
          if (tx->dtype != ty->dtype)
            return Mismatch(a, b, absl::StrCat("dtype ", tx->dtype.ToString(), " vs ",
                                               ty->dtype.ToString()));
          if (tx->shape.size() != ty->shape.size())
            return Mismatch(a, b, absl::StrCat("rank ", tx->shape.size(), " vs ", ty->shape.size()));
          for (size_t i = 0; i < tx->shape.size(); ++i) {
            const Dim& dx = tx->shape[i];
            const Dim& dy = ty->shape[i];
            if (dx == dy || dx.is_any() || dy.is_any()) continue;
            return Mismatch(a, b, absl::StrCat("dimension ", i, ": ", dx.ToString(), " vs ",
                                               dy.ToString()));
          }
          // Keep the more precise of the two where one has `?` dims.
          break;
        }
        case TypeKind::kTuple: {
          const auto& fx = x.as<TupleTypeNode>()->fields;
          const auto& fy = y.as<TupleTypeNode>()->fields;
          if (fx.size() != fy.size())
            return Mismatch(a, b, absl::StrCat("tuple of ", fx.size(), " vs ", fy.size(), " fields"));
          for (size_t i = 0; i < fx.size(); ++i) work.emplace_back(fx[i], fy[i]);
          break;
        }
        case TypeKind::kFunc: {
          const auto* fx = x.as<FuncTypeNode>();
          const auto* fy = y.as<FuncTypeNode>();
          if (fx->arg_types.size() != fy->arg_types.size())
            return Mismatch(a, b, absl::StrCat("function of ", fx->arg_types.size(), " vs ",
                                               fy->arg_types.size(), " arguments"));
          if (fx->type_params.size() != fy->type_params.size())
            return Mismatch(a, b, "different numbers of type parameters");
          for (size_t i = 0; i < fx->arg_types.size(); ++i)
            work.emplace_back(fx->arg_types[i], fy->arg_types[i]);
          work.emplace_back(fx->ret_type, fy->ret_type);
          break;
        }
        case TypeKind::kTypeCall: {
          const auto* cx = x.as<TypeCallNode>();
          const auto* cy = y.as<TypeCallNode>();
          if (!TypeEqual(cx->func, cy->func) || cx->args.size() != cy->args.size())
            return Mismatch(a, b, "");
          for (size_t i = 0; i < cx->args.size(); ++i) work.emplace_back(cx->args[i], cy->args[i]);
          break;
        }
        case TypeKind::kRef:
          work.emplace_back(x.as<RefTypeNode>()->value, y.as<RefTypeNode>()->value);
          break;
        default:
          if (!TypeEqual(x, y)) return Mismatch(a, b, "");
      }
    }
    return absl::OkStatus();
  }

  absl::Status Assign(const Type& dst, const Type& t) override { return Unify(dst, t); }

 private:
  bool Occurs(const TypeNode* v, const Type& t) {
    Type r = Resolve(t);
    std::vector<const TypeNode*> work = {r.get()};
    while (!work.empty()) {
      const TypeNode* n = work.back();
      work.pop_back();
      if (n == v) return true;
      PushChildTypes(n, &work);
    }
    return false;
  }

  absl::Status Mismatch(const Type& a, const Type& b, absl::string_view detail) {
    return absl::InvalidArgumentError(absl::StrCat(
        "type mismatch: ", TypeToString(Resolve(a)), " vs ", TypeToString(Resolve(b)),
        detail.empty() ? "" : " (", detail, detail.empty() ? "" : ")"));
  }

  // Keyed by id, not address: an unknown that dies may free its address for
  // a new one.
  absl::flat_hash_map<int64_t, Type> binding_;
};

// ---- Constraint generation ----------------------------------------------------

struct Relation {
  enum class Kind { kOp, kTupleGetItem };
  Kind kind;
  const TypeRelationFn* fn = nullptr;
  const OpDef* op = nullptr;
  std::vector<Type> args;  // inputs then output
  int index = 0;           // kTupleGetItem
  Expr expr;               // for error messages
};

class Inferencer {
 public:
  explicit Inferencer(const Module* module) : module_(module) {}

  absl::Status AddGlobals() {
    if (!module_) return absl::OkStatus();
    for (const auto& [gv, fn] : module_->functions()) {
      if (!fn) return absl::InvalidArgumentError(absl::StrCat("function @", gv->name,
                                                              " is declared but never defined"));
      std::vector<Type> params;
      for (const Var& p : fn->params) params.push_back(VarType(p.get()));
      Type ret = fn->ret_type ? fn->ret_type : Type(MakeIncompleteType());
      KILN_ASSIGN_OR_RETURN(FuncType ft, MakeFuncType(params, ret, fn->type_params));
      global_types_[gv->name] = ft;
    }
    return absl::OkStatus();
  }

  // Generates constraints for every node under `root`.
  absl::Status Visit(const Expr& root) {
    for (const Expr& e : PostOrder(root)) {
      if (types_.contains(e.get())) continue;
      // An operator has no type of its own: it may only be the callee of a call.
      if (e->kind == ExprKind::kOp) {
        types_.emplace(e.get(), Type());
        continue;
      }
      const Expr* callee = e->kind == ExprKind::kCall ? &e.as<CallNode>()->op : nullptr;
      absl::Status misuse;
      ForEachChild(e, [&](const Expr& c) {
        if (misuse.ok() && c->kind == ExprKind::kOp && (callee == nullptr || c.get() != callee->get()))
          misuse = absl::InvalidArgumentError(absl::StrCat(
              "operator ", c.as<OpNode>()->name(), " is used as a value; operators can only be called"));
      });
      if (const auto* call = e.as<CallNode>()) {
        for (const Expr& a : call->args)
          if (misuse.ok() && a->kind == ExprKind::kOp)
            misuse = absl::InvalidArgumentError(absl::StrCat(
                "operator ", a.as<OpNode>()->name(), " is used as a value; operators can only be called"));
      }
      if (!misuse.ok()) return InExpr(misuse, e);
      if (root->kind == ExprKind::kOp) return InExpr(absl::InvalidArgumentError("an operator is not an expression with a value"), root);
      absl::StatusOr<Type> t = Generate(e);
      if (!t.ok()) return InExpr(t.status(), e);
      types_.emplace(e.get(), *t);
      order_.push_back(e);
    }
    return absl::OkStatus();
  }

  absl::Status UnifyGlobal(const GlobalVar& gv, const Function& fn) {
    auto it = global_types_.find(gv->name);
    if (it == global_types_.end()) return absl::OkStatus();
    return InExpr(solver_.Unify(it->second, types_.at(fn.get())), fn);
  }

  // Solves the relations to a fixed point.
  absl::Status Solve() {
    std::deque<size_t> queue;
    for (size_t i = 0; i < relations_.size(); ++i) queue.push_back(i);
    size_t stalled = 0;  // consecutive relations that made no progress
    while (!queue.empty() && stalled <= queue.size()) {
      size_t i = queue.front();
      queue.pop_front();
      KILN_ASSIGN_OR_RETURN(bool solved, Run(relations_[i]));
      if (solved) {
        stalled = 0;
      } else {
        queue.push_back(i);
        ++stalled;
      }
    }
    if (!queue.empty()) {
      const Relation& r = relations_[queue.front()];
      std::string what = r.kind == Relation::Kind::kOp
                             ? absl::StrCat("the inputs of ", r.op->name)
                             : std::string("the tuple being indexed");
      return absl::InvalidArgumentError(absl::StrCat("cannot infer the type of ", what,
                                                     ": not enough type information\n  in ",
                                                     Show(r.expr)));
    }
    return absl::OkStatus();
  }

  // Resolved types of every node; fails if one is still unknown.
  absl::StatusOr<std::vector<std::pair<Expr, Type>>> Results() {
    std::vector<std::pair<Expr, Type>> out;
    out.reserve(order_.size());
    for (const Expr& e : order_) {
      Type t = solver_.Resolve(types_.at(e.get()));
      if (!t) continue;
      if (TypeHasIncomplete(t)) {
        std::string hint = e->kind == ExprKind::kVar ? "; add a type annotation" : "";
        return absl::InvalidArgumentError(absl::StrCat("cannot infer the type of ", Show(e),
                                                       ": got ", TypeToString(t), hint));
      }
      KILN_RETURN_IF_ERROR(InExpr(CheckTensorSizes(t, "the expression"), e));
      out.emplace_back(e, std::move(t));
    }
    return out;
  }

  Type TypeOf(const Expr& e) { return solver_.Resolve(types_.at(e.get())); }

 private:
  Type VarType(const VarNode* v) {
    auto it = var_types_.find(v);
    if (it != var_types_.end()) return it->second;
    Type t = v->type_annotation ? v->type_annotation : Type(MakeIncompleteType());
    var_types_.emplace(v, t);
    return t;
  }

  const Type& Of(const Expr& e) { return types_.at(e.get()); }

  // Replaces type params by fresh unknowns (or explicit type args).
  absl::StatusOr<Type> Instantiate(const FuncTypeNode* ft, const std::vector<Type>& type_args) {
    if (ft->type_params.empty()) return Type(ft);
    if (!type_args.empty() && type_args.size() != ft->type_params.size())
      return absl::InvalidArgumentError(absl::StrCat("expected ", ft->type_params.size(),
                                                     " type arguments, got ", type_args.size()));
    absl::flat_hash_map<std::string, Type> subst;
    for (size_t i = 0; i < ft->type_params.size(); ++i)
      subst[ft->type_params[i]->name] =
          type_args.empty() ? Type(MakeIncompleteType()) : type_args[i];
    std::vector<Type> args;
    for (const Type& a : ft->arg_types) args.push_back(SubstTypeVars(a, subst));
    KILN_ASSIGN_OR_RETURN(FuncType out, MakeFuncType(std::move(args), SubstTypeVars(ft->ret_type, subst)));
    return Type(out);
  }

  Type SubstTypeVars(const Type& t, const absl::flat_hash_map<std::string, Type>& s) {
    if (!t) return t;
    switch (t->kind) {
      case TypeKind::kTypeVar: {
        auto it = s.find(t.as<TypeVarNode>()->name);
        return it == s.end() ? t : it->second;
      }
      case TypeKind::kTuple: {
        std::vector<Type> f;
        for (const Type& x : t.as<TupleTypeNode>()->fields) f.push_back(SubstTypeVars(x, s));
        return MakeTupleType(std::move(f));
      }
      case TypeKind::kFunc: {
        const auto* n = t.as<FuncTypeNode>();
        absl::flat_hash_map<std::string, Type> inner = s;
        for (const auto& tp : n->type_params) inner.erase(tp->name);  // shadowed
        std::vector<Type> a;
        for (const Type& x : n->arg_types) a.push_back(SubstTypeVars(x, inner));
        return *MakeFuncType(std::move(a), SubstTypeVars(n->ret_type, inner), n->type_params);
      }
      case TypeKind::kTypeCall: {
        const auto* n = t.as<TypeCallNode>();
        std::vector<Type> a;
        for (const Type& x : n->args) a.push_back(SubstTypeVars(x, s));
        return *MakeTypeCall(n->func, std::move(a));
      }
      case TypeKind::kRef: return *MakeRefType(SubstTypeVars(t.as<RefTypeNode>()->value, s));
      default: return t;
    }
  }

  // The type of a constructor used as a function: fn<A...>(inputs) -> Adt[A...].
  absl::StatusOr<FuncType> ConstructorType(const ConstructorNode* c) {
    std::vector<TypeVar> tvars;
    if (module_) {
      auto td = module_->LookupTypeDef(c->belong_to->name);
      if (td.ok()) tvars = (*td)->type_vars;
    }
    std::vector<Type> targs(tvars.begin(), tvars.end());
    KILN_ASSIGN_OR_RETURN(TypeCall ret, MakeTypeCall(c->belong_to, targs));
    return MakeFuncType(c->inputs, ret, tvars);
  }

  absl::Status BindPattern(const Pattern& root, const Type& expected) {
    std::vector<std::pair<const PatternNode*, Type>> work = {{root.get(), expected}};
    while (!work.empty()) {
      auto [p, t] = std::move(work.back());
      work.pop_back();
      switch (p->kind) {
        case PatternKind::kWildcard: break;
        case PatternKind::kVar:
          KILN_RETURN_IF_ERROR(solver_.Unify(VarType(static_cast<const PatternVarNode*>(p)->var.get()), t));
          break;
        case PatternKind::kConstructor: {
          const auto* pc = static_cast<const PatternConstructorNode*>(p);
          KILN_ASSIGN_OR_RETURN(FuncType ct, ConstructorType(pc->constructor.get()));
          KILN_ASSIGN_OR_RETURN(Type inst, Instantiate(ct.get(), {}));
          const auto* ft = inst.as<FuncTypeNode>();
          KILN_RETURN_IF_ERROR(solver_.Unify(ft->ret_type, t));
          for (size_t i = 0; i < pc->patterns.size(); ++i)
            work.emplace_back(pc->patterns[i].get(), ft->arg_types[i]);
          break;
        }
        case PatternKind::kTuple: {
          const auto* pt = static_cast<const PatternTupleNode*>(p);
          std::vector<Type> fields;
          for (size_t i = 0; i < pt->patterns.size(); ++i) fields.push_back(MakeIncompleteType());
          KILN_RETURN_IF_ERROR(solver_.Unify(MakeTupleType(fields), t));
          for (size_t i = 0; i < pt->patterns.size(); ++i)
            work.emplace_back(pt->patterns[i].get(), fields[i]);
          break;
        }
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Type> Generate(const Expr& e) {
    switch (e->kind) {
      case ExprKind::kVar: return VarType(e.as<VarNode>());
      case ExprKind::kGlobalVar: {
        const auto* gv = e.as<GlobalVarNode>();
        auto it = global_types_.find(gv->name);
        if (it == global_types_.end())
          return absl::NotFoundError(absl::StrCat("unknown global function @", gv->name));
        return it->second;
      }
      case ExprKind::kConstant: return Type(e.as<ConstantNode>()->tensor_type());
      case ExprKind::kTuple: {
        std::vector<Type> f;
        for (const Expr& x : e.as<TupleNode>()->fields) f.push_back(Of(x));
        return Type(MakeTupleType(std::move(f)));
      }
      case ExprKind::kTupleGetItem: {
        const auto* g = e.as<TupleGetItemNode>();
        Type out = MakeIncompleteType();
        Relation r{Relation::Kind::kTupleGetItem, nullptr, nullptr, {Of(g->tuple), out}, g->index, e};
        KILN_ASSIGN_OR_RETURN(bool solved, Run(r));
        if (!solved) relations_.push_back(std::move(r));
        return out;
      }
      case ExprKind::kCall: return GenerateCall(e);
      case ExprKind::kFunction: {
        const auto* f = e.as<FunctionNode>();
        std::vector<Type> params;
        for (const Var& p : f->params) params.push_back(VarType(p.get()));
        Type ret = Of(f->body);
        if (f->ret_type) {
          KILN_RETURN_IF_ERROR(solver_.Unify(f->ret_type, ret).ok()
                                   ? absl::OkStatus()
                                   : absl::InvalidArgumentError(absl::StrCat(
                                         "function body has type ", TypeToString(solver_.Resolve(ret)),
                                         " but the declared return type is ",
                                         TypeToString(f->ret_type))));
          ret = f->ret_type;
        }
        KILN_ASSIGN_OR_RETURN(FuncType ft, MakeFuncType(std::move(params), ret, f->type_params));
        return Type(ft);
      }
      case ExprKind::kLet: {
        const auto* l = e.as<LetNode>();
        Type vt = VarType(l->var.get());
        if (absl::Status s = solver_.Unify(vt, Of(l->value)); !s.ok())
          return absl::InvalidArgumentError(absl::StrCat("let %", l->var->name_hint, ": ", s.message()));
        return Of(l->body);
      }
      case ExprKind::kIf: {
        const auto* i = e.as<IfNode>();
        if (absl::Status s = solver_.Unify(Of(i->cond), MakeScalarType(DataType::Bool())); !s.ok())
          return absl::InvalidArgumentError(absl::StrCat(
              "if condition must be a scalar bool, got ", TypeToString(solver_.Resolve(Of(i->cond)))));
        if (absl::Status s = solver_.Unify(Of(i->true_branch), Of(i->false_branch)); !s.ok())
          return absl::InvalidArgumentError(absl::StrCat("if branches have different types: ",
                                                         s.message()));
        return Of(i->true_branch);
      }
      case ExprKind::kOp:
        return absl::InvalidArgumentError(absl::StrCat(
            "operator ", e.as<OpNode>()->name(), " is used as a value; operators can only be called"));
      case ExprKind::kConstructor: {
        // A constructor is shared by every use: it keeps its polymorphic type
        // (fn<A>(A, List[A]) -> List[A]); each call instantiates it afresh.
        KILN_ASSIGN_OR_RETURN(FuncType ct, ConstructorType(e.as<ConstructorNode>()));
        return Type(ct);
      }
      case ExprKind::kMatch: {
        const auto* m = e.as<MatchNode>();
        Type out = MakeIncompleteType();
        for (size_t i = 0; i < m->clauses.size(); ++i) {
          if (absl::Status s = BindPattern(m->clauses[i].lhs, Of(m->data)); !s.ok())
            return absl::InvalidArgumentError(
                absl::StrCat("match clause ", i, ": pattern does not fit the data: ", s.message()));
          if (absl::Status s = solver_.Unify(out, Of(m->clauses[i].rhs)); !s.ok())
            return absl::InvalidArgumentError(
                absl::StrCat("match clause ", i, " has a different type: ", s.message()));
        }
        return out;
      }
      case ExprKind::kRefCreate: {
        KILN_ASSIGN_OR_RETURN(RefType rt, MakeRefType(Of(e.as<RefCreateNode>()->value)));
        return Type(rt);
      }
      case ExprKind::kRefRead: {
        Type v = MakeIncompleteType();
        KILN_ASSIGN_OR_RETURN(RefType rt, MakeRefType(v));
        if (absl::Status s = solver_.Unify(Of(e.as<RefReadNode>()->ref), rt); !s.ok())
          return absl::InvalidArgumentError(absl::StrCat("ref_read of a non-reference: ", s.message()));
        return v;
      }
      case ExprKind::kRefWrite: {
        const auto* w = e.as<RefWriteNode>();
        KILN_ASSIGN_OR_RETURN(RefType rt, MakeRefType(Of(w->value)));
        if (absl::Status s = solver_.Unify(Of(w->ref), rt); !s.ok())
          return absl::InvalidArgumentError(absl::StrCat("ref_write: ", s.message()));
        return Type(MakeTupleType({}));
      }
    }
    return absl::InternalError("unhandled expression kind");
  }

  absl::StatusOr<Type> GenerateCall(const Expr& e) {
    const auto* c = e.as<CallNode>();
    std::vector<Type> args;
    for (const Expr& a : c->args) args.push_back(Of(a));
    if (const auto* op = c->op.as<OpNode>()) {
      const TypeRelationFn* fn = FindTypeRelation(op->def);
      if (fn == nullptr)
        return absl::UnimplementedError(
            absl::StrCat("operator ", op->name(), " has no type relation registered"));
      Type out = MakeIncompleteType();
      args.push_back(out);
      Relation r{Relation::Kind::kOp, fn, op->def, std::move(args), 0, e};
      KILN_ASSIGN_OR_RETURN(bool solved, Run(r));
      if (!solved) relations_.push_back(std::move(r));
      return out;
    }
    Type callee;
    if (const auto* ctor = c->op.as<ConstructorNode>()) {
      KILN_ASSIGN_OR_RETURN(FuncType ct, ConstructorType(ctor));
      callee = ct;
    } else {
      callee = solver_.Resolve(Of(c->op));
    }
    if (const auto* ft = callee.as<FuncTypeNode>()) {
      KILN_ASSIGN_OR_RETURN(callee, Instantiate(ft, c->type_args));
      const auto* inst = callee.as<FuncTypeNode>();
      if (inst->arg_types.size() != args.size())
        return absl::InvalidArgumentError(absl::StrCat(Atom(c->op), " takes ", inst->arg_types.size(),
                                                       " arguments, got ", args.size()));
      for (size_t i = 0; i < args.size(); ++i) {
        if (absl::Status s = solver_.Unify(inst->arg_types[i], args[i]); !s.ok())
          return absl::InvalidArgumentError(absl::StrCat(
              "argument ", i, " of ", Atom(c->op), " has type ", TypeToString(solver_.Resolve(args[i])),
              "; expected ", TypeToString(solver_.Resolve(inst->arg_types[i])), " (", s.message(), ")"));
      }
      return inst->ret_type;
    }
    if (callee->kind != TypeKind::kIncomplete)
      return absl::InvalidArgumentError(absl::StrCat("cannot call a value of type ",
                                                     TypeToString(callee)));
    Type ret = MakeIncompleteType();
    KILN_ASSIGN_OR_RETURN(FuncType ft, MakeFuncType(std::move(args), ret));
    KILN_RETURN_IF_ERROR(solver_.Unify(callee, ft));
    return ret;
  }

  absl::StatusOr<bool> Run(Relation& r) {
    for (Type& a : r.args) a = solver_.Resolve(a);
    if (r.kind == Relation::Kind::kTupleGetItem) {
      const Type& t = r.args[0];
      if (t->kind == TypeKind::kIncomplete) return false;
      const auto* tt = t.as<TupleTypeNode>();
      if (tt == nullptr)
        return InExpr(absl::InvalidArgumentError(absl::StrCat(
                          "tuple projection .", r.index, " of a non-tuple of type ", TypeToString(t))),
                      r.expr);
      if (r.index >= static_cast<int>(tt->fields.size()))
        return InExpr(absl::InvalidArgumentError(absl::StrCat("tuple index ", r.index,
                                                              " out of range for ", TypeToString(t))),
                      r.expr);
      KILN_RETURN_IF_ERROR(InExpr(solver_.Unify(r.args[1], tt->fields[r.index]), r.expr));
      return true;
    }
    // A relation never sees a shape too large to multiply out.
    for (size_t i = 0; i + 1 < r.args.size(); ++i) {
      KILN_RETURN_IF_ERROR(InExpr(
          CheckTensorSizes(r.args[i], absl::StrCat("argument ", i, " of ", r.op->name)), r.expr));
    }
    const CallNode* call = r.expr.as<CallNode>();
    RelationCall rc{r.op->name, r.args, static_cast<int>(r.args.size()) - 1, call->attrs};
    absl::StatusOr<bool> solved = (*r.fn)(rc, solver_);
    if (!solved.ok()) return InExpr(solved.status(), r.expr);
    return *solved;
  }

  const Module* module_;
  Solver solver_;
  absl::flat_hash_map<std::string, Type> global_types_;
  absl::flat_hash_map<const VarNode*, Type> var_types_;
  absl::flat_hash_map<const ExprNode*, Type> types_;
  std::vector<Expr> order_;
  std::vector<Relation> relations_;
};

}  // namespace

absl::StatusOr<Module> InferType(const Module& module) {
  RegisterCoreTypeRelations();
  Inferencer inf(&module);
  KILN_RETURN_IF_ERROR(inf.AddGlobals());
  for (const auto& [gv, fn] : module.functions()) {
    absl::Status s = inf.Visit(fn);
    if (s.ok()) s = inf.UnifyGlobal(gv, fn);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("in @", gv->name, ": ", s.message()));
  }
  KILN_RETURN_IF_ERROR(inf.Solve());
  KILN_ASSIGN_OR_RETURN(auto results, inf.Results());
  // Nodes shared with other modules (a model optimized or compiled by
  // several threads at once, kiln.h) already carry their type: write only a
  // type that differs, so threads inferring modules that share nodes only
  // read them (ThreadSanitizer reported the unconditional write racing with
  // FuseOps's read of the same node in kiln_api_test ThreadsShareOneModel).
  for (auto& [e, t] : results) {
    const Type& old = e->checked_type();
    if (old.defined() && (old.get() == t.get() || TypeEqual(old, t))) continue;
    e->set_checked_type(std::move(t));
  }
  return module;
}

absl::StatusOr<Type> InferExprType(const Expr& expr, const Module* module) {
  if (!expr) return absl::InvalidArgumentError("cannot infer the type of a null expression");
  RegisterCoreTypeRelations();
  Inferencer inf(module);
  KILN_RETURN_IF_ERROR(inf.AddGlobals());
  KILN_RETURN_IF_ERROR(inf.Visit(expr));
  KILN_RETURN_IF_ERROR(inf.Solve());
  KILN_ASSIGN_OR_RETURN(auto results, inf.Results());
  for (auto& [e, t] : results) e->set_checked_type(std::move(t));
  return expr->checked_type();
}

}  // namespace kiln::types
