// File: lowering/te/te.cc — tensor expressions: placeholders, computes,
// reductions, validation and graph walks.
#include "lowering/te/te.h"

#include <unordered_set>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"

namespace kiln::te {
namespace {

const std::vector<PrimExpr>& EmptyShape() {
  static const std::vector<PrimExpr>* const kEmpty = new std::vector<PrimExpr>();
  return *kEmpty;
}

std::vector<IterVar> MakeAxes(const std::vector<PrimExpr>& shape) {
  std::vector<IterVar> axes;
  axes.reserve(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    axes.push_back(tir::MakeIterVar({tir::IntImm(0), shape[d]},
                                    tir::MakeVar(absl::StrCat("ax", d)), tir::IterKind::kDataPar));
  }
  return axes;
}

std::vector<Var> AxisVars(const std::vector<IterVar>& axes) {
  std::vector<Var> vars;
  vars.reserve(axes.size());
  for (const IterVar& iv : axes) vars.push_back(iv->var);
  return vars;
}

Operation BuildComputeOp(std::vector<PrimExpr> shape, std::vector<IterVar> axes,
                        std::vector<PrimExpr> bodies, absl::string_view name,
                        absl::string_view tag, std::map<std::string, std::string> attrs) {
  Ref<OperationNode> op(new OperationNode());
  op->kind = OpKind::kCompute;
  op->name = std::string(name);
  op->tag = std::string(tag);
  op->attrs = std::move(attrs);
  op->axis = std::move(axes);
  for (const PrimExpr& b : bodies) {
    op->output_shapes.push_back(shape);
    op->output_dtypes.push_back(b ? b->dtype : DataType::Void());
    if (op->reduce_axis.empty() && b && b->kind == tir::ExprKind::kReduce) {
      op->reduce_axis = b->axes;
    }
  }
  op->body = std::move(bodies);
  return op;
}

// The operation a ProducerLoad reads, or null.
const OperationNode* ProducerOp(const tir::ExprNode* e) {
  if (e->kind != tir::ExprKind::kProducerLoad || !e->producer) return nullptr;
  return dynamic_cast<const OperationNode*>(e->producer.get());
}

class TensorReadReplacer : public tir::StmtExprMutator {
 public:
  using Fn = std::function<PrimExpr(const Tensor&, const std::vector<PrimExpr>&)>;
  explicit TensorReadReplacer(const Fn& fn) : fn_(fn) {}

 protected:
  PrimExpr VisitExpr_(const PrimExpr& e) override {
    PrimExpr r = MutateChildren(e);
    if (const OperationNode* op = ProducerOp(r.get())) {
      Tensor t(Ref<const OperationNode>(const_cast<OperationNode*>(op)),
               static_cast<int>(r->int_value));
      PrimExpr repl = fn_(t, r->args);
      if (repl) return repl;
    }
    return r;
  }

