// File: codegen_llvm/backend.cc — targets, the optimization pipeline, IR /
// assembly / object emission and the ORC JIT (see codegen_llvm.h).
#include <algorithm>
#include <atomic>
#include <functional>
#include <thread>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/call_once.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "codegen_llvm/codegen_llvm.h"
#include "codegen_llvm/lower.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"
#include "kiln/kernel_abi.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Pass.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace kiln::codegen {
namespace {

void InitializeLLVM() {
  static absl::once_flag once;
  absl::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

std::string HostFeatures() {
  std::vector<std::string> features;
  for (const auto& kv : llvm::sys::getHostCPUFeatures()) {
    features.push_back(absl::StrCat(kv.getValue() ? "+" : "-", kv.getKey().str()));
  }
  std::sort(features.begin(), features.end());
  return absl::StrJoin(features, ",");
}

bool IsHostTriple(const llvm::Triple& t) {
  llvm::Triple host(llvm::sys::getProcessTriple());
  return t.getArch() == host.getArch() && t.getOS() == host.getOS();
}

llvm::CodeGenOptLevel CodeGenLevel(int opt_level) {
  switch (opt_level) {
    case 0:
      return llvm::CodeGenOptLevel::None;
    case 1:
      return llvm::CodeGenOptLevel::Less;
    case 2:
      return llvm::CodeGenOptLevel::Default;
    default:
      return llvm::CodeGenOptLevel::Aggressive;
  }
}

// Checks that LLVM knows the triple, the CPU and every feature of `mattr`.
absl::Status ValidateTarget(const Target& t, absl::string_view mattr) {
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, error);
  if (target == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen_llvm: unknown target triple \"", t.triple, "\": ", error));
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(t.triple, "", ""));
  if (sti == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen_llvm: no subtarget information for \"", t.triple, "\""));
  }
  if (!sti->isCPUStringValid(t.cpu)) {
    return absl::InvalidArgumentError(absl::StrCat("codegen_llvm: unknown CPU \"", t.cpu,
                                                   "\" for target triple \"", t.triple, "\""));
  }
  for (absl::string_view f : absl::StrSplit(mattr, ',', absl::SkipEmpty())) {
    if (f[0] != '+' && f[0] != '-') {
      return absl::InvalidArgumentError(
          absl::StrCat("codegen_llvm: feature \"", f, "\" in -mattr must start with '+' or '-'"));
    }
    absl::string_view name = f.substr(1);
    bool known = false;
    for (const llvm::SubtargetFeatureKV& kv : sti->getAllProcessorFeatures()) {
      if (name == absl::string_view(kv.Key)) known = true;
    }
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat("codegen_llvm: unknown CPU feature \"", name,
                                                     "\" for target triple \"", t.triple, "\""));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> MakeTargetMachine(const Target& t) {
  InitializeLLVM();
  if (t.opt_level < 0 || t.opt_level > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen_llvm: opt_level ", t.opt_level, " is not in 0..3"));
  }
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, error);
  if (target == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen_llvm: unknown target triple \"", t.triple, "\": ", error));
  }
  llvm::TargetOptions options;
  // Like TVM and C compilers' -ffp-contract=fast: a*b+c may become one FMA.
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(t.triple, t.cpu, t.features, options, llvm::Reloc::PIC_,
                                  std::nullopt, CodeGenLevel(t.opt_level)));
  if (tm == nullptr) {
    return absl::InternalError(
        absl::StrCat("codegen_llvm: cannot create a target machine for ", t.ToString()));
  }
  return tm;
}

// The PrimFunc that an LLVM function belongs to (kernels and their lambdas).
std::string OwnerOf(const std::vector<tir::PrimFunc>& funcs, llvm::StringRef fn) {
  std::string best;
  for (const tir::PrimFunc& f : funcs) {
    if (fn.starts_with(f->name) && f->name.size() > best.size()) best = f->name;
  }
  return best.empty() ? fn.str() : best;
}

// Runs the PassBuilder's default O<opt_level> pipeline with the target's TTI.
void Optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = opt_level >= 2;
  pto.SLPVectorization = opt_level >= 2;
  pto.LoopInterleaving = opt_level >= 2;
  pto.LoopUnrolling = opt_level >= 2;
  llvm::PassBuilder pb(&tm, pto);
  llvm::TargetLibraryInfoImpl tlii(llvm::Triple(m.getTargetTriple()));
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = llvm::OptimizationLevel::O3;
  if (opt_level == 1) level = llvm::OptimizationLevel::O1;
  if (opt_level == 2) level = llvm::OptimizationLevel::O2;
  llvm::ModulePassManager mpm = opt_level == 0
                                    ? pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

