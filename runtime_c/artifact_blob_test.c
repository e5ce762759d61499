/* File: runtime_c/artifact_blob_test.c — the artifact builder
 * (kiln/artifact_writer.h) and the blob reader (runtime_c/artifact_blob.h):
 * round trip of every field, every single-byte corruption and every
 * truncation, and each structural check on purpose-made bad blobs.
 * main returns 0 on success. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/artifact_format.h"
#include "kiln/artifact_writer.h"
#include "kiln/status.h"
#include "runtime_c/artifact_blob.h"
#include "runtime_c/c_test_util.h"

/* Recomputes a bare blob's checksum after a deliberate change. */
static void reseal(uint8_t* blob, uint64_t size) {
  wr64(blob + KILN_ARTIFACT_CHECKSUM_OFFSET,
       kiln_checksum64(blob, size, KILN_ARTIFACT_CHECKSUM_OFFSET));
}

static const char kMeta[] = "{\"producer\": \"kiln test\", \"target\": \"llvm\"}";
static const char kGraph[] = "{\"nodes\": []}";
static const char kPtx[] = "// ptx";
static const char kUnknown[] = "future section";

/* The sample parameters. */
static float p0_data[6] = {1.f, 2.f, 3.f, -4.f, 5.5f, 6.f};
static int64_t p0_shape[2] = {2, 3};
static int64_t p1_data[1] = {-42};
static uint8_t p2_data[5] = {1, 0, 1, 1, 0};
static int64_t p2_shape[1] = {5};
static int64_t p3_shape[2] = {0, 7}; /* empty bfloat16 */
static uint8_t p4_raw[3 + 7] = {0xEE, 0xEE, 0xEE, 9, 8, 7, 6, 5, 4, 3}; /* byte_offset 3 */
static int64_t p4_shape[1] = {7};

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

/* Builds the sample blob (5 params, META, GRAPH, DEVICE_CODE, kind 99): format version 3. */
static uint8_t* build_sample(uint64_t* size) {
  KilnArtifactBuilder* b = NULL;
  CHECK_OK(kiln_artifact_builder_create(&b));
  if (b == NULL) return NULL;
  /* Out of order on purpose: the table is META, GRAPH, PARAMS, then others. */
  CHECK_OK(kiln_artifact_builder_set_section(b, 99, kUnknown, strlen(kUnknown)));
  CHECK_OK(kiln_artifact_builder_set_section(b, KILN_SECTION_GRAPH, "old", 3));
  CHECK_OK(kiln_artifact_builder_set_section(b, KILN_SECTION_DEVICE_CODE, kPtx, strlen(kPtx)));
  CHECK_OK(kiln_artifact_builder_set_section(b, KILN_SECTION_META, kMeta, strlen(kMeta)));
  CHECK_OK(kiln_artifact_builder_set_section(b, KILN_SECTION_GRAPH, kGraph, strlen(kGraph)));
  DLTensor t0 = tensor(p0_data, 2, p0_shape, kDLFloat, 32);
  int64_t strides[2] = {3, 1};
  t0.strides = strides; /* compact, given explicitly */
  DLTensor t1 = tensor(p1_data, 0, NULL, kDLInt, 64);
  DLTensor t2 = tensor(p2_data, 1, p2_shape, 6, 8);
  DLTensor t3 = tensor(NULL, 2, p3_shape, kDLBfloat, 16);
  DLTensor t4 = tensor(p4_raw, 1, p4_shape, kDLUInt, 8);
  t4.byte_offset = 3;
  CHECK_OK(kiln_artifact_builder_add_param(b, "p0", &t0));
  CHECK_OK(kiln_artifact_builder_add_param(b, "p1", &t1));
  CHECK_OK(kiln_artifact_builder_add_param(b, "weights.bool", &t2));
  CHECK_OK(kiln_artifact_builder_add_param(b, "empty", &t3));
  CHECK_OK(kiln_artifact_builder_add_param(b, "u8", &t4));
  uint8_t* blob = NULL;
  CHECK_OK(kiln_artifact_builder_finish(b, &blob, size));
  /* finish does not consume the builder: a second blob is identical. */
  uint8_t* again = NULL;
  uint64_t again_size = 0;
  CHECK_OK(kiln_artifact_builder_finish(b, &again, &again_size));
  CHECK(again != NULL && blob != NULL && again_size == *size &&
        memcmp(again, blob, (size_t)again_size) == 0);
  free(again);
  kiln_artifact_builder_release(b);
  return blob;
}

