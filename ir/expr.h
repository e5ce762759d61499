// File: ir/expr.h
//
// The expressions of the graph IR (Relay's, one for one):
//   Var %x, GlobalVar @f, Constant, Tuple (a, b), TupleGetItem t.0,
//   Call op(args, attrs), Function fn (%x) { ... } (closures, recursion, type
//   params), Let, If, Op (a registered operator), Constructor (of an ADT),
//   Match (patterns: wildcard, var, constructor, tuple; nested),
//   RefCreate / RefRead / RefWrite.
//
// Nodes are immutable and shared; a program is a DAG. Build nodes with the
// Make* factories below: they check their inputs (no null children, arity of
// operator calls, attribute struct type, distinct parameters, ...) and return
// an error instead of an ill-formed node.
//
// `checked_type()` is filled in by type inference (types/); it is a cache on
// an otherwise immutable node, as in Relay.
//
//   KILN_ASSIGN_OR_RETURN(Op relu, GetOp("nn.relu"));
//   Var x = MakeVar("x", MakeTensorType({1, 16}, DataType::Float(32)));
//   KILN_ASSIGN_OR_RETURN(Expr y, MakeCall(relu, {x}));
//   KILN_ASSIGN_OR_RETURN(Function f, MakeFunction({x}, y));
#ifndef KILN_IR_EXPR_H_
#define KILN_IR_EXPR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attrs.h"
#include "ir/object.h"
#include "ir/tensor.h"
#include "ir/type.h"

namespace kiln {

// Where a node came from in a source text (1-based; 0 means unknown).
struct Span {
  int32_t line = 0;
  int32_t column = 0;
  bool known() const { return line > 0; }
};

enum class ExprKind : uint8_t {
  kVar,
  kGlobalVar,
  kConstant,
  kTuple,
  kTupleGetItem,
  kCall,
  kFunction,
  kLet,
  kIf,
  kOp,
  kConstructor,
  kMatch,
  kRefCreate,
  kRefRead,
  kRefWrite,
};
const char* ExprKindName(ExprKind kind);

class ExprNode : public Object {
 public:
  const ExprKind kind;
  Span span;
  static bool IsInstance(const Object*) { return true; }

  const Type& checked_type() const { return checked_type_; }
  void set_checked_type(Type t) const { checked_type_ = std::move(t); }

 protected:
  explicit ExprNode(ExprKind k) : kind(k) {}

 private:
  mutable Type checked_type_;
};
using Expr = Ref<const ExprNode>;

#define KILN_EXPR_NODE(Kind)                          \
  static constexpr ExprKind kKind = ExprKind::Kind;   \
  static bool IsInstance(const ExprNode* n) { return n->kind == kKind; }

class VarNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kVar)
  VarNode(std::string name_hint, Type type_annotation)
      : ExprNode(kKind), name_hint(std::move(name_hint)), type_annotation(std::move(type_annotation)) {}
  const std::string name_hint;
  const Type type_annotation;  // may be null
};
using Var = Ref<const VarNode>;

class GlobalVarNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kGlobalVar)
  explicit GlobalVarNode(std::string name) : ExprNode(kKind), name(std::move(name)) {}
  const std::string name;
};
using GlobalVar = Ref<const GlobalVarNode>;

class ConstantNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kConstant)
  explicit ConstantNode(Ref<const HostTensor> data, std::string name_hint = "")
      : ExprNode(kKind), data(std::move(data)), name_hint(std::move(name_hint)) {}
  const Ref<const HostTensor> data;
  // Where the value came from, for people: the ONNX initializer's name
  // ("conv1.weight"), or "" (a folded or literal constant). Like a Var's
  // name hint it takes no part in structural equality or hashing, and the
  // text printer does not write it (a reparsed module's constants have
  // none). Passes that keep a constant keep its name; one they compute
  // (FoldConstant, weight layout changes) has none.
  const std::string name_hint;
  TensorType tensor_type() const;
};
using Constant = Ref<const ConstantNode>;

class TupleNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kTuple)
  explicit TupleNode(std::vector<Expr> fields) : ExprNode(kKind), fields(std::move(fields)) {}
  const std::vector<Expr> fields;
};
using Tuple = Ref<const TupleNode>;

class TupleGetItemNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kTupleGetItem)
  TupleGetItemNode(Expr tuple, int index) : ExprNode(kKind), tuple(std::move(tuple)), index(index) {}
  const Expr tuple;
  const int index;
};
using TupleGetItem = Ref<const TupleGetItemNode>;

class CallNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kCall)
  CallNode(Expr op, std::vector<Expr> args, Attrs attrs, std::vector<Type> type_args)
      : ExprNode(kKind),
        op(std::move(op)),
        args(std::move(args)),
        attrs(std::move(attrs)),
        type_args(std::move(type_args)) {}
  const Expr op;  // an Op, GlobalVar, Constructor, Function or any callee expression
  const std::vector<Expr> args;
  const Attrs attrs;  // the op's attribute struct, or null
  const std::vector<Type> type_args;
};
using Call = Ref<const CallNode>;

class FunctionNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kFunction)
  FunctionNode(std::vector<Var> params, Expr body, Type ret_type, std::vector<TypeVar> type_params,
               DictAttrs attrs)
      : ExprNode(kKind),
        params(std::move(params)),
        body(std::move(body)),
        ret_type(std::move(ret_type)),
        type_params(std::move(type_params)),
        attrs(std::move(attrs)) {}
  const std::vector<Var> params;
  const Expr body;
  const Type ret_type;  // may be null
  const std::vector<TypeVar> type_params;
  const DictAttrs attrs;  // may be null
  // A function attribute, or null.
  const AttrValue* GetAttr(absl::string_view key) const {
    return attrs ? attrs->Find(key) : nullptr;
  }
};
using Function = Ref<const FunctionNode>;

class LetNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kLet)
  LetNode(Var var, Expr value, Expr body)
      : ExprNode(kKind), var(std::move(var)), value(std::move(value)), body(std::move(body)) {}
  const Var var;
  const Expr value;
  const Expr body;
};
using Let = Ref<const LetNode>;

class IfNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kIf)
  IfNode(Expr cond, Expr true_branch, Expr false_branch)
      : ExprNode(kKind),
        cond(std::move(cond)),
        true_branch(std::move(true_branch)),
        false_branch(std::move(false_branch)) {}
  const Expr cond;
  const Expr true_branch;
  const Expr false_branch;
};
using If = Ref<const IfNode>;

struct OpDef;  // ir/op.h
class OpNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kOp)
  explicit OpNode(const OpDef* def) : ExprNode(kKind), def(def) {}
  const OpDef* const def;  // owned by the registry, lives forever
  const std::string& name() const;
};
using Op = Ref<const OpNode>;

// A constructor of an ADT: `Cons` in `type List[A] { Cons(A, List[A]), Nil }`.
class ConstructorNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kConstructor)
  ConstructorNode(std::string name, std::vector<Type> inputs, GlobalTypeVar belong_to, int32_t tag)
      : ExprNode(kKind),
        name(std::move(name)),
        inputs(std::move(inputs)),
        belong_to(std::move(belong_to)),
        tag(tag) {}
  const std::string name;
  const std::vector<Type> inputs;
  const GlobalTypeVar belong_to;
  const int32_t tag;  // index within the ADT's constructor list
};

// ---- Patterns -------------------------------------------------------------

enum class PatternKind : uint8_t { kWildcard, kVar, kConstructor, kTuple };

class PatternNode : public Object {
 public:
  const PatternKind kind;
  static bool IsInstance(const Object*) { return true; }

 protected:
  explicit PatternNode(PatternKind k) : kind(k) {}
};
using Pattern = Ref<const PatternNode>;

#define KILN_PATTERN_NODE(Kind)                           \
  static constexpr PatternKind kKind = PatternKind::Kind; \
  static bool IsInstance(const PatternNode* n) { return n->kind == kKind; }

class PatternWildcardNode : public PatternNode {
 public:
  KILN_PATTERN_NODE(kWildcard)
  PatternWildcardNode() : PatternNode(kKind) {}
};

class PatternVarNode : public PatternNode {
 public:
  KILN_PATTERN_NODE(kVar)
  explicit PatternVarNode(Var var) : PatternNode(kKind), var(std::move(var)) {}
  const Var var;
};

