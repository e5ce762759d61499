// File: frontends/onnx/convert_select.cc
//
// The ONNX operators whose output extent is a count of the input's values:
// NonZero, Compress, Unique and NonMaxSuppression. Their outputs have a `?` extent; the model
// compiles for the VM, which computes it from the count when it runs
// (dyn.arange(0, count, 1) gives the output slots, lowering/vm/shape_func.h).
//
// kiln has no sort or scan operator, so each is composed of comparisons over
// the n elements (or slices) the operator selects from, as TopK is
// (convert_tensor_index.cc): an element's place in the output is a count of
// the elements before it (an n x n masked sum), and output slot k gathers the
// element whose place is k (a [?, n] comparison summed over n). That is
// O(n^2) work, limited to kMaxSelect pairs; the error says so past it.
//
//   NonZero(x)         places = exclusive prefix count of x != 0 (row-major);
//                      output [rank, count]: the coordinates of the selected
//                      flat positions (a constant [rank, n] table gathered)
//   Compress(x, c)     the positions where c holds, as for NonZero over c
//                      (shorter than the axis: the rest count as false, as
//                      numpy.compress does), then take(x, positions, axis);
//                      no axis: x flattened first
//   Unique(x)          slices along `axis` (x flattened without one) compared
//                      whole; an element is the first of its kind when no
//                      earlier one equals it; its place among the uniques is
//                      the number of first elements before it in the input
//                      (sorted=0) or lexicographically smaller than it
//                      (sorted=1, the default); outputs: the uniques
//                      (take of their first positions), those positions,
//                      every element's unique (inverse_indices) and the
//                      count of each unique
//   NonMaxSuppression  per batch and class, box j comes before box i when
//                      its score is higher (ties: the lower index) and
//                      blocks i when it also overlaps i by more than
//                      iou_threshold; the greedy selection (a box is kept
//                      when it passes score_threshold and no kept box
//                      blocks it) is the fixed point of
//                      kept' = candidate & !any(kept & blocks), reached in N
//                      steps (box k's state is final after k + 1): a local
//                      recursive function of N calls, as ONNX Loop becomes
//                      (convert_control.cc). The first
//                      max_output_boxes_per_class kept boxes of each class
//                      are the output, [batch, class, box] in batch, class,
//                      score order.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"

namespace kiln::onnx_frontend::cvt {
namespace {

// The most element pairs (n * n, times the slice length for Unique over an
// axis) one selection may compare.
constexpr int64_t kMaxSelect = int64_t{1} << 24;

const DataType kI64 = DataType::Int(64);

absl::Status CheckPairs(ConvertContext& c, int64_t pairs, const std::string& what) {
  if (pairs > kMaxSelect) {
    return c.Unsupported(absl::StrCat(
        what, " compares ", pairs, " element pairs (composed as pairwise ",
        "comparisons, limited to ", kMaxSelect, "; kiln has no sort or scan operator)"));
  }
  return absl::OkStatus();
}

// Constant bool [n, n]: entry (i, j) is j < i.
absl::StatusOr<Expr> Earlier(ConvertContext& c, int64_t n) {
  std::vector<double> lower(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j) lower[static_cast<size_t>(i * n + j)] = 1.0;
  return ConstOf(c, DataType::Bool(), {n, n}, lower);
}

// sum over j of where(pair[i, j], v[j], 0): [n, n] bool, [n] int64 -> [n].
absl::StatusOr<Expr> CountWhere(ConvertContext& c, const Expr& pair, const Expr& v) {
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(kI64, 0));
  KILN_ASSIGN_OR_RETURN(Expr row, ExpandDims(c, v, 0));  // [1, n]
  KILN_ASSIGN_OR_RETURN(Expr picked, c.Call("where", {pair, row, zero}));
  return Reduce(c, "sum", picked, {1}, false);
}

// The output slots 0..count-1 ([?] int64) and, for each, a [?, n] mask of
// the element whose place is that slot: place[i] == slot and chosen[i].
absl::StatusOr<std::pair<Expr, Expr>> Slots(ConvertContext& c, const Expr& chosen,
                                            const Expr& place) {
  KILN_ASSIGN_OR_RETURN(Expr chosen64, Cast(c, chosen, kI64));
  KILN_ASSIGN_OR_RETURN(Expr count, Reduce(c, "sum", chosen64, {0}, false));  // 0-D
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(kI64, 0));
  KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(kI64, 1));
  KILN_ASSIGN_OR_RETURN(Expr slots, c.Call("dyn.arange", {zero, count, one}));  // [?]
  KILN_ASSIGN_OR_RETURN(Expr col, ExpandDims(c, slots, 1));                     // [?, 1]
  KILN_ASSIGN_OR_RETURN(Expr prow, ExpandDims(c, place, 0));                    // [1, n]
  KILN_ASSIGN_OR_RETURN(Expr crow, ExpandDims(c, chosen, 0));
  KILN_ASSIGN_OR_RETURN(Expr at, c.Call("equal", {prow, col}));  // [?, n]
  KILN_ASSIGN_OR_RETURN(Expr sel, c.Call("logical_and", {at, crow}));
  return std::make_pair(slots, sel);
}

