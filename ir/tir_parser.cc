// File: ir/tir_parser.cc — the loop-IR text parser (see tir_parser.h and
// docs/loop_ir.md). The tokenizer (tir_lexer.h) turns the input into a vector
// up front; a recursive-descent parser walks it with one token of lookahead
// (two in a few places). Scopes are a name -> stack-of-symbols table plus an
// undo stack.
#include "ir/tir_parser.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir_lexer.h"
#include "ir/tir_printer.h"

namespace kiln::tir {
namespace {

using internal::Describe;
using internal::Tok;
using internal::Token;

// ---- Parser -----------------------------------------------------------------------

// Each level of expression nesting costs a few stack frames; printed sums are
// fully parenthesized, so a chain of n terms nests n deep.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kMaxDepth = 500;
#else
constexpr int kMaxDepth = 1000;
#endif

bool IsLoopKeyword(absl::string_view s) {
  return s == "for" || s == "serial" || s == "parallel" || s == "vectorized" || s == "unrolled" ||
         s == "thread_binding";
}

ForKind LoopKind(absl::string_view s) {
  if (s == "parallel") return ForKind::kParallel;
  if (s == "vectorized") return ForKind::kVectorized;
  if (s == "unrolled") return ForKind::kUnrolled;
  if (s == "thread_binding") return ForKind::kThreadBinding;
  return ForKind::kSerial;
}

struct Symbol {
  Var var;        // a variable, or
  Buffer buffer;  // a buffer (its data var is `buffer->data`)
};

class Parser {
 public:
  Parser(std::vector<Token> toks, absl::string_view file) : toks_(std::move(toks)), file_(file) {}

  absl::StatusOr<std::vector<PrimFunc>> Funcs() {
    std::vector<PrimFunc> out;
    while (Peek().kind != Tok::kEof) {
      KILN_ASSIGN_OR_RETURN(PrimFunc f, Func());
      out.push_back(std::move(f));
    }
    return out;
  }

  absl::StatusOr<PrimExpr> SingleExpr(const std::vector<Var>& vars,
                                      const std::vector<Buffer>& buffers) {
    for (const Var& v : vars) Declare(v->name, Symbol{v, nullptr});
    for (const Buffer& b : buffers) Declare(b->name, Symbol{nullptr, b});
    KILN_ASSIGN_OR_RETURN(PrimExpr e, Expr());
    if (Peek().kind != Tok::kEof) return Unexpected("end of input");
    return e;
  }

 private:
  // ---- Tokens and errors ----------------------------------------------------------

