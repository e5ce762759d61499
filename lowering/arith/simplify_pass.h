// File: lowering/arith/simplify_pass.h
//
// SimplifyPass: the loop-IR simplifier (TVM's tir.transform.Simplify). It walks
// a PrimFunc with an arith::Analyzer, learning facts on the way down:
//
//   - a loop variable ranges over [min, min + extent);
//   - a let variable equals its value (constants and variables are substituted);
//   - inside `if (c)` c holds, inside its else branch !c holds;
//   - after `assert(c, ...)` c holds;
//   - a "thread_extent" attribute on an iter_var binds it to [0, value);
//   - every symbolic shape variable of a parameter is >= 0;
//
// and simplifies every expression and index with those facts. Statements:
// an `if` whose condition is provably true or false becomes the taken branch;
// a loop with extent provably 1 becomes its body with the variable replaced by
// min, one with extent provably <= 0 disappears (thread_binding loops are kept:
// they describe the launch); an assert that provably holds disappears; loops,
// allocations and branches left with nothing to do disappear; sequences are
// rebuilt with tir::Seq (dropping no-ops). Float arithmetic keeps IEEE
// semantics (see lowering/arith/README.md).
//
//   for (i, 0, 16) {                          for (i, 0, 16) {
//     for (j, 0, 1) {                           A[i] = B[i]
//       if (i * 16 + j < 256) {        ->     }
//         A[floordiv(i * 16 + j, 16)] = B[i]
//       }
//     }
//   }
//
// Run it after ScheduleOps / StorageFlatten and after any pass that leaves
// index arithmetic behind. It needs nothing before it.
#ifndef KILN_LOWERING_ARITH_SIMPLIFY_PASS_H_
#define KILN_LOWERING_ARITH_SIMPLIFY_PASS_H_

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::arith {

// Never fails on a well-formed function; a null function is an error.
absl::StatusOr<tir::PrimFunc> SimplifyPass(const tir::PrimFunc& f);

}  // namespace kiln::arith

#endif  // KILN_LOWERING_ARITH_SIMPLIFY_PASS_H_
