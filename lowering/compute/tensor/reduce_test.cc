// Reduction computes vs the interpreter (numeric_util.h): every reduction over
// dtypes and every combination of axis / keepdims / exclude, argmax/argmin
// with ties and select_last_index, symbolic extents.
#include <optional>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "ir/op_attrs.h"
#include "lowering/compute/tensor/numeric_util.h"
#include "lowering/compute/tensor/test_util.h"

namespace kiln::lowering::tensor::testing {
namespace {

struct AxisCase {
  std::optional<std::vector<int64_t>> axis;
  bool keepdims;
  bool exclude;
};

const AxisCase kAxisCases[] = {
    {std::nullopt, false, false}, {std::nullopt, true, false}, {std::vector<int64_t>{1}, false, false},
    {std::vector<int64_t>{-1, 0}, true, false}, {std::vector<int64_t>{1}, false, true},
    {std::vector<int64_t>{0, 2}, true, true}, {std::vector<int64_t>{}, false, false},
    {std::vector<int64_t>{}, true, true}, {std::vector<int64_t>{2}, false, false},
};

template <typename A>
Attrs Axes(const AxisCase& c, bool last = false) {
  return MakeAttrs<A>([&](A& a) {
    a.axis = c.axis;
    a.keepdims = c.keepdims;
    a.exclude = c.exclude;
    if constexpr (std::is_same_v<A, ArgReduceAttrs>) a.select_last_index = last;
  });
}

TEST(ReduceComputeTest, SumMeanProd) {
  Ranges r;
  r.flo = -1.5;
  r.fhi = 1.5;  // products stay small (and exact in the evaluator's doubles)
  r.ilo = -2;
  r.ihi = 3;
  for (const char* op : {"sum", "mean", "prod"}) {
    for (DataType dt : {kF32, kF64, kF16, kBF16, kI32, kI8, kU8, kI64, kBool}) {
      for (const AxisCase& c : kAxisCases) {
        EXPECT_TRUE(CheckOp(op, Axes<ReduceAttrs>(c), {T({2, 3, 4}, dt)}, r)) << dt.ToString();
      }
    }
  }
}

TEST(ReduceComputeTest, IntegerSumsWrapAndMeansUse64Bits) {
  Ranges big;
  big.ilo = 60;
  big.ihi = 127;
  Attrs all = Axes<ReduceAttrs>({std::nullopt, false, false});
  EXPECT_TRUE(CheckOp("sum", all, {T({40}, kI8)}, big));
  EXPECT_TRUE(CheckOp("mean", all, {T({40}, kI8)}, big));
  EXPECT_TRUE(CheckOp("prod", all, {T({10}, kI8)}, big));
  EXPECT_TRUE(CheckOp("mean", all, {T({5}, kI32, {-7, -3, 1, 2, 0})}));  // truncates toward 0
  Ranges u;
  u.ilo = 200;
  u.ihi = 256;
  EXPECT_TRUE(CheckOp("mean", all, {T({9}, kU8)}, u));
}

TEST(ReduceComputeTest, MaxMin) {
  for (const char* op : {"max", "min"}) {
    for (DataType dt : {kF32, kF64, kF16, kBF16, kI32, kI8, kU8, kI64, kBool}) {
      // tir_eval keeps values in doubles: INT64_MAX, min's identity for int64,
      // does not survive a store and load, so only the naive lowering (which
      // starts from the first element) runs for int64.
      Ranges r;
      r.naive_only = dt == kI64;
      for (const AxisCase& c : kAxisCases) {
        EXPECT_TRUE(CheckOp(op, Axes<ReduceAttrs>(c), {T({2, 3, 4}, dt)}, r)) << dt.ToString();
      }
    }
  }
}

TEST(ReduceComputeTest, ArgMaxArgMin) {
  Ranges ties;
  ties.ilo = -2;
  ties.ihi = 2;
  for (const char* op : {"argmax", "argmin"}) {
    for (DataType dt : {kF32, kF16, kI32, kI8, kU8, kBool}) {
      for (const AxisCase& c : kAxisCases) {
        for (bool last : {false, true}) {
          EXPECT_TRUE(CheckOp(op, Axes<ArgReduceAttrs>(c, last), {T({2, 3, 4}, dt)}, ties))
              << dt.ToString() << " last=" << last;
        }
      }
    }
  }
  // Float ties.
  for (bool last : {false, true}) {
    EXPECT_TRUE(CheckOp("argmax", Axes<ArgReduceAttrs>({std::nullopt, false, false}, last),
                        {T({6}, kF32, {1, 3, 0, 3, -1, 3})}));
    EXPECT_TRUE(CheckOp("argmin", Axes<ArgReduceAttrs>({std::vector<int64_t>{1}, false, false}, last),
                        {T({2, 3}, kF32, {1, 1, 0, -2, 5, -2})}));
  }
}

TEST(ReduceComputeTest, SymbolicExtents) {
  Attrs ax1 = Axes<ReduceAttrs>({std::vector<int64_t>{1}, false, false});
  for (const char* op : {"sum", "mean", "max"}) {
    EXPECT_TRUE(CheckOp(op, ax1, {Sym({3, 5}, {"n", "m"})}));
    EXPECT_TRUE(CheckOp(op, ax1, {Sym({3, 5}, {"n", "m"}, kI32)}));
    EXPECT_TRUE(CheckOp(op, nullptr, {Sym({3, 5}, {"", "m"}, kF16)}));
  }
  EXPECT_TRUE(CheckOp("argmax", nullptr, {Sym({3, 5}, {"n", "m"})}));
}

TEST(ReduceComputeTest, EmptySumAndMean) {
  Attrs ax0 = Axes<ReduceAttrs>({std::vector<int64_t>{0}, false, false});
  EXPECT_TRUE(CheckOp("sum", ax0, {T({0, 3})}));
  EXPECT_TRUE(CheckOp("prod", ax0, {T({0, 3}, kI32)}));
  EXPECT_TRUE(CheckOp("mean", ax0, {T({0, 3})}));  // NaN
}

}  // namespace
}  // namespace kiln::lowering::tensor::testing
