// File: lowering/compute/tensor/layout.cc
//
// layout_transform (tag "injective"), as interpreter/kernels_transform.cc:
// any src/dst pair of layouts over the same primal axes, each primal axis
// possibly split by a factor ("NCHW" <-> "NCHW16c", "OIHW" <-> "OIHW16i16o",
// "NCHW8c" -> "NCHW16c", "NHWC" -> "NCHW4c", ...). A layout is upper-case
// primal axes, and a number followed by a lower-case letter for the inner part
// of that primal axis (the syntax of types/rel_common.h's ParseLayout).
//
// Every output element reads one input element: the output coordinates give
// each primal axis's full coordinate (C = c_outer * 16 + c_inner), and the
// source layout splits that again (c_outer' = C / 8, c_inner' = C % 8).
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/compute/tensor/families.h"
#include "lowering/compute/tensor/tensor_util.h"

namespace kiln::lowering::tensor {
namespace {

struct Layout {
  struct Axis {
    char name;       // 'C' primal, 'c' its split part
    int64_t factor;  // 0 for primal axes
  };
  std::vector<Axis> axes;
  int Find(char c) const {
    for (size_t i = 0; i < axes.size(); ++i)
      if (axes[i].name == c) return static_cast<int>(i);
    return -1;
  }
  // The split factor of primal axis P (its 'p' part), or 0.
  int64_t FactorOf(char primal) const {
    const int i = Find(static_cast<char>(primal - 'A' + 'a'));
    return i < 0 ? 0 : axes[static_cast<size_t>(i)].factor;
  }
};

bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
char Upper(char c) { return static_cast<char>(c - 'a' + 'A'); }

absl::StatusOr<Layout> ParseLayout(const ComputeCtx& ctx, absl::string_view what,
                                   absl::string_view text) {
  Layout l;
  auto bad = [&](absl::string_view why) {
    return ctx.Error(absl::StrCat(what, " \"", text, "\" is not a valid layout: ", why));
  };
  if (text.empty()) return bad("it is empty");
  size_t i = 0;
  while (i < text.size()) {
    int64_t factor = 0;
    bool has_factor = false;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      has_factor = true;
      factor = factor * 10 + (text[i] - '0');
      if (factor > (int64_t{1} << 40)) return bad("factor too large");
      ++i;
    }
    if (i == text.size()) return bad("it ends with a number");
    const char c = text[i++];
    if (!IsUpper(c) && !IsLower(c)) return bad(absl::StrCat("unexpected character '", std::string(1, c), "'"));
    if (IsUpper(c) && has_factor) return bad("a factor must precede a lower-case (split) axis");
    if (IsLower(c) && (!has_factor || factor <= 0))
      return bad(absl::StrCat("split axis '", std::string(1, c), "' needs a positive factor"));
    if (l.Find(c) >= 0) return bad(absl::StrCat("axis '", std::string(1, c), "' appears twice"));
    l.axes.push_back({c, IsLower(c) ? factor : 0});
  }
  for (const Layout::Axis& a : l.axes)
    if (a.factor > 0 && l.Find(Upper(a.name)) < 0)
      return bad(absl::StrCat("split axis '", std::string(1, a.name), "' has no primal axis"));
  return l;
}

absl::StatusOr<std::vector<te::Tensor>> LayoutTransform(const ComputeCtx& ctx) {
  KILN_RETURN_IF_ERROR(CheckArity(ctx, 1));
  const te::Tensor& x = ctx.inputs[0];
  const LayoutTransformAttrs& a = ctx.Attrs<LayoutTransformAttrs>();
  KILN_ASSIGN_OR_RETURN(Layout src, ParseLayout(ctx, "src_layout", a.src_layout));
  KILN_ASSIGN_OR_RETURN(Layout dst, ParseLayout(ctx, "dst_layout", a.dst_layout));
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
          if (f > 0) c = IAdd(IMul(c, Idx(f)), i[static_cast<size_t>(dst.Find(static_cast<char>(ax.name - 'A' + 'a')))]);
          full[ax.name] = c;
        }
        // The source layout's coordinates of that element.
        std::vector<PrimExpr> idx;
        for (const Layout::Axis& ax : src.axes) {
          if (ax.factor > 0) {
            idx.push_back(IFloorMod(full[Upper(ax.name)], Idx(ax.factor)));
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
