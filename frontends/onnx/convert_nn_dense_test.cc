// The dense and softmax-family converters (convert_nn_dense.cc, and the
// losses of convert_nn_loss.cc): one-node models imported and run by the
// interpreter, against reference values computed here by plain loops from
// ONNX's definitions (Gemm, MatMul, Softmax/LogSoftmax/Hardmax,
// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, Dropout).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "frontends/onnx/convert_test_util.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::onnx_frontend::testing {
namespace {

using ::testing::HasSubstr;
using V = std::vector<double>;
using S = std::vector<int64_t>;
using Out = NodeOutput;

constexpr DataType kF32 = DataType::Float(32);
constexpr DataType kBool = DataType::Bool();
constexpr DataType kI32 = DataType::Int(32);
constexpr DataType kI64 = DataType::Int(64);

// ---- Gemm and MatMul ------------------------------------------------------------------

// C[i, j] = sum_k A[i, k] B[k, j] for row-major A [m, k] and B [k, n].
V RefMatMul(const V& a, const V& b, int64_t m, int64_t k, int64_t n) {
  V c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t q = 0; q < k; ++q)
        c[static_cast<size_t>(i * n + j)] += a[static_cast<size_t>(i * k + q)] * b[static_cast<size_t>(q * n + j)];
  return c;
}

V Transposed(const V& a, int64_t rows, int64_t cols) {
  V t(a.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t[static_cast<size_t>(j * rows + i)] = a[static_cast<size_t>(i * cols + j)];
  return t;
}

TEST(ConvertGemm, TransposesAlphaBetaBroadcastBias) {
  const int64_t M = 3, K = 4, N = 2;
  const V a = Data(M * K), b = Data(K * N, 0.8), c = {0.5, -2};
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1}) {
      const V ab = RefMatMul(a, b, M, K, N);
      V want;
      for (int64_t i = 0; i < M * N; ++i) want.push_back(0.5 * ab[static_cast<size_t>(i)] + 3.0 * c[static_cast<size_t>(i % N)]);
      const V a_in = ta ? Transposed(a, M, K) : a;
      const V b_in = tb ? Transposed(b, K, N) : b;
      const Out got = Exec(13,
                          MakeNode("Gemm", {"a", "b", "c"}, {"y"},
                                   {AttrFloat("alpha", 0.5f), AttrFloat("beta", 3.0f),
                                    AttrInt("transA", ta), AttrInt("transB", tb)}),
                          {F32In("a", ta ? S{K, M} : S{M, K}, a_in),
                           Init("b", kF32, tb ? S{N, K} : S{K, N}, b_in), Init("c", kF32, {N}, c)});
      ExpectNear(got, {M, N}, want);
    }
  // Without C (opset 11+).
  ExpectNear(Exec(11, MakeNode("Gemm", {"a", "b"}, {"y"}), {F32In("a", {M, K}, a), F32In("b", {K, N}, b)}),
             {M, N}, RefMatMul(a, b, M, K, N));
}

TEST(ConvertMatMul, BroadcastBatches) {
  // [2, 1, 3, 4] x [3, 4, 2] -> [2, 3, 3, 2].
  const V a = Data(24), b = Data(24, 0.6);
  V want;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      const V ai(a.begin() + i * 12, a.begin() + (i + 1) * 12);
      const V bj(b.begin() + j * 8, b.begin() + (j + 1) * 8);
      const V cij = RefMatMul(ai, bj, 3, 4, 2);
      want.insert(want.end(), cij.begin(), cij.end());
    }
  ExpectNear(Exec(13, MakeNode("MatMul", {"a", "b"}, {"y"}),
                 {F32In("a", {2, 1, 3, 4}, a), F32In("b", {3, 4, 2}, b)}),
             {2, 3, 3, 2}, want);
}

TEST(ConvertMatMul, VectorsAndMatrices) {
  const V v = {1, -2, 3}, m = Data(6);  // v [3], m [3, 2] or [2, 3]
  // [3] x [3, 2] -> [2]
  ExpectNear(Exec(9, MakeNode("MatMul", {"a", "b"}, {"y"}), {F32In("a", {3}, v), F32In("b", {3, 2}, m)}),
             {2}, RefMatMul(v, m, 1, 3, 2));
  // [2, 3] x [3] -> [2]
  ExpectNear(Exec(9, MakeNode("MatMul", {"a", "b"}, {"y"}), {F32In("a", {2, 3}, m), F32In("b", {3}, v)}),
             {2}, RefMatMul(m, v, 2, 3, 1));
  // [3] x [3] -> []
  ExpectNear(Exec(13, MakeNode("MatMul", {"a", "b"}, {"y"}), {F32In("a", {3}, v), F32In("b", {3}, v)}),
             {}, {14});
  // [3] x [2, 3, 2] -> [2, 2]
  const V bb = Data(12, 1.3);
  V want;
  for (int64_t i = 0; i < 2; ++i) {
    const V r = RefMatMul(v, V(bb.begin() + i * 6, bb.begin() + (i + 1) * 6), 1, 3, 2);
    want.insert(want.end(), r.begin(), r.end());
  }
  ExpectNear(Exec(13, MakeNode("MatMul", {"a", "b"}, {"y"}), {F32In("a", {3}, v), F32In("b", {2, 3, 2}, bb)}),
             {2, 2}, want);
  // [2, 2, 3] x [3, 2] -> [2, 2, 2] (nn.matmul)
  V want2;
  for (int64_t i = 0; i < 2; ++i) {
    const V r = RefMatMul(V(bb.begin() + i * 6, bb.begin() + (i + 1) * 6), m, 2, 3, 2);
    want2.insert(want2.end(), r.begin(), r.end());
  }
  ExpectNear(Exec(13, MakeNode("MatMul", {"a", "b"}, {"y"}), {F32In("a", {2, 2, 3}, bb), F32In("b", {3, 2}, m)}),
             {2, 2, 2}, want2);
}

