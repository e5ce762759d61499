/* File: runtime_c/executor.c
 *
 * The graph executor: sessions of kiln/runtime.h (kiln_session_*).
 *
 * kiln_session_create does all the work once: one 64-byte-aligned block for
 * every storage the session owns (the intermediate arena, the outputs and the
 * inputs; parameters stay in the artifact's PARAMS), one DLTensor per graph
 * entry, and for every tvm_op node its `DLTensor*` argument array (inputs,
 * then outputs) and a step {fn, args, num_args}. kiln_session_run is then a
 * loop over the steps: no allocation, no string work, no lookups.
 *
 * Zero-copy inputs only change the `data` of the input's DLTensor: every
 * argument array points at that DLTensor, so they all see it.
 *
 * A session is used by one thread at a time; the artifact is only read.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/kernel_abi.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "kiln/threadpool.h"
#include "runtime_c/artifact_blob.h"
#include "runtime_c/handles.h"
#include "runtime_c/runtime_internal.h"
#include "runtime_c/vm.h"

/* ------------------------------------------------------------------------ */
/* Create / release                                                          */
/* ------------------------------------------------------------------------ */

static void session_free(KilnSession* s) {
  if (s == NULL) return;
  /* The VM first: before the context its kernels use, and before the
   * device its device blocks belong to. */
  kiln_vm_session_free_parts(s);
  kiln_cuda_session_free(s);
  kiln_kernel_context_destroy(s->ctx);
  kiln_thread_pool_destroy(s->own_pool);
  free(s->memory);
  free(s->tensors);
  free(s->shapes);
  free(s->args);
  free(s->steps);
  free(s->input_set);
  /* Last: the session's reference keeps the plan and the kernels' library
   * alive until here (the artifact may have been released before). */
  if (s->artifact != NULL) kiln_artifact_unref(s->artifact);
  free(s);
}

/* Only a live session is freed: a second release (or a pointer that is not
 * a session) is reported and ignored, and its memory never touched. */
void kiln_session_release(KilnSession* session) {
  if (session == NULL) return;
  if (!kiln_handle_remove(KILN_HANDLE_SESSION, session)) {
    kiln_handle_report_dead_release("kiln_session_release", KILN_HANDLE_SESSION, session);
    return;
  }
  session_free(session);
}

