// File: types/infer_type.h
//
// Type inference for the graph IR, with Relay's semantics: every expression
// gets a type by unification over IncompleteTypes, and every operator call
// adds a type relation; the relations are solved to a fixed point.
// Handles polymorphic functions (type params instantiated per call), recursion
// (global and let-bound), closures, tuples, if, match over ADTs, references and
// symbolic dimensions, which flow through every relation.
//
//   KILN_ASSIGN_OR_RETURN(Module typed, types::InferType(module));
//   typed.Lookup("main").value()->checked_type()   // fn (...) -> Tensor[...]
//
// On success the inferred type of every node is stored in its checked_type()
// (nodes are shared: the returned module holds the same nodes). On failure the
// returned status names the operator, the argument and both types, and shows
// the offending expression in text form with its source position; no node's
// type is changed. The solver runs with explicit work lists: a 100,000-node
// chain does not grow the C++ stack.
#ifndef KILN_TYPES_INFER_TYPE_H_
#define KILN_TYPES_INFER_TYPE_H_

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "ir/module.h"

namespace kiln::types {

absl::StatusOr<Module> InferType(const Module& module);

// Infers the type of a standalone expression (global vars and constructors are
// looked up in `module` when given). Free variables must carry annotations.
absl::StatusOr<Type> InferExprType(const Expr& expr, const Module* module = nullptr);

}  // namespace kiln::types

#endif  // KILN_TYPES_INFER_TYPE_H_
