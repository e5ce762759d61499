// The nn converters (convert_nn.cc): one-node models imported and run by the
// interpreter, against reference values computed here by plain loops from
// ONNX's definitions (convolution, pooling, normalization, LRN), for
// representative attributes and opset forms. Matrix products, softmax,
// losses and dropout: convert_nn_dense_test.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/convert_test_util.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::onnx_frontend::testing {
namespace {

using ::testing::HasSubstr;
using V = std::vector<double>;
using S = std::vector<int64_t>;

constexpr DataType kF32 = DataType::Float(32);
constexpr DataType kBool = DataType::Bool();
constexpr DataType kI32 = DataType::Int(32);
constexpr DataType kI64 = DataType::Int(64);

using Out = NodeOutput;

// ---- references --------------------------------------------------------------

struct Conv {
  S strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0};  // pads: top, left, bottom, right
  int64_t groups = 1;
};

// NCHW x OIHW convolution, zero padding, as ONNX Conv defines it.
V RefConv2D(const V& x, const S& xs, const V& w, const S& ws, const V& bias, const Conv& p, S* os) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t M = ws[0], CG = ws[1], KH = ws[2], KW = ws[3];
  const int64_t OH = (H + p.pads[0] + p.pads[2] - p.dilations[0] * (KH - 1) - 1) / p.strides[0] + 1;
  const int64_t OW = (W + p.pads[1] + p.pads[3] - p.dilations[1] * (KW - 1) - 1) / p.strides[1] + 1;
  *os = {N, M, OH, OW};
  V out(static_cast<size_t>(N * M * OH * OW), 0.0);
  const int64_t mpg = M / p.groups;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(m)];
          for (int64_t cg = 0; cg < CG; ++cg) {
            const int64_t c = (m / mpg) * CG + cg;
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * p.strides[0] - p.pads[0] + kh * p.dilations[0];
                const int64_t iw = ow * p.strides[1] - p.pads[1] + kw * p.dilations[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += x[static_cast<size_t>(((n * C + c) * H + ih) * W + iw)] *
                       w[static_cast<size_t>(((m * CG + cg) * KH + kh) * KW + kw)];
              }
          }
          out[static_cast<size_t>(((n * M + m) * OH + oh) * OW + ow)] = acc;
        }
  return out;
}

struct Pool {
  S kernel, strides{1, 1}, dilations{1, 1}, pads{0, 0, 0, 0};
  bool max = true, count_include_pad = false, ceil_mode = false;
};

// NCHW pooling as ONNX defines it: max ignores padding; average divides by the
// window's positions inside the data, or (count_include_pad) by the kernel size.
V RefPool2D(const V& x, const S& xs, const Pool& p, S* os) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  auto out_dim = [&](int64_t in, int64_t k, int64_t s, int64_t d, int64_t pads) {
    const double v = static_cast<double>(in + pads - d * (k - 1) - 1) / static_cast<double>(s);
    return static_cast<int64_t>(p.ceil_mode ? std::ceil(v) : std::floor(v)) + 1;
  };
  const int64_t OH = out_dim(H, p.kernel[0], p.strides[0], p.dilations[0], p.pads[0] + p.pads[2]);
  const int64_t OW = out_dim(W, p.kernel[1], p.strides[1], p.dilations[1], p.pads[1] + p.pads[3]);
  *os = {N, C, OH, OW};
  V out;
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t count = 0;
        for (int64_t kh = 0; kh < p.kernel[0]; ++kh)
          for (int64_t kw = 0; kw < p.kernel[1]; ++kw) {
            const int64_t ih = oh * p.strides[0] - p.pads[0] + kh * p.dilations[0];
            const int64_t iw = ow * p.strides[1] - p.pads[1] + kw * p.dilations[1];
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const double v = x[static_cast<size_t>((nc * H + ih) * W + iw)];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        const int64_t div = p.count_include_pad ? p.kernel[0] * p.kernel[1] : count;
        out.push_back(p.max ? best : sum / static_cast<double>(div));
      }
  return out;
}

// ---- Conv -----------------------------------------------------------------------

TEST(ConvertConv, GroupsStridesDilationsPadsBias) {
  const S xs = {1, 4, 7, 6}, ws = {6, 2, 3, 2};
  const V x = Data(Numel(xs)), w = Data(Numel(ws), 1.1), b = {0.5, -1, 2, 0, 1, -0.25};
  Conv p;
  p.strides = {2, 1};
  p.dilations = {1, 2};
  p.pads = {1, 0, 2, 1};
  p.groups = 2;
  S os;
  const V want = RefConv2D(x, xs, w, ws, b, p, &os);
  const Out got = Exec(11,
                      MakeNode("Conv", {"x", "w", "b"}, {"y"},
                               {AttrInt("group", 2), AttrInts("strides", {2, 1}),
                                AttrInts("dilations", {1, 2}), AttrInts("pads", {1, 0, 2, 1}),
                                AttrInts("kernel_shape", {3, 2})}),
                      {F32In("x", xs, x), Init("w", kF32, ws, w), Init("b", kF32, {6}, b)});
  ExpectNear(got, os, want);
}

