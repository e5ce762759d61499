// Kernels of nn.conv2d, nn.dense, nn.matmul, nn.batch_matmul and the 2-D
// pools. Layouts, groups, padding and ceil_mode as in types/rel_conv.cc,
// rel_dense.cc and rel_pool.cc. Products accumulate in double (floats) or
// in 64-bit wrapping integers (two integer dtypes may differ: uint8 x int8),
// and are stored once in out_dtype (void = the first input's dtype).
//
// Pools: max pooling ignores padding (an all-padding window gives the dtype's
// lowest finite value, as TVM pads with it); avg pooling divides by the number
// of window positions inside the data, or with count_include_pad inside the
// padded data (a ceil_mode window hanging past the padding is cut there, as
// TVM). An integer average truncates toward zero; an empty window gives 0.
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "interpreter/kernel_util.h"
#include "ir/layout.h"
#include "ir/op_attrs.h"

namespace kiln::interp::internal {
namespace {

// A dot-product accumulator with the numeric rules above.
struct Acc {
  bool fl;
  double f = 0;
  int64_t i = 0;
  void Add(const HostTensor& a, int64_t ia, const HostTensor& b, int64_t ib) {
    if (fl) f += LoadF(a, ia) * LoadF(b, ib);
    else i = static_cast<int64_t>(static_cast<uint64_t>(i) +
                                  static_cast<uint64_t>(LoadI(a, ia)) * static_cast<uint64_t>(LoadI(b, ib)));
  }
  void Store(HostTensor& out, int64_t o) const {
    if (fl) StoreF(out, o, f);
    else StoreI(out, o, i);
  }
};

absl::Status CheckDtypes(const KernelCtx& k, const HostTensor& a, const HostTensor& b) {
  if (a.dtype() == b.dtype() || (a.dtype().is_integral() && b.dtype().is_integral()))
    return absl::OkStatus();
  return k.Error(absl::StrCat("operands must have the same dtype; got ", TypeStr(a), " and ",
                              TypeStr(b)));
}

DataType OutDtype(DataType out_dtype, const HostTensor& a) {
  return out_dtype.is_void() ? a.dtype() : out_dtype;
}

bool IsFloatMath(const HostTensor& a, const HostTensor& b) {
  return a.dtype().is_float() || b.dtype().is_float();
}

absl::StatusOr<int64_t> WindowOut(const KernelCtx& k, absl::string_view axis, int64_t in,
                                  int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                                  bool ceil_mode) {
  const int64_t eff = dilation * (kernel - 1) + 1;
  const int64_t num = in + pad - eff + (ceil_mode ? stride - 1 : 0);
  const int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (out < 1)
    return k.Error(absl::StrCat("output ", axis, " would be ", out, " (input ", in, ", padding ",
                                pad, ", window ", eff, " with dilation, stride ", stride, ")"));
  return out;
}

// A conv layout: the primal axes of `primal` in any order, each optionally
// split by a lower-case inner axis ("NCHW16c", "OIHW16i16o"). Offsets of a
// logical coordinate follow from the strides of a tensor in that layout.
struct ConvLayout {
  struct Axis {
    int pos = -1;        // position of the primal (outer) part
    int inner = -1;      // position of the split part, or -1
    int64_t factor = 0;  // split factor (0 when not split)
  };
  std::vector<Axis> axes;  // in the order of `primal`
  int64_t ndim = 0;
};

absl::StatusOr<ConvLayout> ParseConvLayout(const KernelCtx& k, absl::string_view what,
                                           const std::string& text, absl::string_view primal) {
  auto bad = [&]() {
    return k.Error(absl::StrCat(what, " \"", text, "\" is not supported: expected a permutation of ",
                                primal, ", optionally with split axes (e.g. ", primal, "8",
                                std::string(1, Layout::SplitOf(primal[1])), ")"));
  };
  absl::StatusOr<Layout> parsed = ParseLayout(text);
  if (!parsed.ok() || !parsed->HasPrimalAxes(primal)) return bad();
  for (const Layout::Axis& ax : parsed->axes)
    if (!ax.is_primal() && primal.find(Layout::PrimalOf(ax.name)) == absl::string_view::npos)
      return bad();
  ConvLayout l;
  for (char c : primal)
    l.axes.push_back({parsed->Find(c), parsed->Find(Layout::SplitOf(c)), parsed->FactorOf(c)});
  l.ndim = parsed->ndim();
  return l;
}

// Logical extent of axis `a`; an error when a split part's extent is not its factor.
absl::StatusOr<int64_t> Extent(const KernelCtx& k, const ConvLayout& l, size_t a, const HostTensor& t,
                               absl::string_view what) {
  const ConvLayout::Axis& ax = l.axes[a];
  if (ax.inner < 0) return t.shape()[static_cast<size_t>(ax.pos)];
  if (t.shape()[static_cast<size_t>(ax.inner)] != ax.factor)
    return k.Error(absl::StrCat(what, " ", TypeStr(t), " does not match its layout: axis ", ax.inner,
                                " must be ", ax.factor));
  return t.shape()[static_cast<size_t>(ax.pos)] * ax.factor;
}

// Per axis, the flat offset of each logical coordinate.
std::vector<std::vector<int64_t>> AxisOffsets(const ConvLayout& l, const Shape64& strides,
                                              const std::vector<int64_t>& extents) {
  std::vector<std::vector<int64_t>> off(l.axes.size());
  for (size_t a = 0; a < l.axes.size(); ++a) {
    const ConvLayout::Axis& ax = l.axes[a];
    off[a].resize(static_cast<size_t>(extents[a]));
    for (int64_t v = 0; v < extents[a]; ++v) {
      off[a][static_cast<size_t>(v)] =
          ax.inner < 0 ? v * strides[static_cast<size_t>(ax.pos)]
                       : (v / ax.factor) * strides[static_cast<size_t>(ax.pos)] +
                             (v % ax.factor) * strides[static_cast<size_t>(ax.inner)];
    }
  }
  return off;
}

absl::StatusOr<Value> Conv2D(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(const HostTensor* w, k.Tensor(1));
  const Conv2DAttrs& a = k.Attrs<Conv2DAttrs>();
  KILN_ASSIGN_OR_RETURN(ConvLayout dl, ParseConvLayout(k, "data_layout", a.data_layout, "NCHW"));
  KILN_ASSIGN_OR_RETURN(ConvLayout kl, ParseConvLayout(k, "kernel_layout", a.kernel_layout, "OIHW"));
  KILN_ASSIGN_OR_RETURN(
      ConvLayout ol,
      ParseConvLayout(k, "out_layout", a.out_layout.empty() ? a.data_layout : a.out_layout, "NCHW"));
  for (const ConvLayout* l : {&dl, &ol})
    if (l->axes[0].inner >= 0 || l->axes[2].inner >= 0 || l->axes[3].inner >= 0)
      return k.Error("only the C axis of a conv2d data or output layout may be split");
  if (kl.axes[2].inner >= 0 || kl.axes[3].inner >= 0)
    return k.Error("only the O and I axes of a conv2d kernel layout may be split");
  if (x->ndim() != dl.ndim || w->ndim() != kl.ndim)
    return k.Error(absl::StrCat("data and weight must be ", dl.ndim, "-D and ", kl.ndim,
                                "-D (data_layout ", a.data_layout, ", kernel_layout ",
                                a.kernel_layout, "); got ", TypeStr(*x), " and ", TypeStr(*w)));
  KILN_RETURN_IF_ERROR(CheckDtypes(k, *x, *w));
  KILN_ASSIGN_OR_RETURN(Shape64 st, Pair(k, "strides", a.strides, 1));
  KILN_ASSIGN_OR_RETURN(Shape64 dil, Pair(k, "dilation", a.dilation, 1));
  KILN_ASSIGN_OR_RETURN(Shape64 pad, Padding4(k, a.padding));
  Shape64 xe(4), we(4);
  for (size_t i = 0; i < 4; ++i) {
    KILN_ASSIGN_OR_RETURN(xe[i], Extent(k, dl, i, *x, "data"));
    KILN_ASSIGN_OR_RETURN(we[i], Extent(k, kl, i, *w, "weight"));
  }
  const int64_t N = xe[0], C = xe[1], H = xe[2], W = xe[3];
  const int64_t O = we[0], I = we[1], KH = we[2], KW = we[3];
  const int64_t g = a.groups;
  if (g < 1 || C != I * g || O % g != 0)
    return k.Error(absl::StrCat("data ", TypeStr(*x), " and weight ", TypeStr(*w), " (",
                                a.kernel_layout, ") do not match with groups=", g));
  if (a.channels && *a.channels != O)
    return k.Error(absl::StrCat("channels=", *a.channels, " but weight has ", O, " output channels"));
  KILN_ASSIGN_OR_RETURN(int64_t OH, WindowOut(k, "height", H, KH, st[0], pad[0] + pad[2], dil[0], false));
  KILN_ASSIGN_OR_RETURN(int64_t OW, WindowOut(k, "width", W, KW, st[1], pad[1] + pad[3], dil[1], false));
  const Shape64 oe = {N, O, OH, OW};
  Shape64 os(static_cast<size_t>(ol.ndim));
  for (size_t i = 0; i < 4; ++i) {
    const ConvLayout::Axis& ax = ol.axes[i];
    if (ax.inner >= 0) {
      if (oe[i] % ax.factor != 0)
        return k.Error(absl::StrCat("output channels ", oe[i], " do not divide by the block ",
                                    ax.factor, " of out_layout"));
      os[static_cast<size_t>(ax.inner)] = ax.factor;
    }
    os[static_cast<size_t>(ax.pos)] = ax.inner >= 0 ? oe[i] / ax.factor : oe[i];
  }
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, OutDtype(a.out_dtype, *x), os));
  const auto xo = AxisOffsets(dl, Strides(x->shape()), xe);
  const auto wo = AxisOffsets(kl, Strides(w->shape()), we);
  const auto oo = AxisOffsets(ol, Strides(os), oe);
  const int64_t opg = O / g;
  const bool fl = IsFloatMath(*x, *w);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oc = 0; oc < O; ++oc)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          Acc acc{fl};
          const int64_t grp = oc / opg;
          for (int64_t ic = 0; ic < I; ++ic) {
            const int64_t c = grp * I + ic;
            for (int64_t kh = 0; kh < KH; ++kh) {
              const int64_t ih = oh * st[0] - pad[0] + kh * dil[0];
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t iw = ow * st[1] - pad[1] + kw * dil[1];
                if (iw < 0 || iw >= W) continue;
                acc.Add(*x, xo[0][n] + xo[1][c] + xo[2][ih] + xo[3][iw], *w,
                        wo[0][oc] + wo[1][ic] + wo[2][kh] + wo[3][kw]);
              }
            }
          }
          acc.Store(*out, oo[0][n] + oo[1][oc] + oo[2][oh] + oo[3][ow]);
        }
  return TensorValue(std::move(out));
}

