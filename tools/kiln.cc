// The `kiln` command line (grows with each layer; see README.md).
//
//   kiln print FILE.kir [--types]   parse, optionally type-check, print the module
//   kiln check FILE.kir...          parse and type-check; report time and size
//   kiln opt FILE.kir [--passes=A,B] [--opt-level N] [--disable=A,B]
//            [--print-after-all] [--timing]
//                                   run passes (or the default pipeline) and
//                                   print the resulting module
//   kiln lower FILE.kir [--opt-level N] [--emit loop|llvm|asm] [--target T]
//            [--naive-schedule] [--timing]
//                                   optimize, fuse, lower every fused function
//                                   and print its loop IR (or LLVM IR / assembly)
//   kiln compile MODEL.{kir,onnx} -o MODEL.so [--input-shape N=D,D,...] [--target T] [--opt-level N] [--timing]
//                                   the whole compiler: one shared library per
//                                   model (docs/artifact.md)
//
// Errors go to stderr with a non-zero exit status; nothing aborts.
//
// TODO(issue 7): this tool uses //ir and //types directly; it moves behind the
// C API (c_api/) when that exists, as DESIGN.md §2 asks.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/ascii.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/tir_printer.h"
#include "ir/traversal.h"
#include "c_api/compiler.h"
#include "frontends/onnx/importer.h"
#include "codegen_llvm/codegen_llvm.h"
#include "lowering/lower.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "types/infer_type.h"

namespace {

constexpr const char kUsage[] =
    "usage: kiln <command> [options]\n"
    "\n"
    "commands:\n"
    "  print FILE.kir [--types]   parse a text-IR module and print it; with --types,\n"
    "                             type-check it and show every inferred type\n"
    "  check FILE.kir...          parse and type-check each file; print a summary\n"
    "  opt FILE.kir [options]     run graph passes and print the resulting module:\n"
    "      --passes=A,B,C         the passes to run, in order (default: the default\n"
    "                             pipeline for the opt level)\n"
    "      --opt-level N          0-3 (default 3); passes above it are skipped\n"
    "      --disable=A,B          never run these passes\n"
    "      --print-after-all      print the module after each pass\n"
    "      --timing               print each pass's time to stderr\n"
    "  lower FILE.kir [options]   optimize and fuse, then lower every fused function\n"
    "                             to a kernel and print it:\n"
    "      --emit loop|llvm|asm   loop IR (default), optimized LLVM IR, or assembly\n"
    "      --target T             e.g. \"llvm -mcpu=skylake-avx512\" (default: llvm, the host)\n"
    "      --opt-level N          0-3 (default 3)\n"
    "      --naive-schedule       every stage at root, serial loops (a reference)\n"
    "      --timing               print pass, lowering and codegen times to stderr\n"
    "  compile MODEL -o OUT.so [options]\n"
    "                             compile a model into one shared library (the\n"
    "                             kernels plus the executor plan and weights) that\n"
    "                             the C runtime (libkiln_runtime.so) loads; MODEL\n"
    "                             is a .kir file or an ONNX model (.onnx):\n"
    "      -o, --output OUT.so    the artifact to write (required)\n"
    "      --input-shape N=D,D    static shape for ONNX input N (repeatable)\n"
    "      --target T             as for lower (default: llvm, the host)\n"
    "      --opt-level N          0-3 (default 3)\n"
    "      --no-memory-plan       one storage per tensor (no sharing)\n"
    "      --timing               print phase times and sizes to stderr\n"
    "  help                       this message\n";

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "'"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `--input-shape` values: name=1,3,224,224 (symbolic dims of ONNX inputs).
std::map<std::string, std::vector<int64_t>> g_input_shapes;

absl::Status AddInputShape(const std::string& spec) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--input-shape must be name=d0,d1,..., got '", spec, "'"));
  }
  std::vector<int64_t> dims;
  for (absl::string_view d : absl::StrSplit(spec.substr(eq + 1), ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(d, &v) || v < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape ", spec, ": '", d, "' is not a dimension"));
    }
    dims.push_back(v);
  }
  g_input_shapes[spec.substr(0, eq)] = dims;
  return absl::OkStatus();
}