TEST(ConvertConv, AutoPadSameUpperAndLower) {
  // H = W = 7, kernel 4, stride 2: out 4, total padding 3 -> UPPER (1, 2), LOWER (2, 1).
  const S xs = {1, 2, 7, 7}, ws = {3, 2, 4, 4};
  const V x = Data(Numel(xs)), w = Data(Numel(ws), 0.7);
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    Conv p;
    p.strides = {2, 2};
    p.pads = std::string(mode) == "SAME_UPPER" ? S{1, 1, 2, 2} : S{2, 2, 1, 1};
    S os;
    const V want = RefConv2D(x, xs, w, ws, {}, p, &os);
    EXPECT_EQ(os, (S{1, 3, 4, 4}));
    const Out got = Exec(1,
                        MakeNode("Conv", {"x", "w"}, {"y"},
                                 {AttrString("auto_pad", mode), AttrInts("strides", {2, 2})}),
                        {F32In("x", xs, x), Init("w", kF32, ws, w)});
    ExpectNear(got, os, want);
  }
}

TEST(ConvertConv, ValidIgnoresPads) {
  const S xs = {1, 1, 5, 5}, ws = {1, 1, 3, 3};
  const V x = Data(Numel(xs)), w = Data(Numel(ws), 0.2);
  S os;
  const V want = RefConv2D(x, xs, w, ws, {}, Conv{}, &os);
  const Out got = Exec(11,
                      MakeNode("Conv", {"x", "w"}, {"y"},
                               {AttrString("auto_pad", "VALID"), AttrInts("pads", {1, 1, 1, 1})}),
                      {F32In("x", xs, x), Init("w", kF32, ws, w)});
  ExpectNear(got, os, want);
}

TEST(ConvertConv, Depthwise) {
  const S xs = {2, 3, 5, 4}, ws = {3, 1, 3, 3};
  const V x = Data(Numel(xs)), w = Data(Numel(ws), 2.0);
  Conv p;
  p.groups = 3;
  p.pads = {1, 1, 1, 1};
  S os;
  const V want = RefConv2D(x, xs, w, ws, {}, p, &os);
  const Out got = Exec(11,
                      MakeNode("Conv", {"x", "w"}, {"y"},
                               {AttrInt("group", 3), AttrInts("pads", {1, 1, 1, 1})}),
                      {F32In("x", xs, x), F32In("w", ws, w)});
  ExpectNear(got, os, want);
}

TEST(ConvertConv, OneDimensional) {
  // 1-D conv [N, C, L] == 2-D conv over a unit H.
  const S xs = {2, 2, 9}, ws = {4, 2, 3};
  const V x = Data(Numel(xs)), w = Data(Numel(ws), 0.9), b = {1, 2, 3, 4};
  Conv p;
  p.strides = {1, 2};
  p.dilations = {1, 2};
  p.pads = {0, 2, 0, 1};
  S os;
  const V want = RefConv2D(x, {2, 2, 1, 9}, w, {4, 2, 1, 3}, b, p, &os);
  const Out got = Exec(11,
                      MakeNode("Conv", {"x", "w", "b"}, {"y"},
                               {AttrInts("strides", {2}), AttrInts("dilations", {2}),
                                AttrInts("pads", {2, 1})}),
                      {F32In("x", xs, x), Init("w", kF32, ws, w), Init("b", kF32, {4}, b)});
  ExpectNear(got, {os[0], os[1], os[3]}, want);
}

// A 3-D ConvTranspose against its definition: each input voxel scatters
// x * W to o = i * stride - pad_begin + k * dilation (groups, output_padding
// at the end, a bias).
TEST(ConvertConv, ThreeDimensionalTransposed) {
  const S xs = {1, 4, 2, 3, 2}, ws = {4, 3, 2, 2, 3};  // group 2: C 4 -> M 6
  const V x = Data(Numel(xs)), w = Data(Numel(ws), 0.7), b = {0.5, -1, 2, 0.25, 1, -0.5};
  const S st = {2, 1, 2}, dil = {1, 2, 1}, pb = {1, 0, 0}, pe = {0, 1, 1}, op = {1, 0, 1};
  const int64_t group = 2, C = 4, M = 6, cg = C / group, mg = M / group;
  S os = {1, M, 0, 0, 0};
  for (size_t i = 0; i < 3; ++i)
    os[2 + i] = st[i] * (xs[2 + i] - 1) + op[i] + (ws[2 + i] - 1) * dil[i] + 1 - pb[i] - pe[i];
  V want(static_cast<size_t>(Numel(os)), 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t v = 0; v < os[2] * os[3] * os[4]; ++v) want[static_cast<size_t>(m * os[2] * os[3] * os[4] + v)] = b[m];
  for (int64_t ch = 0; ch < C; ++ch)
    for (int64_t id = 0; id < xs[2]; ++id)
      for (int64_t ih = 0; ih < xs[3]; ++ih)
        for (int64_t iw = 0; iw < xs[4]; ++iw)
          for (int64_t mm = 0; mm < mg; ++mm)
            for (int64_t kd = 0; kd < ws[2]; ++kd)
              for (int64_t kh = 0; kh < ws[3]; ++kh)
                for (int64_t kw = 0; kw < ws[4]; ++kw) {
                  const int64_t od = id * st[0] - pb[0] + kd * dil[0], oh = ih * st[1] - pb[1] + kh * dil[1],
                                ow = iw * st[2] - pb[2] + kw * dil[2];
                  if (od < 0 || od >= os[2] || oh < 0 || oh >= os[3] || ow < 0 || ow >= os[4]) continue;
                  const int64_t m = (ch / cg) * mg + mm;
                  want[static_cast<size_t>(((m * os[2] + od) * os[3] + oh) * os[4] + ow)] +=
                      x[static_cast<size_t>(((ch * xs[2] + id) * xs[3] + ih) * xs[4] + iw)] *
                      w[static_cast<size_t>((((ch * mg + mm) * ws[2] + kd) * ws[3] + kh) * ws[4] + kw)];
                }
  const Out got = Exec(11,
                      MakeNode("ConvTranspose", {"x", "w", "b"}, {"y"},
                               {AttrInts("strides", st), AttrInts("dilations", dil),
                                AttrInts("pads", {pb[0], pb[1], pb[2], pe[0], pe[1], pe[2]}),
                                AttrInts("output_padding", op), AttrInt("group", group)}),
                      {F32In("x", xs, x), Init("w", kF32, ws, w), Init("b", kF32, {M}, b)});
  ExpectNear(got, os, want);
}

