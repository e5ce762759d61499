/* File: runtime_c/npy.c
 *
 * kiln/npy.h: NumPy .npy files.
 *
 * Writing: format 1.0 (2.0 when the header needs more than 65535 bytes), a
 * header dict {'descr': ..., 'fortran_order': False, 'shape': (...), } padded
 * with spaces and a final '\n' so that the data starts at a multiple of 64,
 * then the raw little-endian data in C order.
 *
 * Reading: formats 1.0, 2.0 and 3.0. The header must be exactly a Python dict
 * literal with the three keys 'descr' (a string), 'fortran_order' (True or
 * False) and 'shape' (a tuple of non-negative integers), in any order, with
 * optional trailing comma and whitespace; nothing else is accepted (no
 * escapes, no other keys, no structured dtypes). Fortran order is refused
 * for more than one dimension. The data must be exactly
 * prod(shape) * itemsize bytes: fewer is "short data", more is "trailing
 * bytes". The data buffer is 64-byte aligned. Nothing from the file is
 * trusted: every length is bounds-checked, sizes are computed with overflow
 * checks, and the data size is checked against the file size before it is
 * allocated.
 */
#define _POSIX_C_SOURCE 200809L /* open, stat, fstat, fcntl, read */

#include "kiln/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kiln/status.h"
#include "runtime_c/artifact_blob.h"

#define KILN_NPY_MAGIC "\x93NUMPY"
#define KILN_NPY_MAGIC_SIZE 6u
#define KILN_NPY_ALIGNMENT 64u
/* The longest header read (NumPy itself writes a few hundred bytes). */
#define KILN_NPY_MAX_HEADER (1u << 20)
/* The most dimensions read or written. */
#define KILN_NPY_MAX_NDIM 32
#define KILN_DTYPE_CODE_BOOL 6u

typedef unsigned long long kiln_ull;

/* A tensor read from a file, with room for its shape. */
typedef struct {
  KilnNpyTensor pub; /* first: KilnNpyTensor* and this struct's address agree */
  int64_t shape[KILN_NPY_MAX_NDIM];
} KilnNpyTensorImpl;

typedef struct {
  uint8_t code;
  uint8_t bits;
  char kind; /* 'f', 'i', 'u', 'b' */
} KilnNpyType;

static const KilnNpyType kiln_npy_types[] = {
    {kDLFloat, 16, 'f'}, {kDLFloat, 32, 'f'}, {kDLFloat, 64, 'f'},
    {kDLInt, 8, 'i'},    {kDLInt, 16, 'i'},   {kDLInt, 32, 'i'},   {kDLInt, 64, 'i'},
    {kDLUInt, 8, 'u'},   {kDLUInt, 16, 'u'},  {kDLUInt, 32, 'u'},  {kDLUInt, 64, 'u'},
    {KILN_DTYPE_CODE_BOOL, 8, 'b'},
};
#define KILN_NPY_NUM_TYPES (sizeof(kiln_npy_types) / sizeof(kiln_npy_types[0]))

/* The descr of a dtype ("<f4", "|u1", ...) into buf (>= 8 bytes); -1 when
 * it has none. bfloat16 is stored as "<u2". */
static int kiln_npy_descr(DLDataType dtype, char* buf, size_t buf_size) {
  if (dtype.lanes != 1) return -1;
  if (dtype.code == kDLBfloat && dtype.bits == 16) {
    (void)snprintf(buf, buf_size, "<u2");
    return 0;
  }
  for (size_t i = 0; i < KILN_NPY_NUM_TYPES; ++i) {
    if (kiln_npy_types[i].code == dtype.code && kiln_npy_types[i].bits == dtype.bits) {
      unsigned bytes = dtype.bits / 8u;
      (void)snprintf(buf, buf_size, "%c%c%u", bytes == 1 ? '|' : '<', kiln_npy_types[i].kind,
                     bytes);
      return 0;
    }
  }
  return -1;
}

static KilnStatus* kiln_npy_errno(const char* path, const char* what, int err) {
  return kiln_status_create(err == ENOENT ? KILN_NOT_FOUND : KILN_INTERNAL, "%s: %s: %s", path,
                            what, strerror(err));
}

/* ------------------------------------------------------------------ write */

