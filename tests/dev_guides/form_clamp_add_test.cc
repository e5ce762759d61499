// File: tests/dev_guides/form_clamp_add_test.cc
//
// FormClampAdd, the pass added by following docs/dev/adding_a_pass.md:
// Before / Expected IR text with structural equality (passes/infra/testing.h),
// what it leaves alone, the pass infrastructure around it (opt level,
// required and disabled passes, its InferType prerequisite, instruments,
// registration by name, a place in the default pipeline whose output
// compiles), and the differential check every registered pass gets in
// tests/differential: random programs keep their results under the
// interpreter.
#include "tests/dev_guides/form_clamp_add.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/value.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "passes/infra/pass.h"
#include "passes/infra/testing.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "tests/compiled/compare.h"
#include "tests/compiled/jit_runner.h"
#include "tests/dev_guides/clamp_add.h"
#include "tests/differential/random_graph.h"
#include "types/infer_type.h"
#include "types/model_zoo.h"

namespace kiln::dev_guides {
namespace {

class FormClampAddTest : public ::testing::Test {
 protected:
  void SetUp() override {
    passes::RegisterAllPasses();
    absl::Status s = RegisterFormClampAdd();
    ASSERT_TRUE(s.ok()) << s;
  }
};

TEST_F(FormClampAddTest, ClipOfAddBecomesClampAdd) {
  const char* kBefore = R"(
def @relu6(%x: Tensor[(2, 8), float32], %y: Tensor[(8,), float32]) {
  %0 = add(%x, %y);
  clip(%0, a_min=0f, a_max=6f)
}
def @bounds(%x: Tensor[(3,), float64], %y: Tensor[(), float64]) {
  %0 = add(%x, %y);
  %1 = clip(%0, a_min=-0.5f, a_max=1.25f);
  exp(%1)
}
)";
  Module m = passes::testing::RunPasses(kBefore, {FormClampAdd()});
  passes::testing::ExpectModule(m, R"(
def @relu6(%x: Tensor[(2, 8), float32], %y: Tensor[(8,), float32]) {
  test.clamp_add(%x, %y)
}
def @bounds(%x: Tensor[(3,), float64], %y: Tensor[(), float64]) {
  %0 = test.clamp_add(%x, %y, a_min=-0.5f, a_max=1.25f);
  exp(%0)
}
)");
}

TEST_F(FormClampAddTest, LeavesOtherProgramsAlone) {
  const char* kText = R"(
def @integers(%x: Tensor[(4,), int32], %y: Tensor[(4,), int32]) {
  %0 = add(%x, %y);
  clip(%0, a_min=0f, a_max=6f)
}
def @symbolic(%x: Tensor[(n, 8), float32], %y: Tensor[(8,), float32]) {
  %0 = add(%x, %y);
  clip(%0, a_min=0f, a_max=6f)
}
def @not_an_add(%x: Tensor[(4,), float32], %y: Tensor[(4,), float32]) {
  %0 = multiply(%x, %y);
  clip(%0, a_min=0f, a_max=6f)
}
def @add_only(%x: Tensor[(4,), float32], %y: Tensor[(4,), float32]) {
  add(%x, %y)
}
)";
  Module m = passes::testing::RunPasses(kText, {FormClampAdd()});
  passes::testing::ExpectModule(m, kText);
}

TEST_F(FormClampAddTest, AnAddWithOtherUsersStaysForThem) {
  const char* kBefore = R"(
def @main(%x: Tensor[(4,), float32], %y: Tensor[(4,), float32]) {
  %0 = add(%x, %y);
  %1 = clip(%0, a_min=0f, a_max=6f);
  (%1, %0)
}
)";
  Module m = passes::testing::RunPasses(kBefore, {FormClampAdd()});
  passes::testing::ExpectModule(m, R"(
def @main(%x: Tensor[(4,), float32], %y: Tensor[(4,), float32]) {
  (test.clamp_add(%x, %y), add(%x, %y))
}
)");
}

// ---- The pass infrastructure around it --------------------------------------

constexpr char kRelu6[] = R"(
def @main(%x: Tensor[(2, 8), float32], %y: Tensor[(8,), float32]) {
  %0 = add(%x, %y);
  clip(%0, a_min=0f, a_max=6f)
})";

