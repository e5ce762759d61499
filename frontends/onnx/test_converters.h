// File: frontends/onnx/test_converters.h (importer tests only)
//
// Converters for made-up operators in the domain "kiln.test", so the
// importer's tests do not depend on the real converter families:
//   TestAdd(a, b)        -> add(a, b)
//   TestNeg(x)           -> negative(x)
//   TestVersioned(x)     -> negative(x) for opsets 1-4, exp(x) from 5, abs(x) from 9
//   TestFold(x, v)       -> the value of v, folded at import time (ConstantInput)
//   TestStrides(x)       -> x; reads INTS attribute 'strides'
//   TestTwoOut(x)        -> (x, negative(x)); with attribute only_one=1 only x
//   TestUnsupported(x)   -> Unimplemented("mode 'cubic' is not supported")
#ifndef KILN_FRONTENDS_ONNX_TEST_CONVERTERS_H_
#define KILN_FRONTENDS_ONNX_TEST_CONVERTERS_H_

#include <mutex>
#include <string>
#include <vector>

#include "frontends/onnx/converter.h"
#include "frontends/onnx/onnx_test_util.h"
#include "ir/status_macros.h"

namespace kiln::onnx_frontend::testing {

inline constexpr char kTestDomain[] = "kiln.test";

inline void RegisterTestConverters() {
  static std::once_flag once;
  std::call_once(once, [] {
    using Outs = absl::StatusOr<std::vector<Expr>>;
    ConverterRegistry& r = ConverterRegistry::Global();
    const auto unary = [](const char* op) {
      return [op](ConvertContext& c) -> Outs {
        KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
        KILN_ASSIGN_OR_RETURN(Expr y, c.Call(op, {x}));
        return std::vector<Expr>{y};
      };
    };
    r.Add(
        "TestAdd", 1,
        [](ConvertContext& c) -> Outs {
          KILN_ASSIGN_OR_RETURN(Expr a, c.Input(0));
          KILN_ASSIGN_OR_RETURN(Expr b, c.Input(1));
          KILN_ASSIGN_OR_RETURN(Expr y, c.Call("add", {a, b}));
          return std::vector<Expr>{y};
        },
        kTestDomain);
    r.Add("TestNeg", 1, unary("negative"), kTestDomain);
    // Registered out of order on purpose: the registry keeps them sorted.
    r.Add("TestVersioned", 9, unary("abs"), kTestDomain);
    r.Add("TestVersioned", 1, unary("negative"), kTestDomain);
    r.Add("TestVersioned", 5, unary("exp"), kTestDomain);
    r.Add(
        "TestFold", 1,
        [](ConvertContext& c) -> Outs {
          KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> v, c.ConstantInput(1));
          KILN_ASSIGN_OR_RETURN(Expr y, c.Const(v));
          return std::vector<Expr>{y};
        },
        kTestDomain);
    r.Add(
        "TestStrides", 1,
        [](ConvertContext& c) -> Outs {
          KILN_ASSIGN_OR_RETURN(std::vector<int64_t> s, c.AttrInts("strides", {1, 1}));
          KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          return std::vector<Expr>{x};
        },
        kTestDomain);
    r.Add(
        "TestTwoOut", 1,
        [](ConvertContext& c) -> Outs {
          KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
          KILN_ASSIGN_OR_RETURN(int64_t only_one, c.AttrInt("only_one", 0));
          if (only_one != 0) return std::vector<Expr>{x};
          KILN_ASSIGN_OR_RETURN(Expr y, c.Call("negative", {x}));
          return std::vector<Expr>{x, y};
        },
        kTestDomain);
    r.Add(
        "TestUnsupported", 1,
        [](ConvertContext& c) -> Outs { return c.Unsupported("mode 'cubic' is not supported"); },
        kTestDomain);
  });
}

// A node of the test domain.
inline onnx::NodeProto TestNode(const std::string& op_type, std::vector<std::string> inputs,
                                std::vector<std::string> outputs,
                                std::vector<onnx::AttributeProto> attrs = {},
                                const std::string& name = "") {
  return MakeNode(op_type, std::move(inputs), std::move(outputs), std::move(attrs), name,
                  kTestDomain);
}

// MakeModel at default opset 13, importing kiln.test at `test_opset`.
inline onnx::ModelProto TestModel(std::vector<onnx::NodeProto> nodes,
                                  std::vector<onnx::ValueInfoProto> inputs,
                                  std::vector<onnx::ValueInfoProto> outputs,
                                  std::vector<onnx::TensorProto> initializers = {},
                                  int64_t test_opset = 1) {
  RegisterTestConverters();
  onnx::ModelProto m = MakeModel(13, std::move(nodes), std::move(inputs), std::move(outputs),
                                 std::move(initializers));
  SetOpset(&m, kTestDomain, test_opset);
  return m;
}

}  // namespace kiln::onnx_frontend::testing

#endif  // KILN_FRONTENDS_ONNX_TEST_CONVERTERS_H_
