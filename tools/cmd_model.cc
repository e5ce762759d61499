// File: tools/cmd_model.cc
//
// The compiler subcommands of `kiln`: print, check, opt, lower, compile and
// graph. They use the compiler's C++ libraries directly (not kiln.h) because
// they show what the C API does not expose: the loop IR, LLVM IR and
// assembly of every kernel, the module after each pass.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "c_api/compiler.h"
#include "c_api/graph_dot.h"
#include "codegen_llvm/codegen_llvm.h"
#include "ir/printer.h"
#include "ir/tir_printer.h"
#include "ir/traversal.h"
#include "lowering/lower.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "tools/cli.h"
#include "types/infer_type.h"

namespace kiln::cli {
namespace {

double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

constexpr const char kPrintHelp[] =
    "usage: kiln print MODEL [--types] [--input-shape NAME=D,D,...]\n"
    "\n"
    "Reads a model (.kir text IR, or .onnx) and prints it as text IR.\n"
    "  --types                 type-check and show every inferred type\n"
    "  --input-shape N=D,D     static shape for ONNX input N (repeatable)\n";

constexpr const char kCheckHelp[] =
    "usage: kiln check MODEL...\n"
    "\n"
    "Parses and type-checks each model; prints its functions, their types and\n"
    "the parse and type-check times.\n";

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
    "usage: kiln lower MODEL [--emit loop|llvm|asm] [--target T] [-O N] [--naive-schedule] [--timing]\n"
    "\n"
    "Optimizes and fuses the model, lowers every fused function to a kernel and\n"
    "prints it.\n"
    "  --emit loop|llvm|asm    loop IR (default), optimized LLVM IR, or assembly\n"
    "  --target T              e.g. \"llvm -mcpu=skylake-avx512\" (default: llvm, the host)\n"
    "  -O N, --opt-level N     0-3 (default 3)\n"
    "  --naive-schedule        every stage at root, serial loops (a reference)\n"
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
    "  --timing                print phase times and sizes to stderr\n";

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
    absl::Status st = ParseInputShape(spec, shapes);
    if (!st.ok()) {
      a.Usage(std::string(st.message()));
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

// Splits "A,B" into trimmed names; every name must be a registered pass.
absl::StatusOr<std::vector<std::string>> PassNames(const std::string& list) {
  std::vector<std::string> out;
  for (absl::string_view piece : absl::StrSplit(list, ',')) {
    absl::string_view name = absl::StripAsciiWhitespace(piece);
    if (name.empty()) continue;
    auto p = passes::PassRegistry::Global().Create(name);
    if (!p.ok()) return p.status();
    out.emplace_back(name);
  }
  return out;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

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
    auto m = LoadModel(f, shapes);
    if (!m.ok()) return Fail("print", m.status());
    if (types) {
      auto typed = types::InferType(*m);
      if (!typed.ok()) return Fail("print", typed.status());
      m = *typed;
    }
    std::fputs(PrintModule(*m, {.show_types = types}).c_str(), stdout);
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
    auto m = LoadModel(f, {});
    if (!m.ok()) return Fail("check", m.status());
    auto t1 = std::chrono::steady_clock::now();
    auto typed = types::InferType(*m);
    if (!typed.ok()) return Fail("check", typed.status());
    auto t2 = std::chrono::steady_clock::now();
    size_t calls = 0;
    for (const auto& [gv, fn] : typed->functions())
      for (const Expr& e : PostOrder(fn))
        if (e->kind == ExprKind::kCall) ++calls;
    std::printf("%s: %zu functions, %zu calls; parsed in %.2f ms, type-checked in %.2f ms\n",
                f.c_str(), typed->functions().size(), calls, Ms(t1 - t0), Ms(t2 - t1));
    for (const auto& [gv, fn] : typed->functions())
      std::printf("  @%s : %s\n", gv->name.c_str(), TypeToString(fn->checked_type()).c_str());
  }
  return 0;
}

int Opt(const std::vector<std::string>& args) {
  passes::RegisterAllPasses();
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
  auto disabled = PassNames(disable);
  if (!disabled.ok()) return Fail("opt", disabled.status());
  absl::StatusOr<passes::PassPtr> pipeline =
      !list.empty() ? passes::ParsePassList(list) : passes::DefaultPipeline(opt_level);
  if (!pipeline.ok()) return Fail("opt", pipeline.status());
  auto m = LoadModel(file, shapes);
  if (!m.ok()) return Fail("opt", m.status());
  passes::PassContext ctx;
  ctx.opt_level = opt_level;
  ctx.disabled_passes.insert(disabled->begin(), disabled->end());
  auto timer = std::make_shared<passes::TimingInstrument>();
  if (timing) ctx.instruments.push_back(timer);
  if (print_after_all) ctx.instruments.push_back(std::make_shared<passes::IrDumpInstrument>(""));
  absl::StatusOr<bool> changed = (*pipeline)->Run(&*m, ctx);
  if (!changed.ok()) return Fail("opt", changed.status());
  if (timing) std::fputs(timer->Report().c_str(), stderr);
  if (print_after_all) std::fputs("// ---- result ----\n", stdout);
  std::fputs(PrintModule(*m).c_str(), stdout);
  return 0;
}

namespace {

// The kernels of a fused module and their text at each level.
struct LoweredText {
  std::vector<tir::PrimFunc> funcs;
  double lower_ms = 0;
};

absl::StatusOr<LoweredText> LowerFused(const Module& fused, const codegen::Target& target,
                                       lowering::LowerOptions lopts) {
  if (lopts.vector_lanes <= 0) {
    auto bits = codegen::VectorRegisterBits(target);
    if (!bits.ok()) return bits.status();
    lopts.vector_lanes = *bits / 32;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto lowered = lowering::LowerModule(fused, lopts);
  if (!lowered.ok()) return lowered.status();
  LoweredText out;
  for (const auto& k : lowered->kernels) out.funcs.push_back(k.func);
  out.lower_ms = Ms(std::chrono::steady_clock::now() - t0);
  return out;
}

std::string LoopText(const std::vector<tir::PrimFunc>& funcs) {
  std::string out;
  for (const auto& f : funcs) absl::StrAppend(&out, tir::ToText(f), "\n");
  return out;
}

}  // namespace

int Lower(const std::vector<std::string>& args) {
  passes::RegisterAllPasses();
  Args a("lower", args, kLowerHelp);
  std::string emit = a.Value("--emit");
  if (emit.empty()) emit = "loop";
  std::string target = a.Value("--target");
  if (target.empty()) target = "llvm";
  int opt_level = a.Int("--opt-level", "-O", 3, 0, 3);
  lowering::LowerOptions lopts;
  lopts.naive_schedule = a.Flag("--naive-schedule");
  bool timing = a.Flag("--timing");
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(a, &shapes)) return 2;
  std::string file;
  if (!OneModel(a, &file)) return a.exit_code();
  if (emit != "loop" && emit != "llvm" && emit != "asm") {
    return a.Usage(absl::StrCat("--emit must be loop, llvm or asm, got '", emit, "'"));
  }
  auto parsed_target = codegen::ParseTarget(target);
  if (!parsed_target.ok()) return Fail("lower", parsed_target.status());
  auto m = LoadModel(file, shapes);
  if (!m.ok()) return Fail("lower", m.status());
  compiler::CompileOptions copts;
  copts.opt_level = opt_level;
  auto t0 = std::chrono::steady_clock::now();
  auto fused = compiler::OptimizeForLowering(*m, copts);
  if (!fused.ok()) return Fail("lower", fused.status());
  double passes_ms = Ms(std::chrono::steady_clock::now() - t0);
  auto lowered = LowerFused(*fused, *parsed_target, lopts);
  if (!lowered.ok()) return Fail("lower", lowered.status());
  auto t2 = std::chrono::steady_clock::now();
  std::string out;
  if (emit == "loop") {
    out = LoopText(lowered->funcs);
  } else {
    auto text = emit == "llvm" ? codegen::EmitLLVMIR(lowered->funcs, *parsed_target)
                               : codegen::EmitAssembly(lowered->funcs, *parsed_target);
    if (!text.ok()) return Fail("lower", text.status());
    out = *text;
  }
  double emit_ms = Ms(std::chrono::steady_clock::now() - t2);
  std::fputs(out.c_str(), stdout);
  if (timing) {
    std::fprintf(stderr, "kiln lower: %zu kernels; passes %.1f ms, lowering %.1f ms, %s %.1f ms\n",
                 lowered->funcs.size(), passes_ms, lowered->lower_ms,
                 emit == "loop" ? "printing" : "codegen", emit_ms);
  }
  return 0;
}

int Compile(const std::vector<std::string>& args) {
  Args a("compile", args, kCompileHelp);
  std::string output = a.Value("--output", "-o");
  compiler::CompileOptions opts;
  std::string target = a.Value("--target");
  if (!target.empty()) opts.target = target;
  opts.opt_level = a.Int("--opt-level", "-O", 3, 0, 3);
  opts.share_storage = !a.Flag("--no-memory-plan");
  std::string emit = a.Value("--emit");
  std::string dump_dir = a.Value("--dump-ir");
  bool timing = a.Flag("--timing");
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(a, &shapes)) return 2;
  std::string file;
  if (!OneModel(a, &file)) return a.exit_code();
  if (!emit.empty() && emit != "ir" && emit != "loop" && emit != "llvm" && emit != "asm") {
    return a.Usage(absl::StrCat("--emit must be ir, loop, llvm or asm, got '", emit, "'"));
  }
  if (output.empty() && emit.empty() && dump_dir.empty()) {
    return a.Usage("no output file (-o MODEL.so)");
  }
  auto parsed_target = codegen::ParseTarget(opts.target);
  if (!parsed_target.ok()) return Fail("compile", parsed_target.status());
  auto m = LoadModel(file, shapes);
  if (!m.ok()) return Fail("compile", m.status());

