/* File: runtime_c/device_code.c — the DEVICE_CODE section, validated. */
#include "runtime_c/device_code.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime_c/artifact_blob.h"

typedef unsigned long long kiln_ull;

_Static_assert(sizeof(KilnDeviceCodeHeader) == KILN_DEVICE_CODE_HEADER_SIZE, "header layout");
_Static_assert(sizeof(KilnDeviceImage) == 32, "image entry layout");
_Static_assert(sizeof(KilnDeviceKernel) == 48, "kernel entry layout");
_Static_assert(sizeof(KilnDeviceKernelV3) == 56, "version 3 kernel entry layout");
_Static_assert(sizeof(KilnDeviceParam) == 8, "parameter entry layout");

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
  char msg[768];
  va_list ap;
  va_start(ap, format);
  (void)vsnprintf(msg, sizeof msg, format, ap);
  va_end(ap);
  return kiln_status_create(KILN_DATA_LOSS, "%s: corrupted artifact: DEVICE_CODE %s", what, msg);
}

/* [offset, offset + count * entry) inside the section, aligned to 8. */
static KilnStatus* check_table(const char* what, const char* name, uint64_t offset,
                               uint64_t count, uint64_t entry, uint64_t size) {
  if (offset % 8 != 0) {
    return corrupt(what, "%s offset %llu is not a multiple of 8", name, (kiln_ull)offset);
  }
  if (offset < KILN_DEVICE_CODE_HEADER_SIZE || offset > size || count > (size - offset) / entry) {
    return corrupt(what, "%s (%llu entries of %llu bytes at offset %llu) lies outside the %llu-byte "
                   "section",
                   name, (kiln_ull)count, (kiln_ull)entry, (kiln_ull)offset, (kiln_ull)size);
  }
  return NULL;
}

/* A growing text buffer for the JSON description. */
typedef struct {
  char* data;
  size_t used, capacity;
  int failed;
} Text;

