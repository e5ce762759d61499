// File: codegen_llvm/semantics_test.cc — what generated code computes:
// integer division (trunc/floor, zero divisors, INT_MIN / -1), casts
// (saturation, NaN, bool), float16 / bfloat16, math functions against <cmath>,
// NaN-propagating min/max, lazy if_then_else, external calls. Each case runs
// as a scalar loop and as a vector loop (Ramp indices).
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen_llvm/codegen_llvm.h"
#include "codegen_llvm/test_util.h"
#include "gtest/gtest.h"
#include "ir/tir.h"

namespace kiln::codegen {
namespace {

using testing::BFloat16ToFloat;
using testing::CallKernel;
using testing::FloatToBFloat16;
using testing::FloatToHalf;
using testing::HalfToFloat;
using testing::HostTensor;
using testing::JitHost;
using namespace kiln::tir;  // NOLINT

constexpr DataType kF32 = DataType::Float(32);
constexpr DataType kF64 = DataType::Float(64);
constexpr DataType kF16 = DataType::Float(16);
constexpr DataType kBF16 = DataType::BFloat16();
constexpr DataType kI32 = DataType::Int(32);
constexpr DataType kI64 = DataType::Int(64);
constexpr DataType kU32 = DataType::UInt(32);

PrimExpr I(int64_t v) { return IntImm(v); }
DataType V(DataType t, int lanes) { return DataType(t.code(), t.bits(), lanes); }

using UnaryFn = std::function<PrimExpr(PrimExpr)>;
using BinaryFn = std::function<PrimExpr(PrimExpr, PrimExpr)>;

// Y[i] = f(X[i]) (lanes 1) or Y[r] = f(X[r]) with r = Ramp(i * lanes, 1, lanes).
PrimFunc Unary(const std::string& name, DataType in, DataType out, int64_t n, int lanes,
               const UnaryFn& f) {
  Buffer x = MakeBuffer("X", in, {I(n)});
  Buffer y = MakeBuffer("Y", out, {I(n)});
  Var i = MakeVar("i");
  PrimExpr idx = lanes == 1 ? PrimExpr(i) : Ramp(i * lanes, I(1), lanes);
  Stmt body = For(i, I(0), I(n / lanes), ForKind::kSerial, Store(y, f(Load(x, {idx})), {idx}));
  return MakePrimFunc(name, {x, y}, body);
}

// Y[i] = f(X[i], Z[i]).
PrimFunc Binary(const std::string& name, DataType in, DataType out, int64_t n, int lanes,
                const BinaryFn& f) {
  Buffer x = MakeBuffer("X", in, {I(n)});
  Buffer z = MakeBuffer("Z", in, {I(n)});
  Buffer y = MakeBuffer("Y", out, {I(n)});
  Var i = MakeVar("i");
  PrimExpr idx = lanes == 1 ? PrimExpr(i) : Ramp(i * lanes, I(1), lanes);
  Stmt body = For(i, I(0), I(n / lanes), ForKind::kSerial,
                  Store(y, f(Load(x, {idx}), Load(z, {idx})), {idx}));
  return MakePrimFunc(name, {x, z, y}, body);
}

template <typename Out, typename In>
std::vector<Out> RunUnary(KilnKernelFn fn, DataType in, DataType out, const std::vector<In>& xs) {
  int64_t n = static_cast<int64_t>(xs.size());
  HostTensor x(in, {n}), y(out, {n});
  std::memcpy(x.data<In>(), xs.data(), xs.size() * sizeof(In));
  EXPECT_EQ(CallKernel(fn, {x.dl(), y.dl()}), 0);
  return std::vector<Out>(y.data<Out>(), y.data<Out>() + n);
}

template <typename Out, typename In>
std::vector<Out> RunBinary(KilnKernelFn fn, DataType in, DataType out, const std::vector<In>& xs,
                           const std::vector<In>& zs) {
  int64_t n = static_cast<int64_t>(xs.size());
  HostTensor x(in, {n}), z(in, {n}), y(out, {n});
  std::memcpy(x.data<In>(), xs.data(), xs.size() * sizeof(In));
  std::memcpy(z.data<In>(), zs.data(), zs.size() * sizeof(In));
  EXPECT_EQ(CallKernel(fn, {x.dl(), z.dl(), y.dl()}), 0);
  return std::vector<Out>(y.data<Out>(), y.data<Out>() + n);
}

KilnKernelFn Fn(const std::unique_ptr<JitModule>& jit, const std::string& name) {
  auto fn = jit->Lookup(name);
  EXPECT_TRUE(fn.ok()) << fn.status();
  return fn.ok() ? *fn : nullptr;
}

// ---- Integer division ---------------------------------------------------------

template <typename T>
T RefDiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (b == -1) return static_cast<T>(U{0} - static_cast<U>(a));
  }
  return a / b;
}
template <typename T>
T RefMod(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return a % b;
}
template <typename T>
bool FloorAdjust(T r, T b) {
  if constexpr (std::is_signed_v<T>) return r != 0 && ((r < 0) != (b < 0));
  return false;
}
template <typename T>
T RefFloorDiv(T a, T b) {
  return RefDiv(a, b) - (FloorAdjust(RefMod(a, b), b) ? 1 : 0);
}
template <typename T>
T RefFloorMod(T a, T b) {
  T r = RefMod(a, b);
  return FloorAdjust(r, b) ? static_cast<T>(r + b) : r;
}

