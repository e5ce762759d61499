// File: codegen_cuda/warp_reduce.h
//
// LowerWarpReduce: a loop that combines 32 values, run the same by every lane
// of a one-warp block, becomes a butterfly of warp shuffles. The GPU
// schedule's row reductions (lowering/te/schedule_cuda.h) leave, after
// rfactor, such a loop over a "shared" array of the lanes' partials, outside
// any nest bound to threadIdx.x (so every lane runs all of it):
//
//   for (k, 0, 32) { R[i] = R[i] + RF[f(k)] }        (or max, min, *)
//
// It is rewritten to
//
//   thread_binding (lane, 0, 32) "threadIdx.x" {
//     let v0 = RF[f(lane)]
//     let v1 = v0 + kiln.shfl_xor(v0, 16)   ... 8, 4, 2, 1
//     R[i] = R[i] + v5                       (every lane holds the total)
//   }
//
// which gives every lane the loop's result (the terms combined in the
// butterfly's order instead of 0, 1, ..., 31). `kiln.shfl_xor(v, m)` (a call
// of v's type) is printed as `__shfl_xor_sync(0xffffffffu, v, m)`.
//
// A block of several warps (threadIdx.x extent 32 x W, W > 1, the schedule's
// rows of >= 1024 elements): a loop over all 32 x W partials P[f(k)] of a
// "shared" array becomes each warp's butterfly, then lane 0 of each warp
// writing its warp's total over its own partial, then a loop every thread
// runs over the W totals:
//
//   thread_binding (lane, 0, 32 W) "threadIdx.x" {
//     let v0 = P[f(lane)]  ...  let v5 = v4 + kiln.shfl_xor(v4, 1)
//     if (lane % 32 == 0) { P[f(lane)] = v5 }
//   }
//   for (warp, 0, W) { R[i] = R[i] + P[f(warp * 32)] }
//
// (the barrier between the two comes from codegen_cuda/thread_sync.h, which
// runs after this).
//
// Only when it is exactly that: the launch is 32 threads (or 32 x W with the
// part a load of a "shared" array; threadIdx.x extent 32 x W, y and z 1);
// the loop is in a root nest bound to threads (not one run by a single
// thread) and not inside a threadIdx.x nest, so all lanes run it with the
// same values; its extent is the constant launch size; its body is one
// accumulation `R[i] = R[i] op e` (op +, *, max, min) into a "local" buffer
// R (each lane's own: lanes adding into one shared or global element would
// race), where i does not depend on the loop and e reads neither R nor any
// other "local" buffer (lanes' private values). Anything else is left as it
// is.
#ifndef KILN_CODEGEN_CUDA_WARP_REDUCE_H_
#define KILN_CODEGEN_CUDA_WARP_REDUCE_H_

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::codegen_cuda {

inline constexpr char kShflXor[] = "kiln.shfl_xor";

absl::StatusOr<tir::PrimFunc> LowerWarpReduce(const tir::PrimFunc& f);

}  // namespace kiln::codegen_cuda

#endif  // KILN_CODEGEN_CUDA_WARP_REDUCE_H_
