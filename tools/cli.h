// File: tools/cli.h
//
// Shared pieces of the `kiln` command line: the argument parser (CLI11 under
// a small wrapper), error reporting, model loading and the model's signature
// used by every subcommand (cmd_model.cc: print/check/opt/lower/compile/graph;
// cmd_runtime.cc: run/bench/debug; cmd_info.cc: info). The tool sits on the C
// API (kiln/kiln.h) alone, as DESIGN.md §2 asks.
//
//   Parser p("compile", kCompileHelp);
//   std::string out;
//   p.Text("-o,--output", &out);
//   int level = 3;
//   p.Int("-O,--opt-level", &level, 0, 3);
//   std::vector<std::string> files;
//   if (!p.Parse(args, &files)) return p.exit_code();   // bad usage, --help
//
// Errors go to stderr as "kiln <command>: ..." with exit status 1 (a failed
// operation) or 2 (bad usage); nothing aborts.
#ifndef KILN_TOOLS_CLI_H_
#define KILN_TOOLS_CLI_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace CLI {
class App;
}  // namespace CLI

namespace kiln::cli {

// One subcommand's options, declared first, then parsed at once. Options may
// be given as `--name value` or `--name=value` (short ones also as `-O3`); a
// value option given twice keeps the last value. Help (-h, --help) prints the
// command's hand-written help text (the text docs/cli.md is generated from).
class Parser {
 public:
  Parser(std::string command, const char* help);
  ~Parser();
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  // `names` is CLI11's spelling: "-o,--output", "--target".
  void Text(const std::string& names, std::string* out);
  void Texts(const std::string& names, std::vector<std::string>* out);  // repeatable
  void Flag(const std::string& names, bool* out);
  // An integer in [lo, hi]; anything else is a usage error naming the option.
  void Int(const std::string& names, int* out, int lo, int hi);

  // Parses `args`; the positional arguments go to `positional`. False when
  // the command must stop: help was printed (exit_code() 0) or a usage error
  // was reported (exit_code() 2).
  bool Parse(const std::vector<std::string>& args, std::vector<std::string>* positional);
  int exit_code() const { return exit_code_; }
  // Reports a usage error (exit status 2) now; returns 2.
  int Usage(const std::string& message);

 private:
  std::string command_;
  const char* help_text_;
  std::unique_ptr<CLI::App> app_;
  bool help_ = false;
  std::string error_;  // set by Int's check (CLI11's own message is less clear)
  int exit_code_ = 0;
};

// Prints "kiln <command>: error: <message>" to stderr, frees `status`;
// returns 1.
int Fail(const std::string& command, KilnStatus* status);
// The same for a message of the tool's own.
int Fail(const std::string& command, const std::string& message);
// A status's message without the C function's name ("kiln_model_optimize: ").
std::string StatusText(KilnStatus* status);

struct ModelDeleter {
  void operator()(KilnModel* m) const { kiln_model_release(m); }
};
using ModelPtr = std::unique_ptr<KilnModel, ModelDeleter>;

// `--input-shape` values ("name=1,3,224,224", or a dim name: "N=2"); false
// with `error` set on a malformed one.
bool ParseInputShape(const std::string& spec, std::map<std::string, std::vector<int64_t>>* shapes,
                     std::string* error);

// A model: ONNX (by the .onnx extension; `input_shapes` bind its symbolic
// dims) or the text IR. On failure: NULL, and the status in `*status`. What
// the import warns about (kiln_model_warnings) goes to stderr as
// "kiln: warning: PATH: ..." unless `warn` is false.
ModelPtr LoadModel(const std::string& path,
                   const std::map<std::string, std::vector<int64_t>>& input_shapes,
                   KilnStatus** status, bool warn = true);

// A malloc'ed string from the C API, freed with kiln_free.
std::string TakeText(char* text);
// Writes `text` to `path`; false with `error` set when it cannot.
bool WriteFile(const std::string& path, const std::string& text, std::string* error);

// "float32[1,3,224,224]" ("?" for a dim that is not static: -1).
std::string TensorText(const DLTensor& t);
// "float32", "int64", "bool", ...
std::string DtypeText(const DLDataType& t);

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
int Info(const std::vector<std::string>& args);
int Eval(const std::vector<std::string>& args);

// The help text of each subcommand, for `kiln help --markdown` (docs/cli.md).
struct CommandHelp {
  const char* name;
  const char* help;
};
std::vector<CommandHelp> AllHelp();
extern const char kPrintHelp[], kCheckHelp[], kOptHelp[], kLowerHelp[], kCompileHelp[],
    kGraphHelp[], kRunHelp[], kBenchHelp[], kDebugHelp[], kInfoHelp[], kEvalHelp[];

}  // namespace kiln::cli

#endif  // KILN_TOOLS_CLI_H_
