// File: tests/cuda/cuda_dynamic_shared_test.cc
//
// Dynamic shared memory (DEVICE_CODE version 3, docs/artifact.md): a kernel
// whose block needs more than CUDA's 48 KiB of static shared memory takes it
// as `extern __shared__`, requested at every launch. Here a model's kernels
// are given dynamic shared memory (CudaKernel::dynamic_shared_bytes, as the
// code generator sets it) and the artifact is written as c_api/compiler.cc
// writes a GPU artifact: the section is version 3 only then (versions 1 and
// 2 unchanged otherwise), reads back with the bytes, and a corrupted v3
// record is refused naming the kernel and the offset. Sessions on cuda:0
// through the fake driver (tests/cuda/fake_driver.c, which refuses a launch
// asking for more than 48 KiB unless cuFuncSetAttribute raised the
// function's limit, as CUDA does) launch it; a GPU whose opt-in limit is
// smaller refuses the session, naming the kernel, its bytes and the limit.
// Skips without NVRTC or g++.
#include <dlfcn.h>

#include <algorithm>
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
#include "codegen_cuda/compile.h"
#include "codegen_cuda/device_code.h"
#include "codegen_cuda/nvrtc.h"
#include "codegen_llvm/codegen_llvm.h"
#include "codegen_llvm/export.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "kiln/artifact_writer.h"
#include "kiln/device_code_format.h"
#include "kiln/runtime.h"
#include "lowering/graph_plan.h"
#include "tests/cuda/emulate.h"
#include "tests/cuda/session_test_util.h"
#include "types/infer_type.h"

namespace kiln {
namespace {

using testing::DenseAddReluSoftmaxText;
using testing::DeviceCodeAt;
using testing::FakeDriver;
using testing::Rd32;
using testing::LoadMutant;
using testing::Rd64;
using testing::ReadAll;
using testing::Section;
using testing::Tensor;
using testing::TakeStatus;
using testing::TempPath;
using testing::WriteSealed;
using testing::Wr32;
using testing::Wr64;

using FakeStats = KilnFakeCudaStats;

constexpr uint32_t kBig = 100 * 1024;  // above 48 KiB: the function must opt in
constexpr uint32_t kSmall = 4096;      // within 48 KiB: requested, no opt-in

absl::StatusOr<Module> Typed(const std::string& text) {
  KILN_ASSIGN_OR_RETURN(Module m, ParseModule(text, "cuda_dynamic_shared_test"));
  return types::InferType(m);
}

// The model compiled for sm_90 as CompileToLibrary compiles it, kernel i
// given dynamic[i] bytes of dynamic shared memory: the kernels (their names
// and static shared memory).
absl::StatusOr<std::vector<codegen_cuda::CudaKernel>> CompileWithDynamicShared(
    const std::string& path, const std::vector<int64_t>& dynamic) {
  KILN_ASSIGN_OR_RETURN(Module typed, Typed(DenseAddReluSoftmaxText()));
  compiler::CompileOptions o;
  o.target = "cuda -arch=sm_90";
  KILN_ASSIGN_OR_RETURN(Module fused, compiler::OptimizeForLowering(typed, o));
  KILN_ASSIGN_OR_RETURN(codegen_cuda::CudaTarget cuda, codegen_cuda::ParseCudaTarget(o.target));
  KILN_ASSIGN_OR_RETURN(codegen_cuda::CudaModule cm, codegen_cuda::CompileModuleCuda(fused, cuda));
  for (size_t i = 0; i < cm.kernels.size() && i < dynamic.size(); ++i) {
    cm.kernels[i].dynamic_shared_bytes = dynamic[i];
  }
  KILN_ASSIGN_OR_RETURN(lowering::GraphPlan plan, lowering::PlanGraph(fused, cm.lowered));
  codegen::ExportOptions eo;
  KILN_ASSIGN_OR_RETURN(eo.device_code, codegen_cuda::EncodeDeviceCode(cm, cuda));
  eo.device_target = cuda.ToString();
  KILN_ASSIGN_OR_RETURN(codegen::Target host, codegen::ParseTarget("llvm -mcpu=generic"));
  KILN_RETURN_IF_ERROR(codegen::ExportLibrary({}, host, plan, path, eo));
  return cm.kernels;
}

absl::Status CompileFor(const std::string& target, const std::string& path,
                        const std::string& text = DenseAddReluSoftmaxText()) {
  KILN_ASSIGN_OR_RETURN(Module typed, Typed(text));
  compiler::CompileOptions o;
  o.target = target;
  return compiler::CompileToLibrary(typed, o, path).status();
}

// A version 1 or 2 DEVICE_CODE section (`s`, to the end of its last
// image, the CUDA C) made version 3 in as many bytes: each kernel record
// followed by dynamic[k] and a reserved 0, everything after them 8 bytes
// further per kernel, the CUDA C (never loaded) that much shorter.
std::string ToVersion3(const std::string& s, const std::vector<uint32_t>& dynamic) {
  const uint32_t nk = Rd32(s, 20);
  const size_t kernels = Rd64(s, 40), grow = 8 * size_t{nk};
  std::string t = s.substr(0, kernels);
  for (uint32_t k = 0; k < nk; ++k) {
    t += s.substr(kernels + 48 * k, 48);
    t += std::string(8, '\0');
    Wr32(&t, kernels + 56 * k + 48, k < dynamic.size() ? dynamic[k] : 0);
  }
  t += s.substr(kernels + 48 * size_t{nk});
  Wr32(&t, 8, 3);
  for (size_t field : {48, 56}) Wr64(&t, field, Rd64(s, field) + grow);
  if (Rd64(s, 72) != 0) Wr64(&t, 72, Rd64(s, 72) + grow);
  size_t last = 0;
  for (uint32_t i = 0; i < Rd32(s, 16); ++i) {
    const size_t e = Rd64(s, 32) + 32 * i;
    Wr64(&t, e + 8, Rd64(s, e + 8) + grow);
    if (i == 0 || Rd64(s, e + 8) > Rd64(s, last + 8)) last = e;
  }
  EXPECT_EQ(Rd32(s, last), static_cast<uint32_t>(KILN_DEVICE_IMAGE_SOURCE));
  const size_t size = Rd64(s, last + 16) - grow;
  Wr64(&t, last + 16, size);
  t[Rd64(t, last + 8) + size - 1] = '\0';
  t.resize(s.size());
  return t;
}


FakeStats* Stats() { return testing::FakeDriverStats(); }

class DynamicSharedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!codegen_cuda::NvrtcAvailable()) GTEST_SKIP() << "kiln was built without NVRTC";
    plain_ = TempPath("plain.so");
    dynamic_ = TempPath("dynamic.so");
    ASSERT_TRUE(CompileFor("cuda -arch=sm_90", plain_).ok());
    absl::StatusOr<std::vector<codegen_cuda::CudaKernel>> k =
        CompileWithDynamicShared(dynamic_, {kBig, kSmall});
    ASSERT_TRUE(k.ok()) << k.status();
    ASSERT_EQ(k->size(), 2u);
    kernels_ = *std::move(k);
  }

  std::string plain_, dynamic_;
  std::vector<codegen_cuda::CudaKernel> kernels_;
};

