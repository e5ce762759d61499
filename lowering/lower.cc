// File: lowering/lower.cc
#include "lowering/lower.h"

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <unordered_map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "ir/op.h"
#include "ir/status_macros.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "ir/type.h"
#include "lowering/compute/op_compute.h"
#include "lowering/passes/pipeline.h"
#include "lowering/strategy/strategy.h"
#include "lowering/te/lower.h"
#include "lowering/te/schedule.h"
#include "lowering/te/schedule_cuda.h"
#include "lowering/te/schedule_x86.h"
#include "lowering/te/te.h"
#include "types/infer_type.h"

namespace kiln::lowering {
namespace {

// Number of tensors a value of type `t` flattens to.
int FlatCount(const Type& t) {
  if (const auto* tup = t.as<TupleTypeNode>()) {
    int n = 0;
    for (const Type& f : tup->fields) n += FlatCount(f);
    return n;
  }
  return 1;
}

// Reads element 0 of a scalar constant as a tir immediate of its dtype.
absl::StatusOr<tir::PrimExpr> ScalarImmediate(const HostTensor& t) {
  DataType d = t.dtype();
  const void* p = t.raw_data();
  auto read = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  switch (d.code()) {
    case DTypeCode::kFloat:
      if (d.bits() == 32) return tir::FloatImm(read(float{}), d);
      if (d.bits() == 64) return tir::FloatImm(read(double{}), d);
      if (d.bits() == 16) return tir::FloatImm(HalfToFloat(read(uint16_t{})), d);
      break;
    case DTypeCode::kBFloat:
      return tir::FloatImm(BFloat16ToFloat(read(uint16_t{})), d);
    case DTypeCode::kInt:
      if (d.bits() == 8) return tir::IntImm(read(int8_t{}), d);
      if (d.bits() == 16) return tir::IntImm(read(int16_t{}), d);
      if (d.bits() == 32) return tir::IntImm(read(int32_t{}), d);
      if (d.bits() == 64) return tir::IntImm(read(int64_t{}), d);
      break;
    case DTypeCode::kUInt:
      if (d.bits() == 8) return tir::IntImm(read(uint8_t{}), d);
      if (d.bits() == 16) return tir::IntImm(read(uint16_t{}), d);
      if (d.bits() == 32) return tir::IntImm(read(uint32_t{}), d);
      if (d.bits() == 64) return tir::IntImm(static_cast<int64_t>(read(uint64_t{})), d);
      break;
    case DTypeCode::kBool:
      return tir::IntImm(read(uint8_t{}) != 0 ? 1 : 0, d);
    default:
      break;
  }
  return absl::UnimplementedError(absl::StrCat("constant of dtype ", d.ToString()));
}

// Whether a tensor (or tuple) type has a `?` extent.
bool HasAnyDim(const Type& t) {
  if (!t) return false;
  if (const auto* tt = t.as<TensorTypeNode>()) {
    for (const Dim& d : tt->shape) {
      if (d.is_any()) return true;
    }
    return false;
  }
  if (const auto* tup = t.as<TupleTypeNode>()) {
    for (const Type& f : tup->fields) {
      if (HasAnyDim(f)) return true;
    }
  }
  return false;
}

// The type dim that names the extent `e` of a lowered tensor: a constant, a
// size variable of `vars` (by name, the same node), or + - * floordiv
// floormod of those; `?` for anything else.
Dim DimOfExtent(const tir::PrimExpr& e, const std::map<std::string, tir::Var>& vars) {
  using tir::ExprKind;
  switch (e->kind) {
    case ExprKind::kIntImm:
      return Dim(e->int_value);
    case ExprKind::kVar: {
      auto it = vars.find(e->name);
      if (it != vars.end() && it->second.get() == e.get()) return Dim::Var(e->name);
      return Dim::Any();
    }
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: {
      if (e->args.size() != 2) return Dim::Any();
      Dim a = DimOfExtent(e->args[0], vars), b = DimOfExtent(e->args[1], vars);
      if (a.is_any() || b.is_any()) return Dim::Any();
      if (e->kind == ExprKind::kAdd) return a + b;
      if (e->kind == ExprKind::kSub) return a - b;
      if (e->kind == ExprKind::kMul) return a * b;
      if (e->kind == ExprKind::kFloorDiv) return Dim::FloorDiv(a, b);
      return Dim::FloorMod(a, b);
    }
    default:
      return Dim::Any();
  }
}

// `t` (a tensor or tuple type) with each tensor's extents taken from the
// lowered tensors `flat[*pos..]`, in order; nullopt when they do not line up.
std::optional<Type> TypeOfLowered(const Type& t, const std::vector<te::Tensor>& flat, size_t* pos,
                                  const std::map<std::string, tir::Var>& vars) {
  if (!t) return std::nullopt;
  if (const auto* tt = t.as<TensorTypeNode>()) {
    if (*pos >= flat.size()) return std::nullopt;
    const std::vector<tir::PrimExpr>& shape = flat[(*pos)++].shape();
    if (shape.size() != tt->shape.size()) return std::nullopt;
    Shape dims;
    for (size_t d = 0; d < shape.size(); ++d) {
      Dim x = DimOfExtent(shape[d], vars);
      // A dim the lowered extent cannot name keeps what the type knew.
      dims.push_back(x.is_any() ? tt->shape[d] : x);
    }
    return Type(MakeTensorType(std::move(dims), tt->dtype));
  }
  if (const auto* tup = t.as<TupleTypeNode>()) {
    std::vector<Type> fields;
    for (const Type& f : tup->fields) {
      std::optional<Type> x = TypeOfLowered(f, flat, pos, vars);
      if (!x) return std::nullopt;
      fields.push_back(*x);
    }
    return Type(MakeTupleType(std::move(fields)));
  }
  return std::nullopt;
}

// Flattens the tensor types of `t` (tuples in order); false for other types.
bool FlatTensorTypes(const Type& t, std::vector<const TensorTypeNode*>* out) {
  if (!t) return false;
  if (const auto* tt = t.as<TensorTypeNode>()) {
    out->push_back(tt);
    return true;
  }
  if (const auto* tup = t.as<TupleTypeNode>()) {
    for (const Type& f : tup->fields) {
      if (!FlatTensorTypes(f, out)) return false;
    }
    return true;
  }
  return false;
}

// `t` with its flat tensor types' shapes replaced by `shapes` in order.
Type WithShapes(const Type& t, const std::vector<Shape>& shapes, size_t* pos) {
  if (const auto* tt = t.as<TensorTypeNode>()) return MakeTensorType(shapes[(*pos)++], tt->dtype);
  const auto* tup = t.as<TupleTypeNode>();
  std::vector<Type> fields;
  for (const Type& f : tup->fields) fields.push_back(WithShapes(f, shapes, pos));
  return MakeTupleType(std::move(fields));
}

// Collects the variables in `e`.
void CollectVars(const tir::PrimExpr& e, absl::flat_hash_set<const tir::ExprNode*>* out) {
  if (!e) return;
  if (e->kind == tir::ExprKind::kVar) {
    out->insert(e.get());
    return;
  }
  for (const tir::PrimExpr& a : e->args) CollectVars(a, out);
}

class Lowerer {
 public:
  Lowerer(const Function& fn, absl::string_view name, const LowerOptions& options,
          bool constants_only = false)
      : fn_(fn), name_(name), options_(options), constants_only_(constants_only) {}

