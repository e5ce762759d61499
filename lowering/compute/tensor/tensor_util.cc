// File: lowering/compute/tensor/tensor_util.cc
#include "lowering/compute/tensor/tensor_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/op.h"

namespace kiln::lowering::tensor {

using tir::ExprKind;

// ---- Index arithmetic ----------------------------------------------------------

PrimExpr Idx(int64_t v) { return tir::IntImm(v); }

bool IsConst(const PrimExpr& e, int64_t* v) { return tir::IsConstInt(e, v); }

namespace {
int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
}  // namespace

PrimExpr IAdd(const PrimExpr& a, const PrimExpr& b) { return a + b; }
PrimExpr ISub(const PrimExpr& a, const PrimExpr& b) { return a - b; }
PrimExpr IMul(const PrimExpr& a, const PrimExpr& b) {
  if (IsConst(a) && a->int_value == 0 && a->dtype == b->dtype) return a;
  if (IsConst(b) && b->int_value == 0 && a->dtype == b->dtype) return b;
  return a * b;
}

PrimExpr IMin(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0;
  if (IsConst(a, &x) && IsConst(b, &y) && a->dtype == b->dtype) return tir::IntImm(std::min(x, y), a->dtype);
  if (SameDim(a, b)) return a;
  return tir::Min(a, b);
}

PrimExpr IMax(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0;
  if (IsConst(a, &x) && IsConst(b, &y) && a->dtype == b->dtype) return tir::IntImm(std::max(x, y), a->dtype);
  if (SameDim(a, b)) return a;
  return tir::Max(a, b);
}

PrimExpr IFloorDiv(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0;
  if (IsConst(b, &y) && y == 1) return a;
  if (IsConst(a, &x) && IsConst(b, &y) && y != 0) return Idx(FloorDivInt(x, y));
  if (IsConst(a, &x) && x == 0) return a;
  return tir::FloorDiv(a, b);
}

PrimExpr IFloorMod(const PrimExpr& a, const PrimExpr& b) {
  int64_t x = 0, y = 0;
  if (IsConst(b, &y) && y == 1) return Idx(0);
  if (IsConst(a, &x) && IsConst(b, &y) && y != 0) return Idx(x - FloorDivInt(x, y) * y);
  if (IsConst(a, &x) && x == 0) return a;
  return tir::FloorMod(a, b);
}

bool SameDim(const PrimExpr& a, const PrimExpr& b) {
  if (a.get() == b.get()) return true;
  int64_t x = 0, y = 0;
  return IsConst(a, &x) && IsConst(b, &y) && x == y;
}

PrimExpr Product(const Shape& shape) {
  PrimExpr p = Idx(1);
  for (const PrimExpr& d : shape) p = IMul(p, d);
  return p;
}

// ---- Shapes ------------------------------------------------------------------------

PrimExpr FlatIndex(const std::vector<PrimExpr>& idx, const Shape& shape) {
  PrimExpr flat = Idx(0);
  for (size_t d = 0; d < idx.size(); ++d) flat = IAdd(IMul(flat, shape[d]), idx[d]);
  return flat;
}

std::vector<PrimExpr> Unravel(const PrimExpr& flat, const Shape& shape) {
  std::vector<PrimExpr> out(shape.size());
  PrimExpr stride = Idx(1);
  for (size_t d = shape.size(); d-- > 0;) {
    PrimExpr q = IFloorDiv(flat, stride);
    out[d] = d == 0 ? q : IFloorMod(q, shape[d]);
    stride = IMul(stride, shape[d]);
  }
  return out;
}

PrimExpr ReshapeRead(const te::Tensor& t, const Shape& shape, const std::vector<PrimExpr>& idx) {
  const Shape& in = t.shape();
  bool same = in.size() == shape.size();
  for (size_t d = 0; same && d < in.size(); ++d) same = SameDim(in[d], shape[d]);
  if (same) return t(idx);
  return t(Unravel(FlatIndex(idx, shape), in));
}

std::vector<PrimExpr> BroadcastIndices(const Shape& in_shape, const Shape& out_shape,
                                       const std::vector<PrimExpr>& idx) {
  const size_t n = out_shape.size(), m = in_shape.size();
  std::vector<PrimExpr> out;
  out.reserve(m);
  for (size_t i = 0; i < m; ++i) {
    // An input of higher rank than the output cannot be broadcast; the type
    // relation rules it out. Read index 0 for the extra leading dims.
    if (i + n < m) {
      out.push_back(Idx(0));
      continue;
    }
    const size_t o = i + n - m;
    const PrimExpr& d = in_shape[i];
    int64_t v = 0;
    if (IsConst(d, &v)) {
      out.push_back(v == 1 ? Idx(0) : idx[o]);
    } else if (SameDim(d, out_shape[o]) || (IsConst(out_shape[o], &v) && v == 1)) {
      out.push_back(idx[o]);
    } else {
      out.push_back(tir::Select(tir::EQ(d, Idx(1)), Idx(0), idx[o]));
    }
  }
  return out;
}

PrimExpr BroadcastRead(const te::Tensor& t, const Shape& out_shape,
                       const std::vector<PrimExpr>& idx) {
  return t(BroadcastIndices(t.shape(), out_shape, idx));
}

absl::StatusOr<int64_t> NormAxis(const ComputeCtx& ctx, int64_t axis, int64_t ndim,
                                 absl::string_view what) {
  if (axis < -ndim || axis >= ndim)
    return ctx.Error(absl::StrCat(what, " ", axis, " is out of range for a ", ndim, "-D tensor"));
  return axis < 0 ? axis + ndim : axis;
}

// ---- Numeric rules ---------------------------------------------------------------

namespace {
bool IsHalf(DataType t) { return t.is_float() && t.bits() == 16; }
}  // namespace

DataType ComputeType(DataType t) { return IsHalf(t) ? DataType::Float(32) : t; }

PrimExpr Promote(const PrimExpr& v) { return tir::Cast(ComputeType(v->dtype), v); }

PrimExpr NonZero(const PrimExpr& v) {
  if (v->dtype.is_bool()) return v;
  return tir::NE(v, tir::MakeConst(v->dtype, 0));
}

PrimExpr Convert(const PrimExpr& v, DataType to) {
  const DataType from = v->dtype;
  if (from == to) return v;
  if (to.is_bool()) return NonZero(v);
  if (IsHalf(to)) return tir::Cast(to, Convert(v, DataType::Float(32)));
  if (to.is_float() && to.bits() == 32 && (from.is_int() || from.is_uint()) && from.bits() == 64) {
    // The interpreter converts through double.
    return tir::Cast(to, tir::Cast(DataType::Float(64), v));
  }
  if (IsHalf(from) && !to.is_float()) return tir::Cast(to, tir::Cast(DataType::Float(32), v));
  return tir::Cast(to, v);
}

PrimExpr FloatMath(const std::vector<PrimExpr>& args, DataType out,
                   const std::function<PrimExpr(const std::vector<PrimExpr>&)>& f) {
  std::vector<PrimExpr> p;
  p.reserve(args.size());
  for (const PrimExpr& a : args) {
    const DataType ct = a->dtype.is_float() ? ComputeType(a->dtype) : DataType::Float(64);
    p.push_back(tir::Cast(ct, a));
  }
  return Convert(f(p), out);
}

PrimExpr FConst(DataType t, double v) { return tir::FloatImm(v, t); }

PrimExpr Intrin(absl::string_view name, std::vector<PrimExpr> args) {
  const DataType t = args[0]->dtype;
  return tir::Call(t, name, std::move(args));
}

int64_t FloatToIntSat(double v, DataType dt) {
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  if (dt.is_bool()) return v != 0;
  const int bits = dt.bits();
  if (dt.is_uint()) {
    if (v <= 0) return 0;
    if (bits >= 64)
      return v >= 18446744073709551615.0 ? static_cast<int64_t>(~uint64_t{0})
                                         : static_cast<int64_t>(static_cast<uint64_t>(v));
    const double hi = std::ldexp(1.0, bits) - 1;
    return static_cast<int64_t>(std::min(v, hi));
  }
  const double hi = std::ldexp(1.0, bits - 1);
  if (v >= hi) return bits >= 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi) - 1;
  if (v < -hi) return bits >= 64 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(hi);
  return static_cast<int64_t>(v);
}

// ---- Naming and checks -------------------------------------------------------------

std::string ComputeName(const ComputeCtx& ctx) {
  std::string name = absl::StrCat("T_", ctx.op.name);
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

absl::Status CheckArity(const ComputeCtx& ctx, size_t n_inputs, size_t n_outputs) {
  if (ctx.inputs.size() < n_inputs)
    return ctx.Error(absl::StrCat("expects ", n_inputs, " input tensor(s); got ", ctx.inputs.size()));
  for (size_t i = 0; i < n_inputs; ++i)
    if (!ctx.inputs[i].defined()) return ctx.Error(absl::StrCat("input ", i, " is undefined"));
  if (ctx.out_shapes.size() < n_outputs || ctx.out_dtypes.size() < n_outputs)
    return ctx.Error(absl::StrCat("expects ", n_outputs, " output type(s); got ", ctx.out_shapes.size()));
  return absl::OkStatus();
}

void Attach(const char* op_name, FTCompute fn) {
  (void)OpRegistry::Global().SetFacet<FTCompute>(op_name, kComputeFacet, std::move(fn));
}

}  // namespace kiln::lowering::tensor