// Lowers, verifies and optimizes `funcs` into a new module of `ctx`.
absl::StatusOr<std::unique_ptr<llvm::Module>> CompileModule(const std::vector<tir::PrimFunc>& funcs,
                                                            const Target& t,
                                                            const llvm::DataLayout& layout,
                                                            llvm::TargetMachine& tm,
                                                            llvm::LLVMContext& ctx) {
  auto m = std::make_unique<llvm::Module>("kiln", ctx);
  m->setTargetTriple(t.triple);
  m->setDataLayout(layout);
  KILN_RETURN_IF_ERROR(internal::LowerPrimFuncs(funcs, t.cpu, t.features, m.get()));
  for (llvm::Function& f : *m) {
    if (f.isDeclaration()) continue;
    std::string message;
    llvm::raw_string_ostream os(message);
    if (llvm::verifyFunction(f, &os)) {
      os.flush();
      return absl::InternalError(
          absl::StrCat("codegen_llvm: PrimFunc ", OwnerOf(funcs, f.getName()),
                       ": LLVM verifier failed on ", f.getName().str(), ": ", message));
    }
  }
  std::string message;
  llvm::raw_string_ostream os(message);
  if (llvm::verifyModule(*m, &os)) {
    os.flush();
    return absl::InternalError(absl::StrCat("codegen_llvm: LLVM verifier: ", message));
  }
  Optimize(*m, tm, t.opt_level);
  return m;
}

// The last pass of the code-generation pipeline: the legacy pass manager
// runs every machine pass on one function before the next, so this sees
// each function once its machine code has been emitted, and reports the
// kernels (the externally visible definitions; a kernel's parallel lambdas
// are internal).
class KernelEmittedPass : public llvm::FunctionPass {
 public:
  static char ID;
  explicit KernelEmittedPass(const std::function<void()>* on_kernel)
      : llvm::FunctionPass(ID), on_kernel_(on_kernel) {}
  void getAnalysisUsage(llvm::AnalysisUsage& au) const override { au.setPreservesAll(); }
  bool runOnFunction(llvm::Function& f) override {
    if (!f.isDeclaration() && f.hasExternalLinkage()) (*on_kernel_)();
    return false;
  }

 private:
  const std::function<void()>* on_kernel_;
};
char KernelEmittedPass::ID = 0;

absl::StatusOr<std::string> EmitFile(const std::vector<tir::PrimFunc>& funcs, const Target& t,
                                     llvm::CodeGenFileType type,
                                     const std::function<void()>* on_kernel = nullptr) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, MakeTargetMachine(t));
  llvm::LLVMContext ctx;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> m,
                        CompileModule(funcs, t, tm->createDataLayout(), *tm, ctx));
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, type)) {
    return absl::UnimplementedError(
        absl::StrCat("codegen_llvm: target ", t.triple, " cannot emit ",
                     type == llvm::CodeGenFileType::ObjectFile ? "object files" : "assembly"));
  }
  if (on_kernel != nullptr && *on_kernel) pm.add(new KernelEmittedPass(on_kernel));
  pm.run(*m);
  return std::string(buffer.data(), buffer.size());
}

absl::Status FromLLVM(llvm::Error err, absl::string_view what) {
  if (!err) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("codegen_llvm: ", what, ": ", llvm::toString(std::move(err))));
}

}  // namespace

// ---- Targets ------------------------------------------------------------------

std::string Target::ToString() const {
  return absl::StrCat("llvm -mtriple=", triple, " -mcpu=", cpu,
                      features.empty() ? "" : absl::StrCat(" -mattr=", features),
                      " -opt-level=", opt_level);
}

absl::StatusOr<int> VectorRegisterBits(const Target& t) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, MakeTargetMachine(t));
  const llvm::MCSubtargetInfo* sti = tm->getMCSubtargetInfo();
  llvm::Triple triple(t.triple);
  if (triple.isX86() && sti != nullptr) {
    if (sti->checkFeatures("+avx512f")) return 512;
    if (sti->checkFeatures("+avx")) return 256;
  }
  return 128;  // SSE, NEON, generic
}

