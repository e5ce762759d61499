// File: lowering/te/schedule_x86_test.cc — the default CPU schedule: what it
// does to the loops, and that the result still computes the same numbers.
#include "lowering/te/schedule_x86.h"

#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"
#include "lowering/te/lower.h"
#include "lowering/te/te_test_util.h"

namespace kiln::te {
namespace {

using testing::MaxAbsDiff;
using testing::RandomData;
using tir::IntImm;

const DataType kF32 = DataType::Float(32);
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<PrimExpr> E(const std::vector<Var>& v) { return {v.begin(), v.end()}; }
float F(double x) { return static_cast<float>(x); }

// Schedules with ScheduleDefaultX86, lowers, runs. Returns the function's text
// (for structure checks) and fills `outputs`.
std::string LowerRun(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                std::vector<std::vector<double>> in_values, std::vector<std::vector<double>>* out_values,
                int lanes = 16, const testing::ShapeVars& vars = {}) {
  absl::StatusOr<Schedule> s = CreateSchedule(outputs);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return "";
  absl::Status st = ScheduleDefaultX86(*s, outputs, lanes);
  EXPECT_TRUE(st.ok()) << st;
  std::vector<Tensor> args = inputs;
  args.insert(args.end(), outputs.begin(), outputs.end());
  absl::StatusOr<tir::PrimFunc> f = LowerSchedule(*s, args, "f");
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return "";
  std::vector<std::vector<double>> bufs = std::move(in_values);
  for (const Tensor& o : outputs) {
    absl::StatusOr<int64_t> n = testing::NumElements(o.shape(), vars);
    EXPECT_TRUE(n.ok());
    bufs.emplace_back(static_cast<size_t>(n.ok() ? *n : 0), kNaN);
  }
  std::vector<std::vector<double>*> ptrs;
  for (auto& b : bufs) ptrs.push_back(&b);
  std::string text = tir::ToText(*f);
  st = testing::RunPrimFunc(*f, ptrs, vars);
  EXPECT_TRUE(st.ok()) << st << "\n" << text;
  out_values->assign(bufs.begin() + static_cast<std::ptrdiff_t>(inputs.size()), bufs.end());
  return text;
}

// "kind var" of every loop, outermost first (names as the IterVars are named).
std::string Loops(const std::vector<Tensor>& outputs, int lanes = 16) {
  absl::StatusOr<Schedule> s = CreateSchedule(outputs);
  if (!s.ok()) return s.status().ToString();
  absl::Status st = ScheduleDefaultX86(*s, outputs, lanes);
  if (!st.ok()) return st.ToString();
  std::vector<Tensor> args;
  for (Stage* stage : s->stages()) {
    if (stage->is_placeholder()) args.push_back(stage->op->output(0));
  }
  args.insert(args.end(), outputs.begin(), outputs.end());
  absl::StatusOr<tir::PrimFunc> f = LowerSchedule(*s, args, "f");
  if (!f.ok()) return f.status().ToString();
  std::vector<std::string> loops;
  std::function<void(const tir::Stmt&)> walk = [&](const tir::Stmt& x) {
    if (!x) return;
    if (x->kind == tir::StmtKind::kFor) {
      loops.push_back(absl::StrCat(x->for_kind == tir::ForKind::kSerial ? "for" : tir::ForKindName(x->for_kind),
                                   " ", x->var->name));
    } else if (x->kind == tir::StmtKind::kAllocate) {
      loops.push_back("allocate " + x->buffer->name);
    } else if (x->kind == tir::StmtKind::kIfThenElse) {
      loops.push_back("if");
    }
    for (const tir::Stmt& c : x->body) walk(c);
  };
  walk((*f)->body);
  return absl::StrJoin(loops, "; ");
}

TEST(ScheduleX86Test, ElementwiseChainIsInlinedFusedParallelAndVectorized) {
  Tensor a = Placeholder({IntImm(3), IntImm(5), IntImm(37)}, kF32, "A");
  Tensor b = Compute(a.shape(), [&](const std::vector<Var>& i) { return a(E(i)) + 1.0f; }, "B", "elemwise");
  Tensor c = Compute(a.shape(), [&](const std::vector<Var>& i) {
    return tir::Max(b(E(i)), tir::FloatImm(0.0));
  }, "C", "elemwise");
  Tensor d = Compute(a.shape(), [&](const std::vector<Var>& i) { return c(E(i)) * 3.0f; }, "D", "elemwise");
  // 37 = 2 * 16 + 5: vectorized with a tail guard; (3, 5, 3 chunks) fused and parallel.
  EXPECT_EQ(Loops({d}), "parallel ax0.ax1.fused.ax2.outer.fused; vectorized ax2.inner; if");
  std::vector<double> av = RandomData(3 * 5 * 37, 11);
  std::vector<std::vector<double>> out;
  std::string text = LowerRun({a}, {d}, {av}, &out);
  EXPECT_EQ(text.find("allocate"), std::string::npos) << text;
  std::vector<double> ref(av.size());
  for (size_t i = 0; i < av.size(); ++i) ref[i] = F(std::max(F(av[i] + 1), 0.0f) * 3);
  EXPECT_LT(MaxAbsDiff(out[0], ref), 1e-6);
  // An exact multiple of the lanes: no guard.
  Tensor x = Placeholder({IntImm(4), IntImm(32)}, kF32, "X");
  Tensor y = Compute(x.shape(), [&](const std::vector<Var>& i) { return x(E(i)) * 2.0f; }, "Y");
  EXPECT_EQ(Loops({y}), "parallel ax0.ax1.outer.fused; vectorized ax1.inner");
  // Short rows are not vectorized; one short axis runs as one parallel loop.
  Tensor z = Compute({IntImm(4), IntImm(5)}, [&](const std::vector<Var>& i) { return IntImm(1) + i[0] * 0 + i[1]; }, "Z");
  EXPECT_EQ(Loops({z}), "parallel ax0; for ax1");
  Tensor w = Compute({IntImm(5)}, [&](const std::vector<Var>& i) { return i[0] * 2; }, "W");
  EXPECT_EQ(Loops({w}), "parallel ax0");
}

// An NCHWc tensor times a per-channel vector (squeeze-and-excitation's
// scale): only the leading loops up to 32 iterations are fused and parallel,
// the inner ones stay loops, so the indices are affine in them (after
// flattening: fused * 96 + ax3 * 16, the channel of G divided out once per
// parallel iteration, not per vector).
TEST(ScheduleX86Test, BlockedBroadcastKeepsInnerLoops) {
  auto make = [](int64_t c, int64_t h, int64_t w) {
    Tensor x = Placeholder({IntImm(1), IntImm(c), IntImm(h), IntImm(w), IntImm(16)}, kF32, "X");
    Tensor g = Placeholder({IntImm(1), IntImm(c), IntImm(1), IntImm(1), IntImm(16)}, kF32, "G");
    Tensor y = Compute(x.shape(), [=](const std::vector<Var>& i) {
      return x(E(i)) * g({i[0], i[1], IntImm(0), IntImm(0), i[4]});
    }, "Y", "broadcast");
    return std::vector<Tensor>{x, g, y};
  };
  std::vector<Tensor> big = make(9, 56, 56);
  EXPECT_EQ(Loops({big[2]}), "parallel ax0.ax1.fused.ax2.fused; for ax3; vectorized ax4.inner");
  std::vector<Tensor> t = make(2, 32, 6);
  const size_t n = 2 * 32 * 6 * 16;
  std::vector<double> xv = RandomData(n, 21), gv = RandomData(2 * 16, 22);
  std::vector<std::vector<double>> out;
  std::string text = LowerRun({t[0], t[1]}, {t[2]}, {xv, gv}, &out);
  EXPECT_EQ(Loops({t[2]}), "parallel ax0.ax1.fused.ax2.fused; for ax3; vectorized ax4.inner");
  std::vector<double> ref(n);
  for (size_t i = 0; i < n; ++i) ref[i] = F(xv[i] * gv[(i / (32 * 6 * 16)) * 16 + i % 16]);
  EXPECT_LT(MaxAbsDiff(out[0], ref), 1e-6);
}

TEST(ScheduleX86Test, BroadcastBiasAndSymbolicBatch) {
  Var n = tir::MakeVar("n");
  Tensor a = Placeholder({n, IntImm(20)}, kF32, "A");
  Tensor bias = Placeholder({IntImm(20)}, kF32, "bias");
  Tensor b = Compute(a.shape(), [&](const std::vector<Var>& i) { return a(E(i)) + bias({i[1]}); }, "B", "broadcast");
  Tensor c = Compute(a.shape(), [&](const std::vector<Var>& i) { return tir::Max(b(E(i)), tir::FloatImm(0.0)); }, "C", "elemwise");
  for (int64_t nv : {1, 3}) {
    std::vector<double> av = RandomData(static_cast<size_t>(nv * 20), 12), bv = RandomData(20, 13);
    std::vector<std::vector<double>> out;
    std::string text = LowerRun({a, bias}, {c}, {av, bv}, &out, 16, {{"n", nv}});
    std::vector<double> ref(av.size());
    for (size_t i = 0; i < av.size(); ++i) ref[i] = std::max(F(av[i] + bv[i % 20]), 0.0f);
    EXPECT_LT(MaxAbsDiff(out[0], ref), 1e-6) << text;
    EXPECT_NE(text.find("parallel"), std::string::npos) << text;
    EXPECT_NE(text.find("vectorized"), std::string::npos) << text;
  }
}

// conv2d NCHW (stride 1, no padding) + bias + relu.
struct ConvBiasRelu {
  Tensor data, weight, bias, conv, out;
  int64_t n = 1, ci = 3, h = 6, w = 7, co = 4, kh = 3, kw = 3;
  ConvBiasRelu() {
    data = Placeholder({IntImm(n), IntImm(ci), IntImm(h), IntImm(w)}, kF32, "data");
    weight = Placeholder({IntImm(co), IntImm(ci), IntImm(kh), IntImm(kw)}, kF32, "weight");
    bias = Placeholder({IntImm(co)}, kF32, "bias");
    IterVar rc = ReduceAxis({IntImm(0), IntImm(ci)}, "rc");
    IterVar ry = ReduceAxis({IntImm(0), IntImm(kh)}, "ry");
    IterVar rx = ReduceAxis({IntImm(0), IntImm(kw)}, "rx");
    conv = Compute({IntImm(n), IntImm(co), IntImm(h - kh + 1), IntImm(w - kw + 1)},
                   [&](const std::vector<Var>& i) {
                     return Sum(data({i[0], rc->var, i[2] + ry->var, i[3] + rx->var}) *
                                    weight({i[1], rc->var, ry->var, rx->var}),
                                {rc, ry, rx});
                   },
                   "conv", "conv2d_nchw");
    Tensor biased = Compute(conv.shape(), [&](const std::vector<Var>& i) {
      return conv(E(i)) + bias({i[1]});
    }, "bias_add", "broadcast");
    out = Compute(conv.shape(), [&](const std::vector<Var>& i) {
      return tir::Max(biased(E(i)), tir::FloatImm(0.0));
    }, "relu", "elemwise");
  }
  std::vector<double> Reference(const std::vector<double>& d, const std::vector<double>& wt,
                                const std::vector<double>& b) const {
    const int64_t oh = h - kh + 1, ow = w - kw + 1;
    std::vector<double> r(static_cast<size_t>(n * co * oh * ow));
    for (int64_t o = 0; o < co; ++o) {
      for (int64_t y = 0; y < oh; ++y) {
        for (int64_t x = 0; x < ow; ++x) {
          float acc = 0;
          for (int64_t c = 0; c < ci; ++c) {
            for (int64_t dy = 0; dy < kh; ++dy) {
              for (int64_t dx = 0; dx < kw; ++dx) {
                acc += F(d[static_cast<size_t>((c * h + y + dy) * w + x + dx)]) *
                       F(wt[static_cast<size_t>(((o * ci + c) * kh + dy) * kw + dx)]);
              }
            }
          }
          r[static_cast<size_t>((o * oh + y) * ow + x)] = std::max(F(acc + b[static_cast<size_t>(o)]), 0.0f);
        }
      }
    }
    return r;
  }
};

TEST(ScheduleX86Test, ConvBiasReluComputesTheConvInsideTheOutputLoop) {
  ConvBiasRelu net;
  // lanes 4: the output's width 5 = 4 + 1 is split and vectorized; the conv is
  // computed per (n, c, h, w-chunk) of the output, its own width chunk
  // vectorized inside its reduction loops.
  EXPECT_EQ(Loops({net.out}, 4),
            "parallel ax0.ax1.fused.ax2.fused.ax3.outer.fused; allocate conv; "
            "vectorized ax3.inner.init; for rc; for ry; for rx; vectorized ax3.inner; if; "
            "vectorized ax3.inner; if");
  std::vector<double> d = RandomData(static_cast<size_t>(net.ci * net.h * net.w), 21);
  std::vector<double> wt = RandomData(static_cast<size_t>(net.co * net.ci * net.kh * net.kw), 22);
  std::vector<double> b = RandomData(static_cast<size_t>(net.co), 23);
  for (int lanes : {4, 16, 1}) {
    std::vector<std::vector<double>> out;
    std::string text = LowerRun({net.data, net.weight, net.bias}, {net.out}, {d, wt, b}, &out, lanes);
    EXPECT_LT(MaxAbsDiff(out[0], net.Reference(d, wt, b)), 1e-5) << "lanes " << lanes << "\n" << text;
  }
}

// A convolution's zero-padded input (the stage nn.conv2d names "pad") is
// computed first, not inlined: inlined, its bounds test differs between the
// lanes of an output row and the conv's vector loop falls back to scalars.
// Other pads (read by no convolution) are still inlined.
TEST(ScheduleX86Test, ConvolutionPadIsComputedFirst) {
  const int64_t ci = 2, h = 5, w = 6, co = 3;
  Tensor data = Placeholder({IntImm(1), IntImm(ci), IntImm(h), IntImm(w)}, kF32, "data");
  Tensor weight = Placeholder({IntImm(co), IntImm(ci), IntImm(3), IntImm(3)}, kF32, "weight");
  Tensor pad = Compute({IntImm(1), IntImm(ci), IntImm(h + 2), IntImm(w + 2)},
                       [&](const std::vector<Var>& i) {
                         const PrimExpr in = tir::And(
                             tir::And(tir::GE(i[2], IntImm(1)), tir::LT(i[2], IntImm(h + 1))),
                             tir::And(tir::GE(i[3], IntImm(1)), tir::LT(i[3], IntImm(w + 1))));
                         return tir::Call(
                             kF32, "if_then_else",
                             {in, data({i[0], i[1], i[2] - IntImm(1), i[3] - IntImm(1)}),
                              tir::FloatImm(0.0)});
                       },
                       "pad", "injective");
  IterVar rc = ReduceAxis({IntImm(0), IntImm(ci)}, "rc");
  IterVar ry = ReduceAxis({IntImm(0), IntImm(3)}, "ry");
  IterVar rx = ReduceAxis({IntImm(0), IntImm(3)}, "rx");
  Tensor conv = Compute({IntImm(1), IntImm(co), IntImm(h), IntImm(w)},
                        [&](const std::vector<Var>& i) {
                          return Sum(pad({i[0], rc->var, i[2] + ry->var, i[3] + rx->var}) *
                                         weight({i[1], rc->var, ry->var, rx->var}),
                                     {rc, ry, rx});
                        },
                        "conv2d", "conv2d_nchw");
  const std::string loops = Loops({conv}, 4);
  EXPECT_TRUE(absl::StartsWith(loops, "allocate pad; parallel")) << loops;
  std::vector<double> d = RandomData(static_cast<size_t>(ci * h * w), 31);
  std::vector<double> wt = RandomData(static_cast<size_t>(co * ci * 9), 32);
  std::vector<std::vector<double>> out;
  LowerRun({data, weight}, {conv}, {d, wt}, &out, 4);
  std::vector<double> want(static_cast<size_t>(co * h * w));
  for (int64_t o = 0; o < co; ++o) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        float acc = 0;
        for (int64_t c = 0; c < ci; ++c) {
          for (int64_t dy = 0; dy < 3; ++dy) {
            for (int64_t dx = 0; dx < 3; ++dx) {
              const int64_t iy = y + dy - 1, ix = x + dx - 1;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              acc += F(d[static_cast<size_t>((c * h + iy) * w + ix)]) *
                     F(wt[static_cast<size_t>(((o * ci + c) * 3 + dy) * 3 + dx)]);
            }
          }
        }
        want[static_cast<size_t>((o * h + y) * w + x)] = acc;
      }
    }
  }
  EXPECT_LT(MaxAbsDiff(out[0], want), 1e-5);
  // The same stage read by a max reduction (no convolution): inlined.
  IterVar r = ReduceAxis({IntImm(0), IntImm(3)}, "r");
  Tensor pooled = Compute({IntImm(1), IntImm(ci), IntImm(h), IntImm(w)},
                          [&](const std::vector<Var>& i) {
                            return Max(pad({i[0], i[1], i[2] + r->var, i[3]}), {r});
                          },
                          "pool", "pool_max");
  EXPECT_EQ(Loops({pooled}, 4).find("allocate pad"), std::string::npos) << Loops({pooled}, 4);
}

