// File: types/rel_common.h
//
// Helpers shared by the core type relations (rel_*.cc): reading tensor
// arguments and attributes, axis normalization, NumPy broadcasting of shapes
// with static / `?` / symbolic dims, and data layouts ("NCHW", "NCHW16c").
//
//   absl::StatusOr<bool> Rel(const RelationCall& call, TypeReporter& r) {
//     KILN_REL_TENSOR(x, call, 0);                 // returns false while unknown
//     const SoftmaxAttrs& a = AttrsOr<SoftmaxAttrs>(call);
//     KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(call, a.axis, x->ndim()));
//     return Solve(r, call, Type(x));
//   }
//
// Dim rules used everywhere (documented once here):
//   - Two dims "unify" (must be equal) when equal, or when either is not static
//     (`?` or symbolic: the check is left to run time). Two different static dims
//     do not unify. The unified dim prefers static, then symbolic, then `?`; two
//     different symbolic dims unify to `?`.
//   - Broadcasting (BroadcastDim): equal -> that dim; static 1 with d -> d;
//     `?` or symbolic with a static d (not 1) -> d, since the other must be 1 or
//     d at run time; `?` with a symbolic n -> `?` (n may be 1 and `?` larger);
//     two different symbolic dims -> `?`; two different static dims (neither
//     1) -> error.
#ifndef KILN_TYPES_REL_COMMON_H_
#define KILN_TYPES_REL_COMMON_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "ir/dim.h"
#include "ir/layout.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "ir/type.h"
#include "types/relation.h"

namespace kiln::types::rel {

// ---- Registration (rel_register.cc) ---------------------------------------

// Registers `fn` for `op_name`, wrapped with the checks every relation needs:
// the argument count matches the operator's arity, no argument is null, and the
// attributes (when given) are of the operator's attribute kind.
absl::Status AddRelation(absl::string_view op_name, TypeRelationFn fn);

// One per family file.
absl::Status RegisterElemwiseRelations();
absl::Status RegisterReduceRelations();
absl::Status RegisterConvRelations();
absl::Status RegisterDenseRelations();
absl::Status RegisterPoolRelations();
absl::Status RegisterNormRelations();
absl::Status RegisterTransformRelations();  // also calls RegisterSliceRelations
absl::Status RegisterSliceRelations();
absl::Status RegisterDynRelations();  // rel_dyn.cc: dyn.*

// ---- Arguments ------------------------------------------------------------

// Input i as a tensor type: null while it is not known yet (an IncompleteType
// or a TypeVar); an error when it is known and not a tensor.
inline absl::StatusOr<const TensorTypeNode*> TensorArg(const RelationCall& call, int i) {
  const Type& t = call.input(i);
  if (const auto* tt = t.as<TensorTypeNode>()) return tt;
  if (t->kind == TypeKind::kIncomplete || t->kind == TypeKind::kTypeVar)
    return static_cast<const TensorTypeNode*>(nullptr);
  return call.ArgError(i, "a tensor");
}

// Declares `var` as input `i`'s tensor type; returns the error of a non-tensor
// and `false` (not solved yet) while the input is unknown.
#define KILN_REL_TENSOR(var, call, i)                                             \
  const ::kiln::TensorTypeNode* var = nullptr;                                    \
  do {                                                                            \
    auto kiln_rel_arg_ = ::kiln::types::rel::TensorArg((call), (i));              \
    if (!kiln_rel_arg_.ok()) return std::move(kiln_rel_arg_).status();            \
    var = *kiln_rel_arg_;                                                         \
  } while (0);                                                                    \
  if (var == nullptr) return false

// The call's attributes, or the operator's defaults when the call has none.
template <typename A>
const A& AttrsOr(const RelationCall& call) {
  if (const A* a = call.Attr<A>()) return *a;
  static const A* const defaults = new A();
  return *defaults;
}

// Assigns `t` to the call's output and reports the relation solved.
inline absl::StatusOr<bool> Solve(TypeReporter& r, const RelationCall& call, const Type& t) {
  KILN_RETURN_IF_ERROR(r.Assign(call.output(), t));
  return true;
}

inline std::string IntList(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
}

inline std::string RankStr(int64_t ndim) { return absl::StrCat(ndim, "-D tensor"); }

// `axis` in [-ndim, ndim) mapped to [0, ndim); `what` names the attribute.
inline absl::StatusOr<int64_t> NormalizeAxis(const RelationCall& call, int64_t axis,
                                             int64_t ndim, absl::string_view what = "axis") {
  if (axis < -ndim || axis >= ndim) {
    if (ndim == 0)
      return call.Error(absl::StrCat(what, " ", axis, " is out of range for a 0-D tensor"));
    return call.Error(absl::StrCat(what, " ", axis, " is out of range for a ", RankStr(ndim),
                                   " (expected ", -ndim, "..", ndim - 1, ")"));
  }
  return axis < 0 ? axis + ndim : axis;
}

// ---- Dims -----------------------------------------------------------------

// Could a and b be the same extent? False only for two different static dims.
inline bool DimsCompatible(const Dim& a, const Dim& b) {
  return !(a.is_static() && b.is_static() && a.value() != b.value());
}

// The common dim of two compatible dims (see the rules at the top).
inline Dim UnifyDim(const Dim& a, const Dim& b) {
  if (a == b) return a;
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  if (a.is_symbolic() && b.is_any()) return a;
  if (b.is_symbolic() && a.is_any()) return b;
  return Dim::Any();
}

// d + c, written `(n - 3)` rather than `(n + -3)` for a negative constant.
inline Dim AddConst(const Dim& d, int64_t c) {
  if (c < 0) return d - Dim(-c);
  return d + Dim(c);
}

// Broadcasts two dims; nullopt when they cannot be broadcast.
inline std::optional<Dim> BroadcastDim(const Dim& a, const Dim& b) {
  if (a == b) return a;
  if (a.is_static() && a.value() == 1) return b;
  if (b.is_static() && b.value() == 1) return a;
  if (a.is_static() && b.is_static()) return std::nullopt;
  if (a.is_static()) return a;  // b is ? or symbolic: must be 1 or a
  if (b.is_static()) return b;
  // ? with a symbolic n is not n: n may be 1 at run time and ? larger. Like
  // two different symbolic dims, the extent is known only at run time.
  return Dim::Any();
}

// NumPy broadcasting of two shapes, right-aligned. The error names both types
// and the first output dimension that does not broadcast.
inline absl::StatusOr<Shape> BroadcastShapes(const RelationCall& call, const Type& ta,
                                             const Shape& a, const Type& tb, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const Dim da = i + a.size() >= n ? a[i + a.size() - n] : Dim(1);
    const Dim db = i + b.size() >= n ? b[i + b.size() - n] : Dim(1);
    std::optional<Dim> d = BroadcastDim(da, db);
    if (!d)
      return call.Error(absl::StrCat("cannot broadcast ", TypeToString(ta), " with ",
                                     TypeToString(tb), " (dimension ", i, ": ", da.ToString(),
                                     " vs ", db.ToString(), ")"));
    out[i] = *d;
  }
  return out;
}

