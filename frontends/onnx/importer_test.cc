// The ONNX importer on well-formed models: the registry and data types,
// graphs, initializers (constants and overridable parameters), symbolic dims
// and input_shapes, frozen inputs, external data, opset selection, constant
// folding, and the one error that lists every unsupported operator.
// Malformed models are in malformed_test.cc.
#include "frontends/onnx/importer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "frontends/onnx/converter.h"
#include "frontends/onnx/onnx_test_util.h"
#include "frontends/onnx/test_converters.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/op.h"
#include "ir/printer.h"

namespace kiln::onnx_frontend {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace ::kiln::onnx_frontend::testing;  // NOLINT: test helpers

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;

std::string TempDir() {
  const char* d = std::getenv("TEST_TMPDIR");
  return d != nullptr ? d : "/tmp";
}

void WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

std::string FloatBytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

Function Main(const Module& m) { return m.Lookup("main").value(); }

std::string ParamType(const Module& m, size_t i) {
  return TypeToString(Main(m)->params.at(i)->checked_type());
}

Ref<const HostTensor> F32(std::vector<int64_t> shape, const std::vector<float>& v) {
  return HostTensor::FromVector<float>(DataType::Float(32), std::move(shape), v).value();
}

std::vector<float> Floats(const HostTensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

// Runs main on `args` and returns the (tensor) result as floats.
std::vector<float> RunFloats(const Module& m, std::vector<Ref<const HostTensor>> args) {
  std::vector<interp::Value> values;
  for (auto& a : args) values.push_back(interp::Value::Tensor(a));
  absl::StatusOr<interp::Value> out = interp::RunFunction(m, "main", values);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || !out->is_tensor()) return {};
  return Floats(*out->tensor());
}

// ---- registry and data types ----------------------------------------------

// A converter that only carries a tag, so a test can see which one Find chose.
struct Tagged {
  int tag;
  absl::StatusOr<std::vector<Expr>> operator()(ConvertContext&) const {
    return std::vector<Expr>{};
  }
};

int TagOf(const Converter* c) {
  if (c == nullptr) return -1;
  const Tagged* t = c->target<Tagged>();
  return t != nullptr ? t->tag : -2;
}

TEST(RegistryTest, FindPicksNewestSinceVersionAtOrBelowOpset) {
  ConverterRegistry r;
  r.Add("Op", 11, Tagged{11});
  r.Add("Op", 1, Tagged{1});
  r.Add("Op", 6, Tagged{6});
  EXPECT_EQ(TagOf(r.Find("", "Op", 0)), -1);
  EXPECT_EQ(TagOf(r.Find("", "Op", 1)), 1);
  EXPECT_EQ(TagOf(r.Find("", "Op", 5)), 1);
  EXPECT_EQ(TagOf(r.Find("", "Op", 6)), 6);
  EXPECT_EQ(TagOf(r.Find("", "Op", 10)), 6);
  EXPECT_EQ(TagOf(r.Find("", "Op", 11)), 11);
  EXPECT_EQ(TagOf(r.Find("", "Op", 18)), 11);
  EXPECT_EQ(TagOf(r.Find("", "Other", 13)), -1);
}

TEST(RegistryTest, SameVersionReplacesAndDomainsAreSeparate) {
  ConverterRegistry r;
  r.Add("Op", 7, Tagged{1});
  r.Add("Op", 7, Tagged{2});
  r.Add("Op", 1, Tagged{3}, "com.example");
  EXPECT_EQ(TagOf(r.Find("", "Op", 7)), 2);
  EXPECT_EQ(TagOf(r.Find("ai.onnx", "Op", 7)), 2) << "ai.onnx is the default domain";
  EXPECT_EQ(TagOf(r.Find("com.example", "Op", 1)), 3);
  EXPECT_EQ(TagOf(r.Find("com.other", "Op", 9)), -1);
}

TEST(RegistryTest, OpTypesAreSortedPerDomain) {
  ConverterRegistry r;
  r.Add("Relu", 6, Tagged{0});
  r.Add("Add", 7, Tagged{0});
  r.Add("Add", 13, Tagged{0});
  r.Add("Conv", 1, Tagged{0}, "ai.onnx");
  r.Add("Custom", 1, Tagged{0}, "com.example");
  EXPECT_THAT(r.OpTypes(), ElementsAre("Add", "Conv", "Relu"));
  EXPECT_THAT(r.OpTypes("com.example"), ElementsAre("Custom"));
  EXPECT_TRUE(r.OpTypes("com.none").empty());
}

TEST(DataTypeTest, OnnxTypesMapToKilnTypes) {
  using onnx::TensorProto;
  const std::vector<std::pair<int32_t, std::string>> cases = {
      {TensorProto::FLOAT, "float32"},   {TensorProto::DOUBLE, "float64"},
      {TensorProto::FLOAT16, "float16"}, {TensorProto::BFLOAT16, "bfloat16"},
      {TensorProto::INT8, "int8"},       {TensorProto::INT16, "int16"},
      {TensorProto::INT32, "int32"},     {TensorProto::INT64, "int64"},
      {TensorProto::UINT8, "uint8"},     {TensorProto::UINT16, "uint16"},
      {TensorProto::UINT32, "uint32"},   {TensorProto::UINT64, "uint64"},
      {TensorProto::BOOL, "bool"},
  };
  for (const auto& [onnx_type, name] : cases) {
    absl::StatusOr<DataType> t = FromOnnxDataType(onnx_type);
    ASSERT_TRUE(t.ok()) << onnx_type << ": " << t.status();
    EXPECT_EQ(t->ToString(), name) << onnx_type;
  }
}

TEST(DataTypeTest, StringsComplexAndUnknownAreErrorsNamingTheType) {
  using onnx::TensorProto;
  const std::vector<std::pair<int32_t, std::string>> cases = {
      {TensorProto::STRING, "STRING"},
      {TensorProto::COMPLEX64, "COMPLEX64"},
      {TensorProto::COMPLEX128, "COMPLEX128"},
      {TensorProto::UNDEFINED, "UNDEFINED"},
      {99, "99"},
      {-3, "-3"}};
  for (const auto& [onnx_type, word] : cases) {
    absl::StatusOr<DataType> t = FromOnnxDataType(onnx_type);
    ASSERT_FALSE(t.ok()) << onnx_type;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(t.status().message(), HasSubstr(word));
  }
}

TEST(SupportedOpsTest, SortedAndWithoutOtherDomains) {
  RegisterTestConverters();
  const std::vector<std::string> ops = SupportedOps();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_THAT(ops, Not(::testing::Contains("TestAdd")));
}

// ---- graphs ----------------------------------------------------------------

TEST(ImportTest, TinyGraphWithTestConverters) {
  onnx::ModelProto m = TestModel(
      {TestNode("TestAdd", {"x", "y"}, {"s"}, {}, "add"), TestNode("TestNeg", {"s"}, {"z"})},
      {MakeValueInfo("x", kFloat, {2, 2}), MakeValueInfo("y", kFloat, {2, 2})},
      {MakeValueInfo("z", kFloat, {2, 2})});
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(module.ok()) << module.status();
  Function main = Main(*module);
  ASSERT_EQ(main->params.size(), 2u);
  EXPECT_EQ(main->params[0]->name_hint, "x");
  EXPECT_EQ(main->params[1]->name_hint, "y");
  EXPECT_EQ(TypeToString(main->body->checked_type()), "Tensor[(2, 2), float32]");
  // -(x + y)
  EXPECT_THAT(RunFloats(*module, {F32({2, 2}, {1, 2, 3, 4}), F32({2, 2}, {10, 20, 30, 40})}),
              ElementsAre(-11, -22, -33, -44));
}

// Graph input and output names reach the artifact and every binding: they
// must be UTF-8 text without NUL (protobuf does not check proto2 strings).
TEST(ImportTest, InputAndOutputNamesMustBeUtf8WithoutNul) {
  auto import = [](const std::string& in, const std::string& out) {
    onnx::ModelProto m = TestModel({TestNode("TestNeg", {in}, {out})},
                                   {MakeValueInfo(in, kFloat, {3})},
                                   {MakeValueInfo(out, kFloat, {3})});
    return ImportOnnxBytes(Serialize(m));
  };
  EXPECT_TRUE(import("x\xC3\xA9", "y").ok());  // U+00E9 is fine
  absl::StatusOr<Module> m = import("x\xFF" "a", "y");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(m.status().message(),
              HasSubstr("graph input 0's name is not valid UTF-8 (byte 0xff at offset 1)"));
  m = import("x", std::string("y\0z", 3));
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("graph output 0's name holds a NUL byte (offset 1)"));
}

