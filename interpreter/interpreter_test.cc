// Programs in the text format (closures, global and let-bound recursion, ADTs
// and match, references, if), errors checked by message, 100,000-node chains,
// the value helpers, and that every core operator has a kernel.
#include "interpreter/interpreter.h"

#include <cmath>
#include <iostream>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "types/infer_type.h"

#include "gtest/gtest.h"
#include "interpreter/kernels.h"
#include "interpreter/test_util.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "types/model_zoo.h"

namespace kiln::interp::testing {
namespace {

using V = std::vector<double>;

Module Parse(const std::string& text) {
  absl::StatusOr<Module> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : Module();
}

Value Scalar(DataType dt, double v) { return Value::Tensor(MakeT(dt, {}, {v})); }
Value I(double v) { return Scalar(DataType::Int(32), v); }
Value F(double v) { return Scalar(DataType::Float(32), v); }

absl::StatusOr<Value> RunMain(const std::string& text, std::vector<Value> args,
                          const EvalOptions& opts = {}) {
  return RunFunction(Parse(text), "main", std::move(args), opts);
}

double One(const absl::StatusOr<Value>& v) {
  EXPECT_TRUE(v.ok()) << v.status();
  if (!v.ok() || !v->is_tensor()) return NAN;
  return v->tensor()->GetAsDouble(0);
}

void ExpectError(const absl::StatusOr<Value>& v, const std::string& needle) {
  ASSERT_FALSE(v.ok()) << "expected an error containing: " << needle;
  EXPECT_NE(v.status().message().find(needle), std::string::npos) << v.status();
}

TEST(Interpreter, EveryCoreOpHasAKernel) {
  RegisterCoreKernels();
  std::vector<std::string> names = OpRegistry::Global().ListNames();
  EXPECT_GT(names.size(), 70u);
  for (const std::string& name : names) {
    const OpDef* def = OpRegistry::Global().Find(name);
    ASSERT_NE(def, nullptr);
    EXPECT_NE(FindKernel(def), nullptr) << "no interpreter kernel for " << name;
  }
  RegisterCoreKernels();  // idempotent
}

TEST(Interpreter, EvalOpDirectly) {
  Op add = GetOp("add").value();
  absl::StatusOr<Value> v = EvalOp(add, nullptr, {Value::Tensor(F32({2}, {1, 2})), F(3)});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(Doubles(*v), (V{4, 5}));
  ExpectError(EvalOp(add, nullptr, {F(1)}), "add: takes 2 arguments, got 1");
}

TEST(Interpreter, GraphBindingsAndTuples) {
  const char* text = R"(
    def @main(%x: Tensor[(2,), float32]) {
      %0 = exp(%x);
      %1 = (%0, add(%0, %0));
      multiply(%1.1, %1.0)
    }
  )";
  absl::StatusOr<Value> v = RunMain(text, {Value::Tensor(F32({2}, {0, 1}))});
  ASSERT_TRUE(v.ok()) << v.status();
  V d = Doubles(*v);
  EXPECT_FLOAT_EQ(d[0], 2);
  EXPECT_FLOAT_EQ(d[1], static_cast<float>(2 * std::exp(1.0) * std::exp(1.0)));
}

TEST(Interpreter, FactorialViaGlobalFunction) {
  const char* text = R"(
    def @fact(%n: int32) -> int32 {
      if (less_equal(%n, 1)) { 1 } else { multiply(%n, @fact(subtract(%n, 1))) }
    }
    def @main(%n: int32) -> int32 { @fact(%n) }
  )";
  EXPECT_EQ(One(RunMain(text, {I(5)})), 120);
  EXPECT_EQ(One(RunMain(text, {I(10)})), 3628800);
}

TEST(Interpreter, FactorialViaLetBoundClosure) {
  const char* text = R"(
    def @main(%n: int32) -> int32 {
      let %f = fn (%i: int32) -> int32 {
        if (less_equal(%i, 1)) { 1 } else { multiply(%i, %f(subtract(%i, 1))) }
      };
      %f(%n)
    }
  )";
  EXPECT_EQ(One(RunMain(text, {I(6)})), 720);
}

TEST(Interpreter, ClosuresCaptureTheirEnvironment) {
  const char* text = R"(
    def @apply(%g: fn (float32) -> float32, %v: float32) -> float32 { %g(%v) }
    def @make_adder(%x: float32) -> fn (float32) -> float32 {
      fn (%y: float32) -> float32 { add(%x, %y) }
    }
    def @main(%x: float32) -> float32 {
      let %add5 = @make_adder(5f);
      let %addx = fn (%y: float32) -> float32 { multiply(%x, %y) };
      add(@apply(%add5, 1f), @apply(%addx, 2f))
    }
  )";
  EXPECT_EQ(One(RunMain(text, {F(10)})), 6 + 20);
}

