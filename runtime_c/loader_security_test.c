/* File: runtime_c/loader_security_test.c
 *
 * What kiln_artifact_load trusts, and the C API contract around sessions
 * (issue 15), on the fixtures rt_basic, rt_cpu, rt_ctor and rt_startfiles:
 *
 *  - a library that would run its own code at dlopen is refused before
 *    dlopen: a constructor (which must not have run), the C start files
 *    (DT_INIT, .init_array), and, in patched copies of rt_basic, DT_INIT /
 *    DT_FINI / DT_RPATH / DT_RUNPATH / DT_PREINIT_ARRAY / DT_AUDIT /
 *    DT_FILTER tags, a DT_NEEDED path, an IRELATIVE relocation, another
 *    machine;
 *  - META cpu_features: a feature this CPU lacks refuses the artifact
 *    ("artifact needs X, which this CPU lacks"); names the runtime cannot
 *    probe are ignored; an artifact with only present features loads;
 *  - a session holds a reference on its artifact: it runs after the
 *    artifact is released, and a second release meanwhile is harmless;
 *  - a session, profile or artifact handle released twice, or used after
 *    its release (after the artifact's last reference too), is refused or
 *    ignored by the registry of live handles, never dereferenced;
 *  - kiln_artifact_load_with's keyed digest (HMAC-SHA-256) refuses a file
 *    that is not the expected one, before anything else reads it;
 *  - a DLTensor whose byte_offset cannot fit is refused, never memcpy'd.
 *
 * Each fails on the code before issue 15's loader changes (the load
 * succeeded and ran the constructor; the run after release called unmapped
 * kernels; the huge byte_offset was handed to memcpy).
 *
 * Arguments: the fixture paths ($(rootpath :rt_...)).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kiln/artifact_writer.h"
#include "kiln/runtime.h"
#include "kiln/status.h"
#include "runtime_c/cpu_features.h"
#include "runtime_c/elf_load_check.h"
#include "runtime_c/hmac_sha256.h"
#include "runtime_c/runtime_test_util.h"

static char g_tmp[900];

/* "<TEST_TMPDIR>/<name>". */
static const char* tmp_path(const char* name, char* buf, size_t size) {
  (void)snprintf(buf, size, "%s/%s", g_tmp, name);
  return buf;
}

/* Offset of `needle` (n bytes) in `hay`, or -1. */
static long find_bytes(const uint8_t* hay, uint64_t size, const void* needle, size_t n) {
  for (uint64_t i = 0; i + n <= size; ++i) {
    if (memcmp(hay + i, needle, n) == 0) return (long)i;
  }
  return -1;
}

/* File offset of the dynamic array of an ELF64 image (PT_DYNAMIC p_offset),
 * and its size; -1 when absent. */
static long dynamic_offset(const uint8_t* img, uint64_t* size) {
  uint64_t phoff = rd64(img + 32);
  uint16_t phnum = rd16(img + 56);
  for (uint16_t i = 0; i < phnum; ++i) {
    const uint8_t* ph = img + phoff + (uint64_t)i * 56;
    if (rd32(ph) == 2) {
      *size = rd64(ph + 32);
      return (long)rd64(ph + 8);
    }
  }
  return -1;
}

/* Offset of the first dynamic entry with tag `tag`, or -1. */
static long dynamic_entry(const uint8_t* img, uint64_t tag) {
  uint64_t size = 0;
  long dyn = dynamic_offset(img, &size);
  if (dyn < 0) return -1;
  for (uint64_t i = 0; i + 16 <= size; i += 16) {
    uint64_t t = rd64(img + dyn + i);
    if (t == tag) return dyn + (long)i;
    if (t == 0) break;
  }
  return -1;
}

/* Runs rt_basic's session once with x = 1..6, y = 0 and checks output 2
 * (relu(x + y)). */
