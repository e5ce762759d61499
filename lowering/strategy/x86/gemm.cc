// File: lowering/strategy/x86/gemm.cc — dense, matmul and batch_matmul on x86.
//
// Compute: C[..., n] = sum_k A[..., k] * Bp[n / NR, k, n % NR], where Bp is B
// packed into column panels of NR (a multiple of the vector width): each
// micro-kernel step reads NR contiguous floats of B. A constant B (a weight)
// is packed once, at compile time, into a new constant; any other B is packed
// by a stage of the kernel (parallel, vectorized). When NR does not divide N,
// B is zero-padded to a multiple of NR and C computed that wide, then sliced.
//
// Schedule (the micro-kernel, as BLIS/TVM's dense_pack): the output is tiled
// MR x NR; the tiles (column panel outside, row tile inside, so a B panel is
// reused from cache by every row tile) are fused into one parallel loop; in
// each tile a local MR x NR accumulator (MR * NR / lanes vector registers) is
// computed with k outermost, rows and vectors unrolled, then the epilogue
// (bias, activation, residual add: whatever FuseOps put after the GEMM) is
// applied while the tile is written out. MR and NR come from the target's
// vector width and register count: 12 x 32 on AVX-512 (24 accumulators), 6 x 16
// on AVX2 (12 of 16 registers); MR prefers a divisor of M.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "lowering/strategy/strategy.h"
#include "lowering/strategy/x86/gemm.h"
#include "lowering/strategy/x86/x86.h"

namespace kiln::lowering::strategy::x86 {
namespace {

using tir::IntImm;
using tir::PrimExpr;

constexpr char kPackAttr[] = "kiln.pack";
constexpr char kPackKSplitAttr[] = "kiln.pack_k_split";  // GemmOperands::k_split

struct Blocking {
  int64_t mr = 1;
  int64_t nr = 16;
  int64_t lanes = 16;
};

// The most rows a register tile of `nv` vectors per row holds: the
// accumulators plus the nv B vectors and an A broadcast within the
// registers, at most 14.
int64_t MaxRowTile(const CpuTarget& t, int64_t nv) {
  return std::max<int64_t>(1, std::min<int64_t>(14, (t.vector_registers - nv - 2) / nv));
}

// The vectors per row of a GEMM of at most 3 rows (a GEMV: one step of a
// recurrent layer, a decoder's token): enough that the tile's accumulators
// (rows x vectors) hide the FMA latency (8: 4 cycles x 2 ports). With 2 a
// single row was two dependent chains of K FMAs each, a quarter of the FMA
// throughput: an LSTM step's [1, 512] x [512, 2048] ran at 5-6 GFLOP/s. The
// panel stays within N (padded by at most 1/8) and leaves at least 4
// panels for the threads.
int64_t SmallMVectors(const CpuTarget& t, int64_t m, int64_t n) {
  const int64_t lanes = t.Lanes(DataType::Float(32));
  for (int64_t nv = (8 + m - 1) / m; nv > 2; --nv) {
    const int64_t nr = nv * lanes;
    const int64_t nb = (n + nr - 1) / nr;
    if (nb >= 4 && (nb * nr - n) * 8 <= n) return nv;
  }
  return n >= 2 * lanes ? 2 : 1;
}

Blocking ChooseBlocking(const CpuTarget& t, int64_t m, int64_t n, bool wide_small_m = false) {
  Blocking b;
  b.lanes = t.Lanes(DataType::Float(32));
  const int64_t nv = wide_small_m && m >= 1 && m <= 3 ? SmallMVectors(t, m, n)
                     : n >= 2 * b.lanes             ? 2
                                                    : 1;
  b.nr = nv * b.lanes;
  const int64_t max_mr = MaxRowTile(t, nv);
  if (m <= 0) {  // symbolic
    b.mr = max_mr;
  } else if (m <= max_mr) {
    b.mr = m;
  } else {
    b.mr = max_mr;
    for (int64_t r = max_mr; r >= std::max<int64_t>(2, max_mr / 2); --r) {
      if (m % r == 0) {
        b.mr = r;
        break;
      }
    }
  }
  return b;
}

bool StaticInt(const PrimExpr& e, int64_t* v) { return tir::IsConstInt(e, v); }

// Packs a constant B (element (n, k) from `at`) into [ceil(N/NR), K, NR],
// the columns past N zero.
absl::StatusOr<Ref<const HostTensor>> PackConstant(
    const std::function<float(int64_t, int64_t)>& at, int64_t n, int64_t k, int64_t nr) {
  const int64_t nb = (n + nr - 1) / nr;
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> p,
                        HostTensor::Create(DataType::Float(32), {nb, k, nr}));  // zeroed
  float* dst = p->mutable_data<float>();
  for (int64_t jb = 0; jb < nb; ++jb) {
    for (int64_t kk = 0; kk < k; ++kk) {
      float* row = dst + (jb * k + kk) * nr;
      for (int64_t j = 0; j < nr; ++j) {
        const int64_t col = jb * nr + j;
        if (col >= n) break;
        row[j] = at(col, kk);
      }
    }
  }
  return Ref<const HostTensor>(p);
}

// A [N, K] (nk) or [K, N] float32 constant as an element function.
std::function<float(int64_t, int64_t)> Matrix(Ref<const HostTensor> b, bool nk, int64_t n,
                                              int64_t k) {
  return [b, nk, n, k](int64_t col, int64_t kk) {
    const float* src = b->data<float>();
    return nk ? src[col * k + kk] : src[kk * n + col];
  };
}

}  // namespace

