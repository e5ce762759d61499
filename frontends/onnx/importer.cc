// ONNX ModelProto -> Module (importer.h): parse, check, then one walk over
// the nodes in order, each converted by the converter its opset selects.
#include "frontends/onnx/importer.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontends/onnx/context.h"
#include "frontends/onnx/converter.h"
#include "frontends/onnx/tensor_proto.h"
#include "google/protobuf/io/coded_stream.h"
#include "ir/file.h"
#include "ir/status_macros.h"
#include "ir/utf8.h"
#include "onnx/onnx-data_pb.h"
#include "onnx/onnx_pb.h"
#include "types/infer_type.h"

namespace kiln::onnx_frontend {
namespace {

using internal::SequenceRegistry;
using internal::ImportState;
using internal::NodeContext;
using internal::NodeWhere;
using internal::OnnxDataTypeName;
using internal::TensorFromProto;
using internal::TensorReadOptions;
using internal::WithWhere;

// Protobuf messages are limited to 2 GB; bigger models keep weights outside.
constexpr int64_t kMaxProtoBytes = INT_MAX;

absl::string_view NormalizeDomain(absl::string_view domain) {
  return domain == "ai.onnx" ? absl::string_view() : domain;
}

std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Reads a whole model or tensor file: a regular file of at most 2 GB (a
// FIFO or a device is refused before anything is read; ir/file.h).
absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view what) {
  return ReadRegularFile(path, what, kMaxProtoBytes,
                         "protobuf files are limited to 2 GB; store large weights as external data");
}

// A dim_param as a symbolic-dim name the text format can print: letters,
// digits and '_', not starting with a digit.
std::string DimVarName(absl::string_view raw) {
  std::string s;
  for (char c : raw) s += absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (s.empty() || absl::ascii_isdigit(static_cast<unsigned char>(s[0]))) s = "d_" + s;
  return s;
}

// Converts one graph.
class GraphImporter {
 public:
  GraphImporter(onnx::ModelProto* model, const ImportOptions& options, std::string base_dir,
                std::string model_real_dir)
      : model_(*model),
        had_graph_(model->has_graph()),
        graph_(*model->mutable_graph()),
        options_(options) {
    state_.tensor_options.base_dir = std::move(base_dir);
    state_.tensor_options.model_real_dir = std::move(model_real_dir);
    state_.tensor_options.warnings = options.warnings;
    state_.sequences = &sequences_;
    state_.opsets = &opsets_;  // the nodes of subgraphs read them (subgraph.cc)
    state_.unknown = &unknown_;
  }

  absl::StatusOr<Module> Run() {
    KILN_RETURN_IF_ERROR(ReadOpsets());
    KILN_RETURN_IF_ERROR(IndexValues());
    KILN_RETURN_IF_ERROR(CheckOptionNames());
    KILN_RETURN_IF_ERROR(AddInitializers());
    KILN_RETURN_IF_ERROR(AddInputs());
    KILN_RETURN_IF_ERROR(ConvertNodes());
    KILN_ASSIGN_OR_RETURN(Expr body, Outputs());
    // The graph's output names ride along as an attribute of main; the
    // graph plan names the artifact's outputs after them.
    AttrValue names;
    names.kind = AttrValue::Kind::kList;
    for (const onnx::ValueInfoProto& out : graph_.output()) {
      AttrValue name;
      name.kind = AttrValue::Kind::kString;
      name.s = out.name();
      names.list.push_back(std::move(name));
    }
    KILN_ASSIGN_OR_RETURN(Function main, MakeFunction(params_, body, nullptr, {},
                                                      MakeDictAttrs({{"output_names", names}})));
    Module module;
    for (const auto& [name, adt] : sequences_.adts) KILN_RETURN_IF_ERROR(module.AddTypeDef(adt.data));
    for (const auto& [name, adt] : sequences_.optionals) KILN_RETURN_IF_ERROR(module.AddTypeDef(adt.data));
    KILN_RETURN_IF_ERROR(module.AddFunction("main", main).status());
    if (!options_.type_check) return module;
    absl::StatusOr<Module> typed = types::InferType(module);
    if (!typed.ok()) {
      return absl::Status(
          typed.status().code(),
          absl::StrCat("the imported graph does not type-check: ", typed.status().message()));
    }
    return typed;
  }

 private:
  // ---- model header --------------------------------------------------------

  void Warn(std::string message) const {
    if (options_.warnings != nullptr) options_.warnings->push_back(std::move(message));
  }

