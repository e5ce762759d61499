// File: tests/onnx/conformance_case.cc — one case in its own process
// (conformance_case.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "c_api/compiler.h"
#include "frontends/onnx/importer.h"
#include "ir/module.h"
#include "ir/tensor.h"
#include "kiln/runtime.h"
#include "onnx/onnx_pb.h"
#include "tests/cuda/emulate.h"
#include "tests/onnx/conformance_case.h"
#include "tests/onnx/conformance_export.h"
#include "tests/onnx/conformance_lib.h"

namespace kiln::onnx_conformance {

bool FileExists(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::exists(path, ec);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read '", path, "'"));
  return ss.str();
}

absl::Status WriteFile(const std::string& path, absl::string_view content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path, "'"));
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ----------------------------------------------------------------- a case


// A feature of the model kiln does not support: category (one of
// kFeatureCategories, conformance_lib.h) and what ("input 'x'", "Loop (opset
// 11, node 'loop0')").
struct Feature {
  std::string category;
  std::string item;
};

// What the runner needs of the model, read with the ONNX protobuf library.
struct ModelInfo {
  std::vector<std::string> inputs;  // graph inputs that are not initializers, in order
  std::vector<bool> input_dynamic;  // no shape, or a dim without a value
  std::vector<int32_t> input_elem;  // onnx.TensorProto.DataType (0 if not a tensor)
  // The declared shape of each input when every dim has a value.
  std::vector<std::optional<std::vector<int64_t>>> input_static_shape;
  // Sequence inputs, and those whose elements declare no shape (their rank
  // is bound from the data: one element's shape through input_shapes).
  std::vector<bool> input_seq;
  std::vector<bool> input_seq_needs_rank;
  // Optional inputs (their test data are OptionalProto files), and those
  // whose tensor or elements declare no shape.
  std::vector<bool> input_opt;
  std::vector<bool> input_opt_needs_rank;
  std::vector<std::string> outputs;
  std::vector<int32_t> output_elem;
  // Features kiln leaves to the VM issue (control flow, sequences, optional
  // and map types, strings) or does not do at all (training operators).
  std::vector<Feature> unsupported;
};

// "Loop (opset 11, node 'loop0')"; "SequenceAt (opset 12)" for a node
// without a name.
std::string NodeWhere(const onnx::NodeProto& node, const std::map<std::string, int64_t>& opsets) {
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  auto it = opsets.find(domain);
  std::string op = domain.empty() ? node.op_type() : absl::StrCat(domain, "::", node.op_type());
  return absl::StrCat(op, " (opset ", it == opsets.end() ? 0 : it->second,
                      node.name().empty() ? "" : absl::StrCat(", node '", node.name(), "'"), ")");
}

void ScanType(const onnx::TypeProto& type, const std::string& what, const std::string& name,
              std::vector<Feature>* out) {
  std::string item = absl::StrCat(what, " '", name, "'");
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      if (type.tensor_type().elem_type() == onnx::TensorProto::STRING) {
        out->push_back({"strings", item});
      } else if (type.tensor_type().elem_type() == onnx::TensorProto::COMPLEX64 ||
                 type.tensor_type().elem_type() == onnx::TensorProto::COMPLEX128) {
        out->push_back({"complex numbers", item});
      }
      break;
    case onnx::TypeProto::kSequenceType:
      out->push_back({"sequences", item});
      break;
    case onnx::TypeProto::kMapType:
      out->push_back({"maps", item});
      break;
    case onnx::TypeProto::kOptionalType:
      out->push_back({"optional types", item});
      break;
    case onnx::TypeProto::kSparseTensorType:
      out->push_back({"sparse tensors", item});
      break;
    default:
      break;
  }
}

int32_t ElemType(const onnx::TypeProto& type) {
  return type.value_case() == onnx::TypeProto::kTensorType ? type.tensor_type().elem_type() : 0;
}

bool IsDynamic(const onnx::TypeProto& type) {
  if (type.value_case() != onnx::TypeProto::kTensorType) return false;
  if (!type.tensor_type().has_shape()) return true;
  for (const auto& dim : type.tensor_type().shape().dim()) {
    if (dim.value_case() != onnx::TensorShapeProto::Dimension::kDimValue) return true;
  }
  return false;
}

