/* File: runtime_c/vm_internal.h  (internal to vm.c, vm_io.c and vm_device.c)
 *
 * The VM's objects and state (runtime_c/vm.h is the interface): reference-
 * counted tensors, storages, ADTs and closures, the frames, the pools of
 * freed host and device blocks, and the few helpers vm.c, vm_io.c (a run's
 * inputs and outputs) and vm_device.c (the device side: where each storage's
 * bytes live, copies, launches) share.
 */
#ifndef KILN_RUNTIME_C_VM_INTERNAL_H_
#define KILN_RUNTIME_C_VM_INTERNAL_H_

#include <stdint.h>

#include "runtime_c/vm.h"

/* Largest storage one AllocStorage may ask for (as the graph executor). */
#define KILN_VM_MAX_BYTES (UINT64_C(1) << 56)
/* Most tensors one InvokePacked may pass after flattening tuples. */
#define KILN_VM_MAX_KERNEL_ARGS 65536

enum { OBJ_TENSOR = 1, OBJ_STORAGE = 2, OBJ_ADT = 3, OBJ_CLOSURE = 4 };

typedef struct KilnVmObject {
  int32_t kind;
  int32_t refs;
} Obj;

typedef struct {
  Obj h;
  void* data; /* 64-byte aligned */
  uint64_t size;
  uint64_t capacity; /* bytes allocated (>= size) */
  /* With a device (kiln_vm_set_device): the device block (0 until a device
   * kernel touches the storage, `capacity` bytes), whether anything was
   * written yet, whether the device block holds the current data, and
   * whether the host block is older than the device's. */
  uint64_t dev;
  uint8_t written, dev_valid, host_stale;
} Storage;

/* Storages a run freed, kept for the next allocations (the same model runs
 * the same sizes again: no malloc, no page faults of fresh memory). */
#define KILN_VM_POOL_BLOCKS 256
#define KILN_VM_POOL_BYTES (UINT64_C(1) << 31)

typedef struct {
  void* data;
  uint64_t capacity;
} PoolBlock;

typedef struct {
  Obj h;
  Obj* storage; /* a Storage keeping data alive, or NULL (constants, inputs, inline) */
  DLTensor t;
  int64_t shape[32];
  int64_t inline_data[2]; /* scalars made by the VM (LoadConsti, GetTag) */
  int32_t readonly;       /* a constant or an input: never a kernel's output */
  int32_t constant;       /* LoadConst's: 1 + the constant's index; else 0 */
  uint64_t mirror;        /* with a device: a device copy of a tensor without storage */
  uint64_t mirror_capacity;
} Tensor;

typedef struct {
  Obj h;
  int32_t tag; /* ADT: constructor tag; closure: function index */
  int32_t n;
  Obj* fields[];
} Adt; /* also closures (kind OBJ_CLOSURE, tag = function) */

typedef struct {
  uint32_t func;
  uint32_t pc;
  int32_t ret_reg; /* the caller's destination register */
  uint64_t base;   /* first register on the register stack */
} Frame;

struct KilnVm {
  const KilnVmProgram* p;
  const DLTensor* constants;
  KilnKernelContext* ctx;
  char what[256];

  Obj** regs;
  uint64_t num_regs, cap_regs;
  Frame* frames;
  uint32_t num_frames, cap_frames;

  DLTensor** kargs; /* InvokePacked argument scratch */
  uint32_t cap_kargs;
  Obj** work; /* release work list */
  uint64_t num_work, cap_work;

  Obj** outputs;
  uint32_t num_outputs;
  /* Per output of a sequence type: its elements' tensors (views into the
   * list held by outputs[i]) and how many; NULL / 0 otherwise. */
  const DLTensor*** seq_elems;
  uint64_t* seq_counts;
  /* Per output of an optional type: 1 when the last run gave none (then
   * outputs[i] is NULL; otherwise it holds the value, unwrapped). */
  uint8_t* output_none;
  uint64_t instructions, kernel_calls;
  KilnVmTrace* trace;
  uint64_t run_start_ns;

  PoolBlock pool[KILN_VM_POOL_BLOCKS];
  uint32_t pool_count;
  uint64_t pool_bytes;
  uint64_t max_storage_bytes; /* the machine's physical memory */

