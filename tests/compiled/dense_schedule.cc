// File: tests/compiled/dense_schedule.cc
#include "tests/compiled/dense_schedule.h"

#include "ir/status_macros.h"
#include "lowering/passes/pipeline.h"
#include "lowering/te/lower.h"
#include "lowering/te/schedule.h"
#include "lowering/te/te.h"

namespace kiln::testing {

absl::StatusOr<tir::PrimFunc> PackedDense(int64_t m, int64_t n, int64_t k, int64_t block_rows,
                                          int vector_lanes) {
  using tir::IntImm;
  constexpr int64_t kBlock = 16;
  if (n % kBlock != 0) return absl::InvalidArgumentError("PackedDense: N must be a multiple of 16");
  const DataType f32 = DataType::Float(32);
  te::Tensor a = te::Placeholder({IntImm(m), IntImm(k)}, f32, "A");
  te::Tensor w = te::Placeholder({IntImm(n), IntImm(k)}, f32, "W");
  te::Tensor packed = te::Compute(
      {IntImm(n / kBlock), IntImm(k), IntImm(kBlock)},
      [&](const std::vector<tir::Var>& i) { return w({i[0] * kBlock + i[2], i[1]}); }, "W_packed",
      "injective");
  tir::IterVar rk = te::ReduceAxis({IntImm(0), IntImm(k)}, "k");
  te::Tensor c = te::Compute(
      {IntImm(m), IntImm(n)},
      [&](const std::vector<tir::Var>& i) {
        return te::Sum(a({i[0], rk->var}) *
                           packed({tir::FloorDiv(i[1], IntImm(kBlock)), rk->var,
                                   tir::FloorMod(i[1], IntImm(kBlock))}),
                       {rk});
      },
      "dense", "dense");

  KILN_ASSIGN_OR_RETURN(te::Schedule s, te::CreateSchedule({c}));
  KILN_ASSIGN_OR_RETURN(te::Tensor cc, s.cache_write(c, "local"));
  // Output: (m / rows, n / 16) fused and parallel; rows x 16 copied out of the block.
  te::Stage* sc = s[c];
  KILN_ASSIGN_OR_RETURN(te::SplitAxes ms, sc->split(sc->leaf_iter_vars[0], block_rows));
  KILN_ASSIGN_OR_RETURN(te::SplitAxes ns, sc->split(sc->leaf_iter_vars[2], kBlock));
  KILN_RETURN_IF_ERROR(sc->reorder({ms.outer, ns.outer, ms.inner, ns.inner}));
  KILN_ASSIGN_OR_RETURN(tir::IterVar outer, sc->fuse(ms.outer, ns.outer));
  KILN_RETURN_IF_ERROR(sc->parallel(outer));
  KILN_RETURN_IF_ERROR(sc->vectorize(ns.inner));
  // The register block: k outside, rows unrolled, 16 columns vectorized.
  te::Stage* scc = s[cc];
  KILN_RETURN_IF_ERROR(scc->compute_at(sc, outer));
  std::vector<tir::IterVar> leaves = scc->leaf_iter_vars;  // m, n, k
  if (leaves.size() != 3) return absl::InternalError("PackedDense: unexpected cache stage axes");
  KILN_RETURN_IF_ERROR(scc->reorder({leaves[2], leaves[0], leaves[1]}));
  KILN_RETURN_IF_ERROR(scc->unroll(leaves[0]));
  KILN_RETURN_IF_ERROR(scc->vectorize(leaves[1]));
  // Packing: parallel over column blocks, the 16 lanes vectorized.
  te::Stage* sp = s[packed];
  KILN_RETURN_IF_ERROR(sp->parallel(sp->leaf_iter_vars[0]));
  KILN_RETURN_IF_ERROR(sp->vectorize(sp->leaf_iter_vars[2]));

  KILN_ASSIGN_OR_RETURN(tir::PrimFunc f, te::LowerSchedule(s, {a, w, c}, "dense_packed"));
  tir::transform::LoopPassOptions opts;
  opts.vector_width = vector_lanes;
  return tir::transform::RunLoopPipeline(f, opts);
}

}  // namespace kiln::testing
