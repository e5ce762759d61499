// File: tools/signature.cc
#include "tools/signature.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln::cli {
namespace {

bool IsName(const std::string& d) {
  if (d.empty() || !(std::isalpha(static_cast<unsigned char>(d[0])) || d[0] == '_')) return false;
  return std::all_of(d.begin(), d.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string JoinDims(const std::vector<std::string>& dims) { return absl::StrJoin(dims, ","); }

}  // namespace

bool TensorSignature::is_static() const {
  return std::all_of(dims.begin(), dims.end(), [](const std::string& d) {
    return !d.empty() && std::isdigit(static_cast<unsigned char>(d[0]));
  });
}

std::string TensorSignature::Text() const { return absl::StrCat(dtype, "[", JoinDims(dims), "]"); }

std::vector<std::string> ModelSignature::SymbolicDims() const {
  std::vector<std::string> out;
  for (const TensorSignature& t : inputs) {
    for (const std::string& d : t.dims) {
      if (IsName(d) && std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    }
  }
  return out;
}

bool ReadSignature(const KilnModel* model, ModelSignature* sig, std::string* error) {
  *sig = ModelSignature();
  int32_t num_inputs = 0, num_outputs = 0;
  KilnStatus* st = kiln_model_num_inputs(model, &num_inputs);
  if (st == nullptr) st = kiln_model_num_outputs(model, &num_outputs);
  if (st != nullptr) {
    *error = StatusText(st);
    return false;
  }
  // A dim that is not static by its name ("N"), "?" when it has none (an
  // expression of named dims reads as unknown too).
  auto dims_of = [&](bool output, int32_t index, const DLTensor& info,
                     std::vector<std::string>* dims) -> bool {
    for (int32_t d = 0; d < info.ndim; ++d) {
      if (info.shape[d] >= 0) {
        dims->push_back(absl::StrCat(info.shape[d]));
        continue;
      }
      const char* text = nullptr;
      st = output ? kiln_model_output_dim_name(model, index, d, &text)
                  : kiln_model_input_dim_name(model, index, d, &text);
      if (st != nullptr) {
        *error = StatusText(st);
        return false;
      }
      std::string name = text != nullptr ? text : "";
      dims->push_back(IsName(name) ? name : "?");
    }
    return true;
  };
  for (int32_t i = 0; i < num_inputs; ++i) {
    const char* name = nullptr;
    DLTensor info;
    if ((st = kiln_model_input_info(model, i, &name, &info)) != nullptr) {
      *error = StatusText(st);
      return false;
    }
    TensorSignature t{name != nullptr ? name : "", DtypeText(info.dtype), {}};
    if (!dims_of(false, i, info, &t.dims)) return false;
    sig->inputs.push_back(std::move(t));
  }
  for (int32_t i = 0; i < num_outputs; ++i) {
    DLTensor info;
    const char* name = nullptr;
    if ((st = kiln_model_output_info(model, i, &info)) != nullptr ||
        (st = kiln_model_output_name(model, i, &name)) != nullptr) {
      *error = StatusText(st);
      return false;
    }
    TensorSignature t{name != nullptr ? name : absl::StrCat("output", i), DtypeText(info.dtype),
                      {}};
    if (!dims_of(true, i, info, &t.dims)) return false;
    sig->outputs.push_back(std::move(t));
  }
  return true;
}

std::string SymbolicDimError(const ModelSignature& sig, const std::string& model_path) {
  const bool onnx = model_path.ends_with(".onnx");
  for (const TensorSignature& t : sig.inputs) {
    for (size_t axis = 0; axis < t.dims.size(); ++axis) {
      const std::string& d = t.dims[axis];
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) continue;
      std::vector<std::string> example = t.dims;
      for (std::string& e : example) {
        if (e.empty() || !std::isdigit(static_cast<unsigned char>(e[0]))) e = "SIZE";
      }
      std::string what = IsName(d) ? absl::StrCat("the symbolic dim '", d, "'")
                                   : std::string("a dim of unknown size");
      std::string head = absl::StrCat("input '", t.name, "' has ", what, " (axis ", axis, " of ",
                                      t.Text(), ")");
      if (!onnx) {
        return absl::StrCat(head, "; compiling needs static shapes: write the size in the type of "
                                  "main's parameter %",
                            t.name, " (--input-shape applies to ONNX models)");
      }
      if (IsName(d)) {
        return absl::StrCat(head, "; give its size with --input-shape ", d,
                            "=SIZE (or --input-shape ", t.name, "=", JoinDims(example), ")");
      }
      return absl::StrCat(head, "; give the input's shape with --input-shape ", t.name, "=",
                          JoinDims(example));
    }
  }
  return "";
}

ModelPtr LoadModelBound(const std::string& path,
                        const std::map<std::string, std::vector<int64_t>>& given,
                        KilnStatus** status, std::string* usage_error) {
  usage_error->clear();
  if (!given.empty() && !path.ends_with(".onnx")) {
    std::fprintf(stderr,
                 "kiln: warning: %s: --input-shape applies to ONNX models; a text-IR model's "
                 "shapes are the types of main's parameters\n",
                 path.c_str());
  }
  ModelPtr m = LoadModel(path, given, status);
  // Every name an input (or nothing given): done. Otherwise the importer
  // says a name is not a graph input: it may be a dim name.
  if (*status == nullptr || given.empty()) return m;
  std::string message = kiln_status_message(*status);
  if (message.find("which is not a graph input") == std::string::npos) return m;
  KilnStatus* st = nullptr;
  ModelPtr unbound = LoadModel(path, {}, &st, /*warn=*/false);
  if (st != nullptr) {
    kiln_status_free(st);
    return m;  // the first error stands
  }
  ModelSignature sig;
  std::string error;
  if (!ReadSignature(unbound.get(), &sig, &error)) return m;
  kiln_status_free(*status);
  *status = nullptr;
  std::map<std::string, std::vector<int64_t>> shapes;
  std::map<std::string, int64_t> dims;
  const std::vector<std::string> symbolic = sig.SymbolicDims();
  for (const auto& [name, value] : given) {
    bool is_input = std::any_of(sig.inputs.begin(), sig.inputs.end(),
                                [&](const TensorSignature& t) { return t.name == name; });
    if (is_input) {
      shapes[name] = value;
    } else if (std::find(symbolic.begin(), symbolic.end(), name) != symbolic.end()) {
      if (value.size() != 1) {
        *usage_error = absl::StrCat("--input-shape ", name, "=...: '", name,
                                    "' is a symbolic dim and takes one size, got ", value.size());
        return nullptr;
      }
      dims[name] = value[0];
    } else {
      std::vector<std::string> inputs;
      for (const TensorSignature& t : sig.inputs) inputs.push_back(t.name);
      *usage_error = absl::StrCat(
          "--input-shape names '", name, "', which is neither an input nor a symbolic dim of ",
          path, " (inputs: ", inputs.empty() ? "none" : absl::StrJoin(inputs, ", "),
          "; symbolic dims: ", symbolic.empty() ? "none" : absl::StrJoin(symbolic, ", "), ")");
      return nullptr;
    }
  }
  for (const TensorSignature& t : sig.inputs) {
    if (shapes.contains(t.name) || t.is_static()) continue;
    std::vector<int64_t> shape;
    bool known = true;
    for (const std::string& d : t.dims) {
      int64_t v = 0;
      if (auto it = dims.find(d); it != dims.end()) {
        shape.push_back(it->second);
      } else if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) {
        v = std::stoll(d);
        shape.push_back(v);
      } else {
        known = false;  // a dim not given: the compile names it
      }
    }
    if (known) shapes[t.name] = shape;
  }
  return LoadModel(path, shapes, status);
}

}  // namespace kiln::cli
