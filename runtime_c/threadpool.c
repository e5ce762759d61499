/* File: runtime_c/threadpool.c
 *
 * The CPU thread pool, the kernel context and every function of
 * kiln/kernel_abi.h. C11 + pthreads.
 *
 * Design (see also kiln/threadpool.h and runtime_c/README.md):
 *
 *  - A pool of N threads has N - 1 workers; the launching thread is the
 *    N-th. A launch publishes one job (fn, closure, num_tasks) under the pool
 *    mutex, bumps `generation`, and wakes at most num_tasks - 1 sleeping
 *    workers. Tasks are handed out by an atomic counter (`next_task`), so any
 *    num_tasks works; the launcher runs tasks too, then waits (condition
 *    variable) until every worker that joined the job has left it.
 *  - Workers that finish a job spin for a short while watching `generation`
 *    (back-to-back parallel loops are the common case), then sleep on
 *    `work_cv`. A worker joins a job only under the mutex and only while the
 *    job still has `slots`; the launcher closes the slots before it waits, so
 *    no worker can join a finished job.
 *  - One launch owns the workers at a time (`busy`). A concurrent launch from
 *    another thread does not wait: it runs all of its tasks on its own thread.
 *    A launch from inside a task (thread-local `tls_in_task`) also runs
 *    serially. Both give the same results as a parallel run.
 *  - The first negative code returned by a task is the launch's result (an
 *    atomic compare-and-swap from 0); every task still runs.
 */
#define _GNU_SOURCE 1 /* sched_getaffinity/CPU_COUNT; implies POSIX.1-2008 */

#include "kiln/threadpool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Error buffers hold at most KILN_ERROR_CAPACITY - 1 bytes plus the NUL. */
#define KILN_ERROR_CAPACITY 1024

/* How many times an idle worker polls for new work before it sleeps (each
 * poll is one cpu pause, ~20-40 ns: a few hundred microseconds in all). A
 * model's kernels follow each other with gaps of a few microseconds (the
 * executor, a serial kernel); a worker that fell asleep in such a gap costs a
 * futex wake (5-20 us) on the next launch, which MobileNet-sized kernels
 * (~50 us each) cannot afford. ONNX Runtime and OpenMP spin likewise. */
#define KILN_SPIN_ITERATIONS 16384

/* How many times the launcher polls for the workers of its job to finish
 * before it sleeps on done_cv. */
#define KILN_JOIN_SPIN_ITERATIONS 16384

/* ------------------------------------------------------------------------ */
/* Thread-local state                                                        */
/* ------------------------------------------------------------------------ */

/* Non-zero while this thread runs tasks (always on worker threads): a launch
 * made then is nested and runs serially. */
static _Thread_local int tls_in_task = 0;

/* The message of the last kiln_kernel_error(NULL, ...) on this thread. */
static _Thread_local char tls_error[KILN_ERROR_CAPACITY];

/* ------------------------------------------------------------------------ */
/* Types                                                                     */
/* ------------------------------------------------------------------------ */

struct KilnThreadPool {
  int32_t num_threads; /* workers + the launching thread */
  int32_t num_workers;
  pthread_t* workers;

  pthread_mutex_t mu;
  pthread_cond_t work_cv; /* workers wait here for a new generation */
  pthread_cond_t done_cv; /* the launcher waits here for active == 0 */

  atomic_bool busy;                 /* a launch owns the workers */
  _Atomic(uint64_t) generation;     /* bumped under mu per job and at shutdown */

  /* Guarded by mu. */
  bool shutdown;
  int32_t slots;    /* workers that may still join the current job */
  _Atomic(int32_t) active; /* workers inside the current job (changed under mu) */
  int32_t sleepers; /* workers blocked on work_cv */
  KilnParallelLambda fn;
  void* closure;
  int32_t num_tasks;

  /* The current job's counters; reset under mu before a job is published. */
  _Atomic(int64_t) next_task;
  _Atomic(int32_t) first_error;
};

enum { ERROR_NONE = 0, ERROR_WRITING = 1, ERROR_SET = 2 };

struct KilnKernelContext {
  KilnThreadPool* pool; /* not owned; NULL: serial */
  _Atomic(int) error_state;  /* ERROR_*; the first writer wins */
  char error[KILN_ERROR_CAPACITY];
};

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#endif
}

/* Copies `msg` into dst[KILN_ERROR_CAPACITY], truncated to
 * KILN_ERROR_CAPACITY - 1 bytes without splitting a UTF-8 sequence. */