KilnStatus* kiln_npy_write(const char* path, const DLTensor* tensor) {
  if (path == NULL || tensor == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_npy_write: NULL path or tensor");
  }
  if (tensor->device.device_type != kDLCPU && tensor->device.device_type != kDLCUDAHost) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: cannot write a tensor that is not in CPU memory (device type "
                              "%d)",
                              path, (int)tensor->device.device_type);
  }
  if (tensor->ndim < 0 || tensor->ndim > KILN_NPY_MAX_NDIM ||
      (tensor->ndim > 0 && tensor->shape == NULL)) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: bad tensor: ndim %d (at most %d) or NULL shape", path,
                              tensor->ndim, KILN_NPY_MAX_NDIM);
  }
  char descr[16];
  if (kiln_npy_descr(tensor->dtype, descr, sizeof(descr)) != 0) {
    char name[64];
    kiln_dtype_to_string(tensor->dtype, name, sizeof(name));
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: dtype %s cannot be written to .npy",
                              path, name);
  }
  const uint64_t itemsize = tensor->dtype.bits / 8u;
  uint64_t elements = 1;
  int empty = 0;
  for (int d = 0; d < tensor->ndim; ++d) {
    int64_t dim = tensor->shape[d];
    if (dim < 0) {
      return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: dimension %d is negative (%lld)",
                                path, d, (long long)dim);
    }
    if (dim == 0) {
      empty = 1;
    } else if (!empty) {
      if (elements > UINT64_MAX / (uint64_t)dim) {
        return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: the element count overflows", path);
      }
      elements *= (uint64_t)dim;
    }
  }
  if (empty) elements = 0;
  if (elements > (uint64_t)SIZE_MAX / itemsize) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: the tensor is too large", path);
  }
  const uint64_t data_size = elements * itemsize;
  if (tensor->strides != NULL && data_size != 0) {
    int64_t expected = 1;
    for (int d = tensor->ndim - 1; d >= 0; --d) {
      if (tensor->shape[d] != 1 && tensor->strides[d] != expected) {
        return kiln_status_create(KILN_INVALID_ARGUMENT,
                                  "%s: the tensor is not compact: stride %d is %lld, expected "
                                  "%lld",
                                  path, d, (long long)tensor->strides[d], (long long)expected);
      }
      expected *= tensor->shape[d];
    }
  }
  if (data_size != 0 && tensor->data == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: the tensor's data is NULL", path);
  }
  /* [data + byte_offset, + data_size) must be an address range: an offset
   * past any address space (2^56) or a range that wraps is refused rather
   * than handed to fwrite. */
  if (data_size != 0) {
    const uintptr_t base = (uintptr_t)tensor->data;
    const uintptr_t limit = (uintptr_t)1 << 56;
    if (tensor->byte_offset >= limit || tensor->byte_offset > UINTPTR_MAX - base ||
        data_size > UINTPTR_MAX - base - (uintptr_t)tensor->byte_offset ||
        base + (uintptr_t)tensor->byte_offset + (uintptr_t)data_size > limit) {
      return kiln_status_create(KILN_INVALID_ARGUMENT,
                                "%s: the tensor's byte_offset %llu does not fit: data %p + "
                                "byte_offset + %llu bytes is not an address range",
                                path, (unsigned long long)tensor->byte_offset, tensor->data,
                                (unsigned long long)data_size);
    }
  }

  /* The header text: at most 32 dims of 20 digits each, so a fixed buffer. */
  char dict[1024];
  int used = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (",
                      descr);
  for (int d = 0; d < tensor->ndim; ++d) {
    used += snprintf(dict + used, sizeof(dict) - (size_t)used, d == 0 ? "%lld" : ", %lld",
                     (long long)tensor->shape[d]);
  }
  used += snprintf(dict + used, sizeof(dict) - (size_t)used, "%s), }",
                   tensor->ndim == 1 ? "," : "");
  /* Version 1.0: 10-byte prefix with a u16 length; 2.0 when it does not fit. */
  size_t text = (size_t)used + 1u; /* + '\n' */
  size_t prefix = 10u;
  size_t total = (prefix + text + KILN_NPY_ALIGNMENT - 1u) / KILN_NPY_ALIGNMENT * KILN_NPY_ALIGNMENT;
  int major = 1;
  if (total - prefix > 65535u) {
    major = 2;
    prefix = 12u;
    total = (prefix + text + KILN_NPY_ALIGNMENT - 1u) / KILN_NPY_ALIGNMENT * KILN_NPY_ALIGNMENT;
  }
  uint8_t header[1024 + 2 * KILN_NPY_ALIGNMENT];
  const size_t header_len = total - prefix;
  memcpy(header, KILN_NPY_MAGIC, KILN_NPY_MAGIC_SIZE);
  header[6] = (uint8_t)major;
  header[7] = 0;
  if (major == 1) {
    header[8] = (uint8_t)header_len;
    header[9] = (uint8_t)(header_len >> 8);
  } else {
    for (int i = 0; i < 4; ++i) header[8 + i] = (uint8_t)(header_len >> (8 * i));
  }
  memcpy(header + prefix, dict, (size_t)used);
  memset(header + prefix + (size_t)used, ' ', total - prefix - (size_t)used - 1u);
  header[total - 1u] = '\n';

  FILE* f = fopen(path, "wb");
  if (f == NULL) return kiln_npy_errno(path, "cannot create", errno);
  int ok = fwrite(header, 1, total, f) == total;
  if (ok && data_size != 0) {
    const uint8_t* data = (const uint8_t*)tensor->data + tensor->byte_offset;
    ok = fwrite(data, 1, (size_t)data_size, f) == (size_t)data_size;
  }
  int err = ok ? 0 : errno;
  if (fclose(f) != 0 && ok) {
    ok = 0;
    err = errno;
  }
  if (!ok) {
    (void)remove(path);
    return kiln_npy_errno(path, "write failed", err == 0 ? EIO : err);
  }
  return NULL;
}