TEST(ImportTest, SeveralOutputsMakeATuple) {
  onnx::ModelProto m =
      TestModel({TestNode("TestNeg", {"x"}, {"n"})}, {MakeValueInfo("x", kFloat, {3})},
                {MakeValueInfo("n", kFloat, {3}), MakeValueInfo("x", kFloat, {3})});
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeToString(Main(*module)->body->checked_type()),
            "(Tensor[(3,), float32], Tensor[(3,), float32])");
}

TEST(ImportTest, RealReluAddModelWhenConvertersExist) {
  const std::vector<std::string> ops = SupportedOps();
  if (!std::binary_search(ops.begin(), ops.end(), "Relu") ||
      !std::binary_search(ops.begin(), ops.end(), "Add")) {
    GTEST_SKIP() << "the Relu/Add converters are not registered yet";
  }
  onnx::ModelProto m =
      MakeModel(13, {MakeNode("Add", {"x", "b"}, {"s"}), MakeNode("Relu", {"s"}, {"y"})},
                {MakeValueInfo("x", kFloat, {1, 4})}, {MakeValueInfo("y", kFloat, {1, 4})},
                {MakeFloatTensor("b", {4}, {0.5f, -0.5f, 1, -4})});
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(Main(*module)->params.size(), 1u);
  // relu([1, 1, -2, 3] + [0.5, -0.5, 1, -4]) = relu([1.5, 0.5, -1, -1])
  EXPECT_THAT(RunFloats(*module, {F32({1, 4}, {1, 1, -2, 3})}), ElementsAre(1.5f, 0.5f, 0, 0));
}

