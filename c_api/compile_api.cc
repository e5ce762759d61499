// File: c_api/compile_api.cc
//
// kiln.h's compilation functions: kiln_model_compile (the artifact) and
// kiln_model_emit (one stage of compilation as text). Both read the same
// KilnCompileOptions and follow api_internal.h.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "c_api/api_internal.h"
#include "c_api/compiler.h"
#include "codegen_llvm/codegen_llvm.h"
#include "ir/printer.h"
#include "ir/status_macros.h"
#include "ir/tir_printer.h"
#include "lowering/lower.h"
#include "lowering/vm/compiler.h"
#include "passes/infra/pass.h"
#include "passes/registry/register_passes.h"

namespace {

using kiln::capi::ClearReport;
using kiln::capi::Guard;
using kiln::capi::MallocString;
using kiln::capi::ReadOptions;
using kiln::capi::RequireNonNull;
using kiln::capi::StringList;

double Ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The C++ options for `o`, after checking what can be checked before any
// work: tensor inputs, pass names, counts. (Symbolic input dims compile
// for the VM.)
absl::StatusOr<kiln::compiler::CompileOptions> CompileOptionsFromC(const KilnModel* model,
                                                                   const KilnCompileOptions& o) {
  if (!model->has_main) {
    return absl::InvalidArgumentError("the model has no function 'main' to compile");
  }
  absl::StatusOr<kiln::Function> main = model->module.Lookup("main");
  if (!main.ok()) return main.status();
  for (const kiln::Var& p : (*main)->params) {
    const kiln::Type t = p->checked_type() ? p->checked_type() : p->type_annotation;
    if (t && (t.as<kiln::TensorTypeNode>() != nullptr ||
              kiln::lowering::vm::SequenceElementType(model->module, t) != nullptr ||
              kiln::lowering::vm::IsOptionalType(model->module, t))) {
      continue;
    }
    return absl::InvalidArgumentError(
        absl::StrCat("input '", p->name_hint,
                     "' is not a tensor, a sequence of tensors or an optional of those; only those "
                     "inputs compile"));
  }
  if (o.opt_level < 0 || o.opt_level > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("options->opt_level must be 0, 1, 2 or 3, got ", o.opt_level));
  }
  if (o.num_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("options->num_threads must be >= 0, got ", o.num_threads));
  }
  kiln::compiler::CompileOptions c;
  c.opt_level = o.opt_level;
  if (o.target != nullptr) c.target = o.target;
  KILN_ASSIGN_OR_RETURN(
      c.disabled_passes,
      StringList("options->disabled_passes", o.disabled_passes, o.num_disabled_passes));
  kiln::passes::RegisterAllPasses();
  for (const std::string& name : c.disabled_passes) {
    // A pass this build leaves out is disabled already (docs/selective_builds.md).
    if (kiln::passes::PassRegistry::Global().IsAbsent(name)) continue;
    KILN_RETURN_IF_ERROR(kiln::passes::PassRegistry::Global().Create(name).status());
  }
  c.share_storage = o.no_memory_plan == 0;
  c.export_options.num_threads = o.num_threads;
  if (o.cc != nullptr) c.export_options.cc = o.cc;
  if (o.progress != nullptr) {
    KilnCompileProgressFn fn = o.progress;
    void* user_data = o.progress_user_data;
    c.progress = [fn, user_data](const char* phase, int done, int total) {
      fn(user_data, phase, done, total);
    };
  }
  return c;
}

// Fills what the caller's report struct has room for.
void FillReport(const KilnCompileReport& full, KilnCompileReport* report) {
  if (report == nullptr) return;
  KilnCompileReport copy = full;
  copy.struct_size = report->struct_size;
  std::memcpy(report, &copy, report->struct_size);
}

}  // namespace

extern "C" {

KilnStatus* kiln_model_compile(const KilnModel* model, const KilnCompileOptions* options,
                               const char* path, KilnCompileReport* report) {
  static const char kFn[] = "kiln_model_compile";
  if (KilnStatus* st = ClearReport(kFn, report)) return st;
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model}, {"path", path}})) return st;
  if (KilnStatus* st = kiln::capi::RequireLiveModel(kFn, model)) return st;
  KilnCompileOptions o;
  bool present = false;
  if (KilnStatus* st = ReadOptions(kFn, options, &o, &present)) return st;
  if (!present) o.opt_level = 3;
  return Guard(kFn, [&]() -> absl::Status {
    if (*path == '\0') return absl::InvalidArgumentError("path is empty");
    // Fail before compiling when the artifact could never be written.
    std::error_code ec;
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
      return absl::NotFoundError(absl::StrCat("cannot write '", path, "': directory '",
                                              parent.string(), "' does not exist"));
    }
    KILN_ASSIGN_OR_RETURN(kiln::compiler::CompileOptions c, CompileOptionsFromC(model, o));
    KILN_ASSIGN_OR_RETURN(kiln::compiler::CompileReport r,
                          kiln::compiler::CompileToLibrary(model->module, c, path));
    KilnCompileReport full;
    std::memset(&full, 0, sizeof full);
    full.passes_ms = r.passes_ms;
    full.lower_ms = r.lower_ms;
    full.plan_ms = r.plan_ms;
    full.codegen_ms = r.codegen_ms;
    full.link_ms = r.link_ms;
    full.num_fused_calls = r.num_fused_calls;
    full.num_kernels = r.num_kernels;
    full.arena_bytes = r.arena_bytes;
    full.naive_bytes = r.naive_bytes;
    full.file_bytes = r.file_bytes;
    FillReport(full, report);
    return absl::OkStatus();
  });
}

