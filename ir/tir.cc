// File: ir/tir.cc — factories of the loop IR.
#include "ir/tir.h"

#include <cmath>
#include <limits>

namespace kiln::tir {
namespace {

Ref<ExprNode> NewExpr(ExprKind k, DataType t) {
  Ref<ExprNode> n(new ExprNode());
  n->kind = k;
  n->dtype = t;
  return n;
}

Ref<StmtNode> NewStmt(StmtKind k) {
  Ref<StmtNode> n(new StmtNode());
  n->kind = k;
  return n;
}

DataType BoolOf(DataType t) { return DataType(DTypeCode::kBool, 8, t.lanes()); }

// Lanes of a binary result: a vector operand wins.
DataType BinaryType(const PrimExpr& a, const PrimExpr& b) {
  if (a->dtype.lanes() >= b->dtype.lanes()) return a->dtype;
  return DataType(a->dtype.code(), a->dtype.bits(), b->dtype.lanes());
}

}  // namespace

const char* ForKindName(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
    case ForKind::kThreadBinding: return "thread_binding";
  }
  return "?";
}

PrimExpr IntImm(int64_t v, DataType t) {
  Ref<ExprNode> n = NewExpr(ExprKind::kIntImm, t);
  n->int_value = v;
  return n;
}

PrimExpr FloatImm(double v, DataType t) {
  Ref<ExprNode> n = NewExpr(ExprKind::kFloatImm, t);
  n->float_value = v;
  return n;
}

PrimExpr BoolImm(bool v) { return IntImm(v ? 1 : 0, DataType::Bool()); }

PrimExpr StringImm(absl::string_view s) {
  Ref<ExprNode> n = NewExpr(ExprKind::kStringImm, kHandleType);
  n->name = std::string(s);
  return n;
}

PrimExpr MakeConst(DataType t, double v) {
  DataType scalar(t.code(), t.bits(), 1);
  PrimExpr c = scalar.is_float() ? FloatImm(v, scalar) : IntImm(static_cast<int64_t>(v), scalar);
  return t.lanes() > 1 ? Broadcast(c, t.lanes()) : c;
}

Var MakeVar(absl::string_view name, DataType t) {
  Ref<ExprNode> n = NewExpr(ExprKind::kVar, t);
  n->name = std::string(name);
  return n;
}

PrimExpr Binary(ExprKind k, PrimExpr a, PrimExpr b) {
  DataType t = BinaryType(a, b);
  if (k >= ExprKind::kEQ && k <= ExprKind::kGE) t = BoolOf(t);
  if (k == ExprKind::kAnd || k == ExprKind::kOr) t = BoolOf(t);
  Ref<ExprNode> n = NewExpr(k, t);
  n->args = {std::move(a), std::move(b)};
  return n;
}

PrimExpr Add(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kAdd, std::move(a), std::move(b)); }
PrimExpr Sub(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kSub, std::move(a), std::move(b)); }
PrimExpr Mul(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kMul, std::move(a), std::move(b)); }
PrimExpr Div(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kDiv, std::move(a), std::move(b)); }
PrimExpr Mod(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kMod, std::move(a), std::move(b)); }
PrimExpr FloorDiv(PrimExpr a, PrimExpr b) {
  return Binary(ExprKind::kFloorDiv, std::move(a), std::move(b));
}
PrimExpr FloorMod(PrimExpr a, PrimExpr b) {
  return Binary(ExprKind::kFloorMod, std::move(a), std::move(b));
}
PrimExpr Min(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kMin, std::move(a), std::move(b)); }
PrimExpr Max(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kMax, std::move(a), std::move(b)); }
PrimExpr EQ(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kEQ, std::move(a), std::move(b)); }
PrimExpr NE(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kNE, std::move(a), std::move(b)); }
PrimExpr LT(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kLT, std::move(a), std::move(b)); }
PrimExpr LE(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kLE, std::move(a), std::move(b)); }
PrimExpr GT(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kGT, std::move(a), std::move(b)); }
PrimExpr GE(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kGE, std::move(a), std::move(b)); }
PrimExpr And(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kAnd, std::move(a), std::move(b)); }
PrimExpr Or(PrimExpr a, PrimExpr b) { return Binary(ExprKind::kOr, std::move(a), std::move(b)); }

PrimExpr Not(PrimExpr a) {
  Ref<ExprNode> n = NewExpr(ExprKind::kNot, BoolOf(a->dtype));
  n->args = {std::move(a)};
  return n;
}

