// File: frontends/onnx/convert_signal.cc (nn family)
//
// ONNX's signal-processing and text-feature operators, composed of existing
// graph-IR operators with matrices computed at import time:
//
//   DFT (17)              input [..., N (at axis), ..., 1|2] (real or
//                         complex as [re, im]): the axis and the re/im pair
//                         moved last and flattened, one nn.dense with a
//                         constant [bins * 2, N * C] matrix of cos/sin
//                         terms, then moved back: output [..., bins, ..., 2].
//                         dft_length L (input 1, a constant) truncates or
//                         zero-pads the signal (matrix columns n >= L are
//                         0); inverse uses e^{+i..} and divides by L;
//                         onesided keeps bins 0 .. floor(L / 2).
//   STFT (17)             frames of the signal [batch, length, 1|2] gathered
//                         by a constant [frames, frame_length] index table
//                         (take along axis 1), times the window, then the
//                         DFT matrix over each frame: output
//                         [batch, frames, bins, 2].
//   MelWeightMatrix (17)  every input a scalar known at import time: the
//                         [floor(dft_length / 2) + 1, num_mel_bins] matrix
//                         is computed here (triangular filters between mel
//                         points spaced evenly from mel(lower_edge_hertz) to
//                         mel(upper_edge_hertz), mel(f) = 2595 log10(1 +
//                         f / 700), each point's bin floor((dft_length + 1)
//                         * hz / sample_rate)), a constant of
//                         output_datatype.
//   TfIdfVectorizer (9)   integer input [C] or [B, C]. For gram length n in
//                         [min_gram_length, max_gram_length] and skip s in
//                         0 .. max_skip_count (unigrams once), the n-gram
//                         starting at t is x[t], x[t + d], .., x[t + (n-1)d]
//                         (d = s + 1): it matches pool n-gram p when every
//                         position equals (shifted slices [B, T, 1] compared
//                         with the pool's column [1, 1, P], logical_and over
//                         the n positions), summed over t and s: [B, P]
//                         counts per pool n-gram. IDF: counts over 1 become
//                         1. A constant [out, P] matrix (weights, or 1 for
//                         TF, at ngram_indexes[p]) maps them to the output
//                         slots (nn.dense). weights[p] scales pool n-gram p,
//                         as the ONNX text says.
//
// Values these need as constants (DFT's dft_length, STFT's frame_step and
// frame_length, MelWeightMatrix's inputs) given only at run time are errors
// that say so and keep ConstantInput's kNeedsConstantPayload (a caller that
// knows the values may freeze them: the conformance runner's "pass if
// frozen").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"