static void copy_message(char* dst, const char* msg) {
  if (msg == NULL) msg = "(no message)";
  size_t n = 0;
  while (n < KILN_ERROR_CAPACITY - 1 && msg[n] != '\0') ++n;
  if (msg[n] != '\0') {
    /* Truncated: if msg[n] continues a multi-byte character, drop its start. */
    size_t back = 0;
    while (back < 3 && n > 0 && (((unsigned char)msg[n]) & 0xC0u) == 0x80u) {
      --n;
      ++back;
    }
  }
  memcpy(dst, msg, n);
  dst[n] = '\0';
}

/* Runs tasks from the shared counter until none are left. */
static void run_tasks(KilnParallelLambda fn, void* closure, int32_t num_tasks,
                      _Atomic(int64_t)* next_task, _Atomic(int32_t)* first_error) {
  for (;;) {
    int64_t task = atomic_fetch_add_explicit(next_task, 1, memory_order_relaxed);
    if (task >= num_tasks) return;
    int32_t rc = fn((int32_t)task, num_tasks, closure);
    if (rc < 0) {
      int32_t expected = 0;
      atomic_compare_exchange_strong(first_error, &expected, rc);
    }
  }
}

/* Runs every task on the calling thread, marked as inside a task. */
static int32_t run_serial(KilnParallelLambda fn, void* closure, int32_t num_tasks) {
  int saved = tls_in_task;
  tls_in_task = 1;
  int32_t first_error = 0;
  for (int32_t task = 0; task < num_tasks; ++task) {
    int32_t rc = fn(task, num_tasks, closure);
    if (rc < 0 && first_error == 0) first_error = rc;
  }
  tls_in_task = saved;
  return first_error;
}

static void* worker_main(void* arg) {
  KilnThreadPool* pool = (KilnThreadPool*)arg;
  tls_in_task = 1; /* a launch from a worker is always nested */
  uint64_t seen = 0; /* generation 0 is "no job yet" */
  for (;;) {
    for (int i = 0; i < KILN_SPIN_ITERATIONS &&
                    atomic_load_explicit(&pool->generation, memory_order_relaxed) == seen;
         ++i) {
      cpu_relax();
    }
    pthread_mutex_lock(&pool->mu);
    while (!pool->shutdown &&
           atomic_load_explicit(&pool->generation, memory_order_relaxed) == seen) {
      ++pool->sleepers;
      pthread_cond_wait(&pool->work_cv, &pool->mu);
      --pool->sleepers;
    }
    if (pool->shutdown) {
      pthread_mutex_unlock(&pool->mu);
      break;
    }
    seen = atomic_load_explicit(&pool->generation, memory_order_relaxed);
    if (pool->slots > 0) {
      --pool->slots;
      atomic_fetch_add_explicit(&pool->active, 1, memory_order_relaxed);
      KilnParallelLambda fn = pool->fn;
      void* closure = pool->closure;
      int32_t num_tasks = pool->num_tasks;
      pthread_mutex_unlock(&pool->mu);

      run_tasks(fn, closure, num_tasks, &pool->next_task, &pool->first_error);

      pthread_mutex_lock(&pool->mu);
      if (atomic_fetch_sub_explicit(&pool->active, 1, memory_order_release) == 1) {
        pthread_cond_signal(&pool->done_cv);
      }
    }
    pthread_mutex_unlock(&pool->mu);
  }
  return NULL;
}

static int32_t parse_env_num_threads(void) {
  const char* s = getenv("KILN_NUM_THREADS");
  if (s == NULL) return 0;
  while (*s == ' ' || *s == '\t') ++s;
  if (*s == '\0') return 0;
  errno = 0;
  char* end = NULL;
  long value = strtol(s, &end, 10);
  if (errno != 0 || end == s) return 0;
  while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') ++end;
  if (*end != '\0' || value < 1 || value > KILN_THREAD_POOL_MAX_THREADS) return 0;
  return (int32_t)value;
}

static int32_t cpu_count(void) {
#ifdef CPU_COUNT
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n >= 1) return n > KILN_THREAD_POOL_MAX_THREADS ? KILN_THREAD_POOL_MAX_THREADS : n;
  }
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) return 1;
  return n > KILN_THREAD_POOL_MAX_THREADS ? KILN_THREAD_POOL_MAX_THREADS : (int32_t)n;
}

/* ------------------------------------------------------------------------ */
/* Thread pool                                                               */
/* ------------------------------------------------------------------------ */

int32_t kiln_thread_pool_default_num_threads(void) {
  int32_t n = parse_env_num_threads();
  return n > 0 ? n : cpu_count();
}

/* Stops and joins the first `started` workers, then frees everything. */
static void pool_teardown(KilnThreadPool* pool, int32_t started) {
  pthread_mutex_lock(&pool->mu);
  pool->shutdown = true;
  atomic_fetch_add_explicit(&pool->generation, 1, memory_order_relaxed);
  pthread_cond_broadcast(&pool->work_cv);
  pthread_mutex_unlock(&pool->mu);
  for (int32_t i = 0; i < started; ++i) pthread_join(pool->workers[i], NULL);
  pthread_cond_destroy(&pool->done_cv);
  pthread_cond_destroy(&pool->work_cv);
  pthread_mutex_destroy(&pool->mu);
  free(pool->workers);
  free(pool);
}