// out[b, m, n] = sum_k A[b, m, k] * B[b, k, n], with A and B given as
// (tensor, offset function). Shared by dense, matmul and batch_matmul.
template <typename FA, typename FB>
void MatMulLoop(const HostTensor& A, FA ia, const HostTensor& Bt, FB ib, HostTensor& out,
                int64_t batch, int64_t M, int64_t N, int64_t K, bool fl) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        Acc acc{fl};
        for (int64_t kk = 0; kk < K; ++kk) acc.Add(A, ia(b, m, kk), Bt, ib(b, kk, n));
        acc.Store(out, (b * M + m) * N + n);
      }
}

absl::StatusOr<Value> Dense(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(const HostTensor* w, k.Tensor(1));
  const DenseAttrs& a = k.Attrs<DenseAttrs>();
  KILN_RETURN_IF_ERROR(CheckDtypes(k, *x, *w));
  if (x->ndim() < 1 || w->ndim() != 2 || x->shape().back() != w->shape()[1])
    return k.Error(absl::StrCat("expects data [..., K] and weight [units, K]; got ", TypeStr(*x),
                                " and ", TypeStr(*w)));
  const int64_t K = w->shape()[1], U = w->shape()[0];
  if (a.units && *a.units != U)
    return k.Error(absl::StrCat("units=", *a.units, " but weight has ", U, " rows"));
  Shape64 os(x->shape().begin(), x->shape().end() - 1);
  os.push_back(U);
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, OutDtype(a.out_dtype, *x), os));
  const int64_t M = NumElements(x->shape()) / std::max<int64_t>(K, 1);
  const int64_t rows = K == 0 ? NumElements(os) / std::max<int64_t>(U, 1) : M;
  MatMulLoop(*x, [K](int64_t, int64_t m, int64_t kk) { return m * K + kk; }, *w,
             [K](int64_t, int64_t kk, int64_t n) { return n * K + kk; }, *out, 1, rows, U, K,
             IsFloatMath(*x, *w));
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> Matmul(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(const HostTensor* y, k.Tensor(1));
  const MatmulAttrs& a = k.Attrs<MatmulAttrs>();
  KILN_RETURN_IF_ERROR(CheckDtypes(k, *x, *y));
  const Shape64& xs = x->shape();
  if (x->ndim() < (a.transpose_a ? 2 : 1) || y->ndim() != 2)
    return k.Error(absl::StrCat("expects tensor_a [..., M, K] and tensor_b [K, N]; got ",
                                TypeStr(*x), " and ", TypeStr(*y)));
  const size_t r = xs.size();
  const int64_t K = a.transpose_a ? xs[r - 2] : xs[r - 1];
  const int64_t M = a.transpose_a ? xs[r - 1] : (r >= 2 ? xs[r - 2] : 1);
  const int64_t KB = a.transpose_b ? y->shape()[1] : y->shape()[0];
  const int64_t N = a.transpose_b ? y->shape()[0] : y->shape()[1];
  if (K != KB)
    return k.Error(absl::StrCat("reduction dims differ: ", TypeStr(*x), " vs ", TypeStr(*y)));
  if (a.units && *a.units != N)
    return k.Error(absl::StrCat("units=", *a.units, " but tensor_b gives ", N, " columns"));
  Shape64 os;
  int64_t batch = 1;
  if (r >= 2) {
    os.assign(xs.begin(), xs.end() - 2);
    batch = NumElements(os);
    os.push_back(M);
  }
  os.push_back(N);
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, OutDtype(a.out_dtype, *x), os));
  const bool ta = a.transpose_a, tb = a.transpose_b;
  MatMulLoop(
      *x, [=](int64_t b, int64_t m, int64_t kk) { return b * M * K + (ta ? kk * M + m : m * K + kk); },
      *y, [=](int64_t, int64_t kk, int64_t n) { return tb ? n * K + kk : kk * N + n; }, *out, batch,
      M, N, K, IsFloatMath(*x, *y));
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> BatchMatmul(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(const HostTensor* y, k.Tensor(1));
  const BatchMatmulAttrs& a = k.Attrs<BatchMatmulAttrs>();
  KILN_RETURN_IF_ERROR(CheckDtypes(k, *x, *y));
  if (x->ndim() != 3 || y->ndim() != 3)
    return k.Error(absl::StrCat("expects 3-D x and y; got ", TypeStr(*x), " and ", TypeStr(*y)));
  const Shape64& xs = x->shape();
  const Shape64& ys = y->shape();
  const bool ta = a.transpose_a, tb = a.transpose_b;
  const int64_t M = ta ? xs[2] : xs[1], K = ta ? xs[1] : xs[2];
  const int64_t KB = tb ? ys[2] : ys[1], N = tb ? ys[1] : ys[2];
  const int64_t bx = xs[0], by = ys[0];
  if (K != KB || (bx != by && bx != 1 && by != 1))
    return k.Error(absl::StrCat("incompatible operands ", TypeStr(*x), " and ", TypeStr(*y)));
  const int64_t B = bx == 1 ? by : bx;
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, OutDtype(a.out_dtype, *x), {B, M, N}));
  MatMulLoop(
      *x,
      [=](int64_t b, int64_t m, int64_t kk) {
        return (bx == 1 ? 0 : b) * M * K + (ta ? kk * M + m : m * K + kk);
      },
      *y,
      [=](int64_t b, int64_t kk, int64_t n) {
        return (by == 1 ? 0 : b) * K * N + (tb ? n * K + kk : kk * N + n);
      },
      *out, B, M, N, K, IsFloatMath(*x, *y));
  return TensorValue(std::move(out));
}