absl::StatusOr<std::optional<std::vector<te::Tensor>>> BuildGemm(const StrategyComputeCtx& ctx,
                                                                 const GemmOperands& g,
                                                                 const std::string& name,
                                                                 const std::string& tag,
                                                                 const std::string& impl) {
  int64_t m = 0;
  if (g.out_shape.size() >= 2 && !StaticInt(g.out_shape[g.out_shape.size() - 2], &m)) m = 0;
  if (g.out_shape.size() < 2) m = 1;
  Blocking bl = ChooseBlocking(ctx.target, m, g.n, g.wide_small_m);
  // With pad_m, a row tile that does not divide M is replaced by the one
  // that pads M least among those with enough accumulators to hide the FMA
  // latency (8: 4 cycles x 2 ports), and M is computed padded to it.
  int64_t mp = m;
  if (g.pad_m && m > bl.mr && m % bl.mr != 0) {
    const int64_t nv = bl.nr / bl.lanes;
    const int64_t max_mr = bl.mr;  // no divisor of M was close: ChooseBlocking's largest
    double best = -1;
    for (int64_t r = max_mr; r >= 1; --r) {
      const int64_t padded_m = (m + r - 1) / r * r;
      const double score = std::min(1.0, static_cast<double>(r * nv) / 8.0) *
                           static_cast<double>(m) / static_cast<double>(padded_m);
      if (score > best + 1e-9) {
        best = score;
        bl.mr = r;
        mp = padded_m;
      }
    }
  }
  const int64_t nr = bl.nr;
  const int64_t nb = (g.n + nr - 1) / nr;
  const int64_t npad = nb * nr;
  const bool padded = npad != g.n || mp != m;
  const DataType f32 = DataType::Float(32);

  te::Tensor bp;
  const bool batched = g.b_batch > 0;
  if (g.b_const_at && !batched) {
    KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> packed, PackConstant(g.b_const_at, g.n, g.k, nr));
    bp = ctx.add_constant(packed, absl::StrCat(name, "_packed_weight"));
  } else {
    std::vector<PrimExpr> shape = {IntImm(nb), IntImm(g.k), IntImm(nr)};
    if (batched) shape.insert(shape.begin(), IntImm(g.b_batch));
    bp = te::Compute(
        shape,
        [&](const std::vector<tir::Var>& i) {
          const size_t o = batched ? 1 : 0;
          const PrimExpr col = i[o] * IntImm(nr) + i[o + 2];
          const PrimExpr b = batched ? PrimExpr(i[0]) : IntImm(0);
          if (!padded) return g.b(b, col, i[o + 1]);
          // Past column N the panel is zero. A Select evaluates both sides,
          // so the load reads column min(col, N - 1): reading B's row N and
          // beyond would run past its end (by up to NR - 1 rows of K, enough
          // to leave the mapping for a [1000, 2048] weight). The clamp keeps
          // the stage vectorizable, which a lazy if_then_else would not.
          const PrimExpr v = g.b(b, tir::Min(col, IntImm(g.n - 1)), i[o + 1]);
          return tir::Select(tir::LT(col, IntImm(g.n)), v, tir::MakeConst(f32, 0));
        },
        absl::StrCat(name, "_pack"), "injective", {{"no_inline", "1"}, {kPackAttr, "1"}});
  }
  // A packed into row panels [..., M / MR, K, MR] when the rows are tiled by
  // an MR dividing M: each micro-kernel step then reads MR contiguous floats
  // instead of one float from each of MR rows a whole row apart (MR streams
  // that alias in the L1 cache when the row length is a power of two).
  const size_t r = g.out_shape.size();
  const bool pack_a = r >= 2 && mp > bl.mr && mp % bl.mr == 0;
  std::optional<te::Tensor> ap;
  if (pack_a) {
    std::vector<PrimExpr> shape(g.out_shape.begin(), g.out_shape.end() - 2);
    shape.push_back(IntImm(mp / bl.mr));
    shape.push_back(IntImm(g.k));
    shape.push_back(IntImm(bl.mr));
    ap = te::Compute(
        shape,
        [&](const std::vector<tir::Var>& i) {
          std::vector<PrimExpr> lead(i.begin(), i.end() - 3);
          PrimExpr row = i[i.size() - 3] * IntImm(bl.mr) + i.back();
          if (mp != m) row = tir::Min(row, IntImm(m - 1));  // the padded rows repeat the last
          lead.push_back(row);
          return g.a(lead, i[i.size() - 2]);
        },
        absl::StrCat(name, "_pack_a"), "injective",
        {{"no_inline", "1"}, {kPackAttr, "a"}, {kPackKSplitAttr, absl::StrJoin(g.k_split, ",")}});
  }
  const tir::IterVar rk = te::ReduceAxis({IntImm(0), IntImm(g.k)}, "k");
  std::vector<PrimExpr> cshape = g.out_shape;
  cshape.back() = IntImm(npad);
  if (mp != m) cshape[r - 2] = IntImm(mp);
  te::Tensor c = te::Compute(
      cshape,
      [&](const std::vector<tir::Var>& idx) {
        std::vector<PrimExpr> lead(idx.begin(), idx.end() - 1);
        const PrimExpr col = idx.back();
        std::vector<PrimExpr> bi = {tir::FloorDiv(col, IntImm(nr)), rk->var,
                                    tir::FloorMod(col, IntImm(nr))};
        if (batched) bi.insert(bi.begin(), g.b_batch_index(lead));
        PrimExpr av;
        if (ap) {
          std::vector<PrimExpr> ai(lead.begin(), lead.end() - 1);
          ai.push_back(tir::FloorDiv(lead.back(), IntImm(bl.mr)));
          ai.push_back(rk->var);
          ai.push_back(tir::FloorMod(lead.back(), IntImm(bl.mr)));
          av = (*ap)(ai);
        } else {
          if (mp != m) lead.back() = tir::Min(lead.back(), IntImm(m - 1));
          av = g.a(lead, rk->var);
        }
        return te::Sum(tir::Mul(av, bp(bi)), {rk});
      },
      name, tag,
      {{kStrategyAttr, impl},
       {"kiln.mr", absl::StrCat(bl.mr)},
       {"kiln.nr", absl::StrCat(nr)},
       {"kiln.lanes", absl::StrCat(bl.lanes)}});
  if (!padded) return std::optional<std::vector<te::Tensor>>(std::vector<te::Tensor>{c});
  te::Tensor out = te::Compute(
      g.out_shape,
      [&](const std::vector<tir::Var>& idx) {
        return c(std::vector<PrimExpr>(idx.begin(), idx.end()));
      },
      absl::StrCat(name, "_unpad"), "injective");
  return std::optional<std::vector<te::Tensor>>(std::vector<te::Tensor>{out});
}