PrimExpr Select(PrimExpr cond, PrimExpr t, PrimExpr f) {
  DataType type = BinaryType(t, f);
  if (cond->dtype.lanes() > type.lanes()) {
    type = DataType(type.code(), type.bits(), cond->dtype.lanes());
  }
  Ref<ExprNode> n = NewExpr(ExprKind::kSelect, type);
  n->args = {std::move(cond), std::move(t), std::move(f)};
  return n;
}

PrimExpr Cast(DataType t, PrimExpr v) {
  if (v->dtype == t) return v;
  Ref<ExprNode> n = NewExpr(ExprKind::kCast, t);
  n->args = {std::move(v)};
  return n;
}

PrimExpr Call(DataType t, absl::string_view name, std::vector<PrimExpr> args, CallEffect effect) {
  Ref<ExprNode> n = NewExpr(ExprKind::kCall, t);
  n->name = std::string(name);
  n->args = std::move(args);
  n->effect = effect;
  return n;
}

PrimExpr Load(Buffer buffer, std::vector<PrimExpr> indices) {
  int lanes = 1;
  for (const PrimExpr& i : indices) lanes = std::max(lanes, i->dtype.lanes());
  DataType t = buffer->dtype;
  Ref<ExprNode> n = NewExpr(ExprKind::kLoad, DataType(t.code(), t.bits(), lanes));
  n->buffer = std::move(buffer);
  n->args = std::move(indices);
  return n;
}

PrimExpr Ramp(PrimExpr base, PrimExpr stride, int lanes) {
  DataType t = base->dtype;
  Ref<ExprNode> n = NewExpr(ExprKind::kRamp, DataType(t.code(), t.bits(), lanes));
  n->args = {std::move(base), std::move(stride)};
  return n;
}

PrimExpr Broadcast(PrimExpr value, int lanes) {
  DataType t = value->dtype;
  Ref<ExprNode> n = NewExpr(ExprKind::kBroadcast, DataType(t.code(), t.bits(), lanes));
  n->args = {std::move(value)};
  return n;
}

PrimExpr Let(Var var, PrimExpr value, PrimExpr body) {
  Ref<ExprNode> n = NewExpr(ExprKind::kLet, body->dtype);
  n->args = {std::move(var), std::move(value), std::move(body)};
  return n;
}

PrimExpr Reduce(ReduceKind kind, PrimExpr source, std::vector<IterVar> axes, PrimExpr condition) {
  Ref<ExprNode> n = NewExpr(ExprKind::kReduce, source->dtype);
  n->reduce_kind = kind;
  n->args = {std::move(source), condition ? std::move(condition) : BoolImm(true)};
  n->axes = std::move(axes);
  return n;
}

PrimExpr ArgReduce(ReduceKind kind, PrimExpr value, PrimExpr flat_index, std::vector<IterVar> axes,
                   bool select_last_index, PrimExpr condition, DataType index_type) {
  Ref<ExprNode> n = NewExpr(ExprKind::kReduce, index_type);
  n->reduce_kind = kind;
  n->int_value = select_last_index ? 1 : 0;
  n->args = {std::move(value), condition ? std::move(condition) : BoolImm(true),
             std::move(flat_index)};
  n->axes = std::move(axes);
  return n;
}

PrimExpr ProducerLoad(DataType t, Ref<const Object> producer, std::vector<PrimExpr> indices) {
  Ref<ExprNode> n = NewExpr(ExprKind::kProducerLoad, t);
  n->producer = std::move(producer);
  n->args = std::move(indices);
  return n;
}

PrimExpr MinValue(DataType t) {
  DataType s(t.code(), t.bits(), 1);
  if (s.is_float()) return FloatImm(-std::numeric_limits<double>::infinity(), s);
  if (s.is_bool()) return IntImm(0, s);
  if (s.is_uint()) return IntImm(0, s);
  if (s.bits() >= 64) return IntImm(std::numeric_limits<int64_t>::min(), s);
  return IntImm(-(int64_t{1} << (s.bits() - 1)), s);
}

PrimExpr MaxValue(DataType t) {
  DataType s(t.code(), t.bits(), 1);
  if (s.is_float()) return FloatImm(std::numeric_limits<double>::infinity(), s);
  if (s.is_bool()) return IntImm(1, s);
  if (s.is_uint()) {
    // uint64 max does not fit int64; store its bit pattern.
    if (s.bits() >= 64) return IntImm(-1, s);
    return IntImm((int64_t{1} << s.bits()) - 1, s);
  }
  if (s.bits() >= 64) return IntImm(std::numeric_limits<int64_t>::max(), s);
  return IntImm((int64_t{1} << (s.bits() - 1)) - 1, s);
}

