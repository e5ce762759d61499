// File: codegen_cuda/codegen_cuda_expr.cc — loop IR memory accesses and
// expressions to CUDA C (the Emitter of codegen_cuda_internal.h): the
// vectorized 16-byte loads and stores of a pragma_kiln_vector loop, buffer
// names and indices, 16-bit float rounding and narrow-integer wrapping,
// arithmetic, comparisons, selects, casts, and the intrinsic calls (math
// functions, bit casts). The kernel and its statements are codegen_cuda.cc.
#include "codegen_cuda/codegen_cuda_internal.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "codegen_cuda/warp_reduce.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"

namespace kiln::codegen_cuda::internal {
namespace {

std::string FloatLiteral(double v, DataType t) {
  const bool f64 = t.code() == DTypeCode::kFloat && t.bits() == 64;
  if (std::isnan(v)) return f64 ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) {
    if (f64) return v > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                          : "__longlong_as_double((long long)0xfff0000000000000ULL)";
    return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float((int)0xff800000u)";
  }
  std::string s = f64 ? absl::StrFormat("%.17g", v) : absl::StrFormat("%.9g", static_cast<float>(v));
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (!f64) s += "f";
  return s[0] == '-' ? absl::StrCat("(", s, ")") : s;
}

}  // namespace

// ---- Vectorized global accesses (the "pragma_kiln_vector" loop) ----
//
// The schedule marks the innermost loop of 4 consecutive elements of an
// injective output (8 of 2-byte ones). When its body is one store
// `out[base + v] = value` to a kernel parameter of that element size with
// `base` a provable multiple of the lanes, the loop becomes one 16-byte
// store, and every load in `value` of a parameter of the same element
// size at `base' + v` (base' a multiple of the lanes) one 16-byte load
// (float4 / int4 / uint4, or uint4 through an aligned array of 8 2-byte
// words: ld.global.v4 / st.global.v4); other loads
// (a broadcast bias) stay per lane. Whether the pointers themselves are
// 16-byte aligned is only known at run time (a caller's tensor may start
// anywhere), so the vector form runs under a test of all of them (the same
// for every thread of the launch) and the scalar loop otherwise. Returns
// false, emitting nothing, when the loop is not of that form.

// e == base + v with v appearing once, as a top-level addend.
bool Emitter::SplitLane(const PrimExpr& e, const ExprNode* v, PrimExpr* base) {
  std::vector<PrimExpr> terms;
  std::function<void(const PrimExpr&)> flat = [&](const PrimExpr& x) {
    if (x->kind == ExprKind::kAdd) {
      flat(x->args[0]);
      flat(x->args[1]);
    } else {
      terms.push_back(x);
    }
  };
  flat(e);
  int lane = 0;
  PrimExpr b;
  for (const PrimExpr& t : terms) {
    if (t.get() == v) {
      ++lane;
      continue;
    }
    if (tir::UsesVar(t, [&](const ExprNode* n) { return n == v; })) return false;
    b = b ? tir::Add(b, t) : t;
  }
  if (lane != 1) return false;
  *base = b ? b : tir::IntImm(0);
  return true;
}

// Whether e is provably a multiple of m (sums and products of constants).
bool Emitter::MultipleOf(const PrimExpr& e, int64_t m) {
  int64_t c = 0;
  if (tir::IsConstInt(e, &c)) return c % m == 0;
  if (e->kind == ExprKind::kAdd || e->kind == ExprKind::kSub) {
    return MultipleOf(e->args[0], m) && MultipleOf(e->args[1], m);
  }
  if (e->kind == ExprKind::kMul) return MultipleOf(e->args[0], m) || MultipleOf(e->args[1], m);
  return false;
}

const char* Emitter::VectorType4(DataType t) {
  if (t.lanes() != 1 || t.bits() != 32) return nullptr;
  if (t.is_float()) return "float4";
  if (t.is_int()) return "int4";
  if (t.is_uint()) return "uint4";
  return nullptr;
}

bool Emitter::IsParam(const Buffer& b) const {
  for (const Buffer& p : f_->params) {
    if (p->data.get() == b->data.get()) return !b->elem_offset || tir::IsConstValue(b->elem_offset, 0);
  }
  return false;
}

