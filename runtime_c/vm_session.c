/* File: runtime_c/vm_session.c
 *
 * The session calls of kiln/runtime.h for a VM artifact: inputs of any shape
 * main's signature allows (checked when set: dtype, rank, static dims; the
 * symbolic dims together when the session runs), a run of the VM, outputs
 * whose shapes are read after the run. executor.c dispatches here when
 * session->vm is set.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/artifact_format.h"
#include "runtime_c/artifact_blob.h"
#include "runtime_c/runtime_internal.h"
#include "runtime_c/vm.h"
#include "runtime_c/vm_signature.h"

/* A sequence input's elements: DLTensors over copies in `data`. */
struct KilnVmSeqInput {
  DLTensor* elems;
  int64_t* shapes; /* 32 per element */
  void* data;
  uint32_t count;
};

KilnStatus* kiln_vm_session_init(KilnSession* s) {
  const KilnArtifact* art = s->artifact;
  const KilnVmProgram* p = art->vm;
  const size_t n = p->num_inputs > 0 ? p->num_inputs : 1;
  s->vm_inputs = (DLTensor*)calloc(n, sizeof(DLTensor));
  s->vm_input_shapes = (int64_t*)calloc(n * KILN_ARTIFACT_MAX_NDIM, sizeof(int64_t));
  s->vm_input_buffers = (void**)calloc(n, sizeof(void*));
  s->vm_input_capacity = (uint64_t*)calloc(n, sizeof(uint64_t));
  s->vm_seq_inputs = (struct KilnVmSeqInput*)calloc(n, sizeof(struct KilnVmSeqInput));
  s->vm_input_none = (uint8_t*)calloc(n, 1);
  if (s->vm_inputs == NULL || s->vm_input_shapes == NULL || s->vm_input_buffers == NULL ||
      s->vm_input_capacity == NULL || s->vm_seq_inputs == NULL || s->vm_input_none == NULL) {
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
  if (s->vm_seq_inputs != NULL && s->artifact != NULL && s->artifact->vm != NULL) {
    for (uint32_t i = 0; i < s->artifact->vm->num_inputs; ++i) {
      free(s->vm_seq_inputs[i].elems);
      free(s->vm_seq_inputs[i].shapes);
      free(s->vm_seq_inputs[i].data);
    }
  }
  free(s->vm_seq_inputs);
  free(s->vm_input_none);
  free(s->vm_input_buffers);
  free(s->vm_inputs);
  free(s->vm_input_shapes);
  free(s->vm_input_capacity);
}

/* No user-space address reaches 2^56 (as executor.c). */
#define KILN_VM_MAX_ADDRESS ((uintptr_t)1 << 56)

/* What every tensor a caller hands a VM session must be: CPU memory, a
 * shape, compact, a data range that is an address range; *bytes its size. */
static KilnStatus* named(KilnStatus* st, const char* fn) {
  if (st == NULL) return NULL;
  KilnStatus* out = kiln_status_create(kiln_status_code(st), "%s: %s", fn, kiln_status_message(st));
  kiln_status_free(st);
  return out;
}

/* Input `index` (element `element` of it when >= 0) against main's signature
 * between the first checks and the size's. */
static KilnStatus* check_host_tensor(const KilnVmProgram* p, int32_t index, int32_t element,
                                     const DLTensor* t, const char* fn, const char* name,
                                     uint64_t* bytes_out) {
  if (t->device.device_type != kDLCPU) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: input '%s': the tensor must be in CPU memory (device_type %d), "
                              "got device_type %d",
                              fn, name, (int)kDLCPU, (int)t->device.device_type);
  }
  if (t->ndim > 0 && t->shape == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: input '%s': shape is NULL", fn, name);
  }
  KilnStatus* st = named(element < 0 ? kiln_vm_signature_check_input(p, (uint32_t)index, t, name)
                                     : kiln_vm_signature_check_element(p, (uint32_t)index,
                                                                       (uint32_t)element, t,
                                                                       name),
                         fn);
  if (st != NULL) return st;
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
  *bytes_out = bytes;
  return NULL;
}

