// ONNX control flow: If, Loop and Scan (the "control" converter family).
//
// - If: both branches imported as subgraphs (outer-scope values used as they
//   are) and joined by the graph IR's `if` on a 0-d bool; several outputs are
//   a tuple. A condition known at import time imports only the branch taken.
// - Loop and Scan: a local recursive function, bound by a `let` whose
//   variable is annotated with the function's type (so a `?` dim of a
//   parameter stays `?` wherever the function is called):
//
//     let %loop: fn (int64[], <state>..., <scan outputs so far>..., <captures>...) -> (...) =
//       fn (%i, %s..., %acc..., %cap...) {
//         if (<go on: %i < M, the condition>) {
//           <body>; %loop(%i + 1, <body's states>..., concatenate((%acc, expand_dims(%e)))..., %cap...)
//         } else { (%s..., %acc...) }
//       };
//     %loop(0i64, <initial states>..., <empty tensors>..., <captured values>...)
//
//   Values of enclosing graphs the body uses become parameters (%cap),
//   passed on unchanged. A scan output grows by one slice per iteration, so
//   its parameter has a `?` extent on the scan axis; the VM computes its
//   shape at run time (lowering/vm names the `?` dims of a kernel's
//   parameters for its shape function). When the trip count is known at
//   import time (a Scan over a static axis, a Loop with a constant M and no
//   condition) the result is reshaped to its static shape. A loop-carried
//   value whose shape changes between iterations gets `?` dims where it does.
//   Each iteration is one VM call frame: at most 100,000 iterations.
//
// Scan at opset 8 (a batch axis 0, sequence_lens) runs the scan once per
// batch entry (the batch must be static, at most kMaxScan8Batch) and stacks
// the results; sequence_lens must be absent or all equal to the sequence
// length (other lengths are Unimplemented).
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
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend {
namespace {

using cvt::Outs;
using Capture = ConvertContext::Capture;

constexpr int64_t kMaxScan8Batch = 64;

absl::StatusOr<const onnx::GraphProto*> GraphAttr(ConvertContext& c, absl::string_view name) {
  KILN_ASSIGN_OR_RETURN(const onnx::AttributeProto* a, c.RequiredAttr(name));
  if (!a->has_g()) {
    return c.Invalid(absl::StrCat("attribute '", name, "' must be a GRAPH"));
  }
  return &a->g();
}

// A one-element tensor as a 0-d one of `dtype` (ONNX's conditions and trip
// counts may be [] or [1]).
absl::StatusOr<Expr> ToScalar(ConvertContext& c, Expr e, DataType dtype, absl::string_view what) {
  KILN_ASSIGN_OR_RETURN(TensorType t, cvt::TypeOf(e));
  if (!t->shape.empty()) {
    const Dim n = ShapeNumElements(t->shape);
    if (!n.is_static() || n.value() != 1) {
      return c.Invalid(absl::StrCat(what, " must hold one element, but its shape is ",
                                    ShapeToString(t->shape)));
    }
    KILN_ASSIGN_OR_RETURN(e, cvt::Reshape(c, e, {}));
  }
  return cvt::Cast(c, e, dtype);
}

// Whether a subgraph input is declared with shape [1] (else it gets a 0-d
// value).
bool DeclaredRankOne(const onnx::ValueInfoProto& in) {
  return in.type().has_tensor_type() && in.type().tensor_type().has_shape() &&
         in.type().tensor_type().shape().dim_size() == 1;
}

// `a` with the dims where `b` differs made `?`; an error when dtype or rank
// differ.
absl::StatusOr<TensorType> Relax(ConvertContext& c, const TensorType& a, const Type& b_type,
                                 absl::string_view what) {
  const auto* b = b_type.as<TensorTypeNode>();
  if (b == nullptr) {
    return c.Unsupported(absl::StrCat(what, " is not a tensor (", TypeToString(b_type), ")"));
  }
  if (b->dtype != a->dtype || b->shape.size() != a->shape.size()) {
    return c.Invalid(absl::StrCat(what, " is ", TypeToString(b_type), " but enters the loop as ",
                                  TypeToString(a), "; a loop-carried value keeps its dtype and rank"));
  }
  Shape s = a->shape;
  for (size_t k = 0; k < s.size(); ++k) {
    if (!(s[k] == b->shape[k])) s[k] = Dim::Any();
  }
  return MakeTensorType(std::move(s), a->dtype);
}

bool SameShape(const TensorType& a, const Type& b) {
  const auto* t = b.as<TensorTypeNode>();
  if (t == nullptr || t->shape.size() != a->shape.size()) return false;
  for (size_t k = 0; k < a->shape.size(); ++k) {
    if (!(a->shape[k] == t->shape[k])) return false;
  }
  return true;
}

Var TypedVar(const std::string& name, Type t) {
  Var v = MakeVar(name, t);
  v->set_checked_type(std::move(t));
  return v;
}

// The recursion both loops become (see the file comment).
struct Recursion {
  std::vector<Var> params;
  std::vector<Expr> init;  // per parameter
  std::vector<Expr> next;  // per parameter (in terms of the parameters)
  Expr go;                 // 0-d bool: run the body once more
  std::vector<size_t> results;  // the parameters returned at the end
};

// let %loop: <type> = fn (params) { if (go) { %loop(next) } else { (results) } }; %loop(init)
// -> the tuple of the results.
absl::StatusOr<Expr> BuildRecursion(Recursion& r) {
  std::vector<Type> param_types, result_types;
  std::vector<Expr> result_fields;
  for (const Var& p : r.params) param_types.push_back(p->checked_type());
  for (size_t k : r.results) {
    result_types.push_back(r.params[k]->checked_type());
    result_fields.push_back(r.params[k]);
  }
  Type ret = MakeTupleType(result_types);
  KILN_ASSIGN_OR_RETURN(FuncType ft, MakeFuncType(param_types, ret));
  Var loop = TypedVar("loop", ft);
  KILN_ASSIGN_OR_RETURN(Call again, MakeCall(loop, r.next));
  KILN_ASSIGN_OR_RETURN(Tuple done, MakeTuple(result_fields));
  KILN_ASSIGN_OR_RETURN(If branch, MakeIf(r.go, again, done));
  KILN_ASSIGN_OR_RETURN(Function fn, MakeFunction(r.params, branch, ret));
  KILN_ASSIGN_OR_RETURN(Call first, MakeCall(loop, r.init));
  // Typed when its fields are read (c.TupleGet), which types the whole loop.
  KILN_ASSIGN_OR_RETURN(Let let, MakeLet(loop, fn, first));
  return Expr(let);
}

void AddCaptures(Recursion* r, const std::vector<Capture>& caps) {
  for (const Capture& cap : caps) {
    r->params.push_back(cap.var);
    r->init.push_back(cap.value);
    r->next.push_back(cap.var);
  }
}

// A scan output's accumulator: its parameter (a `?` extent at `axis`), its
// empty initial value, and the next value with element `e` added. An element
// whose shape is not static (known only at run time) starts from an empty
// constant with 0 for those dims too; the first iteration then replaces it
// instead of concatenating (the dims would not agree), and a loop that runs
// no iteration returns that constant.
struct Accumulator {
  Var var;
  Expr empty;
  TensorType elem;
  int64_t axis = 0;
  bool static_elem = true;
};

absl::StatusOr<Accumulator> MakeAccumulator(ConvertContext& c, const Expr& elem, int64_t axis,
                                            const std::string& name, absl::string_view what) {
  KILN_ASSIGN_OR_RETURN(TensorType t, cvt::TypeOf(elem));
  const int64_t rank = static_cast<int64_t>(t->shape.size());
  if (axis < -(rank + 1) || axis > rank) {
    return c.Invalid(absl::StrCat(what, " has rank ", rank, "; its axis ", axis,
                                  " is outside [", -(rank + 1), ", ", rank, "]"));
  }
  if (axis < 0) axis += rank + 1;
  Accumulator a;
  a.elem = t;
  a.axis = axis;
  std::vector<int64_t> empty;
  for (const Dim& d : t->shape) {
    a.static_elem &= d.is_static();
    empty.push_back(d.is_static() ? d.value() : 0);
  }
  empty.insert(empty.begin() + axis, 0);
  KILN_ASSIGN_OR_RETURN(a.empty, cvt::ConstOf(c, t->dtype, empty, {}));
  Shape grown = t->shape;
  for (Dim& d : grown) {
    if (!d.is_static()) d = Dim::Any();
  }
  grown.insert(grown.begin() + axis, Dim::Any());
  a.var = TypedVar(name, MakeTensorType(std::move(grown), t->dtype));
  return a;
}

// The accumulator after iteration `i` (from 0) adds `elem`.
absl::StatusOr<Expr> Grow(ConvertContext& c, const Accumulator& a, const Expr& elem, bool prepend,
                          const Var& i) {
  KILN_ASSIGN_OR_RETURN(Expr slice, cvt::ExpandDims(c, elem, a.axis));
  auto attrs = cvt::NewAttrs<ConcatenateAttrs>();
  attrs->axis = a.axis;
  KILN_ASSIGN_OR_RETURN(Tuple both, prepend ? MakeTuple({slice, a.var}) : MakeTuple({a.var, slice}));
  KILN_ASSIGN_OR_RETURN(Expr grown, c.Call("concatenate", {Expr(both)}, attrs));
  if (a.static_elem) return grown;
  // if (i > 0) { grown } else { slice }: the `if` takes the type of its first
  // branch, the accumulator's.
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(DataType::Int(64), 0));
  KILN_ASSIGN_OR_RETURN(Expr later, c.Call("greater", {i, zero}));
  KILN_ASSIGN_OR_RETURN(If pick, MakeIf(later, grown, slice));
  return Expr(pick);
}

// The stacked result with its static extent `n` at the scan axis when known.
absl::StatusOr<Expr> Finish(ConvertContext& c, const Accumulator& a, Expr acc,
                            std::optional<int64_t> n) {
  std::optional<std::vector<int64_t>> dims = StaticShape(a.elem->shape);
  if (!n || !dims) return acc;
  dims->insert(dims->begin() + a.axis, *n);
  return cvt::Reshape(c, std::move(acc), *dims);
}

// ---- If -----------------------------------------------------------------------

Outs ConvertIf(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr cond_in, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr cond, ToScalar(c, cond_in, DataType::Bool(), "the condition (input 0)"));
  KILN_ASSIGN_OR_RETURN(const onnx::GraphProto* then_g, GraphAttr(c, "then_branch"));
  KILN_ASSIGN_OR_RETURN(const onnx::GraphProto* else_g, GraphAttr(c, "else_branch"));
  const int n = c.node().output_size();
  const auto check_count = [&](const std::vector<Expr>& outs, absl::string_view which) {
    if (static_cast<int>(outs.size()) != n) {
      return c.Invalid(absl::StrCat(which, " has ", outs.size(), " outputs but the node has ", n));
    }
    return absl::OkStatus();
  };
  // A condition known now: only the branch taken.
  if (absl::StatusOr<Ref<const HostTensor>> known = c.ConstantInput(0);
      known.ok() && (*known)->num_elements() == 1) {
    const bool taken = (*known)->GetAsDouble(0) != 0;
    KILN_ASSIGN_OR_RETURN(std::vector<Expr> outs,
                          c.ImportSubgraph(taken ? *then_g : *else_g, {}, nullptr));
    KILN_RETURN_IF_ERROR(check_count(outs, taken ? "then_branch" : "else_branch"));
    return outs;
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> t, c.ImportSubgraph(*then_g, {}, nullptr));
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> e, c.ImportSubgraph(*else_g, {}, nullptr));
  KILN_RETURN_IF_ERROR(check_count(t, "then_branch"));
  KILN_RETURN_IF_ERROR(check_count(e, "else_branch"));
  for (int k = 0; k < n; ++k) {
    const Type& a = t[static_cast<size_t>(k)]->checked_type();
    const Type& b = e[static_cast<size_t>(k)]->checked_type();
    if (!TypeEqual(a, b)) {
      const auto* ta = a.as<TensorTypeNode>();
      const auto* tb = b.as<TensorTypeNode>();
      const bool same_kind = ta != nullptr && tb != nullptr && ta->dtype == tb->dtype &&
                             ta->shape.size() == tb->shape.size();
      bool compatible = same_kind;
      for (size_t d = 0; same_kind && d < ta->shape.size(); ++d) {
        compatible &= ta->shape[d] == tb->shape[d] || ta->shape[d].is_any() || tb->shape[d].is_any();
      }
      if (!compatible) {
        const std::string msg =
            absl::StrCat("output ", k, " is ", TypeToString(a), " in then_branch and ",
                         TypeToString(b), " in else_branch; ");
        if (ta != nullptr && tb != nullptr && ta->dtype != tb->dtype) {
          return c.Invalid(msg + "the branches must agree on the dtype");
        }
        return c.Unsupported(msg + "kiln's if needs both branches to have one shape");
      }
    }
  }
  // The `if` takes its first branch's type: where else_branch's shape is
  // the more general one, the branches swap under the negated condition.
  bool then_general = true, else_general = true;
  for (int k = 0; k < n; ++k) {
    const auto* ta = t[static_cast<size_t>(k)]->checked_type().as<TensorTypeNode>();
    const auto* tb = e[static_cast<size_t>(k)]->checked_type().as<TensorTypeNode>();
    if (ta == nullptr || tb == nullptr || ta->shape.size() != tb->shape.size()) continue;
    for (size_t d = 0; d < ta->shape.size(); ++d) {
      if (ta->shape[d] == tb->shape[d]) continue;
      then_general &= ta->shape[d].is_any();
      else_general &= tb->shape[d].is_any();
    }
  }
  if (!then_general) {
    if (!else_general) {
      return c.Unsupported(
          "each branch has a `?` dim where the other has a known one; kiln's if needs one of "
          "the branches' types to cover the other's");
    }
    std::swap(t, e);
    KILN_ASSIGN_OR_RETURN(cond, c.Call("logical_not", {cond}));
  }
  if (n == 1) {
    KILN_ASSIGN_OR_RETURN(If r, MakeIf(cond, t[0], e[0]));
    return std::vector<Expr>{Expr(r)};
  }
  KILN_ASSIGN_OR_RETURN(Tuple tt, MakeTuple(t));
  KILN_ASSIGN_OR_RETURN(Tuple et, MakeTuple(e));
  KILN_ASSIGN_OR_RETURN(If r, MakeIf(cond, tt, et));
  std::vector<Expr> outs;
  for (int k = 0; k < n; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr o, c.TupleGet(r, k));
    outs.push_back(std::move(o));
  }
  return outs;
}

