// File: passes/to_graph_normal_form/to_graph_normal_form.h
//
// ToGraphNormalForm (opt level 0 when required): the inverse of
// ToANormalForm, as TVM's pass. `let %v = value; body` whose value has no
// effect (see EffectfulNodes) becomes `body` with every use of %v replaced by
// the value node itself — the same node at each use, so sharing is kept and
// the program is a dataflow graph again. Lets with effectful values and
// recursive let-bound functions (`let %f = fn ... %f(...) ...`) stay. An
// unused pure let disappears. Needs nothing before it.
//
//   fn (%x) { let %a = exp(%x); let %b = add(%a, %a); %b }
//   // after:
//   fn (%x) { %0 = exp(%x); add(%0, %0) }
#ifndef KILN_PASSES_TO_GRAPH_NORMAL_FORM_TO_GRAPH_NORMAL_FORM_H_
#define KILN_PASSES_TO_GRAPH_NORMAL_FORM_TO_GRAPH_NORMAL_FORM_H_

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr ToGraphNormalForm();

absl::StatusOr<Expr> ToGraphNormalFormExpr(const Expr& e);

}  // namespace kiln::passes

#endif  // KILN_PASSES_TO_GRAPH_NORMAL_FORM_TO_GRAPH_NORMAL_FORM_H_
