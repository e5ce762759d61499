// File: frontends/onnx/convert_test_util.h (tests only)
//
// Runs small ONNX models through the importer and the reference interpreter,
// for the converter tests (convert_*_test.cc):
//
//   using namespace kiln::onnx_frontend::testing;
//   auto out = RunNode(13, MakeNode("Add", {"a", "b"}, {"y"}),
//                      {In("a", DataType::Float(32), {2}, {1, 2}),
//                       In("b", DataType::Float(32), {1}, {10})});
//   // out->at(0): a HostTensor [11, 12]
//
// Inputs are graph inputs (In) or initializers (Init: constants at import
// time). The node's outputs are the graph's outputs.
#ifndef KILN_FRONTENDS_ONNX_CONVERT_TEST_UTIL_H_
#define KILN_FRONTENDS_ONNX_CONVERT_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "ir/module.h"
#include "ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::testing {

// A named tensor: a graph input (In) or an initializer (Init).
struct NamedTensor {
  std::string name;
  Ref<const HostTensor> value;
  bool initializer = false;
};

// A host tensor of any dtype from doubles (converted as a C cast would;
// float16/bfloat16 rounded to nearest).
Ref<const HostTensor> Tensor(DataType dt, std::vector<int64_t> shape,
                             const std::vector<double>& values);
NamedTensor In(std::string name, DataType dt, std::vector<int64_t> shape,
               const std::vector<double>& values);
NamedTensor Init(std::string name, DataType dt, std::vector<int64_t> shape,
                 const std::vector<double>& values);
inline NamedTensor F32In(std::string name, std::vector<int64_t> shape,
                         const std::vector<double>& values) {
  return In(std::move(name), DataType::Float(32), std::move(shape), values);
}

// kiln dtype -> ONNX TensorProto.DataType.
int32_t OnnxType(DataType dt);

// The model of one node at `opset`, its inputs' names and types from
// `inputs`, its outputs the graph's outputs.
onnx::ModelProto NodeModel(int64_t opset, const onnx::NodeProto& node,
                           const std::vector<NamedTensor>& inputs);

// Imports `model` and runs `main` with the graph inputs among `inputs` (in
// order), returning every output.
absl::StatusOr<std::vector<Ref<const HostTensor>>> RunModel(const onnx::ModelProto& model,
                                                            const std::vector<NamedTensor>& inputs);
absl::StatusOr<std::vector<Ref<const HostTensor>>> RunNode(int64_t opset,
                                                           const onnx::NodeProto& node,
                                                           const std::vector<NamedTensor>& inputs);
// The imported module as text (to check which graph-IR operators it uses).
absl::StatusOr<std::string> ImportedText(int64_t opset, const onnx::NodeProto& node,
                                         const std::vector<NamedTensor>& inputs);

// Every element as double (bool as 0/1).
std::vector<double> Values(const HostTensor& t);

// One output of a node run: values (as double), shape, dtype.
struct NodeOutput {
  std::vector<double> values;
  std::vector<int64_t> shape;
  DataType dtype;
};

// Runs the node (RunNode) and returns every output; a failure is a gtest
// failure (EXPECT) naming the operator and opset, and no outputs.
std::vector<NodeOutput> ExecAll(int64_t opset, const onnx::NodeProto& node,
                                const std::vector<NamedTensor>& inputs);
// The first output of ExecAll (empty when it failed).
NodeOutput Exec(int64_t opset, const onnx::NodeProto& node, const std::vector<NamedTensor>& inputs);

// The number of elements of a shape.
int64_t Numel(const std::vector<int64_t>& shape);
// Deterministic test data in about [-2, 2]: 2 sin(1.7 i + phase).
std::vector<double> Data(int64_t n, double phase = 0.3);
// `got` has `shape`, and each value is within tol of `want` (relative to
// |want| above 1); a failure is a gtest failure naming the element.
void ExpectNear(const NodeOutput& got, const std::vector<int64_t>& shape,
                const std::vector<double>& want, double tol = 1e-5);
// The status of RunNode alone.
absl::Status RunStatus(int64_t opset, const onnx::NodeProto& node,
                       const std::vector<NamedTensor>& inputs);

}  // namespace kiln::onnx_frontend::testing

#endif  // KILN_FRONTENDS_ONNX_CONVERT_TEST_UTIL_H_
