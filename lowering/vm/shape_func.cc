// File: lowering/vm/shape_func.cc
#include "lowering/vm/shape_func.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <functional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/op.h"
#include "ir/traversal.h"
#include "ir/type.h"
#include "lowering/compute/op_compute.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "ir/strided_slice.h"
#include "ir/tensor.h"

namespace kiln::lowering::vm {
namespace {

using tir::Buffer;
using tir::PrimExpr;
using tir::Stmt;

PrimExpr I(int64_t v) { return tir::IntImm(v); }

// Collects the checks and the stores of one shape function.
class ShapeBuilder {
 public:
  ShapeBuilder(std::string op, Buffer out) : op_(std::move(op)), out_(std::move(out)) {}

  void Check(PrimExpr cond, absl::string_view message) {
    checks_.emplace_back(std::move(cond), absl::StrCat(op_, ": ", message));
  }
  void Set(int64_t dim, PrimExpr extent) {
    stores_.push_back(tir::Store(out_, tir::Cast(DataType::Int(64), std::move(extent)), {I(dim)}));
  }
  // Every check before any store (an assert wraps what follows it).
  Stmt Build() {
    Stmt s = stores_.empty() ? tir::NoOp() : tir::Seq(std::move(stores_));
    for (size_t i = checks_.size(); i-- > 0;) {
      s = tir::AssertStmt(checks_[i].first, checks_[i].second, s);
    }
    return s;
  }

 private:
  std::string op_;
  Buffer out_;
  std::vector<std::pair<PrimExpr, std::string>> checks_;
  std::vector<Stmt> stores_;
};

// The arguments that are constants of the kernel, by buffer, while one
// shape function is built (DataShapeFunction sets it; thread-local because
// models compile on several threads at once).
thread_local const absl::flat_hash_map<const tir::BufferNode*, Ref<const HostTensor>>*
    constant_args = nullptr;

// Entry i of a 1-D buffer (or of a 0-D one, i = 0), as `as`: a load, or the
// literal when the argument is a constant of the kernel.
PrimExpr Entry(const Buffer& b, int64_t i, DataType as) {
  if (constant_args != nullptr) {
    auto it = constant_args->find(b.get());
    if (it != constant_args->end()) {
      const HostTensor& t = *it->second;
      if (as.is_float()) return tir::FloatImm(t.GetAsDouble(i), as);
      return tir::IntImm(t.GetAsInt64(i), as);
    }
  }
  std::vector<PrimExpr> index;
  if (!b->shape.empty()) index.push_back(I(i));
  return tir::Cast(as, tir::Load(b, std::move(index)));
}

// Entry i as int64.
PrimExpr Value(const Buffer& b, int64_t i) { return Entry(b, i, DataType::Int(64)); }

// The static length of a 1-D buffer (the type relation required it).
absl::StatusOr<int64_t> Length(const Buffer& b, absl::string_view op, absl::string_view what) {
  int64_t n = 0;
  if (b->shape.size() != 1 || !tir::IsConstInt(b->shape[0], &n)) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", what, " must be a 1-D tensor of static length"));
  }
  return n;
}

absl::Status Arity(const std::vector<Buffer>& args, size_t n, absl::string_view op) {
  if (args.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": expected ", n, " arguments, the shape function got ", args.size()));
  }
  return absl::OkStatus();
}

// A product of extents that are each >= 0, checked never to pass 2^62 (so
// that comparing it with the input's element count cannot be fooled by a
// wrap-around).
PrimExpr CheckedProduct(ShapeBuilder& b, const std::vector<PrimExpr>& dims,
                        absl::string_view what) {
  constexpr int64_t kMax = int64_t{1} << 62;
  PrimExpr p = I(1);
  for (const PrimExpr& d : dims) {
    b.Check(tir::Or(tir::LE(d, I(1)), tir::LE(p, tir::FloorDiv(I(kMax), tir::Max(d, I(1))))),
            absl::StrCat(what, " has more than 2^62 elements"));
    p = p * d;
  }
  return p;
}

