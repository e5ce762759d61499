// File: codegen_llvm/lower_expr.cc — loop-IR expressions (types, constants,
// arithmetic, casts, calls) to LLVM IR. README.md says what each node becomes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_llvm/lower.h"
#include "ir/status_macros.h"
#include "ir/tir_printer.h"
#include "llvm/Analysis/VectorUtils.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln::codegen::internal {

using tir::ExprKind;
using tir::ExprNode;
using tir::PrimExpr;

namespace {

DataType ScalarOf(DataType t) { return DataType(t.code(), t.bits(), 1); }
DataType LanesOf(DataType t, int lanes) { return DataType(t.code(), t.bits(), lanes); }
bool IsF16(DataType t) { return t.code() == DTypeCode::kFloat && t.bits() == 16; }
bool IsBF16(DataType t) { return t.code() == DTypeCode::kBFloat; }
// float16 and bfloat16 are computed in float32.
bool IsHalfLike(DataType t) { return IsF16(t) || IsBF16(t); }
bool SameScalar(DataType a, DataType b) { return a.code() == b.code() && a.bits() == b.bits(); }

// Constant integer value of e, also through a Broadcast.
bool ConstIntOf(const PrimExpr& e, int64_t* v) {
  if (tir::IsConstInt(e, v)) return true;
  return e && e->kind == ExprKind::kBroadcast && tir::IsConstInt(e->args[0], v);
}

// Round-to-nearest-even float -> bfloat16 bits, NaN kept quiet (constants).
uint16_t FloatToBF16Bits(float f) {
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof(bits));
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7FFFu + lsb) >> 16);
}

const char* KindName(ExprKind k) { return tir::ExprKindName(k); }

}  // namespace

// ---- Types ------------------------------------------------------------------

absl::StatusOr<llvm::Type*> FunctionLowering::ScalarRegType(DataType t) {
  switch (t.code()) {
    case DTypeCode::kBool:
      return b_.getInt1Ty();
    case DTypeCode::kInt:
    case DTypeCode::kUInt:
      if (t.bits() == 0) break;
      return b_.getIntNTy(t.bits());
    case DTypeCode::kFloat:
      if (t.bits() == 16) return b_.getHalfTy();
      if (t.bits() == 32) return b_.getFloatTy();
      if (t.bits() == 64) return b_.getDoubleTy();
      break;
    case DTypeCode::kBFloat:
      if (t.bits() == 16) return b_.getInt16Ty();  // bfloat16 bits
      break;
    case DTypeCode::kOpaqueHandle:
      if (t.bits() == 64) return b_.getPtrTy();
      break;
  }
  return Unsupported(absl::StrCat("data type ", t.ToString(), " (code ", static_cast<int>(t.code()),
                                  ", bits ", t.bits(), ")"));
}

llvm::Type* FunctionLowering::WithLanes(llvm::Type* scalar, int lanes) {
  if (lanes <= 1) return scalar;
  return llvm::FixedVectorType::get(scalar, static_cast<unsigned>(lanes));
}

absl::StatusOr<llvm::Type*> FunctionLowering::RegType(DataType t) {
  KILN_ASSIGN_OR_RETURN(llvm::Type * s, ScalarRegType(ScalarOf(t)));
  if (t.lanes() > 1 && s->isPointerTy()) {
    return Unsupported(absl::StrCat("vector of handles (", t.ToString(), ")"));
  }
  return WithLanes(s, t.lanes());
}

absl::StatusOr<llvm::Type*> FunctionLowering::MemType(DataType t) {
  DataType s = ScalarOf(t);
  if (s.is_bool()) return b_.getInt8Ty();  // DLPack stores bool as one byte
  if ((s.is_int() || s.is_uint()) && s.bits() % 8 != 0) {
    return Unsupported(absl::StrCat("buffers of ", s.ToString(), " (not a whole number of bytes)"));
  }
  if (s.code() == DTypeCode::kOpaqueHandle) {
    return Unsupported("buffers of handles");
  }
  return ScalarRegType(s);
}

llvm::Value* FunctionLowering::Splat(llvm::Value* v, int lanes) {
  if (lanes <= 1 || v->getType()->isVectorTy()) return v;
  return b_.CreateVectorSplat(static_cast<unsigned>(lanes), v);
}

llvm::Value* FunctionLowering::WidenToF32(llvm::Value* v, DataType t) {
  llvm::Type* f32 = WithLanes(b_.getFloatTy(), t.lanes());
  if (IsBF16(t)) {
    llvm::Value* w = b_.CreateZExt(v, WithLanes(b_.getInt32Ty(), t.lanes()));
    return b_.CreateBitCast(b_.CreateShl(w, 16), f32);
  }
  if (IsF16(t)) return b_.CreateFPExt(v, f32);
  return v;
}

