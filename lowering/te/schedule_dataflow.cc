// File: lowering/te/schedule_dataflow.cc — schedule primitives that rewrite
// the data flow: cache_read, cache_write, rfactor.
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"
#include "lowering/te/message_passing.h"
#include "lowering/te/schedule.h"
#include "lowering/te/schedule_internal.h"

namespace kiln::te {
namespace {

absl::Status DataflowError(absl::string_view primitive, const Tensor& t, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(primitive, "(", t.defined() ? t.name() : "<undefined>", "): ", what));
}

std::vector<PrimExpr> AsExprs(const std::vector<Var>& vars) {
  return std::vector<PrimExpr>(vars.begin(), vars.end());
}

// A copy of `op` with other bodies (same axes, same reduction axes).
Operation WithBodies(const Operation& op, std::vector<PrimExpr> bodies) {
  Ref<OperationNode> n(new OperationNode(*op));
  n->body = std::move(bodies);
  return n;
}

}  // namespace

absl::StatusOr<Tensor> Schedule::cache_read(const Tensor& tensor, absl::string_view scope,
                                            const std::vector<Tensor>& readers) {
  std::vector<Operation> ops;
  for (const Tensor& r : readers) ops.push_back(r.op());
  return cache_read(tensor, scope, ops);
}

absl::StatusOr<Tensor> Schedule::cache_read(const Tensor& tensor, absl::string_view scope,
                                            const std::vector<Operation>& readers) {
  Stage* ps = (*this)[tensor];
  if (ps == nullptr) return DataflowError("cache_read", tensor, "the tensor is not in this schedule");
  if (ps->is_inlined()) {
    return DataflowError("cache_read", tensor, "the tensor's stage is inlined; it has no storage");
  }
  if (scope.empty()) return DataflowError("cache_read", tensor, "empty scope");
  if (readers.empty()) return DataflowError("cache_read", tensor, "no readers given");
  const int idx = tensor.value_index();
  if (idx < 0 || idx >= ps->op->num_outputs()) {
    return DataflowError("cache_read", tensor, "output index out of range");
  }
  Tensor src(ps->op, idx);
  Tensor cache = Compute(
      src.shape(), [&](const std::vector<Var>& i) { return src(AsExprs(i)); },
      absl::StrCat(tensor.name(), ".", scope));
  // Rewrite every reader first, commit only when all succeeded.
  std::vector<std::pair<Stage*, Operation>> repl;
  for (const Operation& r : readers) {
    Stage* rs = (*this)[r];
    if (rs == nullptr) {
      return DataflowError("cache_read", tensor,
                           absl::StrCat("reader '", r ? r->name : "<null>",
                                        "' is not in this schedule"));
    }
    if (rs == ps || rs->is_placeholder()) {
      return DataflowError("cache_read", tensor,
                           absl::StrCat("'", rs->name(), "' cannot be a reader of it"));
    }
    int replaced = 0;
    std::vector<PrimExpr> bodies;
    for (const PrimExpr& b : rs->op->body) {
      bodies.push_back(ReplaceTensorReads(
          b, [&](const Tensor& t, const std::vector<PrimExpr>& indices) -> PrimExpr {
            if ((*this)[t] != ps || t.value_index() != idx) return nullptr;
            ++replaced;
            return cache(indices);
          }));
    }
    if (replaced == 0) {
      return DataflowError("cache_read", tensor,
                           absl::StrCat("'", rs->name(), "' does not read this tensor"));
    }
    repl.emplace_back(rs, WithBodies(rs->op, std::move(bodies)));
  }
  Stage* cs = state_->Insert(state_->IndexOf(ps) + 1, cache.op());
  cs->scope = std::string(scope);
  for (auto& [rs, op] : repl) {
    state_->Register(rs, op);
    rs->op = op;
  }
  return cache;
}

