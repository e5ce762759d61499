// File: tests/cuda/gemm_emulate_test.cc
//
// The register-blocked GEMM schedule of lowering/te/schedule_cuda.cc (64x64
// tile per block of 16x16 threads, 4x4 outputs per thread, the reduction in
// "local" memory with its axis outermost): dense alone, dense with a fused
// bias and relu, batch-free matmul shapes that do not divide the tile, in
// float32 and float16, compiled for sm_90 (PTX, cubin when ptxas is found)
// and the generated CUDA C run on the host (tests/cuda/emulate.h) against the
// interpreter. Also checks the launch: 16x16 threads and ceil(M/64) x
// ceil(N/64) blocks.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen_cuda/compile.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "tests/compiled/compare.h"
#include "tests/cuda/emulate.h"
#include "types/infer_type.h"

namespace kiln::testing {
namespace {

void Check(const std::string& text, int64_t grid_x, int64_t grid_y, double tol) {
  absl::StatusOr<Module> parsed = ParseModule(text, "gemm");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Module> typed = types::InferType(*parsed);
  ASSERT_TRUE(typed.ok()) << typed.status();
  auto inputs = RandomInputs(*typed, 3, -1, 1, 0, 3);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::StatusOr<interp::Value> expected = interp::RunFunction(*typed, "main", *inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  Module m = *typed;
  passes::RegisterAllPasses();
  absl::StatusOr<passes::PassPtr> pipeline = passes::DefaultPipeline(3);
  ASSERT_TRUE(pipeline.ok());
  passes::PassContext ctx;
  ctx.opt_level = 3;
  ctx.required_passes.insert("FuseOps");
  ctx.required_passes.insert("InferType");
  ASSERT_TRUE((*pipeline)->Run(&m, ctx).ok());
  absl::StatusOr<Module> fused = types::InferType(m);
  ASSERT_TRUE(fused.ok()) << fused.status();
  absl::StatusOr<codegen_cuda::CudaTarget> t = codegen_cuda::ParseCudaTarget("cuda -arch=sm_90");
  ASSERT_TRUE(t.ok());
  codegen_cuda::CudaCompileOptions opts;
  opts.compile_ptx = codegen_cuda::NvrtcAvailable();
  absl::StatusOr<codegen_cuda::CudaModule> cm = codegen_cuda::CompileModuleCuda(*fused, *t, opts);
  ASSERT_TRUE(cm.ok()) << cm.status();
  ASSERT_EQ(cm->kernels.size(), 1u);
  const codegen_cuda::CudaKernel& k = cm->kernels[0];
  int64_t gx = 0, gy = 0, bx = 0, by = 0;
  ASSERT_TRUE(tir::IsConstInt(k.grid[0], &gx) && tir::IsConstInt(k.grid[1], &gy));
  ASSERT_TRUE(tir::IsConstInt(k.block[0], &bx) && tir::IsConstInt(k.block[1], &by));
  EXPECT_EQ(gx, grid_x);
  EXPECT_EQ(gy, grid_y);
  EXPECT_EQ(bx, 16);
  EXPECT_EQ(by, 16);
  // The thread's 4x4 block of the reduction in registers ("local").
  EXPECT_NE(k.source.find("[16];"), std::string::npos) << k.source;
  if (std::getenv("KILN_GEMM_PRINT") != nullptr) std::printf("%s\n", k.source.c_str());
  if (!cm->ptxas_log.empty()) std::printf("%s\n", cm->ptxas_log.c_str());
  absl::StatusOr<std::unique_ptr<CudaEmulator>> emu = CudaEmulator::Build(*fused, std::move(*cm));
  if (emu.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << emu.status();
  ASSERT_TRUE(emu.ok()) << emu.status();
  absl::StatusOr<interp::Value> got = (*emu)->Run(*inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ValuesClose(*expected, *got, tol, tol));
}

std::string Dense(int m, int n, int k, const char* dt, bool epilogue) {
  std::string body = absl::StrCat("nn.dense(%a, %b, units=", n, ")");
  if (epilogue) body = absl::StrCat("nn.relu(nn.bias_add(", body, ", %c))");
  return absl::StrCat("#[version = \"0.1\"]\ndef @main(%a: Tensor[(", m, ", ", k, "), ", dt,
                      "], %b: Tensor[(", n, ", ", k, "), ", dt, "], %c: Tensor[(", n, "), ", dt,
                      "]) {\n  ", body, "\n}\n");
}

TEST(GemmEmulateTest, DenseFloat32) { Check(Dense(128, 192, 64, "float32", false), 3, 2, 1e-4); }
TEST(GemmEmulateTest, DenseBiasReluFloat32) {
  Check(Dense(128, 128, 96, "float32", true), 2, 2, 1e-4);
}
TEST(GemmEmulateTest, ShapesThatDoNotDivideTheTile) {
  Check(Dense(100, 70, 33, "float32", true), 2, 2, 1e-4);
}
TEST(GemmEmulateTest, DenseFloat16) { Check(Dense(64, 128, 64, "float16", false), 2, 1, 2e-2); }

}  // namespace
}  // namespace kiln::testing
