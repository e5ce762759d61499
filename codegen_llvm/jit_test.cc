// File: codegen_llvm/jit_test.cc — kernels built by hand in loop IR, compiled
// with the JIT and run: vector add, parallel loops, reductions, symbolic
// shapes, argument checks, workspaces, errors raised inside kernels.
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "codegen_llvm/codegen_llvm.h"
#include "codegen_llvm/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir.h"
#include "kiln/threadpool.h"

namespace kiln::codegen {
namespace {

using testing::CallKernel;
using ::testing::HasSubstr;
using testing::HostTensor;
using testing::JitHost;
using namespace kiln::tir;  // NOLINT: loop-IR factories read better unqualified.

constexpr DataType kF32 = DataType::Float(32);

PrimExpr I(int64_t v) { return IntImm(v); }

// C[i] = A[i] + B[i], one element per iteration.
PrimFunc VecAddSerial(const std::string& name, int64_t n) {
  Buffer a = MakeBuffer("A", kF32, {I(n)});
  Buffer b = MakeBuffer("B", kF32, {I(n)});
  Buffer c = MakeBuffer("C", kF32, {I(n)});
  Var i = MakeVar("i");
  Stmt body = For(i, I(0), I(n), ForKind::kSerial, Store(c, Add(Load(a, {i}), Load(b, {i})), {i}));
  return MakePrimFunc(name, {a, b, c}, body);
}

// The same with 8 lanes per iteration (Ramp indices) and a scalar tail.
PrimFunc VecAddVectorized(const std::string& name, int64_t n) {
  Buffer a = MakeBuffer("A", kF32, {I(n)});
  Buffer b = MakeBuffer("B", kF32, {I(n)});
  Buffer c = MakeBuffer("C", kF32, {I(n)});
  Var io = MakeVar("io");
  Var t = MakeVar("t");
  PrimExpr r = Ramp(io * 8, I(1), 8);
  Stmt vec =
      For(io, I(0), I(n / 8), ForKind::kSerial, Store(c, Add(Load(a, {r}), Load(b, {r})), {r}));
  PrimExpr j = t + I(n / 8 * 8);
  Stmt tail =
      For(t, I(0), I(n % 8), ForKind::kSerial, Store(c, Add(Load(a, {j}), Load(b, {j})), {j}));
  return MakePrimFunc(name, {a, b, c}, Seq({vec, tail}));
}

void Fill(HostTensor& t, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
}

TEST(JitTest, VectorAddSerialAndVectorized) {
  const std::vector<int64_t> sizes = {1, 7, 64, 1000};
  std::vector<PrimFunc> funcs;
  for (int64_t n : sizes) {
    funcs.push_back(VecAddSerial("add_serial_" + std::to_string(n), n));
    funcs.push_back(VecAddVectorized("add_vec_" + std::to_string(n), n));
  }
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  for (int64_t n : sizes) {
    for (const char* kind : {"add_serial_", "add_vec_"}) {
      auto fn = (*jit)->Lookup(kind + std::to_string(n));
      ASSERT_TRUE(fn.ok()) << fn.status();
      HostTensor a(kF32, {n}), b(kF32, {n}), c(kF32, {n});
      Fill(a, 1);
      Fill(b, 2);
      ASSERT_EQ(CallKernel(*fn, {a.dl(), b.dl(), c.dl()}), KILN_KERNEL_OK) << kind << n;
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(c.data<float>()[i], a.data<float>()[i] + b.data<float>()[i])
            << kind << n << " at " << i;
      }
    }
  }
  EXPECT_EQ((*jit)->Lookup("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(JitTest, OptLevelZeroAndOne) {
  for (const char* target : {"llvm -opt-level=0", "llvm -opt-level=1"}) {
    auto jit = JitHost({VecAddVectorized("vadd", 100)}, target);
    ASSERT_TRUE(jit.ok()) << jit.status();
    HostTensor a(kF32, {100}), b(kF32, {100}), c(kF32, {100});
    Fill(a, 3);
    Fill(b, 4);
    ASSERT_EQ(CallKernel(*(*jit)->Lookup("vadd"), {a.dl(), b.dl(), c.dl()}), 0);
    for (int i = 0; i < 100; ++i)
      ASSERT_EQ(c.data<float>()[i], a.data<float>()[i] + b.data<float>()[i]);
  }
}

// B[i] = A[i] * s + 1 over a parallel loop, s a let-bound scalar captured by
// the lambda; a nested parallel loop (runs serially inside the task).
PrimFunc ParallelScale() {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {n, I(3)});
  Buffer b = MakeBuffer("B", kF32, {n, I(3)});
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Var s = MakeVar("s", kF32);
  Stmt inner = For(j, I(0), I(3), ForKind::kParallel,
                   Store(b, Add(Mul(Load(a, {i, j}), s), FloatImm(1.0)), {i, j}));
  Stmt body = LetStmt(s, FloatImm(2.0), For(i, I(0), n, ForKind::kParallel, inner));
  return MakePrimFunc("par_scale", {a, b}, body);
}

TEST(JitTest, ParallelLoopWithPoolAndWithoutContext) {
  auto jit = JitHost({ParallelScale()});
  ASSERT_TRUE(jit.ok()) << jit.status();
  KilnKernelFn fn = *(*jit)->Lookup("par_scale");
  KilnThreadPool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), 0);
  KilnKernelContext* ctx = nullptr;
  ASSERT_EQ(kiln_kernel_context_create(pool, &ctx), 0);
  for (int64_t rows : {1, 2, 3, 1000}) {
    for (KilnKernelContext* c : {ctx, static_cast<KilnKernelContext*>(nullptr)}) {
      HostTensor a(kF32, {rows, 3}), b(kF32, {rows, 3});
      Fill(a, static_cast<int>(rows));
      ASSERT_EQ(CallKernel(fn, {a.dl(), b.dl()}, c), 0) << kiln_kernel_context_error(ctx);
      for (int64_t k = 0; k < rows * 3; ++k) {
        ASSERT_EQ(b.data<float>()[k], a.data<float>()[k] * 2.0f + 1.0f) << rows << " " << k;
      }
    }
  }
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
}

