// GridSample, RoiAlign and MaxUnpool (convert_sample.cc): one-node models
// imported and run by the interpreter, against plain loops written here from
// ONNX's reference implementations (onnx/reference/ops/op_grid_sample.py,
// op_roi_align.py, op_max_unpool.py), for every mode, padding and
// coordinate convention.
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

using V = std::vector<double>;
using S = std::vector<int64_t>;

constexpr DataType kF32 = DataType::Float(32);
constexpr DataType kI64 = DataType::Int(64);

void ExpectNear(const absl::StatusOr<std::vector<Ref<const HostTensor>>>& r, const S& shape,
                const V& want, const std::string& what, double tol = 1e-4) {
  ASSERT_TRUE(r.ok()) << what << ": " << r.status();
  const HostTensor& t = *r->at(0);
  ASSERT_EQ(t.shape(), shape) << what;
  const V got = Values(t);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << what << ", element " << i;
}

// ---- GridSample reference (2-D), as op_grid_sample.py.

double Reflect(double x, double lo, double hi) {
  const double rng = hi - lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / rng);
    const double r = dx - static_cast<double>(n) * rng;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / rng);
    const double r = dx - static_cast<double>(n) * rng;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

struct GsRef {
  std::string mode, padding;
  bool align = false;
  int64_t h = 0, w = 0;

  // The pixel at integral (y, x) of one image, with the padding.
  double Pixel(const double* img, int64_t y, int64_t x) const {
    auto fix = [&](int64_t i, int64_t d, bool* in) {
      if (padding == "zeros") {
        *in = *in && i >= 0 && i < d;
        return i;
      }
      if (padding == "border") return std::clamp<int64_t>(i, 0, d - 1);
      const double lo = align ? 0 : -0.5, hi = align ? static_cast<double>(d) - 1 : static_cast<double>(d) - 0.5;
      return static_cast<int64_t>(Reflect(static_cast<double>(i), lo, hi));
    };
    bool in = true;
    y = fix(y, h, &in);
    x = fix(x, w, &in);
    return in ? img[y * w + x] : 0.0;
  }

  double Coord(double n, int64_t d) const {
    const double fd = static_cast<double>(d);
    double x = align ? (n + 1) / 2 * (fd - 1) : ((n + 1) * fd - 1) / 2;
    if (mode == "nearest") x = std::nearbyint(x);  // half to even
    const double lo = align ? 0 : -0.5, hi = align ? fd - 1 : fd - 0.5;
    if (x < lo || x > hi) {
      if (padding == "border") x = std::clamp(x, 0.0, fd - 1);
      if (padding == "reflection") x = Reflect(x, lo, hi);
    }
    return x;
  }

  static std::vector<double> Cubic(double t) {
    const double a = -0.75;
    auto far = [a](double s) { return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a; };
    auto near = [a](double s) { return ((a + 2) * s - (a + 3)) * s * s + 1; };
    return {far(t + 1), near(t), near(1 - t), far(2 - t)};
  }

  double Sample(const double* img, double gx, double gy) const {
    const double x = Coord(gx, w), y = Coord(gy, h);
    if (mode == "nearest")
      return Pixel(img, static_cast<int64_t>(y), static_cast<int64_t>(x));
    const int64_t x0 = static_cast<int64_t>(std::floor(x)), y0 = static_cast<int64_t>(std::floor(y));
    const double tx = x - static_cast<double>(x0), ty = y - static_cast<double>(y0);
    std::vector<double> cx, cy;
    std::vector<int64_t> ox, oy;
    if (mode == "bilinear") {
      cx = {1 - tx, tx};
      cy = {1 - ty, ty};
      ox = oy = {0, 1};
    } else {
      cx = Cubic(tx);
      cy = Cubic(ty);
      ox = oy = {-1, 0, 1, 2};
    }
    double v = 0;
    for (size_t i = 0; i < oy.size(); ++i)
      for (size_t j = 0; j < ox.size(); ++j) v += cy[i] * cx[j] * Pixel(img, y0 + oy[i], x0 + ox[j]);
    return v;
  }
};