PrimExpr ReduceIdentity(ReduceKind kind, DataType t) {
  switch (kind) {
    case ReduceKind::kSum: return MakeConst(t, 0);
    case ReduceKind::kProd: return MakeConst(t, 1);
    case ReduceKind::kMax:
    case ReduceKind::kArgMax: return MinValue(t);
    case ReduceKind::kMin:
    case ReduceKind::kArgMin: return MaxValue(t);
  }
  return MakeConst(t, 0);
}

bool IsConstInt(const PrimExpr& e, int64_t* value) {
  if (!e || e->kind != ExprKind::kIntImm) return false;
  if (value != nullptr) *value = e->int_value;
  return true;
}

bool IsConstValue(const PrimExpr& e, int64_t value) {
  int64_t v = 0;
  if (IsConstInt(e, &v)) return v == value;
  double f = 0;
  return IsConstFloat(e, &f) && f == static_cast<double>(value);
}

bool IsConstFloat(const PrimExpr& e, double* value) {
  if (!e || e->kind != ExprKind::kFloatImm) return false;
  if (value != nullptr) *value = e->float_value;
  return true;
}

namespace {
bool BothConstInt(const PrimExpr& a, const PrimExpr& b, int64_t* x, int64_t* y) {
  return IsConstInt(a, x) && IsConstInt(b, y) && a->dtype == b->dtype;
}

// Constants fold with checked arithmetic: a result that does not fit in
// int64 (an extent product of a huge shape, IMul in lowering/compute) is not
// folded but left as the operation, never wrapped.
bool FoldAdd(int64_t x, int64_t y, int64_t* r) { return !__builtin_add_overflow(x, y, r); }
bool FoldSub(int64_t x, int64_t y, int64_t* r) { return !__builtin_sub_overflow(x, y, r); }
bool FoldMul(int64_t x, int64_t y, int64_t* r) { return !__builtin_mul_overflow(x, y, r); }

// An integer constant of `t`'s kind, exact for every int64 (MakeConst goes
// through a double, which rounds large values and overflows at INT64_MAX).
PrimExpr IntConstLike(DataType t, int64_t v) {
  if (t.is_float()) return MakeConst(t, static_cast<double>(v));
  PrimExpr c = IntImm(v, DataType(t.code(), t.bits(), 1));
  return t.lanes() > 1 ? Broadcast(c, t.lanes()) : c;
}
}  // namespace

PrimExpr operator+(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0, r = 0;
  if (BothConstInt(a, b, &x, &y) && FoldAdd(x, y, &r)) return IntImm(r, a->dtype);
  if (IsConstValue(b, 0) && b->dtype == a->dtype) return a;
  if (IsConstValue(a, 0) && b->dtype == a->dtype) return b;
  return Add(a, b);
}
PrimExpr operator-(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0, r = 0;
  if (BothConstInt(a, b, &x, &y) && FoldSub(x, y, &r)) return IntImm(r, a->dtype);
  if (IsConstValue(b, 0) && b->dtype == a->dtype) return a;
  return Sub(a, b);
}
PrimExpr operator*(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0, r = 0;
  if (BothConstInt(a, b, &x, &y) && FoldMul(x, y, &r)) return IntImm(r, a->dtype);
  if (IsConstValue(b, 1) && b->dtype == a->dtype) return a;
  if (IsConstValue(a, 1) && b->dtype == a->dtype) return b;
  return Mul(a, b);
}
PrimExpr operator-(const PrimExpr& a) {
  int64_t x = 0, r = 0;
  if (IsConstInt(a, &x) && FoldSub(0, x, &r)) return IntImm(r, a->dtype);
  return Sub(MakeConst(a->dtype, 0), a);
}
PrimExpr operator+(const PrimExpr& a, int64_t b) { return a + IntConstLike(a->dtype, b); }
PrimExpr operator-(const PrimExpr& a, int64_t b) { return a - IntConstLike(a->dtype, b); }
PrimExpr operator*(const PrimExpr& a, int64_t b) { return a * IntConstLike(a->dtype, b); }
PrimExpr operator+(int64_t a, const PrimExpr& b) { return IntConstLike(b->dtype, a) + b; }
PrimExpr operator*(int64_t a, const PrimExpr& b) { return IntConstLike(b->dtype, a) * b; }

// ---- Statements -------------------------------------------------------------

Stmt For(Var var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body,
         absl::string_view thread_tag, std::map<std::string, std::string> annotations) {
  Ref<StmtNode> n = NewStmt(StmtKind::kFor);
  n->var = std::move(var);
  n->a = std::move(min);
  n->b = std::move(extent);
  n->for_kind = kind;
  n->tag = std::string(thread_tag);
  n->body = {std::move(body)};
  n->annotations = std::move(annotations);
  return n;
}

