// File: lowering/te/message_passing.cc
#include "lowering/te/message_passing.h"

#include "absl/strings/str_cat.h"

namespace kiln::te::internal {
namespace {

using arith::IntSet;
using arith::Simplify;

absl::Status Missing(const Stage& s, const IterVar& iv, absl::string_view what) {
  return absl::InternalError(absl::StrCat("stage '", s.name(), "': ", what, ": no range for '",
                                          iv ? iv->var->name : "<null>", "'"));
}

PrimExpr Zero() { return tir::IntImm(0); }

bool IsZero(const PrimExpr& e) { return tir::IsConstValue(e, 0); }

// IterVars with a thread-bound leaf below them (their splits are not tightened).
FlagMap DominatingThreads(const Stage& s) {
  FlagMap flag;
  for (const auto& [iv, a] : s.iter_var_attrs) {
    if (a.for_kind == tir::ForKind::kThreadBinding) flag[iv] = 1;
  }
  PassUpBitMaskOr(s, &flag);
  return flag;
}

}  // namespace

absl::Status PassDownDomain(const Stage& s, RangeMap* dom, bool allow_missing) {
  FlagMap threads = DominatingThreads(s);
  auto dominated = [&](const IterVar& iv) {
    auto it = threads.find(iv);
    return it != threads.end() && it->second != 0;
  };
  for (const IterVarRelation& r : s.relations) {
    switch (r.kind) {
      case RelationKind::kSplit: {
        auto it = dom->find(r.parent);
        if (it == dom->end()) {
          if (allow_missing) continue;
          return Missing(s, r.parent, "split");
        }
        const Range parent = it->second;
        auto tighten = [&](const IterVar& iv, const PrimExpr& f) -> PrimExpr {
          if (dominated(iv) || allow_missing || IsZero(parent.extent)) return f;
          return arith::ProveLT(parent.extent, f) ? Simplify(parent.extent) : f;
        };
        if (r.factor) {
          (*dom)[r.inner] = Range{Zero(), tighten(r.inner, r.factor)};
          (*dom)[r.outer] = Range{Zero(), arith::CeilDiv(parent.extent, r.factor)};
        } else {
          (*dom)[r.outer] = Range{Zero(), tighten(r.outer, r.nparts)};
          (*dom)[r.inner] = Range{Zero(), arith::CeilDiv(parent.extent, r.nparts)};
        }
        break;
      }
      case RelationKind::kFuse: {
        auto o = dom->find(r.outer);
        auto i = dom->find(r.inner);
        if (o == dom->end() || i == dom->end()) {
          if (allow_missing) continue;
          return Missing(s, o == dom->end() ? r.outer : r.inner, "fuse");
        }
        (*dom)[r.fused] = Range{Zero(), Simplify(tir::Mul(o->second.extent, i->second.extent))};
        break;
      }
      case RelationKind::kRebase: {
        auto it = dom->find(r.parent);
        if (it == dom->end()) {
          if (allow_missing) continue;
          return Missing(s, r.parent, "rebase");
        }
        (*dom)[r.rebased] = Range{Zero(), it->second.extent};
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PassUpIndex(const Stage& s, const RangeMap& dom, IndexMap* state, bool allow_missing) {
  for (size_t k = s.relations.size(); k != 0; --k) {
    const IterVarRelation& r = s.relations[k - 1];
    switch (r.kind) {
      case RelationKind::kSplit: {
        auto o = state->find(r.outer);
        auto i = state->find(r.inner);
        if (o == state->end() || i == state->end()) {
          if (allow_missing) continue;
          return Missing(s, r.parent, "index of split");
        }
        auto di = dom.find(r.inner);
        auto dp = dom.find(r.parent);
        if (di == dom.end() || dp == dom.end()) return Missing(s, r.parent, "index of split");
        PrimExpr v = o->second * di->second.extent + i->second;
        if (!IsZero(dp->second.min)) v = v + dp->second.min;
        (*state)[r.parent] = v;
        break;
      }
      case RelationKind::kFuse: {
        auto f = state->find(r.fused);
        if (f == state->end()) {
          if (allow_missing) continue;
          return Missing(s, r.fused, "index of fuse");
        }
        auto di = dom.find(r.inner);
        auto dout = dom.find(r.outer);
        if (di == dom.end() || dout == dom.end()) return Missing(s, r.fused, "index of fuse");
        PrimExpr factor = di->second.extent;
        PrimExpr outer = tir::FloorDiv(f->second, factor);
        PrimExpr inner = tir::FloorMod(f->second, factor);
        if (tir::IsConstValue(factor, 1)) {
          outer = f->second;
          inner = Zero();
        }
        if (!IsZero(dout->second.min)) outer = outer + dout->second.min;
        if (!IsZero(di->second.min)) inner = inner + di->second.min;
        (*state)[r.outer] = outer;
        (*state)[r.inner] = inner;
        break;
      }
      case RelationKind::kRebase: {
        auto rb = state->find(r.rebased);
        if (rb == state->end()) {
          if (allow_missing) continue;
          return Missing(s, r.rebased, "index of rebase");
        }
        auto dp = dom.find(r.parent);
        if (dp == dom.end()) return Missing(s, r.parent, "index of rebase");
        (*state)[r.parent] = IsZero(dp->second.min) ? rb->second : rb->second + dp->second.min;
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PassUpDomain(const Stage& s, const RangeMap& dom, SetMap* state) {
  auto range_of = [&](const IterVar& iv, Range* out) {
    auto it = dom.find(iv);
    if (it == dom.end()) return false;
    *out = it->second;
    return true;
  };
  for (size_t k = s.relations.size(); k != 0; --k) {
    const IterVarRelation& r = s.relations[k - 1];
    switch (r.kind) {
      case RelationKind::kSplit: {
        auto o = state->find(r.outer);
        auto i = state->find(r.inner);
        Range ro, ri, rp;
        if (o == state->end() || i == state->end() || !range_of(r.outer, &ro) ||
            !range_of(r.inner, &ri) || !range_of(r.parent, &rp)) {
          return Missing(s, r.parent, "domain of split");
        }
        if (o->second.MatchRange(ro) && i->second.MatchRange(ri)) {
          (*state)[r.parent] = IntSet::FromRange(rp);
          break;
        }
        arith::VarSetMap vm;
        vm[r.outer->var.get()] = o->second;
        vm[r.inner->var.get()] = i->second;
        (*state)[r.parent] =
            arith::EvalSet(tir::Add(tir::Add(tir::Mul(r.outer->var, ri.extent), r.inner->var), rp.min), vm);
        break;
      }
      case RelationKind::kFuse: {
        auto f = state->find(r.fused);
        Range rf, ro, ri;
        if (f == state->end() || !range_of(r.fused, &rf) || !range_of(r.outer, &ro) ||
            !range_of(r.inner, &ri)) {
          return Missing(s, r.fused, "domain of fuse");
        }
        const IntSet& fs = f->second;
        if (fs.MatchRange(rf)) {
          (*state)[r.outer] = IntSet::FromRange(ro);
          (*state)[r.inner] = IntSet::FromRange(ri);
          break;
        }
        const PrimExpr factor = ri.extent;
        if (fs.IsPoint()) {
          PrimExpr v = fs.min_value;
          PrimExpr vo = Simplify(tir::Add(tir::FloorDiv(v, factor), ro.min));
          PrimExpr vi = Simplify(tir::Add(tir::FloorMod(v, factor), ri.min));
          (*state)[r.outer] = IntSet::Point(vo);
          (*state)[r.inner] = IntSet::Point(vi);
          break;
        }
        if (!fs.HasLowerBound() || !fs.HasUpperBound()) {
          (*state)[r.outer] = IntSet::FromRange(ro);
          (*state)[r.inner] = IntSet::FromRange(ri);
          break;
        }
        (*state)[r.outer] =
            IntSet::Interval(Simplify(tir::Add(ro.min, tir::FloorDiv(fs.min_value, factor))),
                             Simplify(tir::Add(ro.min, tir::FloorDiv(fs.max_value, factor))));
        PrimExpr fused_extent =
            Simplify(tir::Add(tir::Sub(fs.max_value, fs.min_value), tir::IntImm(1)));
        if (tir::IsConstValue(Simplify(tir::FloorMod(factor, fused_extent)), 0) &&
            tir::IsConstValue(Simplify(tir::FloorMod(fs.min_value, fused_extent)), 0)) {
          // The fused range never spans two rows: a tight box.
          (*state)[r.inner] =
              IntSet::Interval(Simplify(tir::Add(ri.min, tir::FloorMod(fs.min_value, factor))),
                               Simplify(tir::Add(ri.min, tir::FloorMod(fs.max_value, factor))));
        } else {
          (*state)[r.inner] = IntSet::FromRange(ri);
        }
        break;
      }
      case RelationKind::kRebase: {
        auto rb = state->find(r.rebased);
        Range rr, rp;
        if (rb == state->end() || !range_of(r.rebased, &rr) || !range_of(r.parent, &rp)) {
          return Missing(s, r.rebased, "domain of rebase");
        }
        if (rb->second.MatchRange(rr)) {
          (*state)[r.parent] = IntSet::FromRange(rp);
          break;
        }
        arith::VarSetMap vm;
        vm[r.rebased->var.get()] = rb->second;
        (*state)[r.parent] = arith::EvalSet(tir::Add(r.rebased->var, rp.min), vm);
        break;
      }
    }
  }
  return absl::OkStatus();
}

void PassUpBitMaskOr(const Stage& s, FlagMap* state) {
  auto get = [&](const IterVar& iv) {
    auto it = state->find(iv);
    return it == state->end() ? 0 : it->second;
  };
  for (size_t k = s.relations.size(); k != 0; --k) {
    const IterVarRelation& r = s.relations[k - 1];
    switch (r.kind) {
      case RelationKind::kSplit: {
        int v = get(r.outer) | get(r.inner);
        if (v != 0) (*state)[r.parent] |= v;
        break;
      }
      case RelationKind::kFuse: {
        int v = get(r.fused);
        if (v != 0) {
          (*state)[r.outer] |= v;
          (*state)[r.inner] |= v;
        }
        break;
      }
      case RelationKind::kRebase: {
        int v = get(r.rebased);
        if (v != 0) (*state)[r.parent] |= v;
        break;
      }
    }
  }
}

void PassDownBitMaskOr(const Stage& s, FlagMap* state) {
  auto get = [&](const IterVar& iv) {
    auto it = state->find(iv);
    return it == state->end() ? 0 : it->second;
  };
  for (const IterVarRelation& r : s.relations) {
    switch (r.kind) {
      case RelationKind::kSplit: {
        int v = get(r.parent);
        if (v != 0) {
          (*state)[r.outer] |= v;
          (*state)[r.inner] |= v;
        }
        break;
      }
      case RelationKind::kFuse: {
        int v = get(r.outer) | get(r.inner);
        if (v != 0) (*state)[r.fused] |= v;
        break;
      }
      case RelationKind::kRebase: {
        int v = get(r.parent);
        if (v != 0) (*state)[r.rebased] |= v;
        break;
      }
    }
  }
}

std::vector<PrimExpr> MakeBoundCheck(const Stage& s, const RangeMap& dom, const IndexMap& values,
                                     bool skip_ivar_domain, const IterVarSet& skip,
                                     const arith::VarSetMap& var_sets) {
  // Which IterVars may run past their range: parents of uneven splits.
  std::unordered_map<IterVar, bool, RefHash> state;
  for (const IterVar& iv : s.leaf_iter_vars) state[iv] = false;
  auto get = [&](const IterVar& iv) {
    auto it = state.find(iv);
    return it != state.end() && it->second;
  };
  for (size_t k = s.relations.size(); k != 0; --k) {
    const IterVarRelation& r = s.relations[k - 1];
    switch (r.kind) {
      case RelationKind::kSplit: {
        auto di = dom.find(r.inner);
        auto dout = dom.find(r.outer);
        auto dp = dom.find(r.parent);
        if (di == dom.end() || dout == dom.end() || dp == dom.end()) {
          state[r.parent] = true;
        } else if (get(r.outer) || get(r.inner)) {
          state[r.parent] = true;
        } else {
          state[r.parent] = !arith::ProveEqual(
              dp->second.extent, tir::Mul(di->second.extent, dout->second.extent));
        }
        break;
      }
      case RelationKind::kFuse:
        state[r.outer] = get(r.fused);
        state[r.inner] = get(r.fused);
        break;
      case RelationKind::kRebase:
        state[r.parent] = get(r.rebased);
        break;
    }
  }
  arith::VarSetMap iset = var_sets;
  for (const auto& [iv, r] : dom) {
    if (r.defined() && !iset.count(iv->var.get())) iset[iv->var.get()] = arith::IntSet::FromRange(r);
  }
  std::vector<PrimExpr> preds;
  auto offset = [](const PrimExpr& v, const PrimExpr& min) {
    return IsZero(min) ? v : Simplify(tir::Sub(v, min));
  };
  for (const IterVar& iv : s.all_iter_vars) {
    if (skip.count(iv) || iv->iter_kind == tir::IterKind::kOpaque || !get(iv)) continue;
    auto d = dom.find(iv);
    auto v = values.find(iv);
    if (d == dom.end() || v == values.end()) continue;
    PrimExpr value = offset(v->second, d->second.min);
    arith::IntSet vs = arith::EvalSetRelaxed(value, iset);
    if (!vs.HasUpperBound() || !arith::ProveLT(vs.max_value, d->second.extent)) {
      preds.push_back(tir::LT(value, d->second.extent));
    }
  }
  if (!skip_ivar_domain) {
    for (const IterVar& iv : s.root_iter_vars()) {
      if (skip.count(iv) || iv->iter_kind == tir::IterKind::kOpaque) continue;
      auto d = dom.find(iv);
      auto v = values.find(iv);
      if (d == dom.end() || v == values.end() || !iv->dom.defined()) continue;
      if (arith::ProveEqual(iv->dom.min, d->second.min) &&
          arith::ProveEqual(iv->dom.extent, d->second.extent)) {
        continue;
      }
      PrimExpr value = offset(v->second, iv->dom.min);
      arith::IntSet vs = arith::EvalSetRelaxed(value, iset);
      if (!vs.HasLowerBound() || !arith::ProveLE(tir::IntImm(0), vs.min_value)) {
        preds.push_back(tir::GE(value, tir::IntImm(0)));
      }
      if (!vs.HasUpperBound() || !arith::ProveLT(vs.max_value, iv->dom.extent)) {
        preds.push_back(tir::LT(value, iv->dom.extent));
      }
    }
  }
  return preds;
}

}  // namespace kiln::te::internal
