// File: frontends/onnx/emitter.h (internal to the converter families)
//
// Emitter builds a composition of typed graph-IR calls for one ONNX node.
// The first error sticks and every later step is skipped (returning null), so
// a formula reads as one expression and is checked once, in Done():
//
//   Emitter e(c);
//   Expr x = e.In(0);
//   return e.Done(e.Op("divide", {e.Scalar(x, 1), x}));   // Reciprocal
//
// MakeAttrs<A>(fill) (ir/attrs.h) makes an attribute struct and fills it in place.
#ifndef KILN_FRONTENDS_ONNX_EMITTER_H_
#define KILN_FRONTENDS_ONNX_EMITTER_H_

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontends/onnx/converter.h"
#include "ir/op_attrs.h"

namespace kiln::onnx_frontend {

class Emitter {
 public:
  explicit Emitter(ConvertContext& c) : c_(c) {}

  // Input `i` of the node.
  Expr In(int i) { return Take(c_.Input(i)); }

  // A typed call of operator `name`.
  Expr Op(absl::string_view name, std::vector<Expr> args, Attrs attrs = nullptr) {
    if (!st_.ok()) return nullptr;
    return Take(c_.Call(name, std::move(args), std::move(attrs)));
  }

  // A 0-D constant of `like`'s dtype, or of `dt`.
  Expr Scalar(const Expr& like, double value) {
    const DataType dt = DType(like);
    if (!st_.ok()) return nullptr;
    return Take(c_.ScalarConst(dt, value));
  }
  Expr Scalar(DataType dt, double value) {
    if (!st_.ok()) return nullptr;
    return Take(c_.ScalarConst(dt, value));
  }

  // The dtype / rank of a tensor-typed value (an error otherwise).
  DataType DType(const Expr& e) {
    if (!st_.ok() || e == nullptr) return DataType::Void();
    const auto* t = e->checked_type().as<TensorTypeNode>();
    if (t == nullptr) {
      st_ = c_.Invalid("expected a tensor-typed value");
      return DataType::Void();
    }
    return t->dtype;
  }
  int Rank(const Expr& e) {
    if (!st_.ok() || e == nullptr) return 0;
    const auto* t = e->checked_type().as<TensorTypeNode>();
    if (t == nullptr) {
      st_ = c_.Invalid("expected a tensor-typed value");
      return 0;
    }
    return t->ndim();
  }

  // `x` converted to `to` (x itself when it already is).
  Expr Cast(const Expr& x, DataType to) {
    if (!st_.ok()) return nullptr;
    if (DType(x) == to) return x;
    return Op("cast", {x}, MakeAttrs<CastAttrs>([&](CastAttrs& a) { a.dtype = to; }));
  }

  // Records an error (the first one wins).
  void Fail(absl::Status s) {
    if (st_.ok()) st_ = std::move(s);
  }
  bool ok() const { return st_.ok(); }

  // The node's single output, or the first error.
  absl::StatusOr<std::vector<Expr>> Done(const Expr& e) {
    if (!st_.ok()) return st_;
    return std::vector<Expr>{e};
  }

 private:
  Expr Take(absl::StatusOr<Expr> r) {
    if (!st_.ok()) return nullptr;
    if (!r.ok()) {
      st_ = r.status();
      return nullptr;
    }
    return *std::move(r);
  }

  ConvertContext& c_;
  absl::Status st_;
};

}  // namespace kiln::onnx_frontend

#endif  // KILN_FRONTENDS_ONNX_EMITTER_H_
