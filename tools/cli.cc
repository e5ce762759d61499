// File: tools/cli.cc
#include "tools/cli.h"

#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln::cli {

Args::Args(std::string command, std::vector<std::string> args, const char* help)
    : command_(std::move(command)), args_(std::move(args)), used_(args_.size(), false),
      help_text_(help) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i] == "--help" || args_[i] == "-h") {
      help_ = true;
      used_[i] = true;
    }
  }
}

std::string Args::Value(const char* name, const char* alias) {
  std::string value;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    const std::string& a = args_[i];
    for (const char* n : {name, alias}) {
      if (n == nullptr) continue;
      std::string eq = absl::StrCat(n, "=");
      if (a == n) {
        used_[i] = true;
        if (i + 1 >= args_.size()) {
          if (error_.empty()) error_ = absl::StrCat(n, " needs a value");
        } else {
          value = args_[++i];
          used_[i] = true;
        }
        break;
      }
      if (a.starts_with(eq)) {
        used_[i] = true;
        value = a.substr(eq.size());
        break;
      }
    }
  }
  return value;
}

std::vector<std::string> Args::Values(const char* name) {
  std::vector<std::string> out;
  std::string eq = absl::StrCat(name, "=");
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    if (args_[i] == name) {
      used_[i] = true;
      if (i + 1 >= args_.size()) {
        if (error_.empty()) error_ = absl::StrCat(name, " needs a value");
      } else {
        out.push_back(args_[++i]);
        used_[i] = true;
      }
    } else if (args_[i].starts_with(eq)) {
      used_[i] = true;
      out.push_back(args_[i].substr(eq.size()));
    }
  }
  return out;
}

bool Args::Flag(const char* name) {
  bool found = false;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (!used_[i] && args_[i] == name) {
      used_[i] = true;
      found = true;
    }
  }
  return found;
}

int Args::Int(const char* name, const char* alias, int fallback, int lo, int hi) {
  std::string v = Value(name, alias);
  if (v.empty()) return fallback;
  int n = 0;
  if (!absl::SimpleAtoi(v, &n) || n < lo || n > hi) {
    if (error_.empty()) {
      error_ = absl::StrCat(name, " must be an integer from ", lo, " to ", hi, ", got '", v, "'");
    }
    return fallback;
  }
  return n;
}

std::vector<std::string> Args::Positional() {
  std::vector<std::string> out;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (used_[i]) continue;
    if (args_[i].size() > 1 && args_[i][0] == '-') continue;  // reported by Finish
    used_[i] = true;
    out.push_back(args_[i]);
  }
  return out;
}

bool Args::Finish() {
  if (help_) {
    std::fputs(help_text_, stdout);
    exit_code_ = 0;
    return false;
  }
  if (error_.empty()) {
    for (size_t i = 0; i < args_.size(); ++i) {
      if (!used_[i]) {
        error_ = absl::StrCat("unknown option '", args_[i], "'");
        break;
      }
    }
  }
  if (!error_.empty()) {
    exit_code_ = Usage(error_);
    return false;
  }
  return true;
}

int Args::Usage(const std::string& message) {
  std::fprintf(stderr, "kiln %s: %s\n(kiln %s --help for usage)\n", command_.c_str(),
               message.c_str(), command_.c_str());
  exit_code_ = 2;
  return 2;
}

int Fail(const std::string& command, KilnStatus* status) {
  // The C API names its function first ("kiln_model_optimize: ..."); a
  // person at a terminal needs only the rest.
  std::string message = kiln_status_message(status);
  kiln_status_free(status);
  if (message.starts_with("kiln_")) {
    size_t end = message.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_");
    if (end != std::string::npos && message.compare(end, 2, ": ") == 0) {
      message = message.substr(end + 2);
    }
  }
  return Fail(command, message);
}

int Fail(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "kiln %s: error: %s\n", command.c_str(), message.c_str());
  return 1;
}

bool ParseInputShape(const std::string& spec, std::map<std::string, std::vector<int64_t>>* shapes,
                     std::string* error) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    *error = absl::StrCat("--input-shape must be name=d0,d1,..., got '", spec, "'");
    return false;
  }
  std::vector<int64_t> dims;
  for (absl::string_view d : absl::StrSplit(spec.substr(eq + 1), ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(d, &v) || v < 0) {
      *error = absl::StrCat("--input-shape ", spec, ": '", d, "' is not a dimension");
      return false;
    }
    dims.push_back(v);
  }
  (*shapes)[spec.substr(0, eq)] = dims;
  return true;
}

std::string TensorText(const DLTensor& t) {
  std::string s;
  if (t.dtype.code == 6) {  // DLPack's bool (Debian's dlpack.h predates kDLBool)
    s = "bool";
  } else {
    const char* base = t.dtype.code == kDLFloat ? "float" : t.dtype.code == kDLInt ? "int"
                       : t.dtype.code == kDLUInt ? "uint" : t.dtype.code == kDLBfloat ? "bfloat"
                       : "type";
    s = absl::StrCat(base, t.dtype.bits, t.dtype.lanes > 1 ? absl::StrCat("x", t.dtype.lanes) : "");
  }
  s += "[";
  for (int32_t d = 0; d < t.ndim; ++d) {
    absl::StrAppend(&s, d ? "," : "", t.shape[d] < 0 ? std::string("?") : absl::StrCat(t.shape[d]));
  }
  return s + "]";
}

ModelPtr LoadModel(const std::string& path,
                   const std::map<std::string, std::vector<int64_t>>& input_shapes,
                   KilnStatus** status) {
  std::vector<KilnInputShape> shapes;
  for (const auto& [name, dims] : input_shapes) {
    shapes.push_back({name.c_str(), static_cast<int32_t>(dims.size()), dims.data()});
  }
  KilnImportOptions options;
  kiln_import_options_init(&options);
  options.input_shapes = shapes.data();
  options.num_input_shapes = static_cast<int32_t>(shapes.size());
  KilnModel* model = nullptr;
  *status = kiln_model_load_file(path.c_str(), &options, &model);
  // What the import accepted but warns about (kiln_model_warnings), on stderr.
  const char* warnings = nullptr;
  if (*status == nullptr && model != nullptr) {
    kiln_status_free(kiln_model_warnings(model, &warnings));
  }
  if (warnings != nullptr) {
    for (absl::string_view line : absl::StrSplit(warnings, '\n', absl::SkipEmpty())) {
      std::fprintf(stderr, "kiln: warning: %s: %.*s\n", path.c_str(),
                   static_cast<int>(line.size()), line.data());
    }
  }
  return ModelPtr(model);
}

}  // namespace kiln::cli
