// ONNX GridSample (opsets 16, 20: 2-D), RoiAlign (10, 16) and MaxUnpool (9,
// 11) -> graph IR (part of the tensor family; registered by
// RegisterTensorConverters).
//
// Both samplers are composed of elementwise arithmetic on the sampling
// coordinates and gathers (take) of the flattened input at computed flat
// indices ((n * C + c) * H * W + y * W + x), weighted by computed
// coefficients, following ONNX's reference implementations
// (onnx/reference/ops/op_grid_sample.py, op_roi_align.py):
//
//  * GridSample: denormalize (align_corners), round half to even for
//    nearest, clamp (border) or reflect (reflection) coordinates outside the
//    borders, then 1 / 2 / 4 taps per axis (nearest / bilinear / bicubic,
//    Keys a = -0.75) whose indices are padded per axis: zeros masks the
//    weight, border clamps, reflection reflects (then truncates).
//  * RoiAlign: a grid of sampling points per bin, bilinear with the
//    reference's clamping at the feature map's edges, averaged (or the max of
//    the weighted corner values, as the reference does). The adaptive grid
//    (sampling_ratio 0) depends on the rois' values, which must then be known
//    at import time; every roi is sampled on the largest grid, the points
//    past its own masked out.
//  * MaxUnpool: Y.flat[I] = X, as a comparison of every index against every
//    output position (no scatter in the graph IR), bounded in size.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

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

constexpr DataType kI64 = DataType::Int(64);

// Elementwise builders on expressions of one float dtype.
struct Arith {
  ConvertContext& c;
  DataType dt;

  absl::StatusOr<Expr> S(double v) { return c.ScalarConst(dt, v); }
  absl::StatusOr<Expr> Op(absl::string_view op, Expr a, Expr b) {
    return c.Call(op, {std::move(a), std::move(b)});
  }
  absl::StatusOr<Expr> OpS(absl::string_view op, Expr a, double v) {
    KILN_ASSIGN_OR_RETURN(Expr s, S(v));
    return c.Call(op, {std::move(a), std::move(s)});
  }
  // v op a (scalar on the left).
  absl::StatusOr<Expr> SOp(absl::string_view op, double v, Expr a) {
    KILN_ASSIGN_OR_RETURN(Expr s, S(v));
    return c.Call(op, {std::move(s), std::move(a)});
  }
  absl::StatusOr<Expr> Clip(Expr a, double lo, double hi) {
    auto ca = NewAttrs<ClipAttrs>();
    ca->a_min = lo;
    ca->a_max = hi;
    return c.Call("clip", {std::move(a)}, ca);
  }
  absl::StatusOr<Expr> Unary(absl::string_view op, Expr a) { return c.Call(op, {std::move(a)}); }
  absl::StatusOr<Expr> Where(Expr cond, Expr a, Expr b) {
    return c.Call("where", {std::move(cond), std::move(a), std::move(b)});
  }
  // The mask as 0/1 of dt.
  absl::StatusOr<Expr> MaskF(Expr m) { return Cast(c, std::move(m), dt); }

  // ONNX's _gs_reflect: reflects v by the nearer border until it lies in
  // [lo, hi] (float borders).
  absl::StatusOr<Expr> Reflect(Expr v, double lo, double hi) {
    // The reference's loop is a reflection with period 2 * rng; as
    // lo + rng - |floor_mod(v - lo, 2 rng) - rng| it reads v once (the
    // expression stays a chain, not a tree that doubles at every use).
    const double rng = hi - lo;
    if (!(rng > 0)) return Clip(v, lo, hi);
    KILN_ASSIGN_OR_RETURN(Expr u, OpS("subtract", v, lo));
    KILN_ASSIGN_OR_RETURN(u, OpS("floor_mod", u, 2 * rng));
    KILN_ASSIGN_OR_RETURN(u, OpS("subtract", u, rng));
    KILN_ASSIGN_OR_RETURN(u, Unary("abs", u));
    return SOp("subtract", lo + rng, u);
  }
};

// ---- GridSample

struct Tap {
  Expr idx;  // int64, in [0, d)
  Expr w;    // dt (null: weight 1)
};

