// File: c_api/graph_dot.cc
#include "c_api/graph_dot.h"

#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/expr.h"
#include "ir/traversal.h"
#include "ir/type.h"

namespace kiln {
namespace {

// Dot string literal contents: quotes, backslashes and newlines escaped.
std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string TypeLabel(const Expr& e) {
  const Type& t = e->checked_type();
  return t.defined() ? TypeToString(t) : std::string();
}

// The operators called inside a (fused) function, in order.
std::string FunctionLabel(const FunctionNode* fn) {
  std::vector<std::string> ops;
  for (const Expr& n : PostOrder(fn->body, /*enter_functions=*/true)) {
    if (const CallNode* c = n.as<CallNode>()) {
      if (const OpNode* op = c->op.as<OpNode>()) ops.push_back(op->name());
    }
  }
  if (ops.empty()) return "fn";
  return absl::StrCat("fused: ", absl::StrJoin(ops, "\\n"));
}

class DotWriter {
 public:
  std::string Write(const FunctionNode* main) {
    out_ = "digraph kiln {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
           "  edge [fontname=\"Helvetica\", fontsize=8];\n";
    for (const Var& p : main->params) {
      std::string id = NewId();
      ids_[p.get()] = id;
      std::string type = p->type_annotation.defined() ? TypeToString(p->type_annotation)
                                                       : TypeLabel(p);
      absl::StrAppend(&out_, "  ", id, " [shape=ellipse, style=filled, fillcolor=\"#d7ecff\", "
                                       "label=\"", Escape(p->name_hint), "\\n", Escape(type),
                      "\"];\n");
    }
    std::string result = Node(main->body);
    std::vector<std::string> outputs;
    // A tuple result shows one output per field.
    const Expr body = LookThrough(main->body);
    if (const TupleNode* t = body.as<TupleNode>()) {
      for (size_t i = 0; i < t->fields.size(); ++i) {
        Output(Node(t->fields[i]), absl::StrCat("output ", i), TypeLabel(t->fields[i]));
      }
    } else {
      Output(result, "output", TypeLabel(main->body));
    }
    out_ += "}\n";
    return out_;
  }

 private:
  std::string NewId() { return absl::StrCat("n", next_id_++); }

  // Lets are transparent: the picture shows values, not bindings.
  Expr LookThrough(Expr e) {
    while (const LetNode* let = e.as<LetNode>()) {
      let_values_[let->var.get()] = let->value;
      e = let->body;
    }
    if (const VarNode* v = e.as<VarNode>()) {
      auto it = let_values_.find(v);
      if (it != let_values_.end()) return LookThrough(it->second);
    }
    return e;
  }

  void Output(const std::string& from, const std::string& name, const std::string& type) {
    std::string id = NewId();
    absl::StrAppend(&out_, "  ", id, " [shape=octagon, style=filled, fillcolor=\"#dff5d8\", "
                                     "label=\"", Escape(name), "\"];\n");
    Edge(from, id, type);
  }

  void Edge(const std::string& from, const std::string& to, const std::string& type) {
    if (from.empty()) return;
    absl::StrAppend(&out_, "  ", from, " -> ", to, " [label=\"", Escape(type), "\"];\n");
  }

  // The node that produces `e` (created on first use); "" for expressions
  // with no picture (a bare function value, an operator).
  std::string Node(const Expr& raw) {
    Expr e = LookThrough(raw);
    auto found = ids_.find(e.get());
    if (found != ids_.end()) return found->second;
    std::string id;
    if (const CallNode* c = e.as<CallNode>()) {
      std::string label;
      if (const OpNode* op = c->op.as<OpNode>()) {
        label = op->name();
      } else if (const FunctionNode* fn = c->op.as<FunctionNode>()) {
        label = FunctionLabel(fn);
      } else if (const GlobalVarNode* gv = c->op.as<GlobalVarNode>()) {
        label = absl::StrCat("@", gv->name);
      } else {
        label = "call";
      }
      std::vector<std::string> args;
      for (const Expr& a : c->args) args.push_back(Node(a));
      id = NewId();
      absl::StrAppend(&out_, "  ", id, " [shape=box, style=\"rounded,filled\", "
                                       "fillcolor=\"#fff2cc\", label=\"", Escape(label), "\"];\n");
      for (size_t i = 0; i < c->args.size(); ++i) Edge(args[i], id, TypeLabel(c->args[i]));
    } else if (const ConstantNode* k = e.as<ConstantNode>()) {
      id = NewId();
      // The initializer's name when the constant has one (ONNX), else "constant".
      const std::string name = k->name_hint.empty() ? "constant" : Escape(k->name_hint);
      absl::StrAppend(&out_, "  ", id, " [shape=note, style=filled, fillcolor=\"#eeeeee\", "
                                       "label=\"", name, "\\n",
                      Escape(TypeToString(k->tensor_type())), "\"];\n");
    } else if (const TupleNode* t = e.as<TupleNode>()) {
      std::vector<std::string> fields;
      for (const Expr& f : t->fields) fields.push_back(Node(f));
      id = NewId();
      absl::StrAppend(&out_, "  ", id, " [shape=record, label=\"tuple\"];\n");
      for (size_t i = 0; i < t->fields.size(); ++i) Edge(fields[i], id, TypeLabel(t->fields[i]));
    } else if (const TupleGetItemNode* g = e.as<TupleGetItemNode>()) {
      std::string from = Node(g->tuple);
      id = NewId();
      absl::StrAppend(&out_, "  ", id, " [shape=plain, label=\".", g->index, "\"];\n");
      Edge(from, id, TypeLabel(g->tuple));
    } else if (const VarNode* v = e.as<VarNode>()) {
      // A free variable (not a parameter, not let-bound): show it as an input.
      id = NewId();
      absl::StrAppend(&out_, "  ", id, " [shape=ellipse, label=\"", Escape(v->name_hint), "\"];\n");
    } else if (e.as<OpNode>() != nullptr || e.as<FunctionNode>() != nullptr) {
      return "";
    } else {
      id = NewId();
      absl::StrAppend(&out_, "  ", id, " [shape=box, label=\"", ExprKindName(e->kind), "\"];\n");
    }
    ids_[e.get()] = id;
    return id;
  }

  std::string out_;
  int next_id_ = 0;
  std::unordered_map<const ExprNode*, std::string> ids_;
  std::unordered_map<const VarNode*, Expr> let_values_;
};

}  // namespace

absl::StatusOr<std::string> ModuleToDot(const Module& module) {
  absl::StatusOr<Function> main = module.Lookup("main");
  if (!main.ok()) {
    return absl::InvalidArgumentError("the model has no function 'main' to draw");
  }
  return DotWriter().Write(main->get());
}

}  // namespace kiln
