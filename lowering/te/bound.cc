// File: lowering/te/bound.cc — InferBound.
#include "lowering/te/bound.h"

#include <unordered_set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"
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
                  std::vector<std::vector<std::vector<IntSet>>>* tmap,
                  const tir::VarMap* subst = nullptr, arith::VarSetMap relax = {})
      : st_(st),
        producer_(producer),
        dom_(std::move(dom)),
        tmap_(tmap),
        subst_(subst),
        relax_(std::move(relax)) {}

  void Visit(const PrimExpr& e) {
    if (!e) return;
    if (e->kind == tir::ExprKind::kLet) {
      Visit(e->args[1]);
      dom_[e->args[0].get()] = arith::EvalSet(
          subst_ == nullptr ? e->args[1] : arith::Simplify(tir::Substitute(e->args[1], *subst_)),
          dom_);
      Visit(e->args[2]);
      return;
    }
    if (e->kind == tir::ExprKind::kProducerLoad) {
      internal::ResolvedRead r = internal::Resolve(st_, e.get());
      if (r.stage == producer_ && r.value_index >= 0 &&
          r.value_index < static_cast<int>(tmap_->size())) {
        auto& dims = (*tmap_)[static_cast<size_t>(r.value_index)];
        for (size_t d = 0; d < dims.size() && d < e->args.size(); ++d) {
          if (subst_ == nullptr) {
            dims[d].push_back(arith::EvalSet(e->args[d], dom_));
          } else {
            IntSet set =
                arith::EvalSet(arith::Simplify(tir::Substitute(e->args[d], *subst_)), dom_);
            // Then the loops outside the attach point that the region spans.
            if (!relax_.empty() && set.HasLowerBound() && set.HasUpperBound()) {
              set = IntSet::Interval(arith::EvalSet(set.min_value, relax_).min_value,
                                     arith::EvalSet(set.max_value, relax_).max_value);
            }
            dims[d].push_back(set);
          }
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
  // When set, the consumer's root vars are replaced by these expressions of
  // its leaf loops (and the index simplified) before the set is evaluated.
  const tir::VarMap* subst_;
  arith::VarSetMap relax_;  // with subst_: loops relaxed after the leaves
};

// The width of a set when it is a constant; -1 otherwise.
int64_t ConstWidth(const IntSet& s) {
  if (!s.HasLowerBound() || !s.HasUpperBound()) return -1;
  int64_t w = 0;
  if (!tir::IsConstInt(arith::Simplify(tir::Sub(s.max_value, s.min_value)), &w)) return -1;
  return w;
}

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
      // The leaves' sets, for the exact evaluation below.
      arith::VarSetMap leaf_dom;
      for (const IterVar& iv : c->leaf_iter_vars) leaf_dom[iv->var.get()] = up_state.at(iv);
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
      bool fuses = false;
      for (const IterVarRelation& rel : c->relations) fuses |= rel.kind == RelationKind::kFuse;
      if (!fuses) {
        RegionCollector collect(*ctx.st, &stage, std::move(dom), &tmap);
        for (const PrimExpr& b : ctx.flow->bodies.at(c)) collect.Visit(b);
        continue;
      }
      // A consumer that fuses loops: PassUpDomain relaxes a fused range that
      // is not a whole number of rows of the inner loop to whole rows, so an
      // index that puts the pair back together (h * W + w, the pixel of a
      // flattened h * w tiled by MR) would be evaluated over that rectangle
      // (rows x W). So the indices are also evaluated with the roots written
      // as expressions of the leaf loops (PassUpIndex) and simplified, over
      // the leaves' sets; each dimension takes the narrower result when it
      // has a constant width (both sets hold every index read).
      std::vector<std::vector<std::vector<IntSet>>> by_root(tmap.size(),
          std::vector<std::vector<IntSet>>(op->axis.size()));
      std::vector<std::vector<std::vector<IntSet>>> by_leaf = by_root;
      {
        RegionCollector collect(*ctx.st, &stage, std::move(dom), &by_root);
        for (const PrimExpr& b : ctx.flow->bodies.at(c)) collect.Visit(b);
      }
      internal::IndexMap values;
      for (const IterVar& iv : c->leaf_iter_vars) values[iv] = iv->var;
      KILN_RETURN_IF_ERROR(internal::PassUpIndex(*c, *rmap, &values, /*allow_missing=*/true));
      tir::VarMap subst;
      bool complete = true;
      for (const IterVar& iv : c->root_iter_vars()) {
        auto it = values.find(iv);
        if (it == values.end()) {
          complete = false;
        } else {
          subst[iv->var.get()] = it->second;
        }
      }
      if (complete) {
        RegionCollector collect(*ctx.st, &stage, std::move(leaf_dom), &by_leaf, &subst, relax);
        for (const PrimExpr& b : ctx.flow->bodies.at(c)) collect.Visit(b);
      }
      for (size_t o = 0; o < tmap.size(); ++o) {
        for (size_t d = 0; d < op->axis.size(); ++d) {
          if (by_root[o][d].empty()) continue;
          const IntSet a = arith::Union(by_root[o][d]);
          const IntSet b = by_leaf[o][d].empty() ? a : arith::Union(by_leaf[o][d]);
          const int64_t wa = ConstWidth(a), wb = ConstWidth(b);
          tmap[o][d].push_back(wb >= 0 && (wa < 0 || wb < wa) ? b : a);
        }
      }
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
