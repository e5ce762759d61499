// Type relation of nn.conv2d.
//
//   data   in data_layout: any permutation of NCHW (NCHW, NHWC, ...), or a
//          blocked layout splitting C: NCHW{x}c is 5-D (N, C/x, H, W, x)
//   weight in kernel_layout: any permutation of OIHW (OIHW, HWIO, OHWI, HWOI),
//          optionally splitting I and/or O: OIHW{i}i{o}o is 6-D
//          (O/o, I/i, KH, KW, i, o)
//   out    in out_layout ("" = data_layout), e.g. NCHW{y}c gives
//          (N, O/y, OH, OW, y); dtype out_dtype (void = data's)
//   out H  = floor((H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1) / stride_h) + 1
//            (likewise W); symbolic H gives a symbolic expression.
//
// Choices:
//   - Kernel axes mean the same in every kernel layout: O = all output channels,
//     I = input channels per group (C / groups). So a depthwise conv of C
//     channels with multiplier m has groups=C and weight OIHW (C*m, 1, KH, KW)
//     or HWOI (KH, KW, C*m, 1).
//   - When the weight's type is still unknown and both `channels` and
//     `kernel_size` are set, the weight's type is assigned (as Relay does);
//     otherwise the relation waits for it.
//   - data and weight must have the same dtype, except that two integer dtypes
//     may differ (uint8 x int8 quantized convolution).
//   - Blocked layouts are checked on logical extents: C = (C/x) * x,
//     I = (I/i) * i, O = (O/o) * o; the inner extent of a split axis must
//     equal its factor, and the output's channels must divide by y. Groups
//     work as in the plain layouts (groups=1, depthwise, grouped), with the
//     logical I = C / groups divisible by i.
//   - Checks against non-static dims (symbolic or `?`) are left to run time.
//   - A kernel extent that is not static (and not given by kernel_size) makes
//     the output's spatial dims `?`.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

// A conv layout: the primal axes `primal` in any order, plus optionally a
// split (lower-case) part of any of the primal axes in `splittable`.
absl::StatusOr<Layout> ParseConvLayout(const RelationCall& call, absl::string_view what,
                                       absl::string_view text, absl::string_view primal,
                                       absl::string_view splittable) {
  KILN_ASSIGN_OR_RETURN(Layout l, ParseLayout(call, what, text));
  bool ok = l.HasPrimalAxes(primal);
  for (const Layout::Axis& ax : l.axes)
    if (!ax.is_primal())
      ok = ok && splittable.find(Layout::PrimalOf(ax.name)) != absl::string_view::npos;
  if (!ok) {
    std::string blocked;
    for (char c : splittable) absl::StrAppend(&blocked, blocked.empty() ? "" : " or ", "{n}",
                                              std::string(1, Layout::SplitOf(c)));
    return call.Error(absl::StrCat(what, " \"", text, "\" is not supported: expected a ",
                                   "permutation of ", primal, " (e.g. \"", primal, "\")",
                                   blocked.empty() ? "" : ", optionally blocked with ", blocked));
  }
  return l;
}

// Logical extent of primal axis `axis` of `shape` in layout `l`; checks the
// split part's extent against its factor.
absl::StatusOr<Dim> LogicalDim(const RelationCall& call, int arg, absl::string_view arg_name,
                               const Shape& shape, const Layout& l, char axis) {
  const Dim outer = shape[static_cast<size_t>(l.Find(axis))];
  const int64_t f = l.FactorOf(axis);
  if (f == 0) return outer;
  const Dim inner = shape[static_cast<size_t>(l.Find(Layout::SplitOf(axis)))];
  if (!DimsCompatible(inner, Dim(f)))
    return call.ArgError(arg, absl::StrCat("inner ", std::string(1, Layout::SplitOf(axis)),
                                           " extent ", f, " (", arg_name, " ", l.text, ")"));
  return outer * Dim(f);
}