// Whether a buffer of `t` is read or written `lanes` elements (16 bytes) at a time.
bool Emitter::VectorOf(DataType t, int64_t lanes) {
  return (lanes == 4 && VectorType4(t) != nullptr) || (lanes == 8 && Vector8(t));
}

absl::StatusOr<bool> Emitter::EmitVector(const Stmt& loop) {
  int64_t lanes = 0;
  if (loop->kind != StmtKind::kFor || loop->for_kind != ForKind::kSerial ||
      !tir::IsConstValue(loop->a, 0) || !tir::IsConstInt(loop->b, &lanes) ||
      (lanes != 4 && lanes != 8)) {
    return false;
  }
  const Stmt& st = loop->body0();
  const ExprNode* v = loop->var.get();
  PrimExpr out_base;
  if (st->kind != StmtKind::kStore || st->indices.size() != 1 || !IsParam(st->buffer) ||
      !VectorOf(st->buffer->dtype, lanes) || !SplitLane(st->indices[0], v, &out_base) ||
      !MultipleOf(out_base, lanes)) {
    return false;
  }
  // The loads to vectorize, each replaced by a placeholder var.
  struct VLoad {
    Buffer buffer;
    PrimExpr base;
    tir::Var slot;
  };
  std::vector<VLoad> vloads;
  class Replace : public tir::StmtExprMutator {
   public:
    Replace(const ExprNode* v, int64_t lanes, std::vector<VLoad>* out, const Emitter* em)
        : v_(v), lanes_(lanes), out_(out), em_(em) {}
    PrimExpr VisitExpr_(const PrimExpr& e) override {
      PrimExpr base;
      if (e->kind == ExprKind::kLoad && e->args.size() == 1 && em_->IsParam(e->buffer) &&
          VectorOf(e->buffer->dtype, lanes_) && SplitLane(e->args[0], v_, &base) &&
          MultipleOf(base, lanes_)) {
        for (const VLoad& l : *out_) {
          if (l.buffer->data.get() == e->buffer->data.get() && tir::ExprDeepEqual(l.base, base)) {
            return l.slot;
          }
        }
        tir::Var slot = tir::MakeVar(absl::StrCat("kv", out_->size()), e->dtype);
        out_->push_back({e->buffer, base, slot});
        return slot;
      }
      return MutateChildren(e);
    }

   private:
    const ExprNode* v_;
    int64_t lanes_;
    std::vector<VLoad>* out_;
    const Emitter* em_;
  };
  Replace rep(v, lanes, &vloads, this);
  const PrimExpr value = rep.VisitExpr(st->a);
  // Every pointer the vector form touches must be 16-byte aligned.
  KILN_ASSIGN_OR_RETURN(std::string out_name, BufferName(st->buffer));
  std::vector<std::string> ptrs = {absl::StrCat("(unsigned long long)", out_name)};
  for (const VLoad& l : vloads) {
    KILN_ASSIGN_OR_RETURN(std::string n, BufferName(l.buffer));
    ptrs.push_back(absl::StrCat("(unsigned long long)", n));
  }
  Line(absl::StrCat("if (((", absl::StrJoin(ptrs, " | "), ") & 15ull) == 0ull) {"));
  ++indent_;
  // Lane i of a vector value `name`: name.x .. name.w (float4, int4,
  // uint4), or name[i] of an aligned array of 8 2-byte words (read as
  // float for float16/bfloat16, as the scalar loads are).
  static const char* const kLane[] = {".x", ".y", ".z", ".w"};
  auto lane_of = [&](const std::string& name, DataType t, int64_t i) {
    if (lanes == 4) return absl::StrCat(name, kLane[i]);
    const std::string w = absl::StrCat(name, "[", i, "]");
    if (IsHalf(t)) return absl::StrCat("kiln_h2f(", w, ")");
    if (IsBF16(t)) return absl::StrCat("kiln_bf2f(", w, ")");
    return w;
  };
  std::vector<std::string> names;
  for (const VLoad& l : vloads) {
    KILN_ASSIGN_OR_RETURN(std::string n, BufferName(l.buffer));
    KILN_ASSIGN_OR_RETURN(std::string b, Expr(l.base));
    const std::string name = Bind(l.slot, l.slot->name);
    names.push_back(name);
    if (lanes == 4) {
      const char* ty = VectorType4(l.buffer->dtype);
      Line(absl::StrCat("const ", ty, " ", name, " = *(const ", ty, "*)(", n, " + ", b, ");"));
    } else {
      KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(l.buffer->dtype));
      Line(absl::StrCat("__align__(16) ", ty, " ", name, "[8];"));
      Line(absl::StrCat("*(uint4*)", name, " = *(const uint4*)(", n, " + ", b, ");"));
    }
  }
  const DataType odt = st->buffer->dtype;
  const std::string o = Bind(loop->var, "kvo");
  if (lanes == 4) {
    Line(absl::StrCat(VectorType4(odt), " ", o, ";"));
  } else {
    KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(odt));
    Line(absl::StrCat("__align__(16) ", ty, " ", o, "[8];"));
  }
  for (int64_t lane = 0; lane < lanes; ++lane) {
    tir::VarMap m;
    m[v] = tir::IntImm(lane);
    for (size_t i = 0; i < vloads.size(); ++i) {
      tir::Var lv = tir::MakeVar(absl::StrCat(names[i], "_", lane), vloads[i].slot->dtype);
      names_[lv.get()] = lane_of(names[i], vloads[i].buffer->dtype, lane);
      m[vloads[i].slot.get()] = lv;
    }
    KILN_ASSIGN_OR_RETURN(std::string e, Expr(tir::Substitute(value, m)));
    if (IsHalf(odt)) e = absl::StrCat("kiln_f2h(", e, ")");
    if (IsBF16(odt)) e = absl::StrCat("kiln_f2bf(", e, ")");
    Line(absl::StrCat(o, lanes == 4 ? kLane[lane] : absl::StrCat("[", lane, "]"), " = ", e, ";"));
  }
  KILN_ASSIGN_OR_RETURN(std::string ob, Expr(out_base));
  if (lanes == 4) {
    Line(absl::StrCat("*(", VectorType4(odt), "*)(", out_name, " + ", ob, ") = ", o, ";"));
  } else {
    Line(absl::StrCat("*(uint4*)(", out_name, " + ", ob, ") = *(const uint4*)", o, ";"));
  }
  --indent_;
  Line("} else {");
  ++indent_;
  KILN_RETURN_IF_ERROR(EmitFor(loop));
  --indent_;
  Line("}");
  return true;
}

