// Type relations of elementwise and broadcasting operators.
//
//   unary (abs, exp, nn.relu, copy, zeros_like,
//          tan, asin, ..., atanh, ...)                out = data's type
//   isnan                                             same shape, bool
//   logical_not                                       bool -> bool
//   clip (a_min <= a_max), nn.leaky_relu, nn.gelu     out = data's type
//   cast                                              same shape, attrs.dtype
//   add, subtract, ..., floor_mod                     NumPy broadcast; equal dtypes
//   equal, not_equal, less, ... greater_equal         broadcast; equal dtypes; -> bool
//   logical_and / or / xor                            broadcast; bool operands -> bool
//   where(condition, x, y)                            bool condition; x, y same dtype;
//                                                     broadcast of all three, x's dtype
//   nn.bias_add(data, bias), nn.prelu(data, alpha)    1-D vector of length data[axis]
//                                                     (assigned when still unknown)
//   broadcast_to                                      data must broadcast to attrs.shape
//
// Choices: broadcasting follows rel_common.h (`?` with d -> d, two different
// symbolic dims -> `?`). Unary math ops do not restrict dtypes (an int `exp`
// is the lowering's business); isnan accepts any dtype.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

absl::StatusOr<bool> IdentityRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  return Solve(r, call, call.input(0));
}

absl::StatusOr<bool> IsNanRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  return Solve(r, call, MakeTensorType(x->shape, DataType::Bool()));
}

absl::StatusOr<bool> LogicalNotRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  if (!x->dtype.is_bool()) return call.ArgError(0, "a bool tensor");
  return Solve(r, call, call.input(0));
}

absl::StatusOr<bool> ClipRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const ClipAttrs& a = AttrsOr<ClipAttrs>(call);
  if (!(a.a_min <= a.a_max))
    return call.Error(absl::StrCat("a_min (", a.a_min, ") must not exceed a_max (", a.a_max, ")"));
  return Solve(r, call, call.input(0));
}

absl::StatusOr<bool> GeluRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const GeluAttrs& a = AttrsOr<GeluAttrs>(call);
  if (a.approximate != "none" && a.approximate != "tanh")
    return call.Error(absl::StrCat("approximate must be \"none\" or \"tanh\"; got \"",
                                   a.approximate, "\""));
  return Solve(r, call, call.input(0));
}

absl::StatusOr<bool> CastRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const CastAttrs& a = AttrsOr<CastAttrs>(call);
  if (a.dtype.is_void()) return call.Error("cannot cast to void: set dtype");
  return Solve(r, call, MakeTensorType(x->shape, a.dtype));
}

enum class BinaryKind { kArith, kCompare, kLogical };

TypeRelationFn BinaryRel(BinaryKind kind) {
  return [kind](const RelationCall& call, TypeReporter& r) -> absl::StatusOr<bool> {
    KILN_REL_TENSOR(a, call, 0);
    KILN_REL_TENSOR(b, call, 1);
    if (kind == BinaryKind::kLogical) {
      if (!a->dtype.is_bool()) return call.ArgError(0, "a bool tensor");
      if (!b->dtype.is_bool()) return call.ArgError(1, "a bool tensor");
    } else if (a->dtype != b->dtype) {
      return call.Error(absl::StrCat("operands must have the same dtype; got ",
                                     TypeToString(call.input(0)), " and ",
                                     TypeToString(call.input(1)), " (insert a cast)"));
    }
    KILN_ASSIGN_OR_RETURN(Shape s,
                          BroadcastShapes(call, call.input(0), a->shape, call.input(1), b->shape));
    DataType dt = kind == BinaryKind::kArith ? a->dtype : DataType::Bool();
    return Solve(r, call, MakeTensorType(std::move(s), dt));
  };
}