// dyn.reshape(data, newshape): ONNX Reshape's codes. A positive entry is the
// extent; 0 copies the input's extent at that position (unless allowzero:
// then it is 0); -1 (at most one) takes what is left.
absl::StatusOr<Stmt> Reshape(const CallNode& call, const std::vector<Buffer>& args,
                             ShapeBuilder& b) {
  KILN_RETURN_IF_ERROR(Arity(args, 2, "dyn.reshape"));
  const auto* attrs = call.attrs.as<DynReshapeAttrs>();
  const bool allowzero = attrs != nullptr && attrs->allowzero;
  const Buffer& x = args[0];
  KILN_ASSIGN_OR_RETURN(int64_t n, Length(args[1], "dyn.reshape", "newshape"));
  const int64_t r = static_cast<int64_t>(x->shape.size());
  std::vector<PrimExpr> codes, known;
  PrimExpr unknowns = I(0);
  for (int64_t i = 0; i < n; ++i) {
    PrimExpr v = Value(args[1], i);
    b.Check(tir::GE(v, I(-1)),
            absl::StrCat("newshape entry ", i, " is below -1 (entries are extents, 0 or -1)"));
    if (!allowzero) {
      if (i < r) {
        v = tir::Select(tir::EQ(v, I(0)), x->shape[static_cast<size_t>(i)], v);
      } else {
        b.Check(tir::NE(v, I(0)),
                absl::StrCat("newshape entry ", i, " is 0 (copy the input's extent), but the "
                             "input has only ", r, " dims"));
      }
    }
    unknowns = unknowns + tir::Select(tir::EQ(v, I(-1)), I(1), I(0));
    codes.push_back(v);
    known.push_back(tir::Select(tir::EQ(v, I(-1)), I(1), v));
  }
  b.Check(tir::LE(unknowns, I(1)), "newshape has more than one -1");
  PrimExpr total = I(1);
  for (const PrimExpr& d : x->shape) total = total * tir::Cast(DataType::Int(64), d);
  PrimExpr product = CheckedProduct(b, known, "newshape");
  PrimExpr inferred = tir::FloorDiv(total, tir::Max(product, I(1)));
  b.Check(tir::Select(tir::EQ(unknowns, I(0)), tir::EQ(product, total),
                      tir::And(tir::NE(product, I(0)),
                               tir::EQ(tir::FloorMod(total, tir::Max(product, I(1))), I(0)))),
          "newshape does not fit the input's element count (the product of its extents, with a "
          "-1 inferred, must equal it)");
  for (int64_t i = 0; i < n; ++i) {
    const PrimExpr& v = codes[static_cast<size_t>(i)];
    b.Set(i, tir::Select(tir::EQ(v, I(-1)), inferred, v));
  }
  return b.Build();
}

// dyn.broadcast_to(data, shape): the output is `shape`; each of the input's
// extents (right-aligned) must be 1 or equal to it.
absl::StatusOr<Stmt> BroadcastTo(const CallNode&, const std::vector<Buffer>& args,
                                 ShapeBuilder& b) {
  KILN_RETURN_IF_ERROR(Arity(args, 2, "dyn.broadcast_to"));
  const Buffer& x = args[0];
  KILN_ASSIGN_OR_RETURN(int64_t n, Length(args[1], "dyn.broadcast_to", "shape"));
  const int64_t r = static_cast<int64_t>(x->shape.size());
  if (r > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("dyn.broadcast_to: the input has ", r, " dims, the shape ", n));
  }
  std::vector<PrimExpr> dims;
  for (int64_t i = 0; i < n; ++i) {
    PrimExpr v = Value(args[1], i);
    b.Check(tir::GE(v, I(0)), absl::StrCat("shape entry ", i, " is negative"));
    if (i >= n - r) {
      PrimExpr xd = tir::Cast(DataType::Int(64), x->shape[static_cast<size_t>(i - (n - r))]);
      b.Check(tir::Or(tir::EQ(xd, I(1)), tir::EQ(xd, v)),
              absl::StrCat("the input's dim ", i - (n - r), " is neither 1 nor shape entry ", i));
    }
    dims.push_back(v);
  }
  CheckedProduct(b, dims, "shape");
  for (int64_t i = 0; i < n; ++i) b.Set(i, dims[static_cast<size_t>(i)]);
  return b.Build();
}

// dyn.zeros(shape), dyn.ones(shape), dyn.full(value, shape).
std::function<absl::StatusOr<Stmt>(const CallNode&, const std::vector<Buffer>&, ShapeBuilder&)>
Fill(size_t shape_arg, const char* op) {
  return [shape_arg, op](const CallNode&, const std::vector<Buffer>& args,
                         ShapeBuilder& b) -> absl::StatusOr<Stmt> {
    KILN_RETURN_IF_ERROR(Arity(args, shape_arg + 1, op));
    KILN_ASSIGN_OR_RETURN(int64_t n, Length(args[shape_arg], op, "shape"));
    std::vector<PrimExpr> dims;
    for (int64_t i = 0; i < n; ++i) {
      PrimExpr v = Value(args[shape_arg], i);
      b.Check(tir::GE(v, I(0)), absl::StrCat("shape entry ", i, " is negative"));
      dims.push_back(v);
    }
    CheckedProduct(b, dims, "shape");
    for (int64_t i = 0; i < n; ++i) b.Set(i, dims[static_cast<size_t>(i)]);
    return b.Build();
  };
}

