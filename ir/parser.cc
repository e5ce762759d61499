// The .kir parser: a recursive-descent parser over the token vector of
// ir/lexer.h. Module parsing is two passes: the first finds every `def @f`,
// `type T` and the `#[metadata]` section (so bodies can refer to any of them in
// any order); the second parses type definitions, then functions in order.
#include "ir/parser.h"

#include <chrono>
#include <unordered_set>

#include "ir/parser_internal.h"

namespace kiln {
namespace parser_internal {


// ---- Module structure -------------------------------------------------------

absl::Status Parser::ParseHeader() {
  if (Is(Tok::kHashBracket) && IsWord("version", 1)) {
    Next();
    Next();
    KILN_RETURN_IF_ERROR(Expect(Tok::kEq));
    if (!Is(Tok::kString)) return Unexpected("a version string");
    Next();
    KILN_RETURN_IF_ERROR(Expect(Tok::kRBracket));
  }
  return absl::OkStatus();
}

absl::Status Parser::ScanTopLevel() {
  int depth = 0;
  absl::flat_hash_map<std::string, const Token*> seen_defs, seen_types;
  for (size_t i = pos_; i < toks_.size(); ++i) {
    const Token& t = toks_[i];
    switch (t.kind) {
      case Tok::kLParen:
      case Tok::kLBracket:
      case Tok::kLBrace:
      case Tok::kHashBracket: ++depth; break;
      case Tok::kRParen:
      case Tok::kRBracket:
      case Tok::kRBrace: --depth; break;
      default: break;
    }
    if (depth != 0 || t.kind != Tok::kIdent) {
      if (depth == 1 && t.kind == Tok::kHashBracket && i + 2 < toks_.size() &&
          toks_[i + 1].kind == Tok::kIdent && toks_[i + 1].text == "metadata" &&
          !metadata_start_) {
        metadata_start_ = i;
        break;
      }
      continue;
    }
    const Token& n = i + 1 < toks_.size() ? toks_[i + 1] : toks_.back();
    if (t.text == "def" && n.kind == Tok::kGlobal && module_mode_) {
      auto [it, inserted] = seen_defs.emplace(n.text, &n);
      if (!inserted)
        return ErrorAt(n, absl::StrCat("duplicate definition of @", n.text, " (first defined at ",
                                       it->second->line, ":", it->second->column, ")"));
      auto gv = module_.DeclareFunction(n.text);
      if (!gv.ok()) return At(n, gv.status());
    } else if (t.text == "type" && n.kind == Tok::kIdent && module_mode_) {
      auto [it, inserted] = seen_types.emplace(n.text, &n);
      if (!inserted)
        return ErrorAt(n, absl::StrCat("duplicate definition of type ", n.text,
                                       " (first defined at ", it->second->line, ":",
                                       it->second->column, ")"));
      adts_[n.text] = MakeGlobalTypeVar(n.text);
      typedef_starts_.push_back(i);
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseMetadata() {
  if (!metadata_start_) return absl::OkStatus();
  size_t saved = pos_;
  pos_ = *metadata_start_;
  Next();  // #[
  Next();  // metadata
  KILN_RETURN_IF_ERROR(Expect(Tok::kRBracket));
  while (!Is(Tok::kEof)) {
    const Token& at = Peek();
    KILN_RETURN_IF_ERROR(ExpectWord("meta"));
    KILN_RETURN_IF_ERROR(Expect(Tok::kLBracket));
    KILN_RETURN_IF_ERROR(ExpectWord("Constant"));
    KILN_RETURN_IF_ERROR(Expect(Tok::kRBracket));
    KILN_RETURN_IF_ERROR(Expect(Tok::kLBracket));
    int64_t index = 0;
    if (!Is(Tok::kInt) || !Peek().suffix.empty() || !absl::SimpleAtoi(Peek().text, &index) ||
        index < 0)
      return Unexpected("a constant index");
    Next();
    KILN_RETURN_IF_ERROR(Expect(Tok::kRBracket));
    KILN_RETURN_IF_ERROR(Expect(Tok::kEq));
    const Token& type_tok = Peek();
    KILN_ASSIGN_OR_RETURN(Type ty, ParseType());
    const auto* tt = ty.as<TensorTypeNode>();
    std::optional<std::vector<int64_t>> shape;
    if (tt) shape = StaticShape(tt->shape);
    if (!shape)
      return ErrorAt(type_tok, absl::StrCat("a metadata constant needs a tensor type with a "
                                            "static shape, got ",
                                            TypeToString(ty)));
    KILN_RETURN_IF_ERROR(ExpectWord("b64"));
    if (!Is(Tok::kString)) return Unexpected("a base64 string");
    const Token& data_tok = Next();
    std::string bytes;
    if (!absl::Base64Unescape(data_tok.text, &bytes))
      return ErrorAt(data_tok, "invalid base64 data");
    auto tensor = HostTensor::FromBytes(tt->dtype, *shape, bytes.data(), bytes.size());
    if (!tensor.ok())
      return ErrorAt(data_tok, absl::StrCat("meta[Constant][", index, "]: ",
                                            tensor.status().message()));
    KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(Ref<const HostTensor>(*std::move(tensor))));
    c = WithSpan(c, SpanOf(at));
    if (!meta_.emplace(index, c).second)
      return ErrorAt(at, absl::StrCat("duplicate metadata entry meta[Constant][", index, "]"));
    KILN_RETURN_IF_ERROR(Expect(Tok::kSemi));
  }
  metadata_seen_ = true;
  pos_ = saved;
  return absl::OkStatus();
}

absl::Status Parser::ParseTypeDef() {
  size_t start = pos_;
  KILN_RETURN_IF_ERROR(ExpectWord("type"));
  const std::string name = Next().text;
  GlobalTypeVar header = adts_.at(name);
  size_t tmark = TypeMark();
  std::vector<TypeVar> vars;
  if (Is(Tok::kLBracket)) {
    Next();
    while (true) {
      if (!Is(Tok::kIdent)) return Unexpected("a type parameter name");
      TypeVar tv = MakeTypeVar(Next().text);
      vars.push_back(tv);
      BindTypeParam(tv);
      if (Is(Tok::kComma)) {
        Next();
        continue;
      }
      KILN_RETURN_IF_ERROR(Expect(Tok::kRBracket));
      break;
    }
  }
  KILN_RETURN_IF_ERROR(Expect(Tok::kLBrace));
  std::vector<Constructor> ctors;
  while (!Is(Tok::kRBrace)) {
    if (!Is(Tok::kIdent)) return Unexpected("a constructor name or '}'");
    const Token& ct = Next();
    std::vector<Type> inputs;
    if (Is(Tok::kLParen)) {
      Next();
      while (!Is(Tok::kRParen)) {
        KILN_ASSIGN_OR_RETURN(Type t, ParseType());
        inputs.push_back(std::move(t));
        if (Is(Tok::kComma)) {
          Next();
        } else if (!Is(Tok::kRParen)) {
          return Unexpected("',' or ')'");
        }
      }
      Next();
    }
    auto c = MakeConstructor(ct.text, std::move(inputs), header, static_cast<int32_t>(ctors.size()));
    if (!c.ok()) return At(ct, c.status());
    ctors.push_back(WithSpan(*c, SpanOf(ct)));
    if (Is(Tok::kComma)) {
      Next();
    } else if (!Is(Tok::kRBrace)) {
      return Unexpected("',' or '}'");
    }
  }
  Next();
  TypeRestore(tmark);
  auto td = MakeTypeData(header, std::move(vars), std::move(ctors));
  if (!td.ok()) return At(toks_[start], td.status());
  if (auto s = module_.AddTypeDef(*td); !s.ok()) return At(toks_[start + 1], s);
  typedef_end_[start] = pos_;
  return absl::OkStatus();
}

absl::Status Parser::ParseDef() {
  const Token& def_tok = Next();  // def
  if (!Is(Tok::kGlobal)) return Unexpected("a global name like @main");
  const Token& name = Next();
  KILN_ASSIGN_OR_RETURN(Function f, ParseFunctionRest(def_tok));
  KILN_ASSIGN_OR_RETURN(GlobalVar gv, module_.GetGlobalVar(name.text));
  if (auto s = module_.Add(gv, f); !s.ok()) return At(name, s);
  return absl::OkStatus();
}

absl::StatusOr<Module> Parser::ParseModuleText() {
  module_mode_ = true;
  KILN_RETURN_IF_ERROR(ParseHeader());
  KILN_RETURN_IF_ERROR(ScanTopLevel());
  KILN_RETURN_IF_ERROR(ParseMetadata());
  size_t saved = pos_;
  for (size_t start : typedef_starts_) {
    pos_ = start;
    KILN_RETURN_IF_ERROR(ParseTypeDef());
  }
  pos_ = saved;
  while (true) {
    if (Is(Tok::kEof)) break;
    if (metadata_start_ && pos_ == *metadata_start_) break;
    if (IsWord("def")) {
      KILN_RETURN_IF_ERROR(ParseDef());
    } else if (IsWord("type") && typedef_end_.contains(pos_)) {
      pos_ = typedef_end_[pos_];
    } else {
      return Unexpected("'def', 'type' or '#[metadata]'");
    }
  }
  return std::move(module_);
}

absl::StatusOr<Expr> Parser::ParseExprText(const std::vector<Var>& free_vars) {
  KILN_RETURN_IF_ERROR(ScanTopLevel());
  KILN_RETURN_IF_ERROR(ParseMetadata());
  for (const Var& v : free_vars)
    if (v) BindLocal(v->name_hint, v);
  KILN_ASSIGN_OR_RETURN(Expr e, ParseBlock(Tok::kEof));
  if (!(Is(Tok::kEof) || (metadata_start_ && pos_ == *metadata_start_)))
    return Unexpected("end of input");
  return e;
}

absl::StatusOr<Type> Parser::ParseTypeText() {
  KILN_ASSIGN_OR_RETURN(Type t, ParseType());
  if (!Is(Tok::kEof)) return Unexpected("end of input");
  return t;
}

// ---- Types ------------------------------------------------------------------

absl::StatusOr<Var> Parser::ParseVarDecl() {
  if (!Is(Tok::kLocal)) return Unexpected("a variable like %x");
  const Token& t = Next();
  Type ty;
  if (Is(Tok::kColon)) {
    Next();
    KILN_ASSIGN_OR_RETURN(ty, ParseType());
  }
  return WithSpan(MakeVar(t.text, std::move(ty)), SpanOf(t));
}

absl::StatusOr<Expr> Parser::ParseBlock(Tok end) {
  struct LetStmt {
    Var var;
    Expr value;
    Span span;
  };
  std::vector<LetStmt> lets;
  size_t mark = LocalMark();
  Expr result;
  while (true) {
    if (IsWord("let")) {
      const Token& let_tok = Next();
      KILN_ASSIGN_OR_RETURN(Var v, ParseVarDecl());
      KILN_RETURN_IF_ERROR(Expect(Tok::kEq));
      // A let-bound function may call itself: its variable is in scope in
      // its value. Any other value sees the variables bound before the
      // `let` (`let %x = add(%x, 1)` reads an outer %x): a value that used
      // itself could not be printed back (the printer hoists its parts
      // above the `let`), and means nothing but a cycle.
      bool recursive = IsWord("fn");
      if (recursive) BindLocal(v->name_hint, v);
      KILN_ASSIGN_OR_RETURN(Expr value, ParseExpr());
      KILN_RETURN_IF_ERROR(Expect(Tok::kSemi));
      if (!recursive) BindLocal(v->name_hint, v);
      lets.push_back({std::move(v), std::move(value), SpanOf(let_tok)});
      continue;
    }
    if (Is(Tok::kLocal) && Is(Tok::kEq, 1)) {
      const std::string& name = Next().text;
      Next();
      KILN_ASSIGN_OR_RETURN(Expr value, ParseExpr());
      KILN_RETURN_IF_ERROR(Expect(Tok::kSemi));
      BindLocal(name, std::move(value));
      continue;
    }
    if (Is(end) || (end == Tok::kEof && metadata_start_ && pos_ == *metadata_start_))
      return Unexpected("an expression");
    KILN_ASSIGN_OR_RETURN(result, ParseExpr());
    break;
  }
  LocalRestore(mark);
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
    auto l = MakeLet(std::move(it->var), std::move(it->value), std::move(result));
    if (!l.ok()) return l.status();
    result = WithSpan(*l, it->span);
  }
  return result;
}

absl::StatusOr<Expr> Parser::ParseExpr() {
  DepthGuard guard(&depth_);
  KILN_RETURN_IF_ERROR(CheckDepth());
  const Token& start = Peek();
  KILN_ASSIGN_OR_RETURN(Expr e, ParsePrimary());
  while (true) {
    if (Is(Tok::kDot)) {
      Next();
      const Token& idx = Peek();
      int64_t i = 0;
      if (!Is(Tok::kInt) || !absl::SimpleAtoi(idx.text, &i) || i < 0 || i > (1 << 30))
        return Unexpected("a tuple index");
      Next();
      auto g = MakeTupleGetItem(std::move(e), static_cast<int>(i));
      if (!g.ok()) return At(idx, g.status());
      e = WithSpan(*g, SpanOf(start));
    } else if (Is(Tok::kLParen)) {
      KILN_ASSIGN_OR_RETURN(e, ParseCall(std::move(e), start, {}));
    } else if (Is(Tok::kLAngle)) {
      Next();
      std::vector<Type> targs;
      while (!Is(Tok::kRAngle)) {
        KILN_ASSIGN_OR_RETURN(Type t, ParseType());
        targs.push_back(std::move(t));
        if (Is(Tok::kComma)) {
          Next();
        } else if (!Is(Tok::kRAngle)) {
          return Unexpected("',' or '>'");
        }
      }
      Next();
      if (!Is(Tok::kLParen)) return Unexpected("'(' after type arguments");
      KILN_ASSIGN_OR_RETURN(e, ParseCall(std::move(e), start, std::move(targs)));
    } else {
      return e;
    }
  }
}

absl::StatusOr<Expr> Parser::ParseCall(Expr callee, const Token& at, std::vector<Type> type_args) {
  KILN_RETURN_IF_ERROR(Expect(Tok::kLParen));
  std::vector<Expr> args;
  std::vector<std::pair<const Token*, AttrValue>> attrs;
  while (!Is(Tok::kRParen)) {
    if (Is(Tok::kIdent) && Is(Tok::kEq, 1)) {
      const Token* key = &Next();
      Next();
      for (const auto& [k, v] : attrs)
        if (k->text == key->text)
          return ErrorAt(*key, absl::StrCat("attribute '", key->text, "' is given twice"));
      KILN_ASSIGN_OR_RETURN(AttrValue v, ParseAttrValue());
      attrs.emplace_back(key, std::move(v));
    } else {
      if (!attrs.empty()) return Unexpected("an attribute 'name=value' (arguments come first)");
      KILN_ASSIGN_OR_RETURN(Expr a, ParseExpr());
      args.push_back(std::move(a));
    }
    if (Is(Tok::kComma)) {
      Next();
    } else if (!Is(Tok::kRParen)) {
      return Unexpected("',' or ')'");
    }
  }
  Next();
  Attrs call_attrs;
  if (!attrs.empty()) {
    if (const auto* op = callee.as<OpNode>()) {
      if (!op->def->default_attrs)
        return ErrorAt(*attrs[0].first, absl::StrCat("operator ", op->name(),
                                                     " takes no attributes, got '",
                                                     attrs[0].first->text, "'"));
      Ref<AttrsNode> a = op->def->default_attrs->Clone();
      for (const auto& [k, v] : attrs) {
        if (auto s = SetAttrField(a.get(), k->text, v); !s.ok())
          return ErrorAt(*k, absl::StrCat(op->name(), ": ", s.message()));
      }
      call_attrs = a;
    } else {
      std::map<std::string, AttrValue> dict;
      for (const auto& [k, v] : attrs) dict[k->text] = v;
      call_attrs = MakeDictAttrs(std::move(dict));
    }
  }
  auto c = MakeCall(std::move(callee), std::move(args), std::move(call_attrs), std::move(type_args));
  if (!c.ok()) return At(at, c.status());
  return Expr(WithSpan(*c, SpanOf(at)));
}

absl::StatusOr<AttrValue> Parser::ParseAttrValue() {
  DepthGuard guard(&depth_);
  KILN_RETURN_IF_ERROR(CheckDepth());
  const Token& t = Peek();
  switch (t.kind) {
    case Tok::kInt: {
      int64_t v = 0;
      if (!t.suffix.empty() || !absl::SimpleAtoi(t.text, &v))
        return ErrorAt(t, absl::StrCat("integer attribute value ", t.text, t.suffix,
                                       " is out of range or has a suffix"));
      Next();
      return AttrValue::Int(v);
    }
    case Tok::kFloat: {
      if (!t.suffix.empty() && t.suffix != "f")
        return ErrorAt(t, absl::StrCat("float attribute value ", t.text, t.suffix,
                                       " has an unexpected suffix"));
      Next();
      return AttrValue::Float(std::strtod(t.text.c_str(), nullptr));
    }
    case Tok::kString: Next(); return AttrValue::String(t.text);
    case Tok::kMinus:
      if (IsWord("inf", 1)) {
        Next();
        Next();
        return AttrValue::Float(-INFINITY);
      }
      return Unexpected("an attribute value");
    case Tok::kLBracket: {
      Next();
      std::vector<AttrValue> list;
      while (!Is(Tok::kRBracket)) {
        KILN_ASSIGN_OR_RETURN(AttrValue v, ParseAttrValue());
        list.push_back(std::move(v));
        if (Is(Tok::kComma)) {
          Next();
        } else if (!Is(Tok::kRBracket)) {
          return Unexpected("',' or ']'");
        }
      }
      Next();
      return AttrValue::List(std::move(list));
    }
    case Tok::kIdent:
      Next();
      if (t.text == "true") return AttrValue::Bool(true);
      if (t.text == "false") return AttrValue::Bool(false);
      if (t.text == "none") return AttrValue::None();
      if (t.text == "inf") return AttrValue::Float(INFINITY);
      if (t.text == "nan") return AttrValue::Float(NAN);
      return AttrValue::String(t.text);  // a bare word such as float32
    default: return Unexpected("an attribute value");
  }
}

absl::StatusOr<Expr> Parser::ParseScalar() {
  const Token& t = Next();
  DataType dt;
  alignas(8) unsigned char buf[8] = {0};
  const std::string& s = t.suffix;
  if (t.kind == Tok::kInt && (s.empty() || s[0] == 'i' || s[0] == 'u')) {
    const bool is_unsigned = !s.empty() && s[0] == 'u';
    int bits = 32;
    if (s.size() > 1 && !absl::SimpleAtoi(s.substr(1), &bits)) bits = -1;
    if (s.size() == 1 || (bits != 8 && bits != 16 && bits != 32 && bits != 64))
      return ErrorAt(t, absl::StrCat("unknown integer suffix '", s,
                                     "'; expected i8, i16, i32, i64, u8, u16, u32 or u64"));
    dt = is_unsigned ? DataType::UInt(bits) : DataType::Int(bits);
    bool ok;
    if (is_unsigned) {
      uint64_t v = 0;
      ok = absl::SimpleAtoi(t.text, &v) && (bits == 64 || v < (uint64_t{1} << bits));
      std::memcpy(buf, &v, 8);
    } else {
      int64_t v = 0;
      ok = absl::SimpleAtoi(t.text, &v) &&
           (bits == 64 || (v >= -(int64_t{1} << (bits - 1)) && v < (int64_t{1} << (bits - 1))));
      std::memcpy(buf, &v, 8);  // little-endian: the low bytes are the narrow value
    }
    if (!ok)
      return ErrorAt(t, absl::StrCat("integer constant ", t.text, " does not fit in ",
                                     dt.ToString()));
  } else {
    if (!(s.empty() || s == "f" || s == "f16" || s == "f32" || s == "f64"))
      return ErrorAt(t, absl::StrCat("unknown float suffix '", s, "'; expected f, f16, f32 or f64"));
    errno = 0;
    if (s == "f64") {
      dt = DataType::Float(64);
      double v = std::strtod(t.text.c_str(), nullptr);
      std::memcpy(buf, &v, 8);
    } else if (s == "f16") {
      dt = DataType::Float(16);
      uint16_t v = FloatToHalf(std::strtof(t.text.c_str(), nullptr));
      std::memcpy(buf, &v, 2);
    } else {
      dt = DataType::Float(32);
      float v = std::strtof(t.text.c_str(), nullptr);
      std::memcpy(buf, &v, 4);
    }
  }
  auto tensor = HostTensor::FromBytes(dt, {}, buf, static_cast<size_t>(dt.bytes()));
  if (!tensor.ok()) return At(t, tensor.status());
  KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(Ref<const HostTensor>(*std::move(tensor))));
  return Expr(WithSpan(c, SpanOf(t)));
}

absl::StatusOr<Expr> Parser::ParseMetaRef() {
  const Token& t = Next();  // meta
  KILN_RETURN_IF_ERROR(Expect(Tok::kLBracket));
  KILN_RETURN_IF_ERROR(ExpectWord("Constant"));
  KILN_RETURN_IF_ERROR(Expect(Tok::kRBracket));
  KILN_RETURN_IF_ERROR(Expect(Tok::kLBracket));
  int64_t index = 0;
  if (!Is(Tok::kInt) || !absl::SimpleAtoi(Peek().text, &index)) return Unexpected("a constant index");
  Next();
  KILN_RETURN_IF_ERROR(Expect(Tok::kRBracket));
  auto it = meta_.find(index);
  if (it == meta_.end()) {
    if (!metadata_seen_)
      return ErrorAt(t, absl::StrCat("missing meta entry meta[Constant][", index,
                                     "]: the text has no #[metadata] section (was it printed "
                                     "with emit_metadata=false?)"));
    return ErrorAt(t, absl::StrCat("missing meta entry meta[Constant][", index,
                                   "]: the #[metadata] section does not define it"));
  }
  return Expr(it->second);
}

absl::StatusOr<Function> Parser::ParseFunctionRest(const Token& at) {
  size_t tmark = TypeMark();
  size_t lmark = LocalMark();
  KILN_ASSIGN_OR_RETURN(std::vector<TypeVar> tps, ParseTypeParams());
  KILN_RETURN_IF_ERROR(Expect(Tok::kLParen));
  std::vector<Var> params;
  std::unordered_set<std::string> param_names;  // one look-up per parameter
  std::map<std::string, AttrValue> fattrs;
  while (!Is(Tok::kRParen)) {
    if (Is(Tok::kIdent) && Is(Tok::kEq, 1)) {
      const Token& key = Next();
      Next();
      KILN_ASSIGN_OR_RETURN(AttrValue v, ParseAttrValue());
      if (!fattrs.emplace(key.text, std::move(v)).second)
        return ErrorAt(key, absl::StrCat("function attribute '", key.text, "' is given twice"));
    } else {
      if (!fattrs.empty()) return Unexpected("an attribute 'name=value' (parameters come first)");
      KILN_ASSIGN_OR_RETURN(Var p, ParseVarDecl());
      if (!param_names.insert(p->name_hint).second)
        return ErrorAt(Peek(), absl::StrCat("parameter %", p->name_hint, " appears twice"));
      params.push_back(p);
    }
    if (Is(Tok::kComma)) {
      Next();
    } else if (!Is(Tok::kRParen)) {
      return Unexpected("',' or ')'");
    }
  }
  Next();
  Type ret;
  if (Is(Tok::kArrow)) {
    Next();
    KILN_ASSIGN_OR_RETURN(ret, ParseType());
  }
  for (const Var& p : params) BindLocal(p->name_hint, p);
  KILN_RETURN_IF_ERROR(Expect(Tok::kLBrace));
  KILN_ASSIGN_OR_RETURN(Expr body, ParseBlock(Tok::kRBrace));
  KILN_RETURN_IF_ERROR(Expect(Tok::kRBrace));
  LocalRestore(lmark);
  TypeRestore(tmark);
  DictAttrs attrs;
  if (!fattrs.empty()) attrs = MakeDictAttrs(std::move(fattrs));
  auto f = MakeFunction(std::move(params), std::move(body), std::move(ret), std::move(tps),
                        std::move(attrs));
  if (!f.ok()) return At(at, f.status());
  return WithSpan(*f, SpanOf(at));
}

absl::StatusOr<Expr> Parser::ParseIf() {
  const Token& t = Next();  // if
  KILN_RETURN_IF_ERROR(Expect(Tok::kLParen));
  KILN_ASSIGN_OR_RETURN(Expr cond, ParseExpr());
  KILN_RETURN_IF_ERROR(Expect(Tok::kRParen));
  KILN_RETURN_IF_ERROR(Expect(Tok::kLBrace));
  KILN_ASSIGN_OR_RETURN(Expr then_e, ParseBlock(Tok::kRBrace));
  KILN_RETURN_IF_ERROR(Expect(Tok::kRBrace));
  KILN_RETURN_IF_ERROR(ExpectWord("else"));
  KILN_RETURN_IF_ERROR(Expect(Tok::kLBrace));
  KILN_ASSIGN_OR_RETURN(Expr else_e, ParseBlock(Tok::kRBrace));
  KILN_RETURN_IF_ERROR(Expect(Tok::kRBrace));
  auto i = MakeIf(std::move(cond), std::move(then_e), std::move(else_e));
  if (!i.ok()) return At(t, i.status());
  return Expr(WithSpan(*i, SpanOf(t)));
}

absl::StatusOr<Pattern> Parser::ParsePattern() {
  DepthGuard guard(&depth_);
  KILN_RETURN_IF_ERROR(CheckDepth());
  const Token& t = Peek();
  if (IsWord("_")) {
    Next();
    return MakePatternWildcard();
  }
  if (t.kind == Tok::kLocal) {
    KILN_ASSIGN_OR_RETURN(Var v, ParseVarDecl());
    return MakePatternVar(std::move(v));
  }
  auto sub_patterns = [&](Tok close) -> absl::StatusOr<std::pair<std::vector<Pattern>, bool>> {
    std::vector<Pattern> subs;
    bool comma = false;
    while (!Is(close)) {
      KILN_ASSIGN_OR_RETURN(Pattern p, ParsePattern());
      subs.push_back(std::move(p));
      if (Is(Tok::kComma)) {
        Next();
        comma = true;
      } else if (!Is(close)) {
        return Unexpected("',' or ')'");
      }
    }
    Next();
    return std::make_pair(std::move(subs), comma);
  };
  if (t.kind == Tok::kLParen) {
    Next();
    KILN_ASSIGN_OR_RETURN(auto subs, sub_patterns(Tok::kRParen));
    if (subs.first.size() == 1 && !subs.second) return subs.first[0];
    auto p = MakePatternTuple(std::move(subs.first));
    if (!p.ok()) return At(t, p.status());
    return *p;
  }
  if (t.kind == Tok::kIdent) {
    if (!module_mode_)
      return ErrorAt(t, absl::StrCat("unknown constructor '", t.text, "'"));
    auto c = module_.LookupConstructor(t.text);
    if (!c.ok()) return ErrorAt(t, absl::StrCat("unknown constructor '", t.text, "' in pattern"));
    Next();
    std::vector<Pattern> subs;
    if (Is(Tok::kLParen)) {
      Next();
      KILN_ASSIGN_OR_RETURN(auto s, sub_patterns(Tok::kRParen));
      subs = std::move(s.first);
    }
    auto p = MakePatternConstructor(*c, std::move(subs));
    if (!p.ok()) return At(t, p.status());
    return *p;
  }
  return Unexpected("a pattern");
}

absl::StatusOr<Expr> Parser::ParseMatch() {
  const Token& t = Next();  // match
  bool complete = true;
  if (Is(Tok::kQuestion)) {
    Next();
    complete = false;
  }
  KILN_RETURN_IF_ERROR(Expect(Tok::kLParen));
  KILN_ASSIGN_OR_RETURN(Expr data, ParseExpr());
  KILN_RETURN_IF_ERROR(Expect(Tok::kRParen));
  KILN_RETURN_IF_ERROR(Expect(Tok::kLBrace));
  std::vector<Clause> clauses;
  while (!Is(Tok::kRBrace)) {
    KILN_ASSIGN_OR_RETURN(Pattern p, ParsePattern());
    KILN_RETURN_IF_ERROR(Expect(Tok::kFatArrow));
    size_t mark = LocalMark();
    for (const Var& v : PatternVars(p)) BindLocal(v->name_hint, v);
    KILN_ASSIGN_OR_RETURN(Expr rhs, ParseExpr());
    LocalRestore(mark);
    clauses.push_back({std::move(p), std::move(rhs)});
    if (Is(Tok::kComma)) {
      Next();
    } else if (!Is(Tok::kRBrace)) {
      return Unexpected("',' or '}'");
    }
  }
  Next();
  auto m = MakeMatch(std::move(data), std::move(clauses), complete);
  if (!m.ok()) return At(t, m.status());
  return Expr(WithSpan(*m, SpanOf(t)));
}

absl::StatusOr<Expr> Parser::ParsePrimary() {
  const Token& t = Peek();
  switch (t.kind) {
    case Tok::kLocal: {
      auto it = locals_.find(t.text);
      if (it == locals_.end()) return ErrorAt(t, absl::StrCat("undefined variable %", t.text));
      Next();
      return it->second.back();
    }
    case Tok::kGlobal: {
      if (module_mode_) {
        auto gv = module_.GetGlobalVar(t.text);
        if (!gv.ok()) return ErrorAt(t, absl::StrCat("undefined global function @", t.text));
        Next();
        return Expr(*gv);
      }
      auto& gv = free_globals_[t.text];
      if (!gv) {
        auto made = MakeGlobalVar(t.text);
        if (!made.ok()) return At(t, made.status());
        gv = *made;
      }
      Next();
      return Expr(gv);
    }
    case Tok::kInt:
    case Tok::kFloat: return ParseScalar();
    case Tok::kLParen: {
      Next();
      std::vector<Expr> fields;
      bool comma = false;
      while (!Is(Tok::kRParen)) {
        KILN_ASSIGN_OR_RETURN(Expr f, ParseExpr());
        fields.push_back(std::move(f));
        if (Is(Tok::kComma)) {
          Next();
          comma = true;
        } else if (!Is(Tok::kRParen)) {
          return Unexpected("',' or ')'");
        }
      }
      Next();
      if (fields.size() == 1 && !comma) return fields[0];
      auto tup = MakeTuple(std::move(fields));
      if (!tup.ok()) return At(t, tup.status());
      return Expr(WithSpan(*tup, SpanOf(t)));
    }
    case Tok::kLBrace: {
      Next();
      KILN_ASSIGN_OR_RETURN(Expr e, ParseBlock(Tok::kRBrace));
      KILN_RETURN_IF_ERROR(Expect(Tok::kRBrace));
      return e;
    }
    case Tok::kIdent: break;
    default: return Unexpected("an expression");
  }
  const std::string& w = t.text;
  if (w == "fn") {
    Next();
    KILN_ASSIGN_OR_RETURN(Function f, ParseFunctionRest(t));
    return Expr(f);
  }
  if (w == "if") return ParseIf();
  if (w == "match") return ParseMatch();
  if (w == "meta") return ParseMetaRef();
  if (w == "true" || w == "false") {
    Next();
    Constant c = MakeScalarConstant(DataType::Bool(), w == "true" ? 1 : 0);
    return Expr(WithSpan(c, SpanOf(t)));
  }
  if (w == "ref" || w == "ref_read" || w == "ref_write") {
    Next();
    KILN_RETURN_IF_ERROR(Expect(Tok::kLParen));
    KILN_ASSIGN_OR_RETURN(Expr a, ParseExpr());
    absl::StatusOr<Expr> r;
    if (w == "ref_write") {
      KILN_RETURN_IF_ERROR(Expect(Tok::kComma));
      KILN_ASSIGN_OR_RETURN(Expr b, ParseExpr());
      r = MakeRefWrite(std::move(a), std::move(b));
    } else {
      r = w == "ref" ? MakeRefCreate(std::move(a)) : MakeRefRead(std::move(a));
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kRParen));
    if (!r.ok()) return At(t, r.status());
    return WithSpan(*r, SpanOf(t));
  }
  if (w == "let")
    return ErrorAt(t, "'let' is a statement: write it in a block, `{ let %x = ...; ... }`");
  if (w == "Tensor" || w == "else" || w == "type" || w == "def" || w == "none" || w == "_")
    return ErrorAt(t, absl::StrCat("expected an expression but found keyword '", w, "'"));
  if (module_mode_) {
    if (auto c = module_.LookupConstructor(w); c.ok()) {
      Next();
      return Expr(*c);
    }
  }
  if (const OpDef* def = OpRegistry::Global().Find(w)) {
    Next();
    return Expr(def->op);
  }
  return ErrorAt(t, absl::StrCat("unknown operator '", w, "'"));
}

}  // namespace parser_internal

