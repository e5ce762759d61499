// File: tests/cuda/cuda_tensor_map_test.cc
//
// TMA tensor maps (DEVICE_CODE version 4, docs/artifact.md): a kernel
// parameter `const __grid_constant__ kiln_tmap` is a CUtensorMap the runtime
// encodes at launch (cuTensorMapEncodeTiled) for the device address of one of
// the kernel's buffers. Here a model's kernel is replaced by a hand-written
// one that takes two tensor maps and writes their 16 words (the fake
// driver's layout, tests/cuda/fake_tensor_map.h) to its output, each map's
// address less the buffer parameter it should view; so the test sees what
// the runtime encoded: the right buffer, dtype, rank, dims, strides, box and
// swizzle. Checked: the section is version 4 only then (1 otherwise, byte for
// byte), every malformed spec field is refused naming the kernel and the
// field, sessions through the fake driver (the graph executor's and the VM's
// launches) pass the maps, an unaligned buffer's encode fails naming the
// kernel, the parameter and the CUresult, and a driver without the call
// (cuda_tensor_map_old_driver_test) refuses the session naming the kernel.
// Skips without NVRTC or g++.
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
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
#include "tests/cuda/fake_tensor_map.h"
#include "tests/cuda/session_test_util.h"
#include "types/infer_type.h"

namespace kiln {
namespace {

using testing::DeviceCodeAt;
using testing::FakeDriver;
using testing::Rd32;
using testing::LoadMutant;
using testing::Rd64;
using testing::ReadAll;
using testing::Section;
using testing::TakeStatus;
using testing::TempPath;
using testing::WriteSealed;
using testing::Wr32;
using testing::Wr64;

constexpr char kAddText[] = R"(#[version = "0.1"]
def @main(%x: Tensor[(16, 8), float16], %y: Tensor[(16, 8), float16]) { add(%x, %y) }
)";

// The two maps of the graph kernel (x, y, out; then maps 3 and 4): y as 16
// rows of 8 float16 (16 bytes apart), boxes of 8 x 4, no swizzle; x as
// 4 x 4 x 8 (rows 16, planes 64 bytes apart), boxes of 8 x 2 x 1, the
// 32-byte swizzle.
codegen_cuda::CudaTensorMap MapA() {
  codegen_cuda::CudaTensorMap t;
  t.param = 3;
  t.buffer = 1;
  t.dims = {8, 16};
  t.strides = {16};
  t.box = {8, 4};
  t.swizzle = 0;
  return t;
}
codegen_cuda::CudaTensorMap MapB() {
  codegen_cuda::CudaTensorMap t;
  t.param = 4;
  t.buffer = 0;
  t.dims = {8, 4, 4};
  t.strides = {16, 64};
  t.box = {8, 2, 1};
  t.swizzle = 32;
  return t;
}

// The 16 words each map should hold, the address word made relative to
// the buffer it views (the kernel subtracts the buffer's pointer).
std::vector<uint64_t> WantWords() {
  std::vector<uint64_t> w(32, 0);
  w[0] = KILN_FAKE_TENSOR_MAP_MAGIC;
  w[2] = 6;  // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
  w[3] = 2;
  w[4] = 8;
  w[5] = 16;
  w[9] = 16;
  w[14] = 8 | (4u << 12);
  w[15] = 0 | (2u << 8);  // no swizzle, 2-byte elements
  w[16] = KILN_FAKE_TENSOR_MAP_MAGIC;
  w[18] = 6;
  w[19] = 3;
  w[20] = 8;
  w[21] = 4;
  w[22] = 4;
  w[25] = 16;
  w[26] = 64;
  w[30] = 8 | (2u << 12) | (uint64_t{1} << 24);
  w[31] = 1 | (2u << 8);  // CU_TENSOR_MAP_SWIZZLE_32B
  return w;
}

// The hand-written kernel: thread 0 of block 0 writes both maps' words to
// `out` (256 bytes: the float16 [16, 8] output), each address less the
// pointer of the buffer the map should view.
std::string GraphKernelSource(const std::string& name) {
  return absl::StrCat(
      "extern \"C\" __global__ void ", name,
      "(const unsigned short* __restrict__ x, const unsigned short* __restrict__ y,\n"
      "    unsigned short* __restrict__ out, const __grid_constant__ kiln_tmap ta,\n"
      "    const __grid_constant__ kiln_tmap tb) {\n"
      "  if (blockIdx.x + blockIdx.y + blockIdx.z + threadIdx.x + threadIdx.y + threadIdx.z != 0) "
      "return;\n"
      "  unsigned long long* o = (unsigned long long*)out;\n"
      "  for (int i = 0; i < 16; ++i) { o[i] = ta.w[i]; o[16 + i] = tb.w[i]; }\n"
      "  o[1] -= (unsigned long long)y;\n"
      "  o[17] -= (unsigned long long)x;\n"
      "}\n");
}

absl::StatusOr<Module> Typed(const std::string& text) {
  KILN_ASSIGN_OR_RETURN(Module m, ParseModule(text, "cuda_tensor_map_test"));
  return types::InferType(m);
}

// kAddText compiled for sm_90 as CompileToLibrary compiles it; with
// `maps`, its kernel replaced by GraphKernelSource taking those tensor maps
// (the module's CUDA C and PTX rebuilt). The module, and the artifact at
// `path` when it is not empty.
absl::StatusOr<codegen_cuda::CudaModule> CompileAdd(
    const std::string& path, const std::vector<codegen_cuda::CudaTensorMap>& maps,
    Module* fused_out = nullptr) {
  KILN_ASSIGN_OR_RETURN(Module typed, Typed(kAddText));
  compiler::CompileOptions o;
  o.target = "cuda -arch=sm_90";
  KILN_ASSIGN_OR_RETURN(Module fused, compiler::OptimizeForLowering(typed, o));
  KILN_ASSIGN_OR_RETURN(codegen_cuda::CudaTarget cuda, codegen_cuda::ParseCudaTarget(o.target));
  KILN_ASSIGN_OR_RETURN(codegen_cuda::CudaModule cm, codegen_cuda::CompileModuleCuda(fused, cuda));
  if (cm.kernels.size() != 1 || cm.kernels[0].num_buffers != 3) {
    return absl::InternalError("expected one kernel of three buffers");
  }
  if (!maps.empty()) {
    codegen_cuda::CudaKernel& k = cm.kernels[0];
    k.source = GraphKernelSource(k.name);
    for (size_t j = 0; j < maps.size(); ++j) {
      k.param_names.push_back(absl::StrCat("tm", j));
      k.param_types.push_back("kiln_tmap");
    }
    k.tensor_maps = maps;
    cm.source = codegen_cuda::ModuleSource(cm.kernels);
    KILN_ASSIGN_OR_RETURN(cm.ptx, codegen_cuda::CompileToPtx(cm.source, "tensor_map.cu", cuda));
    cm.cubin.clear();  // the original kernel's
  }
  if (!path.empty()) {
    KILN_ASSIGN_OR_RETURN(lowering::GraphPlan plan, lowering::PlanGraph(fused, cm.lowered));
    codegen::ExportOptions eo;
    KILN_ASSIGN_OR_RETURN(eo.device_code, codegen_cuda::EncodeDeviceCode(cm, cuda));
    eo.device_target = cuda.ToString();
    KILN_ASSIGN_OR_RETURN(codegen::Target host, codegen::ParseTarget("llvm -mcpu=generic"));
    KILN_RETURN_IF_ERROR(codegen::ExportLibrary({}, host, plan, path, eo));
  }
  if (fused_out != nullptr) *fused_out = fused;
  return cm;
}

// "" when `bytes` (written and re-sealed) loads, else the status.

bool OldDriver() { return std::getenv("KILN_FAKE_CUDA_NO_TENSOR_MAP") != nullptr; }

// A float16 [16, 8] DLTensor over `data` (as uint16 words).
DLTensor Half(uint16_t* data, int64_t* shape) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 16, 1};
  t.shape = shape;
  return t;
}

class TensorMapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!codegen_cuda::NvrtcAvailable()) GTEST_SKIP() << "kiln was built without NVRTC";
    plain_ = TempPath("plain.so");
    maps_ = TempPath("maps.so");
    absl::StatusOr<codegen_cuda::CudaModule> plain = CompileAdd(plain_, {});
    ASSERT_TRUE(plain.ok()) << plain.status();
    absl::StatusOr<codegen_cuda::CudaModule> m = CompileAdd(maps_, {MapA(), MapB()}, &fused_);
    ASSERT_TRUE(m.ok()) << m.status();
    name_ = m->kernels[0].name;
    module_ = *std::move(m);
  }

  std::string plain_, maps_, name_;
  Module fused_;
  codegen_cuda::CudaModule module_;
};

// The section's fields: version 4 with 56-byte records, the two maps as
// parameters 3 and 4 of kind 2 (float16, flags 0, spec 1 + their first
// launch word), their specs in the launch words; described by
// kiln_artifact_device_code_json. Without maps: version 1, the bytes
// CompileToLibrary writes.
TEST_F(TensorMapTest, Version4OnlyWhenAKernelHasTensorMaps) {
  KilnArtifact* a = nullptr;
  {
    compiler::CompileOptions o;
    o.target = "cuda -arch=sm_90";
    absl::StatusOr<Module> typed = Typed(kAddText);
    ASSERT_TRUE(typed.ok());
    const std::string lib = TempPath("library.so");
    ASSERT_TRUE(compiler::CompileToLibrary(*typed, o, lib).ok());
    const std::string plain = Section(ReadAll(plain_));
    ASSERT_FALSE(plain.empty());
    EXPECT_EQ(Rd32(plain, 8), 1u);
    EXPECT_EQ(Section(ReadAll(lib)), plain);  // byte for byte
  }
  const std::string s = Section(ReadAll(maps_));
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(Rd32(s, 8), 4u);
  const size_t kernels = Rd64(s, 40), params = Rd64(s, 48), words = Rd64(s, 72);
  EXPECT_EQ(params - kernels, 56u);  // one V3 record
  EXPECT_EQ(Rd32(s, kernels + 36), 0u);
  EXPECT_EQ(Rd32(s, kernels + 40), 5u);
  EXPECT_EQ(Rd32(s, kernels + 44), 0u);  // a static launch
  EXPECT_EQ(Rd32(s, 24), 5u);
  const std::vector<int64_t> want = {1, 2, 8, 16, 16, 8, 4, 0,                 // map A
                                     0, 3, 8, 4, 4, 16, 64, 8, 2, 1, 32};      // map B
  ASSERT_EQ(Rd32(s, 28), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(static_cast<int64_t>(Rd64(s, words + 8 * i)), want[i]) << "word " << i;
  }
  for (uint32_t p = 0; p < 5; ++p) {
    const size_t e = params + 8 * p;
    EXPECT_EQ(static_cast<uint8_t>(s[e]), p < 3 ? 1 : 2) << p;
    EXPECT_EQ(static_cast<uint8_t>(s[e + 1]), kDLFloat) << p;
    EXPECT_EQ(static_cast<uint8_t>(s[e + 2]), 16) << p;
    EXPECT_EQ(Rd32(s, e + 4), p == 3 ? 1u : p == 4 ? 9u : 0u) << p;
  }
  EXPECT_EQ(static_cast<uint8_t>(s[params + 8 * 3 + 3]), 0);  // a map's flags
  ASSERT_EQ(TakeStatus(kiln_artifact_load(maps_.c_str(), &a)), "");
  const std::string json = kiln_artifact_device_code_json(a);
  kiln_artifact_release(a);
  EXPECT_NE(json.find("\"kiln_tmap(param 1: float16 [8, 16] box [8, 4] swizzle 0)\", "
                      "\"kiln_tmap(param 0: float16 [8, 4, 4] box [8, 2, 1] swizzle 32)\""),
            std::string::npos)
      << json;
}

