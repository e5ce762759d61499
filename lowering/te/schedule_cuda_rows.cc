// File: lowering/te/schedule_cuda_rows.cc — the GPU schedule of row
// reductions (schedule_cuda_internal.h).
#include <algorithm>
#include <vector>

#include "ir/status_macros.h"
#include "ir/tir_functor.h"
#include "lowering/te/schedule_cuda_internal.h"

namespace kiln::te::cuda_internal {
namespace {

// ---- Row reductions: one warp per row ----
//
// A fused function whose only output O is a row reduction (sum/max/min/prod
// over its input's trailing dims: the last one, or several, as
// global_avg_pool2d's H and W of NCHW), or is computed from row reductions
// of its rows (softmax, layer_norm, mean), runs one warp per row: the rows
// fused and bound to blockIdx.x, 32 threads per block. Each reduction R (its
// reduced axes fused into one, then split by 32 and rfactor'ed) first has
// every lane reduce its own strided part of the row into a "shared" slot
// (consecutive lanes read consecutive elements), then combines the 32 slots
// in a loop that every lane runs (outside any threadIdx.x nest), which the
// code generator turns into a butterfly of warp shuffles
// (codegen_cuda/warp_reduce.h), every lane ending with the row's value (it
// is a "local" value of each lane when O reads it). O's elements of the row
// (its trailing dims, fused) are spread over the 32 lanes (consecutive
// lanes, consecutive elements); an O of one value per row is computed, the
// same, by every lane.
constexpr int64_t kRowThreads = kWarp;

// The reduced dims of a row reduction: their constant extents, outermost
// first, and the row's length (their product).
struct RowDims {
  std::vector<int64_t> extents;
  int64_t length = 0;
};

// Whether `r` reduces (sum, prod, max or min) constant axes of at least a
// warp of elements in all, found only as the trailing indices of the tensors
// it reads, in the order of its reduce axes (so a row is contiguous and in
// loop order), and `dims` when it does.
bool RowReduction(const Stage& r, RowDims* dims) {
  if (r.is_placeholder() || r.op->reduce_axis.empty() || r.op->num_outputs() != 1) {
    return false;
  }
  const PrimExpr& body = r.op->body[0];
  if (body->kind != tir::ExprKind::kReduce) return false;
  const tir::ReduceKind k = body->reduce_kind;
  if (k != tir::ReduceKind::kSum && k != tir::ReduceKind::kProd && k != tir::ReduceKind::kMax &&
      k != tir::ReduceKind::kMin) {
    return false;
  }
  const std::vector<IterVar>& ra = r.op->reduce_axis;
  RowDims d;
  d.length = 1;
  for (const IterVar& iv : ra) {
    int64_t e = 0;
    if (!tir::IsConstInt(iv->dom.extent, &e) || e <= 0) return false;
    d.extents.push_back(e);
    d.length *= e;
  }
  if (d.length < kRowThreads) return false;
  auto reduced = [&](const tir::ExprNode* v) {
    for (const IterVar& iv : ra) {
      if (iv->var.get() == v) return true;
    }
    return false;
  };
  bool ok = true;
  tir::PostOrderVisit(body, [&](const tir::ExprNode* e) {
    if (e->kind != tir::ExprKind::kProducerLoad) return;
    const size_t n = e->args.size();
    bool any = false;
    for (const PrimExpr& a : e->args) any = any || tir::UsesVar(a, reduced);
    if (!any) return;
    if (n < ra.size()) {
      ok = false;
      return;
    }
    // The trailing indices are the reduce axes in order; no other index
    // uses them.
    for (size_t i = 0; i < n; ++i) {
      const size_t t = n - ra.size();
      if (i >= t ? e->args[i].get() != ra[i - t]->var.get() : tir::UsesVar(e->args[i], reduced)) {
        ok = false;
      }
    }
  });
  if (ok) *dims = std::move(d);
  return ok;
}

// Fuses reduction `r`'s reduce axes into one, splits it by `threads` and
// rfactors the lanes' part into a "shared" stage (returned, for the caller
// to place) whose lane axis is bound to threadIdx.x. Resets r's loops.
absl::StatusOr<Stage*> WarpReduce(Schedule& s, Stage* r, int64_t threads) {
  const Tensor t = r->op->output(0);
  KILN_ASSIGN_OR_RETURN(IterVar k0, r->fuse(r->op->reduce_axis));
  KILN_ASSIGN_OR_RETURN(SplitAxes k, r->split(k0, threads));
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> rf, s.rfactor(t, k.inner, 0));
  Stage* f = s[rf[0]];
  if (f == nullptr) return absl::InternalError("ScheduleDefaultCuda: rfactor gave no stage");
  KILN_RETURN_IF_ERROR(f->set_scope("shared"));
  KILN_RETURN_IF_ERROR(f->bind(f->op->axis[0], "threadIdx.x"));
  return f;
}

}  // namespace

