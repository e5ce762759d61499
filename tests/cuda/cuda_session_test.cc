// File: tests/cuda/cuda_session_test.cc
//
// Sessions on cuda:0 without a GPU: the runtime's whole device path
// (runtime_c/cuda_session.c: device memory for the plan's storages, the
// parameters copied there, the module chosen for the GPU's architecture,
// host<->device copies of inputs and outputs, DLPack kDLCUDA in and out,
// launches with the artifact's launch dims, profile, debug dump, benchmark)
// driven through a fake driver (tests/cuda/fake_driver.c, opened through
// $KILN_CUDA_DRIVER) whose "device" is host memory and whose launches run
// the artifact's own CUDA C compiled for the host by g++. The outputs are
// compared with the same model's CPU artifact. Skips without NVRTC or g++.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "c_api/compiler.h"
#include "codegen_cuda/nvrtc.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "kiln/device_code_format.h"
#include "kiln/runtime.h"
#include "tests/cuda/emulate.h"
#include "tests/cuda/session_test_util.h"
#include "types/infer_type.h"

namespace kiln {
namespace {

using testing::ReadAll;
using testing::Tensor;
using testing::TakeStatus;
using testing::TempPath;

using FakeStats = KilnFakeCudaStats;

std::string ModelText() {
  std::vector<float> w(8 * 6);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(i % 7) - 0.1f;
  std::string b64 = absl::Base64Escape(
      absl::string_view(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(float)));
  return absl::StrCat(R"(#[version = "0.1"]
def @main(%x: Tensor[(4, 6), float32], %y: Tensor[(4, 8), float32]) {
  %0 = nn.dense(%x, meta[Constant][0], units=8);
  %1 = add(%0, %y);
  %2 = nn.relu(%1);
  (nn.softmax(%2, axis=1), %2)
}

#[metadata]
meta[Constant][0] = Tensor[(8, 6), float32] b64")",
                      b64, "\";\n");
}

absl::Status CompileFor(const std::string& target, const std::string& path,
                        const std::string& text = ModelText()) {
  KILN_ASSIGN_OR_RETURN(Module m, ParseModule(text, "cuda_session_test"));
  KILN_ASSIGN_OR_RETURN(Module typed, types::InferType(m));
  compiler::CompileOptions o;
  o.target = target;
  return compiler::CompileToLibrary(typed, o, path).status();
}

// The kernels of a GPU artifact built for the host, as the fake driver
// runs them (tests/cuda/emulate.h).
absl::StatusOr<std::string> BuildHostKernels(const std::string& artifact,
                                              const std::string& stem = "host_kernels") {
  const std::string so = TempPath(stem + ".so");
  KILN_RETURN_IF_ERROR(kiln::testing::BuildFakeDriverKernels(artifact, so));
  return so;
}

FakeStats* Stats() { return testing::FakeDriverStats(); }

class CudaSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!codegen_cuda::NvrtcAvailable()) GTEST_SKIP() << "kiln was built without NVRTC";
    ASSERT_NE(std::getenv("KILN_CUDA_DRIVER"), nullptr);
    gpu_ = TempPath("gpu.so");
    cpu_ = TempPath("cpu.so");
    ASSERT_TRUE(CompileFor("cuda -arch=sm_90", gpu_).ok());
    ASSERT_TRUE(CompileFor("llvm", cpu_).ok());
    absl::StatusOr<std::string> so = BuildHostKernels(gpu_);
    if (so.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << so.status();
    ASSERT_TRUE(so.ok()) << so.status();
    setenv("KILN_FAKE_CUDA_KERNELS", so->c_str(), 1);
    for (size_t i = 0; i < x_.size(); ++i) x_[i] = std::sin(0.7f * static_cast<float>(i));
    for (size_t i = 0; i < y_.size(); ++i) y_[i] = 0.3f * std::cos(1.3f * static_cast<float>(i));
    ASSERT_EQ(TakeStatus(kiln_artifact_load(gpu_.c_str(), &gpu_art_)), "");
    ASSERT_EQ(TakeStatus(kiln_artifact_load(cpu_.c_str(), &cpu_art_)), "");
  }
  void TearDown() override {
    kiln_artifact_release(gpu_art_);
    kiln_artifact_release(cpu_art_);
  }

