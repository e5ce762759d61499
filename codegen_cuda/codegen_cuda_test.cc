// File: codegen_cuda/codegen_cuda_test.cc
//
// Loop IR -> CUDA C: the text of hand-written kernels (thread binding, launch
// dims, parameters, guards), NVRTC -> PTX and ptxas -> cubin of them (skipped
// without the toolkit), target parsing and every error the generator reports.
#include "codegen_cuda/codegen_cuda.h"

#include <string>

#include "codegen_cuda/nvrtc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir.h"
#include "ir/tir_parser.h"

namespace kiln::codegen_cuda {
namespace {

using ::testing::HasSubstr;

tir::PrimFunc Parse(const std::string& text) {
  absl::StatusOr<tir::PrimFunc> f = tir::ParsePrimFunc(text, "test.tir");
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : tir::PrimFunc();
}

// One thread per element, a symbolic length: the schedule_cuda shape.
const char kAddOne[] = R"(
primfunc add_one(A: float32[n], B: float32[n]) {
  thread_binding (bx, 0, floordiv((n + 255), 256)) "blockIdx.x" {
    thread_binding (tx, 0, 256) "threadIdx.x" {
      if ((((bx * 256) + tx) < n)) {
        B[((bx * 256) + tx)] = (A[((bx * 256) + tx)] + 1f)
      }
    }
  }
}
)";

TEST(CudaTargetTest, Parses) {
  absl::StatusOr<CudaTarget> t = ParseCudaTarget("cuda");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->arch, "sm_80");
  EXPECT_EQ(t->sm, 80);
  t = ParseCudaTarget("cuda -arch=sm_90");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->sm, 90);
  EXPECT_EQ(t->ToString(), "cuda -arch=sm_90");
  EXPECT_EQ(t->gpu().arch, "sm_90");
  EXPECT_FALSE(t->wgmma());
  t = ParseCudaTarget("cuda -arch=sm_90a");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->sm, 90);
  EXPECT_TRUE(t->arch_specific);
  EXPECT_TRUE(t->wgmma());
  EXPECT_EQ(t->ToString(), "cuda -arch=sm_90a");
  EXPECT_FALSE(t->tf32);
  EXPECT_TRUE(t->gpu().wgmma);
  EXPECT_TRUE(t->gpu().wide_wgmma);
  t = ParseCudaTarget("cuda -arch=sm_90a -wgmma-n=128");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->wgmma_n, 128);
  EXPECT_TRUE(t->gpu().wgmma);
  EXPECT_FALSE(t->gpu().wide_wgmma);
  EXPECT_EQ(t->ToString(), "cuda -arch=sm_90a -wgmma-n=128");
  t = ParseCudaTarget("cuda -arch=sm_90a -wgmma-swizzle=128");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->wgmma_swizzle, 128);
  EXPECT_EQ(t->ToString(), "cuda -arch=sm_90a -wgmma-swizzle=128");
  t = ParseCudaTarget("cuda -arch=sm_90a -wgmma-tma");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->wgmma_tma);
  EXPECT_EQ(t->ToString(), "cuda -arch=sm_90a -wgmma-tma");
  // TMA fills the 128-byte swizzled layout, whatever -wgmma-swizzle says.
  EXPECT_TRUE(KernelOptionsFor(*t).wgmma_tma);
  EXPECT_EQ(KernelOptionsFor(*t).wgmma_swizzle, 128);
  t = ParseCudaTarget("cuda -arch=sm_90a -wgmma-ws");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->wgmma_ws);
  EXPECT_TRUE(t->wgmma_tma);
  EXPECT_EQ(t->ToString(), "cuda -arch=sm_90a -wgmma-ws");
  EXPECT_TRUE(KernelOptionsFor(*t).wgmma_ws);
  t = ParseCudaTarget("cuda -arch=sm_80 -tf32");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->tf32);
  EXPECT_TRUE(t->gpu().tf32);
  EXPECT_EQ(t->ToString(), "cuda -arch=sm_80 -tf32");
}

