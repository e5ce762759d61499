// Type inference over programs written in the text format: real models,
// symbolic shapes, polymorphism, recursion, closures, ADTs and match,
// references, and the messages of type errors.
#include "types/infer_type.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/traversal.h"
#include "types/model_zoo.h"

namespace kiln::types {
namespace {

using ::testing::HasSubstr;

// Parses and type-checks; returns the printed type of @main.
std::string MainType(absl::string_view text) {
  auto m = ParseModule(text);
  if (!m.ok()) return "parse error: " + std::string(m.status().message());
  auto typed = InferType(*m);
  if (!typed.ok()) return "type error: " + std::string(typed.status().message());
  auto main = typed->Lookup("main");
  if (!main.ok()) return "no main";
  return TypeToString((*main)->checked_type());
}

std::string TypeErrorOf(absl::string_view text) {
  auto m = ParseModule(text);
  if (!m.ok()) return "parse error: " + std::string(m.status().message());
  auto typed = InferType(*m);
  if (typed.ok()) return "no error";
  return std::string(typed.status().message());
}

TEST(InferTypeTest, ConvBlockShapes) {
  EXPECT_EQ(MainType(R"(
def @main(%x: Tensor[(1, 3, 224, 224), float32], %w: Tensor[(64, 3, 7, 7), float32],
          %g: Tensor[(64,), float32], %b: Tensor[(64,), float32],
          %m: Tensor[(64,), float32], %v: Tensor[(64,), float32]) {
  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3], channels=64, kernel_size=[7, 7]);
  %1 = nn.batch_norm(%0, %g, %b, %m, %v);
  %2 = nn.relu(%1.0);
  nn.max_pool2d(%2, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])
}
)"),
            "fn (Tensor[(1, 3, 224, 224), float32], Tensor[(64, 3, 7, 7), float32], "
            "Tensor[(64,), float32], Tensor[(64,), float32], Tensor[(64,), float32], "
            "Tensor[(64,), float32]) -> Tensor[(1, 64, 56, 56), float32]");
}

