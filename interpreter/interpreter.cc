// The evaluation machine: an explicit work stack of tasks over expression
// nodes and a stack of call frames (each with its memo of node values), so no
// C++ recursion follows the program's depth or its recursion.
#include "interpreter/interpreter.h"

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "interpreter/kernels.h"
#include "ir/op.h"
#include "ir/status_macros.h"
#include "ir/traversal.h"
#include "types/infer_type.h"

namespace kiln::interp {
namespace {

class Machine {
 public:
  Machine(const Module* module, const EvalOptions& opts) : module_(module), opts_(opts) {}

  // Evaluates `body` in a new frame whose variables are bound by `binds`.
  absl::StatusOr<Value> Run(const Expr& body, const std::vector<std::pair<Var, Value>>& binds,
                            std::string frame_name) {
    auto f = std::make_unique<Frame>();
    f->name = std::move(frame_name);
    for (const auto& [var, value] : binds) f->memo[var.get()] = value;
    frames_.push_back(std::move(f));
    tasks_.push_back({Step::kVisit, body.get(), nullptr});
    KILN_RETURN_IF_ERROR(Loop());
    return frames_.back()->memo.at(body.get());
  }

 private:
  enum class Step : uint8_t {
    kVisit, kCombine, kLetBind, kLetDone, kIfBranch, kIfDone, kMatchBody, kMatchDone, kReturn,
  };
  struct Task {
    Step step;
    const ExprNode* e;
    const ExprNode* aux;  // the body whose value a k*Done / kReturn task forwards
  };
  struct Frame {
    absl::flat_hash_map<const ExprNode*, Value> memo;
    std::string name;  // for messages: "@main", "closure %f"
  };

  absl::Status Error(const ExprNode* e, absl::string_view msg) const {
    std::string where = frames_.empty() ? "" : frames_.back()->name;
    if (e != nullptr && e->span.known())
      absl::StrAppend(&where, where.empty() ? "" : " ", "at ", e->span.line, ":", e->span.column);
    return absl::InvalidArgumentError(
        where.empty() ? std::string(msg) : absl::StrCat("in ", where, ": ", msg));
  }

  const Value& Get(const Expr& e) { return frames_.back()->memo.at(e.get()); }
  void Set(const ExprNode* e, Value v) { frames_.back()->memo[e] = std::move(v); }
  void Visit(const Expr& e) { tasks_.push_back({Step::kVisit, e.get(), nullptr}); }

  absl::Status Loop();
  absl::Status VisitNode(const ExprNode* e);
  absl::Status Combine(const ExprNode* e);
  absl::Status CallValue(const CallNode* call, const Value& callee, std::vector<Value> args);
  absl::StatusOr<Value> GlobalClosure(const GlobalVarNode* gv);
  Value MakeClosure(const FunctionNode* fn, Var rec_var, std::string name);
  bool MatchPattern(const Pattern& p, const Value& v);