namespace kiln::onnx_frontend::cvt {

void RegisterSignalConverters(ConverterRegistry& r);  // called by RegisterNnConverters

namespace {

const DataType kF32 = DataType::Float(32);
const DataType kI64 = DataType::Int(64);

// The status ConstantInput gave for a value known only at run time (its
// code and kNeedsConstantPayload kept, so a caller that knows the value may
// freeze it), saying what needs it at import time.
absl::Status NeededAtImport(const absl::Status& s, absl::string_view what) {
  absl::Status u(s.code(), absl::StrCat(s.message(), " (kiln needs ", what,
                                        " at import time; it is given at run time)"));
  s.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { u.SetPayload(url, payload); });
  return u;
}

// A scalar (or one-element) integer input known at import time; nullopt when
// the input is absent.
absl::StatusOr<std::optional<int64_t>> ScalarIntInput(ConvertContext& c, int i,
                                                      absl::string_view what) {
  absl::StatusOr<std::optional<std::vector<int64_t>>> v = c.ConstantInts(i);
  if (!v.ok()) {
    if (NeedsValue(v.status())) return NeededAtImport(v.status(), what);
    return v.status();
  }
  if (!v->has_value()) return std::optional<int64_t>();
  if ((*v)->size() != 1)
    return c.Invalid(absl::StrCat(what, " must be a scalar; it has ", (*v)->size(), " elements"));
  return std::optional<int64_t>((**v)[0]);
}

absl::StatusOr<int64_t> BoolAttr(ConvertContext& c, absl::string_view name, int64_t def) {
  KILN_ASSIGN_OR_RETURN(int64_t v, c.AttrInt(name, def));
  if (v != 0 && v != 1) return c.Invalid(absl::StrCat("attribute ", name, " must be 0 or 1; it is ", v));
  return v;
}

// The float dtype the transform computes in (float16 / bfloat16 widened).
absl::StatusOr<DataType> ComputeType(ConvertContext& c, DataType dt, absl::string_view what) {
  if (!dt.is_float())
    return c.Invalid(absl::StrCat(what, " must be a floating-point tensor; it is ", dt.ToString()));
  return dt.bits() < 32 ? kF32 : dt;
}

// The DFT as an nn.dense weight [bins * 2, n * ch]: row 2k + p (p = 0 real,
// 1 imaginary part of bin k), column n' * ch + q (q = 0 real, 1 imaginary
// part of sample n'); samples n' >= length are 0 (truncated), length > n
// zero-pads. Forward X[k] = sum x[n] e^{-2 pi i k n / L}; inverse uses
// e^{+2 pi i k n / L} / L.
absl::StatusOr<Expr> DftMatrix(ConvertContext& c, DataType dt, int64_t n, int64_t ch,
                               int64_t length, int64_t bins, bool inverse) {
  KILN_RETURN_IF_ERROR(CheckConstantSize(c, {bins * 2, n * ch}, "the DFT matrix"));
  std::vector<double> w(static_cast<size_t>(bins * 2 * n * ch), 0.0);
  const double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
  const double sign = inverse ? 1.0 : -1.0;  // of the exponent
  for (int64_t k = 0; k < bins; ++k) {
    for (int64_t j = 0; j < std::min(n, length); ++j) {
      // The angle from (k j) mod L keeps it in [0, 2 pi) for large k j.
      const double theta = 2.0 * M_PI * static_cast<double>((k * j) % length) /
                           static_cast<double>(length);
      const double co = std::cos(theta) * scale, si = sign * std::sin(theta) * scale;
      // (a + bi)(co + si i) = (a co - b si) + (a si + b co) i
      auto at = [&](int64_t p, int64_t q) -> double& {
        return w[static_cast<size_t>((k * 2 + p) * n * ch + j * ch + q)];
      };
      at(0, 0) = co;
      at(1, 0) = si;
      if (ch == 2) {
        at(0, 1) = -si;
        at(1, 1) = co;
      }
    }
  }
  return ConstOf(c, dt, {bins * 2, n * ch}, w);
}

absl::StatusOr<Expr> Dense(ConvertContext& c, Expr x, Expr w) {
  return c.Call("nn.dense", {std::move(x), std::move(w)}, NewAttrs<DenseAttrs>());
}

// ---- DFT

Outs ConvertDft(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, xt, "the input"));
  const int64_t r = static_cast<int64_t>(dims.size());
  if (r < 2 || (dims.back() != 1 && dims.back() != 2))
    return c.Invalid(absl::StrCat("input must be [batch, signal dims..., 1 | 2] (real, or complex as "
                                  "[re, im] in the last dimension); it has shape [",
                                  absl::StrJoin(dims, ", "), "]"));
  const int64_t ch = dims.back();
  KILN_ASSIGN_OR_RETURN(DataType cdt, ComputeType(c, xt->dtype, "the input"));
  KILN_ASSIGN_OR_RETURN(int64_t axis_attr, c.AttrInt("axis", 1));
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormAxis(c, axis_attr, r));
  if (axis == r - 1)
    return c.Invalid(absl::StrCat("axis ", axis_attr,
                                  " is the last dimension (the real/imaginary pair), not a signal "
                                  "dimension"));
  KILN_ASSIGN_OR_RETURN(int64_t inverse, BoolAttr(c, "inverse", 0));
  KILN_ASSIGN_OR_RETURN(int64_t onesided, BoolAttr(c, "onesided", 0));
  if (onesided != 0 && ch == 2)
    return c.Invalid("onesided=1 needs a real input (last dimension 1); the input is complex");
  const int64_t n = dims[static_cast<size_t>(axis)];
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> len_in, ScalarIntInput(c, 1, "dft_length (input 1)"));
  const int64_t length = len_in.value_or(n);
  if (length < 1) return c.Invalid(absl::StrCat("dft_length must be positive; it is ", length));
  const int64_t bins = onesided != 0 ? length / 2 + 1 : length;

  // [others..., n, ch] -> [M, n * ch] . W^T -> [others..., bins, 2] -> axis back.
  std::vector<int64_t> perm, others;
  for (int64_t i = 0; i < r - 1; ++i)
    if (i != axis) {
      perm.push_back(i);
      others.push_back(dims[static_cast<size_t>(i)]);
    }
  perm.push_back(axis);
  perm.push_back(r - 1);
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(x, Cast(c, x, cdt));
  if (perm != IotaInts(0, r)) {
    KILN_ASSIGN_OR_RETURN(x, Transpose(c, x, perm));
  }
  const int64_t m = Product(others);
  KILN_ASSIGN_OR_RETURN(x, Reshape(c, x, {m, n * ch}));
  KILN_ASSIGN_OR_RETURN(Expr w, DftMatrix(c, cdt, n, ch, length, bins, inverse != 0));
  KILN_ASSIGN_OR_RETURN(Expr y, Dense(c, x, w));
  std::vector<int64_t> ydims = others;
  ydims.push_back(bins);
  ydims.push_back(2);
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, ydims));
  if (perm != IotaInts(0, r)) {
    std::vector<int64_t> back(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i) back[static_cast<size_t>(perm[static_cast<size_t>(i)])] = i;
    KILN_ASSIGN_OR_RETURN(y, Transpose(c, y, back));
  }
  KILN_ASSIGN_OR_RETURN(y, Cast(c, y, xt->dtype));
  return std::vector<Expr>{y};
}

