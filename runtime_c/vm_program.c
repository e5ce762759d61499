/* File: runtime_c/vm_program.c
 *
 * kiln_vm_program_parse: the VM section of an artifact, decoded and validated
 * (runtime_c/vm_program.h says what is checked). Two passes over each
 * function's code: the first counts its instructions (and checks that every
 * instruction's words are inside the function), the second decodes them into
 * the table the VM runs, checking every operand; jump offsets are checked
 * last, once the function's instruction count is known.
 */
#include "runtime_c/vm_program.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long kiln_ull;

static uint32_t rd32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t* p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

static KilnStatus* corrupt(const char* what, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static KilnStatus* corrupt(const char* what, const char* format, ...) {
  char message[512];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof message, format, ap);
  va_end(ap);
  return kiln_status_create(KILN_DATA_LOSS, "%s: corrupted VM program: %s", what, message);
}

const char* kiln_vm_opcode_name(int32_t op) {
  static const char* const names[KILN_VM_NUM_OPCODES] = {
      "Move",        "Ret",           "Invoke",   "InvokeClosure", "InvokePacked",
      "AllocTensor", "AllocTensorReg", "AllocADT", "AllocClosure",  "GetField",
      "If",          "LoadConst",     "Goto",     "GetTag",        "LoadConsti",
      "Fatal",       "AllocStorage",  "ShapeOf",  "ReshapeTensor", "DeviceCopy",
      "KillRegister", "SetField"};
  return (op >= 0 && op < KILN_VM_NUM_OPCODES) ? names[op] : "?";
}

/* A dtype word: code | bits << 8 | lanes << 16. */
static int decode_dtype(int32_t word, DLDataType* out) {
  uint32_t w = (uint32_t)word;
  DLDataType t;
  t.code = (uint8_t)(w & 0xff);
  t.bits = (uint8_t)((w >> 8) & 0xff);
  t.lanes = (uint16_t)(w >> 16);
  *out = t;
  if (t.lanes != 1) return 0;
  switch (t.code) {
    case kDLInt:
    case kDLUInt:
      return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLFloat:
      return t.bits == 16 || t.bits == 32 || t.bits == 64;
    case kDLBfloat:
      return t.bits == 16;
    case 6: /* bool */
      return t.bits == 8;
    default:
      return 0;
  }
}

/* A string [offset, offset + size) of the strings table, copied NUL-terminated
 * into *out (from the program's string storage at *cursor). */
typedef struct {
  const uint8_t* strings;
  uint64_t strings_size;
  char* store;
  uint64_t store_size;
  uint64_t used;
} Strings;

static KilnStatus* take_string(Strings* s, uint32_t offset, uint32_t size, const char* what,
                               const char* field, char** out) {
  if ((uint64_t)offset > s->strings_size || (uint64_t)size > s->strings_size - offset) {
    return corrupt(what, "%s: string [%u, +%u) is outside the strings table (%llu bytes)", field,
                   offset, size, (kiln_ull)s->strings_size);
  }
  if (memchr(s->strings + offset, '\0', size) != NULL) {
    return corrupt(what, "%s: the string at %u holds a NUL byte", field, offset);
  }
  if (s->used + size + 1 > s->store_size) {
    return corrupt(what, "%s: strings exceed their table", field); /* not reachable */
  }
  char* dst = s->store + s->used;
  memcpy(dst, s->strings + offset, size);
  dst[size] = '\0';
  s->used += (uint64_t)size + 1;
  *out = dst;
  return NULL;
}

/* Words an instruction at code[pos] occupies (>= 1), or 0 when it does not
 * fit in `n` words or its opcode is unknown. */
