// FuseOps tests, TVM style: parse a Before module, type it, fuse, and compare
// with the Expected module structurally.
#include "passes/fuse_ops/fuse_ops.h"

#include <pthread.h>

#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "types/infer_type.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

Module Typed(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return Module();
  auto t = types::InferType(*m);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Module();
}

absl::StatusOr<Module> FuseModule(const Module& m, const FuseOptions& opts = {}) {
  Module out = m;
  for (const auto& [gv, fn] : m.functions()) {
    auto f = FuseFunction(fn, opts);
    if (!f.ok()) return f.status();
    auto st = out.Add(gv, *f, /*update=*/true);
    if (!st.ok()) return st;
  }
  return out;
}

void ExpectFused(const std::string& before, const std::string& expected,
                 const FuseOptions& opts = {}) {
  Module m = Typed(before);
  auto fused = FuseModule(m, opts);
  ASSERT_TRUE(fused.ok()) << fused.status();
  auto want = ParseModule(expected);
  ASSERT_TRUE(want.ok()) << want.status();
  auto diff = ModuleDifference(*fused, *want);
  EXPECT_FALSE(diff.has_value()) << *diff << "\ngot:\n" << PrintModule(*fused);
  // Still well typed.
  auto retyped = types::InferType(*fused);
  EXPECT_TRUE(retyped.ok()) << retyped.status();
}

int CountPrimitive(const Expr& e) {
  int n = 0;
  for (const Expr& x : PostOrder(e, /*enter_functions=*/false)) {
    if (const auto* f = x.as<FunctionNode>()) {
      const AttrValue* p = f->GetAttr("Primitive");
      if (p != nullptr && p->i == 1) ++n;
    }
  }
  return n;
}

void OnSmallStack(std::function<void()> f) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_t thread;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<std::function<void()>*>(arg))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, trampoline, &f), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

TEST(FuseOpsTest, ConvBiasRelu) {
  ExpectFused(R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
          %b: Tensor[(4,), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1]);
  %1 = nn.bias_add(%0, %b);
  %2 = add(%1, 1f);
  nn.relu(%2)
}
)",
              R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
          %b: Tensor[(4,), float32]) {
  %3 = fn (%p0: Tensor[(1, 3, 8, 8), float32], %p1: Tensor[(4, 3, 3, 3), float32],
           %p2: Tensor[(4,), float32], Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
    %0 = nn.conv2d(%p0, %p1, padding=[1, 1]);
    %1 = nn.bias_add(%0, %p2);
    %2 = add(%1, 1f);
    nn.relu(%2)
  };
  %3(%x, %w, %b)
}
)");
}

// Two convolutions feeding one add: the add and relu join the second conv's
// group; the first conv is an input of that group.
TEST(FuseOpsTest, Diamond) {
  ExpectFused(R"(
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 1, 1), float32],
          %w2: Tensor[(4, 4, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w1);
  %1 = nn.conv2d(%0, %w2);
  %2 = add(%1, %0);
  nn.relu(%2)
}
)",
              R"(
def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(4, 4, 1, 1), float32],
          %w2: Tensor[(4, 4, 1, 1), float32]) {
  %0 = fn (%p0: Tensor[(1, 4, 8, 8), float32], %p1: Tensor[(4, 4, 1, 1), float32],
           Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
    nn.conv2d(%p0, %p1)
  };
  %1 = %0(%x, %w1);
  %5 = fn (%p0: Tensor[(1, 4, 8, 8), float32], %p1: Tensor[(4, 4, 1, 1), float32],
           Primitive=1) -> Tensor[(1, 4, 8, 8), float32] {
    %2 = nn.conv2d(%p0, %p1);
    %3 = add(%2, %p0);
    nn.relu(%3)
  };
  %5(%1, %w2)
}
)");
}

// An elementwise op with two consumers joins them when they meet again in an
// elementwise op (the diamond is post-dominated by the final add).
TEST(FuseOpsTest, ElementwiseDiamond) {
  ExpectFused(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = exp(%x);
  %1 = nn.relu(%0);
  %2 = sqrt(%0);
  add(%1, %2)
}
)",
              R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %4 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] {
    %0 = exp(%p0);
    %1 = nn.relu(%0);
    %2 = sqrt(%0);
    add(%1, %2)
  };
  %4(%x)
}
)");
}

