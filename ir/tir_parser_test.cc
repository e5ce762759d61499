// File: ir/tir_parser_test.cc
#include "ir/tir_parser.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"

namespace kiln::tir {
namespace {

const DataType kF32 = DataType::Float(32);
const DataType kI32 = DataType::Int(32);

// print -> parse -> print is the identity on the text.
void ExpectRoundTrip(const PrimFunc& f) {
  std::string text = ToText(f);
  absl::StatusOr<PrimFunc> g = ParsePrimFunc(text);
  ASSERT_TRUE(g.ok()) << g.status() << "\n" << text;
  EXPECT_EQ(ToText(*g), text);
}

// parse -> print gives back the text exactly.
void ExpectFixpoint(const std::string& text) {
  absl::StatusOr<std::vector<PrimFunc>> fs = ParsePrimFuncs(text);
  ASSERT_TRUE(fs.ok()) << fs.status() << "\n" << text;
  std::string out;
  for (const PrimFunc& f : *fs) out += ToText(f);
  EXPECT_EQ(out, text);
}

std::string ErrorOf(absl::string_view text) {
  absl::StatusOr<std::vector<PrimFunc>> fs = ParsePrimFuncs(text, "t.tir");
  if (fs.ok()) return "OK";
  return std::string(fs.status().message());
}

TEST(TirParserTest, PrintsTheDocumentedFormat) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {n, IntImm(16)});
  Buffer out = MakeBuffer("T_out", kF32, {n, IntImm(16)});
  Var i = MakeVar("ax0");
  Var j = MakeVar("ax1");
  Stmt body = For(i, IntImm(0), n, ForKind::kParallel,
                  For(j, IntImm(0), IntImm(16), ForKind::kVectorized,
                      Store(out, Max(Add(Load(a, {i, j}), FloatImm(1.0)), FloatImm(0.0)), {i, j})));
  PrimFunc f = MakePrimFunc("fused_add_relu", {a, out}, body, {{"target", "llvm"}});
  EXPECT_EQ(ToText(f),
            "primfunc fused_add_relu(A: float32[n, 16], T_out: float32[n, 16]) attrs {target=\"llvm\"} {\n"
            "  parallel (ax0, 0, n) {\n"
            "    vectorized (ax1, 0, 16) {\n"
            "      T_out[ax0, ax1] = max((A[ax0, ax1] + 1f), 0f)\n"
            "    }\n"
            "  }\n"
            "}\n");
  ExpectRoundTrip(f);
}

