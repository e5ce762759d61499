// File: lowering/graph_plan.cc
//
// Walks `main` of a fused module the way the graph executor will run it
// (parameters, constants, tuples, projections, calls of primitive functions),
// numbering nodes and entries, then plans storage over the entries' lifetimes
// and writes TVM graph-executor JSON.
#include "lowering/graph_plan.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"
#include "ir/tir.h"
#include "ir/traversal.h"
#include "ir/type.h"
#include "ir/utf8.h"
#include "nlohmann/json.hpp"

namespace kiln::lowering {
namespace {

// A JSON string literal (escaped; invalid UTF-8 replaced by U+FFFD).
std::string Quote(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', /*ensure_ascii=*/false,
                                nlohmann::json::error_handler_t::replace);
}

// The dltype string of the graph JSON, or nullopt for a dtype it cannot hold.
std::optional<std::string> DLTypeString(DataType d) {
  if (d.lanes() != 1) return std::nullopt;
  const int b = d.bits();
  switch (d.code()) {
    case DTypeCode::kFloat:
      if (b == 16 || b == 32 || b == 64) return absl::StrCat("float", b);
      break;
    case DTypeCode::kBFloat:
      if (b == 16) return std::string("bfloat16");
      break;
    case DTypeCode::kInt:
      if (b == 8 || b == 16 || b == 32 || b == 64) return absl::StrCat("int", b);
      break;
    case DTypeCode::kUInt:
      if (b == 8 || b == 16 || b == 32 || b == 64) return absl::StrCat("uint", b);
      break;
    case DTypeCode::kBool:
      if (b == 8) return std::string("bool");
      break;
    default:
      break;
  }
  return std::nullopt;
}

// One graph entry: output `index` of node `node` (a node id in build order).
struct EntryRef {
  int node = 0;
  int index = 0;
};

// The static type of one entry.
struct EntryType {
  std::vector<int64_t> shape;
  std::string dltype;
  int64_t bytes = 0;
};

enum class NodeKind { kInput, kParam, kOp };

struct Node {
  NodeKind kind = NodeKind::kInput;
  std::string name;
  std::vector<EntryType> outputs;
  // kOp only.
  std::string func_name;
  std::string op_names;
  std::vector<EntryRef> inputs;
  int step = -1;  // ordinal among op nodes
};

// The leaves of a (nested) tuple type, with dotted names: "x", "x.0", "x.1.0".
absl::Status FlattenNamed(const Type& t, const std::string& name,
                          std::vector<std::pair<std::string, const TensorTypeNode*>>* out) {
  if (const auto* tt = t.as<TensorTypeNode>()) {
    out->push_back({name, tt});
    return absl::OkStatus();
  }
  if (const auto* tup = t.as<TupleTypeNode>()) {
    for (size_t i = 0; i < tup->fields.size(); ++i) {
      KILN_RETURN_IF_ERROR(FlattenNamed(tup->fields[i], absl::StrCat(name, ".", i), out));
    }
    return absl::OkStatus();
  }
  return absl::UnimplementedError(
      absl::StrCat("graph plan: ", name, " has type ", TypeToString(t),
                   "; the graph executor passes only tensors and tuples of tensors"));
}

// Number of tensors a value of type `t` flattens to.
int FlatCount(const Type& t) {
  if (const auto* tup = t.as<TupleTypeNode>()) {
    int n = 0;
    for (const Type& f : tup->fields) n += FlatCount(f);
    return n;
  }
  return 1;
}

// The static shape, dltype and size of a tensor type; `what` names the value
// for messages ("input %x", "node fused_add output 0").
// The most dimensions a tensor of an artifact may have (KILN_ARTIFACT_MAX_NDIM
// in runtime_c/include/kiln/artifact_format.h: the loader refuses more).
constexpr size_t kMaxArtifactRank = 32;

// Names an artifact stores (inputs, outputs) are UTF-8 text without NUL: the
// loader and every binding read them as C strings.
absl::Status CheckArtifactName(const std::string& name, absl::string_view what) {
  if (std::optional<size_t> at = InvalidUtf8At(name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph plan: the name of ", what, " is not valid UTF-8 (byte 0x",
        absl::Hex(static_cast<unsigned char>(name[*at]), absl::kZeroPad2), " at offset ", *at,
        "); an artifact's names are UTF-8 text"));
  }
  if (size_t nul = name.find('\0'); nul != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("graph plan: the name of ", what,
                                                   " holds a NUL byte at offset ", nul,
                                                   "; an artifact's names are C strings"));
  }
  return absl::OkStatus();
}

