#include "ir/expr.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/op.h"

namespace kiln {

const char* ExprKindName(ExprKind kind) {
  switch (kind) {
    case ExprKind::kVar: return "Var";
    case ExprKind::kGlobalVar: return "GlobalVar";
    case ExprKind::kConstant: return "Constant";
    case ExprKind::kTuple: return "Tuple";
    case ExprKind::kTupleGetItem: return "TupleGetItem";
    case ExprKind::kCall: return "Call";
    case ExprKind::kFunction: return "Function";
    case ExprKind::kLet: return "Let";
    case ExprKind::kIf: return "If";
    case ExprKind::kOp: return "Op";
    case ExprKind::kConstructor: return "Constructor";
    case ExprKind::kMatch: return "Match";
    case ExprKind::kRefCreate: return "RefCreate";
    case ExprKind::kRefRead: return "RefRead";
    case ExprKind::kRefWrite: return "RefWrite";
  }
  return "?";
}

TensorType ConstantNode::tensor_type() const {
  return MakeTensorType(ShapeFromInts(data->shape()), data->dtype());
}

namespace {

absl::Status NotNull(const Expr& e, const char* what) {
  if (!e) return absl::InvalidArgumentError(absl::StrCat(what, " is null"));
  return absl::OkStatus();
}

absl::Status NotNullList(const std::vector<Expr>& es, const char* what) {
  for (size_t i = 0; i < es.size(); ++i)
    if (!es[i]) return absl::InvalidArgumentError(absl::StrCat(what, " ", i, " is null"));
  return absl::OkStatus();
}

// Dotted identifiers: segments of [A-Za-z_][A-Za-z0-9_]* joined by '.', so
// that every name the IR accepts prints and parses back as the same name.
bool IsIdentifier(const std::string& s) {
  bool segment_start = true;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '.') {
      if (segment_start) return false;
      segment_start = true;
      continue;
    }
    if (segment_start ? !(isalpha(u) || c == '_') : !(isalnum(u) || c == '_')) return false;
    segment_start = false;
  }
  return !segment_start;
}

}  // namespace

Var MakeVar(std::string name_hint, Type type_annotation) {
  return MakeRef<VarNode>(std::move(name_hint), std::move(type_annotation));
}

absl::StatusOr<GlobalVar> MakeGlobalVar(std::string name) {
  if (!IsIdentifier(name))
    return absl::InvalidArgumentError(
        absl::StrCat("global name '", name,
                     "' is not an identifier (dot-separated words of letters, digits and _, "
                     "each starting with a letter or _)"));
  return MakeRef<GlobalVarNode>(std::move(name));
}

absl::StatusOr<Constant> MakeConstant(Ref<const HostTensor> data, std::string name_hint) {
  if (!data) return absl::InvalidArgumentError("constant has no data");
  return MakeRef<ConstantNode>(std::move(data), std::move(name_hint));
}

Constant MakeScalarConstant(DataType dtype, double value) {
  Ref<HostTensor> t = *HostTensor::Create(dtype, {});
  void* p = t->mutable_raw_data();
  switch (dtype.code()) {
    case DTypeCode::kFloat:
      if (dtype.bits() == 32) *static_cast<float*>(p) = static_cast<float>(value);
      else if (dtype.bits() == 64) *static_cast<double*>(p) = value;
      else *static_cast<uint16_t*>(p) = FloatToHalf(static_cast<float>(value));
      break;
    case DTypeCode::kBFloat:
      *static_cast<uint16_t*>(p) = FloatToBFloat16(static_cast<float>(value));
      break;
    case DTypeCode::kBool: *static_cast<uint8_t*>(p) = value != 0; break;
    case DTypeCode::kInt:
    case DTypeCode::kUInt: {
      int64_t v = static_cast<int64_t>(value);
      std::memcpy(p, &v, static_cast<size_t>(dtype.bytes()));  // little-endian truncation
      break;
    }
    default: break;
  }
  return MakeRef<ConstantNode>(Ref<const HostTensor>(std::move(t)));
}

absl::StatusOr<Tuple> MakeTuple(std::vector<Expr> fields) {
  if (auto s = NotNullList(fields, "tuple field"); !s.ok()) return s;
  return MakeRef<TupleNode>(std::move(fields));
}

