// File: interpreter/interpreter.h
//
// The reference interpreter: evaluates graph-IR programs on host tensors. It is
// slow and obviously correct on purpose — the oracle of every differential test
// and the engine of constant folding. Programs are type-checked first
// (types::InferType / InferExprType); operator calls run the kernels of
// kernels.h.
//
//   KILN_ASSIGN_OR_RETURN(Module m, ParseModule(text));
//   KILN_ASSIGN_OR_RETURN(Value out, RunFunction(m, "main", {Value::Tensor(x)}));
//   KILN_ASSIGN_OR_RETURN(Value v, Evaluate(expr));            // a closed expression
//
// Semantics (Relay's):
//   - call by value; arguments left to right;
//   - graph form: a node shared within a function body is evaluated once per
//     invocation of that function (memoized per call frame);
//   - let binds; `let %f = fn (...) {... %f(...) ...}` is recursive: the closure
//     rebinds %f to itself on each call;
//   - if takes a one-element condition tensor (bool; nonzero is true) and
//     evaluates only the branch taken;
//   - match takes the first clause whose pattern matches; none matching is an
//     error naming the value's constructor;
//   - closures capture the values of their free variables; global functions
//     (@f) may call each other recursively;
//   - ref(v) makes a shared mutable cell; ref_write returns the empty tuple.
// Stack safety: evaluation is a loop over an explicit work stack, also for
// function calls, so neither 100,000-node dataflow or let chains nor deep
// program recursion grow the C++ stack. Program recursion is limited to
// EvalOptions::max_call_depth nested calls; beyond it evaluation fails.
// Errors name the function, the source position when known, and the operator.
#ifndef KILN_INTERPRETER_INTERPRETER_H_
#define KILN_INTERPRETER_INTERPRETER_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "interpreter/value.h"
#include "ir/expr.h"
#include "ir/module.h"

namespace kiln::interp {

struct EvalOptions {
  // Most nested closure/global calls before evaluation fails.
  int max_call_depth = 10000;
  // Type-check the program first (InferType / InferExprType). Turn off only
  // for programs already checked (e.g. by a pass that just ran InferType).
  bool type_check = true;
};

// Evaluates `expr`. Global functions and constructors are looked up in
// `module` (may be null). Free variables take their values from `bindings`;
// for type checking they must carry type annotations.
absl::StatusOr<Value> Evaluate(const Expr& expr, const Module* module = nullptr,
                               const std::vector<std::pair<Var, Value>>& bindings = {},
                               const EvalOptions& options = {});

// Calls global function `name` of `module` with `args`. The argument count and
// each tensor argument's dtype and static dims are checked against the
// function's parameters.
absl::StatusOr<Value> RunFunction(const Module& module, absl::string_view name,
                                  std::vector<Value> args, const EvalOptions& options = {});

}  // namespace kiln::interp

#endif  // KILN_INTERPRETER_INTERPRETER_H_
