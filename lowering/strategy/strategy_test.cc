// File: lowering/strategy/strategy_test.cc — the registry, the dispatch and
// what the GEMM strategy does to a constant weight (numbers: the compiled
// tests in tests/compiled/strategy_test.cc).
#include "lowering/strategy/strategy.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "ir/tir_printer.h"
#include "lowering/lower.h"
#include "lowering/passes/tir_eval.h"
#include "types/infer_type.h"

namespace kiln::lowering::strategy {
namespace {

te::Tensor Input() {
  return te::Placeholder({tir::IntImm(4), tir::IntImm(4)}, DataType::Float(32), "x");
}

StrategyCompute Returns(bool accept, std::vector<std::string>* log, const std::string& name) {
  return [=](const StrategyComputeCtx& ctx)
             -> absl::StatusOr<std::optional<std::vector<te::Tensor>>> {
    log->push_back(name);
    if (!accept) return std::optional<std::vector<te::Tensor>>();
    const te::Tensor x = ctx.base.inputs[0];
    return std::optional<std::vector<te::Tensor>>(std::vector<te::Tensor>{x});
  };
}

TEST(StrategyRegistry, HighestPriorityFirstAndDecliningFallsThrough) {
  std::vector<std::string> log;
  RegisterImplementation({"test.low", "test.op", 1, false, Returns(true, &log, "low"), nullptr});
  RegisterImplementation({"test.high", "test.op", 9, false, Returns(false, &log, "high"), nullptr});
  RegisterImplementation({"test.x86", "test.op", 5, true, Returns(true, &log, "x86"), nullptr});
  std::vector<const OpImplementation*> impls = ImplementationsOf("test.op");
  ASSERT_EQ(impls.size(), 3u);
  EXPECT_EQ(impls[0]->name, "test.high");
  EXPECT_EQ(impls[1]->name, "test.x86");
  EXPECT_EQ(impls[2]->name, "test.low");

  OpDef def;
  def.name = "test.op";
  std::vector<te::Tensor> inputs = {Input()};
  ComputeCtx base{def, nullptr, inputs, {}, {}, nullptr};
  std::vector<Ref<const HostTensor>> consts(1);
  auto add = [](Ref<const HostTensor>, const std::string&) { return Input(); };

  const CpuTarget x86 = CpuTarget::Avx512();
  absl::StatusOr<std::optional<StrategyChoice>> c = ComputeWithStrategy({base, consts, x86, add});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->impl->name, "test.x86");
  EXPECT_EQ(log, (std::vector<std::string>{"high", "x86"}));

  // Not x86: the x86-only implementation is skipped.
  log.clear();
  const CpuTarget arm = CpuTarget::Neon();
  c = ComputeWithStrategy({base, consts, arm, add});
  ASSERT_TRUE(c.ok() && c->has_value());
  EXPECT_EQ((*c)->impl->name, "test.low");
  EXPECT_EQ(log, (std::vector<std::string>{"high", "low"}));