llvm::Value* FunctionLowering::NarrowFromF32(llvm::Value* v, DataType t) {
  if (IsBF16(t)) {
    // Round to nearest even; a NaN stays a (quiet) NaN with its sign.
    llvm::Type* i32 = WithLanes(b_.getInt32Ty(), t.lanes());
    llvm::Value* bits = b_.CreateBitCast(v, i32);
    llvm::Value* hi = b_.CreateLShr(bits, 16);
    llvm::Value* lsb = b_.CreateAnd(hi, llvm::ConstantInt::get(i32, 1));
    llvm::Value* bias = b_.CreateAdd(lsb, llvm::ConstantInt::get(i32, 0x7FFF));
    llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, bias), 16);
    llvm::Value* quiet = b_.CreateOr(hi, llvm::ConstantInt::get(i32, 0x40));
    llvm::Value* is_nan = b_.CreateFCmpUNO(v, v);
    return b_.CreateTrunc(b_.CreateSelect(is_nan, quiet, rounded),
                          WithLanes(b_.getInt16Ty(), t.lanes()));
  }
  if (IsF16(t)) return b_.CreateFPTrunc(v, WithLanes(b_.getHalfTy(), t.lanes()));
  if (t.is_float() && t.bits() == 64)
    return b_.CreateFPExt(v, WithLanes(b_.getDoubleTy(), t.lanes()));
  return v;
}

llvm::Value* FunctionLowering::ToBool(llvm::Value* v, DataType t) {
  if (t.is_bool()) return v;
  if (t.is_float()) {
    llvm::Value* f = WidenToF32(v, t);
    return b_.CreateFCmpUNE(f, llvm::Constant::getNullValue(f->getType()));
  }
  return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
}

// ---- Expressions --------------------------------------------------------------

absl::StatusOr<llvm::Value*> FunctionLowering::EmitExpr(const PrimExpr& e) {
  if (!e) return Invalid("null expression");
  const ExprNode* n = e.get();
  switch (n->kind) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
      return EmitConst(n);
    case ExprKind::kStringImm:
      return StringConstant(n->name);
    case ExprKind::kVar: {
      auto it = vars_.find(n);
      if (it == vars_.end()) {
        return Invalid(absl::StrCat("variable '", n->name,
                                    "' is used but not bound (not a loop or let variable, "
                                    "a buffer, or a dim of a parameter's shape)"));
      }
      return it->second;
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
    case ExprKind::kOr:
      return EmitBinary(n);
    case ExprKind::kNot: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * a, EmitExpr(n->args[0]));
      return b_.CreateNot(ToBool(a, n->args[0]->dtype));
    }
    case ExprKind::kSelect: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * c, EmitExpr(n->args[0]));
      KILN_ASSIGN_OR_RETURN(llvm::Value * t, EmitExpr(n->args[1]));
      KILN_ASSIGN_OR_RETURN(llvm::Value * f, EmitExpr(n->args[2]));
      if (!SameScalar(n->args[1]->dtype, n->args[2]->dtype)) {
        return Invalid(absl::StrCat("select between ", n->args[1]->dtype.ToString(), " and ",
                                    n->args[2]->dtype.ToString()));
      }
      int lanes = n->dtype.lanes();
      int clanes = n->args[0]->dtype.lanes();
      if (clanes != 1 && clanes != lanes) {
        return Invalid(absl::StrCat("select condition has ", clanes, " lanes, values ", lanes));
      }
      c = ToBool(c, n->args[0]->dtype);
      return b_.CreateSelect(c, Splat(t, lanes), Splat(f, lanes));
    }
    case ExprKind::kCast: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitExpr(n->args[0]));
      return EmitCast(v, n->args[0]->dtype, n->dtype);
    }
    case ExprKind::kCall:
      return EmitCall(n);
    case ExprKind::kLoad:
      return EmitLoad(n);
    case ExprKind::kRamp:
      return EmitRamp(n);
    case ExprKind::kBroadcast: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitExpr(n->args[0]));
      if (v->getType()->isVectorTy()) return Invalid("broadcast of a vector");
      return Splat(v, n->dtype.lanes());
    }
    case ExprKind::kLet: {
      KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitAs(n->args[1], n->args[0]->dtype));
      llvm::Value* old = Bind(n->args[0], v);
      absl::StatusOr<llvm::Value*> body = EmitExpr(n->args[2]);
      Restore(n->args[0], old);
      return body;
    }
    case ExprKind::kReduce:
      return Unsupported(
          "a Reduce expression (reductions must be lowered to loops by ScheduleOps before "
          "codegen)");
    case ExprKind::kProducerLoad:
      return Unsupported(
          "a ProducerLoad expression (tensor reads must be lowered to buffer loads before "
          "codegen)");
  }
  return Unsupported("unknown expression kind");
}

absl::StatusOr<llvm::Value*> FunctionLowering::EmitAs(const PrimExpr& e, DataType t) {
  KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitExpr(e));
  return EmitCast(v, e->dtype, t);
}

absl::StatusOr<llvm::Value*> FunctionLowering::EmitIndex(const PrimExpr& e) {
  if (!e) return Invalid("null index expression");
  if (!e->dtype.is_integral()) {
    return Invalid(
        absl::StrCat("index ", tir::ToText(e), " has non-integer type ", e->dtype.ToString()));
  }
  KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitExpr(e));
  llvm::Type* i64 = WithLanes(b_.getInt64Ty(), e->dtype.lanes());
  return b_.CreateIntCast(v, i64, /*isSigned=*/e->dtype.is_int());
}

