// Tests of the reduction relations.
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "types/rel_test_util.h"

namespace kiln::types::testing {
namespace {

using ::testing::HasSubstr;

Attrs Reduce(std::optional<std::vector<int64_t>> axis, bool keepdims = false,
             bool exclude = false) {
  return Make<ReduceAttrs>([&](ReduceAttrs& a) {
    a.axis = axis;
    a.keepdims = keepdims;
    a.exclude = exclude;
  });
}

TEST(Reduce, Axes) {
  EXPECT_EQ(Infer("sum", {T("2, 3, 4")}, Reduce(std::vector<int64_t>{1})),
            "Tensor[(2, 4), float32]");
  EXPECT_EQ(Infer("mean", {T("2, 3, 4")}, Reduce(std::vector<int64_t>{1}, true)),
            "Tensor[(2, 1, 4), float32]");
  EXPECT_EQ(Infer("max", {T("2, 3, 4")}, Reduce(std::vector<int64_t>{-1, 0})),
            "Tensor[(3,), float32]");
  EXPECT_EQ(Infer("min", {T("n, 3")}, Reduce(std::vector<int64_t>{1})), "Tensor[(n,), float32]");
  EXPECT_EQ(Infer("prod", {T("2, 3", "int32")}, Reduce(std::vector<int64_t>{})),
            "Tensor[(2, 3), int32]");
}

TEST(Reduce, AxisNoneAndExclude) {
  EXPECT_EQ(Infer("sum", {T("2, 3, 4")}), "Tensor[(), float32]");
  EXPECT_EQ(Infer("sum", {T("2, 3, 4")}, Reduce(std::nullopt, true)),
            "Tensor[(1, 1, 1), float32]");
  EXPECT_EQ(Infer("sum", {T("")}), "Tensor[(), float32]");
  EXPECT_EQ(Infer("sum", {T("2, 3, 4")}, Reduce(std::vector<int64_t>{1}, false, true)),
            "Tensor[(3,), float32]");
  EXPECT_EQ(Infer("sum", {T("2, 3, 4")}, Reduce(std::vector<int64_t>{-1}, true, true)),
            "Tensor[(1, 1, 4), float32]");
}

TEST(Reduce, ArgReduceIsInt32) {
  EXPECT_EQ(Infer("argmax", {T("n, 10")},
                  Make<ArgReduceAttrs>([](auto& a) { a.axis = std::vector<int64_t>{1}; })),
            "Tensor[(n,), int32]");
  EXPECT_EQ(Infer("argmin", {T("4, 10", "float16")},
                  Make<ArgReduceAttrs>([](auto& a) {
                    a.axis = std::vector<int64_t>{0};
                    a.keepdims = true;
                  })),
            "Tensor[(1, 10), int32]");
  EXPECT_EQ(Infer("argmax", {T("4, 10")}), "Tensor[(), int32]");
}

TEST(Reduce, Errors) {
  EXPECT_EQ(Infer("sum", {T("2, 3")}, Reduce(std::vector<int64_t>{2})),
            "error: sum: axis 2 is out of range for a 2-D tensor (expected -2..1)");
  EXPECT_THAT(Infer("sum", {T("2, 3")}, Reduce(std::vector<int64_t>{-3})),
              HasSubstr("axis -3 is out of range"));
  EXPECT_THAT(Infer("sum", {T("2, 3")}, Reduce(std::vector<int64_t>{1, -1})),
              HasSubstr("sum: axis [1, -1] lists axis 1 twice"));
  EXPECT_THAT(Infer("sum", {T("")}, Reduce(std::vector<int64_t>{0})),
              HasSubstr("axis 0 is out of range for a 0-D tensor"));
  EXPECT_EQ(Infer("sum", {MakeIncompleteType()}), "unsolved");
}

}  // namespace
}  // namespace kiln::types::testing
