// File: codegen_cuda/tensor_core.cc — GEMM tile products on tensor cores.
#include "codegen_cuda/tensor_core.h"

#include <algorithm>
#include <array>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/tir_functor.h"
#include "lowering/strategy/target.h"

namespace kiln::codegen_cuda {
namespace {

using tir::ExprKind;
using tir::ExprNode;
using tir::ForKind;
using tir::PrimExpr;
using tir::Stmt;
using tir::StmtKind;
using tir::StmtNode;

using Env = std::unordered_map<const ExprNode*, int64_t>;

// The value of an integer index expression, or nothing (an unknown var, an
// operation other than + - * or a constant floordiv/floormod).
std::optional<int64_t> Eval(const PrimExpr& e, const Env& env) {
  switch (e->kind) {
    case ExprKind::kIntImm:
      return e->int_value;
    case ExprKind::kVar: {
      auto it = env.find(e.get());
      if (it == env.end()) return std::nullopt;
      return it->second;
    }
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul: {
      std::optional<int64_t> a = Eval(e->args[0], env), b = Eval(e->args[1], env);
      if (!a || !b) return std::nullopt;
      if (e->kind == ExprKind::kAdd) return *a + *b;
      if (e->kind == ExprKind::kSub) return *a - *b;
      return *a * *b;
    }
    default:
      return std::nullopt;
  }
}

// index = c0 + c[0]*v0 + c[1]*v1 + c[2]*v2 over exactly the vars given (and
// no other), checked at a few points.
struct Affine {
  int64_t c0 = 0;
  std::array<int64_t, 3> c = {0, 0, 0};
};

std::optional<Affine> FitAffine(const PrimExpr& index, const std::array<const ExprNode*, 3>& vars) {
  Env env;
  for (const ExprNode* v : vars) env[v] = 0;
  Affine a;
  std::optional<int64_t> base = Eval(index, env);
  if (!base) return std::nullopt;
  a.c0 = *base;
  for (size_t i = 0; i < 3; ++i) {
    Env e = env;
    e[vars[i]] = 1;
    std::optional<int64_t> v = Eval(index, e);
    if (!v) return std::nullopt;
    a.c[i] = *v - a.c0;
  }
  const int64_t points[3][3] = {{3, 2, 5}, {7, 1, 11}, {15, 3, 13}};
  for (const auto& p : points) {
    Env e;
    int64_t want = a.c0;
    for (size_t i = 0; i < 3; ++i) {
      e[vars[i]] = p[i];
      want += a.c[i] * p[i];
    }
    std::optional<int64_t> v = Eval(index, e);
    if (!v || *v != want) return std::nullopt;
  }
  return a;
}

// index = base + c[0]*v0 + c[1]*v1 + c[2]*v2, base an expression of the
// index's other vars (none of `forbidden`), the coefficients constants:
// fitted with the other vars at 0 and checked at a few points with them at
// other values. Affine::c0 is left 0.
std::optional<Affine> FitAffineWithBase(const PrimExpr& index,
                                        const std::array<const ExprNode*, 3>& vars,
                                        const std::unordered_set<const ExprNode*>& forbidden) {
  std::vector<const ExprNode*> others;
  bool bad = false;
  tir::PostOrderVisit(index, [&](const ExprNode* e) {
    if (e->kind != ExprKind::kVar) return;
    if (forbidden.count(e)) bad = true;
    if (std::find(vars.begin(), vars.end(), e) == vars.end() &&
        std::find(others.begin(), others.end(), e) == others.end()) {
      others.push_back(e);
    }
  });
  if (bad) return std::nullopt;
  std::optional<Affine> fit;
  const int64_t points[4][3] = {{1, 0, 0}, {3, 2, 5}, {7, 1, 11}, {15, 3, 13}};
  for (int64_t trial = 0; trial < 3; ++trial) {
    Env env;
    for (size_t i = 0; i < others.size(); ++i) env[others[i]] = trial * static_cast<int64_t>(i + 2);
    for (const ExprNode* v : vars) env[v] = 0;
    const std::optional<int64_t> base = Eval(index, env);
    if (!base) return std::nullopt;
    Affine a;
    for (size_t i = 0; i < 3; ++i) {
      Env e = env;
      e[vars[i]] = 1;
      const std::optional<int64_t> v = Eval(index, e);
      if (!v) return std::nullopt;
      a.c[i] = *v - *base;
    }
    if (fit && fit->c != a.c) return std::nullopt;
    fit = a;
    for (const auto& p : points) {
      Env e = env;
      int64_t want = *base;
      for (size_t i = 0; i < 3; ++i) {
        e[vars[i]] = p[i];
        want += a.c[i] * p[i];
      }
      const std::optional<int64_t> v = Eval(index, e);
      if (!v || *v != want) return std::nullopt;
    }
  }
  return fit;
}

bool IsF32(DataType t) { return t.code() == DTypeCode::kFloat && t.bits() == 32 && t.lanes() == 1; }
bool IsHalf(DataType t) { return t.code() == DTypeCode::kFloat && t.bits() == 16 && t.lanes() == 1; }
bool IsBF16(DataType t) { return t.code() == DTypeCode::kBFloat && t.bits() == 16 && t.lanes() == 1; }

// A float32 value of a 16-bit float shared tile: Cast(f32, Load).
const ExprNode* TileLoad(const PrimExpr& e) {
  const PrimExpr* x = &e;
  if (e->kind == ExprKind::kCast && IsF32(e->dtype)) x = &e->args[0];
  if ((*x)->kind != ExprKind::kLoad || (*x)->args.size() != 1) return nullptr;
  return x->get();
}

class Rewriter {
 public:
  Rewriter(const Stmt& body, const TensorCoreOptions& options) : options_(options) {
    tir::PostOrderVisit(body, [](const ExprNode*) {}, [&](const StmtNode* s) {
      if (s->kind == StmtKind::kAllocate) {
        scope_[s->buffer->data.get()] = s->tag.empty() ? s->buffer->scope : s->tag;
        int64_t n = 0;
        const PrimExpr size = tir::ShapeProduct(s->buffer->shape);
        if (size && tir::IsConstInt(size, &n)) size_[s->buffer->data.get()] = n;
      }
    });
  }