template <typename T>
void CheckDivisions(DataType t, const std::vector<std::pair<T, T>>& cases) {
  std::vector<T> xs, zs;
  for (auto [a, b] : cases) {
    xs.push_back(a);
    zs.push_back(b);
  }
  while (xs.size() % 4 != 0) {
    xs.push_back(1);
    zs.push_back(1);
  }
  int64_t n = static_cast<int64_t>(xs.size());
  struct Kind {
    const char* name;
    BinaryFn f;
    std::function<T(T, T)> ref;
  };
  std::vector<Kind> kinds = {
      {"div", [](PrimExpr a, PrimExpr b) { return Div(a, b); }, RefDiv<T>},
      {"mod", [](PrimExpr a, PrimExpr b) { return Mod(a, b); }, RefMod<T>},
      {"floordiv", [](PrimExpr a, PrimExpr b) { return FloorDiv(a, b); }, RefFloorDiv<T>},
      {"floormod", [](PrimExpr a, PrimExpr b) { return FloorMod(a, b); }, RefFloorMod<T>},
  };
  std::vector<PrimFunc> funcs;
  for (const Kind& k : kinds) {
    funcs.push_back(Binary(std::string(k.name) + "_1", t, t, n, 1, k.f));
    funcs.push_back(Binary(std::string(k.name) + "_4", t, t, n, 4, k.f));
  }
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  for (const Kind& k : kinds) {
    for (const char* lanes : {"_1", "_4"}) {
      std::vector<T> got = RunBinary<T>(Fn(*jit, std::string(k.name) + lanes), t, t, xs, zs);
      for (size_t i = 0; i < xs.size(); ++i) {
        EXPECT_EQ(got[i], k.ref(xs[i], zs[i]))
            << t.ToString() << " " << k.name << lanes << "(" << +xs[i] << ", " << +zs[i] << ")";
      }
    }
  }
}

TEST(SemanticsTest, IntegerDivisionInt32) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  CheckDivisions<int32_t>(kI32, {{7, 2},
                                 {-7, 2},
                                 {7, -2},
                                 {-7, -2},
                                 {0, 3},
                                 {5, 0},
                                 {-5, 0},
                                 {0, 0},
                                 {kMin, -1},
                                 {kMin, 1},
                                 {kMax, -1},
                                 {6, 3},
                                 {-6, 3},
                                 {6, -3},
                                 {1, kMin},
                                 {kMin, kMin},
                                 {-1, 5},
                                 {3, 7},
                                 {-3, 7}});
}

TEST(SemanticsTest, IntegerDivisionInt64AndUInt32) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  CheckDivisions<int64_t>(
      kI64, {{7, 2}, {-7, 2}, {7, -2}, {-7, -2}, {5, 0}, {kMin, -1}, {kMin, 3}, {-9, 4}});
  CheckDivisions<uint32_t>(kU32, {{7, 2},
                                  {0xFFFFFFFFu, 2},
                                  {5, 0},
                                  {0, 0},
                                  {0x80000000u, 0xFFFFFFFFu},
                                  {9, 4},
                                  {3, 7},
                                  {100, 1}});
}

TEST(SemanticsTest, IntegerDivisionByConstants) {
  const int64_t n = 8;
  std::vector<int32_t> xs = {-7, -6, -1, 0, 1, 6, 7, std::numeric_limits<int32_t>::min()};
  auto c = [](int64_t v) { return IntImm(v, kI32); };
  std::vector<PrimFunc> funcs = {
      Unary("div4", kI32, kI32, n, 1, [&](PrimExpr x) { return Div(x, c(4)); }),
      Unary("fdivm3", kI32, kI32, n, 4,
            [&](PrimExpr x) { return FloorDiv(x, Broadcast(c(-3), 4)); }),
      Unary("fmodm3", kI32, kI32, n, 1, [&](PrimExpr x) { return FloorMod(x, c(-3)); }),
      Unary("mod0", kI32, kI32, n, 1, [&](PrimExpr x) { return Mod(x, c(0)); }),
      Unary("divm1", kI32, kI32, n, 1, [&](PrimExpr x) { return Div(x, c(-1)); }),
  };
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  auto check = [&](const char* name, std::function<int32_t(int32_t)> ref) {
    std::vector<int32_t> got = RunUnary<int32_t>(Fn(*jit, name), kI32, kI32, xs);
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i], ref(xs[i])) << name << " " << xs[i];
  };
  check("div4", [](int32_t x) { return RefDiv<int32_t>(x, 4); });
  check("fdivm3", [](int32_t x) { return RefFloorDiv<int32_t>(x, -3); });
  check("fmodm3", [](int32_t x) { return RefFloorMod<int32_t>(x, -3); });
  check("mod0", [](int32_t) { return 0; });
  check("divm1", [](int32_t x) { return RefDiv<int32_t>(x, -1); });
}

// ---- Casts --------------------------------------------------------------------