TEST(CudaTargetTest, ErrorsNameWhatIsWrong) {
  EXPECT_THAT(std::string(ParseCudaTarget("cuda -arch=sm_61").status().message()),
              HasSubstr("unsupported architecture 'sm_61'"));
  EXPECT_THAT(std::string(ParseCudaTarget("cuda -mcpu=x").status().message()),
              HasSubstr("unknown option '-mcpu=x'"));
  EXPECT_THAT(std::string(ParseCudaTarget("llvm").status().message()),
              HasSubstr("must start with 'cuda'"));
  EXPECT_THAT(std::string(ParseCudaTarget("cuda -arch=sm_90a -wgmma-n=64").status().message()),
              HasSubstr("-wgmma-n must be 128 or 256, got '64'"));
  EXPECT_THAT(std::string(ParseCudaTarget("cuda -arch=sm_90 -wgmma-n=128").status().message()),
              HasSubstr("-wgmma-n applies to -arch=sm_90a"));
  EXPECT_THAT(std::string(ParseCudaTarget("cuda -arch=sm_90a -wgmma-swizzle=64").status().message()),
              HasSubstr("-wgmma-swizzle must be 0 or 128, got '64'"));
  EXPECT_THAT(std::string(ParseCudaTarget("cuda -wgmma-swizzle=128").status().message()),
              HasSubstr("-wgmma-swizzle applies to -arch=sm_90a"));
  EXPECT_THAT(std::string(ParseCudaTarget("cuda -arch=sm_90 -wgmma-tma").status().message()),
              HasSubstr("-wgmma-tma applies to -arch=sm_90a"));
  EXPECT_THAT(
      std::string(ParseCudaTarget("cuda -arch=sm_90a -wgmma-tma -wgmma-n=128").status().message()),
      HasSubstr("-wgmma-tma fills the wide tile's stages, which -wgmma-n=128 turns off"));
  EXPECT_THAT(std::string(ParseCudaTarget("cuda -arch=sm_80 -wgmma-ws").status().message()),
              HasSubstr("-wgmma-ws applies to -arch=sm_90a"));
}

TEST(CodegenCudaTest, ThreadBindingParametersAndLaunchDims) {
  absl::StatusOr<CudaKernel> k = GenerateKernel(Parse(kAddOne));
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->name, "add_one");
  EXPECT_THAT(k->source, HasSubstr("extern \"C\" __global__ void __launch_bounds__(256) add_one("));
  EXPECT_THAT(k->source, HasSubstr("const float* __restrict__ A, float* __restrict__ B, long long n"));
  EXPECT_THAT(k->source, HasSubstr("= (long long)blockIdx.x;"));
  EXPECT_THAT(k->source, HasSubstr("= (long long)threadIdx.x;"));
  // The extents are the launch dims: no guard on the bound loops themselves.
  EXPECT_THAT(k->source, ::testing::Not(HasSubstr("if (bx < ")));
  EXPECT_EQ(k->num_buffers, 2u);
  ASSERT_EQ(k->shape_vars.size(), 1u);
  EXPECT_EQ(k->shape_vars[0]->name, "n");
  EXPECT_EQ(k->block_threads, 256);
  EXPECT_EQ(k->grid_blocks, 0);  // symbolic
  int64_t one = 0;
  EXPECT_TRUE(tir::IsConstInt(k->grid[1], &one) && one == 1);
  EXPECT_EQ(k->grid[0]->kind, tir::ExprKind::kFloorDiv);
}