// ConvTranspose by its definition: every input pixel scatters x * W into the
// output at ih * stride + kh * dilation - pad_begin.
V RefConvTranspose2D(const V& x, const S& xs, const V& w, const S& ws, const S& strides,
                     const S& dil, const S& pads, const S& out_pad, int64_t groups, S* os) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t MG = ws[1], KH = ws[2], KW = ws[3], M = MG * groups, CG = C / groups;
  const int64_t OH = strides[0] * (H - 1) + out_pad[0] + (KH - 1) * dil[0] + 1 - pads[0] - pads[2];
  const int64_t OW = strides[1] * (W - 1) + out_pad[1] + (KW - 1) * dil[1] + 1 - pads[1] - pads[3];
  *os = {N, M, OH, OW};
  V y(static_cast<size_t>(N * M * OH * OW), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ih = 0; ih < H; ++ih)
        for (int64_t iw = 0; iw < W; ++iw)
          for (int64_t mo = 0; mo < MG; ++mo)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t oh = ih * strides[0] + kh * dil[0] - pads[0];
                const int64_t ow = iw * strides[1] + kw * dil[1] - pads[1];
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                const int64_t m = (c / CG) * MG + mo;
                y[static_cast<size_t>(((n * M + m) * OH + oh) * OW + ow)] +=
                    x[static_cast<size_t>(((n * C + c) * H + ih) * W + iw)] *
                    w[static_cast<size_t>(((c * MG + mo) * KH + kh) * KW + kw)];
              }
  return y;
}

TEST(ConvertConvTranspose, StridesDilationsPadsGroups) {
  const S xs = {1, 4, 3, 4}, ws = {4, 3, 3, 2};
  const V x = Data(Numel(xs)), w = Data(Numel(ws), 0.4), b = {1, 0, -1, 2, 0.5, 0};
  S os;
  V want = RefConvTranspose2D(x, xs, w, ws, {2, 3}, {1, 2}, {1, 0, 2, 3}, {1, 0}, 2, &os);
  for (int64_t i = 0; i < Numel(os); ++i) want[static_cast<size_t>(i)] += b[static_cast<size_t>((i / (os[2] * os[3])) % 6)];
  const Out got = Exec(11,
                       MakeNode("ConvTranspose", {"x", "w", "b"}, {"y"},
                                {AttrInt("group", 2), AttrInts("strides", {2, 3}),
                                 AttrInts("dilations", {1, 2}), AttrInts("pads", {1, 0, 2, 3}),
                                 AttrInts("output_padding", {1, 0})}),
                       {F32In("x", xs, x), Init("w", kF32, ws, w), Init("b", kF32, {6}, b)});
  ExpectNear(got, os, want);
}

TEST(ConvertConvTranspose, OutputShapeAndOneDimensional) {
  // output_shape 8 from in 3, k 3, stride 2: full length 7, so total padding -1:
  // one extra output at the end, as output_padding = 1 would give.
  const S xs = {1, 1, 3}, ws = {1, 2, 3};
  const V x = {1, 2, 3}, w = Data(6, 0.2);
  S os;
  const V want = RefConvTranspose2D(x, {1, 1, 1, 3}, w, {1, 2, 1, 3}, {1, 2}, {1, 1}, {0, 0, 0, 0},
                                    {0, 1}, 1, &os);
  const Out got = Exec(11,
                       MakeNode("ConvTranspose", {"x", "w"}, {"y"},
                                {AttrInts("strides", {2}), AttrInts("output_shape", {8})}),
                       {F32In("x", xs, x), Init("w", kF32, ws, w)});
  ExpectNear(got, {1, 2, 8}, want);
}

