// File: lowering/te/schedule.h
//
// Schedules (TVM's te.Schedule): how the loops of tensor expressions are
// arranged, without changing what they compute. A Schedule owns one Stage per
// operation (inputs first); each primitive edits a stage's loop structure and
// returns a status, never aborting on misuse.
//
//   KILN_ASSIGN_OR_RETURN(Schedule s, CreateSchedule({C}));
//   Stage* sc = s[C];
//   KILN_ASSIGN_OR_RETURN(SplitAxes i, sc->split(sc->leaf_iter_vars[0], 32));
//   KILN_RETURN_IF_ERROR(sc->parallel(i.outer));
//   KILN_RETURN_IF_ERROR(sc->vectorize(i.inner));
//   KILN_RETURN_IF_ERROR(s[B]->compute_at(sc, i.outer));
//   KILN_ASSIGN_OR_RETURN(tir::PrimFunc f, LowerSchedule(s, {A, C}, "f"));  // lower.h
//
// A stage's loops are its leaf IterVars, outermost first. Root IterVars (the
// op's axes, then its reduction axes) are related to the leaves by Split, Fuse
// and Rebase relations; InferBound (bound.h) gives each a Range and
// ScheduleOps (schedule_ops.h) rebuilds the root indices from the loop vars.
//
// Stage fields are public for reading (as in TVM); change them through the
// primitives. Stage pointers stay valid as long as the Schedule lives (moving
// the Schedule keeps them). IterVars created by split/fuse have no `dom`:
// their ranges come from InferBound.
#ifndef KILN_LOWERING_TE_SCHEDULE_H_
#define KILN_LOWERING_TE_SCHEDULE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/object.h"
#include "ir/tir.h"
#include "lowering/te/te.h"

namespace kiln::te {

// Where a stage's computation is placed.
enum class AttachType : uint8_t {
  kGroupRoot,       // at the root of the kernel (the default)
  kInline,          // compute_inline: substituted into its consumers, no loops of its own
  kInlinedAlready,  // TVM's post-normalize form of kInline; treated the same
  kScope,           // compute_at: inside loop `attach_ivar` of `attach_stage`
};

enum class RelationKind : uint8_t { kSplit, kFuse, kRebase };

// How leaf IterVars derive from root ones.
//   kSplit:  parent -> (outer, inner); parent = outer * inner_extent + inner (+ parent min).
//            `factor` (inner extent) or `nparts` (outer extent) is set.
//   kFuse:   (outer, inner) -> fused; outer = fused / inner_extent, inner = fused % inner_extent.
//   kRebase: parent -> rebased, same extent starting at 0 (Schedule::Normalize).
struct IterVarRelation {
  RelationKind kind = RelationKind::kSplit;
  IterVar parent;
  IterVar outer;
  IterVar inner;
  IterVar fused;
  IterVar rebased;
  PrimExpr factor;
  PrimExpr nparts;
};

// Annotations of one loop.
struct IterVarAttr {
  tir::ForKind for_kind = tir::ForKind::kSerial;  // vectorize / unroll / parallel / bind
  std::string thread_tag;                         // kThreadBinding: "threadIdx.x", ...
  // pragma(key, value): an AttrStmt "pragma_<key>" around the loop.
  std::vector<std::pair<std::string, PrimExpr>> pragmas;
};

// storage_align: the stride of dim `axis` (of the stage's buffer) is padded to
// factor * k + offset.
struct StorageAlign {
  int axis = 0;
  int64_t factor = 0;
  int64_t offset = 0;
};

struct SplitAxes {
  IterVar outer;
  IterVar inner;
};

struct TileAxes {
  IterVar x_outer;
  IterVar y_outer;
  IterVar x_inner;
  IterVar y_inner;
};

using IterVarAttrMap = std::unordered_map<IterVar, IterVarAttr, RefHash>;

class Schedule;
namespace internal {
struct ScheduleState;
const ScheduleState& StateOf(const Schedule& s);
}  // namespace internal

class Stage {
 public:
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  Operation op;         // the current operation (cache_write / rfactor / cache_read replace it)
  Operation origin_op;  // the operation the stage was created for
  std::vector<IterVar> all_iter_vars;   // roots, then every IterVar a relation created
  std::vector<IterVar> leaf_iter_vars;  // the loops, outermost first
  std::vector<IterVarRelation> relations;
  IterVarAttrMap iter_var_attrs;
  AttachType attach_type = AttachType::kGroupRoot;
  Stage* attach_stage = nullptr;  // kScope
  IterVar attach_ivar;            // kScope
  std::vector<StorageAlign> storage_alignments;  // set by storage_align()
  std::string scope = "global";  // storage scope of the stage's buffers
  bool is_output = false;

  const std::string& name() const { return op->name; }
  bool is_placeholder() const { return op->kind == OpKind::kPlaceholder; }
  bool is_inlined() const {
    return attach_type == AttachType::kInline || attach_type == AttachType::kInlinedAlready;
  }
  // op->axis then op->reduce_axis.
  std::vector<IterVar> root_iter_vars() const;
  // The annotations of `iv`, or null.
  const IterVarAttr* attr(const IterVar& iv) const;

