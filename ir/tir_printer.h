// File: ir/tir_printer.h
//
// Text form of the loop IR, for tests (FileCheck), dumps (`--emit loop`) and
// error messages. Distinct variables that share a name hint get suffixes
// (`i`, `i_1`), so the text is unambiguous. Example:
//
//   primfunc fused_add_relu(A: float32[4, 16], T_out: float32[4, 16]) {
//     parallel (ax0, 0, 4) {
//       vectorized (ax1, 0, 16) {
//         T_out[ax0, ax1] = max(A[ax0, ax1] + 1f, 0f)
//       }
//     }
//   }
//
// Printing is for people; there is no parser (tests build loop IR from
// tensor expressions or C++).
#ifndef KILN_IR_TIR_PRINTER_H_
#define KILN_IR_TIR_PRINTER_H_

#include <string>

#include "ir/tir.h"

namespace kiln::tir {

std::string ToText(const PrimExpr& e);
std::string ToText(const Stmt& s);
std::string ToText(const PrimFunc& f);

const char* ExprKindName(ExprKind k);
const char* ReduceKindName(ReduceKind k);

}  // namespace kiln::tir

#endif  // KILN_IR_TIR_PRINTER_H_