absl::StatusOr<llvm::Value*> FunctionLowering::EmitConst(const ExprNode* n) {
  DataType t = ScalarOf(n->dtype);
  KILN_ASSIGN_OR_RETURN(llvm::Type * ty, ScalarRegType(t));
  llvm::Constant* c = nullptr;
  if (n->kind == ExprKind::kIntImm) {
    if (t.is_bool()) {
      c = b_.getInt1(n->int_value != 0);
    } else if (t.is_int() || t.is_uint()) {
      llvm::APInt v(64, static_cast<uint64_t>(n->int_value), /*isSigned=*/true);
      v = t.is_int() ? v.sextOrTrunc(t.bits()) : v.zextOrTrunc(t.bits());
      c = llvm::ConstantInt::get(ctx_, v);
    } else if (t.is_float()) {
      double d = static_cast<double>(n->int_value);
      c = IsBF16(t) ? llvm::ConstantInt::get(ty, FloatToBF16Bits(static_cast<float>(d)))
                    : llvm::ConstantFP::get(ty, d);
    } else if (t.code() == DTypeCode::kOpaqueHandle && n->int_value == 0) {
      c = llvm::ConstantPointerNull::get(b_.getPtrTy());
    } else {
      return Invalid(absl::StrCat("integer constant of type ", t.ToString()));
    }
  } else {
    if (IsBF16(t)) {
      c = llvm::ConstantInt::get(ty, FloatToBF16Bits(static_cast<float>(n->float_value)));
    } else if (t.is_float()) {
      c = llvm::ConstantFP::get(ty, n->float_value);
    } else {
      return Invalid(absl::StrCat("float constant of type ", t.ToString()));
    }
  }
  return Splat(c, n->dtype.lanes());
}

absl::StatusOr<llvm::Value*> FunctionLowering::EmitRamp(const ExprNode* n) {
  const PrimExpr& base = n->args[0];
  int lanes = n->dtype.lanes();
  if (base->dtype.lanes() != 1 || n->args[1]->dtype.lanes() != 1) {
    return Invalid("ramp with a vector base or stride");
  }
  KILN_ASSIGN_OR_RETURN(llvm::Value * b, EmitExpr(base));
  KILN_ASSIGN_OR_RETURN(llvm::Value * s, EmitAs(n->args[1], base->dtype));
  DataType t = base->dtype;
  if (t.is_int() || t.is_uint()) {
    std::vector<llvm::Constant*> steps;
    for (int i = 0; i < lanes; ++i) steps.push_back(llvm::ConstantInt::get(b->getType(), i));
    llvm::Value* step = llvm::ConstantVector::get(steps);
    return b_.CreateAdd(Splat(b, lanes), b_.CreateMul(Splat(s, lanes), step));
  }
  if (t.is_float()) {
    llvm::Value* bf = WidenToF32(b, t);
    llvm::Value* sf = WidenToF32(s, t);
    std::vector<llvm::Constant*> steps;
    for (int i = 0; i < lanes; ++i) steps.push_back(llvm::ConstantFP::get(bf->getType(), i));
    llvm::Value* r = b_.CreateFAdd(
        Splat(bf, lanes), b_.CreateFMul(Splat(sf, lanes), llvm::ConstantVector::get(steps)));
    return NarrowFromF32(r, LanesOf(t, lanes));
  }
  return Unsupported(absl::StrCat("ramp of type ", t.ToString()));
}