  // ---- Loop transformations (iv must be a current leaf of this stage) ----
  // parent -> (outer, inner) with inner extent `factor` (> 0).
  absl::StatusOr<SplitAxes> split(const IterVar& parent, int64_t factor);
  absl::StatusOr<SplitAxes> split(const IterVar& parent, PrimExpr factor);
  // parent -> (outer, inner) with outer extent `nparts` (> 0).
  absl::StatusOr<SplitAxes> split_by_nparts(const IterVar& parent, int64_t nparts);
  // Two adjacent leaves (outer immediately before inner; swapped arguments are accepted).
  absl::StatusOr<IterVar> fuse(const IterVar& outer, const IterVar& inner);
  // Consecutive leaves, outermost first (one leaf is returned as is).
  absl::StatusOr<IterVar> fuse(const std::vector<IterVar>& axes);
  // The given leaves take the order given, in the positions they occupy together.
  absl::Status reorder(const std::vector<IterVar>& order);
  // split x by x_factor, y by y_factor, then reorder to (xo, yo, xi, yi).
  absl::StatusOr<TileAxes> tile(const IterVar& x, const IterVar& y, int64_t x_factor,
                                int64_t y_factor);

  // ---- Loop annotations ----
  absl::Status vectorize(const IterVar& iv);  // not on a reduction axis
  absl::Status unroll(const IterVar& iv);
  absl::Status parallel(const IterVar& iv);   // not on a reduction axis
  // "blockIdx.{x,y,z}", "threadIdx.{x,y,z}", "vthread" (data-parallel axes only).
  absl::Status bind(const IterVar& iv, absl::string_view thread_tag);
  // AttrStmt "pragma_<key>" = value (default 1) around the loop.
  absl::Status pragma(const IterVar& iv, absl::string_view key, PrimExpr value = nullptr);

  // ---- Placement ----
  // Compute this stage inside loop `iv` of `parent`, a stage that (transitively) reads it.
  absl::Status compute_at(Stage* parent, const IterVar& iv);
  // Substitute this stage into its readers (not an output, not a reduction).
  absl::Status compute_inline();
  absl::Status compute_root();

  // ---- Storage ----
  // `axis` is one of op->axis (a root data-parallel axis).
  absl::Status storage_align(const IterVar& axis, int64_t factor, int64_t offset);
  absl::Status set_scope(absl::string_view scope);

 private:
  friend class Schedule;
  friend struct internal::ScheduleState;
  Stage() = default;

  absl::Status CheckLeaf(const IterVar& iv, absl::string_view primitive) const;
  absl::Status Annotate(const IterVar& iv, tir::ForKind kind, absl::string_view primitive,
                        absl::string_view tag);
  absl::StatusOr<SplitAxes> DoSplit(const IterVar& parent, PrimExpr factor, PrimExpr nparts,
                                    absl::string_view primitive);

  internal::ScheduleState* owner_ = nullptr;
};

class Schedule {
 public:
  Schedule();
  Schedule(Schedule&&) noexcept;
  Schedule& operator=(Schedule&&) noexcept;
  ~Schedule();
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  // The stage computing `t` (any operation a stage has had maps to it), or null.
  Stage* operator[](const Tensor& t) const;
  Stage* operator[](const Operation& op) const;
  // All stages, producers before consumers.
  std::vector<Stage*> stages() const;
  const std::vector<Tensor>& outputs() const;
  // The stages that read `s`'s outputs, looking through inlined stages (an
  // inlined reader is replaced by its own readers); producers-first order.
  absl::StatusOr<std::vector<Stage*>> ReadersOf(const Stage* s) const;

  // A new stage copying `tensor` into storage `scope`; each reader reads the
  // copy instead. Error if a reader does not read `tensor`.
  absl::StatusOr<Tensor> cache_read(const Tensor& tensor, absl::string_view scope,
                                    const std::vector<Operation>& readers);
  absl::StatusOr<Tensor> cache_read(const Tensor& tensor, absl::string_view scope,
                                    const std::vector<Tensor>& readers);
  // A new stage (in `scope`) computes what `tensor`'s stage computed, with its
  // reduction; the original stage becomes a copy of it. The original stage's
  // loop transformations are reset (as in TVM). Returns the cache tensor
  // matching `tensor` (every output of a multi-output op is cached).
  absl::StatusOr<Tensor> cache_write(const Tensor& tensor, absl::string_view scope);
  // TVM's rfactor: `axis` (a reduction leaf of tensor's stage, typically the
  // inner part of a split reduction axis) becomes a data-parallel axis, at
  // position `factor_axis` of the dims, of a new stage "<name>.rf" that does the
  // partial reductions; tensor's stage then reduces over it. Returns the
  // factored tensors (one per output). The stage's loop transformations are
  // reset; the new stage starts unscheduled. Sum/Prod/Max/Min only.
  absl::StatusOr<std::vector<Tensor>> rfactor(const Tensor& tensor, const IterVar& axis,
                                              int factor_axis = 0);

  // TVM's normalize: every root leaf that is not thread-bound is replaced by a
  // Rebase'd copy starting at 0. Optional: ScheduleOps already emits loops
  // from 0 for ranges that start elsewhere. Idempotent.
  absl::Status Normalize();

 private:
  friend absl::StatusOr<Schedule> CreateSchedule(std::vector<Tensor> outputs);
  friend const internal::ScheduleState& internal::StateOf(const Schedule& s);
  std::unique_ptr<internal::ScheduleState> state_;
};

// One stage per operation reachable from `outputs` (PostOrderOps order), the
// outputs' stages marked is_output. Errors: no outputs, an undefined output,
// or a compute that ValidateCompute rejects.
absl::StatusOr<Schedule> CreateSchedule(std::vector<Tensor> outputs);

}  // namespace kiln::te

#endif  // KILN_LOWERING_TE_SCHEDULE_H_