// For each slot (sel [?, n]), the position i its element came from: [?] int64.
absl::StatusOr<Expr> SelectedPositions(ConvertContext& c, const Expr& sel, int64_t n) {
  KILN_ASSIGN_OR_RETURN(Expr iota, ConstI64(c, {1, n}, IotaInts(0, n)));
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(kI64, 0));
  KILN_ASSIGN_OR_RETURN(Expr picked, c.Call("where", {sel, iota, zero}));
  return Reduce(c, "sum", picked, {1}, false);
}

// The positions (in increasing order) where the 1-D bool `mask` [n] holds: [?].
absl::StatusOr<Expr> TruePositions(ConvertContext& c, const Expr& mask, int64_t n) {
  KILN_ASSIGN_OR_RETURN(Expr earlier, Earlier(c, n));
  KILN_ASSIGN_OR_RETURN(Expr m64, Cast(c, mask, kI64));
  KILN_ASSIGN_OR_RETURN(Expr place, CountWhere(c, earlier, m64));  // trues before i
  KILN_ASSIGN_OR_RETURN(auto slots, Slots(c, mask, place));
  return SelectedPositions(c, slots.second, n);
}

absl::StatusOr<Expr> NotZero(ConvertContext& c, const Expr& x) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  if (t->dtype.is_bool()) return x;
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(t->dtype, 0));
  return c.Call("not_equal", {x, zero});
}

Outs ConvertNonZero(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, t, "the input"));
  const int64_t r = t->ndim(), n = Product(dims);
  KILN_RETURN_IF_ERROR(CheckPairs(c, n * n, absl::StrCat("NonZero over ", n, " elements")));
  if (r == 0) {
    // ONNX gives a 0-D input's nonzeros as [0, count]: an empty tensor
    // whose extent still depends on the value.
    return c.Unsupported("NonZero of a 0-D tensor (its output [0, count] has no elements)");
  }
  const int64_t rank = r;
  KILN_ASSIGN_OR_RETURN(Expr flat, Reshape(c, x, {n}));
  KILN_ASSIGN_OR_RETURN(Expr mask, NotZero(c, flat));
  KILN_ASSIGN_OR_RETURN(Expr earlier, Earlier(c, n));
  KILN_ASSIGN_OR_RETURN(Expr m64, Cast(c, mask, kI64));
  KILN_ASSIGN_OR_RETURN(Expr place, CountWhere(c, earlier, m64));
  KILN_ASSIGN_OR_RETURN(auto slots, Slots(c, mask, place));
  // coords[a, i]: coordinate a of flat position i.
  std::vector<int64_t> coords(static_cast<size_t>(rank * n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    for (int64_t a = rank - 1; a >= 0; --a) {
      const int64_t d = dims[static_cast<size_t>(a)];
      coords[static_cast<size_t>(a * n + i)] = rest % d;
      rest /= d;
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr table, ConstI64(c, {rank, 1, n}, coords));
  KILN_ASSIGN_OR_RETURN(Expr sel, ExpandDims(c, slots.second, 0));  // [1, ?, n]
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(kI64, 0));
  KILN_ASSIGN_OR_RETURN(Expr picked, c.Call("where", {sel, table, zero}));  // [rank, ?, n]
  KILN_ASSIGN_OR_RETURN(Expr y, Reduce(c, "sum", picked, {2}, false));
  return std::vector<Expr>{y};
}

