// File: lowering/compute/nn/nn_util.h (internal to lowering/compute/nn)
//
// Helpers shared by the nn compute files: attribute checks that mirror the
// interpreter's (Pair, Padding4, axis normalization), conv/pool layouts with a
// split axis (NCHW16c, OIHW8i8o), the numeric types computations run in, and
// the common stages (pad, cast).
//
//   KILN_ASSIGN_OR_RETURN(NnLayout dl, ParseNnLayout(ctx, "data_layout", a.data_layout, "NCHW", "C"));
//   std::vector<PrimExpr> logical = dl.Logical(out_indices);     // n, c, h, w
//   PrimExpr v = data(dl.Physical({n, c, h, w}));
#ifndef KILN_LOWERING_COMPUTE_NN_NN_UTIL_H_
#define KILN_LOWERING_COMPUTE_NN_NN_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "ir/tir.h"
#include "lowering/compute/op_compute.h"
#include "lowering/te/te.h"

namespace kiln::lowering::nn_internal {

using tir::PrimExpr;

// One registration function per family file.
void RegisterConvComputes();
void RegisterDenseComputes();
void RegisterPoolComputes();
void RegisterNormComputes();
void RegisterMiscComputes();

// Attaches `fn` as op `name`'s Compute facet.
void AddCompute(const char* name, FTCompute fn);

// ---- Attributes ------------------------------------------------------------

// Checks that the op got `n` input tensors.
absl::Status CheckNumInputs(const ComputeCtx& ctx, size_t n);
// Checks that the op has `n` outputs and that output i has ndim[i] dims.
absl::Status CheckOutputs(const ComputeCtx& ctx, const std::vector<int>& ndims);
// 1 or 2 values >= min_value, as 2 values (interpreter's Pair).
absl::StatusOr<std::vector<int64_t>> Pair(const ComputeCtx& ctx, absl::string_view name,
                                          const std::vector<int64_t>& v, int64_t min_value);
// 1, 2 or 4 non-negative values as {top, left, bottom, right}.
absl::StatusOr<std::vector<int64_t>> Padding4(const ComputeCtx& ctx,
                                              const std::vector<int64_t>& p);
// axis in [-ndim, ndim) -> [0, ndim).
absl::StatusOr<int> NormAxis(const ComputeCtx& ctx, int64_t axis, int ndim,
                             absl::string_view what = "axis");
// "1,2,3" (for compute attrs).
std::string JoinInts(const std::vector<int64_t>& v);

// ---- Layouts ---------------------------------------------------------------

// A layout of the primal axes `primal` (e.g. "NCHW") in any order, each
// optionally split by a lower-case inner axis with a factor ("NCHW16c",
// "OIHW8i16o"), as the interpreter's conv layouts. Parsed with ir/layout.h's
// ParseLayout; per primal axis, the positions of its outer and split parts.
struct NnLayout {
  struct Axis {
    int pos = -1;        // position of the primal (outer) part
    int inner = -1;      // position of the split part, or -1
    int64_t factor = 0;  // split factor (0 when not split)
  };
  std::string text;
  std::vector<Axis> axes;  // in the order of `primal`
  int ndim = 0;

  bool blocked() const;
  // Logical extent of primal axis a (outer * factor when split).
  PrimExpr Extent(size_t a, const std::vector<PrimExpr>& shape) const;
  // Logical coordinates (primal order) of a physical index.
  std::vector<PrimExpr> Logical(const std::vector<PrimExpr>& physical) const;
  // Physical index of logical coordinates (primal order).
  std::vector<PrimExpr> Physical(const std::vector<PrimExpr>& logical) const;
};

// Parses `text`; only axes in `splittable` may be split. The error names `what`.
absl::StatusOr<NnLayout> ParseNnLayout(const ComputeCtx& ctx, absl::string_view what,
                                       const std::string& text, absl::string_view primal,
                                       absl::string_view splittable);

// ---- Numeric types ---------------------------------------------------------

// The type elementwise float math on `t` runs in: float16/bfloat16 -> float32,
// float32/float64 unchanged, integers and bool -> float64 (the interpreter
// computes in double; this keeps integer results exact after truncation).
DataType MathType(DataType t);

// The accumulator of a sum of products a * b stored into `out`:
//   float inputs: the widest float of inputs and out, at least float32;
//   integer inputs: out when it is an integer (wrapping arithmetic gives the
//   interpreter's 64-bit-then-truncate result), else int64 (exact, then cast).
DataType ProductAccType(DataType a, DataType b, DataType out);

// Lowest value of t: -inf for floats, the minimum for integers, false for bool.
PrimExpr LowestOf(DataType t);
// The interpreter's LowestValue: the lowest *finite* value (floats) of t.
PrimExpr LowestFiniteOf(DataType t);
// +inf test of |v| (v a float).
PrimExpr IsInf(const PrimExpr& v);

// ---- Stages ----------------------------------------------------------------

// Pads `t` by before[i] / after[i] elements on physical axis i with
// `pad_value` (t's dtype): a compute named `name`, tag "injective", reading
// `t` through if_then_else. Returns `t` itself when nothing is padded.
te::Tensor PadStage(const te::Tensor& t, const std::vector<int64_t>& before,
                    const std::vector<int64_t>& after, const PrimExpr& pad_value,
                    absl::string_view name = "pad");

// t converted to `dt` (a compute named `name`, tag "elemwise"); `t` itself
// when it already has dtype dt.
te::Tensor CastStage(const te::Tensor& t, DataType dt, absl::string_view name);

// The shape without axis `axis`, and the index without it.
std::vector<PrimExpr> DropAxis(const std::vector<PrimExpr>& v, int axis);

// Whether e is the int constant c.
bool IsConst(const PrimExpr& e, int64_t c);

}  // namespace kiln::lowering::nn_internal

#endif  // KILN_LOWERING_COMPUTE_NN_NN_UTIL_H_