// ---- Loop ---------------------------------------------------------------------

Outs ConvertLoop(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(const onnx::GraphProto* body, GraphAttr(c, "body"));
  const bool has_m = c.HasInput(0);
  const bool has_cond = c.HasInput(1);
  if (!has_m && !has_cond) {
    return c.Unsupported(
        "the loop has neither a trip count M (input 0) nor a condition (input 1): it never ends");
  }
  const int n = std::max(0, c.num_inputs() - 2);  // loop-carried values
  if (body->input_size() != 2 + n) {
    return c.Invalid(absl::StrCat("the body has ", body->input_size(),
                                  " inputs; it must have 2 + the ", n,
                                  " loop-carried values (iteration number, condition, values)"));
  }
  const int k_scan = body->output_size() - 1 - n;
  if (k_scan < 0) {
    return c.Invalid(absl::StrCat("the body has ", body->output_size(),
                                  " outputs; it must have 1 + the ", n,
                                  " loop-carried values (condition, values, then scan outputs)"));
  }
  Expr m, cond0;
  std::optional<int64_t> static_m;
  if (has_m) {
    KILN_ASSIGN_OR_RETURN(Expr m_in, c.Input(0));
    KILN_ASSIGN_OR_RETURN(m, ToScalar(c, m_in, DataType::Int(64), "the trip count M (input 0)"));
    if (absl::StatusOr<Ref<const HostTensor>> known = c.ConstantInput(0);
        known.ok() && (*known)->num_elements() == 1) {
      static_m = std::max<int64_t>(0, (*known)->GetAsInt64(0));
    }
  }
  if (has_cond) {
    KILN_ASSIGN_OR_RETURN(Expr cond_in, c.Input(1));
    KILN_ASSIGN_OR_RETURN(cond0, ToScalar(c, cond_in, DataType::Bool(), "the condition (input 1)"));
  } else {
    KILN_ASSIGN_OR_RETURN(cond0, c.ScalarConst(DataType::Bool(), 1));
  }
  std::vector<Expr> v_init;
  std::vector<TensorType> v_types;
  // A loop-carried sequence (convert_sequence.cc): its ADT; null for a tensor.
  std::vector<std::optional<SequenceAdt>> v_seq(static_cast<size_t>(n));
  // A loop-carried optional (convert_optional.cc): its ADT. The body may
  // give the optional or its value (ONNX's test_loop16_seq_none), wrapped
  // in Some then.
  std::vector<std::optional<OptionalAdt>> v_opt(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr v, c.Input(2 + k));
    if (std::optional<OptionalAdt> a = c.AsOptional(v->checked_type())) {
      v_opt[static_cast<size_t>(k)] = *a;
      v_init.push_back(std::move(v));
      v_types.push_back(a->elem);  // unused for an optional
      continue;
    }
    if (std::optional<SequenceAdt> a = c.AsSequence(v->checked_type())) {
      v_seq[static_cast<size_t>(k)] = *a;
      v_init.push_back(std::move(v));
      v_types.push_back(a->elem);  // unused for a sequence
      continue;
    }
    KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(2 + k));
    v_init.push_back(std::move(v));
    v_types.push_back(std::move(t));
  }
  // Import the body; where a carried value's shape changes, again with `?` there.
  Var i, cond;
  std::vector<Var> vs;
  std::vector<Expr> outs;
  std::vector<Capture> caps;
  for (int attempt = 0;; ++attempt) {
    i = TypedVar("i", MakeScalarType(DataType::Int(64)));
    cond = TypedVar("cond", MakeScalarType(DataType::Bool()));
    vs.clear();
    caps.clear();
    std::vector<Expr> body_in;
    Expr iter = i, cond_in = cond;
    if (DeclaredRankOne(body->input(0))) {
      KILN_ASSIGN_OR_RETURN(iter, cvt::Reshape(c, i, {1}));
    }
    if (DeclaredRankOne(body->input(1))) {
      KILN_ASSIGN_OR_RETURN(cond_in, cvt::Reshape(c, cond, {1}));
    }
    body_in = {iter, cond_in};
    for (int k = 0; k < n; ++k) {
      const std::optional<SequenceAdt>& seq = v_seq[static_cast<size_t>(k)];
      const std::optional<OptionalAdt>& opt = v_opt[static_cast<size_t>(k)];
      vs.push_back(TypedVar(body->input(2 + k).name(),
                            opt ? opt->type : seq ? seq->type : Type(v_types[static_cast<size_t>(k)])));
      // An empty sequence whose rank the body's first insert decides: so
      // may the state's (the body is imported again with that rank).
      if (seq && c.IsRankPending(v_init[static_cast<size_t>(k)])) c.MarkRankPending(vs.back());
      body_in.push_back(vs.back());
    }
    KILN_ASSIGN_OR_RETURN(outs, c.ImportSubgraph(*body, body_in, &caps));
    bool changed = false;
    for (int k = 0; k < n; ++k) {
      const Type& got = outs[static_cast<size_t>(1 + k)]->checked_type();
      if (const std::optional<OptionalAdt>& opt = v_opt[static_cast<size_t>(k)]) {
        if (TypeEqual(got, opt->type)) continue;
        // The optional's value: Some(value) is carried.
        bool is_value = false;
        if (opt->of_sequence) {
          std::optional<SequenceAdt> got_seq = c.AsSequence(got);
          is_value = got_seq && TypeEqual(got_seq->type, opt->payload);
        } else if (const auto* tt = got.as<TensorTypeNode>()) {
          is_value = tt->dtype == opt->elem->dtype && tt->shape.size() == opt->elem->shape.size();
        }
        if (!is_value) {
          return c.Invalid(absl::StrCat("loop-carried value ", k, " ('", body->output(1 + k).name(),
                                        "') is an optional (", TypeToString(opt->type),
                                        "), but the body gives ", TypeToString(got)));
        }
        KILN_ASSIGN_OR_RETURN(Call some, MakeCall(opt->some, {outs[static_cast<size_t>(1 + k)]}));
        some->set_checked_type(opt->type);
        outs[static_cast<size_t>(1 + k)] = some;
        continue;
      }
      if (std::optional<SequenceAdt>& seq = v_seq[static_cast<size_t>(k)]) {
        std::optional<SequenceAdt> got_seq = c.AsSequence(got);
        if (!got_seq) {
          return c.Invalid(absl::StrCat("loop-carried value ", k, " ('", body->output(1 + k).name(),
                                        "') is a sequence, but the body gives ", TypeToString(got)));
        }
        if (TypeEqual(got_seq->type, seq->type)) continue;
        if (!c.IsRankPending(v_init[static_cast<size_t>(k)])) {
          return c.Invalid(absl::StrCat("loop-carried value ", k, " ('", body->output(1 + k).name(),
                                        "') is a sequence of ", TypeToString(Type(seq->elem)),
                                        ", but the body makes one of ", TypeToString(Type(got_seq->elem))));
        }
        KILN_ASSIGN_OR_RETURN(Call nil, MakeCall(got_seq->nil, {}));
        nil->set_checked_type(got_seq->type);
        v_init[static_cast<size_t>(k)] = nil;
        seq = got_seq;
        changed = true;
        continue;
      }
      TensorType& want = v_types[static_cast<size_t>(k)];
      if (SameShape(want, got) && got.as<TensorTypeNode>()->dtype == want->dtype) continue;
      KILN_ASSIGN_OR_RETURN(want, Relax(c, want, got,
                                        absl::StrCat("loop-carried value ", k, " ('",
                                                     body->output(1 + k).name(), "')")));
      changed = true;
    }
    if (!changed) break;
    if (attempt == 2) {
      return absl::InternalError(absl::StrCat(c.where(), ": the loop-carried types do not settle"));
    }
  }
  Recursion r;
  r.params = {i, cond};
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(DataType::Int(64), 0));
  r.init = {zero, cond0};
  KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(DataType::Int(64), 1));
  KILN_ASSIGN_OR_RETURN(Expr i1, c.Call("add", {i, one}));
  KILN_ASSIGN_OR_RETURN(Expr cond1, ToScalar(c, outs[0], DataType::Bool(), "the body's condition (output 0)"));
  r.next = {i1, cond1};
  for (int k = 0; k < n; ++k) {
    r.results.push_back(r.params.size());
    r.params.push_back(vs[static_cast<size_t>(k)]);
    r.init.push_back(v_init[static_cast<size_t>(k)]);
    r.next.push_back(outs[static_cast<size_t>(1 + k)]);
  }
  std::vector<Accumulator> accs;
  for (int k = 0; k < k_scan; ++k) {
    const Expr& e = outs[static_cast<size_t>(1 + n + k)];
    KILN_ASSIGN_OR_RETURN(Accumulator a, MakeAccumulator(c, e, 0, absl::StrCat("scan", k),
                                                         absl::StrCat("scan output ", k)));
    KILN_ASSIGN_OR_RETURN(Expr grown, Grow(c, a, e, false, i));
    r.results.push_back(r.params.size());
    r.params.push_back(a.var);
    r.init.push_back(a.empty);
    r.next.push_back(grown);
    accs.push_back(std::move(a));
  }
  Expr go;
  if (has_m) {
    Var mv = TypedVar("trip_count", MakeScalarType(DataType::Int(64)));
    r.params.push_back(mv);
    r.init.push_back(m);
    r.next.push_back(mv);
    KILN_ASSIGN_OR_RETURN(go, c.Call("less", {i, mv}));
  }
  if (has_cond) {
    if (go) {
      KILN_ASSIGN_OR_RETURN(go, c.Call("logical_and", {go, cond}));
    } else {
      go = cond;
    }
  }
  r.go = go;
  AddCaptures(&r, caps);
  KILN_ASSIGN_OR_RETURN(Expr loop, BuildRecursion(r));
  std::vector<Expr> results;
  for (int k = 0; k < n + k_scan; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr o, c.TupleGet(loop, k));
    if (k >= n) {
      // M iterations exactly when there is no condition to stop earlier.
      const std::optional<int64_t> len = has_cond ? std::nullopt : static_m;
      KILN_ASSIGN_OR_RETURN(o, Finish(c, accs[static_cast<size_t>(k - n)], o, len));
    }
    results.push_back(std::move(o));
  }
  return results;
}