static void run_basic(KilnSession* s) {
  float x[6] = {1, -2, 3, -4, 5, -6};
  float y[6] = {0, 0, 0, 0, 0, 0};
  int64_t shape[2] = {2, 3};
  DLTensor tx = f32_tensor(x, 2, shape);
  DLTensor ty = f32_tensor(y, 2, shape);
  if (!EXPECT_OK(kiln_session_set_input(s, "x", &tx))) return;
  if (!EXPECT_OK(kiln_session_set_input(s, "y", &ty))) return;
  if (!EXPECT_OK(kiln_session_run(s))) return;
  const DLTensor* out = NULL;
  if (!EXPECT_OK(kiln_session_get_output(s, 2, &out))) return;
  const float want[6] = {1, 0, 3, 0, 5, 0};
  CHECK(out != NULL && memcmp(out->data, want, sizeof want) == 0);
}

/* ------------------------------------------------------------------------ */

static void test_constructors_refused(void) {
  unsetenv("KILN_RT_CTOR_RAN");
  KilnArtifact* a = NULL;
  KilnStatus* st = kiln_artifact_load(fixture("rt_ctor"), &a);
  CHECK(a == NULL);
  CHECK(st != NULL && strstr(kiln_status_message(st), fixture("rt_ctor")) != NULL);
  EXPECT_ERROR(st, KILN_DATA_LOSS, "refusing to load", "runs code when it is loaded",
               "not linked by this kiln");
  /* Refused before dlopen: the constructor never ran. */
  CHECK(getenv("KILN_RT_CTOR_RAN") == NULL);

  /* Linked with crti/crtbeginS, as `cc -shared` links by default. */
  EXPECT_ERROR(kiln_artifact_load(fixture("rt_startfiles"), &a), KILN_DATA_LOSS,
               "refusing to load");
  CHECK(a == NULL);

  /* The fixtures kiln links (like kiln's own artifacts) have none. */
  uint64_t size = 0;
  uint8_t* img = read_file(fixture("rt_basic"), &size);
  CHECK(img != NULL);
  if (img == NULL) return;
  CHECK_OK(kiln_elf_check_load_code(img, size));
  CHECK(dynamic_entry(img, 12) < 0 && dynamic_entry(img, 25) < 0); /* no DT_INIT(_ARRAY) */
  free(img);
}

/* rt_basic with one dynamic entry's tag replaced by `tag` (value kept):
 * kiln_elf_check_load_code must refuse it naming `what`; and, resealed as a
 * file, kiln_artifact_load must refuse it too (before dlopen). */
static void check_patched_tag(const uint8_t* good, uint64_t size, uint64_t tag, const char* what) {
  uint8_t* img = (uint8_t*)malloc((size_t)size);
  CHECK(img != NULL);
  if (img == NULL) return;
  memcpy(img, good, (size_t)size);
  /* A harmless entry to overwrite: DT_FLAGS, DT_FLAGS_1, DT_RELACOUNT, DT_GNU_HASH. */
  const uint64_t victims[] = {0x1e, 0x6ffffffb, 0x6ffffff9, 0x6ffffef5};
  long at = -1;
  for (size_t v = 0; v < sizeof victims / sizeof victims[0] && at < 0; ++v) {
    at = dynamic_entry(img, victims[v]);
  }
  CHECK(at >= 0);
  if (at < 0) {
    free(img);
    return;
  }
  wr64(img + at, tag);
  CHECK_STATUS(kiln_elf_check_load_code(img, size), KILN_DATA_LOSS, what);

  char path[1024];
  tmp_path("patched.so", path, sizeof path);
  CHECK(write_file(path, img, size) == 0);
  CHECK_OK(kiln_artifact_seal_file(path));
  KilnArtifact* a = NULL;
  KilnStatus* st = kiln_artifact_load(path, &a);
  CHECK(a == NULL);
  CHECK(st != NULL && strstr(kiln_status_message(st), path) != NULL);
  CHECK_STATUS(st, KILN_DATA_LOSS, what);
  free(img);
}

