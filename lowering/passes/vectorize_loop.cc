// File: lowering/passes/vectorize_loop.cc
#include "lowering/passes/vectorize_loop.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/tir_functor.h"
#include "lowering/passes/pass_util.h"

namespace kiln::tir::transform {
namespace {

constexpr absl::string_view kPass = "vectorize_loop";

DataType WithLanes(DataType t, int lanes) { return DataType(t.code(), t.bits(), lanes); }

bool IsIntType(DataType t) { return t.is_int() || t.is_uint(); }

// Rewrites one loop body with the loop var as Ramp(min, 1, lanes). Every
// method returns null on failure, with reason() set.
class Vectorizer {
 public:
  Vectorizer(const Var& var, const PrimExpr& min, int lanes) : lanes_(lanes) {
    remap_[var.get()] = Ramp(min, MakeConst(min->dtype, 1), lanes);
  }

  Stmt Run(const Stmt& body) {
    bool has_vector = false;
    PostOrderVisit(body, [&](const ExprNode* n) {
      if (n->dtype.lanes() > 1) has_vector = true;
    });
    if (has_vector) return Fail("nested_vector");
    return S(body);
  }

  const std::string& reason() const { return reason_; }

 private:
  std::nullptr_t Fail(absl::string_view why) {
    if (reason_.empty()) reason_ = std::string(why);
    return nullptr;
  }

  PrimExpr B(const PrimExpr& e) { return BroadcastTo(e, lanes_); }

  PrimExpr E(const PrimExpr& e) {
    const ExprNode& n = *e;
    switch (n.kind) {
      case ExprKind::kIntImm:
      case ExprKind::kFloatImm:
      case ExprKind::kStringImm:
        return e;
      case ExprKind::kVar: {
        auto it = remap_.find(e.get());
        return it == remap_.end() ? e : it->second;
      }
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
      case ExprKind::kDiv:
      case ExprKind::kMod:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod:
      case ExprKind::kMin:
      case ExprKind::kMax:
      case ExprKind::kEQ:
      case ExprKind::kNE:
      case ExprKind::kLT:
      case ExprKind::kLE:
      case ExprKind::kGT:
      case ExprKind::kGE:
      case ExprKind::kAnd:
      case ExprKind::kOr: {
        PrimExpr a = E(n.args[0]);
        if (!a) return nullptr;
        PrimExpr b = E(n.args[1]);
        if (!b) return nullptr;
        if (a->dtype.lanes() == 1 && b->dtype.lanes() == 1) {
          if (a == n.args[0] && b == n.args[1]) return e;
          return Binary(n.kind, a, b);
        }
        if (IsIntType(a->dtype)) {
          if (n.kind == ExprKind::kAdd) return VecAdd(a, b);
          if (n.kind == ExprKind::kSub) return VecSub(a, b);
          if (n.kind == ExprKind::kMul) return VecMul(a, b);
        }
        return Binary(n.kind, B(a), B(b));
      }
      case ExprKind::kNot: {
        PrimExpr a = E(n.args[0]);
        if (!a) return nullptr;
        return a == n.args[0] ? e : Not(a);
      }
      case ExprKind::kSelect: {
        PrimExpr c = E(n.args[0]), t = E(n.args[1]), f = E(n.args[2]);
        if (!c || !t || !f) return nullptr;
        if (c == n.args[0] && t == n.args[1] && f == n.args[2]) return e;
        if (c->dtype.lanes() == 1 && t->dtype.lanes() == 1 && f->dtype.lanes() == 1) {
          return Select(c, t, f);
        }
        return Select(c, B(t), B(f));
      }
      case ExprKind::kCast: {
        PrimExpr a = E(n.args[0]);
        if (!a) return nullptr;
        if (a == n.args[0]) return e;
        return Cast(WithLanes(n.dtype, a->dtype.lanes()), a);
      }
      case ExprKind::kCall:
        return CallE(e);
      case ExprKind::kLoad: {
        std::vector<PrimExpr> idx;
        bool changed = false, vec = false;
        for (const PrimExpr& i : n.args) {
          PrimExpr v = E(i);
          if (!v) return nullptr;
          changed |= !(v == i);
          vec |= v->dtype.lanes() > 1;
          idx.push_back(v);
        }
        if (!changed) return e;
        if (vec) {
          for (PrimExpr& i : idx) i = B(i);
        }
        return Load(n.buffer, idx);
      }
      case ExprKind::kLet: {
        PrimExpr value = E(n.args[1]);
        if (!value) return nullptr;
        if (value->dtype.lanes() > 1) {
          Var nv = MakeVar(n.args[0]->name, value->dtype);
          remap_[n.args[0].get()] = nv;
          PrimExpr body = E(n.args[2]);
          remap_.erase(n.args[0].get());
          if (!body) return nullptr;
          return Let(nv, value, body);
        }
        PrimExpr body = E(n.args[2]);
        if (!body) return nullptr;
        if (value == n.args[1] && body == n.args[2]) return e;
        return Let(n.args[0], value, body);
      }
      case ExprKind::kRamp:
      case ExprKind::kBroadcast:
        return Fail("nested_vector");
      case ExprKind::kReduce:
      case ExprKind::kProducerLoad:
        return Fail("unsupported_node");
    }
    return Fail("unsupported_node");
  }

