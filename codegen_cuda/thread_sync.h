// File: codegen_cuda/thread_sync.h
//
// InsertThreadSync: block barriers (`__syncthreads()`) where the threads of a
// block exchange data through "shared" memory (TVM's ThreadSync pass for the
// "shared" scope, in a simpler, conservative form). Runs on the final loop IR
// of a kernel, just before CUDA C emission (codegen_cuda.cc calls it).
//
// The barrier is the loop-IR statement `evaluate(kiln.syncthreads())` (an
// opaque call; no new IR node), which the code generator prints as
// `__syncthreads();`.
//
// Where barriers go: walking each statement sequence in order, the pass keeps
// the shared buffers read and written since the last barrier. Before a
// statement that reads a buffer written since then (read after write), or
// writes a buffer read since then (write after read), it inserts a barrier,
// as far out as it can: before the outermost loop or `if` of the sequence
// that contains the access. A loop's body is analysed twice, the second time
// with what the first pass left pending, so a dependence carried from one
// iteration to the next gets its barrier at the top of the body (there the
// indices that use a var of the loop count as unknown). Two accesses at the
// same index expression (same values of its vars) are one thread's element
// and need no barrier (as TVM assumes: kiln's schedules never have two
// threads write one shared element); writes after writes are not ordered.
//
//   for ko:                          for ko:
//     AA[..] = A[..]   (threads)       kiln.syncthreads()     <- WAR, carried
//     BB[..] = B[..]   (threads) ->    AA[..] = A[..]
//     for ki: C += AA[..] * BB[..]     BB[..] = B[..]
//                                      kiln.syncthreads()     <- RAW
//                                      for ki: C += AA[..] * BB[..]
//
// A barrier must be reached by every thread of the block: if one is needed
// inside code that depends on the thread (an `if` or loop bound using a
// thread index or a loaded value, a thread-bound nest smaller than the
// launch, a statement run by one thread only), the pass fails with a status
// naming the shared buffer.
#ifndef KILN_CODEGEN_CUDA_THREAD_SYNC_H_
#define KILN_CODEGEN_CUDA_THREAD_SYNC_H_

#include "absl/status/statusor.h"
#include "ir/tir.h"

namespace kiln::codegen_cuda {

// The name of the barrier call.
inline constexpr char kSyncThreads[] = "kiln.syncthreads";

// `evaluate(kiln.syncthreads())`.
tir::Stmt SyncThreads();
bool IsSyncThreads(const tir::Stmt& s);

// Unchanged (same object) when the kernel allocates no shared memory.
absl::StatusOr<tir::PrimFunc> InsertThreadSync(const tir::PrimFunc& f);

}  // namespace kiln::codegen_cuda

#endif  // KILN_CODEGEN_CUDA_THREAD_SYNC_H_
