// File: lowering/passes/storage_rewrite.h
//
// StorageRewrite: fewer, better placed temporaries. Runs after unroll_loop in
// the loop pipeline (pipeline.h), on flattened buffers (storage_flatten).
//
// 1. Dead allocations: an Allocate whose buffer is never read (no Load, and
//    its data var never appears as a value, e.g. passed to a call) is removed
//    together with every Store into it.
// 2. Reuse: among the Allocates of one statement sequence (those wrapping the
//    Seq and those that are whole children of it), buffers whose lifetimes
//    (first..last child that uses them) do not overlap, with the same dtype
//    and storage scope, a constant 1-D size, and a data var that never
//    escapes as a value, share one allocation of the largest size:
//
//      allocate T1: float32[64]        allocate T1: float32[64]
//      allocate T2: float32[32]   ->   T1[i] = ...   (first stage)
//      T1[i] = ...                     ... = T1[i]
//      ... = T1[i]                     T1[j] = ...   (T2 now lives in T1)
//      T2[j] = ...                     ... = T1[j]
//      ... = T2[j]
//
// 3. Hoisting: an Allocate with a constant size inside a serial loop moves
//    out of the loop: every iteration starts with a fresh allocation in the
//    original, so no value flows from one iteration to the next and one
//    allocation suffices. It moves out of
//    every enclosing serial loop, but never out of a parallel, vectorized or
//    thread-binding loop or a "thread_extent" attribute (each task / thread
//    needs its own). Reuse (2) runs again after hoisting, so allocations
//    hoisted out of sibling loops can share too.
//
// Left alone: Allocates with a symbolic size (never shared or hoisted),
// multi-dim buffers (not flattened yet), buffers whose data var escapes.
#ifndef KILN_LOWERING_PASSES_STORAGE_REWRITE_H_
#define KILN_LOWERING_PASSES_STORAGE_REWRITE_H_

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::tir::transform {

absl::StatusOr<PrimFunc> StorageRewrite(const PrimFunc& f);

}  // namespace kiln::tir::transform

#endif  // KILN_LOWERING_PASSES_STORAGE_REWRITE_H_