 private:
  const Fn& fn_;
};

}  // namespace

// ---- Tensor -------------------------------------------------------------------

const std::vector<PrimExpr>& Tensor::shape() const {
  if (!op_ || value_index_ < 0 || value_index_ >= static_cast<int>(op_->output_shapes.size())) {
    return EmptyShape();
  }
  return op_->output_shapes[static_cast<size_t>(value_index_)];
}

DataType Tensor::dtype() const {
  if (!op_ || value_index_ < 0 || value_index_ >= op_->num_outputs()) return DataType::Void();
  return op_->output_dtypes[static_cast<size_t>(value_index_)];
}

std::string Tensor::name() const {
  if (!op_) return "<undefined tensor>";
  if (value_index_ == 0) return op_->name;
  return absl::StrCat(op_->name, ".v", value_index_);
}

PrimExpr Tensor::operator()(std::vector<PrimExpr> indices) const {
  Ref<tir::ExprNode> n(new tir::ExprNode());
  n->kind = tir::ExprKind::kProducerLoad;
  n->dtype = dtype();
  n->producer = op_;
  n->int_value = value_index_;
  n->args = std::move(indices);
  return n;
}

// ---- OperationNode ------------------------------------------------------------

Tensor OperationNode::output(int i) const {
  return Tensor(Ref<const OperationNode>(const_cast<OperationNode*>(this)), i);
}

std::vector<Tensor> OperationNode::InputTensors() const {
  std::vector<Tensor> out;
  absl::flat_hash_set<Tensor> seen;
  // Pre-order walk, so tensors come in first-use order.
  std::function<void(const PrimExpr&)> walk = [&](const PrimExpr& e) {
    if (!e) return;
    if (const OperationNode* op = ProducerOp(e.get())) {
      Tensor t(Ref<const OperationNode>(const_cast<OperationNode*>(op)),
               static_cast<int>(e->int_value));
      if (seen.insert(t).second) out.push_back(t);
    }
    for (const PrimExpr& a : e->args) walk(a);
  };
  for (const PrimExpr& b : body) walk(b);
  return out;
}

// ---- Builders -------------------------------------------------------------------

Tensor Placeholder(std::vector<PrimExpr> shape, DataType dtype, absl::string_view name) {
  Ref<OperationNode> op(new OperationNode());
  op->kind = OpKind::kPlaceholder;
  op->name = std::string(name);
  op->output_shapes.push_back(std::move(shape));
  op->output_dtypes.push_back(dtype);
  return Tensor(op, 0);
}

Tensor Compute(std::vector<PrimExpr> shape, const FCompute& f, absl::string_view name,
               absl::string_view tag, std::map<std::string, std::string> attrs) {
  std::vector<IterVar> axes = MakeAxes(shape);
  PrimExpr body = f(AxisVars(axes));
  Operation op = BuildComputeOp(std::move(shape), std::move(axes), {std::move(body)}, name, tag,
                               std::move(attrs));
  return op->output(0);
}

std::vector<Tensor> ComputeMulti(std::vector<PrimExpr> shape, const FComputeMulti& f,
                                 absl::string_view name, absl::string_view tag,
                                 std::map<std::string, std::string> attrs) {
  std::vector<IterVar> axes = MakeAxes(shape);
  std::vector<PrimExpr> bodies = f(AxisVars(axes));
  Operation op =
      BuildComputeOp(std::move(shape), std::move(axes), std::move(bodies), name, tag, std::move(attrs));
  std::vector<Tensor> outs;
  for (int i = 0; i < op->num_outputs(); ++i) outs.push_back(op->output(i));
  return outs;
}

Operation MakeComputeOp(absl::string_view name, absl::string_view tag,
                        std::map<std::string, std::string> attrs, std::vector<IterVar> axis,
                        std::vector<PrimExpr> bodies) {
  std::vector<PrimExpr> shape;
  for (const IterVar& iv : axis) shape.push_back(iv->dom.extent);
  return BuildComputeOp(std::move(shape), std::move(axis), std::move(bodies), name, tag,
                        std::move(attrs));
}

IterVar ReduceAxis(Range dom, absl::string_view name) {
  return tir::MakeIterVar(std::move(dom), tir::MakeVar(name), tir::IterKind::kReduce);
}

PrimExpr Sum(PrimExpr source, std::vector<IterVar> axes, PrimExpr condition) {
  return tir::Reduce(tir::ReduceKind::kSum, std::move(source), std::move(axes), std::move(condition));
}
PrimExpr Prod(PrimExpr source, std::vector<IterVar> axes, PrimExpr condition) {
  return tir::Reduce(tir::ReduceKind::kProd, std::move(source), std::move(axes),
                     std::move(condition));
}
PrimExpr Max(PrimExpr source, std::vector<IterVar> axes, PrimExpr condition) {
  return tir::Reduce(tir::ReduceKind::kMax, std::move(source), std::move(axes), std::move(condition));
}
PrimExpr Min(PrimExpr source, std::vector<IterVar> axes, PrimExpr condition) {
  return tir::Reduce(tir::ReduceKind::kMin, std::move(source), std::move(axes), std::move(condition));
}

namespace {
// Row-major flat index of the axes' current values (relative to each axis' min).
PrimExpr FlatIndex(const std::vector<IterVar>& axes) {
  PrimExpr flat = tir::IntImm(0);
  for (const IterVar& iv : axes) {
    PrimExpr rel = iv->var - iv->dom.min;
    flat = flat * iv->dom.extent + rel;
  }
  return flat;
}
}  // namespace

PrimExpr ArgMax(PrimExpr source, std::vector<IterVar> axes, bool select_last_index) {
  PrimExpr flat = FlatIndex(axes);
  return tir::ArgReduce(tir::ReduceKind::kArgMax, std::move(source), std::move(flat),
                        std::move(axes), select_last_index);
}

PrimExpr ArgMin(PrimExpr source, std::vector<IterVar> axes, bool select_last_index) {
  PrimExpr flat = FlatIndex(axes);
  return tir::ArgReduce(tir::ReduceKind::kArgMin, std::move(source), std::move(flat),
                        std::move(axes), select_last_index);
}

// ---- Validation ------------------------------------------------------------------

namespace {

absl::Status OpError(const OperationNode& op, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("compute '", op.name, "': ", what));
}

bool SameAxes(const std::vector<IterVar>& a, const std::vector<IterVar>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i])) return false;
  }
  return true;
}