absl::StatusOr<llvm::Value*> FunctionLowering::EmitBinary(const ExprNode* n) {
  const PrimExpr& lhs = n->args[0];
  const PrimExpr& rhs = n->args[1];
  DataType ta = lhs->dtype;
  DataType tb = rhs->dtype;
  if (!SameScalar(ta, tb)) {
    return Invalid(absl::StrCat("operands of ", KindName(n->kind), " have different types ",
                                ta.ToString(), " and ", tb.ToString(), " (insert a Cast)"));
  }
  if (ta.lanes() != tb.lanes() && ta.lanes() != 1 && tb.lanes() != 1) {
    return Invalid(absl::StrCat("operands of ", KindName(n->kind), " have ", ta.lanes(), " and ",
                                tb.lanes(), " lanes"));
  }
  if (ta.code() == DTypeCode::kOpaqueHandle &&
      !(n->kind == ExprKind::kEQ || n->kind == ExprKind::kNE)) {
    return Unsupported(absl::StrCat(KindName(n->kind), " of handles"));
  }
  KILN_ASSIGN_OR_RETURN(llvm::Value * a, EmitExpr(lhs));
  KILN_ASSIGN_OR_RETURN(llvm::Value * b, EmitExpr(rhs));
  int lanes = std::max(ta.lanes(), tb.lanes());
  a = Splat(a, lanes);
  b = Splat(b, lanes);
  DataType t = LanesOf(ta, lanes);
  ExprKind k = n->kind;

  if (k == ExprKind::kAnd || k == ExprKind::kOr) {
    a = ToBool(a, t);
    b = ToBool(b, t);
    return k == ExprKind::kAnd ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
  }

  if (t.is_float()) {
    bool half = IsHalfLike(t);
    llvm::Value* x = WidenToF32(a, t);
    llvm::Value* y = WidenToF32(b, t);
    llvm::Value* r = nullptr;
    switch (k) {
      case ExprKind::kAdd:
        r = b_.CreateFAdd(x, y);
        break;
      case ExprKind::kSub:
        r = b_.CreateFSub(x, y);
        break;
      case ExprKind::kMul:
        r = b_.CreateFMul(x, y);
        break;
      case ExprKind::kDiv:
        r = b_.CreateFDiv(x, y);
        break;
      case ExprKind::kMod:
        r = b_.CreateFRem(x, y);
        break;
      case ExprKind::kFloorDiv:
        r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(x, y));
        break;
      case ExprKind::kFloorMod: {
        llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(x, y));
        r = b_.CreateFSub(x, b_.CreateFMul(q, y));
        break;
      }
      case ExprKind::kMin:
        r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, x, y);
        break;
      case ExprKind::kMax:
        r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, x, y);
        break;
      case ExprKind::kEQ:
        return b_.CreateFCmpOEQ(x, y);
      case ExprKind::kNE:
        return b_.CreateFCmpUNE(x, y);
      case ExprKind::kLT:
        return b_.CreateFCmpOLT(x, y);
      case ExprKind::kLE:
        return b_.CreateFCmpOLE(x, y);
      case ExprKind::kGT:
        return b_.CreateFCmpOGT(x, y);
      case ExprKind::kGE:
        return b_.CreateFCmpOGE(x, y);
      default:
        return Unsupported(absl::StrCat(KindName(k), " on ", t.ToString()));
    }
    return half ? NarrowFromF32(r, t) : r;
  }

  // Integers (int, uint, bool) and handles (==, != only).
  bool is_signed = t.is_int();
  // Signed arithmetic of 32 bits and more may not overflow (C semantics); this
  // lets LLVM reason about index expressions. Narrower integers wrap.
  // Only 64-bit (index) arithmetic promises no signed overflow; narrower
  // integer data wraps, as the interpreter's integer sums do.
  bool nsw = is_signed && t.bits() >= 64;
  switch (k) {
    case ExprKind::kAdd:
      return b_.CreateAdd(a, b, "", false, nsw);
    case ExprKind::kSub:
      return b_.CreateSub(a, b, "", false, nsw);
    case ExprKind::kMul:
      return b_.CreateMul(a, b, "", false, nsw);
    case ExprKind::kDiv:
    case ExprKind::kMod:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod:
      return EmitIntDivMod(k, a, b, t, rhs);
    case ExprKind::kMin:
      return b_.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a,
                                      b);
    case ExprKind::kMax:
      return b_.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a,
                                      b);
    case ExprKind::kEQ:
      return b_.CreateICmpEQ(a, b);
    case ExprKind::kNE:
      return b_.CreateICmpNE(a, b);
    case ExprKind::kLT:
      return is_signed ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
    case ExprKind::kLE:
      return is_signed ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
    case ExprKind::kGT:
      return is_signed ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
    case ExprKind::kGE:
      return is_signed ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
    default:
      break;
  }
  return Unsupported(absl::StrCat(KindName(k), " on ", t.ToString()));
}

// Integer division never traps: x / 0 == 0, x % 0 == 0, INT_MIN / -1 wraps to
// INT_MIN (and INT_MIN % -1 == 0). Constant divisors other than 0 and -1 need
// no guard.
absl::StatusOr<llvm::Value*> FunctionLowering::EmitIntDivMod(ExprKind k, llvm::Value* a,
                                                             llvm::Value* b, DataType t,
                                                             const PrimExpr& rhs) {
  bool is_signed = t.is_int();
  llvm::Type* ty = a->getType();
  llvm::Value* zero = llvm::Constant::getNullValue(ty);
  int64_t c = 0;
  bool safe = ConstIntOf(rhs, &c) && c != 0 && !(is_signed && c == -1);
  llvm::Value* q = nullptr;
  llvm::Value* r = nullptr;
  if (safe) {
    q = is_signed ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b);
    r = is_signed ? b_.CreateSRem(a, b) : b_.CreateURem(a, b);
  } else {
    llvm::Value* is_zero = b_.CreateICmpEQ(b, zero);
    llvm::Value* bad = is_zero;
    llvm::Value* is_m1 = nullptr;
    if (is_signed) {
      is_m1 = b_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(ty));
      bad = b_.CreateOr(is_zero, is_m1);
    }
    llvm::Value* sb = b_.CreateSelect(bad, llvm::ConstantInt::get(ty, 1), b);
    q = is_signed ? b_.CreateSDiv(a, sb) : b_.CreateUDiv(a, sb);
    r = is_signed ? b_.CreateSRem(a, sb) : b_.CreateURem(a, sb);          // 0 when sb == 1
    if (is_signed) q = b_.CreateSelect(is_m1, b_.CreateSub(zero, a), q);  // wraps
    q = b_.CreateSelect(is_zero, zero, q);
  }
  if (k == ExprKind::kDiv) return q;
  if (k == ExprKind::kMod) return r;
  if (!is_signed) return k == ExprKind::kFloorDiv ? q : r;
  // Floor: adjust when the remainder is non-zero and its sign differs from b's.
  llvm::Value* adjust =
      b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
  if (k == ExprKind::kFloorDiv) return b_.CreateSub(q, b_.CreateZExt(adjust, ty));
  return b_.CreateAdd(r, b_.CreateSelect(adjust, b, zero));
}

