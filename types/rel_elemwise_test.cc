// Tests of the elementwise relations, plus the registry-wide checks (every
// core op has a relation; the shared argument checks).
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "types/rel_test_util.h"

namespace kiln::types::testing {
namespace {

using ::testing::HasSubstr;

TEST(CoreRelations, EveryCoreOpHasARelation) {
  RegisterCoreTypeRelations();
  RegisterCoreTypeRelations();  // idempotent
  std::vector<std::string> names = OpRegistry::Global().ListNames();
  EXPECT_GE(names.size(), 70u);
  for (const std::string& name : names)
    EXPECT_NE(FindTypeRelation(OpRegistry::Global().Find(name)), nullptr) << name;
}

TEST(CoreRelations, ArityAndAttrsAreChecked) {
  EXPECT_THAT(Infer("add", {T("2")}), HasSubstr("add: expected 2 inputs, got 1"));
  EXPECT_THAT(Infer("nn.softmax", {T("2")}, Make<ReduceAttrs>([](auto&) {})),
              HasSubstr("expected attributes SoftmaxAttrs, got ReduceAttrs"));
  EXPECT_THAT(Infer("exp", {MakeTupleType({T("2")})}),
              HasSubstr("exp: argument 0 (data) has type (Tensor[(2,), float32],); expected a "
                        "tensor"));
}

TEST(Elemwise, Unary) {
  EXPECT_EQ(Infer("exp", {T("n, 3")}), "Tensor[(n, 3), float32]");
  EXPECT_EQ(Infer("nn.relu", {T("?, 3", "float16")}), "Tensor[(?, 3), float16]");
  EXPECT_EQ(Infer("zeros_like", {T("", "int8")}), "Tensor[(), int8]");
  EXPECT_EQ(Infer("isnan", {T("4")}), "Tensor[(4,), bool]");
  for (const char* op : {"tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"})
    EXPECT_EQ(Infer(op, {T("n, 2", "float64")}), "Tensor[(n, 2), float64]") << op;
  EXPECT_EQ(Infer("logical_not", {T("4", "bool")}), "Tensor[(4,), bool]");
  EXPECT_THAT(Infer("logical_not", {T("4")}),
              HasSubstr("logical_not: argument 0 (data) has type Tensor[(4,), float32]; expected "
                        "a bool tensor"));
  EXPECT_EQ(Infer("nn.leaky_relu", {T("1, 2")}, Make<LeakyReluAttrs>([](auto& a) { a.alpha = 0.2; })),
            "Tensor[(1, 2), float32]");
}

TEST(Elemwise, UnaryWaitsForItsInput) {
  RelResult r = RunRel("exp", {MakeIncompleteType()});
  EXPECT_TRUE(r.status.ok());
  EXPECT_FALSE(r.solved);
  EXPECT_EQ(Infer("add", {T("2"), MakeIncompleteType()}), "unsolved");
  EXPECT_EQ(Infer("add", {MakeTypeVar("T"), T("2")}), "unsolved");
}

TEST(Elemwise, ClipCastGelu) {
  EXPECT_EQ(Infer("clip", {T("3")}, Make<ClipAttrs>([](auto& a) { a.a_max = 6; })),
            "Tensor[(3,), float32]");
  EXPECT_THAT(Infer("clip", {T("3")}, Make<ClipAttrs>([](auto& a) { a.a_min = 1; })),
              HasSubstr("clip: a_min (1) must not exceed a_max (0)"));
  EXPECT_EQ(Infer("cast", {T("n, 2")}, Make<CastAttrs>([](auto& a) { a.dtype = DataType::Int(8); })),
            "Tensor[(n, 2), int8]");
  EXPECT_THAT(Infer("cast", {T("2")}, Make<CastAttrs>([](auto& a) { a.dtype = DataType::Void(); })),
              HasSubstr("cannot cast to void"));
  EXPECT_EQ(Infer("nn.gelu", {T("2")}, Make<GeluAttrs>([](auto& a) { a.approximate = "tanh"; })),
            "Tensor[(2,), float32]");
  EXPECT_THAT(Infer("nn.gelu", {T("2")}, Make<GeluAttrs>([](auto& a) { a.approximate = "x"; })),
              HasSubstr("approximate must be"));
}

TEST(Elemwise, Broadcast) {
  EXPECT_EQ(Infer("add", {T("2, 3"), T("3")}), "Tensor[(2, 3), float32]");
  EXPECT_EQ(Infer("multiply", {T("4, 1, 5"), T("3, 1")}), "Tensor[(4, 3, 5), float32]");
  EXPECT_EQ(Infer("add", {T(""), T("7")}), "Tensor[(7,), float32]");
  EXPECT_EQ(Infer("add", {T("n, 3"), T("1, 3")}), "Tensor[(n, 3), float32]");
  EXPECT_EQ(Infer("add", {T("n, 3"), T("n, 1")}), "Tensor[(n, 3), float32]");
  // `?` with d -> d; `?` with 1 -> ?; symbolic with static d -> d; n vs m -> ?;
  // `?` vs m -> ?.
  EXPECT_EQ(Infer("add", {T("?, 1"), T("5, ?")}), "Tensor[(5, ?), float32]");
  EXPECT_EQ(Infer("add", {T("n"), T("5")}), "Tensor[(5,), float32]");
  EXPECT_EQ(Infer("add", {T("n"), T("m")}), "Tensor[(?,), float32]");
  // Not m: m may be 1 at run time and ? larger (the output would be too small).
  EXPECT_EQ(Infer("add", {T("?"), T("m")}), "Tensor[(?,), float32]");
  EXPECT_EQ(Infer("add", {T("m"), T("?")}), "Tensor[(?,), float32]");
}

TEST(Elemwise, BroadcastErrors) {
  EXPECT_EQ(Infer("add", {T("2, 3"), T("4, 3")}),
            "error: add: cannot broadcast Tensor[(2, 3), float32] with Tensor[(4, 3), float32] "
            "(dimension 0: 2 vs 4)");
  EXPECT_THAT(Infer("subtract", {T("5, 2, 3"), T("4, 3")}), HasSubstr("(dimension 1: 2 vs 4)"));
  EXPECT_THAT(Infer("add", {T("2"), T("2", "int32")}),
              HasSubstr("add: operands must have the same dtype; got Tensor[(2,), float32] and "
                        "Tensor[(2,), int32]"));
}

TEST(Elemwise, ComparisonsAndLogical) {
  EXPECT_EQ(Infer("less", {T("n, 3"), T("3")}), "Tensor[(n, 3), bool]");
  EXPECT_EQ(Infer("equal", {T("2", "int32"), T("", "int32")}), "Tensor[(2,), bool]");
  EXPECT_THAT(Infer("greater", {T("2", "int32"), T("2")}), HasSubstr("same dtype"));
  EXPECT_EQ(Infer("logical_and", {T("2", "bool"), T("3, 1", "bool")}), "Tensor[(3, 2), bool]");
  EXPECT_THAT(Infer("logical_or", {T("2", "bool"), T("2")}),
              HasSubstr("logical_or: argument 1 (rhs) has type Tensor[(2,), float32]; expected a "
                        "bool tensor"));
}

TEST(Elemwise, Where) {
  EXPECT_EQ(Infer("where", {T("n, 1", "bool"), T("1, 4"), T("")}), "Tensor[(n, 4), float32]");
  EXPECT_THAT(Infer("where", {T("2"), T("2"), T("2")}),
              HasSubstr("argument 0 (condition) has type Tensor[(2,), float32]; expected a bool"));
  EXPECT_THAT(Infer("where", {T("2", "bool"), T("2"), T("2", "int32")}),
              HasSubstr("x and y must have the same dtype"));
  EXPECT_THAT(Infer("where", {T("3", "bool"), T("2"), T("2")}), HasSubstr("cannot broadcast"));
}

TEST(Elemwise, BiasAddAndPrelu) {
  EXPECT_EQ(Infer("nn.bias_add", {T("n, 16, 7, 7"), T("16")}), "Tensor[(n, 16, 7, 7), float32]");
  EXPECT_EQ(Infer("nn.bias_add", {T("2, 7, 7, 16"), T("16")},
                  Make<BiasAddAttrs>([](auto& a) { a.axis = -1; })),
            "Tensor[(2, 7, 7, 16), float32]");
  EXPECT_THAT(Infer("nn.bias_add", {T("2, 16"), T("8")}),
              HasSubstr("nn.bias_add: argument 1 (bias) has type Tensor[(8,), float32]; expected "
                        "a 1-D tensor of length 16 (data's axis 1)"));
  EXPECT_THAT(Infer("nn.bias_add", {T("2, 16"), T("16")},
                    Make<BiasAddAttrs>([](auto& a) { a.axis = 2; })),
              HasSubstr("axis 2 is out of range for a 2-D tensor (expected -2..1)"));
  // An unknown bias is assigned its type.
  RelResult r = RunRel("nn.bias_add", {T("2, 16"), MakeIncompleteType()});
  ASSERT_TRUE(r.status.ok());
  EXPECT_TRUE(r.solved);
  EXPECT_EQ(TypeToString(r.reporter.Get(r.args[1])), "Tensor[(16,), float32]");
  EXPECT_EQ(Infer("nn.prelu", {T("1, 8, 4, 4"), T("8")}), "Tensor[(1, 8, 4, 4), float32]");
  EXPECT_THAT(Infer("nn.prelu", {T("1, 8, 4, 4"), T("8, 1")}), HasSubstr("argument 1 (alpha)"));
}

TEST(Elemwise, BroadcastTo) {
  auto to = [](std::vector<int64_t> s) {
    return Make<BroadcastToAttrs>([s](auto& a) { a.shape = s; });
  };
  EXPECT_EQ(Infer("broadcast_to", {T("3, 1")}, to({2, 3, 4})), "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(Infer("broadcast_to", {T("?")}, to({5})), "Tensor[(5,), float32]");
  EXPECT_THAT(Infer("broadcast_to", {T("3")}, to({4})),
              HasSubstr("cannot broadcast Tensor[(3,), float32] to [4] (dimension 0: 3 vs 4)"));
  EXPECT_THAT(Infer("broadcast_to", {T("2, 3")}, to({3})), HasSubstr("more dimensions"));
  EXPECT_THAT(Infer("broadcast_to", {T("1")}, to({-1})), HasSubstr("must not be negative"));
}

}  // namespace
}  // namespace kiln::types::testing
