// File: tests/compiled/op_test.cc
//
// Every registered operator, compiled (lowering + LLVM JIT) and run, against
// the interpreter on the same random inputs: several shapes (odd sizes that
// exercise loop tails and vector remainders), dtypes and attribute settings
// (the list: op_cases.h, shared with //tests/cuda:op_ptx_test).
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "tests/compiled/compare.h"
#include "tests/compiled/jit_runner.h"
#include "tests/compiled/op_cases.h"
#include "types/infer_type.h"

namespace kiln::testing {
namespace {

class OpTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpTest, CompiledMatchesInterpreter) {
  const OpCase& tc = GetParam();
  std::string text = ModuleText(tc);
  absl::StatusOr<Module> parsed = ParseModule(text, tc.name);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  absl::StatusOr<Module> typed = types::InferType(*parsed);
  ASSERT_TRUE(typed.ok()) << typed.status() << "\n" << text;
  absl::StatusOr<std::vector<interp::Value>> inputs =
      RandomInputs(*typed, /*seed=*/17, tc.lo, tc.hi, tc.ilo, tc.ihi);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::StatusOr<interp::Value> expected = interp::RunFunction(*typed, "main", *inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();

  JitOptions opts;
  opts.opt_level = 0;
  absl::StatusOr<std::unique_ptr<JitGraph>> g = JitGraph::Compile(*typed, opts);
  ASSERT_TRUE(g.ok()) << g.status() << "\n" << text;
  absl::StatusOr<interp::Value> got = (*g)->Run(*inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ValuesClose(*expected, *got, tc.rtol, tc.atol)) << text;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpTest, ::testing::ValuesIn(OpCases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           std::string n = absl::StrCat(info.index, "_", info.param.name);
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace kiln::testing