// A transposition (NCHW16c -> NCHW through an inlined stage): the channel
// axis is split by the source's 16-lane block and that block looped just
// outside the width's vector, so the 16 strided vector reads of a width
// chunk hit the same cache lines back to back. A plain elementwise stage
// (nothing transposed) keeps its loops.
TEST(ScheduleX86Test, TranspositionTilesTheTransposedAxisByItsBlock) {
  const int64_t cb = 3, w = 24;
  Tensor a = Placeholder({IntImm(1), IntImm(cb), IntImm(w), IntImm(16)}, kF32, "A");
  Tensor unblocked = Compute({IntImm(1), IntImm(cb * 16), IntImm(w)}, [&](const std::vector<Var>& i) {
    return a({i[0], tir::FloorDiv(i[1], IntImm(16)), i[2], tir::FloorMod(i[1], IntImm(16))});
  }, "layout", "injective");
  Tensor out = Compute(unblocked.shape(), [&](const std::vector<Var>& i) {
    return unblocked(E(i)) * 2.0f;
  }, "scaled", "elemwise");
  // (3 channel blocks x 3 width chunks: fewer than 32 iterations, all fused
  // into the parallel loop.)
  EXPECT_EQ(Loops({out}, 8),
            "parallel ax0.ax1.outer.fused.ax2.outer.fused; for ax1.inner; vectorized ax2.inner");
  std::vector<double> av = RandomData(static_cast<size_t>(cb * w * 16), 41);
  std::vector<std::vector<double>> got;
  LowerRun({a}, {out}, {av}, &got, 8);
  std::vector<double> want(static_cast<size_t>(cb * 16 * w));
  for (int64_t c = 0; c < cb * 16; ++c) {
    for (int64_t x = 0; x < w; ++x) {
      want[static_cast<size_t>(c * w + x)] =
          F(F(av[static_cast<size_t>(((c / 16) * w + x) * 16 + c % 16)]) * 2.0f);
    }
  }
  EXPECT_LT(MaxAbsDiff(got[0], want), 1e-6);
  Tensor plain = Compute(unblocked.shape(), [&](const std::vector<Var>& i) {
    return a({i[0], IntImm(0), i[2], IntImm(0)}) + tir::FloatImm(1.0);
  }, "plain", "elemwise");
  EXPECT_EQ(Loops({plain}, 8), "parallel ax0.ax1.fused; for ax2.outer; vectorized ax2.inner");
}