  absl::Status ReadOpsets() {
    if (!model_.has_ir_version()) {
      return absl::InvalidArgumentError(
          "not an ONNX model: ir_version is missing (ModelProto field 1); the bytes may not be "
          "an .onnx file, or the file is truncated");
    }
    if (model_.ir_version() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the model's ir_version is ", model_.ir_version(),
          "; ONNX IR versions start at 1 (a model written by an exporter has 3 or more)"));
    }
    absl::flat_hash_map<std::string, std::string> spelled;  // domain -> as first written
    for (const onnx::OperatorSetIdProto& o : model_.opset_import()) {
      if (o.version() <= 0 || o.version() > kMaxOpsetVersion) {
        return absl::InvalidArgumentError(absl::StrCat(
            "opset_import for domain '", o.domain(), "' has version ", o.version(),
            o.version() <= 0 ? "" : absl::StrCat(", which is no opset version (ONNX has defined "
                                                 "about 25 since 2017; over ",
                                                 kMaxOpsetVersion, " is a corrupt field)")));
      }
      const std::string domain(NormalizeDomain(o.domain()));
      auto [it, fresh] = opsets_.emplace(domain, o.version());
      if (!fresh) {
        const std::string same =
            spelled[domain] != o.domain() ? " ('' and 'ai.onnx' are the same domain)" : "";
        if (it->second != o.version()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "opset_import lists domain '", o.domain(), "' twice, at versions ", it->second,
              " and ", o.version(), same, "; which one the nodes mean is ambiguous: list each "
              "domain once"));
        }
        Warn(absl::StrCat("opset_import lists domain '", o.domain(), "' twice at version ",
                          o.version(), same, "; the duplicate is ignored"));
        continue;
      }
      spelled.emplace(domain, o.domain());
      if (domain.empty() && o.version() > kNewestKnownOpset) {
        Warn(absl::StrCat("the model imports ONNX opset ", o.version(),
                          ", newer than the newest kiln's converters are written against (",
                          kNewestKnownOpset,
                          "); each node is converted by the newest converter kiln has for it, "
                          "which may miss what later opsets changed (ONNX Runtime also accepts "
                          "newer opsets with a warning)"));
      }
    }
    if (!opsets_.contains("")) {
      return absl::InvalidArgumentError(
          "the model's opset_import lists no version for the default ONNX domain ('' or "
          "'ai.onnx'); every model since IR version 3 has one");
    }
    if (!had_graph_) return absl::InvalidArgumentError("the model has no graph");
    return absl::OkStatus();
  }

  // ---- who defines and who uses each value ---------------------------------

  absl::Status IndexValues() {
    for (int i = 0; i < graph_.initializer_size(); ++i) {
      const std::string& name = graph_.initializer(i).name();
      if (name.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("initializer #", i, " has no name"));
      }
      if (!initializers_.emplace(name, i).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("value '", name, "' is defined twice: two initializers have that name"));
      }
      definer_.emplace(name, absl::StrCat("initializer '", name, "'"));
    }
    if (graph_.sparse_initializer_size() > 0) {
      return absl::UnimplementedError(absl::StrCat(
          "the graph has ", graph_.sparse_initializer_size(), " sparse initializers (first: '",
          graph_.sparse_initializer(0).values().name(), "'); sparse tensors are not supported"));
    }
    absl::flat_hash_set<std::string> input_names;
    // Graph inputs and outputs keep their names through to the artifact and
    // every binding: UTF-8 text (ONNX's proto2 strings are not checked by
    // protobuf), without NUL.
    for (const auto* list : {&graph_.input(), &graph_.output()}) {
      const bool inputs = list == &graph_.input();
      for (int i = 0; i < list->size(); ++i) {
        const std::string& name = (*list)[i].name();
        if (std::optional<size_t> at = InvalidUtf8At(name)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "graph ", inputs ? "input " : "output ", i, "'s name is not valid UTF-8 (byte 0x",
              absl::Hex(static_cast<unsigned char>(name[*at]), absl::kZeroPad2), " at offset ",
              *at, ")"));
        }
        if (name.find('\0') != std::string::npos) {
          return absl::InvalidArgumentError(absl::StrCat(
              "graph ", inputs ? "input " : "output ", i, "'s name holds a NUL byte (offset ",
              name.find('\0'), ")"));
        }
      }
    }
    for (const onnx::ValueInfoProto& in : graph_.input()) {
      if (in.name().empty()) return absl::InvalidArgumentError("a graph input has no name");
      if (!input_names.insert(in.name()).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph input '", in.name(), "' is listed twice"));
      }
      definer_.emplace(in.name(), absl::StrCat("graph input '", in.name(), "'"));
    }
    for (int i = 0; i < graph_.node_size(); ++i) {
      const onnx::NodeProto& node = graph_.node(i);
      if (node.op_type().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(NodeWhere(node, i), ": the node has no op_type"));
      }
      for (const std::string& in : node.input()) {
        if (!in.empty()) used_.insert(in);
      }
      for (const std::string& out : node.output()) {
        if (out.empty()) continue;
        auto [it, fresh] = definer_.emplace(out, "node " + NodeWhere(node, i));
        if (!fresh) {
          return absl::InvalidArgumentError(absl::StrCat("value '", out, "' is defined twice: by ",
                                                         it->second, " and by node ",
                                                         NodeWhere(node, i)));
        }
        producer_.emplace(out, i);
      }
    }
    for (const onnx::ValueInfoProto& out : graph_.output()) used_.insert(out.name());
    MarkUsedBySubgraphs();
    return absl::OkStatus();
  }

  // Names the nodes of subgraphs (If/Loop/Scan bodies, at any depth) read:
  // a value of this graph that only a subgraph reads is still used.
  void MarkUsedBySubgraphs() {
    std::vector<const onnx::GraphProto*> work;
    const auto push_graphs = [&](const onnx::NodeProto& node) {
      for (const onnx::AttributeProto& a : node.attribute()) {
        if (a.has_g()) work.push_back(&a.g());
        for (const onnx::GraphProto& g : a.graphs()) work.push_back(&g);
      }
    };
    for (const onnx::NodeProto& node : graph_.node()) push_graphs(node);
    while (!work.empty()) {
      const onnx::GraphProto* g = work.back();
      work.pop_back();
      for (const onnx::NodeProto& node : g->node()) {
        for (const std::string& in : node.input()) {
          if (!in.empty()) used_.insert(in);
        }
        push_graphs(node);
      }
      for (const onnx::ValueInfoProto& out : g->output()) used_.insert(out.name());
    }
  }

  absl::Status CheckOptionNames() const {
    std::vector<std::string> inputs;
    for (const onnx::ValueInfoProto& in : graph_.input()) inputs.push_back(in.name());
    const auto check = [&](const std::string& name, absl::string_view option) {
      for (const std::string& in : inputs) {
        if (in == name) return absl::OkStatus();
      }
      return absl::InvalidArgumentError(absl::StrCat(
          option, " names '", name, "', which is not a graph input (the graph inputs are: ",
          inputs.empty() ? "none" : absl::StrJoin(inputs, ", "), ")"));
    };
    for (const auto& [name, shape] : options_.input_shapes) {
      KILN_RETURN_IF_ERROR(check(name, "input_shapes"));
    }
    for (const auto& [name, value] : options_.frozen_inputs) {
      KILN_RETURN_IF_ERROR(check(name, "frozen_inputs"));
      if (!value) {
        return absl::InvalidArgumentError(absl::StrCat("frozen_inputs['", name, "'] has no value"));
      }
    }
    return absl::OkStatus();
  }

  // ---- initializers and graph inputs ---------------------------------------

  // Whether an initializer becomes a `main` parameter (overridable) rather
  // than a Constant. Before IR version 4 every initializer had to be listed
  // as a graph input, so the listing means nothing there (ONNX Runtime's
  // rule too: only IR >= 4 initializers can be overridden).
  bool IsOverridable(const std::string& name) const {
    return model_.ir_version() >= 4 && !options_.freeze_overridable_initializers &&
           !options_.frozen_inputs.contains(name) && overridable_candidates_.contains(name);
  }

  absl::Status AddInitializers() {
    for (const onnx::ValueInfoProto& in : graph_.input()) {
      if (initializers_.contains(in.name())) overridable_candidates_.insert(in.name());
    }
    for (int i = 0; i < graph_.initializer_size(); ++i) {
      onnx::TensorProto* proto = graph_.mutable_initializer(i);
      const std::string& name = proto->name();
      if (options_.frozen_inputs.contains(name)) continue;  // AddInputs uses the given value
      absl::StatusOr<Ref<const HostTensor>> t = TensorFromProto(*proto, state_.tensor_options);
      if (!t.ok()) {
        return absl::Status(t.status().code(), absl::StrCat("initializer ", t.status().message()));
      }
      if (IsOverridable(name)) {
        state_.overridable.insert(name);
        overridable_types_.emplace(name,
                                   MakeTensorType(ShapeFromInts((*t)->shape()), (*t)->dtype()));
      } else {
        KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(*t, name));
        c->set_checked_type(c->tensor_type());
        state_.values.emplace(name, c);
      }
      // The tensor holds its own copy now; drop the protobuf's (halves the
      // peak memory of a large model).
      proto->clear_raw_data();
      proto->clear_float_data();
    }
    return absl::OkStatus();
  }

  // The shape a graph input's ValueInfo declares, with `given` (input_shapes)
  // checked against it, dim_params bound through `bindings`.
  absl::StatusOr<TensorType> InputType(const onnx::ValueInfoProto& in) {
    const std::string what = absl::StrCat("graph input '", in.name(), "'");
    if (!in.has_type() || in.type().value_case() != onnx::TypeProto::kTensorType) {
      if (in.has_type() && in.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) {
        return absl::UnimplementedError(absl::StrCat(
            what,
            " is not a tensor (a sequence, map, optional or sparse tensor); only tensor "
            "inputs are supported"));
      }
      return absl::InvalidArgumentError(absl::StrCat(what, " has no type"));
    }
    const onnx::TypeProto::Tensor& tt = in.type().tensor_type();
    absl::StatusOr<DataType> dtype = FromOnnxDataType(tt.elem_type());
    if (!dtype.ok()) {
      return absl::Status(dtype.status().code(),
                          absl::StrCat(what, ": ", dtype.status().message()));
    }
    auto given_it = options_.input_shapes.find(in.name());
    const std::vector<int64_t>* given =
        given_it == options_.input_shapes.end() ? nullptr : &given_it->second;
    if (!tt.has_shape()) {
      if (given == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, " has no shape (unknown rank); give one with ImportOptions::input_shapes"));
      }
      for (int64_t d : *given) {
        if (d < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("input_shapes['", in.name(), "'] has a negative dim ", d));
        }
      }
      return MakeTensorType(ShapeFromInts(*given), *dtype);
    }
    const auto& dims = tt.shape().dim();
    if (given != nullptr && static_cast<int>(given->size()) != dims.size()) {
      return absl::InvalidArgumentError(absl::StrCat("input_shapes['", in.name(), "'] has rank ",
                                                     given->size(), " but the model's ", what,
                                                     " has rank ", dims.size()));
    }
    Shape shape;
    for (int i = 0; i < dims.size(); ++i) {
      const onnx::TensorShapeProto::Dimension& d = dims.Get(i);
      if (given != nullptr) {
        const int64_t g = (*given)[static_cast<size_t>(i)];
        if (g < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("input_shapes['", in.name(), "'] has a negative dim ", g));
        }
        if (d.has_dim_value() && d.dim_value() != g) {
          return absl::InvalidArgumentError(
              absl::StrCat("input_shapes['", in.name(), "'] gives dim ", i, " as ", g,
                           " but the model fixes it to ", d.dim_value()));
        }
        shape.push_back(Dim(g));
      } else if (d.has_dim_value()) {
        if (d.dim_value() < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(what, " has a negative dim ", d.dim_value(), " at axis ", i));
        }
        shape.push_back(Dim(d.dim_value()));
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        auto bound = dim_bindings_.find(d.dim_param());
        if (bound != dim_bindings_.end()) {
          shape.push_back(Dim(bound->second));
        } else {
          shape.push_back(Dim::Var(SymbolicDimName(d.dim_param())));
        }
      } else {
        shape.push_back(Dim::Var(SymbolicDimName(absl::StrCat(in.name(), "_dim", i))));
      }
    }
    return MakeTensorType(std::move(shape), *dtype);
  }

  // A sequence graph input: its elements' dtype, and their rank from the
  // declared element shape or from input_shapes (one element's shape; the
  // extents may differ from element to element, so every dim is `?`).
  absl::StatusOr<Type> SequenceInputType(const onnx::ValueInfoProto& in) {
    const std::string what = absl::StrCat("graph input '", in.name(), "'");
    const onnx::TypeProto& elem = in.type().sequence_type().elem_type();
    if (elem.value_case() != onnx::TypeProto::kTensorType) {
      return absl::UnimplementedError(
          absl::StrCat(what, " is a sequence of non-tensors (sequences, maps or optionals)"));
    }
    const onnx::TypeProto::Tensor& tt = elem.tensor_type();
    absl::StatusOr<DataType> dtype = FromOnnxDataType(tt.elem_type());
    if (!dtype.ok()) {
      return absl::Status(dtype.status().code(), absl::StrCat(what, ": ", dtype.status().message()));
    }
    KILN_ASSIGN_OR_RETURN(std::optional<int64_t> rank,
                          DeclaredOrGivenRank(in, tt, absl::StrCat("the elements of the model's ", what,
                                                                   " have rank ")));
    if (!rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is a sequence whose elements declare no shape (unknown rank); give one element's "
                "shape with ImportOptions::input_shapes (kiln compile --input-shape)"));
    }
    absl::StatusOr<SequenceAdt> adt = sequences_.Get(*dtype, *rank);
    if (!adt.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", adt.status().message()));
    return adt->type;
  }

  // The rank of a sequence's or optional's tensor: declared by the model,
  // or given by input_shapes (which must agree with a declared one;
  // `declared` words the mismatch, followed by the declared rank); nullopt
  // when neither says.
  absl::StatusOr<std::optional<int64_t>> DeclaredOrGivenRank(const onnx::ValueInfoProto& in,
                                                             const onnx::TypeProto::Tensor& tt,
                                                             const std::string& declared) {
    std::optional<int64_t> rank;
    if (tt.has_shape()) rank = tt.shape().dim_size();
    if (auto given = options_.input_shapes.find(in.name()); given != options_.input_shapes.end()) {
      const int64_t g = static_cast<int64_t>(given->second.size());
      if (rank && *rank != g) {
        return absl::InvalidArgumentError(absl::StrCat("input_shapes['", in.name(), "'] has rank ", g,
                                                       " but ", declared, *rank));
      }
      rank = g;
    }
    return rank;
  }

  // An optional graph input (TypeProto optional_type): of a tensor or of a
  // sequence of tensors, its dtype and rank from the declared shape or from
  // input_shapes (the tensor's, or one element's, shape); every dim is `?`
  // (a run may give a value or none).
  absl::StatusOr<Type> OptionalInputType(const onnx::ValueInfoProto& in) {
    const std::string what = absl::StrCat("graph input '", in.name(), "'");
    const onnx::TypeProto& payload = in.type().optional_type().elem_type();
    const bool of_sequence = payload.value_case() == onnx::TypeProto::kSequenceType;
    const onnx::TypeProto& tensor = of_sequence ? payload.sequence_type().elem_type() : payload;
    if (tensor.value_case() != onnx::TypeProto::kTensorType) {
      return absl::UnimplementedError(absl::StrCat(
          what, " is an optional of ", of_sequence ? "a sequence of non-tensors" : "a non-tensor",
          " (kiln's optionals hold a tensor or a sequence of tensors)"));
    }
    const onnx::TypeProto::Tensor& tt = tensor.tensor_type();
    absl::StatusOr<DataType> dtype = FromOnnxDataType(tt.elem_type());
    if (!dtype.ok()) {
      return absl::Status(dtype.status().code(), absl::StrCat(what, ": ", dtype.status().message()));
    }
    KILN_ASSIGN_OR_RETURN(
        std::optional<int64_t> rank,
        DeclaredOrGivenRank(in, tt, absl::StrCat("the model's ", what, " (an optional) has rank ")));
    if (!rank) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " is an optional whose ", of_sequence ? "elements declare" : "tensor declares",
          " no shape (unknown rank); give one with ImportOptions::input_shapes (kiln compile "
          "--input-shape)"));
    }
    absl::StatusOr<OptionalAdt> adt = sequences_.GetOptional(*dtype, *rank, of_sequence);
    if (!adt.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", adt.status().message()));
    return adt->type;
  }

  // One symbolic-dim name per distinct dim_param (same name, same variable).
  std::string SymbolicDimName(const std::string& raw) {
    auto it = dim_names_.find(raw);
    if (it != dim_names_.end()) return it->second;
    std::string name = DimVarName(raw);
    for (int k = 1; used_dim_names_.contains(name); ++k)
      name = absl::StrCat(DimVarName(raw), "_", k);
    used_dim_names_.insert(name);
    dim_names_.emplace(raw, name);
    return name;
  }

  // dim_param -> extent, from input_shapes and frozen inputs.
  absl::Status BindDimParams() {
    for (const onnx::ValueInfoProto& in : graph_.input()) {
      std::vector<int64_t> extents;
      if (auto s = options_.input_shapes.find(in.name()); s != options_.input_shapes.end()) {
        extents = s->second;
      } else if (auto f = options_.frozen_inputs.find(in.name());
                 f != options_.frozen_inputs.end()) {
        extents = f->second->shape();
      } else {
        continue;
      }
      if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
      const auto& dims = in.type().tensor_type().shape().dim();
      if (dims.size() != static_cast<int>(extents.size())) continue;  // InputType reports it
      for (int i = 0; i < dims.size(); ++i) {
        if (!dims.Get(i).has_dim_param() || dims.Get(i).dim_param().empty()) continue;
        const std::string& p = dims.Get(i).dim_param();
        const int64_t v = extents[static_cast<size_t>(i)];
        auto [it, fresh] = dim_bindings_.emplace(p, v);
        if (!fresh && it->second != v) {
          return absl::InvalidArgumentError(absl::StrCat(
              "dim '", p, "' is bound to ", it->second, " and also to ", v, " (by graph input '",
              in.name(), "'); inputs that share a dim_param must agree"));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status AddInputs() {
    KILN_RETURN_IF_ERROR(BindDimParams());
    for (const onnx::ValueInfoProto& in : graph_.input()) {
      const std::string& name = in.name();
      if (auto f = options_.frozen_inputs.find(name); f != options_.frozen_inputs.end()) {
        KILN_RETURN_IF_ERROR(CheckFrozen(in, *f->second));
        KILN_ASSIGN_OR_RETURN(Constant c, MakeConstant(f->second, name));
        c->set_checked_type(c->tensor_type());
        state_.values.insert_or_assign(name, c);
        continue;
      }
      if (in.has_type() && (in.type().value_case() == onnx::TypeProto::kSequenceType ||
                            in.type().value_case() == onnx::TypeProto::kOptionalType)) {
        KILN_ASSIGN_OR_RETURN(Type seq, in.type().value_case() == onnx::TypeProto::kSequenceType
                                            ? SequenceInputType(in)
                                            : OptionalInputType(in));
        Var v = MakeVar(name, seq);
        v->set_checked_type(seq);
        state_.input_names.emplace(v.get(), name);
        state_.values.emplace(name, v);
        params_.push_back(v);
        continue;
      }
      TensorType type;
      if (initializers_.contains(name)) {
        if (!IsOverridable(name)) continue;  // already a Constant
        type = overridable_types_.at(name);
        if (auto s = options_.input_shapes.find(name); s != options_.input_shapes.end()) {
          if (ShapeFromInts(s->second) != type->shape) {
            return absl::InvalidArgumentError(absl::StrCat(
                "input_shapes['", name, "'] is [", absl::StrJoin(s->second, ", "),
                "] but the initializer of that name has shape ", ShapeToString(type->shape)));
          }
        }
      } else {
        KILN_ASSIGN_OR_RETURN(type, InputType(in));
      }
      Var v = MakeVar(name, type);
      v->set_checked_type(type);
      state_.input_names.emplace(v.get(), name);
      state_.values.emplace(name, v);
      params_.push_back(v);
    }
    return absl::OkStatus();
  }

  absl::Status CheckFrozen(const onnx::ValueInfoProto& in, const HostTensor& value) const {
    const std::string what = absl::StrCat("frozen_inputs['", in.name(), "']");
    if (!in.type().has_tensor_type()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": graph input '", in.name(), "' is not a tensor"));
    }
    const onnx::TypeProto::Tensor& tt = in.type().tensor_type();
    if (tt.elem_type() != 0) {
      KILN_ASSIGN_OR_RETURN(DataType dtype, FromOnnxDataType(tt.elem_type()));
      if (dtype != value.dtype()) {
        return absl::InvalidArgumentError(absl::StrCat(what, " is ", value.dtype().ToString(),
                                                       " but the model's input is ",
                                                       dtype.ToString()));
      }
    }
    if (!tt.has_shape()) return absl::OkStatus();
    const auto& dims = tt.shape().dim();
    if (dims.size() != value.ndim()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " has rank ", value.ndim(), " but the model's input has rank ", dims.size()));
    }
    for (int i = 0; i < dims.size(); ++i) {
      if (dims.Get(i).has_dim_value() &&
          dims.Get(i).dim_value() != value.shape()[static_cast<size_t>(i)]) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, " has extent ", value.shape()[static_cast<size_t>(i)], " at axis ",
                         i, " but the model's input has ", dims.Get(i).dim_value()));
      }
    }
    return absl::OkStatus();
  }

  // ---- nodes ---------------------------------------------------------------

  // Why input `name` of node `index` is not defined yet.
  absl::Status UndefinedInput(const onnx::NodeProto& node, int index, int i) const {
    const std::string& name = node.input(i);
    auto p = producer_.find(name);
    if (p == producer_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          NodeWhere(node, index), ": input ", i, " '", name,
          "' is a dangling edge: no graph input, initializer or node output has that name"));
    }
    const bool self = p->second == index;
    return absl::InvalidArgumentError(
        absl::StrCat(NodeWhere(node, index), ": input ", i, " '", name, "' is produced by ",
                     self ? "the node itself"
                          : absl::StrCat("node ", NodeWhere(graph_.node(p->second), p->second)),
                     self ? "" : ", which comes later",
                     ": the graph has a cycle or its nodes are not in topological order"));
  }

  void AddUnsupported(const onnx::NodeProto& node, int index, int64_t opset,
                      absl::string_view reason) {
    const bool default_domain = NormalizeDomain(node.domain()).empty();
    std::string entry =
        default_domain ? node.op_type() : absl::StrCat(node.domain(), "::", node.op_type());
    absl::StrAppend(
        &entry, " (opset ", opset, ", node ",
        node.name().empty() ? absl::StrCat("#", index) : absl::StrCat("'", node.name(), "'"));
    if (!reason.empty()) absl::StrAppend(&entry, ": ", reason);
    absl::StrAppend(&entry, ")");
    unsupported_.push_back(std::move(entry));
  }

  void MarkUnknown(const onnx::NodeProto& node) {
    for (const std::string& out : node.output()) {
      if (!out.empty()) unknown_.insert(out);
    }
  }

  absl::Status ConvertNodes() {
    RegisterAllConverters();
    const ConverterRegistry& registry = ConverterRegistry::Global();
    for (int index = 0; index < graph_.node_size(); ++index) {
      const onnx::NodeProto& node = graph_.node(index);
      const std::string domain(NormalizeDomain(node.domain()));
      auto opset_it = opsets_.find(domain);
      if (opset_it == opsets_.end()) {
        return absl::InvalidArgumentError(absl::StrCat(NodeWhere(node, index),
                                                       ": the node's domain '", node.domain(),
                                                       "' is not in the model's opset_import"));
      }
      const int64_t opset = opset_it->second;
      bool depends_on_unknown = false;
      for (int i = 0; i < node.input_size(); ++i) {
        const std::string& name = node.input(i);
        if (name.empty() || state_.values.contains(name)) continue;
        if (unknown_.contains(name)) {
          depends_on_unknown = true;
          continue;
        }
        return UndefinedInput(node, index, i);
      }
      const Converter* converter = registry.Find(domain, node.op_type(), opset);
      if (converter == nullptr) {
        const std::string family = registry.AbsentFamily(domain, node.op_type());
        AddUnsupported(node, index, opset,
                       family.empty() ? std::string()
                                      : absl::StrCat("its converter family '", family,
                                                     "' is not in this build"));
        MarkUnknown(node);
        continue;
      }
      if (depends_on_unknown) {  // downstream of an unsupported node: nothing to convert
        MarkUnknown(node);
        continue;
      }
      NodeContext ctx(node, index, opset, &state_);
      absl::StatusOr<std::vector<Expr>> outs = (*converter)(ctx);
      if (!outs.ok()) {
        if (outs.status().code() == absl::StatusCode::kUnimplemented) {
          // The converter exists but not for this use: list it with the others.
          absl::string_view reason = outs.status().message();
          const std::string prefix = ctx.where() + ": ";
          if (absl::StartsWith(reason, prefix)) reason.remove_prefix(prefix.size());
          AddUnsupported(node, index, opset, reason);
          MarkUnknown(node);
          continue;
        }
        return WithWhere(outs.status(), ctx.where());
      }
      KILN_RETURN_IF_ERROR(BindOutputs(node, index, opset, ctx, *outs));
    }
    return absl::OkStatus();
  }

  absl::Status BindOutputs(const onnx::NodeProto& node, int index, int64_t opset,
                           const NodeContext& ctx, const std::vector<Expr>& outs) {
    for (int i = 0; i < node.output_size(); ++i) {
      const std::string& name = node.output(i);
      if (name.empty()) continue;
      if (static_cast<size_t>(i) >= outs.size()) {
        if (!used_.contains(name)) continue;  // an optional output nobody reads
        AddUnsupported(
            node, index, opset,
            absl::StrCat("output ", i, " '", name, "' is used, but the converter produces only ",
                         outs.size(), " output(s)"));
        for (int j = i; j < node.output_size(); ++j) {
          if (!node.output(j).empty()) unknown_.insert(node.output(j));
        }
        return absl::OkStatus();
      }
      const Expr& e = outs[static_cast<size_t>(i)];
      if (!e) {
        return absl::InternalError(absl::StrCat(ctx.where(),
                                                ": the converter returned a null "
                                                "expression for output ",
                                                i));
      }
      KILN_RETURN_IF_ERROR(WithWhere(internal::EnsureTyped(e), ctx.where()));
      state_.values.emplace(name, e);
    }
    return absl::OkStatus();
  }

  // ---- outputs -------------------------------------------------------------

  absl::StatusOr<Expr> Outputs() {
    if (!unsupported_.empty()) {
      return absl::UnimplementedError(
          absl::StrCat("unsupported operators: ", absl::StrJoin(unsupported_, ", ")));
    }
    if (graph_.output_size() == 0) return absl::InvalidArgumentError("the graph has no outputs");
    std::vector<Expr> fields;
    std::vector<Type> types;
    for (const onnx::ValueInfoProto& out : graph_.output()) {
      auto it = state_.values.find(out.name());
      if (it == state_.values.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "graph output '", out.name(),
            "' is not defined: no graph input, initializer or node output has that name"));
      }
      KILN_RETURN_IF_ERROR(CheckDeclaredOutput(out, it->second->checked_type()));
      fields.push_back(it->second);
      types.push_back(it->second->checked_type());
    }
    if (fields.size() == 1) return fields[0];
    KILN_ASSIGN_OR_RETURN(Tuple t, MakeTuple(std::move(fields)));
    t->set_checked_type(MakeTupleType(std::move(types)));
    return Expr(t);
  }

  // A graph output's declared type against the one the graph computes: a
  // different dtype is an error (ONNX Runtime refuses it too); a different
  // rank or static dim is a warning, and the computed shape is what the
  // model outputs (ONNX Runtime also only warns, "Error merging shape info").
  absl::Status CheckDeclaredOutput(const onnx::ValueInfoProto& out, const Type& got) {
    if (!out.has_type() || !out.type().has_tensor_type()) return absl::OkStatus();
    const auto* computed = got.as<TensorTypeNode>();
    if (computed == nullptr) return absl::OkStatus();
    const onnx::TypeProto::Tensor& tt = out.type().tensor_type();
    if (tt.elem_type() != 0) {
      absl::StatusOr<DataType> declared = FromOnnxDataType(tt.elem_type());
      if (declared.ok() && *declared != computed->dtype) {
        return absl::InvalidArgumentError(absl::StrCat(
            "graph output '", out.name(), "' is declared as ", OnnxDataTypeName(tt.elem_type()),
            " but the graph computes ", computed->dtype.ToString(), " (", TypeToString(got),
            "); fix the output's declared elem_type"));
      }
    }
    if (!tt.has_shape()) return absl::OkStatus();
    const auto& dims = tt.shape().dim();
    std::string mismatch;
    if (dims.size() != static_cast<int>(computed->shape.size())) {
      mismatch = absl::StrCat("rank ", dims.size(), " vs ", computed->shape.size());
    } else {
      for (int i = 0; i < dims.size() && mismatch.empty(); ++i) {
        const Dim& d = computed->shape[static_cast<size_t>(i)];
        if (dims.Get(i).has_dim_value() && d.is_static() && d.value() != dims.Get(i).dim_value()) {
          mismatch = absl::StrCat("dim ", i, ": ", dims.Get(i).dim_value(), " declared, ",
                                  d.value(), " computed");
        }
      }
    }
    if (!mismatch.empty()) {
      std::vector<std::string> declared;
      for (const auto& d : dims) {
        declared.push_back(d.has_dim_value() ? absl::StrCat(d.dim_value())
                           : d.has_dim_param() ? d.dim_param()
                                               : std::string("?"));
      }
      Warn(absl::StrCat("graph output '", out.name(), "' is declared with shape [",
                        absl::StrJoin(declared, ", "), "] but the graph computes ",
                        TypeToString(got), " (", mismatch,
                        "); the computed shape is used (ONNX Runtime also only warns here)"));
    }
    return absl::OkStatus();
  }

  onnx::ModelProto& model_;
  const bool had_graph_;  // before graph_ below makes one
  onnx::GraphProto& graph_;
  const ImportOptions& options_;
  SequenceRegistry sequences_;
  ImportState state_;

  absl::flat_hash_map<std::string, int64_t> opsets_;         // domain ("" default) -> version
  absl::flat_hash_map<std::string, int> initializers_;       // name -> index
  absl::flat_hash_map<std::string, std::string> definer_;    // value -> what defines it
  absl::flat_hash_map<std::string, int> producer_;           // node output -> node index
  absl::flat_hash_set<std::string> used_;                    // read by a node or an output
  absl::flat_hash_set<std::string> overridable_candidates_;  // initializers also inputs
  absl::flat_hash_map<std::string, TensorType> overridable_types_;
  absl::flat_hash_map<std::string, int64_t> dim_bindings_;   // dim_param -> extent
  absl::flat_hash_map<std::string, std::string> dim_names_;  // dim_param -> Dim::Var name
  absl::flat_hash_set<std::string> used_dim_names_;
  absl::flat_hash_set<std::string> unknown_;  // outputs of nodes that were not converted
  std::vector<std::string> unsupported_;
  std::vector<Var> params_;
};

