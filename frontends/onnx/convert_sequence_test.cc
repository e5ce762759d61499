// ONNX sequences (convert_sequence.cc): models that build, change and read
// sequences between tensor inputs and outputs, imported and run by the
// interpreter, against what the operators' definitions give (worked out
// here on std::vector lists of tensors).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "frontends/onnx/convert_test_util.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"

namespace kiln::onnx_frontend::testing {
namespace {

using ::testing::HasSubstr;
using V = std::vector<double>;

constexpr int32_t kF = onnx::TensorProto::FLOAT;
constexpr int32_t kL = onnx::TensorProto::INT64;
constexpr DataType kI64 = DataType::Int(64);

// a [2], b [3], c [1] -> SequenceConstruct -> SequenceInsert(d [2], pos)
// -> SequenceErase(erase) -> outputs: the length, the element at `at`, and
// all of them concatenated.
onnx::ModelProto EditModel() {
  return MakeModel(
      12,
      {MakeNode("SequenceConstruct", {"a", "b", "c"}, {"s0"}),
       MakeNode("SequenceInsert", {"s0", "d", "pos"}, {"s1"}),
       MakeNode("SequenceErase", {"s1", "erase"}, {"s2"}),
       MakeNode("SequenceLength", {"s2"}, {"n"}), MakeNode("SequenceAt", {"s2", "at"}, {"e"}),
       MakeNode("ConcatFromSequence", {"s2"}, {"all"}, {AttrInt("axis", 0)})},
      {MakeValueInfo("a", kF, {2}), MakeValueInfo("b", kF, {3}), MakeValueInfo("c", kF, {1}),
       MakeValueInfo("d", kF, {2}), MakeValueInfo("pos", kL, {}), MakeValueInfo("erase", kL, {}),
       MakeValueInfo("at", kL, {})},
      {MakeValueInfoNoShape("n", kL), MakeValueInfoNoShape("e", kF),
       MakeValueInfoNoShape("all", kF)});
}

TEST(ConvertSequence, InsertEraseAtLengthConcat) {
  const std::vector<V> base = {{1, 2}, {3, 4, 5}, {6}};
  const V d = {7, 8};
  for (int64_t pos : {0, 1, 3, -1}) {
    for (int64_t erase : {0, 2, -1}) {
      for (int64_t at : {0, -2}) {
        std::vector<V> s = base;
        const int64_t p = pos < 0 ? pos + 3 : pos;
        s.insert(s.begin() + p, d);
        const int64_t e = erase < 0 ? erase + 4 : erase;
        s.erase(s.begin() + e);
        const int64_t a = at < 0 ? at + 3 : at;
        V all;
        for (const V& t : s) all.insert(all.end(), t.begin(), t.end());
        auto out = RunModel(EditModel(), {F32In("a", {2}, base[0]), F32In("b", {3}, base[1]),
                                          F32In("c", {1}, base[2]), F32In("d", {2}, d),
                                          In("pos", kI64, {}, {static_cast<double>(pos)}),
                                          In("erase", kI64, {}, {static_cast<double>(erase)}),
                                          In("at", kI64, {}, {static_cast<double>(at)})});
        ASSERT_TRUE(out.ok()) << out.status();
        ASSERT_EQ(out->size(), 3u);
        EXPECT_EQ(Values(*out->at(0)), V{3});
        EXPECT_EQ(Values(*out->at(1)), s[static_cast<size_t>(a)])
            << pos << " " << erase << " " << at;
        EXPECT_EQ(Values(*out->at(2)), all) << pos << " " << erase;
      }
    }
  }
}

// SequenceEmpty takes the rank of the first tensor inserted (no position:
// at the end); ConcatFromSequence with new_axis stacks.
TEST(ConvertSequence, EmptyThenAppendThenStack) {
  onnx::ModelProto m = MakeModel(
      12,
      {MakeNode("SequenceEmpty", {}, {"s0"}), MakeNode("SequenceInsert", {"s0", "x"}, {"s1"}),
       MakeNode("SequenceInsert", {"s1", "y"}, {"s2"}),
       MakeNode("ConcatFromSequence", {"s2"}, {"st"},
                {AttrInt("axis", 1), AttrInt("new_axis", 1)})},
      {MakeValueInfo("x", kF, {2, 2}), MakeValueInfo("y", kF, {2, 2})},
      {MakeValueInfoNoShape("st", kF)});
  auto out = RunModel(m, {F32In("x", {2, 2}, {1, 2, 3, 4}), F32In("y", {2, 2}, {5, 6, 7, 8})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->at(0)->shape(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(Values(*out->at(0)), (V{1, 2, 5, 6, 3, 4, 7, 8}));
}

// SplitToSequence: equal parts (a scalar split, the last part shorter), given
// sizes, and one part per index without keepdims.
TEST(ConvertSequence, SplitToSequence) {
  auto split = [](std::vector<onnx::AttributeProto> attrs, bool with_split,
                  std::vector<int64_t> split_dims, std::vector<int64_t> split_values, int64_t at) {
    std::vector<onnx::NodeProto> nodes = {
        MakeNode("SplitToSequence",
                 with_split ? std::vector<std::string>{"x", "sp"} : std::vector<std::string>{"x"},
                 {"s"}, attrs),
        MakeNode("SequenceLength", {"s"}, {"n"}), MakeNode("SequenceAt", {"s", "at"}, {"e"})};
    onnx::ModelProto m = MakeModel(12, nodes, {MakeValueInfo("x", kF, {5, 2})},
                                   {MakeValueInfoNoShape("n", kL), MakeValueInfoNoShape("e", kF)});
    *m.mutable_graph()->add_initializer() = MakeInt64Tensor("at", {}, {at});
    if (with_split)
      *m.mutable_graph()->add_initializer() = MakeInt64Tensor("sp", split_dims, split_values);
    return RunModel(m, {F32In("x", {5, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})});
  };
  auto a = split({}, true, {}, {2}, 2);  // [2, 2, 1] rows: the last is row 4
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(Values(*a->at(0)), V{3});
  EXPECT_EQ(Values(*a->at(1)), (V{8, 9}));
  auto b = split({AttrInt("axis", 0)}, true, {2}, {1, 4}, 1);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(Values(*b->at(0)), V{2});
  EXPECT_EQ(b->at(1)->shape(), (std::vector<int64_t>{4, 2}));
  auto c = split({AttrInt("axis", 1), AttrInt("keepdims", 0)}, false, {}, {}, 1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(Values(*c->at(0)), V{2});
  EXPECT_EQ(c->at(1)->shape(), (std::vector<int64_t>{5}));
  EXPECT_EQ(Values(*c->at(1)), (V{1, 3, 5, 7, 9}));
  auto bad = split({}, true, {2}, {1, 1}, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("split sums to 2; the axis has 5"));
}

// SplitToSequence with a 1-D split given at run time (its length static):
// that many parts, along an axis whose extent is symbolic; the sizes may be 0.
TEST(ConvertSequence, SplitToSequenceWithARunTimeSplit) {
  onnx::ModelProto m = MakeModel(
      12,
      {MakeNode("SplitToSequence", {"x", "sp"}, {"s"}), MakeNode("SequenceLength", {"s"}, {"n"}),
       MakeNode("SequenceAt", {"s", "at"}, {"e"})},
      {MakeValueInfo("x", kF, {"L", 2}), MakeValueInfo("sp", kL, {3}), MakeValueInfo("at", kL, {})},
      {MakeValueInfoNoShape("n", kL), MakeValueInfoNoShape("e", kF)});
  const V x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};  // [5, 2]
  struct Case {
    std::vector<double> sp;
    int64_t at;
    V want;
  };
  for (const Case& k : {Case{{1, 3, 1}, 1, {2, 3, 4, 5, 6, 7}}, Case{{0, 5, 0}, 2, {}},
                        Case{{2, 0, 3}, 0, {0, 1, 2, 3}}}) {
    auto out = RunModel(m, {F32In("x", {5, 2}, x), In("sp", kI64, {3}, k.sp),
                            In("at", kI64, {}, {static_cast<double>(k.at)})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Values(*out->at(0)), V{3});
    EXPECT_EQ(Values(*out->at(1)), k.want) << k.at;
    EXPECT_EQ(out->at(1)->shape(), (std::vector<int64_t>{static_cast<int64_t>(k.want.size() / 2), 2}));
  }
}

// A sequence graph input is the list ADT; its elements' rank comes from the
// declared element shape or from input_shapes.
TEST(ConvertSequence, SequenceGraphInputs) {
  onnx::ModelProto m = MakeModel(12, {MakeNode("SequenceLength", {"s"}, {"n"})}, {},
                                 {MakeValueInfoNoShape("n", kL)});
  onnx::ValueInfoProto* in = m.mutable_graph()->add_input();
  in->set_name("s");
  in->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(kF);
  absl::StatusOr<Module> no_rank = ImportOnnxBytes(Serialize(m));
  ASSERT_FALSE(no_rank.ok());
  EXPECT_THAT(no_rank.status().message(),
              HasSubstr("give one element's shape with ImportOptions::input_shapes"));
  ImportOptions o;
  o.input_shapes["s"] = {3, 4};
  absl::StatusOr<Module> r = ImportOnnxBytes(Serialize(m), o);
  ASSERT_TRUE(r.ok()) << r.status();
  const std::string text = PrintModule(*r);
  EXPECT_THAT(text, HasSubstr("type Sequence_float32_2"));
  EXPECT_THAT(text, HasSubstr("%s: Sequence_float32_2"));
}

TEST(ConvertSequence, ErrorsNameTheProblem) {
  onnx::ModelProto m = MakeModel(
      12,
      {MakeNode("SequenceConstruct", {"a", "b"}, {"s"}), MakeNode("SequenceLength", {"s"}, {"n"})},
      {MakeValueInfo("a", kF, {2}), MakeValueInfo("b", kF, {2, 1})},
      {MakeValueInfoNoShape("n", kL)});
  absl::StatusOr<Module> r = ImportOnnxBytes(Serialize(m));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("input 1 is Tensor[(2, 1), float32]"));
  onnx::ModelProto at = MakeModel(12, {MakeNode("SequenceAt", {"a", "i"}, {"e"})},
                                  {MakeValueInfo("a", kF, {2}), MakeValueInfo("i", kL, {})},
                                  {MakeValueInfoNoShape("e", kF)});
  r = ImportOnnxBytes(Serialize(at));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("input 0 must be a sequence"));
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
