// File: tests/cuda/cuda_artifact_test.cc
//
// GPU artifacts without a GPU: a model compiled for "cuda -arch=sm_90" and
// "sm_80" (c_api/compiler.cc) is one .so whose blob has a DEVICE_CODE section
// (format version 3) the runtime validates at load: the kernels, their launch
// dims and parameters held against the GRAPH, the PTX (and the cubin when
// ptxas ran). Sessions on the CPU refuse it; corrupted device code is refused
// with a message naming the field, never a crash. Skips without NVRTC.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "c_api/compiler.h"
#include "codegen_cuda/nvrtc.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "kiln/artifact_writer.h"
#include "kiln/device_code_format.h"
#include "kiln/runtime.h"
#include "tests/cuda/session_test_util.h"
#include "types/infer_type.h"

namespace kiln {
namespace {

using testing::DenseAddReluSoftmaxText;
using testing::DeviceCodeAt;
using testing::LoadMutant;
using testing::Rd32;
using testing::Rd64;
using testing::ReadAll;
using testing::TakeStatus;
using testing::TempPath;
using testing::Wr32;
using testing::Wr64;

absl::StatusOr<compiler::CompileReport> CompileFor(
    const std::string& target, const std::string& path,
    const std::string& text = DenseAddReluSoftmaxText()) {
  KILN_ASSIGN_OR_RETURN(Module m, ParseModule(text, "cuda_artifact_test"));
  KILN_ASSIGN_OR_RETURN(Module typed, types::InferType(m));
  compiler::CompileOptions o;
  o.target = target;
  return compiler::CompileToLibrary(typed, o, path);
}

// A model that needs the VM: relu of a symbolic batch.
constexpr char kSymbolicRelu[] = R"(#[version = "0.1"]
def @main(%x: Tensor[(N, 2), float32]) { nn.relu(%x) }
)";

class CudaArtifactTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!codegen_cuda::NvrtcAvailable()) GTEST_SKIP() << "kiln was built without NVRTC";
  }
};

TEST_F(CudaArtifactTest, CompilesToOneLibraryWithDeviceCode) {
  for (const char* arch : {"sm_90", "sm_80"}) {
    const std::string target = absl::StrCat("cuda -arch=", arch);
    const std::string path = TempPath(absl::StrCat("m_", arch, ".so"));
    absl::StatusOr<compiler::CompileReport> r = CompileFor(target, path);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->executor, "graph");
    EXPECT_GE(r->num_kernels, 2);
    KilnArtifact* a = nullptr;
    ASSERT_EQ(TakeStatus(kiln_artifact_load(path.c_str(), &a)), "");
    EXPECT_EQ(std::string(kiln_artifact_target(a)), target);
    const std::string json = kiln_artifact_device_code_json(a);
    std::printf("%s: %s\n", arch, json.c_str());
    const std::string sm = std::string(arch).substr(3);
    EXPECT_NE(json.find(absl::StrCat("\"ptx_arch\": \"compute_", sm, "\"")), std::string::npos) << json;
    if (!codegen_cuda::FindPtxas().empty()) {
      EXPECT_NE(json.find(absl::StrCat("\"cubin_arch\": \"sm_", sm, "\"")), std::string::npos) << json;
    }
    EXPECT_NE(json.find("\"params\": [\"const float32*\""), std::string::npos) << json;
    EXPECT_EQ(kiln_artifact_num_inputs(a), 2);
    // Every tvm_op of the GRAPH is a kernel of the device code.
    const std::string graph = kiln_artifact_graph_json(a);
    size_t at = 0;
    int ops = 0;
    while ((at = graph.find("\"func_name\": \"", at)) != std::string::npos) {
      at += 14;
      const std::string name = graph.substr(at, graph.find('"', at) - at);
      EXPECT_NE(json.find(absl::StrCat("\"name\": \"", name, "\"")), std::string::npos) << name;
      ++ops;
    }
    EXPECT_EQ(ops, r->num_fused_calls);

    // The CPU cannot run it; the message says where it can.
    KilnSession* s = nullptr;
    std::string e = TakeStatus(kiln_session_create(a, nullptr, &s));
    EXPECT_NE(e.find("FAILED_PRECONDITION"), std::string::npos) << e;
    EXPECT_NE(e.find(absl::StrCat("compiled for \"", target, "\"")), std::string::npos) << e;
    EXPECT_NE(e.find("kDLCUDA"), std::string::npos) << e;
    EXPECT_EQ(s, nullptr);
    // On cuda:0 without a driver ($KILN_CUDA_DRIVER names a library that
    // does not exist, as libcuda.so.1 does not on a machine without one).
    KilnSessionOptions o{};
    o.struct_size = sizeof o;
    o.device_type = kDLCUDA;
    e = TakeStatus(kiln_session_create(a, &o, &s));
    EXPECT_NE(e.find("NOT_FOUND"), std::string::npos) << e;
    EXPECT_NE(e.find("a session on cuda:0: no CUDA driver: "), std::string::npos) << e;
    EXPECT_EQ(s, nullptr);
    kiln_artifact_release(a);
  }
}

