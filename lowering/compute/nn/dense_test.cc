// nn.dense, nn.matmul, nn.batch_matmul: structure and values against the
// interpreter (leading dims, transposes, batch broadcasting, dtypes).
#include <string>

#include "gtest/gtest.h"
#include "lowering/compute/nn/nn_test_util.h"

namespace kiln::lowering::nn_testing {
namespace {

std::string T(const std::string& shape, const std::string& dtype = "float32") {
  return "Tensor[(" + shape + "), " + dtype + "]";
}

void Check(const std::string& text, const std::string& as, const std::string& bs,
           const std::string& adt = "float32", const std::string& bdt = "") {
  SCOPED_TRACE(text);
  absl::Status st = CompareWithInterpreter(text, {{"a", T(as, adt)}, {"b", T(bs, bdt.empty() ? adt : bdt)}});
  EXPECT_TRUE(st.ok()) << st;
}

TEST(DenseStructure, OneReduction) {
  absl::StatusOr<ComputedCall> c =
      ComputeCall("nn.dense(%a, %b, units=5)", {{"a", T("2, 3, 7")}, {"b", T("5, 7")}});
  ASSERT_TRUE(c.ok()) << c.status();
  const te::OperationNode& op = *c->outputs[0].op();
  EXPECT_EQ(op.name, "T_dense");
  EXPECT_EQ(op.tag, "dense");
  ASSERT_EQ(op.reduce_axis.size(), 1u);
  EXPECT_EQ(op.reduce_axis[0]->var->name, "k");
  EXPECT_EQ(c->outputs[0].ndim(), 3);
}

TEST(MatmulStructure, TagsAndAttrs) {
  absl::StatusOr<ComputedCall> c = ComputeCall("nn.matmul(%a, %b, transpose_a=true, transpose_b=true)",
                                               {{"a", T("7, 3")}, {"b", T("5, 7")}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outputs[0].op()->tag, "matmul");
  EXPECT_EQ(c->outputs[0].op()->attrs.at("transpose_a"), "1");
  absl::StatusOr<ComputedCall> b =
      ComputeCall("nn.batch_matmul(%a, %b)", {{"a", T("2, 3, 7")}, {"b", T("2, 5, 7")}});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->outputs[0].op()->tag, "batch_matmul");
  EXPECT_EQ(b->outputs[0].op()->reduce_axis.size(), 1u);
}

TEST(DenseValues, LeadingDimsAndDtypes) {
  Check("nn.dense(%a, %b)", "4, 7", "5, 7");
  Check("nn.dense(%a, %b, units=5)", "2, 3, 7", "5, 7");
  Check("nn.dense(%a, %b)", "7", "3, 7");
  Check("nn.dense(%a, %b)", "3, 9", "4, 9", "float16");
  Check("nn.dense(%a, %b)", "3, 9", "4, 9", "bfloat16");
  Check("nn.dense(%a, %b, out_dtype=float64)", "3, 9", "4, 9", "float32");
  Check("nn.dense(%a, %b, out_dtype=int32)", "3, 9", "4, 9", "int8");
  Check("nn.dense(%a, %b, out_dtype=int32)", "3, 9", "4, 9", "uint8", "int8");
  Check("nn.dense(%a, %b)", "3, 9", "4, 9", "int8");
  Check("nn.dense(%a, %b, out_dtype=int16)", "3, 9", "4, 9", "float32");
}

TEST(MatmulValues, Transposes) {
  Check("nn.matmul(%a, %b)", "3, 7", "7, 5");
  Check("nn.matmul(%a, %b, transpose_b=true)", "3, 7", "5, 7");
  Check("nn.matmul(%a, %b, transpose_a=true)", "7, 3", "7, 5");
  Check("nn.matmul(%a, %b, transpose_a=true, transpose_b=true)", "7, 3", "5, 7");
  Check("nn.matmul(%a, %b)", "7", "7, 5");
  Check("nn.matmul(%a, %b)", "2, 3, 7", "7, 5");
  Check("nn.matmul(%a, %b, transpose_a=true)", "2, 2, 7, 3", "7, 5");
  Check("nn.matmul(%a, %b, out_dtype=int32)", "3, 7", "7, 5", "int8");
  Check("nn.matmul(%a, %b)", "3, 7", "7, 5", "float16");
}

TEST(BatchMatmulValues, TransposesAndBroadcast) {
  Check("nn.batch_matmul(%a, %b)", "2, 3, 7", "2, 5, 7");
  Check("nn.batch_matmul(%a, %b, transpose_b=false)", "2, 3, 7", "2, 7, 5");
  Check("nn.batch_matmul(%a, %b, transpose_a=true)", "2, 7, 3", "2, 5, 7");
  Check("nn.batch_matmul(%a, %b, transpose_a=true, transpose_b=false)", "2, 7, 3", "2, 7, 5");
  Check("nn.batch_matmul(%a, %b)", "1, 3, 7", "3, 5, 7");
  Check("nn.batch_matmul(%a, %b)", "3, 3, 7", "1, 5, 7");
  Check("nn.batch_matmul(%a, %b, out_dtype=int32)", "2, 3, 7", "2, 5, 7", "int8");
  Check("nn.batch_matmul(%a, %b)", "2, 3, 7", "2, 5, 7", "bfloat16");
  Check("nn.batch_matmul(%a, %b, out_dtype=float32)", "2, 3, 7", "2, 5, 7", "float16");
}

}  // namespace
}  // namespace kiln::lowering::nn_testing
