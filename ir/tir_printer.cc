// File: ir/tir_printer.cc
#include "ir/tir_printer.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace kiln::tir {

const char* ExprKindName(ExprKind k) {
  switch (k) {
    case ExprKind::kIntImm: return "IntImm";
    case ExprKind::kFloatImm: return "FloatImm";
    case ExprKind::kStringImm: return "StringImm";
    case ExprKind::kVar: return "Var";
    case ExprKind::kAdd: return "Add";
    case ExprKind::kSub: return "Sub";
    case ExprKind::kMul: return "Mul";
    case ExprKind::kDiv: return "Div";
    case ExprKind::kMod: return "Mod";
    case ExprKind::kFloorDiv: return "FloorDiv";
    case ExprKind::kFloorMod: return "FloorMod";
    case ExprKind::kMin: return "Min";
    case ExprKind::kMax: return "Max";
    case ExprKind::kEQ: return "EQ";
    case ExprKind::kNE: return "NE";
    case ExprKind::kLT: return "LT";
    case ExprKind::kLE: return "LE";
    case ExprKind::kGT: return "GT";
    case ExprKind::kGE: return "GE";
    case ExprKind::kAnd: return "And";
    case ExprKind::kOr: return "Or";
    case ExprKind::kNot: return "Not";
    case ExprKind::kSelect: return "Select";
    case ExprKind::kCast: return "Cast";
    case ExprKind::kCall: return "Call";
    case ExprKind::kLoad: return "Load";
    case ExprKind::kRamp: return "Ramp";
    case ExprKind::kBroadcast: return "Broadcast";
    case ExprKind::kLet: return "Let";
    case ExprKind::kReduce: return "Reduce";
    case ExprKind::kProducerLoad: return "ProducerLoad";
  }
  return "?";
}

const char* ReduceKindName(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kProd: return "prod";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kMin: return "min";
    case ReduceKind::kArgMax: return "argmax";
    case ReduceKind::kArgMin: return "argmin";
  }
  return "?";
}

const char* IterKindName(IterKind k) {
  switch (k) {
    case IterKind::kDataPar: return "data_par";
    case IterKind::kReduce: return "reduce";
    case IterKind::kOrdered: return "ordered";
    case IterKind::kOpaque: return "opaque";
    case IterKind::kThread: return "thread";
  }
  return "?";
}

const char* CallEffectName(CallEffect e) {
  switch (e) {
    case CallEffect::kPure: return "pure";
    case CallEffect::kReadState: return "read_state";
    case CallEffect::kOpaque: return "opaque";
  }
  return "?";
}

namespace {

bool IsMathIntrinsic(absl::string_view n) {
  static const auto* const kNames = new std::unordered_set<std::string>{
      "exp",  "log",   "sqrt",  "rsqrt", "tanh",  "sigmoid", "erf",      "pow",
      "fabs", "floor", "ceil",  "round", "trunc", "sin",     "cos",      "isnan",
      "fmod", "exp2",  "log2",  "log1p", "expm1", "copysign", "tan",     "asin",
      "acos", "atan",  "sinh",  "cosh",  "asinh", "acosh",    "atanh",   "ldexp"};
  return kNames->count(std::string(n)) > 0;
}

// Names with their own expression syntax; a call with such a name is quoted.
bool IsExprKeyword(absl::string_view n) {
  return n == "min" || n == "max" || n == "select" || n == "floordiv" || n == "floormod" ||
         n == "ramp" || n == "broadcast" || n == "evaluate" || n == "iter_var";
}

bool IsDTypeName(absl::string_view n) { return n == "handle" || DataType::Parse(n).ok(); }

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A valid, non-reserved identifier derived from a name hint.
std::string Sanitize(absl::string_view hint) {
  std::string s;
  for (size_t i = 0; i < hint.size(); ++i) {
    char c = hint[i];
    if (IsIdentChar(c)) {
      s += c;
    } else if (c == '.' && !s.empty() && i + 1 < hint.size() && IsIdentChar(hint[i + 1])) {
      s += c;
    } else {
      s += '_';
    }
  }
  if (s.empty()) return "v";
  if (!IsIdentStart(s[0])) s = "_" + s;
  return s;
}

std::string FormatFloat(double v, DataType t) {
  std::string digits;
  if (std::isnan(v)) {
    digits = "nan";
  } else if (std::isinf(v)) {
    digits = v > 0 ? "inf" : "-inf";
  } else {
    // The shortest form that reads back as the same double.
    for (int p = 1; p <= 17; ++p) {
      digits = absl::StrFormat("%.*g", p, v);
      if (std::strtod(digits.c_str(), nullptr) == v) break;
    }
  }
  if (t == DataType::Float(32)) return digits + "f";
  return absl::StrCat(digits, "_", t.ToString());
}

std::string Quote(absl::string_view s) { return absl::StrCat("\"", absl::CEscape(s), "\""); }

// A map key or attribute name: bare when it is an identifier, else quoted.
std::string KeyText(absl::string_view k) {
  return IsTextIdentifier(k) && !IsReservedWord(k) ? std::string(k) : Quote(k);
}

const char* InfixOp(ExprKind k) {
  switch (k) {
    case ExprKind::kAdd: return " + ";
    case ExprKind::kSub: return " - ";
    case ExprKind::kMul: return " * ";
    case ExprKind::kDiv: return " / ";
    case ExprKind::kMod: return " % ";
    case ExprKind::kEQ: return " == ";
    case ExprKind::kNE: return " != ";
    case ExprKind::kLT: return " < ";
    case ExprKind::kLE: return " <= ";
    case ExprKind::kGT: return " > ";
    case ExprKind::kGE: return " >= ";
    case ExprKind::kAnd: return " && ";
    case ExprKind::kOr: return " || ";
    default: return nullptr;
  }
}

class Printer {
 public:
  // ---- Names ----------------------------------------------------------------