TEST(Interpreter, AdtListLengthViaMatch) {
  const char* text = R"(
    type List[A] { Cons(A, List[A]), Nil }
    def @len<A>(%l: List[A]) -> int32 {
      match (%l) { Cons(_, %t) => add(@len(%t), 1), Nil => 0 }
    }
    def @sum(%l: List[float32]) -> float32 {
      match (%l) { Cons(%h, %t) => add(%h, @sum(%t)), Nil => 0f }
    }
    def @main() -> (int32, float32) {
      %0 = Cons(1f, Cons(2f, Cons(3f, Nil())));
      (@len(%0), @sum(%0))
    }
  )";
  absl::StatusOr<Value> v = RunMain(text, {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(Doubles(v->fields()[0]), (V{3}));
  EXPECT_EQ(Doubles(v->fields()[1]), (V{6}));
}

TEST(Interpreter, NestedPatternsAndTuples) {
  const char* text = R"(
    type List[A] { Cons(A, List[A]), Nil }
    def @second(%l: List[int32]) -> int32 {
      match (%l) { Cons(_, Cons(%x, _)) => %x, _ => -1 }
    }
    def @main() -> (int32, int32, int32) {
      let %p = (3, 4);
      %0 = match (%p) { (%a, %b) => subtract(%a, %b) };
      (@second(Cons(7, Cons(8, Nil()))), @second(Cons(7, Nil())), %0)
    }
  )";
  absl::StatusOr<Value> v = RunMain(text, {});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ValueToString(*v), "(Tensor[(), int32] [8], Tensor[(), int32] [-1], Tensor[(), int32] [-1])");
}

TEST(Interpreter, References) {
  const char* text = R"(
    def @main(%x: float32) -> float32 {
      let %r = ref(%x);
      let %u = ref_write(%r, add(ref_read(%r), 1f));
      let %w = ref_write(%r, multiply(ref_read(%r), 2f));
      ref_read(%r)
    }
  )";
  EXPECT_EQ(One(RunMain(text, {F(3)})), 8);
}

TEST(Interpreter, IfEvaluatesOnlyTheTakenBranch) {
  // The untaken branch divides by zero.
  const char* text = R"(
    def @main(%a: int32, %b: int32) -> int32 {
      if (equal(%b, 0)) { 0 } else { divide(%a, %b) }
    }
  )";
  EXPECT_EQ(One(RunMain(text, {I(7), I(0)})), 0);
  EXPECT_EQ(One(RunMain(text, {I(7), I(2)})), 3);
}

TEST(Interpreter, EvaluateExpression) {
  absl::StatusOr<Expr> e = ParseExpr("%0 = add(1f, 2f); multiply(%0, %0)");
  ASSERT_TRUE(e.ok()) << e.status();
  absl::StatusOr<Value> v = Evaluate(*e);
  EXPECT_EQ(One(v), 9);
  Var x = MakeVar("x", MakeScalarType(DataType::Float(32)));
  absl::StatusOr<Expr> e2 = ParseExpr("negative(%x)", {x});
  ASSERT_TRUE(e2.ok());
  EXPECT_EQ(One(Evaluate(*e2, nullptr, {{x, F(4)}})), -4);
}

TEST(Interpreter, DeepButBoundedRecursion) {
  const char* text = R"(
    def @count(%n: int32) -> int32 {
      if (equal(%n, 0)) { 0 } else { add(@count(subtract(%n, 1)), 1) }
    }
    def @main(%n: int32) -> int32 { @count(%n) }
  )";
  EXPECT_EQ(One(RunMain(text, {I(9000)})), 9000);
}

// ---- Errors ----------------------------------------------------------------

TEST(InterpreterErrors, IntegerDivisionByZero) {
  const char* text = R"(
    def @main(%a: int32, %b: int32) -> int32 { divide(%a, %b) }
  )";
  absl::StatusOr<Value> v = RunMain(text, {I(1), I(0)});
  ExpectError(v, "divide: integer division by zero");
  ExpectError(v, "in @main at 2:48");
}

TEST(InterpreterErrors, MatchFailureNamesTheConstructor) {
  const char* text = R"(
    type List[A] { Cons(A, List[A]), Nil }
    def @main() -> int32 {
      match? (Nil()) { Cons(%h, _) => %h }
    }
  )";
  ExpectError(RunMain(text, {}), "no clause matches the value (constructor Nil)");
}

TEST(InterpreterErrors, RecursionDepthLimit) {
  const char* text = R"(
    def @loop(%n: int32) -> int32 { @loop(add(%n, 1)) }
    def @main(%n: int32) -> int32 { @loop(%n) }
  )";
  ExpectError(RunMain(text, {I(0)}), "call depth limit (10000 nested calls) exceeded calling @loop");
  EvalOptions small;
  small.max_call_depth = 50;
  ExpectError(RunMain(text, {I(0)}, small), "call depth limit (50 nested calls)");
  const char* let_loop = R"(
    def @main(%n: int32) -> int32 {
      let %f = fn (%i: int32) -> int32 { %f(%i) };
      %f(%n)
    }
  )";
  ExpectError(RunMain(let_loop, {I(0)}), "exceeded calling %f");
}