  PrimExpr CallE(const PrimExpr& e) {
    const ExprNode& n = *e;
    if (n.effect == CallEffect::kOpaque) return Fail("opaque_call");
    std::vector<PrimExpr> args;
    bool changed = false, vec = false;
    for (size_t k = 0; k < n.args.size(); ++k) {
      PrimExpr v = E(n.args[k]);
      if (!v) return nullptr;
      if (n.name == "if_then_else" && k == 0 && v->dtype.lanes() > 1) {
        return Fail("if_depends_on_lane");
      }
      changed |= !(v == n.args[k]);
      vec |= v->dtype.lanes() > 1;
      args.push_back(v);
    }
    if (!changed) return e;
    if (!vec) return Call(n.dtype, n.name, args, n.effect);
    for (size_t k = 0; k < args.size(); ++k) {
      if (n.name == "if_then_else" && k == 0) continue;  // scalar condition
      if (args[k]->kind == ExprKind::kStringImm) continue;
      args[k] = B(args[k]);
    }
    return Call(WithLanes(n.dtype, lanes_), n.name, args, n.effect);
  }

  Stmt S(const Stmt& s) {
    const StmtNode& n = *s;
    switch (n.kind) {
      case StmtKind::kStore: {
        std::vector<PrimExpr> idx;
        bool vec = false;
        for (const PrimExpr& i : n.indices) {
          PrimExpr v = E(i);
          if (!v) return nullptr;
          vec |= v->dtype.lanes() > 1;
          idx.push_back(v);
        }
        if (!vec) return Fail("scalar_store");
        PrimExpr value = E(n.a);
        if (!value) return nullptr;
        for (PrimExpr& i : idx) i = B(i);
        return Store(n.buffer, B(value), idx);
      }
      case StmtKind::kLetStmt: {
        PrimExpr value = E(n.a);
        if (!value) return nullptr;
        Var var = n.var;
        if (value->dtype.lanes() > 1) {
          var = MakeVar(n.var->name, value->dtype);
          remap_[n.var.get()] = var;
        }
        Stmt body = S(n.body0());
        remap_.erase(n.var.get());
        if (!body) return nullptr;
        return LetStmt(var, value, body);
      }
      case StmtKind::kIfThenElse: {
        PrimExpr c = E(n.a);
        if (!c) return nullptr;
        if (c->dtype.lanes() > 1) return Fail("if_depends_on_lane");
        Stmt t = S(n.body[0]);
        if (!t) return nullptr;
        Stmt f;
        if (n.body.size() > 1) {
          f = S(n.body[1]);
          if (!f) return nullptr;
        }
        return IfThenElse(c, t, f);
      }
      case StmtKind::kFor: {
        PrimExpr mn = E(n.a), ext = E(n.b);
        if (!mn || !ext) return nullptr;
        if (mn->dtype.lanes() > 1 || ext->dtype.lanes() > 1) {
          return Fail("inner_loop_depends_on_lane");
        }
        Stmt body = S(n.body0());
        if (!body) return nullptr;
        return For(n.var, mn, ext, n.for_kind, body, n.tag, n.annotations);
      }
      case StmtKind::kSeq: {
        std::vector<Stmt> body;
        for (const Stmt& c : n.body) {
          Stmt v = S(c);
          if (!v) return nullptr;
          body.push_back(v);
        }
        return Seq(std::move(body));
      }
      case StmtKind::kAttr: {
        PrimExpr v = n.a ? E(n.a) : n.a;
        if (n.a && !v) return nullptr;
        if (v && v->dtype.lanes() > 1) return Fail("unsupported_node");
        Stmt body = S(n.body0());
        if (!body) return nullptr;
        return AttrStmt(n.node, n.tag, v, body);
      }
      case StmtKind::kAllocate:
        return Fail("allocate_inside");
      case StmtKind::kEvaluate: {
        if (IsNoOp(s)) return s;
        PrimExpr v = E(n.a);
        if (!v) return nullptr;
        return Evaluate(v);
      }
      case StmtKind::kAssert: {
        PrimExpr c = E(n.a);
        if (!c) return nullptr;
        if (c->dtype.lanes() > 1) return Fail("if_depends_on_lane");
        Stmt body = S(n.body0());
        if (!body) return nullptr;
        return AssertStmt(c, n.tag, body);
      }
    }
    return Fail("unsupported_node");
  }