bool HasClampAdd(const Module& m) { return absl::StrContains(PrintModule(m), "test.clamp_add"); }

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(FormClampAddTest, OptLevelRequiredAndDisabled) {
  passes::PassPtr seq = passes::MakeSequential("s", {FormClampAdd()});
  struct Case {
    int opt_level;
    bool required;
    bool disabled;
    bool runs;
  };
  for (const Case& c :
       {Case{3, false, false, true}, Case{2, false, false, false}, Case{2, true, false, true},
        Case{3, false, true, false}, Case{3, true, true, false}}) {
    SCOPED_TRACE(absl::StrCat("opt_level ", c.opt_level, " required ", c.required, " disabled ",
                              c.disabled));
    Module m = passes::testing::ParseOrFail(kRelu6);
    passes::PassContext ctx;
    ctx.opt_level = c.opt_level;
    if (c.required) ctx.required_passes.insert("FormClampAdd");
    if (c.disabled) ctx.disabled_passes.insert("FormClampAdd");
    absl::StatusOr<bool> changed = seq->Run(&m, ctx);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_EQ(HasClampAdd(m), c.runs);
  }
}

TEST_F(FormClampAddTest, InferTypeRunsFirstAsItsPrerequisite) {
  // Alone, on a module nobody type-checked, the pass sees no types: no change.
  Module m = passes::testing::ParseOrFail(kRelu6);
  passes::PassContext ctx;
  ctx.opt_level = 3;
  absl::StatusOr<bool> changed = FormClampAdd()->Run(&m, ctx);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  // In a Sequential, its declared prerequisite runs first; the instruments see both.
  auto timing = std::make_shared<passes::TimingInstrument>();
  ctx.instruments.push_back(timing);
  changed = passes::MakeSequential("s", {FormClampAdd()})->Run(&m, ctx);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_TRUE(HasClampAdd(m));
  ASSERT_EQ(timing->entries().size(), 2u);
  EXPECT_EQ(timing->entries()[0].pass, "InferType");
  EXPECT_EQ(timing->entries()[1].pass, "FormClampAdd");
  EXPECT_TRUE(timing->entries()[1].changed);
}

TEST_F(FormClampAddTest, RegisteredByName) {
  absl::StatusOr<passes::PassPtr> p = passes::PassRegistry::Global().Create("FormClampAdd");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ((*p)->name(), "FormClampAdd");
  EXPECT_EQ((*p)->info().opt_level, 3);
  EXPECT_EQ((*p)->info().required, std::vector<std::string>{"InferType"});
  absl::StatusOr<passes::PassPtr> list = passes::ParsePassList("InferType,FormClampAdd");
  ASSERT_TRUE(list.ok()) << list.status();
  Module m = passes::testing::ParseOrFail(kRelu6);
  passes::PassContext ctx;
  ctx.opt_level = 3;
  ASSERT_TRUE((*list)->Run(&m, ctx).ok());
  EXPECT_TRUE(HasClampAdd(m));
  // Registering again is harmless.
  EXPECT_TRUE(RegisterFormClampAdd().ok());
}