// ---- STFT

Outs ConvertStft(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, xt, "the signal"));
  if (dims.size() != 3 || (dims[2] != 1 && dims[2] != 2))
    return c.Invalid(absl::StrCat("signal must be [batch, length, 1 | 2] (real, or complex as "
                                  "[re, im]); it has shape [",
                                  absl::StrJoin(dims, ", "), "]"));
  const int64_t batch = dims[0], len = dims[1], ch = dims[2];
  KILN_ASSIGN_OR_RETURN(DataType cdt, ComputeType(c, xt->dtype, "the signal"));
  KILN_ASSIGN_OR_RETURN(int64_t onesided, BoolAttr(c, "onesided", 1));
  if (onesided != 0 && ch == 2)
    return c.Invalid("onesided=1 (the default) needs a real signal (last dimension 1); the signal "
                     "is complex: set onesided=0");
  if (!c.HasInput(1)) return c.Invalid("frame_step (input 1) is required");
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> step_in, ScalarIntInput(c, 1, "frame_step (input 1)"));
  const int64_t step = *step_in;
  if (step < 1) return c.Invalid(absl::StrCat("frame_step must be positive; it is ", step));
  std::optional<int64_t> window_len;
  if (c.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(TensorType wt, c.InputType(2));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> wd, StaticDims(c, wt, "the window"));
    if (wd.size() != 1)
      return c.Invalid(absl::StrCat("window (input 2) must be 1-D; it has shape [",
                                    absl::StrJoin(wd, ", "), "]"));
    if (!wt->dtype.is_float())
      return c.Invalid(absl::StrCat("window must be a floating-point tensor; it is ",
                                    wt->dtype.ToString()));
    window_len = wd[0];
  }
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> fl_in,
                        ScalarIntInput(c, 3, "frame_length (input 3)"));
  if (!fl_in && !window_len)
    return c.Invalid("one of window (input 2) and frame_length (input 3) must be given");
  if (fl_in && window_len && *fl_in != *window_len)
    return c.Invalid(absl::StrCat("frame_length ", *fl_in, " differs from the window's length ",
                                  *window_len));
  const int64_t fl = fl_in ? *fl_in : *window_len;
  if (fl < 1 || fl > len)
    return c.Invalid(absl::StrCat("frame_length ", fl, " must be in [1, ", len,
                                  "] (the signal's length)"));
  const int64_t frames = (len - fl) / step + 1;
  const int64_t bins = onesided != 0 ? fl / 2 + 1 : fl;

  KILN_RETURN_IF_ERROR(CheckConstantSize(c, {frames, fl}, "the frame index table"));
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(frames * fl));
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < fl; ++j) idx.push_back(f * step + j);
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(x, Cast(c, x, cdt));
  KILN_ASSIGN_OR_RETURN(Expr ic, ConstI64(c, {frames, fl}, idx));
  KILN_ASSIGN_OR_RETURN(Expr fr, Take(c, x, ic, 1));  // [batch, frames, fl, ch]
  if (window_len) {
    KILN_ASSIGN_OR_RETURN(Expr w, c.Input(2));
    KILN_ASSIGN_OR_RETURN(w, Cast(c, w, cdt));
    KILN_ASSIGN_OR_RETURN(w, Reshape(c, w, {1, 1, fl, 1}));
    KILN_ASSIGN_OR_RETURN(fr, Binary(c, "multiply", fr, w));
  }
  KILN_ASSIGN_OR_RETURN(fr, Reshape(c, fr, {batch * frames, fl * ch}));
  KILN_ASSIGN_OR_RETURN(Expr m, DftMatrix(c, cdt, fl, ch, fl, bins, /*inverse=*/false));
  KILN_ASSIGN_OR_RETURN(Expr y, Dense(c, fr, m));
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, {batch, frames, bins, 2}));
  KILN_ASSIGN_OR_RETURN(y, Cast(c, y, xt->dtype));
  return std::vector<Expr>{y};
}

