// The reduction converters (convert_reduce.cc): one-node models imported and
// run by the interpreter, against a direct reduction computed in the test
// (ReduceRef), for axes from attributes and inputs, keepdims,
// noop_with_empty_axes, and ArgMax/ArgMin.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "frontends/onnx/convert_test_util.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kiln::onnx_frontend::testing {
namespace {

using ::testing::HasSubstr;
using V = std::vector<double>;
using Shape = std::vector<int64_t>;

constexpr DataType kF32 = DataType::Float(32);
constexpr DataType kI32 = DataType::Int(32);
constexpr DataType kI64 = DataType::Int(64);

struct Expected {
  V values;
  Shape shape;
};

// Reduces x (row-major, `shape`) over `axes` (empty: all; negative counts
// from the end) with f applied to each group's elements in order.
Expected ReduceRef(const V& x, const Shape& shape, std::vector<int64_t> axes, bool keepdims,
                   const std::function<double(const V&)>& f) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(shape.size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  Expected out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d])
      out.shape.push_back(shape[d]);
    else if (keepdims)
      out.shape.push_back(1);
  }
  // Group the elements by their index with the reduced dims dropped.
  std::vector<V> groups;
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t key = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!reduced[d]) key = key * shape[d] + index[d];
    if (static_cast<size_t>(key) >= groups.size()) groups.resize(static_cast<size_t>(key) + 1);
    groups[static_cast<size_t>(key)].push_back(x[i]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < shape[static_cast<size_t>(d)]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  for (const V& g : groups) out.values.push_back(f(g));
  return out;
}

double SumOf(const V& g) { return std::accumulate(g.begin(), g.end(), 0.0); }

const std::map<std::string, std::function<double(const V&)>>& Folds() {
  static const auto* const folds = new std::map<std::string, std::function<double(const V&)>>{
      {"ReduceSum", SumOf},
      {"ReduceMean", [](const V& g) { return SumOf(g) / static_cast<double>(g.size()); }},
      {"ReduceMax", [](const V& g) { return *std::max_element(g.begin(), g.end()); }},
      {"ReduceMin", [](const V& g) { return *std::min_element(g.begin(), g.end()); }},
      {"ReduceProd",
       [](const V& g) { return std::accumulate(g.begin(), g.end(), 1.0, std::multiplies<>()); }},
      {"ReduceL1",
       [](const V& g) {
         double s = 0;
         for (double v : g) s += std::fabs(v);
         return s;
       }},
      {"ReduceL2",
       [](const V& g) {
         double s = 0;
         for (double v : g) s += v * v;
         return std::sqrt(s);
       }},
      {"ReduceSumSquare",
       [](const V& g) {
         double s = 0;
         for (double v : g) s += v * v;
         return s;
       }},
      {"ReduceLogSum", [](const V& g) { return std::log(SumOf(g)); }},
      {"ReduceLogSumExp",
       [](const V& g) {
         double s = 0;
         for (double v : g) s += std::exp(v);
         return std::log(s);
       }},
  };
  return *folds;
}

void ExpectClose(const V& got, const V& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i])))
        << what << " [" << i << "]";
}

// x: shape [2, 3, 2], positive (LogSum needs it) and varied.
const Shape kShape = {2, 3, 2};
const V kX = {0.5, 1.25, 2, 0.75, 3, 1.5, 0.25, 2.5, 1, 1.75, 0.125, 4};

struct Got {
  V values;
  Shape shape;
  DataType dtype;
};

Got RunOne(int64_t opset, const onnx::NodeProto& node, const std::vector<NamedTensor>& inputs) {
  auto r = RunNode(opset, node, inputs);
  EXPECT_TRUE(r.ok()) << node.op_type() << ": " << r.status();
  if (!r.ok() || r->empty()) return {};
  return {Values(*r->at(0)), r->at(0)->shape(), r->at(0)->dtype()};
}

