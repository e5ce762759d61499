// Malformed ONNX models give clear statuses, never crashes (also under
// --config=asan): truncated and random bytes, byte mutations of a valid
// model, wrong attribute types, cycles, dangling edges, values defined twice,
// tensors whose data does not match their dims, unknown data types.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "frontends/onnx/test_converters.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::onnx_frontend {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using namespace ::kiln::onnx_frontend::testing;  // NOLINT: test helpers

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

// A small valid model touching most of the format: an initializer, a graph
// input with a dim_param, an attribute, two domains.
onnx::ModelProto ValidModel() {
  return TestModel({TestNode("TestAdd", {"x", "w"}, {"s"}, {}, "add"),
                    TestNode("TestStrides", {"s"}, {"t"}, {AttrInts("strides", {2, 2})}, "conv"),
                    TestNode("TestNeg", {"t"}, {"y"}, {}, "neg")},
                   {MakeValueInfo("x", kFloat, {"N", 3})}, {MakeValueInfo("y", kFloat, {"N", 3})},
                   {MakeFloatTensor("w", {3}, {1, 2, 3})});
}

absl::Status ImportStatus(const onnx::ModelProto& m) {
  return ImportOnnxBytes(Serialize(m)).status();
}

// A failure a user can act on: a user-error code and a message.
void ExpectClearError(const absl::Status& s, const std::string& context) {
  if (s.ok()) return;
  EXPECT_NE(s.code(), absl::StatusCode::kInternal) << context << ": " << s;
  EXPECT_NE(s.code(), absl::StatusCode::kUnknown) << context << ": " << s;
  EXPECT_FALSE(s.message().empty()) << context;
}

TEST(MalformedTest, ValidModelImports) {
  absl::StatusOr<Module> m = ImportOnnxBytes(Serialize(ValidModel()));
  EXPECT_TRUE(m.ok()) << m.status();
}

TEST(MalformedTest, EveryTruncationFailsCleanly) {
  const std::string bytes = Serialize(ValidModel());
  ASSERT_GT(bytes.size(), 100u);
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::Status s = ImportOnnxBytes(absl::string_view(bytes.data(), n)).status();
    EXPECT_FALSE(s.ok()) << "truncated to " << n << " of " << bytes.size() << " bytes";
    ExpectClearError(s, "truncated to " + std::to_string(n));
  }
}

TEST(MalformedTest, RandomBytesNeverCrash) {
  int failures = 0;
  for (uint32_t seed = 0; seed < 500; ++seed) {
    std::mt19937 rng(seed);
    std::string bytes(rng() % 2048, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    absl::Status s = ImportOnnxBytes(bytes).status();
    ExpectClearError(s, "seed " + std::to_string(seed));
    failures += !s.ok();
  }
  EXPECT_EQ(failures, 500) << "random bytes are not a model";
}

TEST(MalformedTest, MutatedModelsNeverCrash) {
  const std::string valid = Serialize(ValidModel());
  int ok = 0;
  for (uint32_t seed = 0; seed < 600; ++seed) {
    std::mt19937 rng(seed);
    std::string bytes = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    absl::Status s = ImportOnnxBytes(bytes).status();
    ExpectClearError(s, "seed " + std::to_string(seed));
    ok += s.ok();
  }
  EXPECT_LT(ok, 600) << "some mutations must break the model";
}

// The same mutations through the real converters (Conv, Relu, MaxPool,
// Reshape, Gemm), when they are registered.
TEST(MalformedTest, MutatedRealModelsNeverCrash) {
  const std::vector<std::string> ops = SupportedOps();
  for (const char* op : {"Conv", "Relu", "MaxPool", "Reshape", "Gemm"}) {
    if (!std::binary_search(ops.begin(), ops.end(), op))
      GTEST_SKIP() << op << " has no converter yet";
  }
  onnx::ModelProto m = MakeModel(
      13,
      {MakeNode("Conv", {"x", "w", "b"}, {"c"},
                {AttrInts("kernel_shape", {3, 3}), AttrInts("pads", {1, 1, 1, 1})}, "conv"),
       MakeNode("Relu", {"c"}, {"r"}, {}, "relu"),
       MakeNode("MaxPool", {"r"}, {"p"},
                {AttrInts("kernel_shape", {2, 2}), AttrInts("strides", {2, 2})}, "pool"),
       MakeNode("Reshape", {"p", "shape"}, {"f"}, {}, "flat"),
       MakeNode("Gemm", {"f", "fc", "fb"}, {"y"}, {AttrInt("transB", 1)}, "fc")},
      {MakeValueInfo("x", kFloat, {"N", 2, 4, 4})}, {MakeValueInfo("y", kFloat, {"N", 3})},
      {MakeFloatTensor("w", {4, 2, 3, 3}, std::vector<float>(72, 0.5f)),
       MakeFloatTensor("b", {4}, {1, 2, 3, 4}), MakeInt64Tensor("shape", {2}, {-1, 16}),
       MakeFloatTensor("fc", {3, 16}, std::vector<float>(48, 0.25f)),
       MakeFloatTensor("fb", {3}, {0, 1, 2})});
  const std::string valid = Serialize(m);
  absl::StatusOr<Module> module = ImportOnnxBytes(valid);
  ASSERT_TRUE(module.ok()) << module.status();
  for (size_t n = 0; n < valid.size(); n += 7) {
    ExpectClearError(ImportOnnxBytes(absl::string_view(valid.data(), n)).status(),
                     "truncated to " + std::to_string(n));
  }
  for (uint32_t seed = 0; seed < 400; ++seed) {
    std::mt19937 rng(seed);
    std::string bytes = valid;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    ExpectClearError(ImportOnnxBytes(bytes).status(), "seed " + std::to_string(seed));
  }
}

TEST(MalformedTest, WrongAttributeTypeNamesNodeAndAttribute) {
  onnx::ModelProto m = ValidModel();
  *m.mutable_graph()->mutable_node(1)->mutable_attribute(0) = AttrFloat("strides", 2.0f);
  absl::Status s = ImportStatus(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("node 'conv'"),
                                 HasSubstr("attribute 'strides' must be INTS, got FLOAT")));
}

