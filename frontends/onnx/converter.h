// File: frontends/onnx/converter.h
//
// The converter interface: one function per ONNX operator (and opset range)
// that turns a NodeProto into graph-IR expressions. Converters live in one
// file per operator family (convert_elementwise.cc, convert_nn.cc,
// convert_tensor.cc, convert_reduce.cc, ...), each with a registration
// function called by RegisterAllConverters() (no static initializers).
//
//   absl::StatusOr<std::vector<Expr>> ConvertRelu(ConvertContext& c) {
//     KILN_ASSIGN_OR_RETURN(Expr x, c.Input(0));
//     return c.Call("nn.relu", {x});
//   }
//   r.Add("Relu", 6, ConvertRelu);      // since opset 6 (for 1..5 register another)
//
// A converter returns one Expr per node output (fewer when trailing optional
// outputs are not produced; the importer checks the outputs the graph uses).
// Every Expr it returns is typed (Call() runs type inference on the new call),
// so later converters can read shapes and dtypes of their inputs.
#ifndef KILN_FRONTENDS_ONNX_CONVERTER_H_
#define KILN_FRONTENDS_ONNX_CONVERTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/attrs.h"
#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/tensor.h"
#include "ir/type.h"

namespace onnx {
class NodeProto;
class AttributeProto;
class GraphProto;
}  // namespace onnx

namespace kiln::onnx_frontend {

// An ONNX sequence of tensors of one dtype and rank, as the graph IR's ADT
//   type Sequence_<dtype>_<rank> { SeqCons_..(Tensor[(?, ..), dtype], Sequence_..), SeqNil_.. }
// (elements may differ in extents, so every dim is `?`); the importer adds
// each one the model uses to the module (convert_sequence.cc builds on it).
struct SequenceAdt {
  TypeData data;
  Type type;         // the ADT, as its global type var
  TensorType elem;   // Tensor[(?, ..., ?), dtype]
  Constructor cons;  // tag 0: (elem, sequence)
  Constructor nil;   // tag 1
};

// An ONNX optional of a tensor or of a sequence of tensors, as the ADT
//   type Optional_<dtype>_<rank> { Some_..(Tensor[(?, ..), dtype]), None_.. }
//   type Optional_Sequence_<dtype>_<rank> { Some_..(Sequence_<dtype>_<rank>), None_.. }
// (one per payload type and import, added to the module after the sequence
// ADTs; convert_optional.cc builds on it).
struct OptionalAdt {
  TypeData data;
  Type type;         // the ADT, as its global type var
  Type payload;      // the tensor type, or the sequence ADT's type
  TensorType elem;   // the tensor type, or the sequence's element type
  bool of_sequence = false;
  Constructor some;  // tag 0: (payload)
  Constructor none;  // tag 1
};

class ConvertContext {
 public:
  virtual ~ConvertContext() = default;

  // The node being converted and the opset of its domain in this model.
  virtual const onnx::NodeProto& node() const = 0;
  virtual int64_t opset() const = 0;
  // "Conv (node 'conv1')": for messages.
  virtual std::string where() const = 0;

  // ---- inputs
  virtual int num_inputs() const = 0;  // as written in the node (incl. empty names)
  // Whether input i is present (exists and its name is not "").
  virtual bool HasInput(int i) const = 0;
  // Input i as an expression (InvalidArgument naming the node if absent).
  virtual absl::StatusOr<Expr> Input(int i) = 0;
  // The tensor type of input i (shape and dtype; InvalidArgument if absent or
  // not a tensor).
  virtual absl::StatusOr<TensorType> InputType(int i) = 0;
  // The value of input i when it is known at import time: an initializer, a
  // Constant node's output, a frozen graph input, or an expression that
  // constant-folds (Shape of a static shape, arithmetic on constants, ...).
  // If it depends on a graph input, the status carries kNeedsConstantPayload
  // (importer.h) naming those inputs.
  virtual absl::StatusOr<Ref<const HostTensor>> ConstantInput(int i) = 0;
  // ConstantInput(i) as int64 values (any integer dtype), or std::nullopt if
  // the input is absent.
  virtual absl::StatusOr<std::optional<std::vector<int64_t>>> ConstantInts(int i) = 0;

  // ---- attributes (a present attribute of the wrong type is an error)
  virtual bool HasAttr(absl::string_view name) const = 0;
  virtual absl::StatusOr<int64_t> AttrInt(absl::string_view name, int64_t def) const = 0;
  virtual absl::StatusOr<double> AttrFloat(absl::string_view name, double def) const = 0;
  virtual absl::StatusOr<std::string> AttrString(absl::string_view name,
                                                 absl::string_view def) const = 0;
  virtual absl::StatusOr<std::vector<int64_t>> AttrInts(
      absl::string_view name, std::vector<int64_t> def = {}) const = 0;
  virtual absl::StatusOr<std::vector<double>> AttrFloats(
      absl::string_view name, std::vector<double> def = {}) const = 0;
  virtual absl::StatusOr<std::vector<std::string>> AttrStrings(
      absl::string_view name, std::vector<std::string> def = {}) const = 0;
  // A TENSOR attribute (Constant's value, ConstantOfShape's value).
  virtual absl::StatusOr<Ref<const HostTensor>> AttrTensor(absl::string_view name) const = 0;
  // An attribute that must be present.
  virtual absl::StatusOr<const onnx::AttributeProto*> RequiredAttr(absl::string_view name) const = 0;

