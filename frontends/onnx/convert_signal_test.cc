// DFT, STFT, MelWeightMatrix and TfIdfVectorizer (convert_signal.cc): one-node
// models imported and run by the interpreter, against values computed here by
// plain loops from ONNX's definitions (a naive DFT sum, frames sliced by
// hand, triangular mel filters, n-grams counted position by position), and
// the errors for bad attributes and inputs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "frontends/onnx/convert_test_util.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::onnx_frontend::testing {
namespace {

using ::testing::HasSubstr;
using V = std::vector<double>;
using S = std::vector<int64_t>;

constexpr DataType kF32 = DataType::Float(32);
constexpr DataType kF64 = DataType::Float(64);
constexpr DataType kI32 = DataType::Int(32);
constexpr DataType kI64 = DataType::Int(64);

// Numel and Data: convert_test_util.h. Here an absolute tolerance (spectra
// and windows near zero), unlike ExpectNear's relative one.
void ExpectClose(const NodeOutput& got, const S& shape, const V& want, double tol = 1e-4) {
  ASSERT_EQ(got.shape, shape);
  ASSERT_EQ(got.values.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.values[i], want[i], tol) << "at flat index " << i;
}

absl::Status Fails(int64_t opset, const onnx::NodeProto& node,
                   const std::vector<NamedTensor>& inputs) {
  return RunNode(opset, node, inputs).status();
}

// ---- DFT

// The DFT of x (shape dims, last dim ch = 1 | 2) along `axis` by the
// definition: X[k] = sum_{n < min(N, L)} x[n] e^{-+2 pi i k n / L} (/ L when
// inverse), bins k in [0, bins). Output dims with dims[axis] = bins, last 2.
V NaiveDft(const V& x, const S& dims, int64_t axis, int64_t length, int64_t bins, bool inverse) {
  const int64_t r = static_cast<int64_t>(dims.size()), ch = dims.back();
  const int64_t n = dims[static_cast<size_t>(axis)];
  S out = dims;
  out[static_cast<size_t>(axis)] = bins;
  out.back() = 2;
  // Strides of the input and the output.
  auto strides = [&](const S& d) {
    S s(d.size(), 1);
    for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
    return s;
  };
  const S is = strides(dims), os = strides(out);
  V y(static_cast<size_t>(Numel(out)), 0.0);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t o = 0; o < Numel(out); o += 2) {
    // Coordinates of output element o (its last coordinate is 0).
    S coord(static_cast<size_t>(r));
    int64_t rest = o;
    for (int64_t i = 0; i < r; ++i) {
      coord[static_cast<size_t>(i)] = rest / os[static_cast<size_t>(i)];
      rest %= os[static_cast<size_t>(i)];
    }
    const int64_t k = coord[static_cast<size_t>(axis)];
    double re = 0, im = 0;
    for (int64_t j = 0; j < std::min(n, length); ++j) {
      int64_t base = 0;
      for (int64_t i = 0; i < r - 1; ++i)
        base += (i == axis ? j : coord[static_cast<size_t>(i)]) * is[static_cast<size_t>(i)];
      const double a = x[static_cast<size_t>(base)];
      const double b = ch == 2 ? x[static_cast<size_t>(base + 1)] : 0.0;
      const double t = sign * 2.0 * M_PI * static_cast<double>(k) * static_cast<double>(j) /
                       static_cast<double>(length);
      re += a * std::cos(t) - b * std::sin(t);
      im += a * std::sin(t) + b * std::cos(t);
    }
    if (inverse) {
      re /= static_cast<double>(length);
      im /= static_cast<double>(length);
    }
    y[static_cast<size_t>(o)] = re;
    y[static_cast<size_t>(o + 1)] = im;
  }
  return y;
}

TEST(ConvertDft, RealInputAlongEachAxis) {
  const S dims = {2, 5, 3, 1};
  const V x = Data(Numel(dims));
  for (int64_t axis : {0, 1, 2, -2, -3}) {
    const int64_t a = axis < 0 ? axis + 4 : axis;
    const NodeOutput y = Exec(17, MakeNode("DFT", {"x"}, {"y"}, {AttrInt("axis", axis)}),
                              {F32In("x", dims, x)});
    S want_shape = dims;
    want_shape.back() = 2;
    ExpectClose(y, want_shape, NaiveDft(x, dims, a, dims[static_cast<size_t>(a)],
                                       dims[static_cast<size_t>(a)], false));
    EXPECT_EQ(y.dtype, kF32);
  }
}

