// File: lowering/te/schedule.cc — Schedule, Stage and the loop primitives.
#include "lowering/te/schedule.h"

#include <algorithm>
#include <deque>
#include <unordered_set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"
#include "lowering/te/schedule_internal.h"

namespace kiln::te {
namespace internal {

Stage* ScheduleState::Find(const Operation& op) const {
  auto it = op2stage.find(op);
  return it == op2stage.end() ? nullptr : it->second;
}

size_t ScheduleState::IndexOf(const Stage* s) const {
  for (size_t i = 0; i < stages.size(); ++i) {
    if (stages[i].get() == s) return i;
  }
  return stages.size();
}

std::vector<Stage*> ScheduleState::DirectReaders(const Stage* s) const {
  std::vector<Stage*> out;
  for (const auto& t : stages) {
    if (t->is_placeholder()) continue;
    for (const Tensor& in : t->op->InputTensors()) {
      if (Find(in.op()) == s) {
        out.push_back(t.get());
        break;
      }
    }
  }
  return out;
}

Stage* ScheduleState::Insert(size_t pos, const Operation& op) {
  std::unique_ptr<Stage> s(new Stage());
  s->op = op;
  s->origin_op = op;
  s->owner_ = this;
  ResetIterVars(s.get());
  Stage* raw = s.get();
  stages.insert(stages.begin() + static_cast<std::ptrdiff_t>(std::min(pos, stages.size())),
                std::move(s));
  Register(raw, op);
  return raw;
}

void ResetIterVars(Stage* s) {
  s->all_iter_vars = s->root_iter_vars();
  s->leaf_iter_vars = s->all_iter_vars;
  s->relations.clear();
  s->iter_var_attrs.clear();
}

ResolvedRead Resolve(const ScheduleState& st, const tir::ExprNode* load) {
  ResolvedRead r;
  if (load == nullptr || load->kind != tir::ExprKind::kProducerLoad || !load->producer) return r;
  const auto* op = dynamic_cast<const OperationNode*>(load->producer.get());
  if (op == nullptr) return r;
  r.stage = st.Find(Operation(Ref<const OperationNode>(const_cast<OperationNode*>(op))));
  r.value_index = static_cast<int>(load->int_value);
  return r;
}

absl::StatusOr<DataFlow> BuildDataFlow(const ScheduleState& st) {
  DataFlow flow;
  for (const auto& sp : st.stages) {
    const Stage* s = sp.get();
    if (s->is_placeholder()) continue;
    std::vector<PrimExpr> bodies = s->op->body;
    absl::Status err = absl::OkStatus();
    // Substitute reads of inlined stages (their own bodies are already done:
    // producers come first).
    for (PrimExpr& b : bodies) {
      b = ReplaceTensorReads(b, [&](const Tensor& t, const std::vector<PrimExpr>& idx) -> PrimExpr {
        Stage* p = st.Find(t.op());
        if (p == nullptr || !p->is_inlined() || p->is_placeholder()) return nullptr;
        auto it = flow.bodies.find(p);
        if (it == flow.bodies.end() || t.value_index() >= static_cast<int>(it->second.size())) {
          err = absl::InternalError(absl::StrCat("inlined stage '", p->name(),
                                                 "' is not ordered before its reader '",
                                                 s->name(), "'"));
          return nullptr;
        }
        tir::VarMap vmap;
        const auto& axes = p->op->axis;
        for (size_t d = 0; d < axes.size() && d < idx.size(); ++d) vmap[axes[d]->var.get()] = idx[d];
        return tir::Substitute(it->second[static_cast<size_t>(t.value_index())], vmap);
      });
    }
    KILN_RETURN_IF_ERROR(err);
    flow.bodies[s] = std::move(bodies);
  }
  for (const auto& sp : st.stages) {
    Stage* s = sp.get();
    if (s->is_placeholder() || s->is_inlined()) continue;
    std::unordered_set<const Stage*> seen;
    for (const PrimExpr& b : flow.bodies[s]) {
      tir::PostOrderVisit(b, [&](const tir::ExprNode* e) {
        ResolvedRead r = Resolve(st, e);
        if (r.stage != nullptr && seen.insert(r.stage).second) flow.consumers[r.stage].push_back(s);
      });
    }
  }
  return flow;
}

const ScheduleState& StateOf(const Schedule& s) {
  static const ScheduleState* const kEmpty = new ScheduleState();
  return s.state_ ? *s.state_ : *kEmpty;  // a moved-from Schedule is empty
}

}  // namespace internal

using internal::ScheduleState;

namespace {

std::string Names(const std::vector<IterVar>& ivs) {
  std::vector<std::string> n;
  for (const IterVar& iv : ivs) n.push_back(iv->var->name);
  return absl::StrJoin(n, ", ");
}

IterVar NewIterVar(absl::string_view name, tir::IterKind kind) {
  return tir::MakeIterVar(Range{}, tir::MakeVar(name), kind);
}

size_t FindIv(const std::vector<IterVar>& v, const IterVar& iv) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == iv) return i;
  }
  return v.size();
}

