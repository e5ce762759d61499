// Tests of the IR core: data types, dims, tensors, attributes, checked
// factories, the operator registry, Module and traversals.
#include <cstdint>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/expr.h"
#include "ir/module.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/test_util.h"
#include "ir/traversal.h"

namespace kiln {
namespace {

using ::kiln::testing::CallOp;
using ::kiln::testing::F32;
using ::kiln::testing::Unwrap;
using ::testing::HasSubstr;

TEST(DataTypeTest, ParseAndPrintRoundTrip) {
  for (const char* name : {"float32", "float16", "float64", "bfloat16", "int8", "int16", "int32",
                           "int64", "uint8", "uint16", "bool", "float32x4"}) {
    auto dt = DataType::Parse(name);
    ASSERT_TRUE(dt.ok()) << name;
    EXPECT_EQ(dt->ToString(), name);
  }
  EXPECT_EQ(DataType::Parse("float16")->bytes(), 2);
  EXPECT_EQ(DataType::Parse("float32x4")->bytes(), 16);
  EXPECT_TRUE(DataType::Parse("bool")->is_bool());
}

TEST(DataTypeTest, RejectsUnknownNames) {
  for (const char* name : {"float", "float8", "int7", "bfloat32", "complex64", "", "int32x0"}) {
    auto dt = DataType::Parse(name);
    ASSERT_FALSE(dt.ok()) << name;
    EXPECT_THAT(dt.status().message(), HasSubstr("unknown data type"));
  }
}

TEST(DimTest, ArithmeticFoldsConstantsAndIdentities) {
  Dim n = Dim::Var("n");
  EXPECT_EQ((Dim(3) * Dim(4)).value(), 12);
  EXPECT_TRUE((Dim(3) * Dim(4)).is_static());
  EXPECT_EQ(n * Dim(1), n);
  EXPECT_EQ(n + Dim(0), n);
  EXPECT_EQ((n * Dim(0)).value(), 0);
  EXPECT_EQ(Dim::FloorDiv(n * Dim(4), Dim(4)), n);
  EXPECT_EQ(Dim::FloorDiv(n * Dim(8), Dim(4)), n * Dim(2));
  EXPECT_EQ((n * Dim(4)).ToString(), "(n * 4)");
  EXPECT_EQ(Dim::FloorDiv(Dim(-7), Dim(2)).value(), -4);  // floor, not truncation
  EXPECT_EQ(Dim::FloorMod(Dim(-7), Dim(2)).value(), 1);
  EXPECT_TRUE((Dim::Any() + Dim(1)).is_any());
  EXPECT_NE(Dim::Var("n"), Dim::Var("m"));
  EXPECT_EQ(Dim::Var("n"), Dim::Var("n"));  // symbolic dims are identified by name
  EXPECT_EQ(Dim::Var("n").Hash(), Dim::Var("n").Hash());
  EXPECT_EQ(ShapeNumElements({Dim(2), Dim(3), Dim(4)}).value(), 24);
}

// Issue 15: static dims are combined with checked arithmetic; a result that
// does not fit in int64 is `?`, never a wrapped (or, in C++, undefined) number.
TEST(DimTest, OverflowingArithmeticIsUnknownNotWrapped) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_TRUE((Dim(max) * Dim(5)).is_any());
  EXPECT_TRUE((Dim(max) + Dim(1)).is_any());
  EXPECT_TRUE((Dim(min) - Dim(1)).is_any());
  EXPECT_TRUE(Dim::FloorDiv(Dim(min), Dim(-1)).is_any());
  EXPECT_EQ(Dim::FloorMod(Dim(min), Dim(-1)).value(), 0);
  // ShapeNumElements of float32[2^62 + 1, 4] (ReshapeRel computes it).
  EXPECT_TRUE(ShapeNumElements({Dim((int64_t{1} << 62) + 1), Dim(4)}).is_any());
  EXPECT_EQ(ShapeNumElements({Dim(int64_t{1} << 31), Dim(int64_t{1} << 31)}).value(),
            int64_t{1} << 62);
  // (n * c1) * c2 folds c1 * c2 only when it fits.
  const Dim n = Dim::Var("n");
  EXPECT_EQ(((n * Dim(max)) * Dim(2)).ToString(), "((n * 9223372036854775807) * 2)");
  EXPECT_EQ(((n * Dim(3)) * Dim(2)).ToString(), "(n * 6)");
}

TEST(HostTensorTest, CreateChecksShapeAndSize) {
  auto t = HostTensor::Create(DataType::Float(32), {2, 3});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->num_elements(), 6);
  EXPECT_EQ((*t)->nbytes(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*t)->raw_data()) % HostTensor::kAlignment, 0u);
  EXPECT_FALSE(HostTensor::Create(DataType::Float(32), {2, -1}).ok());
  EXPECT_FALSE(HostTensor::Create(DataType::Float(32), {1 << 30, 1 << 30, 1 << 30}).ok());
  std::vector<float> v = {1, 2, 3};
  auto bad = HostTensor::FromVector(DataType::Float(32), {2, 2}, v);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("12 bytes"));
}