static void test_dynamic_tags_refused(void) {
  uint64_t size = 0;
  uint8_t* good = read_file(fixture("rt_basic"), &size);
  CHECK(good != NULL);
  if (good == NULL) return;
  check_patched_tag(good, size, 12, "DT_INIT");
  check_patched_tag(good, size, 13, "DT_FINI");
  check_patched_tag(good, size, 15, "DT_RPATH");
  check_patched_tag(good, size, 29, "DT_RUNPATH");
  check_patched_tag(good, size, 32, "DT_PREINIT_ARRAY");
  check_patched_tag(good, size, 0x6ffffefc, "DT_AUDIT");
  check_patched_tag(good, size, 0x7fffffff, "DT_FILTER");
  /* An array with no size tag, and a non-empty one (the value is kept, so
   * DT_INIT_ARRAYSZ gets a nonzero size). */
  check_patched_tag(good, size, 25, "DT_INIT_ARRAY");
  check_patched_tag(good, size, 27, "DT_INIT_ARRAY");
  check_patched_tag(good, size, 26, "DT_FINI_ARRAY");

  uint8_t* img = (uint8_t*)malloc((size_t)size);
  CHECK(img != NULL);
  if (img == NULL) {
    free(good);
    return;
  }
  /* A DT_NEEDED path: "libm.so.6" becomes "./evil.so" (same length). */
  memcpy(img, good, (size_t)size);
  long libm = find_bytes(img, size, "libm.so.6", 10);
  CHECK(libm >= 0);
  if (libm >= 0) {
    memcpy(img + libm, "./evil.so", 9);
    CHECK_STATUS(kiln_elf_check_load_code(img, size), KILN_DATA_LOSS, "'./evil.so'");
  }

#if defined(__x86_64__)
  /* An IFUNC resolver: the first PLT relocation (DT_JMPREL) made
   * R_X86_64_IRELATIVE. */
  memcpy(img, good, (size_t)size);
  long rela_tag = dynamic_entry(img, 23);
  CHECK(rela_tag >= 0);
  if (rela_tag >= 0) {
    uint64_t rela_vaddr = rd64(img + rela_tag + 8);
    /* rt_basic's first PT_LOAD maps offset 0 at address 0. */
    CHECK(rela_vaddr + 24 <= size);
    if (rela_vaddr + 24 <= size) {
      wr32(img + rela_vaddr + 8, 37);
      CHECK_STATUS(kiln_elf_check_load_code(img, size), KILN_DATA_LOSS, "IRELATIVE relocation");
    }
  }
  /* Another machine: e_machine = EM_AARCH64. */
  memcpy(img, good, (size_t)size);
  wr16(img + 18, 183);
  CHECK_STATUS(kiln_elf_check_load_code(img, size), KILN_UNIMPLEMENTED, "aarch64");
#endif
  free(img);
  free(good);
}

/* Random damage to the headers, program headers and dynamic section of
 * rt_basic: kiln_elf_check_load_code returns a status or NULL, never reads
 * out of bounds (run under --config=asan too). Deterministic. */
static void test_damaged_elf(void) {
  uint64_t size = 0;
  uint8_t* good = read_file(fixture("rt_basic"), &size);
  CHECK(good != NULL && size > 4096);
  if (good == NULL || size <= 4096) {
    free(good);
    return;
  }
  uint8_t* img = (uint8_t*)malloc((size_t)size);
  CHECK(img != NULL);
  uint64_t dyn_size = 0;
  long dyn = dynamic_offset(good, &dyn_size);
  CHECK(dyn > 0);
  uint64_t rng = 0x2545f4914f6cdd1dull;
  int refused = 0, accepted = 0;
  for (int it = 0; img != NULL && dyn > 0 && it < 4000; ++it) {
    memcpy(img, good, (size_t)size);
    int edits = 1 + (int)(rng % 6);
    for (int e = 0; e < edits; ++e) {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      uint64_t region = rng % 3;
      uint64_t at = region == 0   ? 16 + (rng >> 8) % 48                   /* ELF header */
                    : region == 1 ? 64 + (rng >> 8) % (56 * 8)             /* program headers */
                                  : (uint64_t)dyn + (rng >> 8) % dyn_size; /* dynamic */
      if (at < size) img[at] = (uint8_t)(rng >> 40);
    }
    KilnStatus* st = kiln_elf_check_load_code(img, size);
    if (st != NULL) {
      ++refused;
      CHECK(kiln_status_message(st)[0] != '\0');
      kiln_status_free(st);
    } else {
      ++accepted;
    }
  }
  CHECK(refused > 0 && accepted > 0);
  free(img);
  free(good);
}