TEST(ScheduleX86Test, ReductionOutputsAndSharedReductions) {
  Tensor a = Placeholder({IntImm(6), IntImm(40)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(40)}, "k");
  Tensor rs = Compute({IntImm(6)}, [&](const std::vector<Var>& i) { return Sum(a({i[0], k->var}), {k}); }, "rowsum", "comm_reduce");
  // A reduction output: rows in parallel, the reduction over the contiguous
  // axis factored into 16 lanes of partial sums (40 = 2 x 16 + 8: the last
  // step guarded), which are then summed.
  EXPECT_EQ(Loops({rs}),
            "parallel ax0; allocate rowsum.rf; vectorized k.inner.init; for k.outer; "
            "vectorized k.inner; if; for k.inner.v");
  // Read by two outputs: stays at the root, parallel.
  Tensor p = Compute({IntImm(6)}, [&](const std::vector<Var>& i) { return rs({i[0]}) * 2.0f; }, "P");
  Tensor q = Compute({IntImm(6), IntImm(40)}, [&](const std::vector<Var>& i) { return tir::Div(a(E(i)), rs({i[0]})); }, "Q");
  EXPECT_EQ(Loops({p, q}),
            "allocate rowsum; parallel ax0; allocate rowsum.rf; vectorized k.inner.init; "
            "for k.outer; vectorized k.inner; if; for k.inner.v; parallel ax0; "
            "parallel ax0.ax1.outer.fused; vectorized ax1.inner; if");
  std::vector<double> av = RandomData(240, 31, 0.5, 1.5);
  std::vector<std::vector<double>> out;
  LowerRun({a}, {p, q}, {av}, &out);
  std::vector<double> rp(6), rq(240);
  for (int i = 0; i < 6; ++i) {
    float acc = 0;
    for (int j = 0; j < 40; ++j) acc += F(av[static_cast<size_t>(i * 40 + j)]);
    rp[static_cast<size_t>(i)] = F(acc * 2);
    for (int j = 0; j < 40; ++j) rq[static_cast<size_t>(i * 40 + j)] = F(F(av[static_cast<size_t>(i * 40 + j)]) / acc);
  }
  // Sums of 40 values near 1 in another order: within a few float ulps of 80.
  EXPECT_LT(MaxAbsDiff(out[0], rp), 1e-4);
  EXPECT_LT(MaxAbsDiff(out[1], rq), 1e-6);
}

