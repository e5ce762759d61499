// Tests of the nn.conv2d relation. Expected shapes are hand-computed from
// out = floor((in + pad_total - dilation * (k - 1) - 1) / stride) + 1.
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "types/rel_test_util.h"

namespace kiln::types::testing {
namespace {

using ::testing::HasSubstr;

Attrs Conv(std::vector<int64_t> strides, std::vector<int64_t> padding, int64_t groups = 1) {
  return Make<Conv2DAttrs>([&](Conv2DAttrs& a) {
    a.strides = strides;
    a.padding = padding;
    a.groups = groups;
  });
}

TEST(Conv2D, ResNetStem) {
  // 7x7 stride 2 pad 3 on 224: (224 + 6 - 7) / 2 + 1 = 112.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 224, 224"), T("64, 3, 7, 7")}, Conv({2, 2}, {3, 3})),
            "Tensor[(1, 64, 112, 112), float32]");
  EXPECT_EQ(Infer("nn.conv2d", {T("n, 3, 224, 224"), T("64, 3, 7, 7")}, Conv({2}, {3})),
            "Tensor[(n, 64, 112, 112), float32]");
}

TEST(Conv2D, DefaultsAndSymbolicSpatial) {
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 32, 32"), T("8, 3, 3, 3")}),
            "Tensor[(1, 8, 30, 30), float32]");
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, h, w"), T("8, 3, 3, 3")}, Conv({1}, {1})),
            "Tensor[(1, 8, h, w), float32]");
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, h, ?"), T("8, 3, 7, 7")}, Conv({2}, {3})),
            "Tensor[(1, 8, (((h - 1) / 2) + 1), ?), float32]");
}

TEST(Conv2D, PaddingDilation) {
  // padding (top, left, bottom, right) = (1, 0, 1, 0): H 10 + 2 - 3 + 1 = 10, W 10 - 3 + 1 = 8.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 10, 10"), T("8, 3, 3, 3")}, Conv({1}, {1, 0, 1, 0})),
            "Tensor[(1, 8, 10, 8), float32]");
  // padding (top/bottom, left/right) = (2, 1).
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 10, 10"), T("8, 3, 3, 3")}, Conv({1}, {2, 1})),
            "Tensor[(1, 8, 12, 10), float32]");
  // dilation 2: effective window 5 -> 10 - 5 + 1 = 6.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 10, 10"), T("8, 3, 3, 3")},
                  Make<Conv2DAttrs>([](auto& a) { a.dilation = {2}; })),
            "Tensor[(1, 8, 6, 6), float32]");
}

TEST(Conv2D, Layouts) {
  auto nhwc = [](const char* kl, const char* ol) {
    return Make<Conv2DAttrs>([=](Conv2DAttrs& a) {
      a.strides = {2, 2};
      a.padding = {3, 3};
      a.data_layout = "NHWC";
      a.kernel_layout = kl;
      a.out_layout = ol;
    });
  };
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 224, 224, 3"), T("7, 7, 3, 64")}, nhwc("HWIO", "")),
            "Tensor[(1, 112, 112, 64), float32]");
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 224, 224, 3"), T("64, 7, 7, 3")}, nhwc("OHWI", "")),
            "Tensor[(1, 112, 112, 64), float32]");
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 224, 224, 3"), T("7, 7, 64, 3")}, nhwc("HWOI", "NCHW")),
            "Tensor[(1, 64, 112, 112), float32]");
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 224, 224"), T("64, 3, 7, 7")},
                  Make<Conv2DAttrs>([](Conv2DAttrs& a) {
                    a.strides = {2};
                    a.padding = {3};
                    a.out_layout = "NHWC";
                  })),
            "Tensor[(1, 112, 112, 64), float32]");
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("8, 3, 3, 3")},
                    Make<Conv2DAttrs>([](auto& a) { a.data_layout = "NCHW8c"; })),
              HasSubstr("expected a 5-D tensor (data_layout NCHW8c)"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 8, 8, 2"), T("8, 3, 3, 3")},
                    Make<Conv2DAttrs>([](auto& a) { a.data_layout = "NCHW2h"; })),
              HasSubstr("data_layout \"NCHW2h\" is not supported"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("8, 3, 3, 3")},
                    Make<Conv2DAttrs>([](auto& a) { a.kernel_layout = "OIH"; })),
              HasSubstr("kernel_layout \"OIH\" is not supported"));
}

Attrs Blocked(const char* dl, const char* kl, const char* ol, int64_t groups = 1) {
  return Make<Conv2DAttrs>([=](Conv2DAttrs& a) {
    a.padding = {1, 1};
    a.data_layout = dl;
    a.kernel_layout = kl;
    a.out_layout = ol;
    a.groups = groups;
  });
}

