// File: ir/strided_slice.cc
#include "ir/strided_slice.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {
namespace {

// Strides beyond this are refused (as every integer attribute of the type
// relations).
constexpr int64_t kMaxStride = int64_t{1} << 31;

std::string List(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

}  // namespace

absl::StatusOr<StridedSlicePlan> PlanStridedSlice(const StridedSliceAttrs& a, int64_t ndim,
                                                  absl::string_view input) {
  if (a.slice_mode != "end" && a.slice_mode != "size") {
    return Invalid(absl::StrCat("slice_mode must be \"end\" or \"size\"; got \"", a.slice_mode, "\""));
  }
  StridedSlicePlan plan;
  plan.size_mode = a.slice_mode == "size";
  const std::vector<int64_t> no_strides;
  const std::vector<int64_t>& strides = a.strides ? *a.strides : no_strides;
  std::vector<int64_t> axes;
  if (a.axes) {
    const size_t n = a.axes->size();
    if (a.begin.size() != n || a.end.size() != n || (strides.size() > 1 && strides.size() != n)) {
      return Invalid(absl::StrCat("with axes ", List(*a.axes), ", begin ", List(a.begin), ", end ",
                                  List(a.end), " and strides ", List(strides),
                                  " must have one entry per axis"));
    }
    for (int64_t ax : *a.axes) {
      if (ax < -ndim || ax >= ndim) {
        if (ndim == 0) return Invalid(absl::StrCat("axes entry ", ax, " is out of range for a 0-D tensor"));
        return Invalid(absl::StrCat("axes entry ", ax, " is out of range for a ", ndim,
                                    "-D tensor (expected ", -ndim, "..", ndim - 1, ")"));
      }
      const int64_t k = ax < 0 ? ax + ndim : ax;
      if (std::find(axes.begin(), axes.end(), k) != axes.end()) {
        return Invalid(absl::StrCat("axes ", List(*a.axes), " lists axis ", k, " twice"));
      }
      axes.push_back(k);
    }
  } else {
    const size_t n = std::max({a.begin.size(), a.end.size(), strides.size()});
    if (static_cast<int64_t>(n) > ndim) {
      return Invalid(absl::StrCat("begin ", List(a.begin), ", end ", List(a.end), " and strides ",
                                  List(strides), " have more entries than ", input, " has axes"));
    }
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  for (size_t j = 0; j < axes.size(); ++j) {
    SlicedAxis s;
    s.axis = axes[j];
    if (j < a.begin.size()) s.begin = a.begin[j];
    if (j < a.end.size()) s.end = a.end[j];
    if (!plan.size_mode) {
      if (a.axes && strides.size() == 1) {
        s.stride = strides[0];
      } else if (j < strides.size()) {
        s.stride = strides[j];
      }
    }
    if (s.stride == 0) return Invalid(absl::StrCat("strides ", List(strides), " contain 0"));
    if (s.stride < -kMaxStride || s.stride > kMaxStride) {
      return Invalid(absl::StrCat("strides ", List(strides), " are too large"));
    }
    if (plan.size_mode && s.end && *s.end < -1) {
      return Invalid(absl::StrCat(
          "in slice_mode \"size\", end holds sizes (>= 0, or -1 for the rest); got ", List(a.end)));
    }
    plan.axes.push_back(s);
  }
  return plan;
}

StaticSliceRange StaticSlice(int64_t n, const SlicedAxis& s, bool size_mode) {
  const int64_t st = s.stride;
  const int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? n : n - 1;
  auto norm = [&](int64_t v) {
    v = std::clamp(v, -kSliceBig, kSliceBig);
    return std::clamp(v < 0 ? v + n : v, lo, hi);
  };
  const int64_t b = s.begin ? norm(*s.begin) : (st > 0 ? 0 : n - 1);
  int64_t e;
  if (size_mode) {
    const int64_t size = s.end.value_or(-1);
    e = size < 0 ? n : std::min(n, b + std::min(size, kSliceBig));
  } else {
    e = s.end ? norm(*s.end) : (st > 0 ? n : -1);
  }
  const int64_t len = st > 0 ? e - b : b - e;
  const int64_t step = st > 0 ? st : -st;
  StaticSliceRange r;
  r.begin = b;
  r.step = st;
  r.length = len <= 0 ? 0 : (len + step - 1) / step;
  return r;
}

}  // namespace kiln