// A 3x3 stride-2 max pool over NCHW16c (8 lanes): the parallel loop covers
// (n, channel block, output row), the row's pixels and vectors stay loops
// (affine indices), the 3x3 window is unrolled; a window of 49 (a global
// pool) stays a loop. (Loops of extent 1 are not listed.)
TEST(ScheduleX86Test, PoolingWindowsAreUnrolledInsideRowLoops) {
  const int64_t cb = 4, h = 17, oh = 8;  // 1 * 4 * 8 = 32 rows: enough tasks
  Tensor a = Placeholder({IntImm(1), IntImm(cb), IntImm(h), IntImm(h), IntImm(16)}, kF32, "A");
  IterVar rh = ReduceAxis({IntImm(0), IntImm(3)}, "rh");
  IterVar rw = ReduceAxis({IntImm(0), IntImm(3)}, "rw");
  Tensor pool = Compute(
      {IntImm(1), IntImm(cb), IntImm(oh), IntImm(oh), IntImm(16)},
      [&](const std::vector<Var>& i) {
        return Max(a({i[0], i[1], i[2] * IntImm(2) + rh->var, i[3] * IntImm(2) + rw->var, i[4]}),
                   {rh, rw});
      },
      "pool", "comm_reduce");
  EXPECT_EQ(Loops({pool}, 8),
            "parallel ax0.ax1.fused.ax2.fused; for ax3; for ax4.outer; vectorized ax4.inner.init; "
            "unrolled rh; unrolled rw; vectorized ax4.inner");
  std::vector<double> av = RandomData(static_cast<size_t>(cb * h * h * 16), 41);
  std::vector<std::vector<double>> out;
  LowerRun({a}, {pool}, {av}, &out, 8);
  std::vector<double> ref(static_cast<size_t>(cb * oh * oh * 16));
  for (int64_t c = 0; c < cb; ++c)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < oh; ++x)
        for (int64_t l = 0; l < 16; ++l) {
          double m = -INFINITY;
          for (int64_t dy = 0; dy < 3; ++dy)
            for (int64_t dx = 0; dx < 3; ++dx)
              m = std::max(m, static_cast<double>(F(
                                  av[static_cast<size_t>(((c * h + y * 2 + dy) * h + x * 2 + dx) * 16 + l)])));
          ref[static_cast<size_t>(((c * oh + y) * oh + x) * 16 + l)] = m;
        }
  EXPECT_EQ(MaxAbsDiff(out[0], ref), 0.0);

  IterVar gh = ReduceAxis({IntImm(0), IntImm(7)}, "gh");
  IterVar gw = ReduceAxis({IntImm(0), IntImm(7)}, "gw");
  Tensor b = Placeholder({IntImm(1), IntImm(64), IntImm(7), IntImm(7), IntImm(16)}, kF32, "B");
  Tensor gsum = Compute(
      {IntImm(1), IntImm(64), IntImm(1), IntImm(1), IntImm(16)},
      [&](const std::vector<Var>& i) {
        return Sum(b({i[0], i[1], gh->var, gw->var, i[4]}), {gh, gw});
      },
      "gsum", "comm_reduce");
  EXPECT_EQ(Loops({gsum}, 8),
            "parallel ax0.ax1.fused; for ax4.outer; vectorized ax4.inner.init; for gh; for gw; "
            "vectorized ax4.inner");
}

