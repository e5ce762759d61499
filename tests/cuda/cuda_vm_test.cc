// File: tests/cuda/cuda_vm_test.cc
//
// VM artifacts on cuda:0 without a GPU (docs/vm.md, "On a GPU"): a model
// that needs the VM (control flow, recursion, symbolic or value-dependent
// shapes) compiled for "cuda -arch=sm_90" runs its static fused kernels as
// launches of the artifact's device code and the rest (shape functions,
// kernels with symbolic shapes) on the host, the VM copying each tensor to
// where the next reader needs it. The fake driver (tests/cuda/fake_driver.c,
// $KILN_CUDA_DRIVER) runs the artifact's own CUDA C compiled for the host, so
// a tensor read from the wrong side (stale device or host bytes) shows up as
// a wrong value. Every output is compared with the same model's CPU
// artifact, through the public runtime API. Skips without NVRTC or g++.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "c_api/compiler.h"
#include "codegen_cuda/nvrtc.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "kiln/runtime.h"
#include "tests/cuda/emulate.h"
#include "tests/cuda/session_test_util.h"
#include "types/infer_type.h"

namespace kiln {
namespace {

using testing::TakeStatus;
using testing::TempPath;

using FakeStats = KilnFakeCudaStats;

FakeStats* Stats() { return testing::FakeDriverStats(); }

absl::Status CompileFor(const std::string& text, const std::string& target, const std::string& path) {
  KILN_ASSIGN_OR_RETURN(Module m, ParseModule(text, "cuda_vm_test"));
  KILN_ASSIGN_OR_RETURN(Module typed, types::InferType(m));
  compiler::CompileOptions o;
  o.target = target;
  return compiler::CompileToLibrary(typed, o, path).status();
}

// An input: dtype, shape and its bytes.
struct Value {
  DLDataType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

Value F32(std::vector<int64_t> shape, float scale) {
  Value v{{kDLFloat, 32, 1}, std::move(shape), {}};
  int64_t n = 1;
  for (int64_t d : v.shape) n *= d;
  std::vector<float> f(static_cast<size_t>(n));
  for (size_t i = 0; i < f.size(); ++i) f[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.2f);
  v.bytes.resize(f.size() * sizeof(float));
  if (!f.empty()) std::memcpy(v.bytes.data(), f.data(), v.bytes.size());
  return v;
}

// A float32 value as float16 (round to nearest even).
void ToHalf(Value* v) {
  const size_t n = v->bytes.size() / 4;
  std::vector<uint8_t> out(2 * n);
  for (size_t i = 0; i < n; ++i) {
    float f;
    std::memcpy(&f, v->bytes.data() + 4 * i, 4);
    const _Float16 h = static_cast<_Float16>(f);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  v->bytes = std::move(out);
  v->dtype = {kDLFloat, 16, 1};
}

template <typename T>
Value Scalar(DLDataType dtype, T x) {
  Value v{dtype, {}, std::vector<uint8_t>(sizeof(T))};
  std::memcpy(v.bytes.data(), &x, sizeof(T));
  return v;
}

// Sets input i of session `s` to values[i] (CPU memory); "" or the status.
std::string SetInputs(KilnSession* s, const std::vector<Value>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    std::vector<int64_t> shape = values[i].shape;
    DLTensor t{};
    t.data = const_cast<uint8_t*>(values[i].bytes.data());
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = values[i].dtype;
    t.shape = shape.data();
    std::string e = TakeStatus(kiln_session_set_input_index(s, static_cast<int32_t>(i), &t));
    if (!e.empty()) return e;
  }
  return "";
}

// Artifact `path` loaded and a session on cuda:0 with `inputs` set.
std::string OpenOnDevice(const std::string& path, const std::vector<Value>& inputs, KilnArtifact** a,
                         KilnSession** s) {
  std::string e = TakeStatus(kiln_artifact_load(path.c_str(), a));
  if (!e.empty()) return e;
  KilnSessionOptions o{};
  o.struct_size = sizeof o;
  o.device_type = kDLCUDA;
  e = TakeStatus(kiln_session_create(*a, &o, s));
  return e.empty() ? SetInputs(*s, inputs) : e;
}

// The artifact `path` run on `device` once per input set; every output of
// every run (shape then bytes), or a failure's status in `error`.
std::vector<Value> RunArtifact(const std::string& path, DLDeviceType device, const std::vector<Value>& inputs,
                       std::string* error) {
  KilnArtifact* a = nullptr;
  *error = TakeStatus(kiln_artifact_load(path.c_str(), &a));
  if (!error->empty()) return {};
  KilnSessionOptions o{};
  o.struct_size = sizeof o;
  o.num_threads = 1;
  o.device_type = device;
  KilnSession* s = nullptr;
  *error = TakeStatus(kiln_session_create(a, &o, &s));
  std::vector<Value> out;
  if (error->empty()) {
    *error = SetInputs(s, inputs);
    if (error->empty()) *error = TakeStatus(kiln_session_run(s));
    for (int32_t k = 0; error->empty() && k < kiln_artifact_num_outputs(a); ++k) {
      const DLTensor* t = nullptr;
      *error = TakeStatus(kiln_session_get_output(s, k, &t));
      if (!error->empty()) break;
      EXPECT_EQ(t->device.device_type, kDLCPU);  // a VM session's outputs are host memory
      Value v{t->dtype, std::vector<int64_t>(t->shape, t->shape + t->ndim), {}};
      size_t bytes = (t->dtype.bits + 7) / 8;
      for (int64_t d : v.shape) bytes *= static_cast<size_t>(d);
      const auto* p = static_cast<const uint8_t*>(t->data) + t->byte_offset;
      v.bytes.assign(p, p + bytes);
      out.push_back(std::move(v));
    }
  }
  kiln_session_release(s);
  kiln_artifact_release(a);
  return out;
}

void ExpectSame(const std::vector<Value>& got, const std::vector<Value>& want, double atol = 1e-5,
                double rtol = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].shape, want[o].shape) << "output " << o;
    ASSERT_EQ(got[o].bytes.size(), want[o].bytes.size()) << "output " << o;
    if (want[o].dtype.code == kDLFloat && want[o].dtype.bits == 16) {
      // float16 outputs: the device and the CPU may round an fp32 sum
      // differently once (both accumulate in float32).
      const size_t n = want[o].bytes.size() / 2;
      for (size_t i = 0; i < n; ++i) {
        _Float16 g, w;
        std::memcpy(&g, got[o].bytes.data() + 2 * i, 2);
        std::memcpy(&w, want[o].bytes.data() + 2 * i, 2);
        const float gf = static_cast<float>(g), wf = static_cast<float>(w);
        EXPECT_NEAR(gf, wf, 2e-2 + 2e-2 * std::fabs(wf)) << "output " << o << " element " << i;
      }
    } else if (want[o].dtype.code == kDLFloat && want[o].dtype.bits == 32) {
      const size_t n = want[o].bytes.size() / 4;
      for (size_t i = 0; i < n; ++i) {
        float g, w;
        std::memcpy(&g, got[o].bytes.data() + 4 * i, 4);
        std::memcpy(&w, want[o].bytes.data() + 4 * i, 4);
        EXPECT_NEAR(g, w, atol + rtol * std::fabs(w)) << "output " << o << " element " << i;
      }
    } else {
      EXPECT_EQ(got[o].bytes, want[o].bytes) << "output " << o;
    }
  }
}

class CudaVmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!codegen_cuda::NvrtcAvailable()) GTEST_SKIP() << "kiln was built without NVRTC";
    ASSERT_NE(std::getenv("KILN_CUDA_DRIVER"), nullptr);
    stats_ = Stats();
    ASSERT_NE(stats_, nullptr);
  }

  // Compiles `text` for the GPU and the CPU; the GPU artifact's kernels
  // built for the fake driver. False (after a skip or a failure) otherwise.
  bool Compile(const std::string& text, const std::string& stem,
               const char* target = "cuda -arch=sm_90") {
    gpu_ = TempPath(stem + "_gpu.so");
    cpu_ = TempPath(stem + "_cpu.so");
    absl::Status st = CompileFor(text, target, gpu_);
    EXPECT_TRUE(st.ok()) << st;
    absl::Status cst = CompileFor(text, "llvm", cpu_);
    EXPECT_TRUE(cst.ok()) << cst;
    if (!st.ok() || !cst.ok()) return false;
    const std::string so = TempPath(stem + "_host_kernels.so");
    absl::Status b = kiln::testing::BuildFakeDriverKernels(gpu_, so);
    if (b.code() == absl::StatusCode::kUnavailable) {
      skip_ = true;
      return false;
    }
    EXPECT_TRUE(b.ok()) << b;
    setenv("KILN_FAKE_CUDA_KERNELS", so.c_str(), 1);
    return b.ok();
  }

  // Runs both artifacts on `inputs`; the GPU one's launches.
  long long Compare(const std::vector<Value>& inputs, double atol = 1e-5, double rtol = 1e-4) {
    std::string e;
    std::vector<Value> want = RunArtifact(cpu_, kDLCPU, inputs, &e);
    EXPECT_EQ(e, "");
    const long long before = stats_->launches;
    std::vector<Value> got = RunArtifact(gpu_, kDLCUDA, inputs, &e);
    EXPECT_EQ(e, "");
    ExpectSame(got, want, atol, rtol);
    EXPECT_EQ(stats_->live_allocations, 0);  // the session freed every device block
    return stats_->launches - before;
  }

  FakeStats* stats_ = nullptr;
  std::string gpu_, cpu_;
  bool skip_ = false;
};

