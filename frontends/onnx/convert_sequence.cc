// File: frontends/onnx/convert_sequence.cc
//
// ONNX sequences (in the "control" converter family): a sequence of tensors
// of one dtype and rank is the graph IR's list ADT (converter.h,
// SequenceAdt: SeqCons(head, tail) / SeqNil, every element dim `?`), and
// each operator is a constructor chain or a local recursive function over
// it, which the VM runs (lambda-lifted, one call frame per element):
//
//   SequenceConstruct(x...)   SeqCons(x0, SeqCons(x1, ... SeqNil))
//   SequenceEmpty             SeqNil (its rank is that of the first tensor
//                             inserted; see SequenceArg)
//   SequenceLength(s)         len(s) = match s { Cons(_, t) => len(t) + 1, Nil => 0 }
//   SequenceAt(s, p)          at(s, k) = match s { Cons(h, t) => k == 0 ? h : at(t, k - 1) }
//   SequenceInsert(s, x, p)   ins(s, k) = k == 0 ? Cons(x, s) : match s { Cons(h, t) => Cons(h,
//   ins(t, k - 1)) }
//                             (no position: at the end)
//   SequenceErase(s, p)       er(s, k) = match s { Cons(h, t) => k == 0 ? t : Cons(h, er(t, k - 1))
//   }
//                             (no position: the last)
//   ConcatFromSequence(s)     cat(s) = match s { Cons(h, t) => match t { Nil => h, _ =>
//   concatenate(h, cat(t)) } }
//                             (new_axis: each element expand_dims'ed first)
//   SplitToSequence(x, split) a SeqCons chain of static slices (split
//                             constant or absent), or of dyn.strided_slices
//                             (a 1-D split of static length given at run time)
//   SequenceMap(s..., x...)   map(s0, s1, ...) = match s0 { Cons(h0, t0) => match s1 { Cons(h1, t1)
//   =>
//                             let r = map(t0, t1, ...); (Cons(body(h0, h1, ..., x...)_k, r.k))_k },
//                             Nil => (Nil)_k }
//
// Positions are run-time values; a negative one counts from the end (the
// length computed first). A position out of range reaches no clause of the
// function's match: the VM stops with "no clause of a match in
// <the function's name>", which names the operator and what was wrong.
#include <algorithm>
#include <cstdint>
#include <functional>
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
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend {
namespace {

using cvt::Outs;

const DataType kI64 = DataType::Int(64);

using cvt::Typed;
using cvt::TypedVar;

absl::StatusOr<Expr> Cons(const SequenceAdt& a, Expr head, Expr tail) {
  KILN_ASSIGN_OR_RETURN(Call c, MakeCall(a.cons, {std::move(head), std::move(tail)}));
  return Typed(c, a.type);
}

absl::StatusOr<Expr> Nil(const SequenceAdt& a) {
  KILN_ASSIGN_OR_RETURN(Call c, MakeCall(a.nil, {}));
  return Typed(c, a.type);
}

// match s { SeqCons(h, t) => on_cons(h, t), SeqNil => on_nil } (no Nil
// clause when on_nil is null: reaching it stops the run).
absl::StatusOr<Expr> MatchSeq(
    const SequenceAdt& a, Expr s, const Type& ret,
    const std::function<absl::StatusOr<Expr>(const Var&, const Var&)>& on_cons,
    const std::function<absl::StatusOr<Expr>()>& on_nil) {
  Var h = TypedVar("head", a.elem), t = TypedVar("tail", a.type);
  KILN_ASSIGN_OR_RETURN(Pattern ph, MakePatternVar(h));
  KILN_ASSIGN_OR_RETURN(Pattern pt, MakePatternVar(t));
  KILN_ASSIGN_OR_RETURN(Pattern pc, MakePatternConstructor(a.cons, {ph, pt}));
  KILN_ASSIGN_OR_RETURN(Expr cons_rhs, on_cons(h, t));
  std::vector<Clause> clauses = {{pc, cons_rhs}};
  if (on_nil) {
    KILN_ASSIGN_OR_RETURN(Pattern pn, MakePatternConstructor(a.nil, {}));
    KILN_ASSIGN_OR_RETURN(Expr nil_rhs, on_nil());
    clauses.push_back({pn, nil_rhs});
  }
  KILN_ASSIGN_OR_RETURN(
      Match m, MakeMatch(std::move(s), std::move(clauses), /*complete=*/on_nil != nullptr));
  return Typed(m, ret);
}

// let %name: fn(params) -> ret = fn(params) { body(self, params) }; %name(args)
absl::StatusOr<Expr> Recursion(
    const std::string& name, const std::vector<Type>& param_types, const Type& ret,
    const std::function<absl::StatusOr<Expr>(const Var& self, const std::vector<Var>& params)>&
        body,
    std::vector<Expr> args) {
  KILN_ASSIGN_OR_RETURN(FuncType ft, MakeFuncType(param_types, ret));
  Var self = TypedVar(name, ft);
  std::vector<Var> params;
  for (size_t i = 0; i < param_types.size(); ++i)
    params.push_back(TypedVar(absl::StrCat("p", i), param_types[i]));
  KILN_ASSIGN_OR_RETURN(Expr b, body(self, params));
  KILN_ASSIGN_OR_RETURN(Function fn, MakeFunction(params, b, ret));
  fn->set_checked_type(ft);
  KILN_ASSIGN_OR_RETURN(Call first, MakeCall(self, std::move(args)));
  first->set_checked_type(ret);
  KILN_ASSIGN_OR_RETURN(Let let, MakeLet(self, fn, first));
  return Typed(let, ret);
}

absl::StatusOr<Expr> CallSelf(const Var& self, std::vector<Expr> args, const Type& ret) {
  KILN_ASSIGN_OR_RETURN(Call c, MakeCall(self, std::move(args)));
  return Typed(c, ret);
}

absl::StatusOr<Expr> IfThen(Expr cond, Expr a, Expr b, const Type& ret) {
  KILN_ASSIGN_OR_RETURN(If i, MakeIf(std::move(cond), std::move(a), std::move(b)));
  return Typed(i, ret);
}

// Input i as a sequence: its ADT and value. A pending SequenceEmpty takes
// rank `rank` when given (it is a fresh SeqNil either way).
absl::StatusOr<std::pair<SequenceAdt, Expr>> SequenceArg(
    ConvertContext& c, int i, std::optional<int64_t> rank = std::nullopt) {
  KILN_ASSIGN_OR_RETURN(Expr s, c.Input(i));
  std::optional<SequenceAdt> a = c.AsSequence(s->checked_type());
  if (!a) {
    return c.Invalid(
        absl::StrCat("input ", i, " must be a sequence; it is ", TypeToString(s->checked_type())));
  }
  if (rank && static_cast<int64_t>(a->elem->ndim()) != *rank) {
    if (c.IsRankPending(s)) {
      KILN_ASSIGN_OR_RETURN(SequenceAdt b, c.Sequence(a->elem->dtype, *rank));
      KILN_ASSIGN_OR_RETURN(Expr nil, Nil(b));
      return std::make_pair(b, nil);
    }
  }
  return std::make_pair(*a, s);
}

// A position input as a 0-D int64, negative ones counted from `len` (a 0-D
// int64 expression, computed only when needed).
absl::StatusOr<Expr> Position(ConvertContext& c, int i,
                              const std::function<absl::StatusOr<Expr>()>& len) {
  KILN_ASSIGN_OR_RETURN(Expr p, c.Input(i));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(i));
  if (!t->dtype.is_int() || !(t->ndim() == 0 || (t->ndim() == 1 && t->shape[0].is_static() &&
                                                 t->shape[0].value() == 1))) {
    return c.Invalid(absl::StrCat("position (input ", i,
                                  ") must be a 0-D int32 or int64 tensor; it is ",
                                  TypeToString(Type(t))));
  }
  if (t->ndim() == 1) {
    KILN_ASSIGN_OR_RETURN(p, cvt::Reshape(c, p, {}));
  }
  KILN_ASSIGN_OR_RETURN(p, cvt::Cast(c, p, kI64));
  KILN_ASSIGN_OR_RETURN(Expr n, len());
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(kI64, 0));
  KILN_ASSIGN_OR_RETURN(Expr neg, c.Call("less", {p, zero}));
  KILN_ASSIGN_OR_RETURN(Expr wrapped, c.Call("add", {p, n}));
  return c.Call("where", {neg, wrapped, p});
}

