// nn.conv2d: stage structure (pad, reduction axes, tags, attrs) and values
// against the interpreter for layouts, padding, strides, dilation, groups,
// depthwise, blocked layouts and dtypes.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lowering/compute/nn/nn_test_util.h"

namespace kiln::lowering::nn_testing {
namespace {

using ::testing::HasSubstr;

ComputedCall Ok(absl::StatusOr<ComputedCall> c) {
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : ComputedCall();
}

std::string T(const std::string& shape, const std::string& dtype = "float32") {
  return "Tensor[(" + shape + "), " + dtype + "]";
}

TEST(Conv2DStructure, PadStageAndReduction) {
  ComputedCall c = Ok(ComputeCall("nn.conv2d(%x, %w, padding=[1, 1])",
                                  {{"x", T("1, 3, 8, 8")}, {"w", T("4, 3, 3, 3")}}));
  ASSERT_EQ(c.outputs.size(), 1u);
  const te::OperationNode& conv = *c.outputs[0].op();
  EXPECT_EQ(conv.name, "conv2d");
  EXPECT_EQ(conv.tag, "conv2d_nchw");
  ASSERT_EQ(conv.reduce_axis.size(), 3u);
  EXPECT_EQ(conv.reduce_axis[0]->var->name, "rc");
  EXPECT_EQ(conv.reduce_axis[1]->var->name, "ry");
  EXPECT_EQ(conv.reduce_axis[2]->var->name, "rx");
  EXPECT_EQ(conv.attrs.at("data_layout"), "NCHW");
  EXPECT_EQ(conv.attrs.at("kernel_layout"), "OIHW");
  EXPECT_EQ(conv.attrs.at("padding"), "1,1,1,1");
  EXPECT_EQ(conv.attrs.at("groups"), "1");
  EXPECT_EQ(c.outputs[0].dtype(), DataType::Float(32));
  std::vector<te::Tensor> in = conv.InputTensors();
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0].op()->name, "pad");
  EXPECT_EQ(in[0].op()->tag, "injective");
  EXPECT_TRUE(in[0].op()->reduce_axis.empty());
  EXPECT_EQ(in[0].shape().size(), 4u);
  int64_t h = 0;
  EXPECT_TRUE(tir::IsConstInt(in[0].shape()[2], &h));
  EXPECT_EQ(h, 10);
  EXPECT_EQ(in[1], c.inputs[1]);
}

TEST(Conv2DStructure, NoPaddingReadsDataDirectly) {
  ComputedCall c = Ok(ComputeCall("nn.conv2d(%x, %w)", {{"x", T("1, 3, 8, 8")}, {"w", T("4, 3, 3, 3")}}));
  std::vector<te::Tensor> in = c.outputs[0].op()->InputTensors();
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0], c.inputs[0]);
}

TEST(Conv2DStructure, TagsByLayout) {
  EXPECT_EQ(Ok(ComputeCall("nn.conv2d(%x, %w, data_layout=\"NHWC\", kernel_layout=\"HWIO\")",
                           {{"x", T("1, 8, 8, 3")}, {"w", T("3, 3, 3, 4")}}))
                .outputs[0].op()->tag,
            "conv2d_nhwc");
  ComputedCall b = Ok(ComputeCall(
      "nn.conv2d(%x, %w, data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\", padding=[1, 1])",
      {{"x", T("1, 2, 6, 6, 16")}, {"w", T("2, 2, 3, 3, 16, 16")}}));
  EXPECT_EQ(b.outputs[0].op()->tag, "conv2d_nchwc");
  EXPECT_EQ(b.outputs[0].op()->attrs.at("kernel_layout"), "OIHW16i16o");
  EXPECT_EQ(b.outputs[0].ndim(), 5);
  EXPECT_EQ(Ok(ComputeCall("nn.conv2d(%x, %w, groups=4)", {{"x", T("1, 4, 8, 8")}, {"w", T("4, 1, 3, 3")}}))
                .outputs[0].op()->attrs.at("depthwise"),
            "1");
}

TEST(Conv2DStructure, Float16AccumulatesInFloat32) {
  ComputedCall c = Ok(ComputeCall("nn.conv2d(%x, %w)", {{"x", T("1, 3, 8, 8", "float16")},
                                                        {"w", T("4, 3, 3, 3", "float16")}}));
  const te::OperationNode& cast = *c.outputs[0].op();
  EXPECT_EQ(cast.name, "conv2d_cast");
  EXPECT_EQ(cast.tag, "elemwise");
  EXPECT_EQ(c.outputs[0].dtype(), DataType::Float(16));
  std::vector<te::Tensor> in = cast.InputTensors();
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].op()->tag, "conv2d_nchw");
  EXPECT_EQ(in[0].dtype(), DataType::Float(32));
}

TEST(Conv2DStructure, Int8AccumulatesInOutDtype) {
  ComputedCall c = Ok(ComputeCall("nn.conv2d(%x, %w, out_dtype=int32)",
                                  {{"x", T("1, 3, 8, 8", "uint8")}, {"w", T("4, 3, 3, 3", "int8")}}));
  EXPECT_EQ(c.outputs[0].op()->tag, "conv2d_nchw");
  EXPECT_EQ(c.outputs[0].dtype(), DataType::Int(32));
}

TEST(Conv2DStructure, BadLayoutIsAnError) {
  absl::StatusOr<ComputedCall> c =
      ComputeCallWithType("nn.conv2d(%x, %w, data_layout=\"NCHW4h\")",
                          {{"x", T("1, 3, 8, 8, 4")}, {"w", T("4, 3, 3, 3")}}, T("1, 4, 6, 6"));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("data_layout \"NCHW4h\""));
  c = ComputeCallWithType("nn.conv2d(%x, %w, groups=2)", {{"x", T("1, 3, 8, 8")}, {"w", T("4, 3, 3, 3")}},
                          T("1, 4, 6, 6"));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("groups=2"));
}

