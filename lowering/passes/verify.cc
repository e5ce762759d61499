// File: lowering/passes/verify.cc
#include "lowering/passes/verify.h"

#include <string>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"
#include "lowering/passes/pass_util.h"

namespace kiln::tir::transform {
namespace {

constexpr absl::string_view kPass = "verify";

class Verifier {
 public:
  explicit Verifier(const PrimFunc& f) : f_(f) {}

  absl::Status Run() {
    if (!f_->body) return Fail("the function has no body", "");
    for (const Buffer& b : f_->params) {
      if (!b) return Fail("null parameter buffer", "");
      bound_.insert(b->data.get());
      auto bind_vars = [&](const PrimExpr& e) {
        if (!e) return;
        PostOrderVisit(e, [&](const ExprNode* n) {
          if (n->kind == ExprKind::kVar) bound_.insert(n);
        });
      };
      for (const PrimExpr& d : b->shape) bind_vars(d);
      for (const PrimExpr& d : b->strides) bind_vars(d);
      bind_vars(b->elem_offset);
    }
    Stmt(f_->body);
    return status_;
  }

 private:
  absl::Status Fail(absl::string_view what, absl::string_view text) {
    std::string msg(what);
    if (!text.empty()) absl::StrAppend(&msg, ": ", text);
    return PassError(kPass, f_, msg);
  }
  bool Error(absl::string_view what, const PrimExpr& e) {
    if (status_.ok()) status_ = Fail(what, e ? ToText(e) : std::string("<null>"));
    return false;
  }
  bool Error(absl::string_view what, const tir::Stmt& s) {
    if (status_.ok()) {
      std::string text = s ? ToText(s) : std::string("<null>");
      if (text.size() > 400) text = text.substr(0, 400) + "...";
      while (!text.empty() && text.back() == '\n') text.pop_back();
      status_ = Fail(what, text);
    }
    return false;
  }

  bool Bind(const Var& v, const tir::Stmt& where) {
    if (!v || v->kind != ExprKind::kVar) return Error("binding of a non-variable", where);
    if (!bound_.insert(v.get()).second) {
      return Error(absl::StrCat("variable '", v->name, "' is bound again while in scope"), where);
    }
    return true;
  }

  static bool SameType(const PrimExpr& a, const PrimExpr& b) { return a->dtype == b->dtype; }

  bool CheckBuffer(const Buffer& b, const PrimExpr& where_e, const tir::Stmt& where_s) {
    if (!b) {
      return where_e ? Error("access to a null buffer", where_e)
                     : Error("access to a null buffer", where_s);
    }
    if (!bound_.count(b->data.get())) {
      std::string what = absl::StrCat("buffer '", b->name, "' is used outside its allocation");
      return where_e ? Error(what, where_e) : Error(what, where_s);
    }
    for (const PrimExpr& d : b->shape) {
      if (!Expr(d)) return false;
    }
    return true;
  }

  bool Indices(const std::vector<PrimExpr>& idx, int* lanes, const PrimExpr& where_e,
               const tir::Stmt& where_s) {
    *lanes = 1;
    for (const PrimExpr& i : idx) {
      if (!Expr(i)) return false;
      if (!i->dtype.is_int() && !i->dtype.is_uint()) {
        std::string what = absl::StrCat("index ", ToText(i), " has type ", i->dtype.ToString(),
                                        ", not an integer");
        return where_e ? Error(what, where_e) : Error(what, where_s);
      }
      *lanes = std::max(*lanes, i->dtype.lanes());
    }
    for (const PrimExpr& i : idx) {
      if (i->dtype.lanes() != 1 && i->dtype.lanes() != *lanes) {
        return where_e ? Error("indices have different lanes", where_e)
                       : Error("indices have different lanes", where_s);
      }
    }
    return true;
  }

  bool BoolCond(const PrimExpr& c, const PrimExpr& where, bool scalar) {
    if (!c->dtype.is_bool())
      return Error(absl::StrCat("condition ", ToText(c), " is not bool"), where);
    if (scalar && c->dtype.lanes() != 1) {
      return Error(absl::StrCat("condition ", ToText(c), " is a vector"), where);
    }
    return true;
  }

