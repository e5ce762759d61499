// File: lowering/compute/tensor/naive_lower.cc
#include "lowering/compute/tensor/naive_lower.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace kiln::lowering::tensor::testing {
namespace {

using tir::Buffer;
using tir::PrimExpr;
using tir::Stmt;

class Lowerer {
 public:
  absl::StatusOr<tir::PrimFunc> Run(const std::vector<te::Tensor>& inputs,
                                    const std::vector<te::Tensor>& outputs, const std::string& name) {
    std::vector<Buffer> params;
    for (const te::Tensor& t : inputs) params.push_back(BufferFor(t, "in"));
    for (const te::Tensor& t : outputs) params.push_back(BufferFor(t, "out"));
    std::vector<Buffer> temps;
    std::vector<Stmt> stmts;
    for (const te::Operation& op : te::PostOrderOps(outputs)) {
      if (op->kind == te::OpKind::kPlaceholder) {
        if (!buffers_.count({op.get(), 0}))
          return absl::InvalidArgumentError(absl::StrCat("placeholder ", op->name, " is not an input"));
        continue;
      }
      for (int v = 0; v < op->num_outputs(); ++v) {
        if (!buffers_.count({op.get(), v})) temps.push_back(BufferFor(op->output(v), "tmp"));
      }
      KILN_ASSIGN_OR_RETURN(Stmt s, LowerOp(*op));
      stmts.push_back(std::move(s));
    }
    Stmt body = tir::Seq(std::move(stmts));
    for (const Buffer& b : temps) body = tir::Allocate(b, body);
    return tir::MakePrimFunc(name, std::move(params), body);
  }

 private:
  Buffer BufferFor(const te::Tensor& t, const char* kind) {
    auto key = std::make_pair(t.op().get(), t.value_index());
    auto it = buffers_.find(key);
    if (it != buffers_.end()) return it->second;
    Buffer b = tir::MakeBuffer(absl::StrCat(kind, buffers_.size(), "_", t.name()), t.dtype(), t.shape());
    buffers_[key] = b;
    return b;
  }

  PrimExpr Replace(const PrimExpr& e) {
    return te::ReplaceTensorReads(e, [&](const te::Tensor& t, const std::vector<PrimExpr>& idx) -> PrimExpr {
      auto it = buffers_.find({t.op().get(), t.value_index()});
      if (it == buffers_.end()) return nullptr;
      return tir::Load(it->second, idx);
    });
  }

  static Stmt Loops(const std::vector<tir::IterVar>& axes, Stmt body) {
    for (size_t i = axes.size(); i-- > 0;) {
      const tir::IterVar& iv = axes[i];
      body = tir::For(iv->var, iv->dom.min, iv->dom.extent, tir::ForKind::kSerial, body);
    }
    return body;
  }