TEST(Conv2D, BlockedLayouts) {
  // The AlterOpLayout probe: 16 channels in one block, 3x3 pad 1 keeps 4x4.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 1, 4, 4, 16"), T("1, 1, 3, 3, 16, 16")},
                  Blocked("NCHW16c", "OIHW16i16o", "NCHW16c")),
            "Tensor[(1, 1, 4, 4, 16), float32]");
  // 32 -> 64 channels, data blocked by 8 (4 x 8), kernel (64/16, 32/8, 3, 3, 8, 16),
  // output blocked by 4: (1, 16, 8, 8, 4).
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 4, 8, 8, 8"), T("4, 4, 3, 3, 8, 16")},
                  Blocked("NCHW8c", "OIHW8i16o", "NCHW4c")),
            "Tensor[(1, 16, 8, 8, 4), float32]");
  // out_layout "" = data_layout.
  EXPECT_EQ(Infer("nn.conv2d", {T("n, 2, h, 8, 16"), T("2, 2, 3, 3, 16, 16")},
                  Blocked("NCHW16c", "OIHW16i16o", "")),
            "Tensor[(n, 2, h, 8, 16), float32]");
  // Blocked input, plain output and plain kernel; and back.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 2, 8, 8, 4"), T("16, 8, 3, 3")},
                  Blocked("NCHW4c", "OIHW", "NCHW")),
            "Tensor[(1, 16, 8, 8), float32]");
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 8, 8, 8"), T("2, 8, 3, 3, 8")},
                  Blocked("NCHW", "OIHW8o", "NHWC")),
            "Tensor[(1, 8, 8, 16), float32]");
  // Depthwise, blocked: 32 channels by 8, kernel (32/8, 1, 3, 3, 8o).
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 4, 8, 8, 8"), T("4, 1, 3, 3, 1, 8")},
                  Blocked("NCHW8c", "OIHW1i8o", "NCHW8c", 32)),
            "Tensor[(1, 4, 8, 8, 8), float32]");
}

// Input channels per group times groups is checked arithmetic: the product
// overflowed int64 before (undefined behaviour), now it is an error.
TEST(Conv2D, ChannelProductOverflowIsAnError) {
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 4, 8, 8"), T("4, 4611686018427387904, 1, 1")},
                    Conv({1, 1}, {0, 0}, 4)),
              HasSubstr("input channels times groups=4 do not fit in 64 bits"));
}

TEST(Conv2D, BlockedLayoutErrors) {
  // Inner block extent differs from the layout's factor.
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 2, 4, 4, 8"), T("1, 1, 3, 3, 16, 16")},
                    Blocked("NCHW16c", "OIHW16i16o", "NCHW16c")),
              HasSubstr("argument 0 (data) has type Tensor[(1, 2, 4, 4, 8), float32]; expected "
                        "inner c extent 16 (data_layout NCHW16c)"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 1, 4, 4, 16"), T("1, 1, 3, 3, 16, 8")},
                    Blocked("NCHW16c", "OIHW16i16o", "NCHW16c")),
              HasSubstr("expected inner o extent 16 (kernel_layout OIHW16i16o)"));
  // 2 x 16 = 32 data channels against 1 x 16 input channels of the weight.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 2, 4, 4, 16"), T("1, 1, 3, 3, 16, 16")},
                  Blocked("NCHW16c", "OIHW16i16o", "NCHW16c")),
            "error: nn.conv2d: data has 32 channels but weight expects 16 (groups=1)");
  // 24 output channels do not split into blocks of 16.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 1, 4, 4, 16"), T("3, 1, 3, 3, 16, 8")},
                  Blocked("NCHW16c", "OIHW16i8o", "NCHW16c")),
            "error: nn.conv2d: output channels 24 do not divide by the block 16 of NCHW16c");
  // Rank follows the layout.
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 1, 4, 4, 16"), T("16, 16, 3, 3")},
                    Blocked("NCHW16c", "OIHW16i16o", "NCHW16c")),
              HasSubstr("expected a 6-D tensor (kernel_layout OIHW16i16o)"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 1, 4, 4, 16"), T("1, 1, 3, 3, 16, 16")},
                    Blocked("NCHW16c", "OIHW16i16h", "NCHW16c")),
              HasSubstr("kernel_layout \"OIHW16i16h\" is not supported"));
}

TEST(Conv2D, BlockedWeightIsAssigned) {
  RelResult r = RunRel("nn.conv2d", {T("1, 2, 8, 8, 16"), MakeIncompleteType()},
                       Make<Conv2DAttrs>([](Conv2DAttrs& a) {
                         a.channels = 64;
                         a.kernel_size = std::vector<int64_t>{3, 3};
                         a.padding = {1};
                         a.data_layout = "NCHW16c";
                         a.kernel_layout = "OIHW16i8o";
                         a.out_layout = "NCHW8c";
                       }));
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_TRUE(r.solved);
  EXPECT_EQ(TypeToString(r.output), "Tensor[(1, 8, 8, 8, 8), float32]");
  EXPECT_EQ(TypeToString(r.reporter.Get(r.args[1])), "Tensor[(8, 2, 3, 3, 16, 8), float32]");
}

