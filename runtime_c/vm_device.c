/* File: runtime_c/vm_device.c
 *
 * The VM's device side (kiln_vm_set_device, runtime_c/vm.h): a GPU VM
 * artifact's device kernels launched through the device's calls, and each
 * tensor's bytes kept where they were last written, copied when the other
 * side reads them (docs/vm.md, "On a GPU").
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_c/runtime_internal.h"
#include "runtime_c/vm_internal.h"

#define vm_error kiln_vm_error
#define tensor_bytes kiln_vm_tensor_bytes
#define pool_pick kiln_vm_pool_pick
#define dev_pool_put kiln_vm_dev_pool_put

/* A freed device block kept for reuse (launches are queued on one stream, so
 * a later kernel using it runs after the earlier ones are done with it). */
void kiln_vm_dev_pool_put(KilnVm* vm, uint64_t ptr, uint64_t capacity) {
  if (ptr == 0) return;
  if (vm->dev_pool_count == KILN_VM_POOL_BLOCKS ||
      vm->dev_pool_bytes + capacity > KILN_VM_POOL_BYTES) {
    vm->dev.release(vm->dev.self, ptr);
    return;
  }
  vm->dev_pool[vm->dev_pool_count].data = (void*)(uintptr_t)ptr;
  vm->dev_pool[vm->dev_pool_count].capacity = capacity;
  ++vm->dev_pool_count;
  vm->dev_pool_bytes += capacity;
}


/* Where a tensor's bytes live with a device (kiln_vm_set_device): a tensor
 * in a Storage follows the storage's state; one without (a constant, an
 * input, an inline scalar, or a view of one: `storage` then points at that
 * tensor) is read-only host memory, copied to the device once (constants
 * once per VM, into const_dev; the others into the base tensor's mirror). */

static uint64_t round64(uint64_t bytes) { return bytes == 0 ? 64 : (bytes + 63) / 64 * 64; }

static KilnStatus* dev_status(KilnVm* vm, KilnStatus* st) {
  if (st == NULL) return NULL;
  KilnStatus* out = vm_error(vm, kiln_status_code(st), "%s", kiln_status_message(st));
  kiln_status_free(st);
  return out;
}

static KilnStatus* dev_alloc(KilnVm* vm, uint64_t bytes, uint64_t* out) {
  uint64_t cap = 0;
  void* p = pool_pick(vm->dev_pool, &vm->dev_pool_count, &vm->dev_pool_bytes, bytes, &cap);
  if (p != NULL) {
    *out = (uint64_t)(uintptr_t)p;
    return NULL;
  }
  KilnStatus* st = vm->dev.alloc(vm->dev.self, bytes, out);
  if (st == NULL) return NULL;
  /* Out of device memory: give the pool back and try once more. */
  for (uint32_t i = 0; i < vm->dev_pool_count; ++i) {
    vm->dev.release(vm->dev.self, (uint64_t)(uintptr_t)vm->dev_pool[i].data);
  }
  vm->dev_pool_count = 0;
  vm->dev_pool_bytes = 0;
  kiln_status_free(st);
  return dev_status(vm, vm->dev.alloc(vm->dev.self, bytes, out));
}

/* Makes the host bytes of `t` current (a device kernel may have written them
 * last); with `write`, the host is about to write them. */
KilnStatus* kiln_vm_host_access(KilnVm* vm, Tensor* t, int write) {
  if (!vm->has_dev || t->storage == NULL || t->storage->kind != OBJ_STORAGE) return NULL;
  Storage* s = (Storage*)t->storage;
  if (s->host_stale) {
    ++vm->device_copies;
    KilnStatus* st = dev_status(vm, vm->dev.to_host(vm->dev.self, s->data, s->dev, s->size));
    if (st != NULL) return st;
    s->host_stale = 0;
  }
  if (write) {
    s->written = 1;
    s->dev_valid = 0;
  }
  return NULL;
}

/* The device address of `t`'s first byte, its bytes current on the device;
 * with `write`, a device kernel is about to write them. */
static KilnStatus* device_access(KilnVm* vm, Tensor* t, int write, uint64_t* out) {
  KilnStatus* st;
  if (t->storage != NULL && t->storage->kind == OBJ_STORAGE) {
    Storage* s = (Storage*)t->storage;
    if (s->dev == 0 && (st = dev_alloc(vm, s->capacity, &s->dev)) != NULL) return st;
    /* Written on the host since: the device block catches up (also before a
     * write, which may cover only part of the storage). */
    if (s->written && !s->dev_valid) {
      ++vm->device_copies;
      st = dev_status(vm, vm->dev.to_device(vm->dev.self, s->dev, s->data, s->size));
      if (st != NULL) return st;
    }
    s->dev_valid = 1;
    if (write) {
      s->written = 1;
      s->host_stale = 1;
    }
    *out = s->dev + (uint64_t)((const uint8_t*)t->t.data + t->t.byte_offset - (const uint8_t*)s->data);
    return NULL;
  }
  if (write) return vm_error(vm, KILN_INTERNAL, "a device kernel's output is a constant or an input");
  /* Read-only host memory: the base tensor's device copy. */
  Tensor* base = t->storage != NULL ? (Tensor*)t->storage : t;
  const uint8_t* base_data = (const uint8_t*)base->t.data + base->t.byte_offset;
  const uint64_t offset = (uint64_t)((const uint8_t*)t->t.data + t->t.byte_offset - base_data);
  uint64_t bytes = 0;
  if (!tensor_bytes(base->t.dtype, base->t.ndim, base->t.shape, &bytes)) {
    return vm_error(vm, KILN_INTERNAL, "a kernel argument exceeds 2^56 bytes");
  }
  uint64_t* slot = &base->mirror;
  if (base->constant > 0 && vm->const_dev != NULL) slot = &vm->const_dev[base->constant - 1];
  if (*slot == 0) {
    uint64_t at = 0;
    if (slot == &base->mirror) {
      base->mirror_capacity = round64(bytes);
      st = dev_alloc(vm, base->mirror_capacity, &at);
    } else {
      st = dev_status(vm, vm->dev.alloc(vm->dev.self, round64(bytes), &at));
    }
    if (st != NULL) return st;
    ++vm->device_copies;
    st = dev_status(vm, vm->dev.to_device(vm->dev.self, at, base_data, bytes));
    if (st != NULL) {
      if (slot == &base->mirror) {
        dev_pool_put(vm, at, base->mirror_capacity);
      } else {
        vm->dev.release(vm->dev.self, at);
      }
      return st;
    }
    *slot = at;
  }
  *out = *slot + offset;
  return NULL;
}