// Strided ConvTranspose (dilation 1) imports as one stride-1 convolution per
// output phase, or one for all phases when they read the same window (k = s,
// groups 1): no zeros inserted into the input (no nn.pad of it). Checked
// against the definition over kernels smaller than, equal to and larger
// than the stride, pads that crop past the kernel, output_padding, groups
// and different strides per axis. A kernel smaller than the stride on some
// axis (a phase with no tap) keeps the zero-inserted form.
TEST(ConvertConvTranspose, StridedKernelsByOutputPhase) {
  struct Case {
    S ks, strides, pads, out_pad;
    int64_t groups;
    int convs;  // conv2d calls expected; 0: the zero-inserted form
  };
  const std::vector<Case> cases = {
      {{2, 2}, {2, 2}, {0, 0, 0, 0}, {0, 0}, 1, 1},   // U-Net's up-convolution
      {{4, 4}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 1, 4},   // DCGAN
      {{4, 4}, {2, 2}, {1, 1, 1, 1}, {0, 0}, 2, 4},
      {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, 4},
      {{3, 5}, {2, 3}, {0, 2, 1, 0}, {1, 2}, 1, 6},
      {{3, 3}, {3, 3}, {0, 0, 0, 0}, {0, 0}, 2, 9},  // groups: a conv per phase
      {{5, 4}, {2, 2}, {5, 0, 3, 4}, {0, 1}, 1, 4},  // pads past the kernel crop
      {{1, 3}, {1, 2}, {0, 1, 0, 1}, {0, 0}, 1, 2},
      {{2, 1}, {2, 2}, {0, 0, 0, 0}, {0, 0}, 1, 0},  // a 1-wide kernel, stride 2
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(absl::StrCat("k ", k.ks[0], "x", k.ks[1], " s ", k.strides[0], "x", k.strides[1],
                              " groups ", k.groups));
    const int64_t c = 2 * k.groups, mg = 3;
    const S xs = {1, c, 4, 5}, ws = {c, mg, k.ks[0], k.ks[1]};
    const V x = Data(Numel(xs)), w = Data(Numel(ws), 0.7);
    V b(static_cast<size_t>(mg * k.groups));
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.25 * static_cast<double>(i) - 0.5;
    S os;
    V want = RefConvTranspose2D(x, xs, w, ws, k.strides, {1, 1}, k.pads, k.out_pad, k.groups, &os);
    for (int64_t i = 0; i < Numel(os); ++i) {
      want[static_cast<size_t>(i)] += b[static_cast<size_t>((i / (os[2] * os[3])) % os[1])];
    }
    const onnx::NodeProto node =
        MakeNode("ConvTranspose", {"x", "w", "b"}, {"y"},
                 {AttrInt("group", k.groups), AttrInts("strides", k.strides),
                  AttrInts("pads", k.pads), AttrInts("output_padding", k.out_pad)});
    const std::vector<NamedTensor> in = {F32In("x", xs, x), Init("w", kF32, ws, w),
                                         Init("b", kF32, {mg * k.groups}, b)};
    ExpectNear(Exec(11, node, in), os, want);
    absl::StatusOr<std::string> text = ImportedText(11, node, in);
    ASSERT_TRUE(text.ok()) << text.status();
    int convs = 0;
    for (size_t at = text->find("nn.conv2d("); at != std::string::npos;
         at = text->find("nn.conv2d(", at + 1)) {
      ++convs;
    }
    if (k.convs > 0) {
      EXPECT_EQ(convs, k.convs) << *text;
      EXPECT_EQ(text->find("nn.pad("), std::string::npos) << *text;
    } else {
      EXPECT_EQ(convs, 1) << *text;
      EXPECT_NE(text->find("nn.pad("), std::string::npos) << *text;
    }
  }
}

// ---- pooling ----------------------------------------------------------------------

TEST(ConvertPool, AveragePoolCountIncludePad) {
  const S xs = {1, 2, 5, 6};
  const V x = Data(Numel(xs));
  for (int64_t include : {0, 1}) {
    Pool p;
    p.max = false;
    p.kernel = {3, 3};
    p.strides = {2, 2};
    p.pads = {1, 1, 1, 1};
    p.count_include_pad = include != 0;
    S os;
    const V want = RefPool2D(x, xs, p, &os);
    const Out got = Exec(11,
                        MakeNode("AveragePool", {"x"}, {"y"},
                                 {AttrInts("kernel_shape", {3, 3}), AttrInts("strides", {2, 2}),
                                  AttrInts("pads", {1, 1, 1, 1}),
                                  AttrInt("count_include_pad", include)}),
                        {F32In("x", xs, x)});
    ExpectNear(got, os, want);
  }
}

TEST(ConvertPool, MaxPoolCeilModeDilations) {
  const S xs = {1, 1, 8, 7};
  const V x = Data(Numel(xs));
  Pool p;
  p.kernel = {2, 3};
  p.strides = {3, 2};
  p.dilations = {2, 1};
  p.ceil_mode = true;
  S os;
  const V want = RefPool2D(x, xs, p, &os);
  const Out got = Exec(12,
                      MakeNode("MaxPool", {"x"}, {"y"},
                               {AttrInts("kernel_shape", {2, 3}), AttrInts("strides", {3, 2}),
                                AttrInts("dilations", {2, 1}), AttrInt("ceil_mode", 1)}),
                      {F32In("x", xs, x)});
  ExpectNear(got, os, want);
}

