// The tensor converters (convert_tensor.cc): one-node models imported and run
// by the interpreter, against values worked out here by index arithmetic from
// ONNX's definitions, for each opset form (attributes that became inputs,
// changed defaults) and the values that must be known at import time.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "frontends/onnx/convert_test_util.h"
#include "frontends/onnx/importer.h"
#include "frontends/onnx/onnx_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "interpreter/value.h"

namespace kiln::onnx_frontend::testing {
namespace {

using ::testing::HasSubstr;
using V = std::vector<double>;
using S = std::vector<int64_t>;

constexpr DataType kF32 = DataType::Float(32);
constexpr DataType kI32 = DataType::Int(32);
constexpr DataType kI64 = DataType::Int(64);
constexpr DataType kBool = DataType::Bool();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

V Iota(int64_t n, double start = 0) {
  V v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + static_cast<double>(i));
  return v;
}

using Out = NodeOutput;

void ExpectOut(const Out& got, const S& shape, const V& want, double tol = 1e-6) {
  ASSERT_EQ(got.shape, shape);
  ASSERT_EQ(got.values.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.values[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
}

// An int64 initializer with exact values (Init goes through double).
NamedTensor I64Init(std::string name, S shape, const std::vector<int64_t>& values) {
  return NamedTensor{std::move(name), HostTensor::FromVector(kI64, std::move(shape), values).value(),
                     true};
}

// Row-major flat index of `c` in `shape`.
int64_t Flat(const S& shape, const S& c) {
  int64_t f = 0;
  for (size_t i = 0; i < shape.size(); ++i) f = f * shape[i] + c[i];
  return f;
}

// ---- constants ----------------------------------------------------------------

TEST(ConvertConstant, AttributeForms) {
  Out o = Exec(13, MakeNode("Constant", {}, {"y"}, {AttrFloats("value_floats", {1.5, -2})}), {});
  EXPECT_EQ(o.dtype, kF32);
  ExpectOut(o, {2}, {1.5, -2});
  o = Exec(13, MakeNode("Constant", {}, {"y"}, {AttrInt("value_int", 7)}), {});
  EXPECT_EQ(o.dtype, kI64);
  ExpectOut(o, {}, {7});
  o = Exec(12, MakeNode("Constant", {}, {"y"}, {AttrInts("value_ints", {3, 4, 5})}), {});
  ExpectOut(o, {3}, {3, 4, 5});
  o = Exec(9, MakeNode("Constant", {}, {"y"},
                       {AttrTensor("value", MakeTensor<int32_t>("v", onnx::TensorProto::INT32, {2, 1}, {8, 9}))}),
           {});
  EXPECT_EQ(o.dtype, kI32);
  ExpectOut(o, {2, 1}, {8, 9});
  onnx::AttributeProto sparse;
  sparse.set_name("sparse_value");
  sparse.set_type(onnx::AttributeProto::SPARSE_TENSOR);
  const absl::Status st = RunNode(13, MakeNode("Constant", {}, {"y"}, {sparse}), {}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
}

TEST(ConvertConstant, ShapeSizeAndFriends) {
  const NamedTensor x = F32In("x", {2, 3, 4, 5}, Iota(120));
  ExpectOut(Exec(13, MakeNode("Shape", {"x"}, {"y"}), {x}), {4}, {2, 3, 4, 5});
  ExpectOut(Exec(15, MakeNode("Shape", {"x"}, {"y"}, {AttrInt("start", 1), AttrInt("end", -1)}), {x}),
            {2}, {3, 4});
  ExpectOut(Exec(15, MakeNode("Shape", {"x"}, {"y"}, {AttrInt("start", -10), AttrInt("end", 10)}), {x}),
            {4}, {2, 3, 4, 5});
  ExpectOut(Exec(13, MakeNode("Size", {"x"}, {"y"}), {x}), {}, {120});
  Out o = Exec(9, MakeNode("ConstantOfShape", {"s"}, {"y"},
                           {AttrTensor("value", MakeInt64Tensor("v", {1}, {-3}))}),
               {Init("s", kI64, {2}, {2, 2})});
  EXPECT_EQ(o.dtype, kI64);
  ExpectOut(o, {2, 2}, {-3, -3, -3, -3});
  o = Exec(9, MakeNode("ConstantOfShape", {"s"}, {"y"}), {Init("s", kI64, {1}, {3})});
  EXPECT_EQ(o.dtype, kF32);
  ExpectOut(o, {3}, {0, 0, 0});
  ExpectOut(Exec(11, MakeNode("Range", {"a", "b", "d"}, {"y"}),
                 {Init("a", kI32, {}, {10}), Init("b", kI32, {}, {3}), Init("d", kI32, {}, {-3})}),
            {3}, {10, 7, 4});
  ExpectOut(Exec(11, MakeNode("Range", {"a", "b", "d"}, {"y"}),
                 {Init("a", kF32, {}, {1}), Init("b", kF32, {}, {2}), Init("d", kF32, {}, {0.25})}),
            {4}, {1, 1.25, 1.5, 1.75});
  o = Exec(9, MakeNode("EyeLike", {"x"}, {"y"}, {AttrInt("k", 1), AttrInt("dtype", onnx::TensorProto::INT32)}),
           {F32In("x", {3, 4}, Iota(12))});
  EXPECT_EQ(o.dtype, kI32);
  ExpectOut(o, {3, 4}, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
}

TEST(ConvertConstant, ShapeOfSymbolicDims) {
  // Shape of a symbolic dim is read at run time (shape_of); a range that
  // avoids it is a constant.
  onnx::ModelProto m = MakeModel(15, {MakeNode("Shape", {"x"}, {"y"})},
                                 {MakeValueInfo("x", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{3}})},
                                 {MakeValueInfoNoShape("y", onnx::TensorProto::INT64)});
  absl::StatusOr<Module> r = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(r.ok()) << r.status();
  for (int64_t n : {1, 5}) {
    absl::StatusOr<interp::Value> y = interp::RunFunction(
        *r, "main", {interp::Value::Tensor(Tensor(kF32, {n, 3}, V(static_cast<size_t>(3 * n))))});
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->tensor()->shape(), (S{2}));
    EXPECT_EQ(Values(*y->tensor()), (V{static_cast<double>(n), 3}));
  }
  *m.mutable_graph()->mutable_node(0)->add_attribute() = AttrInt("start", 1);
  absl::StatusOr<Module> tail = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(tail.ok()) << tail.status();
  absl::StatusOr<interp::Value> y = interp::RunFunction(
      *tail, "main", {interp::Value::Tensor(Tensor(kF32, {4, 3}, V(12)))});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Values(*y->tensor()), (V{3}));
}

// ---- reshaping ------------------------------------------------------------------

TEST(ConvertReshape, OpsetForms) {
  const NamedTensor x = F32In("x", {2, 3, 4}, Iota(24));
  // Reshape-1: shape attribute, 0 copies, -1 infers.
  ExpectOut(Exec(1, MakeNode("Reshape", {"x"}, {"y"}, {AttrInts("shape", {0, -1})}), {x}), {2, 12}, Iota(24));
  ExpectOut(Exec(13, MakeNode("Reshape", {"x", "s"}, {"y"}), {x, Init("s", kI64, {3}, {4, 0, -1})}),
            {4, 3, 2}, Iota(24));
  // allowzero=1: a 0 is a zero-size dim.
  ExpectOut(Exec(14, MakeNode("Reshape", {"x", "s"}, {"y"}, {AttrInt("allowzero", 1)}),
                 {F32In("x", {0, 3}, {}), Init("s", kI64, {2}, {3, 0})}),
            {3, 0}, {});
}

TEST(ConvertReshape, ShapeFromGraphInputIsReadAtRunTime) {
  onnx::ModelProto m =
      MakeModel(13, {MakeNode("Reshape", {"x", "s"}, {"y"})},
                {MakeValueInfo("x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}}),
                 MakeValueInfo("s", onnx::TensorProto::INT64, {int64_t{2}})},
                {MakeValueInfoNoShape("y", onnx::TensorProto::FLOAT)});
  absl::StatusOr<Module> r = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(r.ok()) << r.status();
  for (const V& s : {V{3, 2}, V{-1, 1}, V{0, -1}}) {
    absl::StatusOr<interp::Value> y = interp::RunFunction(
        *r, "main", {interp::Value::Tensor(Tensor(kF32, {2, 3}, Iota(6))),
                     interp::Value::Tensor(Tensor(kI64, {2}, s))});
    ASSERT_TRUE(y.ok()) << y.status();
    S want = s == V{3, 2} ? S{3, 2} : s == V{-1, 1} ? S{6, 1} : S{2, 3};
    EXPECT_EQ(y->tensor()->shape(), want);
    EXPECT_EQ(Values(*y->tensor()), Iota(6));
  }
  // Freezing it (ImportOptions::frozen_inputs) makes a static reshape.
  ImportOptions o;
  o.frozen_inputs["s"] = Tensor(kI64, {2}, {3, 2});
  absl::StatusOr<Module> frozen = ImportOnnxBytes(Serialize(m), o);
  ASSERT_TRUE(frozen.ok()) << frozen.status();
  absl::StatusOr<interp::Value> y =
      interp::RunFunction(*frozen, "main", {interp::Value::Tensor(Tensor(kF32, {2, 3}, Iota(6)))});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->tensor()->shape(), (S{3, 2}));
  // A shape whose length is not static would leave the output rank unknown:
  // it still needs its value.
  m.mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape()
      ->mutable_dim(0)->set_dim_param("K");
  absl::StatusOr<Module> unknown = ImportOnnxBytes(Serialize(m));
  ASSERT_FALSE(unknown.ok());
  auto payload = unknown.status().GetPayload(kNeedsConstantPayload);
  ASSERT_TRUE(payload.has_value()) << unknown.status();
  EXPECT_EQ(std::string(*payload), "s");
}

// Found by //tests/fuzz:onnx_import_fuzz_test (issue 15): a Reshape whose shape
// input folded to a huge tensor (a mutated ConstantOfShape) was copied element
// by element into a list of ints (minutes and 5 GB). An integer list read at
// import time is refused past 2^20 elements, with the count in the message.
TEST(ConvertReshape, HugeFoldedShapeIsRefused) {
  onnx::ModelProto m = MakeModel(
      13,
      {MakeNode("ConstantOfShape", {"n"}, {"s"},
                {AttrTensor("value", MakeInt64Tensor("v", {1}, {1}))}),
       MakeNode("Reshape", {"x", "s"}, {"y"})},
      {MakeValueInfo("x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}})},
      {MakeValueInfoNoShape("y", onnx::TensorProto::FLOAT)});
  *m.mutable_graph()->add_initializer() = MakeInt64Tensor("n", {1}, {(int64_t{1} << 20) + 1});
  absl::StatusOr<Module> r = ImportOnnxBytes(Serialize(m));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("has 1048577 elements"));
  EXPECT_THAT(r.status().message(), HasSubstr("at most 1048576"));
}

TEST(ConvertReshape, FlattenAxes) {
  const NamedTensor x = F32In("x", {2, 3, 4}, Iota(24));
  ExpectOut(Exec(13, MakeNode("Flatten", {"x"}, {"y"}), {x}), {2, 12}, Iota(24));
  ExpectOut(Exec(13, MakeNode("Flatten", {"x"}, {"y"}, {AttrInt("axis", 0)}), {x}), {1, 24}, Iota(24));
  ExpectOut(Exec(13, MakeNode("Flatten", {"x"}, {"y"}, {AttrInt("axis", -1)}), {x}), {6, 4}, Iota(24));
  ExpectOut(Exec(11, MakeNode("Flatten", {"x"}, {"y"}, {AttrInt("axis", 3)}), {x}), {24, 1}, Iota(24));
}

TEST(ConvertReshape, TransposeSqueezeUnsqueeze) {
  const NamedTensor x = F32In("x", {2, 3, 4}, Iota(24));
  // Default perm reverses the axes: y[k, j, i] = x[i, j, k].
  V want;
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t i = 0; i < 2; ++i) want.push_back(static_cast<double>(Flat({2, 3, 4}, {i, j, k})));
  ExpectOut(Exec(13, MakeNode("Transpose", {"x"}, {"y"}), {x}), {4, 3, 2}, want);
  const NamedTensor u = F32In("u", {1, 3, 1, 2}, Iota(6));
  ExpectOut(Exec(11, MakeNode("Squeeze", {"u"}, {"y"}, {AttrInts("axes", {-2})}), {u}), {1, 3, 2}, Iota(6));
  ExpectOut(Exec(13, MakeNode("Squeeze", {"u"}, {"y"}), {u}), {3, 2}, Iota(6));
  ExpectOut(Exec(13, MakeNode("Squeeze", {"u", "a"}, {"y"}), {u, Init("a", kI64, {2}, {2, 0})}), {3, 2},
            Iota(6));
  ExpectOut(Exec(11, MakeNode("Unsqueeze", {"x"}, {"y"}, {AttrInts("axes", {0, 4})}), {x}),
            {1, 2, 3, 4, 1}, Iota(24));
  // Unsorted, negative axes refer to the output rank (5).
  ExpectOut(Exec(13, MakeNode("Unsqueeze", {"x", "a"}, {"y"}), {x, Init("a", kI64, {2}, {-1, 1})}),
            {2, 1, 3, 4, 1}, Iota(24));
}

TEST(ConvertReshape, DepthToSpaceAndBack) {
  const int64_t b = 2, C = 8, H = 2, W = 3;
  const NamedTensor x = F32In("x", {1, C, H, W}, Iota(C * H * W));
  for (const char* mode : {"DCR", "CRD"}) {
    V want;
    const int64_t cc = C / (b * b);
    for (int64_t c = 0; c < cc; ++c)
      for (int64_t h = 0; h < H * b; ++h)
        for (int64_t w = 0; w < W * b; ++w) {
          const int64_t bh = h % b, bw = w % b;
          const int64_t src_c = std::string(mode) == "DCR" ? (bh * b + bw) * cc + c : c * b * b + bh * b + bw;
          want.push_back(static_cast<double>(Flat({1, C, H, W}, {0, src_c, h / b, w / b})));
        }
    ExpectOut(Exec(13, MakeNode("DepthToSpace", {"x"}, {"y"}, {AttrInt("blocksize", b), AttrString("mode", mode)}),
                   {x}),
              {1, cc, H * b, W * b}, want);
  }
  // SpaceToDepth inverts DepthToSpace in DCR mode: y[c'] with c' = (bh * b + bw) * C + c.
  const NamedTensor s = F32In("s", {1, 2, 4, 2}, Iota(16));
  V want(16);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t w = 0; w < 2; ++w) {
        const int64_t oc = ((h % 2) * 2 + (w % 2)) * 2 + c;
        want[static_cast<size_t>(Flat({1, 8, 2, 1}, {0, oc, h / 2, w / 2}))] =
            static_cast<double>(Flat({1, 2, 4, 2}, {0, c, h, w}));
      }
  ExpectOut(Exec(13, MakeNode("SpaceToDepth", {"s"}, {"y"}, {AttrInt("blocksize", 2)}), {s}), {1, 8, 2, 1},
            want);
}

TEST(ConvertReshape, ExpandAndTile) {
  // Expand [3, 1] by [2, 1, 4] -> [2, 3, 4].
  const NamedTensor x = F32In("x", {3, 1}, {1, 2, 3});
  V want;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) want.push_back(static_cast<double>(j + 1));
  ExpectOut(Exec(13, MakeNode("Expand", {"x", "s"}, {"y"}), {x, Init("s", kI64, {3}, {2, 1, 4})}), {2, 3, 4},
            want);
  // Tile [2, 3] by [2, 2]: y[i, j] = x[i % 2, j % 3].
  const NamedTensor t = F32In("t", {2, 3}, Iota(6));
  V tw;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j) tw.push_back(static_cast<double>((i % 2) * 3 + j % 3));
  ExpectOut(Exec(13, MakeNode("Tile", {"t", "r"}, {"y"}), {t, Init("r", kI64, {2}, {2, 2})}), {4, 6}, tw);
  // Tile-1: tiles 3 along axis 1.
  V tw1;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 9; ++j) tw1.push_back(static_cast<double>(i * 3 + j % 3));
  ExpectOut(Exec(1, MakeNode("Tile", {"t", "n", "a"}, {"y"}),
                 {t, Init("n", kI64, {}, {3}), Init("a", kI64, {}, {1})}),
            {2, 9}, tw1);
}

