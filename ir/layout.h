// File: ir/layout.h
//
// Data layouts such as "NCHW", "NHWC", "HWIO", "NCHW16c" or "OIHW16i16o":
// upper-case letters are primal axes; a positive number followed by a
// lower-case letter is the inner (split) part of that primal axis with a fixed
// factor ("NCHW16c": C = c_outer * 16 + c_inner, the 'C' axis holding c_outer).
// The one parser of that syntax, shared by the type relations, the
// interpreter and the lowering (as TVM keeps Layout in its IR).
//
//   KILN_ASSIGN_OR_RETURN(Layout l, ParseLayout("NCHW16c"));
//   l.ndim();          // 5
//   l.Find('C');       // 1
//   l.Find('c');       // 4
//   l.FactorOf('C');   // 16 (0 when C is not split)
//
// ParseLayout checks the syntax only (every axis once, every split axis with
// its primal axis); which axes an operator accepts is the caller's check
// (IsPermutationOf, HasPrimalAxes).
#ifndef KILN_IR_LAYOUT_H_
#define KILN_IR_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {

struct Layout {
  struct Axis {
    char name;       // 'C' for the primal axis, 'c' for its split part
    int64_t factor;  // the split factor; 0 for primal axes
    bool is_primal() const { return factor == 0; }
  };
  std::vector<Axis> axes;  // in the order of the text
  std::string text;

  // The primal axis of split axis 'c' ('C'), and the split axis of primal 'C' ('c').
  static char PrimalOf(char split) { return static_cast<char>(split - 'a' + 'A'); }
  static char SplitOf(char primal) { return static_cast<char>(primal - 'A' + 'a'); }

  // Position of axis `name` (primal or split), or -1.
  int Find(char name) const;
  int64_t ndim() const { return static_cast<int64_t>(axes.size()); }
  // The split factor of primal axis `primal` (of its lower-case part), or 0.
  int64_t FactorOf(char primal) const;
  // Whether any axis is split.
  bool HasSplit() const;
  // Whether the primal axes are exactly those of `primal`, in any order (split
  // parts are not looked at): "NCHW16c" and "NHWC" have the primal axes "NCHW".
  bool HasPrimalAxes(absl::string_view primal) const;
  // Whether the layout is exactly the primal axes `primal` in some order,
  // nothing split: "NHWC" is a permutation of "NCHW", "NCHW16c" is not.
  bool IsPermutationOf(absl::string_view primal) const;
};

// Parses `text`. An InvalidArgument error reads
//   "<text>" is not a valid layout: <why>
// (the text quoted) where <why> is one of: it is empty; it ends with a number;
// unexpected character 'x'; a factor must precede a lower-case (split) axis;
// split axis 'c' needs a positive factor; axis 'C' appears twice; split axis
// 'c' has no primal axis 'C'; factor too large (over 2^40).
absl::StatusOr<Layout> ParseLayout(absl::string_view text);

}  // namespace kiln

#endif  // KILN_IR_LAYOUT_H_