// The channel block of a layout "NCHW{f}c" (f > 0), or 0.
int64_t NCHWcFactor(const std::string& layout) {
  if (layout.size() < 6 || layout.rfind("NCHW", 0) != 0 || layout.back() != 'c') return 0;
  int64_t f = 0;
  for (size_t i = 4; i + 1 < layout.size(); ++i) {
    if (layout[i] < '0' || layout[i] > '9') return 0;
    f = f * 10 + (layout[i] - '0');
    if (f > (1 << 20)) return 0;
  }
  return f;
}

// x [N, C/f, H, W, f] <-> [N, C, H, W] (to_blocked: the other way), any dtype.
absl::StatusOr<Ref<HostTensor>> Reblock(const KernelCtx& k, const HostTensor& x, int64_t f,
                                        bool to_blocked) {
  const Shape64& s = x.shape();
  const int64_t n = s[0], h = s[2], w = s[3];
  const int64_t c = to_blocked ? s[1] : s[1] * s[4];
  if (to_blocked && c % f != 0) return k.Error("channels not divisible by the block");
  Shape64 os = to_blocked ? Shape64{n, c / f, h, w, f} : Shape64{n, c, h, w};
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x.dtype(), os));
  const size_t e = static_cast<size_t>((x.dtype().bits() + 7) / 8);
  const char* src = static_cast<const char*>(x.raw_data());
  char* dst = static_cast<char*>(out->mutable_raw_data());
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) {
          const int64_t plain = ((in * c + ic) * h + ih) * w + iw;
          const int64_t blocked = (((in * (c / f) + ic / f) * h + ih) * w + iw) * f + ic % f;
          const int64_t from = to_blocked ? plain : blocked, to = to_blocked ? blocked : plain;
          std::memcpy(dst + static_cast<size_t>(to) * e, src + static_cast<size_t>(from) * e, e);
        }
  return out;
}

