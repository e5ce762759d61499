// File: c_api/compiler.cc
#include "c_api/compiler.h"

#include <chrono>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cuda/compile.h"
#include "codegen_cuda/device_code.h"
#include "codegen_cuda/nvrtc.h"
#include "codegen_llvm/codegen_llvm.h"
#include "ir/status_macros.h"
#include "ir/tir_printer.h"
#include "lowering/vm/batch_split.h"
#include "lowering/vm/compiler.h"
#include "passes/infra/pass.h"
#include "passes/pipeline.h"
#include "passes/registry/register_passes.h"
#include "types/infer_type.h"

namespace kiln::compiler {
namespace {

double Ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

namespace {

// The vector width and CPU description the strategies schedule for, from
// `target` where the options leave them unset.
absl::Status DescribeCpuTarget(const codegen::Target& target, lowering::LowerOptions* lower) {
  if (lower->vector_lanes <= 0) {
    KILN_ASSIGN_OR_RETURN(int bits, codegen::VectorRegisterBits(target));
    lower->vector_lanes = bits / 32;
  }
  if (!lower->target) {
    KILN_ASSIGN_OR_RETURN(lowering::CpuTarget cpu, codegen::DescribeCpu(target));
    cpu.vector_bits = lower->vector_lanes * 32;
    lower->target = cpu;
  }
  return absl::OkStatus();
}

// What a VM artifact's blob holds beside the code: the program (the VM
// section), its constants as PARAMS c0, c1, ..., main's input and output names.
absl::StatusOr<lowering::GraphPlan> VmPlan(const lowering::vm::VmCompiled& vmc) {
  lowering::GraphPlan plan;
  KILN_ASSIGN_OR_RETURN(plan.vm_program, lowering::vm::Encode(vmc.program));
  for (size_t i = 0; i < vmc.program.constants.size(); ++i) {
    plan.params.push_back({absl::StrCat("c", i), vmc.program.constants[i]});
  }
  plan.input_names = vmc.input_names;
  plan.output_names = vmc.output_names;
  return plan;
}

// A "cuda ..." target for a model that needs the VM (docs/vm.md, "On a
// GPU"): the program compiled as for the CPU, then every fused kernel
// lowered again for the GPU (codegen_cuda) into the artifact's DEVICE_CODE,
// a kernel with symbolic shapes with a launch computed from its arguments'
// extents; the VM launches those and calls the others (shape functions, any
// kernel the GPU path refuses) as host code of the .so, compiled for a
// generic CPU of the host's architecture.
absl::StatusOr<CompileReport> CompileCudaVm(const Module& fused, const CompileOptions& options,
                                            const codegen_cuda::CudaTarget& cuda,
                                            const std::string& path,
                                            std::chrono::steady_clock::time_point t0,
                                            std::chrono::steady_clock::time_point t1) {
  CompileReport r;
  KILN_ASSIGN_OR_RETURN(codegen::Target host, codegen::ParseTarget("llvm -mcpu=generic"));
  lowering::LowerOptions lower = options.lower;
  lower.gpu.reset();
  KILN_RETURN_IF_ERROR(DescribeCpuTarget(host, &lower));
  KILN_ASSIGN_OR_RETURN(lowering::vm::VmCompiled vmc, lowering::vm::CompileForVm(fused, lower));

  // The device kernels: the fused kernels the GPU path takes.
  lowering::LowerOptions gpu_lower;
  gpu_lower.gpu = cuda.gpu();
  const codegen_cuda::KernelOptions ko = codegen_cuda::KernelOptionsFor(cuda);
  codegen_cuda::CudaModule cm;
  std::vector<tir::PrimFunc> host_kernels;
  // A lowering the device code can take: the constants the program passes
  // (the CPU lowering's, in the same order), CUDA C for it, and a launch
  // DEVICE_CODE can describe (static, or a grid computed from shape
  // variables that are the arguments' extents).
  auto take = [&](absl::StatusOr<lowering::LoweredFunc> lowered,
                  const lowering::vm::VmCompiled::Source& src) {
    if (!lowered.ok() || lowered->constants.size() != src.constants.size()) return false;
    for (size_t c = 0; c < src.constants.size(); ++c) {
      if (lowered->constants[c].get() != src.constants[c].get()) return false;
    }
    absl::StatusOr<codegen_cuda::CudaKernel> ck = codegen_cuda::GenerateKernel(lowered->func, ko);
    if (!ck.ok() || !codegen_cuda::EncodeLaunch(*ck, lowered->func).ok()) return false;
    cm.lowered.kernels.push_back(*std::move(lowered));
    cm.kernels.push_back(*std::move(ck));
    return true;
  };
  for (size_t i = 0; i < vmc.kernels.size(); ++i) {
    const lowering::vm::VmCompiled::Source& src = vmc.sources[i];
    bool on_device = false;
    if (src.fn) {
      // A symbolic batch whose rows are independent: the static GPU schedule
      // of one row (tiled GEMMs, tensor cores, warp reductions) and a block
      // row per batch row (lowering/vm/batch_split.h); else the function
      // lowered with its symbolic shapes (the default schedule).
      absl::StatusOr<std::optional<lowering::LoweredFunc>> split =
          lowering::vm::LowerBatchSplit(src.fn, vmc.kernels[i]->name, gpu_lower);
      on_device = split.ok() && split->has_value() && take(**split, src);
      if (!on_device) {
        on_device = take(lowering::LowerPrimitive(src.fn, vmc.kernels[i]->name, gpu_lower), src);
      }
    }
    if (!on_device) host_kernels.push_back(vmc.kernels[i]);
  }
  cm.source = codegen_cuda::ModuleSource(cm.kernels);
  KILN_ASSIGN_OR_RETURN(cm.ptx, codegen_cuda::CompileToPtx(cm.source, "kiln_module.cu", cuda));
  if (!codegen_cuda::FindPtxas().empty()) {
    KILN_ASSIGN_OR_RETURN(codegen_cuda::PtxasResult pr, codegen_cuda::AssemblePtx(cm.ptx, cuda));
    cm.cubin = std::move(pr.cubin);
    cm.ptxas_log = std::move(pr.log);
  }
  auto t2 = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(lowering::GraphPlan plan, VmPlan(vmc));
  auto t3 = std::chrono::steady_clock::now();
  codegen::ExportOptions export_options = options.export_options;
  if (options.progress) export_options.progress = options.progress;
  KILN_ASSIGN_OR_RETURN(export_options.device_code, codegen_cuda::EncodeDeviceCode(cm, cuda));
  export_options.device_target = cuda.ToString();
  codegen::ExportStats es;
  KILN_RETURN_IF_ERROR(codegen::ExportLibrary(host_kernels, host, plan, path, export_options, &es));
  r.executor = "vm";
  r.passes_ms = Ms(t0, t1);
  r.lower_ms = Ms(t1, t2);
  r.plan_ms = Ms(t2, t3);
  r.codegen_ms = es.codegen_ms;
  r.link_ms = es.link_ms;
  for (const lowering::vm::VmFunction& f : vmc.program.functions) {
    for (const lowering::vm::VmInstr& in : f.instrs) r.num_fused_calls += in.op == KILN_VM_INVOKE_PACKED;
  }
  r.num_kernels = static_cast<int>(vmc.kernels.size());
  r.num_device_kernels = static_cast<int>(cm.kernels.size());
  r.file_bytes = es.file_bytes;
  return r;
}

// A "cuda ..." target: the kernels compiled for the GPU (codegen_cuda) into
// the artifact's DEVICE_CODE section, the graph plan as for the CPU, and a
// host library holding only the blob (docs/cuda.md).
absl::StatusOr<CompileReport> CompileCuda(const Module& module, const CompileOptions& options,
                                          const std::string& path) {
  CompileReport r;
  KILN_ASSIGN_OR_RETURN(codegen_cuda::CudaTarget cuda, codegen_cuda::ParseCudaTarget(options.target));
  auto phase = [&](const char* name) {
    if (options.progress) options.progress(name, 0, 0);
  };
  auto t0 = std::chrono::steady_clock::now();
  phase("passes");
  // `?` input dims named first, as for the CPU (the VM computes every shape).
  KILN_ASSIGN_OR_RETURN(Module named, lowering::vm::NameAnyInputDims(module));
  if (!types::InferType(named).ok()) named = module;
  KILN_ASSIGN_OR_RETURN(Module fused, OptimizeForLowering(named, options));
  auto t1 = std::chrono::steady_clock::now();
  if (lowering::vm::NeedsVm(fused)) {
    phase("lower");
    return CompileCudaVm(fused, options, cuda, path, t0, t1);
  }
  phase("lower");
  KILN_ASSIGN_OR_RETURN(codegen_cuda::CudaModule cm, codegen_cuda::CompileModuleCuda(fused, cuda));
  auto t2 = std::chrono::steady_clock::now();
  phase("plan");
  lowering::GraphPlanOptions popts;
  popts.share_storage = options.share_storage;
  KILN_ASSIGN_OR_RETURN(lowering::GraphPlan plan, lowering::PlanGraph(fused, cm.lowered, popts));
  auto t3 = std::chrono::steady_clock::now();
  codegen::ExportOptions export_options = options.export_options;
  if (options.progress) export_options.progress = options.progress;
  KILN_ASSIGN_OR_RETURN(export_options.device_code, codegen_cuda::EncodeDeviceCode(cm, cuda));
  export_options.device_target = cuda.ToString();
  // The host library holds no code: any x86-64 (or AArch64) CPU loads it.
  KILN_ASSIGN_OR_RETURN(codegen::Target host, codegen::ParseTarget("llvm -mcpu=generic"));
  codegen::ExportStats es;
  KILN_RETURN_IF_ERROR(codegen::ExportLibrary({}, host, plan, path, export_options, &es));
  r.passes_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  r.lower_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
  r.plan_ms = std::chrono::duration<double, std::milli>(t3 - t2).count();
  r.codegen_ms = es.codegen_ms;
  r.link_ms = es.link_ms;
  r.num_fused_calls = plan.num_op_nodes;
  r.num_kernels = static_cast<int>(cm.kernels.size());
  r.arena_bytes = plan.memory.shared_bytes;
  r.naive_bytes = plan.memory.naive_bytes;
  r.file_bytes = es.file_bytes;
  return r;
}

}  // namespace

absl::StatusOr<Module> OptimizeForLowering(const Module& module, const CompileOptions& options) {
  passes::RegisterAllPasses();
  if (options.opt_level < 0 || options.opt_level > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("opt level must be 0, 1, 2 or 3, got ", options.opt_level));
  }
  Module m = module;
  KILN_ASSIGN_OR_RETURN(passes::PassPtr pipeline, passes::DefaultPipeline(options.opt_level));
  passes::PassContext ctx;
  ctx.opt_level = options.opt_level;
  ctx.required_passes.insert("FuseOps");
  ctx.required_passes.insert("InferType");
  for (const std::string& p : options.disabled_passes) ctx.disabled_passes.insert(p);
  if (options.max_fuse_depth > 0) {
    ctx.SetConfig("relay.FuseOps.max_depth", static_cast<int64_t>(options.max_fuse_depth));
  }
  // AlterOpLayout's NCHWc blocking of conv2d is for CPU targets (its default
  // target is "llvm"); a GPU target keeps the model's NCHW/NHWC layouts, the
  // ones schedule_cuda's tiled conv2d template is written for.
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(options.target), "cuda")) {
    ctx.SetConfig("relay.AlterOpLayout.target", std::string("cuda"));
  }
  KILN_RETURN_IF_ERROR(pipeline->Run(&m, ctx).status());
  return types::InferType(m);
}