KilnStatus* kiln_session_check_live(const KilnSession* session, const char* fn) {
  if (session == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: session is NULL", fn);
  if (!kiln_handle_live(KILN_HANDLE_SESSION, session)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: session %p is not live (used after kiln_session_release, or "
                              "not made by kiln_session_create)",
                              fn, (const void*)session);
  }
  return NULL;
}

void* kiln_session_own_data(const KilnSession* session, int32_t entry_id) {
  if (session->cuda != NULL) return kiln_cuda_session_own_data(session, entry_id);
  const KilnArtifact* art = session->artifact;
  const KilnPlanStorage* ps = &art->storages[art->entries[entry_id].storage_id];
  if (ps->kind == KILN_STORAGE_PARAM) return (void*)(uintptr_t)ps->param_data;
  return session->memory + ps->offset;
}

KilnStatus* kiln_session_create(const KilnArtifact* artifact, const KilnSessionOptions* options,
                                KilnSession** out) {
  if (out != NULL) *out = NULL;
  if (artifact == NULL || out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_session_create: %s is NULL",
                              artifact == NULL ? "artifact" : "out");
  }
  {
    KilnStatus* dead = kiln_artifact_check_live(artifact, "kiln_session_create");
    if (dead != NULL) return dead;
  }
  KilnSessionOptions opts;
  memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  if (options != NULL) {
    if (options->struct_size < sizeof(size_t)) {
      return kiln_status_create(
          KILN_INVALID_ARGUMENT,
          "kiln_session_create: options->struct_size is %zu; set it to sizeof(KilnSessionOptions)",
          options->struct_size);
    }
    size_t n = options->struct_size < sizeof opts ? options->struct_size : sizeof opts;
    memcpy(&opts, options, n);
  }
  if (opts.pool == NULL &&
      (opts.num_threads < 0 || opts.num_threads > KILN_THREAD_POOL_MAX_THREADS)) {
    return kiln_status_create(
        KILN_INVALID_ARGUMENT,
        "kiln_session_create: num_threads is %d; expected 0 (default), 1 (serial) or up to %d",
        (int)opts.num_threads, KILN_THREAD_POOL_MAX_THREADS);
  }

  const KilnArtifact* art = artifact;
  /* The device: an artifact's kernels run on the device they were compiled
   * for. */
  if (opts.device_type != 0 && opts.device_type != kDLCPU && opts.device_type != kDLCUDA) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "kiln_session_create: device_type %d is not supported; expected "
                              "kDLCPU (%d) or kDLCUDA (%d)",
                              (int)opts.device_type, (int)kDLCPU, (int)kDLCUDA);
  }
  const int on_cuda = opts.device_type == kDLCUDA;
  if (!on_cuda && opts.device_id != 0) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "kiln_session_create: device_id %d on the CPU (only 0)",
                              (int)opts.device_id);
  }
  if (art->device_code != NULL && !on_cuda) {
    return kiln_status_create(KILN_FAILED_PRECONDITION,
                              "%s: compiled for \"%s\": its kernels run on a CUDA device; create "
                              "the session with device_type kDLCUDA (kiln --device cuda:0)",
                              art->path, art->target);
  }
  if (art->device_code == NULL && on_cuda) {
    return kiln_status_create(KILN_FAILED_PRECONDITION,
                              "%s: compiled for the CPU (target \"%s\"): it cannot run on cuda:%d; "
                              "compile the model with --target cuda (\"cuda -arch=sm_90\")",
                              art->path, art->target, (int)opts.device_id);
  }
  KilnSession* s = (KilnSession*)calloc(1, sizeof(KilnSession));
  if (s == NULL) goto oom;
  kiln_artifact_retain(art);
  s->artifact = art;

  /* Threads. */
  if (opts.pool != NULL) {
    s->pool = opts.pool;
  } else {
    int32_t threads =
        opts.num_threads == 0 ? kiln_thread_pool_default_num_threads() : opts.num_threads;
    if (threads > 1) {
      int32_t rc = kiln_thread_pool_create(threads, &s->own_pool);
      if (rc != 0) {
        session_free(s);
        return kiln_status_create(
            rc == KILN_KERNEL_ENOMEM ? KILN_RESOURCE_EXHAUSTED : KILN_INTERNAL,
            "kiln_session_create: could not create a pool of %d threads", (int)threads);
      }
      s->pool = s->own_pool;
    }
  }
  s->num_threads = kiln_thread_pool_num_threads(s->pool);
  if (kiln_kernel_context_create(s->pool, &s->ctx) != 0) goto oom;

  /* A VM artifact: the VM and its inputs; no plan to allocate. */
  if (art->vm != NULL) {
    /* On a GPU: the device and module first, then the VM given them. */
    KilnStatus* st = on_cuda ? kiln_cuda_session_init(s, opts.device_id) : NULL;
    if (st == NULL) st = kiln_vm_session_init(s);
    if (st == NULL && on_cuda) st = kiln_cuda_session_attach_vm(s);
    if (st != NULL) {
      session_free(s);
      return st;
    }
    goto io;
  }

  /* A CUDA device: its memory, parameters and module (cuda_session.c). */
  if (on_cuda) {
    KilnStatus* st = kiln_cuda_session_init(s, opts.device_id);
    if (st != NULL) {
      session_free(s);
      return st;
    }
  }

  /* Memory: one block for every storage the session owns. */
  if (!on_cuda) {
    size_t bytes = art->session_bytes > 0 ? (size_t)art->session_bytes : KILN_RT_ALIGNMENT;
    if (art->session_bytes > (uint64_t)SIZE_MAX) goto oom;
    void* mem = NULL;
    if (posix_memalign(&mem, KILN_RT_ALIGNMENT, bytes) != 0) {
      KilnStatus* st = kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                                          "%s: cannot allocate %llu bytes of session memory",
                                          art->path, (unsigned long long)art->session_bytes);
      session_free(s);
      return st;
    }
    s->memory = (uint8_t*)mem;
  }

  /* Tensors: one per entry, with the session's own copy of the shapes (the
   * kernels get non-const pointers; the artifact stays untouched). */
  int32_t ne = art->num_entries;
  s->tensors = (DLTensor*)calloc(ne > 0 ? (size_t)ne : 1, sizeof(DLTensor));
  s->shapes = (int64_t*)malloc(sizeof(int64_t) *
                               (art->num_shape_values > 0 ? (size_t)art->num_shape_values : 1));
  if (s->tensors == NULL || s->shapes == NULL) goto oom;
  if (art->num_shape_values > 0) {
    memcpy(s->shapes, art->shapes, sizeof(int64_t) * (size_t)art->num_shape_values);
  }
  for (int32_t e = 0; e < ne; ++e) {
    const KilnPlanEntry* pe = &art->entries[e];
    DLTensor* t = &s->tensors[e];
    t->data = kiln_session_own_data(s, e);
    t->device.device_type = on_cuda ? kDLCUDA : kDLCPU;
    t->device.device_id = on_cuda ? opts.device_id : 0;
    t->ndim = pe->ndim;
    t->dtype = pe->dtype;
    t->shape = s->shapes + pe->shape_offset;
    t->strides = NULL;
    t->byte_offset = 0;
  }

  /* Argument arrays and steps. */
  {
    size_t total_args = 0;
    for (int32_t k = 0; k < art->num_op_nodes; ++k) {
      const KilnPlanNode* pn = &art->nodes[art->op_nodes[k]];
      total_args += (size_t)pn->num_inputs + (size_t)pn->num_outputs;
    }
    s->args = (DLTensor**)malloc(sizeof(DLTensor*) * (total_args > 0 ? total_args : 1));
    s->steps =
        (KilnStep*)calloc(art->num_op_nodes > 0 ? (size_t)art->num_op_nodes : 1, sizeof(KilnStep));
    if (s->args == NULL || s->steps == NULL) goto oom;
    size_t pos = 0;
    for (int32_t k = 0; k < art->num_op_nodes; ++k) {
      const int32_t node = art->op_nodes[k];
      const KilnPlanNode* pn = &art->nodes[node];
      KilnStep* step = &s->steps[k];
      step->fn = pn->fn;
      step->args = s->args + pos;
      step->num_args = pn->num_inputs + pn->num_outputs;
      step->node_id = node;
      for (int32_t i = 0; i < pn->num_inputs; ++i) {
        s->args[pos++] = &s->tensors[art->node_inputs[pn->inputs_offset + i]];
      }
      for (int32_t o = 0; o < pn->num_outputs; ++o) {
        s->args[pos++] = &s->tensors[pn->first_entry + o];
      }
    }
    s->num_steps = art->num_op_nodes;
  }

