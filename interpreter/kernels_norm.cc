// Kernels of nn.batch_norm (inference: normalizes with the moving statistics
// and returns them unchanged, as Relay), nn.layer_norm (biased variance over
// `axis`), nn.softmax / nn.log_softmax (max-subtracted), nn.dropout (identity
// plus a mask of ones) and nn.pad (constant, edge, reflect). All in double,
// rounded once on store.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "interpreter/kernel_util.h"
#include "ir/op_attrs.h"

namespace kiln::interp::internal {
namespace {

// Splits a shape around `axis` into outer x len x inner.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
  int64_t Index(int64_t o, int64_t j, int64_t i) const { return (o * len + j) * inner + i; }
};
AxisSplit SplitAt(const Shape64& s, int64_t axis) {
  AxisSplit r;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d < axis) r.outer *= s[static_cast<size_t>(d)];
    else if (d == axis) r.len = s[static_cast<size_t>(d)];
    else r.inner *= s[static_cast<size_t>(d)];
  }
  return r;
}

absl::Status CheckVector(const KernelCtx& k, const HostTensor& x, size_t arg, int64_t len) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* v, k.Tensor(arg));
  if (v->ndim() != 1 || v->shape()[0] != len || v->dtype() != x.dtype())
    return k.Error(absl::StrCat("argument ", arg, " (", k.op.arguments[arg].name,
                                ") must be a 1-D tensor of length ", len, " and dtype ",
                                x.dtype().ToString(), "; got ", TypeStr(*v)));
  return absl::OkStatus();
}

absl::StatusOr<Value> BatchNorm(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const BatchNormAttrs& a = k.Attrs<BatchNormAttrs>();
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(k, a.axis, x->ndim()));
  const AxisSplit s = SplitAt(x->shape(), axis);
  for (size_t i = 1; i <= 4; ++i) KILN_RETURN_IF_ERROR(CheckVector(k, *x, i, s.len));
  const HostTensor& gamma = *k.args[1].tensor();
  const HostTensor& beta = *k.args[2].tensor();
  const HostTensor& mean = *k.args[3].tensor();
  const HostTensor& var = *k.args[4].tensor();
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), x->shape()));
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.len; ++j) {
      const double scale = (a.scale ? LoadF(gamma, j) : 1.0) / std::sqrt(LoadF(var, j) + a.epsilon);
      const double shift = a.center ? LoadF(beta, j) : 0.0;
      for (int64_t i = 0; i < s.inner; ++i) {
        const int64_t idx = s.Index(o, j, i);
        StoreF(*out, idx, (LoadF(*x, idx) - LoadF(mean, j)) * scale + shift);
      }
    }
  return Value::Tuple({TensorValue(std::move(out)), k.args[3], k.args[4]});
}

absl::StatusOr<Value> LayerNorm(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const LayerNormAttrs& a = k.Attrs<LayerNormAttrs>();
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(k, a.axis, x->ndim()));
  const AxisSplit s = SplitAt(x->shape(), axis);
  for (size_t i = 1; i <= 2; ++i) KILN_RETURN_IF_ERROR(CheckVector(k, *x, i, s.len));
  const HostTensor& gamma = *k.args[1].tensor();
  const HostTensor& beta = *k.args[2].tensor();
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), x->shape()));
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < s.len; ++j) mean += LoadF(*x, s.Index(o, j, i));
      mean /= static_cast<double>(s.len);
      for (int64_t j = 0; j < s.len; ++j) {
        const double d = LoadF(*x, s.Index(o, j, i)) - mean;
        var += d * d;
      }
      var /= static_cast<double>(s.len);
      const double rstd = 1.0 / std::sqrt(var + a.epsilon);
      for (int64_t j = 0; j < s.len; ++j) {
        const int64_t idx = s.Index(o, j, i);
        double v = (LoadF(*x, idx) - mean) * rstd;
        if (a.scale) v *= LoadF(gamma, j);
        if (a.center) v += LoadF(beta, j);
        StoreF(*out, idx, v);
      }
    }
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> Softmax(const KernelCtx& k, bool log) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(k, k.Attrs<SoftmaxAttrs>().axis, x->ndim()));
  const AxisSplit s = SplitAt(x->shape(), axis);
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), x->shape()));
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < s.inner; ++i) {
      double m = -INFINITY;
      for (int64_t j = 0; j < s.len; ++j) m = std::max(m, LoadF(*x, s.Index(o, j, i)));
      if (std::isinf(m)) m = 0;  // all -inf (or +inf): avoid inf - inf
      double sum = 0;
      for (int64_t j = 0; j < s.len; ++j) sum += std::exp(LoadF(*x, s.Index(o, j, i)) - m);
      for (int64_t j = 0; j < s.len; ++j) {
        const int64_t idx = s.Index(o, j, i);
        const double z = LoadF(*x, idx) - m;
        StoreF(*out, idx, log ? z - std::log(sum) : std::exp(z) / sum);
      }
    }
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> Dropout(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> mask, NewTensor(k, x->dtype(), x->shape()));
  for (int64_t i = 0; i < x->num_elements(); ++i) StoreF(*mask, i, 1.0);
  return Value::Tuple({k.args[0], TensorValue(std::move(mask))});
}