  if (!emit.empty() || !dump_dir.empty()) {
    // The intermediate forms, each computed once.
    auto fused = compiler::OptimizeForLowering(*m, opts);
    if (!fused.ok()) return Fail("compile", fused.status());
    auto lowered = LowerFused(*fused, *parsed_target, opts.lower);
    if (!lowered.ok()) return Fail("compile", lowered.status());
    auto stage = [&](const std::string& which) -> absl::StatusOr<std::string> {
      if (which == "ir") return PrintModule(*fused);
      if (which == "loop") return LoopText(lowered->funcs);
      if (which == "llvm") return codegen::EmitLLVMIR(lowered->funcs, *parsed_target);
      return codegen::EmitAssembly(lowered->funcs, *parsed_target);
    };
    if (!dump_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(dump_dir, ec);
      if (ec) {
        return Fail("compile", absl::InternalError(absl::StrCat(
                                   "cannot create directory '", dump_dir, "': ", ec.message())));
      }
      absl::Status st = WriteFile(dump_dir + "/0_input.kir", PrintModule(*m));
      const std::pair<const char*, const char*> files[] = {
          {"ir", "1_fused.kir"}, {"loop", "2_kernels.tir"}, {"llvm", "3_kernels.ll"},
          {"asm", "4_kernels.s"}};
      for (const auto& [which, name] : files) {
        if (!st.ok()) break;
        auto text = stage(which);
        st = text.ok() ? WriteFile(absl::StrCat(dump_dir, "/", name), *text) : text.status();
      }
      if (!st.ok()) return Fail("compile", st);
    }
    if (!emit.empty()) {
      auto text = stage(emit);
      if (!text.ok()) return Fail("compile", text.status());
      std::fputs(text->c_str(), stdout);
    }
    if (output.empty()) return 0;
  }