TEST(InterpreterErrors, RunFunctionChecksArguments) {
  const char* text = R"(
    def @main(%x: Tensor[(2, 3), float32]) { nn.relu(%x) }
  )";
  ExpectError(RunMain(text, {}), "RunFunction @main: takes 1 arguments, got 0");
  ExpectError(RunMain(text, {Value::Tensor(F32({3, 2}, V(6, 1.0)))}),
              "argument 0 (%x) must be Tensor[(2, 3), float32]; got Tensor[(3, 2), float32]");
  ExpectError(RunMain(text, {Value::Tensor(I32({2, 3}, V(6, 1.0)))}), "got Tensor[(2, 3), int32]");
  ExpectError(RunMain(text, {Value::Tuple({})}), "got tuple");
  ExpectError(RunFunction(Parse(text), "nope", {}), "no function @nope");
}

TEST(InterpreterErrors, IllTypedProgramIsRejected) {
  const char* text = R"(
    def @main(%x: Tensor[(2,), float32], %y: Tensor[(3,), float32]) { add(%x, %y) }
  )";
  absl::StatusOr<Value> v =
      RunMain(text, {Value::Tensor(F32({2}, {1, 2})), Value::Tensor(F32({3}, {1, 2, 3}))});
  ExpectError(v, "broadcast");
}

// ---- Deep chains -------------------------------------------------------------

void RunChain(bool as_lets) {
  absl::StatusOr<Module> m = types::AddChain(100000, as_lets);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::Time t0 = absl::Now();
  absl::StatusOr<Module> typed = types::InferType(*m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  absl::Time t1 = absl::Now();
  EvalOptions opts;
  opts.type_check = false;
  absl::StatusOr<Value> v = RunFunction(*typed, "main", {Value::Tensor(F32({1, 16}, V(16, 0.0)))}, opts);
  std::cerr << "InferType " << absl::ToDoubleSeconds(t1 - t0) << " s, evaluation "
            << absl::ToDoubleSeconds(absl::Now() - t1) << " s\n";
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(Doubles(*v), V(16, 100000.0));
}

TEST(InterpreterDeep, DataflowChainOf100000) { RunChain(false); }
TEST(InterpreterDeep, LetChainOf100000) { RunChain(true); }

TEST(InterpreterDeep, LongListValue) {
  // A 5,000-element list built and consumed recursively; then compared and
  // released without deep recursion.
  const char* text = R"(
    type List[A] { Cons(A, List[A]), Nil }
    def @build(%n: int32, %acc: List[int32]) -> List[int32] {
      if (equal(%n, 0)) { %acc } else { @build(subtract(%n, 1), Cons(%n, %acc)) }
    }
    def @main(%n: int32) -> List[int32] { @build(%n, Nil()) }
  )";
  absl::StatusOr<Value> a = RunMain(text, {I(5000)});
  absl::StatusOr<Value> b = RunMain(text, {I(5000)});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(BitwiseEqual(*a, *b));
  EXPECT_TRUE(AllClose(*a, *b).ok());
}

// ---- Values ------------------------------------------------------------------

TEST(Values, AllCloseHandlesNanAndTolerance) {
  Value a = Value::Tensor(F32({3}, {1, NAN, INFINITY}));
  Value b = Value::Tensor(F32({3}, {1.000001, NAN, INFINITY}));
  EXPECT_TRUE(AllClose(a, b, 1e-5, 0).ok());
  EXPECT_FALSE(BitwiseEqual(a, b));
  absl::Status s = AllClose(a, Value::Tensor(F32({3}, {1, 0, INFINITY})));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("element 1"), std::string::npos) << s;
  EXPECT_FALSE(AllClose(Value::Tensor(I32({1}, {1})), Value::Tensor(I32({1}, {2}))).ok());
  EXPECT_FALSE(AllClose(a, Value::Tensor(F32({1, 3}, {1, NAN, INFINITY}))).ok());
  EXPECT_TRUE(BitwiseEqual(Value::Tuple({a, F(2)}), Value::Tuple({a, F(2)})));
  absl::Status t = AllClose(Value::Tuple({F(1), F(2)}), Value::Tuple({F(1), F(3)}));
  EXPECT_NE(t.message().find("values differ at .1"), std::string::npos) << t;
}

TEST(Values, Printing) {
  EXPECT_EQ(ValueToString(Value::Tensor(I32({2}, {1, 2}))), "Tensor[(2,), int32] [1, 2]");
  EXPECT_EQ(ValueToString(Value::Tuple({F(1.5)})), "(Tensor[(), float32] [1.5],)");
  EXPECT_EQ(ValueToString(Value::NewRef(Value::Tuple({}))), "ref(())");
}

}  // namespace
}  // namespace kiln::interp::testing