// ---- MelWeightMatrix

absl::StatusOr<double> ScalarValue(ConvertContext& c, int i, absl::string_view what) {
  if (!c.HasInput(i)) return c.Invalid(absl::StrCat(what, " is required"));
  absl::StatusOr<Ref<const HostTensor>> v = c.ConstantInput(i);
  if (!v.ok()) {
    if (NeedsValue(v.status())) return NeededAtImport(v.status(), what);
    return v.status();
  }
  if ((*v)->num_elements() != 1)
    return c.Invalid(absl::StrCat(what, " must be a scalar; it has ", (*v)->num_elements(),
                                  " elements"));
  return (*v)->GetAsDouble(0);
}

Outs ConvertMelWeightMatrix(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(double mel_bins_d, ScalarValue(c, 0, "num_mel_bins (input 0)"));
  KILN_ASSIGN_OR_RETURN(double dft_len_d, ScalarValue(c, 1, "dft_length (input 1)"));
  KILN_ASSIGN_OR_RETURN(double rate, ScalarValue(c, 2, "sample_rate (input 2)"));
  KILN_ASSIGN_OR_RETURN(double lo_hz, ScalarValue(c, 3, "lower_edge_hertz (input 3)"));
  KILN_ASSIGN_OR_RETURN(double hi_hz, ScalarValue(c, 4, "upper_edge_hertz (input 4)"));
  KILN_ASSIGN_OR_RETURN(int64_t out_type, c.AttrInt("output_datatype", 1));
  KILN_ASSIGN_OR_RETURN(DataType out_dt, FromOnnxDataType(static_cast<int32_t>(out_type)));
  if (!out_dt.is_float() && !out_dt.is_int() && !out_dt.is_uint())
    return c.Invalid(absl::StrCat("output_datatype ", out_type, " is not a number type"));
  if (!(mel_bins_d >= 1 && mel_bins_d <= 1e6 && mel_bins_d == std::floor(mel_bins_d)))
    return c.Invalid(absl::StrCat("num_mel_bins must be a positive integer; it is ", mel_bins_d));
  if (!(dft_len_d >= 1 && dft_len_d <= 1e9 && dft_len_d == std::floor(dft_len_d)))
    return c.Invalid(absl::StrCat("dft_length must be a positive integer; it is ", dft_len_d));
  if (!(rate > 0) || !std::isfinite(rate))
    return c.Invalid(absl::StrCat("sample_rate must be positive; it is ", rate));
  if (!(lo_hz >= 0) || !std::isfinite(hi_hz) || !(hi_hz > lo_hz))
    return c.Invalid(absl::StrCat("need 0 <= lower_edge_hertz < upper_edge_hertz; they are ",
                                  lo_hz, " and ", hi_hz));
  const int64_t mel_bins = static_cast<int64_t>(mel_bins_d);
  const int64_t dft_len = static_cast<int64_t>(dft_len_d);
  const int64_t spec_bins = dft_len / 2 + 1;
  KILN_RETURN_IF_ERROR(CheckConstantSize(c, {spec_bins, mel_bins}, "the mel weight matrix"));

  // mel_bins + 2 points spaced evenly on the mel scale (step (hi - lo) /
  // (mel_bins + 2), as ONNX computes it), each as its spectrogram bin.
  auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  const double mel_lo = mel(lo_hz), mel_step = (mel(hi_hz) - mel_lo) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> bin(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double m = mel_lo + static_cast<double>(i) * mel_step;
    const double hz = 700.0 * (std::pow(10.0, m / 2595.0) - 1.0);
    const double b = std::floor(static_cast<double>(dft_len + 1) * hz / rate);
    if (!(b >= 0) || b >= static_cast<double>(spec_bins))
      return c.Invalid(absl::StrCat("mel point ", i, " (", hz, " Hz) falls in spectrogram bin ", b,
                                    ", outside [0, ", spec_bins,
                                    "): upper_edge_hertz is too high for sample_rate ", rate,
                                    " and dft_length ", dft_len));
    bin[static_cast<size_t>(i)] = static_cast<int64_t>(b);
  }
  std::vector<double> w(static_cast<size_t>(spec_bins * mel_bins), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& { return w[static_cast<size_t>(j * mel_bins + i)]; };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t left = bin[static_cast<size_t>(i)], center = bin[static_cast<size_t>(i + 1)],
                  right = bin[static_cast<size_t>(i + 2)];
    // Rising edge left..center (inclusive), falling edge center..right (exclusive).
    if (center == left) {
      at(center, i) = 1.0;
    } else {
      for (int64_t j = left; j <= center; ++j)
        at(j, i) = static_cast<double>(j - left) / static_cast<double>(center - left);
    }
    for (int64_t j = center; j < right; ++j)
      at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  KILN_ASSIGN_OR_RETURN(Expr y, ConstOf(c, out_dt, {spec_bins, mel_bins}, w));
  return std::vector<Expr>{y};
}

// ---- TfIdfVectorizer

absl::StatusOr<int64_t> RequiredInt(ConvertContext& c, absl::string_view name) {
  if (!c.HasAttr(name)) return c.Invalid(absl::StrCat("attribute ", name, " is required"));
  return c.AttrInt(name, 0);
}

// The counts [B, P] of the pool's n-grams `grams` (P x n, row-major) in the
// rows of x [B, C] (int64), over skips 0..max_skip (only 0 for n = 1);
// nullopt when no n-gram of length n fits in C.
absl::StatusOr<std::optional<Expr>> CountGrams(ConvertContext& c, Expr x, int64_t cols, int64_t n,
                                               const std::vector<int64_t>& grams, int64_t max_skip) {
  const int64_t p = static_cast<int64_t>(grams.size()) / n;
  std::optional<Expr> total;
  for (int64_t s = 0; s <= (n == 1 ? 0 : max_skip); ++s) {
    const int64_t d = s + 1, starts = cols - (n - 1) * d;
    if (starts <= 0) break;
    KILN_RETURN_IF_ERROR(CheckConstantSize(c, {starts, p}, "a TfIdfVectorizer comparison"));
    Expr match;
    for (int64_t j = 0; j < n; ++j) {
      KILN_ASSIGN_OR_RETURN(Expr xs, SliceAxis(c, x, 1, j * d, j * d + starts));  // [B, T]
      KILN_ASSIGN_OR_RETURN(xs, ExpandDims(c, xs, 2));                             // [B, T, 1]
      std::vector<int64_t> column(static_cast<size_t>(p));
      for (int64_t k = 0; k < p; ++k) column[static_cast<size_t>(k)] = grams[static_cast<size_t>(k * n + j)];
      KILN_ASSIGN_OR_RETURN(Expr pc, ConstI64(c, {1, 1, p}, column));
      KILN_ASSIGN_OR_RETURN(Expr eq, Binary(c, "equal", xs, pc));  // [B, T, P]
      if (match == nullptr) {
        match = eq;
      } else {
        KILN_ASSIGN_OR_RETURN(match, Binary(c, "logical_and", match, eq));
      }
    }
    KILN_ASSIGN_OR_RETURN(Expr f, Cast(c, match, kF32));
    KILN_ASSIGN_OR_RETURN(Expr cnt, Reduce(c, "sum", f, {1}, /*keepdims=*/false));  // [B, P]
    if (total) {
      KILN_ASSIGN_OR_RETURN(cnt, Binary(c, "add", *total, cnt));
    }
    total = cnt;
  }
  return total;
}

Outs ConvertTfIdfVectorizer(ConvertContext& c) {
  if (c.HasAttr("pool_strings"))
    return c.Unsupported("pool_strings (string n-grams): kiln has no string tensors; only "
                         "pool_int64s with an integer input is supported");
  if (!c.HasAttr("pool_int64s")) return c.Invalid("attribute pool_int64s is required");
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  if (!xt->dtype.is_int() || (xt->dtype.bits() != 32 && xt->dtype.bits() != 64))
    return c.Invalid(absl::StrCat("input must be int32 or int64 (with pool_int64s); it is ",
                                  xt->dtype.ToString()));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, xt, "the input"));
  if (dims.size() != 1 && dims.size() != 2)
    return c.Invalid(absl::StrCat("input must be [C] or [N, C]; it has shape [",
                                  absl::StrJoin(dims, ", "), "]"));
  const int64_t rows = dims.size() == 2 ? dims[0] : 1, cols = dims.back();

  KILN_ASSIGN_OR_RETURN(std::string mode, c.AttrString("mode", ""));
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return c.Invalid(absl::StrCat("attribute mode must be TF, IDF or TFIDF; it is '", mode, "'"));
  KILN_ASSIGN_OR_RETURN(int64_t min_n, RequiredInt(c, "min_gram_length"));
  KILN_ASSIGN_OR_RETURN(int64_t max_n, RequiredInt(c, "max_gram_length"));
  KILN_ASSIGN_OR_RETURN(int64_t max_skip, RequiredInt(c, "max_skip_count"));
  if (min_n < 1 || max_n < min_n)
    return c.Invalid(absl::StrCat("need 1 <= min_gram_length <= max_gram_length; they are ", min_n,
                                  " and ", max_n));
  if (max_skip < 0)
    return c.Invalid(absl::StrCat("max_skip_count must be >= 0; it is ", max_skip));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pool, c.AttrInts("pool_int64s"));
  if (!c.HasAttr("ngram_counts")) return c.Invalid("attribute ngram_counts is required");
  if (!c.HasAttr("ngram_indexes")) return c.Invalid("attribute ngram_indexes is required");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> counts, c.AttrInts("ngram_counts"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indexes, c.AttrInts("ngram_indexes"));
  const int64_t pool_size = static_cast<int64_t>(pool.size());

  // ngram_counts[k]: where the (k + 1)-grams start in pool_int64s.
  std::vector<int64_t> first_gram;  // index of the first (k + 1)-gram among all n-grams
  int64_t grams_total = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t begin = counts[k], end = k + 1 < counts.size() ? counts[k + 1] : pool_size;
    const int64_t n = static_cast<int64_t>(k) + 1;
    if (begin < 0 || end < begin || end > pool_size)
      return c.Invalid(absl::StrCat("ngram_counts [", absl::StrJoin(counts, ", "),
                                    "] must be nondecreasing offsets into pool_int64s (size ",
                                    pool_size, ")"));
    if ((end - begin) % n != 0)
      return c.Invalid(absl::StrCat("the ", n, "-grams take ", end - begin,
                                    " entries of pool_int64s, not a multiple of ", n));
    first_gram.push_back(grams_total);
    grams_total += (end - begin) / n;
  }
  if (!counts.empty() && counts[0] != 0)
    return c.Invalid(absl::StrCat("ngram_counts must start at 0; it starts at ", counts[0]));
  if (static_cast<int64_t>(indexes.size()) != grams_total)
    return c.Invalid(absl::StrCat("ngram_indexes has ", indexes.size(),
                                  " entries; the pool holds ", grams_total, " n-grams"));
  if (indexes.empty()) return c.Invalid("the pool is empty (no n-grams, no output slots)");
  int64_t out = 0;
  for (int64_t i : indexes) {
    if (i < 0) return c.Invalid(absl::StrCat("ngram_indexes holds a negative index ", i));
    out = std::max(out, i + 1);
  }
  KILN_ASSIGN_OR_RETURN(std::vector<double> weights, c.AttrFloats("weights"));
  if (!weights.empty() && weights.size() != indexes.size())
    return c.Invalid(absl::StrCat("weights has ", weights.size(), " entries; ngram_indexes has ",
                                  indexes.size()));
  const bool weighted = mode != "TF" && !weights.empty();

  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(x, Cast(c, x, kI64));
  KILN_ASSIGN_OR_RETURN(x, Reshape(c, x, {rows, cols}));
  Expr y;
  for (int64_t n = min_n; n <= std::min<int64_t>(max_n, static_cast<int64_t>(counts.size())); ++n) {
    const size_t k = static_cast<size_t>(n - 1);
    const int64_t begin = counts[k], end = k + 1 < counts.size() ? counts[k + 1] : pool_size;
    if (end == begin) continue;
    std::vector<int64_t> grams(pool.begin() + begin, pool.begin() + end);
    KILN_ASSIGN_OR_RETURN(std::optional<Expr> cnt, CountGrams(c, x, cols, n, grams, max_skip));
    if (!cnt) continue;
    Expr v = *cnt;  // [B, P]
    if (mode == "IDF") {
      KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(kF32, 1));
      KILN_ASSIGN_OR_RETURN(v, Binary(c, "minimum", v, one));
    }
    // [out, P]: pool n-gram g -> slot ngram_indexes[g], scaled by weights[g].
    const int64_t p = (end - begin) / n;
    KILN_RETURN_IF_ERROR(CheckConstantSize(c, {out, p}, "the TfIdfVectorizer output map"));
    std::vector<double> map(static_cast<size_t>(out * p), 0.0);
    for (int64_t g = 0; g < p; ++g) {
      const size_t gi = static_cast<size_t>(first_gram[k] + g);
      map[static_cast<size_t>(indexes[gi] * p + g)] += weighted ? weights[gi] : 1.0;
    }
    KILN_ASSIGN_OR_RETURN(Expr mc, ConstOf(c, kF32, {out, p}, map));
    KILN_ASSIGN_OR_RETURN(Expr part, Dense(c, v, mc));  // [B, out]
    if (y == nullptr) {
      y = part;
    } else {
      KILN_ASSIGN_OR_RETURN(y, Binary(c, "add", y, part));
    }
  }
  if (y == nullptr) {  // nothing to count: zeros
    KILN_ASSIGN_OR_RETURN(y, ConstOf(c, kF32, {rows, out}, std::vector<double>(
                                                               static_cast<size_t>(rows * out), 0.0)));
  }
  if (dims.size() == 1) {
    KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, {out}));
  }
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterSignalConverters(ConverterRegistry& r) {
  r.Add("DFT", 17, ConvertDft);
  r.Add("STFT", 17, ConvertStft);
  r.Add("MelWeightMatrix", 17, ConvertMelWeightMatrix);
  r.Add("TfIdfVectorizer", 9, ConvertTfIdfVectorizer);
}

}  // namespace kiln::onnx_frontend::cvt