TEST(SemanticsTest, FloatToIntSaturatesAndNaNIsZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> xs = {nan,   inf,    -inf, 1e10f, -1e10f, -1.5f,  2.7f,    300.0f,
                           -5.0f, 254.9f, 0.0f, -0.0f, 0.1f,   127.5f, -128.5f, 65535.0f};
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<PrimFunc> funcs;
  for (int lanes : {1, 4}) {
    std::string s = std::to_string(lanes);
    funcs.push_back(Unary("i32_" + s, kF32, kI32, n, lanes,
                          [&](PrimExpr x) { return Cast(V(kI32, lanes), x); }));
    funcs.push_back(Unary("u8_" + s, kF32, DataType::UInt(8), n, lanes,
                          [&](PrimExpr x) { return Cast(V(DataType::UInt(8), lanes), x); }));
    funcs.push_back(Unary("i8_" + s, kF32, DataType::Int(8), n, lanes,
                          [&](PrimExpr x) { return Cast(V(DataType::Int(8), lanes), x); }));
    funcs.push_back(Unary("b_" + s, kF32, DataType::Bool(), n, lanes,
                          [&](PrimExpr x) { return Cast(V(DataType::Bool(), lanes), x); }));
  }
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  auto sat = [](float x, double lo, double hi) -> int64_t {
    if (std::isnan(x)) return 0;
    double t = std::trunc(static_cast<double>(x));
    return static_cast<int64_t>(std::min(hi, std::max(lo, t)));
  };
  for (const char* lanes : {"1", "4"}) {
    std::vector<int32_t> i32 =
        RunUnary<int32_t>(Fn(*jit, std::string("i32_") + lanes), kF32, kI32, xs);
    std::vector<uint8_t> u8 =
        RunUnary<uint8_t>(Fn(*jit, std::string("u8_") + lanes), kF32, DataType::UInt(8), xs);
    std::vector<int8_t> i8 =
        RunUnary<int8_t>(Fn(*jit, std::string("i8_") + lanes), kF32, DataType::Int(8), xs);
    std::vector<uint8_t> b =
        RunUnary<uint8_t>(Fn(*jit, std::string("b_") + lanes), kF32, DataType::Bool(), xs);
    for (size_t i = 0; i < xs.size(); ++i) {
      EXPECT_EQ(i32[i], sat(xs[i], -2147483648.0, 2147483647.0)) << xs[i];
      EXPECT_EQ(u8[i], sat(xs[i], 0, 255)) << xs[i];
      EXPECT_EQ(i8[i], sat(xs[i], -128, 127)) << xs[i];
      EXPECT_EQ(b[i], xs[i] != 0.0f ? 1 : 0) << xs[i];  // NaN != 0: true
    }
  }
}

TEST(SemanticsTest, IntegerAndBoolCasts) {
  std::vector<int32_t> xs = {0, 1, -1, 5, 300, -129, 127, 200};
  const int64_t n = 8;
  std::vector<PrimFunc> funcs = {
      Unary("to_i8", kI32, DataType::Int(8), n, 4,
            [](PrimExpr x) { return Cast(V(DataType::Int(8), 4), x); }),
      Unary("to_bool", kI32, DataType::Bool(), n, 1,
            [](PrimExpr x) { return Cast(DataType::Bool(), x); }),
      Unary("to_f64", kI32, kF64, n, 1, [](PrimExpr x) { return Cast(kF64, x); }),
      Unary("bool_to_f32", kI32, kF32, n, 4,
            [](PrimExpr x) { return Cast(V(kF32, 4), Cast(V(DataType::Bool(), 4), x)); }),
      Unary("u8_to_i32", DataType::UInt(8), kI32, n, 1, [](PrimExpr x) { return Cast(kI32, x); }),
      Unary("i8_to_i32", DataType::Int(8), kI32, n, 1, [](PrimExpr x) { return Cast(kI32, x); }),
  };
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  std::vector<int8_t> i8 = RunUnary<int8_t>(Fn(*jit, "to_i8"), kI32, DataType::Int(8), xs);
  std::vector<uint8_t> b = RunUnary<uint8_t>(Fn(*jit, "to_bool"), kI32, DataType::Bool(), xs);
  std::vector<double> f64 = RunUnary<double>(Fn(*jit, "to_f64"), kI32, kF64, xs);
  std::vector<float> bf = RunUnary<float>(Fn(*jit, "bool_to_f32"), kI32, kF32, xs);
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(i8[i], static_cast<int8_t>(xs[i]));  // wraps
    EXPECT_EQ(b[i], xs[i] != 0 ? 1 : 0);
    EXPECT_EQ(f64[i], static_cast<double>(xs[i]));
    EXPECT_EQ(bf[i], xs[i] != 0 ? 1.0f : 0.0f);
  }
  std::vector<uint8_t> u = {0, 1, 127, 128, 200, 255, 7, 9};
  std::vector<int32_t> zext = RunUnary<int32_t>(Fn(*jit, "u8_to_i32"), DataType::UInt(8), kI32, u);
  std::vector<int32_t> sext = RunUnary<int32_t>(Fn(*jit, "i8_to_i32"), DataType::Int(8), kI32, u);
  for (size_t i = 0; i < u.size(); ++i) {
    EXPECT_EQ(zext[i], static_cast<int32_t>(u[i]));
    EXPECT_EQ(sext[i], static_cast<int32_t>(static_cast<int8_t>(u[i])));
  }
}

