// File: ir/tir_parser.h
//
// Reads the loop-IR text that ir/tir_printer.h writes (syntax: docs/loop_ir.md),
// so loop passes can be tested on hand-written input, as with mlir-opt or
// TVMScript:
//
//   KILN_ASSIGN_OR_RETURN(tir::PrimFunc f, tir::ParsePrimFunc(R"(
//     // CHECK: vectorized
//     primfunc add_one(A: float32[n, 16], B: float32[n, 16]) {
//       for (i, 0, n) {
//         for (j, 0, 16) {
//           B[i, j] = (A[i, j] + 1f)   # literals take the other operand's type
//         }
//       }
//     }
//   )"));
//
// Comments run from `//` or `#` to the end of the line; whitespace is free.
// Variables resolve lexically (a loop or let variable is visible in its body;
// a symbolic shape variable is declared by its first occurrence in the
// parameter list). For every PrimFunc f built by the factories without
// tensor-expression nodes (kReduce, kProducerLoad),
// ToText(ParsePrimFunc(ToText(f))) == ToText(f).
//
// Errors are statuses whose message starts with `file:line:col: ` (unknown
// variable or buffer, wrong number of indices, unbalanced brackets, a bad
// token, ...). Nesting deeper than a fixed limit is an error too, so no input
// crashes the parser.
#ifndef KILN_IR_TIR_PARSER_H_
#define KILN_IR_TIR_PARSER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/tir.h"

namespace kiln::tir {

// Every `primfunc` in `text`, in order.
absl::StatusOr<std::vector<PrimFunc>> ParsePrimFuncs(absl::string_view text,
                                                     absl::string_view filename = "<input>");
// Exactly one `primfunc`.
absl::StatusOr<PrimFunc> ParsePrimFunc(absl::string_view text,
                                       absl::string_view filename = "<input>");
// One expression. Identifiers resolve to `vars` and `buffers` by name (later
// entries shadow earlier ones); anything else unknown is an error.
absl::StatusOr<PrimExpr> ParsePrimExpr(absl::string_view text, const std::vector<Var>& vars = {},
                                       const std::vector<Buffer>& buffers = {},
                                       absl::string_view filename = "<input>");

}  // namespace kiln::tir

#endif  // KILN_IR_TIR_PARSER_H_
