#include "ir/type.h"

#include <atomic>
#include <unordered_map>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/expr.h"

namespace kiln {

TypeDataNode::TypeDataNode(GlobalTypeVar header, std::vector<TypeVar> type_vars,
                           std::vector<Constructor> constructors)
    : TypeNode(kKind),
      header(std::move(header)),
      type_vars(std::move(type_vars)),
      constructors(std::move(constructors)) {}
TypeDataNode::~TypeDataNode() = default;

TensorType MakeTensorType(Shape shape, DataType dtype) {
  return MakeRef<TensorTypeNode>(std::move(shape), dtype);
}
TensorType MakeScalarType(DataType dtype) { return MakeTensorType({}, dtype); }
TupleType MakeTupleType(std::vector<Type> fields) {
  return MakeRef<TupleTypeNode>(std::move(fields));
}
TypeVar MakeTypeVar(std::string name, TypeVarKind kind) {
  return MakeRef<TypeVarNode>(std::move(name), kind);
}
GlobalTypeVar MakeGlobalTypeVar(std::string name, TypeVarKind kind) {
  return MakeRef<GlobalTypeVarNode>(std::move(name), kind);
}
IncompleteType MakeIncompleteType(TypeVarKind kind) {
  static std::atomic<int64_t> next{0};
  return MakeRef<IncompleteTypeNode>(kind, next.fetch_add(1, std::memory_order_relaxed));
}

namespace {
absl::Status CheckTypes(const std::vector<Type>& ts, const char* what) {
  for (size_t i = 0; i < ts.size(); ++i)
    if (!ts[i]) return absl::InvalidArgumentError(absl::StrCat(what, " ", i, " is null"));
  return absl::OkStatus();
}
}  // namespace

absl::StatusOr<FuncType> MakeFuncType(std::vector<Type> arg_types, Type ret_type,
                                      std::vector<TypeVar> type_params,
                                      std::vector<TypeRelation> type_constraints) {
  if (auto s = CheckTypes(arg_types, "function type argument"); !s.ok()) return s;
  if (!ret_type) return absl::InvalidArgumentError("function type has no return type");
  for (const auto& tp : type_params)
    if (!tp) return absl::InvalidArgumentError("function type has a null type parameter");
  for (const auto& c : type_constraints)
    if (!c) return absl::InvalidArgumentError("function type has a null constraint");
  return MakeRef<FuncTypeNode>(std::move(arg_types), std::move(ret_type), std::move(type_params),
                               std::move(type_constraints));
}

absl::StatusOr<TypeRelation> MakeTypeRelation(std::string func, std::vector<Type> args,
                                              int num_inputs, Attrs attrs) {
  if (func.empty()) return absl::InvalidArgumentError("type relation has no function name");
  if (auto s = CheckTypes(args, "type relation argument"); !s.ok()) return s;
  if (num_inputs < 0 || num_inputs > static_cast<int>(args.size()))
    return absl::InvalidArgumentError(absl::StrCat("type relation '", func, "' has ", args.size(),
                                                   " arguments but num_inputs=", num_inputs));
  return MakeRef<TypeRelationNode>(std::move(func), std::move(args), num_inputs, std::move(attrs));
}

absl::StatusOr<TypeCall> MakeTypeCall(Type func, std::vector<Type> args) {
  if (!func) return absl::InvalidArgumentError("type call has no function");
  if (func->kind != TypeKind::kGlobalTypeVar && func->kind != TypeKind::kTypeVar)
    return absl::InvalidArgumentError(
        absl::StrCat("type call of ", TypeToString(func), ": only an ADT name can be applied"));
  if (auto s = CheckTypes(args, "type call argument"); !s.ok()) return s;
  return MakeRef<TypeCallNode>(std::move(func), std::move(args));
}

absl::StatusOr<RefType> MakeRefType(Type value) {
  if (!value) return absl::InvalidArgumentError("reference type of null");
  return MakeRef<RefTypeNode>(std::move(value));
}

absl::StatusOr<TypeData> MakeTypeData(GlobalTypeVar header, std::vector<TypeVar> type_vars,
                                      std::vector<Constructor> constructors) {
  if (!header) return absl::InvalidArgumentError("ADT definition has no name");
  for (size_t i = 0; i < constructors.size(); ++i) {
    const Constructor& c = constructors[i];
    if (!c) return absl::InvalidArgumentError(absl::StrCat("ADT ", header->name, ": null constructor"));
    if (c->belong_to.get() != header.get())
      return absl::InvalidArgumentError(absl::StrCat("constructor ", c->name,
                                                     " does not belong to ADT ", header->name));
    if (c->tag != static_cast<int32_t>(i))
      return absl::InvalidArgumentError(absl::StrCat("constructor ", c->name, " of ADT ",
                                                     header->name, " has tag ", c->tag,
                                                     "; expected ", i));
  }
  return MakeRef<TypeDataNode>(std::move(header), std::move(type_vars), std::move(constructors));
}

std::string TypeToString(const Type& t) {
  if (!t) return "<null>";
  switch (t->kind) {
    case TypeKind::kTensor: {
      const auto* n = static_cast<const TensorTypeNode*>(t.get());
      return absl::StrCat("Tensor[", ShapeToString(n->shape), ", ", n->dtype.ToString(), "]");
    }
    case TypeKind::kTuple: {
      const auto* n = static_cast<const TupleTypeNode*>(t.get());
      std::string s = "(";
      for (size_t i = 0; i < n->fields.size(); ++i) {
        if (i) s += ", ";
        s += TypeToString(n->fields[i]);
      }
      if (n->fields.size() == 1) s += ",";
      return s + ")";
    }
    case TypeKind::kFunc: {
      const auto* n = static_cast<const FuncTypeNode*>(t.get());
      std::string s = "fn ";
      if (!n->type_params.empty()) {
        s += "<";
        for (size_t i = 0; i < n->type_params.size(); ++i) {
          if (i) s += ", ";
          s += n->type_params[i]->name;
        }
        s += ">";
      }
      s += "(";
      for (size_t i = 0; i < n->arg_types.size(); ++i) {
        if (i) s += ", ";
        s += TypeToString(n->arg_types[i]);
      }
      return s + ") -> " + TypeToString(n->ret_type);
    }
    case TypeKind::kTypeVar: return static_cast<const TypeVarNode*>(t.get())->name;
    case TypeKind::kGlobalTypeVar: return static_cast<const GlobalTypeVarNode*>(t.get())->name;
    case TypeKind::kIncomplete: return "_";
    case TypeKind::kRelation: {
      const auto* n = static_cast<const TypeRelationNode*>(t.get());
      std::string s = absl::StrCat("rel:", n->func, "(");
      for (size_t i = 0; i < n->args.size(); ++i) {
        if (i) s += ", ";
        s += TypeToString(n->args[i]);
      }
      return s + ")";
    }
    case TypeKind::kTypeCall: {
      const auto* n = static_cast<const TypeCallNode*>(t.get());
      std::string s = TypeToString(n->func) + "[";
      for (size_t i = 0; i < n->args.size(); ++i) {
        if (i) s += ", ";
        s += TypeToString(n->args[i]);
      }
      return s + "]";
    }
    case TypeKind::kTypeData:
      return static_cast<const TypeDataNode*>(t.get())->header->name;
    case TypeKind::kRef:
      return "ref(" + TypeToString(static_cast<const RefTypeNode*>(t.get())->value) + ")";
  }
  return "?";
}

namespace {

// `Seq[]` (a TypeCall without arguments, what a constructor of an ADT
// without type parameters returns) is the type `Seq` names.
const Type& WithoutEmptyCall(const Type& t) {
  if (t && t->kind == TypeKind::kTypeCall) {
    const auto* c = static_cast<const TypeCallNode*>(t.get());
    if (c->args.empty() && c->func && c->func->kind == TypeKind::kGlobalTypeVar) return c->func;
  }
  return t;
}

class TypeEq {
 public:
  bool Eq(const Type& a0, const Type& b0) {
    const Type& a = WithoutEmptyCall(a0);
    const Type& b = WithoutEmptyCall(b0);
    if (a.get() == b.get()) return true;
    if (!a || !b || a->kind != b->kind) return false;
    switch (a->kind) {
      case TypeKind::kTensor: {
        const auto* x = static_cast<const TensorTypeNode*>(a.get());
        const auto* y = static_cast<const TensorTypeNode*>(b.get());
        return x->dtype == y->dtype && x->shape == y->shape;
      }
      case TypeKind::kTuple:
        return EqList(static_cast<const TupleTypeNode*>(a.get())->fields,
                      static_cast<const TupleTypeNode*>(b.get())->fields);
      case TypeKind::kFunc: {
        const auto* x = static_cast<const FuncTypeNode*>(a.get());
        const auto* y = static_cast<const FuncTypeNode*>(b.get());
        if (x->type_params.size() != y->type_params.size()) return false;
        size_t mark = bound_.size();
        for (size_t i = 0; i < x->type_params.size(); ++i)
          bound_.emplace_back(x->type_params[i].get(), y->type_params[i].get());
        bool ok = EqList(x->arg_types, y->arg_types) && Eq(x->ret_type, y->ret_type) &&
                  x->type_constraints.size() == y->type_constraints.size();
        for (size_t i = 0; ok && i < x->type_constraints.size(); ++i)
          ok = Eq(x->type_constraints[i], y->type_constraints[i]);
        bound_.resize(mark);
        return ok;
      }
      case TypeKind::kTypeVar: {
        const auto* x = static_cast<const TypeVarNode*>(a.get());
        const auto* y = static_cast<const TypeVarNode*>(b.get());
        for (auto it = bound_.rbegin(); it != bound_.rend(); ++it) {
          if (it->first == x || it->second == y) return it->first == x && it->second == y;
        }
        return x->name == y->name && x->var_kind == y->var_kind;
      }
      case TypeKind::kGlobalTypeVar:
        return static_cast<const GlobalTypeVarNode*>(a.get())->name ==
               static_cast<const GlobalTypeVarNode*>(b.get())->name;
      case TypeKind::kIncomplete:
        return static_cast<const IncompleteTypeNode*>(a.get())->id ==
               static_cast<const IncompleteTypeNode*>(b.get())->id;
      case TypeKind::kRelation: {
        const auto* x = static_cast<const TypeRelationNode*>(a.get());
        const auto* y = static_cast<const TypeRelationNode*>(b.get());
        return x->func == y->func && x->num_inputs == y->num_inputs &&
               EqList(x->args, y->args) && AttrsEqual(x->attrs, y->attrs);
      }
      case TypeKind::kTypeCall: {
        const auto* x = static_cast<const TypeCallNode*>(a.get());
        const auto* y = static_cast<const TypeCallNode*>(b.get());
        return Eq(x->func, y->func) && EqList(x->args, y->args);
      }
      case TypeKind::kTypeData: {
        const auto* x = static_cast<const TypeDataNode*>(a.get());
        const auto* y = static_cast<const TypeDataNode*>(b.get());
        if (!Eq(x->header, y->header) || x->type_vars.size() != y->type_vars.size() ||
            x->constructors.size() != y->constructors.size())
          return false;
        size_t mark = bound_.size();
        for (size_t i = 0; i < x->type_vars.size(); ++i)
          bound_.emplace_back(x->type_vars[i].get(), y->type_vars[i].get());
        bool ok = true;
        for (size_t i = 0; ok && i < x->constructors.size(); ++i) {
          const auto& cx = x->constructors[i];
          const auto& cy = y->constructors[i];
          ok = cx->name == cy->name && EqList(cx->inputs, cy->inputs);
        }
        bound_.resize(mark);
        return ok;
      }
      case TypeKind::kRef:
        return Eq(static_cast<const RefTypeNode*>(a.get())->value,
                  static_cast<const RefTypeNode*>(b.get())->value);
    }
    return false;
  }