  bool Expr(const PrimExpr& e) {
    if (!status_.ok()) return false;
    if (!e) return Error("null expression", e);
    const ExprNode& n = *e;
    switch (n.kind) {
      case ExprKind::kIntImm:
      case ExprKind::kFloatImm:
      case ExprKind::kStringImm:
        return true;
      case ExprKind::kVar:
        if (!bound_.count(e.get())) {
          return Error(absl::StrCat("unbound variable '", n.name, "'"), e);
        }
        return true;
      case ExprKind::kReduce:
        return Error("a Reduce is left (lower tensor expressions first)", e);
      case ExprKind::kProducerLoad:
        return Error("a ProducerLoad is left (lower tensor expressions first)", e);
      case ExprKind::kLet: {
        if (!Expr(n.args[1])) return false;
        if (!SameType(n.args[0], n.args[1])) {
          return Error(absl::StrCat("let variable '", n.args[0]->name, "' has type ",
                                    n.args[0]->dtype.ToString(), ", value has ",
                                    n.args[1]->dtype.ToString()),
                       e);
        }
        if (!bound_.insert(n.args[0].get()).second) {
          return Error(
              absl::StrCat("variable '", n.args[0]->name, "' is bound again while in scope"), e);
        }
        bool ok = Expr(n.args[2]);
        bound_.erase(n.args[0].get());
        return ok;
      }
      case ExprKind::kLoad: {
        if (!CheckBuffer(n.buffer, e, nullptr)) return false;
        int lanes = 1;
        if (!Indices(n.args, &lanes, e, nullptr)) return false;
        if (n.dtype.lanes() != lanes || n.dtype.code() != n.buffer->dtype.code() ||
            n.dtype.bits() != n.buffer->dtype.bits()) {
          return Error(absl::StrCat("load type ", n.dtype.ToString(), " does not match buffer ",
                                    n.buffer->dtype.ToString(), " x ", lanes, " lanes"),
                       e);
        }
        return true;
      }
      default:
        break;
    }
    for (const PrimExpr& a : n.args) {
      if (!Expr(a)) return false;
    }
    switch (n.kind) {
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
      case ExprKind::kDiv:
      case ExprKind::kMod:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod:
      case ExprKind::kMin:
      case ExprKind::kMax:
        if (!SameType(n.args[0], n.args[1])) {
          return Error(absl::StrCat("operand types differ (", n.args[0]->dtype.ToString(), " vs ",
                                    n.args[1]->dtype.ToString(), ")"),
                       e);
        }
        if (n.args[0]->dtype.is_bool()) return Error("arithmetic on bool operands", e);
        if (n.dtype != n.args[0]->dtype) return Error("result type differs from the operands'", e);
        return true;
      case ExprKind::kEQ:
      case ExprKind::kNE:
      case ExprKind::kLT:
      case ExprKind::kLE:
      case ExprKind::kGT:
      case ExprKind::kGE:
        if (!SameType(n.args[0], n.args[1])) {
          return Error(absl::StrCat("compared types differ (", n.args[0]->dtype.ToString(), " vs ",
                                    n.args[1]->dtype.ToString(), ")"),
                       e);
        }
        if (!n.dtype.is_bool() || n.dtype.lanes() != n.args[0]->dtype.lanes()) {
          return Error("comparison result is not bool of the operands' lanes", e);
        }
        return true;
      case ExprKind::kAnd:
      case ExprKind::kOr:
        if (!n.args[0]->dtype.is_bool() || !n.args[1]->dtype.is_bool()) {
          return Error("operands of && / || are not bool", e);
        }
        if (!SameType(n.args[0], n.args[1])) return Error("operand lanes differ", e);
        return true;
      case ExprKind::kNot:
        if (!n.args[0]->dtype.is_bool()) return Error("operand of ! is not bool", e);
        return true;
      case ExprKind::kSelect:
        if (!BoolCond(n.args[0], e, false)) return false;
        if (!SameType(n.args[1], n.args[2])) {
          return Error(absl::StrCat("select branches differ in type (", n.args[1]->dtype.ToString(),
                                    " vs ", n.args[2]->dtype.ToString(), ")"),
                       e);
        }
        if (n.args[0]->dtype.lanes() != 1 && n.args[0]->dtype.lanes() != n.args[1]->dtype.lanes()) {
          return Error("select condition lanes differ from the values'", e);
        }
        if (n.dtype != n.args[1]->dtype) return Error("select type differs from its branches'", e);
        return true;
      case ExprKind::kCast:
        if (n.dtype.lanes() != n.args[0]->dtype.lanes()) return Error("cast changes the lanes", e);
        return true;
      case ExprKind::kRamp:
        if (!n.args[0]->dtype.is_int() && !n.args[0]->dtype.is_uint()) {
          return Error("ramp base is not an integer", e);
        }
        if (n.args[0]->dtype.lanes() != 1 || !SameType(n.args[0], n.args[1])) {
          return Error("ramp base and stride must be scalars of one type", e);
        }
        return true;
      case ExprKind::kBroadcast:
        if (n.args[0]->dtype.lanes() != 1) return Error("broadcast of a vector", e);
        return true;
      case ExprKind::kCall:
        if (n.name == "likely") {
          if (n.args.size() != 1 || !BoolCond(n.args[0], e, false)) {
            return Error("likely takes one bool", e);
          }
        } else if (n.name == "if_then_else") {
          if (n.args.size() != 3) return Error("if_then_else takes 3 arguments", e);
          if (!BoolCond(n.args[0], e, false)) return false;
          if (!SameType(n.args[1], n.args[2]))
            return Error("if_then_else branches differ in type", e);
        }
        return true;
      default:
        return true;
    }
  }