absl::StatusOr<Expr> Length(ConvertContext& c, const SequenceAdt& a, Expr s) {
  const Type i64 = MakeScalarType(kI64);
  return Recursion("SequenceLength", {a.type}, i64,
                   [&](const Var& self, const std::vector<Var>& p) {
                     return MatchSeq(
                         a, p[0], i64,
                         [&](const Var&, const Var& t) -> absl::StatusOr<Expr> {
                           KILN_ASSIGN_OR_RETURN(Expr rest, CallSelf(self, {t}, i64));
                           KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(kI64, 1));
                           return c.Call("add", {rest, one});
                         },
                         [&]() { return c.ScalarConst(kI64, 0); });
                   },
                   {std::move(s)});
}

Outs ConvertSequenceConstruct(ConvertContext& c) {
  if (c.num_inputs() < 1) return c.Invalid("SequenceConstruct needs at least one input");
  KILN_ASSIGN_OR_RETURN(TensorType t0, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(SequenceAdt a, c.Sequence(t0->dtype, t0->ndim()));
  std::vector<Expr> xs;
  for (int i = 0; i < c.num_inputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(i));
    if (t->dtype != t0->dtype || t->ndim() != t0->ndim()) {
      return c.Invalid(absl::StrCat("input ", i, " is ", TypeToString(Type(t)), "; input 0 is ",
                                    TypeToString(Type(t0)), " (a sequence's tensors have one dtype",
                                    t->dtype == t0->dtype ? "; kiln's also have one rank)" : ")"));
    }
    KILN_ASSIGN_OR_RETURN(Expr x, c.Input(i));
    xs.push_back(x);
  }
  KILN_ASSIGN_OR_RETURN(Expr s, Nil(a));
  for (size_t k = xs.size(); k-- > 0;) {
    KILN_ASSIGN_OR_RETURN(s, Cons(a, xs[k], s));
  }
  return std::vector<Expr>{s};
}

