// File: lowering/passes/tir_eval.cc
#include "lowering/passes/tir_eval.h"

#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir_printer.h"

namespace kiln::tir::testing {

double RoundToFloatType(double v, DataType t) {
  if (!t.is_float() || std::isnan(v) || std::isinf(v)) return v;
  if (t.code() == DTypeCode::kFloat && t.bits() == 32)
    return static_cast<double>(static_cast<float>(v));
  if (t.code() == DTypeCode::kFloat && t.bits() == 64) return v;
  int mant = 0, min_exp = 0;
  double max_finite = 0;
  if (t.code() == DTypeCode::kBFloat) {
    mant = 7;
    min_exp = -126;
    max_finite = std::ldexp(255.0 / 128.0, 127);
  } else if (t.bits() == 16) {
    mant = 10;
    min_exp = -14;
    max_finite = 65504.0;
  } else {
    return v;
  }
  if (v == 0) return v;
  int e = std::ilogb(v);
  if (e < min_exp) e = min_exp;
  double q = std::ldexp(1.0, e - mant);
  double r = std::nearbyint(v / q) * q;
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return r;
}

namespace {

struct Val {
  DataType t;
  std::vector<int64_t> i;  // integers, bools, handles
  std::vector<double> f;   // floats
  int lanes() const { return t.lanes(); }
  bool is_float() const { return t.is_float(); }
  double AsDouble(int l) const { return is_float() ? f[l] : static_cast<double>(i[l]); }
  int64_t AsInt(int l) const { return is_float() ? static_cast<int64_t>(f[l]) : i[l]; }
};

int64_t Wrap(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0 ? 1 : 0;
  int bits = t.bits();
  if (bits >= 64 || bits <= 0) return v;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_uint()) return static_cast<int64_t>(u);
  if (u & (uint64_t{1} << (bits - 1))) u |= ~mask;
  return static_cast<int64_t>(u);
}

int64_t SaturatingToInt(double v, DataType t) {
  if (std::isnan(v)) return 0;
  double lo = -9.2e18, hi = 9.2e18;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return Wrap(static_cast<int64_t>(std::trunc(v)), t);
}

Val MakeVal(DataType t) {
  Val v;
  v.t = t;
  if (t.is_float()) {
    v.f.assign(static_cast<size_t>(t.lanes()), 0.0);
  } else {
    v.i.assign(static_cast<size_t>(t.lanes()), 0);
  }
  return v;
}

DataType WithLanes(DataType t, int lanes) { return DataType(t.code(), t.bits(), lanes); }

struct Storage {
  DataType dtype;
  std::vector<double>* data = nullptr;
  std::string name;
};

class Evaluator {
 public:
  explicit Evaluator(std::string fname) : fname_(std::move(fname)) {}

  absl::Status Error(absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("tir_eval: PrimFunc '", fname_, "': ", what));
  }

