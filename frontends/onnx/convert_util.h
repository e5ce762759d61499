// File: frontends/onnx/convert_util.h (internal to the converter families)
//
// Small builders the nn and tensor converters share: typed graph-IR calls
// with their attribute structs filled in, constants, static-shape checks.
// Each returns the typed expression ConvertContext::Call builds, or the
// status that names the node.
//
//   KILN_ASSIGN_OR_RETURN(Expr y, cvt::Reshape(c, x, {0, -1}));
//   KILN_ASSIGN_OR_RETURN(std::vector<int64_t> d, cvt::StaticDims(c, t, "the input"));
#ifndef KILN_FRONTENDS_ONNX_CONVERT_UTIL_H_
#define KILN_FRONTENDS_ONNX_CONVERT_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontends/onnx/converter.h"

namespace kiln::onnx_frontend::cvt {

using Outs = absl::StatusOr<std::vector<Expr>>;

template <typename A>
Ref<A> NewAttrs() {
  return Ref<A>(new A());
}

// ---- types and shapes
// The tensor type of a typed expression (an internal error otherwise).
absl::StatusOr<TensorType> TypeOf(const Expr& e);
// The static extents of `t`, or Unimplemented naming `what` and the shape.
absl::StatusOr<std::vector<int64_t>> StaticDims(const ConvertContext& c, const TensorType& t,
                                                absl::string_view what);
// `axis` in [-rank, rank) -> [0, rank); InvalidArgument otherwise.
absl::StatusOr<int64_t> NormAxis(const ConvertContext& c, int64_t axis, int64_t rank,
                                 absl::string_view what = "axis");
int64_t Product(const std::vector<int64_t>& v, size_t begin = 0, size_t end = SIZE_MAX);
// Row-major strides of `dims`.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims);
// lo, lo + 1, ..., hi - 1.
std::vector<int64_t> IotaInts(int64_t lo, int64_t hi);
// Whether node output i exists with a name (is produced and may be used).
bool WantsOutput(const ConvertContext& c, int i);

// ---- constants
// A constant of `dtype` and `shape`; values[i] (converted) at flat index i.
absl::StatusOr<Expr> ConstOf(ConvertContext& c, DataType dtype, std::vector<int64_t> shape,
                             const std::vector<double>& values);
absl::StatusOr<Expr> ConstI64(ConvertContext& c, std::vector<int64_t> shape,
                              const std::vector<int64_t>& values);
// Constants a converter computes at import time hold at most this many
// elements (a malformed model must not make the importer allocate without
// bound); CheckConstantSize says Unimplemented beyond it.
inline constexpr int64_t kMaxConstantElements = int64_t{1} << 28;
absl::Status CheckConstantSize(const ConvertContext& c, const std::vector<int64_t>& shape,
                               absl::string_view what);
// Writes `v` into element i of `t` (any numeric dtype).
void StoreDouble(HostTensor& t, int64_t i, double v);

// ---- operator calls
absl::StatusOr<Expr> Reshape(ConvertContext& c, Expr x, std::vector<int64_t> newshape,
                             bool allowzero = false);
absl::StatusOr<Expr> Transpose(ConvertContext& c, Expr x, std::vector<int64_t> perm);
absl::StatusOr<Expr> ExpandDims(ConvertContext& c, Expr x, int64_t axis, int64_t n = 1);
absl::StatusOr<Expr> Squeeze(ConvertContext& c, Expr x, std::vector<int64_t> axes);
absl::StatusOr<Expr> BroadcastTo(ConvertContext& c, Expr x, std::vector<int64_t> shape);
// x itself when it already has `dtype`.
absl::StatusOr<Expr> Cast(ConvertContext& c, Expr x, DataType dtype);
// x[begin:end:step] along `axis` (negative begin/end count from the end).
absl::StatusOr<Expr> SliceAxis(ConvertContext& c, Expr x, int64_t axis, int64_t begin,
                               int64_t end, int64_t step = 1);
// take with mode "fast": indices in [-n, n), negatives counted from the end.
absl::StatusOr<Expr> Take(ConvertContext& c, Expr data, Expr indices, std::optional<int64_t> axis);
// where(idx < 0, idx + n, idx) for int64 indices; n broadcasts.
absl::StatusOr<Expr> NormalizeIndices(ConvertContext& c, Expr idx, Expr n);
// sum, mean, max, min, prod over `axes`.
absl::StatusOr<Expr> Reduce(ConvertContext& c, absl::string_view op, Expr x,
                            std::vector<int64_t> axes, bool keepdims);
absl::StatusOr<Expr> Binary(ConvertContext& c, absl::string_view op, Expr a, Expr b);
// concatenate(fields) along `axis` (the one field itself when alone).
absl::StatusOr<Expr> ConcatAxis(ConvertContext& c, std::vector<Expr> fields, int64_t axis);

// ---- run-time shape-like inputs (convert_dynamic.cc): the dyn.* forms the
// converters use when a value they read with ConstantInts depends on a graph
// input. `why` is that status, returned when the input cannot be used at run
// time (its length is not static).
bool NeedsValue(const absl::Status& s);  // it carries kNeedsConstantPayload
// shape_of(x)[start:end] as int64.
absl::StatusOr<Expr> DynamicShapeOf(ConvertContext& c, Expr x, int64_t start, int64_t end);
// Reshape with input 1 (shape) at run time.
absl::StatusOr<Expr> DynamicReshape(ConvertContext& c, Expr x, bool allowzero,
                                    const absl::Status& why);
// Expand with input 1 (shape) at run time.
absl::StatusOr<Expr> DynamicExpand(ConvertContext& c, Expr x, const absl::Status& why);
// ConstantOfShape with input 0 (shape) at run time; value null: float32 0.
absl::StatusOr<Expr> DynamicConstantOfShape(ConvertContext& c, Ref<const HostTensor> value,
                                            const absl::Status& why);
// Unsqueeze / Squeeze (opset >= 13) with axes at run time.
absl::StatusOr<Expr> DynamicSqueeze(ConvertContext& c, Expr x, bool unsqueeze,
                                    const absl::Status& why);
// Split with the sizes (input 1) at run time: a dyn.strided_slice per output.
absl::StatusOr<std::vector<Expr>> DynamicSplit(ConvertContext& c, Expr x, int64_t axis,
                                               int n_out, const absl::Status& why);
// Range with start, limit or delta at run time: dyn.arange.
absl::StatusOr<Expr> DynamicRange(ConvertContext& c);
// Slice (opset >= 10) with starts, ends or steps at run time (axes constant).
absl::StatusOr<Expr> DynamicSlice(ConvertContext& c, Expr x, const absl::Status& why);
// Tile (opset >= 6) with the repeats (input 1) at run time.
absl::StatusOr<Expr> DynamicTile(ConvertContext& c, Expr x, const absl::Status& why);
// Pad (opset >= 11) with the pads (input 1) at run time, over `axes`
// (normalized); mode constant, edge, reflect or wrap; `value` a 0-D tensor.
absl::StatusOr<Expr> DynamicPad(ConvertContext& c, Expr x, const std::string& mode, Expr value,
                                const std::vector<int64_t>& axes, const absl::Status& why);
// DynamicPad with the pads given as a 1-D int64 expression of 2 * axes entries.
absl::StatusOr<Expr> DynamicPadWith(ConvertContext& c, Expr x, const std::string& mode, Expr value,
                                    const std::vector<int64_t>& axes, Expr pads);
// x[..., :count, ...] along `axis`; count a 0-D or [1] integer tensor known at run time.
absl::StatusOr<Expr> DynamicSliceAlong(ConvertContext& c, Expr x, int64_t axis, Expr count);

// ---- parts of the nn and tensor families, registered by RegisterNnConverters
// and RegisterTensorConverters
void RegisterNormConverters(ConverterRegistry& r);    // convert_nn_norm.cc
void RegisterDenseConverters(ConverterRegistry& r);   // convert_nn_dense.cc
void RegisterLossConverters(ConverterRegistry& r);    // convert_nn_loss.cc
void RegisterIndexConverters(ConverterRegistry& r);   // convert_tensor_index.cc
void RegisterResizeConverters(ConverterRegistry& r);  // convert_tensor_resize.cc
void RegisterSelectConverters(ConverterRegistry& r);  // convert_select.cc (tensor family)
void RegisterSampleConverters(ConverterRegistry& r);  // convert_sample.cc (tensor family)
void RegisterQuantConverters(ConverterRegistry& r);   // convert_quant.cc (nn family)
void RegisterEinsumConverters(ConverterRegistry& r);  // convert_einsum.cc (nn family)
void RegisterRnnConverters(ConverterRegistry& r);     // convert_rnn.cc (nn family)

// The Conv and MatMul converters (convert_nn.cc, convert_nn_dense.cc), which
// the integer and quantized forms (convert_quant.cc) reuse on int32 operands.
Outs ConvertConvNode(ConvertContext& c);
Outs ConvertMatMulNode(ConvertContext& c);

// `e` (a node built by hand, outside type inference) with its type set.
Expr Typed(Expr e, const Type& t);
// A variable of type `t`, annotated and checked.
Var TypedVar(const std::string& name, const Type& t);

}  // namespace kiln::onnx_frontend::cvt

#endif  // KILN_FRONTENDS_ONNX_CONVERT_UTIL_H_
