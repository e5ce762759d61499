/* File: runtime_c/npy_test.c — kiln/npy.h: round trip of every dtype and
 * several shapes, NumPy-style headers written by hand (versions 1.0, 2.0,
 * 3.0, key order, quotes, spacing), and malformed files (never a crash).
 * main returns 0 on success. */
#define _POSIX_C_SOURCE 200809L /* mkfifo, unlink, alarm */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kiln/npy.h"
#include "kiln/status.h"
#include "runtime_c/c_test_util.h"

static char path[4096];
static char other_path[4096];


static uint8_t* read_bytes(const char* p, size_t* size) {
  FILE* f = fopen(p, "rb");
  *size = 0;
  if (f == NULL) return NULL;
  uint8_t* buf = (uint8_t*)malloc(1 << 16);
  size_t n = buf == NULL ? 0 : fread(buf, 1, 1 << 16, f);
  fclose(f);
  *size = n;
  return buf;
}

/* A .npy file with header `dict` (padded to 64 with spaces + '\n' when pad),
 * version major.0, then `data_size` bytes of data. */
static size_t make_npy(uint8_t* out, size_t capacity, int major, const char* dict, int pad,
                       const void* data, size_t data_size) {
  size_t prefix = major == 1 ? 10 : 12;
  size_t text = strlen(dict);
  size_t header = text;
  if (pad) header = ((prefix + text + 1 + 63) / 64) * 64 - prefix;
  if (prefix + header + data_size > capacity) return 0;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (uint8_t)major;
  out[7] = 0;
  if (major == 1) {
    out[8] = (uint8_t)header;
    out[9] = (uint8_t)(header >> 8);
  } else {
    for (int i = 0; i < 4; ++i) out[8 + i] = (uint8_t)(header >> (8 * i));
  }
  memcpy(out + prefix, dict, text);
  if (pad) {
    memset(out + prefix + text, ' ', header - text - 1);
    out[prefix + header - 1] = '\n';
  }
  if (data_size != 0) memcpy(out + prefix + header, data, data_size);
  return prefix + header + data_size;
}

/* Writes the bytes to `path` and reads them back. */
static KilnStatus* read_raw(const uint8_t* bytes, size_t size, KilnNpyTensor** t) {
  if (write_file(path, bytes, size) != 0) {
    return kiln_status_create(KILN_INTERNAL, "test: cannot write %s", path);
  }
  return kiln_npy_read(path, t);
}

static KilnStatus* read_dict(int major, const char* dict, const void* data, size_t data_size) {
  uint8_t buf[4096];
  size_t n = make_npy(buf, sizeof(buf), major, dict, 1, data, data_size);
  KilnNpyTensor* t = NULL;
  KilnStatus* st = read_raw(buf, n, &t);
  kiln_npy_release(t);
  return st;
}

static DLTensor tensor(void* data, int ndim, int64_t* shape, uint8_t code, uint8_t bits) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.shape = shape;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  return t;
}