  // Output `i` of a run of `a` on `device` (inputs x_, y_ from CPU memory).
  std::vector<float> Run(KilnArtifact* a, DLDeviceType device, int index) {
    KilnSessionOptions o{};
    o.struct_size = sizeof o;
    o.num_threads = 1;
    o.device_type = device;
    KilnSession* s = nullptr;
    EXPECT_EQ(TakeStatus(kiln_session_create(a, &o, &s)), "");
    if (s == nullptr) return {};
    DLTensor x = Tensor(x_.data(), xs_), y = Tensor(y_.data(), ys_);
    EXPECT_EQ(TakeStatus(kiln_session_set_input(s, "x", &x)), "");
    EXPECT_EQ(TakeStatus(kiln_session_set_input(s, "y", &y)), "");
    EXPECT_EQ(TakeStatus(kiln_session_run(s)), "");
    std::vector<float> out(32);
    int64_t shape[2] = {4, 8};
    DLTensor dst = Tensor(out.data(), shape);
    EXPECT_EQ(TakeStatus(kiln_session_copy_output(s, index, &dst)), "");
    kiln_session_release(s);
    return out;
  }

  std::string gpu_, cpu_;
  KilnArtifact* gpu_art_ = nullptr;
  KilnArtifact* cpu_art_ = nullptr;
  std::vector<float> x_ = std::vector<float>(24), y_ = std::vector<float>(32);
  int64_t xs_[2] = {4, 6}, ys_[2] = {4, 8};
};

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-4 * std::fabs(want[i])) << "element " << i;
  }
}

TEST_F(CudaSessionTest, RunsLikeTheCpuArtifact) {
  FakeStats* stats = Stats();
  ASSERT_NE(stats, nullptr);
  const long long launches = stats->launches;
  for (int out = 0; out < 2; ++out) {
    std::vector<float> want = Run(cpu_art_, kDLCPU, out);
    std::vector<float> got = Run(gpu_art_, kDLCUDA, out);
    ExpectClose(got, want);
  }
  // Softmax rows sum to 1: the reference is not all zeros.
  float row = 0;
  for (int j = 0; j < 8; ++j) row += Run(cpu_art_, kDLCPU, 0)[j];
  EXPECT_NEAR(row, 1.0f, 1e-5);
  EXPECT_EQ(stats->launches - launches, 4);  // 2 runs of 2 kernels
  // sm_90 with a cubin for sm_90: the cubin (when ptxas ran), else the PTX.
  const bool cubin = std::string(kiln_artifact_device_code_json(gpu_art_)).find("cubin_arch") !=
                     std::string::npos;
  EXPECT_EQ(stats->last_image_is_cubin, cubin ? 1 : 0);
  EXPECT_EQ(stats->live_allocations, 0);  // every session's memory freed
}

