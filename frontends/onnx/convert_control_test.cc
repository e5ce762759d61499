// File: frontends/onnx/convert_control_test.cc
//
// If, Loop and Scan (convert_control.cc) and subgraph import (subgraph.cc):
// what each becomes in the graph IR (an `if`, a let-bound recursive
// function), its types (static where the trip count is known, `?` where a
// length or a carried shape is known only at run time), its values in the
// interpreter against the loops of control_test_models.h, and the errors.
// //tests/control_flow:onnx_control_flow_test runs the same models compiled.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/control_test_models.h"
#include "frontends/onnx/convert_test_util.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/printer.h"

namespace kiln::onnx_frontend::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const DataType kF32 = DataType::Float(32);

absl::StatusOr<Module> Import(const onnx::ModelProto& m) { return ImportOnnxBytes(Serialize(m)); }

// main's result types, one per graph output.
std::vector<std::string> OutputTypes(const Module& m) {
  std::vector<std::string> out;
  const Type t = (*m.Lookup("main"))->body->checked_type();
  if (const auto* tt = t.as<TupleTypeNode>()) {
    for (const Type& f : tt->fields) out.push_back(TypeToString(f));
  } else {
    out.push_back(TypeToString(t));
  }
  return out;
}

std::vector<double> AsDoubles(const Vec& v) { return std::vector<double>(v.begin(), v.end()); }

void ExpectNear(const HostTensor& got, const Vec& want, const std::string& what) {
  std::vector<double> g = Values(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-5) << what << " element " << i;
}

TEST(ConvertIf, TwoOutputsFromBranchesReadingTheEnclosingGraph) {
  absl::StatusOr<Module> m = Import(IfTwoOutputsModel());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_THAT(PrintModule(*m), HasSubstr("if ("));
  EXPECT_EQ(OutputTypes(*m),
            (std::vector<std::string>{"Tensor[(2, 3), float32]", "Tensor[(2, 3), float32]"}));
  const Vec y = {0.5f, -1.f, 2.f, 0.25f, -3.f, 1.f};
  for (const Vec& x : {Vec{1, 2, -0.5f, 3, 0, 1}, Vec{-1, -2, 0.5f, -3, 0, -1}}) {
    auto out = RunModel(IfTwoOutputsModel(), {F32In("x", {2, 3}, AsDoubles(x)),
                                              F32In("y", {2, 3}, AsDoubles(y))});
    ASSERT_TRUE(out.ok()) << out.status();
    auto [r, o2] = RefIfTwoOutputs(x, y);
    ExpectNear(*out->at(0), r, "r");
    ExpectNear(*out->at(1), o2, "o2");
  }
}

onnx::ModelProto IfOf(onnx::GraphProto then_g, onnx::GraphProto else_g, bool cond_is_constant,
                      std::vector<int64_t> cond_shape = {}) {
  std::vector<onnx::ValueInfoProto> inputs = {MakeValueInfo("x", kF, {3})};
  std::vector<onnx::TensorProto> inits;
  std::vector<DimSpec> cs(cond_shape.begin(), cond_shape.end());
  if (cond_is_constant) {
    inits.push_back(MakeTensor<uint8_t>("c", kB, cond_shape, {1}));
  } else {
    inputs.push_back(MakeValueInfo("c", kB, cs));
  }
  return ModelOf(13, Graph("g",
                           {MakeNode("If", {"c"}, {"y"},
                                     {AttrGraph("then_branch", std::move(then_g)),
                                      AttrGraph("else_branch", std::move(else_g))})},
                           std::move(inputs), {MakeValueInfo("y", kF, {})}, std::move(inits)));
}

onnx::GraphProto Branch(const std::string& op, const std::string& out_name = "b") {
  return Graph("br_" + op, {MakeNode(op, {"x"}, {out_name})}, {}, {MakeValueInfo(out_name, kF, {3})});
}

TEST(ConvertIf, AConditionKnownAtImportImportsOnlyItsBranch) {
  absl::StatusOr<Module> m = Import(IfOf(Branch("Neg"), Branch("Abs"), /*cond_is_constant=*/true));
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string text = PrintModule(*m);
  EXPECT_THAT(text, Not(HasSubstr("if (")));
  EXPECT_THAT(text, HasSubstr("negative"));
  EXPECT_THAT(text, Not(HasSubstr("abs")));
}

