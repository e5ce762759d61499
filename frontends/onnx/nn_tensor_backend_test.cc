// The ONNX backend node tests (Debian's libonnx-testdata) of the operators
// that convert_nn.cc and convert_tensor.cc convert: each case's model.onnx is
// imported (graph inputs the importer needs as values, reported through
// kNeedsConstantPayload, are frozen to test_data_set_0's values), run by the
// reference interpreter on test_data_set_0, and compared with the stored
// outputs (rtol 1e-3, atol 1e-7; NaN matches NaN).
//
// A case counts as
//   pass         every output matches;
//   unsupported  the import says Unimplemented (an operator or a form the
//                converters leave unconverted), or the model uses types kiln
//                has no tensors for (strings, sequences, optionals);
//   fail         it imports but runs into an error or gives a wrong answer.
// The test fails on any `fail` outside kKnownFailures, and prints the counts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "frontends/onnx/importer.h"
#include "interpreter/interpreter.h"
#include "interpreter/value.h"
#include "ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend {
namespace {

namespace fs = std::filesystem;

constexpr char kNodeDir[] = "external/onnx_testdata/node";

// The case-name prefixes of this test's operators (after "test_"). A case
// belongs to them when its name is the prefix or continues with '_'.
const char* const kPrefixes[] = {
    // convert_nn*.cc
    "conv_with", "basic_conv_with_padding", "basic_conv_without_padding", "convtranspose",
    "averagepool", "maxpool", "globalaveragepool", "globalmaxpool", "batchnorm", "instancenorm",
    "layer_normalization", "lrn", "gemm", "matmul_2d", "matmul_3d", "matmul_4d", "softmax",
    "logsoftmax", "hardmax", "dropout", "training_dropout", "flatten", "mvn", "nllloss", "sce",
    // convert_tensor*.cc
    "constant", "constantofshape", "identity", "reshape", "transpose", "concat", "split",
    "slice", "gather", "gather_elements", "gathernd", "squeeze", "unsqueeze", "expand", "tile",
    "shape", "size", "range", "constant_pad", "edge_pad", "reflect_pad", "depthtospace",
    "spacetodepth", "onehot", "tril", "triu", "eyelike", "cumsum", "reversesequence", "top_k",
    "resize", "upsample", "scatter", "scatter_elements", "scatternd",
};

// Cases that fail for a documented reason outside these converters (none
// today; an entry is `{"test_name", "why"}`).
const std::map<std::string, std::string> kKnownFailures = {};

bool Belongs(const std::string& dir) {
  if (!absl::StartsWith(dir, "test_")) return false;
  const std::string name = dir.substr(5);
  for (const char* p : kPrefixes) {
    const std::string prefix = p;
    if (name == prefix || absl::StartsWith(name, prefix + "_")) return true;
  }
  return false;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Element i of t as double (bool as 0/1).
double At(const HostTensor& t, int64_t i) { return t.GetAsDouble(i); }

// An empty string when `got` matches `want`, else what differs.
std::string Compare(const HostTensor& got, const HostTensor& want) {
  if (got.dtype() != want.dtype())
    return absl::StrCat("dtype ", got.dtype().ToString(), ", expected ", want.dtype().ToString());
  if (got.shape() != want.shape()) {
    std::string g, w;
    for (int64_t d : got.shape()) absl::StrAppend(&g, d, ",");
    for (int64_t d : want.shape()) absl::StrAppend(&w, d, ",");
    return absl::StrCat("shape [", g, "], expected [", w, "]");
  }
  const bool fl = want.dtype().is_float();
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double g = At(got, i), w = At(want, i);
    bool ok = false;
    if (!fl) ok = got.GetAsInt64(i) == want.GetAsInt64(i);
    else if (std::isnan(w)) ok = std::isnan(g);
    else if (std::isinf(w)) ok = g == w;
    else ok = std::abs(g - w) <= 1e-7 + 1e-3 * std::abs(w);
    if (!ok) return absl::StrCat("element ", i, " is ", g, ", expected ", w);
  }
  return "";
}

enum class Outcome { kPass, kFail, kUnsupported };

struct Result {
  Outcome outcome = Outcome::kFail;
  std::string reason;
};

Result RunCase(const std::string& dir) {
  const std::string model_path = dir + "/model.onnx";
  onnx::ModelProto model;
  const std::string bytes = ReadAll(model_path);
  if (!model.ParseFromString(bytes)) return {Outcome::kFail, "model.onnx does not parse"};
  // Graph inputs that are not initializers, in order: input_<i>.pb.
  std::set<std::string> inits;
  for (const auto& t : model.graph().initializer()) inits.insert(t.name());
  std::vector<std::string> names;
  for (const auto& in : model.graph().input()) {
    if (inits.count(in.name()) != 0) continue;
    if (!in.type().has_tensor_type()) return {Outcome::kUnsupported, "a non-tensor graph input"};
    names.push_back(in.name());
  }
  for (const auto& out : model.graph().output())
    if (!out.type().has_tensor_type()) return {Outcome::kUnsupported, "a non-tensor graph output"};
  const std::string data = dir + "/test_data_set_0";
  std::map<std::string, Ref<const HostTensor>> values;
  for (size_t i = 0; i < names.size(); ++i) {
    absl::StatusOr<Ref<const HostTensor>> t =
        ReadTensorProtoFile(absl::StrCat(data, "/input_", i, ".pb"));
    if (!t.ok()) return {Outcome::kUnsupported, absl::StrCat("input ", i, ": ", t.status().message())};
    values[names[i]] = *t;
  }
  ImportOptions options;
  absl::StatusOr<Module> m = ImportOnnxBytes(bytes, options);
  for (int retry = 0; retry < 8 && !m.ok(); ++retry) {
    auto payload = m.status().GetPayload(kNeedsConstantPayload);
    if (!payload) break;
    for (absl::string_view name : absl::StrSplit(std::string(*payload), ',')) {
      auto it = values.find(std::string(name));
      if (it == values.end()) return {Outcome::kFail, absl::StrCat("needs unknown input ", name)};
      options.frozen_inputs[std::string(name)] = it->second;
    }
    m = ImportOnnxBytes(bytes, options);
  }
  if (!m.ok()) {
    const absl::StatusCode code = m.status().code();
    const bool unsupported = code == absl::StatusCode::kUnimplemented ||
                             absl::StrContains(m.status().message(), "STRING");
    return {unsupported ? Outcome::kUnsupported : Outcome::kFail,
            absl::StrCat("import: ", m.status().ToString())};
  }
  std::vector<interp::Value> args;
  for (const std::string& n : names)
    if (options.frozen_inputs.count(n) == 0) args.push_back(interp::Value::Tensor(values[n]));
  absl::StatusOr<interp::Value> out = interp::RunFunction(*m, "main", std::move(args));
  if (!out.ok()) return {Outcome::kFail, absl::StrCat("run: ", out.status().ToString())};
  std::vector<interp::Value> outs;
  if (model.graph().output_size() == 1) outs.push_back(*out);
  else if (out->is_tuple()) outs = out->fields();
  for (int i = 0; i < model.graph().output_size(); ++i) {
    absl::StatusOr<Ref<const HostTensor>> want =
        ReadTensorProtoFile(absl::StrCat(data, "/output_", i, ".pb"));
    if (!want.ok()) return {Outcome::kUnsupported, absl::StrCat("output ", i, ": ", want.status().message())};
    if (static_cast<size_t>(i) >= outs.size() || !outs[static_cast<size_t>(i)].is_tensor())
      return {Outcome::kFail, absl::StrCat("output ", i, " is missing or not a tensor")};
    const std::string diff = Compare(*outs[static_cast<size_t>(i)].tensor(), **want);
    if (!diff.empty()) return {Outcome::kFail, absl::StrCat("output ", i, ": ", diff)};
  }
  return {Outcome::kPass, ""};
}

TEST(NnTensorBackendTest, NodeCases) {
  ASSERT_TRUE(fs::is_directory(kNodeDir)) << "missing runfiles folder " << kNodeDir;
  std::vector<std::string> cases;
  for (const auto& e : fs::directory_iterator(kNodeDir))
    if (e.is_directory() && Belongs(e.path().filename().string()))
      cases.push_back(e.path().filename().string());
  std::sort(cases.begin(), cases.end());
  ASSERT_GT(cases.size(), 200u);
  int pass = 0, fail = 0, unsupported = 0;
  for (const std::string& name : cases) {
    const Result r = RunCase(absl::StrCat(kNodeDir, "/", name));
    switch (r.outcome) {
      case Outcome::kPass: ++pass; break;
      case Outcome::kUnsupported:
        ++unsupported;
        std::cout << "unsupported " << name << ": " << r.reason << "\n";
        break;
      case Outcome::kFail:
        ++fail;
        std::cout << "FAIL " << name << ": " << r.reason << "\n";
        if (kKnownFailures.count(name) == 0) ADD_FAILURE() << name << ": " << r.reason;
        break;
    }
  }
  std::cout << "backend cases: " << cases.size() << ", pass " << pass << ", fail " << fail
            << ", unsupported " << unsupported << "\n";
  EXPECT_GT(pass, 0);
}

}  // namespace
}  // namespace kiln::onnx_frontend