  Stmt Visit(const Stmt& s, bool in_if) {
    if (!s) return s;
    if (s->kind == StmtKind::kAttr && s->tag == lowering::kConvTensorCorePragma && !in_if &&
        !ty_.empty() && !tx_.empty()) {
      if (Stmt r = RewriteConv(s)) return r;
    }
    switch (s->kind) {
      case StmtKind::kSeq: {
        std::vector<Stmt> out;
        bool changed = false;
        for (const Stmt& c : s->body) {
          out.push_back(Visit(c, in_if));
          changed = changed || out.back().get() != c.get();
        }
        return changed ? tir::Seq(std::move(out)) : s;
      }
      case StmtKind::kIfThenElse: {
        Stmt a = Visit(s->body[0], true);
        Stmt b = s->body.size() > 1 ? Visit(s->body[1], true) : Stmt();
        if (a.get() == s->body[0].get() && (s->body.size() < 2 || b.get() == s->body[1].get())) {
          return s;
        }
        return tir::IfThenElse(s->a, a, b);
      }
      case StmtKind::kFor:
        if (s->for_kind == ForKind::kThreadBinding) {
          // Nests of the whole block (16 of the launch's 16 threads) only.
          if (s->tag == "threadIdx.y" && tir::IsConstValue(s->b, 16)) ty_.insert(s->var.get());
          if (s->tag == "threadIdx.x" && tir::IsConstValue(s->b, 16)) tx_.insert(s->var.get());
        } else if (!in_if && !ty_.empty() && !tx_.empty()) {
          if (Stmt r = RewriteWhole(s)) return r;
          if (Stmt r = RewriteStep(s)) return r;
        }
        [[fallthrough]];
      case StmtKind::kAttr:
      case StmtKind::kLetStmt:
      case StmtKind::kAllocate:
      case StmtKind::kAssert: {
        Stmt b = Visit(s->body0(), in_if);
        if (b.get() == s->body0().get()) return s;
        return tir::WithChildren(s, s->a, s->b, s->indices, {b});
      }
      default:
        return s;
    }
  }

 private:
  struct Match {
    const StmtNode* triple = nullptr;
    tir::Buffer cl, as, bs;
    Affine a, b;
    bool bf16 = false;
  };