// Without dynamic shared memory the section is what CompileToLibrary writes
// (version 1: 48-byte records); with it, version 3 (56-byte records ending
// in the bytes and a reserved 0), read back with the bytes.
TEST_F(DynamicSharedTest, Version3OnlyWhenAKernelHasDynamicSharedMemory) {
  const std::string zero = TempPath("zero.so");
  ASSERT_TRUE(CompileWithDynamicShared(zero, {0, 0}).ok());
  const std::string plain = Section(ReadAll(plain_));
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(Rd32(plain, 8), 1u);
  EXPECT_EQ(Rd64(plain, 48) - Rd64(plain, 40), 2u * 48);  // params follow the 48-byte records
  EXPECT_EQ(Section(ReadAll(zero)), plain);                 // byte for byte

  const std::string bytes = ReadAll(dynamic_);
  const std::string s = Section(bytes);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(Rd32(s, 8), 3u);
  const size_t kernels = Rd64(s, 40);
  EXPECT_EQ(Rd64(s, 48) - kernels, 2u * 56);
  EXPECT_EQ(Rd32(s, kernels + 48), kBig);
  EXPECT_EQ(Rd32(s, kernels + 52), 0u);
  EXPECT_EQ(Rd32(s, kernels + 56 + 48), kSmall);
  // Everything but the kernel records is as in version 1.
  EXPECT_EQ(Rd32(s, kernels + 56 + 4), Rd32(plain, Rd64(plain, 40) + 48 + 4));
  EXPECT_EQ(Rd32(s, 28), 0u);  // no launch words

  KilnArtifact* a = nullptr;
  ASSERT_EQ(TakeStatus(kiln_artifact_load(dynamic_.c_str(), &a)), "");
  const std::string json = kiln_artifact_device_code_json(a);
  kiln_artifact_release(a);
  for (int i = 0; i < 2; ++i) {
    const std::string want = absl::StrCat("\"name\": \"", kernels_[i].name, "\"");
    const size_t at = json.find(want);
    ASSERT_NE(at, std::string::npos) << json;
    EXPECT_EQ(json.find(absl::StrCat("\"shared_bytes\": ", kernels_[i].shared_bytes,
                                     ", \"dynamic_shared_bytes\": ", i == 0 ? kBig : kSmall),
                        at),
              json.find("\"shared_bytes\"", at))
        << json;
  }
  ASSERT_EQ(TakeStatus(kiln_artifact_load(plain_.c_str(), &a)), "");
  EXPECT_NE(std::string(kiln_artifact_device_code_json(a)).find("\"dynamic_shared_bytes\": 0"),
            std::string::npos);
  kiln_artifact_release(a);
}

