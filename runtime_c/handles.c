/* File: runtime_c/handles.c
 *
 * The registry of live handles (runtime_c/handles.h): one open-addressing
 * hash set of addresses per kind (linear probing, backward-shift deletion,
 * grown at half full), behind one mutex. A lookup is a hash and a probe or
 * two, so checking a handle on every call (kiln_session_run included) costs
 * an uncontended lock and a few loads.
 */
#include "runtime_c/handles.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  uintptr_t* slots; /* 0 = empty */
  size_t capacity;  /* a power of two, or 0 before the first add */
  size_t count;
} HandleSet;

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static HandleSet g_sets[KILN_HANDLE_NUM_KINDS];

static size_t slot_of(uintptr_t key, size_t capacity) {
  /* Fibonacci hashing of the address without its alignment bits. */
  uint64_t h = (uint64_t)(key >> 4) * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(h >> 32) & (capacity - 1);
}

static int set_find(const HandleSet* s, uintptr_t key, size_t* at) {
  if (s->capacity == 0) return 0;
  for (size_t i = slot_of(key, s->capacity);; i = (i + 1) & (s->capacity - 1)) {
    if (s->slots[i] == 0) return 0;
    if (s->slots[i] == key) {
      *at = i;
      return 1;
    }
  }
}

static void set_insert_unique(HandleSet* s, uintptr_t key) {
  size_t i = slot_of(key, s->capacity);
  while (s->slots[i] != 0) i = (i + 1) & (s->capacity - 1);
  s->slots[i] = key;
  s->count += 1;
}

static int set_grow(HandleSet* s) {
  size_t capacity = s->capacity == 0 ? 64 : s->capacity * 2;
  uintptr_t* slots = (uintptr_t*)calloc(capacity, sizeof(uintptr_t));
  if (slots == NULL) return -1;
  HandleSet grown = {slots, capacity, 0};
  for (size_t i = 0; i < s->capacity; ++i) {
    if (s->slots[i] != 0) set_insert_unique(&grown, s->slots[i]);
  }
  free(s->slots);
  *s = grown;
  return 0;
}

static void set_erase(HandleSet* s, size_t at) {
  /* Backward-shift deletion: move later members of the probe run up so that
   * no lookup stops early at the hole. */
  size_t mask = s->capacity - 1;
  size_t hole = at;
  for (size_t j = (at + 1) & mask; s->slots[j] != 0; j = (j + 1) & mask) {
    size_t home = slot_of(s->slots[j], s->capacity);
    /* j's member may fill the hole when its home is not in (hole, j]. */
    int home_after_hole = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!home_after_hole) {
      s->slots[hole] = s->slots[j];
      hole = j;
    }
  }
  s->slots[hole] = 0;
  s->count -= 1;
}

static int valid_kind(KilnHandleKind kind) {
  return (int)kind >= 0 && (int)kind < KILN_HANDLE_NUM_KINDS;
}

int kiln_handle_add(KilnHandleKind kind, const void* handle) {
  if (handle == NULL || !valid_kind(kind)) return -1;
  uintptr_t key = (uintptr_t)handle;
  int rc = 0;
  pthread_mutex_lock(&g_mutex);
  HandleSet* s = &g_sets[kind];
  size_t at = 0;
  if (!set_find(s, key, &at)) {
    if ((s->count + 1) * 2 > s->capacity) rc = set_grow(s);
    if (rc == 0) set_insert_unique(s, key);
  }
  pthread_mutex_unlock(&g_mutex);
  return rc;
}

int kiln_handle_live(KilnHandleKind kind, const void* handle) {
  if (handle == NULL || !valid_kind(kind)) return 0;
  size_t at = 0;
  pthread_mutex_lock(&g_mutex);
  int live = set_find(&g_sets[kind], (uintptr_t)handle, &at);
  pthread_mutex_unlock(&g_mutex);
  return live;
}

int kiln_handle_remove(KilnHandleKind kind, const void* handle) {
  if (handle == NULL || !valid_kind(kind)) return 0;
  size_t at = 0;
  pthread_mutex_lock(&g_mutex);
  HandleSet* s = &g_sets[kind];
  int live = set_find(s, (uintptr_t)handle, &at);
  if (live) set_erase(s, at);
  pthread_mutex_unlock(&g_mutex);
  return live;
}

long kiln_handle_count(KilnHandleKind kind) {
  if (!valid_kind(kind)) return 0;
  pthread_mutex_lock(&g_mutex);
  long n = (long)g_sets[kind].count;
  pthread_mutex_unlock(&g_mutex);
  return n;
}

const char* kiln_handle_kind_name(KilnHandleKind kind) {
  switch (kind) {
    case KILN_HANDLE_ARTIFACT:
      return "artifact";
    case KILN_HANDLE_SESSION:
      return "session";
    case KILN_HANDLE_PROFILE:
      return "profile";
    case KILN_HANDLE_MODEL:
      return "model";
    default:
      return "handle";
  }
}

void kiln_handle_report_dead_release(const char* fn, KilnHandleKind kind, const void* handle) {
  fprintf(stderr,
          "kiln: %s: %p is not a live %s (released twice, or not made by kiln); ignored\n", fn,
          handle, kiln_handle_kind_name(kind));
}
