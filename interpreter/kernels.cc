// The kernel registry glue and the helpers of kernel_util.h.
#include "interpreter/kernels.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "interpreter/kernel_util.h"

namespace kiln::interp {

constexpr const char* kFacet = "Interpret";

absl::Status KernelCtx::Error(absl::string_view msg) const {
  return absl::InvalidArgumentError(absl::StrCat(op.name, ": ", msg));
}

absl::StatusOr<const HostTensor*> KernelCtx::Tensor(size_t i) const {
  if (i >= args.size())
    return Error(absl::StrCat("expected at least ", i + 1, " arguments, got ", args.size()));
  const Value& v = args[i];
  if (!v.is_tensor() || !v.tensor()) {
    std::string name = i < op.arguments.size() ? op.arguments[i].name : absl::StrCat(i);
    return Error(absl::StrCat("argument ", i, " (", name, ") must be a tensor; got ",
                              v.defined() ? ValueKindName(v.kind()) : "no value"));
  }
  return v.tensor().get();
}

void RegisterCoreKernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    internal::RegisterElemwiseKernels();
    internal::RegisterReduceKernels();
    internal::RegisterNNKernels();
    internal::RegisterNormKernels();
    internal::RegisterTransformKernels();
    internal::RegisterDynKernels();
  });
}

const KernelFn* FindKernel(const OpDef* op) {
  return OpRegistry::Global().GetFacet<KernelFn>(op, kFacet);
}

absl::StatusOr<Value> EvalOp(const Op& op, const Attrs& attrs, const std::vector<Value>& args) {
  RegisterCoreKernels();
  if (!op) return absl::InvalidArgumentError("EvalOp: null operator");
  const OpDef& def = *op->def;
  const KernelFn* fn = FindKernel(&def);
  if (fn == nullptr)
    return absl::UnimplementedError(
        absl::StrCat(def.name, ": the interpreter has no kernel for this operator"));
  if (def.num_inputs >= 0 && static_cast<int>(args.size()) != def.num_inputs)
    return absl::InvalidArgumentError(absl::StrCat(def.name, ": takes ", def.num_inputs,
                                                   " arguments, got ", args.size()));
  KernelCtx ctx{def, attrs.get(), args};
  return (*fn)(ctx);
}

namespace internal {

void AddKernel(const char* op_name, KernelFn fn) {
  // Every name is a core op (kernels_coverage test checks all are present).
  (void)OpRegistry::Global().SetFacet<KernelFn>(op_name, kFacet, std::move(fn));
}

int64_t FloatToInt(double v, DataType dt) {
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  if (dt.is_bool()) return v != 0;
  const int bits = dt.bits();
  if (dt.is_uint()) {
    if (v <= 0) return 0;
    if (bits >= 64) return v >= 18446744073709551615.0 ? static_cast<int64_t>(~uint64_t{0})
                                                        : static_cast<int64_t>(static_cast<uint64_t>(v));
    const double hi = std::ldexp(1.0, bits) - 1;
    return static_cast<int64_t>(std::min(v, hi));
  }
  const double hi = std::ldexp(1.0, bits - 1);
  if (v >= hi) return bits >= 64 ? std::numeric_limits<int64_t>::max()
                                 : static_cast<int64_t>(hi) - 1;
  if (v < -hi) return bits >= 64 ? std::numeric_limits<int64_t>::min()
                                 : -static_cast<int64_t>(hi);
  return static_cast<int64_t>(v);
}

void StoreI(HostTensor& t, int64_t i, int64_t v) {
  char* p = static_cast<char*>(t.mutable_raw_data());
  const DataType dt = t.dtype();
  switch (dt.code()) {
    case DTypeCode::kInt:
    case DTypeCode::kUInt:
      switch (dt.bits()) {
        case 8: reinterpret_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); return;
        case 16: reinterpret_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); return;
        case 32: reinterpret_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); return;
        case 64: reinterpret_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); return;
      }
      return;
    case DTypeCode::kBool: reinterpret_cast<uint8_t*>(p)[i] = v != 0; return;
    default: {
      // uint64 values above 2^63 arrive as negative int64: not distinguishable
      // here, callers storing unsigned values into floats use StoreF.
      StoreF(t, i, static_cast<double>(v));
      return;
    }
  }
}