  absl::StatusOr<LoweredFunc> Run() {
    LoweredFunc out;
    for (const Expr& n : PostOrder(fn_->body, /*enter_functions=*/false)) {
      if (const auto* call = n.as<CallNode>()) {
        if (const auto* op = call->op.as<OpNode>()) out.op_names.push_back(op->def->name);
      }
    }
    absl::StatusOr<LoweredFunc> r = Lower(std::move(out));
    if (!r.ok()) {
      return absl::Status(r.status().code(),
                          absl::StrCat("lowering ", name_, " (ops: ",
                                       absl::StrJoin(op_names_, ", "), "): ", r.status().message()));
    }
    return r;
  }

 private:
  absl::StatusOr<LoweredFunc> Lower(LoweredFunc out) {
    op_names_ = out.op_names;
    std::vector<te::Tensor> args;
    // Parameters (tuples flattened).
    for (const Var& p : fn_->params) {
      Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
      if (!t) return absl::InvalidArgumentError(absl::StrCat("parameter %", p->name_hint, " has no type"));
      std::vector<std::vector<tir::PrimExpr>> shapes;
      std::vector<DataType> dtypes;
      KILN_RETURN_IF_ERROR(FlattenOutputType(t, &dims_, &shapes, &dtypes));
      std::vector<te::Tensor> flat;
      for (size_t i = 0; i < shapes.size(); ++i) {
        std::string pname = shapes.size() == 1 ? p->name_hint : absl::StrCat(p->name_hint, "_", i);
        te::Tensor ph = te::Placeholder(shapes[i], dtypes[i], pname);
        flat.push_back(ph);
        args.push_back(ph);
      }
      values_[p.get()] = std::move(flat);
    }
    const size_t num_params = args.size();

    for (const Var& p : fn_->params) {
      dynamic_ |= HasAnyDim(p->checked_type() ? p->checked_type() : p->type_annotation);
    }
    for (const Expr& n : PostOrder(fn_->body, /*enter_functions=*/false)) {
      if (const auto* call = n.as<CallNode>()) {
        dynamic_ |= HasAnyDim(call->checked_type());
        for (const Expr& a : call->args) ++uses_[a.get()];
      } else if (const auto* tup = n.as<TupleNode>()) {
        for (const Expr& f : tup->fields) ++uses_[f.get()];
      } else if (const auto* get = n.as<TupleGetItemNode>()) {
        ++uses_[get->tuple.get()];
      }
    }
    for (const Expr& n : PostOrder(fn_->body, /*enter_functions=*/false)) {
      if (values_.count(n.get())) continue;
      KILN_ASSIGN_OR_RETURN(std::vector<te::Tensor> v, Visit(n, &out, &args));
      values_[n.get()] = std::move(v);
    }
    std::vector<te::Tensor> outputs = values_[fn_->body.get()];
    if (outputs.empty()) return absl::InvalidArgumentError("the function returns no tensor");
    // An output must be computed by this kernel, once: copy params, constants
    // and repeated tensors.
    for (size_t i = 0; i < outputs.size(); ++i) {
      bool repeated = false;
      for (size_t j = 0; j < i; ++j) repeated |= outputs[j] == outputs[i];
      if (outputs[i].op()->kind == te::OpKind::kPlaceholder || repeated) {
        te::Tensor src = outputs[i];
        outputs[i] = te::Compute(
            src.shape(), [&](const std::vector<tir::Var>& idx) {
              return src(std::vector<tir::PrimExpr>(idx.begin(), idx.end()));
            },
            absl::StrCat("T_copy", i), "injective");
      }
    }
    // Constants no stage reads (a weight a strategy re-laid out into a new
    // constant) are not kernel parameters.
    {
      absl::flat_hash_set<const te::OperationNode*> reached;
      for (const te::Operation& op : te::PostOrderOps(outputs)) reached.insert(op.get());
      std::vector<Ref<const HostTensor>> kept;
      std::vector<te::Tensor> kept_tensors;
      for (size_t i = 0; i < constant_tensors_.size(); ++i) {
        if (!reached.count(constant_tensors_[i].op().get())) continue;
        kept.push_back(constants_[i]);
        kept_tensors.push_back(constant_tensors_[i]);
      }
      constants_ = std::move(kept);
      constant_tensors_ = std::move(kept_tensors);
    }
    for (const te::Tensor& c : constant_tensors_) args.push_back(c);
    out.num_inputs = static_cast<int>(args.size());
    out.num_outputs = static_cast<int>(outputs.size());
    (void)num_params;
    for (const te::Tensor& o : outputs) args.push_back(o);
    out.constants = constants_;
    // Another function's kernel will run this one's constants: they are all
    // that is needed (the caller checks they line up with that kernel's).
    if (constants_only_) return out;

    KILN_RETURN_IF_ERROR(te::ValidateCompute(outputs));
    KILN_ASSIGN_OR_RETURN(te::Schedule sched, te::CreateSchedule(outputs));
    if (!options_.naive_schedule) {
      if (used_strategy_) {
        absl::StatusOr<std::vector<std::string>> applied =
            strategy::ScheduleWithStrategies(sched, outputs, target());
        if (applied.ok()) {
          out.strategies = *applied;
        } else {
          // A strategy that cannot schedule this fusion leaves the default
          // schedule (on the same, correct, compute) to do it.
          KILN_ASSIGN_OR_RETURN(sched, te::CreateSchedule(outputs));
        }
      }
      if (options_.gpu) {
        KILN_RETURN_IF_ERROR(
            te::ScheduleDefaultCuda(sched, outputs, options_.gpu->threads_per_block,
                                    options_.gpu->tf32, options_.gpu->wide_wgmma));
      } else {
        KILN_RETURN_IF_ERROR(te::ScheduleDefaultX86(sched, outputs, lanes()));
      }
    } else if (options_.gpu) {
      return absl::InvalidArgumentError(
          "naive_schedule is a CPU reference; a GPU kernel needs its threads bound");
    }
    std::map<std::string, std::string> attrs = {{"kiln.op_names", absl::StrJoin(op_names_, ",")}};
    if (options_.gpu) attrs["target"] = absl::StrCat("cuda -arch=", options_.gpu->arch);
    if (!out.strategies.empty()) attrs["kiln.strategies"] = absl::StrJoin(out.strategies, ",");
    // A parameter no stage reads (zeros_like's input, an unused pad value,
    // ...) is still a kernel parameter: lower with the read ones, then put
    // the others back in their places as plain buffers.
    std::vector<te::Tensor> read_args;
    std::vector<bool> is_read(args.size(), true);
    {
      absl::flat_hash_set<const te::OperationNode*> reached;
      for (const te::Operation& op : te::PostOrderOps(outputs)) reached.insert(op.get());
      for (size_t i = 0; i < args.size(); ++i) {
        is_read[i] = reached.count(args[i].op().get()) > 0;
        if (is_read[i]) read_args.push_back(args[i]);
      }
    }
    KILN_ASSIGN_OR_RETURN(tir::PrimFunc f, te::LowerSchedule(sched, read_args, name_, attrs));
    if (read_args.size() != args.size()) {
      std::vector<tir::Buffer> params;
      size_t next = 0;
      for (size_t i = 0; i < args.size(); ++i) {
        if (is_read[i]) {
          params.push_back(f->params[next++]);
        } else {
          params.push_back(tir::MakeBuffer(args[i].name(), args[i].dtype(), args[i].shape()));
        }
      }
      f = tir::MakePrimFunc(f->name, std::move(params), f->body, f->attrs);
    }
    f = BindExtents(f);
    tir::transform::LoopPassOptions lopts;
    lopts.vector_width = lanes();
    lopts.native_ldexp = target().is_x86() && target().vector_bits >= 512;
    lopts.disabled = options_.disabled_loop_passes;
    if (options_.gpu) lopts.disabled.push_back("lower_intrinsics");
    KILN_ASSIGN_OR_RETURN(out.func, tir::transform::RunLoopPipeline(f, lopts));
    return out;
  }

