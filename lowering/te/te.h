// File: lowering/te/te.h
//
// Tensor expressions (TVM's `te`): what an operator computes, written as a
// function of output indices, before any decision about loops. A schedule
// (lowering/te/schedule.h) then decides the loops, and ScheduleOps turns both
// into loop IR (ir/tir.h).
//
//   Tensor a = Placeholder({n, IntImm(64)}, DataType::Float(32), "A");
//   IterVar k = ReduceAxis({IntImm(0), IntImm(64)}, "k");
//   Tensor rowsum = Compute({n}, [&](const std::vector<Var>& i) {
//     return Sum(a({i[0], k->var}), {k});
//   }, "rowsum");
//
// A Tensor is one output of an Operation: (op, value_index), a value type.
// Reading a tensor inside a compute body, `a({i, j})`, is a ProducerLoad
// expression (tir kind kProducerLoad whose `producer` is the Operation and
// `int_value` the output index).
//
// Rules (checked by ValidateCompute, not by the factories, which never fail):
//   - A Reduce (Sum/Max/Min/Prod/ArgMax/ArgMin) may appear only at the top of a
//     compute body; all bodies of a multi-output compute share the same axes.
//   - Indices are int64 (tir::kIndexType).
#ifndef KILN_LOWERING_TE_TE_H_
#define KILN_LOWERING_TE_TE_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ir/dtype.h"
#include "ir/object.h"
#include "ir/tir.h"

namespace kiln::te {

using tir::IterVar;
using tir::PrimExpr;
using tir::Range;
using tir::Var;

class OperationNode;
using Operation = Ref<const OperationNode>;

// One output of an operation.
class Tensor {
 public:
  Tensor() = default;
  Tensor(Operation op, int value_index) : op_(std::move(op)), value_index_(value_index) {}

  bool defined() const { return op_.defined(); }
  const Operation& op() const { return op_; }
  int value_index() const { return value_index_; }
  const std::vector<PrimExpr>& shape() const;
  DataType dtype() const;
  int ndim() const { return static_cast<int>(shape().size()); }
  // The op's name, with ".v<i>" for outputs after the first.
  std::string name() const;

  // Reads element `indices` (one int64 index per dim): a ProducerLoad.
  PrimExpr operator()(std::vector<PrimExpr> indices) const;

  friend bool operator==(const Tensor& a, const Tensor& b) {
    return a.op_ == b.op_ && a.value_index_ == b.value_index_;
  }
  friend bool operator!=(const Tensor& a, const Tensor& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const Tensor& t) {
    return H::combine(std::move(h), static_cast<const void*>(t.op_.get()), t.value_index_);
  }

 private:
  Operation op_;
  int value_index_ = 0;
};

enum class OpKind : uint8_t { kPlaceholder, kCompute };

class OperationNode : public Object {
 public:
  OpKind kind = OpKind::kPlaceholder;
  std::string name;
  std::string tag;  // "elemwise", "broadcast", "injective", "comm_reduce", "conv2d_nchw", ...
  std::map<std::string, std::string> attrs;

  // Every output's shape and dtype (a compute's outputs share one shape).
  std::vector<std::vector<PrimExpr>> output_shapes;
  std::vector<DataType> output_dtypes;

  // kCompute only: one data-parallel IterVar per output dim (dom [0, shape[d])),
  // the reduction axes (empty unless the body is a Reduce), one body per output.
  std::vector<IterVar> axis;
  std::vector<IterVar> reduce_axis;
  std::vector<PrimExpr> body;

  int num_outputs() const { return static_cast<int>(output_dtypes.size()); }
  Tensor output(int i) const;
  // The distinct tensors the bodies read, in first-use order.
  std::vector<Tensor> InputTensors() const;

  static bool IsInstance(const Object* o) {
    return dynamic_cast<const OperationNode*>(o) != nullptr;
  }
};

// ---- Building tensor expressions -----------------------------------------

Tensor Placeholder(std::vector<PrimExpr> shape, DataType dtype, absl::string_view name);

using FCompute = std::function<PrimExpr(const std::vector<Var>& indices)>;
using FComputeMulti = std::function<std::vector<PrimExpr>(const std::vector<Var>& indices)>;

// out[i...] = f(i...), for every i in shape. The dtype is the body's.
Tensor Compute(std::vector<PrimExpr> shape, const FCompute& f, absl::string_view name = "T",
               absl::string_view tag = "", std::map<std::string, std::string> attrs = {});
// Several outputs of one shape computed together (e.g. an argmax's value and index).
std::vector<Tensor> ComputeMulti(std::vector<PrimExpr> shape, const FComputeMulti& f,
                                 absl::string_view name = "T", absl::string_view tag = "",
                                 std::map<std::string, std::string> attrs = {});

// A compute operation from its parts, for code that rewrites operations
// (schedules): the output shape is the axes' extents (each axis' dom starts at 0).
Operation MakeComputeOp(absl::string_view name, absl::string_view tag,
                        std::map<std::string, std::string> attrs, std::vector<IterVar> axis,
                        std::vector<PrimExpr> bodies);

// A reduction axis over `dom`.
IterVar ReduceAxis(Range dom, absl::string_view name = "k");

// Reductions over `axes` (only at the top of a compute body). `condition`
// (optional) skips elements where it is false.
PrimExpr Sum(PrimExpr source, std::vector<IterVar> axes, PrimExpr condition = nullptr);
PrimExpr Prod(PrimExpr source, std::vector<IterVar> axes, PrimExpr condition = nullptr);
PrimExpr Max(PrimExpr source, std::vector<IterVar> axes, PrimExpr condition = nullptr);
PrimExpr Min(PrimExpr source, std::vector<IterVar> axes, PrimExpr condition = nullptr);
// Index (row-major flat index over `axes`, int64) of the first (or last) max / min.
PrimExpr ArgMax(PrimExpr source, std::vector<IterVar> axes, bool select_last_index = false);
PrimExpr ArgMin(PrimExpr source, std::vector<IterVar> axes, bool select_last_index = false);

// Checks the rules above for `op` and every op it reads, recursively; the error
// names the operation.
absl::Status ValidateCompute(const std::vector<Tensor>& outputs);

// All operations reachable from `outputs` (inputs first: a topological order).
std::vector<Operation> PostOrderOps(const std::vector<Tensor>& outputs);

// Replaces reads of tensors in `body` (ProducerLoad) with fn(tensor, indices);
// fn returns null to keep a read.
PrimExpr ReplaceTensorReads(
    const PrimExpr& body,
    const std::function<PrimExpr(const Tensor& t, const std::vector<PrimExpr>& indices)>& fn);

}  // namespace kiln::te

#endif  // KILN_LOWERING_TE_TE_H_
