// File: lowering/vm/batch_split_test.cc
//
// Which fused functions over a symbolic batch are lowered as the static N = 1
// kernel inside a loop over the batch (batch_split.h), and what that kernel
// looks like: [N, ...] buffers for the batched parameters and outputs, the
// shared ones (weights) as they were, the strategy's schedule inside. The
// results of such kernels are checked against the interpreter through the C
// API in tests/vm:vm_test (SymbolicBatchKernelsRunTheStaticSchedules).
#include "lowering/vm/batch_split.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/tir_printer.h"
#include "types/infer_type.h"

namespace kiln::lowering::vm {
namespace {

// @f of `text`, type-checked.
Function Fn(const std::string& text) {
  absl::StatusOr<Module> m = ParseModule("#[version = \"0.1\"]\n" + text, "test");
  EXPECT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Module> t = types::InferType(*m);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t->Lookup("f");
}

std::string Refusal(const std::string& text) {
  std::string n;
  return BatchSplitRefusal(Fn(text), &n);
}

TEST(BatchSplit, PerRowOperatorsQualify) {
  std::string n;
  EXPECT_EQ(BatchSplitRefusal(Fn(R"(
def @f(%x: Tensor[(B, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32],
       %r: Tensor[(B, 4, 8, 8), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1]);
  %1 = nn.relu(add(%0, %r));
  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);
  %3 = reshape(nn.global_avg_pool2d(%2), newshape=[-1, 4]);
  nn.softmax(add(%3, mean(%3, axis=[1], keepdims=true)))
}
)"),
                               &n),
            "");
  EXPECT_EQ(n, "B");
  EXPECT_EQ(Refusal(R"(
def @f(%x: Tensor[(N, 8), float32], %w: Tensor[(4, 8), float32]) {
  transpose(expand_dims(nn.dense(%x, %w), axis=1), axes=[0, 2, 1])
}
)"),
            "");
}

TEST(BatchSplit, WhatMixesRowsIsRefused) {
  // Reductions, softmax and concatenation along the batch, a batched
  // weight, broadcasting that moves N, squeeze without axes (N = 1 would
  // go), a second symbolic dim, `?`, no symbolic dim at all.
  EXPECT_NE(Refusal(R"(
def @f(%x: Tensor[(N, 4), float32]) { add(%x, sum(%x, axis=[0], keepdims=true)) }
)"),
            "");
  EXPECT_NE(Refusal(R"(
def @f(%x: Tensor[(N, 4), float32]) { nn.softmax(%x, axis=0) }
)"),
            "");
  EXPECT_NE(Refusal(R"(
def @f(%x: Tensor[(N, 4), float32]) { concatenate((%x, %x), axis=0) }
)"),
            "");
  EXPECT_NE(Refusal(R"(
def @f(%x: Tensor[(N, 4), float32], %w: Tensor[(N, 4), float32]) { nn.dense(%x, %w) }
)"),
            "");
  EXPECT_NE(Refusal(R"(
def @f(%x: Tensor[(N,), float32], %y: Tensor[(4, N), float32]) { add(%x, %y) }
)"),
            "");
  EXPECT_NE(Refusal(R"(
def @f(%x: Tensor[(N, 1, 4), float32]) { squeeze(%x) }
)"),
            "");
  EXPECT_NE(Refusal(R"(
def @f(%x: Tensor[(N, M), float32]) { nn.relu(%x) }
)"),
            "");
  EXPECT_NE(Refusal(R"(
def @f(%x: Tensor[(?, 4), float32]) { nn.relu(%x) }
)"),
            "");
  EXPECT_NE(Refusal(R"(
def @f(%x: Tensor[(2, 4), float32]) { nn.relu(%x) }
)"),
            "");
  EXPECT_NE(Refusal(R"(
def @f(%x: Tensor[(N, 4), float32]) { transpose(%x) }
)"),
            "");
}

TEST(BatchSplit, TheKernelLoopsOverTheBatchAroundTheStaticSchedule) {
  Function f = Fn(R"(
def @f(%x: Tensor[(N, 64), float32], %w: Tensor[(32, 64), float32]) {
  nn.relu(nn.dense(%x, %w))
}
)");
  LowerOptions options;
  options.vector_lanes = 8;
  absl::StatusOr<std::optional<LoweredFunc>> k = LowerBatchSplit(f, "dense_relu", options);
  ASSERT_TRUE(k.ok()) << k.status();
  ASSERT_TRUE(k->has_value());
  const LoweredFunc& lf = **k;
  EXPECT_EQ(lf.func->attrs.at("kiln.batch_split"), "N");
  EXPECT_FALSE(lf.strategies.empty()) << "the N = 1 copy got no strategy";
  ASSERT_EQ(lf.func->params.size(), 3u);  // x, w, the output
  const std::string text = tir::ToText(lf.func);
  EXPECT_TRUE(absl::StrContains(text, "x: float32[N, 64]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "w: float32[32, 64]")) << text;
  EXPECT_TRUE(absl::StrContains(text, "for (batch, 0, N)")) << text;
  // A function that does not qualify is left to LowerPrimitive.
  absl::StatusOr<std::optional<LoweredFunc>> none = LowerBatchSplit(Fn(R"(
def @f(%x: Tensor[(N, 4), float32]) { nn.softmax(%x, axis=0) }
)"),
                                                                    "softmax", options);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  // Nor when the strategies are off (the generic schedule takes symbolic
  // extents as they are).
  options.use_strategies = false;
  absl::StatusOr<std::optional<LoweredFunc>> off = LowerBatchSplit(f, "dense_relu", options);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->has_value());
}

}  // namespace
}  // namespace kiln::lowering::vm
