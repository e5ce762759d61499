// Malformed ONNX models give clear statuses, never crashes (also under
// --config=asan): truncated and random bytes, byte mutations of a valid
// model, wrong attribute types, cycles, dangling edges, values defined twice,
// tensors whose data does not match their dims, unknown data types.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "frontends/onnx/test_converters.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::onnx_frontend {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
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
  // A sequence without an element type (sequences of tensors import: convert_sequence_test).
  EXPECT_THAT(seq.message(), HasSubstr("is a sequence of non-tensors"));

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

// ---- lenient headers and declarations (issue 15) ------------------------------

// Imports `m`; the status, and the warnings in `*warnings`.
absl::Status ImportWarned(const onnx::ModelProto& m, std::vector<std::string>* warnings) {
  ImportOptions o;
  o.warnings = warnings;
  return ImportOnnxBytes(Serialize(m), o).status();
}

TEST(LenientImportTest, IrVersionZeroIsRefused) {
  onnx::ModelProto m = ValidModel();
  m.set_ir_version(0);
  EXPECT_THAT(ImportStatus(m).message(), HasSubstr("the model's ir_version is 0"));
}

TEST(LenientImportTest, ImpossibleOpsetsAreRefusedNewerOnesWarned) {
  for (int64_t v : {int64_t{1} << 62, int64_t{1001}}) {
    onnx::ModelProto m = ValidModel();
    SetOpset(&m, "", v);
    absl::Status s = ImportStatus(m);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << v;
    EXPECT_THAT(s.message(), AllOf(HasSubstr(absl::StrCat("has version ", v)),
                                   HasSubstr("which is no opset version")));
  }
  onnx::ModelProto m = ValidModel();
  SetOpset(&m, "", 99);
  std::vector<std::string> warnings;
  EXPECT_TRUE(ImportWarned(m, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], AllOf(HasSubstr("imports ONNX opset 99, newer than"),
                                 HasSubstr("ONNX Runtime also accepts")));
}

TEST(LenientImportTest, DuplicateOpsetImports) {
  onnx::ModelProto m = ValidModel();  // "" at 13
  onnx::OperatorSetIdProto* dup = m.add_opset_import();
  dup->set_domain("ai.onnx");
  dup->set_version(14);
  EXPECT_THAT(ImportStatus(m).message(),
              AllOf(HasSubstr("lists domain 'ai.onnx' twice, at versions 13 and 14"),
                    HasSubstr("'' and 'ai.onnx' are the same domain")));
  dup->set_version(13);
  std::vector<std::string> warnings;
  EXPECT_TRUE(ImportWarned(m, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("twice at version 13"));
}

TEST(LenientImportTest, RawAndTypedDataWarnsAndUsesRawData) {
  onnx::ModelProto m = ValidModel();
  onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);  // raw_data {1, 2, 3}
  w->add_float_data(7);
  w->add_float_data(8);
  w->add_float_data(9);
  std::vector<std::string> warnings;
  ImportOptions o;
  o.warnings = &warnings;
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m), o);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], AllOf(HasSubstr("tensor 'w' has both raw_data and float_data"),
                                 HasSubstr("raw_data is used"), HasSubstr("ONNX Runtime")));
}

TEST(LenientImportTest, DeclaredOutputsAreCheckedAgainstTheGraph) {
  // y is computed as float32 (N, 3).
  onnx::ModelProto wrong_dtype = ValidModel();
  wrong_dtype.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  absl::Status s = ImportStatus(wrong_dtype);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("graph output 'y' is declared as INT64 but the graph computes float32"));

  onnx::ModelProto wrong_dim = ValidModel();
  *wrong_dim.mutable_graph()->mutable_output(0) = MakeValueInfo("y", kFloat, {"N", 4});
  std::vector<std::string> warnings;
  EXPECT_TRUE(ImportWarned(wrong_dim, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], AllOf(HasSubstr("graph output 'y' is declared with shape [N, 4]"),
                                 HasSubstr("dim 1: 4 declared, 3 computed"),
                                 HasSubstr("ONNX Runtime also only warns")));

  onnx::ModelProto wrong_rank = ValidModel();
  *wrong_rank.mutable_graph()->mutable_output(0) = MakeValueInfo("y", kFloat, {3});
  warnings.clear();
  EXPECT_TRUE(ImportWarned(wrong_rank, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("rank 1 vs 2"));

  // Symbolic and unknown dims agree with anything; no warning.
  warnings.clear();
  EXPECT_TRUE(ImportWarned(ValidModel(), &warnings).ok());
  EXPECT_TRUE(warnings.empty());
}

// A model whose graph is an If whose then_branch is an If ... `depth` deep.
onnx::ModelProto NestedIfModel(int depth) {
  onnx::GraphProto g;
  g.set_name("innermost");
  *g.add_node() = MakeNode("Identity", {"c"}, {"y"});
  *g.add_output() = MakeValueInfo("y", onnx::TensorProto::BOOL, {});
  for (int level = 0; level < depth; ++level) {
    onnx::GraphProto outer;
    outer.set_name("level" + std::to_string(level));
    onnx::NodeProto* n = outer.add_node();
    n->set_op_type("If");
    n->add_input("c");
    n->add_output("y");
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = std::move(g);
    onnx::AttributeProto* e = n->add_attribute();
    e->set_name("else_branch");
    e->set_type(onnx::AttributeProto::GRAPH);
    e->mutable_g()->set_name("else" + std::to_string(level));
    *e->mutable_g()->add_node() = MakeNode("Not", {"c"}, {"y"});
    *e->mutable_g()->add_output() = MakeValueInfo("y", onnx::TensorProto::BOOL, {});
    *outer.add_output() = MakeValueInfo("y", onnx::TensorProto::BOOL, {});
    g = std::move(outer);
  }
  *g.add_input() = MakeValueInfo("c", onnx::TensorProto::BOOL, {});
  onnx::ModelProto m = MakeModel(13, {}, {}, {});
  *m.mutable_graph() = std::move(g);
  return m;
}

// An If nested 100 deep is well-formed protobuf, but deeper than protobuf's
// recursion limit: the message says so (it used to say "truncated or
// corrupt file").
TEST(LenientImportTest, DeeplyNestedSubgraphsAreNamedNotCorrupt) {
  // Ten levels parse and import (each branch reads the outermost input).
  absl::Status shallow = ImportStatus(NestedIfModel(10));
  EXPECT_TRUE(shallow.ok()) << shallow;

  const onnx::ModelProto deep = NestedIfModel(100);
  absl::Status s = ImportStatus(deep);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("nests its messages more than 100 levels deep"),
                                 HasSubstr("the file itself is well-formed")));
  EXPECT_THAT(s.message(), Not(HasSubstr("corrupt")));
  // Real damage is still reported as such.
  std::string bytes = Serialize(deep);
  bytes.resize(bytes.size() / 2);
  EXPECT_THAT(ImportOnnxBytes(bytes).status().message(), HasSubstr("truncated or corrupt"));
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