TEST(FuseOpsTest, ReductionWithElementwiseProducers) {
  ExpectFused(R"(
def @main(%x: Tensor[(2, 8), float32]) {
  %0 = exp(%x);
  %1 = multiply(%0, 2f);
  %2 = sum(%1, axis=[1]);
  sqrt(%2)
}
)",
              R"(
def @main(%x: Tensor[(2, 8), float32]) {
  %3 = fn (%p0: Tensor[(2, 8), float32], Primitive=1) -> Tensor[(2,), float32] {
    %0 = exp(%p0);
    %1 = multiply(%0, 2f);
    sum(%1, axis=[1])
  };
  %4 = %3(%x);
  %5 = fn (%p0: Tensor[(2,), float32], Primitive=1) -> Tensor[(2,), float32] {
    sqrt(%p0)
  };
  %5(%4)
}
)");
}

TEST(FuseOpsTest, SoftmaxStandsAlone) {
  ExpectFused(R"(
def @main(%x: Tensor[(2, 8), float32]) {
  %0 = exp(%x);
  %1 = nn.softmax(%0);
  nn.relu(%1)
}
)",
              R"(
def @main(%x: Tensor[(2, 8), float32]) {
  %0 = fn (%p0: Tensor[(2, 8), float32], Primitive=1) -> Tensor[(2, 8), float32] { exp(%p0) };
  %1 = fn (%p0: Tensor[(2, 8), float32], Primitive=1) -> Tensor[(2, 8), float32] {
    nn.softmax(%p0)
  };
  %2 = fn (%p0: Tensor[(2, 8), float32], Primitive=1) -> Tensor[(2, 8), float32] { nn.relu(%p0) };
  %2(%1(%0(%x)))
}
)");
}

TEST(FuseOpsTest, TupleIntoConcatenate) {
  ExpectFused(R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  %0 = exp(%x);
  %1 = nn.relu(%y);
  %2 = (%0, %1);
  concatenate(%2, axis=1)
}
)",
              R"(
def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) {
  %0 = fn (%p0: Tensor[(2, 3), float32], %p1: Tensor[(2, 3), float32], Primitive=1)
      -> Tensor[(2, 6), float32] {
    %1 = exp(%p0);
    %2 = nn.relu(%p1);
    %3 = (%1, %2);
    concatenate(%3, axis=1)
  };
  %0(%x, %y)
}
)");
}

TEST(FuseOpsTest, TupleAtOutputIsNotFused) {
  ExpectFused(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = exp(%x);
  %1 = nn.relu(%0);
  %2 = sqrt(%0);
  (%1, %2)
}
)",
              R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] { exp(%p0) };
  %1 = %0(%x);
  %2 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] { nn.relu(%p0) };
  %3 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] { sqrt(%p0) };
  (%2(%1), %3(%1))
}
)");
}

TEST(FuseOpsTest, MaxDepthSplitsChain) {
  FuseOptions opts;
  opts.max_depth = 2;
  ExpectFused(R"(
def @main(%x: Tensor[(4,), float32]) {
  %0 = exp(%x);
  %1 = nn.relu(%0);
  %2 = sqrt(%1);
  %3 = negative(%2);
  abs(%3)
}
)",
              R"(
def @main(%x: Tensor[(4,), float32]) {
  %0 = fn (%p0: Tensor[(4,), float32], Primitive=1) -> Tensor[(4,), float32] {
    nn.relu(exp(%p0))
  };
  %1 = fn (%p0: Tensor[(4,), float32], Primitive=1) -> Tensor[(4,), float32] {
    negative(sqrt(%p0))
  };
  %2 = fn (%p0: Tensor[(4,), float32], Primitive=1) -> Tensor[(4,), float32] { abs(%p0) };
  %2(%1(%0(%x)))
}
)",
              opts);
}

// Constants stay inside the group that uses them.
TEST(FuseOpsTest, ConstantsStayInside) {
  Module m = Typed(R"(
def @main(%x: Tensor[(2,), float32]) {
  %0 = add(%x, meta[Constant][0]);
  nn.relu(%0)
}
#[metadata]
meta[Constant][0] = Tensor[(2,), float32] b64"AACAPwAAAMA=";
)");
  auto fused = FuseModule(m);
  ASSERT_TRUE(fused.ok()) << fused.status();
  Function f = *fused->Lookup("main");
  const auto* call = f->body.as<CallNode>();
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->args.size(), 1u);
  const auto* fn = call->op.as<FunctionNode>();
  ASSERT_NE(fn, nullptr);
  const auto* relu = fn->body.as<CallNode>();
  ASSERT_NE(relu, nullptr);
  const auto* add = relu->args[0].as<CallNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->args[1]->kind, ExprKind::kConstant) << PrintModule(*fused);
}

