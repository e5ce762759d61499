// File: lowering/passes/vectorize_loop_test.cc
#include "lowering/passes/vectorize_loop.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"
#include "lowering/passes/tir_eval.h"
#include "lowering/passes/verify.h"

namespace kiln::tir::transform {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const DataType kF32 = DataType::Float(32);

PrimFunc Vectorize(const PrimFunc& f, const std::map<std::string, int64_t>& dims = {},
                   const VectorizeOptions& o = {}) {
  absl::StatusOr<PrimFunc> r = VectorizeLoop(f, o);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return f;
  absl::Status v = VerifyPrimFunc(*r);
  EXPECT_TRUE(v.ok()) << v << "\n" << ToText(*r);
  absl::Status same = testing::ExpectSameResults(f, *r, 7, dims);
  EXPECT_TRUE(same.ok()) << same << "\n" << ToText(*r);
  return *r;
}

// The annotation of the first For in s (empty if none).
std::string Fallback(const Stmt& s) {
  std::string why;
  PostOrderVisit(s, nullptr, [&](const StmtNode* n) {
    if (n->kind == StmtKind::kFor && n->annotations.count("vectorize.fallback")) {
      why = n->annotations.at("vectorize.fallback");
    }
  });
  return why;
}

TEST(VectorizeLoopTest, ElementwiseBecomesVectorCode) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(32)});
  Buffer b = MakeBuffer("B", kF32, {IntImm(32)});
  Var i = MakeVar("i"), j = MakeVar("j");
  PrimExpr idx = i * 8 + j;
  Stmt body = For(i, IntImm(0), IntImm(4), ForKind::kParallel,
                  For(j, IntImm(0), IntImm(8), ForKind::kVectorized,
                      Store(b, Mul(Call(kF32, "exp", {Load(a, {idx})}), FloatImm(2)), {idx})));
  PrimFunc g = Vectorize(MakePrimFunc("f", {a, b}, body));
  std::string text = ToText(g);
  EXPECT_THAT(text, Not(HasSubstr("vectorized")));
  EXPECT_THAT(text, HasSubstr("B[ramp((i * 8), 1, 8)] = (exp(A[ramp((i * 8), 1, 8)])"));
  EXPECT_THAT(text, HasSubstr("broadcast(2f, 8)"));
}

TEST(VectorizeLoopTest, MultiDimLetsSelectsAndCasts) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4), IntImm(8)});
  Buffer b = MakeBuffer("B", DataType::Int(32), {IntImm(4), IntImm(8)});
  Var i = MakeVar("i"), j = MakeVar("j"), t = MakeVar("t", kF32);
  Stmt body =
      For(i, IntImm(0), IntImm(4), ForKind::kSerial,
          For(j, IntImm(0), IntImm(8), ForKind::kVectorized,
              LetStmt(t, Add(Load(a, {i, j}), Cast(kF32, j)),
                      Store(b,
                            Cast(DataType::Int(32),
                                 Select(LT(j, IntImm(4)), Mul(t, FloatImm(3)),
                                        Max(t, Call(kF32, "fabs", {Load(a, {i, IntImm(0)})})))),
                            {i, j}))));
  PrimFunc g = Vectorize(MakePrimFunc("f", {a, b}, body));
  EXPECT_THAT(ToText(g), HasSubstr("let t"));
  EXPECT_THAT(ToText(g), HasSubstr("float32x8"));
  EXPECT_EQ(Fallback(g->body), "");
}

TEST(VectorizeLoopTest, InnerSerialLoopKeepsAVectorBody) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(8), IntImm(4)});
  Buffer c = MakeBuffer("C", kF32, {IntImm(8)});
  Var j = MakeVar("j"), k = MakeVar("k");
  Stmt body = For(
      j, IntImm(0), IntImm(8), ForKind::kVectorized,
      Seq({Store(c, FloatImm(0), {j}), For(k, IntImm(0), IntImm(4), ForKind::kSerial,
                                           Store(c, Add(Load(c, {j}), Load(a, {j, k})), {j}))}));
  PrimFunc g = Vectorize(MakePrimFunc("f", {a, c}, body));
  EXPECT_THAT(ToText(g), HasSubstr("for (k, 0, 4)"));
  EXPECT_THAT(
      ToText(g),
      HasSubstr("C[ramp(0, 1, 8)] = (C[ramp(0, 1, 8)] + A[ramp(0, 1, 8), broadcast(k, 8)])"));
}