absl::StatusOr<TupleGetItem> MakeTupleGetItem(Expr tuple, int index) {
  if (auto s = NotNull(tuple, "tuple of TupleGetItem"); !s.ok()) return s;
  if (index < 0)
    return absl::InvalidArgumentError(absl::StrCat("tuple index ", index, " is negative"));
  if (const auto* t = tuple.as<TupleNode>(); t && index >= static_cast<int>(t->fields.size()))
    return absl::InvalidArgumentError(absl::StrCat("tuple index ", index, " out of range for a ",
                                                   t->fields.size(), "-tuple"));
  return MakeRef<TupleGetItemNode>(std::move(tuple), index);
}

absl::StatusOr<Call> MakeCall(Expr op, std::vector<Expr> args, Attrs attrs,
                              std::vector<Type> type_args) {
  if (auto s = NotNull(op, "callee"); !s.ok()) return s;
  if (auto s = NotNullList(args, "call argument"); !s.ok()) return s;
  if (const auto* o = op.as<OpNode>()) {
    const OpDef* def = o->def;
    if (def->num_inputs >= 0 && static_cast<int>(args.size()) != def->num_inputs)
      return absl::InvalidArgumentError(absl::StrCat("operator ", def->name, " takes ",
                                                     def->num_inputs, " argument",
                                                     def->num_inputs == 1 ? "" : "s", ", got ",
                                                     args.size()));
    if (!attrs) {
      attrs = def->default_attrs;
    } else if (!def->default_attrs) {
      return absl::InvalidArgumentError(
          absl::StrCat("operator ", def->name, " takes no attributes, got ", attrs->type_key()));
    } else if (attrs->type_id() != def->default_attrs->type_id()) {
      return absl::InvalidArgumentError(absl::StrCat("operator ", def->name, " takes ",
                                                     def->default_attrs->type_key(), ", got ",
                                                     attrs->type_key()));
    }
  } else if (const auto* c = op.as<ConstructorNode>()) {
    if (args.size() != c->inputs.size())
      return absl::InvalidArgumentError(absl::StrCat("constructor ", c->name, " takes ",
                                                     c->inputs.size(), " arguments, got ",
                                                     args.size()));
  }
  for (size_t i = 0; i < type_args.size(); ++i)
    if (!type_args[i])
      return absl::InvalidArgumentError(absl::StrCat("type argument ", i, " is null"));
  return MakeRef<CallNode>(std::move(op), std::move(args), std::move(attrs), std::move(type_args));
}

absl::StatusOr<Function> MakeFunction(std::vector<Var> params, Expr body, Type ret_type,
                                      std::vector<TypeVar> type_params, DictAttrs attrs) {
  if (auto s = NotNull(body, "function body"); !s.ok()) return s;
  absl::flat_hash_set<const VarNode*> seen;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i]) return absl::InvalidArgumentError(absl::StrCat("parameter ", i, " is null"));
    if (!seen.insert(params[i].get()).second)
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter %", params[i]->name_hint, " appears twice in the parameter list"));
  }
  absl::flat_hash_set<const TypeVarNode*> tseen;
  for (const auto& tp : type_params) {
    if (!tp) return absl::InvalidArgumentError("null type parameter");
    if (!tseen.insert(tp.get()).second)
      return absl::InvalidArgumentError(
          absl::StrCat("type parameter ", tp->name, " appears twice"));
  }
  return MakeRef<FunctionNode>(std::move(params), std::move(body), std::move(ret_type),
                               std::move(type_params), std::move(attrs));
}

absl::StatusOr<Let> MakeLet(Var var, Expr value, Expr body) {
  if (!var) return absl::InvalidArgumentError("let has no variable");
  if (auto s = NotNull(value, "let value"); !s.ok()) return s;
  if (auto s = NotNull(body, "let body"); !s.ok()) return s;
  return MakeRef<LetNode>(std::move(var), std::move(value), std::move(body));
}

absl::StatusOr<If> MakeIf(Expr cond, Expr true_branch, Expr false_branch) {
  if (auto s = NotNull(cond, "if condition"); !s.ok()) return s;
  if (auto s = NotNull(true_branch, "then branch"); !s.ok()) return s;
  if (auto s = NotNull(false_branch, "else branch"); !s.ok()) return s;
  return MakeRef<IfNode>(std::move(cond), std::move(true_branch), std::move(false_branch));
}