io:
  s->input_set = (uint8_t*)calloc(art->num_inputs > 0 ? (size_t)art->num_inputs : 1, 1);
  if (s->input_set == NULL) goto oom;
  s->num_unset_inputs = art->num_inputs;
  if (kiln_handle_add(KILN_HANDLE_SESSION, s) != 0) goto oom;

  *out = s;
  return NULL;

oom: {
  /* The message first: freeing the session drops its artifact reference. */
  KilnStatus* st = kiln_status_create(KILN_RESOURCE_EXHAUSTED,
                                      "%s: out of memory creating a session", art->path);
  session_free(s);
  return st;
}
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                    */
/* ------------------------------------------------------------------------ */

/* No user-space address reaches 2^56 (x86-64 with 5-level paging; AArch64
 * has 52 bits at most). */
#define KILN_RT_MAX_ADDRESS ((uintptr_t)1 << 56)

/* Checks `t` against entry `pe` of input `name`. */
static KilnStatus* check_tensor(const KilnArtifact* art, const KilnPlanEntry* pe, const char* what,
                                const char* name, const DLTensor* t, const char* fn,
                                const KilnSession* s) {
  if (s != NULL && s->cuda != NULL && t->device.device_type != kDLCPU) {
    const int32_t ordinal = kiln_cuda_session_ordinal(s);
    if (t->device.device_type != kDLCUDA || t->device.device_id != ordinal) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "%s: %s '%s': the session runs on cuda:%d; the tensor must be CPU "
                                "memory or on cuda:%d, got device_type %d, device_id %d",
                                fn, what, name, (int)ordinal, (int)ordinal,
                                (int)t->device.device_type, (int)t->device.device_id);
    }
  } else if (t->device.device_type != kDLCPU) {
    return kiln_status_create(
        KILN_INVALID_ARGUMENT,
        "%s: %s '%s': the tensor must be in CPU memory (device_type %d), got device_type %d", fn,
        what, name, (int)kDLCPU, (int)t->device.device_type);
  }
  const int64_t* want = art->shapes + pe->shape_offset;
  int same = t->dtype.code == pe->dtype.code && t->dtype.bits == pe->dtype.bits &&
             t->dtype.lanes == pe->dtype.lanes && t->ndim == pe->ndim;
  if (same && t->ndim > 0 && t->shape == NULL) same = 0;
  for (int32_t d = 0; same && d < pe->ndim; ++d) same = t->shape[d] == want[d];
  if (!same) {
    char expected[640], got[640];
    kiln_format_tensor_type(pe->dtype, pe->ndim, want, expected, sizeof expected);
    if (t->ndim < 0 || t->ndim > KILN_ARTIFACT_MAX_NDIM || (t->ndim > 0 && t->shape == NULL)) {
      char dt[64];
      kiln_dtype_to_string(t->dtype, dt, sizeof dt);
      (void)snprintf(got, sizeof got, "%s with ndim %d%s", dt, (int)t->ndim,
                     t->shape == NULL ? " and no shape" : "");
    } else {
      kiln_format_tensor_type(t->dtype, t->ndim, t->shape, got, sizeof got);
    }
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s '%s': expected %s, got %s", fn, what,
                              name, expected, got);
  }
  /* Compact row-major strides (or NULL). Dims of extent 1 may have any
   * stride; an empty tensor has no layout to check. */
  if (t->strides != NULL && pe->num_elements > 0) {
    int64_t expect = 1;
    for (int32_t d = pe->ndim - 1; d >= 0; --d) {
      if (want[d] != 1 && t->strides[d] != expect) {
        return kiln_status_create(KILN_INVALID_ARGUMENT,
                                  "%s: %s '%s': strides are not compact row-major (dim %d has "
                                  "stride %lld, expected %lld)",
                                  fn, what, name, (int)d, (long long)t->strides[d],
                                  (long long)expect);
      }
      expect *= want[d];
    }
  }
  if (t->data == NULL && pe->nbytes > 0) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s '%s': data is NULL", fn, what, name);
  }
  /* byte_offset: [data + byte_offset, + nbytes) must be an address range.
   * The buffer's size is not in a DLTensor, so this catches what can be
   * caught: an offset past any address space (2^56 bytes: more than any
   * 64-bit machine kiln runs on maps) or a range that wraps around, which
   * memcpy would otherwise be handed. */
  if (pe->nbytes > 0) {
    const uintptr_t base = (uintptr_t)t->data;
    if (t->byte_offset >= KILN_RT_MAX_ADDRESS || t->byte_offset > UINTPTR_MAX - base ||
        pe->nbytes > UINTPTR_MAX - base - (uintptr_t)t->byte_offset ||
        base + (uintptr_t)t->byte_offset + (uintptr_t)pe->nbytes > KILN_RT_MAX_ADDRESS) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "%s: %s '%s': byte_offset %llu does not fit: data %p + byte_offset "
                                "+ the tensor's %llu bytes is not an address range",
                                fn, what, name, (unsigned long long)t->byte_offset, t->data,
                                (unsigned long long)pe->nbytes);
    }
  }
  return NULL;
}

