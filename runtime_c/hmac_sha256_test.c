/* File: runtime_c/hmac_sha256_test.c
 *
 * SHA-256 against the FIPS 180-2 examples ("abc", the 448-bit message, a
 * million 'a's fed in uneven pieces) and the empty string; HMAC-SHA-256
 * against every test case of RFC 4231 (§4.2-4.8: short and 131-byte keys,
 * short and block-sized data, the truncated case 5); kiln_digest_equal.
 */
#include "runtime_c/hmac_sha256.h"

#include <stdio.h>
#include <string.h>

#include "runtime_c/c_test_util.h"

static void hex(const uint8_t* d, size_t n, char* out) {
  for (size_t i = 0; i < n; ++i) (void)snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void check_sha(const void* data, size_t size, const char* want, int line) {
  KilnSha256 s;
  uint8_t out[KILN_SHA256_SIZE];
  kiln_sha256_init(&s);
  kiln_sha256_update(&s, data, size);
  kiln_sha256_final(&s, out);
  char got[2 * KILN_SHA256_SIZE + 1];
  hex(out, sizeof out, got);
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "line %d: sha256 %s, expected %s\n", line, got, want);
    ++failures;
  }
}

static void check_hmac(const uint8_t* key, size_t key_size, const void* data, size_t size,
                       const char* want, int line) {
  uint8_t out[KILN_SHA256_SIZE];
  kiln_hmac_sha256(key, key_size, data, size, out);
  char got[2 * KILN_SHA256_SIZE + 1];
  hex(out, sizeof out, got);
  /* RFC 4231 case 5 gives only the first 128 bits. */
  if (strncmp(got, want, strlen(want)) != 0) {
    fprintf(stderr, "line %d: hmac %s, expected %s\n", line, got, want);
    ++failures;
  }
}

int main(void) {
  check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", __LINE__);
  check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            __LINE__);
  const char* m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  check_sha(m448, strlen(m448),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", __LINE__);
  {
    /* One million 'a', in pieces of 1..127 bytes (every buffering path). */
    static char a[1000000];
    memset(a, 'a', sizeof a);
    KilnSha256 s;
    kiln_sha256_init(&s);
    size_t done = 0, piece = 1;
    while (done < sizeof a) {
      size_t n = piece < sizeof a - done ? piece : sizeof a - done;
      kiln_sha256_update(&s, a + done, n);
      done += n;
      piece = piece % 127 + 1;
    }
    uint8_t out[KILN_SHA256_SIZE];
    kiln_sha256_final(&s, out);
    char got[2 * KILN_SHA256_SIZE + 1];
    hex(out, sizeof out, got);
    CHECK(strcmp(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
  }

  uint8_t k[131];
  uint8_t d[50];
  /* RFC 4231 4.2: Test Case 1. */
  memset(k, 0x0b, 20);
  check_hmac(k, 20, "Hi There", 8,
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", __LINE__);
  /* 4.3: a key shorter than the length of the HMAC output. */
  check_hmac((const uint8_t*)"Jefe", 4, "what do ya want for nothing?", 28,
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", __LINE__);
  /* 4.4: 50 bytes of 0xdd. */
  memset(k, 0xaa, 20);
  memset(d, 0xdd, 50);
  check_hmac(k, 20, d, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
             __LINE__);
  /* 4.5: key 0x01..0x19, 50 bytes of 0xcd. */
  for (int i = 0; i < 25; ++i) k[i] = (uint8_t)(i + 1);
  memset(d, 0xcd, 50);
  check_hmac(k, 25, d, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
             __LINE__);
  /* 4.6: truncation to 128 bits. */
  memset(k, 0x0c, 20);
  check_hmac(k, 20, "Test With Truncation", 20, "a3b6167473100ee06e0c796c2955552b", __LINE__);
  /* 4.7: a 131-byte key (hashed first). */
  memset(k, 0xaa, 131);
  const char* t6 = "Test Using Larger Than Block-Size Key - Hash Key First";
  check_hmac(k, 131, t6, strlen(t6),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", __LINE__);
  /* 4.8: a 131-byte key and data larger than a block. */
  const char* t7 =
      "This is a test using a larger than block-size key and a larger than block-size data. The "
      "key needs to be hashed before being used by the HMAC algorithm.";
  check_hmac(k, 131, t7, strlen(t7),
             "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2", __LINE__);

  uint8_t x[4] = {1, 2, 3, 4}, y[4] = {1, 2, 3, 5};
  CHECK(kiln_digest_equal(x, x, 4));
  CHECK(!kiln_digest_equal(x, y, 4));
  CHECK(kiln_digest_equal(x, y, 3));
  if (failures != 0) {
    fprintf(stderr, "hmac_sha256_test: %d failure(s)\n", failures);
    return 1;
  }
  printf("hmac_sha256_test: all passed\n");
  return 0;
}
