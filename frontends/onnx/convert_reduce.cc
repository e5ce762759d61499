// File: frontends/onnx/convert_reduce.cc
//
// ONNX reductions -> graph IR (converter.h): ReduceSum/Mean/Max/Min/Prod map
// onto the core reductions (sum, mean, max, min, prod); the others compose:
//
//   ReduceL1         sum(|x|)
//   ReduceL2         sqrt(sum(x * x))
//   ReduceSumSquare  sum(x * x)
//   ReduceLogSum     log(sum(x))
//   ReduceLogSumExp  log(sum(exp(x - m))) + m,  m = max(x) over the same axes
//                    (no overflow for large x)
// For integer inputs, L2, LogSum and LogSumExp are computed in float64 and
// truncated back (ONNX's reference: NumPy in float64, then astype).
//
// Axes: the `axes` attribute, or from the opset where it became an input
// (ReduceSum 13, the others 18) the optional second input, whose value must
// be known at import time, except for ReduceSum, whose run-time axes are
// handled by ReduceAtRunTimeAxes. No axes reduce everything, unless
// noop_with_empty_axes=1, which makes the node an identity. keepdims defaults
// to 1.
//
// ArgMax/ArgMin (axis, keepdims, select_last_index from opset 12) map onto
// argmax/argmin, whose int32 result is cast to ONNX's int64.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "frontends/onnx/convert_util.h"
#include "frontends/onnx/converter.h"
#include "frontends/onnx/emitter.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

using Outputs = absl::StatusOr<std::vector<Expr>>;

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

struct ReduceSpec {
  std::optional<std::vector<int64_t>> axes;  // nullopt: every axis
  bool keepdims = true;
  bool noop = false;  // no axes and noop_with_empty_axes: the identity
  bool run_time_axes = false;  // input 1 is known only at run time (ReduceAtRunTimeAxes)
};

// The axes from the attribute, or from input 1 at opsets >= axes_input_since.
absl::StatusOr<ReduceSpec> ReadSpec(ConvertContext& c, int axes_input_since) {
  ReduceSpec s;
  KILN_ASSIGN_OR_RETURN(int64_t keepdims, c.AttrInt("keepdims", 1));
  KILN_ASSIGN_OR_RETURN(int64_t noop, c.AttrInt("noop_with_empty_axes", 0));
  s.keepdims = keepdims != 0;
  std::vector<int64_t> axes;
  if (c.opset() >= axes_input_since) {
    if (c.HasAttr("axes"))
      return c.Invalid(
          absl::StrCat("from opset ", axes_input_since, " the axes are input 1, not an attribute"));
    absl::StatusOr<std::optional<std::vector<int64_t>>> in = c.ConstantInts(1);
    if (!in.ok() && cvt::NeedsValue(in.status())) {
      KILN_ASSIGN_OR_RETURN(TensorType at, c.InputType(1));
      if (at->ndim() != 1 || !at->shape[0].is_static()) return in.status();
      if (at->shape[0].value() > 0) {
        s.run_time_axes = true;
        return s;
      }
      in = std::optional<std::vector<int64_t>>(std::vector<int64_t>{});  // statically empty
    }
    if (!in.ok()) return in.status();
    if (*in) axes = std::move(**in);
  } else {
    KILN_ASSIGN_OR_RETURN(axes, c.AttrInts("axes", {}));
  }
  if (axes.empty()) {
    s.noop = noop != 0;
  } else {
    s.axes = std::move(axes);
  }
  return s;
}

Attrs ReduceAttrsOf(const std::optional<std::vector<int64_t>>& axes, bool keepdims) {
  return MakeAttrs<ReduceAttrs>([&](ReduceAttrs& a) {
    a.axis = axes;
    a.keepdims = keepdims;
  });
}

