// File: codegen_llvm/codegen_llvm.h
//
// The CPU code generator: loop IR (tir::PrimFunc) -> LLVM IR -> optimized
// machine code, as text (LLVM IR, assembly), as an ELF object file, or loaded
// into this process through LLVM's ORC JIT.
//
//   KILN_ASSIGN_OR_RETURN(Target t, ParseTarget("llvm -mcpu=native"));
//   KILN_ASSIGN_OR_RETURN(std::unique_ptr<JitModule> jit, JitModule::Create({f}, t));
//   KILN_ASSIGN_OR_RETURN(KilnKernelFn fn, jit->Lookup("fused_add"));
//   int32_t rc = fn(args, num_args, ctx);   // 0, or a KILN_KERNEL_E* code
//
// Every PrimFunc becomes one exported function named after it with the kernel
// ABI of runtime_c/include/kiln/kernel_abi.h:
//
//   int32_t name(DLTensor* const* args, int32_t num_args, KilnKernelContext* ctx);
//
// The generated code checks its arguments (count, NULL, ndim, dtype, static and
// symbolic dims, compact strides) and reports a mismatch through
// kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, "<func>: argument <i> (<name>): ...").
// Parallel loops run through kiln_parallel_launch; large temporaries come from
// kiln_workspace_alloc. codegen_llvm/README.md says what each loop-IR node
// becomes and what is not supported.
//
// Errors (an unknown target, an unsupported node or dtype, an LLVM verifier or
// code emission failure) are absl::Status values naming the PrimFunc; nothing
// here aborts. Compiles on different threads are independent (one LLVMContext
// each) and may run concurrently.
#ifndef KILN_CODEGEN_LLVM_CODEGEN_LLVM_H_
#define KILN_CODEGEN_LLVM_CODEGEN_LLVM_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/tir.h"
#include "kiln/kernel_abi.h"
#include "lowering/strategy/target.h"

namespace kiln::codegen {

// What to generate code for. ParseTarget fills every field: for the host, the
// triple, CPU name and CPU features of this machine.
struct Target {
  std::string triple;    // LLVM target triple, e.g. "x86_64-pc-linux-gnu"
  std::string cpu;       // LLVM CPU name, e.g. "skylake-avx512", "generic"
  std::string features;  // comma-separated "+feat,-feat" (LLVM -mattr syntax)
  int opt_level = 3;     // 0..3: the PassBuilder pipeline and the codegen level

  // "llvm -mtriple=... -mcpu=... [-mattr=...] -opt-level=N"; ParseTarget reads
  // it back to an equal Target.
  std::string ToString() const;
};

// Parses a target string:
//   "llvm"                                      the host (triple, cpu, features)
//   "llvm -mcpu=native"                         same
//   "llvm -mcpu=skylake-avx512"                 host triple, that CPU (its own features)
//   "llvm -mtriple=aarch64-linux-gnu -mattr=+neon"  cross target, cpu "generic"
//   "llvm -opt-level=2"                         0..3 (default 3)
// -mattr adds features (to the host's when the CPU is the host's). A kind other
// than "llvm", an unknown "-key", an unknown triple, CPU or feature, or a bad
// opt level is an InvalidArgument error that names the culprit.
absl::StatusOr<Target> ParseTarget(absl::string_view s);

// Width in bits of the target's SIMD registers used for float code: 512 with
// AVX-512, 256 with AVX/AVX2, 128 otherwise (SSE, NEON). Schedules split
// vectorized loops by bits / element bits.
absl::StatusOr<int> VectorRegisterBits(const Target& t);

// What the operator strategies need to know of the target (lowering/strategy):
// vector width (as VectorRegisterBits), vector register count (32 with
// AVX-512 and on AArch64, 16 otherwise), FMA, the architecture.
absl::StatusOr<lowering::CpuTarget> DescribeCpu(const Target& t);

// Optimized LLVM IR of the module, as text.
absl::StatusOr<std::string> EmitLLVMIR(const std::vector<tir::PrimFunc>& funcs, const Target& t);

// Assembly for the target, as text.
absl::StatusOr<std::string> EmitAssembly(const std::vector<tir::PrimFunc>& funcs, const Target& t);

// A relocatable (position-independent) object file for the target: ELF on
// Linux triples. Each PrimFunc is an exported symbol named func->name with the
// KilnKernelFn signature; the kiln_* runtime functions (//runtime_c:threadpool)
// and libm functions are undefined symbols for the linker to resolve.
absl::StatusOr<std::string> EmitObject(const std::vector<tir::PrimFunc>& funcs, const Target& t);

// The same code as several object files compiled on parallel threads (one
// shard of the functions each; at most `max_shards`, 0 = the hardware
// concurrency capped at 8, never more than there are functions; at least one
// object, possibly empty of functions). Compile time of a whole model: the
// functions are spread over the shards by EstimateCodegenCost, longest first
// to the least loaded shard.
// A kernel with more tensor parameters than kManyParamsKernel (a
// concatenation of thousands of tensors) is emitted in an object of its own
// at -opt-level=0: LLVM's optimizing register allocation is quadratic in the
// pointers such a kernel keeps live.
// `on_kernel`, when set, is called once per kernel after its machine code is
// emitted, from the shard's thread (possibly several threads at once: it must
// be thread-safe).
absl::StatusOr<std::vector<std::string>> EmitObjects(const std::vector<tir::PrimFunc>& funcs,
                                                     const Target& t, int max_shards = 0,
                                                     const std::function<void()>& on_kernel = {});
inline constexpr size_t kManyParamsKernel = 256;

// A rough, relative measure of LLVM's time over `f` (its loop-IR nodes, an
// unrolled loop's body once per iteration).
int64_t EstimateCodegenCost(const tir::PrimFunc& f);

// Compiled kernels loaded into this process (host targets only). The kiln_*
// runtime functions resolve to //runtime_c:threadpool's implementations linked
// into this binary; libm/libc functions resolve from the current process.
// Thread-safe: Lookup may be called and the kernels run from any thread.
class JitModule {
 public:
  // Compiles every function now (errors are reported here, not by Lookup).
  static absl::StatusOr<std::unique_ptr<JitModule>> Create(const std::vector<tir::PrimFunc>& funcs,
                                                           const Target& t);
  // The kernel named `name`; NotFound if the module has no such PrimFunc.
  // The pointer is valid while this JitModule lives.
  absl::StatusOr<KilnKernelFn> Lookup(absl::string_view name) const;

  ~JitModule();
  JitModule(const JitModule&) = delete;
  JitModule& operator=(const JitModule&) = delete;

 private:
  struct Impl;
  explicit JitModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::codegen

#endif  // KILN_CODEGEN_LLVM_CODEGEN_LLVM_H_