TEST_F(CudaSessionTest, DeviceTensorsInAndOut) {
  FakeStats* stats = Stats();
  ASSERT_NE(stats, nullptr);
  KilnSessionOptions o{};
  o.struct_size = sizeof o;
  o.device_type = kDLCUDA;
  KilnSession* s = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_create(gpu_art_, &o, &s)), "");
  // The fake's device memory is host memory: a kDLCUDA tensor may point at
  // any host buffer.
  DLTensor x = Tensor(x_.data(), xs_, kDLCUDA, 0), y = Tensor(y_.data(), ys_, kDLCUDA, 0);
  ASSERT_EQ(TakeStatus(kiln_session_set_input(s, "x", &x)), "");          // device to device
  ASSERT_EQ(TakeStatus(kiln_session_set_input_zero_copy(s, "y", &y)), "");  // in place
  DLTensor cpu_y = Tensor(y_.data(), ys_);
  std::string e = TakeStatus(kiln_session_set_input_zero_copy(s, "y", &cpu_y));
  EXPECT_NE(e.find("a zero-copy input must be device memory (kDLCUDA)"), std::string::npos) << e;
  DLTensor other = Tensor(x_.data(), xs_, kDLCUDA, 1);
  e = TakeStatus(kiln_session_set_input(s, "x", &other));
  EXPECT_NE(e.find("the session runs on cuda:0"), std::string::npos) << e;
  DLTensor metal = Tensor(x_.data(), xs_, kDLMetal, 0);
  e = TakeStatus(kiln_session_set_input(s, "x", &metal));
  EXPECT_NE(e.find("got device_type 8"), std::string::npos) << e;
  ASSERT_EQ(TakeStatus(kiln_session_set_input_zero_copy(s, "y", &y)), "");
  ASSERT_EQ(TakeStatus(kiln_session_run(s)), "");
  const std::vector<float> want = Run(cpu_art_, kDLCPU, 0);

  const DLTensor* view = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_get_output(s, 0, &view)), "");
  EXPECT_EQ(view->device.device_type, kDLCUDA);
  EXPECT_EQ(view->device.device_id, 0);
  ExpectClose(std::vector<float>(static_cast<const float*>(view->data),
                                 static_cast<const float*>(view->data) + 32),
              want);
  DLManagedTensor* m = nullptr;
  const long long live = stats->live_allocations;
  ASSERT_EQ(TakeStatus(kiln_session_get_output_dlpack(s, 0, &m)), "");
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_NE(m->dl_tensor.data, view->data);  // its own memory
  EXPECT_EQ(stats->live_allocations, live + 1);
  // Outlives the session.
  kiln_session_release(s);
  ExpectClose(std::vector<float>(static_cast<const float*>(m->dl_tensor.data),
                                 static_cast<const float*>(m->dl_tensor.data) + 32),
              want);
  m->deleter(m);
  EXPECT_EQ(stats->live_allocations, 0);
}

TEST_F(CudaSessionTest, ProfileDebugDumpAndBenchmark) {
  KilnSessionOptions o{};
  o.struct_size = sizeof o;
  o.device_type = kDLCUDA;
  KilnSession* s = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_create(gpu_art_, &o, &s)), "");
  DLTensor x = Tensor(x_.data(), xs_), y = Tensor(y_.data(), ys_);
  ASSERT_EQ(TakeStatus(kiln_session_set_input(s, "x", &x)), "");
  ASSERT_EQ(TakeStatus(kiln_session_set_input(s, "y", &y)), "");
  KilnProfile* p = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_profile(s, &p)), "");
  EXPECT_EQ(kiln_profile_num_nodes(p), 2);
  kiln_profile_release(p);
  const std::string dir = TempPath("dump");
  ASSERT_EQ(TakeStatus(kiln_session_debug_dump(s, dir.c_str())), "");
  struct stat st;
  EXPECT_EQ(stat((dir + "/tensors/x__0.npy").c_str(), &st), 0);
  // The softmax node's output, copied from the device.
  {
    std::string npy;
    for (const char* n : {"/tensors/fused_nn_softmax__0.npy"}) npy = ReadAll(dir + n);
    ASSERT_GT(npy.size(), 128u);
    const float* v = reinterpret_cast<const float*>(npy.data() + npy.size() - 32 * sizeof(float));
    ExpectClose(std::vector<float>(v, v + 32), Run(cpu_art_, kDLCPU, 0));
  }
  KilnBenchmarkOptions b{};
  b.struct_size = sizeof b;
  b.repeat = 3;
  char* line = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_benchmark(s, &b, nullptr, &line)), "");
  EXPECT_NE(std::string(line).find("\"hardware\":\"kiln fake GPU 0 (host)\""), std::string::npos) << line;
  kiln_free(line);
  kiln_session_release(s);
}

