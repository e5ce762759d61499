// File: ir/tir_printer.cc
#include "ir/tir_printer.h"

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

namespace {

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
  std::string Name(const ExprNode* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string base = v->name.empty() ? "v" : v->name;
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = absl::StrCat(base, "_", i);
    used_.insert(name);
    names_[v] = name;
    return name;
  }

  std::string BufName(const Buffer& b) { return b ? Name(b->data.get()) : "<null buffer>"; }

  std::string Expr(const PrimExpr& e) {
    if (!e) return "<null>";
    const ExprNode& n = *e;
    std::string lanes = n.dtype.lanes() > 1 ? absl::StrCat("x", n.dtype.lanes()) : "";
    switch (n.kind) {
      case ExprKind::kIntImm:
        if (n.dtype.is_bool()) return n.int_value ? "true" : "false";
        if (n.dtype == kIndexType) return absl::StrCat(n.int_value);
        return absl::StrCat(n.int_value, "_", n.dtype.ToString());
      case ExprKind::kFloatImm: {
        std::string v = absl::StrFormat("%.9g", n.float_value);
        if (n.dtype == DataType::Float(32)) return v + "f";
        return absl::StrCat(v, "_", n.dtype.ToString());
      }
      case ExprKind::kStringImm: return absl::StrCat("\"", absl::CEscape(n.name), "\"");
      case ExprKind::kVar: return Name(&n);
      case ExprKind::kMin: return absl::StrCat("min(", Expr(n.args[0]), ", ", Expr(n.args[1]), ")");
      case ExprKind::kMax: return absl::StrCat("max(", Expr(n.args[0]), ", ", Expr(n.args[1]), ")");
      case ExprKind::kFloorDiv:
        return absl::StrCat("floordiv(", Expr(n.args[0]), ", ", Expr(n.args[1]), ")");
      case ExprKind::kFloorMod:
        return absl::StrCat("floormod(", Expr(n.args[0]), ", ", Expr(n.args[1]), ")");
      case ExprKind::kNot: return absl::StrCat("!", Expr(n.args[0]));
      case ExprKind::kSelect:
        return absl::StrCat("select(", Expr(n.args[0]), ", ", Expr(n.args[1]), ", ",
                            Expr(n.args[2]), ")");
      case ExprKind::kCast: return absl::StrCat(n.dtype.ToString(), "(", Expr(n.args[0]), ")");
      case ExprKind::kCall: {
        std::vector<std::string> a;
        for (const PrimExpr& x : n.args) a.push_back(Expr(x));
        return absl::StrCat(n.name, "(", absl::StrJoin(a, ", "), ")", lanes.empty() ? "" : ":",
                            lanes);
      }
      case ExprKind::kLoad: {
        std::vector<std::string> a;
        for (const PrimExpr& x : n.args) a.push_back(Expr(x));
        return absl::StrCat(BufName(n.buffer), "[", absl::StrJoin(a, ", "), "]");
      }
      case ExprKind::kProducerLoad: {
        std::vector<std::string> a;
        for (const PrimExpr& x : n.args) a.push_back(Expr(x));
        return absl::StrCat("tensor@", reinterpret_cast<uintptr_t>(n.producer.get()) % 100000,
                            "(", absl::StrJoin(a, ", "), ")");
      }
      case ExprKind::kRamp:
        return absl::StrCat("ramp(", Expr(n.args[0]), ", ", Expr(n.args[1]), ", ",
                            n.dtype.lanes(), ")");
      case ExprKind::kBroadcast:
        return absl::StrCat("broadcast(", Expr(n.args[0]), ", ", n.dtype.lanes(), ")");
      case ExprKind::kLet:
        return absl::StrCat("(let ", Expr(n.args[0]), " = ", Expr(n.args[1]), " in ",
                            Expr(n.args[2]), ")");
      case ExprKind::kReduce: {
        std::vector<std::string> ax;
        for (const IterVar& iv : n.axes) {
          ax.push_back(absl::StrCat(Name(iv->var.get()), " in [", Expr(iv->dom.min), ", ",
                                    Expr(iv->dom.min) + " + " + Expr(iv->dom.extent), ")"));
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

  void Line(std::string* out, int indent, absl::string_view text) {
    out->append(static_cast<size_t>(indent) * 2, ' ');
    out->append(text.data(), text.size());
    out->push_back('\n');
  }

  void Block(std::string* out, int indent, absl::string_view head, const Stmt& body) {
    Line(out, indent, absl::StrCat(head, " {"));
    StmtText(out, indent + 1, body);
    Line(out, indent, "}");
  }

  std::string Shape(const std::vector<PrimExpr>& shape) {
    std::vector<std::string> d;
    for (const PrimExpr& x : shape) d.push_back(Expr(x));
    return absl::StrCat("[", absl::StrJoin(d, ", "), "]");
  }

  void StmtText(std::string* out, int indent, const Stmt& s) {
    if (!s) {
      Line(out, indent, "<null stmt>");
      return;
    }
    const StmtNode& n = *s;
    switch (n.kind) {
      case StmtKind::kFor: {
        std::string head = absl::StrCat(n.for_kind == ForKind::kSerial ? "for" : ForKindName(n.for_kind),
                                        " (", Name(n.var.get()), ", ", Expr(n.a), ", ", Expr(n.b), ")");
        if (!n.tag.empty()) absl::StrAppend(&head, " \"", n.tag, "\"");
        for (const auto& [k, v] : n.annotations) absl::StrAppend(&head, " ", k, "=", v);
        Block(out, indent, head, n.body0());
        return;
      }
      case StmtKind::kLetStmt:
        Line(out, indent, absl::StrCat("let ", Name(n.var.get()), " = ", Expr(n.a)));
        StmtText(out, indent, n.body0());
        return;
      case StmtKind::kAttr: {
        std::string subject;
        if (n.node) {
          if (const auto* iv = dynamic_cast<const IterVarNode*>(n.node.get())) {
            subject = Name(iv->var.get()) + " ";
          } else if (const auto* b = dynamic_cast<const BufferNode*>(n.node.get())) {
            subject = Name(b->data.get()) + " ";
          }
        }
        Block(out, indent, absl::StrCat("attr ", subject, "\"", n.tag, "\" = ", Expr(n.a)),
              n.body0());
        return;
      }
      case StmtKind::kIfThenElse:
        Line(out, indent, absl::StrCat("if (", Expr(n.a), ") {"));
        StmtText(out, indent + 1, n.body[0]);
        if (n.body.size() > 1) {
          Line(out, indent, "} else {");
          StmtText(out, indent + 1, n.body[1]);
        }
        Line(out, indent, "}");
        return;
      case StmtKind::kSeq:
        for (const Stmt& c : n.body) StmtText(out, indent, c);
        return;
      case StmtKind::kStore: {
        std::vector<std::string> a;
        for (const PrimExpr& x : n.indices) a.push_back(Expr(x));
        Line(out, indent, absl::StrCat(BufName(n.buffer), "[", absl::StrJoin(a, ", "), "] = ",
                                       Expr(n.a)));
        return;
      }
      case StmtKind::kAllocate:
        Line(out, indent, absl::StrCat("allocate ", BufName(n.buffer), ": ",
                                       n.buffer->dtype.ToString(), Shape(n.buffer->shape), " ",
                                       n.tag.empty() ? n.buffer->scope : n.tag));
        StmtText(out, indent, n.body0());
        return;
      case StmtKind::kEvaluate:
        if (n.a && n.a->kind == ExprKind::kIntImm) {
          Line(out, indent, "no_op");
        } else {
          Line(out, indent, Expr(n.a));
        }
        return;
      case StmtKind::kAssert:
        Line(out, indent, absl::StrCat("assert(", Expr(n.a), ", \"", absl::CEscape(n.tag), "\")"));
        StmtText(out, indent, n.body0());
        return;
    }
  }

  std::string Func(const PrimFunc& f) {
    std::vector<std::string> params;
    for (const Buffer& b : f->params) {
      params.push_back(absl::StrCat(BufName(b), ": ", b->dtype.ToString(), Shape(b->shape)));
    }
    std::string head = absl::StrCat("primfunc ", f->name, "(", absl::StrJoin(params, ", "), ")");
    if (!f->attrs.empty()) {
      std::vector<std::string> a;
      for (const auto& [k, v] : f->attrs) a.push_back(absl::StrCat(k, "=\"", absl::CEscape(v), "\""));
      absl::StrAppend(&head, " attrs {", absl::StrJoin(a, ", "), "}");
    }
    std::string out;
    Block(&out, 0, head, f->body);
    return out;
  }

 private:
  std::unordered_map<const ExprNode*, std::string> names_;
  std::unordered_set<std::string> used_;
};

}  // namespace

std::string ToText(const PrimExpr& e) {
  Printer p;
  return p.Expr(e);
}

std::string ToText(const Stmt& s) {
  Printer p;
  std::string out;
  p.StmtText(&out, 0, s);
  return out;
}

std::string ToText(const PrimFunc& f) {
  Printer p;
  return p.Func(f);
}

}  // namespace kiln::tir
