/* File: tools/bench/scalar_ref.c
 *
 * The reference the component benchmarks (tools/bench/components.py) divide
 * the compiler's and the runtime's times by: a fixed amount of the kind of
 * work a compiler does — branchy byte scanning, hashing, scattered reads and
 * writes of a table bigger than L1 — so that a figure stored as "time / this"
 * moves little between machines and between a busy and an idle one.
 *
 *   cc -O2 scalar_ref.c -o scalar_ref && ./scalar_ref [ROUNDS]
 *   -> prints the best of ROUNDS (5) passes in milliseconds: "scalar_ref_ms 12.345"
 *
 * Plain C11, deterministic (a fixed xorshift stream), no dependencies.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kBytes = 1 << 22, kTable = 1 << 16 };

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One pass: split the bytes into tokens by character class, hash each token
 * (FNV-1a) into a counting table, and fold the table into a checksum. */
static uint64_t pass(const unsigned char* text, uint32_t* table) {
  uint64_t h = 1469598103934665603ull;
  int cls = 0;
  for (size_t i = 0; i < kBytes; ++i) {
    const unsigned char c = text[i];
    const int k = c < 64 ? 0 : c < 128 ? 1 : c < 200 ? 2 : 3;
    if (k != cls) {
      table[h & (kTable - 1)] += 1u + (uint32_t)cls;
      h = 1469598103934665603ull;
      cls = k;
    }
    h = (h ^ c) * 1099511628211ull;
  }
  uint64_t sum = 0;
  for (size_t i = 0; i < kTable; ++i) sum = sum * 31u + table[i];
  return sum;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  if (rounds < 1) rounds = 1;
  unsigned char* text = (unsigned char*)malloc(kBytes);
  uint32_t* table = (uint32_t*)calloc(kTable, sizeof(uint32_t));
  if (text == NULL || table == NULL) return 1;
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < kBytes; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    text[i] = (unsigned char)(x >> 24);
  }
  double best = 1e300;
  uint64_t check = 0;
  for (int r = 0; r < rounds; ++r) {
    const double t0 = now_ms();
    check ^= pass(text, table);
    const double t = now_ms() - t0;
    if (t < best) best = t;
  }
  printf("scalar_ref_ms %.4f\n", best);
  fprintf(stderr, "(checksum %llu)\n", (unsigned long long)check);
  free(text);
  free(table);
  return 0;
}