  // A fresh name for `v`, valid until Unbind(mark) with a mark taken before.
  std::string Bind(const ExprNode* v) {
    std::string name = Fresh(v->name);
    auto it = names_.find(v);
    bound_.push_back({v, name, it != names_.end(), it != names_.end() ? it->second : ""});
    names_[v] = name;
    ++in_scope_[name];
    return name;
  }
  // Bind, with the variable's type when it is not int64.
  std::string BindDecl(const ExprNode* v) {
    std::string name = Bind(v);
    if (v->dtype != kIndexType) absl::StrAppend(&name, ": ", v->dtype.ToString());
    return name;
  }
  size_t Mark() const { return bound_.size(); }
  void Unbind(size_t mark) {
    while (bound_.size() > mark) {
      Bound b = std::move(bound_.back());
      bound_.pop_back();
      if (--in_scope_[b.name] == 0) in_scope_.erase(b.name);
      if (b.had_prev) {
        names_[b.v] = b.prev;
      } else {
        names_.erase(b.v);
      }
    }
  }
  // The name of a reference. A variable bound nowhere gets a name of its own
  // for the rest of the text.
  std::string Name(const ExprNode* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string name = Fresh(v->name);
    names_[v] = name;
    ++in_scope_[name];  // never released
    return name;
  }
  bool IsNamed(const ExprNode* v) const { return names_.count(v) > 0; }

  std::string BufName(const Buffer& b) { return b ? Name(b->data.get()) : "<null buffer>"; }

  // ---- Expressions ------------------------------------------------------------

  std::string Exprs(const std::vector<PrimExpr>& v) {
    std::vector<std::string> a;
    a.reserve(v.size());
    for (const PrimExpr& x : v) a.push_back(Expr(x));
    return absl::StrJoin(a, ", ");
  }

  std::string CallName(const ExprNode& n) {
    std::string name = (IsTextIdentifier(n.name) && !IsReservedWord(n.name) &&
                        !IsExprKeyword(n.name) && !IsDTypeName(n.name))
                           ? n.name
                           : Quote(n.name);
    DataType inferred;
    if (!InferCallType(n.name, n.args, &inferred) || inferred != n.dtype) {
      absl::StrAppend(&name, ":", n.dtype.ToString());
    }
    if (n.effect != DefaultCallEffect(n.name)) absl::StrAppend(&name, ":", CallEffectName(n.effect));
    return name;
  }

