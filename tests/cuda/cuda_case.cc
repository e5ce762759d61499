// File: tests/cuda/cuda_case.cc
#include "tests/cuda/cuda_case.h"

#include "interpreter/interpreter.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "tests/compiled/compare.h"
#include "types/infer_type.h"

namespace kiln::testing {

absl::StatusOr<CudaCase> CompileCudaCase(const std::string& text, const std::string& name,
                                         const CudaCaseOptions& options) {
  CudaCase c;
  KILN_ASSIGN_OR_RETURN(Module parsed, ParseModule(text, name));
  KILN_ASSIGN_OR_RETURN(Module typed, types::InferType(parsed));
  KILN_ASSIGN_OR_RETURN(c.inputs, RandomInputs(typed, options.seed, options.lo, options.hi, 0, 3));
  KILN_ASSIGN_OR_RETURN(c.expected, interp::RunFunction(typed, "main", c.inputs));
  Module m = typed;
  passes::RegisterAllPasses();
  KILN_ASSIGN_OR_RETURN(passes::PassPtr pipeline, passes::DefaultPipeline(options.opt_level));
  passes::PassContext ctx;
  ctx.opt_level = options.opt_level;
  ctx.required_passes.insert("FuseOps");
  ctx.required_passes.insert("InferType");
  KILN_RETURN_IF_ERROR(pipeline->Run(&m, ctx).status());
  KILN_ASSIGN_OR_RETURN(c.fused, types::InferType(m));
  KILN_ASSIGN_OR_RETURN(codegen_cuda::CudaTarget t, codegen_cuda::ParseCudaTarget(options.target));
  codegen_cuda::CudaCompileOptions opts;
  opts.compile_ptx = codegen_cuda::NvrtcAvailable();
  KILN_ASSIGN_OR_RETURN(c.cuda, codegen_cuda::CompileModuleCuda(c.fused, t, opts));
  return c;
}

}  // namespace kiln::testing
