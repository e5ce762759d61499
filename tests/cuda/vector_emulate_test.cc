// File: tests/cuda/vector_emulate_test.cc
//
// Vectorized global accesses of injective kernels (lowering/te/schedule_cuda.cc
// marks 4 consecutive elements per thread; codegen_cuda turns them into
// float4 / int4 loads and stores under a run-time 16-byte alignment test):
// elementwise adds and a bias_add (the bias stays a per-lane load) compiled
// for sm_90, the PTX holding ld.global...v4 and st.global...v4, the CUDA C run
// on the host emulator against the interpreter; 2-byte elements (float16,
// bfloat16, int16) 8 to a thread through uint4; an extent that is not a
// multiple of 4 (8) x 32 stays scalar; and the same vector kernel called
// on pointers that are not 16-byte aligned takes the scalar loop and still
// computes the right values.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

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

struct Compiled {
  Module fused;
  codegen_cuda::CudaModule cm;
};

Compiled Compile(const std::string& params, const std::string& body) {
  const std::string text =
      absl::StrCat("#[version = \"0.1\"]\ndef @main(", params, ") {\n  ", body, "\n}\n");
  Compiled c;
  absl::StatusOr<Module> parsed = ParseModule(text, "vec");
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Module> typed = types::InferType(*parsed);
  EXPECT_TRUE(typed.ok()) << typed.status();
  Module m = *typed;
  passes::RegisterAllPasses();
  absl::StatusOr<passes::PassPtr> pipeline = passes::DefaultPipeline(0);
  EXPECT_TRUE(pipeline.ok());
  passes::PassContext ctx;
  ctx.opt_level = 0;
  ctx.required_passes.insert("FuseOps");
  ctx.required_passes.insert("InferType");
  EXPECT_TRUE((*pipeline)->Run(&m, ctx).ok());
  absl::StatusOr<Module> fused = types::InferType(m);
  EXPECT_TRUE(fused.ok()) << fused.status();
  c.fused = *fused;
  absl::StatusOr<codegen_cuda::CudaTarget> t = codegen_cuda::ParseCudaTarget("cuda -arch=sm_90");
  EXPECT_TRUE(t.ok());
  codegen_cuda::CudaCompileOptions opts;
  opts.compile_ptx = codegen_cuda::NvrtcAvailable();
  absl::StatusOr<codegen_cuda::CudaModule> cm = codegen_cuda::CompileModuleCuda(*fused, *t, opts);
  EXPECT_TRUE(cm.ok()) << cm.status();
  if (cm.ok()) c.cm = *cm;
  return c;
}

// Whether some line of the PTX is a global access of `op` ("ld", "st") with .v4.
bool PtxHasVector(const std::string& ptx, const std::string& op) {
  size_t pos = 0;
  while ((pos = ptx.find(op + ".global", pos)) != std::string::npos) {
    const size_t end = ptx.find('\n', pos);
    if (ptx.substr(pos, end - pos).find(".v4.") != std::string::npos) return true;
    pos = end;
  }
  return false;
}

