#include "lowering/vm/batch_split.h"

#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/module.h"
#include "ir/op.h"
#include "ir/op_attrs.h"
#include "ir/status_macros.h"
#include "ir/tir.h"
#include "ir/tir_functor.h"
#include "ir/traversal.h"
#include "ir/type.h"
#include "lowering/vm/shape_func.h"
#include "types/infer_type.h"

namespace kiln::lowering::vm {
namespace {

Type CheckedOrAnnotated(const Expr& e) {
  if (e->checked_type()) return e->checked_type();
  if (const auto* v = e.as<VarNode>()) return v->type_annotation;
  return nullptr;
}

// Whether `t` names `n` in any dim; false positives impossible, compound
// dims count.
bool Names(const TensorTypeNode& t, const std::string& n) {
  for (const Dim& d : t.shape) {
    std::set<std::string> vars;
    DimVars(d, &vars);
    if (vars.count(n)) return true;
  }
  return false;
}

// `n` is exactly axis 0 of `t` and appears nowhere else.
bool BatchAxisOnly(const TensorTypeNode& t, const std::string& n) {
  if (t.shape.empty() || t.shape[0].var_name() != n) return false;
  for (size_t d = 1; d < t.shape.size(); ++d) {
    std::set<std::string> vars;
    DimVars(t.shape[d], &vars);
    if (vars.count(n) || t.shape[d].is_any()) return false;
  }
  return true;
}

int64_t NormAxis(int64_t axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

bool StartsWithN(const std::string& layout) { return !layout.empty() && layout[0] == 'N'; }

// Why the batched call `c` (some argument batched; its result batched, N at
// axis 0) does not compute each output row from the same input rows, or "".
std::string PerRowRefusal(const CallNode& c, const std::vector<bool>& arg_batched,
                          const std::vector<size_t>& arg_rank, size_t out_rank) {
  const auto* op = c.op.as<OpNode>();
  const std::string& name = op->name();
  const OpPattern pattern = op->def->pattern;
  auto only_data_batched = [&]() -> std::string {
    for (size_t i = 1; i < arg_batched.size(); ++i) {
      if (arg_batched[i]) return absl::StrCat(name, ": argument ", i, " depends on the batch");
    }
    return "";
  };
  if (name == "nn.conv2d" || name == "nn.conv2d_transpose" || name == "nn.conv1d") {
    const auto* a = c.attrs.as<Conv2DAttrs>();
    if (a != nullptr && !StartsWithN(a->data_layout)) return absl::StrCat(name, ": layout ", a->data_layout);
    return only_data_batched();
  }
  if (name == "nn.max_pool2d" || name == "nn.avg_pool2d") {
    const auto* a = c.attrs.as<Pool2DAttrs>();
    if (a == nullptr || !StartsWithN(a->layout)) return absl::StrCat(name, ": layout");
    return "";
  }
  if (name == "nn.global_avg_pool2d" || name == "nn.global_max_pool2d") {
    const auto* a = c.attrs.as<GlobalPool2DAttrs>();
    if (a == nullptr || !StartsWithN(a->layout)) return absl::StrCat(name, ": layout");
    return "";
  }
  if (name == "nn.dense" || name == "nn.matmul") return only_data_batched();
  if (name == "nn.batch_matmul") return "";  // row n of both operands (or a shared one)
  if (name == "layout_transform") {
    const auto* a = c.attrs.as<LayoutTransformAttrs>();
    if (a == nullptr || !StartsWithN(a->src_layout) || !StartsWithN(a->dst_layout))
      return "layout_transform: a layout not starting with N";
    return "";
  }
  if (name == "reshape") return "";  // axis 0 is N before and after: rows map to rows
  if (name == "transpose") {
    const auto* a = c.attrs.as<TransposeAttrs>();
    if (a == nullptr || !a->axes || a->axes->empty() || NormAxis((*a->axes)[0], out_rank) != 0)
      return "transpose: axis 0 moves";
    return "";
  }
  if (name == "expand_dims") return "";  // its result's axis 0 is N (checked)
  if (name == "squeeze") {
    const auto* a = c.attrs.as<SqueezeAttrs>();
    if (a == nullptr || !a->axis) return "squeeze: no axes (N = 1 would be squeezed)";
    for (int64_t ax : *a->axis) {
      if (NormAxis(ax, arg_rank[0]) == 0) return "squeeze: axis 0";
    }
    return "";
  }
  if (name == "concatenate") {
    const auto* a = c.attrs.as<ConcatenateAttrs>();
    if (a == nullptr || NormAxis(a->axis, out_rank) == 0) return "concatenate: along axis 0";
    return "";
  }
  if (name == "nn.bias_add") {
    const auto* a = c.attrs.as<BiasAddAttrs>();
    if (a == nullptr || NormAxis(a->axis, out_rank) == 0) return "nn.bias_add: axis 0";
    return only_data_batched();
  }
  if (name == "nn.softmax" || name == "nn.log_softmax") {
    const auto* a = c.attrs.as<SoftmaxAttrs>();
    if (a == nullptr || NormAxis(a->axis, out_rank) == 0) return absl::StrCat(name, ": axis 0");
    return "";
  }
  if (name == "nn.layer_norm") {
    const auto* a = c.attrs.as<LayerNormAttrs>();
    if (a == nullptr || NormAxis(a->axis, out_rank) == 0) return "nn.layer_norm: axis 0";
    return only_data_batched();
  }
  if (pattern == OpPattern::kCommReduce) {
    const auto* a = c.attrs.as<ReduceAttrs>();
    if (a == nullptr || !a->axis || a->exclude) return absl::StrCat(name, ": reduces axis 0");
    for (int64_t ax : *a->axis) {
      if (NormAxis(ax, arg_rank[0]) == 0) return absl::StrCat(name, ": reduces axis 0");
    }
    return "";
  }
  if (pattern == OpPattern::kElemWise || pattern == OpPattern::kBroadcast) {
    // Right-aligned broadcasting: a batched operand of lower rank would put
    // N on another axis.
    for (size_t i = 0; i < arg_batched.size(); ++i) {
      if (arg_batched[i] && arg_rank[i] != out_rank)
        return absl::StrCat(name, ": a batched operand of rank ", arg_rank[i]);
    }
    return "";
  }
  return absl::StrCat(name, " is not known to act on each batch row alone");
}

// `t` with the batch dim `n` (axis 0) replaced by 1.
Type WithBatchOne(const Type& t, const std::string& n) {
  if (const auto* tt = t.as<TensorTypeNode>()) {
    if (tt->shape.empty() || tt->shape[0].var_name() != n) return t;
    Shape s = tt->shape;
    s[0] = Dim(1);
    return MakeTensorType(std::move(s), tt->dtype);
  }
  if (const auto* tup = t.as<TupleTypeNode>()) {
    std::vector<Type> fields;
    for (const Type& f : tup->fields) fields.push_back(WithBatchOne(f, n));
    return MakeTupleType(std::move(fields));
  }
  return t;
}

// Rewrites every access of a batched buffer to the wrapper's [N, ...] buffer
// at row `batch`; `escaped` is set when a batched buffer's data var is used
// other than by a load or store.
class RowShift : public tir::StmtExprMutator {
 public:
  struct Row {
    tir::Buffer to;
    tir::PrimExpr offset;  // batch * elements per row
  };
  // By data var: the lowered body reads a parameter through flattened views
  // of it (other Buffer objects, the same data var).
  absl::flat_hash_map<const tir::ExprNode*, Row> rows;
  std::set<const tir::ExprNode*> data_vars;
  bool escaped = false;

  tir::PrimExpr Shift(const tir::PrimExpr& index, const tir::PrimExpr& off) {
    if (index->kind == tir::ExprKind::kRamp) {
      return tir::Ramp(tir::Add(index->args[0], off), index->args[1], index->dtype.lanes());
    }
    if (index->dtype.lanes() > 1) return tir::Add(index, tir::Broadcast(off, index->dtype.lanes()));
    return tir::Add(index, off);
  }

 protected:
  tir::PrimExpr VisitExpr_(const tir::PrimExpr& e) override {
    if (e->kind == tir::ExprKind::kVar && data_vars.count(e.get())) escaped = true;
    if (e->kind == tir::ExprKind::kLoad) {
      auto it = e->buffer ? rows.find(e->buffer->data.get()) : rows.end();
      if (it != rows.end()) {
        if (e->args.size() != 1) {
          escaped = true;
          return e;
        }
        return tir::Load(it->second.to, {Shift(VisitExpr(e->args[0]), it->second.offset)});
      }
    }
    return MutateChildren(e);
  }
  tir::Stmt VisitStmt_(const tir::Stmt& s) override {
    if (s->kind == tir::StmtKind::kStore) {
      auto it = s->buffer ? rows.find(s->buffer->data.get()) : rows.end();
      if (it != rows.end()) {
        if (s->indices.size() != 1) {
          escaped = true;
          return s;
        }
        return tir::Store(it->second.to, VisitExpr(s->a),
                          {Shift(VisitExpr(s->indices[0]), it->second.offset)});
      }
    }
    return MutateChildren(s);
  }
};

}  // namespace

std::string BatchSplitRefusal(const Function& fn, std::string* batch_var) {
  std::vector<const TensorTypeNode*> io;
  bool ok = true;
  for (const Var& p : fn->params) ok &= FlattenTensorTypes(CheckedOrAnnotated(p), &io);
  const size_t num_param_tensors = io.size();
  ok &= FlattenTensorTypes(fn->body->checked_type(), &io);
  if (!ok) return "a parameter or result that is not tensors";
  std::string n;
  for (const TensorTypeNode* t : io) {
    for (size_t d = 0; d < t->shape.size(); ++d) {
      const Dim& dim = t->shape[d];
      if (dim.is_static()) continue;
      if (dim.is_any()) return "a ? dim";
      std::optional<std::string> v = dim.var_name();
      if (!v || d != 0) return absl::StrCat("symbolic dim ", dim.ToString(), " not the whole axis 0");
      if (!n.empty() && n != *v) return "two symbolic dims";
      n = *v;
    }
  }
  if (n.empty()) return "no symbolic dim";
  for (size_t i = num_param_tensors; i < io.size(); ++i) {
    if (!BatchAxisOnly(*io[i], n)) return "a result without the batch axis";
  }
  // Which nodes depend on a batched parameter; each such call must compute
  // row n from rows n.
  absl::flat_hash_map<const ExprNode*, bool> batched;
  std::string refusal;
  for (const Var& p : fn->params) {
    std::vector<const TensorTypeNode*> ts;
    bool fine = true;
    fine &= FlattenTensorTypes(CheckedOrAnnotated(p), &ts);
    bool b = false;
    for (const TensorTypeNode* t : ts) b |= Names(*t, n);
    batched[p.get()] = b;
  }
  auto type_batched = [&](const Expr& e, bool* all_rows) {
    std::vector<const TensorTypeNode*> ts;
    bool fine = true;
    fine &= FlattenTensorTypes(e->checked_type(), &ts);
    bool any = false;
    *all_rows = fine && !ts.empty();
    for (const TensorTypeNode* t : ts) {
      const bool names = Names(*t, n);
      any |= names;
      *all_rows &= names && BatchAxisOnly(*t, n);
    }
    return any;
  };
  PostOrderVisit(fn->body, [&](const Expr& e) {
    if (!refusal.empty() || batched.count(e.get())) return;
    switch (e->kind) {
      case ExprKind::kOp:
      case ExprKind::kConstant:
        batched[e.get()] = false;
        return;
      case ExprKind::kVar:
        batched[e.get()] = batched.count(e.get()) ? batched[e.get()] : false;
        return;
      case ExprKind::kTuple: {
        bool b = false;
        for (const Expr& f : e.as<TupleNode>()->fields) b |= batched[f.get()];
        batched[e.get()] = b;
        return;
      }
      case ExprKind::kTupleGetItem: {
        const auto* g = e.as<TupleGetItemNode>();
        bool all_rows = false;
        const bool names = type_batched(e, &all_rows);
        const bool from_call = g->tuple->kind == ExprKind::kCall;
        if (from_call && batched[g->tuple.get()] != names) {
          refusal = "a projection of a batched call that lost the batch axis";
          return;
        }
        if (names && !all_rows) {
          refusal = "a projection whose batch dim is not axis 0";
          return;
        }
        batched[e.get()] = names;
        return;
      }
      case ExprKind::kCall: {
        const auto* c = e.as<CallNode>();
        if (c->op.as<OpNode>() == nullptr) {
          refusal = "a call of something other than an operator";
          return;
        }
        std::vector<bool> arg_batched;
        std::vector<size_t> arg_rank;
        bool depends = false;
        for (const Expr& a : c->args) {
          arg_batched.push_back(batched[a.get()]);
          depends |= arg_batched.back();
          const auto* t = a->checked_type() ? a->checked_type().as<TensorTypeNode>() : nullptr;
          arg_rank.push_back(t != nullptr ? t->shape.size() : 0);
        }
        bool all_rows = false;
        const bool names = type_batched(e, &all_rows);
        if (!depends) {
          if (names) refusal = absl::StrCat(c->op.as<OpNode>()->name(), " makes a batch axis");
          batched[e.get()] = false;
          return;
        }
        if (!all_rows) {
          refusal = absl::StrCat(c->op.as<OpNode>()->name(), ": a result without the batch axis 0");
          return;
        }
        const auto* out = e->checked_type().as<TensorTypeNode>();
        refusal = PerRowRefusal(*c, arg_batched, arg_rank, out != nullptr ? out->shape.size() : 0);
        batched[e.get()] = true;
        return;
      }
      default:
        refusal = "control flow inside the kernel";
        return;
    }
  });
  if (refusal.empty() && batch_var != nullptr) *batch_var = n;
  return refusal;
}

// A GPU kernel's loops bound to blockIdx.z of extent 1 (and thread_extent
// attributes of it) replaced by their index 0; `other` when one has another
// extent.
class DropUnitBlockZ : public tir::StmtExprMutator {
 public:
  bool other = false;

