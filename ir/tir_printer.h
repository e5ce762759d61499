// File: ir/tir_printer.h
//
// Text form of the loop IR, for tests (FileCheck), dumps (`--emit loop`) and
// error messages. The syntax is documented in docs/loop_ir.md; ir/tir_parser.h
// reads it back, and for every PrimFunc built by the factories (without
// kReduce / kProducerLoad, which belong to tensor expressions) printing,
// parsing and printing again gives the same text. Example:
//
//   primfunc fused_add_relu(A: float32[4, 16], T_out: float32[4, 16]) {
//     parallel (ax0, 0, 4) {
//       vectorized (ax1, 0, 16) {
//         T_out[ax0, ax1] = max((A[ax0, ax1] + 1f), 0f)
//       }
//     }
//   }
//
// Names: a variable or buffer is named at its binding (param, shape var, loop,
// let, allocate). Distinct variables in scope at the same time get distinct
// names (`i`, `i_1`); once a scope ends its names may be reused. Names are
// made valid identifiers (letters, digits, `_`, inner `.`) and never collide
// with keywords (`for`, `let`, ...). Variables that are not int64 show their
// type where they are bound (`let x: float32 = ...`, `for (i: int32, 0, 4)`).
#ifndef KILN_IR_TIR_PRINTER_H_
#define KILN_IR_TIR_PRINTER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/tir.h"

namespace kiln::tir {

std::string ToText(const PrimExpr& e);
std::string ToText(const Stmt& s);
std::string ToText(const PrimFunc& f);

const char* ExprKindName(ExprKind k);
const char* ReduceKindName(ReduceKind k);
const char* IterKindName(IterKind k);

// ---- Shared by the printer and the parser (ir/tir_parser.cc) ---------------

// The type a call has when the text does not spell it: the element type of
// the first argument for the math intrinsics (bool lanes for "isnan"), bool for
// "likely", the true value's type for "if_then_else". False when there is no
// rule (extern functions, "reinterpret", ...): the text then says
// `name:dtype(...)`.
bool InferCallType(absl::string_view name, const std::vector<PrimExpr>& args, DataType* out);
// The effect a call has when the text does not spell it (`foo:opaque(...)`):
// kPure, the default of tir::Call.
CallEffect DefaultCallEffect(absl::string_view name);
const char* CallEffectName(CallEffect e);  // "pure", "read_state", "opaque"
// Words that cannot name a variable or buffer in the text (`for`, `let`, `in`,
// `true`, `inff`, `nan_float64`, ...).
bool IsReservedWord(absl::string_view s);
// True for [A-Za-z_][A-Za-z0-9_]* with inner dots allowed (`compute.v1`).
bool IsTextIdentifier(absl::string_view s);

}  // namespace kiln::tir

#endif  // KILN_IR_TIR_PRINTER_H_
