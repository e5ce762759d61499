// File: lowering/passes/tir_opt.cc
//
// tir_opt: runs loop passes on loop-IR text, like mlir-opt, for FileCheck tests
// and experiments.
//
//   tir_opt --passes=storage_flatten,simplify,vectorize FILE.tir
//   tir_opt --passes=default --auto-unroll-max-step=16 FILE.tir
//
// Every `primfunc` of FILE (ir/tir_parser.h) goes through the passes in order
// and is printed (tir::ToText) to stdout. Options:
//   --passes=a,b,c              pass names (lowering/passes/pipeline.h); default "default"
//   --vector-width=N            vectorize: chunk width for long loops (16)
//   --auto-unroll-max-step=N    unroll: serial loops of <= N steps (0 = off)
//   --print-after-all           with "default": print the IR after every pass to stderr
// Errors (bad usage, unreadable file, parse errors, pass errors) go to stderr
// and the exit status is 1.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "ir/tir_parser.h"
#include "ir/tir_printer.h"
#include "lowering/passes/pipeline.h"

namespace {

int Fail(const std::string& msg) {
  std::cerr << "tir_opt: " << msg << "\n";
  return 1;
}

constexpr const char* kUsage =
    "usage: tir_opt [--passes=a,b,c] [--vector-width=N] [--auto-unroll-max-step=N] "
    "[--print-after-all] FILE.tir";

}  // namespace

int main(int argc, char** argv) {
  using kiln::tir::transform::GetLoopPass;
  using kiln::tir::transform::LoopPass;
  using kiln::tir::transform::LoopPassOptions;
  std::string passes = "default";
  std::string file;
  LoopPassOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    int value = 0;
    if (absl::StartsWith(arg, "--passes=")) {
      passes = arg.substr(9);
    } else if (absl::StartsWith(arg, "--vector-width=")) {
      if (!absl::SimpleAtoi(arg.substr(15), &value) || value < 1) return Fail("bad " + arg);
      options.vector_width = value;
    } else if (absl::StartsWith(arg, "--auto-unroll-max-step=")) {
      if (!absl::SimpleAtoi(arg.substr(23), &value) || value < 0) return Fail("bad " + arg);
      options.auto_unroll_max_step = value;
    } else if (arg == "--print-after-all") {
      options.after_each = [](absl::string_view pass, const kiln::tir::PrimFunc& f) {
        std::cerr << "// after " << pass << "\n" << kiln::tir::ToText(f);
      };
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage << "\n";
      return 0;
    } else if (absl::StartsWith(arg, "-")) {
      return Fail("unknown option " + arg + "\n" + kUsage);
    } else if (file.empty()) {
      file = arg;
    } else {
      return Fail("more than one input file\n" + std::string(kUsage));
    }
  }
  if (file.empty()) return Fail(std::string("no input file\n") + kUsage);

  std::vector<LoopPass> pipeline;
  std::vector<std::string> names;
  for (absl::string_view name : absl::StrSplit(passes, ',', absl::SkipEmpty())) {
    absl::StatusOr<LoopPass> p = GetLoopPass(name, options);
    if (!p.ok()) return Fail(std::string(p.status().message()));
    pipeline.push_back(*p);
    names.emplace_back(name);
  }

  std::ifstream in(file);
  if (!in) return Fail("cannot read " + file);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<kiln::tir::PrimFunc>> funcs =
      kiln::tir::ParsePrimFuncs(text.str(), file);
  if (!funcs.ok()) return Fail(std::string(funcs.status().message()));

  std::string out;
  for (kiln::tir::PrimFunc f : *funcs) {
    for (const LoopPass& p : pipeline) {
      absl::StatusOr<kiln::tir::PrimFunc> g = p(f);
      if (!g.ok()) return Fail(std::string(g.status().message()));
      f = *g;
    }
    out += kiln::tir::ToText(f);
  }
  std::cout << out;
  return 0;
}
