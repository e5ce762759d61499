// File: tests/dev_guides/clamp_add_test.cc
//
// test.clamp_add, added by following docs/dev/adding_an_operator.md: every
// facet is registered and does what the guide says (text round trip, type
// relation and its errors, the interpreter kernel against add + clip,
// FoldConstant through the kernel, fusion with its neighbours, the strategy),
// and a model that uses it compiles through the real compile path
// (kiln::compiler::CompileToLibrary: the O3 pipeline, lowering, LLVM, the
// .so) and runs in the C runtime with the interpreter's results.
#include "tests/dev_guides/clamp_add.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "c_api/compiler.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/kernels.h"
#include "interpreter/value.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/tensor.h"
#include "kiln/runtime.h"
#include "lowering/compute/op_compute.h"
#include "lowering/strategy/strategy.h"
#include "passes/infra/pass.h"
#include "passes/registry/register_passes.h"
#include "tests/compiled/compare.h"
#include "tests/compiled/jit_runner.h"
#include "types/infer_type.h"
#include "types/relation.h"

namespace kiln::dev_guides {
namespace {

class ClampAddTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::Status s = RegisterClampAdd();
    ASSERT_TRUE(s.ok()) << s;
  }
};

absl::StatusOr<Module> Typed(const std::string& text) {
  absl::StatusOr<Module> m = ParseModule(text, "clamp_add_test");
  if (!m.ok()) return m.status();
  return types::InferType(*m);
}

// The checked type of main's result, or the inference error.
std::string ResultType(const std::string& params, const std::string& body) {
  absl::StatusOr<Module> m = Typed(absl::StrCat("def @main(", params, ") {\n  ", body, "\n}\n"));
  if (!m.ok()) return std::string(m.status().message());
  absl::StatusOr<Function> main = m->Lookup("main");
  if (!main.ok()) return std::string(main.status().message());
  return TypeToString((*main)->body->checked_type());
}

Ref<const HostTensor> F32(std::vector<int64_t> shape, const std::vector<float>& v) {
  return *HostTensor::FromVector<float>(DataType::Float(32), std::move(shape), v);
}

TEST_F(ClampAddTest, EveryFacetIsRegistered) {
  const OpDef* def = OpRegistry::Global().Find(kClampAddOp);
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->num_inputs, 2);
  EXPECT_EQ(def->pattern, OpPattern::kBroadcast);
  ASSERT_TRUE(def->default_attrs);
  EXPECT_NE(def->default_attrs.as<ClampAddAttrs>(), nullptr);
  EXPECT_NE(types::FindTypeRelation(def), nullptr);
  EXPECT_NE(interp::FindKernel(def), nullptr);
  EXPECT_NE(OpRegistry::Global().GetFacet<lowering::FTCompute>(def, lowering::kComputeFacet),
            nullptr);
  std::vector<const lowering::strategy::OpImplementation*> impls =
      lowering::strategy::ImplementationsOf(kClampAddOp);
  ASSERT_EQ(impls.size(), 1u);
  EXPECT_EQ(impls[0]->name, kClampAddStrategy);
  // Registering again is harmless.
  EXPECT_TRUE(RegisterClampAdd().ok());
}

