// File: lowering/compute/tensor/tensor_util.h
//
// Helpers for writing compute definitions that agree with the interpreter:
// NumPy broadcasting of reads, row-major flat indices, index arithmetic that
// folds constants, and the interpreter's numeric rules (kernels.h) expressed
// as loop-IR expressions: float16/bfloat16 math in float32, float-only math on
// integers through float64 and back with a saturating cast, conversions that
// store into bool as "nonzero".
//
//   Tensor out = te::Compute(ctx.out_shapes[0], [&](const std::vector<Var>& i) {
//     return Add(BroadcastRead(a, ctx.out_shapes[0], i), BroadcastRead(b, ctx.out_shapes[0], i));
//   }, ComputeName(ctx), "broadcast");
//
// Broadcasting (NumPy): shapes are aligned on the right; an input dim that is
// the static 1 reads index 0; a dim known to equal the output dim (static, or
// the same symbolic var) reads the output index; any other non-static dim may
// be 1 or the output extent at run time and reads Select(dim == 1, 0, i).
#ifndef KILN_LOWERING_COMPUTE_TENSOR_TENSOR_UTIL_H_
#define KILN_LOWERING_COMPUTE_TENSOR_TENSOR_UTIL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "ir/tir.h"
#include "lowering/compute/op_compute.h"
#include "lowering/te/te.h"

namespace kiln::lowering::tensor {

using tir::PrimExpr;
using tir::Var;
using Shape = std::vector<PrimExpr>;

// ---- Index arithmetic (int64, folded when both sides are constants) --------

PrimExpr Idx(int64_t v);
PrimExpr IAdd(const PrimExpr& a, const PrimExpr& b);
PrimExpr ISub(const PrimExpr& a, const PrimExpr& b);
PrimExpr IMul(const PrimExpr& a, const PrimExpr& b);
PrimExpr IMin(const PrimExpr& a, const PrimExpr& b);
PrimExpr IMax(const PrimExpr& a, const PrimExpr& b);
PrimExpr IFloorDiv(const PrimExpr& a, const PrimExpr& b);  // b > 0
PrimExpr IFloorMod(const PrimExpr& a, const PrimExpr& b);  // b > 0
// True when a and b are the same expression node or equal constants.
bool SameDim(const PrimExpr& a, const PrimExpr& b);
bool IsConst(const PrimExpr& e, int64_t* v = nullptr);
// Product of extents (1 for an empty shape).
PrimExpr Product(const Shape& shape);

// ---- Shapes ------------------------------------------------------------------

// Row-major flat index of `idx` in `shape`.
PrimExpr FlatIndex(const std::vector<PrimExpr>& idx, const Shape& shape);
// Coordinates of flat index `flat` in `shape` (row-major).
std::vector<PrimExpr> Unravel(const PrimExpr& flat, const Shape& shape);
// Reads `t` at the element with the same row-major flat index as `idx` in
// `shape` (reshape semantics).
PrimExpr ReshapeRead(const te::Tensor& t, const Shape& shape, const std::vector<PrimExpr>& idx);

// Indices into a tensor of `in_shape` for output indices `idx` of `out_shape`
// (NumPy broadcasting, see the top of this file).
std::vector<PrimExpr> BroadcastIndices(const Shape& in_shape, const Shape& out_shape,
                                       const std::vector<PrimExpr>& idx);
PrimExpr BroadcastRead(const te::Tensor& t, const Shape& out_shape,
                       const std::vector<PrimExpr>& idx);

// axis in [-ndim, ndim) -> [0, ndim); an InvalidArgument naming `what` otherwise.
absl::StatusOr<int64_t> NormAxis(const ComputeCtx& ctx, int64_t axis, int64_t ndim,
                                 absl::string_view what = "axis");

// ---- Numeric rules -----------------------------------------------------------

// The type arithmetic of `t` is done in: float16/bfloat16 -> float32; others
// unchanged.
DataType ComputeType(DataType t);
// v cast to ComputeType(v's dtype).
PrimExpr Promote(const PrimExpr& v);
// v (any dtype) converted to `to` as the interpreter stores it (and as `cast`
// converts): into bool, nonzero (NaN included) is true; float -> int truncates
// and saturates (NaN -> 0, tir Cast); integers wrap; float16/bfloat16 results
// are rounded through float32 as the interpreter's StoreF does.
PrimExpr Convert(const PrimExpr& v, DataType to);
// f applied in floating point, result stored as `out`: float inputs in
// ComputeType, integer and bool inputs through float64 (the interpreter's
// FloatUnary: LoadF, f, StoreF).
PrimExpr FloatMath(const std::vector<PrimExpr>& args, DataType out,
                   const std::function<PrimExpr(const std::vector<PrimExpr>&)>& f);
// A float constant of dtype t (ComputeType of the inputs).
PrimExpr FConst(DataType t, double v);
// Calls a pure math intrinsic ("exp", "erf", ...) of v's dtype.
PrimExpr Intrin(absl::string_view name, std::vector<PrimExpr> args);
// A bool expression that is true where v != 0.
PrimExpr NonZero(const PrimExpr& v);

// Float -> integer of dt: truncate, saturate, NaN -> 0 (the interpreter's
// FloatToInt); bool: nonzero.
int64_t FloatToIntSat(double v, DataType dt);

// ---- Naming and checks ---------------------------------------------------------

// "T_" + the op name with '.' -> '_' (e.g. "T_nn_bias_add").
std::string ComputeName(const ComputeCtx& ctx);
// The op needs `n` input tensors and one output shape at least.
absl::Status CheckArity(const ComputeCtx& ctx, size_t n_inputs, size_t n_outputs = 1);
// Registers `fn` under the Compute facet of `op_name`.
void Attach(const char* op_name, FTCompute fn);

}  // namespace kiln::lowering::tensor

#endif  // KILN_LOWERING_COMPUTE_TENSOR_TENSOR_UTIL_H_
