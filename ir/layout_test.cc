// File: ir/layout_test.cc
#include "ir/layout.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

TEST(LayoutTest, ParsesPrimalLayouts) {
  absl::StatusOr<Layout> l = ParseLayout("NHWC");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->text, "NHWC");
  EXPECT_EQ(l->ndim(), 4);
  EXPECT_EQ(l->Find('N'), 0);
  EXPECT_EQ(l->Find('C'), 3);
  EXPECT_EQ(l->Find('c'), -1);
  EXPECT_EQ(l->FactorOf('C'), 0);
  EXPECT_FALSE(l->HasSplit());
  EXPECT_TRUE(l->IsPermutationOf("NCHW"));
  EXPECT_TRUE(l->HasPrimalAxes("NCHW"));
  EXPECT_FALSE(l->IsPermutationOf("OIHW"));
  EXPECT_FALSE(l->IsPermutationOf("NCDHW"));
  EXPECT_FALSE(l->IsPermutationOf("NCH"));
}

TEST(LayoutTest, ParsesSplitAxes) {
  absl::StatusOr<Layout> l = ParseLayout("OIHW16i8o");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->ndim(), 6);
  EXPECT_EQ(l->axes[4].name, 'i');
  EXPECT_EQ(l->axes[4].factor, 16);
  EXPECT_FALSE(l->axes[4].is_primal());
  EXPECT_TRUE(l->axes[0].is_primal());
  EXPECT_EQ(l->FactorOf('I'), 16);
  EXPECT_EQ(l->FactorOf('O'), 8);
  EXPECT_EQ(l->FactorOf('H'), 0);
  EXPECT_EQ(l->Find('o'), 5);
  EXPECT_TRUE(l->HasSplit());
  EXPECT_TRUE(l->HasPrimalAxes("OIHW"));
  EXPECT_FALSE(l->IsPermutationOf("OIHW"));
  EXPECT_EQ(Layout::PrimalOf('c'), 'C');
  EXPECT_EQ(Layout::SplitOf('C'), 'c');
}

TEST(LayoutTest, SplitAxisMayPrecedeItsPrimal) {
  absl::StatusOr<Layout> l = ParseLayout("4cNCHW");
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->Find('c'), 0);
  EXPECT_EQ(l->FactorOf('C'), 4);
}

void ExpectInvalid(absl::string_view text, absl::string_view why) {
  absl::StatusOr<Layout> l = ParseLayout(text);
  ASSERT_FALSE(l.ok()) << text;
  EXPECT_EQ(l.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(l.status().message(),
            std::string("\"") + std::string(text) + "\" is not a valid layout: " + std::string(why));
}

TEST(LayoutTest, RejectsInvalidLayouts) {
  ExpectInvalid("", "it is empty");
  ExpectInvalid("NCHW16", "it ends with a number");
  ExpectInvalid("NC-HW", "unexpected character '-'");
  ExpectInvalid("NC4H", "a factor must precede a lower-case (split) axis");
  ExpectInvalid("NCHWc", "split axis 'c' needs a positive factor");
  ExpectInvalid("NCHW0c", "split axis 'c' needs a positive factor");
  ExpectInvalid("NCHH", "axis 'H' appears twice");
  ExpectInvalid("NCHW4c8c", "axis 'c' appears twice");
  ExpectInvalid("NCHW4d", "split axis 'd' has no primal axis 'D'");
  ExpectInvalid("NCHW99999999999999c", "factor too large");
}

}  // namespace
}  // namespace kiln
