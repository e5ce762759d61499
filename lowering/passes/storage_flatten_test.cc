// File: lowering/passes/storage_flatten_test.cc
#include "lowering/passes/storage_flatten.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/tir_printer.h"
#include "lowering/passes/tir_eval.h"
#include "lowering/passes/verify.h"

namespace kiln::tir::transform {
namespace {

using testing::ExpectSameResults;
using ::testing::HasSubstr;
using ::testing::Not;

const DataType kF32 = DataType::Float(32);

PrimFunc Flatten(const PrimFunc& f) {
  absl::StatusOr<PrimFunc> r = StorageFlatten(f);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return f;
  absl::Status v = VerifyPrimFunc(*r);
  EXPECT_TRUE(v.ok()) << v << "\n" << ToText(*r);
  return *r;
}

TEST(StorageFlattenTest, ParamsKeepShapesAccessesBecomeFlat) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4), IntImm(5), IntImm(3)});
  Buffer b = MakeBuffer("B", kF32, {IntImm(4), IntImm(5)});
  Var i = MakeVar("i"), j = MakeVar("j"), k = MakeVar("k");
  Stmt body = For(i, IntImm(0), IntImm(4), ForKind::kSerial,
                  For(j, IntImm(0), IntImm(5), ForKind::kSerial,
                      For(k, IntImm(0), IntImm(3), ForKind::kSerial,
                          Store(b, Add(Load(b, {i, j}), Load(a, {i, j, k})), {i, j}))));
  PrimFunc f = MakePrimFunc("sum3", {a, b}, body);
  PrimFunc g = Flatten(f);
  std::string text = ToText(g);
  EXPECT_THAT(text, HasSubstr("primfunc sum3(A: float32[4, 5, 3], B: float32[4, 5])"));
  EXPECT_THAT(text,
              HasSubstr("B[((i * 5) + j)] = (B[((i * 5) + j)] + A[(((i * 15) + (j * 3)) + k)])"));
  EXPECT_EQ(g->params[0].get(), a.get());
  EXPECT_TRUE(ExpectSameResults(f, g).ok()) << ExpectSameResults(f, g);
}

TEST(StorageFlattenTest, StorageAlignPadsTheRowStride) {
  Buffer out = MakeBuffer("O", kF32, {IntImm(4), IntImm(15)});
  Ref<BufferNode> t(new BufferNode(*MakeBuffer("T", kF32, {IntImm(4), IntImm(15)})));
  t->axis_align = {{16, 0}};
  Buffer tb(t);
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = Allocate(tb, Seq({For(i, IntImm(0), IntImm(4), ForKind::kSerial,
                                    For(j, IntImm(0), IntImm(15), ForKind::kSerial,
                                        Store(tb, Mul(Load(out, {i, j}), FloatImm(2)), {i, j}))),
                                For(i, IntImm(0), IntImm(4), ForKind::kSerial,
                                    For(j, IntImm(0), IntImm(15), ForKind::kSerial,
                                        Store(out, Load(tb, {i, j}), {i, j})))}));
  PrimFunc f = MakePrimFunc("aligned", {out}, body);
  PrimFunc g = Flatten(f);
  std::string text = ToText(g);
  EXPECT_THAT(text, HasSubstr("allocate T: float32[64] global"));
  EXPECT_THAT(text, HasSubstr("T[((i * 16) + j)]"));
  EXPECT_TRUE(ExpectSameResults(f, g).ok()) << ExpectSameResults(f, g);
}

TEST(StorageFlattenTest, StorageAlignWithOffset) {
  Ref<BufferNode> t(new BufferNode(*MakeBuffer("T", kF32, {IntImm(2), IntImm(3), IntImm(10)})));
  t->axis_align = {{0, 0}, {8, 1}};  // axis 1 stride 10 -> 17 (17 % 8 == 1)
  std::vector<PrimExpr> s = FlattenStrides(Buffer(t));
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(IsConstValue(s[2], 1));
  EXPECT_TRUE(IsConstValue(s[1], 17));
  EXPECT_TRUE(IsConstValue(s[0], 51));
}