TEST_F(ClampAddTest, PrintsAndParsesBack) {
  absl::StatusOr<Module> m = ParseModule(R"(
def @main(%x: Tensor[(2, 8), float32], %y: Tensor[(8,), float32]) {
  %0 = test.clamp_add(%x, %y);
  test.clamp_add(%0, %y, a_min=-0.5f, a_max=1.25f)
})");
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string text = PrintModule(*m);
  // Default attributes are not printed.
  EXPECT_TRUE(absl::StrContains(text, "test.clamp_add(%x, %y);")) << text;
  EXPECT_TRUE(absl::StrContains(text, "test.clamp_add(%0, %y, a_min=-0.5, a_max=1.25)")) << text;
  absl::StatusOr<Module> back = ParseModule(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(ModuleEqual(*m, *back));
}

TEST_F(ClampAddTest, TypeRelation) {
  const std::string xy = "%x: Tensor[(2, 8), float32], %y: Tensor[(8,), float32]";
  EXPECT_EQ(ResultType(xy, "test.clamp_add(%x, %y)"), "Tensor[(2, 8), float32]");
  EXPECT_EQ(ResultType("%x: Tensor[(n, 1), float64], %y: Tensor[(1, 4), float64]",
                       "test.clamp_add(%x, %y)"),
            "Tensor[(n, 4), float64]");
  EXPECT_EQ(
      ResultType("%x: Tensor[(3,), float32], %y: Tensor[(), float32]", "test.clamp_add(%x, %y)"),
      "Tensor[(3,), float32]");
  // Errors name the operator, the argument and what was expected.
  EXPECT_TRUE(absl::StrContains(
      ResultType("%x: Tensor[(4,), int32], %y: Tensor[(4,), int32]", "test.clamp_add(%x, %y)"),
      "test.clamp_add: argument 0 (lhs) has type Tensor[(4,), int32]; expected a float32 or "
      "float64 tensor"));
  EXPECT_TRUE(absl::StrContains(
      ResultType("%x: Tensor[(4,), float32], %y: Tensor[(4,), float64]", "test.clamp_add(%x, %y)"),
      "test.clamp_add: operands must have the same dtype; got Tensor[(4,), float32] and "
      "Tensor[(4,), float64]"));
  EXPECT_TRUE(absl::StrContains(
      ResultType("%x: Tensor[(3,), float32], %y: Tensor[(4,), float32]", "test.clamp_add(%x, %y)"),
      "test.clamp_add: cannot broadcast Tensor[(3,), float32] with Tensor[(4,), float32] "
      "(dimension 0: 3 vs 4)"));
  EXPECT_TRUE(absl::StrContains(ResultType(xy, "test.clamp_add(%x, %y, a_min=2f, a_max=1f)"),
                                "test.clamp_add: a_min (2) must not exceed a_max (1)"));
}

TEST_F(ClampAddTest, KernelIsAddThenClip) {
  const std::string params = "%x: Tensor[(2, 4), float32], %y: Tensor[(4,), float32]";
  absl::StatusOr<Module> fused = Typed(
      absl::StrCat("def @main(", params, ") { test.clamp_add(%x, %y, a_min=-1f, a_max=2.5f) }"));
  absl::StatusOr<Module> apart = Typed(absl::StrCat(
      "def @main(", params, ") { %0 = add(%x, %y); clip(%0, a_min=-1f, a_max=2.5f) }"));
  ASSERT_TRUE(fused.ok()) << fused.status();
  ASSERT_TRUE(apart.ok()) << apart.status();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<interp::Value> args = {
      interp::Value::Tensor(F32({2, 4}, {-3, -1, 0.25f, 2.5f, 1e30f, nan, 0.1f, 7})),
      interp::Value::Tensor(F32({4}, {0.5f, 0, 0.3f, 1}))};
  absl::StatusOr<interp::Value> got = interp::RunFunction(*fused, "main", args);
  absl::StatusOr<interp::Value> want = interp::RunFunction(*apart, "main", args);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(want.ok()) << want.status();
  // Exactly equal (NaN where add + clip gives NaN).
  absl::Status same = interp::AllClose(*got, *want, /*rtol=*/0, /*atol=*/0);
  EXPECT_TRUE(same.ok()) << same << "\n" << interp::ValueToString(*got);
  // A bad call is an error naming the operator, not a crash.
  absl::StatusOr<Op> op = GetOp(kClampAddOp);
  ASSERT_TRUE(op.ok());
  Ref<const HostTensor> ints = *HostTensor::Create(DataType::Int(32), {3});
  absl::StatusOr<interp::Value> bad =
      interp::EvalOp(*op, nullptr, {interp::Value::Tensor(ints), interp::Value::Tensor(ints)});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(),
                                "test.clamp_add: expects two float32 or two float64 tensors"))
      << bad.status();
}

