// Test helpers for the converter tests (convert_test_util.h).
#include <cmath>
#include <algorithm>
#include "frontends/onnx/convert_test_util.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/value.h"
#include "ir/printer.h"
#include "ir/status_macros.h"

namespace kiln::onnx_frontend::testing {
namespace {

template <typename T>
void Put(HostTensor* t, int64_t i, T v) {
  t->mutable_data<T>()[i] = v;
}

}  // namespace

Ref<const HostTensor> Tensor(DataType dt, std::vector<int64_t> shape,
                             const std::vector<double>& values) {
  Ref<HostTensor> t = HostTensor::Create(dt, std::move(shape)).value();
  for (int64_t i = 0; i < t->num_elements() && i < static_cast<int64_t>(values.size()); ++i) {
    const double v = values[static_cast<size_t>(i)];
    switch (dt.code()) {
      case DTypeCode::kFloat:
        if (dt.bits() == 32)
          Put<float>(t.get(), i, static_cast<float>(v));
        else if (dt.bits() == 64)
          Put<double>(t.get(), i, v);
        else
          Put<uint16_t>(t.get(), i, FloatToHalf(static_cast<float>(v)));
        break;
      case DTypeCode::kBFloat:
        Put<uint16_t>(t.get(), i, FloatToBFloat16(static_cast<float>(v)));
        break;
      case DTypeCode::kBool:
        Put<uint8_t>(t.get(), i, v != 0);
        break;
      case DTypeCode::kInt:
        if (dt.bits() == 8)
          Put<int8_t>(t.get(), i, static_cast<int8_t>(v));
        else if (dt.bits() == 16)
          Put<int16_t>(t.get(), i, static_cast<int16_t>(v));
        else if (dt.bits() == 32)
          Put<int32_t>(t.get(), i, static_cast<int32_t>(v));
        else
          Put<int64_t>(t.get(), i, static_cast<int64_t>(v));
        break;
      case DTypeCode::kUInt:
        if (dt.bits() == 8)
          Put<uint8_t>(t.get(), i, static_cast<uint8_t>(v));
        else if (dt.bits() == 16)
          Put<uint16_t>(t.get(), i, static_cast<uint16_t>(v));
        else if (dt.bits() == 32)
          Put<uint32_t>(t.get(), i, static_cast<uint32_t>(v));
        else
          Put<uint64_t>(t.get(), i, static_cast<uint64_t>(v));
        break;
      default:
        break;
    }
  }
  return Ref<const HostTensor>(t);
}

NamedTensor In(std::string name, DataType dt, std::vector<int64_t> shape,
               const std::vector<double>& values) {
  return NamedTensor{std::move(name), Tensor(dt, std::move(shape), values), false};
}

NamedTensor Init(std::string name, DataType dt, std::vector<int64_t> shape,
                 const std::vector<double>& values) {
  return NamedTensor{std::move(name), Tensor(dt, std::move(shape), values), true};
}

int32_t OnnxType(DataType dt) {
  using onnx::TensorProto;
  switch (dt.code()) {
    case DTypeCode::kFloat:
      return dt.bits() == 32   ? TensorProto::FLOAT
             : dt.bits() == 64 ? TensorProto::DOUBLE
                               : TensorProto::FLOAT16;
    case DTypeCode::kBFloat:
      return TensorProto::BFLOAT16;
    case DTypeCode::kBool:
      return TensorProto::BOOL;
    case DTypeCode::kInt:
      return dt.bits() == 8    ? TensorProto::INT8
             : dt.bits() == 16 ? TensorProto::INT16
             : dt.bits() == 32 ? TensorProto::INT32
                               : TensorProto::INT64;
    case DTypeCode::kUInt:
      return dt.bits() == 8    ? TensorProto::UINT8
             : dt.bits() == 16 ? TensorProto::UINT16
             : dt.bits() == 32 ? TensorProto::UINT32
                               : TensorProto::UINT64;
    default:
      return TensorProto::UNDEFINED;
  }
}

onnx::ModelProto NodeModel(int64_t opset, const onnx::NodeProto& node,
                           const std::vector<NamedTensor>& inputs) {
  std::vector<onnx::ValueInfoProto> graph_inputs;
  std::vector<onnx::TensorProto> inits;
  for (const NamedTensor& in : inputs) {
    const HostTensor& t = *in.value;
    if (in.initializer) {
      onnx::TensorProto p;
      p.set_name(in.name);
      p.set_data_type(OnnxType(t.dtype()));
      for (int64_t d : t.shape()) p.add_dims(d);
      p.set_raw_data(std::string(static_cast<const char*>(t.raw_data()), t.nbytes()));
      inits.push_back(std::move(p));
    } else {
      std::vector<DimSpec> dims(t.shape().begin(), t.shape().end());
      graph_inputs.push_back(MakeValueInfo(in.name, OnnxType(t.dtype()), dims));
    }
  }
  std::vector<onnx::ValueInfoProto> outputs;
  for (const std::string& out : node.output())
    if (!out.empty()) outputs.push_back(MakeValueInfoNoShape(out, onnx::TensorProto::UNDEFINED));
  return MakeModel(opset, {node}, std::move(graph_inputs), std::move(outputs), std::move(inits));
}

absl::StatusOr<std::vector<Ref<const HostTensor>>> RunModel(
    const onnx::ModelProto& model, const std::vector<NamedTensor>& inputs) {
  KILN_ASSIGN_OR_RETURN(Module m, ImportOnnxBytes(Serialize(model)));
  std::vector<interp::Value> args;
  for (const NamedTensor& in : inputs)
    if (!in.initializer) args.push_back(interp::Value::Tensor(in.value));
  KILN_ASSIGN_OR_RETURN(interp::Value v, interp::RunFunction(m, "main", std::move(args)));
  std::vector<Ref<const HostTensor>> out;
  if (v.is_tensor()) {
    out.push_back(v.tensor());
    return out;
  }
  for (const interp::Value& f : v.fields()) {
    KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> t, interp::AsTensor(f, "output"));
    out.push_back(t);
  }
  return out;
}