TEST(HostTensorTest, HalfConversionsRoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  }
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.5f)), 1.5f);
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(1e6f))));
}

TEST(AttrsTest, SetFieldConvertsAndChecksTypes) {
  Ref<AttrsNode> a = Conv2DAttrs().Clone();
  ASSERT_TRUE(SetAttrField(a.get(), "strides", AttrValue::List({AttrValue::Int(2), AttrValue::Int(2)})).ok());
  ASSERT_TRUE(SetAttrField(a.get(), "data_layout", AttrValue::String("NHWC")).ok());
  ASSERT_TRUE(SetAttrField(a.get(), "out_dtype", AttrValue::String("float16")).ok());
  const auto* c = Attrs(a).as<Conv2DAttrs>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->strides, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c->data_layout, "NHWC");
  EXPECT_EQ(c->out_dtype, DataType::Float(16));

  absl::Status s = SetAttrField(a.get(), "strides", AttrValue::String("x"));
  EXPECT_THAT(s.message(), HasSubstr("attribute 'strides' expects a list of integers, got a string"));
  s = SetAttrField(a.get(), "stride", AttrValue::Int(1));
  EXPECT_THAT(s.message(), HasSubstr("unknown attribute 'stride' for Conv2DAttrs"));
  s = SetAttrField(a.get(), "out_dtype", AttrValue::String("float7"));
  EXPECT_THAT(s.message(), HasSubstr("unknown data type 'float7'"));

  Conv2DAttrs defaults;
  auto fields = NonDefaultAttrFields(*a, &defaults);
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].first, "strides");
  EXPECT_EQ(fields[0].second.ToString(), "[2, 2]");
}

TEST(AttrsTest, EqualityAndHashFollowFields) {
  Ref<AttrsNode> a = SoftmaxAttrs().Clone();
  Ref<AttrsNode> b = SoftmaxAttrs().Clone();
  EXPECT_TRUE(AttrsEqual(a, b));
  EXPECT_EQ(AttrsHash(a), AttrsHash(b));
  ASSERT_TRUE(SetAttrField(b.get(), "axis", AttrValue::Int(1)).ok());
  EXPECT_FALSE(AttrsEqual(a, b));
  EXPECT_FALSE(AttrsEqual(a, LeakyReluAttrs().Clone()));
  EXPECT_EQ(AttrValue::Float(1e-5).ToString(), "1e-05");
  EXPECT_EQ(AttrValue::Float(2).ToString(), "2.0");
}

TEST(FactoryTest, CallChecksOperatorArityAndAttrs) {
  Op add = Unwrap(GetOp("add"));
  Var x = MakeVar("x", F32({2}));
  auto bad = MakeCall(add, {x});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("operator add takes 2 arguments, got 1"));

  Op conv = Unwrap(GetOp("nn.conv2d"));
  auto wrong_attrs = MakeCall(conv, {x, x}, SoftmaxAttrs().Clone());
  ASSERT_FALSE(wrong_attrs.ok());
  EXPECT_THAT(wrong_attrs.status().message(), HasSubstr("takes Conv2DAttrs, got SoftmaxAttrs"));

  auto with_null = MakeCall(add, {x, nullptr});
  ASSERT_FALSE(with_null.ok());
  EXPECT_THAT(with_null.status().message(), HasSubstr("call argument 1 is null"));

  // Default attributes are filled in.
  Call c = Unwrap(MakeCall(conv, {x, x}));
  ASSERT_NE(c->attrs.as<Conv2DAttrs>(), nullptr);
  EXPECT_EQ(c->attrs.as<Conv2DAttrs>()->groups, 1);
}

