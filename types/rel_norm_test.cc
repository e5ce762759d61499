// Tests of batch_norm, layer_norm, softmax, log_softmax and dropout.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "types/rel_test_util.h"

namespace kiln::types::testing {
namespace {

using ::testing::HasSubstr;

TEST(BatchNorm, TupleOutput) {
  EXPECT_EQ(Infer("nn.batch_norm", {T("n, 64, 56, 56"), T("64"), T("64"), T("64"), T("64")}),
            "(Tensor[(n, 64, 56, 56), float32], Tensor[(64,), float32], Tensor[(64,), float32])");
  EXPECT_EQ(Infer("nn.batch_norm", {T("1, 7, 7, 32"), T("32"), T("32"), T("32"), T("32")},
                  Make<BatchNormAttrs>([](auto& a) { a.axis = -1; })),
            "(Tensor[(1, 7, 7, 32), float32], Tensor[(32,), float32], Tensor[(32,), float32])");
}

TEST(BatchNorm, Errors) {
  EXPECT_EQ(Infer("nn.batch_norm", {T("1, 64, 8, 8"), T("64"), T("32"), T("64"), T("64")}),
            "error: nn.batch_norm: argument 2 (beta) has type Tensor[(32,), float32]; expected a "
            "1-D tensor of length 64 (data's axis 1) and dtype float32");
  EXPECT_THAT(Infer("nn.batch_norm", {T("1, 64"), T("64"), T("64"), T("64"), T("64")},
                    Make<BatchNormAttrs>([](auto& a) { a.axis = 2; })),
              HasSubstr("nn.batch_norm: axis 2 is out of range for a 2-D tensor"));
  EXPECT_THAT(
      Infer("nn.batch_norm", {T("1, 64"), T("64"), T("64"), T("64"), T("64", "float16")}),
      HasSubstr("argument 4 (moving_var)"));
}

TEST(BatchNorm, AssignsUnknownParameters) {
  EXPECT_EQ(Infer("nn.batch_norm", {MakeIncompleteType(), T("4"), T("4"), T("4"), T("4")}),
            "unsolved");
  RelResult r = RunRel("nn.batch_norm", {T("2, 4"), MakeIncompleteType(), T("4"),
                                         MakeIncompleteType(), T("4")});
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_TRUE(r.solved);
  EXPECT_EQ(TypeToString(r.reporter.Get(r.args[1])), "Tensor[(4,), float32]");
  EXPECT_EQ(TypeToString(r.reporter.Get(r.args[3])), "Tensor[(4,), float32]");
}

TEST(LayerNorm, Shapes) {
  EXPECT_EQ(Infer("nn.layer_norm", {T("n, 128, 768"), T("768"), T("768")}),
            "Tensor[(n, 128, 768), float32]");
  EXPECT_EQ(Infer("nn.layer_norm", {T("2, 10, 4"), T("10"), T("10")},
                  Make<LayerNormAttrs>([](auto& a) { a.axis = 1; })),
            "Tensor[(2, 10, 4), float32]");
  EXPECT_THAT(Infer("nn.layer_norm", {T("2, 10, 4"), T("10"), T("4")}),
              HasSubstr("argument 1 (gamma) has type Tensor[(10,), float32]; expected a 1-D "
                        "tensor of length 4"));
}

TEST(Softmax, Axis) {
  EXPECT_EQ(Infer("nn.softmax", {T("n, 1000")}), "Tensor[(n, 1000), float32]");
  EXPECT_EQ(Infer("nn.log_softmax", {T("2, 3")}, Make<SoftmaxAttrs>([](auto& a) { a.axis = 0; })),
            "Tensor[(2, 3), float32]");
  EXPECT_EQ(Infer("nn.softmax", {T("2, 3")}, Make<SoftmaxAttrs>([](auto& a) { a.axis = 2; })),
            "error: nn.softmax: axis 2 is out of range for a 2-D tensor (expected -2..1)");
  EXPECT_THAT(Infer("nn.log_softmax", {T("")}), HasSubstr("out of range for a 0-D tensor"));
}

TEST(Dropout, OutAndMask) {
  EXPECT_EQ(Infer("nn.dropout", {T("n, 8")}),
            "(Tensor[(n, 8), float32], Tensor[(n, 8), float32])");
  EXPECT_THAT(Infer("nn.dropout", {T("2")}, Make<DropoutAttrs>([](auto& a) { a.rate = 1.5; })),
              HasSubstr("rate must be in [0, 1)"));
  EXPECT_EQ(Infer("nn.dropout", {MakeIncompleteType()}), "unsolved");
}

}  // namespace
}  // namespace kiln::types::testing