static uint64_t instr_words(const int32_t* code, uint64_t pos, uint64_t n) {
  if (pos >= n) return 0;
  const uint64_t left = n - pos;
  const int32_t op = code[pos];
  uint64_t fixed = 0; /* words before a count, opcode included */
  int has_list = 0;
  switch (op) {
    case KILN_VM_MOVE: fixed = 3; break;
    case KILN_VM_RET: fixed = 2; break;
    case KILN_VM_INVOKE:
    case KILN_VM_INVOKE_CLOSURE:
    case KILN_VM_INVOKE_PACKED:
    case KILN_VM_ALLOC_ADT:
    case KILN_VM_ALLOC_CLOSURE:
      fixed = 3;
      has_list = 1;
      break;
    case KILN_VM_ALLOC_TENSOR: {
      /* op dst storage off_lo off_hi dtype ndim dims(2 each) */
      if (left < 7) return 0;
      int32_t ndim = code[pos + 6];
      if (ndim < 0 || ndim > 32) return 0;
      uint64_t w = 7 + 2 * (uint64_t)ndim;
      return w <= left ? w : 0;
    }
    case KILN_VM_ALLOC_TENSOR_REG: fixed = 7; break;
    case KILN_VM_GET_FIELD: fixed = 4; break;
    case KILN_VM_SET_FIELD: fixed = 4; break;
    case KILN_VM_IF: fixed = 5; break;
    case KILN_VM_LOAD_CONST: fixed = 3; break;
    case KILN_VM_GOTO: fixed = 2; break;
    case KILN_VM_GET_TAG: fixed = 3; break;
    case KILN_VM_LOAD_CONSTI: fixed = 4; break;
    case KILN_VM_FATAL: fixed = 3; break;
    case KILN_VM_ALLOC_STORAGE: fixed = 5; break;
    case KILN_VM_SHAPE_OF: fixed = 3; break;
    case KILN_VM_RESHAPE_TENSOR: fixed = 4; break;
    case KILN_VM_DEVICE_COPY: fixed = 5; break;
    case KILN_VM_KILL_REGISTER: fixed = 2; break;
    default: return 0;
  }
  if (!has_list) return fixed <= left ? fixed : 0;
  if (left < fixed + 1) return 0;
  int32_t count = code[pos + fixed];
  if (count < 0 || (uint64_t)count > left - fixed - 1) return 0;
  return fixed + 1 + (uint64_t)count;
}

static int64_t imm64(const int32_t* w) {
  uint64_t lo = (uint32_t)w[0];
  uint64_t hi = (uint32_t)w[1];
  return (int64_t)(lo | hi << 32);
}

typedef struct {
  const KilnVmProgram* p;
  const KilnVmFunc* fn;
  uint32_t fn_index;
  uint32_t pc;
  const char* what;
} Site;

static KilnStatus* bad(const Site* s, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static KilnStatus* bad(const Site* s, const char* format, ...) {
  char message[400];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof message, format, ap);
  va_end(ap);
  return corrupt(s->what, "function %u ('%.100s') instruction %u (%s): %s", s->fn_index,
                 s->fn->name, s->pc, kiln_vm_opcode_name(s->fn->instrs[s->pc].op), message);
}

static KilnStatus* check_reg(const Site* s, int32_t r, const char* operand) {
  if (r < 0 || (uint32_t)r >= s->fn->num_registers) {
    return bad(s, "%s register %d is outside the frame's %u registers", operand, r,
               s->fn->num_registers);
  }
  return NULL;
}

static KilnStatus* check_list(const Site* s, const KilnVmInstr* in, const char* operand) {
  for (int32_t i = 0; i < in->count; ++i) {
    KilnStatus* st = check_reg(s, in->list[i], operand);
    if (st != NULL) return st;
  }
  return NULL;
}

static KilnStatus* check_func(const Site* s, int32_t f) {
  if (f < 0 || (uint32_t)f >= s->p->num_functions) {
    return bad(s, "function %d does not exist (the program has %u)", f, s->p->num_functions);
  }
  return NULL;
}

/* A relative jump from instruction pc to an absolute index in the function. */
static KilnStatus* resolve_jump(const Site* s, int32_t offset, int32_t* target) {
  int64_t t = (int64_t)s->pc + (int64_t)offset;
  if (t < 0 || t >= (int64_t)s->fn->num_instrs) {
    return bad(s, "jump offset %d leads to instruction %lld, outside the function's %u", offset,
               (long long)t, s->fn->num_instrs);
  }
  *target = (int32_t)t;
  return NULL;
}

/* Decodes instruction words at code[pos] into *in (its count already known to
 * fit). */