TEST(ConvertMatMul, SymbolicBatch) {
  // [N, 2, 3, 4] x [N, 2, 4, 5] with N unknown at import.
  onnx::ModelProto m = MakeModel(
      13, {MakeNode("MatMul", {"a", "b"}, {"y"})},
      {MakeValueInfo("a", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{2}, int64_t{3}, int64_t{4}}),
       MakeValueInfo("b", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{2}, int64_t{4}, int64_t{5}})},
      {MakeValueInfoNoShape("y", onnx::TensorProto::FLOAT)});
  const V a = Data(72), b = Data(120, 0.8);
  auto r = RunModel(m, {F32In("a", {3, 2, 3, 4}, a), F32In("b", {3, 2, 4, 5}, b)});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  V want;
  for (int64_t i = 0; i < 6; ++i) {
    const V ci = RefMatMul(V(a.begin() + i * 12, a.begin() + (i + 1) * 12),
                           V(b.begin() + i * 20, b.begin() + (i + 1) * 20), 3, 4, 5);
    want.insert(want.end(), ci.begin(), ci.end());
  }
  ExpectNear(Out{Values(*r->at(0)), r->at(0)->shape(), r->at(0)->dtype()}, {3, 2, 3, 5}, want);
}

// ---- softmax family ----------------------------------------------------------------------

// Softmax over contiguous groups of `len` elements.
V RefSoftmaxGroups(const V& x, int64_t len, bool log) {
  V out(x.size());
  for (size_t g = 0; g < x.size(); g += static_cast<size_t>(len)) {
    double m = -1e300, s = 0;
    for (int64_t i = 0; i < len; ++i) m = std::max(m, x[g + static_cast<size_t>(i)]);
    for (int64_t i = 0; i < len; ++i) s += std::exp(x[g + static_cast<size_t>(i)] - m);
    for (int64_t i = 0; i < len; ++i) {
      const double z = x[g + static_cast<size_t>(i)] - m;
      out[g + static_cast<size_t>(i)] = log ? z - std::log(s) : std::exp(z) / s;
    }
  }
  return out;
}

TEST(ConvertSoftmax, Opset11FlattensAtAxis) {
  const S xs = {2, 3, 4};
  const V x = Data(24);
  // axis=1 before opset 13: one softmax over the 12 elements of each batch item.
  ExpectNear(Exec(11, MakeNode("Softmax", {"x"}, {"y"}, {AttrInt("axis", 1)}), {F32In("x", xs, x)}), xs,
             RefSoftmaxGroups(x, 12, false));
  // Default axis (1) for LogSoftmax-1.
  ExpectNear(Exec(1, MakeNode("LogSoftmax", {"x"}, {"y"}), {F32In("x", xs, x)}), xs,
             RefSoftmaxGroups(x, 12, true));
  // Opset 13 axis=-1 (the default).
  ExpectNear(Exec(13, MakeNode("Softmax", {"x"}, {"y"}), {F32In("x", xs, x)}), xs,
             RefSoftmaxGroups(x, 4, false));
}

TEST(ConvertSoftmax, Opset13AlongAxis) {
  const S xs = {2, 3, 2};
  const V x = Data(12);
  // Along axis 1: transpose to make the axis last, softmax groups of 3.
  V xt, want(12);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t k = 0; k < 2; ++k)
      for (int64_t j = 0; j < 3; ++j) xt.push_back(x[static_cast<size_t>((n * 3 + j) * 2 + k)]);
  const V st = RefSoftmaxGroups(xt, 3, false);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t k = 0; k < 2; ++k)
      for (int64_t j = 0; j < 3; ++j)
        want[static_cast<size_t>((n * 3 + j) * 2 + k)] = st[static_cast<size_t>((n * 2 + k) * 3 + j)];
  ExpectNear(Exec(13, MakeNode("Softmax", {"x"}, {"y"}, {AttrInt("axis", 1)}), {F32In("x", xs, x)}), xs, want);
}