Stmt LetStmt(Var var, PrimExpr value, Stmt body) {
  Ref<StmtNode> n = NewStmt(StmtKind::kLetStmt);
  n->var = std::move(var);
  n->a = std::move(value);
  n->body = {std::move(body)};
  return n;
}

Stmt AttrStmt(Ref<const Object> node, absl::string_view key, PrimExpr value, Stmt body) {
  Ref<StmtNode> n = NewStmt(StmtKind::kAttr);
  n->node = std::move(node);
  n->tag = std::string(key);
  n->a = std::move(value);
  n->body = {std::move(body)};
  return n;
}

Stmt IfThenElse(PrimExpr cond, Stmt then_case, Stmt else_case) {
  Ref<StmtNode> n = NewStmt(StmtKind::kIfThenElse);
  n->a = std::move(cond);
  n->body = {std::move(then_case)};
  if (else_case && !IsNoOp(else_case)) n->body.push_back(std::move(else_case));
  return n;
}

Stmt NoOp() {
  static const Stmt* const kNoOp = new Stmt([] {
    Ref<StmtNode> n = NewStmt(StmtKind::kEvaluate);
    n->a = IntImm(0, DataType::Int(32));
    return Stmt(n);
  }());
  return *kNoOp;
}

bool IsNoOp(const Stmt& s) {
  return !s || (s->kind == StmtKind::kEvaluate && s->a && s->a->kind == ExprKind::kIntImm) ||
         (s->kind == StmtKind::kSeq && s->body.empty());
}

Stmt Seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (IsNoOp(s)) continue;
    if (s->kind == StmtKind::kSeq) {
      for (const Stmt& c : s->body) flat.push_back(c);
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.empty()) return NoOp();
  if (flat.size() == 1) return flat[0];
  Ref<StmtNode> n = NewStmt(StmtKind::kSeq);
  n->body = std::move(flat);
  return n;
}

Stmt Store(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices) {
  Ref<StmtNode> n = NewStmt(StmtKind::kStore);
  n->buffer = std::move(buffer);
  n->a = std::move(value);
  n->indices = std::move(indices);
  return n;
}

Stmt Allocate(Buffer buffer, Stmt body, absl::string_view scope) {
  Ref<StmtNode> n = NewStmt(StmtKind::kAllocate);
  n->var = buffer->data;
  n->buffer = std::move(buffer);
  n->tag = std::string(scope);
  n->body = {std::move(body)};
  return n;
}

Stmt Evaluate(PrimExpr value) {
  Ref<StmtNode> n = NewStmt(StmtKind::kEvaluate);
  n->a = std::move(value);
  return n;
}

Stmt AssertStmt(PrimExpr cond, absl::string_view message, Stmt body) {
  Ref<StmtNode> n = NewStmt(StmtKind::kAssert);
  n->a = std::move(cond);
  n->tag = std::string(message);
  n->body = {std::move(body)};
  return n;
}

// ---- Buffers and functions ----------------------------------------------------

Buffer MakeBuffer(absl::string_view name, DataType dtype, std::vector<PrimExpr> shape,
                  absl::string_view scope) {
  Ref<BufferNode> b(new BufferNode());
  b->data = MakeVar(name, kHandleType);
  b->name = std::string(name);
  b->dtype = dtype;
  b->shape = std::move(shape);
  b->scope = std::string(scope);
  return b;
}

Buffer WithShape(const Buffer& b, std::vector<PrimExpr> shape, std::vector<PrimExpr> strides) {
  Ref<BufferNode> n(new BufferNode(*b));
  n->shape = std::move(shape);
  n->strides = std::move(strides);
  return n;
}

IterVar MakeIterVar(Range dom, Var var, IterKind kind, absl::string_view thread_tag) {
  Ref<IterVarNode> n(new IterVarNode());
  n->dom = std::move(dom);
  n->var = std::move(var);
  n->iter_kind = kind;
  n->thread_tag = std::string(thread_tag);
  return n;
}

PrimFunc MakePrimFunc(absl::string_view name, std::vector<Buffer> params, Stmt body,
                      std::map<std::string, std::string> attrs) {
  Ref<PrimFuncNode> f(new PrimFuncNode());
  f->name = std::string(name);
  f->params = std::move(params);
  f->body = std::move(body);
  f->attrs = std::move(attrs);
  return f;
}

PrimFunc WithBody(const PrimFunc& f, Stmt body) {
  Ref<PrimFuncNode> n(new PrimFuncNode(*f));
  n->body = std::move(body);
  return n;
}

PrimExpr ShapeProduct(const std::vector<PrimExpr>& shape) {
  PrimExpr p = IntImm(1);
  for (const PrimExpr& d : shape) p = p * d;
  return p;
}

}  // namespace kiln::tir
