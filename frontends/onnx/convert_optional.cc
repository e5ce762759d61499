// File: frontends/onnx/convert_optional.cc
//
// ONNX optional values (in the "control" converter family): an optional of
// a tensor or of a sequence of tensors is the graph IR's ADT (converter.h,
// OptionalAdt: Some(payload) / None, a tensor payload's dims all `?`), and
// each operator is a constructor or a match over it:
//
//   Optional(x)               Some(x)
//   Optional() type=T         None (T: a tensor or a sequence of tensors
//                             type with a shape, for the rank)
//   OptionalHasElement(o)     match o { Some(_) => true, None => false }
//                             (opset 18: a tensor or sequence input is
//                             true, an absent one false)
//   OptionalGetElement(o)     get(o) = match o { Some(x) => x } in a local
//                             function: an empty optional reaches no clause,
//                             and the VM stops with "no clause of a match in
//                             OptionalGetElement_input_is_not_none"
//                             (opset 18: a tensor or sequence input is
//                             itself)
//
// Identity, If branches and graph inputs and outputs pass optionals as they
// are (importer.cc: an optional graph input is a `main` parameter of the
// ADT type); a Loop carries one, a body that gives the value having it
// carried as Some(value) (convert_control.cc).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend {
namespace {

using cvt::Outs;

using cvt::Typed;
using cvt::TypedVar;

// The optional ADT holding `v`'s type (a tensor or a sequence), or an error.
absl::StatusOr<OptionalAdt> OptionalFor(ConvertContext& c, const Expr& v, absl::string_view what) {
  const Type& t = v->checked_type();
  if (std::optional<SequenceAdt> s = c.AsSequence(t)) {
    return c.OptionalOf(s->elem->dtype, s->elem->ndim(), /*of_sequence=*/true);
  }
  if (const auto* tt = t.as<TensorTypeNode>()) {
    return c.OptionalOf(tt->dtype, static_cast<int64_t>(tt->shape.size()), /*of_sequence=*/false);
  }
  if (c.AsOptional(t)) {
    return c.Unsupported(absl::StrCat(what, " is an optional; kiln's optionals hold a tensor or a sequence "
                                            "of tensors, not an optional"));
  }
  return c.Invalid(absl::StrCat(what, " is ", TypeToString(t), "; an optional holds a tensor or a sequence"));
}

// The optional ADT of a TypeProto (Optional's `type` attribute).
absl::StatusOr<OptionalAdt> OptionalOfTypeProto(ConvertContext& c, const onnx::TypeProto& tp) {
  const bool of_sequence = tp.value_case() == onnx::TypeProto::kSequenceType;
  const onnx::TypeProto& tensor = of_sequence ? tp.sequence_type().elem_type() : tp;
  if (tensor.value_case() != onnx::TypeProto::kTensorType) {
    return c.Unsupported(absl::StrCat("attribute 'type' is not a tensor or a sequence of tensors (kiln's ",
                                      "optionals hold those)"));
  }
  const onnx::TypeProto::Tensor& tt = tensor.tensor_type();
  KILN_ASSIGN_OR_RETURN(DataType dtype, FromOnnxDataType(tt.elem_type()));
  if (!tt.has_shape()) {
    return c.Unsupported(absl::StrCat("attribute 'type' declares no shape for the ",
                                      of_sequence ? "sequence's elements" : "tensor",
                                      "; kiln needs its rank (give it a shape, every dim may be a dim_param)"));
  }
  return c.OptionalOf(dtype, tt.shape().dim_size(), of_sequence);
}

Outs ConvertOptional(ConvertContext& c) {
  if (c.HasInput(0)) {
    KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
    KILN_ASSIGN_OR_RETURN(OptionalAdt a, OptionalFor(c, x, "input 0"));
    KILN_ASSIGN_OR_RETURN(Call some, MakeCall(a.some, {x}));
    return std::vector<Expr>{Typed(some, a.type)};
  }
  if (!c.HasAttr("type")) {
    return c.Invalid("an Optional without an input needs the attribute 'type' (the type of the value it lacks)");
  }
  KILN_ASSIGN_OR_RETURN(const onnx::AttributeProto* type, c.RequiredAttr("type"));
  if (!type->has_tp()) return c.Invalid("attribute 'type' must be a TYPE_PROTO");
  KILN_ASSIGN_OR_RETURN(OptionalAdt a, OptionalOfTypeProto(c, type->tp()));
  KILN_ASSIGN_OR_RETURN(Call none, MakeCall(a.none, {}));
  return std::vector<Expr>{Typed(none, a.type)};
}

Outs ConvertOptionalHasElement(ConvertContext& c) {
  if (!c.HasInput(0)) {  // opset 18: an absent input is an empty optional
    KILN_ASSIGN_OR_RETURN(Expr no, c.ScalarConst(DataType::Bool(), 0));
    return std::vector<Expr>{no};
  }
  KILN_ASSIGN_OR_RETURN(Expr o, c.Input(0));
  std::optional<OptionalAdt> a = c.AsOptional(o->checked_type());
  if (!a) {  // opset 18: a tensor or a sequence has its element
    KILN_RETURN_IF_ERROR(OptionalFor(c, o, "input 0").status());
    KILN_ASSIGN_OR_RETURN(Expr yes, c.ScalarConst(DataType::Bool(), 1));
    return std::vector<Expr>{yes};
  }
  KILN_ASSIGN_OR_RETURN(Expr yes, c.ScalarConst(DataType::Bool(), 1));
  KILN_ASSIGN_OR_RETURN(Expr no, c.ScalarConst(DataType::Bool(), 0));
  KILN_ASSIGN_OR_RETURN(Pattern ps, MakePatternConstructor(a->some, {MakePatternWildcard()}));
  KILN_ASSIGN_OR_RETURN(Pattern pn, MakePatternConstructor(a->none, {}));
  KILN_ASSIGN_OR_RETURN(Match m, MakeMatch(o, {{ps, yes}, {pn, no}}, /*complete=*/true));
  return std::vector<Expr>{Typed(m, MakeScalarType(DataType::Bool()))};
}

Outs ConvertOptionalGetElement(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr o, c.Input(0));
  std::optional<OptionalAdt> a = c.AsOptional(o->checked_type());
  if (!a) {  // opset 18: a tensor or a sequence is its own element
    KILN_RETURN_IF_ERROR(OptionalFor(c, o, "input 0").status());
    return std::vector<Expr>{o};
  }
  // let %OptionalGetElement_input_is_not_none = fn(%o) { match %o { Some(%x) => %x } }; %f(o)
  const Type ret = a->payload;
  KILN_ASSIGN_OR_RETURN(FuncType ft, MakeFuncType({a->type}, ret));
  Var self = TypedVar("OptionalGetElement_input_is_not_none", ft);
  Var p = TypedVar("optional", a->type);
  Var x = TypedVar("value", ret);
  KILN_ASSIGN_OR_RETURN(Pattern px, MakePatternVar(x));
  KILN_ASSIGN_OR_RETURN(Pattern ps, MakePatternConstructor(a->some, {px}));
  KILN_ASSIGN_OR_RETURN(Match m, MakeMatch(p, {{ps, x}}, /*complete=*/false));
  m->set_checked_type(ret);
  KILN_ASSIGN_OR_RETURN(Function fn, MakeFunction({p}, m, ret));
  fn->set_checked_type(ft);
  KILN_ASSIGN_OR_RETURN(Call call, MakeCall(self, {o}));
  call->set_checked_type(ret);
  KILN_ASSIGN_OR_RETURN(Let let, MakeLet(self, fn, call));
  return std::vector<Expr>{Typed(let, ret)};
}

}  // namespace

void RegisterOptionalConverters(ConverterRegistry& r) {
  r.Add("Optional", 15, ConvertOptional);
  r.Add("OptionalHasElement", 15, ConvertOptionalHasElement);
  r.Add("OptionalGetElement", 15, ConvertOptionalGetElement);
}

}  // namespace kiln::onnx_frontend
