// File: lowering/passes/unroll_loop.cc
#include "lowering/passes/unroll_loop.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/tir_functor.h"
#include "lowering/passes/pass_util.h"

namespace kiln::tir::transform {
namespace {

constexpr absl::string_view kPass = "unroll_loop";

bool ContainsLoop(const Stmt& s) {
  bool found = false;
  PostOrderVisit(s, nullptr, [&](const StmtNode* n) {
    if (n->kind == StmtKind::kFor) found = true;
  });
  return found;
}

class Unroller : public StmtExprMutator {
 public:
  explicit Unroller(const UnrollOptions& o)
      : max_extent_(o.max_extent), auto_max_step_(o.auto_max_step) {}
  absl::Status status;

 protected:
  Stmt VisitStmt_(const Stmt& s) override {
    if (s->kind == StmtKind::kAttr && s->tag == "pragma_auto_unroll_max_step") {
      int64_t v = 0;
      if (!IsConstInt(s->a, &v)) return MutateChildren(s);
      int64_t saved = auto_max_step_;
      auto_max_step_ = v;
      Stmt body = VisitStmt(s->body0());
      auto_max_step_ = saved;
      return body;
    }
    Stmt r = MutateChildren(s);
    if (r->kind != StmtKind::kFor) return r;
    int64_t ext = 0;
    bool const_ext = IsConstInt(r->b, &ext);
    if (r->for_kind == ForKind::kUnrolled) {
      std::string why;
      if (!const_ext) {
        why = "extent_not_constant";
      } else if (ext > max_extent_) {
        why = absl::StrCat("extent_", ext, "_exceeds_max_", max_extent_);
      }
      if (!why.empty()) {
        Ref<StmtNode> n(new StmtNode(*r));
        n->for_kind = ForKind::kSerial;
        n->annotations["unroll.skipped"] = why;
        return Stmt(n);
      }
      return Unroll(r, ext);
    }
    if (r->for_kind == ForKind::kSerial && auto_max_step_ > 0 && const_ext &&
        !ContainsLoop(r->body0())) {
      int64_t size = LeafStmtCount(r->body0()) * std::max<int64_t>(ext, 0);
      if (size <= auto_max_step_) return Unroll(r, ext);
    }
    return r;
  }

 private:
  Stmt Unroll(const Stmt& loop, int64_t ext) {
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < ext; ++k) {
      PrimExpr value = loop->a + k;
      Stmt copy = Substitute(loop->body0(), {{loop->var.get(), value}});
      copies.push_back(k == 0 ? copy : RenewDefs(copy));
    }
    return Seq(std::move(copies));
  }

  int64_t max_extent_;
  int64_t auto_max_step_;
};

}  // namespace

absl::StatusOr<PrimFunc> UnrollLoop(const PrimFunc& f, const UnrollOptions& options) {
  if (!f || !f->body) return PassError(kPass, f, "null function or body");
  if (options.max_extent < 0 || options.auto_max_step < 0) {
    return PassError(kPass, f, "negative unroll option");
  }
  Unroller u(options);
  Stmt body = u.VisitStmt(f->body);
  if (!u.status.ok()) return u.status;
  if (body == f->body) return f;
  return WithBody(f, body);
}

}  // namespace kiln::tir::transform
