// Kernels of the dynamic operators (dyn.*): read the shape-like tensor
// arguments, build the static operator's attributes from their values and run
// the static kernel (reshape, broadcast_to, strided_slice, expand_dims), so a
// dyn.* call and the static call DynamicToStatic makes of it agree exactly.
// Errors name the dyn.* operator. dyn.zeros / dyn.ones / dyn.full fill a new
// tensor; dyn.full converts fill_value to dtype as cast does.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "interpreter/kernel_util.h"
#include "ir/op_attrs.h"

namespace kiln::interp::internal {
namespace {

// Argument i as a 1-D (or, with scalar, 0-D) integer tensor's values.
absl::StatusOr<Shape64> IntValues(const KernelCtx& k, size_t i, bool scalar = false) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* t, k.Tensor(i));
  const std::string& name = k.op.arguments[i].name;
  if (!t->dtype().is_int() && !t->dtype().is_uint())
    return k.Error(absl::StrCat(name, " must be an integer tensor; got ", TypeStr(*t)));
  if (t->ndim() != (scalar ? 0 : 1))
    return k.Error(absl::StrCat(name, " must be a ", scalar ? "0-D" : "1-D", " tensor; got ",
                                TypeStr(*t)));
  Shape64 v(static_cast<size_t>(t->num_elements()));
  for (int64_t j = 0; j < t->num_elements(); ++j) v[static_cast<size_t>(j)] = LoadI(*t, j);
  return v;
}

// A shape argument: also every extent must be >= 0.
absl::StatusOr<Shape64> ShapeValues(const KernelCtx& k, size_t i) {
  KILN_ASSIGN_OR_RETURN(Shape64 s, IntValues(k, i));
  for (int64_t d : s)
    if (d < 0)
      return k.Error(absl::StrCat(k.op.arguments[i].name, " ", ShapeStr(s),
                                  " has a negative extent"));
  return s;
}

// Runs the static operator `name`'s kernel on `args` with `attrs`, reporting
// errors under the dyn.* operator's name.
absl::StatusOr<Value> RunStatic(const KernelCtx& k, const char* name, const Attrs& attrs,
                                const std::vector<Value>& args) {
  const OpDef* def = OpRegistry::Global().Find(name);
  const KernelFn* fn = def == nullptr ? nullptr : FindKernel(def);
  if (fn == nullptr) return absl::InternalError(absl::StrCat("no kernel for ", name));
  KernelCtx ctx{k.op, attrs.get(), args};
  return (*fn)(ctx);
}

absl::StatusOr<Value> ShapeOf(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const DataType dt = k.Attrs<ShapeOfAttrs>().dtype;
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, dt, {x->ndim()}));
  for (int64_t d = 0; d < x->ndim(); ++d) StoreI(*out, d, x->shape()[static_cast<size_t>(d)]);
  return TensorValue(std::move(out));
}

// ONNX Range's rule: max(ceil((limit - start) / delta), 0) values,
// start + i * delta (integers exactly, floats in double then rounded).
absl::StatusOr<Value> DynArange(const KernelCtx& k) {
  const HostTensor* in[3];
  for (size_t i = 0; i < 3; ++i) {
    KILN_ASSIGN_OR_RETURN(in[i], k.Tensor(i));
    if (in[i]->ndim() != 0)
      return k.Error(absl::StrCat(k.op.arguments[i].name, " must be a 0-D tensor; got ", TypeStr(*in[i])));
  }
  const DataType dt = in[0]->dtype();
  constexpr double kMax = static_cast<double>(int64_t{1} << 40);
  int64_t n = 0;
  if (dt.is_float()) {
    const double s = LoadF(*in[0], 0), l = LoadF(*in[1], 0), d = LoadF(*in[2], 0);
    if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
      return k.Error("delta must be nonzero and start, limit, delta finite");
    const double c = std::max(std::ceil((l - s) / d), 0.0);
    if (c > kMax) return k.Error(absl::StrCat("a range of ", c, " values is too large"));
    n = static_cast<int64_t>(c);
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, dt, {n}));
    for (int64_t i = 0; i < n; ++i) StoreF(*out, i, s + static_cast<double>(i) * d);
    return TensorValue(std::move(out));
  }
  const int64_t s = LoadI(*in[0], 0), l = LoadI(*in[1], 0), d = LoadI(*in[2], 0);
  if (d == 0) return k.Error("delta must be nonzero");
  const __int128 span = static_cast<__int128>(l) - s;
  __int128 q = span / d;
  if (q * d != span && (span > 0) == (d > 0)) ++q;
  if (q < 0) q = 0;
  if (q > static_cast<__int128>(kMax)) return k.Error("the range is too large");
  n = static_cast<int64_t>(q);
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, dt, {n}));
  for (int64_t i = 0; i < n; ++i) StoreI(*out, i, static_cast<int64_t>(s + static_cast<__int128>(i) * d));
  return TensorValue(std::move(out));
}

