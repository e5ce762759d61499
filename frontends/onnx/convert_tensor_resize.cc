// ONNX Resize (opsets 10, 11, 13) and Upsample (7, 9) -> graph IR (part of
// the tensor family; registered by RegisterTensorConverters).
//
// Resizing is separable: each axis whose size or sampling changes becomes
// gathers (take) of constant indices weighted by constant coefficients —
// nearest: one tap, linear: 2, cubic: 4 — following ONNX's reference
// implementation (onnx/backend/test/case/node/resize.py): the coordinate
// transformations, the left pixel with ratio 1 at integral coordinates, edge
// padding (clamped indices), exclude_outside renormalization, and
// tf_crop_and_resize's extrapolation value (a where on a constant mask).
// When scales, sizes or roi are known only at run time, the same plan is
// built from graph operations on dyn.arange's output coordinates
// (RunTimeResize): the model then runs on the VM.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::cvt {
namespace {

// How one output coordinate of an axis reads the input: taps (clamped input
// indices) and their weights, or the extrapolation value.
struct AxisPlan {
  int64_t out_len = 0;
  int taps = 1;
  std::vector<int64_t> idx;   // [out_len * taps]
  std::vector<double> w;      // [out_len * taps]
  std::vector<bool> extrap;   // [out_len]
  bool identity = true;       // out[j] == in[j] for every j
};

struct ResizeMode {
  std::string mode = "nearest";  // nearest, linear, cubic
  std::string ctm = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

std::vector<double> CubicCoeffs(double r, double a) {
  auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };   // 1 < |t| < 2
  auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };       // |t| <= 1
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

// ONNX's Resize reference (onnx/backend/test/case/node/resize.py), one axis.
absl::StatusOr<AxisPlan> PlanAxis(const ConvertContext& c, const ResizeMode& m, int64_t in_len,
                                  int64_t out_len, double scale, double roi_start, double roi_end) {
  AxisPlan p;
  p.out_len = out_len;
  p.taps = m.mode == "nearest" ? 1 : m.mode == "linear" ? 2 : 4;
  p.extrap.assign(static_cast<size_t>(out_len), false);
  if (in_len < 1 && out_len > 0) return c.Invalid("cannot resize an empty axis");
  // The reference's output_length is scale * in_len, unrounded.
  const double len_f = scale * static_cast<double>(in_len);
  for (int64_t j = 0; j < out_len; ++j) {
    const double x = static_cast<double>(j);
    double xo = 0;
    if (m.ctm == "half_pixel") xo = (x + 0.5) / scale - 0.5;
    else if (m.ctm == "pytorch_half_pixel") xo = len_f > 1 ? (x + 0.5) / scale - 0.5 : 0;
    else if (m.ctm == "align_corners")
      xo = len_f == 1 ? 0 : x * static_cast<double>(in_len - 1) / (len_f - 1);
    else if (m.ctm == "asymmetric") xo = x / scale;
    else if (m.ctm == "tf_half_pixel_for_nn") xo = (x + 0.5) / scale;
    else if (m.ctm == "tf_crop_and_resize")
      xo = len_f > 1 ? roi_start * static_cast<double>(in_len - 1) +
                           x * (roi_end - roi_start) * static_cast<double>(in_len - 1) / (len_f - 1)
                       : 0.5 * (roi_start + roi_end) * static_cast<double>(in_len - 1);
    else
      return c.Unsupported(absl::StrCat("coordinate_transformation_mode \"", m.ctm, "\""));
    if (m.ctm == "tf_crop_and_resize" && (xo < 0 || xo > static_cast<double>(in_len - 1))) {
      p.extrap[static_cast<size_t>(j)] = true;
      p.identity = false;
      for (int t = 0; t < p.taps; ++t) {
        p.idx.push_back(0);
        p.w.push_back(t == 0 ? 1.0 : 0.0);
      }
      continue;
    }
    // The reference takes the pixel left of an integral coordinate with ratio 1.
    const bool integral = xo == std::floor(xo);
    const int64_t left = static_cast<int64_t>(std::floor(xo)) - (integral ? 1 : 0);
    const double ratio = integral ? 1.0 : xo - std::floor(xo);
    std::vector<double> w;
    std::vector<int64_t> src;
    if (m.mode == "nearest") {
      bool take_right = true;
      if (!integral) {
        if (m.nearest_mode == "round_prefer_floor") take_right = ratio > 0.5;
        else if (m.nearest_mode == "round_prefer_ceil") take_right = ratio >= 0.5;
        else if (m.nearest_mode == "floor") take_right = false;
        else if (m.nearest_mode == "ceil") take_right = true;
        else return c.Invalid(absl::StrCat("nearest_mode \"", m.nearest_mode, "\" is unknown"));
      }
      src = {take_right ? left + 1 : left};
      w = {1.0};
    } else if (m.mode == "linear") {
      src = {left, left + 1};
      w = {1 - ratio, ratio};
    } else {
      src = {left - 1, left, left + 1, left + 2};
      w = CubicCoeffs(ratio, m.cubic_a);
    }
    if (m.exclude_outside) {
      double sum = 0;
      for (size_t t = 0; t < src.size(); ++t) {
        if (src[t] < 0 || src[t] >= in_len) w[t] = 0;
        sum += w[t];
      }
      if (sum != 0)
        for (double& v : w) v /= sum;
    }
    for (size_t t = 0; t < src.size(); ++t) {
      const int64_t i = std::clamp<int64_t>(src[t], 0, in_len - 1);  // edge padding
      p.idx.push_back(i);
      p.w.push_back(w[t]);
      if (w[t] != 0 && (i != j || w[t] != 1.0)) p.identity = false;
    }
  }
  if (out_len != in_len) p.identity = false;
  return p;
}

absl::StatusOr<Expr> ApplyAxisPlan(ConvertContext& c, Expr y, int64_t axis, int64_t rank,
                                   const AxisPlan& p, DataType dtype, double extrapolation) {
  const int64_t n = p.out_len;
  std::vector<int64_t> col(static_cast<size_t>(rank - axis), 1);  // [n, 1, ..., 1]
  col[0] = n;
  Expr acc;
  for (int t = 0; t < p.taps; ++t) {
    std::vector<int64_t> idx(static_cast<size_t>(n));
    std::vector<double> w(static_cast<size_t>(n));
    bool any = false;
    for (int64_t j = 0; j < n; ++j) {
      idx[static_cast<size_t>(j)] = p.idx[static_cast<size_t>(j * p.taps + t)];
      w[static_cast<size_t>(j)] = p.w[static_cast<size_t>(j * p.taps + t)];
      any = any || w[static_cast<size_t>(j)] != 0;
    }
    if (!any) continue;
    KILN_ASSIGN_OR_RETURN(Expr ic, ConstI64(c, {n}, idx));
    KILN_ASSIGN_OR_RETURN(Expr g, Take(c, y, ic, axis));
    if (p.taps > 1) {
      KILN_ASSIGN_OR_RETURN(Expr wc, ConstOf(c, dtype, col, w));
      KILN_ASSIGN_OR_RETURN(g, c.Call("multiply", {g, wc}));
    }
    if (acc) {
      KILN_ASSIGN_OR_RETURN(acc, c.Call("add", {acc, g}));
    } else {
      acc = g;
    }
  }
  if (!acc) {  // every weight is zero (all points extrapolated): zeros of the output shape
    KILN_ASSIGN_OR_RETURN(Expr ic, ConstI64(c, {n}, std::vector<int64_t>(static_cast<size_t>(n), 0)));
    KILN_ASSIGN_OR_RETURN(Expr g, Take(c, y, ic, axis));
    KILN_ASSIGN_OR_RETURN(acc, c.Call("zeros_like", {g}));
  }
  if (std::find(p.extrap.begin(), p.extrap.end(), true) != p.extrap.end()) {
    std::vector<double> mask(p.extrap.begin(), p.extrap.end());
    KILN_ASSIGN_OR_RETURN(Expr mc, ConstOf(c, DataType::Bool(), col, mask));
    KILN_ASSIGN_OR_RETURN(Expr ev, c.ScalarConst(dtype, extrapolation));
    KILN_ASSIGN_OR_RETURN(acc, c.Call("where", {mc, ev, acc}));
  }
  return acc;
}

// An axis plan that repeats with the output period s = out_len / in_len:
// output j * s + r reads input clamp(j + off[r][t]) with weight w[r][t]
// (tap t) for every j. Integer-factor upsampling with half_pixel,
// pytorch_half_pixel or asymmetric coordinates is of this form, in every
// mode. nullopt for any other plan (align_corners, fractional factors,
// extrapolated points).
struct PeriodicPlan {
  int64_t period = 0;
  std::vector<std::vector<int64_t>> off;  // [r][t]
  std::vector<std::vector<double>> w;     // [r][t]
  bool uniform = true;                    // off[r][t] the same for every r
};

std::optional<PeriodicPlan> Periodic(const AxisPlan& p, int64_t in_len) {
  if (in_len < 1 || p.out_len < in_len || p.out_len % in_len != 0) return std::nullopt;
  if (std::find(p.extrap.begin(), p.extrap.end(), true) != p.extrap.end()) return std::nullopt;
  const int64_t s = p.out_len / in_len, taps = p.taps, j0 = in_len / 2;
  PeriodicPlan q;
  q.period = s;
  q.off.assign(static_cast<size_t>(s), std::vector<int64_t>(static_cast<size_t>(taps)));
  q.w.assign(static_cast<size_t>(s), std::vector<double>(static_cast<size_t>(taps)));
  for (int64_t r = 0; r < s; ++r) {
    for (int64_t t = 0; t < taps; ++t) {
      const size_t k = static_cast<size_t>((j0 * s + r) * taps + t);
      const int64_t off = p.idx[k] - j0;
      if (off < -4 || off > 4) return std::nullopt;
      // One tap always of weight 1 (nearest without exclude_outside's zeros).
      if (taps == 1 && p.w[k] != 1.0) return std::nullopt;
      q.off[static_cast<size_t>(r)][static_cast<size_t>(t)] = off;
      q.uniform = q.uniform && off == q.off[0][static_cast<size_t>(t)];
      q.w[static_cast<size_t>(r)][static_cast<size_t>(t)] = p.w[k];
    }
  }
  for (int64_t j = 0; j < in_len; ++j) {
    for (int64_t r = 0; r < s; ++r) {
      for (int64_t t = 0; t < taps; ++t) {
        const size_t k = static_cast<size_t>((j * s + r) * taps + t);
        const int64_t off = q.off[static_cast<size_t>(r)][static_cast<size_t>(t)];
        const double w = q.w[static_cast<size_t>(r)][static_cast<size_t>(t)];
        // The weights of a period differ from row to row only by rounding of
        // the coordinate arithmetic.
        if (p.idx[k] != std::clamp<int64_t>(j + off, 0, in_len - 1) ||
            std::abs(p.w[k] - w) > 1e-9 * std::max(1.0, std::abs(w))) {
          return std::nullopt;
        }
      }
    }
  }
  return q;
}

// A periodic plan without gathers: the input edge-padded along the axis,
// one slice per offset, each tap's value per phase r chosen among the
// slices (where on a constant [s] mask) and weighted, as a [..., in, s, ...]
// tensor reshaped to [..., in * s, ...]. The same taps and weights as
// ApplyAxisPlan, summed in the same order; but a kernel reading it computes
// its addresses from the output index (j = o / s, r = o % s) instead of
// loading them from index tables: no gathers where s is a multiple of the
// vector width (a 16x upsample reads a broadcast input value per vector;
// DeepLabV3's 21x256x256 output: 3.6 -> 1.3 ms on AVX2, 1 thread).
absl::StatusOr<Expr> ApplyPeriodicPlan(ConvertContext& c, Expr y, int64_t axis,
                                       std::vector<int64_t> shape, const PeriodicPlan& q,
                                       DataType dtype) {
  const size_t ua = static_cast<size_t>(axis);
  const int64_t in = shape[ua], s = q.period, rank = static_cast<int64_t>(shape.size());
  const size_t taps = q.off[0].size();
  int64_t lo = 0, hi = 0;
  for (const auto& row : q.off) {
    for (int64_t o : row) {
      lo = std::max(lo, -o);
      hi = std::max(hi, o);
    }
  }
  Expr xp = y;
  if (lo > 0 || hi > 0) {
    auto a = NewAttrs<PadAttrs>();
    a->pad_width.assign(shape.size(), {0, 0});
    a->pad_width[ua] = {lo, hi};
    a->pad_mode = "edge";
    KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(dtype, 0));
    KILN_ASSIGN_OR_RETURN(xp, c.Call("nn.pad", {y, zero}, a));
  }
  std::vector<int64_t> split = shape;  // [..., in, 1, ...]
  split.insert(split.begin() + axis + 1, 1);
  std::vector<int64_t> phase(static_cast<size_t>(rank - axis), 1);  // [s, 1, ..., 1]
  phase[0] = s;
  absl::flat_hash_map<int64_t, Expr> slices;
  auto slice = [&](int64_t o) -> absl::StatusOr<Expr> {
    if (auto it = slices.find(o); it != slices.end()) return it->second;
    Expr v = xp;
    if (lo > 0 || hi > 0) {
      KILN_ASSIGN_OR_RETURN(v, SliceAxis(c, xp, axis, o + lo, o + lo + in));
    }
    KILN_ASSIGN_OR_RETURN(v, Reshape(c, v, split));
    slices[o] = v;
    return v;
  };
  Expr acc;
  for (size_t t = 0; t < taps; ++t) {
    std::vector<double> w(static_cast<size_t>(s));
    std::vector<int64_t> offs;
    bool any = false;
    for (int64_t r = 0; r < s; ++r) {
      w[static_cast<size_t>(r)] = q.w[static_cast<size_t>(r)][t];
      any = any || w[static_cast<size_t>(r)] != 0;
      const int64_t o = q.off[static_cast<size_t>(r)][t];
      if (std::find(offs.begin(), offs.end(), o) == offs.end()) offs.push_back(o);
    }
    if (!any) continue;
    // The last offset is the default; each other one where its mask holds.
    KILN_ASSIGN_OR_RETURN(Expr v, slice(offs.back()));
    for (size_t i = offs.size() - 1; i-- > 0;) {
      std::vector<double> mask(static_cast<size_t>(s));
      for (int64_t r = 0; r < s; ++r)
        mask[static_cast<size_t>(r)] = q.off[static_cast<size_t>(r)][t] == offs[i] ? 1 : 0;
      KILN_ASSIGN_OR_RETURN(Expr mc, ConstOf(c, DataType::Bool(), phase, mask));
      KILN_ASSIGN_OR_RETURN(Expr other, slice(offs[i]));
      KILN_ASSIGN_OR_RETURN(v, c.Call("where", {mc, other, v}));
    }
    if (taps > 1) {
      KILN_ASSIGN_OR_RETURN(Expr wc, ConstOf(c, dtype, phase, w));
      KILN_ASSIGN_OR_RETURN(v, c.Call("multiply", {v, wc}));
    } else {
      // One tap of weight 1 (nearest): broadcast to the phases.
      std::vector<int64_t> full = split;
      full[ua + 1] = s;
      KILN_ASSIGN_OR_RETURN(v, BroadcastTo(c, v, full));
    }
    if (acc) {
      KILN_ASSIGN_OR_RETURN(acc, c.Call("add", {acc, v}));
    } else {
      acc = v;
    }
  }
  if (!acc) return absl::InternalError("a periodic resize plan with no weight");
  shape[ua] = in * s;
  return Reshape(c, acc, shape);
}

