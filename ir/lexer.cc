#include "ir/lexer.h"

#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln {
namespace text {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(absl::string_view text, absl::string_view source) : s_(text), source_(source) {}

  absl::StatusOr<std::vector<Token>> Run() {
    std::vector<Token> out;
    out.reserve(s_.size() / 4 + 1);
    while (true) {
      if (auto st = SkipSpace(); !st.ok()) return st;
      Token t;
      t.line = line_;
      t.column = col_;
      if (i_ >= s_.size()) {
        out.push_back(std::move(t));
        return out;
      }
      const bool after_dot = !out.empty() && out.back().kind == Tok::kDot;
      if (auto st = Next(&t, after_dot); !st.ok()) return st;
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
    return absl::InvalidArgumentError(absl::StrCat(source_, ":", line, ":", col, ": ", msg));
  }

  absl::Status SkipSpace() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        Advance();
      } else if (c == '/' && Peek(1) == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') Advance();
      } else if (c == '/' && Peek(1) == '*') {
        int line = line_, col = col_;
        Advance();
        Advance();
        bool closed = false;
        while (i_ < s_.size()) {
          if (s_[i_] == '*' && Peek(1) == '/') {
            Advance();
            Advance();
            closed = true;
            break;
          }
          Advance();
        }
        if (!closed) return Error(line, col, "unterminated comment: '/*' has no matching '*/'");
      } else {
        break;
      }
    }
    return absl::OkStatus();
  }

  std::string IdentRun(bool dotted) {
    std::string out;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (IsIdentChar(c)) {
        out += c;
        Advance();
      } else if (dotted && c == '.' && IsIdentStart(Peek(1))) {
        out += c;
        Advance();
      } else {
        break;
      }
    }
    return out;
  }

  absl::Status Number(Token* t, bool plain_int) {
    std::string digits;
    if (Peek() == '-') {
      digits += '-';
      Advance();
    }
    while (IsDigit(Peek())) {
      digits += Peek();
      Advance();
    }
    bool is_float = false;
    if (!plain_int) {
      if (Peek() == '.' && IsDigit(Peek(1))) {
        is_float = true;
        digits += '.';
        Advance();
        while (IsDigit(Peek())) {
          digits += Peek();
          Advance();
        }
      }
      if ((Peek() == 'e' || Peek() == 'E') &&
          (IsDigit(Peek(1)) || ((Peek(1) == '-' || Peek(1) == '+') && IsDigit(Peek(2))))) {
        is_float = true;
        digits += 'e';
        Advance();
        if (Peek() == '-' || Peek() == '+') {
          digits += Peek();
          Advance();
        }
        while (IsDigit(Peek())) {
          digits += Peek();
          Advance();
        }
      }
      char c = Peek();
      if (c == 'f' || c == 'i' || c == 'u') {
        std::string suffix(1, c);
        Advance();
        while (IsDigit(Peek())) {
          suffix += Peek();
          Advance();
        }
        if (c == 'f') is_float = true;
        t->suffix = std::move(suffix);
      }
    }
    t->kind = is_float ? Tok::kFloat : Tok::kInt;
    t->text = std::move(digits);
    return absl::OkStatus();
  }

  absl::Status String(Token* t) {
    Advance();  // opening quote
    std::string out;
    while (true) {
      if (i_ >= s_.size() || s_[i_] == '\n')
        return Error(t->line, t->column, "unterminated string literal");
      char c = s_[i_];
      if (c == '"') {
        Advance();
        break;
      }
      if (c == '\\') {
        Advance();
        if (i_ >= s_.size()) return Error(t->line, t->column, "unterminated string literal");
        char e = s_[i_];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          default:
            return Error(line_, col_ - 1,
                         absl::StrCat("unknown escape sequence '\\", std::string(1, e), "' in string"));
        }
        Advance();
        continue;
      }
      out += c;
      Advance();
    }
    t->kind = Tok::kString;
    t->text = std::move(out);
    return absl::OkStatus();
  }

  absl::Status Next(Token* t, bool after_dot) {
    char c = Peek();
    if (IsDigit(c) || (c == '-' && IsDigit(Peek(1)) && !after_dot)) return Number(t, after_dot);
    if (IsIdentStart(c)) {
      t->kind = Tok::kIdent;
      t->text = IdentRun(/*dotted=*/true);
      return absl::OkStatus();
    }
    if (c == '%' || c == '@') {
      if (!IsIdentChar(Peek(1))) {
        if (c == '%') {  // `(n % 2)` in a dim expression
          t->kind = Tok::kPercent;
          Advance();
          return absl::OkStatus();
        }
        return Error(t->line, t->column, "expected a name after '@'");
      }
      Advance();
      t->kind = c == '%' ? Tok::kLocal : Tok::kGlobal;
      t->text = IdentRun(/*dotted=*/c == '@');
      return absl::OkStatus();
    }
    if (c == '"') return String(t);
    auto one = [&](Tok k) {
      t->kind = k;
      Advance();
      return absl::OkStatus();
    };
    auto two = [&](Tok k) {
      t->kind = k;
      Advance();
      Advance();
      return absl::OkStatus();
    };
    switch (c) {
      case '(': return one(Tok::kLParen);
      case ')': return one(Tok::kRParen);
      case '[': return one(Tok::kLBracket);
      case ']': return one(Tok::kRBracket);
      case '{': return one(Tok::kLBrace);
      case '}': return one(Tok::kRBrace);
      case '<': return one(Tok::kLAngle);
      case '>': return one(Tok::kRAngle);
      case ',': return one(Tok::kComma);
      case ';': return one(Tok::kSemi);
      case ':': return one(Tok::kColon);
      case '.': return one(Tok::kDot);
      case '?': return one(Tok::kQuestion);
      case '*': return one(Tok::kStar);
      case '+': return one(Tok::kPlus);
      case '/': return one(Tok::kSlash);
      case '%': return one(Tok::kPercent);
      case '=': return Peek(1) == '>' ? two(Tok::kFatArrow) : one(Tok::kEq);
      case '-': return Peek(1) == '>' ? two(Tok::kArrow) : one(Tok::kMinus);
      case '#':
        if (Peek(1) == '[') return two(Tok::kHashBracket);
        break;
      default: break;
    }
    std::string shown = std::isprint(static_cast<unsigned char>(c))
                            ? absl::StrCat("'", std::string(1, c), "'")
                            : absl::StrCat("byte 0x", absl::Hex(static_cast<unsigned char>(c)));
    return Error(t->line, t->column, absl::StrCat("unexpected character ", shown));
  }

  absl::string_view s_;
  absl::string_view source_;
  size_t i_ = 0;
  int32_t line_ = 1;
  int32_t col_ = 1;
};

}  // namespace

