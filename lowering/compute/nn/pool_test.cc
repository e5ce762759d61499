// Pools: structure (pad stage, reduction, divisor stage) and values against
// the interpreter: padding, strides, dilation, ceil_mode, count_include_pad,
// layouts (NHWC, blocked NCHW4c against NCHW), integer truncation, windows
// made only of padding, -inf and NaN data; global pools.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "lowering/compute/nn/nn_test_util.h"

namespace kiln::lowering::nn_testing {
namespace {

std::string T(const std::string& shape, const std::string& dtype = "float32") {
  return "Tensor[(" + shape + "), " + dtype + "]";
}

void Check(const std::string& text, const std::string& xs, const std::string& dt = "float32",
           const CompareOptions& o = {}) {
  SCOPED_TRACE(text + " " + xs + " " + dt);
  absl::Status st = CompareWithInterpreter(text, {{"x", T(xs, dt)}}, o);
  EXPECT_TRUE(st.ok()) << st;
}

TEST(PoolStructure, MaxPool) {
  absl::StatusOr<ComputedCall> c = ComputeCall(
      "nn.max_pool2d(%x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", {{"x", T("1, 4, 8, 8")}});
  ASSERT_TRUE(c.ok()) << c.status();
  const te::OperationNode& op = *c->outputs[0].op();
  EXPECT_EQ(op.tag, "pool_max");
  EXPECT_EQ(op.reduce_axis.size(), 2u);
  EXPECT_EQ(op.attrs.at("pool_size"), "3,3");
  std::vector<te::Tensor> in = op.InputTensors();
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].op()->name, "pad");
  EXPECT_EQ(in[0].op()->tag, "injective");
}

TEST(PoolStructure, EmptyWindowsGetAFixupStage) {
  absl::StatusOr<ComputedCall> c =
      ComputeCall("nn.max_pool2d(%x, pool_size=[1, 1], padding=[1, 1])", {{"x", T("1, 1, 3, 3")}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outputs[0].op()->name, "pool_max_out");
  EXPECT_EQ(c->outputs[0].op()->InputTensors()[0].op()->tag, "pool_max");
}

TEST(PoolStructure, AvgPool) {
  absl::StatusOr<ComputedCall> c = ComputeCall(
      "nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2], ceil_mode=true)", {{"x", T("1, 4, 7, 7")}});
  ASSERT_TRUE(c.ok()) << c.status();
  const te::OperationNode& op = *c->outputs[0].op();
  EXPECT_EQ(op.name, "pool_avg");
  EXPECT_TRUE(op.reduce_axis.empty());
  std::vector<te::Tensor> in = op.InputTensors();
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].op()->tag, "pool_sum");
  EXPECT_EQ(in[0].op()->reduce_axis.size(), 2u);
}

TEST(PoolStructure, GlobalPools) {
  absl::StatusOr<ComputedCall> c = ComputeCall("nn.global_avg_pool2d(%x)", {{"x", T("1, 4, 7, 7")}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outputs[0].op()->tag, "global_pool_avg");
  EXPECT_EQ(c->outputs[0].op()->InputTensors()[0].op()->reduce_axis.size(), 2u);
  c = ComputeCall("nn.global_max_pool2d(%x, layout=\"NHWC\")", {{"x", T("1, 7, 7, 4")}});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->outputs[0].op()->tag, "global_pool_max");
}

