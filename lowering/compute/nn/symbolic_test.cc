// Every compute builds on symbolic shapes (dims as tir vars shared by name)
// and passes ValidateCompute.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lowering/compute/nn/nn_test_util.h"

namespace kiln::lowering::nn_testing {
namespace {

std::string T(const std::string& shape, const std::string& dtype = "float32") {
  return "Tensor[(" + shape + "), " + dtype + "]";
}

void Build(const std::string& text, const std::vector<std::pair<std::string, std::string>>& in) {
  SCOPED_TRACE(text);
  absl::StatusOr<ComputedCall> c = ComputeCall(text, in);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_FALSE(c->outputs.empty());
  for (size_t i = 0; i < c->outputs.size(); ++i) {
    EXPECT_EQ(c->outputs[i].dtype(), c->out_dtypes[i]);
    EXPECT_EQ(c->outputs[i].ndim(), static_cast<int>(c->out_shapes[i].size()));
  }
}

TEST(SymbolicShapes, EveryOp) {
  Build("nn.conv2d(%x, %w, padding=[1, 1], strides=[2, 2])", {{"x", T("n, 3, h, w")}, {"w", T("4, 3, 3, 3")}});
  Build("nn.conv2d(%x, %w, groups=3, data_layout=\"NHWC\", kernel_layout=\"HWOI\")",
        {{"x", T("n, h, w, 3")}, {"w", T("3, 3, 3, 1")}});
  Build("nn.conv2d(%x, %w, data_layout=\"NCHW4c\", kernel_layout=\"OIHW4i4o\", padding=[1, 1])",
        {{"x", T("n, 2, h, w, 4")}, {"w", T("2, 2, 3, 3, 4, 4")}});
  Build("nn.dense(%a, %b)", {{"a", T("n, k")}, {"b", T("5, k")}});
  Build("nn.matmul(%a, %b, transpose_a=true)", {{"a", T("b, k, m")}, {"b", T("k, 5")}});
  Build("nn.batch_matmul(%a, %b)", {{"a", T("b, m, k")}, {"b", T("b, n, k")}});
  Build("nn.batch_matmul(%a, %b)", {{"a", T("1, m, k")}, {"b", T("b, n, k")}});
  Build("nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=true)",
        {{"x", T("n, c, h, w")}});
  Build("nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=true)",
        {{"x", T("n, c, h, w")}});
  Build("nn.avg_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=true)",
        {{"x", T("n, c, h, w", "int32")}});
  Build("nn.global_avg_pool2d(%x)", {{"x", T("n, c, h, w", "int32")}});
  Build("nn.global_max_pool2d(%x, layout=\"NHWC\")", {{"x", T("n, h, w, c")}});
  Build("nn.batch_norm(%x, %g, %b, %m, %v)",
        {{"x", T("n, c, h, w")}, {"g", T("c")}, {"b", T("c")}, {"m", T("c")}, {"v", T("c")}});
  Build("nn.layer_norm(%x, %g, %b)", {{"x", T("n, d")}, {"g", T("d")}, {"b", T("d")}});
  Build("nn.softmax(%x, axis=1)", {{"x", T("n, d, 3")}});
  Build("nn.log_softmax(%x)", {{"x", T("n, d")}});
  Build("nn.dropout(%x)", {{"x", T("n, d")}});
  Build("nn.pad(%x, %v, pad_width=[[1, 1], [2, 0]], pad_mode=\"reflect\")", {{"x", T("n, d")}, {"v", T("")}});
  Build("nn.pad(%x, %v, pad_width=[[1, 1], [2, 0]])", {{"x", T("n, d")}, {"v", T("")}});
}

}  // namespace
}  // namespace kiln::lowering::nn_testing
