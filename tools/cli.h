// File: tools/cli.h
//
// Shared pieces of the `kiln` command line: the argument reader, error
// reporting and model loading used by every subcommand (cmd_model.cc:
// print/check/opt/lower/compile/graph; cmd_runtime.cc: run/bench/debug).
// The tool sits on the C API (kiln/kiln.h) alone, as DESIGN.md §2 asks.
//
//   Args a("compile", args, kCompileHelp);
//   std::string out = a.Value("-o", "--output");
//   ...
//   if (!a.Finish()) return a.exit_code();   // unknown options, --help
//
// Errors go to stderr as "kiln <command>: ..." with exit status 1 (a failed
// operation) or 2 (bad usage); nothing aborts.
#ifndef KILN_TOOLS_CLI_H_
#define KILN_TOOLS_CLI_H_

#include <map>
#include <string>
#include <vector>

#include <memory>

#include "kiln/kiln.h"

namespace kiln::cli {

// Reads one subcommand's arguments. Options may be given as `--name value`
// or `--name=value`; every option must be consumed before Finish().
class Args {
 public:
  Args(std::string command, std::vector<std::string> args, const char* help);

  // True when the command is asked for its help (printed by Finish()).
  bool help() const { return help_; }
  // The value of an option (the last one given), or "" when absent. `alias`
  // is a second spelling ("-o" for "--output"), or nullptr.
  std::string Value(const char* name, const char* alias = nullptr);
  // Every value of a repeatable option, in order.
  std::vector<std::string> Values(const char* name);
  // True when the flag is present.
  bool Flag(const char* name);
  // An integer option in [lo, hi]; `fallback` when absent. A bad value is
  // remembered as a usage error.
  int Int(const char* name, const char* alias, int fallback, int lo, int hi);
  // The positional arguments (after options are consumed).
  std::vector<std::string> Positional();

  // Prints help or the first usage error; false when the command must stop
  // (then exit_code() is its status).
  bool Finish();
  int exit_code() const { return exit_code_; }
  // Reports a usage error (exit status 2) now.
  int Usage(const std::string& message);

 private:
  std::string command_;
  std::vector<std::string> args_;
  std::vector<bool> used_;
  const char* help_text_;
  bool help_ = false;
  std::string error_;
  int exit_code_ = 0;
};

// Prints "kiln <command>: error: <message>" to stderr, frees `status`;
// returns 1.
int Fail(const std::string& command, KilnStatus* status);
// The same for a message of the tool's own.
int Fail(const std::string& command, const std::string& message);

struct ModelDeleter {
  void operator()(KilnModel* m) const { kiln_model_release(m); }
};
using ModelPtr = std::unique_ptr<KilnModel, ModelDeleter>;

// `--input-shape` values ("name=1,3,224,224"); false with `error` set on a
// malformed one.
bool ParseInputShape(const std::string& spec, std::map<std::string, std::vector<int64_t>>* shapes,
                     std::string* error);

// A model: ONNX (by the .onnx extension; `input_shapes` bind its symbolic
// dims) or the text IR. On failure: NULL, and the status in `*status`. What
// the import warns about (kiln_model_warnings) goes to stderr as
// "kiln: warning: PATH: ...".
ModelPtr LoadModel(const std::string& path,
                   const std::map<std::string, std::vector<int64_t>>& input_shapes,
                   KilnStatus** status);

// "float32[1,3,224,224]" ("?" for a dim that is not static: -1).
std::string TensorText(const DLTensor& t);

// The subcommands (their help texts live beside them).
int Print(const std::vector<std::string>& args);
int Check(const std::vector<std::string>& args);
int Opt(const std::vector<std::string>& args);
int Lower(const std::vector<std::string>& args);
int Compile(const std::vector<std::string>& args);
int Graph(const std::vector<std::string>& args);
int Run(const std::vector<std::string>& args);
int Bench(const std::vector<std::string>& args);
int Debug(const std::vector<std::string>& args);

}  // namespace kiln::cli

#endif  // KILN_TOOLS_CLI_H_
