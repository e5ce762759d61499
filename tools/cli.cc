// File: tools/cli.cc
#include "tools/cli.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kiln::cli {

Parser::Parser(std::string command, const char* help)
    : command_(std::move(command)), help_text_(help), app_(std::make_unique<CLI::App>()) {
  app_->set_help_flag();  // the hand-written help text instead of CLI11's
  app_->add_flag("-h,--help", help_);
  // Unknown options and positional arguments are collected, then told apart
  // (an unknown option is named in the error).
  app_->allow_extras();
}

Parser::~Parser() = default;

void Parser::Text(const std::string& names, std::string* out) {
  app_->add_option(names, *out)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

void Parser::Texts(const std::string& names, std::vector<std::string>* out) {
  app_->add_option(names, *out);
}

void Parser::Flag(const std::string& names, bool* out) {
  app_->add_flag(names, *out)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

void Parser::Int(const std::string& names, int* out, int lo, int hi) {
  std::string name = names.substr(names.rfind(',') + 1);  // the long spelling
  CLI::Option* opt = app_->add_option(names, *out);
  opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  opt->check(CLI::Validator(
      [this, name, lo, hi](std::string& value) -> std::string {
        int n = 0;
        if (absl::SimpleAtoi(value, &n) && n >= lo && n <= hi) return "";
        if (error_.empty()) {
          error_ = absl::StrCat(name, " must be an integer from ", lo, " to ", hi, ", got '",
                                value, "'");
        }
        return error_;
      },
      absl::StrCat("INT in [", lo, ", ", hi, "]")));
}

bool Parser::Parse(const std::vector<std::string>& args, std::vector<std::string>* positional) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11's order
  try {
    app_->parse(reversed);
  } catch (const CLI::ArgumentMismatch& e) {
    // "--output: 1 required TEXT missing" -> which option lacks its value.
    std::string what = e.what();
    std::string name = what.substr(0, what.find(':'));
    exit_code_ = Usage(name.starts_with("-") ? absl::StrCat(name, " needs a value") : what);
    return false;
  } catch (const CLI::ParseError& e) {
    exit_code_ = Usage(error_.empty() ? std::string(e.what()) : error_);
    return false;
  } catch (const std::exception& e) {  // anything else CLI11 may throw: still no abort
    exit_code_ = Usage(e.what());
    return false;
  }
  if (help_) {
    std::fputs(help_text_, stdout);
    exit_code_ = 0;
    return false;
  }
  positional->clear();
  bool only_positional = false;  // after "--"
  for (const std::string& a : app_->remaining()) {
    if (a == "--" && !only_positional) {
      only_positional = true;
      continue;
    }
    if (!only_positional && a.size() > 1 && a[0] == '-') {
      exit_code_ = Usage(absl::StrCat("unknown option '", a, "'"));
      return false;
    }
    positional->push_back(a);
  }
  return true;
}

int Parser::Usage(const std::string& message) {
  std::fprintf(stderr, "kiln %s: %s\n(kiln %s --help for usage)\n", command_.c_str(),
               message.c_str(), command_.c_str());
  exit_code_ = 2;
  return 2;
}

std::string StatusText(KilnStatus* status) {
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
  return message;
}

int Fail(const std::string& command, KilnStatus* status) {
  return Fail(command, StatusText(status));
}

int Fail(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "kiln %s: error: %s\n", command.c_str(), message.c_str());
  return 1;
}

bool ParseInputShape(const std::string& spec, std::map<std::string, std::vector<int64_t>>* shapes,
                     std::string* error) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    *error = absl::StrCat("--input-shape must be NAME=D0,D1,... (an input) or DIM=SIZE (a "
                          "symbolic dim), got '",
                          spec, "'");
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

std::string TakeText(char* text) {
  std::string s = text != nullptr ? text : "";
  kiln_free(text);
  return s;
}

bool WriteFile(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    *error = absl::StrCat("cannot write '", path, "'");
    return false;
  }
  return true;
}

std::string DtypeText(const DLDataType& t) {
  if (t.code == 6) return "bool";  // DLPack's bool (Debian's dlpack.h predates kDLBool)
  const char* base = t.code == kDLFloat ? "float" : t.code == kDLInt ? "int"
                     : t.code == kDLUInt ? "uint" : t.code == kDLBfloat ? "bfloat"
                     : "type";
  return absl::StrCat(base, t.bits, t.lanes > 1 ? absl::StrCat("x", t.lanes) : "");
}

std::string TensorText(const DLTensor& t) {
  std::string s = DtypeText(t.dtype) + "[";
  for (int32_t d = 0; d < t.ndim; ++d) {
    absl::StrAppend(&s, d ? "," : "", t.shape[d] < 0 ? std::string("?") : absl::StrCat(t.shape[d]));
  }
  return s + "]";
}

ModelPtr LoadModel(const std::string& path,
                   const std::map<std::string, std::vector<int64_t>>& input_shapes,
                   KilnStatus** status, bool warn) {
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
  if (warn && *status == nullptr && model != nullptr) {
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

std::vector<CommandHelp> AllHelp() {
  return {{"compile", kCompileHelp}, {"run", kRunHelp},     {"info", kInfoHelp},
          {"bench", kBenchHelp},     {"debug", kDebugHelp}, {"check", kCheckHelp},
          {"print", kPrintHelp},     {"opt", kOptHelp},     {"lower", kLowerHelp},
          {"graph", kGraphHelp},     {"eval", kEvalHelp}};
}

}  // namespace kiln::cli
