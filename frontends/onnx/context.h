// File: frontends/onnx/context.h (internal to the importer)
//
// What the importer knows while it walks a graph (ImportState: the expression
// of every value defined so far, the graph-input variables, caches) and the
// ConvertContext a converter sees for one node (NodeContext).
//
//   NodeContext ctx(node, index, opset, &state);
//   KILN_ASSIGN_OR_RETURN(std::vector<Expr> outs, converter(ctx));
//
// Every expression a converter reads through Input() is typed, and every
// expression it builds through Call/Const/TupleGet is typed on the spot
// (EnsureTyped), so the next converter can read shapes and dtypes.
#ifndef KILN_FRONTENDS_ONNX_CONTEXT_H_
#define KILN_FRONTENDS_ONNX_CONTEXT_H_

#include <cstdint>
#include <optional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "frontends/onnx/converter.h"
#include "frontends/onnx/tensor_proto.h"

namespace kiln::onnx_frontend::internal {

// The sequence ADTs of one import (ConvertContext::Sequence), by name, and
// its optional ADTs (ConvertContext::OptionalOf).
struct SequenceRegistry {
  std::map<std::string, SequenceAdt> adts;
  std::map<std::string, OptionalAdt> optionals;
  // SequenceEmpty's results (a nil of rank 0) whose rank the first
  // SequenceInsert decides (convert_sequence.cc); the Expr keeps the node alive.
  absl::flat_hash_map<const ExprNode*, DataType> pending_empty;

  absl::StatusOr<SequenceAdt> Get(DataType dtype, int64_t rank);
  std::optional<SequenceAdt> Find(const Type& t) const;
  absl::StatusOr<OptionalAdt> GetOptional(DataType dtype, int64_t rank, bool of_sequence);
  std::optional<OptionalAdt> FindOptional(const Type& t) const;
};

struct ImportState {
  // The expression of each ONNX value defined so far (all typed).
  absl::flat_hash_map<std::string, Expr> values;

  // Subgraphs (If/Loop/Scan bodies, subgraph.cc): the enclosing graph's
  // state, where names this graph does not define are looked up; when
  // `captures` is set, an enclosing value that is not a constant becomes a
  // fresh Var of this graph, recorded there. Null for the model's graph.
  ImportState* parent = nullptr;
  std::vector<ConvertContext::Capture>* captures = nullptr;
  // The model's opsets by domain ("" for ONNX's), for the nodes of subgraphs.
  const absl::flat_hash_map<std::string, int64_t>* opsets = nullptr;
  // Outputs of the model graph's nodes that were not converted.
  const absl::flat_hash_set<std::string>* unknown = nullptr;
  int depth = 0;  // how many subgraphs deep (0: the model's graph)
  // The import's sequence ADTs (shared by its subgraphs); null: none allowed.
  SequenceRegistry* sequences = nullptr;
  // Subgraphs imported so far under the model's graph (kept there; a body is
  // imported again when a carried shape changes, once per batch entry by
  // opset-8 Scan), bounded by kMaxSubgraphImports.
  int64_t subgraph_imports = 0;

  // The value `name` names here or in an enclosing graph (capturing it as
  // said above), or null.
  const Expr* Lookup(const std::string& name);
  // Whether `name` is an output of a node that was not converted (here or in
  // an enclosing graph).
  bool IsUnknown(const std::string& name) const;
  // The graph-input variables of `main`, by node.
  absl::flat_hash_map<const VarNode*, std::string> input_names;
  // Those of them that are initializers kept overridable.
  absl::flat_hash_set<std::string> overridable;
  TensorReadOptions tensor_options;

  // Caches (keyed by node; the Expr keeps the node alive so an address is
  // never reused while it is a key).
  absl::flat_hash_map<const ExprNode*, std::pair<Expr, Ref<const HostTensor>>> folded;
  absl::flat_hash_map<const ExprNode*, std::pair<Expr, std::vector<std::string>>> depends_on;