absl::StatusOr<EntryType> MakeEntryType(const TensorTypeNode& tt, absl::string_view what) {
  EntryType e;
  if (tt.shape.size() > kMaxArtifactRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph plan: ", what, " has rank ", tt.shape.size(), "; an artifact holds tensors of rank ",
        "at most ", kMaxArtifactRank));
  }
  for (const Dim& d : tt.shape) {
    if (!d.is_static()) {
      return absl::UnimplementedError(absl::StrCat(
          "graph plan: ", what, " has the symbolic shape ", ShapeToString(tt.shape),
          "; the graph executor needs static shapes (compile the model for the VM instead)"));
    }
    e.shape.push_back(d.value());
  }
  std::optional<std::string> dl = DLTypeString(tt.dtype);
  if (!dl) {
    return absl::UnimplementedError(absl::StrCat("graph plan: ", what, " has the dtype ",
                                                 tt.dtype.ToString(),
                                                 ", which the graph executor does not support"));
  }
  e.dltype = *dl;
  int64_t bytes = tt.dtype.bytes();
  for (int64_t d : e.shape) {
    if (d != 0 && bytes > std::numeric_limits<int64_t>::max() / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph plan: ", what, " is too large: ", ShapeToString(tt.shape)));
    }
    bytes *= d;
  }
  e.bytes = bytes;
  return e;
}

// Functions, operators, global functions and constructors: callees, never
// values of the graph.
bool IsFunctionValue(const Expr& e) {
  return e.as<FunctionNode>() != nullptr || e.as<OpNode>() != nullptr ||
         e.as<GlobalVarNode>() != nullptr || e.as<ConstructorNode>() != nullptr;
}

absl::Status FunctionAsValue(const Expr& e, absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat("graph plan: ", what, " is a function (a ",
                                               ExprKindName(e->kind),
                                               "); the graph executor passes only tensors"));
}

class GraphBuilder {
 public:
  GraphBuilder(const LoweredModule& lowered, const GraphPlanOptions& options)
      : lowered_(lowered), options_(options) {}

  absl::StatusOr<GraphPlan> Run(const Function& main) {
    KILN_RETURN_IF_ERROR(ReadOutputNames(main));
    KILN_RETURN_IF_ERROR(AddInputs(main));
    if (IsFunctionValue(main->body)) return FunctionAsValue(main->body, "main's result");
    const std::vector<Expr> post = PostOrder(main->body, /*enter_functions=*/false);
    // Control flow first: its binders would otherwise read as free variables.
    for (const Expr& n : post) {
      switch (n->kind) {
        case ExprKind::kLet:
        case ExprKind::kIf:
        case ExprKind::kMatch:
        case ExprKind::kRefCreate:
        case ExprKind::kRefRead:
        case ExprKind::kRefWrite:
          return absl::UnimplementedError(absl::StrCat(
              "graph plan: main must be a dataflow graph of kernel calls, but it contains a ",
              ExprKindName(n->kind), " (compile the model for the VM instead)"));
        default:
          break;
      }
    }
    for (const Expr& n : post) {
      if (values_.count(n.get())) continue;
      KILN_RETURN_IF_ERROR(Visit(n));
    }
    KILN_ASSIGN_OR_RETURN(std::vector<EntryRef> heads, ValuesOf(main->body, "main's result"));
    return Finish(heads);
  }

