// Type relations of operators that cut or join tensors: concatenate, split,
// strided_slice, take. (Part of the "transform" family; registered by
// RegisterTransformRelations.)
//
//   concatenate(tuple)  fields: same rank and dtype; dims other than `axis`
//                       must unify (rel_common.h); axis extent = sum.
//                       Waits while the tuple or any field is unknown.
//   split               sections > 0: equal parts (a static extent must divide);
//                       sections == 0: cut at ascending `indices` (>= 0, <= a
//                       static extent) -> len(indices) + 1 parts. -> TupleType.
//   strided_slice       begin/end/strides apply to `axes` (all three lists must
//                       then match axes in length; strides may be absent or
//                       hold one value for all) or, without axes, to the leading
//                       axes (lists may be shorter than the rank: missing begin
//                       = start, end = end, stride = 1). Static extents follow
//                       NumPy exactly: negative indices count from the end and
//                       indices are clamped; negative strides walk backwards.
//                       slice_mode "size": end holds sizes (-1 = to the end),
//                       strides are ignored (1).
//                       Non-static extents cannot be clamped: indices are
//                       assumed in range, an end >= 2^31-1 means "to the end"
//                       and an end <= -2^31 (negative stride) "past the start".
//   take(data, indices) indices must be integer; axis=none -> indices' shape;
//                       else data[:axis] + indices[batch_dims:] + data[axis+1:].
//                       batch_dims (negative counts from indices' rank) must be
//                       <= axis, and leading dims must unify.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/strided_slice.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

absl::StatusOr<bool> ConcatenateRel(const RelationCall& call, TypeReporter& r) {
  const Type& in = call.input(0);
  if (in->kind == TypeKind::kIncomplete || in->kind == TypeKind::kTypeVar) return false;
  const auto* tuple = in.as<TupleTypeNode>();
  if (tuple == nullptr) return call.ArgError(0, "a tuple of tensors");
  if (tuple->fields.empty()) return call.ArgError(0, "a non-empty tuple of tensors");
  std::vector<const TensorTypeNode*> ts;
  for (const Type& f : tuple->fields) {
    if (f->kind == TypeKind::kIncomplete || f->kind == TypeKind::kTypeVar) return false;
    const auto* t = f.as<TensorTypeNode>();
    if (t == nullptr) return call.ArgError(0, "a tuple of tensors");
    ts.push_back(t);
  }
  const auto& a = AttrsOr<ConcatenateAttrs>(call);
  const TensorTypeNode* t0 = ts[0];
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(call, a.axis, t0->ndim()));
  Shape out = t0->shape;
  for (size_t i = 1; i < ts.size(); ++i) {
    const TensorTypeNode* t = ts[i];
    if (t->ndim() != t0->ndim() || t->dtype != t0->dtype)
      return call.Error(absl::StrCat("field ", i, " has type ", TypeToString(tuple->fields[i]),
                                     "; expected a ", RankStr(t0->ndim()), " of dtype ",
                                     t0->dtype.ToString(), " like field 0"));
    for (size_t k = 0; k < out.size(); ++k) {
      if (static_cast<int64_t>(k) == axis) {
        out[k] = out[k] + t->shape[k];
      } else if (!DimsCompatible(out[k], t->shape[k])) {
        return call.Error(absl::StrCat("field ", i, " has type ", TypeToString(tuple->fields[i]),
                                       "; dimension ", k, " is ", t->shape[k].ToString(),
                                       " but field 0 has ", out[k].ToString()));
      } else {
        out[k] = UnifyDim(out[k], t->shape[k]);
      }
    }
  }
  return Solve(r, call, MakeTensorType(std::move(out), t0->dtype));
}

absl::StatusOr<bool> SplitRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const SplitAttrs& a = AttrsOr<SplitAttrs>(call);
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(call, a.axis, x->ndim()));
  const size_t ax = static_cast<size_t>(axis);
  const Dim d = x->shape[ax];
  std::vector<Type> parts;
  auto part = [&](Dim extent) {
    Shape s = x->shape;
    s[ax] = std::move(extent);
    parts.push_back(MakeTensorType(std::move(s), x->dtype));
  };
  if (a.sections < 0)
    return call.Error(absl::StrCat("sections must be >= 0; got ", a.sections));
  if (a.sections > 0) {
    if (a.sections > kMaxAttrValue)
      return call.Error(absl::StrCat("sections=", a.sections, " is too large"));
    if (!a.indices.empty())
      return call.Error("give either sections (> 0) or indices, not both");
    if (d.is_static() && d.value() % a.sections != 0)
      return call.Error(absl::StrCat("cannot split axis ", axis, " of extent ", d.value(),
                                     " into ", a.sections, " equal sections"));
    const Dim each = Dim::FloorDiv(d, Dim(a.sections));
    for (int64_t i = 0; i < a.sections; ++i) part(each);
  } else {
    int64_t begin = 0;
    for (int64_t idx : a.indices) {
      if (idx < begin || idx > kMaxAttrValue || (d.is_static() && idx > d.value()))
        return call.Error(absl::StrCat("indices ", IntList(a.indices),
                                       " must ascend within [0, ", d.ToString(), "] (axis ", axis,
                                       ")"));
      part(Dim(idx - begin));
      begin = idx;
    }
    part(AddConst(d, -begin));
  }
  return Solve(r, call, MakeTupleType(std::move(parts)));
}