static void text_add(Text* t, const char* format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void text_add(Text* t, const char* format, ...) {
  if (t->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(t->data ? t->data + t->used : NULL, t->data ? t->capacity - t->used : 0,
                      format, ap);
    va_end(ap);
    if (n < 0) {
      t->failed = 1;
      return;
    }
    if (t->data != NULL && (size_t)n < t->capacity - t->used) {
      t->used += (size_t)n;
      return;
    }
    size_t want = t->capacity * 2 + (size_t)n + 256;
    char* grown = (char*)realloc(t->data, want);
    if (grown == NULL) {
      t->failed = 1;
      return;
    }
    t->data = grown;
    t->capacity = want;
  }
}

void kiln_device_code_free(KilnDeviceCode* code) {
  if (code == NULL) return;
  for (uint32_t k = 0; code->kernels != NULL && k < code->num_kernels; ++k) {
    free(code->kernels[k].tensor_maps);
  }
  free(code->kernels);
  free(code->params);
  free(code->names);
  free(code->launch_words);
  free(code->json);
  free(code);
}

/* ------------------------------------------------------ symbolic launches */

/* The op's opcode and operand (an arithmetic shift: negative constants). */
static int op_code(int64_t w) { return (int)((uint64_t)w & 15u); }
static int64_t op_operand(int64_t w) { return w < 0 ? -(int64_t)((~(uint64_t)w >> 4) + 1) : w >> 4; }

/* Validates the postfix program ops[0 .. len) over v variables ("" or what
 * is wrong, into why). */
static int check_program(const int64_t* ops, int64_t len, int64_t v, char* why, size_t why_size) {
  int depth = 0;
  for (int64_t i = 0; i < len; ++i) {
    const int64_t w = ops[i];
    const int c = op_code(w);
    if (c == KILN_DEVICE_OP_CONST || c == KILN_DEVICE_OP_VAR) {
      if (c == KILN_DEVICE_OP_VAR && (op_operand(w) < 0 || op_operand(w) >= v)) {
        snprintf(why, why_size, "reads variable %lld of %lld", (long long)op_operand(w), (long long)v);
        return 0;
      }
      if (++depth > 32) {
        snprintf(why, why_size, "is too deep");
        return 0;
      }
    } else if (c >= KILN_DEVICE_OP_ADD && c <= KILN_DEVICE_OP_MAX && op_operand(w) == 0) {
      if (depth < 2) {
        snprintf(why, why_size, "op %lld has too few operands", (long long)i);
        return 0;
      }
      --depth;
    } else {
      snprintf(why, why_size, "unknown op %lld at %lld", (long long)w, (long long)i);
      return 0;
    }
  }
  if (depth != 1) {
    snprintf(why, why_size, "leaves %d values", depth);
    return 0;
  }
  return 1;
}

/* The extent word after the one at `e` (validated programs only). */
static const int64_t* next_extent(const int64_t* e) {
  return e[0] == KILN_DEVICE_DIM_EXPR ? e + 2 + e[1] : e + 1;
}

/* Parameter p's ndim word (validated programs only). */
static const int64_t* param_shape(const KilnDeviceKernelDesc* kd, uint32_t p) {
  const int64_t* sh = kd->shapes;
  for (uint32_t q = 0; q < p; ++q) {
    const int64_t nd = sh[0];
    const int64_t* e = sh + 1;
    for (int64_t d = 0; d < nd; ++d) e = next_extent(e);
    sh = e;
  }
  return sh;
}

/* Validates kernel kd's launch program at word `at` of `words` (n words):
 * the fields of kd point into `words` after it. */
static KilnStatus* parse_launch(const char* what, KilnDeviceKernelDesc* kd, const int64_t* words,
                                uint64_t n, uint64_t at) {
#define NEED(count)                                                                                \
  do {                                                                                             \
    if ((uint64_t)(count) > n - at) {                                                              \
      return corrupt(what, "kernel '%s': its launch program runs past the %llu launch words",      \
                     kd->name, (kiln_ull)n);                                                       \
    }                                                                                              \
  } while (0)
  char why[160];
  NEED(1);
  const int64_t v = words[at++];
  if (v < 1 || v > (int64_t)KILN_DEVICE_MAX_LAUNCH_VARS) {
    return corrupt(what, "kernel '%s': its launch has %lld shape variables (1 .. %u)", kd->name,
                   (long long)v, KILN_DEVICE_MAX_LAUNCH_VARS);
  }
  kd->num_vars = (uint32_t)v;
  NEED(2 * (uint64_t)v);
  kd->vars = words + at;
  at += 2 * (uint64_t)v;
  kd->shapes = words + at;
  for (uint32_t p = 0; p < kd->num_params; ++p) {
    NEED(1);
    const int64_t nd = words[at++];
    if (nd < 0 || nd > 32) {
      return corrupt(what, "kernel '%s': parameter %u has ndim %lld in its launch", kd->name, p,
                     (long long)nd);
    }
    for (int64_t d = 0; d < nd; ++d) {
      NEED(1);
      const int64_t x = words[at++];
      if (x == KILN_DEVICE_DIM_EXPR) {
        NEED(1);
        const int64_t len = words[at++];
        if (len < 1 || len > (int64_t)KILN_DEVICE_MAX_LAUNCH_OPS) {
          return corrupt(what, "kernel '%s': parameter %u dim %lld is an expression of %lld ops (1 .. %u)",
                         kd->name, p, (long long)d, (long long)len, KILN_DEVICE_MAX_LAUNCH_OPS);
        }
        NEED(len);
        if (!check_program(words + at, len, v, why, sizeof why)) {
          return corrupt(what, "kernel '%s': parameter %u dim %lld: its expression %s", kd->name, p,
                         (long long)d, why);
        }
        at += (uint64_t)len;
      } else if (x < 0 && -1 - x >= v) {
        return corrupt(what, "kernel '%s': parameter %u dim %lld names variable %lld of %lld", kd->name,
                       p, (long long)d, (long long)(-1 - x), (long long)v);
      }
    }
  }
  /* Each variable is the extent it names. */
  for (int64_t k = 0; k < v; ++k) {
    const int64_t param = kd->vars[2 * k], dim = kd->vars[2 * k + 1];
    int ok = param >= 0 && param < (int64_t)kd->num_params && dim >= 0;
    if (ok) {
      const int64_t* sh = param_shape(kd, (uint32_t)param);
      ok = dim < sh[0];
      const int64_t* e = sh + 1;
      for (int64_t d = 0; ok && d < dim; ++d) e = next_extent(e);
      ok = ok && e[0] == -1 - k;
    }
    if (!ok) {
      return corrupt(what, "kernel '%s': shape variable %lld is read from parameter %lld dim %lld, "
                     "which does not name it",
                     kd->name, (long long)k, (long long)param, (long long)dim);
    }
  }
  for (int g = 0; g < 3; ++g) {
    NEED(1);
    const int64_t len = words[at++];
    if (len < 1 || len > (int64_t)KILN_DEVICE_MAX_LAUNCH_OPS) {
      return corrupt(what, "kernel '%s': grid expression %d has %lld ops (1 .. %u)", kd->name, g,
                     (long long)len, KILN_DEVICE_MAX_LAUNCH_OPS);
    }
    NEED(len);
    kd->grid_ops[g] = words + at;
    kd->grid_len[g] = (uint32_t)len;
    if (!check_program(words + at, len, v, why, sizeof why)) {
      return corrupt(what, "kernel '%s': grid expression %d %s", kd->name, g, why);
    }
    at += (uint64_t)len;
  }
  if (kd->grid[0] != 1 || kd->grid[1] != 1 || kd->grid[2] != 1) {
    return corrupt(what, "kernel '%s': a symbolic launch with a static grid", kd->name);
  }
  return NULL;
#undef NEED
}

/* ------------------------------------------------------------ tensor maps */

/* CUtensorMapDataType of `dt`, or -1 for a dtype TMA cannot copy. Signed
 * integers copy as the unsigned type of their width (a copy moves bits). */
static int tma_data_type(DLDataType dt) {
  switch (dt.code) {
    case kDLFloat:
      return dt.bits == 16 ? 6 : dt.bits == 32 ? 7 : dt.bits == 64 ? 8 : -1;
    case kDLBfloat:
      return dt.bits == 16 ? 9 : -1;
    case kDLInt:
      return dt.bits == 8 ? 0 : dt.bits == 16 ? 1 : dt.bits == 32 ? 3 : dt.bits == 64 ? 5 : -1;
    case kDLUInt:
      return dt.bits == 8 ? 0 : dt.bits == 16 ? 1 : dt.bits == 32 ? 2 : dt.bits == 64 ? 4 : -1;
    case 6: /* bool (DLPack's kDLBool, not in this dlpack.h) */
      return dt.bits == 8 ? 0 : -1;
    default:
      return -1;
  }
}

/* Version 4: kernel kd's parameters are its buffers, then its tensor maps;
 * each tensor map's spec (at its launch word) within cuTensorMapEncodeTiled's
 * rules, its buffer an earlier parameter of its dtype; a kernel with tensor
 * maps has a static launch (`launch` 0). Fills kd->num_buffers,
 * ->num_tensor_maps, ->tensor_maps. */
static KilnStatus* parse_tensor_maps(const char* what, KilnDeviceKernelDesc* kd,
                                     const int64_t* words, uint64_t n, uint32_t launch,
                                     uint64_t launch_offset) {
  uint32_t nb = 0;
  while (nb < kd->num_params && !kd->params[nb].tensor_map) ++nb;
  kd->num_buffers = nb;
  for (uint32_t p = nb; p < kd->num_params; ++p) {
    if (!kd->params[p].tensor_map) {
      return corrupt(what, "kernel '%s': parameter %u is a buffer after tensor-map parameter %u "
                     "(a kernel's buffers come first)",
                     kd->name, p, nb);
    }
  }
  const uint32_t ntm = kd->num_params - nb;
  if (ntm == 0) return NULL;
  if (launch != 0) {
    return corrupt(what, "kernel '%s': tensor-map parameter %u in a kernel with a symbolic launch "
                   "(launch %u; a kernel with tensor maps has a static launch)",
                   kd->name, nb, launch);
  }
  kd->tensor_maps = (KilnDeviceTensorMapDesc*)calloc(ntm, sizeof *kd->tensor_maps);
  if (kd->tensor_maps == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", what);
  kd->num_tensor_maps = ntm;
  for (uint32_t j = 0; j < ntm; ++j) {
    const uint32_t p = nb + j;
    KilnDeviceTensorMapDesc* tm = &kd->tensor_maps[j];
    tm->param = p;
    const uint32_t spec = kd->params[p].spec;
    char where[320];
    if (spec == 0 || spec > n) {
      return corrupt(what, "kernel '%s' tensor-map parameter %u: spec %u is outside the %llu launch "
                     "words (1 + the index of its first word)",
                     kd->name, p, spec, (kiln_ull)n);
    }
    uint64_t at = spec - 1;
    (void)snprintf(where, sizeof where, "kernel '%.200s' tensor-map parameter %u (spec at launch word "
                   "%llu, offset %llu)",
                   kd->name, p, (kiln_ull)at, (kiln_ull)(launch_offset + 8 * at));
#define NEED(count)                                                                                \
  do {                                                                                             \
    if ((uint64_t)(count) > n - at) {                                                              \
      return corrupt(what, "%s: its spec runs past the %llu launch words", where, (kiln_ull)n);    \
    }                                                                                              \
  } while (0)
    NEED(2);
    const int64_t buffer = words[at], rank = words[at + 1];
    at += 2;
    if (buffer < 0 || buffer >= (int64_t)nb) {
      return corrupt(what, "%s: its buffer %lld is not one of the kernel's %u buffer parameters", where,
                     (long long)buffer, nb);
    }
    tm->buffer = (uint32_t)buffer;
    const DLDataType dt = kd->params[p].dtype, bt = kd->params[buffer].dtype;
    char dts[32], bts[32];
    kiln_dtype_to_string(dt, dts, sizeof dts);
    if (dt.code != bt.code || dt.bits != bt.bits) {
      kiln_dtype_to_string(bt, bts, sizeof bts);
      return corrupt(what, "%s: its dtype %s is not its buffer's (parameter %lld, %s)", where, dts,
                     (long long)buffer, bts);
    }
    const int data_type = tma_data_type(dt);
    if (data_type < 0) return corrupt(what, "%s: dtype %s has no TMA data type", where, dts);
    tm->data_type = (uint32_t)data_type;
    if (rank < 1 || rank > (int64_t)KILN_DEVICE_MAX_TENSOR_MAP_RANK) {
      return corrupt(what, "%s: its rank %lld is not 1 .. %u", where, (long long)rank,
                     KILN_DEVICE_MAX_TENSOR_MAP_RANK);
    }
    tm->rank = (uint32_t)rank;
    NEED(3 * rank);  /* dims, strides, box, swizzle */
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t x = words[at++];
      if (x < 1 || x > ((int64_t)1 << 32)) {
        return corrupt(what, "%s: dim %lld is %lld elements (1 .. 2^32)", where, (long long)d,
                       (long long)x);
      }
      tm->dims[d] = (uint64_t)x;
    }
    for (int64_t d = 1; d < rank; ++d) {
      const int64_t x = words[at++];
      if (x < 16 || x >= ((int64_t)1 << 40) || x % 16 != 0) {
        return corrupt(what, "%s: the stride of dim %lld is %lld bytes (a multiple of 16, 16 .. "
                       "2^40 - 16)",
                       where, (long long)d, (long long)x);
      }
      tm->strides[d - 1] = (uint64_t)x;
    }
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t x = words[at++];
      if (x < 1 || x > (int64_t)KILN_DEVICE_MAX_TENSOR_MAP_BOX) {
        return corrupt(what, "%s: box dim %lld is %lld elements (1 .. %u)", where, (long long)d,
                       (long long)x, KILN_DEVICE_MAX_TENSOR_MAP_BOX);
      }
      tm->box[d] = (uint32_t)x;
    }
    const uint64_t elem = kiln_dtype_bytes(dt);
    const uint64_t row = tm->box[0] * elem;
    if (row % 16 != 0) {
      return corrupt(what, "%s: its box row (%u elements of %llu bytes) is not a multiple of 16 "
                     "bytes",
                     where, tm->box[0], (kiln_ull)elem);
    }
    const int64_t swizzle = words[at++];
    if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128) {
      return corrupt(what, "%s: its swizzle span is %lld bytes (0, 32, 64 or 128)", where,
                     (long long)swizzle);
    }
    if (swizzle != 0 && row > (uint64_t)swizzle) {
      return corrupt(what, "%s: its box row of %llu bytes is longer than its %lld-byte swizzle span",
                     where, (kiln_ull)row, (long long)swizzle);
    }
    tm->swizzle_bytes = (uint32_t)swizzle;
    tm->swizzle = swizzle == 0 ? 0u : swizzle == 32 ? 1u : swizzle == 64 ? 2u : 3u;
    /* The bytes from the buffer's first element to past the map's last
     * (saturated: a buffer that small is refused where its size is known). */
    uint64_t span = tm->dims[0] * elem; /* <= 2^35 */
    for (uint32_t d = 1; d < tm->rank; ++d) {
      uint64_t part = 0;
      if (__builtin_mul_overflow(tm->dims[d] - 1, tm->strides[d - 1], &part) ||
          __builtin_add_overflow(span, part, &span)) {
        span = UINT64_MAX;
        break;
      }
    }
    tm->span_bytes = span;
#undef NEED
  }
  return NULL;
}