TEST_F(CudaArtifactTest, CpuArtifactsHaveNoDeviceCode) {
  const std::string path = TempPath("cpu.so");
  absl::StatusOr<compiler::CompileReport> r = CompileFor("llvm", path);
  ASSERT_TRUE(r.ok()) << r.status();
  KilnArtifact* a = nullptr;
  ASSERT_EQ(TakeStatus(kiln_artifact_load(path.c_str(), &a)), "");
  EXPECT_EQ(std::string(kiln_artifact_device_code_json(a)), "");
  KilnSessionOptions o{};
  o.struct_size = sizeof o;
  o.device_type = kDLCUDA;
  KilnSession* s = nullptr;
  std::string e = TakeStatus(kiln_session_create(a, &o, &s));
  EXPECT_NE(e.find("FAILED_PRECONDITION"), std::string::npos) << e;
  EXPECT_NE(e.find("--target cuda"), std::string::npos) << e;
  o.device_type = kDLMetal;
  e = TakeStatus(kiln_session_create(a, &o, &s));
  EXPECT_NE(e.find("INVALID_ARGUMENT"), std::string::npos) << e;
  EXPECT_NE(e.find("device_type 8"), std::string::npos) << e;
  kiln_artifact_release(a);
}

// A model that needs the VM is a GPU VM artifact (format version 4): the VM
// program, and DEVICE_CODE for its kernels (relu of a symbolic batch: a
// launch computed from the shapes, DEVICE_CODE version 2).
TEST_F(CudaArtifactTest, ModelsThatNeedTheVmAreGpuVmArtifacts) {
  absl::StatusOr<compiler::CompileReport> r =
      CompileFor("cuda -arch=sm_90", TempPath("vm.so"), kSymbolicRelu);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->executor, "vm");
  EXPECT_EQ(r->num_device_kernels, 1);
  const std::string bytes = ReadAll(TempPath("vm.so"));
  KilnArtifact* a = nullptr;
  ASSERT_EQ(TakeStatus(kiln_artifact_load(TempPath("vm.so").c_str(), &a)), "");
  EXPECT_STREQ(kiln_artifact_graph_json(a), "");  // the VM's
  EXPECT_NE(std::string(kiln_artifact_device_code_json(a)).find("\"ptx_arch\": \"compute_90\""),
            std::string::npos)
      << kiln_artifact_device_code_json(a);
  EXPECT_STREQ(kiln_artifact_target(a), "cuda -arch=sm_90");
  kiln_artifact_release(a);
  // The blob's format version (offset 8 of the blob, after its magic).
  const size_t at = bytes.find(std::string("KILNART\0", 8));
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(static_cast<uint8_t>(bytes[at + 8]), KILN_ARTIFACT_FORMAT_VERSION_DEVICE_VM);
  r = CompileFor("cuda -arch=sm_70", TempPath("vm.so"), kSymbolicRelu);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sm_70"), std::string::npos) << r.status();
}

