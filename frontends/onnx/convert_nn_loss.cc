// ONNX loss functions -> graph IR (part of the nn family; registered by
// RegisterNnConverters): NegativeLogLikelihoodLoss (opsets 12, 13) and
// SoftmaxCrossEntropyLoss (12, 13), composed exactly as ONNX's reference
// (onnx/backend/test/case/node/negativeloglikelihoodloss.py, softmaxcrossentropy.py):
//
//   picked[n, d...] = input[n, target[n, d...], d...]   a sum over the classes of
//                     where(class == target, input, 0): one nonzero term
//   loss            = -picked * weight[target], 0 where target == ignore_index
//   reduction       none: loss; sum: sum(loss); mean: sum(loss) / sum(the
//                   weights of the targets not ignored) (with no weight
//                   input: their count)
// SoftmaxCrossEntropyLoss is that loss over nn.log_softmax(scores, axis=1),
// whose value is its optional second output.
#include <cstdint>
#include <optional>
#include <string>
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

// The NLL loss of log-probabilities `x` [N, C, d...] for int targets `t`
// [N, d...] (node inputs `target_input` and, when present, `target_input + 1`
// for the class weights).
absl::StatusOr<Expr> NllLoss(ConvertContext& c, Expr x, int target_input) {
  KILN_ASSIGN_OR_RETURN(TensorType xt, TypeOf(x));
  KILN_ASSIGN_OR_RETURN(Expr t, c.Input(target_input));
  KILN_ASSIGN_OR_RETURN(TensorType tt, c.InputType(target_input));
  const int64_t r = xt->ndim();
  if (r < 2 || tt->ndim() != r - 1)
    return c.Invalid(absl::StrCat("input ", ShapeToString(xt->shape), " and target ",
                                  ShapeToString(tt->shape), " must be [N, C, d...] and [N, d...]"));
  const Dim& cd = xt->shape[1];
  if (!cd.is_static()) return c.Unsupported("the class dim C must be static");
  KILN_ASSIGN_OR_RETURN(std::string reduction, c.AttrString("reduction", "mean"));
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return c.Invalid(absl::StrCat("reduction \"", reduction, "\" is not none, sum or mean"));
  const bool has_ignore = c.HasAttr("ignore_index");
  KILN_ASSIGN_OR_RETURN(int64_t ignore_index, c.AttrInt("ignore_index", 0));

  KILN_ASSIGN_OR_RETURN(t, Cast(c, t, DataType::Int(64)));
  KILN_ASSIGN_OR_RETURN(Expr zero_i, c.ScalarConst(DataType::Int(64), 0));
  Expr ignored;  // bool [N, d...]
  if (has_ignore) {
    KILN_ASSIGN_OR_RETURN(Expr ii, c.ScalarConst(DataType::Int(64), static_cast<double>(ignore_index)));
    KILN_ASSIGN_OR_RETURN(ignored, Binary(c, "equal", t, ii));
    KILN_ASSIGN_OR_RETURN(t, c.Call("where", {ignored, zero_i, t}));  // keep gathers in range
  }
  // picked = sum over classes of where(class == target, x, 0).
  std::vector<int64_t> cls_shape(static_cast<size_t>(r - 1), 1);
  cls_shape[0] = cd.value();
  KILN_ASSIGN_OR_RETURN(Expr classes, ConstI64(c, cls_shape, IotaInts(0, cd.value())));
  KILN_ASSIGN_OR_RETURN(Expr te, ExpandDims(c, t, 1));
  KILN_ASSIGN_OR_RETURN(Expr hit, Binary(c, "equal", te, classes));  // [N, C, d...]
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(xt->dtype, 0));
  KILN_ASSIGN_OR_RETURN(Expr sel, c.Call("where", {hit, x, zero}));
  KILN_ASSIGN_OR_RETURN(Expr picked, Reduce(c, "sum", sel, {1}, false));
  KILN_ASSIGN_OR_RETURN(Expr loss, c.Call("negative", {picked}));
  // Per-element weights: weight[target], 0 where ignored.
  Expr w;
  if (c.HasInput(target_input + 1)) {
    KILN_ASSIGN_OR_RETURN(Expr weight, c.Input(target_input + 1));
    KILN_ASSIGN_OR_RETURN(weight, Cast(c, weight, xt->dtype));
    KILN_ASSIGN_OR_RETURN(w, Take(c, weight, t, 0));
    KILN_ASSIGN_OR_RETURN(loss, Binary(c, "multiply", loss, w));
  }
  if (has_ignore) {
    KILN_ASSIGN_OR_RETURN(loss, c.Call("where", {ignored, zero, loss}));
    if (!w) {
      KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(xt->dtype, 1));
      KILN_ASSIGN_OR_RETURN(w, c.Call("where", {ignored, zero, one}));
    } else {
      KILN_ASSIGN_OR_RETURN(w, c.Call("where", {ignored, zero, w}));
    }
  }
  if (reduction == "none") return loss;
  const std::vector<int64_t> all = IotaInts(0, r - 1);
  if (reduction == "sum") return Reduce(c, "sum", loss, all, false);
  if (!w) return Reduce(c, "mean", loss, all, false);
  KILN_ASSIGN_OR_RETURN(Expr total, Reduce(c, "sum", loss, all, false));
  KILN_ASSIGN_OR_RETURN(Expr weight_sum, Reduce(c, "sum", w, all, false));
  return Binary(c, "divide", total, weight_sum);
}

Outs ConvertNllLoss(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr loss, NllLoss(c, x, 1));
  return std::vector<Expr>{loss};
}

Outs ConvertSoftmaxCrossEntropy(ConvertContext& c) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType xt, c.InputType(0));
  if (xt->ndim() < 2) return c.Invalid(absl::StrCat("scores must be [N, C, d...]; got ", ShapeToString(xt->shape)));
  auto a = NewAttrs<SoftmaxAttrs>();
  a->axis = 1;
  KILN_ASSIGN_OR_RETURN(Expr log_prob, c.Call("nn.log_softmax", {x}, a));
  KILN_ASSIGN_OR_RETURN(Expr loss, NllLoss(c, log_prob, 1));
  return std::vector<Expr>{loss, log_prob};
}

}  // namespace

void RegisterLossConverters(ConverterRegistry& r) {
  for (int v : {12, 13}) {
    r.Add("NegativeLogLikelihoodLoss", v, ConvertNllLoss);
    r.Add("SoftmaxCrossEntropyLoss", v, ConvertSoftmaxCrossEntropy);
  }
}

}  // namespace kiln::onnx_frontend::cvt
