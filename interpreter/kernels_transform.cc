// Kernels of data-movement operators: reshape, transpose, concatenate, split,
// strided_slice, take, expand_dims, squeeze, broadcast_to, layout_transform,
// where. Attribute semantics as in types/rel_transform.cc and rel_slice.cc;
// shapes are computed from the actual inputs.
//
// take: mode "clip" clamps an index into [0, n - 1]; "wrap" takes it modulo n
// (negative indices wrap from the end); "fast" promises indices in range: the
// interpreter accepts [-n, n) (negative from the end) and reports anything else
// as an error rather than reading out of bounds.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "interpreter/kernel_util.h"
#include "ir/layout.h"
#include "ir/op_attrs.h"
#include "ir/strided_slice.h"

namespace kiln::interp::internal {
namespace {

absl::StatusOr<Value> WithShape(const KernelCtx& k, const HostTensor& x, const Shape64& shape) {
  if (NumElements(shape) != x.num_elements())
    return k.Error(absl::StrCat("cannot reshape ", TypeStr(x), " to ", ShapeStr(shape)));
  auto t = HostTensor::FromBytes(x.dtype(), shape, x.raw_data(), x.nbytes());
  if (!t.ok()) return k.Error(t.status().message());
  return TensorValue(*std::move(t));
}

absl::StatusOr<Value> Reshape(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const ReshapeAttrs& a = k.Attrs<ReshapeAttrs>();
  const Shape64& in = x->shape();
  const Shape64& ns = a.newshape;
  auto bad = [&](const std::string& why) {
    return k.Error(absl::StrCat("cannot reshape ", TypeStr(*x), " with newshape ", ShapeStr(ns),
                                ": ", why));
  };
  Shape64 out;
  int infer = -1;
  size_t src = 0;
  for (size_t i = 0; i < ns.size(); ++i) {
    const int64_t v = ns[i];
    if (v > 0 || (v == 0 && a.allowzero)) {
      out.push_back(v);
      ++src;
    } else if (v == 0) {
      if (src >= in.size()) return bad(absl::StrCat("newshape[", i, "]=0 has no input dim"));
      out.push_back(in[src++]);
    } else if (v == -1) {
      if (infer >= 0) return bad("more than one -1");
      infer = static_cast<int>(out.size());
      out.push_back(1);
      ++src;
    } else if (v == -2) {
      for (; src < in.size(); ++src) out.push_back(in[src]);
    } else if (v == -3) {
      if (src + 1 >= in.size()) return bad(absl::StrCat("-3 at ", i, " needs two input dims"));
      out.push_back(in[src] * in[src + 1]);
      src += 2;
    } else if (v == -4) {
      if (i + 2 >= ns.size() || src >= in.size()) return bad(absl::StrCat("-4 at ", i, " is incomplete"));
      const int64_t d0 = ns[i + 1], d1 = ns[i + 2], s = in[src++];
      i += 2;
      if (d0 < -1 || d1 < -1 || d0 == 0 || d1 == 0 || (d0 == -1 && d1 == -1))
        return bad("the sizes after -4 must be positive, one may be -1");
      const int64_t p0 = d0 == -1 ? s / d1 : d0, p1 = d1 == -1 ? s / d0 : d1;
      if (p0 * p1 != s) return bad(absl::StrCat("cannot split ", s, " into ", d0, " x ", d1));
      out.push_back(p0);
      out.push_back(p1);
    } else {
      return bad(absl::StrCat("invalid code ", v));
    }
  }
  if (infer >= 0) {
    int64_t rest = 1;
    for (size_t i = 0; i < out.size(); ++i)
      if (static_cast<int>(i) != infer) rest *= out[i];
    if (rest == 0 || x->num_elements() % rest != 0)
      return bad(absl::StrCat("cannot infer -1 (", x->num_elements(), " elements)"));
    out[static_cast<size_t>(infer)] = x->num_elements() / rest;
  }
  if (NumElements(out) != x->num_elements())
    return bad(absl::StrCat(x->num_elements(), " elements vs ", NumElements(out)));
  return WithShape(k, *x, out);
}

absl::StatusOr<Value> Transpose(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const auto& axes = k.Attrs<TransposeAttrs>().axes;
  const int64_t nd = x->ndim();
  std::vector<int64_t> perm;
  if (!axes) {
    for (int64_t i = nd - 1; i >= 0; --i) perm.push_back(i);
  } else {
    if (static_cast<int64_t>(axes->size()) != nd)
      return k.Error(absl::StrCat("axes ", ShapeStr(*axes), " must list all ", nd, " axes"));
    std::vector<bool> seen(static_cast<size_t>(nd), false);
    for (int64_t ax : *axes) {
      KILN_ASSIGN_OR_RETURN(int64_t p, NormAxis(k, ax, nd, "axes entry"));
      if (seen[static_cast<size_t>(p)]) return k.Error(absl::StrCat("axes ", ShapeStr(*axes), " is not a permutation"));
      seen[static_cast<size_t>(p)] = true;
      perm.push_back(p);
    }
  }
  Shape64 os;
  for (int64_t p : perm) os.push_back(x->shape()[static_cast<size_t>(p)]);
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), os));
  const Shape64 ist = Strides(x->shape());
  Shape64 c;
  for (int64_t o = 0; o < out->num_elements(); ++o) {
    Unravel(o, os, &c);
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d) src += c[d] * ist[static_cast<size_t>(perm[d])];
    CopyElem(*x, src, *out, o);
  }
  return TensorValue(std::move(out));
}