/* ------------------------------------------------------------------- read */

typedef struct {
  const char* p;
  const char* end;
} KilnCursor;

static void kiln_skip_ws(KilnCursor* c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) {
    ++c->p;
  }
}

static int kiln_accept(KilnCursor* c, char ch) {
  if (c->p < c->end && *c->p == ch) {
    ++c->p;
    return 1;
  }
  return 0;
}

static int kiln_accept_word(KilnCursor* c, const char* word) {
  size_t n = strlen(word);
  if ((size_t)(c->end - c->p) >= n && memcmp(c->p, word, n) == 0) {
    c->p += n;
    return 1;
  }
  return 0;
}

/* A '...' or "..." literal without escapes; *s and *n give its contents
 * (pointing into the header). */
static int kiln_parse_string(KilnCursor* c, const char** s, size_t* n) {
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
  char quote = *c->p++;
  const char* start = c->p;
  while (c->p < c->end && *c->p != quote) {
    if (*c->p == '\\' || *c->p == '\n') return 0;
    ++c->p;
  }
  if (c->p >= c->end) return 0;
  *s = start;
  *n = (size_t)(c->p - start);
  ++c->p;
  return 1;
}

/* A non-negative decimal integer (a Python 2 'L' suffix allowed). */
static int kiln_parse_dim(KilnCursor* c, int64_t* out) {
  if (c->p >= c->end || *c->p < '0' || *c->p > '9') return 0;
  uint64_t v = 0;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    uint64_t digit = (uint64_t)(*c->p - '0');
    if (v > ((uint64_t)INT64_MAX - digit) / 10u) return 0;
    v = v * 10u + digit;
    ++c->p;
  }
  (void)kiln_accept(c, 'L');
  *out = (int64_t)v;
  return 1;
}

/* '(' [dim (',' dim)* [',']] ')', with a 1-tuple written "(n,)". */
static int kiln_parse_shape(KilnCursor* c, int64_t* shape, int* ndim) {
  if (!kiln_accept(c, '(')) return 0;
  int n = 0;
  int trailing_comma = 0;
  kiln_skip_ws(c);
  while (!kiln_accept(c, ')')) {
    if (n == KILN_NPY_MAX_NDIM) return 0;
    if (!kiln_parse_dim(c, &shape[n])) return 0;
    ++n;
    kiln_skip_ws(c);
    trailing_comma = kiln_accept(c, ',');
    kiln_skip_ws(c);
    if (!trailing_comma) {
      if (!kiln_accept(c, ')')) return 0;
      break;
    }
  }
  if (n == 1 && !trailing_comma) return 0; /* "(4)" is an int, not a tuple */
  *ndim = n;
  return 1;
}