// ---- float16 / bfloat16 -------------------------------------------------------

TEST(SemanticsTest, Float16LoadComputeStore) {
  // Y = X * Z + 1 in float16 (each operation rounded to float16).
  std::vector<float> xs = {0.5f, -1.25f, 3.0f,  100.0f,   1.0f / 3, 2.0f, -0.0f, 1000.0f,
                           0.1f, 7.0f,   -3.5f, 60000.0f, 0.001f,   1.5f, 9.0f,  12.0f};
  std::vector<float> zs = {2.0f, 4.0f,     -0.5f, 0.01f, 3.0f,   2.5f, 5.0f,  100.0f,
                           0.3f, 1.0f / 7, 2.0f,  2.0f,  0.001f, 1.5f, -9.0f, 0.25f};
  std::vector<uint16_t> hx, hz;
  for (size_t i = 0; i < xs.size(); ++i) {
    hx.push_back(FloatToHalf(xs[i]));
    hz.push_back(FloatToHalf(zs[i]));
  }
  const int64_t n = 16;
  auto f = [](int lanes) {
    return
        [lanes](PrimExpr x, PrimExpr z) { return Add(Mul(x, z), MakeConst(V(kF16, lanes), 1.0)); };
  };
  std::vector<PrimFunc> funcs = {
      Binary("fma16_1", kF16, kF16, n, 1, f(1)),
      Binary("fma16_8", kF16, kF16, n, 8, f(8)),
      Unary("exp16", kF16, kF16, n, 4, [](PrimExpr x) { return Call(V(kF16, 4), "exp", {x}); }),
      Unary("h2f", kF16, kF32, n, 1, [](PrimExpr x) { return Cast(kF32, x); }),
      Unary("f2h", kF32, kF16, n, 8, [](PrimExpr x) { return Cast(V(kF16, 8), x); }),
  };
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  for (const char* name : {"fma16_1", "fma16_8"}) {
    std::vector<uint16_t> got = RunBinary<uint16_t>(Fn(*jit, name), kF16, kF16, hx, hz);
    for (size_t i = 0; i < xs.size(); ++i) {
      uint16_t prod = FloatToHalf(HalfToFloat(hx[i]) * HalfToFloat(hz[i]));
      uint16_t ref = FloatToHalf(HalfToFloat(prod) + 1.0f);
      EXPECT_EQ(got[i], ref) << name << " " << i;
    }
  }
  std::vector<uint16_t> small;
  for (int i = 0; i < 16; ++i) small.push_back(FloatToHalf(-4.0f + 0.5f * static_cast<float>(i)));
  std::vector<uint16_t> e = RunUnary<uint16_t>(Fn(*jit, "exp16"), kF16, kF16, small);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(e[i], FloatToHalf(std::exp(HalfToFloat(small[i])))) << i;
  }
  std::vector<float> w = RunUnary<float>(Fn(*jit, "h2f"), kF16, kF32, hx);
  for (size_t i = 0; i < hx.size(); ++i) EXPECT_EQ(w[i], HalfToFloat(hx[i]));
  std::vector<float> narrow = {1.0f / 3,
                               65504.0f,
                               70000.0f,
                               1e-7f,
                               -2.5f,
                               65519.0f,
                               65520.0f,
                               6e-8f,
                               3e-8f,
                               -1e9f,
                               0.0f,
                               2049.0f,
                               2051.0f,
                               1e-5f,
                               std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  std::vector<uint16_t> h = RunUnary<uint16_t>(Fn(*jit, "f2h"), kF32, kF16, narrow);
  for (size_t i = 0; i + 1 < narrow.size(); ++i)
    EXPECT_EQ(h[i], FloatToHalf(narrow[i])) << narrow[i];
  EXPECT_EQ(h.back() & 0x7c00, 0x7c00);  // NaN stays NaN
  EXPECT_NE(h.back() & 0x03ff, 0);
}