  absl::StatusOr<std::vector<te::Tensor>> Visit(const Expr& n, LoweredFunc* out,
                                                 std::vector<te::Tensor>* args) {
    (void)out;
    (void)args;
    if (const auto* c = n.as<ConstantNode>()) {
      const HostTensor& t = *c->data;
      if (t.ndim() == 0) {
        KILN_ASSIGN_OR_RETURN(tir::PrimExpr imm, ScalarImmediate(t));
        return std::vector<te::Tensor>{te::Compute(
            {}, [&](const std::vector<tir::Var>&) { return imm; }, "T_const", "elemwise")};
      }
      std::vector<tir::PrimExpr> shape;
      for (int64_t d : t.shape()) shape.push_back(tir::IntImm(d));
      te::Tensor ph = te::Placeholder(shape, t.dtype(), absl::StrCat("const", constants_.size()));
      constants_.push_back(c->data);
      constant_tensors_.push_back(ph);
      return std::vector<te::Tensor>{ph};
    }
    if (const auto* tup = n.as<TupleNode>()) {
      std::vector<te::Tensor> flat;
      for (const Expr& f : tup->fields) {
        const std::vector<te::Tensor>& v = values_[f.get()];
        flat.insert(flat.end(), v.begin(), v.end());
      }
      return flat;
    }
    if (const auto* get = n.as<TupleGetItemNode>()) {
      const std::vector<te::Tensor>& v = values_[get->tuple.get()];
      const Type& tt = get->tuple->checked_type();
      const auto* tup = tt ? tt.as<TupleTypeNode>() : nullptr;
      if (tup == nullptr || get->index < 0 ||
          get->index >= static_cast<int>(tup->fields.size())) {
        return absl::InvalidArgumentError("a tuple projection without a checked tuple type");
      }
      int begin = 0;
      for (int i = 0; i < get->index; ++i) begin += FlatCount(tup->fields[i]);
      int count = FlatCount(tup->fields[get->index]);
      if (begin + count > static_cast<int>(v.size())) {
        return absl::InternalError("tuple projection out of range");
      }
      return std::vector<te::Tensor>(v.begin() + begin, v.begin() + begin + count);
    }
    if (const auto* call = n.as<CallNode>()) {
      const auto* op = call->op.as<OpNode>();
      if (op == nullptr) {
        return absl::UnimplementedError(
            "a primitive function may call only operators (found a call of a function value)");
      }
      std::vector<te::Tensor> inputs;
      for (const Expr& a : call->args) {
        const std::vector<te::Tensor>& v = values_[a.get()];
        inputs.insert(inputs.end(), v.begin(), v.end());
      }
      if (!call->checked_type()) {
        return absl::InvalidArgumentError(
            absl::StrCat(op->def->name, ": the call is not type-checked (run InferType)"));
      }
      KILN_ASSIGN_OR_RETURN(Type out_type, ResolveAnyDims(*call, *op->def, inputs));
      if (options_.use_strategies && !options_.naive_schedule && !options_.gpu) {
        KILN_ASSIGN_OR_RETURN(std::optional<std::vector<te::Tensor>> s,
                              StrategyCompute(*call, *op->def, inputs, out_type));
        if (s) return Materialized(n, *std::move(s));
      }
      KILN_ASSIGN_OR_RETURN(std::vector<te::Tensor> outs,
                            ComputeOp(*op->def, call->attrs.get(), inputs, out_type, &dims_));
      return Materialized(n, std::move(outs));
    }
    if (n.as<OpNode>() != nullptr) return std::vector<te::Tensor>{};
    if (const auto* v = n.as<VarNode>()) {
      return absl::InvalidArgumentError(absl::StrCat("free variable %", v->name_hint));
    }
    return absl::UnimplementedError(
        "a primitive function body may contain only operator calls, tuples, projections, "
        "parameters and constants");
  }