static int eval_grid(const int64_t* ops, uint32_t len, const int64_t* vars, int64_t* out) {
  int64_t stack[33];
  int n = 0;
  for (uint32_t i = 0; i < len; ++i) {
    const int c = op_code(ops[i]);
    if (c == KILN_DEVICE_OP_CONST) {
      stack[n++] = op_operand(ops[i]);
      continue;
    }
    if (c == KILN_DEVICE_OP_VAR) {
      stack[n++] = vars[op_operand(ops[i])];
      continue;
    }
    const int64_t b = stack[--n], a = stack[n - 1];
    int64_t r = 0;
    switch (c) {
      case KILN_DEVICE_OP_ADD:
        if (__builtin_add_overflow(a, b, &r)) return 0;
        break;
      case KILN_DEVICE_OP_SUB:
        if (__builtin_sub_overflow(a, b, &r)) return 0;
        break;
      case KILN_DEVICE_OP_MUL:
        if (__builtin_mul_overflow(a, b, &r)) return 0;
        break;
      case KILN_DEVICE_OP_FLOORDIV:
      case KILN_DEVICE_OP_FLOORMOD: {
        if (b <= 0) return 0;
        int64_t q = a / b;
        if ((a % b != 0) && (a < 0)) --q;
        r = c == KILN_DEVICE_OP_FLOORDIV ? q : a - q * b;
        break;
      }
      case KILN_DEVICE_OP_MIN:
        r = a < b ? a : b;
        break;
      default:
        r = a > b ? a : b;
        break;
    }
    stack[n - 1] = r;
  }
  *out = stack[0];
  return 1;
}