TEST(PoolValues, MaxPool) {
  const std::string m = "nn.max_pool2d(%x, ";
  Check(m + "pool_size=[2, 2], strides=[2, 2])", "1, 3, 6, 6");
  Check(m + "pool_size=[3], strides=[2], padding=[1], dilation=[1])", "1, 2, 7, 7");
  Check(m + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", "2, 2, 7, 7");
  Check(m + "pool_size=[3, 2], strides=[2, 1], padding=[1, 0, 2, 1])", "1, 2, 7, 6");
  Check(m + "pool_size=[3, 3], strides=[2, 2], ceil_mode=true)", "1, 2, 8, 8");
  Check(m + "pool_size=[2, 2], strides=[3, 3], padding=[1, 1], ceil_mode=true)", "1, 2, 8, 7");
  Check(m + "pool_size=[2, 2], dilation=[2, 2], padding=[1, 1])", "1, 2, 7, 7");
  Check(m + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout=\"NHWC\")", "1, 7, 7, 3");
  Check(m + "pool_size=[3, 3], padding=[1, 1], layout=\"NCHW\", out_layout=\"NHWC\")", "1, 3, 5, 5");
  Check(m + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", "1, 2, 7, 7", "int8");
  Check(m + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", "1, 2, 7, 7", "uint8");
  Check(m + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", "1, 2, 7, 7", "float16");
}

TEST(PoolValues, MaxPoolEmptyWindowsInfAndNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  CompareOptions o;
  o.values["x"] = {-inf, -inf, 1, -inf, std::nan(""), 2, 3, -inf, -inf};
  // 1x1 windows over 1 padding: the border windows hold only padding.
  Check("nn.max_pool2d(%x, pool_size=[1, 1], padding=[1, 1])", "1, 1, 3, 3", "float32", o);
  Check("nn.max_pool2d(%x, pool_size=[2, 2], padding=[1, 1])", "1, 1, 3, 3", "float32", o);
  Check("nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2], padding=[2, 2], ceil_mode=true)",
        "1, 1, 3, 3", "float32", o);
  Check("nn.max_pool2d(%x, pool_size=[1, 1], strides=[2, 2], padding=[2, 2])", "1, 1, 3, 3", "float16",
        o);
  Check("nn.max_pool2d(%x, pool_size=[1, 1], padding=[1, 1])", "1, 1, 3, 3", "int32");
}

TEST(PoolValues, AvgPoolDivisors) {
  for (const std::string cip : {"false", "true"}) {
    const std::string a = "nn.avg_pool2d(%x, count_include_pad=" + cip + ", ";
    Check(a + "pool_size=[2, 2], strides=[2, 2])", "1, 3, 6, 6");
    Check(a + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", "2, 2, 7, 7");
    Check(a + "pool_size=[3, 2], strides=[2, 1], padding=[1, 0, 2, 1])", "1, 2, 7, 6");
    Check(a + "pool_size=[3, 3], strides=[2, 2], ceil_mode=true)", "1, 2, 8, 8");
    Check(a + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=true)", "1, 2, 8, 8");
    Check(a + "pool_size=[2, 2], strides=[3, 3], padding=[1, 1], ceil_mode=true)", "1, 2, 8, 7");
    Check(a + "pool_size=[2, 2], dilation=[2, 2], padding=[1, 2])", "1, 2, 7, 7");
    Check(a + "pool_size=[1, 1], strides=[2, 2], padding=[2, 2])", "1, 1, 3, 3");  // empty windows
    Check(a + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], layout=\"NHWC\")", "1, 7, 7, 3");
    Check(a + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=true)", "1, 2, 8, 8", "int32");
    Check(a + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", "1, 2, 7, 7", "int8");
    Check(a + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", "1, 2, 7, 7", "float16");
    Check(a + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", "1, 2, 7, 7", "bfloat16");
    Check(a + "pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", "1, 2, 7, 7", "float64");
  }
}

TEST(PoolValues, GlobalPools) {
  for (const std::string op : {"nn.global_avg_pool2d", "nn.global_max_pool2d"}) {
    Check(op + "(%x)", "2, 3, 5, 7");
    Check(op + "(%x, layout=\"NHWC\")", "2, 5, 7, 3");
    Check(op + "(%x, layout=\"NHWC\", out_layout=\"NCHW\")", "2, 5, 7, 3");
    Check(op + "(%x)", "1, 3, 5, 5", "int8");
    Check(op + "(%x)", "1, 3, 5, 5", "int32");
    Check(op + "(%x)", "1, 3, 5, 5", "float16");
  }
}

// A blocked layout (not accepted by the type relation nor the interpreter):
// the NCHW4c pool of blocked data equals the NCHW pool, blocked.
void ExpectBlockedMatchesNchw(const std::string& op, const std::string& attrs) {
  SCOPED_TRACE(op + attrs);
  const int64_t N = 1, C = 8, H = 7, W = 6, cb = 4;
  absl::StatusOr<ComputedCall> plain =
      ComputeCall(op + "(%x" + attrs + ")", {{"x", T(absl::StrCat(N, ", ", C, ", ", H, ", ", W))}});
  ASSERT_TRUE(plain.ok()) << plain.status();
  const std::vector<int64_t> os = plain->out_shapes[0];
  const std::string blocked_type =
      T(absl::StrCat(os[0], ", ", os[1] / cb, ", ", os[2], ", ", os[3], ", ", cb));
  absl::StatusOr<ComputedCall> blocked =
      ComputeCallWithType(op + "(%x" + attrs + ", layout=\"NCHW4c\")",
                          {{"x", T(absl::StrCat(N, ", ", C / cb, ", ", H, ", ", W, ", ", cb))}},
                          blocked_type);
  ASSERT_TRUE(blocked.ok()) << blocked.status();
  std::vector<double> x(static_cast<size_t>(N * C * H * W)), xb(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 7) % 23) - 11;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w)
        xb[static_cast<size_t>((((c / cb) * H + h) * W + w) * cb + c % cb)] =
            x[static_cast<size_t>((c * H + h) * W + w)];
  absl::StatusOr<std::vector<std::vector<double>>> p = EvalTensors(plain->outputs, {{plain->inputs[0], x}});
  absl::StatusOr<std::vector<std::vector<double>>> b =
      EvalTensors(blocked->outputs, {{blocked->inputs[0], xb}});
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(b.ok()) << b.status();
  const int64_t OC = os[1], OH = os[2], OW = os[3];
  for (int64_t c = 0; c < OC; ++c)
    for (int64_t h = 0; h < OH; ++h)
      for (int64_t w = 0; w < OW; ++w)
        ASSERT_EQ((*b)[0][static_cast<size_t>((((c / cb) * OH + h) * OW + w) * cb + c % cb)],
                  (*p)[0][static_cast<size_t>((c * OH + h) * OW + w)])
            << c << " " << h << " " << w;
}

TEST(PoolValues, BlockedLayout) {
  ExpectBlockedMatchesNchw("nn.max_pool2d", ", pool_size=[3, 3], strides=[2, 2], padding=[1, 1]");
  ExpectBlockedMatchesNchw("nn.avg_pool2d",
                           ", pool_size=[3, 3], strides=[2, 2], padding=[1, 1], ceil_mode=true");
  ExpectBlockedMatchesNchw("nn.global_avg_pool2d", "");
  ExpectBlockedMatchesNchw("nn.global_max_pool2d", "");
}

}  // namespace
}  // namespace kiln::lowering::nn_testing