// The writer refuses a map the runtime would, naming the kernel.
TEST_F(TensorMapTest, TheWriterRefusesMalformedMaps) {
  absl::StatusOr<codegen_cuda::CudaTarget> cuda = codegen_cuda::ParseCudaTarget("cuda -arch=sm_90");
  ASSERT_TRUE(cuda.ok());
  struct Case {
    codegen_cuda::CudaTensorMap map;
    std::string message;
  };
  std::vector<Case> cases;
  codegen_cuda::CudaTensorMap t = MapA();
  t.param = 4;
  cases.push_back({t, "not parameter 3 of type kiln_tmap"});
  t = MapA();
  t.buffer = 3;
  cases.push_back({t, "views parameter 3, not one of the 3 buffers"});
  t = MapA();
  t.strides = {24};
  cases.push_back({t, "the stride of dim 1 is 24 bytes"});
  t = MapA();
  t.box = {4, 4};
  cases.push_back({t, "a box row of 8 bytes with swizzle 0"});
  t = MapA();
  t.swizzle = 48;
  cases.push_back({t, "a box row of 16 bytes with swizzle 48"});
  t = MapA();
  t.dims = {8, 16, 1, 1, 1, 1};
  cases.push_back({t, "rank 6"});
  for (const Case& c : cases) {
    codegen_cuda::CudaModule m = module_;
    m.kernels[0].tensor_maps = {c.map};
    m.kernels[0].param_types.pop_back();
    absl::StatusOr<std::string> s = codegen_cuda::EncodeDeviceCode(m, *cuda);
    ASSERT_FALSE(s.ok()) << c.message;
    EXPECT_NE(s.status().message().find(absl::StrCat("kernel ", name_, " tensor map 0")),
              std::string::npos)
        << s.status();
    EXPECT_NE(s.status().message().find(c.message), std::string::npos) << s.status();
  }
}