KilnStatus* kiln_model_emit(const KilnModel* model, const KilnCompileOptions* options,
                            KilnEmitKind kind, char** out_text, KilnCompileReport* report) {
  static const char kFn[] = "kiln_model_emit";
  if (out_text != nullptr) *out_text = nullptr;
  if (KilnStatus* st = ClearReport(kFn, report)) return st;
  if (KilnStatus* st = RequireNonNull(kFn, {{"model", model}, {"out_text", out_text}})) {
    return st;
  }
  if (KilnStatus* st = kiln::capi::RequireLiveModel(kFn, model)) return st;
  KilnCompileOptions o;
  bool present = false;
  if (KilnStatus* st = ReadOptions(kFn, options, &o, &present)) return st;
  if (!present) o.opt_level = 3;
  // A C caller may pass any int; in C++ even reading a value outside the
  // enum's range as KilnEmitKind is undefined (UBSan: "load of value 9, which
  // is not a valid value for type 'KilnEmitKind'"), so the check reads its bytes.
  static_assert(sizeof(KilnEmitKind) == sizeof(int), "KilnEmitKind is an int in the C ABI");
  int kind_value = 0;
  std::memcpy(&kind_value, &kind, sizeof kind_value);
  return Guard(kFn, [&]() -> absl::Status {
    if (kind_value < KILN_EMIT_GRAPH_IR || kind_value > KILN_EMIT_ASSEMBLY) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kind must be KILN_EMIT_GRAPH_IR, _LOOP_IR, _LLVM_IR or _ASSEMBLY (0-3), got ",
          kind_value));
    }
    KILN_ASSIGN_OR_RETURN(kiln::compiler::CompileOptions c, CompileOptionsFromC(model, o));
    const bool cuda = kiln::compiler::IsCudaTarget(c);
    kiln::codegen::Target target;
    if (!cuda) {
      KILN_ASSIGN_OR_RETURN(target, kiln::codegen::ParseTarget(c.target));
    }
    KilnCompileReport full;
    std::memset(&full, 0, sizeof full);
    std::string text;
    auto phase = [&](const char* name, int total) {
      if (c.progress) c.progress(name, 0, total);
    };
    auto t0 = std::chrono::steady_clock::now();
    phase("passes", 0);
    KILN_ASSIGN_OR_RETURN(kiln::Module fused, kiln::compiler::OptimizeForLowering(model->module, c));
    auto t1 = std::chrono::steady_clock::now();
    full.passes_ms = Ms(t0, t1);
    if (kind == KILN_EMIT_GRAPH_IR) {
      text = kiln::PrintModule(fused);
    } else if (cuda) {
      // The GPU's stages: its loop IR, CUDA C (in LLVM IR's place: what its
      // code generator emits) and PTX.
      phase("lower", 0);
      const kiln::compiler::CudaStage stage =
          kind == KILN_EMIT_LOOP_IR   ? kiln::compiler::CudaStage::kLoopIr
          : kind == KILN_EMIT_LLVM_IR ? kiln::compiler::CudaStage::kSource
                                      : kiln::compiler::CudaStage::kPtx;
      int kernels = 0;
      KILN_ASSIGN_OR_RETURN(text, kiln::compiler::EmitCuda(fused, c, stage, &kernels));
      full.num_kernels = kernels;
      full.lower_ms = Ms(t1, std::chrono::steady_clock::now());
    } else {
      phase("lower", 0);
      kiln::lowering::LowerOptions lower = c.lower;
      if (lower.vector_lanes <= 0) {
        KILN_ASSIGN_OR_RETURN(int bits, kiln::codegen::VectorRegisterBits(target));
        lower.vector_lanes = bits / 32;
      }
      if (!lower.target) {
        KILN_ASSIGN_OR_RETURN(kiln::lowering::CpuTarget cpu, kiln::codegen::DescribeCpu(target));
        cpu.vector_bits = lower.vector_lanes * 32;
        lower.target = cpu;
      }
      KILN_ASSIGN_OR_RETURN(kiln::lowering::LoweredModule lm,
                            kiln::lowering::LowerModule(fused, lower));
      std::vector<kiln::tir::PrimFunc> funcs;
      for (const kiln::lowering::LoweredFunc& k : lm.kernels) funcs.push_back(k.func);
      full.num_kernels = static_cast<int32_t>(funcs.size());
      auto t2 = std::chrono::steady_clock::now();
      full.lower_ms = Ms(t1, t2);
      if (kind != KILN_EMIT_LOOP_IR) phase("codegen", full.num_kernels);
      if (kind == KILN_EMIT_LOOP_IR) {
        for (const kiln::tir::PrimFunc& f : funcs) absl::StrAppend(&text, kiln::tir::ToText(f), "\n");
      } else if (kind == KILN_EMIT_LLVM_IR) {
        KILN_ASSIGN_OR_RETURN(text, kiln::codegen::EmitLLVMIR(funcs, target));
      } else {
        KILN_ASSIGN_OR_RETURN(text, kiln::codegen::EmitAssembly(funcs, target));
      }
      full.codegen_ms = kind == KILN_EMIT_LOOP_IR ? 0 : Ms(t2, std::chrono::steady_clock::now());
    }
    *out_text = MallocString(text);
    if (*out_text == nullptr) return absl::ResourceExhaustedError("out of memory");
    FillReport(full, report);
    return absl::OkStatus();
  });
}

}  // extern "C"
