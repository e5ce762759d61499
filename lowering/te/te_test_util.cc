// File: lowering/te/te_test_util.cc — the loop-IR interpreter for tests.
#include "lowering/te/te_test_util.h"

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <unordered_map>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"

namespace kiln::te::testing {
namespace {

using tir::ExprKind;
using tir::ExprNode;
using tir::PrimExpr;
using tir::StmtKind;
using tir::StmtNode;
using Value = absl::InlinedVector<double, 4>;

double Normalize(double v, DataType t) {
  if (std::isnan(v) && !t.is_float()) return v;  // poison stays visible
  switch (t.code()) {
    case DTypeCode::kFloat:
    case DTypeCode::kBFloat:
      if (t.bits() == 32 || t.bits() == 16) return static_cast<double>(static_cast<float>(v));
      return v;
    case DTypeCode::kBool:
      return v != 0 ? 1.0 : 0.0;
    case DTypeCode::kInt: {
      double tv = std::trunc(v);
      if (t.bits() >= 64) return tv;
      const int64_t m = int64_t{1} << t.bits();
      int64_t x = static_cast<int64_t>(tv) & (m - 1);
      if (x >= m / 2) x -= m;
      return static_cast<double>(x);
    }
    case DTypeCode::kUInt: {
      double tv = std::trunc(v);
      if (t.bits() >= 64) return tv;
      const int64_t m = int64_t{1} << t.bits();
      return static_cast<double>(static_cast<int64_t>(tv) & (m - 1));
    }
    default:
      return v;
  }
}

struct BufferData {
  std::vector<double>* data = nullptr;
  std::unique_ptr<std::vector<double>> owned;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // empty = row-major
  int64_t elem_offset = 0;
  std::string name;
};

class Interp {
 public:
  absl::Status status = absl::OkStatus();

  void Fail(absl::Status s) {
    if (status.ok()) status = std::move(s);
  }

  void BindVar(const ExprNode* v, double x) { vars_[v] = Value{x}; }

  absl::StatusOr<int64_t> EvalInt(const PrimExpr& e) {
    Value v = Eval(e);
    if (!status.ok()) return status;
    if (v.size() != 1 || std::isnan(v[0])) {
      return absl::InvalidArgumentError(absl::StrCat("expected an integer scalar: ", tir::ToText(e)));
    }
    return static_cast<int64_t>(v[0]);
  }

  absl::Status BindBuffer(const tir::Buffer& b, std::vector<double>* data) {
    BufferData bd;
    bd.name = b->name;
    for (const PrimExpr& d : b->shape) {
      absl::StatusOr<int64_t> x = EvalInt(d);
      if (!x.ok()) return x.status();
      bd.shape.push_back(*x);
    }
    for (const PrimExpr& d : b->strides) {
      absl::StatusOr<int64_t> x = EvalInt(d);
      if (!x.ok()) return x.status();
      bd.strides.push_back(*x);
    }
    if (b->elem_offset) {
      absl::StatusOr<int64_t> x = EvalInt(b->elem_offset);
      if (!x.ok()) return x.status();
      bd.elem_offset = *x;
    }
    int64_t n = 1;
    for (int64_t d : bd.shape) n *= d;
    if (data == nullptr) {
      if (n < 0 || n > (int64_t{1} << 31)) {
        return absl::InvalidArgumentError(absl::StrCat("allocation of ", b->name, " has ", n,
                                                       " elements"));
      }
      bd.owned = std::make_unique<std::vector<double>>(static_cast<size_t>(n),
                                                       std::numeric_limits<double>::quiet_NaN());
      bd.data = bd.owned.get();
    } else {
      if (static_cast<int64_t>(data->size()) != n + bd.elem_offset && bd.strides.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("buffer ", b->name, " needs ", n,
                                                       " elements, the argument has ",
                                                       data->size()));
      }
      bd.data = data;
    }
    buffers_[b->data.get()] = std::move(bd);
    return absl::OkStatus();
  }

  void UnbindBuffer(const tir::Buffer& b) { buffers_.erase(b->data.get()); }

