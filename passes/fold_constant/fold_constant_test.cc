#include "passes/fold_constant/fold_constant.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/traversal.h"
#include "passes/infra/testing.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

using testing::ExpectModule;
using testing::ParseOrFail;
using testing::RunPasses;
using testing::TryRunPasses;
using ::testing::HasSubstr;

TEST(FoldConstantTest, ScalarArithmeticFolds) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(3,), float32]) {
  %0 = add(1f, 2f);
  %1 = multiply(%0, 4f);
  add(%x, %1)
})",
                       {FoldConstant()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(3,), float32]) {
  add(%x, 12f)
})");
}

TEST(FoldConstantTest, LeavesNonConstantCallsAlone) {
  const char* text = R"(
def @main(%x: Tensor[(3,), float32]) {
  %0 = add(%x, 1f);
  nn.relu(%0)
})";
  ExpectModule(RunPasses(text, {FoldConstant()}), text);
}

TEST(FoldConstantTest, TuplesProjectionsAndLets) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(2,), float32]) {
  %0 = (3f, %x);
  let %c = subtract(%0.0, 1f);
  multiply(%x, %c)
})",
                       {FoldConstant()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(2,), float32]) {
  multiply(%x, 2f)
})");
}

TEST(FoldConstantTest, FoldsWeightsThroughTensorOps) {
  // A weight scaled and transposed at run time becomes one constant.
  Module m = RunPasses(R"(
def @main(%x: Tensor[(1, 4), float32]) {
  %0 = ones_like(meta[Constant][0]);
  %1 = multiply(%0, 2f);
  %2 = transpose(%1);
  nn.dense(%x, %2)
}
#[metadata]
meta[Constant][0] = Tensor[(4, 3), float32] b64"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
)",
                       {FoldConstant()});
  Function main = *m.Lookup("main");
  const auto* dense = main->body.as<CallNode>();
  ASSERT_NE(dense, nullptr);
  const auto* w = dense->args[1].as<ConstantNode>();
  ASSERT_NE(w, nullptr) << PrintModule(m);
  EXPECT_EQ(w->data->shape(), (std::vector<int64_t>{3, 4}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(w->data->data<float>()[i], 2.0f);
}

TEST(FoldConstantTest, SplitOfAConstantFoldsToATupleOfConstants) {
  Module m = RunPasses(R"(
def @main(%x: Tensor[(2,), float32]) {
  %0 = ones_like(meta[Constant][0]);
  %1 = split(%0, sections=2);
  add(%x, %1.1)
}
#[metadata]
meta[Constant][0] = Tensor[(4,), float32] b64"AAAAAAAAAAAAAAAAAAAAAA==";
)",
                       {FoldConstant()});
  Function main = *m.Lookup("main");
  const auto* add = main->body.as<CallNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->args[1]->kind, ExprKind::kConstant) << PrintModule(m);
}

TEST(FoldConstantTest, PrimitiveFunctionsAreLeftAlone) {
  const char* text = R"(
def @main(%x: Tensor[(3,), float32]) {
  %0 = fn (%p: Tensor[(3,), float32], Primitive=1) {
    %1 = add(1f, 1f);
    add(%p, %1)
  };
  %0(%x)
})";
  ExpectModule(RunPasses(text, {FoldConstant()}), text);
}

TEST(FoldConstantTest, ResultsAreUnchanged) {
  const char* text = R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = ones_like(%x);
  %1 = exp(2f);
  %2 = sqrt(%1);
  %3 = divide(%x, %2);
  %4 = nn.softmax(%3);
  %5 = sum(meta[Constant][0], axis=[0]);
  add(%4, %5)
}
#[metadata]
meta[Constant][0] = Tensor[(2, 3), float32] b64"AACAPwAAAEAAAEBAAACAQAAAoEAAAMBA";
)";
  Module before = ParseOrFail(text);
  Module after = RunPasses(text, {FoldConstant()});
  auto x = *HostTensor::FromVector<float>(DataType::Float(32), {2, 3}, {0.5f, -1, 2, 3, -4, 0});
  auto a = interp::RunFunction(before, "main", {interp::Value::Tensor(x)});
  auto b = interp::RunFunction(after, "main", {interp::Value::Tensor(x)});
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_TRUE(interp::AllClose(*a, *b, 1e-6, 1e-7).ok());
  // sqrt(exp(2)) and the column sums are constants now.
  int consts = 0;
  for (const Expr& e : PostOrder(*after.Lookup("main"))) consts += e->kind == ExprKind::kConstant;
  EXPECT_EQ(consts, 2);
}

TEST(FoldConstantTest, AFailingConstantComputationIsAStatus) {
  auto m = TryRunPasses(ParseOrFail("def @main() { divide(1, 0) }"), {FoldConstant()});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("FoldConstant"));
  EXPECT_THAT(m.status().message(), HasSubstr("evaluating divide on constants at 1:15"));
  EXPECT_THAT(m.status().message(), HasSubstr("division by zero"));
}

TEST(FoldConstantTest, HundredThousandChain) {
  auto m = types::AddChain(100000, false);
  ASSERT_TRUE(m.ok());
  auto out = TryRunPasses(*m, {FoldConstant()});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(ModuleDifference(*m, *out).has_value());
}

}  // namespace
}  // namespace kiln::passes