absl::StatusOr<Tensor> Schedule::cache_write(const Tensor& tensor, absl::string_view scope) {
  Stage* os = (*this)[tensor];
  if (os == nullptr) return DataflowError("cache_write", tensor, "the tensor is not in this schedule");
  if (os->is_placeholder()) return DataflowError("cache_write", tensor, "a placeholder is not computed");
  if (os->is_inlined()) {
    return DataflowError("cache_write", tensor, "the tensor's stage is inlined; it has no storage");
  }
  if (scope.empty()) return DataflowError("cache_write", tensor, "empty scope");
  const Operation old = os->op;
  std::vector<IterVar> axes;
  tir::VarMap vmap;
  for (const IterVar& iv : old->axis) {
    IterVar c = tir::MakeIterVar(iv->dom, tir::MakeVar(absl::StrCat(iv->var->name, ".c")),
                                 tir::IterKind::kDataPar);
    vmap[iv->var.get()] = c->var;
    axes.push_back(c);
  }
  std::vector<PrimExpr> bodies;
  for (const PrimExpr& b : old->body) bodies.push_back(tir::Substitute(b, vmap));
  Operation cache_op = MakeComputeOp(absl::StrCat(old->name, ".", scope), old->tag, old->attrs,
                                     std::move(axes), std::move(bodies));
  // The original stage copies the cache.
  std::vector<PrimExpr> index;
  for (const IterVar& iv : old->axis) index.push_back(iv->var);
  Ref<OperationNode> copy(new OperationNode(*old));
  copy->reduce_axis.clear();
  copy->body.clear();
  for (int i = 0; i < cache_op->num_outputs(); ++i) copy->body.push_back(cache_op->output(i)(index));

  Stage* cs = state_->Insert(state_->IndexOf(os), cache_op);
  cs->scope = std::string(scope);
  state_->Register(os, copy);
  os->op = copy;
  internal::ResetIterVars(os);
  return cache_op->output(tensor.value_index());
}