bool IsThreadTag(absl::string_view tag) {
  static const char* const kTags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
                                      "threadIdx.y", "threadIdx.z", "vthread"};
  for (const char* t : kTags) {
    if (tag == t) return true;
  }
  return false;
}

}  // namespace

// ---- Stage ----------------------------------------------------------------------

std::vector<IterVar> Stage::root_iter_vars() const {
  std::vector<IterVar> r;
  if (!op) return r;
  r = op->axis;
  r.insert(r.end(), op->reduce_axis.begin(), op->reduce_axis.end());
  return r;
}

const IterVarAttr* Stage::attr(const IterVar& iv) const {
  auto it = iter_var_attrs.find(iv);
  return it == iter_var_attrs.end() ? nullptr : &it->second;
}

absl::Status Stage::CheckLeaf(const IterVar& iv, absl::string_view primitive) const {
  if (!iv) {
    return absl::InvalidArgumentError(
        absl::StrCat("stage '", name(), "': ", primitive, ": the IterVar is null"));
  }
  if (is_placeholder()) {
    return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': ", primitive,
                                                   ": a placeholder has no loops to schedule"));
  }
  if (FindIv(leaf_iter_vars, iv) == leaf_iter_vars.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stage '", name(), "': ", primitive, ": IterVar '", iv->var->name,
        "' is not a leaf of this stage (leaves: ", Names(leaf_iter_vars), ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<SplitAxes> Stage::DoSplit(const IterVar& parent_ref, PrimExpr factor,
                                         PrimExpr nparts, absl::string_view primitive) {
  const IterVar parent = parent_ref;  // may alias an element of leaf_iter_vars
  KILN_RETURN_IF_ERROR(CheckLeaf(parent, primitive));
  const PrimExpr& f = factor ? factor : nparts;
  if (!f || !f->dtype.is_int()) {
    return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': ", primitive, " of '",
                                                   parent->var->name,
                                                   "': the factor must be an integer expression"));
  }
  int64_t v = 0;
  if (tir::IsConstInt(f, &v) && v <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': ", primitive, " of '",
                                                   parent->var->name, "': the factor is ", v,
                                                   "; it must be positive"));
  }
  const PrimExpr f64 = tir::Cast(tir::kIndexType, f);
  IterVar outer = NewIterVar(absl::StrCat(parent->var->name, ".outer"), parent->iter_kind);
  IterVar inner = NewIterVar(absl::StrCat(parent->var->name, ".inner"), parent->iter_kind);
  IterVarRelation rel;
  rel.kind = RelationKind::kSplit;
  rel.parent = parent;
  rel.outer = outer;
  rel.inner = inner;
  if (factor) {
    rel.factor = f64;
  } else {
    rel.nparts = f64;
  }
  relations.push_back(rel);
  size_t pos = FindIv(leaf_iter_vars, parent);
  leaf_iter_vars[pos] = inner;
  leaf_iter_vars.insert(leaf_iter_vars.begin() + static_cast<std::ptrdiff_t>(pos), outer);
  all_iter_vars.push_back(outer);
  all_iter_vars.push_back(inner);
  return SplitAxes{outer, inner};
}