class PatternConstructorNode : public PatternNode {
 public:
  KILN_PATTERN_NODE(kConstructor)
  PatternConstructorNode(Constructor constructor, std::vector<Pattern> patterns)
      : PatternNode(kKind), constructor(std::move(constructor)), patterns(std::move(patterns)) {}
  const Constructor constructor;
  const std::vector<Pattern> patterns;
};

class PatternTupleNode : public PatternNode {
 public:
  KILN_PATTERN_NODE(kTuple)
  explicit PatternTupleNode(std::vector<Pattern> patterns)
      : PatternNode(kKind), patterns(std::move(patterns)) {}
  const std::vector<Pattern> patterns;
};

struct Clause {
  Pattern lhs;
  Expr rhs;
};

class MatchNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kMatch)
  MatchNode(Expr data, std::vector<Clause> clauses, bool complete)
      : ExprNode(kKind), data(std::move(data)), clauses(std::move(clauses)), complete(complete) {}
  const Expr data;
  const std::vector<Clause> clauses;
  const bool complete;  // `match` (must be exhaustive) vs `match?` (may fall through)
};
using Match = Ref<const MatchNode>;

class RefCreateNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kRefCreate)
  explicit RefCreateNode(Expr value) : ExprNode(kKind), value(std::move(value)) {}
  const Expr value;
};
class RefReadNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kRefRead)
  explicit RefReadNode(Expr ref) : ExprNode(kKind), ref(std::move(ref)) {}
  const Expr ref;
};
class RefWriteNode : public ExprNode {
 public:
  KILN_EXPR_NODE(kRefWrite)
  RefWriteNode(Expr ref, Expr value) : ExprNode(kKind), ref(std::move(ref)), value(std::move(value)) {}
  const Expr ref;
  const Expr value;
};

// ---- Factories ------------------------------------------------------------

Var MakeVar(std::string name_hint, Type type_annotation = nullptr);
absl::StatusOr<GlobalVar> MakeGlobalVar(std::string name);
absl::StatusOr<Constant> MakeConstant(Ref<const HostTensor> data, std::string name_hint = "");
// A rank-0 constant.
Constant MakeScalarConstant(DataType dtype, double value);
absl::StatusOr<Tuple> MakeTuple(std::vector<Expr> fields);
absl::StatusOr<TupleGetItem> MakeTupleGetItem(Expr tuple, int index);
// For an Op callee: checks the argument count and that `attrs` is the op's
// attribute struct (null attrs become the op's defaults).
absl::StatusOr<Call> MakeCall(Expr op, std::vector<Expr> args, Attrs attrs = nullptr,
                              std::vector<Type> type_args = {});
absl::StatusOr<Function> MakeFunction(std::vector<Var> params, Expr body, Type ret_type = nullptr,
                                      std::vector<TypeVar> type_params = {},
                                      DictAttrs attrs = nullptr);
absl::StatusOr<Let> MakeLet(Var var, Expr value, Expr body);
absl::StatusOr<If> MakeIf(Expr cond, Expr true_branch, Expr false_branch);
absl::StatusOr<Constructor> MakeConstructor(std::string name, std::vector<Type> inputs,
                                            GlobalTypeVar belong_to, int32_t tag);
Pattern MakePatternWildcard();
absl::StatusOr<Pattern> MakePatternVar(Var var);
// Checks the number of sub-patterns against the constructor's inputs.
absl::StatusOr<Pattern> MakePatternConstructor(Constructor constructor,
                                               std::vector<Pattern> patterns);
absl::StatusOr<Pattern> MakePatternTuple(std::vector<Pattern> patterns);
// Checks that no variable is bound twice within one pattern.
absl::StatusOr<Match> MakeMatch(Expr data, std::vector<Clause> clauses, bool complete = true);
absl::StatusOr<Expr> MakeRefCreate(Expr value);
absl::StatusOr<Expr> MakeRefRead(Expr ref);
absl::StatusOr<Expr> MakeRefWrite(Expr ref, Expr value);

// Sets the source position of a node that was just built and is not yet
// shared (the parser's use); nodes are otherwise immutable.
template <typename T>
Ref<const T> WithSpan(Ref<const T> e, Span span) {
  const_cast<T*>(e.get())->span = span;
  return e;
}

// The variables a pattern binds, left to right.
std::vector<Var> PatternVars(const Pattern& p);

}  // namespace kiln

#endif  // KILN_IR_EXPR_H_