absl::StatusOr<std::vector<Tensor>> Schedule::rfactor(const Tensor& tensor, const IterVar& axis,
                                                      int factor_axis) {
  using internal::IndexMap;
  using internal::RangeMap;
  Stage* rs = (*this)[tensor];
  if (rs == nullptr) return DataflowError("rfactor", tensor, "the tensor is not in this schedule");
  const Operation old = rs->op;
  if (old->kind != OpKind::kCompute || old->reduce_axis.empty() || old->body.empty() ||
      old->body[0]->kind != tir::ExprKind::kReduce) {
    return DataflowError("rfactor", tensor, "the tensor is not computed by a reduction");
  }
  for (const PrimExpr& b : old->body) {
    if (b->reduce_kind == tir::ReduceKind::kArgMax || b->reduce_kind == tir::ReduceKind::kArgMin) {
      return absl::UnimplementedError(absl::StrCat(
          "rfactor(", tensor.name(), "): argmax/argmin reductions cannot be factored yet"));
    }
  }
  KILN_RETURN_IF_ERROR(rs->CheckLeaf(axis, "rfactor"));
  if (axis->iter_kind != tir::IterKind::kReduce) {
    return DataflowError("rfactor", tensor,
                         absl::StrCat("'", axis->var->name, "' is not a reduction axis"));
  }
  // The reduction IterVars `axis` derives from, and those derived from them.
  internal::FlagMap touch;
  touch[axis] = 1;
  internal::PassUpBitMaskOr(*rs, &touch);
  internal::PassDownBitMaskOr(*rs, &touch);
  auto touched = [&](const IterVar& iv) {
    auto it = touch.find(iv);
    return it != touch.end() && it->second != 0;
  };
  for (const IterVar& iv : old->axis) {
    if (touched(iv)) {
      return DataflowError("rfactor", tensor, "the factored axis touches a data-parallel axis");
    }
  }
  RangeMap dom;
  internal::IterVarSet skip;
  for (const IterVar& iv : old->axis) skip.insert(iv);
  for (const IterVar& iv : old->reduce_axis) {
    if (touched(iv)) {
      dom[iv] = iv->dom;
    } else {
      skip.insert(iv);
    }
  }
  KILN_RETURN_IF_ERROR(internal::PassDownDomain(*rs, &dom, /*allow_missing=*/true));
  IndexMap values;
  arith::VarSetMap var_sets;
  for (const IterVar& leaf : rs->leaf_iter_vars) {
    if (!touched(leaf)) continue;
    auto it = dom.find(leaf);
    if (it == dom.end()) {
      return absl::InternalError(absl::StrCat("rfactor(", tensor.name(), "): no range for '",
                                              leaf->var->name, "'"));
    }
    values[leaf] = tir::IsConstValue(it->second.extent, 1) ? it->second.min : leaf->var;
    var_sets[leaf->var.get()] = arith::IntSet::FromRange(it->second);
  }
  KILN_RETURN_IF_ERROR(internal::PassUpIndex(*rs, dom, &values, /*allow_missing=*/true));
  std::vector<PrimExpr> preds =
      internal::MakeBoundCheck(*rs, dom, values, /*skip_ivar_domain=*/true, skip, var_sets);

  const int ndim = static_cast<int>(old->axis.size());
  const int pos = factor_axis >= 0 ? factor_axis : ndim + 1 + factor_axis;
  if (pos < 0 || pos > ndim) {
    return DataflowError("rfactor", tensor,
                         absl::StrCat("factor_axis ", factor_axis, " is out of range for ", ndim,
                                      " dims"));
  }
  const Range frange = dom.at(axis);
  if (!tir::IsConstValue(frange.min, 0)) {
    return DataflowError("rfactor", tensor, "the factored axis must start at 0");
  }
  IterVar fiv = tir::MakeIterVar(frange, axis->var, tir::IterKind::kDataPar);
  std::vector<IterVar> new_axis = old->axis;
  new_axis.insert(new_axis.begin() + pos, fiv);
  std::vector<IterVar> new_reduce;
  for (const IterVar& iv : old->reduce_axis) {
    if (!touched(iv)) new_reduce.push_back(iv);
  }
  for (const IterVar& leaf : rs->leaf_iter_vars) {
    if (touched(leaf) && !(leaf == axis)) {
      new_reduce.push_back(tir::MakeIterVar(dom.at(leaf), leaf->var, tir::IterKind::kReduce));
    }
  }
  tir::VarMap vsub;
  for (const IterVar& iv : old->reduce_axis) {
    if (touched(iv)) vsub[iv->var.get()] = values.at(iv);
  }
  PrimExpr pred;
  for (const PrimExpr& p : preds) pred = pred ? tir::And(pred, p) : p;
  if (pred) pred = tir::Call(DataType::Bool(), "likely", {pred});
  std::vector<PrimExpr> bodies;
  std::vector<tir::ReduceKind> kinds;
  for (const PrimExpr& b : old->body) {
    PrimExpr cond = tir::Substitute(b->args[1], vsub);
    if (pred) cond = tir::IsConstValue(cond, 1) ? pred : tir::And(pred, cond);
    bodies.push_back(tir::Reduce(b->reduce_kind, tir::Substitute(b->args[0], vsub), new_reduce, cond));
    kinds.push_back(b->reduce_kind);
  }
  Operation factor_op = MakeComputeOp(absl::StrCat(old->name, ".rf"), old->tag, old->attrs,
                                      std::move(new_axis), std::move(bodies));
  state_->Insert(state_->IndexOf(rs), factor_op);

  IterVar rv = ReduceAxis(frange, absl::StrCat(axis->var->name, ".v"));
  std::vector<Tensor> repl = ComputeMulti(
      old->output_shapes[0],
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx = AsExprs(i);
        idx.insert(idx.begin() + pos, rv->var);
        std::vector<PrimExpr> out;
        for (size_t k = 0; k < kinds.size(); ++k) {
          out.push_back(tir::Reduce(kinds[k], factor_op->output(static_cast<int>(k))(idx), {rv}));
        }
        return out;
      },
      old->name, old->tag, old->attrs);
  state_->Register(rs, repl[0].op());
  rs->op = repl[0].op();
  internal::ResetIterVars(rs);
  std::vector<Tensor> out;
  for (int i = 0; i < factor_op->num_outputs(); ++i) out.push_back(factor_op->output(i));
  return out;
}

}  // namespace kiln::te