TEST_F(CudaSessionTest, DeviceErrorsAreStatuses) {
  FakeStats* stats = Stats();
  ASSERT_NE(stats, nullptr);
  KilnSessionOptions o{};
  o.struct_size = sizeof o;
  o.device_type = kDLCUDA;
  KilnSession* s = nullptr;
  auto create = [&]() { return TakeStatus(kiln_session_create(gpu_art_, &o, &s)); };
  // A newer GPU: the PTX, compiled by the driver.
  setenv("KILN_FAKE_CUDA_SM", "100", 1);
  ASSERT_EQ(create(), "");
  EXPECT_EQ(stats->last_image_is_cubin, 0);
  kiln_session_release(s);
  // An older GPU: refused, naming both.
  setenv("KILN_FAKE_CUDA_SM", "80", 1);
  std::string e = create();
  EXPECT_NE(e.find("UNIMPLEMENTED"), std::string::npos) << e;
  EXPECT_NE(e.find("compiled for compute_90"), std::string::npos) << e;
  EXPECT_NE(e.find("is sm_80"), std::string::npos) << e;
  unsetenv("KILN_FAKE_CUDA_SM");
  // Out of device memory.
  setenv("KILN_FAKE_CUDA_MEMORY", "64", 1);
  e = create();
  EXPECT_NE(e.find("RESOURCE_EXHAUSTED"), std::string::npos) << e;
  EXPECT_NE(e.find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << e;
  unsetenv("KILN_FAKE_CUDA_MEMORY");
  // No such device.
  o.device_id = 3;
  e = create();
  EXPECT_NE(e.find("no CUDA device 3 (the driver sees 1 device)"), std::string::npos) << e;
  o.device_id = 0;
  // The host kernels lack the entry: the module loads, the function does not.
  setenv("KILN_FAKE_CUDA_KERNELS", "/nonexistent.so", 1);
  e = create();
  EXPECT_NE(e.find("cuModuleLoadData"), std::string::npos) << e;
  EXPECT_EQ(s, nullptr);
  EXPECT_EQ(stats->live_allocations, 0);  // nothing leaked by the failures
}

// A float16 GEMM of 128x128x32 multiples with a fused epilogue: on cuda its
// kernel is the pipelined tensor-core tile (cp.async, ldmatrix, mma.sync;
// codegen_cuda/tensor_core.h), run here by the fake driver through the
// user's path (artifact, session on cuda:0, fp16 DLPack tensors in and out)
// and compared with the CPU artifact's outputs.
uint16_t Half(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
float FromHalf(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return static_cast<float>(h);
}

// A float16 input of a session: its name, shape and values.
struct HalfInput {
  const char* name;
  std::vector<int64_t> shape;
  std::vector<uint16_t> data;
};

DLTensor HalfTensor(void* data, std::vector<int64_t>* shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape->size());
  t.dtype = {kDLFloat, 16, 1};
  t.shape = shape->data();
  return t;
}

// Runs the artifact at `path` once in a session on `device` (CPU tensors in
// and out: on cuda:0 the session copies them), returning output 0.
std::vector<uint16_t> RunHalf(const std::string& path, DLDeviceType device,
                              std::vector<HalfInput>& ins, std::vector<int64_t> out_shape) {
  int64_t n = 1;
  for (int64_t d : out_shape) n *= d;
  std::vector<uint16_t> out(static_cast<size_t>(n), 0);
  KilnArtifact* a = nullptr;
  EXPECT_EQ(TakeStatus(kiln_artifact_load(path.c_str(), &a)), "");
  if (a == nullptr) return out;
  KilnSessionOptions o{};
  o.struct_size = sizeof o;
  o.num_threads = 1;
  o.device_type = device;
  KilnSession* s = nullptr;
  EXPECT_EQ(TakeStatus(kiln_session_create(a, &o, &s)), "");
  if (s != nullptr) {
    for (HalfInput& in : ins) {
      DLTensor t = HalfTensor(in.data.data(), &in.shape);
      EXPECT_EQ(TakeStatus(kiln_session_set_input(s, in.name, &t)), "");
    }
    EXPECT_EQ(TakeStatus(kiln_session_run(s)), "");
    DLTensor dst = HalfTensor(out.data(), &out_shape);
    EXPECT_EQ(TakeStatus(kiln_session_copy_output(s, 0, &dst)), "");
    kiln_session_release(s);
  }
  kiln_artifact_release(a);
  return out;
}

// `text` compiled for `target` (its kernel holding `call`) and for the CPU,
// both run on the same inputs: cuda:0 (the fake driver running the
// artifact's own CUDA C) against the CPU artifact, within 1e-2 + 1e-2 |e|;
// at least `min_positive` outputs above zero (relu leaves a real share: the
// reference is not all zeros).
void RunsLikeTheCpuArtifact(const std::string& text, const char* target, const char* call,
                            const char* stem, std::vector<HalfInput> ins,
                            const std::vector<int64_t>& out_shape, int min_positive) {
  if (!codegen_cuda::NvrtcAvailable()) GTEST_SKIP() << "kiln was built without NVRTC";
  ASSERT_NE(std::getenv("KILN_CUDA_DRIVER"), nullptr);
  const std::string gpu = TempPath(absl::StrCat(stem, "_gpu.so"));
  const std::string cpu = TempPath(absl::StrCat(stem, "_cpu.so"));
  absl::Status st = CompileFor(target, gpu, text);
  ASSERT_TRUE(st.ok()) << st;
  st = CompileFor("llvm", cpu, text);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_NE(ReadAll(gpu).find(call), std::string::npos);
  absl::StatusOr<std::string> so = BuildHostKernels(gpu, absl::StrCat(stem, "_host_kernels"));
  if (so.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << so.status();
  ASSERT_TRUE(so.ok()) << so.status();
  setenv("KILN_FAKE_CUDA_KERNELS", so->c_str(), 1);
  const std::vector<uint16_t> want = RunHalf(cpu, kDLCPU, ins, out_shape);
  const std::vector<uint16_t> got = RunHalf(gpu, kDLCUDA, ins, out_shape);
  int positive = 0, wrong = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const float g = FromHalf(got[i]), e = FromHalf(want[i]);
    positive += e > 0.0f;
    if (std::fabs(g - e) > 1e-2f + 1e-2f * std::fabs(e) && ++wrong <= 5) {
      ADD_FAILURE() << "element " << i << ": " << g << ", want " << e;
    }
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(positive, min_positive);
}

std::vector<uint16_t> Wave(size_t n, float scale, float freq, bool cosine = false) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    const float a = freq * static_cast<float>(i);
    v[i] = Half(scale * (cosine ? std::cos(a) : std::sin(a)));
  }
  return v;
}

