// Structure of the tensor operators' computes: every op has one, output
// shapes/dtypes follow the checked type, tags and reduction axes are right,
// bad attributes are errors naming the attribute. (Numbers: numeric_test.cc.)
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "lowering/compute/op_compute.h"
#include "lowering/compute/tensor/tensor_compute.h"
#include "lowering/compute/tensor/test_util.h"
#include "lowering/te/te.h"

namespace kiln::lowering::tensor::testing {
namespace {

using ::testing::HasSubstr;

const char* const kOps[] = {
    "abs", "negative", "exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "erf", "floor", "ceil",
    "round", "sign", "sin", "cos", "logical_not", "copy", "zeros_like", "ones_like", "isnan",
    "clip", "cast", "nn.leaky_relu", "nn.gelu", "nn.relu", "add", "subtract", "multiply",
    "divide", "power", "maximum", "minimum", "mod", "floor_divide", "floor_mod", "equal",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "where", "nn.bias_add", "nn.prelu", "broadcast_to", "sum", "mean", "max",
    "min", "prod", "argmax", "argmin", "reshape", "transpose", "concatenate", "split",
    "strided_slice", "take", "expand_dims", "squeeze", "layout_transform", "dyn.reshape",
    "dyn.broadcast_to", "dyn.zeros", "dyn.ones", "dyn.full", "dyn.strided_slice",
    "dyn.expand_dims", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
};

std::vector<int64_t> StaticShape(const te::Tensor& t) {
  std::vector<int64_t> s;
  for (const tir::PrimExpr& d : t.shape()) s.push_back(tir::IsConstInt(d) ? d->int_value : -1);
  return s;
}

TEST(TensorComputeTest, EveryOperatorHasACompute) {
  RegisterTensorComputes();
  RegisterTensorComputes();  // idempotent
  for (const char* name : kOps) {
    const OpDef* def = OpRegistry::Global().Find(name);
    ASSERT_NE(def, nullptr) << name;
    EXPECT_NE(OpRegistry::Global().GetFacet<FTCompute>(def, kComputeFacet), nullptr) << name;
  }
}

TEST(TensorComputeTest, BroadcastAdd) {
  auto b = BuildOp("add", nullptr, {TT({2, 1, 3}), TT({4, 1})});
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->outputs.size(), 1u);
  const te::Tensor& t = b->outputs[0];
  EXPECT_EQ(StaticShape(t), (std::vector<int64_t>{2, 4, 3}));
  EXPECT_EQ(t.dtype(), DataType::Float(32));
  EXPECT_EQ(t.op()->tag, "broadcast");
  EXPECT_EQ(t.op()->name, "T_add");
  EXPECT_TRUE(te::ValidateCompute(b->outputs).ok());
}

TEST(TensorComputeTest, ComparisonIsBool) {
  auto b = BuildOp("less", nullptr, {TT({3}, DataType::Int(8)), TT({3}, DataType::Int(8))});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->outputs[0].dtype(), DataType::Bool());
}

TEST(TensorComputeTest, SymbolicBroadcast) {
  auto b = BuildOp("multiply", nullptr, {TT({Dim::Var("n"), 3}), TT({3})});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(StaticShape(b->outputs[0]), (std::vector<int64_t>{-1, 3}));
  EXPECT_TRUE(te::ValidateCompute(b->outputs).ok());
}

TEST(TensorComputeTest, UnaryTagsAndDtypes) {
  for (const char* name : {"exp", "abs", "nn.relu", "sigmoid", "copy"}) {
    auto b = BuildOp(name, nullptr, {TT({5}, DataType::Float(16))});
    ASSERT_TRUE(b.ok()) << name << ": " << b.status();
    EXPECT_EQ(b->outputs[0].op()->tag, "elemwise") << name;
    EXPECT_EQ(b->outputs[0].dtype(), DataType::Float(16)) << name;
  }
  auto isnan = BuildOp("isnan", nullptr, {TT({5})});
  ASSERT_TRUE(isnan.ok());
  EXPECT_EQ(isnan->outputs[0].dtype(), DataType::Bool());
  auto cast = BuildOp("cast", MakeAttrs<CastAttrs>([](CastAttrs& a) { a.dtype = DataType::Int(8); }),
                      {TT({5})});
  ASSERT_TRUE(cast.ok());
  EXPECT_EQ(cast->outputs[0].dtype(), DataType::Int(8));
}

