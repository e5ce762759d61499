// File: tools/kiln.cc — the `kiln` command line (README.md, `kiln help`).
//
//   kiln compile MODEL.{onnx,kir} -o MODEL.so [--target T] [-O N] [--input-shape N=D,D]
//                [--emit ir|loop|llvm|asm] [--dump-ir DIR]
//   kiln run MODEL.so [--input NAME=FILE.npy ...] [--random-inputs] [--output-dir DIR]
//   kiln bench MODEL.so [--repeat N] [--threads T]
//   kiln debug MODEL.so --dump-dir DIR
//   kiln opt MODEL --passes=A,B   kiln print MODEL   kiln check MODEL...
//   kiln lower MODEL [--emit loop|llvm|asm]
//   kiln graph MODEL --format dot|svg
//
// Each subcommand lives in cmd_model.cc (compiler) or cmd_runtime.cc
// (runtime, through kiln_runtime.h only) and answers --help. Errors go to
// stderr with a non-zero exit status (1: the operation failed; 2: bad usage);
// nothing aborts.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tools/cli.h"

namespace {

constexpr const char kUsage[] =
    "usage: kiln <command> [options]       (kiln <command> --help for its options)\n"
    "\n"
    "compile and inspect models (.onnx or .kir text IR):\n"
    "  compile MODEL -o MODEL.so   compile into one shared library (kernels, plan, weights)\n"
    "  print MODEL [--types]       print as text IR, optionally with every inferred type\n"
    "  check MODEL...              parse and type-check; print functions and times\n"
    "  opt MODEL [--passes=A,B]    run graph passes (or the default pipeline); print the result\n"
    "  lower MODEL [--emit ...]    fuse and lower every kernel; print loop IR, LLVM IR or asm\n"
    "  graph MODEL [--format svg]  draw the dataflow graph (Graphviz dot or SVG)\n"
    "\n"
    "run compiled models (MODEL.so from kiln compile):\n"
    "  run MODEL.so [--input N=F.npy] [--random-inputs] [--output-dir DIR]\n"
    "                              run once; print outputs and the time per run\n"
    "  bench MODEL.so [--repeat N] [--threads T]\n"
    "                              time it; print a benchmark-log line (TVM format v0.1)\n"
    "  debug MODEL.so --dump-dir DIR\n"
    "                              per-node times, Chrome trace and every node's tensors\n"
    "\n"
    "  help                        this message\n";

struct Command {
  const char* name;
  int (*fn)(const std::vector<std::string>&);
};

constexpr Command kCommands[] = {
    {"compile", kiln::cli::Compile}, {"print", kiln::cli::Print}, {"check", kiln::cli::Check},
    {"opt", kiln::cli::Opt},         {"lower", kiln::cli::Lower}, {"graph", kiln::cli::Graph},
    {"run", kiln::cli::Run},         {"bench", kiln::cli::Bench}, {"debug", kiln::cli::Debug},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    if (!args.empty()) {
      for (const Command& c : kCommands) {
        if (args[0] == c.name) return c.fn({"--help"});
      }
    }
    std::fputs(kUsage, stdout);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (cmd == c.name) return c.fn(args);
  }
  std::fprintf(stderr, "kiln: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