/* ------------------------------------------------------------------------ */

/* rt_cpu with its placeholder feature replaced by `name`, resealed, at
 * `path`. */
static int write_cpu_variant(const char* name, const char* path) {
  uint64_t size = 0;
  uint8_t* img = read_file(fixture("rt_cpu"), &size);
  CHECK(img != NULL);
  if (img == NULL) return 0;
  const char placeholder[] = "\"ZZZZZZZZZZZZZZZZZZZZZZZZ\"";
  const size_t n = sizeof placeholder - 1;
  long at = find_bytes(img, size, placeholder, n);
  CHECK(at >= 0 && strlen(name) + 2 <= n);
  if (at < 0 || strlen(name) + 2 > n) {
    free(img);
    return 0;
  }
  char repl[64];
  memset(repl, ' ', sizeof repl);
  repl[0] = '"';
  memcpy(repl + 1, name, strlen(name));
  repl[1 + strlen(name)] = '"';
  memcpy(img + at, repl, n);
  int ok = write_file(path, img, size) == 0;
  CHECK(ok);
  free(img);
  return ok && check_ok(kiln_artifact_seal_file(path), "seal", __LINE__);
}

static void test_cpu_features(void) {
  CHECK(kiln_cpu_feature_supported("kiln-test-not-a-feature") == -1);
  CHECK(kiln_cpu_feature_supported("fast-gather") == -1); /* an LLVM tuning flag */
#if defined(__x86_64__)
  CHECK(kiln_cpu_features_checked());
  CHECK(kiln_cpu_feature_supported("sse2") == 1); /* every x86-64 CPU */
#endif
  /* As built: sse2 and two names no CPU check knows: loads. */
  KilnArtifact* a = NULL;
  if (EXPECT_OK(kiln_artifact_load(fixture("rt_cpu"), &a))) kiln_artifact_release(a);

  char path[1024];
  tmp_path("rt_cpu_variant.so", path, sizeof path);
  /* A feature this CPU has: loads. */
  if (write_cpu_variant("sse2", path)) {
    a = NULL;
    if (EXPECT_OK(kiln_artifact_load(path, &a))) kiln_artifact_release(a);
  }
  if (!kiln_cpu_features_checked()) {
    printf("loader_security_test: CPU features are not checked on this machine\n");
    return;
  }
  /* A feature this CPU lacks (every x86 CPU lacks one of the table: AMD
   * parts have no AMX, Intel parts no SSE4a). */
  const char* missing = NULL;
  for (int i = 0; kiln_cpu_feature_name(i) != NULL && missing == NULL; ++i) {
    if (kiln_cpu_feature_supported(kiln_cpu_feature_name(i)) == 0) missing = kiln_cpu_feature_name(i);
  }
  CHECK(missing != NULL);
  if (missing == NULL || !write_cpu_variant(missing, path)) return;
  char want[128];
  (void)snprintf(want, sizeof want, "artifact needs %s, which this CPU lacks", missing);
  a = NULL;
  KilnStatus* st = kiln_artifact_load(path, &a);
  CHECK(a == NULL);
  CHECK(st != NULL && strstr(kiln_status_message(st), path) != NULL);
  EXPECT_ERROR(st, KILN_FAILED_PRECONDITION, want, "x86-64");
}

/* ------------------------------------------------------------------------ */

static void test_session_outlives_artifact(void) {
  KilnArtifact* a = load_fixture("rt_basic");
  KilnSession* s1 = NULL;
  KilnSession* s2 = NULL;
  CHECK_OK(kiln_session_create(a, NULL, &s1));
  CHECK_OK(kiln_session_create(a, NULL, &s2));
  kiln_artifact_release(a); /* the sessions keep it (and its kernels) alive */
  kiln_artifact_release(a); /* a second release while sessions live: ignored */
  if (s1 != NULL) run_basic(s1);
  kiln_session_release(s1);
  if (s2 != NULL) run_basic(s2); /* still alive after the first session went */
  kiln_session_release(s2);      /* the last reference: freed here */
  kiln_session_release(NULL);
  kiln_artifact_release(NULL);
}

