// ONNX Gemm, MatMul, the softmax family and Dropout -> graph IR (part of the nn
// family; registered by RegisterNnConverters).
//
// Gemm -> nn.dense (transB) or nn.matmul, times alpha, plus beta * C;
// MatMul -> nn.matmul (2-D right operand) or nn.batch_matmul (broadcast batch
// dims), 1-D operands with a unit axis added and dropped; Softmax/LogSoftmax
// -> nn.softmax/nn.log_softmax; Hardmax = equal(argmax(x, keepdims), arange)
// cast to x's dtype; before opset 13 the softmax family flattens the input to
// 2-D at `axis` and reshapes back; Dropout is the identity (its mask all
// ones), refused only in training mode with a nonzero ratio (random).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::cvt {
namespace {

// x * s for a scalar s (skipped when s == 1).
absl::StatusOr<Expr> Scale(ConvertContext& c, Expr x, double s) {
  if (s == 1.0) return x;
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  KILN_ASSIGN_OR_RETURN(Expr k, c.ScalarConst(t->dtype, s));
  return Binary(c, "multiply", std::move(x), std::move(k));
}

// ---- dense algebra --------------------------------------------------------------------

Outs ConvertGemm(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr a, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr b, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType at, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(TensorType bt, c.InputType(1));
  if (at->ndim() != 2 || bt->ndim() != 2)
    return c.Invalid(absl::StrCat("A and B must be 2-D; got ", ShapeToString(at->shape), " and ",
                                  ShapeToString(bt->shape)));
  KILN_ASSIGN_OR_RETURN(double alpha, c.AttrFloat("alpha", 1.0));
  KILN_ASSIGN_OR_RETURN(double beta, c.AttrFloat("beta", 1.0));
  KILN_ASSIGN_OR_RETURN(int64_t trans_a, c.AttrInt("transA", 0));
  KILN_ASSIGN_OR_RETURN(int64_t trans_b, c.AttrInt("transB", 0));
  Expr y;
  if (trans_a == 0 && trans_b != 0) {
    KILN_ASSIGN_OR_RETURN(y, c.Call("nn.dense", {a, b}, NewAttrs<DenseAttrs>()));
  } else {
    auto ma = NewAttrs<MatmulAttrs>();
    ma->transpose_a = trans_a != 0;
    ma->transpose_b = trans_b != 0;
    KILN_ASSIGN_OR_RETURN(y, c.Call("nn.matmul", {a, b}, ma));
  }
  KILN_ASSIGN_OR_RETURN(y, Scale(c, y, alpha));
  if (c.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(Expr cc, c.Input(2));
    KILN_ASSIGN_OR_RETURN(cc, Scale(c, cc, beta));
    KILN_ASSIGN_OR_RETURN(y, Binary(c, "add", y, cc));
  }
  return std::vector<Expr>{y};
}

// MatMul of [b..., M, K] x [b..., K, N] with the same batch dims, of which
// only the first may be symbolic (a dynamic batch size): nn.batch_matmul over
// the batch dims merged ([-1, M, K]), split again ([-1, b1..., M, N]).
// nullopt when the operands do not have that form.
std::optional<absl::StatusOr<Expr>> SameBatchMatMul(ConvertContext& c, const Expr& a,
                                                    const TensorType& at, const Expr& b,
                                                    const TensorType& bt) {
  const size_t r = static_cast<size_t>(at->ndim());
  if (at->ndim() != bt->ndim() || r < 3) return std::nullopt;
  for (size_t i = 0; i + 2 < r; ++i) {
    if (at->shape[i] != bt->shape[i]) return std::nullopt;
    if (i > 0 && !at->shape[i].is_static()) return std::nullopt;
  }
  const Dim &m = at->shape[r - 2], &k = at->shape[r - 1], &kb = bt->shape[r - 2],
            &n = bt->shape[r - 1];
  const bool all_static = m.is_static() && k.is_static() && kb.is_static() && n.is_static();
  if (!all_static) {
    // Symbolic or `?` rows, columns or reduction (attention over a sequence
    // of run-time length): the batch dims merged with reshape's -3 code and
    // split again with -4 (each static after the first), the other dims
    // copied; nn.batch_matmul's type relation checks K.
    if (k.is_static() && kb.is_static() && k.value() != kb.value()) return std::nullopt;
    auto run = [&]() -> absl::StatusOr<Expr> {
      Expr a3 = a, b3 = b;
      for (size_t i = 0; i + 3 < r; ++i) {
        KILN_ASSIGN_OR_RETURN(a3, Reshape(c, a3, {-3, -2}));
        KILN_ASSIGN_OR_RETURN(b3, Reshape(c, b3, {-3, -2}));
      }
      auto ba = NewAttrs<BatchMatmulAttrs>();
      ba->transpose_b = false;
      KILN_ASSIGN_OR_RETURN(Expr y, c.Call("nn.batch_matmul", {a3, b3}, ba));
      for (size_t i = r - 3; i >= 1; --i) {
        KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, {-4, -1, at->shape[i].value(), -2}));
      }
      return y;
    };
    return run();
  }
  if (k != kb || m.value() < 1 || k.value() < 1 || n.value() < 1) return std::nullopt;
  auto run = [&]() -> absl::StatusOr<Expr> {
    Expr a3 = a, b3 = b;
    std::vector<int64_t> out = {-1};
    for (size_t i = 1; i + 2 < r; ++i) out.push_back(at->shape[i].value());
    out.push_back(m.value());
    out.push_back(n.value());
    if (r > 3) {
      KILN_ASSIGN_OR_RETURN(a3, Reshape(c, a, {-1, m.value(), k.value()}));
      KILN_ASSIGN_OR_RETURN(b3, Reshape(c, b, {-1, k.value(), n.value()}));
    }
    auto ba = NewAttrs<BatchMatmulAttrs>();
    ba->transpose_b = false;
    KILN_ASSIGN_OR_RETURN(Expr y, c.Call("nn.batch_matmul", {a3, b3}, ba));
    if (r == 3) return y;
    return Reshape(c, y, out);
  };
  return run();
}

