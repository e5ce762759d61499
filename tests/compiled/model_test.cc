// File: tests/compiled/model_test.cc
//
// The bundled ResNet-, MobileNet- and BERT-style graphs (examples/*.kir, random
// weights) through the O3 pipeline, every fused function lowered and compiled,
// run and compared with the interpreter. Also a few hand-picked fusions
// (conv2d + bias + relu, dense + gelu, layer_norm, softmax).
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "kiln/threadpool.h"
#include "tests/compiled/compare.h"
#include "tests/compiled/jit_runner.h"
#include "types/infer_type.h"

namespace kiln::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void CheckModule(const std::string& text, const std::string& name, double lo, double hi,
                 double rtol, double atol, int opt_level = 3) {
  absl::StatusOr<Module> parsed = ParseModule(text, name);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::StatusOr<Module> typed = types::InferType(*parsed);
  ASSERT_TRUE(typed.ok()) << typed.status();
  auto inputs = RandomInputs(*typed, 5, lo, hi, 0, 3);
  ASSERT_TRUE(inputs.ok()) << inputs.status();
  // Batch-norm variances must be positive, or every output is NaN (and NaN
  // matches NaN): |v| + 0.5.
  absl::StatusOr<Function> main = typed->Lookup("main");
  ASSERT_TRUE(main.ok());
  for (size_t i = 0; i < (*main)->params.size(); ++i) {
    if (!(*main)->params[i]->name_hint.ends_with("var")) continue;
    auto t = HostTensor::Create((*inputs)[i].tensor()->dtype(), (*inputs)[i].tensor()->shape());
    ASSERT_TRUE(t.ok());
    for (int64_t k = 0; k < (*t)->num_elements(); ++k) {
      (*t)->mutable_data<float>()[k] = std::abs((*inputs)[i].tensor()->data<float>()[k]) + 0.5f;
    }
    (*inputs)[i] = interp::Value::Tensor(*t);
  }
  absl::StatusOr<interp::Value> expected = interp::RunFunction(*typed, "main", *inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  // The reference must hold numbers, or the comparison proves little.
  std::function<void(const interp::Value&)> all_finite = [&](const interp::Value& v) {
    if (v.kind() != interp::ValueKind::kTensor) {
      for (const interp::Value& f : v.fields()) all_finite(f);
      return;
    }
    const HostTensor& t = *v.tensor();
    if (!t.dtype().is_float()) return;
    for (int64_t k = 0; k < t.num_elements(); ++k) {
      ASSERT_TRUE(std::isfinite(t.GetAsDouble(k))) << name << ": reference output is not finite";
    }
  };
  all_finite(*expected);

  JitOptions opts;
  opts.opt_level = opt_level;
  absl::StatusOr<std::unique_ptr<JitGraph>> g = JitGraph::Compile(*typed, opts);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_GT((*g)->kernels().size(), 0u);
  // Serial, and on a 2-thread pool.
  absl::StatusOr<interp::Value> got = (*g)->Run(*inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(ValuesClose(*expected, *got, rtol, atol)) << PrintModule((*g)->optimized());

  KilnThreadPool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), 0);
  KilnKernelContext* ctx = nullptr;
  ASSERT_EQ(kiln_kernel_context_create(pool, &ctx), 0);
  absl::StatusOr<interp::Value> par = (*g)->Run(*inputs, ctx);
  ASSERT_TRUE(par.ok()) << par.status() << " " << kiln_kernel_context_error(ctx);
  EXPECT_TRUE(ValuesClose(*expected, *par, rtol, atol));
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
}

TEST(ModelTest, ResNetBlock) {
  CheckModule(ReadFile("examples/resnet_block.kir"), "resnet_block", -0.5, 0.5, 1e-3, 1e-4);
}

TEST(ModelTest, MobileNetBlock) {
  CheckModule(ReadFile("examples/mobilenet_block.kir"), "mobilenet_block", -0.5, 0.5, 1e-3, 1e-4);
}

TEST(ModelTest, TransformerBlock) {
  CheckModule(ReadFile("examples/transformer_block.kir"), "transformer_block", -0.1, 0.1, 1e-3,
              1e-4);
}

TEST(FusionTest, Conv2dBiasRelu) {
  CheckModule(R"(#[version = "0.1"]
def @main(%x: Tensor[(1, 16, 15, 15), float32], %w: Tensor[(32, 16, 3, 3), float32],
          %b: Tensor[(32,), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], channels=32, kernel_size=[3, 3]);
  %1 = nn.bias_add(%0, %b);
  nn.relu(%1)
})",
              "conv_bias_relu", -1, 1, 1e-4, 1e-4);
}

TEST(FusionTest, DenseGelu) {
  CheckModule(R"(#[version = "0.1"]
def @main(%x: Tensor[(7, 64), float32], %w: Tensor[(50, 64), float32], %b: Tensor[(50,), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = add(%0, %b);
  nn.gelu(%1)
})",
              "dense_gelu", -1, 1, 1e-4, 1e-4);
}

TEST(FusionTest, LayerNormAndSoftmaxChain) {
  CheckModule(R"(#[version = "0.1"]
def @main(%x: Tensor[(4, 33), float32], %g: Tensor[(33,), float32], %b: Tensor[(33,), float32]) {
  %0 = multiply(%x, 2f);
  %1 = nn.layer_norm(%0, %g, %b);
  %2 = nn.softmax(%1);
  %3 = exp(%2);
  sum(%3, axis=[1])
})",
              "ln_softmax", -1, 1, 1e-4, 1e-4);
}

TEST(FusionTest, ElementwiseChainWithBroadcastAndReduce) {
  CheckModule(R"(#[version = "0.1"]
def @main(%x: Tensor[(3, 40, 17), float32], %y: Tensor[(40, 1), float32]) {
  %0 = add(%x, %y);
  %1 = tanh(%0);
  %2 = multiply(%1, %1);
  %3 = max(%2, axis=[2]);
  %4 = sigmoid(%3);
  (%4, transpose(%2, axes=[2, 1, 0]))
})",
              "chain", -2, 2, 1e-5, 1e-5);
}

}  // namespace
}  // namespace kiln::testing