TEST(MalformedTest, UntypedAttributeOfOldModelsIsReadByItsField) {
  onnx::ModelProto m = ValidModel();
  m.mutable_graph()->mutable_node(1)->mutable_attribute(0)->clear_type();  // ints still set
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  EXPECT_TRUE(module.ok()) << module.status();
}

TEST(MalformedTest, CycleIsReported) {
  onnx::ModelProto m =
      TestModel({TestNode("TestNeg", {"b"}, {"a"}, {}, "first"),
                 TestNode("TestNeg", {"a"}, {"b"}, {}, "second")},
                {MakeValueInfo("x", kFloat, {2})}, {MakeValueInfo("b", kFloat, {2})});
  absl::Status s = ImportStatus(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("node 'first'"), HasSubstr("'b'"),
                                 HasSubstr("node 'second'"), HasSubstr("cycle")));
}

TEST(MalformedTest, SelfLoopIsReported) {
  onnx::ModelProto m =
      TestModel({TestNode("TestNeg", {"a"}, {"a"}, {}, "loop")}, {MakeValueInfo("x", kFloat, {2})},
                {MakeValueInfo("a", kFloat, {2})});
  absl::Status s = ImportStatus(m);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("node 'loop'"), HasSubstr("the node itself")));
}

TEST(MalformedTest, DanglingInputIsReported) {
  onnx::ModelProto m = ValidModel();
  m.mutable_graph()->mutable_node(2)->set_input(0, "nowhere");
  absl::Status s = ImportStatus(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("node 'neg'"), HasSubstr("'nowhere'"), HasSubstr("dangling edge")));
}

TEST(MalformedTest, ValuesDefinedTwice) {
  onnx::ModelProto m = ValidModel();
  m.mutable_graph()->mutable_node(2)->set_output(0, "s");  // 'add' defines s already
  EXPECT_THAT(ImportStatus(m).message(), AllOf(HasSubstr("value 's' is defined twice"),
                                               HasSubstr("node 'add'"), HasSubstr("node 'neg'")));

  onnx::ModelProto shadow_input = ValidModel();
  shadow_input.mutable_graph()->mutable_node(0)->set_output(0, "x");
  EXPECT_THAT(ImportStatus(shadow_input).message(),
              AllOf(HasSubstr("value 'x' is defined twice"), HasSubstr("graph input 'x'")));

  onnx::ModelProto two_inits = ValidModel();
  *two_inits.mutable_graph()->add_initializer() = MakeFloatTensor("w", {3}, {4, 5, 6});
  EXPECT_THAT(ImportStatus(two_inits).message(), HasSubstr("value 'w' is defined twice"));

  onnx::ModelProto two_inputs = ValidModel();
  *two_inputs.mutable_graph()->add_input() = MakeValueInfo("x", kFloat, {1});
  EXPECT_THAT(ImportStatus(two_inputs).message(), HasSubstr("graph input 'x' is listed twice"));
}

TEST(MalformedTest, TensorDataMustMatchDims) {
  const auto with_w = [](onnx::TensorProto w) {
    onnx::ModelProto m = ValidModel();
    *m.mutable_graph()->mutable_initializer(0) = std::move(w);
    return ImportStatus(m);
  };
  onnx::TensorProto raw = MakeFloatTensor("w", {3}, {1, 2});
  absl::Status s = with_w(raw);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("tensor 'w'"), HasSubstr("8 bytes of raw_data"),
                                 HasSubstr("need 12")));

  EXPECT_THAT(with_w(MakeFloatTensorTyped("w", {3}, {1, 2, 3, 4})).message(),
              AllOf(HasSubstr("4 elements in float_data"), HasSubstr("[3]")));

  onnx::TensorProto empty;
  empty.set_name("w");
  empty.set_data_type(kFloat);
  empty.add_dims(3);
  EXPECT_THAT(with_w(empty).message(), HasSubstr("has no data"));

  onnx::TensorProto wrong_field = empty;
  wrong_field.add_int64_data(1);
  wrong_field.add_int64_data(2);
  wrong_field.add_int64_data(3);
  EXPECT_THAT(with_w(wrong_field).message(), HasSubstr("has no data"));

  onnx::TensorProto negative = MakeFloatTensor("w", {-3}, {});
  EXPECT_THAT(with_w(negative).message(), HasSubstr("negative dim"));

  onnx::TensorProto huge = MakeFloatTensor("w", {int64_t{1} << 40, int64_t{1} << 40}, {1, 2, 3});
  EXPECT_THAT(with_w(huge).message(), HasSubstr("too large"));

  onnx::TensorProto segment = MakeFloatTensor("w", {3}, {1, 2, 3});
  segment.mutable_segment()->set_begin(0);
  segment.mutable_segment()->set_end(3);
  EXPECT_EQ(with_w(segment).code(), absl::StatusCode::kUnimplemented);
}