  // The call's output type with its `?` extents tied to the inputs'
  // lowered extents where the operator says how, so that an intermediate
  // tensor of a fused kernel has no extent that nothing binds (each `?`
  // would otherwise be a fresh variable only an output buffer can bind):
  // first the operator's type relation over the inputs' lowered extents
  // (take puts the indices' extent in place, expand_dims inserts 1s, ...);
  // then, for elementwise and broadcasting operators, the broadcast rule --
  // the one extent that is not the static 1, or, when several unrelated
  // extents meet, a size variable bound at the kernel's top to the first
  // that is not 1 (the VM's composed shape function computes the same and
  // checks that they broadcast). A `?` neither rule relates stays fresh.
  absl::StatusOr<Type> ResolveAnyDims(const CallNode& call, const OpDef& def,
                                      const std::vector<te::Tensor>& inputs) {
    const Type& t = call.checked_type();
    // A dyn.* operator's `?` extents are values it reads (its output buffer,
    // which the VM sizes by its shape function, binds them); its type
    // relation over lowered extents would guess (dyn.full of a constant
    // shape, dyn.broadcast_to's pattern).
    if (!HasAnyDim(t) || absl::StartsWith(def.name, "dyn.")) return t;
    std::vector<const TensorTypeNode*> outs;
    if (!FlatTensorTypes(t, &outs)) return t;
    std::vector<Shape> shapes;
    for (const TensorTypeNode* o : outs) shapes.push_back(o->shape);
    std::vector<Expr> args;
    bool typed = true;
    for (const Expr& a : call.args) {
      if (a.as<ConstantNode>() != nullptr) {
        args.push_back(a);
        continue;
      }
      const std::vector<te::Tensor>& v = values_[a.get()];
      size_t pos = 0;
      std::optional<Type> at = TypeOfLowered(a->checked_type(), v, &pos, dims_.vars());
      if (!at || pos != v.size()) {
        typed = false;
        break;
      }
      args.push_back(MakeVar("arg", *at));
    }
    if (typed) {
      absl::StatusOr<Call> c = MakeCall(call.op, std::move(args), call.attrs, call.type_args);
      absl::StatusOr<Type> inferred =
          c.ok() ? types::InferExprType(*c) : absl::StatusOr<Type>(c.status());
      std::vector<const TensorTypeNode*> touts;
      if (inferred.ok() && FlatTensorTypes(*inferred, &touts) && touts.size() == outs.size()) {
        for (size_t j = 0; j < outs.size(); ++j) {
          if (touts[j]->shape.size() != shapes[j].size()) continue;
          for (size_t d = 0; d < shapes[j].size(); ++d) {
            if (shapes[j][d].is_any() && !touts[j]->shape[d].is_any()) {
              shapes[j][d] = touts[j]->shape[d];
            }
          }
        }
      }
    }
    if ((def.pattern == OpPattern::kElemWise || def.pattern == OpPattern::kBroadcast) &&
        shapes.size() == 1) {
      const size_t rank = shapes[0].size();
      for (size_t d = 0; d < rank; ++d) {
        if (!shapes[0][d].is_any()) continue;
        // The inputs' extents at this dim (right-aligned), without the 1s.
        std::vector<tir::PrimExpr> extents;
        bool fixed = false;
        for (const te::Tensor& in : inputs) {
          const std::vector<tir::PrimExpr>& s = in.shape();
          if (s.size() + d < rank) continue;
          const tir::PrimExpr& e = s[d - (rank - s.size())];
          int64_t c = 0;
          if (tir::IsConstInt(e, &c)) {
            if (c == 1) continue;
            shapes[0][d] = Dim(c);
            fixed = true;
            break;
          }
          bool seen = false;
          for (const tir::PrimExpr& x : extents) seen |= x.get() == e.get();
          if (!seen) extents.push_back(e);
        }
        if (fixed) continue;
        if (extents.empty()) {
          shapes[0][d] = Dim(1);
          continue;
        }
        if (extents.size() == 1) {
          Dim x = DimOfExtent(extents[0], dims_.vars());
          if (!x.is_any()) {
            shapes[0][d] = x;
            continue;
          }
        }
        std::vector<const tir::ExprNode*> key;
        for (const tir::PrimExpr& x : extents) key.push_back(x.get());
        auto known = extent_of_.find(key);
        if (known != extent_of_.end()) {
          shapes[0][d] = Dim::Var(known->second);
          continue;
        }
        tir::PrimExpr value = extents[0];
        for (size_t k = 1; k < extents.size(); ++k) {
          value = tir::Select(tir::EQ(value, tir::IntImm(1)), extents[k], value);
        }
        std::string name;
        do {
          name = absl::StrCat("bcast_dim", next_extent_++);
        } while (dims_.vars().count(name));
        shapes[0][d] = Dim::Var(name);
        extent_lets_.emplace_back(dims_.Get(shapes[0][d]), std::move(value));
        extent_of_[key] = name;
      }
    }
    size_t pos = 0;
    return WithShapes(t, shapes, &pos);
  }