static KilnStatus* decode(const Site* s, const int32_t* w, int64_t** dims_cursor,
                          KilnVmInstr* in, const Strings* strs) {
  memset(in, 0, sizeof *in);
  in->op = w[0];
  in->dtype.code = kDLFloat;
  in->dtype.bits = 32;
  in->dtype.lanes = 1;
  switch (in->op) {
    case KILN_VM_MOVE:
    case KILN_VM_LOAD_CONST:
    case KILN_VM_GET_TAG:
    case KILN_VM_SHAPE_OF:
      in->a = w[1];
      in->b = w[2];
      break;
    case KILN_VM_RET:
    case KILN_VM_GOTO:
    case KILN_VM_KILL_REGISTER:
      in->a = w[1];
      break;
    case KILN_VM_INVOKE:
    case KILN_VM_INVOKE_CLOSURE:
    case KILN_VM_INVOKE_PACKED:
    case KILN_VM_ALLOC_ADT:
    case KILN_VM_ALLOC_CLOSURE:
      in->a = w[1];
      in->b = w[2];
      in->count = w[3];
      in->list = w + 4;
      break;
    case KILN_VM_ALLOC_TENSOR: {
      in->a = w[1];
      in->b = w[2];
      in->imm = imm64(w + 3);
      if (!decode_dtype(w[5], &in->dtype)) return bad(s, "invalid dtype word 0x%x", (unsigned)w[5]);
      in->count = w[6];
      int64_t* dims = *dims_cursor;
      for (int32_t d = 0; d < in->count; ++d) {
        dims[d] = imm64(w + 7 + 2 * d);
        if (dims[d] < 0) return bad(s, "dim %d is negative (%lld)", d, (long long)dims[d]);
      }
      in->dims = dims;
      *dims_cursor = dims + in->count;
      break;
    }
    case KILN_VM_ALLOC_TENSOR_REG:
      in->a = w[1];
      in->b = w[2];
      in->imm = imm64(w + 3);
      in->c = w[5];
      if (!decode_dtype(w[6], &in->dtype)) return bad(s, "invalid dtype word 0x%x", (unsigned)w[6]);
      break;
    case KILN_VM_GET_FIELD:
    case KILN_VM_SET_FIELD:
    case KILN_VM_RESHAPE_TENSOR:
      in->a = w[1];
      in->b = w[2];
      in->c = w[3];
      break;
    case KILN_VM_IF:
    case KILN_VM_DEVICE_COPY:
      in->a = w[1];
      in->b = w[2];
      in->c = w[3];
      in->d = w[4];
      break;
    case KILN_VM_LOAD_CONSTI:
      in->a = w[1];
      in->imm = imm64(w + 2);
      break;
    case KILN_VM_FATAL: {
      uint32_t off = (uint32_t)w[1], sz = (uint32_t)w[2];
      if ((uint64_t)off > strs->strings_size || (uint64_t)sz > strs->strings_size - off) {
        return bad(s, "message [%u, +%u) is outside the strings table (%llu bytes)", off, sz,
                   (kiln_ull)strs->strings_size);
      }
      in->text = s->p->string_table + off;
      in->text_size = sz;
      break;
    }
    case KILN_VM_ALLOC_STORAGE:
      in->a = w[1];
      in->b = w[2];
      in->c = w[3];
      if (!decode_dtype(w[4], &in->dtype)) return bad(s, "invalid dtype word 0x%x", (unsigned)w[4]);
      break;
    default:
      return bad(s, "unknown opcode %d", in->op);
  }
  return NULL;
}