TEST(VectorizeLoopTest, LongLoopsAreChunked) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(100)});
  Var j = MakeVar("j");
  Stmt body = For(j, IntImm(0), IntImm(100), ForKind::kVectorized,
                  Store(a, Add(Load(a, {j}), FloatImm(1)), {j}));
  PrimFunc g = Vectorize(MakePrimFunc("f", {a}, body));
  std::string text = ToText(g);
  EXPECT_THAT(text, HasSubstr("for (j.outer, 0, 6)"));
  EXPECT_THAT(text, HasSubstr("A[ramp((j.outer * 16), 1, 16)]"));
  EXPECT_THAT(text, HasSubstr("A[ramp(96, 1, 4)]"));
  // float64 uses half as many lanes; the width option applies.
  Buffer d = MakeBuffer("D", DataType::Float(64), {IntImm(100)});
  Stmt body64 = For(j, IntImm(0), IntImm(100), ForKind::kVectorized, Store(d, Load(d, {j}), {j}));
  EXPECT_THAT(ToText(Vectorize(MakePrimFunc("g", {d}, body64))),
              HasSubstr("ramp((j.outer * 8), 1, 8)"));
  VectorizeOptions o;
  o.vector_width = 4;
  EXPECT_THAT(ToText(Vectorize(MakePrimFunc("f", {a}, body), {}, o)),
              HasSubstr("for (j.outer, 0, 25)"));
}

TEST(VectorizeLoopTest, GuardedStoreFallsBack) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {n});
  Var i = MakeVar("i"), j = MakeVar("j");
  PrimExpr idx = i * 8 + j;
  Stmt body = For(i, IntImm(0), FloorDiv(n + 7, IntImm(8)), ForKind::kSerial,
                  For(j, IntImm(0), IntImm(8), ForKind::kVectorized,
                      IfThenElse(Call(DataType::Bool(), "likely", {LT(idx, n)}),
                                 Store(a, Mul(Load(a, {idx}), FloatImm(2)), {idx}))));
  PrimFunc g = Vectorize(MakePrimFunc("f", {a}, body), {{"n", 13}});
  EXPECT_EQ(Fallback(g->body), "if_depends_on_lane");
  EXPECT_THAT(ToText(g), HasSubstr("for (j, 0, 8) vectorize.fallback="));
}

TEST(VectorizeLoopTest, OtherFallbacks) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {IntImm(8), IntImm(8)});
  Buffer c = MakeBuffer("C", kF32, {IntImm(8)});
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k");
  // Reduction into one element.
  Stmt red = For(i, IntImm(0), IntImm(8), ForKind::kSerial,
                 For(k, IntImm(0), IntImm(8), ForKind::kVectorized,
                     Store(c, Add(Load(c, {i}), Load(a, {i, k})), {i})));
  EXPECT_EQ(Fallback(Vectorize(MakePrimFunc("red", {a, c}, red))->body), "scalar_store");
  // Triangular inner loop.
  Stmt tri = For(j, IntImm(0), IntImm(8), ForKind::kVectorized,
                 For(k, IntImm(0), j, ForKind::kSerial, Store(a, FloatImm(1), {j, k})));
  EXPECT_EQ(Fallback(Vectorize(MakePrimFunc("tri", {a, c}, tri))->body),
            "inner_loop_depends_on_lane");
  // Symbolic extent.
  Buffer s = MakeBuffer("S", kF32, {n});
  Stmt sym = For(j, IntImm(0), n, ForKind::kVectorized, Store(s, FloatImm(1), {j}));
  EXPECT_EQ(Fallback(Vectorize(MakePrimFunc("sym", {s}, sym), {{"n", 5}})->body),
            "extent_not_constant");
  // Allocation inside.
  Buffer t = MakeBuffer("T", kF32, {IntImm(1)});
  Stmt alloc = For(
      j, IntImm(0), IntImm(8), ForKind::kVectorized,
      Allocate(t, Seq({Store(t, Load(c, {j}), {IntImm(0)}), Store(c, Load(t, {IntImm(0)}), {j})})));
  EXPECT_EQ(Fallback(Vectorize(MakePrimFunc("alloc", {a, c}, alloc))->body), "allocate_inside");
  // Nested vectorized loops: the inner one wins.
  Stmt nested =
      For(i, IntImm(0), IntImm(8), ForKind::kVectorized,
          For(j, IntImm(0), IntImm(8), ForKind::kVectorized, Store(a, Load(a, {i, j}), {i, j})));
  PrimFunc g = Vectorize(MakePrimFunc("nested", {a, c}, nested));
  EXPECT_EQ(Fallback(g->body), "nested_vector");
  EXPECT_THAT(ToText(g), HasSubstr("A[broadcast(i, 8), ramp(0, 1, 8)]"));
}

TEST(VectorizeLoopTest, ScalarConditionStaysAnIf) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {IntImm(4), IntImm(8)});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = For(i, IntImm(0), IntImm(4), ForKind::kSerial,
                  For(j, IntImm(0), IntImm(8), ForKind::kVectorized,
                      IfThenElse(LT(i, IntImm(2)), Store(a, FloatImm(1), {i, j}),
                                 Store(a, FloatImm(2), {i, j}))));
  PrimFunc g = Vectorize(MakePrimFunc("f", {a}, body));
  EXPECT_THAT(ToText(g), HasSubstr("if ((i < 2))"));
  EXPECT_EQ(Fallback(g->body), "");
}

}  // namespace
}  // namespace kiln::tir::transform