/* Double releases and uses after release (issue 15): the registry of live
 * handles refuses them with a status, or ignores the release, and never
 * touches the freed object. Before it, each of these read or freed freed
 * memory (ASan: heap-use-after-free / attempting double-free) and the
 * statuses below were whatever the stale memory gave. */
static void test_dead_handles(void) {
  KilnArtifact* a = load_fixture("rt_basic");
  KilnSession* s = NULL;
  KilnSession* keep = NULL;
  if (!EXPECT_OK(kiln_session_create(a, NULL, &s)) ||
      !EXPECT_OK(kiln_session_create(a, NULL, &keep))) {
    kiln_session_release(s);
    kiln_artifact_release(a);
    return;
  }
  run_basic(s);
  KilnProfile* p = NULL;
  CHECK_OK(kiln_session_profile(s, &p));
  CHECK(kiln_profile_num_nodes(p) > 0);

  /* A session: released twice, then every entry point on it. */
  kiln_session_release(s);
  kiln_session_release(s); /* ignored, with a message on stderr */
  float x[6] = {0};
  int64_t shape[2] = {2, 3};
  DLTensor t = f32_tensor(x, 2, shape);
  const DLTensor* view = NULL;
  DLManagedTensor* managed = NULL;
  KilnProfile* p2 = NULL;
  EXPECT_ERROR(kiln_session_run(s), KILN_INVALID_ARGUMENT, "kiln_session_run", "not live");
  EXPECT_ERROR(kiln_session_set_input(s, "x", &t), KILN_INVALID_ARGUMENT, "not live");
  EXPECT_ERROR(kiln_session_set_input_zero_copy(s, "x", &t), KILN_INVALID_ARGUMENT, "not live");
  EXPECT_ERROR(kiln_session_set_input_index(s, 0, &t), KILN_INVALID_ARGUMENT, "not live");
  EXPECT_ERROR(kiln_session_get_output(s, 0, &view), KILN_INVALID_ARGUMENT, "not live");
  CHECK(view == NULL);
  EXPECT_ERROR(kiln_session_copy_output(s, 0, &t), KILN_INVALID_ARGUMENT, "not live");
  EXPECT_ERROR(kiln_session_get_output_dlpack(s, 0, &managed), KILN_INVALID_ARGUMENT, "not live");
  CHECK(managed == NULL);
  EXPECT_ERROR(kiln_session_profile(s, &p2), KILN_INVALID_ARGUMENT, "not live");
  CHECK(p2 == NULL);
  EXPECT_ERROR(kiln_session_debug_dump(s, g_tmp), KILN_INVALID_ARGUMENT, "not live");
  KilnBenchmarkResult result;
  EXPECT_ERROR(kiln_session_benchmark(s, NULL, &result, NULL), KILN_INVALID_ARGUMENT,
               "not live");

  /* A profile outlives its session; released twice, then used. */
  char* text = NULL;
  CHECK_OK(kiln_profile_table(p, &text));
  free(text);
  kiln_profile_release(p);
  kiln_profile_release(p);
  CHECK(kiln_profile_num_nodes(p) == 0);
  CHECK(kiln_profile_total_us(p) == 0.0);
  text = NULL;
  EXPECT_ERROR(kiln_profile_table(p, &text), KILN_INVALID_ARGUMENT, "not live");
  EXPECT_ERROR(kiln_profile_chrome_trace(p, &text), KILN_INVALID_ARGUMENT, "not live");
  const char* name = NULL;
  const char* op = NULL;
  double us = 0;
  EXPECT_ERROR(kiln_profile_node(p, 0, &name, &op, &us), KILN_INVALID_ARGUMENT, "not live");

  /* The caller's artifact handle after its release, while `keep` holds the
   * artifact: no accessor, no new session; the session still runs. */
  kiln_artifact_release(a);
  CHECK(kiln_artifact_num_inputs(a) == 0);
  CHECK(strcmp(kiln_artifact_target(a), "") == 0);
  KilnSession* s2 = NULL;
  EXPECT_ERROR(kiln_session_create(a, NULL, &s2), KILN_INVALID_ARGUMENT, "kiln_session_create",
               "not live");
  CHECK(s2 == NULL);
  int32_t index = 0;
  EXPECT_ERROR(kiln_artifact_input_index(a, "x", &index), KILN_INVALID_ARGUMENT, "not live");
  CHECK(index == -1);
  DLTensor info;
  EXPECT_ERROR(kiln_artifact_input_info(a, 0, &name, &info), KILN_INVALID_ARGUMENT, "not live");
  run_basic(keep);
  kiln_session_release(keep); /* the last reference: the artifact is freed */
  /* After the last reference: a second release and uses touch nothing. */
  kiln_artifact_release(a);
  CHECK(kiln_artifact_num_outputs(a) == 0);
  uint64_t arena = 1, naive = 1;
  kiln_artifact_memory_stats(a, &arena, &naive);
  CHECK(arena == 0 && naive == 0);
  EXPECT_ERROR(kiln_artifact_output_index(a, "output0", &index), KILN_INVALID_ARGUMENT,
               "not live");
  EXPECT_ERROR(kiln_session_create(a, NULL, &s2), KILN_INVALID_ARGUMENT, "not live");
  /* Pointers that never were handles. */
  int junk[64] = {0};
  kiln_session_release((KilnSession*)(void*)junk);
  kiln_artifact_release((KilnArtifact*)(void*)junk);
  kiln_profile_release((KilnProfile*)(void*)junk);
  EXPECT_ERROR(kiln_session_run((KilnSession*)(void*)junk), KILN_INVALID_ARGUMENT, "not live");
}

