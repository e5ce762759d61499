// File: lowering/compute/tensor/layout.cc
//
// layout_transform (tag "injective"), as interpreter/kernels_transform.cc:
// any src/dst pair of layouts over the same primal axes, each primal axis
// possibly split by a factor ("NCHW" <-> "NCHW16c", "OIHW" <-> "OIHW16i16o",
// "NCHW8c" -> "NCHW16c", "NHWC" -> "NCHW4c", ...). A layout is upper-case
// primal axes, and a number followed by a lower-case letter for the inner part
// of that primal axis (ir/layout.h's ParseLayout).
//
// Every output element reads one input element: the output coordinates give
// each primal axis's full coordinate (C = c_outer * 16 + c_inner), and the
// source layout splits that again (c_outer' = C / 8, c_inner' = C % 8).
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/layout.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/compute/tensor/families.h"
#include "lowering/compute/tensor/tensor_util.h"

namespace kiln::lowering::tensor {
namespace {

// Parses src_layout / dst_layout (ir/layout.h); the error names the attribute.
absl::StatusOr<Layout> ParseLayoutAttr(const ComputeCtx& ctx, absl::string_view what,
                                       absl::string_view text) {
  absl::StatusOr<Layout> l = ParseLayout(text);
  if (!l.ok()) return ctx.Error(absl::StrCat(what, " ", l.status().message()));
  return l;
}

absl::StatusOr<std::vector<te::Tensor>> LayoutTransform(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const LayoutTransformAttrs& a = ctx.Attrs<LayoutTransformAttrs>();
  KILN_ASSIGN_OR_RETURN(Layout src, ParseLayoutAttr(ctx, "src_layout", a.src_layout));
  KILN_ASSIGN_OR_RETURN(Layout dst, ParseLayoutAttr(ctx, "dst_layout", a.dst_layout));
  if (static_cast<size_t>(x.ndim()) != src.axes.size())
    return ctx.Error(absl::StrCat("the input has rank ", x.ndim(), "; src_layout ", a.src_layout,
                                  " has ", src.axes.size(), " axes"));
  for (const Layout::Axis& ax : src.axes)
    if (ax.factor == 0 && dst.Find(ax.name) < 0)
      return ctx.Error(absl::StrCat("dst_layout \"", a.dst_layout, "\" has no axis '",
                                    std::string(1, ax.name), "' of src_layout \"", a.src_layout, "\""));
  for (const Layout::Axis& ax : dst.axes)
    if (ax.factor == 0 && src.Find(ax.name) < 0)
      return ctx.Error(absl::StrCat("src_layout \"", a.src_layout, "\" has no axis '",
                                    std::string(1, ax.name), "' of dst_layout \"", a.dst_layout, "\""));
  const Shape& shape = ctx.out_shapes[0];
  if (shape.size() != dst.axes.size())
    return ctx.Error(absl::StrCat("the output type has rank ", shape.size(), "; dst_layout ",
                                  a.dst_layout, " has ", dst.axes.size(), " axes"));
  te::Tensor t = te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        // Full coordinate of each primal axis from the output coordinates.
        std::map<char, PrimExpr> full;
        for (size_t d = 0; d < dst.axes.size(); ++d) {
          const Layout::Axis& ax = dst.axes[d];
          if (ax.factor > 0) continue;
          const int64_t f = dst.FactorOf(ax.name);
          PrimExpr c = i[d];
          if (f > 0) c = IAdd(IMul(c, Idx(f)), i[static_cast<size_t>(dst.Find(Layout::SplitOf(ax.name)))]);
          full[ax.name] = c;
        }
        // The source layout's coordinates of that element.
        std::vector<PrimExpr> idx;
        for (const Layout::Axis& ax : src.axes) {
          if (ax.factor > 0) {
            idx.push_back(IFloorMod(full[Layout::PrimalOf(ax.name)], Idx(ax.factor)));
          } else {
            const int64_t f = src.FactorOf(ax.name);
            idx.push_back(f > 0 ? IFloorDiv(full[ax.name], Idx(f)) : full[ax.name]);
          }
        }
        return x(idx);
      },
      ComputeName(ctx), "injective");
  return std::vector<te::Tensor>{t};
}

}  // namespace

void RegisterLayoutComputes() { Attach("layout_transform", LayoutTransform); }

}  // namespace kiln::lowering::tensor
