// File: interpreter/test_util.h (tests only)
//
// Builds small tensors and evaluates text expressions over them:
//
//   auto out = EvalText("nn.relu(%x)", {{"x", F32({3}, {-1, 0, 2})}});
//   EXPECT_EQ(Doubles(*out), (std::vector<double>{0, 0, 2}));
//
// EvalText also checks that a tensor result has exactly the shape and dtype
// type inference gave the expression, so every kernel test doubles as a check
// that the kernel agrees with its type relation.
#ifndef KILN_INTERPRETER_TEST_UTIL_H_
#define KILN_INTERPRETER_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/value.h"
#include "ir/dim.h"
#include "ir/parser.h"
#include "ir/tensor.h"
#include "types/infer_type.h"

namespace kiln::interp::testing {

// A tensor of `dt` with `values` (converted as a store would: rounded floats,
// wrapped integers).
inline Ref<const HostTensor> MakeT(DataType dt, std::vector<int64_t> shape,
                                   const std::vector<double>& values) {
  Ref<HostTensor> t = HostTensor::Create(dt, std::move(shape)).value();
  EXPECT_EQ(static_cast<size_t>(t->num_elements()), values.size()) << "test tensor size";
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t->num_elements(); ++i) {
    char* p = static_cast<char*>(t->mutable_raw_data());
    const double v = values[i];
    switch (dt.code()) {
      case DTypeCode::kFloat:
        if (dt.bits() == 32) reinterpret_cast<float*>(p)[i] = static_cast<float>(v);
        else if (dt.bits() == 64) reinterpret_cast<double*>(p)[i] = v;
        else reinterpret_cast<uint16_t*>(p)[i] = FloatToHalf(static_cast<float>(v));
        break;
      case DTypeCode::kBFloat:
        reinterpret_cast<uint16_t*>(p)[i] = FloatToBFloat16(static_cast<float>(v));
        break;
      default: {
        const uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(v));
        std::memcpy(p + i * static_cast<size_t>(dt.bytes()), &u, static_cast<size_t>(dt.bytes()));
      }
    }
  }
  return Ref<const HostTensor>(t);
}
inline Ref<const HostTensor> F32(std::vector<int64_t> shape, const std::vector<double>& v) {
  return MakeT(DataType::Float(32), std::move(shape), v);
}
inline Ref<const HostTensor> I32(std::vector<int64_t> shape, const std::vector<double>& v) {
  return MakeT(DataType::Int(32), std::move(shape), v);
}

// The elements of a tensor value as doubles (empty for a non-tensor).
inline std::vector<double> Doubles(const Value& v) {
  std::vector<double> out;
  if (!v.is_tensor()) return out;
  for (int64_t i = 0; i < v.tensor()->num_elements(); ++i) out.push_back(v.tensor()->GetAsDouble(i));
  return out;
}
inline std::vector<int64_t> ShapeOf(const Value& v) {
  return v.is_tensor() ? v.tensor()->shape() : std::vector<int64_t>{};
}

// Evaluates `text` with free variables %name bound to the given tensors
// (annotated with their exact types).
inline absl::StatusOr<Value> EvalText(
    const std::string& text,
    const std::vector<std::pair<std::string, Ref<const HostTensor>>>& inputs = {}) {
  std::vector<Var> vars;
  std::vector<std::pair<Var, Value>> binds;
  for (const auto& [name, t] : inputs) {
    Var v = MakeVar(name, MakeTensorType(ShapeFromInts(t->shape()), t->dtype()));
    vars.push_back(v);
    binds.emplace_back(v, Value::Tensor(t));
  }
  absl::StatusOr<Expr> e = ParseExpr(text, vars);
  if (!e.ok()) return e.status();
  absl::StatusOr<Value> out = Evaluate(*e, nullptr, binds);
  if (out.ok() && out->is_tensor()) {
    const auto* tt = (*e)->checked_type().as<TensorTypeNode>();
    const HostTensor& r = *out->tensor();
    EXPECT_TRUE(tt != nullptr && tt->dtype == r.dtype() &&
                TypeEqual((*e)->checked_type(),
                          MakeTensorType(ShapeFromInts(r.shape()), r.dtype())))
        << "kernel result " << ValueToString(*out) << " disagrees with the inferred type "
        << TypeToString((*e)->checked_type()) << " of " << text;
  }
  return out;
}

}  // namespace kiln::interp::testing

#endif  // KILN_INTERPRETER_TEST_UTIL_H_
