// ONNX smoke test: build a ModelProto, serialize it, parse it back from bytes,
// run the ONNX checker, and read a model from @onnx_testdata.
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"

namespace {

TEST(OnnxSmoke, ParseModelFromBytes) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("kiln_smoke");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto* graph = model.mutable_graph();
  graph->set_name("g");
  auto* node = graph->add_node();
  node->set_op_type("Relu");
  node->add_input("x");
  node->add_output("y");
  for (auto [name, value_info] :
       {std::pair{"x", graph->add_input()}, std::pair{"y", graph->add_output()}}) {
    value_info->set_name(name);
    auto* tt = value_info->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(4);
  }

  std::string bytes;
  ASSERT_TRUE(model.SerializeToString(&bytes));
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_EQ(parsed.producer_name(), "kiln_smoke");
  ASSERT_EQ(parsed.graph().node_size(), 1);
  EXPECT_EQ(parsed.graph().node(0).op_type(), "Relu");
  EXPECT_NO_THROW(onnx::checker::check_model(parsed));

  onnx::ModelProto garbage;
  EXPECT_FALSE(garbage.ParseFromString(std::string("\xff\xff\xff\xff garbage", 13)));
}

TEST(OnnxSmoke, ReadsTestData) {
  // @onnx_testdata//:simple is a data dependency: its files are in the runfiles.
  const std::string path = "external/onnx_testdata/simple/test_single_relu_model/model.onnx";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing runfile " << path;
  std::stringstream buf;
  buf << in.rdbuf();
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(buf.str()));
  EXPECT_GE(model.graph().node_size(), 1);
}

}  // namespace