absl::StatusOr<llvm::Value*> FunctionLowering::EmitCast(llvm::Value* v, DataType from,
                                                        DataType to) {
  if (from == to) return v;
  if (from.lanes() != to.lanes()) {
    if (from.lanes() != 1) {
      return Invalid(absl::StrCat("cast from ", from.ToString(), " to ", to.ToString(),
                                  " changes the number of lanes"));
    }
    KILN_ASSIGN_OR_RETURN(llvm::Value * s, EmitCast(v, from, ScalarOf(to)));
    return Splat(s, to.lanes());
  }
  KILN_ASSIGN_OR_RETURN(llvm::Type * dst, RegType(to));
  if (SameScalar(from, to)) return v;
  bool from_handle = from.code() == DTypeCode::kOpaqueHandle;
  bool to_handle = to.code() == DTypeCode::kOpaqueHandle;
  if (from_handle || to_handle) {
    return Unsupported(absl::StrCat("cast from ", from.ToString(), " to ", to.ToString(),
                                    " (use the \"reinterpret\" call)"));
  }
  int lanes = to.lanes();
  if (to.is_bool()) return ToBool(v, from);
  if (from.is_bool()) {
    if (to.is_int() || to.is_uint()) return b_.CreateZExt(v, dst);
    llvm::Value* f = b_.CreateUIToFP(v, WithLanes(b_.getFloatTy(), lanes));
    return to.bits() == 64 && !IsBF16(to) ? b_.CreateFPExt(f, dst) : NarrowFromF32(f, to);
  }
  if (from.is_integral() && to.is_integral()) {
    return b_.CreateIntCast(v, dst, /*isSigned=*/from.is_int());
  }
  if (from.is_integral() && to.is_float()) {
    if (!IsHalfLike(to)) return from.is_int() ? b_.CreateSIToFP(v, dst) : b_.CreateUIToFP(v, dst);
    llvm::Type* f32 = WithLanes(b_.getFloatTy(), lanes);
    llvm::Value* f = from.is_int() ? b_.CreateSIToFP(v, f32) : b_.CreateUIToFP(v, f32);
    return NarrowFromF32(f, to);
  }
  if (from.is_float() && to.is_integral()) {
    llvm::Value* f = WidenToF32(v, from);
    // Saturating, NaN -> 0 (the semantics of llvm.fpto[su]i.sat), written
    // with compares and selects: LLVM 19 scalarizes the vector intrinsic on
    // x86 (a cvttss2si + cmov per lane: 4x slower sigmoid/exp epilogues).
    llvm::Type* ft = f->getType();
    const int bits = to.bits();
    const double hi = to.is_int() ? std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits);  // exclusive
    const double lo = to.is_int() ? -std::ldexp(1.0, bits - 1) : -1.0;  // int: inclusive; uint: exclusive
    llvm::Value* too_big = b_.CreateFCmpOGE(f, llvm::ConstantFP::get(ft, hi));
    llvm::Value* too_small = to.is_int() ? b_.CreateFCmpOLT(f, llvm::ConstantFP::get(ft, lo))
                                         : b_.CreateFCmpOLE(f, llvm::ConstantFP::get(ft, lo));
    llvm::Value* nan = b_.CreateFCmpUNO(f, f);
    llvm::Value* bad = b_.CreateOr(b_.CreateOr(too_big, too_small), nan);
    llvm::Value* safe = b_.CreateSelect(bad, llvm::ConstantFP::get(ft, 0.0), f);
    llvm::Value* r = to.is_int() ? b_.CreateFPToSI(safe, dst) : b_.CreateFPToUI(safe, dst);
    const llvm::APInt max = to.is_int() ? llvm::APInt::getSignedMaxValue(bits)
                                        : llvm::APInt::getMaxValue(bits);
    const llvm::APInt min = to.is_int() ? llvm::APInt::getSignedMinValue(bits)
                                        : llvm::APInt::getMinValue(bits);
    r = b_.CreateSelect(too_big, llvm::ConstantInt::get(dst, max), r);
    return b_.CreateSelect(too_small, llvm::ConstantInt::get(dst, min), r);
  }
  if (from.is_float() && to.is_float()) {
    llvm::Value* f = WidenToF32(v, from);  // f32 or f64
    if (IsHalfLike(to)) {
      if (f->getType()->getScalarType()->isDoubleTy()) {
        f = b_.CreateFPTrunc(f, WithLanes(b_.getFloatTy(), lanes));
      }
      return NarrowFromF32(f, to);
    }
    if (f->getType() == dst) return f;
    return to.bits() > 32 ? b_.CreateFPExt(f, dst) : b_.CreateFPTrunc(f, dst);
  }
  return Unsupported(absl::StrCat("cast from ", from.ToString(), " to ", to.ToString()));
}

// ---- Calls --------------------------------------------------------------------

