/* File: runtime_c/vm.h  (internal to runtime_c)
 *
 * The virtual machine that runs a validated VM program (vm_program.h): the
 * Relay VM's instruction set over reference-counted objects (tensors,
 * storages, ADTs, closures), one register file per frame, calls without C
 * recursion (frames on a heap stack, at most KILN_VM_MAX_CALL_DEPTH deep), and
 * kernels called through the kernel ABI (kiln/kernel_abi.h).
 *
 * One KilnVm belongs to one session: not thread-safe; separate VMs on one
 * program are independent (the program is read-only).
 *
 *   KilnVm* vm;
 *   kiln_vm_create(program, constants, ctx, "m.so", &vm);
 *   kiln_vm_run(vm, inputs);                 // checks inputs against main's signature
 *   const DLTensor* y = kiln_vm_output(vm, 0);   // valid until the next run
 *   kiln_vm_free(vm);
 *
 * Every failure is a status naming the function, the instruction and what
 * was wrong (a register holding the wrong kind of object, a shape that does
 * not fit its storage, a kernel's own error, Fatal); the VM then drops every
 * object of the failed run.
 */
#ifndef KILN_RUNTIME_C_VM_H_
#define KILN_RUNTIME_C_VM_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#include "kiln/kernel_abi.h"
#include "kiln/status.h"
#include "runtime_c/vm_program.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct KilnVm KilnVm;

/* `constants`: program->num_constants tensors (CPU, compact), read-only and
 * alive as long as the VM. `ctx`: the kernels' context (may be NULL). `what`
 * names the artifact in messages (copied). */
KILN_VM_HIDDEN KilnStatus* kiln_vm_create(const KilnVmProgram* program, const DLTensor* constants,
                           KilnKernelContext* ctx, const char* what, KilnVm** out);
KILN_VM_HIDDEN void kiln_vm_free(KilnVm* vm);

/* A GPU for the program's device kernels (a GPU VM artifact on cuda:N,
 * runtime_c/cuda_session.c): kernel k with is_device[k] set is launched
 * through `launch` with one device address per argument (tuples flattened,
 * as host kernels get them), the others are called on the host. The VM
 * keeps every tensor's data where it was last written and copies it when
 * the other side reads it: host kernels, If, the shapes AllocStorage and
 * ReshapeTensor read, and main's outputs (always host memory after a run)
 * read host memory; device kernels read and write device memory (constants
 * and inputs copied once per VM and run). `self` is passed back to every
 * call; every call but release returns a status or NULL. */
typedef struct KilnVmDevice {
  void* self;
  const uint8_t* is_device; /* program->num_kernels flags */
  KilnStatus* (*alloc)(void* self, uint64_t bytes, uint64_t* out);
  void (*release)(void* self, uint64_t ptr);
  KilnStatus* (*to_device)(void* self, uint64_t dst, const void* src, uint64_t bytes);
  /* Waits for the queued launches first. */
  KilnStatus* (*to_host)(void* self, void* dst, uint64_t src, uint64_t bytes);
  /* Queues kernel k (its arguments checked by the callee). */
  KilnStatus* (*launch)(void* self, uint32_t kernel, const DLTensor* const* args, const uint64_t* data,
                        uint32_t num_args);
  /* Waits for every queued launch; reports the first failure. */
  KilnStatus* (*synchronize)(void* self);
} KilnVmDevice;

/* Runs the device kernels of the VM on `device` (copied; NULL: none). Call
 * before the first run. */
KILN_VM_HIDDEN KilnStatus* kiln_vm_set_device(KilnVm* vm, const KilnVmDevice* device);
/* Device launches and copies (either way) of the runs so far. */
KILN_VM_HIDDEN void kiln_vm_device_stats(const KilnVm* vm, uint64_t* launches, uint64_t* copies);

/* Checks input `index` against main's signature alone: dtype, ndim, static
 * dims (symbolic dims are checked together by kiln_vm_run). */