// dyn.strided_slice(data, begin, end, strides): as ir/strided_slice.h's
// StaticSlice, per axis, with the entries read at run time. Axes beyond
// begin/end/strides are taken whole (stride 1).
absl::StatusOr<Stmt> StridedSlice(const CallNode& call, const std::vector<Buffer>& args,
                                  ShapeBuilder& b) {
  KILN_RETURN_IF_ERROR(Arity(args, 4, "dyn.strided_slice"));
  const auto* attrs = call.attrs.as<DynStridedSliceAttrs>();
  const bool size_mode = attrs != nullptr && attrs->slice_mode == "size";
  const Buffer& x = args[0];
  KILN_ASSIGN_OR_RETURN(int64_t nb, Length(args[1], "dyn.strided_slice", "begin"));
  KILN_ASSIGN_OR_RETURN(int64_t ne, Length(args[2], "dyn.strided_slice", "end"));
  KILN_ASSIGN_OR_RETURN(int64_t ns, Length(args[3], "dyn.strided_slice", "strides"));
  const int64_t nd = static_cast<int64_t>(x->shape.size());
  auto clamp = [](PrimExpr v, PrimExpr lo, PrimExpr hi) { return tir::Max(tir::Min(v, hi), lo); };
  for (int64_t d = 0; d < nd; ++d) {
    const PrimExpr n = tir::Cast(DataType::Int(64), x->shape[static_cast<size_t>(d)]);
    PrimExpr st = I(1);
    if (!size_mode && d < ns) {
      PrimExpr raw = Value(args[3], d);
      b.Check(tir::NE(raw, I(0)), absl::StrCat("strides entry ", d, " is 0"));
      st = clamp(raw, I(-kSliceBig), I(kSliceBig));
    }
    const PrimExpr pos = tir::GT(st, I(0));
    const PrimExpr lo = tir::Select(pos, I(0), I(-1));
    const PrimExpr hi = tir::Select(pos, n, n - 1);
    auto norm = [&](PrimExpr v) {
      v = clamp(v, I(-kSliceBig), I(kSliceBig));
      return clamp(tir::Select(tir::LT(v, I(0)), v + n, v), lo, hi);
    };
    const PrimExpr begin = d < nb ? norm(Value(args[1], d)) : tir::Select(pos, I(0), n - 1);
    PrimExpr end;
    if (size_mode) {
      const PrimExpr size = d < ne ? Value(args[2], d) : I(-1);
      end = tir::Select(tir::LT(size, I(0)), n,
                        tir::Min(n, begin + tir::Min(size, I(kSliceBig))));
    } else {
      end = d < ne ? norm(Value(args[2], d)) : tir::Select(pos, n, I(-1));
    }
    const PrimExpr len = tir::Select(pos, end - begin, begin - end);
    const PrimExpr step = tir::Select(pos, st, I(0) - st);
    b.Set(d, tir::Select(tir::LE(len, I(0)), I(0),
                         tir::FloorDiv(len + step - 1, tir::Max(step, I(1)))));
  }
  return b.Build();
}

// dyn.expand_dims(data, axis): num_newaxis unit dims at the run-time axis
// (-rank-1 .. rank).
absl::StatusOr<Stmt> ExpandDims(const CallNode& call, const std::vector<Buffer>& args,
                                ShapeBuilder& b) {
  KILN_RETURN_IF_ERROR(Arity(args, 2, "dyn.expand_dims"));
  const auto* attrs = call.attrs.as<DynExpandDimsAttrs>();
  const int64_t k = attrs != nullptr ? attrs->num_newaxis : 1;
  const Buffer& x = args[0];
  const int64_t r = static_cast<int64_t>(x->shape.size());
  const PrimExpr raw = Value(args[1], 0);
  b.Check(tir::And(tir::GE(raw, I(-r - 1)), tir::LE(raw, I(r))),
          absl::StrCat("axis is out of range for a ", r, "-D input (expected ", -r - 1, "..", r,
                       ")"));
  const PrimExpr axis = tir::Select(tir::LT(raw, I(0)), raw + (r + 1), raw);
  // Output dim j: the input's dim j before the axis, 1 for the k new ones,
  // the input's dim j - k after them.
  for (int64_t j = 0; j < r + k; ++j) {
    PrimExpr before = j < r ? tir::Cast(DataType::Int(64), x->shape[static_cast<size_t>(j)]) : I(1);
    PrimExpr after =
        j - k >= 0 ? tir::Cast(DataType::Int(64), x->shape[static_cast<size_t>(j - k)]) : I(1);
    b.Set(j, tir::Select(tir::LT(I(j), axis), before,
                         tir::Select(tir::LT(I(j), axis + k), I(1), after)));
  }
  return b.Build();
}

// dyn.arange(start, limit, delta): max(ceil((limit - start) / delta), 0)
// values (integers exactly; floats in double, finite, at most 2^40).
absl::StatusOr<Stmt> Arange(const CallNode&, const std::vector<Buffer>& args, ShapeBuilder& b) {
  KILN_RETURN_IF_ERROR(Arity(args, 3, "dyn.arange"));
  const DataType dt = args[0]->dtype;
  if (dt.is_float()) {
    const DataType f64 = DataType::Float(64);
    auto load = [&](size_t i) { return Entry(args[i], 0, f64); };
    const PrimExpr s = load(0), l = load(1), d = load(2);
    auto finite = [&](const PrimExpr& v) {
      return tir::And(tir::LE(tir::Call(f64, "fabs", {v}), tir::FloatImm(1.7e308, f64)),
                      tir::EQ(v, v));
    };
    b.Check(tir::And(tir::NE(d, tir::FloatImm(0, f64)),
                     tir::And(finite(s), tir::And(finite(l), finite(d)))),
            "delta must be nonzero and start, limit, delta finite");
    const PrimExpr q = tir::Call(f64, "ceil", {tir::Div(l - s, d)});
    const PrimExpr n = tir::Max(q, tir::FloatImm(0, f64));
    b.Check(tir::And(tir::EQ(n, n), tir::LE(n, tir::FloatImm(1099511627776.0, f64))),
            "the range has more than 2^40 values");
    b.Set(0, tir::Cast(DataType::Int(64),
                       tir::Select(tir::EQ(n, n), tir::Min(n, tir::FloatImm(1099511627776.0, f64)),
                                   tir::FloatImm(0, f64))));
    return b.Build();
  }
  const PrimExpr s = Value(args[0], 0), l = Value(args[1], 0), d = Value(args[2], 0);
  b.Check(tir::NE(d, I(0)), "delta must be nonzero");
  // The span of two int64 values can pass 2^63: refuse what is that far.
  constexpr int64_t kHalf = int64_t{1} << 62;
  b.Check(tir::And(tir::And(tir::LE(s, I(kHalf)), tir::GE(s, I(-kHalf))),
                   tir::And(tir::LE(l, I(kHalf)), tir::GE(l, I(-kHalf)))),
          "start and limit must lie within +-2^62");
  const PrimExpr span = l - s;
  const PrimExpr pos = tir::GT(d, I(0));
  // ceil(span / d) when span and d have one sign, else 0.
  const PrimExpr mag = tir::Select(pos, span, I(0) - span);
  const PrimExpr step = tir::Max(tir::Select(pos, d, I(0) - tir::Max(d, I(-kHalf))), I(1));
  const PrimExpr n = tir::Select(tir::LE(mag, I(0)), I(0), tir::FloorDiv(mag + step - 1, step));
  b.Check(tir::LE(n, I(int64_t{1} << 40)), "the range has more than 2^40 values");
  b.Set(0, n);
  return b.Build();
}

