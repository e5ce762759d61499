// File: lowering/lower_test.cc
#include "lowering/lower.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/op.h"
#include "lowering/compute/op_compute.h"
#include "ir/parser.h"
#include "ir/tir_printer.h"
#include "ir/traversal.h"
#include "types/infer_type.h"

namespace kiln::lowering {
namespace {

// The first primitive-looking function: the module's main, marked as a kernel.
Function MainOf(const std::string& text) {
  absl::StatusOr<Module> m = ParseModule(text, "test");
  EXPECT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Module> typed = types::InferType(*m);
  EXPECT_TRUE(typed.ok()) << typed.status();
  return *typed->Lookup("main");
}

TEST(LowerTest, EveryCoreOperatorHasAComputeDefinition) {
  RegisterCoreComputes();
  int n = 0;
  for (const std::string& name : OpRegistry::Global().ListNames()) {
    if (absl::StartsWith(name, "test.")) continue;  // ops registered by tests
    const OpDef* def = OpRegistry::Global().Find(name);
    ASSERT_NE(def, nullptr);
    EXPECT_NE(OpRegistry::Global().GetFacet<FTCompute>(def, kComputeFacet), nullptr) << name;
    ++n;
  }
  EXPECT_GT(n, 80);
}

TEST(LowerTest, FusedElementwiseBecomesOneVectorizedParallelKernel) {
  Function f = MainOf(R"(#[version = "0.1"]
def @main(%x: Tensor[(64, 256), float32], %y: Tensor[(256,), float32]) {
  %0 = add(%x, %y);
  %1 = multiply(%0, 2f);
  nn.relu(%1)
})");
  LowerOptions opts;
  opts.vector_lanes = 8;
  absl::StatusOr<LoweredFunc> k = LowerPrimitive(f, KernelName(f), opts);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->func->name, "fused_add_multiply_nn_relu");
  EXPECT_EQ(k->num_inputs, 2);
  EXPECT_EQ(k->num_outputs, 1);
  ASSERT_EQ(k->func->params.size(), 3u);
  std::string text = tir::ToText(k->func);
  // One loop nest: a parallel outer loop, ramps of 8 lanes, no temporaries.
  EXPECT_TRUE(absl::StrContains(text, "parallel")) << text;
  EXPECT_TRUE(absl::StrContains(text, "ramp(")) << text;
  EXPECT_FALSE(absl::StrContains(text, "allocate")) << text;
  EXPECT_EQ(k->op_names, (std::vector<std::string>{"add", "multiply", "nn.relu"}));
}

// A concatenation of 8,000 tensors lowers to loop IR whose expressions are
// shallow (a balanced tree of selects, log2 of the fan-in), so no walk over
// them recurses 8,000 deep (it crashed the compiler before).
TEST(LowerTest, WideConcatenateLowersToShallowExpressions) {
  const int n = 8000;
  std::string params, args;
  for (int i = 0; i < n; ++i) {
    absl::StrAppend(&params, i ? ", " : "", "%x", i, ": Tensor[(1, 2), float32]");
    absl::StrAppend(&args, i ? ", " : "", "%x", i);
  }
  Function f = MainOf(absl::StrCat("#[version = \"0.1\"]\ndef @main(", params,
                                   ") {\n  concatenate((", args, "), axis=1)\n}"));
  absl::StatusOr<LoweredFunc> k = LowerPrimitive(f, "wide", {});
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_EQ(k->func->params.size(), static_cast<size_t>(n) + 1);
  const std::string text = tir::ToText(k->func);
  int depth = 0, deepest = 0, selects = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') deepest = std::max(deepest, ++depth);
    if (text[i] == ')') --depth;
    if (text.compare(i, 13, "if_then_else(") == 0) ++selects;
  }
  EXPECT_EQ(selects, n - 1);  // one select per boundary between fields
  EXPECT_LT(deepest, 4 * 14) << "expressions nest " << deepest << " deep";  // 14 > log2(8000)
}

TEST(LowerTest, TensorConstantsBecomeParametersAndScalarsImmediates) {
  Function f = MainOf(R"(#[version = "0.1"]
def @main(%x: Tensor[(4, 3), float32]) {
  %0 = add(%x, meta[Constant][0]);
  multiply(%0, 0.5f)
}
#[metadata]
meta[Constant][0] = Tensor[(3,), float32] b64"AACAPwAAAEAAAEBA";
)");
  absl::StatusOr<LoweredFunc> k = LowerPrimitive(f, "k", {});
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_EQ(k->constants.size(), 1u);
  EXPECT_EQ(k->constants[0]->num_elements(), 3);
  EXPECT_EQ(k->num_inputs, 2);  // %x and the constant
  EXPECT_EQ(k->func->params.size(), 3u);
  EXPECT_TRUE(absl::StrContains(tir::ToText(k->func), "0.5f")) << tir::ToText(k->func);
}

