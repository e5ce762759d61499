// File: tools/cmd_model.cc
//
// The compiler subcommands of `kiln`: print, check, opt, lower, compile and
// graph, on the C API (kiln/kiln.h) alone.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "kiln/kiln.h"
#include "tools/cli.h"

extern char** environ;

namespace kiln::cli {
namespace {

constexpr const char kPrintHelp[] =
    "usage: kiln print MODEL [--types] [--input-shape NAME=D,D,...]\n"
    "\n"
    "Reads a model (.kir text IR, or .onnx) and prints it as text IR.\n"
    "  --types                 type-check and show every inferred type\n"
    "  --input-shape N=D,D     static shape for ONNX input N (repeatable)\n";

constexpr const char kCheckHelp[] =
    "usage: kiln check MODEL...\n"
    "\n"
    "Reads and type-checks each model (.kir or .onnx); prints its inputs and\n"
    "outputs with their types, and the time it took.\n";

constexpr const char kOptHelp[] =
    "usage: kiln opt MODEL [--passes=A,B,...] [-O N] [--disable=A,B] [--print-after-all] [--timing]\n"
    "\n"
    "Runs graph passes and prints the resulting module as text IR.\n"
    "  --passes=A,B,C          the passes to run, in order (default: the default\n"
    "                          pipeline for the opt level)\n"
    "  -O N, --opt-level N     0-3 (default 3); passes above it are skipped\n"
    "  --disable=A,B           never run these passes\n"
    "  --print-after-all       print the module after each pass\n"
    "  --timing                print each pass's time to stderr\n"
    "  --input-shape N=D,D     static shape for ONNX input N (repeatable)\n";

constexpr const char kLowerHelp[] =
    "usage: kiln lower MODEL [--emit loop|llvm|asm] [--target T] [-O N] [--timing]\n"
    "\n"
    "Optimizes and fuses the model, lowers every fused function to a kernel and\n"
    "prints it.\n"
    "  --emit loop|llvm|asm    loop IR (default), optimized LLVM IR, or assembly\n"
    "  --target T              e.g. \"llvm -mcpu=skylake-avx512\" (default: llvm, the host)\n"
    "  -O N, --opt-level N     0-3 (default 3)\n"
    "  --timing                print pass, lowering and codegen times to stderr\n"
    "  --input-shape N=D,D     static shape for ONNX input N (repeatable)\n";

constexpr const char kCompileHelp[] =
    "usage: kiln compile MODEL -o MODEL.so [options]\n"
    "\n"
    "Compiles a model (.kir or .onnx) into one shared library: the kernels, the\n"
    "executor plan and the weights, loaded by the C runtime (kiln run, or\n"
    "libkiln_runtime.so). See docs/artifact.md.\n"
    "  -o, --output MODEL.so   the artifact to write\n"
    "  --target T              e.g. \"llvm -mcpu=skylake-avx512\" (default: llvm, the host)\n"
    "  -O N, --opt-level N     graph pass level 0-3 (default 3)\n"
    "  --input-shape N=D,D     static shape for ONNX input N (repeatable)\n"
    "  --emit ir|loop|llvm|asm also print the model at that stage to stdout: the\n"
    "                          optimized, fused graph IR; the loop IR of every kernel;\n"
    "                          LLVM IR; assembly (-o is optional with --emit)\n"
    "  --dump-ir DIR           write every stage to DIR: 0_input.kir, 1_fused.kir,\n"
    "                          2_kernels.tir, 3_kernels.ll, 4_kernels.s\n"
    "  --no-memory-plan        one storage per tensor (no sharing)\n"
    "  --timing                print phase times and sizes to stderr\n"
    "Interrupted (Ctrl-C, SIGTERM, SIGHUP), it removes its temporary files in $TMPDIR\n"
    "before it ends.\n";

constexpr const char kGraphHelp[] =
    "usage: kiln graph MODEL [--format dot|svg] [-o FILE] [--fused] [-O N]\n"
    "\n"
    "Draws the model's dataflow graph: one box per operator, inputs, constants and\n"
    "outputs, edges labelled with tensor types. svg needs Graphviz's `dot`.\n"
    "  --format dot|svg        Graphviz source (default) or an SVG picture\n"
    "  -o FILE                 write to FILE instead of stdout\n"
    "  --fused                 draw the model after optimization and fusion\n"
    "  -O N, --opt-level N     the pass level for --fused (default 3)\n"
    "  --input-shape N=D,D     static shape for ONNX input N (repeatable)\n";

// --input-shape values of `a` into `shapes`; false (and a usage error) on a
// malformed one.
bool ReadInputShapes(Args& a, std::map<std::string, std::vector<int64_t>>* shapes) {
  for (const std::string& spec : a.Values("--input-shape")) {
    std::string error;
    if (!ParseInputShape(spec, shapes, &error)) {
      a.Usage(error);
      return false;
    }
  }
  return true;
}

// One positional MODEL argument.
bool OneModel(Args& a, std::string* file) {
  std::vector<std::string> files = a.Positional();
  if (!a.Finish()) return false;
  if (files.size() != 1) {
    a.Usage(files.empty() ? "no model file given"
                          : absl::StrCat("one model file expected, got ", files.size()));
    return false;
  }
  *file = files[0];
  return true;
}

// "A,B" -> trimmed, non-empty names (checked by the C API).
std::vector<std::string> SplitNames(const std::string& list) {
  std::vector<std::string> out;
  for (absl::string_view piece : absl::StrSplit(list, ',')) {
    absl::string_view name = absl::StripAsciiWhitespace(piece);
    if (!name.empty()) out.emplace_back(name);
  }
  return out;
}

std::vector<const char*> CStrings(const std::vector<std::string>& v) {
  std::vector<const char*> out;
  for (const std::string& s : v) out.push_back(s.c_str());
  return out;
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

// A malloc'ed string from the C API, freed with kiln_free.
std::string TakeText(char* text) {
  std::string s = text != nullptr ? text : "";
  kiln_free(text);
  return s;
}

// ---- Interrupted compiles (issue 15) -------------------------------------
//
// The library links in a kiln_export_* folder under $TMPDIR and removes it
// when it is done; a compile ended by Ctrl-C or `kill` used to leave it
// behind (up to 196 MB). So `kiln compile` gives the library a private
// TMPDIR of its own (kiln_compile_XXXXXX under the real one), blocks SIGINT,
// SIGTERM and SIGHUP in every thread (the mask is set before any thread
// exists, and threads inherit it) and waits for them on a watcher thread.
// The cleanup therefore runs as ordinary code on that thread, not in a signal
// handler, where removing a folder tree would not be async-signal-safe: on a
// signal the watcher removes the private folder, then ends the process by
// the same signal (its exit status says so). A signal the caller set to be
// ignored (nohup) stays ignored.
class InterruptCleanup {
 public:
  InterruptCleanup() {
    const char* base = std::getenv("TMPDIR");
    if (base != nullptr) saved_tmpdir_ = base;
    std::string tmpl = absl::StrCat(base != nullptr && base[0] != '\0' ? base : "/tmp",
                                    "/kiln_compile_XXXXXX");
    if (::mkdtemp(tmpl.data()) == nullptr) return;  // the compile reports TMPDIR's problem
    dir_ = tmpl;
    ::setenv("TMPDIR", dir_.c_str(), 1);
    sigemptyset(&signals_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      if (::sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
      sigaddset(&signals_, sig);
      if (wake_signal_ == 0) wake_signal_ = sig;
    }
    if (wake_signal_ == 0) return;  // all ignored: nothing can interrupt the compile
    ::pthread_sigmask(SIG_BLOCK, &signals_, &saved_mask_);
    watcher_ = std::thread([this] { Watch(); });
  }

  ~InterruptCleanup() {
    if (dir_.empty()) return;
    if (watcher_.joinable()) {
      // Wake the watcher with a signal aimed at it alone; `done_` tells it
      // apart from a real one.
      done_.store(true);
      ::pthread_kill(watcher_.native_handle(), wake_signal_);
      watcher_.join();
    }
    RemoveDir();
    if (saved_tmpdir_) {
      ::setenv("TMPDIR", saved_tmpdir_->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
    // A signal that came meanwhile is delivered now, with its default action.
    if (wake_signal_ != 0) ::pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
  }

  InterruptCleanup(const InterruptCleanup&) = delete;
  InterruptCleanup& operator=(const InterruptCleanup&) = delete;

 private:
  void Watch() {
    int sig = 0;
    while (::sigwait(&signals_, &sig) != 0) {
    }
    if (done_.load()) return;
    RemoveDir();
    // Die by the signal: default action, unblocked on this thread, raised.
    ::signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
  }

  // The compile may still be writing there (other threads run on): retry
  // until the folder is gone. Once it is, the library cannot recreate it (it
  // only makes folders inside it).
  void RemoveDir() {
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
      if (!std::filesystem::exists(dir_, ec)) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  std::string dir_;
  std::optional<std::string> saved_tmpdir_;
  sigset_t signals_{};
  sigset_t saved_mask_{};
  int wake_signal_ = 0;  // a member of signals_; 0 when there is no watcher
  std::atomic<bool> done_{false};
  std::thread watcher_;
};



}  // namespace

int Print(const std::vector<std::string>& args) {
  Args a("print", args, kPrintHelp);
  bool types = a.Flag("--types");
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(a, &shapes)) return 2;
  std::vector<std::string> files = a.Positional();
  if (!a.Finish()) return a.exit_code();
  if (files.empty()) return a.Usage("no model file given");
  for (const std::string& f : files) {
    KilnStatus* st = nullptr;
    ModelPtr m = LoadModel(f, shapes, &st);
    if (st != nullptr) return Fail("print", st);
    char* text = nullptr;
    st = kiln_model_print(m.get(), types ? 1 : 0, &text);
    if (st != nullptr) return Fail("print", st);
    std::fputs(TakeText(text).c_str(), stdout);
  }
  return 0;
}

int Check(const std::vector<std::string>& args) {
  Args a("check", args, kCheckHelp);
  std::vector<std::string> files = a.Positional();
  if (!a.Finish()) return a.exit_code();
  if (files.empty()) return a.Usage("no model file given");
  for (const std::string& f : files) {
    auto t0 = std::chrono::steady_clock::now();
    KilnStatus* st = nullptr;
    ModelPtr m = LoadModel(f, {}, &st);
    if (st != nullptr) return Fail("check", st);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    int32_t num_inputs = 0, num_outputs = 0;
    kiln_status_free(kiln_model_num_inputs(m.get(), &num_inputs));
    kiln_status_free(kiln_model_num_outputs(m.get(), &num_outputs));
    std::printf("%s: %d inputs, %d outputs; read and type-checked in %.2f ms\n", f.c_str(),
                num_inputs, num_outputs, ms);
    for (int32_t i = 0; i < num_inputs; ++i) {
      const char* name = nullptr;
      DLTensor info;
      st = kiln_model_input_info(m.get(), i, &name, &info);
      std::printf("  input  %-12s %s\n", name != nullptr ? name : "?",
                  st == nullptr ? TensorText(info).c_str() : kiln_status_message(st));
      kiln_status_free(st);
    }
    for (int32_t i = 0; i < num_outputs; ++i) {
      DLTensor info;
      st = kiln_model_output_info(m.get(), i, &info);
      std::printf("  output %-12d %s\n", i,
                  st == nullptr ? TensorText(info).c_str() : kiln_status_message(st));
      kiln_status_free(st);
    }
  }
  return 0;
}

namespace {

// The per-pass callback of `kiln opt`: timing rows and/or module dumps.
struct OptTrace {
  bool print_after_all = false;
  std::string timing;
  double total_ms = 0;
};

void OnPass(void* user, const char* pass, int32_t changed, double ms, const char* text) {
  auto* trace = static_cast<OptTrace*>(user);
  char row[160];
  std::snprintf(row, sizeof row, "%-28s %12.3f  %s\n", pass, ms, changed ? "yes" : "no");
  trace->timing += row;
  trace->total_ms += ms;
  if (trace->print_after_all && text != nullptr) {
    std::printf("// ---- after %s ----\n%s", pass, text);
    std::fflush(stdout);
  }
}

}  // namespace

int Opt(const std::vector<std::string>& args) {
  Args a("opt", args, kOptHelp);
  std::string list = a.Value("--passes");
  int opt_level = a.Int("--opt-level", "-O", 3, 0, 3);
  std::string disable = a.Value("--disable");
  bool print_after_all = a.Flag("--print-after-all");
  bool timing = a.Flag("--timing");
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(a, &shapes)) return 2;
  std::string file;
  if (!OneModel(a, &file)) return a.exit_code();
  KilnStatus* st = nullptr;
  ModelPtr m = LoadModel(file, shapes, &st);
  if (st != nullptr) return Fail("opt", st);
  std::vector<std::string> passes = SplitNames(list), disabled = SplitNames(disable);
  std::vector<const char*> c_passes = CStrings(passes), c_disabled = CStrings(disabled);
  KilnOptimizeOptions o;
  kiln_optimize_options_init(&o);
  o.opt_level = opt_level;
  o.passes = c_passes.data();
  o.num_passes = static_cast<int32_t>(c_passes.size());
  o.disabled_passes = c_disabled.data();
  o.num_disabled_passes = static_cast<int32_t>(c_disabled.size());
  OptTrace trace;
  trace.print_after_all = print_after_all;
  if (timing || print_after_all) {
    o.after_pass = OnPass;
    o.after_pass_user_data = &trace;
    o.after_pass_text = print_after_all ? 1 : 0;
  }
  KilnModel* out = nullptr;
  st = kiln_model_optimize(m.get(), &o, &out);
  if (st != nullptr) return Fail("opt", st);
  ModelPtr result(out);
  if (timing) {
    std::fprintf(stderr, "%-28s %12s  %s\n%s%-28s %12.3f\n", "pass", "time (ms)", "changed",
                 trace.timing.c_str(), "total", trace.total_ms);
  }
  if (print_after_all) std::fputs("// ---- result ----\n", stdout);
  char* text = nullptr;
  st = kiln_model_print(result.get(), 0, &text);
  if (st != nullptr) return Fail("opt", st);
  std::fputs(TakeText(text).c_str(), stdout);
  return 0;
}

namespace {

// Parses an --emit value; -1 when unknown.
int EmitKind(const std::string& emit) {
  if (emit == "ir") return KILN_EMIT_GRAPH_IR;
  if (emit == "loop") return KILN_EMIT_LOOP_IR;
  if (emit == "llvm") return KILN_EMIT_LLVM_IR;
  if (emit == "asm") return KILN_EMIT_ASSEMBLY;
  return -1;
}

}  // namespace

int Lower(const std::vector<std::string>& args) {
  Args a("lower", args, kLowerHelp);
  std::string emit = a.Value("--emit");
  if (emit.empty()) emit = "loop";
  std::string target = a.Value("--target");
  int opt_level = a.Int("--opt-level", "-O", 3, 0, 3);
  bool timing = a.Flag("--timing");
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(a, &shapes)) return 2;
  std::string file;
  if (!OneModel(a, &file)) return a.exit_code();
  if (emit != "loop" && emit != "llvm" && emit != "asm") {
    return a.Usage(absl::StrCat("--emit must be loop, llvm or asm, got '", emit, "'"));
  }
  KilnStatus* st = nullptr;
  ModelPtr m = LoadModel(file, shapes, &st);
  if (st != nullptr) return Fail("lower", st);
  KilnCompileOptions o;
  kiln_compile_options_init(&o);
  o.opt_level = opt_level;
  if (!target.empty()) o.target = target.c_str();
  KilnCompileReport r;
  std::memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  char* text = nullptr;
  st = kiln_model_emit(m.get(), &o, static_cast<KilnEmitKind>(EmitKind(emit)), &text, &r);
  if (st != nullptr) return Fail("lower", st);
  std::fputs(TakeText(text).c_str(), stdout);
  if (timing) {
    std::fprintf(stderr, "kiln lower: %d kernels; passes %.1f ms, lowering %.1f ms, codegen %.1f ms\n",
                 r.num_kernels, r.passes_ms, r.lower_ms, r.codegen_ms);
  }
  return 0;
}

int Compile(const std::vector<std::string>& args) {
  // First, before the library starts any thread (see InterruptCleanup).
  InterruptCleanup cleanup;
  Args a("compile", args, kCompileHelp);
  std::string output = a.Value("--output", "-o");
  std::string target = a.Value("--target");
  int opt_level = a.Int("--opt-level", "-O", 3, 0, 3);
  bool no_memory_plan = a.Flag("--no-memory-plan");
  std::string emit = a.Value("--emit");
  std::string dump_dir = a.Value("--dump-ir");
  bool timing = a.Flag("--timing");
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(a, &shapes)) return 2;
  std::string file;
  if (!OneModel(a, &file)) return a.exit_code();
  if (!emit.empty() && EmitKind(emit) < 0) {
    return a.Usage(absl::StrCat("--emit must be ir, loop, llvm or asm, got '", emit, "'"));
  }
  if (output.empty() && emit.empty() && dump_dir.empty()) {
    return a.Usage("no output file (-o MODEL.so)");
  }
  KilnStatus* st = nullptr;
  ModelPtr m = LoadModel(file, shapes, &st);
  if (st != nullptr) return Fail("compile", st);
  KilnCompileOptions o;
  kiln_compile_options_init(&o);
  o.opt_level = opt_level;
  if (!target.empty()) o.target = target.c_str();
  o.no_memory_plan = no_memory_plan ? 1 : 0;

  if (!dump_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dump_dir, ec);
    if (ec) {
      return Fail("compile",
                  absl::StrCat("cannot create directory '", dump_dir, "': ", ec.message()));
    }
    char* input = nullptr;
    st = kiln_model_print(m.get(), 0, &input);
    if (st != nullptr) return Fail("compile", st);
    std::string error;
    if (!WriteFile(dump_dir + "/0_input.kir", TakeText(input), &error)) {
      return Fail("compile", error);
    }
    const std::pair<KilnEmitKind, const char*> files[] = {{KILN_EMIT_GRAPH_IR, "1_fused.kir"},
                                                          {KILN_EMIT_LOOP_IR, "2_kernels.tir"},
                                                          {KILN_EMIT_LLVM_IR, "3_kernels.ll"},
                                                          {KILN_EMIT_ASSEMBLY, "4_kernels.s"}};
    for (const auto& [kind, name] : files) {
      char* text = nullptr;
      st = kiln_model_emit(m.get(), &o, kind, &text, nullptr);
      if (st != nullptr) return Fail("compile", st);
      if (!WriteFile(absl::StrCat(dump_dir, "/", name), TakeText(text), &error)) {
        return Fail("compile", error);
      }
    }
  }
  if (!emit.empty()) {
    char* text = nullptr;
    st = kiln_model_emit(m.get(), &o, static_cast<KilnEmitKind>(EmitKind(emit)), &text, nullptr);
    if (st != nullptr) return Fail("compile", st);
    std::fputs(TakeText(text).c_str(), stdout);
  }
  if (output.empty()) return 0;