// The writer refuses what no GPU can launch, naming the kernel.
TEST_F(DynamicSharedTest, TheWriterRefusesMoreThanAnyGpuAllows) {
  for (int64_t bytes : {int64_t{KILN_DEVICE_MAX_DYNAMIC_SHARED} + 1, int64_t{-1}}) {
    absl::StatusOr<std::vector<codegen_cuda::CudaKernel>> r =
        CompileWithDynamicShared(TempPath("too_big.so"), {bytes});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(absl::StrCat("kernel ", kernels_[0].name, " takes ")),
              std::string::npos)
        << r.status();
    EXPECT_NE(r.status().message().find(absl::StrCat(bytes, " of dynamic shared memory")),
              std::string::npos)
        << r.status();
  }
}

// Each field of a version 3 record that can be wrong: refused, naming the
// kernel and the offset; every byte of the records flipped: refused or
// loaded, never a crash.
TEST_F(DynamicSharedTest, CorruptedVersion3RecordsAreRefused) {
  const std::string bytes = ReadAll(dynamic_);
  const size_t dc = DeviceCodeAt(bytes);
  ASSERT_NE(dc, std::string::npos);
  ASSERT_EQ(LoadMutant(bytes), "");
  const size_t kernels = dc + Rd64(bytes, dc + 40);
  const std::string k0 = absl::StrCat("kernel '", kernels_[0].name, "' (offset ");
  const uint64_t rec = kernels - dc;
  struct Case {
    size_t at;
    uint32_t value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {kernels + 48, KILN_DEVICE_MAX_DYNAMIC_SHARED + 1,
       absl::StrCat(k0, rec + 48, "): 232449 bytes of dynamic shared memory, more than 232448")},
      {kernels + 48, 0xffffffffu, "4294967295 bytes of dynamic shared memory"},
      {kernels + 52, 1, absl::StrCat(k0, rec + 52, "): reserved field is not 0")},
      {dc + 8, 5, "made by a newer kiln: DEVICE_CODE version 5, this runtime reads 4"},
      {kernels + 48, KILN_DEVICE_MAX_DYNAMIC_SHARED - static_cast<uint32_t>(kernels_[0].shared_bytes),
       ""},  // the most: loads
      {kernels + 48, 0, ""},                               // none: loads
  };
  for (const Case& c : cases) {
    std::string m = bytes;
    Wr32(&m, c.at, c.value);
    const std::string e = LoadMutant(m);
    if (c.message.empty()) {
      EXPECT_EQ(e, "") << "offset " << c.at - dc;
    } else {
      EXPECT_NE(e.find(c.message), std::string::npos) << "offset " << c.at - dc << ": " << e;
      EXPECT_NE(e.find(e.find("newer") != std::string::npos ? "UNIMPLEMENTED" : "DATA_LOSS"),
                std::string::npos)
          << e;
    }
  }
  // Static + dynamic above the most: static 1 KiB and the most dynamic.
  {
    std::string m = bytes;
    Wr32(&m, kernels + 32, 1024);
    Wr32(&m, kernels + 48, KILN_DEVICE_MAX_DYNAMIC_SHARED);
    const std::string e = LoadMutant(m);
    EXPECT_NE(e.find(absl::StrCat(k0, rec + 48, "): 1024 bytes of static and 232448 of dynamic "
                                  "shared memory, more than 232448 in all")),
              std::string::npos)
        << e;
  }
  // Version 3's records read as version 2's (48 bytes apart): refused.
  {
    std::string m = bytes;
    Wr32(&m, dc + 8, 2);
    EXPECT_NE(LoadMutant(m), "");
  }
  const testing::FlipCounts c = testing::FlipEachByte(bytes, kernels, kernels + 2 * 56);
  EXPECT_EQ(c.unsealed, 0);
  EXPECT_GT(c.refused, c.loaded);
  std::printf("version 3 kernel records flipped 3 ways: %d refused, %d loaded\n", c.refused, c.loaded);
}