// A pool called in NCHW{f}c (layout = out_layout): unblock, run the NCHW
// kernel, block again. The oracle stays the one NCHW loop nest.
template <typename A>
absl::StatusOr<std::optional<Value>> BlockedPool(
    const KernelCtx& k, const std::function<absl::StatusOr<Value>(const KernelCtx&)>& plain) {
  const A& a = k.Attrs<A>();
  const int64_t f = NCHWcFactor(a.layout);
  if (f == 0 || k.attrs == nullptr) return std::optional<Value>();
  if (!a.out_layout.empty() && a.out_layout != a.layout)
    return k.Error(absl::StrCat("out_layout \"", a.out_layout, "\" must equal the blocked layout \"",
                                a.layout, "\""));
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  if (x->ndim() != 5 || x->shape()[4] != f)
    return k.Error(absl::StrCat("expects a 5-D tensor with a last axis of ", f, "; got ", TypeStr(*x)));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> x4, Reblock(k, *x, f, /*to_blocked=*/false));
  Ref<AttrsNode> cloned = k.attrs->Clone();
  auto* na = static_cast<A*>(cloned.get());
  na->layout = "NCHW";
  na->out_layout = "";
  std::vector<Value> args = k.args;
  args[0] = TensorValue(x4);
  KernelCtx k4{k.op, cloned.get(), args};
  KILN_ASSIGN_OR_RETURN(Value y4, plain(k4));
  const std::vector<Value> results = {y4};
  const KernelCtx ky{k.op, cloned.get(), results};
  KILN_ASSIGN_OR_RETURN(const HostTensor* y, ky.Tensor(0));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> yb, Reblock(k, *y, f, /*to_blocked=*/true));
  return std::optional<Value>(TensorValue(yb));
}