// ---- joining and cutting ----------------------------------------------------------

TEST(ConvertSlicing, ConcatAndSplit) {
  const NamedTensor a = F32In("a", {2, 1}, {1, 2}), b = F32In("b", {2, 2}, {3, 4, 5, 6});
  ExpectOut(Exec(13, MakeNode("Concat", {"a", "b"}, {"y"}, {AttrInt("axis", -1)}), {a, b}), {2, 3},
            {1, 3, 4, 2, 5, 6});
  const NamedTensor x = F32In("x", {5, 2}, Iota(10));
  // Split-2: split attribute, uneven parts.
  std::vector<Out> o = ExecAll(2, MakeNode("Split", {"x"}, {"p", "q"}, {AttrInts("split", {2, 3})}), {x});
  ASSERT_EQ(o.size(), 2u);
  ExpectOut(o[0], {2, 2}, Iota(4));
  ExpectOut(o[1], {3, 2}, Iota(6, 4));
  // Split-13: split input, along axis 1.
  o = ExecAll(13, MakeNode("Split", {"x", "s"}, {"p", "q"}, {AttrInt("axis", 1)}),
              {x, Init("s", kI64, {2}, {1, 1})});
  ASSERT_EQ(o.size(), 2u);
  ExpectOut(o[0], {5, 1}, {0, 2, 4, 6, 8});
  ExpectOut(o[1], {5, 1}, {1, 3, 5, 7, 9});
  // Equal parts without split; a zero-size part.
  o = ExecAll(13, MakeNode("Split", {"x", "s"}, {"p", "q", "r"}), {x, Init("s", kI64, {3}, {0, 5, 0})});
  ASSERT_EQ(o.size(), 3u);
  ExpectOut(o[0], {0, 2}, {});
  ExpectOut(o[1], {5, 2}, Iota(10));
  const NamedTensor e = F32In("e", {6}, Iota(6));
  o = ExecAll(11, MakeNode("Split", {"e"}, {"p", "q", "r"}), {e});
  ASSERT_EQ(o.size(), 3u);
  ExpectOut(o[2], {2}, {4, 5});
  // Split-18: num_outputs with a smaller last part (ceil(5 / 2) = 3).
  o = ExecAll(18, MakeNode("Split", {"x"}, {"p", "q"}, {AttrInt("num_outputs", 2)}), {x});
  ASSERT_EQ(o.size(), 2u);
  ExpectOut(o[0], {3, 2}, Iota(6));
  ExpectOut(o[1], {2, 2}, Iota(4, 6));
}

