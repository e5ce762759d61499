// File: lowering/compute/nn/nn_test_util.cc
#include "lowering/compute/nn/nn_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interpreter/kernels.h"
#include "interpreter/value.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "ir/tensor.h"
#include "lowering/passes/tir_eval.h"
#include "lowering/te/lower.h"
#include "lowering/te/schedule.h"
#include "lowering/te/schedule_x86.h"
#include "lowering/te/te_test_util.h"
#include "types/infer_type.h"

namespace kiln::lowering::nn_testing {
namespace {

using tir::ExprKind;
using tir::ExprNode;
using tir::PrimExpr;

int64_t Wrap(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0 ? 1 : 0;
  const int bits = t.bits();
  if (bits >= 64 || bits <= 0) return v;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_uint()) return static_cast<int64_t>(u);
  if (u & (uint64_t{1} << (bits - 1))) u |= ~mask;
  return static_cast<int64_t>(u);
}

// Float -> integer dtype: truncate, saturate, NaN -> 0 (bool: nonzero).
int64_t FloatToInt(double v, DataType t) {
  if (t.is_bool()) return v != 0 ? 1 : 0;
  if (std::isnan(v)) return 0;
  v = std::trunc(v);
  const int bits = t.bits();
  double lo = 0, hi = 0;
  if (t.is_uint()) {
    lo = 0;
    hi = std::ldexp(1.0, bits) - 1;
  } else {
    lo = -std::ldexp(1.0, bits - 1);
    hi = std::ldexp(1.0, bits - 1) - 1;
  }
  if (v <= lo) return bits >= 64 && !t.is_uint() ? std::numeric_limits<int64_t>::min()
                                                  : static_cast<int64_t>(lo);
  if (v >= hi) return bits >= 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi);
  return static_cast<int64_t>(v);
}

double Round(double v, DataType t) {
  if (t.is_float()) return tir::testing::RoundToFloatType(v, t);
  return v;
}

class RefEval {
 public:
  absl::Status Error(absl::string_view msg) { return absl::InvalidArgumentError(absl::StrCat("EvalTensors: ", msg)); }

  absl::StatusOr<int64_t> ConstInt(const PrimExpr& e) {
    KILN_ASSIGN_OR_RETURN(double v, Eval(e));
    return static_cast<int64_t>(v);
  }

  absl::StatusOr<std::vector<int64_t>> Shape(const std::vector<PrimExpr>& s) {
    std::vector<int64_t> out;
    for (const PrimExpr& d : s) {
      KILN_ASSIGN_OR_RETURN(int64_t v, ConstInt(d));
      out.push_back(v);
    }
    return out;
  }