  // Registering a name twice keeps the first.
  RegisterImplementation({"test.low", "test.op", 99, false, Returns(true, &log, "dup"), nullptr});
  EXPECT_EQ(ImplementationsOf("test.op").size(), 3u);
  EXPECT_EQ(FindImplementation("test.low")->plevel, 1);
  EXPECT_EQ(FindImplementation("no.such"), nullptr);
}

TEST(StrategyRegistry, BuiltinsAreRegistered) {
  RegisterBuiltinStrategies();
  for (const char* name : {"dense_pack.x86", "matmul_pack.x86", "batch_matmul_pack.x86",
                           "conv2d_NCHWc.x86", "depthwise_conv2d_NCHWc.x86",
                           "conv2d_winograd_NCHWc.x86"}) {
    EXPECT_NE(FindImplementation(name), nullptr) << name;
  }
}

// The type-checked main function `fn(params) = op(args)`.
absl::StatusOr<Function> TypedMain(const std::string& op_name, std::vector<Expr> args,
                                   std::vector<Var> params, Ref<AttrsNode> attrs) {
  KILN_ASSIGN_OR_RETURN(Op op, GetOp(op_name));
  KILN_ASSIGN_OR_RETURN(Call call, MakeCall(op, std::move(args), std::move(attrs)));
  KILN_ASSIGN_OR_RETURN(Function f, MakeFunction(std::move(params), call));
  Module m;
  KILN_RETURN_IF_ERROR(m.AddFunction("main", f).status());
  KILN_ASSIGN_OR_RETURN(m, types::InferType(m));
  return m.Lookup("main");
}

// nn.dense(x[5, 40], W[48, 40]) with W constant.
absl::StatusOr<Function> DenseWithConstant(Ref<const HostTensor> w) {
  Var x = MakeVar("x", MakeTensorType(ShapeFromInts({5, 40}), DataType::Float(32)));
  KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(w));
  return TypedMain("nn.dense", {x, c}, {x}, Ref<AttrsNode>(new DenseAttrs()));
}

TEST(GemmStrategy, ConstantWeightIsPackedAtCompileTimeForTheTarget) {
  Ref<HostTensor> w = *HostTensor::Create(DataType::Float(32), {48, 40});
  for (int64_t i = 0; i < 48 * 40; ++i) w->mutable_data<float>()[i] = static_cast<float>(i);
  absl::StatusOr<Function> f = DenseWithConstant(Ref<const HostTensor>(w));
  ASSERT_TRUE(f.ok()) << f.status();
  struct Want {
    CpuTarget target;
    int64_t nr;
  };
  for (const Want& want : {Want{CpuTarget::Avx512(), 32}, Want{CpuTarget::Avx2(), 16}}) {
    LowerOptions opts;
    opts.target = want.target;
    opts.vector_lanes = want.target.Lanes(DataType::Float(32));
    absl::StatusOr<LoweredFunc> k = LowerPrimitive(*f, "dense", opts);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ(k->strategies, std::vector<std::string>{"dense_pack.x86"});
    // Only the packed weight is a parameter: [ceil(48 / NR), 40, NR], zero-padded.
    ASSERT_EQ(k->constants.size(), 1u);
    const HostTensor& p = *k->constants[0];
    const int64_t nb = (48 + want.nr - 1) / want.nr;
    ASSERT_EQ(p.shape(), (std::vector<int64_t>{nb, 40, want.nr}));
    for (int64_t jb = 0; jb < nb; ++jb) {
      for (int64_t kk = 0; kk < 40; ++kk) {
        for (int64_t j = 0; j < want.nr; ++j) {
          const int64_t col = jb * want.nr + j;
          const float expect = col < 48 ? static_cast<float>(col * 40 + kk) : 0.0f;
          ASSERT_EQ(p.data<float>()[(jb * 40 + kk) * want.nr + j], expect)
              << jb << "," << kk << "," << j;
        }
      }
    }
    // With strategies off, the original weight is the parameter.
    opts.use_strategies = false;
    k = LowerPrimitive(*f, "dense", opts);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_TRUE(k->strategies.empty());
    ASSERT_EQ(k->constants.size(), 1u);
    EXPECT_EQ(k->constants[0]->shape(), (std::vector<int64_t>{48, 40}));
  }
}