/* Operand checks of a decoded instruction (jumps made absolute). */
static KilnStatus* check_instr(const Site* s, KilnVmInstr* in) {
  const KilnVmProgram* p = s->p;
  KilnStatus* st = NULL;
  switch (in->op) {
    case KILN_VM_MOVE:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      return check_reg(s, in->b, "source");
    case KILN_VM_RET:
      return check_reg(s, in->a, "result");
    case KILN_VM_KILL_REGISTER:
      return check_reg(s, in->a, "killed");
    case KILN_VM_INVOKE:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if ((st = check_func(s, in->b)) != NULL) return st;
      if ((uint32_t)in->count != p->functions[in->b].num_params) {
        return bad(s, "calls function %d ('%.100s') with %d arguments; it has %u parameters",
                   in->b, p->functions[in->b].name ? p->functions[in->b].name : "?", in->count,
                   p->functions[in->b].num_params);
      }
      return check_list(s, in, "argument");
    case KILN_VM_INVOKE_CLOSURE:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if ((st = check_reg(s, in->b, "closure")) != NULL) return st;
      return check_list(s, in, "argument");
    case KILN_VM_INVOKE_PACKED:
      if (in->a < 0 || (uint32_t)in->a >= p->num_kernels) {
        return bad(s, "kernel %d does not exist (the program has %u)", in->a, p->num_kernels);
      }
      if (in->b < 1 || in->b > in->count) {
        return bad(s, "%d outputs among %d arguments", in->b, in->count);
      }
      return check_list(s, in, "argument");
    case KILN_VM_ALLOC_TENSOR:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if (in->imm < 0) return bad(s, "negative offset %lld", (long long)in->imm);
      return check_reg(s, in->b, "storage");
    case KILN_VM_ALLOC_TENSOR_REG:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if ((st = check_reg(s, in->b, "storage")) != NULL) return st;
      if (in->imm < 0) return bad(s, "negative offset %lld", (long long)in->imm);
      return check_reg(s, in->c, "shape");
    case KILN_VM_ALLOC_ADT:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if (in->b < 0) return bad(s, "negative constructor tag %d", in->b);
      return check_list(s, in, "field");
    case KILN_VM_ALLOC_CLOSURE:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if ((st = check_func(s, in->b)) != NULL) return st;
      if ((uint32_t)in->count > p->functions[in->b].num_params) {
        return bad(s, "captures %d values for function %d, which has %u parameters", in->count,
                   in->b, p->functions[in->b].num_params);
      }
      return check_list(s, in, "captured");
    case KILN_VM_GET_FIELD:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if (in->c < 0) return bad(s, "negative field index %d", in->c);
      return check_reg(s, in->b, "object");
    case KILN_VM_SET_FIELD:
      if ((st = check_reg(s, in->a, "object")) != NULL) return st;
      if (in->b < 0) return bad(s, "negative field index %d", in->b);
      return check_reg(s, in->c, "source");
    case KILN_VM_IF:
      if ((st = check_reg(s, in->a, "test")) != NULL) return st;
      if ((st = check_reg(s, in->b, "target")) != NULL) return st;
      if ((st = resolve_jump(s, in->c, &in->c)) != NULL) return st;
      return resolve_jump(s, in->d, &in->d);
    case KILN_VM_GOTO:
      return resolve_jump(s, in->a, &in->a);
    case KILN_VM_LOAD_CONST:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if (in->b < 0 || (uint32_t)in->b >= p->num_constants) {
        return bad(s, "constant %d does not exist (the program has %u)", in->b, p->num_constants);
      }
      return NULL;
    case KILN_VM_GET_TAG:
    case KILN_VM_SHAPE_OF:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      return check_reg(s, in->b, "object");
    case KILN_VM_LOAD_CONSTI:
      return check_reg(s, in->a, "destination");
    case KILN_VM_FATAL:
      return NULL;
    case KILN_VM_ALLOC_STORAGE:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if ((st = check_reg(s, in->b, "size")) != NULL) return st;
      if (in->c < 1 || in->c > 4096 || (in->c & (in->c - 1)) != 0) {
        return bad(s, "alignment %d is not a power of two in [1, 4096]", in->c);
      }
      return NULL;
    case KILN_VM_RESHAPE_TENSOR:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if ((st = check_reg(s, in->b, "tensor")) != NULL) return st;
      return check_reg(s, in->c, "shape");
    case KILN_VM_DEVICE_COPY:
      if ((st = check_reg(s, in->a, "destination")) != NULL) return st;
      if ((st = check_reg(s, in->b, "source")) != NULL) return st;
      if (in->c < 1 || in->c > 32 || in->d < 1 || in->d > 32) {
        return bad(s, "device types %d -> %d are not DLPack device types", in->c, in->d);
      }
      return NULL;
    default:
      return bad(s, "unknown opcode %d", in->op);
  }
}

static int is_terminator(int32_t op) {
  return op == KILN_VM_RET || op == KILN_VM_GOTO || op == KILN_VM_IF || op == KILN_VM_FATAL;
}

