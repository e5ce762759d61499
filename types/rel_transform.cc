// Type relations of shape-changing operators: reshape, transpose, expand_dims,
// squeeze, layout_transform, nn.pad. (concatenate, split, strided_slice and
// take are in rel_slice.cc.)
//
//   reshape       Relay's newshape codes: n > 0 a size; 0 copies the input dim at
//                 the same position (or is a 0-size dim with allowzero); -1 is
//                 inferred; -2 copies all remaining dims; -3 merges two
//                 consecutive dims; -4 splits a dim into the next two entries
//                 (one may be -1). The -1 extent is the product of the input
//                 dims not copied by 0/-2/-3/-4, divided by the product of the
//                 literal sizes, so symbolic dims cancel exactly:
//                 (n, 12, 64) [0, -1] -> (n, 768); (n, 12, 64) [-1, 64] ->
//                 ((n * 12), 64); otherwise the quotient is a symbolic
//                 floor division. Static element counts must agree.
//   transpose     axes=none reverses; axes must be a permutation (negatives ok).
//   expand_dims   axis in [-ndim-1, ndim], num_newaxis >= 0.
//   squeeze       axis=none removes every static 1 (symbolic and `?` dims are
//                 kept); listed axes must be 1 (non-static dims are accepted
//                 and removed: checked at run time).
//   layout_transform  e.g. NCHW (1, 32, 56, 56) -> NCHW16c (1, 2, 56, 56, 16)
//                 and back; both layouts need the same primal axes; a static
//                 extent must divide by the split factor.
//   nn.pad        pad_width: one [before, after] pair (>= 0) per axis;
//                 pad_mode constant/edge/reflect (reflect needs pads < extent);
//                 pad_value, when known, must be a 0-D tensor (any dtype: it is
//                 cast to data's).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "types/rel_common.h"

namespace kiln::types::rel {
namespace {

absl::StatusOr<bool> ReshapeRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const ReshapeAttrs& a = AttrsOr<ReshapeAttrs>(call);
  const std::vector<int64_t>& ns = a.newshape;
  const Shape& in = x->shape;
  const size_t ndim = in.size();
  std::vector<bool> copied(ndim, false);
  Shape out;
  int64_t literal = 1;  // product of the literal sizes
  int infer = -1;       // position of -1 in `out`
  size_t src = 0;
  auto bad = [&](const std::string& why) {
    return call.Error(absl::StrCat("cannot reshape ", TypeToString(call.input(0)),
                                   " with newshape ", IntList(ns), ": ", why));
  };
  auto need_src = [&](size_t k, size_t i) -> absl::Status {
    if (k < ndim) return absl::OkStatus();
    return bad(absl::StrCat("newshape[", i, "]=", ns[i], " refers to input dim ", k,
                            ", which does not exist"));
  };
  auto mul_literal = [&](int64_t v) -> absl::Status {
    if (v != 0 && literal > (int64_t{1} << 62) / v) return bad("sizes too large");
    literal *= v;
    return absl::OkStatus();
  };
  for (size_t i = 0; i < ns.size(); ++i) {
    const int64_t v = ns[i];
    if (v > 0 || (v == 0 && a.allowzero)) {
      out.push_back(Dim(v));
      KILN_RETURN_IF_ERROR(mul_literal(v));
      ++src;
    } else if (v == 0) {
      KILN_RETURN_IF_ERROR(need_src(src, i));
      out.push_back(in[src]);
      copied[src++] = true;
    } else if (v == -1) {
      if (infer >= 0) return bad("more than one -1");
      infer = static_cast<int>(out.size());
      out.push_back(Dim(1));
      ++src;
    } else if (v == -2) {
      for (; src < ndim; ++src) {
        out.push_back(in[src]);
        copied[src] = true;
      }
    } else if (v == -3) {
      KILN_RETURN_IF_ERROR(need_src(src + 1, i));
      out.push_back(in[src] * in[src + 1]);
      copied[src] = copied[src + 1] = true;
      src += 2;
    } else if (v == -4) {
      if (i + 2 >= ns.size()) return bad(absl::StrCat("-4 at ", i, " must be followed by two sizes"));
      KILN_RETURN_IF_ERROR(need_src(src, i));
      const int64_t d0 = ns[i + 1], d1 = ns[i + 2];
      i += 2;
      if (d0 < -1 || d1 < -1 || d0 == 0 || d1 == 0 || (d0 == -1 && d1 == -1))
        return bad(absl::StrCat("the sizes after -4 must be positive, one may be -1; got ", d0,
                                ", ", d1));
      const Dim& s = in[src];
      if (s.is_static() && ((d0 == -1 && s.value() % d1 != 0) || (d1 == -1 && s.value() % d0 != 0) ||
                            (d0 > 0 && d1 > 0 && d0 != s.value() / d1) ||
                            (d0 > 0 && d1 > 0 && s.value() % d1 != 0)))
        return bad(absl::StrCat("input dim ", src, " (", s.value(), ") cannot be split into ", d0,
                                " x ", d1));
      out.push_back(d0 == -1 ? Dim::FloorDiv(s, Dim(d1)) : Dim(d0));
      out.push_back(d1 == -1 ? Dim::FloorDiv(s, Dim(d0)) : Dim(d1));
      copied[src++] = true;
    } else {
      return bad(absl::StrCat("invalid code ", v, " (expected a size, 0, -1, -2, -3 or -4)"));
    }
  }
  if (infer >= 0) {
    if (literal == 0) return bad("cannot infer -1 next to a 0-size dim");
    Dim rest(1);
    for (size_t k = 0; k < ndim; ++k)
      if (!copied[k]) rest = rest * in[k];
    if (rest.is_static() && rest.value() % literal != 0)
      return bad(absl::StrCat(rest.value(), " remaining elements do not divide by ", literal));
    out[static_cast<size_t>(infer)] = Dim::FloorDiv(rest, Dim(literal));
  } else {
    const Dim n_in = ShapeNumElements(in), n_out = ShapeNumElements(out);
    if (n_in.is_static() && n_out.is_static() && n_in.value() != n_out.value())
      return bad(absl::StrCat(n_in.value(), " elements vs ", n_out.value()));
  }
  return Solve(r, call, MakeTensorType(std::move(out), x->dtype));
}

absl::StatusOr<bool> TransposeRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const TransposeAttrs& a = AttrsOr<TransposeAttrs>(call);
  const int64_t ndim = x->ndim();
  Shape out;
  if (!a.axes) {
    out.assign(x->shape.rbegin(), x->shape.rend());
  } else {
    if (static_cast<int64_t>(a.axes->size()) != ndim)
      return call.Error(absl::StrCat("axes ", IntList(*a.axes), " must list all ", ndim,
                                     " axes of ", TypeToString(call.input(0))));
    std::vector<bool> seen(static_cast<size_t>(ndim), false);
    for (int64_t ax : *a.axes) {
      KILN_ASSIGN_OR_RETURN(int64_t k, NormalizeAxis(call, ax, ndim, "axes entry"));
      if (seen[static_cast<size_t>(k)])
        return call.Error(absl::StrCat("axes ", IntList(*a.axes), " is not a permutation (axis ",
                                       k, " repeats)"));
      seen[static_cast<size_t>(k)] = true;
      out.push_back(x->shape[static_cast<size_t>(k)]);
    }
  }
  return Solve(r, call, MakeTensorType(std::move(out), x->dtype));
}

