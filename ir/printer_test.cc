// Printer tests: exact output, and round trips parse(print(m)) == m
// (structurally, and print(parse(print(m))) == print(m)) for every node and type.
#include "ir/printer.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/parser.h"
#include "ir/structural.h"

namespace kiln {
namespace {

template <typename T>
T Ok(absl::StatusOr<T> s) {
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : T();
}

Module MustParse(absl::string_view text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  return m.ok() ? *std::move(m) : Module();
}

// parse(print(m)) is structurally equal to m and printing is a fixpoint.
std::string ExpectRoundTrip(const Module& m, const PrintOptions& opts = {}) {
  std::string text = PrintModule(m, opts);
  auto m2 = ParseModule(text);
  EXPECT_TRUE(m2.ok()) << m2.status() << "\n" << text;
  if (!m2.ok()) return text;
  auto diff = ModuleDifference(m, *m2);
  EXPECT_FALSE(diff.has_value()) << *diff << "\n" << text;
  if (opts.show_types) {  // parsed nodes carry no checked types
    EXPECT_EQ(PrintModule(*m2), PrintModule(m));
  } else {
    EXPECT_EQ(PrintModule(*m2, opts), text);
  }
  return text;
}

std::string RoundTripText(absl::string_view text) { return ExpectRoundTrip(MustParse(text)); }

TensorType F32(std::vector<int64_t> shape) {
  return MakeTensorType(ShapeFromInts(shape), DataType::Float(32));
}

Expr Call(const char* op, std::vector<Expr> args, Attrs attrs = nullptr) {
  return Ok(MakeCall(Ok(GetOp(op)), std::move(args), std::move(attrs)));
}

Function Fn(std::vector<Var> params, Expr body) { return Ok(MakeFunction(std::move(params), body)); }

Module OneFunction(Function f, const char* name = "main") {
  Module m;
  EXPECT_TRUE(m.AddFunction(name, std::move(f)).ok());
  return m;
}

TEST(PrinterTest, ExactOutput) {
  Var x = MakeVar("x", F32({1, 16}));
  Expr r = Call("nn.relu", {x});
  Expr a = Call("add", {r, MakeScalarConstant(DataType::Float(32), 1)});
  EXPECT_EQ(PrintModule(OneFunction(Fn({x}, a))),
            "#[version = \"0.1\"]\n"
            "\n"
            "def @main(%x: Tensor[(1, 16), float32]) {\n"
            "  %0 = nn.relu(%x);\n"
            "  add(%0, 1f)\n"
            "}\n");
}

TEST(PrinterTest, SharedNodeIsBoundOnceAndStaysOneNode) {
  Var x = MakeVar("x", F32({4}));
  Expr shared = Call("exp", {x});
  Expr a = Call("add", {shared, shared});
  Expr b = Call("multiply", {a, shared});
  Module m = OneFunction(Fn({x}, b));
  std::string text = ExpectRoundTrip(m);
  EXPECT_EQ(text.find("exp(%x)"), text.rfind("exp(%x)")) << text;
  EXPECT_NE(text.find("%1 = add(%0, %0);"), std::string::npos) << text;
  Module m2 = MustParse(text);
  Function f = Ok(m2.Lookup("main"));
  const auto* mul = f->body.as<CallNode>();
  ASSERT_NE(mul, nullptr);
  const auto* add = mul->args[0].as<CallNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->args[0].get(), add->args[1].get());
  EXPECT_EQ(add->args[0].get(), mul->args[1].get());
}

TEST(PrinterTest, AllCoreOpsWithDefaultAttrs) {
  Module m;
  for (const std::string& name : OpRegistry::Global().ListNames()) {
    const OpDef* def = OpRegistry::Global().Find(name);
    ASSERT_NE(def, nullptr);
    int n = def->num_inputs < 0 ? 1 : def->num_inputs;
    std::vector<Var> params;
    std::vector<Expr> args;
    for (int i = 0; i < n; ++i) {
      params.push_back(MakeVar(absl::StrCat("a", i), F32({2, 3})));
      args.push_back(params.back());
    }
    Expr c = Ok(MakeCall(def->op, args));
    std::string fname = name;
    for (char& ch : fname)
      if (ch == '.') ch = '_';
    ASSERT_TRUE(m.AddFunction(fname, Fn(params, c)).ok());
  }
  ExpectRoundTrip(m);
}

TEST(PrinterTest, NonDefaultAttributesOfEveryKind) {
  std::string text = RoundTripText(R"(
def @main(%x: Tensor[(1, 8, 16, 16), float32], %w: Tensor[(8, 8, 3, 3), float32],
          %v: Tensor[(8,), float32], %i: Tensor[(4,), int32]) {
  %0 = nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1,
                 channels=8, kernel_size=[3, 3], data_layout="NCHW", kernel_layout="OIHW",
                 out_layout="NCHW", out_dtype="float32");
  %1 = nn.max_pool2d(%0, pool_size=[2, 2], strides=[2, 2], padding=[0, 0], ceil_mode=true);
  %2 = nn.avg_pool2d(%1, pool_size=[3, 3], count_include_pad=true);
  %3 = nn.global_max_pool2d(%2, layout="NCHW", out_layout="NCHW");
  %4 = nn.batch_norm(%x, %v, %v, %v, %v, axis=1, epsilon=0.001, center=false, scale=false);
  %5 = nn.layer_norm(%x, %v, %v, axis=1, epsilon=1e-12);
  %6 = nn.softmax(%x, axis=1);
  %7 = nn.leaky_relu(%x, alpha=0.2);
  %8 = nn.prelu(%x, %v, axis=1);
  %9 = nn.gelu(%x, approximate="tanh");
  %10 = nn.bias_add(%x, %v, axis=1);
  %11 = nn.pad(%x, 0f, pad_width=[[0, 0], [0, 0], [1, 1], [2, 2]], pad_mode="edge");
  %12 = nn.dropout(%x, rate=0.25);
  %13 = clip(%x, a_min=-1.5, a_max=inf);
  %14 = cast(%x, dtype="float16");
  %15 = sum(%x, axis=[1, 2], keepdims=true, exclude=false);
  %16 = argmax(%x, axis=[1], select_last_index=true);
  %17 = reshape(%x, newshape=[-1, 256], allowzero=true);
  %18 = transpose(%x, axes=[0, 2, 3, 1]);
  %19 = concatenate((%x, %x), axis=1);
  %20 = split(%x, sections=2, axis=1);
  %21 = split(%x, indices=[2, 5], axis=1);
  %22 = strided_slice(%x, begin=[0, 1], end=[1, 4], strides=[1, 2], axes=[0, 1], slice_mode="size");
  %23 = take(%x, %i, axis=1, batch_dims=0, mode="wrap");
  %24 = expand_dims(%x, axis=1, num_newaxis=2);
  %25 = squeeze(%x, axis=[0]);
  %26 = broadcast_to(%v, shape=[2, 8]);
  %27 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW4c");
  %28 = nn.dense(%v, %w, units=8, out_dtype="float32");
  %29 = nn.matmul(%v, %w, transpose_a=true, transpose_b=true);
  %30 = nn.batch_matmul(%x, %x, transpose_a=true, transpose_b=false, out_dtype="float16");
  %31 = mean(%x, axis=none, exclude=true);
  (%1, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21,
   %22, %23, %24, %25, %26, %27, %28, %29, %30, %31)
}
)");
  // Only non-default fields are printed.
  EXPECT_NE(text.find("nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1, 1, 1], channels=8, "
                      "kernel_size=[3, 3], out_layout=\"NCHW\", out_dtype=\"float32\")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("clip(%x, a_min=-1.5, a_max=inf)"), std::string::npos) << text;
  EXPECT_NE(text.find("nn.layer_norm(%x, %v, %v, axis=1, epsilon=1e-12)"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("dilation"), std::string::npos) << text;
}

TEST(PrinterTest, AttributeFloatsRoundTripExactly) {
  Module m = MustParse(R"(
def @main(%x: Tensor[(4,), float32]) { nn.leaky_relu(%x, alpha=0.1) })");
  Function f = Ok(m.Lookup("main"));
  auto a = f->body.as<CallNode>()->attrs->Clone();
  ASSERT_TRUE(SetAttrField(a.get(), "alpha", AttrValue::Float(0.1 + 1e-17 * 3)).ok());
  ASSERT_TRUE(SetAttrField(a.get(), "alpha", AttrValue::Float(1.0 / 3.0)).ok());
  Expr c = Ok(MakeCall(Ok(GetOp("nn.leaky_relu")), {f->params[0]}, a));
  Module m2 = OneFunction(Fn(f->params, c));
  std::string text = ExpectRoundTrip(m2);
  Module m3 = MustParse(text);
  const auto* la = Ok(m3.Lookup("main"))->body.as<CallNode>()->attrs.as<LeakyReluAttrs>();
  ASSERT_NE(la, nullptr);
  EXPECT_EQ(la->alpha, 1.0 / 3.0);
}

TEST(PrinterTest, TuplesClosuresAndRecursion) {
  RoundTripText(R"(
def @main(%x: Tensor[(3,), float32], %n: int32) -> Tensor[(3,), float32] {
  %0 = (%x, %n);
  %1 = %0.0;
  %2 = ();
  %3 = (%1,);
  %c = fn (%y: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
    add(%y, %1)
  };
  let %loop = fn (%i: int32, %acc: Tensor[(3,), float32]) {
    if (equal(%i, 0)) {
      %acc
    } else {
      %loop(subtract(%i, 1), %c(%acc))
    }
  };
  %4 = %loop(%n, %x);
  %5 = @fact(%n);
  %6 = (%2, %3, %5);
  %4
}

def @fact(%n: int32) -> int32 {
  if (less_equal(%n, 1)) { 1 } else { multiply(%n, @fact(subtract(%n, 1))) }
}
)");
}

TEST(PrinterTest, PolymorphicFunctionsAndTypeArgs) {
  std::string text = RoundTripText(R"(
def @id<T>(%x: T) -> T { %x }
def @pair<A, B>(%a: A, %b: B) -> (A, B) { (%a, %b) }
def @apply<A, B>(%f: fn (A) -> B, %a: A) -> B { %f(%a) }
def @main(%x: Tensor[(2,), float32]) {
  %0 = @id<Tensor[(2,), float32]>(%x);
  %1 = @pair<Tensor[(2,), float32], int32>(%0, 3);
  %g = fn <T>(%t: T) -> T { %t };
  %2 = %g<bool>(true);
  (%1, %2, @apply)
}
)");
  EXPECT_NE(text.find("@id<Tensor[(2,), float32]>(%x)"), std::string::npos) << text;
}

constexpr const char* kAdtModule = R"(
type List[A] {
  Cons(A, List[A]),
  Nil,
}

type Tree[A] {
  Leaf(A),
  Node(Tree[A], Tree[A]),
}

type Pair {
  MkPair(int32, List[int32]),
}

def @length<A>(%l: List[A]) -> int32 {
  match (%l) {
    Cons(_, %t) => add(1, @length<A>(%t)),
    Nil => 0,
  }
}

def @sum_tree(%t: Tree[int32]) -> int32 {
  match (%t) {
    Leaf(%v) => %v,
    Node(Leaf(%a), Leaf(%b)) => add(%a, %b),
    Node(%l, %r) => add(@sum_tree(%l), @sum_tree(%r)),
  }
}

def @first_two(%l: List[int32], %p: (int32, List[int32])) -> int32 {
  %0 = match? (%l) {
    Cons(%a, Cons(%b, _)) => add(%a, %b),
  };
  %1 = match (%p) {
    (%x, Nil) => %x,
    (_, %rest) => @length<int32>(%rest),
  };
  %2 = match (MkPair(1, Cons(2, Nil))) {
    MkPair(%k, _) => %k,
  };
  add(add(%0, %1), %2)
}
)";

TEST(PrinterTest, AdtsAndMatch) {
  std::string text = RoundTripText(kAdtModule);
  EXPECT_NE(text.find("match? (%l)"), std::string::npos) << text;
  EXPECT_NE(text.find("Node(Leaf(%a), Leaf(%b)) => {"), std::string::npos) << text;
  EXPECT_NE(text.find("type Tree[A] {\n  Leaf(A),\n  Node(Tree[A], Tree[A]),\n}"),
            std::string::npos)
      << text;
}

TEST(PrinterTest, RefsIfAndSymbolicDims) {
  RoundTripText(R"(
def @main(%x: Tensor[(n, 3), float32], %y: Tensor[((n * 4), ?), float32],
          %z: Tensor[((n + 1), (m / 2), (m % 2), (k - 1)), int8], %c: bool) {
  %0 = ref(%x);
  %1 = ref_read(%0);
  %2 = ref_write(%0, %1);
  %r = ref(0i64);
  %3 = if (%c) { %2 } else { () };
  (%3, %y, %z, ref_read(%r))
}
)");
}

TEST(PrinterTest, ConstantsOfSeveralDtypesGoThroughTheMetaTable) {
  auto tensor = [](DataType dt, std::vector<int64_t> shape, std::vector<uint8_t> bytes) {
    return Ok(MakeConstant(Ref<const HostTensor>(
        Ok(HostTensor::FromBytes(dt, std::move(shape), bytes.data(), bytes.size())))));
  };
  std::vector<Expr> fields = {
      tensor(DataType::Float(32), {2}, {0, 0, 128, 63, 0, 0, 0, 192}),  // [1, -2]
      tensor(DataType::Float(16), {3}, {0, 60, 0, 188, 255, 127}),    // incl. a NaN payload
      tensor(DataType::Int(8), {2, 2}, {1, 255, 127, 128}),
      tensor(DataType::Int(64), {1}, {1, 2, 3, 4, 5, 6, 7, 8}),
      tensor(DataType::Bool(), {2}, {1, 0}),
      tensor(DataType::Float(16), {}, {0, 60}),                        // scalar float16: meta
      tensor(DataType::Float(32), {}, {0, 0, 192, 127}),               // NaN scalar: meta
      tensor(DataType::BFloat16(), {}, {128, 63}),
      MakeScalarConstant(DataType::Float(32), 0.1),
      MakeScalarConstant(DataType::Float(32), -2),
      MakeScalarConstant(DataType::Float(64), 1.0 / 3.0),
      MakeScalarConstant(DataType::Int(32), -7),
      MakeScalarConstant(DataType::Int(64), 1LL << 40),
      MakeScalarConstant(DataType::Int(8), -128),
      MakeScalarConstant(DataType::UInt(8), 255),
      MakeScalarConstant(DataType::Bool(), 1),
      MakeScalarConstant(DataType::Bool(), 0),
  };
  Module m = OneFunction(Fn({}, Ok(MakeTuple(fields))));
  std::string text = ExpectRoundTrip(m);
  EXPECT_NE(text.find("(%0, %1, %2, %3, %4, %5, %6, %7, 0.1f, -2f, 0.3333333333333333f64, -7, "
                      "1099511627776i64, -128i8, 255u8, true, false)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("#[metadata]\nmeta[Constant][0] = Tensor[(2,), float32] b64\"AACAPwAAAMA=\";"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("meta[Constant][7] = Tensor[(), bfloat16] b64\"gD8=\";"), std::string::npos)
      << text;
}

TEST(PrinterTest, SharedConstantIsOneMetaEntry) {
  std::vector<float> v = {1, 2, 3};
  Constant c = Ok(MakeConstant(Ref<const HostTensor>(
      Ok(HostTensor::FromVector(DataType::Float(32), {3}, v)))));
  Var x = MakeVar("x", F32({3}));
  Module m;
  ASSERT_TRUE(m.AddFunction("f", Fn({x}, Call("add", {x, c}))).ok());
  Var y = MakeVar("y", F32({3}));
  ASSERT_TRUE(m.AddFunction("g", Fn({y}, Call("multiply", {c, c}))).ok());
  std::string text = ExpectRoundTrip(m);
  EXPECT_EQ(text.find("meta[Constant][1]"), std::string::npos) << text;
  Module m2 = MustParse(text);
  const auto* f_add = Ok(m2.Lookup("f"))->body.as<CallNode>();
  const auto* g_mul = Ok(m2.Lookup("g"))->body.as<CallNode>();
  EXPECT_EQ(f_add->args[1].get(), g_mul->args[0].get());
}

TEST(PrinterTest, EmitMetadataFalseOmitsTheTable) {
  std::vector<float> v = {1, 2};
  Constant c = Ok(MakeConstant(Ref<const HostTensor>(
      Ok(HostTensor::FromVector(DataType::Float(32), {2}, v)))));
  Module m = OneFunction(Fn({}, c));
  std::string text = PrintModule(m, {.show_types = false, .emit_metadata = false});
  EXPECT_NE(text.find("meta[Constant][0]"), std::string::npos) << text;
  EXPECT_EQ(text.find("#[metadata]"), std::string::npos) << text;
  EXPECT_NE(text.find("// metadata omitted (emit_metadata=false)"), std::string::npos) << text;
  auto parsed = ParseModule(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("missing meta entry meta[Constant][0]"),
            std::string::npos)
      << parsed.status();
}

TEST(PrinterTest, NodeUsedInOneBranchIsPrintedInsideIt) {
  Var c = MakeVar("c", MakeScalarType(DataType::Bool()));
  Var x = MakeVar("x", F32({2}));
  Expr only_then = Call("exp", {x});
  Expr both = Call("log", {x});
  Expr then_b = Call("add", {only_then, both});
  Expr else_b = Call("multiply", {both, both});
  Module m = OneFunction(Fn({c, x}, Ok(MakeIf(c, then_b, else_b))));
  std::string text = ExpectRoundTrip(m);
  EXPECT_EQ(text,
            "#[version = \"0.1\"]\n\n"
            "def @main(%c: Tensor[(), bool], %x: Tensor[(2,), float32]) {\n"
            "  %0 = log(%x);\n"
            "  if (%c) {\n"
            "    %1 = exp(%x);\n"
            "    add(%1, %0)\n"
            "  } else {\n"
            "    multiply(%0, %0)\n"
            "  }\n"
            "}\n")
      << text;
}

// A node used only inside a closure is printed inside it, even when it uses
// only outer variables.
TEST(PrinterTest, ClosureBodyBindingsStayInsideTheClosure) {
  Var x = MakeVar("x", F32({2}));
  Var y = MakeVar("y", F32({2}));
  Expr outer = Call("exp", {x});
  Expr inner = Call("add", {y, outer});
  Function f = Fn({y}, Call("nn.relu", {inner}));
  Expr call = Ok(MakeCall(f, {x}));
  std::string text = ExpectRoundTrip(OneFunction(Fn({x}, call)));
  EXPECT_NE(text.find("  %0 = fn (%y: Tensor[(2,), float32]) {\n    %1 = exp(%x);\n"
                      "    %2 = add(%y, %1);\n    nn.relu(%2)\n  };\n  %0(%x)\n"),
            std::string::npos)
      << text;
}

TEST(PrinterTest, FunctionAttributes) {
  std::string text = RoundTripText(R"(
def @fused(%a: Tensor[(2,), float32], %b: Tensor[(2,), float32], Primitive=1, Compiler="dnnl",
           Scale=0.5, Flags=[1, 2]) {
  add(%a, %b)
}
def @main(%x: Tensor[(2,), float32]) {
  %f = fn (%p, Inline=true) { %p };
  (@fused(%x, %x), %f(%x))
})");
  EXPECT_NE(text.find("def @fused(%a: Tensor[(2,), float32], %b: Tensor[(2,), float32], "
                      "Compiler=\"dnnl\", Flags=[1, 2], Primitive=1, Scale=0.5)"),
            std::string::npos)
      << text;
}

TEST(PrinterTest, LetsPrintFlatInTailAndAsBlocksElsewhere) {
  Var x = MakeVar("x", F32({2}));
  Var a = MakeVar("a");
  Var b = MakeVar("b");
  Expr inner_let = Ok(MakeLet(b, Call("exp", {x}), Call("add", {b, b})));
  Expr use = Call("multiply", {inner_let, x});
  Expr outer = Ok(MakeLet(a, use, Call("nn.relu", {a})));
  std::string text = ExpectRoundTrip(OneFunction(Fn({x}, outer)));
  EXPECT_NE(text.find("  %0 = {\n    let %b = exp(%x);\n    add(%b, %b)\n  };\n"
                      "  let %a = multiply(%0, %x);\n  nn.relu(%a)\n"),
            std::string::npos)
      << text;
}

TEST(PrinterTest, DistinctVarsWithTheSameNameGetDistinctNames) {
  Var x1 = MakeVar("x", F32({2}));
  Var x2 = MakeVar("x", F32({2}));
  Var e = MakeVar("");
  Var d = MakeVar("0");
  Function inner = Fn({x2, e, d}, Call("add", {x1, x2}));
  Module m = OneFunction(Fn({x1}, inner));
  std::string text = ExpectRoundTrip(m);
  EXPECT_NE(text.find("fn (%x_1: Tensor[(2,), float32], %v, %v0)"), std::string::npos) << text;
  EXPECT_NE(text.find("add(%x, %x_1)"), std::string::npos) << text;
}

TEST(PrinterTest, ShowTypes) {
  Var x = MakeVar("x", F32({1, 4}));
  Expr r = Call("nn.relu", {x});
  r->set_checked_type(F32({1, 4}));
  Expr s = Call("nn.softmax", {r});
  s->set_checked_type(F32({1, 4}));
  Module m = OneFunction(Fn({x}, s));
  std::string text = ExpectRoundTrip(m, {.show_types = true});
  EXPECT_NE(text.find("  %0 = nn.relu(%x); /* ty=Tensor[(1, 4), float32] */\n"
                      "  nn.softmax(%0) /* ty=Tensor[(1, 4), float32] */\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(PrintModule(m).find("ty="), std::string::npos);
}

TEST(PrinterTest, PrintExprOpenExpression) {
  Var x = MakeVar("x", F32({2}));
  Var y = MakeVar("y");
  Expr e = Call("add", {Call("exp", {x}), y});
  EXPECT_EQ(PrintExpr(e), "%0 = exp(%x);\nadd(%0, %y)\n");
  EXPECT_EQ(PrintExpr(x), "%x\n");
  auto back = ParseExpr(PrintExpr(e), {x, y});
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(StructuralEqual(e, *back));
}

std::string ReadExample(const std::string& name) {
  std::string path = "examples/" + name;
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    std::string p = std::string(srcdir) + "/kiln/examples/" + name;
    if (std::ifstream(p).good()) path = p;
  }
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(PrinterTest, ExamplesParseAndRoundTrip) {
  for (const char* name : {"resnet_block.kir", "transformer_block.kir"}) {
    SCOPED_TRACE(name);
    std::string text = ReadExample(name);
    ASSERT_FALSE(text.empty());
    auto m = ParseModule(text, name);
    ASSERT_TRUE(m.ok()) << m.status();
    Function f = Ok(m->Lookup("main"));
    EXPECT_GE(f->params.size(), 13u);
    ExpectRoundTrip(*m);
  }
}

TEST(PrinterTest, HundredThousandBindingChain) {
  constexpr int kN = 100000;
  Var x = MakeVar("x", F32({4}));
  Expr e = x;
  Constant one = MakeScalarConstant(DataType::Float(32), 1);
  for (int i = 0; i < kN; ++i) e = Call("add", {e, one});
  Module m = OneFunction(Fn({x}, e));
  std::string text = PrintModule(m);
  EXPECT_NE(text.find("  %99998 = add(%99997, 1f);\n  add(%99998, 1f)\n"), std::string::npos);
  auto m2 = ParseModule(text);
  ASSERT_TRUE(m2.ok()) << m2.status();
  EXPECT_EQ(PrintModule(*m2), text);
}

TEST(PrinterTest, HundredThousandLetChain) {
  constexpr int kN = 100000;
  Var x = MakeVar("x", F32({4}));
  std::vector<Var> vars;
  for (int i = 0; i < kN; ++i) vars.push_back(MakeVar("v"));
  Expr body = vars.back();
  for (int i = kN - 1; i >= 0; --i) {
    Expr prev = i == 0 ? Expr(x) : Expr(vars[i - 1]);
    body = Ok(MakeLet(vars[i], Call("negative", {prev}), body));
  }
  Module m = OneFunction(Fn({x}, body));
  std::string text = PrintModule(m);
  EXPECT_NE(text.find("\n  let %v_99999 = negative(%v_99998);\n  %v_99999\n}"),
            std::string::npos);
  auto m2 = ParseModule(text);
  ASSERT_TRUE(m2.ok()) << m2.status();
  EXPECT_EQ(PrintModule(*m2), text);
}

}  // namespace
}  // namespace kiln
