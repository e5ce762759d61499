// ONNX model builders for tests (onnx_test_util.h).
#include "frontends/onnx/onnx_test_util.h"

#include <utility>

namespace kiln::onnx_frontend::testing {

onnx::ModelProto MakeModel(int64_t opset, std::vector<onnx::NodeProto> nodes,
                           std::vector<onnx::ValueInfoProto> inputs,
                           std::vector<onnx::ValueInfoProto> outputs,
                           std::vector<onnx::TensorProto> initializers) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("kiln-test");
  SetOpset(&m, "", opset);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("test");
  for (auto& n : nodes) *g->add_node() = std::move(n);
  for (auto& i : inputs) *g->add_input() = std::move(i);
  for (auto& o : outputs) *g->add_output() = std::move(o);
  for (auto& t : initializers) *g->add_initializer() = std::move(t);
  return m;
}

void SetOpset(onnx::ModelProto* model, const std::string& domain, int64_t version) {
  for (onnx::OperatorSetIdProto& o : *model->mutable_opset_import()) {
    if (o.domain() == domain) {
      o.set_version(version);
      return;
    }
  }
  onnx::OperatorSetIdProto* o = model->add_opset_import();
  o->set_domain(domain);
  o->set_version(version);
}

onnx::NodeProto MakeNode(const std::string& op_type, std::vector<std::string> inputs,
                         std::vector<std::string> outputs, std::vector<onnx::AttributeProto> attrs,
                         const std::string& name, const std::string& domain) {
  onnx::NodeProto n;
  n.set_op_type(op_type);
  n.set_name(name);
  n.set_domain(domain);
  for (auto& i : inputs) n.add_input(std::move(i));
  for (auto& o : outputs) n.add_output(std::move(o));
  for (auto& a : attrs) *n.add_attribute() = std::move(a);
  return n;
}

onnx::ValueInfoProto MakeValueInfo(const std::string& name, int32_t elem_type,
                                   std::vector<DimSpec> dims) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  onnx::TypeProto::Tensor* t = v.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (const DimSpec& d : dims) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (const int64_t* value = std::get_if<int64_t>(&d)) {
      dim->set_dim_value(*value);
    } else if (const std::string& param = std::get<std::string>(d); !param.empty()) {
      dim->set_dim_param(param);
    }
  }
  return v;
}

onnx::ValueInfoProto MakeValueInfoNoShape(const std::string& name, int32_t elem_type) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  v.mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  return v;
}

onnx::TensorProto MakeFloatTensorTyped(const std::string& name, std::vector<int64_t> dims,
                                       const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  return t;
}

namespace {
onnx::AttributeProto Attr(const std::string& name, onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(type);
  return a;
}
}  // namespace

onnx::AttributeProto AttrInt(const std::string& name, int64_t v) {
  onnx::AttributeProto a = Attr(name, onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto AttrFloat(const std::string& name, float v) {
  onnx::AttributeProto a = Attr(name, onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

onnx::AttributeProto AttrString(const std::string& name, const std::string& v) {
  onnx::AttributeProto a = Attr(name, onnx::AttributeProto::STRING);
  a.set_s(v);
  return a;
}

onnx::AttributeProto AttrInts(const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto a = Attr(name, onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

onnx::AttributeProto AttrFloats(const std::string& name, const std::vector<float>& v) {
  onnx::AttributeProto a = Attr(name, onnx::AttributeProto::FLOATS);
  for (float x : v) a.add_floats(x);
  return a;
}

onnx::AttributeProto AttrStrings(const std::string& name, const std::vector<std::string>& v) {
  onnx::AttributeProto a = Attr(name, onnx::AttributeProto::STRINGS);
  for (const std::string& x : v) a.add_strings(x);
  return a;
}

onnx::AttributeProto AttrTensor(const std::string& name, const onnx::TensorProto& t) {
  onnx::AttributeProto a = Attr(name, onnx::AttributeProto::TENSOR);
  *a.mutable_t() = t;
  return a;
}

std::string Serialize(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

}  // namespace kiln::onnx_frontend::testing
