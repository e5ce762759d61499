/* File: runtime_c/vm_io.c
 *
 * A VM run's inputs and outputs as the VM's objects (runtime_c/vm.h): the
 * sequences and optionals given to main built as lists and Some/None, main's
 * result checked against the signature and taken as the outputs (a tuple
 * unpacked, sequences indexed, optionals unwrapped), the output accessors,
 * and the outputs dropped before the next run. The run itself is vm.c.
 */
#include <stdint.h>
#include <stdlib.h>

#include "runtime_c/runtime_internal.h"
#include "runtime_c/vm.h"
#include "runtime_c/vm_internal.h"
#include "runtime_c/vm_signature.h"

/* The helpers vm.c shares (runtime_c/vm_internal.h), by their short names
 * here, as in vm.c. */
#define obj_retain kiln_vm_obj_retain
#define obj_release kiln_vm_obj_release
#define new_tensor kiln_vm_new_tensor
#define kind_name kiln_vm_kind_name

void kiln_vm_drop_outputs(KilnVm* vm) {
  for (uint32_t i = 0; i < vm->num_outputs; ++i) {
    obj_release(vm, vm->outputs[i]);
    vm->outputs[i] = NULL;
    if (vm->seq_elems != NULL) {
      free((void*)vm->seq_elems[i]);
      vm->seq_elems[i] = NULL;
      vm->seq_counts[i] = 0;
    }
    if (vm->output_none != NULL) vm->output_none[i] = 0;
  }
  vm->num_outputs = 0;
}

const DLTensor* kiln_vm_output(const KilnVm* vm, uint32_t index) {
  if (vm == NULL || index >= vm->num_outputs || vm->outputs[index] == NULL) return NULL;
  if (vm->p->outputs[index].sequence) return NULL;
  return &((const Tensor*)vm->outputs[index])->t;
}

int64_t kiln_vm_output_sequence_length(const KilnVm* vm, uint32_t index) {
  if (vm == NULL || index >= vm->num_outputs || vm->outputs[index] == NULL ||
      !vm->p->outputs[index].sequence) {
    return -1;
  }
  return (int64_t)vm->seq_counts[index];
}

int kiln_vm_output_is_none(const KilnVm* vm, uint32_t index) {
  if (vm == NULL || index >= vm->num_outputs) return -1;
  return vm->output_none[index] ? 1 : 0;
}

const DLTensor* kiln_vm_output_sequence_element(const KilnVm* vm, uint32_t index, uint64_t k) {
  const int64_t n = kiln_vm_output_sequence_length(vm, index);
  if (n < 0 || k >= (uint64_t)n) return NULL;
  return vm->seq_elems[index][k];
}

/* Output i is a sequence: the list `o` walked (no recursion) into
 * vm->seq_elems[i], each element checked against the signature. */
static KilnStatus* index_sequence_output(KilnVm* vm, uint32_t i, const Obj* o) {
  const KilnVmType* want = &vm->p->outputs[i];
  uint64_t count = 0, cap = 0;
  const DLTensor** elems = NULL;
  for (const Obj* at = o;; ++count) {
    if (at == NULL || at->kind != OBJ_ADT) {
      free((void*)elems);
      return kiln_status_create(KILN_INTERNAL, "%s: VM: output %u (a sequence) holds %s at element %llu",
                                vm->what, i, kind_name(at), (unsigned long long)count);
    }
    const Adt* a = (const Adt*)at;
    if (a->tag == KILN_VM_SEQ_NIL_TAG && a->n == 0) break;
    if (a->tag != KILN_VM_SEQ_CONS_TAG || a->n != 2 || a->fields[0] == NULL ||
        a->fields[0]->kind != OBJ_TENSOR) {
      free((void*)elems);
      return kiln_status_create(KILN_INTERNAL,
                                "%s: VM: output %u (a sequence): element %llu is not a list cell of a "
                                "tensor (tag %d, %d fields)",
                                vm->what, i, (unsigned long long)count, (int)a->tag, (int)a->n);
    }
    const DLTensor* t = &((const Tensor*)a->fields[0])->t;
    if (t->dtype.code != want->dtype.code || t->dtype.bits != want->dtype.bits || t->ndim != want->ndim) {
      char x[256], y[640];
      kiln_vm_format_type(vm->p, want, x, sizeof x);
      kiln_format_tensor_type(t->dtype, t->ndim, t->shape, y, sizeof y);
      free((void*)elems);
      return kiln_status_create(KILN_INTERNAL, "%s: VM: output %u: element %llu is %s, the signature says %s",
                                vm->what, i, (unsigned long long)count, y, x);
    }
    if (count == cap) {
      uint64_t c = cap ? cap * 2 : 8;
      const DLTensor** grown = (const DLTensor**)realloc((void*)elems, c * sizeof(DLTensor*));
      if (grown == NULL) {
        free((void*)elems);
        return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", vm->what);
      }
      elems = grown;
      cap = c;
    }
    elems[count] = t;
    at = a->fields[1];
  }
  free((void*)vm->seq_elems[i]);
  vm->seq_elems[i] = elems;
  vm->seq_counts[i] = count;
  return NULL;
}