TEST(ConvertGridSample, EveryModePaddingAndAlignment) {
  const int64_t n = 2, ch = 2, h = 3, w = 4, ho = 2, wo = 5;
  V x, grid;
  for (int64_t i = 0; i < n * ch * h * w; ++i) x.push_back(static_cast<double>((i * 7) % 11) - 3.5);
  // Multiples of 1/8 in [-2, 2]: inside, outside (reflected more than once)
  // and exact halves after denormalizing (ties for nearest).
  for (int64_t k = 0; k < n * ho * wo * 2; ++k)
    grid.push_back(static_cast<double>((k * 37) % 33 - 16) / 8.0);
  grid[0] = 0.0;    // x = 1.5 (W = 4, not aligned): a tie
  grid[2] = -0.5;   // x = 0.5: a tie
  grid[5] = 1.75;   // y beyond the border
  for (const std::string mode : {"bilinear", "nearest", "bicubic"}) {
    for (const std::string padding : {"zeros", "border", "reflection"}) {
      for (int64_t align : {0, 1}) {
        GsRef ref{mode, padding, align != 0, h, w};
        V want;
        for (int64_t b = 0; b < n; ++b)
          for (int64_t c = 0; c < ch; ++c)
            for (int64_t i = 0; i < ho * wo; ++i) {
              const size_t g = static_cast<size_t>((b * ho * wo + i) * 2);
              want.push_back(ref.Sample(&x[static_cast<size_t>((b * ch + c) * h * w)], grid[g], grid[g + 1]));
            }
        const std::string what = mode + "/" + padding + "/align=" + std::to_string(align);
        ExpectNear(RunNode(16,
                           MakeNode("GridSample", {"x", "g"}, {"y"},
                                    {AttrString("mode", mode), AttrString("padding_mode", padding),
                                     AttrInt("align_corners", align)}),
                           {F32In("x", {n, ch, h, w}, x), F32In("g", {n, ho, wo, 2}, grid)}),
                   {n, ch, ho, wo}, want, what);
      }
    }
  }
}

TEST(ConvertGridSample, Opset20Spellings) {
  const V x = {1, 2, 3, 4};
  const V grid = {-1, -1, 1, 1, 0, 0};
  GsRef ref{"bilinear", "zeros", true, 2, 2};
  V want;
  for (size_t i = 0; i < 3; ++i) want.push_back(ref.Sample(x.data(), grid[2 * i], grid[2 * i + 1]));
  ExpectNear(RunNode(20,
                     MakeNode("GridSample", {"x", "g"}, {"y"},
                              {AttrString("mode", "linear"), AttrInt("align_corners", 1)}),
                     {F32In("x", {1, 1, 2, 2}, x), F32In("g", {1, 1, 3, 2}, grid)}),
             {1, 1, 1, 3}, want, "opset 20 linear");
}

TEST(ConvertGridSample, RejectsOtherRanksAndModes) {
  auto st = RunNode(16, MakeNode("GridSample", {"x", "g"}, {"y"}),
                    {F32In("x", {1, 1, 2, 2, 2}, V(8, 1)), F32In("g", {1, 1, 1, 1, 3}, V(3, 0))})
                .status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  st = RunNode(16, MakeNode("GridSample", {"x", "g"}, {"y"}, {AttrString("mode", "area")}),
               {F32In("x", {1, 1, 2, 2}, V(4, 1)), F32In("g", {1, 1, 1, 2}, V(2, 0))})
           .status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
}

// ---- RoiAlign reference, as op_roi_align.py.

struct RoiRef {
  int64_t ph = 1, pw = 1, sampling = 0;
  double scale = 1;
  std::string mode = "avg";
  bool half_pixel = true;