TEST(ConvertSlicing, SliceForms) {
  const NamedTensor x = F32In("x", {3, 4}, Iota(12));
  // Slice-1: attributes, negative start, clamped end.
  ExpectOut(Exec(1, MakeNode("Slice", {"x"}, {"y"},
                             {AttrInts("starts", {-2}), AttrInts("ends", {100}), AttrInts("axes", {1})}),
                 {x}),
            {3, 2}, {2, 3, 6, 7, 10, 11});
  // Slice-13: negative steps from the end to the start.
  ExpectOut(Exec(13, MakeNode("Slice", {"x", "s", "e", "a", "t"}, {"y"}),
                 {x, I64Init("s", {2}, {-1, kMax}), I64Init("e", {2}, {-kMax, 0}),
                  Init("a", kI64, {2}, {0, -1}), Init("t", kI64, {2}, {-2, -2})}),
            {2, 2}, {11, 9, 3, 1});
  // Without axes and steps: leading axes, step 1.
  ExpectOut(Exec(10, MakeNode("Slice", {"x", "s", "e"}, {"y"}),
                 {x, Init("s", kI64, {2}, {1, 1}), Init("e", kI64, {2}, {2, 3})}),
            {1, 2}, {5, 6});
}

TEST(ConvertSlicing, GatherFamily) {
  const NamedTensor x = F32In("x", {2, 3}, Iota(6));
  // Gather axis 1 with a negative index.
  ExpectOut(Exec(13, MakeNode("Gather", {"x", "i"}, {"y"}, {AttrInt("axis", 1)}),
                 {x, Init("i", kI64, {2}, {-1, 0})}),
            {2, 2}, {2, 0, 5, 3});
  ExpectOut(Exec(1, MakeNode("Gather", {"x", "i"}, {"y"}), {x, In("i", kI32, {}, {1})}), {3}, {3, 4, 5});
  // GatherElements axis 1: y[i][j] = x[i][idx[i][j]].
  ExpectOut(Exec(13, MakeNode("GatherElements", {"x", "i"}, {"y"}, {AttrInt("axis", 1)}),
                 {x, In("i", kI64, {2, 2}, {2, -3, 1, 1})}),
            {2, 2}, {2, 0, 4, 4});
  // GatherElements axis 0 with indices smaller than the data.
  ExpectOut(Exec(11, MakeNode("GatherElements", {"x", "i"}, {"y"}),
                 {x, In("i", kI32, {1, 2}, {1, 0})}),
            {1, 2}, {3, 1});
  // GatherND: full index tuples, and slices.
  const NamedTensor d = F32In("d", {2, 2, 3}, Iota(12));
  ExpectOut(Exec(13, MakeNode("GatherND", {"d", "i"}, {"y"}), {d, In("i", kI64, {2, 3}, {1, 0, 2, 0, -1, 0})}),
            {2}, {8, 3});
  ExpectOut(Exec(11, MakeNode("GatherND", {"d", "i"}, {"y"}), {d, In("i", kI64, {2, 1}, {1, 0})}),
            {2, 2, 3}, {6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5});
  // batch_dims=1: y[b] = d[b][idx[b][0]].
  ExpectOut(Exec(12, MakeNode("GatherND", {"d", "i"}, {"y"}, {AttrInt("batch_dims", 1)}),
                 {d, In("i", kI64, {2, 1}, {1, 0})}),
            {2, 3}, {3, 4, 5, 6, 7, 8});
}

