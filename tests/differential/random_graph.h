// File: tests/differential/random_graph.h
//
// Random well-typed graph-IR programs for differential testing: every pass
// (and the whole O3 pipeline) must leave a program's results unchanged, as
// judged by the reference interpreter.
//
//   RandomGraphOptions opts;
//   opts.seed = 7;
//   KILN_ASSIGN_OR_RETURN(Module m, RandomModule(opts));   // def @main(%in0, ...) {...}
//
// The generator draws from the registered operators by family (elementwise,
// broadcast, reductions, conv2d / dense / pools with constant weights,
// batch_norm / layer_norm / softmax / dropout, shape ops, tuples) and keeps
// every candidate call that type-checks, so the programs are well-typed by
// construction. Values stay in safe ranges (log and sqrt of |x| + 1, exp of a
// clipped value) so that results are finite and comparable with a tolerance.
#ifndef KILN_TESTS_DIFFERENTIAL_RANDOM_GRAPH_H_
#define KILN_TESTS_DIFFERENTIAL_RANDOM_GRAPH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/tensor.h"

namespace kiln::testing {

struct RandomGraphOptions {
  uint64_t seed = 1;
  int num_ops = 24;     // operator calls to attempt to add
  int num_inputs = 2;   // float32 parameters of @main
};

absl::StatusOr<Module> RandomModule(const RandomGraphOptions& opts);

// Random float32 values in [-2, 2] for each parameter of `fn` (all must be
// static-shaped tensors).
absl::StatusOr<std::vector<Ref<const HostTensor>>> RandomInputs(const Function& fn, uint64_t seed);

}  // namespace kiln::testing

#endif  // KILN_TESTS_DIFFERENTIAL_RANDOM_GRAPH_H_