// Copies `part` into `out` at offset `start` along `axis`.
void PlaceAlong(const HostTensor& part, HostTensor& out, size_t axis, int64_t start) {
  const Shape64 ost = Strides(out.shape());
  Shape64 c;
  for (int64_t i = 0; i < part.num_elements(); ++i) {
    Unravel(i, part.shape(), &c);
    c[axis] += start;
    int64_t o = 0;
    for (size_t d = 0; d < c.size(); ++d) o += c[d] * ost[d];
    CopyElem(part, i, out, o);
  }
}

absl::StatusOr<Value> Concatenate(const KernelCtx& k) {
  const Value& tup = k.args[0];
  if (!tup.is_tuple() || tup.fields().empty())
    return k.Error("argument 0 must be a non-empty tuple of tensors");
  std::vector<const HostTensor*> ts;
  for (const Value& f : tup.fields()) {
    KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> t, AsTensor(f, absl::StrCat(k.op.name, ": tuple field")));
    ts.push_back(t.get());
  }
  const HostTensor& t0 = *ts[0];
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(k, k.Attrs<ConcatenateAttrs>().axis, t0.ndim()));
  const size_t ax = static_cast<size_t>(axis);
  Shape64 os = t0.shape();
  for (size_t i = 1; i < ts.size(); ++i) {
    const HostTensor& t = *ts[i];
    bool ok = t.ndim() == t0.ndim() && t.dtype() == t0.dtype();
    for (size_t d = 0; ok && d < os.size(); ++d) ok = d == ax || t.shape()[d] == os[d];
    if (!ok)
      return k.Error(absl::StrCat("field ", i, " is ", TypeStr(t), "; it does not match field 0, ",
                                  TypeStr(t0), ", outside axis ", axis));
    os[ax] += t.shape()[ax];
  }
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, t0.dtype(), os));
  int64_t start = 0;
  for (const HostTensor* t : ts) {
    PlaceAlong(*t, *out, ax, start);
    start += t->shape()[ax];
  }
  return TensorValue(std::move(out));
}

// The sub-tensor [begin, begin + len) along `axis`.
absl::StatusOr<Ref<HostTensor>> Slab(const KernelCtx& k, const HostTensor& x, size_t axis,
                                     int64_t begin, int64_t len) {
  Shape64 os = x.shape();
  os[axis] = len;
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x.dtype(), os));
  const Shape64 ist = Strides(x.shape());
  Shape64 c;
  for (int64_t o = 0; o < out->num_elements(); ++o) {
    Unravel(o, os, &c);
    c[axis] += begin;
    int64_t src = 0;
    for (size_t d = 0; d < c.size(); ++d) src += c[d] * ist[d];
    CopyElem(x, src, *out, o);
  }
  return out;
}