TEST(StorageFlattenTest, ExplicitStridesAndElemOffset) {
  Ref<BufferNode> a(new BufferNode(*MakeBuffer("A", kF32, {IntImm(3), IntImm(4)})));
  a->strides = {IntImm(10), IntImm(2)};
  a->elem_offset = IntImm(5);
  Buffer ab(a);
  Buffer b = MakeBuffer("B", kF32, {IntImm(3), IntImm(4)});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body =
      For(i, IntImm(0), IntImm(3), ForKind::kSerial,
          For(j, IntImm(0), IntImm(4), ForKind::kSerial, Store(b, Load(ab, {i, j}), {i, j})));
  PrimFunc f = MakePrimFunc("strided", {ab, b}, body);
  PrimFunc g = Flatten(f);
  EXPECT_THAT(ToText(g), HasSubstr("A[(((i * 10) + (j * 2)) + 5)]"));
  EXPECT_TRUE(ExpectSameResults(f, g).ok()) << ExpectSameResults(f, g);
}

TEST(StorageFlattenTest, SymbolicShape) {
  Var n = MakeVar("n");
  Buffer a = MakeBuffer("A", kF32, {n, IntImm(8)});
  Var i = MakeVar("i"), j = MakeVar("j");
  Stmt body = For(i, IntImm(0), n, ForKind::kSerial,
                  For(j, IntImm(0), IntImm(8), ForKind::kSerial,
                      Store(a, Add(Load(a, {i, j}), FloatImm(1)), {i, j})));
  PrimFunc f = MakePrimFunc("sym", {a}, body);
  PrimFunc g = Flatten(f);
  EXPECT_THAT(ToText(g), HasSubstr("A[((i * 8) + j)]"));
  EXPECT_TRUE(ExpectSameResults(f, g, 3, {{"n", 5}}).ok());
}

TEST(StorageFlattenTest, VectorIndexStaysARamp) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(4), IntImm(8)});
  Var i = MakeVar("i");
  PrimExpr idx = Ramp(IntImm(0), IntImm(1), 8);
  Stmt body = For(i, IntImm(0), IntImm(4), ForKind::kSerial,
                  Store(a, Load(a, {Broadcast(i, 8), idx}), {Broadcast(i, 8), idx}));
  PrimFunc f = MakePrimFunc("vec", {a}, body);
  PrimFunc g = Flatten(f);
  EXPECT_THAT(ToText(g), HasSubstr("A[ramp((i * 8), 1, 8)]"));
}

TEST(StorageFlattenTest, FlatBuffersAndFlatAccessesAreLeftAlone) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(8)});
  Buffer b = MakeBuffer("B", kF32, {IntImm(2), IntImm(4)});
  Var i = MakeVar("i");
  Stmt body = For(i, IntImm(0), IntImm(8), ForKind::kSerial, Store(b, Load(a, {i}), {i}));
  PrimFunc f = MakePrimFunc("flat", {a, b}, body);
  absl::StatusOr<PrimFunc> g = StorageFlatten(f);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->get(), f.get());
  // Idempotent.
  PrimFunc h =
      Flatten(Flatten(MakePrimFunc("twice", {b}, Store(b, FloatImm(1), {IntImm(1), IntImm(2)}))));
  (void)h;
}

TEST(StorageFlattenTest, WrongIndexCountIsAnError) {
  Buffer a = MakeBuffer("A", kF32, {IntImm(2), IntImm(3), IntImm(4)});
  Stmt body = Store(a, FloatImm(1), {IntImm(0), IntImm(1)});
  absl::StatusOr<PrimFunc> g = StorageFlatten(MakePrimFunc("bad", {a}, body));
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(),
              HasSubstr("storage_flatten: PrimFunc 'bad': buffer 'A' has 3 dims, accessed with 2 "
                        "indices: A[0, 1] = 1f"));
}

}  // namespace
}  // namespace kiln::tir::transform
