// File: tests/control_flow/onnx_control_flow_test.cc
//
// The user's path for ONNX control flow: a model with If, Loop or Scan is
// loaded (kiln_model_load_onnx_bytes), compiled into one artifact
// (kiln_model_compile: it runs on the VM), loaded by the C runtime and run at
// several inputs — different conditions, trip counts and lengths known only
// at run time, with the same artifact — and every output (shape and values)
// is compared with the loops of frontends/onnx/control_test_models.h.
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/onnx/control_test_models.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "kiln/runtime.h"

namespace kiln::onnx_frontend::testing {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
}

std::string TakeStatus(KilnStatus* st) {
  if (st == nullptr) return "";
  std::string m = absl::StrCat(kiln_status_code_name(kiln_status_code(st)), ": ",
                               kiln_status_message(st));
  kiln_status_free(st);
  return m;
}

// A compiled model, loaded, with one session.
class Compiled {
 public:
  Compiled(const onnx::ModelProto& model, const std::string& name) {
    const std::string bytes = Serialize(model);
    const std::string path = TempPath(name + ".so");
    KilnModel* m = nullptr;
    status_ = TakeStatus(kiln_model_load_onnx_bytes(bytes.data(), bytes.size(), nullptr, &m));
    if (status_.empty()) status_ = TakeStatus(kiln_model_compile(m, nullptr, path.c_str(), nullptr));
    kiln_model_release(m);
    if (status_.empty()) status_ = TakeStatus(kiln_artifact_load(path.c_str(), &a_));
    if (status_.empty()) status_ = TakeStatus(kiln_session_create(a_, nullptr, &s_));
  }
  ~Compiled() {
    kiln_session_release(s_);
    kiln_artifact_release(a_);
  }
  const std::string& status() const { return status_; }
  KilnArtifact* artifact() { return a_; }

  // Sets the inputs (in order), runs, returns the error or "".
  std::string Run(std::vector<std::pair<DLDataType, std::pair<std::vector<int64_t>, const void*>>> in) {
    for (size_t i = 0; i < in.size(); ++i) {
      DLTensor d{};
      d.data = const_cast<void*>(in[i].second.second);
      d.device = {kDLCPU, 0};
      d.dtype = in[i].first;
      d.ndim = static_cast<int32_t>(in[i].second.first.size());
      d.shape = in[i].second.first.data();
      std::string e = TakeStatus(kiln_session_set_input_index(s_, static_cast<int32_t>(i), &d));
      if (!e.empty()) return e;
    }
    return TakeStatus(kiln_session_run(s_));
  }

  // Output `o`: its shape and float values.
  std::pair<std::vector<int64_t>, Vec> Output(int32_t o) {
    const DLTensor* t = nullptr;
    std::string e = TakeStatus(kiln_session_get_output(s_, o, &t));
    EXPECT_EQ(e, "");
    if (t == nullptr) return {};
    std::vector<int64_t> shape(t->shape, t->shape + t->ndim);
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    EXPECT_EQ(t->dtype.code, kDLFloat);
    const float* p = static_cast<const float*>(t->data);
    return {shape, Vec(p, p + n)};
  }

 private:
  KilnArtifact* a_ = nullptr;
  KilnSession* s_ = nullptr;
  std::string status_;
};

constexpr DLDataType kF32{kDLFloat, 32, 1};
constexpr DLDataType kI64{kDLInt, 64, 1};
constexpr DLDataType kBool{6, 8, 1};  // kDLBool (newer dlpack headers name it)

void ExpectOutput(Compiled& c, int32_t o, const std::vector<int64_t>& shape, const Vec& want) {
  auto [got_shape, got] = c.Output(o);
  ASSERT_EQ(got_shape, shape) << "output " << o;
  ASSERT_EQ(got.size(), want.size()) << "output " << o;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "output " << o << "[" << i << "]";
}

TEST(OnnxControlFlow, IfWithTwoOutputs) {
  Compiled c(IfTwoOutputsModel(), "if2");
  ASSERT_EQ(c.status(), "");
  EXPECT_STREQ(kiln_artifact_graph_json(c.artifact()), "");  // a VM artifact
  const Vec y = {0.5f, -1.f, 2.f, 0.25f, -3.f, 1.f};
  for (const Vec& x : {Vec{1, 2, -0.5f, 3, 0, 1}, Vec{-1, -2, 0.5f, -3, 0, -1}}) {
    ASSERT_EQ(c.Run({{kF32, {{2, 3}, x.data()}}, {kF32, {{2, 3}, y.data()}}}), "");
    auto [r, o2] = RefIfTwoOutputs(x, y);
    ExpectOutput(c, 0, {2, 3}, r);
    ExpectOutput(c, 1, {2, 3}, o2);
  }
}

