/* File: runtime_c/vm_session.c
 *
 * The session calls of kiln/runtime.h for a VM artifact: inputs of any shape
 * main's signature allows (checked when set: dtype, rank, static dims; the
 * symbolic dims together when the session runs), a run of the VM, outputs
 * whose shapes are read after the run. executor.c dispatches here when
 * session->vm is set.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */

#include <stdlib.h>
#include <string.h>

#include "kiln/artifact_format.h"
#include "runtime_c/artifact_blob.h"
#include "runtime_c/runtime_internal.h"
#include "runtime_c/vm.h"

KilnStatus* kiln_vm_session_init(KilnSession* s) {
  const KilnArtifact* art = s->artifact;
  const KilnVmProgram* p = art->vm;
  const size_t n = p->num_inputs > 0 ? p->num_inputs : 1;
  s->vm_inputs = (DLTensor*)calloc(n, sizeof(DLTensor));
  s->vm_input_shapes = (int64_t*)calloc(n * KILN_ARTIFACT_MAX_NDIM, sizeof(int64_t));
  s->vm_input_buffers = (void**)calloc(n, sizeof(void*));
  s->vm_input_capacity = (uint64_t*)calloc(n, sizeof(uint64_t));
  if (s->vm_inputs == NULL || s->vm_input_shapes == NULL || s->vm_input_buffers == NULL ||
      s->vm_input_capacity == NULL) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory creating a session",
                              art->path);
  }
  return kiln_vm_create(p, art->vm_constants, s->ctx, art->path, &s->vm);
}

void kiln_vm_session_free_parts(KilnSession* s) {
  kiln_vm_free(s->vm);
  s->vm = NULL;
  if (s->vm_input_buffers != NULL && s->artifact != NULL && s->artifact->vm != NULL) {
    for (uint32_t i = 0; i < s->artifact->vm->num_inputs; ++i) free(s->vm_input_buffers[i]);
  }
  free(s->vm_input_buffers);
  free(s->vm_inputs);
  free(s->vm_input_shapes);
  free(s->vm_input_capacity);
}

/* No user-space address reaches 2^56 (as executor.c). */
#define KILN_VM_MAX_ADDRESS ((uintptr_t)1 << 56)

