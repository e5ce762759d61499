// File: lowering/compute/tensor/dyn.cc
//
// The dynamic operators (dyn.*), as interpreter/kernels_dyn.cc. Their
// shape-like arguments are run-time tensors, but the output extents are
// already in ctx.out_shapes (`?` dims become size variables bound from the
// output buffer at run time), so each computes the same mapping as its static
// operator from the output shape:
//   shape_of                       entry d: the input's extent d
//   dyn.arange                     start + i * delta
//   dyn.reshape, dyn.expand_dims,
//   dyn.unsqueeze, dyn.squeeze   the element with the same row-major flat
//                                  index (the newshape / axis tensors are not read)
//   dyn.broadcast_to               NumPy broadcasting read (tag "broadcast")
//   dyn.zeros, dyn.ones, dyn.full  a constant, or fill_value converted to dtype
//                                  as cast converts (tag "elemwise")
//   dyn.strided_slice              begin and strides are read from their tensors
//                                  inside the compute and normalized as the
//                                  interpreter does (negative from the end,
//                                  clamped by the stride's sign); the end only
//                                  decides the extent, which the type gives.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/compute/tensor/families.h"
#include "lowering/compute/tensor/tensor_util.h"

namespace kiln::lowering::tensor {
namespace {

using Result = absl::StatusOr<std::vector<te::Tensor>>;

Result FlatReshape(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const Shape& shape = ctx.out_shapes[0];
  te::Tensor t = te::Compute(
      shape, [&](const std::vector<Var>& i) { return ReshapeRead(x, shape, i); },
      ComputeName(ctx), "injective");
  return std::vector<te::Tensor>{t};
}

Result DynBroadcastTo(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const Shape& shape = ctx.out_shapes[0];
  if (x.ndim() > static_cast<int>(shape.size()))
    return ctx.Error(absl::StrCat("cannot broadcast a ", x.ndim(), "-D tensor to ", shape.size(), " dims"));
  te::Tensor t = te::Compute(
      shape, [&](const std::vector<Var>& i) { return BroadcastRead(x, shape, i); },
      ComputeName(ctx), "broadcast");
  return std::vector<te::Tensor>{t};
}

FTCompute Constant(double v) {
  return [v](const ComputeCtx& ctx) -> Result {
    KILN_RETURN_IF_ERROR(CheckArity(ctx, 0));
    const DataType dt = ctx.out_dtypes[0];
    te::Tensor t = te::Compute(
        ctx.out_shapes[0], [&](const std::vector<Var>&) { return tir::MakeConst(dt, v); },
        ComputeName(ctx), "elemwise");
    return std::vector<te::Tensor>{t};
  };
}

Result DynFull(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& v = ctx.inputs[0];
  if (v.ndim() != 0) return ctx.Error(absl::StrCat("fill_value must be a 0-D tensor; got ", v.ndim(), "-D"));
  const DataType dt = ctx.out_dtypes[0];
  te::Tensor t = te::Compute(
      ctx.out_shapes[0], [&](const std::vector<Var>&) { return Convert(v({}), dt); },
      ComputeName(ctx), "elemwise");
  return std::vector<te::Tensor>{t};
}

// shape_of: entry d is the input's extent d (a symbolic dim is bound from
// the input buffer at run time).
Result ShapeOf(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const Shape& in = ctx.inputs[0].shape();
  const DataType dt = ctx.out_dtypes[0];
  te::Tensor t = te::Compute(
      ctx.out_shapes[0],
      [&](const std::vector<Var>& i) {
        PrimExpr v = tir::MakeConst(dt, 0);
        for (size_t d = in.size(); d-- > 0;) {
          v = tir::Select(tir::EQ(i[0], Idx(static_cast<int64_t>(d))), tir::Cast(dt, in[d]), v);
        }
        return v;
      },
      ComputeName(ctx), "injective");
  return std::vector<te::Tensor>{t};
}

// dyn.arange: start + i * delta in start's dtype (the extent is the output's).
Result DynArange(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 3));
  const te::Tensor& start = ctx.inputs[0];
  const te::Tensor& delta = ctx.inputs[2];
  const DataType dt = ctx.out_dtypes[0];
  te::Tensor t = te::Compute(
      ctx.out_shapes[0],
      [&](const std::vector<Var>& i) {
        return tir::Add(start({}), tir::Mul(tir::Cast(dt, i[0]), delta({})));
      },
      ComputeName(ctx), "injective");
  return std::vector<te::Tensor>{t};
}