 private:
  template <typename T>
  bool EqList(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!Eq(a[i], b[i])) return false;
    return true;
  }
  std::vector<std::pair<const TypeVarNode*, const TypeVarNode*>> bound_;
};

class TypeHasher {
 public:
  size_t Hash(const Type& t) {
    if (!t) return 0;
    size_t h = absl::HashOf(static_cast<int>(t->kind));
    switch (t->kind) {
      case TypeKind::kTensor: {
        const auto* n = static_cast<const TensorTypeNode*>(t.get());
        h = absl::HashOf(h, n->dtype.Pack());
        for (const Dim& d : n->shape) h = absl::HashOf(h, d.Hash());
        return h;
      }
      case TypeKind::kTuple:
        return HashList(h, static_cast<const TupleTypeNode*>(t.get())->fields);
      case TypeKind::kFunc: {
        const auto* n = static_cast<const FuncTypeNode*>(t.get());
        size_t mark = bound_.size();
        for (const auto& tp : n->type_params) bound_.push_back(tp.get());
        h = HashList(h, n->arg_types);
        h = absl::HashOf(h, Hash(n->ret_type), n->type_params.size());
        for (const auto& c : n->type_constraints) h = absl::HashOf(h, Hash(c));
        bound_.resize(mark);
        return h;
      }
      case TypeKind::kTypeVar: {
        const auto* n = static_cast<const TypeVarNode*>(t.get());
        for (size_t i = bound_.size(); i-- > 0;)
          if (bound_[i] == n) return absl::HashOf(h, 1, i);
        return absl::HashOf(h, n->name);
      }
      case TypeKind::kGlobalTypeVar:
        return absl::HashOf(h, static_cast<const GlobalTypeVarNode*>(t.get())->name);
      case TypeKind::kIncomplete:
        return absl::HashOf(h, static_cast<const IncompleteTypeNode*>(t.get())->id);
      case TypeKind::kRelation: {
        const auto* n = static_cast<const TypeRelationNode*>(t.get());
        return absl::HashOf(HashList(absl::HashOf(h, n->func), n->args), n->num_inputs);
      }
      case TypeKind::kTypeCall: {
        const auto* n = static_cast<const TypeCallNode*>(t.get());
        return HashList(absl::HashOf(h, Hash(n->func)), n->args);
      }
      case TypeKind::kTypeData:
        return absl::HashOf(h, static_cast<const TypeDataNode*>(t.get())->header->name);
      case TypeKind::kRef:
        return absl::HashOf(h, Hash(static_cast<const RefTypeNode*>(t.get())->value));
    }
    return h;
  }