TEST(ConvertDft, DefaultAxisIsOne) {
  const S dims = {1, 6, 2};
  const V x = Data(Numel(dims), 1.1);
  ExpectClose(Exec(17, MakeNode("DFT", {"x"}, {"y"}), {F32In("x", dims, x)}), {1, 6, 2},
             NaiveDft(x, dims, 1, 6, 6, false));
}

TEST(ConvertDft, ComplexInverse) {
  const S dims = {2, 7, 2};
  const V x = Data(Numel(dims), 0.7);
  ExpectClose(Exec(17, MakeNode("DFT", {"x"}, {"y"}, {AttrInt("inverse", 1)}),
                  {F32In("x", dims, x)}),
             {2, 7, 2}, NaiveDft(x, dims, 1, 7, 7, true));
}

TEST(ConvertDft, InverseUndoesForward) {
  const S dims = {1, 8, 2};
  const V x = Data(Numel(dims), 0.2);
  const V fwd = NaiveDft(x, dims, 1, 8, 8, false);
  ExpectClose(Exec(17, MakeNode("DFT", {"x"}, {"y"}, {AttrInt("inverse", 1)}),
                  {F32In("x", dims, fwd)}),
             dims, x);
}

TEST(ConvertDft, DftLengthTruncatesOrZeroPads) {
  const S dims = {2, 6, 2};
  const V x = Data(Numel(dims), 0.4);
  for (int64_t len : {4, 6, 9}) {
    for (int64_t inverse : {0, 1}) {
      const NodeOutput y =
          Exec(17, MakeNode("DFT", {"x", "len"}, {"y"}, {AttrInt("inverse", inverse)}),
               {F32In("x", dims, x), Init("len", kI64, {}, {static_cast<double>(len)})});
      ExpectClose(y, {2, len, 2}, NaiveDft(x, dims, 1, len, len, inverse != 0));
    }
  }
}

TEST(ConvertDft, OnesidedRealKeepsHalfTheBins) {
  const S dims = {3, 7, 1};
  const V x = Data(Numel(dims), 0.9);
  for (int64_t len : {7, 8}) {
    const int64_t bins = len / 2 + 1;
    const NodeOutput y =
        Exec(17, MakeNode("DFT", {"x", "len"}, {"y"}, {AttrInt("onesided", 1)}),
             {F32In("x", dims, x), Init("len", kI32, {1}, {static_cast<double>(len)})});
    ExpectClose(y, {3, bins, 2}, NaiveDft(x, dims, 1, len, bins, false));
  }
}

TEST(ConvertDft, Float64KeepsItsType) {
  const S dims = {1, 5, 1};
  const V x = Data(Numel(dims));
  const NodeOutput y =
      Exec(17, MakeNode("DFT", {"x"}, {"y"}), {In("x", kF64, dims, x)});
  EXPECT_EQ(y.dtype, kF64);
  ExpectClose(y, {1, 5, 2}, NaiveDft(x, dims, 1, 5, 5, false), 1e-9);
}