TEST(ConvertSoftmax, HardmaxFirstMaximum) {
  // Ties pick the first index.
  const V x = {1, 3, 3, 0, 5, -1, 5, 2};
  ExpectNear(Exec(13, MakeNode("Hardmax", {"x"}, {"y"}), {F32In("x", {2, 4}, x)}), {2, 4},
             {0, 1, 0, 0, 1, 0, 0, 0});
  // Opset 11, axis 0 of [2, 2, 2]: one hardmax over all 8 elements.
  ExpectNear(Exec(11, MakeNode("Hardmax", {"x"}, {"y"}, {AttrInt("axis", 0)}), {F32In("x", {2, 2, 2}, x)}),
             {2, 2, 2}, {0, 0, 0, 0, 1, 0, 0, 0});
}

// ---- losses ----------------------------------------------------------------------------

TEST(ConvertLoss, NegativeLogLikelihood) {
  // input [N=2, C=3, d=2], target [2, 2] with one ignored entry (-1).
  const S xs = {2, 3, 2};
  const V x = Data(12), weight = {0.5, 2, 1};
  const V target = {2, -1, 0, 1};
  double sum = 0, wsum = 0;
  V none;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t d = 0; d < 2; ++d) {
      const int64_t t = static_cast<int64_t>(target[static_cast<size_t>(n * 2 + d)]);
      if (t == -1) {
        none.push_back(0);
        continue;
      }
      const double w = weight[static_cast<size_t>(t)];
      const double l = -x[static_cast<size_t>((n * 3 + t) * 2 + d)] * w;
      none.push_back(l);
      sum += l;
      wsum += w;
    }
  const std::vector<NamedTensor> in = {F32In("x", xs, x), In("t", kI64, {2, 2}, target),
                                       Init("w", kF32, {3}, weight)};
  ExpectNear(Exec(13, MakeNode("NegativeLogLikelihoodLoss", {"x", "t", "w"}, {"y"},
                               {AttrString("reduction", "none"), AttrInt("ignore_index", -1)}),
                  in),
             {2, 2}, none);
  ExpectNear(Exec(13, MakeNode("NegativeLogLikelihoodLoss", {"x", "t", "w"}, {"y"},
                               {AttrInt("ignore_index", -1)}),
                  in),
             {}, {sum / wsum});
  ExpectNear(Exec(12, MakeNode("NegativeLogLikelihoodLoss", {"x", "t", "w"}, {"y"},
                               {AttrString("reduction", "sum"), AttrInt("ignore_index", -1)}),
                  in),
             {}, {sum});
}

TEST(ConvertLoss, SoftmaxCrossEntropyWithLogProb) {
  // scores [N=3, C=4]: loss = -log_softmax(scores)[n, label[n]], mean over N.
  const V x = Data(12);
  const V labels = {3, 0, 2};
  const V log_prob = RefSoftmaxGroups(x, 4, true);
  double mean = 0;
  for (int64_t n = 0; n < 3; ++n)
    mean -= log_prob[static_cast<size_t>(n * 4 + static_cast<int64_t>(labels[static_cast<size_t>(n)]))] / 3;
  const std::vector<Out> got = ExecAll(13, MakeNode("SoftmaxCrossEntropyLoss", {"x", "t"}, {"y", "lp"}),
                                       {F32In("x", {3, 4}, x), In("t", kI32, {3}, labels)});
  ASSERT_EQ(got.size(), 2u);
  ExpectNear(got[0], {}, {mean});
  ExpectNear(got[1], {3, 4}, log_prob);
}

// ---- dropout ---------------------------------------------------------------------------

TEST(ConvertDropout, IdentityAndMask) {
  const V x = Data(6);
  std::vector<Out> got = ExecAll(13, MakeNode("Dropout", {"x", "r"}, {"y", "mask"}),
                                {F32In("x", {2, 3}, x), Init("r", kF32, {}, {0.7})});
  ASSERT_EQ(got.size(), 2u);
  ExpectNear(got[0], {2, 3}, x);
  EXPECT_EQ(got[1].dtype, kBool);
  ExpectNear(got[1], {2, 3}, V(6, 1.0));
  // Opset 7: the mask has the input's dtype.
  got = ExecAll(7, MakeNode("Dropout", {"x"}, {"y", "mask"}, {AttrFloat("ratio", 0.3f)}),
               {F32In("x", {2, 3}, x)});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].dtype, kF32);
  ExpectNear(got[1], {2, 3}, V(6, 1.0));
  // Training mode with ratio 0 is still the identity.
  got = ExecAll(13, MakeNode("Dropout", {"x", "r", "t"}, {"y"}),
               {F32In("x", {2, 3}, x), Init("r", kF32, {}, {0}), Init("t", kBool, {}, {1})});
  ASSERT_EQ(got.size(), 1u);
  ExpectNear(got[0], {2, 3}, x);
  const absl::Status st = RunStatus(13, MakeNode("Dropout", {"x", "r", "t"}, {"y"}),
                                    {F32In("x", {2, 3}, x), Init("r", kF32, {}, {0.5}),
                                     Init("t", kBool, {}, {1})});
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