  const Token& Peek(size_t k = 0) const {
    size_t i = pos_ + k;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  const Token& Take() {
    const Token& t = Peek();
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool IsIdent(absl::string_view text, size_t k = 0) const {
    return Peek(k).kind == Tok::kIdent && Peek(k).text == text;
  }
  absl::Status ErrorAt(const Token& t, absl::string_view msg) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ":", t.line, ":", t.col, ": ", msg));
  }
  absl::Status Unexpected(absl::string_view expected) const {
    return ErrorAt(Peek(), absl::StrCat("expected ", expected, ", found ", Describe(Peek())));
  }
  absl::Status Expect(Tok kind, absl::string_view what) {
    if (Peek().kind != kind) return Unexpected(what);
    Take();
    return absl::OkStatus();
  }
  absl::Status ExpectKeyword(absl::string_view word) {
    if (!IsIdent(word)) return Unexpected(absl::StrCat("'", word, "'"));
    Take();
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Ident(absl::string_view what) {
    if (Peek().kind != Tok::kIdent) return Unexpected(what);
    return Take().text;
  }
  // A name: an identifier or a string.
  absl::StatusOr<std::string> NameOrString(absl::string_view what) {
    if (Peek().kind != Tok::kIdent && Peek().kind != Tok::kString) return Unexpected(what);
    return Take().text;
  }

  struct DepthGuard {
    explicit DepthGuard(int* d) : d_(d) { ++*d_; }
    ~DepthGuard() { --*d_; }
    int* d_;
  };
  absl::Status CheckDepth() const {
    if (depth_ > kMaxDepth) {
      return ErrorAt(Peek(), absl::StrCat("nesting is deeper than ", kMaxDepth, " levels"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<DataType> DType() {
    const Token& t = Peek();
    if (t.kind != Tok::kIdent) return Unexpected("a data type");
    Take();
    if (t.text == "handle") return kHandleType;
    absl::StatusOr<DataType> d = DataType::Parse(t.text);
    if (!d.ok()) return ErrorAt(t, d.status().message());
    return *d;
  }

  // ---- Scopes ---------------------------------------------------------------------

  void Declare(const std::string& name, Symbol s) {
    table_[name].push_back(std::move(s));
    stack_.push_back(name);
  }
  size_t Mark() const { return stack_.size(); }
  void PopTo(size_t mark) {
    while (stack_.size() > mark) {
      auto it = table_.find(stack_.back());
      it->second.pop_back();
      if (it->second.empty()) table_.erase(it);
      stack_.pop_back();
    }
  }
  const Symbol* Lookup(const std::string& name) const {
    auto it = table_.find(name);
    return it == table_.end() ? nullptr : &it->second.back();
  }
  absl::StatusOr<Var> DeclareVar(const Token& at, const std::string& name, DataType t) {
    if (IsReservedWord(name)) {
      return ErrorAt(at, absl::StrCat("'", name, "' is a keyword and cannot name a variable"));
    }
    Var v = MakeVar(name, t);
    Declare(name, Symbol{v, nullptr});
    return v;
  }
  // `name [: dtype]` of a binding.
  absl::StatusOr<Var> VarDecl() {
    const Token& at = Peek();
    KILN_ASSIGN_OR_RETURN(std::string name, Ident("a variable name"));
    DataType t = kIndexType;
    if (Peek().kind == Tok::kColon) {
      Take();
      KILN_ASSIGN_OR_RETURN(t, DType());
    }
    return DeclareVar(at, name, t);
  }

  // ---- Literal typing -----------------------------------------------------------------

  // A literal written without a suffix takes the type of the other operand.
  PrimExpr Coerce(const PrimExpr& x, DataType want) {
    if (!untyped_.count(x.get()) || x->dtype == want || want.is_void()) return x;
    DataType scalar(want.code(), want.bits(), 1);
    PrimExpr c;
    if (x->kind == ExprKind::kIntImm && (scalar.is_integral() || scalar.is_float())) {
      c = scalar.is_float() ? FloatImm(static_cast<double>(x->int_value), scalar)
                            : IntImm(x->int_value, scalar);
    } else if (x->kind == ExprKind::kFloatImm && scalar.is_float()) {
      c = FloatImm(x->float_value, scalar);
    } else {
      return x;
    }
    return want.lanes() > 1 ? Broadcast(c, want.lanes()) : c;
  }
  void CoercePair(PrimExpr* a, PrimExpr* b) {
    bool ua = untyped_.count(a->get()) > 0;
    bool ub = untyped_.count(b->get()) > 0;
    if (ua && !ub) *a = Coerce(*a, (*b)->dtype);
    if (ub && !ua) *b = Coerce(*b, (*a)->dtype);
  }
  PrimExpr MakeBinary(ExprKind k, PrimExpr a, PrimExpr b) {
    if (k != ExprKind::kAnd && k != ExprKind::kOr) CoercePair(&a, &b);
    return tir::Binary(k, std::move(a), std::move(b));
  }

  // ---- Functions and buffers ------------------------------------------------------------

  absl::StatusOr<PrimFunc> Func() {
    KILN_RETURN_IF_ERROR(ExpectKeyword("primfunc"));
    KILN_ASSIGN_OR_RETURN(std::string name, NameOrString("a function name"));
    KILN_RETURN_IF_ERROR(Expect(Tok::kLParen, "'(' after the function name"));
    size_t mark = Mark();
    std::vector<Buffer> params;
    std::unordered_set<std::string> param_names;
    declare_free_vars_ = true;
    while (Peek().kind != Tok::kRParen) {
      if (!params.empty()) KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "',' or ')'"));
      const Token& at = Peek();
      KILN_ASSIGN_OR_RETURN(Buffer b, BufferDecl(/*allocate=*/false));
      if (!param_names.insert(b->name).second) {
        declare_free_vars_ = false;
        return ErrorAt(at, absl::StrCat("parameter '", b->name, "' is declared twice"));
      }
      params.push_back(std::move(b));
    }
    declare_free_vars_ = false;
    Take();  // ')'
    std::map<std::string, std::string> attrs;
    if (IsIdent("attrs")) {
      Take();
      KILN_RETURN_IF_ERROR(Expect(Tok::kLBrace, "'{' after 'attrs'"));
      while (Peek().kind != Tok::kRBrace) {
        if (!attrs.empty()) KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "',' or '}'"));
        KILN_ASSIGN_OR_RETURN(std::string key, NameOrString("an attribute name"));
        KILN_RETURN_IF_ERROR(Expect(Tok::kAssign, "'=' after the attribute name"));
        KILN_ASSIGN_OR_RETURN(std::string value, AnnotationValue());
        attrs[key] = value;
      }
      Take();  // '}'
    }
    KILN_ASSIGN_OR_RETURN(Stmt body, Block());
    PopTo(mark);
    return MakePrimFunc(name, std::move(params), std::move(body), std::move(attrs));
  }

  // A string, identifier or number, as text (annotation and attribute values).
  absl::StatusOr<std::string> AnnotationValue() {
    const Token& t = Peek();
    if (t.kind == Tok::kString || t.kind == Tok::kIdent) return Take().text;
    if (t.kind == Tok::kInt || t.kind == Tok::kFloat) {
      Take();
      return absl::StrCat(t.text, t.suffix);
    }
    return Unexpected("a value (a string)");
  }

  // `[d0, d1, ...]`; in a parameter list a bare unknown name declares a shape
  // variable (`n` or `n: int32`).
  absl::StatusOr<std::vector<PrimExpr>> Dims() {
    KILN_RETURN_IF_ERROR(Expect(Tok::kLBracket, "'['"));
    std::vector<PrimExpr> dims;
    while (Peek().kind != Tok::kRBracket) {
      if (!dims.empty()) KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "',' or ']'"));
      if (declare_free_vars_ && Peek().kind == Tok::kIdent && Peek(1).kind == Tok::kColon &&
          Lookup(Peek().text) == nullptr) {
        KILN_ASSIGN_OR_RETURN(Var v, VarDecl());
        dims.push_back(v);
        continue;
      }
      KILN_ASSIGN_OR_RETURN(PrimExpr d, Expr());
      dims.push_back(Coerce(d, kIndexType));
    }
    Take();  // ']'
    return dims;
  }

