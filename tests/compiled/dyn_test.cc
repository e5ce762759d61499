// File: tests/compiled/dyn_test.cc
//
// The dyn.* operators compiled: their output shapes are run-time values, so
// the kernel's output dims are symbolic (bound from the output DLTensor at
// run time). Each case runs the interpreter for the expected value (and so the
// output shape), calls the JIT-compiled kernel with an output of that shape,
// and compares.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_llvm/codegen_llvm.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/tir_printer.h"
#include "lowering/lower.h"
#include "tests/compiled/compare.h"
#include "types/infer_type.h"

namespace kiln::testing {
namespace {

struct DynCase {
  std::string name;
  std::string params;
  std::string body;
  std::vector<std::vector<double>> int_args;  // values for the integer (shape) params, in order
};

void PrintTo(const DynCase& c, std::ostream* os) { *os << c.name; }

Ref<HostTensor> IntTensor(DataType t, const std::vector<double>& v, bool scalar) {
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(v.size()));
  Ref<HostTensor> h = *HostTensor::Create(t, shape);
  for (size_t i = 0; i < v.size(); ++i) {
    if (t.bits() == 64) h->mutable_data<int64_t>()[i] = static_cast<int64_t>(v[i]);
    else h->mutable_data<int32_t>()[i] = static_cast<int32_t>(v[i]);
  }
  return h;
}

DLTensor ToDL(const HostTensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw_data());
  d.device = {kDLCPU, 0};
  d.ndim = t.ndim();
  d.dtype = {static_cast<uint8_t>(t.dtype().code()), static_cast<uint8_t>(t.dtype().bits()),
             static_cast<uint16_t>(t.dtype().lanes())};
  d.shape = const_cast<int64_t*>(t.shape().data());
  return d;
}

class DynTest : public ::testing::TestWithParam<DynCase> {};

TEST_P(DynTest, CompiledMatchesInterpreter) {
  const DynCase& tc = GetParam();
  std::string text =
      absl::StrCat("#[version = \"0.1\"]\ndef @main(", tc.params, ") {\n  ", tc.body, "\n}\n");
  absl::StatusOr<Module> m = ParseModule(text, tc.name);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Module> typed = types::InferType(*m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  Function main = *typed->Lookup("main");

  // Float params random; integer params from the case.
  absl::StatusOr<std::vector<interp::Value>> inputs = RandomInputs(*typed, 9, -2, 2, 0, 0);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  size_t next_int = 0;
  for (size_t i = 0; i < main->params.size(); ++i) {
    const auto* tt = main->params[i]->checked_type().as<TensorTypeNode>();
    ASSERT_NE(tt, nullptr);
    if (tt->dtype.is_int()) {
      ASSERT_LT(next_int, tc.int_args.size());
      (*inputs)[i] = interp::Value::Tensor(IntTensor(tt->dtype, tc.int_args[next_int++], tt->ndim() == 0));
    }
  }
  absl::StatusOr<interp::Value> expected = interp::RunFunction(*typed, "main", *inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();

  absl::StatusOr<lowering::LoweredFunc> k = lowering::LowerPrimitive(main, "dyn_kernel", {});
  ASSERT_TRUE(k.ok()) << k.status();
  auto target = codegen::ParseTarget("llvm");
  ASSERT_TRUE(target.ok());
  auto jit = codegen::JitModule::Create({k->func}, *target);
  ASSERT_TRUE(jit.ok()) << jit.status() << "\n" << tir::ToText(k->func);
  KilnKernelFn fn = *(*jit)->Lookup("dyn_kernel");

  const HostTensor& want = *expected->tensor();
  Ref<HostTensor> out = *HostTensor::Create(want.dtype(), want.shape());
  std::vector<DLTensor> dl;
  for (const interp::Value& v : *inputs) dl.push_back(ToDL(*v.tensor()));
  for (const auto& c : k->constants) dl.push_back(ToDL(*c));
  dl.push_back(ToDL(*out));
  std::vector<DLTensor*> args;
  for (DLTensor& d : dl) args.push_back(&d);
  ASSERT_EQ(fn(args.data(), static_cast<int32_t>(args.size()), nullptr), 0) << kiln_kernel_last_error();
  EXPECT_TRUE(ValuesClose(*expected, interp::Value::Tensor(out), 1e-6, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(
    Dyn, DynTest,
    ::testing::Values(
        DynCase{"reshape", "%x: Tensor[(2, 6), float32], %s: Tensor[(2,), int64]", "dyn.reshape(%x, %s)",
                {{3, 4}}},
        DynCase{"reshape_codes", "%x: Tensor[(2, 3, 4), float32], %s: Tensor[(3,), int64]",
                "dyn.reshape(%x, %s)", {{0, -1, 2}}},
        DynCase{"broadcast_to", "%x: Tensor[(3, 1), float32], %s: Tensor[(3,), int64]",
                "dyn.broadcast_to(%x, %s)", {{2, 3, 5}}},
        DynCase{"zeros", "%s: Tensor[(2,), int64]", "dyn.zeros(%s, dtype=\"float32\")", {{3, 7}}},
        DynCase{"ones", "%s: Tensor[(3,), int32]", "dyn.ones(%s, dtype=\"int32\")", {{2, 1, 5}}},
        DynCase{"full", "%v: Tensor[(), float32], %s: Tensor[(2,), int64]",
                "dyn.full(%v, %s, dtype=\"float32\")", {{4, 3}}},
        DynCase{"strided_slice",
                "%x: Tensor[(5, 9), float32], %b: Tensor[(2,), int64], %e: Tensor[(2,), int64], "
                "%st: Tensor[(2,), int64]",
                "dyn.strided_slice(%x, %b, %e, %st)", {{1, 8}, {4, 0}, {1, -2}}},
        DynCase{"expand_dims", "%x: Tensor[(3, 4), float32], %a: Tensor[(), int64]",
                "dyn.expand_dims(%x, %a)", {{1}}}),
    [](const ::testing::TestParamInfo<DynCase>& info) { return info.param.name; });

}  // namespace
}  // namespace kiln::testing