/* Copies into an exactly sized heap buffer (so that ASan sees any overread)
 * and parses. */
static KilnStatus* parse_copy(const uint8_t* blob, uint64_t size, int verify) {
  uint8_t* copy = (uint8_t*)malloc(size == 0 ? 1 : (size_t)size);
  if (copy == NULL) return kiln_status_create(KILN_RESOURCE_EXHAUSTED, "test: no memory");
  if (size != 0) memcpy(copy, blob, (size_t)size);
  KilnBlobView view;
  KilnStatus* st = kiln_blob_parse(copy, size, verify, "test blob", &view);
  if (st == NULL) {
    /* Touch every parameter through the view (ASan checks the bounds). */
    for (uint64_t i = 0; i < view.num_params; ++i) {
      KilnBlobParam p;
      kiln_blob_param(&view, i, &p);
      volatile uint8_t sink = 0;
      for (uint32_t k = 0; k < p.name_size; ++k) sink ^= (uint8_t)p.name[k];
      for (uint64_t k = 0; k < p.data_size; ++k) sink ^= ((const uint8_t*)p.data)[k];
      (void)sink;
    }
  }
  free(copy);
  return st;
}

static void test_round_trip(const uint8_t* blob, uint64_t size) {
  KilnBlobView v;
  CHECK_OK(kiln_blob_parse(blob, size, 1, "sample", &v));
  CHECK(memcmp(v.header.magic, KILN_ARTIFACT_MAGIC, KILN_ARTIFACT_MAGIC_SIZE) == 0);
  CHECK(v.header.format_version == KILN_ARTIFACT_FORMAT_VERSION_DEVICE); /* DEVICE_CODE: a GPU artifact */
  CHECK(v.header.header_size == 64);
  CHECK(v.header.blob_size == size);
  CHECK(v.header.file_size == 0);
  CHECK(v.header.checksum == kiln_checksum64(blob, size, KILN_ARTIFACT_CHECKSUM_OFFSET));
  CHECK(v.header.num_sections == 5);
  CHECK(v.header.flags == 0);
  CHECK(v.meta_size == strlen(kMeta) && memcmp(v.meta, kMeta, strlen(kMeta)) == 0);
  CHECK(v.graph_size == strlen(kGraph) && memcmp(v.graph, kGraph, strlen(kGraph)) == 0);
  CHECK(v.device_code_size == strlen(kPtx) &&
        memcmp(v.device_code, kPtx, strlen(kPtx)) == 0);
  /* Table order and alignment. */
  const uint32_t kinds[5] = {KILN_SECTION_META, KILN_SECTION_GRAPH, KILN_SECTION_PARAMS,
                             KILN_SECTION_DEVICE_CODE, 99};
  uint64_t previous_end = 64 + 5 * 24;
  for (int i = 0; i < 5; ++i) {
    const uint8_t* e = blob + 64 + 24 * i;
    CHECK(e[0] == kinds[i] && e[1] == 0 && e[2] == 0 && e[3] == 0);
    uint64_t off = rd64(e + 8);
    CHECK(off % 64 == 0);
    CHECK(off >= previous_end);
    previous_end = off + rd64(e + 16);
  }
  CHECK(previous_end == size);
  CHECK((uint64_t)(v.params - blob) % 64 == 0);
  CHECK(v.num_params == 5);

  const char* names[5] = {"p0", "p1", "weights.bool", "empty", "u8"};
  const void* datas[5] = {p0_data, p1_data, p2_data, NULL, p4_raw + 3};
  const uint64_t sizes[5] = {24, 8, 5, 0, 7};
  const int32_t ndims[5] = {2, 0, 1, 2, 1};
  const int64_t* shapes[5] = {p0_shape, NULL, p2_shape, p3_shape, p4_shape};
  const uint8_t codes[5] = {kDLFloat, kDLInt, 6, kDLBfloat, kDLUInt};
  const uint8_t bits[5] = {32, 64, 8, 16, 8};
  for (uint64_t i = 0; i < 5; ++i) {
    KilnBlobParam p;
    kiln_blob_param(&v, i, &p);
    CHECK(p.name_size == strlen(names[i]) && memcmp(p.name, names[i], p.name_size) == 0);
    CHECK(p.ndim == ndims[i]);
    for (int d = 0; d < p.ndim; ++d) CHECK(p.shape[d] == shapes[i][d]);
    CHECK(p.dtype.code == codes[i] && p.dtype.bits == bits[i] && p.dtype.lanes == 1);
    CHECK(p.data_size == sizes[i]);
    if (sizes[i] != 0) CHECK(memcmp(p.data, datas[i], (size_t)sizes[i]) == 0);
    CHECK((uint64_t)((const uint8_t*)p.data - blob) % 64 == 0);
  }
  /* Out of range: a zeroed parameter. */
  KilnBlobParam none;
  kiln_blob_param(&v, 5, &none);
  CHECK(none.name == NULL && none.data == NULL && none.ndim == 0);
}

