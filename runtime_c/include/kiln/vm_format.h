/* File: runtime_c/include/kiln/vm_format.h
 *
 * The VM program of an artifact: section KILN_SECTION_VM of the blob
 * (docs/vm.md is the specification; this header is its C form). Shared by the
 * VM compiler (lowering/vm_compiler, which writes it) and the runtime
 * (runtime_c/vm_program.c validates it operand by operand before anything
 * runs; runtime_c/vm.c executes it).
 *
 * All integers little-endian. Offsets are from the section start; every table
 * starts at a multiple of 8.
 *
 *   KilnVmHeader                          80 bytes
 *   KilnVmFunction[num_functions]         at functions_offset
 *   KilnVmName[num_kernels]               at kernels_offset   (exported symbols)
 *   uint32_t[num_constants]               at constants_offset (PARAMS indices)
 *   KilnVmName[num_dim_vars]              at dim_vars_offset  (symbolic dim names)
 *   types                                 at types_offset: num_inputs then
 *                                         num_outputs of { KilnVmTypeHead,
 *                                         int64_t dims[ndim] }
 *   strings                               at strings_offset (names, messages)
 *   int32_t code[code_words]              at code_offset
 *
 * The instruction set is the Relay VM's. An instruction is an opcode word
 * followed by its operands (int32 words; an int64 immediate takes two words,
 * low word first; a dtype is one word: code | bits << 8 | lanes << 16). Jump
 * offsets count instructions, relative to the jumping instruction. Registers
 * are per frame, [0, num_registers); a function's parameters arrive in
 * registers 0 .. num_params-1.
 */
#ifndef KILN_VM_FORMAT_H_
#define KILN_VM_FORMAT_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "KILNVM" + two NUL bytes. */
#define KILN_VM_MAGIC "KILNVM"
#define KILN_VM_MAGIC_SIZE 8
/* 2: a signature type may be a sequence (KILN_VM_TYPE_SEQUENCE).
 * 3: or an optional (KILN_VM_TYPE_OPTIONAL). */
#define KILN_VM_FORMAT_VERSION 3u

/* Limits the loader enforces (far above any real program). */
#define KILN_VM_MAX_FUNCTIONS (1u << 20)
#define KILN_VM_MAX_KERNELS (1u << 20)
#define KILN_VM_MAX_REGISTERS (1u << 20)
#define KILN_VM_MAX_CODE_WORDS (1u << 28)
#define KILN_VM_MAX_IO 4096u
/* Calls deeper than this stop the run with KILN_RESOURCE_EXHAUSTED. */
#define KILN_VM_MAX_CALL_DEPTH 100000

/* A dim of the signature: >= 0 static; KILN_VM_DIM_ANY any size; otherwise
 * -1 - k names symbolic dim variable k (every dim naming k has one value). */
#define KILN_VM_DIM_ANY INT64_MIN

typedef struct {
  char magic[KILN_VM_MAGIC_SIZE];
  uint32_t version;        /* KILN_VM_FORMAT_VERSION */
  uint32_t main_function;  /* index of main */
  uint32_t num_functions;
  uint32_t num_kernels;
  uint32_t num_constants;
  uint32_t num_dim_vars;
  uint32_t num_inputs;     /* main's parameters (tensors) */
  uint32_t num_outputs;    /* main's result: one tensor, or a tuple's fields */
  uint64_t functions_offset;
  uint64_t kernels_offset;
  uint64_t constants_offset;
  uint64_t dim_vars_offset;
  uint64_t types_offset;
  uint64_t strings_offset;
  uint64_t strings_size;
  uint64_t code_offset;
  uint64_t code_words;
} KilnVmHeader;

typedef struct {
  uint32_t name_offset;   /* into strings */
  uint32_t name_size;
  uint32_t num_params;
  uint32_t num_registers; /* >= num_params, >= 1 */
  uint64_t code_begin;    /* first word, index into code */
  uint64_t code_size;     /* words */
} KilnVmFunction;