TEST(ImportTest, InitializerBecomesConstant) {
  onnx::ModelProto m =
      TestModel({TestNode("TestAdd", {"x", "w"}, {"y"})}, {MakeValueInfo("x", kFloat, {3})},
                {MakeValueInfo("y", kFloat, {3})}, {MakeFloatTensor("w", {3}, {1, 2, 3})});
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(Main(*module)->params.size(), 1u);
  EXPECT_THAT(PrintModule(*module), HasSubstr("add(%x, "));
  EXPECT_THAT(RunFloats(*module, {F32({3}, {10, 10, 10})}), ElementsAre(11, 12, 13));
}

// The constant remembers its initializer's name (kiln graph labels it so);
// the text IR does not carry it, and structural equality ignores it.
TEST(ImportTest, InitializerNameOnTheConstant) {
  onnx::ModelProto m = TestModel(
      {TestNode("TestAdd", {"x", "fc1.bias"}, {"y"})}, {MakeValueInfo("x", kFloat, {3})},
      {MakeValueInfo("y", kFloat, {3})}, {MakeFloatTensor("fc1.bias", {3}, {1, 2, 3})});
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* call = Main(*module)->body.as<CallNode>();
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->args.size(), 2u);
  const auto* c = call->args[1].as<ConstantNode>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name_hint, "fc1.bias");
  EXPECT_THAT(PrintModule(*module), Not(HasSubstr("fc1.bias")));
}

TEST(ImportTest, TypedFieldInitializer) {
  onnx::ModelProto m =
      TestModel({TestNode("TestAdd", {"x", "w"}, {"y"})}, {MakeValueInfo("x", kFloat, {2})},
                {MakeValueInfo("y", kFloat, {2})}, {MakeFloatTensorTyped("w", {2}, {0.25f, -8})});
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT(RunFloats(*module, {F32({2}, {1, 1})}), ElementsAre(1.25f, -7));
}

TEST(ImportTest, InitializerThatIsAlsoAnInputStaysOverridable) {
  onnx::ModelProto m =
      TestModel({TestNode("TestAdd", {"x", "w"}, {"y"})},
                {MakeValueInfo("x", kFloat, {2}), MakeValueInfo("w", kFloat, {2})},
                {MakeValueInfo("y", kFloat, {2})}, {MakeFloatTensor("w", {2}, {1, 2})});
  const std::string bytes = Serialize(m);
  absl::StatusOr<Module> module = ImportOnnxBytes(bytes);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(Main(*module)->params.size(), 2u);
  EXPECT_EQ(Main(*module)->params[1]->name_hint, "w");
  EXPECT_EQ(ParamType(*module, 1), "Tensor[(2,), float32]");
  EXPECT_THAT(RunFloats(*module, {F32({2}, {1, 1}), F32({2}, {100, 200})}), ElementsAre(101, 201));

  ImportOptions o;
  o.freeze_overridable_initializers = true;
  absl::StatusOr<Module> frozen = ImportOnnxBytes(bytes, o);
  ASSERT_TRUE(frozen.ok()) << frozen.status();
  ASSERT_EQ(Main(*frozen)->params.size(), 1u);
  EXPECT_THAT(RunFloats(*frozen, {F32({2}, {1, 1})}), ElementsAre(2, 3));
}

TEST(ImportTest, BeforeIrVersion4InitializersListedAsInputsAreConstants) {
  onnx::ModelProto m =
      TestModel({TestNode("TestAdd", {"x", "w"}, {"y"})},
                {MakeValueInfo("x", kFloat, {2}), MakeValueInfo("w", kFloat, {2})},
                {MakeValueInfo("y", kFloat, {2})}, {MakeFloatTensor("w", {2}, {1, 2})});
  m.set_ir_version(3);
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(Main(*module)->params.size(), 1u);
  EXPECT_THAT(RunFloats(*module, {F32({2}, {5, 5})}), ElementsAre(6, 7));
}

TEST(ConstantInputTest, OverridableInitializerNeedsFreezing) {
  onnx::ModelProto m =
      TestModel({TestNode("TestFold", {"x", "w"}, {"y"}, {}, "fold")},
                {MakeValueInfo("x", kFloat, {2}), MakeValueInfo("w", kInt64, {2})},
                {MakeValueInfo("y", kInt64, {2})}, {MakeInt64Tensor("w", {2}, {3, 4})});
  const std::string bytes = Serialize(m);
  absl::Status s = ImportOnnxBytes(bytes).status();
  EXPECT_THAT(s.message(), HasSubstr("freeze_overridable_initializers"));
  auto payload = s.GetPayload(kNeedsConstantPayload);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(std::string(*payload), "w");
  ImportOptions o;
  o.freeze_overridable_initializers = true;
  absl::StatusOr<Module> module = ImportOnnxBytes(bytes, o);
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* c = Main(*module)->body.as<ConstantNode>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->data->GetAsInt64(0), 3);
  EXPECT_EQ(c->data->GetAsInt64(1), 4);
}