TEST(ConvertDft, Errors) {
  const auto node = [](std::vector<onnx::AttributeProto> attrs) {
    return MakeNode("DFT", {"x"}, {"y"}, std::move(attrs));
  };
  absl::Status s = Fails(17, node({AttrInt("axis", 3)}), {F32In("x", {1, 4, 3, 1}, Data(12))});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("real/imaginary pair"));
  s = Fails(17, node({AttrInt("axis", 4)}), {F32In("x", {1, 4, 3, 1}, Data(12))});
  EXPECT_THAT(s.message(), HasSubstr("out of range")) << s;
  s = Fails(17, node({}), {F32In("x", {1, 4, 3}, Data(12))});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("1 | 2"));
  s = Fails(17, node({AttrInt("onesided", 1)}), {F32In("x", {1, 4, 2}, Data(8))});
  EXPECT_THAT(s.message(), HasSubstr("complex")) << s;
  s = Fails(17, node({AttrInt("inverse", 2)}), {F32In("x", {1, 4, 2}, Data(8))});
  EXPECT_THAT(s.message(), HasSubstr("inverse must be 0 or 1")) << s;
  s = Fails(17, node({}), {In("x", kI32, {1, 4, 1}, {1, 2, 3, 4})});
  EXPECT_THAT(s.message(), HasSubstr("floating-point")) << s;
  s = Fails(17, MakeNode("DFT", {"x", "len"}, {"y"}),
            {F32In("x", {1, 4, 1}, Data(4)), Init("len", kI64, {}, {0})});
  EXPECT_THAT(s.message(), HasSubstr("dft_length must be positive")) << s;
  s = Fails(17, MakeNode("DFT", {"x", "len"}, {"y"}),
            {F32In("x", {1, 4, 1}, Data(4)), Init("len", kI64, {2}, {4, 4})});
  EXPECT_THAT(s.message(), HasSubstr("must be a scalar")) << s;
  // dft_length given at run time: an error that names it, with the payload
  // that lets a caller freeze it.
  s = Fails(17, MakeNode("DFT", {"x", "len"}, {"y"}),
            {F32In("x", {1, 4, 1}, Data(4)), In("len", kI64, {}, {4})});
  EXPECT_THAT(s.message(), HasSubstr("dft_length (input 1) at import time")) << s;
  ASSERT_TRUE(s.GetPayload(kNeedsConstantPayload).has_value()) << s;
  EXPECT_EQ(std::string(*s.GetPayload(kNeedsConstantPayload)), "len");
}

// ---- STFT

// Frames of signal [batch, len, ch] (frame f = samples f*step .. f*step+fl-1,
// times window w when given), each transformed by NaiveDft.
V NaiveStft(const V& x, const S& dims, int64_t step, int64_t fl, const V& w, int64_t bins) {
  const int64_t batch = dims[0], len = dims[1], ch = dims[2];
  const int64_t frames = (len - fl) / step + 1;
  V y;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      V frame;
      for (int64_t j = 0; j < fl; ++j)
        for (int64_t q = 0; q < ch; ++q) {
          const double v = x[static_cast<size_t>((b * len + f * step + j) * ch + q)];
          frame.push_back(w.empty() ? v : v * w[static_cast<size_t>(j)]);
        }
      const V t = NaiveDft(frame, {1, fl, ch}, 1, fl, bins, false);
      y.insert(y.end(), t.begin(), t.end());
    }
  return y;
}

TEST(ConvertStft, RealSignalWithWindowOnesided) {
  const S dims = {2, 20, 1};
  const V x = Data(Numel(dims), 0.5);
  const V w = Data(6, 2.0);
  const NodeOutput y = Exec(17, MakeNode("STFT", {"x", "step", "w"}, {"y"}),
                            {F32In("x", dims, x), Init("step", kI64, {}, {3}), F32In("w", {6}, w)});
  // frames (20 - 6) / 3 + 1 = 5, bins 6 / 2 + 1 = 4
  ExpectClose(y, {2, 5, 4, 2}, NaiveStft(x, dims, 3, 6, w, 4));
}

TEST(ConvertStft, FrameLengthWithoutWindowTwoSided) {
  const S dims = {1, 17, 1};
  const V x = Data(Numel(dims), 0.1);
  const NodeOutput y =
      Exec(17, MakeNode("STFT", {"x", "step", "", "fl"}, {"y"}, {AttrInt("onesided", 0)}),
           {F32In("x", dims, x), Init("step", kI64, {}, {4}), Init("fl", kI64, {}, {5})});
  ExpectClose(y, {1, 4, 5, 2}, NaiveStft(x, dims, 4, 5, {}, 5));
}

TEST(ConvertStft, ComplexSignalWindowAndFrameLength) {
  const S dims = {1, 10, 2};
  const V x = Data(Numel(dims), 1.3);
  const V w = Data(4, 0.6);
  const NodeOutput y =
      Exec(17, MakeNode("STFT", {"x", "step", "w", "fl"}, {"y"}, {AttrInt("onesided", 0)}),
           {F32In("x", dims, x), Init("step", kI32, {}, {2}), F32In("w", {4}, w),
            Init("fl", kI64, {}, {4})});
  ExpectClose(y, {1, 4, 4, 2}, NaiveStft(x, dims, 2, 4, w, 4));
}

