// File: frontends/onnx/onnx_test_util.h (tests only)
//
// Builds ONNX models in C++ with the protobuf API, so importer and converter
// tests need no files and no Python:
//
//   using namespace kiln::onnx_frontend::testing;
//   onnx::ModelProto m = MakeModel(
//       13, {MakeNode("Relu", {"x"}, {"y"})},
//       {MakeValueInfo("x", onnx::TensorProto::FLOAT, {"N", 4})},
//       {MakeValueInfo("y", onnx::TensorProto::FLOAT, {"N", 4})});
//   auto module = ImportOnnxBytes(Serialize(m));
//
// Dims in MakeValueInfo are numbers (dim_value), names (dim_param) or ""
// (neither: an unknown dim). Tensors are stored in raw_data (little-endian)
// unless a *Typed* helper says otherwise.
#ifndef KILN_FRONTENDS_ONNX_ONNX_TEST_UTIL_H_
#define KILN_FRONTENDS_ONNX_ONNX_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::testing {

using DimSpec = std::variant<int64_t, std::string>;

// A model with one graph ("test"), importing the default domain at `opset`.
onnx::ModelProto MakeModel(int64_t opset, std::vector<onnx::NodeProto> nodes,
                           std::vector<onnx::ValueInfoProto> inputs,
                           std::vector<onnx::ValueInfoProto> outputs,
                           std::vector<onnx::TensorProto> initializers = {});
// Adds (or updates) an opset_import entry.
void SetOpset(onnx::ModelProto* model, const std::string& domain, int64_t version);

onnx::NodeProto MakeNode(const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs,
                         std::vector<onnx::AttributeProto> attrs = {}, const std::string& name = "",
                         const std::string& domain = "");

// A tensor ValueInfo; `dims` empty means a scalar. Use MakeValueInfoNoShape
// for an unknown rank.
onnx::ValueInfoProto MakeValueInfo(const std::string& name, int32_t elem_type,
                                   std::vector<DimSpec> dims);
onnx::ValueInfoProto MakeValueInfoNoShape(const std::string& name, int32_t elem_type);

// A tensor with `values` as raw_data; T must match elem_type's size.
template <typename T>
onnx::TensorProto MakeTensor(const std::string& name, int32_t elem_type, std::vector<int64_t> dims,
                             const std::vector<T>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(elem_type);
  for (int64_t d : dims) t.add_dims(d);
  std::string raw(values.size() * sizeof(T), '\0');
  if (!raw.empty()) std::memcpy(raw.data(), values.data(), raw.size());
  t.set_raw_data(std::move(raw));
  return t;
}
inline onnx::TensorProto MakeFloatTensor(const std::string& name, std::vector<int64_t> dims,
                                         const std::vector<float>& values) {
  return MakeTensor<float>(name, onnx::TensorProto::FLOAT, std::move(dims), values);
}
inline onnx::TensorProto MakeInt64Tensor(const std::string& name, std::vector<int64_t> dims,
                                         const std::vector<int64_t>& values) {
  return MakeTensor<int64_t>(name, onnx::TensorProto::INT64, std::move(dims), values);
}
// FLOAT values in float_data (the typed field) instead of raw_data.
onnx::TensorProto MakeFloatTensorTyped(const std::string& name, std::vector<int64_t> dims,
                                       const std::vector<float>& values);

// Attributes.
onnx::AttributeProto AttrInt(const std::string& name, int64_t v);
onnx::AttributeProto AttrFloat(const std::string& name, float v);
onnx::AttributeProto AttrString(const std::string& name, const std::string& v);
onnx::AttributeProto AttrInts(const std::string& name, const std::vector<int64_t>& v);
onnx::AttributeProto AttrFloats(const std::string& name, const std::vector<float>& v);
onnx::AttributeProto AttrStrings(const std::string& name, const std::vector<std::string>& v);
onnx::AttributeProto AttrTensor(const std::string& name, const onnx::TensorProto& t);

std::string Serialize(const onnx::ModelProto& model);

}  // namespace kiln::onnx_frontend::testing

#endif  // KILN_FRONTENDS_ONNX_ONNX_TEST_UTIL_H_
