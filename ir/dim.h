// File: ir/dim.h
//
// Dim: one dimension of a tensor shape. It is one of
//   - static:    a known extent >= 0            printed `224`
//   - any:       unknown until run time         printed `?`
//   - symbolic:  a named size variable or an arithmetic expression of them,
//                printed `n`, `(n * 4)`, `(n + 1)`, `(n / 2)` (floor division),
//                `(n % 2)`.
// Symbolic variables are identified by name: `n` in one type is the same `n`
// as in another type of the same module, which is how a batch size flows
// through a model. Arithmetic folds constants and simple identities, so
// `Dim(3) * Dim(4)` is the static 12 and `(n * 4) / 4` is `n`.
#ifndef KILN_IR_DIM_H_
#define KILN_IR_DIM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/object.h"

namespace kiln {

class DimExprNode;

class Dim {
 public:
  enum class Kind : uint8_t { kStatic, kAny, kSymbolic };

  Dim() = default;                                  // static 0
  Dim(int64_t v) : value_(v) {}                     // NOLINT: static dims read naturally.
  static Dim Any();
  static Dim Var(std::string name);

  Kind kind() const { return kind_; }
  bool is_static() const { return kind_ == Kind::kStatic; }
  bool is_any() const { return kind_ == Kind::kAny; }
  bool is_symbolic() const { return kind_ == Kind::kSymbolic; }
  // The extent of a static dim (0 for others).
  int64_t value() const { return value_; }
  // The expression of a symbolic dim (null for others).
  const DimExprNode* expr() const { return expr_.get(); }
  // If this is a plain symbolic variable, its name.
  std::optional<std::string> var_name() const;

  std::string ToString() const;
  size_t Hash() const;
  friend bool operator==(const Dim& a, const Dim& b);
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }

  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  static Dim FloorDiv(const Dim& a, const Dim& b);
  static Dim FloorMod(const Dim& a, const Dim& b);

 private:
  friend class DimExprNode;
  static Dim FromExpr(Ref<const DimExprNode> e);
  Kind kind_ = Kind::kStatic;
  int64_t value_ = 0;
  Ref<const DimExprNode> expr_;
};

class DimExprNode : public Object {
 public:
  enum class Op : uint8_t { kVar, kAdd, kSub, kMul, kFloorDiv, kFloorMod };
  static bool IsInstance(const Object*) { return true; }

  Op op;
  std::string name;  // kVar only
  Dim a, b;          // binary ops only

  DimExprNode(Op op, std::string name, Dim a, Dim b)
      : op(op), name(std::move(name)), a(std::move(a)), b(std::move(b)) {}
  static Dim MakeDim(Ref<const DimExprNode> e) { return Dim::FromExpr(std::move(e)); }
};

using Shape = std::vector<Dim>;

std::string ShapeToString(const Shape& shape);
// Product of all dims (static when all are static).
Dim ShapeNumElements(const Shape& shape);
bool ShapeIsStatic(const Shape& shape);
// Static extents; nullopt when any dim is not static.
std::optional<std::vector<int64_t>> StaticShape(const Shape& shape);
Shape ShapeFromInts(const std::vector<int64_t>& dims);

}  // namespace kiln

#endif  // KILN_IR_DIM_H_