// B[i] += 1 for i in [2, 2 + n) over a parallel loop with a symbolic extent:
// the loop is cut into min(n, 8 * threads) tasks (lower_stmt.cc), so every
// extent from 0 to past the task count, with pools of 2 to 4 threads, must
// touch each element of the range exactly once and nothing outside it.
PrimFunc ParallelIncrement() {
  Var m = MakeVar("m");  // n + 4
  Buffer b = MakeBuffer("B", kF32, {m});
  Var i = MakeVar("i");
  return MakePrimFunc("par_inc", {b},
                      For(i, I(2), m - I(4), ForKind::kParallel,
                          Store(b, Add(Load(b, {i}), FloatImm(1.0)), {i})));
}

TEST(JitTest, ParallelLoopRunsEveryIterationOnce) {
  auto jit = JitHost({ParallelIncrement()});
  ASSERT_TRUE(jit.ok()) << jit.status();
  KilnKernelFn fn = *(*jit)->Lookup("par_inc");
  for (int32_t threads : {2, 3, 4}) {
    KilnThreadPool* pool = nullptr;
    ASSERT_EQ(kiln_thread_pool_create(threads, &pool), 0);
    KilnKernelContext* ctx = nullptr;
    ASSERT_EQ(kiln_kernel_context_create(pool, &ctx), 0);
    std::vector<int64_t> extents;
    for (int64_t e = 0; e <= 40; ++e) extents.push_back(e);
    for (int64_t e : {127, 1000, 1001}) extents.push_back(e);
    for (int64_t e : extents) {
      HostTensor b(kF32, {e + 4});
      for (int64_t k = 0; k < e + 4; ++k) b.data<float>()[k] = static_cast<float>(k);
      ASSERT_EQ(CallKernel(fn, {b.dl()}, ctx), 0) << kiln_kernel_context_error(ctx);
      for (int64_t k = 0; k < e + 4; ++k) {
        const float want = static_cast<float>(k) + (k >= 2 && k < e + 2 ? 1.0f : 0.0f);
        ASSERT_EQ(b.data<float>()[k], want) << threads << " threads, extent " << e << ", at " << k;
      }
    }
    kiln_kernel_context_destroy(ctx);
    kiln_thread_pool_destroy(pool);
  }
}