// The extent of one strided-slice axis.
struct SliceSpec {
  std::optional<int64_t> begin, end;  // absent: the default for the direction
  int64_t stride = 1;
  bool size_mode = false;
};

constexpr int64_t kBig = kSliceBig;
constexpr int64_t kToEnd = 2147483647;  // INT32_MAX, Relay's "to the end"

int64_t ClampBig(int64_t v) { return std::clamp(v, -kBig, kBig); }

Dim SliceExtent(const Dim& d, const SliceSpec& s) {
  const int64_t st = s.stride;
  if (d.is_static()) {
    SlicedAxis axis;
    axis.begin = s.begin;
    axis.end = s.end;
    axis.stride = st;
    return Dim(StaticSlice(d.value(), axis, s.size_mode).length);
  }
  // Symbolic or `?`: indices are assumed in range. An index is an offset from
  // the start (c) or from the end (d + c), so that differences of two indices
  // with the same anchor stay static.
  struct Index {
    bool from_end;
    int64_t c;
  };
  auto index = [](int64_t v) { return Index{v < 0, ClampBig(v)}; };
  const Index b = s.begin ? index(*s.begin) : (st > 0 ? Index{false, 0} : Index{true, -1});
  Index e;
  if (s.size_mode) {
    const int64_t size = s.end.value_or(-1);
    e = size < 0 ? Index{true, 0} : Index{b.from_end, b.c + std::min(size, kBig)};
  } else if (st > 0) {
    e = (!s.end || *s.end >= kToEnd) ? Index{true, 0} : index(*s.end);
  } else {
    e = (!s.end || *s.end <= -kToEnd - 1) ? Index{false, -1} : index(*s.end);
  }
  const Index& hi = st > 0 ? e : b;
  const Index& lo = st > 0 ? b : e;
  Dim len;
  if (hi.from_end == lo.from_end) {
    len = Dim(hi.c - lo.c);
  } else if (hi.from_end) {
    len = AddConst(d, hi.c - lo.c);
  } else {
    len = Dim(hi.c - lo.c) - d;
  }
  const int64_t step = st > 0 ? st : -st;
  Dim out = step == 1 ? len : Dim::FloorDiv(AddConst(len, step - 1), Dim(step));
  if (out.is_static() && out.value() < 0) return Dim(0);
  return out;
}

absl::StatusOr<bool> StridedSliceRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const StridedSliceAttrs& a = AttrsOr<StridedSliceAttrs>(call);
  absl::StatusOr<StridedSlicePlan> plan =
      PlanStridedSlice(a, x->ndim(), TypeToString(call.input(0)));
  if (!plan.ok()) return call.Error(std::string(plan.status().message()));
  Shape out = x->shape;
  for (const SlicedAxis& axis : plan->axes) {
    SliceSpec s;
    s.size_mode = plan->size_mode;
    s.begin = axis.begin;
    s.end = axis.end;
    s.stride = axis.stride;
    const size_t k = static_cast<size_t>(axis.axis);
    out[k] = SliceExtent(x->shape[k], s);
  }
  return Solve(r, call, MakeTensorType(std::move(out), x->dtype));
}

absl::StatusOr<bool> TakeRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  KILN_REL_TENSOR(idx, call, 1);
  const TakeAttrs& a = AttrsOr<TakeAttrs>(call);
  if (!idx->dtype.is_int() && !idx->dtype.is_uint())
    return call.ArgError(1, "an integer tensor (int32, int64, ...)");
  if (a.mode != "clip" && a.mode != "wrap" && a.mode != "fast")
    return call.Error(absl::StrCat("mode must be \"clip\", \"wrap\" or \"fast\"; got \"", a.mode,
                                   "\""));
  if (!a.axis) {
    if (a.batch_dims != 0) return call.Error("batch_dims needs an axis");
    return Solve(r, call, MakeTensorType(idx->shape, x->dtype));
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(call, *a.axis, x->ndim()));
  int64_t bd = a.batch_dims < 0 ? a.batch_dims + idx->ndim() : a.batch_dims;
  if (bd < 0 || bd > idx->ndim() || bd > axis)
    return call.Error(absl::StrCat("batch_dims ", a.batch_dims, " must be in [0, ",
                                   std::min<int64_t>(idx->ndim(), axis),
                                   "] (indices rank ", idx->ndim(), ", axis ", axis, ")"));
  for (size_t i = 0; i < static_cast<size_t>(bd); ++i)
    if (!DimsCompatible(x->shape[i], idx->shape[i]))
      return call.Error(absl::StrCat("batch dimension ", i, " differs: data has ",
                                     x->shape[i].ToString(), ", indices have ",
                                     idx->shape[i].ToString()));
  Shape out(x->shape.begin(), x->shape.begin() + axis);
  out.insert(out.end(), idx->shape.begin() + bd, idx->shape.end());
  out.insert(out.end(), x->shape.begin() + axis + 1, x->shape.end());
  return Solve(r, call, MakeTensorType(std::move(out), x->dtype));
}

}  // namespace

absl::Status RegisterSliceRelations() {
  absl::Status st;
  st.Update(AddRelation("concatenate", ConcatenateRel));
  st.Update(AddRelation("split", SplitRel));
  st.Update(AddRelation("strided_slice", StridedSliceRel));
  st.Update(AddRelation("take", TakeRel));
  return st;
}

}  // namespace kiln::types::rel
