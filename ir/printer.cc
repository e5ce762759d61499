// The .kir printer. For each function (or printed expression):
//   1. post-order all nodes with an explicit stack (children before users);
//   2. walking users before operands, give each node the scope that is the
//      lowest common ancestor of the scopes of its uses (an edge into a function
//      body, if branch, match clause or let body enters that child scope);
//   3. print each scope's bindings in post-order, with an explicit work stack,
//      so neither analysis nor output recurses on the C++ stack.
#include "ir/printer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "ir/scope_tree.h"
#include "ir/traversal.h"

namespace kiln {
namespace {

// ---- Scalars ---------------------------------------------------------------

std::string ShortestFloat(float v) {
  char buf[64];
  for (int prec = 1; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

std::string ShortestDouble(double v) {
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

// The inline text of a rank-0 constant, or nullopt when it must go to the
// metadata table (float16/bfloat16, non-finite floats, vector dtypes).
std::optional<std::string> ScalarText(const HostTensor& t) {
  if (t.ndim() != 0 || t.dtype().lanes() != 1) return std::nullopt;
  const DataType dt = t.dtype();
  const void* p = t.raw_data();
  switch (dt.code()) {
    case DTypeCode::kFloat: {
      if (dt.bits() == 32) {
        float v;
        std::memcpy(&v, p, 4);
        if (!std::isfinite(v)) return std::nullopt;
        return ShortestFloat(v) + "f";
      }
      if (dt.bits() == 64) {
        double v;
        std::memcpy(&v, p, 8);
        if (!std::isfinite(v)) return std::nullopt;
        return ShortestDouble(v) + "f64";
      }
      return std::nullopt;
    }
    case DTypeCode::kBool: return *static_cast<const uint8_t*>(p) ? "true" : "false";
    case DTypeCode::kInt: {
      int64_t v = 0;
      switch (dt.bits()) {
        case 8: v = *static_cast<const int8_t*>(p); break;
        case 16: v = *static_cast<const int16_t*>(p); break;
        case 32: v = *static_cast<const int32_t*>(p); break;
        case 64: v = *static_cast<const int64_t*>(p); break;
        default: return std::nullopt;
      }
      return dt.bits() == 32 ? absl::StrCat(v) : absl::StrCat(v, "i", dt.bits());
    }
    case DTypeCode::kUInt: {
      uint64_t v = 0;
      switch (dt.bits()) {
        case 8: v = *static_cast<const uint8_t*>(p); break;
        case 16: v = *static_cast<const uint16_t*>(p); break;
        case 32: v = *static_cast<const uint32_t*>(p); break;
        case 64: v = *static_cast<const uint64_t*>(p); break;
        default: return std::nullopt;
      }
      return absl::StrCat(v, "u", dt.bits());
    }
    default: return std::nullopt;
  }
}

bool IsAtom(const ExprNode* e) {
  switch (e->kind) {
    case ExprKind::kVar:
    case ExprKind::kGlobalVar:
    case ExprKind::kOp:
    case ExprKind::kConstructor: return true;
    case ExprKind::kConstant:
      return ScalarText(*static_cast<const ConstantNode*>(e)->data).has_value();
    default: return false;
  }
}

// ---- Metadata --------------------------------------------------------------

class MetaTable {
 public:
  int Index(const ConstantNode* c) {
    auto [it, inserted] = index_.emplace(c, static_cast<int>(list_.size()));
    if (inserted) list_.push_back(c);
    return it->second;
  }
  void Print(const PrintOptions& opts, std::string* out) const {
    if (list_.empty()) return;
    if (!opts.emit_metadata) {
      absl::StrAppend(out, "\n// metadata omitted (emit_metadata=false): ", list_.size(),
                      " constant(s) referenced as meta[Constant][i] are not stored here\n");
      return;
    }
    absl::StrAppend(out, "\n#[metadata]\n");
    for (size_t i = 0; i < list_.size(); ++i) {
      const HostTensor& t = *list_[i]->data;
      absl::StrAppend(out, "meta[Constant][", i, "] = ",
                      TypeToString(MakeTensorType(ShapeFromInts(t.shape()), t.dtype())), " b64\"",
                      absl::Base64Escape(absl::string_view(static_cast<const char*>(t.raw_data()),
                                                           t.nbytes())),
                      "\";\n");
    }
  }

 private:
  std::vector<const ConstantNode*> list_;
  absl::flat_hash_map<const ConstantNode*, int> index_;
};


// ---- One function body (or one printed expression) --------------------------

class BodyPrinter {
 public:
  BodyPrinter(const PrintOptions& opts, MetaTable* meta) : opts_(opts), meta_(meta) {}

  // Prints a top-level `def`.
  void PrintDef(const std::string& name, const Function& f, std::string* out) {
    out_ = out;
    absl::StrAppend(out_, "def @", name);
    Analyze(f->body);
    absl::StrAppend(out_, FunctionHeader(f.get()), " {\n");
    Emit({Item::kBlock, 0, 1, ""});
    absl::StrAppend(out_, "}\n");
  }

  // Prints an expression as block contents at indentation 0.
  void PrintTop(const Expr& e, std::string* out) {
    out_ = out;
    Analyze(e);
    Emit({Item::kBlock, 0, 0, ""});
  }

 private:
  struct NodeInfo {
    const ExprNode* node;
    int uses = 0;
    int scope = -1;
    int first_child_scope = -1;  // the scopes this node opens, consecutive
    bool inline_use = false;     // single use as a scope result or let value
    int name = -1;               // %N once printed
  };
  struct Scope {
    const ExprNode* result = nullptr;
    std::vector<int> bindings;  // node ids in post-order
  };
  struct Item {
    enum Kind { kStr, kBlock, kResult, kBinding, kLet } kind;
    int id = 0;  // scope (kBlock), node (kBinding, kLet)
    int indent = 0;
    std::string s;
  };

  int IdOf(const ExprNode* e) const {
    auto it = ids_.find(e);
    return it == ids_.end() ? -1 : it->second;
  }

  // Steps 1 and 2: post-order, use counts, scopes, bindings.
  void Analyze(const Expr& root) {
    // 1. Post-order over non-atom nodes.
    if (!IsAtom(root.get())) {
      std::vector<std::pair<const ExprNode*, bool>> stack = {{root.get(), false}};
      absl::flat_hash_set<const ExprNode*> seen;
      while (!stack.empty()) {
        auto [n, expanded] = stack.back();
        stack.pop_back();
        if (expanded) {
          ids_.emplace(n, static_cast<int>(nodes_.size()));
          nodes_.push_back({n});
          continue;
        }
        if (!seen.insert(n).second) continue;
        stack.push_back({n, true});
        std::vector<const ExprNode*> kids;
        ForEachChild(n, [&](const Expr& c) {
          if (!IsAtom(c.get()) && !seen.contains(c.get())) kids.push_back(c.get());
        });
        for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back({*it, false});
      }
    }
    // Use counts.
    for (NodeInfo& ni : nodes_) {
      ForEachChild(ni.node, [&](const Expr& c) {
        int id = IdOf(c.get());
        if (id >= 0) nodes_[id].uses++;
      });
    }
    scopes_.clear();
    scopes_.push_back({root.get(), {}});
    tree_.Add(-1);
    int root_id = IdOf(root.get());
    if (root_id >= 0) {
      nodes_[root_id].uses++;
      nodes_[root_id].scope = 0;
      nodes_[root_id].inline_use = nodes_[root_id].uses == 1;
    }
    // 2. Users before operands.
    auto use = [&](const Expr& c, int scope, bool inline_candidate) {
      int id = IdOf(c.get());
      if (id < 0) return;
      NodeInfo& ci = nodes_[id];
      ci.scope = ci.scope < 0 ? scope : tree_.Lca(ci.scope, scope);
      if (inline_candidate && ci.uses == 1) ci.inline_use = true;
    };
    auto open = [&](int parent, const ExprNode* result) {
      int s = tree_.Add(parent);
      scopes_.push_back({result, {}});
      return s;
    };
    for (int i = static_cast<int>(nodes_.size()) - 1; i >= 0; --i) {
      const ExprNode* n = nodes_[i].node;
      const int s = nodes_[i].scope;
      switch (n->kind) {
        case ExprKind::kFunction: {
          const auto* f = static_cast<const FunctionNode*>(n);
          int b = open(s, f->body.get());
          nodes_[i].first_child_scope = b;
          use(f->body, b, true);
          break;
        }
        case ExprKind::kIf: {
          const auto* f = static_cast<const IfNode*>(n);
          use(f->cond, s, false);
          int t = open(s, f->true_branch.get());
          int e = open(s, f->false_branch.get());
          nodes_[i].first_child_scope = t;
          use(f->true_branch, t, true);
          use(f->false_branch, e, true);
          break;
        }
        case ExprKind::kMatch: {
          const auto* m = static_cast<const MatchNode*>(n);
          use(m->data, s, false);
          for (size_t k = 0; k < m->clauses.size(); ++k) {
            int c = open(s, m->clauses[k].rhs.get());
            if (k == 0) nodes_[i].first_child_scope = c;
            use(m->clauses[k].rhs, c, true);
          }
          break;
        }
        case ExprKind::kLet: {
          const auto* l = static_cast<const LetNode*>(n);
          use(l->value, s, true);
          int b = open(s, l->body.get());
          nodes_[i].first_child_scope = b;
          use(l->body, b, true);
          break;
        }
        default:
          ForEachChild(n, [&](const Expr& c) { use(c, s, false); });
      }
    }
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (!nodes_[i].inline_use) scopes_[nodes_[i].scope].bindings.push_back(static_cast<int>(i));
  }

  std::string Indent(int n) const { return std::string(2 * static_cast<size_t>(std::min(n, 40)), ' '); }

  std::string VarName(const VarNode* v) {
    auto it = var_names_.find(v);
    if (it != var_names_.end()) return it->second;
    std::string base;
    for (char c : v->name_hint)
      base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    bool digits = true;
    for (char c : base) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (digits) base = "v" + base;
    std::string name = base;
    if (used_names_.contains(name)) {
      int& k = next_suffix_[base];
      do {
        name = absl::StrCat(base, "_", ++k);
      } while (used_names_.contains(name));
    }
    used_names_.insert(name);
    var_names_.emplace(v, name);
    return name;
  }

  std::string VarDecl(const Var& v) {
    std::string s = "%" + VarName(v.get());
    if (v->type_annotation) absl::StrAppend(&s, ": ", TypeToString(v->type_annotation));
    return s;
  }

  // The text of an operand: an atom, or the name of a bound node.
  std::string Ref(const Expr& e) {
    const ExprNode* n = e.get();
    switch (n->kind) {
      case ExprKind::kVar: return "%" + VarName(static_cast<const VarNode*>(n));
      case ExprKind::kGlobalVar: return "@" + static_cast<const GlobalVarNode*>(n)->name;
      case ExprKind::kOp: return static_cast<const OpNode*>(n)->name();
      case ExprKind::kConstructor: return static_cast<const ConstructorNode*>(n)->name;
      case ExprKind::kConstant:
        if (auto s = ScalarText(*static_cast<const ConstantNode*>(n)->data)) return *s;
        break;
      default: break;
    }
    int id = IdOf(n);
    if (id >= 0 && nodes_[id].name >= 0) return absl::StrCat("%", nodes_[id].name);
    return "<unprinted>";  // unreachable for a well-formed analysis
  }

  std::string TypeComment(const ExprNode* e) const {
    if (!opts_.show_types || !e->checked_type()) return "";
    return absl::StrCat(" /* ty=", TypeToString(e->checked_type()), " */");
  }

  std::string FunctionHeader(const FunctionNode* f) {
    std::string s;
    if (!f->type_params.empty()) {
      s += "<";
      for (size_t i = 0; i < f->type_params.size(); ++i)
        absl::StrAppend(&s, i ? ", " : "", f->type_params[i]->name);
      s += ">";
    }
    s += "(";
    bool first = true;
    for (const Var& p : f->params) {
      absl::StrAppend(&s, first ? "" : ", ", VarDecl(p));
      first = false;
    }
    if (f->attrs) {
      for (const auto& [k, v] : f->attrs->dict) {
        absl::StrAppend(&s, first ? "" : ", ", k, "=", v.ToString());
        first = false;
      }
    }
    s += ")";
    if (f->ret_type) absl::StrAppend(&s, " -> ", TypeToString(f->ret_type));
    return s;
  }

  std::string PatternText(const Pattern& p) {
    // Patterns are shallow in practice; an explicit stack keeps this safe anyway.
    struct Frame {
      const PatternNode* p;
      size_t next = 0;
    };
    std::string s;
    std::vector<Frame> stack = {{p.get()}};
    while (!stack.empty()) {
      Frame& f = stack.back();
      const PatternNode* n = f.p;
      const std::vector<Pattern>* subs = nullptr;
      if (n->kind == PatternKind::kWildcard) {
        s += "_";
        stack.pop_back();
        continue;
      }
      if (n->kind == PatternKind::kVar) {
        s += VarDecl(static_cast<const PatternVarNode*>(n)->var);
        stack.pop_back();
        continue;
      }
      bool is_ctor = n->kind == PatternKind::kConstructor;
      subs = is_ctor ? &static_cast<const PatternConstructorNode*>(n)->patterns
                     : &static_cast<const PatternTupleNode*>(n)->patterns;
      if (f.next == 0) {
        if (is_ctor) {
          s += static_cast<const PatternConstructorNode*>(n)->constructor->name;
          if (subs->empty()) {
            stack.pop_back();
            continue;
          }
        }
        s += "(";
      } else {
        if (f.next == subs->size()) {
          s += (!is_ctor && subs->size() == 1) ? ",)" : ")";
          stack.pop_back();
          continue;
        }
        s += ", ";
      }
      if (f.next == 0 && subs->empty()) {
        s += ")";
        stack.pop_back();
        continue;
      }
      const PatternNode* child = (*subs)[f.next].get();
      ++f.next;
      stack.push_back({child});
    }
    return s;
  }

  // The pieces of a node printed in place (not as a reference).
  void Inline(int id, int indent, std::vector<Item>* pieces) {
    const ExprNode* n = nodes_[id].node;
    auto str = [&](std::string s) { pieces->push_back({Item::kStr, 0, 0, std::move(s)}); };
    auto block = [&](int scope, int ind) { pieces->push_back({Item::kBlock, scope, ind, ""}); };
    switch (n->kind) {
      case ExprKind::kConstant:
        str(absl::StrCat("meta[Constant][", meta_->Index(static_cast<const ConstantNode*>(n)), "]"));
        break;
      case ExprKind::kTuple: {
        const auto* t = static_cast<const TupleNode*>(n);
        std::string s = "(";
        for (size_t i = 0; i < t->fields.size(); ++i)
          absl::StrAppend(&s, i ? ", " : "", Ref(t->fields[i]));
        if (t->fields.size() == 1) s += ",";
        str(s + ")");
        break;
      }
      case ExprKind::kTupleGetItem: {
        const auto* t = static_cast<const TupleGetItemNode*>(n);
        str(absl::StrCat(Ref(t->tuple), ".", t->index));
        break;
      }
      case ExprKind::kCall: {
        const auto* c = static_cast<const CallNode*>(n);
        std::string s = Ref(c->op);
        if (!c->type_args.empty()) {
          s += "<";
          for (size_t i = 0; i < c->type_args.size(); ++i)
            absl::StrAppend(&s, i ? ", " : "", TypeToString(c->type_args[i]));
          s += ">";
        }
        s += "(";
        bool first = true;
        for (const Expr& a : c->args) {
          absl::StrAppend(&s, first ? "" : ", ", Ref(a));
          first = false;
        }
        if (c->attrs) {
          const AttrsNode* defaults = nullptr;
          if (const auto* op = c->op.as<OpNode>()) defaults = op->def->default_attrs.get();
          for (const auto& [k, v] : NonDefaultAttrFields(*c->attrs, defaults)) {
            absl::StrAppend(&s, first ? "" : ", ", k, "=", v.ToString());
            first = false;
          }
        }
        str(s + ")");
        break;
      }
      case ExprKind::kFunction: {
        const auto* f = static_cast<const FunctionNode*>(n);
        str("fn " + FunctionHeader(f) + " {\n");
        block(nodes_[id].first_child_scope, indent + 1);
        str(Indent(indent) + "}");
        break;
      }
      case ExprKind::kIf: {
        const auto* f = static_cast<const IfNode*>(n);
        str("if (" + Ref(f->cond) + ") {\n");
        block(nodes_[id].first_child_scope, indent + 1);
        str(Indent(indent) + "} else {\n");
        block(nodes_[id].first_child_scope + 1, indent + 1);
        str(Indent(indent) + "}");
        break;
      }
      case ExprKind::kMatch: {
        const auto* m = static_cast<const MatchNode*>(n);
        str(absl::StrCat(m->complete ? "match (" : "match? (", Ref(m->data), ") {\n"));
        for (size_t k = 0; k < m->clauses.size(); ++k) {
          str(absl::StrCat(Indent(indent + 1), PatternText(m->clauses[k].lhs), " => {\n"));
          block(nodes_[id].first_child_scope + static_cast<int>(k), indent + 2);
          str(Indent(indent + 1) + "},\n");
        }
        str(Indent(indent) + "}");
        break;
      }
      case ExprKind::kLet:
        str("{\n");
        pieces->push_back({Item::kLet, id, indent + 1, ""});
        str(Indent(indent) + "}");
        break;
      case ExprKind::kRefCreate:
        str("ref(" + Ref(static_cast<const RefCreateNode*>(n)->value) + ")");
        break;
      case ExprKind::kRefRead:
        str("ref_read(" + Ref(static_cast<const RefReadNode*>(n)->ref) + ")");
        break;
      case ExprKind::kRefWrite: {
        const auto* w = static_cast<const RefWriteNode*>(n);
        str("ref_write(" + Ref(w->ref) + ", " + Ref(w->value) + ")");
        break;
      }
      default: str(Ref(Expr(const_cast<ExprNode*>(n)))); break;
    }
  }

  // Operand text, or the node printed in place when its only use is here.
  void OperandOrInline(const ExprNode* e, int indent, std::vector<Item>* pieces) {
    int id = IdOf(e);
    if (id >= 0 && nodes_[id].inline_use) {
      Inline(id, indent, pieces);
    } else {
      pieces->push_back({Item::kStr, 0, 0, Ref(Expr(const_cast<ExprNode*>(e)))});
    }
  }

  // Step 3: the output, driven by an explicit stack of items.
  void Emit(Item first) {
    std::vector<Item> stack;
    stack.push_back(std::move(first));
    std::vector<Item> pieces;
    auto push_pieces = [&] {
      for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) stack.push_back(std::move(*it));
      pieces.clear();
    };
    while (!stack.empty()) {
      Item item = std::move(stack.back());
      stack.pop_back();
      switch (item.kind) {
        case Item::kStr: out_->append(item.s); break;
        case Item::kBinding: {
          NodeInfo& ni = nodes_[item.id];
          ni.name = next_name_++;
          pieces.push_back({Item::kStr, 0, 0, absl::StrCat(Indent(item.indent), "%", ni.name, " = ")});
          Inline(item.id, item.indent, &pieces);
          pieces.push_back({Item::kStr, 0, 0, ";" + TypeComment(ni.node) + "\n"});
          push_pieces();
          break;
        }
        case Item::kBlock: {
          const Scope& sc = scopes_[item.id];
          stack.push_back({Item::kResult, item.id, item.indent, ""});
          for (auto it = sc.bindings.rbegin(); it != sc.bindings.rend(); ++it)
            stack.push_back({Item::kBinding, *it, item.indent, ""});
          break;
        }
        case Item::kResult: {
          const ExprNode* r = scopes_[item.id].result;
          int rid = IdOf(r);
          if (rid >= 0 && nodes_[rid].inline_use && r->kind == ExprKind::kLet) {
            pieces.push_back({Item::kLet, rid, item.indent, ""});
          } else {
            pieces.push_back({Item::kStr, 0, 0, Indent(item.indent)});
            OperandOrInline(r, item.indent, &pieces);
            pieces.push_back({Item::kStr, 0, 0, TypeComment(r) + "\n"});
          }
          push_pieces();
          break;
        }
        case Item::kLet: {
          const auto* l = static_cast<const LetNode*>(nodes_[item.id].node);
          pieces.push_back({Item::kStr, 0, 0,
                            absl::StrCat(Indent(item.indent), "let ", VarDecl(l->var), " = ")});
          OperandOrInline(l->value.get(), item.indent, &pieces);
          pieces.push_back({Item::kStr, 0, 0, ";" + TypeComment(l->value.get()) + "\n"});
          pieces.push_back({Item::kBlock, nodes_[item.id].first_child_scope, item.indent, ""});
          push_pieces();
          break;
        }
      }
    }
  }

  const PrintOptions& opts_;
  MetaTable* meta_;
  std::string* out_ = nullptr;
  std::vector<NodeInfo> nodes_;
  absl::flat_hash_map<const ExprNode*, int> ids_;
  std::vector<Scope> scopes_;
  ScopeTree tree_;
  int next_name_ = 0;
  absl::flat_hash_map<const VarNode*, std::string> var_names_;
  absl::flat_hash_set<std::string> used_names_;
  absl::flat_hash_map<std::string, int> next_suffix_;
};

void PrintTypeDef(const TypeData& td, std::string* out) {
  absl::StrAppend(out, "type ", td->header->name);
  if (!td->type_vars.empty()) {
    *out += "[";
    for (size_t i = 0; i < td->type_vars.size(); ++i)
      absl::StrAppend(out, i ? ", " : "", td->type_vars[i]->name);
    *out += "]";
  }
  *out += " {\n";
  for (const Constructor& c : td->constructors) {
    absl::StrAppend(out, "  ", c->name);
    if (!c->inputs.empty()) {
      *out += "(";
      for (size_t i = 0; i < c->inputs.size(); ++i)
        absl::StrAppend(out, i ? ", " : "", TypeToString(c->inputs[i]));
      *out += ")";
    }
    *out += ",\n";
  }
  *out += "}\n";
}

}  // namespace

std::string PrintModule(const Module& m, const PrintOptions& opts) {
  std::string out = "#[version = \"0.1\"]\n";
  MetaTable meta;
  for (const TypeData& td : m.type_defs()) {
    out += "\n";
    PrintTypeDef(td, &out);
  }
  for (const auto& [gv, fn] : m.functions()) {
    out += "\n";
    if (!fn) {
      absl::StrAppend(&out, "// @", gv->name, " is declared but not defined\n");
      continue;
    }
    BodyPrinter(opts, &meta).PrintDef(gv->name, fn, &out);
  }
  meta.Print(opts, &out);
  return out;
}

std::string PrintExpr(const Expr& e, const PrintOptions& opts) {
  if (!e) return "<null>";
  std::string out;
  MetaTable meta;
  BodyPrinter(opts, &meta).PrintTop(e, &out);
  meta.Print(opts, &out);
  return out;
}

}  // namespace kiln
