// File: tests/dev_guides/clamp_add_converter_test.cc
//
// The ONNX facet of test.clamp_add (docs/dev/adding_an_operator.md, step 6):
// a one-node model of the custom domain "kiln.test" imports to the operator
// with its attributes, runs in the interpreter, and a bad node is an error
// that names it. Models are built in C++ (frontends/onnx/onnx_test_util.h),
// as the converter families' own tests do.
#include "tests/dev_guides/clamp_add_converter.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/value.h"
#include "ir/printer.h"
#include "ir/tensor.h"
#include "tests/dev_guides/clamp_add.h"

namespace kiln::dev_guides {
namespace {

namespace ox = ::kiln::onnx_frontend::testing;

onnx::ModelProto ClampAddModel(std::vector<onnx::AttributeProto> attrs, int32_t elem_type) {
  onnx::ModelProto m = ox::MakeModel(
      13,
      {ox::MakeNode("ClampAdd", {"a", "b"}, {"y"}, std::move(attrs), "clamp", kClampAddOnnxDomain)},
      {ox::MakeValueInfo("a", elem_type, {2, 3}), ox::MakeValueInfo("b", elem_type, {3})},
      {ox::MakeValueInfo("y", elem_type, {2, 3})});
  ox::SetOpset(&m, kClampAddOnnxDomain, 1);
  return m;
}

class ClampAddConverterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::Status s = RegisterClampAdd();
    ASSERT_TRUE(s.ok()) << s;
    RegisterClampAddConverter();
  }
};

TEST_F(ClampAddConverterTest, ImportsWithAttributesAndRuns) {
  absl::StatusOr<Module> m = onnx_frontend::ImportOnnxBytes(ox::Serialize(ClampAddModel(
      {ox::AttrFloat("min", -1.0f), ox::AttrFloat("max", 2.5f)}, onnx::TensorProto::FLOAT)));
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string text = PrintModule(*m);
  EXPECT_TRUE(absl::StrContains(text, "test.clamp_add(%a, %b, a_min=-1.0, a_max=2.5)")) << text;
  Ref<const HostTensor> a = *HostTensor::FromVector<float>(DataType::Float(32), {2, 3},
                                                           std::vector<float>{-5, 0, 1, 2, 3, 4});
  Ref<const HostTensor> b = *HostTensor::FromVector<float>(DataType::Float(32), {3},
                                                           std::vector<float>{0.5f, 0.5f, 0.5f});
  absl::StatusOr<interp::Value> y =
      interp::RunFunction(*m, "main", {interp::Value::Tensor(a), interp::Value::Tensor(b)});
  ASSERT_TRUE(y.ok()) << y.status();
  const std::vector<double> want = {-1, 0.5, 1.5, 2.5, 2.5, 2.5};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(y->tensor()->GetAsDouble(static_cast<int64_t>(i)), want[i]) << i;
  }
}

TEST_F(ClampAddConverterTest, DefaultsAreZeroAndSix) {
  absl::StatusOr<Module> m =
      onnx_frontend::ImportOnnxBytes(ox::Serialize(ClampAddModel({}, onnx::TensorProto::FLOAT)));
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string text = PrintModule(*m);
  EXPECT_TRUE(absl::StrContains(text, "test.clamp_add(%a, %b)")) << text;
}

TEST_F(ClampAddConverterTest, ErrorsNameTheNode) {
  absl::StatusOr<Module> m = onnx_frontend::ImportOnnxBytes(ox::Serialize(ClampAddModel(
      {ox::AttrFloat("min", 3.0f), ox::AttrFloat("max", 1.0f)}, onnx::TensorProto::FLOAT)));
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "clamp")) << m.status();
  EXPECT_TRUE(absl::StrContains(m.status().message(), "min (3) must not exceed max (1)"))
      << m.status();
  // An integer model: the relation's error, with the node named by Call().
  m = onnx_frontend::ImportOnnxBytes(ox::Serialize(ClampAddModel({}, onnx::TensorProto::INT32)));
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "clamp")) << m.status();
  EXPECT_TRUE(absl::StrContains(m.status().message(), "expected a float32 or float64 tensor"))
      << m.status();
}

}  // namespace
}  // namespace kiln::dev_guides