// A weight that is a parameter is packed by a stage of the kernel. When NR
// does not divide N the panel past column N is zero, and the stage must not
// read B's rows N and beyond to make those zeros: the loop-IR evaluator
// evaluates both sides of a Select and fails an out-of-bounds load, so this
// runs the lowered kernel (vectorized, simplified) there. (A [1000, 2048]
// weight read 8 rows past its end crashed the compiled ResNet-50 classifier.)
TEST(GemmStrategy, RuntimePackOfAPaddedWeightStaysInBounds) {
  const int64_t m = 3, n = 20, k = 40;
  Var x = MakeVar("x", MakeTensorType(ShapeFromInts({m, k}), DataType::Float(32)));
  Var w = MakeVar("w", MakeTensorType(ShapeFromInts({n, k}), DataType::Float(32)));
  absl::StatusOr<Function> f =
      TypedMain("nn.dense", {x, w}, {x, w}, Ref<AttrsNode>(new DenseAttrs()));
  ASSERT_TRUE(f.ok()) << f.status();
  for (const CpuTarget& target : {CpuTarget::Avx512(), CpuTarget::Avx2()}) {
    LowerOptions opts;
    opts.target = target;
    opts.vector_lanes = target.Lanes(DataType::Float(32));
    absl::StatusOr<LoweredFunc> kernel = LowerPrimitive(*f, "dense", opts);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_EQ(kernel->strategies, std::vector<std::string>{"dense_pack.x86"});
    ASSERT_TRUE(kernel->constants.empty());
    std::vector<tir::testing::EvalArg> args(3);
    args[0].data.resize(m * k);
    args[1].data.resize(n * k);
    args[2].data.assign(m * n, 0.0);
    for (int64_t i = 0; i < m * k; ++i) args[0].data[i] = static_cast<double>(i % 7) - 3;
    for (int64_t i = 0; i < n * k; ++i) args[1].data[i] = static_cast<double>(i % 5) - 2;
    absl::Status st = tir::testing::EvalPrimFunc(kernel->func, &args);
    ASSERT_TRUE(st.ok()) << st;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t kk = 0; kk < k; ++kk) want += args[0].data[i * k + kk] * args[1].data[j * k + kk];
        ASSERT_EQ(args[2].data[i * n + j], want) << i << "," << j;
      }
    }
  }
}

// A matmul whose output [1, 7, 7, N] has a short row axis (7: one 6-row
// and one 1-row tile on AVX2) runs over the 49 flattened rows instead,
// padded to 50 for 5-row tiles: its accumulator is one MR x NR register
// tile (not all 49 rows, which a read index InferBound cannot narrow would
// give), no row guard sits inside the K loop, and the result (squared by a
// fused multiply: two reads of the product) matches a naive product on the
// loop-IR evaluator (out-of-bounds loads fail there).
TEST(GemmStrategy, ShortRowAxesAreFlattenedIntoWholeRowTiles) {
  const int64_t h = 7, k = 24, n = 32;
  Var x = MakeVar("x", MakeTensorType(ShapeFromInts({1, h, h, k}), DataType::Float(32)));
  Ref<HostTensor> wt = *HostTensor::Create(DataType::Float(32), {k, n});
  for (int64_t i = 0; i < k * n; ++i) wt->mutable_data<float>()[i] = static_cast<float>(i % 9) - 4;
  absl::StatusOr<Constant> w = MakeConstant(Ref<const HostTensor>(wt));
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<Call> mm = MakeCall(*GetOp("nn.matmul"), {x, *w}, Ref<AttrsNode>(new MatmulAttrs()));
  ASSERT_TRUE(mm.ok()) << mm.status();
  absl::StatusOr<Call> sq = MakeCall(*GetOp("multiply"), {*mm, *mm});
  ASSERT_TRUE(sq.ok()) << sq.status();
  absl::StatusOr<Function> f = MakeFunction({x}, *sq);
  ASSERT_TRUE(f.ok()) << f.status();
  Module m;
  ASSERT_TRUE(m.AddFunction("main", *f).ok());
  absl::StatusOr<Module> typed = types::InferType(m);
  ASSERT_TRUE(typed.ok()) << typed.status();
  LowerOptions opts;
  opts.target = CpuTarget::Avx2();
  opts.vector_lanes = 8;
  absl::StatusOr<LoweredFunc> kernel = LowerPrimitive(*typed->Lookup("main"), "mm", opts);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->strategies, std::vector<std::string>{"matmul_pack.x86"});
  const std::string text = tir::ToText(kernel->func);
  const size_t acc = text.find("allocate T_matmul: ");
  ASSERT_NE(acc, std::string::npos) << text;
  EXPECT_EQ(text.substr(acc, text.find('\n', acc) - acc),
            "allocate T_matmul: float32[80] local");  // 5 rows x 16 columns
  // The K loop (up to its closing brace at its own indentation) holds no
  // guard; the one guard left is the last tile's store of the 49th row.
  const size_t kloop = text.find("for (k, 0, 24) {");
  ASSERT_NE(kloop, std::string::npos) << text;
  const size_t line_start = text.rfind('\n', kloop) + 1;
  const std::string close = "\n" + std::string(kloop - line_start, ' ') + "}";
  const size_t kend = text.find(close, kloop);
  ASSERT_NE(kend, std::string::npos) << text;
  EXPECT_EQ(text.substr(kloop, kend - kloop).find("if ("), std::string::npos) << text;
  std::vector<tir::testing::EvalArg> args(3);
  args[0].data.resize(h * h * k);
  for (size_t i = 0; i < args[0].data.size(); ++i) args[0].data[i] = static_cast<double>(i % 7) - 3;
  ASSERT_EQ(kernel->constants.size(), 1u);
  const HostTensor& packed = *kernel->constants[0];
  args[1].data.assign(packed.data<float>(), packed.data<float>() + packed.num_elements());
  args[2].data.assign(h * h * n, 0.0);
  absl::Status st = tir::testing::EvalPrimFunc(kernel->func, &args);
  ASSERT_TRUE(st.ok()) << st;
  for (int64_t r = 0; r < h * h; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        want += args[0].data[r * k + kk] * wt->data<float>()[kk * n + j];
      }
      ASSERT_EQ(args[2].data[r * n + j], want * want) << r << "," << j;
    }
  }
}

