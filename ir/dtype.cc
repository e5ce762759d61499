#include "ir/dtype.h"

#include <charconv>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

bool ParseInt(absl::string_view s, int* out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

absl::StatusOr<DataType> DataType::Parse(absl::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown data type '", text,
        "'; expected one of float16/32/64, bfloat16, int8/16/32/64, uint8/16/32/64, bool"));
  };
  if (text == "void") return DataType::Void();
  absl::string_view base = text;
  int lanes = 1;
  if (size_t x = text.rfind('x'); x != absl::string_view::npos && x > 0) {
    if (!ParseInt(text.substr(x + 1), &lanes) || lanes < 1 || lanes > 65535) return bad();
    base = text.substr(0, x);
  }
  if (base == "bool") return DataType(DTypeCode::kBool, 8, lanes);
  DTypeCode code;
  absl::string_view digits;
  if (absl::StartsWith(base, "bfloat")) {
    code = DTypeCode::kBFloat;
    digits = base.substr(6);
  } else if (absl::StartsWith(base, "float")) {
    code = DTypeCode::kFloat;
    digits = base.substr(5);
  } else if (absl::StartsWith(base, "uint")) {
    code = DTypeCode::kUInt;
    digits = base.substr(4);
  } else if (absl::StartsWith(base, "int")) {
    code = DTypeCode::kInt;
    digits = base.substr(3);
  } else {
    return bad();
  }
  int bits = 0;
  if (!ParseInt(digits, &bits)) return bad();
  bool ok = false;
  switch (code) {
    case DTypeCode::kFloat: ok = bits == 16 || bits == 32 || bits == 64; break;
    case DTypeCode::kBFloat: ok = bits == 16; break;
    default: ok = bits == 1 || bits == 4 || bits == 8 || bits == 16 || bits == 32 || bits == 64;
  }
  if (!ok) return bad();
  return DataType(code, bits, lanes);
}

std::string DataType::ToString() const {
  if (is_void()) return "void";
  std::string s;
  switch (code_) {
    case DTypeCode::kInt: s = absl::StrCat("int", bits()); break;
    case DTypeCode::kUInt: s = absl::StrCat("uint", bits()); break;
    case DTypeCode::kFloat: s = absl::StrCat("float", bits()); break;
    case DTypeCode::kBFloat: s = absl::StrCat("bfloat", bits()); break;
    case DTypeCode::kBool: s = "bool"; break;
    case DTypeCode::kOpaqueHandle: s = "handle"; break;
  }
  if (lanes() != 1) absl::StrAppend(&s, "x", lanes());
  return s;
}

}  // namespace kiln