std::vector<uint16_t> Bias(size_t n) {
  std::vector<uint16_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = Half(0.01f * static_cast<float>(i % 17) - 0.08f);
  return b;
}

// A float16 dense + bias + relu compiled for `target` (its GEMM in the tile
// whose call `call` names) on cuda:0 against the CPU artifact.
void GemmRunsLikeTheCpuArtifact(const char* target, const char* call, const char* stem) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(128, 96), float16], %w: Tensor[(256, 96), float16], %b: Tensor[(256), float16]) {
  nn.relu(nn.bias_add(nn.dense(%x, %w, units=256), %b))
}
)";
  RunsLikeTheCpuArtifact(text, target, call, stem,
                         {{"x", {128, 96}, Wave(128 * 96, 1.0f, 0.37f)},
                          {"w", {256, 96}, Wave(256 * 96, 0.2f, 0.11f, true)},
                          {"b", {256}, Bias(256)}},
                         {128, 256}, 1000);
}

TEST(CudaSessionFp16Test, TensorCoreGemmRunsLikeTheCpuArtifact) {
  GemmRunsLikeTheCpuArtifact("cuda -arch=sm_90", "kiln_gemm_tc<false, true, true>(", "gemm_tc");
}

// sm_90a: the same GEMM on Hopper's wgmma (the fake GPU is sm_90, so the
// session loads the artifact's sm_90a cubin); 256 columns, so the wide tile,
// whose 192 KiB of stages are dynamic shared memory (the fake driver refuses
// its launch unless the session raised the function's limit first).
TEST(CudaSessionFp16Test, WarpgroupMmaGemmRunsLikeTheCpuArtifact) {
  GemmRunsLikeTheCpuArtifact("cuda -arch=sm_90a", "kiln_gemm_wgw<false, false>(", "gemm_wg");
  // On any GPU but an sm_90 one the sm_90a artifact is refused, naming both
  // (its PTX is not forward compatible as compute_90's is).
  KilnArtifact* a = nullptr;
  ASSERT_EQ(TakeStatus(kiln_artifact_load(TempPath("gemm_wg_gpu.so").c_str(), &a)), "");
  KilnSessionOptions o{};
  o.struct_size = sizeof o;
  o.device_type = kDLCUDA;
  for (const char* sm : {"100", "80"}) {
    setenv("KILN_FAKE_CUDA_SM", sm, 1);
    KilnSession* s = nullptr;
    const std::string e = TakeStatus(kiln_session_create(a, &o, &s));
    EXPECT_EQ(s, nullptr);
    EXPECT_NE(e.find("UNIMPLEMENTED"), std::string::npos) << e;
    EXPECT_NE(e.find("compiled for sm_90a"), std::string::npos) << e;
    EXPECT_NE(e.find(absl::StrCat("is sm_", sm)), std::string::npos) << e;
  }
  unsetenv("KILN_FAKE_CUDA_SM");
  kiln_artifact_release(a);
}

