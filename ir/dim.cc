#include "ir/dim.h"

#include <cstdint>
#include <optional>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {
namespace {

using Op = DimExprNode::Op;

// Static dims are combined with checked arithmetic: a result that does not
// fit in int64 (INT64_MAX * 5, from ShapeNumElements of a huge shape) is `?`,
// never a wrapped number; type inference (types/infer_type.cc) refuses such
// shapes as too large before anything else computes with them.
std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

Dim StaticOrAny(std::optional<int64_t> v) { return v ? Dim(*v) : Dim::Any(); }

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t FloorModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }

}  // namespace

Dim Dim::Any() {
  Dim d;
  d.kind_ = Kind::kAny;
  return d;
}

Dim Dim::Var(std::string name) {
  Dim d;
  d.kind_ = Kind::kSymbolic;
  d.expr_ = MakeRef<DimExprNode>(Op::kVar, std::move(name), Dim(), Dim());
  return d;
}

std::optional<std::string> Dim::var_name() const {
  if (kind_ == Kind::kSymbolic && expr_->op == Op::kVar) return expr_->name;
  return std::nullopt;
}

namespace {

Dim MakeBinary(Op op, const Dim& a, const Dim& b);

}  // namespace

Dim operator+(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return Dim::Any();
  if (a.is_static() && b.is_static()) return StaticOrAny(CheckedAdd(a.value(), b.value()));
  if (a.is_static() && a.value() == 0) return b;
  if (b.is_static() && b.value() == 0) return a;
  if (a.is_static()) return MakeBinary(Op::kAdd, b, a);  // constants on the right
  return MakeBinary(Op::kAdd, a, b);
}

Dim operator-(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return Dim::Any();
  if (a.is_static() && b.is_static()) return StaticOrAny(CheckedSub(a.value(), b.value()));
  if (b.is_static() && b.value() == 0) return a;
  if (a == b) return Dim(0);
  // (x + c) - c == x
  if (a.is_symbolic() && a.expr()->op == Op::kAdd && a.expr()->b == b) return a.expr()->a;
  return MakeBinary(Op::kSub, a, b);
}

Dim operator*(const Dim& a, const Dim& b) {
  if (a.is_static() && a.value() == 0) return Dim(0);
  if (b.is_static() && b.value() == 0) return Dim(0);
  if (a.is_any() || b.is_any()) return Dim::Any();
  if (a.is_static() && b.is_static()) return StaticOrAny(CheckedMul(a.value(), b.value()));
  if (a.is_static() && a.value() == 1) return b;
  if (b.is_static() && b.value() == 1) return a;
  if (a.is_static()) return b * a;
  // (x * c1) * c2 == x * (c1 * c2)
  if (b.is_static() && a.expr()->op == Op::kMul && a.expr()->b.is_static()) {
    if (std::optional<int64_t> c = CheckedMul(a.expr()->b.value(), b.value()))
      return a.expr()->a * Dim(*c);
  }
  return MakeBinary(Op::kMul, a, b);
}

Dim Dim::FloorDiv(const Dim& a, const Dim& b) {
  if (a.is_static() && a.value() == 0) return Dim(0);
  if (a.is_any() || b.is_any()) return Dim::Any();
  if (a.is_static() && b.is_static()) {
    // x / 0 is unknown; INT64_MIN / -1 does not fit.
    if (b.value() == 0 || (b.value() == -1 && a.value() == INT64_MIN)) return Dim::Any();
    return Dim(FloorDivInt(a.value(), b.value()));
  }
  if (b.is_static() && b.value() == 1) return a;
  if (a == b) return Dim(1);
  // (x * c) / c == x ; (x * c1) / c2 == x * (c1 / c2) when c2 divides c1.
  if (a.is_symbolic() && a.expr()->op == Op::kMul && b.is_static() && b.value() != 0 &&
      b.value() != -1) {
    const Dim& c = a.expr()->b;
    if (c.is_static() && c.value() % b.value() == 0) return a.expr()->a * Dim(c.value() / b.value());
  }
  if (a.is_symbolic() && a.expr()->op == Op::kMul && a.expr()->b == b) return a.expr()->a;
  return MakeBinary(Op::kFloorDiv, a, b);
}