absl::StatusOr<llvm::Value*> FunctionLowering::EmitCall(const ExprNode* n) {
  const std::string& name = n->name;
  auto need_args = [&](size_t k) -> absl::Status {
    if (n->args.size() == k) return absl::OkStatus();
    return Invalid(
        absl::StrCat("call \"", name, "\" takes ", k, " argument(s), got ", n->args.size()));
  };
  if (name == "likely") {
    KILN_RETURN_IF_ERROR(need_args(1));
    return EmitExpr(n->args[0]);
  }
  if (name == "if_then_else") {
    KILN_RETURN_IF_ERROR(need_args(3));
    return EmitLazySelect(n);
  }
  if (name == "reinterpret") {
    KILN_RETURN_IF_ERROR(need_args(1));
    KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitExpr(n->args[0]));
    KILN_ASSIGN_OR_RETURN(llvm::Type * dst, RegType(n->dtype));
    llvm::Type* src = v->getType();
    if (src == dst) return v;
    if (src->isPointerTy() && dst->isIntegerTy(64)) return b_.CreatePtrToInt(v, dst);
    if (src->isIntegerTy(64) && dst->isPointerTy()) return b_.CreateIntToPtr(v, dst);
    if (!src->isPointerTy() && !dst->isPointerTy() &&
        src->getPrimitiveSizeInBits() == dst->getPrimitiveSizeInBits()) {
      return b_.CreateBitCast(v, dst);
    }
    return Invalid(absl::StrCat("reinterpret from ", n->args[0]->dtype.ToString(), " to ",
                                n->dtype.ToString(), " (sizes differ)"));
  }
  if (name == "isnan") {
    KILN_RETURN_IF_ERROR(need_args(1));
    DataType t = n->args[0]->dtype;
    KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitExpr(n->args[0]));
    if (!t.is_float()) return Splat(b_.getFalse(), t.lanes());
    llvm::Value* f = WidenToF32(v, t);
    return b_.CreateFCmpUNO(f, f);
  }
  if (name == "shape_of" || name == "ndim_of") {
    return Unsupported(absl::StrCat("the reserved call \"", name, "\""));
  }
  static const char* const kMath[] = {"sqrt",     "fabs",  "floor", "ceil",  "trunc",   "round",
                                      "copysign", "exp",   "exp2",  "log",   "log2",    "sin",
                                      "cos",      "pow",   "fmod",  "rsqrt", "sigmoid", "tanh",
                                      "erf",      "log1p", "expm1", "tan",   "asin",    "acos",
                                      "atan",     "sinh",  "cosh",  "asinh", "acosh",   "atanh",
                                      "ldexp"};
  for (const char* m : kMath) {
    if (name == m) return EmitMath(n);
  }
  return EmitExternCall(n);
}

// Math on floats; float16/bfloat16 are computed in float32.
absl::StatusOr<llvm::Value*> FunctionLowering::EmitMath(const ExprNode* n) {
  const std::string& name = n->name;
  bool binary = name == "pow" || name == "copysign" || name == "fmod" || name == "ldexp";
  size_t arity = binary ? 2 : 1;
  if (n->args.size() != arity) {
    return Invalid(
        absl::StrCat("call \"", name, "\" takes ", arity, " argument(s), got ", n->args.size()));
  }
  DataType t = n->dtype;
  if (!t.is_float()) {
    // Integer forms of the rounding functions and fabs.
    if (t.is_int() || t.is_uint()) {
      KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitAs(n->args[0], t));
      if (name == "floor" || name == "ceil" || name == "trunc" || name == "round") return v;
      if (name == "fabs") {
        if (t.is_uint()) return v;
        return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, v, b_.getFalse());
      }
    }
    return Unsupported(
        absl::StrCat("math function \"", name, "\" on ", t.ToString(), " (it needs a float type)"));
  }
  std::vector<llvm::Value*> xs;
  for (const PrimExpr& arg : n->args) {
    KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitAs(arg, t));
    xs.push_back(WidenToF32(v, t));
  }
  llvm::Value* x = xs[0];
  llvm::Type* ft = x->getType();
  auto unary = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, x); };
  llvm::Value* r = nullptr;
  if (name == "sqrt")
    r = unary(llvm::Intrinsic::sqrt);
  else if (name == "fabs")
    r = unary(llvm::Intrinsic::fabs);
  else if (name == "floor")
    r = unary(llvm::Intrinsic::floor);
  else if (name == "ceil")
    r = unary(llvm::Intrinsic::ceil);
  else if (name == "trunc")
    r = unary(llvm::Intrinsic::trunc);
  else if (name == "round")
    r = unary(llvm::Intrinsic::roundeven);
  else if (name == "exp")
    r = unary(llvm::Intrinsic::exp);
  else if (name == "exp2")
    r = unary(llvm::Intrinsic::exp2);
  else if (name == "log")
    r = unary(llvm::Intrinsic::log);
  else if (name == "log2")
    r = unary(llvm::Intrinsic::log2);
  else if (name == "sin")
    r = unary(llvm::Intrinsic::sin);
  else if (name == "cos")
    r = unary(llvm::Intrinsic::cos);
  else if (name == "pow")
    r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, xs[1]);
  else if (name == "copysign")
    r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, x, xs[1]);
  else if (name == "fmod")
    r = b_.CreateFRem(x, xs[1]);
  else if (name == "ldexp")
    r = EmitLdexp(x, xs[1]);
  else if (name == "rsqrt") {
    r = b_.CreateFDiv(llvm::ConstantFP::get(ft, 1.0), unary(llvm::Intrinsic::sqrt));
  } else if (name == "sigmoid") {
    llvm::Value* e = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b_.CreateFNeg(x));
    llvm::Value* one = llvm::ConstantFP::get(ft, 1.0);
    r = b_.CreateFDiv(one, b_.CreateFAdd(one, e));
  } else {
    r = CallLibmPerLane(name, x);  // tanh, erf, log1p, expm1, tan, asin, ..., atanh
  }
  return IsHalfLike(t) ? NarrowFromF32(r, t) : r;
}

