// File: codegen_cuda/codegen_cuda_internal.h  (internal to codegen_cuda.cc and
// codegen_cuda_expr.cc; not exported) — the CUDA C emitter of one kernel:
// the class GenerateKernel runs, and the type helpers both files use.
// codegen_cuda.cc holds the kernel's signature and launch, its statements and
// the tensor-core calls; codegen_cuda_expr.cc its memory accesses (vectorized
// 16-byte loads and stores) and expressions (indexing, arithmetic, casts,
// intrinsic calls).
#ifndef KILN_CODEGEN_CUDA_CODEGEN_CUDA_INTERNAL_H_
#define KILN_CODEGEN_CUDA_CODEGEN_CUDA_INTERNAL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codegen_cuda/codegen_cuda.h"
#include "ir/tir.h"

namespace kiln::codegen_cuda::internal {

using tir::Buffer;
using tir::ExprKind;
using tir::ExprNode;
using tir::ForKind;
using tir::PrimExpr;
using tir::Stmt;
using tir::StmtKind;
using tir::StmtNode;

inline bool IsHalf(DataType t) { return t.code() == DTypeCode::kFloat && t.bits() == 16; }
inline bool IsBF16(DataType t) { return t.code() == DTypeCode::kBFloat && t.bits() == 16; }
inline bool Is16BitFloat(DataType t) { return IsHalf(t) || IsBF16(t); }

// The C type a value of `t` is stored as (buffers, arrays).
absl::StatusOr<std::string> StorageType(DataType t);

// The C type a value of `t` is computed in (16-bit floats in float).
absl::StatusOr<std::string> ValueType(DataType t);

// A root statement of the kernel: a nest bound to threads, or one run by a
// single thread; what it reads and writes (buffer data vars).
struct Unit {
  bool single_thread = false;
  std::set<const ExprNode*> reads, writes;
};

class Emitter {
 public:
  // `warp_specialize`: a kGemmWgs* call may take the warp-specialized form.
  explicit Emitter(const tir::PrimFunc& f, bool warp_specialize = false)
      : f_(f), warp_specialize_(warp_specialize) {}
  absl::StatusOr<CudaKernel> Run();
  // After Run: the kernel holds a kGemmWgs* call that could not take the
  // warp-specialized form (emit it again with warp_specialize off).
  bool warp_specialize_refused() const { return ws_refused_; }

 private:
  // ---- Names (this and the sections up to the vectorized accesses:
  // codegen_cuda.cc) ----
  std::string Bind(const PrimExpr& var, absl::string_view hint);
  absl::StatusOr<std::string> NameOf(const ExprNode* v);

  // ---- A batch over blockIdx.z (lowering/vm/batch_split.h on a GPU) ----
  absl::Status CollectBatchRows();

  // ---- Launch dims ----
  static int TagIndex(absl::string_view tag);
  absl::Status AddExtent(absl::string_view tag, const PrimExpr& extent);
  absl::Status CollectLaunch(const Stmt& body);
  static bool HasBinding(const Stmt& s);

  // ---- Root: which statements run on every thread, which on one ----
  absl::Status EmitRoot(const Stmt& s);
  bool OneBlock() const;
  absl::Status OrderAfterEarlierUnits(const Unit& u);

  // ---- Statements ----
  void Line(absl::string_view text);
  absl::Status EmitLetHead(const Stmt& s);
  absl::Status EmitAllocHead(const Stmt& s);
  absl::Status EmitBody(const Stmt& s);
  absl::Status EmitStmt(const Stmt& s);

  // ---- Vectorized global accesses (the "pragma_kiln_vector" loop) ----
  // (codegen_cuda_expr.cc)
  static bool SplitLane(const PrimExpr& e, const ExprNode* v, PrimExpr* base);
  static bool MultipleOf(const PrimExpr& e, int64_t m);
  static const char* VectorType4(DataType t);
  bool IsParam(const Buffer& b) const;