KilnStatus* kiln_vm_session_set_input(KilnSession* s, int32_t index, const DLTensor* t,
                                      int zero_copy, const char* fn) {
  const KilnArtifact* art = s->artifact;
  const char* name = art->inputs[index].name;
  if (art->vm->inputs[index].sequence) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: input '%s' is a sequence of tensors; set it with "
                              "kiln_session_set_input_sequence",
                              fn, name);
  }
  /* A session on a GPU also takes a tensor in that GPU's memory (copied to
   * the host: the VM copies it to the device when a device kernel reads it). */
  DLTensor host_view;
  int from_device = 0;
  if (t->device.device_type == kDLCUDA && s->cuda != NULL) {
    const int32_t ordinal = kiln_cuda_session_ordinal(s);
    if (t->device.device_id != ordinal || zero_copy) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "%s: input '%s': %s", fn, name,
                                zero_copy ? "a zero-copy input of a VM session must be CPU memory"
                                          : "the tensor is on another CUDA device than the session's");
    }
    host_view = *t;
    host_view.device.device_type = kDLCPU;
    host_view.device.device_id = 0;
    t = &host_view;
    from_device = 1;
  }
  uint64_t bytes = 0;
  KilnStatus* st = check_host_tensor(art->vm, index, -1, t, fn, name, &bytes);
  if (st != NULL) return st;
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
    if (from_device) {
      st = kiln_cuda_session_copy(s, data, 0, src, 1, bytes);
      if (st != NULL) return st;
    } else if (bytes > 0) {
      memcpy(data, src, (size_t)bytes);
    }
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
  s->vm_input_none[index] = 0;
  if (!s->input_set[index]) {
    s->input_set[index] = 1;
    s->num_unset_inputs -= 1;
  }
  return NULL;
}

KilnStatus* kiln_vm_session_set_input_none(KilnSession* s, int32_t index, const char* fn) {
  const KilnArtifact* art = s->artifact;
  const KilnVmType* t = &art->vm->inputs[index];
  if (!t->optional) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: input '%s' is %s, not an optional; only an optional input can be "
                              "none (set it with %s)",
                              fn, art->inputs[index].name, t->sequence ? "a sequence" : "a tensor",
                              t->sequence ? "kiln_session_set_input_sequence" : "kiln_session_set_input");
  }
  s->vm_input_none[index] = 1;
  if (!s->input_set[index]) {
    s->input_set[index] = 1;
    s->num_unset_inputs -= 1;
  }
  return NULL;
}