// ---- Values against the interpreter --------------------------------------

void Check(const std::string& attrs, const std::string& xs, const std::string& ws,
           const std::string& xdt = "float32", const std::string& wdt = "") {
  SCOPED_TRACE(attrs);
  absl::Status st = CompareWithInterpreter(
      "nn.conv2d(%x, %w" + attrs + ")", {{"x", T(xs, xdt)}, {"w", T(ws, wdt.empty() ? xdt : wdt)}});
  EXPECT_TRUE(st.ok()) << st;
}

TEST(Conv2DValues, Nchw) {
  Check("", "1, 3, 7, 7", "4, 3, 3, 3");
  Check(", padding=[1, 1]", "2, 3, 7, 7", "4, 3, 3, 3");
  Check(", padding=[2]", "1, 2, 5, 6", "3, 2, 3, 2");
  Check(", channels=4, kernel_size=[3, 3], strides=[2], dilation=[1]", "1, 3, 7, 7", "4, 3, 3, 3");
}

TEST(Conv2DValues, StridesAsymmetricPaddingDilation) {
  Check(", strides=[2, 2], padding=[1, 0, 0, 2]", "1, 3, 7, 8", "4, 3, 3, 3");
  Check(", strides=[2, 1], padding=[0, 1, 2, 0]", "1, 2, 9, 7", "2, 2, 2, 3");
  Check(", dilation=[2, 2], padding=[2, 2]", "1, 2, 7, 7", "3, 2, 3, 3");
  Check(", dilation=[1, 3], strides=[3, 2], padding=[1, 2, 3, 4]", "1, 2, 8, 9", "2, 2, 3, 2");
}

TEST(Conv2DValues, GroupsAndDepthwise) {
  Check(", groups=2, padding=[1, 1]", "1, 4, 6, 6", "6, 2, 3, 3");
  Check(", groups=4, padding=[1, 1]", "1, 4, 6, 6", "4, 1, 3, 3");             // depthwise
  Check(", groups=4, padding=[1, 1], strides=[2, 2]", "1, 4, 6, 6", "8, 1, 3, 3");  // multiplier 2
  Check(", groups=3, data_layout=\"NHWC\", kernel_layout=\"HWOI\"", "1, 5, 5, 3", "3, 3, 3, 1");
}

TEST(Conv2DValues, NhwcAndOtherKernelLayouts) {
  Check(", data_layout=\"NHWC\", kernel_layout=\"HWIO\", padding=[1, 1]", "1, 6, 6, 3", "3, 3, 3, 4");
  Check(", data_layout=\"NHWC\", kernel_layout=\"OHWI\", strides=[2, 2]", "2, 7, 6, 3", "4, 3, 2, 3");
  Check(", data_layout=\"NHWC\", kernel_layout=\"HWIO\", out_layout=\"NCHW\"", "1, 5, 5, 2", "3, 3, 2, 4");
}

TEST(Conv2DValues, BlockedLayouts) {
  Check(", data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\", padding=[1, 1]", "1, 1, 3, 3, 16",
        "1, 1, 3, 3, 16, 16");
  Check(", data_layout=\"NCHW16c\", kernel_layout=\"OIHW16i16o\", strides=[2, 2]", "1, 2, 3, 3, 16",
        "1, 2, 2, 2, 16, 16");
  Check(", data_layout=\"NCHW4c\", kernel_layout=\"OIHW4i4o\", groups=2, padding=[1, 1]",
        "1, 2, 5, 5, 4", "2, 1, 3, 3, 4, 4");
  Check(", data_layout=\"NCHW\", kernel_layout=\"OIHW\", out_layout=\"NCHW4c\"", "1, 3, 5, 5",
        "8, 3, 3, 3");
  Check(", data_layout=\"NCHW4c\", kernel_layout=\"OIHW2i\", out_layout=\"NCHW\", strides=[2, 2]",
        "1, 2, 6, 6, 4", "3, 4, 3, 3, 2");
}

TEST(Conv2DValues, Dtypes) {
  Check(", padding=[1, 1]", "1, 3, 6, 6", "4, 3, 3, 3", "float16");
  Check(", padding=[1, 1]", "1, 3, 6, 6", "4, 3, 3, 3", "bfloat16");
  Check(", padding=[1, 1]", "1, 3, 6, 6", "4, 3, 3, 3", "float64");
  Check(", padding=[1, 1], out_dtype=float32", "1, 3, 6, 6", "4, 3, 3, 3", "float16");
  Check(", padding=[1, 1], out_dtype=int32", "1, 3, 6, 6", "4, 3, 3, 3", "int8");
  Check(", padding=[1, 1], out_dtype=int32", "1, 3, 6, 6", "4, 3, 3, 3", "uint8", "int8");
  Check(", padding=[1, 1]", "1, 3, 6, 6", "4, 3, 3, 3", "int8");  // wraps in int8
  Check(", padding=[1, 1], out_dtype=float32", "1, 3, 6, 6", "4, 3, 3, 3", "int8");
  Check(", padding=[1, 1], out_dtype=int32", "1, 3, 6, 6", "4, 3, 3, 3", "float32");
  Check(", out_dtype=int64, groups=3", "1, 3, 5, 5", "3, 1, 2, 2", "int32");
}

}  // namespace
}  // namespace kiln::lowering::nn_testing
