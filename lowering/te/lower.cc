// File: lowering/te/lower.cc — LowerSchedule.
#include "lowering/te/lower.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "lowering/te/bound.h"
#include "lowering/te/schedule_ops.h"

namespace kiln::te {

absl::StatusOr<tir::PrimFunc> LowerSchedule(Schedule& s, const std::vector<Tensor>& args,
                                            absl::string_view name,
                                            const std::map<std::string, std::string>& attrs) {
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("LowerSchedule(", name, "): ", what));
  };
  KILN_RETURN_IF_ERROR(ValidateCompute(s.outputs()));
  BufferBinds binds;
  std::vector<tir::Buffer> params;
  // (stage, output index) of every argument so far: one look-up per argument
  // (a scan of the earlier ones made a kernel of n tensors quadratic).
  std::set<std::pair<const Stage*, int>> passed;
  for (size_t i = 0; i < args.size(); ++i) {
    const Tensor& t = args[i];
    if (!t.defined()) return error(absl::StrCat("argument ", i, " is an undefined tensor"));
    Stage* st = s[t];
    if (st == nullptr) {
      return error(absl::StrCat("argument ", i, " ('", t.name(),
                                "') is not computed or read by this schedule"));
    }
    if (!passed.emplace(st, t.value_index()).second) {
      return error(absl::StrCat("tensor '", t.name(), "' is passed twice"));
    }
    tir::Buffer b = tir::MakeBuffer(t.name(), t.dtype(), t.shape());
    binds.emplace_back(t, b);
    params.push_back(b);
  }
  KILN_ASSIGN_OR_RETURN(BoundMap bounds, InferBound(s));
  KILN_ASSIGN_OR_RETURN(tir::Stmt body, ScheduleOps(s, bounds, binds));
  return tir::MakePrimFunc(name, std::move(params), std::move(body), attrs);
}

}  // namespace kiln::te