TEST(ConvertStft, Errors) {
  const S dims = {1, 10, 1};
  const V x = Data(10);
  absl::Status s = Fails(17, MakeNode("STFT", {"x", "step"}, {"y"}),
                         {F32In("x", dims, x), Init("step", kI64, {}, {2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("window (input 2) and frame_length (input 3)"));
  s = Fails(17, MakeNode("STFT", {"x", "step", "w", "fl"}, {"y"}),
            {F32In("x", dims, x), Init("step", kI64, {}, {2}), F32In("w", {4}, Data(4)),
             Init("fl", kI64, {}, {5})});
  EXPECT_THAT(s.message(), HasSubstr("differs from the window's length")) << s;
  s = Fails(17, MakeNode("STFT", {"x", "step", "", "fl"}, {"y"}),
            {F32In("x", dims, x), Init("step", kI64, {}, {2}), Init("fl", kI64, {}, {11})});
  EXPECT_THAT(s.message(), HasSubstr("frame_length 11 must be in [1, 10]")) << s;
  s = Fails(17, MakeNode("STFT", {"x", "step", "", "fl"}, {"y"}),
            {F32In("x", dims, x), Init("step", kI64, {}, {0}), Init("fl", kI64, {}, {4})});
  EXPECT_THAT(s.message(), HasSubstr("frame_step must be positive")) << s;
  s = Fails(17, MakeNode("STFT", {"x", "step", "", "fl"}, {"y"}),
            {F32In("x", {1, 10, 2}, Data(20)), Init("step", kI64, {}, {2}),
             Init("fl", kI64, {}, {4})});
  EXPECT_THAT(s.message(), HasSubstr("set onesided=0")) << s;
  s = Fails(17, MakeNode("STFT", {"x", "step", "", "fl"}, {"y"}),
            {F32In("x", {10, 1}, x), Init("step", kI64, {}, {2}), Init("fl", kI64, {}, {4})});
  EXPECT_THAT(s.message(), HasSubstr("[batch, length, 1 | 2]")) << s;
  s = Fails(17, MakeNode("STFT", {"x", "step", "w"}, {"y"}),
            {F32In("x", dims, x), Init("step", kI64, {}, {2}), F32In("w", {2, 2}, Data(4))});
  EXPECT_THAT(s.message(), HasSubstr("must be 1-D")) << s;
  s = Fails(17, MakeNode("STFT", {"x", "step", "", "fl"}, {"y"}),
            {F32In("x", dims, x), In("step", kI64, {}, {2}), Init("fl", kI64, {}, {4})});
  EXPECT_THAT(s.message(), HasSubstr("frame_step (input 1) at import time")) << s;
  ASSERT_TRUE(s.GetPayload(kNeedsConstantPayload).has_value()) << s;
  EXPECT_EQ(std::string(*s.GetPayload(kNeedsConstantPayload)), "step");
}

// ---- MelWeightMatrix

// ONNX's definition: num_mel_bins + 2 points evenly spaced on the mel scale
// from mel(lo) in steps of (mel(hi) - mel(lo)) / (num_mel_bins + 2), each at
// spectrogram bin floor((dft_length + 1) * hz / sample_rate); filter i rises
// linearly from point i to point i + 1 (value 1 there) and falls to 0 at
// point i + 2.
V NaiveMel(int64_t mels, int64_t dft, double rate, double lo, double hi) {
  const int64_t spec = dft / 2 + 1;
  auto to_mel = [](double f) { return 2595.0 * std::log10(1.0 + f / 700.0); };
  std::vector<int64_t> p;
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double m = to_mel(lo) + (to_mel(hi) - to_mel(lo)) * static_cast<double>(i) /
                                      static_cast<double>(mels + 2);
    const double hz = 700.0 * (std::pow(10.0, m / 2595.0) - 1.0);
    p.push_back(static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / rate)));
  }
  V w(static_cast<size_t>(spec * mels), 0.0);
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t a = p[static_cast<size_t>(i)], b = p[static_cast<size_t>(i + 1)],
                  c = p[static_cast<size_t>(i + 2)];
    for (int64_t j = 0; j < spec; ++j) {
      double v = 0;
      if (j == b) {
        v = 1;
      } else if (j > a && j < b) {
        v = static_cast<double>(j - a) / static_cast<double>(b - a);
      } else if (j > b && j < c) {
        v = static_cast<double>(c - j) / static_cast<double>(c - b);
      }
      w[static_cast<size_t>(j * mels + i)] = v;
    }
  }
  return w;
}

