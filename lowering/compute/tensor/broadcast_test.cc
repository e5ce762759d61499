// Broadcasting computes vs the interpreter (numeric_util.h): binary
// arithmetic, comparisons and logical ops over dtypes and broadcast shapes,
// integer division edge cases, integer power, where, bias_add, prelu,
// broadcast_to, symbolic dims.
#include <vector>

#include "gtest/gtest.h"
#include "ir/op_attrs.h"
#include "lowering/compute/tensor/numeric_util.h"
#include "lowering/compute/tensor/test_util.h"

namespace kiln::lowering::tensor::testing {
namespace {

// Nonzero divisors in [-8, 8) for integer division (the interpreter reports a
// division by zero as an error).
std::vector<double> Divisors(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) {
    int d = (i * 5 + 3) % 16 - 8;
    v.push_back(d == 0 ? 3 : d);
  }
  return v;
}

TEST(BroadcastComputeTest, Arithmetic) {
  for (const char* op : {"add", "subtract", "multiply", "maximum", "minimum"}) {
    for (DataType dt : {kF32, kF64, kF16, kBF16, kI32, kI8, kU8, kI64, kBool}) {
      EXPECT_TRUE(CheckOp(op, nullptr, {T({2, 1, 3}, dt), T({4, 1}, dt)})) << dt.ToString();
    }
  }
}

TEST(BroadcastComputeTest, FloatDivision) {
  for (const char* op : {"divide", "mod", "floor_divide", "floor_mod", "power"}) {
    for (DataType dt : {kF32, kF64, kF16, kBF16}) {
      EXPECT_TRUE(CheckOp(op, nullptr, {T({3, 4}, dt), T({4}, dt)})) << dt.ToString();
      // Division by zero: inf / NaN as IEEE says.
      EXPECT_TRUE(CheckOp(op, nullptr, {T({3}, dt, {1, -1, 0}), T({1}, dt, {0})})) << dt.ToString();
    }
  }
}

TEST(BroadcastComputeTest, IntegerDivision) {
  for (const char* op : {"divide", "mod", "floor_divide", "floor_mod"}) {
    for (DataType dt : {kI32, kI8, kI64}) {
      EXPECT_TRUE(CheckOp(op, nullptr, {T({3, 8}, dt), T({8}, dt, Divisors(8))})) << dt.ToString();
    }
    EXPECT_TRUE(CheckOp(op, nullptr, {T({3, 4}, kU8), T({4}, kU8, {1, 3, 7, 200})}));
    // INT_MIN / -1 wraps, the remainder is 0.
    EXPECT_TRUE(CheckOp(op, nullptr, {T({2}, kI8, {-128, 127}), T({1}, kI8, {-1})}));
    EXPECT_TRUE(CheckOp(op, nullptr, {T({2}, kI32, {-2147483648.0, 5}), T({2}, kI32, {-1, -1})}));
    // bool / true.
    EXPECT_TRUE(CheckOp(op, nullptr, {T({2}, kBool, {0, 1}), T({1}, kBool, {1})}));
  }
}

TEST(BroadcastComputeTest, IntegerPower) {
  Ranges small;
  small.ilo = 0;
  small.ihi = 8;
  for (DataType dt : {kI32, kI8, kU8, kI64}) {
    EXPECT_TRUE(CheckOp("power", nullptr, {T({4, 6}, dt), T({6}, dt)}, small)) << dt.ToString();
  }
  // Wraparound and large exponents.
  EXPECT_TRUE(CheckOp("power", nullptr, {T({4}, kI32, {3, -3, 7, 2}), T({4}, kI32, {30, 31, 100, 31})}));
  EXPECT_TRUE(CheckOp("power", nullptr, {T({3}, kI8, {3, -2, 5}), T({3}, kI8, {127, 7, 100})}));
  // Negative exponents: 1 -> 1, -1 -> +-1, others -> 0.
  EXPECT_TRUE(CheckOp("power", nullptr,
                      {T({6}, kI32, {1, -1, -1, 2, -3, 5}), T({6}, kI32, {-5, -3, -4, -1, -2, -100})}));
  EXPECT_TRUE(CheckOp("power", nullptr, {T({2}, kBool, {0, 1}), T({2}, kBool, {1, 0})}));
}

TEST(BroadcastComputeTest, Comparisons) {
  for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
    for (DataType dt : {kF32, kF16, kBF16, kI32, kI8, kU8, kBool}) {
      Ranges r;
      r.ilo = -2;
      r.ihi = 2;  // ties
      EXPECT_TRUE(CheckOp(op, nullptr, {T({3, 1}, dt), T({1, 5}, dt)}, r)) << dt.ToString();
    }
  }
}

