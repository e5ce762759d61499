// Type relations of the dynamic operators (dyn.*), whose shape-like arguments
// are run-time integer tensors. The output rank must be known statically; the
// extents are `?` (Dim::Any()) since they depend on run-time values.
//
//   dyn.reshape(data, newshape)          newshape: 1-D integer tensor of static
//                                        length n -> rank n, data's dtype.
//   dyn.broadcast_to(data, shape)        shape: 1-D integer, static length n ->
//                                        rank n (n >= data's rank), data's dtype.
//   dyn.zeros(shape), dyn.ones(shape)    rank len(shape), attrs dtype.
//   dyn.full(fill_value, shape)          fill_value 0-D; rank len(shape), attrs dtype.
//   dyn.strided_slice(data, b, e, s)     b, e, s 1-D integer tensors; data's rank,
//                                        every extent `?`.
//   dyn.expand_dims(data, axis)          axis 0-D integer; rank data + num_newaxis.
//
//   dyn.unsqueeze(data, axes)            axes 1-D integer, static length k -> rank + k.
//   dyn.squeeze(data, axes)              -> rank - k.
//   dyn.arange(start, limit, delta)      0-D numbers of one dtype -> (?,) of it.
//   shape_of(data)                       Tensor[(rank,), dtype] (int64 or int32).
//
// "the length of <arg> must be static" is the error when a shape argument has
// a `?` or symbolic length (the output rank would be unknown).
#include <string>

#include "absl/strings/str_cat.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

// Checks that input i is a 1-D integer tensor and returns its static length.
absl::StatusOr<int64_t> ShapeArgLength(const RelationCall& call, int i, absl::string_view name,
                                       const TensorTypeNode* t) {
  if (!t->dtype.is_int() && !t->dtype.is_uint())
    return call.ArgError(i, absl::StrCat("a 1-D integer tensor (", name, ")"));
  if (t->ndim() != 1) return call.ArgError(i, absl::StrCat("a 1-D integer tensor (", name, ")"));
  const Dim& n = t->shape[0];
  if (!n.is_static())
    return call.Error(absl::StrCat("the length of ", name, " must be static; got ",
                                   TypeToString(Type(t)),
                                   " (make the shape a constant or give it a static length)"));
  return n.value();
}

Type AnyTensor(int64_t ndim, DataType dtype) {
  return MakeTensorType(Shape(static_cast<size_t>(ndim), Dim::Any()), dtype);
}

absl::StatusOr<bool> DynReshapeRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  KILN_REL_TENSOR(s, call, 1);
  KILN_ASSIGN_OR_RETURN(int64_t n, ShapeArgLength(call, 1, "newshape", s));
  return Solve(r, call, AnyTensor(n, x->dtype));
}

absl::StatusOr<bool> DynBroadcastToRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  KILN_REL_TENSOR(s, call, 1);
  KILN_ASSIGN_OR_RETURN(int64_t n, ShapeArgLength(call, 1, "shape", s));
  if (n < x->ndim())
    return call.Error(absl::StrCat("cannot broadcast ", TypeToString(Type(x)), " to a ",
                                   RankStr(n), " (shape has ", n, " values)"));
  return Solve(r, call, AnyTensor(n, x->dtype));
}

absl::StatusOr<bool> ShapeOfRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const DataType dt = AttrsOr<ShapeOfAttrs>(call).dtype;
  if (dt != DataType::Int(64) && dt != DataType::Int(32))
    return call.Error(absl::StrCat("dtype must be int64 or int32; got ", dt.ToString()));
  return Solve(r, call, MakeTensorType({Dim(x->ndim())}, dt));
}

absl::StatusOr<bool> DynInitRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(s, call, 0);
  KILN_ASSIGN_OR_RETURN(int64_t n, ShapeArgLength(call, 0, "shape", s));
  return Solve(r, call, AnyTensor(n, AttrsOr<InitOpAttrs>(call).dtype));
}

absl::StatusOr<bool> DynFullRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(v, call, 0);
  KILN_REL_TENSOR(s, call, 1);
  if (v->ndim() != 0) return call.ArgError(0, "a 0-D tensor (fill_value)");
  KILN_ASSIGN_OR_RETURN(int64_t n, ShapeArgLength(call, 1, "shape", s));
  return Solve(r, call, AnyTensor(n, AttrsOr<InitOpAttrs>(call).dtype));
}

