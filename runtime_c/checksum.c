/* File: runtime_c/checksum.c
 *
 * kiln_checksum64 (kiln/artifact_format.h, docs/artifact.md "Checksum"):
 *
 *   h = 0xcbf29ce484222325
 *   for each 64-bit little-endian word w of the data (the last partial word
 *   zero-padded):  h = (h ^ w) * 0x100000001b3
 *   h = (h ^ size) * 0x100000001b3
 *
 * with the 8 bytes [skip_offset, skip_offset + 8) read as zero. skip_offset
 * need not be word-aligned (then it touches two words) and may reach past the
 * end (only the bytes inside the data are zeroed).
 *
 * Fast path: whole words that neither touch the skipped bytes nor are the
 * partial tail go through a plain loop of memcpy loads (one load, one xor,
 * one multiply per word). The at most three other words (two touched by the
 * skip, the tail) are assembled byte by byte.
 */
#include <stdint.h>
#include <string.h>

#include "kiln/artifact_format.h"

#define KILN_FNV_OFFSET_BASIS UINT64_C(0xcbf29ce484222325)
#define KILN_FNV_PRIME UINT64_C(0x100000001b3)

static inline uint64_t kiln_load_le64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

/* h after the whole words [first, last) of p (no skip, no tail inside). */
static uint64_t kiln_fnv_words(uint64_t h, const uint8_t* p, uint64_t first, uint64_t last) {
  if (first >= last) return h;
  const uint8_t* q = p + first * 8u;
  for (uint64_t i = first; i < last; ++i, q += 8) {
    h = (h ^ kiln_load_le64(q)) * KILN_FNV_PRIME;
  }
  return h;
}

/* Word `index` of p (size bytes), zero-padded past the end, with the bytes in
 * [skip_offset, skip_offset + 8) read as zero. */
static uint64_t kiln_load_word_slow(const uint8_t* p, uint64_t size, uint64_t index,
                                    uint64_t skip_offset) {
  uint64_t start = index * 8u;
  uint64_t word = 0;
  for (uint64_t i = 0; i < 8u && start + i < size; ++i) {
    uint64_t offset = start + i;
    int skipped = offset >= skip_offset && offset - skip_offset < 8u;
    uint64_t byte = skipped ? 0u : (uint64_t)p[offset];
    word |= byte << (8u * i);
  }
  return word;
}

uint64_t kiln_checksum64(const void* data, uint64_t size, uint64_t skip_offset) {
  const uint8_t* p = (const uint8_t*)data;
  uint64_t h = KILN_FNV_OFFSET_BASIS;
  const uint64_t full_words = size / 8u;
  const int has_tail = (size % 8u) != 0;

  /* Words [skip_first, skip_last) hold at least one skipped byte. */
  uint64_t skip_first = 0;
  uint64_t skip_last = 0;
  if (skip_offset < size) {
    uint64_t last_byte = size - skip_offset > 8u ? skip_offset + 7u : size - 1u;
    skip_first = skip_offset / 8u;
    skip_last = last_byte / 8u + 1u;
  }

  if (skip_first < skip_last) {
    /* skip_first <= full_words (skip_offset < size). */
    h = kiln_fnv_words(h, p, 0, skip_first);
    for (uint64_t w = skip_first; w < skip_last; ++w) {
      h = (h ^ kiln_load_word_slow(p, size, w, skip_offset)) * KILN_FNV_PRIME;
    }
    if (skip_last < full_words) h = kiln_fnv_words(h, p, skip_last, full_words);
    /* The tail word (index full_words) is done unless the skip covered it. */
    if (has_tail && full_words >= skip_last) {
      h = (h ^ kiln_load_word_slow(p, size, full_words, skip_offset)) * KILN_FNV_PRIME;
    }
  } else {
    h = kiln_fnv_words(h, p, 0, full_words);
    if (has_tail) {
      h = (h ^ kiln_load_word_slow(p, size, full_words, UINT64_MAX)) * KILN_FNV_PRIME;
    }
  }
  return (h ^ size) * KILN_FNV_PRIME;
}