TEST(BroadcastComputeTest, Logical) {
  for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
    EXPECT_TRUE(CheckOp(op, nullptr, {T({2, 3}, kBool), T({3}, kBool)}));
    EXPECT_TRUE(CheckOp(op, nullptr, {T({4, 1}, kBool), T({1, 4}, kBool)}));
  }
}

TEST(BroadcastComputeTest, Where) {
  for (DataType dt : {kF32, kI32, kF16, kBool}) {
    EXPECT_TRUE(CheckOp("where", nullptr, {T({3, 1}, kBool), T({1, 4}, dt), T({3, 4}, dt)}));
    EXPECT_TRUE(CheckOp("where", nullptr, {T({2, 3, 4}, kBool), T({4}, dt), T({}, dt)}));
  }
}

TEST(BroadcastComputeTest, BiasAddAndPrelu) {
  for (int64_t axis : {1, -1, 0, -3}) {
    Attrs bias = MakeAttrs<BiasAddAttrs>([=](BiasAddAttrs& a) { a.axis = axis; });
    Attrs prelu = MakeAttrs<PReluAttrs>([=](PReluAttrs& a) { a.axis = axis; });
    const int64_t len = axis == 0 || axis == -3 ? 2 : (axis == 1 ? 3 : 4);
    for (DataType dt : {kF32, kF16, kI32, kI8}) {
      EXPECT_TRUE(CheckOp("nn.bias_add", bias, {T({2, 3, 4}, dt), T({len}, dt)})) << axis;
    }
    for (DataType dt : {kF32, kF64, kF16, kBF16}) {
      EXPECT_TRUE(CheckOp("nn.prelu", prelu, {T({2, 3, 4}, dt), T({len}, dt)})) << axis;
    }
    EXPECT_TRUE(CheckOp("nn.prelu", prelu, {T({2, 3, 4}, kI32), T({len}, kI32, std::vector<double>(len, 2))}));
  }
  EXPECT_TRUE(CheckOp("nn.bias_add", nullptr, {T({2, 3}, kBool), T({3}, kBool)}));
}

TEST(BroadcastComputeTest, BroadcastTo) {
  Attrs a = MakeAttrs<BroadcastToAttrs>([](BroadcastToAttrs& b) { b.shape = {2, 3, 4}; });
  for (DataType dt : {kF32, kI8, kBool}) {
    EXPECT_TRUE(CheckOp("broadcast_to", a, {T({3, 1}, dt)}));
    EXPECT_TRUE(CheckOp("broadcast_to", a, {T({}, dt)}));
    EXPECT_TRUE(CheckOp("broadcast_to", a, {T({2, 3, 4}, dt)}));
  }
}

TEST(BroadcastComputeTest, SymbolicDims) {
  EXPECT_TRUE(CheckOp("add", nullptr, {Sym({3, 4}, {"n", ""}), T({4})}));
  EXPECT_TRUE(CheckOp("multiply", nullptr, {Sym({3, 4}, {"n", "m"}), Sym({3, 4}, {"n", "m"})}));
  // `n` may be 1 at run time: broadcasting is decided there.
  EXPECT_TRUE(CheckOp("add", nullptr, {Sym({1, 4}, {"n", ""}), Sym({3, 4}, {"k", ""})}));
  EXPECT_TRUE(CheckOp("add", nullptr, {Sym({3, 4}, {"n", ""}), Sym({1, 4}, {"k", ""})}));
  EXPECT_TRUE(CheckOp("subtract", nullptr, {Sym({1, 4}, {"n", ""}), T({3, 4})}));
}

}  // namespace
}  // namespace kiln::lowering::tensor::testing
