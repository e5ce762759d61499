/* File: runtime_c/checksum_test.c — kiln_checksum64 (docs/artifact.md).
 * Known values come from an independent Python reimplementation:
 *
 *   def ck(data, skip=None):
 *       b = bytearray(data)
 *       if skip is not None:
 *           for i in range(skip, skip + 8):
 *               if 0 <= i < len(b): b[i] = 0
 *       h = 0xcbf29ce484222325
 *       for i in range(0, len(b), 8):
 *           w = int.from_bytes(bytes(b[i:i+8]).ljust(8, b'\0'), 'little')
 *           h = ((h ^ w) * 0x100000001b3) & (2**64 - 1)
 *       return ((h ^ len(b)) * 0x100000001b3) & (2**64 - 1)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kiln/artifact_format.h"
#include "runtime_c/c_test_util.h"

/* The specification, byte by byte (no fast path). */
static uint64_t reference(const uint8_t* data, uint64_t size, uint64_t skip) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (uint64_t start = 0; start < size; start += 8) {
    uint64_t w = 0;
    for (uint64_t i = 0; i < 8 && start + i < size; ++i) {
      uint64_t off = start + i;
      uint8_t byte = (off >= skip && off - skip < 8) ? 0 : data[off];
      w |= (uint64_t)byte << (8 * i);
    }
    h = (h ^ w) * UINT64_C(0x100000001b3);
  }
  return (h ^ size) * UINT64_C(0x100000001b3);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t next_random(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

int main(void) {
  /* Known values (Python, above). */
  CHECK(kiln_checksum64(NULL, 0, UINT64_MAX) == UINT64_C(0xaf63bd4c8601b7df));
  CHECK(kiln_checksum64("a", 1, UINT64_MAX) == UINT64_C(0x089be307b544f397));
  CHECK(kiln_checksum64("abcdefgh", 8, UINT64_MAX) == UINT64_C(0xe8f7192949dab24c));
  CHECK(kiln_checksum64("abcdefghi", 9, UINT64_MAX) == UINT64_C(0xb7dbaa287fb4fa62));
  uint8_t r[100];
  for (int i = 0; i < 100; ++i) r[i] = (uint8_t)i;
  struct {
    uint64_t skip;
    uint64_t expected;
  } known[] = {
      {UINT64_MAX, UINT64_C(0x9e61e9b77fc9d001)}, {0, UINT64_C(0xd81b65b316a2e101)},
      {32, UINT64_C(0xfb758281a2b1af21)},         {13, UINT64_C(0xf109986958be6df1)},
      {92, UINT64_C(0xd00e5e2bc377e361)},         {95, UINT64_C(0xa9c1fd1fc377e361)},
      {98, UINT64_C(0xaa62fd1eac7bd001)},         {99, UINT64_C(0x9e62fc03b6c9d001)},
      {100, UINT64_C(0x9e61e9b77fc9d001)},        {1000, UINT64_C(0x9e61e9b77fc9d001)},
  };
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); ++i) {
    uint64_t got = kiln_checksum64(r, 100, known[i].skip);
    if (got != known[i].expected) {
      fprintf(stderr, "skip %llu: got 0x%016llx, expected 0x%016llx\n",
              (unsigned long long)known[i].skip, (unsigned long long)got,
              (unsigned long long)known[i].expected);
      ++failures;
    }
  }

  /* The fast path equals the byte-by-byte reference for every size up to
   * 200 and every skip offset (aligned, unaligned, overlapping the tail,
   * past the end), on random data at an unaligned address. */
  uint8_t buf[256 + 3];
  for (size_t i = 0; i < sizeof(buf); ++i) buf[i] = (uint8_t)next_random();
  const uint8_t* data = buf + 3;
  for (uint64_t size = 0; size <= 200; ++size) {
    CHECK(kiln_checksum64(data, size, UINT64_MAX) == reference(data, size, UINT64_MAX));
    for (uint64_t skip = 0; skip <= size + 10; ++skip) {
      if (kiln_checksum64(data, size, skip) != reference(data, size, skip)) {
        fprintf(stderr, "size %llu skip %llu: differs from the reference\n",
                (unsigned long long)size, (unsigned long long)skip);
        ++failures;
      }
    }
  }
  /* Skipping reads the skipped bytes as zero: same as zeroing them. */
  {
    uint8_t copy[64];
    memcpy(copy, data, 64);
    uint64_t skipped = kiln_checksum64(copy, 64, 21);
    memset(copy + 21, 0, 8);
    CHECK(skipped == kiln_checksum64(copy, 64, UINT64_MAX));
  }
  /* Size matters even when the extra bytes are zero (the length round). */
  {
    uint8_t zeros[16] = {0};
    CHECK(kiln_checksum64(zeros, 15, UINT64_MAX) != kiln_checksum64(zeros, 16, UINT64_MAX));
    CHECK(kiln_checksum64(zeros, 8, UINT64_MAX) != kiln_checksum64(zeros, 7, UINT64_MAX));
  }

  /* Every single-byte change of a 1 KB buffer is detected, except inside the
   * skipped field; 1023 and 1024 bytes (with and without a tail). */
  static uint8_t kb[1024];
  for (size_t i = 0; i < sizeof(kb); ++i) kb[i] = (uint8_t)next_random();
  for (uint64_t size = 1023; size <= 1024; ++size) {
    const uint64_t skip = 32;
    const uint64_t base = kiln_checksum64(kb, size, skip);
    const uint64_t base_all = kiln_checksum64(kb, size, UINT64_MAX);
    for (uint64_t pos = 0; pos < size; ++pos) {
      const uint8_t saved = kb[pos];
      for (unsigned delta = 1; delta < 256; delta += 37) {
        kb[pos] = (uint8_t)(saved ^ delta);
        int inside = pos >= skip && pos < skip + 8;
        uint64_t changed = kiln_checksum64(kb, size, skip);
        if (inside ? changed != base : changed == base) {
          fprintf(stderr, "size %llu: byte %llu ^ 0x%02x %s\n", (unsigned long long)size,
                  (unsigned long long)pos, delta,
                  inside ? "in the skipped field changed the checksum" : "was not detected");
          ++failures;
        }
        if (kiln_checksum64(kb, size, UINT64_MAX) == base_all) {
          fprintf(stderr, "size %llu: byte %llu ^ 0x%02x not detected without skip\n",
                  (unsigned long long)size, (unsigned long long)pos, delta);
          ++failures;
        }
      }
      kb[pos] = saved;
    }
  }

  if (failures != 0) {
    fprintf(stderr, "checksum_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("checksum_test: OK\n");
  return 0;
}