namespace {

bool AllFloat32(const StrategyComputeCtx& ctx) {
  for (const te::Tensor& t : ctx.base.inputs) {
    if (t.dtype() != DataType::Float(32)) return false;
  }
  return ctx.base.out_dtypes.size() == 1 && ctx.base.out_dtypes[0] == DataType::Float(32);
}

// A GEMM is worth the packed path when N spans at least one vector.
bool WorthIt(const StrategyComputeCtx& ctx, int64_t n, int64_t k) {
  return n >= ctx.target.Lanes(DataType::Float(32)) && k >= 1;
}

// A GEMM whose output has several leading dimensions ([1, 7, 7, N]: a
// ConvNeXt's pointwise MLP, a token-major transformer's dense) is tiled
// along the second-to-last one only, so a short one (7 rows: a 6-row tile
// and a 1-row tile, guarded inside the K loop) wastes most of its tiles.
// Those are flattened into one M instead (49 rows, padded to 50 for a 5-row
// tile): the GEMM computes [M, N] and the output reads it back, the two
// tiled alike by GemmSchedule. A 2-D output (or one leading dimension
// holding every row) whose M no tile divides takes the same path for the
// padding: 7 rows (a short sequence) as 2 tiles of 4, 197 (ViT's tokens) as
// 33 of 6, no guarded tail tile. Only where the last leading dimension tiles
// badly (a tail tile, or fewer rows than a tile), more rows than one tile
// holds, and every leading dimension static.
struct FlatM {
  int64_t m = 0;
  std::vector<int64_t> dims;  // the output's leading dimensions
};
std::optional<FlatM> FlattenLeadingRows(const CpuTarget& t, const std::vector<PrimExpr>& out_shape,
                                        int64_t n) {
  if (out_shape.size() < 2) return std::nullopt;
  FlatM f;
  f.m = 1;
  for (size_t i = 0; i + 1 < out_shape.size(); ++i) {
    int64_t d = 0;
    if (!StaticInt(out_shape[i], &d) || d < 1) return std::nullopt;
    f.dims.push_back(d);
    f.m *= d;
  }
  const int64_t rows = f.dims.back();
  const Blocking b = ChooseBlocking(t, rows, n);
  const int64_t max_mr = MaxRowTile(t, b.nr / b.lanes);
  // One tile holds every row (a GEMV: padding it would multiply its work).
  if (f.m <= max_mr) return std::nullopt;
  if (rows % b.mr == 0 && rows >= max_mr) return std::nullopt;
  return f;
}

// The leading indices of flattened row `m` (row-major over f.dims).
std::vector<PrimExpr> Unflatten(const FlatM& f, const PrimExpr& m) {
  std::vector<PrimExpr> idx(f.dims.size());
  int64_t stride = 1;
  for (size_t i = f.dims.size(); i > 0; --i) {
    PrimExpr v = stride == 1 ? m : tir::FloorDiv(m, IntImm(stride));
    if (i > 1) v = tir::FloorMod(v, IntImm(f.dims[i - 1]));
    idx[i - 1] = v;
    stride *= f.dims[i - 1];
  }
  return idx;
}

// BuildGemm over the flattened rows, then the output [dims..., N] read from it.
absl::StatusOr<std::optional<std::vector<te::Tensor>>> BuildFlatGemm(
    const StrategyComputeCtx& ctx, GemmOperands g, const FlatM& f, const std::string& name,
    const std::string& tag, const std::string& impl) {
  const std::vector<PrimExpr> out_shape = g.out_shape;
  auto a = g.a;
  g.out_shape = {IntImm(f.m), IntImm(g.n)};
  g.pad_m = true;
  g.a = [a, f](const std::vector<PrimExpr>& lead, const PrimExpr& k) {
    return a(Unflatten(f, lead[0]), k);
  };
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<te::Tensor>> c, BuildGemm(ctx, g, name, tag, impl));
  if (!c) return c;
  const te::Tensor flat = (*c)[0];
  te::Tensor out = te::Compute(
      out_shape,
      [&](const std::vector<tir::Var>& i) {
        PrimExpr m = IntImm(0);
        for (size_t d = 0; d + 1 < i.size(); ++d) m = m * IntImm(f.dims[d]) + i[d];
        return flat({m, i.back()});
      },
      absl::StrCat(name, "_rows"), "injective");
  return std::optional<std::vector<te::Tensor>>(std::vector<te::Tensor>{out});
}