// ---- run-time scales, sizes or roi ------------------------------------------------
//
// The same plan as PlanAxis, built from graph operations on the output
// coordinates j = dyn.arange(0, out_len, 1) (float64), so that scales, sizes
// and roi may be graph inputs: the output extents are then computed when the
// model runs (on the VM). Every axis is resampled (an axis of scale 1 gives
// weight 1 on its own index).
class RunTimeResize {
 public:
  RunTimeResize(ConvertContext& c, const ResizeMode& m) : c_(c), m_(m) {}

  absl::StatusOr<Expr> F(double v) { return c_.ScalarConst(DataType::Float(64), v); }
  absl::StatusOr<Expr> Op(const char* op, std::vector<Expr> args) { return c_.Call(op, std::move(args)); }
  // Entry i of a 1-D tensor as a 0-D float64.
  absl::StatusOr<Expr> EntryF64(const Expr& v, int64_t i) {
    KILN_ASSIGN_OR_RETURN(Expr idx, ConstI64(c_, {}, {i}));
    KILN_ASSIGN_OR_RETURN(Expr e, Take(c_, v, idx, 0));
    return Cast(c_, e, DataType::Float(64));
  }

  // One axis: y resampled along `axis` (input extent in_len) to out_len
  // points (0-D float64, an integer value) with `scale` (0-D float64).
  absl::StatusOr<Expr> Axis(Expr y, int64_t axis, int64_t rank, int64_t in_len, Expr out_len,
                            Expr scale, Expr roi_start, Expr roi_end, DataType dtype,
                            double extrapolation) {
    if (in_len < 1) return c_.Unsupported("resizing an empty axis at run time");
    const double n1 = static_cast<double>(in_len - 1);
    KILN_ASSIGN_OR_RETURN(Expr zero, F(0));
    KILN_ASSIGN_OR_RETURN(Expr one, F(1));
    KILN_ASSIGN_OR_RETURN(Expr half, F(0.5));
    KILN_ASSIGN_OR_RETURN(Expr x, c_.Call("dyn.arange", {zero, out_len, one}));
    KILN_ASSIGN_OR_RETURN(Expr inl, F(static_cast<double>(in_len)));
    KILN_ASSIGN_OR_RETURN(Expr len_f, Op("multiply", {scale, inl}));  // unrounded, as the reference
    KILN_ASSIGN_OR_RETURN(Expr len_gt1, Op("greater", {len_f, one}));
    KILN_ASSIGN_OR_RETURN(Expr len_m1, Op("subtract", {len_f, one}));
    KILN_ASSIGN_OR_RETURN(Expr xh, Op("add", {x, half}));
    KILN_ASSIGN_OR_RETURN(Expr xh_s, Op("divide", {xh, scale}));
    KILN_ASSIGN_OR_RETURN(Expr half_pixel, Op("subtract", {xh_s, half}));
    KILN_ASSIGN_OR_RETURN(Expr n1c, F(n1));
    Expr xo;
    if (m_.ctm == "half_pixel") {
      xo = half_pixel;
    } else if (m_.ctm == "pytorch_half_pixel") {
      KILN_ASSIGN_OR_RETURN(xo, Op("where", {len_gt1, half_pixel, zero}));
    } else if (m_.ctm == "align_corners") {
      KILN_ASSIGN_OR_RETURN(Expr is1, Op("equal", {len_f, one}));
      KILN_ASSIGN_OR_RETURN(Expr safe, Op("where", {is1, one, len_m1}));
      KILN_ASSIGN_OR_RETURN(Expr num, Op("multiply", {x, n1c}));
      KILN_ASSIGN_OR_RETURN(Expr q, Op("divide", {num, safe}));
      KILN_ASSIGN_OR_RETURN(xo, Op("where", {is1, zero, q}));
    } else if (m_.ctm == "asymmetric") {
      KILN_ASSIGN_OR_RETURN(xo, Op("divide", {x, scale}));
    } else if (m_.ctm == "tf_half_pixel_for_nn") {
      xo = xh_s;
    } else if (m_.ctm == "tf_crop_and_resize") {
      KILN_ASSIGN_OR_RETURN(Expr span, Op("subtract", {roi_end, roi_start}));
      KILN_ASSIGN_OR_RETURN(Expr span_n, Op("multiply", {span, n1c}));
      KILN_ASSIGN_OR_RETURN(Expr safe, Op("where", {len_gt1, len_m1, one}));
      KILN_ASSIGN_OR_RETURN(Expr step, Op("divide", {span_n, safe}));
      KILN_ASSIGN_OR_RETURN(Expr start, Op("multiply", {roi_start, n1c}));
      KILN_ASSIGN_OR_RETURN(Expr xs, Op("multiply", {x, step}));
      KILN_ASSIGN_OR_RETURN(Expr a, Op("add", {start, xs}));
      KILN_ASSIGN_OR_RETURN(Expr mid, Op("add", {roi_start, roi_end}));
      KILN_ASSIGN_OR_RETURN(Expr mid_h, Op("multiply", {mid, half}));
      KILN_ASSIGN_OR_RETURN(Expr b, Op("multiply", {mid_h, n1c}));
      KILN_ASSIGN_OR_RETURN(xo, Op("where", {len_gt1, a, b}));
    } else {
      return c_.Unsupported(absl::StrCat("coordinate_transformation_mode \"", m_.ctm, "\""));
    }
    // The pixel left of an integral coordinate, with ratio 1 (as PlanAxis).
    KILN_ASSIGN_OR_RETURN(Expr fl, Op("floor", {xo}));
    KILN_ASSIGN_OR_RETURN(Expr integral, Op("equal", {xo, fl}));
    KILN_ASSIGN_OR_RETURN(Expr fl_m1, Op("subtract", {fl, one}));
    KILN_ASSIGN_OR_RETURN(Expr left, Op("where", {integral, fl_m1, fl}));
    KILN_ASSIGN_OR_RETURN(Expr frac, Op("subtract", {xo, fl}));
    KILN_ASSIGN_OR_RETURN(Expr ratio, Op("where", {integral, one, frac}));
    std::vector<Expr> src, w;
    auto offset = [&](double d) -> absl::StatusOr<Expr> {
      KILN_ASSIGN_OR_RETURN(Expr k, F(d));
      return Op("add", {left, k});
    };
    if (m_.mode == "nearest") {
      Expr right;
      if (m_.nearest_mode == "round_prefer_floor") {
        KILN_ASSIGN_OR_RETURN(right, Op("greater", {ratio, half}));
      } else if (m_.nearest_mode == "round_prefer_ceil") {
        KILN_ASSIGN_OR_RETURN(right, Op("greater_equal", {ratio, half}));
      } else if (m_.nearest_mode == "floor") {
        KILN_ASSIGN_OR_RETURN(right, Op("logical_and", {integral, integral}));  // only at integral points
      } else if (m_.nearest_mode == "ceil") {
        KILN_ASSIGN_OR_RETURN(right, Op("equal", {ratio, ratio}));  // always
      } else {
        return c_.Invalid(absl::StrCat("nearest_mode \"", m_.nearest_mode, "\" is unknown"));
      }
      KILN_ASSIGN_OR_RETURN(Expr l1, offset(1));
      KILN_ASSIGN_OR_RETURN(Expr s, Op("where", {right, l1, left}));
      src = {s};
      w = {one};
    } else if (m_.mode == "linear") {
      KILN_ASSIGN_OR_RETURN(Expr l1, offset(1));
      KILN_ASSIGN_OR_RETURN(Expr w0, Op("subtract", {one, ratio}));
      src = {left, l1};
      w = {w0, ratio};
    } else {
      for (double d : {-1.0, 0.0, 1.0, 2.0}) {
        KILN_ASSIGN_OR_RETURN(Expr s, offset(d));
        src.push_back(s);
      }
      // CubicCoeffs with t = r + 1, r, 1 - r, 2 - r.
      const double a = m_.cubic_a;
      auto poly = [&](const Expr& t, bool far) -> absl::StatusOr<Expr> {
        // far: ((a t - 5a) t + 8a) t - 4a;  near: ((a + 2) t - (a + 3)) t t + 1
        std::vector<double> k = far ? std::vector<double>{a, -5 * a, 8 * a, -4 * a}
                                    : std::vector<double>{a + 2, -(a + 3), 0, 1};
        KILN_ASSIGN_OR_RETURN(Expr acc, F(k[0]));
        for (size_t i = 1; i < k.size(); ++i) {
          KILN_ASSIGN_OR_RETURN(acc, Op("multiply", {acc, t}));
          KILN_ASSIGN_OR_RETURN(Expr ki, F(k[i]));
          KILN_ASSIGN_OR_RETURN(acc, Op("add", {acc, ki}));
        }
        return acc;
      };
      KILN_ASSIGN_OR_RETURN(Expr t0, Op("add", {ratio, one}));
      KILN_ASSIGN_OR_RETURN(Expr t2, Op("subtract", {one, ratio}));
      KILN_ASSIGN_OR_RETURN(Expr two, F(2));
      KILN_ASSIGN_OR_RETURN(Expr t3, Op("subtract", {two, ratio}));
      KILN_ASSIGN_OR_RETURN(Expr w0, poly(t0, true));
      KILN_ASSIGN_OR_RETURN(Expr w1, poly(ratio, false));
      KILN_ASSIGN_OR_RETURN(Expr w2, poly(t2, false));
      KILN_ASSIGN_OR_RETURN(Expr w3, poly(t3, true));
      w = {w0, w1, w2, w3};
    }
    KILN_ASSIGN_OR_RETURN(Expr hi, F(n1));
    if (m_.exclude_outside) {
      Expr sum;
      for (size_t t = 0; t < src.size(); ++t) {
        KILN_ASSIGN_OR_RETURN(Expr lo_out, Op("less", {src[t], zero}));
        KILN_ASSIGN_OR_RETURN(Expr hi_out, Op("greater", {src[t], hi}));
        KILN_ASSIGN_OR_RETURN(Expr out, Op("logical_or", {lo_out, hi_out}));
        KILN_ASSIGN_OR_RETURN(w[t], Op("where", {out, zero, w[t]}));
        if (sum) {
          KILN_ASSIGN_OR_RETURN(sum, Op("add", {sum, w[t]}));
        } else {
          sum = w[t];
        }
      }
      KILN_ASSIGN_OR_RETURN(Expr nz, Op("not_equal", {sum, zero}));
      KILN_ASSIGN_OR_RETURN(Expr safe, Op("where", {nz, sum, one}));
      for (Expr& wt : w) {
        KILN_ASSIGN_OR_RETURN(wt, Op("divide", {wt, safe}));
      }
    }
    Expr extrap;
    if (m_.ctm == "tf_crop_and_resize") {
      KILN_ASSIGN_OR_RETURN(Expr lo_out, Op("less", {xo, zero}));
      KILN_ASSIGN_OR_RETURN(Expr hi_out, Op("greater", {xo, hi}));
      KILN_ASSIGN_OR_RETURN(extrap, Op("logical_or", {lo_out, hi_out}));
    }
    // Gathers of the clamped (edge-padded) indices, weighted and summed.
    Expr acc;
    for (size_t t = 0; t < src.size(); ++t) {
      KILN_ASSIGN_OR_RETURN(Expr lo, Op("maximum", {src[t], zero}));
      KILN_ASSIGN_OR_RETURN(Expr cl, Op("minimum", {lo, hi}));
      KILN_ASSIGN_OR_RETURN(Expr idx, Cast(c_, cl, DataType::Int(64)));
      KILN_ASSIGN_OR_RETURN(Expr g, Take(c_, y, idx, axis));
      if (src.size() > 1) {
        KILN_ASSIGN_OR_RETURN(Expr wt, Cast(c_, w[t], dtype));
        if (rank - axis - 1 > 0) {
          KILN_ASSIGN_OR_RETURN(wt, ExpandDims(c_, wt, 1, rank - axis - 1));
        }
        KILN_ASSIGN_OR_RETURN(g, Op("multiply", {g, wt}));
      }
      if (acc) {
        KILN_ASSIGN_OR_RETURN(acc, Op("add", {acc, g}));
      } else {
        acc = g;
      }
    }
    if (extrap) {
      if (rank - axis - 1 > 0) {
        KILN_ASSIGN_OR_RETURN(extrap, ExpandDims(c_, extrap, 1, rank - axis - 1));
      }
      KILN_ASSIGN_OR_RETURN(Expr ev, c_.ScalarConst(dtype, extrapolation));
      KILN_ASSIGN_OR_RETURN(acc, Op("where", {extrap, ev, acc}));
    }
    return acc;
  }