Outs ConvertCompress(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(Expr cond, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType ct, c.InputType(1));
  if (ct->ndim() != 1)
    return c.Invalid(absl::StrCat("condition must be 1-D; it is ", TypeToString(Type(ct))));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> cdims, StaticDims(c, ct, "condition"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, t, "the input"));
  int64_t axis = 0;
  if (c.HasAttr("axis")) {
    KILN_ASSIGN_OR_RETURN(int64_t a, c.AttrInt("axis", 0));
    KILN_ASSIGN_OR_RETURN(axis, NormAxis(c, a, t->ndim()));
  } else {
    const int64_t n = Product(dims);
    KILN_ASSIGN_OR_RETURN(x, Reshape(c, x, {n}));
    dims = {n};
  }
  const int64_t len = dims[static_cast<size_t>(axis)], m = cdims[0];
  KILN_RETURN_IF_ERROR(CheckPairs(c, len * len, absl::StrCat("Compress along an axis of ", len)));
  KILN_ASSIGN_OR_RETURN(Expr mask, NotZero(c, cond));
  if (m > len) {
    // numpy.compress: entries past the axis must not select anything; kiln
    // uses the first `len` (the data set's extra entries are false).
    KILN_ASSIGN_OR_RETURN(mask, SliceAxis(c, mask, 0, 0, len, 1));
  } else if (m < len) {
    KILN_ASSIGN_OR_RETURN(Expr none,
                          ConstOf(c, DataType::Bool(), {len - m},
                                  std::vector<double>(static_cast<size_t>(len - m), 0.0)));
    KILN_ASSIGN_OR_RETURN(mask, ConcatAxis(c, {mask, none}, 0));
  }
  KILN_ASSIGN_OR_RETURN(Expr pos, TruePositions(c, mask, len));
  KILN_ASSIGN_OR_RETURN(Expr y, Take(c, x, pos, axis));
  return std::vector<Expr>{y};
}