// `vector`: the output stored 16 bytes at a time; `vector_loads`: some input
// read so too (by default the same).
void Check(const std::string& params, const std::string& body, bool vector, double tol = 1e-5,
           int vector_loads = -1) {
  Compiled c = Compile(params, body);
  ASSERT_EQ(c.cm.kernels.size(), 1u);
  const std::string& src = c.cm.kernels[0].source;
  if (std::getenv("KILN_VEC_PRINT") != nullptr) std::printf("%s\n", src.c_str());
  EXPECT_EQ(src.find("4*)(") != std::string::npos, vector) << src;
  if (!c.cm.ptx.empty()) {
    EXPECT_EQ(PtxHasVector(c.cm.ptx, "ld"), vector_loads < 0 ? vector : vector_loads != 0)
        << c.cm.ptx;
    EXPECT_EQ(PtxHasVector(c.cm.ptx, "st"), vector) << c.cm.ptx;
  }
  auto inputs = RandomInputs(c.fused, 7, -1, 1, 0, 3);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  absl::StatusOr<interp::Value> expected = interp::RunFunction(c.fused, "main", *inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<std::unique_ptr<CudaEmulator>> emu = CudaEmulator::Build(c.fused, c.cm);
  if (emu.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << emu.status();
  ASSERT_TRUE(emu.ok()) << emu.status();
  absl::StatusOr<interp::Value> got = (*emu)->Run(*inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ValuesClose(*expected, *got, tol, tol));
}

TEST(VectorEmulateTest, AddReluFloat32) {
  Check("%x: Tensor[(2, 16, 64), float32], %y: Tensor[(2, 16, 64), float32]",
        "nn.relu(add(%x, %y))", true);
}
// The bias is read per lane (its index is not x's), x and the output as float4.
TEST(VectorEmulateTest, BiasAdd) {
  Check("%x: Tensor[(2, 32, 8, 8), float32], %b: Tensor[(32), float32]",
        "nn.bias_add(%x, %b)", true);
}
TEST(VectorEmulateTest, Int32) {
  Check("%x: Tensor[(512), int32], %y: Tensor[(512), int32]", "add(%x, %y)", true, 0);
}
// 3 x 37 = 111 elements: not a multiple of 4 x 32, one element per thread.
TEST(VectorEmulateTest, OddExtentStaysScalar) {
  Check("%x: Tensor[(3, 37), float32], %y: Tensor[(3, 37), float32]", "add(%x, %y)", false);
}
// 2-byte elements: 8 per thread, one uint4 (16 bytes) of each operand.
TEST(VectorEmulateTest, Float16) {
  Check("%x: Tensor[(4, 64), float16], %y: Tensor[(4, 64), float16]", "add(%x, %y)", true,
        1e-2);
}
TEST(VectorEmulateTest, BFloat16BiasRelu) {
  Check("%x: Tensor[(2, 32, 8, 8), bfloat16], %b: Tensor[(32), bfloat16]",
        "nn.relu(nn.bias_add(%x, %b))", true, 2e-2);
}
TEST(VectorEmulateTest, Int16) {
  Check("%x: Tensor[(512), int16], %y: Tensor[(512), int16]", "subtract(%x, %y)", true, 0);
}
// A float32 input of a float16 output: 8 lanes of the output, the input's
// 4-byte elements read per lane.
TEST(VectorEmulateTest, CastFloat32ToFloat16) {
  Check("%x: Tensor[(8, 128), float32]", "cast(%x, dtype=\"float16\")", true, 1e-3, 0);
}
// 4 x 60 halves: not a multiple of 8 x 32.
TEST(VectorEmulateTest, OddFloat16ExtentStaysScalar) {
  Check("%x: Tensor[(4, 60), float16], %y: Tensor[(4, 60), float16]", "add(%x, %y)", false,
        1e-2);
}

// The vector kernel on pointers one float past a 16-byte boundary: the
// alignment test fails and the scalar loop computes the same values.
TEST(VectorEmulateTest, MisalignedPointersTakeTheScalarLoop) {
  Compiled c = Compile("%x: Tensor[(4, 128), float32], %y: Tensor[(4, 128), float32]",
                       "add(%x, %y)");
  ASSERT_EQ(c.cm.kernels.size(), 1u);
  const codegen_cuda::CudaKernel& k = c.cm.kernels[0];
  ASSERT_NE(k.source.find("float4*)("), std::string::npos) << k.source;
  HostKernel hk;
  hk.name = k.name;
  hk.param_types = k.param_types;
  for (int d = 0; d < 3; ++d) {
    int64_t g = 0, b = 0;
    ASSERT_TRUE(tir::IsConstInt(k.grid[d], &g) && tir::IsConstInt(k.block[d], &b));
    hk.grid[d] = static_cast<unsigned>(g);
    hk.block[d] = static_cast<unsigned>(b);
  }
  absl::StatusOr<std::unique_ptr<HostKernels>> h = HostKernels::Build(c.cm.source, {hk});
  if (h.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << h.status();
  ASSERT_TRUE(h.ok()) << h.status();
  constexpr int kN = 512;
  for (int offset : {0, 1}) {
    alignas(16) static float x[kN + 4], y[kN + 4], z[kN + 4];
    for (int i = 0; i < kN + 4; ++i) {
      x[i] = static_cast<float>(i) * 0.5f;
      y[i] = static_cast<float>(kN - i);
      z[i] = -1.0f;
    }
    void* args[] = {x + offset, y + offset, z + offset};
    ASSERT_TRUE((*h)->Launch(0, args).ok());
    for (int i = 0; i < kN; ++i) {
      ASSERT_EQ(z[i + offset], x[i + offset] + y[i + offset]) << "offset " << offset << " i " << i;
    }
  }
}

}  // namespace
}  // namespace kiln::testing