// Protobuf's default recursion limit, which the import keeps: a model nested
// deeper is refused (kiln's own passes never recurse on nesting, but the
// protobuf parser does, on the C++ stack).
constexpr int kProtoNestingLimit = 100;
// How deep the diagnosis below looks: bounded, so that it cannot overflow the
// stack itself (a few hundred bytes of parser frame per level).
constexpr int kDiagnosisNestingLimit = 1000;

// After a failed parse: whether the bytes are a well-formed ModelProto that
// only nests deeper than kProtoNestingLimit (the failure's real reason, which
// protobuf does not report).
bool NestedTooDeep(absl::string_view bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetRecursionLimit(kDiagnosisNestingLimit);
  onnx::ModelProto deep;
  return deep.ParseFromCodedStream(&in);
}

absl::StatusOr<Module> ImportBytes(absl::string_view bytes, const ImportOptions& options,
                                   std::string base_dir, std::string model_real_dir = "") {
  if (static_cast<uint64_t>(bytes.size()) > static_cast<uint64_t>(kMaxProtoBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model is ", bytes.size(),
        " bytes; protobuf messages are limited to 2 GB (store large weights as external data)"));
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    if (NestedTooDeep(bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the model nests its messages more than ", kProtoNestingLimit,
          " levels deep (subgraphs inside subgraphs: each If, Loop or Scan body is 3 levels "
          "below its node, so about ", kProtoNestingLimit / 3,
          " nested subgraphs), beyond protobuf's recursion limit, which kiln keeps; the file "
          "itself is well-formed. Flatten the nested control flow"));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("not a valid ONNX model: the ", bytes.size(),
                     " bytes do not parse as an onnx.ModelProto (a truncated or corrupt file?)"));
  }
  GraphImporter importer(&model, options, std::move(base_dir), std::move(model_real_dir));
  return importer.Run();
}

}  // namespace