// A model: ONNX (by the .onnx extension) or the text IR.
absl::StatusOr<kiln::Module> Load(const std::string& path) {
  if (path.size() > 5 && path.ends_with(".onnx")) {
    kiln::onnx_frontend::ImportOptions o;
    o.input_shapes = g_input_shapes;
    return kiln::onnx_frontend::ImportOnnxFile(path, o);
  }
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

// Splits "A,B" into trimmed names; every name must be a registered pass.
absl::StatusOr<std::vector<std::string>> PassNames(const std::string& list) {
  std::vector<std::string> out;
  for (absl::string_view piece : absl::StrSplit(list, ',')) {
    absl::string_view name = absl::StripAsciiWhitespace(piece);
    if (name.empty()) continue;
    auto p = kiln::passes::PassRegistry::Global().Create(name);
    if (!p.ok()) return p.status();
    out.emplace_back(name);
  }
  return out;
}

int Opt(const std::vector<std::string>& args) {
  kiln::passes::RegisterAllPasses();
  std::string file, passes;
  bool have_passes = false, print_after_all = false, timing = false;
  int opt_level = 3;
  std::vector<std::string> disabled;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string level;
    if (a.starts_with("--passes=")) {
      passes = a.substr(9);
      have_passes = true;
    } else if (a == "--opt-level" && i + 1 < args.size()) {
      level = args[++i];
    } else if (a.starts_with("--opt-level=")) {
      level = a.substr(12);
    } else if (a.starts_with("--disable=")) {
      auto names = PassNames(a.substr(10));
      if (!names.ok()) return Fail(names.status());
      disabled.insert(disabled.end(), names->begin(), names->end());
    } else if (a == "--print-after-all") {
      print_after_all = true;
    } else if (a == "--timing") {
      timing = true;
    } else if (a.starts_with("-")) {
      std::fprintf(stderr, "kiln opt: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "kiln opt: more than one input file ('%s', '%s')\n", file.c_str(),
                   a.c_str());
      return 2;
    }
    if (!level.empty() && (!absl::SimpleAtoi(level, &opt_level) || opt_level < 0 || opt_level > 3)) {
      std::fprintf(stderr, "kiln opt: --opt-level must be 0, 1, 2 or 3, got '%s'\n", level.c_str());
      return 2;
    }
  }
  if (file.empty()) {
    std::fprintf(stderr, "kiln opt: no input file\n%s", kUsage);
    return 2;
  }
  absl::StatusOr<kiln::passes::PassPtr> pipeline =
      have_passes ? kiln::passes::ParsePassList(passes) : kiln::passes::DefaultPipeline(opt_level);
  if (!pipeline.ok()) return Fail(pipeline.status());
  auto m = Load(file);
  if (!m.ok()) return Fail(m.status());
  kiln::passes::PassContext ctx;
  ctx.opt_level = opt_level;
  ctx.disabled_passes.insert(disabled.begin(), disabled.end());
  auto timer = std::make_shared<kiln::passes::TimingInstrument>();
  if (timing) ctx.instruments.push_back(timer);
  if (print_after_all) ctx.instruments.push_back(std::make_shared<kiln::passes::IrDumpInstrument>(""));
  absl::StatusOr<bool> changed = (*pipeline)->Run(&*m, ctx);
  if (!changed.ok()) return Fail(changed.status());
  if (timing) std::fputs(timer->Report().c_str(), stderr);
  if (print_after_all) std::fputs("// ---- result ----\n", stdout);
  std::fputs(kiln::PrintModule(*m).c_str(), stdout);
  return 0;
}

