// NonZero, Compress and Unique (convert_select.cc): one-node models imported
// and run by the interpreter on inputs with different numbers of selected
// elements, against loops written here from ONNX's definitions (the output
// extent is a count of the values, so every run has its own output shape).
#include <algorithm>
#include <cmath>
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

// Greedy NMS written from ONNX's description (as ONNX Runtime orders it):
// per batch and class, boxes by score (ties: lower index), each kept when it
// scores above score_threshold and overlaps no kept box by more than
// iou_threshold, at most max_out per class.
V NaiveNms(const V& boxes, const V& scores, int64_t B, int64_t C, int64_t N, int64_t max_out,
           double iou_thr, double score_thr, bool center, int64_t* rows) {
  auto corners = [&](int64_t b, int64_t i, double* y0, double* x0, double* y1, double* x1) {
    const double* p = &boxes[static_cast<size_t>((b * N + i) * 4)];
    if (center) {
      *x0 = p[0] - p[2] / 2, *x1 = p[0] + p[2] / 2, *y0 = p[1] - p[3] / 2, *y1 = p[1] + p[3] / 2;
    } else {
      *y0 = std::min(p[0], p[2]), *y1 = std::max(p[0], p[2]), *x0 = std::min(p[1], p[3]),
      *x1 = std::max(p[1], p[3]);
    }
  };
  auto iou = [&](int64_t b, int64_t i, int64_t j) {
    double a[4], d[4];
    corners(b, i, &a[0], &a[1], &a[2], &a[3]);
    corners(b, j, &d[0], &d[1], &d[2], &d[3]);
    const double ai = (a[2] - a[0]) * (a[3] - a[1]), aj = (d[2] - d[0]) * (d[3] - d[1]);
    const double h = std::max(0.0, std::min(a[2], d[2]) - std::max(a[0], d[0]));
    const double w = std::max(0.0, std::min(a[3], d[3]) - std::max(a[1], d[1]));
    if (ai <= 0 || aj <= 0 || h * w <= 0) return 0.0;
    return h * w / (ai + aj - h * w);
  };
  V out;
  *rows = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < C; ++k) {
      std::vector<int64_t> order(static_cast<size_t>(N));
      for (int64_t i = 0; i < N; ++i) order[static_cast<size_t>(i)] = i;
      const double* s = &scores[static_cast<size_t>((b * C + k) * N)];
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        if (!(s[i] > score_thr)) continue;
        bool ok = true;
        for (int64_t j : kept) ok = ok && !(iou(b, i, j) > iou_thr);
        if (ok) kept.push_back(i);
      }
      for (int64_t i : kept) {
        out.insert(out.end(),
                   {static_cast<double>(b), static_cast<double>(k), static_cast<double>(i)});
        ++*rows;
      }
    }
  return out;
}

TEST(ConvertNonMaxSuppression, GreedySelectionPerBatchAndClass) {
  const int64_t B = 2, C = 3, N = 7;
  uint32_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 1103515245u + 12345u;
    return static_cast<double>((seed >> 8) % 1000) / 1000.0;
  };
  for (int trial = 0; trial < 6; ++trial) {
    const bool center = trial % 2 == 1;
    V boxes, scores;
    for (int64_t i = 0; i < B * N; ++i) {
      const double a = next() * 4, b = next() * 4;
      // Corners in either order (flipped boxes), or center and size.
      if (center) {
        boxes.insert(boxes.end(), {a, b, 0.5 + next() * 2, 0.5 + next() * 2});
      } else {
        boxes.insert(boxes.end(), {a, b, a + (next() - 0.3) * 3, b + (next() - 0.3) * 3});
      }
    }
    for (int64_t i = 0; i < B * C * N; ++i) scores.push_back(std::round(next() * 8) / 8);  // ties
    const int64_t max_out = 1 + trial % 4;
    const double iou_thr = 0.1 + 0.15 * trial, score_thr = trial < 3 ? 0.2 : 0.0;
    int64_t rows = 0;
    const V want = NaiveNms(boxes, scores, B, C, N, max_out, iou_thr, score_thr, center, &rows);
    const NodeOutput y = Exec(11,
                              MakeNode("NonMaxSuppression", {"boxes", "scores", "m", "iou", "sth"},
                                       {"sel"}, {AttrInt("center_point_box", center ? 1 : 0)}),
                              {F32In("boxes", {B, N, 4}, boxes), F32In("scores", {B, C, N}, scores),
                               In("m", kI64, {1}, {static_cast<double>(max_out)}),
                               F32In("iou", {1}, {iou_thr}), F32In("sth", {1}, {score_thr})});
    EXPECT_EQ(y.dtype, kI64);
    ExpectOut(y, {rows, 3}, want);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "trial " << trial;
      return;
    }
  }
  // Without max_output_boxes_per_class nothing is selected.
  const NodeOutput none =
      Exec(11, MakeNode("NonMaxSuppression", {"boxes", "scores"}, {"sel"}),
           {F32In("boxes", {1, 1, 4}, {0, 0, 1, 1}), F32In("scores", {1, 1, 1}, {0.5})});
  ExpectOut(none, {0, 3}, {});
  const absl::Status st =
      RunNode(11, MakeNode("NonMaxSuppression", {"boxes", "scores"}, {"sel"}),
              {F32In("boxes", {1, 2, 4}, V(8, 0)), F32In("scores", {1, 1, 3}, V(3, 0))})
          .status();
  EXPECT_THAT(st.message(), HasSubstr("do not match boxes"));
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
