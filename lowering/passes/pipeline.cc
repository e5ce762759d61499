// File: lowering/passes/pipeline.cc
#include "lowering/passes/pipeline.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lowering/arith/simplify_pass.h"
#include "lowering/passes/loop_partition.h"
#include "lowering/passes/lower_intrinsics.h"
#include "lowering/passes/pass_util.h"
#include "lowering/passes/remove_no_op.h"
#include "lowering/passes/storage_flatten.h"
#include "lowering/passes/storage_rewrite.h"
#include "lowering/passes/unroll_loop.h"
#include "lowering/passes/vectorize_loop.h"
#include "lowering/passes/verify.h"

namespace kiln::tir::transform {

const char* const kDefaultLoopPipeline[13] = {
    "storage_flatten", "simplify",     "loop_partition",  "simplify",     "vectorize",
    "unroll",          "simplify",     "storage_rewrite", "remove_no_op", "lower_intrinsics",
    "simplify",        "remove_no_op", "verify",
};

namespace {

const char* const kPassNames[] = {"storage_flatten", "simplify",         "loop_partition",
                                  "vectorize",       "unroll",           "storage_rewrite",
                                  "remove_no_op",    "lower_intrinsics", "verify"};

// Adds the pass name to a message that does not start with it.
absl::Status WithPassName(absl::string_view pass, const absl::Status& st) {
  if (absl::StartsWith(st.message(), pass)) return st;
  return absl::Status(st.code(), absl::StrCat(pass, ": ", st.message()));
}

absl::StatusOr<LoopPass> SinglePass(absl::string_view name, const LoopPassOptions& o) {
  if (name == "storage_flatten") return LoopPass(StorageFlatten);
  if (name == "simplify") return LoopPass(arith::SimplifyPass);
  if (name == "loop_partition") return LoopPass(LoopPartition);
  if (name == "vectorize") {
    VectorizeOptions v;
    v.vector_width = o.vector_width;
    return LoopPass([v](const PrimFunc& f) { return VectorizeLoop(f, v); });
  }
  if (name == "unroll") {
    UnrollOptions u;
    u.auto_max_step = o.auto_unroll_max_step;
    return LoopPass([u](const PrimFunc& f) { return UnrollLoop(f, u); });
  }
  if (name == "storage_rewrite") return LoopPass(StorageRewrite);
  if (name == "remove_no_op") return LoopPass(RemoveNoOp);
  if (name == "lower_intrinsics") {
    LowerIntrinsicsOptions l;
    l.native_ldexp = o.native_ldexp;
    return LoopPass([l](const PrimFunc& f) { return LowerIntrinsics(f, l); });
  }
  if (name == "verify") return LoopPass(Verify);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown loop pass '", name, "'; valid names: ", absl::StrJoin(LoopPassNames(), ", ")));
}

}  // namespace

std::vector<std::string> LoopPassNames() {
  std::vector<std::string> names(std::begin(kPassNames), std::end(kPassNames));
  names.push_back("default");
  return names;
}

absl::StatusOr<PrimFunc> RunLoopPipeline(const PrimFunc& f, const LoopPassOptions& options) {
  if (!f) return absl::InvalidArgumentError("loop pipeline: null PrimFunc");
  for (const std::string& d : options.disabled) {
    if (std::find(std::begin(kPassNames), std::end(kPassNames), d) == std::end(kPassNames)) {
      return PassError("loop pipeline", f,
                       absl::StrCat("cannot disable unknown pass '", d,
                                    "'; valid names: ", absl::StrJoin(kPassNames, ", ")));
    }
  }
  PrimFunc cur = f;
  for (const char* name : kDefaultLoopPipeline) {
    if (std::find(options.disabled.begin(), options.disabled.end(), name) !=
        options.disabled.end()) {
      continue;
    }
    if (absl::string_view(name) == "verify" && !options.verify) continue;
    absl::StatusOr<LoopPass> pass = SinglePass(name, options);
    if (!pass.ok()) return pass.status();
    absl::StatusOr<PrimFunc> next = (*pass)(cur);
    if (!next.ok()) return WithPassName(name, next.status());
    cur = *std::move(next);
    if (options.after_each) options.after_each(name, cur);
  }
  return cur;
}

absl::StatusOr<LoopPass> GetLoopPass(absl::string_view name, const LoopPassOptions& options) {
  if (name == "default") {
    LoopPassOptions o = options;
    return LoopPass([o](const PrimFunc& f) { return RunLoopPipeline(f, o); });
  }
  absl::StatusOr<LoopPass> p = SinglePass(name, options);
  if (!p.ok()) return p.status();
  LoopPass inner = *p;
  std::string n(name);
  return LoopPass([inner, n](const PrimFunc& f) -> absl::StatusOr<PrimFunc> {
    absl::StatusOr<PrimFunc> r = inner(f);
    if (!r.ok()) return WithPassName(n, r.status());
    return r;
  });
}

}  // namespace kiln::tir::transform
