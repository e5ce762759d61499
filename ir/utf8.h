// File: ir/utf8.h
//
// UTF-8 checks for names that leave the compiler as text (ONNX value names
// that become artifact input/output names, JSON strings):
//
//   if (std::optional<size_t> at = InvalidUtf8At(name)) ... byte *at is bad
#ifndef KILN_IR_UTF8_H_
#define KILN_IR_UTF8_H_

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"

namespace kiln {

// The offset of the first byte where `s` stops being well-formed UTF-8
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF, no
// truncated sequence), or nullopt when all of it is. NUL is valid UTF-8.
std::optional<size_t> InvalidUtf8At(absl::string_view s);

}  // namespace kiln

#endif  // KILN_IR_UTF8_H_
