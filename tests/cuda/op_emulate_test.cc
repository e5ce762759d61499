// File: tests/cuda/op_emulate_test.cc
//
// Every operator case of tests/compiled/op_cases.cc compiled to CUDA C
// (codegen_cuda, the default GPU schedule) and run on the host by
// tests/cuda/emulate.h (g++, every block and thread of the launch in turn),
// against the interpreter on the same random inputs. No GPU and no CUDA
// toolkit needed: this checks what the generated code computes (indices,
// guards, thread binding, per-thread producers, dtype handling), which PTX
// validation alone does not.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_cuda/compile.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "tests/compiled/compare.h"
#include "tests/compiled/op_cases.h"
#include "tests/cuda/emulate.h"
#include "types/infer_type.h"

namespace kiln::testing {
namespace {

absl::StatusOr<Module> Fused(const Module& typed) {
  Module m = typed;
  passes::RegisterAllPasses();
  KILN_ASSIGN_OR_RETURN(passes::PassPtr pipeline, passes::DefaultPipeline(0));
  passes::PassContext ctx;
  ctx.opt_level = 0;
  ctx.required_passes.insert("FuseOps");
  ctx.required_passes.insert("InferType");
  KILN_RETURN_IF_ERROR(pipeline->Run(&m, ctx).status());
  return types::InferType(m);
}

class OpEmulateTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpEmulateTest, EmulatedCudaMatchesInterpreter) {
  const OpCase& tc = GetParam();
  const std::string text = ModuleText(tc);
  absl::StatusOr<Module> parsed = ParseModule(text, tc.name);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Module> typed = types::InferType(*parsed);
  ASSERT_TRUE(typed.ok()) << typed.status();
  absl::StatusOr<std::vector<interp::Value>> inputs =
      RandomInputs(*typed, /*seed=*/17, tc.lo, tc.hi, tc.ilo, tc.ihi);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::StatusOr<interp::Value> expected = interp::RunFunction(*typed, "main", *inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();

  absl::StatusOr<Module> fused = Fused(*typed);
  ASSERT_TRUE(fused.ok()) << fused.status();
  codegen_cuda::CudaCompileOptions opts;
  opts.compile_ptx = false;
  absl::StatusOr<codegen_cuda::CudaModule> m =
      codegen_cuda::CompileModuleCuda(*fused, codegen_cuda::CudaTarget{}, opts);
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string source = m->source;
  absl::StatusOr<std::unique_ptr<CudaEmulator>> emu = CudaEmulator::Build(*fused, std::move(*m));
  if (emu.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << emu.status();
  ASSERT_TRUE(emu.ok()) << emu.status() << "\n" << source;
  absl::StatusOr<interp::Value> got = (*emu)->Run(*inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ValuesClose(*expected, *got, tc.rtol, tc.atol)) << text << "\n" << source;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpEmulateTest, ::testing::ValuesIn(OpCases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           std::string n = absl::StrCat(info.index, "_", info.param.name);
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace kiln::testing