  absl::Status BindParams(const PrimFunc& f, std::vector<EvalArg>* args) {
    if (args->size() != f->params.size()) {
      return Error(absl::StrCat("expected ", f->params.size(), " arguments, got ", args->size()));
    }
    // Shape vars first.
    for (size_t p = 0; p < f->params.size(); ++p) {
      const Buffer& b = f->params[p];
      const EvalArg& a = (*args)[p];
      if (a.shape.empty()) continue;
      if (a.shape.size() != b->shape.size()) return Error(absl::StrCat("rank of argument ", p));
      for (size_t d = 0; d < b->shape.size(); ++d) {
        const PrimExpr& dim = b->shape[d];
        if (dim->kind == ExprKind::kVar && !env_.count(dim.get())) {
          Val v = MakeVal(dim->dtype);
          v.i[0] = a.shape[d];
          env_[dim.get()] = v;
        }
      }
    }
    for (size_t p = 0; p < f->params.size(); ++p) {
      const Buffer& b = f->params[p];
      EvalArg& a = (*args)[p];
      KILN_ASSIGN_OR_RETURN(int64_t need, StorageSize(b));
      if (static_cast<int64_t>(a.data.size()) < need) {
        return Error(absl::StrCat("argument ", p, " (", b->name, ") has ", a.data.size(),
                                  " elements, needs ", need));
      }
      Val h = MakeVal(kHandleType);
      env_[b->data.get()] = h;
      storage_[b->data.get()] = Storage{b->dtype, &a.data, b->name};
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> ScalarInt(const PrimExpr& e) {
    KILN_ASSIGN_OR_RETURN(Val v, Eval(e));
    if (v.lanes() != 1) return Error(absl::StrCat("expected a scalar: ", ToText(e)));
    return v.AsInt(0);
  }

  absl::StatusOr<std::vector<int64_t>> Strides(const Buffer& b) {
    std::vector<int64_t> strides(b->shape.size(), 0);
    if (!b->strides.empty()) {
      if (b->strides.size() != b->shape.size()) return Error("strides/shape rank mismatch");
      for (size_t d = 0; d < b->strides.size(); ++d) {
        KILN_ASSIGN_OR_RETURN(strides[d], ScalarInt(b->strides[d]));
      }
      return strides;
    }
    int64_t stride = 1;
    for (size_t k = b->shape.size(); k > 0; --k) {
      size_t d = k - 1;
      if (d < b->axis_align.size() && b->axis_align[d].first > 0) {
        int64_t factor = b->axis_align[d].first, offset = b->axis_align[d].second;
        int64_t m = ((stride % factor) + factor) % factor;
        stride += (((factor + offset - m) % factor) + factor) % factor;
      }
      strides[d] = stride;
      KILN_ASSIGN_OR_RETURN(int64_t dim, ScalarInt(b->shape[d]));
      stride *= dim;
    }
    return strides;
  }

  absl::StatusOr<int64_t> StorageSize(const Buffer& b) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides, Strides(b));
    int64_t size = 1;
    for (size_t d = 0; d < b->shape.size(); ++d) {
      KILN_ASSIGN_OR_RETURN(int64_t dim, ScalarInt(b->shape[d]));
      if (dim <= 0) return int64_t{0};
      size += (dim - 1) * strides[d];
    }
    if (b->elem_offset) {
      KILN_ASSIGN_OR_RETURN(int64_t off, ScalarInt(b->elem_offset));
      size += off;
    }
    return size;
  }

  // Element offsets (one per lane) of an access.
  absl::StatusOr<std::vector<int64_t>> Offsets(const Buffer& b, const std::vector<PrimExpr>& idx,
                                               int* lanes_out) {
    std::vector<Val> vals;
    int lanes = 1;
    for (const PrimExpr& e : idx) {
      KILN_ASSIGN_OR_RETURN(Val v, Eval(e));
      if (v.is_float()) return Error(absl::StrCat("float index ", ToText(e)));
      lanes = std::max(lanes, v.lanes());
      vals.push_back(std::move(v));
    }
    for (const Val& v : vals) {
      if (v.lanes() != 1 && v.lanes() != lanes) return Error("index lanes differ");
    }
    std::vector<int64_t> strides;
    if (idx.size() == b->shape.size()) {
      KILN_ASSIGN_OR_RETURN(strides, Strides(b));
    } else if (idx.size() == 1) {
      strides = {1};
    } else {
      return Error(absl::StrCat("buffer ", b->name, " has ", b->shape.size(),
                                " dims, accessed with ", idx.size(), " indices"));
    }
    int64_t base = 0;
    if (b->elem_offset) {
      KILN_ASSIGN_OR_RETURN(base, ScalarInt(b->elem_offset));
    }
    std::vector<int64_t> out(static_cast<size_t>(lanes), base);
    for (int l = 0; l < lanes; ++l) {
      for (size_t d = 0; d < vals.size(); ++d) {
        out[l] += vals[d].i[vals[d].lanes() == 1 ? 0 : l] * strides[d];
      }
    }
    *lanes_out = lanes;
    return out;
  }

  absl::StatusOr<Storage*> Find(const Buffer& b) {
    auto it = storage_.find(b->data.get());
    if (it == storage_.end())
      return Error(absl::StrCat("buffer ", b->name, " is not allocated here"));
    return &it->second;
  }