Outs ConvertSequenceEmpty(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(int64_t onnx_dtype, c.AttrInt("dtype", onnx::TensorProto::FLOAT));
  KILN_ASSIGN_OR_RETURN(DataType dtype, FromOnnxDataType(static_cast<int32_t>(onnx_dtype)));
  KILN_ASSIGN_OR_RETURN(SequenceAdt a, c.Sequence(dtype, 0));
  KILN_ASSIGN_OR_RETURN(Expr nil, Nil(a));
  c.MarkRankPending(nil);
  return std::vector<Expr>{nil};
}

Outs ConvertSequenceLength(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(auto s, SequenceArg(c, 0));
  KILN_ASSIGN_OR_RETURN(Expr n, Length(c, s.first, s.second));
  return std::vector<Expr>{n};
}

Outs ConvertSequenceAt(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(auto s, SequenceArg(c, 0));
  const SequenceAdt& a = s.first;
  KILN_ASSIGN_OR_RETURN(Expr pos, Position(c, 1, [&] { return Length(c, a, s.second); }));
  const Type k_t = MakeScalarType(kI64);
  KILN_ASSIGN_OR_RETURN(
      Expr y, Recursion("SequenceAt_position_in_range", {a.type, k_t}, a.elem,
                        [&](const Var& self, const std::vector<Var>& p) {
                          return MatchSeq(
                              a, p[0], a.elem,
                              [&](const Var& h, const Var& t) -> absl::StatusOr<Expr> {
                                KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(kI64, 0));
                                KILN_ASSIGN_OR_RETURN(Expr here, c.Call("equal", {p[1], zero}));
                                KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(kI64, 1));
                                KILN_ASSIGN_OR_RETURN(Expr k1, c.Call("subtract", {p[1], one}));
                                KILN_ASSIGN_OR_RETURN(Expr later, CallSelf(self, {t, k1}, a.elem));
                                return IfThen(here, h, later, a.elem);
                              },
                              nullptr);
                        },
                        {s.second, pos}));
  return std::vector<Expr>{y};
}