absl::StatusOr<Value> GlobalPool2D(const KernelCtx& k, bool is_max);

absl::StatusOr<Value> Pool2D(const KernelCtx& k, bool is_max) {
  KILN_ASSIGN_OR_RETURN(std::optional<Value> blocked,
                        BlockedPool<Pool2DAttrs>(k, [is_max](const KernelCtx& k4) {
                          return Pool2D(k4, is_max);
                        }));
  if (blocked) return *blocked;
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const Pool2DAttrs& a = k.Attrs<Pool2DAttrs>();
  KILN_ASSIGN_OR_RETURN(std::vector<int> l, PermutedLayout(k, "layout", a.layout, "NCHW"));
  KILN_ASSIGN_OR_RETURN(std::vector<int> ol,
                        PermutedLayout(k, "out_layout", a.out_layout.empty() ? a.layout : a.out_layout, "NCHW"));
  if (x->ndim() != 4) return k.Error(absl::StrCat("expects a 4-D tensor; got ", TypeStr(*x)));
  KILN_ASSIGN_OR_RETURN(Shape64 ps, Pair(k, "pool_size", a.pool_size, 1));
  KILN_ASSIGN_OR_RETURN(Shape64 st, Pair(k, "strides", a.strides, 1));
  KILN_ASSIGN_OR_RETURN(Shape64 dil, Pair(k, "dilation", a.dilation, 1));
  KILN_ASSIGN_OR_RETURN(Shape64 pad, Padding4(k, a.padding));
  const Shape64& xs = x->shape();
  const int64_t N = xs[l[0]], C = xs[l[1]], H = xs[l[2]], W = xs[l[3]];
  KILN_ASSIGN_OR_RETURN(int64_t OH, WindowOut(k, "height", H, ps[0], st[0], pad[0] + pad[2], dil[0], a.ceil_mode));
  KILN_ASSIGN_OR_RETURN(int64_t OW, WindowOut(k, "width", W, ps[1], st[1], pad[1] + pad[3], dil[1], a.ceil_mode));
  Shape64 os(4);
  os[ol[0]] = N;
  os[ol[1]] = C;
  os[ol[2]] = OH;
  os[ol[3]] = OW;
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), os));
  const Shape64 xst = Strides(xs), ost = Strides(os);
  const bool fl = x->dtype().is_float();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double best = 0, sumf = 0;
          int64_t sumi = 0, besti = 0, count = 0, padded_count = 0;
          bool any = false;
          for (int64_t kh = 0; kh < ps[0]; ++kh) {
            const int64_t ih = oh * st[0] - pad[0] + kh * dil[0];
            for (int64_t kw = 0; kw < ps[1]; ++kw) {
              const int64_t iw = ow * st[1] - pad[1] + kw * dil[1];
              if (ih < H + pad[2] && iw < W + pad[3]) ++padded_count;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              const int64_t idx = n * xst[l[0]] + c * xst[l[1]] + ih * xst[l[2]] + iw * xst[l[3]];
              ++count;
              if (is_max && !fl) {
                const int64_t v = LoadI(*x, idx);
                if (!any || v > besti) besti = v;
                any = true;
              } else if (is_max) {
                const double v = LoadF(*x, idx);
                if (!any || std::isnan(v) || (!std::isnan(best) && v > best)) best = v;
                any = true;
              } else if (fl) {
                sumf += LoadF(*x, idx);
              } else {
                sumi += LoadI(*x, idx);
              }
            }
          }
          const int64_t o = n * ost[ol[0]] + c * ost[ol[1]] + oh * ost[ol[2]] + ow * ost[ol[3]];
          if (is_max) {
            if (!any) StoreF(*out, o, LowestValue(x->dtype()));
            else if (fl) StoreF(*out, o, best);
            else StoreI(*out, o, besti);
            continue;
          }
          const int64_t div = a.count_include_pad ? padded_count : count;
          if (div == 0) StoreF(*out, o, 0);
          else if (fl) StoreF(*out, o, sumf / static_cast<double>(div));
          else StoreI(*out, o, sumi / div);
        }
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> GlobalPool2D(const KernelCtx& k, bool is_max) {
  KILN_ASSIGN_OR_RETURN(std::optional<Value> blocked,
                        BlockedPool<GlobalPool2DAttrs>(k, [is_max](const KernelCtx& k4) {
                          return GlobalPool2D(k4, is_max);
                        }));
  if (blocked) return *blocked;
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const GlobalPool2DAttrs& a = k.Attrs<GlobalPool2DAttrs>();
  KILN_ASSIGN_OR_RETURN(std::vector<int> l, PermutedLayout(k, "layout", a.layout, "NCHW"));
  KILN_ASSIGN_OR_RETURN(std::vector<int> ol,
                        PermutedLayout(k, "out_layout", a.out_layout.empty() ? a.layout : a.out_layout, "NCHW"));
  if (x->ndim() != 4) return k.Error(absl::StrCat("expects a 4-D tensor; got ", TypeStr(*x)));
  const Shape64& xs = x->shape();
  const int64_t N = xs[l[0]], C = xs[l[1]], H = xs[l[2]], W = xs[l[3]];
  if (is_max && H * W == 0) return k.Error("cannot take the max of an empty window");
  Shape64 os(4);
  os[ol[0]] = N;
  os[ol[1]] = C;
  os[ol[2]] = 1;
  os[ol[3]] = 1;
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), os));
  const Shape64 xst = Strides(xs), ost = Strides(os);
  const bool fl = x->dtype().is_float();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      double best = 0, sumf = 0;
      int64_t sumi = 0;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          const int64_t idx = n * xst[l[0]] + c * xst[l[1]] + h * xst[l[2]] + w * xst[l[3]];
          const double v = LoadF(*x, idx);
          if ((h == 0 && w == 0) || std::isnan(v) || (!std::isnan(best) && v > best)) best = v;
          sumf += v;
          sumi += fl ? 0 : LoadI(*x, idx);
        }
      const int64_t o = n * ost[ol[0]] + c * ost[ol[1]];
      if (is_max) StoreF(*out, o, best);
      else if (H * W == 0) StoreF(*out, o, fl ? NAN : 0);
      else if (fl) StoreF(*out, o, sumf / static_cast<double>(H * W));
      else StoreI(*out, o, sumi / (H * W));
    }
  return TensorValue(std::move(out));
}

}  // namespace

void RegisterNNKernels() {
  AddKernel("nn.conv2d", Conv2D);
  AddKernel("nn.dense", Dense);
  AddKernel("nn.matmul", Matmul);
  AddKernel("nn.batch_matmul", BatchMatmul);
  AddKernel("nn.max_pool2d", [](const KernelCtx& k) { return Pool2D(k, true); });
  AddKernel("nn.avg_pool2d", [](const KernelCtx& k) { return Pool2D(k, false); });
  AddKernel("nn.global_max_pool2d", [](const KernelCtx& k) { return GlobalPool2D(k, true); });
  AddKernel("nn.global_avg_pool2d", [](const KernelCtx& k) { return GlobalPool2D(k, false); });
}

}  // namespace kiln::interp::internal
