// File: tests/compiled/dense_schedule_test.cc
//
// The hand-scheduled (packed, register-blocked) dense compiles and matches a
// direct computation, including a row count that is not a multiple of the
// block (tail guards).
#include "tests/compiled/dense_schedule.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "codegen_llvm/codegen_llvm.h"
#include "gtest/gtest.h"
#include "ir/tir_printer.h"

namespace kiln::testing {
namespace {

DLTensor Dl(std::vector<float>& v, std::vector<int64_t>& shape) {
  DLTensor d{};
  d.data = v.data();
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int32_t>(shape.size());
  d.dtype = {kDLFloat, 32, 1};
  d.shape = shape.data();
  return d;
}

void Check(int64_t m, int64_t n, int64_t k, int64_t rows) {
  absl::StatusOr<tir::PrimFunc> f = PackedDense(m, n, k, rows, 8);
  ASSERT_TRUE(f.ok()) << f.status();
  std::string text = tir::ToText(*f);
  EXPECT_NE(text.find("parallel"), std::string::npos) << text;
  EXPECT_NE(text.find("allocate dense.local"), std::string::npos) << text;
  if (std::getenv("KILN_DUMP")) std::fputs(text.c_str(), stderr);
  absl::StatusOr<codegen::Target> t = codegen::ParseTarget("llvm");
  ASSERT_TRUE(t.ok());
  absl::StatusOr<std::unique_ptr<codegen::JitModule>> jit = codegen::JitModule::Create({*f}, *t);
  ASSERT_TRUE(jit.ok()) << jit.status() << "\n" << text;
  absl::StatusOr<KilnKernelFn> fn = (*jit)->Lookup("dense_packed");
  ASSERT_TRUE(fn.ok());

  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> a(m * k), w(n * k), c(m * n, -7.0f);
  for (float& x : a) x = dist(rng);
  for (float& x : w) x = dist(rng);
  std::vector<int64_t> sa = {m, k}, sw = {n, k}, sc = {m, n};
  DLTensor da = Dl(a, sa), dw = Dl(w, sw), dc = Dl(c, sc);
  DLTensor* args[] = {&da, &dw, &dc};
  ASSERT_EQ((*fn)(args, 3, nullptr), 0) << kiln_kernel_last_error();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t p = 0; p < k; ++p) ref += static_cast<double>(a[i * k + p]) * w[j * k + p];
      ASSERT_NEAR(c[i * n + j], ref, 1e-4 * (1 + std::fabs(ref))) << i << "," << j;
    }
  }
}

TEST(DenseScheduleTest, PackedRegisterBlockedDenseIsCorrect) { Check(64, 48, 37, 4); }
TEST(DenseScheduleTest, RowTailIsGuarded) { Check(37, 32, 19, 4); }
TEST(DenseScheduleTest, NotAMultipleOf16IsAnError) {
  EXPECT_FALSE(PackedDense(8, 20, 8, 4, 8).ok());
}

}  // namespace
}  // namespace kiln::testing