absl::StatusOr<bool> ExpandDimsRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const ExpandDimsAttrs& a = AttrsOr<ExpandDimsAttrs>(call);
  const int64_t ndim = x->ndim();
  if (a.num_newaxis < 0)
    return call.Error(absl::StrCat("num_newaxis must be >= 0; got ", a.num_newaxis));
  if (a.axis < -ndim - 1 || a.axis > ndim)
    return call.Error(absl::StrCat("axis ", a.axis, " is out of range for a ", RankStr(ndim),
                                   " (expected ", -ndim - 1, "..", ndim, ")"));
  const size_t axis = static_cast<size_t>(a.axis < 0 ? a.axis + ndim + 1 : a.axis);
  Shape out(x->shape.begin(), x->shape.begin() + static_cast<std::ptrdiff_t>(axis));
  for (int64_t i = 0; i < a.num_newaxis; ++i) out.push_back(Dim(1));
  out.insert(out.end(), x->shape.begin() + static_cast<std::ptrdiff_t>(axis), x->shape.end());
  return Solve(r, call, MakeTensorType(std::move(out), x->dtype));
}

absl::StatusOr<bool> SqueezeRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const SqueezeAttrs& a = AttrsOr<SqueezeAttrs>(call);
  const int64_t ndim = x->ndim();
  std::vector<bool> drop(static_cast<size_t>(ndim), false);
  if (!a.axis) {
    for (size_t i = 0; i < drop.size(); ++i)
      drop[i] = x->shape[i].is_static() && x->shape[i].value() == 1;
  } else {
    for (int64_t ax : *a.axis) {
      KILN_ASSIGN_OR_RETURN(int64_t k, NormalizeAxis(call, ax, ndim));
      const Dim& d = x->shape[static_cast<size_t>(k)];
      if (d.is_static() && d.value() != 1)
        return call.Error(absl::StrCat("cannot squeeze axis ", k, " of ",
                                       TypeToString(call.input(0)), ": its extent is ",
                                       d.value(), ", not 1"));
      drop[static_cast<size_t>(k)] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < drop.size(); ++i)
    if (!drop[i]) out.push_back(x->shape[i]);
  return Solve(r, call, MakeTensorType(std::move(out), x->dtype));
}

char Lower(char c) { return static_cast<char>(c - 'A' + 'a'); }