/* Parses a descr string into a dtype. 1: ok; 0: malformed; -1: unsupported. */
static int kiln_parse_descr(const char* s, size_t n, DLDataType* dtype) {
  if (n < 3 || n > 4) return n >= 1 ? -1 : 0;
  char order = s[0];
  char kind = s[1];
  unsigned bytes = 0;
  for (size_t i = 2; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    bytes = bytes * 10u + (unsigned)(s[i] - '0');
  }
  if (order != '<' && order != '|' && order != '>' && order != '=') return -1;
  int little_host = 1;
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  little_host = 0;
#endif
  /* Byte order only matters above one byte. */
  if (bytes > 1 && !(order == '<' || (order == '=' && little_host))) return -1;
  for (size_t i = 0; i < KILN_NPY_NUM_TYPES; ++i) {
    if (kiln_npy_types[i].kind == kind && kiln_npy_types[i].bits == 8u * bytes) {
      dtype->code = kiln_npy_types[i].code;
      dtype->bits = kiln_npy_types[i].bits;
      dtype->lanes = 1;
      return 1;
    }
  }
  return -1;
}

static KilnStatus* kiln_npy_bad_header(const char* path, const char* why) {
  return kiln_status_create(KILN_DATA_LOSS, "%s: malformed .npy header: %s", path, why);
}

/* Parses the header dict. */
static KilnStatus* kiln_parse_header(const char* path, const char* text, size_t size,
                                     DLDataType* dtype, int64_t* shape, int* ndim) {
  KilnCursor c = {text, text + size};
  int have_descr = 0;
  int have_order = 0;
  int have_shape = 0;
  int fortran = 0;
  const char* descr = NULL;
  size_t descr_size = 0;
  kiln_skip_ws(&c);
  if (!kiln_accept(&c, '{')) return kiln_npy_bad_header(path, "it does not start with '{'");
  kiln_skip_ws(&c);
  while (!kiln_accept(&c, '}')) {
    const char* key = NULL;
    size_t key_size = 0;
    if (!kiln_parse_string(&c, &key, &key_size)) {
      return kiln_npy_bad_header(path, "expected a quoted key");
    }
    kiln_skip_ws(&c);
    if (!kiln_accept(&c, ':')) return kiln_npy_bad_header(path, "expected ':' after a key");
    kiln_skip_ws(&c);
    if (key_size == 5 && memcmp(key, "descr", 5) == 0) {
      if (have_descr) return kiln_npy_bad_header(path, "'descr' appears twice");
      if (!kiln_parse_string(&c, &descr, &descr_size)) {
        return kiln_status_create(KILN_INVALID_ARGUMENT,
                                  "%s: unsupported .npy dtype: 'descr' is not a simple string "
                                  "(structured dtypes are not supported)",
                                  path);
      }
      have_descr = 1;
    } else if (key_size == 13 && memcmp(key, "fortran_order", 13) == 0) {
      if (have_order) return kiln_npy_bad_header(path, "'fortran_order' appears twice");
      if (kiln_accept_word(&c, "True")) {
        fortran = 1;
      } else if (!kiln_accept_word(&c, "False")) {
        return kiln_npy_bad_header(path, "'fortran_order' is not True or False");
      }
      have_order = 1;
    } else if (key_size == 5 && memcmp(key, "shape", 5) == 0) {
      if (have_shape) return kiln_npy_bad_header(path, "'shape' appears twice");
      if (!kiln_parse_shape(&c, shape, ndim)) {
        return kiln_npy_bad_header(path,
                                   "'shape' is not a tuple of at most 32 non-negative integers");
      }
      have_shape = 1;
    } else {
      return kiln_npy_bad_header(path, "unknown key (expected 'descr', 'fortran_order', 'shape')");
    }
    kiln_skip_ws(&c);
    if (!kiln_accept(&c, ',')) {
      if (!kiln_accept(&c, '}')) return kiln_npy_bad_header(path, "expected ',' or '}'");
      break;
    }
    kiln_skip_ws(&c);
  }
  kiln_skip_ws(&c);
  if (c.p != c.end) return kiln_npy_bad_header(path, "unexpected text after the dict");
  if (!have_descr || !have_order || !have_shape) {
    return kiln_npy_bad_header(path, "missing 'descr', 'fortran_order' or 'shape'");
  }
  int r = kiln_parse_descr(descr, descr_size, dtype);
  if (r <= 0) {
    int shown = descr_size > 32 ? 32 : (int)descr_size;
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: unsupported .npy dtype '%.*s' (supported: little-endian "
                              "f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1)",
                              path, shown, descr);
  }
  if (fortran && *ndim > 1) {
    return kiln_status_create(KILN_INVALID_ARGUMENT,
                              "%s: Fortran-order .npy arrays are not supported", path);
  }
  return NULL;
}