  // `name: dtype[dims] (strides=[..] | offset=e | align=n | scope="s")*`
  absl::StatusOr<Buffer> BufferDecl(bool allocate) {
    const Token& at = Peek();
    KILN_ASSIGN_OR_RETURN(std::string name, Ident("a buffer name"));
    if (IsReservedWord(name)) {
      return ErrorAt(at, absl::StrCat("'", name, "' is a keyword and cannot name a buffer"));
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kColon, "':' after the buffer name"));
    KILN_ASSIGN_OR_RETURN(DataType dtype, DType());
    KILN_ASSIGN_OR_RETURN(std::vector<PrimExpr> shape, Dims());
    Ref<BufferNode> b(new BufferNode());
    b->data = MakeVar(name, kHandleType);
    b->name = name;
    b->dtype = dtype;
    b->shape = std::move(shape);
    while (Peek().kind == Tok::kIdent && Peek(1).kind == Tok::kAssign) {
      const Token& opt = Take();
      Take();  // '='
      if (opt.text == "strides") {
        KILN_ASSIGN_OR_RETURN(b->strides, Dims());
      } else if (opt.text == "offset") {
        KILN_ASSIGN_OR_RETURN(PrimExpr off, Expr());
        b->elem_offset = Coerce(off, kIndexType);
      } else if (opt.text == "align") {
        const Token& n = Peek();
        if (n.kind != Tok::kInt) return Unexpected("an alignment in bytes");
        Take();
        int64_t v = 0;
        auto [p, ec] = std::from_chars(n.text.data(), n.text.data() + n.text.size(), v);
        if (ec != std::errc() || v <= 0) return ErrorAt(n, "bad alignment");
        b->data_alignment = v;
      } else if (opt.text == "scope" && !allocate) {
        if (Peek().kind != Tok::kString) return Unexpected("a storage scope string");
        b->scope = Take().text;
      } else {
        return ErrorAt(opt, absl::StrCat("unknown buffer option '", opt.text,
                                         "'; expected strides, offset, align",
                                         allocate ? "" : " or scope"));
      }
    }
    if (allocate) {
      KILN_ASSIGN_OR_RETURN(b->scope, NameOrString("a storage scope (global, local, shared, ...)"));
    }
    Buffer buf = b;
    Declare(name, Symbol{nullptr, buf});
    return buf;
  }

  // ---- Statements -----------------------------------------------------------------------

  absl::StatusOr<Stmt> Block() {
    DepthGuard guard(&depth_);
    KILN_RETURN_IF_ERROR(CheckDepth());
    KILN_RETURN_IF_ERROR(Expect(Tok::kLBrace, "'{'"));
    size_t mark = Mark();
    KILN_ASSIGN_OR_RETURN(Stmt s, Seq());
    PopTo(mark);
    KILN_RETURN_IF_ERROR(Expect(Tok::kRBrace, "'}' or a statement"));
    return s;
  }

  // `let`, `allocate` and `assert` written without braces scope over the rest
  // of the block. They are collected here and wrapped at the end, so a long
  // chain of lets does not recurse.
  struct Open {
    StmtKind kind;
    Var var;
    PrimExpr value;
    Buffer buffer;
    std::string text;  // scope / message
    std::vector<Stmt> before;
  };

  Stmt Wrap(const Open& o, Stmt body) {
    switch (o.kind) {
      case StmtKind::kLetStmt: return LetStmt(o.var, o.value, std::move(body));
      case StmtKind::kAllocate: return Allocate(o.buffer, std::move(body), o.text);
      default: return AssertStmt(o.value, o.text, std::move(body));
    }
  }

  absl::StatusOr<Stmt> Seq() {
    std::vector<Open> open;
    std::vector<Stmt> cur;
    while (Peek().kind != Tok::kRBrace && Peek().kind != Tok::kEof) {
      if (IsIdent("let") || IsIdent("allocate") || (IsIdent("assert") && Peek(1).kind == Tok::kLParen)) {
        size_t mark = Mark();
        KILN_ASSIGN_OR_RETURN(Open o, ScopedHead());
        if (Peek().kind == Tok::kLBrace) {
          KILN_ASSIGN_OR_RETURN(Stmt body, Block());
          PopTo(mark);
          cur.push_back(Wrap(o, std::move(body)));
        } else {
          o.before = std::move(cur);
          cur.clear();
          open.push_back(std::move(o));
        }
        continue;
      }
      KILN_ASSIGN_OR_RETURN(Stmt s, Statement());
      cur.push_back(std::move(s));
    }
    Stmt body = tir::Seq(std::move(cur));
    while (!open.empty()) {
      Open o = std::move(open.back());
      open.pop_back();
      std::vector<Stmt> outer = std::move(o.before);
      outer.push_back(Wrap(o, std::move(body)));
      body = tir::Seq(std::move(outer));
    }
    return body;
  }

  absl::StatusOr<Open> ScopedHead() {
    Open o;
    const Token& kw = Take();
    if (kw.text == "let") {
      o.kind = StmtKind::kLetStmt;
      const Token& at = Peek();
      KILN_ASSIGN_OR_RETURN(std::string name, Ident("a variable name after 'let'"));
      DataType t = kIndexType;
      if (Peek().kind == Tok::kColon) {
        Take();
        KILN_ASSIGN_OR_RETURN(t, DType());
      }
      KILN_RETURN_IF_ERROR(Expect(Tok::kAssign, "'=' in let"));
      KILN_ASSIGN_OR_RETURN(PrimExpr value, Expr());
      o.value = Coerce(value, t);
      KILN_ASSIGN_OR_RETURN(o.var, DeclareVar(at, name, t));
    } else if (kw.text == "allocate") {
      o.kind = StmtKind::kAllocate;
      KILN_ASSIGN_OR_RETURN(o.buffer, BufferDecl(/*allocate=*/true));
      o.text = o.buffer->scope;
    } else {
      o.kind = StmtKind::kAssert;
      KILN_RETURN_IF_ERROR(Expect(Tok::kLParen, "'(' after 'assert'"));
      KILN_ASSIGN_OR_RETURN(o.value, Expr());
      KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "',' and a message"));
      if (Peek().kind != Tok::kString) return Unexpected("an assertion message string");
      o.text = Take().text;
      KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "')'"));
    }
    return o;
  }

  absl::StatusOr<Stmt> Statement() {
    DepthGuard guard(&depth_);
    KILN_RETURN_IF_ERROR(CheckDepth());
    const Token& t = Peek();
    if (t.kind == Tok::kIdent) {
      if (IsLoopKeyword(t.text) && Peek(1).kind == Tok::kLParen) return Loop();
      if (t.text == "if") return If();
      if (t.text == "attr") return Attr();
      if (t.text == "no_op") {
        Take();
        return NoOp();
      }
      if (t.text == "evaluate" && Peek(1).kind == Tok::kLParen) {
        Take();
        Take();
        KILN_ASSIGN_OR_RETURN(PrimExpr e, Expr());
        KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "')'"));
        return Evaluate(e);
      }
      if (t.text == "else") return ErrorAt(t, "'else' without a matching 'if'");
    }
    if (t.kind != Tok::kIdent && t.kind != Tok::kString) return Unexpected("a statement");
    KILN_ASSIGN_OR_RETURN(PrimExpr e, Expr());
    if (Peek().kind == Tok::kAssign) {
      if (e->kind != ExprKind::kLoad) {
        return ErrorAt(t, "only a buffer element (A[i, ...]) can be assigned");
      }
      Take();
      KILN_ASSIGN_OR_RETURN(PrimExpr value, Expr());
      return Store(e->buffer, Coerce(value, e->dtype), e->args);
    }
    return Evaluate(e);
  }

  absl::StatusOr<Stmt> Loop() {
    ForKind kind = LoopKind(Take().text);
    KILN_RETURN_IF_ERROR(Expect(Tok::kLParen, "'('"));
    const Token& at = Peek();
    KILN_ASSIGN_OR_RETURN(std::string name, Ident("a loop variable"));
    DataType t = kIndexType;
    if (Peek().kind == Tok::kColon) {
      Take();
      KILN_ASSIGN_OR_RETURN(t, DType());
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "',' after the loop variable"));
    KILN_ASSIGN_OR_RETURN(PrimExpr min, Expr());
    KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "',' after the loop start"));
    KILN_ASSIGN_OR_RETURN(PrimExpr extent, Expr());
    KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "')' after the loop extent"));
    std::string tag;
    if (Peek().kind == Tok::kString && Peek(1).kind != Tok::kAssign) tag = Take().text;
    std::map<std::string, std::string> annotations;
    while (Peek().kind != Tok::kLBrace) {
      KILN_ASSIGN_OR_RETURN(std::string key, NameOrString("an annotation (key=\"value\") or '{'"));
      KILN_RETURN_IF_ERROR(Expect(Tok::kAssign, "'=' after the annotation key"));
      KILN_ASSIGN_OR_RETURN(annotations[key], AnnotationValue());
    }
    size_t mark = Mark();
    KILN_ASSIGN_OR_RETURN(Var v, DeclareVar(at, name, t));
    KILN_ASSIGN_OR_RETURN(Stmt body, Block());
    PopTo(mark);
    return For(v, Coerce(min, t), Coerce(extent, t), kind, std::move(body), tag,
               std::move(annotations));
  }

  absl::StatusOr<Stmt> If() {
    Take();  // if
    KILN_ASSIGN_OR_RETURN(PrimExpr cond, Expr());
    KILN_ASSIGN_OR_RETURN(Stmt then_case, Block());
    Stmt else_case;
    if (IsIdent("else")) {
      Take();
      if (IsIdent("if")) {
        DepthGuard guard(&depth_);
        KILN_RETURN_IF_ERROR(CheckDepth());
        KILN_ASSIGN_OR_RETURN(else_case, If());
      } else {
        KILN_ASSIGN_OR_RETURN(else_case, Block());
      }
    }
    return IfThenElse(cond, then_case, else_case);
  }

  absl::StatusOr<IterKind> IterKindWord() {
    const Token& t = Peek();
    KILN_ASSIGN_OR_RETURN(std::string w, Ident("an iteration kind"));
    for (IterKind k : {IterKind::kDataPar, IterKind::kReduce, IterKind::kOrdered, IterKind::kOpaque,
                       IterKind::kThread}) {
      if (w == IterKindName(k)) return k;
    }
    return ErrorAt(t, absl::StrCat("unknown iteration kind '", w,
                                   "'; expected data_par, reduce, ordered, opaque or thread"));
  }

  // `attr [subject] "key" = value { body }`; the subject is a buffer, a
  // variable, or `iter_var(v, [min, extent] | none, kind, "tag")` (which
  // declares v for the body when it is not in scope).
  absl::StatusOr<Stmt> Attr() {
    Take();  // attr
    size_t mark = Mark();
    Ref<const Object> node;
    if (IsIdent("iter_var") && Peek(1).kind == Tok::kLParen) {
      Take();
      Take();
      Var v;
      const Symbol* s = Peek().kind == Tok::kIdent && Peek(1).kind != Tok::kColon ? Lookup(Peek().text)
                                                                                   : nullptr;
      if (s != nullptr && s->var) {
        v = s->var;
        Take();
      } else {
        KILN_ASSIGN_OR_RETURN(v, VarDecl());
      }
      KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "','"));
      Range dom;
      if (IsIdent("none")) {
        Take();
      } else {
        KILN_RETURN_IF_ERROR(Expect(Tok::kLBracket, "'[min, extent]' or 'none'"));
        KILN_ASSIGN_OR_RETURN(PrimExpr min, Expr());
        KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "','"));
        KILN_ASSIGN_OR_RETURN(PrimExpr extent, Expr());
        KILN_RETURN_IF_ERROR(Expect(Tok::kRBracket, "']'"));
        dom = Range{Coerce(min, v->dtype), Coerce(extent, v->dtype)};
      }
      KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "','"));
      KILN_ASSIGN_OR_RETURN(IterKind kind, IterKindWord());
      KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "','"));
      if (Peek().kind != Tok::kString) return Unexpected("a thread tag string");
      std::string tag = Take().text;
      KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "')'"));
      node = MakeIterVar(dom, v, kind, tag);
    } else if (Peek().kind == Tok::kIdent) {
      const Token& t = Take();
      const Symbol* s = Lookup(t.text);
      if (s == nullptr) return ErrorAt(t, absl::StrCat("unknown variable or buffer '", t.text, "'"));
      node = s->buffer ? Ref<const Object>(s->buffer) : Ref<const Object>(s->var);
    }
    if (Peek().kind != Tok::kString) return Unexpected("an attribute key string");
    std::string key = Take().text;
    KILN_RETURN_IF_ERROR(Expect(Tok::kAssign, "'=' after the attribute key"));
    KILN_ASSIGN_OR_RETURN(PrimExpr value, Expr());
    KILN_ASSIGN_OR_RETURN(Stmt body, Block());
    PopTo(mark);
    return AttrStmt(node, key, value, std::move(body));
  }

  // ---- Expressions ----------------------------------------------------------------------

  static int Precedence(Tok t) {
    switch (t) {
      case Tok::kOrOr: return 1;
      case Tok::kAndAnd: return 2;
      case Tok::kEQ:
      case Tok::kNE: return 3;
      case Tok::kLT:
      case Tok::kLE:
      case Tok::kGT:
      case Tok::kGE: return 4;
      case Tok::kPlus:
      case Tok::kMinus: return 5;
      case Tok::kStar:
      case Tok::kSlash:
      case Tok::kPercent: return 6;
      default: return 0;
    }
  }
  static ExprKind BinaryKind(Tok t) {
    switch (t) {
      case Tok::kOrOr: return ExprKind::kOr;
      case Tok::kAndAnd: return ExprKind::kAnd;
      case Tok::kEQ: return ExprKind::kEQ;
      case Tok::kNE: return ExprKind::kNE;
      case Tok::kLT: return ExprKind::kLT;
      case Tok::kLE: return ExprKind::kLE;
      case Tok::kGT: return ExprKind::kGT;
      case Tok::kGE: return ExprKind::kGE;
      case Tok::kPlus: return ExprKind::kAdd;
      case Tok::kMinus: return ExprKind::kSub;
      case Tok::kStar: return ExprKind::kMul;
      case Tok::kSlash: return ExprKind::kDiv;
      default: return ExprKind::kMod;
    }
  }

  absl::StatusOr<PrimExpr> Expr() { return Binary(1); }

  // Precedence climbing; all binary operators are left-associative.
  absl::StatusOr<PrimExpr> Binary(int min_prec) {
    DepthGuard guard(&depth_);
    KILN_RETURN_IF_ERROR(CheckDepth());
    KILN_ASSIGN_OR_RETURN(PrimExpr lhs, Unary());
    while (true) {
      int prec = Precedence(Peek().kind);
      if (prec == 0 || prec < min_prec) return lhs;
      ExprKind k = BinaryKind(Take().kind);
      KILN_ASSIGN_OR_RETURN(PrimExpr rhs, Binary(prec + 1));
      lhs = MakeBinary(k, std::move(lhs), std::move(rhs));
    }
  }

  absl::StatusOr<PrimExpr> Unary() {
    if (Peek().kind == Tok::kBang) {
      Take();
      KILN_ASSIGN_OR_RETURN(PrimExpr a, Unary());
      return Not(a);
    }
    if (Peek().kind == Tok::kMinus) {
      Take();
      if (Peek().kind == Tok::kInt || Peek().kind == Tok::kFloat || IsFloatWord(Peek())) {
        return Literal(/*negate=*/true);
      }
      KILN_ASSIGN_OR_RETURN(PrimExpr a, Unary());
      return Sub(MakeConst(a->dtype, 0), a);
    }
    return Primary();
  }

  // inff, nanf, inf_float64, nan_float16, ...
  static bool IsFloatWord(const Token& t) {
    if (t.kind != Tok::kIdent) return false;
    absl::string_view s = t.text;
    return (s.substr(0, 3) == "inf" || s.substr(0, 3) == "nan") && IsReservedWord(s);
  }

  PrimExpr Untyped(PrimExpr e) {
    untyped_.insert(e.get());
    keep_.push_back(e);
    return e;
  }

  absl::StatusOr<PrimExpr> Literal(bool negate) {
    const Token& t = Take();
    if (t.kind == Tok::kIdent) {  // inff / nan_float64
      absl::string_view rest = absl::string_view(t.text).substr(3);
      DataType dt = DataType::Float(32);
      if (rest != "f") {
        absl::StatusOr<DataType> d = DataType::Parse(rest.substr(1));
        if (!d.ok()) return ErrorAt(t, d.status().message());
        dt = *d;
      }
      double v = t.text[0] == 'i' ? std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::quiet_NaN();
      return FloatImm(negate ? -v : v, dt);
    }
    DataType dt;
    bool typed = !t.suffix.empty();
    if (t.suffix == "f") {
      dt = DataType::Float(32);
    } else if (typed) {
      absl::StatusOr<DataType> d = DataType::Parse(t.suffix);
      if (!d.ok()) return ErrorAt(t, d.status().message());
      dt = *d;
    } else {
      dt = t.kind == Tok::kFloat ? DataType::Float(32) : kIndexType;
    }
    if (t.kind == Tok::kFloat || dt.is_float()) {
      double v = std::strtod(t.text.c_str(), nullptr);
      PrimExpr e = FloatImm(negate ? -v : v, dt);
      return typed ? e : Untyped(e);
    }
    uint64_t mag = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), mag);
    const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (negate ? 1 : 0);
    if (ec != std::errc() || (mag > limit && !dt.is_uint())) {
      return ErrorAt(t, absl::StrCat("integer literal ", negate ? "-" : "", t.text, " is out of range"));
    }
    // Two's complement: -2^63 and uint64 values above 2^63 keep their bits.
    int64_t v = static_cast<int64_t>(negate ? ~mag + 1 : mag);
    PrimExpr e = dt.is_bool() ? IntImm(v != 0, dt) : IntImm(v, dt);
    return typed ? e : Untyped(e);
  }

  absl::StatusOr<std::vector<PrimExpr>> Args(Tok close, absl::string_view what) {
    std::vector<PrimExpr> args;
    while (Peek().kind != close) {
      if (!args.empty()) KILN_RETURN_IF_ERROR(Expect(Tok::kComma, absl::StrCat("',' or ", what)));
      KILN_ASSIGN_OR_RETURN(PrimExpr a, Expr());
      args.push_back(std::move(a));
    }
    Take();
    return args;
  }

  absl::StatusOr<int> Lanes() {
    const Token& t = Peek();
    if (t.kind != Tok::kInt || !t.suffix.empty()) return Unexpected("a lane count");
    Take();
    int v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || v < 1 || v > 65535) return ErrorAt(t, "lane count must be in [1, 65535]");
    return v;
  }

  absl::StatusOr<PrimExpr> Primary() {
    const Token& t = Peek();
    switch (t.kind) {
      case Tok::kInt:
      case Tok::kFloat: return Literal(false);
      case Tok::kString:
        if (Peek(1).kind == Tok::kLParen || Peek(1).kind == Tok::kColon) return CallOrBuiltin();
        Take();
        return StringImm(t.text);
      case Tok::kLParen: {
        Take();
        if (IsIdent("let")) return LetExpr();
        KILN_ASSIGN_OR_RETURN(PrimExpr e, Expr());
        KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "')'"));
        return e;
      }
      case Tok::kIdent: break;
      default: return Unexpected("an expression");
    }
    if (t.text == "true" || t.text == "false") {
      Take();
      return BoolImm(t.text == "true");
    }
    if (IsFloatWord(t)) return Literal(false);
    if (Peek(1).kind == Tok::kLParen || Peek(1).kind == Tok::kColon) return CallOrBuiltin();
    if (Peek(1).kind == Tok::kLBracket) return LoadExpr();
    Take();
    if (IsReservedWord(t.text)) return ErrorAt(t, absl::StrCat("expected an expression, found keyword '", t.text, "'"));
    const Symbol* s = Lookup(t.text);
    if (s == nullptr) {
      if (declare_free_vars_) return DeclareVar(t, t.text, kIndexType);
      return ErrorAt(t, absl::StrCat("unknown variable '", t.text, "'"));
    }
    return s->var ? s->var : s->buffer->data;
  }

  absl::StatusOr<PrimExpr> LetExpr() {
    Take();  // let
    const Token& at = Peek();
    KILN_ASSIGN_OR_RETURN(std::string name, Ident("a variable name after 'let'"));
    DataType t = kIndexType;
    if (Peek().kind == Tok::kColon) {
      Take();
      KILN_ASSIGN_OR_RETURN(t, DType());
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kAssign, "'=' in let"));
    KILN_ASSIGN_OR_RETURN(PrimExpr value, Expr());
    if (!IsIdent("in")) return Unexpected("'in'");
    Take();
    size_t mark = Mark();
    KILN_ASSIGN_OR_RETURN(Var v, DeclareVar(at, name, t));
    KILN_ASSIGN_OR_RETURN(PrimExpr body, Expr());
    PopTo(mark);
    KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "')' closing the let expression"));
    return Let(v, Coerce(value, t), body);
  }

  absl::StatusOr<PrimExpr> LoadExpr() {
    const Token& t = Take();
    const Token& open = Take();  // '['
    const Symbol* s = Lookup(t.text);
    if (s == nullptr) return ErrorAt(t, absl::StrCat("unknown buffer '", t.text, "'"));
    if (!s->buffer) return ErrorAt(t, absl::StrCat("'", t.text, "' is a variable, not a buffer"));
    Buffer b = s->buffer;
    KILN_ASSIGN_OR_RETURN(std::vector<PrimExpr> idx, Args(Tok::kRBracket, "']'"));
    if (idx.size() != b->shape.size() && idx.size() != 1) {
      return ErrorAt(open, absl::StrCat("buffer '", t.text, "' has ", b->shape.size(),
                                        " dimensions but ", idx.size(), " indices are given; use ",
                                        b->shape.size(), " indices or 1 flat index"));
    }
    for (PrimExpr& i : idx) i = Coerce(i, kIndexType);
    return Load(b, std::move(idx));
  }

  // name[:dtype][:effect](args): min, max, floordiv, floormod, select, ramp,
  // broadcast, casts (`float32(x)`), intrinsics and extern calls.
  absl::StatusOr<PrimExpr> CallOrBuiltin() {
    const Token& t = Take();
    std::string name = t.text;
    bool quoted = t.kind == Tok::kString;
    DataType dtype;
    bool has_type = false;
    bool has_effect = false;
    CallEffect effect = DefaultCallEffect(name);
    while (Peek().kind == Tok::kColon) {
      Take();
      if (IsIdent("pure") || IsIdent("read_state") || IsIdent("opaque")) {
        std::string w = Take().text;
        effect = w == "pure" ? CallEffect::kPure
                             : (w == "read_state" ? CallEffect::kReadState : CallEffect::kOpaque);
        has_effect = true;
      } else {
        KILN_ASSIGN_OR_RETURN(dtype, DType());
        has_type = true;
      }
    }
    const Token& open = Peek();
    KILN_RETURN_IF_ERROR(Expect(Tok::kLParen, "'('"));
    bool plain = !quoted && !has_type && !has_effect;
    auto arity = [&](size_t want, size_t got) -> absl::Status {
      if (want == got) return absl::OkStatus();
      return ErrorAt(t, absl::StrCat("'", name, "' takes ", want, " arguments, got ", got));
    };
    if (plain && (name == "ramp" || name == "broadcast")) {
      std::vector<PrimExpr> args;
      size_t n = name == "ramp" ? 2 : 1;
      for (size_t i = 0; i < n; ++i) {
        KILN_ASSIGN_OR_RETURN(PrimExpr a, Expr());
        args.push_back(std::move(a));
        KILN_RETURN_IF_ERROR(Expect(Tok::kComma, "','"));
      }
      KILN_ASSIGN_OR_RETURN(int lanes, Lanes());
      KILN_RETURN_IF_ERROR(Expect(Tok::kRParen, "')'"));
      if (n == 2) return Ramp(args[0], Coerce(args[1], args[0]->dtype), lanes);
      return Broadcast(args[0], lanes);
    }
    KILN_ASSIGN_OR_RETURN(std::vector<PrimExpr> args, Args(Tok::kRParen, "')'"));
    if (plain) {
      static const std::pair<const char*, ExprKind> kBinary[] = {
          {"min", ExprKind::kMin},
          {"max", ExprKind::kMax},
          {"floordiv", ExprKind::kFloorDiv},
          {"floormod", ExprKind::kFloorMod}};
      for (const auto& [n, k] : kBinary) {
        if (name != n) continue;
        KILN_RETURN_IF_ERROR(arity(2, args.size()));
        return MakeBinary(k, args[0], args[1]);
      }
      if (name == "select") {
        KILN_RETURN_IF_ERROR(arity(3, args.size()));
        CoercePair(&args[1], &args[2]);
        return Select(args[0], args[1], args[2]);
      }
      if (name == "handle" || DataType::Parse(name).ok()) {
        KILN_RETURN_IF_ERROR(arity(1, args.size()));
        DataType to = name == "handle" ? kHandleType : *DataType::Parse(name);
        return Cast(to, args[0]);
      }
    }
    if (!has_type && !InferCallType(name, args, &dtype)) {
      return ErrorAt(open, absl::StrCat("the result type of call '", name,
                                        "' cannot be inferred; write ", name, ":<dtype>(...)"));
    }
    if (name == "if_then_else" && args.size() == 3) CoercePair(&args[1], &args[2]);
    return Call(dtype, name, std::move(args), effect);
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::string file_;
  int depth_ = 0;
  bool declare_free_vars_ = false;
  std::unordered_map<std::string, std::vector<Symbol>> table_;
  std::vector<std::string> stack_;
  std::unordered_set<const ExprNode*> untyped_;
  std::vector<PrimExpr> keep_;  // keeps untyped literals alive (their addresses are keys)
};

}  // namespace

absl::StatusOr<std::vector<PrimFunc>> ParsePrimFuncs(absl::string_view text,
                                                     absl::string_view filename) {
  KILN_ASSIGN_OR_RETURN(std::vector<Token> toks, internal::Tokenize(text, filename));
  Parser p(std::move(toks), filename);
  return p.Funcs();
}

absl::StatusOr<PrimFunc> ParsePrimFunc(absl::string_view text, absl::string_view filename) {
  KILN_ASSIGN_OR_RETURN(std::vector<PrimFunc> fs, ParsePrimFuncs(text, filename));
  if (fs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(filename, ": expected exactly one primfunc, found ",
                                                   fs.size()));
  }
  return fs[0];
}

absl::StatusOr<PrimExpr> ParsePrimExpr(absl::string_view text, const std::vector<Var>& vars,
                                       const std::vector<Buffer>& buffers,
                                       absl::string_view filename) {
  KILN_ASSIGN_OR_RETURN(std::vector<Token> toks, internal::Tokenize(text, filename));
  Parser p(std::move(toks), filename);
  return p.SingleExpr(vars, buffers);
}

}  // namespace kiln::tir