// A 2-D dense with 7 rows (a short sequence): M padded to 8 for two 4-row
// tiles (the padded row reads row 6 again and is dropped), no guarded 1-row
// tile inside the K loop, and the result matches a naive product.
TEST(GemmStrategy, AShortMIsPaddedToWholeRowTiles) {
  const int64_t m = 7, k = 40, n = 48;
  Ref<HostTensor> wt = *HostTensor::Create(DataType::Float(32), {n, k});
  for (int64_t i = 0; i < n * k; ++i) wt->mutable_data<float>()[i] = static_cast<float>(i % 11) - 5;
  Var x = MakeVar("x", MakeTensorType(ShapeFromInts({m, k}), DataType::Float(32)));
  absl::StatusOr<Constant> w = MakeConstant(Ref<const HostTensor>(wt));
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<Function> f = TypedMain("nn.dense", {x, *w}, {x}, Ref<AttrsNode>(new DenseAttrs()));
  ASSERT_TRUE(f.ok()) << f.status();
  LowerOptions opts;
  opts.target = CpuTarget::Avx2();
  opts.vector_lanes = 8;
  absl::StatusOr<LoweredFunc> kernel = LowerPrimitive(*f, "dense", opts);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->strategies, std::vector<std::string>{"dense_pack.x86"});
  const std::string text = tir::ToText(kernel->func);
  const size_t acc = text.find("allocate T_dense: ");
  ASSERT_NE(acc, std::string::npos) << text;
  EXPECT_EQ(text.substr(acc, text.find('\n', acc) - acc), "allocate T_dense: float32[64] local");
  const size_t kloop = text.find("for (k, 0, 40) {");
  ASSERT_NE(kloop, std::string::npos) << text;
  const size_t line_start = text.rfind('\n', kloop) + 1;
  const size_t kend = text.find("\n" + std::string(kloop - line_start, ' ') + "}", kloop);
  ASSERT_NE(kend, std::string::npos) << text;
  EXPECT_EQ(text.substr(kloop, kend - kloop).find("if ("), std::string::npos) << text;
  std::vector<tir::testing::EvalArg> args(3);
  args[0].data.resize(m * k);
  for (size_t i = 0; i < args[0].data.size(); ++i) args[0].data[i] = static_cast<double>(i % 7) - 3;
  ASSERT_EQ(kernel->constants.size(), 1u);
  const HostTensor& packed = *kernel->constants[0];
  args[1].data.assign(packed.data<float>(), packed.data<float>() + packed.num_elements());
  args[2].data.assign(m * n, 0.0);
  absl::Status st = tir::testing::EvalPrimFunc(kernel->func, &args);
  ASSERT_TRUE(st.ok()) << st;
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t kk = 0; kk < k; ++kk) want += args[0].data[r * k + kk] * wt->data<float>()[j * k + kk];
      ASSERT_EQ(args[2].data[r * n + j], want) << r << "," << j;
    }
  }
}

