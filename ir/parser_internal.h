// File: ir/parser_internal.h (internal to //ir:text)
//
// The recursive-descent parser class behind ir/parser.h, shared by
// parser.cc (modules, expressions, patterns, constants) and
// parser_types.cc (types, shapes, dims, type parameters).
#ifndef KILN_IR_PARSER_INTERNAL_H_
#define KILN_IR_PARSER_INTERNAL_H_

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/lexer.h"
#include "ir/op.h"
#include "ir/status_macros.h"
#include "ir/parser.h"

namespace kiln::parser_internal {


using text::Tok;
using text::Token;

// Deep enough for any program people write; shallow enough that the recursion
// fits a small (1 MiB) thread stack even in sanitizer builds, whose frames are
// several times larger.
constexpr int kMaxDepth = 256;

class Parser {
 public:
  Parser(std::vector<Token> toks, absl::string_view source)
      : toks_(std::move(toks)), source_(source) {}

  absl::StatusOr<Module> ParseModuleText();
  absl::StatusOr<Expr> ParseExprText(const std::vector<Var>& free_vars);
  absl::StatusOr<Type> ParseTypeText();

 private:
  // ---- Tokens and errors ----
  const Token& Peek(size_t k = 0) const {
    size_t i = pos_ + k;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool Is(Tok k, size_t ahead = 0) const { return Peek(ahead).kind == k; }
  bool IsWord(absl::string_view w, size_t ahead = 0) const {
    return Peek(ahead).kind == Tok::kIdent && Peek(ahead).text == w;
  }
  absl::Status ErrorAt(const Token& t, absl::string_view msg) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ":", t.line, ":", t.column, ": ", msg));
  }
  absl::Status Unexpected(absl::string_view expected) const {
    return ErrorAt(Peek(), absl::StrCat("expected ", expected, " but found ", text::Describe(Peek())));
  }
  absl::Status Expect(Tok k) {
    if (!Is(k)) return Unexpected(text::TokName(k));
    Next();
    return absl::OkStatus();
  }
  absl::Status ExpectWord(absl::string_view w) {
    if (!IsWord(w)) return Unexpected(absl::StrCat("'", w, "'"));
    Next();
    return absl::OkStatus();
  }
  // Prefixes a factory error with the position of `t`.
  absl::Status At(const Token& t, const absl::Status& s) const {
    return ErrorAt(t, s.message());
  }
  static Span SpanOf(const Token& t) { return Span{t.line, t.column}; }

  struct DepthGuard {
    explicit DepthGuard(int* d) : d_(d) { ++*d_; }
    ~DepthGuard() { --*d_; }
    int* d_;
  };
  absl::Status CheckDepth() const {
    if (depth_ > kMaxDepth)
      return ErrorAt(Peek(), absl::StrCat("nesting is deeper than ", kMaxDepth,
                                          " levels; split the expression with bindings"));
    return absl::OkStatus();
  }

  // ---- Scopes ----
  void BindLocal(const std::string& name, Expr e) {
    locals_[name].push_back(std::move(e));
    local_undo_.push_back(name);
  }
  size_t LocalMark() const { return local_undo_.size(); }
  void LocalRestore(size_t mark) {
    while (local_undo_.size() > mark) {
      auto it = locals_.find(local_undo_.back());
      it->second.pop_back();
      if (it->second.empty()) locals_.erase(it);
      local_undo_.pop_back();
    }
  }
  void BindTypeParam(const TypeVar& tv) {
    tparams_[tv->name].push_back(tv);
    tparam_undo_.push_back(tv->name);
  }
  size_t TypeMark() const { return tparam_undo_.size(); }
  void TypeRestore(size_t mark) {
    while (tparam_undo_.size() > mark) {
      auto it = tparams_.find(tparam_undo_.back());
      it->second.pop_back();
      if (it->second.empty()) tparams_.erase(it);
      tparam_undo_.pop_back();
    }
  }

  // ---- Module structure ----
  absl::Status ParseHeader();
  absl::Status ScanTopLevel();
  absl::Status ParseMetadata();
  absl::Status ParseTypeDef();
  absl::Status ParseDef();

  // ---- Types ----
  absl::StatusOr<Type> ParseType();
  absl::StatusOr<Shape> ParseShape();
  absl::StatusOr<Dim> ParseDim();
  absl::StatusOr<std::vector<TypeVar>> ParseTypeParams();  // `<A, B>`, binds them

  // ---- Expressions ----
  absl::StatusOr<Expr> ParseBlock(Tok end);  // statements then a result; stops before `end`
  absl::StatusOr<Expr> ParseExpr();
  absl::StatusOr<Expr> ParsePrimary();
  absl::StatusOr<Expr> ParseCall(Expr callee, const Token& at, std::vector<Type> type_args);
  absl::StatusOr<Function> ParseFunctionRest(const Token& at);  // after `fn` / `def @f`
  absl::StatusOr<Expr> ParseIf();
  absl::StatusOr<Expr> ParseMatch();
  absl::StatusOr<Pattern> ParsePattern();
  absl::StatusOr<Expr> ParseScalar();
  absl::StatusOr<Expr> ParseMetaRef();
  absl::StatusOr<AttrValue> ParseAttrValue();
  absl::StatusOr<Var> ParseVarDecl();  // %x or %x: T

  std::vector<Token> toks_;
  std::string source_;
  size_t pos_ = 0;
  int depth_ = 0;

  Module module_;
  bool module_mode_ = false;
  absl::flat_hash_map<std::string, GlobalTypeVar> adts_;
  std::vector<size_t> typedef_starts_;
  absl::flat_hash_map<size_t, size_t> typedef_end_;  // start token -> token after it
  std::optional<size_t> metadata_start_;
  bool metadata_seen_ = false;
  std::map<int64_t, Constant> meta_;
  absl::flat_hash_map<std::string, GlobalVar> free_globals_;

  absl::flat_hash_map<std::string, std::vector<Expr>> locals_;
  std::vector<std::string> local_undo_;
  absl::flat_hash_map<std::string, std::vector<TypeVar>> tparams_;
  std::vector<std::string> tparam_undo_;
};

}  // namespace kiln::parser_internal

#endif  // KILN_IR_PARSER_INTERNAL_H_
