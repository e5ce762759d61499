// File: ir/tir_lexer.h
//
// The tokenizer of the loop-IR text format (internal to //ir:tir_parser; see
// tir_parser.h and docs/loop_ir.md). It turns the whole input into a token
// vector up front; the parser then walks that vector.
//
//   primfunc  A  1.5f  3_int32  1e-3  "name"  ( ) [ ] { } , : = + - * / %  < <= > >= == != && || !
//
// Whitespace and comments (`//` or `#` to the end of the line) are skipped. An
// identifier may contain dots between identifier characters (`T.x`). Errors (a
// malformed number, an unterminated string, a stray character) are statuses
// whose message starts with `file:line:col: `.
#ifndef KILN_IR_TIR_LEXER_H_
#define KILN_IR_TIR_LEXER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln::tir::internal {

enum class Tok : uint8_t {
  kEof, kIdent, kInt, kFloat, kString,
  kLParen, kRParen, kLBracket, kRBracket, kLBrace, kRBrace, kComma, kColon,
  kAssign, kPlus, kMinus, kStar, kSlash, kPercent,
  kLT, kLE, kGT, kGE, kEQ, kNE, kAndAnd, kOrOr, kBang,
};

struct Token {
  Tok kind = Tok::kEof;
  int line = 1;
  int col = 1;
  std::string text;    // identifier, number digits, string contents
  std::string suffix;  // number suffix: "", "f", or a dtype name (after '_')
};

// How a token is named in an error message ("identifier 'x'", "end of input").
std::string Describe(const Token& t);

// Every token of `text`, ending with one kEof token (which carries the
// position just past the input). `file` prefixes error messages.
absl::StatusOr<std::vector<Token>> Tokenize(absl::string_view text, absl::string_view file);

}  // namespace kiln::tir::internal

#endif  // KILN_IR_TIR_LEXER_H_