// nn.conv2d of x [1, xs...] (NCHW16c) with the constant weight `wt` and
// `attrs` (layouts NCHW16c / `kernel_layout` / NCHW16c set here), lowered
// for AVX2 (8 lanes).
absl::StatusOr<LoweredFunc> LowerConvAvx2(const std::vector<int64_t>& xs, Ref<HostTensor> wt,
                                          Ref<Conv2DAttrs> attrs, const std::string& kernel_layout,
                                          const std::string& name) {
  Var x = MakeVar("x", MakeTensorType(ShapeFromInts(xs), DataType::Float(32)));
  KILN_ASSIGN_OR_RETURN(Constant w, MakeConstant(Ref<const HostTensor>(wt)));
  attrs->data_layout = "NCHW16c";
  attrs->kernel_layout = kernel_layout;
  attrs->out_layout = "NCHW16c";
  KILN_ASSIGN_OR_RETURN(Function f, TypedMain("nn.conv2d", {x, w}, {x}, Ref<AttrsNode>(attrs)));
  LowerOptions opts;
  opts.target = CpuTarget::Avx2();
  opts.vector_lanes = 8;
  return LowerPrimitive(f, name, opts);
}

int CountParallelLoops(const std::string& text) {
  int loops = 0;
  for (size_t pos = 0; (pos = text.find("parallel (", pos)) != std::string::npos; ++pos) ++loops;
  return loops;
}