int32_t kiln_thread_pool_create(int32_t num_threads, KilnThreadPool** out) {
  if (out == NULL) return KILN_KERNEL_EINVAL;
  *out = NULL;
  if (num_threads < 0 || num_threads > KILN_THREAD_POOL_MAX_THREADS) return KILN_KERNEL_EINVAL;
  if (num_threads == 0) num_threads = kiln_thread_pool_default_num_threads();

  KilnThreadPool* pool = (KilnThreadPool*)calloc(1, sizeof(*pool));
  if (pool == NULL) return KILN_KERNEL_ENOMEM;
  pool->num_threads = num_threads;
  pool->num_workers = num_threads - 1;
  atomic_init(&pool->busy, false);
  atomic_init(&pool->generation, 0);
  atomic_init(&pool->next_task, 0);
  atomic_init(&pool->first_error, 0);

  if (pool->num_workers > 0) {
    pool->workers = (pthread_t*)calloc((size_t)pool->num_workers, sizeof(pthread_t));
    if (pool->workers == NULL) {
      free(pool);
      return KILN_KERNEL_ENOMEM;
    }
  }
  if (pthread_mutex_init(&pool->mu, NULL) != 0) {
    free(pool->workers);
    free(pool);
    return KILN_KERNEL_EINTERNAL;
  }
  if (pthread_cond_init(&pool->work_cv, NULL) != 0) {
    pthread_mutex_destroy(&pool->mu);
    free(pool->workers);
    free(pool);
    return KILN_KERNEL_EINTERNAL;
  }
  if (pthread_cond_init(&pool->done_cv, NULL) != 0) {
    pthread_cond_destroy(&pool->work_cv);
    pthread_mutex_destroy(&pool->mu);
    free(pool->workers);
    free(pool);
    return KILN_KERNEL_EINTERNAL;
  }

  /* Workers inherit a mask that blocks every signal, so signals keep going
   * to the application's own threads. */
  sigset_t all, saved;
  sigfillset(&all);
  int masked = pthread_sigmask(SIG_SETMASK, &all, &saved) == 0;
  int32_t started = 0;
  int create_rc = 0;
  for (; started < pool->num_workers; ++started) {
    create_rc = pthread_create(&pool->workers[started], NULL, worker_main, pool);
    if (create_rc != 0) break;
  }
  if (masked) pthread_sigmask(SIG_SETMASK, &saved, NULL);

  if (create_rc != 0) {
    pool_teardown(pool, started);
    return create_rc == EAGAIN ? KILN_KERNEL_ENOMEM : KILN_KERNEL_EINTERNAL;
  }
  *out = pool;
  return KILN_KERNEL_OK;
}

void kiln_thread_pool_destroy(KilnThreadPool* pool) {
  if (pool == NULL) return;
  pool_teardown(pool, pool->num_workers);
}

int32_t kiln_thread_pool_num_threads(const KilnThreadPool* pool) {
  return pool == NULL ? 1 : pool->num_threads;
}

/* ------------------------------------------------------------------------ */
/* Kernel context                                                            */
/* ------------------------------------------------------------------------ */

int32_t kiln_kernel_context_create(KilnThreadPool* pool, KilnKernelContext** out) {
  if (out == NULL) return KILN_KERNEL_EINVAL;
  *out = NULL;
  KilnKernelContext* ctx = (KilnKernelContext*)malloc(sizeof(*ctx));
  if (ctx == NULL) return KILN_KERNEL_ENOMEM;
  ctx->pool = pool;
  atomic_init(&ctx->error_state, ERROR_NONE);
  ctx->error[0] = '\0';
  *out = ctx;
  return KILN_KERNEL_OK;
}

void kiln_kernel_context_destroy(KilnKernelContext* ctx) { free(ctx); }

const char* kiln_kernel_context_error(const KilnKernelContext* ctx) {
  if (ctx == NULL) return "";
  int state = atomic_load_explicit(&ctx->error_state, memory_order_acquire);
  return state == ERROR_SET ? ctx->error : "";
}

void kiln_kernel_context_clear_error(KilnKernelContext* ctx) {
  if (ctx == NULL) return;
  ctx->error[0] = '\0';
  atomic_store_explicit(&ctx->error_state, ERROR_NONE, memory_order_release);
}

/* ------------------------------------------------------------------------ */
/* kernel_abi.h                                                              */
/* ------------------------------------------------------------------------ */