TEST(FactoryTest, RejectsIllFormedNodes) {
  Var x = MakeVar("x");
  auto dup = MakeFunction({x, x}, x);
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(dup.status().message(), HasSubstr("appears twice"));
  EXPECT_FALSE(MakeFunction({x}, nullptr).ok());
  EXPECT_FALSE(MakeLet(nullptr, x, x).ok());
  EXPECT_FALSE(MakeIf(x, x, nullptr).ok());
  auto neg = MakeTupleGetItem(x, -1);
  ASSERT_FALSE(neg.ok());
  EXPECT_THAT(neg.status().message(), HasSubstr("negative"));
  Tuple t = Unwrap(MakeTuple({x, x}));
  auto oob = MakeTupleGetItem(t, 2);
  ASSERT_FALSE(oob.ok());
  EXPECT_THAT(oob.status().message(), HasSubstr("out of range for a 2-tuple"));
  EXPECT_FALSE(MakeGlobalVar("has space").ok());
  EXPECT_FALSE(MakeGlobalVar("f.1").ok());  // would not print back as one name
  EXPECT_FALSE(MakeGlobalVar("1f").ok());
  EXPECT_FALSE(MakeGlobalVar("f.").ok());
  EXPECT_TRUE(MakeGlobalVar("nn.fused_conv_1").ok());
  EXPECT_FALSE(MakeConstant(nullptr).ok());
}

TEST(FactoryTest, AdtsAndPatternsAreChecked) {
  GlobalTypeVar list = MakeGlobalTypeVar("List");
  TypeVar a = MakeTypeVar("A");
  TypeCall list_a = Unwrap(MakeTypeCall(list, {a}));
  Constructor cons = Unwrap(MakeConstructor("Cons", {a, list_a}, list, 0));
  Constructor nil = Unwrap(MakeConstructor("Nil", {}, list, 1));
  EXPECT_TRUE(MakeTypeData(list, {a}, {cons, nil}).ok());
  auto bad_tags = MakeTypeData(list, {a}, {nil, cons});
  ASSERT_FALSE(bad_tags.ok());
  EXPECT_THAT(bad_tags.status().message(), HasSubstr("has tag 1; expected 0"));

  auto wrong_arity = MakePatternConstructor(cons, {MakePatternWildcard()});
  ASSERT_FALSE(wrong_arity.ok());
  EXPECT_THAT(wrong_arity.status().message(), HasSubstr("has 1 sub-patterns; the constructor takes 2"));

  Var h = MakeVar("h");
  Pattern ph = Unwrap(MakePatternVar(h));
  Pattern twice = Unwrap(MakePatternConstructor(cons, {ph, ph}));
  auto m = MakeMatch(h, {Clause{twice, h}});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("binds %h twice"));

  auto call = MakeCall(cons, {h});
  ASSERT_FALSE(call.ok());
  EXPECT_THAT(call.status().message(), HasSubstr("constructor Cons takes 2 arguments, got 1"));
}

TEST(OpRegistryTest, CoreOpsAreRegisteredWithPatterns) {
  OpRegistry& r = OpRegistry::Global();
  const OpDef* conv = r.Find("nn.conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->num_inputs, 2);
  EXPECT_EQ(conv->pattern, OpPattern::kOutEWiseFusable);
  EXPECT_EQ(r.Find("add")->pattern, OpPattern::kBroadcast);
  EXPECT_EQ(r.Find("exp")->pattern, OpPattern::kElemWise);
  EXPECT_EQ(r.Find("reshape")->pattern, OpPattern::kInjective);
  EXPECT_EQ(r.Find("sum")->pattern, OpPattern::kCommReduce);
  EXPECT_EQ(r.Find("nn.softmax")->pattern, OpPattern::kOpaque);
  EXPECT_GE(r.ListNames().size(), 70u);
  auto missing = GetOp("nn.conv3x");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("unknown operator 'nn.conv3x'"));
  OpDef again;
  again.name = "add";
  EXPECT_FALSE(r.Register(std::move(again)).ok());  // names are unique
}

TEST(OpRegistryTest, FacetsAttachByName) {
  OpRegistry& r = OpRegistry::Global();
  ASSERT_TRUE(r.SetFacet<int>("nn.relu", "core_test.answer", 42).ok());
  const OpDef* relu = r.Find("nn.relu");
  ASSERT_NE(r.GetFacet<int>(relu, "core_test.answer"), nullptr);
  EXPECT_EQ(*r.GetFacet<int>(relu, "core_test.answer"), 42);
  EXPECT_EQ(r.GetFacet<double>(relu, "core_test.answer"), nullptr);  // wrong type
  EXPECT_EQ(r.GetFacet<int>(r.Find("add"), "core_test.answer"), nullptr);
  EXPECT_FALSE(r.SetFacet<int>("no.such.op", "k", 1).ok());
}

