// ConvertContext for one node (context.h).
#include "frontends/onnx/context.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontends/onnx/importer.h"
#include "interpreter/interpreter.h"
#include "ir/dim.h"
#include "ir/op.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "onnx/onnx_pb.h"
#include "types/infer_type.h"

namespace kiln::onnx_frontend::internal {
namespace {

using onnx::AttributeProto;

// Types `e` by inference over all of it (iterative; any size).
absl::Status InferWhole(const Expr& e) {
  KILN_ASSIGN_OR_RETURN(Type t, types::InferExprType(e));
  if (!t || TypeHasIncomplete(t)) {
    return absl::InvalidArgumentError(
        absl::StrCat("could not infer a complete type (got ", t ? TypeToString(t) : "none", ")"));
  }
  return absl::OkStatus();
}

// The attribute's type; old models (IR < 3) may leave `type` unset, and then
// the field that is present says it.
int EffectiveType(const AttributeProto& a) {
  if (a.type() != AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return AttributeProto::FLOAT;
  if (a.has_i()) return AttributeProto::INT;
  if (a.has_s()) return AttributeProto::STRING;
  if (a.has_t()) return AttributeProto::TENSOR;
  if (a.has_g()) return AttributeProto::GRAPH;
  if (a.has_sparse_tensor()) return AttributeProto::SPARSE_TENSOR;
  if (a.floats_size() > 0) return AttributeProto::FLOATS;
  if (a.ints_size() > 0) return AttributeProto::INTS;
  if (a.strings_size() > 0) return AttributeProto::STRINGS;
  if (a.tensors_size() > 0) return AttributeProto::TENSORS;
  if (a.graphs_size() > 0) return AttributeProto::GRAPHS;
  return AttributeProto::UNDEFINED;
}

std::string AttrTypeName(int t) {
  if (AttributeProto::AttributeType_IsValid(t)) {
    return AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(t));
  }
  return absl::StrCat("type ", t);
}

void SortUnique(std::vector<std::string>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

const std::vector<std::string>& ImportState::GraphInputsOf(const Expr& root) {
  auto hit = depends_on.find(root.get());
  if (hit != depends_on.end()) return hit->second.second;
  const auto var_name = [&](const VarNode* v) {
    auto it = input_names.find(v);
    return it != input_names.end() ? it->second : v->name_hint;
  };
  struct Frame {
    Expr e;
    bool expanded = false;
  };
  std::vector<Frame> stack;
  stack.push_back(Frame{root, false});
  while (!stack.empty()) {
    const Expr e = stack.back().e;
    if (depends_on.contains(e.get())) {
      stack.pop_back();
      continue;
    }
    std::vector<std::string> names;
    const ExprKind k = e->kind;
    if (k == ExprKind::kFunction || k == ExprKind::kLet || k == ExprKind::kMatch) {
      // Binders: FreeVars knows which variables they bind.
      for (const Var& v : FreeVars(e)) names.push_back(var_name(v.get()));
    } else if (!stack.back().expanded) {
      stack.back().expanded = true;
      ForEachChild(e, [&](const Expr& c) {
        if (!depends_on.contains(c.get())) stack.push_back(Frame{c, false});
      });
      continue;
    } else {
      if (const auto* v = e.as<VarNode>()) names.push_back(var_name(v));
      ForEachChild(e, [&](const Expr& c) {
        const std::vector<std::string>& d = depends_on.at(c.get()).second;
        names.insert(names.end(), d.begin(), d.end());
      });
    }
    stack.pop_back();
    SortUnique(&names);
    depends_on.emplace(e.get(), std::make_pair(e, std::move(names)));
  }
  return depends_on.at(root.get()).second;
}

const Expr* ImportState::Lookup(const std::string& name) {
  auto it = values.find(name);
  if (it != values.end()) return &it->second;
  if (parent == nullptr) return nullptr;
  const Expr* outer = parent->Lookup(name);
  if (outer == nullptr) return nullptr;
  Expr e = *outer;
  // A value computed from no graph input or variable (a constant, or what
  // folds to one) is used as it is: import-time folding still sees it.
  if (captures != nullptr && !parent->GraphInputsOf(e).empty()) {
    Var v = MakeVar(name, e->checked_type());
    v->set_checked_type(e->checked_type());
    captures->push_back(ConvertContext::Capture{v, e});
    e = v;
  }
  return &values.emplace(name, std::move(e)).first->second;
}

bool ImportState::IsUnknown(const std::string& name) const {
  for (const ImportState* s = this; s != nullptr; s = s->parent) {
    if (s->unknown != nullptr && s->unknown->contains(name)) return true;
  }
  return false;
}

absl::Status EnsureTyped(const Expr& e) {
  if (!e) return absl::InternalError("a converter produced a null expression");
  if (e->checked_type()) return absl::OkStatus();
  switch (e->kind) {
    case ExprKind::kConstant:
      e->set_checked_type(static_cast<const ConstantNode*>(e.get())->tensor_type());
      return absl::OkStatus();
    case ExprKind::kTuple: {
      std::vector<Type> fields;
      for (const Expr& f : static_cast<const TupleNode*>(e.get())->fields) {
        if (!f || !f->checked_type()) return InferWhole(e);
        fields.push_back(f->checked_type());
      }
      e->set_checked_type(MakeTupleType(std::move(fields)));
      return absl::OkStatus();
    }
    case ExprKind::kTupleGetItem: {
      const auto* g = static_cast<const TupleGetItemNode*>(e.get());
      const auto* tt = g->tuple ? g->tuple->checked_type().as<TupleTypeNode>() : nullptr;
      if (tt == nullptr || g->index < 0 || g->index >= static_cast<int>(tt->fields.size())) break;
      e->set_checked_type(tt->fields[static_cast<size_t>(g->index)]);
      return absl::OkStatus();
    }
    case ExprKind::kCall: {
      // Type the call alone: its arguments stand in as variables of their
      // types, so the graph above is not visited again (O(1) per node).
      const auto* call = static_cast<const CallNode*>(e.get());
      if (call->op->kind != ExprKind::kOp) break;
      std::vector<Expr> shadow;
      shadow.reserve(call->args.size());
      for (const Expr& a : call->args) {
        if (!a) return absl::InternalError("a call has a null argument");
        if (!a->checked_type()) {
          if (a->kind != ExprKind::kConstant && a->kind != ExprKind::kTuple) return InferWhole(e);
          KILN_RETURN_IF_ERROR(EnsureTyped(a));
        }
        shadow.push_back(MakeVar("arg", a->checked_type()));
      }
      KILN_ASSIGN_OR_RETURN(kiln::Call alone,
                            MakeCall(call->op, std::move(shadow), call->attrs, call->type_args));
      KILN_ASSIGN_OR_RETURN(Type t, types::InferExprType(alone));
      if (!t || TypeHasIncomplete(t)) {
        return absl::InvalidArgumentError(absl::StrCat("could not infer a complete type (got ",
                                                       t ? TypeToString(t) : "none", ")"));
      }
      e->set_checked_type(std::move(t));
      return absl::OkStatus();
    }
    default:
      break;
  }
  return InferWhole(e);
}

std::string NodeWhere(const onnx::NodeProto& node, int index) {
  const bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
  const std::string op =
      default_domain ? node.op_type() : absl::StrCat(node.domain(), "::", node.op_type());
  if (node.name().empty()) return absl::StrCat(op, " (node #", index, ")");
  return absl::StrCat(op, " (node '", node.name(), "')");
}

absl::Status WithWhere(const absl::Status& status, absl::string_view where) {
  if (status.ok() || absl::StrContains(status.message(), where)) return status;
  absl::Status out(status.code(), absl::StrCat(where, ": ", status.message()));
  status.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

NodeContext::NodeContext(const onnx::NodeProto& node, int index, int64_t opset, ImportState* state)
    : node_(node), opset_(opset), where_(NodeWhere(node, index)), state_(state) {}

// ---- inputs ----------------------------------------------------------------

int NodeContext::num_inputs() const { return node_.input_size(); }

bool NodeContext::HasInput(int i) const {
  return i >= 0 && i < node_.input_size() && !node_.input(i).empty();
}

std::string NodeContext::InputName(int i) const {
  if (i < 0 || i >= node_.input_size()) return absl::StrCat("input ", i);
  return absl::StrCat("input ", i, " ('", node_.input(i), "')");
}

absl::StatusOr<Expr> NodeContext::Input(int i) {
  if (!HasInput(i)) {
    return Invalid(absl::StrCat("input ", i, " is required but absent (the node has ",
                                node_.input_size(), " inputs)"));
  }
  const Expr* e = state_->Lookup(node_.input(i));
  if (e == nullptr) {
    return absl::InternalError(absl::StrCat(where_, ": ", InputName(i), " has no expression"));
  }
  return *e;
}

absl::StatusOr<TensorType> NodeContext::InputType(int i) {
  KILN_ASSIGN_OR_RETURN(Expr e, Input(i));
  TensorType t = e->checked_type().cast<TensorTypeNode>();
  if (!t) {
    return Invalid(absl::StrCat(InputName(i), " is not a tensor (its type is ",
                                e->checked_type() ? TypeToString(e->checked_type()) : "unknown",
                                ")"));
  }
  return t;
}

absl::StatusOr<Ref<const HostTensor>> NodeContext::ConstantInput(int i) {
  KILN_ASSIGN_OR_RETURN(Expr e, Input(i));
  if (const auto* c = e.as<ConstantNode>()) return c->data;
  auto hit = state_->folded.find(e.get());
  if (hit != state_->folded.end()) return hit->second.second;
  const std::vector<std::string>& inputs = state_->GraphInputsOf(e);
  if (!inputs.empty() && state_->parent != nullptr) {
    // Inside a subgraph: values of a Loop/Scan body (or of an enclosing
    // one) exist only when it runs; freezing cannot give them.
    const ImportState* root = state_;
    while (root->parent != nullptr) root = root->parent;
    std::vector<std::string> body;
    for (const std::string& n : inputs) {
      const bool model_input =
          std::any_of(root->input_names.begin(), root->input_names.end(),
                      [&](const auto& kv) { return kv.second == n; });
      if (!model_input) body.push_back(n);
    }
    if (!body.empty()) {
      // The payload still tells converters with a run-time form
      // (convert_dynamic.cc, cvt::NeedsValue) to use it; the importer lists
      // an Unimplemented node without it.
      absl::Status s = Unsupported(absl::StrCat(
          InputName(i), " must be known at import time, but it depends on '",
          absl::StrJoin(body, "', '"),
          "', known only when the enclosing If/Loop/Scan body runs; this converter cannot read "
          "it at run time"));
      s.SetPayload(kNeedsConstantPayload, absl::Cord(absl::StrJoin(body, ",")));
      return s;
    }
  }
  if (!inputs.empty()) {
    const ImportState* root = state_;
    while (root->parent != nullptr) root = root->parent;
    const bool initializer = std::any_of(inputs.begin(), inputs.end(), [&](const std::string& n) {
      return root->overridable.contains(n);
    });
    absl::Status s = Invalid(absl::StrCat(
        InputName(i), " must be known at import time, but it depends on graph input(s) '",
        absl::StrJoin(inputs, "', '"), "'; give their values with ImportOptions::frozen_inputs",
        initializer ? " (or, for initializers that are also graph inputs, set "
                      "ImportOptions::freeze_overridable_initializers)"
                    : ""));
    s.SetPayload(kNeedsConstantPayload, absl::Cord(absl::StrJoin(inputs, ",")));
    return s;
  }
  absl::StatusOr<interp::Value> v = interp::Evaluate(e);
  if (!v.ok()) {
    return Invalid(
        absl::StrCat("cannot compute ", InputName(i), " at import time: ", v.status().message()));
  }
  if (!v->is_tensor()) return Invalid(absl::StrCat(InputName(i), " is not a tensor"));
  Ref<const HostTensor> t = v->tensor();
  state_->folded.emplace(e.get(), std::make_pair(e, t));
  return t;
}

absl::StatusOr<std::optional<std::vector<int64_t>>> NodeContext::ConstantInts(int i) {
  if (!HasInput(i)) return std::optional<std::vector<int64_t>>();
  // Integer inputs read as lists (shapes, axes, pads, sizes, indices) are
  // small; a tensor of millions of elements here is a hostile or broken
  // model (the fuzzer's: a Reshape whose shape input would fold to hundreds
  // of millions of elements took minutes and gigabytes). Its type says so
  // before anything is computed; the count is checked again after folding.
  constexpr int64_t kMaxConstantInts = int64_t{1} << 20;
  const auto too_many = [&](int64_t n) {
    return Invalid(absl::StrCat(InputName(i), " has ", n,
                                " elements; a list of integers read at import time may have at "
                                "most ",
                                kMaxConstantInts));
  };
  if (absl::StatusOr<TensorType> type = InputType(i); type.ok()) {
    const Dim n = ShapeNumElements((*type)->shape);
    if (n.is_static() && n.value() > kMaxConstantInts) return too_many(n.value());
  }
  KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> t, ConstantInput(i));
  if (!t->dtype().is_int() && !t->dtype().is_uint()) {
    return Invalid(
        absl::StrCat(InputName(i), " must be an integer tensor, got ", t->dtype().ToString()));
  }
  if (t->num_elements() > kMaxConstantInts) return too_many(t->num_elements());
  std::vector<int64_t> out(static_cast<size_t>(t->num_elements()));
  for (int64_t k = 0; k < t->num_elements(); ++k) out[static_cast<size_t>(k)] = t->GetAsInt64(k);
  return std::optional<std::vector<int64_t>>(std::move(out));
}

// ---- attributes ------------------------------------------------------------

const AttributeProto* NodeContext::FindAttr(absl::string_view name) const {
  for (const AttributeProto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

bool NodeContext::HasAttr(absl::string_view name) const { return FindAttr(name) != nullptr; }

absl::StatusOr<const AttributeProto*> NodeContext::TypedAttr(absl::string_view name,
                                                             int want) const {
  const AttributeProto* a = FindAttr(name);
  if (a == nullptr) return a;
  const int got = EffectiveType(*a);
  if (got != want) {
    return Invalid(absl::StrCat("attribute '", name, "' must be ", AttrTypeName(want), ", got ",
                                AttrTypeName(got)));
  }
  return a;
}

absl::StatusOr<int64_t> NodeContext::AttrInt(absl::string_view name, int64_t def) const {
  KILN_ASSIGN_OR_RETURN(const AttributeProto* a, TypedAttr(name, AttributeProto::INT));
  return a ? a->i() : def;
}

absl::StatusOr<double> NodeContext::AttrFloat(absl::string_view name, double def) const {
  KILN_ASSIGN_OR_RETURN(const AttributeProto* a, TypedAttr(name, AttributeProto::FLOAT));
  return a ? static_cast<double>(a->f()) : def;
}

absl::StatusOr<std::string> NodeContext::AttrString(absl::string_view name,
                                                    absl::string_view def) const {
  KILN_ASSIGN_OR_RETURN(const AttributeProto* a, TypedAttr(name, AttributeProto::STRING));
  return a ? a->s() : std::string(def);
}

absl::StatusOr<std::vector<int64_t>> NodeContext::AttrInts(absl::string_view name,
                                                           std::vector<int64_t> def) const {
  KILN_ASSIGN_OR_RETURN(const AttributeProto* a, TypedAttr(name, AttributeProto::INTS));
  if (a == nullptr) return def;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

absl::StatusOr<std::vector<double>> NodeContext::AttrFloats(absl::string_view name,
                                                            std::vector<double> def) const {
  KILN_ASSIGN_OR_RETURN(const AttributeProto* a, TypedAttr(name, AttributeProto::FLOATS));
  if (a == nullptr) return def;
  return std::vector<double>(a->floats().begin(), a->floats().end());
}

absl::StatusOr<std::vector<std::string>> NodeContext::AttrStrings(
    absl::string_view name, std::vector<std::string> def) const {
  KILN_ASSIGN_OR_RETURN(const AttributeProto* a, TypedAttr(name, AttributeProto::STRINGS));
  if (a == nullptr) return def;
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}

absl::StatusOr<Ref<const HostTensor>> NodeContext::AttrTensor(absl::string_view name) const {
  KILN_ASSIGN_OR_RETURN(const AttributeProto* a, TypedAttr(name, AttributeProto::TENSOR));
  if (a == nullptr) return Invalid(absl::StrCat("required attribute '", name, "' is missing"));
  absl::StatusOr<Ref<const HostTensor>> t = TensorFromProto(a->t(), state_->tensor_options);
  if (!t.ok()) {
    return absl::Status(t.status().code(),
                        absl::StrCat(where_, ": attribute '", name, "': ", t.status().message()));
  }
  return t;
}

absl::StatusOr<const AttributeProto*> NodeContext::RequiredAttr(absl::string_view name) const {
  const AttributeProto* a = FindAttr(name);
  if (a == nullptr) return Invalid(absl::StrCat("required attribute '", name, "' is missing"));
  return a;
}

// ---- building --------------------------------------------------------------

absl::StatusOr<Expr> NodeContext::Call(absl::string_view op_name, std::vector<Expr> args,
                                       Attrs attrs) {
  absl::StatusOr<Op> op = GetOp(op_name);
  if (!op.ok()) {
    return absl::InternalError(absl::StrCat(where_, ": the converter calls graph-IR operator '",
                                            op_name, "': ", op.status().message()));
  }
  for (size_t k = 0; k < args.size(); ++k) {
    if (!args[k]) {
      return absl::InternalError(
          absl::StrCat(where_, ": argument ", k, " of ", op_name, " is a null expression"));
    }
  }
  const auto in_op = [&](const absl::Status& s) {
    const bool names_op = absl::StartsWith(s.message(), op_name);
    return absl::Status(s.code(), absl::StrCat(where_, ": ", names_op ? "" : op_name,
                                               names_op ? "" : ": ", s.message()));
  };
  absl::StatusOr<kiln::Call> call = MakeCall(*op, std::move(args), std::move(attrs));
  if (!call.ok()) return in_op(call.status());
  Expr e = *call;
  absl::Status typed = EnsureTyped(e);
  if (!typed.ok()) return in_op(typed);
  return e;
}

absl::StatusOr<Expr> NodeContext::Const(Ref<const HostTensor> value) {
  if (!value) return absl::InternalError(absl::StrCat(where_, ": a constant with no value"));
  KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(std::move(value)));
  c->set_checked_type(c->tensor_type());
  return Expr(c);
}

absl::StatusOr<Expr> NodeContext::ScalarConst(DataType dtype, double value) {
  if (dtype.is_void() || dtype.lanes() != 1 || dtype.code() == DTypeCode::kOpaqueHandle) {
    return absl::InternalError(
        absl::StrCat(where_, ": a scalar constant of type ", dtype.ToString()));
  }
  Constant c = MakeScalarConstant(dtype, value);
  c->set_checked_type(c->tensor_type());
  return Expr(c);
}

absl::StatusOr<Expr> NodeContext::TupleGet(Expr tuple, int index) {
  if (!tuple) return absl::InternalError(absl::StrCat(where_, ": TupleGet of a null expression"));
  KILN_RETURN_IF_ERROR(WithWhere(EnsureTyped(tuple), where_));
  const auto* tt = tuple->checked_type().as<TupleTypeNode>();
  if (tt == nullptr) {
    return Invalid(absl::StrCat("field ", index, " of a value that is not a tuple (",
                                TypeToString(tuple->checked_type()), ")"));
  }
  if (index < 0 || index >= static_cast<int>(tt->fields.size())) {
    return Invalid(
        absl::StrCat("field ", index, " of a tuple with ", tt->fields.size(), " fields"));
  }
  KILN_ASSIGN_OR_RETURN(TupleGetItem g, MakeTupleGetItem(std::move(tuple), index));
  g->set_checked_type(tt->fields[static_cast<size_t>(index)]);
  return Expr(g);
}

// ---- sequences ----------------------------------------------------------------

absl::StatusOr<SequenceAdt> SequenceRegistry::Get(DataType dtype, int64_t rank) {
  if (rank < 0 || rank > 32) {
    return absl::InvalidArgumentError(absl::StrCat("a sequence of rank-", rank, " tensors"));
  }
  const std::string key = absl::StrCat(dtype.ToString(), "_", rank);
  const std::string name = absl::StrCat("Sequence_", key);
  if (auto it = adts.find(name); it != adts.end()) return it->second;
  SequenceAdt a;
  GlobalTypeVar header = MakeGlobalTypeVar(name);
  a.type = header;
  Shape any(static_cast<size_t>(rank), Dim::Any());
  a.elem = MakeTensorType(std::move(any), dtype);
  KILN_ASSIGN_OR_RETURN(a.cons, MakeConstructor(absl::StrCat("SeqCons_", key), {a.elem, a.type}, header, 0));
  KILN_ASSIGN_OR_RETURN(a.nil, MakeConstructor(absl::StrCat("SeqNil_", key), {}, header, 1));
  KILN_ASSIGN_OR_RETURN(a.data, MakeTypeData(header, {}, {a.cons, a.nil}));
  adts.emplace(name, a);
  return a;
}

std::optional<SequenceAdt> SequenceRegistry::Find(const Type& t) const {
  if (!t) return std::nullopt;
  const TypeNode* n = t.get();
  if (n->kind == TypeKind::kTypeCall) {
    const auto* call = static_cast<const TypeCallNode*>(n);
    if (!call->args.empty() || !call->func) return std::nullopt;
    n = call->func.get();
  }
  if (n->kind != TypeKind::kGlobalTypeVar) return std::nullopt;
  auto it = adts.find(static_cast<const GlobalTypeVarNode*>(n)->name);
  if (it == adts.end()) return std::nullopt;
  return it->second;
}

// The ADT's name when `t` is a global type var (or a call of one without
// arguments), else "".
static std::string AdtName(const Type& t) {
  if (!t) return "";
  const TypeNode* n = t.get();
  if (n->kind == TypeKind::kTypeCall) {
    const auto* call = static_cast<const TypeCallNode*>(n);
    if (!call->args.empty() || !call->func) return "";
    n = call->func.get();
  }
  if (n->kind != TypeKind::kGlobalTypeVar) return "";
  return static_cast<const GlobalTypeVarNode*>(n)->name;
}

absl::StatusOr<OptionalAdt> SequenceRegistry::GetOptional(DataType dtype, int64_t rank,
                                                          bool of_sequence) {
  if (rank < 0 || rank > 32) {
    return absl::InvalidArgumentError(absl::StrCat("an optional of rank-", rank, " tensors"));
  }
  const std::string key =
      absl::StrCat(of_sequence ? "Sequence_" : "", dtype.ToString(), "_", rank);
  const std::string name = absl::StrCat("Optional_", key);
  if (auto it = optionals.find(name); it != optionals.end()) return it->second;
  OptionalAdt a;
  a.of_sequence = of_sequence;
  if (of_sequence) {
    KILN_ASSIGN_OR_RETURN(SequenceAdt s, Get(dtype, rank));
    a.payload = s.type;
    a.elem = s.elem;
  } else {
    a.elem = MakeTensorType(Shape(static_cast<size_t>(rank), Dim::Any()), dtype);
    a.payload = a.elem;
  }
  GlobalTypeVar header = MakeGlobalTypeVar(name);
  a.type = header;
  KILN_ASSIGN_OR_RETURN(a.some, MakeConstructor(absl::StrCat("Some_", key), {a.payload}, header, 0));
  KILN_ASSIGN_OR_RETURN(a.none, MakeConstructor(absl::StrCat("None_", key), {}, header, 1));
  KILN_ASSIGN_OR_RETURN(a.data, MakeTypeData(header, {}, {a.some, a.none}));
  optionals.emplace(name, a);
  return a;
}

std::optional<OptionalAdt> SequenceRegistry::FindOptional(const Type& t) const {
  const std::string name = AdtName(t);
  if (name.empty()) return std::nullopt;
  auto it = optionals.find(name);
  if (it == optionals.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<OptionalAdt> NodeContext::OptionalOf(DataType dtype, int64_t rank, bool of_sequence) {
  if (state_->sequences == nullptr) return ConvertContext::OptionalOf(dtype, rank, of_sequence);
  absl::StatusOr<OptionalAdt> a = state_->sequences->GetOptional(dtype, rank, of_sequence);
  if (!a.ok()) return Invalid(a.status().message());
  return a;
}

std::optional<OptionalAdt> NodeContext::AsOptional(const Type& t) {
  if (state_->sequences == nullptr) return std::nullopt;
  return state_->sequences->FindOptional(t);
}

absl::StatusOr<SequenceAdt> NodeContext::Sequence(DataType dtype, int64_t rank) {
  if (state_->sequences == nullptr) return ConvertContext::Sequence(dtype, rank);
  absl::StatusOr<SequenceAdt> a = state_->sequences->Get(dtype, rank);
  if (!a.ok()) return Invalid(a.status().message());
  return a;
}

std::optional<SequenceAdt> NodeContext::AsSequence(const Type& t) {
  if (state_->sequences == nullptr) return std::nullopt;
  return state_->sequences->Find(t);
}

void NodeContext::MarkRankPending(const Expr& nil) {
  if (state_->sequences != nullptr && nil) state_->sequences->pending_empty.emplace(nil.get(), DataType());
}

bool NodeContext::IsRankPending(const Expr& e) const {
  return state_->sequences != nullptr && e && state_->sequences->pending_empty.contains(e.get());
}

absl::Status NodeContext::Invalid(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(where_, ": ", message));
}

absl::Status NodeContext::Unsupported(absl::string_view message) const {
  return absl::UnimplementedError(absl::StrCat(where_, ": ", message));
}

absl::StatusOr<std::vector<Expr>> NodeContext::ImportSubgraph(const onnx::GraphProto& graph,
                                                              const std::vector<Expr>& inputs,
                                                              std::vector<Capture>* captures) {
  return ImportSubgraphIn(state_, where_, graph, inputs, captures);
}

}  // namespace kiln::onnx_frontend::internal
