// File: lowering/te/te_test_util.h
//
// A small, slow, obviously-correct interpreter of loop IR for tests: it runs a
// tir::PrimFunc over std::vector<double> buffers so a test can compare a
// lowered loop nest with a direct C++ computation.
//
//   std::vector<double> a = RandomData(64, /*seed=*/1), c(64);
//   KILN_ASSERT_OK(RunPrimFunc(f, {&a, &c}));          // f(A: float32[64], C: float32[64])
//
// What it runs: For (every ForKind, serially), LetStmt, AttrStmt, IfThenElse,
// Seq, Store, Allocate, Evaluate, Assert; the arithmetic, comparison and
// logical ExprKinds, Select, Cast, Let, Ramp/Broadcast (lanes), Load with one
// index per dim (row-major, or the buffer's strides) or one flat index, and
// the calls likely, if_then_else, isnan and the common math functions.
// Semantics: values are doubles, rounded to the node's dtype after each
// operation (float32 rounding, integer wrap-around, truncating int division
// for kDiv/kMod, floor for kFloorDiv/kFloorMod); float min/max propagate NaN.
// Allocations start filled with NaN so reads of unwritten memory show. Every
// access is bounds-checked: errors are statuses naming the buffer and index.
#ifndef KILN_LOWERING_TE_TE_TEST_UTIL_H_
#define KILN_LOWERING_TE_TE_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::te::testing {

// Values of symbolic shape variables, by name.
using ShapeVars = std::map<std::string, int64_t>;

// Runs `f` with one flat row-major vector per parameter, in parameter order.
// Each vector must hold exactly as many elements as the parameter's shape.
absl::Status RunPrimFunc(const tir::PrimFunc& f, const std::vector<std::vector<double>*>& args,
                         const ShapeVars& shape_vars = {});

// Evaluates a scalar expression with the given vars (by name) bound.
absl::StatusOr<double> EvalScalar(const tir::PrimExpr& e, const ShapeVars& vars = {});

// Number of elements of `shape` with its symbolic dims bound from `vars`.
absl::StatusOr<int64_t> NumElements(const std::vector<tir::PrimExpr>& shape,
                                    const ShapeVars& vars = {});

// Deterministic pseudo-random values in [lo, hi).
std::vector<double> RandomData(size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0);

// Largest |a[i] - b[i]| (infinity if the sizes differ; NaN positions must match).
double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace kiln::te::testing

#endif  // KILN_LOWERING_TE_TE_TEST_UTIL_H_