absl::StatusOr<SplitAxes> Stage::split(const IterVar& parent, int64_t factor) {
  return DoSplit(parent, tir::IntImm(factor), nullptr, "split");
}

absl::StatusOr<SplitAxes> Stage::split(const IterVar& parent, PrimExpr factor) {
  if (!factor) {
    return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': split: null factor"));
  }
  return DoSplit(parent, std::move(factor), nullptr, "split");
}

absl::StatusOr<SplitAxes> Stage::split_by_nparts(const IterVar& parent, int64_t nparts) {
  return DoSplit(parent, nullptr, tir::IntImm(nparts), "split_by_nparts");
}

absl::StatusOr<IterVar> Stage::fuse(const IterVar& outer_in, const IterVar& inner_in) {
  KILN_RETURN_IF_ERROR(CheckLeaf(outer_in, "fuse"));
  KILN_RETURN_IF_ERROR(CheckLeaf(inner_in, "fuse"));
  IterVar outer = outer_in, inner = inner_in;
  size_t po = FindIv(leaf_iter_vars, outer);
  size_t pi = FindIv(leaf_iter_vars, inner);
  if (pi + 1 == po) {
    std::swap(outer, inner);
    std::swap(po, pi);
  }
  if (po + 1 != pi) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stage '", name(), "': fuse: '", outer->var->name, "' and '", inner->var->name,
        "' are not adjacent loops (leaves: ", Names(leaf_iter_vars),
        "); reorder them first"));
  }
  if (outer->iter_kind != inner->iter_kind) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stage '", name(), "': fuse: cannot fuse '", outer->var->name, "' and '",
        inner->var->name, "': one is a reduction axis and the other is not"));
  }
  IterVar fused = NewIterVar(absl::StrCat(outer->var->name, ".", inner->var->name, ".fused"),
                             outer->iter_kind);
  IterVarRelation rel;
  rel.kind = RelationKind::kFuse;
  rel.outer = outer;
  rel.inner = inner;
  rel.fused = fused;
  relations.push_back(rel);
  leaf_iter_vars.erase(leaf_iter_vars.begin() + static_cast<std::ptrdiff_t>(pi));
  leaf_iter_vars[po] = fused;
  all_iter_vars.push_back(fused);
  return fused;
}

absl::StatusOr<IterVar> Stage::fuse(const std::vector<IterVar>& axes_ref) {
  const std::vector<IterVar> axes = axes_ref;  // may alias leaf_iter_vars
  if (axes.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("stage '", name(), "': fuse: no IterVars to fuse"));
  }
  for (const IterVar& iv : axes) KILN_RETURN_IF_ERROR(CheckLeaf(iv, "fuse"));
  const size_t first = FindIv(leaf_iter_vars, axes[0]);
  for (size_t i = 1; i < axes.size(); ++i) {
    if (FindIv(leaf_iter_vars, axes[i]) != first + i) {
      return absl::InvalidArgumentError(absl::StrCat(
          "stage '", name(), "': fuse: the IterVars (", Names(axes),
          ") are not consecutive loops in this order (leaves: ", Names(leaf_iter_vars), ")"));
    }
  }
  IterVar acc = axes[0];
  for (size_t i = 1; i < axes.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(acc, fuse(acc, axes[i]));
  }
  return acc;
}

absl::Status Stage::reorder(const std::vector<IterVar>& order_ref) {
  const std::vector<IterVar> order = order_ref;  // may alias leaf_iter_vars
  std::vector<size_t> pos;
  absl::flat_hash_set<const tir::IterVarNode*> seen;
  for (const IterVar& iv : order) {
    KILN_RETURN_IF_ERROR(CheckLeaf(iv, "reorder"));
    if (!seen.insert(iv.get()).second) {
      return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': reorder: '",
                                                     iv->var->name, "' appears twice"));
    }
    pos.push_back(FindIv(leaf_iter_vars, iv));
  }
  std::sort(pos.begin(), pos.end());
  for (size_t i = 0; i < order.size(); ++i) leaf_iter_vars[pos[i]] = order[i];
  return absl::OkStatus();
}

