// File: c_api/kiln_api_run_test.cc — kiln.h's whole path through the C ABI:
// parse, compile, load and run against results computed here; what an
// artifact may be trusted with; every emitted stage (CPU and CUDA); the
// after-pass and compile-progress callbacks; one model shared by threads; the
// dot picture. The argument checks are kiln_api_test.cc.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "c_api/kiln_api_test_util.h"

namespace {

using ::testing::HasSubstr;
using ::kiln_api_test::Garbage;
using ::kiln_api_test::kAddRelu;
using ::kiln_api_test::Parse;
using ::kiln_api_test::TmpDir;

// relu(x + y)^2 and (x + y) - y, computed here.
void Expected(const float* x, const float* y, float* o0, float* o1) {
  for (int i = 0; i < 6; ++i) {
    float s = x[i] + y[i];
    float r = s > 0 ? s : 0;
    o0[i] = r * r;
    o1[i] = s - y[i];
  }
}

TEST(KilnApi, CompileLoadRunEndToEnd) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  std::string path = TmpDir() + "/add_relu.so";
  KilnCompileOptions o;
  kiln_compile_options_init(&o);
  KilnCompileReport report;
  std::memset(&report, 0, sizeof report);
  report.struct_size = sizeof report;
  ASSERT_KILN_OK(kiln_model_compile(model, &o, path.c_str(), &report));
  EXPECT_GE(report.num_kernels, 1);
  EXPECT_GE(report.num_fused_calls, 1);
  EXPECT_GT(report.file_bytes, 0u);
  kiln_model_release(model);

  KilnArtifact* artifact = nullptr;
  ASSERT_KILN_OK(kiln_artifact_load(path.c_str(), &artifact));
  EXPECT_EQ(kiln_artifact_num_inputs(artifact), 2);
  EXPECT_EQ(kiln_artifact_num_outputs(artifact), 2);
  int32_t index = -1;
  EXPECT_KILN_OK(kiln_artifact_input_index(artifact, "y", &index));
  EXPECT_EQ(index, 1);
  EXPECT_KILN_ERROR(kiln_artifact_output_index(artifact, "nope", &index), KILN_NOT_FOUND,
                    "no output named 'nope'");
  KilnSession* s = nullptr;
  ASSERT_KILN_OK(kiln_session_create(artifact, nullptr, &s));
  EXPECT_KILN_ERROR(kiln_session_run(s), KILN_FAILED_PRECONDITION, "x");