absl::StatusOr<Value> Split(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const SplitAttrs& a = k.Attrs<SplitAttrs>();
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(k, a.axis, x->ndim()));
  const size_t ax = static_cast<size_t>(axis);
  const int64_t n = x->shape()[ax];
  std::vector<int64_t> cuts;  // part boundaries, from 0 to n
  if (a.sections < 0) return k.Error(absl::StrCat("sections must be >= 0; got ", a.sections));
  if (a.sections > 0) {
    if (n % a.sections != 0)
      return k.Error(absl::StrCat("cannot split axis ", axis, " of extent ", n, " into ",
                                  a.sections, " equal sections"));
    for (int64_t i = 0; i <= a.sections; ++i) cuts.push_back(i * (n / a.sections));
  } else {
    cuts.push_back(0);
    for (int64_t idx : a.indices) {
      if (idx < cuts.back() || idx > n)
        return k.Error(absl::StrCat("indices ", ShapeStr(a.indices), " must ascend within [0, ", n, "]"));
      cuts.push_back(idx);
    }
    cuts.push_back(n);
  }
  std::vector<Value> parts;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> p, Slab(k, *x, ax, cuts[i], cuts[i + 1] - cuts[i]));
    parts.push_back(TensorValue(std::move(p)));
  }
  return Value::Tuple(std::move(parts));
}

absl::StatusOr<Value> StridedSlice(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  absl::StatusOr<StridedSlicePlan> plan =
      PlanStridedSlice(k.Attrs<StridedSliceAttrs>(), x->ndim(), TypeStr(*x));
  if (!plan.ok()) return k.Error(std::string(plan.status().message()));
  Shape64 begin(static_cast<size_t>(x->ndim()), 0), step(static_cast<size_t>(x->ndim()), 1);
  Shape64 os = x->shape();
  for (const SlicedAxis& s : plan->axes) {
    const size_t ax = static_cast<size_t>(s.axis);
    const StaticSliceRange r = StaticSlice(x->shape()[ax], s, plan->size_mode);
    os[ax] = r.length;
    begin[ax] = r.begin;
    step[ax] = r.step;
  }
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), os));
  const Shape64 ist = Strides(x->shape());
  Shape64 c;
  for (int64_t o = 0; o < out->num_elements(); ++o) {
    Unravel(o, os, &c);
    int64_t src = 0;
    for (size_t d = 0; d < c.size(); ++d) src += (begin[d] + c[d] * step[d]) * ist[d];
    CopyElem(*x, src, *out, o);
  }
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> Take(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(const HostTensor* idx, k.Tensor(1));
  const TakeAttrs& a = k.Attrs<TakeAttrs>();
  if (!idx->dtype().is_int() && !idx->dtype().is_uint())
    return k.Error(absl::StrCat("indices must be an integer tensor; got ", TypeStr(*idx)));
  if (a.mode != "clip" && a.mode != "wrap" && a.mode != "fast")
    return k.Error(absl::StrCat("mode must be \"clip\", \"wrap\" or \"fast\"; got \"", a.mode, "\""));
  Shape64 xs = x->shape();
  int64_t axis = 0, bd = 0;
  if (!a.axis) {
    if (a.batch_dims != 0) return k.Error("batch_dims needs an axis");
    xs = {x->num_elements()};  // flattened
  } else {
    KILN_ASSIGN_OR_RETURN(axis, NormAxis(k, *a.axis, x->ndim()));
    bd = a.batch_dims < 0 ? a.batch_dims + idx->ndim() : a.batch_dims;
    if (bd < 0 || bd > idx->ndim() || bd > axis)
      return k.Error(absl::StrCat("batch_dims ", a.batch_dims, " is out of range"));
    for (size_t i = 0; i < static_cast<size_t>(bd); ++i)
      if (xs[i] != idx->shape()[i])
        return k.Error(absl::StrCat("batch dimension ", i, " differs: ", TypeStr(*x), " vs indices ",
                                    TypeStr(*idx)));
  }
  const size_t ax = static_cast<size_t>(axis);
  const int64_t n = xs[ax];
  const Shape64& is = idx->shape();
  Shape64 os(xs.begin(), xs.begin() + axis);
  os.insert(os.end(), is.begin() + bd, is.end());
  os.insert(os.end(), xs.begin() + axis + 1, xs.end());
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), os));
  if (out->num_elements() > 0 && n == 0)
    return k.Error(absl::StrCat("cannot take from an empty axis of ", TypeStr(*x)));
  const Shape64 xst = Strides(xs), ist = Strides(is);
  const size_t n_idx = is.size() - static_cast<size_t>(bd);
  Shape64 c;
  for (int64_t o = 0; o < out->num_elements(); ++o) {
    Unravel(o, os, &c);
    // c = data[:axis] coords, indices[bd:] coords, data[axis+1:] coords.
    int64_t ii = 0;
    for (size_t d = 0; d < static_cast<size_t>(bd); ++d) ii += c[d] * ist[d];
    for (size_t d = 0; d < n_idx; ++d) ii += c[ax + d] * ist[static_cast<size_t>(bd) + d];
    int64_t i = LoadI(*idx, ii);
    if (idx->dtype().is_uint() && idx->dtype().bits() == 64 && i < 0) i = n;  // huge: out of range
    if (a.mode == "clip") {
      i = std::clamp<int64_t>(i, 0, n - 1);
    } else if (a.mode == "wrap") {
      i = ((i % n) + n) % n;
    } else {
      if (i < -n || i >= n)
        return k.Error(absl::StrCat("index ", i, " is out of range for axis ", axis, " of extent ",
                                    n, " (mode \"fast\")"));
      if (i < 0) i += n;
    }
    int64_t src = i * xst[ax];
    for (size_t d = 0; d < ax; ++d) src += c[d] * xst[d];
    for (size_t d = ax + 1; d < xs.size(); ++d) src += c[d - 1 + n_idx] * xst[d];
    CopyElem(*x, src, *out, o);
  }
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> ExpandDims(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const ExpandDimsAttrs& a = k.Attrs<ExpandDimsAttrs>();
  const int64_t nd = x->ndim();
  if (a.num_newaxis < 0 || a.axis < -nd - 1 || a.axis > nd)
    return k.Error(absl::StrCat("axis ", a.axis, " / num_newaxis ", a.num_newaxis,
                                " out of range for ", TypeStr(*x)));
  const int64_t axis = a.axis < 0 ? a.axis + nd + 1 : a.axis;
  Shape64 os(x->shape().begin(), x->shape().begin() + axis);
  for (int64_t i = 0; i < a.num_newaxis; ++i) os.push_back(1);
  os.insert(os.end(), x->shape().begin() + axis, x->shape().end());
  return WithShape(k, *x, os);
}

