/* File: runtime_c/vm.c
 *
 * The VM of runtime_c/vm.h. Objects carry a reference count (a VM is used by
 * one thread at a time, so plain integers); releasing an ADT or closure walks
 * its fields with an explicit work list, never by C recursion, so a list of a
 * million cells is freed in constant stack. Registers of every frame live on
 * one growable stack of object pointers, indexed from the frame's base.
 * A run's inputs and outputs (sequences, optionals, the output accessors)
 * are vm_io.c; the device side is vm_device.c.
 */
#include "runtime_c/vm.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kiln/threadpool.h"
#include "runtime_c/runtime_internal.h"
#include "runtime_c/vm_internal.h"
#include "runtime_c/vm_signature.h"

/* The helpers vm_device.c shares (runtime_c/vm_internal.h), by their short
 * names here. */
#define vm_error kiln_vm_error
#define tensor_bytes kiln_vm_tensor_bytes
#define obj_retain kiln_vm_obj_retain
#define obj_release kiln_vm_obj_release
#define new_tensor kiln_vm_new_tensor
#define kind_name kiln_vm_kind_name
/* The outputs and the sequences and optionals given to main (vm_io.c). */
#define drop_outputs kiln_vm_drop_outputs
#define take_outputs kiln_vm_take_outputs
#define build_sequence kiln_vm_build_sequence
#define wrap_optional kiln_vm_wrap_optional


/* Keeps `data` for reuse, or frees it when the pool is full. */
static void pool_put(KilnVm* vm, void* data, uint64_t capacity) {
  if (data == NULL) return;
  if (vm->pool_count == KILN_VM_POOL_BLOCKS || vm->pool_bytes + capacity > KILN_VM_POOL_BYTES) {
    free(data);
    return;
  }
  vm->pool[vm->pool_count].data = data;
  vm->pool[vm->pool_count].capacity = capacity;
  ++vm->pool_count;
  vm->pool_bytes += capacity;
}

/* A pooled block of at least `bytes` and at most twice that (the smallest
 * such) out of pool[0 .. *count), or NULL. */
void* kiln_vm_pool_pick(PoolBlock* pool, uint32_t* count, uint64_t* pool_bytes, uint64_t bytes,
                        uint64_t* capacity) {
  uint32_t best = *count;
  for (uint32_t i = 0; i < *count; ++i) {
    const uint64_t c = pool[i].capacity;
    if (c >= bytes && c / 2 <= bytes && (best == *count || c < pool[best].capacity)) best = i;
  }
  if (best == *count) return NULL;
  void* data = pool[best].data;
  *capacity = pool[best].capacity;
  *pool_bytes -= *capacity;
  pool[best] = pool[--*count];
  return data;
}

static void* pool_take(KilnVm* vm, uint64_t bytes, uint64_t* capacity) {
  return kiln_vm_pool_pick(vm->pool, &vm->pool_count, &vm->pool_bytes, bytes, capacity);
}


void kiln_vm_set_trace(KilnVm* vm, KilnVmTrace* trace) { vm->trace = trace; }

const KilnVmProgram* kiln_vm_program(const KilnVm* vm) { return vm->p; }

/* --------------------------------------------------------------- objects */

static uint64_t elem_bytes(DLDataType t) { return ((uint64_t)t.bits * t.lanes + 7) / 8; }

static void push_work(KilnVm* vm, Obj* o);

/* Frees o and, through the work list, everything only it kept alive. */
void kiln_vm_obj_release(KilnVm* vm, Obj* o) {
  if (o == NULL || --o->refs > 0) return;
  uint64_t floor = vm->num_work;
  push_work(vm, o);
  while (vm->num_work > floor) {
    Obj* x = vm->work[--vm->num_work];
    switch (x->kind) {
      case OBJ_STORAGE:
        pool_put(vm, ((Storage*)x)->data, ((Storage*)x)->capacity);
        if (((Storage*)x)->dev != 0) kiln_vm_dev_pool_put(vm, ((Storage*)x)->dev, ((Storage*)x)->capacity);
        break;
      case OBJ_TENSOR: {
        if (((Tensor*)x)->mirror != 0) {
          kiln_vm_dev_pool_put(vm, ((Tensor*)x)->mirror, ((Tensor*)x)->mirror_capacity);
        }
        Obj* s = ((Tensor*)x)->storage;
        if (s != NULL && --s->refs == 0) push_work(vm, s);
        break;
      }
      default: {
        Adt* a = (Adt*)x;
        for (int32_t i = 0; i < a->n; ++i) {
          Obj* f = a->fields[i];
          if (f != NULL && --f->refs == 0) push_work(vm, f);
        }
        break;
      }
    }
    free(x);
  }
}

/* The work list never needs more entries than objects exist; if growing it
 * fails, the object leaks rather than the VM crashing. */
static void push_work(KilnVm* vm, Obj* o) {
  if (vm->num_work == vm->cap_work) {
    uint64_t cap = vm->cap_work ? vm->cap_work * 2 : 256;
    Obj** w = (Obj**)realloc(vm->work, cap * sizeof(Obj*));
    if (w == NULL) return;
    vm->work = w;
    vm->cap_work = cap;
  }
  vm->work[vm->num_work++] = o;
}