TEST(ConvertReduce, EveryReductionWithAxesAttribute) {
  const std::vector<std::vector<int64_t>> axes_cases = {{1}, {0, 2}, {-1}, {}};
  for (const auto& [op, fold] : Folds()) {
    for (const auto& axes : axes_cases) {
      for (bool keep : {true, false}) {
        std::vector<onnx::AttributeProto> attrs = {AttrInt("keepdims", keep ? 1 : 0)};
        if (!axes.empty()) attrs.push_back(AttrInts("axes", axes));
        const std::string what =
            op + " axes=" + std::to_string(axes.size()) + " keep=" + std::to_string(keep);
        Got y = RunOne(11, MakeNode(op, {"x"}, {"y"}, attrs), {F32In("x", kShape, kX)});
        Expected want = ReduceRef(kX, kShape, axes, keep, fold);
        EXPECT_EQ(y.shape, want.shape) << what;
        EXPECT_EQ(y.dtype, kF32) << what;
        ExpectClose(y.values, want.values, 2e-6, what);
      }
    }
  }
}

TEST(ConvertReduce, KeepdimsDefaultsToOne) {
  Got y = RunOne(13, MakeNode("ReduceMax", {"x"}, {"y"}, {AttrInts("axes", {1})}),
                 {F32In("x", kShape, kX)});
  EXPECT_EQ(y.shape, (Shape{2, 1, 2}));
  EXPECT_EQ(y.values, (V{3, 1.5, 1, 4}));
}

TEST(ConvertReduce, ReduceSumAxesInputFromOpset13) {
  auto node = MakeNode("ReduceSum", {"x", "axes"}, {"y"}, {AttrInt("keepdims", 0)});
  Got y = RunOne(13, node, {F32In("x", kShape, kX), Init("axes", kI64, {2}, {-1, 0})});
  Expected want = ReduceRef(kX, kShape, {-1, 0}, false, SumOf);
  EXPECT_EQ(y.shape, want.shape);
  ExpectClose(y.values, want.values, 1e-6, "sum");
  // No axes input: every axis.
  Got all = RunOne(13, MakeNode("ReduceSum", {"x"}, {"y"}), {F32In("x", kShape, kX)});
  EXPECT_EQ(all.shape, (Shape{1, 1, 1}));
  ExpectClose(all.values, {SumOf(kX)}, 1e-6, "sum all");
  // An empty axes input with noop_with_empty_axes=1: the identity.
  Got noop =
      RunOne(13, MakeNode("ReduceSum", {"x", "axes"}, {"y"}, {AttrInt("noop_with_empty_axes", 1)}),
             {F32In("x", kShape, kX), Init("axes", kI64, {0}, {})});
  EXPECT_EQ(noop.shape, kShape);
  EXPECT_EQ(noop.values, V(kX.begin(), kX.end()));
  // ... and with noop_with_empty_axes=0, a full reduction.
  Got full = RunOne(13, MakeNode("ReduceSum", {"x", "axes"}, {"y"}, {AttrInt("keepdims", 0)}),
                    {F32In("x", kShape, kX), Init("axes", kI64, {0}, {})});
  EXPECT_EQ(full.shape, Shape{});
  ExpectClose(full.values, {SumOf(kX)}, 1e-6, "sum empty axes");
  // Before opset 13 the axes are an attribute.
  Got old = RunOne(11, MakeNode("ReduceSum", {"x"}, {"y"}, {AttrInts("axes", {2})}),
                   {F32In("x", kShape, kX)});
  EXPECT_EQ(old.shape, (Shape{2, 3, 1}));
  EXPECT_EQ(old.values, (V{1.75, 2.75, 4.5, 2.75, 2.75, 4.125}));
}

TEST(ConvertReduce, AxesFromAGraphInputAreReadAtRunTime) {
  // ReduceSum-13's axes as a graph input: no value at import, the reduction
  // follows whatever axes the run gives.
  for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, {0, 2}, {-1, 0}, {2, 1, 0}}) {
    for (bool keep : {true, false}) {
      const std::string what = "axes=" + std::to_string(axes.size()) + " keep=" + std::to_string(keep);
      V av(axes.begin(), axes.end());
      Got y = RunOne(13, MakeNode("ReduceSum", {"x", "axes"}, {"y"}, {AttrInt("keepdims", keep ? 1 : 0)}),
                     {F32In("x", kShape, kX), In("axes", kI64, {static_cast<int64_t>(axes.size())}, av)});
      Expected want = ReduceRef(kX, kShape, axes, keep, SumOf);
      EXPECT_EQ(y.shape, want.shape) << what;
      ExpectClose(y.values, want.values, 2e-6, what);
    }
  }
  // Axes whose length is not static leave the output rank unknown: they still
  // need a value.
  onnx::ModelProto m = MakeModel(13, {MakeNode("ReduceSum", {"x", "axes"}, {"y"})},
                                 {MakeValueInfo("x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}}),
                                  MakeValueInfo("axes", onnx::TensorProto::INT64, {std::string("K")})},
                                 {MakeValueInfoNoShape("y", onnx::TensorProto::FLOAT)});
  absl::StatusOr<Module> r = ImportOnnxBytes(Serialize(m));
  ASSERT_FALSE(r.ok());
  ASSERT_TRUE(r.status().GetPayload(kNeedsConstantPayload).has_value()) << r.status();
  EXPECT_EQ(std::string(*r.status().GetPayload(kNeedsConstantPayload)), "axes");
}