  // 8 lanes of 2-byte elements (float16, bfloat16, 16-bit integers): a
  // 16-byte access through an aligned array of the storage type.
  static bool Vector8(DataType t) { return t.lanes() == 1 && t.bits() == 16; }
  static bool VectorOf(DataType t, int64_t lanes);
  absl::StatusOr<bool> EmitVector(const Stmt& loop);

  // ---- The Hopper GEMM tiles (codegen_cuda_wgmma.cc) ----
  absl::Status PlanWarpSpecialization();
  void FinishWarpSpecialization();

  // ---- Tensor-core calls and loops (codegen_cuda.cc) ----
  absl::Status EmitMma(const PrimExpr& call);
  absl::StatusOr<std::vector<std::string>> Args(const PrimExpr& call);
  absl::Status EmitGemmTc(const PrimExpr& call);
  absl::Status EmitConvTc(const PrimExpr& call);
  absl::Status EmitGemmWg(const PrimExpr& call);
  // The tensor map (its parameter's name) of a GEMM operand read as rows of
  // `k` elements `row_stride` apart from kernel parameter `data`, boxes of
  // 64 x `box_rows`, 128-byte swizzle; nullopt where TMA cannot read it
  // (not a parameter, a symbolic shape, rows not whole 16-byte chunks).
  std::optional<std::string> GemmTensorMap(const PrimExpr& data, int64_t row_stride, int64_t k,
                                           int64_t box_rows);
  absl::Status EmitBound(const PrimExpr& var, absl::string_view tag, const PrimExpr& extent,
                         const Stmt& body);
  absl::Status EmitFor(const Stmt& s);

  // ---- Expressions (codegen_cuda_expr.cc) ----
  absl::StatusOr<std::string> BufferName(const Buffer& b);
  absl::StatusOr<std::string> Index(const Buffer& b, const PrimExpr& idx);
  static std::string Round(DataType t, std::string v);
  absl::StatusOr<std::string> Wrap(DataType t, std::string v);
  absl::StatusOr<std::string> Expr(const PrimExpr& e);
  absl::StatusOr<std::string> CastExpr(DataType to, const PrimExpr& x);
  absl::StatusOr<std::string> CallExpr(const PrimExpr& e);

  const tir::PrimFunc& f_;
  std::string body_;
  int indent_ = 1;
  std::unordered_map<const ExprNode*, std::string> names_;
  std::unordered_map<const ExprNode*, std::string> buffer_names_;
  std::set<std::string> used_;
  std::array<PrimExpr, 6> launch_;  // blockIdx.xyz, threadIdx.xyz extents
  std::vector<std::pair<size_t, int64_t>> batch_rows_;  // kiln.batch_z: (param, elements per row)
  bool batch_z_ = false;
  std::vector<Unit> units_;
  size_t synced_units_ = 0;  // units before it are ordered by a barrier
  bool mma_finish_ = false;   // kiln_mma_finish's shared tile counted
  bool gemm_tc_ = false;      // kiln_gemm_tc's stages counted
  int64_t shared_bytes_ = 0;
  int64_t dynamic_shared_bytes_ = 0;  // the wide wgmma tile's stages (kiln_gemm_wgw)
  bool static_launch_ = false;        // no shape variables: tensor maps allowed
  std::vector<CudaTensorMap> tensor_maps_;  // param: index into tensor_map_names_
  std::vector<std::string> tensor_map_names_;
  bool wgt_barriers_ = false;         // kiln_gemm_wgt's mbarriers counted
  // The warp-specialized form: allowed; the launch made 16 x 24; the call
  // emitted as kiln_gemm_wgs (its producer's call, for the prologue);
  // another GEMM call; refused (see warp_specialize_refused).
  bool warp_specialize_ = false;
  bool ws_launch_ = false;
  bool ws_done_ = false;
  bool ws_other_call_ = false;
  bool ws_refused_ = false;
  std::string ws_producer_;
  int serial_depth_ = 0;  // serial loops around the statement being emitted
};

}  // namespace kiln::codegen_cuda::internal

#endif  // KILN_CODEGEN_CUDA_CODEGEN_CUDA_INTERNAL_H_
