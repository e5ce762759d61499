// File: tests/compiled/jit_runner.h
//
// Test harness: compiles a whole module the way `kiln compile` will — the graph
// pass pipeline (ending with FuseOps), every fused primitive function lowered
// (lowering/lower.h) and JIT-compiled (codegen_llvm) — and runs its `main`
// by walking the fused graph and calling the kernels through the kernel ABI.
// The artifact/graph executor of runtime_c replaces the walking part later;
// this is what tests compare with the interpreter today.
//
//   KILN_ASSIGN_OR_RETURN(auto g, JitGraph::Compile(module, {}));
//   KILN_ASSIGN_OR_RETURN(interp::Value out, g->Run({interp::Value::Tensor(x)}));
#ifndef KILN_TESTS_COMPILED_JIT_RUNNER_H_
#define KILN_TESTS_COMPILED_JIT_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "interpreter/value.h"
#include "ir/module.h"
#include "kiln/kernel_abi.h"
#include "lowering/lower.h"

namespace kiln::testing {

struct JitOptions {
  int opt_level = 3;
  std::string target = "llvm";
  lowering::LowerOptions lower;
  // Fuse at most this many nodes per kernel (FuseOps max_depth); 0 = default.
  int max_fuse_depth = 0;
};

// Wall time of each compile phase.
struct CompileStats {
  double passes_ms = 0;   // graph pass pipeline (through FuseOps)
  double lower_ms = 0;    // compute + schedule + loop passes, all kernels
  double codegen_ms = 0;  // LLVM IR, optimization, JIT machine code
  int num_kernels = 0;
};

class JitGraph {
 public:
  static absl::StatusOr<std::unique_ptr<JitGraph>> Compile(const Module& module,
                                                           const JitOptions& options);
  ~JitGraph();

  // Runs `main` on `args`. ctx may be null (serial).
  absl::StatusOr<interp::Value> Run(const std::vector<interp::Value>& args,
                                    KilnKernelContext* ctx = nullptr) const;

  const Module& optimized() const { return optimized_; }
  const std::vector<lowering::LoweredFunc>& kernels() const { return kernels_; }
  const CompileStats& stats() const { return stats_; }

 private:
  struct Impl;
  JitGraph() = default;
  Module optimized_;
  std::vector<lowering::LoweredFunc> kernels_;
  CompileStats stats_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::testing

#endif  // KILN_TESTS_COMPILED_JIT_RUNNER_H_