TEST(CodegenCudaTest, SmallerNestsAreGuardedAndScalarsRunOnOneThread) {
  // Two outputs: the second nest covers fewer threads than the launch; the
  // third statement (no bound loop) runs on thread 0 of block 0.
  absl::StatusOr<CudaKernel> k = GenerateKernel(Parse(R"(
primfunc two(A: float32[64], B: float32[64], C: float32[32], D: float32[1]) {
  thread_binding (bx, 0, 2) "blockIdx.x" {
    thread_binding (tx, 0, 32) "threadIdx.x" {
      B[((bx * 32) + tx)] = (A[((bx * 32) + tx)] * 2f)
    }
  }
  thread_binding (bx2, 0, 1) "blockIdx.x" {
    thread_binding (tx2, 0, 32) "threadIdx.x" {
      C[tx2] = A[tx2]
    }
  }
  D[0] = A[0]
}
)"));
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->grid_blocks, 2);
  EXPECT_EQ(k->block_threads, 32);
  EXPECT_THAT(k->source, HasSubstr("if (bx2 < 1LL) {"));
  EXPECT_THAT(k->source, HasSubstr("if (threadIdx.x == 0 && threadIdx.y == 0"));
}

TEST(CodegenCudaTest, Float16IsComputedInFloatAndStoredAsWords) {
  absl::StatusOr<CudaKernel> k = GenerateKernel(Parse(R"(
primfunc h(A: float16[32], B: float16[32], C: int8[32]) {
  thread_binding (tx, 0, 32) "threadIdx.x" {
    B[tx] = (A[tx] * 2_float16)
    C[tx] = int8(A[tx])
  }
}
)"));
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source, HasSubstr("const unsigned short* __restrict__ A"));
  EXPECT_THAT(k->source, HasSubstr("B[tx] = kiln_f2h(kiln_rh((kiln_h2f(A[tx]) * 2.0f)));"));
  EXPECT_THAT(k->source, HasSubstr("kiln_f2i<signed char>(kiln_h2f(A[tx]), -128, 127"));
}

TEST(CodegenCudaTest, ErrorsNameTheKernelAndTheReason) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {R"(primfunc p(A: float32[8]) { parallel (i, 0, 8) { A[i] = 0f } })",
       "a parallel loop (i) in a CUDA kernel"},
      {R"(primfunc v(A: float32[8]) { A[ramp(0, 1, 8)] = broadcast(0f, 8) })", "vector"},
      {R"(primfunc g(A: float32[8]) {
            allocate T: float32[8] global
            thread_binding (tx, 0, 8) "threadIdx.x" { T[tx] = 1f A[tx] = T[tx] } })",
       "in global memory"},
      {R"(primfunc e(A: float32[8]) {
            thread_binding (tx, 0, 8) "threadIdx.x" { A[tx] = my_fn:float32:opaque(1f) } })",
       "external function"},
      {R"(primfunc d(A: float32[16], B: float32[16]) {
            thread_binding (bx, 0, 2) "blockIdx.x" {
              thread_binding (tx, 0, 8) "threadIdx.x" { A[((bx * 8) + tx)] = 1f } }
            thread_binding (bx2, 0, 2) "blockIdx.x" {
              thread_binding (tx2, 0, 8) "threadIdx.x" { B[((bx2 * 8) + tx2)] = A[(15 - ((bx2 * 8) + tx2))] } } })",
       "loop nest 2 reads 'A', which loop nest 1 writes in other threads"},
      {R"(primfunc s(A: float32[16384]) {
            thread_binding (tx, 0, 64) "threadIdx.x" {
              allocate S: float32[16384] shared
              S[tx] = 1f
              A[tx] = S[(63 - tx)] } })",
       "its __shared__ arrays take 65536 bytes per block, more than the 49152"},
  };
  for (const Case& c : cases) {
    tir::PrimFunc f = Parse(c.text);
    if (!f) continue;
    absl::StatusOr<CudaKernel> k = GenerateKernel(f);
    ASSERT_FALSE(k.ok()) << c.text;
    EXPECT_THAT(std::string(k.status().message()), HasSubstr(c.message)) << c.text;
    EXPECT_THAT(std::string(k.status().message()), HasSubstr("CUDA code for " + f->name));
  }
}