  // ---- building
  // `op_name(args)` with attrs (null: defaults), type-checked now: an error
  // names the node and the graph-IR operator.
  virtual absl::StatusOr<Expr> Call(absl::string_view op_name, std::vector<Expr> args,
                                    Attrs attrs = nullptr) = 0;
  // A typed constant.
  virtual absl::StatusOr<Expr> Const(Ref<const HostTensor> value) = 0;
  virtual absl::StatusOr<Expr> ScalarConst(DataType dtype, double value) = 0;
  // A projection of a tuple-typed expression, typed.
  virtual absl::StatusOr<Expr> TupleGet(Expr tuple, int index) = 0;

  // Errors that name the node.
  virtual absl::Status Invalid(absl::string_view message) const = 0;      // InvalidArgument
  virtual absl::Status Unsupported(absl::string_view message) const = 0;  // Unimplemented

  // ---- subgraphs (If's branches, Loop's and Scan's bodies)
  // An enclosing graph's value that a subgraph uses, made a variable of the
  // subgraph (so the subgraph can become a function that takes it).
  struct Capture {
    Var var;     // what the subgraph's expressions name
    Expr value;  // the enclosing value it stands for
  };
  // Imports `graph`, a GRAPH attribute of this node: graph input k is bound
  // to inputs[k]; a name the subgraph does not define is looked up in the
  // enclosing graphs (ONNX's outer-scope values). With `captures` null, an
  // enclosing value is used as it is (an If branch); otherwise each one that
  // is not a constant becomes a fresh Var, appended to *captures with the
  // value it stands for (a Loop or Scan body made a function). Returns the
  // subgraph's outputs, typed. Unimplemented where subgraphs are not
  // supported (the default); a node inside that has no converter is
  // Unimplemented too, naming it.
  virtual absl::StatusOr<std::vector<Expr>> ImportSubgraph(const onnx::GraphProto& graph,
                                                           const std::vector<Expr>& inputs,
                                                           std::vector<Capture>* captures);

  // ---- sequences
  // The sequence ADT of `dtype` tensors of rank `rank` (made once per import
  // and added to the module). Unimplemented where sequences are not
  // supported (the default).
  virtual absl::StatusOr<SequenceAdt> Sequence(DataType dtype, int64_t rank);
  // The sequence ADT `t` is, if it is one.
  virtual std::optional<SequenceAdt> AsSequence(const Type& t);
  // SequenceEmpty's result (a SeqNil of rank 0) whose element rank the first
  // SequenceInsert decides, marked and asked about.
  virtual void MarkRankPending(const Expr& /*nil*/) {}
  virtual bool IsRankPending(const Expr& /*e*/) const { return false; }

  // ---- optionals
  // The optional ADT of `dtype` tensors of rank `rank` (of_sequence: of
  // sequences of them), made once per import and added to the module.
  // Unimplemented where optionals are not supported (the default).
  virtual absl::StatusOr<OptionalAdt> OptionalOf(DataType dtype, int64_t rank, bool of_sequence);
  // The optional ADT `t` is, if it is one.
  virtual std::optional<OptionalAdt> AsOptional(const Type& t);
};

using Converter = std::function<absl::StatusOr<std::vector<Expr>>(ConvertContext&)>;

class ConverterRegistry {
 public:
  static ConverterRegistry& Global();
  // A converter for `op_type` (default ONNX domain, or `domain`) used for
  // opsets >= since_version (until the next registration's since_version).
  void Add(absl::string_view op_type, int since_version, Converter fn,
           absl::string_view domain = "");
  // The converter for opset `opset`, or null.
  const Converter* Find(absl::string_view domain, absl::string_view op_type, int64_t opset) const;
  std::vector<std::string> OpTypes(absl::string_view domain = "") const;
  // Every registered operator as "domain::op_type" ("::Relu" for the
  // default domain), sorted.
  std::vector<std::string> Keys() const;

  // A selective build (docs/selective_builds.md) records the operator
  // families it leaves out: their operators ("domain::op_type" keys, as
  // FamilyOps lists them) are then reported as "not in this build".
  void AddAbsentFamily(absl::string_view family, const std::vector<std::string>& keys);
  // The family of an operator that this build leaves out, or "".
  std::string AbsentFamily(absl::string_view domain, absl::string_view op_type) const;

 private:
  std::map<std::string, std::string> absent_;  // key -> family
  struct Entry {
    int since_version;
    Converter fn;
  };
  std::map<std::string, std::vector<Entry>> table_;  // "domain::op" -> sorted by version
};

// ONNX TensorProto.DataType -> kiln DataType (InvalidArgument for strings,
// complex, and unknown values).
absl::StatusOr<DataType> FromOnnxDataType(int32_t onnx_type);

// The family registration functions (convert_*.cc) and all of them at once
// (idempotent, thread-safe).
void RegisterElementwiseConverters(ConverterRegistry& r);
void RegisterNnConverters(ConverterRegistry& r);
void RegisterTensorConverters(ConverterRegistry& r);
void RegisterReduceConverters(ConverterRegistry& r);
void RegisterControlConverters(ConverterRegistry& r);  // If, Loop, Scan (convert_control.cc)
void RegisterAllConverters();

// The converter families a build can choose from ("elementwise", "nn",
// "tensor", "reduce", "control"), and the operators ("domain::op_type", sorted) each
// registers (families.cc; //frontends/onnx:families_test checks the lists
// against the registration functions).
const std::vector<std::string>& ConverterFamilies();
const std::vector<std::string>& FamilyOps(absl::string_view family);

}  // namespace kiln::onnx_frontend

#endif  // KILN_FRONTENDS_ONNX_CONVERTER_H_