  absl::Status Exec(const tir::Stmt& s) {
    if (!s) return absl::OkStatus();
    const StmtNode& n = *s;
    switch (n.kind) {
      case StmtKind::kFor: {
        auto min = EvalInt(n.a);
        if (!min.ok()) return min.status();
        auto ext = EvalInt(n.b);
        if (!ext.ok()) return ext.status();
        for (int64_t i = 0; i < *ext; ++i) {
          BindVar(n.var.get(), static_cast<double>(*min + i));
          absl::Status st = Exec(n.body0());
          if (!st.ok()) return st;
        }
        vars_.erase(n.var.get());
        return absl::OkStatus();
      }
      case StmtKind::kLetStmt: {
        Value v = Eval(n.a);
        if (!status.ok()) return status;
        vars_[n.var.get()] = v;
        absl::Status st = Exec(n.body0());
        vars_.erase(n.var.get());
        return st;
      }
      case StmtKind::kAttr:
        return Exec(n.body0());
      case StmtKind::kIfThenElse: {
        Value c = Eval(n.a);
        if (!status.ok()) return status;
        if (c.size() != 1) return absl::InvalidArgumentError("vector if condition");
        if (c[0] != 0) return Exec(n.body[0]);
        if (n.body.size() > 1) return Exec(n.body[1]);
        return absl::OkStatus();
      }
      case StmtKind::kSeq:
        for (const tir::Stmt& c : n.body) {
          absl::Status st = Exec(c);
          if (!st.ok()) return st;
        }
        return absl::OkStatus();
      case StmtKind::kStore: {
        Value v = Eval(n.a);
        if (!status.ok()) return status;
        std::vector<Value> idx;
        for (const PrimExpr& i : n.indices) idx.push_back(Eval(i));
        if (!status.ok()) return status;
        const size_t lanes = v.size();
        for (size_t l = 0; l < lanes; ++l) {
          int64_t off = 0;
          absl::Status st = Offset(n.buffer, idx, l, &off, "store to");
          if (!st.ok()) return st;
          (*buffers_[n.buffer->data.get()].data)[static_cast<size_t>(off)] =
              Normalize(v[l], n.buffer->dtype);
        }
        return absl::OkStatus();
      }
      case StmtKind::kAllocate: {
        absl::Status st = BindBuffer(n.buffer, nullptr);
        if (!st.ok()) return st;
        st = Exec(n.body0());
        UnbindBuffer(n.buffer);
        return st;
      }
      case StmtKind::kEvaluate:
        Eval(n.a);
        return status;
      case StmtKind::kAssert: {
        Value c = Eval(n.a);
        if (!status.ok()) return status;
        if (c.empty() || c[0] == 0) {
          return absl::FailedPreconditionError(absl::StrCat("assert failed: ", n.tag));
        }
        return Exec(n.body0());
      }
    }
    return absl::InternalError("unknown statement");
  }