TEST(SemanticsTest, BFloat16LoadComputeStore) {
  const int64_t n = 16;
  auto add_half = [](int lanes) {
    return
        [lanes](PrimExpr x, PrimExpr z) { return Add(x, Mul(z, MakeConst(V(kBF16, lanes), 0.5))); };
  };
  std::vector<PrimFunc> funcs = {
      Binary("bf_1", kBF16, kBF16, n, 1, add_half(1)),
      Binary("bf_8", kBF16, kBF16, n, 8, add_half(8)),
      Unary("f2bf", kF32, kBF16, n, 4, [](PrimExpr x) { return Cast(V(kBF16, 4), x); }),
      Unary("bf2f", kBF16, kF32, n, 1, [](PrimExpr x) { return Cast(kF32, x); }),
      Unary("bf_tanh", kBF16, kBF16, n, 1, [](PrimExpr x) { return Call(kBF16, "tanh", {x}); }),
  };
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  std::vector<uint16_t> bx, bz;
  for (int i = 0; i < 16; ++i) {
    bx.push_back(FloatToBFloat16(1.0f + 0.37f * static_cast<float>(i)));
    bz.push_back(FloatToBFloat16(-3.0f + 0.011f * static_cast<float>(i * i)));
  }
  for (const char* name : {"bf_1", "bf_8"}) {
    std::vector<uint16_t> got = RunBinary<uint16_t>(Fn(*jit, name), kBF16, kBF16, bx, bz);
    for (int i = 0; i < 16; ++i) {
      uint16_t prod = FloatToBFloat16(BFloat16ToFloat(bz[i]) * 0.5f);
      uint16_t ref = FloatToBFloat16(BFloat16ToFloat(bx[i]) + BFloat16ToFloat(prod));
      EXPECT_EQ(got[i], ref) << name << " " << i;
    }
  }
  // Round to nearest even at the halfway points, overflow to infinity, NaN kept.
  auto bits = [](uint32_t b) {
    float f = 0;
    std::memcpy(&f, &b, 4);
    return f;
  };
  std::vector<float> xs = {bits(0x3F808000u),
                           bits(0x3F818000u),
                           bits(0x3F808001u),
                           bits(0x3F807FFFu),
                           std::numeric_limits<float>::max(),
                           -std::numeric_limits<float>::infinity(),
                           1.0f,
                           -2.5f,
                           1e-40f,
                           0.0f,
                           -0.0f,
                           3.14159f,
                           65504.0f,
                           1e30f,
                           7.0f,
                           std::numeric_limits<float>::quiet_NaN()};
  std::vector<uint16_t> got = RunUnary<uint16_t>(Fn(*jit, "f2bf"), kF32, kBF16, xs);
  EXPECT_EQ(got[0], 0x3F80);
  EXPECT_EQ(got[1], 0x3F82);
  EXPECT_EQ(got[2], 0x3F81);
  EXPECT_EQ(got[3], 0x3F80);
  EXPECT_EQ(got[4], 0x7F80);
  EXPECT_EQ(got[5], 0xFF80);
  for (size_t i = 0; i + 1 < xs.size(); ++i) EXPECT_EQ(got[i], FloatToBFloat16(xs[i])) << i;
  EXPECT_EQ(got[15] & 0x7F80, 0x7F80);
  EXPECT_NE(got[15] & 0x007F, 0);
  std::vector<float> wide = RunUnary<float>(Fn(*jit, "bf2f"), kBF16, kF32, got);
  for (size_t i = 0; i + 1 < got.size(); ++i) EXPECT_EQ(wide[i], BFloat16ToFloat(got[i]));
  std::vector<uint16_t> th = RunUnary<uint16_t>(Fn(*jit, "bf_tanh"), kBF16, kBF16, bz);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(th[i], FloatToBFloat16(std::tanh(BFloat16ToFloat(bz[i])))) << i;
  }
}

// ---- Math -------------------------------------------------------------------------

struct MathCase {
  const char* name;
  std::function<double(double)> ref;
  bool positive_only;
};

TEST(SemanticsTest, MathFunctionsMatchCmath) {
  std::vector<MathCase> cases = {
      {"sqrt", [](double x) { return std::sqrt(x); }, true},
      {"fabs", [](double x) { return std::fabs(x); }, false},
      {"floor", [](double x) { return std::floor(x); }, false},
      {"ceil", [](double x) { return std::ceil(x); }, false},
      {"trunc", [](double x) { return std::trunc(x); }, false},
      {"round", [](double x) { return std::nearbyint(x); }, false},  // half to even
      {"exp", [](double x) { return std::exp(x); }, false},
      {"exp2", [](double x) { return std::exp2(x); }, false},
      {"log", [](double x) { return std::log(x); }, true},
      {"log2", [](double x) { return std::log2(x); }, true},
      {"sin", [](double x) { return std::sin(x); }, false},
      {"cos", [](double x) { return std::cos(x); }, false},
      {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }, true},
      {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, false},
      {"tanh", [](double x) { return std::tanh(x); }, false},
      {"erf", [](double x) { return std::erf(x); }, false},
      {"log1p", [](double x) { return std::log1p(x); }, true},
      {"expm1", [](double x) { return std::expm1(x); }, false},
  };
  const std::vector<double> mixed = {-2.5, -1.25, -0.5, 0.0, 0.5, 1.5, 2.5, 3.7};
  const std::vector<double> positive = {0.5, 1.0, 2.25, 3.0, 0.1, 7.5, 0.75, 1.5};
  const int64_t n = 8;
  std::vector<PrimFunc> funcs;
  for (const MathCase& c : cases) {
    for (DataType t : {kF32, kF64}) {
      for (int lanes : {1, 4}) {
        std::string name = absl::StrCat(c.name, "_", t.ToString(), "_", lanes);
        std::string fname = c.name;
        funcs.push_back(Unary(name, t, t, n, lanes, [&, fname, t, lanes](PrimExpr x) {
          return Call(V(t, lanes), fname, {x});
        }));
      }
    }
  }
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  for (const MathCase& c : cases) {
    const std::vector<double>& in = c.positive_only ? positive : mixed;
    for (int lanes : {1, 4}) {
      std::vector<float> xf(in.begin(), in.end());
      std::vector<float> gf =
          RunUnary<float>(Fn(*jit, absl::StrCat(c.name, "_float32_", lanes)), kF32, kF32, xf);
      std::vector<double> gd =
          RunUnary<double>(Fn(*jit, absl::StrCat(c.name, "_float64_", lanes)), kF64, kF64, in);
      for (size_t i = 0; i < in.size(); ++i) {
        double rf = c.ref(static_cast<double>(xf[i]));
        EXPECT_NEAR(gf[i], rf, 2e-6 * std::max(1.0, std::fabs(rf)))
            << c.name << "(" << xf[i] << ") f32";
        double rd = c.ref(in[i]);
        EXPECT_NEAR(gd[i], rd, 1e-14 * std::max(1.0, std::fabs(rd)))
            << c.name << "(" << in[i] << ") f64";
      }
    }
  }
}

