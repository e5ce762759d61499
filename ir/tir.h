// File: ir/tir.h
//
// The loop IR ("tir"): what a fused operator becomes after scheduling, and what
// the code generators consume. Expressions (`PrimExpr`) are scalar or short-
// vector values; statements (`Stmt`) are loops, stores, allocations. A
// `PrimFunc` is one kernel: buffer parameters (the DLTensors of the kernel ABI,
// runtime_c/include/kiln/kernel_abi.h) and a body.
//
// Nodes are immutable and reference counted like the graph IR's. One node class
// per family with a `kind` tag (rather than a class per kind) keeps visitors,
// the printer and the simplifier short; the factories below are the only way to
// build nodes and document which fields each kind uses.
//
//   Var i = MakeVar("i", DataType::Int(64));
//   Buffer a = MakeBuffer("A", DataType::Float(32), {IntImm(16)});
//   Stmt s = For(i, IntImm(0), IntImm(16), ForKind::kSerial,
//                Store(a, Add(Load(a, {i}), FloatImm(DataType::Float(32), 1.0)), {i}));
//
// Index arithmetic is int64 throughout (`kIndexType`). Factories never fail;
// `VerifyPrimFunc` (lowering/passes/verify.h) checks types and scoping and returns a
// status, so a malformed program is an error, not an abort.
#ifndef KILN_IR_TIR_H_
#define KILN_IR_TIR_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "ir/object.h"

namespace kiln::tir {

class ExprNode;
class StmtNode;
class BufferNode;
class IterVarNode;
class PrimFuncNode;

using PrimExpr = Ref<const ExprNode>;
// A variable is an ExprNode of kind kVar; identity is the node itself.
using Var = PrimExpr;
using Stmt = Ref<const StmtNode>;
using Buffer = Ref<const BufferNode>;
using IterVar = Ref<const IterVarNode>;
using PrimFunc = Ref<const PrimFuncNode>;

inline constexpr DataType kIndexType = DataType::Int(64);
// The type of a pointer variable (a buffer's data).
inline constexpr DataType kHandleType = DataType(DTypeCode::kOpaqueHandle, 64);

enum class ExprKind : uint8_t {
  kIntImm,         // int_value (also bool/uint constants)
  kFloatImm,       // float_value
  kStringImm,      // name = the string
  kVar,            // name = name hint
  kAdd, kSub, kMul,
  kDiv,            // floats: a / b; integers: truncating (C)
  kMod,            // integers: truncating remainder (C %); floats: fmod
  kFloorDiv,       // integers: floor(a / b)
  kFloorMod,       // integers: a - floor(a / b) * b
  kMin, kMax,
  kEQ, kNE, kLT, kLE, kGT, kGE,  // dtype bool (lanes of the operands)
  kAnd, kOr, kNot,                // bool operands
  kSelect,         // args = {cond, true_value, false_value}; both sides evaluated
  kCast,           // args = {value}; dtype = target
  kCall,           // name = intrinsic (see below), args; effect says if it is pure
  kLoad,           // buffer, args = indices (multi-dim before StorageFlatten, 1 after)
  kRamp,           // args = {base, stride}; dtype.lanes() = lanes
  kBroadcast,      // args = {scalar value}; dtype.lanes() = lanes
  kLet,            // args = {var, value, body}
  kReduce,         // reduce_kind, args = {source, condition[, index]}, axes
  kProducerLoad,   // producer = a te::Tensor node, args = indices (tensor expressions only)
};

// Commutative reductions of tensor expressions (lowering/te.h).
enum class ReduceKind : uint8_t {
  kSum,
  kProd,
  kMax,
  kMin,
  // Index of the extreme value: args = {value, flat_index, condition}; the
  // result is the index (dtype of the Reduce node). int_value = 1 selects the
  // last extreme instead of the first. NaN counts as the extreme (first NaN wins).
  kArgMax,
  kArgMin,
};

// Intrinsics (kCall names). Pure math, element type = dtype, vectorizable:
//   "exp" "log" "sqrt" "rsqrt" "tanh" "sigmoid" "erf" "pow" "fabs" "floor"
//   "ceil" "round" (half to even) "trunc" "sin" "cos" "isnan" "fmod"
//   "copysign" "exp2" "log2" "log1p" "expm1"
//   "ldexp"(x, n)  x * 2^n for a float x and an integral float n (exact for
//                  n in [-252, 254]; what it gives outside is unspecified)
//   "tan" "asin" "acos" "atan" "sinh" "cosh" "asinh" "acosh" "atanh"
// Builtins:
//   "if_then_else"(c, t, f)  like Select but only the taken side is evaluated
//   "likely"(c)              a hint for LoopPartition: c is usually true
//   "reinterpret"(x)         bit cast to dtype
//   "shape_of"(buffer_var, i) / "ndim_of" — reserved for codegen
// Anything else is an external C function (`effect` = kOpaque).
enum class CallEffect : uint8_t { kPure, kReadState, kOpaque };

class ExprNode : public Object {
 public:
  ExprKind kind = ExprKind::kIntImm;
  DataType dtype;
  int64_t int_value = 0;
  double float_value = 0;
  std::string name;
  std::vector<PrimExpr> args;
  Buffer buffer;                 // kLoad
  Ref<const Object> producer;    // kProducerLoad
  std::vector<IterVar> axes;     // kReduce
  ReduceKind reduce_kind = ReduceKind::kSum;
  CallEffect effect = CallEffect::kPure;