KilnStatus* kiln_device_launch_dims(const KilnDeviceKernelDesc* kd, const DLTensor* const* args,
                                    uint32_t n, int64_t* vars, unsigned grid[3], int* empty) {
  *empty = 0;
  if (n != kd->num_params) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%u arguments given, the kernel takes %u", n,
                              kd->num_params);
  }
  for (uint32_t p = 0; p < n; ++p) {
    const int64_t nd = param_shape(kd, p)[0];
    if (args[p]->ndim != nd) {
      return kiln_status_create(KILN_INVALID_ARGUMENT, "argument %u has %d dims, the kernel takes %lld",
                                p, (int)args[p]->ndim, (long long)nd);
    }
  }
  /* Every rank checked: each variable's dim exists (parse_launch). */
  for (uint32_t k = 0; k < kd->num_vars; ++k) {
    vars[k] = args[kd->vars[2 * k]]->shape[kd->vars[2 * k + 1]];
  }
  for (uint32_t p = 0; p < n; ++p) {
    const int64_t* sh = param_shape(kd, p);
    const int64_t* e = sh + 1;
    for (int64_t d = 0; d < sh[0]; ++d, e = next_extent(e)) {
      int64_t w = e[0];
      if (w == KILN_DEVICE_DIM_EXPR) {
        if (!eval_grid(e + 2, (uint32_t)e[1], vars, &w)) w = -1; /* (never an extent) */
      } else if (w < 0) {
        w = vars[-1 - w];
      }
      const int64_t got = args[p]->shape[d];
      if (got != w) {
        return kiln_status_create(KILN_INVALID_ARGUMENT,
                                  "argument %u dim %lld is %lld, the kernel takes %lld", p, (long long)d,
                                  (long long)got, (long long)w);
      }
    }
  }
  for (int g = 0; g < 3; ++g) {
    int64_t x = 0;
    const int64_t limit = g == 0 ? KILN_DEVICE_MAX_GRID_X : KILN_DEVICE_MAX_GRID_YZ;
    if (!eval_grid(kd->grid_ops[g], kd->grid_len[g], vars, &x) || x < 0 || x > limit) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "grid dim %d of the launch is outside CUDA's limits for these shapes", g);
    }
    if (x == 0) *empty = 1;
    grid[g] = (unsigned)x;
  }
  return NULL;
}