bool FunctionLowering::HasTargetFeature(absl::string_view feature) {
  if (subtarget_ == nullptr) {
    const std::string triple = module_->getTargetTriple();
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
    if (target == nullptr) return false;
    subtarget_.reset(target->createMCSubtargetInfo(triple, cpu_, features_));
    if (subtarget_ == nullptr) return false;
  }
  return subtarget_->checkFeatures(std::string(feature));
}

llvm::Value* FunctionLowering::EmitLdexp(llvm::Value* x, llvm::Value* n) {
  llvm::Type* t = x->getType();
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(t);
  const unsigned lanes = vt != nullptr ? vt->getNumElements() : 1;
  const bool x86 = llvm::Triple(module_->getTargetTriple()).isX86();
  if (x86 && t->getScalarType()->isFloatTy() && lanes >= 4 && HasTargetFeature("+avx512f")) {
    // vscalefps: x * 2^floor(n), correctly rounded (subnormal results,
    // overflow to infinity), on 16, 8 (AVX512VL) or 4 (AVX512VL) lanes.
    unsigned width = lanes % 16 == 0 ? 16 : 0;
    if (width == 0 && HasTargetFeature("+avx512vl")) width = lanes % 8 == 0 ? 8 : (lanes % 4 == 0 ? 4 : 0);
    if (width != 0) {
      llvm::Intrinsic::ID id = width == 16 ? llvm::Intrinsic::x86_avx512_mask_scalef_ps_512
                               : width == 8 ? llvm::Intrinsic::x86_avx512_mask_scalef_ps_256
                                            : llvm::Intrinsic::x86_avx512_mask_scalef_ps_128;
      llvm::Function* fn = llvm::Intrinsic::getDeclaration(module_, id);
      llvm::Type* piece = llvm::FixedVectorType::get(t->getScalarType(), width);
      llvm::Value* all_ones = width == 16 ? b_.getInt16(0xFFFF) : b_.getInt8(0xFF);
      auto scalef = [&](llvm::Value* a, llvm::Value* k) -> llvm::Value* {
        std::vector<llvm::Value*> args = {a, k, llvm::PoisonValue::get(piece), all_ones};
        if (width == 16) args.push_back(b_.getInt32(4));  // _MM_FROUND_CUR_DIRECTION
        return b_.CreateCall(fn, args);
      };
      if (lanes == width) return scalef(x, n);
      std::vector<llvm::Value*> parts;
      std::vector<int> take(width);
      for (unsigned start = 0; start < lanes; start += width) {
        for (unsigned l = 0; l < width; ++l) take[l] = static_cast<int>(start + l);
        parts.push_back(
            scalef(b_.CreateShuffleVector(x, take), b_.CreateShuffleVector(n, take)));
      }
      return llvm::concatenateVectors(b_, parts);
    }
  }
  // 2^k for an integral k in [-126, 127], built in the exponent field from
  // the low bits of k + 1.5 * 2^23; two factors cover n in [-252, 254] with
  // every partial product a normal number until the last.
  llvm::Type* it = vt != nullptr ? llvm::FixedVectorType::get(b_.getInt32Ty(), lanes)
                                 : static_cast<llvm::Type*>(b_.getInt32Ty());
  auto fconst = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto iconst = [&](uint64_t v) { return llvm::ConstantInt::get(it, v); };
  auto pow2 = [&](llvm::Value* k) {
    llvm::Value* bits = b_.CreateBitCast(b_.CreateFAdd(k, fconst(12582912.0)), it);
    llvm::Value* e = b_.CreateSub(bits, iconst(0x4B400000 - 127));
    return b_.CreateBitCast(b_.CreateShl(e, iconst(23)), t);
  };
  llvm::Value* n1 = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFMul(n, fconst(0.5)));
  llvm::Value* n2 = b_.CreateFSub(n, n1);
  return b_.CreateFMul(b_.CreateFMul(x, pow2(n1)), pow2(n2));
}

