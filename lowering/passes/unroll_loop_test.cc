// File: lowering/passes/unroll_loop_test.cc
#include "lowering/passes/unroll_loop.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir_printer.h"
#include "lowering/passes/tir_eval.h"
#include "lowering/passes/verify.h"

namespace kiln::tir::transform {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const DataType kF32 = DataType::Float(32);

PrimFunc Unroll(const PrimFunc& f, const UnrollOptions& o = {}) {
  absl::StatusOr<PrimFunc> r = UnrollLoop(f, o);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return f;
  absl::Status v = VerifyPrimFunc(*r);
  EXPECT_TRUE(v.ok()) << v << "\n" << ToText(*r);
  absl::Status same = testing::ExpectSameResults(f, *r);
  EXPECT_TRUE(same.ok()) << same;
  return *r;
}

TEST(UnrollLoopTest, UnrollsMarkedLoops) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(12)});
  Buffer c = MakeBuffer("C", kF32, {IntImm(12)});
  Var i = MakeVar("i"), k = MakeVar("k");
  Stmt body = For(i, IntImm(0), IntImm(4), ForKind::kSerial,
                  For(k, IntImm(0), IntImm(3), ForKind::kUnrolled,
                      Store(c, Add(Load(c, {i * 3 + k}), Load(a, {i * 3 + k})), {i * 3 + k})));
  PrimFunc g = Unroll(MakePrimFunc("f", {a, c}, body));
  std::string text = ToText(g);
  EXPECT_THAT(text, Not(HasSubstr("unrolled")));
  EXPECT_THAT(text, HasSubstr("C[((i * 3) + 2)] = (C[((i * 3) + 2)] + A[((i * 3) + 2)])"));
}

TEST(UnrollLoopTest, RenamesInnerBindings) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(8)});
  Var k = MakeVar("k"), t = MakeVar("t", kF32);
  Buffer tmp = MakeBuffer("tmp", kF32, {IntImm(1)});
  Stmt body = For(
      k, IntImm(0), IntImm(2), ForKind::kUnrolled,
      Allocate(tmp,
               Seq({Store(tmp, Load(a, {k}), {IntImm(0)}),
                    LetStmt(t, Load(tmp, {IntImm(0)}), Store(a, Mul(t, FloatImm(3)), {k + 4}))})));
  PrimFunc g = Unroll(MakePrimFunc("f", {a}, body));
  std::string text = ToText(g);
  EXPECT_THAT(text, HasSubstr("allocate tmp"));
  // Two distinct allocations and lets (unique bindings).
  ASSERT_EQ(g->body->kind, StmtKind::kSeq);
  EXPECT_NE(g->body->body[0]->buffer->data.get(), g->body->body[1]->buffer->data.get());
}

TEST(UnrollLoopTest, LargeAndSymbolicExtentsStayLoops) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {IntImm(4096)});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = Seq({For(i, IntImm(0), IntImm(2048), ForKind::kUnrolled, Store(a, FloatImm(1), {i})),
                   For(j, IntImm(0), n, ForKind::kUnrolled, Store(a, FloatImm(2), {j}))});
  absl::StatusOr<PrimFunc> g = UnrollLoop(MakePrimFunc("f", {a}, body));
  ASSERT_TRUE(g.ok());
  std::string text = ToText(*g);
  ASSERT_EQ((*g)->body->kind, StmtKind::kSeq);
  const Stmt& l0 = (*g)->body->body[0];
  const Stmt& l1 = (*g)->body->body[1];
  EXPECT_EQ(l0->for_kind, ForKind::kSerial);
  EXPECT_EQ(l0->annotations.at("unroll.skipped"), "extent_2048_exceeds_max_1024");
  EXPECT_EQ(l1->annotations.at("unroll.skipped"), "extent_not_constant");
  EXPECT_THAT(text, HasSubstr("for (i, 0, 2048) unroll.skipped="));
}

TEST(UnrollLoopTest, AutoMaxStep) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4), IntImm(4)});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = For(i, IntImm(0), IntImm(4), ForKind::kSerial,
                  For(j, IntImm(0), IntImm(4), ForKind::kSerial,
                      Store(a, Add(Load(a, {i, j}), FloatImm(1)), {i, j})));
  PrimFunc f = MakePrimFunc("f", {a}, body);
  // Off by default.
  EXPECT_EQ(Unroll(f).get(), f.get());
  // 4 steps fit: the inner loop unrolls, the outer (16 steps) does not.
  UnrollOptions o;
  o.auto_max_step = 8;
  std::string text = ToText(Unroll(f, o));
  EXPECT_THAT(text, HasSubstr("for (i, 0, 4)"));
  EXPECT_THAT(text, Not(HasSubstr("for (j")));
  EXPECT_THAT(text, HasSubstr("A[i, 3] = (A[i, 3] + 1f)"));
  // 16 fit: everything unrolls.
  o.auto_max_step = 16;
  EXPECT_THAT(ToText(Unroll(f, o)), Not(HasSubstr("for")));
  // The pragma sets the budget for its body.
  PrimFunc p =
      MakePrimFunc("p", {a}, AttrStmt(nullptr, "pragma_auto_unroll_max_step", IntImm(4), body));
  std::string pt = ToText(Unroll(p));
  EXPECT_THAT(pt, Not(HasSubstr("for (j")));
  EXPECT_THAT(pt, Not(HasSubstr("pragma")));
}

}  // namespace
}  // namespace kiln::tir::transform