  // The step's triple loop among `s`'s statements (through sequences and
  // wrappers, not loops or conditions).
  const StmtNode* FindTriple(const Stmt& s, Match* m) {
    switch (s->kind) {
      case StmtKind::kSeq:
        for (const Stmt& c : s->body) {
          if (const StmtNode* t = FindTriple(c, m)) return t;
        }
        return nullptr;
      case StmtKind::kAllocate:
      case StmtKind::kLetStmt:
      case StmtKind::kAttr:
        return FindTriple(s->body0(), m);
      case StmtKind::kFor:
        return MatchTriple(s, m) ? s.get() : nullptr;
      default:
        return nullptr;
    }
  }

  static bool Serial(const Stmt& s, int64_t extent) {
    return s->kind == StmtKind::kFor &&
           (s->for_kind == ForKind::kSerial || s->for_kind == ForKind::kUnrolled) &&
           tir::IsConstValue(s->a, 0) && tir::IsConstValue(s->b, extent);
  }

  // What both forms share: `outer` (the reduction loop) over exactly
  //   for (ii, 0, reg) for (jj, 0, reg)
  //     Cl[ii*reg + jj] = Cl[ii*reg + jj] + float(X[x]) * float(Y[y])
  // with Cl a float32 "local" buffer; the loops, the store and the loads.
  // With `guarded`, the store may sit in up to two `if (likely(c))` without
  // an else (a ragged tile's row and column guards), their conjuncts listed.
  struct Accumulate {
    const StmtNode* ii = nullptr;
    const StmtNode* jj = nullptr;
    const StmtNode* store = nullptr;
    const ExprNode* la = nullptr;
    const ExprNode* lb = nullptr;
    std::vector<PrimExpr> guards;
  };

  static void Conjuncts(const PrimExpr& c, std::vector<PrimExpr>* out) {
    if (c->kind == ExprKind::kAnd) {
      Conjuncts(c->args[0], out);
      Conjuncts(c->args[1], out);
    } else {
      out->push_back(c);
    }
  }

  // The (ii, jj) nest of extents reg_i x reg_j (a thread's block) under
  // `outer`, accumulating into Cl[ii*reg_j + jj].
  std::optional<Accumulate> MatchAccumulate(const Stmt& outer, int64_t reg_i, int64_t reg_j,
                                            bool guarded = false) {
    if (!Serial(outer->body0(), reg_i) || !Serial(outer->body0()->body0(), reg_j)) {
      return std::nullopt;
    }
    const Stmt& ii = outer->body0();
    const Stmt& jj = ii->body0();
    const Stmt* body = &jj->body0();
    std::vector<PrimExpr> guards;
    for (int depth = 0; guarded && depth < 2 && (*body)->kind == StmtKind::kIfThenElse; ++depth) {
      const Stmt& g = *body;
      if (g->body.size() > 1 && g->body[1]) return std::nullopt;
      const PrimExpr& c = g->a;
      if (c->kind != ExprKind::kCall || c->name != "likely" || c->args.size() != 1) {
        return std::nullopt;
      }
      Conjuncts(c->args[0], &guards);
      body = &g->body[0];
    }
    const Stmt& st = *body;
    if (st->kind != StmtKind::kStore || st->indices.size() != 1 || !IsF32(st->buffer->dtype) ||
        scope_[st->buffer->data.get()] != "local") {
      return std::nullopt;
    }
    const PrimExpr& v = st->a;
    if (v->kind != ExprKind::kAdd || v->args[0]->kind != ExprKind::kLoad ||
        v->args[0]->buffer->data.get() != st->buffer->data.get() ||
        !tir::ExprDeepEqual(v->args[0]->args[0], st->indices[0]) ||
        v->args[1]->kind != ExprKind::kMul) {
      return std::nullopt;
    }
    const std::optional<Affine> ci =
        FitAffine(st->indices[0], {ii->var.get(), jj->var.get(), outer->var.get()});
    if (!ci || ci->c0 != 0 || ci->c[0] != reg_j || ci->c[1] != 1 || ci->c[2] != 0) {
      return std::nullopt;
    }
    Accumulate acc{ii.get(), jj.get(), st.get(), TileLoad(v->args[1]->args[0]),
                   TileLoad(v->args[1]->args[1]), std::move(guards)};
    if (acc.la == nullptr || acc.lb == nullptr) return std::nullopt;
    return acc;
  }