  V Run(const V& x, const S& xd, const V& rois, const std::vector<int64_t>& bidx) const {
    const int64_t ch = xd[1], h = xd[2], w = xd[3];
    V out;
    for (size_t r = 0; r < bidx.size(); ++r) {
      const double off = half_pixel ? 0.5 : 0.0;
      const double sw = rois[4 * r] * scale - off, sh = rois[4 * r + 1] * scale - off;
      const double ew = rois[4 * r + 2] * scale - off, eh = rois[4 * r + 3] * scale - off;
      double rw = ew - sw, rh = eh - sh;
      if (!half_pixel) {
        rw = std::max(rw, 1.0);
        rh = std::max(rh, 1.0);
      }
      const double bh = rh / static_cast<double>(ph), bw = rw / static_cast<double>(pw);
      const int64_t gh = sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(rh / static_cast<double>(ph)));
      const int64_t gw = sampling > 0 ? sampling : static_cast<int64_t>(std::ceil(rw / static_cast<double>(pw)));
      const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
      for (int64_t c = 0; c < ch; ++c) {
        const double* img = &x[static_cast<size_t>((bidx[r] * ch + c) * h * w)];
        for (int64_t py = 0; py < ph; ++py)
          for (int64_t px = 0; px < pw; ++px) {
            double acc = 0;
            bool first = true;
            for (int64_t iy = 0; iy < gh; ++iy)
              for (int64_t ix = 0; ix < gw; ++ix) {
                double y = sh + static_cast<double>(py) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
                double xx = sw + static_cast<double>(px) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
                double v[4] = {0, 0, 0, 0};
                if (!(y < -1.0 || y > static_cast<double>(h) || xx < -1.0 || xx > static_cast<double>(w))) {
                  y = std::max(y, 0.0);
                  xx = std::max(xx, 0.0);
                  int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(xx), yh = 0, xh = 0;
                  if (yl >= h - 1) {
                    yh = yl = h - 1;
                    y = static_cast<double>(yl);
                  } else {
                    yh = yl + 1;
                  }
                  if (xl >= w - 1) {
                    xh = xl = w - 1;
                    xx = static_cast<double>(xl);
                  } else {
                    xh = xl + 1;
                  }
                  const double ly = y - static_cast<double>(yl), lx = xx - static_cast<double>(xl);
                  const double hy = 1 - ly, hx = 1 - lx;
                  v[0] = hy * hx * img[yl * w + xl];
                  v[1] = hy * lx * img[yl * w + xh];
                  v[2] = ly * hx * img[yh * w + xl];
                  v[3] = ly * lx * img[yh * w + xh];
                }
                if (mode == "avg") {
                  acc += v[0] + v[1] + v[2] + v[3];
                } else {
                  const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                  acc = first ? m : std::max(acc, m);
                  first = false;
                }
              }
            out.push_back(mode == "avg" ? acc / count : acc);
          }
      }
    }
    return out;
  }
};

onnx::NodeProto RoiNode(const RoiRef& r, bool with_ctm) {
  std::vector<onnx::AttributeProto> attrs = {
      AttrInt("output_height", r.ph), AttrInt("output_width", r.pw),
      AttrInt("sampling_ratio", r.sampling), AttrFloat("spatial_scale", static_cast<float>(r.scale)),
      AttrString("mode", r.mode)};
  if (with_ctm)
    attrs.push_back(AttrString("coordinate_transformation_mode",
                               r.half_pixel ? "half_pixel" : "output_half_pixel"));
  return MakeNode("RoiAlign", {"x", "rois", "b"}, {"y"}, attrs);
}

TEST(ConvertRoiAlign, ModesGridsAndCoordinateConventions) {
  const S xd = {2, 2, 5, 6};
  V x;
  for (int64_t i = 0; i < 120; ++i) x.push_back(static_cast<double>((i * 13) % 17) - 4.25);
  // Inside, partly outside, wholly outside the map, and tiny.
  const V rois = {0.5, 1.0, 9.0, 7.5,   -3.0, -2.0, 4.0, 3.0,
                  20.0, 14.0, 30.0, 22.0, 2.0, 2.0, 2.5, 2.25};
  const std::vector<int64_t> bidx = {0, 1, 1, 0};
  const int64_t nr = 4;
  for (const std::string mode : {"avg", "max"}) {
    for (bool half_pixel : {true, false}) {
      for (int64_t sampling : {0, 2}) {
        RoiRef ref{2, 3, sampling, 0.5, mode, half_pixel};
        const V want = ref.Run(x, xd, rois, bidx);
        const std::string what = mode + (half_pixel ? "/half_pixel" : "/output_half_pixel") +
                                 "/sampling=" + std::to_string(sampling);
        // Adaptive grids need the rois' values: an initializer; a fixed grid
        // takes them as a graph input.
        const NamedTensor rv = sampling == 0 ? Init("rois", kF32, {nr, 4}, rois) : F32In("rois", {nr, 4}, rois);
        ExpectNear(RunNode(16, RoiNode(ref, true),
                           {F32In("x", xd, x), rv, In("b", kI64, {nr}, V(bidx.begin(), bidx.end()))}),
                   {nr, 2, 2, 3}, want, what);
        if (!half_pixel) {  // opset 10: output_half_pixel, no attribute
          ExpectNear(RunNode(10, RoiNode(ref, false),
                             {F32In("x", xd, x), rv, In("b", kI64, {nr}, V(bidx.begin(), bidx.end()))}),
                     {nr, 2, 2, 3}, want, what + " (opset 10)");
        }
      }
    }
  }
}

