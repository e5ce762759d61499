// File: lowering/te/bound.cc — InferBound.
#include "lowering/te/bound.h"

#include <unordered_set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "lowering/te/arith.h"
#include "lowering/te/message_passing.h"
#include "lowering/te/schedule_internal.h"

namespace kiln::te {
namespace {

using arith::IntSet;
using internal::DataFlow;
using internal::ScheduleState;

// One loop of an attach path and the stage that owns it.
struct PathEntry {
  IterVar iv;
  const Stage* stage = nullptr;
};

struct Context {
  const ScheduleState* st = nullptr;
  const DataFlow* flow = nullptr;
  std::unordered_map<const Stage*, std::vector<PathEntry>> attach_path;
};

int StorageRank(const std::string& scope) {
  if (scope == "shared") return 1;
  if (scope == "warp") return 2;
  if (scope == "local") return 3;
  return 0;  // global and anything else
}

// TVM's NeedRelax: does the region a consumer needs span this loop's whole range?
bool NeedRelax(const Stage& owner, const IterVar& iv, bool found_attach, const std::string& scope) {
  const IterVarAttr* a = owner.attr(iv);
  if (a == nullptr || a->for_kind != tir::ForKind::kThreadBinding || a->thread_tag.empty()) {
    return !found_attach;
  }
  const std::string& tag = a->thread_tag;
  const int thread_rank = absl::StartsWith(tag, "blockIdx") ? 0 : 1;
  if (scope == "warp" && tag == "threadIdx.x") return true;
  return StorageRank(scope) <= thread_rank;
}

absl::Status BuildAttachPaths(Context* ctx) {
  for (const auto& sp : ctx->st->stages) {
    const Stage* stage = sp.get();
    std::vector<PathEntry> path;
    std::unordered_set<const Stage*> visited;
    const Stage* s = stage;
    while (s->attach_type == AttachType::kScope) {
      if (!visited.insert(s).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "InferBound: compute_at of stage '", stage->name(), "' forms a cycle"));
      }
      const Stage* p = s->attach_stage;
      const IterVar& iv = s->attach_ivar;
      if (p == nullptr || !iv) {
        return absl::InvalidArgumentError(
            absl::StrCat("InferBound: stage '", s->name(), "' is computed at an unset loop"));
      }
      if (p->is_inlined()) {
        return absl::InvalidArgumentError(
            absl::StrCat("InferBound: stage '", s->name(), "' is computed at a loop of '",
                         p->name(), "', which is inlined and has no loops"));
      }
      if (s->is_output) {
        return absl::InvalidArgumentError(absl::StrCat(
            "InferBound: output stage '", s->name(), "' must be computed at the root"));
      }
      bool found = false;
      for (size_t i = p->leaf_iter_vars.size(); i != 0; --i) {
        const IterVar& leaf = p->leaf_iter_vars[i - 1];
        if (leaf == iv) found = true;
        if (found) path.push_back({leaf, p});
      }
      if (!found) {
        return absl::InvalidArgumentError(absl::StrCat(
            "InferBound: stage '", s->name(), "' is computed at '", iv->var->name, "' of '",
            p->name(), "', which is no longer one of its loops (split or fused after "
            "compute_at?); call compute_at again with a current leaf"));
      }
      s = p;
    }
    ctx->attach_path[stage] = std::move(path);
  }
  return absl::OkStatus();
}

// Collects the sets of indices with which `body` reads outputs of `producer`.
class RegionCollector {
 public:
  RegionCollector(const ScheduleState& st, const Stage* producer, arith::VarSetMap dom,
                  std::vector<std::vector<std::vector<IntSet>>>* tmap)
      : st_(st), producer_(producer), dom_(std::move(dom)), tmap_(tmap) {}

  void Visit(const PrimExpr& e) {
    if (!e) return;
    if (e->kind == tir::ExprKind::kLet) {
      Visit(e->args[1]);
      dom_[e->args[0].get()] = arith::EvalSet(e->args[1], dom_);
      Visit(e->args[2]);
      return;
    }
    if (e->kind == tir::ExprKind::kProducerLoad) {
      internal::ResolvedRead r = internal::Resolve(st_, e.get());
      if (r.stage == producer_ && r.value_index >= 0 &&
          r.value_index < static_cast<int>(tmap_->size())) {
        auto& dims = (*tmap_)[static_cast<size_t>(r.value_index)];
        for (size_t d = 0; d < dims.size() && d < e->args.size(); ++d) {
          dims[d].push_back(arith::EvalSet(e->args[d], dom_));
        }
      }
    }
    for (const PrimExpr& a : e->args) Visit(a);
  }

 private:
  const ScheduleState& st_;
  const Stage* producer_;
  arith::VarSetMap dom_;
  std::vector<std::vector<std::vector<IntSet>>>* tmap_;
};