absl::StatusOr<Module> ImportOnnxFile(const std::string& path, const ImportOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, "ONNX model file"));
  std::string base_dir =
      options.external_data_dir.empty() ? DirName(path) : options.external_data_dir;
  // A model that is a symbolic link may keep its data beside its real file.
  std::string model_real_dir;
  if (options.external_data_dir.empty()) {
    if (char* real = ::realpath(path.c_str(), nullptr); real != nullptr) {
      model_real_dir = DirName(real);
      std::free(real);
    }
  }
  absl::StatusOr<Module> m =
      ImportBytes(bytes, options, std::move(base_dir), std::move(model_real_dir));
  if (!m.ok()) return WithWhere(m.status(), path);
  return m;
}

absl::StatusOr<Module> ImportOnnxBytes(absl::string_view bytes, const ImportOptions& options) {
  return ImportBytes(bytes, options,
                     options.external_data_dir.empty() ? "." : options.external_data_dir);
}

absl::StatusOr<Ref<const HostTensor>> ReadTensorProtoFile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, "tensor file"));
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' does not parse as an onnx.TensorProto"));
  }
  TensorReadOptions o;
  o.allow_external = false;
  absl::StatusOr<Ref<const HostTensor>> t = TensorFromProto(proto, o);
  if (!t.ok()) {
    return absl::Status(t.status().code(), absl::StrCat(path, ": ", t.status().message()));
  }
  return t;
}