  float x[6] = {1, -2, 3, -4, 5, -6};
  float y[6] = {0.5f, 0.5f, -5, 1, 1, 10};
  int64_t shape[2] = {2, 3};
  DLTensor tx{x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  DLTensor ty{y, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  // A wrong shape names the input, what it expects and what it got.
  int64_t bad_shape[2] = {3, 2};
  DLTensor bad{x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, bad_shape, nullptr, 0};
  EXPECT_KILN_ERROR(kiln_session_set_input(s, "x", &bad), KILN_INVALID_ARGUMENT, "'x'");
  EXPECT_KILN_ERROR(kiln_session_set_input(s, "z", &tx), KILN_NOT_FOUND, "no input named 'z'");
  DLTensor wrong_dtype = tx;
  wrong_dtype.dtype.bits = 64;
  EXPECT_KILN_ERROR(kiln_session_set_input(s, "x", &wrong_dtype), KILN_INVALID_ARGUMENT, "x");
  ASSERT_KILN_OK(kiln_session_set_input(s, "x", &tx));
  ASSERT_KILN_OK(kiln_session_set_input(s, "y", &ty));
  ASSERT_KILN_OK(kiln_session_run(s));
  float e0[6], e1[6];
  Expected(x, y, e0, e1);
  const DLTensor* out = nullptr;
  ASSERT_KILN_OK(kiln_session_get_output(s, 0, &out));
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(static_cast<const float*>(out->data)[i], e0[i]);
  ASSERT_KILN_OK(kiln_session_get_output(s, 1, &out));
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(static_cast<const float*>(out->data)[i], e1[i]);
  EXPECT_KILN_ERROR(kiln_session_get_output(s, 2, &out), KILN_OUT_OF_RANGE, "out of range");

  // A DLPack copy outlives the session and the artifact.
  DLManagedTensor* managed = nullptr;
  ASSERT_KILN_OK(kiln_session_get_output_dlpack(s, 0, &managed));
  ASSERT_NE(managed, nullptr);
  managed->deleter(managed);
  EXPECT_KILN_ERROR(kiln_session_get_output_dlpack(s, 9, &managed), KILN_OUT_OF_RANGE, "9");
  EXPECT_EQ(managed, nullptr);
  ASSERT_KILN_OK(kiln_session_get_output_dlpack(s, 0, &managed));
  kiln_session_release(s);
  kiln_artifact_release(artifact);
  ASSERT_EQ(managed->dl_tensor.ndim, 2);
  EXPECT_EQ(managed->dl_tensor.shape[0], 2);
  EXPECT_EQ(managed->dl_tensor.shape[1], 3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(managed->dl_tensor.data) % 64, 0u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ(static_cast<const float*>(managed->dl_tensor.data)[i], e0[i]);
  }
  managed->deleter(managed);
}

// The whole file's bytes.
std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

uint64_t Le(const std::string& b, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

// The dynamic tags of an ELF64 little-endian shared object (PT_DYNAMIC).
std::vector<uint64_t> DynamicTags(const std::string& elf) {
  std::vector<uint64_t> tags;
  if (elf.size() < 64) return tags;
  uint64_t phoff = Le(elf, 32, 8), phnum = Le(elf, 56, 2);
  for (uint64_t i = 0; i < phnum && phoff + (i + 1) * 56 <= elf.size(); ++i) {
    size_t ph = phoff + i * 56;
    if (Le(elf, ph, 4) != 2) continue;
    uint64_t off = Le(elf, ph + 8, 8), size = Le(elf, ph + 32, 8);
    for (uint64_t e = 0; e + 16 <= size && off + e + 16 <= elf.size(); e += 16) {
      uint64_t tag = Le(elf, off + e, 8);
      if (tag == 0) break;
      tags.push_back(tag);
    }
  }
  return tags;
}

// The first of a few x86 features this CPU lacks (every x86 CPU lacks one:
// AMD parts have no AMX, Intel parts no SSE4a), or "".
std::string MissingX86Feature() {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("amx-tile")) return "amx-tile";
  if (!__builtin_cpu_supports("avx512fp16")) return "avx512fp16";
  if (!__builtin_cpu_supports("sse4a")) return "sse4a";
  if (!__builtin_cpu_supports("avx512f")) return "avx512f";
#endif
  return "";
}

// Issue 15: an artifact is code. kiln's own artifacts carry no constructors
// (linked without start files) and record the CPU features their code needs;
// the loader refuses a CPU without them. A session keeps its artifact alive;
// a DLTensor whose byte_offset cannot fit is refused, never memcpy'd.
TEST(KilnApi, ArtifactTrustAndSessionContract) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  const std::string path = TmpDir() + "/trust.so";
  KilnCompileOptions o;
  kiln_compile_options_init(&o);
  ASSERT_KILN_OK(kiln_model_compile(model, &o, path.c_str(), nullptr));

  const std::string bytes = ReadAll(path);
  std::vector<uint64_t> tags = DynamicTags(bytes);
  EXPECT_FALSE(tags.empty());
  // DT_INIT, DT_FINI, DT_INIT_ARRAY(SZ), DT_FINI_ARRAY(SZ), DT_PREINIT_ARRAY(SZ).
  for (uint64_t refused : {12u, 13u, 25u, 26u, 27u, 28u, 32u, 33u}) {
    EXPECT_EQ(std::count(tags.begin(), tags.end(), refused), 0) << "dynamic tag " << refused;
  }
  EXPECT_THAT(bytes, HasSubstr("\"cpu_features\":["));
  EXPECT_THAT(bytes, HasSubstr("\"target_triple\":\""));
  EXPECT_THAT(bytes, HasSubstr("\"target_cpu\":\""));
#if defined(__x86_64__)
  EXPECT_THAT(bytes, HasSubstr("\"sse2\""));
#endif

  KilnArtifact* artifact = nullptr;
  ASSERT_KILN_OK(kiln_artifact_load(path.c_str(), &artifact));
  KilnSession* s = nullptr;
  ASSERT_KILN_OK(kiln_session_create(artifact, nullptr, &s));
  kiln_artifact_release(artifact);  // the session keeps it (and its kernels) alive
  kiln_artifact_release(artifact);  // harmless while the session lives

  float x[6] = {1, -2, 3, -4, 5, -6};
  float y[6] = {0.5f, 0.5f, -5, 1, 1, 10};
  int64_t shape[2] = {2, 3};
  DLTensor tx{x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  DLTensor ty{y, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  DLTensor far = tx;
  far.byte_offset = UINT64_MAX - 7;
  EXPECT_KILN_ERROR(kiln_session_set_input(s, "x", &far), KILN_INVALID_ARGUMENT, "byte_offset");
  far.byte_offset = uint64_t{1} << 60;
  EXPECT_KILN_ERROR(kiln_session_set_input_zero_copy(s, "x", &far), KILN_INVALID_ARGUMENT,
                    "does not fit");
  DLTensor no_shape = tx;
  no_shape.shape = nullptr;
  EXPECT_KILN_ERROR(kiln_session_set_input(s, "x", &no_shape), KILN_INVALID_ARGUMENT, "no shape");
  DLTensor bad_ndim = tx;
  bad_ndim.ndim = 1 << 30;
  EXPECT_KILN_ERROR(kiln_session_set_input(s, "x", &bad_ndim), KILN_INVALID_ARGUMENT, "ndim");
  ASSERT_KILN_OK(kiln_session_set_input(s, "x", &tx));
  ASSERT_KILN_OK(kiln_session_set_input(s, "y", &ty));
  ASSERT_KILN_OK(kiln_session_run(s));
  float e0[6], e1[6];
  Expected(x, y, e0, e1);
  const DLTensor* out = nullptr;
  ASSERT_KILN_OK(kiln_session_get_output(s, 0, &out));
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(static_cast<const float*>(out->data)[i], e0[i]);
  float dst_data[6];
  DLTensor dst{dst_data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, UINT64_MAX - 3};
  EXPECT_KILN_ERROR(kiln_session_copy_output(s, 0, &dst), KILN_INVALID_ARGUMENT, "byte_offset");
  kiln_session_release(s);  // the last reference: the artifact goes here

  // Compiled for a feature this CPU lacks: refused at load, before any of
  // its code is mapped.
  const std::string missing = MissingX86Feature();
  if (!missing.empty()) {
    const std::string target = "llvm -mattr=+" + missing;
    const std::string other = TmpDir() + "/needs_" + missing + ".so";
    o.target = target.c_str();
    ASSERT_KILN_OK(kiln_model_compile(model, &o, other.c_str(), nullptr));
    KilnArtifact* a = Garbage<KilnArtifact>();
    EXPECT_KILN_ERROR(kiln_artifact_load(other.c_str(), &a), KILN_FAILED_PRECONDITION,
                      "artifact needs " + missing + ", which this CPU lacks");
    EXPECT_EQ(a, nullptr);
  }
  kiln_model_release(model);
}

TEST(KilnApi, EmitEveryStage) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  const struct {
    KilnEmitKind kind;
    const char* expect;
  } stages[] = {{KILN_EMIT_GRAPH_IR, "Primitive"},
                {KILN_EMIT_LOOP_IR, "for "},
                {KILN_EMIT_LLVM_IR, "define "},
                {KILN_EMIT_ASSEMBLY, ".text"}};
  for (const auto& stage : stages) {
    char* text = nullptr;
    KilnCompileReport report;
    std::memset(&report, 0, sizeof report);
    report.struct_size = sizeof report;
    ASSERT_KILN_OK(kiln_model_emit(model, nullptr, stage.kind, &text, &report));
    ASSERT_NE(text, nullptr);
    EXPECT_THAT(std::string(text), HasSubstr(stage.expect)) << "kind " << stage.kind;
    if (stage.kind != KILN_EMIT_GRAPH_IR) {
      EXPECT_GE(report.num_kernels, 1);
    }
    kiln_free(text);
  }
  char* text = Garbage<char>();
  EXPECT_KILN_ERROR(kiln_model_emit(model, nullptr, static_cast<KilnEmitKind>(9), &text, nullptr),
                    KILN_INVALID_ARGUMENT, "got 9");
  EXPECT_EQ(text, nullptr);
  EXPECT_KILN_ERROR(kiln_model_emit(nullptr, nullptr, KILN_EMIT_LOOP_IR, &text, nullptr),
                    KILN_INVALID_ARGUMENT, "model is NULL");
  EXPECT_KILN_ERROR(kiln_model_emit(model, nullptr, KILN_EMIT_LOOP_IR, nullptr, nullptr),
                    KILN_INVALID_ARGUMENT, "out_text is NULL");
  kiln_model_release(model);
}

// A cuda target's stages: the GPU's loop IR (thread bindings), the kernels'
// CUDA C in the LLVM IR's place, their PTX (where kiln has NVRTC).
TEST(KilnApi, EmitCudaStages) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  KilnCompileOptions o;
  std::memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.opt_level = 3;
  o.target = "cuda -arch=sm_90a";
  const struct {
    KilnEmitKind kind;
    const char* expect;
  } stages[] = {{KILN_EMIT_LOOP_IR, "\"threadIdx.x\""},
                {KILN_EMIT_LLVM_IR, "__global__ void"},
                {KILN_EMIT_ASSEMBLY, ".target sm_90a"}};
  for (const auto& stage : stages) {
    char* text = nullptr;
    KilnCompileReport report;
    std::memset(&report, 0, sizeof report);
    report.struct_size = sizeof report;
    KilnStatus* st = kiln_model_emit(model, &o, stage.kind, &text, &report);
    if (st != nullptr && stage.kind == KILN_EMIT_ASSEMBLY) {
      // A build without the CUDA toolkit says so.
      EXPECT_THAT(std::string(kiln_status_message(st)), HasSubstr("NVRTC is not available"));
      kiln_status_free(st);
      continue;
    }
    ASSERT_KILN_OK(st);
    ASSERT_NE(text, nullptr);
    EXPECT_THAT(std::string(text), HasSubstr(stage.expect)) << "kind " << stage.kind;
    EXPECT_EQ(std::string(text).find("define "), std::string::npos);  // no LLVM
    EXPECT_GE(report.num_kernels, 1);
    kiln_free(text);
  }
  o.target = "cuda -arch=sm_61";
  char* text = Garbage<char>();
  EXPECT_KILN_ERROR(kiln_model_emit(model, &o, KILN_EMIT_LOOP_IR, &text, nullptr),
                    KILN_INVALID_ARGUMENT, "unsupported architecture 'sm_61'");
  EXPECT_EQ(text, nullptr);
  kiln_model_release(model);
}

// Records the after_pass calls.
struct PassLog {
  std::vector<std::string> names;
  std::vector<std::string> texts;
  int changed = 0;
};

void RecordPass(void* user, const char* name, int32_t changed, double ms, const char* text) {
  auto* log = static_cast<PassLog*>(user);
  log->names.push_back(name);
  log->texts.push_back(text != nullptr ? text : "<null>");
  log->changed += changed;
  EXPECT_GE(ms, 0.0);
}

TEST(KilnApi, AfterPassCallbackSeesEveryPass) {
  KilnModel* model = Parse(R"(#[version = "0.1"]
def @main(%x: Tensor[(4,), float32]) {
  %0 = multiply(%x, 1f);
  exp(%0)
}
)");
  ASSERT_NE(model, nullptr);
  PassLog log;
  KilnOptimizeOptions o;
  kiln_optimize_options_init(&o);
  const char* list[] = {"InferType", "SimplifyExpr"};
  o.passes = list;
  o.num_passes = 2;
  o.after_pass = RecordPass;
  o.after_pass_user_data = &log;
  o.after_pass_text = 1;
  KilnModel* out = nullptr;
  ASSERT_KILN_OK(kiln_model_optimize(model, &o, &out));
  ASSERT_EQ(log.names, (std::vector<std::string>{"InferType", "SimplifyExpr"}));
  EXPECT_THAT(log.texts[0], HasSubstr("multiply"));
  EXPECT_THAT(log.texts[1], ::testing::Not(HasSubstr("multiply")));
  EXPECT_GE(log.changed, 1);
  kiln_model_release(out);
  // Without text the callback gets NULL.
  o.after_pass_text = 0;
  log = PassLog();
  ASSERT_KILN_OK(kiln_model_optimize(model, &o, &out));
  ASSERT_EQ(log.texts.size(), 2u);
  EXPECT_EQ(log.texts[0], "<null>");
  kiln_model_release(out);
  kiln_model_release(model);
}

// What a compile progress callback saw: the calls in order, and whether two
// ever overlapped.
struct ProgressLog {
  std::vector<std::string> calls;  // "phase done/total"
  std::atomic<int> inside{0};
  bool overlapped = false;
};

void RecordProgress(void* user_data, const char* phase, int32_t done, int32_t total) {
  auto* log = static_cast<ProgressLog*>(user_data);
  if (log->inside.fetch_add(1) != 0) log->overlapped = true;
  // Widen the window in which an unserialized second call would overlap.
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  log->calls.push_back(std::string(phase) + " " + std::to_string(done) + "/" +
                       std::to_string(total));
  log->inside.fetch_sub(1);
}

// Phases in order, then every kernel once, from parallel code-generation
// threads, serialized.
TEST(KilnApi, CompileProgressReportsPhasesAndEveryKernel) {
  KilnModel* model = Parse(R"(#[version = "0.1"]
def @main(%x: Tensor[(4, 8), float32]) {
  %0 = nn.softmax(%x, axis=1);
  %1 = nn.softmax(%0, axis=0);
  %2 = exp(%1);
  %3 = nn.softmax(%2, axis=1);
  %4 = transpose(%3, axes=[1, 0]);
  %5 = nn.softmax(%4, axis=0);
  (%5, sum(%1, axis=[1]))
}
)");
  ASSERT_NE(model, nullptr);
  ProgressLog log;
  KilnCompileOptions o;
  kiln_compile_options_init(&o);
  o.num_threads = 2;
  o.progress = RecordProgress;
  o.progress_user_data = &log;
  KilnCompileReport report;
  std::memset(&report, 0, sizeof report);
  report.struct_size = sizeof report;
  std::string path = TmpDir() + "/progress.so";
  ASSERT_KILN_OK(kiln_model_compile(model, &o, path.c_str(), &report));
  const int n = report.num_kernels;
  ASSERT_GE(n, 3);
  // Lowering counts the distinct fused functions main calls (two of them may
  // share one kernel): as many as the fused graph IR prints.
  char* fused = nullptr;
  ASSERT_KILN_OK(kiln_model_emit(model, nullptr, KILN_EMIT_GRAPH_IR, &fused, nullptr));
  int f = 0;
  for (const char* p = fused; (p = std::strstr(p, "Primitive=1")) != nullptr; ++p) ++f;
  kiln_free(fused);
  ASSERT_GE(f, n);
  std::vector<std::string> want = {"passes 0/0"};
  for (int k = 0; k <= f; ++k) want.push_back("lower " + std::to_string(k) + "/" + std::to_string(f));
  want.push_back("plan 0/0");
  for (int k = 0; k <= n; ++k) want.push_back("codegen " + std::to_string(k) + "/" + std::to_string(n));
  want.push_back("link 0/0");
  EXPECT_EQ(log.calls, want);
  EXPECT_FALSE(log.overlapped);
  // kiln_model_emit: phase starts only.
  log.calls.clear();
  char* text = nullptr;
  ASSERT_KILN_OK(kiln_model_emit(model, &o, KILN_EMIT_ASSEMBLY, &text, nullptr));
  kiln_free(text);
  EXPECT_EQ(log.calls, (std::vector<std::string>{"passes 0/0", "lower 0/0",
                                                  "codegen 0/" + std::to_string(n)}));
  // An older caller's struct without the progress fields: no calls.
  log.calls.clear();
  o.struct_size = offsetof(KilnCompileOptions, progress);
  ASSERT_KILN_OK(kiln_model_compile(model, &o, path.c_str(), nullptr));
  EXPECT_TRUE(log.calls.empty());
  kiln_model_release(model);
}

// kiln.h's threading promise: one model, shared by threads that optimize,
// compile, load and run it at the same time.
TEST(KilnApi, ThreadsShareOneModel) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  constexpr int kThreads = 4;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto fail = [&](KilnStatus* st) {
        errors[t] = kiln_status_message(st);
        kiln_status_free(st);
      };
      KilnModel* opt = nullptr;
      if (KilnStatus* st = kiln_model_optimize(model, nullptr, &opt)) return fail(st);
      kiln_model_release(opt);
      std::string path = TmpDir() + "/threads_" + std::to_string(t) + ".so";
      KilnCompileOptions o;
      kiln_compile_options_init(&o);
      o.num_threads = 1;
      if (KilnStatus* st = kiln_model_compile(model, &o, path.c_str(), nullptr)) return fail(st);
      KilnArtifact* a = nullptr;
      if (KilnStatus* st = kiln_artifact_load(path.c_str(), &a)) return fail(st);
      KilnSessionOptions so;
      std::memset(&so, 0, sizeof so);
      so.struct_size = sizeof so;
      so.num_threads = 1;
      KilnSession* s = nullptr;
      KilnStatus* st = kiln_session_create(a, &so, &s);
      float x[6], y[6];
      for (int i = 0; i < 6; ++i) {
        x[i] = static_cast<float>(i - 3 + t);
        y[i] = static_cast<float>(2 * i - 5);
      }
      int64_t shape[2] = {2, 3};
      DLTensor tx{x, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
      DLTensor ty{y, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
      if (st == nullptr) st = kiln_session_set_input(s, "x", &tx);
      if (st == nullptr) st = kiln_session_set_input(s, "y", &ty);
      if (st == nullptr) st = kiln_session_run(s);
      const DLTensor* out = nullptr;
      if (st == nullptr) st = kiln_session_get_output(s, 0, &out);
      if (st != nullptr) {
        fail(st);
      } else {
        float e0[6], e1[6];
        Expected(x, y, e0, e1);
        for (int i = 0; i < 6; ++i) {
          if (static_cast<const float*>(out->data)[i] != e0[i]) errors[t] = "wrong output";
        }
      }
      kiln_session_release(s);
      kiln_artifact_release(a);
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
  kiln_model_release(model);
}

TEST(KilnApi, DotPictureOfAModel) {
  KilnModel* model = Parse(kAddRelu);
  ASSERT_NE(model, nullptr);
  char* dot = nullptr;
  ASSERT_KILN_OK(kiln_model_to_dot(model, &dot));
  std::string d = dot;
  kiln_free(dot);
  EXPECT_THAT(d, HasSubstr("digraph"));
  EXPECT_THAT(d, HasSubstr("nn.relu"));
  EXPECT_THAT(d, HasSubstr("output 1"));
  kiln_model_release(model);
}

}  // namespace