absl::StatusOr<lowering::CpuTarget> DescribeCpu(const Target& t) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, MakeTargetMachine(t));
  const llvm::MCSubtargetInfo* sti = tm->getMCSubtargetInfo();
  llvm::Triple triple(t.triple);
  lowering::CpuTarget c;
  c.arch = triple.getArchName().str();
  if (triple.isX86()) c.arch = triple.isArch64Bit() ? "x86_64" : "x86";
  KILN_ASSIGN_OR_RETURN(c.vector_bits, VectorRegisterBits(t));
  c.vector_registers = 16;
  c.fma = false;
  if (triple.isX86() && sti != nullptr) {
    if (sti->checkFeatures("+avx512f")) c.vector_registers = 32;
    c.fma = sti->checkFeatures("+fma") || sti->checkFeatures("+avx512f");
  } else if (triple.isAArch64()) {
    c.arch = "aarch64";
    c.vector_registers = 32;
    c.fma = true;
  }
  return c;
}

absl::StatusOr<Target> ParseTarget(absl::string_view s) {
  InitializeLLVM();
  std::vector<absl::string_view> tokens =
      absl::StrSplit(s, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  if (tokens.empty()) {
    return absl::InvalidArgumentError(
        "codegen_llvm: empty target string; expected \"llvm [-mtriple=...] [-mcpu=...] "
        "[-mattr=...] [-opt-level=N]\"");
  }
  if (tokens[0] != "llvm") {
    return absl::InvalidArgumentError(absl::StrCat("codegen_llvm: target kind \"", tokens[0],
                                                   "\" is not supported here; expected \"llvm\""));
  }
  std::string triple, cpu, mattr;
  Target t;
  for (size_t i = 1; i < tokens.size(); ++i) {
    absl::string_view tok = tokens[i];
    size_t eq = tok.find('=');
    absl::string_view key = tok.substr(0, eq);
    absl::string_view value = eq == absl::string_view::npos ? "" : tok.substr(eq + 1);
    if (key != "-mtriple" && key != "-mcpu" && key != "-mattr" && key != "-opt-level") {
      return absl::InvalidArgumentError(
          absl::StrCat("codegen_llvm: unknown target option \"", key, "\" in \"", s,
                       "\" (known: -mtriple, -mcpu, -mattr, -opt-level)"));
    }
    if (value.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("codegen_llvm: target option ", key, " needs a value (", key, "=...)"));
    }
    if (key == "-mtriple") {
      triple = std::string(value);
    } else if (key == "-mcpu") {
      cpu = std::string(value);
    } else if (key == "-mattr") {
      mattr = std::string(value);
    } else {
      int level = -1;
      if (!absl::SimpleAtoi(value, &level) || level < 0 || level > 3) {
        return absl::InvalidArgumentError(
            absl::StrCat("codegen_llvm: -opt-level must be 0, 1, 2 or 3, got \"", value, "\""));
      }
      t.opt_level = level;
    }
  }
  t.triple = triple.empty() ? llvm::sys::getProcessTriple() : llvm::Triple::normalize(triple);
  bool host = IsHostTriple(llvm::Triple(t.triple));
  bool host_cpu = cpu == "native" || (cpu.empty() && host);
  if (cpu == "native" && !host) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen_llvm: -mcpu=native needs the host "
                     "triple, not \"",
                     t.triple, "\""));
  }
  if (host_cpu) {
    t.cpu = llvm::sys::getHostCPUName().str();
    t.features = HostFeatures();
    if (!mattr.empty())
      t.features = t.features.empty() ? mattr : absl::StrCat(t.features, ",", mattr);
  } else {
    t.cpu = cpu.empty() ? "generic" : cpu;
    t.features = mattr;
  }
  KILN_RETURN_IF_ERROR(ValidateTarget(t, mattr));
  return t;
}

// ---- Emission -----------------------------------------------------------------

absl::StatusOr<std::string> EmitLLVMIR(const std::vector<tir::PrimFunc>& funcs, const Target& t) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, MakeTargetMachine(t));
  llvm::LLVMContext ctx;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> m,
                        CompileModule(funcs, t, tm->createDataLayout(), *tm, ctx));
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  os.flush();
  return text;
}

absl::StatusOr<std::string> EmitAssembly(const std::vector<tir::PrimFunc>& funcs, const Target& t) {
  return EmitFile(funcs, t, llvm::CodeGenFileType::AssemblyFile);
}

absl::StatusOr<std::string> EmitObject(const std::vector<tir::PrimFunc>& funcs, const Target& t) {
  return EmitFile(funcs, t, llvm::CodeGenFileType::ObjectFile);
}

