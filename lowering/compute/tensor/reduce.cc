// File: lowering/compute/tensor/reduce.cc
//
// Reductions (tag "comm_reduce"), as interpreter/kernels_reduce.cc:
// sum mean max min prod (dtype kept) and argmax argmin (int32).
//   axis=none reduces every axis (exclude ignored); axis=[...] reduces those
//   axes (negative ones count from the end; [] reduces nothing); exclude
//   reduces the axes not listed; keepdims keeps reduced axes with extent 1.
//   Floats: float16/bfloat16 accumulate in float32 and are rounded by a second
//   compute; float32/float64 accumulate in their own type (the interpreter uses
//   double: results agree within float rounding). max/min propagate NaN.
//   Integers: sum/prod in the dtype (wrapping, which equals the interpreter's
//   64-bit wrapping sum truncated on store); mean sums in 64 bits and divides
//   truncating, in a second compute; bools are reduced as integers and stored
//   as "nonzero" (sum = any, prod = all, mean = all).
//   argmax/argmin: row-major index within the reduced axes; NaN wins (the
//   first NaN), then the first extreme (the last with select_last_index).
//   Reducing an empty axis gives the reduction's identity where the
//   interpreter reports an error (max/min/argmax/argmin, integer mean: 0).
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/compute/tensor/families.h"
#include "lowering/compute/tensor/tensor_util.h"