  absl::StatusOr<Val> Eval(const PrimExpr& e) {
    if (!e) return Error("null expression");
    const ExprNode& n = *e;
    switch (n.kind) {
      case ExprKind::kIntImm: {
        Val v = MakeVal(n.dtype);
        if (n.dtype.is_float()) {
          v.f[0] = static_cast<double>(n.int_value);
        } else {
          v.i[0] = n.int_value;
        }
        return v;
      }
      case ExprKind::kFloatImm: {
        Val v = MakeVal(n.dtype);
        v.f[0] = RoundToFloatType(n.float_value, n.dtype);
        return v;
      }
      case ExprKind::kStringImm:
        return MakeVal(kHandleType);
      case ExprKind::kVar: {
        auto it = env_.find(e.get());
        if (it == env_.end()) return Error(absl::StrCat("unbound variable ", n.name));
        return it->second;
      }
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
      case ExprKind::kDiv:
      case ExprKind::kMod:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod:
      case ExprKind::kMin:
      case ExprKind::kMax:
      case ExprKind::kEQ:
      case ExprKind::kNE:
      case ExprKind::kLT:
      case ExprKind::kLE:
      case ExprKind::kGT:
      case ExprKind::kGE:
      case ExprKind::kAnd:
      case ExprKind::kOr:
        return EvalBinary(e);
      case ExprKind::kNot: {
        KILN_ASSIGN_OR_RETURN(Val a, Eval(n.args[0]));
        Val v = MakeVal(n.dtype);
        for (int l = 0; l < v.lanes(); ++l) v.i[l] = a.AsInt(a.lanes() == 1 ? 0 : l) == 0;
        return v;
      }
      case ExprKind::kSelect: {
        KILN_ASSIGN_OR_RETURN(Val c, Eval(n.args[0]));
        KILN_ASSIGN_OR_RETURN(Val t, Eval(n.args[1]));
        KILN_ASSIGN_OR_RETURN(Val f, Eval(n.args[2]));
        return SelectLanes(n.dtype, c, t, f);
      }
      case ExprKind::kCast: {
        KILN_ASSIGN_OR_RETURN(Val a, Eval(n.args[0]));
        Val v = MakeVal(n.dtype);
        for (int l = 0; l < v.lanes(); ++l) {
          int src = a.lanes() == 1 ? 0 : l;
          if (n.dtype.is_float()) {
            v.f[l] = RoundToFloatType(a.AsDouble(src), n.dtype);
          } else if (a.is_float()) {
            v.i[l] = n.dtype.is_bool() ? (a.f[src] != 0) : SaturatingToInt(a.f[src], n.dtype);
          } else {
            v.i[l] = Wrap(a.i[src], n.dtype);
          }
        }
        return v;
      }
      case ExprKind::kCall:
        return EvalCall(e);
      case ExprKind::kLoad: {
        int lanes = 1;
        KILN_ASSIGN_OR_RETURN(std::vector<int64_t> off, Offsets(n.buffer, n.args, &lanes));
        KILN_ASSIGN_OR_RETURN(Storage * st, Find(n.buffer));
        Val v = MakeVal(WithLanes(n.buffer->dtype, lanes));
        for (int l = 0; l < lanes; ++l) {
          if (off[l] < 0 || off[l] >= static_cast<int64_t>(st->data->size())) {
            return Error(absl::StrCat("out-of-bounds load ", ToText(e), ": element ", off[l],
                                      " of ", st->data->size()));
          }
          double x = (*st->data)[static_cast<size_t>(off[l])];
          if (v.is_float()) {
            v.f[l] = x;
          } else {
            v.i[l] = static_cast<int64_t>(x);
          }
        }
        return v;
      }
      case ExprKind::kRamp: {
        KILN_ASSIGN_OR_RETURN(Val base, Eval(n.args[0]));
        KILN_ASSIGN_OR_RETURN(Val stride, Eval(n.args[1]));
        Val v = MakeVal(n.dtype);
        for (int l = 0; l < v.lanes(); ++l) {
          if (v.is_float()) {
            v.f[l] = RoundToFloatType(base.f[0] + l * stride.f[0], n.dtype);
          } else {
            v.i[l] = Wrap(base.i[0] + l * stride.i[0], n.dtype);
          }
        }
        return v;
      }
      case ExprKind::kBroadcast: {
        KILN_ASSIGN_OR_RETURN(Val a, Eval(n.args[0]));
        Val v = MakeVal(n.dtype);
        for (int l = 0; l < v.lanes(); ++l) {
          if (v.is_float()) {
            v.f[l] = a.f[0];
          } else {
            v.i[l] = a.i[0];
          }
        }
        return v;
      }
      case ExprKind::kLet: {
        KILN_ASSIGN_OR_RETURN(Val value, Eval(n.args[1]));
        const ExprNode* var = n.args[0].get();
        auto saved = env_.find(var);
        bool had = saved != env_.end();
        Val old = had ? saved->second : Val();
        env_[var] = value;
        absl::StatusOr<Val> r = Eval(n.args[2]);
        if (had) {
          env_[var] = old;
        } else {
          env_.erase(var);
        }
        return r;
      }
      case ExprKind::kReduce:
      case ExprKind::kProducerLoad:
        return Error(absl::StrCat("cannot evaluate ", ExprKindName(n.kind), " (lower it first)"));
    }
    return Error("unknown expression kind");
  }

