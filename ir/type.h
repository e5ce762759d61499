// File: ir/type.h
//
// The types of the graph IR, as in Relay:
//   TensorType      Tensor[(n, 3, 224, 224), float32]   static or symbolic dims
//   TupleType       (Tensor[(2,), int32], Tensor[(), float32])
//   FuncType        fn<T>(T, Tensor[(3,), float32]) -> T
//   TypeVar         T                                    bound by a FuncType / Function
//   IncompleteType  _                                    an unknown the solver fills in
//   TypeRelation    a constraint over types, solved by the named relation
//   GlobalTypeVar   List                                 the name of an ADT
//   TypeCall        List[Tensor[(), int32]]              an ADT applied to type args
//   TypeData        the definition of an ADT: its type vars and constructors
//   RefType         ref(Tensor[(), float32])             the type of a mutable reference
//
// Types are immutable and shared. Build them with the Make* factories; those that
// can be misused return StatusOr and refuse ill-formed input.
#ifndef KILN_IR_TYPE_H_
#define KILN_IR_TYPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attrs.h"
#include "ir/dim.h"
#include "ir/dtype.h"
#include "ir/object.h"

namespace kiln {

enum class TypeKind : uint8_t {
  kTensor,
  kTuple,
  kFunc,
  kTypeVar,
  kIncomplete,
  kRelation,
  kGlobalTypeVar,
  kTypeCall,
  kTypeData,
  kRef,
};

class TypeNode : public Object {
 public:
  const TypeKind kind;
  static bool IsInstance(const Object*) { return true; }