const KilnDeviceKernelDesc* kiln_device_code_find(const KilnDeviceCode* code, const char* name) {
  if (code == NULL || name == NULL) return NULL;
  for (uint32_t i = 0; i < code->num_kernels; ++i) {
    if (strcmp(code->kernels[i].name, name) == 0) return &code->kernels[i];
  }
  return NULL;
}

static int is_ident(const uint8_t* s, uint32_t n) {
  if (n == 0) return 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t c = s[i];
    int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    int digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return 0;
  }
  return 1;
}

static int name_compare(const void* a, const void* b) {
  const KilnDeviceKernelDesc* x = *(const KilnDeviceKernelDesc* const*)a;
  const KilnDeviceKernelDesc* y = *(const KilnDeviceKernelDesc* const*)b;
  return strcmp(x->name, y->name);
}

static const char* image_kind_name(uint32_t kind) {
  switch (kind) {
    case KILN_DEVICE_IMAGE_PTX:
      return "PTX";
    case KILN_DEVICE_IMAGE_CUBIN:
      return "cubin";
    case KILN_DEVICE_IMAGE_SOURCE:
      return "CUDA C source";
    default:
      return "unknown";
  }
}

static KilnStatus* check_images(const uint8_t* s, uint64_t size, const char* what, uint64_t offset,
                                uint32_t count, KilnDeviceCode* dc) {
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* e = s + offset + (uint64_t)i * sizeof(KilnDeviceImage);
    const uint64_t at = offset + (uint64_t)i * sizeof(KilnDeviceImage);
    uint32_t kind = rd32(e);
    uint32_t arch = rd32(e + 4);
    uint64_t off = rd64(e + 8);
    uint64_t bytes = rd64(e + 16);
    if (rd64(e + 24) != 0) {
      return corrupt(what, "image %u (offset %llu): reserved field is not 0", i, (kiln_ull)(at + 24));
    }
    KilnDeviceImageRef* ref = kind == KILN_DEVICE_IMAGE_PTX     ? &dc->ptx
                              : kind == KILN_DEVICE_IMAGE_CUBIN ? &dc->cubin
                              : kind == KILN_DEVICE_IMAGE_SOURCE ? &dc->source
                                                                 : NULL;
    if (ref == NULL) {
      return corrupt(what, "image %u (offset %llu): unknown kind %u (known: 1 PTX, 2 cubin, 3 CUDA C "
                     "source)",
                     i, (kiln_ull)at, kind);
    }
    if (ref->size != 0) {
      return corrupt(what, "image %u: a second %s image", i, image_kind_name(kind));
    }
    if (off % 8 != 0 || off < KILN_DEVICE_CODE_HEADER_SIZE || off > size || bytes > size - off ||
        bytes == 0) {
      return corrupt(what, "image %u (%s): %llu bytes at offset %llu lie outside the %llu-byte "
                     "section (or are empty, or unaligned)",
                     i, image_kind_name(kind), (kiln_ull)bytes, (kiln_ull)off, (kiln_ull)size);
    }
    if (kind == KILN_DEVICE_IMAGE_SOURCE ? arch != 0 : (arch < 50 || arch > 1000)) {
      return corrupt(what, "image %u (%s, offset %llu): architecture %u is not valid", i,
                     image_kind_name(kind), (kiln_ull)(at + 4), arch);
    }
    const uint8_t* data = s + off;
    if (kind == KILN_DEVICE_IMAGE_CUBIN) {
      if (bytes < 64 || memcmp(data, "\x7f" "ELF", 4) != 0) {
        return corrupt(what, "image %u (cubin, offset %llu): not an ELF file", i, (kiln_ull)off);
      }
    } else {
      /* Text: one NUL, the last byte. */
      if (data[bytes - 1] != '\0' || memchr(data, '\0', (size_t)bytes) != data + bytes - 1) {
        return corrupt(what, "image %u (%s, offset %llu): the text is not NUL-terminated or holds a "
                       "NUL byte",
                       i, image_kind_name(kind), (kiln_ull)off);
      }
      if (kind == KILN_DEVICE_IMAGE_PTX && strstr((const char*)data, ".version") == NULL) {
        return corrupt(what, "image %u (PTX, offset %llu): no .version directive: not PTX", i,
                       (kiln_ull)off);
      }
    }
    ref->arch = arch;
    ref->offset = off;
    ref->size = bytes;
  }
  if (dc->ptx.size == 0) return corrupt(what, "has no PTX image (every device artifact has one)");
  return NULL;
}

/* Version 3: kernel kd's dynamic shared memory (its record `e` at offset
 * `at`): within the per-block opt-in maximum, static + dynamic too, and the
 * reserved word 0. */
static KilnStatus* check_dynamic_shared(const char* what, KilnDeviceKernelDesc* kd,
                                        const uint8_t* e, uint64_t at) {
  kd->dynamic_shared_bytes = rd32(e + 48);
  if (kd->dynamic_shared_bytes > KILN_DEVICE_MAX_DYNAMIC_SHARED) {
    return corrupt(what, "kernel '%s' (offset %llu): %u bytes of dynamic shared memory, more than "
                   "%u (the most any GPU lets a block opt into)",
                   kd->name, (kiln_ull)(at + 48), kd->dynamic_shared_bytes,
                   KILN_DEVICE_MAX_DYNAMIC_SHARED);
  }
  if ((uint64_t)kd->shared_bytes + kd->dynamic_shared_bytes > KILN_DEVICE_MAX_DYNAMIC_SHARED) {
    return corrupt(what, "kernel '%s' (offset %llu): %u bytes of static and %u of dynamic shared "
                   "memory, more than %u in all",
                   kd->name, (kiln_ull)(at + 48), kd->shared_bytes, kd->dynamic_shared_bytes,
                   KILN_DEVICE_MAX_DYNAMIC_SHARED);
  }
  if (rd32(e + 52) != 0) {
    return corrupt(what, "kernel '%s' (offset %llu): reserved field is not 0", kd->name,
                   (kiln_ull)(at + 52));
  }
  return NULL;
}