// ---- Scan ---------------------------------------------------------------------

struct ScanSpec {
  std::vector<Expr> states;
  std::vector<Expr> inputs;  // scanned along in_axes
  std::vector<int64_t> in_axes, in_reverse, out_axes, out_reverse;
};

// One scan (opset 9's semantics): the final states, then the scan outputs.
Outs BuildScan(ConvertContext& c, const onnx::GraphProto& body, const ScanSpec& s) {
  const size_t n = s.states.size(), m = s.inputs.size();
  if (m == 0) return c.Invalid("num_scan_inputs must be at least 1");
  if (body.input_size() != static_cast<int>(n + m)) {
    return c.Invalid(absl::StrCat("the body has ", body.input_size(), " inputs; it must have the ",
                                  n, " states and the ", m, " scan inputs"));
  }
  const int k_scan = body.output_size() - static_cast<int>(n);
  if (k_scan < 0) {
    return c.Invalid(absl::StrCat("the body has ", body.output_size(),
                                  " outputs; it must have at least the ", n, " states"));
  }
  if (s.out_axes.size() != static_cast<size_t>(k_scan) ||
      s.out_reverse.size() != static_cast<size_t>(k_scan)) {
    return c.Invalid(absl::StrCat("scan_output_axes and scan_output_directions must have one "
                                  "entry per scan output (", k_scan, ")"));
  }
  // The sequence length: every scan input's extent on its axis.
  std::vector<int64_t> axes;
  Dim len;
  for (size_t j = 0; j < m; ++j) {
    KILN_ASSIGN_OR_RETURN(TensorType t, cvt::TypeOf(s.inputs[j]));
    const int64_t rank = static_cast<int64_t>(t->shape.size());
    KILN_ASSIGN_OR_RETURN(int64_t a, cvt::NormAxis(c, s.in_axes[j], rank,
                                                   absl::StrCat("scan_input_axes[", j, "]")));
    axes.push_back(a);
    const Dim d = t->shape[static_cast<size_t>(a)];
    if (j == 0) {
      len = d;
    } else if (!(d == len) && !d.is_any() && !len.is_any()) {
      return c.Invalid(absl::StrCat("scan input ", j, " has ", d.ToString(),
                                    " entries on its scan axis but scan input 0 has ",
                                    len.ToString()));
    }
  }
  Recursion r;
  Var i = TypedVar("i", MakeScalarType(DataType::Int(64)));
  r.params = {i};
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(DataType::Int(64), 0));
  KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(DataType::Int(64), 1));
  r.init = {zero};
  KILN_ASSIGN_OR_RETURN(Expr i1, c.Call("add", {i, one}));
  r.next = {i1};
  // The length as a value: a constant, or read from scan input 0's shape.
  Expr length;
  std::optional<int64_t> static_len;
  if (len.is_static()) {
    static_len = len.value();
    KILN_ASSIGN_OR_RETURN(length, c.ScalarConst(DataType::Int(64), static_cast<double>(len.value())));
  } else {
    auto sa = cvt::NewAttrs<ShapeOfAttrs>();
    sa->dtype = DataType::Int(64);
    KILN_ASSIGN_OR_RETURN(Expr shape, c.Call("shape_of", {s.inputs[0]}, sa));
    KILN_ASSIGN_OR_RETURN(Expr at, c.ScalarConst(DataType::Int(64), static_cast<double>(axes[0])));
    KILN_ASSIGN_OR_RETURN(Expr l, cvt::Take(c, shape, at, 0));
    Var lv = TypedVar("length", MakeScalarType(DataType::Int(64)));
    r.params.push_back(lv);
    r.init.push_back(l);
    r.next.push_back(lv);
    length = lv;
  }
  // The scan inputs are parameters; each iteration takes its slice.
  std::vector<Expr> body_in;
  std::vector<Var> state_vars;
  std::vector<TensorType> state_types;
  for (size_t k = 0; k < n; ++k) {
    KILN_ASSIGN_OR_RETURN(TensorType t, cvt::TypeOf(s.states[k]));
    state_types.push_back(t);
  }
  KILN_ASSIGN_OR_RETURN(Expr last, c.Call("subtract", {length, one}));
  KILN_ASSIGN_OR_RETURN(Expr back, c.Call("subtract", {last, i}));
  std::vector<Var> input_vars;
  std::vector<Expr> slices;
  for (size_t j = 0; j < m; ++j) {
    KILN_ASSIGN_OR_RETURN(TensorType t, cvt::TypeOf(s.inputs[j]));
    Var x = TypedVar(absl::StrCat("scan_input", j), t);
    input_vars.push_back(x);
    KILN_ASSIGN_OR_RETURN(Expr slice, cvt::Take(c, x, s.in_reverse[j] ? back : Expr(i), axes[j]));
    slices.push_back(std::move(slice));
  }
  std::vector<Expr> outs;
  std::vector<Capture> caps;
  for (int attempt = 0;; ++attempt) {
    state_vars.clear();
    caps.clear();
    body_in.clear();
    for (size_t k = 0; k < n; ++k) {
      state_vars.push_back(TypedVar(body.input(static_cast<int>(k)).name(), state_types[k]));
      body_in.push_back(state_vars.back());
    }
    body_in.insert(body_in.end(), slices.begin(), slices.end());
    KILN_ASSIGN_OR_RETURN(outs, c.ImportSubgraph(body, body_in, &caps));
    bool changed = false;
    for (size_t k = 0; k < n; ++k) {
      const Type& got = outs[k]->checked_type();
      if (SameShape(state_types[k], got) && got.as<TensorTypeNode>()->dtype == state_types[k]->dtype) continue;
      KILN_ASSIGN_OR_RETURN(state_types[k], Relax(c, state_types[k], got,
                                                  absl::StrCat("state ", k, " ('",
                                                               body.output(static_cast<int>(k)).name(), "')")));
      changed = true;
    }
    if (!changed) break;
    if (attempt == 2) {
      return absl::InternalError(absl::StrCat(c.where(), ": the scan's state types do not settle"));
    }
  }
  for (size_t k = 0; k < n; ++k) {
    r.results.push_back(r.params.size());
    r.params.push_back(state_vars[k]);
    r.init.push_back(s.states[k]);
    r.next.push_back(outs[k]);
  }
  std::vector<Accumulator> accs;
  for (int k = 0; k < k_scan; ++k) {
    const Expr& e = outs[n + static_cast<size_t>(k)];
    KILN_ASSIGN_OR_RETURN(
        Accumulator a, MakeAccumulator(c, e, s.out_axes[static_cast<size_t>(k)], absl::StrCat("scan", k),
                                       absl::StrCat("scan output ", k)));
    KILN_ASSIGN_OR_RETURN(Expr grown, Grow(c, a, e, s.out_reverse[static_cast<size_t>(k)] != 0, i));
    r.results.push_back(r.params.size());
    r.params.push_back(a.var);
    r.init.push_back(a.empty);
    r.next.push_back(grown);
    accs.push_back(std::move(a));
  }
  for (size_t j = 0; j < m; ++j) {
    r.params.push_back(input_vars[j]);
    r.init.push_back(s.inputs[j]);
    r.next.push_back(input_vars[j]);
  }
  KILN_ASSIGN_OR_RETURN(r.go, c.Call("less", {i, length}));
  AddCaptures(&r, caps);
  KILN_ASSIGN_OR_RETURN(Expr loop, BuildRecursion(r));
  std::vector<Expr> results;
  for (size_t k = 0; k < n + static_cast<size_t>(k_scan); ++k) {
    KILN_ASSIGN_OR_RETURN(Expr o, c.TupleGet(loop, static_cast<int>(k)));
    if (k >= n) {
      KILN_ASSIGN_OR_RETURN(o, Finish(c, accs[k - n], o, static_len));
    }
    results.push_back(std::move(o));
  }
  return results;
}