// A function that uses every statement and expression kind of the loop IR.
PrimFunc EveryNodeKind() {
  Var n = MakeVar("n");
  Var m = MakeVar("m", kI32);
  Buffer a = MakeBuffer("A", kF32, {n, IntImm(16)});
  Buffer b = WithShape(MakeBuffer("B", kI32, {}), {IntImm(4), IntImm(4)}, {IntImm(4), IntImm(1)});
  Ref<BufferNode> c(new BufferNode(*MakeBuffer("C", DataType::Float(64), {m}, "shared")));
  c->elem_offset = IntImm(8);
  c->data_alignment = 128;
  Buffer cb = c;
  Buffer tmp = MakeBuffer("tmp", kF32, {IntImm(4), IntImm(8)}, "local");

  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Var k = MakeVar("k", kI32);
  Var x = MakeVar("x", kF32);
  Var y = MakeVar("y");
  Var tx = MakeVar("threadIdx.x");
  Var v = MakeVar("v");

  PrimExpr ints = Add(Sub(Mul(i, IntImm(3)), Div(j, IntImm(2))),
                      Add(Mod(i, IntImm(5)), Add(FloorDiv(j, IntImm(4)), FloorMod(i, IntImm(7)))));
  PrimExpr cmp = Or(And(LT(i, j), Not(GE(i, IntImm(-3)))),
                    And(Or(LE(j, n), GT(i, n)), And(EQ(i, j), NE(i, IntImm(0)))));
  PrimExpr fl = Add(Mul(Load(a, {i, j}), FloatImm(0.5)),
                    Sub(Div(x, FloatImm(3.0)), Min(Max(x, FloatImm(-1e-5)), FloatImm(1e20))));
  PrimExpr calls =
      Add(Call(kF32, "exp", {x}),
          Add(Call(kF32, "my_extern", {x, StringImm("say \"hi\"\n")}),
              Add(Call(kF32, "if_then_else", {Call(DataType::Bool(), "likely", {LT(i, n)}), x,
                                               FloatImm(std::numeric_limits<double>::infinity())}),
                  Call(kF32, "reinterpret", {Cast(kI32, x)}, CallEffect::kReadState))));
  PrimExpr consts = Add(Add(Cast(kF32, IntImm(7, DataType::UInt(8))),
                            Cast(kF32, IntImm(-2, DataType::Int(8)))),
                        Add(FloatImm(-std::numeric_limits<double>::infinity(), kF32),
                            Cast(kF32, FloatImm(2.5, DataType::Float(64)))));
  PrimExpr vec = Add(Load(a, {i, Ramp(j, IntImm(1), 4)}),
                     Broadcast(Select(BoolImm(true), x, FloatImm(-0.0)), 4));
  PrimExpr let = Let(v, Mul(i, IntImm(2)), Add(v, Cast(kIndexType, m)));

  Stmt inner = Seq({
      Store(a, fl, {i, j}),
      Store(a, calls, {i, IntImm(0)}),
      Store(a, consts, {Add(i, IntImm(16))}),
      Store(a, vec, {i, Ramp(IntImm(0), IntImm(1), 4)}),
      Store(b, Cast(kI32, Add(ints, let)), {IntImm(1), IntImm(2)}),
      IfThenElse(cmp, Store(cb, FloatImm(1.0, DataType::Float(64)), {Cast(kIndexType, k)}),
                 Store(cb, FloatImm(std::nan(""), DataType::Float(64)), {IntImm(0)})),
      IfThenElse(LT(i, IntImm(2)), Evaluate(Call(kI32, "printf", {StringImm("%d"), k}, CallEffect::kOpaque))),
      Evaluate(Add(i, IntImm(1))),
  });
  Stmt alloc = Allocate(tmp,
                        Seq({Store(tmp, Load(tmp, {j, i}), {i, j}),
                             LetStmt(x, Load(tmp, {IntImm(0), IntImm(1)}), inner)}),
                        "local");
  Stmt with_assert = Seq({AssertStmt(GT(n, IntImm(0)), "n must be positive", NoOp()),
                          LetStmt(y, Add(n, IntImm(1)), Store(a, FloatImm(0.0), {y, IntImm(0)})),
                          alloc});
  Stmt loops = For(
      i, IntImm(0), n, ForKind::kParallel,
      For(j, IntImm(0), IntImm(16), ForKind::kUnrolled,
          For(k, IntImm(0, kI32), m, ForKind::kVectorized, with_assert, "",
              {{"pragma_unroll_explicit", "0"}, {"odd key", "a \"b\""}})));
  IterVar iv = MakeIterVar({IntImm(0), IntImm(32)}, tx, IterKind::kThread, "threadIdx.x");
  Stmt body = Seq({
      AttrStmt(iv, "thread_extent", IntImm(32),
               For(MakeVar("w"), IntImm(0), IntImm(2), ForKind::kThreadBinding,
                   Store(a, Cast(kF32, tx), {tx, IntImm(0)}), "threadIdx.y")),
      AttrStmt(a, "storage_alignment", IntImm(64), loops),
      AttrStmt(nullptr, "pragma", StringImm("x"), NoOp()),
  });
  return MakePrimFunc("every_kind", {a, b, cb}, body,
                      {{"target", "llvm -mcpu=native"}, {"kiln.op_names", "add,relu"}});
}