TEST(ConvertPool, OneDimensionalSameUpper) {
  // L = 7, kernel 3, stride 2: out 4, total padding 2 -> (1, 1).
  const S xs = {1, 2, 7};
  const V x = Data(Numel(xs));
  for (bool is_max : {true, false}) {
    Pool p;
    p.max = is_max;
    p.kernel = {1, 3};
    p.strides = {1, 2};
    p.pads = {0, 1, 0, 1};
    S os;
    const V want = RefPool2D(x, {1, 2, 1, 7}, p, &os);
    const Out got = Exec(11,
                        MakeNode(is_max ? "MaxPool" : "AveragePool", {"x"}, {"y"},
                                 {AttrInts("kernel_shape", {3}), AttrInts("strides", {2}),
                                  AttrString("auto_pad", "SAME_UPPER")}),
                        {F32In("x", xs, x)});
    ExpectNear(got, {1, 2, 4}, want);
  }
}

// MaxPool's Indices, against a loop over every window: the flat index of
// the first maximum (row-major, or the spatial part column-major with
// storage_order 1), with padding, strides, dilations and ties.
TEST(ConvertPool, MaxPoolIndices) {
  const S xs = {2, 2, 5, 4};
  V x = Data(Numel(xs));
  for (size_t i = 0; i < x.size(); i += 3) x[i] = x[(i + 1) % x.size()];  // ties
  for (int64_t order : {0, 1}) {
    const int64_t kh = 2, kw = 3, sh = 2, sw = 1, dh = 2, dw = 1, ph = 1, pw = 1;
    const int64_t H = 5, W = 4;
    const int64_t oh = (H + 2 * ph - dh * (kh - 1) - 1) / sh + 1, ow = (W + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
    V vals, idx;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t ch = 0; ch < 2; ++ch)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            double best = -1e300;
            int64_t at = -1;
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t b = 0; b < kw; ++b) {
                const int64_t h = i * sh - ph + a * dh, w = j * sw - pw + b * dw;
                if (h < 0 || h >= H || w < 0 || w >= W) continue;
                const double v = x[static_cast<size_t>(((n * 2 + ch) * H + h) * W + w)];
                if (v > best) {
                  best = v;
                  at = (n * 2 + ch) * H * W + (order == 0 ? h * W + w : h + w * H);
                }
              }
            vals.push_back(best);
            idx.push_back(static_cast<double>(at));
          }
    std::vector<Out> got = ExecAll(
        12,
        MakeNode("MaxPool", {"x"}, {"y", "idx"},
                 {AttrInts("kernel_shape", {kh, kw}), AttrInts("strides", {sh, sw}), AttrInts("dilations", {dh, dw}),
                  AttrInts("pads", {ph, pw, ph, pw}), AttrInt("storage_order", order)}),
        {F32In("x", xs, x)});
    ASSERT_EQ(got.size(), 2u);
    ExpectNear(got[0], {2, 2, oh, ow}, vals);
    EXPECT_EQ(got[1].dtype, DataType::Int(64));
    ExpectNear(got[1], {2, 2, oh, ow}, idx);
  }
  const absl::Status st = RunStatus(12,
                                    MakeNode("MaxPool", {"x"}, {"y", "idx"},
                                             {AttrInts("kernel_shape", {2, 2}), AttrInt("storage_order", 2)}),
                                    {F32In("x", {1, 1, 4, 4}, Data(16))});
  EXPECT_THAT(st.message(), HasSubstr("storage_order 2 is not 0 or 1"));
}

TEST(ConvertPool, GlobalPoolsOfOtherRanks) {
  const S xs = {2, 3, 5};
  const V x = Data(Numel(xs));
  V mean, mx;
  for (int64_t nc = 0; nc < 6; ++nc) {
    double s = 0, m = -1e9;
    for (int64_t i = 0; i < 5; ++i) {
      s += x[static_cast<size_t>(nc * 5 + i)];
      m = std::max(m, x[static_cast<size_t>(nc * 5 + i)]);
    }
    mean.push_back(s / 5);
    mx.push_back(m);
  }
  ExpectNear(Exec(1, MakeNode("GlobalAveragePool", {"x"}, {"y"}), {F32In("x", xs, x)}), {2, 3, 1}, mean);
  ExpectNear(Exec(1, MakeNode("GlobalMaxPool", {"x"}, {"y"}), {F32In("x", xs, x)}), {2, 3, 1}, mx);
  // 4-D: the global pool operators.
  ExpectNear(Exec(1, MakeNode("GlobalAveragePool", {"x"}, {"y"}), {F32In("x", {2, 3, 5, 1}, x)}),
             {2, 3, 1, 1}, mean);
}

// ---- 3-D windows -------------------------------------------------------------------