static void test_round_trip(void) {
  const struct {
    uint8_t code;
    uint8_t bits;
    const char* descr;
  } types[] = {
      {kDLFloat, 16, "'<f2'"}, {kDLFloat, 32, "'<f4'"}, {kDLFloat, 64, "'<f8'"},
      {kDLInt, 8, "'|i1'"},    {kDLInt, 16, "'<i2'"},   {kDLInt, 32, "'<i4'"},
      {kDLInt, 64, "'<i8'"},   {kDLUInt, 8, "'|u1'"},   {kDLUInt, 16, "'<u2'"},
      {kDLUInt, 32, "'<u4'"},  {kDLUInt, 64, "'<u8'"},  {6, 8, "'|b1'"},
      {kDLBfloat, 16, "'<u2'"},
  };
  int64_t shapes[4][3] = {{0, 0, 0}, {3, 0, 0}, {2, 3, 4}, {0, 5, 0}};
  const int ndims[4] = {0, 1, 3, 2};
  const char* shape_text[4] = {"()", "(3,)", "(2, 3, 4)", "(0, 5)"};
  uint8_t data[24 * 8 + 3];
  for (size_t i = 0; i < sizeof(data); ++i) data[i] = (uint8_t)(i * 7 + 1);
  for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); ++k) {
    for (int s = 0; s < 4; ++s) {
      DLTensor t = tensor(data + 3, ndims[s], shapes[s], types[k].code, types[k].bits);
      t.data = data;
      t.byte_offset = 3; /* honoured */
      size_t elements = 1;
      for (int d = 0; d < ndims[s]; ++d) elements *= (size_t)shapes[s][d];
      size_t bytes = elements * types[k].bits / 8;
      if (!CHECK_OK(kiln_npy_write(path, &t))) continue;
      /* The header: NumPy's layout, data at a multiple of 64. */
      size_t file_size = 0;
      uint8_t* file = read_bytes(path, &file_size);
      CHECK(file != NULL && file_size >= 10 && memcmp(file, "\x93NUMPY\x01\x00", 8) == 0);
      if (file != NULL && file_size >= 10) {
        size_t header = (size_t)file[8] | ((size_t)file[9] << 8);
        CHECK((10 + header) % 64 == 0);
        CHECK(file_size == 10 + header + bytes);
        char expected[256];
        snprintf(expected, sizeof(expected),
                 "{'descr': %s, 'fortran_order': False, 'shape': %s, }", types[k].descr,
                 shape_text[s]);
        CHECK(header > strlen(expected) &&
              memcmp(file + 10, expected, strlen(expected)) == 0);
        CHECK(file[10 + header - 1] == '\n');
        CHECK(bytes == 0 || memcmp(file + 10 + header, data + 3, bytes) == 0);
      }
      free(file);
      KilnNpyTensor* r = NULL;
      if (!CHECK_OK(kiln_npy_read(path, &r))) continue;
      const DLTensor* rt = &r->tensor;
      uint8_t want_code = types[k].code == kDLBfloat ? (uint8_t)kDLUInt : types[k].code;
      CHECK(rt->dtype.code == want_code && rt->dtype.bits == types[k].bits &&
            rt->dtype.lanes == 1);
      CHECK(rt->ndim == ndims[s]);
      for (int d = 0; d < rt->ndim; ++d) CHECK(rt->shape[d] == shapes[s][d]);
      CHECK(rt->strides == NULL && rt->byte_offset == 0 && rt->device.device_type == kDLCPU);
      CHECK(rt->data != NULL && ((uintptr_t)rt->data % 64) == 0);
      CHECK(bytes == 0 || memcmp(rt->data, data + 3, bytes) == 0);
      kiln_npy_release(r);
    }
  }
  kiln_npy_release(NULL);
  /* Compact strides given explicitly, and extent-1 dims with any stride. */
  int64_t shape[2] = {1, 4};
  int64_t strides[2] = {77, 1};
  DLTensor t = tensor(data, 2, shape, kDLFloat, 32);
  t.strides = strides;
  CHECK_OK(kiln_npy_write(path, &t));
}