// dyn.unsqueeze(data, axes): output rank R = rank + k; axis j is new when
// some entry, normalized by R, names it; the others take the input's dims in
// order. dyn.squeeze(data, axes): the listed input axes (normalized by the
// input's rank), each of extent 1, are dropped. Entries must be in range and
// distinct.
absl::StatusOr<Stmt> SqueezeLike(const std::vector<Buffer>& args, ShapeBuilder& b,
                                 bool unsqueeze) {
  const char* op = unsqueeze ? "dyn.unsqueeze" : "dyn.squeeze";
  KILN_RETURN_IF_ERROR(Arity(args, 2, op));
  const Buffer& x = args[0];
  KILN_ASSIGN_OR_RETURN(int64_t k, Length(args[1], op, "axes"));
  const int64_t r = static_cast<int64_t>(x->shape.size());
  const int64_t n = unsqueeze ? r + k : r;  // the rank the entries index
  if (!unsqueeze && k > r) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", k, " axes for rank ", r));
  }
  std::vector<PrimExpr> norm;
  for (int64_t i = 0; i < k; ++i) {
    PrimExpr a = Value(args[1], i);
    b.Check(tir::And(tir::GE(a, I(-n)), tir::LT(a, I(n))),
            absl::StrCat("axes entry ", i, " is out of range (expected ", -n, "..", n - 1, ")"));
    norm.push_back(tir::Select(tir::LT(a, I(0)), a + n, a));
  }
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = i + 1; j < k; ++j) {
      b.Check(tir::NE(norm[static_cast<size_t>(i)], norm[static_cast<size_t>(j)]),
              absl::StrCat("axes entries ", i, " and ", j, " name the same axis"));
    }
  }
  auto listed = [&](int64_t axis) {
    PrimExpr any = tir::BoolImm(false);
    for (const PrimExpr& a : norm) any = tir::Or(any, tir::EQ(a, I(axis)));
    return any;
  };
  auto dim = [&](int64_t d) { return tir::Cast(DataType::Int(64), x->shape[static_cast<size_t>(d)]); };
  if (unsqueeze) {
    // Output j takes input dim (j - new axes before j) unless it is new.
    PrimExpr before = I(0);  // new axes among 0..j-1
    for (int64_t j = 0; j < n; ++j) {
      const PrimExpr is_new = listed(j);
      PrimExpr src = I(0);
      for (int64_t d = r - 1; d >= 0; --d) src = tir::Select(tir::EQ(I(j) - before, I(d)), dim(d), src);
      b.Set(j, tir::Select(is_new, I(1), src));
      before = before + tir::Select(is_new, I(1), I(0));
    }
    return b.Build();
  }
  // Squeeze: output j is the j-th kept input dim.
  std::vector<PrimExpr> kept_before;  // kept dims among 0..d-1
  PrimExpr kept = I(0);
  for (int64_t d = 0; d < r; ++d) {
    const PrimExpr drop = listed(d);
    b.Check(tir::Or(tir::Not(drop), tir::EQ(dim(d), I(1))),
            absl::StrCat("the input's axis ", d, " is listed but its extent is not 1"));
    kept_before.push_back(tir::Select(drop, I(-1), kept));
    kept = kept + tir::Select(drop, I(0), I(1));
  }
  for (int64_t j = 0; j < r - k; ++j) {
    PrimExpr v = I(0);
    for (int64_t d = r - 1; d >= 0; --d) {
      v = tir::Select(tir::EQ(kept_before[static_cast<size_t>(d)], I(j)), dim(d), v);
    }
    b.Set(j, v);
  }
  return b.Build();
}

struct Builder {
  std::function<absl::StatusOr<Stmt>(const CallNode&, const std::vector<Buffer>&, ShapeBuilder&)>
      build;
  std::vector<size_t> reads;  // the arguments whose values it loads
};

