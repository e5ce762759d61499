/* File: runtime_c/artifact_file_test.c — kiln_artifact_validate_image and
 * kiln_artifact_seal_file on real files built by kiln_test_artifact
 * (runtime_c/testing.bzl): the sealed add_relu.so validates; every byte
 * flipped and every truncation fails (never crashes); trailing bytes, an
 * unsealed file, a foreign ELF, this program, a newer version and a bad
 * section are each reported; sealing the unsealed library reproduces the
 * sealed one byte for byte.
 *
 *   artifact_file_test SEALED.so UNSEALED.so FOREIGN.so
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/artifact_format.h"
#include "kiln/artifact_writer.h"
#include "kiln/status.h"
#include "runtime_c/artifact_blob.h"
#include "runtime_c/c_test_util.h"

/* Recomputes a sealed image's whole-file checksum after a deliberate change. */
static void reseal_image(uint8_t* img, uint64_t size, uint64_t blob_offset) {
  uint64_t at = blob_offset + KILN_ARTIFACT_CHECKSUM_OFFSET;
  wr64(img + at, kiln_checksum64(img, size, at));
}

/* Validates a copy in an exactly sized buffer (ASan sees any overread). */
static KilnStatus* validate_copy(const uint8_t* img, uint64_t size) {
  uint8_t* copy = (uint8_t*)malloc((size_t)(size == 0 ? 1 : size));
  if (copy == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "test: no memory");
  memcpy(copy, img, (size_t)size);
  uint64_t blob_offset = 0;
  KilnBlobView view;
  KilnStatus* st = kiln_artifact_validate_image(copy, size, "t.so", &blob_offset, &view);
  free(copy);
  return st;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: artifact_file_test SEALED.so UNSEALED.so FOREIGN.so\n");
    return 2;
  }
  const char* sealed_path = argv[1];
  uint64_t size = 0;
  uint64_t unsealed_size = 0;
  uint64_t foreign_size = 0;
  uint8_t* img = read_file(sealed_path, &size);
  uint8_t* unsealed = read_file(argv[2], &unsealed_size);
  uint8_t* foreign = read_file(argv[3], &foreign_size);
  if (img == NULL || unsealed == NULL || foreign == NULL) {
    fprintf(stderr, "cannot read the fixtures\n");
    return 1;
  }

  /* The sealed fixture validates, and its content is the one built. */
  uint64_t blob_offset = 0;
  KilnBlobView v;
  CHECK_OK(kiln_artifact_validate_image(img, size, sealed_path, &blob_offset, &v));
  uint64_t sym_offset = 0;
  uint64_t sym_size = 0;
  CHECK_OK(kiln_elf_find_symbol(img, size, KILN_ARTIFACT_SYMBOL, &sym_offset, &sym_size));
  CHECK(blob_offset == sym_offset && blob_offset % 64 == 0);
  CHECK(v.header.file_size == size);
  CHECK(v.meta_size > 13 && memcmp(v.meta, "{\"producer\": ", 13) == 0);
  CHECK(v.graph_size > 0 && v.graph[0] == '{');
  CHECK(v.device_code == NULL);
  CHECK(v.num_params == 1);
  KilnBlobParam p;
  kiln_blob_param(&v, 0, &p);
  const float expected[4] = {0.5f, -1.0f, 2.0f, -3.0f};
  CHECK(p.name_size == 2 && memcmp(p.name, "p0", 2) == 0);
  CHECK(p.ndim == 1 && p.shape[0] == 4 && p.dtype.code == kDLFloat && p.dtype.bits == 32);
  CHECK(p.data_size == 16 && memcmp(p.data, expected, 16) == 0);
  CHECK((uint64_t)((const uint8_t*)p.data - img) % 64 == 0);

  /* Every byte flipped: always an error, never a crash. */
  uint8_t* work = (uint8_t*)malloc((size_t)size + 1);
  if (work == NULL) return 1;
  memcpy(work, img, (size_t)size);
  for (uint64_t pos = 0; pos < size; ++pos) {
    work[pos] ^= 0xFF;
    uint64_t off = 0;
    KilnStatus* st = kiln_artifact_validate_image(work, size, "t.so", &off, &v);
    if (st == NULL) {
      fprintf(stderr, "byte %llu flipped: not detected\n", (unsigned long long)pos);
      ++failures;
    }
    kiln_status_free(st);
    work[pos] ^= 0xFF;
  }
  /* Every truncation. */
  for (uint64_t len = 0; len < size; ++len) {
    KilnStatus* st = validate_copy(img, len);
    if (st == NULL) {
      fprintf(stderr, "truncated to %llu bytes: not detected\n", (unsigned long long)len);
      ++failures;
    }
    kiln_status_free(st);
  }
  /* The header names a larger file. (A real truncation loses the section
   * headers at the end first: "not a kiln artifact".) */
  memcpy(work, img, (size_t)size);
  wr64(work + blob_offset + 24, size + 100);
  reseal_image(work, size, blob_offset);
  CHECK_STATUS(validate_copy(work, size), KILN_DATA_LOSS,
               "t.so: truncated: the file is");
  /* One trailing byte. */
  memcpy(work, img, (size_t)size);
  work[size] = 0;
  CHECK_STATUS(validate_copy(work, size + 1), KILN_DATA_LOSS, "t.so: trailing bytes");

  /* Not sealed; foreign; this program; not ELF. */
  CHECK_STATUS(validate_copy(unsealed, unsealed_size), KILN_DATA_LOSS, "never sealed");
  CHECK_STATUS(validate_copy(foreign, foreign_size), KILN_NOT_FOUND,
               "t.so: not a kiln artifact: ELF: no symbol 'kiln_artifact'");
  {
    uint64_t self_size = 0;
    uint8_t* self = read_file("/proc/self/exe", &self_size);
    CHECK(self != NULL);
    if (self != NULL) {
      KilnStatus* st = validate_copy(self, self_size);
      CHECK(st != NULL && strstr(kiln_status_message(st), "not a kiln artifact") != NULL);
      kiln_status_free(st);
      free(self);
    }
  }
  CHECK_STATUS(validate_copy((const uint8_t*)"#!/bin/sh\n", 10), KILN_DATA_LOSS,
               "t.so: not a kiln artifact: not an ELF file");
  {
    uint64_t off = 0;
    CHECK_STATUS(kiln_artifact_validate_image(NULL, 5, "x", &off, &v), KILN_INVALID_ARGUMENT, "");
  }

  /* Deliberate changes with the checksum recomputed: the later checks. */
  memcpy(work, img, (size_t)size);
  wr32(work + blob_offset + 8, 5);
  reseal_image(work, size, blob_offset);
  CHECK_STATUS(validate_copy(work, size), KILN_UNIMPLEMENTED,
               "t.so: made by a newer kiln: format version 5, this runtime reads up to 4");
  memcpy(work, img, (size_t)size);
  wr64(work + blob_offset + 16, sym_size + 64); /* blob_size past the symbol */
  reseal_image(work, size, blob_offset);
  CHECK_STATUS(validate_copy(work, size), KILN_DATA_LOSS, "more than the size of symbol");
  memcpy(work, img, (size_t)size);
  wr64(work + blob_offset + 64 + 24 + 16, sym_size); /* GRAPH size past the blob */
  reseal_image(work, size, blob_offset);
  CHECK_STATUS(validate_copy(work, size), KILN_DATA_LOSS,
               "t.so: corrupted artifact: section 1 (GRAPH) offset");
  memcpy(work, img, (size_t)size);
  work[blob_offset + 0] = 'k'; /* the symbol holds something else */
  reseal_image(work, size, blob_offset);
  CHECK_STATUS(validate_copy(work, size), KILN_DATA_LOSS, "not a kiln artifact: symbol");
  memcpy(work, img, (size_t)size);
  work[size - 1] ^= 0x10;
  CHECK_STATUS(validate_copy(work, size), KILN_DATA_LOSS, "t.so: corrupted: checksum mismatch");

  /* Sealing: the unsealed library, sealed, equals the sealed fixture. */
  const char* tmp = getenv("TEST_TMPDIR");
  char path[4096];
  snprintf(path, sizeof(path), "%s/artifact_file_test.so", tmp != NULL ? tmp : "/tmp");
  CHECK(write_file(path, unsealed, unsealed_size) == 0);
  CHECK_OK(kiln_artifact_seal_file(path));
  uint64_t resealed_size = 0;
  uint8_t* resealed = read_file(path, &resealed_size);
  CHECK(resealed != NULL && resealed_size == size && memcmp(resealed, img, (size_t)size) == 0);
  free(resealed);
  /* Sealing again (e.g. after a change elsewhere in the file) is fine. */
  CHECK_OK(kiln_artifact_seal_file(path));
  resealed = read_file(path, &resealed_size);
  CHECK(resealed != NULL && resealed_size == size && memcmp(resealed, img, (size_t)size) == 0);
  free(resealed);
  /* Writing into a placeholder: a builder holding the fixture's sections and
   * parameters (by reference), written into the unsealed library whose blob
   * was first zeroed, gives the sealed fixture byte for byte. */
  {
    uint64_t fixture_offset = 0;
    KilnBlobView v;
    CHECK_OK(kiln_artifact_validate_image(img, size, sealed_path, &fixture_offset, &v));
    KilnArtifactBuilder* b = NULL;
    CHECK_OK(kiln_artifact_builder_create(&b));
    CHECK_OK(kiln_artifact_builder_set_section(b, KILN_SECTION_META, v.meta, v.meta_size));
    CHECK_OK(kiln_artifact_builder_set_section(b, KILN_SECTION_GRAPH, v.graph, v.graph_size));
    KilnBlobParam bp[4];
    CHECK(v.num_params <= 4);
    for (uint64_t i = 0; i < v.num_params && i < 4; ++i) {
      kiln_blob_param(&v, i, &bp[i]);
      char name[64];
      snprintf(name, sizeof(name), "%.*s", (int)bp[i].name_size, bp[i].name);
      DLTensor t;
      memset(&t, 0, sizeof(t));
      t.data = (void*)bp[i].data;
      t.device.device_type = kDLCPU;
      t.ndim = bp[i].ndim;
      t.dtype = bp[i].dtype;
      t.shape = bp[i].shape;
      CHECK_OK(kiln_artifact_builder_add_param_ref(b, name, &t));
    }
    uint64_t blob_size = 0;
    CHECK_OK(kiln_artifact_builder_blob_size(b, &blob_size));
    CHECK(blob_size == v.header.blob_size);
    memcpy(work, unsealed, (size_t)unsealed_size);
    uint64_t placeholder_size = 0;
    uint64_t placeholder = 0;
    CHECK_OK(kiln_elf_find_symbol(work, unsealed_size, KILN_ARTIFACT_SYMBOL, &placeholder,
                                  &placeholder_size));
    CHECK(placeholder_size == blob_size);
    memset(work + placeholder, 0, (size_t)placeholder_size);
    CHECK(write_file(path, work, unsealed_size) == 0);
    CHECK_OK(kiln_artifact_builder_write_into(b, path));
    uint64_t written_size = 0;
    uint8_t* written = read_file(path, &written_size);
    CHECK(written != NULL && written_size == size && memcmp(written, img, (size_t)size) == 0);
    free(written);
    /* A placeholder of another size is refused, the file left as it was. */
    float extra[3] = {1, 2, 3};
    int64_t extra_shape[1] = {3};
    DLTensor t;
    memset(&t, 0, sizeof(t));
    t.data = extra;
    t.device.device_type = kDLCPU;
    t.ndim = 1;
    t.dtype.code = kDLFloat;
    t.dtype.bits = 32;
    t.dtype.lanes = 1;
    t.shape = extra_shape;
    CHECK_OK(kiln_artifact_builder_add_param_ref(b, "extra", &t));
    CHECK(write_file(path, work, unsealed_size) == 0);
    CHECK_STATUS(kiln_artifact_builder_write_into(b, path), KILN_FAILED_PRECONDITION,
                 "placeholder");
    written = read_file(path, &written_size);
    CHECK(written != NULL && written_size == unsealed_size &&
          memcmp(written, work, (size_t)unsealed_size) == 0);
    free(written);
    CHECK(write_file(path, foreign, foreign_size) == 0);
    CHECK_STATUS(kiln_artifact_builder_write_into(b, path), KILN_NOT_FOUND, "no place");
    CHECK_STATUS(kiln_artifact_builder_write_into(b, NULL), KILN_INVALID_ARGUMENT, "NULL");
    kiln_artifact_builder_release(b);
  }
  /* A corrupt bare blob is refused, not sealed. */
  {
    memcpy(work, unsealed, (size_t)unsealed_size);
    work[blob_offset + 64 * 3] ^= 1; /* inside the blob, past the header */
    CHECK(write_file(path, work, unsealed_size) == 0);
    CHECK_STATUS(kiln_artifact_seal_file(path), KILN_DATA_LOSS, "checksum mismatch");
  }
  CHECK(write_file(path, foreign, foreign_size) == 0);
  CHECK_STATUS(kiln_artifact_seal_file(path), KILN_NOT_FOUND, "not a kiln artifact");
  CHECK(write_file(path, (const uint8_t*)"not elf", 7) == 0);
  CHECK_STATUS(kiln_artifact_seal_file(path), KILN_DATA_LOSS, "not a kiln artifact");
  remove(path);
  CHECK_STATUS(kiln_artifact_seal_file(path), KILN_NOT_FOUND, "cannot open");
  CHECK_STATUS(kiln_artifact_seal_file(NULL), KILN_INVALID_ARGUMENT, "NULL");

  free(work);
  free(img);
  free(unsealed);
  free(foreign);
  if (failures != 0) {
    fprintf(stderr, "artifact_file_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("artifact_file_test: OK\n");
  return 0;
}