absl::StatusOr<std::optional<std::vector<te::Tensor>>> DenseCompute(const StrategyComputeCtx& ctx) {
  const auto none = std::optional<std::vector<te::Tensor>>();
  if (ctx.base.inputs.size() != 2 || !AllFloat32(ctx)) return none;
  const te::Tensor x = ctx.base.inputs[0];
  const te::Tensor w = ctx.base.inputs[1];
  int64_t n = 0, k = 0, xk = 0;
  if (w.ndim() != 2 || x.ndim() < 1 || !StaticInt(w.shape()[0], &n) ||
      !StaticInt(w.shape()[1], &k) || !StaticInt(x.shape().back(), &xk) || xk != k)
    return none;
  if (!WorthIt(ctx, n, k)) return none;
  GemmOperands g;
  g.out_shape = ctx.base.out_shapes[0];
  g.n = n;
  g.k = k;
  g.wide_small_m = true;
  g.a = [x](const std::vector<PrimExpr>& lead, const PrimExpr& kk) {
    std::vector<PrimExpr> i = lead;
    i.push_back(kk);
    return x(i);
  };
  g.b = [w](const PrimExpr&, const PrimExpr& nn, const PrimExpr& kk) { return w({nn, kk}); };
  if (ctx.constants.size() == 2 && ctx.constants[1]) {
    g.b_const_at = Matrix(ctx.constants[1], /*nk=*/true, n, k);
  }
  if (std::optional<FlatM> f = FlattenLeadingRows(ctx.target, g.out_shape, n)) {
    return BuildFlatGemm(ctx, g, *f, "T_dense", "dense", "dense_pack.x86");
  }
  return BuildGemm(ctx, g, "T_dense", "dense", "dense_pack.x86");
}

