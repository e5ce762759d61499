// File: lowering/passes/storage_flatten.h
//
// StorageFlatten: multi-dimensional buffer accesses become one-dimensional.
// The first loop pass (pipeline.h); nothing needs to run before it.
//
//   allocate T: float32[4, 15] global          // T: axis_align {(16, 0)} on axis 0
//   T[i, j] = A[i, j, k]                        // A: float32[4, 15, 3] param
// becomes
//   allocate T: float32[64] global              // row stride padded 15 -> 16
//   T[i * 16 + j] = A[i * 45 + j * 3 + k]
//
// Each access `B[i0, ..., i{n-1}]` becomes `B'[sum(i_d * stride_d) + elem_offset]`
// where B' is a 1-D view of B with the same data var (tir::WithShape-like) and
// the strides are
//   - the buffer's explicit `strides` when it has them, otherwise
//   - row-major from the shape, where an axis with `axis_align[d] = (factor,
//     offset)` (factor > 0) gets its stride padded up to the next value with
//     stride % factor == offset (TVM's storage_align; the padding of axis d's
//     stride is what separates consecutive rows of the axes below it).
// Vector indices stay in Ramp/Broadcast form (Ramp(b, s) * c = Ramp(b*c, s*c)).
// Indices narrower than int64 are cast to int64.
//
// An Allocate's buffer becomes the 1-D view, with the total (padded) size:
// stride_0 * shape_0 (row-major) or 1 + sum((shape_d - 1) * stride_d).
//
// Parameters: f->params are left unchanged on purpose, so the kernel ABI still
// checks the real (multi-dim) shape of each argument; only the accesses are
// rewritten, to 1-D views of the params (same data var) with flat indices.
// A consumer therefore sees a param buffer with N dims accessed with 1 index:
// the index is flat, elem_offset already included.
//
// Left alone: 1-D buffers without strides/elem_offset (already flat), and an
// access with a single index to a buffer of >= 2 dims (taken as flat already,
// so the pass is idempotent). An access whose index count matches neither is
// an error naming the buffer and showing the access.
#ifndef KILN_LOWERING_PASSES_STORAGE_FLATTEN_H_
#define KILN_LOWERING_PASSES_STORAGE_FLATTEN_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::tir::transform {

absl::StatusOr<PrimFunc> StorageFlatten(const PrimFunc& f);

// The strides StorageFlatten uses for `b` (explicit, or row-major with
// storage_align padding), outermost first.
std::vector<PrimExpr> FlattenStrides(const Buffer& b);

}  // namespace kiln::tir::transform

#endif  // KILN_LOWERING_PASSES_STORAGE_FLATTEN_H_