static void test_headers(void) {
  const float f[8] = {1.0f, -2.5f, 3.0f, 0, 0, 0, 0, 0}; /* up to 32 bytes of data */
  KilnNpyTensor* t = NULL;
  uint8_t buf[4096];
  /* Versions 2.0 and 3.0; NumPy variations of the dict. */
  CHECK_OK(read_dict(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f, 12));
  CHECK_OK(read_dict(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f, 12));
  CHECK_OK(read_dict(1, "{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}", f, 12));
  CHECK_OK(read_dict(1, "{\"descr\":\"<f4\",\"fortran_order\":False,\"shape\":(3L,)}", f, 12));
  CHECK_OK(read_dict(1, "  {  'descr' : '<f4' ,\t'fortran_order' : True , 'shape' : ( 3 , ) , } ",
                     f, 12)); /* Fortran order is harmless for one dimension */
  CHECK_OK(read_dict(1, "{'descr': '<i1', 'fortran_order': False, 'shape': (3,), }", f, 3));
  CHECK_OK(read_dict(1, "{'descr': '>u1', 'fortran_order': False, 'shape': (3,), }", f, 3));
  CHECK_OK(read_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }", f, 12));
  CHECK_OK(read_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0), }", f, 0));
  /* Unpadded header (older writers). */
  {
    size_t n = make_npy(buf, sizeof(buf), 1,
                        "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", 0, f, 12);
    CHECK_OK(read_raw(buf, n, &t));
    CHECK(t != NULL && t->tensor.ndim == 1 && t->tensor.shape[0] == 3 &&
          memcmp(t->tensor.data, f, 12) == 0);
    kiln_npy_release(t);
    t = NULL;
  }
  /* The fixture written by Python (runtime_c/testdata/add_relu/p0.npy) is
   * read in artifact_file_test through make_blob; here a literal copy of
   * NumPy 1.x output for np.arange(3, dtype='<i8'). */
  {
    static const char numpy_header[] =
        "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }";
    int64_t v[3] = {0, 1, 2};
    size_t n = make_npy(buf, sizeof(buf), 1, numpy_header, 1, v, sizeof(v));
    CHECK(n == 128 + 24);
    CHECK_OK(read_raw(buf, n, &t));
    CHECK(t != NULL && t->tensor.dtype.code == kDLInt && t->tensor.dtype.bits == 64);
    kiln_npy_release(t);
    t = NULL;
  }

  /* Unsupported: big-endian, complex, structured, Fortran order (2-D). */
  CHECK_STATUS(read_dict(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", f, 12),
               KILN_INVALID_ARGUMENT, "unsupported .npy dtype '>f4'");
  CHECK_STATUS(read_dict(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", f, 24),
               KILN_INVALID_ARGUMENT, "unsupported .npy dtype");
  CHECK_STATUS(read_dict(1, "{'descr': '<f3', 'fortran_order': False, 'shape': (3,), }", f, 9),
               KILN_INVALID_ARGUMENT, "unsupported");
  CHECK_STATUS(read_dict(1, "{'descr': 'float32', 'fortran_order': False, 'shape': (3,), }", f, 12),
               KILN_INVALID_ARGUMENT, "unsupported");
  CHECK_STATUS(read_dict(1, "{'descr': '', 'fortran_order': False, 'shape': (3,), }", f, 12),
               KILN_INVALID_ARGUMENT, "unsupported");
  CHECK_STATUS(read_dict(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }",
                         f, 12),
               KILN_INVALID_ARGUMENT, "structured");
  CHECK_STATUS(read_dict(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 3), }", f, 12),
               KILN_INVALID_ARGUMENT, "Fortran");

  /* Malformed headers. */
  const char* bad[] = {
      "",
      "{",
      "}",
      "[]",
      "{'descr': '<f4', 'fortran_order': False}",
      "{'descr': '<f4', 'shape': (3,)}",
      "{'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f4', 'fortran_order': False, 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'shape': (3,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
      "{'descr': '<f4', 'fortran_order': false, 'shape': (3,)}",
      "{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [3]}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (a,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}}",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}",
      "{'descr' '<f4', 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (3,)}",
      "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (3,)}",
      "{descr: '<f4', 'fortran_order': False, 'shape': (3,)}",
      ("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
       "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3)}"),
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), \xc3\xa9}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    KilnStatus* st = read_dict(1, bad[i], f, 12);
    if (st == NULL) {
      fprintf(stderr, "malformed header %zu accepted: %s\n", i, bad[i]);
      ++failures;
    } else if (kiln_status_code(st) != KILN_DATA_LOSS &&
               kiln_status_code(st) != KILN_INVALID_ARGUMENT) {
      fprintf(stderr, "malformed header %zu: unexpected %s\n", i, kiln_status_message(st));
      ++failures;
    }
    kiln_status_free(st);
  }
  CHECK_STATUS(read_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", f,
                         12),
               KILN_DATA_LOSS, "malformed .npy header: unknown key");

  /* The shape's byte size overflows; short data; trailing data. */
  CHECK_STATUS(read_dict(1,
                         "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, "
                         "4294967296), }",
                         f, 12),
               KILN_DATA_LOSS, "overflows");
  CHECK_STATUS(read_dict(1,
                         "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }",
                         f, 12),
               KILN_DATA_LOSS, "short data");
  CHECK_STATUS(read_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f, 11),
               KILN_DATA_LOSS, "short data: the shape and dtype need 12 bytes, the file has 11");
  CHECK_STATUS(read_dict(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f, 12),
               KILN_DATA_LOSS, "trailing bytes");

  /* The prefix. */
  size_t n = make_npy(buf, sizeof(buf), 1,
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 1, f, 12);
  uint8_t copy[4096];
  memcpy(copy, buf, n);
  copy[1] = 'M';
  CHECK_STATUS(read_raw(copy, n, &t), KILN_DATA_LOSS, "not a .npy file");
  memcpy(copy, buf, n);
  copy[6] = 4;
  CHECK_STATUS(read_raw(copy, n, &t), KILN_UNIMPLEMENTED, "version 4.0");
  memcpy(copy, buf, n);
  copy[7] = 1;
  CHECK_STATUS(read_raw(copy, n, &t), KILN_UNIMPLEMENTED, "version 1.1");
  memcpy(copy, buf, n);
  copy[8] = 0xff;
  copy[9] = 0xff;
  CHECK_STATUS(read_raw(copy, n, &t), KILN_DATA_LOSS, "truncated .npy header");
  CHECK_STATUS(read_raw(buf, 0, &t), KILN_DATA_LOSS, "not a .npy file");
  CHECK(t == NULL);
  /* Version 2.0 with a 4 GB header length. */
  size_t n2 = make_npy(copy, sizeof(copy), 2,
                       "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 1, f, 12);
  copy[11] = 0xff;
  CHECK_STATUS(read_raw(copy, n2, &t), KILN_DATA_LOSS, "length");
  CHECK_STATUS(read_raw(copy, 11, &t), KILN_DATA_LOSS, "header length");

  /* Every truncation fails; every single-byte change never crashes. */
  for (size_t len = 0; len < n; ++len) {
    KilnStatus* st = read_raw(buf, len, &t);
    if (st == NULL) {
      fprintf(stderr, "truncated .npy of %zu bytes accepted\n", len);
      ++failures;
      kiln_npy_release(t);
      t = NULL;
    }
    kiln_status_free(st);
  }
  for (size_t pos = 0; pos < n; ++pos) {
    memcpy(copy, buf, n);
    copy[pos] ^= 0x5A;
    KilnStatus* st = read_raw(copy, n, &t);
    kiln_status_free(st);
    kiln_npy_release(t);
    t = NULL;
  }
}

