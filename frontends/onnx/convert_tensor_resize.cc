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
#include <algorithm>
#include <cmath>
#include <cstdint>
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

// Resize-10/11/13 and Upsample-7/9: separable, one axis at a time, as gathers
// of constant indices weighted by constant coefficients.
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
  auto read_doubles = [&](int i, std::vector<double>* out) -> absl::Status {
    KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> v, c.ConstantInput(i));
    for (int64_t k = 0; k < v->num_elements(); ++k) out->push_back(v->GetAsDouble(k));
    return absl::OkStatus();
  };
  if (upsample && c.opset() < 9) {
    KILN_ASSIGN_OR_RETURN(scales, c.AttrFloats("scales"));
  } else if (v10) {
    KILN_RETURN_IF_ERROR(read_doubles(1, &scales));
  } else {
    if (c.HasInput(1) && m.ctm == "tf_crop_and_resize") KILN_RETURN_IF_ERROR(read_doubles(1, &roi));
    if (c.HasInput(2)) KILN_RETURN_IF_ERROR(read_doubles(2, &scales));
    if (c.HasInput(3)) {
      KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> sz, c.ConstantInts(3));
      sizes = sz.value_or(std::vector<int64_t>{});
    }
    if (!sizes.empty() && !scales.empty())
      return c.Invalid("give either scales or sizes, not both");
  }
  if (sizes.empty() && scales.empty()) return c.Invalid("one of scales and sizes is required");
  if ((!sizes.empty() && static_cast<int64_t>(sizes.size()) != r) ||
      (!scales.empty() && static_cast<int64_t>(scales.size()) != r))
    return c.Invalid(absl::StrCat("scales/sizes need one entry per input axis (", r, ")"));
  if (m.ctm == "tf_crop_and_resize" && static_cast<int64_t>(roi.size()) != 2 * r)
    return c.Invalid(absl::StrCat("tf_crop_and_resize needs roi with ", 2 * r, " entries"));
  Expr y = x;
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
    KILN_ASSIGN_OR_RETURN(y, ApplyAxisPlan(c, y, a, r, p, t->dtype, extrapolation));
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