static void test_every_byte_and_truncation(const uint8_t* blob, uint64_t size) {
  uint8_t* work = (uint8_t*)malloc((size_t)size);
  if (work == NULL) return;
  memcpy(work, blob, (size_t)size);
  for (uint64_t pos = 0; pos < size; ++pos) {
    const uint8_t saved = work[pos];
    const uint8_t deltas[3] = {0x01, 0x80, 0xFF};
    for (int k = 0; k < 3; ++k) {
      work[pos] = (uint8_t)(saved ^ deltas[k]);
      KilnStatus* st = parse_copy(work, size, 1);
      /* A nonzero file_size (bytes 24-31) marks a sealed blob, whose checksum
       * covers the whole file: kiln_blob_parse cannot verify it alone
       * (kiln_artifact_validate_image does; artifact_file_test). */
      const int in_file_size = pos >= 24 && pos < 32;
      if (st == NULL && !in_file_size) {
        fprintf(stderr, "byte %llu ^ 0x%02x: corruption not detected\n",
                (unsigned long long)pos, deltas[k]);
        ++failures;
      }
      kiln_status_free(st);
      /* Without the checksum: no crash (the structure may still be valid). */
      kiln_status_free(parse_copy(work, size, 0));
    }
    work[pos] = saved;
  }
  for (uint64_t len = 0; len < size; ++len) {
    KilnStatus* st = parse_copy(blob, len, 1);
    if (st == NULL) {
      fprintf(stderr, "truncated to %llu bytes: not detected\n", (unsigned long long)len);
      ++failures;
    }
    kiln_status_free(st);
    st = parse_copy(blob, len, 0);
    if (st == NULL) {
      fprintf(stderr, "truncated to %llu bytes (no checksum): not detected\n",
              (unsigned long long)len);
      ++failures;
    }
    kiln_status_free(st);
  }
  free(work);
}

/* Applies `offset`: write `value` of `width` bytes, reseals, expects an error. */
static void expect_patch(const uint8_t* blob, uint64_t size, uint64_t offset, int width,
                         uint64_t value, KilnStatusCode code, const char* part, int line) {
  uint8_t* work = (uint8_t*)malloc((size_t)size);
  if (work == NULL) return;
  memcpy(work, blob, (size_t)size);
  if (width == 1) work[offset] = (uint8_t)value;
  if (width == 2) {
    work[offset] = (uint8_t)value;
    work[offset + 1] = (uint8_t)(value >> 8);
  }
  if (width == 4) wr32(work + offset, (uint32_t)value);
  if (width == 8) wr64(work + offset, value);
  reseal(work, size);
  check_status(parse_copy(work, size, 1), code, part, line);
  free(work);
}
#define EXPECT_PATCH(off, width, value, code, part) \
  expect_patch(blob, size, (off), (width), (value), (code), (part), __LINE__)