Outs ConvertSequenceInsert(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(1));
  KILN_ASSIGN_OR_RETURN(auto s, SequenceArg(c, 0, xt->ndim()));
  const SequenceAdt& a = s.first;
  if (a.elem->dtype != xt->dtype || a.elem->ndim() != xt->ndim()) {
    return c.Invalid(absl::StrCat("the tensor (input 1) is ", TypeToString(Type(xt)),
                                  "; the sequence holds ", TypeToString(Type(a.elem))));
  }
  Expr y;
  if (!c.HasInput(2)) {  // at the end
    KILN_ASSIGN_OR_RETURN(
        y, Recursion("SequenceInsert_at_end", {a.type}, a.type,
                     [&](const Var& self, const std::vector<Var>& p) {
                       return MatchSeq(
                           a, p[0], a.type,
                           [&](const Var& h, const Var& t) -> absl::StatusOr<Expr> {
                             KILN_ASSIGN_OR_RETURN(Expr rest, CallSelf(self, {t}, a.type));
                             return Cons(a, h, rest);
                           },
                           [&]() -> absl::StatusOr<Expr> {
                             KILN_ASSIGN_OR_RETURN(Expr nil, Nil(a));
                             return Cons(a, x, nil);
                           });
                     },
                     {s.second}));
    return std::vector<Expr>{y};
  }
  KILN_ASSIGN_OR_RETURN(Expr pos, Position(c, 2, [&] { return Length(c, a, s.second); }));
  const Type k_t = MakeScalarType(kI64);
  KILN_ASSIGN_OR_RETURN(
      y, Recursion("SequenceInsert_position_in_range", {a.type, k_t}, a.type,
                   [&](const Var& self, const std::vector<Var>& p) -> absl::StatusOr<Expr> {
                     KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(kI64, 0));
                     KILN_ASSIGN_OR_RETURN(Expr here, c.Call("equal", {p[1], zero}));
                     KILN_ASSIGN_OR_RETURN(Expr front, Cons(a, x, p[0]));
                     KILN_ASSIGN_OR_RETURN(
                         Expr later,
                         MatchSeq(
                             a, p[0], a.type,
                             [&](const Var& h, const Var& t) -> absl::StatusOr<Expr> {
                               KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(kI64, 1));
                               KILN_ASSIGN_OR_RETURN(Expr k1, c.Call("subtract", {p[1], one}));
                               KILN_ASSIGN_OR_RETURN(Expr rest, CallSelf(self, {t, k1}, a.type));
                               return Cons(a, h, rest);
                             },
                             nullptr));
                     return IfThen(here, front, later, a.type);
                   },
                   {s.second, pos}));
  return std::vector<Expr>{y};
}

Outs ConvertSequenceErase(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(auto s, SequenceArg(c, 0));
  const SequenceAdt& a = s.first;
  auto len = [&] { return Length(c, a, s.second); };
  Expr pos;
  if (c.HasInput(1)) {
    KILN_ASSIGN_OR_RETURN(pos, Position(c, 1, len));
  } else {  // the last
    KILN_ASSIGN_OR_RETURN(Expr n, len());
    KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(kI64, 1));
    KILN_ASSIGN_OR_RETURN(pos, c.Call("subtract", {n, one}));
  }
  const Type k_t = MakeScalarType(kI64);
  KILN_ASSIGN_OR_RETURN(
      Expr y, Recursion("SequenceErase_position_in_range", {a.type, k_t}, a.type,
                        [&](const Var& self, const std::vector<Var>& p) {
                          return MatchSeq(
                              a, p[0], a.type,
                              [&](const Var& h, const Var& t) -> absl::StatusOr<Expr> {
                                KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(kI64, 0));
                                KILN_ASSIGN_OR_RETURN(Expr here, c.Call("equal", {p[1], zero}));
                                KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(kI64, 1));
                                KILN_ASSIGN_OR_RETURN(Expr k1, c.Call("subtract", {p[1], one}));
                                KILN_ASSIGN_OR_RETURN(Expr rest, CallSelf(self, {t, k1}, a.type));
                                KILN_ASSIGN_OR_RETURN(Expr kept, Cons(a, h, rest));
                                return IfThen(here, t, kept, a.type);
                              },
                              nullptr);
                        },
                        {s.second, pos}));
  return std::vector<Expr>{y};
}