// A reduction along the innermost axis of its input with at least two
// vectors per row (softmax's max and sum, mean over the last axis) is
// factored: a vector of partial results per row, accumulated from
// contiguous loads, then its lanes reduced; as an output, at the root, and
// computed per element inside an output that divides it.
TEST(ScheduleX86Test, ContiguousRowReductionsAreFactoredAndVectorized) {
  Tensor a = Placeholder({IntImm(6), IntImm(64)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(64)}, "k");
  Tensor rs = Compute({IntImm(6)}, [&](const std::vector<Var>& i) { return Sum(a({i[0], k->var}), {k}); },
                      "rowsum", "comm_reduce");
  EXPECT_EQ(Loops({rs}), "parallel ax0; allocate rowsum.rf; vectorized k.inner.init; for k.outer; "
                         "vectorized k.inner; for k.inner.v");
  std::vector<double> av = RandomData(6 * 64, 41, 0.5, 1.5);
  std::vector<double> ref(6);
  for (int i = 0; i < 6; ++i) {
    double acc = 0;
    for (int j = 0; j < 64; ++j) acc += F(av[static_cast<size_t>(i * 64 + j)]);
    ref[static_cast<size_t>(i)] = acc;
  }
  std::vector<std::vector<double>> out;
  LowerRun({a}, {rs}, {av}, &out);
  EXPECT_LT(MaxAbsDiff(out[0], ref), 1e-4);
  // mean: the sum attached per element of the division.
  IterVar k2 = ReduceAxis({IntImm(0), IntImm(64)}, "k2");
  Tensor sum = Compute({IntImm(6)}, [&](const std::vector<Var>& i) { return Sum(a({i[0], k2->var}), {k2}); },
                       "sum", "comm_reduce");
  Tensor mean = Compute({IntImm(6)}, [&](const std::vector<Var>& i) { return tir::Div(sum({i[0]}), tir::FloatImm(64.0)); },
                        "mean", "elemwise");
  std::string loops = Loops({mean});
  EXPECT_NE(loops.find("sum.rf"), std::string::npos) << loops;
  EXPECT_NE(loops.find("vectorized k2.inner"), std::string::npos) << loops;
  out.clear();
  LowerRun({a}, {mean}, {av}, &out);
  for (double& r : ref) r /= 64;
  EXPECT_LT(MaxAbsDiff(out[0], ref), 1e-5);
  // A row of one vector only, or a reduction over a strided axis: as before.
  Tensor b = Placeholder({IntImm(64), IntImm(6)}, kF32, "B");
  IterVar kc = ReduceAxis({IntImm(0), IntImm(64)}, "kc");
  Tensor cs = Compute({IntImm(6)}, [&](const std::vector<Var>& i) { return Sum(b({kc->var, i[0]}), {kc}); },
                      "colsum", "comm_reduce");
  EXPECT_EQ(Loops({cs}), "parallel ax0; for kc");
}

