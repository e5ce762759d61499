// File: ir/dtype.h
//
// DataType: a scalar (or short vector) element type with DLPack's encoding
// (type code, bits, lanes), so a kiln tensor and a DLTensor agree bit for bit.
//
//   KILN_ASSIGN_OR_RETURN(DataType t, DataType::Parse("float16"));
//   t.ToString() == "float16"; t.bytes() == 2;
#ifndef KILN_IR_DTYPE_H_
#define KILN_IR_DTYPE_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace kiln {

// Values follow DLPack's DLDataTypeCode.
enum class DTypeCode : uint8_t {
  kInt = 0,
  kUInt = 1,
  kFloat = 2,
  kOpaqueHandle = 3,
  kBFloat = 4,
  kBool = 6,
};

class DataType {
 public:
  constexpr DataType() = default;  // "void": no type (used for "unset").
  constexpr DataType(DTypeCode code, int bits, int lanes = 1)
      : code_(code), bits_(static_cast<uint8_t>(bits)), lanes_(static_cast<uint16_t>(lanes)) {}

  static constexpr DataType Float(int bits) { return DataType(DTypeCode::kFloat, bits); }
  static constexpr DataType Int(int bits) { return DataType(DTypeCode::kInt, bits); }
  static constexpr DataType UInt(int bits) { return DataType(DTypeCode::kUInt, bits); }
  static constexpr DataType BFloat16() { return DataType(DTypeCode::kBFloat, 16); }
  static constexpr DataType Bool() { return DataType(DTypeCode::kBool, 8); }
  static constexpr DataType Void() { return DataType(); }

  // Accepts "float32", "int8", "uint8", "bool", "bfloat16", "float16x4", "void".
  static absl::StatusOr<DataType> Parse(absl::string_view text);
  std::string ToString() const;

  DTypeCode code() const { return code_; }
  int bits() const { return bits_; }
  int lanes() const { return lanes_; }
  // Bytes of one element (all lanes), rounded up.
  int64_t bytes() const { return (static_cast<int64_t>(bits_) * lanes_ + 7) / 8; }

  bool is_void() const { return bits_ == 0; }
  bool is_float() const { return code_ == DTypeCode::kFloat || code_ == DTypeCode::kBFloat; }
  bool is_int() const { return code_ == DTypeCode::kInt; }
  bool is_uint() const { return code_ == DTypeCode::kUInt; }
  bool is_bool() const { return code_ == DTypeCode::kBool; }
  bool is_integral() const { return is_int() || is_uint() || is_bool(); }

  friend bool operator==(DataType a, DataType b) {
    return a.code_ == b.code_ && a.bits_ == b.bits_ && a.lanes_ == b.lanes_;
  }
  friend bool operator!=(DataType a, DataType b) { return !(a == b); }
  uint32_t Pack() const {
    return static_cast<uint32_t>(code_) | (static_cast<uint32_t>(bits_) << 8) |
           (static_cast<uint32_t>(lanes_) << 16);
  }

 private:
  DTypeCode code_ = DTypeCode::kOpaqueHandle;
  uint8_t bits_ = 0;
  uint16_t lanes_ = 0;
};

}  // namespace kiln

#endif  // KILN_IR_DTYPE_H_