absl::Status InferRootBound(const Stage& stage, const Context& ctx, BoundMap* rmap) {
  if (stage.is_placeholder() || stage.is_inlined()) return absl::OkStatus();
  if (stage.is_output) {
    for (const IterVar& iv : stage.root_iter_vars()) (*rmap)[iv] = iv->dom;
    return absl::OkStatus();
  }
  const Operation& op = stage.op;
  // tmap[output][dim]: the index sets read.
  std::vector<std::vector<std::vector<IntSet>>> tmap(
      static_cast<size_t>(op->num_outputs()),
      std::vector<std::vector<IntSet>>(op->axis.size()));
  const std::vector<PathEntry>& stage_attach = ctx.attach_path.at(&stage);
  auto is_attach = [&](const IterVar& iv) {
    return !stage_attach.empty() && stage_attach[0].iv == iv;
  };
  auto range_of = [&](const IterVar& iv, const Stage& owner, Range* r) -> absl::Status {
    auto it = rmap->find(iv);
    if (it == rmap->end()) {
      return absl::InternalError(absl::StrCat("InferBound: no range yet for loop '",
                                              iv->var->name, "' of stage '", owner.name(),
                                              "' (needed by '", stage.name(), "')"));
    }
    *r = it->second;
    return absl::OkStatus();
  };
  auto consumers_it = ctx.flow->consumers.find(&stage);
  if (consumers_it != ctx.flow->consumers.end()) {
    for (const Stage* c : consumers_it->second) {
      arith::VarSetMap relax;
      internal::SetMap up_state;
      bool found_attach = false;
      for (size_t i = c->leaf_iter_vars.size(); i != 0; --i) {
        const IterVar& iv = c->leaf_iter_vars[i - 1];
        if (is_attach(iv)) found_attach = true;
        Range r;
        KILN_RETURN_IF_ERROR(range_of(iv, *c, &r));
        if (tir::IsConstValue(r.extent, 1)) {
          up_state[iv] = IntSet::Point(r.min);
        } else if (!NeedRelax(*c, iv, found_attach, stage.scope)) {
          up_state[iv] = IntSet::Point(iv->var);
        } else {
          up_state[iv] = IntSet::FromRange(r);
        }
      }
      for (const PathEntry& pe : ctx.attach_path.at(c)) {
        if (is_attach(pe.iv)) found_attach = true;
        Range r;
        KILN_RETURN_IF_ERROR(range_of(pe.iv, *pe.stage, &r));
        if (NeedRelax(*pe.stage, pe.iv, found_attach, stage.scope)) {
          relax[pe.iv->var.get()] = IntSet::FromRange(r);
        }
      }
      if (!found_attach && !stage_attach.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "InferBound: stage '", stage.name(), "' is computed at '",
            stage_attach[0].iv->var->name, "' of '", stage_attach[0].stage->name(),
            "', but its consumer '", c->name(), "' does not run inside that loop"));
      }
      KILN_RETURN_IF_ERROR(internal::PassUpDomain(*c, *rmap, &up_state));
      arith::VarSetMap dom;
      for (const IterVar& iv : c->root_iter_vars()) {
        auto it = up_state.find(iv);
        Range r = it != up_state.end() ? it->second.CoverRange(iv->dom) : iv->dom;
        if (!relax.empty()) {
          PrimExpr last = arith::Simplify(tir::Sub(tir::Add(r.min, r.extent), tir::IntImm(1)));
          dom[iv->var.get()] = IntSet::Interval(arith::EvalSet(r.min, relax).min_value,
                                                arith::EvalSet(last, relax).max_value);
        } else {
          dom[iv->var.get()] = IntSet::FromRange(r);
        }
      }
      RegionCollector collect(*ctx.st, &stage, std::move(dom), &tmap);
      for (const PrimExpr& b : ctx.flow->bodies.at(c)) collect.Visit(b);
    }
  }
  for (size_t d = 0; d < op->axis.size(); ++d) {
    std::vector<IntSet> sets;
    for (const auto& out : tmap) sets.insert(sets.end(), out[d].begin(), out[d].end());
    const IterVar& iv = op->axis[d];
    (*rmap)[iv] = sets.empty() ? iv->dom : arith::Union(sets).CoverRange(iv->dom);
  }
  for (const IterVar& iv : op->reduce_axis) (*rmap)[iv] = iv->dom;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BoundMap> InferBound(const Schedule& s) {
  const ScheduleState& st = internal::StateOf(s);
  KILN_ASSIGN_OR_RETURN(DataFlow flow, internal::BuildDataFlow(st));
  Context ctx;
  ctx.st = &st;
  ctx.flow = &flow;
  KILN_RETURN_IF_ERROR(BuildAttachPaths(&ctx));
  BoundMap ret;
  for (size_t i = st.stages.size(); i != 0; --i) {
    const Stage& stage = *st.stages[i - 1];
    KILN_RETURN_IF_ERROR(InferRootBound(stage, ctx, &ret));
    if (stage.is_placeholder() || stage.is_inlined()) continue;
    KILN_RETURN_IF_ERROR(internal::PassDownDomain(stage, &ret, /*allow_missing=*/false));
  }
  for (auto& [iv, r] : ret) {
    r = Range{arith::Simplify(r.min), arith::Simplify(r.extent)};
  }
  return ret;
}

}  // namespace kiln::te