// The trigonometric and hyperbolic intrinsics (libm calls, per lane for
// vectors), each on inputs from its domain.
TEST(SemanticsTest, TrigonometricAndHyperbolicMatchCmath) {
  const std::vector<double> any = {-2.5, -1.25, -0.5, 0.0, 0.5, 1.5, 2.5, 3.0};
  const std::vector<double> unit = {-0.99, -0.75, -0.5, 0.0, 0.25, 0.5, 0.75, 0.9};
  const std::vector<double> ge1 = {1.0, 1.25, 1.5, 2.0, 3.0, 5.5, 10.0, 100.0};
  struct Case {
    const char* name;
    double (*ref)(double);
    const std::vector<double>* in;
  };
  const std::vector<Case> cases = {
      {"tan", [](double x) { return std::tan(x); }, &any},
      {"asin", [](double x) { return std::asin(x); }, &unit},
      {"acos", [](double x) { return std::acos(x); }, &unit},
      {"atan", [](double x) { return std::atan(x); }, &any},
      {"sinh", [](double x) { return std::sinh(x); }, &any},
      {"cosh", [](double x) { return std::cosh(x); }, &any},
      {"asinh", [](double x) { return std::asinh(x); }, &any},
      {"acosh", [](double x) { return std::acosh(x); }, &ge1},
      {"atanh", [](double x) { return std::atanh(x); }, &unit},
  };
  const int64_t n = 8;
  std::vector<PrimFunc> funcs;
  for (const Case& c : cases) {
    for (DataType t : {kF32, kF64}) {
      for (int lanes : {1, 4}) {
        std::string fname = c.name;
        funcs.push_back(
            Unary(absl::StrCat(c.name, "_", t.ToString(), "_", lanes), t, t, n, lanes,
                  [fname, t, lanes](PrimExpr x) { return Call(V(t, lanes), fname, {x}); }));
      }
    }
  }
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  for (const Case& c : cases) {
    for (int lanes : {1, 4}) {
      std::vector<float> xf(c.in->begin(), c.in->end());
      std::vector<float> gf =
          RunUnary<float>(Fn(*jit, absl::StrCat(c.name, "_float32_", lanes)), kF32, kF32, xf);
      std::vector<double> gd =
          RunUnary<double>(Fn(*jit, absl::StrCat(c.name, "_float64_", lanes)), kF64, kF64, *c.in);
      for (size_t i = 0; i < xf.size(); ++i) {
        const double rf = c.ref(static_cast<double>(xf[i]));
        EXPECT_NEAR(gf[i], rf, 2e-6 * std::max(1.0, std::fabs(rf)))
            << c.name << "(" << xf[i] << ")";
        const double rd = c.ref((*c.in)[i]);
        EXPECT_NEAR(gd[i], rd, 1e-14 * std::max(1.0, std::fabs(rd)))
            << c.name << "(" << (*c.in)[i] << ")";
      }
    }
  }
}

