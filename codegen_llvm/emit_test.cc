// File: codegen_llvm/emit_test.cc — targets, LLVM IR / assembly / object
// emission, and compile-time errors (never aborts).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_llvm/codegen_llvm.h"
#include "codegen_llvm/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir.h"

namespace kiln::codegen {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace kiln::tir;  // NOLINT

constexpr DataType kF32 = DataType::Float(32);

PrimExpr I(int64_t v) { return IntImm(v); }

PrimFunc VecAdd(const std::string& name, int lanes) {
  Buffer a = MakeBuffer("A", kF32, {I(1024)});
  Buffer b = MakeBuffer("B", kF32, {I(1024)});
  Buffer c = MakeBuffer("C", kF32, {I(1024)});
  Var i = MakeVar("i");
  PrimExpr idx = lanes == 1 ? PrimExpr(i) : Ramp(i * lanes, I(1), lanes);
  return MakePrimFunc(name, {a, b, c},
                      For(i, I(0), I(1024 / lanes), ForKind::kSerial,
                          Store(c, Add(Load(a, {idx}), Load(b, {idx})), {idx})));
}

Target Parse(const std::string& s) {
  absl::StatusOr<Target> t = ParseTarget(s);
  EXPECT_TRUE(t.ok()) << s << ": " << t.status();
  return t.ok() ? *t : Target();
}

TEST(TargetTest, ParsesHostAndCrossTargets) {
  Target host = Parse("llvm");
  EXPECT_FALSE(host.triple.empty());
  EXPECT_FALSE(host.cpu.empty());
  EXPECT_EQ(host.opt_level, 3);
  Target native = Parse("llvm -mcpu=native");
  EXPECT_EQ(native.cpu, host.cpu);
  EXPECT_EQ(native.features, host.features);
  Target skx = Parse("llvm -mcpu=skylake-avx512");
  EXPECT_EQ(skx.cpu, "skylake-avx512");
  EXPECT_EQ(skx.triple, host.triple);
  Target arm = Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
  EXPECT_THAT(arm.triple, HasSubstr("aarch64"));
  EXPECT_EQ(arm.cpu, "generic");
  EXPECT_EQ(arm.features, "+neon");
  EXPECT_EQ(Parse("llvm -opt-level=2").opt_level, 2);
  // ToString reads back to the same target.
  for (const Target& t : {host, skx, arm}) {
    Target back = Parse(t.ToString());
    EXPECT_EQ(back.triple, t.triple);
    EXPECT_EQ(back.cpu, t.cpu);
    EXPECT_EQ(back.features, t.features);
    EXPECT_EQ(back.opt_level, t.opt_level);
  }
}

TEST(TargetTest, ErrorsNameTheCulprit) {
  auto expect_error = [](const std::string& s, const std::string& part) {
    absl::StatusOr<Target> t = ParseTarget(s);
    ASSERT_FALSE(t.ok()) << s;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(part)) << s;
  };
  expect_error("", "empty target");
  expect_error("cuda -arch=sm_90", "\"cuda\"");
  expect_error("llvm -foo=1", "\"-foo\"");
  expect_error("llvm -mcpu", "-mcpu needs a value");
  expect_error("llvm -opt-level=7", "-opt-level");
  expect_error("llvm -opt-level=x", "-opt-level");
  expect_error("llvm -mtriple=nonsense-unknown-nothing", "nonsense");
  expect_error("llvm -mcpu=not-a-cpu", "not-a-cpu");
  expect_error("llvm -mattr=+not-a-feature", "not-a-feature");
  expect_error("llvm -mtriple=aarch64-linux-gnu -mcpu=native", "native");
}

uint16_t ElfMachine(const std::string& obj) {
  if (obj.size() < 20) return 0;
  return static_cast<uint16_t>(static_cast<uint8_t>(obj[18]) |
                               (static_cast<uint8_t>(obj[19]) << 8));
}