absl::StatusOr<Value> Squeeze(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const auto& axis = k.Attrs<SqueezeAttrs>().axis;
  std::vector<bool> drop(x->shape().size(), false);
  if (!axis) {
    for (size_t i = 0; i < drop.size(); ++i) drop[i] = x->shape()[i] == 1;
  } else {
    for (int64_t ax : *axis) {
      KILN_ASSIGN_OR_RETURN(int64_t p, NormAxis(k, ax, x->ndim()));
      if (x->shape()[static_cast<size_t>(p)] != 1)
        return k.Error(absl::StrCat("cannot squeeze axis ", p, " of ", TypeStr(*x), ": not 1"));
      drop[static_cast<size_t>(p)] = true;
    }
  }
  Shape64 os;
  for (size_t i = 0; i < drop.size(); ++i)
    if (!drop[i]) os.push_back(x->shape()[i]);
  return WithShape(k, *x, os);
}

absl::StatusOr<Value> BroadcastTo(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const Shape64& target = k.Attrs<BroadcastToAttrs>().shape;
  KILN_ASSIGN_OR_RETURN(Shape64 s, BroadcastShape(k, x->shape(), target));
  if (s != target)
    return k.Error(absl::StrCat("cannot broadcast ", TypeStr(*x), " to ", ShapeStr(target)));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), target));
  const std::vector<int64_t> ix = BroadcastIndex(x->shape(), target);
  for (int64_t o = 0; o < out->num_elements(); ++o) CopyElem(*x, ix[static_cast<size_t>(o)], *out, o);
  return TensorValue(std::move(out));
}

absl::StatusOr<Value> Where(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* c, k.Tensor(0));
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(1));
  KILN_ASSIGN_OR_RETURN(const HostTensor* y, k.Tensor(2));
  if (!c->dtype().is_bool() || x->dtype() != y->dtype())
    return k.Error(absl::StrCat("expects a bool condition and x, y of one dtype; got ", TypeStr(*c),
                                ", ", TypeStr(*x), ", ", TypeStr(*y)));
  KILN_ASSIGN_OR_RETURN(Shape64 xy, BroadcastShape(k, x->shape(), y->shape()));
  KILN_ASSIGN_OR_RETURN(Shape64 s, BroadcastShape(k, c->shape(), xy));
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> out, NewTensor(k, x->dtype(), s));
  const auto ic = BroadcastIndex(c->shape(), s), ix = BroadcastIndex(x->shape(), s),
             iy = BroadcastIndex(y->shape(), s);
  for (int64_t o = 0; o < out->num_elements(); ++o) {
    const size_t so = static_cast<size_t>(o);
    if (LoadI(*c, ic[so]) != 0) CopyElem(*x, ix[so], *out, o);
    else CopyElem(*y, iy[so], *out, o);
  }
  return TensorValue(std::move(out));
}

