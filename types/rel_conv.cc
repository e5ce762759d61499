// Type relation of nn.conv2d.
//
//   data   4-D in data_layout: any permutation of NCHW (NCHW, NHWC, ...)
//   weight 4-D in kernel_layout: any permutation of OIHW (OIHW, HWIO, OHWI, HWOI)
//   out    4-D in out_layout ("" = data_layout), dtype out_dtype (void = data's)
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
//   - Checks against non-static dims (symbolic or `?`) are left to run time.
//   - A kernel extent that is not static (and not given by kernel_size) makes
//     the output's spatial dims `?`.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

absl::StatusOr<bool> Conv2DRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(data, call, 0);
  const Conv2DAttrs& a = AttrsOr<Conv2DAttrs>(call);
  KILN_ASSIGN_OR_RETURN(Layout dl, ParsePermutedLayout(call, "data_layout", a.data_layout, "NCHW"));
  KILN_ASSIGN_OR_RETURN(Layout kl,
                        ParsePermutedLayout(call, "kernel_layout", a.kernel_layout, "OIHW"));
  KILN_ASSIGN_OR_RETURN(
      Layout ol, ParsePermutedLayout(call, "out_layout",
                                     a.out_layout.empty() ? a.data_layout : a.out_layout, "NCHW"));
  if (data->ndim() != 4)
    return call.ArgError(0, absl::StrCat("a 4-D tensor (data_layout ", a.data_layout, ")"));
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
  const Dim n = dd('N'), c = dd('C'), h = dd('H'), w = dd('W');
  const int64_t g = a.groups;
  if (c.is_static() && c.value() % g != 0)
    return call.Error(absl::StrCat("data has ", c.value(), " channels, which groups=", g,
                                   " does not divide"));

  auto weight_arg = TensorArg(call, 1);
  if (!weight_arg.ok()) return weight_arg.status();
  const TensorTypeNode* weight = *weight_arg;
  Shape wshape;
  if (weight == nullptr) {
    if (!a.channels || ksize.empty()) return false;
    wshape.resize(4);
    wshape[static_cast<size_t>(kl.Find('O'))] = Dim(*a.channels);
    wshape[static_cast<size_t>(kl.Find('I'))] = Dim::FloorDiv(c, Dim(g));
    wshape[static_cast<size_t>(kl.Find('H'))] = Dim(ksize[0]);
    wshape[static_cast<size_t>(kl.Find('W'))] = Dim(ksize[1]);
    KILN_RETURN_IF_ERROR(r.Assign(call.input(1), MakeTensorType(wshape, data->dtype)));
  } else if (weight->ndim() != 4) {
    return call.ArgError(1, absl::StrCat("a 4-D tensor (kernel_layout ", a.kernel_layout, ")"));
  } else {
    wshape = weight->shape;
  }
  auto wd = [&](char k) { return wshape[static_cast<size_t>(kl.Find(k))]; };
  const Dim o = wd('O'), i = wd('I'), kh = wd('H'), kw = wd('W');

  if (weight != nullptr) {
    if (weight->dtype != data->dtype &&
        !(weight->dtype.is_integral() && data->dtype.is_integral()))
      return call.ArgError(1, absl::StrCat("dtype ", data->dtype.ToString(), " (data's dtype)"));
    if (c.is_static() && i.is_static() && c.value() != i.value() * g)
      return call.Error(absl::StrCat("data has ", c.value(), " channels but weight expects ",
                                     i.value() * g, " (groups=", g, ")"));
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

  Shape out(4);
  out[static_cast<size_t>(ol.Find('N'))] = n;
  out[static_cast<size_t>(ol.Find('C'))] = oc;
  out[static_cast<size_t>(ol.Find('H'))] = oh;
  out[static_cast<size_t>(ol.Find('W'))] = ow;
  const DataType dt = a.out_dtype.is_void() ? data->dtype : a.out_dtype;
  return Solve(r, call, MakeTensorType(std::move(out), dt));
}

}  // namespace

absl::Status RegisterConvRelations() { return AddRelation("nn.conv2d", Conv2DRel); }

}  // namespace kiln::types::rel