void ScanGraph(const onnx::GraphProto& graph, const std::map<std::string, int64_t>& opsets,
               std::vector<Feature>* out) {
  static const std::set<std::string> kControlFlow = {"If", "Loop", "Scan"};
  static const std::set<std::string> kSequenceOps = {
      "SequenceConstruct", "SequenceEmpty",   "SequenceAt",         "SequenceInsert",
      "SequenceErase",     "SequenceLength",  "SplitToSequence",    "ConcatFromSequence",
      "SequenceMap"};
  for (const onnx::NodeProto& node : graph.node()) {
    const std::string& op = node.op_type();
    bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    if (node.domain() == "ai.onnx.preview.training") {
      out->push_back({"training operators", NodeWhere(node, opsets)});
    } else if (default_domain && kControlFlow.count(op) != 0) {
      out->push_back({"control flow", NodeWhere(node, opsets)});
    } else if (default_domain && kSequenceOps.count(op) != 0) {
      out->push_back({"sequences", NodeWhere(node, opsets)});
    } else if (default_domain && absl::StartsWith(op, "Optional")) {
      out->push_back({"optional types", NodeWhere(node, opsets)});
    } else if (default_domain && (absl::StartsWith(op, "String") || op == "RegexFullMatch")) {
      out->push_back({"strings", NodeWhere(node, opsets)});
    }
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_t() && attr.t().data_type() == onnx::TensorProto::STRING) {
        out->push_back({"strings", absl::StrCat("string constant in ", NodeWhere(node, opsets))});
      }
    }
  }
  for (const onnx::TensorProto& init : graph.initializer()) {
    if (init.data_type() == onnx::TensorProto::STRING) {
      out->push_back({"strings", absl::StrCat("initializer '", init.name(), "'")});
    }
  }
}

// "sequences: SequenceEmpty (opset 12), SequenceAt (opset 12); strings: input 'x'".
std::string FormatFeatures(const std::vector<Feature>& features) {
  std::vector<std::string> categories;
  std::map<std::string, std::vector<std::string>> items;
  for (const Feature& f : features) {
    std::vector<std::string>& list = items[f.category];
    if (list.empty()) categories.push_back(f.category);
    if (std::find(list.begin(), list.end(), f.item) == list.end()) list.push_back(f.item);
  }
  std::vector<std::string> parts;
  for (const std::string& c : categories) {
    parts.push_back(absl::StrCat(c, ": ", absl::StrJoin(items[c], ", ")));
  }
  return absl::StrJoin(parts, "; ");
}

absl::StatusOr<ModelInfo> ReadModelInfo(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is not an ONNX ModelProto"));
  }
  std::map<std::string, int64_t> opsets;
  for (const auto& op : model.opset_import()) {
    opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
  }
  const onnx::GraphProto& graph = model.graph();
  std::set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  ModelInfo info;
  for (const onnx::ValueInfoProto& v : graph.input()) {
    if (initializers.count(v.name()) != 0) continue;
    info.inputs.push_back(v.name());
    info.input_dynamic.push_back(IsDynamic(v.type()));
    info.input_elem.push_back(ElemType(v.type()));
    std::optional<std::vector<int64_t>> shape;
    if (!IsDynamic(v.type()) && v.type().value_case() == onnx::TypeProto::kTensorType) {
      shape.emplace();
      for (const auto& dim : v.type().tensor_type().shape().dim()) shape->push_back(dim.dim_value());
    }
    info.input_static_shape.push_back(std::move(shape));
    const bool seq = v.type().value_case() == onnx::TypeProto::kSequenceType;
    info.input_seq.push_back(seq);
    info.input_seq_needs_rank.push_back(
        seq && !(v.type().sequence_type().elem_type().has_tensor_type() &&
                 v.type().sequence_type().elem_type().tensor_type().has_shape()));
    const bool opt = v.type().value_case() == onnx::TypeProto::kOptionalType;
    info.input_opt.push_back(opt);
    bool opt_rank = false;
    if (opt) {
      const onnx::TypeProto& p = v.type().optional_type().elem_type();
      const onnx::TypeProto& t = p.has_sequence_type() ? p.sequence_type().elem_type() : p;
      opt_rank = !(t.has_tensor_type() && t.tensor_type().has_shape());
    }
    info.input_opt_needs_rank.push_back(opt_rank);
    ScanType(v.type(), "input", v.name(), &info.unsupported);
  }
  for (const onnx::ValueInfoProto& v : graph.output()) {
    info.outputs.push_back(v.name());
    info.output_elem.push_back(ElemType(v.type()));
    ScanType(v.type(), "output", v.name(), &info.unsupported);
  }
  ScanGraph(graph, opsets, &info.unsupported);
  return info;
}

struct DataSet {
  std::string dir;
  int index = 0;
  std::vector<Ref<const HostTensor>> inputs;  // null for a sequence input
  std::vector<std::vector<Ref<const HostTensor>>> seq_inputs;  // per input: its elements
  // Per input: an optional's value is a tensor (in inputs), a sequence (in
  // seq_inputs), or none.
  enum class Opt { kNotOptional, kTensor, kSequence, kNone };
  std::vector<Opt> opt_inputs;
  std::vector<std::string> output_files;
};

// test_data_set_N, sorted by N, with input_K.pb / output_K.pb counted.
std::vector<DataSet> ListDataSets(const std::string& case_dir) {
  std::vector<DataSet> sets;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(case_dir, ec)) {
    std::string name = entry.path().filename().string();
    absl::string_view rest = name;
    int index = 0;
    if (!absl::ConsumePrefix(&rest, "test_data_set_") || !absl::SimpleAtoi(rest, &index)) continue;
    DataSet ds;
    ds.dir = entry.path().string();
    ds.index = index;
    for (int k = 0;; ++k) {
      std::string out = absl::StrCat(ds.dir, "/output_", k, ".pb");
      if (!FileExists(out)) break;
      ds.output_files.push_back(out);
    }
    sets.push_back(std::move(ds));
  }
  std::sort(sets.begin(), sets.end(),
            [](const DataSet& a, const DataSet& b) { return a.index < b.index; });
  return sets;
}

