/* File: runtime_c/hmac_sha256.c
 *
 * SHA-256 as FIPS 180-4 §6.2 specifies it (big-endian words, 64 rounds,
 * the message padded with 0x80, zeros and its bit length), and HMAC as
 * RFC 2104: a key longer than the 64-byte block is hashed first, then
 * H((K ^ opad) || H((K ^ ipad) || message)).
 */
#include "runtime_c/hmac_sha256.h"

#include <stdint.h>
#include <string.h>

static const uint32_t kK[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u,
    0xab1c5ed5u, 0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu,
    0x9bdc06a7u, 0xc19bf174u, 0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu,
    0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau, 0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u,
    0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u, 0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu,
    0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u, 0xa2bfe8a1u, 0xa81a664bu,
    0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u, 0x19a4c116u,
    0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u,
    0xc67178f2u};

static inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t h[8], const uint8_t block[KILN_SHA256_BLOCK]) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) {
    w[i] = ((uint32_t)block[4 * i] << 24) | ((uint32_t)block[4 * i + 1] << 16) |
           ((uint32_t)block[4 * i + 2] << 8) | (uint32_t)block[4 * i + 3];
  }
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

void kiln_sha256_init(KilnSha256* s) {
  static const uint32_t kInit[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                    0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  memcpy(s->h, kInit, sizeof kInit);
  s->bytes = 0;
  s->used = 0;
}

void kiln_sha256_update(KilnSha256* s, const void* data, size_t size) {
  if (size == 0) return;
  const uint8_t* p = (const uint8_t*)data;
  s->bytes += (uint64_t)size;
  if (s->used > 0) {
    size_t take = KILN_SHA256_BLOCK - s->used < size ? KILN_SHA256_BLOCK - s->used : size;
    memcpy(s->block + s->used, p, take);
    s->used += take;
    p += take;
    size -= take;
    if (s->used < KILN_SHA256_BLOCK) return;
    compress(s->h, s->block);
    s->used = 0;
  }
  while (size >= KILN_SHA256_BLOCK) {
    compress(s->h, p);
    p += KILN_SHA256_BLOCK;
    size -= KILN_SHA256_BLOCK;
  }
  if (size > 0) {
    memcpy(s->block, p, size);
    s->used = size;
  }
}

void kiln_sha256_final(KilnSha256* s, uint8_t out[KILN_SHA256_SIZE]) {
  const uint64_t bits = s->bytes * 8u;
  s->block[s->used++] = 0x80u;
  if (s->used > KILN_SHA256_BLOCK - 8u) {
    memset(s->block + s->used, 0, KILN_SHA256_BLOCK - s->used);
    compress(s->h, s->block);
    s->used = 0;
  }
  memset(s->block + s->used, 0, KILN_SHA256_BLOCK - 8u - s->used);
  for (int i = 0; i < 8; ++i) s->block[KILN_SHA256_BLOCK - 1u - (size_t)i] = (uint8_t)(bits >> (8 * i));
  compress(s->h, s->block);
  for (int i = 0; i < 8; ++i) {
    out[4 * i] = (uint8_t)(s->h[i] >> 24);
    out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
    out[4 * i + 3] = (uint8_t)s->h[i];
  }
  memset(s, 0, sizeof *s);
}

void kiln_hmac_sha256(const void* key, size_t key_size, const void* data, size_t size,
                      uint8_t out[KILN_SHA256_SIZE]) {
  uint8_t k[KILN_SHA256_BLOCK];
  memset(k, 0, sizeof k);
  KilnSha256 s;
  if (key_size > KILN_SHA256_BLOCK) {
    kiln_sha256_init(&s);
    kiln_sha256_update(&s, key, key_size);
    kiln_sha256_final(&s, k);
  } else if (key_size > 0) {
    memcpy(k, key, key_size);
  }
  uint8_t pad[KILN_SHA256_BLOCK];
  uint8_t inner[KILN_SHA256_SIZE];
  for (size_t i = 0; i < sizeof pad; ++i) pad[i] = (uint8_t)(k[i] ^ 0x36u);
  kiln_sha256_init(&s);
  kiln_sha256_update(&s, pad, sizeof pad);
  kiln_sha256_update(&s, data, size);
  kiln_sha256_final(&s, inner);
  for (size_t i = 0; i < sizeof pad; ++i) pad[i] = (uint8_t)(k[i] ^ 0x5cu);
  kiln_sha256_init(&s);
  kiln_sha256_update(&s, pad, sizeof pad);
  kiln_sha256_update(&s, inner, sizeof inner);
  kiln_sha256_final(&s, out);
  memset(k, 0, sizeof k);
  memset(pad, 0, sizeof pad);
}

int kiln_digest_equal(const uint8_t* a, const uint8_t* b, size_t n) {
  uint8_t diff = 0;
  for (size_t i = 0; i < n; ++i) diff |= (uint8_t)(a[i] ^ b[i]);
  return diff == 0;
}
