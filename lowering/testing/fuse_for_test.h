// File: lowering/testing/fuse_for_test.h
//
// For lowering's tests and benchmarks: runs the default graph pipeline
// (passes/pipeline.h) through FuseOps at `opt_level`, then InferType, as the
// compiler does before lowering (tests/compiled/jit_runner.cc does the same).
//
//   KILN_ASSIGN_OR_RETURN(Module fused, FuseForTest(module, /*opt_level=*/3));
//   KILN_ASSIGN_OR_RETURN(LoweredModule lm, LowerModule(fused, {}));
//
// (It lives in a subdirectory because from lowering/ the quoted include
// "passes/pipeline.h" finds lowering/passes/pipeline.h first.)
#ifndef KILN_LOWERING_TESTING_FUSE_FOR_TEST_H_
#define KILN_LOWERING_TESTING_FUSE_FOR_TEST_H_

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace kiln::lowering::testing {

absl::StatusOr<Module> FuseForTest(const Module& module, int opt_level);

}  // namespace kiln::lowering::testing

#endif  // KILN_LOWERING_TESTING_FUSE_FOR_TEST_H_