  Value Eval(const PrimExpr& e) {
    if (!status.ok()) return Value{0};
    if (!e) {
      Fail(absl::InvalidArgumentError("null expression"));
      return Value{0};
    }
    const ExprNode& n = *e;
    const DataType t = n.dtype;
    switch (n.kind) {
      case ExprKind::kIntImm:
        return Value{static_cast<double>(n.int_value)};
      case ExprKind::kFloatImm:
        return Value{Normalize(n.float_value, t)};
      case ExprKind::kVar: {
        auto it = vars_.find(&n);
        if (it == vars_.end()) {
          Fail(absl::InvalidArgumentError(absl::StrCat("unbound variable '", n.name, "'")));
          return Value{0};
        }
        return it->second;
      }
      case ExprKind::kAdd: case ExprKind::kSub: case ExprKind::kMul: case ExprKind::kDiv:
      case ExprKind::kMod: case ExprKind::kFloorDiv: case ExprKind::kFloorMod:
      case ExprKind::kMin: case ExprKind::kMax: case ExprKind::kEQ: case ExprKind::kNE:
      case ExprKind::kLT: case ExprKind::kLE: case ExprKind::kGT: case ExprKind::kGE:
      case ExprKind::kAnd: case ExprKind::kOr: {
        Value a = Eval(n.args[0]);
        Value b = Eval(n.args[1]);
        const DataType at = n.args[0]->dtype;
        return Lanewise(a, b, [&](double x, double y) { return Binary(n.kind, at, t, x, y); });
      }
      case ExprKind::kNot: {
        Value a = Eval(n.args[0]);
        for (double& x : a) x = x == 0 ? 1 : 0;
        return a;
      }
      case ExprKind::kSelect: {
        Value c = Eval(n.args[0]);
        Value a = Eval(n.args[1]);
        Value b = Eval(n.args[2]);
        const size_t lanes = std::max({c.size(), a.size(), b.size()});
        Value r(lanes);
        for (size_t l = 0; l < lanes; ++l) {
          r[l] = Lane(c, l) != 0 ? Lane(a, l) : Lane(b, l);
        }
        return r;
      }
      case ExprKind::kCast: {
        Value a = Eval(n.args[0]);
        for (double& x : a) x = Normalize(x, t);
        return a;
      }
      case ExprKind::kCall:
        return Call(n);
      case ExprKind::kLoad: {
        std::vector<Value> idx;
        for (const PrimExpr& i : n.args) idx.push_back(Eval(i));
        if (!status.ok()) return Value{0};
        size_t lanes = 1;
        for (const Value& v : idx) lanes = std::max(lanes, v.size());
        Value r(lanes);
        for (size_t l = 0; l < lanes; ++l) {
          int64_t off = 0;
          absl::Status st = Offset(n.buffer, idx, l, &off, "load from");
          if (!st.ok()) {
            Fail(st);
            return Value{0};
          }
          r[l] = (*buffers_[n.buffer->data.get()].data)[static_cast<size_t>(off)];
        }
        return r;
      }
      case ExprKind::kRamp: {
        Value base = Eval(n.args[0]);
        Value stride = Eval(n.args[1]);
        Value r(static_cast<size_t>(t.lanes()));
        for (size_t l = 0; l < r.size(); ++l) r[l] = base[0] + static_cast<double>(l) * stride[0];
        return r;
      }
      case ExprKind::kBroadcast: {
        Value v = Eval(n.args[0]);
        return Value(static_cast<size_t>(t.lanes()), v[0]);
      }
      case ExprKind::kLet: {
        Value v = Eval(n.args[1]);
        const ExprNode* var = n.args[0].get();
        auto old = vars_.find(var);
        const bool had = old != vars_.end();
        Value saved = had ? old->second : Value{};
        vars_[var] = v;
        Value r = Eval(n.args[2]);
        if (had) {
          vars_[var] = saved;
        } else {
          vars_.erase(var);
        }
        return r;
      }
      default:
        Fail(absl::InvalidArgumentError(absl::StrCat("cannot evaluate ",
                                                     tir::ExprKindName(n.kind),
                                                     " (not lowered?): ", tir::ToText(e))));
        return Value{0};
    }
  }

 private:
  static double Lane(const Value& v, size_t l) { return v.size() == 1 ? v[0] : v[l]; }

  template <typename F>
  Value Lanewise(const Value& a, const Value& b, F f) {
    const size_t lanes = std::max(a.size(), b.size());
    Value r(lanes);
    for (size_t l = 0; l < lanes; ++l) r[l] = f(Lane(a, l), Lane(b, l));
    return r;
  }

  double Binary(ExprKind k, DataType at, DataType t, double x, double y) {
    const bool fl = at.is_float();
    auto ints = [&](auto op) -> double {
      if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<double>::quiet_NaN();
      return Normalize(static_cast<double>(op(static_cast<int64_t>(x), static_cast<int64_t>(y))), t);
    };
    switch (k) {
      case ExprKind::kAdd: return fl ? Normalize(x + y, t) : ints([](int64_t a, int64_t b) { return a + b; });
      case ExprKind::kSub: return fl ? Normalize(x - y, t) : ints([](int64_t a, int64_t b) { return a - b; });
      case ExprKind::kMul: return fl ? Normalize(x * y, t) : ints([](int64_t a, int64_t b) { return a * b; });
      case ExprKind::kDiv:
      case ExprKind::kMod:
      case ExprKind::kFloorDiv:
      case ExprKind::kFloorMod: {
        if (fl) {
          if (k == ExprKind::kDiv) return Normalize(x / y, t);
          if (k == ExprKind::kMod) return Normalize(std::fmod(x, y), t);
          if (k == ExprKind::kFloorDiv) return Normalize(std::floor(x / y), t);
          return Normalize(x - std::floor(x / y) * y, t);
        }
        if (y == 0) {
          Fail(absl::InvalidArgumentError("integer division by zero"));
          return 0;
        }
        return ints([k](int64_t a, int64_t b) {
          int64_t q = a / b;
          int64_t r = a % b;
          if (k == ExprKind::kDiv) return q;
          if (k == ExprKind::kMod) return r;
          if (r != 0 && ((r < 0) != (b < 0))) {
            --q;
            r += b;
          }
          return k == ExprKind::kFloorDiv ? q : r;
        });
      }
      case ExprKind::kMin:
      case ExprKind::kMax:
        if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<double>::quiet_NaN();
        return k == ExprKind::kMin ? std::min(x, y) : std::max(x, y);
      case ExprKind::kEQ: return x == y;
      case ExprKind::kNE: return x != y;
      case ExprKind::kLT: return x < y;
      case ExprKind::kLE: return x <= y;
      case ExprKind::kGT: return x > y;
      case ExprKind::kGE: return x >= y;
      case ExprKind::kAnd: return (x != 0) && (y != 0);
      case ExprKind::kOr: return (x != 0) || (y != 0);
      default: return 0;
    }
  }

