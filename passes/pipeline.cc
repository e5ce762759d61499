#include "passes/pipeline.h"

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace kiln::passes {

// The default pass order (TVM's relay.build order). Each pass carries its own
// opt level (shown here); the Sequential skips those above the context's.
const std::vector<std::string>& DefaultPipelineNames() {
  static const auto* names = new std::vector<std::string>{
      "InferType",               // 0
      "SimplifyInference",       // 0  batch_norm / dropout to inference form
      "FoldConstant",            // 2  weights: constant subgraphs evaluated once
      "DynamicToStatic",         // 3  dyn.* with constant shapes -> static ops
      "Inline",                  // 1  functions marked Inline=1
      "SimplifyExpr",            // 3
      "EliminateCommonSubexpr",  // 3
      "FoldConstant",            // 2
      "FoldScaleAxis",           // 3  per-channel scales into conv/dense weights
      "CanonicalizeOps",         // 3  bias_add -> add
      // "ConvertLayout",        // 3  only when a desired layout is configured
      "AlterOpLayout",           // 3  NCHW{c}c blocked convolutions for x86
      "FoldConstant",            // 2  what FoldScaleAxis / CanonicalizeOps left
      "DeadCodeElimination",     // 1
      "InferType",               // 0  types for what follows (lowering)
      "FuseOps",                 // 1  always last
  };
  return *names;
}

absl::StatusOr<PassPtr> DefaultPipeline(int opt_level) {
  if (opt_level < 0 || opt_level > 3)
    return absl::InvalidArgumentError(
        absl::StrCat("opt level must be between 0 and 3, got ", opt_level));
  std::vector<PassPtr> passes;
  for (const std::string& name : DefaultPipelineNames()) {
    // A selective build's default pipeline is this order restricted to the
    // passes it holds (docs/selective_builds.md); a pass asked for by name
    // still says it is not in the build.
    if (PassRegistry::Global().IsAbsent(name)) continue;
    absl::StatusOr<PassPtr> p = PassRegistry::Global().Create(name);
    if (!p.ok())
      return absl::FailedPreconditionError(absl::StrCat(
          "default pipeline: ", p.status().message(), " (was RegisterAllPasses() called?)"));
    passes.push_back(*std::move(p));
  }
  return MakeSequential(absl::StrCat("O", opt_level), std::move(passes), opt_level);
}

}  // namespace kiln::passes