// ---- Expressions ----
absl::StatusOr<std::string> Emitter::BufferName(const Buffer& b) {
  auto it = buffer_names_.find(b->data.get());
  if (it == buffer_names_.end()) {
    return absl::InvalidArgumentError(absl::StrCat("buffer '", b->name, "' is not in scope"));
  }
  return it->second;
}

absl::StatusOr<std::string> Emitter::Index(const Buffer& b, const PrimExpr& idx) {
  if (idx->dtype.lanes() != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "a vector access of '", b->name, "' (the CUDA backend emits scalar code)"));
  }
  KILN_ASSIGN_OR_RETURN(std::string i, Expr(idx));
  if (b->elem_offset && !tir::IsConstValue(b->elem_offset, 0)) {
    KILN_ASSIGN_OR_RETURN(std::string off, Expr(b->elem_offset));
    return absl::StrCat("(", off, " + ", i, ")");
  }
  return i;
}

// Rounds a float computation of a 16-bit float type to that type.
std::string Emitter::Round(DataType t, std::string v) {
  if (IsHalf(t)) return absl::StrCat("kiln_rh(", v, ")");
  if (IsBF16(t)) return absl::StrCat("kiln_rbf(", v, ")");
  return v;
}

// Narrow integer results wrap to their type (C promotes them to int).
absl::StatusOr<std::string> Emitter::Wrap(DataType t, std::string v) {
  if ((t.is_int() || t.is_uint()) && t.bits() < 32) {
    KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(t));
    return absl::StrCat("((", ty, ")", v, ")");
  }
  return Round(t, std::move(v));
}

