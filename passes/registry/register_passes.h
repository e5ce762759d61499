// File: passes/registry/register_passes.h
//
// Registers every graph pass under its stable name in PassRegistry::Global(),
// so pass lists can be built from text ("InferType,SimplifyExpr") and the
// default pipeline (passes/pipeline.h) can name its passes. Idempotent: call
// it once before ParsePassList or DefaultPipeline; later calls do nothing.
//
//   kiln::passes::RegisterAllPasses();
//   KILN_ASSIGN_OR_RETURN(PassPtr p, kiln::passes::ParsePassList("InferType,SimplifyExpr"));
#ifndef KILN_PASSES_REGISTRY_REGISTER_PASSES_H_
#define KILN_PASSES_REGISTRY_REGISTER_PASSES_H_

namespace kiln::passes {

void RegisterAllPasses();

}  // namespace kiln::passes

#endif  // KILN_PASSES_REGISTRY_REGISTER_PASSES_H_