int CountInputFiles(const std::string& dir) {
  int k = 0;
  while (FileExists(absl::StrCat(dir, "/input_", k, ".pb"))) ++k;
  return k;
}

// ONNX 1.12's test data stores bfloat16 tensors as uint16 (the same bits):
// where the model declares the value bfloat16, read it as bfloat16.
Ref<const HostTensor> BFloat16IfDeclared(Ref<const HostTensor> t,
                                         const std::vector<int32_t>& declared, int index) {
  if (!t || index < 0 || static_cast<size_t>(index) >= declared.size() ||
      declared[static_cast<size_t>(index)] != onnx::TensorProto::BFLOAT16 ||
      t->dtype() != DataType::UInt(16)) {
    return t;
  }
  absl::StatusOr<Ref<HostTensor>> b =
      HostTensor::FromBytes(DataType::BFloat16(), t->shape(), t->raw_data(), t->nbytes());
  if (!b.ok()) return t;
  return *std::move(b);
}

struct Verdict {
  Outcome outcome = Outcome::kFail;
  std::string reason;
  // The import needed the value of a graph input and freezing was not allowed.
  bool needs_frozen = false;
};

// Sends "@phase NAME" lines to the parent, so that a timeout or a crash can
// say where it happened.
class Reporter {
 public:
  explicit Reporter(int fd) : fd_(fd) {}
  void Phase(absl::string_view phase) const { Write(absl::StrCat("@phase ", phase, "\n")); }
  void Write(absl::string_view text) const {
    const char* p = text.data();
    size_t left = text.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
};

std::string StatusText(const absl::Status& s) { return std::string(s.message()); }

std::string KilnStatusText(KilnStatus* st) {
  std::string text = absl::StrCat(kiln_status_code_name(kiln_status_code(st)), ": ",
                                  kiln_status_message(st) != nullptr ? kiln_status_message(st) : "");
  kiln_status_free(st);
  return text;
}

DLTensor ToDLTensor(const HostTensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw_data());
  d.device.device_type = kDLCPU;
  d.device.device_id = 0;
  d.ndim = t.ndim();
  d.dtype.code = static_cast<uint8_t>(t.dtype().code());
  d.dtype.bits = static_cast<uint8_t>(t.dtype().bits());
  d.dtype.lanes = static_cast<uint16_t>(t.dtype().lanes());
  d.shape = const_cast<int64_t*>(t.shape().data());
  d.strides = nullptr;
  d.byte_offset = 0;
  return d;
}

// One compiled artifact, for one set of bound shapes and frozen values.
struct Compiled {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, Ref<const HostTensor>> frozen;
  KilnArtifact* artifact = nullptr;
  std::string path;          // the compiled .so
  std::string fake_kernels;  // --emulate_cuda: the artifact's kernels built for the host
};

bool SameFrozen(const std::map<std::string, Ref<const HostTensor>>& a,
                const std::map<std::string, Ref<const HostTensor>>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || !t || !it->second || !t->BitwiseEqual(*it->second)) return false;
  }
  return true;
}

class CaseRunner {
 public:
  CaseRunner(const Case& c, const Options& options, const Tolerance& tolerance,
             const std::string& temp_dir, const Reporter& reporter, bool allow_freeze)
      : case_(c), options_(options), tolerance_(tolerance), temp_dir_(temp_dir),
        reporter_(reporter), allow_freeze_(allow_freeze) {}
  ~CaseRunner() {
    for (Compiled& c : compiled_) kiln_artifact_release(c.artifact);
  }

  // Runs the case; with --export_dir (on a user's path: nothing frozen) a
  // case that passes is also written out there (conformance_export.h).
  Verdict Run() {
    if (options_.export_dir.empty() || allow_freeze_) return RunCase();
    absl::StatusOr<CaseExport> e = CaseExport::Begin(options_.export_dir, absl::StrCat(case_.suite, "__", case_.name));
    if (!e.ok()) return Fail(StatusText(e.status()));
    export_.emplace(*std::move(e));
    Verdict v = RunCase();
    if (v.outcome == Outcome::kPass) {
      if (absl::Status st = export_->Commit(); !st.ok()) v = Fail(StatusText(st));
    }
    if (v.outcome != Outcome::kPass) export_->Abort();
    export_.reset();
    return v;
  }