absl::StatusOr<bool> DynStridedSliceRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  KILN_REL_TENSOR(b, call, 1);
  KILN_REL_TENSOR(e, call, 2);
  KILN_REL_TENSOR(st, call, 3);
  KILN_ASSIGN_OR_RETURN(int64_t nb, ShapeArgLength(call, 1, "begin", b));
  KILN_ASSIGN_OR_RETURN(int64_t ne, ShapeArgLength(call, 2, "end", e));
  KILN_ASSIGN_OR_RETURN(int64_t ns, ShapeArgLength(call, 3, "strides", st));
  if (nb > x->ndim() || ne > x->ndim() || ns > x->ndim())
    return call.Error(absl::StrCat("begin, end and strides (lengths ", nb, ", ", ne, ", ", ns,
                                   ") must not be longer than the rank of ",
                                   TypeToString(Type(x))));
  const std::string& mode = AttrsOr<DynStridedSliceAttrs>(call).slice_mode;
  if (mode != "end" && mode != "size")
    return call.Error(absl::StrCat("slice_mode must be \"end\" or \"size\"; got \"", mode, "\""));
  return Solve(r, call, AnyTensor(x->ndim(), x->dtype));
}

// dyn.unsqueeze / dyn.squeeze: rank data +/- len(axes).
template <int kSign>
absl::StatusOr<bool> DynSqueezeLikeRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  KILN_REL_TENSOR(a, call, 1);
  KILN_ASSIGN_OR_RETURN(int64_t k, ShapeArgLength(call, 1, "axes", a));
  const int64_t rank = x->ndim() + kSign * k;
  if (rank < 0 || rank > 32)
    return call.Error(absl::StrCat("the output would have rank ", rank, " (", TypeToString(Type(x)),
                                   " with ", k, " axes)"));
  return Solve(r, call, AnyTensor(rank, x->dtype));
}

absl::StatusOr<bool> DynArangeRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(start, call, 0);
  KILN_REL_TENSOR(limit, call, 1);
  KILN_REL_TENSOR(delta, call, 2);
  for (const TensorTypeNode* t : {start, limit, delta}) {
    if (t->ndim() != 0 || t->dtype != start->dtype || t->dtype.is_bool() ||
        (!t->dtype.is_float() && !t->dtype.is_int() && !t->dtype.is_uint()))
      return call.Error(absl::StrCat("start, limit and delta must be 0-D numbers of one dtype; got ",
                                     TypeToString(Type(start)), ", ", TypeToString(Type(limit)),
                                     ", ", TypeToString(Type(delta))));
  }
  return Solve(r, call, AnyTensor(1, start->dtype));
}

absl::StatusOr<bool> DynExpandDimsRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  KILN_REL_TENSOR(axis, call, 1);
  if (axis->ndim() != 0 || (!axis->dtype.is_int() && !axis->dtype.is_uint()))
    return call.ArgError(1, "a 0-D integer tensor (axis)");
  const int64_t k = AttrsOr<DynExpandDimsAttrs>(call).num_newaxis;
  if (k < 0 || k > kMaxAttrValue)
    return call.Error(absl::StrCat("num_newaxis must be >= 0; got ", k));
  return Solve(r, call, AnyTensor(x->ndim() + k, x->dtype));
}

}  // namespace

absl::Status RegisterDynRelations() {
  absl::Status st;
  st.Update(AddRelation("shape_of", ShapeOfRel));
  st.Update(AddRelation("dyn.reshape", DynReshapeRel));
  st.Update(AddRelation("dyn.broadcast_to", DynBroadcastToRel));
  st.Update(AddRelation("dyn.zeros", DynInitRel));
  st.Update(AddRelation("dyn.ones", DynInitRel));
  st.Update(AddRelation("dyn.full", DynFullRel));
  st.Update(AddRelation("dyn.strided_slice", DynStridedSliceRel));
  st.Update(AddRelation("dyn.expand_dims", DynExpandDimsRel));
  st.Update(AddRelation("dyn.arange", DynArangeRel));
  st.Update(AddRelation("dyn.unsqueeze", DynSqueezeLikeRel<1>));
  st.Update(AddRelation("dyn.squeeze", DynSqueezeLikeRel<-1>));
  return st;
}

}  // namespace kiln::types::rel