// An assert inside a parallel body: the task's error code comes back from the
// kernel; a heap workspace allocated inside each task is freed on both paths.
PrimFunc ParallelAssert() {
  Buffer a = MakeBuffer("A", kF32, {I(64)});
  Buffer b = MakeBuffer("B", kF32, {I(64)});
  Buffer ws = MakeBuffer("ws", kF32, {I(40000)});  // 160 KB: a heap workspace
  Var i = MakeVar("i");
  Stmt body = Allocate(ws,
                       Seq({Store(ws, Load(a, {i}), {I(39999)}),
                            AssertStmt(GE(Load(ws, {I(39999)}), FloatImm(0.0)), "negative input",
                                       Store(b, Load(ws, {I(39999)}), {i}))}),
                       "global");
  return MakePrimFunc("par_assert", {a, b}, For(i, I(0), I(64), ForKind::kParallel, body));
}

TEST(JitTest, ErrorInsideParallelTask) {
  auto jit = JitHost({ParallelAssert()});
  ASSERT_TRUE(jit.ok()) << jit.status();
  KilnKernelFn fn = *(*jit)->Lookup("par_assert");
  KilnThreadPool* pool = nullptr;
  ASSERT_EQ(kiln_thread_pool_create(2, &pool), 0);
  KilnKernelContext* ctx = nullptr;
  ASSERT_EQ(kiln_kernel_context_create(pool, &ctx), 0);
  HostTensor a(kF32, {64}), b(kF32, {64});
  for (int i = 0; i < 64; ++i) a.data<float>()[i] = static_cast<float>(i);
  EXPECT_EQ(CallKernel(fn, {a.dl(), b.dl()}, ctx), 0);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(b.data<float>()[i], static_cast<float>(i));
  a.data<float>()[40] = -1.0f;
  EXPECT_EQ(CallKernel(fn, {a.dl(), b.dl()}, ctx), KILN_KERNEL_EINVAL);
  EXPECT_THAT(kiln_kernel_context_error(ctx), HasSubstr("par_assert: negative input"));
  EXPECT_EQ(CallKernel(fn, {a.dl(), b.dl()}, nullptr), KILN_KERNEL_EINVAL);
  EXPECT_THAT(kiln_kernel_last_error(), HasSubstr("par_assert: negative input"));
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
}

// B[i] = sum_j A[i, j] with a "local" accumulator (multi-dim Load of A).
TEST(JitTest, RowSumWithLocalAccumulator) {
  const int64_t m = 37, n = 129;
  Buffer a = MakeBuffer("A", kF32, {I(m), I(n)});
  Buffer b = MakeBuffer("B", kF32, {I(m)});
  Buffer acc = MakeBuffer("acc", kF32, {I(1)}, "local");
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Stmt row = Allocate(acc,
                      Seq({Store(acc, FloatImm(0.0), {I(0)}),
                           For(j, I(0), I(n), ForKind::kSerial,
                               Store(acc, Add(Load(acc, {I(0)}), Load(a, {i, j})), {I(0)})),
                           Store(b, Load(acc, {I(0)}), {i})}),
                      "local");
  PrimFunc f = MakePrimFunc("row_sum", {a, b}, For(i, I(0), I(m), ForKind::kSerial, row));
  auto jit = JitHost({f});
  ASSERT_TRUE(jit.ok()) << jit.status();
  HostTensor ta(kF32, {m, n}), tb(kF32, {m});
  Fill(ta, 5);
  ASSERT_EQ(CallKernel(*(*jit)->Lookup("row_sum"), {ta.dl(), tb.dl()}), 0);
  for (int64_t r = 0; r < m; ++r) {
    float sum = 0;
    for (int64_t c = 0; c < n; ++c) sum += ta.data<float>()[r * n + c];
    ASSERT_EQ(tb.data<float>()[r], sum) << r;  // same order of additions
  }
}