  absl::Status RunOp(const te::Operation& op) {
    if (op->kind == te::OpKind::kPlaceholder) {
      if (!values_.count(op.get())) return Error(absl::StrCat("no values for placeholder ", op->name));
      return absl::OkStatus();
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, Shape(op->output_shapes[0]));
    int64_t total = 1;
    for (int64_t d : shape) total *= d;
    std::vector<std::vector<double>>& outs = values_[op.get()];
    outs.assign(op->body.size(), std::vector<double>(static_cast<size_t>(std::max<int64_t>(total, 0))));
    shapes_[op.get()] = shape;
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t flat = 0; flat < total; ++flat) {
      int64_t rem = flat;
      for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = rem % shape[d];
        rem /= shape[d];
      }
      for (size_t d = 0; d < shape.size(); ++d) env_[op->axis[d]->var.get()] = static_cast<double>(idx[d]);
      for (size_t b = 0; b < op->body.size(); ++b) {
        KILN_ASSIGN_OR_RETURN(double v, Eval(op->body[b]));
        outs[b][static_cast<size_t>(flat)] = Store(v, op->output_dtypes[b]);
      }
    }
    return absl::OkStatus();
  }

  void SetInput(const te::Tensor& t, std::vector<double> v, std::vector<int64_t> shape) {
    auto& outs = values_[t.op().get()];
    outs.resize(static_cast<size_t>(t.op()->num_outputs()));
    outs[static_cast<size_t>(t.value_index())] = std::move(v);
    shapes_[t.op().get()] = std::move(shape);
  }

  const std::vector<double>& Values(const te::Tensor& t) {
    return values_[t.op().get()][static_cast<size_t>(t.value_index())];
  }

 private:
  static double Store(double v, DataType t) {
    if (t.is_float()) return Round(v, t);
    return static_cast<double>(Wrap(static_cast<int64_t>(v), t));
  }

  absl::StatusOr<double> Eval(const PrimExpr& e) {
    if (!e) return Error("null expression");
    const ExprNode& n = *e;
    const DataType t = n.dtype;
    switch (n.kind) {
      case ExprKind::kIntImm: return static_cast<double>(n.int_value);
      case ExprKind::kFloatImm: return Round(n.float_value, t);
      case ExprKind::kVar: {
        auto it = env_.find(e.get());
        if (it == env_.end()) return Error(absl::StrCat("unbound variable ", n.name));
        return it->second;
      }
      case ExprKind::kAdd: case ExprKind::kSub: case ExprKind::kMul: case ExprKind::kDiv:
      case ExprKind::kMod: case ExprKind::kFloorDiv: case ExprKind::kFloorMod:
      case ExprKind::kMin: case ExprKind::kMax: case ExprKind::kEQ: case ExprKind::kNE:
      case ExprKind::kLT: case ExprKind::kLE: case ExprKind::kGT: case ExprKind::kGE:
      case ExprKind::kAnd: case ExprKind::kOr:
        return Binary(n);
      case ExprKind::kNot: {
        KILN_ASSIGN_OR_RETURN(double a, Eval(n.args[0]));
        return a == 0 ? 1.0 : 0.0;
      }
      case ExprKind::kSelect: {
        KILN_ASSIGN_OR_RETURN(double c, Eval(n.args[0]));
        KILN_ASSIGN_OR_RETURN(double a, Eval(n.args[1]));
        KILN_ASSIGN_OR_RETURN(double b, Eval(n.args[2]));
        return c != 0 ? a : b;
      }
      case ExprKind::kCast: {
        KILN_ASSIGN_OR_RETURN(double a, Eval(n.args[0]));
        const DataType from = n.args[0]->dtype;
        if (t.is_float()) return Round(a, t);
        if (from.is_float()) return static_cast<double>(FloatToInt(a, t));
        return static_cast<double>(Wrap(static_cast<int64_t>(a), t));
      }
      case ExprKind::kCall: return CallOp(n);
      case ExprKind::kLet: {
        KILN_ASSIGN_OR_RETURN(double v, Eval(n.args[1]));
        env_[n.args[0].get()] = v;
        return Eval(n.args[2]);
      }
      case ExprKind::kReduce: return ReduceOp(n);
      case ExprKind::kProducerLoad: {
        const auto* op = dynamic_cast<const te::OperationNode*>(n.producer.get());
        if (op == nullptr) return Error("a ProducerLoad without an operation");
        auto vit = values_.find(op);
        if (vit == values_.end()) return Error(absl::StrCat("tensor ", op->name, " read before it is computed"));
        const std::vector<int64_t>& shape = shapes_[op];
        if (n.args.size() != shape.size())
          return Error(absl::StrCat("tensor ", op->name, " read with ", n.args.size(), " indices"));
        int64_t flat = 0;
        std::vector<int64_t> at;
        for (size_t d = 0; d < shape.size(); ++d) {
          KILN_ASSIGN_OR_RETURN(double iv, Eval(n.args[d]));
          const int64_t i = static_cast<int64_t>(iv);
          at.push_back(i);
          if (i < 0 || i >= shape[d])
            return Error(absl::StrCat("out-of-bounds read of ", op->name, " at (",
                                      absl::StrJoin(at, ", "), "...) of shape (",
                                      absl::StrJoin(shape, ", "), ")"));
          flat = flat * shape[d] + i;
        }
        return vit->second[static_cast<size_t>(n.int_value)][static_cast<size_t>(flat)];
      }
      default: return Error(absl::StrCat("unsupported expression kind ", static_cast<int>(n.kind)));
    }
  }

  absl::StatusOr<double> Binary(const ExprNode& n) {
    KILN_ASSIGN_OR_RETURN(double x, Eval(n.args[0]));
    KILN_ASSIGN_OR_RETURN(double y, Eval(n.args[1]));
    const DataType at = n.args[0]->dtype;
    if (at.is_float()) {
      double r = 0;
      switch (n.kind) {
        case ExprKind::kAdd: r = x + y; break;
        case ExprKind::kSub: r = x - y; break;
        case ExprKind::kMul: r = x * y; break;
        case ExprKind::kDiv: r = x / y; break;
        case ExprKind::kMod: r = std::fmod(x, y); break;
        case ExprKind::kMin: r = (std::isnan(x) || std::isnan(y)) ? NAN : std::min(x, y); break;
        case ExprKind::kMax: r = (std::isnan(x) || std::isnan(y)) ? NAN : std::max(x, y); break;
        case ExprKind::kEQ: return x == y ? 1.0 : 0.0;
        case ExprKind::kNE: return x != y ? 1.0 : 0.0;
        case ExprKind::kLT: return x < y ? 1.0 : 0.0;
        case ExprKind::kLE: return x <= y ? 1.0 : 0.0;
        case ExprKind::kGT: return x > y ? 1.0 : 0.0;
        case ExprKind::kGE: return x >= y ? 1.0 : 0.0;
        default: return Error("a float operand of an integer-only operation");
      }
      return Round(r, n.dtype);
    }
    const int64_t a = static_cast<int64_t>(x), b = static_cast<int64_t>(y);
    int64_t r = 0;
    auto wrapped = [](uint64_t v) { return static_cast<int64_t>(v); };
    switch (n.kind) {
      case ExprKind::kAdd: r = wrapped(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); break;
      case ExprKind::kSub: r = wrapped(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); break;
      case ExprKind::kMul: r = wrapped(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); break;
      case ExprKind::kDiv: case ExprKind::kMod: case ExprKind::kFloorDiv: case ExprKind::kFloorMod: {
        if (b == 0) return Error("integer division by zero");
        int64_t q = a / b, m = a % b;
        if ((n.kind == ExprKind::kFloorDiv || n.kind == ExprKind::kFloorMod) && m != 0 &&
            ((m < 0) != (b < 0))) {
          q -= 1;
          m += b;
        }
        r = (n.kind == ExprKind::kDiv || n.kind == ExprKind::kFloorDiv) ? q : m;
        break;
      }
      case ExprKind::kMin: r = std::min(a, b); break;
      case ExprKind::kMax: r = std::max(a, b); break;
      case ExprKind::kEQ: return a == b ? 1.0 : 0.0;
      case ExprKind::kNE: return a != b ? 1.0 : 0.0;
      case ExprKind::kLT: return a < b ? 1.0 : 0.0;
      case ExprKind::kLE: return a <= b ? 1.0 : 0.0;
      case ExprKind::kGT: return a > b ? 1.0 : 0.0;
      case ExprKind::kGE: return a >= b ? 1.0 : 0.0;
      case ExprKind::kAnd: return (a != 0 && b != 0) ? 1.0 : 0.0;
      case ExprKind::kOr: return (a != 0 || b != 0) ? 1.0 : 0.0;
      default: return Error("bad integer operation");
    }
    return static_cast<double>(Wrap(r, n.dtype));
  }

  absl::StatusOr<double> CallOp(const ExprNode& n) {
    const std::string& f = n.name;
    if (f == "if_then_else" && n.args.size() == 3) {
      KILN_ASSIGN_OR_RETURN(double c, Eval(n.args[0]));
      return Eval(n.args[c != 0 ? 1 : 2]);
    }
    if (f == "likely" && n.args.size() == 1) return Eval(n.args[0]);
    std::vector<double> a;
    for (const PrimExpr& arg : n.args) {
      KILN_ASSIGN_OR_RETURN(double v, Eval(arg));
      a.push_back(v);
    }
    if (a.size() == 1) {
      const double x = a[0];
      double r = 0;
      if (f == "exp") r = std::exp(x);
      else if (f == "log") r = std::log(x);
      else if (f == "sqrt") r = std::sqrt(x);
      else if (f == "rsqrt") r = 1.0 / std::sqrt(x);
      else if (f == "fabs") r = std::fabs(x);
      else if (f == "isnan") return std::isnan(x) ? 1.0 : 0.0;
      else if (f == "floor") r = std::floor(x);
      else if (f == "ceil") r = std::ceil(x);
      else if (f == "trunc") r = std::trunc(x);
      else if (f == "round") r = std::nearbyint(x);
      else if (f == "tanh") r = std::tanh(x);
      else return Error(absl::StrCat("unknown intrinsic ", f));
      return Round(r, n.dtype);
    }
    return Error(absl::StrCat("unknown intrinsic ", f, " with ", a.size(), " arguments"));
  }

  absl::StatusOr<double> ReduceOp(const ExprNode& n) {
    const DataType t = n.dtype;
    if (n.reduce_kind != tir::ReduceKind::kSum && n.reduce_kind != tir::ReduceKind::kMax &&
        n.reduce_kind != tir::ReduceKind::kMin && n.reduce_kind != tir::ReduceKind::kProd)
      return Error("arg reductions are not supported");
    KILN_ASSIGN_OR_RETURN(double acc, Eval(tir::ReduceIdentity(n.reduce_kind, t)));
    std::vector<int64_t> lo, ext;
    for (const tir::IterVar& iv : n.axes) {
      KILN_ASSIGN_OR_RETURN(int64_t m, ConstInt(iv->dom.min));
      KILN_ASSIGN_OR_RETURN(int64_t x, ConstInt(iv->dom.extent));
      lo.push_back(m);
      ext.push_back(x);
    }
    int64_t total = 1;
    for (int64_t x : ext) total *= std::max<int64_t>(x, 0);
    for (int64_t flat = 0; flat < total; ++flat) {
      int64_t rem = flat;
      for (size_t d = ext.size(); d-- > 0;) {
        env_[n.axes[d]->var.get()] = static_cast<double>(lo[d] + rem % ext[d]);
        rem /= ext[d];
      }
      KILN_ASSIGN_OR_RETURN(double c, Eval(n.args[1]));
      if (c == 0) continue;
      KILN_ASSIGN_OR_RETURN(double v, Eval(n.args[0]));
      if (t.is_float()) {
        switch (n.reduce_kind) {
          case tir::ReduceKind::kSum: acc = Round(acc + v, t); break;
          case tir::ReduceKind::kProd: acc = Round(acc * v, t); break;
          case tir::ReduceKind::kMax: acc = (std::isnan(acc) || std::isnan(v)) ? NAN : std::max(acc, v); break;
          default: acc = (std::isnan(acc) || std::isnan(v)) ? NAN : std::min(acc, v); break;
        }
      } else {
        const int64_t a = static_cast<int64_t>(acc), b = static_cast<int64_t>(v);
        int64_t r = 0;
        switch (n.reduce_kind) {
          case tir::ReduceKind::kSum: r = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); break;
          case tir::ReduceKind::kProd: r = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); break;
          case tir::ReduceKind::kMax: r = std::max(a, b); break;
          default: r = std::min(a, b); break;
        }
        acc = static_cast<double>(Wrap(r, t));
      }
    }
    return acc;
  }

  absl::flat_hash_map<const te::OperationNode*, std::vector<std::vector<double>>> values_;
  absl::flat_hash_map<const te::OperationNode*, std::vector<int64_t>> shapes_;
  absl::flat_hash_map<const ExprNode*, double> env_;
};

