// File: passes/pipeline.h
//
// The default optimization pipeline: one list, in pipeline.cc, of the passes
// `kiln opt --opt-level N` (and the compiler) runs, in order, as TVM's
// relay.build. Each pass is created by name from PassRegistry, and the
// Sequential skips those above the requested opt level. Call
// RegisterAllPasses() first (passes/registry).
//
//   RegisterAllPasses();
//   KILN_ASSIGN_OR_RETURN(PassPtr p, DefaultPipeline(3));
//   PassContext ctx; ctx.opt_level = 3;
//   KILN_ASSIGN_OR_RETURN(bool changed, p->Run(&module, ctx));
#ifndef KILN_PASSES_PIPELINE_H_
#define KILN_PASSES_PIPELINE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "passes/infra/pass.h"

namespace kiln::passes {

// The pass names of the default pipeline, in order.
const std::vector<std::string>& DefaultPipelineNames();

// A Sequential of DefaultPipelineNames() with the given opt level (0-3). In
// a selective build, the passes the build leaves out
// (PassRegistry::IsAbsent) are left out of it.
absl::StatusOr<PassPtr> DefaultPipeline(int opt_level);

}  // namespace kiln::passes

#endif  // KILN_PASSES_PIPELINE_H_