absl::StatusOr<std::string> Emitter::Expr(const PrimExpr& e) {
  if (e->dtype.lanes() != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "vector expression of type ", e->dtype.ToString(), " (the CUDA backend emits scalar code)"));
  }
  const DataType t = e->dtype;
  switch (e->kind) {
    case ExprKind::kIntImm: {
      if (t.is_bool()) return std::string(e->int_value != 0 ? "true" : "false");
      if (t.is_uint()) {
        const uint64_t u = static_cast<uint64_t>(e->int_value);
        if (t.bits() == 64) return absl::StrCat(u, "ULL");
        KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(t));
        return absl::StrCat("((", ty, ")", u, "u)");
      }
      if (t.bits() == 64) {
        if (e->int_value == std::numeric_limits<int64_t>::min()) {
          return std::string("(-9223372036854775807LL - 1)");
        }
        return e->int_value < 0 ? absl::StrCat("(", e->int_value, "LL)")
                                : absl::StrCat(e->int_value, "LL");
      }
      if (t.bits() == 32) {
        if (e->int_value == std::numeric_limits<int32_t>::min()) return std::string("(-2147483647 - 1)");
        return e->int_value < 0 ? absl::StrCat("(", e->int_value, ")") : absl::StrCat(e->int_value);
      }
      KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(t));
      return absl::StrCat("((", ty, ")", e->int_value, ")");
    }
    case ExprKind::kFloatImm:
      return FloatLiteral(e->float_value, t);
    case ExprKind::kStringImm:
      return absl::UnimplementedError("a string value in CUDA code");
    case ExprKind::kVar:
      return NameOf(e.get());
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kDiv: {
      KILN_ASSIGN_OR_RETURN(std::string a, Expr(e->args[0]));
      KILN_ASSIGN_OR_RETURN(std::string b, Expr(e->args[1]));
      const char* op = e->kind == ExprKind::kAdd   ? " + "
                       : e->kind == ExprKind::kSub ? " - "
                       : e->kind == ExprKind::kMul ? " * "
                                                   : " / ";
      return Wrap(t, absl::StrCat("(", a, op, b, ")"));
    }
    case ExprKind::kMod:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
    case ExprKind::kMin:
    case ExprKind::kMax: {
      KILN_ASSIGN_OR_RETURN(std::string a, Expr(e->args[0]));
      KILN_ASSIGN_OR_RETURN(std::string b, Expr(e->args[1]));
      static const std::map<ExprKind, std::string> kFn = {
          {ExprKind::kMod, "kiln_mod"},           {ExprKind::kFloorDiv, "kiln_floordiv"},
          {ExprKind::kFloorMod, "kiln_floormod"}, {ExprKind::kMin, "kiln_min"},
          {ExprKind::kMax, "kiln_max"}};
      if (e->kind == ExprKind::kMod && t.is_integral()) {
        return Wrap(t, absl::StrCat("(", a, " % ", b, ")"));
      }
      KILN_ASSIGN_OR_RETURN(std::string vt, ValueType(t));
      return Wrap(t, absl::StrCat(kFn.at(e->kind), "<", vt, ">(", a, ", ", b, ")"));
    }
    case ExprKind::kEQ:
    case ExprKind::kNE:
    case ExprKind::kLT:
    case ExprKind::kLE:
    case ExprKind::kGT:
    case ExprKind::kGE:
    case ExprKind::kAnd:
    case ExprKind::kOr: {
      KILN_ASSIGN_OR_RETURN(std::string a, Expr(e->args[0]));
      KILN_ASSIGN_OR_RETURN(std::string b, Expr(e->args[1]));
      static const std::map<ExprKind, std::string> kOp = {
          {ExprKind::kEQ, " == "}, {ExprKind::kNE, " != "}, {ExprKind::kLT, " < "},
          {ExprKind::kLE, " <= "}, {ExprKind::kGT, " > "},  {ExprKind::kGE, " >= "},
          {ExprKind::kAnd, " && "}, {ExprKind::kOr, " || "}};
      return absl::StrCat("(", a, kOp.at(e->kind), b, ")");
    }
    case ExprKind::kNot: {
      KILN_ASSIGN_OR_RETURN(std::string a, Expr(e->args[0]));
      return absl::StrCat("(!", a, ")");
    }
    case ExprKind::kSelect: {
      KILN_ASSIGN_OR_RETURN(std::string c, Expr(e->args[0]));
      KILN_ASSIGN_OR_RETURN(std::string a, Expr(e->args[1]));
      KILN_ASSIGN_OR_RETURN(std::string b, Expr(e->args[2]));
      return absl::StrCat("(", c, " ? ", a, " : ", b, ")");
    }
    case ExprKind::kCast:
      return CastExpr(t, e->args[0]);
    case ExprKind::kCall:
      return CallExpr(e);
    case ExprKind::kLoad: {
      if (e->args.size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "load of '", e->buffer->name, "' with ", e->args.size(),
            " indices (run storage_flatten first: the CUDA backend takes flat buffers)"));
      }
      KILN_ASSIGN_OR_RETURN(std::string name, BufferName(e->buffer));
      KILN_ASSIGN_OR_RETURN(std::string idx, Index(e->buffer, e->args[0]));
      std::string v = absl::StrCat(name, "[", idx, "]");
      if (IsHalf(e->buffer->dtype)) return absl::StrCat("kiln_h2f(", v, ")");
      if (IsBF16(e->buffer->dtype)) return absl::StrCat("kiln_bf2f(", v, ")");
      return v;
    }
    case ExprKind::kLet: {
      KILN_ASSIGN_OR_RETURN(std::string vt, ValueType(e->args[0]->dtype));
      KILN_ASSIGN_OR_RETURN(std::string value, Expr(e->args[1]));
      const std::string name = Bind(e->args[0], e->args[0]->name);
      KILN_ASSIGN_OR_RETURN(std::string body, Expr(e->args[2]));
      return absl::StrCat("([&]() { const ", vt, " ", name, " = ", value, "; return ", body,
                          "; }())");
    }
    case ExprKind::kRamp:
    case ExprKind::kBroadcast:
      return absl::UnimplementedError("vector expression (ramp/broadcast) in CUDA code");
    case ExprKind::kReduce:
    case ExprKind::kProducerLoad:
      return absl::InvalidArgumentError(
          "a tensor-expression node (reduce / producer load) in loop IR: schedule and lower it "
          "first");
  }
  return absl::InternalError("unknown expression kind");
}