absl::StatusOr<Value> Pad(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(const HostTensor* pv, k.Tensor(1));
  const PadAttrs& a = k.Attrs<PadAttrs>();
  const std::string& mode = a.pad_mode;
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    return k.Error(absl::StrCat("pad_mode must be \"constant\", \"edge\" or \"reflect\"; got \"",
                                mode, "\""));
  if (pv->ndim() != 0) return k.Error(absl::StrCat("pad_value must be a 0-D tensor; got ", TypeStr(*pv)));
  const Shape64& xs = x->shape();
  if (a.pad_width.size() != xs.size())
    return k.Error(absl::StrCat("pad_width has ", a.pad_width.size(), " pairs; expected ", xs.size()));
  Shape64 os;
  for (size_t d = 0; d < xs.size(); ++d) {
    const auto& p = a.pad_width[d];
    if (p.size() != 2 || p[0] < 0 || p[1] < 0)
      return k.Error(absl::StrCat("pad_width[", d, "] must be [before, after] >= 0"));
    if (mode != "constant" && (p[0] > 0 || p[1] > 0) &&
        (xs[d] == 0 || (mode == "reflect" && (p[0] >= xs[d] || p[1] >= xs[d]))))
      return k.Error(absl::StrCat(mode, " padding ", ShapeStr(p), " of axis ", d,
                                  " needs a larger extent than ", xs[d]));
    os.push_back(xs[d] + p[0] + p[1]);
  }
  // The pad value converted to data's dtype (through an element of that dtype).
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> fill, NewTensor(k, x->dtype(), {}));
  if (pv->dtype().is_float()) StoreF(*fill, 0, LoadF(*pv, 0));
  else StoreI(*fill, 0, LoadI(*pv, 0));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), os));
  const Shape64 xst = Strides(xs);
  Shape64 c;
  for (int64_t o = 0; o < out->num_elements(); ++o) {
    Unravel(o, os, &c);
    int64_t src = 0;
    bool inside = true;
    for (size_t d = 0; d < xs.size(); ++d) {
      int64_t i = c[d] - a.pad_width[d][0];
      const int64_t n = xs[d];
      if (i < 0 || i >= n) {
        if (mode == "constant") {
          inside = false;
          break;
        }
        if (mode == "edge") i = i < 0 ? 0 : n - 1;
        else i = i < 0 ? -i : 2 * (n - 1) - i;
      }
      src += i * xst[d];
    }
    if (inside) CopyElem(*x, src, *out, o);
    else CopyElem(*fill, 0, *out, o);
  }
  return TensorValue(std::move(out));
}

}  // namespace

void RegisterNormKernels() {
  AddKernel("nn.batch_norm", BatchNorm);
  AddKernel("nn.layer_norm", LayerNorm);
  AddKernel("nn.softmax", [](const KernelCtx& k) { return Softmax(k, false); });
  AddKernel("nn.log_softmax", [](const KernelCtx& k) { return Softmax(k, true); });
  AddKernel("nn.dropout", Dropout);
  AddKernel("nn.pad", Pad);
}

}  // namespace kiln::interp::internal
