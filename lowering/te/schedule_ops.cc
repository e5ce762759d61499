// File: lowering/te/schedule_ops.cc — ScheduleOps.
#include "lowering/te/schedule_ops.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"
#include "lowering/te/arith.h"
#include "lowering/te/message_passing.h"
#include "lowering/te/schedule_internal.h"

namespace kiln::te {
namespace {

using internal::DataFlow;
using internal::IndexMap;
using internal::IterVarSet;
using internal::ScheduleState;
using tir::Stmt;

constexpr char kLoopScope[] = "loop_scope";

using Nest = std::vector<std::vector<Stmt>>;

// Wraps `body` in every statement of `nest` (outermost level first).
Stmt MergeNest(const Nest& nest, Stmt body) {
  for (size_t l = nest.size(); l != 0; --l) {
    const auto& level = nest[l - 1];
    for (size_t i = level.size(); i != 0; --i) {
      const Stmt& s = level[i - 1];
      body = tir::WithChildren(s, s->a, s->b, s->indices, {body});
    }
  }
  return body;
}

std::vector<Stmt> IfNest(const std::vector<PrimExpr>& preds) {
  std::vector<Stmt> out;
  for (const PrimExpr& p : preds) {
    out.push_back(tir::IfThenElse(tir::Call(DataType::Bool(), "likely", {p}), tir::NoOp()));
  }
  return out;
}

PrimExpr Offset(const PrimExpr& index, const PrimExpr& min) {
  if (tir::IsConstValue(min, 0)) return index;
  return arith::Simplify(tir::Sub(index, min));
}

struct Storage {
  tir::Buffer buffer;
  std::vector<PrimExpr> offsets;  // region minimum per dim (0 for arguments)
  bool is_arg = false;
};

class LoopRemover : public tir::StmtExprMutator {
 protected:
  Stmt VisitStmt_(const Stmt& s) override {
    if (s->kind == tir::StmtKind::kAttr && s->tag == kLoopScope) return VisitStmt(s->body0());
    return MutateChildren(s);
  }
};

class Builder {
 public:
  Builder(const ScheduleState& st, const BoundMap& bounds) : st_(st), bounds_(bounds) {}

