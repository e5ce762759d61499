// File: ir/structural.h
//
// Structural equality and hashing of graph-IR programs, up to renaming of
// bound variables (alpha-equivalence), as TVM's StructuralEqual/Hash:
//
//   fn (%x) { add(%x, 1f) }   ==   fn (%y) { add(%y, 1f) }
//
// Variables bound by a Function, Let or pattern are matched at their binding
// site; free variables are equal only if they are the same object, unless
// `map_free_vars`. Var name hints, spans and inferred (checked) types are not
// compared; type annotations, attributes and constant bytes are. Sharing is
// not significant: a DAG equals the tree it unfolds to. Both run with an
// explicit work list (no recursion in the depth of the program) and visit a
// shared node pair once, so they are linear in the size of a DAG.
#ifndef KILN_IR_STRUCTURAL_H_
#define KILN_IR_STRUCTURAL_H_

#include <optional>
#include <string>

#include "ir/expr.h"
#include "ir/module.h"

namespace kiln {

bool StructuralEqual(const Expr& a, const Expr& b, bool map_free_vars = false);
// nullopt when equal; otherwise a description of the first difference found.
std::optional<std::string> StructuralDifference(const Expr& a, const Expr& b,
                                                bool map_free_vars = false);
size_t StructuralHash(const Expr& e);

// Equal up to the values of tensor constants: constants of rank >= 1 compare
// by dtype and shape (scalars still by value), and the two sides' constants
// must pair one to one, as bound variables do (a constant used twice on one
// side matches a constant used twice on the other, not two distinct ones).
// Two fused functions equal in this sense lower to the same kernel code with
// different constant arguments: ResNet's repeated blocks, each with its own
// weights (lowering/lower.h LowerModule). The hash skips the constants'
// bytes, so it costs nothing per weight.
bool StructuralEqualModuloConstants(const Expr& a, const Expr& b);
std::optional<std::string> StructuralDifferenceModuloConstants(const Expr& a, const Expr& b);
size_t StructuralHashModuloConstants(const Expr& e);

// Modules are equal when they define the same global functions (by name) and
// ADTs, each structurally equal.
bool ModuleEqual(const Module& a, const Module& b);
std::optional<std::string> ModuleDifference(const Module& a, const Module& b);

}  // namespace kiln

#endif  // KILN_IR_STRUCTURAL_H_
