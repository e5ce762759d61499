// File: lowering/te/schedule_x86.cc — the default CPU schedule.
#include "lowering/te/schedule_x86.h"

#include <optional>
#include <unordered_set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"
#include "lowering/te/arith.h"

namespace kiln::te {
namespace {

bool Untouched(const Stage& s) {
  return s.relations.empty() && s.attach_type == AttachType::kGroupRoot;
}

bool ExtentMayExceedOne(const PrimExpr& e) {
  int64_t v = 0;
  return !tir::IsConstInt(e, &v) || v > 1;
}

// Product of the axes' extents (symbolic when one is).
PrimExpr Extent(const std::vector<IterVar>& axes) {
  PrimExpr p = tir::IntImm(1);
  for (const IterVar& iv : axes) p = p * iv->dom.extent;
  return p;
}

bool IsConstAtLeast(const PrimExpr& e, int64_t n) {
  int64_t v = 0;
  return tir::IsConstInt(e, &v) && v >= n;
}

// Fuses `axes` (consecutive leaves, may be empty) and marks the loop parallel
// when its extent can exceed 1. Returns the fused loop (null when none).
absl::StatusOr<IterVar> FuseParallel(Stage* s, const std::vector<IterVar>& axes,
                                     const PrimExpr& extent, bool parallel) {
  if (axes.empty()) return IterVar();
  KILN_ASSIGN_OR_RETURN(IterVar fused, s->fuse(axes));
  if (parallel && ExtentMayExceedOne(extent)) KILN_RETURN_IF_ERROR(s->parallel(fused));
  return fused;
}

// The fewest leading loops whose extents multiply to at least this many
// iterations become the parallel loop; the loops inside it stay loops.
constexpr int64_t kMinParallelIterations = 32;

// Reduction windows of at most this many elements are unrolled.
constexpr int64_t kMaxUnrolledWindow = 16;

// Fuses `outer` (whose extents are `extents`) into one loop, parallel if
// asked: all of them, or (all == false) the fewest leading ones whose
// extents multiply to kMinParallelIterations or more, the rest staying
// nested serial loops so that their indices are affine in the loop
// variables rather than floordiv/floormod of one fused variable. Symbolic
// extents: all. Returns the fused loop, or null when `outer` is empty.
absl::StatusOr<IterVar> FuseLeadingParallel(Stage* s, const std::vector<IterVar>& outer,
                                            const std::vector<PrimExpr>& extents, bool all,
                                            bool parallel) {
  size_t count = outer.size();
  if (!all) {
    int64_t iterations = 1;
    for (size_t k = 0; k < outer.size(); ++k) {
      int64_t e = 0;
      if (!tir::IsConstInt(extents[k], &e)) {
        count = outer.size();
        break;
      }
      iterations *= e;
      if (iterations >= kMinParallelIterations) {
        count = k + 1;
        break;
      }
    }
  }
  std::vector<IterVar> head(outer.begin(), outer.begin() + static_cast<long>(count));
  PrimExpr head_extent = tir::IntImm(1);
  for (size_t k = 0; k < count; ++k) head_extent = head_extent * extents[k];
  return FuseParallel(s, head, head_extent, parallel);
}

// A transposition: the stage reads some tensor with its innermost axis in
// another dimension than the last, and the last dimension's index is an
// outer axis, or that axis modulo a block (NCHW16c -> NCHW reads
// p0[.., floordiv(c, 16), .., w, floormod(c, 16)]). Returns that outer
// axis's position in `axes` and the block (the floormod's divisor, or
// `lanes` for a plain axis) when the block divides the axis's extent.
struct TransposedAxis {
  size_t axis = 0;
  int64_t block = 0;
};
// The loads of tensors that are not injective computes (placeholders,
// reductions, materialized stages) in `e`, their indices written in the
// reading stage's axes: injective producers (inlined by the default
// schedule) are looked through, their axes replaced by the indices they are
// read with. Depth and count are bounded (a deep chain is not a transpose
// worth tiling).
void LeafLoads(const PrimExpr& e, const tir::VarMap& map, int depth,
               std::vector<std::vector<PrimExpr>>* out) {
  if (depth > 8 || out->size() > 64) return;
  tir::PostOrderVisit(e, [&](const tir::ExprNode* n) {
    if (n->kind != tir::ExprKind::kProducerLoad) return;
    std::vector<PrimExpr> idx;
    for (const PrimExpr& a : n->args) idx.push_back(arith::Simplify(tir::Substitute(a, map)));
    const auto* op = dynamic_cast<const OperationNode*>(n->producer.get());
    if (op != nullptr && op->kind == OpKind::kCompute && op->reduce_axis.empty() &&
        op->body.size() == 1 && op->axis.size() == idx.size() && !op->attrs.count("no_inline")) {
      tir::VarMap inner;
      for (size_t i = 0; i < idx.size(); ++i) inner[op->axis[i]->var.get()] = idx[i];
      LeafLoads(op->body[0], inner, depth + 1, out);
      return;
    }
    out->push_back(std::move(idx));
  });
}

std::optional<TransposedAxis> FindTransposedAxis(const Stage& s, int lanes) {
  const std::vector<IterVar>& axes = s.op->axis;
  if (s.op->body.size() != 1 || axes.size() < 2) return std::nullopt;
  const tir::ExprNode* inner = axes.back()->var.get();
  auto uses = [](const PrimExpr& e, const tir::ExprNode* v) {
    return tir::UsesVar(e, [v](const tir::ExprNode* x) { return x == v; });
  };
  std::vector<std::vector<PrimExpr>> loads;
  LeafLoads(s.op->body[0], {}, 0, &loads);
  for (const std::vector<PrimExpr>& idx : loads) {
    if (idx.size() < 2) continue;
    const PrimExpr& last = idx.back();
    if (uses(last, inner)) continue;
    bool inner_elsewhere = false;
    for (size_t i = 0; i + 1 < idx.size(); ++i) inner_elsewhere |= uses(idx[i], inner);
    if (!inner_elsewhere) continue;
    const tir::ExprNode* v = last.get();
    int64_t block = lanes;
    if (last->kind == tir::ExprKind::kFloorMod && tir::IsConstInt(last->args[1], &block)) {
      v = last->args[0].get();
    }
    for (size_t a = 0; a + 1 < axes.size(); ++a) {
      int64_t extent = 0;
      if (axes[a]->var.get() != v || !tir::IsConstInt(axes[a]->dom.extent, &extent)) continue;
      if (block >= 2 && extent > block && extent % block == 0) return TransposedAxis{a, block};
    }
  }
  return std::nullopt;
}

// Vectorizes the innermost axis (split by `lanes`) and makes the loops
// around it one fused parallel loop. With `whole_nest` every outer loop is
// fused (one vector per iteration: the attach point for a stage computed per
// element); otherwise only the fewest leading loops with at least
// kMinParallelIterations iterations are, and the rest stay nested serial
// loops, so that their indices are affine in the loop variables rather than
// floordiv/floormod of one fused variable (a broadcast multiply of an NCHWc
// tensor spent more time on index arithmetic than on memory that way).
// Returns the fused loop, or null.
absl::StatusOr<IterVar> ScheduleInjective(Stage* s, int lanes, bool parallel,
                                          bool whole_nest = true) {
  const std::vector<IterVar> axes = s->op->axis;
  if (axes.empty()) return IterVar();
  const IterVar& inner = axes.back();
  std::vector<IterVar> outer(axes.begin(), axes.end() - 1);
  std::vector<PrimExpr> extents;  // of `outer` (a split's leaves have no domain)
  for (const IterVar& iv : outer) extents.push_back(iv->dom.extent);
  const bool vectorize = !s->op->attrs.count("kiln.no_vectorize");
  if (vectorize && IsConstAtLeast(inner->dom.extent, lanes)) {
    KILN_ASSIGN_OR_RETURN(SplitAxes sp, s->split(inner, lanes));
    KILN_RETURN_IF_ERROR(s->vectorize(sp.inner));
    std::optional<TransposedAxis> t;
    if (!whole_nest) t = FindTransposedAxis(*s, lanes);
    if (t) {
      // A transposition: the transposed axis split by its block, the block
      // looped just outside the vector, so the block's vectors read the same
      // cache lines one after another (a line per lane); with the block
      // outermost, each line was read again a whole row later, from L2.
      const IterVar c = outer[t->axis];
      KILN_ASSIGN_OR_RETURN(SplitAxes cs, s->split(c, t->block));
      extents[t->axis] = arith::CeilDiv(c->dom.extent, tir::IntImm(t->block));
      outer[t->axis] = cs.outer;
      outer.push_back(sp.outer);
      extents.push_back(arith::CeilDiv(inner->dom.extent, tir::IntImm(lanes)));
      std::vector<IterVar> order = outer;
      order.push_back(cs.inner);
      order.push_back(sp.inner);
      KILN_RETURN_IF_ERROR(s->reorder(order));
      return FuseLeadingParallel(s, outer, extents, /*all=*/false, parallel);
    }
    outer.push_back(sp.outer);
    extents.push_back(arith::CeilDiv(inner->dom.extent, tir::IntImm(lanes)));
  } else if (!whole_nest && !outer.empty() && !tir::IsConstInt(inner->dom.extent, nullptr)) {
    // A symbolic innermost extent (a sequence length): it stays a serial
    // loop inside the fused one. Fused in, every element would divide the
    // fused index by it at run time (the divisor is not a constant).
  } else if (!vectorize || outer.empty() || !IsConstAtLeast(inner->dom.extent, 2)) {
    // Nothing to vectorize: the whole nest is one parallel loop.
    outer.push_back(inner);
    extents.push_back(inner->dom.extent);
  }
  return FuseLeadingParallel(s, outer, extents, /*all=*/whole_nest, parallel);
}

// A reduction over one axis that every tensor access of its body indexes
// last, and only there (softmax, mean, layer norm over the innermost axis):
// vectorizing its data-parallel axes would read one vector lane per row
// (gathers); its rows are contiguous instead.
bool ReducesContiguousAxis(const Stage& s, int lanes) {
  if (s.op->reduce_axis.size() != 1 || s.op->body.size() != 1 || s.op->axis.empty()) return false;
  const IterVar& k = s.op->reduce_axis[0];
  int64_t extent = 0;
  if (!tir::IsConstInt(k->dom.extent, &extent) || extent < 2 * lanes)
    return false;
  const tir::ExprNode* kv = k->var.get();
  auto uses_k = [kv](const PrimExpr& e) {
    return tir::UsesVar(e, [kv](const tir::ExprNode* v) { return v == kv; });
  };
  bool any = false, ok = true;
  tir::PostOrderVisit(s.op->body[0], [&](const tir::ExprNode* e) {
    if (e->kind != tir::ExprKind::kProducerLoad || e->args.empty()) return;
    for (size_t i = 0; i + 1 < e->args.size(); ++i) ok = ok && !uses_k(e->args[i]);
    if (uses_k(e->args.back())) {
      any = true;
      ok = ok && e->args.back().get() == kv;
    }
  });
  return any && ok;
}

// Such a reduction as TVM's rfactor would vectorize it: the axis split by
// `lanes` and factored into a stage of `lanes` partial results per row (one
// contiguous vector load per step of the outer part), which the original
// stage then reduces. An extent `lanes` does not divide leaves a guarded
// last step, which LoopPartition peels off the vector loop (a GroupNorm's
// means over 3199 samples were a scalar chain of adds: 1.7 ms for 512 rows). Returns the factored stage (to be attached by the
// caller); `s` becomes the lanes' reduction.
absl::StatusOr<Stage*> FactorContiguousReduce(Schedule& sch, Stage* s, int lanes) {
  const Tensor t = s->op->output(0);
  const size_t ndim = s->op->axis.size();
  KILN_ASSIGN_OR_RETURN(SplitAxes ks, s->split(s->op->reduce_axis[0], lanes));
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> rf, sch.rfactor(t, ks.inner, static_cast<int>(ndim)));
  Stage* srf = sch[rf[0]];
  if (srf == nullptr || srf->op->axis.size() != ndim + 1) {
    return absl::InternalError(absl::StrCat("rfactor of ", t.name(), " lost its axes"));
  }
  const std::vector<IterVar> rax = srf->op->axis;  // the rows' axes, then the lanes
  std::vector<IterVar> order(rax.begin(), rax.end() - 1);
  order.insert(order.end(), srf->op->reduce_axis.begin(), srf->op->reduce_axis.end());
  order.push_back(rax.back());
  KILN_RETURN_IF_ERROR(srf->reorder(order));
  KILN_RETURN_IF_ERROR(srf->vectorize(rax.back()));
  return srf;
}

// A contiguous reduction at the root: its rows fused into one parallel loop,
// the partial results computed inside it.
absl::Status ScheduleContiguousReduce(Schedule& sch, Stage* s, int lanes, bool parallel) {
  const Tensor t = s->op->output(0);
  KILN_ASSIGN_OR_RETURN(Stage* srf, FactorContiguousReduce(sch, s, lanes));
  Stage* st = sch[t];
  if (st == nullptr) return absl::InternalError("rfactor lost a stage");
  const std::vector<IterVar> rows = st->op->axis;
  KILN_ASSIGN_OR_RETURN(IterVar fused, FuseParallel(st, rows, Extent(rows), parallel));
  if (!fused) return absl::InternalError("row reduction without rows");
  return srf->compute_at(st, fused);
}

absl::Status ScheduleReduce(Stage* s, int lanes, bool parallel) {
  const std::vector<IterVar> dp = s->op->axis;
  const std::vector<IterVar> rd = s->op->reduce_axis;
  std::vector<IterVar> outer = dp;
  std::vector<PrimExpr> extents;  // of `outer`
  for (const IterVar& iv : dp) extents.push_back(iv->dom.extent);
  if (dp.size() >= 2 && IsConstAtLeast(dp.back()->dom.extent, lanes)) {
    KILN_ASSIGN_OR_RETURN(SplitAxes sp, s->split(dp.back(), lanes));
    outer.back() = sp.outer;
    extents.back() = arith::CeilDiv(dp.back()->dom.extent, tir::IntImm(lanes));
    std::vector<IterVar> order = outer;
    order.insert(order.end(), rd.begin(), rd.end());
    order.push_back(sp.inner);
    KILN_RETURN_IF_ERROR(s->reorder(order));
    KILN_RETURN_IF_ERROR(s->vectorize(sp.inner));
    // A small window (pooling's 2x2 or 3x3) unrolled: straight-line loads
    // and maxima or sums, the accumulator in a register.
    int64_t window = 1;
    for (const IterVar& r : rd) {
      int64_t e = 0;
      window = tir::IsConstInt(r->dom.extent, &e) && window > 0 ? window * e : 0;
    }
    if (window > 1 && window <= kMaxUnrolledWindow) {
      for (const IterVar& r : rd) KILN_RETURN_IF_ERROR(s->unroll(r));
    }
  }
  // As ScheduleInjective: the fewest leading loops with enough iterations
  // are the parallel loop, the rest stay loops.
  return FuseLeadingParallel(s, outer, extents, /*all=*/!parallel, parallel).status();
}

bool SameShape(const Operation& a, const Operation& b) {
  if (a->output_shapes.empty() || b->output_shapes.empty()) return false;
  const auto& x = a->output_shapes[0];
  const auto& y = b->output_shapes[0];
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!arith::ProveEqual(x[i], y[i])) return false;
  }
  return true;
}

}  // namespace

