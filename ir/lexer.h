// File: ir/lexer.h
//
// The tokenizer of the `.kir` text format (internal to //ir:text). It turns the
// whole input into a token vector up front; the parser then walks that vector.
//
//   %x  @main  nn.conv2d  1.5f  3i64  "NCHW"  ( ) [ ] { } < > , ; : = . -> => ? #[
//
// Comments (`// ...` and `/* ... */`) and whitespace are skipped. After a `.`
// token a number is lexed as a plain integer so that `%t.0.1` is two
// projections, not the float `0.1`. Errors (an unterminated comment or string,
// a stray character) name the line and column.
#ifndef KILN_IR_LEXER_H_
#define KILN_IR_LEXER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln {
namespace text {

enum class Tok : uint8_t {
  kEof,
  kIdent,     // nn.conv2d, float32, Cons, let, ...
  kLocal,     // %x  (text holds the name without '%')
  kGlobal,    // @f  (text holds the name without '@')
  kInt,       // 3, -2, 3i64 (suffix in `suffix`)
  kFloat,     // 1.5, 1e-05, 1f, 2f16 (suffix in `suffix`)
  kString,    // "..." (text holds the unescaped contents)
  kLParen, kRParen, kLBracket, kRBracket, kLBrace, kRBrace, kLAngle, kRAngle,
  kComma, kSemi, kColon, kEq, kDot, kArrow, kFatArrow, kQuestion, kMinus,
  kStar, kPlus, kSlash, kPercent,
  kHashBracket,  // #[
};

const char* TokName(Tok t);

struct Token {
  Tok kind = Tok::kEof;
  int32_t line = 1;
  int32_t column = 1;
  std::string text;    // identifier / name / number digits / string contents
  std::string suffix;  // number suffix: "", "f", "f16", "f64", "i64", "u8", ...
};

// What a token looks like in an error message: `';'`, `identifier 'foo'`, `end of input`.
std::string Describe(const Token& t);

// Tokenizes `text`; the last token is always kEof. Errors are prefixed with
// `source_name:line:column: `.
absl::StatusOr<std::vector<Token>> Lex(absl::string_view text, absl::string_view source_name);

}  // namespace text
}  // namespace kiln

#endif  // KILN_IR_LEXER_H_
