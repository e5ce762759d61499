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
// Both also accept a channel-blocked layout NCHW{c}c (AlterOpLayout keeps
// convolutional networks blocked through their pools) when out_layout is the
// same: a 5-D tensor whose H and W change as above.
//
// Choice: ceil_mode follows Relay's formula exactly (no PyTorch-style
// correction dropping a last window that would start inside the padding).
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

// NCHW{c}c with a positive c: the layout; else nullopt.
std::optional<Layout> BlockedNCHWc(const std::string& text) {
  absl::StatusOr<Layout> l = ::kiln::ParseLayout(text);
  if (!l.ok() || l->ndim() != 5 || !l->HasPrimalAxes("NCHW") || l->FactorOf('C') <= 0 ||
      l->Find('c') != 4 || l->HasSplit() != true || l->FactorOf('H') != 0 || l->FactorOf('W') != 0 ||
      l->FactorOf('N') != 0)
    return std::nullopt;
  return *l;
}

// The blocked pools: H and W of x replaced by oh, ow (nullopt: not blocked).
absl::StatusOr<std::optional<bool>> BlockedPool(const RelationCall& call, TypeReporter& r,
                                                const TensorTypeNode* x, const std::string& layout,
                                                const std::string& out_layout,
                                                const std::function<absl::StatusOr<std::pair<Dim, Dim>>(
                                                    const Dim&, const Dim&)>& hw) {
  std::optional<Layout> l = BlockedNCHWc(layout);
  if (!l) return std::optional<bool>();
  if (!out_layout.empty() && out_layout != layout)
    return call.Error(absl::StrCat("out_layout \"", out_layout, "\" must equal the blocked layout \"",
                                   layout, "\""));
  if (x->ndim() != 5) return call.ArgError(0, absl::StrCat("a 5-D tensor (layout ", layout, ")"));
  if (!(x->shape[4] == Dim(l->FactorOf('C'))))
    return call.ArgError(0, absl::StrCat("a last axis of ", l->FactorOf('C'), " (layout ", layout, ")"));
  const size_t h = static_cast<size_t>(l->Find('H')), w = static_cast<size_t>(l->Find('W'));
  KILN_ASSIGN_OR_RETURN(auto ohw, hw(x->shape[h], x->shape[w]));
  Shape out = x->shape;
  out[h] = ohw.first;
  out[w] = ohw.second;
  KILN_ASSIGN_OR_RETURN(bool done, Solve(r, call, MakeTensorType(std::move(out), x->dtype)));
  return std::optional<bool>(done);
}

absl::StatusOr<bool> Pool2DRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const Pool2DAttrs& a = AttrsOr<Pool2DAttrs>(call);
  {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pool, Pair(call, "pool_size", a.pool_size, 1));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, Pair(call, "strides", a.strides, 1));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dilation, Pair(call, "dilation", a.dilation, 1));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pad, Padding4(call, a.padding));
    KILN_ASSIGN_OR_RETURN(
        std::optional<bool> blocked,
        BlockedPool(call, r, x, a.layout, a.out_layout,
                    [&](const Dim& h, const Dim& w) -> absl::StatusOr<std::pair<Dim, Dim>> {
                      KILN_ASSIGN_OR_RETURN(Dim oh, WindowOutDim(call, "height", h, pool[0], strides[0],
                                                                 pad[0] + pad[2], dilation[0], a.ceil_mode));
                      KILN_ASSIGN_OR_RETURN(Dim ow, WindowOutDim(call, "width", w, pool[1], strides[1],
                                                                 pad[1] + pad[3], dilation[1], a.ceil_mode));
                      return std::make_pair(oh, ow);
                    }));
    if (blocked) return *blocked;
  }
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
  {
    KILN_ASSIGN_OR_RETURN(
        std::optional<bool> blocked,
        BlockedPool(call, r, x, a.layout, a.out_layout,
                    [](const Dim&, const Dim&) -> absl::StatusOr<std::pair<Dim, Dim>> {
                      return std::make_pair(Dim(1), Dim(1));
                    }));
    if (blocked) return *blocked;
  }
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