// Schedules `out` (the fused function's only output) one warp per row when
// it and the stages it reads fit (see above); false, with nothing changed,
// when they do not.
// Rows of at least kBlockRowMin elements get a block of up to
// kBlockRowThreads threads (several warps) instead of one warp: each thread
// reduces its strided part into a "shared" slot, each warp combines its 32
// slots with shuffles, lane 0 of each warp writes the warp's total back, and
// every thread combines the warps' totals (codegen_cuda/warp_reduce.h).
constexpr int64_t kBlockRowMin = 1024;
constexpr int64_t kBlockRowThreads = 256;

absl::StatusOr<bool> ScheduleRows(Schedule& s, Stage* out, int max_threads) {
  if (out->is_placeholder() || !Untouched(*out) || out->op->axis.empty()) return false;
  RowDims dims;
  const bool out_reduces = RowReduction(*out, &dims);
  if (!out_reduces && !out->op->reduce_axis.empty()) return false;
  std::vector<Stage*> reductions;
  for (Stage* st : s.stages()) {
    if (st == out || st->is_placeholder() || st->is_inlined()) continue;
    RowDims rd;
    if (!Untouched(*st) || !RowReduction(*st, &rd) ||
        (dims.length != 0 && rd.extents != dims.extents)) {
      return false;
    }
    dims = rd;
    reductions.push_back(st);
  }
  const int64_t e = dims.length;
  if (e == 0) return false;
  // The rows: the output's axes (a reduction, or one value per row) or all
  // but its trailing ones, which then are the reduced dims.
  const size_t rows = out_reduces ? out->op->axis.size() : reductions[0]->op->axis.size();
  if (rows == 0) return false;
  const size_t reduced = dims.extents.size();
  if (!out_reduces) {
    const size_t n = out->op->axis.size();
    bool per_elem = n == rows + reduced;
    for (size_t i = 0; per_elem && i < reduced; ++i) {
      int64_t x = 0;
      per_elem = tir::IsConstInt(out->op->axis[rows + i]->dom.extent, &x) && x == dims.extents[i];
    }
    if (n != rows && !per_elem) return false;
  }
  for (Stage* r : reductions) {
    if (r->op->axis.size() != rows || !SameConstExtents(r->op->axis, out->op->axis, rows)) {
      return false;
    }
  }
  const int64_t threads =
      e >= kBlockRowMin ? std::min<int64_t>(kBlockRowThreads, max_threads) : kRowThreads;
  if (out_reduces) {
    // The lanes accumulate in registers ("local"); the output copies them
    // (every lane the same value).
    KILN_ASSIGN_OR_RETURN(Tensor cache, s.cache_write(out->op->output(0), "local"));
    reductions.push_back(s[cache]);
  }
  const std::vector<IterVar> axes = out->op->axis;
  KILN_ASSIGN_OR_RETURN(IterVar row,
                        out->fuse(std::vector<IterVar>(axes.begin(),
                                                       axes.begin() + static_cast<long>(rows))));
  KILN_RETURN_IF_ERROR(out->bind(row, "blockIdx.x"));
  if (axes.size() > rows) {
    KILN_ASSIGN_OR_RETURN(IterVar elem,
                          out->fuse(std::vector<IterVar>(axes.begin() + static_cast<long>(rows),
                                                         axes.end())));
    KILN_ASSIGN_OR_RETURN(SplitAxes j, out->split(elem, threads));
    KILN_RETURN_IF_ERROR(out->reorder({j.inner, j.outer}));
    KILN_RETURN_IF_ERROR(out->bind(j.inner, "threadIdx.x"));
  }
  for (Stage* r : reductions) {
    KILN_ASSIGN_OR_RETURN(Stage* rf, WarpReduce(s, r, threads));
    KILN_RETURN_IF_ERROR(rf->compute_at(r, r->leaf_iter_vars[rows - 1]));
    KILN_RETURN_IF_ERROR(r->set_scope("local"));
    KILN_RETURN_IF_ERROR(r->compute_at(out, row));
  }
  return true;
}

}  // namespace kiln::te::cuda_internal