static KilnStatus* set_input(KilnSession* s, int32_t index, const DLTensor* t, int zero_copy,
                             const char* fn) {
  const KilnArtifact* art = s->artifact;
  if (art->vm != NULL) return kiln_vm_session_set_input(s, index, t, zero_copy, fn);
  const KilnPlanIO* io = &art->inputs[index];
  const KilnPlanEntry* pe = &art->entries[io->entry_id];
  KilnStatus* st = check_tensor(art, pe, "input", io->name, t, fn, s);
  if (st != NULL) return st;
  DLTensor* dst = &s->tensors[io->entry_id];
  const uint8_t* src = (const uint8_t*)t->data + t->byte_offset;
  if (s->cuda != NULL) {
    const int on_device = t->device.device_type == kDLCUDA;
    if (zero_copy && !on_device) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "%s: input '%s': the session runs on cuda:%d: a zero-copy input must "
                                "be device memory (kDLCUDA), not CPU memory (use "
                                "kiln_session_set_input to copy it)",
                                fn, io->name, (int)kiln_cuda_session_ordinal(s));
    }
    if (!zero_copy) {
      dst->data = kiln_session_own_data(s, io->entry_id);
      st = kiln_cuda_session_copy(s, dst->data, 1, src, on_device, pe->nbytes);
      if (st != NULL) return st;
      goto mark_set;
    }
  }
  if (zero_copy && pe->nbytes > 0) {
    uint64_t elem = kiln_dtype_bytes(pe->dtype);
    if (elem > 1 && ((uintptr_t)src % elem) != 0) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "%s: input '%s': data (+ byte_offset) at %p is not aligned to the "
                                "element size (%llu bytes)",
                                fn, io->name, (const void*)src, (unsigned long long)elem);
    }
    dst->data = (void*)(uintptr_t)src;
  } else {
    dst->data = kiln_session_own_data(s, io->entry_id);
    if (pe->nbytes > 0) memcpy(dst->data, src, (size_t)pe->nbytes);
  }