TEST(OnnxControlFlow, LoopWithATripCountAndScanOutputs) {
  Compiled c(LoopTripCountModel(), "loop_m");
  ASSERT_EQ(c.status(), "");
  const Vec v0 = {1, 2, 3}, w = {0.5f, -1, 2};
  ASSERT_EQ(c.Run({{kF32, {{3}, v0.data()}}, {kF32, {{3}, w.data()}}}), "");
  auto [v, scan] = RefLoopTripCount(v0, w);
  ExpectOutput(c, 0, {3}, v);
  ExpectOutput(c, 1, {4, 3}, scan);
}

TEST(OnnxControlFlow, LoopWithAConditionAndARunTimeTripCount) {
  Compiled c(LoopWhileModel(), "loop_while");
  ASSERT_EQ(c.status(), "");
  struct Case {
    int64_t m;
    bool cond;
    float limit;
  };
  // One artifact: 0, 2, 4 and 6 iterations (the scan output's length varies).
  for (const Case& k : {Case{10, true, 100}, Case{2, true, 100}, Case{10, false, 100},
                        Case{0, true, 5}, Case{10, true, 1}, Case{10, true, 30}}) {
    SCOPED_TRACE(absl::StrCat("M=", k.m, " cond=", k.cond, " limit=", k.limit));
    const Vec v0 = {1, 2};
    const uint8_t cond = k.cond;
    ASSERT_EQ(c.Run({{kI64, {{}, &k.m}}, {kBool, {{}, &cond}}, {kF32, {{2}, v0.data()}},
                     {kF32, {{}, &k.limit}}}),
              "");
    auto [v, scan] = RefLoopWhile(k.m, k.cond, v0, k.limit);
    ExpectOutput(c, 0, {2}, v);
    ExpectOutput(c, 1, {static_cast<int64_t>(scan.size() / 2), 2}, scan);
  }
}

TEST(OnnxControlFlow, ScanOpset9ReverseAlongAxis1) {
  Compiled c(ScanReverseModel(), "scan_rev");
  ASSERT_EQ(c.status(), "");
  const Vec s0 = {1, -1}, x = {1, 2, 3, 4, 5, -1, -2, 0.5f, 0.25f, 3};
  ASSERT_EQ(c.Run({{kF32, {{2}, s0.data()}}, {kF32, {{2, 5}, x.data()}}}), "");
  auto [s, ys] = RefScanReverse(s0, x);
  ExpectOutput(c, 0, {2}, s);
  ExpectOutput(c, 1, {2, 5}, ys);
}

TEST(OnnxControlFlow, ScanOpset8WithABatch) {
  Compiled c(Scan8Model(), "scan8");
  ASSERT_EQ(c.status(), "");
  const Vec s0 = {1, 2, -1, 0}, x = {1, 2, 3, 4, 5, 6, -1, -2, -3, 0.5f, 0.25f, 8};
  ASSERT_EQ(c.Run({{kF32, {{2, 2}, s0.data()}}, {kF32, {{2, 3, 2}, x.data()}}}), "");
  auto [s, ys] = RefScan8(s0, x);
  ExpectOutput(c, 0, {2, 2}, s);
  ExpectOutput(c, 1, {2, 3, 2}, ys);
}

TEST(OnnxControlFlow, NestedLoopsAndIf) {
  Compiled c(NestedModel(), "nested");
  ASSERT_EQ(c.status(), "");
  const Vec v0 = {1, -1, 0.5f}, w = {0.25f, 2, -1};
  for (auto [m, k] : std::vector<std::pair<int64_t, int64_t>>{{3, 2}, {0, 4}, {5, 0}, {40, 3}}) {
    SCOPED_TRACE(absl::StrCat("M=", m, " K=", k));
    ASSERT_EQ(c.Run({{kI64, {{}, &m}}, {kI64, {{}, &k}}, {kF32, {{3}, v0.data()}},
                     {kF32, {{3}, w.data()}}}),
              "");
    ExpectOutput(c, 0, {3}, RefNested(m, k, v0, w));
  }
}

TEST(OnnxControlFlow, ALongLoopStaysWithinTheCallDepth) {
  // 20,000 outer iterations, each one VM frame deep (the VM allows 100,000),
  // each running an inner loop of one iteration.
  Compiled c(NestedModel(), "nested_long");
  ASSERT_EQ(c.status(), "");
  const int64_t m = 20000, k = 1;
  const Vec v0 = {1, -1, 0.5f}, w = {0.25f, 2, -1};
  ASSERT_EQ(c.Run({{kI64, {{}, &m}}, {kI64, {{}, &k}}, {kF32, {{3}, v0.data()}}, {kF32, {{3}, w.data()}}}), "");
  ExpectOutput(c, 0, {3}, RefNested(m, k, v0, w));
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