// -wgmma-tma: the wide tile's stages filled by TMA, through the session:
// it encodes the two tensor maps for the device addresses of x and w (the
// fake driver's layout), which the emulated copies read (a map the session
// did not encode, or encoded for the wrong buffer, fails the launch or the
// values).
TEST(CudaSessionFp16Test, TmaWarpgroupMmaGemmRunsLikeTheCpuArtifact) {
  GemmRunsLikeTheCpuArtifact("cuda -arch=sm_90a -wgmma-tma", "kiln_gemm_wgt<false>(", "gemm_wgt");
}
// -wgmma-ws: the warp-specialized form (16 x 24 threads per block).
TEST(CudaSessionFp16Test, WarpSpecializedGemmRunsLikeTheCpuArtifact) {
  GemmRunsLikeTheCpuArtifact("cuda -arch=sm_90a -wgmma-ws", "kiln_gemm_wgs<false>(", "gemm_wgs");
}

// ONNX MatMul's constant weights ([K, N], n-major) on sm_90a: AlterOpLayout
// makes the matmul a dense by the transposed constant (folded), so both
// operands are k-major and the GEMM runs on wgmma; against the CPU artifact.
TEST(CudaSessionFp16Test, MatmulByConstantWeightsRunsOnWarpgroupMma) {
  const std::vector<uint16_t> w = Wave(96 * 256, 0.2f, 0.11f, true);
  const std::string b64 = absl::Base64Escape(
      absl::string_view(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(uint16_t)));
  const std::string text = absl::StrCat(R"(#[version = "0.1"]
def @main(%x: Tensor[(128, 96), float16], %b: Tensor[(256), float16]) {
  nn.relu(nn.bias_add(nn.matmul(%x, meta[Constant][0]), %b))
}

#[metadata]
meta[Constant][0] = Tensor[(96, 256), float16] b64")",
                                        b64, "\";\n");
  RunsLikeTheCpuArtifact(text, "cuda -arch=sm_90a", "kiln_gemm_wgw<false, false>(", "matmul_wg",
                         {{"x", {128, 96}, Wave(128 * 96, 1.0f, 0.37f)}, {"b", {256}, Bias(256)}},
                         {128, 256}, 1000);
}

// A float16 conv + bias + relu (NCHW, 3x3, padding 1, ragged channels and
// pixels): on cuda the implicit GEMM on tensor cores (kiln_conv_nchw_tc),
// through the user's path, against the CPU artifact.
void ConvRunsLikeTheCpuArtifact(const char* target, const char* call, const char* stem) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(1, 16, 14, 14), float16], %w: Tensor[(24, 16, 3, 3), float16], %b: Tensor[(24), float16]) {
  nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1]), %b))
}
)";
  RunsLikeTheCpuArtifact(text, target, call, stem,
                         {{"x", {1, 16, 14, 14}, Wave(16 * 14 * 14, 1.0f, 0.37f)},
                          {"w", {24, 16, 3, 3}, Wave(24 * 16 * 9, 0.2f, 0.11f, true)},
                          {"b", {24}, Bias(24)}},
                         {1, 24, 14, 14}, 1000);
}

TEST(CudaSessionFp16Test, TensorCoreConvRunsLikeTheCpuArtifact) {
  ConvRunsLikeTheCpuArtifact("cuda -arch=sm_90", "kiln_conv_nchw_tc<unsigned short, false, ",
                             "conv_tc");
}

// sm_90a: the same conv on Hopper's warpgroup MMA (kiln_conv_nchw_wg).
TEST(CudaSessionFp16Test, WarpgroupMmaConvRunsLikeTheCpuArtifact) {
  ConvRunsLikeTheCpuArtifact("cuda -arch=sm_90a", "kiln_conv_nchw_wg<false, ", "conv_wg");
}

}  // namespace
}  // namespace kiln