  KilnCompileReport r;
  std::memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  st = kiln_model_compile(m.get(), &o, output.c_str(), &r);
  if (st != nullptr) return Fail("compile", st);
  if (timing) {
    std::fprintf(stderr,
                 "kiln compile: %d fused calls, %d kernels; passes %.1f ms, lowering %.1f ms, "
                 "plan %.1f ms, codegen %.1f ms, link %.1f ms; arena %lld bytes (naive %lld); "
                 "%s: %llu bytes\n",
                 r.num_fused_calls, r.num_kernels, r.passes_ms, r.lower_ms, r.plan_ms,
                 r.codegen_ms, r.link_ms, static_cast<long long>(r.arena_bytes),
                 static_cast<long long>(r.naive_bytes), output.c_str(),
                 static_cast<unsigned long long>(r.file_bytes));
  }
  return 0;
}

int Graph(const std::vector<std::string>& args) {
  Args a("graph", args, kGraphHelp);
  std::string format = a.Value("--format");
  if (format.empty()) format = "dot";
  std::string output = a.Value("--output", "-o");
  bool fused = a.Flag("--fused");
  int opt_level = a.Int("--opt-level", "-O", 3, 0, 3);
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(a, &shapes)) return 2;
  std::string file;
  if (!OneModel(a, &file)) return a.exit_code();
  if (format != "dot" && format != "svg") {
    return a.Usage(absl::StrCat("--format must be dot or svg, got '", format, "'"));
  }
  KilnStatus* st = nullptr;
  ModelPtr m = LoadModel(file, shapes, &st);
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
  }
  char* dot_text = nullptr;
  st = kiln_model_to_dot(m.get(), &dot_text);
  if (st != nullptr) return Fail("graph", st);
  std::string dot = TakeText(dot_text);
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
