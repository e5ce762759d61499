/* File: runtime_c/threadpool_test.c
 *
 * Tests for kiln/threadpool.h and the kernel_abi.h functions it implements.
 * Plain C11: each test_* function returns 0 on success or 1 after CHECK
 * printed the failing file:line; main returns the number of failed tests.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, nanosleep */

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kiln/kernel_abi.h"
#include "kiln/threadpool.h"

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                         \
    }                                                                   \
  } while (0)

#define CHECK_OK(expr) CHECK((expr) == KILN_KERNEL_OK)

static void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

/* Waits (polling, at most ~10 s) until *flag becomes non-zero. */
static int wait_flag(atomic_int* flag) {
  for (int i = 0; i < 10000; ++i) {
    if (atomic_load(flag)) return 1;
    sleep_ms(1);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Pool creation                                                             */
/* ------------------------------------------------------------------------ */

static int test_create_sizes(void) {
  const int32_t sizes[] = {1, 2, 4};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
    KilnThreadPool* pool = (KilnThreadPool*)1; /* must be reset to NULL/pool */
    CHECK_OK(kiln_thread_pool_create(sizes[i], &pool));
    CHECK(pool != NULL);
    CHECK(kiln_thread_pool_num_threads(pool) == sizes[i]);
    KilnKernelContext* ctx = NULL;
    CHECK_OK(kiln_kernel_context_create(pool, &ctx));
    CHECK(kiln_parallel_num_threads(ctx) == sizes[i]);
    kiln_kernel_context_destroy(ctx);
    kiln_thread_pool_destroy(pool);
  }
  /* 0: environment or CPU count. */
  unsetenv("KILN_NUM_THREADS");
  KilnThreadPool* pool = NULL;
  CHECK_OK(kiln_thread_pool_create(0, &pool));
  CHECK(pool != NULL);
  CHECK(kiln_thread_pool_num_threads(pool) >= 1);
  CHECK(kiln_thread_pool_num_threads(pool) == kiln_thread_pool_default_num_threads());
  kiln_thread_pool_destroy(pool);
  return 0;
}

static int test_create_env(void) {
  KilnThreadPool* pool = NULL;
  unsetenv("KILN_NUM_THREADS");
  const int32_t cpus = kiln_thread_pool_default_num_threads();
  CHECK(cpus >= 1);

  CHECK(setenv("KILN_NUM_THREADS", "3", 1) == 0);
  CHECK(kiln_thread_pool_default_num_threads() == 3);
  CHECK_OK(kiln_thread_pool_create(0, &pool));
  CHECK(kiln_thread_pool_num_threads(pool) == 3);
  kiln_thread_pool_destroy(pool);

  CHECK(setenv("KILN_NUM_THREADS", " 2 ", 1) == 0);
  CHECK(kiln_thread_pool_default_num_threads() == 2);

  /* An explicit count ignores the environment. */
  CHECK_OK(kiln_thread_pool_create(1, &pool));
  CHECK(kiln_thread_pool_num_threads(pool) == 1);
  kiln_thread_pool_destroy(pool);

  /* Invalid values fall back to the CPU count. */
  const char* bad[] = {"", "abc", "0", "-2", "3x", "99999999999999999999", "1025"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    CHECK(setenv("KILN_NUM_THREADS", bad[i], 1) == 0);
    if (kiln_thread_pool_default_num_threads() != cpus) {
      fprintf(stderr, "KILN_NUM_THREADS=\"%s\" was not rejected\n", bad[i]);
      return 1;
    }
  }
  CHECK(unsetenv("KILN_NUM_THREADS") == 0);
  return 0;
}

static int test_create_invalid(void) {
  KilnThreadPool* pool = (KilnThreadPool*)1;
  CHECK(kiln_thread_pool_create(-1, &pool) == KILN_KERNEL_EINVAL);
  CHECK(pool == NULL);
  pool = (KilnThreadPool*)1;
  CHECK(kiln_thread_pool_create(-1000, &pool) == KILN_KERNEL_EINVAL);
  CHECK(pool == NULL);
  pool = (KilnThreadPool*)1;
  CHECK(kiln_thread_pool_create(KILN_THREAD_POOL_MAX_THREADS + 1, &pool) == KILN_KERNEL_EINVAL);
  CHECK(pool == NULL);
  CHECK(kiln_thread_pool_create(2, NULL) == KILN_KERNEL_EINVAL);
  CHECK(kiln_kernel_context_create(NULL, NULL) == KILN_KERNEL_EINVAL);

  kiln_thread_pool_destroy(NULL);
  kiln_kernel_context_destroy(NULL);
  kiln_kernel_context_clear_error(NULL);
  CHECK(strcmp(kiln_kernel_context_error(NULL), "") == 0);
  CHECK(kiln_thread_pool_num_threads(NULL) == 1);
  CHECK(kiln_parallel_num_threads(NULL) == 1);
  return 0;
}

static int test_create_destroy_churn(void) {
  /* Shutdown races: destroy right after create, and right after a launch. */
  for (int i = 0; i < 50; ++i) {
    KilnThreadPool* pool = NULL;
    CHECK_OK(kiln_thread_pool_create(1 + i % 4, &pool));
    kiln_thread_pool_destroy(pool);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Parallel sum                                                              */
/* ------------------------------------------------------------------------ */

typedef struct {
  const int32_t* data;
  int64_t n;
  int64_t* partial; /* one per task */
} SumJob;

static int32_t sum_task(int32_t task_id, int32_t num_tasks, void* closure) {
  SumJob* job = (SumJob*)closure;
  int64_t begin = job->n * task_id / num_tasks;
  int64_t end = job->n * (task_id + 1) / num_tasks;
  int64_t s = 0;
  for (int64_t i = begin; i < end; ++i) s += job->data[i];
  job->partial[task_id] = s;
  return 0;
}

/* Sums data[0, n) with `num_tasks` tasks on ctx; *out is the total. */
static int parallel_sum(KilnKernelContext* ctx, const int32_t* data, int64_t n,
                        int32_t num_tasks, int64_t* out) {
  int32_t effective = num_tasks <= 0 ? kiln_parallel_num_threads(ctx) : num_tasks;
  int64_t* partial = (int64_t*)calloc((size_t)effective, sizeof(int64_t));
  CHECK(partial != NULL);
  SumJob job = {data, n, partial};
  int32_t rc = kiln_parallel_launch(ctx, sum_task, &job, num_tasks);
  int64_t total = 0;
  for (int32_t t = 0; t < effective; ++t) total += partial[t];
  free(partial);
  CHECK(rc == 0);
  *out = total;
  return 0;
}

enum { kSumN = 1 << 20 };

static int32_t* make_data(int64_t n, int64_t* serial_sum) {
  int32_t* data = (int32_t*)malloc((size_t)n * sizeof(int32_t));
  if (data == NULL) return NULL;
  int64_t s = 0;
  for (int64_t i = 0; i < n; ++i) {
    data[i] = (int32_t)((i * 7919) % 1000) - 500;
    s += data[i];
  }
  *serial_sum = s;
  return data;
}

static int test_parallel_sum(void) {
  int64_t expected = 0;
  int32_t* data = make_data(kSumN, &expected);
  CHECK(data != NULL);
  const int32_t sizes[] = {1, 2, 4};
  const int32_t tasks[] = {0, 1, 2, 3, 4, 7, 64, 1000};
  int failed = 0;
  for (size_t i = 0; i < 3 && !failed; ++i) {
    KilnThreadPool* pool = NULL;
    KilnKernelContext* ctx = NULL;
    if (kiln_thread_pool_create(sizes[i], &pool) != 0 ||
        kiln_kernel_context_create(pool, &ctx) != 0) {
      failed = 1;
    }
    for (size_t t = 0; t < sizeof(tasks) / sizeof(tasks[0]) && !failed; ++t) {
      for (int rep = 0; rep < 3 && !failed; ++rep) {
        int64_t got = 0;
        if (parallel_sum(ctx, data, kSumN, tasks[t], &got) != 0 || got != expected) {
          fprintf(stderr, "threads=%d tasks=%d: sum %lld, expected %lld\n", (int)sizes[i],
                  (int)tasks[t], (long long)got, (long long)expected);
          failed = 1;
        }
      }
    }
    CHECK(strcmp(kiln_kernel_context_error(ctx), "") == 0);
    kiln_kernel_context_destroy(ctx);
    kiln_thread_pool_destroy(pool);
  }
  free(data);
  CHECK(!failed);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Task distribution                                                         */
/* ------------------------------------------------------------------------ */

typedef struct {
  atomic_int hits[64];
  atomic_int bad_num_tasks;
  int32_t expected_num_tasks;
} SlotJob;

static int32_t slot_task(int32_t task_id, int32_t num_tasks, void* closure) {
  SlotJob* job = (SlotJob*)closure;
  if (num_tasks != job->expected_num_tasks || task_id < 0 || task_id >= 64) {
    atomic_fetch_add(&job->bad_num_tasks, 1);
    return 0;
  }
  atomic_fetch_add(&job->hits[task_id], 1);
  return 0;
}

static int run_slots(KilnKernelContext* ctx, int32_t num_tasks, int32_t expected_tasks) {
  SlotJob job;
  for (int i = 0; i < 64; ++i) atomic_init(&job.hits[i], 0);
  atomic_init(&job.bad_num_tasks, 0);
  job.expected_num_tasks = expected_tasks;
  CHECK(kiln_parallel_launch(ctx, slot_task, &job, num_tasks) == 0);
  CHECK(atomic_load(&job.bad_num_tasks) == 0);
  for (int i = 0; i < 64; ++i) {
    if (atomic_load(&job.hits[i]) != (i < expected_tasks ? 1 : 0)) {
      fprintf(stderr, "slot %d hit %d times (num_tasks %d)\n", i, atomic_load(&job.hits[i]),
              (int)num_tasks);
      return 1;
    }
  }
  return 0;
}

static int test_more_tasks_than_threads(void) {
  KilnThreadPool* pool = NULL;
  KilnKernelContext* ctx = NULL;
  CHECK_OK(kiln_thread_pool_create(2, &pool));
  CHECK_OK(kiln_kernel_context_create(pool, &ctx));
  int failed = 0;
  for (int rep = 0; rep < 20 && !failed; ++rep) failed |= run_slots(ctx, 37, 37);
  failed |= run_slots(ctx, 64, 64);
  failed |= run_slots(ctx, 1, 1);
  /* num_tasks <= 0: one task per pool thread. */
  failed |= run_slots(ctx, 0, 2);
  failed |= run_slots(ctx, -5, 2);
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
  CHECK(!failed);

  /* 4 threads, 0 tasks -> 4. */
  CHECK_OK(kiln_thread_pool_create(4, &pool));
  CHECK_OK(kiln_kernel_context_create(pool, &ctx));
  failed = run_slots(ctx, 0, 4);
  failed |= run_slots(ctx, 3, 3); /* fewer tasks than threads */
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
  CHECK(!failed);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
  KilnKernelContext* ctx;
  atomic_int ran;
  int32_t failing_task;
} ErrorJob;

static int32_t error_task(int32_t task_id, int32_t num_tasks, void* closure) {
  (void)num_tasks;
  ErrorJob* job = (ErrorJob*)closure;
  if (task_id == job->failing_task) {
    return kiln_kernel_error(job->ctx, KILN_KERNEL_EINVAL, "task 5 failed");
  }
  atomic_fetch_add(&job->ran, 1);
  return 0;
}

typedef struct {
  KilnKernelContext* ctx;
} TwoErrorsJob;

static int32_t two_errors_task(int32_t task_id, int32_t num_tasks, void* closure) {
  (void)num_tasks;
  TwoErrorsJob* job = (TwoErrorsJob*)closure;
  if (task_id == 1) return kiln_kernel_error(job->ctx, KILN_KERNEL_EINVAL, "first kind");
  if (task_id == 2) return kiln_kernel_error(job->ctx, KILN_KERNEL_EINTERNAL, "second kind");
  return 0;
}

static int test_error_propagation(void) {
  const int32_t sizes[] = {1, 2, 4};
  for (size_t i = 0; i < 3; ++i) {
    KilnThreadPool* pool = NULL;
    KilnKernelContext* ctx = NULL;
    CHECK_OK(kiln_thread_pool_create(sizes[i], &pool));
    CHECK_OK(kiln_kernel_context_create(pool, &ctx));
    CHECK(strcmp(kiln_kernel_context_error(ctx), "") == 0);

    ErrorJob job;
    job.ctx = ctx;
    atomic_init(&job.ran, 0);
    job.failing_task = 5;
    int32_t rc = kiln_parallel_launch(ctx, error_task, &job, 16);
    int ran = atomic_load(&job.ran);
    const char* msg = kiln_kernel_context_error(ctx);
    int bad = rc != -1 || ran != 15 || strcmp(msg, "task 5 failed") != 0;
    if (bad) {
      fprintf(stderr, "threads=%d: rc=%d ran=%d msg=\"%s\"\n", (int)sizes[i], (int)rc, ran, msg);
    }

    /* The pool still works after a failed launch; the error stays until cleared. */
    int64_t sum_expected = 0, sum_got = 0;
    int32_t* data = make_data(1000, &sum_expected);
    if (data == NULL || parallel_sum(ctx, data, 1000, 0, &sum_got) != 0 ||
        sum_got != sum_expected) {
      bad = 1;
    }
    free(data);
    if (strcmp(kiln_kernel_context_error(ctx), "task 5 failed") != 0) bad = 1;

    /* Two failing tasks: the code and the message are one of the two. */
    kiln_kernel_context_clear_error(ctx);
    if (strcmp(kiln_kernel_context_error(ctx), "") != 0) bad = 1;
    TwoErrorsJob two = {ctx};
    rc = kiln_parallel_launch(ctx, two_errors_task, &two, 8);
    msg = kiln_kernel_context_error(ctx);
    if (rc != KILN_KERNEL_EINVAL && rc != KILN_KERNEL_EINTERNAL) bad = 1;
    if (strcmp(msg, "first kind") != 0 && strcmp(msg, "second kind") != 0) bad = 1;

    kiln_kernel_context_destroy(ctx);
    kiln_thread_pool_destroy(pool);
    CHECK(!bad);
  }
  return 0;
}

static int test_error_first_wins_and_truncation(void) {
  KilnKernelContext* ctx = NULL;
  CHECK_OK(kiln_kernel_context_create(NULL, &ctx));
  CHECK(kiln_kernel_error(ctx, KILN_KERNEL_ENOMEM, "first") == KILN_KERNEL_ENOMEM);
  CHECK(kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, "second") == KILN_KERNEL_EINVAL);
  CHECK(strcmp(kiln_kernel_context_error(ctx), "first") == 0);
  kiln_kernel_context_clear_error(ctx);
  CHECK(strcmp(kiln_kernel_context_error(ctx), "") == 0);
  CHECK(kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, "second") == KILN_KERNEL_EINVAL);
  CHECK(strcmp(kiln_kernel_context_error(ctx), "second") == 0);
  kiln_kernel_context_clear_error(ctx);
  CHECK(kiln_kernel_error(ctx, KILN_KERNEL_EINTERNAL, NULL) == KILN_KERNEL_EINTERNAL);
  CHECK(strlen(kiln_kernel_context_error(ctx)) > 0);

  /* 5000 characters: truncated to 1023 bytes, NUL-terminated. */
  char* big = (char*)malloc(5001);
  CHECK(big != NULL);
  for (int i = 0; i < 5000; ++i) big[i] = (char)('a' + i % 26);
  big[5000] = '\0';
  kiln_kernel_context_clear_error(ctx);
  kiln_kernel_error(ctx, KILN_KERNEL_EINVAL, big);
  const char* msg = kiln_kernel_context_error(ctx);
  int ok = strlen(msg) == 1023 && memcmp(msg, big, 1023) == 0;
  kiln_kernel_error(NULL, KILN_KERNEL_EINVAL, big);
  msg = kiln_kernel_last_error();
  ok = ok && strlen(msg) == 1023 && memcmp(msg, big, 1023) == 0;

  /* A multi-byte UTF-8 character straddling the limit is dropped whole. */
  memset(big, 'x', 5000);
  big[1022] = (char)0xC3; /* "é" = C3 A9 at bytes 1022..1023 */
  big[1023] = (char)0xA9;
  kiln_kernel_error(NULL, KILN_KERNEL_EINVAL, big);
  ok = ok && strlen(kiln_kernel_last_error()) == 1022;
  free(big);
  kiln_kernel_context_destroy(ctx);
  CHECK(ok);
  return 0;
}

static void* other_thread_last_error(void* arg) {
  *(int*)arg = strcmp(kiln_kernel_last_error(), "") == 0;
  return NULL;
}

static int test_null_ctx_error(void) {
  CHECK(kiln_kernel_error(NULL, KILN_KERNEL_ENOMEM, "no memory") == KILN_KERNEL_ENOMEM);
  CHECK(strcmp(kiln_kernel_last_error(), "no memory") == 0);
  /* Thread-local: last one wins on this thread, another thread sees "". */
  CHECK(kiln_kernel_error(NULL, KILN_KERNEL_EINVAL, "bad arg") == KILN_KERNEL_EINVAL);
  CHECK(strcmp(kiln_kernel_last_error(), "bad arg") == 0);
  int other_empty = 0;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, other_thread_last_error, &other_empty) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(other_empty);
  CHECK(strcmp(kiln_kernel_last_error(), "bad arg") == 0);
  return 0;
}

static int test_null_fn(void) {
  KilnThreadPool* pool = NULL;
  KilnKernelContext* ctx = NULL;
  CHECK_OK(kiln_thread_pool_create(2, &pool));
  CHECK_OK(kiln_kernel_context_create(pool, &ctx));
  CHECK(kiln_parallel_launch(ctx, NULL, NULL, 4) == KILN_KERNEL_EINVAL);
  int ok = strstr(kiln_kernel_context_error(ctx), "fn is NULL") != NULL;
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
  CHECK(ok);
  CHECK(kiln_parallel_launch(NULL, NULL, NULL, 4) == KILN_KERNEL_EINVAL);
  CHECK(strstr(kiln_kernel_last_error(), "fn is NULL") != NULL);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Serial paths: NULL ctx, NULL pool, nested launches                        */
/* ------------------------------------------------------------------------ */

typedef struct {
  pthread_t caller;
  atomic_int on_other_thread;
  atomic_int count;
} ThreadJob;

static int32_t thread_task(int32_t task_id, int32_t num_tasks, void* closure) {
  (void)task_id;
  (void)num_tasks;
  ThreadJob* job = (ThreadJob*)closure;
  if (!pthread_equal(pthread_self(), job->caller)) atomic_fetch_add(&job->on_other_thread, 1);
  atomic_fetch_add(&job->count, 1);
  return 0;
}

static int run_on_caller_only(KilnKernelContext* ctx, int32_t num_tasks, int32_t expected) {
  ThreadJob job;
  job.caller = pthread_self();
  atomic_init(&job.on_other_thread, 0);
  atomic_init(&job.count, 0);
  CHECK(kiln_parallel_launch(ctx, thread_task, &job, num_tasks) == 0);
  CHECK(atomic_load(&job.count) == expected);
  CHECK(atomic_load(&job.on_other_thread) == 0);
  return 0;
}

static int test_serial_paths(void) {
  /* NULL ctx: every task on the calling thread; 0 tasks means 1. */
  CHECK(run_on_caller_only(NULL, 10, 10) == 0);
  CHECK(run_on_caller_only(NULL, 0, 1) == 0);
  int64_t expected = 0, got = 0;
  int32_t* data = make_data(10000, &expected);
  CHECK(data != NULL);
  int rc = parallel_sum(NULL, data, 10000, 9, &got);
  free(data);
  CHECK(rc == 0 && got == expected);

  /* A context without a pool. */
  KilnKernelContext* ctx = NULL;
  CHECK_OK(kiln_kernel_context_create(NULL, &ctx));
  CHECK(kiln_parallel_num_threads(ctx) == 1);
  rc = run_on_caller_only(ctx, 10, 10);
  kiln_kernel_context_destroy(ctx);
  CHECK(rc == 0);

  /* A one-thread pool: no workers. */
  KilnThreadPool* pool = NULL;
  CHECK_OK(kiln_thread_pool_create(1, &pool));
  CHECK_OK(kiln_kernel_context_create(pool, &ctx));
  rc = run_on_caller_only(ctx, 10, 10);
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
  CHECK(rc == 0);
  return 0;
}

typedef struct {
  KilnKernelContext* ctx;
  atomic_int inner_total;
  atomic_int inner_on_other_thread;
  atomic_int inner_failures;
} NestedJob;

typedef struct {
  NestedJob* outer;
  pthread_t thread;
  int32_t values[8];
} InnerJob;

static int32_t inner_task(int32_t task_id, int32_t num_tasks, void* closure) {
  InnerJob* job = (InnerJob*)closure;
  if (num_tasks != 8) return -1;
  if (!pthread_equal(pthread_self(), job->thread)) {
    atomic_fetch_add(&job->outer->inner_on_other_thread, 1);
  }
  job->values[task_id] = task_id + 1;
  return 0;
}

static int32_t outer_task(int32_t task_id, int32_t num_tasks, void* closure) {
  (void)task_id;
  (void)num_tasks;
  NestedJob* outer = (NestedJob*)closure;
  InnerJob inner;
  inner.outer = outer;
  inner.thread = pthread_self();
  memset(inner.values, 0, sizeof(inner.values));
  if (kiln_parallel_launch(outer->ctx, inner_task, &inner, 8) != 0) {
    atomic_fetch_add(&outer->inner_failures, 1);
  }
  int sum = 0;
  for (int i = 0; i < 8; ++i) sum += inner.values[i];
  atomic_fetch_add(&outer->inner_total, sum);
  return 0;
}

static int test_nested_launch(void) {
  const int32_t sizes[] = {1, 2, 4};
  for (size_t i = 0; i < 3; ++i) {
    KilnThreadPool* pool = NULL;
    KilnKernelContext* ctx = NULL;
    CHECK_OK(kiln_thread_pool_create(sizes[i], &pool));
    CHECK_OK(kiln_kernel_context_create(pool, &ctx));
    NestedJob job;
    job.ctx = ctx;
    atomic_init(&job.inner_total, 0);
    atomic_init(&job.inner_on_other_thread, 0);
    atomic_init(&job.inner_failures, 0);
    int32_t rc = kiln_parallel_launch(ctx, outer_task, &job, 6);
    int ok = rc == 0 && atomic_load(&job.inner_total) == 6 * 36 &&
             atomic_load(&job.inner_on_other_thread) == 0 &&
             atomic_load(&job.inner_failures) == 0;
    kiln_kernel_context_destroy(ctx);
    kiln_thread_pool_destroy(pool);
    CHECK(ok);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Concurrent launches on one pool                                           */
/* ------------------------------------------------------------------------ */

enum { kLaunchers = 4, kLaunchesEach = 200, kLauncherN = 20000 };

typedef struct {
  KilnThreadPool* pool;
  int index;
  int failed;
} LauncherArg;

static void* launcher_main(void* arg) {
  LauncherArg* a = (LauncherArg*)arg;
  KilnKernelContext* ctx = NULL;
  if (kiln_kernel_context_create(a->pool, &ctx) != 0) {
    a->failed = 1;
    return NULL;
  }
  int64_t expected = 0;
  int32_t* data = make_data(kLauncherN + a->index, &expected);
  if (data == NULL) {
    a->failed = 1;
    kiln_kernel_context_destroy(ctx);
    return NULL;
  }
  for (int i = 0; i < kLaunchesEach && !a->failed; ++i) {
    int64_t got = 0;
    int32_t tasks = 1 + (i + a->index) % 9; /* 1..9 */
    if (parallel_sum(ctx, data, kLauncherN + a->index, tasks, &got) != 0 || got != expected) {
      fprintf(stderr, "launcher %d, launch %d: got %lld expected %lld\n", a->index, i,
              (long long)got, (long long)expected);
      a->failed = 1;
    }
  }
  if (strcmp(kiln_kernel_context_error(ctx), "") != 0) a->failed = 1;
  free(data);
  kiln_kernel_context_destroy(ctx);
  return NULL;
}

static int test_concurrent_launchers(void) {
  const int32_t sizes[] = {2, 4};
  for (size_t s = 0; s < 2; ++s) {
    KilnThreadPool* pool = NULL;
    CHECK_OK(kiln_thread_pool_create(sizes[s], &pool));
    pthread_t threads[kLaunchers];
    LauncherArg args[kLaunchers];
    int created = 0;
    for (int i = 0; i < kLaunchers; ++i) {
      args[i].pool = pool;
      args[i].index = i;
      args[i].failed = 0;
      if (pthread_create(&threads[i], NULL, launcher_main, &args[i]) != 0) break;
      ++created;
    }
    int failed = created != kLaunchers;
    for (int i = 0; i < created; ++i) {
      pthread_join(threads[i], NULL);
      failed |= args[i].failed;
    }
    kiln_thread_pool_destroy(pool);
    CHECK(!failed);
  }
  return 0;
}

/* A launch that finds the pool busy runs on its own thread and returns even
 * while the other launch is blocked (the documented fallback). */
typedef struct {
  atomic_int started;
  atomic_int release;
  atomic_int timed_out;
} BlockingJob;

static int32_t blocking_task(int32_t task_id, int32_t num_tasks, void* closure) {
  (void)num_tasks;
  BlockingJob* job = (BlockingJob*)closure;
  if (task_id == 0) {
    atomic_store(&job->started, 1);
    if (!wait_flag(&job->release)) atomic_store(&job->timed_out, 1);
  }
  return 0;
}

typedef struct {
  KilnKernelContext* ctx;
  BlockingJob* job;
  int32_t rc;
} BlockingLauncher;

static void* blocking_launcher_main(void* arg) {
  BlockingLauncher* b = (BlockingLauncher*)arg;
  b->rc = kiln_parallel_launch(b->ctx, blocking_task, b->job, 2);
  return NULL;
}

static int test_busy_pool_falls_back(void) {
  KilnThreadPool* pool = NULL;
  KilnKernelContext* ctx_a = NULL;
  KilnKernelContext* ctx_b = NULL;
  CHECK_OK(kiln_thread_pool_create(2, &pool));
  CHECK_OK(kiln_kernel_context_create(pool, &ctx_a));
  CHECK_OK(kiln_kernel_context_create(pool, &ctx_b));
  BlockingJob job;
  atomic_init(&job.started, 0);
  atomic_init(&job.release, 0);
  atomic_init(&job.timed_out, 0);
  BlockingLauncher a = {ctx_a, &job, 1};
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, blocking_launcher_main, &a) == 0);
  int started = wait_flag(&job.started);
  /* Pool is owned by A's launch now: B runs its tasks on this thread. */
  int b_ok = started && run_on_caller_only(ctx_b, 16, 16) == 0;
  atomic_store(&job.release, 1);
  pthread_join(thread, NULL);
  kiln_kernel_context_destroy(ctx_a);
  kiln_kernel_context_destroy(ctx_b);
  kiln_thread_pool_destroy(pool);
  CHECK(started);
  CHECK(b_ok);
  CHECK(a.rc == 0);
  CHECK(atomic_load(&job.timed_out) == 0);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Workspace                                                                 */
/* ------------------------------------------------------------------------ */

static int test_workspace(void) {
  KilnThreadPool* pool = NULL;
  KilnKernelContext* ctx = NULL;
  CHECK_OK(kiln_thread_pool_create(2, &pool));
  CHECK_OK(kiln_kernel_context_create(pool, &ctx));
  KilnKernelContext* ctxs[2] = {ctx, NULL};
  int ok = 1;
  for (int c = 0; c < 2; ++c) {
    const uint32_t aligns[] = {16, 64, 128, 4096};
    const uint64_t sizes[] = {1, 15, 64, 1000, 100000};
    for (size_t a = 0; a < 4; ++a) {
      for (size_t s = 0; s < 5; ++s) {
        unsigned char* p = (unsigned char*)kiln_workspace_alloc(ctxs[c], sizes[s], aligns[a]);
        if (p == NULL || (uintptr_t)p % aligns[a] != 0) {
          ok = 0;
        } else {
          memset(p, 0xAB, (size_t)sizes[s]); /* ASan checks the whole block is ours */
        }
        kiln_workspace_free(ctxs[c], p);
      }
    }
    /* Zero bytes: a valid, unique, aligned pointer. */
    void* z1 = kiln_workspace_alloc(ctxs[c], 0, 64);
    void* z2 = kiln_workspace_alloc(ctxs[c], 0, 64);
    ok = ok && z1 != NULL && z2 != NULL && z1 != z2 && (uintptr_t)z1 % 64 == 0;
    kiln_workspace_free(ctxs[c], z1);
    kiln_workspace_free(ctxs[c], z2);
    /* A small power of two is raised to 16. */
    void* small = kiln_workspace_alloc(ctxs[c], 10, 4);
    ok = ok && small != NULL && (uintptr_t)small % 16 == 0;
    kiln_workspace_free(ctxs[c], small);
    /* Bad alignments and absurd sizes. */
    ok = ok && kiln_workspace_alloc(ctxs[c], 64, 3) == NULL;
    ok = ok && kiln_workspace_alloc(ctxs[c], 64, 0) == NULL;
    ok = ok && kiln_workspace_alloc(ctxs[c], 64, 96) == NULL;
    ok = ok && kiln_workspace_alloc(ctxs[c], UINT64_MAX, 64) == NULL;
    ok = ok && kiln_workspace_alloc(ctxs[c], UINT64_MAX - 10, 4096) == NULL;
    kiln_workspace_free(ctxs[c], NULL);
  }
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
  CHECK(ok);
  return 0;
}

typedef struct {
  KilnKernelContext* ctx;
  atomic_int failures;
} WorkspaceJob;

static int32_t workspace_task(int32_t task_id, int32_t num_tasks, void* closure) {
  (void)num_tasks;
  WorkspaceJob* job = (WorkspaceJob*)closure;
  size_t n = 1000 + (size_t)task_id * 37;
  unsigned char* p = (unsigned char*)kiln_workspace_alloc(job->ctx, n, 64);
  if (p == NULL) {
    atomic_fetch_add(&job->failures, 1);
    return kiln_kernel_error(job->ctx, KILN_KERNEL_ENOMEM, "workspace");
  }
  memset(p, task_id & 0xFF, n);
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != (unsigned char)(task_id & 0xFF)) {
      atomic_fetch_add(&job->failures, 1);
      break;
    }
  }
  kiln_workspace_free(job->ctx, p);
  return 0;
}

static int test_workspace_in_tasks(void) {
  KilnThreadPool* pool = NULL;
  KilnKernelContext* ctx = NULL;
  CHECK_OK(kiln_thread_pool_create(4, &pool));
  CHECK_OK(kiln_kernel_context_create(pool, &ctx));
  WorkspaceJob job;
  job.ctx = ctx;
  atomic_init(&job.failures, 0);
  int32_t rc = kiln_parallel_launch(ctx, workspace_task, &job, 100);
  kiln_kernel_context_destroy(ctx);
  kiln_thread_pool_destroy(pool);
  CHECK(rc == 0);
  CHECK(atomic_load(&job.failures) == 0);
  return 0;
}

/* ------------------------------------------------------------------------ */

typedef struct {
  const char* name;
  int (*fn)(void);
} TestCase;

int main(void) {
  const TestCase tests[] = {
      {"create_sizes", test_create_sizes},
      {"create_env", test_create_env},
      {"create_invalid", test_create_invalid},
      {"create_destroy_churn", test_create_destroy_churn},
      {"parallel_sum", test_parallel_sum},
      {"more_tasks_than_threads", test_more_tasks_than_threads},
      {"error_propagation", test_error_propagation},
      {"error_first_wins_and_truncation", test_error_first_wins_and_truncation},
      {"null_ctx_error", test_null_ctx_error},
      {"null_fn", test_null_fn},
      {"serial_paths", test_serial_paths},
      {"nested_launch", test_nested_launch},
      {"concurrent_launchers", test_concurrent_launchers},
      {"busy_pool_falls_back", test_busy_pool_falls_back},
      {"workspace", test_workspace},
      {"workspace_in_tasks", test_workspace_in_tasks},
  };
  int failed = 0;
  for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); ++i) {
    int rc = tests[i].fn();
    printf("[%s] %s\n", rc == 0 ? "  OK  " : "FAILED", tests[i].name);
    failed += rc != 0;
  }
  printf("%d of %d tests failed\n", failed, (int)(sizeof(tests) / sizeof(tests[0])));
  return failed == 0 ? 0 : 1;
}