 private:
  template <typename T>
  size_t HashList(size_t h, const std::vector<T>& v) {
    h = absl::HashOf(h, v.size());
    for (const auto& x : v) h = absl::HashOf(h, Hash(x));
    return h;
  }
  std::vector<const TypeVarNode*> bound_;
};

}  // namespace

bool TypeEqual(const Type& a, const Type& b) { return TypeEq().Eq(a, b); }
size_t TypeHash(const Type& t) { return TypeHasher().Hash(t); }

bool TypeHasIncomplete(const Type& t) {
  if (!t) return false;
  switch (t->kind) {
    case TypeKind::kIncomplete: return true;
    case TypeKind::kTuple:
      for (const auto& f : static_cast<const TupleTypeNode*>(t.get())->fields)
        if (TypeHasIncomplete(f)) return true;
      return false;
    case TypeKind::kFunc: {
      const auto* n = static_cast<const FuncTypeNode*>(t.get());
      for (const auto& a : n->arg_types)
        if (TypeHasIncomplete(a)) return true;
      return TypeHasIncomplete(n->ret_type);
    }
    case TypeKind::kTypeCall:
      for (const auto& a : static_cast<const TypeCallNode*>(t.get())->args)
        if (TypeHasIncomplete(a)) return true;
      return false;
    case TypeKind::kRef: return TypeHasIncomplete(static_cast<const RefTypeNode*>(t.get())->value);
    default: return false;
  }
}

}  // namespace kiln