const char* TokName(Tok t) {
  switch (t) {
    case Tok::kEof: return "end of input";
    case Tok::kIdent: return "identifier";
    case Tok::kLocal: return "local variable";
    case Tok::kGlobal: return "global variable";
    case Tok::kInt: return "integer";
    case Tok::kFloat: return "float";
    case Tok::kString: return "string";
    case Tok::kLParen: return "'('";
    case Tok::kRParen: return "')'";
    case Tok::kLBracket: return "'['";
    case Tok::kRBracket: return "']'";
    case Tok::kLBrace: return "'{'";
    case Tok::kRBrace: return "'}'";
    case Tok::kLAngle: return "'<'";
    case Tok::kRAngle: return "'>'";
    case Tok::kComma: return "','";
    case Tok::kSemi: return "';'";
    case Tok::kColon: return "':'";
    case Tok::kEq: return "'='";
    case Tok::kDot: return "'.'";
    case Tok::kArrow: return "'->'";
    case Tok::kFatArrow: return "'=>'";
    case Tok::kQuestion: return "'?'";
    case Tok::kMinus: return "'-'";
    case Tok::kStar: return "'*'";
    case Tok::kPlus: return "'+'";
    case Tok::kSlash: return "'/'";
    case Tok::kPercent: return "'%'";
    case Tok::kHashBracket: return "'#['";
  }
  return "?";
}

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Tok::kIdent: return absl::StrCat("'", t.text, "'");
    case Tok::kLocal: return absl::StrCat("'%", t.text, "'");
    case Tok::kGlobal: return absl::StrCat("'@", t.text, "'");
    case Tok::kInt:
    case Tok::kFloat: return absl::StrCat("number '", t.text, t.suffix, "'");
    case Tok::kString: return absl::StrCat("string \"", t.text, "\"");
    default: return TokName(t.kind);
  }
}

absl::StatusOr<std::vector<Token>> Lex(absl::string_view text, absl::string_view source_name) {
  return Lexer(text, source_name).Run();
}

}  // namespace text
}  // namespace kiln
