// File: tools/cmd_info.cc
//
// `kiln info MODEL.so`: what a compiled model is, through the runtime's C API
// alone (kiln_artifact_*): the target and producer, the executor, inputs and
// outputs, the kernels (from the executor plan, the GRAPH section's TVM
// graph JSON) and the sizes (file, weights, the session's arena).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "kiln/kiln_runtime.h"
#include "nlohmann/json.hpp"
#include "tools/json_text.h"
#include "tools/cli.h"

namespace kiln::cli {

const char kInfoHelp[] =
    "usage: kiln info MODEL.so [--json]\n"
    "\n"
    "Describes a compiled model (from kiln compile): the target it was compiled\n"
    "for, the producer, the executor, its inputs and outputs (names, dtypes,\n"
    "shapes), its kernels (how many calls each, the operators fused into it) and\n"
    "its sizes (file, weights, the intermediate-tensor arena a session allocates).\n"
    "The file is loaded and validated as kiln run would load it.\n"
    "  --json                  one JSON document on stdout instead of the text\n";

namespace {

struct Kernel {
  std::string name;
  int calls = 0;
  std::string ops;
};

int64_t DtypeBytes(const std::string& dltype) {
  if (dltype == "bool") return 1;
  size_t digits = dltype.find_first_of("0123456789");
  if (digits == std::string::npos) return 0;
  return std::max<int64_t>(1, std::stoll(dltype.substr(digits)) / 8);
}

nlohmann::json Tensors(const KilnArtifact* a, bool inputs, std::string* error) {
  nlohmann::json out = nlohmann::json::array();
  int32_t n = inputs ? kiln_artifact_num_inputs(a) : kiln_artifact_num_outputs(a);
  for (int32_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    DLTensor info;
    KilnStatus* st = inputs ? kiln_artifact_input_info(a, i, &name, &info)
                            : kiln_artifact_output_info(a, i, &name, &info);
    if (st != nullptr) {
      *error = StatusText(st);
      return out;
    }
    nlohmann::json shape = nlohmann::json::array();
    for (int32_t d = 0; d < info.ndim; ++d) shape.push_back(info.shape[d]);
    // A sequence input or output (an ONNX sequence): its elements' type.
    const bool seq = inputs ? kiln_artifact_input_is_sequence(a, i) != 0
                            : kiln_artifact_output_is_sequence(a, i) != 0;
    // An optional (an ONNX optional) of a tensor or of a sequence.
    const bool opt = inputs ? kiln_artifact_input_is_optional(a, i) != 0
                            : kiln_artifact_output_is_optional(a, i) != 0;
    const std::string text = seq ? absl::StrCat("sequence of ", TensorText(info)) : TensorText(info);
    out.push_back({{"name", name != nullptr ? name : ""},
                   {"dtype", DtypeText(info.dtype)},
                   {"shape", shape},
                   {"sequence", seq},
                   {"optional", opt},
                   {"text", opt ? absl::StrCat("optional of ", text) : text}});
  }
  return out;
}

}  // namespace

int Info(const std::vector<std::string>& args) {
  Parser p("info", kInfoHelp);
  bool json = false;
  std::vector<std::string> files;
  p.Flag("--json", &json);
  if (!p.Parse(args, &files)) return p.exit_code();
  if (files.size() != 1) return p.Usage("one MODEL.so expected");
  const std::string& path = files[0];
  KilnArtifact* artifact = nullptr;
  if (KilnStatus* st = kiln_artifact_load(path.c_str(), &artifact)) return Fail("info", st);
  std::unique_ptr<KilnArtifact, void (*)(KilnArtifact*)> owned(artifact, kiln_artifact_release);

  std::string error;
  nlohmann::json inputs = Tensors(artifact, true, &error);
  nlohmann::json outputs = Tensors(artifact, false, &error);
  if (!error.empty()) return Fail("info", error);

  // The executor plan: kernels (tvm_op nodes by func_name) and weights (the
  // null nodes that are not inputs).
  // A VM artifact has no graph (kiln/runtime.h): its kernels are called by
  // its program, which the C API does not describe.
  const bool vm = kiln_artifact_graph_json(artifact)[0] == '\0';
  nlohmann::json graph = nlohmann::json::object();
  if (!vm) {
    graph = nlohmann::json::parse(kiln_artifact_graph_json(artifact), nullptr,
                                  /*allow_exceptions=*/false);
    if (graph.is_discarded() || !graph.is_object()) {
      return Fail("info", absl::StrCat(path, ": the executor plan (GRAPH section) is not JSON"));
    }
  }
  std::vector<Kernel> kernels;
  std::map<std::string, size_t> kernel_index;
  int num_calls = 0, num_params = 0;
  int64_t param_bytes = 0;
  std::vector<std::string> input_names;
  for (const auto& in : inputs) input_names.push_back(in["name"]);
  if (!vm) try {
    const auto& nodes = graph.at("nodes");
    const auto& row_ptr = graph.at("node_row_ptr");
    const auto& shapes = graph.at("attrs").at("shape").at(1);
    const auto& dltypes = graph.at("attrs").at("dltype").at(1);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const auto& node = nodes[i];
      const std::string op = node.at("op");
      if (op == "tvm_op") {
        ++num_calls;
        const auto& attrs = node.at("attrs");
        std::string fn = attrs.at("func_name");
        auto [it, fresh] = kernel_index.emplace(fn, kernels.size());
        if (fresh) {
          kernels.push_back({fn, 0, attrs.contains("op_names") ? attrs["op_names"].get<std::string>()
                                                               : std::string()});
        }
        ++kernels[it->second].calls;
      } else if (op == "null") {
        const std::string name = node.at("name");
        if (std::find(input_names.begin(), input_names.end(), name) != input_names.end()) continue;
        ++num_params;
        size_t entry = row_ptr.at(i).get<size_t>();
        int64_t elements = 1;
        for (const auto& d : shapes.at(entry)) elements *= d.get<int64_t>();
        param_bytes += elements * DtypeBytes(dltypes.at(entry).get<std::string>());
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Fail("info", absl::StrCat(path, ": unexpected executor plan: ", e.what()));
  }
  uint64_t arena = 0, naive = 0;
  kiln_artifact_memory_stats(artifact, &arena, &naive);
  std::error_code ec;
  uint64_t file_bytes = std::filesystem::file_size(path, ec);
  if (ec) file_bytes = 0;

  if (json) {
    nlohmann::json ks = nlohmann::json::array();
    for (const Kernel& k : kernels) {
      std::vector<std::string> ops;
      if (!k.ops.empty()) ops = absl::StrSplit(k.ops, ',');
      ks.push_back({{"name", k.name}, {"calls", k.calls}, {"ops", ops}});
    }
    for (auto& t : inputs) t.erase("text");
    for (auto& t : outputs) t.erase("text");
    nlohmann::json device_code = nullptr;
    if (const char* dc = kiln_artifact_device_code_json(artifact); dc[0] != '\0') {
      device_code = nlohmann::json::parse(dc, nullptr, /*allow_exceptions=*/false);
    }
    nlohmann::json doc = {
        {"path", path},
        {"device_code", device_code},
        {"producer", kiln_artifact_producer(artifact)},
        {"target", kiln_artifact_target(artifact)},
        {"executor", vm ? "vm" : "graph"},
        {"num_nodes", kiln_artifact_num_nodes(artifact)},
        {"num_kernel_calls", num_calls},
        {"inputs", inputs},
        {"outputs", outputs},
        {"kernels", ks},
        {"sizes",
         {{"file_bytes", file_bytes},
          {"num_weights", num_params},
          {"weight_bytes", param_bytes},
          {"arena_bytes", arena},
          {"naive_arena_bytes", naive}}}};
    std::printf("%s\n", JsonText(doc).c_str());
    return 0;
  }
  std::printf("%s: compiled by %s\n", path.c_str(), kiln_artifact_producer(artifact));
  std::printf("  target:   %s\n", kiln_artifact_target(artifact));
  // A GPU artifact: its device code (kiln_artifact_device_code_json).
  nlohmann::json dc = nlohmann::json::parse(kiln_artifact_device_code_json(artifact), nullptr,
                                            /*allow_exceptions=*/false);
  if (dc.is_object()) {
    std::string images = absl::StrCat("PTX ", dc.value("ptx_arch", ""), " (",
                                      dc.value("ptx_bytes", 0), " bytes)");
    if (dc.contains("cubin_arch")) {
      absl::StrAppend(&images, ", cubin ", dc.value("cubin_arch", ""), " (", dc.value("cubin_bytes", 0),
                      " bytes)");
    }
    if (dc.contains("source_bytes")) {
      absl::StrAppend(&images, ", CUDA C (", dc.value("source_bytes", 0), " bytes)");
    }
    std::printf("  device:   cuda (runs with --device cuda:N): %s\n", images.c_str());
    for (const auto& k : dc["kernels"]) {
      std::vector<std::string> params;
      for (const auto& p : k["params"]) params.push_back(p.get<std::string>());
      // A symbolic launch: the grid from the arguments' shapes, which the
      // kernel also takes as `long long` shape variables.
      const int vars = k.value("shape_vars", 0);
      for (int v = 0; v < vars; ++v) params.push_back("long long");
      const std::string grid =
          vars > 0 ? std::string("grid from the shapes")
                   : absl::StrCat("(", k["grid"][0].get<int>(), ", ", k["grid"][1].get<int>(), ", ",
                                  k["grid"][2].get<int>(), ")");
      std::printf("    %s<<<%s, (%d, %d, %d)>>>(%s)\n", k.value("name", "").c_str(), grid.c_str(),
                  k["block"][0].get<int>(), k["block"][1].get<int>(), k["block"][2].get<int>(),
                  absl::StrJoin(params, ", ").c_str());
    }
  }
  if (vm) {
    std::printf("  executor: VM (bytecode; dims shown as -1 take any size the model allows)\n");
  } else {
    std::printf(
        "  executor: graph executor (TVM graph JSON): %d nodes, %d kernel calls, %zu kernels\n",
        kiln_artifact_num_nodes(artifact), num_calls, kernels.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::printf("  input %zu '%s': %s\n", i, inputs[i]["name"].get<std::string>().c_str(),
                inputs[i]["text"].get<std::string>().c_str());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::printf("  output %zu '%s': %s\n", i, outputs[i]["name"].get<std::string>().c_str(),
                outputs[i]["text"].get<std::string>().c_str());
  }
  std::printf("  sizes:    file %llu bytes; %d weights, %lld bytes; arena %llu bytes (without "
              "sharing %llu)\n",
              static_cast<unsigned long long>(file_bytes), num_params,
              static_cast<long long>(param_bytes), static_cast<unsigned long long>(arena),
              static_cast<unsigned long long>(naive));
  std::printf("  kernels:\n");
  size_t width = 0;
  for (const Kernel& k : kernels) width = std::max(width, k.name.size());
  for (const Kernel& k : kernels) {
    std::printf("    %-*s  %3d call%s  %s\n", static_cast<int>(width), k.name.c_str(), k.calls,
                k.calls == 1 ? " " : "s", k.ops.c_str());
  }
  return 0;
}

}  // namespace kiln::cli
