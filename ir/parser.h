// File: ir/parser.h
//
// Parses the `.kir` text format (docs/text_format.md) back into IR:
//
//   KILN_ASSIGN_OR_RETURN(Module m, ParseModule(R"(
//     def @main(%x: Tensor[(1, 16), float32]) {
//       %0 = nn.relu(%x);
//       add(%0, 1f)
//     }
//   )"));
//   KILN_ASSIGN_OR_RETURN(Expr e, ParseExpr("add(%x, %x)", {x}));
//   KILN_ASSIGN_OR_RETURN(Type t, ParseType("Tensor[(n, 3), float32]"));
//
// Every error is a Status whose message starts with `source:line:column: ` and
// says what was found and what was expected. Binding sequences and let chains
// are parsed in loops; nesting (parentheses, blocks) is limited to a fixed depth
// and reports an error beyond it, so no input overflows the stack.
#ifndef KILN_IR_PARSER_H_
#define KILN_IR_PARSER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/expr.h"
#include "ir/module.h"
#include "ir/type.h"

namespace kiln {

absl::StatusOr<Module> ParseModule(absl::string_view text,
                                   absl::string_view source_name = "<input>");
// An expression (a block: bindings then a result, optionally followed by a
// `#[metadata]` section). Free %vars are allowed when `free_vars` gives them
// (matched by name_hint); otherwise they are an error.
absl::StatusOr<Expr> ParseExpr(absl::string_view text, const std::vector<Var>& free_vars = {});
absl::StatusOr<Type> ParseType(absl::string_view text);

}  // namespace kiln

#endif  // KILN_IR_PARSER_H_