Expr Reduce(Emitter& e, Kind kind, const Expr& x, const ReduceSpec& s) {
  const Attrs attrs = ReduceAttrsOf(s.axes, s.keepdims);
  switch (kind) {
    case Kind::kSum:
      return e.Op("sum", {x}, attrs);
    case Kind::kMean:
      return e.Op("mean", {x}, attrs);
    case Kind::kMax:
      return e.Op("max", {x}, attrs);
    case Kind::kMin:
      return e.Op("min", {x}, attrs);
    case Kind::kProd:
      return e.Op("prod", {x}, attrs);
    case Kind::kL1:
      return e.Op("sum", {e.Op("abs", {x})}, attrs);
    case Kind::kSumSquare:
      return e.Op("sum", {e.Op("multiply", {x, x})}, attrs);
    case Kind::kL2:
      return e.Op("sqrt", {e.Op("sum", {e.Op("multiply", {x, x})}, attrs)});
    case Kind::kLogSum:
      return e.Op("log", {e.Op("sum", {x}, attrs)});
    case Kind::kLogSumExp: {
      // m keeps the reduced dims so that it broadcasts against x.
      Expr m = e.Op("max", {x}, ReduceAttrsOf(s.axes, true));
      Expr sum = e.Op("sum", {e.Op("exp", {e.Op("subtract", {x, m})})}, attrs);
      Expr shift = m;
      if (!s.keepdims) {
        shift = e.Op("squeeze", {m}, MakeAttrs<SqueezeAttrs>([&](SqueezeAttrs& a) {
                       a.axis = s.axes;  // nullopt: every axis, which all have extent 1 here
                     }));
      }
      return e.Op("add", {e.Op("log", {sum}), shift});
    }
  }
  return nullptr;
}

// ReduceSum with its axes at run time. Every axis is summed in turn (keeping
// it) and broadcast back where the axes name it, so the value keeps the
// input's shape with each reduced axis repeated; a dyn.strided_slice then
// keeps one entry of the named axes, and dyn.squeeze drops them unless
// keepdims. The named axes come from comparing the normalized axes with
// 0..rank-1.
Outputs ReduceAtRunTimeAxes(ConvertContext& c, const ReduceSpec& s) {
  KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
  KILN_ASSIGN_OR_RETURN(TensorType t, c.InputType(0));
  KILN_ASSIGN_OR_RETURN(Expr axes, c.Input(1));
  const DataType i64 = DataType::Int(64);
  KILN_ASSIGN_OR_RETURN(axes, cvt::Cast(c, axes, i64));
  const int64_t r = t->ndim();
  if (r == 0) return c.Invalid("axes given for a 0-D input");
  KILN_ASSIGN_OR_RETURN(Expr zero, c.ScalarConst(i64, 0));
  KILN_ASSIGN_OR_RETURN(Expr rank, c.ScalarConst(i64, static_cast<double>(r)));
  KILN_ASSIGN_OR_RETURN(Expr neg, c.Call("less", {axes, zero}));
  KILN_ASSIGN_OR_RETURN(Expr shifted, c.Call("add", {axes, rank}));
  KILN_ASSIGN_OR_RETURN(Expr norm, c.Call("where", {neg, shifted, axes}));
  std::vector<int64_t> iota(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) iota[static_cast<size_t>(i)] = i;
  KILN_ASSIGN_OR_RETURN(Expr rows, cvt::ConstI64(c, {r, 1}, iota));
  KILN_ASSIGN_OR_RETURN(Expr mask, c.Call("equal", {rows, norm}));
  KILN_ASSIGN_OR_RETURN(Expr hits, cvt::Cast(c, mask, i64));
  KILN_ASSIGN_OR_RETURN(Expr count, cvt::Reduce(c, "sum", hits, {1}, false));
  KILN_ASSIGN_OR_RETURN(Expr named, c.Call("greater", {count, zero}));  // [r] bool
  Expr shape;
  if (!ShapeIsStatic(t->shape)) {
    KILN_ASSIGN_OR_RETURN(shape, cvt::DynamicShapeOf(c, x, 0, r));
  }
  Expr y = x;
  for (int64_t d = 0; d < r; ++d) {
    KILN_ASSIGN_OR_RETURN(Expr sum, cvt::Reduce(c, "sum", y, {d}, true));
    Expr back;
    if (shape) {
      KILN_ASSIGN_OR_RETURN(back, c.Call("dyn.broadcast_to", {sum, shape}));
    } else {
      std::vector<int64_t> dims;
      for (const Dim& dim : t->shape) dims.push_back(dim.value());
      KILN_ASSIGN_OR_RETURN(back, cvt::BroadcastTo(c, sum, dims));
    }
    KILN_ASSIGN_OR_RETURN(Expr idx, cvt::ConstI64(c, {}, {d}));
    KILN_ASSIGN_OR_RETURN(Expr here, cvt::Take(c, named, idx, 0));
    KILN_ASSIGN_OR_RETURN(y, c.Call("where", {here, back, y}));
  }
  KILN_ASSIGN_OR_RETURN(Expr one, c.ScalarConst(i64, 1));
  KILN_ASSIGN_OR_RETURN(Expr all, cvt::ConstI64(c, {}, {std::numeric_limits<int64_t>::max()}));
  KILN_ASSIGN_OR_RETURN(Expr end, c.Call("where", {named, one, all}));
  KILN_ASSIGN_OR_RETURN(Expr begin, cvt::ConstI64(c, {r}, std::vector<int64_t>(static_cast<size_t>(r), 0)));
  KILN_ASSIGN_OR_RETURN(Expr strides, cvt::ConstI64(c, {r}, std::vector<int64_t>(static_cast<size_t>(r), 1)));
  auto sa = MakeAttrs<DynStridedSliceAttrs>([](DynStridedSliceAttrs&) {});
  KILN_ASSIGN_OR_RETURN(y, c.Call("dyn.strided_slice", {y, begin, end, strides}, sa));
  if (!s.keepdims) {
    KILN_ASSIGN_OR_RETURN(y, c.Call("dyn.squeeze", {y, axes}));
  }
  return std::vector<Expr>{y};
}