// A stage computed inside its reader's thread loop with its own loop bound
// to the same tag (a cooperative load): both read threadIdx.x, the smaller
// one guarded.
TEST(CodegenCudaTest, NestedBindingOfOneTagIsTheSameThread) {
  absl::StatusOr<CudaKernel> k = GenerateKernel(Parse(R"(primfunc n(A: float32[8]) {
      thread_binding (tx, 0, 8) "threadIdx.x" {
        thread_binding (t2, 0, 4) "threadIdx.x" { A[t2] = 1f } } })"));
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_THAT(k->source, HasSubstr("const long long tx = (long long)threadIdx.x;"));
  EXPECT_THAT(k->source, HasSubstr("const long long t2 = (long long)threadIdx.x;"));
  EXPECT_THAT(k->source, HasSubstr("if (t2 < 4LL) {"));
}

// In a one-block launch a block barrier orders two root nests.
TEST(CodegenCudaTest, OneBlockNestsAreOrderedByABarrier) {
  absl::StatusOr<CudaKernel> k = GenerateKernel(Parse(R"(primfunc d(A: float32[8], B: float32[8]) {
      thread_binding (tx, 0, 8) "threadIdx.x" { A[tx] = 1f }
      thread_binding (tx2, 0, 8) "threadIdx.x" { B[tx2] = A[(7 - tx2)] } })"));
  ASSERT_TRUE(k.ok()) << k.status();
  const size_t sync = k->source.find("__syncthreads();");
  ASSERT_NE(sync, std::string::npos) << k->source;
  EXPECT_LT(k->source.find("A[tx] = "), sync);
  EXPECT_GT(k->source.find("B[tx2] = "), sync);
}

TEST(NvrtcTest, CompilesToPtxAndPtxasAssemblesIt) {
  if (!NvrtcAvailable()) GTEST_SKIP() << "no CUDA toolkit at build time: NVRTC is not linked";
  absl::StatusOr<CudaKernel> k = GenerateKernel(Parse(kAddOne));
  ASSERT_TRUE(k.ok()) << k.status();
  for (const char* arch : {"cuda -arch=sm_80", "cuda -arch=sm_90"}) {
    absl::StatusOr<CudaTarget> t = ParseCudaTarget(arch);
    ASSERT_TRUE(t.ok());
    absl::StatusOr<std::string> ptx = CompileToPtx(ModuleSource({*k}), "add_one.cu", *t);
    ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << ModuleSource({*k});
    EXPECT_THAT(*ptx, HasSubstr(".entry add_one"));
    EXPECT_THAT(*ptx, HasSubstr(".target sm_" + std::to_string(t->sm)));
    if (FindPtxas().empty()) {
      std::printf("ptxas not found: PTX not assembled\n");
      continue;
    }
    absl::StatusOr<PtxasResult> r = AssemblePtx(*ptx, *t);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_GE(r->cubin.size(), 4u);
    EXPECT_EQ(r->cubin.substr(0, 4), "\x7f" "ELF");
    EXPECT_THAT(r->log, HasSubstr("add_one"));
  }
}

TEST(NvrtcTest, CompileErrorsCarryTheLog) {
  if (!NvrtcAvailable()) GTEST_SKIP() << "no CUDA toolkit at build time: NVRTC is not linked";
  absl::StatusOr<std::string> ptx =
      CompileToPtx("extern \"C\" __global__ void f() { undeclared(); }", "bad.cu", CudaTarget{});
  ASSERT_FALSE(ptx.ok());
  EXPECT_THAT(std::string(ptx.status().message()), HasSubstr("undeclared"));
  if (FindPtxas().empty()) return;
  absl::StatusOr<PtxasResult> r = AssemblePtx("this is not PTX", CudaTarget{});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("ptxas -arch=sm_80 rejected the PTX"));
}

TEST(NvrtcTest, WithoutTheToolkitTheErrorSaysSo) {
  if (NvrtcAvailable()) GTEST_SKIP() << "NVRTC is linked: nothing to check";
  absl::StatusOr<std::string> ptx = CompileToPtx("", "x.cu", CudaTarget{});
  EXPECT_EQ(ptx.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(ptx.status().message()), HasSubstr("NVRTC is not available"));
}

}  // namespace
}  // namespace kiln::codegen_cuda