// Static length of a 1-D argument tensor.
absl::StatusOr<int64_t> StaticLength(const ComputeCtx& ctx, size_t arg, const char* name) {
  const te::Tensor& t = ctx.inputs[arg];
  int64_t n = 0;
  if (t.ndim() != 1 || !IsConst(t.shape()[0], &n))
    return ctx.Error(absl::StrCat(name, " must be a 1-D tensor of static length"));
  if (!t.dtype().is_int() && !t.dtype().is_uint())
    return ctx.Error(absl::StrCat(name, " must be an integer tensor; got ", t.dtype().ToString()));
  return n;
}

constexpr int64_t kBig = int64_t{1} << 62;

Result DynStridedSlice(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 4));
  const te::Tensor& x = ctx.inputs[0];
  const te::Tensor& bt = ctx.inputs[1];
  const te::Tensor& st = ctx.inputs[3];
  const std::string& mode = ctx.Attrs<DynStridedSliceAttrs>().slice_mode;
  if (mode != "end" && mode != "size")
    return ctx.Error(absl::StrCat("slice_mode must be \"end\" or \"size\"; got \"", mode, "\""));
  const bool size_mode = mode == "size";
  KILN_ASSIGN_OR_RETURN(int64_t nb, StaticLength(ctx, 1, "begin"));
  KILN_ASSIGN_OR_RETURN(int64_t ne, StaticLength(ctx, 2, "end"));
  KILN_ASSIGN_OR_RETURN(int64_t ns, StaticLength(ctx, 3, "strides"));
  const int64_t nd = x.ndim();
  if (std::max({nb, ne, ns}) > nd)
    return ctx.Error("begin/end/strides have more entries than the input has axes");
  const Shape& shape = ctx.out_shapes[0];
  if (static_cast<int64_t>(shape.size()) != nd)
    return ctx.Error(absl::StrCat("the output type has rank ", shape.size(), "; expected ", nd));
  const Shape& in = x.shape();
  te::Tensor t = te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        for (int64_t d = 0; d < nd; ++d) {
          const size_t ud = static_cast<size_t>(d);
          const PrimExpr& n = in[ud];
          const PrimExpr s = (size_mode || d >= ns) ? Idx(1)
                                                    : PrimExpr(tir::Cast(tir::kIndexType, st({Idx(d)})));
          int64_t s_const = 0;
          const bool s_known = IsConst(s, &s_const);
          const PrimExpr pos = s_known ? tir::BoolImm(s_const > 0) : PrimExpr(tir::GT(s, Idx(0)));
          auto by_sign = [&](const PrimExpr& p, const PrimExpr& q) -> PrimExpr {
            if (s_known) return s_const > 0 ? p : q;
            return tir::Select(pos, p, q);
          };
          PrimExpr b;
          if (d < nb) {
            PrimExpr v = tir::Cast(tir::kIndexType, bt({Idx(d)}));
            v = tir::Min(tir::Max(v, Idx(-kBig)), Idx(kBig));
            const PrimExpr w = tir::Select(tir::LT(v, Idx(0)), tir::Add(v, n), v);
            b = tir::Max(tir::Min(w, by_sign(n, ISub(n, Idx(1)))), by_sign(Idx(0), Idx(-1)));
          } else {
            b = by_sign(Idx(0), ISub(n, Idx(1)));
          }
          idx.push_back(IAdd(b, IMul(i[ud], s)));
        }
        return x(idx);
      },
      ComputeName(ctx), "injective");
  return std::vector<te::Tensor>{t};
}

}  // namespace

void RegisterDynComputes() {
  Attach("shape_of", ShapeOf);
  Attach("dyn.reshape", FlatReshape);
  Attach("dyn.expand_dims", FlatReshape);
  Attach("dyn.arange", DynArange);
  Attach("dyn.unsqueeze", FlatReshape);
  Attach("dyn.squeeze", FlatReshape);
  Attach("dyn.broadcast_to", DynBroadcastTo);
  Attach("dyn.zeros", Constant(0));
  Attach("dyn.ones", Constant(1));
  Attach("dyn.full", DynFull);
  Attach("dyn.strided_slice", DynStridedSlice);
}

}  // namespace kiln::lowering::tensor
