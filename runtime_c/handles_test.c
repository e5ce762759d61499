/* File: runtime_c/handles_test.c
 *
 * The registry of live handles: add / live / remove per kind, a second
 * remove reported as not live, NULL never live, a random sequence of 200,000
 * adds and removes over 5,000 addresses checked against a plain array (the
 * table grows and deletes by backward shift, so a lookup must never stop at
 * a hole), and 8 threads adding and removing their own handles at once.
 */
#include "runtime_c/handles.h"

#include <pthread.h>
#include <stdint.h>

#include "runtime_c/c_test_util.h"

static void test_basic(void) {
  static int a, b;
  long before = kiln_handle_count(KILN_HANDLE_SESSION);
  CHECK(!kiln_handle_live(KILN_HANDLE_SESSION, &a));
  CHECK(kiln_handle_add(KILN_HANDLE_SESSION, &a) == 0);
  CHECK(kiln_handle_live(KILN_HANDLE_SESSION, &a));
  /* Kinds are separate sets. */
  CHECK(!kiln_handle_live(KILN_HANDLE_ARTIFACT, &a));
  CHECK(!kiln_handle_live(KILN_HANDLE_SESSION, &b));
  CHECK(kiln_handle_count(KILN_HANDLE_SESSION) == before + 1);
  CHECK(kiln_handle_remove(KILN_HANDLE_SESSION, &a) == 1);
  CHECK(!kiln_handle_live(KILN_HANDLE_SESSION, &a));
  /* The second release of the same handle. */
  CHECK(kiln_handle_remove(KILN_HANDLE_SESSION, &a) == 0);
  CHECK(kiln_handle_count(KILN_HANDLE_SESSION) == before);
  /* NULL and bad kinds. */
  CHECK(kiln_handle_add(KILN_HANDLE_SESSION, NULL) != 0);
  CHECK(!kiln_handle_live(KILN_HANDLE_SESSION, NULL));
  CHECK(kiln_handle_remove(KILN_HANDLE_SESSION, NULL) == 0);
  CHECK(kiln_handle_add((KilnHandleKind)99, &a) != 0);
  CHECK(!kiln_handle_live((KilnHandleKind)-1, &a));
  CHECK(strcmp(kiln_handle_kind_name(KILN_HANDLE_ARTIFACT), "artifact") == 0);
}

static uint64_t rng_state = 88172645463325252ull;
static uint64_t next_random(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

enum { kAddresses = 5000, kSteps = 200000 };

static void test_against_reference(void) {
  static char live[kAddresses];
  /* Addresses 16 apart (as malloc's are), some in clusters that collide. */
  const uintptr_t base = (uintptr_t)0x100000;
  long mismatches = 0;
  for (int step = 0; step < kSteps; ++step) {
    int i = (int)(next_random() % kAddresses);
    const void* p = (const void*)(base + (uintptr_t)i * 16);
    if (next_random() % 2 == 0) {
      if (kiln_handle_add(KILN_HANDLE_MODEL, p) != 0) ++mismatches;
      live[i] = 1;
    } else {
      int was = kiln_handle_remove(KILN_HANDLE_MODEL, p);
      if (was != live[i]) ++mismatches;
      live[i] = 0;
    }
    if (step % 1000 == 0) {
      for (int k = 0; k < kAddresses; ++k) {
        if (kiln_handle_live(KILN_HANDLE_MODEL, (const void*)(base + (uintptr_t)k * 16)) !=
            live[k]) {
          ++mismatches;
        }
      }
    }
  }
  long count = 0;
  for (int k = 0; k < kAddresses; ++k) count += live[k];
  CHECK(mismatches == 0);
  CHECK(kiln_handle_count(KILN_HANDLE_MODEL) == count);
  for (int k = 0; k < kAddresses; ++k) {
    (void)kiln_handle_remove(KILN_HANDLE_MODEL, (const void*)(base + (uintptr_t)k * 16));
  }
  CHECK(kiln_handle_count(KILN_HANDLE_MODEL) == 0);
}

enum { kThreads = 8, kPerThread = 2000 };

static void* thread_main(void* arg) {
  char* mine = (char*)arg; /* kPerThread distinct addresses */
  long bad = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < kPerThread; ++i) {
      if (kiln_handle_add(KILN_HANDLE_PROFILE, mine + i) != 0) ++bad;
    }
    for (int i = 0; i < kPerThread; ++i) {
      if (!kiln_handle_live(KILN_HANDLE_PROFILE, mine + i)) ++bad;
    }
    for (int i = 0; i < kPerThread; ++i) {
      if (kiln_handle_remove(KILN_HANDLE_PROFILE, mine + i) != 1) ++bad;
    }
  }
  return (void*)(intptr_t)bad;
}

static void test_threads(void) {
  static char blocks[kThreads][kPerThread];
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    CHECK(pthread_create(&threads[t], NULL, thread_main, blocks[t]) == 0);
  }
  for (int t = 0; t < kThreads; ++t) {
    void* bad = NULL;
    pthread_join(threads[t], &bad);
    CHECK(bad == NULL);
  }
  CHECK(kiln_handle_count(KILN_HANDLE_PROFILE) == 0);
}

int main(void) {
  test_basic();
  test_against_reference();
  test_threads();
  if (failures != 0) fprintf(stderr, "%d check(s) failed\n", failures);
  return failures != 0;
}