// Bound on window-like attribute values (strides, padding, pool sizes...), so
// that the arithmetic on them cannot overflow.
inline constexpr int64_t kMaxAttrValue = int64_t{1} << 31;

// Checks a list attribute of 1 or 2 positive values and returns it as 2 values.
inline absl::StatusOr<std::vector<int64_t>> Pair(const RelationCall& call, absl::string_view name,
                                                 const std::vector<int64_t>& v,
                                                 int64_t min_value) {
  if (v.size() != 1 && v.size() != 2)
    return call.Error(absl::StrCat(name, " must have 1 or 2 values; got ", IntList(v)));
  for (int64_t x : v)
    if (x < min_value || x > kMaxAttrValue)
      return call.Error(absl::StrCat(name, " values must be in [", min_value, ", 2^31]; got ",
                                     IntList(v)));
  return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
}

// Padding of 1 (all sides), 2 (top/bottom, left/right) or 4 (top, left, bottom,
// right) non-negative values, returned as {top, left, bottom, right}.
inline absl::StatusOr<std::vector<int64_t>> Padding4(const RelationCall& call,
                                                     const std::vector<int64_t>& p) {
  for (int64_t x : p)
    if (x < 0 || x > kMaxAttrValue)
      return call.Error(absl::StrCat("padding values must be in [0, 2^31]; got ", IntList(p)));
  switch (p.size()) {
    case 1: return std::vector<int64_t>{p[0], p[0], p[0], p[0]};
    case 2: return std::vector<int64_t>{p[0], p[1], p[0], p[1]};
    case 4: return p;
    default:
      return call.Error(absl::StrCat("padding must have 1, 2 or 4 values; got ", IntList(p)));
  }
}

// The extent of a sliding window's output along one axis:
//   floor((in + pad - dilation * (kernel - 1) - 1) / stride) + 1
// or, with ceil_mode, the ceiling. Symbolic inputs give symbolic outputs; a
// static result below 1 is an error naming `axis_name`.
inline absl::StatusOr<Dim> WindowOutDim(const RelationCall& call, absl::string_view axis_name,
                                        const Dim& in, int64_t kernel, int64_t stride,
                                        int64_t pad, int64_t dilation, bool ceil_mode = false) {
  const int64_t eff = dilation * (kernel - 1) + 1;
  Dim out;
  if (stride == 1) {
    out = AddConst(in, pad - eff + 1);
  } else {
    const int64_t c = pad - eff + (ceil_mode ? stride - 1 : 0);
    out = Dim::FloorDiv(AddConst(in, c), Dim(stride)) + Dim(1);
  }
  if (out.is_static() && out.value() < 1)
    return call.Error(absl::StrCat("output ", axis_name, " would be ", out.value(), " (input ",
                                   in.ToString(), ", padding ", pad, ", window ", eff,
                                   " with dilation, stride ", stride, ")"));
  return out;
}

// ---- Layouts --------------------------------------------------------------

// Data layouts ("NCHW", "NCHW16c") are ir/layout.h's Layout; these parse one
// for a relation, the error naming the attribute `what`:
//   data_layout "NCHW4" is not a valid layout: it ends with a number
using ::kiln::Layout;

inline absl::StatusOr<Layout> ParseLayout(const RelationCall& call, absl::string_view what,
                                          absl::string_view text) {
  absl::StatusOr<Layout> l = ::kiln::ParseLayout(text);
  if (!l.ok()) return call.Error(absl::StrCat(what, " ", l.status().message()));
  return l;
}

// Parses a layout made of exactly the primal axes in `axes` (e.g. "NCHW"),
// in any order: "NHWC", "HWIO", ...
inline absl::StatusOr<Layout> ParsePermutedLayout(const RelationCall& call, absl::string_view what,
                                                  absl::string_view text,
                                                  absl::string_view axes) {
  KILN_ASSIGN_OR_RETURN(Layout l, ParseLayout(call, what, text));
  if (!l.IsPermutationOf(axes))
    return call.Error(absl::StrCat(what, " \"", text, "\" is not supported: expected a ",
                                   "permutation of ", axes, " (e.g. \"", axes, "\")"));
  return l;
}

}  // namespace kiln::types::rel

#endif  // KILN_TYPES_REL_COMMON_H_