TEST(TirParserTest, RoundTripsEveryNodeKind) {
  PrimFunc f = EveryNodeKind();
  std::string text = ToText(f);
  // A few spellings the round trip relies on.
  EXPECT_NE(text.find("B: int32[4, 4] strides=[4, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("C: float64[m: int32] offset=8 align=128 scope=\"shared\""), std::string::npos)
      << text;
  EXPECT_NE(text.find("vectorized (k: int32, 0_int32, m) \"odd key\"=\"a \\\"b\\\"\" "
                      "pragma_unroll_explicit=\"0\" {"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("let x: float32 = tmp[0, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("allocate tmp: float32[4, 8] local"), std::string::npos) << text;
  EXPECT_NE(text.find("my_extern:float32(x, \"say \\\"hi\\\"\\n\")"), std::string::npos) << text;
  EXPECT_NE(text.find("reinterpret:float32:read_state(int32(x))"), std::string::npos) << text;
  EXPECT_NE(text.find("printf:int32:opaque(\"%d\", k)"), std::string::npos) << text;
  EXPECT_NE(text.find("(let v = (i * 2) in (v + int64(m)))"), std::string::npos) << text;
  EXPECT_NE(text.find("-inff"), std::string::npos) << text;
  EXPECT_NE(text.find("nan_float64"), std::string::npos) << text;
  EXPECT_NE(text.find("evaluate((i + 1))"), std::string::npos) << text;
  EXPECT_NE(text.find("attr iter_var(threadIdx.x, [0, 32], thread, \"threadIdx.x\") "
                      "\"thread_extent\" = 32 {"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("assert((n > 0), \"n must be positive\") {"), std::string::npos) << text;
  ExpectRoundTrip(f);
}

TEST(TirParserTest, ParsedFunctionHasTheRightNodes) {
  absl::StatusOr<PrimFunc> f = ParsePrimFunc(R"(
    primfunc f(A: float32[n, 4], B: int32[4]) {
      for (i, 0, n) {
        let x: float32 = A[i, 0]
        A[i, 1] = exp(x)
        B[i] = int32(floormod(i, 4))
      }
    }
  )");
  ASSERT_TRUE(f.ok()) << f.status();
  const PrimFuncNode& fn = **f;
  ASSERT_EQ(fn.params.size(), 2u);
  const Var& n = fn.params[0]->shape[0];
  EXPECT_EQ(n->kind, ExprKind::kVar);
  EXPECT_EQ(n->dtype, kIndexType);
  const StmtNode& loop = *fn.body;
  ASSERT_EQ(loop.kind, StmtKind::kFor);
  EXPECT_EQ(loop.b.get(), n.get());  // the extent is the shape var itself
  const StmtNode& let = *loop.body0();
  ASSERT_EQ(let.kind, StmtKind::kLetStmt);
  EXPECT_EQ(let.var->dtype, kF32);
  const StmtNode& seq = *let.body0();
  ASSERT_EQ(seq.kind, StmtKind::kSeq);
  ASSERT_EQ(seq.body.size(), 2u);
  const StmtNode& st = *seq.body[0];
  EXPECT_EQ(st.buffer.get(), fn.params[0].get());
  EXPECT_EQ(st.a->kind, ExprKind::kCall);
  EXPECT_EQ(st.a->dtype, kF32);
  EXPECT_EQ(st.a->args[0].get(), let.var.get());
  EXPECT_EQ(st.indices[0].get(), loop.var.get());
  EXPECT_EQ(seq.body[1]->indices.size(), 1u);
}

TEST(TirParserTest, PrintedProgramsAreFixpoints) {
  ExpectFixpoint(
      "primfunc copy(A: float32[16], B: float32[16]) {\n"
      "  for (i, 0, 16) {\n"
      "    B[i] = A[i]\n"
      "  }\n"
      "}\n"
      "primfunc scale(A: float32[n, m], B: float32[n, m]) attrs {target=\"llvm\"} {\n"
      "  parallel (i, 0, n) {\n"
      "    for (j, 0, m) {\n"
      "      if ((j < (m - 1))) {\n"
      "        B[i, j] = (A[i, j] * 2.5f)\n"
      "      } else {\n"
      "        B[i, j] = 0f\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "  for (i, 0, n) {\n"
      "    no_op\n"
      "  }\n"
      "}\n");
  ExpectFixpoint(
      "primfunc lets(A: int32[8]) {\n"
      "  let x = 3\n"
      "  let y: int32 = 4_int32 {\n"
      "    A[x] = y\n"
      "  }\n"
      "  allocate T: int32[8] shared\n"
      "  assert((x < 8), \"x in range\")\n"
      "  unrolled (i, 0, 8) {\n"
      "    T[i] = select((i == x), A[i], int32((let z = (i * i) in floordiv(z, 3))))\n"
      "  }\n"
      "}\n");
  ExpectFixpoint(
      "primfunc vec(A: float32[64], B: float64[64]) {\n"
      "  vectorized (i, 0, 16) {\n"
      "    A[ramp((i * 4), 1, 4)] = (A[ramp((i * 4), 1, 4)] + broadcast(1e-05f, 4))\n"
      "    B[i] = float64(min(max(A[i], -3.4028234663852886e+38f), inff))\n"
      "  }\n"
      "  thread_binding (tx, 0, 32) \"threadIdx.x\" {\n"
      "    B[tx] = (0.1_float64 + sqrt(B[tx]))\n"
      "  }\n"
      "}\n");
}

TEST(TirParserTest, HandWrittenTextWithCommentsAndPrecedence) {
  absl::StatusOr<PrimFunc> f = ParsePrimFunc(R"(
// CHECK-LABEL: primfunc f
# a shell-style comment
primfunc f(A: float32[16], B: int32[16]) {   // trailing comment
  for (i, 0, 16)
  {
    B[i] = i * 2 + 1 - floordiv(i, 4) % 3    # precedence: ((i*2)+1) - (floordiv % 3)
    A[i] = A[i] * 2 + 1      // literals take the other operand's type
    if i < 4 && !(i == 2) || i >= 10 {
      A[i] = -A[i]
    } else if i == 5 {
      A[i] = -1.5
    }
  }
}
)");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(ToText(*f),
            "primfunc f(A: float32[16], B: int32[16]) {\n"
            "  for (i, 0, 16) {\n"
            "    B[i] = (((i * 2) + 1) - (floordiv(i, 4) % 3))\n"
            "    A[i] = ((A[i] * 2f) + 1f)\n"
            "    if ((((i < 4) && !(i == 2)) || (i >= 10))) {\n"
            "      A[i] = (0f - A[i])\n"
            "    } else {\n"
            "      if ((i == 5)) {\n"
            "        A[i] = -1.5f\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(TirParserTest, ScopesAndShadowing) {
  // Sibling loops may reuse a name; a let may shadow an outer variable.
  absl::StatusOr<PrimFunc> f = ParsePrimFunc(R"(
    primfunc f(A: int32[4]) {
      for (i, 0, 4) { A[i] = 1_int32 }
      for (i, 0, 4) {
        let i = 2
        A[i] = 0_int32
      }
    }
  )");
  ASSERT_TRUE(f.ok()) << f.status();
  std::string text = ToText(*f);
  EXPECT_NE(text.find("  for (i, 0, 4) {\n    A[i] = 1_int32\n  }\n  for (i, 0, 4) {\n"
                      "    let i_1 = 2\n    A[i_1] = 0_int32\n"),
            std::string::npos)
      << text;
  ExpectFixpoint(text);
}

TEST(TirParserTest, PrinterKeepsNamesValidAndUnambiguous) {
  Var a = MakeVar("for");
  Var b = MakeVar("x-y");
  Var c = MakeVar("");
  Var d = MakeVar("inff");
  Var e = MakeVar("1st");
  Buffer buf = MakeBuffer("out.v1", kIndexType.is_int() ? DataType::Int(64) : kF32, {IntImm(4)});
  Stmt s = LetStmt(a, IntImm(1),
                   LetStmt(b, IntImm(2),
                           LetStmt(c, IntImm(3),
                                   LetStmt(d, IntImm(4),
                                           LetStmt(e, IntImm(5),
                                                   Store(buf, Add(Add(a, b), Add(c, Add(d, e))),
                                                         {IntImm(0)}))))));
  PrimFunc f = MakePrimFunc("odd names", {buf}, s);
  std::string text = ToText(f);
  EXPECT_NE(text.find("primfunc \"odd names\"(out.v1: int64[4])"), std::string::npos) << text;
  EXPECT_NE(text.find("let for_1 = 1"), std::string::npos) << text;
  EXPECT_NE(text.find("let x_y = 2"), std::string::npos) << text;
  EXPECT_NE(text.find("let v = 3"), std::string::npos) << text;
  EXPECT_NE(text.find("let inff_1 = 4"), std::string::npos) << text;
  EXPECT_NE(text.find("let _1st = 5"), std::string::npos) << text;
  ExpectRoundTrip(f);
}

TEST(TirParserTest, SameVarInTwoLoopsAndExtremeConstants) {
  Var i = MakeVar("i");
  Buffer a = MakeBuffer("A", DataType::Int(64), {IntImm(4)});
  Buffer u = MakeBuffer("U", DataType::UInt(64), {IntImm(1)});
  Stmt s = Seq({
      For(i, IntImm(0), IntImm(4), ForKind::kSerial,
          Store(a, IntImm(std::numeric_limits<int64_t>::min()), {i})),
      For(i, IntImm(0), IntImm(4), ForKind::kSerial,
          Store(a, IntImm(std::numeric_limits<int64_t>::max()), {i})),
      Store(u, MaxValue(DataType::UInt(64)), {IntImm(0)}),
  });
  PrimFunc f = MakePrimFunc("f", {a, u}, s);
  std::string text = ToText(f);
  EXPECT_NE(text.find("A[i] = -9223372036854775808\n"), std::string::npos) << text;
  EXPECT_NE(text.find("U[0] = -1_uint64\n"), std::string::npos) << text;
  ExpectRoundTrip(f);
}

TEST(TirParserTest, ParsePrimExprWithGivenVars) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  absl::StatusOr<PrimExpr> e = ParsePrimExpr("floordiv(i * 16 + j, 16) < 3 && j != i", {i, j});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(ExprDeepEqual(
      *e, And(LT(FloorDiv(Add(Mul(i, IntImm(16)), j), IntImm(16)), IntImm(3)), NE(j, i))));
  Var k = MakeVar("k", kI32);
  absl::StatusOr<PrimExpr> e2 = ParsePrimExpr("k * 2 + -1", {k});
  ASSERT_TRUE(e2.ok()) << e2.status();
  EXPECT_TRUE(ExprDeepEqual(*e2, Add(Mul(k, IntImm(2, kI32)), IntImm(-1, kI32))));
  EXPECT_EQ(ParsePrimExpr("q + 1").status().message(), "<input>:1:1: unknown variable 'q'");
}

// Random expressions of every kind: print, parse, print again.
class RandomExprs {
 public:
  explicit RandomExprs(uint64_t seed) : rng_(seed) {}
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }

  PrimExpr Int(int depth) {
    if (depth == 0 || Pick(4) == 0) {
      switch (Pick(4)) {
        case 0: return i;
        case 1: return j;
        case 2: return IntImm(Pick(41) - 20);
        default: return Cast(kIndexType, k);
      }
    }
    PrimExpr a = Int(depth - 1);
    switch (Pick(12)) {
      case 0: return Add(a, Int(depth - 1));
      case 1: return Sub(a, Int(depth - 1));
      case 2: return Mul(a, Int(depth - 1));
      case 3: return Div(a, Int(depth - 1));
      case 4: return Mod(a, Int(depth - 1));
      case 5: return FloorDiv(a, Int(depth - 1));
      case 6: return FloorMod(a, Int(depth - 1));
      case 7: return Pick(2) ? Min(a, Int(depth - 1)) : Max(a, Int(depth - 1));
      case 8: return Select(Bool(depth - 1), a, Int(depth - 1));
      case 9: return Cast(kIndexType, Float(depth - 1));
      case 10: {
        Var v = MakeVar("t");
        return Let(v, a, Add(v, Int(depth - 1)));
      }
      default: return Load(idx, {a});
    }
  }
  PrimExpr Float(int depth) {
    if (depth == 0 || Pick(4) == 0) {
      static const double kVals[] = {0.5, -1.25, 1e-7, 3e20, 0.1, -0.0, 2.0 / 3.0};
      double v = kVals[Pick(7)];
      return Pick(3) ? FloatImm(v) : FloatImm(v, DataType::Float(64));
    }
    PrimExpr a = Float(depth - 1);
    PrimExpr b = Float(depth - 1);
    if (a->dtype != b->dtype) b = Cast(a->dtype, b);
    switch (Pick(6)) {
      case 0: return Add(a, b);
      case 1: return Mul(a, b);
      case 2: return Call(a->dtype, "exp", {a});
      case 3: return Call(a->dtype, "my_fn", {a, Int(depth - 1)});
      case 4: return Select(Bool(depth - 1), a, b);
      default: return Cast(a->dtype, Load(data, {Int(depth - 1)}));
    }
  }
  PrimExpr Bool(int depth) {
    if (depth == 0 || Pick(5) == 0) return Pick(2) ? BoolImm(Pick(2) == 0) : LT(i, j);
    switch (Pick(6)) {
      case 0: return And(Bool(depth - 1), Bool(depth - 1));
      case 1: return Or(Bool(depth - 1), Bool(depth - 1));
      case 2: return Not(Bool(depth - 1));
      case 3: return Binary(static_cast<ExprKind>(static_cast<int>(ExprKind::kEQ) + Pick(6)),
                            Int(depth - 1), Int(depth - 1));
      case 4: return LT(Float(depth - 1), FloatImm(0.0));
      default: return Call(DataType::Bool(), "likely", {Bool(depth - 1)});
    }
  }

  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Var k = MakeVar("k", kI32);
  Buffer idx = MakeBuffer("idx", DataType::Int(64), {IntImm(64)});
  Buffer data = MakeBuffer("data", kF32, {IntImm(64)});

 private:
  std::mt19937_64 rng_;
};

TEST(TirParserTest, RandomExpressionsRoundTrip) {
  RandomExprs g(99);
  for (int iter = 0; iter < 500; ++iter) {
    PrimExpr e = iter % 3 == 0 ? g.Int(1 + iter % 5) : (iter % 3 == 1 ? g.Float(1 + iter % 4) : g.Bool(1 + iter % 4));
    std::string text = ToText(e);
    absl::StatusOr<PrimExpr> back = ParsePrimExpr(text, {g.i, g.j, g.k}, {g.idx, g.data});
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
    EXPECT_EQ(ToText(*back), text);
    bool has_let = text.find("(let ") != std::string::npos;
    if (!has_let) {
      EXPECT_TRUE(ExprDeepEqual(*back, e)) << text;
    }
  }
}

TEST(TirParserTest, ErrorsNameTheLineAndColumn) {
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  A[0] = x\n}\n"),
            "t.tir:2:10: unknown variable 'x'");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  B[0] = 1f\n}\n"),
            "t.tir:2:3: unknown buffer 'B'");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  A[0] = B[1]\n}\n"),
            "t.tir:2:10: unknown buffer 'B'");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4, 4]) {\n  A[0, 1, 2] = 1f\n}\n"),
            "t.tir:2:4: buffer 'A' has 2 dimensions but 3 indices are given; use 2 indices or 1 "
            "flat index");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4, 4]) {\n  A[5] = 1f\n}\n"), "OK");  // flat
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  A[0] = ((1f + 2f)\n}\n"),
            "t.tir:3:1: expected ')', found '}'");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  A[0] = 1f)\n}\n"),
            "t.tir:2:12: expected a statement, found ')'");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  A[0] = 1f $ 2f\n}\n"),
            "t.tir:2:13: unexpected character '$'");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  for (i, 0, 4) {\n    A[i] = 1f\n"),
            "t.tir:4:1: expected '}' or a statement, found end of input");
  EXPECT_EQ(ErrorOf("primfunc f(A: float33[4]) {}"),
            "t.tir:1:15: unknown data type 'float33'; expected one of float16/32/64, bfloat16, "
            "int8/16/32/64, uint8/16/32/64, bool");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4], A: float32[4]) {}"),
            "t.tir:1:27: parameter 'A' is declared twice");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  A[0] = \"abc\n}"),
            "t.tir:2:10: unterminated string literal");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  A[0] = foo(1f)\n}"),
            "t.tir:2:13: the result type of call 'foo' cannot be inferred; write foo:<dtype>(...)");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  for (i, 0, 4) { A[i] = 1f }\n  A[i] = 2f\n}"),
            "t.tir:3:5: unknown variable 'i'");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  let x = 1\n  A[0] = 12abc\n}"),
            "t.tir:3:10: malformed number '12a...': a literal is digits with an optional f or "
            "_<dtype> suffix (1.5f, 3_int32)");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  x = 1\n}"),
            "t.tir:2:3: unknown variable 'x'");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  let i = 0\n  i = 1\n}"),
            "t.tir:3:3: only a buffer element (A[i, ...]) can be assigned");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  let x = A[0]\n  A[x] = min(1f)\n}"),
            "t.tir:3:10: 'min' takes 2 arguments, got 1");
  EXPECT_EQ(ErrorOf("primfunc f(A: float32[4]) {\n  A[99999999999999999999] = 1f\n}"),
            "t.tir:2:5: integer literal 99999999999999999999 is out of range");
  EXPECT_EQ(ErrorOf("func f() {}"), "t.tir:1:1: expected 'primfunc', found identifier 'func'");
  EXPECT_EQ(ParsePrimFunc("").status().message(), "<input>: expected exactly one primfunc, found 0");
}

TEST(TirParserTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "primfunc f(A: int64[1]) {\n  A[0] = ";
  for (int i = 0; i < 5000; ++i) deep += "(";
  deep += "1";
  for (int i = 0; i < 5000; ++i) deep += ")";
  deep += "\n}\n";
  std::string err = ErrorOf(deep);
  EXPECT_NE(err.find("nesting is deeper than"), std::string::npos) << err;
  // Moderately deep sums (printed fully parenthesized) are fine.
  std::string sum = "primfunc f(A: int64[1]) {\n  A[0] = ";
  for (int i = 0; i < 100; ++i) sum += "(";
  sum += "0";
  for (int i = 0; i < 100; ++i) sum += " + 1)";
  sum += "\n}\n";
  ExpectFixpoint(sum);
}

TEST(TirParserTest, LongLetChainsDoNotRecurse) {
  std::string text = "primfunc f(A: int64[1]) {\n";
  for (int i = 0; i < 3000; ++i) text += "  let x" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  text += "  A[0] = x2999\n}\n";
  ExpectFixpoint(text);
}

}  // namespace
}  // namespace kiln::tir