// ---- padding ----------------------------------------------------------------------

TEST(ConvertPad, ModesAndOpsets) {
  const NamedTensor x = F32In("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  // Pad-2: attributes; constant value; a negative pad crops.
  ExpectOut(Exec(2, MakeNode("Pad", {"x"}, {"y"}, {AttrInts("pads", {1, -1, 0, 1}), AttrFloat("value", 9)}),
                 {x}),
            {3, 3}, {9, 9, 9, 2, 3, 9, 5, 6, 9});
  // Pad-1: `paddings`.
  ExpectOut(Exec(1, MakeNode("Pad", {"x"}, {"y"}, {AttrInts("paddings", {0, 1, 0, 0})}), {x}), {2, 4},
            {0, 1, 2, 3, 0, 4, 5, 6});
  // Pad-11: inputs; reflect and edge.
  ExpectOut(Exec(11, MakeNode("Pad", {"x", "p"}, {"y"}, {AttrString("mode", "reflect")}),
                 {x, Init("p", kI64, {4}, {0, 2, 0, 1})}),
            {2, 6}, {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5});
  ExpectOut(Exec(13, MakeNode("Pad", {"x", "p"}, {"y"}, {AttrString("mode", "edge")}),
                 {x, Init("p", kI64, {4}, {1, 0, 0, 1})}),
            {3, 4}, {1, 2, 3, 3, 1, 2, 3, 3, 4, 5, 6, 6});
  ExpectOut(Exec(11, MakeNode("Pad", {"x", "p", "v"}, {"y"}),
                 {x, Init("p", kI64, {4}, {0, 0, 1, 0}), Init("v", kF32, {}, {-7})}),
            {3, 3}, {1, 2, 3, 4, 5, 6, -7, -7, -7});
}

// Pad's definition, element by element, for a 2-D input: the source
// coordinate of output (i, j) per mode, or the fill value.
V NaivePad2D(const V& x, int64_t d0, int64_t d1, const S& pads, const std::string& mode, double fill) {
  const int64_t o0 = d0 + pads[0] + pads[2], o1 = d1 + pads[1] + pads[3];
  auto src = [&](int64_t o, int64_t before, int64_t d, bool* outside) {
    int64_t s = o - before;
    if (s >= 0 && s < d) return s;
    if (mode == "constant") *outside = true;
    if (mode == "edge") return s < 0 ? int64_t{0} : d - 1;
    while (s < 0 || s >= d) s = s < 0 ? -s : 2 * (d - 1) - s;  // reflect
    return s;
  };
  V out;
  for (int64_t i = 0; i < o0; ++i)
    for (int64_t j = 0; j < o1; ++j) {
      bool outside = false;
      const int64_t si = src(i, pads[0], d0, &outside), sj = src(j, pads[1], d1, &outside);
      out.push_back(outside ? fill : x[static_cast<size_t>(si * d1 + sj)]);
    }
  return out;
}

// Pads given as a graph input (known only when the model runs): the same
// results as the definition for every mode, with negative pads cropping,
// and for several pad values with one imported model.
TEST(ConvertPad, PadsFromAGraphInputAreReadAtRunTime) {
  const V xv = Iota(12, 1);
  const NamedTensor x = F32In("x", {3, 4}, xv);
  for (const std::string mode : {"constant", "edge", "reflect"}) {
    for (const S& pads : {S{1, 2, 0, 1}, S{0, -1, 2, 1}, S{2, 0, -1, 3}}) {
      std::vector<NamedTensor> in = {x, In("p", kI64, {4}, V(pads.begin(), pads.end()))};
      std::vector<std::string> names = {"x", "p"};
      if (mode == "constant") {
        in.push_back(In("v", kF32, {}, {-5}));
        names.push_back("v");
      }
      const Out y = Exec(11, MakeNode("Pad", names, {"y"}, {AttrString("mode", mode)}), in);
      ExpectOut(y, {3 + pads[0] + pads[2], 4 + pads[1] + pads[3]},
                NaivePad2D(xv, 3, 4, pads, mode, -5));
      if (::testing::Test::HasFailure()) {
        ADD_FAILURE() << "mode " << mode << " pads " << pads[0] << "," << pads[1] << "," << pads[2] << ","
                      << pads[3];
        return;
      }
    }
  }
  // The pads' length is still checked at import time.
  const absl::Status st =
      RunNode(11, MakeNode("Pad", {"x", "p"}, {"y"}), {x, In("p", kI64, {3}, {0, 0, 0})}).status();
  EXPECT_THAT(st.message(), HasSubstr("pads has 3 entries; expected 4"));
}

// Tile's repeats as a graph input.
TEST(ConvertTile, RepeatsFromAGraphInputAreReadAtRunTime) {
  const NamedTensor x = F32In("x", {2, 3}, Iota(6));
  for (const S& rep : {S{2, 1}, S{1, 3}, S{2, 2}, S{0, 1}}) {
    const Out y =
        Exec(13, MakeNode("Tile", {"x", "r"}, {"y"}), {x, In("r", kI64, {2}, V(rep.begin(), rep.end()))});
    V want;
    for (int64_t i = 0; i < 2 * rep[0]; ++i)
      for (int64_t j = 0; j < 3 * rep[1]; ++j) want.push_back(static_cast<double>((i % 2) * 3 + j % 3));
    ExpectOut(y, {2 * rep[0], 3 * rep[1]}, want);
  }
  const absl::Status st =
      RunNode(13, MakeNode("Tile", {"x", "r"}, {"y"}), {x, In("r", kI64, {3}, {1, 1, 1})}).status();
  EXPECT_THAT(st.message(), HasSubstr("repeats has 3 entries; the input has rank 2"));
}

// ---- masks and scans --------------------------------------------------------------------

TEST(ConvertMasks, OneHot) {
  // axis=1 of indices [2]: [2, depth]; negative indices count from the end;
  // out-of-range ones give all `off`.
  ExpectOut(Exec(11, MakeNode("OneHot", {"i", "d", "v"}, {"y"}, {AttrInt("axis", 1)}),
                 {In("i", kI64, {3}, {0, -1, 5}), Init("d", kI64, {}, {3}), Init("v", kF32, {2}, {-1, 4})}),
            {3, 3}, {4, -1, -1, -1, -1, 4, -1, -1, -1});
  // Float indices, axis 0: y[k, j] = on if idx[j] == k.
  Out o = Exec(9, MakeNode("OneHot", {"i", "d", "v"}, {"y"}, {AttrInt("axis", 0)}),
               {In("i", kF32, {2}, {1, 0}), Init("d", kF32, {1}, {2}), Init("v", kI32, {2}, {0, 1})});
  EXPECT_EQ(o.dtype, kI32);
  ExpectOut(o, {2, 2}, {0, 1, 1, 0});
}

TEST(ConvertMasks, Trilu) {
  const NamedTensor x = F32In("x", {2, 3, 4}, Iota(24, 1));
  for (int64_t upper : {0, 1})
    for (int64_t k : {-1, 0, 2}) {
      V want;
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 4; ++j) {
            const bool keep = upper ? j - i >= k : j - i <= k;
            want.push_back(keep ? static_cast<double>(Flat({2, 3, 4}, {b, i, j}) + 1) : 0.0);
          }
      ExpectOut(Exec(14, MakeNode("Trilu", {"x", "k"}, {"y"}, {AttrInt("upper", upper)}),
                     {x, Init("k", kI64, {}, {static_cast<double>(k)})}),
                {2, 3, 4}, want);
    }
  // No k: the main diagonal.
  ExpectOut(Exec(14, MakeNode("Trilu", {"x"}, {"y"}), {F32In("x", {2, 2}, {1, 2, 3, 4})}), {2, 2}, {1, 2, 0, 4});
}

