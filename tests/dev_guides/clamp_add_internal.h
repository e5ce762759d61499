// File: tests/dev_guides/clamp_add_internal.h (tests only)
//
// Shared by test.clamp_add's compute (clamp_add_compute.cc) and its strategy
// (clamp_add_strategy.cc): the one tensor expression of the op, with the
// compute attrs a strategy marks its anchor with.
#ifndef KILN_TESTS_DEV_GUIDES_CLAMP_ADD_INTERNAL_H_
#define KILN_TESTS_DEV_GUIDES_CLAMP_ADD_INTERNAL_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "lowering/compute/op_compute.h"
#include "lowering/te/te.h"

namespace kiln::dev_guides {

// clip(lhs + rhs, a_min, a_max) over ctx's output shape; an error naming the
// operator for a bad call (a_min > a_max, a dtype other than float32/float64).
absl::StatusOr<te::Tensor> ClampAddTensor(const lowering::ComputeCtx& ctx,
                                          std::map<std::string, std::string> attrs);

}  // namespace kiln::dev_guides

#endif  // KILN_TESTS_DEV_GUIDES_CLAMP_ADD_INTERNAL_H_
