// File: types/relation.h
//
// Type relations: how an operator's output type follows from its inputs.
// A relation is attached to an operator under the facet "TypeRelation" and is
// called by the solver (types/infer_type.h) with the current types of the
// call's arguments followed by the output type. Any of them may still be an
// IncompleteType. The relation either
//   - returns true after assigning the output (reporter.Assign), or
//   - returns false when an input it needs is still incomplete (it will be
//     called again when more is known), or
//   - returns an error Status that names the operator, the argument, the type
//     it got and what it expected.
//
//   absl::StatusOr<bool> SoftmaxRel(const RelationCall& call, TypeReporter& r) {
//     const TensorTypeNode* x = call.InputTensor(0);
//     if (x == nullptr) return false;   // still unknown
//     KILN_RETURN_IF_ERROR(r.Assign(call.output(), Type(x)));
//     return true;
//   }
#ifndef KILN_TYPES_RELATION_H_
#define KILN_TYPES_RELATION_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/type.h"

namespace kiln::types {

// What the solver tells a relation.
class TypeReporter {
 public:
  virtual ~TypeReporter() = default;
  // Unifies `dst` (usually call.output()) with `t`. Fails when they conflict.
  virtual absl::Status Assign(const Type& dst, const Type& t) = 0;
};

struct RelationCall {
  absl::string_view op_name;
  const std::vector<Type>& args;  // inputs, then the output
  int num_inputs;
  const Attrs& attrs;

  const Type& input(int i) const { return args[static_cast<size_t>(i)]; }
  const Type& output() const { return args.back(); }
  // The i-th input as a tensor type, or null when it is not (yet) a tensor.
  const TensorTypeNode* InputTensor(int i) const { return input(i).as<TensorTypeNode>(); }
  // The attribute struct, or null if the call has another kind.
  template <typename A>
  const A* Attr() const {
    return attrs ? attrs.as<A>() : nullptr;
  }
  // An InvalidArgument error naming the operator and argument i:
  //   "nn.conv2d: argument 1 (weight) has type Tensor[(3, 3), float32]; expected a 4-D tensor"
  absl::Status ArgError(int i, absl::string_view expected) const;
  // An InvalidArgument error naming the operator, for errors about attributes or
  // relations between several arguments.
  absl::Status Error(absl::string_view message) const;
};

using TypeRelationFn = std::function<absl::StatusOr<bool>(const RelationCall&, TypeReporter&)>;

inline constexpr absl::string_view kTypeRelationFacet = "TypeRelation";

// Attaches `fn` to operator `op_name`.
absl::Status RegisterTypeRelation(absl::string_view op_name, TypeRelationFn fn);
// The relation of an operator, or null when none is registered.
const TypeRelationFn* FindTypeRelation(const OpDef* op);

}  // namespace kiln::types

#endif  // KILN_TYPES_RELATION_H_