// Recursion and `if` over static shapes: every fused kernel is a launch, the
// loop's test (`less`) read on the host each iteration.
TEST_F(CudaVmTest, ControlFlowRunsItsKernelsOnTheDevice) {
  const std::string text = R"(#[version = "0.1"]
def @loop(%i: Tensor[(), int32], %x: Tensor[(4, 8), float32]) -> Tensor[(4, 8), float32] {
  if (less(%i, 1)) {
    %x
  } else {
    @loop(subtract(%i, 1), add(multiply(%x, 0.5f), 1f))
  }
}

def @main(%n: Tensor[(), int32], %c: Tensor[(), bool], %x: Tensor[(4, 8), float32]) {
  %0 = @loop(%n, %x);
  if (%c) { negative(%0) } else { nn.softmax(exp(%0), axis=1) }
}
)";
  if (!Compile(text, "control_flow")) {
    if (skip_) GTEST_SKIP() << "no host compiler for the kernels";
    return;
  }
  KilnArtifact* a = nullptr;
  ASSERT_EQ(TakeStatus(kiln_artifact_load(gpu_.c_str(), &a)), "");
  const std::string json = kiln_artifact_device_code_json(a);
  kiln_artifact_release(a);
  EXPECT_NE(json.find("\"kernels\""), std::string::npos) << json;
  EXPECT_NE(json.find("softmax"), std::string::npos) << json;  // a device kernel
  long long previous = -1;
  for (int32_t n : {0, 1, 5}) {
    for (bool c : {false, true}) {
      SCOPED_TRACE(absl::StrCat("n=", n, " c=", c));
      const long long launches =
          Compare({Scalar<int32_t>({kDLInt, 32, 1}, n), Scalar<uint8_t>(DLDataType{6, 8, 1}, c ? 1 : 0),
                   F32({4, 8}, 2.0f)});
      EXPECT_GT(launches, 0);
      // Each iteration launches the same kernels again.
      if (!c && previous >= 0) {
        EXPECT_GT(launches, previous);
      }
      if (!c) previous = launches;
    }
  }
}