  /* A device for the device kernels (kiln_vm_set_device), its pool of freed
   * device blocks (addresses in PoolBlock.data), and each constant's device
   * copy (0 until a device kernel reads it). */
  KilnVmDevice dev;
  int has_dev;
  PoolBlock dev_pool[KILN_VM_POOL_BLOCKS];
  uint32_t dev_pool_count;
  uint64_t dev_pool_bytes;
  uint64_t* const_dev;
  uint64_t device_launches, device_copies;
};

#if defined(__GNUC__)
#define KILN_VM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KILN_VM_PRINTF(f, a)
#endif

/* A status naming the VM's artifact, the function and the instruction. */
KILN_VM_HIDDEN KilnStatus* kiln_vm_error(const KilnVm* vm, KilnStatusCode code, const char* format, ...)
    KILN_VM_PRINTF(3, 4);
/* prod(dims) * bytes into *out; 0 on overflow past KILN_VM_MAX_BYTES. */
KILN_VM_HIDDEN int kiln_vm_tensor_bytes(DLDataType dtype, int32_t ndim, const int64_t* dims, uint64_t* out);
/* A pooled block of at least `bytes` and at most twice that (the smallest
 * such) out of pool[0 .. *count), or NULL. */
KILN_VM_HIDDEN void* kiln_vm_pool_pick(PoolBlock* pool, uint32_t* count, uint64_t* pool_bytes,
                                      uint64_t bytes, uint64_t* capacity);

/* An object's reference count: one more (NULL ignored). */
static inline void kiln_vm_obj_retain(Obj* o) {
  if (o != NULL) ++o->refs;
}
/* One reference fewer; at 0, frees o and everything only it kept alive. */
KILN_VM_HIDDEN void kiln_vm_obj_release(KilnVm* vm, Obj* o);
/* A tensor object of one reference, no data yet; NULL when out of memory. */
KILN_VM_HIDDEN Tensor* kiln_vm_new_tensor(DLDataType dtype, int32_t ndim, const int64_t* shape);
/* "a tensor", "an ADT", ... (o may be NULL: an empty register), for messages. */
KILN_VM_HIDDEN const char* kiln_vm_kind_name(const Obj* o);

/* vm_io.c: a run's inputs and outputs. */
/* The last run's outputs released. */
KILN_VM_HIDDEN void kiln_vm_drop_outputs(KilnVm* vm);
/* Main's result checked against the signature and kept as the outputs. */
KILN_VM_HIDDEN KilnStatus* kiln_vm_take_outputs(KilnVm* vm, Obj* result);
/* A sequence input as a list of read-only tensors; NULL when out of memory. */
KILN_VM_HIDDEN Obj* kiln_vm_build_sequence(KilnVm* vm, const KilnVmSequence* seq);
/* Some(value) (taking value's reference) or None for NULL; NULL when out of
 * memory (value released). */
KILN_VM_HIDDEN Obj* kiln_vm_wrap_optional(KilnVm* vm, Obj* value);

/* vm_device.c: the device side (kiln_vm_set_device). Each returns NULL at
 * once without a device. */
/* Makes `t`'s host bytes current; with `write`, the host is about to write. */
KILN_VM_HIDDEN KilnStatus* kiln_vm_host_access(KilnVm* vm, Tensor* t, int write);
/* Every tensor reachable from `o` made current on the host. */
KILN_VM_HIDDEN KilnStatus* kiln_vm_host_sync_tree(KilnVm* vm, Obj* o);
/* Launches device kernel in->a on vm->kargs[0 .. n) (outputs from first_out). */
KILN_VM_HIDDEN KilnStatus* kiln_vm_invoke_device(KilnVm* vm, const KilnVmInstr* in, uint32_t n,
                                                 uint32_t first_out);
/* Waits for every queued launch (a failure named). */
KILN_VM_HIDDEN KilnStatus* kiln_vm_device_synchronize(KilnVm* vm);
/* A freed device block to the pool (or the device). */
KILN_VM_HIDDEN void kiln_vm_dev_pool_put(KilnVm* vm, uint64_t ptr, uint64_t capacity);
/* Everything the device side holds, released (kiln_vm_free). */
KILN_VM_HIDDEN void kiln_vm_device_free(KilnVm* vm);

#endif /* KILN_RUNTIME_C_VM_INTERNAL_H_ */