// The input index of integral (float) coordinate i on an axis of length d,
// with the padding; the weight mask for zeros padding.
absl::StatusOr<Tap> PadIndex(Arith& a, Expr i, int64_t d, const std::string& padding, double lo,
                             double hi) {
  const double top = static_cast<double>(d - 1);
  Tap t;
  if (padding == "zeros") {
    KILN_ASSIGN_OR_RETURN(Expr ge, a.OpS("greater_equal", i, 0.0));
    KILN_ASSIGN_OR_RETURN(Expr le, a.OpS("less_equal", i, top));
    KILN_ASSIGN_OR_RETURN(Expr in, a.Op("logical_and", ge, le));
    KILN_ASSIGN_OR_RETURN(t.w, a.MaskF(in));
    KILN_ASSIGN_OR_RETURN(i, a.Clip(i, 0, top));
  } else if (padding == "border") {
    KILN_ASSIGN_OR_RETURN(i, a.Clip(i, 0, top));
  } else {
    KILN_ASSIGN_OR_RETURN(i, a.Reflect(i, lo, hi));
    KILN_ASSIGN_OR_RETURN(i, Cast(a.c, i, kI64));  // int(): truncation
    KILN_ASSIGN_OR_RETURN(i, Cast(a.c, i, a.dt));
    KILN_ASSIGN_OR_RETURN(i, a.Clip(i, 0, top));
  }
  KILN_ASSIGN_OR_RETURN(t.idx, Cast(a.c, i, kI64));
  return t;
}

absl::StatusOr<Expr> MulW(Arith& a, const Expr& w1, const Expr& w2) {
  if (!w1) return w2;
  if (!w2) return w1;
  return a.Op("multiply", w1, w2);
}

// The taps of one axis: v the normalized coordinates, d the axis length.
absl::StatusOr<std::vector<Tap>> AxisTaps(Arith& a, Expr v, int64_t d, const std::string& mode,
                                          const std::string& padding, bool align) {
  const double fd = static_cast<double>(d);
  const double lo = align ? 0.0 : -0.5, hi = align ? fd - 1 : fd - 0.5;
  // Denormalize.
  KILN_ASSIGN_OR_RETURN(Expr x, a.OpS("add", v, 1.0));
  if (align) {
    KILN_ASSIGN_OR_RETURN(x, a.OpS("divide", x, 2.0));
    KILN_ASSIGN_OR_RETURN(x, a.OpS("multiply", x, fd - 1));
  } else {
    KILN_ASSIGN_OR_RETURN(x, a.OpS("multiply", x, fd));
    KILN_ASSIGN_OR_RETURN(x, a.OpS("subtract", x, 1.0));
    KILN_ASSIGN_OR_RETURN(x, a.OpS("divide", x, 2.0));
  }
  if (mode == "nearest") {
    KILN_ASSIGN_OR_RETURN(x, a.Unary("round", x));  // half to even
  }
  // Coordinates outside the borders.
  if (padding == "border") {
    KILN_ASSIGN_OR_RETURN(Expr lt, a.OpS("less", x, lo));
    KILN_ASSIGN_OR_RETURN(Expr gt, a.OpS("greater", x, hi));
    KILN_ASSIGN_OR_RETURN(Expr out, a.Op("logical_or", lt, gt));
    KILN_ASSIGN_OR_RETURN(Expr cl, a.Clip(x, 0, fd - 1));
    KILN_ASSIGN_OR_RETURN(x, a.Where(out, cl, x));
  } else if (padding == "reflection") {
    KILN_ASSIGN_OR_RETURN(x, a.Reflect(x, lo, hi));
  }
  std::vector<Tap> taps;
  if (mode == "nearest") {
    KILN_ASSIGN_OR_RETURN(Expr xi, Cast(a.c, x, DataType::Int(32)));  // astype(int32)
    KILN_ASSIGN_OR_RETURN(xi, Cast(a.c, xi, a.dt));
    KILN_ASSIGN_OR_RETURN(Tap t, PadIndex(a, xi, d, padding, lo, hi));
    taps.push_back(t);
    return taps;
  }
  KILN_ASSIGN_OR_RETURN(Expr x0, a.Unary("floor", x));
  KILN_ASSIGN_OR_RETURN(Expr r, a.Op("subtract", x, x0));
  std::vector<Expr> coeffs;
  std::vector<double> offs;
  if (mode == "bilinear") {
    KILN_ASSIGN_OR_RETURN(Expr c0, a.SOp("subtract", 1.0, r));
    coeffs = {c0, r};
    offs = {0, 1};
  } else {
    const double al = -0.75;
    // far(t) = ((al * t - 5 al) t + 8 al) t - 4 al; near(t) = ((al + 2) t - (al + 3)) t t + 1
    auto far = [&](Expr t) -> absl::StatusOr<Expr> {
      KILN_ASSIGN_OR_RETURN(Expr e, a.OpS("multiply", t, al));
      KILN_ASSIGN_OR_RETURN(e, a.OpS("subtract", e, 5 * al));
      KILN_ASSIGN_OR_RETURN(e, a.Op("multiply", e, t));
      KILN_ASSIGN_OR_RETURN(e, a.OpS("add", e, 8 * al));
      KILN_ASSIGN_OR_RETURN(e, a.Op("multiply", e, t));
      return a.OpS("subtract", e, 4 * al);
    };
    auto near = [&](Expr t) -> absl::StatusOr<Expr> {
      KILN_ASSIGN_OR_RETURN(Expr e, a.OpS("multiply", t, al + 2));
      KILN_ASSIGN_OR_RETURN(e, a.OpS("subtract", e, al + 3));
      KILN_ASSIGN_OR_RETURN(e, a.Op("multiply", e, t));
      KILN_ASSIGN_OR_RETURN(e, a.Op("multiply", e, t));
      return a.OpS("add", e, 1.0);
    };
    KILN_ASSIGN_OR_RETURN(Expr r1, a.OpS("add", r, 1.0));
    KILN_ASSIGN_OR_RETURN(Expr m1, a.SOp("subtract", 1.0, r));
    KILN_ASSIGN_OR_RETURN(Expr m2, a.SOp("subtract", 2.0, r));
    coeffs.resize(4);
    KILN_ASSIGN_OR_RETURN(coeffs[0], far(r1));
    KILN_ASSIGN_OR_RETURN(coeffs[1], near(r));
    KILN_ASSIGN_OR_RETURN(coeffs[2], near(m1));
    KILN_ASSIGN_OR_RETURN(coeffs[3], far(m2));
    offs = {-1, 0, 1, 2};
  }
  for (size_t k = 0; k < offs.size(); ++k) {
    Expr i = x0;
    if (offs[k] != 0) {
      KILN_ASSIGN_OR_RETURN(i, a.OpS("add", x0, offs[k]));
    }
    KILN_ASSIGN_OR_RETURN(Tap t, PadIndex(a, i, d, padding, lo, hi));
    KILN_ASSIGN_OR_RETURN(t.w, MulW(a, t.w, coeffs[k]));
    taps.push_back(t);
  }
  return taps;
}