/* Reads a KilnVmName table entry into a NUL-terminated copy. */
static KilnStatus* read_name(const uint8_t* sec, uint64_t at, Strings* strs, const char* what,
                             const char* field, char** out) {
  return take_string(strs, rd32(sec + at), rd32(sec + at + 4), what, field, out);
}

/* [offset, offset + count * entry) inside the section, 8-aligned. */
static KilnStatus* check_table(uint64_t size, uint64_t offset, uint64_t count, uint64_t entry,
                               const char* what, const char* table) {
  if (offset % 8 != 0) return corrupt(what, "%s offset %llu is not a multiple of 8", table, (kiln_ull)offset);
  if (count != 0 && entry > UINT64_MAX / count) return corrupt(what, "%s is too large", table);
  uint64_t bytes = count * entry;
  if (offset > size || bytes > size - offset) {
    return corrupt(what, "%s [%llu, +%llu) exceeds the section's %llu bytes", table,
                   (kiln_ull)offset, (kiln_ull)bytes, (kiln_ull)size);
  }
  return NULL;
}

void kiln_vm_program_free(KilnVmProgram* p) {
  if (p == NULL) return;
  if (p->functions != NULL) {
    for (uint32_t f = 0; f < p->num_functions; ++f) free(p->functions[f].instrs);
  }
  free(p->functions);
  free(p->kernel_names);
  free(p->kernels);
  free(p->constants);
  free(p->dim_var_names);
  free(p->inputs);
  free(p->outputs);
  free(p->code);
  free(p->dims);
  free(p->strings);
  free(p);
}

static KilnStatus* oom(const char* what) {
  return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory reading the VM program",
                            what);
}

/* Reads the signature types from types_offset; *cursor advances. */
static KilnStatus* read_types(const uint8_t* sec, uint64_t size, uint64_t* cursor, uint32_t count,
                              uint32_t num_dim_vars, uint32_t version, KilnVmType* types,
                              int64_t** dims_cursor, const char* what, const char* kind) {
  for (uint32_t i = 0; i < count; ++i) {
    if (*cursor > size || size - *cursor < 8) {
      return corrupt(what, "%s %u: its type exceeds the section", kind, i);
    }
    const uint8_t* h = sec + *cursor;
    int32_t dword = (int32_t)((uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)rd32(h) >> 16 << 16);
    if (!decode_dtype(dword, &types[i].dtype)) {
      return corrupt(what, "%s %u: invalid dtype (code %u, bits %u, lanes %u)", kind, i, h[0], h[1],
                     (unsigned)(rd32(h) >> 16));
    }
    int32_t ndim = (int32_t)rd32(h + 4);
    types[i].sequence = 0;
    types[i].optional = 0;
    if (version >= 3 && ndim >= 0 && (ndim & KILN_VM_TYPE_OPTIONAL) != 0) {
      types[i].optional = 1;
      ndim &= ~KILN_VM_TYPE_OPTIONAL;
    }
    if (version >= 2 && ndim >= 0 && (ndim & KILN_VM_TYPE_SEQUENCE) != 0) {
      types[i].sequence = 1;
      ndim &= ~KILN_VM_TYPE_SEQUENCE;
    }
    if (ndim < 0 || ndim > 32) return corrupt(what, "%s %u: ndim %d is outside [0, 32]", kind, i, ndim);
    *cursor += 8;
    if ((uint64_t)ndim * 8 > size - *cursor) {
      return corrupt(what, "%s %u: its dims exceed the section", kind, i);
    }
    int64_t* dims = *dims_cursor;
    for (int32_t d = 0; d < ndim; ++d) {
      int64_t v = (int64_t)rd64(sec + *cursor + 8 * (uint64_t)d);
      if (v < 0 && v != KILN_VM_DIM_ANY && (uint64_t)(-(v + 1)) >= num_dim_vars) {
        return corrupt(what, "%s %u: dim %d (%lld) names no symbolic variable (there are %u)", kind,
                       i, d, (long long)v, num_dim_vars);
      }
      dims[d] = v;
    }
    types[i].ndim = ndim;
    types[i].dims = dims;
    *dims_cursor = dims + ndim;
    *cursor += 8 * (uint64_t)ndim;
  }
  return NULL;
}

