// NonZero, Compress and Unique (convert_select.cc): one-node models imported
// and run by the interpreter on inputs with different numbers of selected
// elements, against loops written here from ONNX's definitions (the output
// extent is a count of the values, so every run has its own output shape).
#include <cstdint>
#include <map>
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
constexpr DataType kI64 = DataType::Int(64);
constexpr DataType kBool = DataType::Bool();

void ExpectOut(const NodeOutput& got, const S& shape, const V& want) {
  ASSERT_EQ(got.shape, shape);
  EXPECT_EQ(got.values, want);
}

// A few inputs of 2 x 3 x 2 with different zero patterns.
std::vector<V> Patterns() {
  return {{0, 1, 0, 0, 2, 0, 3, 0, 0, 0, 0, 4},
          {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
          {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
          {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1}};
}

TEST(ConvertNonZero, CoordinatesInRowMajorOrder) {
  const S dims = {2, 3, 2};
  for (const V& x : Patterns()) {
    V rows[3];
    int64_t count = 0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 2; ++k)
          if (x[static_cast<size_t>((i * 3 + j) * 2 + k)] != 0) {
            rows[0].push_back(static_cast<double>(i));
            rows[1].push_back(static_cast<double>(j));
            rows[2].push_back(static_cast<double>(k));
            ++count;
          }
    V want = rows[0];
    want.insert(want.end(), rows[1].begin(), rows[1].end());
    want.insert(want.end(), rows[2].begin(), rows[2].end());
    const NodeOutput y = Exec(13, MakeNode("NonZero", {"x"}, {"y"}), {F32In("x", dims, x)});
    EXPECT_EQ(y.dtype, kI64);
    ExpectOut(y, {3, count}, want);
  }
  // A bool input.
  const NodeOutput b =
      Exec(9, MakeNode("NonZero", {"x"}, {"y"}), {In("x", kBool, {4}, {1, 0, 0, 1})});
  ExpectOut(b, {1, 2}, {0, 3});
}

TEST(ConvertCompress, AlongAnAxisAndFlattened) {
  const V x = {1, 2, 3, 4, 5, 6};  // [3, 2]
  for (const V& cond : {V{1, 0, 1}, V{0, 0, 0}, V{0, 1}, V{1, 1, 1}}) {
    // Axis 0: the rows whose condition holds (missing entries are false).
    V want;
    int64_t rows = 0;
    for (size_t i = 0; i < 3; ++i)
      if (i < cond.size() && cond[i] != 0) {
        want.push_back(x[2 * i]);
        want.push_back(x[2 * i + 1]);
        ++rows;
      }
    const std::vector<NamedTensor> in = {F32In("x", {3, 2}, x),
                                         In("c", kBool, {static_cast<int64_t>(cond.size())}, cond)};
    ExpectOut(Exec(11, MakeNode("Compress", {"x", "c"}, {"y"}, {AttrInt("axis", 0)}), in),
              {rows, 2}, want);
    // No axis: the flattened elements.
    want.clear();
    for (size_t i = 0; i < cond.size(); ++i)
      if (cond[i] != 0) want.push_back(x[i]);
    ExpectOut(Exec(11, MakeNode("Compress", {"x", "c"}, {"y"}), in),
              {static_cast<int64_t>(want.size())}, want);
  }
  // Axis -1 (opset 11): the columns.
  ExpectOut(Exec(11, MakeNode("Compress", {"x", "c"}, {"y"}, {AttrInt("axis", -1)}),
                 {F32In("x", {3, 2}, x), In("c", kBool, {2}, {0, 1})}),
            {3, 1}, {2, 4, 6});
  const absl::Status st = RunNode(11, MakeNode("Compress", {"x", "c"}, {"y"}),
                                  {F32In("x", {3, 2}, x), In("c", kBool, {1, 2}, {0, 1})})
                              .status();
  EXPECT_THAT(st.message(), HasSubstr("condition must be 1-D"));
}

// Unique's definition over whole slices (rows of `m`, n x p): the uniques in
// sorted (lexicographic) or first-occurrence order, their first positions,
// every slice's unique, and the counts.
struct UniqueWant {
  std::vector<V> uniques;
  V indices, inverse, counts;
};
UniqueWant NaiveUnique(const std::vector<V>& m, bool sorted) {
  UniqueWant w;
  std::map<V, int64_t> first;  // slice -> first position
  std::vector<V> order;
  for (size_t i = 0; i < m.size(); ++i)
    if (first.emplace(m[i], static_cast<int64_t>(i)).second) order.push_back(m[i]);
  if (sorted) {
    order.clear();
    for (const auto& [slice, pos] : first) order.push_back(slice);
  }
  std::map<V, int64_t> place;
  for (size_t k = 0; k < order.size(); ++k) {
    place[order[k]] = static_cast<int64_t>(k);
    w.uniques.push_back(order[k]);
    w.indices.push_back(static_cast<double>(first[order[k]]));
  }
  w.counts.assign(order.size(), 0);
  for (const V& s : m) {
    w.inverse.push_back(static_cast<double>(place[s]));
    w.counts[static_cast<size_t>(place[s])] += 1;
  }
  return w;
}

TEST(ConvertUnique, FlattenedSortedAndInFirstOccurrenceOrder) {
  for (const V& x : {V{2, 1, 1, 3, 4, 3}, V{5, 5, 5, 5, 5, 5}, V{-1, 7, 0, 2, 9, -3}}) {
    for (int sorted : {0, 1}) {
      std::vector<V> m;
      for (double v : x) m.push_back({v});
      const UniqueWant w = NaiveUnique(m, sorted != 0);
      V u;
      for (const V& s : w.uniques) u.push_back(s[0]);
      const int64_t k = static_cast<int64_t>(u.size());
      std::vector<NodeOutput> o = ExecAll(
          11, MakeNode("Unique", {"x"}, {"y", "i", "inv", "n"}, {AttrInt("sorted", sorted)}),
          {F32In("x", {6}, x)});
      ASSERT_EQ(o.size(), 4u);
      ExpectOut(o[0], {k}, u);
      ExpectOut(o[1], {k}, w.indices);
      ExpectOut(o[2], {6}, w.inverse);
      ExpectOut(o[3], {k}, w.counts);
    }
  }
}

TEST(ConvertUnique, SlicesAlongAnAxisInLexicographicOrder) {
  // x [2, 4, 2], axis 1: the 4 slices of 2 x 2 (as rows of 4, axis moved first).
  const V x = {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1};
  std::vector<V> m(4);
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t k = 0; k < 2; ++k)
        m[static_cast<size_t>(j)].push_back(x[static_cast<size_t>((i * 4 + j) * 2 + k)]);
  const UniqueWant w = NaiveUnique(m, true);
  const int64_t k = static_cast<int64_t>(w.uniques.size());
  V y;  // [2, k, 2]
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t u = 0; u < k; ++u)
      for (int64_t e = 0; e < 2; ++e)
        y.push_back(w.uniques[static_cast<size_t>(u)][static_cast<size_t>(i * 2 + e)]);
  std::vector<NodeOutput> o =
      ExecAll(11, MakeNode("Unique", {"x"}, {"y", "i", "inv", "n"}, {AttrInt("axis", 1)}),
              {F32In("x", {2, 4, 2}, x)});
  ASSERT_EQ(o.size(), 4u);
  ExpectOut(o[0], {2, k, 2}, y);
  ExpectOut(o[1], {k}, w.indices);
  ExpectOut(o[2], {4}, w.inverse);
  ExpectOut(o[3], {k}, w.counts);
}

TEST(ConvertUnique, TooManyPairsIsUnsupported) {
  const absl::Status st =
      RunNode(11, MakeNode("Unique", {"x"}, {"y"}), {F32In("x", {5000}, V(5000, 1.0))}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  EXPECT_THAT(st.message(), HasSubstr("Unique over 5000 slices"));
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