// A symbolic batch: the kernels with symbolic shapes are launched with a
// grid computed from their arguments' extents (DEVICE_CODE version 2), a
// static kernel reads ShapeOf's host tensor on the device; any batch, an
// empty one too (a grid of 0 blocks: no launch).
TEST_F(CudaVmTest, SymbolicShapesMixHostAndDeviceKernels) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(?, 6), float32], %y: Tensor[(6,), float32]) {
  %0 = nn.relu(add(%x, %y));
  %1 = cast(shape_of(%x), dtype="float32");
  (%0, multiply(%1, 2f), sum(%0, axis=[1]))
}
)";
  if (!Compile(text, "symbolic")) {
    if (skip_) GTEST_SKIP() << "no host compiler for the kernels";
    return;
  }
  KilnArtifact* a = nullptr;
  ASSERT_EQ(TakeStatus(kiln_artifact_load(gpu_.c_str(), &a)), "");
  const std::string json = kiln_artifact_device_code_json(a);
  kiln_artifact_release(a);
  EXPECT_NE(json.find("\"symbolic_launch\": true, \"shape_vars\": 1"), std::string::npos) << json;
  long long launches_at_1 = -1;
  for (int64_t n : {1, 3, 17, 300, 0}) {
    SCOPED_TRACE(absl::StrCat("n=", n));
    const long long launches = Compare({F32({n, 6}, 1.0f), F32({6}, 0.5f)});
    if (n == 1) launches_at_1 = launches;
    // relu(add), sum over the rows and the shape's multiply: every kernel
    // on the device, one launch each whatever the batch (none empty).
    if (n > 0) {
      EXPECT_EQ(launches, launches_at_1);
      EXPECT_GE(launches, 2);
    } else {
      EXPECT_LT(launches, launches_at_1);  // the [0, 6] kernels launch nothing
    }
  }
}