TEST(TensorComputeTest, SumKeepdims) {
  Attrs a = MakeAttrs<ReduceAttrs>([](ReduceAttrs& r) {
    r.axis = std::vector<int64_t>{-1};
    r.keepdims = true;
  });
  auto b = BuildOp("sum", a, {TT({2, 3, 4})});
  ASSERT_TRUE(b.ok()) << b.status();
  const te::Tensor& t = b->outputs[0];
  EXPECT_EQ(StaticShape(t), (std::vector<int64_t>{2, 3, 1}));
  EXPECT_EQ(t.op()->tag, "comm_reduce");
  EXPECT_EQ(t.op()->reduce_axis.size(), 1u);
  EXPECT_TRUE(te::ValidateCompute(b->outputs).ok());
}

TEST(TensorComputeTest, ReduceExcludeAndAll) {
  Attrs ex = MakeAttrs<ReduceAttrs>([](ReduceAttrs& r) {
    r.axis = std::vector<int64_t>{1};
    r.exclude = true;
  });
  auto b = BuildOp("max", ex, {TT({2, 3, 4})});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(StaticShape(b->outputs[0]), (std::vector<int64_t>{3}));
  EXPECT_EQ(b->outputs[0].op()->reduce_axis.size(), 2u);
  auto all = BuildOp("prod", nullptr, {TT({2, 3})});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(StaticShape(all->outputs[0]), (std::vector<int64_t>{}));
  EXPECT_EQ(all->outputs[0].op()->reduce_axis.size(), 2u);
}

TEST(TensorComputeTest, MeanHasTwoStages) {
  auto b = BuildOp("mean", nullptr, {TT({4, 6})});
  ASSERT_TRUE(b.ok()) << b.status();
  const te::Tensor& t = b->outputs[0];
  EXPECT_TRUE(t.op()->reduce_axis.empty());
  std::vector<te::Tensor> in = t.op()->InputTensors();
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].op()->reduce_axis.size(), 2u);
  EXPECT_TRUE(te::ValidateCompute(b->outputs).ok());
}

TEST(TensorComputeTest, ArgmaxIsInt32) {
  Attrs a = MakeAttrs<ArgReduceAttrs>([](ArgReduceAttrs& r) {
    r.axis = std::vector<int64_t>{0, 2};
    r.select_last_index = true;
  });
  auto b = BuildOp("argmax", a, {TT({2, 3, 4})});
  ASSERT_TRUE(b.ok()) << b.status();
  const te::Tensor& t = b->outputs[0];
  EXPECT_EQ(t.dtype(), DataType::Int(32));
  EXPECT_EQ(StaticShape(t), (std::vector<int64_t>{3}));
  ASSERT_EQ(t.op()->body.size(), 1u);
  EXPECT_EQ(t.op()->body[0]->kind, tir::ExprKind::kReduce);
  EXPECT_EQ(t.op()->body[0]->reduce_kind, tir::ReduceKind::kArgMax);
  EXPECT_EQ(t.op()->body[0]->int_value, 1);
}

