/* File: runtime_c/hmac_sha256.h  (internal to runtime_c)
 *
 * SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), in C11 with no
 * dependency: the keyed digest kiln_artifact_load_with verifies before
 * anything of a file is parsed (docs/artifact.md, "An artifact is code").
 * Tested against FIPS 180-2 and RFC 4231 vectors (hmac_sha256_test.c).
 *
 *   uint8_t mac[KILN_SHA256_SIZE];
 *   kiln_hmac_sha256(key, key_size, file_bytes, file_size, mac);
 *   if (!kiln_digest_equal(mac, expected, sizeof mac)) ... refuse ...
 *
 * Functions are hidden: nothing here is exported by the shared libraries.
 */
#ifndef KILN_RUNTIME_C_HMAC_SHA256_H_
#define KILN_RUNTIME_C_HMAC_SHA256_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_HMAC_HIDDEN __attribute__((visibility("hidden")))
#else
#define KILN_HMAC_HIDDEN
#endif

#define KILN_SHA256_SIZE 32u
#define KILN_SHA256_BLOCK 64u

typedef struct {
  uint32_t h[8];
  uint64_t bytes; /* message bytes so far */
  uint8_t block[KILN_SHA256_BLOCK];
  size_t used; /* bytes in block */
} KilnSha256;

void kiln_sha256_init(KilnSha256* s) KILN_HMAC_HIDDEN;
void kiln_sha256_update(KilnSha256* s, const void* data, size_t size) KILN_HMAC_HIDDEN;
void kiln_sha256_final(KilnSha256* s, uint8_t out[KILN_SHA256_SIZE]) KILN_HMAC_HIDDEN;

/* HMAC-SHA-256 of data[0, size) under key[0, key_size) (any length). */
void kiln_hmac_sha256(const void* key, size_t key_size, const void* data, size_t size,
                      uint8_t out[KILN_SHA256_SIZE]) KILN_HMAC_HIDDEN;

/* 1 when a[0, n) == b[0, n), in time independent of where they differ. */
int kiln_digest_equal(const uint8_t* a, const uint8_t* b, size_t n) KILN_HMAC_HIDDEN;

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* KILN_RUNTIME_C_HMAC_SHA256_H_ */
