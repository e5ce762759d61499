// File: lowering/testing/fuse_for_test.cc
#include "lowering/testing/fuse_for_test.h"

#include "ir/status_macros.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "types/infer_type.h"

namespace kiln::lowering::testing {

absl::StatusOr<Module> FuseForTest(const Module& module, int opt_level) {
  passes::RegisterAllPasses();
  Module m = module;
  KILN_ASSIGN_OR_RETURN(passes::PassPtr pipeline, passes::DefaultPipeline(opt_level));
  passes::PassContext ctx;
  ctx.opt_level = opt_level;
  ctx.required_passes.insert("FuseOps");
  ctx.required_passes.insert("InferType");
  KILN_RETURN_IF_ERROR(pipeline->Run(&m, ctx).status());
  return types::InferType(m);
}

}  // namespace kiln::lowering::testing