TEST(Conv2D, GroupsAndDepthwise) {
  // Depthwise 3x3, groups = C = 32, multiplier 1.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 32, 112, 112"), T("32, 1, 3, 3")}, Conv({1}, {1}, 32)),
            "Tensor[(1, 32, 112, 112), float32]");
  // Depthwise with multiplier 2, stride 2.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 32, 112, 112"), T("64, 1, 3, 3")}, Conv({2}, {1}, 32)),
            "Tensor[(1, 64, 56, 56), float32]");
  // NHWC depthwise with HWOI.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 112, 112, 32"), T("3, 3, 32, 1")},
                  Make<Conv2DAttrs>([](Conv2DAttrs& a) {
                    a.padding = {1};
                    a.groups = 32;
                    a.data_layout = "NHWC";
                    a.kernel_layout = "HWOI";
                  })),
            "Tensor[(1, 112, 112, 32), float32]");
  // Grouped: 64 channels in 4 groups of 16.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 64, 8, 8"), T("128, 16, 1, 1")}, Conv({1}, {0}, 4)),
            "Tensor[(1, 128, 8, 8), float32]");
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("8, 1, 3, 3")}, Conv({1}, {0}, 2)),
            "error: nn.conv2d: data has 3 channels, which groups=2 does not divide");
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 4, 8, 8"), T("6, 1, 3, 3")}, Conv({1}, {0}, 4)),
              HasSubstr("weight has 6 output channels, which groups=4 does not divide"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 4, 8, 8"), T("8, 1, 3, 3")}, Conv({1}, {0}, 0)),
              HasSubstr("groups must be >= 1"));
}

TEST(Conv2D, ChecksAgainstWeight) {
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("16, 3, 3")}),
            "error: nn.conv2d: argument 1 (weight) has type Tensor[(16, 3, 3), float32]; expected "
            "a 4-D tensor (kernel_layout OIHW)");
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("16, 4, 3, 3")}),
            "error: nn.conv2d: data has 3 channels but weight expects 4 (groups=1)");
  EXPECT_THAT(Infer("nn.conv2d", {T("3, 8, 8"), T("16, 3, 3, 3")}),
              HasSubstr("argument 0 (data) has type Tensor[(3, 8, 8), float32]; expected a 4-D"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("16, 3, 3, 3")},
                    Make<Conv2DAttrs>([](auto& a) { a.channels = 8; })),
              HasSubstr("channels=8 but weight has 16 output channels"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("16, 3, 3, 3")},
                    Make<Conv2DAttrs>([](auto& a) { a.kernel_size = std::vector<int64_t>{5, 5}; })),
              HasSubstr("kernel_size=[5, 5] but weight's kernel is (3, 3)"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("16, 3, 3, 3", "float16")}),
              HasSubstr("argument 1 (weight) has type Tensor[(16, 3, 3, 3), float16]; expected "
                        "dtype float32"));
  // Symbolic channels are checked at run time.
  EXPECT_EQ(Infer("nn.conv2d", {T("1, c, 8, 8"), T("16, 3, 3, 3")}),
            "Tensor[(1, 16, 6, 6), float32]");
}

TEST(Conv2D, AttributeValidation) {
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("8, 3, 3, 3")}, Conv({1, 1, 1}, {0})),
              HasSubstr("strides must have 1 or 2 values; got [1, 1, 1]"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("8, 3, 3, 3")}, Conv({0}, {0})),
              HasSubstr("strides values must be in [1, 2^31]; got [0]"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("8, 3, 3, 3")}, Conv({1}, {1, 1, 1})),
              HasSubstr("padding must have 1, 2 or 4 values; got [1, 1, 1]"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 8, 8"), T("8, 3, 3, 3")}, Conv({1}, {-1})),
              HasSubstr("padding values must be in [0, 2^31]"));
  EXPECT_THAT(Infer("nn.conv2d", {T("1, 3, 2, 2"), T("8, 3, 3, 3")}),
              HasSubstr("output height would be 0"));
}

TEST(Conv2D, OutDtype) {
  Attrs a = Make<Conv2DAttrs>([](auto& a) { a.out_dtype = DataType::Int(32); });
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 8, 8", "uint8"), T("8, 3, 3, 3", "int8")}, a),
            "Tensor[(1, 8, 6, 6), int32]");
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 8, 8", "float16"), T("8, 3, 3, 3", "float16")}),
            "Tensor[(1, 8, 6, 6), float16]");
}

TEST(Conv2D, WaitsForOrAssignsTheWeight) {
  EXPECT_EQ(Infer("nn.conv2d", {MakeIncompleteType(), T("8, 3, 3, 3")}), "unsolved");
  EXPECT_EQ(Infer("nn.conv2d", {T("1, 3, 8, 8"), MakeIncompleteType()}), "unsolved");
  RelResult r = RunRel("nn.conv2d", {T("n, 3, 224, 224"), MakeIncompleteType()},
                       Make<Conv2DAttrs>([](Conv2DAttrs& a) {
                         a.channels = 64;
                         a.kernel_size = std::vector<int64_t>{7, 7};
                         a.strides = {2};
                         a.padding = {3};
                       }));
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_TRUE(r.solved);
  EXPECT_EQ(TypeToString(r.output), "Tensor[(n, 64, 112, 112), float32]");
  EXPECT_EQ(TypeToString(r.reporter.Get(r.args[1])), "Tensor[(64, 3, 7, 7), float32]");
}

}  // namespace
}  // namespace kiln::types::testing