void StoreF(HostTensor& t, int64_t i, double v) {
  char* p = static_cast<char*>(t.mutable_raw_data());
  const DataType dt = t.dtype();
  switch (dt.code()) {
    case DTypeCode::kFloat:
      if (dt.bits() == 32) reinterpret_cast<float*>(p)[i] = static_cast<float>(v);
      else if (dt.bits() == 64) reinterpret_cast<double*>(p)[i] = v;
      else reinterpret_cast<uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v));
      return;
    case DTypeCode::kBFloat:
      reinterpret_cast<uint16_t*>(p)[i] = FloatToBFloat16(static_cast<float>(v));
      return;
    case DTypeCode::kBool: reinterpret_cast<uint8_t*>(p)[i] = v != 0; return;
    default: StoreI(t, i, FloatToInt(v, dt)); return;
  }
}

double LowestValue(DataType dt) {
  if (dt.is_bool() || dt.is_uint()) return 0;
  if (dt.is_int()) return -std::ldexp(1.0, dt.bits() - 1);
  if (dt.code() == DTypeCode::kBFloat) return -3.3895313892515355e38;
  if (dt.bits() == 16) return -65504.0;
  if (dt.bits() == 32) return std::numeric_limits<float>::lowest();
  return std::numeric_limits<double>::lowest();
}

absl::StatusOr<Ref<HostTensor>> NewTensor(const KernelCtx& k, DataType dt, const Shape64& shape) {
  auto t = HostTensor::Create(dt, shape);
  if (!t.ok()) return k.Error(t.status().message());
  return t;
}

absl::StatusOr<int64_t> NormAxis(const KernelCtx& k, int64_t axis, int64_t ndim,
                                 absl::string_view what) {
  if (axis < -ndim || axis >= ndim)
    return k.Error(absl::StrCat(what, " ", axis, " is out of range for a ", ndim, "-D tensor"));
  return axis < 0 ? axis + ndim : axis;
}

absl::StatusOr<Shape64> BroadcastShape(const KernelCtx& k, const Shape64& a, const Shape64& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape64 out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i + a.size() >= n ? a[i + a.size() - n] : 1;
    const int64_t db = i + b.size() >= n ? b[i + b.size() - n] : 1;
    if (da != db && da != 1 && db != 1)
      return k.Error(absl::StrCat("cannot broadcast shapes ", ShapeStr(a), " and ", ShapeStr(b)));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> BroadcastIndex(const Shape64& in, const Shape64& out) {
  const size_t n = out.size();
  const Shape64 in_strides = Strides(in);
  Shape64 st(n, 0);  // stride of the input along each output axis (0 = broadcast)
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t o = i + n - in.size();
    st[o] = in[i] == 1 ? 0 : in_strides[i];
  }
  const int64_t total = NumElements(out);
  std::vector<int64_t> idx(static_cast<size_t>(total));
  Shape64 c(n, 0);
  int64_t off = 0;
  for (int64_t f = 0; f < total; ++f) {
    idx[static_cast<size_t>(f)] = off;
    for (size_t d = n; d-- > 0;) {  // increment the odometer
      ++c[d];
      off += st[d];
      if (c[d] < out[d]) break;
      off -= st[d] * c[d];
      c[d] = 0;
    }
  }
  return idx;
}

absl::StatusOr<Shape64> Padding4(const KernelCtx& k, const Shape64& p) {
  for (int64_t x : p)
    if (x < 0) return k.Error(absl::StrCat("padding must not be negative; got ", ShapeStr(p)));
  switch (p.size()) {
    case 1: return Shape64{p[0], p[0], p[0], p[0]};
    case 2: return Shape64{p[0], p[1], p[0], p[1]};
    case 4: return p;
    default: return k.Error(absl::StrCat("padding must have 1, 2 or 4 values; got ", ShapeStr(p)));
  }
}

absl::StatusOr<Shape64> Pair(const KernelCtx& k, absl::string_view name, const Shape64& v,
                             int64_t min_value) {
  if (v.size() != 1 && v.size() != 2)
    return k.Error(absl::StrCat(name, " must have 1 or 2 values; got ", ShapeStr(v)));
  for (int64_t x : v)
    if (x < min_value)
      return k.Error(absl::StrCat(name, " values must be >= ", min_value, "; got ", ShapeStr(v)));
  return v.size() == 1 ? Shape64{v[0], v[0]} : v;
}

absl::StatusOr<std::vector<int>> PermutedLayout(const KernelCtx& k, absl::string_view what,
                                                const std::string& layout,
                                                absl::string_view axes) {
  std::vector<int> pos;
  bool ok = layout.size() == axes.size();
  for (char c : axes) {
    const size_t p = layout.find(c);
    ok = ok && p != std::string::npos;
    pos.push_back(static_cast<int>(p));
  }
  if (!ok)
    return k.Error(absl::StrCat(what, " \"", layout, "\" is not supported: expected a permutation of ",
                                axes));
  return pos;
}

}  // namespace internal
}  // namespace kiln::interp