/* kiln_artifact_load_with's keyed digest: the right key and digest load;
 * another digest, another key, or a file with one byte changed are refused
 * by the digest ("HMAC-SHA-256"), before the checksum or anything else
 * looks at the bytes; bad options are KILN_INVALID_ARGUMENT. The expected
 * digest comes from kiln_hmac_sha256 (checked against RFC 4231 in
 * hmac_sha256_test). Before: no load option verified a digest. */
static void test_keyed_digest(void) {
  static const uint8_t key[] = "a key only the builder and the loader know";
  uint64_t size = 0;
  uint8_t* img = read_file(fixture("rt_basic"), &size);
  CHECK(img != NULL && size > 64);
  if (img == NULL || size <= 64) return;
  uint8_t mac[KILN_HMAC_SHA256_SIZE];
  kiln_hmac_sha256(key, sizeof key - 1, img, (size_t)size, mac);

  KilnArtifactLoadOptions o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.hmac_key = key;
  o.hmac_key_size = sizeof key - 1;
  o.expected_hmac_sha256 = mac;
  KilnArtifact* a = NULL;
  if (EXPECT_OK(kiln_artifact_load_with(fixture("rt_basic"), &o, &a))) {
    KilnSession* s = NULL;
    if (EXPECT_OK(kiln_session_create(a, NULL, &s))) run_basic(s);
    kiln_session_release(s);
    kiln_artifact_release(a);
  }
  /* Zeroed options and NULL options are kiln_artifact_load. */
  KilnArtifactLoadOptions none;
  memset(&none, 0, sizeof none);
  none.struct_size = sizeof none;
  if (EXPECT_OK(kiln_artifact_load_with(fixture("rt_basic"), &none, &a))) kiln_artifact_release(a);
  if (EXPECT_OK(kiln_artifact_load_with(fixture("rt_basic"), NULL, &a))) kiln_artifact_release(a);

  /* Another digest (one bit), another key (one byte shorter). */
  uint8_t other[KILN_HMAC_SHA256_SIZE];
  memcpy(other, mac, sizeof other);
  other[KILN_HMAC_SHA256_SIZE - 1] ^= 1;
  o.expected_hmac_sha256 = other;
  a = (KilnArtifact*)(void*)&o; /* cleared on failure */
  EXPECT_ERROR(kiln_artifact_load_with(fixture("rt_basic"), &o, &a), KILN_DATA_LOSS,
               "refusing to load", "HMAC-SHA-256 does not match");
  CHECK(a == NULL);
  o.expected_hmac_sha256 = mac;
  o.hmac_key_size = sizeof key - 2;
  EXPECT_ERROR(kiln_artifact_load_with(fixture("rt_basic"), &o, &a), KILN_DATA_LOSS,
               "HMAC-SHA-256 does not match");
  o.hmac_key_size = sizeof key - 1;

  /* One byte changed in a copy: the digest refuses it, before the checksum
   * (whose message would be "checksum mismatch"). */
  char path[1024];
  tmp_path("keyed_changed.so", path, sizeof path);
  img[size / 2] ^= 0x40;
  CHECK(write_file(path, img, size) == 0);
  KilnStatus* st = kiln_artifact_load_with(path, &o, &a);
  CHECK(st != NULL && strstr(kiln_status_message(st), "checksum") == NULL);
  EXPECT_ERROR(st, KILN_DATA_LOSS, "HMAC-SHA-256 does not match");
  CHECK(a == NULL);
  /* The constructor fixture under a digest that is not its own: refused by
   * the digest, its constructor never ran. */
  unsetenv("KILN_RT_CTOR_RAN");
  EXPECT_ERROR(kiln_artifact_load_with(fixture("rt_ctor"), &o, &a), KILN_DATA_LOSS,
               "HMAC-SHA-256 does not match");
  CHECK(getenv("KILN_RT_CTOR_RAN") == NULL);

  /* Bad options. */
  KilnArtifactLoadOptions bad = o;
  bad.expected_hmac_sha256 = NULL;
  EXPECT_ERROR(kiln_artifact_load_with(fixture("rt_basic"), &bad, &a), KILN_INVALID_ARGUMENT,
               "expected_hmac_sha256 is NULL");
  bad = o;
  bad.hmac_key = NULL;
  EXPECT_ERROR(kiln_artifact_load_with(fixture("rt_basic"), &bad, &a), KILN_INVALID_ARGUMENT,
               "hmac_key is NULL");
  bad = o;
  bad.hmac_key_size = 0;
  EXPECT_ERROR(kiln_artifact_load_with(fixture("rt_basic"), &bad, &a), KILN_INVALID_ARGUMENT,
               "hmac_key_size is 0");
  bad = o;
  bad.struct_size = 0;
  EXPECT_ERROR(kiln_artifact_load_with(fixture("rt_basic"), &bad, &a), KILN_INVALID_ARGUMENT,
               "struct_size");
  EXPECT_ERROR(kiln_artifact_load_with(NULL, &o, &a), KILN_INVALID_ARGUMENT, "path is NULL");
  free(img);
}