 private:
  Verdict RunCase() {
    reporter_.Phase("read");
    std::string model_path = case_.dir + "/model.onnx";
    absl::StatusOr<ModelInfo> info = ReadModelInfo(model_path);
    if (!info.ok()) return Fail(absl::StrCat("model: ", StatusText(info.status())));
    info_ = *std::move(info);

    std::vector<DataSet> sets = ListDataSets(case_.dir);
    if (sets.empty()) return Fail("no test_data_set_* folder");
    for (DataSet& ds : sets) {
      int num_inputs = CountInputFiles(ds.dir);
      ds.seq_inputs.resize(static_cast<size_t>(num_inputs));
      ds.opt_inputs.assign(static_cast<size_t>(num_inputs), DataSet::Opt::kNotOptional);
      for (int k = 0; k < num_inputs; ++k) {
        if (static_cast<size_t>(k) < info_.input_opt.size() && info_.input_opt[static_cast<size_t>(k)]) {
          absl::StatusOr<onnx_frontend::OptionalFileValue> o =
              onnx_frontend::ReadOptionalProtoFile(absl::StrCat(ds.dir, "/input_", k, ".pb"));
          if (!o.ok()) {
            return Fail(absl::StrCat(SetPrefix(ds), "input_", k, ".pb: ", StatusText(o.status())));
          }
          DataSet::Opt& kind = ds.opt_inputs[static_cast<size_t>(k)];
          if (!o->has_value) {
            kind = DataSet::Opt::kNone;
            ds.inputs.push_back(nullptr);
          } else if (o->is_sequence) {
            kind = DataSet::Opt::kSequence;
            ds.seq_inputs[static_cast<size_t>(k)] = std::move(o->sequence);
            ds.inputs.push_back(nullptr);
          } else {
            kind = DataSet::Opt::kTensor;
            ds.inputs.push_back(BFloat16IfDeclared(std::move(o->tensor), info_.input_elem, k));
          }
          continue;
        }
        if (static_cast<size_t>(k) < info_.input_seq.size() && info_.input_seq[static_cast<size_t>(k)]) {
          absl::StatusOr<std::vector<Ref<const HostTensor>>> seq =
              onnx_frontend::ReadSequenceProtoFile(absl::StrCat(ds.dir, "/input_", k, ".pb"));
          if (!seq.ok()) {
            return Fail(absl::StrCat(SetPrefix(ds), "input_", k, ".pb: ", StatusText(seq.status())));
          }
          ds.seq_inputs[static_cast<size_t>(k)] = *std::move(seq);
          ds.inputs.push_back(nullptr);
          continue;
        }
        absl::StatusOr<Ref<const HostTensor>> t = onnx_frontend::ReadTensorProtoFile(
            absl::StrCat(ds.dir, "/input_", k, ".pb"));
        if (!t.ok()) {
          if (!info_.unsupported.empty()) return UnsupportedFeatures();
          return Fail(absl::StrCat(SetPrefix(ds), "input_", k,
                                   ".pb: ", StatusText(t.status())));
        }
        ds.inputs.push_back(BFloat16IfDeclared(*std::move(t), info_.input_elem, k));
      }
      if (ds.inputs.size() != info_.inputs.size()) {
        if (!info_.unsupported.empty()) return UnsupportedFeatures();
        return Fail(absl::StrCat(SetPrefix(ds), "test data: ", num_inputs, " input files for ",
                                 info_.inputs.size(), " graph inputs"));
      }
      for (size_t i = 0; i < ds.inputs.size(); ++i) {
        const auto& declared = info_.input_static_shape[i];
        if (declared.has_value() && ds.inputs[i] && *declared != ds.inputs[i]->shape()) {
          if (!info_.unsupported.empty()) return UnsupportedFeatures();
          return Fail(absl::StrCat(SetPrefix(ds), "test data: input ", i, " '", info_.inputs[i],
                                   "' is ", ShapeString(ds.inputs[i]->shape()),
                                   ", the model declares ", ShapeString(*declared),
                                   " (a defect of the test data)"));
        }
      }
    }

    for (const DataSet& ds : sets) {
      std::optional<Verdict> v = RunDataSet(ds);
      if (v.has_value()) return *v;
    }
    return Verdict{Outcome::kPass, ""};
  }

  static Verdict Fail(std::string reason) { return Verdict{Outcome::kFail, std::move(reason)}; }
  static Verdict Unsupported(std::string reason) {
    return Verdict{Outcome::kUnsupported, std::move(reason)};
  }
  Verdict UnsupportedFeatures() const { return Unsupported(FormatFeatures(info_.unsupported)); }
  static std::string SetPrefix(const DataSet& ds) {
    return ds.index == 0 ? "" : absl::StrCat("set ", ds.index, ": ");
  }

  int InputIndex(const std::string& name) const {
    for (size_t i = 0; i < info_.inputs.size(); ++i) {
      if (info_.inputs[i] == name) return static_cast<int>(i);
    }
    return -1;
  }