absl::StatusOr<std::string> Emitter::CastExpr(DataType to, const PrimExpr& x) {
  KILN_ASSIGN_OR_RETURN(std::string v, Expr(x));
  const DataType from = x->dtype;
  if (to.is_bool()) return absl::StrCat("(", v, " != 0)");
  if (Is16BitFloat(to)) return Round(to, absl::StrCat("((float)", v, ")"));
  KILN_ASSIGN_OR_RETURN(std::string ty, StorageType(to));
  if (from.is_float() && (to.is_int() || to.is_uint())) {
    // C leaves out-of-range conversions undefined; PTX's cvt.rzi saturates
    // (NaN to 0), which is what this does on every GPU.
    const bool sgn = to.is_int();
    const int bits = to.bits();
    // The range as doubles (hi rounds up to 2^bits-ish for 64 bits: x >= it
    // saturates) and as values of the type.
    const double lo = sgn ? -std::ldexp(1.0, bits - 1) : 0.0;
    const double hi = sgn ? std::ldexp(1.0, bits - 1) - 1.0 : std::ldexp(1.0, bits) - 1.0;
    std::string tlo, thi;
    if (sgn) {
      tlo = bits == 64 ? "(-9223372036854775807LL - 1)" : absl::StrCat("(", ty, ")(", static_cast<int64_t>(lo), ")");
      thi = bits == 64 ? "9223372036854775807LL" : absl::StrCat("(", ty, ")", static_cast<int64_t>(hi));
    } else {
      tlo = absl::StrCat("(", ty, ")0");
      thi = bits == 64 ? "18446744073709551615ULL" : absl::StrCat("(", ty, ")", static_cast<uint64_t>(hi), "u");
    }
    return absl::StrCat("kiln_f2i<", ty, ">(", v, ", ", absl::StrFormat("%.17g", lo), ", ",
                        absl::StrFormat("%.17g", hi), ", ", tlo, ", ", thi, ")");
  }
  return absl::StrCat("((", ty, ")", v, ")");
}