  absl::Status Init(const BufferBinds& binds) {
    KILN_ASSIGN_OR_RETURN(flow_, internal::BuildDataFlow(st_));
    for (const auto& [t, buf] : binds) {
      Stage* s = st_.Find(t.op());
      if (s == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("ScheduleOps: argument tensor '", t.name(), "' is not in the schedule"));
      }
      if (s->is_inlined()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ScheduleOps: argument tensor '", t.name(),
            "' is computed by an inlined stage and is never stored; compute it at the root"));
      }
      Storage& sto = storage_[{s, t.value_index()}];
      sto.buffer = buf;
      sto.offsets.assign(t.shape().size(), tir::IntImm(0));
      sto.is_arg = true;
    }
    for (const auto& sp : st_.stages) {
      const Stage* s = sp.get();
      if (s->is_placeholder() || s->is_inlined()) continue;
      for (int k = 0; k < s->op->num_outputs(); ++k) {
        if (storage_.count({s, k})) continue;
        std::vector<PrimExpr> shape, offsets;
        for (const IterVar& iv : s->op->axis) {
          KILN_ASSIGN_OR_RETURN(Range r, RangeOf(*s, iv));
          shape.push_back(r.extent);
          offsets.push_back(r.min);
        }
        tir::Buffer b = tir::MakeBuffer(Tensor(s->origin_op, k).name(),
                                        s->op->output_dtypes[static_cast<size_t>(k)], shape,
                                        s->scope);
        if (!s->storage_alignments.empty()) {
          Ref<tir::BufferNode> n(new tir::BufferNode(*b));
          n->axis_align.assign(shape.size(), {0, 0});
          for (const StorageAlign& a : s->storage_alignments) {
            if (a.axis >= 0 && a.axis < static_cast<int>(shape.size())) {
              n->axis_align[static_cast<size_t>(a.axis)] = {a.factor, a.offset};
            }
          }
          b = n;
        }
        Storage& sto = storage_[{s, k}];
        sto.buffer = b;
        sto.offsets = std::move(offsets);
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Stmt> Build() {
    Stmt body;
    for (size_t i = st_.stages.size(); i != 0; --i) {
      const Stage& s = *st_.stages[i - 1];
      if (s.is_placeholder() || s.is_inlined()) continue;
      if (s.attach_type != AttachType::kScope) {
        KILN_ASSIGN_OR_RETURN(body, MakePipeline(s, body));
        continue;
      }
      if (!body) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ScheduleOps: stage '", s.name(), "' is computed at a loop that is never emitted"));
      }
      KILN_ASSIGN_OR_RETURN(body, InjectAttach(s, body));
    }
    if (!body) return tir::NoOp();
    LoopRemover strip;
    return strip.VisitStmt(body);
  }

 private:
  absl::StatusOr<Range> RangeOf(const Stage& s, const IterVar& iv) const {
    auto it = bounds_.find(iv);
    if (it == bounds_.end() || !it->second.defined()) {
      return absl::InvalidArgumentError(absl::StrCat("ScheduleOps: no range for IterVar '",
                                                     iv->var->name, "' of stage '", s.name(),
                                                     "' (run InferBound on this schedule)"));
    }
    return it->second;
  }

  absl::StatusOr<Stmt> InjectAttach(const Stage& s, const Stmt& body) {
    class Injector : public tir::StmtExprMutator {
     public:
      Injector(Builder* b, const Stage& s) : b_(b), s_(s) {}
      bool found = false;
      absl::Status status = absl::OkStatus();

     protected:
      Stmt VisitStmt_(const Stmt& st) override {
        if (!found && st->kind == tir::StmtKind::kAttr && st->tag == kLoopScope &&
            st->node.get() == s_.attach_ivar.get()) {
          found = true;
          absl::StatusOr<Stmt> p = b_->MakePipeline(s_, st->body0());
          if (!p.ok()) {
            status = p.status();
            return st;
          }
          return tir::AttrStmt(st->node, st->tag, st->a, *p);
        }
        return MutateChildren(st);
      }

     private:
      Builder* b_;
      const Stage& s_;
    };
    Injector inj(this, s);
    Stmt out = inj.VisitStmt(body);
    KILN_RETURN_IF_ERROR(inj.status);
    if (!inj.found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ScheduleOps: stage '", s.name(), "' is computed at loop '", s.attach_ivar->var->name,
          "' of '", s.attach_stage ? s.attach_stage->name() : "<null>",
          "', which was not found in the loop nest"));
    }
    return out;
  }

  absl::StatusOr<Stmt> MakePipeline(const Stage& s, const Stmt& consumer) {
    KILN_ASSIGN_OR_RETURN(Stmt produce, MakeComputeStmt(s));
    Stmt pipeline = consumer ? tir::Seq({produce, consumer}) : produce;
    for (int k = s.op->num_outputs(); k != 0; --k) {
      const Storage& sto = storage_.at({&s, k - 1});
      if (!sto.is_arg) pipeline = tir::Allocate(sto.buffer, pipeline, sto.buffer->scope);
    }
    return pipeline;
  }

  // Loops for leaves [begin, n) of `s`. Fills (*vmap) with the value of every
  // IterVar of the stage in terms of the loop vars.
  absl::StatusOr<Nest> MakeLoopNest(const Stage& s, size_t begin, bool new_loop_var,
                                    const IterVarSet& skip, IndexMap* vmap) {
    Nest nest(s.leaf_iter_vars.size() + 1);
    for (size_t i = begin; i < s.leaf_iter_vars.size(); ++i) {
      const IterVar& iv = s.leaf_iter_vars[i];
      if (skip.count(iv) || iv->iter_kind == tir::IterKind::kOpaque) {
        (*vmap)[iv] = iv->var;
        continue;
      }
      KILN_ASSIGN_OR_RETURN(Range r, RangeOf(s, iv));
      const IterVarAttr* a = s.attr(iv);
      const tir::ForKind kind = a ? a->for_kind : tir::ForKind::kSerial;
      const std::string tag = a ? a->thread_tag : "";
      Var var = new_loop_var ? tir::MakeVar(absl::StrCat(iv->var->name, ".init")) : iv->var;
      auto& level = nest[i + 1];
      if (a != nullptr) {
        // The attribute names the loop's variable, not the IterVar: an
        // IterVar node binds its var in the attribute's body (a thread
        // extent), and the loop inside binds it again.
        for (const auto& [key, value] : a->pragmas) {
          level.push_back(tir::AttrStmt(var, absl::StrCat("pragma_", key), value, tir::NoOp()));
        }
      }
      if (tir::IsConstValue(r.extent, 1) && kind != tir::ForKind::kThreadBinding) {
        level.push_back(tir::LetStmt(var, r.min, tir::NoOp()));
        (*vmap)[iv] = r.min;
      } else if (tir::IsConstValue(r.min, 0)) {
        level.push_back(tir::For(var, r.min, r.extent, kind, tir::NoOp(), tag));
        (*vmap)[iv] = var;
        var_sets_[var.get()] = arith::IntSet::FromRange(r);
      } else {
        Var idx = tir::MakeVar(absl::StrCat(iv->var->name, ".idx"));
        level.push_back(tir::For(idx, tir::IntImm(0), r.extent, kind, tir::NoOp(), tag));
        PrimExpr value = tir::Add(r.min, idx);
        level.push_back(tir::LetStmt(var, value, tir::NoOp()));
        (*vmap)[iv] = value;
        var_sets_[idx.get()] = arith::IntSet::FromRange(Range{tir::IntImm(0), r.extent});
        var_sets_[var.get()] = arith::IntSet::FromRange(r);
      }
      if (!new_loop_var) level.push_back(tir::AttrStmt(iv, kLoopScope, var, tir::NoOp()));
    }
    KILN_RETURN_IF_ERROR(internal::PassUpIndex(s, bounds_, vmap, /*allow_missing=*/false));
    return nest;
  }

  // Root var -> value, for substitution into bodies.
  static tir::VarMap RootSubst(const Stage& s, const IndexMap& vmap) {
    tir::VarMap m;
    for (const IterVar& iv : s.root_iter_vars()) {
      auto it = vmap.find(iv);
      if (it != vmap.end() && !(it->second == iv->var)) m[iv->var.get()] = it->second;
    }
    return m;
  }

  // Tensor reads in `e` -> Loads of their buffers.
  absl::StatusOr<PrimExpr> LowerReads(const Stage& reader, const PrimExpr& e) {
    absl::Status err = absl::OkStatus();
    PrimExpr out = ReplaceTensorReads(
        e, [&](const Tensor& t, const std::vector<PrimExpr>& idx) -> PrimExpr {
          Stage* p = st_.Find(t.op());
          auto it = p ? storage_.find({p, t.value_index()}) : storage_.end();
          if (it == storage_.end()) {
            if (err.ok()) {
              err = absl::InvalidArgumentError(absl::StrCat(
                  "ScheduleOps: tensor '", t.name(), "' read by stage '", reader.name(),
                  "' is neither a kernel argument nor computed by a stage of the schedule; pass "
                  "it in the argument list"));
            }
            return nullptr;
          }
          std::vector<PrimExpr> ind;
          for (size_t d = 0; d < idx.size(); ++d) {
            ind.push_back(d < it->second.offsets.size() ? Offset(idx[d], it->second.offsets[d])
                                                        : idx[d]);
          }
          return tir::Load(it->second.buffer, std::move(ind));
        });
    KILN_RETURN_IF_ERROR(err);
    return out;
  }

  // Indices of the stage's own output element (root values minus region offsets).
  std::vector<PrimExpr> OwnIndices(const Stage& s, const Storage& sto, const IndexMap& vmap) {
    std::vector<PrimExpr> ind;
    for (size_t d = 0; d < s.op->axis.size(); ++d) {
      const IterVar& iv = s.op->axis[d];
      auto it = vmap.find(iv);
      PrimExpr v = it != vmap.end() ? it->second : PrimExpr(iv->var);
      ind.push_back(Offset(v, sto.offsets[d]));
    }
    return ind;
  }

  absl::StatusOr<Stmt> MakeComputeStmt(const Stage& s) {
    const Operation& op = s.op;
    const std::vector<PrimExpr>& bodies = flow_.bodies.at(&s);
    IndexMap main_vmap;
    KILN_ASSIGN_OR_RETURN(Nest main_nest, MakeLoopNest(s, 0, false, {}, &main_vmap));
    std::vector<PrimExpr> main_preds =
        internal::MakeBoundCheck(s, bounds_, main_vmap, false, {}, var_sets_);
    const tir::VarMap main_sub = RootSubst(s, main_vmap);

    if (op->reduce_axis.empty()) {
      std::vector<Stmt> provides;
      for (int k = 0; k < op->num_outputs(); ++k) {
        const Storage& sto = storage_.at({&s, k});
        KILN_ASSIGN_OR_RETURN(
            PrimExpr v, LowerReads(s, tir::Substitute(bodies[static_cast<size_t>(k)], main_sub)));
        provides.push_back(tir::Store(sto.buffer, v, OwnIndices(s, sto, main_vmap)));
      }
      main_nest.push_back(IfNest(main_preds));
      return MergeNest(main_nest, tir::Seq(provides));
    }

    // Which leaves carry reduction (2) or data-parallel (1) iterations.
    internal::FlagMap flags;
    for (const IterVar& iv : op->reduce_axis) flags[iv] = 2;
    for (const IterVar& iv : op->axis) flags[iv] = 1;
    internal::PassDownBitMaskOr(s, &flags);
    size_t begin = s.leaf_iter_vars.size();
    IndexMap init_vmap;
    for (size_t i = 0; i < s.leaf_iter_vars.size(); ++i) {
      const IterVar& iv = s.leaf_iter_vars[i];
      if ((flags[iv] & 2) != 0) {
        begin = i;
        break;
      }
      init_vmap[iv] = main_vmap.at(iv);
    }
    IterVarSet skip;
    bool dp_inside = false;
    for (size_t i = begin; i < s.leaf_iter_vars.size(); ++i) {
      const IterVar& iv = s.leaf_iter_vars[i];
      if (flags[iv] == 2) {
        skip.insert(iv);
      } else {
        dp_inside = true;
      }
    }
    for (const IterVar& iv : s.all_iter_vars) {
      if (flags[iv] == 2) skip.insert(iv);
    }
    KILN_ASSIGN_OR_RETURN(Nest init_nest, MakeLoopNest(s, begin, true, skip, &init_vmap));
    init_nest.push_back(IfNest(
        internal::MakeBoundCheck(s, bounds_, init_vmap, /*skip_ivar_domain=*/true, skip, var_sets_)));

    std::vector<Stmt> inits, updates;
    std::vector<std::pair<tir::Buffer, bool>> accumulators;  // (buffer, scalar)
    for (int k = 0; k < op->num_outputs(); ++k) {
      const Storage& sto = storage_.at({&s, k});
      const PrimExpr& red = bodies[static_cast<size_t>(k)];
      if (red->kind != tir::ExprKind::kReduce) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ScheduleOps: stage '", s.name(), "': output ", k, " is not a reduction"));
      }
      std::vector<PrimExpr> out_main = OwnIndices(s, sto, main_vmap);
      std::vector<PrimExpr> out_init = OwnIndices(s, sto, init_vmap);
      KILN_ASSIGN_OR_RETURN(PrimExpr source, LowerReads(s, tir::Substitute(red->args[0], main_sub)));
      KILN_ASSIGN_OR_RETURN(PrimExpr cond, LowerReads(s, tir::Substitute(red->args[1], main_sub)));
      const DataType t = red->dtype;
      Stmt update;
      if (red->reduce_kind == tir::ReduceKind::kArgMax ||
          red->reduce_kind == tir::ReduceKind::kArgMin) {
        KILN_ASSIGN_OR_RETURN(PrimExpr flat,
                              LowerReads(s, tir::Substitute(red->args[2], main_sub)));
        const DataType vt = source->dtype;
        // The value accumulator: one element when no data-parallel loop runs
        // inside the reduction loops, otherwise the output's region.
        std::vector<PrimExpr> val_main, val_init, val_shape;
        if (dp_inside) {
          for (const IterVar& iv : op->axis) {
            KILN_ASSIGN_OR_RETURN(Range r, RangeOf(s, iv));
            val_shape.push_back(r.extent);
            val_main.push_back(Offset(main_vmap.at(iv), r.min));
            val_init.push_back(Offset(init_vmap.at(iv), r.min));
          }
        } else {
          val_shape = {tir::IntImm(1)};
          val_main = val_init = {tir::IntImm(0)};
        }
        tir::Buffer val = tir::MakeBuffer(absl::StrCat(sto.buffer->name, ".val"), vt, val_shape,
                                          dp_inside ? s.scope : "local");
        accumulators.emplace_back(val, !dp_inside);
        inits.push_back(tir::Store(val, tir::ReduceIdentity(red->reduce_kind, vt), val_init));
        inits.push_back(tir::Store(sto.buffer, tir::MakeConst(t, -1), out_init));
        PrimExpr acc = tir::Load(val, val_main);
        PrimExpr idx = tir::Load(sto.buffer, out_main);
        const bool last = red->int_value != 0;
        const bool is_max = red->reduce_kind == tir::ReduceKind::kArgMax;
        PrimExpr cmp = is_max ? (last ? tir::GE(source, acc) : tir::GT(source, acc))
                              : (last ? tir::LE(source, acc) : tir::LT(source, acc));
        PrimExpr first = tir::EQ(idx, tir::MakeConst(t, -1));
        PrimExpr better;
        if (vt.is_float()) {
          PrimExpr acc_nan = tir::Call(DataType::Bool(), "isnan", {acc});
          PrimExpr v_nan = tir::Call(DataType::Bool(), "isnan", {source});
          better = tir::Or(first, tir::And(tir::Not(acc_nan), tir::Or(v_nan, cmp)));
        } else {
          better = tir::Or(first, cmp);
        }
        update = tir::IfThenElse(better, tir::Seq({tir::Store(val, source, val_main),
                                                    tir::Store(sto.buffer, tir::Cast(t, flat),
                                                               out_main)}));
      } else {
        inits.push_back(tir::Store(sto.buffer, tir::ReduceIdentity(red->reduce_kind, t), out_init));
        PrimExpr acc = tir::Load(sto.buffer, out_main);
        PrimExpr v;
        switch (red->reduce_kind) {
          case tir::ReduceKind::kSum: v = tir::Add(acc, source); break;
          case tir::ReduceKind::kProd: v = tir::Mul(acc, source); break;
          case tir::ReduceKind::kMax: v = tir::Max(acc, source); break;
          default: v = tir::Min(acc, source); break;
        }
        update = tir::Store(sto.buffer, v, out_main);
      }
      if (!tir::IsConstValue(cond, 1)) update = tir::IfThenElse(cond, update);
      updates.push_back(update);
    }
    // Substitute init-nest root values in the init statements.
    Stmt init = MergeNest(init_nest, tir::Seq(inits));
    Nest common(main_nest.begin(), main_nest.begin() + static_cast<std::ptrdiff_t>(begin + 1));
    Nest reduce(main_nest.begin() + static_cast<std::ptrdiff_t>(begin + 1), main_nest.end());
    reduce.push_back(IfNest(main_preds));
    Stmt inner = tir::Seq({init, MergeNest(reduce, tir::Seq(updates))});
    for (const auto& [buf, scalar] : accumulators) {
      if (scalar) inner = tir::Allocate(buf, inner, buf->scope);
    }
    Stmt stmt = MergeNest(common, inner);
    for (const auto& [buf, scalar] : accumulators) {
      if (!scalar) stmt = tir::Allocate(buf, stmt, buf->scope);
    }
    return stmt;
  }

  const ScheduleState& st_;
  const BoundMap& bounds_;
  DataFlow flow_;
  std::map<std::pair<const Stage*, int>, Storage> storage_;
  arith::VarSetMap var_sets_;
};

}  // namespace

absl::StatusOr<tir::Stmt> ScheduleOps(const Schedule& s, const BoundMap& bounds,
                                      const BufferBinds& binds) {
  Builder b(internal::StateOf(s), bounds);
  KILN_RETURN_IF_ERROR(b.Init(binds));
  return b.Build();
}

}  // namespace kiln::te