// ---- symbolic dims, input_shapes, frozen inputs ----------------------------

onnx::ModelProto SymbolicModel() {
  return TestModel({TestNode("TestAdd", {"a", "b"}, {"s"}), TestNode("TestNeg", {"c"}, {"n"})},
                   {MakeValueInfo("a", kFloat, {"N", 3}), MakeValueInfo("b", kFloat, {"N", 3}),
                    MakeValueInfo("c", kFloat, {"", 2})},
                   {MakeValueInfo("s", kFloat, {"N", 3}), MakeValueInfo("n", kFloat, {"", 2})});
}

TEST(ImportTest, DimParamsBecomeSharedSymbolicDims) {
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(SymbolicModel()));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(ParamType(*module, 0), "Tensor[(N, 3), float32]");
  EXPECT_EQ(ParamType(*module, 1), "Tensor[(N, 3), float32]");
  EXPECT_EQ(ParamType(*module, 2), "Tensor[(c_dim0, 2), float32]");
  EXPECT_EQ(TypeToString(Main(*module)->body->checked_type()),
            "(Tensor[(N, 3), float32], Tensor[(c_dim0, 2), float32])");
}

TEST(ImportTest, InputShapesBindDimParamsEverywhere) {
  ImportOptions o;
  o.input_shapes["a"] = {5, 3};
  o.input_shapes["c"] = {7, 2};
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(SymbolicModel()), o);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(ParamType(*module, 0), "Tensor[(5, 3), float32]");
  EXPECT_EQ(ParamType(*module, 1), "Tensor[(5, 3), float32]") << "b shares N with a";
  EXPECT_EQ(ParamType(*module, 2), "Tensor[(7, 2), float32]");
}

TEST(ImportTest, InputShapesAreChecked) {
  const std::string bytes = Serialize(SymbolicModel());
  {
    ImportOptions o;
    o.input_shapes["a"] = {5, 3, 1};
    absl::Status s = ImportOnnxBytes(bytes, o).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("rank 3"));
  }
  {
    ImportOptions o;
    o.input_shapes["a"] = {5, 4};  // the model fixes dim 1 to 3
    absl::Status s = ImportOnnxBytes(bytes, o).status();
    EXPECT_THAT(s.message(), HasSubstr("fixes it to 3"));
  }
  {
    ImportOptions o;
    o.input_shapes["nope"] = {1};
    absl::Status s = ImportOnnxBytes(bytes, o).status();
    EXPECT_THAT(s.message(), HasSubstr("'nope', which is not a graph input"));
  }
  {
    ImportOptions o;
    o.input_shapes["a"] = {5, 3};
    o.input_shapes["b"] = {6, 3};  // N bound twice, differently
    absl::Status s = ImportOnnxBytes(bytes, o).status();
    EXPECT_THAT(s.message(), HasSubstr("dim 'N'"));
  }
}

TEST(ImportTest, UnknownRankInputNeedsInputShapes) {
  onnx::ModelProto m =
      TestModel({TestNode("TestNeg", {"x"}, {"y"})}, {MakeValueInfoNoShape("x", kFloat)},
                {MakeValueInfoNoShape("y", kFloat)});
  absl::Status s = ImportOnnxBytes(Serialize(m)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("graph input 'x' has no shape"));
  ImportOptions o;
  o.input_shapes["x"] = {2, 3};
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m), o);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(ParamType(*module, 0), "Tensor[(2, 3), float32]");
}

TEST(ImportTest, FrozenInputBecomesConstant) {
  ImportOptions o;
  o.frozen_inputs["b"] = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(SymbolicModel()), o);
  ASSERT_TRUE(module.ok()) << module.status();
  Function main = Main(*module);
  ASSERT_EQ(main->params.size(), 2u);
  EXPECT_EQ(main->params[0]->name_hint, "a");
  EXPECT_EQ(main->params[1]->name_hint, "c");
  EXPECT_EQ(ParamType(*module, 0), "Tensor[(2, 3), float32]") << "N bound by the frozen value";
}

TEST(ImportTest, FrozenInputDtypeAndShapeAreChecked) {
  const std::string bytes = Serialize(SymbolicModel());
  {
    ImportOptions o;
    o.frozen_inputs["b"] =
        HostTensor::FromVector<int64_t>(DataType::Int(64), {1, 3}, {1, 2, 3}).value();
    absl::Status s = ImportOnnxBytes(bytes, o).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("int64"));
  }
  {
    ImportOptions o;
    o.frozen_inputs["b"] = F32({1, 4}, {1, 2, 3, 4});
    absl::Status s = ImportOnnxBytes(bytes, o).status();
    EXPECT_THAT(s.message(), HasSubstr("axis 1"));
  }
  {
    ImportOptions o;
    o.frozen_inputs["b"] = F32({3}, {1, 2, 3});
    absl::Status s = ImportOnnxBytes(bytes, o).status();
    EXPECT_THAT(s.message(), HasSubstr("rank 1"));
  }
}

// ---- external data ---------------------------------------------------------