Outs ConvertConcatFromSequence(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(auto s, SequenceArg(c, 0));
  const SequenceAdt& a = s.first;
  KILN_ASSIGN_OR_RETURN(const onnx::AttributeProto* axis_attr, c.RequiredAttr("axis"));
  (void)axis_attr;
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", 0));
  KILN_ASSIGN_OR_RETURN(int64_t new_axis, c.AttrInt("new_axis", 0));
  if (new_axis != 0 && new_axis != 1)
    return c.Invalid(absl::StrCat("new_axis ", new_axis, " is not 0 or 1"));
  const int64_t r = a.elem->ndim(), out_rank = r + new_axis;
  if (axis < -out_rank || axis >= out_rank || out_rank == 0) {
    return c.Invalid(absl::StrCat("axis ", axis, " is outside [", -out_rank, ", ", out_rank - 1,
                                  "] for a sequence of rank-", r, " tensors",
                                  new_axis ? " with new_axis" : ""));
  }
  if (axis < 0) axis += out_rank;
  const TensorType out =
      MakeTensorType(Shape(static_cast<size_t>(out_rank), Dim::Any()), a.elem->dtype);
  auto piece = [&](const Expr& h) -> absl::StatusOr<Expr> {
    if (new_axis == 0) return h;
    return cvt::ExpandDims(c, h, axis);
  };
  KILN_ASSIGN_OR_RETURN(
      Expr y,
      Recursion("ConcatFromSequence_not_empty", {a.type}, out,
                [&](const Var& self, const std::vector<Var>& p) {
                  return MatchSeq(
                      a, p[0], out,
                      [&](const Var& h, const Var& t) -> absl::StatusOr<Expr> {
                        KILN_ASSIGN_OR_RETURN(Expr first, piece(h));
                        // match t { SeqNil => first, _ => concatenate((first, self(t))) }
                        KILN_ASSIGN_OR_RETURN(Pattern pn, MakePatternConstructor(a.nil, {}));
                        KILN_ASSIGN_OR_RETURN(Expr rest, CallSelf(self, {t}, out));
                        KILN_ASSIGN_OR_RETURN(Tuple both, MakeTuple({first, rest}));
                        both->set_checked_type(MakeTupleType({first->checked_type(), out}));
                        auto attrs = cvt::NewAttrs<ConcatenateAttrs>();
                        attrs->axis = axis;
                        KILN_ASSIGN_OR_RETURN(Expr joined,
                                              c.Call("concatenate", {Expr(both)}, attrs));
                        KILN_ASSIGN_OR_RETURN(
                            Match m, MakeMatch(t, {{pn, first}, {MakePatternWildcard(), joined}}));
                        return Typed(m, out);
                      },
                      nullptr);
                },
                {s.second}));
  return std::vector<Expr>{y};
}