absl::StatusOr<bool> LayoutTransformRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const LayoutTransformAttrs& a = AttrsOr<LayoutTransformAttrs>(call);
  KILN_ASSIGN_OR_RETURN(Layout src, ParseLayout(call, "src_layout", a.src_layout));
  KILN_ASSIGN_OR_RETURN(Layout dst, ParseLayout(call, "dst_layout", a.dst_layout));
  if (x->ndim() != src.ndim())
    return call.ArgError(0, absl::StrCat("a ", RankStr(src.ndim()), " (src_layout ",
                                         a.src_layout, ")"));
  // The full extent of each primal axis.
  std::vector<std::pair<char, Dim>> full;
  for (size_t i = 0; i < src.axes.size(); ++i) {
    const Layout::Axis& ax = src.axes[i];
    if (ax.factor > 0) {
      if (!DimsCompatible(x->shape[i], Dim(ax.factor)))
        return call.ArgError(0, absl::StrCat("extent ", ax.factor, " at axis ", i, " (",
                                             ax.factor, std::string(1, ax.name), " in ",
                                             a.src_layout, ")"));
      continue;
    }
    const int sub = src.Find(Lower(ax.name));
    const int64_t f = sub >= 0 ? src.axes[static_cast<size_t>(sub)].factor : 1;
    full.push_back({ax.name, x->shape[i] * Dim(f)});
    if (dst.Find(ax.name) < 0)
      return call.Error(absl::StrCat("dst_layout \"", a.dst_layout, "\" has no axis '",
                                     std::string(1, ax.name), "' of src_layout \"", a.src_layout,
                                     "\""));
  }
  Shape out;
  for (const Layout::Axis& ax : dst.axes) {
    if (ax.factor > 0) {
      out.push_back(Dim(ax.factor));
      continue;
    }
    const Dim* f = nullptr;
    for (const auto& [name, d] : full)
      if (name == ax.name) f = &d;
    if (f == nullptr)
      return call.Error(absl::StrCat("src_layout \"", a.src_layout, "\" has no axis '",
                                     std::string(1, ax.name), "' of dst_layout \"", a.dst_layout,
                                     "\""));
    const int sub = dst.Find(Lower(ax.name));
    if (sub < 0) {
      out.push_back(*f);
      continue;
    }
    const int64_t factor = dst.axes[static_cast<size_t>(sub)].factor;
    if (f->is_static() && f->value() % factor != 0)
      return call.Error(absl::StrCat("axis ", std::string(1, ax.name), " has extent ", f->value(),
                                     ", which does not divide by ", factor, " (dst_layout ",
                                     a.dst_layout, ")"));
    out.push_back(Dim::FloorDiv(*f, Dim(factor)));
  }
  return Solve(r, call, MakeTensorType(std::move(out), x->dtype));
}

absl::StatusOr<bool> PadRel(const RelationCall& call, TypeReporter& r) {
  KILN_REL_TENSOR(x, call, 0);
  const PadAttrs& a = AttrsOr<PadAttrs>(call);
  if (a.pad_mode != "constant" && a.pad_mode != "edge" && a.pad_mode != "reflect")
    return call.Error(absl::StrCat("pad_mode must be \"constant\", \"edge\" or \"reflect\"; got \"",
                                   a.pad_mode, "\""));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* v, TensorArg(call, 1));
  if (v != nullptr && v->ndim() != 0) return call.ArgError(1, "a 0-D (scalar) tensor");
  if (static_cast<int64_t>(a.pad_width.size()) != x->ndim())
    return call.Error(absl::StrCat("pad_width has ", a.pad_width.size(), " pairs; expected one per axis of ",
                                   TypeToString(call.input(0))));
  Shape out;
  for (size_t i = 0; i < a.pad_width.size(); ++i) {
    const std::vector<int64_t>& p = a.pad_width[i];
    if (p.size() != 2 || p[0] < 0 || p[1] < 0 || p[0] > kMaxAttrValue || p[1] > kMaxAttrValue)
      return call.Error(absl::StrCat("pad_width[", i, "] must be [before, after] with both in [0, 2^31]; got ",
                                     IntList(p)));
    const Dim& d = x->shape[i];
    if (a.pad_mode == "reflect" && d.is_static() && (p[0] >= d.value() || p[1] >= d.value()) &&
        (p[0] > 0 || p[1] > 0))
      return call.Error(absl::StrCat("reflect padding ", IntList(p), " of axis ", i,
                                     " must be smaller than its extent ", d.value()));
    out.push_back(AddConst(d, p[0] + p[1]));
  }
  return Solve(r, call, MakeTensorType(std::move(out), x->dtype));
}

}  // namespace

absl::Status RegisterTransformRelations() {
  absl::Status st;
  st.Update(AddRelation("reshape", ReshapeRel));
  st.Update(AddRelation("transpose", TransposeRel));
  st.Update(AddRelation("expand_dims", ExpandDimsRel));
  st.Update(AddRelation("squeeze", SqueezeRel));
  st.Update(AddRelation("layout_transform", LayoutTransformRel));
  st.Update(AddRelation("nn.pad", PadRel));
  st.Update(RegisterSliceRelations());
  return st;
}

}  // namespace kiln::types::rel
