// The importer linked with a selective registration of two converter families
// (elementwise, tensor): their operators import, and a model using an
// operator of a family the build leaves out is refused, naming the operator
// and its family.
#include <string>

#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::onnx_frontend {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace t = testing;

TEST(SelectiveImportTest, BuiltFamiliesImport) {
  onnx::ModelProto m = t::MakeModel(
      13, {t::MakeNode("Relu", {"x"}, {"r"}), t::MakeNode("Transpose", {"r"}, {"y"})},
      {t::MakeValueInfo("x", onnx::TensorProto::FLOAT, {2, 3})},
      {t::MakeValueInfo("y", onnx::TensorProto::FLOAT, {3, 2})});
  absl::StatusOr<Module> mod = ImportOnnxBytes(t::Serialize(m));
  EXPECT_TRUE(mod.ok()) << mod.status();
}

TEST(SelectiveImportTest, AbsentFamilyIsNamed) {
  onnx::ModelProto m = t::MakeModel(
      13,
      {t::MakeNode("Relu", {"x"}, {"r"}), t::MakeNode("Softmax", {"r"}, {"s"}, {}, "soft"),
       t::MakeNode("ReduceMax", {"s"}, {"y"}, {}, "rmax")},
      {t::MakeValueInfo("x", onnx::TensorProto::FLOAT, {2, 3})},
      {t::MakeValueInfoNoShape("y", onnx::TensorProto::FLOAT)});
  absl::StatusOr<Module> mod = ImportOnnxBytes(t::Serialize(m));
  ASSERT_FALSE(mod.ok());
  EXPECT_EQ(mod.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(mod.status().message(),
              HasSubstr("Softmax (opset 13, node 'soft': its converter family 'nn' is not in "
                        "this build)"));
  EXPECT_THAT(mod.status().message(),
              HasSubstr("ReduceMax (opset 13, node 'rmax': its converter family 'reduce' is "
                        "not in this build)"));
  EXPECT_THAT(mod.status().message(), Not(HasSubstr("Relu")));
}

TEST(SelectiveImportTest, SupportedOpsAreTheBuildsOnly) {
  std::vector<std::string> ops = SupportedOps();
  EXPECT_THAT(ops, ::testing::Contains("Relu"));
  EXPECT_THAT(ops, ::testing::Contains("Transpose"));
  EXPECT_THAT(ops, Not(::testing::Contains("Conv")));
}

}  // namespace
}  // namespace kiln::onnx_frontend