TEST(LowerTest, UnreadParametersStayKernelParameters) {
  Function f = MainOf(R"(#[version = "0.1"]
def @main(%x: Tensor[(4, 3), float32], %unused: Tensor[(7,), int8]) {
  zeros_like(%x)
})");
  absl::StatusOr<LoweredFunc> k = LowerPrimitive(f, "k", {});
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_EQ(k->func->params.size(), 3u);
  EXPECT_EQ(k->func->params[1]->dtype, DataType::Int(8));
}

TEST(LowerTest, AnOperatorWithoutComputeIsAnErrorNamingKernelAndOp) {
  OpDef def;
  def.name = "test.no_compute";
  def.num_inputs = 1;
  def.arguments = {{"data", "input"}};
  def.pattern = OpPattern::kOpaque;
  absl::StatusOr<Op> op = OpRegistry::Global().Register(def);
  if (!op.ok()) op = GetOp("test.no_compute");
  ASSERT_TRUE(op.ok()) << op.status();
  Type t = MakeTensorType({Dim(4)}, DataType::Float(32));
  Var x = MakeVar("x", t);
  x->set_checked_type(t);
  absl::StatusOr<Call> call = MakeCall(*op, {x});
  ASSERT_TRUE(call.ok()) << call.status();
  (*call)->set_checked_type(t);
  absl::StatusOr<Function> f = MakeFunction({x}, *call);
  ASSERT_TRUE(f.ok());
  absl::StatusOr<LoweredFunc> k = LowerPrimitive(*f, "fused_test_no_compute", {});
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(absl::StrContains(k.status().message(), "fused_test_no_compute")) << k.status();
  EXPECT_TRUE(absl::StrContains(k.status().message(), "test.no_compute: no compute definition"))
      << k.status();
}

TEST(LowerTest, UntypedCallIsAnError) {
  absl::StatusOr<Op> relu = GetOp("nn.relu");
  ASSERT_TRUE(relu.ok());
  Type t = MakeTensorType({Dim(4)}, DataType::Float(32));
  Var x = MakeVar("x", t);
  absl::StatusOr<Call> call = MakeCall(*relu, {x});
  ASSERT_TRUE(call.ok());
  absl::StatusOr<Function> f = MakeFunction({x}, *call);
  ASSERT_TRUE(f.ok());
  absl::StatusOr<LoweredFunc> k = LowerPrimitive(*f, "k", {});
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(absl::StrContains(k.status().message(), "not type-checked")) << k.status();
}

TEST(LowerTest, LowerModuleRequiresFusedCalls) {
  absl::StatusOr<Module> m = ParseModule(R"(#[version = "0.1"]
def @main(%x: Tensor[(4,), float32]) {
  nn.relu(%x)
})",
                                         "m");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<Module> typed = types::InferType(*m);
  ASSERT_TRUE(typed.ok());
  // Not fused: main calls an operator directly, so there is no kernel to lower.
  absl::StatusOr<LoweredModule> lm = LowerModule(*typed, {});
  ASSERT_TRUE(lm.ok()) << lm.status();
  EXPECT_TRUE(lm->kernels.empty());
}

// Progress: (0, total) first, then one call per distinct primitive function,
// whether it gets a kernel of its own or shares one; a function called twice
// is one function.
TEST(LowerTest, LowerModuleReportsProgressPerFunction) {
  absl::StatusOr<Module> m = ParseModule(R"(#[version = "0.1"]
def @main(%x: Tensor[(4,), float32]) {
  %0 = fn (%p0: Tensor[(4,), float32], Primitive=1) { nn.relu(%p0) };
  %1 = %0(%x);
  %2 = %0(%1);
  %3 = fn (%p0: Tensor[(4,), float32], Primitive=1) { nn.relu(%p0) };
  %4 = %3(%2);
  %5 = fn (%p0: Tensor[(4,), float32], Primitive=1) { exp(%p0) };
  %5(%4)
})",
                                         "m");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Module> typed = types::InferType(*m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  std::vector<std::string> calls;
  LowerOptions o;
  o.progress = [&](int done, int total) { calls.push_back(absl::StrCat(done, "/", total)); };
  absl::StatusOr<LoweredModule> lm = LowerModule(*typed, o);
  ASSERT_TRUE(lm.ok()) << lm.status();
  EXPECT_EQ(lm->kernels.size(), 2u);  // the two relu functions share one kernel
  EXPECT_EQ(calls, (std::vector<std::string>{"0/3", "1/3", "2/3", "3/3"}));
  // Without fused calls: (0, 0) and nothing else.
  calls.clear();
  absl::StatusOr<Module> plain = ParseModule(R"(#[version = "0.1"]
def @main(%x: Tensor[(4,), float32]) {
  %x
})",
                                             "plain");
  ASSERT_TRUE(plain.ok()) << plain.status();
  absl::StatusOr<Module> typed_plain = types::InferType(*plain);
  ASSERT_TRUE(typed_plain.ok()) << typed_plain.status();
  ASSERT_TRUE(LowerModule(*typed_plain, o).ok());
  EXPECT_EQ(calls, (std::vector<std::string>{"0/0"}));
}

