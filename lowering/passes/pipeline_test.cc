// File: lowering/passes/pipeline_test.cc
#include "lowering/passes/pipeline.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_parser.h"
#include "ir/tir_printer.h"
#include "lowering/passes/tir_eval.h"
#include "lowering/passes/verify.h"

namespace kiln::tir::transform {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const DataType kF32 = DataType::Float(32);

PrimExpr Likely(const PrimExpr& c) { return Call(DataType::Bool(), "likely", {c}); }

// C = tanh(A @ B) for 20x7 @ 7x20, scheduled like the TE scheduler does: the
// output columns split by 8 (vectorized inner loop, uneven: guards), a local
// accumulator per row tile, the reduction loop unrolled by a factor.
PrimFunc Matmul() {
  const int64_t m = 20, n = 20, k = 7;
  Buffer a = MakeBuffer("A", kF32, {IntImm(m), IntImm(k)});
  Buffer b = MakeBuffer("B", kF32, {IntImm(k), IntImm(n)});
  Buffer c = MakeBuffer("C", kF32, {IntImm(m), IntImm(n)});
  Buffer cl = MakeBuffer("C_local", kF32, {IntImm(1), IntImm(8)}, "local");
  Var i = MakeVar("i"), jo = MakeVar("j.outer"), ko = MakeVar("k"), ji = MakeVar("j.inner");
  Var ji2 = MakeVar("j.inner"), ji3 = MakeVar("j.inner");
  PrimExpr col = jo * 8 + ji;
  PrimExpr col2 = jo * 8 + ji2;
  PrimExpr col3 = jo * 8 + ji3;
  Stmt init =
      For(ji, IntImm(0), IntImm(8), ForKind::kVectorized, Store(cl, FloatImm(0), {IntImm(0), ji}));
  Stmt update = For(
      ko, IntImm(0), IntImm(k), ForKind::kSerial,
      For(ji2, IntImm(0), IntImm(8), ForKind::kVectorized,
          IfThenElse(
              Likely(LT(col2, IntImm(n))),
              Store(cl, Add(Load(cl, {IntImm(0), ji2}), Mul(Load(a, {i, ko}), Load(b, {ko, col2}))),
                    {IntImm(0), ji2}))));
  Stmt write =
      For(ji3, IntImm(0), IntImm(8), ForKind::kVectorized,
          IfThenElse(Likely(LT(col3, IntImm(n))),
                     Store(c, Call(kF32, "tanh", {Load(cl, {IntImm(0), ji3})}), {i, col3})));
  Stmt body = For(i, IntImm(0), IntImm(m), ForKind::kParallel,
                  For(jo, IntImm(0), IntImm(3), ForKind::kSerial,
                      Allocate(cl, Seq({init, update, write}), "local")));
  return MakePrimFunc("matmul_act", {a, b, c}, body);
}

int Count(const Stmt& s, StmtKind kind) {
  int n = 0;
  PostOrderVisit(s, nullptr, [&](const StmtNode* x) { n += x->kind == kind; });
  return n;
}

TEST(PipelineTest, MatmulGivesTheSameNumbers) {
  PrimFunc f = Matmul();
  ASSERT_TRUE(VerifyPrimFunc(f).ok()) << VerifyPrimFunc(f);
  absl::StatusOr<PrimFunc> g = RunLoopPipeline(f);
  ASSERT_TRUE(g.ok()) << g.status();
  std::string text = ToText(*g);
  absl::Status same = testing::ExpectSameResults(f, *g, 21, {}, 2e-6);
  EXPECT_TRUE(same.ok()) << same << "\n" << text;
  // The main column tiles are vector code without guards; tanh is arithmetic.
  EXPECT_THAT(text, HasSubstr("ramp("));
  EXPECT_THAT(text, Not(HasSubstr("tanh(")));
  EXPECT_THAT(text, HasSubstr("vectorize.fallback=\"if_depends_on_lane\""));  // the tail tile
  // The accumulator is allocated once per parallel task, not per tile.
  const Stmt& par = (*g)->body;
  ASSERT_EQ(par->kind, StmtKind::kFor) << text;
  EXPECT_EQ(par->body0()->kind, StmtKind::kAllocate) << text;
  // With auto unrolling, results stay the same.
  LoopPassOptions o;
  o.auto_unroll_max_step = 64;
  absl::StatusOr<PrimFunc> u = RunLoopPipeline(f, o);
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_TRUE(testing::ExpectSameResults(f, *u, 22, {}, 2e-6).ok());
  EXPECT_LT(Count((*u)->body, StmtKind::kFor), Count((*g)->body, StmtKind::kFor));
}

TEST(PipelineTest, SymbolicElementwiseWithTail) {
  absl::StatusOr<PrimFunc> f = ParsePrimFunc(R"(
    primfunc exp_scale(A: float32[n], B: float32[n]) {
      for (i, 0, floordiv((n + 15), 16)) {
        vectorized (j, 0, 16) {
          if (likely((((i * 16) + j) < n))) {
            B[((i * 16) + j)] = (exp(A[((i * 16) + j)]) * 0.5f)
          }
        }
      }
    }
  )");
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<PrimFunc> g = RunLoopPipeline(*f);
  ASSERT_TRUE(g.ok()) << g.status();
  for (int64_t n : {1, 15, 16, 17, 100}) {
    absl::Status same = testing::ExpectSameResults(*f, *g, 3, {{"n", n}}, 2e-6);
    EXPECT_TRUE(same.ok()) << "n = " << n << ": " << same << "\n" << ToText(*g);
  }
  EXPECT_THAT(ToText(*g), HasSubstr("B[ramp((i * 16), 1, 16)]"));
}

TEST(PipelineTest, MultiDimStoragePaddedAndFused) {
  // Two elementwise stages through a temporary: flattening, reuse, and the
  // pipeline on multi-dim buffers.
  absl::StatusOr<PrimFunc> f = ParsePrimFunc(R"(
    primfunc two_stage(X: float32[6, 10], Y: float32[6, 10]) {
      allocate T: float32[6, 10] global
      allocate U: float32[6, 10] global
      parallel (i, 0, 6) {
        vectorized (j, 0, 10) {
          T[i, j] = sigmoid(X[i, j])
        }
      }
      parallel (i2, 0, 6) {
        vectorized (j2, 0, 10) {
          Y[i2, j2] = (T[i2, j2] * X[i2, j2])
        }
      }
      parallel (i3, 0, 6) {
        vectorized (j3, 0, 10) {
          U[i3, j3] = erf(Y[i3, j3])
        }
      }
      parallel (i4, 0, 6) {
        vectorized (j4, 0, 10) {
          Y[i4, j4] = (U[i4, j4] + 1f)
        }
      }
    }
  )");
  ASSERT_TRUE(f.ok()) << f.status();
  absl::StatusOr<PrimFunc> g = RunLoopPipeline(*f);
  ASSERT_TRUE(g.ok()) << g.status();
  std::string text = ToText(*g);
  EXPECT_TRUE(testing::ExpectSameResults(*f, *g, 4, {}, 2e-6).ok()) << text;
  EXPECT_EQ(Count((*g)->body, StmtKind::kAllocate), 1) << text;  // T and U share
  EXPECT_THAT(text, HasSubstr("allocate T: float32[60] global"));
}

// The lowered math keeps its accuracy through the simplifier that runs after
// lower_intrinsics (float arithmetic must not be reassociated).
TEST(PipelineTest, MathStaysAccurateThroughTheWholePipeline) {
  const int lanes = 1024;
  const std::vector<std::string> names = {"exp",   "exp2", "expm1",   "log", "log2",
                                          "log1p", "tanh", "sigmoid", "erf"};
  Buffer a = MakeBuffer("A", kF32, {IntImm(lanes)});
  std::vector<Buffer> params = {a};
  std::vector<Stmt> stores;
  PrimExpr idx = Ramp(IntImm(0), IntImm(1), lanes);
  DataType vt(DTypeCode::kFloat, 32, lanes);
  for (const std::string& name : names) {
    Buffer out = MakeBuffer("Out_" + name, kF32, {IntImm(lanes)});
    params.push_back(out);
    stores.push_back(Store(out, Call(vt, name, {Load(a, {idx})}), {idx}));
  }
  PrimFunc f = MakePrimFunc("math", params, Seq(stores));
  absl::StatusOr<PrimFunc> g = RunLoopPipeline(f);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<testing::EvalArg> args(params.size());
  for (int k = 0; k < lanes; ++k) {
    double x = k < 512 ? -30.0 + 60.0 * k / 511 : std::ldexp(1.0 + (k % 7) / 7.0, (k % 200) - 100);
    args[0].data.push_back(static_cast<float>(x));
  }
  for (size_t p = 1; p < params.size(); ++p) args[p].data.assign(lanes, 0);
  std::vector<testing::EvalArg> ref = args;
  ASSERT_TRUE(testing::EvalPrimFunc(*g, &args).ok());
  ASSERT_TRUE(testing::EvalPrimFunc(f, &ref).ok());  // libm, rounded to float32
  for (size_t p = 1; p < params.size(); ++p) {
    double worst = 0;
    for (int k = 0; k < lanes; ++k) {
      double want = ref[p].data[k], got = args[p].data[k];
      if (std::isnan(want) || std::isinf(want)) {
        EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want)
            << names[p - 1] << " at " << args[0].data[k];
        continue;
      }
      if (std::fabs(want) < 1.17549435e-38) continue;
      worst = std::max(worst, std::fabs(got - want) / std::fabs(want));
    }
    EXPECT_LE(worst, 2e-6) << names[p - 1];
  }
}