absl::StatusOr<TileAxes> Stage::tile(const IterVar& x_ref, const IterVar& y_ref,
                                     int64_t x_factor, int64_t y_factor) {
  const IterVar x = x_ref, y = y_ref;  // may alias elements of leaf_iter_vars
  KILN_RETURN_IF_ERROR(CheckLeaf(x, "tile"));
  KILN_RETURN_IF_ERROR(CheckLeaf(y, "tile"));
  if (x == y) {
    return absl::InvalidArgumentError(
        absl::StrCat("stage '", name(), "': tile: x and y are the same IterVar"));
  }
  KILN_ASSIGN_OR_RETURN(SplitAxes xs, split(x, x_factor));
  KILN_ASSIGN_OR_RETURN(SplitAxes ys, split(y, y_factor));
  KILN_RETURN_IF_ERROR(reorder({xs.outer, ys.outer, xs.inner, ys.inner}));
  return TileAxes{xs.outer, ys.outer, xs.inner, ys.inner};
}

absl::Status Stage::Annotate(const IterVar& iv, tir::ForKind kind, absl::string_view primitive,
                             absl::string_view tag) {
  KILN_RETURN_IF_ERROR(CheckLeaf(iv, primitive));
  IterVarAttr& a = iter_var_attrs[iv];
  if (a.for_kind == tir::ForKind::kThreadBinding && kind != tir::ForKind::kThreadBinding) {
    return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': ", primitive, ": '",
                                                   iv->var->name, "' is bound to ",
                                                   a.thread_tag));
  }
  a.for_kind = kind;
  a.thread_tag = std::string(tag);
  return absl::OkStatus();
}

absl::Status Stage::vectorize(const IterVar& iv) {
  KILN_RETURN_IF_ERROR(CheckLeaf(iv, "vectorize"));
  if (iv->iter_kind == tir::IterKind::kReduce) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stage '", name(), "': vectorize: '", iv->var->name,
        "' is a reduction axis; vectorize a data-parallel axis (or rfactor the reduction)"));
  }
  return Annotate(iv, tir::ForKind::kVectorized, "vectorize", "");
}

absl::Status Stage::unroll(const IterVar& iv) {
  return Annotate(iv, tir::ForKind::kUnrolled, "unroll", "");
}

absl::Status Stage::parallel(const IterVar& iv) {
  KILN_RETURN_IF_ERROR(CheckLeaf(iv, "parallel"));
  if (iv->iter_kind == tir::IterKind::kReduce) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stage '", name(), "': parallel: '", iv->var->name,
        "' is a reduction axis: its iterations all update the same element (rfactor the "
        "reduction to parallelize it)"));
  }
  return Annotate(iv, tir::ForKind::kParallel, "parallel", "");
}

absl::Status Stage::bind(const IterVar& iv, absl::string_view thread_tag) {
  KILN_RETURN_IF_ERROR(CheckLeaf(iv, "bind"));
  if (!IsThreadTag(thread_tag)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stage '", name(), "': bind: unknown thread tag '", thread_tag,
        "' (expected blockIdx.{x,y,z}, threadIdx.{x,y,z} or vthread)"));
  }
  if (iv->iter_kind == tir::IterKind::kReduce) {
    return absl::InvalidArgumentError(absl::StrCat(
        "stage '", name(), "': bind: '", iv->var->name,
        "' is a reduction axis; cross-thread reductions are not supported"));
  }
  for (const IterVar& leaf : leaf_iter_vars) {
    const IterVarAttr* a = attr(leaf);
    if (!(leaf == iv) && a != nullptr && a->for_kind == tir::ForKind::kThreadBinding &&
        a->thread_tag == thread_tag) {
      return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': bind: ", thread_tag,
                                                     " is already bound to '", leaf->var->name,
                                                     "'"));
    }
  }
  iter_var_attrs[iv] = IterVarAttr{};
  return Annotate(iv, tir::ForKind::kThreadBinding, "bind", thread_tag);
}