  // The bound shapes and frozen values a data set asks for.
  void KeyFor(const DataSet& ds, std::map<std::string, std::vector<int64_t>>* shapes,
              std::map<std::string, Ref<const HostTensor>>* frozen) const {
    for (size_t i = 0; i < info_.inputs.size(); ++i) {
      const std::string& name = info_.inputs[i];
      if (info_.input_opt[i]) {
        // The rank, when the model does not declare it, from a value.
        if (info_.input_opt_needs_rank[i]) {
          if (ds.opt_inputs[i] == DataSet::Opt::kTensor) (*shapes)[name] = ds.inputs[i]->shape();
          if (ds.opt_inputs[i] == DataSet::Opt::kSequence && !ds.seq_inputs[i].empty()) {
            (*shapes)[name] = ds.seq_inputs[i][0]->shape();
          }
        }
        continue;
      }
      if (info_.input_seq[i]) {
        // The elements' rank, when the model does not declare it: what a
        // user gives with --input-shape (one element's shape).
        if (info_.input_seq_needs_rank[i] && !ds.seq_inputs[i].empty()) {
          (*shapes)[name] = ds.seq_inputs[i][0]->shape();
        }
        continue;
      }
      if (frozen_names_.count(name) != 0) {
        (*frozen)[name] = ds.inputs[i];
      } else if (options_.bind_shapes && info_.input_dynamic[i]) {
        (*shapes)[name] = ds.inputs[i]->shape();
      }
    }
  }

  // Imports and compiles for `ds` (or reuses an artifact with the same
  // shapes and frozen values). Returns a verdict on failure.
  std::optional<Verdict> Prepare(const DataSet& ds, const Compiled** out) {
    for (size_t attempt = 0; attempt <= info_.inputs.size() + 1; ++attempt) {
      std::map<std::string, std::vector<int64_t>> shapes;
      std::map<std::string, Ref<const HostTensor>> frozen;
      KeyFor(ds, &shapes, &frozen);
      for (const Compiled& c : compiled_) {
        if (c.shapes == shapes && SameFrozen(c.frozen, frozen)) {
          *out = &c;
          return std::nullopt;
        }
      }
      reporter_.Phase("import");
      onnx_frontend::ImportOptions io;
      io.input_shapes = shapes;
      io.frozen_inputs = frozen;
      io.freeze_overridable_initializers = true;  // the test data never overrides them
      absl::StatusOr<Module> module = onnx_frontend::ImportOnnxFile(case_.dir + "/model.onnx", io);
      if (!module.ok()) {
        const absl::Status& st = module.status();
        auto payload = st.GetPayload(onnx_frontend::kNeedsConstantPayload);
        if (payload.has_value()) {
          bool added = false;
          for (absl::string_view name : absl::StrSplit(std::string(*payload), ',', absl::SkipEmpty())) {
            std::string n(absl::StripAsciiWhitespace(name));
            if (InputIndex(n) < 0) {
              return Fail(absl::StrCat("import: needs the value of '", n,
                                       "', which is not a graph input: ", StatusText(st)));
            }
            if (frozen_names_.insert(n).second) added = true;
          }
          if (!allow_freeze_) {
            Verdict v = Unsupported(absl::StrCat(
                kNeedsValuePrefix, "'", absl::StrJoin(frozen_names_, "', '"),
                "' at compile time: ", StatusText(st)));
            v.needs_frozen = true;
            return v;
          }
          if (added) continue;
          return Fail(absl::StrCat("import (inputs frozen: ", absl::StrJoin(frozen_names_, ", "),
                                   "): ", StatusText(st)));
        }
        if (!info_.unsupported.empty()) return UnsupportedFeatures();
        if (st.code() == absl::StatusCode::kUnimplemented) return Unsupported(StatusText(st));
        return Fail(absl::StrCat("import: ", StatusText(st)));
      }

      reporter_.Phase("compile");
      compiler::CompileOptions co;
      co.opt_level = options_.opt_level;
      co.target = options_.target;
      co.export_options.num_threads = 1;
      co.export_options.model_name = case_.name;
      std::string so = absl::StrCat(temp_dir_, allow_freeze_ && !options_.freeze_inputs ? "/frozen_" : "/",
                                    "model_", compiled_.size(), ".so");
      absl::StatusOr<compiler::CompileReport> report = compiler::CompileToLibrary(*module, co, so);
      if (!report.ok()) {
        if (report.status().code() == absl::StatusCode::kUnimplemented) {
          return Unsupported(absl::StrCat("compile: ", StatusText(report.status())));
        }
        return Fail(absl::StrCat("compile: ", StatusText(report.status())));
      }

      reporter_.Phase("load");
      KilnArtifact* artifact = nullptr;
      if (KilnStatus* st = kiln_artifact_load(so.c_str(), &artifact); st != nullptr) {
        return Fail(absl::StrCat("load: ", KilnStatusText(st)));
      }
      Compiled c;
      if (options_.emulate_cuda) {
        reporter_.Phase("emulate");
        c.fake_kernels = so + ".host.so";
        if (absl::Status st = testing::BuildFakeDriverKernels(so, c.fake_kernels); !st.ok()) {
          kiln_artifact_release(artifact);
          return Fail(absl::StrCat("emulate: ", StatusText(st)));
        }
      }
      c.shapes = std::move(shapes);
      c.frozen = std::move(frozen);
      c.artifact = artifact;
      c.path = so;
      compiled_.push_back(std::move(c));
      *out = &compiled_.back();
      return std::nullopt;
    }
    return Fail(absl::StrCat("import: kept asking for constant inputs (frozen: ",
                             absl::StrJoin(frozen_names_, ", "), ")"));
  }