namespace {

// A rough measure of how long LLVM takes over a kernel: its statement and
// expression nodes, an explicitly unrolled loop's body counted once per
// iteration (LLVM sees that many copies).
int64_t StmtCost(const tir::Stmt& s) {
  if (!s) return 0;
  int64_t own = 1;
  auto expr = [&own](const tir::PrimExpr& e) {
    if (e) tir::PostOrderVisit(e, [&own](const tir::ExprNode*) { ++own; });
  };
  expr(s->a);
  expr(s->b);
  for (const tir::PrimExpr& i : s->indices) expr(i);
  int64_t kids = 0;
  for (const tir::Stmt& b : s->body) kids += StmtCost(b);
  int64_t extent = 0;
  if (s->kind == tir::StmtKind::kFor && s->for_kind == tir::ForKind::kUnrolled &&
      tir::IsConstInt(s->b, &extent) && extent > 1) {
    kids *= extent;
  }
  return own + kids;
}

}  // namespace

int64_t EstimateCodegenCost(const tir::PrimFunc& f) { return 1 + StmtCost(f->body); }

absl::StatusOr<std::vector<std::string>> EmitObjects(const std::vector<tir::PrimFunc>& funcs,
                                                     const Target& t, int max_shards,
                                                     const std::function<void()>& on_kernel) {
  InitializeLLVM();
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t limit = max_shards > 0 ? static_cast<size_t>(max_shards) : std::min(hw, size_t{8});
  const size_t num_shards = std::max<size_t>(1, std::min(funcs.size(), limit));
  // Longest first, each to the least loaded shard (LPT): the shards finish
  // together instead of one waiting on a thread that drew the big kernels.
  std::vector<std::pair<int64_t, size_t>> order;
  for (size_t i = 0; i < funcs.size(); ++i) order.emplace_back(EstimateCodegenCost(funcs[i]), i);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::vector<tir::PrimFunc>> shards(num_shards);
  std::vector<Target> targets(num_shards, t);
  std::vector<int64_t> load(num_shards, 0);
  for (const auto& [cost, i] : order) {
    // A kernel of very many tensors (a concatenation of thousands) keeps a
    // pointer per tensor live through its loop: LLVM's optimizing register
    // allocator and scheduler take time quadratic in that. Such a kernel is
    // memory-bound copying; it gets a shard of its own at -opt-level=0 (the
    // fast register allocator): seconds, not many minutes.
    if (t.opt_level > 0 && funcs[i]->params.size() > kManyParamsKernel) {
      shards.push_back({funcs[i]});
      targets.push_back(t);
      targets.back().opt_level = 0;
      load.push_back(cost);
      continue;
    }
    const size_t s = static_cast<size_t>(std::min_element(load.begin(), load.begin() +
                                                          static_cast<long>(num_shards)) -
                                         load.begin());
    shards[s].push_back(funcs[i]);
    load[s] += cost;
  }
  std::vector<absl::StatusOr<std::string>> objects(shards.size(), std::string());
  {
    // One LLVMContext and TargetMachine per thread (EmitFile makes its own),
    // at most num_shards threads at a time.
    std::atomic<size_t> next{1};
    auto work = [&] {
      for (size_t i = next.fetch_add(1); i < shards.size(); i = next.fetch_add(1)) {
        objects[i] =
            EmitFile(shards[i], targets[i], llvm::CodeGenFileType::ObjectFile, &on_kernel);
      }
    };
    std::vector<std::thread> threads;
    for (size_t i = 1; i < num_shards; ++i) threads.emplace_back(work);
    objects[0] = EmitFile(shards[0], targets[0], llvm::CodeGenFileType::ObjectFile, &on_kernel);
    work();
    for (std::thread& th : threads) th.join();
  }
  std::vector<std::string> out;
  for (absl::StatusOr<std::string>& o : objects) {
    if (!o.ok()) return o.status();
    out.push_back(std::move(*o));
  }
  return out;
}

// ---- JIT ------------------------------------------------------------------------

struct JitModule::Impl {
  // Materialization errors (e.g. an undefined external function) go to the
  // session's error reporter rather than to the failing lookup: keep them.
  struct ErrorLog {
    absl::Mutex mu;
    std::string text ABSL_GUARDED_BY(mu);
  };
  std::shared_ptr<ErrorLog> errors = std::make_shared<ErrorLog>();
  std::unique_ptr<llvm::orc::LLJIT> jit;
  absl::flat_hash_map<std::string, KilnKernelFn> kernels;
};

JitModule::JitModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitModule::~JitModule() = default;