 private:
  ConvertContext& c_;
  const ResizeMode& m_;
};

// Resize-10/11/13 and Upsample-7/9: separable, one axis at a time, as gathers
// of constant indices weighted by constant coefficients; with scales, sizes
// or roi given at run time, as RunTimeResize.
Outs ConvertResize(ConvertContext& c, bool upsample) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  const int64_t r = t->ndim();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, t, "the input"));
  ResizeMode m;
  KILN_ASSIGN_OR_RETURN(m.mode, c.AttrString("mode", "nearest"));
  if (m.mode == "bilinear") m.mode = "linear";  // Upsample-7's spelling
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    return c.Invalid(absl::StrCat("mode \"", m.mode, "\" is not nearest, linear or cubic"));
  double extrapolation = 0;
  const bool v10 = upsample || c.opset() < 11;
  if (v10) {
    m.ctm = "asymmetric";
    m.nearest_mode = "floor";
  } else {
    KILN_ASSIGN_OR_RETURN(m.ctm, c.AttrString("coordinate_transformation_mode", "half_pixel"));
    KILN_ASSIGN_OR_RETURN(m.nearest_mode, c.AttrString("nearest_mode", "round_prefer_floor"));
    KILN_ASSIGN_OR_RETURN(m.cubic_a, c.AttrFloat("cubic_coeff_a", -0.75));
    KILN_ASSIGN_OR_RETURN(int64_t ex, c.AttrInt("exclude_outside", 0));
    m.exclude_outside = ex != 0;
    KILN_ASSIGN_OR_RETURN(extrapolation, c.AttrFloat("extrapolation_value", 0.0));
    KILN_ASSIGN_OR_RETURN(int64_t antialias, c.AttrInt("antialias", 0));
    if (antialias != 0) return c.Unsupported("antialias=1");
    if (c.HasAttr("axes") || c.HasAttr("keep_aspect_ratio_policy"))
      return c.Unsupported("the opset-18 attributes axes / keep_aspect_ratio_policy");
  }
  if (m.mode != "nearest" && !t->dtype.is_float())
    return c.Unsupported(absl::StrCat(m.mode, " resizing of ", t->dtype.ToString(), " data"));
  // Scales (floats) or sizes (ints); roi for tf_crop_and_resize.
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  std::vector<double> roi;
  bool run_time = false;
  auto read_doubles = [&](int i, std::vector<double>* out) -> absl::Status {
    absl::StatusOr<Ref<const HostTensor>> v = c.ConstantInput(i);
    if (!v.ok() && NeedsValue(v.status())) {
      run_time = true;
      return absl::OkStatus();
    }
    if (!v.ok()) return v.status();
    for (int64_t k = 0; k < (*v)->num_elements(); ++k) out->push_back((*v)->GetAsDouble(k));
    return absl::OkStatus();
  };
  // Which of inputs 1 (roi, or Resize-10's scales), 2 (scales), 3 (sizes)
  // are present and non-empty, for the run-time form.
  auto present = [&](int i) -> absl::StatusOr<bool> {
    if (!c.HasInput(i)) return false;
    KILN_ASSIGN_OR_RETURN(TensorType it, c.InputType(i));
    if (it->ndim() != 1 || !it->shape[0].is_static())
      return c.Invalid(absl::StrCat("input ", i, " must be a 1-D tensor of static length"));
    return it->shape[0].value() > 0;
  };
  if (upsample && c.opset() < 9) {
    KILN_ASSIGN_OR_RETURN(scales, c.AttrFloats("scales"));
  } else if (v10) {
    KILN_RETURN_IF_ERROR(read_doubles(1, &scales));
  } else {
    if (c.HasInput(1) && m.ctm == "tf_crop_and_resize") KILN_RETURN_IF_ERROR(read_doubles(1, &roi));
    if (c.HasInput(2)) KILN_RETURN_IF_ERROR(read_doubles(2, &scales));
    if (c.HasInput(3)) {
      absl::StatusOr<std::optional<std::vector<int64_t>>> sz = c.ConstantInts(3);
      if (!sz.ok() && NeedsValue(sz.status())) {
        run_time = true;
      } else {
        KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> szv, std::move(sz));
        sizes = szv.value_or(std::vector<int64_t>{});
      }
    }
    if (!sizes.empty() && !scales.empty())
      return c.Invalid("give either scales or sizes, not both");
  }
  if (run_time) {
    // Every shape-like input as an expression (constants too).
    const int scales_input = v10 ? 1 : 2;
    KILN_ASSIGN_OR_RETURN(bool has_scales, present(scales_input));
    bool has_sizes = false;
    if (!v10) {
      KILN_ASSIGN_OR_RETURN(has_sizes, present(3));
    }
    if (has_scales == has_sizes) return c.Invalid("give exactly one of scales and sizes");
    Expr scales_e, sizes_e, roi_e;
    if (has_scales) {
      KILN_ASSIGN_OR_RETURN(scales_e, c.Input(scales_input));
      KILN_ASSIGN_OR_RETURN(TensorType st, c.InputType(scales_input));
      if (st->shape[0].value() != r)
        return c.Invalid(absl::StrCat("scales need one entry per input axis (", r, ")"));
    } else {
      KILN_ASSIGN_OR_RETURN(sizes_e, c.Input(3));
      KILN_ASSIGN_OR_RETURN(TensorType st, c.InputType(3));
      if (st->shape[0].value() != r)
        return c.Invalid(absl::StrCat("sizes need one entry per input axis (", r, ")"));
    }
    if (m.ctm == "tf_crop_and_resize") {
      KILN_ASSIGN_OR_RETURN(bool has_roi, present(1));
      if (!has_roi) return c.Invalid(absl::StrCat("tf_crop_and_resize needs roi with ", 2 * r, " entries"));
      KILN_ASSIGN_OR_RETURN(roi_e, c.Input(1));
      KILN_ASSIGN_OR_RETURN(TensorType rt, c.InputType(1));
      if (rt->shape[0].value() != 2 * r)
        return c.Invalid(absl::StrCat("tf_crop_and_resize needs roi with ", 2 * r, " entries"));
    }
    RunTimeResize rt(c, m);
    Expr y = x;
    for (int64_t a = 0; a < r; ++a) {
      const size_t ua = static_cast<size_t>(a);
      KILN_ASSIGN_OR_RETURN(Expr in_len, rt.F(static_cast<double>(dims[ua])));
      Expr scale, out_len;
      if (has_scales) {
        KILN_ASSIGN_OR_RETURN(scale, rt.EntryF64(scales_e, a));
        KILN_ASSIGN_OR_RETURN(Expr len, rt.Op("multiply", {in_len, scale}));
        KILN_ASSIGN_OR_RETURN(out_len, rt.Op("floor", {len}));
      } else {
        KILN_ASSIGN_OR_RETURN(out_len, rt.EntryF64(sizes_e, a));
        KILN_ASSIGN_OR_RETURN(Expr one, rt.F(1));
        KILN_ASSIGN_OR_RETURN(Expr safe, rt.F(dims[ua] == 0 ? 1.0 : static_cast<double>(dims[ua])));
        KILN_ASSIGN_OR_RETURN(scale, rt.Op("divide", {out_len, safe}));
        if (dims[ua] == 0) scale = one;
      }
      Expr rs, re;
      if (roi_e) {
        KILN_ASSIGN_OR_RETURN(rs, rt.EntryF64(roi_e, a));
        KILN_ASSIGN_OR_RETURN(re, rt.EntryF64(roi_e, a + r));
      }
      KILN_ASSIGN_OR_RETURN(y, rt.Axis(y, a, r, dims[ua], out_len, scale, rs, re, t->dtype,
                                       extrapolation));
    }
    return std::vector<Expr>{y};
  }
  if (sizes.empty() && scales.empty()) return c.Invalid("one of scales and sizes is required");
  if ((!sizes.empty() && static_cast<int64_t>(sizes.size()) != r) ||
      (!scales.empty() && static_cast<int64_t>(scales.size()) != r))
    return c.Invalid(absl::StrCat("scales/sizes need one entry per input axis (", r, ")"));
  if (m.ctm == "tf_crop_and_resize" && static_cast<int64_t>(roi.size()) != 2 * r)
    return c.Invalid(absl::StrCat("tf_crop_and_resize needs roi with ", 2 * r, " entries"));
  Expr y = x;
  std::vector<int64_t> shape = dims;  // y's shape
  for (int64_t a = 0; a < r; ++a) {
    const size_t ua = static_cast<size_t>(a);
    double scale = 0;
    int64_t out_len = 0;
    if (!sizes.empty()) {
      out_len = sizes[ua];
      scale = dims[ua] == 0 ? 1.0 : static_cast<double>(out_len) / static_cast<double>(dims[ua]);
    } else {
      scale = scales[ua];
      if (!(scale > 0)) return c.Invalid(absl::StrCat("scale ", scale, " must be > 0"));
      const double len = std::floor(static_cast<double>(dims[ua]) * scale);
      if (!(len <= static_cast<double>(kMaxConstantElements)))
        return c.Unsupported(absl::StrCat("scale ", scale, " gives an output axis of ", len, " elements"));
      out_len = static_cast<int64_t>(len);
    }
    if (out_len < 0) return c.Invalid("output sizes must be >= 0");
    KILN_RETURN_IF_ERROR(CheckConstantSize(c, {out_len, 4}, "a resize plan"));
    const double rs = roi.empty() ? 0 : roi[ua], re = roi.empty() ? 1 : roi[ua + static_cast<size_t>(r)];
    KILN_ASSIGN_OR_RETURN(AxisPlan p, PlanAxis(c, m, dims[ua], out_len, scale, rs, re));
    if (p.identity) continue;
    // Where a tap's offset changes with the phase (linear, cubic) its value
    // is a where of two slices, and a kernel computes both: taken only on
    // the last axis (the one kernels vectorize) and only where every vector
    // of up to 16 lanes lies inside one period, so that each phase reads one
    // input element (a broadcast) and one weight vector. A smaller factor
    // would read 2-8 input elements per vector through per-lane addresses,
    // twice as many as the gathers (measured on AVX2: a 2x bilinear
    // upsample 1.8x slower). Without wheres (nearest) every axis gains.
    std::optional<PeriodicPlan> q = Periodic(p, shape[ua]);
    if (q && !q->uniform && (a != r - 1 || q->period % 16 != 0)) q.reset();
    if (q) {
      KILN_ASSIGN_OR_RETURN(y, ApplyPeriodicPlan(c, y, a, shape, *q, t->dtype));
    } else {
      KILN_ASSIGN_OR_RETURN(y, ApplyAxisPlan(c, y, a, r, p, t->dtype, extrapolation));
    }
    shape[ua] = out_len;
  }
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterResizeConverters(ConverterRegistry& r) {
  for (int v : {10, 11, 13})
    r.Add("Resize", v, [](ConvertContext& c) { return ConvertResize(c, false); });
  for (int v : {7, 9}) r.Add("Upsample", v, [](ConvertContext& c) { return ConvertResize(c, true); });
}

}  // namespace kiln::onnx_frontend::cvt