// Each field of a map that can be wrong: refused at load, naming the kernel,
// the parameter and the field; every byte of the specs flipped: refused or
// loaded, never a crash.
TEST_F(TensorMapTest, MalformedSpecsAreRefused) {
  const std::string bytes = ReadAll(maps_);
  const size_t dc = DeviceCodeAt(bytes);
  ASSERT_NE(dc, std::string::npos);
  ASSERT_EQ(LoadMutant(bytes), "");
  const size_t kernels = dc + Rd64(bytes, dc + 40), params = dc + Rd64(bytes, dc + 48);
  const size_t words = dc + Rd64(bytes, dc + 72);
  const uint32_t num_words = Rd32(bytes, dc + 28);
  const size_t a = words, b = words + 8 * 8;  // map A's and map B's first words
  const size_t pa = params + 8 * 3, pb = params + 8 * 4;
  const std::string ka = absl::StrCat("kernel '", name_, "' tensor-map parameter 3");
  const std::string kb = absl::StrCat("kernel '", name_, "' tensor-map parameter 4");
  struct Case {
    size_t at;
    int width;  // 1, 4 or 8 bytes
    uint64_t value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {a, 8, 3, absl::StrCat(ka, " (spec at launch word 0, offset ", words - dc,
                             "): its buffer 3 is not one of the kernel's 3 buffer parameters")},
      {a, 8, static_cast<uint64_t>(-1), "its buffer -1 is not one of the kernel's 3"},
      {pa + 1, 1, kDLInt, absl::StrCat(ka, " (spec at launch word 0, offset ", words - dc,
                                       "): its dtype int16 is not its buffer's (parameter 1, "
                                       "float16)")},
      {a + 8, 8, 0, absl::StrCat(ka, " (spec at launch word 0, offset ", words - dc,
                                 "): its rank 0 is not 1 .. 5")},
      {a + 8, 8, 6, "its rank 6 is not 1 .. 5"},
      {a + 16, 8, 0, absl::StrCat(ka, " (spec at launch word 0, offset ", words - dc,
                                  "): dim 0 is 0 elements (1 .. 2^32)")},
      {a + 24, 8, (uint64_t{1} << 32) + 1, "dim 1 is 4294967297 elements"},
      {a + 32, 8, 24, absl::StrCat(ka, " (spec at launch word 0, offset ", words - dc,
                                   "): the stride of dim 1 is 24 bytes (a multiple of 16")},
      {a + 32, 8, 0, "the stride of dim 1 is 0 bytes"},
      {a + 32, 8, uint64_t{1} << 40, "the stride of dim 1 is 1099511627776 bytes"},
      {a + 40, 8, 0, absl::StrCat(ka, " (spec at launch word 0, offset ", words - dc,
                                  "): box dim 0 is 0 elements (1 .. 256)")},
      {a + 48, 8, 257, "box dim 1 is 257 elements (1 .. 256)"},
      {a + 40, 8, 4, "its box row (4 elements of 2 bytes) is not a multiple of 16 bytes"},
      {a + 56, 8, 48, absl::StrCat(ka, " (spec at launch word 0, offset ", words - dc,
                                   "): its swizzle span is 48 bytes (0, 32, 64 or 128)")},
      {b + 56, 8, 32, absl::StrCat(kb, " (spec at launch word 8, offset ", words - dc + 64,
                                   "): its box row of 64 bytes is longer than its 32-byte "
                                   "swizzle span")},
      {pa + 4, 4, 0, absl::StrCat(ka, ": spec 0 is outside the ", num_words, " launch words")},
      {pa + 4, 4, num_words + 1,
       absl::StrCat(ka, ": spec ", num_words + 1, " is outside the ", num_words, " launch words")},
      {pb + 4, 4, num_words - 2,
       absl::StrCat(kb, " (spec at launch word ", num_words - 3, ", offset ",
                    words - dc + 8 * (num_words - 3), "): its spec runs past the ", num_words,
                    " launch words")},
      {pa + 3, 1, 1, "parameter 3 (offset "},  // a map's flags
      {params + 4, 4, 1, absl::StrCat("parameter 0 (offset ", params + 4 - dc,
                                      "): a buffer's spec field is 1, not 0")},
      {kernels + 44, 4, 1, absl::StrCat("kernel '", name_, "': tensor-map parameter 3 in a kernel "
                                        "with a symbolic launch")},
      {dc + 8, 4, 3, "parameter 3 (offset "},  // kind 2 in version 3: unknown
      {dc + 8, 4, 5, "made by a newer kiln: DEVICE_CODE version 5, this runtime reads 4"},
      // Map A over 17 rows of y's 16: past the buffer.
      {a + 24, 8, 17, absl::StrCat(ka, " covers 272 bytes of parameter 1, but ")},
      {a + 24, 8, 1, ""},  // one row: loads
      {b + 80, 8, 128, ""},  // a wider swizzle: loads
  };
  for (const Case& c : cases) {
    std::string m = bytes;
    if (c.width == 1) m[c.at] = static_cast<char>(c.value);
    if (c.width == 4) Wr32(&m, c.at, static_cast<uint32_t>(c.value));
    if (c.width == 8) Wr64(&m, c.at, c.value);
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
  // Version 3's "unknown kind" says which kinds it knows.
  {
    std::string m = bytes;
    Wr32(&m, dc + 8, 3);
    EXPECT_NE(LoadMutant(m).find("unknown kind 2 (known: 1 buffer)"), std::string::npos);
  }
  // A buffer after a map.
  {
    std::string m = bytes;
    m[pb] = KILN_DEVICE_PARAM_BUFFER;
    Wr32(&m, pb + 4, 0);
    EXPECT_NE(LoadMutant(m).find(absl::StrCat("kernel '", name_, "': parameter 4 is a buffer after "
                                              "tensor-map parameter 3")),
              std::string::npos);
  }
  const testing::FlipCounts c = testing::FlipEachByte(bytes, words, words + 8 * size_t{num_words});
  EXPECT_EQ(c.unsealed, 0);
  EXPECT_GT(c.refused, c.loaded);
  std::printf("tensor-map spec words flipped 3 ways: %d refused, %d loaded\n", c.refused, c.loaded);
}

// The emulator passes the maps as the fake driver encodes them, over the
// buffers' host addresses.
TEST_F(TensorMapTest, TheEmulatorPassesTheMaps) {
  absl::StatusOr<std::unique_ptr<testing::CudaEmulator>> emu =
      testing::CudaEmulator::Build(fused_, module_);
  if (emu.status().code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << emu.status();
  ASSERT_TRUE(emu.ok()) << emu.status();
  std::vector<interp::Value> args;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<Ref<HostTensor>> t = HostTensor::Create(DataType::Float(16), {16, 8});
    ASSERT_TRUE(t.ok());
    args.push_back(interp::Value::Tensor(*t));
  }
  absl::StatusOr<interp::Value> out = (*emu)->Run(args);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<uint64_t> got(32);
  std::memcpy(got.data(), out->tensor()->raw_data(), 256);
  EXPECT_EQ(got, WantWords());
}

// The fake driver's own checks (so the session tests can fail): the layout
// for good arguments, CUDA_ERROR_INVALID_VALUE for an unaligned address or
// arguments kiln never passes.
TEST_F(TensorMapTest, TheFakeDriverEncodesAndRefuses) {
  if (OldDriver()) GTEST_SKIP() << "a driver without cuTensorMapEncodeTiled";
  void* h = FakeDriver();
  ASSERT_NE(h, nullptr) << dlerror();
  using Encode = int (*)(void*, int, uint32_t, void*, const uint64_t*, const uint64_t*,
                         const uint32_t*, const uint32_t*, int, int, int, int);
  auto encode = reinterpret_cast<Encode>(dlsym(h, "cuTensorMapEncodeTiled"));
  ASSERT_NE(encode, nullptr);
  // Static, not on the stack: under ASan's detect_stack_use_after_return the
  // frame lives on a fake stack that does not keep a 64-byte alignas, and the
  // driver (the fake one too) refuses a map that is not 64-byte aligned.
  alignas(64) static uint64_t map[16];
  alignas(16) static unsigned char buffer[1024];
  std::memset(map, 0, sizeof(map));
  ASSERT_EQ(reinterpret_cast<uintptr_t>(map) % 64, 0u);
  const uint64_t dims[2] = {8, 16}, strides[1] = {16};
  const uint32_t box[2] = {8, 4}, ones[2] = {1, 1};
  EXPECT_EQ(encode(map, 6, 2, buffer, dims, strides, box, ones, 0, 0, 3, 0), 0);
  EXPECT_EQ(map[0], KILN_FAKE_TENSOR_MAP_MAGIC);
  EXPECT_EQ(map[1], reinterpret_cast<uint64_t>(buffer));
  EXPECT_EQ(encode(map, 6, 2, buffer + 8, dims, strides, box, ones, 0, 0, 3, 0), 1);
  EXPECT_EQ(encode(map, 6, 2, buffer, dims, strides, box, ones, 0, 0, 2, 0), 1);  // L2 128B
  EXPECT_EQ(encode(map, 6, 2, buffer, dims, strides, box, ones, 0, 0, 3, 1), 1);  // NaN fill
}

class TensorMapSessionTest : public TensorMapTest {
 protected:
  void SetUp() override {
    TensorMapTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_NE(std::getenv("KILN_CUDA_DRIVER"), nullptr);
    // The host builds of the two artifacts' kernels (the same name, other
    // parameters).
    maps_so_ = TempPath("tensor_map_host_kernels.so");
    plain_so_ = TempPath("plain_host_kernels.so");
    absl::Status st = testing::BuildFakeDriverKernels(maps_, maps_so_);
    if (st.code() == absl::StatusCode::kUnavailable) GTEST_SKIP() << st;
    ASSERT_TRUE(st.ok()) << st;
    st = testing::BuildFakeDriverKernels(plain_, plain_so_);
    ASSERT_TRUE(st.ok()) << st;
    for (size_t i = 0; i < x_.size(); ++i) {
      x_[i] = static_cast<uint16_t>(0x3c00 + i);
      y_[i] = static_cast<uint16_t>(0x3800 + i);
    }
  }

  // A session of `path` on cuda:0, run `runs` times: "" and the output's
  // words, or the status.
  std::string Run(const std::string& path, std::vector<uint64_t>* out, int runs = 1) {
    setenv("KILN_FAKE_CUDA_KERNELS", (path == plain_ ? plain_so_ : maps_so_).c_str(), 1);
    KilnArtifact* a = nullptr;
    std::string e = TakeStatus(kiln_artifact_load(path.c_str(), &a));
    if (!e.empty()) return e;
    KilnSessionOptions o{};
    o.struct_size = sizeof o;
    o.num_threads = 1;
    o.device_type = kDLCUDA;
    KilnSession* s = nullptr;
    e = TakeStatus(kiln_session_create(a, &o, &s));
    for (int r = 0; r < runs && e.empty(); ++r) {
      int64_t shape[2] = {16, 8};
      DLTensor x = Half(x_.data(), shape), y = Half(y_.data(), shape);
      e = TakeStatus(kiln_session_set_input(s, "x", &x));
      if (e.empty()) e = TakeStatus(kiln_session_set_input(s, "y", &y));
      if (e.empty()) e = TakeStatus(kiln_session_run(s));
      out->assign(32, 0);
      DLTensor dst = Half(reinterpret_cast<uint16_t*>(out->data()), shape);
      if (e.empty()) e = TakeStatus(kiln_session_copy_output(s, 0, &dst));
    }
    kiln_session_release(s);
    kiln_artifact_release(a);
    return e;
  }

  std::vector<uint16_t> x_ = std::vector<uint16_t>(128), y_ = std::vector<uint16_t>(128);
  std::string maps_so_, plain_so_;
};

// The graph executor's launch: each map encoded for its buffer's device
// address (the kernel finds map A over y and map B over x, with their dims,
// strides, box, swizzle and dtype); a second run with the same addresses
// encodes nothing again.
TEST_F(TensorMapSessionTest, GraphLaunchesPassTheEncodedMaps) {
  if (OldDriver()) GTEST_SKIP() << "a driver without cuTensorMapEncodeTiled";
  KilnFakeCudaStats* stats = testing::FakeDriverStats();
  ASSERT_NE(stats, nullptr);
  const long long encoded = stats->tensor_maps_encoded, launches = stats->launches;
  std::vector<uint64_t> got;
  ASSERT_EQ(Run(maps_, &got, 2), "");
  EXPECT_EQ(got, WantWords());
  EXPECT_EQ(stats->launches - launches, 2);
  EXPECT_EQ(stats->tensor_maps_encoded - encoded, 2);  // once per map: the addresses stayed
  EXPECT_EQ(stats->last_tensor_map_data_type, 6);
  EXPECT_EQ(stats->live_allocations, 0);
  // The artifact without maps encodes none.
  ASSERT_EQ(Run(plain_, &got), "");
  EXPECT_EQ(stats->tensor_maps_encoded - encoded, 2);
}

// A buffer address TMA refuses (the fake driver's allocations 8 bytes past
// a 256-byte boundary): the run fails naming the node, the kernel, the
// parameter, the address and the CUresult; nothing leaks.
TEST_F(TensorMapSessionTest, AnUnalignedBufferFailsTheEncode) {
  if (OldDriver()) GTEST_SKIP() << "a driver without cuTensorMapEncodeTiled";
  KilnFakeCudaStats* stats = testing::FakeDriverStats();
  ASSERT_NE(stats, nullptr);
  const long long refused = stats->tensor_maps_refused, launches = stats->launches;
  setenv("KILN_FAKE_CUDA_ALLOC_OFFSET", "8", 1);
  std::vector<uint64_t> got;
  const std::string e = Run(maps_, &got);
  unsetenv("KILN_FAKE_CUDA_ALLOC_OFFSET");
  EXPECT_NE(e.find("INVALID_ARGUMENT"), std::string::npos) << e;
  EXPECT_NE(e.find("node '"), std::string::npos) << e;
  EXPECT_NE(e.find(absl::StrCat("cuTensorMapEncodeTiled(kernel '", name_,
                                "' tensor-map parameter 3, of parameter 1, address 0x")),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("CUDA_ERROR_INVALID_VALUE (1)"), std::string::npos) << e;
  EXPECT_EQ(stats->tensor_maps_refused - refused, 1);
  EXPECT_EQ(stats->launches, launches);
  EXPECT_EQ(stats->live_allocations, 0);
  // Aligned again: runs.
  ASSERT_EQ(Run(maps_, &got), "");
  EXPECT_EQ(got, WantWords());
}

// A driver without cuTensorMapEncodeTiled (before CUDA 12;
// cuda_tensor_map_old_driver_test): the session is refused naming the
// kernel; an artifact without maps still runs.
TEST_F(TensorMapSessionTest, OldDriverRefusesTheSession) {
  if (!OldDriver()) GTEST_SKIP() << "runs in cuda_tensor_map_old_driver_test";
  void* h = FakeDriver();
  ASSERT_NE(h, nullptr) << dlerror();
  EXPECT_EQ(dlsym(h, "cuTensorMapEncodeTiled"), nullptr);
  EXPECT_NE(dlsym(h, "cuLaunchKernel"), nullptr);
  KilnFakeCudaStats* stats = testing::FakeDriverStats();
  ASSERT_NE(stats, nullptr);
  const long long launches = stats->launches;
  std::vector<uint64_t> got;
  const std::string e = Run(maps_, &got);
  EXPECT_NE(e.find("UNIMPLEMENTED"), std::string::npos) << e;
  EXPECT_NE(e.find(absl::StrCat("kernel '", name_, "' takes TMA tensor maps (parameter 3), but the "
                                "CUDA driver")),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("lacks cuTensorMapEncodeTiled"), std::string::npos) << e;
  EXPECT_EQ(stats->launches, launches);
  EXPECT_EQ(stats->live_allocations, 0);
  EXPECT_EQ(Run(plain_, &got), "");
  EXPECT_EQ(stats->launches - launches, 1);
}

// ------------------------------------------------------------- the VM path

// A DEVICE_CODE section's fields (versions 1 .. 4), and one written back.
struct SectionParam {
  uint8_t kind, code, bits, flags;
  uint32_t spec;
};
struct SectionKernel {
  std::string name;
  uint32_t grid[3], block[3], shared, launch, dynamic_shared;
  std::vector<SectionParam> params;
};
struct SectionFields {
  std::vector<SectionKernel> kernels;
  std::vector<int64_t> words;
  std::string ptx, source;
  uint32_t arch = 0;
};

SectionFields ParseSection(const std::string& s) {
  SectionFields f;
  const uint32_t version = Rd32(s, 8);
  const size_t record = version >= 3 ? 56 : 48;
  for (uint32_t i = 0; i < Rd32(s, 16); ++i) {
    const size_t e = Rd64(s, 32) + 32 * i;
    const std::string text = s.c_str() + Rd64(s, e + 8);
    if (Rd32(s, e) == KILN_DEVICE_IMAGE_PTX) {
      f.ptx = text;
      f.arch = Rd32(s, e + 4);
    }
    if (Rd32(s, e) == KILN_DEVICE_IMAGE_SOURCE) f.source = text;
  }
  for (uint32_t i = 0; i < Rd32(s, 28); ++i) f.words.push_back(static_cast<int64_t>(Rd64(s, Rd64(s, 72) + 8 * i)));
  for (uint32_t k = 0; k < Rd32(s, 20); ++k) {
    const size_t e = Rd64(s, 40) + record * k;
    SectionKernel kr;
    kr.name = s.substr(Rd64(s, 56) + Rd32(s, e), Rd32(s, e + 4));
    for (int d = 0; d < 3; ++d) {
      kr.grid[d] = Rd32(s, e + 8 + 4 * d);
      kr.block[d] = Rd32(s, e + 20 + 4 * d);
    }
    kr.shared = Rd32(s, e + 32);
    kr.launch = Rd32(s, e + 44);
    kr.dynamic_shared = version >= 3 ? Rd32(s, e + 48) : 0;
    for (uint32_t p = 0; p < Rd32(s, e + 40); ++p) {
      const size_t q = Rd64(s, 48) + 8 * (Rd32(s, e + 36) + p);
      kr.params.push_back({static_cast<uint8_t>(s[q]), static_cast<uint8_t>(s[q + 1]),
                           static_cast<uint8_t>(s[q + 2]), static_cast<uint8_t>(s[q + 3]),
                           Rd32(s, q + 4)});
    }
    f.kernels.push_back(kr);
  }
  return f;
}

// A version 4 section of `f`: the PTX image, and the CUDA C when `source`.
std::string WriteSection(const SectionFields& f, bool source) {
  auto align8 = [](size_t x) { return (x + 7) & ~size_t{7}; };
  std::string strings;
  size_t num_params = 0;
  for (const SectionKernel& k : f.kernels) {
    strings += k.name;
    num_params += k.params.size();
  }
  const size_t num_images = source ? 2 : 1;
  const size_t images = 80, kernels = align8(images + 32 * num_images);
  const size_t params = align8(kernels + 56 * f.kernels.size());
  const size_t strs = align8(params + 8 * num_params);
  const size_t words = align8(strs + strings.size());
  const size_t ptx = align8(words + 8 * f.words.size());
  const size_t src = align8(ptx + f.ptx.size() + 1);
  std::string s(source ? align8(src + f.source.size() + 1) : src, '\0');
  std::memcpy(s.data(), KILN_DEVICE_CODE_MAGIC, KILN_DEVICE_CODE_MAGIC_SIZE);
  Wr32(&s, 8, 4);
  Wr32(&s, 12, kDLCUDA);
  Wr32(&s, 16, static_cast<uint32_t>(num_images));
  Wr32(&s, 20, static_cast<uint32_t>(f.kernels.size()));
  Wr32(&s, 24, static_cast<uint32_t>(num_params));
  Wr32(&s, 28, static_cast<uint32_t>(f.words.size()));
  Wr64(&s, 32, images);
  Wr64(&s, 40, kernels);
  Wr64(&s, 48, params);
  Wr64(&s, 56, strs);
  Wr64(&s, 64, strings.size());
  Wr64(&s, 72, f.words.empty() ? 0 : words);
  Wr32(&s, images, KILN_DEVICE_IMAGE_PTX);
  Wr32(&s, images + 4, f.arch);
  Wr64(&s, images + 8, ptx);
  Wr64(&s, images + 16, f.ptx.size() + 1);
  std::memcpy(s.data() + ptx, f.ptx.data(), f.ptx.size());
  if (source) {
    Wr32(&s, images + 32, KILN_DEVICE_IMAGE_SOURCE);
    Wr64(&s, images + 40, src);
    Wr64(&s, images + 48, f.source.size() + 1);
    std::memcpy(s.data() + src, f.source.data(), f.source.size());
  }
  size_t name = 0, param = 0;
  for (size_t i = 0; i < f.kernels.size(); ++i) {
    const SectionKernel& k = f.kernels[i];
    const size_t e = kernels + 56 * i;
    Wr32(&s, e, static_cast<uint32_t>(name));
    Wr32(&s, e + 4, static_cast<uint32_t>(k.name.size()));
    for (int d = 0; d < 3; ++d) {
      Wr32(&s, e + 8 + 4 * d, k.grid[d]);
      Wr32(&s, e + 20 + 4 * d, k.block[d]);
    }
    Wr32(&s, e + 32, k.shared);
    Wr32(&s, e + 36, static_cast<uint32_t>(param));
    Wr32(&s, e + 40, static_cast<uint32_t>(k.params.size()));
    Wr32(&s, e + 44, k.launch);
    Wr32(&s, e + 48, k.dynamic_shared);
    for (const SectionParam& p : k.params) {
      const size_t q = params + 8 * param++;
      s[q] = static_cast<char>(p.kind);
      s[q + 1] = static_cast<char>(p.code);
      s[q + 2] = static_cast<char>(p.bits);
      s[q + 3] = static_cast<char>(p.flags);
      Wr32(&s, q + 4, p.spec);
    }
    name += k.name.size();
  }
  std::memcpy(s.data() + strs, strings.data(), strings.size());
  for (size_t i = 0; i < f.words.size(); ++i) Wr64(&s, words + 8 * i, static_cast<uint64_t>(f.words[i]));
  return s;
}

// The VM's launches: a GPU VM artifact (a loop over static shapes: its
// kernels have static launches) whose exp kernel is replaced by one taking a
// tensor map of its input (float32 [16, 8] as 16 rows of 8, boxes of 8 x 8,
// the 64-byte swizzle) and writing its words: the map encoded for the
// input's device address at each launch whose address changed (each
// iteration's input is the previous one's output).
TEST_F(TensorMapSessionTest, VmLaunchesPassTheEncodedMaps) {
  if (OldDriver()) GTEST_SKIP() << "a driver without cuTensorMapEncodeTiled";
  KilnFakeCudaStats* stats = testing::FakeDriverStats();
  ASSERT_NE(stats, nullptr);
  absl::StatusOr<Module> typed = Typed(R"(#[version = "0.1"]
def @loop(%i: Tensor[(), int32], %x: Tensor[(16, 8), float32]) -> Tensor[(16, 8), float32] {
  if (less(%i, 1)) { %x } else { @loop(subtract(%i, 1), exp(%x)) }
}

def @main(%n: Tensor[(), int32], %x: Tensor[(16, 8), float32]) { @loop(%n, %x) }
)");
  ASSERT_TRUE(typed.ok()) << typed.status();
  compiler::CompileOptions o;
  o.target = "cuda -arch=sm_90";
  const std::string vm = TempPath("vm.so");
  absl::StatusOr<compiler::CompileReport> r = compiler::CompileToLibrary(*typed, o, vm);
  ASSERT_TRUE(r.ok()) << r.status();
  std::string bytes = ReadAll(vm);
  const size_t dc = DeviceCodeAt(bytes);
  ASSERT_NE(dc, std::string::npos);
  const std::string section = Section(bytes);
  SectionFields f = ParseSection(section);
  ASSERT_FALSE(f.source.empty());
  SectionKernel* exp = nullptr;
  for (SectionKernel& k : f.kernels) {
    if (k.name.find("exp") != std::string::npos) exp = &k;
  }
  ASSERT_NE(exp, nullptr) << "the VM artifact's DEVICE_CODE has no exp kernel";
  ASSERT_EQ(exp->launch, 0u);
  ASSERT_EQ(exp->params.size(), 2u);
  ASSERT_EQ(exp->params[0].code, kDLFloat);
  ASSERT_EQ(exp->params[0].bits, 32);
  // Its tensor map: parameter 2, over buffer 0.
  exp->params.push_back({KILN_DEVICE_PARAM_TENSOR_MAP, kDLFloat, 32, 0,
                         static_cast<uint32_t>(f.words.size() + 1)});
  for (int64_t w : {0, 2, 8, 16, 32, 8, 8, 64}) f.words.push_back(w);
  const std::string name = exp->name;
  const std::string def = absl::StrCat(" ", name, "(");
  const size_t at = f.source.find(def);
  ASSERT_NE(at, std::string::npos);
  f.source.replace(at, def.size(), absl::StrCat(" ", name, "_replaced("));
  f.source += absl::StrCat(
      "extern \"C\" __global__ void ", name,
      "(const float* __restrict__ x, float* __restrict__ out, const __grid_constant__ kiln_tmap t) {\n"
      "  if (blockIdx.x + blockIdx.y + blockIdx.z + threadIdx.x + threadIdx.y + threadIdx.z != 0) "
      "return;\n"
      "  unsigned long long* o = (unsigned long long*)out;\n"
      "  for (int i = 0; i < 64; ++i) o[i] = i < 16 ? t.w[i] : 0;\n"
      "  o[1] -= (unsigned long long)x;\n"
      "}\n");
  absl::StatusOr<codegen_cuda::CudaTarget> cuda = codegen_cuda::ParseCudaTarget(o.target);
  ASSERT_TRUE(cuda.ok());
  absl::StatusOr<std::string> ptx = codegen_cuda::CompileToPtx(f.source, "vm_tensor_map.cu", *cuda);
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  f.ptx = *ptx;
  // The artifact's section replaced in place (the CUDA C and cubin left out,
  // it fits), and the host build of the kernels from a copy that has the
  // CUDA C.
  std::string v4 = WriteSection(f, /*source=*/false);
  ASSERT_LE(v4.size(), section.size());
  v4.resize(section.size(), '\0');
  bytes.replace(dc, section.size(), v4);
  ASSERT_EQ(WriteSealed(bytes, "vm4.so"), "");
  const std::string with_source = TempPath("vm4_source.bin");
  const std::string src_section = WriteSection(f, /*source=*/true);
  std::ofstream(with_source, std::ios::binary).write(src_section.data(),
                                                     static_cast<std::streamsize>(src_section.size()));
  const std::string so = TempPath("vm4_host_kernels.so");
  absl::Status st = testing::BuildFakeDriverKernels(with_source, so);
  ASSERT_TRUE(st.ok()) << st;
  setenv("KILN_FAKE_CUDA_KERNELS", so.c_str(), 1);

  KilnArtifact* a = nullptr;
  ASSERT_EQ(TakeStatus(kiln_artifact_load(TempPath("vm4.so").c_str(), &a)), "");
  EXPECT_NE(std::string(kiln_artifact_device_code_json(a))
                .find("\"kiln_tmap(param 0: float32 [8, 16] box [8, 8] swizzle 64)\""),
            std::string::npos)
      << kiln_artifact_device_code_json(a);
  KilnSessionOptions so_opts{};
  so_opts.struct_size = sizeof so_opts;
  so_opts.device_type = kDLCUDA;
  KilnSession* s = nullptr;
  ASSERT_EQ(TakeStatus(kiln_session_create(a, &so_opts, &s)), "");
  std::vector<uint64_t> want(64, 0);
  want[0] = KILN_FAKE_TENSOR_MAP_MAGIC;
  want[2] = 7;  // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
  want[3] = 2;
  want[4] = 8;
  want[5] = 16;
  want[9] = 32;
  want[14] = 8 | (8u << 12);
  want[15] = 2 | (4u << 8);  // CU_TENSOR_MAP_SWIZZLE_64B, 4-byte elements
  // Runs of 0, 3 and 1 iterations: each launch's map over its input, the
  // previous iteration's output (so each launch of a run has another
  // address than the one before and is encoded again).
  for (int32_t n : {0, 3, 1}) {
    SCOPED_TRACE(absl::StrCat("n=", n));
    std::vector<float> x(128);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i) - n;
    DLTensor nt{};
    nt.data = &n;
    nt.device = {kDLCPU, 0};
    nt.dtype = {kDLInt, 32, 1};
    int64_t shape[2] = {16, 8};
    DLTensor xt = testing::Tensor(x.data(), shape);
    const long long encoded = stats->tensor_maps_encoded, launches = stats->launches;
    ASSERT_EQ(TakeStatus(kiln_session_set_input_index(s, 0, &nt)), "");
    ASSERT_EQ(TakeStatus(kiln_session_set_input_index(s, 1, &xt)), "");
    ASSERT_EQ(TakeStatus(kiln_session_run(s)), "");
    const DLTensor* out = nullptr;
    ASSERT_EQ(TakeStatus(kiln_session_get_output(s, 0, &out)), "");
    ASSERT_EQ(out->ndim, 2);
    const char* data = static_cast<const char*>(out->data) + out->byte_offset;
    EXPECT_GE(stats->launches - launches, n);  // the exp kernel's n (and any scalar kernels)
    if (n == 0) {
      EXPECT_EQ(std::memcmp(data, x.data(), 512), 0);
      EXPECT_EQ(stats->tensor_maps_encoded, encoded);
      continue;
    }
    std::vector<uint64_t> got(64);
    std::memcpy(got.data(), data, 512);
    EXPECT_EQ(got, want);
    // The first run's launches all encode; a later run's first launch may
    // find its input at the address the last one left.
    if (n == 3) {
      EXPECT_EQ(stats->tensor_maps_encoded - encoded, 3);
    }
    EXPECT_GE(stats->tensor_maps_encoded - encoded, n - 1);
    EXPECT_EQ(stats->last_tensor_map_data_type, 7);
  }
  kiln_session_release(s);
  kiln_artifact_release(a);
  EXPECT_EQ(stats->live_allocations, 0);
}

}  // namespace
}  // namespace kiln