absl::StatusOr<std::optional<std::vector<te::Tensor>>> MatmulCompute(
    const StrategyComputeCtx& ctx) {
  const auto none = std::optional<std::vector<te::Tensor>>();
  if (ctx.base.inputs.size() != 2 || !AllFloat32(ctx)) return none;
  const MatmulAttrs& a = ctx.base.Attrs<MatmulAttrs>();
  const te::Tensor x = ctx.base.inputs[0];
  const te::Tensor y = ctx.base.inputs[1];
  const int r = x.ndim();
  if (r < 2 || y.ndim() != 2) return none;
  const bool ta = a.transpose_a, tb = a.transpose_b;
  int64_t n = 0, k = 0, xk = 0;
  if (!StaticInt(y.shape()[tb ? 0 : 1], &n) || !StaticInt(y.shape()[tb ? 1 : 0], &k) ||
      !StaticInt(x.shape()[static_cast<size_t>(ta ? r - 2 : r - 1)], &xk) || xk != k)
    return none;
  if (!WorthIt(ctx, n, k)) return none;
  GemmOperands g;
  g.out_shape = ctx.base.out_shapes[0];
  g.n = n;
  g.k = k;
  g.wide_small_m = true;
  g.a = [x, ta](const std::vector<PrimExpr>& lead, const PrimExpr& kk) {
    std::vector<PrimExpr> i(lead.begin(), lead.end() - 1);
    if (ta) {
      i.push_back(kk);
      i.push_back(lead.back());
    } else {
      i.push_back(lead.back());
      i.push_back(kk);
    }
    return x(i);
  };
  g.b = [y, tb](const PrimExpr&, const PrimExpr& nn, const PrimExpr& kk) {
    return tb ? y({nn, kk}) : y({kk, nn});
  };
  if (ctx.constants.size() == 2 && ctx.constants[1]) {
    g.b_const_at = Matrix(ctx.constants[1], /*nk=*/tb, n, k);
  }
  if (!ta) {
    if (std::optional<FlatM> f = FlattenLeadingRows(ctx.target, g.out_shape, n)) {
      return BuildFlatGemm(ctx, g, *f, "T_matmul", "matmul", "matmul_pack.x86");
    }
  }
  return BuildGemm(ctx, g, "T_matmul", "matmul", "matmul_pack.x86");
}

absl::StatusOr<std::optional<std::vector<te::Tensor>>> BatchMatmulCompute(
    const StrategyComputeCtx& ctx) {
  const auto none = std::optional<std::vector<te::Tensor>>();
  if (ctx.base.inputs.size() != 2 || !AllFloat32(ctx)) return none;
  const BatchMatmulAttrs& a = ctx.base.Attrs<BatchMatmulAttrs>();
  const te::Tensor x = ctx.base.inputs[0];
  const te::Tensor y = ctx.base.inputs[1];
  if (x.ndim() != 3 || y.ndim() != 3) return none;
  const bool ta = a.transpose_a, tb = a.transpose_b;
  int64_t n = 0, k = 0, xk = 0, by = 0;
  if (!StaticInt(y.shape()[tb ? 1 : 2], &n) || !StaticInt(y.shape()[tb ? 2 : 1], &k) ||
      !StaticInt(x.shape()[ta ? 1 : 2], &xk) || xk != k || !StaticInt(y.shape()[0], &by))
    return none;
  if (!WorthIt(ctx, n, k)) return none;
  const bool bx1 = tir::IsConstInt(x.shape()[0], &xk) && xk == 1;
  GemmOperands g;
  g.out_shape = ctx.base.out_shapes[0];
  g.n = n;
  g.k = k;
  g.wide_small_m = true;
  g.a = [x, ta, bx1](const std::vector<PrimExpr>& lead, const PrimExpr& kk) {
    const PrimExpr b = bx1 ? IntImm(0) : lead[0];
    return ta ? x({b, kk, lead[1]}) : x({b, lead[1], kk});
  };
  g.b = [y, tb](const PrimExpr& b, const PrimExpr& nn, const PrimExpr& kk) {
    return tb ? y({b, nn, kk}) : y({b, kk, nn});
  };
  g.b_batch = by;
  g.b_batch_index = [by](const std::vector<PrimExpr>& lead) {
    return by == 1 ? PrimExpr(IntImm(0)) : lead[0];
  };
  return BuildGemm(ctx, g, "T_batch_matmul", "batch_matmul", "batch_matmul_pack.x86");
}

