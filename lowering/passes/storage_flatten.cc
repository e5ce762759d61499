// File: lowering/passes/storage_flatten.cc
#include "lowering/passes/storage_flatten.h"

#include <string>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"
#include "lowering/passes/pass_util.h"

namespace kiln::tir::transform {
namespace {

constexpr absl::string_view kPass = "storage_flatten";

bool NeedsFlatten(const Buffer& b) {
  if (b->shape.size() != 1 || !b->strides.empty()) return true;
  if (b->elem_offset && !IsConstValue(b->elem_offset, 0)) return true;
  return false;
}

PrimExpr ToIndexType(const PrimExpr& e) {
  DataType t = e->dtype;
  if (t.is_int() && t.bits() == 64) return e;
  return Cast(DataType(DTypeCode::kInt, 64, t.lanes()), e);
}

class Flattener : public StmtExprMutator {
 public:
  explicit Flattener(const PrimFunc& f) : f_(f) {}
  absl::Status status;

  // The 1-D view of b (memoized per buffer object).
  Buffer FlatView(const Buffer& b) {
    auto it = views_.find(b.get());
    if (it != views_.end()) return it->second;
    std::vector<PrimExpr> strides = FlattenStrides(b);
    PrimExpr size = IntImm(1);
    if (b->strides.empty() && !b->shape.empty()) {
      size = strides[0] * ToIndexType(b->shape[0]);
    } else {
      for (size_t d = 0; d < b->shape.size(); ++d) {
        size = size + (ToIndexType(b->shape[d]) - 1) * strides[d];
      }
    }
    if (b->elem_offset && !IsConstValue(b->elem_offset, 0))
      size = size + ToIndexType(b->elem_offset);
    Ref<BufferNode> n(new BufferNode(*b));
    n->shape = {size};
    n->strides.clear();
    n->elem_offset = nullptr;
    n->axis_align.clear();
    Buffer view(n);
    views_[b.get()] = view;
    strides_[b.get()] = std::move(strides);
    return view;
  }

  // Flat index of an access, or null (with status set) on a bad access.
  PrimExpr FlatIndex(const Buffer& b, const std::vector<PrimExpr>& idx, const std::string& where) {
    FlatView(b);
    const std::vector<PrimExpr>& strides = strides_[b.get()];
    if (idx.size() != b->shape.size()) {
      if (status.ok()) {
        status = PassError(kPass, f_,
                           absl::StrCat("buffer '", b->name, "' has ", b->shape.size(),
                                        " dims, accessed with ", idx.size(), " indices: ", where));
      }
      return nullptr;
    }
    PrimExpr flat = IntImm(0);
    for (size_t d = 0; d < idx.size(); ++d) {
      flat = VecAdd(flat, VecMul(ToIndexType(idx[d]), strides[d]));
    }
    if (b->elem_offset && !IsConstValue(b->elem_offset, 0)) {
      flat = VecAdd(flat, ToIndexType(b->elem_offset));
    }
    return flat;
  }

  bool Skip(const Buffer& b, size_t nidx) {
    if (!b || !NeedsFlatten(b)) return true;
    return nidx == 1 && b->shape.size() >= 2;  // already flat
  }

 protected:
  PrimExpr VisitExpr_(const PrimExpr& e) override {
    PrimExpr r = MutateChildren(e);
    if (r->kind != ExprKind::kLoad || Skip(r->buffer, r->args.size())) return r;
    PrimExpr flat = FlatIndex(r->buffer, r->args, ToText(e));
    if (!flat) return r;
    return Load(FlatView(r->buffer), {flat});
  }

  Stmt VisitStmt_(const Stmt& s) override {
    Stmt r = MutateChildren(s);
    if (r->kind == StmtKind::kStore && !Skip(r->buffer, r->indices.size())) {
      std::string where = ToText(s);
      while (!where.empty() && where.back() == '\n') where.pop_back();
      PrimExpr flat = FlatIndex(r->buffer, r->indices, where);
      if (!flat) return r;
      return Store(FlatView(r->buffer), r->a, {flat});
    }
    if (r->kind == StmtKind::kAllocate && NeedsFlatten(r->buffer)) {
      Ref<StmtNode> n(new StmtNode(*r));
      n->buffer = FlatView(r->buffer);
      return Stmt(n);
    }
    return r;
  }

 private:
  const PrimFunc& f_;
  std::unordered_map<const BufferNode*, Buffer> views_;
  std::unordered_map<const BufferNode*, std::vector<PrimExpr>> strides_;
};

}  // namespace

std::vector<PrimExpr> FlattenStrides(const Buffer& b) {
  std::vector<PrimExpr> strides(b->shape.size());
  if (!b->strides.empty() && b->strides.size() == b->shape.size()) {
    for (size_t d = 0; d < b->shape.size(); ++d) strides[d] = ToIndexType(b->strides[d]);
    return strides;
  }
  PrimExpr stride = IntImm(1);
  for (size_t k = b->shape.size(); k > 0; --k) {
    size_t d = k - 1;
    if (d < b->axis_align.size() && b->axis_align[d].first > 0) {
      int64_t factor = b->axis_align[d].first;
      int64_t offset = ((b->axis_align[d].second % factor) + factor) % factor;
      int64_t s = 0;
      if (IsConstInt(stride, &s)) {
        int64_t m = ((s % factor) + factor) % factor;
        stride = IntImm(s + (((offset - m) % factor) + factor) % factor);
      } else {
        stride = stride + FloorMod(IntImm(factor + offset) - FloorMod(stride, IntImm(factor)),
                                   IntImm(factor));
      }
    }
    strides[d] = stride;
    stride = stride * ToIndexType(b->shape[d]);
  }
  return strides;
}

absl::StatusOr<PrimFunc> StorageFlatten(const PrimFunc& f) {
  if (!f || !f->body) return PassError(kPass, f, "null function or body");
  for (const Buffer& b : f->params) {
    if (!b->strides.empty() && b->strides.size() != b->shape.size()) {
      return PassError(kPass, f,
                       absl::StrCat("param '", b->name, "' has ", b->strides.size(),
                                    " strides for ", b->shape.size(), " dims"));
    }
  }
  Flattener fl(f);
  Stmt body = fl.VisitStmt(f->body);
  if (!fl.status.ok()) return fl.status;
  if (body == f->body) return f;
  return WithBody(f, body);
}

}  // namespace kiln::tir::transform