TEST(ConvertMasks, CumSum) {
  const V x = {1, 2, 3, 4, 5, 10, 20, 30, 40, 50};
  for (int64_t exclusive : {0, 1})
    for (int64_t reverse : {0, 1}) {
      V want(10);
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t j = 0; j < 5; ++j) {
          double s = 0;
          for (int64_t k = 0; k < 5; ++k) {
            const bool in = reverse ? (exclusive ? k > j : k >= j) : (exclusive ? k < j : k <= j);
            if (in) s += x[static_cast<size_t>(r * 5 + k)];
          }
          want[static_cast<size_t>(r * 5 + j)] = s;
        }
      for (DataType dt : {kF32, kI32}) {
        const Out o = Exec(14, MakeNode("CumSum", {"x", "a"}, {"y"},
                                        {AttrInt("exclusive", exclusive), AttrInt("reverse", reverse)}),
                           {In("x", dt, {2, 5}, x), Init("a", kI64, {}, {-1})});
        EXPECT_EQ(o.dtype, dt);
        ExpectOut(o, {2, 5}, want);
      }
    }
}

// ---- Resize ---------------------------------------------------------------------------

TEST(ConvertResize, NearestLinearCubicByHand) {
  const NamedTensor x = F32In("x", {1, 1, 1, 2}, {1, 2});
  const NamedTensor none = Init("roi", kF32, {0}, {});
  // half_pixel linear x2: x_orig = (j + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (edges clamp).
  ExpectOut(Exec(13, MakeNode("Resize", {"x", "roi", "s"}, {"y"}, {AttrString("mode", "linear")}),
                 {x, none, Init("s", kF32, {4}, {1, 1, 1, 2})}),
            {1, 1, 1, 4}, {1, 1.25, 1.75, 2});
  // align_corners linear to 3 (sizes): x_orig = 0, 0.5, 1.
  ExpectOut(Exec(13, MakeNode("Resize", {"x", "roi", "", "z"}, {"y"},
                              {AttrString("mode", "linear"),
                               AttrString("coordinate_transformation_mode", "align_corners")}),
                 {x, none, Init("z", kI64, {4}, {1, 1, 1, 3})}),
            {1, 1, 1, 3}, {1, 1.5, 2});
  // Nearest asymmetric x3 with floor: y[j] = x[floor(j / 3)].
  ExpectOut(Exec(11, MakeNode("Resize", {"x", "roi", "s"}, {"y"},
                              {AttrString("coordinate_transformation_mode", "asymmetric"),
                               AttrString("nearest_mode", "floor")}),
                 {x, none, Init("s", kF32, {4}, {1, 1, 1, 3})}),
            {1, 1, 1, 6}, {1, 1, 1, 2, 2, 2});
  // Resize-10 and Upsample-9: asymmetric nearest (floor), also along H.
  const V rep = {1, 1, 2, 2, 1, 1, 2, 2};
  ExpectOut(Exec(10, MakeNode("Resize", {"x", "s"}, {"y"}), {x, Init("s", kF32, {4}, {1, 1, 2, 2})}),
            {1, 1, 2, 4}, rep);
  ExpectOut(Exec(9, MakeNode("Upsample", {"x", "s"}, {"y"}), {x, Init("s", kF32, {4}, {1, 1, 2, 2})}),
            {1, 1, 2, 4}, rep);
  ExpectOut(Exec(7, MakeNode("Upsample", {"x"}, {"y"}, {AttrFloats("scales", {1, 1, 2, 2})}), {x}),
            {1, 1, 2, 4}, rep);
  // Cubic (a = -0.5) at x_orig = 1.5 of [0, 1, 2, 3]: the Catmull-Rom midpoint 1.5;
  // at 0.5 with exclude_outside: taps -1 (excluded), 0, 1, 2 renormalized.
  const NamedTensor c = F32In("c", {4}, {0, 1, 4, 9});
  const double a = -0.5;
  const double w_far = ((a * 1.5 - 5 * a) * 1.5 + 8 * a) * 1.5 - 4 * a;  // |t| = 1.5
  const double w_near = ((a + 2) * 0.5 - (a + 3)) * 0.25 + 1;            // |t| = 0.5
  const double mid = w_far * 0 + w_near * 1 + w_near * 4 + w_far * 9;    // taps 0..3 around 1.5
  const double edge = (w_near * 0 + w_near * 1 + w_far * 4) / (2 * w_near + w_far);
  const Out o = Exec(13, MakeNode("Resize", {"c", "roi", "", "z"}, {"y"},
                                  {AttrString("mode", "cubic"), AttrFloat("cubic_coeff_a", -0.5f),
                                   AttrInt("exclude_outside", 1),
                                   AttrString("coordinate_transformation_mode", "asymmetric")}),
                     {c, none, Init("z", kI64, {1}, {8})});
  // asymmetric, scale 2: x_orig = j / 2; j = 1 -> 0.5, j = 3 -> 1.5.
  ASSERT_EQ(o.shape, (S{8}));
  EXPECT_NEAR(o.values[1], edge, 1e-5);
  EXPECT_NEAR(o.values[3], mid, 1e-5);
  EXPECT_NEAR(o.values[2], 1, 1e-5);  // an integral coordinate reads the pixel
}