  bool MatchTriple(const Stmt& ki, Match* m) {
    if (!Serial(ki, 16)) return false;
    const std::optional<Accumulate> acc = MatchAccumulate(ki, 4, 4);
    if (!acc) return false;
    const StmtNode* ii = acc->ii;
    const StmtNode* jj = acc->jj;
    const StmtNode* st = acc->store;
    const ExprNode* la = acc->la;
    const ExprNode* lb = acc->lb;
    if (scope_[la->buffer->data.get()] != "shared" ||
        scope_[lb->buffer->data.get()] != "shared") {
      return false;
    }
    const DataType t = la->buffer->dtype;
    if ((!IsHalf(t) && !IsBF16(t)) || lb->buffer->dtype != t) return false;
    // A's index over (ty, ii, ki), B's over (tx, jj, ki): row ty*4 + ii and
    // column tx*4 + jj of the block's tiles.
    for (const ExprNode* y : ty_) {
      std::optional<Affine> a = FitAffine(la->args[0], {y, ii->var.get(), ki->var.get()});
      if (!a || a->c[0] != 4 * a->c[1]) continue;
      for (const ExprNode* x : tx_) {
        std::optional<Affine> b = FitAffine(lb->args[0], {x, jj->var.get(), ki->var.get()});
        if (!b || b->c[0] != 4 * b->c[1]) continue;
        m->cl = st->buffer;
        m->as = la->buffer;
        m->bs = lb->buffer;
        m->a = *a;
        m->b = *b;
        m->bf16 = IsBF16(t);
        return true;
      }
    }
    return false;
  }

  static Stmt Call(const char* name, std::vector<PrimExpr> args) {
    return tir::Evaluate(tir::Call(DataType::Int(32), name, std::move(args), tir::CallEffect::kOpaque));
  }

  // Replaces `triple` in `s` (found by FindTriple).
  static Stmt Replace(const Stmt& s, const StmtNode* triple, const Stmt& with) {
    if (s.get() == triple) return with;
    switch (s->kind) {
      case StmtKind::kSeq: {
        std::vector<Stmt> out;
        for (const Stmt& c : s->body) out.push_back(Replace(c, triple, with));
        return tir::Seq(std::move(out));
      }
      case StmtKind::kAllocate:
      case StmtKind::kLetStmt:
      case StmtKind::kAttr:
        return tir::WithChildren(s, s->a, s->b, s->indices, {Replace(s->body0(), triple, with)});
      default:
        return s;
    }
  }

  // The limit a ragged tile's guard `lhs < rhs` puts on the tile's rows (its
  // lhs row0 + 8*thread + reg, row0 free of the tile's other vars): rhs -
  // row0, the rows that exist from the tile's first. Nothing if it is not
  // such a guard.
  static std::optional<PrimExpr> GuardLimit(const PrimExpr& c, const ExprNode* thread,
                                            const ExprNode* reg, const ExprNode* k,
                                            const std::unordered_set<const ExprNode*>& others,
                                            int64_t per_thread) {
    if (c->kind != ExprKind::kLT) return std::nullopt;
    std::unordered_set<const ExprNode*> forbidden = others;
    std::optional<Affine> a = FitAffineWithBase(c->args[0], {thread, reg, k}, forbidden);
    if (!a || a->c[0] != per_thread || a->c[1] != 1 || a->c[2] != 0) return std::nullopt;
    forbidden.insert({thread, reg, k});
    if (tir::UsesVar(c->args[1], [&](const ExprNode* v) { return forbidden.count(v) > 0; })) {
      return std::nullopt;
    }
    tir::VarMap zero;
    for (const ExprNode* var : {thread, reg, k}) zero[var] = tir::IntImm(0);
    return tir::Sub(c->args[1], tir::Substitute(c->args[0], zero));
  }

