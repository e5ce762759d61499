// File: lowering/compute/tensor/numeric_util.h (tests only)
//
// Checks an operator's compute against the interpreter's kernel: the compute
// is built through type inference (test_util.h), lowered three ways (naively,
// naive_lower.h; CreateSchedule + LowerSchedule, lowering/te/lower.h; the same
// after ScheduleDefaultX86), verified (VerifyPrimFunc), run by the loop-IR
// evaluator (lowering/passes/tir_eval.h) on the same inputs the interpreter
// gets, and every output element compared (integers and bools exactly, floats
// within a tolerance of their dtype).
//
//   EXPECT_TRUE(CheckOp("add", nullptr, {T({2, 3}), T({3})}));
//   EXPECT_TRUE(CheckOp("take", attrs, {T({5}), T({4}, DataType::Int(32), {-1, 0, 4, 9})}));
#ifndef KILN_LOWERING_COMPUTE_TENSOR_NUMERIC_UTIL_H_
#define KILN_LOWERING_COMPUTE_TENSOR_NUMERIC_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/attrs.h"
#include "ir/dtype.h"

namespace kiln::lowering::tensor::testing {

inline constexpr DataType kF32 = DataType::Float(32);
inline constexpr DataType kF64 = DataType::Float(64);
inline constexpr DataType kF16 = DataType::Float(16);
inline constexpr DataType kBF16 = DataType::BFloat16();
inline constexpr DataType kI8 = DataType::Int(8);
inline constexpr DataType kI32 = DataType::Int(32);
inline constexpr DataType kI64 = DataType::Int(64);
inline constexpr DataType kU8 = DataType::UInt(8);
inline constexpr DataType kBool = DataType::Bool();

struct TensorArg {
  std::vector<int64_t> shape;
  DataType dtype = kF32;
  std::vector<double> values;     // empty: random (see Ranges)
  std::vector<std::string> sym;   // per dim: a symbolic dim name, or "" for static
};

// One operator argument: a tensor, or a tuple of tensors.
struct Arg {
  std::vector<TensorArg> fields;
  bool tuple = false;
};

inline Arg T(std::vector<int64_t> shape, DataType dt = kF32, std::vector<double> values = {}) {
  return Arg{{TensorArg{std::move(shape), dt, std::move(values), {}}}, false};
}
// A tensor whose dims named in `sym` are symbolic in the types ("" = static).
inline Arg Sym(std::vector<int64_t> shape, std::vector<std::string> sym, DataType dt = kF32) {
  return Arg{{TensorArg{std::move(shape), dt, {}, std::move(sym)}}, false};
}
inline Arg Tuple(const std::vector<Arg>& fields) {
  Arg a;
  a.tuple = true;
  for (const Arg& f : fields) a.fields.push_back(f.fields[0]);
  return a;
}

// Ranges of random values: floats uniform in [flo, fhi), integers in
// [ilo, ihi) (clamped to the dtype), bools 0/1.
struct Ranges {
  double flo = -3, fhi = 3;
  int64_t ilo = -8, ihi = 8;
  uint32_t seed = 1;
  // Only the naive lowering (skips CreateSchedule + LowerSchedule).
  bool naive_only = false;
};

::testing::AssertionResult CheckOp(const std::string& op, const Attrs& attrs,
                                   const std::vector<Arg>& args, const Ranges& ranges = {});

// Float tolerance (relative; absolute below 1) for results of dtype t.
double Tolerance(DataType t);

}  // namespace kiln::lowering::tensor::testing

#endif  // KILN_LOWERING_COMPUTE_TENSOR_NUMERIC_UTIL_H_