Outs ConvertSplitToSequence(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", 0));
  KILN_ASSIGN_OR_RETURN(int64_t keepdims, c.AttrInt("keepdims", 1));
  KILN_ASSIGN_OR_RETURN(axis, cvt::NormAxis(c, axis, t->ndim()));
  if (c.HasInput(1)) {
    // A 1-D split given at run time (its length static): that many parts,
    // each a dyn.strided_slice from the sizes summed before it; the axis's
    // extent may be known only at run time too.
    absl::StatusOr<std::optional<std::vector<int64_t>>> split = c.ConstantInts(1);
    KILN_ASSIGN_OR_RETURN(TensorType st, c.InputType(1));
    if (!split.ok() && cvt::NeedsValue(split.status()) && st->ndim() == 1 && st->shape[0].is_static()) {
      const int64_t k = st->shape[0].value();
      if (k < 1) return c.Invalid("split is empty");
      KILN_ASSIGN_OR_RETURN(std::vector<Expr> parts,
                            cvt::DynamicSplit(c, x, axis, static_cast<int>(k), split.status()));
      KILN_ASSIGN_OR_RETURN(SequenceAdt a, c.Sequence(t->dtype, t->ndim()));
      KILN_ASSIGN_OR_RETURN(Expr s, Nil(a));
      for (size_t j = parts.size(); j-- > 0;) {
        KILN_ASSIGN_OR_RETURN(s, Cons(a, parts[j], s));
      }
      return std::vector<Expr>{s};
    }
  }
  if (!t->shape[static_cast<size_t>(axis)].is_static()) {
    return c.Unsupported(absl::StrCat("SplitToSequence along axis ", axis,
                                      " whose extent is known only at run time"));
  }
  const int64_t n = t->shape[static_cast<size_t>(axis)].value();
  std::vector<int64_t> sizes;
  bool squeeze = false;
  if (c.HasInput(1)) {
    absl::StatusOr<std::optional<std::vector<int64_t>>> split = c.ConstantInts(1);
    if (!split.ok() && cvt::NeedsValue(split.status())) {
      return c.Unsupported(
          "SplitToSequence with a scalar split given at run time (the number of elements would be "
          "known only then)");
    }
    KILN_RETURN_IF_ERROR(split.status());
    KILN_ASSIGN_OR_RETURN(TensorType st, c.InputType(1));
    if (!*split) return c.Invalid("split is empty");
    if (st->ndim() == 0) {
      const int64_t k = (**split)[0];
      if (k <= 0) return c.Invalid(absl::StrCat("split ", k, " must be positive"));
      for (int64_t at = 0; at < n; at += k) sizes.push_back(std::min(k, n - at));
    } else {
      sizes = **split;
      int64_t total = 0;
      for (int64_t v : sizes) {
        if (v < 0) return c.Invalid(absl::StrCat("split has a negative entry ", v));
        total += v;
      }
      if (total != n) return c.Invalid(absl::StrCat("split sums to ", total, "; the axis has ", n));
    }
  } else {
    sizes.assign(static_cast<size_t>(n), 1);
    squeeze = keepdims == 0;
  }
  const int64_t rank = t->ndim() - (squeeze ? 1 : 0);
  KILN_ASSIGN_OR_RETURN(SequenceAdt a, c.Sequence(t->dtype, rank));
  std::vector<Expr> parts;
  int64_t at = 0;
  for (int64_t sz : sizes) {
    KILN_ASSIGN_OR_RETURN(Expr p, cvt::SliceAxis(c, x, axis, at, at + sz, 1));
    if (squeeze) {
      KILN_ASSIGN_OR_RETURN(p, cvt::Squeeze(c, p, {axis}));
    }
    parts.push_back(p);
    at += sz;
  }
  KILN_ASSIGN_OR_RETURN(Expr s, Nil(a));
  for (size_t k = parts.size(); k-- > 0;) {
    KILN_ASSIGN_OR_RETURN(s, Cons(a, parts[k], s));
  }
  return std::vector<Expr>{s};
}