static void test_structure_checks(const uint8_t* blob, uint64_t size) {
  KilnBlobView v;
  CHECK_OK(kiln_blob_parse(blob, size, 1, "sample", &v));
  const uint64_t params = (uint64_t)(v.params - blob);
  const uint64_t e0 = params + 8;      /* PARAMS entry 0 (p0, float32 [2, 3]) */
  const uint64_t e1 = params + 8 + 48; /* entry 1 (p1, int64 scalar) */
  const uint64_t e3 = params + 8 + 3 * 48;

  /* Header. */
  EXPECT_PATCH(0, 1, 'X', KILN_DATA_LOSS, "not a kiln artifact");
  EXPECT_PATCH(8, 4, 5, KILN_UNIMPLEMENTED, "made by a newer kiln: format version 5, this runtime reads up to 4");
  /* The sample has DEVICE_CODE (format version 3, a GPU artifact); version 1
   * (a CPU artifact) may not have one. */
  EXPECT_PATCH(8, 4, 1, KILN_DATA_LOSS, "a CPU artifact (format version 1) has a DEVICE_CODE section");
  /* Version 2 is a VM artifact: it needs a VM section instead of GRAPH. */
  EXPECT_PATCH(8, 4, 2, KILN_DATA_LOSS, "corrupted artifact: no VM section");
  /* Version 4 is a GPU VM artifact: a VM section and DEVICE_CODE, no GRAPH. */
  EXPECT_PATCH(8, 4, 4, KILN_DATA_LOSS, "corrupted artifact: no VM section");
  EXPECT_PATCH(8, 4, 0, KILN_DATA_LOSS, "format_version (offset 8) is 0");
  EXPECT_PATCH(12, 4, 32, KILN_DATA_LOSS, "header_size (offset 12) is 32");
  EXPECT_PATCH(16, 8, size + 1, KILN_DATA_LOSS, "blob_size (offset 16)");
  EXPECT_PATCH(16, 8, 63, KILN_DATA_LOSS, "blob_size (offset 16) is 63");
  EXPECT_PATCH(44, 4, 1, KILN_DATA_LOSS, "header flags (offset 44)");
  EXPECT_PATCH(50, 1, 1, KILN_DATA_LOSS, "reserved header byte at offset 50");
  EXPECT_PATCH(40, 4, 65, KILN_DATA_LOSS, "num_sections (offset 40) is 65");
  EXPECT_PATCH(40, 4, 1000000, KILN_DATA_LOSS, "num_sections");
  /* A newer version is reported even when nothing else is valid. */
  {
    uint8_t newer[64];
    memcpy(newer, blob, 64);
    wr32(newer + 8, 7);
    check_status(parse_copy(newer, 64, 1), KILN_UNIMPLEMENTED, "newer", __LINE__);
  }
  /* Checksum. */
  {
    uint8_t* work = (uint8_t*)malloc((size_t)size);
    if (work != NULL) {
      memcpy(work, blob, (size_t)size);
      work[size - 1] ^= 1;
      check_status(parse_copy(work, size, 1), KILN_DATA_LOSS, "corrupted: checksum mismatch",
                   __LINE__);
      free(work);
    }
  }

  /* Section table: entry i at 64 + 24 i (0 META, 1 GRAPH, 2 PARAMS). */
  EXPECT_PATCH(64 + 24 + 8, 8, rd64(blob + 64 + 24 + 8) + 8, KILN_DATA_LOSS,
               "section 1 (GRAPH) offset");
  EXPECT_PATCH(64 + 24 + 8, 8, rd64(blob + 64 + 8), KILN_DATA_LOSS,
               "section 1 (GRAPH) [");
  EXPECT_PATCH(64 + 24 + 16, 8, size, KILN_DATA_LOSS, "exceeds blob size");
  EXPECT_PATCH(64 + 24 + 16, 8, UINT64_MAX, KILN_DATA_LOSS, "exceeds blob size");
  EXPECT_PATCH(64 + 24 + 8, 8, UINT64_MAX - 63, KILN_DATA_LOSS, "exceeds blob size");
  EXPECT_PATCH(64 + 8, 8, 64, KILN_DATA_LOSS, "overlaps the header and section table");
  EXPECT_PATCH(64 + 4, 4, 1, KILN_DATA_LOSS, "section 0 (META) flags");
  EXPECT_PATCH(64 + 24, 4, KILN_SECTION_META, KILN_DATA_LOSS, "a second META section");
  EXPECT_PATCH(64 + 48, 4, 1234, KILN_DATA_LOSS, "no PARAMS section");
  EXPECT_PATCH(64, 4, 1234, KILN_DATA_LOSS, "no META section");
  EXPECT_PATCH(64 + 24, 4, 0, KILN_DATA_LOSS, "no GRAPH section");
  /* A zero-size section may sit anywhere aligned in bounds (no overlap). */
  {
    uint8_t* work = (uint8_t*)malloc((size_t)size);
    if (work != NULL) {
      memcpy(work, blob, (size_t)size);
      wr64(work + 64 + 4 * 24 + 16, 0);                  /* kind 99: size 0 */
      wr64(work + 64 + 4 * 24 + 8, rd64(work + 64 + 8)); /* at META's offset */
      reseal(work, size);
      CHECK_OK(parse_copy(work, size, 1));
      free(work);
    }
  }

  /* PARAMS. */
  EXPECT_PATCH(params, 8, UINT64_MAX, KILN_DATA_LOSS, "PARAMS count");
  EXPECT_PATCH(params, 8, 1000, KILN_DATA_LOSS, "PARAMS count 1000");
  EXPECT_PATCH(64 + 48 + 16, 8, 7, KILN_DATA_LOSS, "too small for its count");
  EXPECT_PATCH(e0 + 0, 8, v.params_size, KILN_DATA_LOSS, "name_offset");
  EXPECT_PATCH(e0 + 0, 8, 0, KILN_DATA_LOSS, "name_offset 0");
  EXPECT_PATCH(e0 + 0, 8, UINT64_MAX, KILN_DATA_LOSS, "name_offset");
  EXPECT_PATCH(e0 + 8, 4, 0, KILN_DATA_LOSS, "empty name");
  EXPECT_PATCH(e0 + 8, 4, UINT32_MAX, KILN_DATA_LOSS, "name_size");
  EXPECT_PATCH(e0 + 12, 4, 33, KILN_DATA_LOSS, "ndim 33");
  EXPECT_PATCH(e0 + 12, 4, UINT32_MAX, KILN_DATA_LOSS, "ndim -1");
  EXPECT_PATCH(e0 + 12, 4, 1, KILN_DATA_LOSS, "data_size 24, but the shape and dtype make 8");
  EXPECT_PATCH(e0 + 16, 8, v.params_size - 8, KILN_DATA_LOSS, "shape_offset");
  EXPECT_PATCH(e0 + 16, 8, UINT64_MAX - 7, KILN_DATA_LOSS, "shape_offset");
  EXPECT_PATCH(e0 + 24, 8, rd64(blob + e0 + 24) + 8, KILN_DATA_LOSS, "not a multiple of 64");
  EXPECT_PATCH(e0 + 24, 8, UINT64_MAX - 63, KILN_DATA_LOSS, "data_offset");
  EXPECT_PATCH(e0 + 24, 8, 0, KILN_DATA_LOSS, "data_offset 0");
  EXPECT_PATCH(e0 + 32, 8, 25, KILN_DATA_LOSS, "data_size 25");
  EXPECT_PATCH(e0 + 40, 1, 9, KILN_DATA_LOSS, "unknown dtype code 9");
  EXPECT_PATCH(e0 + 41, 1, 8, KILN_DATA_LOSS, "unknown dtype code 2 bits 8");
  EXPECT_PATCH(e0 + 42, 2, 2, KILN_DATA_LOSS, "lanes 2");
  EXPECT_PATCH(e0 + 44, 4, 1, KILN_DATA_LOSS, "reserved field");
  /* A scalar given a dimension reads the next shape ([5]): 40 bytes. */
  EXPECT_PATCH(e1 + 12, 4, 1, KILN_DATA_LOSS, "data_size 8, but the shape and dtype make 40");
  EXPECT_PATCH(e3 + 41, 1, 32, KILN_DATA_LOSS, "unknown dtype code 4 bits 32");
  {
    /* p0's shape [2, 3] -> [2, -3]; -> [2^62, 4] (the byte size overflows). */
    uint64_t shape_offset = params + rd64(blob + e0 + 16);
    EXPECT_PATCH(shape_offset + 8, 8, (uint64_t)-3, KILN_DATA_LOSS, "dimension 1 is negative (-3)");
    uint8_t* work = (uint8_t*)malloc((size_t)size);
    if (work != NULL) {
      memcpy(work, blob, (size_t)size);
      wr64(work + shape_offset, UINT64_C(1) << 62);
      wr64(work + shape_offset + 8, 4);
      reseal(work, size);
      check_status(parse_copy(work, size, 1), KILN_DATA_LOSS, "overflows", __LINE__);
      /* A zero dimension makes any other dimension harmless: 0 bytes. */
      wr64(work + shape_offset + 8, 0);
      wr64(work + e0 + 32, 0);
      reseal(work, size);
      CHECK_OK(parse_copy(work, size, 1));
      free(work);
    }
  }
  {
    /* Duplicate names: rename "p1" to "p0"; a NUL inside a name. */
    uint64_t p1_name = params + rd64(blob + e1);
    EXPECT_PATCH(p1_name + 1, 1, '0', KILN_DATA_LOSS, "PARAMS entries 0 and 1 have the same name 'p0'");
    EXPECT_PATCH(p1_name + 1, 1, 0, KILN_DATA_LOSS, "NUL");
  }
}