TEST(MalformedTest, UnknownAndUnsupportedDataTypes) {
  onnx::ModelProto bad_init = ValidModel();
  bad_init.mutable_graph()->mutable_initializer(0)->set_data_type(99);
  EXPECT_THAT(ImportStatus(bad_init).message(),
              AllOf(HasSubstr("tensor 'w'"), HasSubstr("unknown ONNX data type 99")));

  onnx::ModelProto string_init = ValidModel();
  onnx::TensorProto* w = string_init.mutable_graph()->mutable_initializer(0);
  w->clear_raw_data();
  w->set_data_type(onnx::TensorProto::STRING);
  w->add_string_data("a");
  EXPECT_THAT(ImportStatus(string_init).message(), HasSubstr("STRING"));

  onnx::ModelProto bad_input = ValidModel();
  bad_input.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      99);
  EXPECT_THAT(ImportStatus(bad_input).message(),
              AllOf(HasSubstr("graph input 'x'"), HasSubstr("99")));
}

TEST(MalformedTest, ModelLevelProblems) {
  EXPECT_THAT(ImportOnnxBytes("").status().message(), HasSubstr("ir_version"));

  onnx::ModelProto no_opset = ValidModel();
  no_opset.clear_opset_import();
  EXPECT_THAT(ImportStatus(no_opset).message(), HasSubstr("default ONNX domain"));

  onnx::ModelProto no_test_domain = ValidModel();
  no_test_domain.mutable_opset_import()->RemoveLast();
  EXPECT_THAT(
      ImportStatus(no_test_domain).message(),
      AllOf(HasSubstr("node 'add'"), HasSubstr("'kiln.test' is not in the model's opset_import")));

  onnx::ModelProto no_graph = ValidModel();
  no_graph.clear_graph();
  EXPECT_THAT(ImportStatus(no_graph).message(), HasSubstr("no graph"));

  onnx::ModelProto no_outputs = ValidModel();
  no_outputs.mutable_graph()->clear_output();
  EXPECT_THAT(ImportStatus(no_outputs).message(), HasSubstr("no outputs"));

  onnx::ModelProto undefined_output = ValidModel();
  undefined_output.mutable_graph()->mutable_output(0)->set_name("ghost");
  EXPECT_THAT(ImportStatus(undefined_output).message(), HasSubstr("graph output 'ghost'"));

  onnx::ModelProto no_op_type = ValidModel();
  no_op_type.mutable_graph()->mutable_node(1)->clear_op_type();
  EXPECT_THAT(ImportStatus(no_op_type).message(), HasSubstr("no op_type"));

  onnx::ModelProto untyped_input = ValidModel();
  untyped_input.mutable_graph()->mutable_input(0)->clear_type();
  EXPECT_THAT(ImportStatus(untyped_input).message(), HasSubstr("graph input 'x' has no type"));

  onnx::ModelProto sequence_input = ValidModel();
  sequence_input.mutable_graph()->mutable_input(0)->mutable_type()->mutable_sequence_type();
  absl::Status seq = ImportStatus(sequence_input);
  EXPECT_EQ(seq.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(seq.message(), HasSubstr("not a tensor"));

  onnx::ModelProto negative_dim = ValidModel();
  negative_dim.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_value(-3);
  EXPECT_THAT(ImportStatus(negative_dim).message(), HasSubstr("negative dim -3"));

  onnx::ModelProto sparse = ValidModel();
  sparse.mutable_graph()->add_sparse_initializer()->mutable_values()->set_name("sp");
  EXPECT_EQ(ImportStatus(sparse).code(), absl::StatusCode::kUnimplemented);
}

TEST(MalformedTest, ShapeErrorsNameTheNodeAndOperator) {
  // x is (N, 3) but w has 4 elements: add cannot broadcast them.
  onnx::ModelProto m = ValidModel();
  *m.mutable_graph()->mutable_initializer(0) = MakeFloatTensor("w", {4}, {1, 2, 3, 4});
  absl::Status s = ImportStatus(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("node 'add'"), HasSubstr("add")));
}

}  // namespace
}  // namespace kiln::onnx_frontend
