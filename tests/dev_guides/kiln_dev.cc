// File: tests/dev_guides/kiln_dev.cc — `kiln_dev`: the `kiln` command line
// (the same subcommands, from //tools:cli) with the guides' test-only
// extensions registered first: the operator test.clamp_add (every facet)
// and the pass FormClampAdd.
//
//   kiln_dev opt model.kir --passes=InferType,FormClampAdd
//   kiln_dev lower model.kir '--target=llvm -mcpu=haswell'
//
// The shipped `kiln` cannot load them: it links the registrations of
// passes/registry and the core operators only, and has no plug-in mechanism.
// A subcommand here is the very code `kiln` runs (tools/cmd_model.cc,
// tools/cmd_runtime.cc); only main differs.
#include <cstdio>
#include <string>
#include <vector>

#include "tests/dev_guides/clamp_add.h"
#include "tests/dev_guides/form_clamp_add.h"
#include "tools/cli.h"

namespace {

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
  absl::Status registered = kiln::dev_guides::RegisterFormClampAdd();  // and test.clamp_add
  if (!registered.ok()) {
    std::fprintf(stderr, "kiln_dev: cannot register the test extensions: %s\n",
                 std::string(registered.message()).c_str());
    return 1;
  }
  if (argc < 2) {
    std::fputs("usage: kiln_dev <command> [options]   (the commands of `kiln help`)\n", stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  for (const Command& c : kCommands) {
    if (cmd == c.name) return c.fn(args);
  }
  std::fprintf(stderr, "kiln_dev: unknown command '%s'\n", cmd.c_str());
  return 2;
}