KilnStatus* kiln_vm_session_set_input_sequence(KilnSession* s, int32_t index, const DLTensor* elements,
                                               int32_t count, const char* fn) {
  const KilnArtifact* art = s->artifact;
  const char* name = art->inputs[index].name;
  if (!art->vm->inputs[index].sequence) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: input '%s' is a tensor, not a sequence; set it with "
                              "kiln_session_set_input",
                              fn, name);
  }
  if (count < 0 || (count > 0 && elements == NULL)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: input '%s': %s", fn, name,
                              count < 0 ? "count is negative" : "elements is NULL");
  }
  /* Every element checked, and the copies' total size, before anything changes. */
  uint64_t total = 0;
  for (int32_t k = 0; k < count; ++k) {
    uint64_t bytes = 0;
    KilnStatus* st = check_host_tensor(art->vm, index, k, &elements[k], fn, name, &bytes);
    if (st != NULL) return st;
    uint64_t rounded = (bytes + KILN_RT_ALIGNMENT - 1) / KILN_RT_ALIGNMENT * KILN_RT_ALIGNMENT;
    if (rounded > (UINT64_C(1) << 56) - total) {
      return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: input '%s': the sequence exceeds 2^56 bytes", fn,
                                name);
    }
    total += rounded;
  }
  struct KilnVmSeqInput next = {NULL, NULL, NULL, (uint32_t)count};
  const size_t n = count > 0 ? (size_t)count : 1;
  next.elems = (DLTensor*)calloc(n, sizeof(DLTensor));
  next.shapes = (int64_t*)calloc(n * KILN_ARTIFACT_MAX_NDIM, sizeof(int64_t));
  if (next.elems == NULL || next.shapes == NULL || total > (uint64_t)SIZE_MAX ||
      posix_memalign(&next.data, KILN_RT_ALIGNMENT, total > 0 ? (size_t)total : KILN_RT_ALIGNMENT) != 0) {
    free(next.elems);
    free(next.shapes);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: input '%s': cannot allocate %llu bytes", fn, name,
                              (unsigned long long)total);
  }
  uint64_t at = 0;
  for (int32_t k = 0; k < count; ++k) {
    const DLTensor* t = &elements[k];
    uint64_t bytes = kiln_dtype_bytes(t->dtype);
    for (int32_t d = 0; d < t->ndim; ++d) bytes *= (uint64_t)t->shape[d];
    DLTensor* dst = &next.elems[k];
    int64_t* shape = next.shapes + (size_t)k * KILN_ARTIFACT_MAX_NDIM;
    for (int32_t d = 0; d < t->ndim; ++d) shape[d] = t->shape[d];
    dst->data = (uint8_t*)next.data + at;
    if (bytes > 0) memcpy(dst->data, (const uint8_t*)t->data + t->byte_offset, (size_t)bytes);
    dst->device.device_type = kDLCPU;
    dst->device.device_id = 0;
    dst->ndim = t->ndim;
    dst->dtype = t->dtype;
    dst->shape = shape;
    dst->strides = NULL;
    dst->byte_offset = 0;
    at += (bytes + KILN_RT_ALIGNMENT - 1) / KILN_RT_ALIGNMENT * KILN_RT_ALIGNMENT;
  }
  struct KilnVmSeqInput* slot = &s->vm_seq_inputs[index];
  free(slot->elems);
  free(slot->shapes);
  free(slot->data);
  *slot = next;
  s->vm_input_none[index] = 0;
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
  KilnVmSequence stack_seqs[16];
  /* Zeroed: g++ -O2 cannot see that only the first n (<= 16) are read. */
  memset(stack_seqs, 0, sizeof stack_seqs);
  KilnVmSequence* seqs = stack_seqs;
  if (n > 16) {
    seqs = (KilnVmSequence*)malloc(n * sizeof(KilnVmSequence));
    if (seqs == NULL) {
      if (inputs != stack_inputs) free(inputs);
      return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", s->artifact->path);
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    seqs[i].elements = s->vm_seq_inputs[i].elems;
    seqs[i].count = s->vm_seq_inputs[i].count;
  }
  KilnStatus* st = kiln_vm_run_with(s->vm, inputs, seqs, s->vm_input_none);
  if (inputs != stack_inputs) free(inputs);
  if (seqs != stack_seqs) free(seqs);
  return st;
}

KilnStatus* kiln_vm_session_output(const KilnSession* s, int32_t index, const char* fn,
                                   const DLTensor** view) {
  if (s->artifact->vm->outputs[index].optional && kiln_vm_output_is_none(s->vm, (uint32_t)index) == 1) {
    return kiln_status_create(KILN_FAILED_PRECONDITION,
                              "%s: output %d ('%s') is none (an empty optional) in the last run; "
                              "kiln_session_get_output_is_none tells",
                              fn, (int)index, s->artifact->outputs[index].name);
  }
  if (s->artifact->vm->outputs[index].sequence) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: output %d ('%s') is a sequence of tensors; read it with "
                              "kiln_session_get_output_sequence_length and "
                              "kiln_session_get_output_sequence_element",
                              fn, (int)index, s->artifact->outputs[index].name);
  }
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
