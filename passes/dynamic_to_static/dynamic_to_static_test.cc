#include "passes/dynamic_to_static/dynamic_to_static.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/traversal.h"
#include "passes/infra/testing.h"
#include "types/model_zoo.h"

namespace kiln::passes {
namespace {

using testing::ExpectModule;
using testing::ParseOrFail;
using testing::RunPasses;
using testing::TryRunPasses;

// meta[Constant][0] = int64 [2, -1], [1] = int64 [2, 3], [2] = int64 [0, 1],
// [3] = int64 [1, 2].
constexpr const char* kMeta = R"(
#[metadata]
meta[Constant][0] = Tensor[(2,), int64] b64"AgAAAAAAAAD//////////w==";
meta[Constant][1] = Tensor[(2,), int64] b64"AgAAAAAAAAADAAAAAAAAAA==";
meta[Constant][2] = Tensor[(2,), int64] b64"AAAAAAAAAAABAAAAAAAAAA==";
meta[Constant][3] = Tensor[(2,), int64] b64"AQAAAAAAAAACAAAAAAAAAA==";
)";

std::string WithMeta(const std::string& text) { return text + kMeta; }

TEST(DynamicToStaticTest, ReshapeAndBroadcastTo) {
  Module m = RunPasses(WithMeta(R"(
def @main(%x: Tensor[(3, 2), float32], %y: Tensor[(3,), float32]) {
  %0 = dyn.reshape(%x, meta[Constant][0]);
  %1 = dyn.broadcast_to(%y, meta[Constant][1]);
  (%0, %1)
})"),
                       {DynamicToStatic()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(3, 2), float32], %y: Tensor[(3,), float32]) {
  %0 = reshape(%x, newshape=[2, -1]);
  %1 = broadcast_to(%y, shape=[2, 3]);
  (%0, %1)
})");
  // The static calls type-check with static extents again.
  absl::StatusOr<Module> typed = TryRunPasses(m, {InferType()});
  ASSERT_TRUE(typed.ok()) << typed.status();
  EXPECT_EQ(TypeToString((*typed->Lookup("main"))->body->checked_type()),
            "(Tensor[(2, 3), float32], Tensor[(2, 3), float32])");
}

TEST(DynamicToStaticTest, ZerosOnesFullBecomeBroadcastScalars) {
  Module m = RunPasses(WithMeta(R"(
def @main(%v: Tensor[(), int32], %w: Tensor[(), float32]) {
  %0 = dyn.zeros(meta[Constant][1]);
  %1 = dyn.ones(meta[Constant][1], dtype="int8");
  %2 = dyn.full(%v, meta[Constant][1]);
  %3 = dyn.full(%w, meta[Constant][1]);
  (%0, %1, %2, %3)
})"),
                       {DynamicToStatic()});
  ExpectModule(m, R"(
def @main(%v: Tensor[(), int32], %w: Tensor[(), float32]) {
  %0 = broadcast_to(0f, shape=[2, 3]);
  %1 = broadcast_to(1i8, shape=[2, 3]);
  %2 = cast(%v, dtype="float32");
  %3 = broadcast_to(%2, shape=[2, 3]);
  %4 = broadcast_to(%w, shape=[2, 3]);
  (%0, %1, %3, %4)
})");
}

TEST(DynamicToStaticTest, StridedSliceAndExpandDims) {
  Module m = RunPasses(WithMeta(R"(
def @main(%x: Tensor[(4, 5), float32]) {
  %0 = dyn.strided_slice(%x, meta[Constant][2], meta[Constant][1], meta[Constant][3],
                         slice_mode="size");
  dyn.expand_dims(%0, 1i64, num_newaxis=2)
})"),
                       {DynamicToStatic()});
  ExpectModule(m, R"(
def @main(%x: Tensor[(4, 5), float32]) {
  %0 = strided_slice(%x, begin=[0, 1], end=[2, 3], strides=[1, 2], slice_mode="size");
  expand_dims(%0, axis=1, num_newaxis=2)
})");
}

TEST(DynamicToStaticTest, NonConstantShapesAreLeftAlone) {
  const char* text = R"(
def @main(%x: Tensor[(3, 2), float32], %s: Tensor[(2,), int64], %a: Tensor[(), int64]) {
  %0 = dyn.reshape(%x, %s);
  %1 = dyn.zeros(%s);
  %2 = dyn.expand_dims(%x, %a);
  %3 = dyn.strided_slice(%x, %s, %s, %s);
  (%0, %1, %2, %3)
})";
  ExpectModule(RunPasses(text, {DynamicToStatic()}), text);
}

TEST(DynamicToStaticTest, InterpreterAgreesBeforeAndAfter) {
  const std::string text = WithMeta(R"(
def @main(%x: Tensor[(3, 2), float32]) {
  %0 = dyn.reshape(%x, meta[Constant][0]);
  %1 = dyn.ones(meta[Constant][1]);
  %2 = add(%0, %1);
  %3 = dyn.strided_slice(%2, meta[Constant][2], meta[Constant][1], meta[Constant][3]);
  %4 = dyn.full(2, meta[Constant][3], dtype="float32");
  %5 = multiply(%3, %4);
  dyn.expand_dims(%5, -1i64)
})");
  Module before = ParseOrFail(text);
  Module after = RunPasses(text, {DynamicToStatic()});
  for (const Expr& e : PostOrder(*after.Lookup("main"))) {
    const auto* c = e.as<CallNode>();
    const auto* op = c == nullptr ? nullptr : c->op.as<OpNode>();
    if (op != nullptr) {
      EXPECT_NE(op->name().rfind("dyn.", 0), 0u) << op->name();
    }
  }
  auto x = *HostTensor::FromVector<float>(DataType::Float(32), {3, 2}, {0.5f, -1, 2, 3, -4, 0});
  auto a = interp::RunFunction(before, "main", {interp::Value::Tensor(x)});
  auto b = interp::RunFunction(after, "main", {interp::Value::Tensor(x)});
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_TRUE(interp::AllClose(*a, *b, 0, 0).ok());
  // x reshaped to 2x3 plus 1 is [[1.5, 0, 3], [4, -3, 1]]; rows 0..1 and columns
  // 1 (3 is past the end) give [[0], [-3]]; times full([1, 2], 2) gives
  // [[0, 0], [-6, -6]]; then a trailing axis.
  ASSERT_TRUE(b->is_tensor());
  EXPECT_EQ(b->tensor()->shape(), (std::vector<int64_t>{2, 2, 1}));
  std::vector<double> got;
  for (int i = 0; i < 4; ++i) got.push_back(b->tensor()->GetAsDouble(i));
  EXPECT_EQ(got, (std::vector<double>{0, 0, -6, -6}));
}

TEST(DynamicToStaticTest, HundredThousandNodeChain) {
  absl::StatusOr<Module> m = types::AddChain(100000, /*as_lets=*/false);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(TryRunPasses(*m, {DynamicToStatic()}).ok());
  absl::StatusOr<Module> lets = types::AddChain(100000, /*as_lets=*/true);
  ASSERT_TRUE(lets.ok());
  ASSERT_TRUE(TryRunPasses(*lets, {DynamicToStatic()}).ok());
}

}  // namespace
}  // namespace kiln::passes