  std::string Expr(const PrimExpr& e) {
    if (!e) return "<null>";
    const ExprNode& n = *e;
    switch (n.kind) {
      case ExprKind::kIntImm:
        if (n.dtype == DataType::Bool()) return n.int_value ? "true" : "false";
        if (n.dtype == kIndexType) return absl::StrCat(n.int_value);
        return absl::StrCat(n.int_value, "_", n.dtype.ToString());
      case ExprKind::kFloatImm: return FormatFloat(n.float_value, n.dtype);
      case ExprKind::kStringImm: return Quote(n.name);
      case ExprKind::kVar: return Name(&n);
      case ExprKind::kMin: return absl::StrCat("min(", Exprs(n.args), ")");
      case ExprKind::kMax: return absl::StrCat("max(", Exprs(n.args), ")");
      case ExprKind::kFloorDiv: return absl::StrCat("floordiv(", Exprs(n.args), ")");
      case ExprKind::kFloorMod: return absl::StrCat("floormod(", Exprs(n.args), ")");
      case ExprKind::kNot: return absl::StrCat("!", Expr(n.args[0]));
      case ExprKind::kSelect: return absl::StrCat("select(", Exprs(n.args), ")");
      case ExprKind::kCast: return absl::StrCat(n.dtype.ToString(), "(", Expr(n.args[0]), ")");
      case ExprKind::kCall: return absl::StrCat(CallName(n), "(", Exprs(n.args), ")");
      case ExprKind::kLoad: return absl::StrCat(BufName(n.buffer), "[", Exprs(n.args), "]");
      case ExprKind::kProducerLoad:
        return absl::StrCat("tensor@", reinterpret_cast<uintptr_t>(n.producer.get()) % 100000,
                            "(", Exprs(n.args), ")");
      case ExprKind::kRamp:
        return absl::StrCat("ramp(", Expr(n.args[0]), ", ", Expr(n.args[1]), ", ",
                            n.dtype.lanes(), ")");
      case ExprKind::kBroadcast:
        return absl::StrCat("broadcast(", Expr(n.args[0]), ", ", n.dtype.lanes(), ")");
      case ExprKind::kLet: {
        std::string value = Expr(n.args[1]);
        size_t mark = Mark();
        std::string var = BindDecl(n.args[0].get());
        std::string body = Expr(n.args[2]);
        Unbind(mark);
        return absl::StrCat("(let ", var, " = ", value, " in ", body, ")");
      }
      case ExprKind::kReduce: {
        std::vector<std::string> ax;
        for (const IterVar& iv : n.axes) {
          ax.push_back(absl::StrCat(Name(iv->var.get()), " in [", Expr(iv->dom.min), ", ",
                                    Expr(iv->dom.min), " + ", Expr(iv->dom.extent), ")"));
        }
        std::string extra;
        if (n.args.size() > 2) extra = absl::StrCat(", index=", Expr(n.args[2]));
        if (n.int_value) extra += ", select_last";
        std::string cond;
        if (!IsConstValue(n.args[1], 1)) cond = absl::StrCat(", where ", Expr(n.args[1]));
        return absl::StrCat(ReduceKindName(n.reduce_kind), "(", Expr(n.args[0]), extra, ", axis=[",
                            absl::StrJoin(ax, ", "), "]", cond, ")");
      }
      default: break;
    }
    const char* op = InfixOp(n.kind);
    if (op != nullptr && n.args.size() == 2) {
      return absl::StrCat("(", Expr(n.args[0]), op, Expr(n.args[1]), ")");
    }
    return absl::StrCat("<", ExprKindName(n.kind), ">");
  }

  // ---- Statements -------------------------------------------------------------

  void Line(std::string* out, int indent, absl::string_view text) {
    out->append(static_cast<size_t>(indent) * 2, ' ');
    out->append(text.data(), text.size());
    out->push_back('\n');
  }

  void Block(std::string* out, int indent, absl::string_view head, const Stmt& body) {
    Line(out, indent, absl::StrCat(head, " {"));
    StmtText(out, indent + 1, body, /*tail=*/true);
    Line(out, indent, "}");
  }

  // `name: dtype[dims] options`; the first occurrence of a shape variable
  // binds it (with its type when it is not int64).
  std::string Dims(const std::vector<PrimExpr>& dims) {
    std::vector<std::string> d;
    for (const PrimExpr& x : dims) {
      if (x && x->kind == ExprKind::kVar && !IsNamed(x.get())) {
        d.push_back(BindDecl(x.get()));
      } else {
        d.push_back(Expr(x));
      }
    }
    return absl::StrCat("[", absl::StrJoin(d, ", "), "]");
  }

  std::string BufferDecl(const Buffer& b, bool with_scope) {
    std::string name = Bind(b->data.get());
    std::string s = absl::StrCat(name, ": ", b->dtype.ToString(), Dims(b->shape));
    if (!b->strides.empty()) absl::StrAppend(&s, " strides=", Dims(b->strides));
    if (b->elem_offset) absl::StrAppend(&s, " offset=", Expr(b->elem_offset));
    if (b->data_alignment != 64) absl::StrAppend(&s, " align=", b->data_alignment);
    if (with_scope && b->scope != "global") absl::StrAppend(&s, " scope=", Quote(b->scope));
    return s;
  }