typedef struct {
  uint32_t name_offset; /* into strings */
  uint32_t name_size;
} KilnVmName;

typedef struct {
  uint8_t code; /* DLPack type code; 6 = bool */
  uint8_t bits;
  uint16_t lanes;
  int32_t ndim; /* 0 .. 32, or'ed with KILN_VM_TYPE_SEQUENCE / _OPTIONAL */
} KilnVmTypeHead;

/* In KilnVmTypeHead.ndim (version >= 2): the input or output is a sequence
 * of tensors of this dtype and rank (an ONNX sequence), a list ADT whose
 * tag KILN_VM_SEQ_CONS_TAG has the fields (element, rest) and whose tag
 * KILN_VM_SEQ_NIL_TAG (no fields) ends it. */
#define KILN_VM_TYPE_SEQUENCE 0x10000
#define KILN_VM_SEQ_CONS_TAG 0
#define KILN_VM_SEQ_NIL_TAG 1

/* In KilnVmTypeHead.ndim (version >= 3): the input or output is an optional
 * (an ONNX optional) of such a tensor, or of a sequence of them when
 * KILN_VM_TYPE_SEQUENCE is set too: an ADT whose tag KILN_VM_OPT_SOME_TAG has
 * one field (the tensor or the list) and whose tag KILN_VM_OPT_NONE_TAG has
 * none. Main returns a tuple when it returns one optional (a lone Some(x)
 * would read as a 1-tuple). */
#define KILN_VM_TYPE_OPTIONAL 0x20000
#define KILN_VM_OPT_SOME_TAG 0
#define KILN_VM_OPT_NONE_TAG 1

/* Opcodes and their operands (r: a register, f: a function, k: a kernel,
 * c: a constant, n: a count followed by n registers, i64: two words). */
enum {
  KILN_VM_MOVE = 0,             /* dst src */
  KILN_VM_RET = 1,              /* src */
  KILN_VM_INVOKE = 2,           /* dst f n args... */
  KILN_VM_INVOKE_CLOSURE = 3,   /* dst closure n args... */
  KILN_VM_INVOKE_PACKED = 4,    /* k num_outputs n args...: the last num_outputs args are
                                   the outputs; tuple registers are flattened */
  KILN_VM_ALLOC_TENSOR = 5,     /* dst storage offset:i64 dtype ndim dims:i64... */
  KILN_VM_ALLOC_TENSOR_REG = 6, /* dst storage offset:i64 shape dtype */
  KILN_VM_ALLOC_ADT = 7,        /* dst tag n fields... */
  KILN_VM_ALLOC_CLOSURE = 8,    /* dst f n captured... */
  KILN_VM_GET_FIELD = 9,        /* dst object index */
  KILN_VM_IF = 10,              /* test target true_offset false_offset */
  KILN_VM_LOAD_CONST = 11,      /* dst c */
  KILN_VM_GOTO = 12,            /* offset */
  KILN_VM_GET_TAG = 13,         /* dst object */
  KILN_VM_LOAD_CONSTI = 14,     /* dst value:i64 */
  KILN_VM_FATAL = 15,           /* message_offset message_size (into strings) */
  KILN_VM_ALLOC_STORAGE = 16,   /* dst size alignment dtype: size holds an int64 scalar
                                   (bytes) or an int64 shape (bytes = prod * dtype bytes) */
  KILN_VM_SHAPE_OF = 17,        /* dst tensor */
  KILN_VM_RESHAPE_TENSOR = 18,  /* dst tensor shape */
  KILN_VM_DEVICE_COPY = 19,     /* dst src src_device_type dst_device_type */
  KILN_VM_KILL_REGISTER = 20,   /* reg */
  /* kiln's addition (the Relay VM has no references): a reference is an ADT
   * of one field, read with GetField and written with SetField. */
  KILN_VM_SET_FIELD = 21,       /* object index src */
  KILN_VM_NUM_OPCODES = 22
};

/* A tag of an ADT made for a tuple. */
#define KILN_VM_TUPLE_TAG 0

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_VM_FORMAT_H_ */