// Packing stages: (batch, panel) fused and parallel; B's NR columns
// vectorized (A's MR rows are a transposition: scalar).
absl::Status SchedulePack(te::Stage* st, int64_t lanes) {
  std::vector<tir::IterVar> ax = st->op->axis;  // [batch...,] panel, k, width
  if (st->op->attrs.at(kPackAttr) == "a") {
    // K as the nested loops of k_split (innermost first here).
    std::vector<int64_t> split;
    auto it = st->op->attrs.find(kPackKSplitAttr);
    if (it != st->op->attrs.end() && !it->second.empty()) {
      for (absl::string_view f : absl::StrSplit(it->second, ',')) {
        int64_t v = 0;
        if (!absl::SimpleAtoi(f, &v) || v < 1) {
          return absl::InternalError(absl::StrCat("bad ", kPackKSplitAttr, ": ", it->second));
        }
        split.push_back(v);
      }
    }
    tir::IterVar k = ax[ax.size() - 2];
    for (size_t i = split.size(); i > 0; --i) {
      KILN_ASSIGN_OR_RETURN(te::SplitAxes ks, st->split(k, split[i - 1]));
      k = ks.outer;
    }
    std::vector<tir::IterVar> outer(ax.begin(), ax.end() - 2);
    KILN_ASSIGN_OR_RETURN(tir::IterVar f, st->fuse(outer));
    return st->parallel(f);
  }
  KILN_ASSIGN_OR_RETURN(te::SplitAxes v, st->split(ax.back(), lanes));
  KILN_RETURN_IF_ERROR(st->vectorize(v.inner));
  std::vector<tir::IterVar> outer(ax.begin(), ax.end() - 2);
  KILN_ASSIGN_OR_RETURN(tir::IterVar f, st->fuse(outer));
  return st->parallel(f);
}

// BuildFlatGemm's output [dims..., N] over its [M, N] anchor (`anchor`
// read by the output alone): the output's leading loops fused into M and
// tiled MR x NR as GemmSchedule tiles a 2-D output, the anchor in registers
// at each tile. (A plain 2-D GEMM with its epilogue gets the same loops
// here as GemmSchedule would give it.) False (nothing changed) where the
// stages are not so.
absl::StatusOr<bool> GemmScheduleFlatRows(te::Schedule& s, const te::Tensor& anchor, int64_t mr,
                                          int64_t nr, int64_t lanes) {
  te::Stage* acc = s[anchor];
  if (acc == nullptr || acc->is_output || !IsUntouched(*acc) || acc->op->axis.size() != 2 ||
      acc->op->reduce_axis.size() != 1) {
    return false;
  }
  KILN_ASSIGN_OR_RETURN(std::vector<te::Stage*> readers, s.ReadersOf(acc));
  if (readers.size() != 1 || !readers[0]->is_output || !IsUntouched(*readers[0]) ||
      !readers[0]->op->reduce_axis.empty() || readers[0]->op->axis.size() < 2) {
    return false;
  }
  te::Stage* out = readers[0];
  const std::vector<tir::IterVar> ax = out->op->axis;
  int64_t rows = 1, m = 0;
  for (size_t i = 0; i + 1 < ax.size(); ++i) {
    int64_t d = 0;
    if (!tir::IsConstInt(ax[i]->dom.extent, &d)) return false;
    rows *= d;
  }
  if (!tir::IsConstInt(acc->op->axis[0]->dom.extent, &m) || m < rows || m % mr != 0) return false;
  // The rows fused are the leading axes longer than 1: a unit axis stays
  // its own (outermost) loop, so the read index keeps its term and the
  // fused index simplifies back to the row (InferBound then gives each tile
  // its MR rows, not all of M).
  std::vector<tir::IterVar> unit, lead;
  for (size_t i = 0; i + 1 < ax.size(); ++i) {
    int64_t d = 0;
    tir::IsConstInt(ax[i]->dom.extent, &d);
    (d == 1 ? unit : lead).push_back(ax[i]);
  }
  if (lead.empty()) return false;
  std::vector<tir::IterVar> adjacent = unit;  // the rows' loops next to each other
  adjacent.insert(adjacent.end(), lead.begin(), lead.end());
  adjacent.push_back(ax.back());
  KILN_RETURN_IF_ERROR(out->reorder(adjacent));
  KILN_ASSIGN_OR_RETURN(tir::IterVar px, out->fuse(lead));
  KILN_ASSIGN_OR_RETURN(te::SplitAxes ms, out->split(px, mr));
  KILN_ASSIGN_OR_RETURN(te::SplitAxes ns, out->split(ax.back(), nr));
  KILN_ASSIGN_OR_RETURN(te::SplitAxes nv, out->split(ns.inner, lanes));
  std::vector<tir::IterVar> order = unit;
  for (const tir::IterVar& iv : {ns.outer, ms.outer, ms.inner, nv.outer, nv.inner}) {
    order.push_back(iv);
  }
  KILN_RETURN_IF_ERROR(out->reorder(order));
  std::vector<tir::IterVar> par = unit;
  par.push_back(ns.outer);
  par.push_back(ms.outer);
  KILN_ASSIGN_OR_RETURN(tir::IterVar tile, out->fuse(par));
  KILN_RETURN_IF_ERROR(out->parallel(tile));
  KILN_RETURN_IF_ERROR(out->vectorize(nv.inner));
  KILN_RETURN_IF_ERROR(acc->set_scope("local"));
  KILN_RETURN_IF_ERROR(acc->compute_at(out, tile));
  const std::vector<tir::IterVar> lax = acc->op->axis;  // m, n
  KILN_ASSIGN_OR_RETURN(te::SplitAxes lv, acc->split(lax[1], lanes));
  KILN_RETURN_IF_ERROR(acc->reorder({acc->op->reduce_axis[0], lax[0], lv.outer, lv.inner}));
  KILN_RETURN_IF_ERROR(acc->unroll(lax[0]));
  KILN_RETURN_IF_ERROR(acc->unroll(lv.outer));
  KILN_RETURN_IF_ERROR(acc->vectorize(lv.inner));
  return true;
}

}  // namespace