// Calls the C library function `base_name` (float: base_name + "f") on every
// lane of x.
llvm::Value* FunctionLowering::CallLibmPerLane(absl::string_view base_name, llvm::Value* x) {
  llvm::Type* vt = x->getType();
  llvm::Type* st = vt->getScalarType();
  std::string fname(base_name);
  if (st->isFloatTy()) fname += "f";
  llvm::FunctionCallee f =
      module_->getOrInsertFunction(fname, llvm::FunctionType::get(st, {st}, false));
  if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
    fn->setDoesNotThrow();
    fn->setWillReturn();
    fn->setDoesNotAccessMemory();  // errno is never read
  }
  auto* vec = llvm::dyn_cast<llvm::FixedVectorType>(vt);
  if (vec == nullptr) return b_.CreateCall(f, {x});
  llvm::Value* r = llvm::PoisonValue::get(vt);
  for (unsigned i = 0; i < vec->getNumElements(); ++i) {
    llvm::Value* lane = b_.CreateCall(f, {b_.CreateExtractElement(x, i)});
    r = b_.CreateInsertElement(r, lane, i);
  }
  return r;
}

// An external C function: scalar arguments as their C types (bool as int32,
// strings as const char*, handles as pointers); the result has the call's type
// (void when the dtype is void).
absl::StatusOr<llvm::Value*> FunctionLowering::EmitExternCall(const ExprNode* n) {
  const std::string& name = n->name;
  if (name.empty()) return Invalid("call with an empty function name");
  std::vector<llvm::Value*> args;
  std::vector<llvm::Type*> types;
  for (const PrimExpr& arg : n->args) {
    if (arg->dtype.lanes() > 1) {
      return Unsupported(absl::StrCat("external call \"", name, "\" with a vector argument (",
                                      arg->dtype.ToString(), ")"));
    }
    KILN_ASSIGN_OR_RETURN(llvm::Value * v, EmitExpr(arg));
    if (arg->dtype.is_bool()) v = b_.CreateZExt(v, b_.getInt32Ty());
    args.push_back(v);
    types.push_back(v->getType());
  }
  DataType t = n->dtype;
  llvm::Type* ret = b_.getVoidTy();
  if (!t.is_void()) {
    if (t.lanes() > 1) {
      return Unsupported(absl::StrCat("external call \"", name, "\" returning a vector"));
    }
    if (t.is_bool()) {
      ret = b_.getInt32Ty();
    } else {
      KILN_ASSIGN_OR_RETURN(ret, RegType(t));
    }
  }
  llvm::FunctionType* fty = llvm::FunctionType::get(ret, types, false);
  if (llvm::Function* existing = module_->getFunction(name)) {
    if (existing->getFunctionType() != fty) {
      return Invalid(absl::StrCat("external function \"", name,
                                  "\" is called with two different signatures (or clashes with "
                                  "a kernel or runtime function)"));
    }
  }
  llvm::FunctionCallee callee = module_->getOrInsertFunction(name, fty);
  if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    if (fn->isDeclaration()) {
      fn->setDoesNotThrow();
      if (n->effect == tir::CallEffect::kPure) {
        fn->setDoesNotAccessMemory();
        fn->setWillReturn();
      } else if (n->effect == tir::CallEffect::kReadState) {
        fn->setOnlyReadsMemory();
      }
    }
  }
  llvm::Value* r = b_.CreateCall(callee, args);
  if (t.is_bool()) r = b_.CreateICmpNE(r, b_.getInt32(0));
  return r;
}

// "if_then_else"(c, t, f): only the taken side is evaluated (a vector
// condition evaluates both and selects per lane).
absl::StatusOr<llvm::Value*> FunctionLowering::EmitLazySelect(const ExprNode* n) {
  DataType ct = n->args[0]->dtype;
  int lanes = n->dtype.lanes();
  if (!SameScalar(n->args[1]->dtype, n->args[2]->dtype)) {
    return Invalid(absl::StrCat("if_then_else between ", n->args[1]->dtype.ToString(), " and ",
                                n->args[2]->dtype.ToString()));
  }
  KILN_ASSIGN_OR_RETURN(llvm::Value * c, EmitExpr(n->args[0]));
  c = ToBool(c, ct);
  if (ct.lanes() > 1) {
    KILN_ASSIGN_OR_RETURN(llvm::Value * t, EmitExpr(n->args[1]));
    KILN_ASSIGN_OR_RETURN(llvm::Value * f, EmitExpr(n->args[2]));
    return b_.CreateSelect(c, Splat(t, lanes), Splat(f, lanes));
  }
  llvm::Function* fn = frame_.fn;
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "ite_then", fn);
  llvm::BasicBlock* else_bb = llvm::BasicBlock::Create(ctx_, "ite_else", fn);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_, "ite_merge", fn);
  b_.CreateCondBr(c, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  KILN_ASSIGN_OR_RETURN(llvm::Value * t, EmitExpr(n->args[1]));
  t = Splat(t, lanes);
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(merge);
  b_.SetInsertPoint(else_bb);
  KILN_ASSIGN_OR_RETURN(llvm::Value * f, EmitExpr(n->args[2]));
  f = Splat(f, lanes);
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
  if (t->getType() != f->getType()) return Invalid("if_then_else branches of different types");
  llvm::PHINode* phi = b_.CreatePHI(t->getType(), 2);
  phi->addIncoming(t, then_end);
  phi->addIncoming(f, else_end);
  return phi;
}

}  // namespace kiln::codegen::internal