  // The 128x128 template's whole reduction (kGemmTc*): the serial loop `k`
  // over exactly
  //   for (ii, 0, 8) for (jj, 0, 8) [if (likely(row < M))] [if (likely(col < N))]
  //     Cl[ii*8 + jj] = Cl[ii*8 + jj] + float(A[a(ty, ii, k)]) * float(B[b(tx, jj, k)])
  // with A and B 16-bit float buffers of global memory (float32 with TF32),
  // A's row ty*8 + ii and B's column tx*8 + jj, one of each operand's two
  // strides 1 and the other a multiple of a 16-byte chunk. The guards of a
  // ragged tile (row = row0 + ty*8 + ii, col = col0 + tx*8 + jj) become the
  // call's limits M - row0 and N - col0 (else 128); k's extent is its third.
  Stmt RewriteWhole(const Stmt& k) {
    int64_t kext = 0;
    if (!(k->for_kind == ForKind::kSerial || k->for_kind == ForKind::kUnrolled) ||
        !tir::IsConstValue(k->a, 0) || !tir::IsConstInt(k->b, &kext) || kext < 1) {
      return nullptr;
    }
    // The thread's block: 8 x 8 (the 128x128 tile), or 8 x 16 (the wide
    // wgmma tile, 128 x 256, sm_90a and both operands k-major only).
    const int64_t reg_j = Serial(k->body0(), 8) && Serial(k->body0()->body0(), 16) ? 16 : 8;
    const bool wide = reg_j == 16;
    if (wide && !options_.wgmma) return nullptr;
    const std::optional<Accumulate> acc = MatchAccumulate(k, 8, reg_j, /*guarded=*/true);
    if (!acc) return nullptr;
    const StmtNode* ii = acc->ii;
    const StmtNode* jj = acc->jj;
    const StmtNode* st = acc->store;
    const ExprNode* la = acc->la;
    const ExprNode* lb = acc->lb;
    if (scope_.count(la->buffer->data.get()) ||
        scope_.count(lb->buffer->data.get())) {
      return nullptr;
    }
    const DataType t = la->buffer->dtype;
    const bool tf32 = options_.tf32 && IsF32(t);
    if ((!IsHalf(t) && !IsBF16(t) && !tf32) || lb->buffer->dtype != t) return nullptr;
    if (wide && tf32) return nullptr;
    // One stride 1, the other a multiple of a 16-byte chunk (8 16-bit or 4
    // 32-bit elements).
    const int64_t chunk = tf32 ? 4 : 8;
    auto strides_ok = [chunk](int64_t outer, int64_t kstride) {
      return (kstride == 1 && outer > 0 && outer % chunk == 0) ||
             (outer == 1 && kstride > 0 && kstride % chunk == 0);
    };
    for (const ExprNode* y : ty_) {
      std::unordered_set<const ExprNode*> not_a(tx_.begin(), tx_.end());
      not_a.insert(jj->var.get());
      std::optional<Affine> a =
          FitAffineWithBase(la->args[0], {y, ii->var.get(), k->var.get()}, not_a);
      if (!a || a->c[0] != 8 * a->c[1] || !strides_ok(a->c[1], a->c[2])) continue;
      for (const ExprNode* x : tx_) {
        std::unordered_set<const ExprNode*> not_b(ty_.begin(), ty_.end());
        not_b.insert(ii->var.get());
        std::optional<Affine> b =
            FitAffineWithBase(lb->args[0], {x, jj->var.get(), k->var.get()}, not_b);
        if (!b || b->c[0] != reg_j * b->c[1] || !strides_ok(b->c[1], b->c[2])) continue;
        const bool wg = !tf32 && options_.wgmma && a->c[2] == 1 && b->c[2] == 1;
        if (wide && !wg) continue;
        PrimExpr rows = tir::IntImm(128), cols = tir::IntImm(16 * reg_j);
        bool guards_ok = true;
        for (const PrimExpr& g : acc->guards) {
          if (std::optional<PrimExpr> r =
                  GuardLimit(g, y, ii->var.get(), k->var.get(), not_a, 8)) {
            rows = *r;
          } else if (std::optional<PrimExpr> c =
                         GuardLimit(g, x, jj->var.get(), k->var.get(), not_b, reg_j)) {
            cols = *c;
          } else {
            guards_ok = false;
          }
        }
        if (!guards_ok) continue;
        auto base = [&](const PrimExpr& index, const ExprNode* thread, const ExprNode* reg) {
          tir::VarMap zero;
          for (const ExprNode* var : {thread, reg, k->var.get()}) zero[var] = tir::IntImm(0);
          return tir::Substitute(index, zero);
        };
        auto i64 = [](int64_t c) { return tir::IntImm(c); };
        const int64_t kstep = tf32 ? 16 : wide ? 64 : 32;
        std::vector<PrimExpr> args = {st->buffer->data, la->buffer->data,
                                      base(la->args[0], y, ii->var.get()), i64(a->c[1])};
        if (!wg) args.push_back(i64(a->c[2]));
        args.insert(args.end(),
                    {lb->buffer->data, base(lb->args[0], x, jj->var.get()), i64(b->c[1])});
        if (!wg) args.push_back(i64(b->c[2]));
        args.insert(args.end(), {i64((kext + kstep - 1) / kstep), rows, cols, i64(kext)});
        if (wide) args.push_back(i64(options_.wgmma_tma ? 128 : options_.wgmma_swizzle));
        const char* name = tf32   ? kGemmTf32
                           : wide && options_.wgmma_ws ? (IsBF16(t) ? kGemmWgsBF16 : kGemmWgsF16)
                           : wide && options_.wgmma_tma ? (IsBF16(t) ? kGemmWgtBF16 : kGemmWgtF16)
                           : wide ? (IsBF16(t) ? kGemmWgwBF16 : kGemmWgwF16)
                           : wg   ? (IsBF16(t) ? kGemmWgBF16 : kGemmWgF16)
                                  : (IsBF16(t) ? kGemmTcBF16 : kGemmTcF16);
        return Call(name, std::move(args));
      }
    }
    return nullptr;
  }