void SetElem(HostTensor& t, int64_t i, double v) {
  char* p = static_cast<char*>(t.mutable_raw_data());
  const DataType dt = t.dtype();
  const size_t b = static_cast<size_t>(dt.bytes());
  if (dt.code() == DTypeCode::kFloat && dt.bits() == 32) {
    const float f = static_cast<float>(v);
    std::memcpy(p + i * 4, &f, 4);
  } else if (dt.code() == DTypeCode::kFloat && dt.bits() == 64) {
    std::memcpy(p + i * 8, &v, 8);
  } else if (dt.code() == DTypeCode::kFloat) {
    const uint16_t h = FloatToHalf(static_cast<float>(v));
    std::memcpy(p + i * 2, &h, 2);
  } else if (dt.code() == DTypeCode::kBFloat) {
    const uint16_t h = FloatToBFloat16(static_cast<float>(v));
    std::memcpy(p + i * 2, &h, 2);
  } else {
    const uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(v));
    std::memcpy(p + static_cast<size_t>(i) * b, &u, b);  // little-endian low bytes
  }
}

absl::StatusOr<ComputedCall> Compute(const std::string& text,
                                     const std::vector<std::pair<std::string, std::string>>& inputs,
                                     const std::string* out_type_text) {
  RegisterCoreComputes();  // as ComputeOp does (the nn computes among them)
  std::vector<Var> vars;
  ComputedCall c;
  ShapeVars dims;
  for (const auto& [name, type_text] : inputs) {
    KILN_ASSIGN_OR_RETURN(Type t, ParseType(type_text));
    vars.push_back(MakeVar(name, t));
    const auto* tt = t.as<TensorTypeNode>();
    if (tt == nullptr) return absl::InvalidArgumentError("not a tensor type: " + type_text);
    c.inputs.push_back(te::Placeholder(dims.Shape(tt->shape), tt->dtype, name));
  }
  KILN_ASSIGN_OR_RETURN(Expr e, ParseExpr(text, vars));
  Type out_type;
  if (out_type_text != nullptr) {
    KILN_ASSIGN_OR_RETURN(out_type, ParseType(*out_type_text));
  } else {
    KILN_ASSIGN_OR_RETURN(out_type, types::InferExprType(e));
  }
  c.call = Call(e.as<CallNode>() != nullptr ? Ref<const CallNode>(e.as<CallNode>()) : Call());
  if (!c.call) return absl::InvalidArgumentError("not a call: " + text);
  const auto* op = c.call->op.as<OpNode>();
  if (op == nullptr) return absl::InvalidArgumentError("not an operator call: " + text);
  c.op = op->def;
  const FTCompute* f = OpRegistry::Global().GetFacet<FTCompute>(c.op, kComputeFacet);
  if (f == nullptr) return absl::NotFoundError(absl::StrCat(c.op->name, " has no Compute facet"));
  ComputeCtx ctx{*c.op, c.call->attrs.get(), c.inputs, {}, {}, &dims};
  KILN_RETURN_IF_ERROR(FlattenOutputType(out_type, &dims, &ctx.out_shapes, &ctx.out_dtypes));
  KILN_ASSIGN_OR_RETURN(c.outputs, (*f)(ctx));
  c.out_dtypes = ctx.out_dtypes;
  for (const auto& s : ctx.out_shapes) {
    std::vector<int64_t> v;
    for (const PrimExpr& d : s) {
      int64_t x = -1;  // -1: not static
      tir::IsConstInt(d, &x);
      v.push_back(x);
    }
    c.out_shapes.push_back(v);
  }
  if (c.outputs.size() != c.out_dtypes.size())
    return absl::InternalError(absl::StrCat(c.op->name, ": ", c.outputs.size(), " outputs for ",
                                            c.out_dtypes.size(), " in the type"));
  KILN_RETURN_IF_ERROR(te::ValidateCompute(c.outputs));
  return c;
}

}  // namespace