// NCDHW convolution with zero padding; pads {d0, h0, w0, d1, h1, w1}.
V RefConv3D(const V& x, const S& xs, const V& w, const S& ws, const S& st, const S& dil,
            const S& pads, int64_t groups, S* os) {
  const int64_t N = xs[0], C = xs[1], M = ws[0], CG = ws[1];
  S in = {xs[2], xs[3], xs[4]}, k = {ws[2], ws[3], ws[4]}, out(3);
  for (size_t i = 0; i < 3; ++i) out[i] = (in[i] + pads[i] + pads[i + 3] - dil[i] * (k[i] - 1) - 1) / st[i] + 1;
  *os = {N, M, out[0], out[1], out[2]};
  V y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            double acc = 0;
            for (int64_t cg = 0; cg < CG; ++cg)
              for (int64_t a = 0; a < k[0]; ++a)
                for (int64_t b = 0; b < k[1]; ++b)
                  for (int64_t e = 0; e < k[2]; ++e) {
                    const int64_t id = od * st[0] - pads[0] + a * dil[0];
                    const int64_t ih = oh * st[1] - pads[1] + b * dil[1];
                    const int64_t iw = ow * st[2] - pads[2] + e * dil[2];
                    if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                    const int64_t c = (m / (M / groups)) * CG + cg;
                    acc += x[static_cast<size_t>((((n * C + c) * in[0] + id) * in[1] + ih) * in[2] + iw)] *
                           w[static_cast<size_t>((((m * CG + cg) * k[0] + a) * k[1] + b) * k[2] + e)];
                  }
            y.push_back(acc);
          }
  return y;
}

// NCDHW pooling as ONNX defines it (ceil_mode off): max ignores padding;
// average divides by the in-data count, or the kernel volume with
// count_include_pad.
V RefPool3D(const V& x, const S& xs, const S& k, const S& st, const S& pads, bool is_max,
            bool include_pad, S* os) {
  S in = {xs[2], xs[3], xs[4]}, out(3);
  for (size_t i = 0; i < 3; ++i) out[i] = (in[i] + pads[i] + pads[i + 3] - k[i]) / st[i] + 1;
  *os = {xs[0], xs[1], out[0], out[1], out[2]};
  V y;
  for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
    for (int64_t od = 0; od < out[0]; ++od)
      for (int64_t oh = 0; oh < out[1]; ++oh)
        for (int64_t ow = 0; ow < out[2]; ++ow) {
          double best = -1e300, sum = 0;
          int64_t count = 0;
          for (int64_t a = 0; a < k[0]; ++a)
            for (int64_t b = 0; b < k[1]; ++b)
              for (int64_t e = 0; e < k[2]; ++e) {
                const int64_t id = od * st[0] - pads[0] + a, ih = oh * st[1] - pads[1] + b,
                              iw = ow * st[2] - pads[2] + e;
                if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                const double v = x[static_cast<size_t>(((nc * in[0] + id) * in[1] + ih) * in[2] + iw)];
                best = std::max(best, v);
                sum += v;
                ++count;
              }
          y.push_back(is_max ? best : sum / static_cast<double>(include_pad ? k[0] * k[1] * k[2] : count));
        }
  return y;
}

TEST(ConvertConv3D, StridesDilationsPadsGroups) {
  const S xs = {1, 4, 5, 4, 6}, ws = {2, 2, 3, 2, 3};
  const V x = Data(Numel(xs)), w = Data(Numel(ws), 0.5);
  S os;
  const V want = RefConv3D(x, xs, w, ws, {2, 1, 2}, {1, 2, 1}, {1, 0, 1, 2, 1, 0}, 2, &os);
  const Out got = Exec(11,
                       MakeNode("Conv", {"x", "w"}, {"y"},
                                {AttrInt("group", 2), AttrInts("strides", {2, 1, 2}),
                                 AttrInts("dilations", {1, 2, 1}), AttrInts("pads", {1, 0, 1, 2, 1, 0})}),
                       {F32In("x", xs, x), Init("w", kF32, ws, w)});
  ExpectNear(got, os, want);
}

TEST(ConvertConv3D, Pools) {
  const S xs = {1, 2, 5, 4, 3};
  const V x = Data(Numel(xs));
  for (bool is_max : {true, false})
    for (int64_t include : {0, 1}) {
      if (is_max && include) continue;
      S os;
      const V want = RefPool3D(x, xs, {3, 2, 2}, {2, 1, 2}, {1, 0, 1, 1, 1, 0}, is_max, include != 0, &os);
      std::vector<onnx::AttributeProto> attrs = {AttrInts("kernel_shape", {3, 2, 2}),
                                                 AttrInts("strides", {2, 1, 2}),
                                                 AttrInts("pads", {1, 0, 1, 1, 1, 0})};
      if (!is_max) attrs.push_back(AttrInt("count_include_pad", include));
      const Out got = Exec(11, MakeNode(is_max ? "MaxPool" : "AveragePool", {"x"}, {"y"}, attrs),
                           {F32In("x", xs, x)});
      ExpectNear(got, os, want);
    }
}

// ---- normalization ------------------------------------------------------------------