Converter ReduceConverter(Kind kind, int axes_input_since) {
  return [kind, axes_input_since](ConvertContext& c) -> Outputs {
    KILN_ASSIGN_OR_RETURN(ReduceSpec s, ReadSpec(c, axes_input_since));
    if (s.run_time_axes) {
      if (kind != Kind::kSum) return c.Unsupported("axes given at run time (only ReduceSum takes them)");
      return ReduceAtRunTimeAxes(c, s);
    }
    Emitter e(c);
    Expr x = e.In(0);
    if (s.noop) return e.Done(x);
    const DataType t = e.DType(x);
    const bool via_f64 =
        (kind == Kind::kL2 || kind == Kind::kLogSum || kind == Kind::kLogSumExp) && t.is_integral();
    if (!via_f64) return e.Done(Reduce(e, kind, x, s));
    return e.Done(e.Cast(Reduce(e, kind, e.Cast(x, DataType::Float(64)), s), t));
  };
}

// ArgMax / ArgMin: one axis; int32 indices cast to int64.
Converter ArgConverter(const char* op) {
  return [op](ConvertContext& c) -> Outputs {
    KILN_ASSIGN_OR_RETURN(int64_t axis, c.AttrInt("axis", 0));
    KILN_ASSIGN_OR_RETURN(int64_t keepdims, c.AttrInt("keepdims", 1));
    KILN_ASSIGN_OR_RETURN(int64_t last, c.AttrInt("select_last_index", 0));
    Emitter e(c);
    Expr idx = e.Op(op, {e.In(0)}, MakeAttrs<ArgReduceAttrs>([&](ArgReduceAttrs& a) {
                      a.axis = std::vector<int64_t>{axis};
                      a.keepdims = keepdims != 0;
                      a.select_last_index = last != 0;
                    }));
    return e.Done(e.Cast(idx, DataType::Int(64)));
  };
}

}  // namespace

void RegisterReduceConverters(ConverterRegistry& r) {
  const std::pair<const char*, Kind> reductions[] = {
      {"ReduceMean", Kind::kMean},
      {"ReduceMax", Kind::kMax},
      {"ReduceMin", Kind::kMin},
      {"ReduceProd", Kind::kProd},
      {"ReduceL1", Kind::kL1},
      {"ReduceL2", Kind::kL2},
      {"ReduceSumSquare", Kind::kSumSquare},
      {"ReduceLogSum", Kind::kLogSum},
      {"ReduceLogSumExp", Kind::kLogSumExp},
  };
  // Axes became an input at opset 13 for ReduceSum and at 18 for the others
  // (the converters read the node's opset).
  for (const auto& [name, kind] : reductions) r.Add(name, 1, ReduceConverter(kind, 18));
  r.Add("ReduceSum", 1, ReduceConverter(Kind::kSum, 13));
  r.Add("ArgMax", 1, ArgConverter("argmax"));
  r.Add("ArgMin", 1, ArgConverter("argmin"));
}

}  // namespace kiln::onnx_frontend
