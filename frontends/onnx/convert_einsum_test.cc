// The Einsum and Det converters (convert_einsum.cc): one-node models imported and run by
// the interpreter, against a reference that evaluates the equation by
// enumerating every assignment of the labels (written here, independent of
// the converter's transpose / multiply / sum / batch_matmul lowering).
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
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

constexpr DataType kF32 = DataType::Float(32);

V Data(int64_t n, double phase) {
  V v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = std::round(8.0 * std::sin(1.3 * static_cast<double>(i) + phase)) / 4.0;
  return v;
}

int64_t Numel(const S& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Evaluates an explicit equation with single-letter labels only (no
// ellipsis): out[o...] = sum over the other labels of prod_i in_i[...].
V RefEinsum(const std::vector<std::string>& terms, const std::string& out_term,
            const std::vector<V>& ins, const std::vector<S>& shapes, S* out_shape) {
  std::map<char, int64_t> ext;
  for (size_t i = 0; i < terms.size(); ++i)
    for (size_t j = 0; j < terms[i].size(); ++j) ext[terms[i][j]] = shapes[i][j];
  std::vector<char> labels;
  for (const auto& [l, n] : ext) labels.push_back(l);
  out_shape->clear();
  for (char l : out_term) out_shape->push_back(ext[l]);
  V out(static_cast<size_t>(Numel(*out_shape)), 0.0);
  std::map<char, int64_t> at;
  for (char l : labels) at[l] = 0;
  for (;;) {
    double p = 1;
    for (size_t i = 0; i < terms.size(); ++i) {
      int64_t flat = 0;
      for (size_t j = 0; j < terms[i].size(); ++j) flat = flat * shapes[i][j] + at[terms[i][j]];
      p *= ins[i][static_cast<size_t>(flat)];
    }
    int64_t o = 0;
    for (char l : out_term) o = o * ext[l] + at[l];
    out[static_cast<size_t>(o)] += p;
    size_t k = 0;
    for (; k < labels.size(); ++k) {
      if (++at[labels[k]] < ext[labels[k]]) break;
      at[labels[k]] = 0;
    }
    if (k == labels.size()) break;
  }
  return out;
}

void Check(const std::string& equation, const std::vector<std::string>& terms,
           const std::string& out_term, const std::vector<S>& shapes) {
  SCOPED_TRACE(equation);
  std::vector<V> ins;
  std::vector<NamedTensor> named;
  std::vector<std::string> names;
  for (size_t i = 0; i < shapes.size(); ++i) {
    ins.push_back(Data(Numel(shapes[i]), 0.4 * static_cast<double>(i)));
    names.push_back("x" + std::to_string(i));
    named.push_back(In(names.back(), kF32, shapes[i], ins.back()));
  }
  S want_shape;
  const V want = RefEinsum(terms, out_term, ins, shapes, &want_shape);
  auto r = RunNode(12, MakeNode("Einsum", names, {"y"}, {AttrString("equation", equation)}), named);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0]->shape(), want_shape);
  const V got = Values(*(*r)[0]);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << "element " << i;
}

TEST(Einsum, TransposeAndSum) {
  Check("ij->ji", {"ij"}, "ji", {{2, 3}});
  Check("ij->", {"ij"}, "", {{3, 4}});
  Check("ijk->ki", {"ijk"}, "ki", {{2, 3, 4}});
}

TEST(Einsum, Products) {
  Check("ij,jk->ik", {"ij", "jk"}, "ik", {{3, 4}, {4, 5}});
  Check("bij,bjk->bik", {"bij", "bjk"}, "bik", {{2, 3, 4}, {2, 4, 2}});
  Check("i,i", {"i", "i"}, "", {{5}, {5}});                       // implicit: inner product
  Check("i,j->ij", {"i", "j"}, "ij", {{3}, {4}});                 // outer product
  Check("ba,ca", {"ba", "ca"}, "bc", {{2, 3}, {4, 3}});           // implicit, alphabetical
  Check("ij,jk,kl->il", {"ij", "jk", "kl"}, "il", {{2, 3}, {3, 4}, {4, 2}});
  Check("abc,cd->db", {"abc", "cd"}, "db", {{2, 3, 4}, {4, 3}});  // a summed in one operand
}

TEST(Einsum, DiagonalAndTrace) {
  // Repeated labels: the reference evaluates "bii->bi" as the diagonal.
  auto run = [](const std::string& eq, const S& shape) {
    const V x = Data(Numel(shape), 0.1);
    auto r = RunNode(12, MakeNode("Einsum", {"x"}, {"y"}, {AttrString("equation", eq)}),
                     {In("x", kF32, shape, x)});
    EXPECT_TRUE(r.ok()) << r.status();
    return std::make_pair(x, r.ok() ? Values(*(*r)[0]) : V{});
  };
  {
    auto [x, got] = run("bii->bi", {2, 3, 3});
    ASSERT_EQ(got.size(), 6u);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 3; ++i)
        EXPECT_EQ(got[static_cast<size_t>(b * 3 + i)], x[static_cast<size_t>(b * 9 + i * 4)]);
  }
  {
    auto [x, got] = run("ii", {4, 4});  // implicit output: the trace
    ASSERT_EQ(got.size(), 1u);
    EXPECT_NEAR(got[0], x[0] + x[5] + x[10] + x[15], 1e-5);
  }
  {
    auto [x, got] = run("iji->j", {3, 2, 3});
    ASSERT_EQ(got.size(), 2u);
    for (int64_t j = 0; j < 2; ++j) {
      double s = 0;
      for (int64_t i = 0; i < 3; ++i) s += x[static_cast<size_t>(i * 6 + j * 3 + i)];
      EXPECT_NEAR(got[static_cast<size_t>(j)], s, 1e-5);
    }
  }
}

