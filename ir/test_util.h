// File: ir/test_util.h
//
// Small helpers for building IR in tests: unwrap a StatusOr with a test
// failure (never an abort) and shorthand constructors.
#ifndef KILN_IR_TEST_UTIL_H_
#define KILN_IR_TEST_UTIL_H_

#include <utility>

#include "gtest/gtest.h"
#include "ir/expr.h"
#include "ir/op.h"

namespace kiln::testing {

// Unwraps `s`; on error records a test failure and returns a default value.
template <typename T>
T Unwrap(absl::StatusOr<T> s, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  if (!s.ok()) {
    ADD_FAILURE_AT(file, line) << s.status();
    return T();
  }
  return *std::move(s);
}

inline TensorType F32(std::vector<int64_t> shape) {
  return MakeTensorType(ShapeFromInts(shape), DataType::Float(32));
}

inline Expr CallOp(const char* name, std::vector<Expr> args, Attrs attrs = nullptr) {
  Op op = Unwrap(GetOp(name));
  return Unwrap(MakeCall(op, std::move(args), std::move(attrs)));
}

}  // namespace kiln::testing

#endif  // KILN_IR_TEST_UTIL_H_
