// File: codegen_cuda/compile.cc
#include "codegen_cuda/compile.h"

#include "ir/status_macros.h"

namespace kiln::codegen_cuda {

absl::StatusOr<CudaModule> CompileModuleCuda(const Module& fused, const CudaTarget& target,
                                             const CudaCompileOptions& options) {
  CudaModule m;
  lowering::LowerOptions lo;
  lo.gpu = target.gpu();
  KILN_ASSIGN_OR_RETURN(m.lowered, lowering::LowerModule(fused, lo));
  for (const lowering::LoweredFunc& k : m.lowered.kernels) {
    KILN_ASSIGN_OR_RETURN(CudaKernel ck, GenerateKernel(k.func, KernelOptionsFor(target)));
    m.kernels.push_back(std::move(ck));
  }
  m.source = ModuleSource(m.kernels);
  if (!options.compile_ptx) return m;
  KILN_ASSIGN_OR_RETURN(m.ptx, CompileToPtx(m.source, "kiln_module.cu", target));
  if (options.assemble && !FindPtxas().empty()) {
    KILN_ASSIGN_OR_RETURN(PtxasResult r, AssemblePtx(m.ptx, target));
    m.cubin = std::move(r.cubin);
    m.ptxas_log = std::move(r.log);
  }
  return m;
}

}  // namespace kiln::codegen_cuda