  std::optional<Verdict> RunDataSet(const DataSet& ds) {
    const Compiled* compiled = nullptr;
    if (std::optional<Verdict> v = Prepare(ds, &compiled); v.has_value()) return v;
    const std::string prefix = SetPrefix(ds);

    reporter_.Phase("run");
    KilnSessionOptions so{};
    so.struct_size = sizeof(so);
    so.num_threads = 1;
    so.pool = nullptr;
    if (options_.device != "cpu") {
      so.device_type = kDLCUDA;
      so.device_id = std::atoi(options_.device.c_str() + 5);  // "cuda:N", checked by the flags
    }
    // The fake driver loads the kernels that this variable names when the
    // session loads the artifact's module.
    if (!compiled->fake_kernels.empty()) setenv("KILN_FAKE_CUDA_KERNELS", compiled->fake_kernels.c_str(), 1);
    KilnSession* session = nullptr;
    if (KilnStatus* st = kiln_session_create(compiled->artifact, &so, &session); st != nullptr) {
      return Fail(absl::StrCat(prefix, "session: ", KilnStatusText(st)));
    }
    std::unique_ptr<KilnSession, void (*)(KilnSession*)> guard(session, kiln_session_release);
    std::vector<std::pair<std::string, ExportValue>> export_inputs;
    std::vector<ExportValue> export_outputs;
    for (size_t i = 0; i < info_.inputs.size(); ++i) {
      if (frozen_names_.count(info_.inputs[i]) != 0) continue;
      if (export_.has_value()) {
        ExportValue v = ds.opt_inputs[i] == DataSet::Opt::kNone ? ExportValue::None()
                        : (info_.input_seq[i] || ds.opt_inputs[i] == DataSet::Opt::kSequence)
                            ? ExportValue::Sequence(ds.seq_inputs[i])
                            : ExportValue::Tensor(ds.inputs[i]);
        export_inputs.emplace_back(info_.inputs[i], std::move(v));
      }
      if (ds.opt_inputs[i] == DataSet::Opt::kNone) {
        if (KilnStatus* st = kiln_session_set_input_none(session, info_.inputs[i].c_str()); st != nullptr) {
          return Fail(absl::StrCat(prefix, "input ", i, " '", info_.inputs[i], "': ", KilnStatusText(st)));
        }
        continue;
      }
      if (info_.input_seq[i] || ds.opt_inputs[i] == DataSet::Opt::kSequence) {
        std::vector<DLTensor> elems;
        for (const Ref<const HostTensor>& e : ds.seq_inputs[i]) elems.push_back(ToDLTensor(*e));
        if (KilnStatus* st = kiln_session_set_input_sequence(session, info_.inputs[i].c_str(), elems.data(),
                                                             static_cast<int32_t>(elems.size()));
            st != nullptr) {
          return Fail(absl::StrCat(prefix, "input ", i, " '", info_.inputs[i], "': ", KilnStatusText(st)));
        }
        continue;
      }
      DLTensor t = ToDLTensor(*ds.inputs[i]);
      if (KilnStatus* st = kiln_session_set_input(session, info_.inputs[i].c_str(), &t);
          st != nullptr) {
        return Fail(absl::StrCat(prefix, "input ", i, " '", info_.inputs[i],
                                 "': ", KilnStatusText(st)));
      }
    }
    if (KilnStatus* st = kiln_session_run(session); st != nullptr) {
      return Fail(absl::StrCat(prefix, "run: ", KilnStatusText(st)));
    }

    reporter_.Phase("compare");
    int32_t num_outputs = kiln_artifact_num_outputs(compiled->artifact);
    if (static_cast<size_t>(num_outputs) != ds.output_files.size()) {
      return Fail(absl::StrCat(prefix, "the compiled model has ", num_outputs, " outputs, the test data ",
                               ds.output_files.size()));
    }
    for (int32_t k = 0; k < num_outputs; ++k) {
      const std::string file = ds.output_files[static_cast<size_t>(k)];
      Ref<const HostTensor> expected_opt;
      if (kiln_artifact_output_is_optional(compiled->artifact, k)) {
        // None, or a value compared as a plain output of its kind.
        const std::string name = static_cast<size_t>(k) < info_.outputs.size()
                                     ? absl::StrCat(" '", info_.outputs[static_cast<size_t>(k)], "'")
                                     : "";
        absl::StatusOr<onnx_frontend::OptionalFileValue> want = onnx_frontend::ReadOptionalProtoFile(file);
        if (!want.ok()) return Fail(absl::StrCat(prefix, "output_", k, ".pb: ", StatusText(want.status())));
        int32_t is_none = 0;
        if (KilnStatus* st = kiln_session_get_output_is_none(session, k, &is_none); st != nullptr) {
          return Fail(absl::StrCat(prefix, "output ", k, name, ": ", KilnStatusText(st)));
        }
        if ((is_none != 0) != !want->has_value) {
          return Fail(absl::StrCat(prefix, "output ", k, name, ": ", is_none ? "none" : "a value",
                                   ", expected ", want->has_value ? "a value" : "none"));
        }
        if (is_none) {
          export_outputs.push_back(ExportValue::None());
          continue;
        }
        if (kiln_artifact_output_is_sequence(compiled->artifact, k) != (want->is_sequence ? 1 : 0)) {
          return Fail(absl::StrCat(prefix, "output ", k, name, ": an optional of a ",
                                   want->is_sequence ? "tensor" : "sequence", ", expected one of a ",
                                   want->is_sequence ? "sequence" : "tensor"));
        }
        if (want->is_sequence) {
          if (std::optional<Verdict> v = CompareSequence(session, want->sequence, k, prefix); v.has_value()) {
            return v;
          }
          export_outputs.push_back(ExportValue::Sequence(want->sequence));
          continue;
        }
        expected_opt = want->tensor;
      } else if (kiln_artifact_output_is_sequence(compiled->artifact, k)) {
        absl::StatusOr<std::vector<Ref<const HostTensor>>> want = onnx_frontend::ReadSequenceProtoFile(file);
        if (!want.ok()) return Fail(absl::StrCat(prefix, "output_", k, ".pb: ", StatusText(want.status())));
        if (std::optional<Verdict> v = CompareSequence(session, *want, k, prefix); v.has_value()) return v;
        export_outputs.push_back(ExportValue::Sequence(*std::move(want)));
        continue;
      }
      absl::StatusOr<Ref<const HostTensor>> expected =
          expected_opt ? absl::StatusOr<Ref<const HostTensor>>(expected_opt)
                       : onnx_frontend::ReadTensorProtoFile(file);
      if (!expected.ok()) {
        if (!info_.unsupported.empty()) return UnsupportedFeatures();
        return Fail(absl::StrCat(prefix, "output_", k, ".pb: ", StatusText(expected.status())));
      }
      const DLTensor* y = nullptr;
      if (KilnStatus* st = kiln_session_get_output(session, k, &y); st != nullptr) {
        return Fail(absl::StrCat(prefix, "output ", k, ": ", KilnStatusText(st)));
      }
      if (y == nullptr || y->ndim < 0 || (y->ndim > 0 && y->shape == nullptr)) {
        return Fail(absl::StrCat(prefix, "output ", k, ": no tensor"));
      }
      std::vector<int64_t> host_shape;
      std::vector<char> host;  // a device output copied to the host
      DLTensor copied{};
      if (y->device.device_type == kDLCUDA) {
        host_shape.assign(y->shape, y->shape + y->ndim);
        int64_t n = 1;
        for (int64_t d : host_shape) n *= d;
        host.resize(static_cast<size_t>(n) * ((y->dtype.bits * y->dtype.lanes + 7) / 8) + 1);
        copied.data = host.data();
        copied.device = {kDLCPU, 0};
        copied.ndim = y->ndim;
        copied.dtype = y->dtype;
        copied.shape = host_shape.data();
        if (KilnStatus* st = kiln_session_copy_output(session, k, &copied); st != nullptr) {
          return Fail(absl::StrCat(prefix, "output ", k, ": copy from the device: ", KilnStatusText(st)));
        }
        y = &copied;
      }
      if (y->device.device_type != kDLCPU) {
        return Fail(absl::StrCat(prefix, "output ", k, ": not a CPU or CUDA tensor"));
      }
      ArrayView actual;
      actual.dtype = DataType(static_cast<DTypeCode>(y->dtype.code), y->dtype.bits, y->dtype.lanes);
      if (y->ndim > 0 && y->shape == nullptr) {
        return Fail(absl::StrCat(prefix, "output ", k, ": no shape"));
      }
      actual.shape.assign(y->shape, y->shape + y->ndim);
      actual.data = y->data == nullptr
                        ? nullptr
                        : static_cast<const char*>(y->data) + y->byte_offset;
      Ref<const HostTensor> expected_t =
          BFloat16IfDeclared(*std::move(expected), info_.output_elem, k);
      ArrayView want;
      want.dtype = expected_t->dtype();
      want.shape = expected_t->shape();
      want.data = expected_t->raw_data();
      Comparison c = CompareArrays(actual, want, tolerance_);
      if (!c.ok) {
        std::string name = static_cast<size_t>(k) < info_.outputs.size()
                               ? absl::StrCat(" '", info_.outputs[static_cast<size_t>(k)], "'")
                               : "";
        return Fail(absl::StrCat(prefix, "output ", k, name, " ", c.message));
      }
      export_outputs.push_back(ExportValue::Tensor(expected_t));
    }
    if (export_.has_value()) {
      absl::StatusOr<std::string> model =
          export_->Model(compiled->path, options_.export_host_kernels ? compiled->fake_kernels : "");
      if (!model.ok()) return Fail(StatusText(model.status()));
      if (absl::Status st = export_->Set(ds.index, *model, export_inputs, export_outputs, tolerance_); !st.ok()) {
        return Fail(StatusText(st));
      }
    }
    return std::nullopt;
  }