// A 0/1 list attribute of `count` entries (directions).
absl::StatusOr<std::vector<int64_t>> Directions(ConvertContext& c, absl::string_view name,
                                                size_t count) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> d, c.AttrInts(name, std::vector<int64_t>(count, 0)));
  if (d.size() != count) {
    return c.Invalid(absl::StrCat("attribute '", name, "' has ", d.size(), " entries; expected ", count));
  }
  for (int64_t v : d) {
    if (v != 0 && v != 1) {
      return c.Invalid(absl::StrCat("attribute '", name, "' holds ", v, "; directions are 0 (forward) or 1 (reverse)"));
    }
  }
  return d;
}

Outs ConvertScan9(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(const onnx::GraphProto* body, GraphAttr(c, "body"));
  KILN_ASSIGN_OR_RETURN(int64_t m, c.AttrInt("num_scan_inputs", -1));
  if (m < 1 || m > c.num_inputs()) {
    return c.Invalid(absl::StrCat("num_scan_inputs is ", m, "; it must be in [1, ", c.num_inputs(),
                                  "] (the node's inputs)"));
  }
  const int n = c.num_inputs() - static_cast<int>(m);
  const int k_scan = body->output_size() - n;
  ScanSpec s;
  for (int k = 0; k < c.num_inputs(); ++k) {
    KILN_ASSIGN_OR_RETURN(Expr e, c.Input(k));
    (k < n ? s.states : s.inputs).push_back(std::move(e));
  }
  KILN_ASSIGN_OR_RETURN(s.in_axes, c.AttrInts("scan_input_axes", std::vector<int64_t>(m, 0)));
  if (s.in_axes.size() != static_cast<size_t>(m)) {
    return c.Invalid(absl::StrCat("scan_input_axes has ", s.in_axes.size(), " entries; expected ", m));
  }
  KILN_ASSIGN_OR_RETURN(s.in_reverse, Directions(c, "scan_input_directions", static_cast<size_t>(m)));
  const size_t k = static_cast<size_t>(std::max(0, k_scan));
  KILN_ASSIGN_OR_RETURN(s.out_axes, c.AttrInts("scan_output_axes", std::vector<int64_t>(k, 0)));
  KILN_ASSIGN_OR_RETURN(s.out_reverse, Directions(c, "scan_output_directions", k));
  return BuildScan(c, *body, s);
}

