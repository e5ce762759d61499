// File: ir/strided_slice.h
//
// What a strided_slice's attributes mean for an input of a given rank, worked
// out once for every layer that implements the operator (type relation,
// interpreter, compute): which axes are sliced, each with its begin, end (or
// size) and stride, after every attribute check.
//
//   KILN_ASSIGN_OR_RETURN(StridedSlicePlan p, PlanStridedSlice(attrs, x.ndim(), "Tensor[(4, 6), float32]"));
//   for (const SlicedAxis& s : p.axes) {
//     StaticSliceRange r = StaticSlice(shape[s.axis], s, p.size_mode);  // static extents
//     ...
//   }
//
// Semantics (Relay's): begin/end may be negative (from the end) and are
// clamped to [0, n] for a positive stride, [-1, n - 1] for a negative one; a
// missing begin/end means "from the start / to the end" in the stride's
// direction. In slice_mode "size", end holds sizes (-1: the rest) and every
// stride is 1. With `axes`, begin/end/strides give one entry per listed axis
// (strides may be a single value for all); without, entry i is axis i.
#ifndef KILN_IR_STRIDED_SLICE_H_
#define KILN_IR_STRIDED_SLICE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/op_attrs.h"

namespace kiln {

// One sliced axis.
struct SlicedAxis {
  int64_t axis = 0;              // in [0, ndim)
  std::optional<int64_t> begin;  // as given; absent: the start for the direction
  std::optional<int64_t> end;    // an end index, or a size in "size" mode; absent: to the end
  int64_t stride = 1;            // never 0; 1 in "size" mode
};

struct StridedSlicePlan {
  bool size_mode = false;
  std::vector<SlicedAxis> axes;  // the axes not listed are kept whole
};

// Checks `attrs` against an input of rank `ndim` (`input` describes it in
// messages). Errors are InvalidArgument messages without an operator prefix
// ("strides [0] contain 0"); callers add their own context.
absl::StatusOr<StridedSlicePlan> PlanStridedSlice(const StridedSliceAttrs& attrs, int64_t ndim,
                                                  absl::string_view input);

// The slice of a static extent `n`: first index, step, and element count.
struct StaticSliceRange {
  int64_t begin = 0;
  int64_t step = 1;
  int64_t length = 0;
};
StaticSliceRange StaticSlice(int64_t n, const SlicedAxis& s, bool size_mode);

// Indices beyond ±kSliceBig are clamped to it first (no overflow in sums).
inline constexpr int64_t kSliceBig = int64_t{1} << 62;

}  // namespace kiln

#endif  // KILN_IR_STRIDED_SLICE_H_