// A convolution as an implicit GEMM whose pixel count (49) the AVX2 row tile
// does not divide: M is computed padded to 50 and the A-packing stage reads
// pixel min(p, 48) for the extra row, so no load leaves the input. The
// loop-IR evaluator fails any out-of-bounds load; the result is checked
// against a naive convolution. NCHW16c: a 1x1 unpadded convolution on 7x7
// (it reads the input itself: without the clamp, "out-of-bounds load"), and
// a 3x3, stride 2, padding 1 one on 14x14 (through the padded copy).
void CheckConvGemm(int64_t k, int64_t stride, int64_t pad, int64_t h, int64_t icb) {
  const int64_t ocb = 4, oh = 7, c = 16;  // IC * k * k >= 64, 4 column panels
  Ref<HostTensor> wt = *HostTensor::Create(DataType::Float(32), {ocb, icb, k, k, c, c});
  const int64_t wn = ocb * icb * k * k * c * c;
  for (int64_t i = 0; i < wn; ++i) wt->mutable_data<float>()[i] = static_cast<float>(i % 11) - 5;
  Ref<Conv2DAttrs> attrs(new Conv2DAttrs());
  attrs->strides = {stride, stride};
  attrs->padding = {pad, pad, pad, pad};
  absl::StatusOr<LoweredFunc> kernel =
      LowerConvAvx2({1, icb, h, h, c}, wt, attrs, "OIHW16i16o", "conv");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->strategies, std::vector<std::string>{"conv2d_gemm.x86"});
  ASSERT_EQ(kernel->constants.size(), 1u);  // the packed weight
  // The A-packing stage loops over (icb, kh, kw, ic): its reads of the
  // padded input index affinely in k (no floordiv/floormod of the k loop).
  bool saw_pack = false;
  for (absl::string_view line : absl::StrSplit(tir::ToText(kernel->func), '\n')) {
    if (!absl::StrContains(line, "conv2d_gemm_pack_a[") || !absl::StrContains(line, "] = ")) {
      continue;
    }
    saw_pack = true;
    EXPECT_FALSE(absl::StrContains(line, "floordiv(ax2")) << line;
    EXPECT_FALSE(absl::StrContains(line, "floormod(ax2")) << line;
  }
  EXPECT_TRUE(saw_pack);
  // The accumulator tile is computed where the output (NCHW16c) is written:
  // a local buffer of MR pixels x 16 channels, no [pixels, OC] result in
  // memory and no separate pass re-blocking it.
  const std::string text = tir::ToText(kernel->func);
  const size_t acc = text.find("allocate conv2d_gemm: ");
  ASSERT_NE(acc, std::string::npos) << text;
  const std::string acc_line = text.substr(acc, text.find('\n', acc) - acc);
  EXPECT_TRUE(absl::StrContains(acc_line, "] local")) << acc_line;
  std::vector<tir::testing::EvalArg> args(3);
  args[0].data.resize(icb * h * h * c);
  for (size_t i = 0; i < args[0].data.size(); ++i) args[0].data[i] = static_cast<double>(i % 7) - 3;
  const HostTensor& packed = *kernel->constants[0];
  args[1].data.assign(packed.data<float>(), packed.data<float>() + packed.num_elements());
  args[2].data.assign(ocb * oh * oh * c, 0.0);
  absl::Status st = tir::testing::EvalPrimFunc(kernel->func, &args);
  ASSERT_TRUE(st.ok()) << st;
  const float* wd = wt->data<float>();
  for (int64_t ob = 0; ob < ocb; ++ob) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t xx = 0; xx < oh; ++xx) {
        for (int64_t o = 0; o < c; ++o) {
          double want = 0;
          for (int64_t ib = 0; ib < icb; ++ib) {
            for (int64_t ky = 0; ky < k; ++ky) {
              for (int64_t kx = 0; kx < k; ++kx) {
                const int64_t iy = y * stride + ky - pad, ix = xx * stride + kx - pad;
                if (iy < 0 || iy >= h || ix < 0 || ix >= h) continue;
                for (int64_t i = 0; i < c; ++i) {
                  want += args[0].data[((ib * h + iy) * h + ix) * c + i] *
                          wd[((((ob * icb + ib) * k + ky) * k + kx) * c + i) * c + o];
                }
              }
            }
          }
          ASSERT_EQ(args[2].data[((ob * oh + y) * oh + xx) * c + o], want)
              << ob << "," << y << "," << xx << "," << o;
        }
      }
    }
  }
}

TEST(ConvGemmStrategy, PaddedPixelRowsStayInBoundsAndMatchANaiveConvolution) {
  CheckConvGemm(/*k=*/1, /*stride=*/1, /*pad=*/0, /*h=*/7, /*icb=*/4);
  CheckConvGemm(/*k=*/3, /*stride=*/2, /*pad=*/1, /*h=*/14, /*icb=*/1);
}