  absl::StatusOr<Val> SelectLanes(DataType t, const Val& c, const Val& a, const Val& b) {
    Val v = MakeVal(t);
    for (int l = 0; l < v.lanes(); ++l) {
      bool take = c.i[c.lanes() == 1 ? 0 : l] != 0;
      const Val& s = take ? a : b;
      int src = s.lanes() == 1 ? 0 : l;
      if (v.is_float()) {
        v.f[l] = s.f[src];
      } else {
        v.i[l] = s.i[src];
      }
    }
    return v;
  }

  absl::StatusOr<Val> EvalBinary(const PrimExpr& e) {
    const ExprNode& n = *e;
    KILN_ASSIGN_OR_RETURN(Val a, Eval(n.args[0]));
    KILN_ASSIGN_OR_RETURN(Val b, Eval(n.args[1]));
    int lanes = std::max(a.lanes(), b.lanes());
    if ((a.lanes() != 1 && a.lanes() != lanes) || (b.lanes() != 1 && b.lanes() != lanes)) {
      return Error(absl::StrCat("operand lanes differ in ", ToText(e)));
    }
    Val v = MakeVal(WithLanes(n.dtype, lanes));
    bool fl = a.is_float() || b.is_float();
    DataType ot = a.t;
    for (int l = 0; l < lanes; ++l) {
      int la = a.lanes() == 1 ? 0 : l, lb = b.lanes() == 1 ? 0 : l;
      if (fl) {
        double x = a.AsDouble(la), y = b.AsDouble(lb);
        double r = 0;
        bool is_cmp = false;
        switch (n.kind) {
          case ExprKind::kAdd:
            r = x + y;
            break;
          case ExprKind::kSub:
            r = x - y;
            break;
          case ExprKind::kMul:
            r = x * y;
            break;
          case ExprKind::kDiv:
            r = x / y;
            break;
          case ExprKind::kMod:
            r = std::fmod(x, y);
            break;
          case ExprKind::kFloorDiv:
            r = std::floor(x / y);
            break;
          case ExprKind::kFloorMod:
            r = x - std::floor(x / y) * y;
            break;
          case ExprKind::kMin:
            r = y < x ? y : x;
            break;
          case ExprKind::kMax:
            r = x < y ? y : x;
            break;
          case ExprKind::kEQ:
            is_cmp = true;
            r = x == y;
            break;
          case ExprKind::kNE:
            is_cmp = true;
            r = x != y;
            break;
          case ExprKind::kLT:
            is_cmp = true;
            r = x < y;
            break;
          case ExprKind::kLE:
            is_cmp = true;
            r = x <= y;
            break;
          case ExprKind::kGT:
            is_cmp = true;
            r = x > y;
            break;
          case ExprKind::kGE:
            is_cmp = true;
            r = x >= y;
            break;
          default:
            return Error(absl::StrCat("float operands in ", ToText(e)));
        }
        if (is_cmp) {
          v.i[l] = r != 0;
        } else {
          v.f[l] = RoundToFloatType(r, ot.is_float() ? ot : b.t);
        }
        continue;
      }
      int64_t x = a.i[la], y = b.i[lb];
      int64_t r = 0;
      switch (n.kind) {
        case ExprKind::kAdd:
          r = static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
          break;
        case ExprKind::kSub:
          r = static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
          break;
        case ExprKind::kMul:
          r = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
          break;
        case ExprKind::kDiv:
        case ExprKind::kMod:
        case ExprKind::kFloorDiv:
        case ExprKind::kFloorMod: {
          if (y == 0) return Error(absl::StrCat("division by zero in ", ToText(e)));
          int64_t q = x / y, m = x % y;
          if (n.kind == ExprKind::kDiv) {
            r = q;
          } else if (n.kind == ExprKind::kMod) {
            r = m;
          } else {
            if (m != 0 && ((m < 0) != (y < 0))) {
              q -= 1;
              m += y;
            }
            r = n.kind == ExprKind::kFloorDiv ? q : m;
          }
          break;
        }
        case ExprKind::kMin:
          r = std::min(x, y);
          break;
        case ExprKind::kMax:
          r = std::max(x, y);
          break;
        case ExprKind::kEQ:
          r = x == y;
          break;
        case ExprKind::kNE:
          r = x != y;
          break;
        case ExprKind::kLT:
          r = x < y;
          break;
        case ExprKind::kLE:
          r = x <= y;
          break;
        case ExprKind::kGT:
          r = x > y;
          break;
        case ExprKind::kGE:
          r = x >= y;
          break;
        case ExprKind::kAnd:
          r = (x != 0) && (y != 0);
          break;
        case ExprKind::kOr:
          r = (x != 0) || (y != 0);
          break;
        default:
          return Error(absl::StrCat("bad operands in ", ToText(e)));
      }
      v.i[l] = Wrap(r, v.t);
    }
    return v;
  }

