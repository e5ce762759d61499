// File: tests/onnx/models/models_test.cc
//
// Small real-architecture ONNX models (made by make_models.py with random
// weights; expected outputs computed there with NumPy, independently of kiln)
// imported, run by the interpreter, compiled to a .so, loaded by the C
// runtime and run: both must match NumPy, and each other.
//
//   models_test <make_models.py's OUT_DIR>/resnet_mini/model.onnx
// (any model file of that directory: the test finds the others beside it)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "c_api/compiler.h"
#include "frontends/onnx/importer.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "kiln/runtime.h"

namespace kiln {
namespace {

std::string g_dir;

DLTensor ToDL(const HostTensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw_data());
  d.device = DLDevice{kDLCPU, 0};
  d.ndim = t.ndim();
  d.dtype = DLDataType{static_cast<uint8_t>(t.dtype().code()), static_cast<uint8_t>(t.dtype().bits()),
                       static_cast<uint16_t>(t.dtype().lanes())};
  d.shape = const_cast<int64_t*>(t.shape().data());
  return d;
}

// |got - want| <= atol + rtol * |want| for every element (float32 tensors).
::testing::AssertionResult Close(const float* got, const HostTensor& want, double rtol, double atol) {
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    double w = want.data<float>()[i];
    double g = got[i];
    if (!std::isfinite(g) || std::abs(g - w) > atol + rtol * std::abs(w)) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << g << ", want " << w;
    }
  }
  return ::testing::AssertionSuccess();
}

void CheckModel(const std::string& name) {
  const std::string dir = absl::StrCat(g_dir, "/", name);
  absl::StatusOr<Ref<const HostTensor>> input =
      onnx_frontend::ReadTensorProtoFile(dir + "/test_data_set_0/input_0.pb");
  ASSERT_TRUE(input.ok()) << input.status();
  absl::StatusOr<Ref<const HostTensor>> expected =
      onnx_frontend::ReadTensorProtoFile(dir + "/test_data_set_0/output_0.pb");
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ((*expected)->dtype(), DataType::Float(32));

  absl::StatusOr<Module> m = onnx_frontend::ImportOnnxFile(dir + "/model.onnx");
  ASSERT_TRUE(m.ok()) << m.status();

  // The interpreter on the imported graph vs NumPy.
  absl::StatusOr<interp::Value> interp_out =
      interp::RunFunction(*m, "main", {interp::Value::Tensor(*input)});
  ASSERT_TRUE(interp_out.ok()) << interp_out.status();
  ASSERT_EQ(interp_out->kind(), interp::ValueKind::kTensor);
  EXPECT_TRUE(Close(interp_out->tensor()->data<float>(), **expected, 1e-4, 1e-5)) << "interpreter";

  // Compiled to a .so and run by the C runtime vs NumPy.
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string so = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/", name, ".so");
  absl::StatusOr<compiler::CompileReport> r = compiler::CompileToLibrary(*m, {}, so);
  ASSERT_TRUE(r.ok()) << r.status();
  if (name.starts_with("resnet_mini")) {
    // The second residual block's fused functions differ from the first's
    // only in their weights: they share its kernels.
    EXPECT_LT(r->num_kernels, r->num_fused_calls);
  }
  KilnArtifact* a = nullptr;
  KilnStatus* st = kiln_artifact_load(so.c_str(), &a);
  ASSERT_EQ(st, nullptr) << kiln_status_message(st);
  KilnSession* s = nullptr;
  st = kiln_session_create(a, nullptr, &s);
  ASSERT_EQ(st, nullptr) << kiln_status_message(st);
  const char* input_name = nullptr;
  DLTensor info{};
  ASSERT_EQ(kiln_artifact_input_info(a, 0, &input_name, &info), nullptr);
  DLTensor in = ToDL(**input);
  st = kiln_session_set_input(s, input_name, &in);
  ASSERT_EQ(st, nullptr) << kiln_status_message(st);
  st = kiln_session_run(s);
  ASSERT_EQ(st, nullptr) << kiln_status_message(st);
  const DLTensor* out = nullptr;
  ASSERT_EQ(kiln_session_get_output(s, 0, &out), nullptr);
  ASSERT_EQ(out->ndim, (*expected)->ndim());
  for (int i = 0; i < out->ndim; ++i) EXPECT_EQ(out->shape[i], (*expected)->shape()[i]);
  EXPECT_TRUE(Close(static_cast<const float*>(out->data), **expected, 1e-4, 1e-5)) << "compiled";
  kiln_session_release(s);
  kiln_artifact_release(a);
}

TEST(OnnxModels, ResNetMini) { CheckModel("resnet_mini"); }
TEST(OnnxModels, MobileNetMini) { CheckModel("mobilenet_mini"); }
TEST(OnnxModels, BertMini) { CheckModel("bert_mini"); }
TEST(OnnxModels, ResNetMiniExternalWeights) { CheckModel("resnet_mini_external"); }

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: models_test OUT_DIR/resnet_mini/model.onnx\n");
    return 2;
  }
  kiln::g_dir = std::filesystem::path(argv[1]).parent_path().parent_path().string();
  return RUN_ALL_TESTS();
}