const absl::flat_hash_map<std::string, Builder>& Builders() {
  static const auto* builders = new absl::flat_hash_map<std::string, Builder>{
      {"dyn.reshape", {Reshape, {1}}},
      {"dyn.broadcast_to", {BroadcastTo, {1}}},
      {"dyn.zeros", {Fill(0, "dyn.zeros"), {0}}},
      {"dyn.ones", {Fill(0, "dyn.ones"), {0}}},
      {"dyn.full", {Fill(1, "dyn.full"), {1}}},
      {"dyn.strided_slice", {StridedSlice, {1, 2, 3}}},
      {"dyn.expand_dims", {ExpandDims, {1}}},
      {"dyn.arange", {Arange, {0, 1, 2}}},
      {"dyn.unsqueeze",
       {[](const CallNode&, const std::vector<Buffer>& a, ShapeBuilder& b) {
          return SqueezeLike(a, b, true);
        },
        {1}}},
      {"dyn.squeeze",
       {[](const CallNode&, const std::vector<Buffer>& a, ShapeBuilder& b) {
          return SqueezeLike(a, b, false);
        },
        {1}}},
  };
  return *builders;
}

}  // namespace

bool HasDataShapeFunction(const OpNode& op) { return Builders().contains(op.name()); }

absl::StatusOr<tir::Stmt> DataShapeFunction(
    const CallNode& call, const std::vector<tir::Buffer>& args,
    const std::vector<Ref<const HostTensor>>& constants, const std::vector<bool>& readable,
    const tir::Buffer& out) {
  const auto* op = call.op.as<OpNode>();
  if (op == nullptr) return absl::InvalidArgumentError("a shape function needs an operator call");
  auto it = Builders().find(op->name());
  if (it == Builders().end()) {
    return absl::UnimplementedError(
        absl::StrCat(op->name(), " has no shape function that reads its arguments' values"));
  }
  absl::flat_hash_map<const tir::BufferNode*, Ref<const HostTensor>> by_buffer;
  for (size_t i = 0; i < args.size() && i < constants.size(); ++i) {
    if (constants[i]) by_buffer[args[i].get()] = constants[i];
  }
  for (size_t i : it->second.reads) {
    const bool constant = i < constants.size() && constants[i];
    if (i < args.size() && !constant && (i >= readable.size() || !readable[i])) {
      return absl::UnimplementedError(absl::StrCat(
          op->name(), ": argument ", i, " is not an input of the kernel, so its shape function "
          "cannot read it"));
    }
  }
  ShapeBuilder b(op->name(), out);
  constant_args = &by_buffer;
  absl::StatusOr<Stmt> s = it->second.build(call, args, b);
  constant_args = nullptr;
  return s;
}


// Tensor types of a value type, tuples flattened; false if something else.
bool FlattenTensorTypes(const Type& t, std::vector<const TensorTypeNode*>* out) {
  if (!t) return false;
  if (const auto* tt = t.as<TensorTypeNode>()) {
    out->push_back(tt);
    return true;
  }
  if (const auto* tup = t.as<TupleTypeNode>()) {
    for (const Type& f : tup->fields) {
      if (!FlattenTensorTypes(f, out)) return false;
    }
    return true;
  }
  return false;
}

// Variables named by a dim (its expression's leaves).
void DimVars(const Dim& d, std::set<std::string>* out) {
  if (!d.is_symbolic() || d.expr() == nullptr) return;
  const DimExprNode* e = d.expr();
  if (e->op == DimExprNode::Op::kVar) {
    out->insert(e->name);
    return;
  }
  DimVars(e->a, out);
  DimVars(e->b, out);
}

