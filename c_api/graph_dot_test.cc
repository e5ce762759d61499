// Tests of ModuleToDot: nodes, edges and labels of small models.
#include "c_api/graph_dot.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/expr.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "ir/tensor.h"
#include "ir/type.h"
#include "types/infer_type.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

Module Typed(const std::string& text) {
  absl::StatusOr<Module> m = ParseModule(text, "test.kir");
  EXPECT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Module> t = types::InferType(*m);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(GraphDot, OperatorsInputsOutputsAndTypedEdges) {
  Module m = Typed(R"(#[version = "0.1"]
def @main(%x: Tensor[(1, 8), float32], %y: Tensor[(1, 8), float32]) {
  %0 = add(%x, %y);
  %1 = nn.relu(%0);
  multiply(%1, %0)
}
)");
  absl::StatusOr<std::string> dot = ModuleToDot(m);
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_THAT(*dot, HasSubstr("digraph kiln {"));
  EXPECT_THAT(*dot, HasSubstr("label=\"add\""));
  EXPECT_THAT(*dot, HasSubstr("label=\"nn.relu\""));
  EXPECT_THAT(*dot, HasSubstr("label=\"multiply\""));
  EXPECT_THAT(*dot, HasSubstr("label=\"x\\nTensor[(1, 8), float32]\""));
  EXPECT_THAT(*dot, HasSubstr("label=\"output\""));
  // x, y -> add; add -> relu; relu, add -> multiply; multiply -> output.
  EXPECT_EQ(Count(*dot, " -> "), 6);
  EXPECT_EQ(Count(*dot, "shape=box"), 3);  // one box per call, the shared %0 once
  EXPECT_EQ(Count(*dot, "[label=\"Tensor[(1, 8), float32]\"]"), 6);
}

TEST(GraphDot, TupleResultGivesOneOutputPerField) {
  Module m = Typed(R"(#[version = "0.1"]
def @main(%x: Tensor[(4,), float32]) {
  (negative(%x), exp(%x))
}
)");
  absl::StatusOr<std::string> dot = ModuleToDot(m);
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_THAT(*dot, HasSubstr("label=\"output 0\""));
  EXPECT_THAT(*dot, HasSubstr("label=\"output 1\""));
  EXPECT_EQ(Count(*dot, "shape=octagon"), 2);
}

// A constant with a name (an ONNX initializer's) shows it; one without
// says "constant".
TEST(GraphDot, ConstantsShowTheirInitializerNames) {
  Var x = MakeVar("x", MakeTensorType({4}, DataType::Float(32)));
  absl::StatusOr<Ref<HostTensor>> w = HostTensor::Create(DataType::Float(32), {4});
  ASSERT_TRUE(w.ok());
  absl::StatusOr<Constant> named = MakeConstant(*w, "fc1.bias \"b\"");
  ASSERT_TRUE(named.ok());
  absl::StatusOr<Op> add = GetOp("add");
  ASSERT_TRUE(add.ok());
  absl::StatusOr<Call> a = MakeCall(*add, {x, *named});
  ASSERT_TRUE(a.ok()) << a.status();
  absl::StatusOr<Call> b = MakeCall(*add, {*a, MakeScalarConstant(DataType::Float(32), 1)});
  ASSERT_TRUE(b.ok()) << b.status();
  absl::StatusOr<Function> f = MakeFunction({x}, *b);
  ASSERT_TRUE(f.ok());
  Module m;
  absl::StatusOr<GlobalVar> main = MakeGlobalVar("main");
  ASSERT_TRUE(main.ok());
  ASSERT_TRUE(m.Add(*main, *f).ok());
  absl::StatusOr<Module> typed = types::InferType(m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  absl::StatusOr<std::string> dot = ModuleToDot(*typed);
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_THAT(*dot, HasSubstr("label=\"fc1.bias \\\"b\\\"\\nTensor[(4,), float32]\""));
  EXPECT_THAT(*dot, HasSubstr("label=\"constant\\nTensor[(), float32]\""));
}

TEST(GraphDot, NoMainIsAnError) {
  Module m = Typed(R"(#[version = "0.1"]
def @other(%x: Tensor[(4,), float32]) {
  negative(%x)
}
)");
  absl::StatusOr<std::string> dot = ModuleToDot(m);
  ASSERT_FALSE(dot.ok());
  EXPECT_THAT(std::string(dot.status().message()), HasSubstr("no function 'main'"));
}

}  // namespace
}  // namespace kiln