static void test_builder_errors(void) {
  KilnArtifactBuilder* b = NULL;
  CHECK_STATUS(kiln_artifact_builder_create(NULL), KILN_INVALID_ARGUMENT, "NULL");
  CHECK_OK(kiln_artifact_builder_create(&b));
  kiln_artifact_builder_release(NULL);
  if (b == NULL) return;
  uint8_t* blob = (uint8_t*)1;
  uint64_t size = 1;
  CHECK_STATUS(kiln_artifact_builder_finish(b, &blob, &size), KILN_FAILED_PRECONDITION, "META");
  CHECK(blob == NULL && size == 0);
  CHECK_OK(kiln_artifact_builder_set_section(b, KILN_SECTION_META, kMeta, strlen(kMeta)));
  CHECK_STATUS(kiln_artifact_builder_finish(b, &blob, &size), KILN_FAILED_PRECONDITION, "GRAPH");
  CHECK_OK(kiln_artifact_builder_set_section(b, KILN_SECTION_GRAPH, "", 0)); /* empty is fine */
  CHECK_STATUS(kiln_artifact_builder_set_section(b, KILN_SECTION_PARAMS, "x", 1),
               KILN_INVALID_ARGUMENT, "PARAMS");
  CHECK_STATUS(kiln_artifact_builder_set_section(b, 5, NULL, 3), KILN_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(kiln_artifact_builder_finish(NULL, &blob, &size), KILN_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(kiln_artifact_builder_finish(b, NULL, &size), KILN_INVALID_ARGUMENT, "NULL");

  float f[4] = {1, 2, 3, 4};
  int64_t shape[2] = {2, 2};
  DLTensor t = tensor(f, 2, shape, kDLFloat, 32);
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "", &t), KILN_INVALID_ARGUMENT, "empty");
  CHECK_STATUS(kiln_artifact_builder_add_param(b, NULL, &t), KILN_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "a", NULL), KILN_INVALID_ARGUMENT, "NULL");
  CHECK_OK(kiln_artifact_builder_add_param(b, "a", &t));
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "a", &t), KILN_INVALID_ARGUMENT,
               "'a' is added twice");
  DLTensor bad = t;
  int64_t strides[2] = {1, 2}; /* column-major */
  bad.strides = strides;
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "b", &bad), KILN_INVALID_ARGUMENT,
               "not compact");
  bad = t;
  bad.dtype.bits = 8; /* float8: not supported */
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "b", &bad), KILN_INVALID_ARGUMENT,
               "unsupported dtype");
  bad = t;
  bad.dtype.lanes = 4;
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "b", &bad), KILN_INVALID_ARGUMENT,
               "unsupported dtype");
  bad = t;
  bad.ndim = 33;
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "b", &bad), KILN_INVALID_ARGUMENT, "ndim 33");
  bad = t;
  bad.shape = NULL;
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "b", &bad), KILN_INVALID_ARGUMENT, "no shape");
  bad = t;
  int64_t negative[2] = {2, -1};
  bad.shape = negative;
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "b", &bad), KILN_INVALID_ARGUMENT, "negative");
  bad = t;
  bad.data = NULL;
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "b", &bad), KILN_INVALID_ARGUMENT, "NULL data");
  bad = t;
  bad.device.device_type = kDLCUDA;
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "b", &bad), KILN_INVALID_ARGUMENT, "CPU");
  bad = t;
  int64_t huge[2] = {INT64_MAX, 1};
  bad.shape = huge;
  CHECK_STATUS(kiln_artifact_builder_add_param(b, "b", &bad), KILN_INVALID_ARGUMENT, "large");
  /* Extent-1 dimensions may have any stride. */
  DLTensor row = t;
  int64_t row_shape[2] = {1, 4};
  int64_t row_strides[2] = {99, 1};
  row.shape = row_shape;
  row.strides = row_strides;
  CHECK_OK(kiln_artifact_builder_add_param(b, "row", &row));

  CHECK_OK(kiln_artifact_builder_finish(b, &blob, &size));
  KilnBlobView v;
  CHECK_OK(kiln_blob_parse(blob, size, 1, "small", &v));
  CHECK(v.num_params == 2 && v.graph_size == 0 && v.device_code == NULL);
  free(blob);
  kiln_artifact_builder_release(b);

  /* No parameters at all: PARAMS is just its count. */
  CHECK_OK(kiln_artifact_builder_create(&b));
  if (b == NULL) return;
  CHECK_OK(kiln_artifact_builder_set_section(b, KILN_SECTION_META, kMeta, strlen(kMeta)));
  CHECK_OK(kiln_artifact_builder_set_section(b, KILN_SECTION_GRAPH, kGraph, strlen(kGraph)));
  CHECK_OK(kiln_artifact_builder_finish(b, &blob, &size));
  CHECK_OK(kiln_blob_parse(blob, size, 1, "empty", &v));
  CHECK(v.num_params == 0 && v.params_size == 8);
  test_every_byte_and_truncation(blob, size);
  free(blob);
  /* Too many sections. */
  for (uint32_t kind = 100; kind < 100 + 61; ++kind) {
    CHECK_OK(kiln_artifact_builder_set_section(b, kind, "z", 1));
  }
  CHECK_STATUS(kiln_artifact_builder_set_section(b, 500, "z", 1), KILN_INVALID_ARGUMENT,
               "too many sections");
  CHECK_OK(kiln_artifact_builder_set_section(b, 100, "replaced", 8)); /* replacing is fine */
  CHECK_OK(kiln_artifact_builder_finish(b, &blob, &size));
  CHECK_OK(kiln_blob_parse(blob, size, 1, "64 sections", &v));
  CHECK(v.header.num_sections == 64);
  free(blob);
  kiln_artifact_builder_release(b);

  /* Bad arguments to the reader. */
  CHECK_STATUS(kiln_blob_parse(NULL, 10, 1, NULL, &v), KILN_INVALID_ARGUMENT, "NULL");
  CHECK_STATUS(kiln_blob_parse((const uint8_t*)"", 0, 1, NULL, &v), KILN_DATA_LOSS,
               "blob: corrupted artifact: only 0 bytes");
}