/* Sessions on threads, their artifact released by the main thread while
 * they run: the last session to go frees it (the count is atomic; also run
 * under ThreadSanitizer by hand, runtime_c/README.md). */
typedef struct {
  KilnSession* session;
  pthread_barrier_t* start;
} SessionJob;

static void* session_thread(void* arg) {
  SessionJob* job = (SessionJob*)arg;
  pthread_barrier_wait(job->start);
  for (int i = 0; i < 50; ++i) run_basic(job->session);
  kiln_session_release(job->session);
  return NULL;
}

static void test_release_while_threads_run(void) {
  enum { kThreads = 4 };
  KilnArtifact* a = load_fixture("rt_basic");
  SessionJob jobs[kThreads];
  pthread_t threads[kThreads];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, kThreads + 1);
  int made = 0;
  for (int t = 0; t < kThreads; ++t) {
    KilnSessionOptions o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.num_threads = 1;
    jobs[t].session = NULL;
    jobs[t].start = &start;
    if (!EXPECT_OK(kiln_session_create(a, &o, &jobs[t].session))) break;
    ++made;
  }
  if (made != kThreads) {
    for (int t = 0; t < made; ++t) kiln_session_release(jobs[t].session);
    kiln_artifact_release(a);
    pthread_barrier_destroy(&start);
    return;
  }
  for (int t = 0; t < kThreads; ++t) pthread_create(&threads[t], NULL, session_thread, &jobs[t]);
  pthread_barrier_wait(&start);
  kiln_artifact_release(a); /* while the sessions run */
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&start);
}