Tensor* kiln_vm_new_tensor(DLDataType dtype, int32_t ndim, const int64_t* shape) {
  Tensor* t = (Tensor*)calloc(1, sizeof(Tensor));
  if (t == NULL) return NULL;
  t->h.kind = OBJ_TENSOR;
  t->h.refs = 1;
  t->t.device.device_type = kDLCPU;
  t->t.dtype = dtype;
  t->t.ndim = ndim;
  if (ndim > 0) memcpy(t->shape, shape, (size_t)ndim * sizeof(int64_t));
  t->t.shape = t->shape;
  return t;
}

/* A scalar held in the tensor itself. */
static Tensor* new_scalar(DLDataType dtype, int64_t value) {
  Tensor* t = new_tensor(dtype, 0, NULL);
  if (t == NULL) return NULL;
  t->t.data = t->inline_data;
  if (dtype.bits == 32) {
    int32_t v = (int32_t)value;
    memcpy(t->inline_data, &v, sizeof v);
  } else {
    memcpy(t->inline_data, &value, sizeof value);
  }
  return t;
}

/* ------------------------------------------------------------------ errors */

KilnStatus* kiln_vm_error(const KilnVm* vm, KilnStatusCode code, const char* format, ...) {
  char message[1200];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof message, format, ap);
  va_end(ap);
  if (vm->num_frames == 0) return kiln_status_create(code, "%s: VM: %s", vm->what, message);
  const Frame* f = &vm->frames[vm->num_frames - 1];
  const KilnVmFunc* fn = &vm->p->functions[f->func];
  return kiln_status_create(code, "%s: VM: function '%s' instruction %u (%s): %s", vm->what,
                            fn->name, f->pc, kiln_vm_opcode_name(fn->instrs[f->pc].op), message);
}

const char* kiln_vm_kind_name(const Obj* o) {
  if (o == NULL) return "nothing (an empty register)";
  switch (o->kind) {
    case OBJ_TENSOR: return "a tensor";
    case OBJ_STORAGE: return "a storage";
    case OBJ_ADT: return "an ADT";
    default: return "a closure";
  }
}

/* ---------------------------------------------------------------- registers */

static Obj** reg_at(KilnVm* vm, int32_t r) {
  return &vm->regs[vm->frames[vm->num_frames - 1].base + (uint64_t)r];
}

/* Stores o (a reference the caller hands over) into register r. */
static void set_reg(KilnVm* vm, int32_t r, Obj* o) {
  Obj** slot = reg_at(vm, r);
  Obj* old = *slot;
  *slot = o;
  obj_release(vm, old);
}

static KilnStatus* get_obj(KilnVm* vm, int32_t r, int32_t kind, const char* operand, Obj** out) {
  Obj* o = *reg_at(vm, r);
  if (o == NULL || (kind != 0 && o->kind != kind)) {
    const char* expected = kind == OBJ_TENSOR    ? "a tensor"
                           : kind == OBJ_STORAGE ? "a storage"
                           : kind == OBJ_ADT     ? "an ADT"
                           : kind == OBJ_CLOSURE ? "a closure"
                                                 : "a value";
    return vm_error(vm, KILN_INTERNAL, "%s register %d holds %s, expected %s", operand, (int)r,
                    kind_name(o), expected);
  }
  *out = o;
  return NULL;
}

/* Element i of an integer/bool tensor as int64. */
static int tensor_int(const DLTensor* t, uint64_t i, int64_t* out) {
  const uint8_t* d = (const uint8_t*)t->data + t->byte_offset;
  if (t->dtype.lanes != 1) return 0;
  if (t->dtype.code == kDLInt) {
    switch (t->dtype.bits) {
      case 8: *out = ((const int8_t*)d)[i]; return 1;
      case 16: *out = ((const int16_t*)d)[i]; return 1;
      case 32: *out = ((const int32_t*)d)[i]; return 1;
      case 64: *out = ((const int64_t*)d)[i]; return 1;
      default: return 0;
    }
  }
  if (t->dtype.code == kDLUInt || t->dtype.code == 6) {
    switch (t->dtype.bits) {
      case 8: *out = ((const uint8_t*)d)[i]; return 1;
      case 16: *out = ((const uint16_t*)d)[i]; return 1;
      case 32: *out = ((const uint32_t*)d)[i]; return 1;
      case 64: *out = (int64_t)((const uint64_t*)d)[i]; return 1;
      default: return 0;
    }
  }
  return 0;
}

static uint64_t num_elements(const DLTensor* t) {
  uint64_t n = 1;
  for (int32_t d = 0; d < t->ndim; ++d) n *= (uint64_t)t->shape[d];
  return n;
}

/* A one-element integer tensor's value (If, AllocStorage sizes). */
static KilnStatus* scalar_of(KilnVm* vm, int32_t r, const char* operand, int64_t* out) {
  Obj* o = NULL;
  KilnStatus* st = get_obj(vm, r, OBJ_TENSOR, operand, &o);
  if (st == NULL) st = kiln_vm_host_access(vm, (Tensor*)o, 0);
  if (st != NULL) return st;
  const DLTensor* t = &((Tensor*)o)->t;
  if (num_elements(t) != 1 || !tensor_int(t, 0, out)) {
    return vm_error(vm, KILN_INTERNAL, "%s register %d is not a one-element integer tensor",
                    operand, (int)r);
  }
  return NULL;
}