// A symbolic batch whose rows are independent runs the static GPU
// schedules of one row, a block row per batch row (lowering/vm/
// batch_split.h, codegen_cuda's kiln.batch_z): a float16 NCHW conv on the
// tensor-core implicit-GEMM tile, a float16 dense over [N, 128, 64] on the
// GEMM tile, a softmax over rows, each block's pointers moved to its row.
TEST_F(CudaVmTest, SymbolicBatchRunsTheStaticSchedulesPerRow) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 16, 14, 14), float16], %w: Tensor[(24, 16, 3, 3), float16],
          %a: Tensor[(N, 128, 64), float16], %v: Tensor[(128, 64), float16]) {
  %0 = nn.relu(nn.conv2d(%x, %w, padding=[1, 1]));
  %1 = nn.dense(%a, %v, units=128);
  (%0, nn.softmax(cast(%1, dtype="float32"), axis=-1))
}
)";
  if (!Compile(text, "batch_rows")) {
    if (skip_) GTEST_SKIP() << "no host compiler for the kernels";
    return;
  }
  const std::string bytes = [&] {
    std::ifstream f(gpu_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  EXPECT_NE(bytes.find("+= (long long)blockIdx.z * 3136LL;"), std::string::npos);  // x: 16*14*14
  EXPECT_NE(bytes.find("kiln_conv_nchw_tc<"), std::string::npos);  // the tensor-core conv
  EXPECT_NE(bytes.find("kiln_gemm_tc<"), std::string::npos);       // the tensor-core GEMM tile
  for (int64_t n : {1, 3}) {
    SCOPED_TRACE(absl::StrCat("n=", n));
    std::vector<Value> in = {F32({n, 16, 14, 14}, 1.0f), F32({24, 16, 3, 3}, 0.3f),
                             F32({n, 128, 64}, 1.0f), F32({128, 64}, 0.2f)};
    for (Value& v : in) ToHalf(&v);
    // The softmax of float16 logits: one rounding of a logit apart.
    EXPECT_GT(Compare(in, 1e-3, 1e-2), 0);
  }
}

// The same on sm_90a with 256 columns: the batch rows' GEMM on the wide
// wgmma tile, whose stages are dynamic shared memory (DEVICE_CODE version
// 3), launched through the VM's path (the fake driver refuses a launch above
// 48 KiB unless the session raised the function's limit).
TEST_F(CudaVmTest, SymbolicBatchRunsTheWideWgmmaTilePerRow) {
  const std::string text = R"(#[version = "0.1"]
def @main(%a: Tensor[(N, 128, 64), float16], %v: Tensor[(256, 64), float16]) {
  nn.relu(nn.dense(%a, %v, units=256))
}
)";
  if (!Compile(text, "batch_rows_wide", "cuda -arch=sm_90a")) {
    if (skip_) GTEST_SKIP() << "no host compiler for the kernels";
    return;
  }
  const std::string bytes = [&] {
    std::ifstream f(gpu_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  EXPECT_NE(bytes.find("kiln_gemm_wgw<"), std::string::npos);
  EXPECT_NE(bytes.find("+= (long long)blockIdx.z * 8192LL;"), std::string::npos);  // a: 128*64
  for (int64_t n : {1, 2}) {
    SCOPED_TRACE(absl::StrCat("n=", n));
    std::vector<Value> in = {F32({n, 128, 64}, 1.0f), F32({256, 64}, 0.2f)};
    for (Value& v : in) ToHalf(&v);
    EXPECT_GT(Compare(in, 1e-2, 1e-2), 0);
  }
}

// Two symbolic dims and an extent that is an expression of them: a
// reshape to [N * 4, S] and a concatenate to [N + N, S] run on the device
// (DEVICE_CODE extents as postfix expressions, checked at each launch).
TEST_F(CudaVmTest, ExpressionExtentsRunOnTheDevice) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 4, S), float32]) {
  %0 = reshape(%x, newshape=[-1, 0]);
  %1 = exp(%0);
  concatenate((%1, negative(%1)), axis=0)
}
)";
  if (!Compile(text, "expressions")) {
    if (skip_) GTEST_SKIP() << "no host compiler for the kernels";
    return;
  }
  KilnArtifact* a = nullptr;
  ASSERT_EQ(TakeStatus(kiln_artifact_load(gpu_.c_str(), &a)), "");
  const std::string json = kiln_artifact_device_code_json(a);
  kiln_artifact_release(a);
  EXPECT_NE(json.find("concatenate"), std::string::npos) << json;  // on the device
  for (auto [n, len] : {std::pair<int64_t, int64_t>{1, 3}, {2, 5}, {3, 1}}) {
    SCOPED_TRACE(absl::StrCat("n=", n, " s=", len));
    EXPECT_GT(Compare({F32({n, 4, len}, 1.0f)}), 0);
  }
}

// Value-dependent shapes: a device kernel's output read by a host shape
// function (dyn.reshape's new shape computed on the device), the reshaped
// tensor then read by a device kernel again.
TEST_F(CudaVmTest, DeviceOutputsReadOnTheHost) {
  const std::string text = R"(#[version = "0.1"]
def @main(%x: Tensor[(4, 6), float32], %s: Tensor[(2,), int64]) {
  %0 = add(%s, %s);
  %1 = dyn.reshape(exp(%x), %0);
  sum(%1)
}
)";
  if (!Compile(text, "dynamic")) {
    if (skip_) GTEST_SKIP() << "no host compiler for the kernels";
    return;
  }
  for (int64_t a : {1, 2, 3}) {
    SCOPED_TRACE(absl::StrCat("shape ", 2 * a, "x", 24 / (2 * a)));
    Value s{{kDLInt, 64, 1}, {2}, std::vector<uint8_t>(16)};
    const int64_t dims[2] = {a, 12 / (2 * a)};
    std::memcpy(s.bytes.data(), dims, 16);
    EXPECT_GT(Compare({F32({4, 6}, 1.0f), s}), 0);
  }
}

