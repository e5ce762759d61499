// Parser tests: what each construct builds, error messages (text and
// line:column), and robustness (random bytes, every prefix of a valid file,
// deep nesting) — no input may crash.
#include "ir/parser.h"

#include <random>
#include <string>

#include "gtest/gtest.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/printer.h"
#include "ir/structural.h"

namespace kiln {
namespace {

// The error message of parsing `text` as a module ("" if it parsed).
std::string ModuleError(absl::string_view text) {
  auto m = ParseModule(text);
  return m.ok() ? "" : std::string(m.status().message());
}

constexpr const char* kValid = R"(#[version = "0.1"]
// A small module exercising most constructs.
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(4, 3, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], channels=4, kernel_size=[3, 3]);
  %1 = nn.relu(%0);  /* a comment */
  let %f = fn (%y: Tensor[(1, 4, 8, 8), float32]) { add(%y, 1f) };
  %2 = (%1, @len<int32>(Cons(1, Nil)));
  %3 = if (true) { %f(%2.0) } else { %1 };
  %4 = meta[Constant][0];
  add(%3, %4)
}

def @len<A>(%l: List[A]) -> int32 {
  match (%l) {
    Cons(_, %t) => add(1, @len<A>(%t)),
    Nil => 0,
  }
}

#[metadata]
meta[Constant][0] = Tensor[(4, 1, 1), float32] b64"AACAPwAAAEAAAEBAAACAQA==";
)";

TEST(ParserTest, ValidModule) {
  auto m = ParseModule(kValid, "valid.kir");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->functions().size(), 2u);
  EXPECT_EQ(m->functions()[0].first->name, "main");
  EXPECT_EQ(m->functions()[1].first->name, "len");
  auto main = m->Lookup("main");
  ASSERT_TRUE(main.ok());
  const auto* add = (*main)->body.as<LetNode>();
  ASSERT_NE(add, nullptr) << "the let is the body";
  EXPECT_EQ(add->var->name_hint, "f");
  const auto* c = add->body.as<CallNode>()->args[1].as<ConstantNode>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->data->GetAsDouble(3), 4.0);
}

TEST(ParserTest, AttributesAreTypedStructs) {
  auto e = ParseExpr("nn.conv2d(%x, %w, strides=[2, 2], channels=4, out_dtype=\"float16\")",
                     {MakeVar("x"), MakeVar("w")});
  ASSERT_TRUE(e.ok()) << e.status();
  const auto* a = e->as<CallNode>()->attrs.as<Conv2DAttrs>();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->strides, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a->channels, 4);
  EXPECT_EQ(a->out_dtype, DataType::Float(16));
  EXPECT_EQ(a->padding, (std::vector<int64_t>{0, 0}));  // default kept
}

TEST(ParserTest, GraphBindingsShareNodes) {
  Var x = MakeVar("x");
  auto e = ParseExpr("%0 = exp(%x);\n%1 = add(%0, %0);\nmultiply(%1, %0)", {x});
  ASSERT_TRUE(e.ok()) << e.status();
  const auto* mul = e->as<CallNode>();
  const auto* add = mul->args[0].as<CallNode>();
  EXPECT_EQ(add->args[0].get(), add->args[1].get());
  EXPECT_EQ(add->args[0].get(), mul->args[1].get());
  EXPECT_EQ(add->args[0].as<CallNode>()->args[0].get(), x.get());
}

TEST(ParserTest, SpansAreSet) {
  auto e = ParseExpr("%0 = exp(%x);\n  add(%0, 1f)", {MakeVar("x")});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ((*e)->span.line, 2);
  EXPECT_EQ((*e)->span.column, 3);
  const auto* add = e->as<CallNode>();
  EXPECT_EQ(add->args[0]->span.line, 1);
  EXPECT_EQ(add->args[0]->span.column, 6);
  EXPECT_EQ(add->args[1]->span.column, 11);
}

TEST(ParserTest, TypesParse) {
  struct Case {
    const char* in;
    const char* out;
  } cases[] = {
      {"Tensor[(1, 3), float32]", "Tensor[(1, 3), float32]"},
      {"Tensor[(), int8]", "Tensor[(), int8]"},
      {"float32", "Tensor[(), float32]"},
      {"Tensor[(n, ?, (n * 4), (n + 1), (m / 2), (m % 2)), float16]",
       "Tensor[(n, ?, (n * 4), (n + 1), (m / 2), (m % 2)), float16]"},
      {"(Tensor[(2,), float32], bool)", "(Tensor[(2,), float32], Tensor[(), bool])"},
      {"(int32,)", "(Tensor[(), int32],)"},
      {"()", "()"},
      {"fn <T>(T, int64) -> T", "fn <T>(T, Tensor[(), int64]) -> T"},
      {"ref(float32)", "ref(Tensor[(), float32])"},
      {"_", "_"},
  };
  for (const Case& c : cases) {
    auto t = ParseType(c.in);
    ASSERT_TRUE(t.ok()) << c.in << ": " << t.status();
    EXPECT_EQ(TypeToString(*t), c.out);
  }
  auto sym = ParseType("Tensor[(((n * 4) / 4),), float32]");
  ASSERT_TRUE(sym.ok());
  EXPECT_EQ(TypeToString(*sym), "Tensor[(n,), float32]");  // Dim operators fold
}