/* An int64 shape tensor (rank 1, at most 32 values, each >= 0). */
static KilnStatus* shape_of_reg(KilnVm* vm, int32_t r, int32_t* ndim, int64_t* dims) {
  Obj* o = NULL;
  KilnStatus* st = get_obj(vm, r, OBJ_TENSOR, "shape", &o);
  if (st == NULL) st = kiln_vm_host_access(vm, (Tensor*)o, 0);
  if (st != NULL) return st;
  const DLTensor* t = &((Tensor*)o)->t;
  if (t->ndim != 1 || t->shape[0] > 32 || t->shape[0] < 0) {
    return vm_error(vm, KILN_INTERNAL, "shape register %d is not a vector of at most 32 dims",
                    (int)r);
  }
  for (int64_t i = 0; i < t->shape[0]; ++i) {
    if (!tensor_int(t, (uint64_t)i, &dims[i]) || dims[i] < 0) {
      return vm_error(vm, KILN_INTERNAL, "shape register %d: dim %lld is not a size >= 0", (int)r,
                      (long long)i);
    }
  }
  *ndim = (int32_t)t->shape[0];
  return NULL;
}

/* prod(dims) * bytes into *out; 0 on overflow past KILN_VM_MAX_BYTES. */
int kiln_vm_tensor_bytes(DLDataType dtype, int32_t ndim, const int64_t* dims, uint64_t* out) {
  uint64_t n = elem_bytes(dtype);
  for (int32_t d = 0; d < ndim; ++d) {
    uint64_t v = (uint64_t)dims[d];
    if (v != 0 && n > KILN_VM_MAX_BYTES / v) return 0;
    n *= v;
  }
  if (n > KILN_VM_MAX_BYTES) return 0;
  *out = n;
  return 1;
}

/* ----------------------------------------------------------------- frames */

static KilnStatus* push_frame(KilnVm* vm, uint32_t func, int32_t ret_reg) {
  if (vm->num_frames >= KILN_VM_MAX_CALL_DEPTH) {
    return vm_error(vm, KILN_RESOURCE_EXHAUSTED,
                    "calls nest deeper than %d frames (unbounded recursion?)",
                    KILN_VM_MAX_CALL_DEPTH);
  }
  const uint32_t nr = vm->p->functions[func].num_registers;
  if (vm->num_regs + nr > vm->cap_regs) {
    uint64_t cap = vm->cap_regs ? vm->cap_regs : 1024;
    while (cap < vm->num_regs + nr) cap *= 2;
    Obj** r = (Obj**)realloc(vm->regs, cap * sizeof(Obj*));
    if (r == NULL) return vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory for registers");
    vm->regs = r;
    vm->cap_regs = cap;
  }
  if (vm->num_frames == vm->cap_frames) {
    uint32_t cap = vm->cap_frames ? vm->cap_frames * 2 : 64;
    Frame* f = (Frame*)realloc(vm->frames, cap * sizeof(Frame));
    if (f == NULL) return vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory for frames");
    vm->frames = f;
    vm->cap_frames = cap;
  }
  memset(vm->regs + vm->num_regs, 0, nr * sizeof(Obj*));
  Frame* f = &vm->frames[vm->num_frames++];
  f->func = func;
  f->pc = 0;
  f->ret_reg = ret_reg;
  f->base = vm->num_regs;
  vm->num_regs += nr;
  return NULL;
}

static void pop_frame(KilnVm* vm) {
  Frame* f = &vm->frames[vm->num_frames - 1];
  for (uint64_t i = f->base; i < vm->num_regs; ++i) {
    Obj* o = vm->regs[i];
    vm->regs[i] = NULL;
    obj_release(vm, o);
  }
  vm->num_regs = f->base;
  --vm->num_frames;
}

static void unwind(KilnVm* vm) {
  while (vm->num_frames > 0) pop_frame(vm);
}

/* ------------------------------------------------------------ the program */