TEST(ConvertNorm, BatchNormSpatialAndPerActivation) {
  const S xs = {2, 3, 2, 2};
  const V x = Data(Numel(xs));
  const V scale = {1, 2, 0.5}, bias = {0, 1, -1}, mean = {0.1, -0.2, 0.3}, var = {1, 0.5, 2};
  const double eps = 1e-3;
  V want;
  for (int64_t i = 0; i < Numel(xs); ++i) {
    const size_t c = static_cast<size_t>((i / 4) % 3);
    want.push_back((x[static_cast<size_t>(i)] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + bias[c]);
  }
  for (int64_t opset : {7, 9, 15}) {
    const Out got = Exec(opset,
                        MakeNode("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"},
                                 {AttrFloat("epsilon", static_cast<float>(eps))}),
                        {F32In("x", xs, x), Init("s", kF32, {3}, scale), Init("b", kF32, {3}, bias),
                         Init("m", kF32, {3}, mean), Init("v", kF32, {3}, var)});
    ExpectNear(got, xs, want);
  }
  // spatial=0 (opset 7): statistics per activation, shaped [C, H, W].
  const S ps = {3, 2, 2};
  const V s2 = Data(12, 0.1), b2 = Data(12, 0.2), m2 = Data(12, 0.4);
  V v2 = Data(12, 0.5);
  for (double& v : v2) v = v * v + 0.1;
  V want2;
  for (int64_t i = 0; i < Numel(xs); ++i) {
    const size_t j = static_cast<size_t>(i % 12);
    want2.push_back((x[static_cast<size_t>(i)] - m2[j]) / std::sqrt(v2[j] + 1e-5) * s2[j] + b2[j]);
  }
  const Out got = Exec(7,
                      MakeNode("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"},
                               {AttrInt("spatial", 0)}),
                      {F32In("x", xs, x), Init("s", kF32, ps, s2), Init("b", kF32, ps, b2),
                       Init("m", kF32, ps, m2), Init("v", kF32, ps, v2)});
  ExpectNear(got, xs, want2);
}

TEST(ConvertNorm, BatchNormTrainingMode) {
  // Opset 14+: batch statistics over N and spatial axes; running statistics
  // blended with momentum.
  const S xs = {2, 2, 3};
  const V x = Data(12), scale = {1, 2}, bias = {0.5, -1}, rmean = {0.1, 0.2}, rvar = {1, 2};
  const double momentum = 0.8, eps = 1e-5;
  V want(12), want_mean, want_var;
  for (int64_t ch = 0; ch < 2; ++ch) {
    double m = 0, v = 0;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t i = 0; i < 3; ++i) m += x[static_cast<size_t>((n * 2 + ch) * 3 + i)] / 6;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t i = 0; i < 3; ++i) v += std::pow(x[static_cast<size_t>((n * 2 + ch) * 3 + i)] - m, 2) / 6;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t i = 0; i < 3; ++i) {
        const size_t k = static_cast<size_t>((n * 2 + ch) * 3 + i), c = static_cast<size_t>(ch);
        want[k] = (x[k] - m) / std::sqrt(v + eps) * scale[c] + bias[c];
      }
    want_mean.push_back(rmean[static_cast<size_t>(ch)] * momentum + m * (1 - momentum));
    want_var.push_back(rvar[static_cast<size_t>(ch)] * momentum + v * (1 - momentum));
  }
  const std::vector<Out> got =
      ExecAll(15,
              MakeNode("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "rm", "rv"},
                       {AttrInt("training_mode", 1), AttrFloat("momentum", 0.8f)}),
              {F32In("x", xs, x), Init("s", kF32, {2}, scale), Init("b", kF32, {2}, bias),
               Init("m", kF32, {2}, rmean), Init("v", kF32, {2}, rvar)});
  ASSERT_EQ(got.size(), 3u);
  ExpectNear(got[0], xs, want);
  ExpectNear(got[1], {2}, want_mean);
  ExpectNear(got[2], {2}, want_var);
  const std::vector<NamedTensor> in = {F32In("x", xs, x), Init("s", kF32, {2}, scale),
                                       Init("b", kF32, {2}, bias), Init("m", kF32, {2}, rmean),
                                       Init("v", kF32, {2}, rvar)};
  // Opsets 7-13: requesting the running statistics means training mode.
  const std::vector<Out> got9 = ExecAll(
      9, MakeNode("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "mean"},
                  {AttrFloat("momentum", 0.8f)}),
      in);
  ASSERT_EQ(got9.size(), 2u);
  ExpectNear(got9[0], xs, want);
  ExpectNear(got9[1], {2}, want_mean);
  // Before opset 7: is_test=0 (the default) is training mode, is_test=1 inference.
  ExpectNear(Exec(6, MakeNode("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}), in), xs, want);
  V infer;
  for (int64_t i = 0; i < 12; ++i) {
    const size_t ch = static_cast<size_t>((i / 3) % 2);
    infer.push_back((x[static_cast<size_t>(i)] - rmean[ch]) / std::sqrt(rvar[ch] + eps) * scale[ch] + bias[ch]);
  }
  ExpectNear(Exec(6, MakeNode("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, {AttrInt("is_test", 1)}), in),
             xs, infer);
  // saved_mean / saved_var (training internals) are not converted.
  const absl::Status st = RunStatus(
      9, MakeNode("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y", "mean", "var", "sm"}), in);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
}

TEST(ConvertNorm, InstanceNormalization) {
  const S xs = {2, 2, 3, 2};
  const V x = Data(Numel(xs)), scale = {1.5, -0.5}, bias = {0.25, 1};
  V want(x.size());
  for (int64_t nc = 0; nc < 4; ++nc) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < 6; ++i) m += x[static_cast<size_t>(nc * 6 + i)] / 6;
    for (int64_t i = 0; i < 6; ++i) v += std::pow(x[static_cast<size_t>(nc * 6 + i)] - m, 2) / 6;
    for (int64_t i = 0; i < 6; ++i) {
      const size_t k = static_cast<size_t>(nc * 6 + i), c = static_cast<size_t>(nc % 2);
      want[k] = (x[k] - m) / std::sqrt(v + 0.01) * scale[c] + bias[c];
    }
  }
  const Out got = Exec(6,
                      MakeNode("InstanceNormalization", {"x", "s", "b"}, {"y"},
                               {AttrFloat("epsilon", 0.01f)}),
                      {F32In("x", xs, x), Init("s", kF32, {2}, scale), Init("b", kF32, {2}, bias)});
  ExpectNear(got, xs, want);
}

TEST(ConvertNorm, LayerNormalizationWithStatistics) {
  // axis = 1 of [2, 3, 4]: normalize over 12 elements per batch item; no B.
  const S xs = {2, 3, 4};
  const V x = Data(Numel(xs)), scale = Data(12, 0.9);
  V want(x.size()), mean, inv;
  for (int64_t n = 0; n < 2; ++n) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < 12; ++i) m += x[static_cast<size_t>(n * 12 + i)] / 12;
    for (int64_t i = 0; i < 12; ++i) v += std::pow(x[static_cast<size_t>(n * 12 + i)] - m, 2) / 12;
    mean.push_back(m);
    inv.push_back(1 / std::sqrt(v + 1e-5));
    for (int64_t i = 0; i < 12; ++i)
      want[static_cast<size_t>(n * 12 + i)] =
          (x[static_cast<size_t>(n * 12 + i)] - m) * inv.back() * scale[static_cast<size_t>(i)];
  }
  const std::vector<Out> got = ExecAll(17,
                                      MakeNode("LayerNormalization", {"x", "s"}, {"y", "mean", "inv"},
                                               {AttrInt("axis", 1)}),
                                      {F32In("x", xs, x), Init("s", kF32, {3, 4}, scale)});
  ASSERT_EQ(got.size(), 3u);
  ExpectNear(got[0], xs, want);
  ExpectNear(got[1], {2, 1, 1}, mean);
  ExpectNear(got[2], {2, 1, 1}, inv);
}

