// File: lowering/te/schedule_cuda.h
//
// The default GPU schedule of a fused operator (TVM's generic CUDA injective
// and reduce schedules, topi/cuda/injective.py and reduction.py, in their
// simplest form: one kernel, one thread per output element), with the
// shared-memory GEMM tiles and the one-warp-per-row reductions below.
//
//   - every injective stage that is not an output is inlined (as on x86);
//   - each output: its data-parallel axes fused into one loop, split by the
//     block size (`max_threads`, or the extent rounded up to a warp when
//     that is smaller), the outer part bound to blockIdx.x and the inner to
//     threadIdx.x; a reduction output keeps its reduction loops serial inside
//     the thread (one thread per output);
//   - otherwise, every other stage (reductions, "no_inline" stages) read, directly or
//     through other such stages, by exactly one output is computed at that
//     output's threadIdx.x loop in "local" storage: each thread computes the
//     part it reads (softmax's row max and sum per element: redundant work,
//     but no barrier between threads is needed);
//   - GEMM-like fusions (dense, matmul, batch_matmul, with their fused
//     epilogue): an output whose last two data-parallel axes have constant
//     extents >= 64 (plus at most a batch axis) computed by a reduction (its
//     own, moved into a "local" cache_write stage, or a producer's) is tiled
//     as TVM's topi/cuda dense and batch_matmul templates do: 64x64 tiles per
//     block of 16x16 threads (blockIdx.y/x, blockIdx.z per batch,
//     threadIdx.y/x), each thread 4x4 outputs, the reduction computed at the
//     thread's loop into a 4x4 "local" array; its reduction axis split by 16,
//     and at each step the block's threads copy the 64x16 slices of A and B
//     it reads into "shared" tiles (cache_read; consecutive threads copy
//     consecutive elements; a row padded by one element against bank
//     conflicts) before the inner product reads them there. The barriers
//     (after the copies, before the next step's) are put in by the code
//     generator (codegen_cuda/thread_sync.h), and for float16/bfloat16 tiles
//     that divide the tile the step products go to tensor cores
//     (codegen_cuda/tensor_core.h). float16/bfloat16 GEMMs (float32 too
//     with `tf32`) whose A and B are read at plain indices take the
//     tensor-core template instead: 128x128 tiles per block of 16x16
//     threads, each thread 8x8 outputs, nothing staged by the schedule: the
//     code generator replaces the whole reduction loop by a pipelined tile
//     (cp.async stages, ldmatrix, mma.sync or wgmma) that reads A and B
//     itself; with `wide_wgmma` a k-major 16-bit one of 256 columns or more
//     is tiled 128 x 256 (8 x 16 outputs per thread) for the wide wgmma
//     tile. Extents that are not multiples of the tile (M, N of 128, K of
//     32) keep their guards inside that loop (pragma "loop_partition" = 0),
//     and the tile reads zeros past them; each input's innermost extent
//     must then be a multiple of 16 bytes, and a shape whose M and N are
//     multiples of 64 keeps the 64x64 template unless the 128 tiles' padded
//     work is at most 1.25 times the real work. An input read at other than
//     plain axis indices, or a reduction over several axes, is read from
//     global memory as before (reduction axes outermost);
//   - an injective output of 4-byte elements whose extent is a constant
//     multiple of 128 (2-byte elements: 8 per thread, a multiple of 256),
//     the function's other stages all inlined: 4 consecutive elements per
//     thread (the inner loop marked with the
//     "kiln_vector" pragma, which the code generator turns into 16-byte
//     loads and stores where the indices allow), a block size that divides
//     the extent / 4, so no guard;
//   - conv2d (NCHW or NHWC, constant shapes, the conv alone or with its
//     fused injective epilogue): groups == 1: a block of 4 x 4 x 16 threads
//     computes 16 output channels x 4 rows x 16 columns, each thread 4
//     outputs in "local" registers (4 channels of a pixel in NCHW, 4 columns
//     of a channel in NHWC); groups > 1 (depthwise): a block of 16 x 16
//     threads computes 16 x 16 pixels of one channel, one each; the input
//     channels split by a step, and at each step the block copies the input
//     window its tile reads (the padding computed in the copy) and its
//     weights into "shared" tiles (TVM's topi/cuda conv2d_direct template);
//     a float16/bfloat16 conv with groups == 1 (NCHW with OIHW weights,
//     NHWC with HWIO or OHWI; at least 16 output channels and 16 of
//     C*KH*KW) is an implicit GEMM on tensor cores instead: a block of 16 x
//     16 threads, each 8 x 8 outputs, covers 128 output channels x a patch
//     of 16 x 8 pixels, and the code generator replaces the conv's
//     reduction (marked "pragma_kiln_conv_tc" with the geometry) by the
//     pipelined tile, which gathers the image operand from the data itself
//     (lowering/strategy/target.h, codegen_cuda/tensor_core.h);
//   - row reductions: a fused function whose only output is a reduction
//     (sum, prod, max, min) over >= 32 elements whose axes are the trailing
//     indices of what it reads, in order (the last axis; or several, as
//     NCHW's H and W in a global pool), or is computed from such reductions
//     of its rows (softmax, log_softmax, layer_norm, mean), runs one warp per
//     row: rows fused on blockIdx.x, 32 threads; each reduction (moved into
//     a "local" cache_write stage when it is the output; its axes fused)
//     split by 32 and rfactor'ed,
//     the lanes' partials in "shared" memory combined by a loop every lane
//     runs, which the code generator turns into warp shuffles
//     (codegen_cuda/warp_reduce.h); the output's row spread over the lanes;
//     rows of >= 1024 elements get a block of 256 threads (8 warps) instead:
//     shuffles within each warp, the warps' totals through the shared
//     partials;
//   - a scalar output (no data-parallel axis) is left unbound: the code
//     generator runs it on thread 0 of block 0, and the stages it reads stay
//     at the root in "local" storage, in the same thread.
//
// What is left at the root otherwise (a reduction read by two outputs) is
// bound like an output; the CUDA code generator refuses a kernel whose root
// nests read each other's results over several blocks (that needs a
// grid-wide barrier) and puts a block barrier between them in a one-block
// launch.
//
//   KILN_ASSIGN_OR_RETURN(Schedule s, CreateSchedule(outputs));
//   KILN_RETURN_IF_ERROR(ScheduleDefaultCuda(s, outputs, 256));
#ifndef KILN_LOWERING_TE_SCHEDULE_CUDA_H_
#define KILN_LOWERING_TE_SCHEDULE_CUDA_H_

#include <vector>

#include "absl/status/status.h"
#include "lowering/te/schedule.h"
#include "lowering/te/te.h"

namespace kiln::te {

// `max_threads` is the block size (threads per block), a multiple of 32 in
// [32, 1024]. `tf32`: float32 GEMMs of 128x128x32 multiples take the
// tensor-core template too (their inputs rounded to TF32 there). `wide_wgmma`
// (sm_90a): 16-bit GEMMs with both operands k-major and at least 256
// columns take the wide template, 128 x 256 per block, 8 x 16 outputs per
// thread (codegen_cuda/tensor_core.h, kiln_gemm_wgw).
absl::Status ScheduleDefaultCuda(Schedule& s, const std::vector<Tensor>& outputs,
                                 int max_threads = 256, bool tf32 = false,
                                 bool wide_wgmma = false);

}  // namespace kiln::te

#endif  // KILN_LOWERING_TE_SCHEDULE_CUDA_H_