// Functions equal but for their constants share one kernel; each keeps its
// own (repacked) constants, but functions equal constants included (the
// steps of an unrolled recurrent layer, each its own function over the
// layer's one weight) share one copy of them.
TEST(LowerTest, LowerModuleSharesConstantsOfEqualFunctions) {
  absl::StatusOr<Module> m = ParseModule(R"(#[version = "0.1"]
def @main(%x: Tensor[(1, 8), float32]) {
  %0 = fn (%p0: Tensor[(1, 8), float32], Primitive=1) { nn.dense(%p0, meta[Constant][0]) };
  %1 = %0(%x);
  %2 = fn (%p0: Tensor[(1, 8), float32], Primitive=1) { nn.dense(%p0, meta[Constant][1]) };
  %3 = %2(%1);
  %4 = fn (%p0: Tensor[(1, 8), float32], Primitive=1) { nn.dense(%p0, meta[Constant][1]) };
  %5 = %4(%3);
  %6 = fn (%p0: Tensor[(1, 8), float32], Primitive=1) { nn.dense(%p0, meta[Constant][1]) };
  %6(%5)
}
#[metadata]
meta[Constant][0] = Tensor[(8, 8), float32] b64"AAAAAArXIzwK16M8j8L1PArXIz3NzEw9j8J1PSlcjz0K16M97FG4Pc3MzD2uR+E9j8L1PbgeBT4pXA8+mpkZPgrXIz57FC4+7FE4PlyPQj7NzEw+PQpXPq5HYT4fhWs+j8J1PgAAgD64HoU+cT2KPilcjz7hepQ+mpmZPlK4nj4K16M+w/WoPnsUrj4zM7M+7FG4PqRwvT5cj8I+FK7HPs3MzD6F69E+PQrXPvYo3D6uR+E+ZmbmPh+F6z7Xo/A+j8L1Pkjh+j4AAAA/XI8CP7geBT8Urgc/cT0KP83MDD8pXA8/hesRP+F6FD89Chc/mpkZP/YoHD9SuB4/rkchPw==";
meta[Constant][1] = Tensor[(8, 8), float32] b64"AAAAP4/C9T4fhes+rkfhPj0K1z7NzMw+XI/CPuxRuD57FK4+CtejPpqZmT4pXI8+uB6FPo/CdT6uR2E+zcxMPuxROD4K1yM+KVwPPo/C9T3NzMw9CtejPY/CdT0K1yM9CtejPAAAAAAK16O8CtcjvY/Cdb0K16O9zczMvY/C9b0pXA++CtcjvuxROL7NzEy+rkdhvo/Cdb64HoW+KVyPvpqZmb4K16O+exSuvuxRuL5cj8K+zczMvj0K176uR+G+H4Xrvo/C9b4AAAC/uB4Fv3E9Cr8pXA+/4XoUv5qZGb9SuB6/Ctcjv8P1KL97FC6/MzMzv+xROL+kcD2/XI9Cvw==";
)",
                                         "m");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Module> typed = types::InferType(*m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  absl::StatusOr<LoweredModule> lm = LowerModule(*typed, {});
  ASSERT_TRUE(lm.ok()) << lm.status();
  EXPECT_EQ(lm->kernels.size(), 1u);
  std::vector<const ExprNode*> fns;
  for (const Expr& n : PostOrder(typed->Lookup("main").value()->body, false)) {
    const auto* call = n.as<CallNode>();
    if (call != nullptr && call->op.as<FunctionNode>() != nullptr) fns.push_back(call->op.get());
  }
  ASSERT_EQ(fns.size(), 4u);
  std::vector<const HostTensor*> c;
  for (const ExprNode* fn : fns) {
    ASSERT_EQ(lm->ConstantsOf(fn).size(), 1u);
    c.push_back(lm->ConstantsOf(fn)[0].get());
  }
  EXPECT_NE(c[0], c[1]);
  EXPECT_EQ(c[1], c[2]);
  EXPECT_EQ(c[1], c[3]);
  // The shared constant is the second weight as the kernel reads it.
  ASSERT_EQ(c[0]->num_elements(), c[1]->num_elements());
  bool differ = false;
  for (int64_t i = 0; i < c[0]->num_elements(); ++i) {
    differ |= c[0]->data<float>()[i] != c[1]->data<float>()[i];
  }
  EXPECT_TRUE(differ);
}

}  // namespace
}  // namespace kiln::lowering