KilnStatus* kiln_vm_program_parse(const uint8_t* sec, uint64_t size, uint64_t num_params,
                                  const char* what, KilnVmProgram** out) {
  *out = NULL;
  if (size < sizeof(KilnVmHeader)) {
    return corrupt(what, "the section has %llu bytes, fewer than its %zu-byte header",
                   (kiln_ull)size, sizeof(KilnVmHeader));
  }
  if (memcmp(sec, KILN_VM_MAGIC "\0", 7) != 0 || sec[7] != 0) {
    return corrupt(what, "bad magic (expected \"KILNVM\")");
  }
  const uint32_t version = rd32(sec + 8);
  if (version == 0) return corrupt(what, "version 0");
  if (version > KILN_VM_FORMAT_VERSION) {
    return kiln_status_create(KILN_UNIMPLEMENTED,
                              "%s: VM program version %u was made by a newer kiln (this runtime "
                              "reads version %u)",
                              what, version, (unsigned)KILN_VM_FORMAT_VERSION);
  }
  const uint32_t main_fn = rd32(sec + 12);
  const uint32_t nf = rd32(sec + 16), nk = rd32(sec + 20), nc = rd32(sec + 24);
  const uint32_t nv = rd32(sec + 28), ni = rd32(sec + 32), no = rd32(sec + 36);
  const uint64_t fo = rd64(sec + 40), ko = rd64(sec + 48), co = rd64(sec + 56);
  const uint64_t vo = rd64(sec + 64), to = rd64(sec + 72);
  const uint64_t so = rd64(sec + 80), ss = rd64(sec + 88);
  const uint64_t xo = rd64(sec + 96), xw = rd64(sec + 104);
  if (nf == 0 || nf > KILN_VM_MAX_FUNCTIONS) return corrupt(what, "%u functions", nf);
  if (main_fn >= nf) return corrupt(what, "main is function %u of %u", main_fn, nf);
  if (nk > KILN_VM_MAX_KERNELS) return corrupt(what, "%u kernels", nk);
  if (nc > num_params) {
    return corrupt(what, "%u constants, but PARAMS holds %llu tensors", nc, (kiln_ull)num_params);
  }
  if (nv > KILN_VM_MAX_IO || ni > KILN_VM_MAX_IO || no > KILN_VM_MAX_IO) {
    return corrupt(what, "%u dim variables, %u inputs, %u outputs (at most %u each)", nv, ni, no,
                   KILN_VM_MAX_IO);
  }
  if (no == 0) return corrupt(what, "main has no outputs");
  if (xw == 0 || xw > KILN_VM_MAX_CODE_WORDS) return corrupt(what, "%llu code words", (kiln_ull)xw);
  KilnStatus* st = NULL;
  if ((st = check_table(size, fo, nf, sizeof(KilnVmFunction), what, "the function table")) != NULL ||
      (st = check_table(size, ko, nk, sizeof(KilnVmName), what, "the kernel table")) != NULL ||
      (st = check_table(size, co, nc, 4, what, "the constant table")) != NULL ||
      (st = check_table(size, vo, nv, sizeof(KilnVmName), what, "the dim variable table")) != NULL ||
      (st = check_table(size, to, 0, 1, what, "the types")) != NULL ||
      (st = check_table(size, so, ss, 1, what, "the strings")) != NULL ||
      (st = check_table(size, xo, xw, 4, what, "the code")) != NULL) {
    return st;
  }

  KilnVmProgram* p = (KilnVmProgram*)calloc(1, sizeof *p);
  if (p == NULL) return oom(what);
  p->main = main_fn;
  p->num_functions = nf;
  p->num_kernels = nk;
  p->num_constants = nc;
  p->num_dim_vars = nv;
  p->num_inputs = ni;
  p->num_outputs = no;
  /* Every string is copied once at most per reference: names of functions,
   * kernels and dim variables, Fatal messages (each at most the table). The
   * store is bounded by (references + 1) * (strings + 1). */
  Strings strs;
  strs.strings = sec + so;
  strs.strings_size = ss;
  strs.used = 0;
  p->functions = (KilnVmFunc*)calloc(nf, sizeof(KilnVmFunc));
  p->kernel_names = (char**)calloc(nk + 1, sizeof(char*));
  p->kernels = (KilnKernelFn*)calloc(nk + 1, sizeof(KilnKernelFn));
  p->constants = (uint32_t*)calloc(nc + 1, sizeof(uint32_t));
  p->dim_var_names = (char**)calloc(nv + 1, sizeof(char*));
  p->inputs = (KilnVmType*)calloc(ni + 1, sizeof(KilnVmType));
  p->outputs = (KilnVmType*)calloc(no, sizeof(KilnVmType));
  p->code = (int32_t*)malloc(xw * 4);
  if (p->functions == NULL || p->kernel_names == NULL || p->kernels == NULL ||
      p->constants == NULL || p->dim_var_names == NULL || p->inputs == NULL ||
      p->outputs == NULL || p->code == NULL) {
    kiln_vm_program_free(p);
    return oom(what);
  }
  for (uint64_t i = 0; i < xw; ++i) p->code[i] = (int32_t)rd32(sec + xo + 4 * i);

  /* Size each function; the first pass also checks that every instruction's
   * words lie inside its function. */
  uint64_t total_instrs = 0, total_dims = 0;
  uint32_t* counts = (uint32_t*)calloc(nf, sizeof(uint32_t));
  if (counts == NULL) {
    kiln_vm_program_free(p);
    return oom(what);
  }
  for (uint32_t f = 0; f < nf && st == NULL; ++f) {
    const uint8_t* e = sec + fo + (uint64_t)f * sizeof(KilnVmFunction);
    const uint64_t begin = rd64(e + 16), words = rd64(e + 24);
    const uint32_t np = rd32(e + 8), nr = rd32(e + 12);
    if (nr == 0 || nr > KILN_VM_MAX_REGISTERS || np > nr) {
      st = corrupt(what, "function %u: %u parameters in %u registers (1 .. %u)", f, np, nr,
                   KILN_VM_MAX_REGISTERS);
      break;
    }
    if (begin > xw || words == 0 || words > xw - begin) {
      st = corrupt(what, "function %u: code [%llu, +%llu) is outside the %llu code words", f,
                   (kiln_ull)begin, (kiln_ull)words, (kiln_ull)xw);
      break;
    }
    const int32_t* code = p->code + begin;
    uint64_t pos = 0;
    uint32_t n = 0;
    while (pos < words) {
      uint64_t w = instr_words(code, pos, words);
      if (w == 0) {
        if (code[pos] < 0 || code[pos] >= KILN_VM_NUM_OPCODES) {
          st = corrupt(what, "function %u: unknown opcode %d at word %llu", f, code[pos],
                       (kiln_ull)pos);
        } else {
          st = corrupt(what,
                       "function %u: instruction %u (%s) at word %llu runs past the function's "
                       "%llu words (or has a negative count)",
                       f, n, kiln_vm_opcode_name(code[pos]), (kiln_ull)pos, (kiln_ull)words);
        }
        break;
      }
      if (code[pos] == KILN_VM_ALLOC_TENSOR) total_dims += (uint64_t)code[pos + 6];
      pos += w;
      ++n;
    }
    counts[f] = n;
    total_instrs += n;
  }
  if (st != NULL) {
    free(counts);
    kiln_vm_program_free(p);
    return st;
  }
  /* Names (each at most 4095 bytes) are copied NUL-terminated; Fatal
   * messages point into one copy of the strings table. */
  const uint64_t name_refs = (uint64_t)nf + nk + nv;
  strs.store_size = name_refs * 4096 + 64;
  p->strings = (char*)malloc(strs.store_size + ss + 1);
  strs.store = p->strings;
  p->dims = (int64_t*)malloc((total_dims + 33ull * (ni + no) + 1) * sizeof(int64_t));
  if (p->strings == NULL || p->dims == NULL) {
    free(counts);
    kiln_vm_program_free(p);
    return oom(what);
  }
  p->string_table = p->strings + strs.store_size;
  memcpy(p->string_table, sec + so, ss);
  p->string_table[ss] = '\0';
  (void)total_instrs;

  /* Names. A name longer than 4096 bytes is refused (keeps the store bound). */
  for (uint32_t f = 0; f < nf && st == NULL; ++f) {
    const uint8_t* e = sec + fo + (uint64_t)f * sizeof(KilnVmFunction);
    if (rd32(e + 4) > 4095) st = corrupt(what, "function %u: name longer than 4095 bytes", f);
    else st = read_name(sec, fo + (uint64_t)f * sizeof(KilnVmFunction), &strs, what, "function name",
                        (char**)&p->functions[f].name);
    p->functions[f].num_params = rd32(e + 8);
    p->functions[f].num_registers = rd32(e + 12);
  }
  for (uint32_t k = 0; k < nk && st == NULL; ++k) {
    uint64_t at = ko + (uint64_t)k * sizeof(KilnVmName);
    if (rd32(sec + at + 4) == 0 || rd32(sec + at + 4) > 4095) {
      st = corrupt(what, "kernel %u: name of %u bytes (1 .. 4095)", k, rd32(sec + at + 4));
    } else {
      st = read_name(sec, at, &strs, what, "kernel name", &p->kernel_names[k]);
    }
  }
  for (uint32_t v = 0; v < nv && st == NULL; ++v) {
    uint64_t at = vo + (uint64_t)v * sizeof(KilnVmName);
    if (rd32(sec + at + 4) > 4095) st = corrupt(what, "dim variable %u: name too long", v);
    else st = read_name(sec, at, &strs, what, "dim variable name", &p->dim_var_names[v]);
  }
  for (uint32_t c = 0; c < nc && st == NULL; ++c) {
    p->constants[c] = rd32(sec + co + 4ull * c);
    if (p->constants[c] >= num_params) {
      st = corrupt(what, "constant %u is PARAMS entry %u, but PARAMS holds %llu", c,
                   p->constants[c], (kiln_ull)num_params);
    }
  }
  int64_t* dims_cursor = p->dims;
  uint64_t cursor = to;
  if (st == NULL) st = read_types(sec, size, &cursor, ni, nv, version, p->inputs, &dims_cursor, what, "input");
  if (st == NULL) st = read_types(sec, size, &cursor, no, nv, version, p->outputs, &dims_cursor, what, "output");

  /* Instructions. */
  for (uint32_t f = 0; f < nf && st == NULL; ++f) {
    const uint8_t* e = sec + fo + (uint64_t)f * sizeof(KilnVmFunction);
    const uint64_t begin = rd64(e + 16), words = rd64(e + 24);
    KilnVmFunc* fn = &p->functions[f];
    fn->num_instrs = counts[f];
    fn->instrs = (KilnVmInstr*)calloc(counts[f], sizeof(KilnVmInstr));
    if (fn->instrs == NULL) {
      st = oom(what);
      break;
    }
    const int32_t* code = p->code + begin;
    uint64_t pos = 0;
    Site site = {p, fn, f, 0, what};
    for (uint32_t i = 0; i < counts[f] && st == NULL; ++i) {
      site.pc = i;
      uint64_t w = instr_words(code, pos, words);
      fn->instrs[i].op = code[pos];
      st = decode(&site, code + pos, &dims_cursor, &fn->instrs[i], &strs);
      pos += w;
    }
  }
  /* Operands, once every function's arity and size are known. */
  for (uint32_t f = 0; f < nf && st == NULL; ++f) {
    KilnVmFunc* fn = &p->functions[f];
    Site site = {p, fn, f, 0, what};
    for (uint32_t i = 0; i < fn->num_instrs && st == NULL; ++i) {
      site.pc = i;
      st = check_instr(&site, &fn->instrs[i]);
    }
    if (st == NULL && !is_terminator(fn->instrs[fn->num_instrs - 1].op)) {
      site.pc = fn->num_instrs - 1;
      st = bad(&site, "the function's last instruction does not end it (Ret, Goto, If or Fatal)");
    }
  }
  if (st == NULL && p->functions[main_fn].num_params != ni) {
    st = corrupt(what, "main (function %u) has %u parameters but the signature %u inputs", main_fn,
                 p->functions[main_fn].num_params, ni);
  }
  free(counts);
  if (st != NULL) {
    kiln_vm_program_free(p);
    return st;
  }
  *out = p;
  return NULL;
}