onnx::TensorProto ExternalTensor(const std::string& name, std::vector<int64_t> dims,
                                 const std::string& location, int64_t offset, int64_t length) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&t](const std::string& k, const std::string& v) {
    onnx::StringStringEntryProto* e = t.add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
  return t;
}

onnx::ModelProto ExternalModel(onnx::TensorProto w) {
  return TestModel({TestNode("TestAdd", {"x", "w"}, {"y"})}, {MakeValueInfo("x", kFloat, {3})},
                   {MakeValueInfo("y", kFloat, {3})}, {std::move(w)});
}

class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir();
    // 16 bytes of padding, then the three weights.
    WriteFile(dir_ + "/weights.bin", std::string(16, 'x') + FloatBytes({1.5f, 2.5f, 3.5f}));
  }
  absl::StatusOr<Module> Import(onnx::TensorProto w) {
    ImportOptions o;
    o.external_data_dir = dir_;
    return ImportOnnxBytes(Serialize(ExternalModel(std::move(w))), o);
  }
  std::string dir_;
};

TEST_F(ExternalDataTest, OffsetAndLength) {
  absl::StatusOr<Module> module = Import(ExternalTensor("w", {3}, "weights.bin", 16, 12));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT(RunFloats(*module, {F32({3}, {1, 1, 1})}), ElementsAre(2.5f, 3.5f, 4.5f));
  // Without a length, the tensor's size is read.
  module = Import(ExternalTensor("w", {3}, "weights.bin", 16, -1));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT(RunFloats(*module, {F32({3}, {0, 0, 0})}), ElementsAre(1.5f, 2.5f, 3.5f));
}

TEST_F(ExternalDataTest, ModelFileFolderIsTheDefaultBase) {
  const std::string model_path = dir_ + "/model_with_side_file.onnx";
  WriteFile(model_path, Serialize(ExternalModel(ExternalTensor("w", {3}, "weights.bin", 16, 12))));
  absl::StatusOr<Module> module = ImportOnnxFile(model_path);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_THAT(RunFloats(*module, {F32({3}, {0, 0, 0})}), ElementsAre(1.5f, 2.5f, 3.5f));
}

TEST_F(ExternalDataTest, PathsMustStayInsideTheFolder) {
  for (const std::string& bad : {std::string("../weights.bin"), std::string("a/../../weights.bin"),
                                 dir_ + "/weights.bin", std::string("")}) {
    absl::Status s = Import(ExternalTensor("w", {3}, bad, 16, 12)).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("tensor 'w'")) << bad;
    EXPECT_THAT(s.message(), HasSubstr("location")) << bad;
  }
  absl::Status missing = Import(ExternalTensor("w", {3}, "no_such_file.bin", 0, 12)).status();
  EXPECT_THAT(missing.message(), HasSubstr("no_such_file.bin"));
}

// Issue 15: a symbolic link inside the model's folder must not reach a file
// outside it (a model once compiled /etc/hostname into its weights), whether
// the link is the file itself or a folder on the way; links that stay inside
// are fine.
TEST_F(ExternalDataTest, SymlinksMustNotLeaveTheFolder) {
  const std::string folder = dir_ + "/linked_model";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder + "/sub");
  WriteFile(folder + "/sub/inside.bin", FloatBytes({4, 5, 6}));
  ASSERT_EQ(::symlink((dir_ + "/weights.bin").c_str(), (folder + "/escape.bin").c_str()), 0);
  ASSERT_EQ(::symlink(dir_.c_str(), (folder + "/up").c_str()), 0);
  ASSERT_EQ(::symlink("sub/inside.bin", (folder + "/inside_link.bin").c_str()), 0);
  const auto import = [&](const std::string& location, int64_t offset) {
    ImportOptions o;
    o.external_data_dir = folder;
    return ImportOnnxBytes(Serialize(ExternalModel(ExternalTensor("w", {3}, location, offset, 12))),
                           o);
  };
  for (const std::string& bad : {std::string("escape.bin"), std::string("up/weights.bin")}) {
    absl::Status s = import(bad, 16).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), HasSubstr("tensor 'w': external data location '" + bad + "'"));
    EXPECT_THAT(s.message(), HasSubstr("outside the model's folder")) << bad;
  }
  absl::StatusOr<Module> ok = import("inside_link.bin", 0);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_THAT(RunFloats(*ok, {F32({3}, {0, 0, 0})}), ElementsAre(4, 5, 6));
  // The model file's own folder is the default, through ImportOnnxFile too.
  const std::string model_path = folder + "/model.onnx";
  WriteFile(model_path, Serialize(ExternalModel(ExternalTensor("w", {3}, "escape.bin", 16, 12))));
  EXPECT_THAT(ImportOnnxFile(model_path).status().message(), HasSubstr("outside the model's folder"));
  // A model that is itself a link into a folder holding its data (a Bazel
  // runfiles tree: every file a link into bazel-out) may use the data beside
  // its real file, and only that: an escape from there is still refused.
  const std::string real_folder = dir_ + "/real_model";
  const std::string farm = dir_ + "/link_farm";
  std::filesystem::remove_all(real_folder);
  std::filesystem::remove_all(farm);
  std::filesystem::create_directories(real_folder);
  std::filesystem::create_directories(farm);
  WriteFile(real_folder + "/data.bin", FloatBytes({7, 8, 9}));
  WriteFile(real_folder + "/model.onnx",
            Serialize(ExternalModel(ExternalTensor("w", {3}, "data.bin", 0, 12))));
  WriteFile(real_folder + "/escaping.onnx",
            Serialize(ExternalModel(ExternalTensor("w", {3}, "escape.bin", 16, 12))));
  ASSERT_EQ(::symlink((dir_ + "/weights.bin").c_str(), (real_folder + "/escape.bin").c_str()), 0);
  for (const char* f : {"model.onnx", "data.bin", "escaping.onnx", "escape.bin"}) {
    ASSERT_EQ(::symlink((real_folder + "/" + f).c_str(), (farm + "/" + f).c_str()), 0) << f;
  }
  absl::StatusOr<Module> linked = ImportOnnxFile(farm + "/model.onnx");
  ASSERT_TRUE(linked.ok()) << linked.status();
  EXPECT_THAT(RunFloats(*linked, {F32({3}, {0, 0, 0})}), ElementsAre(7, 8, 9));
  EXPECT_THAT(ImportOnnxFile(farm + "/escaping.onnx").status().message(),
              HasSubstr("outside the model's folder"));
}