Outs ConvertUnique(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, t, "the input"));
  KILN_ASSIGN_OR_RETURN(int64_t sorted, c.AttrInt("sorted", 1));
  const int64_t r = t->ndim();
  // s: x as [n, p], the n slices along `axis` (each of p elements) in order.
  Expr s;
  int64_t axis = 0, n = 0, p = 1;
  const bool has_axis = c.HasAttr("axis");
  if (has_axis) {
    KILN_ASSIGN_OR_RETURN(int64_t a, c.AttrInt("axis", 0));
    KILN_ASSIGN_OR_RETURN(axis, NormAxis(c, a, r));
    std::vector<int64_t> perm = {axis};
    for (int64_t i = 0; i < r; ++i)
      if (i != axis) perm.push_back(i);
    n = dims[static_cast<size_t>(axis)];
    p = Product(dims) / std::max<int64_t>(n, 1);
    KILN_ASSIGN_OR_RETURN(Expr moved, Transpose(c, x, perm));
    KILN_ASSIGN_OR_RETURN(s, Reshape(c, moved, {n, p}));
  } else {
    n = Product(dims);
    KILN_ASSIGN_OR_RETURN(s, Reshape(c, x, {n, 1}));
  }
  KILN_RETURN_IF_ERROR(CheckPairs(c, n * n * (sorted != 0 && p > 1 ? p * p : p),
                                  absl::StrCat("Unique over ", n, " slices of ", p, " elements")));
  KILN_ASSIGN_OR_RETURN(Expr si, ExpandDims(c, s, 1));  // [n, 1, p]: slice i
  KILN_ASSIGN_OR_RETURN(Expr sj, ExpandDims(c, s, 0));  // [1, n, p]: slice j
  KILN_ASSIGN_OR_RETURN(Expr ne, c.Call("not_equal", {si, sj}));
  KILN_ASSIGN_OR_RETURN(Expr ne64, Cast(c, ne, kI64));
  KILN_ASSIGN_OR_RETURN(Expr diff, Reduce(c, "sum", ne64, {2}, false));
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(kI64, 0));
  KILN_ASSIGN_OR_RETURN(Expr same, c.Call("equal", {diff, zero}));  // [n, n]
  KILN_ASSIGN_OR_RETURN(Expr earlier, Earlier(c, n));
  KILN_ASSIGN_OR_RETURN(Expr dup, c.Call("logical_and", {same, earlier}));
  KILN_ASSIGN_OR_RETURN(Expr dup64, Cast(c, dup, kI64));
  KILN_ASSIGN_OR_RETURN(Expr dups, Reduce(c, "sum", dup64, {1}, false));
  KILN_ASSIGN_OR_RETURN(Expr first, c.Call("equal", {dups, zero}));  // [n]
  KILN_ASSIGN_OR_RETURN(Expr first64, Cast(c, first, kI64));
  // before[i, j]: slice j comes before slice i in the output order.
  Expr before;
  if (sorted == 0) {
    before = earlier;
  } else if (p == 1) {
    KILN_ASSIGN_OR_RETURN(Expr xi, Reshape(c, s, {n, 1}));
    KILN_ASSIGN_OR_RETURN(Expr xj, Reshape(c, s, {1, n}));
    KILN_ASSIGN_OR_RETURN(before, c.Call("less", {xj, xi}));
  } else {
    // Lexicographic: j < i when, at the first element q where they differ,
    // s[j, q] < s[i, q]. prior[i, j, q]: they differ somewhere before q.
    std::vector<double> lower(static_cast<size_t>(p * p), 0.0);
    for (int64_t q = 0; q < p; ++q)
      for (int64_t u = 0; u < q; ++u) lower[static_cast<size_t>(q * p + u)] = 1.0;
    KILN_ASSIGN_OR_RETURN(Expr lq, ConstOf(c, DataType::Bool(), {1, 1, p, p}, lower));
    KILN_ASSIGN_OR_RETURN(Expr ne4, ExpandDims(c, ne, 2));  // [n, n, 1, p]
    KILN_ASSIGN_OR_RETURN(Expr hit, c.Call("logical_and", {ne4, lq}));
    KILN_ASSIGN_OR_RETURN(Expr hit64, Cast(c, hit, kI64));
    KILN_ASSIGN_OR_RETURN(Expr nprior, Reduce(c, "sum", hit64, {3}, false));  // [n, n, p]
    KILN_ASSIGN_OR_RETURN(Expr clean, c.Call("equal", {nprior, zero}));
    KILN_ASSIGN_OR_RETURN(Expr lt, c.Call("less", {sj, si}));  // [n, n, p]
    KILN_ASSIGN_OR_RETURN(Expr decides, c.Call("logical_and", {clean, lt}));
    KILN_ASSIGN_OR_RETURN(Expr d64, Cast(c, decides, kI64));
    KILN_ASSIGN_OR_RETURN(Expr any, Reduce(c, "sum", d64, {2}, false));
    KILN_ASSIGN_OR_RETURN(before, c.Call("greater", {any, zero}));
  }
  // place[i]: the first slices before slice i in the output order.
  KILN_ASSIGN_OR_RETURN(Expr place, CountWhere(c, before, first64));
  KILN_ASSIGN_OR_RETURN(auto slots, Slots(c, first, place));
  KILN_ASSIGN_OR_RETURN(Expr indices, SelectedPositions(c, slots.second, n));  // [?]
  // inverse[i]: the place of the first slice equal to slice i.
  KILN_ASSIGN_OR_RETURN(Expr firsts, ExpandDims(c, first, 0));
  KILN_ASSIGN_OR_RETURN(Expr owner, c.Call("logical_and", {same, firsts}));
  KILN_ASSIGN_OR_RETURN(Expr inverse, CountWhere(c, owner, place));  // [n]
  // counts[k]: the slices whose unique is k.
  KILN_ASSIGN_OR_RETURN(Expr inv_row, ExpandDims(c, inverse, 0));       // [1, n]
  KILN_ASSIGN_OR_RETURN(Expr slot_col, ExpandDims(c, slots.first, 1));  // [?, 1]
  KILN_ASSIGN_OR_RETURN(Expr mine, c.Call("equal", {inv_row, slot_col}));
  KILN_ASSIGN_OR_RETURN(Expr mine64, Cast(c, mine, kI64));
  KILN_ASSIGN_OR_RETURN(Expr counts, Reduce(c, "sum", mine64, {1}, false));  // [?]
  Expr y;
  if (has_axis) {
    KILN_ASSIGN_OR_RETURN(y, Take(c, x, indices, axis));
  } else {
    KILN_ASSIGN_OR_RETURN(Expr flat, Reshape(c, x, {n}));
    KILN_ASSIGN_OR_RETURN(y, Take(c, flat, indices, 0));
  }
  return std::vector<Expr>{y, indices, inverse, counts};
}