/* Every tensor reachable from `o` (tuples, ADTs, sequences) made current on
 * the host: main's outputs are host memory. */
KilnStatus* kiln_vm_host_sync_tree(KilnVm* vm, Obj* o) {
  if (!vm->has_dev || o == NULL) return NULL;
  Obj* stack_mem[64];
  Obj** stack = stack_mem;
  uint64_t n = 0, cap = 64, visits = 0;
  KilnStatus* st = NULL;
  stack[n++] = o;
  while (n > 0 && st == NULL) {
    Obj* x = stack[--n];
    if (++visits > (UINT64_C(1) << 26)) { /* a cycle through references */
      st = vm_error(vm, KILN_INTERNAL, "main's result holds more than 2^26 objects");
      break;
    }
    if (x == NULL) continue;
    if (x->kind == OBJ_TENSOR) {
      st = kiln_vm_host_access(vm, (Tensor*)x, 0);
      continue;
    }
    if (x->kind != OBJ_ADT) continue; /* closures hold no output */
    Adt* a = (Adt*)x;
    for (int32_t i = 0; i < a->n; ++i) {
      if (n == cap) {
        Obj** grown = (Obj**)malloc(2 * cap * sizeof(Obj*));
        if (grown == NULL) {
          st = vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
          break;
        }
        memcpy(grown, stack, n * sizeof(Obj*));
        if (stack != stack_mem) free(stack);
        stack = grown;
        cap *= 2;
      }
      stack[n++] = a->fields[i];
    }
  }
  if (stack != stack_mem) free(stack);
  return st;
}

/* A device kernel's launch: every argument's device address (inputs made
 * current there, outputs written there), checked against the kernel's
 * parameters by the device's launch. */
KilnStatus* kiln_vm_invoke_device(KilnVm* vm, const KilnVmInstr* in, uint32_t n, uint32_t first_out) {
  uint64_t stack_data[32];
  uint64_t* data = n <= 32 ? stack_data : (uint64_t*)malloc(n * sizeof(uint64_t));
  if (data == NULL) return vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
  KilnStatus* st = NULL;
  for (uint32_t k = 0; k < n && st == NULL; ++k) {
    Tensor* t = (Tensor*)((uint8_t*)vm->kargs[k] - offsetof(Tensor, t));
    st = device_access(vm, t, k >= first_out, &data[k]);
  }
  if (st == NULL) {
    ++vm->kernel_calls;
    ++vm->device_launches;
    const uint64_t a = vm->trace != NULL ? kiln_now_ns() : 0;
    st = vm->dev.launch(vm->dev.self, (uint32_t)in->a, (const DLTensor* const*)vm->kargs, data, n);
    if (st != NULL) {
      KilnStatus* out = vm_error(vm, kiln_status_code(st), "kernel '%s' (on the device): %s",
                                 vm->p->kernel_names[in->a], kiln_status_message(st));
      kiln_status_free(st);
      st = out;
    } else if (vm->trace != NULL) {
      /* Traced: each launch waited for, so its time is its own. */
      st = dev_status(vm, vm->dev.synchronize(vm->dev.self));
      const uint64_t b = kiln_now_ns();
      if (st == NULL) {
        kiln_vm_trace_record(vm->trace, (uint32_t)in->a, a - vm->run_start_ns, b - a,
                             vm->kargs[n - (uint32_t)in->b]);
      }
    }
  }
  if (data != stack_data) free(data);
  return st;
}

KilnStatus* kiln_vm_set_device(KilnVm* vm, const KilnVmDevice* device) {
  if (device == NULL) return NULL;
  uint64_t* c = (uint64_t*)calloc(vm->p->num_constants > 0 ? vm->p->num_constants : 1, sizeof(uint64_t));
  if (c == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", vm->what);
  vm->dev = *device;
  vm->const_dev = c;
  vm->has_dev = 1;
  return NULL;
}

void kiln_vm_device_stats(const KilnVm* vm, uint64_t* launches, uint64_t* copies) {
  if (launches != NULL) *launches = vm != NULL ? vm->device_launches : 0;
  if (copies != NULL) *copies = vm != NULL ? vm->device_copies : 0;
}

KilnStatus* kiln_vm_device_synchronize(KilnVm* vm) {
  return vm->has_dev ? dev_status(vm, vm->dev.synchronize(vm->dev.self)) : NULL;
}

void kiln_vm_device_free(KilnVm* vm) {
  if (!vm->has_dev) return;
  for (uint32_t i = 0; i < vm->dev_pool_count; ++i) {
    vm->dev.release(vm->dev.self, (uint64_t)(uintptr_t)vm->dev_pool[i].data);
  }
  for (uint32_t c = 0; c < vm->p->num_constants; ++c) {
    if (vm->const_dev[c] != 0) vm->dev.release(vm->dev.self, vm->const_dev[c]);
  }
  free(vm->const_dev);
}