Dim Dim::FloorMod(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return Dim::Any();
  if (a.is_static() && b.is_static()) {
    if (b.value() == 0) return Dim::Any();
    if (b.value() == -1) return Dim(0);  // also INT64_MIN % -1, which C++ leaves undefined
    return Dim(FloorModInt(a.value(), b.value()));
  }
  if (b.is_static() && b.value() == 1) return Dim(0);
  if (a == b) return Dim(0);
  if (a.is_symbolic() && a.expr()->op == Op::kMul && b.is_static() && b.value() != 0 &&
      b.value() != -1) {
    const Dim& c = a.expr()->b;
    if (c.is_static() && c.value() % b.value() == 0) return Dim(0);
  }
  return MakeBinary(Op::kFloorMod, a, b);
}

Dim Dim::FromExpr(Ref<const DimExprNode> e) {
  Dim d;
  d.kind_ = Kind::kSymbolic;
  d.expr_ = std::move(e);
  return d;
}

namespace {

Dim MakeBinary(Op op, const Dim& a, const Dim& b) {
  return DimExprNode::MakeDim(MakeRef<DimExprNode>(op, std::string(), a, b));
}

}  // namespace

bool operator==(const Dim& a, const Dim& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Dim::Kind::kStatic: return a.value_ == b.value_;
    case Dim::Kind::kAny: return true;
    case Dim::Kind::kSymbolic: {
      const DimExprNode* x = a.expr_.get();
      const DimExprNode* y = b.expr_.get();
      if (x == y) return true;
      if (x->op != y->op) return false;
      if (x->op == Op::kVar) return x->name == y->name;
      return x->a == y->a && x->b == y->b;
    }
  }
  return false;
}

size_t Dim::Hash() const {
  switch (kind_) {
    case Kind::kStatic: return absl::HashOf(0, value_);
    case Kind::kAny: return absl::HashOf(1);
    case Kind::kSymbolic:
      if (expr_->op == Op::kVar) return absl::HashOf(2, expr_->name);
      return absl::HashOf(3, static_cast<int>(expr_->op), expr_->a.Hash(), expr_->b.Hash());
  }
  return 0;
}

std::string Dim::ToString() const {
  switch (kind_) {
    case Kind::kStatic: return absl::StrCat(value_);
    case Kind::kAny: return "?";
    case Kind::kSymbolic: {
      const DimExprNode* e = expr_.get();
      const char* sym = "";
      switch (e->op) {
        case Op::kVar: return e->name;
        case Op::kAdd: sym = " + "; break;
        case Op::kSub: sym = " - "; break;
        case Op::kMul: sym = " * "; break;
        case Op::kFloorDiv: sym = " / "; break;
        case Op::kFloorMod: sym = " % "; break;
      }
      return absl::StrCat("(", e->a.ToString(), sym, e->b.ToString(), ")");
    }
  }
  return "";
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].ToString();
  }
  if (shape.size() == 1) s += ",";
  s += ")";
  return s;
}

Dim ShapeNumElements(const Shape& shape) {
  Dim n(1);
  for (const Dim& d : shape) n = n * d;
  return n;
}

bool ShapeIsStatic(const Shape& shape) {
  for (const Dim& d : shape)
    if (!d.is_static()) return false;
  return true;
}

std::optional<std::vector<int64_t>> StaticShape(const Shape& shape) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

Shape ShapeFromInts(const std::vector<int64_t>& dims) {
  Shape s;
  s.reserve(dims.size());
  for (int64_t d : dims) s.emplace_back(d);
  return s;
}

}  // namespace kiln