namespace {

// The output shapes of a primitive function whose output types have extents
// the types cannot relate (two `?` values broadcast together: the type is
// `?`, the run-time extent is whichever is not 1), composed from per-operator
// rules over its body, as TVM composes shape functions: a node whose type
// extents are all known (static or named by a parameter) takes them; an
// elementwise or broadcasting call broadcasts its arguments' shapes (with a
// check that they broadcast); expand_dims inserts 1s; take puts the indices'
// shape in place of its axis. nullopt when some node has no rule.
std::optional<std::vector<std::vector<tir::PrimExpr>>> ComposedShapes(
    const Function& fn, const std::vector<tir::Buffer>& params, ShapeVars& vars,
    const std::set<std::string>& bound, const std::string& kernel,
    std::vector<std::pair<tir::PrimExpr, std::string>>* checks,
    std::vector<std::pair<tir::Var, tir::PrimExpr>>* lets) {
  // A broadcast extent is a variable bound once at the top (the Select it
  // stands for names `prev` twice: written out, a chain of broadcasts would
  // double at every step).
  std::map<std::pair<const tir::ExprNode*, const tir::ExprNode*>, tir::Var> broadcast_of;
  absl::flat_hash_map<const ExprNode*, std::vector<tir::PrimExpr>> shape;
  // A tuple parameter of tensors has one buffer per field (in order); its
  // projections take those fields' shapes.
  absl::flat_hash_map<const ExprNode*, std::vector<std::vector<tir::PrimExpr>>> tuple_param;
  size_t next = 0;
  for (const Var& p : fn->params) {
    const Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
    if (t && t.as<TensorTypeNode>() != nullptr) {
      if (next >= params.size()) return std::nullopt;
      shape[p.get()] = params[next++]->shape;
      continue;
    }
    const auto* tup = t ? t.as<TupleTypeNode>() : nullptr;
    if (tup == nullptr) return std::nullopt;
    std::vector<std::vector<tir::PrimExpr>> fields;
    for (const Type& f : tup->fields) {
      if (f.as<TensorTypeNode>() == nullptr || next >= params.size()) return std::nullopt;
      fields.push_back(params[next++]->shape);
    }
    tuple_param[p.get()] = std::move(fields);
  }
  if (next != params.size()) return std::nullopt;
  auto known = [&](const Shape& s) {
    for (const Dim& d : s) {
      if (d.is_any()) return false;
      std::set<std::string> used;
      DimVars(d, &used);
      for (const std::string& v : used) {
        if (!bound.count(v)) return false;
      }
    }
    return true;
  };
  auto is_one = [](const tir::PrimExpr& e) { return tir::IsConstValue(e, 1); };
  bool ok = true;
  PostOrderVisit(fn->body, [&](const Expr& e) {
    if (!ok || shape.count(e.get())) return;
    const auto* tt = e->checked_type() ? e->checked_type().as<TensorTypeNode>() : nullptr;
    if (e->kind == ExprKind::kTuple || e->kind == ExprKind::kOp) return;
    if (tuple_param.count(e.get())) return;  // its projections are looked up
    if (tt == nullptr) {
      ok = false;
      return;
    }
    if (known(tt->shape)) {
      shape[e.get()] = vars.Shape(tt->shape);
      return;
    }
    if (const auto* get = e.as<TupleGetItemNode>()) {
      auto it = tuple_param.find(get->tuple.get());
      if (it == tuple_param.end() || get->index < 0 ||
          static_cast<size_t>(get->index) >= it->second.size()) {
        ok = false;
        return;
      }
      shape[e.get()] = it->second[static_cast<size_t>(get->index)];
      return;
    }
    const auto* call = e.as<CallNode>();
    const auto* op = call != nullptr ? call->op.as<OpNode>() : nullptr;
    if (op == nullptr) {
      ok = false;
      return;
    }
    std::vector<const std::vector<tir::PrimExpr>*> args;
    if (op->name() == "concatenate" && call->args.size() == 1 && call->args[0].as<TupleNode>()) {
      // The fields' shapes: the axis extents add up, the others are the
      // first field's (the kernel checks that they agree).
      const auto* ca = call->attrs.as<ConcatenateAttrs>();
      const auto& fields = call->args[0].as<TupleNode>()->fields;
      if (ca == nullptr || fields.empty()) {
        ok = false;
        return;
      }
      std::vector<const std::vector<tir::PrimExpr>*> fs;
      for (const Expr& f : fields) {
        auto it = shape.find(f.get());
        if (it == shape.end()) {
          ok = false;
          return;
        }
        fs.push_back(&it->second);
      }
      const int64_t r = static_cast<int64_t>(fs[0]->size());
      const int64_t axis = ca->axis < 0 ? ca->axis + r : ca->axis;
      if (axis < 0 || axis >= r || static_cast<size_t>(r) != tt->shape.size()) {
        ok = false;
        return;
      }
      std::vector<tir::PrimExpr> out = *fs[0];
      for (size_t k = 1; k < fs.size(); ++k) {
        if (fs[k]->size() != static_cast<size_t>(r)) {
          ok = false;
          return;
        }
        out[static_cast<size_t>(axis)] = out[static_cast<size_t>(axis)] + (*fs[k])[static_cast<size_t>(axis)];
      }
      shape[e.get()] = std::move(out);
      return;
    }
    for (const Expr& a : call->args) {
      auto it = shape.find(a.get());
      if (it == shape.end()) {
        ok = false;
        return;
      }
      args.push_back(&it->second);
    }
    std::vector<tir::PrimExpr> out;
    const std::string& name = op->name();
    if (op->def->pattern == OpPattern::kElemWise || op->def->pattern == OpPattern::kBroadcast) {
      size_t rank = 0;
      for (const auto* a : args) rank = std::max(rank, a->size());
      if (rank != tt->shape.size()) {
        ok = false;
        return;
      }
      for (size_t d = 0; d < rank; ++d) {
        std::optional<tir::PrimExpr> dim;
        for (const auto* a : args) {
          if (a->size() + d < rank) continue;
          const tir::PrimExpr& v = (*a)[d - (rank - a->size())];
          if (!dim || is_one(*dim)) {
            dim = v;
          } else if (!is_one(v)) {
            const tir::PrimExpr prev = *dim;
            checks->emplace_back(tir::Or(tir::EQ(prev, v), tir::Or(tir::EQ(prev, tir::IntImm(1)),
                                                                  tir::EQ(v, tir::IntImm(1)))),
                                 absl::StrCat(kernel, ": the operands of ", name,
                                              " do not broadcast (dim ", d, ")"));
            auto key = std::make_pair(prev.get(), v.get());
            auto known = broadcast_of.find(key);
            if (known == broadcast_of.end()) {
              tir::Var var = tir::MakeVar(absl::StrCat("bcast_dim", lets->size()));
              lets->emplace_back(var, tir::Select(tir::EQ(prev, tir::IntImm(1)), v, prev));
              known = broadcast_of.emplace(key, var).first;
            }
            dim = known->second;
          }
        }
        out.push_back(dim ? *dim : tir::IntImm(1));
      }
    } else if (name == "expand_dims" && args.size() == 1) {
      const auto* a = call->attrs.as<ExpandDimsAttrs>();
      const int64_t r = static_cast<int64_t>(args[0]->size());
      if (a == nullptr) {
        ok = false;
        return;
      }
      const int64_t axis = a->axis < 0 ? a->axis + r + 1 : a->axis;
      out = *args[0];
      out.insert(out.begin() + axis, static_cast<size_t>(a->num_newaxis), tir::IntImm(1));
    } else if (call->attrs.as<ReduceAttrs>() != nullptr && args.size() == 1 &&
               op->def->pattern == OpPattern::kCommReduce) {
      // sum, mean, max, ...: the reduced axes dropped, or 1 with keepdims.
      const auto* a = call->attrs.as<ReduceAttrs>();
      const int64_t r = static_cast<int64_t>(args[0]->size());
      std::vector<bool> reduced(static_cast<size_t>(r), !a->axis.has_value());
      for (int64_t ax : a->axis.value_or(std::vector<int64_t>{})) {
        const int64_t k = ax < 0 ? ax + r : ax;
        if (k < 0 || k >= r) {
          ok = false;
          return;
        }
        reduced[static_cast<size_t>(k)] = true;
      }
      for (int64_t k = 0; k < r; ++k) {
        const bool gone = reduced[static_cast<size_t>(k)] != (a->exclude && a->axis.has_value());
        if (!gone) out.push_back((*args[0])[static_cast<size_t>(k)]);
        else if (a->keepdims) out.push_back(tir::IntImm(1));
      }
    } else if (name == "transpose" && args.size() == 1) {
      const auto* a = call->attrs.as<TransposeAttrs>();
      const int64_t r = static_cast<int64_t>(args[0]->size());
      if (a == nullptr) {
        ok = false;
        return;
      }
      const bool reverse = !a->axes.has_value() || a->axes->empty();
      if (!reverse && a->axes->size() != static_cast<size_t>(r)) {
        ok = false;
        return;
      }
      for (int64_t k = 0; k < r; ++k) {
        int64_t from = reverse ? r - 1 - k : (*a->axes)[static_cast<size_t>(k)];
        from = from < 0 ? from + r : from;
        if (from < 0 || from >= r) {
          ok = false;
          return;
        }
        out.push_back((*args[0])[static_cast<size_t>(from)]);
      }
    } else if (name == "take" && args.size() == 2) {
      const auto* a = call->attrs.as<TakeAttrs>();
      if (a == nullptr || !a->axis || a->batch_dims != 0) {
        ok = false;
        return;
      }
      const int64_t r = static_cast<int64_t>(args[0]->size());
      const int64_t axis = *a->axis < 0 ? *a->axis + r : *a->axis;
      out.assign(args[0]->begin(), args[0]->begin() + axis);
      out.insert(out.end(), args[1]->begin(), args[1]->end());
      out.insert(out.end(), args[0]->begin() + axis + 1, args[0]->end());
    } else {
      ok = false;
      return;
    }
    if (out.size() != tt->shape.size()) {
      ok = false;
      return;
    }
    shape[e.get()] = std::move(out);
  });
  if (!ok) return std::nullopt;
  std::vector<std::vector<tir::PrimExpr>> outs;
  std::vector<Expr> results;
  if (const auto* tup = fn->body.as<TupleNode>()) {
    results = tup->fields;
  } else {
    results.push_back(fn->body);
  }
  for (const Expr& r : results) {
    auto it = shape.find(r.get());
    if (it == shape.end()) return std::nullopt;
    outs.push_back(it->second);
  }
  return outs;
}

}  // namespace