// Issue 15: an external data file or a model file that is a FIFO is refused
// at once (opening it used to wait for a writer forever).
TEST_F(ExternalDataTest, FifosAreRefusedWithoutBlocking) {
  const std::string fifo = dir_ + "/fifo.bin";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string model_fifo = dir_ + "/fifo.onnx";
  ::unlink(model_fifo.c_str());
  ASSERT_EQ(::mkfifo(model_fifo.c_str(), 0600), 0);
  // Runs `f`; if it blocks for 20 s, fails and releases it with a writer.
  const auto unblocked = [](const std::string& path, auto f) {
    auto result = std::async(std::launch::async, f);
    if (result.wait_for(std::chrono::seconds(20)) == std::future_status::timeout) {
      ADD_FAILURE() << "opening " << path << " blocked";
      const int w = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
      if (w >= 0) ::close(w);
    }
    return result.get();
  };
  absl::Status s = unblocked(fifo, [&] { return Import(ExternalTensor("w", {3}, "fifo.bin", 0, 12)).status(); });
  EXPECT_THAT(s.message(), HasSubstr("is not a regular file (a FIFO)"));
  s = unblocked(model_fifo, [&] { return ImportOnnxFile(model_fifo).status(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is not a regular file (a FIFO)"));
  s = unblocked(model_fifo, [&] { return ReadTensorProtoFile(model_fifo).status(); });
  EXPECT_THAT(s.message(), HasSubstr("is not a regular file (a FIFO)"));
  EXPECT_THAT(ImportOnnxFile("/dev/zero").status().message(),
              HasSubstr("is not a regular file (a character device)"));
}

TEST_F(ExternalDataTest, OutOfBoundsAndSizeMismatch) {
  // The file has 28 bytes.
  absl::Status past_end = Import(ExternalTensor("w", {3}, "weights.bin", 20, 12)).status();
  EXPECT_EQ(past_end.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(past_end.message(), HasSubstr("past the end"));
  absl::Status offset_past_end = Import(ExternalTensor("w", {3}, "weights.bin", 1000, -1)).status();
  EXPECT_THAT(offset_past_end.message(), HasSubstr("past the end"));
  absl::Status huge =
      Import(ExternalTensor("w", {3}, "weights.bin", 16, int64_t{1} << 62)).status();
  EXPECT_THAT(huge.message(), HasSubstr("past the end"));
  absl::Status wrong_length = Import(ExternalTensor("w", {3}, "weights.bin", 16, 8)).status();
  EXPECT_THAT(wrong_length.message(), HasSubstr("does not match its dims"));
  onnx::TensorProto bad_offset = ExternalTensor("w", {3}, "weights.bin", -1, -1);
  onnx::StringStringEntryProto* e = bad_offset.add_external_data();
  e->set_key("offset");
  e->set_value("-5");
  EXPECT_THAT(Import(bad_offset).status().message(), HasSubstr("not a non-negative integer"));
}

// ---- opsets ----------------------------------------------------------------

std::string ImportedOpAt(int64_t test_opset) {
  onnx::ModelProto m =
      TestModel({TestNode("TestVersioned", {"x"}, {"y"})}, {MakeValueInfo("x", kFloat, {2})},
                {MakeValueInfo("y", kFloat, {2})}, {}, test_opset);
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  if (!module.ok()) return std::string(module.status().message());
  const auto* call = Main(*module)->body.as<CallNode>();
  if (call == nullptr || call->op.as<OpNode>() == nullptr) return "not an op call";
  return call->op.as<OpNode>()->name();
}

TEST(OpsetTest, ConverterChosenByTheModelsOpsetForTheDomain) {
  EXPECT_EQ(ImportedOpAt(1), "negative");
  EXPECT_EQ(ImportedOpAt(4), "negative");
  EXPECT_EQ(ImportedOpAt(5), "exp");
  EXPECT_EQ(ImportedOpAt(8), "exp");
  EXPECT_EQ(ImportedOpAt(9), "abs");
  EXPECT_EQ(ImportedOpAt(30), "abs");
}

TEST(OpsetTest, AiOnnxIsTheDefaultDomain) {
  onnx::ModelProto m =
      TestModel({TestNode("TestNeg", {"x"}, {"y"})}, {MakeValueInfo("x", kFloat, {2})},
                {MakeValueInfo("y", kFloat, {2})});
  m.mutable_opset_import(0)->set_domain("ai.onnx");
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  EXPECT_TRUE(module.ok()) << module.status();
}

// ---- constant folding ------------------------------------------------------

TEST(ConstantInputTest, FoldsExpressionsOfConstants) {
  // v = (c1 + c2) + c1, folded by TestFold into a Constant.
  onnx::ModelProto m =
      TestModel({TestNode("TestAdd", {"c1", "c2"}, {"t"}), TestNode("TestAdd", {"t", "c1"}, {"v"}),
                 TestNode("TestFold", {"x", "v"}, {"y"})},
                {MakeValueInfo("x", kFloat, {2})}, {MakeValueInfo("y", kInt64, {3})},
                {MakeInt64Tensor("c1", {3}, {1, 2, 3}), MakeInt64Tensor("c2", {3}, {10, 20, 30})});
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* c = Main(*module)->body.as<ConstantNode>();
  ASSERT_NE(c, nullptr) << PrintModule(*module);
  ASSERT_EQ(c->data->num_elements(), 3);
  EXPECT_EQ(c->data->GetAsInt64(0), 12);
  EXPECT_EQ(c->data->GetAsInt64(1), 24);
  EXPECT_EQ(c->data->GetAsInt64(2), 36);
}

TEST(ConstantInputTest, DependingOnGraphInputsCarriesThePayload) {
  onnx::ModelProto m = TestModel(
      {TestNode("TestAdd", {"shape_in", "c1"}, {"t"}), TestNode("TestAdd", {"t", "other"}, {"v"}),
       TestNode("TestFold", {"x", "v"}, {"y"}, {}, "fold")},
      {MakeValueInfo("x", kFloat, {2}), MakeValueInfo("shape_in", kInt64, {3}),
       MakeValueInfo("other", kInt64, {3})},
      {MakeValueInfo("y", kInt64, {3})}, {MakeInt64Tensor("c1", {3}, {1, 2, 3})});
  const std::string bytes = Serialize(m);
  absl::Status s = ImportOnnxBytes(bytes).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'fold'"));
  EXPECT_THAT(s.message(), HasSubstr("'other', 'shape_in'"));
  auto payload = s.GetPayload(kNeedsConstantPayload);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(std::string(*payload), "other,shape_in");

  // Retrying with the inputs frozen succeeds: [4, 5, 6] + [1, 2, 3] + [0, 0, 1].
  ImportOptions o;
  o.frozen_inputs["shape_in"] =
      HostTensor::FromVector<int64_t>(DataType::Int(64), {3}, {4, 5, 6}).value();
  o.frozen_inputs["other"] =
      HostTensor::FromVector<int64_t>(DataType::Int(64), {3}, {0, 0, 1}).value();
  absl::StatusOr<Module> module = ImportOnnxBytes(bytes, o);
  ASSERT_TRUE(module.ok()) << module.status();
  const auto* c = Main(*module)->body.as<ConstantNode>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->data->GetAsInt64(0), 5);
  EXPECT_EQ(c->data->GetAsInt64(1), 7);
  EXPECT_EQ(c->data->GetAsInt64(2), 10);
}

TEST(ConstantInputTest, PayloadSurvivesImportOnnxFile) {
  onnx::ModelProto m =
      TestModel({TestNode("TestFold", {"x", "x"}, {"y"})}, {MakeValueInfo("x", kInt64, {2})},
                {MakeValueInfo("y", kInt64, {2})});
  const std::string path = TempDir() + "/needs_constant.onnx";
  WriteFile(path, Serialize(m));
  absl::Status s = ImportOnnxFile(path).status();
  EXPECT_THAT(s.message(), HasSubstr(path));
  auto payload = s.GetPayload(kNeedsConstantPayload);
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(std::string(*payload), "x");
}

// ---- unsupported operators -------------------------------------------------

TEST(UnsupportedTest, AllListedInOneError) {
  onnx::ModelProto m =
      MakeModel(13,
                {MakeNode("NoSuchOpA", {"x"}, {"a"}, {}, "n1"),
                 MakeNode("NoSuchOpB", {"a"}, {"b"}, {}, "n2"), MakeNode("NoSuchOpC", {"x"}, {"c"}),
                 MakeNode("Custom", {"x"}, {"d"}, {}, "n4", "com.example")},
                {MakeValueInfo("x", kFloat, {2})},
                {MakeValueInfo("b", kFloat, {2}), MakeValueInfo("c", kFloat, {2}),
                 MakeValueInfo("d", kFloat, {2})});
  SetOpset(&m, "com.example", 3);
  absl::Status s = ImportOnnxBytes(Serialize(m)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(),
              HasSubstr("unsupported operators: NoSuchOpA (opset 13, node 'n1'), "
                        "NoSuchOpB (opset 13, node 'n2'), NoSuchOpC (opset 13, node #2), "
                        "com.example::Custom (opset 3, node 'n4')"));
}

TEST(UnsupportedTest, NodesAfterAnUnsupportedOneAreSkippedNotReported) {
  onnx::ModelProto m = TestModel(
      {MakeNode("NoSuchOpA", {"x"}, {"a"}, {}, "n1"), TestNode("TestNeg", {"a"}, {"b"}, {}, "neg"),
       TestNode("TestUnsupported", {"x"}, {"c"}, {}, "cubic")},
      {MakeValueInfo("x", kFloat, {2})},
      {MakeValueInfo("b", kFloat, {2}), MakeValueInfo("c", kFloat, {2})});
  absl::Status s = ImportOnnxBytes(Serialize(m)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("NoSuchOpA (opset 13, node 'n1')"));
  EXPECT_THAT(
      s.message(),
      HasSubstr(
          "kiln.test::TestUnsupported (opset 1, node 'cubic': mode 'cubic' is not supported)"));
  EXPECT_THAT(s.message(), Not(HasSubstr("'neg'")));
}

TEST(UnsupportedTest, MissingUsedOutputIsReported) {
  onnx::ModelProto m =
      TestModel({TestNode("TestTwoOut", {"x"}, {"a", "b"}, {AttrInt("only_one", 1)}, "two")},
                {MakeValueInfo("x", kFloat, {2})}, {MakeValueInfo("b", kFloat, {2})});
  absl::Status s = ImportOnnxBytes(Serialize(m)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("node 'two': output 1 'b' is used"));
}

TEST(ImportTest, UnusedAndEmptyOutputsAreSkipped) {
  // Output 1 is not produced (only_one) and nobody reads it: fine.
  onnx::ModelProto m =
      TestModel({TestNode("TestTwoOut", {"x"}, {"a", "b"}, {AttrInt("only_one", 1)}),
                 TestNode("TestTwoOut", {"x"}, {"", "n"})},
                {MakeValueInfo("x", kFloat, {2})},
                {MakeValueInfo("a", kFloat, {2}), MakeValueInfo("n", kFloat, {2})});
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(TypeToString(Main(*module)->body->checked_type()),
            "(Tensor[(2,), float32], Tensor[(2,), float32])");
}

// DESIGN.md §3: a 100,000-node chain goes through without deep recursion.
TEST(ImportTest, HundredThousandNodeChain) {
  constexpr int kNodes = 100000;
  std::vector<onnx::NodeProto> nodes;
  nodes.reserve(kNodes);
  for (int i = 0; i < kNodes; ++i) {
    nodes.push_back(TestNode("TestNeg", {i == 0 ? "x" : "v" + std::to_string(i - 1)},
                             {"v" + std::to_string(i)}));
  }
  onnx::ModelProto m = TestModel(std::move(nodes), {MakeValueInfo("x", kFloat, {2})},
                                 {MakeValueInfo("v" + std::to_string(kNodes - 1), kFloat, {2})});
  absl::StatusOr<Module> module = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(module.ok()) << module.status();
  // An even number of negations: the identity.
  EXPECT_THAT(RunFloats(*module, {F32({2}, {1.5f, -2})}), ElementsAre(1.5f, -2));
}

// ---- tensor files ----------------------------------------------------------

TEST(ReadTensorProtoFileTest, ReadsAndRejects) {
  const std::string path = TempDir() + "/input_0.pb";
  WriteFile(path, MakeFloatTensor("x", {2, 2}, {1, -2, 3, -4}).SerializeAsString());
  absl::StatusOr<Ref<const HostTensor>> t = ReadTensorProtoFile(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_THAT(Floats(**t), ElementsAre(1, -2, 3, -4));

  const std::string ext = TempDir() + "/external.pb";
  WriteFile(ext, ExternalTensor("e", {3}, "weights.bin", 0, 12).SerializeAsString());
  absl::Status s = ReadTensorProtoFile(ext).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("external"));

  onnx::TensorProto str;
  str.set_data_type(onnx::TensorProto::STRING);
  str.add_string_data("hello");
  const std::string str_path = TempDir() + "/string.pb";
  WriteFile(str_path, str.SerializeAsString());
  EXPECT_THAT(ReadTensorProtoFile(str_path).status().message(), HasSubstr("STRING"));

  absl::Status missing = ReadTensorProtoFile(TempDir() + "/missing.pb").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("missing.pb"));
}

TEST(ImportFileTest, MissingFileNamesThePath) {
  absl::Status s = ImportOnnxFile("/nonexistent/dir/model.onnx").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent/dir/model.onnx"));
}
}  // namespace
}  // namespace kiln::onnx_frontend