TEST(ConvertNorm, LayerNormalizationLastAxisWithBias) {
  const S xs = {3, 4};
  const V x = Data(12), scale = {1, 2, 3, 4}, bias = {0, -1, 1, 0.5};
  V want;
  for (int64_t r = 0; r < 3; ++r) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < 4; ++i) m += x[static_cast<size_t>(r * 4 + i)] / 4;
    for (int64_t i = 0; i < 4; ++i) v += std::pow(x[static_cast<size_t>(r * 4 + i)] - m, 2) / 4;
    for (int64_t i = 0; i < 4; ++i)
      want.push_back((x[static_cast<size_t>(r * 4 + i)] - m) / std::sqrt(v + 0.1) *
                         scale[static_cast<size_t>(i)] + bias[static_cast<size_t>(i)]);
  }
  const Out got = Exec(17,
                      MakeNode("LayerNormalization", {"x", "s", "b"}, {"y"},
                               {AttrFloat("epsilon", 0.1f)}),
                      {F32In("x", xs, x), Init("s", kF32, {4}, scale), Init("b", kF32, {4}, bias)});
  ExpectNear(got, xs, want);
}

TEST(ConvertNorm, MeanVarianceNormalization) {
  const S xs = {2, 2, 2, 2};
  const V x = Data(16);
  // Default axes {0, 2, 3}: statistics per channel.
  V want(16);
  for (int64_t c = 0; c < 2; ++c) {
    double m = 0, m2 = 0;
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t i = 0; i < 4; ++i) {
        const double v = x[static_cast<size_t>((n * 2 + c) * 4 + i)];
        m += v / 8;
        m2 += v * v / 8;
      }
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t i = 0; i < 4; ++i) {
        const size_t k = static_cast<size_t>((n * 2 + c) * 4 + i);
        want[k] = (x[k] - m) / (std::sqrt(m2 - m * m) + 1e-9);
      }
  }
  ExpectNear(Exec(13, MakeNode("MeanVarianceNormalization", {"x"}, {"y"}), {F32In("x", xs, x)}), xs,
             want, 1e-4);
}

TEST(ConvertNorm, LRNOddAndEvenSizes) {
  const S xs = {1, 5, 2, 1};
  const V x = Data(10);
  for (int64_t size : {3, 4}) {
    const double alpha = 0.2, beta = 0.6, bias = 1.5;
    V want;
    for (int64_t c = 0; c < 5; ++c)
      for (int64_t h = 0; h < 2; ++h) {
        double sq = 0;
        // Window [c - floor((size-1)/2), c + ceil((size-1)/2)].
        for (int64_t i = c - (size - 1) / 2; i <= c + size / 2; ++i)
          if (i >= 0 && i < 5) sq += std::pow(x[static_cast<size_t>(i * 2 + h)], 2);
        want.push_back(x[static_cast<size_t>(c * 2 + h)] /
                       std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
    const Out got = Exec(13,
                        MakeNode("LRN", {"x"}, {"y"},
                                 {AttrInt("size", size), AttrFloat("alpha", 0.2f),
                                  AttrFloat("beta", 0.6f), AttrFloat("bias", 1.5f)}),
                        {F32In("x", xs, x)});
    ExpectNear(got, xs, want);
  }
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
