// File: c_api/compiler.h  (C++; the driver behind kiln_compile and `kiln compile`)
//
// The whole compiler in one call: graph pass pipeline (through FuseOps),
// lowering of every fused function, the executor and memory plan, LLVM code
// generation and the artifact (.so) — DESIGN.md §1.
//
//   CompileOptions o;  o.target = "llvm -mcpu=native";
//   KILN_ASSIGN_OR_RETURN(CompileReport r, CompileToLibrary(module, o, "model.so"));
//
// Every failure is a status naming the phase and what failed; nothing aborts.
#ifndef KILN_C_API_COMPILER_H_
#define KILN_C_API_COMPILER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen_llvm/export.h"
#include "ir/module.h"
#include "lowering/graph_plan.h"
#include "lowering/lower.h"

namespace kiln::compiler {

struct CompileOptions {
  int opt_level = 3;               // graph pass pipeline level (0-3)
  std::string target = "llvm";     // codegen_llvm::ParseTarget syntax
  lowering::LowerOptions lower;    // vector_lanes 0 = from the target
  int max_fuse_depth = 0;          // FuseOps max_depth; 0 = default
  std::vector<std::string> disabled_passes;
  bool share_storage = true;       // memory planner on (false: naive plan)
  // Progress, or empty: each phase's start ("passes", "plan") with (0, 0);
  // "lower" as LowerOptions.progress reports it ((0, functions), then one
  // call per fused function); codegen and link as
  // codegen::ExportOptions.progress reports them (export_options.progress is
  // set from this one).
  std::function<void(const char* phase, int done, int total)> progress;
  codegen::ExportOptions export_options;
};

struct CompileReport {
  // "graph" (a static dataflow graph: the graph executor) or "vm" (dynamic
  // shapes, control flow, closures, ADTs: the VM, lowering/vm).
  std::string executor = "graph";
  double passes_ms = 0;
  double lower_ms = 0;
  double plan_ms = 0;
  double codegen_ms = 0;
  double link_ms = 0;
  int num_fused_calls = 0;  // tvm_op nodes in the graph
  int num_kernels = 0;      // distinct kernels
  int num_device_kernels = 0;  // of those, on the GPU (a cuda target's VM artifact)
  int64_t arena_bytes = 0;  // a session's shared intermediate storage
  int64_t naive_bytes = 0;  // the same without storage sharing
  uint64_t file_bytes = 0;
};

// Runs the graph passes through FuseOps and InferType (the module `main`
// comes out as calls of primitive functions).
absl::StatusOr<Module> OptimizeForLowering(const Module& module, const CompileOptions& options);

// The kernels of a "cuda ..." target at one stage of CompileToLibrary's
// pipeline (`fused`: OptimizeForLowering's result): their loop IR as lowered
// for the GPU, their CUDA C (the prelude and every kernel, what NVRTC
// compiles) or their PTX. `num_kernels` (may be null) receives the count.
enum class CudaStage { kLoopIr, kSource, kPtx };
absl::StatusOr<std::string> EmitCuda(const Module& fused, const CompileOptions& options,
                                     CudaStage stage, int* num_kernels);

// Whether options.target names the GPU ("cuda ...").
bool IsCudaTarget(const CompileOptions& options);

// The full pipeline; writes the artifact to `path`.
absl::StatusOr<CompileReport> CompileToLibrary(const Module& module, const CompileOptions& options,
                                               const std::string& path);

}  // namespace kiln::compiler

#endif  // KILN_C_API_COMPILER_H_