TEST(ConvertIf, AOneElementConditionOfRankOneIsAccepted) {
  auto out = RunModel(IfOf(Branch("Neg"), Branch("Abs"), false, {1}),
                      {F32In("x", {3}, {1, -2, 3}), In("c", DataType::Bool(), {1}, {0})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(*out->at(0), {1, 2, 3}, "y");
}

TEST(ConvertIf, Errors) {
  // A condition of two elements.
  absl::Status s = Import(IfOf(Branch("Neg"), Branch("Abs"), false, {2})).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("must hold one element"));
  // Branches of different shapes.
  onnx::GraphProto wide = Graph("wide", {MakeNode("Concat", {"x", "x"}, {"w"}, {AttrInt("axis", 0)})}, {},
                                {MakeValueInfo("w", kF, {6})});
  s = Import(IfOf(Branch("Neg"), wide, false)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("If"), HasSubstr("Tensor[(3,), float32]"), HasSubstr("Tensor[(6,), float32]"),
                                 HasSubstr("one shape")));
  // Branches of different dtypes.
  onnx::GraphProto ints = Graph("ints", {MakeNode("Cast", {"x"}, {"i"}, {AttrInt("to", kI)})}, {},
                                {MakeValueInfo("i", kI, {3})});
  s = Import(IfOf(Branch("Neg"), ints, false)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("dtype"));
  // A branch with two outputs for a node with one.
  onnx::GraphProto two = Graph("two", {MakeNode("Neg", {"x"}, {"n1"}), MakeNode("Abs", {"x"}, {"n2"})}, {},
                               {MakeValueInfo("n1", kF, {3}), MakeValueInfo("n2", kF, {3})});
  s = Import(IfOf(two, Branch("Abs"), false)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("then_branch has 2 outputs but the node has 1"));
  // A name no graph defines, and an operator without a converter, inside a branch.
  onnx::GraphProto dangling = Graph("dangling", {MakeNode("Neg", {"nowhere"}, {"b"})}, {},
                                    {MakeValueInfo("b", kF, {3})});
  s = Import(IfOf(dangling, Branch("Abs"), false)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("subgraph 'dangling'"), HasSubstr("'nowhere' is not defined")));
  s = Import(IfOf(Branch("NoSuchOp"), Branch("Abs"), false)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("If"), HasSubstr("no converter for NoSuchOp")));
  // A missing branch.
  onnx::ModelProto no_else = IfOf(Branch("Neg"), Branch("Abs"), false);
  no_else.mutable_graph()->mutable_node(0)->mutable_attribute()->RemoveLast();
  s = Import(no_else).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("'else_branch' is missing"));
}

TEST(ConvertLoop, ATripCountKnownAtImportGivesStaticScanOutputs) {
  absl::StatusOr<Module> m = Import(LoopTripCountModel());
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string text = PrintModule(*m);
  EXPECT_THAT(text, AllOf(HasSubstr("let %loop"), HasSubstr("%loop("), HasSubstr("concatenate")));
  EXPECT_EQ(OutputTypes(*m),
            (std::vector<std::string>{"Tensor[(3,), float32]", "Tensor[(4, 3), float32]"}));
  const Vec v0 = {1, 2, 3}, w = {0.5f, -1, 2};
  auto out = RunModel(LoopTripCountModel(), {F32In("v0", {3}, AsDoubles(v0)), F32In("w", {3}, AsDoubles(w))});
  ASSERT_TRUE(out.ok()) << out.status();
  auto [v, scan] = RefLoopTripCount(v0, w);
  ExpectNear(*out->at(0), v, "v");
  ExpectNear(*out->at(1), scan, "scan");
}

TEST(ConvertLoop, ARunTimeTripCountAndConditionGiveARunTimeLength) {
  absl::StatusOr<Module> m = Import(LoopWhileModel());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(OutputTypes(*m),
            (std::vector<std::string>{"Tensor[(2,), float32]", "Tensor[(?, 2), float32]"}));
  struct Case {
    int64_t m;
    bool c;
    float limit;
  };
  for (const Case& k : {Case{10, true, 100}, Case{2, true, 100}, Case{10, false, 100},
                        Case{0, true, 5}, Case{10, true, 1}}) {
    SCOPED_TRACE(absl::StrCat(k.m, " ", k.c, " ", k.limit));
    auto out = RunModel(LoopWhileModel(),
                        {In("M", DataType::Int(64), {}, {static_cast<double>(k.m)}),
                         In("c0", DataType::Bool(), {}, {k.c ? 1.0 : 0.0}), F32In("v0", {2}, {1, 2}),
                         F32In("limit", {}, {k.limit})});
    ASSERT_TRUE(out.ok()) << out.status();
    auto [v, scan] = RefLoopWhile(k.m, k.c, {1, 2}, k.limit);
    ExpectNear(*out->at(0), v, "v");
    ASSERT_EQ(out->at(1)->shape(), (std::vector<int64_t>{static_cast<int64_t>(scan.size() / 2), 2}));
    ExpectNear(*out->at(1), scan, "scan");
  }
}