namespace {

// The tensors of a SequenceProto read from `path` (for messages).
absl::StatusOr<std::vector<Ref<const HostTensor>>> SequenceTensors(const onnx::SequenceProto& proto,
                                                                   const std::string& path) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR &&
      !(proto.elem_type() == onnx::SequenceProto::UNDEFINED && proto.tensor_values_size() == 0)) {
    return absl::UnimplementedError(absl::StrCat(path, ": a sequence of elem_type ", proto.elem_type(),
                                                 " (kiln reads sequences of tensors)"));
  }
  TensorReadOptions o;
  o.allow_external = false;
  std::vector<Ref<const HostTensor>> out;
  for (int i = 0; i < proto.tensor_values_size(); ++i) {
    absl::StatusOr<Ref<const HostTensor>> t = TensorFromProto(proto.tensor_values(i), o);
    if (!t.ok()) {
      return absl::Status(t.status().code(), absl::StrCat(path, ": element ", i, ": ", t.status().message()));
    }
    out.push_back(*std::move(t));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<Ref<const HostTensor>>> ReadSequenceProtoFile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, "sequence file"));
  onnx::SequenceProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' does not parse as an onnx.SequenceProto"));
  }
  return SequenceTensors(proto, path);
}

absl::StatusOr<OptionalFileValue> ReadOptionalProtoFile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, "optional file"));
  onnx::OptionalProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' does not parse as an onnx.OptionalProto"));
  }
  OptionalFileValue out;
  if (proto.has_tensor_value()) {
    TensorReadOptions o;
    o.allow_external = false;
    absl::StatusOr<Ref<const HostTensor>> t = TensorFromProto(proto.tensor_value(), o);
    if (!t.ok()) return absl::Status(t.status().code(), absl::StrCat(path, ": ", t.status().message()));
    out.has_value = true;
    out.tensor = *std::move(t);
    return out;
  }
  if (proto.has_sequence_value()) {
    KILN_ASSIGN_OR_RETURN(out.sequence, SequenceTensors(proto.sequence_value(), path));
    out.has_value = true;
    out.is_sequence = true;
    return out;
  }
  if (proto.has_sparse_tensor_value() || proto.has_map_value() || proto.has_optional_value()) {
    return absl::UnimplementedError(absl::StrCat(path, ": an optional of elem_type ", proto.elem_type(),
                                                 " (kiln reads optionals of tensors and of sequences)"));
  }
  return out;  // none
}

std::vector<std::string> SupportedOps() {
  RegisterAllConverters();
  return ConverterRegistry::Global().OpTypes("");
}

}  // namespace kiln::onnx_frontend