bool IsCudaTarget(const CompileOptions& options) {
  return absl::StartsWith(absl::StripLeadingAsciiWhitespace(options.target), "cuda");
}

absl::StatusOr<std::string> EmitCuda(const Module& fused, const CompileOptions& options,
                                     CudaStage stage, int* num_kernels) {
  KILN_ASSIGN_OR_RETURN(codegen_cuda::CudaTarget cuda, codegen_cuda::ParseCudaTarget(options.target));
  if (lowering::vm::NeedsVm(fused)) {
    return absl::UnimplementedError(
        absl::StrCat("target \"", options.target,
                     "\": this model needs the VM (symbolic shapes or control flow in main): "
                     "the GPU stages are shown for static models only; compile it to a .so (its "
                     "static kernels run on the GPU, docs/vm.md) or give the input shapes"));
  }
  codegen_cuda::CudaCompileOptions co;
  co.compile_ptx = stage == CudaStage::kPtx;
  co.assemble = false;
  KILN_ASSIGN_OR_RETURN(codegen_cuda::CudaModule cm, codegen_cuda::CompileModuleCuda(fused, cuda, co));
  if (num_kernels != nullptr) *num_kernels = static_cast<int>(cm.kernels.size());
  switch (stage) {
    case CudaStage::kLoopIr: {
      std::string text;
      for (const lowering::LoweredFunc& k : cm.lowered.kernels) {
        absl::StrAppend(&text, tir::ToText(k.func), "\n");
      }
      return text;
    }
    case CudaStage::kSource:
      return cm.source;
    case CudaStage::kPtx:
      return cm.ptx;
  }
  return absl::InternalError("EmitCuda: unknown stage");
}