TEST(Einsum, Ellipsis) {
  // "...ij,...jk->...ik" with batch dims [2] and [3, 1]: broadcast to [3, 2].
  const S sa = {2, 2, 3}, sb = {3, 1, 3, 2};
  const V a = Data(Numel(sa), 0.2), b = Data(Numel(sb), 0.9);
  auto r = RunNode(12, MakeNode("Einsum", {"a", "b"}, {"y"}, {AttrString("equation", "...ij,...jk->...ik")}),
                   {In("a", kF32, sa, a), In("b", kF32, sb, b)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0]->shape(), (S{3, 2, 2, 2}));
  const V got = Values(*(*r)[0]);
  for (int64_t p = 0; p < 3; ++p)
    for (int64_t q = 0; q < 2; ++q)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t k = 0; k < 2; ++k) {
          double s = 0;
          for (int64_t j = 0; j < 3; ++j)
            s += a[static_cast<size_t>((q * 2 + i) * 3 + j)] * b[static_cast<size_t>((p * 3 + j) * 2 + k)];
          EXPECT_NEAR(got[static_cast<size_t>(((p * 2 + q) * 2 + i) * 2 + k)], s, 1e-5);
        }
  // Implicit output keeps the ellipsis dims first; "...i->..." sums i.
  const V x = Data(6, 0.0);
  auto s = RunNode(12, MakeNode("Einsum", {"x"}, {"y"}, {AttrString("equation", "i...->...")}),
                   {In("x", kF32, {2, 3}, x)});
  ASSERT_TRUE(s.ok()) << s.status();
  const V got_s = Values(*(*s)[0]);
  ASSERT_EQ(got_s.size(), 3u);
  for (size_t j = 0; j < 3; ++j) EXPECT_NEAR(got_s[j], x[j] + x[3 + j], 1e-6);
}

TEST(Einsum, Errors) {
  auto bad = [](const std::string& eq, size_t n_inputs) {
    std::vector<std::string> names;
    std::vector<NamedTensor> in;
    for (size_t i = 0; i < n_inputs; ++i) {
      names.push_back("x" + std::to_string(i));
      in.push_back(In(names.back(), kF32, {2, 2}, {1, 2, 3, 4}));
    }
    return RunNode(12, MakeNode("Einsum", names, {"y"}, {AttrString("equation", eq)}), in).status();
  };
  absl::Status st = bad("ij,jk->ik", 1);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("operand terms"));
  st = bad("ijk->i", 1);
  EXPECT_THAT(st.message(), HasSubstr("rank"));
  st = bad("ij->iz", 1);
  EXPECT_THAT(st.message(), HasSubstr("no input has"));
  st = bad("i1->i", 1);
  EXPECT_THAT(st.message(), HasSubstr("not a letter"));
}

// ---- Det ---------------------------------------------------------------------

// The determinant by Gaussian elimination with partial pivoting.
double RefDet(V m, int64_t n) {
  double det = 1;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::abs(m[static_cast<size_t>(i * n + k)]) > std::abs(m[static_cast<size_t>(p * n + k)])) p = i;
    if (m[static_cast<size_t>(p * n + k)] == 0) return 0;
    if (p != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(m[static_cast<size_t>(p * n + j)], m[static_cast<size_t>(k * n + j)]);
      det = -det;
    }
    const double piv = m[static_cast<size_t>(k * n + k)];
    det *= piv;
    for (int64_t i = k + 1; i < n; ++i) {
      const double f = m[static_cast<size_t>(i * n + k)] / piv;
      for (int64_t j = k; j < n; ++j) m[static_cast<size_t>(i * n + j)] -= f * m[static_cast<size_t>(k * n + j)];
    }
  }
  return det;
}

TEST(Det, BatchedSmallMatrices) {
  for (int64_t n : {1, 2, 3}) {
    SCOPED_TRACE(n);
    const S shape = {2, 3, n, n};
    const V x = Data(Numel(shape), 0.7 * static_cast<double>(n));
    auto r = RunNode(11, MakeNode("Det", {"x"}, {"y"}), {In("x", kF32, shape, x)});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)[0]->shape(), (S{2, 3}));
    const V got = Values(*(*r)[0]);
    ASSERT_EQ(got.size(), 6u);
    for (int64_t b = 0; b < 6; ++b) {
      const V m(x.begin() + b * n * n, x.begin() + (b + 1) * n * n);
      EXPECT_NEAR(got[static_cast<size_t>(b)], RefDet(m, n), 1e-4) << "matrix " << b;
    }
  }
  auto st = RunNode(11, MakeNode("Det", {"x"}, {"y"}), {In("x", kF32, {4, 4}, Data(16, 0))}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  st = RunNode(11, MakeNode("Det", {"x"}, {"y"}), {In("x", kF32, {2, 3}, Data(6, 0))}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
