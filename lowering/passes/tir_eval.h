// File: lowering/passes/tir_eval.h
//
// A small reference interpreter of the loop IR, for tests (testonly): it runs
// a PrimFunc on std::vector<double> buffers so that a test can check that a
// pass preserves results on random inputs.
//
//   std::vector<EvalArg> args = {{a_values}, {std::vector<double>(16)}};
//   KILN_RETURN_IF_ERROR(EvalPrimFunc(f, &args));   // args[1].data now holds the output
//
// Semantics follow ir/tir.h: loops of every kind run serially, vectors (Ramp,
// Broadcast, lanes > 1) are evaluated lane by lane, float32 / float16 /
// bfloat16 results are rounded to their type after every operation (so the
// numbers are those of real code without FMA contraction), integers wrap at
// their width. Loads and Stores accept one index per dim of the accessed
// buffer (row-major, explicit strides, storage_align padding, elem_offset) or
// a single flat index. Math calls use libm; "reinterpret" supports
// float32<->int32/uint32, float64<->int64, float16/bfloat16<->int16/uint16.
// Storage of an Allocate starts as NaN (floats) / a marker (ints), so reading
// uninitialized memory shows up in the results. Errors (out-of-bounds access,
// unbound variable, division by zero, kReduce) are statuses.
#ifndef KILN_LOWERING_PASSES_TIR_EVAL_H_
#define KILN_LOWERING_PASSES_TIR_EVAL_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::tir::testing {

// One kernel argument: its elements (flat, as the buffer's strides lay them
// out) and, for a buffer with symbolic dims, the actual shape (binds the dims'
// vars; empty when the shape is constant).
struct EvalArg {
  std::vector<double> data;
  std::vector<int64_t> shape;
};

// Runs f on args (one per param, in order); stores write into args[i].data.
absl::Status EvalPrimFunc(const PrimFunc& f, std::vector<EvalArg>* args);

// Evaluates an expression that reads no buffer, with vars bound to the given
// lanes (one value per lane of the var's type). Returns one value per lane.
using EvalEnv = std::unordered_map<const ExprNode*, std::vector<double>>;
absl::StatusOr<std::vector<double>> EvalExpr(const PrimExpr& e, const EvalEnv& env);

// Arguments for f filled with pseudo-random values (floats in [-2, 2), ints in
// [-8, 8), bools 0/1) from `seed`. Symbolic dims are given by the var's name in
// `dims` (each arg's `shape` is then set).
absl::StatusOr<std::vector<EvalArg>> RandomArgs(const PrimFunc& f, uint32_t seed,
                                                const std::map<std::string, int64_t>& dims = {});

// Runs `before` and `after` (same params) on the same random arguments and
// returns OK when every output element agrees within rel_tol (relative,
// absolute below 1); otherwise an error naming the first difference. Errors
// of either run are returned too.
absl::Status ExpectSameResults(const PrimFunc& before, const PrimFunc& after, uint32_t seed = 1,
                               const std::map<std::string, int64_t>& dims = {}, double rel_tol = 0);

// Rounds v to the nearest value of float type t (float16, bfloat16, float32;
// float64 returns v).
double RoundToFloatType(double v, DataType t);

}  // namespace kiln::tir::testing

#endif  // KILN_LOWERING_PASSES_TIR_EVAL_H_