TEST_F(CudaArtifactTest, CorruptedDeviceCodeIsRefused) {
  const std::string path = TempPath("victim.so");
  absl::StatusOr<compiler::CompileReport> r = CompileFor("cuda -arch=sm_90", path);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string bytes = ReadAll(path);
  const size_t dc = DeviceCodeAt(bytes);
  ASSERT_NE(dc, std::string::npos);
  ASSERT_EQ(LoadMutant(bytes), "");  // re-sealed as it is: loads
  const size_t images = dc + Rd64(bytes, dc + 32), kernels = dc + Rd64(bytes, dc + 40);
  const size_t params = dc + Rd64(bytes, dc + 48);
  struct Case {
    size_t at;
    int width;
    uint64_t value;
    const char* message;
  };
  const std::vector<Case> cases = {
      {dc, 1, 'X', "DEVICE_CODE has no \"KILNDEV\" magic"},
      {dc + 8, 4, 5, "made by a newer kiln: DEVICE_CODE version 5"},
      {dc + 8, 4, 0, "DEVICE_CODE version (offset 8) is 0"},
      {dc + 12, 4, 1, "DLPack device type 1"},
      {dc + 16, 4, 0, "num_images (offset 16) is 0"},
      // No kernels is a valid table (a model without any), but not with this
      // artifact's parameters (nor its graph's kernel calls).
      {dc + 20, 4, 0, "more than 0 kernels may have"},
      {dc + 20, 4, 1u << 30, "num_kernels (offset 20) is 1073741824"},
      {dc + 32, 8, 1u << 30, "the image table"},
      {dc + 40, 8, 3, "the kernel table offset 3 is not a multiple of 8"},
      {dc + 64, 8, uint64_t{1} << 40, "the strings"},
      {dc + 72, 8, 1, "reserved header field"},
      {images, 4, 7, "image 0 (offset"},
      {images + 8, 8, 1u << 30, "image 0 (PTX)"},
      {images + 4, 4, 0, "architecture 0 is not valid"},
      {kernels + 4, 4, 0, "kernel 0 (offset"},
      {kernels + 8, 4, 0, "grid 0 x"},
      {kernels + 20, 4, 2048, "block 2048 x"},
      {kernels + 28, 4, 65, "block"},
      {kernels + 32, 4, 1u << 20, "bytes of shared memory"},
      {kernels + 40, 4, 1000, "parameters ["},
      {kernels + 40, 4, 0, "kernel '"},
      {params, 1, 9, "parameter 0 (offset"},
      {params + 1, 1, 1, "of DEVICE_CODE takes uint32"},  // float -> uint: the GRAPH disagrees
      {params + 2, 1, 12, "unknown dtype"},
      {params + 3, 1, 4, "unknown flags"},
  };
  for (const Case& c : cases) {
    std::string m = bytes;
    if (c.width == 1) m[c.at] = static_cast<char>(c.value);
    if (c.width == 4) Wr32(&m, c.at, static_cast<uint32_t>(c.value));
    if (c.width == 8) Wr64(&m, c.at, c.value);
    const std::string e = LoadMutant(m);
    EXPECT_NE(e.find(c.message), std::string::npos)
        << "offset " << c.at - dc << " = " << c.value << ": " << e;
  }
  // The PTX text's terminating NUL removed; a kernel renamed (the GRAPH calls
  // a kernel DEVICE_CODE lacks); the name not an identifier.
  {
    std::string m = bytes;
    const size_t ptx = dc + Rd64(bytes, images + 8), ptx_size = Rd64(bytes, images + 16);
    m[ptx + ptx_size - 1] = 'x';
    EXPECT_NE(LoadMutant(m).find("not NUL-terminated"), std::string::npos);
    m = bytes;
    const size_t strings = dc + Rd64(bytes, dc + 56);
    const size_t name = strings + Rd32(bytes, kernels);
    m[name] = 'Q';
    std::string e = LoadMutant(m);
    EXPECT_NE(e.find("which DEVICE_CODE does not hold"), std::string::npos) << e;
    m[name] = '-';
    e = LoadMutant(m);
    EXPECT_NE(e.find("is not a C identifier"), std::string::npos) << e;
  }
  // A CPU artifact's format version with device code.
  {
    std::string m = bytes;
    const size_t blob = bytes.find(std::string("KILNART\0", 8));
    ASSERT_NE(blob, std::string::npos);
    Wr32(&m, blob + 8, 1);
    EXPECT_NE(LoadMutant(m).find("a CPU artifact (format version 1) has a DEVICE_CODE section"),
              std::string::npos);
  }
}