  // The graph inputs `e` depends on (sorted, unique), memoized.
  const std::vector<std::string>& GraphInputsOf(const Expr& e);
};

// Sets e's checked_type if it has none: a call whose arguments are typed is
// typed alone (without revisiting the graph above it); anything else is typed
// by inference over the whole expression.
absl::Status EnsureTyped(const Expr& e);

// Subgraphs nest at most this deep (an If inside a Loop body is 2).
inline constexpr int kMaxSubgraphDepth = 32;
// A model's subgraphs are imported at most this many times in all: nested
// bodies imported again and again could otherwise multiply without bound.
inline constexpr int64_t kMaxSubgraphImports = 2000;

// Imports a subgraph of the node `where` names, inside `parent`
// (ConvertContext::ImportSubgraph; subgraph.cc).
absl::StatusOr<std::vector<Expr>> ImportSubgraphIn(ImportState* parent, absl::string_view where,
                                                   const onnx::GraphProto& graph,
                                                   const std::vector<Expr>& inputs,
                                                   std::vector<ConvertContext::Capture>* captures);

// "Conv (node 'conv1')", or "Conv (node #3)" for an unnamed node.
std::string NodeWhere(const onnx::NodeProto& node, int index);

// `status` with its message prefixed by `where` (unless it already names it),
// keeping its code and payloads.
absl::Status WithWhere(const absl::Status& status, absl::string_view where);

class NodeContext final : public ConvertContext {
 public:
  NodeContext(const onnx::NodeProto& node, int index, int64_t opset, ImportState* state);

  const onnx::NodeProto& node() const override { return node_; }
  int64_t opset() const override { return opset_; }
  std::string where() const override { return where_; }

  int num_inputs() const override;
  bool HasInput(int i) const override;
  absl::StatusOr<Expr> Input(int i) override;
  absl::StatusOr<TensorType> InputType(int i) override;
  absl::StatusOr<Ref<const HostTensor>> ConstantInput(int i) override;
  absl::StatusOr<std::optional<std::vector<int64_t>>> ConstantInts(int i) override;

  bool HasAttr(absl::string_view name) const override;
  absl::StatusOr<int64_t> AttrInt(absl::string_view name, int64_t def) const override;
  absl::StatusOr<double> AttrFloat(absl::string_view name, double def) const override;
  absl::StatusOr<std::string> AttrString(absl::string_view name,
                                         absl::string_view def) const override;
  absl::StatusOr<std::vector<int64_t>> AttrInts(absl::string_view name,
                                                std::vector<int64_t> def) const override;
  absl::StatusOr<std::vector<double>> AttrFloats(absl::string_view name,
                                                 std::vector<double> def) const override;
  absl::StatusOr<std::vector<std::string>> AttrStrings(absl::string_view name,
                                                       std::vector<std::string> def) const override;
  absl::StatusOr<Ref<const HostTensor>> AttrTensor(absl::string_view name) const override;
  absl::StatusOr<const onnx::AttributeProto*> RequiredAttr(absl::string_view name) const override;

  absl::StatusOr<Expr> Call(absl::string_view op_name, std::vector<Expr> args,
                            Attrs attrs) override;
  absl::StatusOr<Expr> Const(Ref<const HostTensor> value) override;
  absl::StatusOr<Expr> ScalarConst(DataType dtype, double value) override;
  absl::StatusOr<Expr> TupleGet(Expr tuple, int index) override;

  absl::Status Invalid(absl::string_view message) const override;
  absl::Status Unsupported(absl::string_view message) const override;

  absl::StatusOr<std::vector<Expr>> ImportSubgraph(const onnx::GraphProto& graph,
                                                   const std::vector<Expr>& inputs,
                                                   std::vector<Capture>* captures) override;

  absl::StatusOr<SequenceAdt> Sequence(DataType dtype, int64_t rank) override;
  std::optional<SequenceAdt> AsSequence(const Type& t) override;
  void MarkRankPending(const Expr& nil) override;
  bool IsRankPending(const Expr& e) const override;
  absl::StatusOr<OptionalAdt> OptionalOf(DataType dtype, int64_t rank, bool of_sequence) override;
  std::optional<OptionalAdt> AsOptional(const Type& t) override;

 private:
  // The attribute named `name`, or null.
  const onnx::AttributeProto* FindAttr(absl::string_view name) const;
  // The attribute if present and of type `want` (an AttributeProto type),
  // null if absent, an error if of another type.
  absl::StatusOr<const onnx::AttributeProto*> TypedAttr(absl::string_view name, int want) const;
  // "input 1 ('shape')".
  std::string InputName(int i) const;

  const onnx::NodeProto& node_;
  const int64_t opset_;
  const std::string where_;
  ImportState* const state_;
};

}  // namespace kiln::onnx_frontend::internal

#endif  // KILN_FRONTENDS_ONNX_CONTEXT_H_