TEST(ConvertReduce, AxesAttributeAfterOpset13IsAnError) {
  auto r = RunNode(13, MakeNode("ReduceSum", {"x"}, {"y"}, {AttrInts("axes", {1})}),
                   {F32In("x", kShape, kX)});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("the axes are input 1, not an attribute"));
}

TEST(ConvertReduce, LogSumExpDoesNotOverflow) {
  Got y = RunOne(
      13,
      MakeNode("ReduceLogSumExp", {"x"}, {"y"}, {AttrInts("axes", {1}), AttrInt("keepdims", 0)}),
      {F32In("x", {2, 2}, {1000, 1000, -1000, -1001})});
  EXPECT_EQ(y.shape, (Shape{2}));
  ExpectClose(y.values, {1000 + std::log(2.0), -1000 + std::log1p(std::exp(-1.0))}, 1e-6, "lse");
}

TEST(ConvertReduce, IntegerInputs) {
  const V x = {3, -4, 5, 12};
  Got sum = RunOne(13, MakeNode("ReduceSum", {"x"}, {"y"}, {AttrInt("keepdims", 0)}),
                   {In("x", kI32, {4}, x)});
  EXPECT_EQ(sum.dtype, kI32);
  EXPECT_EQ(sum.values, (V{16}));
  // L2 in float64, truncated back: sqrt(9 + 16 + 25 + 144) = 13.93 -> 13.
  Got l2 = RunOne(13, MakeNode("ReduceL2", {"x"}, {"y"}, {AttrInt("keepdims", 0)}),
                  {In("x", kI32, {4}, x)});
  EXPECT_EQ(l2.dtype, kI32);
  EXPECT_EQ(l2.values, (V{13}));
  Got mx = RunOne(13, MakeNode("ReduceMax", {"x"}, {"y"}), {In("x", kI64, {2, 2}, x)});
  EXPECT_EQ(mx.dtype, kI64);
  EXPECT_EQ(mx.shape, (Shape{1, 1}));
  EXPECT_EQ(mx.values, (V{12}));
}

TEST(ConvertReduce, ArgMaxArgMin) {
  // Ties: the first index unless select_last_index.
  const NamedTensor x = F32In("x", {2, 3}, {1, 5, 5, 7, 2, 7});
  auto run = [&](const char* op, std::vector<onnx::AttributeProto> attrs, int64_t opset = 13) {
    Got y = RunOne(opset, MakeNode(op, {"x"}, {"y"}, std::move(attrs)), {x});
    EXPECT_EQ(y.dtype, kI64) << op;
    return y;
  };
  Got a = run("ArgMax", {AttrInt("axis", 1)});
  EXPECT_EQ(a.shape, (Shape{2, 1}));
  EXPECT_EQ(a.values, (V{1, 0}));
  Got last = run("ArgMax", {AttrInt("axis", 1), AttrInt("select_last_index", 1)});
  EXPECT_EQ(last.values, (V{2, 2}));
  Got d = run("ArgMax", {});  // axis 0, keepdims 1
  EXPECT_EQ(d.shape, (Shape{1, 3}));
  EXPECT_EQ(d.values, (V{1, 0, 1}));
  Got m = run("ArgMin", {AttrInt("axis", -1), AttrInt("keepdims", 0)});
  EXPECT_EQ(m.shape, (Shape{2}));
  EXPECT_EQ(m.values, (V{0, 1}));
  Got old = run("ArgMin", {AttrInt("axis", 0), AttrInt("keepdims", 0)}, 11);
  EXPECT_EQ(old.values, (V{0, 1, 0}));
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