absl::Status GemmSchedule(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                          const te::Tensor& anchor, const CpuTarget&) {
  const te::Operation& op = anchor.op();
  const int64_t mr = IntAttr(op, "kiln.mr", 1);
  const int64_t nr = IntAttr(op, "kiln.nr", 16);
  const int64_t lanes = IntAttr(op, "kiln.lanes", 16);
  KILN_RETURN_IF_ERROR(InlineInjective(s, outputs));
  for (const te::Tensor& in : op->InputTensors()) {
    te::Stage* ps = s[in];
    if (ps != nullptr && !ps->is_placeholder() && in.op()->attrs.count(kPackAttr) &&
        IsUntouched(*ps)) {
      KILN_RETURN_IF_ERROR(SchedulePack(ps, lanes));
    }
  }
  KILN_ASSIGN_OR_RETURN(bool flat, GemmScheduleFlatRows(s, anchor, mr, nr, lanes));
  if (flat) return absl::OkStatus();
  KILN_ASSIGN_OR_RETURN(AccumulatorStages st, SplitAccumulator(s, anchor, SameShape));
  te::Stage* out = st.out;
  te::Stage* local = st.local;
  // The output tile loops.
  const std::vector<tir::IterVar> ax = out->op->axis;
  KILN_ASSIGN_OR_RETURN(te::SplitAxes ns, out->split(ax.back(), nr));
  KILN_ASSIGN_OR_RETURN(te::SplitAxes nv, out->split(ns.inner, lanes));
  std::vector<tir::IterVar> order(ax.begin(), ax.size() >= 2 ? ax.end() - 2 : ax.begin());
  std::vector<tir::IterVar> par = order;
  par.push_back(ns.outer);
  order.push_back(ns.outer);
  if (ax.size() >= 2) {
    KILN_ASSIGN_OR_RETURN(te::SplitAxes ms, out->split(ax[ax.size() - 2], mr));
    order.push_back(ms.outer);
    par.push_back(ms.outer);
    order.push_back(ms.inner);
  }
  order.push_back(nv.outer);
  order.push_back(nv.inner);
  KILN_RETURN_IF_ERROR(out->reorder(order));
  KILN_ASSIGN_OR_RETURN(tir::IterVar fused, out->fuse(par));
  KILN_RETURN_IF_ERROR(out->parallel(fused));
  KILN_RETURN_IF_ERROR(out->vectorize(nv.inner));
  // The register block: k outermost, rows and vectors unrolled, lanes vectorized.
  KILN_RETURN_IF_ERROR(local->compute_at(out, fused));
  const std::vector<tir::IterVar> lax = local->op->axis;
  if (local->op->reduce_axis.size() != 1 || lax.size() != ax.size()) {
    return absl::InternalError("unexpected accumulator stage axes");
  }
  KILN_ASSIGN_OR_RETURN(te::SplitAxes lv, local->split(lax.back(), lanes));
  std::vector<tir::IterVar> lorder(lax.begin(), lax.size() >= 2 ? lax.end() - 2 : lax.begin());
  lorder.push_back(local->op->reduce_axis[0]);
  if (lax.size() >= 2) lorder.push_back(lax[lax.size() - 2]);
  lorder.push_back(lv.outer);
  lorder.push_back(lv.inner);
  KILN_RETURN_IF_ERROR(local->reorder(lorder));
  if (lax.size() >= 2) KILN_RETURN_IF_ERROR(local->unroll(lax[lax.size() - 2]));
  KILN_RETURN_IF_ERROR(local->unroll(lv.outer));
  KILN_RETURN_IF_ERROR(local->vectorize(lv.inner));
  return absl::OkStatus();
}