TEST(SemanticsTest, BinaryMathAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> xs = {2.0f, -3.5f, 7.25f, nan, 1.0f, -0.0f, 5.5f, 9.0f};
  std::vector<float> zs = {3.0f, 2.0f, -2.0f, 1.0f, nan, 1.0f, -1.5f, 0.5f};
  const int64_t n = 8;
  std::vector<PrimFunc> funcs;
  for (int lanes : {1, 4}) {
    std::string s = std::to_string(lanes);
    DataType t = V(kF32, lanes);
    funcs.push_back(Binary("pow_" + s, kF32, kF32, n, lanes, [t](PrimExpr x, PrimExpr z) {
      return Call(t, "pow", {x, z});
    }));
    funcs.push_back(Binary("copysign_" + s, kF32, kF32, n, lanes, [t](PrimExpr x, PrimExpr z) {
      return Call(t, "copysign", {x, z});
    }));
    funcs.push_back(Binary("fmod_" + s, kF32, kF32, n, lanes, [t](PrimExpr x, PrimExpr z) {
      return Call(t, "fmod", {x, z});
    }));
    funcs.push_back(
        Binary("max_" + s, kF32, kF32, n, lanes, [](PrimExpr x, PrimExpr z) { return Max(x, z); }));
    funcs.push_back(
        Binary("min_" + s, kF32, kF32, n, lanes, [](PrimExpr x, PrimExpr z) { return Min(x, z); }));
    funcs.push_back(Unary("isnan_" + s, kF32, DataType::Bool(), n, lanes, [lanes](PrimExpr x) {
      return Call(V(DataType::Bool(), lanes), "isnan", {x});
    }));
  }
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  for (const char* s : {"1", "4"}) {
    std::vector<float> p = RunBinary<float>(Fn(*jit, std::string("pow_") + s), kF32, kF32, xs, zs);
    std::vector<float> c =
        RunBinary<float>(Fn(*jit, std::string("copysign_") + s), kF32, kF32, xs, zs);
    std::vector<float> m = RunBinary<float>(Fn(*jit, std::string("fmod_") + s), kF32, kF32, xs, zs);
    std::vector<float> hi = RunBinary<float>(Fn(*jit, std::string("max_") + s), kF32, kF32, xs, zs);
    std::vector<float> lo = RunBinary<float>(Fn(*jit, std::string("min_") + s), kF32, kF32, xs, zs);
    std::vector<uint8_t> isn =
        RunUnary<uint8_t>(Fn(*jit, std::string("isnan_") + s), kF32, DataType::Bool(), xs);
    for (size_t i = 0; i < xs.size(); ++i) {
      EXPECT_TRUE(same(p[i], std::pow(xs[i], zs[i])))
          << "pow " << xs[i] << " " << zs[i] << " " << p[i];
      EXPECT_TRUE(same(c[i], std::copysign(xs[i], zs[i]))) << "copysign " << i;
      EXPECT_TRUE(same(m[i], std::fmod(xs[i], zs[i]))) << "fmod " << i;
      bool any_nan = std::isnan(xs[i]) || std::isnan(zs[i]);
      EXPECT_TRUE(any_nan ? std::isnan(hi[i]) : hi[i] == std::max(xs[i], zs[i])) << "max " << i;
      EXPECT_TRUE(any_nan ? std::isnan(lo[i]) : lo[i] == std::min(xs[i], zs[i])) << "min " << i;
      EXPECT_EQ(isn[i], std::isnan(xs[i]) ? 1 : 0);
    }
  }
}

// ldexp(x, n) = x * 2^n for n across [-252, 254]: exactly on the AVX-512
// path (vscalefps, 16/8/4 lanes and a 32-lane vector split in two: one
// rounding, subnormal results, overflow to infinity); on the exponent-field
// path of other targets (scalars, AVX2) exactly for normal, zero and infinite
// results, within one unit of 2^-149 for subnormal ones (two roundings).
TEST(SemanticsTest, LdexpIsExactOnEveryPath) {
  std::vector<float> xs, ns;
  const float mags[] = {1.0f, 1.5f, 0.75f, 1.9999999f, 3.0e-5f, 6.0e4f, 1.0e-30f, 3.0e38f};
  for (int n = -252; n <= 254; n += 3) {
    for (float m : mags) {
      xs.push_back((n & 1) != 0 ? -m : m);
      ns.push_back(static_cast<float>(n));
    }
  }
  xs.push_back(0.0f);
  ns.push_back(100.0f);
  xs.push_back(std::numeric_limits<float>::infinity());
  ns.push_back(-10.0f);
  while (xs.size() % 32 != 0) {
    xs.push_back(1.25f);
    ns.push_back(-140.0f);  // a subnormal result
  }
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<PrimFunc> funcs;
  for (int lanes : {1, 4, 8, 16, 32}) {
    DataType t = V(kF32, lanes);
    funcs.push_back(Binary("ldexp_" + std::to_string(lanes), kF32, kF32, n, lanes,
                           [t](PrimExpr x, PrimExpr k) { return Call(t, "ldexp", {x, k}); }));
  }
  std::vector<const char*> targets = {"llvm -mcpu=haswell", "llvm"};
  if (__builtin_cpu_supports("avx512f")) targets.push_back("llvm -mcpu=skylake-avx512");
  for (const char* target : targets) {
    auto jit = JitHost(funcs, target);
    ASSERT_TRUE(jit.ok()) << target << ": " << jit.status();
    const std::string name = target;
    const bool exact = name == "llvm -mcpu=skylake-avx512" ||
                       (name == "llvm" && __builtin_cpu_supports("avx512f"));
    for (int lanes : {1, 4, 8, 16, 32}) {
      std::vector<float> got = RunBinary<float>(Fn(*jit, "ldexp_" + std::to_string(lanes)), kF32,
                                                kF32, xs, ns);
      for (size_t i = 0; i < xs.size(); ++i) {
        float want = std::ldexp(xs[i], static_cast<int>(ns[i]));
        bool subnormal = want != 0 && std::fabs(want) < std::numeric_limits<float>::min();
        // The host's scalar (1-lane) form is the exponent-field path too.
        if ((exact && lanes >= 4) || !subnormal) {
          EXPECT_EQ(got[i], want) << target << ", " << lanes << " lanes: ldexp(" << xs[i] << ", "
                                  << ns[i] << ")";
        } else {
          EXPECT_LE(std::fabs(got[i] - want), 1.5e-45f)
              << target << ", " << lanes << " lanes: ldexp(" << xs[i] << ", " << ns[i] << ")";
        }
      }
    }
  }
}