  // Sequence output k against its SequenceProto: the length, then each
  // element as a tensor output is compared.
  std::optional<Verdict> CompareSequence(KilnSession* session,
                                         const std::vector<Ref<const HostTensor>>& want_elems, int32_t k,
                                         const std::string& prefix) const {
    const std::string name = static_cast<size_t>(k) < info_.outputs.size()
                                 ? absl::StrCat(" '", info_.outputs[static_cast<size_t>(k)], "'")
                                 : "";
    const std::vector<Ref<const HostTensor>>* expected = &want_elems;
    int32_t count = 0;
    if (KilnStatus* st = kiln_session_get_output_sequence_length(session, k, &count); st != nullptr) {
      return Fail(absl::StrCat(prefix, "output ", k, name, ": ", KilnStatusText(st)));
    }
    if (static_cast<size_t>(count) != expected->size()) {
      return Fail(absl::StrCat(prefix, "output ", k, name, ": a sequence of ", count, " tensors, expected ",
                               expected->size()));
    }
    for (int32_t e = 0; e < count; ++e) {
      const DLTensor* y = nullptr;
      if (KilnStatus* st = kiln_session_get_output_sequence_element(session, k, e, &y); st != nullptr) {
        return Fail(absl::StrCat(prefix, "output ", k, name, ": ", KilnStatusText(st)));
      }
      ArrayView actual;
      actual.dtype = DataType(static_cast<DTypeCode>(y->dtype.code), y->dtype.bits, y->dtype.lanes);
      actual.shape.assign(y->shape, y->shape + y->ndim);
      actual.data = y->data == nullptr ? nullptr : static_cast<const char*>(y->data) + y->byte_offset;
      const HostTensor& w = *(*expected)[static_cast<size_t>(e)];
      ArrayView want;
      want.dtype = w.dtype();
      want.shape = w.shape();
      want.data = w.raw_data();
      Comparison c = CompareArrays(actual, want, tolerance_);
      if (!c.ok) return Fail(absl::StrCat(prefix, "output ", k, name, " element ", e, " ", c.message));
    }
    return std::nullopt;
  }

