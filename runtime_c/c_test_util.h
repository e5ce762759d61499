/* File: runtime_c/c_test_util.h  (testonly: the plain-C tests of the
 * artifact format, ELF reader and .npy files)
 *
 * What those tests share: CHECK / CHECK_STATUS / CHECK_OK that count
 * failures in `failures` (main returns failures != 0), whole-file read and
 * write, and little-endian field access for building damaged images.
 *
 *   CHECK(size == 64);
 *   CHECK_STATUS(kiln_npy_read(p, &t), KILN_DATA_LOSS, "truncated");
 *   uint8_t* img = read_file(path, &size);
 */
#ifndef KILN_RUNTIME_C_C_TEST_UTIL_H_
#define KILN_RUNTIME_C_C_TEST_UTIL_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/status.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* Checks that st has `code` and a message containing `part`; frees st. */
#define CHECK_STATUS(st, code, part) check_status((st), (code), (part), __LINE__)
static inline void check_status(KilnStatus* st, KilnStatusCode code, const char* part, int line) {
  if (st == NULL) {
    fprintf(stderr, "line %d: expected %s (\"%s\"), got OK\n", line, kiln_status_code_name(code),
            part);
    ++failures;
    return;
  }
  if (kiln_status_code(st) != code || strstr(kiln_status_message(st), part) == NULL) {
    fprintf(stderr, "line %d: expected %s containing \"%s\", got %s: %s\n", line,
            kiln_status_code_name(code), part, kiln_status_code_name(kiln_status_code(st)),
            kiln_status_message(st));
    ++failures;
  }
  kiln_status_free(st);
}

/* Fails (and frees st) unless st is NULL; evaluates to 1 when it is. */
#define CHECK_OK(expr) check_ok((expr), #expr, __LINE__)
static inline int check_ok(KilnStatus* st, const char* expr, int line) {
  if (st != NULL) {
    fprintf(stderr, "line %d: %s failed: %s\n", line, expr, kiln_status_message(st));
    ++failures;
    kiln_status_free(st);
    return 0;
  }
  return 1;
}

/* The whole file, malloc'ed (NULL, *size 0 on failure or for an empty file). */
static inline uint8_t* read_file(const char* path, uint64_t* size) {
  *size = 0;
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    perror(path);
    return NULL;
  }
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return NULL;
  }
  long n = ftell(f);
  rewind(f);
  uint8_t* data = n > 0 ? (uint8_t*)malloc((size_t)n) : NULL;
  if (data == NULL || fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *size = (uint64_t)n;
  return data;
}

/* 0 on success, -1 when the file cannot be written completely. */
static inline int write_file(const char* path, const void* data, uint64_t size) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) return -1;
  int ok = fwrite(data, 1, (size_t)size, f) == (size_t)size;
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : -1;
}

/* Little-endian fields. */
static inline uint16_t rd16(const uint8_t* p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t rd32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t rd64(const uint8_t* p) { return rd32(p) | ((uint64_t)rd32(p + 4) << 32); }
static inline void wr16(uint8_t* p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static inline void wr32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void wr64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

#endif /* KILN_RUNTIME_C_C_TEST_UTIL_H_ */