absl::StatusOr<tir::PrimFunc> ShapeFunctionFor(const Function& fn, const std::string& name) {
  ShapeVars vars;
  std::vector<tir::Buffer> params;
  std::set<std::string> bound;
  for (const Var& p : fn->params) {
    std::vector<const TensorTypeNode*> ts;
    const Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
    if (!FlattenTensorTypes(t, &ts)) {
      return absl::UnimplementedError(absl::StrCat("VM compiler: kernel ", name,
                                                   " has a parameter that is not tensors"));
    }
    for (const TensorTypeNode* tt : ts) {
      for (const Dim& d : tt->shape) {
        if (auto v = d.var_name()) bound.insert(*v);
      }
      params.push_back(tir::MakeBuffer(absl::StrCat("in", params.size()), tt->dtype,
                                       vars.Shape(tt->shape)));
    }
  }
  std::vector<const TensorTypeNode*> outs;
  const Type ret = fn->body->checked_type();
  if (!FlattenTensorTypes(ret, &outs)) {
    return absl::UnimplementedError(
        absl::StrCat("VM compiler: kernel ", name, " returns something other than tensors"));
  }
  // An output extent that no input dim gives depends on values: the
  // operator's own shape function reads them (shape_func.h). That needs the
  // function to be that one call (FuseOps keeps such calls alone).
  bool data_dependent = false;
  for (const TensorTypeNode* t : outs) {
    for (const Dim& d : t->shape) {
      std::set<std::string> used;
      DimVars(d, &used);
      data_dependent |= d.is_any();
      for (const std::string& v : used) data_dependent |= !bound.count(v);
    }
  }
  const auto* call = fn->body.as<CallNode>();
  if (data_dependent && call != nullptr && call->op.as<OpNode>() != nullptr &&
      HasDataShapeFunction(*call->op.as<OpNode>()) && outs.size() == 1) {
    std::vector<tir::Buffer> args;
    std::vector<bool> readable;
    std::vector<Ref<const HostTensor>> constants;
    for (const Expr& a : call->args) {
      const auto* cn = a.as<ConstantNode>();
      constants.push_back(cn != nullptr ? cn->data : nullptr);
      auto it = std::find_if(fn->params.begin(), fn->params.end(),
                             [&](const Var& p) { return p.get() == a.get(); });
      if (it != fn->params.end() && params.size() == fn->params.size()) {
        args.push_back(params[static_cast<size_t>(it - fn->params.begin())]);
        readable.push_back(true);
        continue;
      }
      // A constant inside the kernel (dyn.full's fill value): only its
      // shape is known here.
      const auto* t = a->checked_type() ? a->checked_type().as<TensorTypeNode>() : nullptr;
      if (t == nullptr) {
        return absl::UnimplementedError(absl::StrCat("VM compiler: kernel ", name,
                                                     ": an argument that is not a tensor"));
      }
      args.push_back(tir::MakeBuffer(absl::StrCat("arg", args.size()), t->dtype,
                                     vars.Shape(t->shape)));
      readable.push_back(false);
    }
    tir::Buffer out = tir::MakeBuffer("shape0", DataType::Int(64),
                                      {tir::IntImm(static_cast<int64_t>(outs[0]->shape.size()))});
    params.push_back(out);
    absl::StatusOr<tir::Stmt> body = DataShapeFunction(*call, args, constants, readable, out);
    if (!body.ok()) {
      return absl::Status(body.status().code(),
                          absl::StrCat("VM compiler: kernel ", name, ": ", body.status().message()));
    }
    return tir::MakePrimFunc(name, std::move(params), *std::move(body),
                             {{"kiln.op_names", "shape_of"}});
  }
  if (data_dependent) {
    std::vector<std::pair<tir::PrimExpr, std::string>> checks;
    std::vector<std::pair<tir::Var, tir::PrimExpr>> lets;
    std::optional<std::vector<std::vector<tir::PrimExpr>>> shapes =
        ComposedShapes(fn, params, vars, bound, name, &checks, &lets);
    if (shapes && shapes->size() == outs.size()) {
      std::vector<tir::Stmt> stores;
      for (size_t j = 0; j < outs.size(); ++j) {
        const std::vector<tir::PrimExpr>& s = (*shapes)[j];
        tir::Buffer out = tir::MakeBuffer(absl::StrCat("shape", j), DataType::Int(64),
                                          {tir::IntImm(static_cast<int64_t>(s.size()))});
        params.push_back(out);
        for (size_t d = 0; d < s.size(); ++d) {
          stores.push_back(tir::Store(out, tir::Cast(DataType::Int(64), s[d]),
                                      {tir::IntImm(static_cast<int64_t>(d))}));
        }
      }
      tir::Stmt body = stores.empty() ? tir::NoOp() : tir::Seq(std::move(stores));
      for (size_t i = checks.size(); i-- > 0;) {
        body = tir::AssertStmt(checks[i].first, checks[i].second, body);
      }
      // The extents first (Selects, evaluated whether or not they broadcast).
      for (size_t i = lets.size(); i-- > 0;) {
        body = tir::LetStmt(lets[i].first, lets[i].second, body);
      }
      return tir::MakePrimFunc(name, std::move(params), std::move(body),
                               {{"kiln.op_names", "shape_of"}});
    }
  }
  std::vector<tir::Stmt> stores;
  for (size_t j = 0; j < outs.size(); ++j) {
    const Shape& shape = outs[j]->shape;
    tir::Buffer out = tir::MakeBuffer(absl::StrCat("shape", j), DataType::Int(64),
                                      {tir::IntImm(static_cast<int64_t>(shape.size()))});
    params.push_back(out);
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d].is_any()) {
        return absl::UnimplementedError(absl::StrCat(
            "VM compiler: output ", j, " of kernel ", name, " has the shape ",
            ShapeToString(shape), ", whose dim ", d,
            " depends on values (data-dependent shape functions are not compiled yet)"));
      }
      std::set<std::string> used;
      DimVars(shape[d], &used);
      for (const std::string& v : used) {
        if (!bound.count(v)) {
          return absl::UnimplementedError(absl::StrCat(
              "VM compiler: output ", j, " of kernel ", name, " has the shape ",
              ShapeToString(shape), ": its dim ", v,
              " is not a dim of any input, so it depends on values (not compiled yet)"));
        }
      }
      stores.push_back(tir::Store(out, tir::Cast(DataType::Int(64), vars.Get(shape[d])),
                                  {tir::IntImm(static_cast<int64_t>(d))}));
    }
  }
  return tir::MakePrimFunc(name, std::move(params), tir::Seq(std::move(stores)),
                           {{"kiln.op_names", "shape_of"}});
}


}  // namespace kiln::lowering::vm