// Lets and if are barriers: fusion happens inside each region.
TEST(FuseOpsTest, LetAndIfAreBarriers) {
  ExpectFused(R"(
def @main(%x: Tensor[(2,), float32], %c: bool) {
  let %y = nn.relu(exp(%x));
  if (%c) { sqrt(%y) } else { negative(abs(%y)) }
}
)",
              R"(
def @main(%x: Tensor[(2,), float32], %c: bool) {
  %0 = fn (%p0: Tensor[(2,), float32], Primitive=1) -> Tensor[(2,), float32] {
    nn.relu(exp(%p0))
  };
  let %y = %0(%x);
  if (%c) {
    %1 = fn (%p0: Tensor[(2,), float32], Primitive=1) -> Tensor[(2,), float32] { sqrt(%p0) };
    %1(%y)
  } else {
    %2 = fn (%p0: Tensor[(2,), float32], Primitive=1) -> Tensor[(2,), float32] {
      negative(abs(%p0))
    };
    %2(%y)
  }
}
)");
}

// Already fused: nothing changes (the pass is idempotent).
TEST(FuseOpsTest, LeavesFusedCodeAlone) {
  Module m = Typed(R"(
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) -> Tensor[(2, 3), float32] {
    nn.relu(exp(%p0))
  };
  %0(%x)
}
)");
  Function f = *m.Lookup("main");
  auto g = FuseFunction(f);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->get(), f.get());
}

TEST(FuseOpsTest, UntypedInputIsAnError) {
  auto m = ParseModule("def @main(%x: Tensor[(2,), float32]) { nn.relu(%x) }");
  ASSERT_TRUE(m.ok());
  auto g = FuseFunction(*m->Lookup("main"));
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("run InferType first"), std::string::npos)
      << g.status();
}

TEST(FuseOpsTest, HundredThousandChain) {
  OnSmallStack([] {
    auto m = types::AddChain(100000, /*as_lets=*/false);
    ASSERT_TRUE(m.ok()) << m.status();
    auto typed = types::InferType(*m);
    ASSERT_TRUE(typed.ok()) << typed.status();
    auto fused = FuseModule(*typed);
    ASSERT_TRUE(fused.ok()) << fused.status();
    Function f = *fused->Lookup("main");
    // 100000 / 256 groups, rounded up.
    EXPECT_EQ(CountPrimitive(f->body), 391);
    auto retyped = types::InferType(*fused);
    EXPECT_TRUE(retyped.ok()) << retyped.status();
  });
}

TEST(FuseOpsTest, HundredThousandLetChain) {
  OnSmallStack([] {
    auto m = types::AddChain(100000, /*as_lets=*/true);
    ASSERT_TRUE(m.ok()) << m.status();
    auto typed = types::InferType(*m);
    ASSERT_TRUE(typed.ok()) << typed.status();
    auto fused = FuseModule(*typed);
    ASSERT_TRUE(fused.ok()) << fused.status();
    EXPECT_EQ(CountPrimitive((*fused->Lookup("main"))->body), 100000);
  });
}

TEST(FuseOpsTest, ResNet50) {
  OnSmallStack([] {
    auto m = types::ResNet50(Dim(1));
    ASSERT_TRUE(m.ok()) << m.status();
    auto typed = types::InferType(*m);
    ASSERT_TRUE(typed.ok()) << typed.status();
    auto fused = FuseModule(*typed);
    ASSERT_TRUE(fused.ok()) << fused.status();
    Function f = *fused->Lookup("main");
    int n = CountPrimitive(f->body);
    // 53 conv2d and 53 batch_norm stand alone (batch_norm is opaque); each
    // relu / residual add takes its tuple projection; then the pools, the
    // dense + bias_add and softmax.
    EXPECT_GE(n, 160);
    EXPECT_LE(n, 175);
    auto retyped = types::InferType(*fused);
    EXPECT_TRUE(retyped.ok()) << retyped.status();
    // Every operator call now sits inside a primitive function.
    for (const Expr& e : PostOrder(f->body, /*enter_functions=*/false)) {
      if (const auto* c = e.as<CallNode>()) {
        EXPECT_NE(c->op->kind, ExprKind::kOp);
      }
    }
  });
}

TEST(FuseOpsTest, PassReadsMaxDepthConfig) {
  Module m = Typed(R"(
def @main(%x: Tensor[(4,), float32]) { abs(negative(sqrt(nn.relu(exp(%x))))) }
)");
  PassContext ctx;
  ctx.opt_level = 3;
  ctx.SetConfig("relay.FuseOps.max_depth", int64_t{2});
  PassPtr pass = FuseOps();
  EXPECT_EQ(pass->name(), "FuseOps");
  auto changed = pass->Run(&m, ctx);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountPrimitive((*m.Lookup("main"))->body), 3);
}

}  // namespace
}  // namespace kiln::passes
