// File: passes/fold_constant/fold_constant.h
//
// FoldConstant (opt level 2): evaluates, with the reference interpreter's
// kernels, every operator call whose arguments are all constants (or tuples
// of constants) and replaces it by its value; projections of literal tuples
// become the field; a let whose value folds to a constant is inlined.
// Functions marked Primitive=1 (already fused) are left alone.
//
//   %0 = multiply(meta[Constant][0], 2f);   // weight * scale, both constant
//   nn.conv2d(%x, %0)
// becomes
//   nn.conv2d(%x, meta[Constant][1])          // the product, computed once
//
// A folded constant computed from exactly one named constant (ConstantNode
// name_hint: an ONNX initializer's name) takes that name; from none or from
// several differently named ones, it has none.
//
// Needs nothing before it (types are not used). Works on 100,000-node chains
// without recursion (ExprRewriter).
#ifndef KILN_PASSES_FOLD_CONSTANT_FOLD_CONSTANT_H_
#define KILN_PASSES_FOLD_CONSTANT_FOLD_CONSTANT_H_

#include "absl/status/statusor.h"
#include "ir/expr.h"
#include "passes/infra/pass.h"

namespace kiln::passes {

PassPtr FoldConstant();

// The rewrite on one expression (exposed for other passes and tests).
absl::StatusOr<Expr> FoldConstantExpr(const Expr& e);

}  // namespace kiln::passes

#endif  // KILN_PASSES_FOLD_CONSTANT_FOLD_CONSTANT_H_