// MatMul with NumPy semantics: 1-D operands gain a unit axis (dropped after);
// a 2-D right operand is nn.matmul; otherwise the batch dims broadcast and
// both sides become [batch, M, K] x [batch, K, N] for nn.batch_matmul.
Outs ConvertMatMul(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr a, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr b, c.Input(1));
  KILN_ASSIGN_OR_RETURN(TensorType at0, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(TensorType bt0, c.InputType(1));
  const int64_t ra0 = at0->ndim(), rb0 = bt0->ndim();
  if (ra0 < 1 || rb0 < 1) return c.Invalid("MatMul operands must have rank >= 1");
  if (ra0 == 1) {
    KILN_ASSIGN_OR_RETURN(a, ExpandDims(c, a, 0));
  }
  if (rb0 == 1) {
    KILN_ASSIGN_OR_RETURN(b, ExpandDims(c, b, 1));
  }
  KILN_ASSIGN_OR_RETURN(TensorType at, TypeOf(a));
  KILN_ASSIGN_OR_RETURN(TensorType bt, TypeOf(b));
  const int64_t ra = at->ndim(), rb = bt->ndim();
  const int64_t rout = std::max(ra, rb);
  Expr y;
  if (rb == 2) {
    KILN_ASSIGN_OR_RETURN(y, c.Call("nn.matmul", {a, b}, NewAttrs<MatmulAttrs>()));
  } else if (auto same = SameBatchMatMul(c, a, at, b, bt); same.has_value()) {
    KILN_ASSIGN_OR_RETURN(y, *std::move(same));
  } else {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> ad, StaticDims(c, at, "A (batched MatMul)"));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> bd, StaticDims(c, bt, "B (batched MatMul)"));
    const int64_t m = ad[static_cast<size_t>(ra - 2)], k = ad[static_cast<size_t>(ra - 1)];
    const int64_t kb = bd[static_cast<size_t>(rb - 2)], n = bd[static_cast<size_t>(rb - 1)];
    if (k != kb)
      return c.Invalid(absl::StrCat("A ", ShapeToString(at0->shape), " and B ",
                                    ShapeToString(bt0->shape), " differ in the reduction dim"));
    const std::vector<int64_t> ab(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
    std::vector<int64_t> batch(static_cast<size_t>(rout - 2));
    for (size_t i = 0; i < batch.size(); ++i) {
      const size_t off_a = batch.size() - ab.size(), off_b = batch.size() - bb.size();
      const int64_t da = i < off_a ? 1 : ab[i - off_a], db = i < off_b ? 1 : bb[i - off_b];
      if (da != db && da != 1 && db != 1)
        return c.Invalid(absl::StrCat("the batch dims of A ", ShapeToString(at0->shape), " and B ",
                                      ShapeToString(bt0->shape), " do not broadcast"));
      batch[i] = da == 1 ? db : da;
    }
    const int64_t nb = std::accumulate(batch.begin(), batch.end(), int64_t{1},
                                       [](int64_t p, int64_t q) { return p * q; });
    // Each side as [batch or 1, rows, cols].
    auto to3 = [&](Expr e, const std::vector<int64_t>& eb, int64_t rows,
                   int64_t cols) -> absl::StatusOr<Expr> {
      const int64_t ne = std::accumulate(eb.begin(), eb.end(), int64_t{1},
                                         [](int64_t p, int64_t q) { return p * q; });
      std::vector<int64_t> full = batch;
      full.push_back(rows);
      full.push_back(cols);
      std::vector<int64_t> padded_eb(batch.size() - eb.size(), 1);
      padded_eb.insert(padded_eb.end(), eb.begin(), eb.end());
      if (ne != 1 && padded_eb != batch) {
        auto ba = NewAttrs<BroadcastToAttrs>();
        ba->shape = full;
        KILN_ASSIGN_OR_RETURN(e, c.Call("broadcast_to", {e}, ba));
        return Reshape(c, e, {nb, rows, cols}, /*allowzero=*/true);
      }
      return Reshape(c, e, {ne, rows, cols}, /*allowzero=*/true);
    };
    KILN_ASSIGN_OR_RETURN(Expr a3, to3(a, ab, m, k));
    KILN_ASSIGN_OR_RETURN(Expr b3, to3(b, bb, k, n));
    auto ba = NewAttrs<BatchMatmulAttrs>();
    ba->transpose_b = false;
    KILN_ASSIGN_OR_RETURN(y, c.Call("nn.batch_matmul", {a3, b3}, ba));
    std::vector<int64_t> out = batch;
    out.push_back(m);
    out.push_back(n);
    KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, out, /*allowzero=*/true));
  }
  std::vector<int64_t> drop;
  if (ra0 == 1) drop.push_back(rout - 2);
  if (rb0 == 1) drop.push_back(rout - 1);
  if (!drop.empty()) {
    KILN_ASSIGN_OR_RETURN(y, Squeeze(c, y, drop));
  }
  return std::vector<Expr>{y};
}