  static double Math1(const std::string& name, double x, bool* ok) {
    *ok = true;
    if (name == "exp") return std::exp(x);
    if (name == "exp2") return std::exp2(x);
    if (name == "expm1") return std::expm1(x);
    if (name == "log") return std::log(x);
    if (name == "log2") return std::log2(x);
    if (name == "log1p") return std::log1p(x);
    if (name == "sqrt") return std::sqrt(x);
    if (name == "rsqrt") return 1.0 / std::sqrt(x);
    if (name == "tanh") return std::tanh(x);
    if (name == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
    if (name == "erf") return std::erf(x);
    if (name == "fabs") return std::fabs(x);
    if (name == "floor") return std::floor(x);
    if (name == "ceil") return std::ceil(x);
    if (name == "round") return std::nearbyint(x);
    if (name == "trunc") return std::trunc(x);
    if (name == "sin") return std::sin(x);
    if (name == "cos") return std::cos(x);
    if (name == "tan") return std::tan(x);
    if (name == "asin") return std::asin(x);
    if (name == "acos") return std::acos(x);
    if (name == "atan") return std::atan(x);
    if (name == "sinh") return std::sinh(x);
    if (name == "cosh") return std::cosh(x);
    if (name == "asinh") return std::asinh(x);
    if (name == "acosh") return std::acosh(x);
    if (name == "atanh") return std::atanh(x);
    *ok = false;
    return 0;
  }

  absl::StatusOr<Val> EvalCall(const PrimExpr& e) {
    const ExprNode& n = *e;
    const std::string& name = n.name;
    if (name == "likely" && n.args.size() == 1) return Eval(n.args[0]);
    if (name == "if_then_else" && n.args.size() == 3) {
      KILN_ASSIGN_OR_RETURN(Val c, Eval(n.args[0]));
      if (c.lanes() == 1) return Eval(n.args[c.i[0] != 0 ? 1 : 2]);
      KILN_ASSIGN_OR_RETURN(Val t, Eval(n.args[1]));
      KILN_ASSIGN_OR_RETURN(Val f, Eval(n.args[2]));
      return SelectLanes(n.dtype, c, t, f);
    }
    std::vector<Val> args;
    for (const PrimExpr& a : n.args) {
      KILN_ASSIGN_OR_RETURN(Val v, Eval(a));
      args.push_back(std::move(v));
    }
    Val v = MakeVal(n.dtype);
    if (name == "reinterpret" && args.size() == 1) {
      const Val& a = args[0];
      for (int l = 0; l < v.lanes(); ++l) {
        int src = a.lanes() == 1 ? 0 : l;
        uint64_t bits = 0;
        int nbits = a.t.bits();
        if (a.is_float()) {
          if (nbits == 32) {
            float x = static_cast<float>(a.f[src]);
            uint32_t u = 0;
            std::memcpy(&u, &x, 4);
            bits = u;
          } else if (nbits == 64) {
            std::memcpy(&bits, &a.f[src], 8);
          } else {
            return Error(absl::StrCat("reinterpret of ", a.t.ToString(), " is not supported"));
          }
        } else {
          bits = static_cast<uint64_t>(a.i[src]);
        }
        if (v.is_float()) {
          if (n.dtype.bits() == 32) {
            uint32_t u = static_cast<uint32_t>(bits);
            float x = 0;
            std::memcpy(&x, &u, 4);
            v.f[l] = x;
          } else if (n.dtype.bits() == 64) {
            double x = 0;
            std::memcpy(&x, &bits, 8);
            v.f[l] = x;
          } else {
            return Error(absl::StrCat("reinterpret to ", n.dtype.ToString(), " is not supported"));
          }
        } else {
          v.i[l] = Wrap(static_cast<int64_t>(bits), n.dtype);
        }
      }
      return v;
    }
    if (!n.dtype.is_float()) {
      if (name == "isnan" && args.size() == 1) {
        for (int l = 0; l < v.lanes(); ++l)
          v.i[l] = std::isnan(args[0].f[args[0].lanes() == 1 ? 0 : l]);
        return v;
      }
      return Error(absl::StrCat("cannot evaluate call ", ToText(e)));
    }
    for (int l = 0; l < v.lanes(); ++l) {
      auto arg = [&](size_t k) { return args[k].AsDouble(args[k].lanes() == 1 ? 0 : l); };
      double r = 0;
      bool ok = false;
      if (args.size() == 1) {
        r = Math1(name, arg(0), &ok);
      } else if (args.size() == 2) {
        ok = true;
        if (name == "pow") {
          r = std::pow(arg(0), arg(1));
        } else if (name == "fmod") {
          r = std::fmod(arg(0), arg(1));
        } else if (name == "copysign") {
          r = std::copysign(arg(0), arg(1));
        } else if (name == "ldexp") {
          r = arg(0) * std::exp2(std::floor(arg(1)));
        } else {
          ok = false;
        }
      }
      if (!ok) return Error(absl::StrCat("cannot evaluate call ", ToText(e)));
      v.f[l] = RoundToFloatType(r, n.dtype);
    }
    return v;
  }

  absl::Status Exec(const Stmt& s) {
    if (!s) return Error("null statement");
    const StmtNode& n = *s;
    switch (n.kind) {
      case StmtKind::kFor: {
        KILN_ASSIGN_OR_RETURN(int64_t lo, ScalarInt(n.a));
        KILN_ASSIGN_OR_RETURN(int64_t ext, ScalarInt(n.b));
        const ExprNode* var = n.var.get();
        for (int64_t k = lo; k < lo + ext; ++k) {
          Val v = MakeVal(n.var->dtype);
          v.i[0] = k;
          env_[var] = v;
          KILN_RETURN_IF_ERROR(Exec(n.body0()));
        }
        env_.erase(var);
        return absl::OkStatus();
      }
      case StmtKind::kLetStmt: {
        KILN_ASSIGN_OR_RETURN(Val v, Eval(n.a));
        env_[n.var.get()] = v;
        absl::Status st = Exec(n.body0());
        env_.erase(n.var.get());
        return st;
      }
      case StmtKind::kAttr:
        return Exec(n.body0());
      case StmtKind::kIfThenElse: {
        KILN_ASSIGN_OR_RETURN(Val c, Eval(n.a));
        if (c.lanes() != 1) return Error(absl::StrCat("vector condition in if: ", ToText(n.a)));
        if (c.i[0] != 0) return Exec(n.body[0]);
        if (n.body.size() > 1) return Exec(n.body[1]);
        return absl::OkStatus();
      }
      case StmtKind::kSeq:
        for (const Stmt& c : n.body) KILN_RETURN_IF_ERROR(Exec(c));
        return absl::OkStatus();
      case StmtKind::kStore: {
        int lanes = 1;
        KILN_ASSIGN_OR_RETURN(std::vector<int64_t> off, Offsets(n.buffer, n.indices, &lanes));
        KILN_ASSIGN_OR_RETURN(Val v, Eval(n.a));
        if (v.lanes() != 1 && v.lanes() != lanes) {
          return Error(
              absl::StrCat("store of ", v.lanes(), " lanes to ", lanes, " indices: ", ToText(s)));
        }
        KILN_ASSIGN_OR_RETURN(Storage * st, Find(n.buffer));
        for (int l = 0; l < lanes; ++l) {
          if (off[l] < 0 || off[l] >= static_cast<int64_t>(st->data->size())) {
            return Error(absl::StrCat("out-of-bounds store ", ToText(s), " element ", off[l],
                                      " of ", st->data->size()));
          }
          int src = v.lanes() == 1 ? 0 : l;
          double x = v.AsDouble(src);
          if (st->dtype.is_float()) {
            x = RoundToFloatType(x, st->dtype);
          } else if (v.is_float()) {
            return Error(
                absl::StrCat("float stored into ", st->dtype.ToString(), " buffer: ", ToText(s)));
          } else {
            x = static_cast<double>(Wrap(v.i[src], st->dtype));
          }
          (*st->data)[static_cast<size_t>(off[l])] = x;
        }
        return absl::OkStatus();
      }
      case StmtKind::kAllocate: {
        KILN_ASSIGN_OR_RETURN(int64_t size, StorageSize(n.buffer));
        if (size < 0 || size > (int64_t{1} << 28)) return Error("allocation too large");
        double init =
            n.buffer->dtype.is_float() ? std::numeric_limits<double>::quiet_NaN() : -123456789.0;
        owned_.emplace_back(static_cast<size_t>(size), init);
        const ExprNode* var = n.buffer->data.get();
        auto old = storage_.find(var);
        bool had = old != storage_.end();
        Storage saved = had ? old->second : Storage{};
        storage_[var] = Storage{n.buffer->dtype, &owned_.back(), n.buffer->name};
        env_[var] = MakeVal(kHandleType);
        absl::Status st = Exec(n.body0());
        owned_.pop_back();
        if (had) {
          storage_[var] = saved;
        } else {
          storage_.erase(var);
          env_.erase(var);
        }
        return st;
      }
      case StmtKind::kEvaluate: {
        KILN_ASSIGN_OR_RETURN(Val v, Eval(n.a));
        (void)v;
        return absl::OkStatus();
      }
      case StmtKind::kAssert: {
        KILN_ASSIGN_OR_RETURN(Val c, Eval(n.a));
        if (c.i.empty() || c.i[0] == 0) return Error(absl::StrCat("assertion failed: ", n.tag));
        return Exec(n.body0());
      }
    }
    return Error("unknown statement kind");
  }

  std::unordered_map<const ExprNode*, Val>& env() { return env_; }

 private:
  std::string fname_;
  std::unordered_map<const ExprNode*, Val> env_;
  std::unordered_map<const ExprNode*, Storage> storage_;
  std::deque<std::vector<double>> owned_;
};

}  // namespace