  auto report = compiler::CompileToLibrary(*m, opts, output);
  if (!report.ok()) return Fail("compile", report.status());
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

int Graph(const std::vector<std::string>& args) {
  Args a("graph", args, kGraphHelp);
  std::string format = a.Value("--format");
  if (format.empty()) format = "dot";
  std::string output = a.Value("--output", "-o");
  bool fused = a.Flag("--fused");
  compiler::CompileOptions opts;
  opts.opt_level = a.Int("--opt-level", "-O", 3, 0, 3);
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!ReadInputShapes(a, &shapes)) return 2;
  std::string file;
  if (!OneModel(a, &file)) return a.exit_code();
  if (format != "dot" && format != "svg") {
    return a.Usage(absl::StrCat("--format must be dot or svg, got '", format, "'"));
  }
  auto m = LoadModel(file, shapes);
  if (!m.ok()) return Fail("graph", m.status());
  absl::StatusOr<Module> drawn = fused ? compiler::OptimizeForLowering(*m, opts)
                                       : types::InferType(*m);
  if (!drawn.ok()) return Fail("graph", drawn.status());
  auto dot = ModuleToDot(*drawn);
  if (!dot.ok()) return Fail("graph", dot.status());
  if (format == "dot") {
    if (output.empty()) {
      std::fputs(dot->c_str(), stdout);
      return 0;
    }
    absl::Status st = WriteFile(output, *dot);
    return st.ok() ? 0 : Fail("graph", st);
  }
  // svg: Graphviz reads the dot text from a temporary file.
  std::string tmp = (std::filesystem::temp_directory_path() /
                     absl::StrCat("kiln_graph_", ::getpid(), ".dot")).string();
  absl::Status st = WriteFile(tmp, *dot);
  if (!st.ok()) return Fail("graph", st);
  std::string cmd = absl::StrCat("dot -Tsvg '", tmp, "'");
  if (!output.empty()) absl::StrAppend(&cmd, " -o '", output, "'");
  int rc = std::system(cmd.c_str());
  std::filesystem::remove(tmp);
  if (rc != 0) {
    return Fail("graph", absl::FailedPreconditionError(
                             "Graphviz `dot -Tsvg` failed (is Graphviz installed? Debian: "
                             "apt-get install graphviz; or use --format dot)"));
  }
  return 0;
}

}  // namespace kiln::cli
