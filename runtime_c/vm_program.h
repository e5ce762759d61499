/* File: runtime_c/vm_program.h  (internal to runtime_c)
 *
 * A VM program decoded from an artifact's VM section (kiln/vm_format.h) and
 * validated completely before anything runs: every table and string in the
 * section, every instruction's operands (registers inside their frame,
 * functions, kernels and constants that exist, call arities that match, jump
 * targets inside their function, dtypes, ranks and dims that are valid), and
 * no function that can run past its last instruction. What cannot be known
 * before a run (a register's object kind, a tensor's shape) is checked by the
 * VM when it executes (vm.c) and reported as a status.
 *
 *   KilnVmProgram* p;
 *   KilnStatus* st = kiln_vm_program_parse(bytes, size, num_params, "m.so", &p);
 *   ... p->functions[p->main] ...
 *   kiln_vm_program_free(p);
 */
#ifndef KILN_RUNTIME_C_VM_PROGRAM_H_
#define KILN_RUNTIME_C_VM_PROGRAM_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#include "kiln/kernel_abi.h"
#include "kiln/status.h"
#include "kiln/vm_format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Internal: libkiln_runtime.so exports only the public API. */
#if defined(__GNUC__)
#define KILN_VM_HIDDEN __attribute__((visibility("hidden")))
#else
#define KILN_VM_HIDDEN
#endif

/* One decoded instruction. Operands by opcode (kiln/vm_format.h):
 *   MOVE            dst=a src=b
 *   RET             a
 *   INVOKE          dst=a func=b list=args
 *   INVOKE_CLOSURE  dst=a closure=b list=args
 *   INVOKE_PACKED   kernel=a num_outputs=b list=args
 *   ALLOC_TENSOR    dst=a storage=b imm=offset dtype ndim=count dims
 *   ALLOC_TENSOR_REG dst=a storage=b imm=offset shape=c dtype
 *   ALLOC_ADT       dst=a tag=b list=fields
 *   ALLOC_CLOSURE   dst=a func=b list=captured
 *   GET_FIELD       dst=a object=b index=c
 *   IF              test=a target=b true=c false=d (absolute instruction indices)
 *   LOAD_CONST      dst=a constant=b
 *   GOTO            a (absolute instruction index)
 *   GET_TAG         dst=a object=b
 *   LOAD_CONSTI     dst=a imm
 *   FATAL           message=text, text_size
 *   ALLOC_STORAGE   dst=a size=b alignment=c dtype
 *   SHAPE_OF        dst=a tensor=b
 *   RESHAPE_TENSOR  dst=a tensor=b shape=c
 *   DEVICE_COPY     dst=a src=b src_device=c dst_device=d
 *   KILL_REGISTER   a
 *   SET_FIELD       object=a index=b src=c */
typedef struct {
  int32_t op;
  int32_t a, b, c, d;
  int32_t count;
  int64_t imm;
  DLDataType dtype;
  const int32_t* list; /* count registers (into the program's code copy) */
  const int64_t* dims; /* ALLOC_TENSOR: count dims */
  const char* text;    /* FATAL: text_size bytes (not NUL-terminated) */
  uint32_t text_size;
} KilnVmInstr;

typedef struct {
  const char* name;
  uint32_t num_params;
  uint32_t num_registers;
  uint32_t num_instrs;
  KilnVmInstr* instrs;
} KilnVmFunc;

/* A tensor type of main's signature: dims >= 0 static, KILN_VM_DIM_ANY, or
 * -1 - k for symbolic variable k. */
typedef struct {
  DLDataType dtype;
  int32_t ndim;
  const int64_t* dims;
  int32_t sequence; /* a sequence of such tensors (KILN_VM_TYPE_SEQUENCE) */
  int32_t optional; /* an optional of the tensor or sequence (KILN_VM_TYPE_OPTIONAL) */
} KilnVmType;

typedef struct KilnVmProgram {
  uint32_t main;
  uint32_t num_functions;
  KilnVmFunc* functions;
  uint32_t num_kernels;
  char** kernel_names;
  KilnKernelFn* kernels; /* resolved by the loader (NULL until then) */
  uint32_t num_constants;
  uint32_t* constants; /* PARAMS indices */
  uint32_t num_dim_vars;
  char** dim_var_names;
  uint32_t num_inputs;
  KilnVmType* inputs;
  uint32_t num_outputs;
  KilnVmType* outputs;

  /* Storage behind the pointers above. */
  int32_t* code;
  int64_t* dims;
  char* strings;      /* the NUL-terminated name copies, then string_table */
  char* string_table; /* the section's strings (Fatal messages point here) */
} KilnVmProgram;

/* Decodes and validates `size` bytes of a VM section. `num_params` is the
 * number of PARAMS entries (constants index them). `what` names the source in
 * messages. Errors: KILN_DATA_LOSS "<what>: corrupted VM program: ..."
 * naming the function, the instruction and the operand; a newer VM format:
 * KILN_UNIMPLEMENTED. */
KILN_VM_HIDDEN KilnStatus* kiln_vm_program_parse(const uint8_t* bytes, uint64_t size, uint64_t num_params,
                                  const char* what, KilnVmProgram** out);
KILN_VM_HIDDEN void kiln_vm_program_free(KilnVmProgram* program);

/* The name of an opcode ("InvokePacked"), "?" when unknown. */
KILN_VM_HIDDEN const char* kiln_vm_opcode_name(int32_t op);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_VM_PROGRAM_H_ */