TEST(InferTypeTest, EveryNodeGetsAType) {
  auto m = ParseModule(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = (%x, exp(%x));
  %1 = %0.1;
  let %y = add(%1, 1f);
  multiply(%y, %x)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  auto typed = InferType(*m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  Function main = *typed->Lookup("main");
  int count = 0;
  for (const Expr& e : PostOrder(main)) {
    if (e->kind == ExprKind::kOp) continue;
    ASSERT_TRUE(e->checked_type()) << ExprKindName(e->kind);
    ++count;
  }
  EXPECT_GT(count, 8);
  EXPECT_EQ(TypeToString(main->body->checked_type()), "Tensor[(2, 3), float32]");
}

TEST(InferTypeTest, SymbolicBatchFlowsThroughTheModel) {
  EXPECT_EQ(MainType(R"(
def @main(%x: Tensor[(n, 3, 224, 224), float32], %w: Tensor[(64, 3, 7, 7), float32],
          %fc: Tensor[(10, 64), float32]) {
  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[3, 3]);
  %1 = nn.global_avg_pool2d(%0);
  %2 = reshape(%1, newshape=[0, -1]);
  nn.dense(%2, %fc)
}
)"),
            "fn (Tensor[(n, 3, 224, 224), float32], Tensor[(64, 3, 7, 7), float32], "
            "Tensor[(10, 64), float32]) -> Tensor[(n, 10), float32]");
  // An unknown dimension stays unknown.
  EXPECT_THAT(MainType("def @main(%x: Tensor[(?, 4), float32]) { nn.softmax(%x) }"),
              HasSubstr("-> Tensor[(?, 4), float32]"));
}

TEST(InferTypeTest, PolymorphicFunctionsAreInstantiatedPerCall) {
  EXPECT_EQ(MainType(R"(
def @id<T>(%x: T) -> T { %x }
def @main(%a: Tensor[(2,), float32], %b: Tensor[(), int64]) {
  (@id(%a), @id(%b), @id((%a, %b)))
}
)"),
            "fn (Tensor[(2,), float32], Tensor[(), int64]) -> (Tensor[(2,), float32], "
            "Tensor[(), int64], (Tensor[(2,), float32], Tensor[(), int64]))");
}

TEST(InferTypeTest, GlobalRecursion) {
  EXPECT_EQ(MainType(R"(
def @sum_to(%n: Tensor[(), int32]) -> Tensor[(), int32] {
  if (less(%n, 1)) { 0 } else { add(%n, @sum_to(subtract(%n, 1))) }
}
def @main(%k: Tensor[(), int32]) { @sum_to(%k) }
)"),
            "fn (Tensor[(), int32]) -> Tensor[(), int32]");
}

// An ADT without type parameters: `Seq` (as the constructors' fields and the
// annotations name it) and `Seq[]` (what a constructor returns) are one type.
TEST(InferTypeTest, AdtWithoutTypeParametersNamedOrCalled) {
  EXPECT_EQ(MainType(R"(
type Seq {
  SCons(Tensor[(?), float32], Seq),
  SNil,
}
def @main(%x: Tensor[(3), float32], %s: Seq) -> Seq {
  SCons(%x, SCons(%x, %s))
}
)"),
            "fn (Tensor[(3,), float32], Seq) -> Seq");
  EXPECT_EQ(MainType(R"(
type Seq {
  SCons(Tensor[(?), float32], Seq),
  SNil,
}
def @main(%x: Tensor[(2), float32]) -> Seq[] { SCons(%x, SNil()) }
)"),
            "fn (Tensor[(2,), float32]) -> Seq[]");
  // A different ADT is still a mismatch.
  EXPECT_THAT(TypeErrorOf(R"(
type Seq {
  SCons(Tensor[(?), float32], Seq),
  SNil,
}
type Other {
  O,
}
def @main(%x: Tensor[(2), float32]) -> Seq { SCons(%x, O()) }
)"),
              HasSubstr("type mismatch"));
}

TEST(InferTypeTest, MutualRecursionWithoutReturnAnnotations) {
  EXPECT_EQ(MainType(R"(
def @even(%n: Tensor[(), int32]) {
  if (equal(%n, 0)) { true } else { @odd(subtract(%n, 1)) }
}
def @odd(%n: Tensor[(), int32]) {
  if (equal(%n, 0)) { false } else { @even(subtract(%n, 1)) }
}
def @main(%k: Tensor[(), int32]) { @even(%k) }
)"),
            "fn (Tensor[(), int32]) -> Tensor[(), bool]");
}

TEST(InferTypeTest, LetBoundRecursiveClosureCapturingAVariable) {
  EXPECT_EQ(MainType(R"(
def @main(%x: Tensor[(4,), float32], %n: Tensor[(), int32]) {
  let %loop = fn (%i: Tensor[(), int32], %acc) {
    if (less(%i, %n)) { %loop(add(%i, 1), add(%acc, %x)) } else { %acc }
  };
  %loop(0, %x)
}
)"),
            "fn (Tensor[(4,), float32], Tensor[(), int32]) -> Tensor[(4,), float32]");
}

TEST(InferTypeTest, AdtsAndMatch) {
  EXPECT_EQ(MainType(R"(
type List[A] {
  Cons(A, List[A]),
  Nil,
}
def @length<A>(%l: List[A]) -> Tensor[(), int32] {
  match (%l) {
    Cons(_, %rest) => add(@length(%rest), 1),
    Nil => 0,
  }
}
def @head_or<A>(%l: List[A], %d: A) -> A {
  match (%l) {
    Cons(%h, Cons(_, _)) => %h,
    Cons(%h, Nil) => %h,
    Nil => %d,
  }
}
def @main(%x: Tensor[(3,), float32]) {
  %0 = Cons(%x, Cons(%x, Nil()));
  (@length(%0), @head_or(%0, %x))
}
)"),
            "fn (Tensor[(3,), float32]) -> (Tensor[(), int32], Tensor[(3,), float32])");
}

TEST(InferTypeTest, TuplePatternsAndReferences) {
  EXPECT_EQ(MainType(R"(
def @main(%p: (Tensor[(2,), float32], Tensor[(), int32])) {
  let %r = ref(%p.1);
  let %u = ref_write(%r, add(ref_read(%r), 1));
  match (%p) {
    (%a, %b) => (%a, add(%b, ref_read(%r))),
  }
}
)"),
            "fn ((Tensor[(2,), float32], Tensor[(), int32])) -> (Tensor[(2,), float32], "
            "Tensor[(), int32])");
}

TEST(InferTypeTest, ResNet50AndBertFromTheModelZoo) {
  auto resnet = ResNet50(Dim::Var("n"));
  ASSERT_TRUE(resnet.ok()) << resnet.status();
  auto typed = InferType(*resnet);
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(TypeToString((*typed->Lookup("main"))->body->checked_type()),
            "Tensor[(n, 1000), float32]");

  auto bert = BertLayer(Dim(1), 128);
  ASSERT_TRUE(bert.ok()) << bert.status();
  auto typed_bert = InferType(*bert);
  ASSERT_TRUE(typed_bert.ok()) << typed_bert.status();
  EXPECT_EQ(TypeToString((*typed_bert->Lookup("main"))->body->checked_type()),
            "Tensor[(1, 128, 768), float32]");
}

TEST(InferTypeTest, LongChainsDoNotRecurse) {
  for (bool lets : {false, true}) {
    auto m = AddChain(100000, lets);
    ASSERT_TRUE(m.ok());
    auto typed = InferType(*m);
    ASSERT_TRUE(typed.ok()) << typed.status();
    EXPECT_EQ(TypeToString((*typed->Lookup("main"))->checked_type()),
              "fn (Tensor[(1, 16), float32]) -> Tensor[(1, 16), float32]");
  }
}

// ---- Errors -------------------------------------------------------------------

TEST(InferTypeErrorTest, OperatorErrorNamesOpArgumentTypesAndExpression) {
  std::string msg = TypeErrorOf(R"(
def @main(%x: Tensor[(1, 3, 32, 32), float32], %w: Tensor[(16, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w);
  nn.relu(%0)
}
)");
  EXPECT_THAT(msg, HasSubstr("nn.conv2d"));
  EXPECT_THAT(msg, HasSubstr("weight"));
  EXPECT_THAT(msg, HasSubstr("Tensor[(16, 3, 3), float32]"));
  EXPECT_THAT(msg, HasSubstr("nn.conv2d(%x, %w)"));  // the offending expression as text
  EXPECT_THAT(msg, HasSubstr("at 3:"));               // and where it is
  EXPECT_THAT(msg, HasSubstr("in @main"));
}

TEST(InferTypeErrorTest, BroadcastMismatch) {
  std::string msg = TypeErrorOf(
      "def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(4, 3), float32]) { add(%a, %b) }");
  EXPECT_THAT(msg, HasSubstr("add"));
  EXPECT_THAT(msg, HasSubstr("Tensor[(2, 3), float32]"));
  EXPECT_THAT(msg, HasSubstr("Tensor[(4, 3), float32]"));
}

TEST(InferTypeErrorTest, CallingAFunctionWithTheWrongArgument) {
  std::string msg = TypeErrorOf(R"(
def @f(%x: Tensor[(3,), float32]) { %x }
def @main(%y: Tensor[(4,), float32]) { @f(%y) }
)");
  EXPECT_THAT(msg, HasSubstr("argument 0 of @f has type Tensor[(4,), float32]; expected "
                             "Tensor[(3,), float32]"));
  EXPECT_THAT(msg, HasSubstr("dimension 0: 3 vs 4"));
}

TEST(InferTypeErrorTest, IfConditionAndBranches) {
  EXPECT_THAT(TypeErrorOf("def @main(%c: Tensor[(), float32]) { if (%c) { 1f } else { 2f } }"),
              HasSubstr("if condition must be a scalar bool, got Tensor[(), float32]"));
  EXPECT_THAT(TypeErrorOf("def @main(%c: Tensor[(), bool]) { if (%c) { 1f } else { 2 } }"),
              HasSubstr("if branches have different types"));
}

TEST(InferTypeErrorTest, ReturnTypeAnnotationIsChecked) {
  EXPECT_THAT(TypeErrorOf("def @main(%x: Tensor[(3,), float32]) -> Tensor[(3,), int32] { %x }"),
              HasSubstr("declared return type is Tensor[(3,), int32]"));
}

TEST(InferTypeErrorTest, UnconstrainedVariableAsksForAnAnnotation) {
  EXPECT_THAT(TypeErrorOf("def @main(%x) { 1f }"), HasSubstr("add a type annotation"));
}

TEST(InferTypeErrorTest, TupleIndexOutOfRange) {
  EXPECT_THAT(TypeErrorOf("def @main(%x: Tensor[(3,), float32]) { %0 = (%x, %x); %0.2 }"),
              HasSubstr("tuple index 2 out of range"));
}

TEST(InferTypeErrorTest, WrongConstructorArgument) {
  std::string msg = TypeErrorOf(R"(
type Box[A] { MkBox(A, A), }
def @main(%x: Tensor[(3,), float32], %y: Tensor[(), int32]) { MkBox(%x, %y) }
)");
  EXPECT_THAT(msg, HasSubstr("MkBox"));
  EXPECT_THAT(msg, HasSubstr("type mismatch"));
}

TEST(InferTypeErrorTest, FailureLeavesTypesUnset) {
  auto m = ParseModule(
      "def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(4, 3), float32]) { exp(add(%a, %b)) }");
  ASSERT_TRUE(m.ok());
  ASSERT_FALSE(InferType(*m).ok());
  Function main = *m->Lookup("main");
  EXPECT_FALSE(main->checked_type());
  EXPECT_FALSE(main->body->checked_type());
}

// Issue 15: a shape whose element count does not fit in 64 bits used to wrap
// around in ReshapeRel (ShapeNumElements) and type-check; it is "too large",
// said before any relation multiplies its dims.
TEST(InferTypeErrorTest, ShapesTooLargeToAddressAreRefused) {
  std::string msg = TypeErrorOf(R"(
def @main(%x: Tensor[(4611686018427387905, 4), float32]) {
  reshape(%x, newshape=[-1])
}
)");
  EXPECT_THAT(msg, HasSubstr("argument 0 of reshape has type "
                             "Tensor[(4611686018427387905, 4), float32], which is too large"));
  EXPECT_THAT(msg, HasSubstr("2^48 bytes"));
  // With an explicit newshape too, and for a parameter no operator reads.
  EXPECT_THAT(TypeErrorOf(R"(
def @main(%x: Tensor[(4611686018427387905, 4), float32]) {
  reshape(%x, newshape=[2, 9223372036854775807])
}
)"),
              HasSubstr("too large"));
  EXPECT_THAT(TypeErrorOf("def @main(%x: Tensor[(65536, 65536, 65536), float32]) { %x }"),
              HasSubstr("too large"));
  // Symbolic dims count as 1, a zero dim makes the tensor empty, and 2^46
  // float32 elements (256 TiB) is still allowed.
  EXPECT_EQ(TypeErrorOf(R"(
def @main(%x: Tensor[(n, 65536, 65536), float32], %y: Tensor[(0, 4611686018427387905, 4), float32],
          %z: Tensor[(70368744177664,), float32]) {
  (%x, %y, %z)
}
)"),
            "no error");
}

}  // namespace
}  // namespace kiln::types
