// File: tools/cmd_model.cc
//
// The compiler subcommands of `kiln`: print, check, opt, lower and compile,
// on the C API (kiln/kiln.h) alone (graph is in cmd_graph.cc).
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "kiln/kiln.h"
#include "nlohmann/json.hpp"
#include "tools/json_text.h"
#include "tools/cli.h"
#include "tools/interrupt_cleanup.h"
#include "tools/progress.h"
#include "tools/signature.h"

namespace kiln::cli {

const char kPrintHelp[] =
    "usage: kiln print MODEL... [--types] [--input-shape NAME=D,D,...]\n"
    "\n"
    "Reads a model (.kir text IR, or .onnx) and prints it as text IR.\n"
    "  --types                 type-check and show every inferred type\n"
    "  --input-shape N=D,D     static shape for ONNX input N, or DIM=SIZE for a\n"
    "                          symbolic dim (repeatable)\n";

const char kCheckHelp[] =
    "usage: kiln check MODEL... [--input-shape N=D,D] [--json]\n"
    "\n"
    "Reads and type-checks each model (.kir or .onnx); prints its inputs and\n"
    "outputs (names, dtypes, shapes with their symbolic dims by name, the output\n"
    "names kiln run will use), the symbolic dims to bind, and the time it took.\n"
    "  --input-shape N=D,D     static shape for ONNX input N, or DIM=SIZE for a\n"
    "                          symbolic dim (repeatable)\n"
    "  --json                  one JSON document on stdout instead of the text\n";

const char kOptHelp[] =
    "usage: kiln opt MODEL [--passes=A,B,...] [-O N] [--disable=A,B] [--print-after-all] [--timing]\n"
    "\n"
    "Runs graph passes and prints the resulting module as text IR.\n"
    "  --passes=A,B,C          the passes to run, in order (default: the default\n"
    "                          pipeline for the opt level)\n"
    "  -O N, --opt-level N     0-3 (default 3); passes above it are skipped\n"
    "  --disable=A,B           never run these passes\n"
    "  --print-after-all       print the module after each pass\n"
    "  --timing                print each pass's time to stderr\n"
    "  --input-shape N=D,D     static shape for ONNX input N, or DIM=SIZE (repeatable)\n";

const char kLowerHelp[] =
    "usage: kiln lower MODEL [--emit loop|llvm|asm] [--target T] [-O N] [--timing]\n"
    "\n"
    "Optimizes and fuses the model, lowers every fused function to a kernel and\n"
    "prints it.\n"
    "  --emit loop|llvm|asm    loop IR (default), optimized LLVM IR, or assembly\n"
    "                          (a cuda target: its CUDA C for llvm, PTX for asm)\n"
    "  --target T              e.g. \"llvm -mcpu=skylake-avx512\" (default: llvm, the host),\n"
    "                          \"cuda -arch=sm_90\"\n"
    "  -O N, --opt-level N     0-3 (default 3)\n"
    "  --timing                print pass, lowering and codegen times to stderr\n"
    "  --input-shape N=D,D     static shape for ONNX input N, or DIM=SIZE (repeatable)\n";

const char kCompileHelp[] =
    "usage: kiln compile MODEL -o MODEL.so [options]\n"
    "\n"
    "Compiles a model (.kir or .onnx) into one shared library: the kernels, the\n"
    "executor plan and the weights, loaded by the C runtime (kiln run, or\n"
    "libkiln_runtime.so). See docs/artifact.md.\n"
    "  -o, --output MODEL.so   the artifact to write\n"
    "  --target T              e.g. \"llvm -mcpu=skylake-avx512\" (default: llvm, the host);\n"
    "                          another machine: \"llvm -mtriple=aarch64-linux-gnu\";\n"
    "                          an NVIDIA GPU: \"cuda -arch=sm_90\" (sm_80, sm_86, sm_87,\n"
    "                          sm_89, sm_90, sm_90a: Hopper's wgmma, H100/H200 only);\n"
    "                          \"cuda ... -tf32\": float32 GEMMs on tensor cores in TF32;\n"
    "                          \"cuda -arch=sm_90a -wgmma-n=128\": 128-wide wgmma GEMM\n"
    "                          tiles only (default 256 where a GEMM has the columns);\n"
    "                          \"... -wgmma-swizzle=128\": the wide tile's stages in the\n"
    "                          128-byte swizzled layout (default 0, unswizzled);\n"
    "                          \"... -wgmma-tma\": that layout filled by TMA copies;\n"
    "                          \"... -wgmma-ws\": by a producer warpgroup's TMA copies\n"
    "  --cc CC                 the C compiler driver that links the .so (default cc);\n"
    "                          for another machine its cross compiler, e.g.\n"
    "                          aarch64-linux-gnu-gcc\n"
    "  -O N, --opt-level N     graph pass level 0-3 (default 3)\n"
    "  --input-shape N=D,D     static shape for ONNX input N (repeatable); DIM=SIZE\n"
    "                          sets a symbolic dim in every input that has it (N=2)\n"
    "  --emit ir|loop|llvm|asm also print the model at that stage to stdout: the\n"
    "                          optimized, fused graph IR; the loop IR of every kernel;\n"
    "                          LLVM IR; assembly (-o is optional with --emit); for a\n"
    "                          cuda target the GPU's loop IR, CUDA C and PTX\n"
    "  --dump-ir DIR           write every stage to DIR: 0_input.kir, 1_fused.kir,\n"
    "                          2_kernels.tir, 3_kernels.ll, 4_kernels.s (a cuda\n"
    "                          target: 3_kernels.cu, 4_kernels.ptx)\n"
    "  --no-memory-plan        one storage per tensor (no sharing)\n"
    "  --timing                print phase times and sizes to stderr\n"
    "  --json                  with --timing: the times and sizes as one JSON document\n"
    "                          on stdout instead\n"
    "On a terminal, stderr shows the phase under way and its time.\n"
    "Interrupted (Ctrl-C, SIGTERM, SIGHUP), it removes its temporary files in $TMPDIR\n"
    "before it ends.\n";

namespace {

// --input-shape values into `shapes`; false (and a usage error) on a
// malformed one.
bool ReadInputShapes(Parser& p, const std::vector<std::string>& specs,
                     std::map<std::string, std::vector<int64_t>>* shapes) {
  for (const std::string& spec : specs) {
    std::string error;
    if (!ParseInputShape(spec, shapes, &error)) {
      p.Usage(error);
      return false;
    }
  }
  return true;
}

// One positional MODEL argument.
bool OneModel(Parser& p, const std::vector<std::string>& files, std::string* file) {
  if (files.size() != 1) {
    p.Usage(files.empty() ? "no model file given"
                          : absl::StrCat("one model file expected, got ", files.size()));
    return false;
  }
  *file = files[0];
  return true;
}

// Loads `file` with --input-shape values (input or dim names). Returns NULL
// after reporting the error (exit status in *rc).
ModelPtr Load(Parser& p, const char* command, const std::string& file,
              const std::map<std::string, std::vector<int64_t>>& shapes, int* rc) {
  KilnStatus* st = nullptr;
  std::string usage;
  ModelPtr m = LoadModelBound(file, shapes, &st, &usage);
  if (!usage.empty()) {
    *rc = p.Usage(usage);
    return nullptr;
  }
  if (st != nullptr) {
    *rc = Fail(command, st);
    return nullptr;
  }
  return m;
}

// "" when every input is static; else the error naming the symbolic dim.
std::string StaticInputsError(const KilnModel* m, const std::string& file) {
  int32_t n = 0;
  kiln_status_free(kiln_model_num_inputs(m, &n));
  bool symbolic = false;
  for (int32_t i = 0; i < n && !symbolic; ++i) {
    const char* name = nullptr;
    DLTensor info;
    if (KilnStatus* st = kiln_model_input_info(m, i, &name, &info)) {
      kiln_status_free(st);
      continue;
    }
    for (int32_t d = 0; d < info.ndim; ++d) symbolic = symbolic || info.shape[d] < 0;
  }
  if (!symbolic) return "";
  ModelSignature sig;
  std::string error;
  if (!ReadSignature(m, &sig, &error)) return "";  // the C API's own error follows
  return SymbolicDimError(sig, file);
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

nlohmann::json ShapeJson(const TensorSignature& t) {
  nlohmann::json dims = nlohmann::json::array();
  for (const std::string& d : t.dims) {
    if (!d.empty() && d[0] >= '0' && d[0] <= '9') {
      dims.push_back(std::stoll(d));
    } else {
      dims.push_back(d);
    }
  }
  return dims;
}

nlohmann::json TensorJson(const TensorSignature& t) {
  return {{"name", t.name}, {"dtype", t.dtype}, {"shape", ShapeJson(t)}};
}

}  // namespace

int Print(const std::vector<std::string>& args) {
  Parser p("print", kPrintHelp);
  bool types = false;
  std::vector<std::string> specs, files;
  p.Flag("--types", &types);
  p.Texts("--input-shape", &specs);
  if (!p.Parse(args, &files)) return p.exit_code();
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(p, specs, &shapes)) return 2;
  if (files.empty()) return p.Usage("no model file given");
  for (const std::string& f : files) {
    int rc = 0;
    ModelPtr m = Load(p, "print", f, shapes, &rc);
    if (!m) return rc;
    char* text = nullptr;
    KilnStatus* st = kiln_model_print(m.get(), types ? 1 : 0, &text);
    if (st != nullptr) return Fail("print", st);
    std::fputs(TakeText(text).c_str(), stdout);
  }
  return 0;
}

int Check(const std::vector<std::string>& args) {
  Parser p("check", kCheckHelp);
  bool json = false;
  std::vector<std::string> specs, files;
  p.Texts("--input-shape", &specs);
  p.Flag("--json", &json);
  if (!p.Parse(args, &files)) return p.exit_code();
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(p, specs, &shapes)) return 2;
  if (files.empty()) return p.Usage("no model file given");
  nlohmann::json doc = {{"models", nlohmann::json::array()}};
  for (const std::string& f : files) {
    auto t0 = std::chrono::steady_clock::now();
    int rc = 0;
    ModelPtr m = Load(p, "check", f, shapes, &rc);
    if (!m) return rc;
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ModelSignature sig;
    std::string error;
    if (!ReadSignature(m.get(), &sig, &error)) return Fail("check", error);
    const std::vector<std::string> dims = sig.SymbolicDims();
    if (json) {
      nlohmann::json model = {{"path", f},
                              {"inputs", nlohmann::json::array()},
                              {"outputs", nlohmann::json::array()},
                              {"symbolic_dims", dims},
                              {"ms", ms}};
      for (const TensorSignature& t : sig.inputs) model["inputs"].push_back(TensorJson(t));
      for (const TensorSignature& t : sig.outputs) model["outputs"].push_back(TensorJson(t));
      doc["models"].push_back(std::move(model));
      continue;
    }
    std::printf("%s: %zu inputs, %zu outputs; read and type-checked in %.2f ms\n", f.c_str(),
                sig.inputs.size(), sig.outputs.size(), ms);
    for (size_t i = 0; i < sig.inputs.size(); ++i) {
      std::printf("  input %zu '%s': %s\n", i, sig.inputs[i].name.c_str(),
                  sig.inputs[i].Text().c_str());
    }
    for (size_t i = 0; i < sig.outputs.size(); ++i) {
      std::printf("  output %zu '%s': %s\n", i, sig.outputs[i].name.c_str(),
                  sig.outputs[i].Text().c_str());
    }
    if (!dims.empty()) {
      std::string give;
      for (const std::string& d : dims) absl::StrAppend(&give, " --input-shape ", d, "=SIZE");
      std::printf("  symbolic dims: %s (compile with%s)\n", absl::StrJoin(dims, ", ").c_str(),
                  give.c_str());
    }
  }
  if (json) std::printf("%s\n", JsonText(doc).c_str());
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
  Parser p("opt", kOptHelp);
  std::string list, disable;
  int opt_level = 3;
  bool print_after_all = false, timing = false;
  std::vector<std::string> specs, files;
  p.Text("--passes", &list);
  p.Int("-O,--opt-level", &opt_level, 0, 3);
  p.Text("--disable", &disable);
  p.Flag("--print-after-all", &print_after_all);
  p.Flag("--timing", &timing);
  p.Texts("--input-shape", &specs);
  if (!p.Parse(args, &files)) return p.exit_code();
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(p, specs, &shapes)) return 2;
  std::string file;
  if (!OneModel(p, files, &file)) return 2;
  int rc = 0;
  ModelPtr m = Load(p, "opt", file, shapes, &rc);
  if (!m) return rc;
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
  KilnStatus* st = kiln_model_optimize(m.get(), &o, &out);
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

