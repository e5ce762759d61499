/* File: runtime_c/runtime_fuzz_test.c
 *
 * The loader's step 5 (META / GRAPH validation) against damaged JSON that
 * passes steps 1-4: a copy of rt_basic.so gets 1-4 random bytes of its GRAPH
 * or META text replaced (JSON punctuation, digits, letters), is sealed again
 * (kiln_artifact_seal_file: new file size and checksum, so only the JSON is
 * wrong), and loaded. Every load must either fail with a status naming the
 * file or succeed; a model that loads is then run (its kernels check their
 * arguments). Nothing may crash, leak or read out of bounds (run under
 * --config=asan too). Deterministic (fixed seed).
 *
 * Arguments: $(rootpath :rt_basic) [iterations]
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/artifact_writer.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime_c/runtime_test_util.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_random(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return (uint32_t)(g_rng >> 16);
}

static unsigned char* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* data = (unsigned char*)malloc(n > 0 ? (size_t)n : 1);
  if (data != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

static int write_all(const char* path, const unsigned char* data, size_t size) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) return 0;
  int ok = fwrite(data, 1, size, f) == size;
  return (fclose(f) == 0) && ok;
}

/* Offset of `needle` in `hay`, or -1. */
static long find(const unsigned char* hay, size_t n, const char* needle) {
  size_t m = strlen(needle);
  for (size_t i = 0; i + m <= n; ++i) {
    if (memcmp(hay + i, needle, m) == 0) return (long)i;
  }
  return -1;
}

/* Runs a model that loaded: set whatever inputs match float32[2,3], run. */
static void exercise(KilnArtifact* a, int* runs) {
  KilnSession* s = NULL;
  KilnStatus* st = kiln_session_create(a, NULL, &s);
  if (st != NULL) {
    kiln_status_free(st);
    return;
  }
  float data[6] = {1, -2, 3, -4, 5, -6};
  int64_t shape[2] = {2, 3};
  DLTensor t = f32_tensor(data, 2, shape);
  int all_set = 1;
  for (int32_t i = 0; i < kiln_artifact_num_inputs(a); ++i) {
    st = kiln_session_set_input_index(s, i, &t);
    if (st != NULL) {
      all_set = 0;
      kiln_status_free(st);
    }
  }
  if (all_set) {
    st = kiln_session_run(s);
    if (st == NULL) ++*runs;
    kiln_status_free(st);
  }
  kiln_session_release(s);
}

int main(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
  const char* src = fixture("rt_basic");
  long iterations = 1500;
  if (argc > 2) iterations = strtol(argv[2], NULL, 10);

  size_t size = 0;
  unsigned char* good = read_all(src, &size);
  CHECK(good != NULL);
  if (good == NULL) return 1;
  /* The GRAPH and META texts, stored verbatim in the blob. */
  long graph = find(good, size, "{\n  \"nodes\": [");
  long graph_end = graph < 0 ? -1 : find(good + graph, size - (size_t)graph, "\n}\n");
  long meta = find(good, size, "\"producer\": \"kiln 0.1.0\"");
  CHECK(graph >= 0 && graph_end > 0 && meta > 0);
  if (graph < 0 || graph_end <= 0 || meta <= 0) return 1;
  graph_end += graph + 3;
  long meta_end = meta + 200;

  const char* tmp = getenv("TEST_TMPDIR");
  char path[1024];
  (void)snprintf(path, sizeof path, "%s/fuzz.so", tmp != NULL ? tmp : "/tmp");
  static const char alphabet[] = "0123456789-+.eE[]{},:\" \\ntrufalsnul_x";
  unsigned char* copy = (unsigned char*)malloc(size);
  CHECK(copy != NULL);
  if (copy == NULL) return 1;

  int loaded = 0, refused = 0, runs = 0;
  for (long it = 0; it <= iterations; ++it) {
    memcpy(copy, good, size);
    if (it > 0) { /* iteration 0: the intact copy, resealed */
      int edits = 1 + (int)(next_random() % 4);
      int in_meta = (next_random() % 4) == 0;
      long lo = in_meta ? meta : graph;
      long hi = in_meta ? meta_end : graph_end;
      for (int e = 0; e < edits; ++e) {
        long at = lo + (long)(next_random() % (uint32_t)(hi - lo));
        copy[at] = (unsigned char)alphabet[next_random() % (sizeof alphabet - 1)];
      }
    }
    if (!write_all(path, copy, size)) {
      CHECK(0);
      break;
    }
    KilnStatus* st = kiln_artifact_seal_file(path);
    if (!EXPECT_OK(st)) break;
    KilnArtifact* a = NULL;
    st = kiln_artifact_load(path, &a);
    if (st != NULL) {
      CHECK(a == NULL);
      CHECK(strstr(kiln_status_message(st), path) != NULL);
      CHECK(kiln_status_code(st) == KILN_DATA_LOSS || kiln_status_code(st) == KILN_NOT_FOUND ||
            kiln_status_code(st) == KILN_UNIMPLEMENTED);
      if (it == 0) EXPECT_OK(st);
      if (it != 0) kiln_status_free(st);
      ++refused;
      continue;
    }
    ++loaded;
    exercise(a, &runs);
    kiln_artifact_release(a);
  }
  printf("runtime_fuzz_test: %d loaded (%d ran), %d refused\n", loaded, runs, refused);
  CHECK(loaded >= 1 && refused >= 1);
  free(copy);
  free(good);
  return test_main_end("runtime_fuzz_test");
}