// The fake driver's own check (so the session tests below can fail): a
// launch asking for more than 48 KiB of dynamic shared memory is refused
// until cuFuncSetAttribute raises the function's limit, up to the opt-in
// limit; a module loaded again starts from the default.
TEST_F(DynamicSharedTest, TheFakeDriverChecksTheAttribute) {
  void* h = FakeDriver();
  ASSERT_NE(h, nullptr) << dlerror();
  using Load = int (*)(void**, const void*);
  using Unload = int (*)(void*);
  using GetFunction = int (*)(void**, void*, const char*);
  using SetAttribute = int (*)(void*, int, int);
  using Launch = int (*)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void*, void**, void**);
  auto load = reinterpret_cast<Load>(dlsym(h, "cuModuleLoadData"));
  auto unload = reinterpret_cast<Unload>(dlsym(h, "cuModuleUnload"));
  auto get = reinterpret_cast<GetFunction>(dlsym(h, "cuModuleGetFunction"));
  auto set = reinterpret_cast<SetAttribute>(dlsym(h, "cuFuncSetAttribute"));
  auto launch = reinterpret_cast<Launch>(dlsym(h, "cuLaunchKernel"));
  ASSERT_TRUE(load && unload && get && set && launch);
  const std::string so = TempPath("fake_check_kernels.so");
  absl::Status st = testing::BuildFakeDriverKernels(plain_, so);
  if (st.code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << st;
  ASSERT_TRUE(st.ok()) << st;
  setenv("KILN_FAKE_CUDA_KERNELS", so.c_str(), 1);
  for (int round = 0; round < 2; ++round) {
    void* mod = nullptr;
    ASSERT_EQ(load(&mod, ".version 8.0\n"), 0);
    void* f = nullptr;
    ASSERT_EQ(get(&f, mod, kernels_[0].name.c_str()), 0);
    // Grid 0 x 1 x 1: nothing runs; only the launch's checks.
    EXPECT_EQ(launch(f, 0, 1, 1, 1, 1, 1, 48 * 1024, nullptr, nullptr, nullptr), 0);
    EXPECT_EQ(launch(f, 0, 1, 1, 1, 1, 1, kBig, nullptr, nullptr, nullptr), 1);
    EXPECT_EQ(set(f, 9, kBig), 1);  // only MAX_DYNAMIC_SHARED_SIZE_BYTES
    EXPECT_EQ(set(f, 8, KILN_DEVICE_MAX_DYNAMIC_SHARED + 1), 1);  // above the opt-in limit
    EXPECT_EQ(set(f, 8, kBig), 0);
    EXPECT_EQ(launch(f, 0, 1, 1, 1, 1, 1, kBig, nullptr, nullptr, nullptr), 0);
    EXPECT_EQ(launch(f, 0, 1, 1, 1, 1, 1, kBig + 1, nullptr, nullptr, nullptr), 1);
    void* again = nullptr;
    ASSERT_EQ(get(&again, mod, kernels_[0].name.c_str()), 0);
    EXPECT_EQ(again, f);  // one function per module and name
    EXPECT_EQ(unload(mod), 0);
  }
}