TEST_F(ClampAddTest, FoldConstantEvaluatesItWithTheKernel) {
  passes::RegisterAllPasses();
  absl::StatusOr<Module> m = Typed("def @main() { test.clamp_add(1f, 7f) }");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<passes::PassPtr> fold = passes::ParsePassList("FoldConstant");
  ASSERT_TRUE(fold.ok()) << fold.status();
  passes::PassContext ctx;
  ctx.opt_level = 3;
  absl::StatusOr<bool> changed = (*fold)->Run(&*m, ctx);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const std::string text = PrintModule(*m);
  EXPECT_FALSE(absl::StrContains(text, "test.clamp_add")) << text;
  EXPECT_TRUE(absl::StrContains(text, "6f")) << text;
}

struct JitCase {
  std::string params;
  std::string body;
};

// Compiled (graph passes, lowering, LLVM JIT) against the interpreter, as
// tests/compiled/op_test.cc does for every core operator.
TEST_F(ClampAddTest, CompiledMatchesInterpreter) {
  const std::vector<JitCase> cases = {
      {"%x: Tensor[(3, 17), float32], %y: Tensor[(17,), float32]", "test.clamp_add(%x, %y)"},
      {"%x: Tensor[(2, 5, 33), float32], %y: Tensor[(2, 1, 33), float32]",
       "test.clamp_add(%x, %y, a_min=-0.5f, a_max=1.25f)"},
      {"%x: Tensor[(1,), float32], %y: Tensor[(1,), float32]", "test.clamp_add(%x, %y)"},
      {"%x: Tensor[(4, 64), float32], %y: Tensor[(4, 64), float32]", "test.clamp_add(%x, %y)"},
      {"%x: Tensor[(3, 9), float64], %y: Tensor[(9,), float64]",
       "test.clamp_add(%x, %y, a_min=-2f, a_max=3f)"},
      {"%x: Tensor[(6, 16), float32], %y: Tensor[(16,), float32]",
       "%0 = exp(%x); %1 = test.clamp_add(%0, %y); nn.relu(%1)"},
  };
  for (const JitCase& c : cases) {
    const std::string text = absl::StrCat("def @main(", c.params, ") {\n  ", c.body, "\n}\n");
    SCOPED_TRACE(text);
    absl::StatusOr<Module> m = Typed(text);
    ASSERT_TRUE(m.ok()) << m.status();
    absl::StatusOr<std::vector<interp::Value>> inputs =
        testing::RandomInputs(*m, /*seed=*/5, /*lo=*/-8, /*hi=*/8, /*ilo=*/0, /*ihi=*/0);
    ASSERT_TRUE(inputs.ok()) << inputs.status();
    absl::StatusOr<interp::Value> want = interp::RunFunction(*m, "main", *inputs);
    ASSERT_TRUE(want.ok()) << want.status();
    for (int level : {0, 3}) {
      testing::JitOptions opts;
      opts.opt_level = level;
      absl::StatusOr<std::unique_ptr<testing::JitGraph>> g = testing::JitGraph::Compile(*m, opts);
      ASSERT_TRUE(g.ok()) << g.status();
      absl::StatusOr<interp::Value> got = (*g)->Run(*inputs);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_TRUE(testing::ValuesClose(*want, *got, 1e-6, 1e-6)) << "opt level " << level;
    }
  }
}

TEST_F(ClampAddTest, FusesWithItsNeighboursIntoOneKernel) {
  absl::StatusOr<Module> m = Typed(R"(
def @main(%x: Tensor[(6, 16), float32], %y: Tensor[(16,), float32]) {
  %0 = exp(%x);
  %1 = test.clamp_add(%0, %y);
  nn.relu(%1)
})");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<std::unique_ptr<testing::JitGraph>> g = testing::JitGraph::Compile(*m, {});
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ((*g)->kernels().size(), 1u);
  const lowering::LoweredFunc& k = (*g)->kernels()[0];
  EXPECT_EQ(k.func->name, "fused_exp_test_clamp_add_nn_relu");
  EXPECT_EQ(k.op_names, (std::vector<std::string>{"exp", "test.clamp_add", "nn.relu"}));
}

