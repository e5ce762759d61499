// Tests of PlanStridedSlice and StaticSlice: the attribute checks and their
// messages, and static ranges against CPython's slice algorithm
// (PySlice_AdjustIndices), an independent formulation of the same semantics.
#include "ir/strided_slice.h"

#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

StridedSliceAttrs Attrs(std::vector<int64_t> begin, std::vector<int64_t> end,
                        std::optional<std::vector<int64_t>> strides = std::nullopt,
                        std::optional<std::vector<int64_t>> axes = std::nullopt,
                        std::string mode = "end") {
  StridedSliceAttrs a;
  a.begin = std::move(begin);
  a.end = std::move(end);
  a.strides = std::move(strides);
  a.axes = std::move(axes);
  a.slice_mode = std::move(mode);
  return a;
}

std::string Error(const StridedSliceAttrs& a, int64_t ndim) {
  absl::StatusOr<StridedSlicePlan> p = PlanStridedSlice(a, ndim, "the input");
  return p.ok() ? "ok" : std::string(p.status().message());
}

TEST(PlanStridedSlice, AxesStridesAndDefaults) {
  absl::StatusOr<StridedSlicePlan> p =
      PlanStridedSlice(Attrs({1, 0}, {3, -1}, std::vector<int64_t>{2}, std::vector<int64_t>{-1, 0}), 3, "x");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->axes.size(), 2u);
  EXPECT_EQ(p->axes[0].axis, 2);
  EXPECT_EQ(p->axes[1].axis, 0);
  EXPECT_EQ(p->axes[0].stride, 2);  // one stride for every listed axis
  EXPECT_EQ(p->axes[1].stride, 2);
  p = PlanStridedSlice(Attrs({1}, {}), 2, "x");
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->axes.size(), 1u);
  EXPECT_EQ(p->axes[0].begin, 1);
  EXPECT_FALSE(p->axes[0].end.has_value());
  p = PlanStridedSlice(Attrs({0}, {2}, std::vector<int64_t>{5}, std::nullopt, "size"), 1, "x");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->size_mode);
  EXPECT_EQ(p->axes[0].stride, 1);  // strides do not apply in size mode
}

TEST(PlanStridedSlice, Errors) {
  EXPECT_EQ(Error(Attrs({0}, {5}, std::vector<int64_t>{0}), 1), "strides [0] contain 0");
  EXPECT_THAT(Error(Attrs({0}, {5}, std::nullopt, std::nullopt, "bad"), 1),
              HasSubstr("slice_mode must be \"end\" or \"size\"; got \"bad\""));
  EXPECT_THAT(Error(Attrs({0, 0}, {1}, std::nullopt, std::vector<int64_t>{0, 1}), 2),
              HasSubstr("must have one entry per axis"));
  EXPECT_EQ(Error(Attrs({0, 0, 0}, {1}), 2),
            "begin [0, 0, 0], end [1] and strides [] have more entries than the input has axes");
  EXPECT_EQ(Error(Attrs({0}, {1}, std::nullopt, std::vector<int64_t>{2}), 2),
            "axes entry 2 is out of range for a 2-D tensor (expected -2..1)");
  EXPECT_EQ(Error(Attrs({0, 0}, {1, 1}, std::nullopt, std::vector<int64_t>{1, -1}), 2),
            "axes [1, -1] lists axis 1 twice");
  EXPECT_THAT(Error(Attrs({0}, {-2}, std::nullopt, std::nullopt, "size"), 1),
              HasSubstr("end holds sizes"));
  EXPECT_THAT(Error(Attrs({0}, {5}, std::vector<int64_t>{int64_t{1} << 40}), 1),
              HasSubstr("too large"));
}

// CPython's PySlice_AdjustIndices + slice length, for a stride != 0.
StaticSliceRange PythonSlice(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop,
                             int64_t step) {
  int64_t b = start ? *start : (step < 0 ? n - 1 : 0);
  int64_t e = stop ? *stop : (step < 0 ? -n - 1 : n);  // "to the end" either way
  if (start) {
    if (b < 0) {
      b += n;
      if (b < 0) b = step < 0 ? -1 : 0;
    } else if (b >= n) {
      b = step < 0 ? n - 1 : n;
    }
  }
  if (e < 0) {
    e += n;
    if (e < 0) e = step < 0 ? -1 : 0;
  } else if (e >= n) {
    e = step < 0 ? n - 1 : n;
  }
  int64_t len = 0;
  if (step < 0) {
    if (e < b) len = (b - e - 1) / (-step) + 1;
  } else if (b < e) {
    len = (e - b - 1) / step + 1;
  }
  return {b, step, len};
}

TEST(StaticSlice, MatchesPythonSlicing) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> value(-15, 15), extent(0, 12), stride(1, 4), coin(0, 3);
  for (int trial = 0; trial < 20000; ++trial) {
    const int64_t n = extent(rng);
    SlicedAxis s;
    s.stride = coin(rng) < 2 ? stride(rng) : -stride(rng);
    if (coin(rng) != 0) s.begin = value(rng);
    if (coin(rng) != 0) s.end = value(rng);
    const StaticSliceRange got = StaticSlice(n, s, false);
    const StaticSliceRange want = PythonSlice(n, s.begin, s.end, s.stride);
    ASSERT_EQ(got.length, want.length) << "n " << n << " begin " << s.begin.value_or(999)
                                       << " end " << s.end.value_or(999) << " stride " << s.stride;
    if (got.length > 0) {
      ASSERT_EQ(got.begin, want.begin) << "n " << n;
    }
    EXPECT_EQ(got.step, s.stride);
  }
}

TEST(StaticSlice, SizeMode) {
  SlicedAxis s;
  s.begin = 3;
  s.end = 4;
  EXPECT_EQ(StaticSlice(10, s, true).length, 4);
  EXPECT_EQ(StaticSlice(10, s, true).begin, 3);
  s.end = -1;  // the rest
  EXPECT_EQ(StaticSlice(10, s, true).length, 7);
  s.end = 100;
  EXPECT_EQ(StaticSlice(10, s, true).length, 7);
  s.begin = -2;
  s.end = 1;
  EXPECT_EQ(StaticSlice(10, s, true).begin, 8);
  EXPECT_EQ(StaticSlice(10, s, true).length, 1);
}

}  // namespace
}  // namespace kiln