absl::StatusOr<std::string> Emitter::CallExpr(const PrimExpr& e) {
  const std::string& n = e->name;
  const DataType t = e->dtype;
  std::vector<std::string> args;
  for (const PrimExpr& a : e->args) {
    KILN_ASSIGN_OR_RETURN(std::string s, Expr(a));
    args.push_back(std::move(s));
  }
  auto need = [&](size_t k) -> absl::Status {
    if (args.size() != k) {
      return absl::InvalidArgumentError(
          absl::StrCat("call '", n, "' with ", args.size(), " arguments, expected ", k));
    }
    return absl::OkStatus();
  };
  if (n == "likely") {
    KILN_RETURN_IF_ERROR(need(1));
    return args[0];
  }
  if (n == "if_then_else") {
    KILN_RETURN_IF_ERROR(need(3));
    return absl::StrCat("(", args[0], " ? ", args[1], " : ", args[2], ")");
  }
  if (n == "isnan") {
    KILN_RETURN_IF_ERROR(need(1));
    if (!e->args[0]->dtype.is_float()) return std::string("false");
    return absl::StrCat("kiln_isnan(", args[0], ")");
  }
  if (n == kShflXor) {  // codegen_cuda/warp_reduce.h
    KILN_RETURN_IF_ERROR(need(2));
    return Round(t, absl::StrCat("__shfl_xor_sync(0xffffffffu, ", args[0], ", (int)(", args[1],
                                 "))"));
  }
  if (n == "reinterpret") {
    KILN_RETURN_IF_ERROR(need(1));
    const DataType from = e->args[0]->dtype;
    if (from.bits() != t.bits()) {
      return absl::InvalidArgumentError(absl::StrCat("reinterpret of ", from.ToString(), " as ",
                                                     t.ToString(), ": sizes differ"));
    }
    std::string bits = args[0];
    if (IsHalf(from)) bits = absl::StrCat("kiln_f2h(", bits, ")");
    if (IsBF16(from)) bits = absl::StrCat("kiln_f2bf(", bits, ")");
    KILN_ASSIGN_OR_RETURN(std::string from_ty, StorageType(from));
    KILN_ASSIGN_OR_RETURN(std::string to_ty, StorageType(t));
    std::string r = absl::StrCat("kiln_bitcast<", to_ty, ", ", from_ty, ">(", bits, ")");
    if (IsHalf(t)) return absl::StrCat("kiln_h2f(", r, ")");
    if (IsBF16(t)) return absl::StrCat("kiln_bf2f(", r, ")");
    return r;
  }
  if (!t.is_float()) {
    return absl::UnimplementedError(absl::StrCat(
        "call '", n, "' of type ", t.ToString(),
        (e->effect == tir::CallEffect::kOpaque ? " (an external function: none exist on the GPU)" : "")));
  }
  const bool f64 = t.code() == DTypeCode::kFloat && t.bits() == 64;
  const std::string sfx = f64 ? "" : "f";
  static const std::set<std::string> kUnary = {
      "exp",  "log",  "sqrt", "rsqrt", "tanh", "erf",  "fabs",  "floor", "ceil",
      "trunc", "sin", "cos",  "exp2",  "log2", "log1p", "expm1", "tan",   "asin",
      "acos", "atan", "sinh", "cosh",  "asinh", "acosh", "atanh"};
  static const std::set<std::string> kBinary = {"pow", "fmod", "copysign"};
  std::string r;
  if (kUnary.count(n)) {
    KILN_RETURN_IF_ERROR(need(1));
    r = absl::StrCat(n, sfx, "(", args[0], ")");
  } else if (kBinary.count(n)) {
    KILN_RETURN_IF_ERROR(need(2));
    r = absl::StrCat(n, sfx, "(", args[0], ", ", args[1], ")");
  } else if (n == "round") {  // half to even
    KILN_RETURN_IF_ERROR(need(1));
    r = absl::StrCat("rint", sfx, "(", args[0], ")");
  } else if (n == "sigmoid") {
    KILN_RETURN_IF_ERROR(need(1));
    r = f64 ? absl::StrCat("(1.0 / (1.0 + exp(-(", args[0], "))))")
            : absl::StrCat("(1.0f / (1.0f + expf(-(", args[0], "))))");
  } else if (n == "ldexp") {
    KILN_RETURN_IF_ERROR(need(2));
    r = absl::StrCat("ldexp", sfx, "(", args[0], ", (int)(", args[1], "))");
  } else {
    return absl::UnimplementedError(absl::StrCat(
        "call '", n, "'",
        (e->effect == tir::CallEffect::kOpaque ? " (an external function: none exist on the GPU)"
                                               : " has no CUDA implementation")));
  }
  return Round(t, r);
}

}  // namespace kiln::codegen_cuda::internal