// The profiler on a GPU VM session: one row per kernel call (each launch
// waited for), then the VM's own row.
TEST_F(CudaVmTest, ProfileHasARowPerDeviceLaunch) {
  const std::string text = R"(#[version = "0.1"]
def @main(%c: Tensor[(), bool], %x: Tensor[(64, 64), float32]) {
  if (%c) { exp(%x) } else { nn.softmax(negative(%x), axis=1) }
}
)";
  if (!Compile(text, "profile")) {
    if (skip_) GTEST_SKIP() << "no host compiler for the kernels";
    return;
  }
  KilnArtifact* a = nullptr;
  KilnSession* s = nullptr;
  Value c = Scalar<uint8_t>(DLDataType{6, 8, 1}, 0), x = F32({64, 64}, 1.0f);
  ASSERT_EQ(OpenOnDevice(gpu_, {c, x}, &a, &s), "");
  const long long before = stats_->launches;
  KilnProfile* p = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_profile(s, &p)), "");
  const int32_t rows = kiln_profile_num_nodes(p);
  EXPECT_EQ(rows, 1 + (stats_->launches - before));  // every launch, then "vm"
  bool softmax = false;
  for (int32_t i = 0; i < rows; ++i) {
    const char* name = nullptr;
    const char* op = nullptr;
    double us = -1;
    ASSERT_EQ(TakeStatus(kiln_profile_node(p, i, &name, &op, &us)), "");
    EXPECT_GE(us, 0.0);
    softmax |= std::string(name).find("softmax") != std::string::npos;
  }
  EXPECT_TRUE(softmax);  // the else branch's kernel
  kiln_profile_release(p);
  kiln_session_release(s);
  kiln_artifact_release(a);
  EXPECT_EQ(stats_->live_allocations, 0);
}

// Failures at run time are statuses naming the kernel; the session stays
// usable.
TEST_F(CudaVmTest, DeviceFailuresAreStatuses) {
  const std::string text = R"(#[version = "0.1"]
def @main(%c: Tensor[(), bool], %x: Tensor[(64, 64), float32]) {
  if (%c) { exp(%x) } else { negative(%x) }
}
)";
  if (!Compile(text, "failures")) {
    if (skip_) GTEST_SKIP() << "no host compiler for the kernels";
    return;
  }
  KilnArtifact* a = nullptr;
  KilnSession* s = nullptr;
  Value c = Scalar<uint8_t>(DLDataType{6, 8, 1}, 1), x = F32({64, 64}, 1.0f);
  ASSERT_EQ(OpenOnDevice(gpu_, {c, x}, &a, &s), "");
  // No device block of 16 KiB: the run fails naming the kernel.
  setenv("KILN_FAKE_CUDA_MEMORY", "1024", 1);
  std::string e = TakeStatus(kiln_session_run(s));
  unsetenv("KILN_FAKE_CUDA_MEMORY");
  EXPECT_NE(e.find("RESOURCE_EXHAUSTED"), std::string::npos) << e;
  EXPECT_NE(e.find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << e;
  // The same session runs once memory is there.
  EXPECT_EQ(TakeStatus(kiln_session_run(s)), "");
  const DLTensor* y = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_get_output(s, 0, &y)), "");
  float x0, y0;
  std::memcpy(&x0, x.bytes.data(), 4);
  std::memcpy(&y0, y->data, 4);
  EXPECT_NEAR(y0, std::exp(x0), 1e-5);
  // A device tensor as an input (copied to the host, then where it is read).
  kiln_session_release(s);
  kiln_artifact_release(a);
  EXPECT_EQ(stats_->live_allocations, 0);
}

}  // namespace
}  // namespace kiln