TEST(TensorComputeTest, SplitGivesOneTensorPerPart) {
  Attrs a = MakeAttrs<SplitAttrs>([](SplitAttrs& s) {
    s.indices = {1, 3};
    s.axis = 1;
  });
  auto b = BuildOp("split", a, {TT({2, 5})});
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->outputs.size(), 3u);
  EXPECT_EQ(StaticShape(b->outputs[0]), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(StaticShape(b->outputs[1]), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(StaticShape(b->outputs[2]), (std::vector<int64_t>{2, 2}));
  for (const te::Tensor& t : b->outputs) EXPECT_EQ(t.op()->tag, "injective");
}

TEST(TensorComputeTest, ConcatenateReadsEveryField) {
  Attrs a = MakeAttrs<ConcatenateAttrs>([](ConcatenateAttrs& c) { c.axis = -1; });
  auto b = BuildOp("concatenate", a, {MakeTupleType({TT({2, 3}), TT({2, 1}), TT({2, 4})})});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(StaticShape(b->outputs[0]), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(b->outputs[0].op()->InputTensors().size(), 3u);
}

TEST(TensorComputeTest, LayoutTransformShape) {
  Attrs a = MakeAttrs<LayoutTransformAttrs>([](LayoutTransformAttrs& l) {
    l.src_layout = "NCHW";
    l.dst_layout = "NCHW16c";
  });
  auto b = BuildOp("layout_transform", a, {TT({1, 32, 5, 5})});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(StaticShape(b->outputs[0]), (std::vector<int64_t>{1, 2, 5, 5, 16}));
}

TEST(TensorComputeTest, DynOpsUseTheOutputShape) {
  auto b = BuildOp("dyn.strided_slice", nullptr,
                   {TT({4, 5}), TT({2}, DataType::Int(64)), TT({2}, DataType::Int(64)),
                    TT({1}, DataType::Int(64))});
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(StaticShape(b->outputs[0]), (std::vector<int64_t>{-1, -1}));
  // begin and strides are read inside the compute.
  EXPECT_EQ(b->outputs[0].op()->InputTensors().size(), 3u);
  auto full = BuildOp("dyn.full", MakeAttrs<InitOpAttrs>([](InitOpAttrs& i) { i.dtype = DataType::Int(32); }),
                      {TT({}), TT({3}, DataType::Int(64))});
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(full->outputs[0].dtype(), DataType::Int(32));
  EXPECT_EQ(full->outputs[0].ndim(), 3);
}

TEST(TensorComputeTest, BadAttributesAreErrors) {
  auto gelu = BuildOp("nn.gelu", MakeAttrs<GeluAttrs>([](GeluAttrs& g) { g.approximate = "fast"; }),
                      {TT({3})});
  ASSERT_FALSE(gelu.ok());  // the type relation already rejects it
  // Run the compute directly with attributes the type relation never saw.
  const OpDef* take = OpRegistry::Global().Find("take");
  ASSERT_NE(take, nullptr);
  ShapeVars dims;
  std::vector<te::Tensor> in = {te::Placeholder({tir::IntImm(4)}, DataType::Float(32), "x"),
                                te::Placeholder({tir::IntImm(2)}, DataType::Int(32), "i")};
  Attrs bad_mode = MakeAttrs<TakeAttrs>([](TakeAttrs& t) { t.mode = "raise"; });
  auto r = ComputeOp(*take, bad_mode.get(), in, TT({2}), &dims);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("mode"));

  const OpDef* ss = OpRegistry::Global().Find("strided_slice");
  Attrs zero_stride = MakeAttrs<StridedSliceAttrs>([](StridedSliceAttrs& s) {
    s.begin = {0};
    s.end = {4};
    s.strides = std::vector<int64_t>{0};
  });
  r = ComputeOp(*ss, zero_stride.get(), {in[0]}, TT({4}), &dims);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("strides"));

  const OpDef* clip = OpRegistry::Global().Find("clip");
  Attrs bad_clip = MakeAttrs<ClipAttrs>([](ClipAttrs& c) {
    c.a_min = 2;
    c.a_max = 1;
  });
  r = ComputeOp(*clip, bad_clip.get(), {in[0]}, TT({4}), &dims);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("a_min"));

  const OpDef* lt = OpRegistry::Global().Find("layout_transform");
  Attrs bad_layout = MakeAttrs<LayoutTransformAttrs>([](LayoutTransformAttrs& l) {
    l.src_layout = "N";
    l.dst_layout = "N4n2";
  });
  r = ComputeOp(*lt, bad_layout.get(), {in[0]}, TT({4}), &dims);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("dst_layout"));

  const OpDef* add = OpRegistry::Global().Find("add");
  r = ComputeOp(*add, nullptr, {in[0], in[1]}, TT({4}), &dims);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("same dtype"));
}

}  // namespace
}  // namespace kiln::lowering::tensor::testing