// v0: float[1]; each iteration appends the iteration number: a carried value
// whose shape changes, typed with a `?` extent. The body declares the
// iteration number as [1].
onnx::ModelProto GrowingModel() {
  onnx::GraphProto body = Graph(
      "body",
      {MakeNode("Cast", {"i"}, {"fi"}, {AttrInt("to", kF)}),
       MakeNode("Concat", {"v_in", "fi"}, {"v_out"}, {AttrInt("axis", 0)}),
       MakeNode("Identity", {"c_in"}, {"c_out"})},
      {MakeValueInfo("i", kI, {1}), MakeValueInfo("c_in", kB, {}), MakeValueInfo("v_in", kF, {1})},
      {MakeValueInfo("c_out", kB, {}), MakeValueInfo("v_out", kF, {"n"})});
  return ModelOf(13, Graph("grow", {MakeNode("Loop", {"M", "", "v0"}, {"v"}, {AttrGraph("body", body)})},
                           {MakeValueInfo("M", kI, {}), MakeValueInfo("v0", kF, {1})},
                           {MakeValueInfo("v", kF, {"n"})}));
}

TEST(ConvertLoop, ACarriedValueWhoseShapeChangesGetsAnAnyDim) {
  absl::StatusOr<Module> m = Import(GrowingModel());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(OutputTypes(*m), (std::vector<std::string>{"Tensor[(?,), float32]"}));
  auto out = RunModel(GrowingModel(), {In("M", DataType::Int(64), {}, {3}), F32In("v0", {1}, {7})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(*out->at(0), {7, 0, 1, 2}, "v");
}

TEST(ConvertLoop, NestedLoopAndIfReadTheOutermostGraph) {
  absl::StatusOr<Module> m = Import(NestedModel());
  ASSERT_TRUE(m.ok()) << m.status();
  const Vec v0 = {1, -1, 0.5f}, w = {0.25f, 2, -1};
  for (auto [mm, kk] : std::vector<std::pair<int64_t, int64_t>>{{3, 2}, {0, 4}, {5, 0}}) {
    auto out = RunModel(NestedModel(), {In("M", DataType::Int(64), {}, {static_cast<double>(mm)}),
                                        In("K", DataType::Int(64), {}, {static_cast<double>(kk)}),
                                        F32In("v0", {3}, AsDoubles(v0)), F32In("w", {3}, AsDoubles(w))});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(*out->at(0), RefNested(mm, kk, v0, w), absl::StrCat("M=", mm, " K=", kk));
  }
}

// Opset-8 Scans nested `depth` deep, each over a batch of 64: each body is
// imported once per batch entry of every enclosing Scan (64^depth).
onnx::ModelProto NestedScan8Model(int depth) {
  onnx::GraphProto body = Graph("level0", {MakeNode("Identity", {"e"}, {"o"})},
                                {MakeValueInfo("e", kF, {1})}, {MakeValueInfo("o", kF, {1})});
  std::vector<DimSpec> dims = {1};
  for (int level = 1; level <= depth; ++level) {
    dims.insert(dims.begin(), {int64_t{64}, int64_t{1}});
    onnx::NodeProto scan = MakeNode("Scan", {"", "e"}, {"o"},
                                    {AttrGraph("body", std::move(body)), AttrInt("num_scan_inputs", 1)});
    if (level == depth) {
      return ModelOf(8, Graph("nested_scan8", {std::move(scan)}, {MakeValueInfo("e", kF, dims)},
                              {MakeValueInfo("o", kF, dims)}));
    }
    body = Graph("level" + std::to_string(level), {std::move(scan)}, {MakeValueInfo("e", kF, dims)},
                 {MakeValueInfo("o", kF, dims)});
  }
  return {};
}

TEST(ConvertScan, NestedBodiesImportedAgainAndAgainAreBounded) {
  EXPECT_TRUE(Import(NestedScan8Model(1)).ok());
  absl::Status s = Import(NestedScan8Model(2)).status();  // 64 + 64^2 imports
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("more than 2000 subgraph imports"));
}

TEST(ConvertLoop, AScanOutputWhoseShapeIsKnownOnlyAtRunTime) {
  absl::StatusOr<Module> m = Import(LoopRunTimeSliceModel());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(OutputTypes(*m),
            (std::vector<std::string>{"Tensor[(), float32]", "Tensor[(?, ?), float32]"}));
  const Vec x = {1, 2, 3, 4, 5};
  for (auto [mm, n] : std::vector<std::pair<int64_t, int64_t>>{{3, 2}, {1, 5}, {0, 3}}) {
    SCOPED_TRACE(absl::StrCat("M=", mm, " n=", n));
    auto out = RunModel(LoopRunTimeSliceModel(),
                        {In("M", DataType::Int(64), {}, {static_cast<double>(mm)}),
                         In("n", DataType::Int(64), {1}, {static_cast<double>(n)}),
                         F32In("x", {5}, AsDoubles(x)), F32In("v0", {}, {0.5})});
    ASSERT_TRUE(out.ok()) << out.status();
    Vec scan;
    float v = 0.5f;
    for (int64_t i = 0; i < mm; ++i) {
      for (int64_t k = 0; k < n; ++k) {
        scan.push_back(x[static_cast<size_t>(k)]);
        v += x[static_cast<size_t>(k)];
      }
    }
    ExpectNear(*out->at(0), {v}, "v");
    // No iteration: the empty start, with 0 for the extent not known before one.
    const std::vector<int64_t> shape = mm == 0 ? std::vector<int64_t>{0, 0} : std::vector<int64_t>{mm, n};
    EXPECT_EQ(out->at(1)->shape(), shape);
    ExpectNear(*out->at(1), scan, "scan");
  }
}

TEST(ConvertIf, TheBranchWithTheMoreGeneralShapeGivesTheType) {
  // then: x (float[3]); else: x[0:n] (float[?]): the if is typed float[?]
  // (branches swapped under logical_not).
  onnx::GraphProto sliced = Graph("sliced", {MakeNode("Slice", {"x", "zero1", "n"}, {"b"})}, {},
                                  {MakeValueInfo("b", kF, {"k"})});
  onnx::ModelProto model = ModelOf(
      13, Graph("g",
                {MakeNode("If", {"c"}, {"y"},
                          {AttrGraph("then_branch", Branch("Identity")), AttrGraph("else_branch", sliced)})},
                {MakeValueInfo("x", kF, {3}), MakeValueInfo("c", kB, {}), MakeValueInfo("n", kI, {1})},
                {MakeValueInfo("y", kF, {"k"})}, {MakeInt64Tensor("zero1", {1}, {0})}));
  absl::StatusOr<Module> m = Import(model);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(OutputTypes(*m), (std::vector<std::string>{"Tensor[(?,), float32]"}));
  for (double c : {1.0, 0.0}) {
    auto out = RunModel(model, {F32In("x", {3}, {4, 5, 6}), In("c", DataType::Bool(), {}, {c}),
                                In("n", DataType::Int(64), {1}, {2})});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(*out->at(0), c != 0 ? Vec{4, 5, 6} : Vec{4, 5}, "y");
  }
}

TEST(ConvertLoop, AConverterWithARunTimeFormReadsTheBodysValues) {
  // x[i:i+1] each iteration (test_loop11's body): Slice's starts and ends
  // come from the iteration number, so the run-time form (dyn.*) is used.
  onnx::GraphProto body = Graph(
      "body",
      {MakeNode("Add", {"i", "one"}, {"i1"}), MakeNode("Unsqueeze", {"i", "axes0"}, {"st"}),
       MakeNode("Unsqueeze", {"i1", "axes0"}, {"en"}), MakeNode("Slice", {"x", "st", "en"}, {"sl"}),
       MakeNode("ReduceSum", {"sl"}, {"rs"}, {AttrInt("keepdims", 0)}),
       MakeNode("Add", {"v_in", "rs"}, {"v_out"}), MakeNode("Identity", {"c_in"}, {"c_out"})},
      {MakeValueInfo("i", kI, {}), MakeValueInfo("c_in", kB, {}), MakeValueInfo("v_in", kF, {})},
      {MakeValueInfo("c_out", kB, {}), MakeValueInfo("v_out", kF, {})},
      {MakeInt64Tensor("one", {}, {1}), MakeInt64Tensor("axes0", {1}, {0})});
  onnx::ModelProto m = ModelOf(13, Graph("slices", {MakeNode("Loop", {"M", "", "v0"}, {"v"}, {AttrGraph("body", body)})},
                                         {MakeValueInfo("M", kI, {}), MakeValueInfo("v0", kF, {})},
                                         {MakeValueInfo("v", kF, {})},
                                         {MakeFloatTensor("x", {5}, {1, 2, 4, 8, 16})}));
  auto out = RunModel(m, {In("M", DataType::Int(64), {}, {3}), F32In("v0", {}, {0.5})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(*out->at(0), {0.5f + 1 + 2 + 4}, "v");
}

TEST(ConvertLoop, AValueOfTheBodyThatAConverterNeedsAtImportIsUnimplemented) {
  // Dropout's training_mode from the iteration number: known only when the
  // body runs, and Dropout reads it at import time.
  onnx::ModelProto m = LoopTripCountModel();
  onnx::GraphProto* body = m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  *body->add_node() = MakeNode("Cast", {"i"}, {"training"}, {AttrInt("to", kB)});
  *body->add_node() = MakeNode("Dropout", {"v_out", "", "training"}, {"summed"});
  body->mutable_output(2)->set_name("summed");
  absl::Status s = Import(m).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("Loop"), HasSubstr("Dropout"), HasSubstr("depends on 'i'"),
                                 HasSubstr("known only when the enclosing If/Loop/Scan body runs")));
  EXPECT_THAT(s.message(), Not(HasSubstr("frozen_inputs")));
}

TEST(ConvertLoop, Errors) {
  onnx::ModelProto forever = LoopTripCountModel();
  forever.mutable_graph()->mutable_node(0)->set_input(0, "");
  absl::Status s = Import(forever).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("Loop"), HasSubstr("never ends")));

  onnx::ModelProto few = LoopTripCountModel();
  few.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_input()->RemoveLast();
  s = Import(few).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("the body has 2 inputs"));

  // A carried value that changes dtype.
  onnx::ModelProto retyped = LoopTripCountModel();
  onnx::GraphProto* b2 = retyped.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
  *b2->add_node() = MakeNode("Cast", {"v_out"}, {"v_int"}, {AttrInt("to", kI)});
  b2->mutable_output(1)->set_name("v_int");
  s = Import(retyped).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("keeps its dtype and rank"));
}

