// File: lowering/compute/nn/nn_test_util.h (tests only)
//
// Checks compute definitions against the interpreter without any schedule:
// EvalTensors evaluates tensor expressions directly from their definitions
// (every compute at every index, reductions by enumeration), with the numeric
// meaning of ir/tir.h (float ops rounded to their type, integers wrapping,
// float->int casts saturating, Min/Max propagating NaN, if_then_else lazy).
//
//   KILN_ASSIGN_OR_RETURN(ComputedCall c, ComputeCall(
//       "nn.conv2d(%x, %w, padding=[1, 1])",
//       {{"x", "Tensor[(1, 3, 8, 8), float32]"}, {"w", "Tensor[(4, 3, 3, 3), float32]"}}));
//   c.outputs[0]->op->tag == "conv2d_nchw"
//   EXPECT_OK(CompareWithInterpreter("nn.conv2d(...)", {...}));
#ifndef KILN_LOWERING_COMPUTE_NN_NN_TEST_UTIL_H_
#define KILN_LOWERING_COMPUTE_NN_NN_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "ir/op.h"
#include "ir/type.h"
#include "lowering/compute/op_compute.h"
#include "lowering/te/te.h"

namespace kiln::lowering::nn_testing {

// Flat row-major element values of tensors.
using TensorValues = absl::flat_hash_map<te::Tensor, std::vector<double>>;

// Evaluates `outputs` (and every compute they read) from their definitions;
// `inputs` gives every placeholder's values. Shapes must be static. Errors:
// an out-of-bounds read, an integer division by zero, an unknown intrinsic.
absl::StatusOr<std::vector<std::vector<double>>> EvalTensors(const std::vector<te::Tensor>& outputs,
                                                             const TensorValues& inputs);

// One operator call lowered to tensor expressions.
struct ComputedCall {
  Call call;                         // type-checked
  const OpDef* op = nullptr;
  std::vector<te::Tensor> inputs;    // placeholders named after the free vars
  std::vector<te::Tensor> outputs;   // the Compute facet's result
  std::vector<DataType> out_dtypes;  // from the checked type
  std::vector<std::vector<int64_t>> out_shapes;  // -1 for a dim that is not static
};

// Parses `text` (one call of an nn op over free vars typed by `inputs`:
// name -> type text), infers its type and runs the op's Compute facet.
// Symbolic dims ("n") become shared tir vars; ValidateCompute checks the result.
absl::StatusOr<ComputedCall> ComputeCall(
    const std::string& text, const std::vector<std::pair<std::string, std::string>>& inputs);

// As ComputeCall, but with an explicit output type (for layouts the type
// relation does not accept), given as type text.
absl::StatusOr<ComputedCall> ComputeCallWithType(
    const std::string& text, const std::vector<std::pair<std::string, std::string>>& inputs,
    const std::string& out_type);

struct CompareOptions {
  uint32_t seed = 1;
  // Values of some inputs by name (otherwise pseudo-random: floats k/8 in
  // [-2, 2], signed ints in [-8, 8), unsigned in [0, 16), bools 0/1).
  std::map<std::string, std::vector<double>> values;
  // Tolerance (relative, absolute below 1); < 0 picks one from the output dtype.
  double tol = -1;
  // Besides evaluating the expressions directly (EvalTensors), lower them
  // (CreateSchedule + LowerSchedule: every stage at the root) and run the loop
  // IR (te_test_util's RunPrimFunc), and also with the default CPU schedule
  // (ScheduleDefaultX86: inlining, vectorization, compute_at).
  bool naive_schedule = true;
  bool x86_schedule = true;
};

// Runs ComputeCall's compute and the interpreter kernel on the same inputs and
// compares every output element (NaN equals NaN; infinities exactly). The
// error names the path (direct, naive, x86) and the first differing element.
absl::Status CompareWithInterpreter(const std::string& text,
                                    const std::vector<std::pair<std::string, std::string>>& inputs,
                                    const CompareOptions& options = {});

}  // namespace kiln::lowering::nn_testing

#endif  // KILN_LOWERING_COMPUTE_NN_NN_TEST_UTIL_H_