static KilnStatus* describe(KilnDeviceCode* dc) {
  Text t = {NULL, 0, 0, 0};
  text_add(&t, "{\"device\": \"cuda\", \"ptx_arch\": \"compute_%u\", \"ptx_bytes\": %llu", dc->ptx.arch,
           (kiln_ull)dc->ptx.size);
  if (dc->cubin.size != 0) {
    text_add(&t, ", \"cubin_arch\": \"sm_%u\", \"cubin_bytes\": %llu", dc->cubin.arch,
             (kiln_ull)dc->cubin.size);
  }
  if (dc->source.size != 0) text_add(&t, ", \"source_bytes\": %llu", (kiln_ull)dc->source.size);
  text_add(&t, ", \"kernels\": [");
  for (uint32_t k = 0; k < dc->num_kernels; ++k) {
    const KilnDeviceKernelDesc* kd = &dc->kernels[k];
    text_add(&t, "%s{\"name\": \"%s\", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], "
             "\"shared_bytes\": %u, \"dynamic_shared_bytes\": %u, ",
             k ? ", " : "", kd->name, kd->grid[0], kd->grid[1], kd->grid[2], kd->block[0],
             kd->block[1], kd->block[2], kd->shared_bytes, kd->dynamic_shared_bytes);
    /* A symbolic launch: its grid comes from the shapes, and the kernel
     * takes that many `long long` shape variables after its buffers. */
    if (kd->num_vars != 0) text_add(&t, "\"symbolic_launch\": true, \"shape_vars\": %u, ", kd->num_vars);
    text_add(&t, "\"params\": [");
    for (uint32_t p = 0; p < kd->num_buffers; ++p) {
      char dt[32];
      kiln_dtype_to_string(kd->params[p].dtype, dt, sizeof dt);
      text_add(&t, "%s\"%s%s*\"", p ? ", " : "", kd->params[p].read_only ? "const " : "", dt);
    }
    /* Version 4: "kiln_tmap(param 0: float16 [64, 128] box [64, 64] swizzle 128)". */
    for (uint32_t j = 0; j < kd->num_tensor_maps; ++j) {
      const KilnDeviceTensorMapDesc* tm = &kd->tensor_maps[j];
      char dt[32];
      kiln_dtype_to_string(kd->params[tm->param].dtype, dt, sizeof dt);
      text_add(&t, "%s\"kiln_tmap(param %u: %s [", tm->param ? ", " : "", tm->buffer, dt);
      for (uint32_t d = 0; d < tm->rank; ++d) text_add(&t, "%s%llu", d ? ", " : "", (kiln_ull)tm->dims[d]);
      text_add(&t, "] box [");
      for (uint32_t d = 0; d < tm->rank; ++d) text_add(&t, "%s%u", d ? ", " : "", tm->box[d]);
      text_add(&t, "] swizzle %u)\"", tm->swizzle_bytes);
    }
    text_add(&t, "]}");
  }
  text_add(&t, "]}");
  if (t.failed) {
    free(t.data);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "DEVICE_CODE: out of memory");
  }
  dc->json = t.data;
  return NULL;
}

