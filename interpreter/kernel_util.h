// File: interpreter/kernel_util.h (internal to interpreter/)
//
// Helpers shared by the kernel files: typed load/store of any dtype through
// double or int64 (the numeric rules are in kernels.h), shapes and strides,
// NumPy broadcasting, axis normalization, and the per-family registration hooks.
#ifndef KILN_INTERPRETER_KERNEL_UTIL_H_
#define KILN_INTERPRETER_KERNEL_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interpreter/kernels.h"
#include "ir/status_macros.h"
#include "ir/tensor.h"

namespace kiln::interp::internal {

using Shape64 = std::vector<int64_t>;

inline std::string ShapeStr(const Shape64& s) { return absl::StrCat("(", absl::StrJoin(s, ", "), ")"); }
inline std::string TypeStr(const HostTensor& t) {
  return absl::StrCat("Tensor[", ShapeStr(t.shape()), ", ", t.dtype().ToString(), "]");
}

// Registration hook for one kernel.
void AddKernel(const char* op_name, KernelFn fn);

// One per family file.
void RegisterElemwiseKernels();
void RegisterReduceKernels();
void RegisterNNKernels();
void RegisterNormKernels();
void RegisterTransformKernels();
void RegisterDynKernels();  // kernels_dyn.cc: dyn.*

// ---- Element access ---------------------------------------------------------

inline double LoadF(const HostTensor& t, int64_t i) { return t.GetAsDouble(i); }
inline int64_t LoadI(const HostTensor& t, int64_t i) { return t.GetAsInt64(i); }

// Float -> integer of `dt`: truncate toward zero, saturate, NaN -> 0.
int64_t FloatToInt(double v, DataType dt);
// Stores an integer (wrapping to the dtype's width); into a float tensor it
// is converted.
void StoreI(HostTensor& t, int64_t i, int64_t v);
// Stores a float (rounded once to the dtype); into an integer or bool tensor
// it is converted with FloatToInt / nonzero.
void StoreF(HostTensor& t, int64_t i, double v);
// Copies element `si` of `src` to element `di` of `dst` (same dtype).
inline void CopyElem(const HostTensor& src, int64_t si, HostTensor& dst, int64_t di) {
  const int64_t b = src.dtype().bytes();
  std::memcpy(static_cast<char*>(dst.mutable_raw_data()) + di * b,
              static_cast<const char*>(src.raw_data()) + si * b, static_cast<size_t>(b));
}
// Lowest finite value of dt (as a double).
double LowestValue(DataType dt);

// ---- Shapes -----------------------------------------------------------------

inline int64_t NumElements(const Shape64& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}
inline Shape64 Strides(const Shape64& s) {
  Shape64 st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}
// Flat index -> coordinates.
inline void Unravel(int64_t flat, const Shape64& shape, Shape64* coords) {
  coords->resize(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    const int64_t d = shape[i] == 0 ? 1 : shape[i];
    (*coords)[i] = flat % d;
    flat /= d;
  }
}

absl::StatusOr<Ref<HostTensor>> NewTensor(const KernelCtx& k, DataType dt, const Shape64& shape);

// axis in [-ndim, ndim) -> [0, ndim), or an error naming the op.
absl::StatusOr<int64_t> NormAxis(const KernelCtx& k, int64_t axis, int64_t ndim,
                                 absl::string_view what = "axis");

// NumPy broadcast of shapes, or an error naming both.
absl::StatusOr<Shape64> BroadcastShape(const KernelCtx& k, const Shape64& a, const Shape64& b);

// For each output flat index, the flat index into an input of shape `in`
// broadcast to `out` (right-aligned).
std::vector<int64_t> BroadcastIndex(const Shape64& in, const Shape64& out);

inline Value TensorValue(Ref<HostTensor> t) { return Value::Tensor(Ref<const HostTensor>(std::move(t))); }

// Padding of 1, 2 or 4 values as {top, left, bottom, right}; pairs (1 or 2
// values) as 2 values.
absl::StatusOr<Shape64> Padding4(const KernelCtx& k, const Shape64& p);
absl::StatusOr<Shape64> Pair(const KernelCtx& k, absl::string_view name, const Shape64& v,
                             int64_t min_value);
// Position of each of the letters of `axes` in `layout` (a permutation of
// them), or an error.
absl::StatusOr<std::vector<int>> PermutedLayout(const KernelCtx& k, absl::string_view what,
                                                const std::string& layout, absl::string_view axes);

}  // namespace kiln::interp::internal

#endif  // KILN_INTERPRETER_KERNEL_UTIL_H_
