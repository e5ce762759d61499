/* File: runtime_c/vm_trace.c
 *
 * The record of a VM run's kernel calls (KilnVmTrace, runtime_c/vm.h) that
 * the debug executor's profile of a VM artifact is made from.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime_c/vm.h"

void kiln_vm_trace_free(KilnVmTrace* t) {
  if (t == NULL) return;
  free(t->kernel);
  free(t->start_ns);
  free(t->time_ns);
  free(t->shapes);
  memset(t, 0, sizeof *t);
}

void kiln_vm_trace_record(KilnVmTrace* t, uint32_t kernel, uint64_t start_ns, uint64_t time_ns,
                          const DLTensor* out) {
  if (t->num_calls == t->capacity) {
    uint32_t cap = t->capacity ? t->capacity * 2 : 256;
    uint32_t* k = (uint32_t*)realloc(t->kernel, cap * sizeof(uint32_t));
    if (k != NULL) t->kernel = k;
    uint64_t* s0 = (uint64_t*)realloc(t->start_ns, cap * sizeof(uint64_t));
    if (s0 != NULL) t->start_ns = s0;
    uint64_t* s1 = (uint64_t*)realloc(t->time_ns, cap * sizeof(uint64_t));
    if (s1 != NULL) t->time_ns = s1;
    int64_t* sh = (int64_t*)realloc(t->shapes, (size_t)cap * 33 * sizeof(int64_t));
    if (sh != NULL) t->shapes = sh;
    if (k == NULL || s0 == NULL || s1 == NULL || sh == NULL) {
      t->failed = 1;
      return;
    }
    t->capacity = cap;
  }
  uint32_t i = t->num_calls++;
  t->kernel[i] = kernel;
  t->start_ns[i] = start_ns;
  t->time_ns[i] = time_ns;
  int64_t* shape = t->shapes + (size_t)i * 33;
  shape[0] = out != NULL ? out->ndim : 0;
  for (int32_t d = 0; out != NULL && d < out->ndim && d < 32; ++d) shape[1 + d] = out->shape[d];
}