const char* EmitName(KilnEmitKind kind) {
  switch (kind) {
    case KILN_EMIT_GRAPH_IR: return "the fused graph IR";
    case KILN_EMIT_LOOP_IR: return "loop IR";
    case KILN_EMIT_LLVM_IR: return "LLVM IR";
    case KILN_EMIT_ASSEMBLY: return "assembly";
  }
  return "";
}

}  // namespace

int Lower(const std::vector<std::string>& args) {
  Parser p("lower", kLowerHelp);
  std::string emit = "loop", target;
  int opt_level = 3;
  bool timing = false;
  std::vector<std::string> specs, files;
  p.Text("--emit", &emit);
  p.Text("--target", &target);
  p.Int("-O,--opt-level", &opt_level, 0, 3);
  p.Flag("--timing", &timing);
  p.Texts("--input-shape", &specs);
  if (!p.Parse(args, &files)) return p.exit_code();
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(p, specs, &shapes)) return 2;
  std::string file;
  if (!OneModel(p, files, &file)) return 2;
  if (emit != "loop" && emit != "llvm" && emit != "asm") {
    return p.Usage(absl::StrCat("--emit must be loop, llvm or asm, got '", emit, "'"));
  }
  int rc = 0;
  ModelPtr m = Load(p, "lower", file, shapes, &rc);
  if (!m) return rc;
  if (std::string e = StaticInputsError(m.get(), file); !e.empty()) return Fail("lower", e);
  KilnCompileOptions o;
  kiln_compile_options_init(&o);
  o.opt_level = opt_level;
  if (!target.empty()) o.target = target.c_str();
  KilnCompileReport r;
  std::memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  char* text = nullptr;
  KilnStatus* st =
      kiln_model_emit(m.get(), &o, static_cast<KilnEmitKind>(EmitKind(emit)), &text, &r);
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
  Parser p("compile", kCompileHelp);
  std::string output, target, emit, dump_dir, cc;
  int opt_level = 3;
  bool no_memory_plan = false, timing = false, json = false;
  std::vector<std::string> specs, files;
  p.Text("-o,--output", &output);
  p.Text("--target", &target);
  p.Text("--cc", &cc);
  p.Int("-O,--opt-level", &opt_level, 0, 3);
  p.Flag("--no-memory-plan", &no_memory_plan);
  p.Text("--emit", &emit);
  p.Text("--dump-ir", &dump_dir);
  p.Flag("--timing", &timing);
  p.Flag("--json", &json);
  p.Texts("--input-shape", &specs);
  if (!p.Parse(args, &files)) return p.exit_code();
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(p, specs, &shapes)) return 2;
  std::string file;
  if (!OneModel(p, files, &file)) return 2;
  if (!emit.empty() && EmitKind(emit) < 0) {
    return p.Usage(absl::StrCat("--emit must be ir, loop, llvm or asm, got '", emit, "'"));
  }
  if (output.empty() && emit.empty() && dump_dir.empty()) {
    return p.Usage("no output file (-o MODEL.so)");
  }
  if (json && !timing) return p.Usage("--json goes with --timing (kiln compile --timing --json)");
  if (json && !emit.empty()) {
    return p.Usage("--json and --emit both write to stdout; use --dump-ir DIR with --json");
  }
  if (json && output.empty()) return p.Usage("--json reports a compile: give -o MODEL.so");
  // An output that could never be written is refused before the model is
  // even read (issue 15: `-o /tmp` used to compile the whole model first).
  // The export checks again (kiln_model_compile).
  if (struct stat st; !output.empty() && lstat(output.c_str(), &st) == 0 &&
                      !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    return Fail("compile", absl::StrCat("cannot write ", output,
                                        ": it exists and is not a regular file (",
                                        S_ISDIR(st.st_mode)    ? "a directory"
                                        : S_ISFIFO(st.st_mode) ? "a FIFO"
                                                               : "a device or socket",
                                        "); kiln only replaces regular files"));
  }
  Progress progress("compile");
  progress.Phase(absl::StrCat("reading ", file));
  int rc = 0;
  ModelPtr m = Load(p, "compile", file, shapes, &rc);
  progress.Clear();
  if (!m) return rc;
  // Symbolic dims compile for the VM (one artifact for every shape the model
  // allows); --input-shape fixes them for the graph executor instead.
  const bool dynamic = !StaticInputsError(m.get(), file).empty();
  KilnCompileOptions o;
  kiln_compile_options_init(&o);
  o.opt_level = opt_level;
  if (!target.empty()) o.target = target.c_str();
  if (!cc.empty()) o.cc = cc.c_str();
  o.no_memory_plan = no_memory_plan ? 1 : 0;

  KilnStatus* st = nullptr;
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
    // A cuda target's third and fourth stages are CUDA C and PTX.
    const bool cuda = absl::StartsWith(absl::StripLeadingAsciiWhitespace(target), "cuda");
    const std::pair<KilnEmitKind, const char*> stages[] = {
        {KILN_EMIT_GRAPH_IR, "1_fused.kir"},
        {KILN_EMIT_LOOP_IR, "2_kernels.tir"},
        {KILN_EMIT_LLVM_IR, cuda ? "3_kernels.cu" : "3_kernels.ll"},
        {KILN_EMIT_ASSEMBLY, cuda ? "4_kernels.ptx" : "4_kernels.s"}};
    for (const auto& [kind, name] : stages) {
      progress.Phase(absl::StrCat("writing ", EmitName(kind), " to ", dump_dir, "/", name));
      char* text = nullptr;
      st = kiln_model_emit(m.get(), &o, kind, &text, nullptr);
      progress.Clear();
      if (st != nullptr) return Fail("compile", st);
      if (!WriteFile(absl::StrCat(dump_dir, "/", name), TakeText(text), &error)) {
        return Fail("compile", error);
      }
    }
  }
  if (!emit.empty()) {
    const KilnEmitKind kind = static_cast<KilnEmitKind>(EmitKind(emit));
    progress.Phase(absl::StrCat("generating ", EmitName(kind)));
    char* text = nullptr;
    st = kiln_model_emit(m.get(), &o, kind, &text, nullptr);
    progress.Clear();
    if (st != nullptr) return Fail("compile", st);
    std::fputs(TakeText(text).c_str(), stdout);
  }
  if (output.empty()) return 0;

  KilnCompileReport r;
  std::memset(&r, 0, sizeof r);
  r.struct_size = sizeof r;
  // Off a terminal no callback at all: the compile runs as it would without.
  CompileProgressSink sink{&progress, absl::StrCat("compiling to ", output, ": ")};
  if (progress.enabled()) {
    o.progress = CompileProgressFn;
    o.progress_user_data = &sink;
  }
  st = kiln_model_compile(m.get(), &o, output.c_str(), &r);
  progress.Clear();
  if (st != nullptr) return Fail("compile", st);
  // Which executor runs it: a VM artifact has no graph (kiln/runtime.h).
  std::string executor = "graph";
  int device_kernels = -1;  // a GPU VM artifact's kernels in DEVICE_CODE
  {
    KilnArtifact* a = nullptr;
    if (KilnStatus* lst = kiln_artifact_load(output.c_str(), &a)) {
      kiln_status_free(lst);  // e.g. a cross-compiled artifact: not loadable here
      executor = dynamic ? "vm" : "graph";
    } else {
      if (kiln_artifact_graph_json(a)[0] == '\0') executor = "vm";
      const std::string dc = kiln_artifact_device_code_json(a);
      if (executor == "vm" && !dc.empty()) {
        nlohmann::json j = nlohmann::json::parse(dc, nullptr, /*allow_exceptions=*/false);
        if (j.is_object() && j.contains("kernels") && j["kernels"].is_array()) {
          device_kernels = static_cast<int>(j["kernels"].size());
        }
      }
      kiln_artifact_release(a);
    }
  }
  if (executor == "vm" && !json) {
    std::string where;
    if (device_kernels >= 0 && device_kernels == r.num_kernels) {
      where = absl::StrCat("; all ", device_kernels, " of its kernels run on the GPU");
    } else if (device_kernels >= 0) {
      where = absl::StrCat("; ", device_kernels, " of its ", r.num_kernels,
                           " kernels run on the GPU, the others (shape functions, symbolic "
                           "shapes) on the host");
    }
    std::fprintf(stderr,
                 "kiln compile: %s runs on the VM (%s); it accepts every shape the model "
                 "allows%s\n",
                 output.c_str(),
                 dynamic ? "its inputs have symbolic dims" : "control flow, closures or ADTs",
                 where.c_str());
  }
  if (json) {
    nlohmann::json doc = {
        {"model", file},
        {"output", output},
        {"executor", executor},
        {"fused_calls", r.num_fused_calls},
        {"kernels", r.num_kernels},
        {"ms",
         {{"passes", r.passes_ms},
          {"lowering", r.lower_ms},
          {"plan", r.plan_ms},
          {"codegen", r.codegen_ms},
          {"link", r.link_ms},
          {"total", r.passes_ms + r.lower_ms + r.plan_ms + r.codegen_ms + r.link_ms}}},
        {"arena_bytes", r.arena_bytes},
        {"naive_bytes", r.naive_bytes},
        {"file_bytes", r.file_bytes}};
    if (device_kernels >= 0) doc["device_kernels"] = device_kernels;
    std::printf("%s\n", JsonText(doc).c_str());
  } else if (timing) {
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

}  // namespace kiln::cli