int32_t kiln_kernel_error(KilnKernelContext* ctx, int32_t code, const char* message) {
  if (ctx == NULL) {
    copy_message(tls_error, message);
    return code;
  }
  int expected = ERROR_NONE;
  if (atomic_compare_exchange_strong_explicit(&ctx->error_state, &expected, ERROR_WRITING,
                                              memory_order_acquire, memory_order_relaxed)) {
    copy_message(ctx->error, message);
    atomic_store_explicit(&ctx->error_state, ERROR_SET, memory_order_release);
  }
  return code;
}

const char* kiln_kernel_last_error(void) { return tls_error; }

int32_t kiln_parallel_num_threads(KilnKernelContext* ctx) {
  return ctx == NULL ? 1 : kiln_thread_pool_num_threads(ctx->pool);
}

int32_t kiln_parallel_launch(KilnKernelContext* ctx, KilnParallelLambda fn, void* closure,
                             int32_t num_tasks) {
  if (fn == NULL) {
    return kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, "kiln_parallel_launch: fn is NULL");
  }
  if (num_tasks <= 0) num_tasks = kiln_parallel_num_threads(ctx);
  KilnThreadPool* pool = ctx == NULL ? NULL : ctx->pool;
  if (pool == NULL || pool->num_workers == 0 || num_tasks == 1 || tls_in_task) {
    return run_serial(fn, closure, num_tasks);
  }
  bool expected = false;
  if (!atomic_compare_exchange_strong(&pool->busy, &expected, true)) {
    /* Another thread's launch owns the workers: do the work here. */
    return run_serial(fn, closure, num_tasks);
  }

  /* Publish the job. */
  pthread_mutex_lock(&pool->mu);
  pool->fn = fn;
  pool->closure = closure;
  pool->num_tasks = num_tasks;
  atomic_store_explicit(&pool->next_task, 0, memory_order_relaxed);
  atomic_store_explicit(&pool->first_error, 0, memory_order_relaxed);
  pool->slots = num_tasks - 1 < pool->num_workers ? num_tasks - 1 : pool->num_workers;
  atomic_store_explicit(&pool->active, 0, memory_order_relaxed);
  atomic_fetch_add_explicit(&pool->generation, 1, memory_order_relaxed);
  if (pool->sleepers > 0) {
    if (pool->slots >= pool->sleepers) {
      pthread_cond_broadcast(&pool->work_cv);
    } else {
      for (int32_t i = 0; i < pool->slots; ++i) pthread_cond_signal(&pool->work_cv);
    }
  }
  pthread_mutex_unlock(&pool->mu);

  /* Take part. */
  tls_in_task = 1;
  run_tasks(fn, closure, num_tasks, &pool->next_task, &pool->first_error);
  tls_in_task = 0;

  /* Every task is claimed; close the job and wait for the workers in it. */
  pthread_mutex_lock(&pool->mu);
  pool->slots = 0; /* no worker joins from now on */
  pthread_mutex_unlock(&pool->mu);
  /* The workers in the job are finishing their last tasks: poll before
   * sleeping (a condition-variable round trip costs more than most tasks). */
  for (int i = 0; i < KILN_JOIN_SPIN_ITERATIONS &&
                  atomic_load_explicit(&pool->active, memory_order_acquire) > 0;
       ++i) {
    cpu_relax();
  }
  pthread_mutex_lock(&pool->mu);
  while (atomic_load_explicit(&pool->active, memory_order_acquire) > 0) {
    pthread_cond_wait(&pool->done_cv, &pool->mu);
  }
  int32_t rc = atomic_load_explicit(&pool->first_error, memory_order_relaxed);
  pool->fn = NULL;
  pool->closure = NULL;
  pthread_mutex_unlock(&pool->mu);

  atomic_store(&pool->busy, false);
  return rc;
}

void* kiln_workspace_alloc(KilnKernelContext* ctx, uint64_t nbytes, uint32_t alignment) {
  (void)ctx;
  if (alignment == 0 || (alignment & (alignment - 1u)) != 0) return NULL;
  /* posix_memalign needs a multiple of sizeof(void*); the ABI promises 16. */
  size_t align = alignment < 16u ? 16u : (size_t)alignment;
  if (nbytes == 0) nbytes = align; /* a valid, unique pointer */
  if (nbytes > (uint64_t)PTRDIFF_MAX - align) return NULL;
  size_t size = ((size_t)nbytes + align - 1) & ~(align - 1); /* whole alignment units */
  void* ptr = NULL;
  if (posix_memalign(&ptr, align, size) != 0) return NULL;
  return ptr;
}

void kiln_workspace_free(KilnKernelContext* ctx, void* ptr) {
  (void)ctx;
  free(ptr);
}