std::vector<NamedTensor> MelInputs(int64_t mels, int64_t dft, int64_t rate, double lo, double hi) {
  return {Init("m", kI32, {}, {static_cast<double>(mels)}),
          Init("d", kI32, {}, {static_cast<double>(dft)}),
          Init("r", kI64, {}, {static_cast<double>(rate)}), Init("lo", kF32, {}, {lo}),
          Init("hi", kF32, {}, {hi})};
}

onnx::NodeProto MelNode(std::vector<onnx::AttributeProto> attrs = {}) {
  return MakeNode("MelWeightMatrix", {"m", "d", "r", "lo", "hi"}, {"y"}, std::move(attrs));
}

TEST(ConvertMelWeightMatrix, OnnxExample) {
  // ONNX's node test: 8 bins, dft 16, 8192 Hz, 0 .. 4096 Hz: filter i peaks
  // at spectrogram bin 0, 0, 1, 1, 2, 3, 4, 5 (neighbouring points one bin
  // apart, so every filter is a single 1).
  const NodeOutput y = Exec(17, MelNode(), MelInputs(8, 16, 8192, 0, 4096));
  V want(9 * 8, 0.0);
  const int64_t peak[8] = {0, 0, 1, 1, 2, 3, 4, 5};
  for (int64_t i = 0; i < 8; ++i) want[static_cast<size_t>(peak[i] * 8 + i)] = 1;
  ExpectClose(y, {9, 8}, want, 0);
  EXPECT_EQ(y.dtype, kF32);
}

TEST(ConvertMelWeightMatrix, WideFiltersAgainstDefinition) {
  for (const auto& [mels, dft, rate, lo, hi] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, double, double>>{
           {4, 64, 16000, 0, 8000}, {5, 128, 8000, 100, 3000}, {3, 40, 1000, 20, 480}}) {
    const NodeOutput y = Exec(17, MelNode(), MelInputs(mels, dft, rate, lo, hi));
    ExpectClose(y, {dft / 2 + 1, mels}, NaiveMel(mels, dft, static_cast<double>(rate), lo, hi), 1e-6);
  }
}

TEST(ConvertMelWeightMatrix, OutputDatatype) {
  const NodeOutput y = Exec(17, MelNode({AttrInt("output_datatype", 11)}),  // DOUBLE
                            MelInputs(4, 64, 16000, 0, 8000));
  EXPECT_EQ(y.dtype, kF64);
  ExpectClose(y, {33, 4}, NaiveMel(4, 64, 16000, 0, 8000), 1e-12);
}

TEST(ConvertMelWeightMatrix, Errors) {
  absl::Status s = Fails(17, MelNode(), MelInputs(4, 16, 8000, 0, 8000));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("upper_edge_hertz is too high"));
  s = Fails(17, MelNode(), MelInputs(0, 16, 8000, 0, 4000));
  EXPECT_THAT(s.message(), HasSubstr("num_mel_bins must be a positive integer")) << s;
  s = Fails(17, MelNode(), MelInputs(4, 16, 8000, 3000, 1000));
  EXPECT_THAT(s.message(), HasSubstr("lower_edge_hertz < upper_edge_hertz")) << s;
  s = Fails(17, MelNode(), MelInputs(4, 16, 0, 0, 1000));
  EXPECT_THAT(s.message(), HasSubstr("sample_rate must be positive")) << s;
  s = Fails(17, MelNode({AttrInt("output_datatype", 9)}), MelInputs(4, 16, 8000, 0, 4000));
  EXPECT_THAT(s.message(), HasSubstr("not a number type")) << s;
  std::vector<NamedTensor> in = MelInputs(4, 16, 8000, 0, 4000);
  in[0] = In("m", kI32, {}, {4});
  s = Fails(17, MelNode(), in);
  EXPECT_THAT(s.message(), HasSubstr("num_mel_bins (input 0) at import time")) << s;
  ASSERT_TRUE(s.GetPayload(kNeedsConstantPayload).has_value()) << s;
  EXPECT_EQ(std::string(*s.GetPayload(kNeedsConstantPayload)), "m");
}

// ---- TfIdfVectorizer

struct Tfidf {
  std::string mode = "TF";
  int64_t min_n = 1, max_n = 2, max_skip = 0;
  std::vector<int64_t> counts, indexes, pool;
  std::vector<float> weights;
};