// Logical extent `full` split by factor `f` (0: unsplit), or an error when it
// does not divide.
absl::StatusOr<Dim> Outer(const RelationCall& call, absl::string_view what, const Dim& full,
                          int64_t f, absl::string_view layout) {
  if (f == 0) return full;
  if (full.is_static() && full.value() % f != 0)
    return call.Error(absl::StrCat(what, " ", full.value(), " do not divide by the block ", f,
                                   " of ", layout));
  return Dim::FloorDiv(full, Dim(f));
}

absl::StatusOr<bool> Conv2DRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(data, call, 0);
  const Conv2DAttrs& a = AttrsOr<Conv2DAttrs>(call);
  KILN_ASSIGN_OR_RETURN(Layout dl, ParseConvLayout(call, "data_layout", a.data_layout, "NCHW", "C"));
  KILN_ASSIGN_OR_RETURN(Layout kl,
                        ParseConvLayout(call, "kernel_layout", a.kernel_layout, "OIHW", "IO"));
  const std::string out_text = a.out_layout.empty() ? a.data_layout : a.out_layout;
  KILN_ASSIGN_OR_RETURN(Layout ol, ParseConvLayout(call, "out_layout", out_text, "NCHW", "C"));
  if (data->ndim() != dl.ndim())
    return call.ArgError(0, absl::StrCat("a ", dl.ndim(), "-D tensor (data_layout ", a.data_layout,
                                         ")"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, Pair(call, "strides", a.strides, 1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dilation, Pair(call, "dilation", a.dilation, 1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pad, Padding4(call, a.padding));
  if (a.groups < 1) return call.Error(absl::StrCat("groups must be >= 1; got ", a.groups));
  if (a.channels && *a.channels < 1)
    return call.Error(absl::StrCat("channels must be >= 1; got ", *a.channels));
  std::vector<int64_t> ksize;
  if (a.kernel_size) {
    KILN_ASSIGN_OR_RETURN(ksize, Pair(call, "kernel_size", *a.kernel_size, 1));
  }

  auto dd = [&](char c) { return data->shape[static_cast<size_t>(dl.Find(c))]; };
  const Dim n = dd('N'), h = dd('H'), w = dd('W');
  KILN_ASSIGN_OR_RETURN(const Dim c, LogicalDim(call, 0, "data_layout", data->shape, dl, 'C'));
  const int64_t g = a.groups;
  if (c.is_static() && c.value() % g != 0)
    return call.Error(absl::StrCat("data has ", c.value(), " channels, which groups=", g,
                                   " does not divide"));
  const int64_t fi = kl.FactorOf('I'), fo = kl.FactorOf('O');

  auto weight_arg = TensorArg(call, 1);
  if (!weight_arg.ok()) return weight_arg.status();
  const TensorTypeNode* weight = *weight_arg;
  Shape wshape;
  if (weight == nullptr) {
    if (!a.channels || ksize.empty()) return false;
    wshape.resize(static_cast<size_t>(kl.ndim()));
    KILN_ASSIGN_OR_RETURN(wshape[static_cast<size_t>(kl.Find('O'))],
                          Outer(call, "output channels", Dim(*a.channels), fo, a.kernel_layout));
    KILN_ASSIGN_OR_RETURN(wshape[static_cast<size_t>(kl.Find('I'))],
                          Outer(call, "input channels per group", Dim::FloorDiv(c, Dim(g)), fi,
                                a.kernel_layout));
    wshape[static_cast<size_t>(kl.Find('H'))] = Dim(ksize[0]);
    wshape[static_cast<size_t>(kl.Find('W'))] = Dim(ksize[1]);
    if (fi > 0) wshape[static_cast<size_t>(kl.Find('i'))] = Dim(fi);
    if (fo > 0) wshape[static_cast<size_t>(kl.Find('o'))] = Dim(fo);
    KILN_RETURN_IF_ERROR(r.Assign(call.input(1), MakeTensorType(wshape, data->dtype)));
  } else if (weight->ndim() != kl.ndim()) {
    return call.ArgError(1, absl::StrCat("a ", kl.ndim(), "-D tensor (kernel_layout ",
                                         a.kernel_layout, ")"));
  } else {
    wshape = weight->shape;
  }
  auto wd = [&](char k) { return wshape[static_cast<size_t>(kl.Find(k))]; };
  const Dim kh = wd('H'), kw = wd('W');
  KILN_ASSIGN_OR_RETURN(const Dim o, LogicalDim(call, 1, "kernel_layout", wshape, kl, 'O'));
  KILN_ASSIGN_OR_RETURN(const Dim i, LogicalDim(call, 1, "kernel_layout", wshape, kl, 'I'));

  if (weight != nullptr) {
    if (weight->dtype != data->dtype &&
        !(weight->dtype.is_integral() && data->dtype.is_integral()))
      return call.ArgError(1, absl::StrCat("dtype ", data->dtype.ToString(), " (data's dtype)"));
    int64_t expected = 0;
    if (c.is_static() && i.is_static() && __builtin_mul_overflow(i.value(), g, &expected))
      return call.Error(absl::StrCat("weight's ", i.value(), " input channels times groups=", g,
                                     " do not fit in 64 bits"));
    if (c.is_static() && i.is_static() && c.value() != expected)
      return call.Error(absl::StrCat("data has ", c.value(), " channels but weight expects ",
                                     expected, " (groups=", g, ")"));
    if (o.is_static() && o.value() % g != 0)
      return call.Error(absl::StrCat("weight has ", o.value(),
                                     " output channels, which groups=", g, " does not divide"));
    if (a.channels && o.is_static() && o.value() != *a.channels)
      return call.Error(absl::StrCat("channels=", *a.channels, " but weight has ", o.value(),
                                     " output channels"));
    if (!ksize.empty() && !(DimsCompatible(kh, Dim(ksize[0])) && DimsCompatible(kw, Dim(ksize[1]))))
      return call.Error(absl::StrCat("kernel_size=", IntList(ksize), " but weight's kernel is (",
                                     kh.ToString(), ", ", kw.ToString(), ")"));
  }

  auto spatial = [&](absl::string_view name, const Dim& in, const Dim& k, int64_t attr_k,
                     int axis) -> absl::StatusOr<Dim> {
    int64_t kk = k.is_static() ? k.value() : attr_k;
    if (kk <= 0) return Dim::Any();
    const size_t ax = static_cast<size_t>(axis);
    return WindowOutDim(call, name, in, kk, strides[ax], pad[ax] + pad[ax + 2], dilation[ax]);
  };
  KILN_ASSIGN_OR_RETURN(Dim oh, spatial("height", h, kh, ksize.empty() ? 0 : ksize[0], 0));
  KILN_ASSIGN_OR_RETURN(Dim ow, spatial("width", w, kw, ksize.empty() ? 0 : ksize[1], 1));
  const Dim oc = a.channels ? Dim(*a.channels) : o;
  const int64_t fy = ol.FactorOf('C');

  Shape out(static_cast<size_t>(ol.ndim()));
  out[static_cast<size_t>(ol.Find('N'))] = n;
  KILN_ASSIGN_OR_RETURN(out[static_cast<size_t>(ol.Find('C'))],
                        Outer(call, "output channels", oc, fy, out_text));
  if (fy > 0) out[static_cast<size_t>(ol.Find('c'))] = Dim(fy);
  out[static_cast<size_t>(ol.Find('H'))] = oh;
  out[static_cast<size_t>(ol.Find('W'))] = ow;
  const DataType dt = a.out_dtype.is_void() ? data->dtype : a.out_dtype;
  return Solve(r, call, MakeTensorType(std::move(out), dt));
}

}  // namespace

absl::Status RegisterConvRelations() { return AddRelation("nn.conv2d", Conv2DRel); }

}  // namespace kiln::types::rel