KILN_VM_HIDDEN KilnStatus* kiln_vm_check_input(const KilnVm* vm, uint32_t index, const DLTensor* tensor,
                                const char* name);

/* Runs main on `inputs` (program->num_inputs CPU tensors, read in place
 * during the run). Symbolic dims must agree across inputs: every dim naming
 * variable N has one value. The previous run's outputs are dropped first. */
KILN_VM_HIDDEN KilnStatus* kiln_vm_run(KilnVm* vm, const DLTensor* const* inputs);

/* A sequence input: `count` CPU tensors (read in place during the run). */
typedef struct {
  const DLTensor* elements;
  uint32_t count;
} KilnVmSequence;

/* kiln_vm_run with sequence inputs: sequences[i] for each input i whose type
 * is a sequence (inputs[i] is not read then); sequences may be NULL when
 * there is none. Each element is checked against the element type. An
 * optional input i is Some(inputs[i] or sequences[i]), or None when
 * none != NULL and none[i] is 1 (neither is read then). */
KILN_VM_HIDDEN KilnStatus* kiln_vm_run_with(KilnVm* vm, const DLTensor* const* inputs,
                                            const KilnVmSequence* sequences, const uint8_t* none);

/* Output `index` of the last successful run (NULL before one, and for a
 * sequence output). */
KILN_VM_HIDDEN const DLTensor* kiln_vm_output(const KilnVm* vm, uint32_t index);
/* A sequence output of the last successful run: its length (-1 before one,
 * or when the output is not a sequence) and element k (NULL out of range). */
KILN_VM_HIDDEN int64_t kiln_vm_output_sequence_length(const KilnVm* vm, uint32_t index);
KILN_VM_HIDDEN const DLTensor* kiln_vm_output_sequence_element(const KilnVm* vm, uint32_t index,
                                                               uint64_t k);
/* An optional output of the last successful run: 1 when it is none (the
 * calls above then give NULL / -1), 0 when it holds a value (read as a plain
 * output of its tensor or sequence type), -1 before a run. */
KILN_VM_HIDDEN int kiln_vm_output_is_none(const KilnVm* vm, uint32_t index);

/* Instructions executed and kernels called by the last run. */
KILN_VM_HIDDEN void kiln_vm_last_run_stats(const KilnVm* vm, uint64_t* instructions, uint64_t* kernel_calls);

/* A record of the kernel calls of a run (the debug executor's profile of a
 * VM artifact): for call i, the kernel, when it started and how long it
 * took (ns from the run's start), and its first output's shape. */
typedef struct {
  uint32_t num_calls;
  uint32_t capacity;
  uint32_t* kernel;
  uint64_t* start_ns;
  uint64_t* time_ns;
  int64_t* shapes; /* 33 per call: ndim, then the dims */
  uint64_t total_ns;
  uint64_t instructions;
  int failed; /* out of memory while recording: the record is incomplete */
} KilnVmTrace;

/* Records the next runs into `trace` (NULL: stop recording). The trace is
 * cleared at the start of each run; the caller owns it and frees its
 * arrays with kiln_vm_trace_free. */
KILN_VM_HIDDEN void kiln_vm_set_trace(KilnVm* vm, KilnVmTrace* trace);
KILN_VM_HIDDEN void kiln_vm_trace_free(KilnVmTrace* trace);
/* Appends one call (start from the run's start; on out of memory sets
 * trace->failed and records nothing). */
KILN_VM_HIDDEN void kiln_vm_trace_record(KilnVmTrace* trace, uint32_t kernel, uint64_t start_ns,
                                         uint64_t time_ns, const DLTensor* first_output);
/* The program a VM runs. */
KILN_VM_HIDDEN const KilnVmProgram* kiln_vm_program(const KilnVm* vm);

/* "float32[N,4]" for signature type `t`, symbolic names from the program. */
KILN_VM_HIDDEN void kiln_vm_format_type(const KilnVmProgram* program, const KilnVmType* t, char* buf,
                         size_t size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_VM_H_ */