mark_set:
  if (!s->input_set[index]) {
    s->input_set[index] = 1;
    s->num_unset_inputs -= 1;
  }
  return NULL;
}

static KilnStatus* set_input_by_name(KilnSession* session, const char* name, const DLTensor* tensor,
                                     int zero_copy, const char* fn) {
  if (session == NULL || name == NULL || tensor == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              session == NULL ? "session" : (name == NULL ? "name" : "tensor"));
  }
  KilnStatus* st = kiln_session_check_live(session, fn);
  if (st != NULL) return st;
  int32_t index = -1;
  st = kiln_artifact_find_input(session->artifact, name, &index);
  if (st != NULL) return st;
  return set_input(session, index, tensor, zero_copy, fn);
}

KilnStatus* kiln_session_set_input(KilnSession* session, const char* name, const DLTensor* tensor) {
  return set_input_by_name(session, name, tensor, 0, "kiln_session_set_input");
}

KilnStatus* kiln_session_set_input_zero_copy(KilnSession* session, const char* name,
                                             const DLTensor* tensor) {
  return set_input_by_name(session, name, tensor, 1, "kiln_session_set_input_zero_copy");
}

KilnStatus* kiln_session_set_input_index(KilnSession* session, int32_t index,
                                         const DLTensor* tensor) {
  static const char fn[] = "kiln_session_set_input_index";
  if (session == NULL || tensor == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              session == NULL ? "session" : "tensor");
  }
  KilnStatus* dead = kiln_session_check_live(session, fn);
  if (dead != NULL) return dead;
  if (index < 0 || index >= session->artifact->num_inputs) {
    return kiln_status_create(KILN_OUT_OF_RANGE,
                              "%s: input index %d out of range (the model has %d inputs)", fn,
                              (int)index, (int)session->artifact->num_inputs);
  }
  return set_input(session, index, tensor, 0, fn);
}

/* The index of VM input `name` for a sequence or optional call `fn`; on a
 * graph-executor artifact (no sequences, no optionals) an error saying so,
 * `kind` naming what the call sets ("a sequence"), `kinds` its plural. */
static KilnStatus* vm_input_index(KilnSession* session, const char* name, const char* fn,
                                  const char* kind, const char* kinds, int32_t* index) {
  if (session == NULL || name == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              session == NULL ? "session" : "name");
  }
  KilnStatus* st = kiln_session_check_live(session, fn);
  if (st != NULL) return st;
  st = kiln_artifact_find_input(session->artifact, name, index);
  if (st != NULL) return st;
  if (session->vm == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: input '%s' is a tensor, not %s (the artifact runs on the graph "
                              "executor, which has no %s); set it with kiln_session_set_input",
                              fn, name, kind, kinds);
  }
  return NULL;
}

KilnStatus* kiln_session_set_input_sequence(KilnSession* session, const char* name,
                                            const DLTensor* elements, int32_t count) {
  static const char fn[] = "kiln_session_set_input_sequence";
  int32_t index = -1;
  KilnStatus* st = vm_input_index(session, name, fn, "a sequence", "sequences", &index);
  if (st != NULL) return st;
  return kiln_vm_session_set_input_sequence(session, index, elements, count, fn);
}

KilnStatus* kiln_session_set_input_none(KilnSession* session, const char* name) {
  static const char fn[] = "kiln_session_set_input_none";
  int32_t index = -1;
  KilnStatus* st = vm_input_index(session, name, fn, "an optional", "optionals", &index);
  if (st != NULL) return st;
  return kiln_vm_session_set_input_none(session, index, fn);
}

/* ------------------------------------------------------------------------ */
/* Run                                                                       */
/* ------------------------------------------------------------------------ */

