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

// Splits `s` at top-level commas (outside (), [] and string literals).
std::vector<std::string> SplitTopLevel(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      cur += c;
      if (c == '\\' && i + 1 < s.size()) {
        cur += s[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(std::string(absl::StripAsciiWhitespace(cur)));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!absl::StripAsciiWhitespace(cur).empty()) {
    out.push_back(std::string(absl::StripAsciiWhitespace(cur)));
  }
  return out;
}

// The dims of "Tensor[(N, 3, 224), float32]" as written; {} for a scalar
// dtype or a type that is not a tensor.
std::vector<std::string> TypeDims(const std::string& type) {
  if (!type.starts_with("Tensor[(")) return {};
  size_t close = type.find(')');
  if (close == std::string::npos) return {};
  std::string inner = type.substr(8, close - 8);
  std::vector<std::string> dims;
  for (std::string& d : SplitTopLevel(inner)) {
    if (!d.empty()) dims.push_back(std::move(d));
  }
  return dims;
}

// The strings of a list attribute value ["a", "b\"c"].
std::vector<std::string> StringList(const std::string& value) {
  std::vector<std::string> out;
  std::string inner = value.size() >= 2 ? value.substr(1, value.size() - 2) : "";
  for (const std::string& item : SplitTopLevel(inner)) {
    if (item.size() < 2 || item.front() != '"' || item.back() != '"') return {};
    std::string s;
    for (size_t i = 1; i + 1 < item.size(); ++i) {
      if (item[i] == '\\' && i + 2 < item.size()) {
        char e = item[++i];
        s += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        s += item[i];
      }
    }
    out.push_back(std::move(s));
  }
  return out;
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

void ParseMainHeader(const std::string& text, std::vector<std::vector<std::string>>* param_dims,
                     std::vector<std::string>* output_names) {
  param_dims->clear();
  output_names->clear();
  const std::string key = "def @main(";
  size_t at = text.starts_with(key) ? 0 : text.find("\n" + key);
  if (at == std::string::npos) return;
  size_t begin = text.find('(', at) + 1;
  // The matching ')': strings and nesting skipped.
  int depth = 1;
  bool in_string = false;
  size_t end = begin;
  for (; end < text.size() && depth > 0; ++end) {
    char c = text[end];
    if (in_string) {
      if (c == '\\') {
        ++end;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    }
  }
  if (depth != 0) return;
  for (const std::string& item : SplitTopLevel(text.substr(begin, end - 1 - begin))) {
    if (item.starts_with("%")) {
      size_t colon = item.find(": ");
      param_dims->push_back(colon == std::string::npos ? std::vector<std::string>{}
                                                        : TypeDims(item.substr(colon + 2)));
    } else if (item.starts_with("output_names=")) {
      *output_names = StringList(item.substr(13));
    }
  }
}

std::vector<std::vector<std::string>> ParseMainResult(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  const std::string key = "def @main(";
  size_t at = text.starts_with(key) ? 0 : text.find("\n" + key);
  if (at == std::string::npos) return out;
  size_t close = text.find("\n}", at);  // main's body ends at the first '}' in column 0
  if (close == std::string::npos) return out;
  size_t line = text.rfind('\n', close - 1);
  if (line == std::string::npos || line < at) return out;
  const std::string last = text.substr(line + 1, close - line - 1);
  size_t ty = last.rfind("/* ty=");
  size_t end = last.rfind(" */");
  if (ty == std::string::npos || end == std::string::npos || end < ty) return out;
  // A tensor type, or a tuple of them (nested tuples flattened, as the
  // outputs are).
  std::vector<std::string> pending = {last.substr(ty + 6, end - ty - 6)};
  while (!pending.empty()) {
    std::string t = pending.front();
    pending.erase(pending.begin());
    if (t.starts_with("(") && t.ends_with(")")) {
      std::vector<std::string> fields = SplitTopLevel(t.substr(1, t.size() - 2));
      pending.insert(pending.begin(), fields.begin(), fields.end());
    } else {
      out.push_back(TypeDims(t));
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
  bool symbolic = false, symbolic_out = false;
  for (int32_t i = 0; i < num_inputs; ++i) {
    const char* name = nullptr;
    DLTensor info;
    if ((st = kiln_model_input_info(model, i, &name, &info)) != nullptr) {
      *error = StatusText(st);
      return false;
    }
    TensorSignature t{name != nullptr ? name : "", DtypeText(info.dtype), {}};
    for (int32_t d = 0; d < info.ndim; ++d) {
      symbolic = symbolic || info.shape[d] < 0;
      t.dims.push_back(info.shape[d] < 0 ? "?" : absl::StrCat(info.shape[d]));
    }
    sig->inputs.push_back(std::move(t));
  }
  for (int32_t i = 0; i < num_outputs; ++i) {
    DLTensor info;
    if ((st = kiln_model_output_info(model, i, &info)) != nullptr) {
      *error = StatusText(st);
      return false;
    }
    TensorSignature t{absl::StrCat("output", i), DtypeText(info.dtype), {}};
    for (int32_t d = 0; d < info.ndim; ++d) {
      symbolic_out = symbolic_out || info.shape[d] < 0;
      t.dims.push_back(info.shape[d] < 0 ? "?" : absl::StrCat(info.shape[d]));
    }
    sig->outputs.push_back(std::move(t));
  }
  // Dim names and output names from main's header in the text IR.
  char* text = nullptr;
  // With types only when an output dim is symbolic: the result's type then
  // names it (the header is the same either way).
  if ((st = kiln_model_print(model, symbolic_out ? 1 : 0, &text)) != nullptr) {
    *error = StatusText(st);
    return false;
  }
  std::string printed = text != nullptr ? text : "";
  kiln_free(text);
  std::vector<std::vector<std::string>> param_dims;
  std::vector<std::string> names;
  ParseMainHeader(printed, &param_dims, &names);
  if (symbolic && param_dims.size() == sig->inputs.size()) {
    for (size_t i = 0; i < sig->inputs.size(); ++i) {
      std::vector<std::string>& dims = sig->inputs[i].dims;
      if (param_dims[i].size() != dims.size()) continue;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] == "?" && IsName(param_dims[i][d])) dims[d] = param_dims[i][d];
      }
    }
  }
  if (symbolic_out) {
    std::vector<std::vector<std::string>> result = ParseMainResult(printed);
    if (result.size() == sig->outputs.size()) {
      for (size_t i = 0; i < result.size(); ++i) {
        std::vector<std::string>& dims = sig->outputs[i].dims;
        if (result[i].size() != dims.size()) continue;
        for (size_t d = 0; d < dims.size(); ++d) {
          if (dims[d] == "?" && IsName(result[i][d])) dims[d] = result[i][d];
        }
      }
    }
  }
  // The artifact's rule (docs/artifact.md, META): distinct, non-empty names,
  // one per output, else output0, output1, ...
  bool usable = names.size() == sig->outputs.size();
  for (size_t i = 0; usable && i < names.size(); ++i) {
    usable = !names[i].empty() && std::count(names.begin(), names.end(), names[i]) == 1;
  }
  if (usable) {
    for (size_t i = 0; i < names.size(); ++i) sig->outputs[i].name = names[i];
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