absl::StatusOr<std::vector<Ref<const HostTensor>>> RunNode(int64_t opset,
                                                           const onnx::NodeProto& node,
                                                           const std::vector<NamedTensor>& inputs) {
  return RunModel(NodeModel(opset, node, inputs), inputs);
}

absl::StatusOr<std::string> ImportedText(int64_t opset, const onnx::NodeProto& node,
                                         const std::vector<NamedTensor>& inputs) {
  KILN_ASSIGN_OR_RETURN(Module m, ImportOnnxBytes(Serialize(NodeModel(opset, node, inputs))));
  return PrintModule(m);
}

std::vector<double> Values(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.GetAsDouble(i));
  return v;
}

std::vector<NodeOutput> ExecAll(int64_t opset, const onnx::NodeProto& node,
                                const std::vector<NamedTensor>& inputs) {
  auto r = RunNode(opset, node, inputs);
  EXPECT_TRUE(r.ok()) << node.op_type() << " (opset " << opset << "): " << r.status();
  std::vector<NodeOutput> outs;
  if (!r.ok()) return outs;
  for (const auto& t : *r) outs.push_back({Values(*t), t->shape(), t->dtype()});
  return outs;
}

NodeOutput Exec(int64_t opset, const onnx::NodeProto& node, const std::vector<NamedTensor>& inputs) {
  std::vector<NodeOutput> outs = ExecAll(opset, node, inputs);
  return outs.empty() ? NodeOutput{} : outs[0];
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<double> Data(int64_t n, double phase) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] = 2.0 * std::sin(1.7 * static_cast<double>(i) + phase);
  }
  return v;
}

void ExpectNear(const NodeOutput& got, const std::vector<int64_t>& shape,
                const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.shape, shape);
  ASSERT_EQ(got.values.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got.values[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
  }
}

absl::Status RunStatus(int64_t opset, const onnx::NodeProto& node,
                       const std::vector<NamedTensor>& inputs) {
  return RunNode(opset, node, inputs).status();
}

}  // namespace kiln::onnx_frontend::testing