// Parses src_layout / dst_layout (ir/layout.h); the error names the attribute.
absl::StatusOr<Layout> ParseLayoutAttr(const KernelCtx& k, absl::string_view what,
                                       const std::string& text) {
  absl::StatusOr<Layout> l = ParseLayout(text);
  if (!l.ok()) return k.Error(absl::StrCat(what, " ", l.status().message()));
  return l;
}

absl::StatusOr<Value> LayoutTransform(const KernelCtx& k) {
  KILN_ASSIGN_OR_RETURN(const HostTensor* x, k.Tensor(0));
  const LayoutTransformAttrs& a = k.Attrs<LayoutTransformAttrs>();
  KILN_ASSIGN_OR_RETURN(Layout src, ParseLayoutAttr(k, "src_layout", a.src_layout));
  KILN_ASSIGN_OR_RETURN(Layout dst, ParseLayoutAttr(k, "dst_layout", a.dst_layout));
  if (static_cast<int64_t>(src.axes.size()) != x->ndim())
    return k.Error(absl::StrCat(TypeStr(*x), " does not have the rank of src_layout ", a.src_layout));
  // Full extent of each primal axis.
  std::map<char, int64_t> full;
  for (size_t i = 0; i < src.axes.size(); ++i) {
    const auto& [c, f] = src.axes[i];
    if (f > 0) {
      if (x->shape()[i] != f)
        return k.Error(absl::StrCat("axis ", i, " of ", TypeStr(*x), " must be ", f, " (", a.src_layout, ")"));
      continue;
    }
    const int64_t sf = src.FactorOf(c);
    full[c] = x->shape()[i] * (sf > 0 ? sf : 1);
  }
  Shape64 os;
  for (const auto& [c, f] : dst.axes) {
    if (f > 0) {
      if (full.count(Layout::PrimalOf(c)) == 0)
        return k.Error(absl::StrCat("dst_layout ", a.dst_layout, " splits an axis src_layout lacks"));
      os.push_back(f);
      continue;
    }
    if (full.count(c) == 0)
      return k.Error(absl::StrCat("src_layout ", a.src_layout, " has no axis ", std::string(1, c)));
    const int64_t df = dst.FactorOf(c);
    if (df > 0 && full[c] % df != 0)
      return k.Error(absl::StrCat("axis ", std::string(1, c), " of extent ", full[c],
                                  " does not divide by ", df));
    os.push_back(df > 0 ? full[c] / df : full[c]);
  }
  for (const auto& [c, e] : full) {
    (void)e;
    if (dst.Find(c) < 0)
      return k.Error(absl::StrCat("dst_layout ", a.dst_layout, " has no axis ", std::string(1, c)));
  }
  // Every element is written below: no need to zero the (possibly huge) output.
  absl::StatusOr<Ref<HostTensor>> made = HostTensor::CreateUninitialized(x->dtype(), os);
  if (!made.ok()) return k.Error(made.status().message());
  Ref<HostTensor> out = *std::move(made);
  const Shape64 ist = Strides(x->shape());
  // Every output element copies one input element. Each primal axis P (C in
  // NCHW16c) has a full coordinate that the output axes of P build up
  // (C = c_outer * 16 + c_inner); a table per primal axis maps that coordinate
  // to its share of the input offset. The output is walked with an odometer,
  // so the loop does additions only: weights of tens of millions of elements
  // are transformed when FoldConstant folds AlterOpLayout's transforms.
  std::vector<char> primals;
  for (const auto& [c, e] : full) primals.push_back(c);
  auto primal_index = [&](char c) {
    return static_cast<size_t>(std::find(primals.begin(), primals.end(), c) - primals.begin());
  };
  std::vector<std::vector<int64_t>> table(primals.size());
  for (size_t pi = 0; pi < primals.size(); ++pi) {
    const char c = primals[pi];
    table[pi].assign(static_cast<size_t>(full[c]), 0);
    for (size_t d = 0; d < src.axes.size(); ++d) {
      const auto& [sc, f] = src.axes[d];
      if (f > 0 && Layout::PrimalOf(sc) == c) {
        for (int64_t v = 0; v < full[c]; ++v) table[pi][static_cast<size_t>(v)] += (v % f) * ist[d];
      } else if (f == 0 && sc == c) {
        const int64_t sf = src.FactorOf(c);
        for (int64_t v = 0; v < full[c]; ++v)
          table[pi][static_cast<size_t>(v)] += (sf > 0 ? v / sf : v) * ist[d];
      }
    }
  }
  std::vector<size_t> prim(dst.axes.size());
  std::vector<int64_t> mult(dst.axes.size());
  for (size_t d = 0; d < dst.axes.size(); ++d) {
    const auto& [c, f] = dst.axes[d];
    if (f > 0) {
      prim[d] = primal_index(Layout::PrimalOf(c));
      mult[d] = 1;
    } else {
      prim[d] = primal_index(c);
      const int64_t df = dst.FactorOf(c);
      mult[d] = df > 0 ? df : 1;
    }
  }
  const int64_t bits = static_cast<int64_t>(x->dtype().bits()) * x->dtype().lanes();
  const bool bytewise = bits % 8 == 0;
  const size_t es = static_cast<size_t>(bits / 8);
  const char* in = static_cast<const char*>(x->raw_data());
  char* outp = static_cast<char*>(out->mutable_raw_data());
  const int nd = static_cast<int>(dst.axes.size());
  std::vector<int64_t> oc(dst.axes.size(), 0), coord(primals.size(), 0);
  // The innermost output axis usually reads the input at a constant stride
  // (its primal axis is not split in the source): copy such runs in a tight loop.
  const size_t last = dst.axes.size() - 1;
  const std::vector<int64_t>& last_table = table[prim[last]];
  bool linear = true;
  for (size_t v = 0; v < last_table.size() && linear; ++v)
    linear = last_table[v] == static_cast<int64_t>(v) * (last_table.size() > 1 ? last_table[1] : 0);
  const int64_t run = nd > 0 ? os[last] : 1;
  const int64_t run_stride = linear && last_table.size() > 1 ? mult[last] * last_table[1] : 0;
  if (nd > 0 && linear && es == 4 && run > 0) {
    uint32_t* q = reinterpret_cast<uint32_t*>(outp);
    const int64_t runs = out->num_elements() / run;
    for (int64_t r = 0; r < runs; ++r) {
      int64_t base = 0;
      for (size_t pi = 0; pi < primals.size(); ++pi) base += table[pi][static_cast<size_t>(coord[pi])];
      const char* src_base = in + static_cast<size_t>(base) * 4;
      for (int64_t j = 0; j < run; ++j) {
        uint32_t v;
        std::memcpy(&v, src_base + static_cast<size_t>(j * run_stride) * 4, 4);
        *q++ = v;
      }
      for (int d = nd - 2; d >= 0; --d) {  // odometer over all but the last axis
        const size_t ud = static_cast<size_t>(d);
        ++oc[ud];
        coord[prim[ud]] += mult[ud];
        if (oc[ud] < os[ud]) break;
        coord[prim[ud]] -= mult[ud] * os[ud];
        oc[ud] = 0;
      }
    }
    return TensorValue(std::move(out));
  }
  for (int64_t o = 0; o < out->num_elements(); ++o) {
    int64_t srci = 0;
    for (size_t pi = 0; pi < primals.size(); ++pi) srci += table[pi][static_cast<size_t>(coord[pi])];
    if (es == 4) {
      uint32_t v;
      std::memcpy(&v, in + static_cast<size_t>(srci) * 4, 4);
      std::memcpy(outp + static_cast<size_t>(o) * 4, &v, 4);
    } else if (bytewise) {
      std::memcpy(outp + static_cast<size_t>(o) * es, in + static_cast<size_t>(srci) * es, es);
    } else {
      CopyElem(*x, srci, *out, o);
    }
    for (int d = nd - 1; d >= 0; --d) {
      const size_t ud = static_cast<size_t>(d);
      ++oc[ud];
      coord[prim[ud]] += mult[ud];
      if (oc[ud] < os[ud]) break;
      coord[prim[ud]] -= mult[ud] * os[ud];
      oc[ud] = 0;
    }
  }
  return TensorValue(std::move(out));
}

}  // namespace

void RegisterTransformKernels() {
  AddKernel("reshape", Reshape);
  AddKernel("transpose", Transpose);
  AddKernel("concatenate", Concatenate);
  AddKernel("split", Split);
  AddKernel("strided_slice", StridedSlice);
  AddKernel("take", Take);
  AddKernel("expand_dims", ExpandDims);
  AddKernel("squeeze", Squeeze);
  AddKernel("broadcast_to", BroadcastTo);
  AddKernel("where", Where);
  AddKernel("layout_transform", LayoutTransform);
}

}  // namespace kiln::interp::internal
