// File: tests/cuda/model_emulate_test.cc
//
// The bundled ResNet-, MobileNet- and BERT-style graphs (examples/*.kir) at
// the default opt level, compiled for CUDA: PTX for sm_90 checked by ptxas
// (skipped without the toolkit), and the generated CUDA C run on the host
// (tests/cuda/emulate.h) against the interpreter on random inputs.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "codegen_cuda/compile.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "c_api/compiler.h"
#include "ir/tir.h"
#include "tests/compiled/compare.h"
#include "tests/cuda/emulate.h"
#include "types/infer_type.h"

namespace kiln::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `want_tiled_convs`: how many kernels must use the tiled conv2d template;
// `want_tc_convs`: how many the implicit GEMM on tensor cores
// (kiln_conv_nchw_tc, float32 convs with `-tf32`).
void CheckModel(const std::string& path, double lo, double hi, double rtol, double atol,
                int want_tiled_convs, const char* target = "cuda -arch=sm_90",
                int want_tc_convs = 0) {
  absl::StatusOr<Module> parsed = ParseModule(ReadFile(path), path);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Module> typed = types::InferType(*parsed);
  ASSERT_TRUE(typed.ok()) << typed.status();
  auto inputs = RandomInputs(*typed, 5, lo, hi, 0, 3);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  // Batch-norm variances must be positive (as model_test does): |v| + 0.5.
  absl::StatusOr<Function> main = typed->Lookup("main");
  ASSERT_TRUE(main.ok());
  for (size_t i = 0; i < (*main)->params.size(); ++i) {
    if (!(*main)->params[i]->name_hint.ends_with("var")) continue;
    auto t = HostTensor::Create((*inputs)[i].tensor()->dtype(), (*inputs)[i].tensor()->shape());
    ASSERT_TRUE(t.ok());
    for (int64_t k = 0; k < (*t)->num_elements(); ++k) {
      (*t)->mutable_data<float>()[k] = std::abs((*inputs)[i].tensor()->data<float>()[k]) + 0.5f;
    }
    (*inputs)[i] = interp::Value::Tensor(*t);
  }
  absl::StatusOr<interp::Value> expected = interp::RunFunction(*typed, "main", *inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();

  // The passes as `kiln compile --target cuda` runs them (so AlterOpLayout
  // keeps the convolutions in NCHW for the GPU's conv2d template).
  compiler::CompileOptions copts;
  copts.target = target;
  absl::StatusOr<Module> fused = compiler::OptimizeForLowering(*typed, copts);
  ASSERT_TRUE(fused.ok()) << fused.status();

  absl::StatusOr<codegen_cuda::CudaTarget> t = codegen_cuda::ParseCudaTarget(target);
  ASSERT_TRUE(t.ok());
  codegen_cuda::CudaCompileOptions opts;
  opts.compile_ptx = codegen_cuda::NvrtcAvailable();
  absl::StatusOr<codegen_cuda::CudaModule> cm = codegen_cuda::CompileModuleCuda(*fused, *t, opts);
  ASSERT_TRUE(cm.ok()) << cm.status();
  // Kernels launched with a 16 x 4 x 4 block: the tiled conv2d template
  // (groups == 1), which NCHWc-blocked convolutions would not get.
  int tiled_convs = 0, tc_convs = 0;
  for (const codegen_cuda::CudaKernel& k : cm->kernels) {
    int64_t b[3] = {0, 0, 0};
    for (int d = 0; d < 3; ++d) tir::IsConstInt(k.block[d], &b[d]);
    tiled_convs += b[0] == 16 && b[1] == 4 && b[2] == 4;
    tc_convs += k.source.find("kiln_conv_nchw_tc<") != std::string::npos;
  }
  EXPECT_EQ(tiled_convs, want_tiled_convs) << path;
  EXPECT_EQ(tc_convs, want_tc_convs) << path;
  std::printf("%s: %zu kernels, %zu bytes of CUDA C, %zu of PTX, %zu of cubin\n", path.c_str(),
              cm->kernels.size(), cm->source.size(), cm->ptx.size(), cm->cubin.size());
  if (opts.compile_ptx && !codegen_cuda::FindPtxas().empty()) {
    EXPECT_GT(cm->cubin.size(), 0u);
  }
  absl::StatusOr<std::unique_ptr<CudaEmulator>> emu = CudaEmulator::Build(*fused, std::move(*cm));
  if (emu.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << emu.status();
  ASSERT_TRUE(emu.ok()) << emu.status();
  absl::StatusOr<interp::Value> got = (*emu)->Run(*inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ValuesClose(*expected, *got, rtol, atol));
}

TEST(ModelEmulateTest, ResNetBlock) { CheckModel("examples/resnet_block.kir", -0.5, 0.5, 1e-3, 1e-4, 2); }
TEST(ModelEmulateTest, MobileNetBlock) {
  CheckModel("examples/mobilenet_block.kir", -0.5, 0.5, 1e-3, 1e-4, 2);
}
// With TF32 opted in, the same blocks' convs (groups == 1) are implicit
// GEMMs on tensor cores; the depthwise ones keep the grouped schedule.
TEST(ModelEmulateTest, ResNetBlockTf32) {
  CheckModel("examples/resnet_block.kir", -0.5, 0.5, 1e-2, 1e-2, 0, "cuda -arch=sm_90 -tf32", 2);
}
TEST(ModelEmulateTest, MobileNetBlockTf32) {
  CheckModel("examples/mobilenet_block.kir", -0.5, 0.5, 1e-2, 1e-2, 0, "cuda -arch=sm_90 -tf32", 2);
}
TEST(ModelEmulateTest, TransformerBlock) {
  CheckModel("examples/transformer_block.kir", -0.1, 0.1, 1e-3, 1e-4, 0);
}

}  // namespace
}  // namespace kiln::testing