class DynamicSharedSessionTest : public DynamicSharedTest {
 protected:
  void SetUp() override {
    DynamicSharedTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_NE(std::getenv("KILN_CUDA_DRIVER"), nullptr);
    // The host build of the kernels, from the version 1 artifact: the same
    // kernels and CUDA C.
    const std::string so = TempPath("dynamic_host_kernels.so");
    absl::Status st = testing::BuildFakeDriverKernels(plain_, so);
    if (st.code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << st;
    ASSERT_TRUE(st.ok()) << st;
    setenv("KILN_FAKE_CUDA_KERNELS", so.c_str(), 1);
    for (size_t i = 0; i < x_.size(); ++i) x_[i] = std::sin(0.7f * static_cast<float>(i));
    for (size_t i = 0; i < y_.size(); ++i) y_[i] = 0.3f * std::cos(1.3f * static_cast<float>(i));
  }

  // A session of the artifact at `path` on `device`: "" and the output,
  // or the status.
  std::string Run(const std::string& path, DLDeviceType device, std::vector<float>* out) {
    KilnArtifact* a = nullptr;
    std::string e = TakeStatus(kiln_artifact_load(path.c_str(), &a));
    if (!e.empty()) return e;
    KilnSessionOptions o{};
    o.struct_size = sizeof o;
    o.num_threads = 1;
    o.device_type = device;
    KilnSession* s = nullptr;
    e = TakeStatus(kiln_session_create(a, &o, &s));
    if (e.empty()) {
      DLTensor x = Tensor(x_.data(), xs_), y = Tensor(y_.data(), ys_);
      e = TakeStatus(kiln_session_set_input(s, "x", &x));
      if (e.empty()) e = TakeStatus(kiln_session_set_input(s, "y", &y));
      if (e.empty()) e = TakeStatus(kiln_session_run(s));
      out->assign(32, 0.0f);
      int64_t shape[2] = {4, 8};
      DLTensor dst = Tensor(out->data(), shape);
      if (e.empty()) e = TakeStatus(kiln_session_copy_output(s, 0, &dst));
    }
    kiln_session_release(s);
    kiln_artifact_release(a);
    return e;
  }

  std::vector<float> x_ = std::vector<float>(24), y_ = std::vector<float>(32);
  int64_t xs_[2] = {4, 6}, ys_[2] = {4, 8};
};

// The kernel above 48 KiB opted in (one cuFuncSetAttribute, for its bytes),
// every launch requesting its kernel's bytes, the outputs the CPU
// artifact's.
TEST_F(DynamicSharedSessionTest, LaunchesWithTheKernelsDynamicSharedMemory) {
  FakeStats* stats = Stats();
  ASSERT_NE(stats, nullptr);
  const std::string cpu = TempPath("cpu.so");
  ASSERT_TRUE(CompileFor("llvm", cpu).ok());
  std::vector<float> want, got;
  ASSERT_EQ(Run(cpu, kDLCPU, &want), "");
  const long long launches = stats->launches, set = stats->attributes_set;
  const long long refused = stats->launches_refused;
  ASSERT_EQ(Run(dynamic_, kDLCUDA, &got), "");
  EXPECT_EQ(stats->launches - launches, 2);
  EXPECT_EQ(stats->launches_refused - refused, 0);
  EXPECT_EQ(stats->attributes_set - set, 1);  // kSmall needs none
  EXPECT_EQ(stats->max_dynamic_shared_set, static_cast<int>(kBig));
  EXPECT_TRUE(stats->last_shared_bytes == kBig || stats->last_shared_bytes == kSmall)
      << stats->last_shared_bytes;
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-4 * std::fabs(want[i])) << "element " << i;
  }
  // The version 1 artifact requests none.
  ASSERT_EQ(Run(plain_, kDLCUDA, &got), "");
  EXPECT_EQ(stats->last_shared_bytes, 0u);
  EXPECT_EQ(stats->attributes_set - set, 1);
  EXPECT_EQ(stats->live_allocations, 0);
}

// A GPU that lets a block opt into less than the kernel needs (an sm_90a
// artifact's GEMM tile on a smaller GPU): the session is refused, naming the
// kernel, its bytes and the device's limit; nothing is launched or leaked.
TEST_F(DynamicSharedSessionTest, AGpuWithLessSharedMemoryIsRefused) {
  FakeStats* stats = Stats();
  ASSERT_NE(stats, nullptr);
  const long long launches = stats->launches, refused = stats->launches_refused;
  setenv("KILN_FAKE_CUDA_SMEM_OPTIN", "65536", 1);
  std::vector<float> got;
  const std::string e = Run(dynamic_, kDLCUDA, &got);
  unsetenv("KILN_FAKE_CUDA_SMEM_OPTIN");
  const uint64_t total = static_cast<uint64_t>(kernels_[0].shared_bytes) + kBig;
  EXPECT_NE(e.find("UNIMPLEMENTED"), std::string::npos) << e;
  EXPECT_NE(e.find(absl::StrCat("kernel '", kernels_[0].name, "' needs ", total,
                                " bytes of shared memory per block (", kernels_[0].shared_bytes,
                                " static + ", kBig, " dynamic)")),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("lets a block have at most 65536"), std::string::npos) << e;
  EXPECT_EQ(stats->launches, launches);
  EXPECT_EQ(stats->launches_refused, refused);
  EXPECT_EQ(stats->live_allocations, 0);
  // Exactly enough: runs.
  setenv("KILN_FAKE_CUDA_SMEM_OPTIN", std::to_string(total).c_str(), 1);
  EXPECT_EQ(Run(dynamic_, kDLCUDA, &got), "");
  unsetenv("KILN_FAKE_CUDA_SMEM_OPTIN");
}