  static bool IsInstance(const Object* o) { return dynamic_cast<const ExprNode*>(o) != nullptr; }
  bool is_const_int() const { return kind == ExprKind::kIntImm; }
  bool is_var() const { return kind == ExprKind::kVar; }
};

enum class ForKind : uint8_t {
  kSerial,
  kParallel,      // iterations split over the runtime's thread pool
  kVectorized,    // becomes Ramp/Broadcast lanes (VectorizeLoop)
  kUnrolled,      // fully unrolled (UnrollLoop)
  kThreadBinding, // GPU: tag = "blockIdx.x", "threadIdx.y", ...
};
const char* ForKindName(ForKind k);

enum class StmtKind : uint8_t {
  kFor,         // var, a = min, b = extent, for_kind, tag = thread tag, body[0]
  kLetStmt,     // var, a = value, body[0]
  kAttr,        // tag = key, a = value, body[0]; node = optional subject (an IterVar, a Buffer)
  kIfThenElse,  // a = condition, body = {then} or {then, else}
  kSeq,         // body = children (never nested, never empty, see Seq())
  kStore,       // buffer, a = value, indices
  kAllocate,    // buffer (its data var is bound over body[0]); tag = storage scope
  kEvaluate,    // a = expression evaluated for its effect (a call); IntImm 0 = no-op
  kAssert,      // a = condition, tag = message, body[0]
};

class StmtNode : public Object {
 public:
  StmtKind kind = StmtKind::kEvaluate;
  Var var;
  PrimExpr a, b;
  ForKind for_kind = ForKind::kSerial;
  std::string tag;
  Buffer buffer;
  std::vector<PrimExpr> indices;
  std::vector<Stmt> body;
  Ref<const Object> node;  // kAttr's subject
  // kFor: annotations such as {"pragma_unroll_explicit", "0"}.
  std::map<std::string, std::string> annotations;

  static bool IsInstance(const Object* o) { return dynamic_cast<const StmtNode*>(o) != nullptr; }
  const Stmt& body0() const { return body[0]; }
};

// A region of memory: a kernel argument or a temporary. Before StorageFlatten
// a buffer is indexed with one index per dim; after it, with one flat index.
class BufferNode : public Object {
 public:
  Var data;                  // handle variable holding the base pointer
  std::string name;
  DataType dtype;            // element type (lanes 1)
  std::vector<PrimExpr> shape;
  std::vector<PrimExpr> strides;  // empty = compact row-major
  PrimExpr elem_offset;      // elements; null = 0
  std::string scope = "global";  // "global", "local", "shared", ...
  int64_t data_alignment = 64;   // bytes
  // storage_align per axis: (factor, offset) pairs; axis -> padding rule for strides.
  std::vector<std::pair<int64_t, int64_t>> axis_align;