absl::StatusOr<Constructor> MakeConstructor(std::string name, std::vector<Type> inputs,
                                            GlobalTypeVar belong_to, int32_t tag) {
  if (!IsIdentifier(name))
    return absl::InvalidArgumentError(absl::StrCat("constructor name '", name, "' is not an identifier"));
  if (!belong_to)
    return absl::InvalidArgumentError(absl::StrCat("constructor ", name, " belongs to no ADT"));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i])
      return absl::InvalidArgumentError(absl::StrCat("constructor ", name, ": input ", i, " is null"));
  if (tag < 0) return absl::InvalidArgumentError("negative constructor tag");
  return MakeRef<ConstructorNode>(std::move(name), std::move(inputs), std::move(belong_to), tag);
}

Pattern MakePatternWildcard() { return MakeRef<PatternWildcardNode>(); }

absl::StatusOr<Pattern> MakePatternVar(Var var) {
  if (!var) return absl::InvalidArgumentError("pattern variable is null");
  return Pattern(MakeRef<PatternVarNode>(std::move(var)));
}

absl::StatusOr<Pattern> MakePatternConstructor(Constructor constructor,
                                               std::vector<Pattern> patterns) {
  if (!constructor) return absl::InvalidArgumentError("pattern constructor is null");
  if (patterns.size() != constructor->inputs.size())
    return absl::InvalidArgumentError(absl::StrCat("pattern ", constructor->name, " has ",
                                                   patterns.size(), " sub-patterns; the constructor takes ",
                                                   constructor->inputs.size()));
  for (const auto& p : patterns)
    if (!p) return absl::InvalidArgumentError("null sub-pattern");
  return Pattern(MakeRef<PatternConstructorNode>(std::move(constructor), std::move(patterns)));
}

absl::StatusOr<Pattern> MakePatternTuple(std::vector<Pattern> patterns) {
  for (const auto& p : patterns)
    if (!p) return absl::InvalidArgumentError("null sub-pattern");
  return Pattern(MakeRef<PatternTupleNode>(std::move(patterns)));
}

std::vector<Var> PatternVars(const Pattern& root) {
  std::vector<Var> out;
  std::vector<const PatternNode*> stack = {root.get()};
  while (!stack.empty()) {
    const PatternNode* p = stack.back();
    stack.pop_back();
    if (p->kind == PatternKind::kVar) {
      out.push_back(static_cast<const PatternVarNode*>(p)->var);
    } else if (p->kind == PatternKind::kConstructor) {
      const auto& ps = static_cast<const PatternConstructorNode*>(p)->patterns;
      for (auto it = ps.rbegin(); it != ps.rend(); ++it) stack.push_back(it->get());
    } else if (p->kind == PatternKind::kTuple) {
      const auto& ps = static_cast<const PatternTupleNode*>(p)->patterns;
      for (auto it = ps.rbegin(); it != ps.rend(); ++it) stack.push_back(it->get());
    }
  }
  return out;
}

absl::StatusOr<Match> MakeMatch(Expr data, std::vector<Clause> clauses, bool complete) {
  if (auto s = NotNull(data, "match data"); !s.ok()) return s;
  for (size_t i = 0; i < clauses.size(); ++i) {
    if (!clauses[i].lhs || !clauses[i].rhs)
      return absl::InvalidArgumentError(absl::StrCat("match clause ", i, " is incomplete"));
    absl::flat_hash_set<const VarNode*> seen;
    for (const Var& v : PatternVars(clauses[i].lhs))
      if (!seen.insert(v.get()).second)
        return absl::InvalidArgumentError(
            absl::StrCat("match clause ", i, " binds %", v->name_hint, " twice"));
  }
  return MakeRef<MatchNode>(std::move(data), std::move(clauses), complete);
}

absl::StatusOr<Expr> MakeRefCreate(Expr value) {
  if (auto s = NotNull(value, "ref value"); !s.ok()) return s;
  return Expr(MakeRef<RefCreateNode>(std::move(value)));
}
absl::StatusOr<Expr> MakeRefRead(Expr ref) {
  if (auto s = NotNull(ref, "ref"); !s.ok()) return s;
  return Expr(MakeRef<RefReadNode>(std::move(ref)));
}
absl::StatusOr<Expr> MakeRefWrite(Expr ref, Expr value) {
  if (auto s = NotNull(ref, "ref"); !s.ok()) return s;
  if (auto s = NotNull(value, "ref value"); !s.ok()) return s;
  return Expr(MakeRef<RefWriteNode>(std::move(ref), std::move(value)));
}

}  // namespace kiln