// The default pipeline with FormClampAdd where passes/pipeline.cc would list
// it (among the level-3 rewrites, before AlterOpLayout), up to FuseOps; its
// output then compiles like any program (JitGraph runs the pipeline through
// FuseOps, lowering and LLVM) and computes what the original computes.
TEST_F(FormClampAddTest, InThePipelineItsOutputCompilesAndKeepsTheResults) {
  std::vector<passes::PassPtr> list;
  for (const std::string& name : passes::DefaultPipelineNames()) {
    if (name == "FuseOps") continue;
    if (name == "AlterOpLayout") list.push_back(FormClampAdd());
    absl::StatusOr<passes::PassPtr> p = passes::PassRegistry::Global().Create(name);
    ASSERT_TRUE(p.ok()) << p.status();
    list.push_back(*p);
  }
  passes::PassPtr pipeline = passes::MakeSequential("O3+FormClampAdd", std::move(list), 3);
  absl::StatusOr<Module> original = types::InferType(passes::testing::ParseOrFail(R"(
def @main(%x: Tensor[(4, 32), float32], %y: Tensor[(32,), float32]) {
  %0 = multiply(%x, 2f);
  %1 = add(%0, %y);
  %2 = clip(%1, a_min=0f, a_max=6f);
  %3 = add(%2, %x);
  clip(%3, a_min=-1f, a_max=1f)
})"));
  ASSERT_TRUE(original.ok()) << original.status();
  Module m = *original;
  passes::PassContext ctx;
  ctx.opt_level = 3;
  ASSERT_TRUE(pipeline->Run(&m, ctx).ok());
  const std::string text = PrintModule(m);
  EXPECT_FALSE(absl::StrContains(text, "clip(")) << text;
  // Both clip(add(...)) became clamp_add, the outer one keeping its bounds.
  EXPECT_EQ(Count(text, "test.clamp_add("), 2) << text;
  EXPECT_TRUE(absl::StrContains(text, "a_min=-1.0, a_max=1.0)")) << text;

  absl::StatusOr<std::vector<interp::Value>> inputs =
      testing::RandomInputs(*original, /*seed=*/3, -4, 4, 0, 0);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::StatusOr<interp::Value> want = interp::RunFunction(*original, "main", *inputs);
  ASSERT_TRUE(want.ok()) << want.status();
  absl::StatusOr<std::unique_ptr<testing::JitGraph>> g = testing::JitGraph::Compile(m, {});
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<interp::Value> got = (*g)->Run(*inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(testing::ValuesClose(*want, *got, 1e-6, 1e-6));
}

// ---- The differential check (tests/differential/differential_test.cc) -------

// Runs FormClampAdd (with its prerequisite) on a copy of `m`; OK when the
// interpreter gives the same results before and after. `*changed` says
// whether the pass rewrote anything.
absl::Status SameResults(const Module& m, const std::vector<interp::Value>& inputs, bool* changed) {
  absl::StatusOr<interp::Value> before = interp::RunFunction(m, "main", inputs);
  if (!before.ok()) return before.status();
  Module after = m;
  passes::PassContext ctx;
  ctx.opt_level = 3;
  absl::StatusOr<bool> c =
      passes::MakeSequential("FormClampAdd", {FormClampAdd()}, 3)->Run(&after, ctx);
  if (!c.ok()) return c.status();
  *changed = *c;
  absl::StatusOr<interp::Value> got = interp::RunFunction(after, "main", inputs);
  if (!got.ok()) return got.status();
  absl::Status close = interp::AllClose(*before, *got, /*rtol=*/0, /*atol=*/0);
  if (!close.ok()) {
    return absl::InternalError(absl::StrCat(close.message(), "\n--- before ---\n", PrintModule(m),
                                            "--- after ---\n", PrintModule(after)));
  }
  return absl::OkStatus();
}

TEST_F(FormClampAddTest, RandomProgramsKeepTheirResults) {
  int rewritten = 0;
  const int kPrograms = 100;
  for (int seed = 1; seed <= kPrograms; ++seed) {
    testing::RandomGraphOptions opts;
    opts.seed = static_cast<uint64_t>(seed);
    opts.num_ops = 16 + seed % 16;
    absl::StatusOr<Module> m = testing::RandomModule(opts);
    ASSERT_TRUE(m.ok()) << "seed " << seed << ": " << m.status();
    absl::StatusOr<Function> main = m->Lookup("main");
    ASSERT_TRUE(main.ok());
    absl::StatusOr<std::vector<Ref<const HostTensor>>> tensors =
        testing::RandomInputs(*main, static_cast<uint64_t>(seed) * 7919);
    ASSERT_TRUE(tensors.ok()) << tensors.status();
    std::vector<interp::Value> inputs;
    for (const Ref<const HostTensor>& t : *tensors) inputs.push_back(interp::Value::Tensor(t));
    bool changed = false;
    absl::Status s = SameResults(*m, inputs, &changed);
    ASSERT_TRUE(s.ok()) << "seed " << seed << ": " << s.message();
    rewritten += changed;
  }
  std::printf("FormClampAdd rewrote %d of %d random programs; all kept their results\n", rewritten,
              kPrograms);
}

TEST_F(FormClampAddTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(passes::testing::TryRunPasses(*m, {FormClampAdd()}).ok());
}

}  // namespace
}  // namespace kiln::dev_guides
