// File: lowering/te/schedule_cuda.cc — the default GPU schedule.
#include "lowering/te/schedule_cuda.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"
#include "lowering/strategy/target.h"
#include "lowering/te/schedule_cuda_internal.h"

namespace kiln::te {
namespace {

using cuda_internal::kWarp;
using cuda_internal::SameConstExtents;
using cuda_internal::ScheduleRows;
using cuda_internal::Untouched;

// Fuses the stage's data-parallel axes, splits them by the block size and
// binds the parts to blockIdx.x / threadIdx.x. Returns the threadIdx.x loop
// (null for a stage without data-parallel axes, which stays unbound).
absl::StatusOr<IterVar> BindDataParallel(Stage* s, int max_threads) {
  const std::vector<IterVar> axes = s->op->axis;
  if (axes.empty()) return IterVar();
  PrimExpr extent = tir::IntImm(1);
  for (const IterVar& iv : axes) extent = extent * iv->dom.extent;
  int64_t threads = max_threads;
  int64_t e = 0;
  if (tir::IsConstInt(extent, &e) && e < threads) {
    threads = (e + kWarp - 1) / kWarp * kWarp;
    if (threads < kWarp) threads = kWarp;
  }
  KILN_ASSIGN_OR_RETURN(IterVar fused, s->fuse(axes));
  KILN_ASSIGN_OR_RETURN(SplitAxes sp, s->split(fused, threads));
  KILN_RETURN_IF_ERROR(s->bind(sp.outer, "blockIdx.x"));
  KILN_RETURN_IF_ERROR(s->bind(sp.inner, "threadIdx.x"));
  return sp.inner;
}

// An injective output of 4-byte elements whose data-parallel extent E is a
// constant multiple of 4 x 32, in a function whose other stages are all
// inlined: each thread computes 4 consecutive elements of the fused axes
// (split by 4, the inner loop marked with the "kiln_vector" pragma), the
// block size the largest multiple of 32 up to max_threads that divides E / 4
// (so no guard). The code generator turns the marked loop into 16-byte
// loads and stores (codegen_cuda: float4 / int4, or uint4 of 8 2-byte
// words) where the indices allow,
// under a run-time test that the pointers are 16-byte aligned. Returns
// false, changing nothing, when the output does not qualify.
// Elements of 2 bytes (float16, bfloat16, 16-bit integers) go 8 to a
// thread the same way (one 16-byte access each).
constexpr int64_t kVectorBytes = 16;

absl::StatusOr<bool> BindVectorized(Schedule& s, Stage* out, int max_threads) {
  const DataType dt = out->op->num_outputs() == 1 ? out->op->output(0).dtype() : DataType();
  if (!out->op->reduce_axis.empty() || out->op->axis.empty() || out->op->num_outputs() != 1 ||
      (dt.bits() != 32 && dt.bits() != 16) || dt.lanes() != 1) {
    return false;
  }
  const int64_t vlanes = kVectorBytes / (dt.bits() / 8);
  for (Stage* st : s.stages()) {
    if (st != out && !st->is_placeholder() && !st->is_inlined()) return false;
  }
  int64_t e = 1;
  for (const IterVar& iv : out->op->axis) {
    int64_t d = 0;
    if (!tir::IsConstInt(iv->dom.extent, &d)) return false;
    e *= d;
  }
  if (e % (vlanes * kWarp) != 0) return false;
  const int64_t groups = e / vlanes;
  int64_t threads = max_threads;
  while (threads > kWarp && groups % threads != 0) threads -= kWarp;
  if (groups % threads != 0) return false;
  KILN_ASSIGN_OR_RETURN(IterVar fused, out->fuse(out->op->axis));
  KILN_ASSIGN_OR_RETURN(SplitAxes lanes, out->split(fused, vlanes));
  KILN_ASSIGN_OR_RETURN(SplitAxes sp, out->split(lanes.outer, threads));
  KILN_RETURN_IF_ERROR(out->bind(sp.outer, "blockIdx.x"));
  KILN_RETURN_IF_ERROR(out->bind(sp.inner, "threadIdx.x"));
  KILN_RETURN_IF_ERROR(out->pragma(lanes.inner, "kiln_vector", tir::IntImm(vlanes)));
  return true;
}

// Register blocking of GEMM-like outputs (dense, matmul, batch_matmul): an
// output whose last two data-parallel axes have constant extents of at least
// kGemmMin (and at most one more, a batch axis), computed by a reduction (its
// own, or a producer's computed per thread). Each block of kGemmThreads x
// kGemmThreads threads computes a kGemmTile x kGemmTile tile (of one batch),
// each thread a kGemmReg x kGemmReg block of it: the reduction runs at the
// thread's loop into a "local" array of that size with its reduction axes
// outermost, so every A and B value loaded serves kGemmReg outputs.
constexpr int64_t kGemmReg = 4;
constexpr int64_t kGemmThreads = 16;
constexpr int64_t kGemmTile = kGemmReg * kGemmThreads;
constexpr int64_t kGemmMin = kGemmTile;
// The reduction's slice per shared-memory tile.
constexpr int64_t kGemmK = 16;

bool GemmShaped(const Stage& s) {
  const size_t n = s.op->axis.size();
  if (n != 2 && n != 3) return false;
  for (size_t d = 0; d < n; ++d) {
    int64_t e = 0;
    if (!tir::IsConstInt(s.op->axis[d]->dom.extent, &e) || (d + 2 >= n && e < kGemmMin)) {
      return false;
    }
  }
  return true;
}

// Tiles a GEMM-shaped output, each thread `reg` x `reg_j` outputs (a block
// 16 * reg by 16 * reg_j); returns its threadIdx.x loop.
absl::StatusOr<IterVar> TileGemm(Stage* s, int64_t reg, int64_t reg_j) {
  const std::vector<IterVar> axes = s->op->axis;
  const size_t n = axes.size();
  KILN_ASSIGN_OR_RETURN(SplitAxes i1, s->split(axes[n - 2], reg * kGemmThreads));
  KILN_ASSIGN_OR_RETURN(SplitAxes i2, s->split(i1.inner, reg));
  KILN_ASSIGN_OR_RETURN(SplitAxes j1, s->split(axes[n - 1], reg_j * kGemmThreads));
  KILN_ASSIGN_OR_RETURN(SplitAxes j2, s->split(j1.inner, reg_j));
  std::vector<IterVar> order = {i1.outer, j1.outer, i2.outer, j2.outer, i2.inner, j2.inner};
  if (n == 3) order.insert(order.begin(), axes[0]);
  KILN_RETURN_IF_ERROR(s->reorder(order));
  if (n == 3) KILN_RETURN_IF_ERROR(s->bind(axes[0], "blockIdx.z"));
  KILN_RETURN_IF_ERROR(s->bind(i1.outer, "blockIdx.y"));
  KILN_RETURN_IF_ERROR(s->bind(j1.outer, "blockIdx.x"));
  KILN_RETURN_IF_ERROR(s->bind(i2.outer, "threadIdx.y"));
  KILN_RETURN_IF_ERROR(s->bind(j2.outer, "threadIdx.x"));
  return j2.outer;
}

// A GEMM-tiled output's stores (each thread's `reg_j` consecutive columns
// per row) 16 bytes at a time: its innermost loop split by the 16-byte lanes
// of its element type (8 of 2 bytes, 4 of 4), the inner part marked
// "kiln_vector", so that the code generator stores a row's run of outputs
// (and loads the fused epilogue's parameters indexed along it, a bias) as
// 16-byte accesses where the index is a provable multiple of the lanes and
// the pointers are aligned at run time. A warp's 2-byte stores 16 or 32
// bytes apart otherwise write a 32-byte sector per element. A ragged tile's
// guarded stores keep the scalar form. Nothing when the lanes do not divide
// reg_j.
absl::Status VectorizeGemmStores(Stage* out, int64_t reg_j) {
  if (out->op->num_outputs() != 1) return absl::OkStatus();
  const DataType dt = out->op->output(0).dtype();
  if (dt.lanes() != 1 || (dt.bits() != 16 && dt.bits() != 32)) return absl::OkStatus();
  const int64_t lanes = kVectorBytes / (dt.bits() / 8);
  if (reg_j % lanes != 0) return absl::OkStatus();
  KILN_ASSIGN_OR_RETURN(SplitAxes v, out->split(out->leaf_iter_vars.back(), lanes));
  return out->pragma(v.inner, "kiln_vector", tir::IntImm(lanes));
}

// Whether the reduction stage `r` (read by the GEMM-tiled output `out` only)
// is GEMM-like: two data-parallel axes (three with a batch) of out's extents
// and at least one reduction axis (a layer_norm's row sums over a batch of
// rows are not).
bool GemmReduction(const Stage& r, const Stage& out) {
  const size_t n = r.op->axis.size();
  if ((n != 2 && n != 3) || r.op->reduce_axis.empty() || out.op->axis.size() != n) return false;
  for (size_t d = 0; d < n; ++d) {
    int64_t a = 0, b = 0;
    if (!tir::IsConstInt(r.op->axis[d]->dom.extent, &a) ||
        !tir::IsConstInt(out.op->axis[d]->dom.extent, &b) || a != b) {
      return false;
    }
  }
  return true;
}

// The inputs of GEMM reduction `r` that a block can stage through shared
// memory: placeholders read only at indices that are each one of r's axes or
// its reduction axis (or a constant), so that a block's slice of one is at
// most a kGemmTile x kGemmK tile: A[i, k] and B[j, k] (dense), B[k, j]
// (matmul), A[b, i, k] (batch_matmul). Empty when r has more than one
// reduction axis or one of a symbolic extent.
struct SharedInput {
  Tensor tensor;
  int64_t row = 1;  // the slice's extent in the tensor's last dim
};

std::vector<SharedInput> SharedInputs(const Schedule& s, const Stage& r) {
  std::vector<SharedInput> out;
  if (r.op->reduce_axis.size() != 1 || !tir::IsConstInt(r.op->reduce_axis[0]->dom.extent)) {
    return out;
  }
  const size_t n = r.op->axis.size();
  for (const Tensor& t : r.op->InputTensors()) {
    Stage* ts = s[t];
    if (ts == nullptr || !ts->is_placeholder()) continue;
    bool ok = true;
    int64_t elems = 1, row = 1;
    for (const PrimExpr& b : r.op->body) {
      tir::PostOrderVisit(b, [&](const tir::ExprNode* e) {
        if (e->kind != tir::ExprKind::kProducerLoad || e->producer.get() != t.op().get()) return;
        int64_t here = 1, extent = 1;
        for (const PrimExpr& idx : e->args) {
          extent = 1;
          if (tir::IsConstInt(idx)) continue;
          if (idx->kind != tir::ExprKind::kVar) {
            ok = false;
            continue;
          }
          if (idx.get() == r.op->reduce_axis[0]->var.get()) {
            extent = kGemmK;
          } else {
            bool found = false;
            for (size_t d = 0; d < n; ++d) {
              if (idx.get() != r.op->axis[d]->var.get()) continue;
              found = true;
              if (d + 2 >= n) extent = kGemmTile;
            }
            ok = ok && found;
          }
          here *= extent;
        }
        elems = std::max(elems, here);
        row = std::max(row, extent);
      });
    }
    if (ok && elems <= kGemmTile * kGemmK) out.push_back({t, row});
  }
  return out;
}

// The tensor-core template (codegen_cuda/tensor_core.h, kiln_gemm_tc): a
// GEMM reduction of float16 or bfloat16 A and B (float32 too when the target
// opts in to TF32: kiln_gemm_tf32) read at plain indices (both
// qualify for SharedInputs), float32 accumulation. Its output is tiled
// 128x128 per block of 16x16 threads, 8x8 outputs each (TileGemm with
// kTcReg), the reduction computed at the thread's loop with its axis
// outermost and nothing staged: the code generator replaces that whole loop
// by the pipelined tensor-core tile, which reads A and B from global memory
// itself. Where it does not (a form it does not recognise), the loop is a
// correct, slow, register-blocked product.
//
// Extents that are not multiples of the tile (M, N of 128, K of 32) are
// fine: the split's guards stay in the reduction loop (pragma
// "loop_partition" = 0 keeps loop_partition from peeling it), the tile reads
// zeros past them and the guarded epilogue stores only the valid part. Each
// input's innermost extent must be a multiple of a 16-byte chunk (8 16-bit
// or 4 float32 elements) so that the tile's 16-byte copies stay aligned.
// A ragged shape whose M and N are multiples of 64 keeps the 64x64 template
// (tensor cores per step) unless the 128x128x32 tiles' padded work is at
// most 1.25 times the real work.
constexpr int64_t kTcReg = 8;
constexpr int64_t kTcTile = kTcReg * kGemmThreads;
constexpr int64_t kTcK = 32;

bool TensorCoreGemm(const Schedule& s, const Stage& r, const Stage& out, bool tf32) {
  const size_t n = out.op->axis.size();
  int64_t m = 0, nn = 0, k = 0;
  if (!tir::IsConstInt(out.op->axis[n - 2]->dom.extent, &m) ||
      !tir::IsConstInt(out.op->axis[n - 1]->dom.extent, &nn)) {
    return false;
  }
  if (r.op->reduce_axis.size() != 1 || !tir::IsConstInt(r.op->reduce_axis[0]->dom.extent, &k) ||
      k < 1 || r.op->num_outputs() != 1 || r.op->output(0).dtype() != DataType::Float(32)) {
    return false;
  }
  const std::vector<Tensor> ins = r.op->InputTensors();
  if (ins.size() != 2) return false;
  const DataType t = ins[0].dtype();
  const bool half = (t.code() == DTypeCode::kFloat || t.code() == DTypeCode::kBFloat) &&
                    t.bits() == 16 && t.lanes() == 1;
  if (!(half || (tf32 && t == DataType::Float(32))) || ins[1].dtype() != t ||
      SharedInputs(s, r).size() != 2) {
    return false;
  }
  if (m % kTcTile == 0 && nn % kTcTile == 0 && k % kTcK == 0) return true;
  const int64_t chunk = half ? 8 : 4;
  for (const Tensor& in : ins) {
    int64_t inner = 0;
    if (in.shape().empty() || !tir::IsConstInt(in.shape().back(), &inner) || inner % chunk != 0) {
      return false;
    }
  }
  if (m % kGemmTile != 0 || nn % kGemmTile != 0) return true;
  const auto up = [](int64_t x, int64_t f) { return (x + f - 1) / f * f; };
  return 4 * up(m, kTcTile) * up(nn, kTcTile) * up(k, kTcK) <= 5 * m * nn * k;
}

// The wide wgmma template (sm_90a; codegen_cuda/tensor_core.h's
// kiln_gemm_wgw): a tensor-core GEMM (above) of 16-bit inputs that both
// read the reduction axis as their last index (A[.., i, k], B[.., j, k]:
// k-major, as wgmma reads them from shared memory), with at least 256
// output columns and at most an eighth more padded columns than the
// 128-wide tile has. Each block then computes 128 x 256 outputs, each
// thread 8 x 16 of them: twice the arithmetic per byte the block copies.
constexpr int64_t kWideCols = 2 * kTcReg;

bool WideWgmmaGemm(const Stage& r, const Stage& out) {
  int64_t nn = 0;
  if (!tir::IsConstInt(out.op->axis.back()->dom.extent, &nn) || nn < kWideCols * kGemmThreads) {
    return false;
  }
  const auto up = [](int64_t x, int64_t f) { return (x + f - 1) / f * f; };
  if (8 * up(nn, kWideCols * kGemmThreads) > 9 * up(nn, kTcTile)) return false;
  const std::vector<Tensor> ins = r.op->InputTensors();
  if (ins.size() != 2 || ins[0].dtype().bits() != 16) return false;
  const tir::ExprNode* k = r.op->reduce_axis[0]->var.get();
  bool k_major = true;
  int loads = 0;
  for (const PrimExpr& b : r.op->body) {
    tir::PostOrderVisit(b, [&](const tir::ExprNode* e) {
      if (e->kind != tir::ExprKind::kProducerLoad) return;
      ++loads;
      k_major = k_major && !e->args.empty() && e->args.back().get() == k;
    });
  }
  return k_major && loads == 2;
}

// Stages the GEMM reduction `r`'s inputs through shared memory (TVM's
// topi/cuda dense and batch_matmul templates): its reduction axis split by
// kGemmK, the outer part outermost; at each step of it the block's threads
// copy the block's kGemmTile x kGemmK slice of A and of B into "shared"
// arrays (each thread a few elements, consecutive threads consecutive
// elements), and the register-blocked inner product reads them there. The
// code generator puts the barriers in (codegen_cuda/thread_sync.h): one
// after the copies, one before the next step's copies. A row of each shared
// tile is padded by one element so that the threads of a warp reading down a
// column hit different banks. Returns false (and changes nothing) when no
// input qualifies.
absl::StatusOr<bool> StageThroughShared(Schedule& s, Stage* r) {
  const std::vector<SharedInput> inputs = SharedInputs(s, *r);
  if (inputs.empty()) return false;
  KILN_ASSIGN_OR_RETURN(SplitAxes k, r->split(r->op->reduce_axis[0], kGemmK));
  std::vector<IterVar> order = {k.outer, k.inner};
  order.insert(order.end(), r->op->axis.begin(), r->op->axis.end());
  KILN_RETURN_IF_ERROR(r->reorder(order));
  for (const SharedInput& in : inputs) {
    KILN_ASSIGN_OR_RETURN(Tensor cache,
                          s.cache_read(in.tensor, "shared", std::vector<Operation>{r->op}));
    Stage* c = s[cache];
    KILN_RETURN_IF_ERROR(c->compute_at(r, k.outer));
    const std::vector<IterVar> axes = c->op->axis;
    if (axes.size() >= 2 && in.row > 1) {
      KILN_RETURN_IF_ERROR(c->storage_align(axes[axes.size() - 2], in.row, 1));
    }
    KILN_ASSIGN_OR_RETURN(IterVar fused, c->fuse(axes));
    KILN_ASSIGN_OR_RETURN(SplitAxes per_block, c->split(fused, kGemmThreads * kGemmThreads));
    KILN_ASSIGN_OR_RETURN(SplitAxes yx, c->split(per_block.inner, kGemmThreads));
    KILN_RETURN_IF_ERROR(c->bind(yx.outer, "threadIdx.y"));
    KILN_RETURN_IF_ERROR(c->bind(yx.inner, "threadIdx.x"));
  }
  return true;
}

// ---- conv2d: output tiles per block, the input window and weights in shared ----
//
// A fused function whose only output O is computed from one nn.conv2d (tag
// conv2d_nchw or conv2d_nhwc, its output in the data layout, constant
// extents; O the conv itself or its fused injective epilogue: bias, relu,
// residual add, a cast) and no other reduction (TVM's topi/cuda conv2d_direct
// template in its simplest form):
//   - groups == 1: a block of 4 x 4 x 16 threads computes 16 output channels
//     x 4 rows x 16 columns of O (blockIdx.z over batch x channel tiles,
//     .y/.x over row and column tiles), each thread 4 outputs in "local"
//     registers: 4 channels of one pixel (NCHW: threadIdx.x along the row,
//     so a warp stores 16 consecutive pixels) or 4 columns of one channel
//     (NHWC: threadIdx.x along the channels, the contiguous dim there);
//   - groups > 1 (depthwise included): a block of 16 x 16 threads computes
//     16 x 16 pixels of one output channel, one each: the channel's input
//     group and weights are what the block shares;
//   - in both, the reduction's input-channel axis is split by a step `rc`
//     (the largest of 16, 8, 4, 2, 1 whose tiles fit in kConvSharedBytes)
//     and at each step the block's threads copy the input window its tile
//     reads (rc channels x the rows and columns the strides, dilation and
//     kernel reach; the padding computed there, the pad stage inlined into
//     the copy) and the weights of its channels into "shared" tiles
//     (consecutive threads on consecutive elements); the barriers come from
//     codegen_cuda/thread_sync.h.
constexpr int64_t kConvSharedBytes = 32 * 1024;

struct ConvPlan {
  Stage* conv = nullptr;  // the reduction (its "local" stage once tiled)
  bool nhwc = false;
  bool per_channel = false;  // groups > 1
  int64_t step = 1;          // the input-channel step of the shared tiles
  std::vector<Tensor> caches;
  // The implicit GEMM on tensor cores (below) instead: the geometry's 16
  // constants (kConvTensorCoreGeometry), and once O is tiled the block's
  // batch index, first output channel, row and column.
  bool tc = false;
  std::vector<int64_t> geom;
  std::vector<PrimExpr> origin;
};

// ---- conv2d on tensor cores: an implicit GEMM per 128 x 128 tile ----
//
// A float16/bfloat16 conv (float32 too with TF32 opted in; groups == 1,
// float32 accumulation; NCHW with OIHW weights, NHWC with HWIO or OHWI
// weights; the data a kernel parameter, padded or not, the weights one) is
// the GEMM
//   NCHW: C[oc, pixel] = sum over k = (ic, kh, kw) of W[oc, k] * X(k, pixel)
//   NHWC: C[pixel, oc] = sum over k = (kh, kw, ic) of X(pixel, k) * W(k, oc)
// whose image operand X(k, pixel) (im2col) is never materialized: the CUDA
// code generator's tile (kiln_conv_nchw_tc / kiln_conv_nhwc_tc,
// codegen_cuda/tensor_core.h) gathers it from the data into its shared
// stages, zeros for the padding. O is tiled as the GEMM template is: a block
// of 16 x 16 threads, each 8 x 8 outputs in "local" registers, the block's
// 128 pixels a patch of 16 rows x 8 columns (NCHW: threadIdx.x the patch
// row, a thread's 8 outputs along it; NHWC: threadIdx.y) and its 128 output
// channels on the other side; the conv's reduction computed at the thread's
// loop with its axes outermost, marked kConvTensorCorePragma with the
// geometry and the block's origin, and kept whole (loop_partition off): the
// code generator replaces it by the call.
constexpr int64_t kConvTcPatchRows = 16;
bool ParseInts(const std::map<std::string, std::string>& attrs, const char* key, size_t n,
               std::vector<int64_t>* out);
constexpr int64_t kConvTcPatchCols = 8;

// True (and `geom` filled) when the conv `op` of plan `p` fits the above.
bool ConvTensorCore(const Schedule& s, const Operation& op, bool nhwc, int64_t groups,
                    const std::vector<int64_t>& st, const std::vector<int64_t>& dil, bool tf32,
                    std::vector<int64_t>* geom) {
  if (groups != 1 || op->output(0).dtype() != DataType::Float(32)) return false;
  const std::vector<Tensor> ins = op->InputTensors();
  const DataType t = ins[0].dtype();
  const bool half = t.lanes() == 1 && t.bits() == 16 &&
                    (t.code() == DTypeCode::kFloat || t.code() == DTypeCode::kBFloat);
  if (!(half || (tf32 && t == DataType::Float(32))) || ins[1].dtype() != t) return false;
  auto attr = [&](const char* k) {
    auto it = op->attrs.find(k);
    return it == op->attrs.end() ? std::string() : it->second;
  };
  const std::string kl = attr("kernel_layout");
  bool wk = true;
  if (nhwc) {
    if (kl != "HWIO" && kl != "OHWI") return false;
    wk = kl == "OHWI";
  } else if (kl != "OIHW") {
    return false;
  }
  std::vector<int64_t> pad;
  if (!ParseInts(op->attrs, "padding", 4, &pad)) return false;
  // The data: a parameter, or the pad stage of one.
  Tensor data = ins[0];
  Stage* ds = s[data];
  if (ds == nullptr) return false;
  if (!ds->is_placeholder()) {
    const std::vector<Tensor> pin = ds->op->InputTensors();
    if (ds->op->name != "pad" || !ds->op->reduce_axis.empty() || pin.size() != 1 ||
        s[pin[0]] == nullptr || !s[pin[0]]->is_placeholder()) {
      return false;
    }
    data = pin[0];
  }
  if (s[ins[1]] == nullptr || !s[ins[1]]->is_placeholder()) return false;
  std::vector<int64_t> x(4), w(4), o(4);
  for (size_t i = 0; i < 4; ++i) {
    if (!tir::IsConstInt(data.shape()[i], &x[i]) || !tir::IsConstInt(ins[1].shape()[i], &w[i]) ||
        !tir::IsConstInt(op->axis[i]->dom.extent, &o[i])) {
      return false;
    }
  }
  // C, H, W; OC, KH, KW; OH, OW by layout.
  const int64_t c = nhwc ? x[3] : x[1], h = nhwc ? x[1] : x[2], wd = nhwc ? x[2] : x[3];
  const int64_t oc = nhwc ? (wk ? w[0] : w[3]) : w[0];
  const int64_t kh = nhwc ? (wk ? w[1] : w[0]) : w[2];
  const int64_t kw = nhwc ? (wk ? w[2] : w[1]) : w[3];
  const int64_t ic = nhwc ? (wk ? w[3] : w[2]) : w[1];
  const int64_t oh = nhwc ? o[1] : o[2], ow = nhwc ? o[2] : o[3];
  const int64_t k = c * kh * kw;
  if (ic != c || oc < 16 || k < 16) return false;
  // The conv reads the data padded on H and W by the attributes, and nothing
  // else: the padded extents are the data's plus the padding.
  std::vector<int64_t> padded(4);
  for (size_t i = 0; i < 4; ++i) {
    if (!tir::IsConstInt(ins[0].shape()[i], &padded[i])) return false;
  }
  const size_t hd = nhwc ? 1 : 2, wdim = nhwc ? 2 : 3;
  for (size_t i = 0; i < 4; ++i) {
    const int64_t extra = i == hd ? pad[0] + pad[2] : i == wdim ? pad[1] + pad[3] : 0;
    if (padded[i] != x[i] + extra) return false;
  }
  const int64_t lim = int64_t{1} << 31;
  if (x[0] * c * h * wd >= lim || oc * k >= lim || oh * st[0] + kh * dil[0] >= lim ||
      ow * st[1] + kw * dil[1] >= lim) {
    return false;
  }
  *geom = {nhwc ? 1 : 0, wk ? 1 : 0, c, h, wd, oc, kh, kw, st[0], st[1], pad[0], pad[1],
           dil[0], dil[1], oh, ow};
  return true;
}

// Tiles O for the implicit GEMM (above); returns its threadIdx.x loop and
// records the block's origin in the plan.
absl::StatusOr<IterVar> TileConvTc(Stage* out, ConvPlan* p) {
  const std::vector<IterVar> axes = out->op->axis;
  const IterVar& n = axes[0];
  const IterVar& c = p->nhwc ? axes[3] : axes[1];
  const IterVar& h = p->nhwc ? axes[1] : axes[2];
  const IterVar& w = p->nhwc ? axes[2] : axes[3];
  KILN_ASSIGN_OR_RETURN(SplitAxes co, out->split(c, kTcTile));
  KILN_ASSIGN_OR_RETURN(SplitAxes ct, out->split(co.inner, kTcReg));
  KILN_ASSIGN_OR_RETURN(SplitAxes hs, out->split(h, kConvTcPatchRows));
  KILN_ASSIGN_OR_RETURN(SplitAxes ws, out->split(w, kConvTcPatchCols));
  // NCHW: rows are channels (threadIdx.y, ii), columns pixels (threadIdx.x
  // the patch row, jj its columns); NHWC the other way round.
  const IterVar& ty = p->nhwc ? hs.inner : ct.outer;
  const IterVar& tx = p->nhwc ? ct.outer : hs.inner;
  const IterVar& ii = p->nhwc ? ws.inner : ct.inner;
  const IterVar& jj = p->nhwc ? ct.inner : ws.inner;
  std::vector<IterVar> order = {n, co.outer, hs.outer, ws.outer, ty, tx, ii, jj};
  if (p->nhwc) order = {n, hs.outer, ws.outer, co.outer, ty, tx, ii, jj};
  KILN_RETURN_IF_ERROR(out->reorder(order));
  KILN_ASSIGN_OR_RETURN(IterVar hw, out->fuse(hs.outer, ws.outer));
  KILN_RETURN_IF_ERROR(out->bind(n, "blockIdx.z"));
  KILN_RETURN_IF_ERROR(out->bind(p->nhwc ? hw : co.outer, "blockIdx.y"));
  KILN_RETURN_IF_ERROR(out->bind(p->nhwc ? co.outer : hw, "blockIdx.x"));
  KILN_RETURN_IF_ERROR(out->bind(ty, "threadIdx.y"));
  KILN_RETURN_IF_ERROR(out->bind(tx, "threadIdx.x"));
  // The edge guards stay inside the thread's 8x8 stores (registers).
  KILN_RETURN_IF_ERROR(out->pragma(ii, "loop_partition", tir::IntImm(0)));
  const int64_t ow = p->geom[15];
  const PrimExpr cols = tir::IntImm((ow + kConvTcPatchCols - 1) / kConvTcPatchCols);
  p->origin = {n->var, co.outer->var * tir::IntImm(kTcTile),
               tir::FloorDiv(hw->var, cols) * tir::IntImm(kConvTcPatchRows),
               tir::FloorMod(hw->var, cols) * tir::IntImm(kConvTcPatchCols)};
  return tx;
}

// The conv's reduction for the implicit GEMM: its axes outermost, the
// outermost marked for the code generator and kept whole.
absl::Status StageConvTc(Stage* conv, const ConvPlan& p) {
  std::vector<IterVar> order = conv->op->reduce_axis;
  order.insert(order.end(), conv->op->axis.begin(), conv->op->axis.end());
  KILN_RETURN_IF_ERROR(conv->reorder(order));
  std::vector<PrimExpr> args;
  for (int64_t g : p.geom) args.push_back(tir::IntImm(g));
  args.insert(args.end(), p.origin.begin(), p.origin.end());
  const IterVar& k = conv->op->reduce_axis[0];
  KILN_RETURN_IF_ERROR(conv->pragma(k, "loop_partition", tir::IntImm(0)));
  return conv->pragma(k, lowering::kConvTensorCoreKey,
                      tir::Call(DataType::Int(32), lowering::kConvTensorCoreGeometry,
                                std::move(args)));
}

// One output dim's tile: `threads` threads on `tag`, each `regs` outputs.
struct ConvDim {
  int64_t threads = 1, regs = 1;
  const char* tag = nullptr;
};

struct ConvTiles {
  ConvDim c, h, w;
};

ConvTiles TilesOf(const ConvPlan& p) {
  if (p.per_channel) return {{1, 1, nullptr}, {16, 1, "threadIdx.y"}, {16, 1, "threadIdx.x"}};
  if (p.nhwc) return {{16, 1, "threadIdx.x"}, {4, 1, "threadIdx.y"}, {4, 4, "threadIdx.z"}};
  return {{4, 4, "threadIdx.z"}, {4, 1, "threadIdx.y"}, {16, 1, "threadIdx.x"}};
}

bool ParseInts(const std::map<std::string, std::string>& attrs, const char* key, size_t n,
               std::vector<int64_t>* out) {
  auto it = attrs.find(key);
  if (it == attrs.end()) return false;
  out->clear();
  int64_t v = 0;
  bool any = false;
  for (char ch : it->second + ",") {
    if (ch >= '0' && ch <= '9') {
      v = v * 10 + (ch - '0');
      any = true;
    } else if (ch == ',') {
      if (!any) return false;
      out->push_back(v);
      v = 0;
      any = false;
    } else if (ch != ' ') {
      return false;
    }
  }
  return out->size() == n;
}

// The conv2d stage O is computed from, when O and the function fit (above);
// the plan's step is chosen here, its caches made later.
std::optional<ConvPlan> FindConv(const Schedule& s, Stage* out, bool tf32) {
  if (out->is_placeholder() || !Untouched(*out) || out->op->axis.size() != 4) return std::nullopt;
  Stage* conv = nullptr;
  for (Stage* st : s.stages()) {
    if (st->is_placeholder() || st->op->reduce_axis.empty()) continue;
    if (conv != nullptr) return std::nullopt;  // another reduction
    conv = st;
  }
  if (conv == nullptr || !Untouched(*conv) || conv->op->num_outputs() != 1) return std::nullopt;
  const Operation& op = conv->op;
  const bool nhwc = op->tag == "conv2d_nhwc";
  if (!nhwc && op->tag != "conv2d_nchw") return std::nullopt;
  auto attr = [&](const char* k) {
    auto it = op->attrs.find(k);
    return it == op->attrs.end() ? std::string() : it->second;
  };
  if (attr("out_layout") != attr("data_layout")) return std::nullopt;
  if (op->axis.size() != 4 || op->reduce_axis.size() != 3 ||
      !SameConstExtents(op->axis, out->op->axis, 4)) {
    return std::nullopt;
  }
  std::vector<int64_t> st, dil, groups;
  if (!ParseInts(op->attrs, "strides", 2, &st) || !ParseInts(op->attrs, "dilation", 2, &dil) ||
      !ParseInts(op->attrs, "groups", 1, &groups)) {
    return std::nullopt;
  }
  int64_t rc = 0, kh = 0, kw = 0;
  if (!tir::IsConstInt(op->reduce_axis[0]->dom.extent, &rc) ||
      !tir::IsConstInt(op->reduce_axis[1]->dom.extent, &kh) ||
      !tir::IsConstInt(op->reduce_axis[2]->dom.extent, &kw)) {
    return std::nullopt;
  }
  // Inputs: computed without a reduction (the pad stage) or placeholders.
  const std::vector<Tensor> ins = op->InputTensors();
  if (ins.size() != 2) return std::nullopt;
  int64_t elem = 1;
  for (const Tensor& t : ins) {
    Stage* ts = s[t];
    if (ts == nullptr || (!ts->is_placeholder() && !Untouched(*ts))) return std::nullopt;
    elem = std::max<int64_t>(elem, t.dtype().bytes());
  }
  ConvPlan p;
  p.conv = conv;
  p.nhwc = nhwc;
  p.per_channel = groups[0] != 1;
  p.tc = ConvTensorCore(s, op, nhwc, groups[0], st, dil, tf32, &p.geom);
  if (p.tc) return p;
  const ConvTiles tl = TilesOf(p);
  const int64_t th = tl.h.threads * tl.h.regs, tw = tl.w.threads * tl.w.regs;
  const int64_t tc = tl.c.threads * tl.c.regs;
  const int64_t wh = (th - 1) * st[0] + (kh - 1) * dil[0] + 1;
  const int64_t ww = (tw - 1) * st[1] + (kw - 1) * dil[1] + 1;
  for (int64_t step = 16; step >= 1; step /= 2) {
    if (step > rc && step > 1) continue;
    const int64_t bytes = (step * wh * ww + tc * step * kh * kw) * elem;
    if (bytes <= kConvSharedBytes) {
      p.step = step;
      return p;
    }
  }
  return std::nullopt;
}

// Moves the conv's inputs behind "shared" cache stages (before the pad stage
// is inlined: it is then computed in the copy).
absl::Status CacheConvInputs(Schedule& s, ConvPlan* p) {
  for (const Tensor& t : p->conv->op->InputTensors()) {
    KILN_ASSIGN_OR_RETURN(Tensor cache,
                          s.cache_read(t, "shared", std::vector<Operation>{p->conv->op}));
    p->caches.push_back(cache);
  }
  return absl::OkStatus();
}

// Tiles O (above); returns its innermost thread loop.
absl::StatusOr<IterVar> TileConv(Stage* out, const ConvPlan& p) {
  const std::vector<IterVar> axes = out->op->axis;
  const IterVar& n = axes[0];
  const IterVar& c = p.nhwc ? axes[3] : axes[1];
  const IterVar& h = p.nhwc ? axes[1] : axes[2];
  const IterVar& w = p.nhwc ? axes[2] : axes[3];
  const ConvTiles tl = TilesOf(p);
  std::vector<IterVar> outer, threads, regs;
  std::vector<const char*> tags;
  auto tile = [&](const IterVar& iv, const ConvDim& d) -> absl::Status {
    if (d.threads * d.regs == 1) {
      outer.push_back(iv);
      return absl::OkStatus();
    }
    KILN_ASSIGN_OR_RETURN(SplitAxes a, out->split(iv, d.threads * d.regs));
    outer.push_back(a.outer);
    IterVar t = a.inner;
    if (d.regs > 1) {
      KILN_ASSIGN_OR_RETURN(SplitAxes r, out->split(a.inner, d.regs));
      t = r.outer;
      regs.push_back(r.inner);
    }
    threads.push_back(t);
    tags.push_back(d.tag);
    return absl::OkStatus();
  };
  KILN_RETURN_IF_ERROR(tile(c, tl.c));
  KILN_RETURN_IF_ERROR(tile(h, tl.h));
  KILN_RETURN_IF_ERROR(tile(w, tl.w));
  // threadIdx.z, .y, .x from the outside in.
  std::vector<size_t> by_tag(threads.size());
  for (size_t i = 0; i < by_tag.size(); ++i) by_tag[i] = i;
  std::sort(by_tag.begin(), by_tag.end(),
            [&](size_t a, size_t b) { return std::string(tags[a]) > std::string(tags[b]); });
  std::vector<IterVar> order = {n};
  order.insert(order.end(), outer.begin(), outer.end());
  for (size_t i : by_tag) order.push_back(threads[i]);
  order.insert(order.end(), regs.begin(), regs.end());
  KILN_RETURN_IF_ERROR(out->reorder(order));
  KILN_ASSIGN_OR_RETURN(IterVar nc, out->fuse(n, outer[0]));
  KILN_RETURN_IF_ERROR(out->bind(nc, "blockIdx.z"));
  KILN_RETURN_IF_ERROR(out->bind(outer[1], "blockIdx.y"));
  KILN_RETURN_IF_ERROR(out->bind(outer[2], "blockIdx.x"));
  for (size_t i : by_tag) KILN_RETURN_IF_ERROR(out->bind(threads[i], tags[i]));
  return threads[by_tag.back()];
}

// The conv's reduction (computed at O's innermost thread loop, "local"):
// input channels split by the plan's step, the shared tiles computed at the
// step loop and copied by all of the block's threads.
absl::Status StageConv(Schedule& s, Stage* conv, const ConvPlan& p) {
  const std::vector<IterVar> rax = conv->op->reduce_axis;
  KILN_ASSIGN_OR_RETURN(SplitAxes k, conv->split(rax[0], p.step));
  std::vector<IterVar> order = {k.outer, rax[1], rax[2], k.inner};
  order.insert(order.end(), conv->op->axis.begin(), conv->op->axis.end());
  KILN_RETURN_IF_ERROR(conv->reorder(order));
  const ConvTiles tl = TilesOf(p);
  // The block's threads: x, y, z extents.
  int64_t ext[3] = {1, 1, 1};
  for (const ConvDim* d : {&tl.c, &tl.h, &tl.w}) {
    if (d->tag == nullptr) continue;
    ext[d->tag[10] - 'x'] = d->threads;
  }
  for (const Tensor& cache : p.caches) {
    Stage* cs = s[cache];
    KILN_RETURN_IF_ERROR(cs->compute_at(conv, k.outer));
    KILN_ASSIGN_OR_RETURN(IterVar fused, cs->fuse(cs->op->axis));
    KILN_ASSIGN_OR_RETURN(SplitAxes blk, cs->split(fused, ext[0] * ext[1] * ext[2]));
    KILN_ASSIGN_OR_RETURN(SplitAxes x, cs->split(blk.inner, ext[0]));
    KILN_RETURN_IF_ERROR(cs->bind(x.inner, "threadIdx.x"));
    if (ext[2] > 1) {
      KILN_ASSIGN_OR_RETURN(SplitAxes zy, cs->split(x.outer, ext[1]));
      KILN_RETURN_IF_ERROR(cs->bind(zy.outer, "threadIdx.z"));
      KILN_RETURN_IF_ERROR(cs->bind(zy.inner, "threadIdx.y"));
    } else {
      KILN_RETURN_IF_ERROR(cs->bind(x.outer, "threadIdx.y"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ScheduleDefaultCuda(Schedule& s, const std::vector<Tensor>& outputs,
                                 int max_threads, bool tf32, bool wide_wgmma) {
  if (max_threads < kWarp || max_threads > 1024 || max_threads % kWarp != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ScheduleDefaultCuda: max_threads must be a multiple of 32 in [32, 1024], got ",
        max_threads));
  }
  std::vector<Stage*> out_stages;
  std::unordered_set<Stage*> is_out;
  for (const Tensor& t : outputs) {
    Stage* st = s[t];
    if (st == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("ScheduleDefaultCuda: output '", t.name(),
                                                     "' is not in the schedule"));
    }
    if (is_out.insert(st).second) out_stages.push_back(st);
  }
  // 0. A GEMM-shaped output that is itself the reduction computes it in a
  //    "local" cache stage (register blocking, below).
  for (const Tensor& t : outputs) {
    Stage* st = s[t];
    if (st->is_placeholder() || !Untouched(*st) || !GemmShaped(*st) || !GemmReduction(*st, *st) ||
        outputs.size() != 1) {
      continue;
    }
    KILN_ASSIGN_OR_RETURN(Tensor cache, s.cache_write(t, "local"));
    (void)cache;
  }
  // 0b. A conv2d anchor (above): its inputs behind shared cache stages,
  //     which step 1 must not inline.
  std::optional<ConvPlan> conv_plan;
  std::unordered_set<Stage*> keep;
  if (out_stages.size() == 1) conv_plan = FindConv(s, out_stages[0], tf32);
  if (conv_plan) {
    if (conv_plan->conv == out_stages[0]) {
      KILN_ASSIGN_OR_RETURN(Tensor cache, s.cache_write(outputs[0], "local"));
      conv_plan->conv = s[cache];
    }
    if (!conv_plan->tc) KILN_RETURN_IF_ERROR(CacheConvInputs(s, &*conv_plan));
    for (const Tensor& c : conv_plan->caches) keep.insert(s[c]);
  }
  // 1. Inline injective intermediates.
  for (Stage* st : s.stages()) {
    if (st->is_placeholder() || st->is_output || is_out.count(st) || keep.count(st) ||
        !Untouched(*st)) {
      continue;
    }
    if (!st->op->reduce_axis.empty() || st->op->attrs.count("no_inline")) continue;
    KILN_RETURN_IF_ERROR(st->compute_inline());
  }
  // 2. Outputs: one thread per element.
  std::unordered_map<Stage*, IterVar> thread_loop;  // output -> its threadIdx.x loop (or null)
  std::unordered_set<Stage*> gemm_tiled, tc_tiled;
  for (Stage* out : out_stages) {
    if (out->is_placeholder() || !Untouched(*out)) continue;
    if (conv_plan && out == out_stages[0]) {
      KILN_ASSIGN_OR_RETURN(IterVar tx, conv_plan->tc ? TileConvTc(out, &*conv_plan)
                                                      : TileConv(out, *conv_plan));
      thread_loop[out] = tx;
      continue;
    }
    // GEMM-shaped and reading a GEMM-like reduction: register-blocked.
    bool gemm = false, tc = false, wide = false;
    if (GemmShaped(*out) && out_stages.size() == 1) {
      const std::vector<Stage*> all = s.stages();
      for (Stage* r : all) {
        if (gemm || r == out || r->is_placeholder() || r->is_inlined() || !Untouched(*r) ||
            !GemmReduction(*r, *out)) {
          continue;
        }
        gemm = true;
        tc = TensorCoreGemm(s, *r, *out, tf32);
        wide = tc && wide_wgmma && WideWgmmaGemm(*r, *out);
      }
    }
    if (gemm) {
      const int64_t reg = tc ? kTcReg : kGemmReg;
      KILN_ASSIGN_OR_RETURN(IterVar tx, TileGemm(out, reg, wide ? kWideCols : reg));
      if (tc) {
        // A ragged edge's guards stay inside the thread's 8x8 stores (not
        // peeled into loops of variable extent), so the block stays in
        // registers.
        const std::vector<IterVar>& leaves = out->leaf_iter_vars;
        KILN_RETURN_IF_ERROR(
            out->pragma(leaves[leaves.size() - 2], "loop_partition", tir::IntImm(0)));
      }
      KILN_RETURN_IF_ERROR(VectorizeGemmStores(out, wide ? kWideCols : reg));
      thread_loop[out] = tx;
      gemm_tiled.insert(out);
      if (tc) tc_tiled.insert(out);
      continue;
    }
    if (out_stages.size() == 1) {
      KILN_ASSIGN_OR_RETURN(bool rows, ScheduleRows(s, out, max_threads));
      if (rows) continue;
      KILN_ASSIGN_OR_RETURN(bool vec, BindVectorized(s, out, max_threads));
      if (vec) continue;
    }
    KILN_ASSIGN_OR_RETURN(IterVar tx, BindDataParallel(out, max_threads));
    thread_loop[out] = tx;
  }
  // 3. The other stages, consumers first: computed per thread inside the one
  //    output that reads them.
  std::unordered_map<Stage*, std::unordered_set<Stage*>> owners;  // stage -> outputs reading it
  const std::vector<Stage*> order = s.stages();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Stage* st = *it;
    if (st->is_placeholder() || st->is_inlined() || is_out.count(st)) continue;
    KILN_ASSIGN_OR_RETURN(std::vector<Stage*> readers, s.ReadersOf(st));
    std::unordered_set<Stage*>& own = owners[st];
    for (Stage* r : readers) {
      if (is_out.count(r)) {
        own.insert(r);
      } else {
        const auto& inner = owners[r];
        own.insert(inner.begin(), inner.end());
      }
    }
    if (!Untouched(*st)) continue;
    if (own.size() == 1) {
      Stage* out = *own.begin();
      auto tl = thread_loop.find(out);
      if (tl != thread_loop.end()) {
        KILN_RETURN_IF_ERROR(st->set_scope("local"));
        if (tl->second) {
          KILN_RETURN_IF_ERROR(st->compute_at(out, tl->second));
          if (conv_plan && st == conv_plan->conv) {
            KILN_RETURN_IF_ERROR(conv_plan->tc ? StageConvTc(st, *conv_plan)
                                               : StageConv(s, st, *conv_plan));
            continue;
          }
          if (gemm_tiled.count(out) && GemmReduction(*st, *out)) {
            bool staged = false;
            if (!tc_tiled.count(out)) {
              KILN_ASSIGN_OR_RETURN(staged, StageThroughShared(s, st));
            }
            if (!staged) {
              // Reduction axes outermost: each loaded value serves a row or
              // column of the thread's block.
              std::vector<IterVar> order = st->op->reduce_axis;
              order.insert(order.end(), st->op->axis.begin(), st->op->axis.end());
              KILN_RETURN_IF_ERROR(st->reorder(order));
            }
            if (tc_tiled.count(out)) {
              // The code generator matches this loop whole, guards included.
              KILN_RETURN_IF_ERROR(
                  st->pragma(st->op->reduce_axis[0], "loop_partition", tir::IntImm(0)));
            }
          }
        }
        // A scalar output's stages stay at the root, unbound: the code
        // generator runs them with it on one thread.
        continue;
      }
    }
    // Read by several outputs (or none): a nest of its own.
    KILN_ASSIGN_OR_RETURN(IterVar unused, BindDataParallel(st, max_threads));
    (void)unused;
  }
  return absl::OkStatus();
}

}  // namespace kiln::te