/* Reads exactly n bytes; *got receives how many were read before EOF. */
static int kiln_read_full(int fd, void* buf, size_t n, size_t* got) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = read(fd, (uint8_t*)buf + done, n - done);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *got = done;
      return -1;
    }
    if (r == 0) break;
    done += (size_t)r;
  }
  *got = done;
  return 0;
}

/* What a non-regular file is, for messages. */
static const char* kiln_npy_file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a file";
}

static KilnStatus* kiln_npy_not_regular(const char* path, mode_t mode) {
  return kiln_status_create(KILN_INVALID_ARGUMENT, "%s: not a regular file (%s)", path,
                            kiln_npy_file_kind(mode));
}

static KilnStatus* kiln_npy_read_fd(const char* path, int fd, KilnNpyTensor** out) {
  struct stat info;
  if (fstat(fd, &info) != 0) return kiln_npy_errno(path, "cannot stat", errno);
  if (!S_ISREG(info.st_mode)) return kiln_npy_not_regular(path, info.st_mode);
  const uint64_t file_size = (uint64_t)info.st_size;

  uint8_t prefix[12];
  size_t got = 0;
  if (kiln_read_full(fd, prefix, 10, &got) != 0) return kiln_npy_errno(path, "read failed", errno);
  if (got < 10 || memcmp(prefix, KILN_NPY_MAGIC, KILN_NPY_MAGIC_SIZE) != 0) {
    return kiln_status_create(KILN_DATA_LOSS, "%s: not a .npy file (no \\x93NUMPY magic)", path);
  }
  const unsigned major = prefix[6];
  const unsigned minor = prefix[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return kiln_status_create(KILN_UNIMPLEMENTED,
                              "%s: .npy format version %u.%u is not supported (1.0, 2.0, 3.0)",
                              path, major, minor);
  }
  uint64_t header_len = 0;
  uint64_t prefix_size = 10;
  if (major == 1) {
    header_len = (uint64_t)prefix[8] | ((uint64_t)prefix[9] << 8);
  } else {
    if (kiln_read_full(fd, prefix + 10, 2, &got) != 0) {
      return kiln_npy_errno(path, "read failed", errno);
    }
    if (got < 2) return kiln_npy_bad_header(path, "the file ends inside the header length");
    prefix_size = 12;
    header_len = (uint64_t)prefix[8] | ((uint64_t)prefix[9] << 8) | ((uint64_t)prefix[10] << 16) |
                 ((uint64_t)prefix[11] << 24);
  }
  if (header_len > KILN_NPY_MAX_HEADER) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: malformed .npy header: length %llu is more than %u", path,
                              (kiln_ull)header_len, (unsigned)KILN_NPY_MAX_HEADER);
  }
  if (file_size < prefix_size || header_len > file_size - prefix_size) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: truncated .npy header: length %llu, but the file has %llu "
                              "bytes after the prefix",
                              path, (kiln_ull)header_len,
                              (kiln_ull)(file_size < prefix_size ? 0 : file_size - prefix_size));
  }
  char* text = (char*)malloc(header_len == 0 ? 1u : (size_t)header_len);
  if (text == NULL) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory for the header", path);
  }
  if (kiln_read_full(fd, text, (size_t)header_len, &got) != 0) {
    int err = errno;
    free(text);
    return kiln_npy_errno(path, "read failed", err);
  }
  if (got < header_len) {
    free(text);
    return kiln_npy_bad_header(path, "the file ends inside the header");
  }
  for (uint64_t i = 0; i < header_len; ++i) {
    unsigned char ch = (unsigned char)text[i];
    if (ch == 0 || ch >= 0x80) {
      free(text);
      return kiln_npy_bad_header(path, "non-ASCII or NUL byte in the header");
    }
  }
  DLDataType dtype = {0, 0, 0};
  int64_t shape[KILN_NPY_MAX_NDIM];
  int ndim = 0;
  KilnStatus* st = kiln_parse_header(path, text, (size_t)header_len, &dtype, shape, &ndim);
  free(text);
  if (st != NULL) return st;

  /* Data size, checked against the file before allocating. */
  const uint64_t itemsize = dtype.bits / 8u;
  uint64_t elements = 1;
  int overflow = 0;
  int empty = 0;
  for (int d = 0; d < ndim; ++d) {
    uint64_t dim = (uint64_t)shape[d];
    if (dim == 0) {
      empty = 1;
    } else if (elements > UINT64_MAX / dim) {
      overflow = 1;
    } else {
      elements *= dim;
    }
  }
  if (empty) {
    elements = 0;
    overflow = 0;
  }
  if (overflow || elements > UINT64_MAX / itemsize) {
    return kiln_status_create(KILN_DATA_LOSS, "%s: the .npy shape's byte size overflows", path);
  }
  const uint64_t data_size = elements * itemsize;
  const uint64_t available = file_size - prefix_size - header_len;
  if (available < data_size) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: short data: the shape and dtype need %llu bytes, the file has "
                              "%llu",
                              path, (kiln_ull)data_size, (kiln_ull)available);
  }
  if (available > data_size) {
    return kiln_status_create(KILN_DATA_LOSS,
                              "%s: trailing bytes: the shape and dtype need %llu bytes, the file "
                              "has %llu",
                              path, (kiln_ull)data_size, (kiln_ull)available);
  }
  if (data_size > (uint64_t)SIZE_MAX - KILN_NPY_ALIGNMENT) {
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: the array is too large", path);
  }

  KilnNpyTensorImpl* impl = (KilnNpyTensorImpl*)calloc(1, sizeof(KilnNpyTensorImpl));
  size_t alloc = (size_t)((data_size + KILN_NPY_ALIGNMENT - 1u) / KILN_NPY_ALIGNMENT *
                          KILN_NPY_ALIGNMENT);
  if (alloc == 0) alloc = KILN_NPY_ALIGNMENT;
  void* data = aligned_alloc(KILN_NPY_ALIGNMENT, alloc);
  if (impl == NULL || data == NULL) {
    free(impl);
    free(data);
    return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "%s: out of memory for %llu bytes", path,
                              (kiln_ull)data_size);
  }
  if (kiln_read_full(fd, data, (size_t)data_size, &got) != 0) {
    int err = errno;
    free(impl);
    free(data);
    return kiln_npy_errno(path, "read failed", err);
  }
  if (got < data_size) {
    free(impl);
    free(data);
    return kiln_status_create(KILN_DATA_LOSS, "%s: short data: the file shrank while being read",
                              path);
  }
  for (int d = 0; d < ndim; ++d) impl->shape[d] = shape[d];
  DLTensor* t = &impl->pub.tensor;
  t->data = data;
  t->device.device_type = kDLCPU;
  t->device.device_id = 0;
  t->ndim = ndim;
  t->dtype = dtype;
  t->shape = impl->shape;
  t->strides = NULL;
  t->byte_offset = 0;
  *out = &impl->pub;
  return NULL;
}

KilnStatus* kiln_npy_read(const char* path, KilnNpyTensor** out) {
  if (out != NULL) *out = NULL;
  if (path == NULL || out == NULL) {
    return kiln_status_create(KILN_INVALID_ARGUMENT, "kiln_npy_read: NULL path or output");
  }
  /* Regular files only: a FIFO or a device is refused before it is opened
   * (opening a FIFO waits for a writer; /dev/zero never ends), and
   * O_NONBLOCK keeps a FIFO swapped in meanwhile from blocking the open
   * (kiln_npy_read_fd checks the opened file again). */
  struct stat info;
  if (stat(path, &info) != 0) return kiln_npy_errno(path, "cannot open", errno);
  if (!S_ISREG(info.st_mode)) return kiln_npy_not_regular(path, info.st_mode);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return kiln_npy_errno(path, "cannot open", errno);
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  KilnStatus* st = kiln_npy_read_fd(path, fd, out);
  (void)close(fd);
  return st;
}

void kiln_npy_release(KilnNpyTensor* t) {
  if (t == NULL) return;
  KilnNpyTensorImpl* impl = (KilnNpyTensorImpl*)t;
  free(t->tensor.data);
  free(impl);
}