  const Module* module_;
  EvalOptions opts_;
  std::vector<std::unique_ptr<Frame>> frames_;
  std::vector<Task> tasks_;
  absl::flat_hash_map<const FunctionNode*, std::vector<Var>> free_vars_;
  absl::flat_hash_map<const GlobalVarNode*, Value> globals_;
};

absl::Status Machine::Loop() {
  const size_t base = tasks_.size() - 1;
  while (tasks_.size() > base) {
    const Task t = tasks_.back();
    tasks_.pop_back();
    Frame& f = *frames_.back();
    switch (t.step) {
      case Step::kVisit:
        if (!f.memo.contains(t.e)) KILN_RETURN_IF_ERROR(VisitNode(t.e));
        break;
      case Step::kCombine: KILN_RETURN_IF_ERROR(Combine(t.e)); break;
      case Step::kLetBind: {
        const auto* let = static_cast<const LetNode*>(t.e);
        Value v = Get(let->value);
        if (v.is_closure() && let->value->kind == ExprKind::kFunction && !v.closure_rec_var())
          v = MakeClosure(static_cast<const FunctionNode*>(let->value.get()), let->var,
                          "%" + let->var->name_hint);
        Set(let->var.get(), std::move(v));
        tasks_.push_back({Step::kLetDone, t.e, let->body.get()});
        Visit(let->body);
        break;
      }
      case Step::kIfBranch: {
        const auto* n = static_cast<const IfNode*>(t.e);
        const Value& c = Get(n->cond);
        if (!c.is_tensor() || c.tensor()->num_elements() != 1)
          return Error(t.e, absl::StrCat("if: the condition must be a one-element tensor; got ",
                                         ValueToString(c)));
        const HostTensor& ct = *c.tensor();
        const bool taken = ct.dtype().is_float() ? ct.GetAsDouble(0) != 0 : ct.GetAsInt64(0) != 0;
        const Expr& branch = taken ? n->true_branch : n->false_branch;
        tasks_.push_back({Step::kIfDone, t.e, branch.get()});
        Visit(branch);
        break;
      }
      case Step::kMatchBody: {
        const auto* n = static_cast<const MatchNode*>(t.e);
        const Value data = Get(n->data);
        const Clause* chosen = nullptr;
        for (const Clause& c : n->clauses) {
          if (MatchPattern(c.lhs, data)) {
            chosen = &c;
            break;
          }
        }
        if (chosen == nullptr) {
          std::string what = data.is_adt() ? absl::StrCat("constructor ", data.constructor()->name)
                                           : ValueToString(data);
          return Error(t.e, absl::StrCat("match: no clause matches the value (", what, "): ",
                                         ValueToString(data)));
        }
        tasks_.push_back({Step::kMatchDone, t.e, chosen->rhs.get()});
        Visit(chosen->rhs);
        break;
      }
      case Step::kLetDone:
      case Step::kIfDone:
      case Step::kMatchDone: {
        Value v = f.memo.at(t.aux);  // copy first: inserting may rehash
        f.memo[t.e] = std::move(v);
        break;
      }
      case Step::kReturn: {
        Value result = f.memo.at(t.aux);
        frames_.pop_back();
        Set(t.e, std::move(result));
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Machine::VisitNode(const ExprNode* e) {
  switch (e->kind) {
    case ExprKind::kVar:
      return Error(e, absl::StrCat("unbound variable %", static_cast<const VarNode*>(e)->name_hint));
    case ExprKind::kGlobalVar: {
      KILN_ASSIGN_OR_RETURN(Value v, GlobalClosure(static_cast<const GlobalVarNode*>(e)));
      Set(e, std::move(v));
      return absl::OkStatus();
    }
    case ExprKind::kConstant:
      Set(e, Value::Tensor(static_cast<const ConstantNode*>(e)->data));
      return absl::OkStatus();
    case ExprKind::kOp:
      return Error(e, absl::StrCat("operator ", static_cast<const OpNode*>(e)->name(),
                                   " used as a value; the interpreter only calls operators"));
    case ExprKind::kConstructor:
      return Error(e, absl::StrCat("constructor ", static_cast<const ConstructorNode*>(e)->name,
                                   " used as a value; call it (e.g. ",
                                   static_cast<const ConstructorNode*>(e)->name, "())"));
    case ExprKind::kFunction:
      Set(e, MakeClosure(static_cast<const FunctionNode*>(e), nullptr, "fn"));
      return absl::OkStatus();
    case ExprKind::kLet:
      tasks_.push_back({Step::kLetBind, e, nullptr});
      Visit(static_cast<const LetNode*>(e)->value);
      return absl::OkStatus();
    case ExprKind::kIf:
      tasks_.push_back({Step::kIfBranch, e, nullptr});
      Visit(static_cast<const IfNode*>(e)->cond);
      return absl::OkStatus();
    case ExprKind::kMatch:
      tasks_.push_back({Step::kMatchBody, e, nullptr});
      Visit(static_cast<const MatchNode*>(e)->data);
      return absl::OkStatus();
    default: {
      tasks_.push_back({Step::kCombine, e, nullptr});
      std::vector<Expr> kids;
      ForEachChild(e, [&](const Expr& c) {
        if (c->kind != ExprKind::kOp && c->kind != ExprKind::kConstructor) kids.push_back(c);
      });
      for (size_t i = kids.size(); i-- > 0;) Visit(kids[i]);  // left to right
      return absl::OkStatus();
    }
  }
}

absl::Status Machine::Combine(const ExprNode* e) {
  switch (e->kind) {
    case ExprKind::kTuple: {
      std::vector<Value> fields;
      for (const Expr& c : static_cast<const TupleNode*>(e)->fields) fields.push_back(Get(c));
      Set(e, Value::Tuple(std::move(fields)));
      return absl::OkStatus();
    }
    case ExprKind::kTupleGetItem: {
      const auto* n = static_cast<const TupleGetItemNode*>(e);
      const Value& t = Get(n->tuple);
      if (!t.is_tuple() || n->index < 0 || static_cast<size_t>(n->index) >= t.fields().size())
        return Error(e, absl::StrCat("cannot take field ", n->index, " of ", ValueToString(t)));
      Set(e, t.fields()[static_cast<size_t>(n->index)]);
      return absl::OkStatus();
    }
    case ExprKind::kRefCreate:
      Set(e, Value::NewRef(Get(static_cast<const RefCreateNode*>(e)->value)));
      return absl::OkStatus();
    case ExprKind::kRefRead: {
      const Value& r = Get(static_cast<const RefReadNode*>(e)->ref);
      if (!r.is_ref()) return Error(e, absl::StrCat("ref_read of a non-reference: ", ValueToString(r)));
      Set(e, r.ref_get());
      return absl::OkStatus();
    }
    case ExprKind::kRefWrite: {
      const auto* n = static_cast<const RefWriteNode*>(e);
      const Value& r = Get(n->ref);
      if (!r.is_ref()) return Error(e, absl::StrCat("ref_write to a non-reference: ", ValueToString(r)));
      r.ref_set(Get(n->value));
      Set(e, Value::Tuple({}));
      return absl::OkStatus();
    }
    case ExprKind::kCall: {
      const auto* call = static_cast<const CallNode*>(e);
      std::vector<Value> args;
      args.reserve(call->args.size());
      for (const Expr& a : call->args) args.push_back(Get(a));
      if (const auto* op = call->op.as<OpNode>()) {
        const KernelFn* fn = FindKernel(op->def);
        if (fn == nullptr)
          return Error(e, absl::StrCat(op->name(), ": the interpreter has no kernel for this operator"));
        if (op->def->num_inputs >= 0 && static_cast<int>(args.size()) != op->def->num_inputs)
          return Error(e, absl::StrCat(op->name(), ": takes ", op->def->num_inputs,
                                       " arguments, got ", args.size()));
        KernelCtx ctx{*op->def, call->attrs.get(), args};
        absl::StatusOr<Value> out = (*fn)(ctx);
        if (!out.ok()) return Error(e, out.status().message());
        Set(e, *std::move(out));
        return absl::OkStatus();
      }
      if (const auto* ctor = call->op.as<ConstructorNode>()) {
        if (args.size() != ctor->inputs.size())
          return Error(e, absl::StrCat("constructor ", ctor->name, " takes ", ctor->inputs.size(),
                                       " fields, got ", args.size()));
        Set(e, Value::Adt(call->op.cast<ConstructorNode>(), std::move(args)));
        return absl::OkStatus();
      }
      return CallValue(call, Get(call->op), std::move(args));
    }
    default: return Error(e, "internal error: unexpected node in Combine");
  }
}

absl::Status Machine::CallValue(const CallNode* call, const Value& callee, std::vector<Value> args) {
  if (!callee.is_closure())
    return Error(call, absl::StrCat("cannot call a non-function value: ", ValueToString(callee)));
  const Function& fn = callee.closure_function();
  const std::string name = callee.closure_name().empty() ? "fn" : callee.closure_name();
  if (fn->params.size() != args.size())
    return Error(call, absl::StrCat(name, " takes ", fn->params.size(), " arguments, got ",
                                    args.size()));
  if (static_cast<int64_t>(frames_.size()) >= opts_.max_call_depth)
    return Error(call, absl::StrCat("call depth limit (", opts_.max_call_depth,
                                    " nested calls) exceeded calling ", name,
                                    ": unbounded recursion?"));
  auto f = std::make_unique<Frame>();
  f->name = name;
  for (const auto& [var, value] : callee.closure_captured()) f->memo[var.get()] = value;
  if (callee.closure_rec_var()) f->memo[callee.closure_rec_var().get()] = callee;
  for (size_t i = 0; i < args.size(); ++i) f->memo[fn->params[i].get()] = std::move(args[i]);
  frames_.push_back(std::move(f));
  tasks_.push_back({Step::kReturn, call, fn->body.get()});
  Visit(fn->body);
  return absl::OkStatus();
}

absl::StatusOr<Value> Machine::GlobalClosure(const GlobalVarNode* gv) {
  auto it = globals_.find(gv);
  if (it != globals_.end()) return it->second;
  if (module_ == nullptr)
    return Error(gv, absl::StrCat("global @", gv->name, " used without a module"));
  absl::StatusOr<Function> fn = module_->Lookup(gv->name);
  if (!fn.ok() || !*fn) return Error(gv, absl::StrCat("undefined global function @", gv->name));
  Value v = Value::Closure(*fn, {}, nullptr, "@" + gv->name);
  globals_[gv] = v;
  return v;
}

Value Machine::MakeClosure(const FunctionNode* fn, Var rec_var, std::string name) {
  auto it = free_vars_.find(fn);
  if (it == free_vars_.end()) {
    Function f(const_cast<FunctionNode*>(fn));
    it = free_vars_.emplace(fn, FreeVars(f)).first;
  }
  std::vector<std::pair<Var, Value>> captured;
  const Frame& frame = *frames_.back();
  for (const Var& v : it->second) {
    auto m = frame.memo.find(v.get());
    // A variable not bound yet is the let-bound closure itself (rec_var) or
    // an error reported when the body uses it.
    if (m != frame.memo.end()) captured.emplace_back(v, m->second);
  }
  return Value::Closure(Function(const_cast<FunctionNode*>(fn)), std::move(captured),
                        std::move(rec_var), std::move(name));
}

// Patterns nest only as deep as the text allows (the parser limits nesting).
bool Machine::MatchPattern(const Pattern& p, const Value& v) {
  switch (p->kind) {
    case PatternKind::kWildcard: return true;
    case PatternKind::kVar:
      Set(static_cast<const PatternVarNode*>(p.get())->var.get(), v);
      return true;
    case PatternKind::kConstructor: {
      const auto* pc = static_cast<const PatternConstructorNode*>(p.get());
      if (!v.is_adt()) return false;
      const ConstructorNode* c = v.constructor().get();
      if (c != pc->constructor.get() && (c->tag != pc->constructor->tag || c->name != pc->constructor->name))
        return false;
      if (pc->patterns.size() != v.fields().size()) return false;
      for (size_t i = 0; i < pc->patterns.size(); ++i)
        if (!MatchPattern(pc->patterns[i], v.fields()[i])) return false;
      return true;
    }
    case PatternKind::kTuple: {
      const auto* pt = static_cast<const PatternTupleNode*>(p.get());
      if (!v.is_tuple() || pt->patterns.size() != v.fields().size()) return false;
      for (size_t i = 0; i < pt->patterns.size(); ++i)
        if (!MatchPattern(pt->patterns[i], v.fields()[i])) return false;
      return true;
    }
  }
  return false;
}

// Checks a run-time argument against a parameter's declared type.
absl::Status CheckArg(absl::string_view fname, size_t i, const Var& param, const Type& type,
                      const Value& v) {
  const auto* tt = type ? type.as<TensorTypeNode>() : nullptr;
  if (tt == nullptr) return absl::OkStatus();
  auto bad = [&](const std::string& got) {
    return absl::InvalidArgumentError(absl::StrCat("RunFunction @", fname, ": argument ", i, " (%",
                                                   param->name_hint, ") must be ",
                                                   TypeToString(type), "; got ", got));
  };
  if (!v.is_tensor()) return bad(v.defined() ? ValueKindName(v.kind()) : "no value");
  const HostTensor& t = *v.tensor();
  const std::string got = absl::StrCat("Tensor[", ShapeToString(ShapeFromInts(t.shape())), ", ",
                                       t.dtype().ToString(), "]");
  if (t.dtype() != tt->dtype || t.ndim() != tt->ndim()) return bad(got);
  for (size_t d = 0; d < tt->shape.size(); ++d)
    if (tt->shape[d].is_static() && tt->shape[d].value() != t.shape()[d]) return bad(got);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Value> Evaluate(const Expr& expr, const Module* module,
                               const std::vector<std::pair<Var, Value>>& bindings,
                               const EvalOptions& options) {
  RegisterCoreKernels();
  if (!expr) return absl::InvalidArgumentError("Evaluate: null expression");
  if (options.type_check) {
    absl::StatusOr<Type> t = types::InferExprType(expr, module);
    if (!t.ok()) return t.status();
  }
  Machine m(module, options);
  return m.Run(expr, bindings, "");
}

absl::StatusOr<Value> RunFunction(const Module& module, absl::string_view name,
                                  std::vector<Value> args, const EvalOptions& options) {
  RegisterCoreKernels();
  Module typed = module;
  if (options.type_check) {
    KILN_ASSIGN_OR_RETURN(typed, types::InferType(module));
  }
  absl::StatusOr<Function> fn = typed.Lookup(name);
  if (!fn.ok() || !*fn)
    return absl::NotFoundError(absl::StrCat("RunFunction: the module has no function @", name));
  const Function& f = *fn;
  if (args.size() != f->params.size())
    return absl::InvalidArgumentError(absl::StrCat("RunFunction @", name, ": takes ",
                                                   f->params.size(), " arguments, got ",
                                                   args.size()));
  std::vector<std::pair<Var, Value>> binds;
  for (size_t i = 0; i < args.size(); ++i) {
    const Var& p = f->params[i];
    Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
    KILN_RETURN_IF_ERROR(CheckArg(name, i, p, t, args[i]));
    binds.emplace_back(p, std::move(args[i]));
  }
  Machine m(&typed, options);
  return m.Run(f->body, binds, absl::StrCat("@", name));
}

}  // namespace kiln::interp