/* Copies the tensor object for output i out of main's result. */
KilnStatus* kiln_vm_take_outputs(KilnVm* vm, Obj* result) {
  const KilnVmProgram* p = vm->p;
  Obj* one[1] = {result};
  Obj* const* items = one;
  uint32_t n = 1;
  /* A tuple unpacked; but a lone sequence output is the list itself (a cell
   * of 2 fields or the end of 0; a tuple of one sequence has 1 field). */
  const int lone_sequence = p->num_outputs == 1 && p->outputs[0].sequence && !p->outputs[0].optional &&
                            result != NULL && result->kind == OBJ_ADT && ((Adt*)result)->n != 1;
  if (result != NULL && result->kind == OBJ_ADT && !lone_sequence) {
    items = ((Adt*)result)->fields;
    n = (uint32_t)((Adt*)result)->n;
  }
  if (n != p->num_outputs) {
    return kiln_status_create(KILN_INTERNAL, "%s: VM: main returned %u values, the signature has %u",
                              vm->what, n, p->num_outputs);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const Obj* o = items[i];
    if (p->outputs[i].optional) {
      /* Some(value) or None; the value is checked as a plain output is. */
      const Adt* a = o != NULL && o->kind == OBJ_ADT ? (const Adt*)o : NULL;
      if (a != NULL && a->tag == KILN_VM_OPT_NONE_TAG && a->n == 0) {
        vm->output_none[i] = 1;
        continue;
      }
      if (a == NULL || a->tag != KILN_VM_OPT_SOME_TAG || a->n != 1 || a->fields[0] == NULL) {
        return kiln_status_create(KILN_INTERNAL,
                                  "%s: VM: output %u (an optional) is %s (tag %d, %d fields), not "
                                  "Some(value) or None",
                                  vm->what, i, kind_name(o), a != NULL ? (int)a->tag : -1,
                                  a != NULL ? (int)a->n : -1);
      }
      vm->output_none[i] = 0;
      o = a->fields[0];
    }
    if (p->outputs[i].sequence) {
      KilnStatus* st = index_sequence_output(vm, i, o);
      if (st != NULL) return st;
      continue;
    }
    if (o == NULL || o->kind != OBJ_TENSOR) {
      return kiln_status_create(KILN_INTERNAL, "%s: VM: output %u is %s, not a tensor", vm->what, i,
                                kind_name(o));
    }
    const DLTensor* t = &((const Tensor*)o)->t;
    const KilnVmType* want = &p->outputs[i];
    int ok = t->dtype.code == want->dtype.code && t->dtype.bits == want->dtype.bits &&
             t->ndim == want->ndim;
    for (int32_t d = 0; ok && d < t->ndim; ++d) {
      if (want->dims[d] >= 0 && t->shape[d] != want->dims[d]) ok = 0;
    }
    if (!ok) {
      char a[256], b[640];
      kiln_vm_format_type(p, want, a, sizeof a);
      kiln_format_tensor_type(t->dtype, t->ndim, t->shape, b, sizeof b);
      return kiln_status_create(KILN_INTERNAL, "%s: VM: output %u is %s, the signature says %s",
                                vm->what, i, b, a);
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    Obj* o = items[i];
    if (p->outputs[i].optional) o = vm->output_none[i] ? NULL : ((Adt*)o)->fields[0];
    vm->outputs[i] = o;
    obj_retain(o);
  }
  vm->num_outputs = n;
  return NULL;
}

/* A list (tag KILN_VM_SEQ_CONS_TAG cells ending in KILN_VM_SEQ_NIL_TAG) of
 * read-only tensors over the sequence's elements, or NULL (out of memory). */
Obj* kiln_vm_build_sequence(KilnVm* vm, const KilnVmSequence* seq) {
  Adt* nil = (Adt*)calloc(1, sizeof(Adt));
  if (nil == NULL) return NULL;
  nil->h.kind = OBJ_ADT;
  nil->h.refs = 1;
  nil->tag = KILN_VM_SEQ_NIL_TAG;
  Obj* list = &nil->h;
  for (uint32_t k = seq->count; k-- > 0;) {
    const DLTensor* x = &seq->elements[k];
    Tensor* t = new_tensor(x->dtype, x->ndim, x->shape);
    Adt* cell = t == NULL ? NULL : (Adt*)calloc(1, sizeof(Adt) + 2 * sizeof(Obj*));
    if (cell == NULL) {
      free(t);
      obj_release(vm, list);
      return NULL;
    }
    t->t.data = (uint8_t*)x->data + x->byte_offset;
    t->readonly = 1;
    cell->h.kind = OBJ_ADT;
    cell->h.refs = 1;
    cell->tag = KILN_VM_SEQ_CONS_TAG;
    cell->n = 2;
    cell->fields[0] = &t->h;
    cell->fields[1] = list; /* the cell takes the list's reference */
    list = &cell->h;
  }
  return list;
}

/* Some(value) (taking value's reference) or, when value is NULL, None; NULL
 * when out of memory (value released). */
Obj* kiln_vm_wrap_optional(KilnVm* vm, Obj* value) {
  Adt* a = (Adt*)calloc(1, sizeof(Adt) + sizeof(Obj*));
  if (a == NULL) {
    obj_release(vm, value);
    return NULL;
  }
  a->h.kind = OBJ_ADT;
  a->h.refs = 1;
  a->tag = value != NULL ? KILN_VM_OPT_SOME_TAG : KILN_VM_OPT_NONE_TAG;
  a->n = value != NULL ? 1 : 0;
  a->fields[0] = value;
  return &a->h;
}