/* The dynamic linker knows a library by the names it was opened with
 * (/proc/self/fd/N): the same file loaded twice, the first released, then
 * another file loaded, must give the other file (its descriptor number must
 * not name the still-loaded first library). */
static void test_reload_names(void) {
  KilnArtifact* a1 = load_fixture("rt_basic");
  KilnArtifact* a2 = load_fixture("rt_basic");
  kiln_artifact_release(a1);
  KilnArtifact* b = NULL;
  if (EXPECT_OK(kiln_artifact_load(fixture("rt_cpu"), &b))) {
    CHECK(strstr(kiln_artifact_target(b), "-mcpu=x86-64") != NULL);
    kiln_artifact_release(b);
  }
  KilnSession* s = NULL;
  if (EXPECT_OK(kiln_session_create(a2, NULL, &s))) run_basic(s);
  kiln_session_release(s);
  kiln_artifact_release(a2);
}

static void test_byte_offset(void) {
  KilnArtifact* a = load_fixture("rt_basic");
  KilnSession* s = NULL;
  if (!EXPECT_OK(kiln_session_create(a, NULL, &s))) {
    kiln_artifact_release(a);
    return;
  }
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  DLTensor t = f32_tensor(x, 2, shape);
  const uint64_t bad[] = {UINT64_MAX - 3, UINT64_C(1) << 60, UINT64_C(1) << 56,
                          (uint64_t)(UINTPTR_MAX - (uintptr_t)x) - 8};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    t.byte_offset = bad[i];
    EXPECT_ERROR(kiln_session_set_input(s, "x", &t), KILN_INVALID_ARGUMENT, "input 'x'",
                 "byte_offset", "does not fit");
    EXPECT_ERROR(kiln_session_set_input_zero_copy(s, "x", &t), KILN_INVALID_ARGUMENT,
                 "byte_offset");
    EXPECT_ERROR(kiln_session_set_input_index(s, 0, &t), KILN_INVALID_ARGUMENT, "byte_offset");
  }
  /* An output copy into a destination with an impossible offset. */
  float out[6];
  DLTensor dst = f32_tensor(out, 2, shape);
  dst.byte_offset = UINT64_MAX - 3;
  EXPECT_ERROR(kiln_session_copy_output(s, 0, &dst), KILN_INVALID_ARGUMENT, "output 'output0'",
               "byte_offset");
  /* A plausible offset is still honoured. */
  t.byte_offset = 0;
  CHECK_OK(kiln_session_set_input(s, "x", &t));
  /* ndim / shape that do not fit are refused (never read past ndim). */
  DLTensor wrong = f32_tensor(x, 1, shape);
  EXPECT_ERROR(kiln_session_set_input(s, "x", &wrong), KILN_INVALID_ARGUMENT, "expected");
  wrong = f32_tensor(x, -1, NULL);
  EXPECT_ERROR(kiln_session_set_input(s, "x", &wrong), KILN_INVALID_ARGUMENT, "ndim -1");
  wrong = f32_tensor(x, 2, NULL);
  EXPECT_ERROR(kiln_session_set_input(s, "x", &wrong), KILN_INVALID_ARGUMENT, "no shape");
  kiln_session_release(s);
  kiln_artifact_release(a);
}

int main(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
  const char* tmp = getenv("TEST_TMPDIR");
  (void)snprintf(g_tmp, sizeof g_tmp, "%s", tmp != NULL ? tmp : "/tmp");
  test_constructors_refused();
  test_dynamic_tags_refused();
  test_damaged_elf();
  test_cpu_features();
  test_session_outlives_artifact();
  test_dead_handles();
  test_keyed_digest();
  test_reload_names();
  test_release_while_threads_run();
  test_byte_offset();
  return test_main_end("loader_security_test");
}
