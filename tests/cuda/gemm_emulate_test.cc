// File: tests/cuda/gemm_emulate_test.cc
//
// The shared-memory tiled GEMM schedule of lowering/te/schedule_cuda.cc (64x64
// tile per block of 16x16 threads, 4x4 outputs per thread in "local"
// registers, the reduction split by 16 with A's and B's 64x16 slices copied
// into "shared" tiles by the block's threads, barriers from
// codegen_cuda/thread_sync.h): dense alone, dense with a fused bias and relu,
// shapes that do not divide the tile (M, N and K), matmul (B not transposed),
// batch_matmul (blockIdx.z per batch), in float32, float16 and bfloat16 (the
// tile products of the last two on tensor cores where the shape divides the
// tile: mma.sync in the PTX, emulated lane by lane), compiled for
// sm_90 (PTX, cubin when ptxas is found) and the generated CUDA C run on the
// host (tests/cuda/emulate.h: a block's threads as fibers meeting at the
// barriers) against the interpreter. Also checks the launch (16x16 threads,
// ceil(N/64) x ceil(M/64) x batch blocks), the shared tiles and barriers in
// the source, and that the same kernel with its barriers removed computes
// wrong values (so the emulation does depend on them).
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "codegen_cuda/compile.h"
#include "codegen_cuda/tensor_core.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "tests/compiled/compare.h"
#include "tests/cuda/cuda_case.h"
#include "tests/cuda/emulate.h"