Outs ConvertGridSample(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(Expr grid, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType gt, c.InputType(1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> xd, StaticDims(c, xt, "the input"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> gd, StaticDims(c, gt, "the grid"));
  if (xd.size() != 4) return c.Unsupported(absl::StrCat("a rank-", xd.size(), " input (only 2-D sampling)"));
  if (gd.size() != 4 || gd[3] != 2 || gd[0] != xd[0])
    return c.Invalid("the grid must have shape [N, H_out, W_out, 2]");
  if (!xt->dtype.is_float() || !gt->dtype.is_float())
    return c.Unsupported("GridSample of non-float data");
  KILN_ASSIGN_OR_RETURN(std::string mode, c.AttrString("mode", c.opset() >= 20 ? "linear" : "bilinear"));
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  KILN_ASSIGN_OR_RETURN(std::string padding, c.AttrString("padding_mode", "zeros"));
  KILN_ASSIGN_OR_RETURN(int64_t align_corners, c.AttrInt("align_corners", 0));
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return c.Invalid(absl::StrCat("mode \"", mode, "\" is unknown"));
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return c.Invalid(absl::StrCat("padding_mode \"", padding, "\" is unknown"));
  const int64_t n = xd[0], ch = xd[1], h = xd[2], w = xd[3], ho = gd[1], wo = gd[2];
  const DataType dt = xt->dtype;
  Arith a{c, dt};
  KILN_ASSIGN_OR_RETURN(Expr g, Cast(c, grid, dt));
  KILN_ASSIGN_OR_RETURN(Expr gx, SliceAxis(c, g, 3, 0, 1));
  KILN_ASSIGN_OR_RETURN(gx, Reshape(c, gx, {n, 1, ho, wo}));
  KILN_ASSIGN_OR_RETURN(Expr gy, SliceAxis(c, g, 3, 1, 2));
  KILN_ASSIGN_OR_RETURN(gy, Reshape(c, gy, {n, 1, ho, wo}));
  const bool align = align_corners != 0;
  KILN_ASSIGN_OR_RETURN(std::vector<Tap> tx, AxisTaps(a, gx, w, mode, padding, align));
  KILN_ASSIGN_OR_RETURN(std::vector<Tap> ty, AxisTaps(a, gy, h, mode, padding, align));
  // (n * C + c) * H * W: [N, C, 1, 1].
  std::vector<int64_t> base;
  for (int64_t i = 0; i < n * ch; ++i) base.push_back(i * h * w);
  KILN_ASSIGN_OR_RETURN(Expr base_c, ConstI64(c, {n, ch, 1, 1}, base));
  KILN_ASSIGN_OR_RETURN(Expr flat_x, Reshape(c, x, {-1}));
  KILN_ASSIGN_OR_RETURN(Expr wc, c.ScalarConst(kI64, static_cast<double>(w)));
  Expr acc;
  for (const Tap& yt : ty) {
    KILN_ASSIGN_OR_RETURN(Expr row, c.Call("multiply", {yt.idx, wc}));
    KILN_ASSIGN_OR_RETURN(row, c.Call("add", {base_c, row}));
    for (const Tap& xtp : tx) {
      KILN_ASSIGN_OR_RETURN(Expr idx, c.Call("add", {row, xtp.idx}));
      KILN_ASSIGN_OR_RETURN(Expr v, Take(c, flat_x, idx, 0));
      KILN_ASSIGN_OR_RETURN(Expr wt, MulW(a, yt.w, xtp.w));
      if (wt) {
        KILN_ASSIGN_OR_RETURN(v, c.Call("multiply", {v, wt}));
      }
      if (acc) {
        KILN_ASSIGN_OR_RETURN(acc, c.Call("add", {acc, v}));
      } else {
        acc = v;
      }
    }
  }
  return std::vector<Expr>{acc};
}

// ---- RoiAlign

// One axis of the sampling points: indices (low, high) and weights (low,
// high, validity and grid mask folded in) of shape [R, P, G], plus the grid
// mask (i < grid[r]) as bool.
struct RoiAxis {
  Expr lo_idx, hi_idx, lo_w, hi_w, mask;
};

// start, end: [R, 1, 1] (already scaled and offset); grid: per-roi grid sizes.
absl::StatusOr<RoiAxis> RoiAxisPoints(Arith& a, Expr start, Expr end, bool half_pixel, int64_t r,
                                      int64_t p, int64_t gmax, const std::vector<int64_t>& grid,
                                      int64_t d) {
  ConvertContext& c = a.c;
  KILN_ASSIGN_OR_RETURN(Expr size, a.Op("subtract", end, start));
  if (!half_pixel) {
    KILN_ASSIGN_OR_RETURN(size, a.OpS("maximum", size, 1.0));
  }
  KILN_ASSIGN_OR_RETURN(Expr bin, a.OpS("divide", size, static_cast<double>(p)));
  std::vector<double> pv, iv, gv;
  for (int64_t i = 0; i < p; ++i) pv.push_back(static_cast<double>(i));
  for (int64_t i = 0; i < gmax; ++i) iv.push_back(static_cast<double>(i) + 0.5);
  for (int64_t g : grid) gv.push_back(static_cast<double>(std::max<int64_t>(g, 1)));
  KILN_ASSIGN_OR_RETURN(Expr pc, ConstOf(c, a.dt, {1, p, 1}, pv));
  KILN_ASSIGN_OR_RETURN(Expr ic, ConstOf(c, a.dt, {1, 1, gmax}, iv));
  KILN_ASSIGN_OR_RETURN(Expr gc, ConstOf(c, a.dt, {r, 1, 1}, gv));
  // start + p * bin + (i + 0.5) * bin / grid
  KILN_ASSIGN_OR_RETURN(Expr pb, a.Op("multiply", pc, bin));
  KILN_ASSIGN_OR_RETURN(Expr y, a.Op("add", start, pb));
  KILN_ASSIGN_OR_RETURN(Expr ib, a.Op("multiply", ic, bin));
  KILN_ASSIGN_OR_RETURN(ib, a.Op("divide", ib, gc));
  KILN_ASSIGN_OR_RETURN(y, a.Op("add", y, ib));  // [R, P, G]
  const double fd = static_cast<double>(d);
  KILN_ASSIGN_OR_RETURN(Expr ge, a.OpS("greater_equal", y, -1.0));
  KILN_ASSIGN_OR_RETURN(Expr le, a.OpS("less_equal", y, fd));
  KILN_ASSIGN_OR_RETURN(Expr valid, a.Op("logical_and", ge, le));
  // The grid mask: i < grid[r].
  std::vector<double> gmask;
  for (int64_t ri = 0; ri < r; ++ri)
    for (int64_t i = 0; i < gmax; ++i) gmask.push_back(i < grid[static_cast<size_t>(ri)] ? 1 : 0);
  RoiAxis out;
  KILN_ASSIGN_OR_RETURN(Expr gm, ConstOf(c, DataType::Bool(), {r, 1, gmax}, gmask));
  KILN_ASSIGN_OR_RETURN(out.mask, BroadcastTo(c, gm, {r, p, gmax}));
  KILN_ASSIGN_OR_RETURN(y, a.OpS("maximum", y, 0.0));
  KILN_ASSIGN_OR_RETURN(Expr low, a.Unary("floor", y));
  KILN_ASSIGN_OR_RETURN(Expr at_end, a.OpS("greater_equal", low, fd - 1));
  KILN_ASSIGN_OR_RETURN(Expr last, a.S(fd - 1));
  KILN_ASSIGN_OR_RETURN(Expr low1, a.OpS("add", low, 1.0));
  KILN_ASSIGN_OR_RETURN(Expr high, a.Where(at_end, last, low1));
  KILN_ASSIGN_OR_RETURN(low, a.Where(at_end, last, low));
  KILN_ASSIGN_OR_RETURN(y, a.Where(at_end, low, y));
  KILN_ASSIGN_OR_RETURN(Expr ly, a.Op("subtract", y, low));
  KILN_ASSIGN_OR_RETURN(Expr hy, a.SOp("subtract", 1.0, ly));
  KILN_ASSIGN_OR_RETURN(Expr keep, c.Call("logical_and", {valid, out.mask}));
  KILN_ASSIGN_OR_RETURN(Expr keepf, a.MaskF(keep));
  KILN_ASSIGN_OR_RETURN(out.lo_w, a.Op("multiply", hy, keepf));
  KILN_ASSIGN_OR_RETURN(out.hi_w, a.Op("multiply", ly, keepf));
  KILN_ASSIGN_OR_RETURN(out.lo_idx, Cast(c, low, kI64));
  KILN_ASSIGN_OR_RETURN(out.hi_idx, Cast(c, high, kI64));
  return out;
}

Outs ConvertRoiAlign(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(Expr rois, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType rt, c.InputType(1));
  KILN_ASSIGN_OR_RETURN(Expr bidx, c.Input(2));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> xd, StaticDims(c, xt, "the input"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> rd, StaticDims(c, rt, "the rois"));
  if (xd.size() != 4) return c.Invalid("the input must have rank 4");
  if (rd.size() != 2 || rd[1] != 4) return c.Invalid("rois must have shape [num_rois, 4]");
  if (!xt->dtype.is_float()) return c.Unsupported("RoiAlign of non-float data");
  KILN_ASSIGN_OR_RETURN(int64_t ph, c.AttrInt("output_height", 1));
  KILN_ASSIGN_OR_RETURN(int64_t pw, c.AttrInt("output_width", 1));
  KILN_ASSIGN_OR_RETURN(int64_t sampling, c.AttrInt("sampling_ratio", 0));
  KILN_ASSIGN_OR_RETURN(double scale, c.AttrFloat("spatial_scale", 1.0));
  KILN_ASSIGN_OR_RETURN(std::string mode, c.AttrString("mode", "avg"));
  std::string ctm = "output_half_pixel";
  if (c.opset() >= 16) {
    KILN_ASSIGN_OR_RETURN(ctm, c.AttrString("coordinate_transformation_mode", "half_pixel"));
  }
  if (mode != "avg" && mode != "max") return c.Invalid(absl::StrCat("mode \"", mode, "\" is unknown"));
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    return c.Invalid(absl::StrCat("coordinate_transformation_mode \"", ctm, "\" is unknown"));
  if (ph < 1 || pw < 1) return c.Invalid("output_height and output_width must be >= 1");
  const bool half_pixel = ctm == "half_pixel";
  const double offset = half_pixel ? 0.5 : 0.0;
  const int64_t r = rd[0], ch = xd[1], h = xd[2], w = xd[3];
  if (r == 0) return c.Unsupported("zero rois");
  const DataType dt = xt->dtype;
  // The per-roi grid sizes.
  std::vector<int64_t> gh(static_cast<size_t>(r), sampling), gw(static_cast<size_t>(r), sampling);
  if (sampling <= 0) {
    KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> rv, c.ConstantInput(1));
    for (int64_t i = 0; i < r; ++i) {
      auto at = [&](int64_t k) {
        return rv->GetAsDouble(i * 4 + k) * scale - offset;
      };
      double rw = at(2) - at(0), rh = at(3) - at(1);
      if (!half_pixel) {
        rw = std::max(rw, 1.0);
        rh = std::max(rh, 1.0);
      }
      const double fh = std::ceil(rh / static_cast<double>(ph)), fw = std::ceil(rw / static_cast<double>(pw));
      if (!(fh < 1e6 && fw < 1e6)) return c.Unsupported("a roi sampling grid too large");
      gh[static_cast<size_t>(i)] = static_cast<int64_t>(std::max(fh, 0.0));
      gw[static_cast<size_t>(i)] = static_cast<int64_t>(std::max(fw, 0.0));
    }
  }
  const int64_t gmh = std::max<int64_t>(1, *std::max_element(gh.begin(), gh.end()));
  const int64_t gmw = std::max<int64_t>(1, *std::max_element(gw.begin(), gw.end()));
  KILN_RETURN_IF_ERROR(CheckConstantSize(c, {r, ch, ph, gmh, pw, gmw}, "the RoiAlign sampling points"));
  Arith a{c, dt};
  KILN_ASSIGN_OR_RETURN(Expr rf, Cast(c, rois, dt));
  auto coord = [&](int64_t k) -> absl::StatusOr<Expr> {
    KILN_ASSIGN_OR_RETURN(Expr v, SliceAxis(c, rf, 1, k, k + 1));
    KILN_ASSIGN_OR_RETURN(v, Reshape(c, v, {r, 1, 1}));
    KILN_ASSIGN_OR_RETURN(v, a.OpS("multiply", v, scale));
    if (offset != 0) {
      KILN_ASSIGN_OR_RETURN(v, a.OpS("subtract", v, offset));
    }
    return v;
  };
  KILN_ASSIGN_OR_RETURN(Expr x1, coord(0));
  KILN_ASSIGN_OR_RETURN(Expr y1, coord(1));
  KILN_ASSIGN_OR_RETURN(Expr x2, coord(2));
  KILN_ASSIGN_OR_RETURN(Expr y2, coord(3));
  KILN_ASSIGN_OR_RETURN(RoiAxis ay, RoiAxisPoints(a, y1, y2, half_pixel, r, ph, gmh, gh, h));
  KILN_ASSIGN_OR_RETURN(RoiAxis ax, RoiAxisPoints(a, x1, x2, half_pixel, r, pw, gmw, gw, w));
  // Layout [R, C, PH, GH, PW, GW]; y parts [R, 1, PH, GH, 1, 1], x parts [R, 1, 1, 1, PW, GW].
  const std::vector<int64_t> ys = {r, 1, ph, gmh, 1, 1}, xs = {r, 1, 1, 1, pw, gmw};
  for (Expr* e : {&ay.lo_idx, &ay.hi_idx, &ay.lo_w, &ay.hi_w, &ay.mask}) {
    KILN_ASSIGN_OR_RETURN(*e, Reshape(c, *e, ys));
  }
  for (Expr* e : {&ax.lo_idx, &ax.hi_idx, &ax.lo_w, &ax.hi_w, &ax.mask}) {
    KILN_ASSIGN_OR_RETURN(*e, Reshape(c, *e, xs));
  }
  // (batch_indices[r] * C + c) * H * W.
  KILN_ASSIGN_OR_RETURN(Expr b, Cast(c, bidx, kI64));
  KILN_ASSIGN_OR_RETURN(b, Reshape(c, b, {r, 1, 1, 1, 1, 1}));
  KILN_ASSIGN_OR_RETURN(Expr chw, c.ScalarConst(kI64, static_cast<double>(ch * h * w)));
  KILN_ASSIGN_OR_RETURN(b, c.Call("multiply", {b, chw}));
  std::vector<int64_t> coff;
  for (int64_t i = 0; i < ch; ++i) coff.push_back(i * h * w);
  KILN_ASSIGN_OR_RETURN(Expr cc, ConstI64(c, {1, ch, 1, 1, 1, 1}, coff));
  KILN_ASSIGN_OR_RETURN(b, c.Call("add", {b, cc}));
  KILN_ASSIGN_OR_RETURN(Expr wc, c.ScalarConst(kI64, static_cast<double>(w)));
  KILN_ASSIGN_OR_RETURN(Expr flat_x, Reshape(c, x, {-1}));
  Expr acc;
  for (int yi = 0; yi < 2; ++yi) {
    KILN_ASSIGN_OR_RETURN(Expr row, c.Call("multiply", {yi == 0 ? ay.lo_idx : ay.hi_idx, wc}));
    KILN_ASSIGN_OR_RETURN(row, c.Call("add", {b, row}));
    for (int xi = 0; xi < 2; ++xi) {
      KILN_ASSIGN_OR_RETURN(Expr idx, c.Call("add", {row, xi == 0 ? ax.lo_idx : ax.hi_idx}));
      KILN_ASSIGN_OR_RETURN(Expr v, Take(c, flat_x, idx, 0));
      KILN_ASSIGN_OR_RETURN(Expr wt, a.Op("multiply", yi == 0 ? ay.lo_w : ay.hi_w,
                                          xi == 0 ? ax.lo_w : ax.hi_w));
      KILN_ASSIGN_OR_RETURN(v, c.Call("multiply", {v, wt}));
      if (!acc) {
        acc = v;
      } else {
        KILN_ASSIGN_OR_RETURN(acc, c.Call(mode == "avg" ? "add" : "maximum", {acc, v}));
      }
    }
  }
  std::vector<double> count, any;
  for (size_t i = 0; i < gh.size(); ++i) {
    count.push_back(static_cast<double>(std::max<int64_t>(gh[i] * gw[i], 1)));
    any.push_back(gh[i] > 0 && gw[i] > 0 ? 1 : 0);
  }
  Expr y;
  if (mode == "avg") {
    KILN_ASSIGN_OR_RETURN(y, Reduce(c, "sum", acc, {3, 5}, false));
    KILN_ASSIGN_OR_RETURN(Expr cnt, ConstOf(c, dt, {r, 1, 1, 1}, count));
    KILN_ASSIGN_OR_RETURN(y, c.Call("divide", {y, cnt}));
  } else {
    KILN_ASSIGN_OR_RETURN(Expr m, c.Call("logical_and", {ay.mask, ax.mask}));
    KILN_ASSIGN_OR_RETURN(Expr lowest, a.S(-std::numeric_limits<double>::infinity()));
    KILN_ASSIGN_OR_RETURN(acc, a.Where(m, acc, lowest));
    KILN_ASSIGN_OR_RETURN(y, Reduce(c, "max", acc, {3, 5}, false));
    KILN_ASSIGN_OR_RETURN(Expr anyc, ConstOf(c, DataType::Bool(), {r, 1, 1, 1}, any));
    KILN_ASSIGN_OR_RETURN(Expr zero, a.S(0));
    KILN_ASSIGN_OR_RETURN(y, a.Where(anyc, y, zero));
  }
  return std::vector<Expr>{y};
}

// ---- MaxUnpool

Outs ConvertMaxUnpool(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(Expr ind, c.Input(1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> xd, StaticDims(c, xt, "the input"));
  if (xd.size() < 3) return c.Invalid("the input must have rank >= 3");
  const size_t sp = xd.size() - 2;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, c.AttrInts("kernel_shape"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pads, c.AttrInts("pads", std::vector<int64_t>(2 * sp, 0)));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, c.AttrInts("strides", std::vector<int64_t>(sp, 1)));
  if (kernel.size() != sp || pads.size() != 2 * sp || strides.size() != sp)
    return c.Invalid("kernel_shape, pads and strides need one entry per spatial axis");
  // The reference scatters into the inferred shape, then zero-pads it to
  // output_shape (when given).
  std::vector<int64_t> inferred = {xd[0], xd[1]};
  for (size_t i = 0; i < sp; ++i)
    inferred.push_back((xd[i + 2] - 1) * strides[i] - pads[i] - pads[i + sp] + kernel[i]);
  std::vector<int64_t> out = inferred;
  std::optional<Expr> run_time_shape;  // output_shape known only when the model runs
  if (c.HasInput(2)) {
    std::optional<std::vector<int64_t>> os;
    absl::StatusOr<std::optional<std::vector<int64_t>>> os_or = c.ConstantInts(2);
    if (!os_or.ok() && NeedsValue(os_or.status())) {
      KILN_ASSIGN_OR_RETURN(TensorType st, c.InputType(2));
      if (st->ndim() != 1 || !st->shape[0].is_static() || st->shape[0].value() != static_cast<int64_t>(xd.size()))
        return c.Invalid(absl::StrCat("output_shape needs one entry per input axis; it is ", TypeToString(Type(st))));
      KILN_ASSIGN_OR_RETURN(Expr v, c.Input(2));
      KILN_ASSIGN_OR_RETURN(v, Cast(c, v, kI64));
      run_time_shape = v;
    } else {
      KILN_ASSIGN_OR_RETURN(os, std::move(os_or));
    }
    if (os) {
      if (os->size() != xd.size()) return c.Invalid("output_shape needs one entry per input axis");
      out = *os;
    }
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (inferred[i] < 0 || out[i] < inferred[i])
      return c.Invalid("output_shape must be at least the inferred output shape");
  const int64_t m = Product(xd), t = Product(out);
  if (m * t > (int64_t{1} << 26) || m > kMaxConstantElements || t > kMaxConstantElements)
    return c.Unsupported(absl::StrCat("MaxUnpool of ", m, " values into ", t,
                                      " (it compares every index with every output position)"));
  // Output position o reads the scattered value at its flat index in the
  // inferred shape, or nothing (-1) in the padding.
  std::vector<int64_t> positions(static_cast<size_t>(t), -1);
  const std::vector<int64_t> ostr = Strides(out), istr = Strides(inferred);
  for (int64_t o = 0; o < t; ++o) {
    int64_t f = 0;
    bool inside = true;
    for (size_t k = 0; k < out.size(); ++k) {
      const int64_t ck = (o / ostr[k]) % out[k];
      inside = inside && ck < inferred[k];
      f += ck * istr[k];
    }
    if (inside) positions[static_cast<size_t>(o)] = f;
  }
  KILN_ASSIGN_OR_RETURN(Expr i64, Cast(c, ind, kI64));
  KILN_ASSIGN_OR_RETURN(i64, Reshape(c, i64, {m, 1}));
  KILN_ASSIGN_OR_RETURN(Expr pos, ConstI64(c, {1, t}, positions));
  KILN_ASSIGN_OR_RETURN(Expr eq, c.Call("equal", {i64, pos}));
  KILN_ASSIGN_OR_RETURN(Expr xf, Reshape(c, x, {m, 1}));
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(xt->dtype, 0));
  KILN_ASSIGN_OR_RETURN(Expr sel, c.Call("where", {eq, xf, zero}));
  KILN_ASSIGN_OR_RETURN(Expr y, Reduce(c, "sum", sel, {0}, false));
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, out));
  if (run_time_shape) {
    // Zero-padded at the end of each axis to output_shape (an extent below
    // the inferred one keeps the inferred extent).
    KILN_ASSIGN_OR_RETURN(Expr inf, ConstI64(c, {static_cast<int64_t>(out.size())}, out));
    KILN_ASSIGN_OR_RETURN(Expr extra, c.Call("subtract", {*run_time_shape, inf}));
    KILN_ASSIGN_OR_RETURN(Expr zero_i, c.ScalarConst(kI64, 0));
    KILN_ASSIGN_OR_RETURN(extra, c.Call("maximum", {extra, zero_i}));
    KILN_ASSIGN_OR_RETURN(Expr none, ConstI64(c, {static_cast<int64_t>(out.size())},
                                              std::vector<int64_t>(out.size(), 0)));
    KILN_ASSIGN_OR_RETURN(Expr pads, ConcatAxis(c, {none, extra}, 0));
    std::vector<int64_t> axes;
    for (size_t i = 0; i < out.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    KILN_ASSIGN_OR_RETURN(y, DynamicPadWith(c, y, "constant", zero, axes, pads));
  }
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterSampleConverters(ConverterRegistry& r) {
  for (int v : {16, 20}) r.Add("GridSample", v, ConvertGridSample);
  for (int v : {10, 16}) r.Add("RoiAlign", v, ConvertRoiAlign);
  for (int v : {9, 11}) r.Add("MaxUnpool", v, ConvertMaxUnpool);
}

}  // namespace kiln::onnx_frontend::cvt