 protected:
  explicit TypeNode(TypeKind k) : kind(k) {}
};
using Type = Ref<const TypeNode>;

#define KILN_TYPE_NODE(Name, Kind)                                      \
  static constexpr TypeKind kKind = TypeKind::Kind;                     \
  static bool IsInstance(const TypeNode* n) { return n->kind == kKind; }

class TensorTypeNode : public TypeNode {
 public:
  KILN_TYPE_NODE(TensorType, kTensor)
  TensorTypeNode(Shape shape, DataType dtype)
      : TypeNode(kKind), shape(std::move(shape)), dtype(dtype) {}
  const Shape shape;
  const DataType dtype;
  int ndim() const { return static_cast<int>(shape.size()); }
};
using TensorType = Ref<const TensorTypeNode>;

class TupleTypeNode : public TypeNode {
 public:
  KILN_TYPE_NODE(TupleType, kTuple)
  explicit TupleTypeNode(std::vector<Type> fields) : TypeNode(kKind), fields(std::move(fields)) {}
  const std::vector<Type> fields;
};
using TupleType = Ref<const TupleTypeNode>;

// Kinds of type variables, as in Relay.
enum class TypeVarKind : uint8_t { kType, kShapeVar, kBaseType, kConstraint, kAdtHandle };

class TypeVarNode : public TypeNode {
 public:
  KILN_TYPE_NODE(TypeVar, kTypeVar)
  TypeVarNode(std::string name, TypeVarKind var_kind)
      : TypeNode(kKind), name(std::move(name)), var_kind(var_kind) {}
  const std::string name;
  const TypeVarKind var_kind;
};
using TypeVar = Ref<const TypeVarNode>;

class GlobalTypeVarNode : public TypeNode {
 public:
  KILN_TYPE_NODE(GlobalTypeVar, kGlobalTypeVar)
  GlobalTypeVarNode(std::string name, TypeVarKind var_kind)
      : TypeNode(kKind), name(std::move(name)), var_kind(var_kind) {}
  const std::string name;
  const TypeVarKind var_kind;
};
using GlobalTypeVar = Ref<const GlobalTypeVarNode>;

// An unknown type. Each has a unique id so that printing and solving can tell
// two unknowns apart.
class IncompleteTypeNode : public TypeNode {
 public:
  KILN_TYPE_NODE(IncompleteType, kIncomplete)
  IncompleteTypeNode(TypeVarKind var_kind, int64_t id)
      : TypeNode(kKind), var_kind(var_kind), id(id) {}
  const TypeVarKind var_kind;
  const int64_t id;
};
using IncompleteType = Ref<const IncompleteTypeNode>;

// A constraint `func(args)`: the first `num_inputs` args are inputs, the rest
// outputs. `func` names a relation registered by the types layer (an operator's
// relation is registered under the operator's name).
class TypeRelationNode : public TypeNode {
 public:
  KILN_TYPE_NODE(TypeRelation, kRelation)
  TypeRelationNode(std::string func, std::vector<Type> args, int num_inputs, Attrs attrs)
      : TypeNode(kKind),
        func(std::move(func)),
        args(std::move(args)),
        num_inputs(num_inputs),
        attrs(std::move(attrs)) {}
  const std::string func;
  const std::vector<Type> args;
  const int num_inputs;
  const Attrs attrs;
};
using TypeRelation = Ref<const TypeRelationNode>;

class FuncTypeNode : public TypeNode {
 public:
  KILN_TYPE_NODE(FuncType, kFunc)
  FuncTypeNode(std::vector<Type> arg_types, Type ret_type, std::vector<TypeVar> type_params,
               std::vector<TypeRelation> type_constraints)
      : TypeNode(kKind),
        arg_types(std::move(arg_types)),
        ret_type(std::move(ret_type)),
        type_params(std::move(type_params)),
        type_constraints(std::move(type_constraints)) {}
  const std::vector<Type> arg_types;
  const Type ret_type;
  const std::vector<TypeVar> type_params;
  const std::vector<TypeRelation> type_constraints;
};
using FuncType = Ref<const FuncTypeNode>;

class TypeCallNode : public TypeNode {
 public:
  KILN_TYPE_NODE(TypeCall, kTypeCall)
  TypeCallNode(Type func, std::vector<Type> args)
      : TypeNode(kKind), func(std::move(func)), args(std::move(args)) {}
  const Type func;  // a GlobalTypeVar (or TypeVar)
  const std::vector<Type> args;
};
using TypeCall = Ref<const TypeCallNode>;

class RefTypeNode : public TypeNode {
 public:
  KILN_TYPE_NODE(RefType, kRef)
  explicit RefTypeNode(Type value) : TypeNode(kKind), value(std::move(value)) {}
  const Type value;
};
using RefType = Ref<const RefTypeNode>;

class ConstructorNode;  // ir/expr.h
using Constructor = Ref<const ConstructorNode>;

// The definition of an algebraic data type:
//   type List[A] { Cons(A, List[A]), Nil }
class TypeDataNode : public TypeNode {
 public:
  KILN_TYPE_NODE(TypeData, kTypeData)
  TypeDataNode(GlobalTypeVar header, std::vector<TypeVar> type_vars,
               std::vector<Constructor> constructors);
  ~TypeDataNode() override;
  const GlobalTypeVar header;
  const std::vector<TypeVar> type_vars;
  const std::vector<Constructor> constructors;
};
using TypeData = Ref<const TypeDataNode>;

// ---- Factories ------------------------------------------------------------

TensorType MakeTensorType(Shape shape, DataType dtype);
// A scalar (rank-0) tensor type.
TensorType MakeScalarType(DataType dtype);
TupleType MakeTupleType(std::vector<Type> fields);
TypeVar MakeTypeVar(std::string name, TypeVarKind kind = TypeVarKind::kType);
GlobalTypeVar MakeGlobalTypeVar(std::string name, TypeVarKind kind = TypeVarKind::kAdtHandle);
// Fresh unknown with a process-unique id.
IncompleteType MakeIncompleteType(TypeVarKind kind = TypeVarKind::kType);
absl::StatusOr<FuncType> MakeFuncType(std::vector<Type> arg_types, Type ret_type,
                                      std::vector<TypeVar> type_params = {},
                                      std::vector<TypeRelation> type_constraints = {});
absl::StatusOr<TypeRelation> MakeTypeRelation(std::string func, std::vector<Type> args,
                                              int num_inputs, Attrs attrs);
absl::StatusOr<TypeCall> MakeTypeCall(Type func, std::vector<Type> args);
absl::StatusOr<RefType> MakeRefType(Type value);
// Checks: every constructor belongs to `header` and tags are 0..n-1 in order.
absl::StatusOr<TypeData> MakeTypeData(GlobalTypeVar header, std::vector<TypeVar> type_vars,
                                      std::vector<Constructor> constructors);

// The text form of a type, as the printer writes it.
std::string TypeToString(const Type& type);

// Structural equality and hash of types. Type variables are compared by name
// unless bound by a FuncType, where they are compared up to renaming.
bool TypeEqual(const Type& a, const Type& b);
size_t TypeHash(const Type& t);

// Does this type contain an IncompleteType anywhere?
bool TypeHasIncomplete(const Type& t);

}  // namespace kiln

#endif  // KILN_IR_TYPE_H_
