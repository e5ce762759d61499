// File: tests/dev_guides/clamp_add_facets_test.cc
//
// What each missing facet of an operator looks like, in the order
// docs/dev/adding_an_operator.md adds them: this binary registers the facets
// of test.clamp_add one at a time and checks the error of the layer that
// needs the next one. (A facet that is not linked into a binary is simply
// absent; each layer reports it by name instead of crashing.)
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/value.h"
#include "ir/parser.h"
#include "ir/tensor.h"
#include "lowering/lower.h"
#include "tests/dev_guides/clamp_add.h"
#include "types/infer_type.h"

namespace kiln::dev_guides {
namespace {

using ::testing::HasSubstr;

constexpr char kText[] = R"(
def @main(%x: Tensor[(4,), float32], %y: Tensor[(4,), float32]) {
  test.clamp_add(%x, %y)
})";

TEST(ClampAddFacets, EachMissingFacetIsAnErrorNamingTheOperator) {
  // No ir facet: the name is unknown to the parser.
  absl::StatusOr<Module> m = ParseModule(kText, "facets");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("unknown operator 'test.clamp_add'"));

  // Step 1, ir: it parses; type inference has no relation for it.
  ASSERT_TRUE(RegisterClampAddOp().ok());
  m = ParseModule(kText, "facets");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Module> typed = types::InferType(*m);
  ASSERT_FALSE(typed.ok());
  EXPECT_THAT(std::string(typed.status().message()),
              HasSubstr("operator test.clamp_add has no type relation registered"));

  // Step 2, types: it type-checks; the interpreter has no kernel.
  ASSERT_TRUE(RegisterClampAddRelation().ok());
  typed = types::InferType(*m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  Ref<const HostTensor> x =
      *HostTensor::FromVector<float>(DataType::Float(32), {4}, std::vector<float>{-1, 2, 5, 9});
  const std::vector<interp::Value> args = {interp::Value::Tensor(x), interp::Value::Tensor(x)};
  absl::StatusOr<interp::Value> v = interp::RunFunction(*typed, "main", args);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(std::string(v.status().message()),
              HasSubstr("test.clamp_add: the interpreter has no kernel for this operator"));

  // Step 3, interpreter: it runs; lowering has no compute definition.
  ASSERT_TRUE(RegisterClampAddKernel().ok());
  v = interp::RunFunction(*typed, "main", args);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->tensor()->GetAsDouble(0), 0);  // -1 + -1, clamped to [0, 6]
  EXPECT_EQ(v->tensor()->GetAsDouble(1), 4);
  EXPECT_EQ(v->tensor()->GetAsDouble(3), 6);
  absl::StatusOr<Function> main = typed->Lookup("main");
  ASSERT_TRUE(main.ok());
  lowering::LowerOptions opts;
  opts.vector_lanes = 4;
  absl::StatusOr<lowering::LoweredFunc> k =
      lowering::LowerPrimitive(*main, "fused_test_clamp_add", opts);
  ASSERT_FALSE(k.ok());
  EXPECT_THAT(std::string(k.status().message()),
              HasSubstr("test.clamp_add: no compute definition (lowering facet \"Compute\")"));

  // Step 4, lowering: it lowers with the generic compute and default schedule.
  ASSERT_TRUE(RegisterClampAddCompute().ok());
  k = lowering::LowerPrimitive(*main, "fused_test_clamp_add", opts);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_TRUE(k->strategies.empty());

  // Step 5, the strategy: the lowerer now tries it first.
  ASSERT_TRUE(RegisterClampAddStrategy().ok());
  k = lowering::LowerPrimitive(*main, "fused_test_clamp_add", opts);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->strategies, std::vector<std::string>{kClampAddStrategy});
}

}  // namespace
}  // namespace kiln::dev_guides