KilnStatus* kiln_session_check_inputs(const KilnSession* s) {
  if (s->num_unset_inputs == 0) return NULL;
  for (int32_t i = 0; i < s->artifact->num_inputs; ++i) {
    if (!s->input_set[i]) {
      return kiln_status_create(KILN_FAILED_PRECONDITION,
                                "%s: input '%s' was never set (kiln_session_set_input)",
                                s->artifact->path, s->artifact->inputs[i].name);
    }
  }
  return NULL;
}

KilnStatus* kiln_session_kernel_failure(KilnSession* s, int32_t step, int32_t rc) {
  const KilnPlanNode* pn = &s->artifact->nodes[s->steps[step].node_id];
  const char* msg = kiln_kernel_context_error(s->ctx);
  KilnStatus* st = kiln_status_create(
      KILN_INTERNAL, "%s: node '%s' (kernel '%s') failed with code %d: %s", s->artifact->path,
      pn->name, pn->func_name, (int)rc, (msg != NULL && msg[0] != '\0') ? msg : "(no message)");
  kiln_kernel_context_clear_error(s->ctx);
  return st;
}

KilnStatus* kiln_session_run(KilnSession* session) {
  if (session == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_session_run: session is NULL");
  }
  KilnStatus* dead = kiln_session_check_live(session, "kiln_session_run");
  if (dead != NULL) return dead;
  if (session->num_unset_inputs != 0) return kiln_session_check_inputs(session);
  if (session->vm != NULL) return kiln_vm_session_run(session);
  if (session->cuda != NULL) return kiln_cuda_session_run(session);
  const KilnStep* steps = session->steps;
  const int32_t n = session->num_steps;
  KilnKernelContext* ctx = session->ctx;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t rc = steps[i].fn(steps[i].args, steps[i].num_args, ctx);
    if (rc != 0) return kiln_session_kernel_failure(session, i, rc);
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Outputs                                                                   */
/* ------------------------------------------------------------------------ */

KilnStatus* kiln_session_get_output(KilnSession* session, int32_t index, const DLTensor** out) {
  if (out != NULL) *out = NULL;
  if (session == NULL || out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_session_get_output: %s is NULL",
                              session == NULL ? "session" : "out");
  }
  KilnStatus* dead = kiln_session_check_live(session, "kiln_session_get_output");
  if (dead != NULL) return dead;
  if (index < 0 || index >= session->artifact->num_outputs) {
    return kiln_status_create(
        KILN_OUT_OF_RANGE,
        "kiln_session_get_output: output index %d out of range (the model has %d outputs)",
        (int)index, (int)session->artifact->num_outputs);
  }
  if (session->vm != NULL) return kiln_vm_session_output(session, index, "kiln_session_get_output", out);
  *out = &session->tensors[session->artifact->outputs[index].entry_id];
  return NULL;
}

/* Sequence output `index` of a VM session that has run, or a status. */
static KilnStatus* sequence_output(KilnSession* session, int32_t index, const char* fn) {
  if (session == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: session is NULL", fn);
  KilnStatus* dead = kiln_session_check_live(session, fn);
  if (dead != NULL) return dead;
  if (index < 0 || index >= session->artifact->num_outputs) {
    return kiln_status_create(KILN_OUT_OF_RANGE, "%s: output index %d out of range (the model has %d outputs)",
                              fn, (int)index, (int)session->artifact->num_outputs);
  }
  if (session->vm != NULL && session->artifact->vm->outputs[index].optional &&
      kiln_vm_output_is_none(session->vm, (uint32_t)index) == 1) {
    return kiln_status_create(KILN_FAILED_PRECONDITION,
                              "%s: output %d ('%s') is none (an empty optional) in the last run; "
                              "kiln_session_get_output_is_none tells",
                              fn, (int)index, session->artifact->outputs[index].name);
  }
  if (session->vm == NULL || !session->artifact->vm->outputs[index].sequence) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: output %d ('%s') is a tensor, not a sequence; read it with "
                              "kiln_session_get_output",
                              fn, (int)index, session->artifact->outputs[index].name);
  }
  if (kiln_vm_output_sequence_length(session->vm, (uint32_t)index) < 0) {
    return kiln_status_create(KILN_FAILED_PRECONDITION,
                              "%s: output %d has no value: the session has not run successfully since "
                              "its inputs were set",
                              fn, (int)index);
  }
  return NULL;
}

