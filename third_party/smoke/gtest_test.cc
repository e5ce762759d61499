// GoogleTest + GoogleMock smoke test.
#include "gtest/gtest.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"

namespace {

class Greeter {
 public:
  virtual ~Greeter() = default;
  virtual std::string Greet(const std::string& who) = 0;
};

class MockGreeter : public Greeter {
 public:
  MOCK_METHOD(std::string, Greet, (const std::string& who), (override));
};

TEST(GtestSmoke, Matchers) {
  std::vector<int> v = {1, 2, 3};
  EXPECT_THAT(v, ::testing::ElementsAre(1, 2, 3));
  EXPECT_THAT("kiln compiler", ::testing::HasSubstr("compiler"));
}

TEST(GtestSmoke, Mock) {
  MockGreeter g;
  EXPECT_CALL(g, Greet("kiln")).WillOnce(::testing::Return("hi kiln"));
  EXPECT_EQ(g.Greet("kiln"), "hi kiln");
}

class ParamTest : public ::testing::TestWithParam<int> {};
TEST_P(ParamTest, Positive) { EXPECT_GT(GetParam(), 0); }
INSTANTIATE_TEST_SUITE_P(Smoke, ParamTest, ::testing::Values(1, 2, 3));

}  // namespace