static void test_errors(void) {
  float f[4] = {0};
  int64_t shape[2] = {2, 2};
  DLTensor t = tensor(f, 2, shape, kDLFloat, 32);
  CHECK_STATUS(kiln_npy_write(NULL, &t), KILN_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(kiln_npy_write(path, NULL), KILN_INVALID_ARGUMENT, "NULL");
  DLTensor bad = t;
  int64_t strides[2] = {1, 2};
  bad.strides = strides;
  CHECK_STATUS(kiln_npy_write(path, &bad), KILN_INVALID_ARGUMENT, "not compact");
  bad = t;
  bad.dtype.code = kDLComplex;
  bad.dtype.bits = 64;
  CHECK_STATUS(kiln_npy_write(path, &bad), KILN_INVALID_ARGUMENT, "cannot be written");
  bad = t;
  bad.dtype.lanes = 2;
  CHECK_STATUS(kiln_npy_write(path, &bad), KILN_INVALID_ARGUMENT, "cannot be written");
  bad = t;
  bad.ndim = 40;
  CHECK_STATUS(kiln_npy_write(path, &bad), KILN_INVALID_ARGUMENT, "ndim 40");
  bad = t;
  bad.device.device_type = kDLCUDA;
  CHECK_STATUS(kiln_npy_write(path, &bad), KILN_INVALID_ARGUMENT, "CPU");
  bad = t;
  bad.data = NULL;
  CHECK_STATUS(kiln_npy_write(path, &bad), KILN_INVALID_ARGUMENT, "NULL");
  bad = t;
  bad.byte_offset = UINT64_MAX - 3; /* would be handed to fwrite */
  CHECK_STATUS(kiln_npy_write(path, &bad), KILN_INVALID_ARGUMENT, "byte_offset");
  bad.byte_offset = (uint64_t)1 << 60;
  CHECK_STATUS(kiln_npy_write(path, &bad), KILN_INVALID_ARGUMENT, "does not fit");
  int64_t negative[2] = {2, -2};
  bad = t;
  bad.shape = negative;
  CHECK_STATUS(kiln_npy_write(path, &bad), KILN_INVALID_ARGUMENT, "negative");
  CHECK_STATUS(kiln_npy_write(other_path, &t), KILN_NOT_FOUND, "cannot create");

  KilnNpyTensor* r = (KilnNpyTensor*)1;
  CHECK_STATUS(kiln_npy_read(other_path, &r), KILN_NOT_FOUND, "cannot open");
  CHECK(r == NULL);
  CHECK_STATUS(kiln_npy_read(NULL, &r), KILN_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(kiln_npy_read(path, NULL), KILN_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(kiln_npy_read("/", &r), KILN_INVALID_ARGUMENT, "not a regular file (a directory)");
  /* Issue 15: `kiln run M.so --input x=FIFO` waited for a writer forever
   * (the alarm ends the test with SIGALRM if it still does); /dev/zero is
   * refused by its kind. */
  char fifo[4200];
  snprintf(fifo, sizeof fifo, "%s.fifo", path);
  (void)unlink(fifo);
  CHECK(mkfifo(fifo, 0600) == 0);
  alarm(20);
  CHECK_STATUS(kiln_npy_read(fifo, &r), KILN_INVALID_ARGUMENT, "not a regular file (a FIFO)");
  alarm(0);
  CHECK(r == NULL);
  (void)unlink(fifo);
  CHECK_STATUS(kiln_npy_read("/dev/zero", &r), KILN_INVALID_ARGUMENT,
               "not a regular file (a character device)");
}

int main(void) {
  const char* tmp = getenv("TEST_TMPDIR");
  if (tmp == NULL) tmp = "/tmp";
  snprintf(path, sizeof(path), "%s/npy_test.npy", tmp);
  snprintf(other_path, sizeof(other_path), "%s/no/such/dir/x.npy", tmp);
  test_round_trip();
  test_headers();
  test_errors();
  remove(path);
  if (failures != 0) {
    fprintf(stderr, "npy_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("npy_test: OK\n");
  return 0;
}
