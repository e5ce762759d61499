#include "passes/simplify_expr/simplify_expr.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <optional>
#include <utility>
#include <vector>

#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "passes/infra/expr_util.h"

namespace kiln::passes {
namespace {

// `e` is a constant whose every element equals `v`.
bool IsConstantAll(const Expr& e, double v) {
  const auto* c = e.as<ConstantNode>();
  if (c == nullptr || !c->data) return false;
  for (int64_t i = 0; i < c->data->num_elements(); ++i)
    if (c->data->GetAsDouble(i) != v) return false;
  return true;
}

bool SameType(const Expr& a, const Expr& b) {
  return a->checked_type() && b->checked_type() && TypeEqual(a->checked_type(), b->checked_type());
}

// Converting `from` to `to` keeps every value exactly.
bool Lossless(DataType from, DataType to) {
  if (from.lanes() != to.lanes()) return false;
  if (from == to || from.is_bool()) return true;
  auto mantissa = [](DataType t) {
    if (t.code() == DTypeCode::kBFloat) return 8;
    return t.bits() == 16 ? 11 : t.bits() == 32 ? 24 : t.bits() == 64 ? 53 : 0;
  };
  if (to.is_float()) {
    if (from.is_float()) {
      if (from.code() == DTypeCode::kBFloat) return to.bits() >= 32;
      if (to.code() == DTypeCode::kBFloat) return false;
      return to.bits() >= from.bits();
    }
    const int value_bits = from.is_int() ? from.bits() - 1 : from.bits();
    return from.is_integral() && value_bits <= mantissa(to);
  }
  if (to.is_int()) return (from.is_int() && to.bits() >= from.bits()) ||
                          (from.is_uint() && to.bits() > from.bits());
  if (to.is_uint()) return from.is_uint() && to.bits() >= from.bits();
  return false;
}

absl::StatusOr<Expr> Typed(absl::StatusOr<Expr> e, const Expr& like) {
  if (e.ok() && like->checked_type()) (*e)->set_checked_type(like->checked_type());
  return e;
}

// The permutation a transpose applies, normalised; nullopt if unknown.
std::optional<std::vector<int64_t>> Perm(const CallNode* c) {
  TensorType t = TensorTypeOf(c->args[0]);
  if (!t) return std::nullopt;
  const int64_t n = t->ndim();
  std::vector<int64_t> p(n);
  const auto* a = c->attrs.as<TransposeAttrs>();
  if (a == nullptr || !a->axes.has_value()) {
    for (int64_t i = 0; i < n; ++i) p[i] = n - 1 - i;
    return p;
  }
  if (static_cast<int64_t>(a->axes->size()) != n) return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = (*a->axes)[i];
    p[i] = v < 0 ? v + n : v;
    if (p[i] < 0 || p[i] >= n) return std::nullopt;
  }
  return p;
}

// Padding as {top, left, bottom, right} from a 1-, 2- or 4-element list.
std::optional<std::vector<int64_t>> Padding4(const std::vector<int64_t>& p) {
  if (p.size() == 1) return std::vector<int64_t>{p[0], p[0], p[0], p[0]};
  if (p.size() == 2) return std::vector<int64_t>{p[0], p[1], p[0], p[1]};
  if (p.size() == 4) return p;
  return std::nullopt;
}

// The spatial padding {top, left, bottom, right} of `pad` (an nn.pad call)
// when it is a constant-mode pad of a 4-D NCHW tensor by `value` on H and W
// only, every width non-negative; nullopt otherwise.
std::optional<std::vector<int64_t>> SpatialPad(const CallNode* pad, double value) {
  const auto* a = pad->attrs.as<PadAttrs>();
  TensorType t = TensorTypeOf(pad->args[0]);
  if (a == nullptr || a->pad_mode != "constant" || pad->args.size() != 2 || !t ||
      t->ndim() != 4 || a->pad_width.size() != 4 || !IsConstantAll(pad->args[1], value)) {
    return std::nullopt;
  }
  for (const auto& w : a->pad_width) {
    if (w.size() != 2 || w[0] < 0 || w[1] < 0) return std::nullopt;
  }
  if (a->pad_width[0] != std::vector<int64_t>{0, 0} ||
      a->pad_width[1] != std::vector<int64_t>{0, 0}) {
    return std::nullopt;
  }
  return std::vector<int64_t>{a->pad_width[2][0], a->pad_width[3][0], a->pad_width[2][1],
                              a->pad_width[3][1]};
}

// conv2d / avg_pool2d / max_pool2d (NCHW) of an explicitly padded input
// (ONNX exporters write avg_pool2d(padding=1, count_include_pad=True) as
// Pad + AveragePool, TensorFlow models a Pad before a Conv) with the padding
// taken into the op: zeros for a conv, zeros counted for an average pool
// (count_include_pad, ceil_mode off), -inf for a max pool. The pad is then
// no separate kernel, and the op keeps its layout choices (a padded pool
// stays in NCHW{c}c under AlterOpLayout).
absl::StatusOr<std::optional<Expr>> FoldPadIntoWindowOp(const Expr& pre, const CallNode* c,
                                                        const std::string& op) {
  const auto none = std::optional<Expr>();
  const CallNode* pad = c->args.empty() ? nullptr : AsOpCall(c->args[0], "nn.pad");
  if (pad == nullptr) return none;
  Ref<AttrsNode> attrs = Ref<AttrsNode>(c->attrs->Clone());
  std::vector<int64_t>* padding = nullptr;
  double value = 0;
  if (op == "nn.conv2d") {
    auto* a = static_cast<Conv2DAttrs*>(attrs.get());
    if (a->data_layout != "NCHW") return none;
    padding = &a->padding;
  } else {
    auto* a = static_cast<Pool2DAttrs*>(attrs.get());
    if (a->layout != "NCHW" || a->ceil_mode) return none;
    if (op == "nn.avg_pool2d") {
      std::optional<std::vector<int64_t>> own = Padding4(a->padding);
      const bool unpadded = own && *own == std::vector<int64_t>{0, 0, 0, 0};
      if (!a->count_include_pad && !unpadded) return none;
      a->count_include_pad = true;
    } else {
      value = -std::numeric_limits<double>::infinity();
    }
    padding = &a->padding;
  }
  std::optional<std::vector<int64_t>> extra = SpatialPad(pad, value);
  std::optional<std::vector<int64_t>> own = Padding4(*padding);
  if (!extra || !own) return none;
  for (size_t i = 0; i < 4; ++i) (*own)[i] += (*extra)[i];
  *padding = *own;
  std::vector<Expr> args = c->args;
  args[0] = pad->args[0];
  KILN_ASSIGN_OR_RETURN(Expr r, Typed(CallOpNamed(op, std::move(args), Attrs(attrs)), pre));
  return std::optional<Expr>(r);
}

// One spatial axis of a convolution split into bands of output positions
// that read the input through the same kernel taps [first, last]; the taps
// outside a band's range read only padding there. Positions in a band are
// [begin, end).
struct TapBand {
  int64_t begin, end, first, last;
};

// The bands of one axis (input extent `in`, kernel extent `k`); empty when
// some output position reads no input at all (a conv of padding only) or
// the arguments are not a valid convolution.
std::vector<TapBand> TapBands(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                              int64_t pad_before, int64_t pad_after) {
  if (in <= 0 || k <= 0 || stride <= 0 || dilation <= 0) return {};
  const int64_t out = (in + pad_before + pad_after - dilation * (k - 1) - 1) / stride + 1;
  if (out <= 0) return {};
  std::vector<TapBand> bands;
  for (int64_t o = 0; o < out; ++o) {
    const int64_t base = o * stride - pad_before;  // input index of tap 0
    int64_t first = -1, last = -1;
    for (int64_t t = 0; t < k; ++t) {
      const int64_t i = base + t * dilation;
      if (i < 0 || i >= in) continue;
      if (first < 0) first = t;
      last = t;
    }
    if (first < 0) return {};
    if (!bands.empty() && bands.back().first == first && bands.back().last == last) {
      bands.back().end = o + 1;
    } else {
      bands.push_back({o, o + 1, first, last});
    }
  }
  return bands;
}

// The part of a convolution axis a band computes: the input [lo, hi) it reads
// and the padding around that slice.
struct BandWindow {
  int64_t lo, hi, pad_before, pad_after;
};

BandWindow Window(const TapBand& b, int64_t in, int64_t stride, int64_t dilation,
                  int64_t pad_before) {
  const int64_t first = b.begin * stride - pad_before + b.first * dilation;
  const int64_t last = (b.end - 1) * stride - pad_before + b.last * dilation;
  BandWindow w;
  w.lo = std::max<int64_t>(0, first);
  w.hi = std::min(in, last + 1);
  w.pad_before = w.lo - first;
  w.pad_after = last + 1 - w.hi;
  return w;
}

absl::StatusOr<Expr> Slice(const Expr& x, std::vector<int64_t> begin, std::vector<int64_t> end,
                           std::vector<int64_t> axes) {
  return CallOpNamed("strided_slice", {x},
                     MakeAttrs<StridedSliceAttrs>([&](StridedSliceAttrs& s) {
                       s.begin = std::move(begin);
                       s.end = std::move(end);
                       s.axes = std::move(axes);
                     }));
}

absl::StatusOr<Expr> Concat(std::vector<Expr> parts, int64_t axis) {
  if (parts.size() == 1) return parts[0];
  KILN_ASSIGN_OR_RETURN(Tuple t, MakeTuple(std::move(parts)));
  return CallOpNamed("concatenate", {Expr(t)},
                     MakeAttrs<ConcatenateAttrs>([&](ConcatenateAttrs& a) { a.axis = axis; }));
}

// A convolution whose kernel taps read padding for some output positions
// computes with the live taps only, so no multiply-add is spent on padding:
//  - where the same taps are dead for every output position (DeepLabV3's
//    ASPP: dilation 24 and 36 on a 16x16 map leave only the centre tap) the
//    weight is sliced to the live taps and the padding shrinks by the dropped
//    taps' reach: a 3x3 conv whose centre tap alone is live becomes 1x1;
//  - where they differ by band of output rows or columns (the ASPP's
//    dilation 12 on 16x16: rows 0-3 read taps 1-2, rows 4-11 tap 1, rows
//    12-15 taps 0-1) and at least half of all multiply-adds would read
//    padding, each band x band region (16 at most) is its own convolution of
//    the input window it reads with its live taps, and the regions are
//    concatenated.
// The output and its values are unchanged (the dropped products are of
// zeros). Convolutions that waste less keep their single kernel: a 3x3
// pad-1 conv wastes 1/H of its rows.
absl::StatusOr<std::optional<Expr>> ConvOverLiveTaps(const Expr& pre, const CallNode* c) {
  const auto none = std::optional<Expr>();
  const auto* a = c->attrs.as<Conv2DAttrs>();
  TensorType data = TensorTypeOf(c->args[0]);
  TensorType weight = TensorTypeOf(c->args[1]);
  if (a == nullptr || !data || !weight || data->ndim() != 4 || weight->ndim() != 4 ||
      a->data_layout.size() != 4 || a->kernel_layout.size() != 4 || a->strides.size() != 2 ||
      a->dilation.size() != 2) {
    return none;
  }
  std::optional<std::vector<int64_t>> dshape = StaticShape(data->shape);
  std::optional<std::vector<int64_t>> wshape = StaticShape(weight->shape);
  std::optional<std::vector<int64_t>> pad = Padding4(a->padding);
  if (!dshape || !wshape || !pad) return none;
  std::vector<TapBand> bands[2];
  int64_t daxis[2], waxis[2];
  double live = 1;
  bool trimmed = false;
  for (int d = 0; d < 2; ++d) {
    const char axis = d == 0 ? 'H' : 'W';
    const size_t di = a->data_layout.find(axis), wi = a->kernel_layout.find(axis);
    if (di == std::string::npos || wi == std::string::npos) return none;
    daxis[d] = static_cast<int64_t>(di);
    waxis[d] = static_cast<int64_t>(wi);
    const int64_t k = (*wshape)[wi];
    bands[d] = TapBands((*dshape)[di], k, a->strides[d], a->dilation[d], (*pad)[d], (*pad)[d + 2]);
    if (bands[d].empty()) return none;
    int64_t taps = 0, out = 0;
    for (const TapBand& b : bands[d]) {
      taps += (b.end - b.begin) * (b.last - b.first + 1);
      out += b.end - b.begin;
    }
    live *= static_cast<double>(taps) / static_cast<double>(out * k);
    trimmed = trimmed || bands[d].size() > 1 || bands[d][0].first > 0 ||
              bands[d][0].last < k - 1;
  }
  if (!trimmed) return none;
  const bool split = bands[0].size() > 1 || bands[1].size() > 1;
  // At most 16 regions: a large kernel over a map as small as itself has a
  // band per output row, and thousands of small convs would cost more to
  // compile and launch than the padding they skip.
  if (split && (live > 0.5 || bands[0].size() * bands[1].size() > 16)) return none;
  // One region's convolution: the input window and taps of band bh x bw.
  auto region = [&](const TapBand& bh, const TapBand& bw) -> absl::StatusOr<Expr> {
    const TapBand* b[2] = {&bh, &bw};
    Ref<AttrsNode> attrs = Ref<AttrsNode>(c->attrs->Clone());
    auto* na = static_cast<Conv2DAttrs*>(attrs.get());
    std::vector<int64_t> xb, xe, xa, wb, we, wa;
    std::vector<int64_t> padding(4);
    for (int d = 0; d < 2; ++d) {
      const int64_t in = (*dshape)[daxis[d]], k = (*wshape)[waxis[d]];
      const BandWindow win = Window(*b[d], in, a->strides[d], a->dilation[d], (*pad)[d]);
      padding[d] = win.pad_before;
      padding[d + 2] = win.pad_after;
      if (win.lo > 0 || win.hi < in) {
        xb.push_back(win.lo);
        xe.push_back(win.hi);
        xa.push_back(daxis[d]);
      }
      const int64_t taps = b[d]->last - b[d]->first + 1;
      if (taps < k) {
        wb.push_back(b[d]->first);
        we.push_back(b[d]->last + 1);
        wa.push_back(waxis[d]);
      }
      if (taps == 1) na->dilation[d] = 1;
      if (na->kernel_size && na->kernel_size->size() == 2) (*na->kernel_size)[d] = taps;
    }
    na->padding = padding;
    Expr x = c->args[0], w = c->args[1];
    if (!xa.empty()) {
      KILN_ASSIGN_OR_RETURN(x, Slice(x, xb, xe, xa));
    }
    if (!wa.empty()) {
      KILN_ASSIGN_OR_RETURN(w, Slice(w, wb, we, wa));
    }
    return CallOpNamed("nn.conv2d", {x, w}, Attrs(attrs));
  };
  std::vector<Expr> rows;
  for (const TapBand& bh : bands[0]) {
    std::vector<Expr> cols;
    for (const TapBand& bw : bands[1]) {
      KILN_ASSIGN_OR_RETURN(Expr r, region(bh, bw));
      cols.push_back(std::move(r));
    }
    KILN_ASSIGN_OR_RETURN(Expr row, Concat(std::move(cols), daxis[1]));
    rows.push_back(std::move(row));
  }
  KILN_ASSIGN_OR_RETURN(Expr r, Typed(Concat(std::move(rows), daxis[0]), pre));
  return std::optional<Expr>(r);
}

class Simplifier : public TypedRewriter {
 protected:
  absl::StatusOr<Expr> Transform(const Expr& pre, Expr post) override {
    const auto* c = post.as<CallNode>();
    if (c == nullptr || c->op->kind != ExprKind::kOp) return post;
    const std::string& op = c->op.as<OpNode>()->name();
    if (op == "multiply" || op == "add" || op == "subtract" || op == "divide") {
      const Expr& l = c->args[0];
      const Expr& r = c->args[1];
      const double unit = (op == "multiply" || op == "divide") ? 1.0 : 0.0;
      if (IsConstantAll(r, unit) && SameType(pre, l)) return l;
      if ((op == "multiply" || op == "add") && IsConstantAll(l, unit) && SameType(pre, r)) return r;
      return post;
    }
    if (op == "nn.conv2d" || op == "nn.avg_pool2d" || op == "nn.max_pool2d") {
      KILN_ASSIGN_OR_RETURN(std::optional<Expr> folded, FoldPadIntoWindowOp(pre, c, op));
      if (folded) post = *folded;
      if (op != "nn.conv2d") return post;
      KILN_ASSIGN_OR_RETURN(std::optional<Expr> trimmed,
                            ConvOverLiveTaps(pre, post.as<CallNode>()));
      return trimmed ? *trimmed : post;
    }
    if (op == "reshape") {
      const Expr& x = c->args[0];
      if (SameType(pre, x)) return x;
      if (const CallNode* inner = AsOpCall(x, "reshape")) {
        auto attrs = Ref<AttrsNode>(c->attrs->Clone());
        auto* ra = static_cast<ReshapeAttrs*>(attrs.get());
        bool relative = false;
        for (int64_t d : ra->newshape) relative = relative || d == 0 || d < -1;
        if (relative) {
          TensorType out = TensorTypeOf(pre);
          std::optional<std::vector<int64_t>> shape;
          if (out) shape = StaticShape(out->shape);
          if (!shape) return post;
          ra->newshape = *shape;
          ra->allowzero = false;
        }
        if (SameType(pre, inner->args[0])) return inner->args[0];
        return Typed(CallOpNamed("reshape", {inner->args[0]}, Attrs(attrs)), pre);
      }
      return post;
    }
    if (op == "transpose") {
      const CallNode* inner = AsOpCall(c->args[0], "transpose");
      if (inner == nullptr) return post;
      std::optional<std::vector<int64_t>> p = Perm(inner), q = Perm(c);
      if (!p || !q || p->size() != q->size()) return post;
      std::vector<int64_t> composed(q->size());
      bool identity = true;
      for (size_t i = 0; i < q->size(); ++i) {
        composed[i] = (*p)[(*q)[i]];
        identity = identity && composed[i] == static_cast<int64_t>(i);
      }
      if (identity) return inner->args[0];
      auto attrs = Ref<AttrsNode>(c->attrs->Clone());
      static_cast<TransposeAttrs*>(attrs.get())->axes = composed;
      return Typed(CallOpNamed("transpose", {inner->args[0]}, Attrs(attrs)), pre);
    }
    if (op == "cast") {
      const Expr& x = c->args[0];
      if (SameType(pre, x)) return x;
      const CallNode* inner = AsOpCall(x, "cast");
      if (inner == nullptr) return post;
      TensorType src = TensorTypeOf(inner->args[0]);
      TensorType mid = TensorTypeOf(x);
      if (!src || !mid || !Lossless(src->dtype, mid->dtype)) return post;
      if (SameType(pre, inner->args[0])) return inner->args[0];
      return Typed(CallOpNamed("cast", {inner->args[0]}, c->attrs), pre);
    }
    return post;
  }
};

absl::StatusOr<Function> Run(const Function& f) {
  Simplifier s;
  KILN_ASSIGN_OR_RETURN(Expr body, s.Rewrite(f->body));
  if (body.get() == f->body.get()) return f;
  return MakeFunction(f->params, body, f->ret_type, f->type_params, f->attrs);
}

}  // namespace

PassPtr SimplifyExpr() {
  return MakeFunctionPass({"SimplifyExpr", 3, {"InferType"}},
                          [](const Function& f, const Module&, const PassContext&) {
                            return Run(f);
                          });
}

}  // namespace kiln::passes