absl::Status EvalPrimFunc(const PrimFunc& f, std::vector<EvalArg>* args) {
  Evaluator ev(f->name);
  KILN_RETURN_IF_ERROR(ev.BindParams(f, args));
  return ev.Exec(f->body);
}

absl::StatusOr<std::vector<EvalArg>> RandomArgs(const PrimFunc& f, uint32_t seed,
                                                const std::map<std::string, int64_t>& dims) {
  Evaluator ev(f->name);
  std::vector<EvalArg> args(f->params.size());
  for (const Buffer& b : f->params) {
    for (const PrimExpr& d : b->shape) {
      if (d->kind != ExprKind::kVar) continue;
      auto it = dims.find(d->name);
      if (it == dims.end()) {
        return absl::InvalidArgumentError(absl::StrCat("RandomArgs: no value for dim ", d->name));
      }
      Val v = MakeVal(d->dtype);
      v.i[0] = it->second;
      ev.env()[d.get()] = v;
    }
  }
  uint64_t state = 0x9e3779b97f4a7c15ULL ^ seed;
  auto next = [&]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>((state >> 11) & ((uint64_t{1} << 53) - 1)) / 9007199254740992.0;
  };
  for (size_t p = 0; p < f->params.size(); ++p) {
    const Buffer& b = f->params[p];
    KILN_ASSIGN_OR_RETURN(int64_t size, ev.StorageSize(b));
    EvalArg& a = args[p];
    bool symbolic = false;
    for (const PrimExpr& d : b->shape) {
      KILN_ASSIGN_OR_RETURN(int64_t v, ev.ScalarInt(d));
      a.shape.push_back(v);
      symbolic |= d->kind != ExprKind::kIntImm;
    }
    if (!symbolic) a.shape.clear();
    a.data.resize(static_cast<size_t>(std::max<int64_t>(size, 0)));
    for (double& x : a.data) {
      double r = next();
      if (b->dtype.is_float()) {
        x = RoundToFloatType(4 * r - 2, b->dtype);
      } else if (b->dtype.is_bool()) {
        x = r < 0.5 ? 0 : 1;
      } else {
        x = std::floor(16 * r) - 8;
      }
    }
  }
  return args;
}