// A 0-D tensor of `dtype` from input i (0-D or [1]), or `def` when absent.
absl::StatusOr<Expr> ScalarInput(ConvertContext& c, int i, DataType dtype, double def,
                                 absl::string_view what) {
  if (!c.HasInput(i)) return c.ScalarConst(dtype, def);
  KILN_ASSIGN_OR_RETURN(Expr v, c.Input(i));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(i));
  const bool one =
      t->ndim() == 0 || (t->ndim() == 1 && t->shape[0].is_static() && t->shape[0].value() == 1);
  if (!one)
    return c.Invalid(absl::StrCat(what, " (input ", i, ") must hold one element; it is ",
                                  TypeToString(Type(t))));
  if (t->ndim() == 1) {
    KILN_ASSIGN_OR_RETURN(v, Reshape(c, v, {}));
  }
  return Cast(c, v, dtype);
}

Var TypedVar(const std::string& name, const Expr& like) {
  Var v = MakeVar(name, like->checked_type());
  v->set_checked_type(like->checked_type());
  return v;
}

Outs ConvertNonMaxSuppression(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr boxes, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType bt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(Expr scores, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType st, c.InputType(1));
  if (bt->ndim() != 3)
    return c.Invalid(
        absl::StrCat("boxes must be [batch, boxes, 4]; it is ", TypeToString(Type(bt))));
  if (st->ndim() != 3)
    return c.Invalid(
        absl::StrCat("scores must be [batch, classes, boxes]; it is ", TypeToString(Type(st))));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> bd, StaticDims(c, bt, "boxes"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> sd, StaticDims(c, st, "scores"));
  const int64_t B = bd[0], N = bd[1], C = sd[1];
  if (bd[2] != 4) return c.Invalid(absl::StrCat("boxes' last extent must be 4; it is ", bd[2]));
  if (sd[0] != B || sd[2] != N)
    return c.Invalid(absl::StrCat("scores ", ShapeToString(st->shape), " do not match boxes ",
                                  ShapeToString(bt->shape), " (expected [", B, ", classes, ", N,
                                  "])"));
  if (!bt->dtype.is_float() || bt->dtype != st->dtype)
    return c.Invalid(absl::StrCat("boxes and scores must be one float dtype; they are ",
                                  TypeToString(Type(bt)), " and ", TypeToString(Type(st))));
  KILN_ASSIGN_OR_RETURN(int64_t center, c.AttrInt("center_point_box", 0));
  if (center != 0 && center != 1)
    return c.Invalid(absl::StrCat("center_point_box ", center, " is not 0 or 1"));
  KILN_RETURN_IF_ERROR(
      CheckPairs(c, B * C * N * N, absl::StrCat("NonMaxSuppression over ", N, " boxes")));
  const DataType ft = bt->dtype, kBool = DataType::Bool();
  KILN_ASSIGN_OR_RETURN(Expr max_out, ScalarInput(c, 2, kI64, 0, "max_output_boxes_per_class"));
  KILN_ASSIGN_OR_RETURN(Expr iou_thr, ScalarInput(c, 3, ft, 0, "iou_threshold"));
  // Corners [B, N] each: y_min, x_min, y_max, x_max.
  Expr coord[4];
  for (int64_t k = 0; k < 4; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr part, SliceAxis(c, boxes, 2, k, k + 1, 1));
    KILN_ASSIGN_OR_RETURN(coord[k], Reshape(c, part, {B, N}));
  }
  Expr lo[2], hi[2];  // [0]: y, [1]: x
  if (center == 1) {  // [x_center, y_center, width, height]
    KILN_ASSIGN_OR_RETURN(Expr half, c.ScalarConst(ft, 0.5));
    for (int a = 0; a < 2; ++a) {
      const Expr& mid = coord[a == 0 ? 1 : 0];
      KILN_ASSIGN_OR_RETURN(Expr ext, c.Call("multiply", {coord[a == 0 ? 3 : 2], half}));
      KILN_ASSIGN_OR_RETURN(lo[a], c.Call("subtract", {mid, ext}));
      KILN_ASSIGN_OR_RETURN(hi[a], c.Call("add", {mid, ext}));
    }
  } else {  // [y1, x1, y2, x2], any diagonal
    for (int a = 0; a < 2; ++a) {
      KILN_ASSIGN_OR_RETURN(lo[a], c.Call("minimum", {coord[a], coord[a + 2]}));
      KILN_ASSIGN_OR_RETURN(hi[a], c.Call("maximum", {coord[a], coord[a + 2]}));
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr zero_f, c.ScalarConst(ft, 0));
  KILN_ASSIGN_OR_RETURN(Expr one_f, c.ScalarConst(ft, 1));
  // Pairwise intersection [B, N, N] (i along axis 1, j along axis 2).
  Expr inter, area[2];
  for (int a = 0; a < 2; ++a) {
    KILN_ASSIGN_OR_RETURN(Expr loi, ExpandDims(c, lo[a], 2));
    KILN_ASSIGN_OR_RETURN(Expr loj, ExpandDims(c, lo[a], 1));
    KILN_ASSIGN_OR_RETURN(Expr hii, ExpandDims(c, hi[a], 2));
    KILN_ASSIGN_OR_RETURN(Expr hij, ExpandDims(c, hi[a], 1));
    KILN_ASSIGN_OR_RETURN(Expr top, c.Call("minimum", {hii, hij}));
    KILN_ASSIGN_OR_RETURN(Expr bottom, c.Call("maximum", {loi, loj}));
    KILN_ASSIGN_OR_RETURN(Expr len, c.Call("subtract", {top, bottom}));
    KILN_ASSIGN_OR_RETURN(len, c.Call("maximum", {len, zero_f}));
    if (a == 0) {
      inter = len;
    } else {
      KILN_ASSIGN_OR_RETURN(inter, c.Call("multiply", {inter, len}));
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr hy, c.Call("subtract", {hi[0], lo[0]}));
  KILN_ASSIGN_OR_RETURN(Expr wx, c.Call("subtract", {hi[1], lo[1]}));
  KILN_ASSIGN_OR_RETURN(Expr ar, c.Call("multiply", {hy, wx}));  // [B, N]
  KILN_ASSIGN_OR_RETURN(area[0], ExpandDims(c, ar, 2));
  KILN_ASSIGN_OR_RETURN(area[1], ExpandDims(c, ar, 1));
  KILN_ASSIGN_OR_RETURN(Expr both, c.Call("add", {area[0], area[1]}));
  KILN_ASSIGN_OR_RETURN(Expr uni, c.Call("subtract", {both, inter}));
  // Boxes of no area overlap nothing.
  KILN_ASSIGN_OR_RETURN(Expr pos_i, c.Call("greater", {area[0], zero_f}));
  KILN_ASSIGN_OR_RETURN(Expr pos_j, c.Call("greater", {area[1], zero_f}));
  KILN_ASSIGN_OR_RETURN(Expr real, c.Call("logical_and", {pos_i, pos_j}));
  KILN_ASSIGN_OR_RETURN(Expr meets, c.Call("greater", {inter, zero_f}));
  KILN_ASSIGN_OR_RETURN(real, c.Call("logical_and", {real, meets}));
  KILN_ASSIGN_OR_RETURN(Expr safe, c.Call("where", {real, uni, one_f}));
  KILN_ASSIGN_OR_RETURN(Expr iou, c.Call("divide", {inter, safe}));
  KILN_ASSIGN_OR_RETURN(Expr over, c.Call("greater", {iou, iou_thr}));
  KILN_ASSIGN_OR_RETURN(over, c.Call("logical_and", {over, real}));
  KILN_ASSIGN_OR_RETURN(over, ExpandDims(c, over, 1));  // [B, 1, N, N]
  // before[b, c, i, j]: box j is ranked before box i.
  KILN_ASSIGN_OR_RETURN(Expr si, ExpandDims(c, scores, 3));
  KILN_ASSIGN_OR_RETURN(Expr sj, ExpandDims(c, scores, 2));
  KILN_ASSIGN_OR_RETURN(Expr higher, c.Call("greater", {sj, si}));
  KILN_ASSIGN_OR_RETURN(Expr tie, c.Call("equal", {sj, si}));
  KILN_ASSIGN_OR_RETURN(Expr earlier, Earlier(c, N));
  KILN_ASSIGN_OR_RETURN(tie, c.Call("logical_and", {tie, earlier}));
  KILN_ASSIGN_OR_RETURN(Expr before, c.Call("logical_or", {higher, tie}));  // [B, C, N, N]
  KILN_ASSIGN_OR_RETURN(Expr blocks, c.Call("logical_and", {before, over}));
  Expr cand;
  if (c.HasInput(4)) {
    KILN_ASSIGN_OR_RETURN(Expr score_thr, ScalarInput(c, 4, ft, 0, "score_threshold"));
    KILN_ASSIGN_OR_RETURN(cand, c.Call("greater", {scores, score_thr}));
  } else {
    KILN_ASSIGN_OR_RETURN(cand, ConstOf(c, kBool, {B, C, N},
                                        std::vector<double>(static_cast<size_t>(B * C * N), 1.0)));
  }
  // The recursion: step(t, kept, cand, blocks) = t < N ? step(t + 1, next(kept), ...) : (kept,).
  KILN_ASSIGN_OR_RETURN(Expr t0, c.ScalarConst(kI64, 0));
  const Var t = TypedVar("t", t0), kept = TypedVar("kept", cand), cv = TypedVar("cand", cand),
            bv = TypedVar("blocks", blocks);
  KILN_ASSIGN_OR_RETURN(Expr n_c, c.ScalarConst(kI64, static_cast<double>(N)));
  KILN_ASSIGN_OR_RETURN(Expr go, c.Call("less", {t, n_c}));
  KILN_ASSIGN_OR_RETURN(Expr one_i, c.ScalarConst(kI64, 1));
  KILN_ASSIGN_OR_RETURN(Expr t1, c.Call("add", {t, one_i}));
  KILN_ASSIGN_OR_RETURN(Expr kj, ExpandDims(c, kept, 2));  // [B, C, 1, N]
  KILN_ASSIGN_OR_RETURN(Expr hit, c.Call("logical_and", {bv, kj}));
  KILN_ASSIGN_OR_RETURN(Expr hit64, Cast(c, hit, kI64));
  KILN_ASSIGN_OR_RETURN(Expr nhit, Reduce(c, "sum", hit64, {3}, false));
  KILN_ASSIGN_OR_RETURN(Expr zero_i, c.ScalarConst(kI64, 0));
  KILN_ASSIGN_OR_RETURN(Expr free, c.Call("equal", {nhit, zero_i}));
  KILN_ASSIGN_OR_RETURN(Expr next, c.Call("logical_and", {cv, free}));
  std::vector<Type> pts = {t->checked_type(), kept->checked_type(), cv->checked_type(),
                           bv->checked_type()};
  Type ret = MakeTupleType({kept->checked_type()});
  KILN_ASSIGN_OR_RETURN(FuncType fty, MakeFuncType(pts, ret));
  Var loop = MakeVar("nms_step", fty);
  loop->set_checked_type(fty);
  KILN_ASSIGN_OR_RETURN(Call again, MakeCall(loop, {t1, next, cv, bv}));
  KILN_ASSIGN_OR_RETURN(Tuple done, MakeTuple({Expr(kept)}));
  KILN_ASSIGN_OR_RETURN(If branch, MakeIf(go, again, done));
  KILN_ASSIGN_OR_RETURN(Function fn, MakeFunction({t, kept, cv, bv}, branch, ret));
  KILN_ASSIGN_OR_RETURN(Call first, MakeCall(loop, {t0, cand, cand, blocks}));
  KILN_ASSIGN_OR_RETURN(Let let, MakeLet(loop, fn, first));
  KILN_ASSIGN_OR_RETURN(Expr sel, c.TupleGet(Expr(let), 0));  // [B, C, N] bool
  // The first max_out kept boxes of each class.
  KILN_ASSIGN_OR_RETURN(Expr sel64, Cast(c, sel, kI64));
  KILN_ASSIGN_OR_RETURN(Expr sel_j, ExpandDims(c, sel64, 2));
  KILN_ASSIGN_OR_RETURN(Expr ahead, c.Call("where", {before, sel_j, zero_i}));
  KILN_ASSIGN_OR_RETURN(Expr rank, Reduce(c, "sum", ahead, {3}, false));  // [B, C, N]
  KILN_ASSIGN_OR_RETURN(Expr within, c.Call("less", {rank, max_out}));
  KILN_ASSIGN_OR_RETURN(Expr keep, c.Call("logical_and", {sel, within}));
  // Place in the output: the boxes kept in earlier (batch, class) groups, then rank.
  const int64_t G = B * C;
  KILN_ASSIGN_OR_RETURN(Expr keep64, Cast(c, keep, kI64));
  KILN_ASSIGN_OR_RETURN(Expr per, Reduce(c, "sum", keep64, {2}, false));  // [B, C]
  KILN_ASSIGN_OR_RETURN(Expr per_g, Reshape(c, per, {G}));
  KILN_ASSIGN_OR_RETURN(Expr groups_before, Earlier(c, G));
  KILN_ASSIGN_OR_RETURN(Expr offset, CountWhere(c, groups_before, per_g));  // [G]
  KILN_ASSIGN_OR_RETURN(Expr off_col, Reshape(c, offset, {G, 1}));
  KILN_ASSIGN_OR_RETURN(Expr rank_g, Reshape(c, rank, {G, N}));
  KILN_ASSIGN_OR_RETURN(Expr place, c.Call("add", {off_col, rank_g}));
  KILN_ASSIGN_OR_RETURN(place, Reshape(c, place, {G * N}));
  KILN_ASSIGN_OR_RETURN(Expr chosen, Reshape(c, keep, {G * N}));
  KILN_ASSIGN_OR_RETURN(auto slots, Slots(c, chosen, place));
  std::vector<int64_t> table(static_cast<size_t>(3 * G * N));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < C; ++k)
      for (int64_t i = 0; i < N; ++i) {
        const int64_t f = (b * C + k) * N + i;
        table[static_cast<size_t>(f)] = b;
        table[static_cast<size_t>(G * N + f)] = k;
        table[static_cast<size_t>(2 * G * N + f)] = i;
      }
  KILN_ASSIGN_OR_RETURN(Expr tab, ConstI64(c, {3, 1, G * N}, table));
  KILN_ASSIGN_OR_RETURN(Expr sel3, ExpandDims(c, slots.second, 0));  // [1, ?, G*N]
  KILN_ASSIGN_OR_RETURN(Expr picked, c.Call("where", {sel3, tab, zero_i}));
  KILN_ASSIGN_OR_RETURN(Expr cols, Reduce(c, "sum", picked, {2}, false));  // [3, ?]
  KILN_ASSIGN_OR_RETURN(Expr y, Transpose(c, cols, {1, 0}));
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterSelectConverters(ConverterRegistry& r) {
  for (int v : {10, 11}) r.Add("NonMaxSuppression", v, ConvertNonMaxSuppression);
  for (int v : {9, 13}) r.Add("NonZero", v, ConvertNonZero);
  r.Add("Compress", 9, ConvertCompress);
  r.Add("Compress", 11, ConvertCompress);
  r.Add("Unique", 11, ConvertUnique);
}

}  // namespace kiln::onnx_frontend::cvt