// C[i] = A[i] * B[i] over a symbolic n, and a transpose over symbolic (m, n).
TEST(JitTest, SymbolicShapes) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {n});
  Buffer b = MakeBuffer("B", kF32, {n});
  Buffer c = MakeBuffer("C", kF32, {n});
  Var i = MakeVar("i");
  PrimFunc mul = MakePrimFunc(
      "mul", {a, b, c},
      For(i, I(0), n, ForKind::kSerial, Store(c, Mul(Load(a, {i}), Load(b, {i})), {i})));
  Var rows = MakeVar("m", DataType::Int(32));  // a 32-bit shape variable
  Var cols = MakeVar("n");
  Buffer x = MakeBuffer("X", kF32, {rows, cols});
  Buffer y = MakeBuffer("Y", kF32, {cols, rows});
  Var r = MakeVar("r", DataType::Int(32));
  Var k = MakeVar("k");
  PrimFunc transpose =
      MakePrimFunc("transpose", {x, y},
                   For(r, IntImm(0, DataType::Int(32)), rows, ForKind::kSerial,
                       For(k, I(0), cols, ForKind::kSerial,
                           Store(y, Load(x, {Cast(kIndexType, r), k}), {k, Cast(kIndexType, r)}))));
  auto jit = JitHost({mul, transpose});
  ASSERT_TRUE(jit.ok()) << jit.status();
  for (int64_t len : {5, 300}) {
    HostTensor ta(kF32, {len}), tb(kF32, {len}), tc(kF32, {len});
    Fill(ta, 7);
    Fill(tb, 8);
    ASSERT_EQ(CallKernel(*(*jit)->Lookup("mul"), {ta.dl(), tb.dl(), tc.dl()}), 0);
    for (int64_t q = 0; q < len; ++q) {
      ASSERT_EQ(tc.data<float>()[q], ta.data<float>()[q] * tb.data<float>()[q]);
    }
  }
  for (auto [m, nn] : std::vector<std::pair<int64_t, int64_t>>{{3, 5}, {17, 2}}) {
    HostTensor tx(kF32, {m, nn}), ty(kF32, {nn, m});
    Fill(tx, 9);
    ASSERT_EQ(CallKernel(*(*jit)->Lookup("transpose"), {tx.dl(), ty.dl()}), 0);
    for (int64_t p = 0; p < m; ++p) {
      for (int64_t q = 0; q < nn; ++q) {
        ASSERT_EQ(ty.data<float>()[q * m + p], tx.data<float>()[p * nn + q]);
      }
    }
  }
}

// f(A: float32[4, n], B: float32[n], C: int32[4]).
class ArgumentCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Var n = MakeVar("n");
    Buffer a = MakeBuffer("A", kF32, {I(4), n});
    Buffer b = MakeBuffer("B", kF32, {n});
    Buffer c = MakeBuffer("C", DataType::Int(32), {I(4)});
    Var i = MakeVar("i");
    PrimFunc f = MakePrimFunc("checked", {a, b, c},
                              For(i, I(0), n, ForKind::kSerial, Store(b, Load(a, {I(1), i}), {i})));
    auto jit = JitHost({f});
    ASSERT_TRUE(jit.ok()) << jit.status();
    jit_ = std::move(*jit);
    fn_ = *jit_->Lookup("checked");
    ASSERT_EQ(kiln_kernel_context_create(nullptr, &ctx_), 0);
  }
  void TearDown() override { kiln_kernel_context_destroy(ctx_); }

  // Runs with ctx and with a NULL ctx; both must fail with EINVAL and a
  // message containing every one of `parts`.
  void ExpectEinval(std::vector<DLTensor*> args, const std::vector<std::string>& parts) {
    kiln_kernel_context_clear_error(ctx_);
    EXPECT_EQ(fn_(args.data(), static_cast<int32_t>(args.size()), ctx_), KILN_KERNEL_EINVAL);
    EXPECT_EQ(fn_(args.data(), static_cast<int32_t>(args.size()), nullptr), KILN_KERNEL_EINVAL);
    for (const std::string& p : parts) {
      EXPECT_THAT(kiln_kernel_context_error(ctx_), HasSubstr(p));
      EXPECT_THAT(kiln_kernel_last_error(), HasSubstr(p));
    }
  }

  std::unique_ptr<JitModule> jit_;
  KilnKernelFn fn_ = nullptr;
  KilnKernelContext* ctx_ = nullptr;
};

TEST_F(ArgumentCheckTest, ValidCallsRun) {
  HostTensor a(kF32, {4, 6}), b(kF32, {6}), c(DataType::Int(32), {4});
  Fill(a, 10);
  EXPECT_EQ(CallKernel(fn_, {a.dl(), b.dl(), c.dl()}, ctx_), 0);
  for (int q = 0; q < 6; ++q) EXPECT_EQ(b.data<float>()[q], a.data<float>()[6 + q]);
  // Explicit compact strides, and a byte_offset into a larger allocation.
  HostTensor big(kF32, {2, 6});
  Fill(big, 11);
  int64_t strides[1] = {1};
  DLTensor view = *big.dl();
  view.ndim = 1;
  view.shape = big.dl()->shape + 1;
  view.strides = strides;
  view.byte_offset = 6 * sizeof(float);
  EXPECT_EQ(CallKernel(fn_, {a.dl(), &view, c.dl()}, ctx_), 0);  // writes big's second row
  for (int q = 0; q < 6; ++q) EXPECT_EQ(big.data<float>()[6 + q], a.data<float>()[6 + q]);
}