  int lanes_;
  VarMap remap_;
  std::string reason_;
};

int WidestElementBits(const Stmt& body) {
  int bits = 0;
  PostOrderVisit(
      body,
      [&](const ExprNode* n) {
        if (n->kind == ExprKind::kLoad && n->buffer) bits = std::max(bits, n->buffer->dtype.bits());
      },
      [&](const StmtNode* n) {
        if (n->kind == StmtKind::kStore && n->buffer)
          bits = std::max(bits, n->buffer->dtype.bits());
      });
  return bits == 0 ? 32 : bits;
}

class LoopVectorizer : public StmtExprMutator {
 public:
  explicit LoopVectorizer(const VectorizeOptions& o) : o_(o) {}

 protected:
  Stmt VisitStmt_(const Stmt& s) override {
    Stmt r = MutateChildren(s);
    if (r->kind != StmtKind::kFor || r->for_kind != ForKind::kVectorized) return r;
    return VectorizeFor(r);
  }

 private:
  static Stmt Fallback(const Stmt& loop, const std::string& why) {
    Ref<StmtNode> n(new StmtNode(*loop));
    n->for_kind = ForKind::kSerial;
    n->annotations["vectorize.fallback"] = why;
    return Stmt(n);
  }

  // body with `var` = base + lane, as `lanes` lanes; null on failure.
  static Stmt Lanes(const Var& var, const PrimExpr& base, int64_t lanes, const Stmt& body,
                    std::string* why) {
    if (lanes == 1) return Substitute(body, {{var.get(), base}});
    Vectorizer v(var, base, static_cast<int>(lanes));
    Stmt out = v.Run(body);
    if (!out) *why = v.reason();
    return out;
  }

  Stmt VectorizeFor(const Stmt& loop) {
    int64_t ext = 0;
    if (!IsConstInt(loop->b, &ext)) return Fallback(loop, "extent_not_constant");
    if (ext <= 0) return NoOp();
    std::string why;
    if (ext <= o_.max_lanes) {
      Stmt out = Lanes(loop->var, loop->a, ext, loop->body0(), &why);
      return out ? out : Fallback(loop, why);
    }
    int64_t width =
        std::max<int64_t>(1, int64_t{o_.vector_width} * 32 / WidestElementBits(loop->body0()));
    width = std::min<int64_t>(width, o_.max_lanes);
    int64_t chunks = ext / width, rem = ext % width;
    Var outer = MakeVar(loop->var->name + ".outer", loop->var->dtype);
    Var inner = MakeVar(loop->var->name + ".inner", loop->var->dtype);
    PrimExpr base = loop->a + outer * width;
    Stmt main_body = Substitute(loop->body0(), {{loop->var.get(), inner}});
    Stmt vec = Lanes(inner, base, width, main_body, &why);
    if (!vec) return Fallback(loop, why);
    std::vector<Stmt> parts = {For(outer, IntImm(0, loop->var->dtype),
                                   IntImm(chunks, loop->var->dtype), ForKind::kSerial, vec)};
    if (rem > 0) {
      Var tail = MakeVar(loop->var->name + ".tail", loop->var->dtype);
      PrimExpr tail_base = loop->a + chunks * width;
      Stmt tail_body = RenewDefs(Substitute(loop->body0(), {{loop->var.get(), tail}}));
      Stmt t = Lanes(tail, tail_base, rem, tail_body, &why);
      if (!t) return Fallback(loop, why);
      parts.push_back(t);
    }
    return Seq(std::move(parts));
  }

  VectorizeOptions o_;
};

}  // namespace

absl::StatusOr<PrimFunc> VectorizeLoop(const PrimFunc& f, const VectorizeOptions& options) {
  if (!f || !f->body) return PassError(kPass, f, "null function or body");
  if (options.vector_width < 1 || options.max_lanes < 1 || options.max_lanes > 4096) {
    return PassError(
        kPass, f,
        absl::StrCat("vector_width (", options.vector_width, ") must be >= 1 and max_lanes (",
                     options.max_lanes, ") in [1, 4096]"));
  }
  LoopVectorizer v(options);
  Stmt body = v.VisitStmt(f->body);
  if (body == f->body) return f;
  return WithBody(f, body);
}

}  // namespace kiln::tir::transform