TEST(ConvertScan, Opset9AxesAndDirections) {
  absl::StatusOr<Module> m = Import(ScanReverseModel());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(OutputTypes(*m),
            (std::vector<std::string>{"Tensor[(2,), float32]", "Tensor[(2, 5), float32]"}));
  const Vec s0 = {1, -1}, x = {1, 2, 3, 4, 5, -1, -2, 0.5f, 0.25f, 3};
  auto out = RunModel(ScanReverseModel(), {F32In("s0", {2}, AsDoubles(s0)), F32In("x", {2, 5}, AsDoubles(x))});
  ASSERT_TRUE(out.ok()) << out.status();
  auto [s, ys] = RefScanReverse(s0, x);
  ExpectNear(*out->at(0), s, "s");
  ExpectNear(*out->at(1), ys, "ys");
}

TEST(ConvertScan, Opset8BatchAndSequenceLens) {
  const Vec s0 = {1, 2, -1, 0}, x = {1, 2, 3, 4, 5, 6, -1, -2, -3, 0.5f, 0.25f, 8};
  auto [s, ys] = RefScan8(s0, x);
  for (const std::vector<int64_t>& lens : {std::vector<int64_t>{}, std::vector<int64_t>{3, 3}}) {
    auto out = RunModel(Scan8Model(lens), {F32In("s0", {2, 2}, AsDoubles(s0)),
                                           F32In("x", {2, 3, 2}, AsDoubles(x))});
    ASSERT_TRUE(out.ok()) << out.status();
    ExpectNear(*out->at(0), s, "s");
    ExpectNear(*out->at(1), ys, "ys");
  }
  absl::Status st = Import(Scan8Model({3, 2})).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  EXPECT_THAT(st.message(), HasSubstr("sequence_lens"));
}

TEST(ConvertScan, Errors) {
  onnx::ModelProto bad_axis = ScanReverseModel();
  for (onnx::AttributeProto& a : *bad_axis.mutable_graph()->mutable_node(0)->mutable_attribute()) {
    if (a.name() == "scan_input_axes") a.set_ints(0, 2);
  }
  absl::Status s = Import(bad_axis).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), AllOf(HasSubstr("Scan"), HasSubstr("scan_input_axes[0]")));

  onnx::ModelProto bad_dir = ScanReverseModel();
  for (onnx::AttributeProto& a : *bad_dir.mutable_graph()->mutable_node(0)->mutable_attribute()) {
    if (a.name() == "scan_input_directions") a.set_ints(0, 2);
  }
  s = Import(bad_dir).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("directions are 0 (forward) or 1 (reverse)"));

  onnx::ModelProto no_count = ScanReverseModel();
  for (onnx::AttributeProto& a : *no_count.mutable_graph()->mutable_node(0)->mutable_attribute()) {
    if (a.name() == "num_scan_inputs") a.set_i(5);
  }
  s = Import(no_count).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("num_scan_inputs is 5"));
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
