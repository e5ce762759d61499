// File: codegen_cuda/codegen_cuda_wgmma.cc — the Emitter's Hopper GEMM
// tiles (codegen_cuda_internal.h): kiln_gemm_wg and the wide tile's three
// forms (cp.async kiln_gemm_wgw, TMA kiln_gemm_wgt, warp-specialized
// kiln_gemm_wgs), their tensor-map parameters and the warp-specialized
// kernel's launch and prologue (codegen_cuda/tensor_core.h).
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen_cuda/codegen_cuda_internal.h"
#include "codegen_cuda/tensor_core.h"
#include "ir/status_macros.h"
#include "ir/tir_functor.h"

namespace kiln::codegen_cuda::internal {

std::optional<std::string> Emitter::GemmTensorMap(const PrimExpr& data, int64_t row_stride,
                                                  int64_t k, int64_t box_rows) {
  if (!static_launch_ || row_stride % 8 != 0 || row_stride < k || k < 1) return std::nullopt;
  for (size_t i = 0; i < f_->params.size(); ++i) {
    const Buffer& b = f_->params[i];
    if (b->data.get() != data.get()) continue;
    if (b->dtype.bits() != 16 || b->dtype.lanes() != 1) return std::nullopt;
    int64_t elems = 1;
    for (const PrimExpr& d : b->shape) {
      int64_t v = 0;
      if (!tir::IsConstInt(d, &v) || v < 0) return std::nullopt;
      elems *= v;
    }
    if (elems < k) return std::nullopt;
    CudaTensorMap tm;
    tm.buffer = i;
    // Whole rows of k elements: a row r is in the map when its last element is.
    tm.dims = {k, (elems - k) / row_stride + 1};
    tm.strides = {row_stride * 2};
    tm.box = {64, box_rows};
    tm.swizzle = 128;
    for (size_t j = 0; j < tensor_maps_.size(); ++j) {
      const CudaTensorMap& o = tensor_maps_[j];
      if (o.buffer == tm.buffer && o.dims == tm.dims && o.strides == tm.strides &&
          o.box == tm.box) {
        return tensor_map_names_[j];
      }
    }
    auto it = buffer_names_.find(b->data.get());
    if (it == buffer_names_.end()) return std::nullopt;
    const std::string base = absl::StrCat("tm_", it->second);
    std::string name = base;
    for (int n = 1; used_.count(name); ++n) name = absl::StrCat(base, "_", n);
    used_.insert(name);
    tensor_maps_.push_back(std::move(tm));
    tensor_map_names_.push_back(name);
    return name;
  }
  return std::nullopt;
}

// ---- The warp-specialized form (kGemmWgs*) ----
// Planned before the body is emitted: a kernel holding a kGemmWgs* call
// whose threads are 16 x 16 (x, y) launches 16 x 24; the call then either
// becomes the consumers' kiln_gemm_wgs (EmitGemmWg) or the kernel is
// refused for it (warp_specialize_refused(): GenerateKernel emits it again
// without, the call a kGemmWgt* one).
absl::Status Emitter::PlanWarpSpecialization() {
  if (!warp_specialize_) return absl::OkStatus();
  bool has = false;
  tir::PostOrderVisit(f_->body, [&](const ExprNode* e) {
    has = has || (e->kind == ExprKind::kCall &&
                  (e->name == kGemmWgsF16 || e->name == kGemmWgsBF16));
  });
  int64_t x = 0, y = 0;
  if (!has || !launch_[3] || !launch_[4] || launch_[5] || !tir::IsConstInt(launch_[3], &x) ||
      !tir::IsConstInt(launch_[4], &y) || x != 16 || y != 16) {
    return absl::OkStatus();
  }
  ws_launch_ = true;
  launch_[4] = tir::IntImm(24);  // the third warpgroup: threads y >= 16
  return absl::OkStatus();
}

void Emitter::FinishWarpSpecialization() {
  if (!ws_launch_) return;
  if (!ws_done_ || ws_other_call_ || absl::StrContains(body_, "__syncthreads")) {
    ws_refused_ = true;
    return;
  }
  body_ = absl::StrCat("  kiln_wgs_init();\n  if (threadIdx.y >= 16u) {\n    ", ws_producer_,
                       "\n    return;\n  }\n", body_);
  shared_bytes_ += kGemmWgsStateBytes;
}

// kiln_gemm_wg<bf16>(cl, A + a_base, a_row_stride, B + b_base,
// b_col_stride, steps, rows, cols, k) (both k strides 1), or the wide
// tile's kiln_gemm_wgw<bf16>(...), whose stages are dynamic shared memory,
// kiln_gemm_wgt<bf16>(...) with tensor maps, or kiln_gemm_wgs<bf16>(...).
absl::Status Emitter::EmitGemmWg(const PrimExpr& call) {
  const bool ws = call->name == kGemmWgsF16 || call->name == kGemmWgsBF16;
  const bool tma = ws || call->name == kGemmWgtF16 || call->name == kGemmWgtBF16;
  const bool wide = tma || call->name == kGemmWgwF16 || call->name == kGemmWgwBF16;
  const bool bf = call->name == kGemmWgBF16 || call->name == kGemmWgwBF16 ||
                  call->name == kGemmWgtBF16 || call->name == kGemmWgsBF16;
  if (call->args.size() != (wide ? 12u : 11u)) {
    return absl::InvalidArgumentError(
        absl::StrCat("call '", call->name, "' with ", call->args.size(), " arguments"));
  }
  int64_t swizzle = 0;
  if (wide && (!tir::IsConstInt(call->args[11], &swizzle) || (swizzle != 0 && swizzle != 128) ||
               (tma && swizzle != 128))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "call '", call->name, "': the swizzle must be a constant ", tma ? "128" : "0 or 128"));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> a, Args(call));
  if (tma) {
    int64_t ar = 0, bc = 0, kn = 0;
    std::optional<std::string> ta, tb;
    if (tir::IsConstInt(call->args[3], &ar) && tir::IsConstInt(call->args[6], &bc) &&
        tir::IsConstInt(call->args[10], &kn)) {
      ta = GemmTensorMap(call->args[1], ar, kn, 128);
      if (ta) tb = GemmTensorMap(call->args[4], bc, kn, 256);
    }
    if (ta && tb) {
      if (!wgt_barriers_) shared_bytes_ += kGemmWgtBarrierBytes;
      wgt_barriers_ = true;
      dynamic_shared_bytes_ = std::max(dynamic_shared_bytes_,
                                       kGemmWgwDynamicSharedBytes + kGemmWgwSwizzleAlignBytes);
      if (ws && ws_launch_ && !ws_done_ && serial_depth_ == 0 && MultipleOf(call->args[2], ar) &&
          MultipleOf(call->args[5], bc)) {
        Line(absl::StrCat("kiln_gemm_wgs<", bf ? "true" : "false", ">(", a[0], ", (int)((", a[2],
                          ") / ", a[3], "), (int)((", a[5], ") / ", a[6], "), ", a[7], ");"));
        ws_producer_ = absl::StrCat("kiln_wgs_produce(&", *ta, ", &", *tb, ");");
        ws_done_ = true;
        return absl::OkStatus();
      }
      if (ws_launch_) ws_other_call_ = true;
      Line(absl::StrCat("kiln_gemm_wgt<", bf ? "true" : "false", ">(", a[0], ", &", *ta, ", &",
                        *tb, ", ", a[1], ", ", a[2], ", ", a[3], ", ", a[4], ", ", a[5], ", ",
                        a[6], ", ", a[7], ", ", a[8], ", ", a[9], ", ", a[10], ");"));
      return absl::OkStatus();
    }
  }
  if (ws_launch_) ws_other_call_ = true;
  Line(absl::StrCat(wide ? "kiln_gemm_wgw<" : "kiln_gemm_wg<", bf ? "true" : "false",
                    wide ? (swizzle ? ", true" : ", false") : "", ">(", a[0], ", ", a[1], " + (",
                    a[2], "), ", a[3], ", ", a[4], " + (", a[5], "), ", a[6], ", ", a[7], ", ",
                    a[8], ", ", a[9], ", ", a[10], ");"));
  if (wide) {
    dynamic_shared_bytes_ =
        std::max(dynamic_shared_bytes_,
                 kGemmWgwDynamicSharedBytes + (swizzle ? kGemmWgwSwizzleAlignBytes : 0));
    return absl::OkStatus();
  }
  if (!gemm_tc_) shared_bytes_ += kGemmTcSharedBytes;
  gemm_tc_ = true;
  return absl::OkStatus();
}

}  // namespace kiln::codegen_cuda::internal
