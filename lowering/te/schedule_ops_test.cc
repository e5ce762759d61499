// File: lowering/te/schedule_ops_test.cc — the loop nests ScheduleOps builds.
#include "lowering/te/schedule_ops.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/tir_functor.h"
#include "ir/tir_printer.h"
#include "lowering/passes/verify.h"
#include "lowering/te/lower.h"

namespace kiln::te {
namespace {

using tir::IntImm;
using tir::StmtKind;
using tir::StmtNode;

const DataType kF32 = DataType::Float(32);

std::vector<PrimExpr> E(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

Schedule Make(const std::vector<Tensor>& outs) {
  absl::StatusOr<Schedule> s = CreateSchedule(outs);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

tir::PrimFunc Lower(Schedule& s, const std::vector<Tensor>& args) {
  absl::StatusOr<tir::PrimFunc> f = LowerSchedule(s, args, "f");
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : tir::MakePrimFunc("failed", {}, tir::NoOp());
}

// The statements of `s` in pre-order, as short strings: "for ax0 [0, 16)",
// "parallel ax0.outer", "if", "allocate B [6] local", "store C", "let ax0".
std::vector<std::string> Outline(const tir::Stmt& s) {
  std::vector<std::string> out;
  std::function<void(const tir::Stmt&)> walk = [&](const tir::Stmt& st) {
    if (!st) return;
    switch (st->kind) {
      case StmtKind::kFor: {
        std::string kind = st->for_kind == tir::ForKind::kSerial ? "for" : tir::ForKindName(st->for_kind);
        out.push_back(absl::StrCat(kind, " ", st->var->name, " ", tir::ToText(st->b)));
        break;
      }
      case StmtKind::kLetStmt: out.push_back("let " + st->var->name); break;
      case StmtKind::kIfThenElse: out.push_back("if"); break;
      case StmtKind::kStore: out.push_back("store " + st->buffer->name); break;
      case StmtKind::kAllocate: {
        std::vector<std::string> d;
        for (const PrimExpr& e : st->buffer->shape) d.push_back(tir::ToText(e));
        out.push_back(absl::StrCat("allocate ", st->buffer->name, " [", absl::StrJoin(d, ", "),
                                   "] ", st->tag));
        break;
      }
      case StmtKind::kAttr: out.push_back("attr " + st->tag); break;
      default: break;
    }
    for (const tir::Stmt& c : st->body) walk(c);
  };
  walk(s);
  return out;
}

std::string OutlineText(const tir::PrimFunc& f) { return absl::StrJoin(Outline(f->body), "; "); }

int Count(const tir::PrimFunc& f, StmtKind k) {
  int n = 0;
  tir::PostOrderVisit(f->body, [](const tir::ExprNode*) {}, [&](const StmtNode* s) { n += s->kind == k; });
  return n;
}

Tensor Elementwise(const Tensor& in, absl::string_view name) {
  return Compute(in.shape(), [&](const std::vector<Var>& i) { return in(E(i)) * 2.0f; }, name);
}

TEST(ScheduleOpsTest, LoopOrderFollowsLeavesAndReorder) {
  Tensor a = Placeholder({IntImm(6), IntImm(7)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Schedule s = Make({b});
  tir::PrimFunc f = Lower(s, {a, b});
  EXPECT_EQ(OutlineText(f), "for ax0 6; for ax1 7; store B");
  ASSERT_TRUE(s[b]->reorder({s[b]->op->axis[1], s[b]->op->axis[0]}).ok());
  f = Lower(s, {a, b});
  EXPECT_EQ(OutlineText(f), "for ax1 7; for ax0 6; store B");
  EXPECT_NE(tir::ToText(f).find("B[ax0, ax1] = (A[ax0, ax1] * 2f)"), std::string::npos)
      << tir::ToText(f);
}

TEST(ScheduleOpsTest, GuardsOnlyForUnevenSplits) {
  Tensor a = Placeholder({IntImm(16)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Schedule even = Make({b});
  ASSERT_TRUE(even[b]->split(even[b]->op->axis[0], 4).ok());
  tir::PrimFunc f = Lower(even, {a, b});
  EXPECT_EQ(OutlineText(f), "for ax0.outer 4; for ax0.inner 4; store B");
  EXPECT_EQ(Count(f, StmtKind::kIfThenElse), 0);
  // Index reconstruction: outer * 4 + inner.
  EXPECT_NE(tir::ToText(f).find("((ax0.outer * 4) + ax0.inner)"), std::string::npos)
      << tir::ToText(f);

  Schedule uneven = Make({b});
  ASSERT_TRUE(uneven[b]->split(uneven[b]->op->axis[0], 5).ok());
  f = Lower(uneven, {a, b});
  EXPECT_EQ(OutlineText(f), "for ax0.outer 4; for ax0.inner 5; if; store B");
  EXPECT_NE(tir::ToText(f).find("likely((((ax0.outer * 5) + ax0.inner) < 16))"), std::string::npos)
      << tir::ToText(f);

  // Splits by nparts, and a split of a split, both even: still no guard.
  Schedule nested = Make({b});
  absl::StatusOr<SplitAxes> sp = nested[b]->split_by_nparts(nested[b]->op->axis[0], 2);
  ASSERT_TRUE(sp.ok());
  ASSERT_TRUE(nested[b]->split(sp->inner, 4).ok());
  f = Lower(nested, {a, b});
  EXPECT_EQ(OutlineText(f), "for ax0.outer 2; for ax0.inner.outer 2; for ax0.inner.inner 4; store B");

  // Symbolic extent: the guard cannot be proven away.
  Var n = tir::MakeVar("n");
  Tensor an = Placeholder({n}, kF32, "A");
  Tensor bn = Elementwise(an, "B");
  Schedule sym = Make({bn});
  ASSERT_TRUE(sym[bn]->split(sym[bn]->op->axis[0], 8).ok());
  f = Lower(sym, {an, bn});
  EXPECT_EQ(OutlineText(f), "for ax0.outer floordiv((n + 7), 8); for ax0.inner 8; if; store B");
}

TEST(ScheduleOpsTest, FusedLoopRebuildsIndicesWithDivMod) {
  Tensor a = Placeholder({IntImm(3), IntImm(5)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Schedule s = Make({b});
  ASSERT_TRUE(s[b]->fuse(s[b]->op->axis[0], s[b]->op->axis[1]).ok());
  tir::PrimFunc f = Lower(s, {a, b});
  EXPECT_EQ(OutlineText(f), "for ax0.ax1.fused 15; store B");
  std::string text = tir::ToText(f);
  EXPECT_NE(text.find("floordiv(ax0.ax1.fused, 5)"), std::string::npos) << text;
  EXPECT_NE(text.find("floormod(ax0.ax1.fused, 5)"), std::string::npos) << text;
}

// C[i, j] = sum_k A[i, k] * B[k, j]
struct Matmul {
  Tensor a, b, c;
  IterVar k;
  explicit Matmul(int64_t n = 16) {
    a = Placeholder({IntImm(n), IntImm(n)}, kF32, "A");
    b = Placeholder({IntImm(n), IntImm(n)}, kF32, "B");
    k = ReduceAxis({IntImm(0), IntImm(n)}, "k");
    c = Compute({IntImm(n), IntImm(n)}, [&](const std::vector<Var>& i) {
      return Sum(a({i[0], k->var}) * b({k->var, i[1]}), {k});
    }, "C");
  }
};

TEST(ScheduleOpsTest, ReductionInitBeforeTheReductionLoops) {
  Matmul mm;
  Schedule s = Make({mm.c});
  tir::PrimFunc f = Lower(s, {mm.a, mm.b, mm.c});
  EXPECT_EQ(OutlineText(f), "for ax0 16; for ax1 16; store C; for k 16; store C");
  std::string text = tir::ToText(f);
  EXPECT_NE(text.find("C[ax0, ax1] = 0f"), std::string::npos) << text;
  EXPECT_NE(text.find("C[ax0, ax1] = (C[ax0, ax1] + (A[ax0, k] * B[k, ax1]))"), std::string::npos)
      << text;

  // A data-parallel loop inside the reduction loop gets its own init loop.
  Schedule s2 = Make({mm.c});
  Stage* c = s2[mm.c];
  absl::StatusOr<TileAxes> t = c->tile(c->op->axis[0], c->op->axis[1], 4, 8);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(c->reorder({t->x_outer, t->y_outer, mm.k, t->x_inner, t->y_inner}).ok());
  ASSERT_TRUE(c->vectorize(t->y_inner).ok());
  ASSERT_TRUE(c->unroll(t->x_inner).ok());
  ASSERT_TRUE(c->parallel(t->x_outer).ok());
  f = Lower(s2, {mm.a, mm.b, mm.c});
  EXPECT_EQ(OutlineText(f),
            "parallel ax0.outer 4; for ax1.outer 2; "
            "unrolled ax0.inner.init 4; vectorized ax1.inner.init 8; store C; "
            "for k 16; unrolled ax0.inner 4; vectorized ax1.inner 8; store C");
  EXPECT_EQ(Count(f, StmtKind::kIfThenElse), 0);
}

TEST(ScheduleOpsTest, SplitReductionAndConditions) {
  Tensor a = Placeholder({IntImm(4), IntImm(10)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(10)}, "k");
  Tensor b = Compute({IntImm(4)}, [&](const std::vector<Var>& i) {
    return Max(a({i[0], k->var}), {k}, tir::GT(a({i[0], k->var}), tir::FloatImm(0.0)));
  }, "B");
  Schedule s = Make({b});
  ASSERT_TRUE(s[b]->split(k, 4).ok());
  tir::PrimFunc f = Lower(s, {a, b});
  // Uneven reduction split: the update is guarded; the where-condition is an if too.
  EXPECT_EQ(OutlineText(f), "for ax0 4; store B; for k.outer 3; for k.inner 4; if; if; store B");
  std::string text = tir::ToText(f);
  EXPECT_NE(text.find("B[ax0] = -inff"), std::string::npos) << text;
  EXPECT_NE(text.find("max(B[ax0], A[ax0, ((k.outer * 4) + k.inner)])"), std::string::npos) << text;
}

TEST(ScheduleOpsTest, ArgMaxKeepsValueAndIndex) {
  Tensor x = Placeholder({IntImm(4), IntImm(10)}, kF32, "X");
  IterVar r = ReduceAxis({IntImm(0), IntImm(10)}, "r");
  Tensor am = Compute({IntImm(4)}, [&](const std::vector<Var>& i) {
    return ArgMax(x({i[0], r->var}), {r});
  }, "AM");
  Schedule s = Make({am});
  tir::PrimFunc f = Lower(s, {x, am});
  // One scalar accumulator inside the row loop.
  EXPECT_EQ(OutlineText(f),
            "for ax0 4; allocate AM.val [1] local; store AM.val; store AM; for r 10; if; "
            "store AM.val; store AM");
  std::string text = tir::ToText(f);
  EXPECT_NE(text.find("(AM[ax0] == -1)"), std::string::npos) << text;
  EXPECT_NE(text.find("isnan(X[ax0, r])"), std::string::npos) << text;
  EXPECT_NE(text.find("(X[ax0, r] > AM.val[0])"), std::string::npos) << text;

  // Rows inside the reduction loop: the accumulator covers the rows.
  ASSERT_TRUE(s[am]->reorder({r, s[am]->op->axis[0]}).ok());
  f = Lower(s, {x, am});
  EXPECT_EQ(OutlineText(f),
            "allocate AM.val [4] global; for ax0.init 4; store AM.val; store AM; for r 10; "
            "for ax0 4; if; store AM.val; store AM");
}

// C[i] = B[i] + B[i + 1] + B[i + 2], B = 2 * A
struct Stencil {
  Tensor a, b, c;
  explicit Stencil(int64_t n) {
    a = Placeholder({IntImm(n + 2)}, kF32, "A");
    b = Elementwise(a, "B");
    c = Compute({IntImm(n)}, [&](const std::vector<Var>& i) {
      return b({i[0]}) + b({i[0] + 1}) + b({i[0] + 2});
    }, "C");
  }
};

TEST(ScheduleOpsTest, ComputeAtAllocatesTheInferredWindow) {
  Stencil st(16);
  Schedule s = Make({st.c});
  tir::PrimFunc root = Lower(s, {st.a, st.c});
  EXPECT_EQ(OutlineText(root), "allocate B [18] global; for ax0 18; store B; for ax0 16; store C");

  absl::StatusOr<SplitAxes> sp = s[st.c]->split(s[st.c]->op->axis[0], 4);
  ASSERT_TRUE(sp.ok());
  ASSERT_TRUE(s[st.b]->compute_at(s[st.c], sp->outer).ok());
  ASSERT_TRUE(s[st.b]->set_scope("local").ok());
  tir::PrimFunc f = Lower(s, {st.a, st.c});
  // B's window (4 + 2) starts at 4 * outer: a loop from 0 and a let for the index.
  EXPECT_EQ(OutlineText(f),
            "for ax0.outer 4; allocate B [6] local; for ax0.idx 6; let ax0; store B; "
            "for ax0.inner 4; store C");
  std::string text = tir::ToText(f);
  // Reads and writes of B are relative to the window.
  EXPECT_NE(text.find("B[ax0.idx] = (A[((ax0.outer * 4) + ax0.idx)] * 2f)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("B[(ax0.inner + 2)]"), std::string::npos) << text;
  EXPECT_EQ(Count(f, StmtKind::kIfThenElse), 0);  // the window never leaves [0, 18)

  // An uneven split: C's tail is guarded, and so is B where its window leaves [0, 17).
  Stencil odd(15);
  Schedule s2 = Make({odd.c});
  absl::StatusOr<SplitAxes> sp2 = s2[odd.c]->split(s2[odd.c]->op->axis[0], 4);
  ASSERT_TRUE(sp2.ok());
  ASSERT_TRUE(s2[odd.b]->compute_at(s2[odd.c], sp2->outer).ok());
  f = Lower(s2, {odd.a, odd.c});
  EXPECT_EQ(OutlineText(f),
            "for ax0.outer 4; allocate B [6] global; for ax0.idx 6; let ax0; if; store B; "
            "for ax0.inner 4; if; store C");
}

TEST(ScheduleOpsTest, InlineSubstitutesTheBody) {
  Tensor x = Placeholder({IntImm(4), IntImm(10)}, kF32, "X");
  Tensor y = Compute(x.shape(), [&](const std::vector<Var>& i) { return x(E(i)) + 1.0f; }, "Y");
  Tensor z = Compute(x.shape(), [&](const std::vector<Var>& i) {
    return tir::Max(y({i[1] * 0 + i[0], i[1]}), tir::FloatImm(0.0));
  }, "Z");
  Schedule s = Make({z});
  ASSERT_TRUE(s[y]->compute_inline().ok());
  tir::PrimFunc f = Lower(s, {x, z});
  EXPECT_EQ(Count(f, StmtKind::kAllocate), 0);
  EXPECT_EQ(OutlineText(f), "for ax0 4; for ax1 10; store Z");
  std::string text = tir::ToText(f);
  EXPECT_NE(text.find("max((X[((ax1 * 0) + ax0), ax1] + 1f), 0f)"), std::string::npos) << text;
}

TEST(ScheduleOpsTest, AnnotationsBecomeForKindsThreadTagsAndPragmas) {
  Tensor x = Placeholder({IntImm(4), IntImm(32)}, kF32, "X");
  Tensor z = Elementwise(x, "Z");
  Schedule s = Make({z});
  Stage* sz = s[z];
  ASSERT_TRUE(sz->bind(sz->op->axis[0], "blockIdx.x").ok());
  ASSERT_TRUE(sz->bind(sz->op->axis[1], "threadIdx.x").ok());
  ASSERT_TRUE(sz->pragma(sz->op->axis[0], "auto_unroll_max_step", IntImm(8)).ok());
  tir::PrimFunc f = Lower(s, {x, z});
  EXPECT_EQ(OutlineText(f),
            "attr pragma_auto_unroll_max_step; thread_binding ax0 4; thread_binding ax1 32; store Z");
  std::string text = tir::ToText(f);
  EXPECT_NE(text.find("\"blockIdx.x\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"threadIdx.x\""), std::string::npos) << text;
}

// A pragma on a reduction loop (and on a data-parallel loop of a reduction,
// which has an init nest too) wraps the loop without binding the loop's
// variable a second time: the lowered function passes the loop verifier.
TEST(ScheduleOpsTest, PragmaOnAReductionLoopVerifies) {
  Matmul mm;
  Schedule s = Make({mm.c});
  Stage* c = s[mm.c];
  ASSERT_TRUE(c->pragma(mm.k, "auto_unroll_max_step", IntImm(4)).ok());
  ASSERT_TRUE(c->pragma(c->op->axis[1], "unroll_explicit", IntImm(0)).ok());
  tir::PrimFunc f = Lower(s, {mm.a, mm.b, mm.c});
  EXPECT_EQ(OutlineText(f),
            "for ax0 16; attr pragma_unroll_explicit; for ax1 16; store C; "
            "attr pragma_auto_unroll_max_step; for k 16; store C");
  absl::Status v = tir::transform::VerifyPrimFunc(f);
  EXPECT_TRUE(v.ok()) << v << "\n" << tir::ToText(f);
}

TEST(ScheduleOpsTest, CacheWriteCacheReadAndStorageAlign) {
  Matmul mm;
  Schedule s = Make({mm.c});
  absl::StatusOr<Tensor> cl = s.cache_write(mm.c, "local");
  ASSERT_TRUE(cl.ok());
  Stage* c = s[mm.c];
  absl::StatusOr<TileAxes> t = c->tile(c->op->axis[0], c->op->axis[1], 4, 4);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(s[*cl]->compute_at(c, t->y_outer).ok());
  absl::StatusOr<Tensor> as = s.cache_read(mm.a, "shared", std::vector<Tensor>{*cl});
  ASSERT_TRUE(as.ok());
  ASSERT_TRUE(s[*as]->compute_at(c, t->y_outer).ok());
  ASSERT_TRUE(s[*as]->storage_align(s[*as]->op->axis[0], 8, 1).ok());
  tir::PrimFunc f = Lower(s, {mm.a, mm.b, mm.c});
  EXPECT_EQ(OutlineText(f),
            "for ax0.outer 4; for ax1.outer 4; "
            "allocate A.shared [4, 16] shared; for ax0.idx 4; let ax0; for ax1 16; store A.shared; "
            "allocate C.local [4, 4] local; for ax0.c.idx 4; let ax0.c; for ax1.c.idx 4; let ax1.c; "
            "store C.local; for k 16; store C.local; "
            "for ax0.inner 4; for ax1.inner 4; store C");
  // storage_align is on the buffer.
  bool found = false;
  tir::PostOrderVisit(f->body, [](const tir::ExprNode*) {}, [&](const StmtNode* st) {
    if (st->kind == StmtKind::kAllocate && st->buffer->name == "A.shared") {
      found = true;
      ASSERT_EQ(st->buffer->axis_align.size(), 2u);
      EXPECT_EQ(st->buffer->axis_align[0], (std::pair<int64_t, int64_t>(8, 1)));
      EXPECT_EQ(st->buffer->axis_align[1], (std::pair<int64_t, int64_t>(0, 0)));
      EXPECT_EQ(st->buffer->scope, "shared");
    }
  });
  EXPECT_TRUE(found);
}

TEST(ScheduleOpsTest, ExtentOneLoopsBecomeLets) {
  Tensor a = Placeholder({IntImm(1), IntImm(8)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Schedule s = Make({b});
  tir::PrimFunc f = Lower(s, {a, b});
  EXPECT_EQ(OutlineText(f), "let ax0; for ax1 8; store B");
}

TEST(ScheduleOpsTest, RfactorLowersToTwoReductions) {
  Tensor a = Placeholder({IntImm(8), IntImm(30)}, kF32, "A");
  IterVar k = ReduceAxis({IntImm(0), IntImm(30)}, "k");
  Tensor b = Compute({IntImm(8)}, [&](const std::vector<Var>& i) { return Sum(a({i[0], k->var}), {k}); }, "B");
  Schedule s = Make({b});
  absl::StatusOr<SplitAxes> ks = s[b]->split(k, 4);
  ASSERT_TRUE(ks.ok());
  absl::StatusOr<std::vector<Tensor>> rf = s.rfactor(b, ks->inner);
  ASSERT_TRUE(rf.ok());
  ASSERT_TRUE(s[b]->parallel(s[b]->op->axis[0]).ok());
  tir::PrimFunc f = Lower(s, {a, b});
  EXPECT_EQ(OutlineText(f),
            "allocate B.rf [4, 8] global; for k.inner 4; for ax0 8; store B.rf; for k.outer 8; if; "
            "store B.rf; parallel ax0 8; store B; for k.inner.v 4; store B");
}

TEST(ScheduleOpsTest, MissingArgumentIsAnErrorNamingTheTensor) {
  Tensor a = Placeholder({IntImm(8)}, kF32, "Input");
  Tensor b = Elementwise(a, "B");
  Schedule s = Make({b});
  absl::StatusOr<tir::PrimFunc> f = LowerSchedule(s, {b}, "f");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("'Input' read by stage 'B'"), std::string::npos)
      << f.status();
  f = LowerSchedule(s, {a, b, a}, "f");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("passed twice"), std::string::npos) << f.status();
  Tensor stranger = Placeholder({IntImm(8)}, kF32, "Stranger");
  f = LowerSchedule(s, {stranger, b}, "f");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("'Stranger'"), std::string::npos) << f.status();
}

TEST(ScheduleOpsTest, ParamsAndAttrs) {
  Var n = tir::MakeVar("n");
  Tensor a = Placeholder({n, IntImm(4)}, kF32, "A");
  Tensor b = Elementwise(a, "B");
  Schedule s = Make({b});
  absl::StatusOr<tir::PrimFunc> f = LowerSchedule(s, {a, b}, "scale", {{"target", "llvm"}});
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ((*f)->params.size(), 2u);
  EXPECT_EQ((*f)->params[0]->name, "A");
  EXPECT_EQ((*f)->params[1]->name, "B");
  EXPECT_EQ((*f)->params[0]->shape[0].get(), n.get());
  EXPECT_EQ((*f)->attrs.at("target"), "llvm");
  EXPECT_EQ((*f)->name, "scale");
}

}  // namespace
}  // namespace kiln::te
