// File: tests/cuda/op_ptx_test.cc
//
// Every registered operator's test case (tests/compiled/op_cases.h, the list
// the LLVM path runs) compiled for CUDA: the graph pipeline through FuseOps,
// lowered with the default GPU schedule, one __global__ kernel per fused
// function (codegen_cuda), NVRTC -> PTX for sm_80 and sm_90, ptxas -> cubin.
// Without the CUDA toolkit the CUDA C is still generated; the NVRTC and
// ptxas steps skip with a message. No GPU is needed (nothing runs).
// KILN_CUDA_DUMP_DIR=DIR (--test_env) writes each case's CUDA C and ptxas -v
// report there.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_cuda/compile.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "tests/compiled/op_cases.h"
#include "types/infer_type.h"

namespace kiln::testing {
namespace {

// The module after the graph pipeline (FuseOps included), as the LLVM op
// test compiles it (opt level 0).
absl::StatusOr<Module> Fused(const OpCase& c) {
  KILN_ASSIGN_OR_RETURN(Module m, ParseModule(ModuleText(c), c.name));
  KILN_ASSIGN_OR_RETURN(m, types::InferType(m));
  passes::RegisterAllPasses();
  KILN_ASSIGN_OR_RETURN(passes::PassPtr pipeline, passes::DefaultPipeline(0));
  passes::PassContext ctx;
  ctx.opt_level = 0;
  ctx.required_passes.insert("FuseOps");
  ctx.required_passes.insert("InferType");
  KILN_RETURN_IF_ERROR(pipeline->Run(&m, ctx).status());
  return types::InferType(m);
}

class OpPtxTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(OpPtxTest, CompilesToPtxThatPtxasAccepts) {
  const OpCase& tc = GetParam();
  absl::StatusOr<Module> fused = Fused(tc);
  ASSERT_TRUE(fused.ok()) << fused.status() << "\n" << ModuleText(tc);
  const bool nvrtc = codegen_cuda::NvrtcAvailable();
  const bool ptxas = !codegen_cuda::FindPtxas().empty();
  for (const char* target : {"cuda -arch=sm_80", "cuda -arch=sm_90"}) {
    absl::StatusOr<codegen_cuda::CudaTarget> t = codegen_cuda::ParseCudaTarget(target);
    ASSERT_TRUE(t.ok()) << t.status();
    codegen_cuda::CudaCompileOptions opts;
    opts.compile_ptx = nvrtc;
    absl::StatusOr<codegen_cuda::CudaModule> m = codegen_cuda::CompileModuleCuda(*fused, *t, opts);
    ASSERT_TRUE(m.ok()) << target << ": " << m.status() << "\n" << ModuleText(tc);
    if (m->kernels.empty()) {
      // The graph passes left nothing to compute (nn.dropout(%x).0 is %x).
      std::printf("%s: no kernel to compile\n", tc.name.c_str());
      continue;
    }
    if (const char* dir = std::getenv("KILN_CUDA_DUMP_DIR")) {
      std::ofstream(absl::StrCat(dir, "/", tc.name, ".", t->arch, ".cu")) << m->source;
      std::ofstream(absl::StrCat(dir, "/", tc.name, ".", t->arch, ".ptxas.txt")) << m->ptxas_log;
    }
    for (const codegen_cuda::CudaKernel& k : m->kernels) {
      EXPECT_NE(m->source.find("__global__ void"), std::string::npos);
      EXPECT_GT(k.block_threads, 0) << k.name << ": the block size is not a constant";
      if (!nvrtc) continue;
      EXPECT_NE(m->ptx.find(absl::StrCat(".entry ", k.name)), std::string::npos)
          << k.name << "\n" << m->ptx;
    }
    if (!nvrtc) continue;
    if (ptxas) {
      ASSERT_GE(m->cubin.size(), 4u) << target;
      EXPECT_EQ(m->cubin.substr(0, 4), "\x7f" "ELF");
      // A kernel that spills is still valid; say so for the record.
      if (m->ptxas_log.find("bytes spill stores") != std::string::npos &&
          m->ptxas_log.find(" 0 bytes spill stores") == std::string::npos) {
        std::printf("%s %s: ptxas reports spills\n%s\n", tc.name.c_str(), target,
                    m->ptxas_log.c_str());
      }
    }
  }
  if (!nvrtc) GTEST_SKIP() << "CUDA C generated; NVRTC is not linked (no CUDA toolkit at build time)";
  if (!ptxas) GTEST_SKIP() << "PTX generated; ptxas not found (KILN_PTXAS, /usr/local/cuda/bin, PATH)";
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpPtxTest, ::testing::ValuesIn(OpCases()),
                         [](const ::testing::TestParamInfo<OpCase>& info) {
                           std::string n = absl::StrCat(info.index, "_", info.param.name);
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace kiln::testing