  Value Call(const ExprNode& n) {
    const std::string& f = n.name;
    if (f == "if_then_else" && n.args.size() == 3) {
      Value c = Eval(n.args[0]);
      if (c.size() != 1) {
        Fail(absl::InvalidArgumentError("vector if_then_else condition"));
        return Value{0};
      }
      return Eval(c[0] != 0 ? n.args[1] : n.args[2]);
    }
    std::vector<Value> a;
    for (const PrimExpr& x : n.args) a.push_back(Eval(x));
    if (!status.ok()) return Value{0};
    if (f == "likely" && a.size() == 1) return a[0];
    auto unary = [&](double (*fn)(double)) {
      Value r = a[0];
      for (double& x : r) x = Normalize(fn(x), n.dtype);
      return r;
    };
    if (a.size() == 1) {
      if (f == "isnan") {
        Value r = a[0];
        for (double& x : r) x = std::isnan(x) ? 1 : 0;
        return r;
      }
      static const std::map<std::string, double (*)(double)> kUnary = {
          {"exp", [](double x) { return std::exp(x); }},
          {"log", [](double x) { return std::log(x); }},
          {"sqrt", [](double x) { return std::sqrt(x); }},
          {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
          {"tanh", [](double x) { return std::tanh(x); }},
          {"sigmoid", [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
          {"erf", [](double x) { return std::erf(x); }},
          {"fabs", [](double x) { return std::fabs(x); }},
          {"floor", [](double x) { return std::floor(x); }},
          {"ceil", [](double x) { return std::ceil(x); }},
          {"round", [](double x) { return std::nearbyint(x); }},
          {"trunc", [](double x) { return std::trunc(x); }},
          {"sin", [](double x) { return std::sin(x); }},
          {"cos", [](double x) { return std::cos(x); }},
          {"exp2", [](double x) { return std::exp2(x); }},
          {"log2", [](double x) { return std::log2(x); }},
          {"log1p", [](double x) { return std::log1p(x); }},
          {"expm1", [](double x) { return std::expm1(x); }},
          {"tan", [](double x) { return std::tan(x); }},
          {"asin", [](double x) { return std::asin(x); }},
          {"acos", [](double x) { return std::acos(x); }},
          {"atan", [](double x) { return std::atan(x); }},
          {"sinh", [](double x) { return std::sinh(x); }},
          {"cosh", [](double x) { return std::cosh(x); }},
          {"asinh", [](double x) { return std::asinh(x); }},
          {"acosh", [](double x) { return std::acosh(x); }},
          {"atanh", [](double x) { return std::atanh(x); }},
      };
      auto it = kUnary.find(f);
      if (it != kUnary.end()) return unary(it->second);
    }
    if (a.size() == 2 && (f == "pow" || f == "fmod" || f == "copysign")) {
      return Lanewise(a[0], a[1], [&](double x, double y) {
        double r = f == "pow" ? std::pow(x, y) : f == "fmod" ? std::fmod(x, y) : std::copysign(x, y);
        return Normalize(r, n.dtype);
      });
    }
    Fail(absl::UnimplementedError(absl::StrCat("RunPrimFunc: unknown call ", f, "/", a.size())));
    return Value{0};
  }

  absl::Status Offset(const tir::Buffer& b, const std::vector<Value>& idx, size_t lane,
                      int64_t* off, absl::string_view what) {
    auto it = buffers_.find(b->data.get());
    if (it == buffers_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " buffer '", b->name,
                                                     "', which is not allocated here"));
    }
    const BufferData& bd = it->second;
    std::vector<int64_t> ix;
    for (const Value& v : idx) {
      double x = Lane(v, lane);
      if (std::isnan(x)) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " '", b->name, "' with an index read from uninitialized memory"));
      }
      ix.push_back(static_cast<int64_t>(x));
    }
    const int64_t size = static_cast<int64_t>(bd.data->size());
    auto oob = [&]() {
      return absl::OutOfRangeError(absl::StrCat("out-of-bounds ", what, " '", b->name, "'[",
                                                absl::StrJoin(ix, ", "), "] (shape [",
                                                absl::StrJoin(bd.shape, ", "), "])"));
    };
    int64_t flat = 0;
    if (ix.size() == bd.shape.size() && !(ix.size() == 1 && !bd.strides.empty())) {
      for (size_t d = 0; d < ix.size(); ++d) {
        if (ix[d] < 0 || ix[d] >= bd.shape[d]) return oob();
        if (bd.strides.empty()) {
          flat = flat * bd.shape[d] + ix[d];
        } else {
          flat += ix[d] * bd.strides[d];
        }
      }
    } else if (ix.size() == 1) {
      flat = ix[0];
    } else {
      return absl::InvalidArgumentError(absl::StrCat(what, " '", b->name, "' with ", ix.size(),
                                                     " indices; it has ", bd.shape.size(),
                                                     " dims"));
    }
    flat += bd.elem_offset;
    if (flat < 0 || flat >= size) return oob();
    *off = flat;
    return absl::OkStatus();
  }

  std::unordered_map<const ExprNode*, Value> vars_;
  std::unordered_map<const ExprNode*, BufferData> buffers_;
};