onnx::NodeProto TfidfNode(const Tfidf& t) {
  std::vector<onnx::AttributeProto> a = {
      AttrString("mode", t.mode),         AttrInt("min_gram_length", t.min_n),
      AttrInt("max_gram_length", t.max_n), AttrInt("max_skip_count", t.max_skip),
      AttrInts("ngram_counts", t.counts), AttrInts("ngram_indexes", t.indexes),
      AttrInts("pool_int64s", t.pool)};
  if (!t.weights.empty()) a.push_back(AttrFloats("weights", t.weights));
  return MakeNode("TfIdfVectorizer", {"x"}, {"y"}, a);
}

// Counted here from the definition, one row at a time: every n in
// [min_n, max_n], every gap d = 1 .. max_skip + 1 (d = 1 only for n = 1) and
// every start t; the n-gram x[t], x[t+d], .. is compared with each pool
// n-gram. IDF caps each pool n-gram's count at 1; IDF and TFIDF scale pool
// n-gram g by weights[g]; it goes to slot indexes[g].
V NaiveTfidf(const Tfidf& t, const std::vector<int64_t>& x, int64_t rows) {
  const int64_t cols = static_cast<int64_t>(x.size()) / rows;
  int64_t out = 0;
  for (int64_t i : t.indexes) out = std::max(out, i + 1);
  V y(static_cast<size_t>(rows * out), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t g = 0;  // n-gram number across the pool
    for (size_t k = 0; k < t.counts.size(); ++k) {
      const int64_t n = static_cast<int64_t>(k) + 1;
      const int64_t end = k + 1 < t.counts.size() ? t.counts[k + 1]
                                                  : static_cast<int64_t>(t.pool.size());
      for (int64_t at = t.counts[k]; at < end; at += n, ++g) {
        if (n < t.min_n || n > t.max_n) continue;
        double count = 0;
        for (int64_t d = 1; d <= (n == 1 ? 1 : t.max_skip + 1); ++d)
          for (int64_t s = 0; s + (n - 1) * d < cols; ++s) {
            bool same = true;
            for (int64_t j = 0; j < n; ++j)
              same = same && x[static_cast<size_t>(r * cols + s + j * d)] ==
                                 t.pool[static_cast<size_t>(at + j)];
            if (same) count += 1;
          }
        if (t.mode == "IDF") count = std::min(count, 1.0);
        if (t.mode != "TF" && !t.weights.empty()) count *= t.weights[static_cast<size_t>(g)];
        y[static_cast<size_t>(r * out + t.indexes[static_cast<size_t>(g)])] += count;
      }
    }
  }
  return y;
}

std::vector<double> AsDoubles(const std::vector<int64_t>& v) { return V(v.begin(), v.end()); }

TEST(ConvertTfIdfVectorizer, HandCountedBigramsWithSkips) {
  // x = 4 9 4 9 9 4 (positions 0..5), gaps 1 and 2:
  //   (4, 9) at (0,1) (2,3) and (2,4): 3      (9, 4) at (1,2) (4,5) and (3,5): 3
  //   (9, 9) at (3,4) and (1,3): 2             unigram 4 at 0, 2, 5: 3 (once, not per gap)
  Tfidf t;
  t.min_n = 1;
  t.max_n = 2;
  t.max_skip = 1;
  t.counts = {0, 1};
  t.pool = {4, 4, 9, 9, 4, 9, 9};
  t.indexes = {3, 0, 2, 1};  // unigram 4 -> 3, (4,9) -> 0, (9,4) -> 2, (9,9) -> 1
  const std::vector<int64_t> x = {4, 9, 4, 9, 9, 4};
  const NodeOutput y = Exec(9, TfidfNode(t), {In("x", kI64, {6}, AsDoubles(x))});
  ExpectClose(y, {4}, {3, 2, 3, 3}, 0);
  ExpectClose(y, {4}, NaiveTfidf(t, x, 1), 0);
  EXPECT_EQ(y.dtype, kF32);
}