int Lower(const std::vector<std::string>& args) {
  kiln::passes::RegisterAllPasses();
  std::string file, emit = "loop", target = "llvm";
  int opt_level = 3;
  bool timing = false;
  kiln::lowering::LowerOptions lopts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string level;
    if (a == "--emit" && i + 1 < args.size()) {
      emit = args[++i];
    } else if (a.starts_with("--emit=")) {
      emit = a.substr(7);
    } else if (a == "--target" && i + 1 < args.size()) {
      target = args[++i];
    } else if (a.starts_with("--target=")) {
      target = a.substr(9);
    } else if (a == "--opt-level" && i + 1 < args.size()) {
      level = args[++i];
    } else if (a.starts_with("--opt-level=")) {
      level = a.substr(12);
    } else if (a == "--naive-schedule") {
      lopts.naive_schedule = true;
    } else if (a == "--timing") {
      timing = true;
    } else if (a.starts_with("-")) {
      std::fprintf(stderr, "kiln lower: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "kiln lower: more than one input file ('%s', '%s')\n", file.c_str(),
                   a.c_str());
      return 2;
    }
    if (!level.empty() && (!absl::SimpleAtoi(level, &opt_level) || opt_level < 0 || opt_level > 3)) {
      std::fprintf(stderr, "kiln lower: --opt-level must be 0, 1, 2 or 3, got '%s'\n", level.c_str());
      return 2;
    }
  }
  if (emit != "loop" && emit != "llvm" && emit != "asm") {
    std::fprintf(stderr, "kiln lower: --emit must be loop, llvm or asm, got '%s'\n", emit.c_str());
    return 2;
  }
  if (file.empty()) {
    std::fprintf(stderr, "kiln lower: no input file\n%s", kUsage);
    return 2;
  }
  auto parsed_target = kiln::codegen::ParseTarget(target);
  if (!parsed_target.ok()) return Fail(parsed_target.status());
  if (lopts.vector_lanes <= 0) {
    auto bits = kiln::codegen::VectorRegisterBits(*parsed_target);
    if (!bits.ok()) return Fail(bits.status());
    lopts.vector_lanes = *bits / 32;
  }
  auto m = Load(file);
  if (!m.ok()) return Fail(m.status());
  auto pipeline = kiln::passes::DefaultPipeline(opt_level);
  if (!pipeline.ok()) return Fail(pipeline.status());
  kiln::passes::PassContext ctx;
  ctx.opt_level = opt_level;
  ctx.required_passes.insert("InferType");
  ctx.required_passes.insert("FuseOps");
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<bool> changed = (*pipeline)->Run(&*m, ctx);
  if (!changed.ok()) return Fail(changed.status());
  auto typed = kiln::types::InferType(*m);
  if (!typed.ok()) return Fail(typed.status());
  auto t1 = std::chrono::steady_clock::now();
  auto lowered = kiln::lowering::LowerModule(*typed, lopts);
  if (!lowered.ok()) return Fail(lowered.status());
  auto t2 = std::chrono::steady_clock::now();
  std::vector<kiln::tir::PrimFunc> funcs;
  for (const auto& k : lowered->kernels) funcs.push_back(k.func);
  std::string out;
  if (emit == "loop") {
    for (const auto& f : funcs) absl::StrAppend(&out, kiln::tir::ToText(f), "\n");
  } else {
    auto text = emit == "llvm" ? kiln::codegen::EmitLLVMIR(funcs, *parsed_target)
                               : kiln::codegen::EmitAssembly(funcs, *parsed_target);
    if (!text.ok()) return Fail(text.status());
    out = *text;
  }
  auto t3 = std::chrono::steady_clock::now();
  std::fputs(out.c_str(), stdout);
  if (timing) {
    auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    std::fprintf(stderr, "kiln lower: %zu kernels; passes %.1f ms, lowering %.1f ms, %s %.1f ms\n",
                 funcs.size(), ms(t1 - t0), ms(t2 - t1), emit == "loop" ? "printing" : "codegen",
                 ms(t3 - t2));
  }
  return 0;
}

int Compile(const std::vector<std::string>& args) {
  std::string file, output;
  bool timing = false;
  kiln::compiler::CompileOptions opts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string level;
    if ((a == "-o" || a == "--output") && i + 1 < args.size()) {
      output = args[++i];
    } else if (a.starts_with("--output=")) {
      output = a.substr(9);
    } else if (a == "--target" && i + 1 < args.size()) {
      opts.target = args[++i];
    } else if (a.starts_with("--target=")) {
      opts.target = a.substr(9);
    } else if (a == "--opt-level" && i + 1 < args.size()) {
      level = args[++i];
    } else if (a.starts_with("--opt-level=")) {
      level = a.substr(12);
    } else if (a == "--no-memory-plan") {
      opts.share_storage = false;
    } else if ((a == "--input-shape" && i + 1 < args.size()) || a.starts_with("--input-shape=")) {
      absl::Status st = AddInputShape(a == "--input-shape" ? args[++i] : a.substr(14));
      if (!st.ok()) return Fail(st);
    } else if (a == "--timing") {
      timing = true;
    } else if (a.starts_with("-")) {
      std::fprintf(stderr, "kiln compile: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    } else if (file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "kiln compile: more than one input file ('%s', '%s')\n", file.c_str(),
                   a.c_str());
      return 2;
    }
    if (!level.empty() &&
        (!absl::SimpleAtoi(level, &opts.opt_level) || opts.opt_level < 0 || opts.opt_level > 3)) {
      std::fprintf(stderr, "kiln compile: --opt-level must be 0, 1, 2 or 3, got '%s'\n",
                   level.c_str());
      return 2;
    }
  }
  if (file.empty()) {
    std::fprintf(stderr, "kiln compile: no input file\n%s", kUsage);
    return 2;
  }
  if (output.empty()) {
    std::fprintf(stderr, "kiln compile: no output file (-o MODEL.so)\n");
    return 2;
  }
  auto m = Load(file);
  if (!m.ok()) return Fail(m.status());
  auto report = kiln::compiler::CompileToLibrary(*m, opts, output);
  if (!report.ok()) return Fail(report.status());
  if (timing) {
    const auto& r = *report;
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
  if (cmd == "opt") return Opt(args);
  if (cmd == "lower") return Lower(args);
  if (cmd == "compile") return Compile(args);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "kiln: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