KilnStatus* kiln_vm_create(const KilnVmProgram* program, const DLTensor* constants,
                           KilnKernelContext* ctx, const char* what, KilnVm** out) {
  *out = NULL;
  KilnVm* vm = (KilnVm*)calloc(1, sizeof(KilnVm));
  if (vm == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", what);
  vm->p = program;
  vm->constants = constants;
  {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    vm->max_storage_bytes = KILN_VM_MAX_BYTES;
    if (pages > 0 && page > 0 && (uint64_t)pages < KILN_VM_MAX_BYTES / (uint64_t)page) {
      vm->max_storage_bytes = (uint64_t)pages * (uint64_t)page;
    }
  }
  vm->ctx = ctx;
  snprintf(vm->what, sizeof vm->what, "%s", what != NULL ? what : "VM");
  vm->outputs = (Obj**)calloc(program->num_outputs, sizeof(Obj*));
  vm->seq_elems = (const DLTensor***)calloc(program->num_outputs, sizeof(const DLTensor**));
  vm->seq_counts = (uint64_t*)calloc(program->num_outputs, sizeof(uint64_t));
  vm->output_none = (uint8_t*)calloc(program->num_outputs > 0 ? program->num_outputs : 1, 1);
  if (vm->outputs == NULL || vm->seq_elems == NULL || vm->seq_counts == NULL || vm->output_none == NULL) {
    free(vm->outputs);
    free((void*)vm->seq_elems);
    free(vm->seq_counts);
    free(vm->output_none);
    free(vm);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", what);
  }
  *out = vm;
  return NULL;
}

void kiln_vm_free(KilnVm* vm) {
  if (vm == NULL) return;
  unwind(vm);
  drop_outputs(vm);
  free(vm->outputs);
  free((void*)vm->seq_elems);
  free(vm->seq_counts);
  free(vm->output_none);
  free(vm->regs);
  free(vm->frames);
  free(vm->kargs);
  free(vm->work);
  for (uint32_t i = 0; i < vm->pool_count; ++i) free(vm->pool[i].data);
  kiln_vm_device_free(vm);
  free(vm);
}

void kiln_vm_last_run_stats(const KilnVm* vm, uint64_t* instructions, uint64_t* kernel_calls) {
  if (instructions != NULL) *instructions = vm != NULL ? vm->instructions : 0;
  if (kernel_calls != NULL) *kernel_calls = vm != NULL ? vm->kernel_calls : 0;
}

KilnStatus* kiln_vm_check_input(const KilnVm* vm, uint32_t index, const DLTensor* x,
                                const char* name) {
  return kiln_vm_signature_check_input(vm->p, index, x, name);
}

/* ------------------------------------------------------------------- run */

/* Appends the tensors of register object o (tuples flattened, depth-first)
 * to vm->kargs[*n]. */
static KilnStatus* flatten_arg(KilnVm* vm, Obj* o, uint32_t* n, int depth) {
  if (o == NULL) return vm_error(vm, KILN_INTERNAL, "a kernel argument register is empty");
  if (o->kind == OBJ_TENSOR) {
    if (*n >= KILN_VM_MAX_KERNEL_ARGS) {
      return vm_error(vm, KILN_INTERNAL, "more than %d kernel arguments", KILN_VM_MAX_KERNEL_ARGS);
    }
    if (*n >= vm->cap_kargs) {
      uint32_t cap = vm->cap_kargs ? vm->cap_kargs * 2 : 64;
      DLTensor** k = (DLTensor**)realloc(vm->kargs, cap * sizeof(DLTensor*));
      if (k == NULL) return vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
      vm->kargs = k;
      vm->cap_kargs = cap;
    }
    vm->kargs[(*n)++] = &((Tensor*)o)->t;
    return NULL;
  }
  if (o->kind != OBJ_ADT || depth > 8) {
    return vm_error(vm, KILN_INTERNAL, "a kernel argument is %s, expected a tensor or a tuple",
                    kind_name(o));
  }
  Adt* a = (Adt*)o;
  for (int32_t i = 0; i < a->n; ++i) {
    KilnStatus* st = flatten_arg(vm, a->fields[i], n, depth + 1);
    if (st != NULL) return st;
  }
  return NULL;
}

static KilnStatus* invoke_packed(KilnVm* vm, const KilnVmInstr* in) {
  uint32_t n = 0, first_out = UINT32_MAX;
  for (int32_t i = 0; i < in->count; ++i) {
    const uint32_t before = n;
    if (i == in->count - in->b) first_out = before;
    KilnStatus* st = flatten_arg(vm, *reg_at(vm, in->list[i]), &n, 0);
    if (st != NULL) return st;
    /* Outputs are written: never a constant (read-only memory) or an input. */
    if (i >= in->count - in->b) {
      for (uint32_t k = before; k < n; ++k) {
        const Tensor* t = (const Tensor*)((const uint8_t*)vm->kargs[k] - offsetof(Tensor, t));
        if (t->readonly) {
          return vm_error(vm, KILN_INTERNAL,
                          "kernel '%s': output register %d holds a constant or an input",
                          vm->p->kernel_names[in->a], (int)in->list[i]);
        }
      }
    }
  }
  if (first_out > n) first_out = n;
  if (vm->has_dev && vm->dev.is_device[in->a]) return kiln_vm_invoke_device(vm, in, n, first_out);
  if (vm->has_dev) {
    /* A host kernel: its inputs current on the host, its outputs written there. */
    for (uint32_t k = 0; k < n; ++k) {
      Tensor* t = (Tensor*)((uint8_t*)vm->kargs[k] - offsetof(Tensor, t));
      KilnStatus* st = kiln_vm_host_access(vm, t, k >= first_out);
      if (st != NULL) return st;
    }
  }
  KilnKernelFn fn = vm->p->kernels[in->a];
  if (fn == NULL) {
    return vm_error(vm, KILN_INTERNAL, "kernel '%s' is not resolved", vm->p->kernel_names[in->a]);
  }
  ++vm->kernel_calls;
  const uint64_t a = vm->trace != NULL ? kiln_now_ns() : 0;
  int32_t rc = fn(vm->kargs, (int32_t)n, vm->ctx);
  if (vm->trace != NULL && rc == 0) {
    const uint64_t b = kiln_now_ns();
    kiln_vm_trace_record(vm->trace, (uint32_t)in->a, a - vm->run_start_ns, b - a,
                         vm->kargs[n - (uint32_t)in->b]);
  }
  if (rc != 0) {
    const char* msg = vm->ctx != NULL ? kiln_kernel_context_error(vm->ctx) : kiln_kernel_last_error();
    KilnStatus* st = vm_error(vm, rc == KILN_KERNEL_EINVAL ? KILN_INVALID_ARGUMENT : KILN_INTERNAL,
                              "kernel '%s' failed with code %d: %s", vm->p->kernel_names[in->a],
                              (int)rc, (msg != NULL && msg[0] != '\0') ? msg : "(no message)");
    if (vm->ctx != NULL) kiln_kernel_context_clear_error(vm->ctx);
    return st;
  }
  return NULL;
}

static KilnStatus* alloc_storage(KilnVm* vm, const KilnVmInstr* in, Obj** out) {
  Obj* o = NULL;
  KilnStatus* st = get_obj(vm, in->b, OBJ_TENSOR, "size", &o);
  if (st != NULL) return st;
  const DLTensor* t = &((Tensor*)o)->t;
  uint64_t bytes = 0;
  if (t->ndim == 1) {
    int32_t ndim = 0;
    int64_t dims[32];
    if ((st = shape_of_reg(vm, in->b, &ndim, dims)) != NULL) return st;
    if (!tensor_bytes(in->dtype, ndim, dims, &bytes)) {
      return vm_error(vm, KILN_RESOURCE_EXHAUSTED, "a tensor of that shape exceeds 2^56 bytes");
    }
  } else {
    int64_t v = 0;
    if ((st = scalar_of(vm, in->b, "size", &v)) != NULL) return st;
    if (v < 0 || (uint64_t)v > KILN_VM_MAX_BYTES) {
      return vm_error(vm, KILN_RESOURCE_EXHAUSTED, "storage of %lld bytes", (long long)v);
    }
    bytes = (uint64_t)v;
  }
  /* More than the machine has is refused before asking malloc (which may
   * overcommit, or abort under a sanitizer). */
  if (bytes > vm->max_storage_bytes) {
    return vm_error(vm, KILN_RESOURCE_EXHAUSTED,
                    "a storage of %llu bytes is more than this machine's memory (%llu bytes)",
                    (unsigned long long)bytes, (unsigned long long)vm->max_storage_bytes);
  }
  Storage* s = (Storage*)calloc(1, sizeof(Storage));
  if (s == NULL) return vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
  s->h.kind = OBJ_STORAGE;
  s->h.refs = 1;
  s->size = bytes;
  uint64_t align = in->c < 64 ? 64 : (uint64_t)in->c;
  uint64_t rounded = (bytes + align - 1) / align * align;
  if (rounded == 0) rounded = align;
  s->capacity = rounded;
  /* Pooled blocks are 64-byte aligned; a larger alignment allocates. */
  if (align == 64) s->data = pool_take(vm, rounded, &s->capacity);
  if (s->data == NULL) {
    s->capacity = rounded;
    s->data = aligned_alloc((size_t)align, (size_t)rounded);
  }
  if (s->data == NULL) {
    free(s);
    return vm_error(vm, KILN_RESOURCE_EXHAUSTED, "cannot allocate %llu bytes",
                    (unsigned long long)bytes);
  }
  *out = &s->h;
  return NULL;
}

/* A tensor of `dtype` and `dims` at `offset` of the storage in register r. */
static KilnStatus* alloc_tensor(KilnVm* vm, int32_t r, int64_t offset, DLDataType dtype,
                                int32_t ndim, const int64_t* dims, Obj** out) {
  Obj* o = NULL;
  KilnStatus* st = get_obj(vm, r, OBJ_STORAGE, "storage", &o);
  if (st != NULL) return st;
  Storage* s = (Storage*)o;
  uint64_t bytes = 0;
  if (!tensor_bytes(dtype, ndim, dims, &bytes) || (uint64_t)offset > s->size ||
      bytes > s->size - (uint64_t)offset) {
    return vm_error(vm, KILN_INTERNAL,
                    "a tensor of %llu bytes at offset %lld does not fit its storage of %llu bytes",
                    (unsigned long long)bytes, (long long)offset, (unsigned long long)s->size);
  }
  if ((uint64_t)offset % elem_bytes(dtype) != 0) {
    return vm_error(vm, KILN_INTERNAL, "offset %lld is not aligned to the element size",
                    (long long)offset);
  }
  Tensor* t = new_tensor(dtype, ndim, dims);
  if (t == NULL) return vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
  t->t.data = (uint8_t*)s->data + offset;
  t->storage = o;
  obj_retain(o);
  *out = &t->h;
  return NULL;
}

static KilnStatus* alloc_adt(KilnVm* vm, int32_t kind, int32_t tag, int32_t n, const int32_t* regs,
                             Obj* const* prefix, int32_t num_prefix, Obj** out) {
  Adt* a = (Adt*)calloc(1, sizeof(Adt) + (size_t)(n + num_prefix) * sizeof(Obj*));
  if (a == NULL) return vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
  a->h.kind = kind;
  a->h.refs = 1;
  a->tag = tag;
  a->n = n + num_prefix;
  for (int32_t i = 0; i < num_prefix; ++i) {
    a->fields[i] = prefix[i];
    obj_retain(prefix[i]);
  }
  for (int32_t i = 0; i < n; ++i) {
    Obj* f = *reg_at(vm, regs[i]);
    if (f == NULL) {
      free(a);
      return vm_error(vm, KILN_INTERNAL, "field register %d is empty", (int)regs[i]);
    }
    a->fields[num_prefix + i] = f;
    obj_retain(f);
  }
  *out = &a->h;
  return NULL;
}

/* Moves the call's arguments into the new frame (pushed already). */
static void pass_args(KilnVm* vm, uint64_t caller_base, Obj* const* prefix, int32_t num_prefix,
                      const int32_t* args, int32_t n) {
  Frame* f = &vm->frames[vm->num_frames - 1];
  for (int32_t i = 0; i < num_prefix; ++i) {
    vm->regs[f->base + (uint64_t)i] = prefix[i];
    obj_retain(prefix[i]);
  }
  for (int32_t i = 0; i < n; ++i) {
    Obj* o = vm->regs[caller_base + (uint64_t)args[i]];
    vm->regs[f->base + (uint64_t)(num_prefix + i)] = o;
    obj_retain(o);
  }
}

KilnStatus* kiln_vm_run(KilnVm* vm, const DLTensor* const* inputs) {
  return kiln_vm_run_with(vm, inputs, NULL, NULL);
}

KilnStatus* kiln_vm_run_with(KilnVm* vm, const DLTensor* const* inputs, const KilnVmSequence* sequences,
                             const uint8_t* none) {
  const KilnVmProgram* p = vm->p;
  drop_outputs(vm);
  vm->instructions = 0;
  vm->kernel_calls = 0;
  if (vm->trace != NULL) {
    vm->trace->num_calls = 0;
    vm->trace->total_ns = 0;
    vm->trace->instructions = 0;
    vm->run_start_ns = kiln_now_ns();
  }
  KilnStatus* st = NULL;
  for (uint32_t i = 0; i < p->num_inputs && st == NULL; ++i) {
    char name[32];
    snprintf(name, sizeof name, "#%u", i);
    if (p->inputs[i].optional && none != NULL && none[i]) continue;
    if (p->inputs[i].sequence) {
      if (sequences == NULL || (sequences[i].count > 0 && sequences[i].elements == NULL)) {
        return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: input %u (a sequence) is not set", vm->what, i);
      }
      for (uint32_t k = 0; k < sequences[i].count && st == NULL; ++k) {
        st = kiln_vm_signature_check_element(p, i, k, &sequences[i].elements[k], name);
      }
      continue;
    }
    if (inputs[i] == NULL) {
      return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: input %u is not set", vm->what, i);
    }
    st = kiln_vm_check_input(vm, i, inputs[i], name);
  }
  if (st == NULL) st = kiln_vm_signature_check_dims(vm->p, inputs, vm->what);
  if (st != NULL) return st;
  st = push_frame(vm, p->main, -1);
  if (st != NULL) return st;
  for (uint32_t i = 0; i < p->num_inputs; ++i) {
    const int optional = p->inputs[i].optional;
    Obj* value = NULL;
    if (optional && none != NULL && none[i]) {
      value = NULL; /* None */
    } else if (p->inputs[i].sequence) {
      value = build_sequence(vm, &sequences[i]);
      if (value == NULL) {
        unwind(vm);
        return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", vm->what);
      }
    } else {
      Tensor* t = new_tensor(inputs[i]->dtype, inputs[i]->ndim, inputs[i]->shape);
      if (t == NULL) {
        unwind(vm);
        return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", vm->what);
      }
      t->t.data = (uint8_t*)inputs[i]->data + inputs[i]->byte_offset;
      t->readonly = 1;
      value = &t->h;
    }
    if (optional) {
      value = wrap_optional(vm, value);
      if (value == NULL) {
        unwind(vm);
        return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", vm->what);
      }
    }
    set_reg(vm, (int32_t)i, value);
  }

  Obj* result = NULL;
  while (st == NULL) {
    Frame* f = &vm->frames[vm->num_frames - 1];
    const KilnVmFunc* fn = &p->functions[f->func];
    const KilnVmInstr* in = &fn->instrs[f->pc];
    ++vm->instructions;
    uint32_t next = f->pc + 1;
    Obj* o = NULL;
    switch (in->op) {
      case KILN_VM_MOVE: {
        Obj* src = *reg_at(vm, in->b);
        obj_retain(src);
        set_reg(vm, in->a, src);
        break;
      }
      case KILN_VM_RET: {
        Obj* r = *reg_at(vm, in->a);
        if (r == NULL) {
          st = vm_error(vm, KILN_INTERNAL, "returns empty register %d", (int)in->a);
          break;
        }
        obj_retain(r);
        int32_t dst = f->ret_reg;
        pop_frame(vm);
        if (vm->num_frames == 0) {
          result = r;
          goto done;
        }
        set_reg(vm, dst, r);
        continue; /* the caller's pc already points past its call */
      }
      case KILN_VM_INVOKE: {
        const uint64_t caller_base = f->base;
        const uint32_t caller = vm->num_frames - 1;
        if ((st = push_frame(vm, (uint32_t)in->b, in->a)) != NULL) break;
        vm->frames[caller].pc = next; /* where its Ret resumes */
        pass_args(vm, caller_base, NULL, 0, in->list, in->count);
        continue;
      }
      case KILN_VM_INVOKE_CLOSURE: {
        if ((st = get_obj(vm, in->b, OBJ_CLOSURE, "closure", &o)) != NULL) break;
        Adt* c = (Adt*)o;
        const KilnVmFunc* callee = &p->functions[c->tag];
        if ((uint32_t)(c->n + in->count) != callee->num_params) {
          st = vm_error(vm, KILN_INTERNAL,
                        "calls a closure of '%s' with %d arguments after %d captured; it has %u "
                        "parameters",
                        callee->name, (int)in->count, (int)c->n, callee->num_params);
          break;
        }
        const uint64_t caller_base = f->base;
        const uint32_t caller = vm->num_frames - 1;
        if ((st = push_frame(vm, (uint32_t)c->tag, in->a)) != NULL) break;
        vm->frames[caller].pc = next;
        pass_args(vm, caller_base, c->fields, c->n, in->list, in->count);
        continue;
      }
      case KILN_VM_INVOKE_PACKED:
        st = invoke_packed(vm, in);
        break;
      case KILN_VM_ALLOC_TENSOR:
        st = alloc_tensor(vm, in->b, in->imm, in->dtype, in->count, in->dims, &o);
        if (st == NULL) set_reg(vm, in->a, o);
        break;
      case KILN_VM_ALLOC_TENSOR_REG: {
        int32_t ndim = 0;
        int64_t dims[32];
        st = shape_of_reg(vm, in->c, &ndim, dims);
        if (st == NULL) st = alloc_tensor(vm, in->b, in->imm, in->dtype, ndim, dims, &o);
        if (st == NULL) set_reg(vm, in->a, o);
        break;
      }
      case KILN_VM_ALLOC_ADT:
        st = alloc_adt(vm, OBJ_ADT, in->b, in->count, in->list, NULL, 0, &o);
        if (st == NULL) set_reg(vm, in->a, o);
        break;
      case KILN_VM_ALLOC_CLOSURE:
        st = alloc_adt(vm, OBJ_CLOSURE, in->b, in->count, in->list, NULL, 0, &o);
        if (st == NULL) set_reg(vm, in->a, o);
        break;
      case KILN_VM_GET_FIELD: {
        if ((st = get_obj(vm, in->b, 0, "object", &o)) != NULL) break;
        if (o->kind != OBJ_ADT && o->kind != OBJ_CLOSURE) {
          st = vm_error(vm, KILN_INTERNAL, "object register %d holds %s, expected an ADT",
                        (int)in->b, kind_name(o));
          break;
        }
        Adt* a = (Adt*)o;
        if (in->c >= a->n) {
          st = vm_error(vm, KILN_INTERNAL, "field %d of an ADT with %d fields", (int)in->c,
                        (int)a->n);
          break;
        }
        Obj* field = a->fields[in->c];
        obj_retain(field);
        set_reg(vm, in->a, field);
        break;
      }
      case KILN_VM_IF: {
        int64_t test = 0, target = 0;
        if ((st = scalar_of(vm, in->a, "test", &test)) != NULL) break;
        if ((st = scalar_of(vm, in->b, "target", &target)) != NULL) break;
        next = (uint32_t)(test == target ? in->c : in->d);
        break;
      }
      case KILN_VM_LOAD_CONST: {
        const DLTensor* c = &vm->constants[in->b];
        Tensor* t = new_tensor(c->dtype, c->ndim, c->shape);
        if (t == NULL) {
          st = vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
          break;
        }
        t->t.data = c->data;
        t->readonly = 1;
        t->constant = in->b + 1;
        set_reg(vm, in->a, &t->h);
        break;
      }
      case KILN_VM_GOTO:
        next = (uint32_t)in->a;
        break;
      case KILN_VM_GET_TAG: {
        if ((st = get_obj(vm, in->b, OBJ_ADT, "object", &o)) != NULL) break;
        DLDataType i32 = {kDLInt, 32, 1};
        Tensor* t = new_scalar(i32, ((Adt*)o)->tag);
        if (t == NULL) {
          st = vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
          break;
        }
        set_reg(vm, in->a, &t->h);
        break;
      }
      case KILN_VM_LOAD_CONSTI: {
        DLDataType i64 = {kDLInt, 64, 1};
        Tensor* t = new_scalar(i64, in->imm);
        if (t == NULL) {
          st = vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
          break;
        }
        set_reg(vm, in->a, &t->h);
        break;
      }
      case KILN_VM_FATAL:
        st = vm_error(vm, KILN_FAILED_PRECONDITION, "%.*s", (int)in->text_size, in->text);
        break;
      case KILN_VM_ALLOC_STORAGE:
        st = alloc_storage(vm, in, &o);
        if (st == NULL) set_reg(vm, in->a, o);
        break;
      case KILN_VM_SHAPE_OF: {
        if ((st = get_obj(vm, in->b, OBJ_TENSOR, "tensor", &o)) != NULL) break;
        const DLTensor* src = &((Tensor*)o)->t;
        /* The shape lives in a storage of its own. */
        Storage* s = (Storage*)calloc(1, sizeof(Storage));
        int64_t n = src->ndim;
        Tensor* t = new_tensor((DLDataType){kDLInt, 64, 1}, 1, &n);
        if (s != NULL) s->data = aligned_alloc(64, 64 * 5);
        if (s == NULL || t == NULL || s->data == NULL) {
          if (s != NULL) free(s->data);
          free(s);
          free(t);
          st = vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
          break;
        }
        s->h.kind = OBJ_STORAGE;
        s->h.refs = 1;
        s->size = 64 * 5;
        s->capacity = 64 * 5;
        s->written = 1; /* on the host */
        memcpy(s->data, src->shape, (size_t)src->ndim * sizeof(int64_t));
        t->t.data = s->data;
        t->storage = &s->h;
        set_reg(vm, in->a, &t->h);
        break;
      }
      case KILN_VM_RESHAPE_TENSOR: {
        if ((st = get_obj(vm, in->b, OBJ_TENSOR, "tensor", &o)) != NULL) break;
        int32_t ndim = 0;
        int64_t dims[32];
        if ((st = shape_of_reg(vm, in->c, &ndim, dims)) != NULL) break;
        Tensor* src = (Tensor*)o;
        uint64_t have = 0, want = 0;
        if (!tensor_bytes(src->t.dtype, src->t.ndim, src->t.shape, &have) ||
            !tensor_bytes(src->t.dtype, ndim, dims, &want) || have != want) {
          st = vm_error(vm, KILN_INVALID_ARGUMENT,
                        "cannot reshape a tensor of %llu bytes to one of %llu bytes",
                        (unsigned long long)have, (unsigned long long)want);
          break;
        }
        Tensor* t = new_tensor(src->t.dtype, ndim, dims);
        if (t == NULL) {
          st = vm_error(vm, KILN_RESOURCE_EXHAUSTED, "out of memory");
          break;
        }
        t->t.data = src->t.data;
        t->t.byte_offset = src->t.byte_offset;
        t->readonly = src->readonly;
        /* A view keeps what keeps the source alive: its storage, or the
         * source itself (an inline scalar, an input, a constant). */
        t->storage = src->storage != NULL ? src->storage : &src->h;
        obj_retain(t->storage);
        set_reg(vm, in->a, &t->h);
        break;
      }
      case KILN_VM_DEVICE_COPY: {
        if (in->c != kDLCPU || in->d != kDLCPU) {
          st = vm_error(vm, KILN_UNIMPLEMENTED,
                        "copies between device types %d and %d: this runtime has the CPU only",
                        (int)in->c, (int)in->d);
          break;
        }
        if ((st = get_obj(vm, in->b, OBJ_TENSOR, "source", &o)) != NULL) break;
        obj_retain(o); /* CPU to CPU: the same immutable tensor */
        set_reg(vm, in->a, o);
        break;
      }
      case KILN_VM_SET_FIELD: {
        if ((st = get_obj(vm, in->a, OBJ_ADT, "object", &o)) != NULL) break;
        Adt* a = (Adt*)o;
        if (in->b >= a->n) {
          st = vm_error(vm, KILN_INTERNAL, "field %d of an ADT with %d fields", (int)in->b,
                        (int)a->n);
          break;
        }
        Obj* v = *reg_at(vm, in->c);
        if (v == NULL) {
          st = vm_error(vm, KILN_INTERNAL, "source register %d is empty", (int)in->c);
          break;
        }
        obj_retain(v);
        Obj* old = a->fields[in->b];
        a->fields[in->b] = v;
        obj_release(vm, old);
        break;
      }
      case KILN_VM_KILL_REGISTER:
        set_reg(vm, in->a, NULL);
        break;
      default:
        st = vm_error(vm, KILN_INTERNAL, "unknown opcode %d", (int)in->op);
        break;
    }
    if (st != NULL) break;
    vm->frames[vm->num_frames - 1].pc = next;
  }
  unwind(vm);
  return st;

done:
  /* With a device: every launch done (a failure named), the outputs on the host. */
  st = kiln_vm_device_synchronize(vm);
  if (st == NULL) st = kiln_vm_host_sync_tree(vm, result);
  if (st == NULL) st = take_outputs(vm, result);
  obj_release(vm, result);
  if (vm->trace != NULL) {
    vm->trace->total_ns = kiln_now_ns() - vm->run_start_ns;
    vm->trace->instructions = vm->instructions;
  }
  return st;
}
