/* File: runtime_c/include/kiln/kernel_abi.h
 *
 * The one calling convention shared by every kernel kiln generates (CPU code
 * from codegen_llvm) and the runtime that calls them. C11; included by the
 * compiler too, so both sides agree on one definition.
 *
 * A kernel:
 *
 *   int32_t kernel(DLTensor* const* args, int32_t num_args, KilnKernelContext* ctx);
 *
 *   args      the kernel's tensors in the PrimFunc's parameter order: inputs
 *             first, then outputs. Data must be aligned to at least the element
 *             size; strides must be NULL (compact row-major).
 *   ctx       the runtime context: thread pool for parallel loops, workspace
 *             allocation, error reporting. May be NULL: loops then run on the
 *             calling thread, workspaces come from malloc, and an error message
 *             goes to a thread-local buffer (kiln_kernel_last_error()).
 *   returns   KILN_KERNEL_OK (0), or a negative KILN_KERNEL_E* code after
 *             reporting a message through kiln_kernel_error().
 *
 * A kernel checks what it relies on (argument count, ndim, dtype, static dims;
 * symbolic dims are read from the shapes) and reports a mismatch as
 * KILN_KERNEL_EINVAL naming the kernel and the argument; it never aborts.
 *
 * Generated code calls only the kiln_* functions declared below.
 */
#ifndef KILN_KERNEL_ABI_H_
#define KILN_KERNEL_ABI_H_

#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_KERNEL_ABI_VERSION 1

enum {
  KILN_KERNEL_OK = 0,
  KILN_KERNEL_EINVAL = -1,   /* an argument does not match the kernel's signature */
  KILN_KERNEL_ENOMEM = -2,   /* a workspace allocation failed */
  KILN_KERNEL_EINTERNAL = -3 /* anything else (a failed parallel task, ...) */
};

/* Opaque: owned by the runtime (runtime_c/threadpool.h creates it). */
typedef struct KilnKernelContext KilnKernelContext;

/* The signature of every generated kernel. */
typedef int32_t (*KilnKernelFn)(DLTensor* const* args, int32_t num_args,
                                KilnKernelContext* ctx);

/* One task of a parallel loop: task_id in [0, num_tasks). Returns 0 or a
 * negative code (after kiln_kernel_error). */
typedef int32_t (*KilnParallelLambda)(int32_t task_id, int32_t num_tasks, void* closure);

/* Runs `fn(task_id, num_tasks, closure)` for every task_id in [0, num_tasks)
 * on the context's thread pool (the calling thread takes part) and returns
 * when all are done. num_tasks <= 0 means "one per pool thread". Returns 0, or
 * the first negative code a task returned. A launch from inside a task runs
 * its tasks serially on the calling thread (no nested parallelism). With a
 * NULL ctx every task runs on the calling thread. If another thread's launch
 * owns the pool at that moment, this launch runs all its tasks on the calling
 * thread instead of waiting (kiln/threadpool.h). A NULL fn gives
 * KILN_KERNEL_EINVAL. Task side effects are visible when it returns. */
int32_t kiln_parallel_launch(KilnKernelContext* ctx, KilnParallelLambda fn, void* closure,
                             int32_t num_tasks);

/* The number of tasks kiln_parallel_launch(ctx, ..., 0) runs (>= 1): the
 * pool's thread count, 1 for a NULL ctx or a context without a pool. */
int32_t kiln_parallel_num_threads(KilnKernelContext* ctx);

/* Scratch memory for a kernel's temporaries: `nbytes` aligned to `alignment`
 * (a power of two, at least 16; 64 is typical). NULL on failure. Free with
 * kiln_workspace_free on the same ctx (NULL is fine). nbytes == 0 gives a
 * valid, unique pointer; an alignment that is not a power of two gives NULL;
 * a smaller power of two is raised to 16. ctx may be NULL. Thread-safe. */
void* kiln_workspace_alloc(KilnKernelContext* ctx, uint64_t nbytes, uint32_t alignment);
void kiln_workspace_free(KilnKernelContext* ctx, void* ptr);

/* Records `message` (copied, truncated to 1023 bytes) as the context's error
 * (with ctx NULL: the calling thread's) and returns `code`, so a kernel can
 * write `return kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, "...")`. The first
 * error of a run wins. Thread-safe. */
int32_t kiln_kernel_error(KilnKernelContext* ctx, int32_t code, const char* message);

/* The last message recorded with a NULL ctx on this thread ("" if none). */
const char* kiln_kernel_last_error(void);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_KERNEL_ABI_H_ */