absl::StatusOr<std::vector<std::vector<double>>> EvalTensors(const std::vector<te::Tensor>& outputs,
                                                             const TensorValues& inputs) {
  RefEval ev;
  for (const auto& [t, v] : inputs) {
    std::vector<int64_t> shape;
    for (const PrimExpr& d : t.shape()) {
      int64_t x = 0;
      if (!tir::IsConstInt(d, &x)) return absl::InvalidArgumentError("EvalTensors: a non-static shape");
      shape.push_back(x);
    }
    ev.SetInput(t, v, shape);
  }
  for (const te::Operation& op : te::PostOrderOps(outputs)) KILN_RETURN_IF_ERROR(ev.RunOp(op));
  std::vector<std::vector<double>> out;
  for (const te::Tensor& t : outputs) out.push_back(ev.Values(t));
  return out;
}

absl::StatusOr<ComputedCall> ComputeCall(
    const std::string& text, const std::vector<std::pair<std::string, std::string>>& inputs) {
  return Compute(text, inputs, nullptr);
}

absl::StatusOr<ComputedCall> ComputeCallWithType(
    const std::string& text, const std::vector<std::pair<std::string, std::string>>& inputs,
    const std::string& out_type) {
  return Compute(text, inputs, &out_type);
}

absl::Status CompareWithInterpreter(const std::string& text,
                                    const std::vector<std::pair<std::string, std::string>>& inputs,
                                    const CompareOptions& options) {
  KILN_ASSIGN_OR_RETURN(ComputedCall c, ComputeCall(text, inputs));
  std::mt19937 rng(options.seed);
  TensorValues tv;
  std::vector<interp::Value> args;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const te::Tensor& t = c.inputs[i];
    std::vector<int64_t> shape;
    int64_t n = 1;
    for (const PrimExpr& d : t.shape()) {
      int64_t x = 0;
      if (!tir::IsConstInt(d, &x))
        return absl::InvalidArgumentError("CompareWithInterpreter needs static input shapes");
      shape.push_back(x);
      n *= x;
    }
    std::vector<double> v;
    auto it = options.values.find(inputs[i].first);
    if (it != options.values.end()) {
      v = it->second;
      if (static_cast<int64_t>(v.size()) != n)
        return absl::InvalidArgumentError(absl::StrCat("values of ", inputs[i].first, ": ", v.size(),
                                                       " for ", n, " elements"));
    } else {
      const DataType dt = t.dtype();
      for (int64_t k = 0; k < n; ++k) {
        if (dt.is_float()) v.push_back(static_cast<double>(static_cast<int>(rng() % 33) - 16) / 8.0);
        else if (dt.is_bool()) v.push_back(static_cast<double>(rng() % 2));
        else if (dt.is_uint()) v.push_back(static_cast<double>(rng() % 16));
        else v.push_back(static_cast<double>(static_cast<int>(rng() % 16) - 8));
      }
    }
    KILN_ASSIGN_OR_RETURN(Ref<HostTensor> ht, HostTensor::Create(t.dtype(), shape));
    for (int64_t k = 0; k < n; ++k) SetElem(*ht, k, v[static_cast<size_t>(k)]);
    // The values as the tensor holds them (rounded / wrapped).
    for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = ht->GetAsDouble(k);
    tv[t] = v;
    args.push_back(interp::Value::Tensor(Ref<const HostTensor>(ht)));
  }
  KILN_ASSIGN_OR_RETURN(interp::Value ref,
                        interp::EvalOp(Op(c.call->op.as<OpNode>()), c.call->attrs, args));
  std::vector<interp::Value> refs;
  if (ref.is_tuple()) refs = ref.fields();
  else refs = {ref};
  if (refs.size() != c.outputs.size())
    return absl::InternalError(absl::StrCat("interpreter gives ", refs.size(), " outputs, compute ",
                                            c.outputs.size()));
  std::vector<std::pair<std::string, std::vector<std::vector<double>>>> results;
  {
    KILN_ASSIGN_OR_RETURN(std::vector<std::vector<double>> got, EvalTensors(c.outputs, tv));
    results.emplace_back("direct", std::move(got));
  }
  for (int pass = 0; pass < 2; ++pass) {
    const bool x86 = pass == 1;
    if (x86 ? !options.x86_schedule : !options.naive_schedule) continue;
    const std::string path = x86 ? "x86 schedule" : "naive schedule";
    auto where = [&](const absl::Status& st) {
      return absl::Status(st.code(), absl::StrCat(text, " (", path, "): ", st.message()));
    };
    absl::StatusOr<te::Schedule> s = te::CreateSchedule(c.outputs);
    if (!s.ok()) return where(s.status());
    if (x86) {
      absl::Status st = te::ScheduleDefaultX86(*s, c.outputs);
      if (!st.ok()) return where(st);
    }
    // LowerSchedule rejects a parameter no stage reads (beta without
    // `center`, pad_value in edge mode, ...): pass only the inputs read.
    std::vector<te::Tensor> params;
    absl::flat_hash_set<const te::OperationNode*> read;
    for (const te::Operation& op : te::PostOrderOps(c.outputs)) read.insert(op.get());
    for (const te::Tensor& t : c.inputs)
      if (read.contains(t.op().get())) params.push_back(t);
    const size_t num_in = params.size();
    params.insert(params.end(), c.outputs.begin(), c.outputs.end());
    absl::StatusOr<tir::PrimFunc> f = te::LowerSchedule(*s, params, "nn_kernel");
    if (!f.ok()) return where(f.status());
    std::vector<std::vector<double>> bufs;
    for (size_t i = 0; i < num_in; ++i) bufs.push_back(tv[params[i]]);
    for (const te::Tensor& t : c.outputs) {
      absl::StatusOr<int64_t> n = te::testing::NumElements(t.shape());
      if (!n.ok()) return where(n.status());
      bufs.emplace_back(static_cast<size_t>(*n), 0.0);
    }
    std::vector<std::vector<double>*> ptrs;
    for (auto& b : bufs) ptrs.push_back(&b);
    absl::Status st = te::testing::RunPrimFunc(*f, ptrs);
    if (!st.ok()) return where(st);
    results.emplace_back(path, std::vector<std::vector<double>>(
                                   bufs.begin() + static_cast<std::ptrdiff_t>(num_in), bufs.end()));
  }
  for (size_t o = 0; o < refs.size(); ++o) {
    const HostTensor& r = *refs[o].tensor();
    const DataType dt = c.outputs[o].dtype();
    if (dt != r.dtype())
      return absl::InternalError(absl::StrCat("output ", o, " dtype ", dt.ToString(), " vs interpreter ",
                                              r.dtype().ToString()));
    if (c.out_shapes[o] != r.shape())
      return absl::InternalError(absl::StrCat("output ", o, " shape (", absl::StrJoin(c.out_shapes[o], ", "),
                                              ") vs interpreter (", absl::StrJoin(r.shape(), ", "), ")"));
    double tol = options.tol;
    if (tol < 0) {
      if (!dt.is_float()) tol = 0;
      else if (dt.code() == DTypeCode::kBFloat) tol = 1e-2;
      else if (dt.bits() == 16) tol = 2e-3;
      else if (dt.bits() == 32) tol = 1e-5;
      else tol = 1e-12;
    }
    for (const auto& [path, got] : results) {
      if (static_cast<int64_t>(got[o].size()) != r.num_elements())
        return absl::InternalError(absl::StrCat(text, " (", path, "): element counts differ"));
      for (int64_t k = 0; k < r.num_elements(); ++k) {
        const double want = r.GetAsDouble(k), have = got[o][static_cast<size_t>(k)];
        if (std::isnan(want) && std::isnan(have)) continue;
        const bool ok = want == have || (std::isfinite(want) && std::isfinite(have) &&
                                         std::fabs(want - have) <= tol * std::max(1.0, std::fabs(want)));
        if (!ok)
          return absl::InternalError(absl::StrCat(text, " (", path, "): output ", o, " element ", k,
                                                  ": compute ", have, ", interpreter ", want));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln::lowering::nn_testing