KilnStatus* kiln_device_code_parse(const uint8_t* s, uint64_t size, const char* what,
                                   KilnDeviceCode** out) {
  *out = NULL;
  if (size < KILN_DEVICE_CODE_HEADER_SIZE) {
    return corrupt(what, "is %llu bytes, shorter than its %u-byte header", (kiln_ull)size,
                   KILN_DEVICE_CODE_HEADER_SIZE);
  }
  if (memcmp(s, KILN_DEVICE_CODE_MAGIC, KILN_DEVICE_CODE_MAGIC_SIZE) != 0) {
    return corrupt(what, "has no \"KILNDEV\" magic at its offset 0");
  }
  uint32_t version = rd32(s + 8);
  if (version < 1 || version > KILN_DEVICE_CODE_VERSION) {
    if (version > KILN_DEVICE_CODE_VERSION) {
      return kiln_status_create(KILN_UNIMPLEMENTED,
                                "%s: made by a newer kiln: DEVICE_CODE version %u, this runtime "
                                "reads %u",
                                what, version, KILN_DEVICE_CODE_VERSION);
    }
    return corrupt(what, "version (offset 8) is %u", version);
  }
  /* Version 3's kernel records add the dynamic shared memory (version 4's too). */
  const uint64_t kernel_entry = version >= 3 ? sizeof(KilnDeviceKernelV3) : sizeof(KilnDeviceKernel);
  uint32_t device_type = rd32(s + 12);
  if (device_type != kDLCUDA) {
    return kiln_status_create(KILN_UNIMPLEMENTED,
                              "%s: the device code is for DLPack device type %u; this runtime runs "
                              "device code for CUDA (%d) only",
                              what, device_type, (int)kDLCUDA);
  }
  uint32_t num_images = rd32(s + 16), num_kernels = rd32(s + 20), num_params = rd32(s + 24);
  const uint32_t num_words = rd32(s + 28);
  const uint64_t words_off = rd64(s + 72);
  if (version == 1 && (num_words != 0 || words_off != 0)) {
    return corrupt(what, "reserved header field is not 0");
  }
  if (num_words > KILN_DEVICE_MAX_LAUNCH_WORDS || (num_words == 0) != (words_off == 0)) {
    return corrupt(what, "num_launch_words (offset 28) is %u with launch_offset %llu", num_words,
                   (kiln_ull)words_off);
  }
  uint64_t images_off = rd64(s + 32), kernels_off = rd64(s + 40), params_off = rd64(s + 48);
  uint64_t strings_off = rd64(s + 56), strings_size = rd64(s + 64);
  if (num_images == 0 || num_images > KILN_DEVICE_MAX_IMAGES) {
    return corrupt(what, "num_images (offset 16) is %u (1 .. %u)", num_images, KILN_DEVICE_MAX_IMAGES);
  }
  /* 0: a model without kernels (its outputs are inputs or constants). */
  if (num_kernels > KILN_DEVICE_MAX_KERNELS) {
    return corrupt(what, "num_kernels (offset 20) is %u (0 .. %u)", num_kernels,
                   KILN_DEVICE_MAX_KERNELS);
  }
  if (num_params > (uint64_t)num_kernels * KILN_DEVICE_MAX_PARAMS_PER_KERNEL) {
    return corrupt(what, "num_params (offset 24) is %u, more than %u kernels may have", num_params,
                   num_kernels);
  }
  KilnStatus* st = check_table(what, "the image table", images_off, num_images,
                               sizeof(KilnDeviceImage), size);
  if (st == NULL) {
    st = check_table(what, "the kernel table", kernels_off, num_kernels, kernel_entry, size);
  }
  if (st == NULL) {
    st = check_table(what, "the parameter table", params_off, num_params, sizeof(KilnDeviceParam), size);
  }
  if (st == NULL) st = check_table(what, "the strings", strings_off, strings_size, 1, size);
  if (st == NULL && num_words != 0) {
    st = check_table(what, "the launch words", words_off, num_words, sizeof(int64_t), size);
  }
  if (st != NULL) return st;

  KilnDeviceCode* dc = (KilnDeviceCode*)calloc(1, sizeof *dc);
  if (dc == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", what);
  dc->device_type = device_type;
  dc->num_kernels = num_kernels;
  dc->kernels = (KilnDeviceKernelDesc*)calloc(num_kernels ? num_kernels : 1, sizeof *dc->kernels);
  dc->params = (KilnDeviceParamDesc*)calloc(num_params ? num_params : 1, sizeof *dc->params);
  /* The names' bytes (each in range: checked again below), NUL-terminated. */
  uint64_t names_bytes = 1;
  for (uint32_t k = 0; k < num_kernels; ++k) {
    uint32_t n = rd32(s + kernels_off + (uint64_t)k * kernel_entry + 4);
    names_bytes += (n <= KILN_DEVICE_MAX_NAME ? n : 0) + 1;
  }
  dc->names = (char*)malloc((size_t)names_bytes);
  dc->launch_words = (int64_t*)malloc((num_words ? num_words : 1) * sizeof(int64_t));
  for (uint32_t i = 0; dc->launch_words != NULL && i < num_words; ++i) {
    dc->launch_words[i] = (int64_t)rd64(s + words_off + 8 * (uint64_t)i);
  }
  const KilnDeviceKernelDesc** sorted =
      (const KilnDeviceKernelDesc**)malloc((num_kernels ? num_kernels : 1) * sizeof *sorted);
  if (dc->kernels == NULL || dc->params == NULL || dc->names == NULL || sorted == NULL ||
      dc->launch_words == NULL) {
    free(sorted);
    kiln_device_code_free(dc);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory", what);
  }
  st = check_images(s, size, what, images_off, num_images, dc);

  /* Parameters. */
  for (uint32_t p = 0; st == NULL && p < num_params; ++p) {
    const uint64_t at = params_off + (uint64_t)p * sizeof(KilnDeviceParam);
    const uint8_t* e = s + at;
    DLDataType dt;
    dt.code = e[1];
    dt.bits = e[2];
    dt.lanes = 1;
    /* Version 4's tensor maps: checked with their kernel (parse_tensor_maps). */
    const int tensor_map = e[0] == KILN_DEVICE_PARAM_TENSOR_MAP && version >= 4;
    if (e[0] != KILN_DEVICE_PARAM_BUFFER && !tensor_map) {
      st = corrupt(what, "parameter %u (offset %llu): unknown kind %u (known: 1 buffer%s)", p,
                   (kiln_ull)at, e[0], version >= 4 ? ", 2 tensor map" : "");
    } else if (kiln_dtype_bytes(dt) == 0) {
      st = corrupt(what, "parameter %u (offset %llu): unknown dtype (code %u, %u bits)", p,
                   (kiln_ull)(at + 1), e[1], e[2]);
    } else if ((e[3] & ~(tensor_map ? 0u : KILN_DEVICE_PARAM_READ_ONLY)) != 0) {
      st = corrupt(what, "parameter %u (offset %llu): unknown flags %u (a %s may have %s)", p,
                   (kiln_ull)(at + 3), e[3], tensor_map ? "tensor map" : "buffer",
                   tensor_map ? "none" : "1 read-only");
    } else if (!tensor_map && rd32(e + 4) != 0) {
      st = corrupt(what, "parameter %u (offset %llu): a buffer's spec field is %u, not 0", p,
                   (kiln_ull)(at + 4), rd32(e + 4));
    } else {
      dc->params[p].dtype = dt;
      dc->params[p].read_only = (e[3] & KILN_DEVICE_PARAM_READ_ONLY) != 0;
      dc->params[p].tensor_map = tensor_map;
      dc->params[p].spec = rd32(e + 4);
    }
  }

  /* Kernels. */
  size_t names_used = 0;
  for (uint32_t k = 0; st == NULL && k < num_kernels; ++k) {
    const uint64_t at = kernels_off + (uint64_t)k * kernel_entry;
    const uint8_t* e = s + at;
    KilnDeviceKernelDesc* kd = &dc->kernels[k];
    uint32_t name_off = rd32(e), name_size = rd32(e + 4);
    if (name_size == 0 || name_size > KILN_DEVICE_MAX_NAME || name_off > strings_size ||
        name_size > strings_size - name_off) {
      st = corrupt(what, "kernel %u (offset %llu): its name (%u bytes at %u) lies outside the %llu "
                   "bytes of strings, is empty or longer than %u",
                   k, (kiln_ull)at, name_size, name_off, (kiln_ull)strings_size, KILN_DEVICE_MAX_NAME);
      break;
    }
    const uint8_t* name = s + strings_off + name_off;
    if (!is_ident(name, name_size)) {
      st = corrupt(what, "kernel %u (offset %llu): its name '%.*s' is not a C identifier", k,
                   (kiln_ull)at, (int)(name_size > 64 ? 64 : name_size), (const char*)name);
      break;
    }
    memcpy(dc->names + names_used, name, name_size);
    dc->names[names_used + name_size] = '\0';
    kd->name = dc->names + names_used;
    names_used += name_size + 1;
    uint64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
      kd->grid[d] = rd32(e + 8 + 4 * d);
      kd->block[d] = rd32(e + 20 + 4 * d);
      threads *= kd->block[d];
    }
    if (kd->grid[0] == 0 || kd->grid[1] == 0 || kd->grid[2] == 0 ||
        kd->grid[0] > KILN_DEVICE_MAX_GRID_X || kd->grid[1] > KILN_DEVICE_MAX_GRID_YZ ||
        kd->grid[2] > KILN_DEVICE_MAX_GRID_YZ) {
      st = corrupt(what, "kernel '%s' (offset %llu): grid %u x %u x %u is outside CUDA's limits", kd->name,
                   (kiln_ull)(at + 8), kd->grid[0], kd->grid[1], kd->grid[2]);
    } else if (threads == 0 || threads > KILN_DEVICE_MAX_BLOCK_THREADS ||
               kd->block[2] > KILN_DEVICE_MAX_BLOCK_Z) {
      st = corrupt(what, "kernel '%s' (offset %llu): block %u x %u x %u is outside CUDA's limits (at "
                   "most %u threads, z at most %u)",
                   kd->name, (kiln_ull)(at + 20), kd->block[0], kd->block[1], kd->block[2],
                   KILN_DEVICE_MAX_BLOCK_THREADS, KILN_DEVICE_MAX_BLOCK_Z);
    } else if ((kd->shared_bytes = rd32(e + 32)) > KILN_DEVICE_MAX_STATIC_SHARED) {
      st = corrupt(what, "kernel '%s' (offset %llu): %u bytes of shared memory, more than %u",
                   kd->name, (kiln_ull)(at + 32), kd->shared_bytes, KILN_DEVICE_MAX_STATIC_SHARED);
    } else if (version >= 3 && (st = check_dynamic_shared(what, kd, e, at)) != NULL) {
      /* st says what is wrong. */
    } else {
      uint32_t first = rd32(e + 36), count = rd32(e + 40), launch = rd32(e + 44);
      if (launch != 0 && (version == 1 || launch > num_words)) {
        st = corrupt(what, "kernel '%s' (offset %llu): launch %u is outside the %u launch words",
                     kd->name, (kiln_ull)(at + 44), launch, num_words);
      } else if (count > KILN_DEVICE_MAX_PARAMS_PER_KERNEL || first > num_params ||
                 count > num_params - first) {
        st = corrupt(what, "kernel '%s' (offset %llu): parameters [%u, %u + %u) outside the %u of the "
                     "table",
                     kd->name, (kiln_ull)(at + 36), first, first, count, num_params);
      } else {
        kd->num_params = count;
        kd->params = dc->params + first;
        st = parse_tensor_maps(what, kd, dc->launch_words, num_words, launch, words_off);
        if (st == NULL && launch != 0) {
          st = parse_launch(what, kd, dc->launch_words, num_words, launch - 1);
        }
      }
    }
    sorted[k] = kd;
  }
  if (st == NULL) {
    qsort(sorted, num_kernels, sizeof *sorted, name_compare);
    for (uint32_t k = 1; k < num_kernels; ++k) {
      if (strcmp(sorted[k - 1]->name, sorted[k]->name) == 0) {
        st = corrupt(what, "names kernel '%s' twice", sorted[k]->name);
        break;
      }
    }
  }
  free(sorted);
  if (st == NULL) st = describe(dc);
  if (st != NULL) {
    kiln_device_code_free(dc);
    return st;
  }
  *out = dc;
  return NULL;
}