absl::Status Stage::pragma(const IterVar& iv, absl::string_view key, PrimExpr value) {
  KILN_RETURN_IF_ERROR(CheckLeaf(iv, "pragma"));
  if (key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': pragma: empty key"));
  }
  iter_var_attrs[iv].pragmas.emplace_back(std::string(key),
                                          value ? value : tir::IntImm(1, DataType::Int(32)));
  return absl::OkStatus();
}

absl::Status Stage::compute_at(Stage* parent, const IterVar& iv) {
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': compute_at: ", what));
  };
  if (parent == nullptr) return error("the parent stage is null");
  if (is_placeholder()) return error("a placeholder is not computed");
  if (is_output) return error("an output stage must stay at the root");
  if (parent == this) return error("a stage cannot be computed inside itself");
  if (parent->owner_ != owner_) return error("the parent stage belongs to another schedule");
  if (parent->is_placeholder()) return error(absl::StrCat("'", parent->name(), "' is a placeholder"));
  if (!iv || FindIv(parent->leaf_iter_vars, iv) == parent->leaf_iter_vars.size()) {
    return error(absl::StrCat("IterVar '", iv ? iv->var->name : "<null>",
                              "' is not a leaf of stage '", parent->name(),
                              "' (leaves: ", Names(parent->leaf_iter_vars), ")"));
  }
  // `parent` must read this stage, directly or through other stages.
  std::deque<const Stage*> work = {this};
  std::unordered_set<const Stage*> seen = {this};
  bool found = false;
  while (!work.empty() && !found) {
    const Stage* s = work.front();
    work.pop_front();
    for (Stage* r : owner_->DirectReaders(s)) {
      if (r == parent) found = true;
      if (seen.insert(r).second) work.push_back(r);
    }
  }
  if (!found) {
    return error(absl::StrCat("'", parent->name(), "' does not read '", name(),
                              "' (directly or through other stages); compute_at needs a consumer"));
  }
  attach_type = AttachType::kScope;
  attach_stage = parent;
  attach_ivar = iv;
  return absl::OkStatus();
}

absl::Status Stage::compute_inline() {
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': compute_inline: ", what));
  };
  if (is_placeholder()) return error("a placeholder cannot be inlined");
  if (is_output) return error("an output stage cannot be inlined (it must be stored)");
  if (!op->reduce_axis.empty()) {
    return error("a reduction cannot be inlined; compute_at it into its consumer instead");
  }
  attach_type = AttachType::kInline;
  attach_stage = nullptr;
  attach_ivar = nullptr;
  return absl::OkStatus();
}

absl::Status Stage::compute_root() {
  if (is_placeholder()) {
    return absl::InvalidArgumentError(
        absl::StrCat("stage '", name(), "': compute_root: a placeholder is not computed"));
  }
  attach_type = AttachType::kGroupRoot;
  attach_stage = nullptr;
  attach_ivar = nullptr;
  return absl::OkStatus();
}

absl::Status Stage::storage_align(const IterVar& axis, int64_t factor, int64_t offset) {
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': storage_align: ", what));
  };
  if (is_placeholder()) return error("a placeholder's storage is the caller's");
  if (factor <= 0) return error(absl::StrCat("factor ", factor, " must be positive"));
  if (offset < 0 || offset >= factor) {
    return error(absl::StrCat("offset ", offset, " must be in [0, factor)"));
  }
  size_t d = FindIv(op->axis, axis);
  if (!axis || d == op->axis.size()) {
    return error(absl::StrCat("'", axis ? axis->var->name : "<null>",
                              "' is not a data-parallel root axis of the stage (op->axis)"));
  }
  for (StorageAlign& a : storage_alignments) {
    if (a.axis == static_cast<int>(d)) {
      a.factor = factor;
      a.offset = offset;
      return absl::OkStatus();
    }
  }
  storage_alignments.push_back({static_cast<int>(d), factor, offset});
  return absl::OkStatus();
}