  bool ScalarInt(const PrimExpr& e, const tir::Stmt& s, absl::string_view what) {
    if (!Expr(e)) return false;
    if ((!e->dtype.is_int() && !e->dtype.is_uint()) || e->dtype.lanes() != 1) {
      return Error(absl::StrCat(what, " ", ToText(e), " is not a scalar integer"), s);
    }
    return true;
  }

  bool Stmt(const tir::Stmt& s) {
    if (!status_.ok()) return false;
    if (!s) return Error("null statement", s);
    const StmtNode& n = *s;
    switch (n.kind) {
      case StmtKind::kFor: {
        if (!ScalarInt(n.a, s, "loop min") || !ScalarInt(n.b, s, "loop extent")) return false;
        if (!Bind(n.var, s)) return false;
        bool ok = Stmt(n.body0());
        bound_.erase(n.var.get());
        return ok;
      }
      case StmtKind::kLetStmt: {
        if (!Expr(n.a)) return false;
        if (n.var->dtype != n.a->dtype) {
          return Error(absl::StrCat("let variable '", n.var->name, "' has type ",
                                    n.var->dtype.ToString(), ", value has ", n.a->dtype.ToString()),
                       s);
        }
        if (!Bind(n.var, s)) return false;
        bool ok = Stmt(n.body0());
        bound_.erase(n.var.get());
        return ok;
      }
      case StmtKind::kAttr: {
        if (n.a && !Expr(n.a)) return false;
        // `attr iter_var(threadIdx.x, ...) "thread_extent" = e { ... }` binds
        // the thread index in its body (GPU launches).
        const auto* iv = dynamic_cast<const IterVarNode*>(n.node.get());
        if (iv == nullptr || !iv->var || bound_.count(iv->var.get())) return Stmt(n.body0());
        bound_.insert(iv->var.get());
        bool ok = Stmt(n.body0());
        bound_.erase(iv->var.get());
        return ok;
      }
      case StmtKind::kIfThenElse:
        if (!Expr(n.a)) return false;
        if (!n.a->dtype.is_bool() || n.a->dtype.lanes() != 1) {
          return Error(absl::StrCat("if condition ", ToText(n.a), " is not a scalar bool"), s);
        }
        for (const tir::Stmt& c : n.body) {
          if (!Stmt(c)) return false;
        }
        return true;
      case StmtKind::kSeq:
        for (const tir::Stmt& c : n.body) {
          if (!Stmt(c)) return false;
        }
        return true;
      case StmtKind::kStore: {
        if (!CheckBuffer(n.buffer, nullptr, s)) return false;
        int lanes = 1;
        if (!Indices(n.indices, &lanes, nullptr, s)) return false;
        if (!Expr(n.a)) return false;
        DataType bt = n.buffer->dtype;
        if (n.a->dtype.code() != bt.code() || n.a->dtype.bits() != bt.bits()) {
          return Error(absl::StrCat("stored value has type ", n.a->dtype.ToString(), ", buffer '",
                                    n.buffer->name, "' holds ", bt.ToString()),
                       s);
        }
        if (n.a->dtype.lanes() != lanes) {
          return Error(
              absl::StrCat("stored value has ", n.a->dtype.lanes(), " lanes, the index ", lanes),
              s);
        }
        return true;
      }
      case StmtKind::kAllocate: {
        if (!n.buffer) return Error("allocate without a buffer", s);
        for (const PrimExpr& d : n.buffer->shape) {
          if (!ScalarInt(d, s, "allocation extent")) return false;
        }
        if (!Bind(n.buffer->data, s)) return false;
        bool ok = Stmt(n.body0());
        bound_.erase(n.buffer->data.get());
        return ok;
      }
      case StmtKind::kEvaluate:
        return Expr(n.a);
      case StmtKind::kAssert:
        if (!Expr(n.a)) return false;
        if (!n.a->dtype.is_bool() || n.a->dtype.lanes() != 1) {
          return Error(absl::StrCat("assert condition ", ToText(n.a), " is not a scalar bool"), s);
        }
        return Stmt(n.body0());
    }
    return Error("unknown statement kind", s);
  }

  const PrimFunc& f_;
  std::unordered_set<const ExprNode*> bound_;
  absl::Status status_;
};

}  // namespace

absl::Status VerifyPrimFunc(const PrimFunc& f) {
  if (!f) return absl::InvalidArgumentError("verify: null PrimFunc");
  Verifier v(f);
  return v.Run();
}

absl::StatusOr<PrimFunc> Verify(const PrimFunc& f) {
  absl::Status st = VerifyPrimFunc(f);
  if (!st.ok()) return st;
  return f;
}

}  // namespace kiln::tir::transform