KilnStatus* kiln_session_get_output_sequence_length(KilnSession* session, int32_t index,
                                                    int32_t* count) {
  static const char fn[] = "kiln_session_get_output_sequence_length";
  if (count != NULL) *count = 0;
  if (count == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: count is NULL", fn);
  KilnStatus* st = sequence_output(session, index, fn);
  if (st != NULL) return st;
  const int64_t n = kiln_vm_output_sequence_length(session->vm, (uint32_t)index);
  if (n > INT32_MAX) {
    return kiln_status_create(KILN_OUT_OF_RANGE, "%s: output %d holds %lld tensors (more than INT32_MAX)", fn,
                              (int)index, (long long)n);
  }
  *count = (int32_t)n;
  return NULL;
}

KilnStatus* kiln_session_get_output_sequence_element(KilnSession* session, int32_t index, int32_t k,
                                                     const DLTensor** out) {
  static const char fn[] = "kiln_session_get_output_sequence_element";
  if (out != NULL) *out = NULL;
  if (out == NULL) return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: out is NULL", fn);
  KilnStatus* st = sequence_output(session, index, fn);
  if (st != NULL) return st;
  const int64_t n = kiln_vm_output_sequence_length(session->vm, (uint32_t)index);
  if (k < 0 || k >= n) {
    return kiln_status_create(KILN_OUT_OF_RANGE, "%s: element %d of output %d, which holds %lld", fn, (int)k,
                              (int)index, (long long)n);
  }
  *out = kiln_vm_output_sequence_element(session->vm, (uint32_t)index, (uint64_t)k);
  return NULL;
}

KilnStatus* kiln_session_get_output_is_none(KilnSession* session, int32_t index, int32_t* is_none) {
  static const char fn[] = "kiln_session_get_output_is_none";
  if (is_none != NULL) *is_none = 0;
  if (session == NULL || is_none == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              session == NULL ? "session" : "is_none");
  }
  KilnStatus* dead = kiln_session_check_live(session, fn);
  if (dead != NULL) return dead;
  if (index < 0 || index >= session->artifact->num_outputs) {
    return kiln_status_create(KILN_OUT_OF_RANGE, "%s: output index %d out of range (the model has %d outputs)",
                              fn, (int)index, (int)session->artifact->num_outputs);
  }
  if (session->vm == NULL || !session->artifact->vm->outputs[index].optional) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: output %d ('%s') is not an optional (it always has a value)", fn,
                              (int)index, session->artifact->outputs[index].name);
  }
  const int none = kiln_vm_output_is_none(session->vm, (uint32_t)index);
  if (none < 0) {
    return kiln_status_create(KILN_FAILED_PRECONDITION,
                              "%s: output %d has no value: the session has not run successfully since "
                              "its inputs were set",
                              fn, (int)index);
  }
  *is_none = none;
  return NULL;
}

KilnStatus* kiln_session_copy_output(KilnSession* session, int32_t index, const DLTensor* dst) {
  static const char fn[] = "kiln_session_copy_output";
  if (session == NULL || dst == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              session == NULL ? "session" : "dst");
  }
  KilnStatus* dead = kiln_session_check_live(session, fn);
  if (dead != NULL) return dead;
  const KilnArtifact* art = session->artifact;
  if (index < 0 || index >= art->num_outputs) {
    return kiln_status_create(KILN_OUT_OF_RANGE,
                              "%s: output index %d out of range (the model has %d outputs)", fn,
                              (int)index, (int)art->num_outputs);
  }
  const KilnPlanIO* io = &art->outputs[index];
  if (session->vm != NULL) {
    /* The output's shape is the run's: check dst against it as a plan entry. */
    const DLTensor* view = NULL;
    KilnStatus* st = kiln_vm_session_output(session, index, fn, &view);
    if (st != NULL) return st;
    KilnPlanEntry pe;
    memset(&pe, 0, sizeof pe);
    pe.dtype = view->dtype;
    pe.ndim = view->ndim;
    pe.num_elements = 1;
    for (int32_t d = 0; d < view->ndim; ++d) pe.num_elements *= (uint64_t)view->shape[d];
    pe.nbytes = pe.num_elements * kiln_dtype_bytes(view->dtype);
    KilnArtifact shapes_of;
    memset(&shapes_of, 0, sizeof shapes_of);
    shapes_of.shapes = view->shape;
    st = check_tensor(&shapes_of, &pe, "output", io->name, dst, fn, NULL);
    if (st != NULL) return st;
    if (pe.nbytes > 0) {
      memmove((uint8_t*)dst->data + dst->byte_offset, (const uint8_t*)view->data + view->byte_offset,
              (size_t)pe.nbytes);
    }
    return NULL;
  }
  const KilnPlanEntry* pe = &art->entries[io->entry_id];
  KilnStatus* st = check_tensor(art, pe, "output", io->name, dst, fn, session);
  if (st != NULL) return st;
  if (session->cuda != NULL) {
    return kiln_cuda_session_copy(session, (uint8_t*)dst->data + dst->byte_offset,
                                  dst->device.device_type == kDLCUDA,
                                  session->tensors[io->entry_id].data, 1, pe->nbytes);
  }
  if (pe->nbytes > 0) {
    /* memmove: dst may be the very buffer a zero-copy input head points at. */
    memmove((uint8_t*)dst->data + dst->byte_offset, session->tensors[io->entry_id].data,
            (size_t)pe->nbytes);
  }
  return NULL;
}

