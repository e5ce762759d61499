// Kernels of reductions: sum, mean, max, min, prod (dtype kept) and argmax,
// argmin (int32). Attribute semantics as in types/rel_reduce.cc: axis=none
// reduces every axis (exclude ignored), `exclude` reduces the axes not listed,
// keepdims keeps reduced axes with extent 1. Floats accumulate in double,
// integers in 64 bits (wrapping); an integer mean truncates toward zero. The
// sum of nothing is 0, the product 1, the float mean NaN; max/min/argmax/argmin
// of an empty axis are errors. argmax over several axes gives the row-major
// index within the reduced axes.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "interpreter/kernel_util.h"
#include "ir/op_attrs.h"

namespace kiln::interp::internal {
namespace {

enum class Red { kSum, kMean, kMax, kMin, kProd, kArgMax, kArgMin };

struct Plan {
  std::vector<bool> reduce;
  Shape64 out_shape;
  int64_t reduced_count = 1;
};

template <typename A>
absl::StatusOr<Plan> MakePlan(const KernelCtx& k, const A& a, const Shape64& in) {
  const int64_t ndim = static_cast<int64_t>(in.size());
  Plan p;
  p.reduce.assign(in.size(), !a.axis.has_value());
  if (a.axis) {
    std::vector<bool> listed(in.size(), false);
    for (int64_t ax : *a.axis) {
      KILN_ASSIGN_OR_RETURN(int64_t x, NormAxis(k, ax, ndim));
      if (listed[static_cast<size_t>(x)])
        return k.Error(absl::StrCat("axis ", ShapeStr(*a.axis), " lists axis ", x, " twice"));
      listed[static_cast<size_t>(x)] = true;
    }
    for (size_t i = 0; i < in.size(); ++i) p.reduce[i] = listed[i] != a.exclude;
  }
  for (size_t i = 0; i < in.size(); ++i) {
    if (!p.reduce[i]) p.out_shape.push_back(in[i]);
    else {
      p.reduced_count *= in[i];
      if (a.keepdims) p.out_shape.push_back(1);
    }
  }
  return p;
}

template <typename A>
bool SelectLast(const A& a) {
  if constexpr (std::is_same_v<A, ArgReduceAttrs>) return a.select_last_index;
  else return false;
}

// Integer arg reductions keep the best value in acci and its index in accf
// (exact for any realistic index); float ones the other way round.
template <typename A>
KernelFn Reduce(Red op) {
  return [op](const KernelCtx& k) -> absl::StatusOr<Value> {
    KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
    const A& a = k.Attrs<A>();
    KILN_ASSIGN_OR_RETURN(Plan p, MakePlan(k, a, x->shape()));
    const bool last = SelectLast(a);
    const bool arg = op == Red::kArgMax || op == Red::kArgMin;
    const DataType dt = x->dtype();
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out,
                          NewTensor(k, arg ? DataType::Int(32) : dt, p.out_shape));
    const int64_t n_out = out->num_elements();
    if (p.reduced_count == 0 && n_out > 0 && op != Red::kSum && op != Red::kProd &&
        !(op == Red::kMean && dt.is_float()))
      return k.Error(absl::StrCat("cannot reduce an empty axis of ", TypeStr(*x),
                                  ": the reduction has no identity"));
    const bool fl = dt.is_float();
    const bool u64 = dt.is_uint() && dt.bits() == 64;
    std::vector<double> accf(static_cast<size_t>(n_out));
    std::vector<int64_t> acci(static_cast<size_t>(n_out));
    std::vector<int64_t> argi(static_cast<size_t>(n_out), -1);
    const double init = op == Red::kProd ? 1 : 0;
    std::fill(accf.begin(), accf.end(), init);
    std::fill(acci.begin(), acci.end(), static_cast<int64_t>(init));
    // Output strides over the input axes (0 on reduced axes), and the strides
    // of the reduced axes within the reduced block (for arg reductions).
    const Shape64& in = x->shape();
    Shape64 ostride(in.size(), 0), rstride(in.size(), 0);
    {
      int64_t s = 1, r = 1;
      for (size_t i = in.size(); i-- > 0;) {
        if (p.reduce[i]) {
          rstride[i] = r;
          r *= in[i];
        } else {
          ostride[i] = s;
          s *= in[i];
        }
      }
    }
    Shape64 c;
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      Unravel(i, in, &c);
      int64_t o = 0, ri = 0;
      for (size_t d = 0; d < in.size(); ++d) {
        o += c[d] * ostride[d];
        ri += c[d] * rstride[d];
      }
      const size_t so = static_cast<size_t>(o);
      const bool first = argi[so] < 0;
      if (fl) {
        const double v = LoadF(*x, i);
        double& acc = accf[so];
        switch (op) {
          case Red::kSum: case Red::kMean: acc += v; break;
          case Red::kProd: acc *= v; break;
          case Red::kMax: acc = first ? v : (std::isnan(acc) || std::isnan(v)) ? NAN : std::max(acc, v); break;
          case Red::kMin: acc = first ? v : (std::isnan(acc) || std::isnan(v)) ? NAN : std::min(acc, v); break;
          case Red::kArgMax:
          case Red::kArgMin: {
            bool better;
            if (first) better = true;
            else if (std::isnan(acc)) better = false;
            else if (std::isnan(v)) better = true;
            else if (op == Red::kArgMax) better = last ? v >= acc : v > acc;
            else better = last ? v <= acc : v < acc;
            if (better) {
              acc = v;
              acci[so] = ri;
            }
            break;
          }
        }
      } else {
        const int64_t v = LoadI(*x, i);
        int64_t& acc = acci[so];
        auto less = [u64](int64_t p, int64_t q) {
          return u64 ? static_cast<uint64_t>(p) < static_cast<uint64_t>(q) : p < q;
        };
        switch (op) {
          case Red::kSum: case Red::kMean:
            acc = static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
            break;
          case Red::kProd:
            acc = static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
            break;
          case Red::kMax: acc = (first || less(acc, v)) ? v : acc; break;
          case Red::kMin: acc = (first || less(v, acc)) ? v : acc; break;
          case Red::kArgMax:
          case Red::kArgMin: {
            const int64_t cur = argi[so] < 0 ? v : acc;
            bool better;
            if (first) better = true;
            else if (op == Red::kArgMax) better = last ? !less(v, cur) : less(cur, v);
            else better = last ? !less(cur, v) : less(v, cur);
            if (better) {
              acc = v;
              accf[so] = static_cast<double>(ri);
            }
            break;
          }
        }
      }
      argi[so] = 1;
    }
    for (int64_t o = 0; o < n_out; ++o) {
      const size_t so = static_cast<size_t>(o);
      if (arg) {
        StoreI(*out, o, fl ? acci[so] : static_cast<int64_t>(accf[so]));
      } else if (fl) {
        StoreF(*out, o, op == Red::kMean ? accf[so] / static_cast<double>(p.reduced_count)
                                         : accf[so]);
      } else if (op == Red::kMean) {
        if (u64)
          StoreI(*out, o, static_cast<int64_t>(static_cast<uint64_t>(acci[so]) /
                                               static_cast<uint64_t>(p.reduced_count)));
        else
          StoreI(*out, o, acci[so] / p.reduced_count);
      } else {
        StoreI(*out, o, acci[so]);
      }
    }
    return TensorValue(std::move(out));
  };
}

}  // namespace

void RegisterReduceKernels() {
  AddKernel("sum", Reduce<ReduceAttrs>(Red::kSum));
  AddKernel("mean", Reduce<ReduceAttrs>(Red::kMean));
  AddKernel("max", Reduce<ReduceAttrs>(Red::kMax));
  AddKernel("min", Reduce<ReduceAttrs>(Red::kMin));
  AddKernel("prod", Reduce<ReduceAttrs>(Red::kProd));
  AddKernel("argmax", Reduce<ArgReduceAttrs>(Red::kArgMax));
  AddKernel("argmin", Reduce<ArgReduceAttrs>(Red::kArgMin));
}

}  // namespace kiln::interp::internal
