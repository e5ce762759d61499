// Subgraphs (context.h, ConvertContext::ImportSubgraph): the GRAPH
// attributes of If, Loop and Scan, imported with the same converters as the
// model's graph. A subgraph's state chains to its enclosing graph's, so a
// name it does not define (ONNX's outer-scope values) is found there; a Loop
// or Scan body captures such values as variables (ImportState::Lookup).
//
// Nesting is bounded twice: protobuf's recursion limit when the model is
// parsed (importer.cc, about 33 nested subgraphs), and kMaxSubgraphDepth
// here, which also holds for a model built in memory.
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "frontends/onnx/context.h"
#include "frontends/onnx/converter.h"
#include "frontends/onnx/tensor_proto.h"
#include "ir/status_macros.h"
#include "onnx/onnx_pb.h"

namespace kiln::onnx_frontend::internal {

absl::StatusOr<std::vector<Expr>> ImportSubgraphIn(ImportState* parent, absl::string_view where,
                                                   const onnx::GraphProto& graph,
                                                   const std::vector<Expr>& inputs,
                                                   std::vector<ConvertContext::Capture>* captures) {
  const std::string in_graph =
      absl::StrCat(where, ": subgraph '", graph.name().empty() ? "(unnamed)" : graph.name(), "'");
  if (parent->depth + 1 > kMaxSubgraphDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat(in_graph, " is nested ", parent->depth + 1,
                     " subgraphs deep; kiln imports at most ", kMaxSubgraphDepth,
                     " levels of If/Loop/Scan inside one another (flatten the control flow)"));
  }
  ImportState* root = parent;
  while (root->parent != nullptr) root = root->parent;
  if (++root->subgraph_imports > kMaxSubgraphImports) {
    return absl::InvalidArgumentError(absl::StrCat(
        in_graph, ": the model's If/Loop/Scan bodies add up to more than ", kMaxSubgraphImports,
        " subgraph imports (nested bodies, each imported again per opset-8 Scan batch entry or "
        "when a loop-carried shape changes); flatten the control flow"));
  }
  if (graph.input_size() != static_cast<int>(inputs.size())) {
    return absl::InvalidArgumentError(absl::StrCat(in_graph, " has ", graph.input_size(),
                                                   " inputs, but the node gives it ",
                                                   inputs.size()));
  }
  if (parent->opsets == nullptr) {
    return absl::InternalError(absl::StrCat(in_graph, ": the importer set no opsets"));
  }
  ImportState sub;
  sub.parent = parent;
  sub.captures = captures;
  sub.opsets = parent->opsets;
  sub.depth = parent->depth + 1;
  sub.sequences = parent->sequences;
  sub.tensor_options = parent->tensor_options;
  for (int k = 0; k < graph.input_size(); ++k) {
    const std::string& name = graph.input(k).name();
    if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(in_graph, ": input ", k, " has no name"));
    if (!inputs[static_cast<size_t>(k)]) {
      return absl::InternalError(absl::StrCat(in_graph, ": input ", k, " has no expression"));
    }
    if (!sub.values.emplace(name, inputs[static_cast<size_t>(k)]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(in_graph, ": input '", name, "' is listed twice"));
    }
  }
  for (const onnx::TensorProto& init : graph.initializer()) {
    absl::StatusOr<Ref<const HostTensor>> t = TensorFromProto(init, sub.tensor_options);
    if (!t.ok()) {
      return absl::Status(t.status().code(),
                          absl::StrCat(in_graph, ": initializer ", t.status().message()));
    }
    KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(*t, init.name()));
    c->set_checked_type(c->tensor_type());
    sub.values.insert_or_assign(init.name(), c);
  }
  const ConverterRegistry& registry = ConverterRegistry::Global();
  absl::flat_hash_set<std::string> not_produced;  // outputs a converter left out
  const auto undefined = [&](absl::string_view what, const std::string& name) {
    if (not_produced.contains(name)) {
      return absl::UnimplementedError(absl::StrCat(in_graph, ": ", what, " '", name,
                                                   "' is an optional output its node's "
                                                   "converter does not produce"));
    }
    if (sub.IsUnknown(name)) {
      return absl::UnimplementedError(absl::StrCat(
          in_graph, ": ", what, " '", name,
          "' is the output of a node of an enclosing graph that was not converted"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        in_graph, ": ", what, " '", name,
        "' is not defined: no input, initializer or earlier node of this subgraph or of an "
        "enclosing graph has that name"));
  };
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto& node = graph.node(index);
    const std::string node_where = absl::StrCat(in_graph, ", node ", NodeWhere(node, index));
    const std::string domain = node.domain() == "ai.onnx" ? std::string() : node.domain();
    auto opset = sub.opsets->find(domain);
    if (opset == sub.opsets->end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node_where, ": the node's domain '", node.domain(), "' is not in the model's opset_import"));
    }
    for (int i = 0; i < node.input_size(); ++i) {
      if (node.input(i).empty() || sub.Lookup(node.input(i)) != nullptr) continue;
      return undefined(absl::StrCat(NodeWhere(node, index), "'s input ", i), node.input(i));
    }
    const Converter* converter = registry.Find(domain, node.op_type(), opset->second);
    if (converter == nullptr) {
      const std::string family = registry.AbsentFamily(domain, node.op_type());
      return absl::UnimplementedError(absl::StrCat(
          node_where, ": no converter for ", node.op_type(), " at opset ", opset->second,
          family.empty() ? "" : absl::StrCat(" (its converter family '", family,
                                             "' is not in this build)")));
    }
    NodeContext ctx(node, index, opset->second, &sub);
    absl::StatusOr<std::vector<Expr>> outs = (*converter)(ctx);
    if (!outs.ok()) return WithWhere(outs.status(), in_graph);
    for (int i = 0; i < node.output_size(); ++i) {
      const std::string& name = node.output(i);
      if (name.empty()) continue;
      if (static_cast<size_t>(i) >= outs->size()) {
        not_produced.insert(name);
        continue;
      }
      const Expr& e = (*outs)[static_cast<size_t>(i)];
      if (!e) {
        return absl::InternalError(
            absl::StrCat(node_where, ": the converter returned a null expression for output ", i));
      }
      KILN_RETURN_IF_ERROR(WithWhere(EnsureTyped(e), node_where));
      sub.values.insert_or_assign(name, e);
    }
  }
  if (graph.output_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(in_graph, " has no outputs"));
  }
  std::vector<Expr> results;
  for (const onnx::ValueInfoProto& out : graph.output()) {
    const Expr* e = sub.Lookup(out.name());
    if (e == nullptr) return undefined("output", out.name());
    results.push_back(*e);
  }
  return results;
}

}  // namespace kiln::onnx_frontend::internal