using parser_internal::Parser;


absl::StatusOr<Module> ParseModule(absl::string_view text, absl::string_view source_name) {
#ifdef KILN_TEST_SLOW_TEXT_PARSER
  // Test-only (//ir:text_bench_slowed): the parser made 10x slower by
  // spinning nine times as long as it worked, for
  // tools/bench/components_test.sh to see the benchmark check catch it (well
  // beyond the noise of a busy machine). Never defined in a real build.
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Module> parsed = [&]() -> absl::StatusOr<Module> {
    KILN_ASSIGN_OR_RETURN(std::vector<text::Token> toks, text::Lex(text, source_name));
    return Parser(std::move(toks), source_name).ParseModuleText();
  }();
  const auto until = start + 10 * (std::chrono::steady_clock::now() - start);
  while (std::chrono::steady_clock::now() < until) {
  }
  return parsed;
#else
  KILN_ASSIGN_OR_RETURN(std::vector<text::Token> toks, text::Lex(text, source_name));
  return Parser(std::move(toks), source_name).ParseModuleText();
#endif
}

absl::StatusOr<Expr> ParseExpr(absl::string_view text, const std::vector<Var>& free_vars) {
  KILN_ASSIGN_OR_RETURN(std::vector<text::Token> toks, text::Lex(text, "<input>"));
  return Parser(std::move(toks), "<input>").ParseExprText(free_vars);
}

absl::StatusOr<Type> ParseType(absl::string_view text) {
  KILN_ASSIGN_OR_RETURN(std::vector<text::Token> toks, text::Lex(text, "<input>"));
  return Parser(std::move(toks), "<input>").ParseTypeText();
}

}  // namespace kiln