  Stmt RewriteStep(const Stmt& ko) {
    Match m;
    const StmtNode* triple = FindTriple(ko->body0(), &m);
    if (triple == nullptr) return nullptr;
    tir::Buffer acc = tir::MakeBuffer("mma_acc", DataType::Float(32), {tir::IntImm(16)}, "local");
    scope_[acc->data.get()] = "local";
    auto i64 = [](int64_t v) { return tir::IntImm(v); };
    Stmt block = Call(m.bf16 ? kMmaBlockBF16 : kMmaBlockF16,
                      {acc->data, m.as->data, i64(m.a.c0), i64(m.a.c[1]), i64(m.a.c[2]), m.bs->data,
                       i64(m.b.c0), i64(m.b.c[1]), i64(m.b.c[2])});
    Stmt step = tir::WithChildren(ko, ko->a, ko->b, ko->indices, {Replace(ko->body0(), triple, block)});
    Stmt all = tir::Seq({Call(kMmaZero, {acc->data}), step, Call(kMmaFinish, {acc->data, m.cl->data})});
    return tir::Allocate(acc, all, "local");
  }

  // The load of a kernel parameter `e` reads, through a cast to float32 and
  // a padding test (if_then_else(c, X[i], 0)), or null.
  const ExprNode* GatherLoad(const PrimExpr& e) {
    const PrimExpr* x = &e;
    auto strip = [&] {
      if ((*x)->kind == ExprKind::kCast) x = &(*x)->args[0];
    };
    strip();
    if (((*x)->kind == ExprKind::kCall && (*x)->name == "if_then_else") ||
        (*x)->kind == ExprKind::kSelect) {
      if ((*x)->args.size() != 3) return nullptr;
      const PrimExpr* f = &(*x)->args[2];
      if ((*f)->kind == ExprKind::kCast) f = &(*f)->args[0];
      const bool zero = ((*f)->kind == ExprKind::kFloatImm && (*f)->float_value == 0.0) ||
                        tir::IsConstValue(*f, 0);
      if (!zero) return nullptr;
      x = &(*x)->args[1];
      strip();
    }
    if ((*x)->kind != ExprKind::kLoad || (*x)->args.size() != 1 ||
        scope_.count((*x)->buffer->data.get())) {
      return nullptr;
    }
    return x->get();
  }

