// File: lowering/passes/pass_util.h
//
// Small helpers shared by the loop-IR passes of this package (internal: not
// part of any pass's interface).
//
//   return PassError("vectorize_loop", f, "loop extent is not an integer");
//   // -> InvalidArgument "vectorize_loop: PrimFunc 'f': loop extent is not an integer"
//
//   Stmt copy = RenewDefs(body);  // same code, fresh loop/let vars and buffers
#ifndef KILN_LOWERING_PASSES_PASS_UTIL_H_
#define KILN_LOWERING_PASSES_PASS_UTIL_H_

#include <cstdint>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ir/tir.h"

namespace kiln::tir::transform {

// InvalidArgument "<pass>: PrimFunc '<name>': <what>".
absl::Status PassError(absl::string_view pass, const PrimFunc& f, absl::string_view what);
// Internal "<pass>: PrimFunc '<name>': internal error: <what>".
absl::Status PassInternalError(absl::string_view pass, const PrimFunc& f, absl::string_view what);

// True when evaluating `e` has no effect besides its value: no call whose
// effect is kOpaque. Such an expression may be dropped when unused.
bool IsSideEffectFree(const PrimExpr& e);

// A copy of `s` in which every variable that `s` itself binds (For and
// LetStmt vars, Let-expression vars, Allocate buffers and their data vars) is
// replaced by a fresh one of the same name and type. Used wherever a pass
// duplicates code (unrolling, loop partitioning), so that each binding stays
// unique in the function.
Stmt RenewDefs(const Stmt& s);

// Rewrites every Load/Store/Allocate/Attr whose buffer's data var is a key of
// `by_data_var` to use the mapped buffer instead, and every use of such a data
// var as a plain expression to the mapped buffer's data var.
using BufferMap = std::unordered_map<const ExprNode*, Buffer>;
Stmt ReplaceBuffers(const Stmt& s, const BufferMap& by_data_var);

// Number of leaf statements (stores, evaluates) in `s`, weighting loops with
// constant extent by their extent: a rough code-size measure for unrolling.
int64_t LeafStmtCount(const Stmt& s);

// Broadcasts a scalar to `lanes` (returns vector values unchanged).
PrimExpr BroadcastTo(const PrimExpr& e, int lanes);

// Index arithmetic that keeps vectors in Ramp/Broadcast form and broadcasts a
// scalar operand to the other's lanes (so both operands of the node built have
// the same type): Ramp(b, s) + c = Ramp(b + c, s), Ramp(b, s) * c =
// Ramp(b * c, s * c), Broadcast(x) op Broadcast(y) = Broadcast(x op y).
// Scalar int constants fold (tir operators).
PrimExpr VecAdd(const PrimExpr& a, const PrimExpr& b);
PrimExpr VecSub(const PrimExpr& a, const PrimExpr& b);
PrimExpr VecMul(const PrimExpr& a, const PrimExpr& b);

}  // namespace kiln::tir::transform

#endif  // KILN_LOWERING_PASSES_PASS_UTIL_H_