namespace kiln::testing {
namespace {

struct Expect {
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;
  double tol = 1e-4;
  const char* mma = nullptr;  // the tensor-core call expected ("kiln_mma_block<false>"), or none
  const char* tc = nullptr;   // the 128x128 template's call ("kiln_gemm_tc<false, true, true>(")
  const char* target = "cuda -arch=sm_90";
  // Text the kernel source must hold besides (a ragged tile's limits: rows
  // past M or columns past N are never read, which the values alone cannot
  // show, as the epilogue does not store them).
  std::vector<const char*> source_has = {};
};

// PTX for sm_80 (A100) too, assembled when ptxas is found: the same
// instructions there.
void CheckSm80(const std::string& source, const std::vector<const char*>& instructions) {
  absl::StatusOr<codegen_cuda::CudaTarget> t80 = codegen_cuda::ParseCudaTarget("cuda -arch=sm_80");
  ASSERT_TRUE(t80.ok());
  absl::StatusOr<std::string> ptx80 = codegen_cuda::CompileToPtx(source, "gemm.cu", *t80);
  ASSERT_TRUE(ptx80.ok()) << ptx80.status();
  for (const char* i : instructions) EXPECT_NE(ptx80->find(i), std::string::npos) << i;
  if (!codegen_cuda::FindPtxas().empty()) {
    absl::StatusOr<codegen_cuda::PtxasResult> r = codegen_cuda::AssemblePtx(*ptx80, *t80);
    ASSERT_TRUE(r.ok()) << r.status();
  }
}

void Check(const std::string& text, Expect want) {
  absl::StatusOr<CudaCase> c =
      CompileCudaCase(text, "gemm", {.opt_level = 3, .seed = 3, .target = want.target});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->cuda.kernels.size(), 1u);
  const codegen_cuda::CudaKernel& k = c->cuda.kernels[0];
  int64_t g[3] = {0, 0, 0}, bx = 0, by = 0;
  for (int d = 0; d < 3; ++d) ASSERT_TRUE(tir::IsConstInt(k.grid[d], &g[d]));
  ASSERT_TRUE(tir::IsConstInt(k.block[0], &bx) && tir::IsConstInt(k.block[1], &by));
  EXPECT_EQ(g[0], want.grid_x);
  EXPECT_EQ(g[1], want.grid_y);
  EXPECT_EQ(g[2], want.grid_z);
  // The warp-specialized tile's third warpgroup: 16 x 24 threads.
  const bool ws = want.tc != nullptr && absl::StartsWith(want.tc, "kiln_gemm_wgs<");
  EXPECT_EQ(bx, 16);
  EXPECT_EQ(by, ws ? 24 : 16);
  for (const char* text : want.source_has) {
    EXPECT_NE(k.source.find(text), std::string::npos) << text << "\n" << k.source;
  }
  if (want.tc != nullptr) {
    // The thread's 8x8 block in registers, the whole reduction one call of
    // the pipelined tile (its shared stages and barriers in the prelude),
    // cp.async, ldmatrix and mma.sync in the PTX.
    // (8x16 and the stages in dynamic shared memory for the wide wgmma tile.)
    // (kiln_gemm_wgt: that tile with TMA copies, its operands tensor maps,
    // its four mbarriers static shared memory.)
    const bool tma = ws || absl::StartsWith(want.tc, "kiln_gemm_wgt<");
    const bool wide = tma || absl::StartsWith(want.tc, "kiln_gemm_wgw<");
    EXPECT_NE(k.source.find(wide ? "[128];" : "[64];"), std::string::npos) << k.source;
    EXPECT_NE(k.source.find(want.tc), std::string::npos) << k.source;
    EXPECT_EQ(k.source.find("__shared__"), std::string::npos) << k.source;
    EXPECT_EQ(k.shared_bytes, ws    ? codegen_cuda::kGemmWgtBarrierBytes + codegen_cuda::kGemmWgsStateBytes
                              : tma ? codegen_cuda::kGemmWgtBarrierBytes
                              : wide ? 0 : codegen_cuda::kGemmTcSharedBytes);
    EXPECT_EQ(k.tensor_maps.size(), tma ? 2u : 0u);
    const bool swizzled = tma || absl::StrContains(want.tc, ", true>(");
    EXPECT_EQ(k.dynamic_shared_bytes,
              wide ? codegen_cuda::kGemmWgwDynamicSharedBytes +
                         (swizzled ? codegen_cuda::kGemmWgwSwizzleAlignBytes : 0)
                   : 0);
    const bool wg = wide || absl::StartsWith(want.tc, "kiln_gemm_wg<");
    const bool tf32 = absl::StartsWith(want.tc, "kiln_gemm_tf32<");
    std::vector<const char*> instructions = {
        "cp.async.cg.shared.global", "cp.async.wait_group", "ldmatrix.sync.aligned.m8n8.x4",
        "mma.sync.aligned.m16n8k16.row.col.f32."};
    if (wg) {
      // Hopper's form: the tensor cores read the shared stages themselves.
      instructions = {"cp.async.cg.shared.global", "cp.async.wait_group",
                      "fence.proxy.async.shared::cta", "wgmma.fence.sync.aligned",
                      "wgmma.mma_async.sync.aligned.m64n128k16.f32.", "wgmma.commit_group.sync.aligned",
                      "wgmma.wait_group.sync.aligned"};
    }
    if (wide) {
      // One step's MMAs in flight while the next step's are issued.
      instructions = {"cp.async.cg.shared.global", "fence.proxy.async.shared::cta",
                      "wgmma.mma_async.sync.aligned.m64n256k16.f32.",
                      "wgmma.wait_group.sync.aligned 1;", "wgmma.wait_group.sync.aligned 0;"};
    }
    if (tma) {
      // The boxes on the stages' mbarriers (and kiln_gemm_wgw's copies for a
      // base that is not a whole row).
      instructions = {"mbarrier.init.shared::cta.b64", "fence.mbarrier_init.release.cluster",
                      "mbarrier.arrive.expect_tx.shared::cta.b64",
                      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                      "mbarrier.try_wait.parity.shared::cta.b64",
                      "wgmma.mma_async.sync.aligned.m64n256k16.f32.",
                      "wgmma.wait_group.sync.aligned 1;", "cp.async.cg.shared.global"};
    }
    if (ws) {
      // No cp.async: only the producer's boxes; the consumers' barriers named.
      instructions = {"mbarrier.arrive.expect_tx.shared::cta.b64",
                      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                      "mbarrier.try_wait.parity.shared::cta.b64", "mbarrier.arrive.shared::cta.b64",
                      "bar.sync 1, 256;", "wgmma.mma_async.sync.aligned.m64n256k16.f32.",
                      "wgmma.wait_group.sync.aligned 1;"};
    }
    if (wg && !c->cuda.ptx.empty()) {
      EXPECT_NE(c->cuda.ptx.find(".target sm_90a"), std::string::npos);
      EXPECT_EQ(c->cuda.ptx.find("mma.sync.aligned"), std::string::npos);
    }
    if (tf32) {
      instructions = {"cp.async.cg.shared.global", "cp.async.wait_group", "cvt.rna.tf32.f32",
                      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"};
    }
    if (!c->cuda.ptx.empty()) {
      for (const char* i : instructions) EXPECT_NE(c->cuda.ptx.find(i), std::string::npos) << i;
      if (!wg) CheckSm80(c->cuda.source, instructions);
      if (tf32) {
        EXPECT_EQ(c->cuda.ptx.find("ldmatrix"), std::string::npos);
      }
    }
  } else {
    // The thread's 4x4 block of the reduction in registers ("local"), A's and
    // B's slices in shared tiles of 64 rows of 16 (+1 padding) elements (or 16
    // of 64 + 1 for a B that is not transposed), the barriers around them.
    EXPECT_NE(k.source.find("[16];"), std::string::npos) << k.source;
    EXPECT_NE(k.source.find("__shared__"), std::string::npos) << k.source;
    EXPECT_NE(k.source.find("__syncthreads();"), std::string::npos) << k.source;
    EXPECT_GE(k.shared_bytes, 2 * 64 * 16 * 2) << k.source;
    EXPECT_LE(k.shared_bytes, 48 * 1024) << k.source;
    if (want.mma != nullptr) {
      EXPECT_NE(k.source.find(want.mma), std::string::npos) << k.source;
      EXPECT_NE(k.source.find("kiln_mma_finish("), std::string::npos) << k.source;
      if (!c->cuda.ptx.empty()) {
        EXPECT_NE(c->cuda.ptx.find("mma.sync.aligned.m16n8k16.row.col.f32."), std::string::npos);
        CheckSm80(c->cuda.source, {"mma.sync.aligned.m16n8k16.row.col.f32."});
      }
    } else {
      EXPECT_EQ(k.source.find("kiln_mma_block<"), std::string::npos) << k.source;
    }
    EXPECT_EQ(k.source.find("kiln_gemm_tc<"), std::string::npos) << k.source;
  }
  if (std::getenv("KILN_GEMM_PRINT") != nullptr) std::printf("%s\n", k.source.c_str());
  if (!c->cuda.ptxas_log.empty()) std::printf("%s\n", c->cuda.ptxas_log.c_str());
  // Without its barriers the same kernel reads tiles before they are written.
  codegen_cuda::CudaModule racy = c->cuda;
  // (And the warp-specialized tile's named barrier of its computing threads.)
  racy.source = absl::StrReplaceAll(racy.source, {{"__syncthreads();", ""},
                                                  {"kiln_emu_bar_sync(1, 256);", ""}});
  absl::StatusOr<std::unique_ptr<CudaEmulator>> emu =
      CudaEmulator::Build(c->fused, std::move(c->cuda));
  if (emu.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << emu.status();
  ASSERT_TRUE(emu.ok()) << emu.status();
  absl::StatusOr<interp::Value> got = (*emu)->Run(c->inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ValuesClose(c->expected, *got, want.tol, want.tol));
  absl::StatusOr<std::unique_ptr<CudaEmulator>> racy_emu = CudaEmulator::Build(c->fused, racy);
  ASSERT_TRUE(racy_emu.ok()) << racy_emu.status();
  absl::StatusOr<interp::Value> racy_got = (*racy_emu)->Run(c->inputs);
  ASSERT_TRUE(racy_got.ok()) << racy_got.status();
  EXPECT_FALSE(ValuesClose(c->expected, *racy_got, want.tol, want.tol));
}

std::string Dense(int m, int n, int k, const char* dt, bool epilogue) {
  std::string body = absl::StrCat("nn.dense(%a, %b, units=", n, ")");
  if (epilogue) body = absl::StrCat("nn.relu(nn.bias_add(", body, ", %c))");
  return absl::StrCat("#[version = \"0.1\"]\ndef @main(%a: Tensor[(", m, ", ", k, "), ", dt,
                      "], %b: Tensor[(", n, ", ", k, "), ", dt, "], %c: Tensor[(", n, "), ", dt,
                      "]) {\n  ", body, "\n}\n");
}

std::string Matmul(int m, int n, int k, const char* dt = "float32") {
  return absl::StrCat("#[version = \"0.1\"]\ndef @main(%a: Tensor[(", m, ", ", k, "), ", dt,
                      "], %b: Tensor[(", k, ", ", n, "), ", dt, "]) {\n  nn.matmul(%a, %b)\n}\n");
}

std::string BatchMatmul(int batch, int m, int n, int k, const char* dt = "float32") {
  return absl::StrCat("#[version = \"0.1\"]\ndef @main(%a: Tensor[(", batch, ", ", m, ", ", k,
                      "), ", dt, "], %b: Tensor[(", batch, ", ", n, ", ", k, "), ", dt,
                      "]) {\n  nn.batch_matmul(%a, %b)\n}\n");
}

// (A thread's 4 consecutive outputs of a row stored as one float4.)
TEST(GemmEmulateTest, DenseFloat32) {
  Check(Dense(128, 192, 64, "float32", false), {3, 2, 1, 1e-4, nullptr, nullptr, "cuda -arch=sm_90", {"*(float4*)("}});
}
TEST(GemmEmulateTest, DenseBiasReluFloat32) {
  Check(Dense(128, 128, 96, "float32", true), {2, 2, 1});
}
TEST(GemmEmulateTest, ShapesThatDoNotDivideTheTile) {
  Check(Dense(100, 70, 33, "float32", true), {2, 2, 1});
}
// float16 and bfloat16 tiles that divide the tile: the step products on
// tensor cores (codegen_cuda/tensor_core.h), float32 accumulation.
constexpr char kF16Mma[] = "kiln_mma_block<false>";
TEST(GemmEmulateTest, DenseFloat16) {
  Check(Dense(64, 128, 64, "float16", false), {2, 1, 1, 2e-2, kF16Mma});
}
TEST(GemmEmulateTest, DenseBiasReluFloat16) {
  Check(Dense(128, 192, 96, "float16", true), {3, 2, 1, 2e-2, kF16Mma});
}
TEST(GemmEmulateTest, DenseBFloat16) {
  Check(Dense(64, 64, 32, "bfloat16", false), {1, 1, 1, 5e-2, "kiln_mma_block<true>"});
}
// K = 40: two 16-steps on tensor cores, the 8 left by the scalar tail.
TEST(GemmEmulateTest, DenseFloat16ReductionTail) {
  Check(Dense(64, 128, 40, "float16", false), {2, 1, 1, 2e-2, kF16Mma});
}
// K = 36 is not a multiple of a 16-byte chunk (8 halves), so the 128x128
// tile's copies could not stay aligned: the 64x64 template, guarded and
// partitioned, with the scalar inner product (M = 100 does not divide it).
TEST(GemmEmulateTest, DenseFloat16UnalignedRaggedStaysScalar) {
  Check(Dense(100, 64, 36, "float16", false), {1, 2, 1, 2e-2});
}
TEST(GemmEmulateTest, MatmulNotTransposed) { Check(Matmul(96, 130, 40), {3, 2, 1}); }
TEST(GemmEmulateTest, BatchMatmul) { Check(BatchMatmul(3, 64, 80, 50), {2, 1, 3}); }
// B not transposed (its shared tile is k-major): other strides for the mma.
TEST(GemmEmulateTest, MatmulFloat16) {
  Check(Matmul(64, 128, 48, "float16"), {2, 1, 1, 2e-2, kF16Mma});
}
TEST(GemmEmulateTest, BatchMatmulFloat16) {
  Check(BatchMatmul(2, 64, 64, 32, "float16"), {1, 1, 2, 2e-2, kF16Mma});
}

// Multiples of 128 x 128 x 32 in float16/bfloat16: the 128x128 template
// (8x8 outputs per thread, cp.async into three shared stages, ldmatrix,
// mma.sync), A and B in each layout the tile reads: k-major A and B (dense),
// B n-major (matmul), a batch on blockIdx.z.
TEST(GemmEmulateTest, DenseFloat16TensorCoreTile) {
  Check(Dense(128, 256, 64, "float16", false),
        {2, 1, 1, 2e-2, nullptr, "kiln_gemm_tc<false, true, true>("});
}
TEST(GemmEmulateTest, DenseBiasReluFloat16TensorCoreTile) {
  Check(Dense(256, 128, 96, "float16", true),
        {1, 2, 1, 2e-2, nullptr, "kiln_gemm_tc<false, true, true>("});
}
TEST(GemmEmulateTest, DenseBFloat16TensorCoreTile) {
  Check(Dense(128, 128, 32, "bfloat16", false),
        {1, 1, 1, 5e-2, nullptr, "kiln_gemm_tc<true, true, true>("});
}
TEST(GemmEmulateTest, MatmulFloat16TensorCoreTile) {
  Check(Matmul(128, 256, 128, "float16"),
        {2, 1, 1, 2e-2, nullptr, "kiln_gemm_tc<false, true, false>("});
}
TEST(GemmEmulateTest, BatchMatmulFloat16TensorCoreTile) {
  Check(BatchMatmul(2, 128, 128, 64, "float16"),
        {1, 1, 2, 2e-2, nullptr, "kiln_gemm_tc<false, true, true>("});
}
// matmul with transpose_a (A given as (k, m), m-major): ldmatrix.trans for
// A's fragments too.
TEST(GemmEmulateTest, MatmulFloat16TransposedATensorCoreTile) {
  Check(absl::StrCat("#[version = \"0.1\"]\ndef @main(%a: Tensor[(64, 128), float16], "
                     "%b: Tensor[(64, 256), float16]) {\n  nn.matmul(%a, %b, transpose_a=true)"
                     "\n}\n"),
        {2, 1, 1, 2e-2, nullptr, "kiln_gemm_tc<false, false, false>("});
}
TEST(GemmEmulateTest, MatmulFloat16BothTransposedTensorCoreTile) {
  Check(absl::StrCat("#[version = \"0.1\"]\ndef @main(%a: Tensor[(32, 128), float16], "
                     "%b: Tensor[(128, 32), float16]) {\n  nn.matmul(%a, %b, transpose_a=true, "
                     "transpose_b=true)\n}\n"),
        {1, 1, 1, 2e-2, nullptr, "kiln_gemm_tc<false, false, true>("});
}

// Ragged shapes on the 128x128 tile: M, N not multiples of 128, K not of
// 32 (but of 8, so its 16-byte copies stay aligned). The reduction loop
// keeps its guards (no loop partition), the tile reads zeros past the
// limits the rewrite takes from them, the epilogue stores what exists.
TEST(GemmEmulateTest, DenseFloat16RaggedRowsTensorCoreTile) {
  Check(Dense(100, 64, 32, "float16", false),
        {1, 1, 1, 2e-2, nullptr, "kiln_gemm_tc<false, true, true>(", "cuda -arch=sm_90",
         {"1LL, (100LL - ", ", (64LL - ", ", 32LL);"}});
}
TEST(GemmEmulateTest, DenseBiasReluFloat16RaggedTensorCoreTile) {
  Check(Dense(200, 136, 72, "float16", true),
        {2, 2, 1, 2e-2, nullptr, "kiln_gemm_tc<false, true, true>(", "cuda -arch=sm_90",
         {"3LL, (200LL - ", ", (136LL - ", ", 72LL);"}});
}
TEST(GemmEmulateTest, MatmulFloat16RaggedTensorCoreTile) {
  Check(Matmul(130, 200, 40, "float16"),
        {2, 2, 1, 2e-2, nullptr, "kiln_gemm_tc<false, true, false>("});
}
TEST(GemmEmulateTest, MatmulBFloat16TransposedARaggedTensorCoreTile) {
  Check(absl::StrCat("#[version = \"0.1\"]\ndef @main(%a: Tensor[(40, 200), bfloat16], "
                     "%b: Tensor[(40, 72), bfloat16]) {\n  nn.matmul(%a, %b, transpose_a=true)"
                     "\n}\n"),
        {1, 2, 1, 5e-2, nullptr, "kiln_gemm_tc<true, false, false>("});
}
TEST(GemmEmulateTest, BatchMatmulFloat16RaggedTensorCoreTile) {
  Check(BatchMatmul(2, 77, 96, 64, "float16"),
        {1, 1, 2, 2e-2, nullptr, "kiln_gemm_tc<false, true, true>("});
}
TEST(GemmEmulateTest, DenseBFloat16RaggedWarpgroupMma) {
  Check(Dense(200, 136, 72, "bfloat16", false),
        {2, 2, 1, 5e-2, nullptr, "kiln_gemm_wg<true>(", "cuda -arch=sm_90a"});
}
TEST(GemmEmulateTest, DenseFloat32RaggedTf32) {
  Check(Dense(100, 130, 20, "float32", true),
        {2, 1, 1, 1e-2, nullptr, "kiln_gemm_tf32<true, true>(", "cuda -arch=sm_90 -tf32"});
}

// Compiled for sm_90a the k-major 128x128 GEMMs take Hopper's warpgroup MMA
// (kiln_gemm_wg); a matmul's n-major B keeps the mma.sync tile.
TEST(GemmEmulateTest, DenseFloat16WarpgroupMma) {
  Check(Dense(256, 128, 96, "float16", false),
        {1, 2, 1, 2e-2, nullptr, "kiln_gemm_wg<false>(", "cuda -arch=sm_90a"});
}
TEST(GemmEmulateTest, DenseBiasReluBFloat16WarpgroupMma) {
  Check(Dense(128, 384, 64, "bfloat16", true),
        {3, 1, 1, 5e-2, nullptr, "kiln_gemm_wg<true>(", "cuda -arch=sm_90a"});
}
// (384 columns: a third more padded columns in 256-wide tiles, so the
// 128-wide one.) At least 256 columns: the wide tile (128 x 256 per block,
// kiln_gemm_wgw),
// with a fused epilogue, ragged in M, N and K (K inside its second step of
// 64), and batched.
TEST(GemmEmulateTest, DenseBiasReluFloat16WideWarpgroupMma) {
  Check(Dense(128, 512, 128, "float16", true),
        {2, 1, 1, 2e-2, nullptr, "kiln_gemm_wgw<false, false>(", "cuda -arch=sm_90a"});
}
// -wgmma-swizzle=128: its stages in the 128-byte swizzled layout.
TEST(GemmEmulateTest, DenseFloat16RaggedWideWarpgroupMmaSwizzled) {
  Check(Dense(130, 512, 200, "float16", false),
        {2, 2, 1, 2e-2, nullptr, "kiln_gemm_wgw<false, true>(",
         "cuda -arch=sm_90a -wgmma-swizzle=128"});
}
TEST(GemmEmulateTest, DenseBFloat16RaggedWideWarpgroupMma) {
  Check(Dense(130, 1000, 104, "bfloat16", false),
        {4, 2, 1, 5e-2, nullptr, "kiln_gemm_wgw<true, false>(", "cuda -arch=sm_90a"});
}
// -wgmma-tma: the wide tile's stages filled by TMA, A and B as tensor-map
// parameters (encoded by the emulator as the runtime does at launch):
// a fused epilogue; ragged in M, N and K (k's end is the maps' bound, rows
// past M read the rows that follow, never stored); batched (the maps cover
// every batch, the tile's row coordinate crosses them).
TEST(GemmEmulateTest, DenseBiasReluFloat16WideWarpgroupMmaTma) {
  Check(Dense(128, 512, 128, "float16", true),
        {2, 1, 1, 2e-2, nullptr, "kiln_gemm_wgt<false>(", "cuda -arch=sm_90a -wgmma-tma",
         {"const __grid_constant__ kiln_tmap tm_",
          // A row's 8 outputs (and the bias along it) 16 bytes at a time.
          ") = *(const uint4*)kvo", "*(uint4*)kv0 = *(const uint4*)("}});
}
TEST(GemmEmulateTest, DenseBFloat16RaggedWideWarpgroupMmaTma) {
  Check(Dense(130, 1000, 104, "bfloat16", false),
        {4, 2, 1, 5e-2, nullptr, "kiln_gemm_wgt<true>(", "cuda -arch=sm_90a -wgmma-tma"});
}
TEST(GemmEmulateTest, BatchMatmulFloat16WideWarpgroupMmaTma) {
  Check(BatchMatmul(3, 100, 256, 64, "float16"),
        {1, 1, 3, 2e-2, nullptr, "kiln_gemm_wgt<false>(", "cuda -arch=sm_90a -wgmma-tma"});
}
// -wgmma-ws: the same, warp-specialized (a producer warpgroup issues the
// copies; 16 x 24 threads); the kernel starts by initializing the barriers
// and sending the producer off.
TEST(GemmEmulateTest, DenseBiasReluFloat16WarpSpecialized) {
  Check(Dense(128, 512, 128, "float16", true),
        {2, 1, 1, 2e-2, nullptr, "kiln_gemm_wgs<false>(", "cuda -arch=sm_90a -wgmma-ws",
         {"kiln_wgs_init();\n  if (threadIdx.y >= 16u) {\n    kiln_wgs_produce(&tm_",
          "__launch_bounds__(384)"}});
}
TEST(GemmEmulateTest, DenseBFloat16RaggedWarpSpecialized) {
  Check(Dense(130, 1000, 104, "bfloat16", false),
        {4, 2, 1, 5e-2, nullptr, "kiln_gemm_wgs<true>(", "cuda -arch=sm_90a -wgmma-ws"});
}
TEST(GemmEmulateTest, BatchMatmulFloat16WarpSpecialized) {
  Check(BatchMatmul(3, 100, 256, 64, "float16"),
        {1, 1, 3, 2e-2, nullptr, "kiln_gemm_wgs<false>(", "cuda -arch=sm_90a -wgmma-ws"});
}
// -wgmma-n=128: the 128 x 128 wgmma tile however many columns.
TEST(GemmEmulateTest, DenseFloat16NarrowWarpgroupMmaOnRequest) {
  Check(Dense(128, 512, 64, "float16", false),
        {4, 1, 1, 2e-2, nullptr, "kiln_gemm_wg<false>(", "cuda -arch=sm_90a -wgmma-n=128"});
}
TEST(GemmEmulateTest, BatchMatmulFloat16WideWarpgroupMma) {
  Check(BatchMatmul(2, 100, 256, 64, "float16"),
        {1, 1, 2, 2e-2, nullptr, "kiln_gemm_wgw<false, false>(", "cuda -arch=sm_90a"});
}
TEST(GemmEmulateTest, BatchMatmulFloat16WarpgroupMma) {
  Check(BatchMatmul(2, 128, 128, 64, "float16"),
        {1, 1, 2, 2e-2, nullptr, "kiln_gemm_wg<false>(", "cuda -arch=sm_90a"});
}
TEST(GemmEmulateTest, MatmulFloat16OnSm90aKeepsMmaSync) {
  Check(Matmul(128, 256, 64, "float16"),
        {2, 1, 1, 2e-2, nullptr, "kiln_gemm_tc<false, true, false>(", "cuda -arch=sm_90a"});
}

// Float32 GEMMs on tensor cores only when the target opts in (-tf32): their
// inputs rounded to TF32, so the tolerance is TF32's (10-bit mantissas).
TEST(GemmEmulateTest, DenseFloat32Tf32) {
  Check(Dense(128, 256, 96, "float32", false),
        {2, 1, 1, 1e-2, nullptr, "kiln_gemm_tf32<true, true>(", "cuda -arch=sm_90 -tf32"});
}
TEST(GemmEmulateTest, DenseBiasReluFloat32Tf32) {
  Check(Dense(256, 128, 64, "float32", true),
        {1, 2, 1, 1e-2, nullptr, "kiln_gemm_tf32<true, true>(", "cuda -arch=sm_80 -tf32"});
}
TEST(GemmEmulateTest, MatmulFloat32Tf32) {
  Check(Matmul(128, 128, 64), {1, 1, 1, 1e-2, nullptr, "kiln_gemm_tf32<true, false>(", "cuda -arch=sm_90 -tf32"});
}
TEST(GemmEmulateTest, BatchMatmulFloat32Tf32) {
  Check(BatchMatmul(2, 128, 128, 32),
        {1, 1, 2, 1e-2, nullptr, "kiln_gemm_tf32<true, true>(", "cuda -arch=sm_90 -tf32"});
}

TEST(GemmEmulateTest, MatmulFloat32TransposedATf32) {
  Check(absl::StrCat("#[version = \"0.1\"]\ndef @main(%a: Tensor[(64, 128), float32], "
                     "%b: Tensor[(64, 128), float32]) {\n  nn.matmul(%a, %b, transpose_a=true)"
                     "\n}\n"),
        {1, 1, 1, 1e-2, nullptr, "kiln_gemm_tf32<false, false>(", "cuda -arch=sm_90 -tf32"});
}

}  // namespace
}  // namespace kiln::testing