KilnStatus* kiln_vm_session_set_input(KilnSession* s, int32_t index, const DLTensor* t,
                                      int zero_copy, const char* fn) {
  const KilnArtifact* art = s->artifact;
  const char* name = art->inputs[index].name;
  if (t->device.device_type != kDLCPU) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: input '%s': the tensor must be in CPU memory (device_type %d), "
                              "got device_type %d",
                              fn, name, (int)kDLCPU, (int)t->device.device_type);
  }
  if (t->ndim > 0 && t->shape == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: input '%s': shape is NULL", fn, name);
  }
  KilnStatus* st = kiln_vm_check_input(s->vm, (uint32_t)index, t, name);
  if (st != NULL) {
    KilnStatus* named = kiln_status_create(kiln_status_code(st), "%s: %s", fn, kiln_status_message(st));
    kiln_status_free(st);
    return named;
  }
  /* Bytes, with overflow checks: any shape may come from the caller. */
  uint64_t bytes = kiln_dtype_bytes(t->dtype);
  for (int32_t d = 0; d < t->ndim; ++d) {
    uint64_t v = (uint64_t)t->shape[d];
    if (v != 0 && bytes > (UINT64_C(1) << 56) / v) {
      return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: input '%s': the tensor exceeds 2^56 bytes",
                                fn, name);
    }
    bytes *= v;
  }
  if (t->strides != NULL && bytes > 0) {
    int64_t expect = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
      if (t->shape[d] != 1 && t->strides[d] != expect) {
        return kiln_status_create(KILN_INVALID_ARGUMENT,
                                  "%s: input '%s': strides are not compact row-major (dim %d has "
                                  "stride %lld, expected %lld)",
                                  fn, name, (int)d, (long long)t->strides[d], (long long)expect);
      }
      expect *= t->shape[d];
    }
  }
  if (t->data == NULL && bytes > 0) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: input '%s': data is NULL", fn, name);
  }
  const uintptr_t base = (uintptr_t)t->data;
  if (bytes > 0 && (t->byte_offset >= KILN_VM_MAX_ADDRESS || t->byte_offset > UINTPTR_MAX - base ||
                    bytes > UINTPTR_MAX - base - (uintptr_t)t->byte_offset ||
                    base + (uintptr_t)t->byte_offset + (uintptr_t)bytes > KILN_VM_MAX_ADDRESS)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: input '%s': byte_offset %llu does not fit: data %p + byte_offset "
                              "+ the tensor's %llu bytes is not an address range",
                              fn, name, (unsigned long long)t->byte_offset, t->data,
                              (unsigned long long)bytes);
  }
  const uint8_t* src = (const uint8_t*)t->data + t->byte_offset;
  DLTensor* dst = &s->vm_inputs[index];
  int64_t* shape = s->vm_input_shapes + (size_t)index * KILN_ARTIFACT_MAX_NDIM;
  void* data;
  if (zero_copy) {
    uint64_t elem = kiln_dtype_bytes(t->dtype);
    if (elem > 1 && ((uintptr_t)src % elem) != 0) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "%s: input '%s': data (+ byte_offset) at %p is not aligned to the "
                                "element size (%llu bytes)",
                                fn, name, (const void*)src, (unsigned long long)elem);
    }
    data = (void*)(uintptr_t)src;
  } else {
    if (bytes > s->vm_input_capacity[index] || s->vm_input_buffers[index] == NULL) {
      uint64_t rounded = (bytes + KILN_RT_ALIGNMENT - 1) / KILN_RT_ALIGNMENT * KILN_RT_ALIGNMENT;
      if (rounded == 0) rounded = KILN_RT_ALIGNMENT;
      void* mem = NULL;
      if (rounded > (uint64_t)SIZE_MAX || posix_memalign(&mem, KILN_RT_ALIGNMENT, (size_t)rounded) != 0) {
        return kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                                  "%s: input '%s': cannot allocate %llu bytes", fn, name,
                                  (unsigned long long)bytes);
      }
      free(s->vm_input_buffers[index]);
      s->vm_input_buffers[index] = mem;
      s->vm_input_capacity[index] = rounded;
    }
    data = s->vm_input_buffers[index];
    if (bytes > 0) memcpy(data, src, (size_t)bytes);
  }
  for (int32_t d = 0; d < t->ndim; ++d) shape[d] = t->shape[d];
  dst->data = data;
  dst->device.device_type = kDLCPU;
  dst->device.device_id = 0;
  dst->ndim = t->ndim;
  dst->dtype = t->dtype;
  dst->shape = shape;
  dst->strides = NULL;
  dst->byte_offset = 0;
  if (!s->input_set[index]) {
    s->input_set[index] = 1;
    s->num_unset_inputs -= 1;
  }
  return NULL;
}

KilnStatus* kiln_vm_session_run(KilnSession* s) {
  if (s->num_unset_inputs != 0) return kiln_session_check_inputs(s);
  const uint32_t n = s->artifact->vm->num_inputs;
  const DLTensor* stack_inputs[16] = {NULL};
  const DLTensor** inputs = stack_inputs;
  if (n > 16) {
    inputs = (const DLTensor**)malloc(n * sizeof(DLTensor*));
    if (inputs == NULL) {
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", s->artifact->path);
    }
  }
  for (uint32_t i = 0; i < n; ++i) inputs[i] = &s->vm_inputs[i];
  KilnStatus* st = kiln_vm_run(s->vm, inputs);
  if (inputs != stack_inputs) free(inputs);
  return st;
}

KilnStatus* kiln_vm_session_output(const KilnSession* s, int32_t index, const char* fn,
                                   const DLTensor** view) {
  const DLTensor* t = kiln_vm_output(s->vm, (uint32_t)index);
  if (t == NULL) {
    return kiln_status_create(KILN_FAILED_PRECONDITION,
                              "%s: output %d has no value: the session has not run successfully "
                              "since its inputs were set (a VM artifact's outputs exist only after "
                              "kiln_session_run)",
                              fn, (int)index);
  }
  *view = t;
  return NULL;
}
