// Tests of nn.dense, nn.matmul and nn.batch_matmul.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "types/rel_test_util.h"

namespace kiln::types::testing {
namespace {

using ::testing::HasSubstr;

TEST(Dense, Shapes) {
  EXPECT_EQ(Infer("nn.dense", {T("n, 784"), T("128, 784")}), "Tensor[(n, 128), float32]");
  EXPECT_EQ(Infer("nn.dense", {T("2, 5, 16"), T("8, 16")}), "Tensor[(2, 5, 8), float32]");
  EXPECT_EQ(Infer("nn.dense", {T("16"), T("8, 16")}), "Tensor[(8,), float32]");
  EXPECT_EQ(Infer("nn.dense", {T("4, k"), T("8, 16")}), "Tensor[(4, 8), float32]");
  EXPECT_EQ(Infer("nn.dense", {T("4, 16", "int8"), T("8, 16", "int8")},
                  Make<DenseAttrs>([](auto& a) { a.out_dtype = DataType::Int(32); })),
            "Tensor[(4, 8), int32]");
}

TEST(Dense, Errors) {
  EXPECT_EQ(Infer("nn.dense", {T("4, 16"), T("8, 15")}),
            "error: nn.dense: reduction dims differ: 16 in Tensor[(4, 16), float32] vs 15 in "
            "Tensor[(8, 15), float32]");
  EXPECT_THAT(Infer("nn.dense", {T("4, 16"), T("16")}),
              HasSubstr("argument 1 (weight) has type Tensor[(16,), float32]; expected a 2-D"));
  EXPECT_THAT(Infer("nn.dense", {T(""), T("8, 16")}), HasSubstr("argument 0 (data)"));
  EXPECT_THAT(Infer("nn.dense", {T("4, 16"), T("8, 16")},
                    Make<DenseAttrs>([](auto& a) { a.units = 4; })),
              HasSubstr("units=4 but weight has 8 rows"));
  EXPECT_THAT(Infer("nn.dense", {T("4, 16"), T("8, 16", "float16")}), HasSubstr("same dtype"));
}

TEST(Dense, AssignsUnknownWeightFromUnits) {
  EXPECT_EQ(Infer("nn.dense", {T("4, 16"), MakeIncompleteType()}), "unsolved");
  RelResult r = RunRel("nn.dense", {T("n, 16"), MakeIncompleteType()},
                       Make<DenseAttrs>([](auto& a) { a.units = 10; }));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(TypeToString(r.output), "Tensor[(n, 10), float32]");
  EXPECT_EQ(TypeToString(r.reporter.Get(r.args[1])), "Tensor[(10, 16), float32]");
}

Attrs MM(bool ta, bool tb) {
  return Make<MatmulAttrs>([=](MatmulAttrs& a) {
    a.transpose_a = ta;
    a.transpose_b = tb;
  });
}

TEST(Matmul, Transposes) {
  EXPECT_EQ(Infer("nn.matmul", {T("4, 3"), T("3, 5")}), "Tensor[(4, 5), float32]");
  EXPECT_EQ(Infer("nn.matmul", {T("4, 3"), T("5, 3")}, MM(false, true)), "Tensor[(4, 5), float32]");
  EXPECT_EQ(Infer("nn.matmul", {T("3, 4"), T("3, 5")}, MM(true, false)), "Tensor[(4, 5), float32]");
  EXPECT_EQ(Infer("nn.matmul", {T("3, 4"), T("5, 3")}, MM(true, true)), "Tensor[(4, 5), float32]");
  EXPECT_EQ(Infer("nn.matmul", {T("b, 4, 3"), T("3, 5")}), "Tensor[(b, 4, 5), float32]");
  EXPECT_THAT(Infer("nn.matmul", {T("4, 3"), T("5, 3")}), HasSubstr("reduction dims differ: 3"));
  EXPECT_THAT(Infer("nn.matmul", {T("4"), T("4, 5")}, MM(true, false)),
              HasSubstr("argument 0 (tensor_a) has type Tensor[(4,), float32]; expected a tensor "
                        "of rank >= 2"));
  EXPECT_THAT(Infer("nn.matmul", {T("4, 3"), T("2, 3, 5")}), HasSubstr("argument 1 (tensor_b)"));
}

Attrs BMM(bool ta, bool tb) {
  return Make<BatchMatmulAttrs>([=](BatchMatmulAttrs& a) {
    a.transpose_a = ta;
    a.transpose_b = tb;
  });
}

TEST(BatchMatmul, Transposes) {
  EXPECT_EQ(Infer("nn.batch_matmul", {T("2, 4, 3"), T("2, 5, 3")}), "Tensor[(2, 4, 5), float32]");
  EXPECT_EQ(Infer("nn.batch_matmul", {T("2, 4, 3"), T("2, 3, 5")}, BMM(false, false)),
            "Tensor[(2, 4, 5), float32]");
  EXPECT_EQ(Infer("nn.batch_matmul", {T("2, 3, 4"), T("2, 3, 5")}, BMM(true, false)),
            "Tensor[(2, 4, 5), float32]");
  EXPECT_EQ(Infer("nn.batch_matmul", {T("2, 3, 4"), T("2, 5, 3")}, BMM(true, true)),
            "Tensor[(2, 4, 5), float32]");
}

TEST(BatchMatmul, BatchBroadcast) {
  EXPECT_EQ(Infer("nn.batch_matmul", {T("1, 4, 3"), T("8, 5, 3")}), "Tensor[(8, 4, 5), float32]");
  EXPECT_EQ(Infer("nn.batch_matmul", {T("n, 4, 3"), T("1, 5, 3")}), "Tensor[(n, 4, 5), float32]");
  EXPECT_EQ(Infer("nn.batch_matmul", {T("2, 4, 3"), T("3, 5, 3")}),
            "error: nn.batch_matmul: batch dims differ: 2 vs 3 (one may be 1 to broadcast)");
  EXPECT_THAT(Infer("nn.batch_matmul", {T("4, 3"), T("2, 5, 3")}),
              HasSubstr("argument 0 (x) has type Tensor[(4, 3), float32]; expected a 3-D"));
  EXPECT_THAT(Infer("nn.batch_matmul", {T("2, 4, 3"), T("2, 5, 4")}),
              HasSubstr("reduction dims differ"));
}

}  // namespace
}  // namespace kiln::types::testing