/* The DLManagedTensor of kiln_session_get_output_dlpack and everything it
 * points at, in one allocation followed by the 64-byte aligned data. */
typedef struct {
  DLManagedTensor managed;
  void* data;
  int64_t shape[]; /* ndim dims */
} KilnDlpackCopy;

static void kiln_dlpack_delete(DLManagedTensor* self) {
  if (self == NULL) return;
  KilnDlpackCopy* copy = (KilnDlpackCopy*)self->manager_ctx;
  free(copy->data);
  free(copy);
}

KilnStatus* kiln_session_get_output_dlpack(KilnSession* session, int32_t index,
                                           DLManagedTensor** out) {
  static const char fn[] = "kiln_session_get_output_dlpack";
  if (out != NULL) *out = NULL;
  if (session == NULL || out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              session == NULL ? "session" : "out");
  }
  KilnStatus* dead = kiln_session_check_live(session, fn);
  if (dead != NULL) return dead;
  if (index < 0 || index >= session->artifact->num_outputs) {
    return kiln_status_create(KILN_OUT_OF_RANGE,
                              "%s: output index %d out of range (the model has %d outputs)", fn,
                              (int)index, (int)session->artifact->num_outputs);
  }
  const DLTensor* view = NULL;
  if (session->vm != NULL) {
    KilnStatus* st = kiln_vm_session_output(session, index, fn, &view);
    if (st != NULL) return st;
  } else {
    view = &session->tensors[session->artifact->outputs[index].entry_id];
  }
  /* (A VM session's outputs are host memory, on a GPU too.) */
  if (session->cuda != NULL && session->vm == NULL) return kiln_cuda_session_dlpack(session, view, out);
  uint64_t bytes = (uint64_t)(view->dtype.bits * view->dtype.lanes + 7) / 8;
  for (int32_t d = 0; d < view->ndim; ++d) bytes *= (uint64_t)view->shape[d];
  KilnDlpackCopy* copy =
      (KilnDlpackCopy*)calloc(1, sizeof *copy + (size_t)view->ndim * sizeof(int64_t));
  void* data = NULL;
  /* posix_memalign of 0 bytes may return NULL; keep a valid pointer. */
  if (copy == NULL || posix_memalign(&data, KILN_RT_ALIGNMENT, bytes > 0 ? bytes : 1) != 0) {
    free(copy);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory (%llu bytes)", fn,
                              (unsigned long long)bytes);
  }
  if (bytes > 0) memcpy(data, (const uint8_t*)view->data + view->byte_offset, (size_t)bytes);
  for (int32_t d = 0; d < view->ndim; ++d) copy->shape[d] = view->shape[d];
  copy->data = data;
  DLTensor* t = &copy->managed.dl_tensor;
  t->data = data;
  t->device.device_type = kDLCPU;
  t->device.device_id = 0;
  t->ndim = view->ndim;
  t->dtype = view->dtype;
  t->shape = copy->shape;
  t->strides = NULL;
  t->byte_offset = 0;
  copy->managed.manager_ctx = copy;
  copy->managed.deleter = kiln_dlpack_delete;
  *out = &copy->managed;
  return NULL;
}

KilnStatus* kiln_session_run_step(KilnSession* s, int32_t k) {
  if (s->cuda != NULL) return kiln_cuda_session_run_step(s, k);
  const KilnStep* step = &s->steps[k];
  const int32_t rc = step->fn(step->args, step->num_args, s->ctx);
  return rc == 0 ? NULL : kiln_session_kernel_failure(s, k, rc);
}