absl::StatusOr<bool> WhereRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(c, call, 0);
  KILN_REL_TENSOR(x, call, 1);
  KILN_REL_TENSOR(y, call, 2);
  if (!c->dtype.is_bool()) return call.ArgError(0, "a bool tensor");
  if (x->dtype != y->dtype)
    return call.Error(absl::StrCat("x and y must have the same dtype; got ",
                                   TypeToString(call.input(1)), " and ",
                                   TypeToString(call.input(2))));
  KILN_ASSIGN_OR_RETURN(Shape xy,
                        BroadcastShapes(call, call.input(1), x->shape, call.input(2), y->shape));
  Type txy = MakeTensorType(xy, x->dtype);
  KILN_ASSIGN_OR_RETURN(Shape s, BroadcastShapes(call, call.input(0), c->shape, txy, xy));
  return Solve(r, call, MakeTensorType(std::move(s), x->dtype));
}

// nn.bias_add and nn.prelu: input 1 is a vector along data's `axis`.
template <typename A>
absl::StatusOr<bool> VectorAlongAxisRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const A& a = AttrsOr<A>(call);
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(call, a.axis, x->ndim()));
  const Dim& len = x->shape[static_cast<size_t>(axis)];
  auto vec = TensorArg(call, 1);
  if (!vec.ok()) return vec.status();
  if (*vec == nullptr) {
    KILN_RETURN_IF_ERROR(r.Assign(call.input(1), MakeTensorType({len}, x->dtype)));
  } else {
    const TensorTypeNode* v = *vec;
    const std::string expected =
        absl::StrCat("a 1-D tensor of length ", len.ToString(), " (data's axis ", axis,
                     ") and dtype ", x->dtype.ToString());
    if (v->ndim() != 1 || !DimsCompatible(v->shape[0], len) || v->dtype != x->dtype)
      return call.ArgError(1, expected);
  }
  return Solve(r, call, call.input(0));
}

absl::StatusOr<bool> BroadcastToRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const BroadcastToAttrs& a = AttrsOr<BroadcastToAttrs>(call);
  for (int64_t d : a.shape)
    if (d < 0) return call.Error(absl::StrCat("shape must not be negative; got ", IntList(a.shape)));
  Shape target = ShapeFromInts(a.shape);
  if (x->shape.size() > target.size())
    return call.Error(absl::StrCat("cannot broadcast ", TypeToString(call.input(0)), " to ",
                                   IntList(a.shape), ": more dimensions than the target"));
  Type tt = MakeTensorType(target, x->dtype);
  const size_t off = target.size() - x->shape.size();
  for (size_t i = 0; i < x->shape.size(); ++i) {
    const Dim& d = x->shape[i];
    // A non-static dim is checked at run time (it must be 1 or the target).
    if (d.is_static() && d.value() != 1 && d.value() != a.shape[i + off])
      return call.Error(absl::StrCat("cannot broadcast ", TypeToString(call.input(0)), " to ",
                                     IntList(a.shape), " (dimension ", i + off, ": ",
                                     d.value(), " vs ", a.shape[i + off], ")"));
  }
  return Solve(r, call, tt);
}

}  // namespace

absl::Status RegisterElemwiseRelations() {
  absl::Status st;
  auto add = [&st](absl::string_view name, TypeRelationFn fn) {
    st.Update(AddRelation(name, std::move(fn)));
  };
  for (const char* name : {"abs", "negative", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh",
                           "erf", "nn.relu", "floor", "ceil", "round", "sign", "sin", "cos", "copy",
                           "zeros_like", "ones_like", "nn.leaky_relu", "tan", "asin", "acos",
                           "atan", "sinh", "cosh", "asinh", "acosh", "atanh"})
    add(name, IdentityRel);
  add("isnan", IsNanRel);
  add("logical_not", LogicalNotRel);
  add("clip", ClipRel);
  add("nn.gelu", GeluRel);
  add("cast", CastRel);
  for (const char* name : {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
                           "mod", "floor_divide", "floor_mod"})
    add(name, BinaryRel(BinaryKind::kArith));
  for (const char* name :
       {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})
    add(name, BinaryRel(BinaryKind::kCompare));
  for (const char* name : {"logical_and", "logical_or", "logical_xor"})
    add(name, BinaryRel(BinaryKind::kLogical));
  add("where", WhereRel);
  add("nn.bias_add", VectorAlongAxisRel<BiasAddAttrs>);
  add("nn.prelu", VectorAlongAxisRel<PReluAttrs>);
  add("broadcast_to", BroadcastToRel);
  return st;
}

}  // namespace kiln::types::rel