TEST(ConvertRoiAlign, AdaptiveGridNeedsTheRoisValues) {
  onnx::ModelProto m =
      MakeModel(16, {MakeNode("RoiAlign", {"x", "rois", "b"}, {"y"})},
                {MakeValueInfo("x", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{1}, int64_t{4}, int64_t{4}}),
                 MakeValueInfo("rois", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{4}}),
                 MakeValueInfo("b", onnx::TensorProto::INT64, {int64_t{1}})},
                {MakeValueInfoNoShape("y", onnx::TensorProto::FLOAT)});
  absl::StatusOr<Module> r = ImportOnnxBytes(Serialize(m));
  ASSERT_FALSE(r.ok());
  auto payload = r.status().GetPayload(kNeedsConstantPayload);
  ASSERT_TRUE(payload.has_value()) << r.status();
  EXPECT_EQ(std::string(*payload), "rois");
}

// ---- MaxUnpool, as op_max_unpool.py.

TEST(ConvertMaxUnpool, InferredAndGivenOutputShapes) {
  const V x = {5, 6, 7, 8};
  const V idx = {5, 7, 13, 15};  // MaxPool(2x2, stride 2) indices into a 4x4 map
  V want(16, 0.0);
  for (size_t i = 0; i < 4; ++i) want[static_cast<size_t>(idx[i])] = x[i];
  for (int opset : {9, 11}) {
    ExpectNear(RunNode(opset,
                       MakeNode("MaxUnpool", {"x", "i"}, {"y"},
                                {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})}),
                       {F32In("x", {1, 1, 2, 2}, x), In("i", kI64, {1, 1, 2, 2}, idx)}),
               {1, 1, 4, 4}, want, "inferred shape, opset " + std::to_string(opset));
  }
  // output_shape [1, 1, 5, 5]: scattered in the inferred 4x4, then zero-padded.
  V want5(25, 0.0);
  for (int64_t i = 0; i < 16; ++i) want5[static_cast<size_t>((i / 4) * 5 + i % 4)] = want[static_cast<size_t>(i)];
  ExpectNear(RunNode(11,
                     MakeNode("MaxUnpool", {"x", "i", "s"}, {"y"},
                              {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})}),
                     {F32In("x", {1, 1, 2, 2}, x), In("i", kI64, {1, 1, 2, 2}, idx),
                      Init("s", kI64, {4}, {1, 1, 5, 5})}),
             {1, 1, 5, 5}, want5, "output_shape");
  // output_shape as a graph input (known when the model runs): each size
  // pads the inferred 4x4 with zeros at the end.
  for (const std::vector<int64_t>& os : {std::vector<int64_t>{1, 1, 5, 5}, {1, 1, 4, 6}, {1, 2, 4, 4}}) {
    V w(static_cast<size_t>(os[1] * os[2] * os[3]), 0.0);
    for (int64_t i = 0; i < 16; ++i) w[static_cast<size_t>((i / 4) * os[3] + i % 4)] = want[static_cast<size_t>(i)];
    ExpectNear(RunNode(11,
                       MakeNode("MaxUnpool", {"x", "i", "s"}, {"y"},
                                {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})}),
                       {F32In("x", {1, 1, 2, 2}, x), In("i", kI64, {1, 1, 2, 2}, idx),
                        In("s", kI64, {4}, V(os.begin(), os.end()))}),
               os, w, "output_shape at run time");
  }
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
