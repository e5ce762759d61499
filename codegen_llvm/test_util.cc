// File: codegen_llvm/test_util.cc
#include "codegen_llvm/test_util.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "ir/status_macros.h"

namespace kiln::codegen::testing {

DLDataType ToDL(DataType t) {
  DLDataType d;
  d.code = static_cast<uint8_t>(t.code());
  d.bits = static_cast<uint8_t>(t.bits());
  d.lanes = static_cast<uint16_t>(t.lanes());
  return d;
}

HostTensor::HostTensor(DataType dtype, std::vector<int64_t> shape) : shape_(std::move(shape)) {
  size_t bytes = static_cast<size_t>(numel() * dtype.bytes());
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  storage_ = std::aligned_alloc(64, rounded);
  std::memset(storage_, 0, rounded);
  tensor_.data = storage_;
  tensor_.device = DLDevice{kDLCPU, 0};
  tensor_.ndim = static_cast<int32_t>(shape_.size());
  tensor_.dtype = ToDL(dtype);
  tensor_.shape = shape_.data();
  tensor_.strides = nullptr;
  tensor_.byte_offset = 0;
}

HostTensor::~HostTensor() { std::free(storage_); }

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape_) n *= d;
  return n;
}

float HalfToFloat(uint16_t h) {
  float sign = (h & 0x8000) ? -1.0f : 1.0f;
  int exp = (h >> 10) & 0x1f;
  int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
  if (exp == 31) return mant == 0 ? sign * INFINITY : NAN;
  return sign * std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
}

uint16_t FloatToHalf(float f) {
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return 0x7e00;
  double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return sign | 0x7c00;  // rounds to infinity
  if (a < std::ldexp(1.0, -14)) {          // subnormal (may round up to the smallest normal)
    return sign | static_cast<uint16_t>(std::nearbyint(a * std::ldexp(1.0, 24)));
  }
  int e = 0;
  double fr = std::frexp(a, &e);                   // a = fr * 2^e, fr in [0.5, 1)
  int exponent = e - 1;                            // a = (2 fr) * 2^exponent
  double m = std::nearbyint((2 * fr - 1) * 1024);  // a carry into the exponent is right
  return sign | static_cast<uint16_t>(((exponent + 15) << 10) + static_cast<int>(m));
}

uint16_t FloatToBFloat16(float f) {
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof(bits));
  if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

float BFloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f = 0;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

absl::StatusOr<std::unique_ptr<JitModule>> JitHost(const std::vector<tir::PrimFunc>& funcs,
                                                   absl::string_view target) {
  KILN_ASSIGN_OR_RETURN(Target t, ParseTarget(target));
  return JitModule::Create(funcs, t);
}

int32_t CallKernel(KilnKernelFn fn, std::initializer_list<DLTensor*> args, KilnKernelContext* ctx) {
  std::vector<DLTensor*> v(args);
  return fn(v.data(), static_cast<int32_t>(v.size()), ctx);
}

}  // namespace kiln::codegen::testing