absl::Status Stage::set_scope(absl::string_view s) {
  if (s.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("stage '", name(), "': set_scope: empty scope"));
  }
  scope = std::string(s);
  return absl::OkStatus();
}

// ---- Schedule ----------------------------------------------------------------------

Schedule::Schedule() : state_(new ScheduleState()) {}
Schedule::Schedule(Schedule&&) noexcept = default;
Schedule& Schedule::operator=(Schedule&&) noexcept = default;
Schedule::~Schedule() = default;

Stage* Schedule::operator[](const Tensor& t) const { return (*this)[t.op()]; }

Stage* Schedule::operator[](const Operation& op) const {
  if (!state_ || !op) return nullptr;
  return state_->Find(op);
}

std::vector<Stage*> Schedule::stages() const {
  std::vector<Stage*> out;
  if (!state_) return out;
  for (const auto& s : state_->stages) out.push_back(s.get());
  return out;
}

const std::vector<Tensor>& Schedule::outputs() const { return internal::StateOf(*this).outputs; }

absl::StatusOr<std::vector<Stage*>> Schedule::ReadersOf(const Stage* s) const {
  KILN_ASSIGN_OR_RETURN(internal::DataFlow flow, internal::BuildDataFlow(internal::StateOf(*this)));
  auto it = flow.consumers.find(s);
  if (it == flow.consumers.end()) return std::vector<Stage*>{};
  return it->second;
}

absl::Status Schedule::Normalize() {
  if (!state_) return absl::OkStatus();
  std::unordered_map<IterVar, IterVar, RefHash> rebase_map;
  for (const auto& sp : state_->stages) {
    Stage* s = sp.get();
    if (s->is_placeholder() || s->is_inlined()) continue;
    for (const IterVar& root : s->root_iter_vars()) {
      size_t pos = FindIv(s->leaf_iter_vars, root);
      if (pos == s->leaf_iter_vars.size()) continue;
      const IterVarAttr* a = s->attr(root);
      if (a != nullptr && a->for_kind == tir::ForKind::kThreadBinding) continue;
      IterVar rebased = NewIterVar(root->var->name, root->iter_kind);
      IterVarRelation rel;
      rel.kind = RelationKind::kRebase;
      rel.parent = root;
      rel.rebased = rebased;
      s->relations.push_back(rel);
      if (a != nullptr) {
        IterVarAttr copy = *a;
        s->iter_var_attrs[rebased] = copy;
      }
      s->leaf_iter_vars[pos] = rebased;
      s->all_iter_vars.push_back(rebased);
      rebase_map[root] = rebased;
    }
  }
  for (const auto& sp : state_->stages) {
    if (sp->attach_type != AttachType::kScope) continue;
    auto it = rebase_map.find(sp->attach_ivar);
    if (it != rebase_map.end()) sp->attach_ivar = it->second;
  }
  return absl::OkStatus();
}

absl::StatusOr<Schedule> CreateSchedule(std::vector<Tensor> outputs) {
  if (outputs.empty()) return absl::InvalidArgumentError("CreateSchedule: no output tensors");
  KILN_RETURN_IF_ERROR(ValidateCompute(outputs));
  Schedule s;
  s.state_->outputs = outputs;
  std::unordered_set<const OperationNode*> out_ops;
  for (const Tensor& t : outputs) {
    if (t.defined()) out_ops.insert(t.op().get());
  }
  for (const Operation& op : PostOrderOps(outputs)) {
    Stage* st = s.state_->Insert(s.state_->stages.size(), op);
    st->is_output = out_ops.count(op.get()) != 0;
  }
  return s;
}

}  // namespace kiln::te