TEST(PipelineTest, NamesOptionsAndErrors) {
  absl::StatusOr<LoopPass> bad = GetLoopPass("vectorise");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("unknown loop pass 'vectorise'; valid names: storage_flatten, simplify, "
                        "loop_partition, vectorize, unroll, storage_rewrite, remove_no_op, "
                        "lower_intrinsics, verify, default"));
  for (const std::string& name : LoopPassNames()) EXPECT_TRUE(GetLoopPass(name).ok()) << name;

  PrimFunc f = Matmul();
  LoopPassOptions o;
  o.disabled = {"lower_intrinsics"};
  std::vector<std::string> ran;
  o.after_each = [&](absl::string_view pass, const PrimFunc&) { ran.emplace_back(pass); };
  absl::StatusOr<PrimFunc> g = RunLoopPipeline(f, o);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(ToText(*g), HasSubstr("tanh("));
  EXPECT_EQ(ran.size(), 12u);
  EXPECT_EQ(ran.front(), "storage_flatten");
  EXPECT_EQ(ran.back(), "verify");

  o.disabled = {"no_such_pass"};
  absl::StatusOr<PrimFunc> e = RunLoopPipeline(f, o);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("cannot disable unknown pass 'no_such_pass'"));
}

TEST(PipelineTest, VerifyErrorsNameTheFunction) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4)});
  Var i = MakeVar("i");
  PrimFunc f = MakePrimFunc("broken", {a}, Store(a, FloatImm(1), {i}));
  absl::StatusOr<PrimFunc> g = RunLoopPipeline(f);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("PrimFunc 'broken'"));
}

}  // namespace
}  // namespace kiln::tir::transform