// Every byte of the section's header and tables flipped 3 ways, and a
// sample of the images' bytes: refused with a status or loaded, never a
// crash (run under ASan by tools/dev/kiln.sh test-sanitizers).
int64_t Op(int opcode, int64_t operand = 0) { return operand * 16 + opcode; }

// DEVICE_CODE version 2's launch programs (a kernel with a symbolic batch):
// each field that can be wrong refused with its message, and every byte of
// the launch words flipped 3 ways: refused or loaded, never a crash.
TEST_F(CudaArtifactTest, SymbolicLaunchesAreValidated) {
  const std::string path = TempPath("symbolic.so");
  absl::StatusOr<compiler::CompileReport> r = CompileFor("cuda -arch=sm_90", path, kSymbolicRelu);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string bytes = ReadAll(path);
  const size_t dc = DeviceCodeAt(bytes);
  ASSERT_NE(dc, std::string::npos);
  ASSERT_EQ(Rd32(bytes, dc + 8), 2u);  // a symbolic launch: version 2
  ASSERT_EQ(LoadMutant(bytes), "");
  ASSERT_EQ(Rd32(bytes, dc + 20), 1u);  // relu, on the device
  const size_t kernels = dc + Rd64(bytes, dc + 40);
  const size_t words = dc + Rd64(bytes, dc + 72);
  const uint32_t num_words = Rd32(bytes, dc + 28);
  ASSERT_EQ(Rd32(bytes, kernels + 44), 1u);  // its program starts at word 0
  // The program as the format says: 1 variable, N = dim 0 of parameter 0;
  // x and the result [N, 2]; then the grid's x, y, z.
  auto word = [&](size_t i) { return static_cast<int64_t>(Rd64(bytes, words + 8 * i)); };
  ASSERT_GE(num_words, 12u);
  EXPECT_EQ(word(0), 1);
  EXPECT_EQ(word(1), 0);
  EXPECT_EQ(word(2), 0);
  EXPECT_EQ(word(3), 2);
  EXPECT_EQ(word(4), -1);
  EXPECT_EQ(word(5), 2);
  EXPECT_EQ(word(6), 2);
  EXPECT_EQ(word(7), -1);
  EXPECT_EQ(word(8), 2);
  const int64_t gx = word(9);
  ASSERT_GE(gx, 1);
  EXPECT_EQ(word(10 + gx), 1);  // grid y: one op, the constant 1
  EXPECT_EQ(word(11 + gx), Op(KILN_DEVICE_OP_CONST, 1));
  struct Case {
    size_t at;
    int width;
    uint64_t value;
    const char* message;
  };
  auto w = [&](size_t i) { return words + 8 * i; };
  const std::vector<Case> cases = {
      {w(0), 8, 0, "has 0 shape variables (1 .. 64)"},
      {w(0), 8, 65, "has 65 shape variables"},
      {w(1), 8, 5, "shape variable 0 is read from parameter 5"},
      {w(4), 8, 7, "which does not name it"},
      {w(5), 8, static_cast<uint64_t>(-3), "names variable 2 of 1"},
      {w(3), 8, 40, "has ndim 40"},
      {w(4), 8, static_cast<uint64_t>(KILN_DEVICE_DIM_EXPR), "parameter 0 dim 0: its expression unknown op"},
      {w(9), 8, 0, "grid expression 0 has 0 ops"},
      {w(9), 8, 300, "grid expression 0 has 300 ops (1 .. 256)"},
      {w(9), 8, 200, "launch program runs past"},
      {w(10), 8, static_cast<uint64_t>(Op(KILN_DEVICE_OP_VAR, 3)), "reads variable 3 of 1"},
      {w(10), 8, 15, "unknown op"},
      {w(10), 8, static_cast<uint64_t>(Op(KILN_DEVICE_OP_ADD)), "too few operands"},
      {w(11 + gx), 8, static_cast<uint64_t>(Op(KILN_DEVICE_OP_VAR, 0)) + 0, ""},  // grid y = N: valid
      {dc + 28, 4, 0, "num_launch_words (offset 28) is 0"},
      {kernels + 44, 4, 1000, "launch 1000 is outside"},
      {dc + 8, 4, 1, "reserved header field is not 0"},
      {kernels + 8, 4, 5, "a symbolic launch with a static grid"},
  };
  for (const Case& c : cases) {
    std::string mm = bytes;
    if (c.width == 4) Wr32(&mm, c.at, static_cast<uint32_t>(c.value));
    if (c.width == 8) Wr64(&mm, c.at, c.value);
    const std::string e = LoadMutant(mm);
    if (c.message[0] == '\0') {
      EXPECT_EQ(e, "") << "offset " << c.at - dc;
    } else {
      EXPECT_NE(e.find(c.message), std::string::npos) << "offset " << c.at - dc << " = " << c.value << ": " << e;
    }
  }
  const testing::FlipCounts c = testing::FlipEachByte(bytes, words, words + 8 * num_words);
  EXPECT_EQ(c.unsealed, 0);
  EXPECT_GT(c.refused, 0);
  std::printf("launch words: %u, flipped 3 ways: %d refused, %d loaded\n", num_words, c.refused,
              c.loaded);
}