absl::Status ScheduleDefaultX86(Schedule& s, const std::vector<Tensor>& outputs, int vector_lanes) {
  if (vector_lanes < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ScheduleDefaultX86: vector_lanes must be positive, got ", vector_lanes));
  }
  std::vector<Stage*> out_stages;
  std::unordered_set<Stage*> is_out;
  for (const Tensor& t : outputs) {
    Stage* st = s[t];
    if (st == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("ScheduleDefaultX86: output '", t.name(),
                                                     "' is not in the schedule"));
    }
    if (is_out.insert(st).second) out_stages.push_back(st);
  }
  // 1. Inline injective intermediates, except a convolution's padded input:
  //    inlined, its bounds test differs between the lanes of the output
  //    row, so the reduction's vector loop falls back to scalars (a 64 -> 3
  //    channel conv, which no x86 strategy takes, ran at 2-4 GFLOP/s).
  //    Computed first, it is a vectorized copy and the reduction reads it
  //    with plain vector loads.
  for (Stage* st : s.stages()) {
    if (st->is_placeholder() || st->is_output || is_out.count(st) || !Untouched(*st)) continue;
    if (!st->op->reduce_axis.empty() || st->op->attrs.count("no_inline")) continue;
    if (st->op->name == "pad") {
      KILN_ASSIGN_OR_RETURN(std::vector<Stage*> readers, s.ReadersOf(st));
      bool conv = false;
      for (const Stage* r : readers) conv |= absl::StartsWith(r->op->tag, "conv2d");
      if (conv) continue;
    }
    KILN_RETURN_IF_ERROR(st->compute_inline());
  }
  std::unordered_set<Stage*> done;
  // 2. Outputs, with the reductions only they read computed inside them.
  for (Stage* out : out_stages) {
    if (out->is_placeholder() || !Untouched(*out)) continue;
    done.insert(out);
    if (!out->op->reduce_axis.empty()) {
      if (ReducesContiguousAxis(*out, vector_lanes)) {
        KILN_RETURN_IF_ERROR(ScheduleContiguousReduce(s, out, vector_lanes, /*parallel=*/true));
      } else {
        KILN_RETURN_IF_ERROR(ScheduleReduce(out, vector_lanes, /*parallel=*/true));
      }
      continue;
    }
    // The reductions of the output's shape that only it reads are computed
    // per vector of it: the whole nest is then one loop to attach them to.
    std::vector<Stage*> attached;
    for (Stage* st : s.stages()) {
      if (st->is_placeholder() || st->is_inlined() || is_out.count(st) || !Untouched(*st) ||
          st->op->reduce_axis.empty() || !SameShape(st->op, out->op)) {
        continue;
      }
      KILN_ASSIGN_OR_RETURN(std::vector<Stage*> readers, s.ReadersOf(st));
      if (readers.size() != 1 || readers[0] != out) continue;
      attached.push_back(st);
    }
    KILN_ASSIGN_OR_RETURN(IterVar attach, ScheduleInjective(out, vector_lanes, true,
                                                            /*whole_nest=*/!attached.empty()));
    if (!attach) continue;
    for (Stage* st : attached) {
      if (ReducesContiguousAxis(*st, vector_lanes)) {
        // mean(x, axis=-1) and the like: the partial results and their
        // reduction both computed per element of the output.
        const Tensor t = st->op->output(0);
        KILN_ASSIGN_OR_RETURN(Stage* srf, FactorContiguousReduce(s, st, vector_lanes));
        Stage* sr = s[t];
        if (sr == nullptr) return absl::InternalError("rfactor lost a stage");
        KILN_RETURN_IF_ERROR(srf->compute_at(out, attach));
        KILN_RETURN_IF_ERROR(sr->compute_at(out, attach));
        done.insert(sr);
        done.insert(srf);
        continue;
      }
      KILN_RETURN_IF_ERROR(st->compute_at(out, attach));
      KILN_RETURN_IF_ERROR(ScheduleReduce(st, vector_lanes, /*parallel=*/false));
      done.insert(st);
    }
  }
  // 3. Whatever else stays at the root (reductions read by several stages,
  //    "no_inline" stages). The list as it is now: rfactor adds stages.
  const std::vector<Stage*> root_stages = s.stages();
  for (Stage* st : root_stages) {
    if (st->is_placeholder() || st->is_inlined() || done.count(st) || !Untouched(*st)) continue;
    if (st->op->reduce_axis.empty()) {
      KILN_ASSIGN_OR_RETURN(IterVar unused,
                            ScheduleInjective(st, vector_lanes, true, /*whole_nest=*/false));
      (void)unused;
    } else if (ReducesContiguousAxis(*st, vector_lanes)) {
      KILN_RETURN_IF_ERROR(ScheduleContiguousReduce(s, st, vector_lanes, true));
    } else {
      KILN_RETURN_IF_ERROR(ScheduleReduce(st, vector_lanes, true));
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln::te