TEST(ModuleTest, AddLookupAndErrors) {
  Module m;
  Var x = MakeVar("x", F32({2}));
  Function f = Unwrap(MakeFunction({x}, x));
  GlobalVar gv = Unwrap(m.AddFunction("id", f));
  EXPECT_EQ(Unwrap(m.Lookup("id")).get(), f.get());
  EXPECT_EQ(Unwrap(m.GetGlobalVar("id")).get(), gv.get());
  auto dup = m.AddFunction("id", f);
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(dup.status().message(), HasSubstr("@id is already defined"));
  EXPECT_TRUE(m.AddFunction("id", f, /*update=*/true).ok());
  EXPECT_THAT(m.Lookup("nope").status().message(), HasSubstr("no function @nope"));
  ASSERT_TRUE(m.DeclareFunction("later").ok());
  EXPECT_EQ(m.UndefinedFunctions(), std::vector<std::string>{"later"});
  EXPECT_FALSE(m.Lookup("later").ok());

  GlobalTypeVar opt = MakeGlobalTypeVar("Option");
  TypeVar a = MakeTypeVar("A");
  Constructor some = Unwrap(MakeConstructor("Some", {a}, opt, 0));
  Constructor none = Unwrap(MakeConstructor("None", {}, opt, 1));
  ASSERT_TRUE(m.AddTypeDef(Unwrap(MakeTypeData(opt, {a}, {some, none}))).ok());
  EXPECT_EQ(Unwrap(m.LookupConstructor("Some")).get(), some.get());
  EXPECT_FALSE(m.AddTypeDef(Unwrap(MakeTypeData(opt, {a}, {some, none}))).ok());
}

TEST(TraversalTest, PostOrderVisitsSharedNodesOnce) {
  Var x = MakeVar("x", F32({4}));
  Expr r = CallOp("nn.relu", {x});
  Expr sum = CallOp("add", {r, r});  // r is shared
  std::vector<Expr> order = PostOrder(sum);
  int relus = 0;
  for (const Expr& e : order)
    if (e.get() == r.get()) ++relus;
  EXPECT_EQ(relus, 1);
  EXPECT_EQ(order.back().get(), sum.get());
  // Children come before parents.
  auto pos = [&](const Expr& e) {
    for (size_t i = 0; i < order.size(); ++i)
      if (order[i].get() == e.get()) return static_cast<int>(i);
    return -1;
  };
  EXPECT_LT(pos(x), pos(r));
  EXPECT_LT(pos(r), pos(sum));
}

// Replaces relu by sigmoid.
class ReluToSigmoid : public ExprRewriter {
 protected:
  absl::StatusOr<Expr> PostVisit(const Expr& /*pre*/, Expr post) override {
    const auto* c = post.as<CallNode>();
    if (c && c->op.as<OpNode>() && c->op.as<OpNode>()->name() == "nn.relu")
      return CallOp("sigmoid", c->args);
    return post;
  }
};

TEST(TraversalTest, RewriterKeepsTheDagADag) {
  Var x = MakeVar("x", F32({4}));
  Expr r = CallOp("nn.relu", {x});
  Expr sum = CallOp("add", {r, r});
  ReluToSigmoid rw;
  Expr out = Unwrap(rw.Rewrite(sum));
  const auto* c = out.as<CallNode>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->args[0].get(), c->args[1].get());  // still one shared node
  EXPECT_EQ(c->args[0].as<CallNode>()->op.as<OpNode>()->name(), "sigmoid");
  // Untouched graphs come back as the same object.
  Expr y = CallOp("exp", {x});
  ReluToSigmoid rw2;
  EXPECT_EQ(Unwrap(rw2.Rewrite(y)).get(), y.get());
}

TEST(TraversalTest, SubstituteAndFreeVars) {
  Var x = MakeVar("x", F32({4}));
  Var y = MakeVar("y", F32({4}));
  Var z = MakeVar("z", F32({4}));
  Expr body = CallOp("add", {x, y});
  Function f = Unwrap(MakeFunction({x}, body));
  std::vector<Var> free = FreeVars(f);
  ASSERT_EQ(free.size(), 1u);
  EXPECT_EQ(free[0].get(), y.get());
  Expr g = Unwrap(Substitute(f, {{y.get(), Expr(z)}}));
  free = FreeVars(g);
  ASSERT_EQ(free.size(), 1u);
  EXPECT_EQ(free[0].get(), z.get());
}

TEST(ObjectTest, DestroyingAMillionNodeChainDoesNotRecurse) {
  Var x = MakeVar("x", F32({1}));
  Op neg = Unwrap(GetOp("negative"));
  Expr e = x;
  for (int i = 0; i < 1000000; ++i) e = Unwrap(MakeCall(neg, {e}));
  EXPECT_EQ(e->use_count(), 1);
  e = nullptr;  // would overflow the stack if destruction recursed
  EXPECT_EQ(x->use_count(), 1);
}

}  // namespace
}  // namespace kiln