  std::string IterVarText(const IterVarNode* iv) {
    std::string var = IsNamed(iv->var.get()) ? Name(iv->var.get()) : BindDecl(iv->var.get());
    std::string dom = iv->dom.defined()
                          ? absl::StrCat("[", Expr(iv->dom.min), ", ", Expr(iv->dom.extent), "]")
                          : "none";
    return absl::StrCat("iter_var(", var, ", ", dom, ", ", IterKindName(iv->iter_kind), ", ",
                        Quote(iv->thread_tag), ")");
  }

  static bool IsScoped(const Stmt& s) {
    return s && (s->kind == StmtKind::kLetStmt || s->kind == StmtKind::kAllocate ||
                 s->kind == StmtKind::kAssert);
  }

  // The first line of a let / allocate / assert; binds its variable or
  // buffer (the caller unbinds).
  std::string ScopedHead(const StmtNode& n) {
    switch (n.kind) {
      case StmtKind::kLetStmt: {
        std::string value = Expr(n.a);
        return absl::StrCat("let ", BindDecl(n.var.get()), " = ", value);
      }
      case StmtKind::kAllocate: {
        std::string scope = n.tag.empty() ? n.buffer->scope : n.tag;
        return absl::StrCat("allocate ", BufferDecl(n.buffer, /*with_scope=*/false), " ",
                            KeyText(scope));
      }
      default: return absl::StrCat("assert(", Expr(n.a), ", ", Quote(n.tag), ")");
    }
  }

  // `let`, `allocate` and `assert` scope over the rest of their block: when
  // one ends its block (`tail`) its body follows at the same indentation;
  // otherwise it is braced. Chains of them print in a loop, not recursively.
  void StmtText(std::string* out, int indent, const Stmt& s, bool tail) {
    size_t mark = Mark();
    Stmt cur = s;
    while (tail && IsScoped(cur)) {
      Line(out, indent, ScopedHead(*cur));
      cur = cur->body0();
    }
    StmtOne(out, indent, cur, tail);
    Unbind(mark);
  }

  void StmtOne(std::string* out, int indent, const Stmt& s, bool tail) {
    if (!s) {
      Line(out, indent, "<null stmt>");
      return;
    }
    const StmtNode& n = *s;
    switch (n.kind) {
      case StmtKind::kFor: {
        std::string min = Expr(n.a);
        std::string extent = Expr(n.b);
        size_t mark = Mark();
        std::string head =
            absl::StrCat(n.for_kind == ForKind::kSerial ? "for" : ForKindName(n.for_kind), " (",
                         BindDecl(n.var.get()), ", ", min, ", ", extent, ")");
        if (!n.tag.empty()) absl::StrAppend(&head, " ", Quote(n.tag));
        for (const auto& [k, v] : n.annotations) absl::StrAppend(&head, " ", KeyText(k), "=", Quote(v));
        Block(out, indent, head, n.body0());
        Unbind(mark);
        return;
      }
      case StmtKind::kLetStmt:
      case StmtKind::kAllocate:
      case StmtKind::kAssert:
        Block(out, indent, ScopedHead(n), n.body0());  // not last in its block: braced
        return;
      case StmtKind::kAttr: {
        size_t mark = Mark();
        std::string subject;
        if (n.node) {
          if (const auto* iv = dynamic_cast<const IterVarNode*>(n.node.get())) {
            subject = IterVarText(iv) + " ";
          } else if (const auto* b = dynamic_cast<const BufferNode*>(n.node.get())) {
            subject = Name(b->data.get()) + " ";
          } else if (const auto* v = dynamic_cast<const ExprNode*>(n.node.get());
                     v != nullptr && v->kind == ExprKind::kVar) {
            subject = Name(v) + " ";
          }
        }
        Block(out, indent, absl::StrCat("attr ", subject, Quote(n.tag), " = ", Expr(n.a)),
              n.body0());
        Unbind(mark);
        return;
      }
      case StmtKind::kIfThenElse:
        Line(out, indent, absl::StrCat("if (", Expr(n.a), ") {"));
        StmtText(out, indent + 1, n.body[0], true);
        if (n.body.size() > 1) {
          Line(out, indent, "} else {");
          StmtText(out, indent + 1, n.body[1], true);
        }
        Line(out, indent, "}");
        return;
      case StmtKind::kSeq:
        for (size_t i = 0; i < n.body.size(); ++i) {
          StmtText(out, indent, n.body[i], tail && i + 1 == n.body.size());
        }
        return;
      case StmtKind::kStore:
        Line(out, indent, absl::StrCat(BufName(n.buffer), "[", Exprs(n.indices), "] = ", Expr(n.a)));
        return;
      case StmtKind::kEvaluate:
        if (n.a && n.a->kind == ExprKind::kIntImm) {
          Line(out, indent, "no_op");
        } else if (n.a && n.a->kind == ExprKind::kCall) {
          Line(out, indent, Expr(n.a));
        } else {
          Line(out, indent, absl::StrCat("evaluate(", Expr(n.a), ")"));
        }
        return;
    }
  }