  // The prologue binding the extents ResolveAnyDims introduced (those no
  // argument buffer of `f` binds), in the order they were made.
  tir::PrimFunc BindExtents(const tir::PrimFunc& f) const {
    if (extent_lets_.empty()) return f;
    absl::flat_hash_set<const tir::ExprNode*> bound;
    for (const tir::Buffer& b : f->params) {
      for (const tir::PrimExpr& e : b->shape) CollectVars(e, &bound);
    }
    tir::Stmt body = f->body;
    for (size_t i = extent_lets_.size(); i-- > 0;) {
      if (bound.count(extent_lets_[i].first.get())) continue;
      body = tir::LetStmt(extent_lets_[i].first, extent_lets_[i].second, std::move(body));
    }
    return tir::MakePrimFunc(f->name, f->params, std::move(body), f->attrs);
  }

  // Size of `e` with every compute stage it reads inlined into it (as the
  // default schedules inline injective stages), materialized ones aside.
  double InlinedSize(const tir::PrimExpr& e) {
    if (!e) return 0;
    double size = 1;
    if (e->kind == tir::ExprKind::kProducerLoad) {
      const auto* op = dynamic_cast<const te::OperationNode*>(e->producer.get());
      if (op != nullptr) size += OpSize(op);
    }
    for (const tir::PrimExpr& a : e->args) size += InlinedSize(a);
    return size;
  }
  double OpSize(const te::OperationNode* op) {
    if (op->kind != te::OpKind::kCompute || materialized_.count(op)) return 0;
    auto it = op_size_.find(op);
    if (it != op_size_.end()) return it->second;
    double size = 0;
    for (const tir::PrimExpr& b : op->body) size += InlinedSize(b);
    op_size_[op] = size;
    return size;
  }

