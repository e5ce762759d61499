// File: tests/compiled/dense_schedule.h
//
// A hand-written dense schedule built from the schedule primitives, as a tuned
// template would be (TVM's dense_pack): the weight packed to [N/16, K, 16], a
// 4 x 16 register block computed in a local cache_write stage at the output's
// fused (parallel) loop, its rows unrolled and columns vectorized, the
// reduction loop outside the block. It shows the primitives express packing
// and register blocking; the tuned schedules of the performance work use the
// same ones.
#ifndef KILN_TESTS_COMPILED_DENSE_SCHEDULE_H_
#define KILN_TESTS_COMPILED_DENSE_SCHEDULE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::testing {

// C[M, N] = sum_k A[M, K] * W[N, K] (nn.dense), N a multiple of 16.
// Parameters: A, W, C. `block_rows` rows per register block.
absl::StatusOr<tir::PrimFunc> PackedDense(int64_t m, int64_t n, int64_t k, int64_t block_rows,
                                          int vector_lanes);

}  // namespace kiln::testing

#endif  // KILN_TESTS_COMPILED_DENSE_SCHEDULE_H_