TEST_F(ArgumentCheckTest, WrongCount) {
  HostTensor a(kF32, {4, 6}), b(kF32, {6});
  ExpectEinval({a.dl(), b.dl()}, {"checked: expected 3 argument"});
}

TEST_F(ArgumentCheckTest, NullTensor) {
  HostTensor a(kF32, {4, 6}), c(DataType::Int(32), {4});
  ExpectEinval({a.dl(), nullptr, c.dl()}, {"argument 1 (B)", "NULL"});
}

TEST_F(ArgumentCheckTest, WrongNdim) {
  HostTensor a(kF32, {4, 6}), b(kF32, {6, 1}), c(DataType::Int(32), {4});
  ExpectEinval({a.dl(), b.dl(), c.dl()}, {"argument 1 (B)", "ndim 1"});
}

TEST_F(ArgumentCheckTest, WrongDtype) {
  HostTensor a(kF32, {4, 6}), b(kF32, {6}), c(kF32, {4});
  ExpectEinval({a.dl(), b.dl(), c.dl()}, {"argument 2 (C)", "dtype int32"});
}

TEST_F(ArgumentCheckTest, WrongStaticDim) {
  HostTensor a(kF32, {5, 6}), b(kF32, {6}), c(DataType::Int(32), {4});
  ExpectEinval({a.dl(), b.dl(), c.dl()}, {"argument 0 (A)", "shape[0] == 4"});
}

TEST_F(ArgumentCheckTest, InconsistentSymbolicDim) {
  HostTensor a(kF32, {4, 6}), b(kF32, {7}), c(DataType::Int(32), {4});
  ExpectEinval({a.dl(), b.dl(), c.dl()},
               {"argument 1 (B)", "shape[0] == n", "bound from argument 0 (A) shape[1]"});
}

TEST_F(ArgumentCheckTest, NonCompactStrides) {
  HostTensor a(kF32, {4, 6}), b(kF32, {6}), c(DataType::Int(32), {4});
  int64_t strides[2] = {12, 2};
  a.dl()->strides = strides;
  ExpectEinval({a.dl(), b.dl(), c.dl()}, {"argument 0 (A)", "strides"});
  a.dl()->strides = nullptr;
}

// out[i] = ws[n - 1 - i] after ws[i] = i, with ws 1 MiB (a heap workspace);
// and the same through a symbolic-size workspace.
TEST(JitTest, LargeWorkspace) {
  const int64_t n = 262144;  // 1 MiB of float32
  Buffer out = MakeBuffer("out", kF32, {I(n)});
  Buffer ws = MakeBuffer("ws", kF32, {I(n)});
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Stmt body = Allocate(
      ws,
      Seq({For(i, I(0), I(n), ForKind::kSerial, Store(ws, Cast(kF32, i), {i})),
           For(j, I(0), I(n), ForKind::kSerial, Store(out, Load(ws, {I(n - 1) - j}), {j}))}),
      "global");
  Var m = MakeVar("m");
  Buffer out2 = MakeBuffer("out", kF32, {m});
  Buffer ws2 = MakeBuffer("ws", kF32, {m});
  Stmt body2 =
      Allocate(ws2,
               Seq({For(i, I(0), m, ForKind::kSerial, Store(ws2, Cast(kF32, i), {i})),
                    For(j, I(0), m, ForKind::kSerial, Store(out2, Load(ws2, {m - j - 1}), {j}))}),
               "global");
  auto jit = JitHost({MakePrimFunc("big_ws", {out}, body), MakePrimFunc("sym_ws", {out2}, body2)});
  ASSERT_TRUE(jit.ok()) << jit.status();
  KilnKernelContext* ctx = nullptr;
  ASSERT_EQ(kiln_kernel_context_create(nullptr, &ctx), 0);
  for (KilnKernelContext* c : {ctx, static_cast<KilnKernelContext*>(nullptr)}) {
    HostTensor t(kF32, {n});
    ASSERT_EQ(CallKernel(*(*jit)->Lookup("big_ws"), {t.dl()}, c), 0);
    for (int64_t k = 0; k < n; ++k) ASSERT_EQ(t.data<float>()[k], static_cast<float>(n - 1 - k));
    HostTensor t2(kF32, {1000});
    ASSERT_EQ(CallKernel(*(*jit)->Lookup("sym_ws"), {t2.dl()}, c), 0);
    for (int64_t k = 0; k < 1000; ++k) ASSERT_EQ(t2.data<float>()[k], static_cast<float>(999 - k));
  }
  kiln_kernel_context_destroy(ctx);
}

