// File: ir/tir_lexer.cc — the loop-IR tokenizer (see tir_lexer.h): character
// scanning with line:col tracking, numbers with their suffixes, identifiers,
// string literals, punctuation and comments.
#include "ir/tir_lexer.h"

#include <cctype>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace kiln::tir::internal {

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Tok::kEof: return "end of input";
    case Tok::kIdent: return absl::StrCat("identifier '", t.text, "'");
    case Tok::kInt:
    case Tok::kFloat: return absl::StrCat("number '", t.text, t.suffix.empty() ? "" : "_", t.suffix, "'");
    case Tok::kString: return absl::StrCat("string \"", absl::CEscape(t.text), "\"");
    default: return absl::StrCat("'", t.text, "'");
  }
}

namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(absl::string_view s, absl::string_view file) : s_(s), file_(file) {}

  absl::StatusOr<std::vector<Token>> Run() {
    std::vector<Token> out;
    while (true) {
      SkipSpace();
      Token t;
      t.line = line_;
      t.col = col_;
      if (i_ >= s_.size()) {
        out.push_back(std::move(t));
        return out;
      }
      KILN_RETURN_IF_ERROR(Next(&t));
      out.push_back(std::move(t));
    }
  }

 private:
  char Peek(size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  void Advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  absl::Status Error(int line, int col, absl::string_view msg) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ":", line, ":", col, ": ", msg));
  }

  void SkipSpace() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        Advance();
      } else if (c == '#' || (c == '/' && Peek(1) == '/')) {
        while (i_ < s_.size() && s_[i_] != '\n') Advance();
      } else {
        return;
      }
    }
  }

  absl::Status Number(Token* t) {
    bool is_float = false;
    while (IsDigit(Peek())) {
      t->text += Peek();
      Advance();
    }
    if (Peek() == '.' && IsDigit(Peek(1))) {
      is_float = true;
      t->text += '.';
      Advance();
      while (IsDigit(Peek())) {
        t->text += Peek();
        Advance();
      }
    }
    if ((Peek() == 'e' || Peek() == 'E') &&
        (IsDigit(Peek(1)) || ((Peek(1) == '-' || Peek(1) == '+') && IsDigit(Peek(2))))) {
      is_float = true;
      t->text += 'e';
      Advance();
      if (Peek() == '-' || Peek() == '+') {
        t->text += Peek();
        Advance();
      }
      while (IsDigit(Peek())) {
        t->text += Peek();
        Advance();
      }
    }
    if (Peek() == 'f' && !IsIdentChar(Peek(1))) {
      Advance();
      t->suffix.assign(1, 'f');  // (not = "f": gcc 12 -O2 -Wrestrict false positive)
      is_float = true;
    } else if (Peek() == '_' && IsIdentStart(Peek(1))) {
      Advance();
      while (IsIdentChar(Peek())) {
        t->suffix += Peek();
        Advance();
      }
    }
    if (IsIdentChar(Peek()) || Peek() == '.') {
      return Error(t->line, t->col,
                   absl::StrCat("malformed number '", t->text, t->suffix, std::string(1, Peek()),
                                "...': a literal is digits with an optional f or _<dtype> suffix "
                                "(1.5f, 3_int32)"));
    }
    t->kind = is_float ? Tok::kFloat : Tok::kInt;
    return absl::OkStatus();
  }

  absl::Status String(Token* t) {
    Advance();  // opening quote
    std::string raw;
    while (true) {
      if (i_ >= s_.size() || s_[i_] == '\n') {
        return Error(t->line, t->col, "unterminated string literal");
      }
      char c = s_[i_];
      if (c == '"') {
        Advance();
        break;
      }
      if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] != '\n') {
        raw += c;
        Advance();
        c = s_[i_];
      }
      raw += c;
      Advance();
    }
    std::string error;
    if (!absl::CUnescape(raw, &t->text, &error)) {
      return Error(t->line, t->col, absl::StrCat("bad escape in string literal: ", error));
    }
    t->kind = Tok::kString;
    return absl::OkStatus();
  }

  absl::Status Next(Token* t) {
    char c = Peek();
    if (IsDigit(c)) return Number(t);
    if (IsIdentStart(c)) {
      while (IsIdentChar(Peek()) || (Peek() == '.' && IsIdentChar(Peek(1)))) {
        t->text += Peek();
        Advance();
      }
      t->kind = Tok::kIdent;
      return absl::OkStatus();
    }
    if (c == '"') return String(t);
    struct Punct {
      const char* text;
      Tok kind;
    };
    static constexpr Punct kPuncts[] = {
        {"&&", Tok::kAndAnd}, {"||", Tok::kOrOr}, {"<=", Tok::kLE},     {">=", Tok::kGE},
        {"==", Tok::kEQ},     {"!=", Tok::kNE},   {"(", Tok::kLParen},  {")", Tok::kRParen},
        {"[", Tok::kLBracket}, {"]", Tok::kRBracket}, {"{", Tok::kLBrace}, {"}", Tok::kRBrace},
        {",", Tok::kComma},   {":", Tok::kColon}, {"=", Tok::kAssign},  {"+", Tok::kPlus},
        {"-", Tok::kMinus},   {"*", Tok::kStar},  {"/", Tok::kSlash},   {"%", Tok::kPercent},
        {"<", Tok::kLT},      {">", Tok::kGT},    {"!", Tok::kBang},
    };
    for (const Punct& p : kPuncts) {
      absl::string_view pt(p.text);
      if (s_.substr(i_, pt.size()) == pt) {
        for (size_t k = 0; k < pt.size(); ++k) Advance();
        t->kind = p.kind;
        t->text = std::string(pt);
        return absl::OkStatus();
      }
    }
    std::string shown = std::isprint(static_cast<unsigned char>(c))
                            ? std::string(1, c)
                            : absl::StrCat("\\x", absl::Hex(static_cast<unsigned char>(c)));
    return Error(t->line, t->col, absl::StrCat("unexpected character '", shown, "'"));
  }

  absl::string_view s_;
  absl::string_view file_;
  size_t i_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

absl::StatusOr<std::vector<Token>> Tokenize(absl::string_view text, absl::string_view file) {
  Lexer lexer(text, file);
  return lexer.Run();
}

}  // namespace kiln::tir::internal