// ---- softmax family ------------------------------------------------------------------

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// One-hot of the first maximum along `axis`, in x's dtype.
absl::StatusOr<Expr> Hardmax(ConvertContext& c, const Expr& x, int64_t axis) {
  KILN_ASSIGN_OR_RETURN(TensorType t, TypeOf(x));
  const Dim& dn = t->shape[static_cast<size_t>(axis)];
  if (!dn.is_static()) return c.Unsupported("Hardmax needs a static extent along its axis");
  auto aa = NewAttrs<ArgReduceAttrs>();
  aa->axis = std::vector<int64_t>{axis};
  aa->keepdims = true;
  KILN_ASSIGN_OR_RETURN(Expr am, c.Call("argmax", {x}, aa));
  KILN_ASSIGN_OR_RETURN(TensorType amt, TypeOf(am));
  const int64_t n = dn.value();
  std::vector<int64_t> shape(static_cast<size_t>(t->ndim() - axis), 1);
  shape[0] = n;
  KILN_ASSIGN_OR_RETURN(Ref<HostTensor> ar, HostTensor::Create(amt->dtype, shape));
  for (int64_t i = 0; i < n; ++i) {
    if (amt->dtype == DataType::Int(64)) ar->mutable_data<int64_t>()[i] = i;
    else if (amt->dtype == DataType::Int(32)) ar->mutable_data<int32_t>()[i] = static_cast<int32_t>(i);
    else return absl::InternalError("argmax returned neither int32 nor int64");
  }
  KILN_ASSIGN_OR_RETURN(Expr arange, c.Const(ar));
  KILN_ASSIGN_OR_RETURN(Expr eq, Binary(c, "equal", am, arange));
  return Cast(c, eq, t->dtype);
}