TEST(ParserTest, ScalarConstants) {
  struct Case {
    const char* in;
    DataType dt;
    double value;
  } cases[] = {
      {"1f", DataType::Float(32), 1},         {"1.5f", DataType::Float(32), 1.5},
      {"-2f", DataType::Float(32), -2},       {"1e-05f", DataType::Float(32), 1e-05f},
      {"2f16", DataType::Float(16), 2},       {"3f64", DataType::Float(64), 3},
      {"3", DataType::Int(32), 3},            {"3i64", DataType::Int(64), 3},
      {"-3i8", DataType::Int(8), -3},         {"3u8", DataType::UInt(8), 3},
      {"true", DataType::Bool(), 1},          {"false", DataType::Bool(), 0},
  };
  for (const Case& c : cases) {
    auto e = ParseExpr(c.in);
    ASSERT_TRUE(e.ok()) << c.in << ": " << e.status();
    const auto* k = e->as<ConstantNode>();
    ASSERT_NE(k, nullptr) << c.in;
    EXPECT_EQ(k->data->dtype(), c.dt) << c.in;
    EXPECT_EQ(k->data->ndim(), 0) << c.in;
    EXPECT_EQ(k->data->GetAsDouble(0), c.value) << c.in;
  }
}

TEST(ParserTest, DefinitionsInAnyOrderAndMutualRecursion) {
  auto m = ParseModule(R"(
def @even(%n: int32) -> bool { if (equal(%n, 0)) { true } else { @odd(subtract(%n, 1)) } }
def @odd(%n: int32) -> bool { if (equal(%n, 0)) { false } else { @even(subtract(%n, 1)) } }
def @main() { @even(Suc(Zero)) }
type Nat { Zero, Suc(Nat) }
)");
  ASSERT_TRUE(m.ok()) << m.status();  // the parser does not type-check
  GlobalVar odd = *m->GetGlobalVar("odd");
  const auto* even_if = (*m->Lookup("even"))->body.as<IfNode>();
  EXPECT_EQ(even_if->false_branch.as<CallNode>()->op.get(), odd.get());
  ASSERT_EQ(m->type_defs().size(), 1u);
  EXPECT_EQ(m->type_defs()[0]->constructors[1]->name, "Suc");
}

TEST(ParserTest, ShadowingAndLetSelfReference) {
  Var x = MakeVar("x");
  auto e = ParseExpr(R"(
let %x = add(%x, 1f);
let %f = fn (%i: int32) { %f(%i) };
(%x, %f))",
                     {x});
  ASSERT_TRUE(e.ok()) << e.status();
  const auto* l1 = e->as<LetNode>();
  ASSERT_NE(l1, nullptr);
  // The value's %x is the outer %x: only a function value sees its own let var.
  EXPECT_EQ(l1->value.as<CallNode>()->args[0].get(), x.get());
  EXPECT_NE(l1->var.get(), x.get());
  const auto* l2 = l1->body.as<LetNode>();
  const auto* fn = l2->value.as<FunctionNode>();
  EXPECT_EQ(fn->body.as<CallNode>()->op.get(), l2->var.get());
  const auto* tup = l2->body.as<TupleNode>();
  EXPECT_EQ(tup->fields[0].get(), l1->var.get());
}