  absl::StatusOr<Stmt> LowerOp(const te::OperationNode& op) {
    std::vector<PrimExpr> idx;
    for (const tir::IterVar& iv : op.axis) idx.push_back(iv->var);
    std::vector<Stmt> per_output;
    for (int v = 0; v < op.num_outputs(); ++v) {
      const Buffer& b = buffers_.at({&op, v});
      const PrimExpr& body = op.body[static_cast<size_t>(v)];
      if (body->kind != tir::ExprKind::kReduce) {
        per_output.push_back(tir::Store(b, Replace(body), idx));
        continue;
      }
      const PrimExpr source = Replace(body->args[0]);
      const PrimExpr cond = Replace(body->args[1]);
      const tir::ReduceKind kind = body->reduce_kind;
      if (kind == tir::ReduceKind::kArgMax || kind == tir::ReduceKind::kArgMin) {
        const DataType vt = source->dtype;
        Buffer best = tir::MakeBuffer("argbest", vt, {tir::IntImm(1)});
        const PrimExpr zero = tir::IntImm(0);
        const PrimExpr cur = tir::Load(best, {zero});
        const PrimExpr ci = tir::Load(b, idx);
        const bool last = body->int_value != 0;
        const bool mx = kind == tir::ReduceKind::kArgMax;
        PrimExpr cmp = mx ? (last ? tir::GE(source, cur) : tir::GT(source, cur))
                          : (last ? tir::LE(source, cur) : tir::LT(source, cur));
        if (vt.is_float()) {
          const PrimExpr nan_v = tir::Call(DataType::Bool(), "isnan", {source});
          const PrimExpr nan_c = tir::Call(DataType::Bool(), "isnan", {cur});
          cmp = tir::And(tir::Not(nan_c), tir::Or(nan_v, cmp));
        }
        const PrimExpr first = tir::EQ(ci, tir::IntImm(-1, b->dtype));
        const PrimExpr better = tir::And(cond, tir::Or(first, cmp));
        Stmt update = tir::IfThenElse(
            better, tir::Seq({tir::Store(best, source, {zero}),
                              tir::Store(b, tir::Cast(b->dtype, Replace(body->args[2])), idx)}));
        Stmt s = tir::Seq({tir::Store(b, tir::IntImm(-1, b->dtype), idx), Loops(body->axes, update),
                           // An empty reduction leaves -1; report index 0 as argmax of nothing.
                           tir::IfThenElse(tir::EQ(tir::Load(b, idx), tir::IntImm(-1, b->dtype)),
                                           tir::Store(b, tir::IntImm(0, b->dtype), idx))});
        per_output.push_back(tir::Allocate(best, s));
        continue;
      }
      const PrimExpr acc = tir::Load(b, idx);
      PrimExpr combined;
      switch (kind) {
        case tir::ReduceKind::kSum: combined = tir::Add(acc, source); break;
        case tir::ReduceKind::kProd: combined = tir::Mul(acc, source); break;
        case tir::ReduceKind::kMax: combined = tir::Max(acc, source); break;
        default: combined = tir::Min(acc, source); break;
      }
      if (kind == tir::ReduceKind::kMax || kind == tir::ReduceKind::kMin) {
        // Start from the first element: the identity of a 64-bit integer
        // max/min does not survive tir_eval's double storage.
        Buffer seen = tir::MakeBuffer("seen", DataType::Int(32), {tir::IntImm(1)});
        const PrimExpr zero = tir::IntImm(0);
        const PrimExpr first = tir::EQ(tir::Load(seen, {zero}), tir::IntImm(0, DataType::Int(32)));
        Stmt update = tir::Seq({tir::Store(b, tir::Select(first, source, combined), idx),
                                tir::Store(seen, tir::IntImm(1, DataType::Int(32)), {zero})});
        if (!tir::IsConstValue(cond, 1)) update = tir::IfThenElse(cond, update);
        Stmt s = tir::Seq({tir::Store(b, tir::ReduceIdentity(kind, b->dtype), idx),
                           tir::Store(seen, tir::IntImm(0, DataType::Int(32)), {zero}),
                           Loops(body->axes, update)});
        per_output.push_back(tir::Allocate(seen, s));
        continue;
      }
      Stmt update = tir::Store(b, combined, idx);
      if (!tir::IsConstValue(cond, 1)) update = tir::IfThenElse(cond, update);
      per_output.push_back(tir::Seq({tir::Store(b, tir::ReduceIdentity(kind, b->dtype), idx),
                                     Loops(body->axes, update)}));
    }
    return Loops(op.axis, tir::Seq(std::move(per_output)));
  }

  std::map<std::pair<const te::OperationNode*, int>, Buffer> buffers_;
};

}  // namespace

absl::StatusOr<tir::PrimFunc> NaiveLower(const std::vector<te::Tensor>& inputs,
                                         const std::vector<te::Tensor>& outputs,
                                         const std::string& name) {
  Lowerer l;
  return l.Run(inputs, outputs, name);
}

}  // namespace kiln::lowering::tensor::testing
