// batch_norm, layer_norm, softmax, log_softmax, dropout, pad.
#include <cmath>

#include "gtest/gtest.h"
#include "interpreter/test_util.h"

namespace kiln::interp::testing {
namespace {

using V = std::vector<double>;

Value Ok(absl::StatusOr<Value> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : Value();
}

void ExpectNear(const V& got, const V& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(Norm, SoftmaxOfOneTwoThree) {
  auto x = MakeT(DataType::Float(64), {3}, {1, 2, 3});
  ExpectNear(Doubles(Ok(EvalText("nn.softmax(%x)", {{"x", x}}))),
             {0.09003057317038046, 0.24472847105479767, 0.6652409557748219}, 1e-15);
  ExpectNear(Doubles(Ok(EvalText("nn.log_softmax(%x)", {{"x", x}}))),
             {-2.4076059644443806, -1.4076059644443806, -0.40760596444438063}, 1e-15);
  // Along axis 0 of a 2x2; large values do not overflow.
  ExpectNear(Doubles(Ok(EvalText("nn.softmax(%x, axis=0)", {{"x", F32({2, 2}, {1000, 0, 1000, 0})}}))),
             {0.5, 0.5, 0.5, 0.5}, 1e-7);
}

TEST(Norm, LayerNormOfKnownRow) {
  auto x = MakeT(DataType::Float(64), {1, 4}, {1, 2, 3, 4});
  const double s = 1 / std::sqrt(1.25 + 1e-5);
  ExpectNear(Doubles(Ok(EvalText("nn.layer_norm(%x, %g, %b)",
                                 {{"x", x}, {"g", MakeT(DataType::Float(64), {4}, {1, 1, 1, 1})},
                                  {"b", MakeT(DataType::Float(64), {4}, {0, 0, 0, 0})}}))),
             {-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s}, 1e-12);
  ExpectNear(Doubles(Ok(EvalText("nn.layer_norm(%x, %g, %b, epsilon=0.0)",
                                 {{"x", x}, {"g", MakeT(DataType::Float(64), {4}, {2, 2, 2, 2})},
                                  {"b", MakeT(DataType::Float(64), {4}, {1, 1, 1, 1})}}))),
             {1 - 3 / std::sqrt(1.25), 1 - 1 / std::sqrt(1.25), 1 + 1 / std::sqrt(1.25),
              1 + 3 / std::sqrt(1.25)},
             1e-12);
}

TEST(Norm, BatchNormInference) {
  std::vector<std::pair<std::string, Ref<const HostTensor>>> in = {
      {"x", F32({1, 2, 1, 1}, {1, 2})}, {"g", F32({2}, {1, 2})}, {"b", F32({2}, {0, 1})},
      {"m", F32({2}, {0, 1})},          {"v", F32({2}, {1, 4})}};
  Value t = Ok(EvalText("nn.batch_norm(%x, %g, %b, %m, %v, epsilon=0.0)", in));
  ASSERT_TRUE(t.is_tuple());
  EXPECT_EQ(Doubles(t.fields()[0]), (V{1, 2}));
  EXPECT_EQ(Doubles(t.fields()[1]), (V{0, 1}));
  EXPECT_EQ(Doubles(t.fields()[2]), (V{1, 4}));
  EXPECT_EQ(Doubles(Ok(EvalText("%0 = nn.batch_norm(%x, %g, %b, %m, %v, epsilon=0.0, scale=false, "
                                "center=false); %0.0", in))),
            (V{1, 0.5}));
}

TEST(Norm, DropoutIsIdentityWithOnesMask) {
  Value t = Ok(EvalText("nn.dropout(%x, rate=0.3)", {{"x", F32({2}, {3, -4})}}));
  EXPECT_EQ(Doubles(t.fields()[0]), (V{3, -4}));
  EXPECT_EQ(Doubles(t.fields()[1]), (V{1, 1}));
}

TEST(Norm, PadModes) {
  auto x = F32({2}, {1, 2});
  EXPECT_EQ(Doubles(Ok(EvalText("nn.pad(%x, 9f, pad_width=[[1, 2]])", {{"x", x}}))), (V{9, 1, 2, 9, 9}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.pad(%x, 0f, pad_width=[[1, 2]], pad_mode=\"edge\")", {{"x", x}}))),
            (V{1, 1, 2, 2, 2}));
  EXPECT_EQ(Doubles(Ok(EvalText("nn.pad(%x, 0f, pad_width=[[2, 1]], pad_mode=\"reflect\")",
                                {{"x", F32({3}, {1, 2, 3})}}))),
            (V{3, 2, 1, 2, 3, 2}));
  // 2-D, and an int pad value for int data.
  EXPECT_EQ(Doubles(Ok(EvalText("nn.pad(%x, 7, pad_width=[[0, 1], [1, 0]])", {{"x", I32({1, 2}, {1, 2})}}))),
            (V{7, 1, 2, 7, 7, 7}));
}

}  // namespace
}  // namespace kiln::interp::testing