namespace kiln::lowering::tensor {
namespace {

enum class Red { kSum, kMean, kMax, kMin, kProd, kArgMax, kArgMin };

bool IsArg(Red r) { return r == Red::kArgMax || r == Red::kArgMin; }

template <typename A>
absl::StatusOr<std::vector<bool>> ReducedAxes(const ComputeCtx& ctx, const A& a, int64_t ndim) {
  std::vector<bool> reduce(static_cast<size_t>(ndim), !a.axis.has_value());
  if (a.axis) {
    std::vector<bool> listed(static_cast<size_t>(ndim), false);
    for (int64_t ax : *a.axis) {
      KILN_ASSIGN_OR_RETURN(int64_t k, NormAxis(ctx, ax, ndim));
      if (listed[static_cast<size_t>(k)])
        return ctx.Error(absl::StrCat("axis lists axis ", k, " twice"));
      listed[static_cast<size_t>(k)] = true;
    }
    for (size_t i = 0; i < listed.size(); ++i) reduce[i] = listed[i] != a.exclude;
  }
  return reduce;
}

template <typename A>
bool SelectLast(const A& a) {
  if constexpr (std::is_same_v<A, ArgReduceAttrs>) return a.select_last_index;
  else return false;
}

// The type values are reduced in.
DataType AccType(Red op, DataType dt) {
  if (dt.is_float()) return ComputeType(dt);
  if (dt.is_bool()) {
    if (op == Red::kSum || op == Red::kProd || op == Red::kMean) return DataType::Int(64);
    return DataType::Int(32);
  }
  if (op == Red::kMean) return dt.is_uint() ? DataType::UInt(64) : DataType::Int(64);
  return dt;
}

template <typename A>
FTCompute Reduce(Red op) {
  return [op](const ComputeCtx& ctx) -> absl::StatusOr<std::vector<te::Tensor>> {
    KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
    const te::Tensor& x = ctx.inputs[0];
    const A& a = ctx.Attrs<A>();
    const Shape& in = x.shape();
    KILN_ASSIGN_OR_RETURN(std::vector<bool> reduce, ReducedAxes(ctx, a, x.ndim()));
    const Shape& out_shape = ctx.out_shapes[0];
    const DataType out_dt = ctx.out_dtypes[0];
    size_t expect_rank = 0, n_reduced = 0;
    for (bool r : reduce) {
      expect_rank += (!r || a.keepdims) ? 1 : 0;
      n_reduced += r ? 1 : 0;
    }
    if (expect_rank != out_shape.size())
      return ctx.Error(absl::StrCat("the output type has rank ", out_shape.size(),
                                    "; the attributes give rank ", expect_rank));
    const std::string name = ComputeName(ctx);

    // Reduction axes, one per reduced input dim.
    std::vector<tir::IterVar> axes;
    Shape reduced_extents;
    for (size_t d = 0; d < reduce.size(); ++d) {
      if (!reduce[d]) continue;
      axes.push_back(te::ReduceAxis({Idx(0), in[d]}, absl::StrCat("k", d)));
      reduced_extents.push_back(in[d]);
    }
    // Input indices for output indices i.
    auto input_index = [&](const std::vector<Var>& i) {
      std::vector<PrimExpr> idx;
      size_t j = 0, k = 0;
      for (size_t d = 0; d < reduce.size(); ++d) {
        if (reduce[d]) {
          idx.push_back(axes[k++]->var);
          if (a.keepdims) ++j;
        } else {
          idx.push_back(i[j++]);
        }
      }
      return idx;
    };

    if (n_reduced == 0) {
      // Nothing to reduce: the value itself (an arg reduction's index is 0).
      te::Tensor t = te::Compute(
          out_shape,
          [&](const std::vector<Var>& i) -> PrimExpr {
            if (IsArg(op)) return tir::IntImm(0, out_dt);
            return Convert(x(input_index(i)), out_dt);
          },
          name, "elemwise");
      return std::vector<te::Tensor>{t};
    }

    const DataType acc = AccType(op, x.dtype());
    if (IsArg(op)) {
      const bool last = SelectLast(a);
      const tir::ReduceKind kind = op == Red::kArgMax ? tir::ReduceKind::kArgMax : tir::ReduceKind::kArgMin;
      te::Tensor t = te::Compute(
          out_shape,
          [&](const std::vector<Var>& i) {
            std::vector<PrimExpr> kv;
            for (const tir::IterVar& k : axes) kv.push_back(k->var);
            const PrimExpr flat = tir::Cast(out_dt, FlatIndex(kv, reduced_extents));
            return tir::ArgReduce(kind, tir::Cast(acc, x(input_index(i))), flat, axes, last,
                                  nullptr, out_dt);
          },
          name, "comm_reduce");
      return std::vector<te::Tensor>{t};
    }

    auto reduce_body = [&](const std::vector<Var>& i) {
      const PrimExpr v = tir::Cast(acc, x(input_index(i)));
      switch (op) {
        case Red::kProd: return te::Prod(v, axes);
        case Red::kMax: return te::Max(v, axes);
        case Red::kMin: return te::Min(v, axes);
        default: return te::Sum(v, axes);
      }
    };
    if (op != Red::kMean && acc == out_dt) {
      te::Tensor t = te::Compute(out_shape, reduce_body, name, "comm_reduce");
      return std::vector<te::Tensor>{t};
    }
    // Accumulate in `acc`, then finish (divide for mean) and store as out_dt.
    te::Tensor red = te::Compute(out_shape, reduce_body, absl::StrCat(name, "_acc"), "comm_reduce");
    const PrimExpr count = Product(reduced_extents);
    te::Tensor t = te::Compute(
        out_shape,
        [&](const std::vector<Var>& i) {
          PrimExpr v = red(i);
          if (op == Red::kMean) {
            int64_t c = 0;
            if (acc.is_float()) {
              v = tir::Div(v, IsConst(count, &c) ? FConst(acc, static_cast<double>(c))
                                                 : PrimExpr(tir::Cast(acc, count)));
            } else {
              // The interpreter reports an empty integer mean; divide by 1 instead.
              const PrimExpr d = IsConst(count, &c)
                                     ? tir::IntImm(c < 1 ? 1 : c, acc)
                                     : PrimExpr(tir::Max(tir::Cast(acc, count), tir::IntImm(1, acc)));
              v = tir::Div(v, d);
            }
          }
          return Convert(v, out_dt);
        },
        name, "elemwise");
    return std::vector<te::Tensor>{t};
  };
}

}  // namespace

void RegisterReduceComputes() {
  Attach("sum", Reduce<ReduceAttrs>(Red::kSum));
  Attach("mean", Reduce<ReduceAttrs>(Red::kMean));
  Attach("max", Reduce<ReduceAttrs>(Red::kMax));
  Attach("min", Reduce<ReduceAttrs>(Red::kMin));
  Attach("prod", Reduce<ReduceAttrs>(Red::kProd));
  Attach("argmax", Reduce<ArgReduceAttrs>(Red::kArgMax));
  Attach("argmin", Reduce<ArgReduceAttrs>(Red::kArgMin));
}

}  // namespace kiln::lowering::tensor