TEST(ScheduleX86Test, ArgMaxOutputAndNoInlineAttr) {
  Tensor x = Placeholder({IntImm(3), IntImm(4)}, kF32, "X");
  Tensor neg = Compute(x.shape(), [&](const std::vector<Var>& i) { return x(E(i)) * -1.0f; }, "neg", "elemwise",
                       {{"no_inline", "1"}});
  IterVar r = ReduceAxis({IntImm(0), IntImm(4)}, "r");
  Tensor am = Compute({IntImm(3)}, [&](const std::vector<Var>& i) { return ArgMax(neg({i[0], r->var}), {r}); }, "AM");
  // "no_inline": neg stays a stage of its own (rows parallel; 4 < 16 lanes: no vectors).
  EXPECT_EQ(Loops({am}), "allocate neg; parallel ax0; for ax1; parallel ax0; allocate AM.val; for r; if");
  std::vector<double> xv = {3, 1, 1, 2, kNaN, 0, -5, -5, 7, 7, 7, 7};
  std::vector<std::vector<double>> out;
  LowerRun({x}, {am}, {xv}, &out);
  EXPECT_EQ(out[0], (std::vector<double>{1, 0, 0}));
}

TEST(ScheduleX86Test, ScalarOutputAndErrors) {
  Tensor a = Placeholder({IntImm(8)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(8)}, "k");
  Tensor total = Compute({}, [&](const std::vector<Var>&) { return Sum(a({k->var}), {k}); }, "total");
  std::vector<double> av = RandomData(8, 41);
  std::vector<std::vector<double>> out;
  LowerRun({a}, {total}, {av}, &out);
  double ref = 0;
  for (double v : av) ref += v;
  ASSERT_EQ(out[0].size(), 1u);
  EXPECT_NEAR(out[0][0], ref, 1e-5);

  absl::StatusOr<Schedule> s = CreateSchedule({total});
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(ScheduleDefaultX86(*s, {total}, 0).ok());
  EXPECT_FALSE(ScheduleDefaultX86(*s, {total, Placeholder({IntImm(1)}, kF32, "Z")}).ok());
}

// A symbolic innermost extent (a sequence length) is not fused into the
// parallel loop, where every element would divide the fused index by it at
// run time; the loops around it are fused.
TEST(ScheduleX86Test, SymbolicInnermostExtentStaysASerialLoop) {
  const tir::Var n = tir::MakeVar("n");
  Tensor a = Placeholder({IntImm(3), n, n}, kF32, "A");
  Tensor b = Compute(a.shape(), [&](const std::vector<Var>& i) { return a(E(i)) * 2.0f; }, "B",
                     "elemwise");
  EXPECT_EQ(Loops({b}), "parallel ax0.ax1.fused; for ax2");
}

}  // namespace
}  // namespace kiln::te