// Found by //tests/fuzz:kir_parse_fuzz_test: a let value that used its own
// variable (`ref(%r.1)`) parsed, and the printer hoisted `%r.1` above the
// `let`, so its output did not parse ("undefined variable %r"). Only a
// function value sees its own let variable; any other value reads the
// variables bound before the `let`.
TEST(ParserTest, LetValueSelfReferenceIsOnlyForFunctions) {
  const char* text = R"(
def @main(%p: (Tensor[(2,), float32], Tensor[(), int32])) {
  let %r = ref(%r.1);
  ref_read(%r)
}
)";
  EXPECT_EQ(ModuleError(text), "<input>:3:16: undefined variable %r");
  auto m = ParseModule(R"(
def @main(%r: (Tensor[(2,), float32], Tensor[(), int32])) {
  let %r = ref(%r.1);
  let %u = ref_write(%r, (%r.0, 1));
  ref_read(%r)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::string printed = PrintModule(*m);
  auto again = ParseModule(printed);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << printed;
  EXPECT_TRUE(ModuleEqual(*m, *again)) << printed;
}

// ---- Errors -----------------------------------------------------------------

TEST(ParserTest, SyntaxErrorsNamePositionFoundAndExpected) {
  EXPECT_EQ(ModuleError("def @main(%x) {\n  %0 = nn.relu(%x;\n  %0\n}"),
            "<input>:2:18: expected ',' or ')' but found ';'");
  EXPECT_EQ(ModuleError("def @main(%x) {\n  %0 = nn.relu(%x)\n  %0\n}"),
            "<input>:3:3: expected ';' but found '%0'");
  EXPECT_EQ(ModuleError("def main() { 1 }"),
            "<input>:1:5: expected a global name like @main but found 'main'");
  EXPECT_EQ(ModuleError("fn () { 1 }"),
            "<input>:1:1: expected 'def', 'type' or '#[metadata]' but found 'fn'");
  EXPECT_EQ(ModuleError("def @f() { if (true) { 1 } }"),
            "<input>:1:28: expected 'else' but found '}'");
  EXPECT_EQ(ModuleError("def @f() {\n}"), "<input>:2:1: expected an expression but found '}'");
  EXPECT_EQ(ModuleError("def @f() { 1 "), "<input>:1:14: expected '}' but found end of input");
}

TEST(ParserTest, UndefinedNames) {
  EXPECT_EQ(ModuleError("def @main(%x) {\n  %0 = add(%x, 1f);\n  add(%0, %y)\n}"),
            "<input>:3:11: undefined variable %y");
  EXPECT_EQ(ModuleError("def @main() { @nope(1) }"),
            "<input>:1:15: undefined global function @nope");
  EXPECT_EQ(ModuleError("def @main(%x) {\n  nn.conv3x(%x)\n}"),
            "<input>:2:3: unknown operator 'nn.conv3x'");
  EXPECT_EQ(ModuleError("def @main(%x: Tensor[(1,), floot32]) { %x }"),
            "<input>:1:28: unknown data type 'floot32'; expected one of float16/32/64, bfloat16, "
            "int8/16/32/64, uint8/16/32/64, bool");
  EXPECT_EQ(ModuleError("def @main(%x: Foo[int32]) { %x }"),
            "<input>:1:15: unknown type 'Foo': not a data type, a type parameter in scope or a "
            "type defined in the module");
  EXPECT_EQ(ModuleError("def @main(%x) { match (%x) { Some(%y) => %y } }"),
            "<input>:1:30: unknown constructor 'Some' in pattern");
  // A let variable is not visible after its block.
  EXPECT_EQ(ModuleError("def @main() { %0 = { let %a = 1; %a }; %a }"),
            "<input>:1:40: undefined variable %a");
  // Free variables are an error unless given.
  auto e = ParseExpr("add(%x, 1f)");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "<input>:1:5: undefined variable %x");
}

TEST(ParserTest, CallErrors) {
  EXPECT_EQ(ModuleError("def @main(%x, %w, %b) {\n  nn.conv2d(%x, %w, %b)\n}"),
            "<input>:2:3: operator nn.conv2d takes 2 arguments, got 3");
  EXPECT_EQ(ModuleError("def @main(%x, %w) { nn.conv2d(%x, %w, stride=[1, 1]) }"),
            "<input>:1:39: nn.conv2d: unknown attribute 'stride' for Conv2DAttrs (known: "
            "strides, padding, dilation, groups, channels, kernel_size, data_layout, "
            "kernel_layout, out_layout, out_dtype)");
  EXPECT_EQ(ModuleError("def @main(%x, %w) { nn.conv2d(%x, %w, groups=\"two\") }"),
            "<input>:1:39: nn.conv2d: attribute 'groups' expects an integer, got a string "
            "(\"two\")");
  EXPECT_EQ(ModuleError("def @main(%x) { nn.relu(%x, alpha=1) }"),
            "<input>:1:29: operator nn.relu takes no attributes, got 'alpha'");
  EXPECT_EQ(ModuleError("def @main(%x) { nn.softmax(%x, axis=1, axis=2) }"),
            "<input>:1:40: attribute 'axis' is given twice");
  EXPECT_EQ(ModuleError("def @main() { 300i8 }"),
            "<input>:1:15: integer constant 300 does not fit in int8");
}

TEST(ParserTest, DefinitionErrors) {
  EXPECT_EQ(ModuleError("def @f() { 1 }\ndef @f() { 2 }"),
            "<input>:2:5: duplicate definition of @f (first defined at 1:5)");
  EXPECT_EQ(ModuleError("type T { A }\ntype T { B }"),
            "<input>:2:6: duplicate definition of type T (first defined at 1:6)");
  EXPECT_EQ(ModuleError("def @f(%x, %x) { %x }"), "<input>:1:14: parameter %x appears twice");
}