  // The implicit-GEMM conv (lowering/strategy/target.h): the marked nest
  // holds one store and nothing else that writes, Cl[i] = Cl[i] +
  // float(X-read) * float(W[j]) into the thread's float32 "local" block, X
  // and W 16-bit float kernel parameters of one type (float32 ones with
  // TF32; the data's read possibly under its padding test); the whole nest
  // becomes
  //   kiln.conv_tc_{f16,bf16,tf32}(Cl, X, W, <the 20 geometry arguments>).
  Stmt RewriteConv(const Stmt& attr) {
    const PrimExpr& g = attr->a;
    if (g->kind != ExprKind::kCall || g->name != lowering::kConvTensorCoreGeometry ||
        g->args.size() != static_cast<size_t>(lowering::kConvTensorCoreGeometryArgs)) {
      return nullptr;
    }
    for (size_t i = 0; i + 4 < g->args.size(); ++i) {
      if (!tir::IsConstInt(g->args[i])) return nullptr;
    }
    std::vector<const StmtNode*> stores;
    bool other = false;
    tir::PostOrderVisit(attr->body0(), [](const ExprNode*) {}, [&](const StmtNode* n) {
      if (n->kind == StmtKind::kStore) stores.push_back(n);
      if (n->kind == StmtKind::kAllocate || n->kind == StmtKind::kEvaluate) other = true;
    });
    if (stores.size() != 1 || other) return nullptr;
    const StmtNode* st = stores[0];
    const tir::Buffer& cl = st->buffer;
    if (st->indices.size() != 1 || !IsF32(cl->dtype) || scope_[cl->data.get()] != "local") {
      return nullptr;
    }
    // The thread's block: 8 x 8, or 8 x OW (NCHW) / OW x 8 (NHWC) where the
    // output has fewer than 8 columns (bound inference clips it there).
    int64_t ow = 0;
    tir::IsConstInt(g->args[15], &ow);
    auto size = size_.find(cl->data.get());
    if (size == size_.end() || size->second != 8 * std::min<int64_t>(ow, 8)) return nullptr;
    const PrimExpr& v = st->a;
    if (v->kind != ExprKind::kAdd || v->args[0]->kind != ExprKind::kLoad ||
        v->args[0]->buffer->data.get() != cl->data.get() || v->args[1]->kind != ExprKind::kMul) {
      return nullptr;
    }
    const ExprNode* x = GatherLoad(v->args[1]->args[0]);
    const ExprNode* w = TileLoad(v->args[1]->args[1]);
    if (x == nullptr || w == nullptr || scope_.count(w->buffer->data.get()) ||
        x->buffer->data.get() == w->buffer->data.get()) {
      return nullptr;
    }
    const DataType t = x->buffer->dtype;
    const bool tf32 = options_.tf32 && IsF32(t);
    if ((!IsHalf(t) && !IsBF16(t) && !tf32) || w->buffer->dtype != t) return nullptr;
    std::vector<PrimExpr> args = {cl->data, x->buffer->data, w->buffer->data};
    args.insert(args.end(), g->args.begin(), g->args.end());
    // NCHW on sm_90a: both operands k-major (the gathered image is stored
    // that way), so Hopper's warpgroup MMA.
    if (options_.wgmma && !tf32 && tir::IsConstValue(g->args[0], 0)) {
      return Call(IsBF16(t) ? kConvWgBF16 : kConvWgF16, std::move(args));
    }
    return Call(tf32 ? kConvTcTf32 : IsBF16(t) ? kConvTcBF16 : kConvTcF16, std::move(args));
  }

  const TensorCoreOptions options_;
  std::unordered_map<const ExprNode*, std::string> scope_;
  std::unordered_map<const ExprNode*, int64_t> size_;  // allocations' constant element counts
  std::unordered_set<const ExprNode*> ty_, tx_;
};

// The launch's threadIdx extents (0: unbound; -1: symbolic).
std::array<int64_t, 3> ThreadExtents(const Stmt& body) {
  std::array<int64_t, 3> ext = {0, 0, 0};
  tir::PostOrderVisit(body, [](const ExprNode*) {}, [&](const StmtNode* s) {
    if (s->kind != StmtKind::kFor || s->for_kind != ForKind::kThreadBinding) return;
    const char* const kTags[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z"};
    for (size_t i = 0; i < 3; ++i) {
      if (s->tag != kTags[i]) continue;
      int64_t v = 0;
      if (!tir::IsConstInt(s->b, &v)) {
        ext[i] = -1;
      } else if (ext[i] >= 0 && v > ext[i]) {
        ext[i] = v;
      }
    }
  });
  return ext;
}

}  // namespace

absl::StatusOr<tir::PrimFunc> LowerTensorCoreGemm(const tir::PrimFunc& f,
                                                  const TensorCoreOptions& options) {
  const std::array<int64_t, 3> ext = ThreadExtents(f->body);
  if (ext[0] != 16 || ext[1] != 16 || ext[2] > 1 || ext[2] < 0) return f;
  Stmt body = Rewriter(f->body, options).Visit(f->body, false);
  if (body.get() == f->body.get()) return f;
  return tir::WithBody(f, body);
}

}  // namespace kiln::codegen_cuda
