// File: lowering/vm/compiler_test.cc
//
// The VM compiler on fused modules written by hand (as FuseOps leaves them):
// which modules need the VM, what the program looks like (shape functions
// for symbolic outputs, values freed after their last use, jumps still
// landing on their targets), `?` dims named, and what it refuses.
#include "lowering/vm/compiler.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "types/infer_type.h"

namespace kiln::lowering::vm {
namespace {

Module Typed(const std::string& body) {
  absl::StatusOr<Module> m = ParseModule("#[version = \"0.1\"]\n" + body, "test");
  EXPECT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Module> t = types::InferType(*m);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

const char kChain[] = R"(
def @main(%x: Tensor[(N, 4), float32]) {
  %0 = fn (%p0: Tensor[(N, 4), float32], Primitive=1) { nn.relu(%p0) };
  %1 = %0(%x);
  %2 = fn (%p0: Tensor[(N, 4), float32], Primitive=1) { negative(%p0) };
  %2(%1)
}
)";

TEST(VmCompiler, WhoNeedsTheVm) {
  EXPECT_TRUE(NeedsVm(Typed(kChain)));
  EXPECT_FALSE(NeedsVm(Typed(R"(
def @main(%x: Tensor[(2, 4), float32]) {
  %0 = fn (%p0: Tensor[(2, 4), float32], Primitive=1) { nn.relu(%p0) };
  %0(%x)
}
)")));
  EXPECT_TRUE(NeedsVm(Typed(R"(
def @main(%c: Tensor[(), bool], %x: Tensor[(2,), float32]) {
  if (%c) { %x } else { %x }
}
)")));
}

TEST(VmCompiler, SymbolicOutputsGetShapeFunctionsAndValuesAreFreed) {
  absl::StatusOr<VmCompiled> c = CompileForVm(Typed(kChain));
  ASSERT_TRUE(c.ok()) << c.status();
  // Two fused kernels, each with a shape function.
  EXPECT_EQ(c->num_fused_kernels, 2);
  ASSERT_EQ(c->kernels.size(), 4u);
  EXPECT_EQ(c->program.kernels[1], "fused_nn_relu_shape");
  ASSERT_EQ(c->program.inputs.size(), 1u);
  EXPECT_EQ(c->program.inputs[0].dims, (std::vector<int64_t>{-1, 4}));  // N is variable 0
  EXPECT_EQ(c->program.dim_vars, (std::vector<std::string>{"N"}));
  EXPECT_EQ(c->input_names, (std::vector<std::string>{"x"}));
  const VmFunction& main = c->program.functions[c->program.main];
  // relu's output is freed once negative has read it: a KillRegister after
  // the second kernel call names the register the first call wrote.
  int packed = 0;
  int32_t relu_out = -1;
  bool killed_after_use = false;
  for (const VmInstr& in : main.instrs) {
    if (in.op == KILN_VM_INVOKE_PACKED && in.operands[0] == 0) relu_out = in.operands.back();
    if (in.op == KILN_VM_INVOKE_PACKED) ++packed;
    if (in.op == KILN_VM_KILL_REGISTER && in.operands[0] == relu_out && packed == 4) {
      killed_after_use = true;
    }
  }
  EXPECT_EQ(packed, 4);  // two shape functions, two kernels
  EXPECT_TRUE(killed_after_use) << Disassemble(c->program);
  EXPECT_EQ(main.instrs.back().op, KILN_VM_RET);
  absl::StatusOr<std::string> bytes = Encode(c->program);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(bytes->substr(0, 6), "KILNVM");
}

TEST(VmCompiler, JumpsLandOnTheirTargetsAfterKills) {
  absl::StatusOr<VmCompiled> c = CompileForVm(Typed(R"(
def @main(%c: Tensor[(), bool], %x: Tensor[(2,), float32]) {
  %0 = fn (%p0: Tensor[(2,), float32], Primitive=1) { negative(%p0) };
  %1 = fn (%p0: Tensor[(2,), float32], Primitive=1) { exp(%p0) };
  if (%c) { %0(%x) } else { %1(%x) }
}
)"));
  ASSERT_TRUE(c.ok()) << c.status();
  const VmFunction& main = c->program.functions[c->program.main];
  int ifs = 0;
  for (size_t i = 0; i < main.instrs.size(); ++i) {
    const VmInstr& in = main.instrs[i];
    if (in.op != KILN_VM_IF) continue;
    ++ifs;
    // The false target is the first instruction of the else branch: after
    // the then branch's Goto.
    const size_t f = i + static_cast<size_t>(in.operands[3]);
    ASSERT_LT(f, main.instrs.size());
    EXPECT_EQ(main.instrs[f - 1].op, KILN_VM_GOTO) << Disassemble(c->program);
    const size_t end = f - 1 + static_cast<size_t>(main.instrs[f - 1].operands[0]);
    ASSERT_LT(end, main.instrs.size());
    // Both branches meet where the result is returned (perhaps after kills).
    size_t k = end;
    while (main.instrs[k].op == KILN_VM_KILL_REGISTER) ++k;
    EXPECT_EQ(main.instrs[k].op, KILN_VM_RET) << Disassemble(c->program);
  }
  EXPECT_EQ(ifs, 1);
}

TEST(VmCompiler, AnyDimsAreNamed) {
  Module m = Typed(R"(
def @main(%x: Tensor[(?, 3), float32], %x_0: Tensor[(2,), float32]) {
  %x
}
)");
  absl::StatusOr<Module> named = NameAnyInputDims(m);
  ASSERT_TRUE(named.ok()) << named.status();
  Function main = *named->Lookup("main");
  const auto* tt = main->params[0]->type_annotation.as<TensorTypeNode>();
  ASSERT_NE(tt, nullptr);
  // Parameter names do not collide with dim names: the dim is x_0.
  EXPECT_EQ(tt->shape[0].ToString(), "x_0");
}

TEST(VmCompiler, ShapesGrowingThroughARecursiveFunctionGetShapeFunctions) {
  // A loop's scan output: %acc's extent is `?` in the function's type and
  // grows by one each call. The kernel's `?` parameter dim is named, so its
  // output extent (any0 + 1) has a shape function.
  absl::StatusOr<VmCompiled> c = CompileForVm(Typed(R"(
def @main(%x: Tensor[(3,), float32], %k: Tensor[(), int64], %acc0: Tensor[(0, 3), float32]) {
  let %loop: fn (Tensor[(), int64], Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32] =
    fn (%j: Tensor[(), int64], %acc: Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32] {
      %0 = fn (%p0: Tensor[(), int64], %p1: Tensor[(), int64], Primitive=1) { less(%p0, %p1) };
      if (%0(%j, %k)) {
        %1 = fn (%p0: Tensor[(), int64], Primitive=1) { add(%p0, 1i64) };
        %2 = fn (%p0: Tensor[(?, 3), float32], %p1: Tensor[(3,), float32], Primitive=1) {
          concatenate((%p0, expand_dims(%p1, axis=0)), axis=0)
        };
        %loop(%1(%j), %2(%acc, %x))
      } else {
        %acc
      }
    };
  %loop(0i64, %acc0)
}
)"));
  ASSERT_TRUE(c.ok()) << c.status();
  bool concat_shape = false;
  for (const std::string& k : c->program.kernels) {
    concat_shape |= absl::StrContains(k, "concatenate") && absl::EndsWith(k, "_shape");
  }
  EXPECT_TRUE(concat_shape);
}

TEST(VmCompiler, RefusesWhatItCannotCompile) {
  // An operator outside a primitive function (FuseOps not run).
  absl::StatusOr<VmCompiled> c = CompileForVm(Typed(R"(
def @main(%x: Tensor[(N,), float32]) { nn.relu(%x) }
)"));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "outside a primitive function"))
      << c.status();
  // A main parameter that is not a tensor.
  c = CompileForVm(Typed(R"(
def @main(%t: (Tensor[(2,), float32], Tensor[(2,), float32])) { %t.0 }
)"));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::StrContains(c.status().message(), "is not a tensor")) << c.status();
}

}  // namespace
}  // namespace kiln::lowering::vm