static void test_dtypes(void) {
  const char* names[] = {"float16", "bfloat16", "float32", "float64", "int8",   "int16", "int32",
                         "int64",   "uint8",    "uint16",  "uint32",  "uint64", "bool"};
  const uint64_t bytes[] = {2, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    DLDataType dt;
    CHECK(kiln_dtype_from_string(names[i], &dt) == 0);
    CHECK(dt.lanes == 1);
    CHECK(kiln_dtype_bytes(dt) == bytes[i]);
    char buf[16];
    kiln_dtype_to_string(dt, buf, sizeof(buf));
    CHECK(strcmp(buf, names[i]) == 0);
  }
  DLDataType dt;
  CHECK(kiln_dtype_from_string("bool", &dt) == 0 && dt.code == 6 && dt.bits == 8);
  CHECK(kiln_dtype_from_string("bfloat16", &dt) == 0 && dt.code == kDLBfloat && dt.bits == 16);
  CHECK(kiln_dtype_from_string("float", &dt) == -1);
  CHECK(kiln_dtype_from_string("Float32", &dt) == -1);
  CHECK(kiln_dtype_from_string("", &dt) == -1);
  CHECK(kiln_dtype_from_string(NULL, &dt) == -1);
  DLDataType odd = {kDLFloat, 32, 4};
  CHECK(kiln_dtype_bytes(odd) == 0);
  odd.lanes = 1;
  odd.bits = 12;
  CHECK(kiln_dtype_bytes(odd) == 0);
  odd.code = kDLComplex;
  odd.bits = 64;
  CHECK(kiln_dtype_bytes(odd) == 0);
  char buf[64];
  kiln_dtype_to_string(odd, buf, sizeof(buf));
  CHECK(strcmp(buf, "dtype(code=5,bits=64,lanes=1)") == 0);
  char small[4];
  kiln_dtype_to_string(odd, small, sizeof(small)); /* truncated, terminated */
  CHECK(strlen(small) == 3);
  kiln_dtype_to_string(odd, NULL, 10);
}

int main(void) {
  uint64_t size = 0;
  uint8_t* blob = build_sample(&size);
  CHECK(blob != NULL);
  if (blob != NULL) {
    test_round_trip(blob, size);
    test_structure_checks(blob, size);
    test_every_byte_and_truncation(blob, size);
    free(blob);
  }
  test_builder_errors();
  test_dtypes();
  if (failures != 0) {
    fprintf(stderr, "artifact_blob_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("artifact_blob_test: OK\n");
  return 0;
}