absl::StatusOr<std::unique_ptr<JitModule>> JitModule::Create(
    const std::vector<tir::PrimFunc>& funcs, const Target& t) {
  InitializeLLVM();
  llvm::Triple triple(t.triple);
  if (!IsHostTriple(triple)) {
    return absl::InvalidArgumentError(
        absl::StrCat("codegen_llvm: the JIT runs host code only; target triple \"", t.triple,
                     "\" is not the host's \"", llvm::sys::getProcessTriple(), "\""));
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, MakeTargetMachine(t));

  llvm::orc::JITTargetMachineBuilder jtmb(triple);
  jtmb.setCPU(t.cpu);
  std::vector<std::string> features = absl::StrSplit(t.features, ',', absl::SkipEmpty());
  jtmb.addFeatures(features);
  jtmb.setCodeGenOptLevel(CodeGenLevel(t.opt_level));
  jtmb.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Fast;
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit) return FromLLVM(jit.takeError(), "cannot create the JIT");
  auto impl = std::make_unique<Impl>();
  impl->jit = std::move(*jit);
  llvm::orc::LLJIT& j = *impl->jit;
  j.getExecutionSession().setErrorReporter([log = impl->errors](llvm::Error err) {
    std::string text = llvm::toString(std::move(err));
    absl::MutexLock lock(&log->mu);
    absl::StrAppend(&log->text, log->text.empty() ? "" : "; ", text);
  });

  // Optimization and machine-code generation dominate compile time; they run
  // in parallel on shards of the kernels, each shard becoming an object file
  // that the JIT only links.
  (void)tm;
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> objects, EmitObjects(funcs, t, 0));
  const size_t num_shards = objects.size();

  // The runtime functions of //runtime_c:threadpool linked into this binary,
  // as absolute symbols (no reliance on the dynamic symbol table).
  llvm::orc::SymbolMap runtime;
  auto add = [&](const char* name, llvm::orc::ExecutorAddr addr) {
    runtime[j.mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef(
        addr, llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  };
  add("kiln_parallel_launch", llvm::orc::ExecutorAddr::fromPtr(&kiln_parallel_launch));
  add("kiln_parallel_num_threads", llvm::orc::ExecutorAddr::fromPtr(&kiln_parallel_num_threads));
  add("kiln_workspace_alloc", llvm::orc::ExecutorAddr::fromPtr(&kiln_workspace_alloc));
  add("kiln_workspace_free", llvm::orc::ExecutorAddr::fromPtr(&kiln_workspace_free));
  add("kiln_kernel_error", llvm::orc::ExecutorAddr::fromPtr(&kiln_kernel_error));
  add("kiln_kernel_last_error", llvm::orc::ExecutorAddr::fromPtr(&kiln_kernel_last_error));
  KILN_RETURN_IF_ERROR(
      FromLLVM(j.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(runtime))),
               "cannot define the runtime symbols"));
  // libm / libc (and compiler-support functions) from this process.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      j.getDataLayout().getGlobalPrefix());
  if (!process) return FromLLVM(process.takeError(), "cannot search this process's symbols");
  j.getMainJITDylib().addGenerator(std::move(*process));

  for (size_t i = 0; i < num_shards; ++i) {
    KILN_RETURN_IF_ERROR(FromLLVM(
        j.addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(objects[i],
                                                             absl::StrCat("kiln_shard", i))),
        "cannot add an object to the JIT"));
  }
  for (const tir::PrimFunc& f : funcs) {
    llvm::Expected<llvm::orc::ExecutorAddr> addr = j.lookup(f->name);
    if (!addr) {
      std::string reported;
      {
        absl::MutexLock lock(&impl->errors->mu);
        reported = impl->errors->text;
      }
      return FromLLVM(addr.takeError(),
                      absl::StrCat("PrimFunc ", f->name, ": JIT compilation failed",
                                   reported.empty() ? "" : absl::StrCat(" (", reported, ")")));
    }
    impl->kernels[f->name] = addr->toPtr<KilnKernelFn>();
  }
  return std::unique_ptr<JitModule>(new JitModule(std::move(impl)));
}

absl::StatusOr<KilnKernelFn> JitModule::Lookup(absl::string_view name) const {
  auto it = impl_->kernels.find(name);
  if (it == impl_->kernels.end()) {
    return absl::NotFoundError(
        absl::StrCat("codegen_llvm: the JIT module has no kernel \"", name, "\""));
  }
  return it->second;
}

}  // namespace kiln::codegen
