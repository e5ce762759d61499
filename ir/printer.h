// File: ir/printer.h
//
// Prints modules and expressions in the `.kir` text format (docs/text_format.md).
// The output parses back (ir/parser.h) to a structurally equal module: shared
// nodes are bound once as `%N = ...;` and referenced by name, so a DAG stays a
// DAG; each binding is placed in the innermost block (function body, if branch,
// match clause, let body) that holds all its uses. Printing never recurses on
// the C++ stack in proportion to the graph size: a 100,000-node chain prints.
//
//   def @main(%x: Tensor[(1, 16), float32]) {
//     %0 = nn.relu(%x);
//     add(%0, 1f)
//   }
//
//   std::string text = PrintModule(m);
//   std::string brief = PrintExpr(call, {.show_types = true});
#ifndef KILN_IR_PRINTER_H_
#define KILN_IR_PRINTER_H_

#include <string>

#include "ir/expr.h"
#include "ir/module.h"

namespace kiln {

struct PrintOptions {
  // Append `/* ty=... */` after each binding and block result whose
  // checked_type() is set.
  bool show_types = false;
  // Write the constants table (`#[metadata]`) at the end. With false only the
  // `meta[Constant][i]` references are printed (for large models); such text
  // does not parse back.
  bool emit_metadata = true;
};

std::string PrintModule(const Module& m, const PrintOptions& opts = {});
// Any expression, open or closed (free variables print by name).
std::string PrintExpr(const Expr& e, const PrintOptions& opts = {});

}  // namespace kiln

#endif  // KILN_IR_PRINTER_H_