 private:
  // Names for the heads: main's "output_names" attribute (a list of
  // distinct, non-empty strings, set by the ONNX importer to the graph's
  // output names) when it has one; "output<i>" otherwise.
  absl::Status ReadOutputNames(const Function& main) {
    const AttrValue* names = main->GetAttr("output_names");
    if (names == nullptr || names->kind != AttrValue::Kind::kList) return absl::OkStatus();
    std::vector<std::string> out;
    for (const AttrValue& v : names->list) {
      if (v.kind != AttrValue::Kind::kString || v.s.empty()) return absl::OkStatus();
      if (std::find(out.begin(), out.end(), v.s) != out.end()) return absl::OkStatus();
      KILN_RETURN_IF_ERROR(CheckArtifactName(v.s, absl::StrCat("output ", out.size())));
      out.push_back(v.s);
    }
    output_names_ = std::move(out);
    return absl::OkStatus();
  }

  absl::Status AddInputs(const Function& main) {
    for (size_t i = 0; i < main->params.size(); ++i) {
      const Var& p = main->params[i];
      const Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
      const std::string name = p->name_hint.empty() ? absl::StrCat("input", i) : p->name_hint;
      if (!t) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph plan: main's parameter %", name, " has no type (run InferType)"));
      }
      std::vector<std::pair<std::string, const TensorTypeNode*>> leaves;
      KILN_RETURN_IF_ERROR(FlattenNamed(t, name, &leaves));
      std::vector<EntryRef> entries;
      for (const auto& [leaf_name, tt] : leaves) {
        KILN_RETURN_IF_ERROR(CheckArtifactName(leaf_name, absl::StrCat("input ", i)));
        KILN_ASSIGN_OR_RETURN(EntryType et, MakeEntryType(*tt, absl::StrCat("input %", leaf_name)));
        Node node;
        node.kind = NodeKind::kInput;
        node.name = UniqueName(leaf_name);
        node.outputs.push_back(std::move(et));
        entries.push_back(EntryRef{AddNode(std::move(node)), 0});
      }
      values_[p.get()] = std::move(entries);
    }
    return absl::OkStatus();
  }

  absl::Status Visit(const Expr& n) {
    if (const auto* v = n.as<VarNode>()) {
      return absl::InvalidArgumentError(absl::StrCat("graph plan: free variable %", v->name_hint,
                                                     " in main (it is not a parameter of main)"));
    }
    if (const auto* c = n.as<ConstantNode>()) {
      KILN_ASSIGN_OR_RETURN(EntryRef e, ParamFor(c->data));
      values_[n.get()] = {e};
      return absl::OkStatus();
    }
    if (const auto* tup = n.as<TupleNode>()) {
      std::vector<EntryRef> flat;
      for (size_t i = 0; i < tup->fields.size(); ++i) {
        KILN_ASSIGN_OR_RETURN(std::vector<EntryRef> v,
                              ValuesOf(tup->fields[i], absl::StrCat("tuple field ", i)));
        flat.insert(flat.end(), v.begin(), v.end());
      }
      values_[n.get()] = std::move(flat);
      return absl::OkStatus();
    }
    if (const auto* get = n.as<TupleGetItemNode>()) {
      const Type& t = get->tuple->checked_type();
      const auto* tt = t ? t.as<TupleTypeNode>() : nullptr;
      if (tt == nullptr || get->index < 0 || get->index >= static_cast<int>(tt->fields.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph plan: tuple projection .", get->index,
                         " of a value without a checked tuple type (run InferType)"));
      }
      KILN_ASSIGN_OR_RETURN(std::vector<EntryRef> v, ValuesOf(get->tuple, "a tuple projection"));
      int begin = 0;
      for (int i = 0; i < get->index; ++i) begin += FlatCount(tt->fields[i]);
      const int count = FlatCount(tt->fields[get->index]);
      if (begin + count > static_cast<int>(v.size())) {
        return absl::InternalError("graph plan: tuple projection out of range");
      }
      values_[n.get()] = std::vector<EntryRef>(v.begin() + begin, v.begin() + begin + count);
      return absl::OkStatus();
    }
    if (const auto* call = n.as<CallNode>()) return VisitCall(*call, n);
    // Callees: they become values only through the calls that use them; any
    // other use is reported by ValuesOf.
    if (IsFunctionValue(n)) return absl::OkStatus();
    return absl::UnimplementedError(absl::StrCat(
        "graph plan: main must be a dataflow graph of kernel calls, but it contains a ",
        ExprKindName(n->kind), " (compile the model for the VM instead)"));
  }

  absl::Status VisitCall(const CallNode& call, const Expr& n) {
    KILN_ASSIGN_OR_RETURN(const LoweredFunc* k, KernelOf(call));
    const std::string& kname = k->func->name;
    Node node;
    node.kind = NodeKind::kOp;
    node.func_name = kname;
    node.op_names = absl::StrJoin(k->op_names, ",");
    for (size_t i = 0; i < call.args.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(std::vector<EntryRef> v,
                            ValuesOf(call.args[i], absl::StrCat("argument ", i, " of ", kname)));
      node.inputs.insert(node.inputs.end(), v.begin(), v.end());
    }
    for (const Ref<const HostTensor>& c : lowered_.ConstantsOf(call.op.get())) {
      KILN_ASSIGN_OR_RETURN(EntryRef e, ParamFor(c));
      node.inputs.push_back(e);
    }
    if (static_cast<int>(node.inputs.size()) != k->num_inputs) {
      return absl::InternalError(absl::StrCat("graph plan: kernel ", kname, " takes ",
                                              k->num_inputs, " inputs but its call passes ",
                                              node.inputs.size()));
    }
    if (!call.checked_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph plan: the call of ", kname, " is not type-checked (run InferType)"));
    }
    node.name = UniqueName(kname);
    std::vector<std::pair<std::string, const TensorTypeNode*>> leaves;
    KILN_RETURN_IF_ERROR(
        FlattenNamed(call.checked_type(), absl::StrCat("node ", node.name), &leaves));
    if (static_cast<int>(leaves.size()) != k->num_outputs) {
      return absl::InternalError(absl::StrCat("graph plan: kernel ", kname, " has ", k->num_outputs,
                                              " outputs but its call returns ", leaves.size()));
    }
    for (size_t i = 0; i < leaves.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(
          EntryType et,
          MakeEntryType(*leaves[i].second, absl::StrCat("node ", node.name, " output ", i)));
      node.outputs.push_back(std::move(et));
    }
    node.step = num_op_nodes_++;
    const int id = AddNode(std::move(node));
    std::vector<EntryRef> out;
    for (size_t i = 0; i < nodes_[id].outputs.size(); ++i) {
      out.push_back(EntryRef{id, static_cast<int>(i)});
    }
    values_[n.get()] = std::move(out);
    return absl::OkStatus();
  }

  absl::StatusOr<const LoweredFunc*> KernelOf(const CallNode& call) {
    const Expr& callee = call.op;
    if (const auto* fn = callee.as<FunctionNode>()) {
      const AttrValue* prim = fn->GetAttr("Primitive");
      if (prim == nullptr || prim->kind != AttrValue::Kind::kInt || prim->i == 0) {
        return absl::UnimplementedError(
            "graph plan: main calls a function that is not primitive (run FuseOps first)");
      }
      auto it = lowered_.kernel_of.find(fn);
      if (it == lowered_.kernel_of.end() || it->second >= lowered_.kernels.size()) {
        return absl::InvalidArgumentError(
            "graph plan: main calls a primitive function that was not lowered (pass the "
            "LowerModule result of this very module)");
      }
      const LoweredFunc& k = lowered_.kernels[it->second];
      if (!k.func) return absl::InternalError("graph plan: a lowered kernel has no PrimFunc");
      return &k;
    }
    if (const auto* op = callee.as<OpNode>()) {
      return absl::UnimplementedError(absl::StrCat(
          "graph plan: main calls the operator ", op->name(),
          " directly; the graph executor calls only fused kernels (run FuseOps first)"));
    }
    if (const auto* gv = callee.as<GlobalVarNode>()) {
      return absl::UnimplementedError(absl::StrCat(
          "graph plan: main calls the global function @", gv->name,
          "; the graph executor calls only fused kernels (inline it, or compile for the VM)"));
    }
    return absl::UnimplementedError(
        absl::StrCat("graph plan: main calls a ", ExprKindName(callee->kind),
                     "; the graph executor calls only fused kernels (compile for the VM instead)"));
  }

  // The entries of an already visited expression; `what` says where it is used.
  absl::StatusOr<std::vector<EntryRef>> ValuesOf(const Expr& e, absl::string_view what) {
    auto it = values_.find(e.get());
    if (it != values_.end()) return it->second;
    if (IsFunctionValue(e)) return FunctionAsValue(e, what);
    return absl::InternalError(absl::StrCat("graph plan: ", what, " was not visited"));
  }

  // The parameter node holding `t` (one per distinct tensor, first use first).
  absl::StatusOr<EntryRef> ParamFor(const Ref<const HostTensor>& t) {
    if (!t) return absl::InvalidArgumentError("graph plan: a constant without data");
    auto it = param_of_.find(t.get());
    if (it != param_of_.end()) return EntryRef{it->second, 0};
    const std::string name = UniqueName(absl::StrCat("p", params_.size()));
    TensorType tt = MakeTensorType(ShapeFromInts(t->shape()), t->dtype());
    KILN_ASSIGN_OR_RETURN(EntryType et, MakeEntryType(*tt, absl::StrCat("parameter ", name)));
    Node node;
    node.kind = NodeKind::kParam;
    node.name = name;
    node.outputs.push_back(std::move(et));
    const int id = AddNode(std::move(node));
    param_of_[t.get()] = id;
    params_.push_back({name, t});
    return EntryRef{id, 0};
  }

  int AddNode(Node n) {
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }

  // `base`, or `base_1`, `base_2`, ... : the first name not yet taken.
  std::string UniqueName(const std::string& base) {
    std::string name = base;
    if (used_names_.count(name)) {
      int& k = next_suffix_[base];
      do {
        name = absl::StrCat(base, "_", ++k);
      } while (used_names_.count(name));
    }
    used_names_.insert(name);
    return name;
  }

  absl::StatusOr<GraphPlan> Finish(const std::vector<EntryRef>& heads) {
    // Final order: inputs, then parameters, then kernel calls (execution order).
    std::vector<int> order;
    for (NodeKind kind : {NodeKind::kInput, NodeKind::kParam, NodeKind::kOp}) {
      for (size_t i = 0; i < nodes_.size(); ++i) {
        if (nodes_[i].kind == kind) order.push_back(static_cast<int>(i));
      }
    }
    std::vector<int> final_id(nodes_.size(), 0);
    std::vector<int> row_ptr = {0};
    for (size_t i = 0; i < order.size(); ++i) {
      final_id[order[i]] = static_cast<int>(i);
      row_ptr.push_back(row_ptr.back() + static_cast<int>(nodes_[order[i]].outputs.size()));
    }
    const int num_entries = row_ptr.back();
    auto flat = [&](const EntryRef& e) { return row_ptr[final_id[e.node]] + e.index; };

    // Lifetimes: an entry lives from its node's step to the last step that
    // reads it; inputs, parameters and heads are exclusive.
    std::vector<TensorLife> lives(num_entries);
    for (int id : order) {
      const Node& node = nodes_[id];
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        TensorLife& l = lives[row_ptr[final_id[id]] + i];
        l.bytes = node.outputs[i].bytes;
        l.def_step = node.kind == NodeKind::kOp ? node.step : -1;
        l.last_use_step = l.def_step;
        l.exclusive = node.kind != NodeKind::kOp;
      }
    }
    for (int id : order) {
      const Node& node = nodes_[id];
      for (const EntryRef& in : node.inputs) {
        TensorLife& l = lives[flat(in)];
        l.last_use_step = std::max(l.last_use_step, node.step);
      }
    }
    for (const EntryRef& h : heads) lives[flat(h)].exclusive = true;
    MemoryPlanOptions mopts;
    mopts.share = options_.share_storage;
    GraphPlan plan;
    KILN_ASSIGN_OR_RETURN(plan.memory, PlanMemory(lives, mopts));

    // The JSON, one node per line (as TVM writes it, give or take spaces).
    std::string& out = plan.graph_json;
    out = "{\n  \"nodes\": [";
    std::vector<int> arg_nodes;
    for (size_t i = 0; i < order.size(); ++i) {
      const Node& node = nodes_[order[i]];
      absl::StrAppend(&out, i == 0 ? "\n    " : ",\n    ");
      if (node.kind == NodeKind::kOp) {
        absl::StrAppend(&out, "{\"op\": \"tvm_op\", \"name\": ", Quote(node.name),
                        ", \"attrs\": {\"func_name\": ", Quote(node.func_name),
                        ", \"num_inputs\": \"", node.inputs.size(), "\", \"num_outputs\": \"",
                        node.outputs.size(),
                        "\", \"flatten_data\": \"0\", \"op_names\": ", Quote(node.op_names),
                        "}, \"inputs\": [");
        for (size_t j = 0; j < node.inputs.size(); ++j) {
          const EntryRef& in = node.inputs[j];
          absl::StrAppend(&out, j == 0 ? "" : ", ", "[", final_id[in.node], ", ", in.index, ", 0]");
        }
        absl::StrAppend(&out, "]}");
      } else {
        absl::StrAppend(&out, "{\"op\": \"null\", \"name\": ", Quote(node.name),
                        ", \"inputs\": []}");
        arg_nodes.push_back(static_cast<int>(i));
        if (node.kind == NodeKind::kInput) plan.input_names.push_back(node.name);
      }
    }
    absl::StrAppend(&out, "\n  ],\n  \"arg_nodes\": [", absl::StrJoin(arg_nodes, ", "),
                    "],\n  \"node_row_ptr\": [", absl::StrJoin(row_ptr, ", "),
                    "],\n  \"heads\": [");
    for (size_t i = 0; i < heads.size(); ++i) {
      absl::StrAppend(&out, i == 0 ? "" : ", ", "[", final_id[heads[i].node], ", ", heads[i].index,
                      ", 0]");
      plan.output_names.push_back(output_names_.size() == heads.size()
                                      ? output_names_[i]
                                      : absl::StrCat("output", i));
    }
    std::vector<std::string> dltypes;
    std::vector<std::string> shapes;
    for (int id : order) {
      for (const EntryType& et : nodes_[id].outputs) {
        dltypes.push_back(absl::StrCat("\"", et.dltype, "\""));
        shapes.push_back(absl::StrCat("[", absl::StrJoin(et.shape, ", "), "]"));
      }
    }
    absl::StrAppend(&out, "],\n  \"attrs\": {\n    \"dltype\": [\"list_str\", [",
                    absl::StrJoin(dltypes, ", "), "]],\n    \"storage_id\": [\"list_int\", [",
                    absl::StrJoin(plan.memory.storage_of, ", "),
                    "]],\n    \"shape\": [\"list_shape\", [", absl::StrJoin(shapes, ", "),
                    "]],\n    \"device_index\": [\"list_int\", [",
                    absl::StrJoin(std::vector<int>(num_entries, 1), ", "), "]]\n  }\n}\n");
    plan.params = std::move(params_);
    plan.num_nodes = static_cast<int>(order.size());
    plan.num_op_nodes = num_op_nodes_;
    return plan;
  }

  const LoweredModule& lowered_;
  const GraphPlanOptions& options_;
  std::vector<Node> nodes_;  // in build order
  int num_op_nodes_ = 0;
  std::unordered_map<const ExprNode*, std::vector<EntryRef>> values_;
  std::unordered_map<const HostTensor*, int> param_of_;
  std::vector<std::pair<std::string, Ref<const HostTensor>>> params_;
  std::vector<std::string> output_names_;  // ReadOutputNames
  std::unordered_set<std::string> used_names_;
  std::unordered_map<std::string, int> next_suffix_;
};

}  // namespace

absl::StatusOr<GraphPlan> PlanGraph(const Module& fused, const LoweredModule& lowered,
                                    const GraphPlanOptions& options) {
  KILN_ASSIGN_OR_RETURN(Function main, fused.Lookup("main"));
  GraphBuilder builder(lowered, options);
  return builder.Run(main);
}

}  // namespace kiln::lowering
