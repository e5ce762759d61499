// The `kiln` command line (grows with each layer; see README.md).
//
//   kiln print FILE.kir [--types]   parse, optionally type-check, print the module
//   kiln check FILE.kir...          parse and type-check; report time and size
//
// Errors go to stderr with a non-zero exit status; nothing aborts.
//
// TODO(issue 7): this tool uses //ir and //types directly; it moves behind the
// C API (c_api/) when that exists, as DESIGN.md §2 asks.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/traversal.h"
#include "types/infer_type.h"

namespace {

constexpr const char kUsage[] =
    "usage: kiln <command> [options]\n"
    "\n"
    "commands:\n"
    "  print FILE.kir [--types]   parse a text-IR module and print it; with --types,\n"
    "                             type-check it and show every inferred type\n"
    "  check FILE.kir...          parse and type-check each file; print a summary\n"
    "  help                       this message\n";

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::StatusOr<kiln::Module> Load(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  return kiln::ParseModule(*text, path);
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "kiln: error: %s\n", std::string(s.message()).c_str());
  return 1;
}

int Print(const std::vector<std::string>& args) {
  bool types = false;
  std::vector<std::string> files;
  for (const std::string& a : args) {
    if (a == "--types") {
      types = true;
    } else if (a.starts_with("-")) {
      std::fprintf(stderr, "kiln print: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "kiln print: no input file\n%s", kUsage);
    return 2;
  }
  for (const std::string& f : files) {
    auto m = Load(f);
    if (!m.ok()) return Fail(m.status());
    if (types) {
      auto typed = kiln::types::InferType(*m);
      if (!typed.ok()) return Fail(typed.status());
      m = *typed;
    }
    std::fputs(kiln::PrintModule(*m, {.show_types = types}).c_str(), stdout);
  }
  return 0;
}

int Check(const std::vector<std::string>& files) {
  if (files.empty()) {
    std::fprintf(stderr, "kiln check: no input file\n%s", kUsage);
    return 2;
  }
  for (const std::string& f : files) {
    auto t0 = std::chrono::steady_clock::now();
    auto m = Load(f);
    if (!m.ok()) return Fail(m.status());
    auto t1 = std::chrono::steady_clock::now();
    auto typed = kiln::types::InferType(*m);
    if (!typed.ok()) return Fail(typed.status());
    auto t2 = std::chrono::steady_clock::now();
    size_t calls = 0;
    for (const auto& [gv, fn] : typed->functions())
      for (const kiln::Expr& e : kiln::PostOrder(fn))
        if (e->kind == kiln::ExprKind::kCall) ++calls;
    auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    std::printf("%s: %zu functions, %zu calls; parsed in %.2f ms, type-checked in %.2f ms\n",
                f.c_str(), typed->functions().size(), calls, ms(t1 - t0), ms(t2 - t1));
    for (const auto& [gv, fn] : typed->functions())
      std::printf("  @%s : %s\n", gv->name.c_str(), kiln::TypeToString(fn->checked_type()).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "print") return Print(args);
  if (cmd == "check") return Check(args);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "kiln: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