// Upsampling the last axis by a multiple of 16 repeats its taps and weights
// with the factor's period: it imports without gathers (edge pad, slices,
// per-phase weights) and computes ONNX's reference values (written out here
// from the formula); so does nearest upsampling by any integer factor
// (no per-phase choice of slices). Smaller or fractional linear factors
// keep the gathers.
TEST(ConvertResize, PeriodicPlansImportWithoutGathers) {
  const std::vector<double> xv = {3, -1, 4, 1, -5};
  const NamedTensor x = F32In("x", {1, 1, 1, 5}, xv);
  const NamedTensor none = Init("roi", kF32, {0}, {});
  auto at = [&](int64_t i) { return xv[static_cast<size_t>(std::clamp<int64_t>(i, 0, 4))]; };
  // Linear, half_pixel, x16: x_orig = (j + 0.5) / 16 - 0.5.
  std::vector<double> linear;
  for (int j = 0; j < 80; ++j) {
    const double xo = (j + 0.5) / 16 - 0.5, f = std::floor(xo);
    linear.push_back(at(static_cast<int64_t>(f)) * (1 - (xo - f)) +
                     at(static_cast<int64_t>(f) + 1) * (xo - f));
  }
  const onnx::NodeProto lin =
      MakeNode("Resize", {"x", "roi", "s"}, {"y"}, {AttrString("mode", "linear")});
  const std::vector<NamedTensor> x16 = {x, none, Init("s", kF32, {4}, {1, 1, 1, 16})};
  ExpectOut(Exec(13, lin, x16), {1, 1, 1, 80}, linear);
  absl::StatusOr<std::string> text = ImportedText(13, lin, x16);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->find("take("), std::string::npos) << *text;
  EXPECT_NE(text->find("pad_mode=\"edge\""), std::string::npos) << *text;
  // Nearest (round_prefer_floor), half_pixel, x32: output j reads x[j / 32].
  std::vector<double> nearest;
  for (int j = 0; j < 160; ++j) nearest.push_back(xv[static_cast<size_t>(j / 32)]);
  const onnx::NodeProto nn = MakeNode("Resize", {"x", "roi", "s"}, {"y"});
  const std::vector<NamedTensor> x32 = {x, none, Init("s", kF32, {4}, {1, 1, 1, 32})};
  ExpectOut(Exec(13, nn, x32), {1, 1, 1, 160}, nearest);
  text = ImportedText(13, nn, x32);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->find("take("), std::string::npos) << *text;
  // Nearest x2 along H and W: one offset per tap, no gathers on any axis.
  const NamedTensor x2 = F32In("x", {1, 1, 2, 2}, {1, 2, 3, 4});
  const std::vector<NamedTensor> hw2 = {x2, none, Init("s", kF32, {4}, {1, 1, 2, 2})};
  ExpectOut(Exec(13, nn, hw2), {1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  text = ImportedText(13, nn, hw2);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->find("take("), std::string::npos) << *text;
  // Linear x4 and x2.5: gathers.
  for (float f : {4.0f, 2.5f}) {
    text = ImportedText(13, lin, {x, none, Init("s", kF32, {4}, {1, 1, 1, f})});
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_NE(text->find("take("), std::string::npos) << f << "\n" << *text;
  }
}