// Binds every symbolic var named in `shape` from `vars`.
absl::Status BindShapeVars(Interp* in, const std::vector<PrimExpr>& shape, const ShapeVars& vars) {
  for (const PrimExpr& d : shape) {
    absl::Status err = absl::OkStatus();
    tir::PostOrderVisit(d, [&](const ExprNode* e) {
      if (e->kind != ExprKind::kVar) return;
      auto it = vars.find(e->name);
      if (it == vars.end()) {
        if (err.ok()) err = absl::InvalidArgumentError(absl::StrCat("no value for shape var '", e->name, "'"));
        return;
      }
      in->BindVar(e, static_cast<double>(it->second));
    });
    if (!err.ok()) return err;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunPrimFunc(const tir::PrimFunc& f, const std::vector<std::vector<double>*>& args,
                         const ShapeVars& shape_vars) {
  if (!f) return absl::InvalidArgumentError("RunPrimFunc: null function");
  if (args.size() != f->params.size()) {
    return absl::InvalidArgumentError(absl::StrCat("RunPrimFunc(", f->name, "): ", args.size(),
                                                   " arguments for ", f->params.size(),
                                                   " parameters"));
  }
  Interp in;
  for (const tir::Buffer& b : f->params) {
    if (absl::Status s = BindShapeVars(&in, b->shape, shape_vars); !s.ok()) return s;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == nullptr) return absl::InvalidArgumentError("RunPrimFunc: null argument");
    if (absl::Status s = in.BindBuffer(f->params[i], args[i]); !s.ok()) return s;
  }
  absl::Status s = in.Exec(f->body);
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("RunPrimFunc(", f->name, "): ", s.message()));
  return absl::OkStatus();
}

absl::StatusOr<double> EvalScalar(const tir::PrimExpr& e, const ShapeVars& vars) {
  Interp in;
  absl::Status err = absl::OkStatus();
  tir::PostOrderVisit(e, [&](const ExprNode* n) {
    if (n->kind != ExprKind::kVar) return;
    auto it = vars.find(n->name);
    if (it != vars.end()) in.BindVar(n, static_cast<double>(it->second));
  });
  Value v = in.Eval(e);
  if (!in.status.ok()) return in.status;
  if (v.size() != 1) return absl::InvalidArgumentError("EvalScalar: a vector value");
  return v[0];
}

absl::StatusOr<int64_t> NumElements(const std::vector<tir::PrimExpr>& shape, const ShapeVars& vars) {
  int64_t n = 1;
  for (const PrimExpr& d : shape) {
    absl::StatusOr<double> v = EvalScalar(d, vars);
    if (!v.ok()) return v.status();
    n *= static_cast<int64_t>(*v);
  }
  return n;
}

std::vector<double> RandomData(size_t n, uint32_t seed, double lo, double hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> out(n);
  for (double& x : out) x = static_cast<double>(static_cast<float>(dist(gen)));
  return out;
}

double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return std::numeric_limits<double>::infinity();
      continue;
    }
    m = std::max(m, std::fabs(a[i] - b[i]));
  }
  return m;
}

}  // namespace kiln::te::testing
