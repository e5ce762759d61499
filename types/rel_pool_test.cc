// Tests of the 2-D pooling relations.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "types/rel_test_util.h"

namespace kiln::types::testing {
namespace {

using ::testing::HasSubstr;

Attrs Pool(std::vector<int64_t> size, std::vector<int64_t> strides, std::vector<int64_t> padding,
           bool ceil_mode = false, std::string layout = "NCHW") {
  return Make<Pool2DAttrs>([&](Pool2DAttrs& a) {
    a.pool_size = size;
    a.strides = strides;
    a.padding = padding;
    a.ceil_mode = ceil_mode;
    a.layout = layout;
  });
}

TEST(Pool2D, ResNetMaxPool) {
  // 3x3 stride 2 pad 1 on 112: (112 + 2 - 3) / 2 + 1 = 56.
  EXPECT_EQ(Infer("nn.max_pool2d", {T("n, 64, 112, 112")}, Pool({3, 3}, {2, 2}, {1, 1})),
            "Tensor[(n, 64, 56, 56), float32]");
  EXPECT_EQ(Infer("nn.max_pool2d", {T("1, 112, 112, 64")}, Pool({3}, {2}, {1}, false, "NHWC")),
            "Tensor[(1, 56, 56, 64), float32]");
}

TEST(Pool2D, CeilMode) {
  // 6 with window 3 stride 2: floor (6 - 3) / 2 + 1 = 2, ceil (6 - 3 + 1) / 2 + 1 = 3.
  EXPECT_EQ(Infer("nn.avg_pool2d", {T("1, 1, 6, 6")}, Pool({3}, {2}, {0})),
            "Tensor[(1, 1, 2, 2), float32]");
  EXPECT_EQ(Infer("nn.avg_pool2d", {T("1, 1, 6, 6")}, Pool({3}, {2}, {0}, true)),
            "Tensor[(1, 1, 3, 3), float32]");
  // Exact fit: ceil_mode changes nothing (7 - 3) / 2 + 1 = 3.
  EXPECT_EQ(Infer("nn.max_pool2d", {T("1, 1, 7, 7")}, Pool({3}, {2}, {0}, true)),
            "Tensor[(1, 1, 3, 3), float32]");
  // GoogLeNet-style 3x3/2 ceil on 112 -> 56; on 55 -> 27.
  EXPECT_EQ(Infer("nn.max_pool2d", {T("1, 8, 112, 55")}, Pool({3}, {2}, {0}, true)),
            "Tensor[(1, 8, 56, 27), float32]");
}

TEST(Pool2D, PaddingDilationAndSymbolic) {
  // padding (top, left, bottom, right) = (1, 0, 0, 0), window 2: H 8 + 1 - 2 + 1 = 8, W 7.
  EXPECT_EQ(Infer("nn.max_pool2d", {T("1, 1, 8, 8")}, Pool({2}, {1}, {1, 0, 0, 0})),
            "Tensor[(1, 1, 8, 7), float32]");
  EXPECT_EQ(Infer("nn.max_pool2d", {T("1, 1, 8, 8")},
                  Make<Pool2DAttrs>([](Pool2DAttrs& a) {
                    a.pool_size = {2};
                    a.dilation = {3};
                  })),
            "Tensor[(1, 1, 5, 5), float32]");
  EXPECT_EQ(Infer("nn.max_pool2d", {T("1, c, h, 8")}, Pool({2}, {2}, {0})),
            "Tensor[(1, c, (((h - 2) / 2) + 1), 4), float32]");
  EXPECT_EQ(Infer("nn.avg_pool2d", {T("1, 3, 8, 8")},
                  Make<Pool2DAttrs>([](Pool2DAttrs& a) {
                    a.pool_size = {2};
                    a.strides = {2};
                    a.out_layout = "NHWC";
                  })),
            "Tensor[(1, 4, 4, 3), float32]");
}

TEST(Pool2D, Errors) {
  EXPECT_THAT(Infer("nn.max_pool2d", {T("1, 1, 8, 8")}, Pool({2, 2, 2}, {1}, {0})),
              HasSubstr("nn.max_pool2d: pool_size must have 1 or 2 values; got [2, 2, 2]"));
  EXPECT_THAT(Infer("nn.max_pool2d", {T("1, 8, 8")}, Pool({2}, {1}, {0})),
              HasSubstr("argument 0 (data) has type Tensor[(1, 8, 8), float32]; expected a 4-D"));
  EXPECT_THAT(Infer("nn.max_pool2d", {T("1, 1, 8, 8")}, Pool({2}, {1}, {0}, false, "NCDHW")),
              HasSubstr("layout \"NCDHW\" is not supported"));
  EXPECT_THAT(Infer("nn.max_pool2d", {T("1, 1, 8, 8")}, Pool({2}, {0}, {0})),
              HasSubstr("strides values must be in [1, 2^31]"));
  EXPECT_THAT(Infer("nn.max_pool2d", {T("1, 1, 2, 2")}, Pool({3}, {1}, {0})),
              HasSubstr("output height would be 0"));
  EXPECT_EQ(Infer("nn.max_pool2d", {MakeIncompleteType()}), "unsolved");
}

TEST(GlobalPool2D, Shapes) {
  EXPECT_EQ(Infer("nn.global_avg_pool2d", {T("n, 2048, 7, 7")}), "Tensor[(n, 2048, 1, 1), float32]");
  EXPECT_EQ(Infer("nn.global_max_pool2d", {T("1, h, w, 16")},
                  Make<GlobalPool2DAttrs>([](auto& a) { a.layout = "NHWC"; })),
            "Tensor[(1, 1, 1, 16), float32]");
  EXPECT_THAT(Infer("nn.global_avg_pool2d", {T("2, 16")}), HasSubstr("expected a 4-D tensor"));
}

}  // namespace
}  // namespace kiln::types::testing