// ---- scatters and TopK -------------------------------------------------------------

TEST(ConvertScatter, ScatterElementsReductions) {
  const NamedTensor x = F32In("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  // none, axis 1: y[i][idx[i][j]] = u[i][j]; -1 is the last column.
  ExpectOut(Exec(13, MakeNode("ScatterElements", {"x", "i", "u"}, {"y"}, {AttrInt("axis", 1)}),
                 {x, In("i", kI64, {2, 2}, {-1, 0, 1, 1}), F32In("u", {2, 2}, {10, 20, 30, 40})}),
            {2, 3}, {20, 2, 10, 4, 40, 6});  // duplicate (1, 1): the last update wins
  // add with duplicate targets, axis 0.
  ExpectOut(Exec(16, MakeNode("ScatterElements", {"x", "i", "u"}, {"y"}, {AttrString("reduction", "add")}),
                 {x, In("i", kI64, {2, 1}, {1, 1}), F32In("u", {2, 1}, {10, 20})}),
            {2, 3}, {1, 2, 3, 34, 5, 6});
  ExpectOut(Exec(16, MakeNode("ScatterElements", {"x", "i", "u"}, {"y"}, {AttrString("reduction", "mul")}),
                 {x, In("i", kI64, {1, 2}, {0, 1}), F32In("u", {1, 2}, {3, -1})}),
            {2, 3}, {3, 2, 3, 4, -5, 6});
  // Scatter-9 is ScatterElements without reduction.
  ExpectOut(Exec(9, MakeNode("Scatter", {"x", "i", "u"}, {"y"}),
                 {x, In("i", kI64, {1, 3}, {1, 0, 1}), F32In("u", {1, 3}, {7, 8, 9})}),
            {2, 3}, {1, 8, 3, 7, 5, 9});
}

TEST(ConvertScatter, ScatterND) {
  const NamedTensor x = F32In("x", {3, 2}, Iota(6));
  // Rows (k = 1): row 2 and row 0 replaced.
  ExpectOut(Exec(13, MakeNode("ScatterND", {"x", "i", "u"}, {"y"}),
                 {x, In("i", kI64, {2, 1}, {2, 0}), F32In("u", {2, 2}, {10, 11, 12, 13})}),
            {3, 2}, {12, 13, 2, 3, 10, 11});
  // Elements (k = 2) with add and a duplicate; -1 counts from the end.
  ExpectOut(Exec(16, MakeNode("ScatterND", {"x", "i", "u"}, {"y"}, {AttrString("reduction", "add")}),
                 {x, In("i", kI64, {3, 2}, {0, 1, -1, 0, 0, 1}), F32In("u", {3}, {1, 2, 3})}),
            {3, 2}, {0, 5, 2, 3, 6, 5});
}

TEST(ConvertScatter, ReverseSequenceWithRuntimeLengths) {
  // batch_axis 0, time_axis 1: x [B=2, T=4, 1]; lengths are a graph input.
  const NamedTensor x = F32In("x", {2, 4, 1}, Iota(8));
  ExpectOut(Exec(10, MakeNode("ReverseSequence", {"x", "l"}, {"y"},
                              {AttrInt("batch_axis", 0), AttrInt("time_axis", 1)}),
                 {x, In("l", kI64, {2}, {3, 1})}),
            {2, 4, 1}, {2, 1, 0, 3, 4, 5, 6, 7});
  // Defaults (time_axis 0, batch_axis 1): x [T=3, B=2].
  ExpectOut(Exec(10, MakeNode("ReverseSequence", {"x", "l"}, {"y"}),
                 {F32In("x", {3, 2}, Iota(6)), In("l", kI32, {2}, {2, 3})}),
            {3, 2}, {2, 5, 0, 3, 4, 1});
}

TEST(ConvertTopK, LargestSmallestTies) {
  const NamedTensor x = F32In("x", {2, 4}, {3, 1, 3, 2, -1, 5, 0, 5});
  // Largest 3 along the last axis; equal values keep the lower index first.
  std::vector<Out> o = ExecAll(11, MakeNode("TopK", {"x", "k"}, {"v", "i"}), {x, Init("k", kI64, {1}, {3})});
  ASSERT_EQ(o.size(), 2u);
  ExpectOut(o[0], {2, 3}, {3, 3, 2, 5, 5, 0});
  EXPECT_EQ(o[1].dtype, kI64);
  ExpectOut(o[1], {2, 3}, {0, 2, 3, 1, 3, 2});
  // Smallest 2 along axis 0 (opset 11).
  o = ExecAll(11, MakeNode("TopK", {"x", "k"}, {"v", "i"}, {AttrInt("axis", 0), AttrInt("largest", 0)}),
              {x, Init("k", kI64, {1}, {2})});
  ASSERT_EQ(o.size(), 2u);
  ExpectOut(o[0], {2, 4}, {-1, 1, 0, 2, 3, 5, 3, 5});
  ExpectOut(o[1], {2, 4}, {1, 0, 1, 0, 0, 1, 0, 1});
  // TopK-1: k as an attribute.
  o = ExecAll(1, MakeNode("TopK", {"x"}, {"v", "i"}, {AttrInt("k", 1)}), {x});
  ASSERT_EQ(o.size(), 2u);
  ExpectOut(o[0], {2, 1}, {3, 5});
  ExpectOut(o[1], {2, 1}, {0, 1});
}

// K as a graph input: the output extent along the axis is K's value.
TEST(ConvertTopK, KFromAGraphInputIsReadAtRunTime) {
  const NamedTensor x = F32In("x", {2, 4}, {3, 1, 3, 2, -1, 5, 0, 5});
  // Both rows sorted descending (ties: lower index first), as indices.
  const std::vector<S> order = {{0, 2, 3, 1}, {1, 3, 2, 0}};
  const V xv = {3, 1, 3, 2, -1, 5, 0, 5};
  for (int64_t k : {0, 1, 3, 4}) {
    std::vector<Out> o = ExecAll(11, MakeNode("TopK", {"x", "k"}, {"v", "i"}),
                                 {x, In("k", kI64, {1}, {static_cast<double>(k)})});
    ASSERT_EQ(o.size(), 2u);
    V vals, inds;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t j = 0; j < k; ++j) {
        inds.push_back(static_cast<double>(order[r][j]));
        vals.push_back(xv[static_cast<size_t>(r * 4 + order[r][j])]);
      }
    ExpectOut(o[0], {2, k}, vals);
    ExpectOut(o[1], {2, k}, inds);
  }
  const absl::Status st =
      RunNode(11, MakeNode("TopK", {"x", "k"}, {"v", "i"}), {x, In("k", kI64, {2}, {1, 2})}).status();
  EXPECT_THAT(st.message(), HasSubstr("K must hold one element"));
}