TEST_F(ClampAddTest, StrategyTakesFloat32AndDeclinesFloat64) {
  for (const char* dtype : {"float32", "float64"}) {
    SCOPED_TRACE(dtype);
    absl::StatusOr<Module> m =
        Typed(absl::StrCat("def @main(%x: Tensor[(4, 64), ", dtype, "], %y: Tensor[(64,), ", dtype,
                           "]) { test.clamp_add(%x, %y) }"));
    ASSERT_TRUE(m.ok()) << m.status();
    for (bool use_strategies : {true, false}) {
      testing::JitOptions opts;
      opts.lower.use_strategies = use_strategies;
      absl::StatusOr<std::unique_ptr<testing::JitGraph>> g = testing::JitGraph::Compile(*m, opts);
      ASSERT_TRUE(g.ok()) << g.status();
      ASSERT_EQ((*g)->kernels().size(), 1u);
      const std::vector<std::string>& applied = (*g)->kernels()[0].strategies;
      if (use_strategies && std::string(dtype) == "float32") {
        EXPECT_EQ(applied, std::vector<std::string>{kClampAddStrategy});
      } else {
        EXPECT_TRUE(applied.empty()) << applied[0];
      }
    }
  }
}

// ---- The real compile path: CompileToLibrary -> .so -> the C runtime --------------

bool Ok(KilnStatus* st, std::string* error) {
  if (st == nullptr) return true;
  *error = kiln_status_message(st);
  kiln_status_free(st);
  return false;
}

DLTensor View(const HostTensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw_data());
  d.device.device_type = kDLCPU;
  d.device.device_id = 0;
  d.ndim = t.ndim();
  d.dtype.code = kDLFloat;
  d.dtype.bits = static_cast<uint8_t>(t.dtype().bits());
  d.dtype.lanes = 1;
  d.shape = const_cast<int64_t*>(t.shape().data());
  return d;
}

TEST_F(ClampAddTest, CompiledArtifactRunsInTheRuntime) {
  absl::StatusOr<Module> m = Typed(R"(
def @main(%x: Tensor[(8, 32), float32], %y: Tensor[(32,), float32]) {
  %0 = test.clamp_add(%x, %y);
  %1 = multiply(%0, 2f);
  test.clamp_add(%1, %y, a_min=-1f, a_max=4f)
})");
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<std::vector<interp::Value>> inputs =
      testing::RandomInputs(*m, /*seed=*/11, -8, 8, 0, 0);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::StatusOr<interp::Value> want = interp::RunFunction(*m, "main", *inputs);
  ASSERT_TRUE(want.ok()) << want.status();

  const std::string path = absl::StrCat(::testing::TempDir(), "/clamp_add.so");
  absl::StatusOr<compiler::CompileReport> report =
      compiler::CompileToLibrary(*m, compiler::CompileOptions(), path);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->num_kernels, 1);  // all three calls fuse

  std::string error;
  KilnArtifact* artifact = nullptr;
  ASSERT_TRUE(Ok(kiln_artifact_load(path.c_str(), &artifact), &error)) << error;
  KilnSessionOptions so{};
  so.struct_size = sizeof(so);
  so.num_threads = 1;
  KilnSession* session = nullptr;
  ASSERT_TRUE(Ok(kiln_session_create(artifact, &so, &session), &error)) << error;
  const char* names[] = {"x", "y"};
  for (int i = 0; i < 2; ++i) {
    DLTensor in = View(*(*inputs)[static_cast<size_t>(i)].tensor());
    EXPECT_TRUE(Ok(kiln_session_set_input(session, names[i], &in), &error)) << error;
  }
  EXPECT_TRUE(Ok(kiln_session_run(session), &error)) << error;
  const DLTensor* out = nullptr;
  EXPECT_TRUE(Ok(kiln_session_get_output(session, 0, &out), &error)) << error;
  if (out != nullptr) {
    std::vector<int64_t> shape(out->shape, out->shape + out->ndim);
    absl::StatusOr<Ref<HostTensor>> got = HostTensor::FromBytes(
        DataType::Float(32), shape, out->data, static_cast<size_t>(8 * 32) * sizeof(float));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(testing::ValuesClose(*want, interp::Value::Tensor(Ref<const HostTensor>(*got)),
                                     1e-6, 1e-6));
  }
  kiln_session_release(session);
  kiln_artifact_release(artifact);
}

}  // namespace
}  // namespace kiln::dev_guides