// A depthwise 3x3 convolution (NCHW16c, OIHW1i16o, groups = channels) for
// AVX2, at stride 1 and 2 with padding 1: the padded input rows are made
// inside the one parallel loop, per output row (no padded copy of the whole
// input before it), and the result matches a naive convolution; the
// loop-IR evaluator fails any out-of-bounds load.
void CheckDepthwise(int64_t stride) {
  const int64_t cb = 2, c = 16, h = 9, k = 3, pad = 1;
  const int64_t oh = (h + 2 * pad - k) / stride + 1;
  Ref<HostTensor> wt = *HostTensor::Create(DataType::Float(32), {cb, 1, k, k, 1, c});
  const int64_t wn = cb * k * k * c;
  for (int64_t i = 0; i < wn; ++i) wt->mutable_data<float>()[i] = static_cast<float>(i % 13) - 6;
  Ref<Conv2DAttrs> attrs(new Conv2DAttrs());
  attrs->strides = {stride, stride};
  attrs->padding = {pad, pad, pad, pad};
  attrs->groups = cb * c;
  absl::StatusOr<LoweredFunc> kernel =
      LowerConvAvx2({1, cb, h, h, c}, wt, attrs, "OIHW1i16o", "dw");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(kernel->strategies, std::vector<std::string>{"depthwise_conv2d_NCHWc.x86"});
  const std::string text = tir::ToText(kernel->func);
  EXPECT_EQ(CountParallelLoops(text), 1) << text;
  ASSERT_NE(text.find("allocate data_pad"), std::string::npos) << text;
  EXPECT_LT(text.find("parallel ("), text.find("allocate data_pad")) << text;

  std::vector<tir::testing::EvalArg> args(3);
  args[0].data.resize(cb * h * h * c);
  for (size_t i = 0; i < args[0].data.size(); ++i) args[0].data[i] = static_cast<double>(i % 7) - 3;
  ASSERT_EQ(kernel->constants.size(), 1u);
  const HostTensor& wc = *kernel->constants[0];
  args[1].data.assign(wc.data<float>(), wc.data<float>() + wc.num_elements());
  args[2].data.assign(cb * oh * oh * c, 0.0);
  absl::Status st = tir::testing::EvalPrimFunc(kernel->func, &args);
  ASSERT_TRUE(st.ok()) << st;
  const float* wd = wt->data<float>();
  for (int64_t b = 0; b < cb; ++b) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t xx = 0; xx < oh; ++xx) {
        for (int64_t o = 0; o < c; ++o) {
          double want = 0;
          for (int64_t ky = 0; ky < k; ++ky) {
            for (int64_t kx = 0; kx < k; ++kx) {
              const int64_t iy = y * stride + ky - pad, ix = xx * stride + kx - pad;
              if (iy < 0 || iy >= h || ix < 0 || ix >= h) continue;
              want += args[0].data[((b * h + iy) * h + ix) * c + o] *
                      wd[((b * k + ky) * k + kx) * c + o];
            }
          }
          ASSERT_EQ(args[2].data[((b * oh + y) * oh + xx) * c + o], want)
              << "stride " << stride << ": " << b << "," << y << "," << xx << "," << o;
        }
      }
    }
  }
}

TEST(DepthwiseStrategy, PadsRowsInsideTheParallelLoopAndMatchesANaiveConvolution) {
  CheckDepthwise(/*stride=*/1);
  CheckDepthwise(/*stride=*/2);
}

// Winograd F(2x2, 3x3) for AVX2 (NCHW16c, 32 -> 32 channels): an output of
// fewer than 8 tile rows (14x14: 7) is computed in three parallel passes
// (input transform, batched GEMM, output transform; plus the padded input),
// a taller one (28x28: 14) in one loop over the tile rows.
int ParallelLoopsOfWinograd(int64_t h) {
  const int64_t cb = 2, c = 16;
  Ref<HostTensor> wt = *HostTensor::Create(DataType::Float(32), {cb, cb, 3, 3, c, c});
  for (int64_t i = 0; i < wt->num_elements(); ++i) wt->mutable_data<float>()[i] = 0.25f;
  Ref<Conv2DAttrs> attrs(new Conv2DAttrs());
  attrs->padding = {1, 1, 1, 1};
  absl::StatusOr<LoweredFunc> kernel =
      LowerConvAvx2({1, cb, h, h, c}, wt, attrs, "OIHW16i16o", "wino");
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  if (!kernel.ok()) return -1;
  EXPECT_EQ(kernel->strategies, std::vector<std::string>{"conv2d_winograd_NCHWc.x86"});
  return CountParallelLoops(tir::ToText(kernel->func));
}

TEST(WinogradStrategy, FewTileRowsTakeThreePasses) {
  EXPECT_EQ(ParallelLoopsOfWinograd(14), 4);
  EXPECT_EQ(ParallelLoopsOfWinograd(28), 2);
}

}  // namespace
}  // namespace kiln::lowering::strategy
