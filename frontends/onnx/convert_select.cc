// File: frontends/onnx/convert_select.cc
//
// The ONNX operators whose output extent is a count of the input's values:
// NonZero, Compress and Unique. Their outputs have a `?` extent; the model
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
    KILN_ASSIGN_OR_RETURN(TensorType mt, TypeOf(mask));
    KILN_ASSIGN_OR_RETURN(TensorType nt, TypeOf(none));
    std::vector<Type> types = {Type(mt), Type(nt)};
    KILN_ASSIGN_OR_RETURN(Tuple tup, MakeTuple({mask, none}));
    tup->set_checked_type(MakeTupleType(types));
    auto a = NewAttrs<ConcatenateAttrs>();
    a->axis = 0;
    KILN_ASSIGN_OR_RETURN(mask, c.Call("concatenate", {Expr(tup)}, a));
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

}  // namespace

void RegisterSelectConverters(ConverterRegistry& r) {
  for (int v : {9, 13}) r.Add("NonZero", v, ConvertNonZero);
  r.Add("Compress", 9, ConvertCompress);
  r.Add("Compress", 11, ConvertCompress);
  r.Add("Unique", 11, ConvertUnique);
}

}  // namespace kiln::onnx_frontend::cvt
