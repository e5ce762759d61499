/* File: runtime_c/include/kiln/threadpool.h
 *
 * The CPU thread pool and the kernel context (KilnKernelContext, declared
 * opaque in kiln/kernel_abi.h) that executors hand to generated kernels.
 * C11, libc and pthreads only. threadpool.c also implements every kiln_*
 * function of kiln/kernel_abi.h.
 *
 * Typical use by an executor:
 *
 *   KilnThreadPool* pool;            // one per process or per session
 *   if (kiln_thread_pool_create(0, &pool) != 0) ...;
 *   KilnKernelContext* ctx;          // one per session (per concurrent run)
 *   if (kiln_kernel_context_create(pool, &ctx) != 0) ...;
 *   int32_t rc = kernel(args, num_args, ctx);
 *   if (rc != 0) report(kiln_kernel_context_error(ctx));
 *   kiln_kernel_context_clear_error(ctx);   // before the next run
 *   kiln_kernel_context_destroy(ctx);
 *   kiln_thread_pool_destroy(pool);  // after every context using it is idle
 *
 * Threading rules (see runtime_c/README.md):
 *  - A pool of N threads owns N - 1 worker threads; the thread that calls
 *    kiln_parallel_launch is the N-th and runs tasks too. Idle workers spin
 *    briefly, then sleep on a condition variable.
 *  - Any number of threads may launch on one pool at once (one context each,
 *    or a shared one). One launch at a time owns the workers; a launch that
 *    finds the pool busy runs all of its tasks on its own calling thread
 *    instead of waiting (no blocking, no deadlock, same results).
 *  - A launch from inside a task (nested) runs serially on that thread.
 *  - Every function here and in kernel_abi.h is thread-safe except where a
 *    comment says otherwise (create/destroy and clear_error).
 *
 * Return codes are the KILN_KERNEL_* values of kernel_abi.h: 0 on success,
 * KILN_KERNEL_EINVAL for a bad argument, KILN_KERNEL_ENOMEM when memory ran
 * out, KILN_KERNEL_EINTERNAL when the system refused a thread or a lock.
 */
#ifndef KILN_THREADPOOL_H_
#define KILN_THREADPOOL_H_

#include <stdint.h>

#include "kiln/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest thread count a pool accepts (and KILN_NUM_THREADS may ask for). */
#define KILN_THREAD_POOL_MAX_THREADS 1024

/* Opaque. */
typedef struct KilnThreadPool KilnThreadPool;

/* The thread count kiln_thread_pool_create(0, ...) uses: KILN_NUM_THREADS if
 * it is set to an integer in [1, KILN_THREAD_POOL_MAX_THREADS] (surrounding
 * blanks allowed), otherwise the number of CPUs this process may run on
 * (sched_getaffinity; the online CPU count where that is unavailable).
 * Always >= 1. Reads the environment: do not call while another thread runs
 * setenv/putenv. */
int32_t kiln_thread_pool_default_num_threads(void);

/* Creates a pool of `num_threads` threads, counting the launching thread (so
 * num_threads - 1 workers are started; 1 means "no workers, run serially").
 * 0 picks kiln_thread_pool_default_num_threads(). Sets *out to NULL first,
 * then to the pool on success. Returns 0, or KILN_KERNEL_EINVAL (out is NULL,
 * num_threads < 0 or > KILN_THREAD_POOL_MAX_THREADS), KILN_KERNEL_ENOMEM, or
 * KILN_KERNEL_EINTERNAL (a thread, mutex or condition variable could not be
 * created; nothing is leaked). Worker threads block all signals. */
int32_t kiln_thread_pool_create(int32_t num_threads, KilnThreadPool** out);

/* Stops and joins the workers and frees the pool. NULL is fine. The caller
 * owns the pool: no launch may be running on it or start afterwards, and it
 * must not be called from inside a task. Contexts that point at the pool must
 * not be used for launches afterwards (destroy them first). */
void kiln_thread_pool_destroy(KilnThreadPool* pool);

/* The pool's thread count (workers + the launching thread), >= 1; 1 for NULL. */
int32_t kiln_thread_pool_num_threads(const KilnThreadPool* pool);

/* Creates a kernel context that launches on `pool` (not owned; NULL means
 * every launch runs serially on the calling thread). Sets *out to NULL first.
 * Returns 0, KILN_KERNEL_EINVAL (out is NULL) or KILN_KERNEL_ENOMEM. A context
 * records the first error reported through it until cleared; give each
 * concurrently running session its own context so errors do not mix. */
int32_t kiln_kernel_context_create(KilnThreadPool* pool, KilnKernelContext** out);

/* Frees the context (not its pool). NULL is fine. Not while it is in use. */
void kiln_kernel_context_destroy(KilnKernelContext* ctx);

/* The first message recorded with kiln_kernel_error(ctx, ...) since creation
 * or the last clear; "" when none (and for a NULL ctx). The string is owned
 * by the context and stays valid until the next clear or destroy. */
const char* kiln_kernel_context_error(const KilnKernelContext* ctx);

/* Forgets the recorded error so the next one is recorded. NULL is fine. Not
 * thread-safe against kernels running on the same context: call it between
 * runs. */
void kiln_kernel_context_clear_error(KilnKernelContext* ctx);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_THREADPOOL_H_ */