  // A value several operators of a kernel with `?` extents read, whose
  // inlined expression is not small, computed once into a buffer of the
  // kernel instead of inlined into every reader: inlining a chain of such
  // values (ONNX Resize's cubic coordinates and weights, each read by
  // several taps and by a polynomial) multiplies the expression's size at
  // every step, and its lowering and code generation take minutes.
  std::vector<te::Tensor> Materialized(const Expr& n, std::vector<te::Tensor> outs) {
    constexpr double kMaxInlinedSize = 24;
    if (!dynamic_ || uses_[n.get()] < 2) return outs;
    for (te::Tensor& t : outs) {
      const te::OperationNode* op = t.op().get();
      if (op->kind != te::OpKind::kCompute || !op->reduce_axis.empty() ||
          op->attrs.count("no_inline") || OpSize(op) < kMaxInlinedSize) {
        continue;
      }
      const te::Tensor src = t;
      t = te::Compute(
          src.shape(),
          [&](const std::vector<tir::Var>& idx) {
            return src(std::vector<tir::PrimExpr>(idx.begin(), idx.end()));
          },
          absl::StrCat(op->name, "_shared"), "injective", {{"no_inline", "1"}});
      materialized_.insert(t.op().get());
    }
    return outs;
  }

  int lanes() const { return options_.vector_lanes > 0 ? options_.vector_lanes : 8; }
  CpuTarget target() const {
    return options_.target ? *options_.target : CpuTarget::FromVectorLanes(lanes());
  }