Outs ConvertSequenceMap(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(const onnx::AttributeProto* body_attr, c.RequiredAttr("body"));
  if (!body_attr->has_g()) return c.Invalid("attribute 'body' must be a GRAPH");
  const onnx::GraphProto& body = body_attr->g();
  // The sequences (input 0 and every later sequence) and the other inputs.
  std::vector<int> seq_inputs;
  std::vector<SequenceAdt> adts;
  std::vector<Expr> seqs;
  std::vector<Expr> body_inputs;  // per node input: an element var or the tensor
  std::vector<Var> heads;
  for (int i = 0; i < c.num_inputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(Expr v, c.Input(i));
    if (std::optional<SequenceAdt> a = c.AsSequence(v->checked_type())) {
      seq_inputs.push_back(i);
      adts.push_back(*a);
      seqs.push_back(v);
      Var h = TypedVar(absl::StrCat("elem", i), a->elem);
      heads.push_back(h);
      body_inputs.push_back(h);
    } else if (i == 0) {
      return c.Invalid("input 0 must be a sequence");
    } else {
      body_inputs.push_back(v);
    }
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> outs, c.ImportSubgraph(body, body_inputs, nullptr));
  if (static_cast<int>(outs.size()) != c.node().output_size()) {
    return c.Invalid(absl::StrCat("the body has ", outs.size(), " outputs but the node has ",
                                  c.node().output_size()));
  }
  std::vector<SequenceAdt> out_adts;
  std::vector<Type> out_types;
  for (size_t k = 0; k < outs.size(); ++k) {
    const auto* tt = outs[k]->checked_type().as<TensorTypeNode>();
    if (tt == nullptr) return c.Unsupported(absl::StrCat("body output ", k, " is not a tensor"));
    KILN_ASSIGN_OR_RETURN(SequenceAdt o,
                          c.Sequence(tt->dtype, static_cast<int64_t>(tt->shape.size())));
    out_adts.push_back(o);
    out_types.push_back(o.type);
  }
  const Type ret = MakeTupleType(out_types);
  std::vector<Type> param_types;
  for (const SequenceAdt& a : adts) param_types.push_back(a.type);
  KILN_ASSIGN_OR_RETURN(
      Expr mapped,
      Recursion(
          "SequenceMap_sequences_of_one_length", param_types, ret,
          [&](const Var& self, const std::vector<Var>& p) -> absl::StatusOr<Expr> {
            // Peel every sequence's head (into the body's element vars) and
            // tail, nested matches; an empty first sequence ends the map.
            std::vector<Expr> tails(p.size());
            std::function<absl::StatusOr<Expr>(size_t)> peel =
                [&](size_t j) -> absl::StatusOr<Expr> {
              if (j == p.size()) {
                KILN_ASSIGN_OR_RETURN(Expr rest, CallSelf(self, tails, ret));
                Var r = TypedVar("rest", ret);
                std::vector<Expr> fields;
                for (size_t k = 0; k < outs.size(); ++k) {
                  KILN_ASSIGN_OR_RETURN(TupleGetItem g, MakeTupleGetItem(r, static_cast<int>(k)));
                  g->set_checked_type(out_types[k]);
                  KILN_ASSIGN_OR_RETURN(Expr cell, Cons(out_adts[k], outs[k], g));
                  fields.push_back(cell);
                }
                KILN_ASSIGN_OR_RETURN(Tuple tup, MakeTuple(fields));
                tup->set_checked_type(ret);
                KILN_ASSIGN_OR_RETURN(Let let, MakeLet(r, rest, tup));
                return Typed(let, ret);
              }
              const SequenceAdt& a = adts[j];
              KILN_ASSIGN_OR_RETURN(Pattern ph, MakePatternVar(heads[j]));
              Var t = TypedVar(absl::StrCat("tail", j), a.type);
              KILN_ASSIGN_OR_RETURN(Pattern pt, MakePatternVar(t));
              KILN_ASSIGN_OR_RETURN(Pattern pc, MakePatternConstructor(a.cons, {ph, pt}));
              tails[j] = t;
              KILN_ASSIGN_OR_RETURN(Expr inner, peel(j + 1));
              std::vector<Clause> clauses = {{pc, inner}};
              if (j == 0) {
                KILN_ASSIGN_OR_RETURN(Pattern pn, MakePatternConstructor(a.nil, {}));
                std::vector<Expr> nils;
                for (const SequenceAdt& o : out_adts) {
                  KILN_ASSIGN_OR_RETURN(Expr nil, Nil(o));
                  nils.push_back(nil);
                }
                KILN_ASSIGN_OR_RETURN(Tuple none, MakeTuple(nils));
                none->set_checked_type(ret);
                clauses.push_back({pn, none});
              }
              KILN_ASSIGN_OR_RETURN(Match m,
                                    MakeMatch(p[j], std::move(clauses), /*complete=*/j == 0));
              return Typed(m, ret);
            };
            return peel(0);
          },
          seqs));
  std::vector<Expr> results;
  for (size_t k = 0; k < outs.size(); ++k) {
    KILN_ASSIGN_OR_RETURN(Expr o, c.TupleGet(mapped, static_cast<int>(k)));
    results.push_back(o);
  }
  return results;
}

}  // namespace

void RegisterSequenceConverters(ConverterRegistry& r) {
  r.Add("SequenceConstruct", 11, ConvertSequenceConstruct);
  r.Add("SequenceEmpty", 11, ConvertSequenceEmpty);
  r.Add("SequenceLength", 11, ConvertSequenceLength);
  r.Add("SequenceAt", 11, ConvertSequenceAt);
  r.Add("SequenceInsert", 11, ConvertSequenceInsert);
  r.Add("SequenceErase", 11, ConvertSequenceErase);
  r.Add("ConcatFromSequence", 11, ConvertConcatFromSequence);
  r.Add("SplitToSequence", 11, ConvertSplitToSequence);
  r.Add("SequenceMap", 17, ConvertSequenceMap);
}

}  // namespace kiln::onnx_frontend