absl::StatusOr<Expr> ApplySoftmax(ConvertContext& c, SoftmaxKind kind, const Expr& x, int64_t axis) {
  if (kind == SoftmaxKind::kHardmax) return Hardmax(c, x, axis);
  auto a = NewAttrs<SoftmaxAttrs>();
  a->axis = axis;
  return c.Call(kind == SoftmaxKind::kSoftmax ? "nn.softmax" : "nn.log_softmax", {x}, a);
}

Outs ConvertSoftmax(ConvertContext& c, SoftmaxKind kind) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  const int64_t r = xt->ndim();
  if (r < 1) return c.Invalid("input must have rank >= 1");
  const bool coerce_2d = c.opset() < 13;
  KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", coerce_2d ? 1 : -1));
  if (!coerce_2d) {
    KILN_ASSIGN_OR_RETURN(axis, NormAxis(c, axis, r));
    KILN_ASSIGN_OR_RETURN(Expr y, ApplySoftmax(c, kind, x, axis));
    return std::vector<Expr>{y};
  }
  // Before opset 13: the input is coerced to 2-D [prod(d[:axis]), prod(d[axis:])];
  // for the last axis that is the softmax along it.
  if (axis < -r || axis > r) return c.Invalid(absl::StrCat("axis ", axis, " is out of range for rank ", r));
  if (axis < 0) axis += r;
  if (axis == r - 1) {
    KILN_ASSIGN_OR_RETURN(Expr y, ApplySoftmax(c, kind, x, axis));
    return std::vector<Expr>{y};
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, StaticDims(c, xt, "the input (softmax over flattened axes)"));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? outer : inner) *= dims[static_cast<size_t>(i)];
  KILN_ASSIGN_OR_RETURN(Expr x2, Reshape(c, x, {outer, inner}, /*allowzero=*/true));
  KILN_ASSIGN_OR_RETURN(Expr y, ApplySoftmax(c, kind, x2, 1));
  KILN_ASSIGN_OR_RETURN(y, Reshape(c, y, dims, /*allowzero=*/true));
  return std::vector<Expr>{y};
}

// ---- dropout -------------------------------------------------------------------------

Outs ConvertDropout(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  if (c.opset() >= 12 && c.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> training, c.ConstantInput(2));
    bool train = false;
    for (int64_t i = 0; i < training->num_elements(); ++i) train = train || training->GetAsInt64(i) != 0;
    if (train) {
      double ratio = 0.5;
      if (c.HasInput(1)) {
        KILN_ASSIGN_OR_RETURN(Ref<const HostTensor> rt, c.ConstantInput(1));
        if (rt->num_elements() != 1) return c.Invalid("ratio must be a scalar");
        ratio = rt->GetAsDouble(0);
      }
      if (ratio != 0)
        return c.Unsupported("training_mode=true with a nonzero ratio (random dropout)");
    }
  }
  std::vector<Expr> outs = {x};
  if (WantsOutput(c, 1)) {
    // The mask is all ones: bool from opset 10, x's dtype before.
    KILN_ASSIGN_OR_RETURN(Expr ones, c.Call("ones_like", {x}));
    if (c.opset() >= 10) {
      KILN_ASSIGN_OR_RETURN(ones, Cast(c, ones, DataType::Bool()));
    }
    (void)xt;
    outs.push_back(ones);
  }
  return outs;
}

}  // namespace

Outs ConvertMatMulNode(ConvertContext& c) { return ConvertMatMul(c); }

void RegisterDenseConverters(ConverterRegistry& r) {
  for (int v : {1, 6, 7, 9, 11, 13}) r.Add("Gemm", v, ConvertGemm);
  for (int v : {1, 9, 13}) r.Add("MatMul", v, ConvertMatMul);
  for (int v : {1, 11, 13}) {
    r.Add("Softmax", v, [](ConvertContext& c) { return ConvertSoftmax(c, SoftmaxKind::kSoftmax); });
    r.Add("LogSoftmax", v,
          [](ConvertContext& c) { return ConvertSoftmax(c, SoftmaxKind::kLogSoftmax); });
    r.Add("Hardmax", v, [](ConvertContext& c) { return ConvertSoftmax(c, SoftmaxKind::kHardmax); });
  }
  for (int v : {1, 6, 7, 10, 12, 13}) r.Add("Dropout", v, ConvertDropout);
}

}  // namespace kiln::onnx_frontend::cvt