// The VM's launches: a GPU VM artifact (relu of a symbolic batch, a
// symbolic launch) whose DEVICE_CODE is made version 3 by hand (the
// compiler's VM path is not reachable from here): the kernel opted in, every
// launch requesting its bytes, the outputs right.
TEST_F(DynamicSharedSessionTest, VmLaunchesWithTheKernelsDynamicSharedMemory) {
  FakeStats* stats = Stats();
  ASSERT_NE(stats, nullptr);
  const std::string vm = TempPath("vm.so");
  absl::Status st = CompileFor("cuda -arch=sm_90", vm, R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 2), float32]) { nn.relu(%x) }
)");
  ASSERT_TRUE(st.ok()) << st;
  std::string bytes = ReadAll(vm);
  const size_t dc = DeviceCodeAt(bytes);
  ASSERT_NE(dc, std::string::npos);
  const std::string section = Section(bytes);
  ASSERT_EQ(Rd32(section, 8), 2u);  // a symbolic launch
  ASSERT_EQ(Rd32(section, 20), 1u);
  bytes.replace(dc, section.size(), ToVersion3(section, {kBig}));
  ASSERT_EQ(WriteSealed(bytes, "vm3.so"), "");
  const std::string so = TempPath("vm_host_kernels.so");
  st = testing::BuildFakeDriverKernels(vm, so);
  ASSERT_TRUE(st.ok()) << st;
  setenv("KILN_FAKE_CUDA_KERNELS", so.c_str(), 1);

  KilnArtifact* a = nullptr;
  ASSERT_EQ(TakeStatus(kiln_artifact_load(TempPath("vm3.so").c_str(), &a)), "");
  EXPECT_NE(std::string(kiln_artifact_device_code_json(a))
                .find(absl::StrCat("\"dynamic_shared_bytes\": ", kBig)),
            std::string::npos)
      << kiln_artifact_device_code_json(a);
  KilnSessionOptions o{};
  o.struct_size = sizeof o;
  o.device_type = kDLCUDA;
  KilnSession* s = nullptr;
  const long long launches = stats->launches, set = stats->attributes_set;
  ASSERT_EQ(TakeStatus(kiln_session_create(a, &o, &s)), "");
  EXPECT_EQ(stats->attributes_set - set, 1);
  std::vector<float> x = {-1.0f, 2.0f, -3.0f, 4.0f, 0.5f, -0.5f};
  int64_t shape[2] = {3, 2};
  DLTensor t = Tensor(x.data(), shape);
  ASSERT_EQ(TakeStatus(kiln_session_set_input_index(s, 0, &t)), "");
  ASSERT_EQ(TakeStatus(kiln_session_run(s)), "");
  EXPECT_EQ(stats->launches - launches, 1);
  EXPECT_EQ(stats->last_shared_bytes, kBig);
  const DLTensor* out = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_get_output(s, 0, &out)), "");
  ASSERT_EQ(out->ndim, 2);
  ASSERT_EQ(out->shape[0], 3);
  const float* v = reinterpret_cast<const float*>(static_cast<const char*>(out->data) + out->byte_offset);
  EXPECT_EQ(std::vector<float>(v, v + 6), (std::vector<float>{0.0f, 2.0f, 0.0f, 4.0f, 0.5f, 0.0f}));
  kiln_session_release(s);
  // A GPU with less refuses it too.
  setenv("KILN_FAKE_CUDA_SMEM_OPTIN", "65536", 1);
  s = nullptr;
  const std::string e = TakeStatus(kiln_session_create(a, &o, &s));
  unsetenv("KILN_FAKE_CUDA_SMEM_OPTIN");
  EXPECT_EQ(s, nullptr);
  EXPECT_NE(e.find("lets a block have at most 65536"), std::string::npos) << e;
  kiln_artifact_release(a);
  EXPECT_EQ(stats->live_allocations, 0);
}

}  // namespace
}  // namespace kiln
