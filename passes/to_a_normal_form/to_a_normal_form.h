// File: passes/to_a_normal_form/to_a_normal_form.h
//
// ToANormalForm (opt level 0 when required; no default pipeline runs it):
// turns the dataflow graph into A-normal form, as TVM's pass: every non-atomic
// sub-expression (anything but a variable, global, constant, operator or
// constructor) is bound by a `let` and referred to by its variable, so the
// evaluation order is explicit. A node is bound in the innermost scope
// (function body, if branch, match clause, let body) holding all its uses —
// the lowest common ancestor of the scopes of its uses, as ir/printer.cc
// places bindings — so a node shared by both branches of an `if` is bound
// before the `if`, and a node used in one branch only stays in that branch.
// A let whose value is used nowhere else binds that value directly (so a
// recursive `let %f = fn ...` keeps working). Needs nothing before it.
//
//   fn (%x) { %0 = exp(%x); if (%c) { add(%0, %0) } else { log(%x) } }
//   // after:
//   fn (%x) { let %x1 = exp(%x);
//             let %x2 = if (%c) { let %x3 = add(%x1, %x1); %x3 }
//                       else { let %x4 = log(%x); %x4 };
//             %x2 }
#ifndef KILN_PASSES_TO_A_NORMAL_FORM_TO_A_NORMAL_FORM_H_
#define KILN_PASSES_TO_A_NORMAL_FORM_TO_A_NORMAL_FORM_H_

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr ToANormalForm();

// The A-normal form of one expression (for tests and other passes).
absl::StatusOr<Expr> ToANormalFormExpr(const Expr& e);

}  // namespace kiln::passes

#endif  // KILN_PASSES_TO_A_NORMAL_FORM_TO_A_NORMAL_FORM_H_