absl::StatusOr<bool> GemmScheduleBlockedOutput(te::Schedule& s,
                                               const std::vector<te::Tensor>& outputs,
                                               const te::Tensor& anchor) {
  const te::Operation& op = anchor.op();
  const int64_t mr = IntAttr(op, "kiln.mr", 1);
  const int64_t nr = IntAttr(op, "kiln.nr", 16);
  const int64_t lanes = IntAttr(op, "kiln.lanes", 16);
  if (outputs.size() != 1 || op->axis.size() != 3 || op->reduce_axis.size() != 1) return false;
  KILN_RETURN_IF_ERROR(InlineInjective(s, outputs));
  te::Stage* acc = s[anchor];
  if (acc == nullptr || acc->is_output || !IsUntouched(*acc)) return false;
  KILN_ASSIGN_OR_RETURN(std::vector<te::Stage*> readers, s.ReadersOf(acc));
  if (readers.size() != 1 || !readers[0]->is_output || !IsUntouched(*readers[0]) ||
      !readers[0]->op->reduce_axis.empty()) {
    return false;
  }
  te::Stage* out = readers[0];
  const std::vector<tir::IterVar> ax = out->op->axis;  // n, cb, h, w, c
  int64_t c = 0;
  if (ax.size() != 5 || !tir::IsConstInt(ax[4]->dom.extent, &c) || c != nr || nr % lanes != 0) {
    return false;
  }
  for (const te::Tensor& in : op->InputTensors()) {
    te::Stage* ps = s[in];
    if (ps != nullptr && !ps->is_placeholder() && in.op()->attrs.count(kPackAttr) &&
        IsUntouched(*ps)) {
      KILN_RETURN_IF_ERROR(SchedulePack(ps, lanes));
    }
  }
  // The output's tiles: (n, cb, MR pixels of the flattened h * w), the
  // pixels unrolled and the channels vectorized; the last tile of a pixel
  // count MR does not divide is guarded (the accumulator rows past it are
  // the padded rows BuildGemm computes anyway).
  KILN_ASSIGN_OR_RETURN(tir::IterVar px, out->fuse(ax[2], ax[3]));
  KILN_ASSIGN_OR_RETURN(te::SplitAxes ps, out->split(px, mr));
  KILN_ASSIGN_OR_RETURN(te::SplitAxes cs, out->split(ax[4], lanes));
  KILN_RETURN_IF_ERROR(out->reorder({ax[0], ax[1], ps.outer, ps.inner, cs.outer, cs.inner}));
  KILN_ASSIGN_OR_RETURN(tir::IterVar tile, out->fuse({ax[0], ax[1], ps.outer}));
  KILN_RETURN_IF_ERROR(out->parallel(tile));
  KILN_RETURN_IF_ERROR(out->unroll(ps.inner));
  KILN_RETURN_IF_ERROR(out->unroll(cs.outer));
  KILN_RETURN_IF_ERROR(out->vectorize(cs.inner));
  // The accumulator (the anchor itself, in registers) at each tile: k
  // outermost, rows and vectors unrolled, as in GemmSchedule.
  KILN_RETURN_IF_ERROR(acc->set_scope("local"));
  KILN_RETURN_IF_ERROR(acc->compute_at(out, tile));
  const std::vector<tir::IterVar> lax = acc->op->axis;  // n, m, col
  KILN_ASSIGN_OR_RETURN(te::SplitAxes lv, acc->split(lax[2], lanes));
  KILN_RETURN_IF_ERROR(
      acc->reorder({lax[0], acc->op->reduce_axis[0], lax[1], lv.outer, lv.inner}));
  KILN_RETURN_IF_ERROR(acc->unroll(lax[1]));
  KILN_RETURN_IF_ERROR(acc->unroll(lv.outer));
  KILN_RETURN_IF_ERROR(acc->vectorize(lv.inner));
  return true;
}

void RegisterGemmStrategies() {
  RegisterImplementation({"dense_pack.x86", "nn.dense", 20, true, DenseCompute, GemmSchedule});
  RegisterImplementation({"matmul_pack.x86", "nn.matmul", 20, true, MatmulCompute, GemmSchedule});
  RegisterImplementation(
      {"batch_matmul_pack.x86", "nn.batch_matmul", 20, true, BatchMatmulCompute, GemmSchedule});
}

}  // namespace kiln::lowering::strategy::x86