// PyTorch's view(B, T, 4, 8) of a [B, T, 32] tensor exports a Reshape whose
// shape is Concat(Shape(x)[0], Shape(x)[1], 4, 8): the importer follows the
// shape computation to dims and makes a static reshape that keeps B and T
// (not a dyn.reshape typed [?, ?, ?, ?]); the attention MatMul of the heads,
// [B, 4, T, 8] x [B, 4, 8, T], is then a batch_matmul typed [B, 4, T, T].
// Values vs loops written here, at two (B, T).
TEST(ConvertReshape, SymbolicViewAndAttentionKeepTheirDims) {
  onnx::ModelProto m = MakeModel(
      13,
      {MakeNode("Shape", {"x"}, {"s"}), MakeNode("Gather", {"s", "i0"}, {"b"}, {AttrInt("axis", 0)}),
       MakeNode("Gather", {"s", "i1"}, {"t"}, {AttrInt("axis", 0)}),
       MakeNode("Unsqueeze", {"b", "ax"}, {"b1"}), MakeNode("Unsqueeze", {"t", "ax"}, {"t1"}),
       MakeNode("Concat", {"b1", "t1", "heads"}, {"shape"}, {AttrInt("axis", 0)}),
       MakeNode("Reshape", {"x", "shape"}, {"q"}),
       MakeNode("Transpose", {"q"}, {"qt"}, {AttrInts("perm", {0, 2, 1, 3})}),
       MakeNode("Transpose", {"q"}, {"kt"}, {AttrInts("perm", {0, 2, 3, 1})}),
       MakeNode("MatMul", {"qt", "kt"}, {"att"})},
      {MakeValueInfo("x", onnx::TensorProto::FLOAT, {std::string("B"), std::string("T"), int64_t{32}})},
      {MakeValueInfoNoShape("q", onnx::TensorProto::FLOAT),
       MakeValueInfoNoShape("att", onnx::TensorProto::FLOAT)},
      {MakeInt64Tensor("i0", {}, {0}), MakeInt64Tensor("i1", {}, {1}), MakeInt64Tensor("ax", {1}, {0}),
       MakeInt64Tensor("heads", {2}, {4, 8})});
  absl::StatusOr<Module> r = ImportOnnxBytes(Serialize(m));
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<Function> main = r->Lookup("main");
  ASSERT_TRUE(main.ok());
  EXPECT_EQ(TypeToString((*main)->body->checked_type()),
            "(Tensor[(B, T, 4, 8), float32], Tensor[(B, 4, T, T), float32])");
  for (auto [b, t] : {std::pair<int64_t, int64_t>{1, 3}, {2, 5}}) {
    V x(static_cast<size_t>(b * t * 32));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<double>((i * 37) % 11) / 11.0 - 0.5);
    absl::StatusOr<interp::Value> y =
        interp::RunFunction(*r, "main", {interp::Value::Tensor(Tensor(kF32, {b, t, 32}, x))});
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(y->fields()[0].tensor()->shape(), (S{b, t, 4, 8}));
    EXPECT_EQ(Values(*y->fields()[0].tensor()), x);
    const HostTensor& att = *y->fields()[1].tensor();
    ASSERT_EQ(att.shape(), (S{b, 4, t, t}));
    V got = Values(att);
    for (int64_t n = 0; n < b; ++n)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t i = 0; i < t; ++i)
          for (int64_t j = 0; j < t; ++j) {
            double want = 0;
            for (int64_t d = 0; d < 8; ++d)
              want += x[static_cast<size_t>((n * t + i) * 32 + h * 8 + d)] *
                      x[static_cast<size_t>((n * t + j) * 32 + h * 8 + d)];
            EXPECT_NEAR(got[static_cast<size_t>(((n * 4 + h) * t + i) * t + j)], want, 1e-4);
          }
  }
}

}  // namespace
}  // namespace kiln::onnx_frontend::testing