TEST(ParserTest, MetadataErrors) {
  EXPECT_EQ(ModuleError("def @f() { meta[Constant][0] }"),
            "<input>:1:12: missing meta entry meta[Constant][0]: the text has no #[metadata] "
            "section (was it printed with emit_metadata=false?)");
  EXPECT_EQ(ModuleError("def @f() { meta[Constant][1] }\n#[metadata]\n"
                        "meta[Constant][0] = Tensor[(1,), int8] b64\"AQ==\";\n"),
            "<input>:1:12: missing meta entry meta[Constant][1]: the #[metadata] section does "
            "not define it");
  EXPECT_EQ(ModuleError("def @f() { meta[Constant][0] }\n#[metadata]\n"
                        "meta[Constant][0] = Tensor[(2,), int8] b64\"AQ==\";\n"),
            "<input>:3:43: meta[Constant][0]: " +
                std::string(HostTensor::FromBytes(DataType::Int(8), {2}, "\1", 1)
                                .status()
                                .message()));
}

TEST(ParserTest, LexicalErrors) {
  EXPECT_EQ(ModuleError("def @f() {\n  /* never closed\n  1\n}"),
            "<input>:2:3: unterminated comment: '/*' has no matching '*/'");
  EXPECT_EQ(ModuleError("def @f() { nn.gelu(%x, approximate=\"tanh) }"),
            "<input>:1:36: unterminated string literal");
  EXPECT_EQ(ModuleError("def @f() { $ }"), "<input>:1:12: unexpected character '$'");
  auto m = ParseModule("def @f() {\n\n 1 2 }", "model.kir");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "model.kir:3:4: expected '}' but found number '2'");
}

TEST(ParserTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '(');
  auto e = ParseExpr(deep + "1" + std::string(100000, ')'));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("nesting is deeper than 256 levels"), std::string::npos)
      << e.status();
  auto t = ParseType(std::string(50000, '(') + "int8" + std::string(50000, ')'));
  EXPECT_FALSE(t.ok());
  std::string blocks;
  for (int i = 0; i < 50000; ++i) blocks += "{ ";
  EXPECT_FALSE(ParseExpr(blocks + "1").ok());
  // Moderate nesting is fine.
  auto ok = ParseExpr(std::string(200, '(') + "1" + std::string(200, ')'));
  EXPECT_TRUE(ok.ok()) << ok.status();
}

TEST(ParserTest, RandomBytesNeverCrash) {
  std::mt19937 rng(1234);
  const std::string alphabet =
      "%@()[]{}<>,;:=.-?#_\"/* \n\tabcfnimtu0123456789 letifmatchdefrefTensormeta";
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s;
    int len = static_cast<int>(rng() % 120);
    for (int k = 0; k < len; ++k) {
      if (i % 2) {
        s += static_cast<char>(rng() % 256);
      } else {
        s += alphabet[rng() % alphabet.size()];
      }
    }
    parsed += ParseModule(s).ok();
    parsed += ParseExpr(s).ok();
    parsed += ParseType(s).ok();
  }
  EXPECT_GE(parsed, 0);
}

TEST(ParserTest, EveryPrefixOfAValidFileFailsCleanly) {
  const std::string text = kValid;
  ASSERT_TRUE(ParseModule(text).ok());
  for (size_t n = 0; n < text.size(); ++n) {
    auto m = ParseModule(text.substr(0, n));
    if (!m.ok()) {
      EXPECT_EQ(m.status().message().rfind("<input>:", 0), 0u) << m.status();
    }
  }
  // Token-level mutations: drop each character once.
  for (size_t n = 0; n < text.size(); ++n) {
    std::string s = text;
    s.erase(n, 1);
    (void)ParseModule(s);
  }
}

TEST(ParserTest, ParseExprWithMetadataAndGlobals) {
  auto e = ParseExpr("%0 = meta[Constant][0];\n@f(%0)\n#[metadata]\n"
                     "meta[Constant][0] = Tensor[(2,), int8] b64\"AQI=\";\n");
  ASSERT_TRUE(e.ok()) << e.status();
  const auto* c = e->as<CallNode>();
  EXPECT_EQ(c->op.as<GlobalVarNode>()->name, "f");
  EXPECT_EQ(c->args[0].as<ConstantNode>()->data->GetAsInt64(1), 2);
}

TEST(ParserTest, HundredThousandBindingsParseIteratively) {
  std::string text = "def @main(%x: Tensor[(4,), float32]) {\n  %0 = add(%x, 1f);\n";
  for (int i = 1; i < 100000; ++i) absl::StrAppend(&text, "  %", i, " = add(%", i - 1, ", 1f);\n");
  text += "  %99999\n}\n";
  auto m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  std::string printed = PrintModule(*m);
  EXPECT_NE(printed.find("  add(%99998, 1f)\n}"), std::string::npos);
}

}  // namespace
}  // namespace kiln
