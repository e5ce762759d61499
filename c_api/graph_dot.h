// File: c_api/graph_dot.h
//
// A picture of a model: the dataflow graph of `main` as Graphviz dot text, for
// `kiln graph` and kiln_model_to_dot. One box per operator call (a fused
// primitive function shows the operators inside it), one ellipse per input,
// one note per constant, one octagon per output; every edge carries the type
// of the tensor it moves.
//
//   KILN_ASSIGN_OR_RETURN(std::string dot, kiln::ModuleToDot(module));
//   // dot -Tsvg model.dot > model.svg
//
// Let bindings are looked through (a let-bound call is one node), so graph
// form and A-normal form print the same picture.
#ifndef KILN_C_API_GRAPH_DOT_H_
#define KILN_C_API_GRAPH_DOT_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace kiln {

// Fails when the module has no `main` function.
absl::StatusOr<std::string> ModuleToDot(const Module& module);

}  // namespace kiln

#endif  // KILN_C_API_GRAPH_DOT_H_
