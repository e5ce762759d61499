// File: tests/compiled/compare.h
//
// Random inputs for a module's `main` (from its parameter types) and the
// comparison of compiled results with the interpreter's.
#ifndef KILN_TESTS_COMPILED_COMPARE_H_
#define KILN_TESTS_COMPILED_COMPARE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "interpreter/value.h"
#include "ir/module.h"

namespace kiln::testing {

// Floats uniform in [lo, hi], integers in [ilo, ihi], bools fair coins.
absl::StatusOr<std::vector<interp::Value>> RandomInputs(const Module& m, uint64_t seed, double lo,
                                                        double hi, int64_t ilo, int64_t ihi);

// Same structure, dtypes and shapes; values within atol + rtol * |expected|
// (NaN matches NaN; integers exact). The failure message shows the first
// mismatches.
::testing::AssertionResult ValuesClose(const interp::Value& expected, const interp::Value& got,
                                       double rtol, double atol);

}  // namespace kiln::testing

#endif  // KILN_TESTS_COMPILED_COMPARE_H_