// Opset 8: a batch axis 0 on every input and output; the scan axis is 1.
Outs ConvertScan8(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(const onnx::GraphProto* body, GraphAttr(c, "body"));
  KILN_ASSIGN_OR_RETURN(int64_t m, c.AttrInt("num_scan_inputs", -1));
  const int total = c.num_inputs() - 1;  // after sequence_lens
  if (m < 1 || m > total) {
    return c.Invalid(absl::StrCat("num_scan_inputs is ", m, "; it must be in [1, ", total,
                                  "] (the node's inputs after sequence_lens)"));
  }
  const int n = total - static_cast<int>(m);
  const int k_scan = std::max(0, body->output_size() - n);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dirs, Directions(c, "directions", static_cast<size_t>(m)));
  std::vector<Expr> ins;
  Dim batch;
  for (int k = 0; k < total; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr e, c.Input(1 + k));
    KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(1 + k));
    if (t->shape.size() < (k < n ? 1u : 2u)) {
      return c.Invalid(absl::StrCat("input ", 1 + k, " has rank ", t->shape.size(),
                                    "; at opset 8 every input has a batch axis (and scan inputs a "
                                    "sequence axis after it)"));
    }
    if (k == 0) batch = t->shape[0];
    if (!(t->shape[0] == batch)) {
      return c.Invalid(absl::StrCat("input ", 1 + k, " has batch ", t->shape[0].ToString(),
                                    " but input 1 has ", batch.ToString()));
    }
    ins.push_back(std::move(e));
  }
  if (!batch.is_static() || batch.value() > kMaxScan8Batch) {
    return c.Unsupported(absl::StrCat("opset-8 Scan runs once per batch entry; the batch ",
                                      batch.ToString(), " must be static and at most ",
                                      kMaxScan8Batch));
  }
  if (c.HasInput(0)) {
    KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(1 + n));
    const Dim seq = t->shape[1];
    absl::StatusOr<std::optional<std::vector<int64_t>>> lens = c.ConstantInts(0);
    bool full = lens.ok() && lens->has_value() && seq.is_static();
    if (full) {
      for (int64_t l : **lens) full &= l == seq.value();
    }
    if (!full) {
      return c.Unsupported(
          "sequence_lens (input 0) must be absent or a constant equal to the sequence length "
          "for every batch entry (shorter sequences are not supported)");
    }
  }
  std::vector<std::vector<Expr>> per_batch;
  for (int64_t b = 0; b < batch.value(); ++b) {
    KILN_ASSIGN_OR_RETURN(Expr bi, c.ScalarConst(DataType::Int(64), static_cast<double>(b)));
    ScanSpec s;
    for (int k = 0; k < total; ++k) {
      KILN_ASSIGN_OR_RETURN(Expr slice, cvt::Take(c, ins[static_cast<size_t>(k)], bi, 0));
      (k < n ? s.states : s.inputs).push_back(std::move(slice));
    }
    s.in_axes.assign(static_cast<size_t>(m), 0);
    s.in_reverse = dirs;
    s.out_axes.assign(static_cast<size_t>(k_scan), 0);
    s.out_reverse.assign(static_cast<size_t>(k_scan), 0);
    KILN_ASSIGN_OR_RETURN(std::vector<Expr> outs, BuildScan(c, *body, s));
    per_batch.push_back(std::move(outs));
  }
  std::vector<Expr> results;
  for (size_t k = 0; k < per_batch[0].size(); ++k) {
    std::vector<Expr> parts;
    for (const std::vector<Expr>& outs : per_batch) {
      KILN_ASSIGN_OR_RETURN(Expr p, cvt::ExpandDims(c, outs[k], 0));
      parts.push_back(std::move(p));
    }
    if (parts.size() == 1) {
      results.push_back(parts[0]);
      continue;
    }
    auto attrs = cvt::NewAttrs<ConcatenateAttrs>();
    attrs->axis = 0;
    KILN_ASSIGN_OR_RETURN(Tuple t, MakeTuple(std::move(parts)));
    KILN_ASSIGN_OR_RETURN(Expr o, c.Call("concatenate", {Expr(t)}, attrs));
    results.push_back(std::move(o));
  }
  return results;
}

}  // namespace

void RegisterSequenceConverters(ConverterRegistry& r);  // convert_sequence.cc
void RegisterOptionalConverters(ConverterRegistry& r);  // convert_optional.cc

void RegisterControlConverters(ConverterRegistry& r) {
  RegisterSequenceConverters(r);
  RegisterOptionalConverters(r);
  r.Add("If", 1, ConvertIf);
  r.Add("Loop", 1, ConvertLoop);
  r.Add("Scan", 8, ConvertScan8);
  r.Add("Scan", 9, ConvertScan9);
}

}  // namespace kiln::onnx_frontend