TEST(ConvertTfIdfVectorizer, TrigramsBatchAndModes) {
  Tfidf t;
  t.min_n = 2;
  t.max_n = 3;
  t.max_skip = 2;
  t.counts = {0, 3, 7};
  t.pool = {1, 2, 3, /*bigrams*/ 1, 2, 2, 3, /*trigrams*/ 1, 2, 3, 3, 3, 3};
  t.indexes = {0, 1, 2, 3, 4, 5, 6};
  t.weights = {0.5f, 1.5f, 2.0f, 0.25f, 3.0f, 0.75f, 1.25f};
  const std::vector<int64_t> x = {1, 2, 3, 1, 2, 3, 3, 3, 1, 1, 2, 2, 3, 2, 1, 3};
  for (const char* mode : {"TF", "IDF", "TFIDF"}) {
    t.mode = mode;
    const NodeOutput y = Exec(9, TfidfNode(t), {In("x", kI32, {2, 8}, AsDoubles(x))});
    ExpectClose(y, {2, 7}, NaiveTfidf(t, x, 2), 1e-5);
  }
}

TEST(ConvertTfIdfVectorizer, IdfWithoutWeightsIsPresence) {
  Tfidf t;
  t.mode = "IDF";
  t.min_n = 1;
  t.max_n = 1;
  t.counts = {0};
  t.pool = {7, 8, 5};
  t.indexes = {0, 1, 2};
  // 7 three times, 8 never, 5 once.
  ExpectClose(Exec(9, TfidfNode(t), {In("x", kI64, {5}, {7, 5, 7, 1, 7})}), {3}, {1, 0, 1}, 0);
}

TEST(ConvertTfIdfVectorizer, ShortRowsCountNothing) {
  Tfidf t;
  t.min_n = 3;
  t.max_n = 3;
  t.max_skip = 3;
  t.counts = {0, 0, 0};
  t.pool = {1, 1, 1};
  t.indexes = {1};
  ExpectClose(Exec(9, TfidfNode(t), {In("x", kI64, {3, 2}, {1, 1, 1, 1, 1, 1})}), {3, 2},
             V(6, 0.0), 0);
}

TEST(ConvertTfIdfVectorizer, Errors) {
  Tfidf good;
  good.counts = {0, 2};
  good.pool = {1, 2, 1, 2};
  good.indexes = {0, 1, 2};
  const NamedTensor x = In("x", kI64, {4}, {1, 2, 1, 2});
  auto fails = [&](const Tfidf& t, const NamedTensor& in = In("x", kI64, {4}, {1, 2, 1, 2})) {
    return Fails(9, TfidfNode(t), {in});
  };
  ASSERT_TRUE(RunNode(9, TfidfNode(good), {x}).ok());
  Tfidf t = good;
  t.mode = "BM25";
  absl::Status s = fails(t);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("mode must be TF, IDF or TFIDF"));
  t = good;
  t.indexes = {0, 1};
  EXPECT_THAT(fails(t).message(), HasSubstr("ngram_indexes has 2 entries; the pool holds 3"));
  t = good;
  t.pool = {1, 2, 1, 2, 3};
  EXPECT_THAT(fails(t).message(), HasSubstr("not a multiple of 2"));
  t = good;
  t.counts = {0, 5};
  EXPECT_THAT(fails(t).message(), HasSubstr("nondecreasing offsets"));
  t = good;
  t.min_n = 3;
  EXPECT_THAT(fails(t).message(), HasSubstr("min_gram_length <= max_gram_length"));
  t = good;
  t.max_skip = -1;
  EXPECT_THAT(fails(t).message(), HasSubstr("max_skip_count must be >= 0"));
  t = good;
  t.mode = "TFIDF";
  t.weights = {1, 2};
  EXPECT_THAT(fails(t).message(), HasSubstr("weights has 2 entries"));
  t = good;
  t.indexes = {0, -1, 2};
  EXPECT_THAT(fails(t).message(), HasSubstr("negative index"));
  EXPECT_THAT(fails(good, In("x", kI64, {1, 2, 2}, {1, 2, 1, 2})).message(),
              HasSubstr("[C] or [N, C]"));
  EXPECT_THAT(fails(good, F32In("x", {4}, {1, 2, 1, 2})).message(), HasSubstr("int32 or int64"));
  // A missing required attribute, and pool_strings.
  onnx::NodeProto n = TfidfNode(good);
  n.mutable_attribute()->erase(n.mutable_attribute()->begin() + 1);  // min_gram_length
  s = Fails(9, n, {x});
  EXPECT_THAT(s.message(), HasSubstr("attribute min_gram_length is required")) << s;
  n = TfidfNode(good);
  *n.add_attribute() = AttrStrings("pool_strings", {"a", "b"});
  s = Fails(9, n, {x});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), HasSubstr("pool_strings"));
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