absl::StatusOr<CompileReport> CompileToLibrary(const Module& module, const CompileOptions& options,
                                               const std::string& path) {
  if (IsCudaTarget(options)) {
    return CompileCuda(module, options, path);
  }
  CompileReport r;
  KILN_ASSIGN_OR_RETURN(codegen::Target target, codegen::ParseTarget(options.target));
  auto phase = [&](const char* name) {
    if (options.progress) options.progress(name, 0, 0);
  };
  auto t0 = std::chrono::steady_clock::now();
  phase("passes");
  // `?` input dims named first, so the VM can compute every output shape.
  // Names make the types more precise than the program's: one that lets two
  // inputs' `?` extents meet (a reference written with a value shaped like
  // another input, an ADT field or a closure parameter fed by both) no longer
  // type-checks with them, and is compiled with its `?` dims as written.
  KILN_ASSIGN_OR_RETURN(Module named, lowering::vm::NameAnyInputDims(module));
  if (!types::InferType(named).ok()) named = module;
  KILN_ASSIGN_OR_RETURN(Module fused, OptimizeForLowering(named, options));
  auto t1 = std::chrono::steady_clock::now();
  lowering::LowerOptions lower = options.lower;
  // "lower" starts with (0, functions) and counts each fused function.
  if (options.progress) {
    lower.progress = [&options](int done, int total) { options.progress("lower", done, total); };
  }
  KILN_RETURN_IF_ERROR(DescribeCpuTarget(target, &lower));
  if (lowering::vm::NeedsVm(fused)) {
    // Not a static dataflow graph: compiled for the VM (lowering/vm).
    phase("lower");
    KILN_ASSIGN_OR_RETURN(lowering::vm::VmCompiled vmc, lowering::vm::CompileForVm(fused, lower));
    auto t2 = std::chrono::steady_clock::now();
    phase("plan");
    KILN_ASSIGN_OR_RETURN(lowering::GraphPlan plan, VmPlan(vmc));
    auto t3 = std::chrono::steady_clock::now();
    codegen::ExportStats es;
    codegen::ExportOptions export_options = options.export_options;
    if (options.progress) export_options.progress = options.progress;
    KILN_RETURN_IF_ERROR(
        codegen::ExportLibrary(vmc.kernels, target, plan, path, export_options, &es));
    r.executor = "vm";
    r.passes_ms = Ms(t0, t1);
    r.lower_ms = Ms(t1, t2);
    r.plan_ms = Ms(t2, t3);
    r.codegen_ms = es.codegen_ms;
    r.link_ms = es.link_ms;
    r.num_fused_calls = 0;
    for (const lowering::vm::VmFunction& f : vmc.program.functions) {
      for (const lowering::vm::VmInstr& in : f.instrs) r.num_fused_calls += in.op == KILN_VM_INVOKE_PACKED;
    }
    r.num_kernels = static_cast<int>(vmc.kernels.size());
    r.file_bytes = es.file_bytes;
    return r;
  }
  KILN_ASSIGN_OR_RETURN(lowering::LoweredModule lm, lowering::LowerModule(fused, lower));
  auto t2 = std::chrono::steady_clock::now();
  phase("plan");
  lowering::GraphPlanOptions popts;
  popts.share_storage = options.share_storage;
  KILN_ASSIGN_OR_RETURN(lowering::GraphPlan plan, lowering::PlanGraph(fused, lm, popts));
  auto t3 = std::chrono::steady_clock::now();
  std::vector<tir::PrimFunc> funcs;
  for (const lowering::LoweredFunc& k : lm.kernels) funcs.push_back(k.func);
  codegen::ExportStats es;
  codegen::ExportOptions export_options = options.export_options;
  if (options.progress) export_options.progress = options.progress;
  KILN_RETURN_IF_ERROR(codegen::ExportLibrary(funcs, target, plan, path, export_options, &es));
  r.passes_ms = Ms(t0, t1);
  r.lower_ms = Ms(t1, t2);
  r.plan_ms = Ms(t2, t3);
  r.codegen_ms = es.codegen_ms;
  r.link_ms = es.link_ms;
  r.num_fused_calls = plan.num_op_nodes;
  r.num_kernels = static_cast<int>(funcs.size());
  r.arena_bytes = plan.memory.shared_bytes;
  r.naive_bytes = plan.memory.naive_bytes;
  r.file_bytes = es.file_bytes;
  return r;
}

}  // namespace kiln::compiler