// Checks one expression: reads are well-formed, no nested reduction, reduce
// axes used only inside their reduction.
absl::Status CheckExpr(const OperationNode& op, const PrimExpr& e, bool top,
                       const std::unordered_set<const tir::ExprNode*>& reduce_vars,
                       bool inside_reduce) {
  if (!e) return OpError(op, "a body expression is null");
  switch (e->kind) {
    case tir::ExprKind::kReduce:
      if (!top) {
        return OpError(op, absl::StrCat("a reduction (", tir::ReduceKindName(e->reduce_kind),
                                        ") may appear only at the top of a compute body; "
                                        "compute the inner reduction as its own tensor"));
      }
      for (const IterVar& iv : e->axes) {
        if (!iv || !iv->dom.defined() || !iv->dom.extent) {
          return OpError(op, "a reduction axis has no range");
        }
        if (iv->iter_kind != tir::IterKind::kReduce) {
          return OpError(op, absl::StrCat("axis '", iv->var->name,
                                          "' of a reduction is not a reduction axis (use "
                                          "ReduceAxis)"));
        }
      }
      for (const PrimExpr& a : e->args) {
        absl::Status s = CheckExpr(op, a, false, reduce_vars, true);
        if (!s.ok()) return s;
      }
      return absl::OkStatus();
    case tir::ExprKind::kVar:
      if (reduce_vars.count(e.get())) {
        bool own = false;
        if (inside_reduce) {
          for (const IterVar& iv : op.reduce_axis) own |= iv->var.get() == e.get();
        }
        if (!own) {
          return OpError(op, absl::StrCat("reduction axis '", e->name,
                                          "' is used outside its reduction"));
        }
      }
      return absl::OkStatus();
    case tir::ExprKind::kProducerLoad: {
      const OperationNode* p = ProducerOp(e.get());
      if (p == nullptr) return OpError(op, "a tensor read has no producing operation");
      if (e->int_value < 0 || e->int_value >= p->num_outputs()) {
        return OpError(op, absl::StrCat("reads output ", e->int_value, " of '", p->name,
                                        "', which has ", p->num_outputs(), " outputs"));
      }
      const auto& shape = p->output_shapes[static_cast<size_t>(e->int_value)];
      if (e->args.size() != shape.size()) {
        return OpError(op, absl::StrCat("reads tensor '", p->name, "' with ", e->args.size(),
                                        " indices, but it has ", shape.size(), " dims"));
      }
      for (size_t i = 0; i < e->args.size(); ++i) {
        if (!e->args[i]) return OpError(op, absl::StrCat("index ", i, " of a read of '", p->name, "' is null"));
        if (e->args[i]->dtype != tir::kIndexType) {
          return OpError(op, absl::StrCat("index ", i, " of a read of '", p->name, "' is ",
                                          e->args[i]->dtype.ToString(),
                                          "; indices must be int64"));
        }
      }
      break;
    }
    default:
      break;
  }
  for (const PrimExpr& a : e->args) {
    absl::Status s = CheckExpr(op, a, false, reduce_vars, inside_reduce);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ValidateOp(const OperationNode& op,
                        const std::unordered_set<const tir::ExprNode*>& reduce_vars) {
  if (op.kind == OpKind::kPlaceholder) {
    if (op.num_outputs() != 1) return OpError(op, "a placeholder has exactly one output");
    for (const PrimExpr& d : op.output_shapes[0]) {
      if (!d || !d->dtype.is_integral()) {
        return absl::InvalidArgumentError(
            absl::StrCat("placeholder '", op.name, "': every dim must be an integer expression"));
      }
    }
    return absl::OkStatus();
  }
  if (op.body.empty()) return OpError(op, "has no body");
  if (op.body.size() != op.output_dtypes.size() || op.body.size() != op.output_shapes.size()) {
    return OpError(op, "the number of bodies, dtypes and shapes differ");
  }
  if (op.axis.size() != op.output_shapes[0].size()) {
    return OpError(op, "needs one axis per output dim");
  }
  for (size_t d = 0; d < op.axis.size(); ++d) {
    const IterVar& iv = op.axis[d];
    if (!iv || !iv->dom.defined() || iv->iter_kind != tir::IterKind::kDataPar) {
      return OpError(op, absl::StrCat("axis ", d, " is not a data-parallel IterVar with a range"));
    }
  }
  const bool is_reduce = op.body[0] && op.body[0]->kind == tir::ExprKind::kReduce;
  for (size_t i = 0; i < op.body.size(); ++i) {
    const PrimExpr& b = op.body[i];
    if (!b) return OpError(op, absl::StrCat("body ", i, " is null"));
    if (b->dtype != op.output_dtypes[i]) {
      return OpError(op, absl::StrCat("output ", i, " is declared ",
                                      op.output_dtypes[i].ToString(), " but its body is ",
                                      b->dtype.ToString()));
    }
    if (b->dtype.lanes() != 1) return OpError(op, "a body must be a scalar expression");
    const bool r = b->kind == tir::ExprKind::kReduce;
    if (r != is_reduce) {
      return OpError(op, "either every body of a multi-output compute is a reduction or none is");
    }
    if (r && !SameAxes(b->axes, op.reduce_axis)) {
      return OpError(op, "all bodies of a multi-output compute must reduce over the same axes");
    }
    if (i > 0 && !(op.output_shapes[i].size() == op.output_shapes[0].size())) {
      return OpError(op, "all outputs of a compute share one shape");
    }
    KILN_RETURN_IF_ERROR(CheckExpr(op, b, true, reduce_vars, false));
  }
  if (!is_reduce && !op.reduce_axis.empty()) {
    return OpError(op, "has reduction axes but its body is not a reduction");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateCompute(const std::vector<Tensor>& outputs) {
  for (const Tensor& t : outputs) {
    if (!t.defined()) return absl::InvalidArgumentError("ValidateCompute: an output tensor is undefined");
    if (t.value_index() < 0 || t.value_index() >= t.op()->num_outputs()) {
      return absl::InvalidArgumentError(absl::StrCat("ValidateCompute: tensor of '", t.op()->name,
                                                     "' has an out-of-range output index"));
    }
  }
  const std::vector<Operation> ops = PostOrderOps(outputs);
  // Every reduction axis of the graph: each may be used only in its own reduction.
  std::unordered_set<const tir::ExprNode*> reduce_vars;
  for (const Operation& op : ops) {
    for (const PrimExpr& b : op->body) {
      if (b && b->kind == tir::ExprKind::kReduce) {
        for (const IterVar& iv : b->axes) {
          if (iv && iv->var) reduce_vars.insert(iv->var.get());
        }
      }
    }
  }
  for (const Operation& op : ops) {
    absl::Status s = ValidateOp(*op, reduce_vars);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

// ---- Graph walks -------------------------------------------------------------------

std::vector<Operation> PostOrderOps(const std::vector<Tensor>& outputs) {
  std::vector<Operation> order;
  std::unordered_set<const OperationNode*> visited;
  // Iterative DFS: (op, inputs, next input index).
  struct Frame {
    Operation op;
    std::vector<Tensor> inputs;
    size_t next = 0;
  };
  for (const Tensor& out : outputs) {
    if (!out.defined() || visited.count(out.op().get())) continue;
    std::vector<Frame> stack;
    visited.insert(out.op().get());
    stack.push_back({out.op(), out.op()->InputTensors(), 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.inputs.size()) {
        Operation in = f.inputs[f.next++].op();
        if (in && visited.insert(in.get()).second) {
          std::vector<Tensor> ins = in->InputTensors();
          stack.push_back({in, std::move(ins), 0});
        }
        continue;
      }
      order.push_back(f.op);
      stack.pop_back();
    }
  }
  return order;
}

PrimExpr ReplaceTensorReads(
    const PrimExpr& body,
    const std::function<PrimExpr(const Tensor& t, const std::vector<PrimExpr>& indices)>& fn) {
  TensorReadReplacer r(fn);
  return r.VisitExpr(body);
}

}  // namespace kiln::te
