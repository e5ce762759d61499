// Type relations of 2-D pooling.
//
//   nn.max_pool2d / nn.avg_pool2d: data 4-D in `layout` (a permutation of NCHW,
//     e.g. NCHW or NHWC); out H = floor((H + pad_top + pad_bottom
//     - dilation_h * (pool_h - 1) - 1) / stride_h) + 1, likewise W; with
//     ceil_mode the division rounds up. Output in out_layout ("" = layout).
//   nn.global_avg_pool2d / nn.global_max_pool2d: H and W become 1.
// pool_size, strides and dilation take 1 value (both axes) or 2; padding takes
// 1, 2 (top/bottom, left/right) or 4 (top, left, bottom, right).
//
// Choice: ceil_mode follows Relay's formula exactly (no PyTorch-style
// correction dropping a last window that would start inside the padding).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

absl::StatusOr<bool> Pool2DRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const Pool2DAttrs& a = AttrsOr<Pool2DAttrs>(call);
  KILN_ASSIGN_OR_RETURN(Layout l, ParsePermutedLayout(call, "layout", a.layout, "NCHW"));
  KILN_ASSIGN_OR_RETURN(
      Layout ol, ParsePermutedLayout(call, "out_layout",
                                     a.out_layout.empty() ? a.layout : a.out_layout, "NCHW"));
  if (x->ndim() != 4) return call.ArgError(0, absl::StrCat("a 4-D tensor (layout ", a.layout, ")"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pool, Pair(call, "pool_size", a.pool_size, 1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, Pair(call, "strides", a.strides, 1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dilation, Pair(call, "dilation", a.dilation, 1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pad, Padding4(call, a.padding));
  auto d = [&](char c) { return x->shape[static_cast<size_t>(l.Find(c))]; };
  KILN_ASSIGN_OR_RETURN(Dim oh, WindowOutDim(call, "height", d('H'), pool[0], strides[0],
                                             pad[0] + pad[2], dilation[0], a.ceil_mode));
  KILN_ASSIGN_OR_RETURN(Dim ow, WindowOutDim(call, "width", d('W'), pool[1], strides[1],
                                             pad[1] + pad[3], dilation[1], a.ceil_mode));
  Shape out(4);
  out[static_cast<size_t>(ol.Find('N'))] = d('N');
  out[static_cast<size_t>(ol.Find('C'))] = d('C');
  out[static_cast<size_t>(ol.Find('H'))] = oh;
  out[static_cast<size_t>(ol.Find('W'))] = ow;
  return Solve(r, call, MakeTensorType(std::move(out), x->dtype));
}

absl::StatusOr<bool> GlobalPool2DRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const GlobalPool2DAttrs& a = AttrsOr<GlobalPool2DAttrs>(call);
  KILN_ASSIGN_OR_RETURN(Layout l, ParsePermutedLayout(call, "layout", a.layout, "NCHW"));
  KILN_ASSIGN_OR_RETURN(
      Layout ol, ParsePermutedLayout(call, "out_layout",
                                     a.out_layout.empty() ? a.layout : a.out_layout, "NCHW"));
  if (x->ndim() != 4) return call.ArgError(0, absl::StrCat("a 4-D tensor (layout ", a.layout, ")"));
  Shape out(4);
  out[static_cast<size_t>(ol.Find('N'))] = x->shape[static_cast<size_t>(l.Find('N'))];
  out[static_cast<size_t>(ol.Find('C'))] = x->shape[static_cast<size_t>(l.Find('C'))];
  out[static_cast<size_t>(ol.Find('H'))] = Dim(1);
  out[static_cast<size_t>(ol.Find('W'))] = Dim(1);
  return Solve(r, call, MakeTensorType(std::move(out), x->dtype));
}

}  // namespace

absl::Status RegisterPoolRelations() {
  absl::Status st;
  st.Update(AddRelation("nn.max_pool2d", Pool2DRel));
  st.Update(AddRelation("nn.avg_pool2d", Pool2DRel));
  st.Update(AddRelation("nn.global_avg_pool2d", GlobalPool2DRel));
  st.Update(AddRelation("nn.global_max_pool2d", GlobalPool2DRel));
  return st;
}

}  // namespace kiln::types::rel
