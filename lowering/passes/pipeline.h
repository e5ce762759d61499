// File: lowering/passes/pipeline.h
//
// The loop-IR pipeline: what runs on a PrimFunc between scheduling
// (lowering/te) and the code generators (codegen_llvm), in one readable list,
// and a table of the passes by name (for `tir_opt --passes=...` and tests).
//
//   LoopPassOptions o;
//   o.auto_unroll_max_step = 16;
//   KILN_ASSIGN_OR_RETURN(tir::PrimFunc g, RunLoopPipeline(f, o));
//
// Default order (kDefaultLoopPipeline):
//   storage_flatten   multi-dim accesses -> flat indices
//   simplify          index arithmetic (lowering/arith SimplifyPass)
//   loop_partition    peel likely() guards of uneven splits
//   simplify
//   vectorize         kVectorized loops -> Ramp/Broadcast vector code
//   unroll            kUnrolled loops (and small serial ones, auto_unroll_max_step)
//   simplify
//   storage_rewrite   dead temporaries, reuse, hoisting out of serial loops
//   remove_no_op
//   lower_intrinsics  exp/log/tanh/sigmoid/erf/... -> float32 polynomials
//   simplify
//   remove_no_op
//   verify            VerifyPrimFunc (when options.verify)
#ifndef KILN_LOWERING_PASSES_PIPELINE_H_
#define KILN_LOWERING_PASSES_PIPELINE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/tir.h"

namespace kiln::tir::transform {

struct LoopPassOptions {
  // Chunk width of vectorized loops longer than 64 lanes (lanes of a 32-bit
  // element; see vectorize_loop.h).
  int vector_width = 16;
  // Serial innermost loops of at most this many steps are unrolled (0: off).
  int auto_unroll_max_step = 0;
  // lower_intrinsics: the target multiplies by 2^n in one instruction
  // (AVX-512's vscalefps; see lower_intrinsics.h).
  bool native_ldexp = false;
  // Run VerifyPrimFunc at the end.
  bool verify = true;
  // Names of passes to skip (every occurrence), from LoopPassNames().
  std::vector<std::string> disabled;
  // Called after every pass that ran, e.g. to dump the IR.
  std::function<void(absl::string_view pass, const PrimFunc& f)> after_each;
};

// The default order, by pass name.
extern const char* const kDefaultLoopPipeline[13];

absl::StatusOr<PrimFunc> RunLoopPipeline(const PrimFunc& f, const LoopPassOptions& options = {});

// One pass, with the given options applied.
using LoopPass = std::function<absl::StatusOr<PrimFunc>(const PrimFunc&)>;

// "storage_flatten", "simplify", "loop_partition", "vectorize", "unroll",
// "storage_rewrite", "remove_no_op", "lower_intrinsics", "verify", and
// "default" (the whole pipeline). An unknown name is an error that lists the
// valid ones.
absl::StatusOr<LoopPass> GetLoopPass(absl::string_view name, const LoopPassOptions& options = {});

// The valid names of GetLoopPass, in pipeline order ("default" last).
std::vector<std::string> LoopPassNames();

}  // namespace kiln::tir::transform

#endif  // KILN_LOWERING_PASSES_PIPELINE_H_