absl::Status ExpectSameResults(const PrimFunc& before, const PrimFunc& after, uint32_t seed,
                               const std::map<std::string, int64_t>& dims, double rel_tol) {
  KILN_ASSIGN_OR_RETURN(std::vector<EvalArg> a1, RandomArgs(before, seed, dims));
  std::vector<EvalArg> a2 = a1;
  KILN_RETURN_IF_ERROR(EvalPrimFunc(before, &a1));
  KILN_RETURN_IF_ERROR(EvalPrimFunc(after, &a2));
  for (size_t p = 0; p < a1.size(); ++p) {
    for (size_t k = 0; k < a1[p].data.size(); ++k) {
      double x = a1[p].data[k], y = a2[p].data[k];
      if (x == y || (std::isnan(x) && std::isnan(y))) continue;
      double err = std::fabs(x - y) / std::max(1.0, std::fabs(x));
      if (err <= rel_tol) continue;
      return absl::InternalError(absl::StrCat("results differ: param ", p, " (",
                                              before->params[p]->name, ") element ", k, ": before ",
                                              x, ", after ", y));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> EvalExpr(const PrimExpr& e, const EvalEnv& env) {
  Evaluator ev("<expr>");
  for (const auto& [var, lanes] : env) {
    Val v = MakeVal(WithLanes(var->dtype, static_cast<int>(lanes.size())));
    for (size_t l = 0; l < lanes.size(); ++l) {
      if (v.is_float()) {
        v.f[l] = RoundToFloatType(lanes[l], var->dtype);
      } else {
        v.i[l] = static_cast<int64_t>(lanes[l]);
      }
    }
    ev.env()[var] = std::move(v);
  }
  KILN_ASSIGN_OR_RETURN(Val r, ev.Eval(e));
  std::vector<double> out(static_cast<size_t>(r.lanes()));
  for (int l = 0; l < r.lanes(); ++l) out[l] = r.AsDouble(l);
  return out;
}

}  // namespace kiln::tir::testing