  static bool IsInstance(const Object* o) { return dynamic_cast<const BufferNode*>(o) != nullptr; }
};

struct Range {
  PrimExpr min;
  PrimExpr extent;
  bool defined() const { return min.defined(); }
};

enum class IterKind : uint8_t {
  kDataPar,   // an output axis
  kReduce,    // a reduction axis
  kOrdered,   // a scan-like axis (unused for now)
  kOpaque,    // not to be touched by schedules
  kThread,    // bound to a GPU thread index (tag)
};

class IterVarNode : public Object {
 public:
  Var var;
  Range dom;          // may be undefined before InferBound
  IterKind iter_kind = IterKind::kDataPar;
  std::string thread_tag;

  static bool IsInstance(const Object* o) { return dynamic_cast<const IterVarNode*>(o) != nullptr; }
};

class PrimFuncNode : public Object {
 public:
  std::string name;
  // The kernel's arguments in order (inputs, then outputs). Shapes may use
  // symbolic Vars; the codegen binds each from the first argument dim that
  // names it and checks the rest.
  std::vector<Buffer> params;
  Stmt body;
  std::map<std::string, std::string> attrs;  // "target", "kiln.op_names", ...

  static bool IsInstance(const Object* o) { return dynamic_cast<const PrimFuncNode*>(o) != nullptr; }
};

// ---- Expression factories -------------------------------------------------

PrimExpr IntImm(int64_t v, DataType t = kIndexType);
PrimExpr FloatImm(double v, DataType t = DataType::Float(32));
PrimExpr BoolImm(bool v);
PrimExpr StringImm(absl::string_view s);
// A constant of `t` with value v (int or float as t says; lanes>1 broadcasts).
PrimExpr MakeConst(DataType t, double v);
Var MakeVar(absl::string_view name, DataType t = kIndexType);

PrimExpr Binary(ExprKind k, PrimExpr a, PrimExpr b);  // any of kAdd..kOr
PrimExpr Add(PrimExpr a, PrimExpr b);
PrimExpr Sub(PrimExpr a, PrimExpr b);
PrimExpr Mul(PrimExpr a, PrimExpr b);
PrimExpr Div(PrimExpr a, PrimExpr b);
PrimExpr Mod(PrimExpr a, PrimExpr b);
PrimExpr FloorDiv(PrimExpr a, PrimExpr b);
PrimExpr FloorMod(PrimExpr a, PrimExpr b);
PrimExpr Min(PrimExpr a, PrimExpr b);
PrimExpr Max(PrimExpr a, PrimExpr b);
PrimExpr EQ(PrimExpr a, PrimExpr b);
PrimExpr NE(PrimExpr a, PrimExpr b);
PrimExpr LT(PrimExpr a, PrimExpr b);
PrimExpr LE(PrimExpr a, PrimExpr b);
PrimExpr GT(PrimExpr a, PrimExpr b);
PrimExpr GE(PrimExpr a, PrimExpr b);
PrimExpr And(PrimExpr a, PrimExpr b);
PrimExpr Or(PrimExpr a, PrimExpr b);
PrimExpr Not(PrimExpr a);
PrimExpr Select(PrimExpr cond, PrimExpr t, PrimExpr f);
PrimExpr Cast(DataType t, PrimExpr v);  // returns v itself when it already has type t
PrimExpr Call(DataType t, absl::string_view name, std::vector<PrimExpr> args,
              CallEffect effect = CallEffect::kPure);
PrimExpr Load(Buffer buffer, std::vector<PrimExpr> indices);  // lanes from the index
PrimExpr Ramp(PrimExpr base, PrimExpr stride, int lanes);
PrimExpr Broadcast(PrimExpr value, int lanes);
PrimExpr Let(Var var, PrimExpr value, PrimExpr body);
PrimExpr Reduce(ReduceKind kind, PrimExpr source, std::vector<IterVar> axes,
                PrimExpr condition = nullptr);
// argmax/argmin: value, flat index (over the reduced axes), optional condition.
PrimExpr ArgReduce(ReduceKind kind, PrimExpr value, PrimExpr flat_index,
                   std::vector<IterVar> axes, bool select_last_index,
                   PrimExpr condition = nullptr, DataType index_type = DataType::Int(64));
PrimExpr ProducerLoad(DataType t, Ref<const Object> producer, std::vector<PrimExpr> indices);

// The identity of a reduction for dtype t (0, 1, lowest, highest).
PrimExpr ReduceIdentity(ReduceKind kind, DataType t);
// Smallest / largest finite value of t (floats: -inf/+inf).
PrimExpr MinValue(DataType t);
PrimExpr MaxValue(DataType t);

// Convenience operators with constant folding of int constants (x + 0 -> x,
// 2 * 3 -> 6). Ints mix in as index constants.
PrimExpr operator+(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator-(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator*(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator-(const PrimExpr& a);
PrimExpr operator+(const PrimExpr& a, int64_t b);
PrimExpr operator-(const PrimExpr& a, int64_t b);
PrimExpr operator*(const PrimExpr& a, int64_t b);
PrimExpr operator+(int64_t a, const PrimExpr& b);
PrimExpr operator*(int64_t a, const PrimExpr& b);

// Constant queries.
bool IsConstInt(const PrimExpr& e, int64_t* value = nullptr);
bool IsConstValue(const PrimExpr& e, int64_t value);
bool IsConstFloat(const PrimExpr& e, double* value = nullptr);

// ---- Statement factories --------------------------------------------------

Stmt For(Var var, PrimExpr min, PrimExpr extent, ForKind kind, Stmt body,
         absl::string_view thread_tag = "", std::map<std::string, std::string> annotations = {});
Stmt LetStmt(Var var, PrimExpr value, Stmt body);
Stmt AttrStmt(Ref<const Object> node, absl::string_view key, PrimExpr value, Stmt body);
Stmt IfThenElse(PrimExpr cond, Stmt then_case, Stmt else_case = nullptr);
// Flattens nested sequences and drops no-ops; one child is returned as itself;
// none gives NoOp().
Stmt Seq(std::vector<Stmt> stmts);
Stmt Store(Buffer buffer, PrimExpr value, std::vector<PrimExpr> indices);
Stmt Allocate(Buffer buffer, Stmt body, absl::string_view scope = "global");
Stmt Evaluate(PrimExpr value);
Stmt AssertStmt(PrimExpr cond, absl::string_view message, Stmt body);
Stmt NoOp();
bool IsNoOp(const Stmt& s);

// ---- Buffers, iteration variables, functions -------------------------------

Buffer MakeBuffer(absl::string_view name, DataType dtype, std::vector<PrimExpr> shape,
                  absl::string_view scope = "global");
// Same buffer (same data var) with a different shape/strides, e.g. flattened.
Buffer WithShape(const Buffer& b, std::vector<PrimExpr> shape, std::vector<PrimExpr> strides);
IterVar MakeIterVar(Range dom, Var var, IterKind kind, absl::string_view thread_tag = "");
PrimFunc MakePrimFunc(absl::string_view name, std::vector<Buffer> params, Stmt body,
                      std::map<std::string, std::string> attrs = {});
PrimFunc WithBody(const PrimFunc& f, Stmt body);

// Product of a buffer's shape (null if empty shape: a scalar buffer has 1 element).
PrimExpr ShapeProduct(const std::vector<PrimExpr>& shape);

}  // namespace kiln::tir

#endif  // KILN_IR_TIR_H_