  // The operator strategy's compute for this call, when one accepts it.
  absl::StatusOr<std::optional<std::vector<te::Tensor>>> StrategyCompute(
      const CallNode& call, const OpDef& def, const std::vector<te::Tensor>& inputs,
      const Type& out_type) {
    strategy::RegisterBuiltinStrategies();
    if (strategy::ImplementationsOf(def.name).empty()) return std::optional<std::vector<te::Tensor>>();
    std::vector<Ref<const HostTensor>> consts;
    for (const Expr& a : call.args) {
      const size_t n = values_[a.get()].size();
      const auto* c = a.as<ConstantNode>();
      if (c != nullptr && n == 1 && c->data->ndim() > 0) {
        consts.push_back(c->data);
      } else {
        for (size_t i = 0; i < n; ++i) consts.push_back(nullptr);
      }
    }
    ComputeCtx cctx{def, call.attrs.get(), inputs, {}, {}, &dims_};
    KILN_RETURN_IF_ERROR(
        FlattenOutputType(out_type, &dims_, &cctx.out_shapes, &cctx.out_dtypes));
    const CpuTarget t = target();
    strategy::StrategyComputeCtx sctx{
        cctx, consts, t, [this](Ref<const HostTensor> data, const std::string& name) {
          te::Tensor ph = te::Placeholder(
              [&] {
                std::vector<tir::PrimExpr> shape;
                for (int64_t d : data->shape()) shape.push_back(tir::IntImm(d));
                return shape;
              }(),
              data->dtype(), absl::StrCat("const", constants_.size(), "_", name));
          constants_.push_back(data);
          constant_tensors_.push_back(ph);
          return ph;
        }};
    KILN_ASSIGN_OR_RETURN(std::optional<strategy::StrategyChoice> choice,
                          strategy::ComputeWithStrategy(sctx));
    if (!choice) return std::optional<std::vector<te::Tensor>>();
    used_strategy_ = true;
    return std::optional<std::vector<te::Tensor>>(std::move(choice->outputs));
  }

