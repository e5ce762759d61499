// File: ir/tensor.h
//
// HostTensor: an owned, dense, row-major tensor in host memory — the value of a
// Constant node and of every interpreter value. Its layout is DLPack's compact
// layout (no strides, byte offset 0, data aligned to 64 bytes), so a DLTensor
// can point straight at it.
//
//   KILN_ASSIGN_OR_RETURN(auto t, HostTensor::Create(DataType::Float(32), {2, 3}));
//   float* p = t->mutable_data<float>();
#ifndef KILN_IR_TENSOR_H_
#define KILN_IR_TENSOR_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "ir/object.h"

namespace kiln {

class HostTensor : public Object {
 public:
  static constexpr size_t kAlignment = 64;
  static bool IsInstance(const Object*) { return true; }

  // Zero-filled. Fails on negative dims or a size that overflows.
  static absl::StatusOr<Ref<HostTensor>> Create(DataType dtype, std::vector<int64_t> shape);
  // Like Create, but the contents are unspecified: for callers that write
  // every element (saves a pass over large weights).
  static absl::StatusOr<Ref<HostTensor>> CreateUninitialized(DataType dtype,
                                                             std::vector<int64_t> shape);
  // Copies `nbytes` bytes from `data`; nbytes must match the shape.
  static absl::StatusOr<Ref<HostTensor>> FromBytes(DataType dtype, std::vector<int64_t> shape,
                                                   const void* data, size_t nbytes);
  template <typename T>
  static absl::StatusOr<Ref<HostTensor>> FromVector(DataType dtype, std::vector<int64_t> shape,
                                                    const std::vector<T>& values) {
    return FromBytes(dtype, std::move(shape), values.data(), values.size() * sizeof(T));
  }

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t num_elements() const { return num_elements_; }
  size_t nbytes() const { return nbytes_; }
  const void* raw_data() const { return data_.get(); }
  void* mutable_raw_data() { return data_.get(); }
  template <typename T>
  const T* data() const { return static_cast<const T*>(raw_data()); }
  template <typename T>
  T* mutable_data() { return static_cast<T*>(mutable_raw_data()); }

  // Element `i` (flat index) converted to double / int64, for any dtype.
  double GetAsDouble(int64_t i) const;
  int64_t GetAsInt64(int64_t i) const;

  bool BitwiseEqual(const HostTensor& other) const;
  size_t ContentHash() const;

 private:
  struct Free {
    void operator()(void* p) const;
  };
  HostTensor() = default;
  DataType dtype_;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 0;
  size_t nbytes_ = 0;
  std::unique_ptr<void, Free> data_;
};

// IEEE half and bfloat16 conversions, shared by the interpreter and printer.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
float BFloat16ToFloat(uint16_t h);
uint16_t FloatToBFloat16(float f);

}  // namespace kiln

#endif  // KILN_IR_TENSOR_H_