// ONNX Unsqueeze / Squeeze with the axes read here: the output shape, then a
// reshape (the same row-major order).
absl::StatusOr<Value> DynSqueezeLike(const KernelCtx& k, bool unsqueeze) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(Shape64 axes, IntValues(k, 1));
  const int64_t r = x->ndim();
  const int64_t n = unsqueeze ? r + static_cast<int64_t>(axes.size()) : r;
  std::vector<bool> listed(static_cast<size_t>(n), false);
  for (int64_t a : axes) {
    if (a < -n || a >= n)
      return k.Error(absl::StrCat("axes ", ShapeStr(axes), " has ", a, ", out of range for ",
                                  unsqueeze ? "an output" : "an input", " of rank ", n));
    const int64_t p = a < 0 ? a + n : a;
    if (listed[static_cast<size_t>(p)])
      return k.Error(absl::StrCat("axes ", ShapeStr(axes), " lists axis ", p, " twice"));
    listed[static_cast<size_t>(p)] = true;
  }
  Shape64 out;
  size_t next = 0;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t dim = unsqueeze ? 0 : x->shape()[static_cast<size_t>(j)];
    if (unsqueeze) {
      out.push_back(listed[static_cast<size_t>(j)] ? 1 : x->shape()[next++]);
    } else if (!listed[static_cast<size_t>(j)]) {
      out.push_back(dim);
    } else if (dim != 1) {
      return k.Error(absl::StrCat("cannot squeeze axis ", j, " of ", TypeStr(*x), ": its extent is not 1"));
    }
  }
  Attrs a = MakeAttrs<ReshapeAttrs>([&](ReshapeAttrs& rs) {
    rs.newshape = out;
    rs.allowzero = true;
  });
  return RunStatic(k, "reshape", a, {k.args[0]});
}

absl::StatusOr<Value> DynReshape(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(Shape64 ns, IntValues(k, 1));
  const bool allowzero = k.Attrs<DynReshapeAttrs>().allowzero;
  Attrs a = MakeAttrs<ReshapeAttrs>([&](ReshapeAttrs& r) {
    r.newshape = ns;
    r.allowzero = allowzero;
  });
  return RunStatic(k, "reshape", a, {k.args[0]});
}

absl::StatusOr<Value> DynBroadcastTo(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(Shape64 s, ShapeValues(k, 1));
  Attrs a = MakeAttrs<BroadcastToAttrs>([&](BroadcastToAttrs& b) { b.shape = s; });
  return RunStatic(k, "broadcast_to", a, {k.args[0]});
}

absl::StatusOr<Value> Fill(const KernelCtx& k, size_t shape_arg, const HostTensor* value,
                           double constant) {
  KILN_ASSIGN_OR_RETURN(Shape64 s, ShapeValues(k, shape_arg));
  const DataType dt = k.Attrs<InitOpAttrs>().dtype;
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, dt, s));
  if (out->num_elements() == 0) return TensorValue(std::move(out));
  // Store element 0 once (converted as cast does), then copy it.
  if (value == nullptr) {
    StoreF(*out, 0, constant);
  } else if (value->dtype().is_float() || dt.is_float()) {
    StoreF(*out, 0, LoadF(*value, 0));
  } else {
    StoreI(*out, 0, LoadI(*value, 0));
  }
  for (int64_t i = 1; i < out->num_elements(); ++i) CopyElem(*out, 0, *out, i);
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> DynZeros(const KernelCtx& k) { return Fill(k, 0, nullptr, 0.0); }
absl::StatusOr<Value> DynOnes(const KernelCtx& k) { return Fill(k, 0, nullptr, 1.0); }

absl::StatusOr<Value> DynFull(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* v, k.Tensor(0));
  if (v->ndim() != 0)
    return k.Error(absl::StrCat("fill_value must be a 0-D tensor; got ", TypeStr(*v)));
  return Fill(k, 1, v, 0.0);
}

absl::StatusOr<Value> DynStridedSlice(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(Shape64 b, IntValues(k, 1));
  KILN_ASSIGN_OR_RETURN(Shape64 e, IntValues(k, 2));
  KILN_ASSIGN_OR_RETURN(Shape64 s, IntValues(k, 3));
  const std::string mode = k.Attrs<DynStridedSliceAttrs>().slice_mode;
  Attrs a = MakeAttrs<StridedSliceAttrs>([&](StridedSliceAttrs& ss) {
    ss.begin = b;
    ss.end = e;
    ss.strides = s;
    ss.slice_mode = mode;
  });
  return RunStatic(k, "strided_slice", a, {k.args[0]});
}

absl::StatusOr<Value> DynExpandDims(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(Shape64 axis, IntValues(k, 1, /*scalar=*/true));
  const int64_t n = k.Attrs<DynExpandDimsAttrs>().num_newaxis;
  Attrs a = MakeAttrs<ExpandDimsAttrs>([&](ExpandDimsAttrs& ed) {
    ed.axis = axis[0];
    ed.num_newaxis = n;
  });
  return RunStatic(k, "expand_dims", a, {k.args[0]});
}

}  // namespace

void RegisterDynKernels() {
  AddKernel("shape_of", ShapeOf);
  AddKernel("dyn.reshape", DynReshape);
  AddKernel("dyn.broadcast_to", DynBroadcastTo);
  AddKernel("dyn.zeros", DynZeros);
  AddKernel("dyn.ones", DynOnes);
  AddKernel("dyn.full", DynFull);
  AddKernel("dyn.strided_slice", DynStridedSlice);
  AddKernel("dyn.expand_dims", DynExpandDims);
  AddKernel("dyn.arange", DynArange);
  AddKernel("dyn.unsqueeze", [](const KernelCtx& k) { return DynSqueezeLike(k, true); });
  AddKernel("dyn.squeeze", [](const KernelCtx& k) { return DynSqueezeLike(k, false); });
}

}  // namespace kiln::interp::internal
