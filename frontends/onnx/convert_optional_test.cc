// ONNX optionals (convert_optional.cc): models that build optionals from
// tensors and sequences, take them as graph inputs, pass them through If,
// and read them back, imported and run by the interpreter, against what the
// operators' definitions give; and the errors.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "frontends/onnx/control_test_models.h"
#include "frontends/onnx/convert_test_util.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/printer.h"

namespace kiln::onnx_frontend::testing {
namespace {

using ::testing::HasSubstr;
using V = std::vector<double>;

constexpr int32_t kI32 = onnx::TensorProto::INT32;

onnx::TypeProto TensorTypeProto(int32_t elem, int rank) {
  onnx::TypeProto t;
  t.mutable_tensor_type()->set_elem_type(elem);
  auto* shape = t.mutable_tensor_type()->mutable_shape();
  for (int d = 0; d < rank; ++d) shape->add_dim()->set_dim_param("n");
  return t;
}

onnx::TypeProto SequenceTypeProto(int32_t elem, int rank) {
  onnx::TypeProto t;
  *t.mutable_sequence_type()->mutable_elem_type() = TensorTypeProto(elem, rank);
  return t;
}

onnx::ValueInfoProto OptionalInfo(const std::string& name, const onnx::TypeProto& payload) {
  onnx::ValueInfoProto v;
  v.set_name(name);
  *v.mutable_type()->mutable_optional_type()->mutable_elem_type() = payload;
  return v;
}

onnx::AttributeProto AttrType(const std::string& name, const onnx::TypeProto& t) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::TYPE_PROTO);
  *a.mutable_tp() = t;
  return a;
}

// Runs main of `m` on `args` (any values), returning main's result.
absl::StatusOr<interp::Value> RunMain(const Module& m, std::vector<interp::Value> args) {
  return interp::RunFunction(m, "main", std::move(args));
}