  const Case& case_;
  const Options& options_;
  Tolerance tolerance_;
  std::string temp_dir_;
  const Reporter& reporter_;
  bool allow_freeze_;
  ModelInfo info_;
  std::set<std::string> frozen_names_;
  std::deque<Compiled> compiled_;  // a deque: pointers stay valid as it grows
  std::optional<CaseExport> export_;  // --export_dir, while the case runs
};

}  // namespace

// The child process: runs the case, writes the result line, exits.
[[noreturn]] void ChildMain(const Case& c, const Options& options, const Tolerance& tolerance,
                            const std::string& temp_dir, int fd) {
  // The case's own process group (the parent kills the group on timeout,
  // with the compiler drivers the export starts).
  setpgid(0, 0);
  signal(SIGPIPE, SIG_IGN);
  struct rlimit core{};
  core.rlim_cur = 0;
  core.rlim_max = 0;
  setrlimit(RLIMIT_CORE, &core);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  if (options.memory_limit_mb > 0) {
    struct rlimit as{};
    as.rlim_cur = static_cast<rlim_t>(options.memory_limit_mb) * 1024 * 1024;
    as.rlim_max = as.rlim_cur;
    setrlimit(RLIMIT_AS, &as);
  }
#endif
  // A backstop if the parent is gone: the alarm kills the process.
  alarm(static_cast<unsigned>(options.timeout_s + 30));
  // The compiler's temporaries go into the case's directory (removed by the
  // parent even if this process crashes); its output into log.txt.
  setenv("TMPDIR", temp_dir.c_str(), 1);
  std::string log = temp_dir + "/log.txt";
  int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd >= 0) {
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    ::close(log_fd);
  }
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, STDIN_FILENO);
    ::close(null_fd);
  }

  Reporter reporter(fd);
  Clock::time_point start = Clock::now();
  CaseResult result;
  result.suite = c.suite;
  result.name = c.name;
  try {
    Verdict v;
    {
      CaseRunner runner(c, options, tolerance, temp_dir, reporter, options.freeze_inputs);
      v = runner.Run();
    }
    if (v.needs_frozen) {
      // Not a user's path, counted apart: would it pass with those inputs frozen?
      CaseRunner frozen(c, options, tolerance, temp_dir, reporter, /*allow_freeze=*/true);
      Verdict f = frozen.Run();
      result.passes_frozen = f.outcome == Outcome::kPass;
    }
    result.outcome = v.outcome;
    // Paths say nothing in the table: drop the case's and the temp folder.
    result.reason = absl::StrReplaceAll(v.reason, {{c.dir + "/model.onnx: ", ""},
                                                   {c.dir + "/", ""},
                                                   {temp_dir + "/", ""},
                                                   {temp_dir, "."}});
  } catch (const std::exception& e) {
    result.outcome = Outcome::kFail;
    result.reason = absl::StrCat("exception: ", e.what());
  } catch (...) {
    result.outcome = Outcome::kFail;
    result.reason = "exception";
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  reporter.Write(EncodeResult(result));
  std::fflush(stdout);
  std::fflush(stderr);
  // No static destructors, no atexit handlers (LLVM's, the runtime's): the
  // process is done.
  _exit(0);
}

}  // namespace kiln::onnx_conformance