  std::string Func(const PrimFunc& f) {
    std::vector<std::string> params;
    for (const Buffer& b : f->params) params.push_back(BufferDecl(b, /*with_scope=*/true));
    std::string name = IsTextIdentifier(f->name) && !IsReservedWord(f->name) ? f->name : Quote(f->name);
    std::string head = absl::StrCat("primfunc ", name, "(", absl::StrJoin(params, ", "), ")");
    if (!f->attrs.empty()) {
      std::vector<std::string> a;
      for (const auto& [k, v] : f->attrs) a.push_back(absl::StrCat(KeyText(k), "=", Quote(v)));
      absl::StrAppend(&head, " attrs {", absl::StrJoin(a, ", "), "}");
    }
    std::string out;
    Block(&out, 0, head, f->body);
    return out;
  }

 private:
  std::string Fresh(absl::string_view hint) {
    std::string base = Sanitize(hint);
    std::string name = base;
    for (int i = 1; in_scope_.count(name) > 0 || IsReservedWord(name); ++i) {
      name = absl::StrCat(base, "_", i);
    }
    return name;
  }

  struct Bound {
    const ExprNode* v;
    std::string name;
    bool had_prev;
    std::string prev;
  };
  std::unordered_map<const ExprNode*, std::string> names_;
  std::unordered_map<std::string, int> in_scope_;
  std::vector<Bound> bound_;
};

}  // namespace

bool InferCallType(absl::string_view name, const std::vector<PrimExpr>& args, DataType* out) {
  if (name == "likely" && args.size() == 1 && args[0]) {
    *out = DataType(DTypeCode::kBool, 8, args[0]->dtype.lanes());
    return true;
  }
  if (name == "if_then_else" && args.size() == 3 && args[1]) {
    *out = args[1]->dtype;
    return true;
  }
  if (IsMathIntrinsic(name) && !args.empty() && args[0]) {
    *out = name == "isnan" ? DataType(DTypeCode::kBool, 8, args[0]->dtype.lanes()) : args[0]->dtype;
    return true;
  }
  return false;
}

CallEffect DefaultCallEffect(absl::string_view) {
  // The factory's default (tir::Call); extern calls built as opaque say so.
  return CallEffect::kPure;
}

bool IsReservedWord(absl::string_view s) {
  static const auto* const kWords = new std::unordered_set<std::string>{
      "for",   "serial",   "parallel", "vectorized", "unrolled", "thread_binding", "let",
      "in",    "attr",     "if",       "else",       "allocate", "no_op",          "assert",
      "evaluate", "primfunc", "true",  "false",      "iter_var", "none"};
  if (kWords->count(std::string(s)) > 0) return true;
  // Float literals spelled with letters: inff, -inff, nanf, inf_float64, ...
  for (absl::string_view w : {"inf", "nan"}) {
    if (s.substr(0, 3) != w) continue;
    absl::string_view rest = s.substr(3);
    if (rest == "f") return true;
    if (!rest.empty() && rest[0] == '_' && IsDTypeName(rest.substr(1))) return true;
  }
  return false;
}

bool IsTextIdentifier(absl::string_view s) {
  if (s.empty() || !IsIdentStart(s[0])) return false;
  for (size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (IsIdentChar(c)) continue;
    if (c == '.' && i + 1 < s.size() && IsIdentChar(s[i + 1])) continue;
    return false;
  }
  return true;
}

std::string ToText(const PrimExpr& e) {
  Printer p;
  return p.Expr(e);
}

std::string ToText(const Stmt& s) {
  Printer p;
  std::string out;
  p.StmtText(&out, 0, s, /*tail=*/true);
  return out;
}

std::string ToText(const PrimFunc& f) {
  Printer p;
  return p.Func(f);
}

}  // namespace kiln::tir
