// File: tools/cmd_graph.cc
//
// `kiln graph`: the model's dataflow graph as Graphviz dot or SVG, from the
// C API's kiln_model_to_dot.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "kiln/kiln.h"
#include "tools/cli.h"
#include "tools/signature.h"

extern char** environ;

namespace kiln::cli {

const char kGraphHelp[] =
    "usage: kiln graph MODEL [--format dot|svg] [-o FILE] [--fused | --opt] [-O N]\n"
    "\n"
    "Draws the model's dataflow graph: one box per operator, inputs, constants and\n"
    "outputs, edges labelled with tensor types; a fused function's box lists its\n"
    "operators one per line. svg needs Graphviz's `dot`.\n"
    "  --format dot|svg        Graphviz source (default) or an SVG picture\n"
    "  -o FILE                 write to FILE instead of stdout\n"
    "  --fused                 draw the model after optimization and fusion\n"
    "  --opt                   draw the model after optimization, without fusion:\n"
    "                          every operator its own box, folded constants named\n"
    "                          after the initializer they came from\n"
    "  -O N, --opt-level N     the pass level for --fused and --opt (default 3)\n"
    "  --input-shape N=D,D     static shape for ONNX input N, or DIM=SIZE (repeatable)\n";

// kiln_model_to_dot escapes the line breaks it puts between a fused
// function's operators a second time, so Graphviz shows "\n" literally:
// those labels get real line breaks (dot's \n) back. Other labels are kept.
std::string FixFusedLabels(const std::string& dot) {
  std::string out;
  out.reserve(dot.size());
  for (absl::string_view line : absl::StrSplit(dot, '\n')) {
    if (!out.empty()) out += '\n';
    size_t at = line.find("label=\"fused: ");
    if (at == absl::string_view::npos) {
      out.append(line.data(), line.size());
      continue;
    }
    size_t end = line.find("\"]", at);
    if (end == absl::string_view::npos) end = line.size();
    out.append(line.data(), at);
    out += absl::StrReplaceAll(line.substr(at, end - at), {{"\\\\n", "\\n"}});
    out.append(line.data() + end, line.size() - end);
  }
  return out;
}

int Graph(const std::vector<std::string>& args) {
  Parser p("graph", kGraphHelp);
  std::string format = "dot", output;
  bool fused = false, opt = false;
  int opt_level = 3;
  std::vector<std::string> specs, files;
  p.Text("--format", &format);
  p.Text("-o,--output", &output);
  p.Flag("--fused", &fused);
  p.Flag("--opt", &opt);
  p.Int("-O,--opt-level", &opt_level, 0, 3);
  p.Texts("--input-shape", &specs);
  if (!p.Parse(args, &files)) return p.exit_code();
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& spec : specs) {
    std::string error;
    if (!ParseInputShape(spec, &shapes, &error)) return p.Usage(error);
  }
  if (files.size() != 1) {
    return p.Usage(files.empty() ? "no model file given"
                                 : absl::StrCat("one model file expected, got ", files.size()));
  }
  if (fused && opt) return p.Usage("--fused and --opt draw different graphs: give one");
  if (format != "dot" && format != "svg") {
    return p.Usage(absl::StrCat("--format must be dot or svg, got '", format, "'"));
  }
  KilnStatus* st = nullptr;
  std::string usage;
  ModelPtr m = LoadModelBound(files[0], shapes, &st, &usage);
  if (!usage.empty()) return p.Usage(usage);
  if (st != nullptr) return Fail("graph", st);
  if (fused) {
    // The default pipeline with fusion required: what the compiler lowers.
    KilnOptimizeOptions o;
    kiln_optimize_options_init(&o);
    o.opt_level = opt_level;
    const char* required[] = {"FuseOps"};
    o.required_passes = required;
    o.num_required_passes = 1;
    KilnModel* out = nullptr;
    st = kiln_model_optimize(m.get(), &o, &out);
    if (st != nullptr) return Fail("graph", st);
    m.reset(out);
  } else if (opt) {
    // The default pipeline without FuseOps: the optimized graph op by op.
    KilnOptimizeOptions o;
    kiln_optimize_options_init(&o);
    o.opt_level = opt_level;
    const char* disabled[] = {"FuseOps"};
    o.disabled_passes = disabled;
    o.num_disabled_passes = 1;
    KilnModel* out = nullptr;
    st = kiln_model_optimize(m.get(), &o, &out);
    if (st != nullptr) return Fail("graph", st);
    m.reset(out);
  }
  char* dot_text = nullptr;
  st = kiln_model_to_dot(m.get(), &dot_text);
  if (st != nullptr) return Fail("graph", st);
  std::string dot = FixFusedLabels(TakeText(dot_text));
  std::string error;
  if (format == "dot") {
    if (output.empty()) {
      std::fputs(dot.c_str(), stdout);
      return 0;
    }
    return WriteFile(output, dot, &error) ? 0 : Fail("graph", error);
  }
  // svg: Graphviz reads the dot text from a temporary file.
  std::string tmp = (std::filesystem::temp_directory_path() /
                     absl::StrCat("kiln_graph_", ::getpid(), ".dot")).string();
  if (!WriteFile(tmp, dot, &error)) return Fail("graph", error);
  // Graphviz is spawned without a shell: the paths are arguments, never
  // command text (a user's -o value must not run anything).
  std::vector<std::string> dot_args = {"dot", "-Tsvg", tmp};
  if (!output.empty()) {
    dot_args.push_back("-o");
    dot_args.push_back(output);
  }
  std::vector<char*> argv;
  for (std::string& a : dot_args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ);
  int wstatus = 0;
  if (rc == 0) {
    while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  if (rc != 0) {
    return Fail("graph", absl::StrCat("cannot run Graphviz `dot`: ", std::strerror(rc),
                                      " (Debian: apt-get install graphviz; or use --format dot)"));
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return Fail("graph", WIFEXITED(wstatus)
                             ? absl::StrCat("Graphviz `dot -Tsvg` exited with status ",
                                            WEXITSTATUS(wstatus))
                             : std::string("Graphviz `dot -Tsvg` was killed by a signal"));
  }
  return 0;
}

}  // namespace kiln::cli
