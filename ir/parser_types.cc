// Types, shapes, dims and type parameters of the .kir parser (see
// ir/parser_internal.h).
#include "ir/parser_internal.h"

namespace kiln::parser_internal {

absl::StatusOr<std::vector<TypeVar>> Parser::ParseTypeParams() {
  std::vector<TypeVar> out;
  if (!Is(Tok::kLAngle)) return out;
  Next();
  while (true) {
    if (!Is(Tok::kIdent)) return Unexpected("a type parameter name");
    TypeVar tv = MakeTypeVar(Next().text);
    out.push_back(tv);
    BindTypeParam(tv);
    if (Is(Tok::kComma)) {
      Next();
      continue;
    }
    KILN_RETURN_IF_ERROR(Expect(Tok::kRAngle));
    return out;
  }
}

absl::StatusOr<Type> Parser::ParseType() {
  DepthGuard guard(&depth_);
  KILN_RETURN_IF_ERROR(CheckDepth());
  const Token& t = Peek();
  if (t.kind == Tok::kLParen) {
    Next();
    std::vector<Type> fields;
    bool comma = false;
    while (!Is(Tok::kRParen)) {
      KILN_ASSIGN_OR_RETURN(Type f, ParseType());
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
    return Type(MakeTupleType(std::move(fields)));
  }
  if (t.kind != Tok::kIdent) return Unexpected("a type");
  const std::string& w = t.text;
  if (w == "Tensor") {
    Next();
    KILN_RETURN_IF_ERROR(Expect(Tok::kLBracket));
    KILN_ASSIGN_OR_RETURN(Shape shape, ParseShape());
    KILN_RETURN_IF_ERROR(Expect(Tok::kComma));
    if (!Is(Tok::kIdent)) return Unexpected("a data type");
    const Token& dt_tok = Next();
    auto dt = DataType::Parse(dt_tok.text);
    if (!dt.ok()) return At(dt_tok, dt.status());
    KILN_RETURN_IF_ERROR(Expect(Tok::kRBracket));
    return Type(MakeTensorType(std::move(shape), *dt));
  }
  if (w == "fn") {
    Next();
    size_t mark = TypeMark();
    KILN_ASSIGN_OR_RETURN(std::vector<TypeVar> tps, ParseTypeParams());
    KILN_RETURN_IF_ERROR(Expect(Tok::kLParen));
    std::vector<Type> args;
    while (!Is(Tok::kRParen)) {
      KILN_ASSIGN_OR_RETURN(Type a, ParseType());
      args.push_back(std::move(a));
      if (Is(Tok::kComma)) {
        Next();
      } else if (!Is(Tok::kRParen)) {
        return Unexpected("',' or ')'");
      }
    }
    Next();
    KILN_RETURN_IF_ERROR(Expect(Tok::kArrow));
    KILN_ASSIGN_OR_RETURN(Type ret, ParseType());
    TypeRestore(mark);
    auto ft = MakeFuncType(std::move(args), std::move(ret), std::move(tps));
    if (!ft.ok()) return At(t, ft.status());
    return Type(*ft);
  }
  if (w == "ref") {
    Next();
    KILN_RETURN_IF_ERROR(Expect(Tok::kLParen));
    KILN_ASSIGN_OR_RETURN(Type v, ParseType());
    KILN_RETURN_IF_ERROR(Expect(Tok::kRParen));
    auto rt = MakeRefType(std::move(v));
    if (!rt.ok()) return At(t, rt.status());
    return Type(*rt);
  }
  if (w == "_") {
    Next();
    return Type(MakeIncompleteType());
  }
  if (auto it = tparams_.find(w); it != tparams_.end()) {
    Next();
    return Type(it->second.back());
  }
  if (auto it = adts_.find(w); it != adts_.end()) {
    Next();
    Type head = it->second;
    if (!Is(Tok::kLBracket)) return head;
    Next();
    std::vector<Type> args;
    while (!Is(Tok::kRBracket)) {
      KILN_ASSIGN_OR_RETURN(Type a, ParseType());
      args.push_back(std::move(a));
      if (Is(Tok::kComma)) {
        Next();
      } else if (!Is(Tok::kRBracket)) {
        return Unexpected("',' or ']'");
      }
    }
    Next();
    auto tc = MakeTypeCall(head, std::move(args));
    if (!tc.ok()) return At(t, tc.status());
    return Type(*tc);
  }
  if (auto dt = DataType::Parse(w); dt.ok() && !dt->is_void()) {
    Next();
    return Type(MakeScalarType(*dt));
  }
  return ErrorAt(t, absl::StrCat("unknown type '", w,
                                 "': not a data type, a type parameter in scope or a type "
                                 "defined in the module"));
}

absl::StatusOr<Shape> Parser::ParseShape() {
  KILN_RETURN_IF_ERROR(Expect(Tok::kLParen));
  Shape shape;
  while (!Is(Tok::kRParen)) {
    KILN_ASSIGN_OR_RETURN(Dim d, ParseDim());
    shape.push_back(std::move(d));
    if (Is(Tok::kComma)) {
      Next();
    } else if (!Is(Tok::kRParen)) {
      return Unexpected("',' or ')'");
    }
  }
  Next();
  return shape;
}

absl::StatusOr<Dim> Parser::ParseDim() {
  DepthGuard guard(&depth_);
  KILN_RETURN_IF_ERROR(CheckDepth());
  const Token& t = Peek();
  switch (t.kind) {
    case Tok::kInt: {
      int64_t v = 0;
      if (!t.suffix.empty() || !absl::SimpleAtoi(t.text, &v) || v < 0)
        return ErrorAt(t, absl::StrCat("expected a dimension (a non-negative integer, '?', a name "
                                       "or a parenthesized expression) but found ",
                                       text::Describe(t)));
      Next();
      return Dim(v);
    }
    case Tok::kQuestion: Next(); return Dim::Any();
    case Tok::kIdent: Next(); return Dim::Var(t.text);
    case Tok::kLParen: {
      Next();
      KILN_ASSIGN_OR_RETURN(Dim a, ParseDim());
      Tok op = Peek().kind;
      Dim b;
      if (op == Tok::kInt && !Peek().text.empty() && Peek().text[0] == '-') {
        // `(n -1)`: the lexer read `-1` as a number.
        int64_t v = 0;
        if (!absl::SimpleAtoi(Peek().text, &v)) return Unexpected("a dimension");
        Next();
        b = Dim(-v);
        op = Tok::kMinus;
      } else {
        if (op != Tok::kPlus && op != Tok::kMinus && op != Tok::kStar && op != Tok::kSlash &&
            op != Tok::kPercent)
          return Unexpected("'+', '-', '*', '/' or '%'");
        Next();
        KILN_ASSIGN_OR_RETURN(b, ParseDim());
      }
      KILN_RETURN_IF_ERROR(Expect(Tok::kRParen));
      switch (op) {
        case Tok::kPlus: return a + b;
        case Tok::kMinus: return a - b;
        case Tok::kStar: return a * b;
        case Tok::kSlash: return Dim::FloorDiv(a, b);
        default: return Dim::FloorMod(a, b);
      }
    }
    default:
      return Unexpected("a dimension (an integer, '?', a name or a parenthesized expression)");
  }
}

// ---- Expressions ------------------------------------------------------------

}  // namespace kiln::parser_internal