// x -> Optional -> (OptionalHasElement, OptionalGetElement); and an empty
// Optional of the same type -> OptionalHasElement.
TEST(ConvertOptional, SomeAndNoneBuiltInTheGraph) {
  onnx::ModelProto m = MakeModel(
      15,
      {MakeNode("Optional", {"x"}, {"o"}), MakeNode("OptionalHasElement", {"o"}, {"has"}),
       MakeNode("OptionalGetElement", {"o"}, {"got"}),
       MakeNode("Optional", {}, {"e"}, {AttrType("type", TensorTypeProto(kF, 1))}),
       MakeNode("OptionalHasElement", {"e"}, {"has_e"})},
      {MakeValueInfo("x", kF, {3})},
      {MakeValueInfoNoShape("has", kB), MakeValueInfoNoShape("got", kF),
       MakeValueInfoNoShape("has_e", kB)});
  auto out = RunModel(m, {F32In("x", {3}, {1, 2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ(Values(*out->at(0)), V{1});
  EXPECT_EQ(out->at(0)->dtype(), DataType::Bool());
  EXPECT_TRUE(out->at(0)->shape().empty());
  EXPECT_EQ(Values(*out->at(1)), (V{1, 2, 3}));
  EXPECT_EQ(Values(*out->at(2)), V{0});
}

// An optional graph input of a tensor: the ADT Optional_float32_1 is main's
// parameter; Some(x) and None give has-element 1 and 0, get-element x and,
// for None, a run-time error.
TEST(ConvertOptional, OptionalTensorGraphInput) {
  onnx::ModelProto m = MakeModel(
      15,
      {MakeNode("OptionalHasElement", {"o"}, {"has"}), MakeNode("OptionalGetElement", {"o"}, {"got"})},
      {OptionalInfo("o", TensorTypeProto(kF, 1))},
      {MakeValueInfoNoShape("has", kB), MakeValueInfoNoShape("got", kF)});
  absl::StatusOr<Module> mod = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string text = PrintModule(*mod);
  EXPECT_THAT(text, HasSubstr("type Optional_float32_1"));
  EXPECT_THAT(text, HasSubstr("%o: Optional_float32_1"));
  absl::StatusOr<TypeData> td = mod->LookupTypeDef("Optional_float32_1");
  ASSERT_TRUE(td.ok()) << td.status();
  ASSERT_EQ((*td)->constructors.size(), 2u);
  const Constructor some = (*td)->constructors[0], none = (*td)->constructors[1];
  EXPECT_EQ(some->tag, 0);
  EXPECT_EQ(none->tag, 1);

  auto r = RunMain(*mod, {interp::Value::Adt(some, {interp::Value::Tensor(Tensor(DataType::Float(32), {2}, {4, 5}))})});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->is_tuple());
  EXPECT_EQ(Values(*r->fields()[0].tensor()), V{1});
  EXPECT_EQ(Values(*r->fields()[1].tensor()), (V{4, 5}));

  onnx::ModelProto has_only = MakeModel(15, {MakeNode("OptionalHasElement", {"o"}, {"has"})},
                                        {OptionalInfo("o", TensorTypeProto(kF, 1))},
                                        {MakeValueInfoNoShape("has", kB)});
  absl::StatusOr<Module> h = ImportOnnxBytes(Serialize(has_only));
  ASSERT_TRUE(h.ok()) << h.status();
  absl::StatusOr<TypeData> htd = h->LookupTypeDef("Optional_float32_1");
  ASSERT_TRUE(htd.ok());
  auto rn = RunMain(*h, {interp::Value::Adt((*htd)->constructors[1], {})});
  ASSERT_TRUE(rn.ok()) << rn.status();
  EXPECT_EQ(Values(*rn->tensor()), V{0});

  // OptionalGetElement of None stops the run.
  onnx::ModelProto get_only = MakeModel(15, {MakeNode("OptionalGetElement", {"o"}, {"got"})},
                                        {OptionalInfo("o", TensorTypeProto(kF, 1))},
                                        {MakeValueInfoNoShape("got", kF)});
  absl::StatusOr<Module> g = ImportOnnxBytes(Serialize(get_only));
  ASSERT_TRUE(g.ok()) << g.status();
  absl::StatusOr<TypeData> gtd = g->LookupTypeDef("Optional_float32_1");
  ASSERT_TRUE(gtd.ok());
  auto rg = RunMain(*g, {interp::Value::Adt((*gtd)->constructors[1], {})});
  ASSERT_FALSE(rg.ok());
  EXPECT_THAT(rg.status().message(), HasSubstr("no clause matches the value (constructor None_float32_1)"));
}

// An optional of a sequence: Optional(SequenceConstruct(a, b)), read back
// with OptionalGetElement + SequenceLength; an optional-of-sequence graph
// input with no element shape needs input_shapes.
TEST(ConvertOptional, OptionalOfSequence) {
  onnx::ModelProto m = MakeModel(
      15,
      {MakeNode("SequenceConstruct", {"a", "b"}, {"s"}), MakeNode("Optional", {"s"}, {"o"}),
       MakeNode("OptionalGetElement", {"o"}, {"s2"}), MakeNode("SequenceLength", {"s2"}, {"n"}),
       MakeNode("ConcatFromSequence", {"s2"}, {"all"}, {AttrInt("axis", 0)})},
      {MakeValueInfo("a", kF, {2}), MakeValueInfo("b", kF, {1})},
      {MakeValueInfoNoShape("n", kI), MakeValueInfoNoShape("all", kF)});
  auto out = RunModel(m, {F32In("a", {2}, {1, 2}), F32In("b", {1}, {3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values(*out->at(0)), V{2});
  EXPECT_EQ(Values(*out->at(1)), (V{1, 2, 3}));

  onnx::TypeProto no_shape;
  no_shape.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kI32);
  onnx::ModelProto in = MakeModel(15, {MakeNode("OptionalHasElement", {"o"}, {"has"})},
                                  {OptionalInfo("o", no_shape)}, {MakeValueInfoNoShape("has", kB)});
  absl::StatusOr<Module> bad = ImportOnnxBytes(Serialize(in));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("is an optional whose elements declare no shape"));
  ImportOptions o;
  o.input_shapes["o"] = {4};
  absl::StatusOr<Module> good = ImportOnnxBytes(Serialize(in), o);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_THAT(PrintModule(*good), HasSubstr("%o: Optional_Sequence_int32_1"));
}

// If whose branches give an empty optional and Some(sequence) (ONNX's
// test_if_opt), read with OptionalHasElement.
TEST(ConvertOptional, IfBranchesOfOptionals) {
  onnx::GraphProto then_g =
      Graph("then", {MakeNode("Optional", {}, {"none"}, {AttrType("type", SequenceTypeProto(kF, 1))})}, {},
            {OptionalInfo("none", SequenceTypeProto(kF, 1))});
  onnx::GraphProto else_g = Graph(
      "else", {MakeNode("SequenceConstruct", {"x"}, {"s"}), MakeNode("Optional", {"s"}, {"some"})}, {},
      {OptionalInfo("some", SequenceTypeProto(kF, 1))});
  onnx::ModelProto m = MakeModel(
      16,
      {MakeNode("If", {"c"}, {"o"}, {AttrGraph("then_branch", then_g), AttrGraph("else_branch", else_g)}),
       MakeNode("OptionalHasElement", {"o"}, {"has"})},
      {MakeValueInfo("c", kB, {}), MakeValueInfo("x", kF, {2})}, {MakeValueInfoNoShape("has", kB)});
  for (bool c : {true, false}) {
    auto out = RunModel(m, {In("c", DataType::Bool(), {}, {c ? 1.0 : 0.0}), F32In("x", {2}, {1, 2})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values(*out->at(0)), V{c ? 0.0 : 1.0});
  }
}

// A Loop carrying an optional that starts empty: the body gives the value
// (o's value + 1, or [0] when o is none), which the loop carries as Some.
TEST(ConvertOptional, LoopCarriesAnOptional) {
  onnx::AttributeProto one_attr = AttrTensor("value", MakeFloatTensor("one", {1}, {1}));
  onnx::AttributeProto zero_attr = AttrTensor("value", MakeFloatTensor("zero", {1}, {0}));
  onnx::GraphProto then_g = Graph("then",
                                  {MakeNode("OptionalGetElement", {"o_in"}, {"g"}),
                                   MakeNode("Constant", {}, {"one"}, {one_attr}), MakeNode("Add", {"g", "one"}, {"t"})},
                                  {}, {MakeValueInfoNoShape("t", kF)});
  onnx::GraphProto else_g =
      Graph("else", {MakeNode("Constant", {}, {"e"}, {zero_attr})}, {}, {MakeValueInfoNoShape("e", kF)});
  onnx::GraphProto body = Graph(
      "body",
      {MakeNode("Identity", {"c_in"}, {"c_out"}), MakeNode("OptionalHasElement", {"o_in"}, {"has"}),
       MakeNode("If", {"has"}, {"v"}, {AttrGraph("then_branch", then_g), AttrGraph("else_branch", else_g)})},
      {MakeValueInfo("i", kI, {}), MakeValueInfo("c_in", kB, {}), OptionalInfo("o_in", TensorTypeProto(kF, 1))},
      {MakeValueInfo("c_out", kB, {}), MakeValueInfoNoShape("v", kF)});
  auto model = [&](const std::string& read, int32_t out_type) {
    std::vector<onnx::NodeProto> nodes = {
        MakeNode("Optional", {}, {"o0"}, {AttrType("type", TensorTypeProto(kF, 1))}),
        MakeNode("Loop", {"M", "", "o0"}, {"o"}, {AttrGraph("body", body)}),
        MakeNode(read, {"o"}, {"y"})};
    return MakeModel(16, nodes, {MakeValueInfo("M", kI, {})}, {MakeValueInfoNoShape("y", out_type)});
  };
  for (int64_t m : {1, 3}) {
    auto out = RunModel(model("OptionalGetElement", kF), {In("M", DataType::Int(64), {}, {static_cast<double>(m)})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values(*out->at(0)), V{static_cast<double>(m - 1)}) << m;
  }
  for (int64_t m : {0, 2}) {
    auto out = RunModel(model("OptionalHasElement", kB), {In("M", DataType::Int(64), {}, {static_cast<double>(m)})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values(*out->at(0)), V{m > 0 ? 1.0 : 0.0}) << m;
  }
}

// Opset 18: OptionalHasElement / OptionalGetElement take a tensor (it has
// its element; it is its element) or no input (none).
TEST(ConvertOptional, Opset18PlainInputs) {
  onnx::ModelProto m = MakeModel(
      18,
      {MakeNode("OptionalHasElement", {"x"}, {"has"}), MakeNode("OptionalHasElement", {""}, {"has_none"}),
       MakeNode("OptionalGetElement", {"x"}, {"got"})},
      {MakeValueInfo("x", kF, {2})},
      {MakeValueInfoNoShape("has", kB), MakeValueInfoNoShape("has_none", kB), MakeValueInfoNoShape("got", kF)});
  auto out = RunModel(m, {F32In("x", {2}, {7, 8})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values(*out->at(0)), V{1});
  EXPECT_EQ(Values(*out->at(1)), V{0});
  EXPECT_EQ(Values(*out->at(2)), (V{7, 8}));
}

TEST(ConvertOptional, ErrorsNameTheProblem) {
  onnx::ModelProto no_type = MakeModel(15, {MakeNode("Optional", {}, {"o"}), MakeNode("OptionalHasElement", {"o"}, {"h"})},
                                       {}, {MakeValueInfoNoShape("h", kB)});
  absl::StatusOr<Module> r = ImportOnnxBytes(Serialize(no_type));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("needs the attribute 'type'"));

  onnx::TypeProto shapeless;
  shapeless.mutable_tensor_type()->set_elem_type(kF);
  onnx::ModelProto no_rank =
      MakeModel(15, {MakeNode("Optional", {}, {"o"}, {AttrType("type", shapeless)}),
                     MakeNode("OptionalHasElement", {"o"}, {"h"})},
                {}, {MakeValueInfoNoShape("h", kB)});
  r = ImportOnnxBytes(Serialize(no_rank));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("kiln needs its rank"));

  onnx::ModelProto nested = MakeModel(
      15, {MakeNode("Optional", {"x"}, {"o"}), MakeNode("Optional", {"o"}, {"oo"}),
           MakeNode("OptionalHasElement", {"oo"}, {"h"})},
      {MakeValueInfo("x", kF, {2})}, {MakeValueInfoNoShape("h", kB)});
  r = ImportOnnxBytes(Serialize(nested));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("not an optional"));
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