  tir::Stmt VisitStmt_(const tir::Stmt& s) override {
    if (s->kind == tir::StmtKind::kFor && s->for_kind == tir::ForKind::kThreadBinding &&
        s->tag == "blockIdx.z") {
      if (!tir::IsConstValue(s->a, 0) || !tir::IsConstValue(s->b, 1)) {
        other = true;
        return s;
      }
      return tir::LetStmt(s->var, tir::IntImm(0, s->var->dtype), VisitStmt(s->body0()));
    }
    if (s->kind == tir::StmtKind::kAttr && s->tag == "thread_extent") {
      const auto* iv = dynamic_cast<const tir::IterVarNode*>(s->node.get());
      if (iv != nullptr && iv->thread_tag == "blockIdx.z") {
        if (!tir::IsConstValue(s->a, 1)) {
          other = true;
          return s;
        }
        return tir::LetStmt(iv->var, tir::IntImm(0, iv->var->dtype), VisitStmt(s->body0()));
      }
    }
    return tir::StmtExprMutator::VisitStmt_(s);
  }
};

absl::StatusOr<std::optional<LoweredFunc>> LowerBatchSplit(const Function& fn,
                                                           absl::string_view name,
                                                           const LowerOptions& options) {
  std::string n;
  if (options.naive_schedule || (!options.gpu && !options.use_strategies) ||
      !BatchSplitRefusal(fn, &n).empty()) {
    return std::optional<LoweredFunc>();
  }
  // The same function with N = 1, type-checked again.
  std::vector<Var> params;
  absl::flat_hash_map<const VarNode*, Expr> subst;
  std::vector<bool> flat_batched;
  for (const Var& p : fn->params) {
    const Type t = CheckedOrAnnotated(p);
    std::vector<const TensorTypeNode*> ts;
    bool ok = true;
    ok &= FlattenTensorTypes(t, &ts);
    for (const TensorTypeNode* tt : ts) flat_batched.push_back(Names(*tt, n));
    Var one = MakeVar(p->name_hint, WithBatchOne(t, n));
    subst[p.get()] = one;
    params.push_back(one);
  }
  KILN_ASSIGN_OR_RETURN(Expr body, Substitute(fn->body, subst));
  KILN_ASSIGN_OR_RETURN(Function one_fn, MakeFunction(params, body, nullptr, {}, fn->attrs));
  Module tmp;
  KILN_RETURN_IF_ERROR(tmp.AddFunction("batch_one", one_fn).status());
  absl::StatusOr<Module> typed = types::InferType(tmp);
  if (!typed.ok()) return std::optional<LoweredFunc>();
  KILN_ASSIGN_OR_RETURN(Function one_typed, typed->Lookup("batch_one"));
  if (TypeToString(one_typed->body->checked_type()) !=
      TypeToString(WithBatchOne(fn->body->checked_type(), n))) {
    return std::optional<LoweredFunc>();
  }
  absl::StatusOr<LoweredFunc> one = LowerPrimitive(one_typed, name, options);
  if (!one.ok()) return std::optional<LoweredFunc>();

  // The wrapper: [N, ...] buffers for the batched parameters and every
  // output; the N = 1 body inside `for (batch, 0, N)`.
  const std::vector<tir::Buffer>& inner = one->func->params;
  const size_t num_flat = flat_batched.size();
  if (inner.size() != num_flat + one->constants.size() + static_cast<size_t>(one->num_outputs)) {
    return std::optional<LoweredFunc>();
  }
  // Elements per row of each batched parameter (-1: not batched); none
  // splits when one is not a compact [1, static...] buffer.
  std::vector<int64_t> per_row(inner.size(), -1);
  for (size_t i = 0; i < inner.size(); ++i) {
    const tir::Buffer& b = inner[i];
    if (!(i < num_flat ? flat_batched[i] : i >= num_flat + one->constants.size())) continue;
    if (b->shape.empty() || !tir::IsConstValue(b->shape[0], 1) || !b->strides.empty() ||
        (b->elem_offset && !tir::IsConstValue(b->elem_offset, 0))) {
      return std::optional<LoweredFunc>();
    }
    per_row[i] = 1;
    for (size_t d = 1; d < b->shape.size(); ++d) {
      if (!b->shape[d]->is_const_int()) return std::optional<LoweredFunc>();
      per_row[i] *= b->shape[d]->int_value;
    }
  }
  auto widened = [&](const tir::Buffer& b, const tir::PrimExpr& rows) {
    std::vector<tir::PrimExpr> shape = b->shape;
    shape[0] = rows;
    return shape;
  };
  const tir::Var batch_n = tir::MakeVar(n);
  if (options.gpu) {
    // On a GPU the rows are blocks: the N = 1 kernel's body as it is, each
    // batched parameter [N, ...] (the same data variable), and the launch's
    // z the batch, each block's batched pointers moved to its row by the
    // code generator (attrs["kiln.batch_z"], codegen_cuda). The schedules
    // bind a batch axis (conv2d's, a batched GEMM's) to blockIdx.z: of
    // extent 1 here, that loop becomes its index 0; a body that binds
    // blockIdx.z otherwise is not split.
    DropUnitBlockZ drop;
    tir::Stmt body = drop.VisitStmt(one->func->body);
    if (drop.other) return std::optional<LoweredFunc>();
    std::vector<tir::Buffer> params;
    std::vector<std::string> rows;
    for (size_t i = 0; i < inner.size(); ++i) {
      if (per_row[i] < 0) {
        params.push_back(inner[i]);
        continue;
      }
      params.push_back(tir::WithShape(inner[i], widened(inner[i], batch_n), {}));
      rows.push_back(absl::StrCat(i, ":", per_row[i]));
    }
    if (rows.empty()) return std::optional<LoweredFunc>();
    std::map<std::string, std::string> attrs = one->func->attrs;
    attrs["kiln.batch_split"] = n;
    attrs["kiln.batch_z"] = absl::StrJoin(rows, ",");
    LoweredFunc out = *one;
    out.func = tir::MakePrimFunc(one->func->name, std::move(params), std::move(body), std::move(attrs));
    return std::optional<LoweredFunc>(std::move(out));
  }
  const tir::Var row = tir::MakeVar("batch");
  RowShift shift;
  std::vector<tir::Buffer> outer;
  for (size_t i = 0; i < inner.size(); ++i) {
    const tir::Buffer& b = inner[i];
    if (per_row[i] < 0) {
      outer.push_back(b);
      continue;
    }
    tir::Buffer wide = tir::MakeBuffer(b->name, b->dtype, widened(b, batch_n), b->scope);
    // The wide buffer flat, as the body indexes it.
    tir::Buffer flat = tir::WithShape(wide, {tir::Mul(batch_n, tir::IntImm(per_row[i]))}, {});
    shift.rows[b->data.get()] = {flat, tir::Mul(row, tir::IntImm(per_row[i]))};
    shift.data_vars.insert(b->data.get());
    outer.push_back(wide);
  }
  tir::Stmt shifted = shift.VisitStmt(one->func->body);
  if (shift.escaped) return std::optional<LoweredFunc>();
  tir::Stmt loop = tir::For(row, tir::IntImm(0), batch_n, tir::ForKind::kSerial, shifted);
  std::map<std::string, std::string> attrs = one->func->attrs;
  attrs["kiln.batch_split"] = n;
  LoweredFunc out = *one;
  out.func = tir::MakePrimFunc(one->func->name, std::move(outer), std::move(loop), std::move(attrs));
  return std::optional<LoweredFunc>(std::move(out));
}

}  // namespace kiln::lowering::vm
