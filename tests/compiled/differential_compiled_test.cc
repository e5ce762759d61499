// File: tests/compiled/differential_compiled_test.cc
//
// Random well-typed graphs (tests/differential/random_graph.h) through the O3
// pipeline, lowered, compiled with LLVM and run, against the interpreter on
// the original graph. KILN_COMPILED_DIFFERENTIAL_CASES overrides the count.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/printer.h"
#include "tests/compiled/compare.h"
#include "tests/compiled/jit_runner.h"
#include "tests/differential/random_graph.h"

namespace kiln::testing {
namespace {

int NumCases() {
  const char* env = std::getenv("KILN_COMPILED_DIFFERENTIAL_CASES");
  int n = env ? std::atoi(env) : 0;
  return n > 0 ? n : 40;
}

TEST(CompiledDifferentialTest, RandomGraphsMatchTheInterpreter) {
  int failures = 0;
  for (int i = 0; i < NumCases() && failures < 3; ++i) {
    uint64_t seed = 1000 + static_cast<uint64_t>(i);
    RandomGraphOptions opts;
    opts.seed = seed;
    opts.num_ops = 8 + static_cast<int>(seed % 12);
    absl::StatusOr<Module> m = RandomModule(opts);
    ASSERT_TRUE(m.ok()) << m.status();
    absl::StatusOr<Function> main = m->Lookup("main");
    ASSERT_TRUE(main.ok());
    auto tensors = RandomInputs(*main, seed * 7919);
    ASSERT_TRUE(tensors.ok()) << tensors.status();
    std::vector<interp::Value> inputs;
    for (auto& t : *tensors) inputs.push_back(interp::Value::Tensor(t));
    absl::StatusOr<interp::Value> expected = interp::RunFunction(*m, "main", inputs);
    ASSERT_TRUE(expected.ok()) << expected.status();

    JitOptions jo;
    jo.opt_level = 3;
    absl::StatusOr<std::unique_ptr<JitGraph>> g = JitGraph::Compile(*m, jo);
    if (!g.ok()) {
      ADD_FAILURE() << "seed " << seed << ": " << g.status() << "\n" << PrintModule(*m);
      ++failures;
      continue;
    }
    absl::StatusOr<interp::Value> got = (*g)->Run(inputs);
    if (!got.ok()) {
      ADD_FAILURE() << "seed " << seed << ": " << got.status() << "\n" << PrintModule(*m);
      ++failures;
      continue;
    }
    ::testing::AssertionResult close = ValuesClose(*expected, *got, 1e-4, 1e-4);
    if (!close) {
      ADD_FAILURE() << "seed " << seed << ": " << close.message() << "\n--- program ---\n"
                    << PrintModule(*m) << "--- optimized ---\n" << PrintModule((*g)->optimized());
      ++failures;
    }
  }
}

}  // namespace
}  // namespace kiln::testing
