#include "passes/fold_constant/fold_constant.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/status_macros.h"
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

// Names the non-scalar constants of `e`, in the order a post-order walk
// first meets them, with `names` (what the ONNX importer does with
// initializers; the text IR has no syntax for it).
class NameConstants : public ExprRewriter {
 public:
  explicit NameConstants(std::vector<std::string> names) : names_(std::move(names)) {}

 protected:
  absl::StatusOr<Expr> PostVisit(const Expr&, Expr post) override {
    const auto* c = post.as<ConstantNode>();
    if (c == nullptr || c->data->ndim() == 0 || next_ >= names_.size()) return post;
    KILN_ASSIGN_OR_RETURN(Constant named, MakeConstant(c->data, names_[next_++]));
    return Expr(named);
  }

 private:
  std::vector<std::string> names_;
  size_t next_ = 0;
};

TEST(FoldConstantTest, AConstantFromOneNamedConstantKeepsItsName) {
  absl::StatusOr<Module> m = ParseModule(R"(
def @main(%x: Tensor[(2,), float32]) {
  %0 = negative(multiply(meta[Constant][0], 2f));
  %1 = add(meta[Constant][0], meta[Constant][1]);
  %2 = add(meta[Constant][0], meta[Constant][0]);
  (add(%x, %0), add(%x, %1), add(%x, %2), add(%x, add(3f, 4f)))
}
#[metadata]
meta[Constant][0] = Tensor[(2,), float32] b64"AACAPwAAAEA=";
meta[Constant][1] = Tensor[(2,), float32] b64"AACAPwAAAEA=";
)");
  ASSERT_TRUE(m.ok()) << m.status();
  NameConstants namer({"fc.weight", "fc.bias"});
  absl::StatusOr<Expr> named = namer.Rewrite(*m->Lookup("main"));
  ASSERT_TRUE(named.ok()) << named.status();
  absl::StatusOr<Expr> folded = FoldConstantExpr(*named);
  ASSERT_TRUE(folded.ok()) << folded.status();
  const auto* tuple = folded->cast<FunctionNode>()->body.as<TupleNode>();
  ASSERT_NE(tuple, nullptr) << PrintExpr(*folded);
  std::vector<std::string> names;
  for (const Expr& f : tuple->fields) {
    const auto* add = f.as<CallNode>();
    ASSERT_NE(add, nullptr) << PrintExpr(*folded);
    const auto* c = add->args[1].as<ConstantNode>();
    ASSERT_NE(c, nullptr) << PrintExpr(*folded);
    names.push_back(c->name_hint);
  }
  // One named source (twice is still one): its name; two: none; none: none.
  EXPECT_EQ(names, (std::vector<std::string>{"fc.weight", "", "fc.weight", ""}));
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