// Y[i] = if_then_else(i < 4, X[i], -1) where X has 4 elements placed just
// before an inaccessible page: the untaken side must not be evaluated.
TEST(SemanticsTest, IfThenElseIsLazy) {
  Buffer x = MakeBuffer("X", kF32, {I(4)});
  Buffer y = MakeBuffer("Y", kF32, {I(8)});
  Var i = MakeVar("i");
  PrimExpr v = Call(kF32, "if_then_else", {LT(i, I(4)), Load(x, {i}), FloatImm(-1.0)});
  PrimFunc f = MakePrimFunc("lazy", {x, y}, For(i, I(0), I(8), ForKind::kSerial, Store(y, v, {i})));
  auto jit = JitHost({f});
  ASSERT_TRUE(jit.ok()) << jit.status();
  long page = sysconf(_SC_PAGESIZE);
  void* mem = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(mem) + page, page, PROT_NONE), 0);
  float* data = reinterpret_cast<float*>(static_cast<char*>(mem) + page - 4 * sizeof(float));
  for (int k = 0; k < 4; ++k) data[k] = static_cast<float>(k) + 0.5f;
  HostTensor tx(kF32, {4}), ty(kF32, {8});
  tx.dl()->data = data;
  EXPECT_EQ(CallKernel(*(*jit)->Lookup("lazy"), {tx.dl(), ty.dl()}), 0);
  for (int k = 0; k < 8; ++k) EXPECT_EQ(ty.data<float>()[k], k < 4 ? k + 0.5f : -1.0f);
  munmap(mem, 2 * page);
}

// Unknown call names are external C functions, resolved from this process.
TEST(SemanticsTest, ExternalCalls) {
  const int64_t n = 4;
  std::vector<PrimFunc> funcs = {
      Binary("ext_fmaxf", kF32, kF32, n, 1,
             [](PrimExpr x, PrimExpr z) {
               return Call(kF32, "fmaxf", {x, z});
             }),
      Unary("ext_abs", kI32, kI32, n, 1, [](PrimExpr x) { return Call(kI32, "abs", {x}); }),
      Unary("ext_strlen", kI32, DataType::Int(64), n, 1,
            [](PrimExpr) {
              return Call(DataType::Int(64), "strlen", {StringImm("hello")},
                          CallEffect::kReadState);
            }),
  };
  auto jit = JitHost(funcs);
  ASSERT_TRUE(jit.ok()) << jit.status();
  std::vector<float> m =
      RunBinary<float>(Fn(*jit, "ext_fmaxf"), kF32, kF32, std::vector<float>{1, -2, 3, -4},
                       std::vector<float>{0, 0, 5, -5});
  EXPECT_EQ(m, (std::vector<float>{1, 0, 5, -4}));
  std::vector<int32_t> a =
      RunUnary<int32_t>(Fn(*jit, "ext_abs"), kI32, kI32, std::vector<int32_t>{-3, 4, 0, -7});
  EXPECT_EQ(a, (std::vector<int32_t>{3, 4, 0, 7}));
  std::vector<int64_t> len = RunUnary<int64_t>(Fn(*jit, "ext_strlen"), kI32, DataType::Int(64),
                                               std::vector<int32_t>{0, 0, 0, 0});
  EXPECT_EQ(len, (std::vector<int64_t>{5, 5, 5, 5}));
}

// Select (both sides), Let, Ramp of floats, a gather (stride-2 Ramp) and a
// scatter (reversed indices).
TEST(SemanticsTest, SelectLetGatherScatter) {
  Buffer x = MakeBuffer("X", kF32, {I(16)});
  Buffer y = MakeBuffer("Y", kF32, {I(8)});
  Var i = MakeVar("i");
  Var t = MakeVar("t", V(kF32, 4));
  PrimExpr gather = Load(x, {Ramp(i * 8, I(2), 4)});  // X[8i], X[8i+2], ...
  PrimExpr rev = Ramp(i * 4 + 3, I(-1), 4);           // Y[4i+3], Y[4i+2], ...
  PrimExpr val =
      Let(t, gather,
          Select(GT(t, Broadcast(FloatImm(0.0), 4)), t, Ramp(FloatImm(100.0), FloatImm(1.0), 4)));
  PrimFunc f =
      MakePrimFunc("gs", {x, y}, For(i, I(0), I(2), ForKind::kSerial, Store(y, val, {rev})));
  auto jit = JitHost({f});
  ASSERT_TRUE(jit.ok()) << jit.status();
  HostTensor tx(kF32, {16}), ty(kF32, {8});
  for (int k = 0; k < 16; ++k) tx.data<float>()[k] = (k % 4 == 2) ? -1.0f : static_cast<float>(k);
  ASSERT_EQ(CallKernel(*(*jit)->Lookup("gs"), {tx.dl(), ty.dl()}), 0);
  for (int blk = 0; blk < 2; ++blk) {
    for (int lane = 0; lane < 4; ++lane) {
      float g = tx.data<float>()[blk * 8 + 2 * lane];
      float expect = g > 0 ? g : 100.0f + static_cast<float>(lane);
      EXPECT_EQ(ty.data<float>()[blk * 4 + 3 - lane], expect) << blk << " " << lane;
    }
  }
}

}  // namespace
}  // namespace kiln::codegen