TEST(EmitTest, ObjectFilesForHostAndAArch64) {
  std::vector<PrimFunc> funcs = {VecAdd("kiln_vadd_scalar", 1), VecAdd("kiln_vadd_vec", 8)};
  absl::StatusOr<std::string> host = EmitObject(funcs, Parse("llvm"));
  ASSERT_TRUE(host.ok()) << host.status();
  ASSERT_GE(host->size(), 64u);
  EXPECT_EQ(host->substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(ElfMachine(*host), 62);  // EM_X86_64
  EXPECT_THAT(*host, HasSubstr("kiln_vadd_scalar"));
  EXPECT_THAT(*host, HasSubstr("kiln_vadd_vec"));

  absl::StatusOr<std::string> arm =
      EmitObject(funcs, Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"));
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_EQ(arm->substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(ElfMachine(*arm), 183);  // EM_AARCH64
  EXPECT_THAT(*arm, HasSubstr("kiln_vadd_vec"));
}

TEST(EmitTest, AssemblyAndLLVMIR) {
  absl::StatusOr<std::string> ir = EmitLLVMIR({VecAdd("vadd8", 8)}, Parse("llvm"));
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_THAT(*ir, HasSubstr("define i32 @vadd8(ptr"));
  EXPECT_THAT(*ir, HasSubstr("<8 x float>"));
  // The serial loop is vectorized by LLVM (buffers do not alias).
  absl::StatusOr<std::string> serial =
      EmitLLVMIR({VecAdd("vadd1", 1)}, Parse("llvm -mcpu=skylake-avx512"));
  ASSERT_TRUE(serial.ok()) << serial.status();
  EXPECT_THAT(*serial, HasSubstr(" x float>"));
  EXPECT_THAT(*serial, HasSubstr("kiln_kernel_error"));
  absl::StatusOr<std::string> asm_text =
      EmitAssembly({VecAdd("vadd8", 8)}, Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon"));
  ASSERT_TRUE(asm_text.ok()) << asm_text.status();
  EXPECT_THAT(*asm_text, HasSubstr("vadd8:"));
  EXPECT_THAT(*asm_text, HasSubstr("fadd"));
}

// Lanes a constant stride apart (an NCHW16c -> NCHW transposition) are one
// scalar load or store per lane at a constant distance from one address, not
// a gather or scatter of per-lane addresses; per-lane indices still gather.
TEST(EmitTest, ConstantStrideLanesAreScalarAccesses) {
  Buffer a = MakeBuffer("A", kF32, {I(1024)});
  Buffer b = MakeBuffer("B", kF32, {I(1024)});
  Buffer ix = MakeBuffer("IX", DataType::Int(32), {I(64)});
  Var i = MakeVar("i");
  PrimFunc strided = MakePrimFunc(
      "strided", {a, b},
      For(i, I(0), I(8), ForKind::kSerial,
          Store(b, Load(a, {Ramp(i, I(16), 8)}), {Ramp(i * 128 + 1, I(16), 8)})));
  absl::StatusOr<std::string> ir = EmitLLVMIR({strided}, Parse("llvm -mcpu=haswell"));
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_THAT(*ir, Not(HasSubstr("masked.gather")));
  EXPECT_THAT(*ir, Not(HasSubstr("masked.scatter")));
  EXPECT_THAT(*ir, HasSubstr("load float"));
  PrimFunc gathered = MakePrimFunc(
      "gathered", {a, ix, b},
      For(i, I(0), I(8), ForKind::kSerial,
          Store(b, Load(a, {Load(ix, {Ramp(i * 8, I(1), 8)})}),
                {Ramp(i * 8, I(1), 8)})));
  ir = EmitLLVMIR({gathered}, Parse("llvm -mcpu=haswell"));
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_THAT(*ir, HasSubstr("masked.gather"));
}

TEST(EmitTest, ParallelLoopIsOutlined) {
  Buffer a = MakeBuffer("A", kF32, {I(64)});
  Var i = MakeVar("i");
  PrimFunc f = MakePrimFunc(
      "par", {a},
      For(i, I(0), I(64), ForKind::kParallel, Store(a, Mul(Load(a, {i}), FloatImm(2.0)), {i})));
  absl::StatusOr<std::string> ir = EmitLLVMIR({f}, Parse("llvm -opt-level=0"));
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_THAT(*ir, HasSubstr("define internal i32 @par_parallel_0(i32"));
  EXPECT_THAT(*ir, HasSubstr("call i32 @kiln_parallel_launch(ptr"));
  // The task count comes from the pool's size (not the runtime's default of
  // one task per thread: 0).
  EXPECT_THAT(*ir, HasSubstr("call i32 @kiln_parallel_num_threads(ptr"));
  EXPECT_THAT(*ir, Not(HasSubstr("ptr %closure, i32 0)")));
}

// Compile-time errors are statuses naming the PrimFunc.
void ExpectCompileError(const PrimFunc& f, absl::StatusCode code, const std::string& part) {
  absl::StatusOr<std::string> ir = EmitLLVMIR({f}, Parse("llvm"));
  ASSERT_FALSE(ir.ok()) << part;
  EXPECT_EQ(ir.status().code(), code) << ir.status();
  EXPECT_THAT(std::string(ir.status().message()), HasSubstr("PrimFunc " + f->name)) << ir.status();
  EXPECT_THAT(std::string(ir.status().message()), HasSubstr(part)) << ir.status();
}

TEST(EmitTest, UnsupportedNodesAreErrors) {
  Buffer a = MakeBuffer("A", kF32, {I(8)});
  Var i = MakeVar("i");
  Var k = MakeVar("k");
  IterVar rk = MakeIterVar(Range{I(0), I(8)}, k, IterKind::kReduce);
  ExpectCompileError(MakePrimFunc("has_reduce", {a},
                                  Store(a, Reduce(ReduceKind::kSum, Load(a, {k}), {rk}), {I(0)})),
                     absl::StatusCode::kUnimplemented, "Reduce");
  ExpectCompileError(
      MakePrimFunc("has_producer_load", {a}, Store(a, ProducerLoad(kF32, nullptr, {I(0)}), {I(0)})),
      absl::StatusCode::kUnimplemented, "ProducerLoad");
  ExpectCompileError(MakePrimFunc("has_thread", {a},
                                  For(i, I(0), I(8), ForKind::kThreadBinding,
                                      Store(a, FloatImm(0.0), {i}), "threadIdx.x")),
                     absl::StatusCode::kUnimplemented, "threadIdx.x");
  ExpectCompileError(MakePrimFunc("has_unbound", {a}, Store(a, FloatImm(0.0), {MakeVar("q")})),
                     absl::StatusCode::kInvalidArgument, "'q'");
  ExpectCompileError(MakePrimFunc("bad_store", {a}, Store(a, IntImm(1, DataType::Int(32)), {I(0)})),
                     absl::StatusCode::kInvalidArgument, "buffer A");
  Buffer other = MakeBuffer("Other", kF32, {I(8)});
  ExpectCompileError(MakePrimFunc("unknown_buffer", {a}, Store(other, FloatImm(0.0), {I(0)})),
                     absl::StatusCode::kInvalidArgument, "Other");
  ExpectCompileError(
      MakePrimFunc("mixed_types", {a},
                   Store(a, Add(Load(a, {I(0)}), FloatImm(1.0, DataType::Float(64))), {I(0)})),
      absl::StatusCode::kInvalidArgument, "float64");
  Buffer i4 = MakeBuffer("Q", DataType::Int(4), {I(8)});
  ExpectCompileError(
      MakePrimFunc("int4_buffer", {i4}, Store(i4, IntImm(1, DataType::Int(4)), {I(0)})),
      absl::StatusCode::kUnimplemented, "int4");
}

TEST(EmitTest, ModuleLevelErrors) {
  Target host = Parse("llvm");
  absl::StatusOr<std::string> dup = EmitObject({VecAdd("same", 1), VecAdd("same", 8)}, host);
  ASSERT_FALSE(dup.ok());
  EXPECT_THAT(std::string(dup.status().message()), HasSubstr("\"same\""));
  Target arm = Parse("llvm -mtriple=aarch64-linux-gnu");
  auto jit = JitModule::Create({VecAdd("vadd", 1)}, arm);
  ASSERT_FALSE(jit.ok());
  EXPECT_THAT(std::string(jit.status().message()), HasSubstr("host"));
  Target bad = host;
  bad.opt_level = 9;
  EXPECT_FALSE(EmitObject({VecAdd("vadd", 1)}, bad).ok());
  // An external function that does not exist fails at JIT time, as a status.
  Buffer a = MakeBuffer("A", kF32, {I(1)});
  PrimFunc ext =
      MakePrimFunc("calls_missing", {a},
                   Store(a, Call(kF32, "kiln_no_such_function_xyz", {Load(a, {I(0)})}), {I(0)}));
  auto missing = JitModule::Create({ext}, host);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("kiln_no_such_function_xyz"));
}

// The scoped-noalias metadata of a kernel grows linearly with its tensors: a
// kernel that reads n inputs and writes one output gets O(n) metadata
// operands (one scope for the inputs, one for the output). One scope per
// tensor with a list of all the others made n * (n - 1) operands: 4 million
// here, about 24 MB of metadata text, the most of a wide concatenation's
// compile time.
TEST(EmitTest, AliasMetadataIsLinearInTheTensors) {
  constexpr int kInputs = 2000;
  std::vector<Buffer> params;
  for (int k = 0; k < kInputs; ++k)
    params.push_back(MakeBuffer(absl::StrCat("in", k), kF32, {I(1)}));
  Buffer out = MakeBuffer("out", kF32, {I(kInputs)});
  params.push_back(out);
  std::vector<Stmt> stores;
  for (int k = 0; k < kInputs; ++k) stores.push_back(Store(out, Load(params[k], {I(0)}), {I(k)}));
  PrimFunc f = MakePrimFunc("kwide_alias", params, Seq(stores));
  absl::StatusOr<std::string> ir = EmitLLVMIR({f}, Parse("llvm -opt-level=0"));
  ASSERT_TRUE(ir.ok()) << ir.status();
  // Count the operands of every metadata node ("!12 = !{!3, !5}" has two).
  size_t operands = 0, scoped = 0;
  for (size_t pos = 0; pos < ir->size();) {
    size_t eol = ir->find('\n', pos);
    if (eol == std::string::npos) eol = ir->size();
    if ((*ir)[pos] == '!') {
      for (size_t i = pos; i < eol; ++i) operands += (*ir)[i] == ',';
    }
    pos = eol + 1;
  }
  for (size_t at = ir->find("!alias.scope"); at != std::string::npos;
       at = ir->find("!alias.scope", at + 1)) {
    ++scoped;
  }
  EXPECT_EQ(scoped, 2u * kInputs);  // every load and every store is marked
  EXPECT_LT(operands, 20u * kInputs) << operands << " metadata operands";
}

}  // namespace
}  // namespace kiln::codegen

namespace kiln::codegen {
namespace {

PrimFunc Loop(const std::string& name, ForKind kind, int64_t extent) {
  Buffer a = MakeBuffer("A", kF32, {I(1024)});
  Buffer c = MakeBuffer("C", kF32, {I(1024)});
  Var i = MakeVar("i");
  return MakePrimFunc(
      name, {a, c}, For(i, I(0), I(extent), kind, Store(c, Mul(Load(a, {i}), Load(a, {i})), {i})));
}

// The cost that spreads kernels over the parallel codegen shards: an
// unrolled loop counts its body once per iteration, a serial one once.
TEST(EmitTest, CodegenCostCountsUnrolledCopies) {
  const int64_t serial = EstimateCodegenCost(Loop("s", ForKind::kSerial, 8));
  const int64_t unrolled = EstimateCodegenCost(Loop("u", ForKind::kUnrolled, 8));
  // The function (1) and the loop's own node with its min and extent (3).
  const int64_t body = serial - 4;
  EXPECT_GT(body, 3);
  EXPECT_EQ(unrolled - 4, 8 * body);
  EXPECT_GT(EstimateCodegenCost(Loop("u16", ForKind::kUnrolled, 16)), unrolled);
  // Sharded emission keeps every function whatever the shard sizes.
  std::vector<PrimFunc> funcs = {
      Loop("kcost_big", ForKind::kUnrolled, 64), Loop("kcost_alpha", ForKind::kSerial, 4),
      Loop("kcost_beta", ForKind::kSerial, 4), Loop("kcost_gamma", ForKind::kSerial, 4)};
  absl::StatusOr<Target> t = ParseTarget("llvm");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<std::vector<std::string>> objs = EmitObjects(funcs, *t, 2);
  ASSERT_TRUE(objs.ok()) << objs.status();
  ASSERT_EQ(objs->size(), 2u);
  size_t found = 0;
  for (const char* name : {"kcost_big", "kcost_alpha", "kcost_beta", "kcost_gamma"}) {
    const std::string symbol = std::string(name) + std::string(1, '\0');  // in .strtab
    size_t in = 0;
    for (const std::string& o : *objs) in += o.find(symbol) != std::string::npos;
    EXPECT_EQ(in, 1u) << name;
    found += in;
  }
  EXPECT_EQ(found, 4u);
  // The big kernel is alone in its shard: the other object holds all three
  // small ones.
  for (const std::string& o : *objs) {
    if (o.find(std::string("kcost_big") + '\0') == std::string::npos) {
      EXPECT_NE(o.find(std::string("kcost_alpha") + '\0'), std::string::npos);
      EXPECT_NE(o.find(std::string("kcost_gamma") + '\0'), std::string::npos);
    }
  }
}

// A kernel of more than kManyParamsKernel tensors goes to an object of its
// own (compiled at -opt-level=0): the other kernels stay in the shards.
TEST(EmitTest, KernelsOfVeryManyTensorsGetAnObjectOfTheirOwn) {
  std::vector<Buffer> params;
  for (size_t k = 0; k <= kManyParamsKernel; ++k) {
    params.push_back(MakeBuffer(absl::StrCat("in", k), kF32, {I(4)}));
  }
  Buffer out = MakeBuffer("out", kF32, {I(4)});
  params.push_back(out);
  Var i = MakeVar("i");
  PrimFunc wide = MakePrimFunc(
      "kwide_many", params,
      For(i, I(0), I(4), ForKind::kSerial, Store(out, Load(params[kManyParamsKernel], {i}), {i})));
  std::vector<PrimFunc> funcs = {wide, Loop("kwide_small", ForKind::kSerial, 4)};
  absl::StatusOr<Target> t = ParseTarget("llvm");
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<std::vector<std::string>> objs = EmitObjects(funcs, *t, 1);
  ASSERT_TRUE(objs.ok()) << objs.status();
  ASSERT_EQ(objs->size(), 2u);  // one shard asked for, plus the wide kernel's own
  EXPECT_NE((*objs)[0].find(std::string("kwide_small") + '\0'), std::string::npos);
  EXPECT_EQ((*objs)[0].find(std::string("kwide_many") + '\0'), std::string::npos);
  EXPECT_NE((*objs)[1].find(std::string("kwide_many") + '\0'), std::string::npos);
}

}  // namespace
}  // namespace kiln::codegen