  const Function& fn_;
  std::string name_;
  const LowerOptions& options_;
  const bool constants_only_;
  ShapeVars dims_;
  std::unordered_map<const ExprNode*, std::vector<te::Tensor>> values_;
  std::vector<Ref<const HostTensor>> constants_;
  std::vector<te::Tensor> constant_tensors_;
  std::vector<std::string> op_names_;
  bool used_strategy_ = false;
  // Size variables of broadcast extents and what each is (ResolveAnyDims).
  std::vector<std::pair<tir::Var, tir::PrimExpr>> extent_lets_;
  std::map<std::vector<const tir::ExprNode*>, std::string> extent_of_;
  int next_extent_ = 0;
  // Whether some type in the function has a `?` extent; how many times each
  // value is read; the stages kept out of their readers (Materialized).
  bool dynamic_ = false;
  std::unordered_map<const ExprNode*, int> uses_;
  absl::flat_hash_set<const te::OperationNode*> materialized_;
  std::unordered_map<const te::OperationNode*, double> op_size_;
};

}  // namespace

std::string KernelName(const Function& fn) {
  std::vector<std::string> names;
  for (const Expr& n : PostOrder(fn->body, /*enter_functions=*/false)) {
    if (const auto* call = n.as<CallNode>()) {
      if (const auto* op = call->op.as<OpNode>()) {
        std::string s = op->def->name;
        for (char& ch : s) {
          if (ch == '.') ch = '_';
        }
        names.push_back(s);
      }
    }
  }
  std::string name = absl::StrCat("fused_", absl::StrJoin(names, "_"));
  if (name.size() > 80) name = name.substr(0, 80);
  return name;
}

namespace {

// Whether `constants` can stand in for kernel `k`'s own: same count, and each
// of the same dtype and shape.
bool SameConstantTypes(const LoweredFunc& k, const std::vector<Ref<const HostTensor>>& constants) {
  if (k.constants.size() != constants.size()) return false;
  for (size_t i = 0; i < constants.size(); ++i) {
    if (k.constants[i]->dtype() != constants[i]->dtype() ||
        k.constants[i]->shape() != constants[i]->shape()) {
      return false;
    }
  }
  return true;
}

}  // namespace

const std::vector<Ref<const HostTensor>>& LoweredModule::ConstantsOf(const ExprNode* fn) const {
  auto own = constants_of.find(fn);
  if (own != constants_of.end()) return own->second;
  return kernels[kernel_of.at(fn)].constants;
}

absl::StatusOr<LoweredModule> LowerModule(const Module& fused, const LowerOptions& options) {
  KILN_ASSIGN_OR_RETURN(Function main, fused.Lookup("main"));
  LoweredModule out;
  std::unordered_map<std::string, int> name_count;
  // Fused functions equal up to their tensor constants' values (ResNet's
  // repeated blocks, each with its own weights) share one kernel, as TVM's
  // compile engine caches lowered functions: the kernel's code depends on
  // the constants' types, never their values (a strategy may repack a weight,
  // which lowering the function's constants alone redoes). Each sharer gets
  // its own constants, computed without scheduling or lowering loops; a
  // sharer equal to an earlier one, constants included (an unrolled
  // recurrent layer's steps, each its own function over the layer's one
  // weight), reuses that one's constants. (Computed again per step, the
  // second LSTM layer of a 64-step model carried 63 packed copies of its
  // 4 MB weight: a 275 MB artifact for a 15 MB model, every step reading
  // its weight from memory.)
  struct Lowered {
    Function fn;
    size_t kernel = 0;
    const ExprNode* constants_key = nullptr;  // into constants_of; null: the kernel's own
  };
  std::unordered_map<size_t, std::vector<Lowered>> by_hash;
  const std::vector<Expr> order = PostOrder(main->body, /*enter_functions=*/false);
  int total = 0, done = 0;
  if (options.progress) {
    absl::flat_hash_set<const ExprNode*> fns;
    for (const Expr& n : order) {
      const auto* call = n.as<CallNode>();
      if (call != nullptr && call->op.as<FunctionNode>() != nullptr) fns.insert(call->op.get());
    }
    total = static_cast<int>(fns.size());
    options.progress(0, total);
  }
  auto step = [&] {
    if (options.progress) options.progress(++done, total);
  };
  for (const Expr& n : order) {
    const auto* call = n.as<CallNode>();
    if (call == nullptr) continue;
    const auto* fn = call->op.as<FunctionNode>();
    if (fn == nullptr) continue;
    const AttrValue* prim = fn->GetAttr("Primitive");
    if (prim == nullptr || prim->kind != AttrValue::Kind::kInt || prim->i == 0) {
      return absl::UnimplementedError(
          "lowering: main calls a function that is not primitive (run FuseOps first)");
    }
    if (out.kernel_of.count(fn)) continue;
    Function f = call->op.cast<FunctionNode>();
    const size_t hash = StructuralHashModuloConstants(f);
    bool reused = false;
    std::vector<Lowered>& same_hash = by_hash[hash];
    for (const Lowered& other : same_hash) {
      if (!StructuralEqual(f, other.fn)) continue;
      out.kernel_of[fn] = other.kernel;
      if (other.constants_key != nullptr) {
        out.constants_of[fn] = out.constants_of.at(other.constants_key);
      }
      reused = true;
      break;
    }
    for (size_t i = 0; !reused && i < same_hash.size(); ++i) {
      if (same_hash[i].constants_key != nullptr) continue;  // a kernel's first function only
      const Function other = same_hash[i].fn;
      const size_t index = same_hash[i].kernel;
      if (!StructuralEqualModuloConstants(f, other)) continue;
      const LoweredFunc& k = out.kernels[index];
      absl::StatusOr<LoweredFunc> consts =
          Lowerer(f, k.func->name, options, /*constants_only=*/true).Run();
      KILN_RETURN_IF_ERROR(consts.status());
      // Constants that do not line up (a strategy chose differently) get a
      // kernel of their own below.
      if (!SameConstantTypes(k, consts->constants) || consts->num_inputs != k.num_inputs ||
          consts->num_outputs != k.num_outputs) {
        continue;
      }
      out.kernel_of[fn] = index;
      out.constants_of[fn] = std::move(consts->constants);
      same_hash.push_back({f, index, fn});
      reused = true;
    }
    if (reused) {
      step();
      continue;
    }
    std::string name = KernelName(f);
    int k = name_count[name]++;
    if (k > 0) name = absl::StrCat(name, "_", k);
    KILN_ASSIGN_OR_RETURN(LoweredFunc lf, LowerPrimitive(f, name, options));
    out.kernel_of[fn] = out.kernels.size();
    same_hash.push_back({f, out.kernels.size(), nullptr});
    out.kernels.push_back(std::move(lf));
    step();
  }
  return out;
}

absl::StatusOr<LoweredFunc> LowerPrimitive(const Function& fn, absl::string_view name,
                                           const LowerOptions& options) {
  RegisterCoreComputes();
  Lowerer l(fn, name, options);
  return l.Run();
}

}  // namespace kiln::lowering