// A workspace whose size comes from an input: too big -> KILN_KERNEL_ENOMEM,
// and the enclosing workspace is freed on that path too (LeakSanitizer).
TEST(JitTest, WorkspaceAllocationFailure) {
  Buffer size = MakeBuffer("size", DataType::Int(64), {I(1)});
  Buffer out = MakeBuffer("out", kF32, {I(1)});
  Buffer outer = MakeBuffer("outer", kF32, {I(100000)});
  Var m = MakeVar("m");
  Buffer inner = MakeBuffer("inner", kF32, {m});
  Stmt body = Allocate(outer,
                       Seq({Store(outer, FloatImm(1.5), {I(0)}),
                            LetStmt(m, Load(size, {I(0)}),
                                    Allocate(inner,
                                             Seq({Store(inner, Load(outer, {I(0)}), {I(0)}),
                                                  Store(out, Load(inner, {I(0)}), {I(0)})}),
                                             "global"))}),
                       "global");
  auto jit = JitHost({MakePrimFunc("ws_fail", {size, out}, body)});
  ASSERT_TRUE(jit.ok()) << jit.status();
  KilnKernelFn fn = *(*jit)->Lookup("ws_fail");
  HostTensor ts(DataType::Int(64), {1}), to(kF32, {1});
  ts.data<int64_t>()[0] = 16;
  ASSERT_EQ(CallKernel(fn, {ts.dl(), to.dl()}), 0);
  EXPECT_EQ(to.data<float>()[0], 1.5f);
  // 2^61 floats = 2^63 bytes: kiln_workspace_alloc refuses it (NULL) without
  // asking the system allocator (which ASan would abort on).
  ts.data<int64_t>()[0] = int64_t{1} << 61;
  EXPECT_EQ(CallKernel(fn, {ts.dl(), to.dl()}), KILN_KERNEL_ENOMEM);
  EXPECT_THAT(kiln_kernel_last_error(), HasSubstr("ws_fail: allocation of workspace inner"));
}

// Loops still marked vectorized/unrolled (not rewritten by the loop passes)
// run as serial loops with LLVM loop hints.
TEST(JitTest, VectorizedAndUnrolledLoopKinds) {
  Buffer a = MakeBuffer("A", kF32, {I(37)});
  Buffer b = MakeBuffer("B", kF32, {I(37)});
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  PrimFunc f = MakePrimFunc("kinds", {a, b},
                            Seq({For(i, I(0), I(37), ForKind::kVectorized,
                                     Store(b, Mul(Load(a, {i}), FloatImm(3.0)), {i})),
                                 For(j, I(0), I(4), ForKind::kUnrolled,
                                     Store(b, Add(Load(b, {j}), FloatImm(1.0)), {j}))}));
  auto jit = JitHost({f});
  ASSERT_TRUE(jit.ok()) << jit.status();
  HostTensor ta(kF32, {37}), tb(kF32, {37});
  Fill(ta, 12);
  ASSERT_EQ(CallKernel(*(*jit)->Lookup("kinds"), {ta.dl(), tb.dl()}), 0);
  for (int k = 0; k < 37; ++k) {
    EXPECT_EQ(tb.data<float>()[k], ta.data<float>()[k] * 3.0f + (k < 4 ? 1.0f : 0.0f)) << k;
  }
}

// Compiles and runs on several threads at once (one LLVMContext per compile).
TEST(JitTest, ConcurrentCompiles) {
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &ok] {
      auto jit = JitHost({VecAddVectorized("vadd", 50 + t), ParallelScale()});
      if (!jit.ok()) return;
      HostTensor a(kF32, {50 + t}), b(kF32, {50 + t}), c(kF32, {50 + t});
      Fill(a, t);
      Fill(b, t + 1);
      if (CallKernel(*(*jit)->Lookup("vadd"), {a.dl(), b.dl(), c.dl()}) != 0) return;
      for (int i = 0; i < 50 + t; ++i) {
        if (c.data<float>()[i] != a.data<float>()[i] + b.data<float>()[i]) return;
      }
      ok[t] = 1;
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 1) << t;
}

}  // namespace
}  // namespace kiln::codegen