TEST_F(CudaArtifactTest, EveryFlippedByteIsRefusedOrHarmless) {
  const std::string path = TempPath("victim2.so");
  absl::StatusOr<compiler::CompileReport> r = CompileFor("cuda -arch=sm_90", path);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string bytes = ReadAll(path);
  const size_t dc = DeviceCodeAt(bytes);
  ASSERT_NE(dc, std::string::npos);
  const size_t tables_end = Rd64(bytes, dc + 56) + Rd64(bytes, dc + 64);
  std::vector<size_t> offsets;
  for (size_t i = 0; i < tables_end; ++i) offsets.push_back(i);
  std::mt19937 rng(7);
  const uint64_t images = Rd64(bytes, dc + 32);
  const uint32_t num_images = Rd32(bytes, dc + 16);
  for (uint32_t i = 0; i < num_images; ++i) {
    const uint64_t off = Rd64(bytes, dc + images + 32 * i + 8), size = Rd64(bytes, dc + images + 32 * i + 16);
    for (int k = 0; k < 40; ++k) offsets.push_back(off + rng() % size);
    offsets.push_back(off + size - 1);
  }
  int refused = 0, loaded = 0;
  for (size_t i : offsets) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
      std::string m = bytes;
      m[dc + i] = static_cast<char>(m[dc + i] ^ flip);
      const std::string e = LoadMutant(m);
      ASSERT_EQ(e.find("seal:"), std::string::npos) << e;
      if (e.empty()) {
        ++loaded;
      } else {
        ++refused;
        EXPECT_TRUE(e.find("DATA_LOSS") == 0 || e.find("UNIMPLEMENTED") == 0) << e;
      }
    }
  }
  EXPECT_GT(refused, loaded);
  std::printf("DEVICE_CODE: %zu bytes mutated 3 ways: %d refused at load, %d loaded\n",
              offsets.size(), refused, loaded);
}

}  // namespace
}  // namespace kiln
