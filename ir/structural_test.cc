// Structural equality and hashing: alpha-equivalence, DAG vs tree, every
// node kind, and the difference messages.
#include "ir/structural.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/op_attrs.h"
#include "ir/test_util.h"

namespace kiln {
namespace {

using ::kiln::testing::CallOp;
using ::kiln::testing::F32;
using ::kiln::testing::Unwrap;
using ::testing::HasSubstr;

Function AddOne(const char* name) {
  Var x = MakeVar(name, F32({3}));
  return Unwrap(MakeFunction({x}, CallOp("add", {x, MakeScalarConstant(DataType::Float(32), 1)})));
}

TEST(StructuralEqualTest, BoundVariablesAreEqualUpToRenaming) {
  Function f = AddOne("x");
  Function g = AddOne("y");
  EXPECT_TRUE(StructuralEqual(f, g));
  EXPECT_EQ(StructuralHash(f), StructuralHash(g));
}

TEST(StructuralEqualTest, ParameterOrderMatters) {
  Var a = MakeVar("a", F32({3}));
  Var b = MakeVar("b", F32({3}));
  Function f = Unwrap(MakeFunction({a, b}, CallOp("subtract", {a, b})));
  Var c = MakeVar("a", F32({3}));
  Var d = MakeVar("b", F32({3}));
  Function g = Unwrap(MakeFunction({c, d}, CallOp("subtract", {d, c})));
  auto diff = StructuralDifference(f, g);
  ASSERT_TRUE(diff.has_value());
  EXPECT_THAT(*diff, HasSubstr("different variables"));
  EXPECT_NE(StructuralHash(f), StructuralHash(g));
}

TEST(StructuralEqualTest, FreeVariablesNeedMapping) {
  Var x = MakeVar("x", F32({3}));
  Var y = MakeVar("x", F32({3}));
  Expr ex = CallOp("exp", {x});
  Expr ey = CallOp("exp", {y});
  EXPECT_FALSE(StructuralEqual(ex, ey));
  EXPECT_TRUE(StructuralEqual(ex, ey, /*map_free_vars=*/true));
  EXPECT_TRUE(StructuralEqual(ex, CallOp("exp", {x})));  // the same free var
}

TEST(StructuralEqualTest, AttributesConstantsAndAnnotationsAreCompared) {
  Var x = MakeVar("x", F32({1, 4}));
  Ref<AttrsNode> a1 = SoftmaxAttrs().Clone();
  Ref<AttrsNode> a0 = SoftmaxAttrs().Clone();
  ASSERT_TRUE(SetAttrField(a0.get(), "axis", AttrValue::Int(0)).ok());
  auto d = StructuralDifference(CallOp("nn.softmax", {x}, a1), CallOp("nn.softmax", {x}, a0));
  ASSERT_TRUE(d.has_value());
  EXPECT_THAT(*d, HasSubstr("different attributes"));

  Expr c1 = MakeScalarConstant(DataType::Float(32), 1);
  Expr c2 = MakeScalarConstant(DataType::Float(32), 2);
  EXPECT_FALSE(StructuralEqual(c1, c2));
  EXPECT_TRUE(StructuralEqual(c1, MakeScalarConstant(DataType::Float(32), 1)));
  EXPECT_NE(StructuralHash(c1), StructuralHash(c2));

  Var p = MakeVar("p", F32({3}));
  Var q = MakeVar("p", F32({4}));
  d = StructuralDifference(Unwrap(MakeFunction({p}, p)), Unwrap(MakeFunction({q}, q)));
  ASSERT_TRUE(d.has_value());
  EXPECT_THAT(*d, HasSubstr("type annotations"));

  EXPECT_FALSE(StructuralEqual(CallOp("exp", {x}), CallOp("log", {x})));
}

// A float32 tensor constant of `shape` filled with `value`.
Expr FilledConstant(std::vector<int64_t> shape, float value) {
  Ref<HostTensor> t = Unwrap(HostTensor::Create(DataType::Float(32), shape));
  for (int64_t i = 0; i < t->num_elements(); ++i) t->mutable_data<float>()[i] = value;
  return Unwrap(MakeConstant(t));
}

TEST(StructuralEqualModuloConstantsTest, TensorConstantsCompareByType) {
  Var x = MakeVar("x", F32({3}));
  Var y = MakeVar("y", F32({3}));
  Function f = Unwrap(MakeFunction({x}, CallOp("add", {x, FilledConstant({3}, 1)})));
  Function g = Unwrap(MakeFunction({y}, CallOp("add", {y, FilledConstant({3}, 2)})));
  EXPECT_FALSE(StructuralEqual(f, g));
  EXPECT_TRUE(StructuralEqualModuloConstants(f, g));
  EXPECT_EQ(StructuralHashModuloConstants(f), StructuralHashModuloConstants(g));

  // A different shape or dtype is a different kernel.
  Var z = MakeVar("z", F32({3}));
  Function wide = Unwrap(MakeFunction({z}, CallOp("add", {z, FilledConstant({1, 3}, 1)})));
  auto d = StructuralDifferenceModuloConstants(f, wide);
  ASSERT_TRUE(d.has_value());
  EXPECT_THAT(*d, HasSubstr("constants of different types"));
  EXPECT_NE(StructuralHashModuloConstants(f), StructuralHashModuloConstants(wide));
}

TEST(StructuralEqualModuloConstantsTest, ScalarsStillCompareByValue) {
  // A scalar becomes an immediate in the kernel's code.
  EXPECT_FALSE(StructuralEqualModuloConstants(AddOne("x"), [] {
    Var x = MakeVar("x", F32({3}));
    return Unwrap(MakeFunction({x}, CallOp("add", {x, MakeScalarConstant(DataType::Float(32), 2)})));
  }()));
  EXPECT_TRUE(StructuralEqualModuloConstants(AddOne("x"), AddOne("y")));
}

TEST(StructuralEqualModuloConstantsTest, ConstantsMustPairOneToOne) {
  // add(x * c, c) reads one constant twice; add(x * c1, c2) reads two. A
  // kernel lowered from one cannot run the other's constants.
  auto build = [](Expr c1, Expr c2) {
    Var x = MakeVar("x", F32({3}));
    return Unwrap(MakeFunction({x}, CallOp("add", {CallOp("multiply", {x, c1}), c2})));
  };
  Expr c = FilledConstant({3}, 1);
  Function once = build(c, c);
  Function twice = build(FilledConstant({3}, 1), FilledConstant({3}, 2));
  auto d = StructuralDifferenceModuloConstants(once, twice);
  ASSERT_TRUE(d.has_value());
  EXPECT_THAT(*d, HasSubstr("constants shared differently"));
  d = StructuralDifferenceModuloConstants(twice, once);
  ASSERT_TRUE(d.has_value());
  EXPECT_THAT(*d, HasSubstr("constants shared differently"));
  Expr e = FilledConstant({3}, 5);
  EXPECT_TRUE(StructuralEqualModuloConstants(once, build(e, e)));
}

TEST(StructuralEqualTest, DagEqualsItsTree) {
  Var x = MakeVar("x", F32({3}));
  Expr r = CallOp("nn.relu", {x});
  Function shared = Unwrap(MakeFunction({x}, CallOp("add", {r, r})));
  Var y = MakeVar("y", F32({3}));
  Function tree =
      Unwrap(MakeFunction({y}, CallOp("add", {CallOp("nn.relu", {y}), CallOp("nn.relu", {y})})));
  EXPECT_TRUE(StructuralEqual(shared, tree));
  EXPECT_EQ(StructuralHash(shared), StructuralHash(tree));
}

TEST(StructuralEqualTest, LetsClosuresAndIfs) {
  auto build = [](const char* n) {
    Var x = MakeVar(n, F32({}));
    Var t = MakeVar("t");
    Var inner = MakeVar("i", F32({}));
    Function closure = Unwrap(MakeFunction({inner}, CallOp("add", {inner, x})));
    Expr cond = CallOp("greater", {x, MakeScalarConstant(DataType::Float(32), 0)});
    Expr body = Unwrap(MakeIf(cond, Unwrap(MakeCall(t, {x})), x));
    Expr let = Unwrap(MakeLet(t, closure, body));
    return Unwrap(MakeFunction({x}, let));
  };
  EXPECT_TRUE(StructuralEqual(build("a"), build("b")));
  EXPECT_EQ(StructuralHash(build("a")), StructuralHash(build("b")));
}

TEST(StructuralEqualTest, MatchPatternsBindVariables) {
  GlobalTypeVar list = MakeGlobalTypeVar("List");
  TypeVar a = MakeTypeVar("A");
  Constructor cons = Unwrap(MakeConstructor("Cons", {a, Unwrap(MakeTypeCall(list, {a}))}, list, 0));
  Constructor nil = Unwrap(MakeConstructor("Nil", {}, list, 1));
  auto build = [&](bool swap) {
    Var l = MakeVar("l");
    Var h = MakeVar("h");
    Var t = MakeVar("t");
    Pattern p = Unwrap(MakePatternConstructor(
        cons, {Unwrap(MakePatternVar(h)), Unwrap(MakePatternVar(t))}));
    Pattern pn = Unwrap(MakePatternConstructor(nil, {}));
    Expr rhs = swap ? Expr(t) : Expr(h);
    Match m = Unwrap(MakeMatch(l, {Clause{p, rhs}, Clause{pn, l}}));
    return Unwrap(MakeFunction({l}, m));
  };
  EXPECT_TRUE(StructuralEqual(build(false), build(false)));
  EXPECT_EQ(StructuralHash(build(false)), StructuralHash(build(false)));
  EXPECT_FALSE(StructuralEqual(build(false), build(true)));
}

TEST(StructuralEqualTest, ModulesCompareByName) {
  Module a, b;
  ASSERT_TRUE(a.AddFunction("main", AddOne("x")).ok());
  ASSERT_TRUE(b.AddFunction("main", AddOne("y")).ok());
  EXPECT_TRUE(ModuleEqual(a, b));
  Module c;
  ASSERT_TRUE(c.AddFunction("other", AddOne("x")).ok());
  auto d = ModuleDifference(a, c);
  ASSERT_TRUE(d.has_value());
  EXPECT_THAT(*d, HasSubstr("@main is missing"));
}

TEST(StructuralEqualTest, DeepChainsCompareWithoutRecursion) {
  auto chain = [](int n) {
    Var x = MakeVar("x", F32({1}));
    Expr e = x;
    for (int i = 0; i < n; ++i) e = CallOp("negative", {e});
    return Unwrap(MakeFunction({x}, e));
  };
  Function a = chain(100000), b = chain(100000);
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  EXPECT_FALSE(StructuralEqual(a, chain(99999)));
}

}  // namespace
}  // namespace kiln
