#include "ir/tensor.h"

#include <sys/mman.h>

#include <cstdlib>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln {

void HostTensor::Free::operator()(void* p) const { std::free(p); }

absl::StatusOr<Ref<HostTensor>> HostTensor::Create(DataType dtype, std::vector<int64_t> shape) {
  auto t = CreateUninitialized(dtype, std::move(shape));
  if (t.ok()) {
    std::memset((*t)->data_.get(), 0, (*t)->nbytes_);
  }
  return t;
}

absl::StatusOr<Ref<HostTensor>> HostTensor::CreateUninitialized(DataType dtype,
                                                                std::vector<int64_t> shape) {
  if (dtype.is_void()) return absl::InvalidArgumentError("tensor dtype cannot be void");
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative tensor dimension ", d));
    if (d != 0 && n > (int64_t{1} << 50) / d)
      return absl::InvalidArgumentError("tensor too large: element count overflows");
    n *= d;
  }
  auto t = Ref<HostTensor>(new HostTensor());
  t->dtype_ = dtype;
  t->shape_ = std::move(shape);
  t->num_elements_ = n;
  t->nbytes_ = static_cast<size_t>((n * dtype.bits() * dtype.lanes() + 7) / 8);
  // Large tensors (model weights) are aligned to 2 MiB and offered to the
  // kernel as transparent huge pages: a 100 MB weight set then faults in 50
  // pages instead of 25,000, which is most of the cost of folding weights.
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t align = t->nbytes_ >= 2 * kHugePage ? kHugePage : kAlignment;
  size_t alloc = (t->nbytes_ + align - 1) / align * align;
  if (alloc == 0) alloc = kAlignment;
  void* p = std::aligned_alloc(align, alloc);
#ifdef MADV_HUGEPAGE
  if (p != nullptr && align == kHugePage) (void)madvise(p, alloc, MADV_HUGEPAGE);
#endif
  if (p == nullptr) return absl::ResourceExhaustedError("out of memory allocating tensor");
  // The tail padding past nbytes is always zeroed, so hashing and comparing
  // whole allocations never reads uninitialized bytes.
  if (alloc > t->nbytes_) std::memset(static_cast<char*>(p) + t->nbytes_, 0, alloc - t->nbytes_);
  t->data_.reset(p);
  return t;
}

absl::StatusOr<Ref<HostTensor>> HostTensor::FromBytes(DataType dtype, std::vector<int64_t> shape,
                                                      const void* data, size_t nbytes) {
  auto t = CreateUninitialized(dtype, std::move(shape));
  if (!t.ok()) return t.status();
  if ((*t)->nbytes() != nbytes)
    return absl::InvalidArgumentError(absl::StrCat("tensor data has ", nbytes,
                                                   " bytes; the shape and dtype need ",
                                                   (*t)->nbytes()));
  if (nbytes) std::memcpy((*t)->mutable_raw_data(), data, nbytes);
  return t;
}

double HostTensor::GetAsDouble(int64_t i) const {
  const char* p = static_cast<const char*>(raw_data());
  switch (dtype_.code()) {
    case DTypeCode::kFloat:
      if (dtype_.bits() == 32) return reinterpret_cast<const float*>(p)[i];
      if (dtype_.bits() == 64) return reinterpret_cast<const double*>(p)[i];
      return HalfToFloat(reinterpret_cast<const uint16_t*>(p)[i]);
    case DTypeCode::kBFloat: return BFloat16ToFloat(reinterpret_cast<const uint16_t*>(p)[i]);
    default: return static_cast<double>(GetAsInt64(i));
  }
}

int64_t HostTensor::GetAsInt64(int64_t i) const {
  const char* p = static_cast<const char*>(raw_data());
  switch (dtype_.code()) {
    case DTypeCode::kInt:
      switch (dtype_.bits()) {
        case 8: return reinterpret_cast<const int8_t*>(p)[i];
        case 16: return reinterpret_cast<const int16_t*>(p)[i];
        case 32: return reinterpret_cast<const int32_t*>(p)[i];
        case 64: return reinterpret_cast<const int64_t*>(p)[i];
      }
      return 0;
    case DTypeCode::kUInt:
      switch (dtype_.bits()) {
        case 8: return reinterpret_cast<const uint8_t*>(p)[i];
        case 16: return reinterpret_cast<const uint16_t*>(p)[i];
        case 32: return reinterpret_cast<const uint32_t*>(p)[i];
        case 64: return static_cast<int64_t>(reinterpret_cast<const uint64_t*>(p)[i]);
      }
      return 0;
    case DTypeCode::kBool: return reinterpret_cast<const uint8_t*>(p)[i] != 0;
    default: return static_cast<int64_t>(GetAsDouble(i));
  }
}

bool HostTensor::BitwiseEqual(const HostTensor& o) const {
  return dtype_ == o.dtype_ && shape_ == o.shape_ &&
         std::memcmp(raw_data(), o.raw_data(), nbytes_) == 0;
}

size_t HostTensor::ContentHash() const {
  size_t h = absl::HashOf(dtype_.Pack(), shape_);
  return absl::HashOf(h, absl::string_view(static_cast<const char*>(raw_data()), nbytes_));
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (absx < 0x38800000u) {  // subnormal or zero in half
    if (absx < 0x33000000u) return static_cast<uint16_t>(sign);
    uint32_t exp = absx >> 23;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp;  // 14 - (exp - 127) + 13 - 1 ... -> shift into 10 bits
    uint32_t half_mant = mant >> (shift);
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t exp = ((absx >> 23) - 127 + 15);
  uint32_t mant = absx & 0x7fffffu;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float BFloat16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace kiln
