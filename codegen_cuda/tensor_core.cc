// File: codegen_cuda/tensor_core.cc — GEMM tile products on tensor cores.
#include "codegen_cuda/tensor_core.h"

#include <algorithm>
#include <array>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "ir/tir_functor.h"

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
      }
    });
  }

  Stmt Visit(const Stmt& s, bool in_if) {
    if (!s) return s;
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
  struct Accumulate {
    const StmtNode* ii = nullptr;
    const StmtNode* jj = nullptr;
    const StmtNode* store = nullptr;
    const ExprNode* la = nullptr;
    const ExprNode* lb = nullptr;
  };

  std::optional<Accumulate> MatchAccumulate(const Stmt& outer, int64_t reg) {
    if (!Serial(outer->body0(), reg) || !Serial(outer->body0()->body0(), reg)) return std::nullopt;
    const Stmt& ii = outer->body0();
    const Stmt& jj = ii->body0();
    const Stmt& st = jj->body0();
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
    if (!ci || ci->c0 != 0 || ci->c[0] != reg || ci->c[1] != 1 || ci->c[2] != 0) {
      return std::nullopt;
    }
    Accumulate acc{ii.get(), jj.get(), st.get(), TileLoad(v->args[1]->args[0]),
                   TileLoad(v->args[1]->args[1])};
    if (acc.la == nullptr || acc.lb == nullptr) return std::nullopt;
    return acc;
  }

  bool MatchTriple(const Stmt& ki, Match* m) {
    if (!Serial(ki, 16)) return false;
    const std::optional<Accumulate> acc = MatchAccumulate(ki, 4);
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

  // The 128x128 template's whole reduction (kGemmTc*): the serial loop `k`
  // (extent a multiple of 32) over exactly
  //   for (ii, 0, 8) for (jj, 0, 8)
  //     Cl[ii*8 + jj] = Cl[ii*8 + jj] + float(A[a(ty, ii, k)]) * float(B[b(tx, jj, k)])
  // with A and B 16-bit float buffers of global memory, A's row ty*8 + ii
  // and B's column tx*8 + jj, one of each operand's two strides 1 and the
  // other a multiple of 8.
  Stmt RewriteWhole(const Stmt& k) {
    int64_t kext = 0;
    if (!(k->for_kind == ForKind::kSerial || k->for_kind == ForKind::kUnrolled) ||
        !tir::IsConstValue(k->a, 0) || !tir::IsConstInt(k->b, &kext) || kext < 32 ||
        kext % 32 != 0) {
      return nullptr;
    }
    const std::optional<Accumulate> acc = MatchAccumulate(k, 8);
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
        if (!b || b->c[0] != 8 * b->c[1] || !strides_ok(b->c[1], b->c[2])) continue;
        auto base = [&](const PrimExpr& index, const ExprNode* thread, const ExprNode* reg) {
          tir::VarMap zero;
          for (const ExprNode* var : {thread, reg, k->var.get()}) zero[var] = tir::IntImm(0);
          return tir::Substitute(index, zero);
        };
        auto i64 = [](int64_t c) { return tir::IntImm(c); };
        if (tf32) {
          return Call(kGemmTf32, {st->buffer->data, la->buffer->data,
                                  base(la->args[0], y, ii->var.get()), i64(a->c[1]), i64(a->c[2]),
                                  lb->buffer->data, base(lb->args[0], x, jj->var.get()),
                                  i64(b->c[1]), i64(b->c[2]), i64(kext / 16)});
        }
        if (options_.wgmma && a->c[2] == 1 && b->c[2] == 1) {
          return Call(IsBF16(t) ? kGemmWgBF16 : kGemmWgF16,
                      {st->buffer->data, la->buffer->data, base(la->args[0], y, ii->var.get()),
                       i64(a->c[1]), lb->buffer->data, base(lb->args[0], x, jj->var.get()),
                       i64(b->c[1]), i64(kext / 32)});
        }
        return Call(
            IsBF16(t) ? kGemmTcBF16 : kGemmTcF16,
            {st->buffer->data, la->buffer->data, base(la->args[0], y, ii->var.get()), i64(a->c[1]),
             i64(a->c[2]), lb->buffer->data, base(lb->args[0], x, jj->var.get()), i64(b->c[1]),
             i64(b->c[2]), i64(kext / 32)});
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

  const TensorCoreOptions options_;
  std::unordered_map<const ExprNode*, std::string> scope_;
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

namespace {

// The warpgroup MMA wrapper: 64 float32 accumulators as "+f" operands (the
// instruction names them all), the two descriptors, scale-d true.
std::string WgmmaAsm(const char* type) {
  std::string regs, outs;
  for (int i = 0; i < 64; ++i) {
    absl::StrAppend(&regs, i ? ", " : "", "%", i);
    absl::StrAppend(&outs, i ? ", " : "", "\"+f\"(d[", i, "])");
  }
  return absl::StrCat(
      "    asm volatile(\"{ .reg .pred p; setp.ne.b32 p, 1, 0; "
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.", type, ".", type, " {", regs,
      "}, %64, %65, p, 1, 1, 0, 0; }\"\n                 : ", outs,
      "\n                 : \"l\"(da), \"l\"(db));\n");
}

std::string WgmmaPrelude() {
  return absl::StrCat(R"KILN_WG(// Hopper's warpgroup MMA (kiln_gemm_wg, codegen_cuda/tensor_core.h; compute_90a
// only): wgmma.mma_async m64n128k16, A and B read by the tensor cores from
// shared memory through matrix descriptors, float32 accumulators in the
// registers of the warpgroup's 128 threads. Host builds run it on the
// emulator (tests/cuda/emulate_host.h), which reads the operands through the
// same descriptors.
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
// A descriptor of an operand tile in the unswizzled canonical k-major layout:
// core matrices of 8 rows x 8 16-bit k (16 bytes a row, 128 bytes each), the
// next 8 of k 128 bytes on (leading byte offset), the next 8 rows 512 bytes
// on (stride byte offset): a 128 x 32 tile of 8 KiB. `addr`: its shared-
// memory byte address.
__device__ __forceinline__ unsigned long long kiln_wg_desc(unsigned addr) {
  return (unsigned long long)((addr & 0x3FFFFu) >> 4) | ((unsigned long long)(128 >> 4) << 16) |
         ((unsigned long long)(512 >> 4) << 32);
}
__device__ __forceinline__ int kiln_wg_index(int r, int k) {
  return (r >> 3) * 256 + (k >> 3) * 64 + (r & 7) * 8 + (k & 7);
}
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned kiln_wg_addr(const unsigned short* base, const unsigned short* p) {
  (void)base;
  return kiln_smem_addr(p);
}
template <bool BF> __device__ __forceinline__ void kiln_wgmma_m64n128k16(
    float* d, unsigned long long da, unsigned long long db, const unsigned short* base) {
  (void)base;
  if (BF) {
)KILN_WG",
                      WgmmaAsm("bf16"), "  } else {\n", WgmmaAsm("f16"), R"KILN_WG(  }
}
// Keeps the compiler from moving uses of an accumulator across the
// asynchronous MMA's issue and wait.
__device__ __forceinline__ void kiln_wg_pin(float* d) {
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i]) :: "memory");
}
__device__ __forceinline__ void kiln_wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void kiln_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void kiln_wg_wait() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
// The cp.async writes (generic proxy) visible to the MMA's reads (async proxy).
__device__ __forceinline__ void kiln_fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
#else
inline unsigned kiln_wg_addr(const unsigned short* base, const unsigned short* p) {
  return (unsigned)((p - base) * 2);
}
template <bool BF> inline void kiln_wgmma_m64n128k16(float* d, unsigned long long da,
                                                     unsigned long long db, const unsigned short* base) {
  kiln_emu_wgmma_m64n128k16(d, da, db, base, BF);
}
inline void kiln_wg_pin(float*) {}
inline void kiln_wg_fence() {}
inline void kiln_wg_commit() {}
inline void kiln_wg_wait() {}
inline void kiln_fence_proxy_async() {}
#endif
// The block's copy of one operand's 128 x 32 slice at k0 (element (r, k) at
// g[r * rs + k]) into the layout above: 512 chunks of 16 bytes, two per
// thread, 8 consecutive threads the 8 rows of one core matrix (128
// consecutive bytes of shared memory). `vec`: cp.async; else word by word.
__device__ __forceinline__ void kiln_wg_load(unsigned short* s, const unsigned short* g, long long rs,
                                             int k0, bool vec, unsigned tid) {
  for (unsigned i = 0; i < 2; ++i) {
    const int q = (int)(tid + 256u * i);
    const int r = (q >> 5) * 8 + (q & 7), c = ((q >> 3) & 3) * 8;
    unsigned short* d = s + kiln_wg_index(r, c);
    const unsigned short* p = g + r * rs + k0 + c;
    if (vec) {
      kiln_cp_async16(d, p);
    } else {
      for (int e = 0; e < 8; ++e) d[e] = p[e];
    }
  }
}
// The block's 128x128 tile C(row, col) = sum over k < 32 * ksteps of
// A[row * ar + k] * B[col * bc + k], added into each thread's 8x8 block cl
// (rows threadIdx.y*8.., columns threadIdx.x*8..), as kiln_gemm_tc: three
// shared stages (A's and B's 128x32 slices, 8 KiB each), the copies of step
// kt + 2 in flight while step kt computes, one barrier per step. Warpgroup w
// (threads 128w..) computes rows 64w.. with two m64n128k16 per step, and
// waits for them before the next step's barrier (the stage they read is the
// one refilled two steps later). Accumulator layout (the PTX ISA's for
// m64nNk16): d[4j + i] of lane l of warp v of the warpgroup is row
// 16v + l/4 (+8 for i >= 2), column 8j + 2(l%4) + (i&1).
template <bool BF> __device__ __forceinline__ void kiln_gemm_wg(
    float* cl, const unsigned short* A, long long ar, const unsigned short* B, long long bc,
    int ksteps) {
  __shared__ __align__(128) unsigned short kiln_wg_smem[3 * 8192];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int lane = (int)(tid & 31u), wg = (int)(tid >> 7), warp = (int)((tid >> 5) & 3u);
  const bool vec = ((unsigned long long)A & 15u) == 0 && ((unsigned long long)B & 15u) == 0 &&
                   (ar & 7) == 0 && (bc & 7) == 0;
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  for (int s = 0; s < 2; ++s) {
    if (s < ksteps) {
      kiln_wg_load(kiln_wg_smem + s * 8192, A, ar, s * 32, vec, tid);
      kiln_wg_load(kiln_wg_smem + s * 8192 + 4096, B, bc, s * 32, vec, tid);
    }
    kiln_cp_async_commit();
  }
  for (int kt = 0; kt < ksteps; ++kt) {
    kiln_cp_async_wait<1>();   // this thread's copies of step kt have landed
    kiln_fence_proxy_async();  // and are visible to the tensor cores
    __syncthreads();           // everyone's; step kt - 1's stage is free
    if (kt + 2 < ksteps) {
      unsigned short* s = kiln_wg_smem + ((kt + 2) % 3) * 8192;
      kiln_wg_load(s, A, ar, (kt + 2) * 32, vec, tid);
      kiln_wg_load(s + 4096, B, bc, (kt + 2) * 32, vec, tid);
    }
    kiln_cp_async_commit();
    const unsigned short* s = kiln_wg_smem + (kt % 3) * 8192;
    const unsigned a0 = kiln_wg_addr(kiln_wg_smem, s) + (unsigned)wg * 4096u;
    const unsigned b0 = kiln_wg_addr(kiln_wg_smem, s + 4096);
    kiln_wg_pin(acc);
    kiln_wg_fence();
    for (unsigned h = 0; h < 2; ++h) {
      kiln_wgmma_m64n128k16<BF>(acc, kiln_wg_desc(a0 + h * 256u), kiln_wg_desc(b0 + h * 256u),
                                kiln_wg_smem);
    }
    kiln_wg_commit();
    kiln_wg_wait();
    kiln_wg_pin(acc);
  }
  kiln_cp_async_wait<0>();
  __syncthreads();
  float* tile = (float*)kiln_wg_smem;  // 64 rows of 128 (+4 against bank conflicts)
  for (int p = 0; p < 2; ++p) {
    if (wg == p) {
      for (int j = 0; j < 16; ++j) {
        for (int i = 0; i < 4; ++i) {
          const int row = warp * 16 + (lane >> 2) + (i >= 2 ? 8 : 0);
          const int col = j * 8 + (lane & 3) * 2 + (i & 1);
          tile[row * 132 + col] = acc[j * 4 + i];
        }
      }
    }
    __syncthreads();
    if ((int)(threadIdx.y >> 3) == p) {
      for (int ii = 0; ii < 8; ++ii) {
        for (int jj = 0; jj < 8; ++jj) {
          cl[ii * 8 + jj] += tile[((threadIdx.y & 7u) * 8 + ii) * 132 + threadIdx.x * 8 + jj];
        }
      }
    }
    __syncthreads();
  }
}
#endif
)KILN_WG");
}

}  // namespace

const std::string& TensorCorePrelude() {
  static const std::string* const kText = new std::string(
      R"KILN_TC(// Tensor cores (codegen_cuda/tensor_core.h): mma.sync m16n8k16 with float32
// accumulation; the fragment layouts of the PTX ISA ("Matrix Fragments for
// mma.m16n8k16 with floating point type"). Host builds run the warp's mma as
// an exchange between its lanes (tests/cuda/emulate_host.h).
#ifdef __CUDA_ARCH__
template <bool BF> __device__ __forceinline__ void kiln_mma_m16n8k16(float* d, const unsigned* a, const unsigned* b) {
  if (BF) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}
#else
template <bool BF> inline void kiln_mma_m16n8k16(float* d, const unsigned* a, const unsigned* b) {
  kiln_emu_mma_m16n8k16(d, a, b, BF);
}
#endif
__device__ __forceinline__ void kiln_mma_zero(float* acc) {
  for (int i = 0; i < 16; ++i) acc[i] = 0.0f;
}
// A 16x16-thread block's 64x64x16 tile product: warp w takes rows (w/2)*16
// and columns (w%2)*32 (four m16n8k16). A(row, k) = A[ao + row*ar + k*ak],
// B(k, col) = B[bo + col*bn + k*bk] (16-bit words in shared memory).
template <bool BF> __device__ __forceinline__ void kiln_mma_block(
    float* acc, const unsigned short* A, long long ao, long long ar, long long ak,
    const unsigned short* B, long long bo, long long bn, long long bk) {
  const unsigned tid = threadIdx.y * 16u + threadIdx.x, lane = tid & 31u, warp = tid >> 5;
  const long long g = lane >> 2, t = lane & 3u;
  const long long r0 = (long long)(warp >> 1) * 16, c0 = (long long)(warp & 1u) * 32;
  unsigned a[4];
  for (int i = 0; i < 4; ++i) {
    unsigned v = 0;
    for (int h = 0; h < 2; ++h) {
      const int e = 2 * i + h;
      const long long row = r0 + g + ((e & 2) ? 8 : 0), k = t * 2 + (e & 1) + ((e & 4) ? 8 : 0);
      v |= (unsigned)A[ao + row * ar + k * ak] << (16 * h);
    }
    a[i] = v;
  }
  for (int nt = 0; nt < 4; ++nt) {
    unsigned b[2];
    for (int i = 0; i < 2; ++i) {
      unsigned v = 0;
      for (int h = 0; h < 2; ++h) {
        const int e = 2 * i + h;
        const long long k = t * 2 + (e & 1) + ((e & 2) ? 8 : 0), col = c0 + nt * 8 + g;
        v |= (unsigned)B[bo + col * bn + k * bk] << (16 * h);
      }
      b[i] = v;
    }
    kiln_mma_m16n8k16<BF>(acc + nt * 4, a, b);
  }
}
// The warps' accumulators into the block's 64x64 tile, then each thread's
// 4x4 block (rows threadIdx.y*4.., columns threadIdx.x*4..) added into cl.
__device__ __forceinline__ void kiln_mma_finish(const float* acc, float* cl) {
  __shared__ float kiln_mma_tile[64 * 64];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x, lane = tid & 31u, warp = tid >> 5;
  const long long g = lane >> 2, t = lane & 3u;
  const long long r0 = (long long)(warp >> 1) * 16, c0 = (long long)(warp & 1u) * 32;
  __syncthreads();
  for (int nt = 0; nt < 4; ++nt) {
    for (int i = 0; i < 4; ++i) {
      const long long row = r0 + g + (i >= 2 ? 8 : 0), col = c0 + nt * 8 + t * 2 + (i & 1);
      kiln_mma_tile[row * 64 + col] = acc[nt * 4 + i];
    }
  }
  __syncthreads();
  for (int ii = 0; ii < 4; ++ii) {
    for (int jj = 0; jj < 4; ++jj) {
      cl[ii * 4 + jj] += kiln_mma_tile[(threadIdx.y * 4 + ii) * 64 + threadIdx.x * 4 + jj];
    }
  }
  __syncthreads();
}
// The 128x128 GEMM tile of a 16x16-thread block on tensor cores
// (kiln_gemm_tc, codegen_cuda/tensor_core.h): cp.async copies of global
// memory into shared (16 bytes each, skipping the registers), ldmatrix loads
// of the mma fragments from shared.
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned kiln_smem_addr(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
__device__ __forceinline__ void kiln_cp_async16(void* s, const void* g) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(kiln_smem_addr(s)), "l"(g) : "memory");
}
__device__ __forceinline__ void kiln_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ __forceinline__ void kiln_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
}
template <bool T> __device__ __forceinline__ void kiln_ldmatrix_x4(unsigned* r, const unsigned short* p) {
  if (T) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(kiln_smem_addr(p)));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(kiln_smem_addr(p)));
  }
}
#else
inline void kiln_cp_async16(void* s, const void* g) { __builtin_memcpy(s, g, 16); }
inline void kiln_cp_async_commit() {}
template <int N> inline void kiln_cp_async_wait() {}
template <bool T> inline void kiln_ldmatrix_x4(unsigned* r, const unsigned short* p) {
  kiln_emu_ldmatrix_x4(r, p, T);
}
#endif
// A stage's two shared tiles, 4096 16-bit words each, hold 128 rows (of A or
// of B's columns) x 32 k in one of two layouts, both in 16-byte chunks of 8
// consecutive words whose position in their row is XOR-swizzled so that the
// 8 row addresses of an ldmatrix fall in 8 different bank groups:
//   k-major  [128][32]: element (r, k) (the operand's k stride is 1);
//   mn-major [32][128]: element (k, r) (its row / column stride is 1).
__device__ __forceinline__ int kiln_tc_kmajor(int r, int k) {
  return r * 32 + ((((k >> 3) ^ (r >> 1)) & 3) << 3) + (k & 7);
}
__device__ __forceinline__ int kiln_tc_mnmajor(int k, int r) {
  return k * 128 + (((r >> 3) ^ (k & 7)) << 3) + (r & 7);
}
// The block's copy of one operand's slice at k0 (element (r, k) at
// g[r * rs + k * ks]) into a stage tile: 128 rows x 32 k of 16-bit words or
// 128 x 16 of floats (TF32), 512 chunks of 16 bytes either way, two per
// thread, consecutive threads consecutive chunks of a row. `vec`: 16-byte
// cp.async copies (aligned pointer and strides); else word by word.
__device__ __forceinline__ int kiln_tile_kmajor(const unsigned short*, int r, int k) {
  return kiln_tc_kmajor(r, k);
}
__device__ __forceinline__ int kiln_tile_mnmajor(const unsigned short*, int k, int r) {
  return kiln_tc_mnmajor(k, r);
}
__device__ __forceinline__ int kiln_tile_kmajor(const float*, int r, int k);
__device__ __forceinline__ int kiln_tile_mnmajor(const float*, int k, int r);
template <bool K, typename T> __device__ __forceinline__ void kiln_tc_load(
    T* s, const T* g, long long rs, long long ks, int k0, bool vec, unsigned tid) {
  constexpr int E = 16 / (int)sizeof(T), R = 128 / E;  // elements per chunk, chunks per mn row
  for (unsigned i = 0; i < 2; ++i) {
    const int q = (int)(tid + 256u * i);
    T* d;
    const T* p;
    long long step;
    if (K) {
      const int r = q >> 2, c = (q & 3) * E;
      d = s + kiln_tile_kmajor(s, r, c);
      p = g + r * rs + (long long)(k0 + c) * ks;
      step = ks;
    } else {
      const int k = q / R, c = (q % R) * E;
      d = s + kiln_tile_mnmajor(s, k, c);
      p = g + (long long)c * rs + (long long)(k0 + k) * ks;
      step = rs;
    }
    if (vec) {
      kiln_cp_async16(d, p);
    } else {
      for (int e = 0; e < E; ++e) d[e] = p[e * step];
    }
  }
}
// One stage's 128x128x32 product: warp w takes rows (w/4)*64.. and columns
// (w%4)*32.. (4 x 4 m16n8k16 per 16 of k); its A fragments by ldmatrix.x4
// (.trans from an mn-major tile), its B fragments two n8 tiles per x4.
template <bool BF, bool AK, bool BK> __device__ __forceinline__ void kiln_tc_compute(
    float* acc, const unsigned short* As, const unsigned short* Bs, int lane, int wm, int wn) {
  for (int kk = 0; kk < 32; kk += 16) {
    unsigned a[4][4], b[4][2];
    for (int mt = 0; mt < 4; ++mt) {
      const int m0 = wm * 64 + mt * 16;
      if (AK) {
        kiln_ldmatrix_x4<false>(a[mt], As + kiln_tc_kmajor(m0 + (lane & 7) + ((lane >> 3) & 1) * 8,
                                                           kk + (lane >> 4) * 8));
      } else {
        kiln_ldmatrix_x4<true>(a[mt], As + kiln_tc_mnmajor(kk + (lane & 7) + (lane >> 4) * 8,
                                                           m0 + ((lane >> 3) & 1) * 8));
      }
    }
    for (int np = 0; np < 2; ++np) {
      const int n0 = wn * 32 + np * 16;
      unsigned r[4];
      if (BK) {
        kiln_ldmatrix_x4<false>(r, Bs + kiln_tc_kmajor(n0 + (lane & 7) + (lane >> 4) * 8,
                                                       kk + ((lane >> 3) & 1) * 8));
      } else {
        kiln_ldmatrix_x4<true>(r, Bs + kiln_tc_mnmajor(kk + (lane & 7) + ((lane >> 3) & 1) * 8,
                                                       n0 + (lane >> 4) * 8));
      }
      b[2 * np][0] = r[0];
      b[2 * np][1] = r[1];
      b[2 * np + 1][0] = r[2];
      b[2 * np + 1][1] = r[3];
    }
    for (int mt = 0; mt < 4; ++mt) {
      for (int nt = 0; nt < 4; ++nt) kiln_mma_m16n8k16<BF>(acc + (mt * 4 + nt) * 4, a[mt], b[nt]);
    }
  }
}
// The 8 warps' accumulators (warp (wm, wn): rows wm*64.., columns wn*32..,
// 4 x 4 m16n8 tiles) added into each thread's 8x8 block cl (rows
// threadIdx.y*8.., columns threadIdx.x*8..) through shared memory `tile`
// (64 rows of 128 floats + 4 against bank conflicts: the operand stages
// reused, after the block's last barrier), 64 rows at a time.
__device__ __forceinline__ void kiln_tc_store(const float* acc, float* cl, float* tile, int lane,
                                              int wm, int wn) {
  for (int p = 0; p < 2; ++p) {
    if (wm == p) {
      for (int mt = 0; mt < 4; ++mt) {
        for (int nt = 0; nt < 4; ++nt) {
          for (int i = 0; i < 4; ++i) {
            const int row = mt * 16 + (lane >> 2) + (i >= 2 ? 8 : 0);
            const int col = wn * 32 + nt * 8 + (lane & 3) * 2 + (i & 1);
            tile[row * 132 + col] = acc[(mt * 4 + nt) * 4 + i];
          }
        }
      }
    }
    __syncthreads();
    if ((int)(threadIdx.y >> 3) == p) {
      for (int ii = 0; ii < 8; ++ii) {
        for (int jj = 0; jj < 8; ++jj) {
          cl[ii * 8 + jj] += tile[((threadIdx.y & 7u) * 8 + ii) * 132 + threadIdx.x * 8 + jj];
        }
      }
    }
    __syncthreads();
  }
}
// The block's 128x128 tile C(row, col) = sum over k < 32 * ksteps of
// A(row, k) * B(k, col), A(row, k) = A[row * ar + k * ak] and B(k, col) =
// B[col * bc + k * bk] (AK: ak == 1, else ar == 1; BK: bk == 1, else bc == 1),
// added into each thread's 8x8 block cl (rows threadIdx.y*8.., columns
// threadIdx.x*8..). Three stages of shared tiles: the copies of step kt + 2
// are in flight while step kt computes. The float32 accumulators stay in
// registers to the end, then go through shared memory (reusing the stages),
// 64 rows at a time, into the threads' blocks.
template <bool BF, bool AK, bool BK> __device__ __forceinline__ void kiln_gemm_tc(
    float* cl, const unsigned short* A, long long ar, long long ak, const unsigned short* B,
    long long bc, long long bk, int ksteps) {
  __shared__ __align__(16) unsigned short kiln_tc_smem[3 * 8192];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int lane = (int)(tid & 31u), wm = (int)(tid >> 7), wn = (int)((tid >> 5) & 3u);
  const bool vec = ((unsigned long long)A & 15u) == 0 && ((unsigned long long)B & 15u) == 0 &&
                   ((AK ? ar : ak) & 7) == 0 && ((BK ? bc : bk) & 7) == 0;
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  for (int s = 0; s < 2; ++s) {
    if (s < ksteps) {
      kiln_tc_load<AK>(kiln_tc_smem + s * 8192, A, ar, ak, s * 32, vec, tid);
      kiln_tc_load<BK>(kiln_tc_smem + s * 8192 + 4096, B, bc, bk, s * 32, vec, tid);
    }
    kiln_cp_async_commit();
  }
  for (int kt = 0; kt < ksteps; ++kt) {
    kiln_cp_async_wait<1>();  // this thread's copies of step kt have landed
    __syncthreads();          // everyone's; and step kt - 1's stage is free
    if (kt + 2 < ksteps) {
      unsigned short* s = kiln_tc_smem + ((kt + 2) % 3) * 8192;
      kiln_tc_load<AK>(s, A, ar, ak, (kt + 2) * 32, vec, tid);
      kiln_tc_load<BK>(s + 4096, B, bc, bk, (kt + 2) * 32, vec, tid);
    }
    kiln_cp_async_commit();
    const unsigned short* s = kiln_tc_smem + (kt % 3) * 8192;
    kiln_tc_compute<BF, AK, BK>(acc, s, s + 4096, lane, wm, wn);
  }
  kiln_cp_async_wait<0>();
  __syncthreads();
  kiln_tc_store(acc, cl, (float*)kiln_tc_smem, lane, wm, wn);
}
// TF32 (float32 GEMMs of a target with -tf32): the same 128x128 tile with
// mma.sync m16n8k8 .tf32 (float32 accumulation) on 32-bit shared tiles of
// 128 x 16 (three stages of 8 KiB per operand, 48 KiB), each element rounded
// to TF32 (cvt.rna: to nearest, ties away from zero, 10 mantissa bits) as
// its fragment is loaded. Fragments by plain 32-bit shared loads (no
// ldmatrix); the A fragment of m16n8k8 is (row g, k t), (g + 8, t),
// (g, t + 4), (g + 8, t + 4) and B's (k t, column g), (t + 4, g), g = lane/4,
// t = lane%4 (PTX ISA, "Matrix Fragments for mma.m16n8k8", .tf32).
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned kiln_tf32(float f) {
  unsigned u;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(f));
  return u;
}
__device__ __forceinline__ void kiln_mma_m16n8k8_tf32(float* d, const unsigned* a, const unsigned* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#else
inline unsigned kiln_tf32(float f) {
  unsigned u;
  __builtin_memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;  // Inf and NaN as they are
  return u;
}
inline void kiln_mma_m16n8k8_tf32(float* d, const unsigned* a, const unsigned* b) {
  kiln_emu_mma_m16n8k8_tf32(d, a, b);
}
#endif
// 128 x 16 float tiles in 16-byte chunks of 4, XOR-swizzled so that the 32
// lanes of a fragment load hit 32 different banks:
//   k-major  [128][16]: element (r, k);
//   mn-major [16][128]: element (k, r).
__device__ __forceinline__ int kiln_tf32_kmajor(int r, int k) {
  return r * 16 + ((((k >> 2) ^ (r >> 1)) & 3) << 2) + (k & 3);
}
__device__ __forceinline__ int kiln_tf32_mnmajor(int k, int r) {
  return k * 128 + (((r >> 2) ^ ((k & 3) << 1)) << 2) + (r & 3);
}
__device__ __forceinline__ int kiln_tile_kmajor(const float*, int r, int k) {
  return kiln_tf32_kmajor(r, k);
}
__device__ __forceinline__ int kiln_tile_mnmajor(const float*, int k, int r) {
  return kiln_tf32_mnmajor(k, r);
}
template <bool AK, bool BK> __device__ __forceinline__ float kiln_tf32_a(const float* As, int m, int k) {
  return AK ? As[kiln_tf32_kmajor(m, k)] : As[kiln_tf32_mnmajor(k, m)];
}
template <bool AK, bool BK> __device__ __forceinline__ float kiln_tf32_b(const float* Bs, int n, int k) {
  return BK ? Bs[kiln_tf32_kmajor(n, k)] : Bs[kiln_tf32_mnmajor(k, n)];
}
// C(row, col) += sum over k < 16 * ksteps of A(row, k) * B(k, col) in TF32,
// A(row, k) = A[row * ar + k * ak], B(k, col) = B[col * bc + k * bk], into
// each thread's 8x8 block cl, as kiln_gemm_tc.
template <bool AK, bool BK> __device__ __forceinline__ void kiln_gemm_tf32(
    float* cl, const float* A, long long ar, long long ak, const float* B, long long bc,
    long long bk, int ksteps) {
  __shared__ __align__(16) float kiln_tf32_smem[3 * 4096];
  const unsigned tid = threadIdx.y * 16u + threadIdx.x;
  const int lane = (int)(tid & 31u), wm = (int)(tid >> 7), wn = (int)((tid >> 5) & 3u);
  const int g = lane >> 2, t = lane & 3;
  const bool vec = ((unsigned long long)A & 15u) == 0 && ((unsigned long long)B & 15u) == 0 &&
                   ((AK ? ar : ak) & 3) == 0 && ((BK ? bc : bk) & 3) == 0;
  float acc[64];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  for (int s = 0; s < 2; ++s) {
    if (s < ksteps) {
      kiln_tc_load<AK>(kiln_tf32_smem + s * 4096, A, ar, ak, s * 16, vec, tid);
      kiln_tc_load<BK>(kiln_tf32_smem + s * 4096 + 2048, B, bc, bk, s * 16, vec, tid);
    }
    kiln_cp_async_commit();
  }
  for (int kt = 0; kt < ksteps; ++kt) {
    kiln_cp_async_wait<1>();
    __syncthreads();
    if (kt + 2 < ksteps) {
      float* s = kiln_tf32_smem + ((kt + 2) % 3) * 4096;
      kiln_tc_load<AK>(s, A, ar, ak, (kt + 2) * 16, vec, tid);
      kiln_tc_load<BK>(s + 2048, B, bc, bk, (kt + 2) * 16, vec, tid);
    }
    kiln_cp_async_commit();
    const float* As = kiln_tf32_smem + (kt % 3) * 4096;
    const float* Bs = As + 2048;
    for (int kk = 0; kk < 16; kk += 8) {
      unsigned a[4][4], b[4][2];
      for (int mt = 0; mt < 4; ++mt) {
        const int m = wm * 64 + mt * 16 + g;
        a[mt][0] = kiln_tf32(kiln_tf32_a<AK, BK>(As, m, kk + t));
        a[mt][1] = kiln_tf32(kiln_tf32_a<AK, BK>(As, m + 8, kk + t));
        a[mt][2] = kiln_tf32(kiln_tf32_a<AK, BK>(As, m, kk + t + 4));
        a[mt][3] = kiln_tf32(kiln_tf32_a<AK, BK>(As, m + 8, kk + t + 4));
      }
      for (int nt = 0; nt < 4; ++nt) {
        const int n = wn * 32 + nt * 8 + g;
        b[nt][0] = kiln_tf32(kiln_tf32_b<AK, BK>(Bs, n, kk + t));
        b[nt][1] = kiln_tf32(kiln_tf32_b<AK, BK>(Bs, n, kk + t + 4));
      }
      for (int mt = 0; mt < 4; ++mt) {
        for (int nt = 0; nt < 4; ++nt) kiln_mma_m16n8k8_tf32(acc + (mt * 4 + nt) * 4, a[mt], b[nt]);
      }
    }
  }
  kiln_cp_async_wait<0>();
  __syncthreads();
  kiln_tc_store(acc, cl, kiln_tf32_smem, lane, wm, wn);
}
)KILN_TC" + WgmmaPrelude());
  return *kText;
}

}  // namespace kiln::codegen_cuda
